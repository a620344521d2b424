"""Sorting, searching and set adapters: sort, partition, searchsorted, unique, isin, digitize, set operations.

Functions whose output shape depends on the data (``unique``, ``intersect1d`` ...) sort on
the device and finish the data-dependent step on the host, as the namespace's ``unique_*`` do;
their results are put back on the caller's device."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ...array_object.array import GpuArray
from ...core import dtypes as _dtypes
from ...namespace import manipulation as _m
from ...namespace import sets
from ...namespace.creation import asarray, full
from ...namespace.indexing import take as _take
from ...namespace.searching_sorted import nonzero
from ...namespace.searching_sorted import searchsorted as _searchsorted
from ...namespace.sorting import argsort as _argsort
from ...namespace.sorting import sort as _sort
from ..host import _FALLBACK, _xp
from ..operands import _along, _as_array, _cast, _device, _map_dtype, _reshape_order, _via, _w
from ..registry import register, register_array

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays


def _sorting(np_name: str) -> None:
    npf = getattr(np, np_name)

    @register_array(np_name, arg="a")
    def impl(a: GpuArray, p: dict) -> Any:
        axis = p["axis"]
        if p["order"] is not None or _xp(np_name) is None:
            return _FALLBACK
        if axis is None:
            a, axis = _reshape_order(a, (-1,), "C"), 0
        if a.dtype.kind == "c":
            return _complex_order(np_name, a, axis)
        return _via(np_name, a, lambda z: npf(z, axis=axis), axis=axis)


def _complex_keys(c: GpuArray) -> tuple[Any, Any, Any]:
    """``lexsort``'s keys (last one first) for NumPy's complex order: values without NaN, then those whose
    imaginary part is NaN (by real part), then those whose real part is NaN (by imaginary part), then
    NaN in both; within a class by real part, then imaginary part."""
    re, im = _np.real(c), _np.imag(c)
    cls = _np.add(_np.isnan(im).astype(np.int8), _np.multiply(_np.isnan(re).astype(np.int8), 2))
    return im, re, cls


def _complex_order(np_name: str, a: GpuArray, axis: Any) -> Any:
    """``np.sort`` / ``np.argsort`` of complex values in NumPy's order: by real part, then imaginary part,
    NaN last (``R + Rj < R + nanj < nan + Rj < nan + nanj``), by a stable ``lexsort`` on the device (the
    namespace's ``sort`` takes real values only, as the standard)."""
    if a.ndim == 0:
        return _FALLBACK                # NumPy's AxisError
    ax = normalize_axis_index(axis, a.ndim)
    last = ax == a.ndim - 1
    b = a if last else _m.moveaxis(a, ax, -1)
    order = _np.lexsort(_complex_keys(b), axis=-1)
    out = order if np_name == "argsort" else _np.take_along_axis(b, order, axis=-1)
    return out if last else _m.moveaxis(out, -1, ax)


_sorting("sort")
_sorting("argsort")


@register(np.searchsorted)
def _searchsorted_fn(p: dict) -> Any:
    a, v, side, sorter = p["a"], p["v"], p["side"], p["sorter"]
    if side not in ("left", "right"):
        return _FALLBACK               # NumPy accepts prefixes ('l', 'r') and raises its own errors
    dev = _device(a, v, sorter)
    a = _as_array(a, dev)
    if a.ndim != 1 or a.dtype.kind == "c" or np.iscomplexobj(v):
        return _FALLBACK                # (complex: NumPy's order of complex values, on the host)
    if isinstance(v, (list, tuple)):
        v = np.asarray(v)
    if isinstance(v, np.ndarray):
        v = asarray(v, device=dev) if v.ndim else v[()]
    if isinstance(v, np.generic):
        v = v.item() if v.dtype.kind in "biuf" else v
    if sorter is not None:
        sorter = _as_array(sorter, dev)
    if isinstance(v, GpuArray) and (v.dtype not in _dtypes.NUMERIC or a.dtype not in _dtypes.NUMERIC):
        return _FALLBACK
    r = _searchsorted(a, v, side=side, sorter=sorter)
    dt = _map_dtype(np.dtype(np.intp), dev)
    return r if dt is None or r.dtype == dt else r.astype(dt)


def _unique_host(sv: np.ndarray, equal_nan: bool) -> np.ndarray:
    """NumPy's ``_unique1d`` mask on sorted values: where each run of equal values starts."""
    mask = np.empty(sv.shape, dtype=bool)
    mask[:1] = True
    if equal_nan and sv.size and sv.dtype.kind == "f" and _np.isnan(sv[-1]):
        first_nan = int(np.searchsorted(sv, sv[-1], side="left"))
        if first_nan > 0:
            mask[1:first_nan] = sv[1:first_nan] != sv[:first_nan - 1]
        mask[first_nan] = True
        mask[first_nan + 1:] = False
    else:
        mask[1:] = sv[1:] != sv[:-1]
    return mask


@register_array(np.unique, arg="ar", real=True)      # (complex: NumPy's order and its one NaN, on the host)
def _unique(ar: GpuArray, p: dict) -> Any:
    """``numpy.unique`` with ``axis=None``: on a GPU (real values) all on the device, as the set functions
    (``namespace/sets.py``: a stable sort, the flags where runs start, one read of their count), with NumPy's
    ``equal_nan`` (one NaN for all of them); elsewhere the step after the sort on the host."""
    if p["axis"] is not None:
        return _FALLBACK
    dev = ar.device
    ip = _map_dtype(np.dtype(np.intp), dev) or dev.default_int
    want_perm = p["return_index"] or p["return_inverse"]
    if sets._on_device(ar):
        r = sets._runs(ar, want_perm)
        flags, starts = r.flags, r.starts
        if p["equal_nan"] and ar.dtype.kind == "f" and ar.size > 1:
            nan = _w("isnan", r.sv)
            again = _w("logical_and", nan[1:], nan[:-1])
            flags = _m.concat([flags[:1], _w("logical_and", flags[1:], _w("logical_not", again))])
            starts = nonzero(flags)[0]
        out: list[Any] = [_take(r.sv, starts)]
        if p["return_index"]:
            assert r.perm is not None
            out.append(_cast(_take(r.perm, starts), ip))
        if p["return_inverse"]:
            out.append(_cast(sets._device_inverse(sets._Runs(r.sv, r.perm, flags, starts), ar), ip))
        if p["return_counts"]:
            out.append(_cast(sets._device_counts(sets._Runs(r.sv, r.perm, flags, starts)), ip))
        return out[0] if len(out) == 1 else tuple(out)
    flat = _m.reshape(ar, (-1,))
    if want_perm:
        perm = np.asarray(_argsort(flat, stable=True)).astype(np.intp)
        sv = np.asarray(flat)[perm]
    else:
        sv = np.asarray(_sort(flat))
    mask = _unique_host(sv, bool(p["equal_nan"]))
    out = [asarray(sv[mask], device=dev)]
    if p["return_index"]:
        out.append(asarray(perm[mask].astype(ip), device=dev))
    if p["return_inverse"]:
        inv = np.empty(mask.shape, dtype=ip)
        inv[perm] = np.cumsum(mask) - 1
        out.append(asarray(inv.reshape(ar.shape), device=dev))
    if p["return_counts"]:
        starts_h = _np.concatenate(np.nonzero(mask) + ([mask.size],))
        out.append(asarray(_np.diff(starts_h).astype(ip), device=dev))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_variant(np_name: str) -> None:

    @register_array(np_name)
    def impl(x: GpuArray, p: dict) -> Any:
        r = getattr(sets, np_name)(x)
        ip = _map_dtype(np.dtype(np.intp), x.device) or x.device.default_int
        if isinstance(r, tuple):
            fields = [f if f.dtype.kind not in "iu" or f is r[0] else _cast(f, ip) for f in r]
            return type(r)(*fields)
        return r


for _name in ("unique_values", "unique_counts", "unique_inverse", "unique_all"):
    _unique_variant(_name)


def _partition(np_func: Any, arg: bool) -> None:
    """partition / argpartition as a full sort along the axis: a sorted array is a valid partition."""
    @register_array(np_func, arg="a", host=("kth",))
    def impl(a: GpuArray, p: dict) -> Any:
        kth, axis = p["kth"], p["axis"]
        if p.get("order") is not None or np.asarray(kth).dtype.kind not in "iu":
            return _FALLBACK
        a, ax = _along(a, axis)
        n = a.shape[ax]
        for k in np.asarray(kth).reshape(-1).tolist():
            if not -n <= k < n:
                raise ValueError(f"kth(={k}) out of bounds ({n})")
        return (_argsort if arg else _sort)(a, axis=ax, stable=True)


_partition(np.partition, False)
_partition(np.argpartition, True)


@register(np.isin)
def _isin(p: dict) -> Any:
    """Sort the test values on the device, binary-search each element, compare (NaN is never found)."""
    dev = _device(p["element"], p["test_elements"])
    e, t = _as_array(p["element"], dev), _as_array(p["test_elements"], dev)
    if e.dtype not in _dtypes.ALL_DTYPES or t.dtype not in _dtypes.ALL_DTYPES or p["kind"] not in (None, "sort") \
            or e.dtype.kind == "c" or t.dtype.kind == "c":
        return _FALLBACK                # (complex values: the sort kernels order real keys only)
    dt = _map_dtype(np.result_type(e.dtype, t.dtype), dev)
    if dt is None:
        return _FALLBACK
    if dt == _dtypes.bool_:
        dt = _dtypes.uint8
    e, t = _cast(e, dt), _sort(_m.reshape(_cast(t, dt), (-1,)))
    if t.size == 0:
        found = full(e.shape, False, dtype=_dtypes.bool_, device=dev)
    else:
        i = _w("minimum", _searchsorted(t, e), t.size - 1)
        found = _w("equal", _take(t, i), e)
    return _w("logical_not", found) if p["invert"] else found


@register(np.digitize)
def _digitize(p: dict) -> Any:
    x, bins, right = p["x"], p["bins"], p["right"]
    dev = _device(x, bins)
    x = _as_array(x, dev)
    hb = bins.get() if isinstance(bins, GpuArray) else np.asarray(bins)
    if hb.ndim != 1 or x.dtype not in _dtypes.NUMERIC or hb.dtype.kind not in "biuf":
        return _FALLBACK
    if hb.dtype.kind == "f" and np.isnan(hb).any():
        return _FALLBACK
    d = np.diff(hb)
    increasing, decreasing = bool(np.all(d >= 0)), bool(np.all(d <= 0))
    if not (increasing or decreasing):
        raise ValueError("bins must be monotonically increasing or decreasing")
    side = "left" if right else "right"
    dt = _map_dtype(np.dtype(np.intp), dev) or dev.default_int
    if increasing:
        r = _searchsorted(asarray(hb, device=dev), x, side=side)
    else:
        r = _w("subtract", hb.size, _searchsorted(asarray(hb[::-1].copy(), device=dev), x, side=side))
    return _cast(r, dt)


def _flat_unique(x: Any) -> Any:
    return _np.unique(_m.reshape(x, (-1,)))


@register(np.union1d)
def _union1d(p: dict) -> Any:
    dev = _device(p["ar1"], p["ar2"])
    a, b = (_m.reshape(_as_array(v, dev), (-1,)) for v in (p["ar1"], p["ar2"]))
    return _np.unique(_np.concatenate((a, b)))


@register(np.intersect1d)
def _intersect1d(p: dict) -> Any:
    if p["return_indices"] or np.iscomplexobj(p["ar1"]) or np.iscomplexobj(p["ar2"]):
        return _FALLBACK                # (complex: NumPy's order of complex values, on the host)
    dev = _device(p["ar1"], p["ar2"])
    a, b = (_as_array(v, dev) for v in (p["ar1"], p["ar2"]))
    if not p["assume_unique"]:
        a, b = _flat_unique(a), _flat_unique(b)
    else:
        a, b = _m.reshape(a, (-1,)), _m.reshape(b, (-1,))
    aux = _sort(_np.concatenate((a, b)))
    if aux.size < 2:
        return aux[:0]
    same = _np.equal(aux[1:], aux[:-1])
    return _np.extract(same, aux[:-1])


@register(np.setxor1d)
def _setxor1d(p: dict) -> Any:
    """The sorted values in exactly one of the inputs: NumPy's runs of the sorted union, on the device."""
    if np.iscomplexobj(p["ar1"]) or np.iscomplexobj(p["ar2"]):
        return _FALLBACK                # (complex: NumPy's order of complex values, on the host)
    dev = _device(p["ar1"], p["ar2"])
    a, b = (_as_array(v, dev) for v in (p["ar1"], p["ar2"]))
    if not p["assume_unique"]:
        a, b = _flat_unique(a), _flat_unique(b)
    aux = _sort(_np.concatenate((_m.reshape(a, (-1,)), _m.reshape(b, (-1,)))))
    if aux.size == 0:
        return aux
    edge = _m.reshape(asarray(True, device=dev), (1,))
    flag = _np.concatenate((edge, _np.not_equal(aux[1:], aux[:-1]), edge))
    return _np.extract(_np.logical_and(flag[1:], flag[:-1]), aux)


@register_array(np.sort_complex, arg="a")
def _sort_complex(a: GpuArray, p: dict) -> Any:
    """Sorted by real part, then imaginary part (NaN last as NumPy's complex order), as a complex array."""
    mt = _map_dtype(np.sort_complex(np.zeros(1, a.dtype)).dtype, a.device)
    if mt is None or a.ndim == 0:
        return _FALLBACK
    c = _cast(a, mt)
    order = _np.lexsort(_complex_keys(c), axis=-1)
    return _np.take_along_axis(c, order, axis=-1)


@register(np.setdiff1d)
def _setdiff1d(p: dict) -> Any:
    dev = _device(p["ar1"], p["ar2"])
    a = _as_array(p["ar1"], dev)
    a = _m.reshape(a, (-1,)) if p["assume_unique"] else _flat_unique(a)
    keep = _np.isin(a, p["ar2"], assume_unique=True, invert=True)
    return _np.extract(keep, a)
