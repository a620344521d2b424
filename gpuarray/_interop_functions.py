"""More ``__array_function__`` adapters: NumPy functions that run on the device through the namespace.

Each adapter takes NumPy's signature and gives NumPy's result dtypes and
errors; the work is recorded lazily with gpuarray's functions and ufuncs, so
it fuses like anything else. An adapter that meets arguments it does not
cover returns ``_FALLBACK``, and that call runs on the host as a counted
fallback (see ``_interop``). Results NumPy gives as Python ``bool`` (``allclose``,
``array_equal``) are computed on the device and read back as one value.

Functions whose output shape depends on the data (``unique``, ``nonzero``,
``argwhere``, ``extract``, ``intersect1d`` ...) evaluate their input and
finish the data-dependent step on the host, as the namespace's ``nonzero``
and ``unique_*`` do; their results are put back on the caller's device.

``HOST_BY_DESIGN`` lists functions whose purpose is host output (printing,
saving files): they format or write a host copy and are not counted as
fallbacks. ``numpy.pad``, ``numpy.take`` and the ``nan*`` reductions are in
``namespace/numpy_compat.py``.

>>> import numpy as np, gpuarray as xp
>>> g = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device="cpu")
>>> type(np.trace(g)).__name__, float(np.trace(g)), np.allclose(g, g + 1e-9)
('GpuArray', 5.0, True)
"""

from __future__ import annotations

import builtins
import operator
import string
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import _dtypes, fft, linalg
from ._array import GpuArray
from ._devices import Device
from ._elementwise import apply
from ._interop import (
    _FALLBACK,
    _NOVALUE,
    FUNCTIONS,
    LIKE,
    _as_array,
    _device_from,
    _map_dtype,
    _ToHost,
    _with_like,
    _with_params,
)
from ._ops import OPS
from .namespace import manipulation as _m
from .namespace.creation import arange, asarray, full, zeros
from .namespace.indexing import take as _take
from .namespace.searching import count_nonzero as _count_nonzero
from .namespace.searching_sorted import nonzero as _nonzero
from .namespace.searching_sorted import searchsorted as _searchsorted
from .namespace.sorting import argsort as _argsort
from .namespace.sorting import sort as _sort

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays

# NumPy functions whose purpose is host output: they run on a host copy and are not fallbacks.
HOST_BY_DESIGN: set[Any] = set()


def register(func: Any) -> Callable[[Callable[[dict], Any]], Callable[[dict], Any]]:
    """Register ``impl(p)`` (``p``: NumPy's bound arguments) for the NumPy function ``func``."""
    def deco(impl: Callable[[dict], Any]) -> Callable[[dict], Any]:
        FUNCTIONS[func] = _with_params(func, impl)
        return impl
    return deco


def register_array(func: Any, arg: str = "x", real: bool = False,
                   no_out: bool = False) -> Callable[[Callable[[Any, dict], Any]], Callable[[dict], Any]]:
    """Register ``impl(a, p)`` for ``func`` whose argument ``arg`` must be a GpuArray (``a``; real with
    ``real``, and ``out=None`` with ``no_out``): other calls return ``_FALLBACK`` (they run on the host)."""
    def deco(impl: Callable[[Any, dict], Any]) -> Callable[[dict], Any]:
        def adapter(p: dict) -> Any:
            a = p[arg]
            if not isinstance(a, GpuArray) or (real and a.dtype.kind == "c") or (no_out and p["out"] is not None):
                return _FALLBACK
            return impl(a, p)
        adapter.__name__ = adapter.__qualname__ = impl.__name__
        adapter.__doc__ = impl.__doc__
        return register(func)(adapter)
    return deco


def _along(a: Any, axis: Any) -> tuple[Any, int]:
    """NumPy's ``axis`` argument: ``None`` means the flattened array along axis 0; else the axis,
    normalized (AxisError / TypeError as NumPy gives)."""
    if axis is None:
        return _m.reshape(a, (-1,)), 0
    return a, normalize_axis_index(_int_index(axis), a.ndim)


def _like(func: Any) -> Callable[[Callable[[Any, dict], Any]], Callable[[Any, dict], Any]]:
    """Register ``impl(like, p)`` for the creation function ``func`` called with ``like=`` a GpuArray."""
    def deco(impl: Callable[[Any, dict], Any]) -> Callable[[Any, dict], Any]:
        LIKE[func] = _with_like(func, impl)
        return impl
    return deco


def _w(op: str, *args: Any) -> Any:
    return apply(OPS[op], *args)


def _device(*objs: Any) -> Device:
    """The device of the GpuArrays in ``objs`` (searching lists and tuples); they must agree."""
    found: list[Any] = []

    def walk(o: Any) -> None:
        if isinstance(o, GpuArray):
            found.append(o)
        elif isinstance(o, (list, tuple)):
            for v in o:
                walk(v)
    walk(objs)
    return _device_from(tuple(found), None)


def _probe_dtype(func: Callable[..., Any], *dtypes_or_arrays: Any, **kw: Any) -> np.dtype:
    """The dtype NumPy's ``func`` gives on 1-element stand-ins of these arrays (scalars stay as they are)."""
    args = [np.zeros((1,) * x.ndim, x.dtype) if isinstance(x, (GpuArray, np.ndarray)) else x
            for x in dtypes_or_arrays]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(func(*args, **kw)).dtype


def _cast(x: GpuArray, dt: np.dtype) -> GpuArray:
    return x if x.dtype == dt else x.astype(dt)


def _np_array(x: Any) -> Any:
    """GpuArrays as they are, everything else (lists, scalars) as NumPy would see it."""
    return x if isinstance(x, (GpuArray, np.ndarray)) else np.asarray(x)


def _int_index(x: Any) -> int:
    return operator.index(x)


# ============================================================ counting, searching, sorting
@register_array(np.count_nonzero, "a")
def _count_nonzero_fn(a: GpuArray, p: dict) -> Any:
    axis = p["axis"]
    r = _count_nonzero(a, axis=None if axis is None else (int(axis) if np.ndim(axis) == 0 else tuple(axis)),
                       keepdims=bool(p["keepdims"]))
    dt = _map_dtype(np.dtype(np.intp), a.device)
    return r if dt is None or r.dtype == dt else r.astype(dt)


def _cumulative(np_func: Any, xp_func: Any) -> None:
    @register(np_func)
    def impl(p: dict) -> Any:
        x, axis, out = p["x"], p["axis"], p["out"]
        if not isinstance(x, GpuArray) or out is not None:
            return _FALLBACK
        if x.ndim == 0:
            raise ValueError("For 0-d inputs, cumulative functions need the axis to be None; "
                             "use atleast_1d first")
        want = _map_dtype(_probe_dtype(np_func, x, axis=axis, dtype=p["dtype"],
                                       include_initial=p["include_initial"]), x.device)
        if want is None:
            return _FALLBACK
        return xp_func(_cast(x, want), axis=axis, dtype=want, include_initial=bool(p["include_initial"]))


if hasattr(np, "cumulative_sum"):
    from .namespace.statistical import cumulative_prod as _cprod
    from .namespace.statistical import cumulative_sum as _csum
    _cumulative(np.cumulative_sum, _csum)
    _cumulative(np.cumulative_prod, _cprod)


@register_array(np.nonzero, "a")
def _nonzero_fn(a: GpuArray, p: dict) -> Any:
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use _np.atleast_1d(scalar).nonzero() "
                         "instead.")
    return _nonzero(a)


@register(np.argwhere)
def _argwhere(p: dict) -> Any:
    a = p["a"]
    if not isinstance(a, GpuArray) or a.ndim == 0:
        return _FALLBACK
    idx = _nonzero(a)
    return _m.stack(list(idx), axis=-1)


@register_array(np.flatnonzero, "a")
def _flatnonzero(a: GpuArray, p: dict) -> Any:
    return _nonzero(_m.reshape(a, (-1,)))[0]


@register(np.searchsorted)
def _searchsorted_fn(p: dict) -> Any:
    a, v, side, sorter = p["a"], p["v"], p["side"], p["sorter"]
    if side not in ("left", "right"):
        return _FALLBACK               # NumPy accepts prefixes ('l', 'r') and raises its own errors
    dev = _device(a, v, sorter)
    a = _as_array(a, dev)
    if a.ndim != 1:
        return _FALLBACK
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


@register(np.unique)
def _unique(p: dict) -> Any:
    """``numpy.unique`` with ``axis=None``: the sort runs on the device, the run detection on the host."""
    ar = p["ar"]
    if not isinstance(ar, GpuArray) or p["axis"] is not None:
        return _FALLBACK
    dev = ar.device
    flat = _m.reshape(ar, (-1,))
    want_perm = p["return_index"] or p["return_inverse"]
    if want_perm:
        perm = np.asarray(_argsort(flat, stable=True)).astype(np.intp)
        sv = np.asarray(flat)[perm]
    else:
        sv = np.asarray(_sort(flat))
    mask = _unique_host(sv, bool(p["equal_nan"]))
    ip = _map_dtype(np.dtype(np.intp), dev) or dev.default_int
    out = [asarray(sv[mask], device=dev)]
    if p["return_index"]:
        out.append(asarray(perm[mask].astype(ip), device=dev))
    if p["return_inverse"]:
        inv = np.empty(mask.shape, dtype=ip)
        inv[perm] = np.cumsum(mask) - 1
        out.append(asarray(inv.reshape(ar.shape), device=dev))
    if p["return_counts"]:
        starts = _np.concatenate(np.nonzero(mask) + ([mask.size],))
        out.append(asarray(_np.diff(starts).astype(ip), device=dev))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_variant(np_name: str) -> None:
    func = getattr(np, np_name, None)
    if func is None:
        return
    from .namespace import sets

    @register(func)
    def impl(p: dict) -> Any:
        x = p["x"]
        if not isinstance(x, GpuArray):
            return _FALLBACK
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
    @register(np_func)
    def impl(p: dict) -> Any:
        a, kth, axis = p["a"], p["kth"], p["axis"]
        if not isinstance(a, GpuArray) or p.get("order") is not None or (
                isinstance(kth, GpuArray) or np.asarray(kth).dtype.kind not in "iu"):
            return _FALLBACK
        a, ax = _along(a, axis)
        n = a.shape[ax]
        for k in np.asarray(kth).reshape(-1).tolist():
            if not -n <= k < n:
                raise ValueError(f"kth(={k}) out of bounds ({n})")
        return (_argsort if arg else _sort)(a, axis=ax, stable=True)


_partition(np.partition, False)
_partition(np.argpartition, True)


# ============================================================ manipulation
@register_array(np.take_along_axis, "arr")
def _take_along_axis(arr: Any, p: dict) -> Any:
    from .namespace.indexing import take_along_axis
    indices, axis = p["indices"], p["axis"]
    if axis is None and np.ndim(indices) != 1:
        raise ValueError("when axis=None, `indices` must have a single dimension.")
    arr, ax = _along(arr, axis)
    return take_along_axis(arr, indices, axis=ax)


@register(np.repeat)
def _repeat(p: dict) -> Any:
    a, repeats, axis = p["a"], p["repeats"], p["axis"]
    if not isinstance(a, GpuArray):
        return _FALLBACK
    if not isinstance(repeats, (int, np.integer, GpuArray)):
        repeats = np.asarray(repeats)
        if repeats.dtype.kind not in "iu":
            return _FALLBACK
        if repeats.ndim == 0:
            repeats = int(repeats)
    return _m.repeat(a, repeats, axis=None if axis is None else _int_index(axis))  # type: ignore[arg-type]


@register(np.tile)
def _tile(p: dict) -> Any:
    A, reps = p["A"], p["reps"]
    if not isinstance(A, GpuArray) or isinstance(reps, GpuArray):
        return _FALLBACK
    return _m.tile(A, reps if isinstance(reps, (int, np.integer)) else tuple(reps))  # type: ignore[arg-type]


@register(np.roll)
def _roll(p: dict) -> Any:
    a, shift, axis = p["a"], p["shift"], p["axis"]
    if not isinstance(a, GpuArray) or isinstance(shift, GpuArray):
        return _FALLBACK
    shift = _int_index(shift) if np.ndim(shift) == 0 else tuple(int(s) for s in np.asarray(shift).reshape(-1))
    if axis is not None and np.ndim(axis) != 0:
        axis = tuple(_int_index(v) for v in axis)
    elif axis is not None:
        axis = _int_index(axis)
    if axis is None and isinstance(shift, tuple):
        return _FALLBACK
    return _m.roll(a, shift, axis=axis)


@register(np.diff)
def _diff(p: dict) -> Any:
    from .namespace.utility import diff
    a, n, axis = p["a"], p["n"], p["axis"]
    if not isinstance(a, GpuArray):
        return _FALLBACK
    n = _int_index(n)
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


@register(np.unstack) if hasattr(np, "unstack") else (lambda f: f)
def _unstack(p: dict) -> Any:
    x = p["x"]
    if not isinstance(x, GpuArray):
        return _FALLBACK
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    return _m.unstack(x, axis=_int_index(p["axis"]))


@register(np.rollaxis)
def _rollaxis(p: dict) -> Any:
    a, axis, start = p["a"], p["axis"], p["start"]
    if not isinstance(a, GpuArray):
        return _FALLBACK
    n = a.ndim
    axis = normalize_axis_index(_int_index(axis), n)
    start = _int_index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return GpuArray(a._node)
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return _m.permute_dims(a, tuple(axes))


@register(np.rot90)
def _rot90(p: dict) -> Any:
    m, k, axes = p["m"], p["k"], p["axes"]
    if not isinstance(m, GpuArray):
        return _FALLBACK
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if axes[0] >= m.ndim or axes[0] < -m.ndim or axes[1] >= m.ndim or axes[1] < -m.ndim:
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k = _int_index(k) % 4
    if k == 0:
        return GpuArray(m._node)
    if k == 2:
        return _m.flip(_m.flip(m, axis=axes[0]), axis=axes[1])
    order = list(range(m.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return _m.permute_dims(_m.flip(m, axis=axes[1]), tuple(order))
    return _m.flip(_m.permute_dims(m, tuple(order)), axis=axes[1])


@register(np.resize)
def _resize(p: dict) -> Any:
    a, new_shape = p["a"], p["new_shape"]
    if not isinstance(a, GpuArray):
        return _FALLBACK
    idx = np.resize(np.arange(a.size, dtype=np.int64), new_shape)      # NumPy's own index map
    if a.size == 0:
        return zeros(idx.shape, dtype=a.dtype, device=a.device)
    return _take(_m.reshape(a, (-1,)), asarray(idx.reshape(-1), device=a.device)).reshape(idx.shape)


@register_array(np.delete, "arr")
def _delete(arr: Any, p: dict) -> Any:
    obj = p["obj"]
    arr, ax = _along(arr, p["axis"])
    if isinstance(obj, GpuArray):
        obj = obj.get()
    keep = np.delete(np.arange(arr.shape[ax], dtype=np.int64), obj)   # NumPy's own index map (and errors)
    return _take(arr, asarray(keep, device=arr.device), axis=ax)


def _stack_kw(p: dict) -> dict:
    return {k: p[k] for k in ("dtype", "casting") if k in p and p[k] is not None}


@register(np.vstack)
def _vstack(p: dict) -> Any:
    tup = p["tup"]
    if not isinstance(tup, (list, tuple)) or not tup:
        return _FALLBACK
    return _np.concatenate(_np.atleast_2d(*tup) if len(tup) > 1 else [_np.atleast_2d(tup[0])], axis=0,
                          **_stack_kw(p))


@register(np.hstack)
def _hstack(p: dict) -> Any:
    tup = p["tup"]
    if not isinstance(tup, (list, tuple)) or not tup:
        return _FALLBACK
    arrs = _np.atleast_1d(*tup) if len(tup) > 1 else [_np.atleast_1d(tup[0])]
    return _np.concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1, **_stack_kw(p))


@register(np.dstack)
def _dstack(p: dict) -> Any:
    tup = p["tup"]
    if not isinstance(tup, (list, tuple)) or not tup:
        return _FALLBACK
    arrs = _np.atleast_3d(*tup) if len(tup) > 1 else [_np.atleast_3d(tup[0])]
    return _np.concatenate(arrs, axis=2)


@register(np.column_stack)
def _column_stack(p: dict) -> Any:
    tup = p["tup"]
    if not isinstance(tup, (list, tuple)) or not tup:
        return _FALLBACK
    dev = _device(tup)
    arrs = []
    for v in tup:
        v = _as_array(v, dev)
        arrs.append(_m.reshape(v, (-1, 1)) if v.ndim < 2 else v)
    return _np.concatenate(arrs, axis=1)


@register(np.append)
def _append(p: dict) -> Any:
    arr, values, axis = p["arr"], p["values"], p["axis"]
    dev = _device(arr, values)
    arr = _as_array(arr, dev)
    if axis is None:
        arr = _m.reshape(arr, (-1,)) if arr.ndim != 1 else arr
        values = _m.reshape(_as_array(values, dev), (-1,))
        axis = arr.ndim - 1
    return _np.concatenate((arr, values), axis=axis)


def _block_depth(x: Any) -> int:
    return 1 + _block_depth(x[0]) if isinstance(x, list) and x else (1 if isinstance(x, list) else 0)


@register(np.block)
def _block(p: dict) -> Any:
    arrays = p["arrays"]
    if not isinstance(arrays, list):
        return _FALLBACK if not isinstance(arrays, GpuArray) else GpuArray(arrays._node)
    depth = _block_depth(arrays)
    dev = _device(arrays)
    leaves: list[Any] = []

    def collect(x: Any, d: int) -> None:
        if isinstance(x, list):
            if d == depth or not x:
                raise ValueError("List depths are mismatched, or a list is empty")
            for v in x:
                collect(v, d + 1)
        elif isinstance(x, tuple):
            raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and np.block does "
                            "not allow implicit conversion from tuple to ndarray.")
        else:
            if d != depth:
                raise ValueError("List depths are mismatched")
            leaves.append(x)
    collect(arrays, 0)
    ndim = builtins.max([depth] + [np.ndim(v) for v in leaves])

    def build(x: Any, d: int) -> Any:
        if not isinstance(x, list):
            a = _as_array(x, dev)
            return _m.reshape(a, (1,) * (ndim - a.ndim) + a.shape) if a.ndim < ndim else a
        return _np.concatenate([build(v, d + 1) for v in x], axis=-(depth - d))
    return build(arrays, 0)


def _split_views(a: GpuArray, cuts: list[int], axis: int) -> list[GpuArray]:
    pre = (slice(None),) * axis
    bounds = [0] + cuts + [a.shape[axis]]
    return [a[pre + (slice(lo, builtins.max(lo, hi)),)] for lo, hi in zip(bounds[:-1], bounds[1:])]


def _cuts(n: int, sections: Any, even: bool) -> list[int] | None:
    if np.ndim(sections) != 0:
        return [_int_index(i) for i in sections]
    k = _int_index(sections)
    if k <= 0:
        raise ValueError("number sections must be larger than 0.")
    if even and n % k:
        raise ValueError("array split does not result in an equal division")
    each, extra = divmod(n, k)
    sizes = [each + 1] * extra + [each] * (k - extra)
    return list(np.cumsum(sizes)[:-1].tolist())


def _splitter(np_func: Any, even: bool, fixed_axis: int | None = None, min_ndim: int = 0) -> None:
    @register(np_func)
    def impl(p: dict) -> Any:
        a = p["ary"]
        if not isinstance(a, GpuArray) or isinstance(p["indices_or_sections"], GpuArray):
            return _FALLBACK
        if fixed_axis is None:
            axis = p["axis"]
        else:
            if a.ndim < min_ndim:
                raise ValueError(f"{np_func.__name__} only works on arrays of {min_ndim} or more dimensions")
            axis = 1 if fixed_axis == 1 and a.ndim > 1 else (0 if fixed_axis == 1 else fixed_axis)
        ax = normalize_axis_index(_int_index(axis), a.ndim)
        cuts = _cuts(a.shape[ax], p["indices_or_sections"], even)
        return _split_views(a, cuts or [], ax)


_splitter(np.split, True)
_splitter(np.array_split, False)
_splitter(np.hsplit, True, 1, 1)
_splitter(np.vsplit, True, 0, 2)
_splitter(np.dsplit, True, 2, 3)


@register(np.meshgrid)
def _meshgrid(p: dict) -> Any:
    xi, sparse, indexing = p["xi"], p["sparse"], p["indexing"]
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    dev = _device(xi)
    arrays = [_m.reshape(_as_array(x, dev), (-1,)) for x in xi]
    ndim = len(arrays)
    out = []
    for i, x in enumerate(arrays):
        shape = [1] * ndim
        shape[i] = x.shape[0]
        if indexing == "xy" and ndim > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        out.append(_m.reshape(x, tuple(shape)))
    if not sparse and out:
        out = _m.broadcast_arrays(*out)
    return tuple(out)


@register(np.ix_)
def _ix(p: dict) -> Any:
    args = p["args"]
    dev = _device(args)
    out = []
    nd = len(args)
    for k, v in enumerate(args):
        a = _as_array(v, dev)
        if a.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if a.dtype == _dtypes.bool_:
            (a,) = _nonzero(a)
        out.append(_m.reshape(a, (1,) * k + (a.size,) + (1,) * (nd - k - 1)))
    return tuple(out)


# ============================================================ triangles and diagonals
def _diagonal_view(a: GpuArray, offset: int, axis1: int, axis2: int) -> GpuArray:
    a1 = normalize_axis_index(_int_index(axis1), a.ndim)
    a2 = normalize_axis_index(_int_index(axis2), a.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    return linalg.diagonal(_m.moveaxis(a, (a1, a2), (-2, -1)), offset=_int_index(offset))


@register_array(np.diagonal, "a")
def _diagonal(a: GpuArray, p: dict) -> Any:
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    return _diagonal_view(a, p["offset"], p["axis1"], p["axis2"])


@register_array(np.trace, "a")
def _trace(a: GpuArray, p: dict) -> Any:
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    d = _diagonal_view(a, p["offset"], p["axis1"], p["axis2"])
    return _np.sum(d, axis=-1, dtype=p["dtype"], out=p["out"])


def _triangle(np_func: Any, lower: bool) -> None:
    from .namespace.creation import tril, triu

    @register(np_func)
    def impl(p: dict) -> Any:
        m = p["m"]
        if not isinstance(m, GpuArray) or m.ndim == 0:
            return _FALLBACK
        if m.ndim == 1:
            m = _m.broadcast_to(m, (m.shape[0], m.shape[0]))
        return (tril if lower else triu)(m, k=_int_index(p["k"]))


_triangle(np.tril, True)
_triangle(np.triu, False)


@register(np.diag)
def _diag(p: dict) -> Any:
    v, k = p["v"], _int_index(p["k"])
    if not isinstance(v, GpuArray):
        return _FALLBACK
    if v.ndim == 2:
        return linalg.diagonal(v, offset=k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = v.shape[0]
    size = n + abs(k)
    it = v.device.default_int
    i = _m.reshape(arange(size, dtype=it, device=v.device), (size, 1))
    j = arange(size, dtype=it, device=v.device)
    hit = _w("equal", _w("subtract", j, i), k)
    src = i if k >= 0 else j
    if n == 0:
        return zeros((size, size), dtype=v.dtype, device=v.device)
    vals = _take(v, _w("minimum", src, n - 1) if size > 0 else src, axis=0)
    return _w("where", hit, vals, zeros((), dtype=v.dtype, device=v.device))


@register_array(np.diagflat, "v")
def _diagflat(v: GpuArray, p: dict) -> Any:
    return _np.diag(_m.reshape(v, (-1,)), k=p["k"])


def _index_from(np_func: Any, host_func: Callable[..., Any], arg: str, extra: tuple[str, ...] = ()) -> None:
    """``*_indices_from(arr)``: computed from the shape alone, uploaded; no data is read."""
    @register(np_func)
    def impl(p: dict) -> Any:
        a = p[arg]
        if not isinstance(a, GpuArray):
            return _FALLBACK
        host = host_func(np.broadcast_to(np.zeros((), a.dtype), a.shape), *(p[k] for k in extra))
        return tuple(asarray(h, device=a.device) for h in host)


_index_from(np.tril_indices_from, np.tril_indices_from, "arr", ("k",))
_index_from(np.triu_indices_from, np.triu_indices_from, "arr", ("k",))
_index_from(np.diag_indices_from, np.diag_indices_from, "arr")


# ============================================================ products
@register(np.outer)
def _outer(p: dict) -> Any:
    a, b, out = p["a"], p["b"], p["out"]
    dev = _device(a, b, out)
    a = _m.reshape(_as_array(a, dev), (-1, 1))
    b = _m.reshape(_as_array(b, dev), (1, -1))
    return _np.multiply(a, b) if out is None else _np.multiply(a, b, out=out)


@register(np.inner)
def _inner(p: dict) -> Any:
    a, b = p["a"], p["b"]
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _np.multiply(a, b)
    if _probe_dtype(np.inner, _np_array(a), _np_array(b)) == _dtypes.bool_:
        return _FALLBACK
    if np.shape(a)[-1] != np.shape(b)[-1]:
        raise ValueError("shapes not aligned: last dimensions differ")
    return _np.tensordot(a, b, axes=([-1], [-1]))


@register(np.vdot)
def _vdot(p: dict) -> Any:
    a, b = p["a"], p["b"]
    dev = _device(a, b)
    a, b = (_m.reshape(_as_array(x, dev), (-1,)) for x in (a, b))
    if a.shape != b.shape:
        raise ValueError("cannot reshape array: vdot needs inputs of the same size")
    return _np.dot(a, b)


@register(np.kron)
def _kron(p: dict) -> Any:
    dev = _device(p["a"], p["b"])
    a, b = _as_array(p["a"], dev), _as_array(p["b"], dev)
    if a.ndim == 0 or b.ndim == 0:
        return _np.multiply(a, b)
    nd = builtins.max(a.ndim, b.ndim)
    as_ = (1,) * (nd - a.ndim) + a.shape
    bs = (1,) * (nd - b.ndim) + b.shape
    a2 = _m.reshape(a, tuple(v for s in as_ for v in (s, 1)))
    b2 = _m.reshape(b, tuple(v for s in bs for v in (1, s)))
    return _m.reshape(_np.multiply(a2, b2), tuple(x * y for x, y in zip(as_, bs)))


@register(np.cross)
def _cross(p: dict) -> Any:
    a, b = p["a"], p["b"]
    if p["axis"] is not None or (p["axisa"], p["axisb"], p["axisc"]) != (-1, -1, -1):
        return _FALLBACK
    dev = _device(a, b)
    a, b = _as_array(a, dev), _as_array(b, dev)
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != 3 or b.shape[-1] != 3:
        return _FALLBACK
    dt = _map_dtype(np.result_type(a.dtype, b.dtype), dev)
    if dt is None or dt == _dtypes.bool_:
        return _FALLBACK
    a, b = _m.broadcast_arrays(_cast(a, dt), _cast(b, dt))
    return linalg.cross(a, b)


@register(np.einsum)
def _einsum(p: dict) -> Any:
    """``einsum`` as broadcasting products and one sum: each operand is permuted and reshaped onto
    the letters of the expression, multiplied (fused) and summed over the letters not in the output."""
    operands, kwargs = p["operands"], p.get("kwargs") or {}
    if p["out"] is not None or set(kwargs) - {"order", "casting"} or not operands or \
            not isinstance(operands[0], str):
        return _FALLBACK
    subs, arrays = operands[0].replace(" ", ""), list(operands[1:])
    dev = _device(arrays)
    arrays = [_as_array(x, dev) for x in arrays]
    if "->" in subs:
        ins, out = subs.split("->")
    else:
        ins, out = subs, None
    terms = ins.split(",")
    if len(terms) != len(arrays):
        return _FALLBACK              # NumPy's own error
    letters = set(string.ascii_letters)
    free = [c for c in string.ascii_letters if c not in subs]
    nell = builtins.max([x.ndim - len(t.replace("...", "")) for t, x in zip(terms, arrays) if "..." in t] or [0])
    ell = "".join(free[:nell])
    expanded = []
    for t, x in zip(terms, arrays):
        if "..." in t:
            k = x.ndim - len(t.replace("...", ""))
            t = t.replace("...", ell[nell - k:] if k else "")
        if len(t) != x.ndim or not set(t) <= letters or len(set(t)) != len(t):
            return _FALLBACK          # wrong ranks (NumPy's error) or a repeated letter (a diagonal)
        expanded.append(t)
    if out is None:
        counts: dict[str, int] = {}
        for t in expanded:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c in counts if counts[c] == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
        if len(set(out)) != len(out) or not set(out) <= set("".join(expanded)):
            return _FALLBACK
    dt = _map_dtype(_probe_dtype(lambda *z: np.einsum(subs, *z), *arrays), dev)
    if dt is None or dt == _dtypes.bool_:
        return _FALLBACK
    order = list(out) + sorted(set("".join(expanded)) - set(out))
    sizes: dict[str, int] = {}
    product = None
    for t, x in zip(expanded, arrays):
        for c, s in zip(t, x.shape):
            if sizes.get(c, s) != s and 1 not in (s, sizes.get(c, s)):
                raise ValueError(f"operands could not be broadcast together: dimension {c!r} has sizes "
                                 f"{sizes[c]} and {s}")
            sizes[c] = builtins.max(sizes.get(c, s), s) if s != 1 else sizes.get(c, s)
        present = [c for c in order if c in t]
        y = _m.permute_dims(_cast(x, dt), tuple(t.index(c) for c in present))
        y = _m.reshape(y, tuple(x.shape[t.index(c)] if c in t else 1 for c in order))
        product = y if product is None else _w("multiply", product, y)
    assert product is not None
    full_shape = tuple(sizes[c] for c in order)
    if product.shape != full_shape:
        product = _m.broadcast_to(product, full_shape)
    if len(order) == len(out):
        return product
    from .namespace.statistical import sum as xsum
    return xsum(product, axis=tuple(range(len(out), len(order))), dtype=dt)


@register(np.einsum_path)
def _einsum_path(p: dict) -> Any:
    """Only shapes matter: NumPy plans on zero-strided stand-ins, so no data moves."""
    ops = [np.broadcast_to(np.zeros((), x.dtype), x.shape) if isinstance(x, GpuArray) else x
           for x in p["operands"]]
    return np.einsum_path(*ops, optimize=p["optimize"], einsum_call=p["einsum_call"])


# ============================================================ comparisons with a host answer
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


@register(np.isin)
def _isin(p: dict) -> Any:
    """Sort the test values on the device, binary-search each element, compare (NaN is never found)."""
    dev = _device(p["element"], p["test_elements"])
    e, t = _as_array(p["element"], dev), _as_array(p["test_elements"], dev)
    if e.dtype not in _dtypes.ALL_DTYPES or t.dtype not in _dtypes.ALL_DTYPES or p["kind"] not in (None, "sort"):
        return _FALLBACK
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


# ============================================================ statistics
@register_array(np.ptp, "a")
def _ptp(a: GpuArray, p: dict) -> Any:
    kw = {"axis": p["axis"], "keepdims": p["keepdims"]}
    r = _np.subtract(_np.max(a, **kw), _np.min(a, **kw))
    if p["out"] is not None:
        _np.copyto(p["out"], r, casting="unsafe")
        return p["out"]
    return r


@register(np.median)
def _median(p: dict) -> Any:
    """Sort along the reduced axes (on the device), average the middle one or two, NaN if a NaN sorted last."""
    a, axis, keepdims = p["a"], p["axis"], bool(p["keepdims"])
    if not isinstance(a, GpuArray) or p["out"] is not None or a.size == 0 or a.dtype not in _dtypes.NUMERIC:
        return _FALLBACK
    axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
    rest = [i for i in range(a.ndim) if i not in axes]
    x = _m.permute_dims(a, tuple(rest + list(axes)))
    x = _m.reshape(x, tuple(a.shape[i] for i in rest) + (-1,))
    s = _sort(x, axis=-1)
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


# ============================================================ writing into an argument (rebinds it)
def _host_values(values: Any, dtype: np.dtype) -> np.ndarray:
    """Values to write into an array of ``dtype``, converted as NumPy's assignment converts them:
    Python ints out of range raise OverflowError, arrays are cast unsafely."""
    if isinstance(values, (bool, int, float)):
        return np.array(values, dtype=dtype)
    with np.errstate(all="ignore"):
        return np.asarray(values).astype(dtype)


@register(np.copyto)
def _copyto(p: dict) -> Any:
    dst, src, casting, where = p["dst"], p["src"], p["casting"], p["where"]
    if not isinstance(dst, GpuArray):
        return _FALLBACK
    dev = dst.device
    if isinstance(src, (bool, int, float)) and not isinstance(src, np.generic):
        if not np.can_cast(np.result_type(dst.dtype, src), dst.dtype, casting=casting) and casting != "unsafe":
            raise TypeError(f"Cannot cast scalar from {type(src).__name__} to {dst.dtype} according to the rule "
                            f"{casting!r}")
        with np.errstate(all="ignore"):
            value = full((), np.array(src).astype(dst.dtype)[()].item(), dtype=dst.dtype, device=dev)
    else:
        value = _as_array(src, dev)
        if not np.can_cast(value.dtype, dst.dtype, casting=casting):
            raise TypeError(f"Cannot cast array data from {value.dtype!r} to {dst.dtype!r} according to the rule "
                            f"{casting!r}")
        value = _cast(value, dst.dtype)
    value = _m.broadcast_to(value, dst.shape)
    if where is not True:
        value = _w("where", _m.broadcast_to(_cast(_as_array(where, dev), _dtypes.bool_), dst.shape), value, dst)
    dst._node = value._node
    return None


@register(np.putmask)
def _putmask(p: dict) -> Any:
    a, mask, values = p["a"], p["mask"], p["values"]
    if not isinstance(a, GpuArray):
        return _FALLBACK
    dev = a.device
    m = _cast(_as_array(mask, dev), _dtypes.bool_)
    if m.shape != a.shape:
        raise ValueError("putmask: mask and data must be the same size")
    v = _cast(values, a.dtype) if isinstance(values, GpuArray) else asarray(_host_values(values, a.dtype), device=dev)
    if v.size == 1:
        v = _m.reshape(v, ())
    elif v.size == a.size:
        v = _m.reshape(v, a.shape)
    else:
        return _FALLBACK              # values repeated cyclically
    a._node = _w("where", m, v, a)._node
    return None


@register(np.put_along_axis)
def _put_along_axis(p: dict) -> Any:
    arr, indices, values, axis = p["arr"], p["indices"], p["values"], p["axis"]
    if not isinstance(arr, GpuArray) or axis is None:
        return _FALLBACK
    idx = indices.get() if isinstance(indices, GpuArray) else np.asarray(indices)
    if idx.dtype.kind not in "iu" or idx.ndim != arr.ndim:
        return _FALLBACK
    ax = normalize_axis_index(_int_index(axis), arr.ndim)
    key = tuple(idx if d == ax else np.arange(s).reshape((1,) * d + (s,) + (1,) * (arr.ndim - d - 1))
                for d, s in enumerate(arr.shape))
    arr[key] = _cast(values, arr.dtype) if isinstance(values, GpuArray) else _host_values(values, arr.dtype)
    return None


@register(np.fill_diagonal)
def _fill_diagonal(p: dict) -> Any:
    a, val, wrap = p["a"], p["val"], p["wrap"]
    if not isinstance(a, GpuArray) or a.ndim < 2:
        return _FALLBACK
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = builtins.min(a.shape)
    if a.ndim == 2 and wrap and a.shape[0] > a.shape[1] + 1:
        return _FALLBACK
    i = np.arange(n)
    vals = _host_values(val.get() if isinstance(val, GpuArray) else val, a.dtype)
    if vals.ndim > 0:
        vals = np.resize(vals, n)
    a[(i,) * a.ndim] = vals
    return None


@register(np.put)
def _put(p: dict) -> Any:
    a, ind, v, mode = p["a"], p["ind"], p["v"], p["mode"]
    if not isinstance(a, GpuArray) or mode != "raise":
        return _FALLBACK
    idx = ind.get() if isinstance(ind, GpuArray) else np.asarray(ind)
    vals = _host_values(v.get() if isinstance(v, GpuArray) else v, a.dtype)
    if idx.dtype.kind not in "iu":
        return _FALLBACK
    if vals.size not in (1, idx.size) or idx.size == 0:
        return _FALLBACK
    flat = _m.reshape(a, (-1,))
    flat[idx.reshape(-1)] = vals.reshape(-1) if vals.size > 1 else vals.reshape(())
    a._node = _m.reshape(flat, a.shape)._node
    return None


@register(np.select)
def _select(p: dict) -> Any:
    condlist, choicelist, default = list(p["condlist"]), list(p["choicelist"]), p["default"]
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    dev = _device(condlist, choicelist, default)
    choices = [c if type(c) in (int, float) else _as_array(c, dev) for c in choicelist + [default]]
    dt = _map_dtype(np.result_type(*(c.dtype if isinstance(c, GpuArray) else c for c in choices)), dev)
    if dt is None:
        return _FALLBACK
    conds = [_as_array(c, dev) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != _dtypes.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    arrs = [_cast(c, dt) if isinstance(c, GpuArray) else full((), c, dtype=dt, device=dev) for c in choices]
    result = arrs[-1]
    for c, v in zip(conds[::-1], arrs[-2::-1]):
        result = _w("where", c, v, result)
    shape = np.broadcast_shapes(*(x.shape for x in conds + arrs))
    return _m.broadcast_to(result, shape) if result.shape != shape else result


@register(np.extract)
def _extract(p: dict) -> Any:
    dev = _device(p["condition"], p["arr"])
    cond = _m.reshape(_as_array(p["condition"], dev), (-1,))
    arr = _m.reshape(_as_array(p["arr"], dev), (-1,))
    (idx,) = _nonzero(cond)
    return _take(arr, idx)


@register(np.compress)
def _compress(p: dict) -> Any:
    condition, a, axis = p["condition"], p["a"], p["axis"]
    if not isinstance(a, GpuArray) or p["out"] is not None:
        return _FALLBACK
    cond = condition.get() if isinstance(condition, GpuArray) else np.asarray(condition)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    a, ax = _along(a, axis)
    (idx,) = np.nonzero(cond)
    if idx.size and idx[-1] >= a.shape[ax]:
        raise IndexError(f"index {idx[-1]} is out of bounds for axis {ax} with size {a.shape[ax]}")
    return _take(a, asarray(idx.astype(np.int64), device=a.device), axis=ax)


# ============================================================ sets
def _flat_unique(x: Any) -> Any:
    return _np.unique(_m.reshape(x, (-1,)))


@register(np.union1d)
def _union1d(p: dict) -> Any:
    dev = _device(p["ar1"], p["ar2"])
    a, b = (_m.reshape(_as_array(v, dev), (-1,)) for v in (p["ar1"], p["ar2"]))
    return _np.unique(_np.concatenate((a, b)))


@register(np.intersect1d)
def _intersect1d(p: dict) -> Any:
    if p["return_indices"]:
        return _FALLBACK
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


@register(np.setdiff1d)
def _setdiff1d(p: dict) -> Any:
    dev = _device(p["ar1"], p["ar2"])
    a = _as_array(p["ar1"], dev)
    a = _m.reshape(a, (-1,)) if p["assume_unique"] else _flat_unique(a)
    keep = _np.isin(a, p["ar2"], assume_unique=True, invert=True)
    return _np.extract(keep, a)


# ============================================================ elementwise helpers
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
    @register(np_func)
    def impl(p: dict) -> Any:
        x, out = p["x"], p["out"]
        if not isinstance(x, GpuArray) or out is not None or x.dtype not in _dtypes.ALL_DTYPES:
            return _FALLBACK
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


@register_array(np.real_if_close, "a", real=True)
def _real_if_close(a: GpuArray, p: dict) -> Any:
    return GpuArray(a._node)


@register_array(np.angle, "z", real=True)
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


@register(np.trapezoid) if hasattr(np, "trapezoid") else (lambda f: f)
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


@register(np.vander)
def _vander(p: dict) -> Any:
    x, n, increasing = p["x"], p["N"], p["increasing"]
    if not isinstance(x, GpuArray):
        return _FALLBACK
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = x.shape[0] if n is None else _int_index(n)
    dt = _map_dtype(np.promote_types(x.dtype, int), x.device)
    if dt is None or dt == _dtypes.bool_:
        return _FALLBACK
    from .namespace.statistical import cumulative_prod
    xs = _cast(x, dt)
    if n == 0:
        return zeros((x.shape[0], 0), dtype=dt, device=x.device)
    cols = _m.broadcast_to(_m.reshape(xs, (-1, 1)), (x.shape[0], n - 1))
    ones = full((x.shape[0], 1), 1, dtype=dt, device=x.device)
    v = _m.concat([ones, cumulative_prod(cols, axis=1, dtype=dt)], axis=1) if n > 1 else ones
    return v if increasing else _m.flip(v, axis=1)


@register(np.polyval)
def _polyval(p: dict) -> Any:
    pc, x = p["p"], p["x"]
    if isinstance(pc, np.poly1d) or isinstance(x, np.poly1d):
        return _FALLBACK
    dev = _device(pc, x)
    pa = pc if isinstance(pc, GpuArray) else np.asarray(pc)
    xa = _as_array(x, dev)
    y = _np.zeros_like(xa)
    for i in range(pa.shape[0]):
        y = _np.add(_np.multiply(y, xa), pa[i])
    return y


@register(np.gradient)
def _gradient(p: dict) -> Any:
    """Uniform spacing (scalar or no ``varargs``) with ``edge_order`` 1 or 2, NumPy's formulas."""
    f, varargs, axis, edge_order = p["f"], p["varargs"], p["axis"], p["edge_order"]
    if not isinstance(f, GpuArray) or f.dtype not in _dtypes.NUMERIC:
        return _FALLBACK
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
    otype = f.dtype if f.dtype.kind == "f" else _map_dtype(_dtypes.float64, f.device)
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


@register_array(np.ediff1d, "ary")
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


@register(np.unravel_index)
def _unravel_index(p: dict) -> Any:
    indices, shape, order = p["indices"], p["shape"], p["order"]
    if not isinstance(indices, GpuArray) or order not in ("C", "F"):
        return _FALLBACK
    if indices.dtype.kind not in "iu":
        raise TypeError("only int indices permitted")
    dims = (_int_index(shape),) if np.ndim(shape) == 0 else tuple(_int_index(s) for s in shape)
    size = int(np.prod(dims, dtype=np.int64))
    it = _map_dtype(np.dtype(np.intp), indices.device) or indices.device.default_int
    idx = _cast(indices, it)
    if builtins.bool(_np.any(_np.logical_or(_np.less(idx, 0), _np.greater_equal(idx, size)))):
        raise ValueError(f"index out of bounds for array with size {size}")
    out = []
    rem: Any = idx
    for d in (reversed(dims) if order == "C" else dims):
        out.append(_np.remainder(rem, d) if d else rem)
        rem = _np.floor_divide(rem, d) if d else rem
    return tuple(out[::-1] if order == "C" else out)


# ============================================================ dtype-only questions
@register(np.common_type)
def _common_type(p: dict) -> Any:
    return np.common_type(*(np.zeros(0, a.dtype) if isinstance(a, GpuArray) else a for a in p["arrays"]))


@register(np.min_scalar_type)
def _min_scalar_type(p: dict) -> Any:
    a = p["a"]
    return a.dtype if a.ndim else np.min_scalar_type(a.get())


def _memory(p: dict) -> Any:
    """GpuArrays are values: writing one never changes another, so only the same object shares memory."""
    return p["a"] is p["b"]


register(np.shares_memory)(_memory)
register(np.may_share_memory)(_memory)


# ============================================================ host output by design
def _host_output(func: Any) -> None:
    def impl(*args: Any, **kwargs: Any) -> Any:
        conv = _ToHost()
        return func(*(conv(a) for a in args), **{k: conv(v) for k, v in kwargs.items()})
    FUNCTIONS[func] = impl
    HOST_BY_DESIGN.add(func)


for _f in (np.array2string, np.array_repr, np.array_str, np.save, np.savez, np.savez_compressed, np.savetxt):
    _host_output(_f)


# ============================================================ like=
@_like(np.tri)
def _tri(like: Any, p: dict) -> Any:
    from .namespace.creation import tril
    n, m = _int_index(p["N"]), _int_index(p["N"] if p["M"] is None else p["M"])
    dt = np.dtype(p["dtype"])
    if _map_dtype(dt, like.device) != dt:
        return _FALLBACK
    return tril(full((n, m), 1, dtype=dt, device=like.device), k=_int_index(p["k"]))


# ============================================================ numpy.linalg
def _linalg_float(x: GpuArray) -> np.dtype | None:
    """NumPy linalg's dtype for ``x``: floats keep theirs, the rest become float64 (as the device has it)."""
    return _map_dtype(x.dtype if x.dtype.kind == "f" else _dtypes.float64, x.device)


def _linalg(np_func: Any, xp_name: str, arg: str = "a", extra: Callable[[dict], dict | None] | None = None) -> None:
    xp_func = getattr(linalg, xp_name)

    @register(np_func)
    def impl(p: dict) -> Any:
        x = p[arg]
        if not isinstance(x, GpuArray):
            return _FALLBACK
        dt = _linalg_float(x)
        kw = {} if extra is None else extra(p)
        if dt is None or kw is None:
            return _FALLBACK
        return xp_func(_cast(x, dt), **kw)


def _no_uplo(p: dict) -> dict | None:
    return {} if p.get("UPLO", "L") in ("L", "l") else None


_linalg(np.linalg.det, "det")
_linalg(np.linalg.slogdet, "slogdet")
_linalg(np.linalg.inv, "inv")
_linalg(np.linalg.cholesky, "cholesky", extra=lambda p: {"upper": bool(p["upper"])})
_linalg(np.linalg.eigh, "eigh", extra=_no_uplo)
_linalg(np.linalg.eigvalsh, "eigvalsh", extra=_no_uplo)
_linalg(np.linalg.svdvals, "svdvals", arg="x")
_linalg(np.linalg.qr, "qr", extra=lambda p: {"mode": p["mode"]} if p["mode"] in ("reduced", "complete") else None)
_linalg(np.linalg.svd, "svd", extra=lambda p: None if p["hermitian"] or not p["compute_uv"]
        else {"full_matrices": bool(p["full_matrices"])})
_linalg(np.linalg.pinv, "pinv", extra=lambda p: None if p["hermitian"] or isinstance(p["rcond"], GpuArray) else
        {"rtol": p["rcond"] if p["rcond"] is not None else (None if p["rtol"] is _NOVALUE else p["rtol"])})
_linalg(np.linalg.matrix_rank, "matrix_rank", arg="A", extra=lambda p: None if p["tol"] is not None or
        p["hermitian"] or p["A"].ndim < 2 else {"rtol": p["rtol"]})


@register(np.linalg.solve)
def _solve(p: dict) -> Any:
    dev = _device(p["a"], p["b"])
    a, b = _as_array(p["a"], dev), _as_array(p["b"], dev)
    dt = _map_dtype(np.result_type(*(x.dtype if x.dtype.kind == "f" else _dtypes.float64 for x in (a, b))), dev)
    if dt is None or dt.kind != "f":
        return _FALLBACK
    return linalg.solve(_cast(a, dt), _cast(b, dt))


@register(np.linalg.matrix_power)
def _matrix_power(p: dict) -> Any:
    a, n = p["a"], p["n"]
    if not isinstance(a, GpuArray) or a.dtype == _dtypes.bool_:
        return _FALLBACK
    n = _int_index(n)
    if n < 0:
        dt = _linalg_float(a)
        if dt is None:
            return _FALLBACK
        a = _cast(a, dt)
    return linalg.matrix_power(a, n)


@register(np.linalg.multi_dot)
def _multi_dot(p: dict) -> Any:
    arrays, out = p["arrays"], p["out"]
    if out is not None or len(arrays) < 2:
        return _FALLBACK
    dev = _device(arrays)
    arrs = [_as_array(a, dev) for a in arrays]
    if arrs[0].ndim not in (1, 2) or arrs[-1].ndim not in (1, 2) or any(a.ndim != 2 for a in arrs[1:-1]):
        raise np.linalg.LinAlgError("multi_dot: the first and last arrays must be 1-D or 2-D, the others 2-D")
    r = arrs[0]
    for a in arrs[1:]:
        r = _np.matmul(r, a)
    return r


def _norm_float(x: GpuArray) -> GpuArray | None:
    dt = _linalg_float(x)
    return None if dt is None else _cast(x, dt)


@register(np.linalg.norm)
def _norm(p: dict) -> Any:
    x, ord_, axis, keepdims = p["x"], p["ord"], p["axis"], bool(p["keepdims"])
    if not isinstance(x, GpuArray):
        return _FALLBACK
    xf = _norm_float(x)
    if xf is None:
        return _FALLBACK
    if axis is None:
        if ord_ is None:
            r = linalg.vector_norm(xf, axis=None, keepdims=keepdims)
            return r
        if x.ndim == 1:
            axis = (0,)
        elif x.ndim == 2:
            axis = (0, 1)
        else:
            raise ValueError("Improper number of dimensions to norm.")
    axes = normalize_axis_tuple(axis, x.ndim)
    if len(axes) == 1:
        if isinstance(ord_, str):
            raise ValueError(f"Invalid norm order '{ord_}' for vectors")
        return linalg.vector_norm(xf, axis=axes[0], keepdims=keepdims, ord=2 if ord_ is None else ord_)
    if len(axes) == 2:
        if ord_ not in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
            raise ValueError("Invalid norm order for matrices.")
        moved = _m.moveaxis(xf, axes, (-2, -1))
        r = linalg.matrix_norm(moved, ord="fro" if ord_ is None else ord_)
        if keepdims:
            r = _m.reshape(r, tuple(1 if i in axes else s for i, s in enumerate(x.shape)))
        return r
    raise ValueError("Improper number of dimensions to norm.")


@register_array(np.linalg.vector_norm)
def _vector_norm(x: GpuArray, p: dict) -> Any:
    xf = _norm_float(x)
    axis = p["axis"]
    return _FALLBACK if xf is None else linalg.vector_norm(
        xf, axis=axis if axis is None or np.ndim(axis) == 0 else tuple(axis), keepdims=bool(p["keepdims"]),
        ord=p["ord"])


@register_array(np.linalg.matrix_norm)
def _matrix_norm(x: GpuArray, p: dict) -> Any:
    xf = _norm_float(x)
    return _FALLBACK if xf is None else linalg.matrix_norm(xf, keepdims=bool(p["keepdims"]), ord=p["ord"])


@register_array(np.linalg.trace)
def _linalg_trace(x: GpuArray, p: dict) -> Any:
    return _np.trace(x, offset=p["offset"], axis1=-2, axis2=-1, dtype=p["dtype"])


@register_array(np.linalg.diagonal)
def _linalg_diagonal(x: GpuArray, p: dict) -> Any:
    return linalg.diagonal(x, offset=_int_index(p["offset"]))


@register(np.linalg.outer)
def _linalg_outer(p: dict) -> Any:
    if np.ndim(p["x1"]) != 1 or np.ndim(p["x2"]) != 1:
        raise ValueError("Input arrays must be one-dimensional")
    return _np.outer(p["x1"], p["x2"])


@register(np.linalg.cross)
def _linalg_cross(p: dict) -> Any:
    dev = _device(p["x1"], p["x2"])
    x1, x2 = _as_array(p["x1"], dev), _as_array(p["x2"], dev)
    ax = _int_index(p["axis"])
    if x1.ndim == 0 or x2.ndim == 0 or x1.shape[ax] != 3 or x2.shape[ax] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors")
    dt = _map_dtype(np.result_type(x1.dtype, x2.dtype), dev)
    if dt is None or dt == _dtypes.bool_:
        return _FALLBACK
    return linalg.cross(_cast(x1, dt), _cast(x2, dt), axis=ax)


@register(np.linalg.matmul)
def _linalg_matmul(p: dict) -> Any:
    return _np.matmul(p["x1"], p["x2"])


@register(np.linalg.vecdot)
def _linalg_vecdot(p: dict) -> Any:
    return _np.vecdot(p["x1"], p["x2"], axis=p["axis"])


@register(np.linalg.tensordot)
def _linalg_tensordot(p: dict) -> Any:
    return _np.tensordot(p["x1"], p["x2"], axes=p["axes"])


@register_array(np.linalg.matrix_transpose)
def _linalg_matrix_transpose(x: GpuArray, p: dict) -> Any:
    if x.ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return x.mT


# ============================================================ numpy.fft
def _shift(np_func: Any, xp_func: Any) -> None:
    @register(np_func)
    def impl(p: dict) -> Any:
        x, axes = p["x"], p["axes"]
        if not isinstance(x, GpuArray):
            return _FALLBACK
        return xp_func(x, axes=axes if axes is None or np.ndim(axes) == 0 else tuple(axes))


_shift(np.fft.fftshift, fft.fftshift)
_shift(np.fft.ifftshift, fft.ifftshift)


def _fft_input(a: GpuArray, real_only: bool) -> GpuArray | None:
    """NumPy's input conversion: integers and booleans become float64 (as the device has it)."""
    if a.dtype.kind == "c":
        return None if real_only else a
    if a.dtype.kind == "f":
        return a
    dt = _map_dtype(_dtypes.float64, a.device)
    return None if dt is None else a.astype(dt)


def _transform(np_func: Any, xp_func: Any, nd: bool, real_only: bool = False, two: bool = False) -> None:
    """``numpy.fft.<name>`` through ``gpuarray.fft.<name>`` (``norm=None`` is ``"backward"``)."""
    @register(np_func)
    def impl(p: dict) -> Any:
        a = p["a"]
        if not isinstance(a, GpuArray) or p["out"] is not None:
            return _FALLBACK
        x = _fft_input(a, real_only)
        if x is None:
            return _FALLBACK              # NumPy's own error (complex input of rfft / ihfft)
        norm = "backward" if p["norm"] is None else p["norm"]
        if not nd:
            return xp_func(x, n=p["n"], axis=_int_index(p["axis"]), norm=norm)
        s, axes = p["s"], p["axes"]
        if s is not None and axes is None and not two:
            return _FALLBACK              # deprecated in NumPy 2.0 (a warning, then its own rules)
        return xp_func(x, s=None if s is None else tuple(s), axes=None if axes is None else tuple(axes), norm=norm)


for _name, _nd, _real in (("fft", False, False), ("ifft", False, False), ("rfft", False, True),
                          ("irfft", False, False), ("hfft", False, False), ("ihfft", False, True),
                          ("fftn", True, False), ("ifftn", True, False), ("rfftn", True, True),
                          ("irfftn", True, False)):
    _transform(getattr(np.fft, _name), getattr(fft, _name), _nd, _real)
for _name, _real in (("fft2", False), ("ifft2", False), ("rfft2", True), ("irfft2", False)):
    _transform(getattr(np.fft, _name), getattr(fft, _name[:-1] + "n"), True, _real, two=True)


__all__ = ["HOST_BY_DESIGN", "register"]
