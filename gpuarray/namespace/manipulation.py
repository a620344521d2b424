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

import numpy as np
from numpy.exceptions import AxisError

from ..array_object.aliasing import derive, derive_permute, derive_reshape
from ..array_object.array import GpuArray, expect_array
from ..array_object.bounds import bounded, concat_nodes
from ..array_object.elementwise import astype_node, common_device, finish, scalars_to_device
from ..array_object.hooks import register
from ..core import dtypes as _dtypes
from ..core.dtypes import STORAGE_NP
from ..graph import views
from ..graph.node import Node, leaf, make
from ..graph.shapes import broadcast_shapes, normalize_axis, size_of
from ..runtime.planner import evaluate_nodes
from .indexing import gather, index_dtype


def _arr(x: Any, fn: str) -> GpuArray:
    return expect_array(x, f"{fn}")


def reshape(x: GpuArray, /, shape: Sequence[int], *, copy: bool | None = None) -> GpuArray:
    """Same elements in C order, new shape (one dimension may be -1)."""
    x = _arr(x, "reshape")
    if isinstance(shape, int):
        shape = (shape,)
    size = size_of(x._node.shape)
    if copy is None and shape.__class__ is tuple:       # the common case, without the general checks' calls
        known, free = 1, -1
        for i, s in enumerate(shape):
            if s.__class__ is not int or s < -1 or s == -1 and free >= 0:
                break
            if s == -1:
                free = i
            else:
                known *= s
        else:
            if free < 0 and known == size:
                return derive_reshape(x, shape)
            if free >= 0 and known and not size % known:
                return derive_reshape(x, (*shape[:free], size // known, *shape[free + 1:]))
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
    new = tuple(shp)
    if copy:
        return GpuArray(views.reshape(x._node, new))
    out = derive_reshape(x, new)
    if copy is False and out._view is None:
        raise ValueError("reshape: copy=False, but this reshape of a strided view needs a copy")
    return out


def permute_dims(x: GpuArray, /, axes: tuple[int, ...]) -> GpuArray:
    """Reorder the axes (a view)."""
    x = _arr(x, "permute_dims")
    axes = tuple(normalize_axis(a, x.ndim) for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: axes {axes} are not a permutation of {tuple(range(x.ndim))}")
    return derive_permute(x, axes)


def broadcast_to(x: GpuArray, /, shape: tuple[int, ...]) -> GpuArray:
    """``x`` broadcast to ``shape`` (a read-only view with zero strides, as in NumPy)."""
    x = _arr(x, "broadcast_to")
    shape = tuple(operator.index(s) for s in shape)
    try:
        ok = len(shape) >= x.ndim and broadcast_shapes(x.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"cannot broadcast array of shape {x.shape} to shape {shape}")
    return derive(x, lambda n: views.broadcast_to(n, shape), writeable=False)


def broadcast_arrays(*arrays: GpuArray) -> list[GpuArray]:
    """Broadcast all arrays to their common shape."""
    if arrays:
        arrays = tuple(scalars_to_device([_arr(a, "broadcast_arrays") for a in arrays], "broadcast_arrays"))
    shape = broadcast_shapes(*(_arr(a, "broadcast_arrays").shape for a in arrays))
    # an array that keeps its shape is a writeable view of itself; broadcast ones are read-only
    # (their elements overlap; NumPy warns that it will make them read-only too)
    return [derive(a) if a.shape == shape else broadcast_to(a, shape) for a in arrays]


def expand_dims(x: GpuArray, /, axis: int = 0) -> GpuArray:
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


# ---- joining, splitting, repeating: index arithmetic that fuses into the consumer's kernel

MAX_CONCAT_INPUTS = 16   # more arguments are joined in evaluated groups (storage bindings are limited)


def _axes_tuple(axis: Any, ndim: int, fn: str, argname: str | None = None) -> tuple[int, ...]:
    """``axis`` (an int or a sequence) as non-negative axes; an out-of-range one raises NumPy's
    ``AxisError``, prefixed with ``argname`` as ``numpy.moveaxis`` does ("source: axis 10 is out of ...")."""
    items = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    idx = tuple(operator.index(a) for a in items)
    if argname is not None:
        for a in idx:
            if not -ndim <= a < ndim:
                raise AxisError(a, ndim, argname)
    out = tuple(normalize_axis(a, ndim) for a in idx)
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}: repeated axis in {tuple(items)}")
    return out


def concat(arrays: Sequence[GpuArray], /, *, axis: int | None = 0) -> GpuArray:
    """Join arrays along ``axis`` (flattened first when ``axis`` is None); one fusable instruction.

    >>> import gpuarray as xp
    >>> a = xp.asarray([1, 2], device="cpu")
    >>> xp.concat([a * 2, a + 1]).tolist()
    [2, 4, 2, 3]
    """
    if isinstance(arrays, GpuArray) or not isinstance(arrays, (list, tuple)):
        raise TypeError(f"concat: expected a tuple or list of arrays; got {type(arrays).__name__}")
    arrs = [_arr(a, "concat") for a in arrays]
    if not arrs:
        raise ValueError("concat: need at least one array to concatenate")
    common_device(arrs, "concat")
    dt = _dtypes.result_type(*arrs)
    if axis is None:
        arrs = [reshape(a, (-1,)) for a in arrs]
        ax = 0
    else:
        nd = arrs[0].ndim
        if nd == 0:
            raise ValueError("concat: zero-dimensional arrays cannot be concatenated")
        for j, a in enumerate(arrs):
            if a.ndim != nd:
                raise ValueError(f"concat: all the input arrays must have the same number of dimensions, but "
                                 f"the array at index 0 has {nd} dimension(s) and the array at index {j} has "
                                 f"{a.ndim} dimension(s)")
        ax = normalize_axis(axis, nd)
        for j, a in enumerate(arrs):
            for d in range(nd):
                if d != ax and a.shape[d] != arrs[0].shape[d]:
                    raise ValueError(f"concat: all the input array dimensions except for the concatenation axis "
                                     f"must match exactly, but along dimension {d}, the array at index 0 has size "
                                     f"{arrs[0].shape[d]} and the array at index {j} has size {a.shape[d]}")
    nodes = [astype_node(a._node, dt) for a in arrs]
    keep = [n for n in nodes if n.shape[ax] > 0] or nodes[:1]
    while len(keep) > MAX_CONCAT_INPUTS:
        groups = [keep[i:i + MAX_CONCAT_INPUTS] for i in range(0, len(keep), MAX_CONCAT_INPUTS)]
        keep = [concat_nodes(g, ax) for g in groups]
        evaluate_nodes(keep)
    limit = keep[0].device.binding_bytes() if ax == 0 and len(keep) > 1 else None
    if limit is not None and sum(math.prod(n.shape) for n in keep) * STORAGE_NP[dt].itemsize > limit:
        # past one binding: the parts computed first, so that the join is copies of whole arrays
        # (providers/wgpu_split.row_concat; a part computed inside the join took the host)
        todo = [n for n in keep if not n.realized]
        if todo:
            evaluate_nodes(todo)
    return finish(concat_nodes(keep, ax))


def stack(arrays: Sequence[GpuArray], /, *, axis: int = 0) -> GpuArray:
    """Join arrays of one shape along a new axis."""
    if isinstance(arrays, GpuArray) or not isinstance(arrays, (list, tuple)):
        raise TypeError(f"stack: expected a tuple or list of arrays; got {type(arrays).__name__}")
    arrs = [_arr(a, "stack") for a in arrays]
    if not arrs:
        raise ValueError("stack: need at least one array to stack")
    shape = arrs[0].shape
    if any(a.shape != shape for a in arrs):
        raise ValueError(f"stack: all input arrays must have the same shape; got "
                         f"{', '.join(str(a.shape) for a in arrs)}")
    ax = normalize_axis(axis, len(shape) + 1)
    return concat([reshape(a, shape[:ax] + (1,) + shape[ax:]) for a in arrs], axis=ax)


def unstack(x: GpuArray, /, *, axis: int = 0) -> tuple[GpuArray, ...]:
    """Split ``x`` along ``axis`` into a tuple of views."""
    x = _arr(x, "unstack")
    ax = normalize_axis(axis, x.ndim)
    return tuple(x[(slice(None),) * ax + (i,)] for i in range(x.shape[ax]))


def moveaxis(x: GpuArray, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> GpuArray:
    """Move axes to new positions (a view)."""
    x = _arr(x, "moveaxis")
    src = _axes_tuple(source, x.ndim, "moveaxis", "source")
    dst = _axes_tuple(destination, x.ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError("moveaxis: `source` and `destination` arguments must have the same number of elements")
    order = [d for d in range(x.ndim) if d not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return derive_permute(x, tuple(order))


def tile(x: GpuArray, repetitions: Sequence[int], /) -> GpuArray:
    """``x`` repeated ``repetitions[i]`` times along axis ``i`` (index arithmetic, no copy until used)."""
    x = _arr(x, "tile")
    items = (repetitions,) if isinstance(repetitions, (int, np.integer)) else tuple(repetitions)
    reps = tuple(operator.index(r) for r in items)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative; got {reps}")
    nd = max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    shp = (1,) * (nd - x.ndim) + x.shape
    inter = tuple(v for s in shp for v in (1, s))
    wide = tuple(v for r, s in zip(reps, shp, strict=True) for v in (r, s))
    node = views.broadcast_to(views.reshape(x._node, inter), wide)
    return GpuArray(views.reshape(node, tuple(r * s for r, s in zip(reps, shp, strict=True))))


def repeat(x: GpuArray, repeats: int | GpuArray, /, *, axis: int | None = None) -> GpuArray:
    """Repeat each element ``repeats`` times along ``axis`` (``x`` flattened when ``axis`` is None).

    An int is index arithmetic. An array of repeats gives a data-dependent shape: it is
    evaluated (and read back) at once, and the result is a ``take`` with computed indices.
    """

    x = _arr(x, "repeat")
    node = x._node
    if axis is None:
        node = views.reshape(node, (x.size,))
        ax = 0
    else:
        ax = normalize_axis(axis, x.ndim)
    shape = node.shape
    n = shape[ax]
    if isinstance(repeats, bool):
        raise TypeError("repeat: repeats must be an integer or an integer array; got bool")
    if isinstance(repeats, (int, np.integer)):
        r: Any = int(repeats)
    else:
        r = repeats._host() if isinstance(repeats, GpuArray) else np.asarray(repeats)
        if r.dtype.kind not in "iu":
            raise TypeError(f"repeat: repeats must have an integer dtype; got {r.dtype}")
        if r.ndim > 1:
            raise ValueError(f"repeat: repeats must be 0- or 1-dimensional; got {r.ndim} dimensions")
        if r.size == 1:
            r = int(r.reshape(()))
        elif r.shape != (n,):
            raise ValueError(f"repeat: operands could not be broadcast together with shape ({n},) {r.shape}")
    if isinstance(r, int):
        if r < 0:
            raise ValueError(f"repeat: repeats must be non-negative; got {r}")
        wide = views.broadcast_to(views.reshape(node, shape[:ax + 1] + (1,) + shape[ax + 1:]),
                                  shape[:ax + 1] + (r,) + shape[ax + 1:])
        return GpuArray(views.reshape(wide, shape[:ax] + (n * r,) + shape[ax + 1:]))
    if (r < 0).any():
        raise ValueError("repeat: repeats must be non-negative")
    idx = np.repeat(np.arange(n, dtype=index_dtype(n)), r)
    return finish(gather(node, leaf(idx, x.device), ax))


def roll(x: GpuArray, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> GpuArray:
    """Shift elements cyclically along ``axis`` (flattened when None); a ``concat`` of two slices per axis."""
    x = _arr(x, "roll")
    shifts = (shift,) if isinstance(shift, (int, np.integer)) else tuple(shift)
    shifts = tuple(operator.index(s) for s in shifts)
    if axis is None:
        flat = views.reshape(x._node, (x.size,))
        return finish(views.reshape(_roll_axis(flat, sum(shifts), 0), x.shape))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(normalize_axis(operator.index(a), x.ndim) for a in axes)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift and axis must have the same length; got {len(shifts)} and {len(axes)}")
    total: dict[int, int] = {}
    for s, a in zip(shifts, axes, strict=True):
        total[a] = total.get(a, 0) + s
    node = x._node
    for a, s in total.items():
        node = _roll_axis(node, s, a)
    return finish(node)


def _roll_axis(node: Node, s: int, ax: int) -> Node:
    n = node.shape[ax]
    if n == 0 or s % n == 0:
        return node
    s %= n
    # the two slices ``node[..., n - s:]`` and ``node[..., :n - s]`` as views of its base (basic_index's result,
    # without normalizing an index: Life's step takes sixteen rolls)
    base, shape, strides, off = views.strided_parts(node)
    tail = views.strided_view(base, shape[:ax] + (s,) + shape[ax + 1:], strides, off + (n - s) * strides[ax])
    head = views.strided_view(base, shape[:ax] + (n - s,) + shape[ax + 1:], strides, off)
    return bounded(make("concat", (tail, head), node.dtype, node.shape, (ax,), node.device))


register(reshape=reshape, broadcast_to=broadcast_to)
