"""Device memory of the wgpu provider: buffers for kernels to write, uploads, downloads and frees.

``WgpuMemory`` is a part of ``WgpuProvider`` (webgpu.py), kept in a file of its own: the buffers come
from its size-class ``BufferPool`` (``wgpu_pool.py``); arrays larger than the adapter's largest buffer
are ``SegmentedHandle``s of several; large transfers go through pooled staging buffers. A buffer freed
while a compute pass is being recorded goes back to the pool only once that pass is submitted (or is
handed to a later dispatch of the same pass, which runs after its last readers). While a kernel is
recorded for replay (``wgpu_replay.Recorder``), allocations and frees are reported to the recorder,
and a transfer makes the recording unusable.

>>> import numpy as np, gpuarray as xp
>>> from gpuarray import _devices
>>> p = _devices.provider_for(xp.Device("wgpu:0"))
>>> h = p.upload(np.arange(4, dtype=np.float32))
>>> p.download(h, np.dtype(np.float32), (4,)).tolist()
[0.0, 1.0, 2.0, 3.0]
>>> p.free(h)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.dtypes import STORAGE_NP
from . import wgpu_pool
from .wgpu_encode import RAW, SmallReader, write_buffer
from .wgpu_pool import staged_download, staged_upload
from .wgpu_split import GpuHandle, SegmentedHandle, _elem_ranges, segment_of

# downloads of at most this many bytes take the provider's read_small (one kept buffer, C entry points,
# spinning before it blocks); H200, eigh float64 2048 (7 reads of ~32 KB in its divide and conquer):
# 65536 against 4096, 17.3-20.3 against 19.6-21.5 ms for the divide and conquer, alternating rounds
SMALL_READ = 65536


class WgpuMemory:
    """Allocation, transfers and frees of ``WgpuProvider`` (which holds the state they use)."""

    lock: Any
    pool: Any
    staging: Any
    staging_w: Any
    max_buffer: int
    offset_align: int
    timer: Any
    lost: str | None
    device: Any
    _recorder: Any
    _deferred: list[Any]
    _pending: Any
    _pass: Any
    _get: Callable[..., Any]            # the provider's: allocation with one retry (webgpu.py)
    _guard: Callable[[], Any]
    chunk_elems: Callable[[], int]
    flush: Callable[..., None]
    wgpu: Any
    adapter: Any
    _small: Any
    _ahead: Any = None           # start_read's SmallReader (a read started at an upload)
    _ahead_read: Any = None      # its pending read's token
    _submit: Callable[..., None]

    def alloc(self, nbytes: int, reuse: bool = True) -> GpuHandle:
        """A buffer of at least ``nbytes`` for a kernel to write. With ``reuse`` it may be one freed
        while the open pass was recorded (its last readers are earlier dispatches of the pass, which
        run first); an upload, written by the queue before the pass runs, takes ``reuse=False``."""
        with self.lock:
            self._drain()
            if reuse and self._deferred:
                cls = wgpu_pool.size_class(nbytes, self.pool.max_bytes)
                for i in range(len(self._deferred) - 1, -1, -1):
                    buf = self._deferred[i]
                    if buf.size == cls and wgpu_pool.alive(buf):
                        del self._deferred[i]
                        h = GpuHandle(buf, nbytes)
                        break
                else:
                    h = GpuHandle(self._get(self.pool, nbytes), nbytes)
            else:
                h = GpuHandle(self._get(self.pool, nbytes), nbytes)
            if self._recorder is not None:
                self._recorder.alloc(h, nbytes, reuse, wgpu_pool.size_class(nbytes, self.pool.max_bytes))
            return h

    def alloc_class(self, cls: int, nbytes: int, reuse: bool) -> GpuHandle:
        """``alloc`` for a replayed program (``wgpu_replay``): the size class ``cls`` of ``nbytes``
        known, the lock held, nothing recorded. The open pass's freed buffers first, then the pool."""
        if self._pending:
            self._drain()
        if reuse:
            d = self._deferred
            for i in range(len(d) - 1, -1, -1):
                buf = d[i]
                if buf.size == cls and getattr(buf, "_internal", None) is not None:      # alive()
                    del d[i]
                    return GpuHandle(buf, nbytes)
        buf = self.pool.take(cls)
        return GpuHandle(self._get(self.pool, nbytes) if buf is None else buf, nbytes)

    def segment_elems(self, itemsize: int, row: int = 1) -> int:
        """Elements per part of an array of ``itemsize``-byte elements and rows of ``row`` elements
        stored in several buffers: a multiple of the alignment unit (1024 elements, at least the offset
        alignment, so that every part starts aligned for every element size) and of the row where one
        such unit of rows fits a buffer, so that no row straddles two parts (blocks of rows then bind
        one window of one part: ``wgpu_split.window_kernel``).

        >>> math.lcm(1024, 100)        # rows of 100: parts of a multiple of 25600 elements
        25600
        """
        unit = max(1024, self.offset_align)
        whole = math.lcm(unit, max(1, row))
        if whole * itemsize <= self.max_buffer:
            unit = whole
        return max(1, self.max_buffer // (itemsize * unit)) * unit

    def segment_of(self, node: Any) -> int | None:
        """Elements per part of ``node``'s array where it is stored in several buffers, else None
        (``wgpu_split.segment_of``: ``Device.segment_elems`` asks this)."""
        return segment_of(self, node)

    def alloc_array(self, n: int, itemsize: int, reuse: bool = True, row: int = 1) -> GpuHandle | SegmentedHandle:
        """Room for ``n`` elements: one buffer, or parts of ``segment_elems(itemsize, row)`` elements
        when the array is larger than the adapter's largest buffer (``reuse``: as for ``alloc``;
        ``row``: elements per row along the first axis)."""
        nbytes = n * itemsize
        if nbytes <= self.max_buffer:
            return self.alloc(nbytes, reuse)
        seg = self.segment_elems(itemsize, row)
        parts: list[GpuHandle] = []
        try:
            for start in range(0, n, seg):
                parts.append(self.alloc(min(seg, n - start) * itemsize, reuse))
        except BaseException:
            for p in parts:
                self.free(p)
            raise
        return SegmentedHandle(parts, seg, itemsize, nbytes)

    def upload(self, host: np.ndarray) -> GpuHandle | SegmentedHandle:
        """A device copy of ``host``: small arrays through ``queue.write_buffer``, larger ones
        through pooled MAP_WRITE staging buffers (``wgpu_pool.staged_upload``)."""
        sdt = STORAGE_NP[host.dtype]
        flat = host.reshape(-1)
        with self.lock, self._guard():
            if self._recorder is not None:
                self._recorder.ok = False
            h = self.alloc_array(flat.size, sdt.itemsize, reuse=False, row=math.prod(host.shape[1:]))
            try:
                step = wgpu_pool.STAGE_BYTES // sdt.itemsize
                pieces = [(part.buffer, (start - base) * sdt.itemsize, flat[start:min(start + step, base + n)])
                          for part, base, n in _elem_ranges(h, sdt.itemsize)
                          for start in range(base, base + n, step)]
                if sdt.itemsize * flat.size < wgpu_pool.STAGED_MIN:
                    for buf, off, piece in pieces:
                        # wgpu stages each write in a buffer of its size, and the storage
                        # conversion (bool -> u32 ...) needs a host copy of each piece
                        write_buffer(self.device.queue, buf, off, np.ascontiguousarray(piece, dtype=sdt))
                elif pieces:
                    staged_upload(self, pieces, sdt)
            except BaseException:
                self.free(h)
                raise
        return h

    def download(self, handle: GpuHandle | SegmentedHandle, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """The array's contents, copied through two alternating MAP_READ staging buffers of at
        most ``wgpu_pool.STAGE_BYTES`` (``staged_download``), converted from the storage dtype."""
        sdt = STORAGE_NP[dtype]
        n = handle.nbytes
        if n == 0:
            return np.empty(shape, dtype=dtype)
        if n <= SMALL_READ and RAW and type(handle) is GpuHandle:
            return self._small_values(handle.buffer, 0, n, dtype).reshape(shape)
        out = np.empty(n // sdt.itemsize, dtype=dtype)
        step = wgpu_pool.STAGE_BYTES // sdt.itemsize
        pieces = [(part.buffer, (start - base) * sdt.itemsize, out[start:min(start + step, base + count)])
                  for part, base, count in _elem_ranges(handle, sdt.itemsize)
                  for start in range(base, base + count, step)]
        with self.lock, self._guard():
            if self._recorder is not None:
                self._recorder.ok = False
            staged_download(self, pieces, sdt)     # submits the open pass with the first copy
            if self.timer is not None and self.timer.backlog():
                self.timer.harvest()        # the queue has finished what was submitted before
        return out.reshape(shape)

    def download_many(self, items: list[tuple[Any, np.dtype, tuple[int, ...]]]) -> list[np.ndarray] | None:
        """Several small arrays ``(handle, dtype, shape)`` by one copy each into the small read buffer and
        one mapping (one wait where ``download`` waits once an array: a host fallback's inputs); None
        where they do not fit ``SMALL_READ`` together or one is not a small one-buffer array."""
        pieces = _small_pieces(items)
        if pieces is None:
            return None
        data, starts = self._locked_read(pieces)
        return _arrays(data, items, starts)

    def start_read(self, items: list[tuple[Any, np.dtype, tuple[int, ...]]]) -> Any:
        """``download_many`` in two halves: submit the open pass with one copy of each small array ``(handle,
        dtype, shape)`` into a kept MAP_READ buffer of its own and ask for its mapping now; ``finish_read`` of
        the returned token waits for it and gives the arrays (a read started at an upload: the device
        computes and copies while the program records, and the read costs no submit). None where they do not
        fit ``SMALL_READ`` together or one is not a small one-buffer array (nothing submitted then)."""
        pieces = _small_pieces(items)
        if pieces is None:
            return None
        with self.lock, self._guard():
            if self._recorder is not None:
                self._recorder.ok = False
            if self._ahead_read is not None:            # the one before was not read: let it go
                self._finish_pieces(self._ahead_read)
            if self._ahead is None:
                self._ahead = self._new_reader()
            starts, total = self._copy_submit(self._ahead, pieces)
            self._ahead.begin(total)
            token = self._ahead_read = (items, starts, total)
        return token

    def finish_read(self, token: Any) -> list[np.ndarray] | None:
        """The arrays of ``start_read``'s ``token`` (waiting for their mapping); None where a later
        ``start_read`` let this one go (the caller then reads them as any data)."""
        with self.lock, self._guard():
            if token is not self._ahead_read:
                return None
            data = self._finish_pieces(token)
        return _arrays(data, token[0], token[1])

    def _finish_pieces(self, token: Any) -> bytes:
        """The mapped bytes of the pending ``token`` (lock held); the reader is free again."""
        self._ahead_read = None
        assert self._ahead is not None
        return self._ahead.finish(token[2])

    def _new_reader(self) -> SmallReader:
        """A kept MAP_READ buffer of ``SMALL_READ`` bytes (polled without blocking first, except on lavapipe)."""
        bu, cpu = self.wgpu.BufferUsage, str(self.adapter.info.get("adapter_type")) == "CPU"
        return SmallReader(self.device, bu.MAP_READ | bu.COPY_DST, SMALL_READ, spin=not cpu)

    def _reader(self) -> SmallReader:
        if self._small is None:
            self._small = self._new_reader()
        return self._small

    def _copy_submit(self, reader: SmallReader, pieces: list[tuple[Any, int, int]]) -> tuple[list[int], int]:
        """Copy ``(buffer, offset, nbytes)`` pieces (each padded to 4 bytes) into ``reader``'s buffer with the open
        pass's submit (lock and guard held): each piece's start there, and the bytes in all."""
        sizes = [(n + 3) // 4 * 4 for _b, _o, n in pieces]
        starts = [sum(sizes[:i]) for i in range(len(pieces))]

        def copies(enc: Any) -> None:
            for (buf, off, _n), at, n4 in zip(pieces, starts, sizes, strict=True):
                enc.copy_buffer_to_buffer(buf, off, reader.buffer, at, n4)

        if self._pass is not None and self.lost is None:        # flush, the lock and guard held
            self._submit(copies)
        else:
            self.flush(copies)
        return starts, sum(sizes)

    def _read_pieces(self, pieces: list[tuple[Any, int, int]]) -> tuple[bytes, list[int]]:
        """``(buffer, offset, nbytes)`` pieces (at most ``SMALL_READ`` together) copied into the kept MAP_READ buffer
        with the open pass's submit, then mapped through the C entry points (``wgpu_encode.SmallReader``): the
        bytes and each piece's start in them. Lock and guard held."""
        small = self._reader()
        starts, total = self._copy_submit(small, pieces)
        return small.read(total), starts

    def _locked_read(self, pieces: list[tuple[Any, int, int]]) -> tuple[bytes, list[int]]:
        """``_read_pieces`` with the lock and guard taken here (a read ends any recording; timings harvested)."""
        with self.lock, self._guard():
            if self._recorder is not None:
                self._recorder.ok = False
            out = self._read_pieces(pieces)
            if self.timer is not None and self.timer.backlog():
                self.timer.harvest()
        return out

    def read_small(self, buffer: Any, offset: int, nbytes: int) -> bytes:
        """``nbytes`` (at most ``SMALL_READ``) of ``buffer`` from ``offset`` (``_read_pieces``). The caller holds
        the lock and the guard."""
        data = self._read_pieces([(buffer, offset, nbytes)])[0]
        return data if len(data) == nbytes else data[:nbytes]

    def alias(self, handle: GpuHandle | SegmentedHandle, nbytes: int) -> GpuHandle | None:
        """A handle on the first ``nbytes`` of ``handle``'s buffer (``residency.prefix``: the caller
        keeps the buffer alive and frees it once), or None for an array in several buffers."""
        return GpuHandle(handle.buffer, nbytes) if type(handle) is GpuHandle else None

    def read_element(self, handle: GpuHandle | SegmentedHandle, index: int, dtype: np.dtype) -> Any:
        """Element ``index`` of the array in ``handle`` as a NumPy scalar of ``dtype``, by one small
        read (``read_small``) that submits the open pass with its copy; None where that read is not
        available (arrays in several buffers, no C entry points)."""
        if not RAW or type(handle) is not GpuHandle:
            return None
        size = STORAGE_NP[dtype].itemsize
        return self._small_values(handle.buffer, index * size, size, dtype)[0]

    def _small_values(self, buffer: Any, offset: int, nbytes: int, dtype: np.dtype) -> np.ndarray:
        """``nbytes`` of ``buffer`` from ``offset`` (``read_small``, the lock and guard taken here) as
        values of ``dtype``, converted from its storage dtype."""
        data = self._locked_read([(buffer, offset, nbytes)])[0]
        return np.frombuffer(data[:nbytes], dtype=STORAGE_NP[dtype]).astype(dtype)

    def free(self, handle: GpuHandle | SegmentedHandle) -> None:
        """Return a buffer to the pool; while a pass is open, only after it is submitted
        (the pool may destroy buffers, and the open pass may still use this one).

        This runs from ``Data.__del__``, i.e. wherever the garbage collector happens to run:
        it never waits for the lock. When another thread holds it, the buffer is queued and
        the next locked call returns it to the pool."""
        if not self.lock.acquire(blocking=False):
            self._pending.append(handle)        # deque.append is atomic
            return
        try:
            if self._recorder is not None:
                self._recorder.free(handle)
            self._free(handle)
        finally:
            self.lock.release()

    def _free(self, handle: GpuHandle | SegmentedHandle) -> None:
        if self.lost is not None:
            return
        if type(handle) is GpuHandle:       # one buffer: without the list and its loop
            if self._pass is not None:
                self._deferred += (handle.buffer,)
            else:
                self.pool.put(handle.buffer)
            return
        parts = handle.parts if isinstance(handle, SegmentedHandle) else [handle]
        for h in parts:
            if self._pass is not None:
                self._deferred.append(h.buffer)
            else:
                self.pool.put(h.buffer)

    def _drain(self) -> None:
        """Return the buffers that ``free`` queued while the lock was taken (lock held)."""
        while self._pending:
            self._free(self._pending.popleft())

    def release_pooled(self) -> int:
        """Destroy every pooled (free) buffer now; returns the bytes released."""
        with self.lock:
            if self.lost is not None:
                return 0
            self.flush()
            self._drain()
            return self.pool.clear() + self.staging.clear() + self.staging_w.clear()


def _small_pieces(items: list[tuple[Any, np.dtype, tuple[int, ...]]]) -> list[tuple[Any, int, int]] | None:
    """The ``(buffer, 0, nbytes)`` pieces of small one-buffer arrays ``(handle, dtype, shape)`` that fit
    ``SMALL_READ`` together, or None (``download_many``, ``start_read``)."""
    if not RAW or not items or sum((h.nbytes + 3) // 4 * 4 for h, _dt, _sh in items) > SMALL_READ or \
            any(type(h) is not GpuHandle or h.nbytes == 0 for h, _dt, _sh in items):
        return None
    return [(h.buffer, 0, h.nbytes) for h, _dt, _sh in items]


def _arrays(data: bytes, items: list[tuple[Any, np.dtype, tuple[int, ...]]], starts: list[int]) -> list[np.ndarray]:
    """The arrays ``(handle, dtype, shape)`` read into ``data`` at ``starts``, of their dtypes and shapes."""
    return [np.frombuffer(data, STORAGE_NP[dt], h.nbytes // STORAGE_NP[dt].itemsize, at).astype(dt).reshape(sh)
            for (h, dt, sh), at in zip(items, starts, strict=True)]
