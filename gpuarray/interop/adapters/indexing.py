"""Indexing adapters: nonzero and friends, writes into an argument (``copyto``, ``put`` ...: they rebind
it), ``select``, ``choose``, ``extract``, ``compress``, ``unravel_index``, ``ravel_multi_index``."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ...array_object.aliasing import assign
from ...array_object.array import GpuArray
from ...core import dtypes as _dtypes
from ...namespace import manipulation as _m
from ...namespace.creation import asarray, full
from ...namespace.indexing import known_within
from ...namespace.indexing import take as _take
from ...namespace.searching_sorted import argwhere as _argwhere_xp
from ...namespace.searching_sorted import masked_values as _masked_values
from ...namespace.searching_sorted import nonzero as _nonzero
from ..host import _FALLBACK
from ..operands import _along, _as_array, _cast, _device, _int_index, _map_dtype, _probe_dtype, _w
from ..registry import register, register_array

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays


@register_array(np.nonzero, arg="a")
def _nonzero_fn(a: GpuArray, p: dict) -> Any:
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use _np.atleast_1d(scalar).nonzero() "
                         "instead.")
    return _nonzero(a)


@register_array(np.argwhere, arg="a")
def _argwhere(a: GpuArray, p: dict) -> Any:
    if a.ndim == 0:
        return _FALLBACK
    return _argwhere_xp(a)


@register_array(np.flatnonzero, arg="a")
def _flatnonzero(a: GpuArray, p: dict) -> Any:
    return _nonzero(_m.reshape(a, (-1,)))[0]


def _host_values(values: Any, dtype: np.dtype) -> np.ndarray:
    """Values to write into an array of ``dtype``, converted as NumPy's assignment converts them:
    Python ints out of range raise OverflowError, arrays are cast unsafely."""
    if isinstance(values, (bool, int, float)):
        return np.array(values, dtype=dtype)
    with np.errstate(all="ignore"):
        return np.asarray(values).astype(dtype)


@register_array(np.copyto, arg="dst")
def _copyto(dst: GpuArray, p: dict) -> Any:
    src, casting, where = p["src"], p["casting"], p["where"]
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
    assign(dst, value._node)
    return None


@register_array(np.putmask, arg="a")
def _putmask(a: GpuArray, p: dict) -> Any:
    mask, values = p["mask"], p["values"]
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
    assign(a, _w("where", m, v, a)._node)
    return None


@register_array(np.put_along_axis, arg="arr")
def _put_along_axis(arr: GpuArray, p: dict) -> Any:
    indices, values, axis = p["indices"], p["values"], p["axis"]
    if axis is None:
        return _FALLBACK
    idx = indices.get() if isinstance(indices, GpuArray) else np.asarray(indices)
    if idx.dtype.kind not in "iu" or idx.ndim != arr.ndim:
        return _FALLBACK
    ax = normalize_axis_index(_int_index(axis), arr.ndim)
    key = tuple(idx if d == ax else np.arange(s).reshape((1,) * d + (s,) + (1,) * (arr.ndim - d - 1))
                for d, s in enumerate(arr.shape))
    arr[key] = _cast(values, arr.dtype) if isinstance(values, GpuArray) else _host_values(values, arr.dtype)
    return None


@register_array(np.fill_diagonal, arg="a")
def _fill_diagonal(a: GpuArray, p: dict) -> Any:
    val, wrap = p["val"], p["wrap"]
    if a.ndim < 2:
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


@register_array(np.put, arg="a")
def _put(a: GpuArray, p: dict) -> Any:
    ind, v = p["ind"], p["v"]
    if p["mode"] != "raise":
        return _FALLBACK
    idx = ind.get() if isinstance(ind, GpuArray) else np.asarray(ind)
    vals = _host_values(v.get() if isinstance(v, GpuArray) else v, a.dtype)
    if idx.dtype.kind not in "iu":
        return _FALLBACK
    if vals.size not in (1, idx.size) or idx.size == 0:
        return _FALLBACK
    flat = _m.reshape(a, (-1,))
    flat[idx.reshape(-1)] = vals.reshape(-1) if vals.size > 1 else vals.reshape(())
    assign(a, _m.reshape(flat, a.shape)._node)
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
    if cond.shape == arr.shape:
        return _masked_values(arr, cond)
    (idx,) = _nonzero(cond)
    return _take(arr, idx)


@register_array(np.compress, arg="a", no_out=True)
def _compress(a: GpuArray, p: dict) -> Any:
    condition, axis = p["condition"], p["axis"]
    a, ax = _along(a, axis)
    if (isinstance(condition, GpuArray) and condition.device == a.device and condition.ndim == 1
            and condition.shape[0] <= a.shape[ax]):      # indices found on the device: none out of bounds
        (di,) = _nonzero(condition)
        return _take(a, di, axis=ax)
    cond = condition.get() if isinstance(condition, GpuArray) else np.asarray(condition)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    (idx,) = np.nonzero(cond)
    if idx.size and idx[-1] >= a.shape[ax]:
        raise IndexError(f"index {idx[-1]} is out of bounds for axis {ax} with size {a.shape[ax]}")
    return _take(a, asarray(idx.astype(np.int64), device=a.device), axis=ax)


@register_array(np.unravel_index, arg="indices")
def _unravel_index(indices: GpuArray, p: dict) -> Any:
    shape, order = p["shape"], p["order"]
    if order not in ("C", "F"):
        return _FALLBACK
    if indices.dtype.kind not in "iu":
        raise TypeError("only int indices permitted")
    dims = (_int_index(shape),) if np.ndim(shape) == 0 else tuple(_int_index(s) for s in shape)
    size = int(np.prod(dims, dtype=np.int64))
    it = _map_dtype(np.dtype(np.intp), indices.device) or indices.device.default_int
    idx = _bounded(_cast(indices, it), size, "raise", f"index out of bounds for array with size {size}")
    out = []
    rem: Any = idx
    for d in (reversed(dims) if order == "C" else dims):
        out.append(_np.remainder(rem, d) if d else rem)
        rem = _np.floor_divide(rem, d) if d else rem
    return tuple(out[::-1] if order == "C" else out)


def _modes(mode: Any, n: int) -> list[str]:
    modes = [mode] * n if isinstance(mode, str) else list(mode)
    if len(modes) != n or any(m not in ("raise", "wrap", "clip") for m in modes):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (one, or one per dimension): {mode!r}")
    return modes


def _bounded(i: GpuArray, n: int, mode: str, message: str) -> GpuArray:
    """Indices ``i`` into ``range(n)`` by ``mode``: wrapped, clipped, or checked (one value read back, none
    where the bounds are known by construction: ``argmax``'s, ``i % n`` ...)."""
    if mode == "wrap":
        return _np.remainder(i, n) if n else i
    if mode == "clip":
        return _np.clip(i, 0, builtins.max(n - 1, 0))
    if not known_within(i, 0, n - 1) and \
            builtins.bool(_np.any(_np.logical_or(_np.less(i, 0), _np.greater_equal(i, n)))):
        raise ValueError(message)
    return i


@register_array(np.choose, arg="a", no_out=True)
def _choose(a: GpuArray, p: dict) -> Any:
    """``numpy.choose``: a chain of ``where`` over the choices (one fused kernel), after ``mode``."""
    choices = p["choices"]
    if a.dtype.kind not in "iu":
        return _FALLBACK                  # NumPy's cast error for other index dtypes
    dev = a.device
    items = list(choices) if isinstance(choices, (list, tuple)) else [choices[k] for k in range(len(choices))]
    if not items:
        raise ValueError("0-length sequence.")
    dt = _map_dtype(_probe_dtype(lambda i, *c: np.choose(i, c), a, *items), dev)
    if dt is None:
        return _FALLBACK
    idx = _bounded(a, len(items), _modes(p["mode"], 1)[0], "invalid entry in choice array")
    arrs = [_cast(_as_array(c, dev), dt) for c in items]
    result = arrs[-1]
    for k in range(len(arrs) - 2, -1, -1):
        result = _w("where", _np.equal(idx, k), arrs[k], result)
    shape = np.broadcast_shapes(a.shape, *(x.shape for x in arrs))
    return _m.broadcast_to(result, shape) if result.shape != shape else result


@register(np.ravel_multi_index)
def _ravel_multi_index(p: dict) -> Any:
    """``numpy.ravel_multi_index``: the flat indices as a sum of index times stride, after ``mode``."""
    index, dims, order = p["multi_index"], p["dims"], p["order"]
    dev = _device(index)
    if order not in ("C", "F") or not isinstance(index, (list, tuple)):
        return _FALLBACK
    dims = (_int_index(dims),) if np.ndim(dims) == 0 else tuple(_int_index(d) for d in dims)
    if len(index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    parts = [_as_array(i, dev) for i in index]
    if any(i.dtype.kind not in "iu" for i in parts):
        raise TypeError("only int indices permitted")
    it = _map_dtype(np.dtype(np.intp), dev) or dev.default_int
    strides, step = [0] * len(dims), 1
    for k in (reversed(range(len(dims))) if order == "C" else range(len(dims))):
        strides[k], step = step, step * dims[k]
    flat: Any = None
    for i, d, s, m in zip(parts, dims, strides, _modes(p["mode"], len(dims))):
        term = _np.multiply(_bounded(_cast(i, it), d, m, "invalid entry in coordinates array"), s)
        flat = term if flat is None else _np.add(flat, term)
    return flat
