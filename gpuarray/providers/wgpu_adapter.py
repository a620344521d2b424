"""Adapter choice and device loss for the wgpu provider.

wgpu-py 0.32 implements neither ``device.lost`` nor error scopes: the lost callback only logs,
and later calls on the device raise GPUValidationError("... Parent device is lost"). A filter on
wgpu's logger keeps the reasons it logged (``lost_reasons``); ``Guard`` turns wgpu errors that
say the device is gone into ``DeviceLostError`` for the provider.

>>> is_device_lost(RuntimeError("Parent device is lost"))
True
"""

from __future__ import annotations

import logging
from typing import Any

from ..core.errors import DeviceLostError, OutOfMemoryError
from . import wgpu_cache

_TYPE_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3, "Unknown": 4}
_BACKEND_RANK = {"Vulkan": 0, "Metal": 0, "D3D12": 0, "OpenGL": 2}


# Reasons wgpu logged for lost devices ("The WGPU device was lost (destroyed): ..."), newest last
# (changed in place only: importers hold this list).
lost_reasons: list[str] = []


class _LostWatcher(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        if msg.startswith("The WGPU device was lost"):
            head, _, rest = msg.partition(":")
            why = head[len("The WGPU device was lost"):].strip(" ()")
            detail = rest.strip().splitlines()[0] if rest.strip() else ""
            lost_reasons.append(f"{why}: {detail}" if detail else why)
            del lost_reasons[:-16]
        return True


_watcher: _LostWatcher | None = None


def watch_lost() -> None:
    """Install the filter on wgpu's logger (after ``import wgpu``, which sets its logger class)."""
    global _watcher
    if _watcher is None:
        _watcher = _LostWatcher()
        logging.getLogger("wgpu").addFilter(_watcher)


def is_device_lost(exc: BaseException) -> bool:
    """Whether a wgpu exception says the device is gone."""
    msg = str(exc).lower()
    return "device is lost" in msg or "device lost" in msg or "devicelost" in msg


def adapters() -> list[Any]:
    """Every wgpu adapter, best first (discrete, integrated, ..., CPU; native APIs before GL)."""
    import wgpu
    wgpu_cache.prime_ffi_types()       # the first call of each wgpu function costs 10-20 ms otherwise
    found = wgpu.gpu.enumerate_adapters_sync()

    def rank(a: Any) -> tuple[int, int]:
        info = a.info
        return (_TYPE_RANK.get(str(info.get("adapter_type")), 4),
                _BACKEND_RANK.get(str(info.get("backend_type")), 1))
    return sorted(found, key=rank)


def is_real_gpu(adapter: Any) -> bool:
    return str(adapter.info.get("adapter_type")) in ("DiscreteGPU", "IntegratedGPU")


class Guard:
    """``WgpuProvider._guard``'s context: a class, not a generator (it wraps every dispatch)."""

    __slots__ = ("provider",)

    def __init__(self, provider: Any) -> None:
        self.provider = provider

    def __enter__(self) -> None:
        return None

    def __exit__(self, typ: Any, exc: Any, tb: Any) -> None:
        if exc is None or isinstance(exc, (DeviceLostError, OutOfMemoryError)) or not isinstance(exc, Exception):
            return
        p = self.provider
        if is_device_lost(exc) or p.lost is not None:
            raise p._mark_lost(exc) from exc


# Storage buffers one kernel may bind, whatever the adapter reports: NVIDIA's Vulkan driver reports no limit
# per shader stage (2^32 - 1), while a bind group holds at most ``max-bindings-per-bind-group`` (1000 in wgpu),
# so a fused kernel of 1001 inputs failed validation (SciPy's ``stats.power`` with ``batch=1``: a
# thousand p-values concatenated); and a shader of hundreds of fused cones takes its compiler seconds.
MAX_KERNEL_BINDINGS = 256


def storage_buffer_limit(limits: dict[str, int]) -> int:
    """Storage buffers a kernel may bind on a device with these limits (wgpu's names): the per-stage limit,
    at most one bind group's bindings and ``MAX_KERNEL_BINDINGS``.

    >>> storage_buffer_limit({"max-storage-buffers-per-shader-stage": 2**32 - 1, "max-bindings-per-bind-group": 1000})
    256
    """
    stage = int(limits.get("max-storage-buffers-per-shader-stage", 8))
    return min(stage, int(limits.get("max-bindings-per-bind-group", 1000)), MAX_KERNEL_BINDINGS)
