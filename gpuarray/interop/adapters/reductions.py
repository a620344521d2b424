"""Reductions, scans and statistics: the namespace function of that name (once gpuarray has it), with
NumPy's dtype rules and its ``out=``, ``where=``, ``initial=`` and ``ddof=``."""

from __future__ import annotations

import builtins
import warnings
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ...array_object.array import GpuArray
from ...array_object.elementwise import apply
from ...core import dtypes as _dtypes
from ...core.ops import OPS
from ...graph.shapes import broadcast_shapes
from ...namespace import manipulation as _m
from ...namespace.creation import full, zeros
from ...namespace.quantiles import median_selected, sorted_slices
from ...namespace.searching import count_nonzero as _count_nonzero
from ...namespace.selection import can_select
from ...namespace.statistical import sum as xsum
from ..complex_order import complex_arg, complex_extreme
from ..host import _FALLBACK, _NOVALUE, _xp
from ..operands import (
    _as_array,
    _axes,
    _cast,
    _device,
    _flag,
    _given,
    _into_out,
    _map_dtype,
    _mask,
    _probe_dtype,
    _py_scalar,
    _reshape_order,
    _via,
)
from ..registry import register, register_array

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays


def _where_mask(where: Any, a: Any) -> Any:
    """``where=`` as a bool GpuArray broadcast to ``a``'s shape; None when it does not broadcast (NumPy raises)."""
    m = _mask(where, a.device)
    try:
        if broadcast_shapes(m.shape, a.shape) != a.shape:
            return None
    except ValueError:
        return None
    return _m.broadcast_to(m, a.shape)


_IDENTITY = {"sum": 0, "prod": 1, "all": True, "any": False}
# the result dtype NumPy's own function gave for a one-element stand-in, by its arguments: running
# it (np.std is Python) cost about a hundred Python calls per ``x.std(axis=0)``
_PROBED: dict[tuple, np.dtype] = {}


def _reduction(np_name: str, xp_name: str, cast_input: bool = False) -> None:
    """``numpy.<np_name>`` with NumPy's dtype rules, ``out``, ``where``, ``initial`` and ``ddof``, on the device:
    ``where`` masks the operand with the reduction's identity (``initial`` for max/min) inside the
    reduction's prologue, ``initial`` is combined with the result, ``out`` receives a cast copy."""
    npf = getattr(np, np_name)
    ufunc_name = {"sum": "add", "prod": "multiply", "max": "maximum", "amax": "maximum", "min": "minimum",
                  "amin": "minimum", "all": "logical_and", "any": "logical_or"}.get(np_name, np_name)

    @register_array(np_name, arg="a")
    def impl(a: GpuArray, p: dict) -> Any:
        out, where, initial = p.get("out"), p.get("where", True), p.get("initial", _NOVALUE)
        fn = _xp(xp_name)
        if fn is None or _given(p.get("mean")):
            return _FALLBACK
        axis, keepdims = p["axis"], _flag(p.get("keepdims", False))
        masked = where is not True and where is not _NOVALUE
        if xp_name in ("max", "min") and a.dtype.kind in "cb":
            if masked or _given(initial) or a.size == 0:
                return _FALLBACK        # its errors and identities
            if a.dtype.kind == "c":     # the element at NumPy's complex argmax / argmin
                r = complex_extreme(a, xp_name, axis, keepdims)
                return r if out is None else _into_out(r, out, ufunc_name)
            r = _xp("any" if xp_name == "max" else "all")(a, axis=axis, keepdims=keepdims)    # of bools
            return r if out is None else _into_out(r, out, ufunc_name)
        probe_kw = {k: p[k] for k in ("dtype", "ddof", "correction") if _given(p.get(k))}
        if _given(initial):
            probe_kw["initial"] = initial
        if masked:
            probe_kw["where"] = np.ones((1,) * a.ndim, bool)
        try:
            key: Any = (np_name, a.dtype, a.ndim, axis, keepdims, tuple(sorted(probe_kw.items())))
            want = _PROBED.get(key)
        except TypeError:               # an unhashable argument (a list axis, an array initial)
            key = want = None
        if want is None:
            with np.errstate(all="ignore"), warnings.catch_warnings():   # NumPy checks the arguments, gives the dtype
                warnings.simplefilter("ignore")
                want = np.asarray(npf(np.zeros((1,) * a.ndim, a.dtype), axis=axis, keepdims=keepdims,
                                      **probe_kw)).dtype
            if key is not None:
                if len(_PROBED) >= 1024:
                    _PROBED.clear()
                _PROBED[key] = want
        mw = _map_dtype(want, a.device)
        m = _where_mask(where, a) if masked else None
        if mw is None or (masked and m is None):
            return _FALLBACK
        # (complex input keeps its dtype: var and std of it are real, and the namespace takes it as it is)
        x = a.astype(mw) if cast_input and a.dtype != mw and a.dtype.kind != "c" else a
        ax = None if axis is None else tuple(v for v in _axes(axis, max(a.ndim, 1)) if v < a.ndim)  # 0-d: 0, -1
        kw: dict[str, Any] = {"axis": ax, "keepdims": keepdims}
        init = _py_scalar(initial, mw) if _given(initial) else None
        kind = xp_name
        if kind in ("sum", "prod"):
            kw["dtype"] = mw
        if kind in ("all", "any") and x.dtype != _dtypes.bool_:
            x = x.astype(_dtypes.bool_)
        if kind in ("mean", "var", "std") and m is not None:
            r = _masked_moment(x, m, kind, ax, keepdims, p)
        else:
            if m is not None:
                fill = init if kind in ("max", "min") else _IDENTITY[kind]
                x = apply(OPS["where"], m, x, full((), _py_scalar(fill, x.dtype), dtype=x.dtype, device=x.device))
            if kind in ("var", "std"):
                kw["correction"] = p["correction"] if _given(p.get("correction")) else p["ddof"]
            if kind in ("max", "min") and init is not None and 0 in x.shape:
                shape = np.zeros(x.shape, bool).sum(axis=ax, keepdims=keepdims).shape
                r = full(shape, init, dtype=mw, device=x.device)
            else:
                r = fn(x, **kw)
            if init is not None:
                combine = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}[kind]
                r = apply(OPS[combine], r, init)
        r = r if r.dtype == mw else r.astype(mw)
        return r if out is None else _into_out(r, out, ufunc_name)


def _masked_moment(x: Any, m: Any, kind: str, axis: Any, keepdims: bool, p: dict) -> Any:
    """mean / var / std of ``x`` over ``axis`` counting only where ``m`` is true (NumPy's ``where=``)."""
    zero = zeros((), dtype=x.dtype, device=x.device)
    count = xsum(m, axis=axis, keepdims=True).astype(x.dtype)
    mean = apply(OPS["divide"], xsum(apply(OPS["where"], m, x, zero), axis=axis, keepdims=True), count)
    shape = mean.shape if keepdims else xsum(m, axis=axis).shape
    if kind == "mean":
        return _m.reshape(mean, shape)
    d = apply(OPS["subtract"], x, mean)
    ss = xsum(apply(OPS["where"], m, apply(OPS["multiply"], d, d), zero), axis=axis, keepdims=keepdims)
    ddof = p["correction"] if _given(p.get("correction")) else p["ddof"]
    dof = apply(OPS["maximum"], apply(OPS["subtract"], _m.reshape(count, shape), ddof), 0)
    var = apply(OPS["divide"], ss, dof)
    return var if kind == "var" else apply(OPS["sqrt"], var)


for _np_name, _xp_name, _cast_input in (
        ("sum", "sum", False), ("prod", "prod", False), ("max", "max", False), ("amax", "max", False),
        ("min", "min", False), ("amin", "min", False), ("all", "all", False), ("any", "any", False),
        ("mean", "mean", True), ("std", "std", True), ("var", "var", True)):
    _reduction(_np_name, _xp_name, _cast_input)


def _arg_reduction(np_name: str) -> None:
    npf = getattr(np, np_name)

    @register_array(np_name, arg="a")
    def impl(a: GpuArray, p: dict) -> Any:
        axis, keepdims, out = p["axis"], _flag(p.get("keepdims", False)), p["out"]
        if a.dtype.kind == "c":             # NumPy's order of complex values
            if a.size == 0:
                return _FALLBACK            # (NumPy's error)
            r: Any = complex_arg(a, np_name[3:], axis, keepdims)
            if axis is None and keepdims:
                r = _m.reshape(r, (1,) * a.ndim)
            mw = _map_dtype(np.dtype(np.intp), a.device)
            if mw is not None and r.dtype != mw:
                r = r.astype(mw)
        else:
            r = _via(np_name, a, lambda z: npf(z, axis=axis, keepdims=keepdims), axis=axis, keepdims=keepdims)
        return r if r is _FALLBACK or out is None else _into_out(r, out, np_name)


for _np_name in ("argmax", "argmin"):
    _arg_reduction(_np_name)


def _scan(np_name: str, xp_name: str) -> None:
    npf = getattr(np, np_name)

    @register_array(np_name, arg="a")
    def impl(a: GpuArray, p: dict) -> Any:
        axis, dtype, out = p["axis"], p["dtype"], p["out"]
        if _xp(xp_name) is None:
            return _FALLBACK
        if axis is None or a.ndim == 0:
            if a.ndim == 0:
                _axes(axis if axis is not None else 0, 1)         # NumPy takes axis 0 or -1 of a 0-d array
            a, axis = _reshape_order(a, (-1,), "C"), 0
        if a.size == 0:
            return _FALLBACK
        r = _via(xp_name, a, lambda z: npf(z, axis=axis, dtype=dtype), axis=axis, dtype=None)
        return r if r is _FALLBACK or out is None else _into_out(r, out, np_name)


_scan("cumsum", "cumulative_sum")
_scan("cumprod", "cumulative_prod")


@register_array(np.count_nonzero, arg="a")
def _count_nonzero_fn(a: GpuArray, p: dict) -> Any:
    axis = p["axis"]
    r = _count_nonzero(a, axis=None if axis is None else (int(axis) if np.ndim(axis) == 0 else tuple(axis)),
                       keepdims=bool(p["keepdims"]))
    dt = _map_dtype(np.dtype(np.intp), a.device)
    return r if dt is None or r.dtype == dt else r.astype(dt)


def _cumulative(np_func: Any, xp_func: Any) -> None:
    @register_array(np_func, no_out=True)
    def impl(x: GpuArray, p: dict) -> Any:
        axis = p["axis"]
        if x.ndim == 0:
            raise ValueError("For 0-d inputs, cumulative functions need the axis to be None; "
                             "use atleast_1d first")
        want = _map_dtype(_probe_dtype(np_func, x, axis=axis, dtype=p["dtype"],
                                       include_initial=p["include_initial"]), x.device)
        if want is None:
            return _FALLBACK
        return xp_func(_cast(x, want), axis=axis, dtype=want, include_initial=bool(p["include_initial"]))


if hasattr(np, "cumulative_sum"):
    from ...namespace.statistical import cumulative_prod as _cprod
    from ...namespace.statistical import cumulative_sum as _csum
    _cumulative(np.cumulative_sum, _csum)
    _cumulative(np.cumulative_prod, _cprod)


@register_array(np.ptp, arg="a")
def _ptp(a: GpuArray, p: dict) -> Any:
    kw = {"axis": p["axis"], "keepdims": p["keepdims"]}
    r = _np.subtract(_np.max(a, **kw), _np.min(a, **kw))
    if p["out"] is not None:
        _np.copyto(p["out"], r, casting="unsafe")
        return p["out"]
    return r


@register_array(np.median, arg="a", dtypes=_dtypes.REAL_NUMERIC, no_out=True)    # complex: NumPy's order, host
def _median(a: GpuArray, p: dict) -> Any:
    """Sort along the reduced axes (on the device; the whole array: radix selection), average the middle one or
    two, NaN if a NaN sorted last."""
    axis, keepdims = p["axis"], bool(p["keepdims"])
    if a.size == 0:
        return _FALLBACK
    axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
    if len(axes) == a.ndim and can_select(a, 2):        # the whole array: radix selection, no sort
        r = median_selected(a)
        return _m.reshape(r, (1,) * a.ndim) if keepdims else r
    s = sorted_slices(a, axes)          # shared with the quantiles (namespace/quantiles.py)
    n = s.shape[-1]
    mid = s[..., (n - 1) // 2: n // 2 + 1]
    r = _np.mean(mid, axis=-1)
    if a.dtype.kind == "f":
        r = _np.where(_np.isnan(s[..., -1]), s[..., -1], r)
    if keepdims:
        r = _m.reshape(r, tuple(1 if i in axes else a.shape[i] for i in range(a.ndim)))
    return r


@register(np.average)
def _average(p: dict) -> Any:
    a, axis, weights, returned, keepdims = p["a"], p["axis"], p["weights"], p["returned"], p["keepdims"]
    dev = _device(a, weights)
    a = _as_array(a, dev)
    if axis is not None:
        axis = normalize_axis_tuple(axis, a.ndim, argname="axis")
    kd = {} if keepdims is _NOVALUE else {"keepdims": keepdims}
    if weights is None:
        avg = _np.mean(a, axis=axis, **kd)
        scl_value = a.size / builtins.max(avg.size, 1)
        scl = full(avg.shape, scl_value, dtype=avg.dtype, device=dev)
    else:
        w = _as_array(weights, dev)
        if a.shape != w.shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if w.shape != tuple(a.shape[ax] for ax in axis):
                raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
            w = _m.permute_dims(w, tuple(np.argsort(axis)))
            w = _m.reshape(w, tuple(a.shape[i] if i in axis else 1 for i in range(a.ndim)))
        if a.dtype.kind in "biu":
            rdt = np.result_type(a.dtype, w.dtype, "f8")
        else:
            rdt = np.result_type(a.dtype, w.dtype)
        if _map_dtype(rdt, dev) != rdt:
            return _FALLBACK
        scl = _np.sum(w, axis=axis, dtype=rdt, **kd)
        if builtins.bool(_np.any(_np.equal(scl, 0.0))):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = _np.divide(_np.sum(_np.multiply(a, w, dtype=rdt), axis=axis, **kd), scl)
    if returned:
        if scl.shape != avg.shape:
            scl = _m.broadcast_to(scl, avg.shape)
        return avg, scl
    return avg
