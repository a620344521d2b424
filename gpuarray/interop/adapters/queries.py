"""Questions answered without a kernel (shape, dtype, memory) and host output by design (printing, saving)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...array_object.aliasing import may_share_memory, shares_memory
from ...array_object.array import GpuArray
from ..host import _ToHost
from ..operands import _axes
from ..registry import HOST_BY_DESIGN, register, register_function

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays


@register("shape")
def _shape(p: dict) -> tuple[int, ...]:
    return tuple(p["a"].shape)


@register("ndim")
def _ndim_fn(p: dict) -> int:
    return int(p["a"].ndim)


@register("size")
def _size(p: dict) -> int:
    a, axis = p["a"], p["axis"]
    return int(a.size) if axis is None else int(a.shape[_axes(axis, a.ndim)[0]])


@register("iscomplexobj")
def _iscomplexobj(p: dict) -> bool:
    return bool(p["x"].dtype.kind == "c")


@register("isrealobj")
def _isrealobj(p: dict) -> bool:
    return bool(p["x"].dtype.kind != "c")


def _plain(x: Any) -> Any:
    return x.dtype if isinstance(x, GpuArray) else x


@register("result_type")
def _result_type(p: dict) -> np.dtype:
    return np.result_type(*(_plain(x) for x in p["arrays_and_dtypes"]))


@register("can_cast")
def _can_cast(p: dict) -> bool:
    return bool(np.can_cast(_plain(p["from_"]), _plain(p["to"]), casting=p["casting"]))


@register(np.common_type)
def _common_type(p: dict) -> Any:
    return np.common_type(*(np.zeros(0, a.dtype) if isinstance(a, GpuArray) else a for a in p["arrays"]))


@register(np.min_scalar_type)
def _min_scalar_type(p: dict) -> Any:
    a = p["a"]
    return a.dtype if a.ndim else np.min_scalar_type(a.get())


@register(np.shares_memory)
def _shares_memory(p: dict) -> Any:
    """Exact, as NumPy's: the arrays' places in a shared base (a view and its base, two views of one base)."""
    a, b = p["a"], p["b"]
    if not (isinstance(a, GpuArray) and isinstance(b, GpuArray)):
        return False              # a GpuArray never shares memory with a host array
    return shares_memory(a, b)


@register(np.may_share_memory)
def _may_share_memory(p: dict) -> Any:
    """NumPy's bounds test: whether the ranges of the base that the two arrays span overlap."""
    a, b = p["a"], p["b"]
    if not (isinstance(a, GpuArray) and isinstance(b, GpuArray)):
        return False
    return may_share_memory(a, b)


# ============================================================ host output by design
def _host_output(func: Any) -> None:
    def impl(*args: Any, **kwargs: Any) -> Any:
        conv = _ToHost()
        return func(*(conv(a) for a in args), **{k: conv(v) for k, v in kwargs.items()})
    register_function(func, impl)
    HOST_BY_DESIGN.add(func)


for _f in (np.array2string, np.array_repr, np.array_str, np.save, np.savez, np.savez_compressed, np.savetxt):
    _host_output(_f)
