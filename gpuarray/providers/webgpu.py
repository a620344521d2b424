"""The wgpu provider: runs kernel plans as WGSL compute shaders.

- adapter choice and explicit features / limits (64-bit types only where the adapter has ``shader-f64`` /
  ``shader-int64``); one command encoder, one compute pass and one submit per evaluation; 2-D dispatch
  past 65535 groups;
- pipelines cached by kernel signature (and WGSL hash; the WGSL also on disk, and recently used pipelines
  compiled at start: ``wgpu_cache``), a size-class buffer pool, and two alternating pooled staging
  buffers per large transfer (``wgpu_pool``); GPU time per dispatch from timestamp queries when timing
  is on (``wgpu_timing``);
- float64 transcendentals run as software on the device (``render/wgsl_f64*.py``; ``F64_HOST_OPS``,
  the ones that would run on the host, is empty), complex128 ones on the host (``C128_HOST_OPS``);
- elementwise kernels over arrays larger than one storage binding (or with 2**32 elements or more) run
  in chunks, each binding a sub-range of every buffer; arrays larger than the largest buffer are split
  into segments (``SegmentedHandle``);
- faults: an allocation that fails releases the pooled buffers and is retried once, then raises
  ``OutOfMemoryError``; a lost device raises ``DeviceLostError`` and the provider is replaced on the
  next use of its device (``_devices.provider_for``).
"""

from __future__ import annotations

import collections
import gc
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..core import metrics as _metrics
from ..core.dtypes import STORAGE_NP, complex128, float64, int64, uint64
from ..core.errors import DeviceLostError, OutOfMemoryError, _fmt_bytes
from ..render import const_tags
from ..render.wgsl import Rendered, render
from . import wgpu_cache, wgpu_pool, wgpu_timing
from .wgpu_adapter import (  # noqa: F401
    Guard,
    adapters,
    is_device_lost,
    is_real_gpu,
    lost_reasons,
    storage_buffer_limit,
    watch_lost,
)
from .wgpu_bindings import BindGroupCache, KeptBuffers, bind_layout
from .wgpu_elementwise import dispatch_elementwise
from .wgpu_encode import RAW, PassRecorder, RawPass
from .wgpu_kinds import (  # noqa: F401 - the op lists: imported from here by tests and docs
    C128_HOST_OPS,
    F64_HOST_OPS,
    TRANSCENDENTAL_OPS,
    WGPU_KINDS,
    bindings,
    cannot_run_reason,
)
from .wgpu_memory import WgpuMemory
from .wgpu_pool import BufferPool
from .wgpu_probe import builtin_checks, numerics, overrides
from .wgpu_replay import Program, Recorder
from .wgpu_split import (  # noqa: F401 - SegmentedHandle, split_kernel: used by tests through this module
    GpuHandle,
    SegmentedHandle,
    _elem_ranges,
    _nbytes,
    enqueue_split,
    split_kernel,
    windowed,
)

# end_evaluation submits the open pass at the end of an evaluation once it holds this many dispatches
# or binds this many bytes; below both, small evaluations share a submit (on the H200's host a submit
# with its command encoder costs 40-60 us; 1 GB is about 0.3 ms of the GPU's memory time; 64 -> 256 MB:
# a 2^22 chain 0.069 -> 0.047 ms a call; 256 -> 1024: X.T @ r 0.122 -> 0.109, chain8 2^26 0.251 -> 0.244;
# 16 -> 64 dispatches (GPUARRAY_SUBMIT_DISPATCHES): host time of a cached 2^16 FFT 45-52 -> 42-43 us, `sum`
# 48-54 -> 43-45; a burst of medium work starts the GPU up to 64 dispatches' recording later)
SUBMIT_DISPATCHES = int(os.environ.get("GPUARRAY_SUBMIT_DISPATCHES", "64"))
FIRST_SUBMIT = 16   # submit_early: dispatches worth starting the GPU on, then every LONG_SUBMIT (H200,
LONG_SUBMIT = 256   # a submit while the GPU runs costs 0.1-0.4 ms of host time: docs/benchmarks.md)
SUBMIT_BYTES = int(os.environ.get("GPUARRAY_SUBMIT_MB", "1024")) << 20
STATIC_KEEP = 32           # static_buffer tables kept per provider (FFT twiddles ...)
WIDE_KEEP = 256            # and kernels' 64-bit constants, apart (wgpu_bindings.KeptBuffers)

# a kept host-visible allocation (the provider's ``upload_anchor``; GPUARRAY_UPLOAD_ANCHOR=0: none, to measure)
UPLOAD_ANCHOR_BYTES = 0 if os.environ.get("GPUARRAY_UPLOAD_ANCHOR") == "0" else 1 << 20
WANTED_FEATURES = ("shader-f64", "shader-int64", "shader-f16", "subgroup", "timestamp-query",
                   "timestamp-query-inside-passes")
WANTED_LIMITS = (
    "max-buffer-size", "max-storage-buffer-binding-size", "max-storage-buffers-per-shader-stage",
    "max-compute-workgroups-per-dimension", "max-compute-invocations-per-workgroup",
    "max-compute-workgroup-size-x", "max-compute-workgroup-storage-size",
)
if "wgpu.backends.wgpu_native" in sys.modules:      # imported by _devices.wgpu_adapters before us
    wgpu_cache.prime_ffi_types()
class WgpuProvider(WgpuMemory):
    """Kernels as WGSL on one wgpu adapter."""

    name = "wgpu"
    host_memory = False

    def __init__(self, adapter: Any, device_name: str = "wgpu") -> None:
        import wgpu

        watch_lost()
        wgpu_cache.prime_ffi_types()
        self.wgpu = wgpu
        self.adapter = adapter
        self._guard_cm = Guard(self)
        self._rec: Any = None               # the open pass's PassRecorder (wgpu_encode.py)
        self._recorder: Any = None          # a wgpu_replay.Recorder while a kernel is recorded
        self._static = KeptBuffers(self._make_static, STATIC_KEEP, WIDE_KEEP)    # static_buffer's
        self.device_name = device_name
        self.features = sorted(f for f in WANTED_FEATURES if f in adapter.features)
        self.limits = {k: adapter.limits[k] for k in WANTED_LIMITS if k in adapter.limits}
        self.device = adapter.request_device_sync(required_features=self.features,
                                                  required_limits=self.limits)
        self.f64 = "shader-f64" in self.features
        self.i64 = "shader-int64" in self.features
        self.max_binding = int(self.limits.get("max-storage-buffer-binding-size", 128 << 20))
        self.max_buffer = int(self.limits.get("max-buffer-size", 256 << 20))
        self.max_groups = int(self.limits.get("max-compute-workgroups-per-dimension", 65535))
        self.max_storage_buffers = storage_buffer_limit(self.device.limits)
        self.offset_align = int(self.device.limits.get("min-storage-buffer-offset-alignment", 256))
        bu = wgpu.BufferUsage
        # Keep up to two of the largest buffers free on a GPU (allocating 1 GiB there took
        # ~70 ms on the H200); a CPU adapter's memory is the host's, so keep less.
        keep = 1 << 30 if adapter.info.get("adapter_type") == "CPU" else 2 * self.max_buffer
        self.pool = BufferPool(self.device, bu.STORAGE | bu.COPY_SRC | bu.COPY_DST, keep, self.max_buffer)
        self.staging = BufferPool(self.device, bu.MAP_READ | bu.COPY_DST, 256 << 20, self.max_buffer)
        self.staging_w = BufferPool(self.device, bu.MAP_WRITE | bu.COPY_SRC, 256 << 20, self.max_buffer)
        # wgpu stages every ``queue.write_buffer`` (parameters, small uploads) in host-visible memory of its
        # own, freed once the GPU is done with it; with no other allocation of that memory alive, each one
        # allocated and freed a memory block of the driver: H200, 2.8 ms a 16-byte write and 2.5 ms more in
        # the wait after it (probes/wb_probe.py), against 20 us and none while this buffer lives
        self.upload_anchor = self.device.create_buffer(size=UPLOAD_ANCHOR_BYTES, usage=bu.MAP_WRITE | bu.COPY_SRC,
                                                       mapped_at_creation=True) if UPLOAD_ANCHOR_BYTES else None
        self.bindings = BindGroupCache()            # bind groups of pool buffers, for repeated dispatches
        self.pool.on_destroy = self.bindings.forget
        self.rendered: dict[tuple, Rendered] = {}
        self.pipelines: dict[str, tuple[Any, Any]] = {}     # WGSL source -> (pipeline, layout)
        self._compiling: dict[str, threading.Event] = {}
        self._plock = threading.Lock()
        self.kcache = (wgpu_cache.KernelCache(dict(adapter.info), self.features)
                       if wgpu_cache.enabled() else None)
        self.timer = wgpu_timing.GpuTimer(self) if wgpu_timing.supported(self.features) else None
        self.lock = threading.RLock()
        self.host_only_f64: set[str] = set(F64_HOST_OPS) if self.f64 else set()
        self.host_only_c128: set[str] = set(C128_HOST_OPS) if self.f64 else set()
        self.lost: str | None = None          # why the device was lost, once it is
        self._lost_seen = len(lost_reasons)
        self._enc: Any = None
        self._pass: Any = None
        self._offsets: Any = None         # the open pass's dynamic-offset array, kept for the next pass
        self._keep: list[Any] = []
        self._deferred: list[Any] = []
        self._pass_dispatches = 0         # dispatches and bytes bound in the open pass (end_evaluation)
        self._early = False               # submit_early submitted since the last full submit
        self._pass_bytes = 0
        bu = self.wgpu.BufferUsage
        self.params = wgpu_pool.ParamArena(self.device, bu.STORAGE | bu.COPY_DST,
                                           int(adapter.limits.get("min-storage-buffer-offset-alignment", 256)))
        self._pending: collections.deque[Any] = collections.deque()
        self._fence: tuple[Any, Any] | None = None
        self._small: Any = None             # read_small's SmallReader (wgpu_encode)
        self.numerics = numerics(self)      # flushes subnormals? exact fma? (wgpu_probe.py)
        self.builtins = builtin_checks(self)   # which WGSL built-ins are exact, float32 and float64
        self.vec4 = os.environ.get("GPUARRAY_VEC4", "1") != "0"    # vec4 elementwise kernels (render/wgsl.py)
        wgpu_cache.start_warm(self)

    # ---- capabilities
    def supports(self, dtype: np.dtype) -> bool:
        if dtype == float64 or dtype == complex128:
            return self.f64
        if dtype in (int64, uint64):
            return self.i64
        return True

    def chunk_elems(self) -> int:
        """Elements per chunk of a split elementwise kernel: one chunk of any storage array
        (up to 16 bytes an element: complex128) fits one binding, and chunk starts are aligned
        for every element size."""
        unit = max(1024, self.offset_align)
        return max(unit, self.max_binding // 16 // unit * unit)

    def needs_split(self, kernel: Kernel) -> bool:
        """Whether an elementwise kernel exceeds one binding or 32-bit indexing (run in chunks)."""
        return bool(kernel.memoized(("needs_split", self, self.max_binding), lambda: self._needs_split(kernel)))

    def _needs_split(self, kernel: Kernel) -> bool:
        if kernel.size >= 2**32:
            return True
        for node in list(kernel.inputs) + list(kernel.out_nodes):
            if _nbytes(node) > self.max_binding:
                return True
        return False

    def cannot_run(self, kernel: Kernel) -> str | None:
        """Why ``kernel`` cannot run on this adapter (it then runs on the host), or None."""
        why: str | None = kernel.memoized(("cannot_run", self, *self.capabilities()), lambda: self._cannot_run(kernel))
        return why

    def too_wide(self, kernel: Kernel) -> int:
        """How many storage buffers ``kernel`` binds beyond this adapter's limit (0: none); the planner
        evaluates parts of such a kernel's fused cone first (``runtime/cuts.py``)."""
        return max(0, bindings(kernel) - self.max_storage_buffers)

    def capabilities(self) -> tuple:
        """What ``cannot_run``'s answers depend on besides the kernel (tests change these on a live
        provider): its memo key, and what a replayed plan checks (``replay.py``)."""
        return (self.max_binding, self.max_storage_buffers, self.f64, self.i64,
                len(self.host_only_f64), len(self.host_only_c128))

    def _cannot_run(self, kernel: Kernel) -> str | None:
        return cannot_run_reason(self, kernel)

    # ---- faults: a lost device, and out of memory
    def _lost_error(self) -> DeviceLostError:
        return DeviceLostError(
            f"the device {self.device_name} ({self.adapter.info.get('device')}) was lost: {self.lost}. "
            "It is started again on its next use; arrays that have a host copy survive, arrays whose "
            "only copy was on the lost device are computed again there if the arrays they were computed "
            "from still exist", device=self.device_name, reason=self.lost or "")

    def _mark_lost(self, exc: BaseException | None) -> DeviceLostError:
        """Record the loss, forget every device object, and return the error to raise."""
        if self.lost is None:
            logged = lost_reasons[self._lost_seen:]
            detail = str(exc).strip().splitlines()[-1].strip() if exc is not None else ""
            self.lost = logged[-1] if logged else (detail or "unknown reason")
            self.pool.abandon()
            self.staging.abandon()
            self.staging_w.abandon()
            self.bindings.clear()
            if self.timer is not None:
                self.timer.abandon()
            self._enc = self._pass = self._rec = self._fence = self._small = self._ahead = self._ahead_read = None
            self._keep, self._deferred = [], []
            self._pass_dispatches = self._pass_bytes = 0
            self._pending.clear()
            self.pipelines.clear()
            self._static.clear()
        return self._lost_error()

    def _check_lost(self) -> None:
        """Raise DeviceLostError if the device is known lost; after wgpu logged a loss
        (of some device), probe this one with a tiny allocation."""
        if self.lost is not None:
            raise self._lost_error()
        if len(lost_reasons) != self._lost_seen:
            try:
                self.device.create_buffer(size=4, usage=self.wgpu.BufferUsage.COPY_DST)
            except Exception as exc:  # noqa: BLE001 - any wgpu error: look at what it says
                if is_device_lost(exc):
                    raise self._mark_lost(exc) from exc
            self._lost_seen = len(lost_reasons)

    def _guard(self) -> Guard:
        """Turn wgpu's "device is lost" errors into DeviceLostError (and remember the loss)."""
        if self.lost is not None or len(lost_reasons) != self._lost_seen:      # _check_lost's tests
            self._check_lost()
        return self._guard_cm


    def _get(self, pool: BufferPool, nbytes: int, what: str = "buffer") -> Any:
        """A buffer from ``pool``; on failure release every pooled buffer and retry once."""
        self._check_lost()
        if nbytes > self.max_buffer:
            raise OutOfMemoryError(
                f"cannot allocate a {what} of {nbytes} bytes ({_fmt_bytes(nbytes)}) on {self.device_name}: "
                f"the adapter's largest buffer is {self.max_buffer} bytes", requested=nbytes,
                device=self.device_name, live=self.pool.live, pooled=self.pool.free_bytes)
        try:
            return pool.get(nbytes)
        except Exception as exc:  # noqa: BLE001 - wgpu raises GPUValidationError / GPUOutOfMemoryError
            if is_device_lost(exc):
                raise self._mark_lost(exc) from exc
        # release what can be released (the open pass first: it holds deferred frees) and retry
        self.flush()
        gc.collect()
        released = self.pool.clear() + self.staging.clear() + self.staging_w.clear()
        try:
            return pool.get(nbytes)
        except Exception as exc:  # noqa: BLE001
            if is_device_lost(exc):
                raise self._mark_lost(exc) from exc
            raise OutOfMemoryError(
                f"out of device memory on {self.device_name}: a {what} of {nbytes} bytes "
                f"({_fmt_bytes(nbytes)}) could not be allocated, even after releasing {released} pooled "
                f"bytes and retrying; arrays hold {self.pool.live} bytes ({_fmt_bytes(self.pool.live)}) "
                f"there now. wgpu said: {str(exc).strip().splitlines()[-1].strip()}",
                requested=nbytes, device=self.device_name, live=self.pool.live,
                pooled=self.pool.free_bytes) from exc

    # ---- kernels
    def pipeline_for(self, source: str, background: bool = False) -> tuple[Any, Any]:
        """(pipeline, bind-group layout) for WGSL ``source``, compiled once per source.

        Thread-safe: the warm-up thread (``background=True``) compiles recently used shaders
        while the main thread runs; a main-thread request for a shader being compiled there
        waits for it (and counts as a cache hit)."""
        key = source        # a str caches its hash: no digest of the source per dispatch
        entry = self.pipelines.get(key)
        if entry is not None:
            if not background:
                _metrics.add("pipeline_cache_hits")
            return entry
        with self._plock:
            entry = self.pipelines.get(key)
            busy = self._compiling.get(key) if entry is None else None
            if entry is None and busy is None:
                busy = self._compiling[key] = threading.Event()
                mine = True
            else:
                mine = False
        if not mine:
            if busy is not None:
                busy.wait()
                entry = self.pipelines.get(key)
            if entry is not None:
                if not background:
                    _metrics.add("pipeline_cache_hits")
                return entry
            return self.pipeline_for(source, background)      # the other compile failed: try here
        try:
            module = self.device.create_shader_module(code=source)
            layout = bind_layout(self.device, source)
            pipeline = self.device.create_compute_pipeline(
                layout=self.device.create_pipeline_layout(bind_group_layouts=[layout]),
                compute={"module": module, "entry_point": "main", **overrides(self, source)})
            entry = (pipeline, layout)
            self.pipelines[key] = entry
        finally:
            with self._plock:
                del self._compiling[key]
            assert busy is not None
            busy.set()
        _metrics.add("kernels_precompiled" if background else "kernels_compiled")
        return entry

    def rendered_for(self, kernel: Kernel, render_fn: Any = render, variant: Any = None) -> Rendered:
        """The rendered shader for ``kernel`` by ``render_fn``, cached by signature (and ``variant``,
        for kinds that render several shaders per kernel): in memory, then on disk
        (``wgpu_cache.KernelCache``)."""
        key = (getattr(render_fn, "__qualname__", render_fn), variant, kernel.signature)
        r = self.rendered.get(key)
        if r is None:
            dkey = wgpu_cache.entry_key(render_fn, variant, kernel.signature) if self.kcache else None
            r = self.kcache.get(dkey) if self.kcache is not None and dkey is not None else None
            if r is None:
                r = render_fn(kernel) if variant is None else render_fn(kernel, variant)
                if self.kcache is not None and dkey is not None:
                    self.kcache.put(dkey, r)
            self.rendered[key] = r
        return r

    def _begin(self) -> None:
        if self._pass is None:
            if RAW and (self.timer is None or not wgpu_timing.active()):
                self._enc = self._pass = RawPass(self.device)       # C entry points (wgpu_encode)
            else:                                                   # timestamps need wgpu-py's pass
                self._enc = self.device.create_command_encoder()
                self._pass = self._enc.begin_compute_pass()
            self._rec = PassRecorder(self._pass, self._offsets)
            self._offsets = self._rec.offsets

    def flush(self, then: Any = None) -> None:
        """Submit the open compute pass (one submit for everything enqueued since the last flush).
        ``then(encoder)`` records commands to run after the pass in the same submit (a download's
        copy into its staging buffer); with no pass open they are submitted alone."""
        with self.lock:
            if self._pass is None or self.lost is not None:
                if self._recorder is not None:
                    self._recorder.ok = False
                self._drain()
                if then is not None:
                    if RAW:
                        RawPass(self.device, compute=False).submit(self.device.queue, then)
                    else:
                        enc = self.device.create_command_encoder()
                        then(enc)
                        self.device.queue.submit([enc.finish()])
                return
            with self._guard():
                self._submit(then)

    def submit_early(self, min_dispatches: int | None = None) -> None:
        """From a kernel's enqueue (lock and guard held): submit the open pass once it holds
        ``min_dispatches`` (``FIRST_SUBMIT``, after an early submit ``LONG_SUBMIT``), so that the GPU
        starts on a long chain of dispatches (the linear algebra's) while the rest is recorded; a
        replayed program submits at the same points."""
        if min_dispatches is None:
            min_dispatches = LONG_SUBMIT if self._early else FIRST_SUBMIT
        if self._pass is None or self._pass_dispatches < min_dispatches:
            return
        self._early = True
        if self._recorder is not None:
            self._recorder.submit()
        self._submit(None, keep=True)

    def _submit(self, then: Any, keep: bool = False) -> None:
        """``flush`` of the open pass, lock and guard held (as ``read_small``); ``keep``: for ``submit_early``."""
        if self._recorder is not None and not keep:
            self._recorder.ok = False
        enc, cpass = self._enc, self._pass
        self._pass = self._rec = self._enc = None   # taken: a failed submit leaves none open
        try:
            if type(enc) is RawPass:        # no timestamps were written in it
                enc.submit(self.device.queue, then, self.params.upload)
            else:
                cpass.end()
                if self.timer is not None:
                    self.timer.resolve(enc)
                if then is not None:
                    then(enc)
                self.params.upload()
                self.device.queue.submit([enc.finish()])
        finally:
            self._keep = []
            self._early = self._early and keep
            self._pass_dispatches = self._pass_bytes = 0
            self.params.reset(keep)
            for buf in self._deferred:
                self.pool.put(buf)
            self._deferred = []
            self._drain()
        _metrics.add("submits")

    def end_evaluation(self, quiet: bool = False) -> None:
        """The end of one evaluation: submit the open pass when it holds ``SUBMIT_DISPATCHES``
        dispatches or more, binds ``SUBMIT_BYTES`` or more (work worth starting the GPU on at
        once), or dispatches are being timed; otherwise leave it open for later evaluations, so
        that a run of small evaluations shares one command encoder and one submit. Anything that
        needs the results (a download, ``synchronize``, a host kernel reading them) submits first.
        ``quiet``: the caller found nothing timed (``_profile.quiet``) for this evaluation."""
        with self.lock:
            if self._pass is not None and (self._pass_dispatches >= SUBMIT_DISPATCHES
                                           or self._pass_bytes >= SUBMIT_BYTES or not quiet and
                                           self.timer is not None and wgpu_timing.active()):
                self.flush()

    def dispatch(self, source: str, prm: np.ndarray, buffers: Sequence[Any], groups: int) -> None:
        """Record one dispatch of ``source`` over ``groups`` workgroups (2-D past 65535) into the open pass.

        Bindings: 0 is the ``prm`` u32 array, then ``buffers`` in order: GpuHandles, raw buffers,
        or ``(buffer, offset, size)`` sub-ranges.
        """
        if groups <= 0:
            return
        pipeline, layout = self.pipeline_for(source)
        bound: list[Any] = []
        nbytes = raw = 0        # raw: buffers bound whole (data_buffer's, new each time): not kept
        for h in buffers:
            # 16: an empty complex128 array; a raw buffer (data_buffer: new each time) is bound whole
            if isinstance(h, GpuHandle):
                bound.append((h.buffer, 0, max(h.nbytes, 16)))
                nbytes += h.nbytes
            elif isinstance(h, tuple):
                bound.append(h)
                nbytes += h[2]
            else:
                bound.append(h)
                raw += 1
        timer = self.timer if self.timer is not None and wgpu_timing.active() else None
        if timer is not None and type(self._pass) is RawPass:
            self.flush()        # timing began while a pass without timestamps was open
        bind, poff = self.bind(layout, prm, bound, nbytes, raw == 0)
        gx = min(groups, self.max_groups)
        gy = -(-groups // gx)
        if gy > self.max_groups:
            raise ValueError(f"too many workgroups ({groups}) for one dispatch")
        if self._recorder is not None:
            self._recorder.dispatch(pipeline, layout, prm, buffers, gx, gy, nbytes)
        if timer is not None:
            timer.begin(self._pass)
        self._rec.dispatch(pipeline, bind, poff, gx, gy)
        if timer is not None:
            timer.end(self._pass)
        _metrics.add("dispatches")

    def bind(self, layout: Any, prm: np.ndarray, bound: list[Any], nbytes: int, cached: bool) -> tuple[Any, int]:
        """``dispatch``'s bind group in the open pass (opened here) and its parameters' dynamic offset:
        ``prm`` put into the parameter arena (binding 0 at offset 0, moved by the offset), then ``bound``."""
        if self._pass is None:
            self._begin()
        pbuf, poff, psize = self.params.put(prm, self._keep)
        self._pass_dispatches += 1
        self._pass_bytes += nbytes
        return self.group_for(layout, [(pbuf, 0, psize), *bound], cached), poff

    def group_for(self, layout: Any, ranges: list[Any], cached: bool) -> Any:
        """``bind_group`` from the bind-group cache when ``cached`` (``bind``'s; replayed programs')."""
        return self.bindings.get(layout, ranges, lambda: self.bind_group(layout, ranges)) if cached \
            else self.bind_group(layout, ranges)

    def bind_group(self, layout: Any, ranges: Sequence[Any]) -> Any:
        """A bind group of ``layout`` over ``ranges``: (buffer, offset, size) or whole buffers."""
        entries = [{"binding": b, "resource": {"buffer": r[0], "offset": r[1], "size": r[2]}
                    if isinstance(r, tuple) else {"buffer": r}} for b, r in enumerate(ranges)]
        return self.device.create_bind_group(layout=layout, entries=entries)

    def static_buffer(self, key: tuple, values: Callable[[], np.ndarray]) -> tuple[Any, int, int]:
        """A read-only storage buffer holding ``values()``, made once per ``key`` and kept (the
        ``STATIC_KEEP`` most recently used; a kernel's 64-bit constants, keys ``("wide", ...)``, the
        ``WIDE_KEEP`` most recently used apart: ``wgpu_bindings.KeptBuffers``): tables such as FFT
        twiddles. Returned as a ``(buffer, 0, size)`` range, so bind groups over it are cached and
        programs replay it."""
        hit = self._static.get(key, values)
        if self._recorder is not None:
            self._recorder.static(hit[0])
        return hit

    def _make_static(self, values: np.ndarray) -> Any:
        return self.device.create_buffer_with_data(data=np.ascontiguousarray(values),
                                                   usage=self.wgpu.BufferUsage.STORAGE)

    def data_buffer(self, values: np.ndarray) -> Any:
        """A small read-only storage buffer holding ``values``, kept alive until the next flush."""
        buf = self.device.create_buffer_with_data(data=values, usage=self.wgpu.BufferUsage.STORAGE)
        self._keep.append(buf)
        if self._recorder is not None:
            self._recorder.data(values, buf)
        return buf

    # ---- replay (wgpu_replay.py)
    def record(self, kernel: Kernel, in_handles: Sequence[Any]) -> tuple[list[Any], Program | None]:
        """``enqueue(kernel, in_handles)`` and the ``Program`` that does it again for new inputs
        (None where the enqueue did something a program cannot repeat)."""
        with self.lock:
            rec = self._recorder = Recorder(in_handles)
            const_tags.sink.tags = rec.tags     # where the kernel's constants go (render/const_tags.py)
            try:
                outs = self.enqueue(kernel, in_handles)
            finally:
                self._recorder = None
                const_tags.sink.tags = None
        return outs, rec.program(outs)

    def replay(self, program: Program, in_handles: Sequence[Any], new: dict[int, tuple] | None = None) -> list[Any]:
        """Run a recorded ``program`` over ``in_handles`` into the open pass (with the constants
        ``new``, ``Program.run``'s); its output handles."""
        with self.lock, self._guard():
            return program.run(self, in_handles, new)

    def enqueue(self, kernel: Kernel, in_handles: Sequence[Any]) -> list[Any]:
        """Record ``kernel`` into the open pass; returns its output handles (valid once flushed)."""
        with self.lock, self._guard():
            if kernel.kind != "elementwise":
                return list(WGPU_KINDS[kernel.kind](self, kernel, list(in_handles)))
            if kernel.size and (self.needs_split(kernel) or any(isinstance(h, SegmentedHandle) for h in in_handles)):
                win = windowed(self, kernel, in_handles)
                if win is None:
                    return enqueue_split(self, kernel, in_handles)
                kernel, in_handles = win
            outs = [self.alloc(kernel.size * STORAGE_NP[kernel.instrs[o].dtype].itemsize)
                    for o in kernel.outputs]
            if kernel.size == 0:
                return outs
            dispatch_elementwise(self, kernel, [*in_handles, *outs])
            return outs

    def run(self, batch: Sequence[tuple[Kernel, list[Any]]]) -> list[list[Any]]:
        """Run kernels in order in one compute pass and one submit; returns output handles."""
        with self.lock:
            results = [self.enqueue(k, ins) for k, ins in batch]
            self.flush()
        return results

    def synchronize(self) -> None:
        """Submit pending work and wait until the queue has finished it."""
        with self.lock, self._guard():
            if self._fence is None:
                bu = self.wgpu.BufferUsage
                self._fence = (self.device.create_buffer(size=4, usage=bu.COPY_SRC | bu.STORAGE),
                               self.device.create_buffer(size=4, usage=bu.MAP_READ | bu.COPY_DST))
            src, dst = self._fence
            if RAW:
                self.read_small(src, 0, 4)      # the copy runs after all earlier work (dst unused)
            else:
                self.flush(lambda enc: enc.copy_buffer_to_buffer(src, 0, dst, 0, 4))
                wgpu_pool.map_read(dst, self.wgpu).sync_wait()
                dst.unmap()
            if self.timer is not None:
                self.timer.harvest()

    def memory(self) -> dict[str, int]:
        """Bytes of device buffers held by arrays (``live``) and kept free for reuse (``pooled``)."""
        return {"live": self.pool.live,
                "pooled": self.pool.free_bytes + self.staging.free_bytes + self.staging_w.free_bytes}

    def device_info(self) -> dict[str, Any]:
        info = dict(self.adapter.info)
        return {
            "name": info.get("device"), "provider": self.name, "backend": info.get("backend_type"),
            "adapter_type": info.get("adapter_type"), "vendor": info.get("vendor"),
            "description": info.get("description"), "features": list(self.features),
            "limits": dict(self.limits), "float64": self.f64, "int64": self.i64,
            "float64_on_host": sorted(self.host_only_f64), "complex128_on_host": sorted(self.host_only_c128),
        }
