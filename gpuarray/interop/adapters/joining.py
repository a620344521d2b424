"""Joining and splitting adapters: concatenate, stack and its variants, block, append, split, meshgrid, ix_."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ...array_object.array import GpuArray
from ...core import dtypes as _dtypes
from ...namespace import manipulation as _m
from ...namespace.searching_sorted import nonzero as _nonzero
from ..host import _FALLBACK, _xp
from ..operands import _as_array, _device, _device_from, _int_index, _map_dtype
from ..registry import register, register_array

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays


def _joining(np_name: str, xp_name: str) -> None:
    npf = getattr(np, np_name)

    def impl(p: dict) -> Any:
        arrays = p["arrays"]
        fn = _xp(xp_name)
        if fn is None or p["out"] is not None or not isinstance(arrays, (list, tuple)) or not arrays:
            return _FALLBACK
        arrays = [x if isinstance(x, (GpuArray, np.ndarray)) else np.asarray(x) for x in arrays]
        device = _device_from(tuple(arrays), None)
        # the result dtype from one-element stand-ins (1-D for 0-d arrays, which concatenate joins flattened
        # with axis=None and refuses otherwise: fn raises NumPy's error then)
        least = 1 if np_name == "concatenate" else 0
        with np.errstate(all="ignore"):
            want = npf([np.zeros((1,) * max(x.ndim, least), x.dtype) for x in arrays],
                       dtype=p["dtype"], casting=p["casting"]).dtype
        mw = _map_dtype(want, device)
        if mw is None:
            return _FALLBACK
        parts = [_as_array(x, device) for x in arrays]
        return fn([x if x.dtype == mw else x.astype(mw) for x in parts], axis=p["axis"])
    register(np_name)(impl)


_joining("concatenate", "concat")
_joining("stack", "stack")


def _stack_kw(p: dict) -> dict:
    return {k: p[k] for k in ("dtype", "casting") if k in p and p[k] is not None}


def _stacker(np_func: Any, atleast: Any, axis: Callable[[Any], int]) -> None:
    """vstack / hstack / dstack: NumPy's ``atleast_<n>d`` of each array, concatenated along ``axis(first)``."""
    @register(np_func)
    def impl(p: dict) -> Any:
        tup = p["tup"]
        if not isinstance(tup, (list, tuple)) or not tup:
            return _FALLBACK
        arrs = atleast(*tup) if len(tup) > 1 else [atleast(tup[0])]
        return _np.concatenate(arrs, axis=axis(arrs[0]), **_stack_kw(p))


_stacker(np.vstack, _np.atleast_2d, lambda first: 0)
_stacker(np.hstack, _np.atleast_1d, lambda first: 0 if first.ndim == 1 else 1)
_stacker(np.dstack, _np.atleast_3d, lambda first: 2)       # no dtype= / casting=: _stack_kw is empty


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
    @register_array(np_func, arg="ary", host=("indices_or_sections",))
    def impl(a: GpuArray, p: dict) -> Any:
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
