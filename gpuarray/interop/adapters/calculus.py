"""Differences, integrals and polynomials: ``diff``, ``ediff1d``, ``gradient``, ``trapezoid``, ``polyval``,
``unwrap``."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ...array_object.array import GpuArray
from ...core import dtypes as _dtypes
from ...namespace import manipulation as _m
from ...namespace.utility import diff
from ..host import _FALLBACK, _NOVALUE
from ..operands import _as_array, _cast, _device, _int_index, _map_dtype, _np_array
from ..registry import register, register_array

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays


@register_array(np.diff, arg="a")
def _diff(a: GpuArray, p: dict) -> Any:
    n, axis = _int_index(p["n"]), p["axis"]
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    if n == 0:
        return a
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = normalize_axis_index(_int_index(axis), a.ndim)
    pieces = {}
    for k in ("prepend", "append"):
        v = p[k]
        if v is _NOVALUE:
            continue
        v = _np_array(v)              # NumPy: asanyarray, so scalars are strong (int64, float64)
        if v.ndim == 0:
            shape = list(a.shape)
            shape[ax] = 1
            v = np.broadcast_to(v, tuple(shape)) if isinstance(v, np.ndarray) else _m.broadcast_to(v, tuple(shape))
        pieces[k] = _as_array(v, a.device)
    if pieces:
        parts = [pieces.get("prepend"), a, pieces.get("append")]
        a = _np.concatenate([x for x in parts if x is not None], axis=ax)
    if a.dtype == _dtypes.bool_:
        return diff(a, axis=ax, n=n)
    hi = (slice(None),) * ax + (slice(1, None),)
    lo = (slice(None),) * ax + (slice(None, -1),)
    for _ in range(n):
        a = _np.subtract(a[hi], a[lo])
    return a


@register("trapezoid")
def _trapezoid(p: dict) -> Any:
    y, x, dx, axis = p["y"], p["x"], p["dx"], p["axis"]
    dev = _device(y, x)
    y = _as_array(y, dev)
    nd = y.ndim
    ax = normalize_axis_index(_int_index(axis), nd)
    hi = (slice(None),) * ax + (slice(1, None),)
    lo = (slice(None),) * ax + (slice(None, -1),)
    if x is None:
        d: Any = dx
    else:
        xa = _as_array(x, dev)
        if xa.ndim == 1:
            d = _np.diff(xa)
            d = _m.reshape(d, (1,) * ax + (d.shape[0],) + (1,) * (nd - ax - 1))
        else:
            d = _np.diff(xa, axis=ax)
    return _np.add.reduce(_np.divide(_np.multiply(d, _np.add(y[hi], y[lo])), 2.0), axis=ax)


@register(np.polyval)
def _polyval(p: dict) -> Any:
    pc, x = p["p"], p["x"]
    if isinstance(pc, np.poly1d) or isinstance(x, np.poly1d):
        return _FALLBACK
    dev = _device(pc, x)
    pa = pc if isinstance(pc, GpuArray) else np.asarray(pc)
    if pa.ndim != 1:
        return _FALLBACK                # NumPy's error (or its reading of a 2-D p)
    xa = _as_array(x, dev)
    y = _np.zeros_like(xa)
    for i in range(pa.shape[0]):
        y = _np.add(_np.multiply(y, xa), pa[i])
    return y


@register_array(np.gradient, arg="f", dtypes=_dtypes.NUMERIC)
def _gradient(f: GpuArray, p: dict) -> Any:
    """Uniform spacing (scalar or no ``varargs``) with ``edge_order`` 1 or 2, NumPy's formulas."""
    varargs, axis, edge_order = p["varargs"], p["axis"], p["edge_order"]
    n = f.ndim
    axes = tuple(range(n)) if axis is None else normalize_axis_tuple(axis, n)
    if len(varargs) == 0:
        dx = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        dx = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes) and all(np.ndim(v) == 0 for v in varargs):
        dx = list(varargs)
    else:
        return _FALLBACK              # coordinate arrays
    if any(isinstance(d, GpuArray) for d in dx):
        return _FALLBACK
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    otype = f.dtype if f.dtype.kind in "fc" else _map_dtype(_dtypes.float64, f.device)
    if otype is None:
        return _FALLBACK
    f = _cast(f, otype)
    outs = []
    for ax, h in zip(axes, dx):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")
        h = float(h)

        def s(a: Any, b: Any = None, pre: tuple = (slice(None),) * ax) -> Any:
            return f[pre + (slice(a, b),)]
        mid = _np.divide(_np.subtract(s(2, None), s(None, -2)), 2.0 * h)
        if edge_order == 1:
            first = _np.divide(_np.subtract(s(1, 2), s(0, 1)), h)
            last = _np.divide(_np.subtract(s(-1, None), s(-2, -1)), h)
        else:
            first = _np.add(_np.add(_np.multiply(-1.5 / h, s(0, 1)), _np.multiply(2.0 / h, s(1, 2))),
                           _np.multiply(-0.5 / h, s(2, 3)))
            last = _np.add(_np.add(_np.multiply(0.5 / h, s(-3, -2)), _np.multiply(-2.0 / h, s(-2, -1))),
                          _np.multiply(1.5 / h, s(-1, None)))
        outs.append(_cast(_m.concat([first, mid, last], axis=ax), otype))
    return outs[0] if len(outs) == 1 else tuple(outs)


@register_array(np.ediff1d, arg="ary")
def _ediff1d(ary: GpuArray, p: dict) -> Any:
    a = _m.reshape(ary, (-1,))
    dt = a.dtype
    parts: list[Any] = [_np.subtract(a[1:], a[:-1])]
    for k, front in (("to_begin", True), ("to_end", False)):
        v = p[k]
        if v is None:
            continue
        va = _np_array(v)
        if not np.can_cast(va.dtype, dt, casting="same_kind"):
            raise TypeError(f"dtype of `{k}` must be compatible with input `ary` under the `same_kind` rule.")
        piece = _cast(_m.reshape(_as_array(va, a.device), (-1,)), dt)
        parts.insert(0, piece) if front else parts.append(piece)
    return _m.concat([_cast(x, dt) for x in parts], axis=0) if len(parts) > 1 else _cast(parts[0], dt)


@register_array(np.unwrap, arg="p", real=True, host=("discont", "period"))
def _unwrap(p_: GpuArray, p: dict) -> Any:
    """NumPy's ``unwrap`` step by step on the device: the jumps ``diff(p)`` brought into one period,
    their corrections summed along ``axis`` (a scan) and added after the first element."""
    period, discont = p["period"], p["discont"]
    if p_.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = normalize_axis_index(_int_index(p["axis"]), p_.ndim)
    dd = _np.diff(p_, axis=ax)
    if discont is None:
        discont = period / 2
    dt = np.result_type(np.zeros((), p_.dtype), period)
    mdt = _map_dtype(dt, p_.device)
    if mdt is None:
        return _FALLBACK
    if np.issubdtype(dt, np.integer):
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    ddmod = _np.mod(dd - (-high), period) + (-high)
    if ambiguous:
        ddmod = _np.where((ddmod == -high) & (dd > 0), high, ddmod)
    if p_.shape[ax] <= 1:
        return _cast(p_, mdt)
    correct = _np.where(_np.abs(dd) < discont, 0, ddmod - dd)
    head = p_[(slice(None),) * ax + (slice(0, 1),)]
    rest = p_[(slice(None),) * ax + (slice(1, None),)] + _np.cumsum(correct, axis=ax)
    return _m.concat([_cast(head, mdt), _cast(rest, mdt)], axis=ax)
