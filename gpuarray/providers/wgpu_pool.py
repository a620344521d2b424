"""Buffer pools (storage buffers, MAP_READ and MAP_WRITE staging buffers) and staged transfers.

A pool hands out buffers by size class and takes them back for reuse. It
counts the bytes it has handed out (``live``) and the bytes it keeps free
(``free_bytes``); both show in ``gpuarray.metrics()`` as
``device_bytes_live`` / ``device_bytes_pooled``.

Transfers of more than ``STAGED_MIN`` bytes go through two pooled staging buffers
of up to ``STAGE_BYTES`` each, alternately (``staged_upload`` / ``staged_download``):
while the device copies one piece, the host copies the next one, and host copies of
more than ``PAR_MIN`` bytes are split over ``copy_threads()`` threads (NumPy releases
the GIL while copying). The storage conversions (bool -> u32 ...) happen in the same
copy, straight into or out of the mapped memory.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..core import metrics as _metrics
from .wgpu_encode import write_buffer

MIN_BYTES = 256
_MIB = 1 << 20


def size_class(nbytes: int, max_bytes: int | None = None) -> int:
    """Round up: powers of two to 1 MiB, then whole MiB steps of 1/8 of the power of two
    (never past ``max_bytes``: a request near the adapter's largest buffer gets its exact size)."""
    n = max(nbytes, MIN_BYTES)
    if n <= _MIB:
        cls = 1 << (n - 1).bit_length()
    else:
        step = max(_MIB, (1 << (n - 1).bit_length()) // 8)
        cls = (n + step - 1) // step * step
    if max_bytes is not None and cls > max_bytes >= n:
        cls = (n + 3) // 4 * 4
    return cls


def alive(buf: Any) -> bool:
    return getattr(buf, "_internal", True) is not None


class BufferPool:
    """Reuses released buffers of the same size class and usage."""

    def __init__(self, device: Any, usage: int, keep_bytes: int, max_bytes: int | None = None) -> None:
        self.device = device
        self.usage = usage
        self.keep_bytes = keep_bytes
        self.max_bytes = max_bytes
        self.free: dict[int, list[Any]] = {}
        self.free_bytes = 0
        self.live = 0          # bytes handed out by get() and not yet put() back
        self.created = 0
        self.reused = 0
        self.released = 0      # buffers put back so far: each one's number orders evictions
        self.dead = False      # the device is lost: forget everything, hand nothing out
        self.on_destroy: Any = None     # called with each buffer before it is destroyed
        _metrics.register_gauges(self)

    def gauges(self) -> dict[str, int]:
        return {"device_bytes_live": self.live, "device_bytes_pooled": self.free_bytes}

    def get(self, nbytes: int) -> Any:
        cls = size_class(nbytes, self.max_bytes)
        buf = self.take(cls)
        if buf is not None:
            return buf
        buf = self.device.create_buffer(size=cls, usage=self.usage)
        self.created += 1
        _metrics.add("device_buffers_created")
        self.live += cls
        return buf

    def take(self, cls: int) -> Any:
        """A pooled buffer of size class ``cls``, or None."""
        lst = self.free.get(cls)
        while lst:
            buf = lst[-1]
            del lst[-1]                 # lst.pop() without the call: a replayed allocation
            self.free_bytes -= cls
            if getattr(buf, "_internal", True) is not None:       # alive()
                self.reused += 1
                self.live += cls
                return buf
        return None

    def put(self, buf: Any) -> None:
        """Keep ``buf`` for reuse; evict the buffers released longest ago to stay under the cap. (Largest
        first, as before, evicted the buffer just released where a stale larger one was kept: on the
        H200 an array stored in two parts (4 GiB and 1.9 GB) evicted its 4 GiB part at every release
        while a 3 GB buffer of an earlier array stayed, and each call made a new 4 GiB buffer, about
        200 ms.)"""
        if self.dead:
            return
        cls = buf.size
        self.live -= cls
        if getattr(buf, "_internal", True) is None:       # not alive(buf)
            # a garbage-collected reference cycle can finalize the GPUBuffer before the
            # array that owns it: never pool a released buffer
            return
        if cls > self.keep_bytes:
            self._destroy(buf)
            return
        self.released += 1
        buf._ga_released = self.released        # an attribute, no call: put runs at every free
        while self.free_bytes + cls > self.keep_bytes:
            # each size class's list is in release order (taken from its end): the oldest heads one
            victim = min((c for c, lst in self.free.items() if lst),
                         key=lambda c: getattr(self.free[c][0], "_ga_released", 0), default=None)
            if victim is None:
                break
            self._destroy(self.free[victim].pop(0))
            self.free_bytes -= victim
        lst = self.free.get(cls)
        if lst is None:
            self.free[cls] = [buf]
        else:
            lst += (buf,)
        self.free_bytes += cls

    def clear(self) -> int:
        """Destroy every pooled buffer; returns the bytes released."""
        released = self.free_bytes
        for lst in self.free.values():
            for b in lst:
                self._destroy(b)
        self.free.clear()
        self.free_bytes = 0
        return released

    def _destroy(self, buf: Any) -> None:
        if self.on_destroy is not None:
            self.on_destroy(buf)
        buf.destroy()

    def abandon(self) -> None:
        """The device is gone: drop every reference and count nothing as held any more."""
        self.dead = True
        self.free.clear()
        self.free_bytes = 0
        self.live = 0


STAGE_BYTES = 64 << 20     # staging buffers hold at most this much of a transfer
STAGED_MIN = 4 << 20       # smaller uploads use queue.write_buffer (asynchronous, no map)
PAR_MIN = 8 << 20          # host copies at least this large are split over threads
_executor: ThreadPoolExecutor | None = None


class ParamArena:
    """The ``prm`` arrays of a pass's dispatches, gathered in one storage buffer.

    Each dispatch's parameters are copied into a host array at the next aligned offset and bound
    as that sub-range (a dynamic offset, so the bind group stays the same); ``upload`` writes
    what the pass gathered since the last upload with one ``queue.write_buffer`` just before the
    pass is submitted (WebGPU runs a ``write_buffer`` before the submits after it), and not at all
    where the buffer holds those bytes already (``shadow``: a repeated evaluation with the same
    constants; H200, the first ``write_buffer`` after waiting for a long submission took 2.1 ms).
    After a submit the buffer is reused from offset 0 (``reset``), after a ``submit_early`` from
    where it stopped; a pass that fills it continues in a fresh one, the full one written and kept
    alive until the submit (``keep``).

    A replayed program's block never changes (``wgpu_replay.Program``), so ``static`` gives it a place
    of its own, written once and never reset: a replay then uploads nothing (with the arena, evaluations
    that alternate, such as a LogisticRegression iteration's three reads, wrote their parameters again
    at every submit: H200, 30-50 us each). The places are in a zone of ``ZONE_BYTES`` after the arena in
    its buffer, so that a replay binds the buffer its recording bound and finds the recording's bind
    groups. Once that zone is full, the next parameters start a new buffer (arena and zone; the programs
    placed in the old one keep it alive), so that recordings after it find room for their replays next
    to them again; a program recorded before and first replayed after goes to a buffer of
    ``STATIC_BYTES`` of static blocks and makes its bind groups once more. (Without the new buffer, in a
    long process every later program was placed away from its recording: its first replays created
    bind groups for each buffer assignment the pool rotates through, warm calls included.)
    """

    ZONE_BYTES = 256 << 10
    STATIC_BYTES = 1 << 20

    def __init__(self, device: Any, usage: Any, align: int, nbytes: int = 256 << 10) -> None:
        self.device, self.usage, self.align, self.nbytes = device, usage, max(4, int(align)), nbytes
        self.buffer: Any = None
        self.offset = 0
        self.base = 0               # the first byte not uploaded yet
        self.host = np.zeros(nbytes // 4, dtype=np.uint32)
        self.shadow = np.zeros(nbytes // 4, dtype=np.uint32)      # what the buffer holds ...
        self.valid = 0                                             # ... in its first bytes
        self._cap = 0               # the arena's bytes in ``buffer`` (its ``nbytes`` when it was made)
        self._zoff = 0              # the first free byte of the static zone in ``buffer``
        self._sbuf: Any = None      # once the zone is full: the static blocks' current buffer, its first free byte
        self._soff = 0
        self._full = False          # the zone is full: the next pass takes a new buffer

    def put(self, prm: np.ndarray, keep: list[Any]) -> tuple[Any, int, int]:
        """``prm`` (u32 words) gathered for the open pass: (buffer, offset, size) to bind."""
        size = prm.nbytes or 4          # a multiple of 4 (words of 4 or 8 bytes), at least 4
        if self.buffer is None or self.offset + size > self._cap or self._full:
            if self.buffer is not None:
                self.upload()
                keep.append(self.buffer)
            self.nbytes = max(self.nbytes, -(-size // self.align) * self.align)
            if self.host.nbytes < self.nbytes:
                self.host = np.zeros(self.nbytes // 4, dtype=np.uint32)
                self.shadow = np.zeros(self.nbytes // 4, dtype=np.uint32)
            self.buffer = self.device.create_buffer(size=self.nbytes + self.ZONE_BYTES, usage=self.usage)
            self.offset = self.base = self.valid = 0
            self._cap = self._zoff = self.nbytes        # this buffer's arena ends where its zone starts
            self._full = False
        off = self.offset
        words = prm if prm.dtype == np.uint32 else np.ascontiguousarray(prm).view(np.uint32)
        end = off + -(-size // self.align) * self.align
        self.host[off >> 2:(off >> 2) + words.size] = words if words.ndim == 1 else words.ravel()
        self.host[(off >> 2) + words.size:end >> 2] = 0     # the padding as a program's block has it
        self.offset = end
        return self.buffer, off, size

    def upload(self) -> None:
        """Write the parameters gathered since the last upload (before the pass is submitted); not
        when the buffer holds these bytes already."""
        lo, hi = self.base, self.offset
        if self.buffer is None or hi <= lo:
            return
        self.base = hi
        new = self.host[lo >> 2:hi >> 2]
        if hi <= self.valid and np.array_equal(self.shadow[lo >> 2:hi >> 2], new):
            return
        write_buffer(self.device.queue, self.buffer, lo, self.host, lo, hi - lo)
        self.shadow[lo >> 2:hi >> 2] = new
        if lo <= self.valid:
            self.valid = max(self.valid, hi)

    def static(self, words: np.ndarray) -> tuple[Any, int] | None:
        """(buffer, offset) of a place written with ``words`` (a block laid out in multiples of the
        alignment) that stays as it is: in the arena buffer's zone, else in a buffer of static blocks
        (a full one is followed by a new one; the programs placed in it keep it alive); None for a
        block larger than ``STATIC_BYTES``."""
        size = -(-max(words.nbytes, 4) // self.align) * self.align
        if self.buffer is not None and self._zoff + size <= self._cap + self.ZONE_BYTES:
            off = self._zoff
            self._zoff = off + size
            write_buffer(self.device.queue, self.buffer, off, words)
            return self.buffer, off
        self._full = self.buffer is not None
        if size > self.STATIC_BYTES:
            return None
        if self._sbuf is None or self._soff + size > self.STATIC_BYTES:
            self._sbuf = self.device.create_buffer(size=self.STATIC_BYTES, usage=self.usage)
            self._soff = 0
        off = self._soff
        self._soff = off + size
        write_buffer(self.device.queue, self._sbuf, off, words)
        return self._sbuf, off

    def reset(self, early: bool = False) -> None:
        """After a submit: later dispatches may start again from offset 0 (``early``: after a
        ``submit_early``, from where the submitted ones stopped)."""
        if not early:
            self.offset = self.base = 0


def copy_threads() -> int:
    """Threads for large host copies: ``GPUARRAY_COPY_THREADS``, else up to 8 (one per core)."""
    try:
        return max(1, int(os.environ["GPUARRAY_COPY_THREADS"]))
    except (KeyError, ValueError):
        return max(1, min(8, os.cpu_count() or 1))


def par_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src`` for 1-d arrays of one length, converting the dtype (a C cast, as
    ``astype``); large copies are split over ``copy_threads()`` threads."""
    global _executor
    n = dst.size
    if max(dst.nbytes, src.nbytes) < PAR_MIN:      # (before copy_threads(): it reads the environment)
        np.copyto(dst, src, casting="unsafe")
        return
    parts = min(copy_threads(), max(dst.nbytes, src.nbytes) // (PAR_MIN // 4))
    if parts <= 1:
        np.copyto(dst, src, casting="unsafe")
        return
    if _executor is None or _executor._max_workers != copy_threads():
        _executor = ThreadPoolExecutor(max_workers=copy_threads(), thread_name_prefix="gpuarray-copy")
    step = -(-n // parts)
    futures = [_executor.submit(np.copyto, dst[i:i + step], src[i:i + step], casting="unsafe")
               for i in range(step, n, step)]
    try:
        np.copyto(dst[:step], src[:step], casting="unsafe")
    finally:
        for f in futures:
            f.result()


def _mapped_array(buf: Any, nbytes: int, dtype: np.dtype, write: bool) -> np.ndarray:
    """A NumPy view of the first ``nbytes`` of a mapped buffer (drop it before unmapping)."""
    if write:
        view = buf._experimental_get_mapped_range(0, (nbytes + 3) // 4 * 4)
    else:
        view = buf.read_mapped(0, (nbytes + 3) // 4 * 4, copy=False)
    return np.frombuffer(view, dtype=np.uint8, count=nbytes).view(dtype)


def staged_upload(provider: Any, pieces: list[tuple[Any, int, np.ndarray]], sdt: np.dtype) -> None:
    """Copy each ``(buffer, byte offset, host elements)`` piece to the device through two MAP_WRITE
    staging buffers, alternately: the host fills one while the device copies from the other.
    Each piece holds at most ``STAGE_BYTES`` bytes in the storage dtype ``sdt``."""
    wgpu = provider.wgpu
    size = max(src.size for _b, _o, src in pieces) * sdt.itemsize
    bufs: list[Any] = []
    waits: list[Any] = []
    try:
        for i, (dst, off, src) in enumerate(pieces):
            k = i % 2
            if k == len(bufs):
                bufs.append(provider._get(provider.staging_w, size, "staging buffer"))
                waits.append(bufs[k].map_async(wgpu.MapMode.WRITE, 0, bufs[k].size))
            buf = bufs[k]
            waits[k].sync_wait()
            waits[k] = None
            m = src.size * sdt.itemsize
            if hasattr(buf, "_experimental_get_mapped_range"):    # a writable view: copy (and convert) once
                arr = _mapped_array(buf, m, sdt, write=True)
                par_copy(arr, src)
                del arr
            else:
                buf.write_mapped(np.ascontiguousarray(src, dtype=sdt), 0)
            buf.unmap()
            enc = provider.device.create_command_encoder()
            enc.copy_buffer_to_buffer(buf, 0, dst, off, (m + 3) // 4 * 4)
            provider.device.queue.submit([enc.finish()])
            if i + 2 < len(pieces):     # mapped again once this copy is done
                waits[k] = buf.map_async(wgpu.MapMode.WRITE, 0, buf.size)
    finally:
        _return_staging(provider.staging_w, bufs, waits)


_READ_MODE: Any = "READ_NOSYNC"


def map_read(buf: Any, wgpu: Any) -> Any:
    """``buf.map_async`` for reading the copy just submitted into it. wgpu-py submits an empty
    command buffer before every read mapping (a guard for a queued ``write_buffer`` that no submit
    has flushed yet: wgpu-native issue 305) unless asked with its internal mode ``"READ_NOSYNC"``:
    here the copy into ``buf`` was submitted just before, so that second submit (tens of
    microseconds of host time on a discrete GPU) is skipped. A wgpu-py without that mode gets the
    plain one."""
    global _READ_MODE
    try:
        return buf.map_async(_READ_MODE, 0, buf.size)
    except (ValueError, KeyError, TypeError, AttributeError):
        if _READ_MODE == wgpu.MapMode.READ:
            raise
        _READ_MODE = wgpu.MapMode.READ
        return buf.map_async(_READ_MODE, 0, buf.size)


def staged_download(provider: Any, pieces: list[tuple[Any, int, np.ndarray]], sdt: np.dtype) -> None:
    """Fill each ``(buffer, byte offset, host elements)`` piece from the device through two
    MAP_READ staging buffers: the device copies piece i + 1 while the host copies piece i."""
    wgpu = provider.wgpu
    size = max(dst.size for _b, _o, dst in pieces) * sdt.itemsize
    bufs: list[Any] = []
    waits: list[Any] = []

    def start(i: int) -> None:
        k = i % 2
        if k == len(bufs):
            bufs.append(provider._get(provider.staging, size, "staging buffer"))
            waits.append(None)
        src, off, dst = pieces[i]
        nbytes = (dst.size * sdt.itemsize + 3) // 4 * 4
        # the first copy goes into the provider's open pass's submit (one submit, not two)
        provider.flush(lambda enc: enc.copy_buffer_to_buffer(src, off, bufs[k], 0, nbytes))
        waits[k] = map_read(bufs[k], wgpu)

    try:
        start(0)
        for i, (_src, _off, dst) in enumerate(pieces):
            k = i % 2
            waits[k].sync_wait()
            waits[k] = None
            if i + 1 < len(pieces):
                start(i + 1)            # the device copies the next piece meanwhile
            arr = _mapped_array(bufs[k], dst.size * sdt.itemsize, sdt, write=False)
            par_copy(dst, arr)
            del arr
            bufs[k].unmap()
    finally:
        _return_staging(provider.staging, bufs, waits)


def _return_staging(pool: BufferPool, bufs: list[Any], waits: list[Any]) -> None:
    """Put staging buffers back in their pool, unmapped (after an error: waited for)."""
    for buf, wait in zip(bufs, waits, strict=True):
        try:
            if wait is not None:
                wait.sync_wait()
            if getattr(buf, "map_state", "unmapped") != "unmapped":
                buf.unmap()
        except Exception:  # noqa: BLE001 - a failed map: the buffer is dropped, not pooled
            pool.live -= buf.size
            continue
        pool.put(buf)
