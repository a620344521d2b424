"""Indexing functions (Array API: indexing category): ``take`` and ``take_along_axis``.

Both are one fusable ``gather`` instruction: each output element reads ``x`` at
an index loaded from ``indices``, so ``take(x * 2, idx) + 1`` is one kernel.

Out-of-range indices: NumPy raises ``IndexError``. A kernel cannot raise, so
indices are checked when they are on the host already (Python lists, NumPy
arrays, and evaluated arrays that have a host copy, which includes every
evaluated array on ``cpu``); such a check raises ``IndexError`` at once.
Indices that are still only on a device (or not yet computed) are not read
back for a check: negative values count from the end, then every index is
clamped to the axis.

>>> import gpuarray as xp
>>> x = xp.asarray([10, 20, 30], device="cpu")
>>> xp.take(x, xp.asarray([2, 0, -1], device="cpu")).tolist()
[30, 10, 30]
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .._array import GpuArray, expect_array
from .._devices import Device
from .._elementwise import finish
from .._indexing import bounded
from ..graph import views
from ..graph.node import Node, leaf, make
from ..graph.shapes import broadcast_shapes, normalize_axis


def _arr(x: Any, fn: str) -> GpuArray:
    return expect_array(x, f"{fn}")


def index_dtype(n: int) -> np.dtype:
    """The dtype for indices gpuarray computes itself: int32 unless an axis needs int64."""
    return np.dtype(np.int32) if n < 2**31 else np.dtype(np.int64)


def host_copy(a: GpuArray) -> np.ndarray | None:
    """``a``'s values if they are on the host already (nothing is computed or downloaded)."""
    node = a._node
    if node.realized and node.data.host is not None:
        h = node.data.host
        return h if h.shape == node.shape else h.reshape(node.shape)      # the same object: _extremes
    return None


# (min, max) of read-only index arrays (host copies of device arrays: immutable) by id, with a weak
# reference to tell a new array at a reused address apart: take(x, idx) with the same 2^24 indices
# otherwise scanned them on the host at every call (40 ms on the H200's host)
_EXTREMES: dict[int, tuple[Any, int, int]] = {}
EXTREMES_KEPT = 64


def _scan(idx: np.ndarray) -> tuple[int, int]:
    return int(idx.min()), int(idx.max())


def _extremes(idx: np.ndarray) -> tuple[int, int]:
    """(min, max) of a non-empty integer array, remembered for read-only ones."""
    key = id(idx)
    hit = _EXTREMES.get(key)
    if hit is not None and hit[0]() is idx:
        return hit[1], hit[2]
    lo, hi = _scan(idx)
    if not idx.flags.writeable:
        if len(_EXTREMES) >= EXTREMES_KEPT:
            _EXTREMES.pop(next(iter(_EXTREMES)))
        _EXTREMES[key] = (weakref.ref(idx), lo, hi)
    return lo, hi


def check_bounds(idx: np.ndarray, n: int, axis: int) -> None:
    """IndexError, as NumPy words it, for an index outside [-n, n)."""
    if idx.size == 0:
        return
    lo, hi = _extremes(idx)
    if hi < n and (lo >= -n if idx.dtype.kind == "i" else True):
        return
    bad = idx[(idx < -n) | (idx >= n)] if idx.dtype.kind == "i" else idx[idx >= n]
    if bad.size:
        if n == 0:
            raise IndexError(f"index {bad.flat[0]} is out of bounds for axis {axis} with size 0 "
                             "(cannot take from an empty axis)")
        raise IndexError(f"index {bad.flat[0]} is out of bounds for axis {axis} with size {n}")


def host_indices(obj: Any, what: str) -> np.ndarray:
    """A Python sequence or NumPy array of indices as an integer NumPy array."""
    try:
        a = np.asarray(obj)
    except ValueError as exc:
        raise IndexError(f"{what}: indices must be a rectangular array of integers: {exc}") from exc
    if a.size == 0 and not isinstance(obj, np.ndarray) and a.dtype.kind == "f":
        a = a.astype(np.intp)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{what}: indices must have an integer dtype; got {a.dtype}")
    return a


def index_node(indices: Any, device: Device, n: int, axis: int, what: str) -> Node:
    """A graph node of integer indices into an axis of length ``n``, checked when on the host."""
    if isinstance(indices, GpuArray):
        if indices.device != device:
            raise ValueError(f"{what}: indices are on {indices.device.name}, the array on {device.name}")
        if indices.dtype.kind not in "iu":
            raise TypeError(f"{what}: indices must have an integer dtype; got {indices.dtype}")
        host = host_copy(indices)
        if host is not None:
            check_bounds(host, n, axis)
        return indices._node
    a = host_indices(indices, what)
    check_bounds(a, n, axis)
    return leaf(np.asarray(a, dtype=index_dtype(n)), device)


def gather(x: Node, idx: Node, axis: int) -> Node:
    """``take`` on nodes: ``x`` read at ``idx`` along ``axis`` (indices already checked or clamped)."""
    shape = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    return bounded(make("gather", (x, idx), x.dtype, shape, (axis, "take"), x.device))


def take(x: GpuArray, indices: Any, /, *, axis: int | None = None) -> GpuArray:
    """Elements of ``x`` at ``indices`` along ``axis`` (``x`` flattened when ``axis`` is None).

    ``indices`` may have any number of dimensions (as in NumPy); the result has
    shape ``x.shape[:axis] + indices.shape + x.shape[axis + 1:]``.
    """
    x = _arr(x, "take")
    node = x._node
    if axis is None:
        if x.ndim != 1:
            node = views.reshape(node, (x.size,))
        ax = 0
    else:
        ax = normalize_axis(axis, x.ndim)
    idx = index_node(indices, x.device, node.shape[ax], ax, "take")
    return finish(gather(node, idx, ax))


def take_along_axis(x: GpuArray, indices: Any, /, *, axis: int = -1) -> GpuArray:
    """``out[..., j, ...] = x[..., indices[..., j, ...], ...]`` along ``axis``.

    ``x`` and ``indices`` have the same number of dimensions; the other axes broadcast.
    """
    x = _arr(x, "take_along_axis")
    if not isinstance(indices, GpuArray):
        indices = host_indices(indices, "take_along_axis")
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices and x must have the same number of dimensions; "
                         f"got {indices.ndim} and {x.ndim}")
    ax = normalize_axis(axis, x.ndim)
    xs = x.shape[:ax] + (1,) + x.shape[ax + 1:]
    is_ = indices.shape[:ax] + (1,) + indices.shape[ax + 1:]
    try:
        common = broadcast_shapes(xs, is_)
    except ValueError as exc:
        raise ValueError(f"take_along_axis: shapes {x.shape} and {indices.shape} do not broadcast "
                         f"outside axis {ax}") from exc
    idx = index_node(indices, x.device, x.shape[ax], ax, "take_along_axis")
    out_shape = common[:ax] + (indices.shape[ax],) + common[ax + 1:]
    xb = views.broadcast_to(x._node, common[:ax] + (x.shape[ax],) + common[ax + 1:])
    ib = views.broadcast_to(idx, out_shape)
    return finish(bounded(make("gather", (xb, ib), x.dtype, out_shape, (ax, "along"), x.device)))
