"""Conversions to and from host memory: ``get()`` (CuPy's) and DLPack (``__dlpack__``, ``from_dlpack``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..array_object.array import GpuArray
from ..core import dtypes as _dtypes
from ..graph.node import leaf
from ..namespace.creation import asarray
from ..runtime.devices import Device, as_device
from .host import _supported

KDL_CPU = 1
KDL_WEBGPU = 15


def get(self: Any, stream: Any = None, order: str = "C", out: np.ndarray | None = None,
        blocking: bool = True) -> np.ndarray:
    """A host copy as a NumPy array (CuPy's ``get``); ``out`` receives it in place.

    >>> import gpuarray as xp
    >>> xp.asarray([1, 2], device="cpu").get()
    array([1, 2])
    """
    if stream is not None:
        raise ValueError("get: streams are not supported; pass stream=None")
    host = self._host()
    if out is None:
        return np.array(host, order=order, copy=True)  # type: ignore[call-overload]
    if not isinstance(out, np.ndarray):
        raise TypeError(f"get: out must be a numpy.ndarray; got {type(out).__name__}")
    if out.shape != self.shape:
        raise ValueError(f"get: out has shape {out.shape}; expected {self.shape}")
    if out.dtype != self.dtype:
        raise TypeError(f"get: out has dtype {out.dtype}; expected {self.dtype}")
    np.copyto(out, host)
    return out


def dlpack_device(self: Any) -> tuple[int, int]:
    """``__dlpack_device__``: (kDLCPU, 0) on the cpu device, (kDLWebGPU, N) on wgpu:N."""
    dev = self.device
    return (KDL_CPU, 0) if dev.kind == "cpu" else (KDL_WEBGPU, dev.index)


def dlpack(self: Any, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
           copy: bool | None = None) -> Any:
    """``__dlpack__``: export for ``np.from_dlpack`` and other consumers.

    The cpu device exports its (read-only) host array without a copy. A wgpu
    array can only be exported as a host copy: ``copy=True`` or
    ``dl_device=(1, 0)`` (kDLCPU); no DLPack consumer reads WebGPU buffers.
    """
    kw: dict[str, Any] = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                              ("dl_device", dl_device), ("copy", copy)) if v is not None}
    if self.device.kind != "cpu":
        to_cpu = dl_device is not None and tuple(dl_device) == (KDL_CPU, 0)
        if dl_device is not None and not to_cpu:
            raise BufferError(f"__dlpack__: gpuarray cannot export {self.device.name} memory to DLPack device "
                              f"{tuple(dl_device)}: no DLPack consumer reads WebGPU buffers. Export a host copy "
                              "with dl_device=(1, 0) (kDLCPU) or copy=True, or use .get()")
        if copy is False:
            raise BufferError(f"__dlpack__: an array on {self.device.name} can only be exported as a copy on "
                              "the host; copy=False is impossible (use copy=True or dl_device=(1, 0))")
        if not to_cpu and copy is not True:
            raise BufferError(f"__dlpack__: an array on {self.device.name} cannot be shared through DLPack "
                              "without a copy; ask for a host copy with copy=True or dl_device=(1, 0) "
                              "(np.from_dlpack(x, device='cpu')), or use .get()")
        kw["copy"] = True
        kw["dl_device"] = (KDL_CPU, 0)
    elif max_version is None and copy is not False:
        # a legacy (unversioned) consumer cannot be told the data is read-only: give it a copy
        return np.array(self._host()).__dlpack__(**kw)
    return self._host().__dlpack__(**kw)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """A GpuArray from any DLPack producer (NumPy, PyTorch, another GpuArray ...).

    ``device=None`` keeps host data on the ``cpu`` device (as the Array API asks);
    ``copy=False`` shares memory, which only the ``cpu`` device can do.

    >>> import numpy as np, gpuarray as xp
    >>> xp.from_dlpack(np.arange(3), device="cpu").tolist()
    [0, 1, 2]
    """
    GA = GpuArray
    if isinstance(x, GA):
        dev = x.device if device is None else as_device(device)
        if copy is False and dev != x.device:
            raise BufferError(f"from_dlpack: copy=False, but moving from {x.device.name} to {dev.name} "
                              "needs a copy")
        return asarray(x, device=dev, copy=copy)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    dev = Device("cpu") if device is None else as_device(device)
    kw: dict[str, Any] = {"device": "cpu"} if copy is not False else {}
    if copy is not None:
        kw["copy"] = copy
    host = np.from_dlpack(x, **kw)
    if not _supported(host.dtype, dev):
        raise TypeError(f"from_dlpack: dtype {host.dtype} is not supported on {dev.name}; "
                        f"expected one of {_dtypes.dtype_names()}")
    if copy is False:
        if dev.kind != "cpu" or not host.flags.c_contiguous:
            what = "a non-contiguous array" if dev.kind == "cpu" else f"moving to {dev.name}"
            raise BufferError(f"from_dlpack: copy=False, but {what} needs a copy")
        return GA(leaf(host.view(), dev))
    return asarray(np.array(host, copy=True), device=dev)
