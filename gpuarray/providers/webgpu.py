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
from .wgpu_pool import BufferPool

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

    # ---- capabilities
    def supports(self, dtype: np.dtype) -> bool:
        if dtype == float64:
            return self.f64
        if dtype in (int64, uint64):
            return self.i64
        return True

    def cannot_run(self, kernel: Kernel) -> str | None:
        for ins in kernel.instrs:
            if not self.supports(ins.dtype):
                return f"{ins.dtype} is not supported by this adapter"
            if ins.dtype == float64 and ins.op in self.host_only_f64:
                return (f"float64 {ins.op} has no WGSL implementation that is exact on every device yet; "
                        "it runs on the host")
        n_bind = len(kernel.inputs) + len(kernel.outputs) + 4
        if n_bind > self.max_storage_buffers:
            return f"kernel needs {n_bind} storage buffers; the adapter allows {self.max_storage_buffers}"
        for node in list(kernel.inputs) + list(kernel.out_nodes):
            nbytes = int(np.prod(node.shape, dtype=np.int64)) * STORAGE_NP[node.dtype].itemsize
            if nbytes > self.max_binding:
                return f"an array of {nbytes} bytes exceeds the adapter's storage binding limit {self.max_binding}"
        if kernel.size >= 2**32:
            return "more than 2**32 - 1 elements"
        return None

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
        with self.lock:
            self.pool.put(handle.buffer)

    # ---- kernels
    def _pipeline(self, kernel: Kernel) -> tuple[Rendered, Any, Any]:
        sig = kernel.signature
        r = self.rendered.get(sig)
        if r is None:
            r = render(kernel)
            self.rendered[sig] = r
        key = hashlib.sha1(r.source.encode()).hexdigest()
        entry = self.pipelines.get(key)
        if entry is None:
            module = self.device.create_shader_module(code=r.source)
            pipeline = self.device.create_compute_pipeline(layout="auto",
                                                           compute={"module": module, "entry_point": "main"})
            entry = (pipeline, pipeline.get_bind_group_layout(0))
            self.pipelines[key] = entry
            _metrics.add("kernels_compiled")
        else:
            _metrics.add("pipeline_cache_hits")
        return r, entry[0], entry[1]

    def run(self, batch: Sequence[tuple[Kernel, list[Any]]]) -> list[list[Any]]:
        """Run kernels in order in one compute pass and one submit; returns output handles."""
        bu = self.wgpu.BufferUsage
        results: list[list[Any]] = []
        with self.lock:
            enc = self.device.create_command_encoder()
            cpass = enc.begin_compute_pass()
            keep: list[Any] = []
            for kernel, in_handles in batch:
                outs = [self.alloc(kernel.size * STORAGE_NP[kernel.instrs[o].dtype].itemsize)
                        for o in kernel.outputs]
                results.append(outs)
                if kernel.size == 0:
                    continue
                r, pipeline, layout = self._pipeline(kernel)
                meta = r.meta(kernel)
                mbuf = self.device.create_buffer_with_data(data=meta, usage=bu.STORAGE)
                keep.append(mbuf)
                entries = [{"binding": 0, "resource": {"buffer": mbuf}}]
                b = 1
                for h in list(in_handles) + outs:
                    entries.append({"binding": b, "resource": {"buffer": h.buffer, "offset": 0,
                                                               "size": max(h.nbytes, 4)}})
                    b += 1
                for _t, vals in sorted(r.wide_values(kernel).items()):
                    wbuf = self.device.create_buffer_with_data(data=vals, usage=bu.STORAGE)
                    keep.append(wbuf)
                    entries.append({"binding": b, "resource": {"buffer": wbuf}})
                    b += 1
                bind = self.device.create_bind_group(layout=layout, entries=entries)
                groups = -(-kernel.size // WORKGROUP)
                gx = min(groups, self.max_groups)
                gy = -(-groups // gx)
                cpass.set_pipeline(pipeline)
                cpass.set_bind_group(0, bind)
                cpass.dispatch_workgroups(gx, gy, 1)
                _metrics.add("dispatches")
            cpass.end()
            self.device.queue.submit([enc.finish()])
            _metrics.add("submits")
        return results

    # ---- self-test
    def device_info(self) -> dict[str, Any]:
        info = dict(self.adapter.info)
        return {
            "name": info.get("device"), "provider": self.name, "backend": info.get("backend_type"),
            "adapter_type": info.get("adapter_type"), "vendor": info.get("vendor"),
            "description": info.get("description"), "features": list(self.features),
            "limits": dict(self.limits), "float64": self.f64, "int64": self.i64,
            "float64_on_host": sorted(self.host_only_f64),
        }
