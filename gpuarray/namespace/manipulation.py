"""Manipulation functions that are views (no data is copied).

>>> import gpuarray as xp
>>> xp.permute_dims(xp.zeros((2, 3), device="cpu"), (1, 0)).shape
(3, 2)
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

from .._array import GpuArray
from .._elementwise import common_device
from ..graph import views
from ..graph.shapes import broadcast_shapes, normalize_axis


def _arr(x: Any, fn: str) -> GpuArray:
    if not isinstance(x, GpuArray):
        raise TypeError(f"{fn}: expected a GpuArray; got {type(x).__name__}")
    return x


def reshape(x: GpuArray, /, shape: Sequence[int], *, copy: bool | None = None) -> GpuArray:
    """Same elements in C order, new shape (one dimension may be -1)."""
    x = _arr(x, "reshape")
    if isinstance(shape, int):
        shape = (shape,)
    shp = [operator.index(s) for s in shape]
    if shp.count(-1) > 1:
        raise ValueError("reshape: can only specify one unknown dimension")
    known = math.prod(s for s in shp if s != -1)
    if -1 in shp:
        if known == 0 or x.size % known:
            raise ValueError(f"cannot reshape array of size {x.size} into shape {tuple(shape)}")
        shp[shp.index(-1)] = x.size // known
    if any(s < 0 for s in shp) or math.prod(shp) != x.size:
        raise ValueError(f"cannot reshape array of size {x.size} into shape {tuple(shape)}")
    if copy is False and x._node.op == "view" and not x._node.realized:
        raise ValueError("reshape: copy=False, but this reshape of a strided view needs a copy")
    return GpuArray(views.reshape(x._node, tuple(shp)))


def permute_dims(x: GpuArray, /, axes: tuple[int, ...]) -> GpuArray:
    """Reorder the axes (a view)."""
    x = _arr(x, "permute_dims")
    axes = tuple(normalize_axis(a, x.ndim) for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: axes {axes} are not a permutation of {tuple(range(x.ndim))}")
    return GpuArray(views.permute(x._node, axes))


def broadcast_to(x: GpuArray, /, shape: tuple[int, ...]) -> GpuArray:
    """``x`` broadcast to ``shape`` (a view with zero strides)."""
    x = _arr(x, "broadcast_to")
    shape = tuple(operator.index(s) for s in shape)
    try:
        ok = len(shape) >= x.ndim and broadcast_shapes(x.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"cannot broadcast array of shape {x.shape} to shape {shape}")
    return GpuArray(views.broadcast_to(x._node, shape))


def broadcast_arrays(*arrays: GpuArray) -> list[GpuArray]:
    """Broadcast all arrays to their common shape."""
    if arrays:
        common_device(list(arrays), "broadcast_arrays")
    shape = broadcast_shapes(*(_arr(a, "broadcast_arrays").shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]


def expand_dims(x: GpuArray, /, *, axis: int = 0) -> GpuArray:
    """Insert a length-1 axis at ``axis``."""
    x = _arr(x, "expand_dims")
    ax = normalize_axis(axis, x.ndim + 1)
    return reshape(x, x.shape[:ax] + (1,) + x.shape[ax:])


def squeeze(x: GpuArray, /, axis: int | tuple[int, ...]) -> GpuArray:
    """Remove length-1 axes named by ``axis``."""
    x = _arr(x, "squeeze")
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(normalize_axis(a, x.ndim) for a in axes)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal to one (axis {a})")
    return reshape(x, tuple(s for i, s in enumerate(x.shape) if i not in axes))


def flip(x: GpuArray, /, *, axis: int | tuple[int, ...] | None = None) -> GpuArray:
    """Reverse the order of elements along ``axis`` (all axes by default); a view."""
    x = _arr(x, "flip")
    axes = range(x.ndim) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    norm = {normalize_axis(a, x.ndim) for a in axes}
    key = tuple(slice(None, None, -1) if i in norm else slice(None) for i in range(x.ndim))
    return x[key]


def matrix_transpose(x: GpuArray, /) -> GpuArray:
    """Swap the last two axes."""
    return _arr(x, "matrix_transpose").mT
