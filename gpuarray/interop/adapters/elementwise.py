"""Elementwise adapters: ``where``, ``clip``, ``round``, ``real`` / ``imag``, ``nan_to_num``, predicates, and the
comparisons NumPy answers with a Python ``bool`` (``allclose``, ``array_equal``: computed on the device,
read back as one value)."""

from __future__ import annotations

import builtins
import importlib
from typing import Any

import numpy as np

from ...array_object.aliasing import derive, set_writeable
from ...array_object.array import GpuArray
from ...array_object.elementwise import apply
from ...core import dtypes as _dtypes
from ...core.ops import OPS
from ...namespace.creation import asarray, full, zeros
from ..host import _FALLBACK, _NOVALUE
from ..operands import _as_array, _cast, _device, _device_from, _given, _into_out, _map_dtype, _prepare, _probe, _w
from ..registry import register, register_array, register_function
from ..ufuncs import _call

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays


def _where(condition: Any, *xy: Any) -> Any:
    if not xy and isinstance(condition, GpuArray):
        return np.nonzero(condition)  # np.where(c) is np.nonzero(c)
    if len(xy) != 2:
        return _FALLBACK
    x, y = xy
    device = _device_from((condition, x, y), None)
    with np.errstate(all="ignore"):
        dt = np.where(True, _probe(x), _probe(y)).dtype
    mdt = _map_dtype(dt, device)
    if mdt is None:
        return _FALLBACK
    cond = _as_array(condition, device)
    cond = cond if cond.dtype == _dtypes.bool_ else cond.astype(_dtypes.bool_)
    return apply(OPS["where"], cond, *_prepare((x, y), mdt, device))


register_function(np.where, _where)         # positional-only in C: no signature binding needed


@register(np.i0)
def _i0(p: dict) -> Any:
    """``numpy.i0`` by the op table's ``i0`` (NumPy: floats keep their dtype, other reals become float64)."""
    x = p["x"]
    if not isinstance(x, GpuArray):
        return _FALLBACK
    if x.dtype.kind == "c":
        raise TypeError("i0 not supported for complex values")
    dt = _map_dtype(x.dtype if x.dtype.kind == "f" else np.dtype(np.float64), x.device)
    if dt is None:
        return _FALLBACK
    return apply(OPS["i0"], _cast(x, dt))


def _clip_ufunc() -> np.ufunc:
    return importlib.import_module("numpy._core.umath").clip  # the ufunc behind np.clip


@register("clip")
def _clip(p: dict) -> Any:
    a, kwargs = p["a"], dict(p.get("kwargs") or {})
    both = [(p["a_min"], p.get("min", _NOVALUE)), (p["a_max"], p.get("max", _NOVALUE))]
    if any(_given(x) and _given(y) for x, y in both):
        return _FALLBACK             # NumPy's own error for passing both spellings
    lo, hi = (x if _given(x) else (y if _given(y) else None) for x, y in both)
    if isinstance(a, GpuArray) and a.dtype.kind in "iu":
        info = np.iinfo(a.dtype)         # NumPy clips with out-of-range Python ints instead of raising
        lo, hi = (min(max(v, info.min), info.max) if type(v) is int else v for v in (lo, hi))
    if p.get("out") is not None:
        kwargs["out"] = p["out"] if isinstance(p["out"], tuple) else (p["out"],)
    if lo is None and hi is None:
        return GpuArray(a._node) if "out" not in kwargs and not isinstance(a, np.ndarray) else _FALLBACK
    if lo is None:
        return _call(np.minimum, (a, hi), kwargs, None)
    if hi is None:
        return _call(np.maximum, (a, lo), kwargs, None)
    return _call(_clip_ufunc(), (a, lo, hi), kwargs, None)


def _power_of_ten(n: int) -> float:
    """NumPy's ``power_of_ten`` (``numpy/_core/src/multiarray/calculation.c``), bit for bit."""
    if n < 9:
        return (1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)[n]
    ret = 1e9
    for _ in range(n - 9):
        ret *= 10.0
    return ret


@register_array("round", "around", arg="a", dtypes=_dtypes.REAL_NUMERIC)
def _round(a: GpuArray, p: dict) -> Any:
    """NumPy's ``PyArray_Round``: ``rint(a * 10**d) / 10**d`` (``rint(a / 10**-d) * 10**-d`` for d < 0)
    in ``a``'s float dtype; integers are unchanged for d >= 0 and go through float64 for d < 0."""
    out, decimals = p["out"], int(p["decimals"])
    if a.dtype.kind in "iu" and decimals >= 0:
        r = GpuArray(a._node)
    else:
        x = a
        if a.dtype.kind in "iu":
            fdt = _map_dtype(_dtypes.float64, a.device)
            if fdt is None:
                return _FALLBACK
            x = a.astype(fdt)
        if decimals == 0:
            r = apply(OPS["round"], x)
        else:
            f = _power_of_ten(abs(decimals))
            op1, op2 = ("multiply", "divide") if decimals >= 0 else ("divide", "multiply")
            r = apply(OPS[op2], apply(OPS["round"], apply(OPS[op1], x, f)), f)
        if r.dtype != a.dtype:
            r = r.astype(a.dtype)
    return r if out is None else _into_out(r, out, "round")


@register_array("real", arg="val")
def _real(v: GpuArray, p: dict) -> Any:
    """A view: of the real part of a complex array (writes go to it), of the array itself otherwise."""
    return derive(v, None, part="real" if v.dtype.kind == "c" else None)


@register_array("imag", arg="val")
def _imag(v: GpuArray, p: dict) -> Any:
    """A view of the imaginary part of a complex array; read-only zeros for a real one (as NumPy)."""
    if v.dtype.kind == "c":
        return derive(v, None, part="imag")
    z = zeros(v.shape, dtype=v.dtype, device=v.device)
    set_writeable(z, False)
    return z


def _isclose_device(a: Any, b: Any, rtol: Any, atol: Any, equal_nan: bool) -> Any:
    """NumPy's ``isclose`` formula, with its dtype rules, as ufunc calls on the device."""
    dev = _device(a, b)
    x, y = (v if isinstance(v, (int, float, complex)) else _as_array(v, dev) for v in (a, b))
    if isinstance(y, GpuArray):
        dt = _map_dtype(np.result_type(y.dtype, 1.0), dev)
        if dt is None:
            return _FALLBACK
        y = _cast(y, dt)
    elif isinstance(y, int):
        y = float(y)
    if not (np.all(np.isfinite(atol)) and np.all(np.isfinite(rtol))):
        return _FALLBACK              # NumPy's warning path
    with np.errstate(invalid="ignore"):
        r = _np.logical_or(_np.logical_and(_np.less_equal(_np.abs(_np.subtract(x, y)),
                                                       _np.add(atol, _np.multiply(rtol, _np.abs(y)))),
                                         _np.isfinite(y)),
                          _np.equal(x, y))
        if equal_nan:
            r = _np.logical_or(r, _np.logical_and(_np.isnan(x), _np.isnan(y)))
    return r if isinstance(r, GpuArray) else asarray(r, device=dev)


@register(np.isclose)
def _isclose(p: dict) -> Any:
    return _isclose_device(p["a"], p["b"], p["rtol"], p["atol"], bool(p["equal_nan"]))


@register(np.allclose)
def _allclose(p: dict) -> Any:
    r = _isclose_device(p["a"], p["b"], p["rtol"], p["atol"], bool(p["equal_nan"]))
    return r if r is _FALLBACK else builtins.bool(_np.all(r))


@register(np.array_equal)
def _array_equal(p: dict) -> Any:
    a1, a2 = p["a1"], p["a2"]
    dev = _device(a1, a2)
    try:
        a1, a2 = _as_array(a1, dev), _as_array(a2, dev)
    except (TypeError, ValueError):
        return False
    if a1.shape != a2.shape:
        return False
    eq = _np.equal(a1, a2)
    if p["equal_nan"]:
        if a1 is a2:
            return True
        if a1.dtype.kind == "f" or a2.dtype.kind == "f":
            eq = _np.logical_or(eq, _np.logical_and(_np.isnan(a1), _np.isnan(a2)))
    return builtins.bool(_np.all(eq))


@register(np.array_equiv)
def _array_equiv(p: dict) -> Any:
    dev = _device(p["a1"], p["a2"])
    try:
        a1, a2 = _as_array(p["a1"], dev), _as_array(p["a2"], dev)
        np.broadcast_shapes(a1.shape, a2.shape)
    except (TypeError, ValueError):
        return False
    return builtins.bool(_np.all(_np.equal(a1, a2)))


@register_array(np.nan_to_num)
def _nan_to_num(x: GpuArray, p: dict) -> Any:
    if x.dtype.kind != "f":
        return GpuArray(x._node)
    info = np.finfo(x.dtype)
    posinf = info.max if p["posinf"] is None else p["posinf"]
    neginf = info.min if p["neginf"] is None else p["neginf"]
    dt = x.dtype
    def c(v: Any) -> Any:
        with np.errstate(all="ignore"):
            return full((), np.asarray(v).astype(dt)[()].item(), dtype=dt, device=x.device)
    r = _w("where", _w("isnan", x), c(p["nan"]), x)
    r = _w("where", _w("logical_and", _w("isinf", x), _w("greater", x, 0)), c(posinf), r)
    return _w("where", _w("logical_and", _w("isinf", x), _w("less", x, 0)), c(neginf), r)


def _signed_inf(np_func: Any, negative: bool) -> None:
    @register_array(np_func, dtypes=_dtypes.ALL_DTYPES, no_out=True)
    def impl(x: GpuArray, p: dict) -> Any:
        sb = _np.signbit(x)
        return _np.logical_and(_np.isinf(x), sb if negative else _np.logical_not(sb))


_signed_inf(np.isposinf, False)
_signed_inf(np.isneginf, True)


def _constant_predicate(np_func: Any, value: bool) -> None:
    """``isreal`` / ``iscomplex`` of a real array: all True / all False."""
    @register_array(np_func, real=True)
    def impl(x: GpuArray, p: dict) -> Any:
        return full(x.shape, value, dtype=_dtypes.bool_, device=x.device)


_constant_predicate(np.isreal, True)
_constant_predicate(np.iscomplex, False)


@register_array(np.real_if_close, arg="a", real=True)
def _real_if_close(a: GpuArray, p: dict) -> Any:
    return GpuArray(a._node)


@register_array(np.angle, arg="z", real=True)
def _angle(z: GpuArray, p: dict) -> Any:
    a = _np.arctan2(0, z)
    return _np.multiply(a, 180 / np.pi) if p["deg"] else a


@register_array(np.sinc)
def _sinc(x: GpuArray, p: dict) -> Any:
    if x.dtype.kind != "c":     # the op table's sinc (NumPy's formula): integers and bools in float64
        dt = x.dtype if x.dtype.kind == "f" else _map_dtype(_dtypes.float64, x.device)
        return _w("sinc", x if x.dtype == dt else x.astype(dt))
    y = _np.multiply(np.pi, x)
    eps = float(np.finfo(y.dtype).eps) if y.dtype.kind == "f" else 1e-20
    y = _np.where(y, y, eps)
    return _np.divide(_np.sin(y), y)


@register_array(np.fix, no_out=True)
def _fix(x: GpuArray, p: dict) -> Any:
    return _np.where(_np.greater_equal(x, 0), _np.floor(x), _np.ceil(x))
