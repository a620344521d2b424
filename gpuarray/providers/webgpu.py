"""The wgpu provider: runs kernel plans as WGSL compute shaders.

- adapter choice and explicit features / limits (64-bit types only where the
  adapter has ``shader-f64`` / ``shader-int64``);
- one command encoder, one compute pass and one submit per evaluation;
- 2-D dispatch beyond 65535 workgroups;
- pipelines cached by kernel signature (and WGSL hash), a size-class buffer
  pool, and pooled MAP_READ staging buffers for readback;
- float64 transcendentals run on the host (DESIGN.md 5.8; see ``F64_HOST_OPS``).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _metrics
from .._dtypes import STORAGE_NP, float64, int64, uint64
from ..compiler.kernel import Kernel
from ..render.wgsl import WORKGROUP, Rendered, render
from .wgpu_argreduce import enqueue_argreduce
from .wgpu_matmul import enqueue_matmul
from .wgpu_pool import BufferPool
from .wgpu_reduce import enqueue_reduce
from .wgpu_scan import enqueue_scan
from .wgpu_scatter import enqueue_scatter
from .wgpu_sort import enqueue_searchsorted, enqueue_sort, searchsorted_cannot_run, sort_cannot_run

# Kernel kinds other than elementwise that have WGSL implementations here.
WGPU_KINDS: dict[str, Any] = {"reduce": enqueue_reduce, "matmul": enqueue_matmul}
WGPU_KINDS["scan"] = enqueue_scan              # cumulative_sum / cumulative_prod
WGPU_KINDS["argreduce"] = enqueue_argreduce    # argmax / argmin
WGPU_KINDS["scatter"] = enqueue_scatter        # x[int_array] = value
WGPU_KINDS.update(sort=enqueue_sort, argsort=enqueue_sort, searchsorted=enqueue_searchsorted)
# Per-kind limits beyond the generic ones: fn(provider, kernel) -> reason | None.
WGPU_KIND_CHECKS: dict[str, Any] = {"sort": sort_cannot_run, "argsort": sort_cannot_run,
                                    "searchsorted": searchsorted_cannot_run}

WANTED_FEATURES = ("shader-f64", "shader-int64", "shader-f16", "subgroup", "timestamp-query")
WANTED_LIMITS = (
    "max-buffer-size", "max-storage-buffer-binding-size", "max-storage-buffers-per-shader-stage",
    "max-compute-workgroups-per-dimension", "max-compute-invocations-per-workgroup",
    "max-compute-workgroup-size-x", "max-compute-workgroup-storage-size",
)
# float64 ops whose WGSL would use a transcendental built-in. SPIR-V's GLSL.std.450
# transcendentals are 32-bit only: naga still emits them for f64, lavapipe then returns
# garbage and the NVIDIA driver fails to compile the shader and loses the device (both seen
# here). Until software float64 versions exist, these run on the host.
F64_HOST_OPS = frozenset({
    "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "atan2", "pow", "logaddexp",
})
_TYPE_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3, "Unknown": 4}
_BACKEND_RANK = {"Vulkan": 0, "Metal": 0, "D3D12": 0, "OpenGL": 2}


class GpuHandle:
    __slots__ = ("buffer", "nbytes")

    def __init__(self, buffer: Any, nbytes: int) -> None:
        self.buffer = buffer
        self.nbytes = nbytes


def adapters() -> list[Any]:
    """Every wgpu adapter, best first (discrete, integrated, ..., CPU; native APIs before GL)."""
    import wgpu
    found = wgpu.gpu.enumerate_adapters_sync()

    def rank(a: Any) -> tuple[int, int]:
        info = a.info
        return (_TYPE_RANK.get(str(info.get("adapter_type")), 4),
                _BACKEND_RANK.get(str(info.get("backend_type")), 1))
    return sorted(found, key=rank)


def is_real_gpu(adapter: Any) -> bool:
    return str(adapter.info.get("adapter_type")) in ("DiscreteGPU", "IntegratedGPU")


class WgpuProvider:
    """Kernels as WGSL on one wgpu adapter."""

    name = "wgpu"
    host_memory = False

    def __init__(self, adapter: Any) -> None:
        import wgpu

        self.wgpu = wgpu
        self.adapter = adapter
        self.features = sorted(f for f in WANTED_FEATURES if f in adapter.features)
        self.limits = {k: adapter.limits[k] for k in WANTED_LIMITS if k in adapter.limits}
        self.device = adapter.request_device_sync(required_features=self.features,
                                                  required_limits=self.limits)
        self.f64 = "shader-f64" in self.features
        self.i64 = "shader-int64" in self.features
        self.max_binding = int(self.limits.get("max-storage-buffer-binding-size", 128 << 20))
        self.max_groups = int(self.limits.get("max-compute-workgroups-per-dimension", 65535))
        self.max_storage_buffers = int(self.limits.get("max-storage-buffers-per-shader-stage", 8))
        bu = wgpu.BufferUsage
        # Keep up to two of the largest buffers free on a GPU (allocating 1 GiB there took
        # ~70 ms on the H200); a CPU adapter's memory is the host's, so keep less.
        keep = 1 << 30 if adapter.info.get("adapter_type") == "CPU" else 2 * int(
            self.limits.get("max-buffer-size", 1 << 30))
        self.pool = BufferPool(self.device, bu.STORAGE | bu.COPY_SRC | bu.COPY_DST, keep)
        self.staging = BufferPool(self.device, bu.MAP_READ | bu.COPY_DST, 256 << 20)
        self.rendered: dict[tuple, Rendered] = {}
        self.pipelines: dict[str, tuple[Any, Any]] = {}
        self.lock = threading.RLock()
        self.host_only_f64: set[str] = set(F64_HOST_OPS) if self.f64 else set()
        self._enc: Any = None
        self._pass: Any = None
        self._keep: list[Any] = []
        self._deferred: list[Any] = []
        self._fence: tuple[Any, Any] | None = None

    # ---- capabilities
    def supports(self, dtype: np.dtype) -> bool:
        if dtype == float64:
            return self.f64
        if dtype in (int64, uint64):
            return self.i64
        return True

    def cannot_run(self, kernel: Kernel) -> str | None:
        if kernel.kind != "elementwise" and kernel.kind not in WGPU_KINDS:
            return f"no WGSL kernel for {kernel.kind} yet; it runs on the host"
        for ins in kernel.instrs:
            if not self.supports(ins.dtype):
                return f"{ins.dtype} is not supported by this adapter"
            if ins.dtype == float64 and ins.op in self.host_only_f64:
                return (f"float64 {ins.op} has no WGSL implementation that is exact on every device yet; "
                        "it runs on the host")
        # prm, inputs, outputs, up to 3 arrays of 64-bit scalars (other kinds: a few scratch buffers)
        n_bind = len(kernel.inputs) + (len(kernel.outputs) + 4 if kernel.kind == "elementwise" else 6)
        if n_bind > self.max_storage_buffers:
            return f"kernel needs {n_bind} storage buffers; the adapter allows {self.max_storage_buffers}"
        for node in list(kernel.inputs) + list(kernel.out_nodes):
            nbytes = int(np.prod(node.shape, dtype=np.int64)) * STORAGE_NP[node.dtype].itemsize
            if nbytes > self.max_binding:
                return f"an array of {nbytes} bytes exceeds the adapter's storage binding limit {self.max_binding}"
        if kernel.size >= 2**32:
            return "more than 2**32 - 1 elements"
        check = WGPU_KIND_CHECKS.get(kernel.kind)
        return check(self, kernel) if check is not None else None

    # ---- memory
    def alloc(self, nbytes: int) -> GpuHandle:
        with self.lock:
            return GpuHandle(self.pool.get(nbytes), nbytes)

    def upload(self, host: np.ndarray) -> GpuHandle:
        data = np.ascontiguousarray(host, dtype=STORAGE_NP[host.dtype])
        h = self.alloc(data.nbytes)
        if data.nbytes:
            self.device.queue.write_buffer(h.buffer, 0, data)
        return h

    def download(self, handle: GpuHandle, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        sdt = STORAGE_NP[dtype]
        n = handle.nbytes
        if n == 0:
            return np.empty(shape, dtype=dtype)
        with self.lock:
            self.flush()
            stage = self.staging.get(n)
            enc = self.device.create_command_encoder()
            enc.copy_buffer_to_buffer(handle.buffer, 0, stage, 0, n)
            self.device.queue.submit([enc.finish()])
            stage.map_sync(self.wgpu.MapMode.READ, 0, n)
            try:
                raw = stage.read_mapped(0, n, copy=True)
            finally:
                stage.unmap()
                self.staging.put(stage)
        arr = np.frombuffer(raw, dtype=sdt).reshape(shape)
        return arr.astype(dtype) if sdt != dtype else arr.copy()

    def free(self, handle: GpuHandle) -> None:
        """Return a buffer to the pool; while a pass is open, only after it is submitted
        (the pool may destroy buffers, and the open pass may still use this one)."""
        with self.lock:
            if self._pass is not None:
                self._deferred.append(handle.buffer)
            else:
                self.pool.put(handle.buffer)

    # ---- kernels
    def pipeline_for(self, source: str) -> tuple[Any, Any]:
        """(pipeline, bind-group layout) for WGSL ``source``, compiled once per source."""
        key = hashlib.sha1(source.encode()).hexdigest()
        entry = self.pipelines.get(key)
        if entry is None:
            module = self.device.create_shader_module(code=source)
            pipeline = self.device.create_compute_pipeline(layout="auto",
                                                           compute={"module": module, "entry_point": "main"})
            entry = (pipeline, pipeline.get_bind_group_layout(0))
            self.pipelines[key] = entry
            _metrics.add("kernels_compiled")
        else:
            _metrics.add("pipeline_cache_hits")
        return entry

    def rendered_for(self, kernel: Kernel, render_fn: Any = render, variant: Any = None) -> Rendered:
        """The rendered shader for ``kernel`` by ``render_fn``, cached by signature (and ``variant``,
        for kinds that render several shaders per kernel)."""
        key = (getattr(render_fn, "__qualname__", render_fn), variant, kernel.signature)
        r = self.rendered.get(key)
        if r is None:
            r = render_fn(kernel) if variant is None else render_fn(kernel, variant)
            self.rendered[key] = r
        return r

    def _begin(self) -> None:
        if self._pass is None:
            self._enc = self.device.create_command_encoder()
            self._pass = self._enc.begin_compute_pass()

    def flush(self) -> None:
        """Submit the open compute pass (one submit for everything enqueued since the last flush)."""
        with self.lock:
            if self._pass is None:
                return
            self._pass.end()
            self.device.queue.submit([self._enc.finish()])
            self._pass = None
            self._enc = None
            self._keep = []
            for buf in self._deferred:
                self.pool.put(buf)
            self._deferred = []
            _metrics.add("submits")

    def dispatch(self, source: str, prm: np.ndarray, buffers: Sequence[Any], groups: int) -> None:
        """Record one dispatch of ``source`` over ``groups`` workgroups (2-D past 65535) into the open pass.

        Bindings: 0 is the ``prm`` u32 array, then ``buffers`` (GpuHandles or raw buffers) in order.
        """
        if groups <= 0:
            return
        pipeline, layout = self.pipeline_for(source)
        bu = self.wgpu.BufferUsage
        self._begin()
        pbuf = self.device.create_buffer_with_data(data=prm, usage=bu.STORAGE)
        self._keep.append(pbuf)
        entries = [{"binding": 0, "resource": {"buffer": pbuf}}]
        for b, h in enumerate(buffers, start=1):
            if isinstance(h, GpuHandle):
                res = {"buffer": h.buffer, "offset": 0, "size": max(h.nbytes, 8)}  # 8: an empty 64-bit array
            else:
                res = {"buffer": h}
            entries.append({"binding": b, "resource": res})
        bind = self.device.create_bind_group(layout=layout, entries=entries)
        gx = min(groups, self.max_groups)
        gy = -(-groups // gx)
        if gy > self.max_groups:
            raise ValueError(f"too many workgroups ({groups}) for one dispatch")
        assert self._pass is not None
        self._pass.set_pipeline(pipeline)
        self._pass.set_bind_group(0, bind)
        self._pass.dispatch_workgroups(gx, gy, 1)
        _metrics.add("dispatches")

    def data_buffer(self, values: np.ndarray) -> Any:
        """A small read-only storage buffer holding ``values``, kept alive until the next flush."""
        buf = self.device.create_buffer_with_data(data=values, usage=self.wgpu.BufferUsage.STORAGE)
        self._keep.append(buf)
        return buf

    def enqueue(self, kernel: Kernel, in_handles: Sequence[Any]) -> list[Any]:
        """Record ``kernel`` into the open pass; returns its output handles (valid once flushed)."""
        with self.lock:
            if kernel.kind != "elementwise":
                return list(WGPU_KINDS[kernel.kind](self, kernel, list(in_handles)))
            outs = [self.alloc(kernel.size * STORAGE_NP[kernel.instrs[o].dtype].itemsize)
                    for o in kernel.outputs]
            if kernel.size == 0:
                return outs
            r = self.rendered_for(kernel)
            wide = [self.data_buffer(v) for _t, v in sorted(r.wide_values(kernel).items())]
            self.dispatch(r.source, r.meta(kernel), [*in_handles, *outs, *wide], -(-kernel.size // WORKGROUP))
            return outs

    def run(self, batch: Sequence[tuple[Kernel, list[Any]]]) -> list[list[Any]]:
        """Run kernels in order in one compute pass and one submit; returns output handles."""
        with self.lock:
            results = [self.enqueue(k, ins) for k, ins in batch]
            self.flush()
        return results

    def synchronize(self) -> None:
        """Submit pending work and wait until the queue has finished it."""
        with self.lock:
            self.flush()
            if self._fence is None:
                bu = self.wgpu.BufferUsage
                self._fence = (self.device.create_buffer(size=4, usage=bu.COPY_SRC | bu.STORAGE),
                               self.device.create_buffer(size=4, usage=bu.MAP_READ | bu.COPY_DST))
            src, dst = self._fence
            enc = self.device.create_command_encoder()
            enc.copy_buffer_to_buffer(src, 0, dst, 0, 4)
            self.device.queue.submit([enc.finish()])
            dst.map_sync(self.wgpu.MapMode.READ, 0, 4)   # returns once all earlier work is done
            dst.unmap()

    def device_info(self) -> dict[str, Any]:
        info = dict(self.adapter.info)
        return {
            "name": info.get("device"), "provider": self.name, "backend": info.get("backend_type"),
            "adapter_type": info.get("adapter_type"), "vendor": info.get("vendor"),
            "description": info.get("description"), "features": list(self.features),
            "limits": dict(self.limits), "float64": self.f64, "int64": self.i64,
            "float64_on_host": sorted(self.host_only_f64),
        }
