"""NumPy functions beyond the Array API that the ecosystem calls on our arrays, on their device.

- ``pad`` (also ``numpy.pad`` on a GpuArray): ``constant`` and ``empty`` padding
  are a concatenation; ``edge``, ``wrap``, ``reflect`` and ``symmetric`` are a
  gather through NumPy's own index map. Both fuse into the consumer's kernel.
- ``gpuarray.lib.stride_tricks.sliding_window_view``: a strided view, no copy.
  xarray's ``rolling`` calls ``xp.pad`` and ``xp.lib.stride_tricks.sliding_window_view``.
- ``numpy.take`` and the NaN-ignoring reductions (``numpy.nansum``, ``nanmean``,
  ``nanmax`` ...; xarray's default ``skipna``, dask's ``nan*``) are registered
  as ``__array_function__`` implementations: a ``where(isnan(x), ...)`` folded
  into the reduction's prologue.

Arguments these do not cover (``out=``, ``where=``, other pad modes ...) return
``_FALLBACK``, and the call runs on the host like any other NumPy function.

>>> import numpy as np, gpuarray as xp
>>> x = xp.asarray([1.0, np.nan, 3.0], device="cpu")
>>> float(np.nanmean(x)), xp.pad(x, 1, mode="edge").tolist()[:2]
(2.0, [1.0, 1.0])
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..array_object.aliasing import derive
from ..array_object.array import GpuArray, expect_array
from ..graph import views
from ..graph.node import Node
from ..graph.shapes import normalize_axis
from ..namespace.creation import asarray, full
from ..namespace.elementwise import FUNCTIONS as _EW
from ..namespace.indexing import take
from ..namespace.manipulation import concat, reshape
from ..namespace.searching import argmax, argmin
from ..namespace.statistical import all as _all
from ..namespace.statistical import any as _any
from ..namespace.statistical import cumulative_prod, cumulative_sum, max, min, prod, sum  # noqa: A004
from . import operands, registry
from .host import _FALLBACK

_isnan, _where, _logical_not = _EW["isnan"], _EW["where"], _EW["logical_not"]


# ============================================================ pad
_INDEX_MODES = ("edge", "wrap", "reflect", "symmetric")


def _pad_width(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    pw = np.asarray(pad_width)
    if pw.dtype.kind not in "iu":
        raise TypeError("pad: `pad_width` must be of integral type.")
    pairs = np.broadcast_to(pw, (ndim, 2)).tolist()
    if any(b < 0 or a < 0 for b, a in pairs):
        raise ValueError("pad: index can't contain negative values")
    return [(int(b), int(a)) for b, a in pairs]


def pad(x: GpuArray, pad_width: Any, mode: str = "constant", **kwargs: Any) -> GpuArray:
    """``numpy.pad`` for the modes ``constant``, ``empty``, ``edge``, ``wrap``, ``reflect``
    and ``symmetric`` (``reflect_type="even"``), on ``x``'s device.

    >>> import gpuarray as xp
    >>> xp.pad(xp.asarray([1, 2, 3], device="cpu"), (2, 1), constant_values=9).tolist()
    [9, 9, 1, 2, 3, 9]
    """
    out = _pad(x, pad_width, mode, **kwargs)
    if out is _FALLBACK:
        raise NotImplementedError(f"pad: mode={mode!r} with {sorted(kwargs)} is not implemented in gpuarray; "
                                  "use numpy.pad(x, ...) to run it on the host")
    return out


def _pad(x: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> Any:
    if not isinstance(x, GpuArray) or not isinstance(mode, str):
        return _FALLBACK
    pairs = _pad_width(pad_width, x.ndim)
    if mode in ("constant", "empty"):
        values = kwargs.pop("constant_values", 0)
        if kwargs:
            return _FALLBACK
        cv = np.asarray(values)
        if isinstance(values, GpuArray) or cv.dtype.kind not in "biuf":
            return _FALLBACK
        vals = np.broadcast_to(cv, (x.ndim, 2)).astype(x.dtype).tolist()
        for ax, ((before, after), (vb, va)) in enumerate(zip(pairs, vals)):
            if before == after == 0:
                continue
            parts = []
            for n, v in ((before, vb), (None, None), (after, va)):
                if n is None:
                    parts.append(x)
                elif n:
                    parts.append(full(x.shape[:ax] + (n,) + x.shape[ax + 1:], v,  # type: ignore[arg-type]
                                      dtype=x.dtype, device=x.device))
            x = concat(parts, axis=ax)
        return x
    if mode in _INDEX_MODES and set(kwargs) <= {"reflect_type"} and kwargs.get("reflect_type", "even") == "even":
        for ax, (before, after) in enumerate(pairs):        # a gather through NumPy's own index map
            if before == after == 0:
                continue
            if x.shape[ax] == 0:
                return _FALLBACK               # NumPy raises or special-cases these
            idx = np.pad(np.arange(x.shape[ax]), (before, after), mode=mode)  # type: ignore[call-overload]
            x = take(x, asarray(idx, device=x.device), axis=ax)
        return x
    return _FALLBACK


# ============================================================ sliding_window_view
def sliding_window_view(x: GpuArray, window_shape: int | tuple[int, ...], axis: int | tuple[int, ...] | None = None,
                        *, subok: bool = False, writeable: bool = False) -> GpuArray:
    """``numpy.lib.stride_tricks.sliding_window_view``: a strided view, no data is copied.

    >>> import gpuarray as xp
    >>> from gpuarray.lib.stride_tricks import sliding_window_view
    >>> sliding_window_view(xp.arange(5, device="cpu"), 3).tolist()
    [[0, 1, 2], [1, 2, 3], [2, 3, 4]]
    """
    expect_array(x, "sliding_window_view")
    if writeable:
        raise ValueError("sliding_window_view: GpuArray views are never writeable; use writeable=False")
    wshape: tuple[int, ...] = (operator.index(window_shape),) if isinstance(window_shape, (int, np.integer)) \
        else tuple(operator.index(w) for w in window_shape)
    if any(w < 0 for w in wshape):
        raise ValueError("`window_shape` cannot contain negative values")
    if axis is None:
        if len(wshape) != x.ndim:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all dimensions of `x`; "
                             f"got {len(wshape)} window_shape elements and `x.ndim` is {x.ndim}.")
        axes = tuple(range(x.ndim))
    else:
        items = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(normalize_axis(operator.index(a), x.ndim) for a in items)
        if len(wshape) != len(axes):
            raise ValueError(f"Must provide matching length window_shape and axis; got {len(wshape)} "
                             f"window_shape elements and {len(axes)} axes elements.")
    for ax, w in zip(axes, wshape):
        if x.shape[ax] < w:
            raise ValueError("window shape cannot be larger than input array shape")

    def windows(node: Node) -> Node:
        base, shape, strides, offset = views.strided_parts(node)
        out_shape = list(shape)
        for ax, w in zip(axes, wshape):
            out_shape[ax] -= w - 1
        out_strides = tuple(strides) + tuple(strides[ax] for ax in axes)
        return views.strided_view(base, tuple(out_shape) + wshape, out_strides, offset)
    return derive(x, windows, writeable=False)


def _sliding_window_view(x: Any, window_shape: Any, axis: Any = None, *, subok: bool = False,
                         writeable: bool = False) -> Any:
    if not isinstance(x, GpuArray) or writeable:
        return _FALLBACK
    return sliding_window_view(x, window_shape, axis)


# ============================================================ numpy.take
def _take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    if not isinstance(a, GpuArray) or out is not None or mode != "raise":
        return _FALLBACK
    if isinstance(indices, GpuArray) and indices.dtype.kind == "b":
        indices = indices.astype(a.device.default_int)      # NumPy casts bools to positions 0 and 1
    if not isinstance(indices, GpuArray):
        host = np.asarray(indices)
        if host.dtype.kind == "b":
            host = indices = host.astype(np.intp)
        if host.dtype.kind not in "iu":
            return _FALLBACK
        if host.ndim == 0:
            flat = a if axis is not None else reshape(a, (-1,))
            ax = 0 if axis is None else normalize_axis(operator.index(axis), a.ndim)
            key = (slice(None),) * ax + (int(host),)
            return flat[key]
    return take(a, indices, axis=None if axis is None else operator.index(axis))


# ============================================================ NaN-ignoring reductions
def _numpy_dtype(np_func: Callable[..., Any], a: GpuArray, **kw: Any) -> np.dtype | None:
    """The dtype NumPy gives ``np_func`` on ``a``'s dtype, as gpuarray computes it on ``a``'s device."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(np_func(np.ones((1,) * a.ndim, a.dtype), **kw)).dtype
    return operands._map_dtype(want, a.device)


def _axis(axis: Any) -> Any:
    return axis if axis is None or isinstance(axis, (int, np.integer)) else tuple(axis)


def _nan_reduction(np_func: Callable[..., Any], kind: str) -> Callable[[dict], Any]:
    def impl(p: dict) -> Any:
        a = p["a"]
        if (not isinstance(a, GpuArray) or a.size == 0 or a.ndim == 0 and kind in ("mean", "var", "std")
                or operands._given(p.get("out"), p.get("initial"), p.get("where"), p.get("mean"))
                or a.dtype.kind == "c" or a.dtype.kind == "b" and kind in ("max", "min")):
            return _FALLBACK            # (complex values: NumPy's NaN rules and order; bools: its max / min)
        kd = operands._flag(p.get("keepdims", False))
        ax = _axis(p["axis"])
        probe: dict[str, Any] = {"axis": p["axis"], "keepdims": kd}
        if operands._given(p.get("dtype")):
            probe["dtype"] = p["dtype"]
        dt = _numpy_dtype(np_func, a, **probe)
        if dt is None:
            return _FALLBACK
        nan = _isnan(a) if a.dtype.kind == "f" else None
        if kind in ("sum", "prod"):
            x = a if nan is None else _where(nan, 0 if kind == "sum" else 1, a)
            return (sum if kind == "sum" else prod)(x.astype(dt), axis=ax, dtype=dt, keepdims=kd)
        if kind in ("max", "min"):
            if nan is None:
                return (max if kind == "max" else min)(a, axis=ax, keepdims=kd)
            fill = -np.inf if kind == "max" else np.inf
            r = (max if kind == "max" else min)(_where(nan, fill, a), axis=ax, keepdims=kd)
            return _where(_all(nan, axis=ax, keepdims=kd), np.nan, r)      # all-NaN slices give NaN
        x = a.astype(dt)
        if nan is None:
            n = float(np.prod([a.shape[i] for i in _axes(ax, a.ndim)]))
            valid, count = x, full((), n, dtype=dt, device=a.device)
        else:
            valid, count = _where(nan, 0, x), sum(_logical_not(nan).astype(dt), axis=ax, keepdims=True)
        mean = sum(valid, axis=ax, keepdims=True) / count
        if kind == "mean":
            return mean if kd else _squeeze(mean, ax, a.ndim)
        ddof = p["correction"] if operands._given(p.get("correction")) else p.get("ddof", 0)
        dev = x - mean
        dev = dev if nan is None else _where(nan, 0, dev)
        dof = count - ddof
        var = _where(dof > 0, sum(dev * dev, axis=ax, keepdims=True) / dof, np.nan)
        r = var if kind == "var" else _EW["sqrt"](var)
        return r if kd else _squeeze(r, ax, a.ndim)
    return impl


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    items = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(normalize_axis(operator.index(i), ndim) for i in items)


def _squeeze(r: GpuArray, axis: Any, ndim: int) -> GpuArray:
    drop = set(_axes(axis, ndim))
    return reshape(r, tuple(s for i, s in enumerate(r.shape) if i not in drop))


def _nan_arg(kind: str) -> Callable[[dict], Any]:
    def impl(p: dict) -> Any:
        a, axis = p["a"], p["axis"]
        if not isinstance(a, GpuArray) or p["out"] is not None or a.size == 0 or a.dtype.kind == "c":
            return _FALLBACK            # (complex values: NumPy's order, on the host)
        kd = operands._flag(p.get("keepdims", False))
        fn = argmax if kind == "max" else argmin
        if a.dtype.kind != "f":
            return fn(a, axis=axis, keepdims=kd)
        nan = _isnan(a)
        if bool(_any(_all(nan, axis=axis))):        # NumPy raises too; this reads one bool back
            raise ValueError("All-NaN slice encountered")
        return fn(_where(nan, -np.inf if kind == "max" else np.inf, a), axis=axis, keepdims=kd)
    return impl


def _nan_cumulative(kind: str) -> Callable[[dict], Any]:
    np_func = np.nancumsum if kind == "sum" else np.nancumprod

    def impl(p: dict) -> Any:
        a, axis = p["a"], p["axis"]
        if not isinstance(a, GpuArray) or p["out"] is not None or a.size == 0:
            return _FALLBACK
        if axis is None:
            a, axis = reshape(a, (-1,)), 0
        dt = _numpy_dtype(np_func, a, axis=axis, dtype=p["dtype"])
        if dt is None:
            return _FALLBACK
        x = _where(_isnan(a), 0 if kind == "sum" else 1, a) if a.dtype.kind == "f" else a
        fn = cumulative_sum if kind == "sum" else cumulative_prod
        return fn(x.astype(dt), axis=operator.index(axis), dtype=dt)
    return impl


def _register() -> None:
    reg = registry.register_function
    reg(np.pad, _pad)
    reg(np.lib.stride_tricks.sliding_window_view, _sliding_window_view)
    reg(np.take, _take)
    bound: list[tuple[Any, Callable[[dict], Any]]] = [
        (getattr(np, f"nan{k}"), _nan_reduction(getattr(np, f"nan{k}"), k))
        for k in ("sum", "prod", "max", "min", "mean", "var", "std")]
    bound += [(np.nanargmax, _nan_arg("max")), (np.nanargmin, _nan_arg("min")),
              (np.nancumsum, _nan_cumulative("sum")), (np.nancumprod, _nan_cumulative("prod"))]
    for f, impl in bound:
        reg(f, registry._with_params(f, impl))


_register()

__all__ = ["pad", "sliding_window_view"]
