"""``numpy.apply_along_axis`` and ``numpy.apply_over_axes`` on GpuArrays: NumPy's algorithms, with device
slices and device results.

>>> import numpy as np, gpuarray as xp
>>> g = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device="cpu")
>>> r = np.apply_along_axis(lambda v: v * 2, 0, g)
>>> type(r).__name__, r.tolist()
('GpuArray', [[2.0, 4.0], [6.0, 8.0]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ...array_object.array import GpuArray
from ...namespace import manipulation as _m
from ..host import _FALLBACK
from ..operands import _as_array, _cast, _int_index
from ..registry import register


def _result(r: Any, dt: np.dtype, shape: tuple[int, ...], dev: Any) -> GpuArray:
    """One slice's result as it is stored into NumPy's buffer: cast to the first result's dtype,
    broadcast to its shape (NumPy's ValueError otherwise)."""
    g = _cast(_as_array(r, dev), dt)
    if g.shape != shape:
        try:
            g = _m.broadcast_to(g, shape)
        except ValueError:
            raise ValueError(f"could not broadcast input array from shape {g.shape} into shape {shape}") from None
    return g


@register(np.apply_along_axis)
def _apply_along_axis(p: dict) -> Any:
    """``func1d`` is called once per 1-D slice along ``axis`` (a Python loop, as NumPy's), each slice a
    GpuArray view; the results are stacked on the device in NumPy's layout (the shape and dtype
    of the first call's result)."""
    func1d, arr, args, kwargs = p["func1d"], p["arr"], p.get("args", ()), p.get("kwargs", {})
    if not isinstance(arr, GpuArray):
        return _FALLBACK
    nd = arr.ndim
    axis = normalize_axis_index(_int_index(p["axis"]), nd)
    dims = list(range(nd))
    view = _m.permute_dims(arr, tuple(dims[:axis] + dims[axis + 1:] + [axis]))
    outer = view.shape[:-1]
    inds = iter(np.ndindex(outer))
    try:
        ind0 = next(inds)
    except StopIteration:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0") from None
    first = func1d(view[ind0], *args, **kwargs)
    res = first if isinstance(first, GpuArray) else np.asanyarray(first)
    dev = arr.device
    results = [_as_array(res, dev)]
    dt, shape = results[0].dtype, results[0].shape
    for ind in inds:
        results.append(_result(func1d(view[ind], *args, **kwargs), dt, shape, dev))
    buff = _m.reshape(_m.stack(results), outer + shape)
    bd = list(range(buff.ndim))
    permute = bd[0:axis] + bd[buff.ndim - len(shape):buff.ndim] + bd[axis:buff.ndim - len(shape)]
    return _m.permute_dims(buff, tuple(permute))


@register(np.apply_over_axes)
def _apply_over_axes(p: dict) -> Any:
    """``func(a, axis)`` for each axis in turn, as NumPy's: a result with one dimension less gets it
    back (``expand_dims``); anything else is NumPy's ValueError."""
    func, a, axes = p["func"], p["a"], p["axes"]
    if not isinstance(a, GpuArray):
        return _FALLBACK
    val, n = a, a.ndim
    for axis in (axes,) if np.ndim(axes) == 0 else tuple(axes):
        ax = _int_index(axis)
        ax = n + ax if ax < 0 else ax
        res = func(val, ax)
        if not isinstance(res, GpuArray):
            res = _as_array(res, a.device)
        if res.ndim != val.ndim:
            res = _m.expand_dims(res, axis=ax)
            if res.ndim != val.ndim:
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val
