"""Creation adapters: ``like=`` creation functions, ``*_like``, triangles and diagonals, ``vander``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ... import linalg
from ...array_object.array import GpuArray
from ...core import dtypes as _dtypes
from ...namespace import manipulation as _m
from ...namespace.creation import arange, asarray, eye, full, tril, triu, zeros
from ...namespace.diag import diag
from ...namespace.statistical import cumulative_prod
from ...runtime.devices import Device, as_device
from ...runtime.planner import evaluate_nodes
from ..host import _FALLBACK, _supported
from ..operands import _as_array, _cast, _int_index, _map_dtype, _probe, _shape_arg
from ..registry import register, register_array, register_like

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays


def _like_factory(kind: str) -> Callable[..., Any]:
    def impl(p: dict) -> Any:
        a = p["prototype"] if "prototype" in p else p["a"]
        dt = a.dtype if p["dtype"] is None else np.dtype(p["dtype"])
        dev = a.device if p.get("device") is None else as_device(p["device"])
        if dt.fields is not None:       # as CuPy does; dask then keeps (vals, arg) pairs in a dict
            raise TypeError(f"numpy.{kind}_like: gpuarray has no structured dtypes; got {dt}")
        if not _supported(dt, dev):
            return _FALLBACK
        shape = a.shape if p["shape"] is None else _shape_arg(p["shape"])
        fill = p["fill_value"] if kind == "full" else (1 if kind == "ones" else 0)
        if isinstance(fill, (np.ndarray, GpuArray)) and fill.ndim > 0:
            return _m.broadcast_to(_as_array(fill, dev).astype(dt), shape)
        if isinstance(fill, np.ndarray):
            fill = fill.item()
        return full(shape, fill, dtype=dt, device=dev)
    return impl


for _k in ("zeros", "ones", "empty", "full"):
    register(f"{_k}_like")(_like_factory(_k))


# ---- like=: creation functions called as np.asarray(x, like=g), np.zeros(3, like=g) ...
def _like_device(like: Any, device: Any) -> Device:
    return like.device if device is None else as_device(device)


@register_like("asarray", "asanyarray", "array", "require")
def _asarray_like(like: Any, p: dict) -> Any:
    a = p["a"] if "a" in p else p["object"]
    device = p.get("device")
    dev = a.device if isinstance(a, GpuArray) and device is None else _like_device(like, device)
    dtype = None if p.get("dtype") is None else np.dtype(p["dtype"])
    r = asarray(a if isinstance(a, GpuArray) else np.asarray(a), dtype=dtype, device=dev, copy=p.get("copy"))
    ndmin = p.get("ndmin", 0)
    return _m.reshape(r, (1,) * (ndmin - r.ndim) + r.shape) if r.ndim < ndmin else r


@register_like("ascontiguousarray", "asfortranarray")
def _ascontiguous_like(like: Any, p: dict) -> Any:
    r = _asarray_like(like, p)
    return _m.reshape(r, (1,)) if r.ndim == 0 else r         # NumPy: "ndim >= 1"


def _default_float(dtype: Any, device: Device) -> np.dtype:
    if dtype is not None:
        return np.dtype(dtype)
    return _dtypes.float64 if device.supports(_dtypes.float64) else device.default_float


def _filled(kind: str) -> Callable[..., Any]:
    def impl(like: Any, p: dict) -> Any:
        dev = _like_device(like, p.get("device"))
        fill = p["fill_value"] if kind == "full" else (1 if kind == "ones" else 0)
        if kind == "full" and p["dtype"] is None:
            dt = np.asarray(fill).dtype
            dt = _map_dtype(dt, dev) or dt
        else:
            dt = _default_float(p["dtype"], dev)
        if isinstance(fill, np.ndarray) and fill.ndim == 0:
            fill = fill.item()
        if isinstance(fill, (np.ndarray, list, tuple)):
            return _m.broadcast_to(_as_array(fill, dev).astype(dt), _shape_arg(p["shape"]))
        return full(p["shape"], fill, dtype=dt, device=dev)
    return impl


for _k in ("zeros", "ones", "empty", "full"):
    register_like(_k)(_filled(_k))


@register_like("arange")
def _arange_like(like: Any, p: dict) -> Any:
    start = p["start_or_stop"]
    step = 1 if p["step"] is None else p["step"]
    dtype = None if p["dtype"] is None else np.dtype(p["dtype"])
    return arange(start, p["stop"], step, dtype=dtype, device=_like_device(like, p.get("device")))


@register_like("eye")
def _eye_like(like: Any, p: dict) -> Any:
    dev = _like_device(like, p.get("device"))
    return eye(p["N"], p["M"], k=p["k"], dtype=_default_float(p["dtype"], dev), device=dev)


@register_like("identity")
def _identity_like(like: Any, p: dict) -> Any:
    dev = like.device
    return eye(p["n"], dtype=_default_float(p["dtype"], dev), device=dev)


@register_like(np.tri)
def _tri(like: Any, p: dict) -> Any:
    n, m = _int_index(p["N"]), _int_index(p["N"] if p["M"] is None else p["M"])
    dt = np.dtype(p["dtype"])
    if _map_dtype(dt, like.device) != dt:
        return _FALLBACK
    return tril(full((n, m), 1, dtype=dt, device=like.device), k=_int_index(p["k"]))


def _diagonal_view(a: GpuArray, offset: int, axis1: int, axis2: int) -> GpuArray:
    a1 = normalize_axis_index(_int_index(axis1), a.ndim)
    a2 = normalize_axis_index(_int_index(axis2), a.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    return linalg.diagonal(_m.moveaxis(a, (a1, a2), (-2, -1)), offset=_int_index(offset))


@register_array(np.diagonal, arg="a")
def _diagonal(a: GpuArray, p: dict) -> Any:
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    return _diagonal_view(a, p["offset"], p["axis1"], p["axis2"])


@register_array(np.trace, arg="a")
def _trace(a: GpuArray, p: dict) -> Any:
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    d = _diagonal_view(a, p["offset"], p["axis1"], p["axis2"])
    return _np.sum(d, axis=-1, dtype=p["dtype"], out=p["out"])


def _triangle(np_func: Any, lower: bool) -> None:
    @register_array(np_func, arg="m")
    def impl(m: GpuArray, p: dict) -> Any:
        if m.ndim == 0:
            return _FALLBACK
        if m.ndim == 1:
            m = _m.broadcast_to(m, (m.shape[0], m.shape[0]))
        return (tril if lower else triu)(m, k=_int_index(p["k"]))


_triangle(np.tril, True)
_triangle(np.triu, False)


@register_array(np.diag, arg="v")
def _diag(v: GpuArray, p: dict) -> Any:
    return diag(v, _int_index(p["k"]))          # namespace/diag.py (also ``xp.diag``)


@register_array(np.diagflat, arg="v")
def _diagflat(v: GpuArray, p: dict) -> Any:
    return _np.diag(_m.reshape(v, (-1,)), k=p["k"])


def _index_from(np_func: Any, extra: tuple[str, ...] = ()) -> None:
    """``*_indices_from(arr)``: NumPy's own, on a zero-strided stand-in of the shape, uploaded; no data is read."""
    @register_array(np_func, arg="arr")
    def impl(a: GpuArray, p: dict) -> Any:
        host = np_func(np.broadcast_to(np.zeros((), a.dtype), a.shape), *(p[k] for k in extra))
        return tuple(asarray(h, device=a.device) for h in host)


_index_from(np.tril_indices_from, ("k",))
_index_from(np.triu_indices_from, ("k",))
_index_from(np.diag_indices_from)


@register_array(np.vander)
def _vander(x: GpuArray, p: dict) -> Any:
    n, increasing = p["N"], p["increasing"]
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = x.shape[0] if n is None else _int_index(n)
    dt = _map_dtype(np.promote_types(x.dtype, int), x.device)
    if dt is None or dt == _dtypes.bool_:
        return _FALLBACK
    xs = _cast(x, dt)
    if n == 0:
        return zeros((x.shape[0], 0), dtype=dt, device=x.device)
    cols = _m.broadcast_to(_m.reshape(xs, (-1, 1)), (x.shape[0], n - 1))
    ones = full((x.shape[0], 1), 1, dtype=dt, device=x.device)
    v = _m.concat([ones, cumulative_prod(cols, axis=1, dtype=dt)], axis=1) if n > 1 else ones
    return v if increasing else _m.flip(v, axis=1)



@register(np.linspace)
def _linspace(p: dict) -> Any:
    """``numpy.linspace`` with endpoints on the device (arrays or 0-d): NumPy's steps, ``start + i *
    step`` (``i / div * delta`` for every sample where any step is 0, chosen on the device), the last
    sample ``stop`` exactly, floored into an integer ``dtype``."""
    start, stop, dtype, axis = p["start"], p["stop"], p["dtype"], p["axis"]
    if p.get("device") is not None or not any(isinstance(v, GpuArray) for v in (start, stop)):
        return _FALLBACK
    num = _int_index(p["num"])
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    dev = next(v.device for v in (start, stop) if isinstance(v, GpuArray))
    both = np.result_type(_probe(start), _probe(stop))          # Python scalars weak, as NumPy's
    dt = both if both.kind in "fc" else np.result_type(both, 1.0)
    ct, mt = _map_dtype(dt, dev), _map_dtype(np.dtype(dtype) if dtype is not None else dt, dev)
    if ct is None or mt is None:
        return _FALLBACK
    s, e = _cast(_as_array(start, dev), ct), _cast(_as_array(stop, dev), ct)
    delta = e - s
    div = num - 1 if p["endpoint"] else num
    i = _m.reshape(arange(num, dtype=ct, device=dev), (-1,) + (1,) * delta.ndim)
    if div > 0:
        step = delta / div
        y = _np.where(_np.any(step == 0), i / div * delta, i * step)    # NumPy's choice, for all, on the device
    else:
        step, y = full((), float("nan"), dtype=ct, device=dev), i * delta
    evaluate_nodes([y._node])       # rounded on its own, as NumPy's: NVIDIA contracts y + s into one fma
    y = y + s
    if p["endpoint"] and num > 1:
        y = _m.concat([y[:-1], _m.reshape(_m.broadcast_to(e, y.shape[1:]), (1,) + y.shape[1:])], axis=0)
    if axis != 0:
        y = _m.moveaxis(y, 0, normalize_axis_index(_int_index(axis), y.ndim))
    if dtype is not None and np.dtype(dtype).kind in "iub":
        y = _np.floor(y)
    y = _cast(y, mt)
    return (y, step) if p["retstep"] else y


@register(np.logspace)
def _logspace(p: dict) -> Any:
    """``numpy.logspace`` with endpoints on the device: ``base ** linspace(start, stop)``."""
    start, stop, base, dtype = p["start"], p["stop"], p["base"], p["dtype"]
    if np.ndim(base) or isinstance(base, GpuArray) or not any(isinstance(v, GpuArray) for v in (start, stop)):
        return _FALLBACK                      # an array of bases: NumPy's broadcasting of all three
    y = _np.linspace(start, stop, num=p["num"], endpoint=p["endpoint"], axis=p["axis"])
    r = _np.power(base, y)
    return r if dtype is None else r.astype(dtype)


@register(np.geomspace)
def _geomspace(p: dict) -> Any:
    """``numpy.geomspace`` with endpoints on the device, NumPy's steps: both turned by ``sign(start)``
    onto the positive reals, ``10 ** linspace(log10(start), log10(stop))`` (the power in float64 as
    NumPy's ``logspace`` takes it), the first and last samples ``start`` and ``stop`` exactly, the
    sign turned back; one flag read back (a zero endpoint is NumPy's ValueError)."""
    start, stop, num, dtype, axis = p["start"], p["stop"], p["num"], p["dtype"], p["axis"]
    if not any(isinstance(v, GpuArray) for v in (start, stop)):
        return _FALLBACK
    dev = next(v.device for v in (start, stop) if isinstance(v, GpuArray))
    probes = [np.zeros((), v.dtype) if isinstance(v, GpuArray) else np.asarray(v) for v in (start, stop)]
    dt = np.result_type(*probes, float(num), np.zeros((), dtype))
    want = dt if dtype is None else np.dtype(dtype)
    ct, mt = _map_dtype(dt, dev), _map_dtype(want, dev)
    pt = _map_dtype(np.result_type(np.float64, dt), dev)
    if ct is None or mt is None or pt is None or (ct.kind == "c" and mt.kind != "c"):
        return _FALLBACK                      # complex to real: NumPy's ComplexWarning
    s, e = _cast(_as_array(start, dev), ct), _cast(_as_array(stop, dev), ct)
    if bool(np.asarray(_np.logical_or(_np.any(_np.equal(s, 0)), _np.any(_np.equal(e, 0))))):    # the one read
        raise ValueError("Geometric sequence cannot include zero")
    out_sign = _np.sign(s)
    s = _np.divide(s, out_sign)
    e = _np.divide(e, out_sign)
    y = _np.linspace(_np.log10(s), _np.log10(e), num=num, endpoint=p["endpoint"])
    r = _cast(_np.power(full((), 10.0, dtype=_dtypes.REAL_OF.get(pt, pt), device=dev), y), ct)
    num = _int_index(num)
    if num > 0:
        inner = r.shape[1:]
        first = _m.reshape(_m.broadcast_to(s, inner), (1,) + inner)
        last = _m.reshape(_m.broadcast_to(e, inner), (1,) + inner)
        if num > 1 and p["endpoint"]:
            r = _m.concat([first, r[1:-1], last], axis=0)
        else:
            r = _m.concat([first, r[1:]], axis=0)
    r = _np.multiply(r, out_sign)
    if axis != 0:
        r = _m.moveaxis(r, 0, normalize_axis_index(_int_index(axis), r.ndim))
    return _cast(r, mt)
