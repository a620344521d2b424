"""Searching functions that need an order or data-dependent shapes: searchsorted, nonzero.

``searchsorted`` is one ``searchsorted`` node (a binary search per element of
``x2``, in NumPy's order: NaN last, ``-0.0 == 0.0``). ``nonzero`` has a
data-dependent output shape. On a GPU device it is a stream compaction
(``compact_node``): each chunk's count of non-zero flags (the flags fused
from the expression that produces ``x``), an exclusive scan of the counts,
one small read-back of the total (``metrics()["bytes_downloaded"]``: 4 bytes)
to give the result its shape, then a kernel that writes each selected
position's index (or coordinates, or value: ``x[mask]``) at its place. The
in-process provider calls ``numpy.nonzero``.

>>> import gpuarray as xp
>>> xp.searchsorted(xp.asarray([1.0, 2.0, 3.0], device="cpu"), 2.0, side="right").item()
2
>>> [i.tolist() for i in xp.nonzero(xp.asarray([[0, 5], [7, 0]], device="cpu"))]
[[0, 1], [1, 0]]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..array_object.array import GpuArray, expect_array
from ..array_object.bounds import concat_nodes
from ..array_object.elementwise import _coerce, astype_node, common_device, finish
from ..core import dtypes as _dtypes
from ..core.dtypes import STORAGE_NP
from ..graph import views
from ..graph.node import Node, const, leaf, make
from ..runtime.planner import evaluate_nodes
from .reduce_blocks import SLACK, blocks_of, cut_spans, past_binding, reads_past, rows_view, segments

# Flat positions per workgroup of a compaction's count and write kernels (4 blocks of 2048):
# 2^24 elements are 2048 workgroups, and the scan of their counts one workgroup.
COMPACT_CHUNK = 8192


def searchsorted(x1: GpuArray, x2: Any, /, *, side: str = "left", sorter: GpuArray | None = None) -> GpuArray:
    """Indices (default integer dtype) where ``x2``'s elements would be inserted to keep ``x1`` sorted.

    ``x1`` is 1-D and sorted ascending (or ``sorter`` sorts it); ``x2`` is an
    array or a Python scalar. With ``side="left"`` the index ``i`` satisfies
    ``x1[i-1] < v <= x1[i]``, with ``"right"`` ``x1[i-1] <= v < x1[i]``.

    >>> import gpuarray as xp
    >>> xp.searchsorted(xp.asarray([1, 3, 5], device="cpu"), xp.asarray([0, 3, 9], device="cpu")).tolist()
    [0, 1, 3]
    """
    if not isinstance(x1, GpuArray):
        raise TypeError(f"searchsorted: x1 must be a GpuArray; got {type(x1).__name__}")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be one-dimensional; got {x1.ndim} dimensions")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right'; got {side!r}")
    x2 = _coerce(x2, x1.device)
    arrays = [x1] + ([x2] if isinstance(x2, GpuArray) else [])
    if sorter is not None:
        if not isinstance(sorter, GpuArray):
            raise TypeError(f"searchsorted: sorter must be a GpuArray or None; got {type(sorter).__name__}")
        if sorter.dtype not in _dtypes.INTEGER:
            raise TypeError(f"searchsorted: sorter must have an integer dtype; got {sorter.dtype}")
        if sorter.shape != x1.shape:
            raise ValueError(f"searchsorted: sorter must have the shape of x1 {x1.shape}; got {sorter.shape}")
        arrays.append(sorter)
    device = common_device(arrays, "searchsorted")
    dt = _dtypes.result_type(x1, x2, default_float=device.default_float)
    if dt.kind == "c":
        raise TypeError(f"Only real-valued dtypes are allowed in searchsorted; got {dt}.")
    device.check_dtype(dt)
    n2 = astype_node(x2._node, dt) if isinstance(x2, GpuArray) else const(x2, dt, device)
    n1 = astype_node(x1._node, dt)
    lim = past_binding(n1) if sorter is None else None
    blocks = blocks_of(n1, (0,), lim) if lim else None
    if blocks is not None:
        # x1 past one binding: the elements below (or not above) a value are those below it in each block
        # of x1, so the index is the sum of its indices in the blocks, each a kernel binding its block
        out: Node | None = None
        for b in blocks:
            part = make("searchsorted", (b, n2), device.default_int, n2.shape, (side, False), device)
            out = part if out is None else make("add", (out, part), device.default_int, n2.shape, (), device)
        assert out is not None
        return finish(out)
    inputs = (n1, n2) + ((sorter._node,) if sorter is not None else ())
    return finish(make("searchsorted", inputs, device.default_int, n2.shape,
                       (side, sorter is not None), device))


def _flags_past_binding(mask: Node) -> bool:
    """Whether ``mask``'s flags (u32 a position) exceed one storage binding of its device: compaction by blocks."""
    n = math.prod(mask.shape)
    return n > COMPACT_CHUNK and n * 4 > mask.device.binding_bytes()


def compact_node(mask: Node, mode: str, values: Node | None = None) -> Node:
    """The compaction of ``mask``'s non-zero positions on its GPU device (see the module docstring):
    ``mode`` ``flat`` (their flat indices), ``coords`` (their coordinates, one row per dimension:
    ``(ndim, count)``), ``values`` (``values``' elements there; ``values`` has ``mask``'s shape).
    Indices have the device's default integer dtype. Evaluates the counts and reads back the total.

    >>> import numpy as np, gpuarray as xp
    >>> m = xp.asarray(np.array([0.0, 2.0, 0.0, -1.0]), device="cpu")
    >>> xp.GpuArray(compact_node(m._node, "flat")).tolist()
    [1, 3]
    """
    dev = mask.device
    nd, n = len(mask.shape), math.prod(mask.shape)
    dt = values.dtype if values is not None else dev.default_int
    if values is not None and values.shape != mask.shape:
        raise ValueError(f"compact: values of shape {values.shape} for a mask of shape {mask.shape}")
    if mode != "coords" and _flags_past_binding(mask):     # by blocks, each a window
        per = (dev.binding_bytes() - SLACK) // max(4, STORAGE_NP[dt].itemsize)
        return _compact_blocks(mask, mode, values, per)
    limit = dev.binding_bytes()
    if limit is not None and not mask.realized and reads_past(mask, limit):
        # a small mask computed from an array past one binding (``m[m[:, 0] > 0]``): computed first, by the
        # elementwise blocks, so that the counting and writing kernels read the mask, not that array
        evaluate_nodes([mask])
    flags = astype_node(astype_node(mask, _dtypes.bool_), _dtypes.uint32)
    count = 0
    if n:
        g = -(-n // COMPACT_CHUNK)
        flat = views.reshape(flags, (n,)) if nd != 1 else flags
        counts = make("compact", (flat,), _dtypes.uint32, (g,), ("count",), dev)
        offs = make("scan", (counts,), _dtypes.uint32, (g + 1,), ("sum", 0, True), dev)
        total = views.strided_view(offs, (), (), g)
        evaluate_nodes([offs, total])
        count = int(total.data.get_host().reshape(()))
    shape = (nd, count) if mode == "coords" else (count,)
    if count == 0:
        return leaf(np.zeros(shape, dt), dev)
    return make("compact", (flags, offs) + ((values,) if values is not None else ()), dt, shape, (mode,), dev)


def _compact_blocks(mask: Node, mode: str, values: Node | None, per: int) -> Node:
    """``compact_node`` of a mask past one binding: of its flattened blocks of ``per`` elements one by one
    (flat indices moved by each block's start), joined."""
    dev, n = mask.device, math.prod(mask.shape)
    fm = views.reshape(mask, (n,))
    fv = views.reshape(values, (n,)) if values is not None else None
    parts = []
    spans = cut_spans(n, per, 1, 0, 1, segments(mask) | (segments(values) if values is not None else set()))
    for a, b in spans or [(a, min(n, a + per)) for a in range(0, n, per)]:
        r = compact_node(rows_view(fm, a, b), mode, rows_view(fv, a, b) if fv is not None else None)
        if mode == "flat" and a and r.shape[0]:
            r = make("add", (r, const(a, r.dtype, dev)), r.dtype, r.shape, (), dev)
        if r.shape[0]:
            parts.append(r)
    if not parts:
        return leaf(np.zeros((0,), values.dtype if values is not None else dev.default_int), dev)
    if sum(r.shape[0] for r in parts) * STORAGE_NP[parts[0].dtype].itemsize > dev.binding_bytes():
        evaluate_nodes(parts)       # joined by copies: one kernel of the moved indices would be past one binding
    return concat_nodes(parts, 0)


def coord_nodes(mask: Node) -> list[Node]:
    """The coordinates of ``mask``'s non-zero elements (on a GPU device), one 1-D node per dimension, in C order:
    one compaction kernel's ``(ndim, count)`` rows; for a mask past one binding, the flat indices (by blocks)
    and each dimension's ``(flat // stride) % dim`` (elementwise on the device: the host before).

    >>> import numpy as np, gpuarray as xp
    >>> m = xp.asarray(np.array([[0.0, 2.0], [3.0, 0.0]]), device="cpu")
    >>> [xp.GpuArray(c).tolist() for c in coord_nodes(m._node)]
    [[0, 1], [1, 0]]
    """
    if _flags_past_binding(mask):
        flat = compact_node(mask, "flat")
        evaluate_nodes([flat])      # its join by copies on its own: fused into the coordinates, one 1-D kernel
        dev, dt, count = flat.device, flat.dtype, flat.shape[0]      # past one binding would take the host
        out = []
        for d in range(len(mask.shape)):
            stride = math.prod(mask.shape[d + 1:])
            q = flat if stride == 1 else make("floor_divide", (flat, const(stride, dt, dev)), dt, (count,), (), dev)
            out.append(q if d == 0 else make("remainder", (q, const(mask.shape[d], dt, dev)), dt, (count,), (), dev))
        return out
    r = compact_node(mask, "coords")
    count = r.shape[1]
    return [views.strided_view(r, (count,), (1,), d * count) for d in range(len(mask.shape))]


def _coords(x: GpuArray) -> list[Node]:
    """``x``'s non-zero coordinates, one 1-D node per dimension (computed on the host on ``cpu``)."""
    if x.device.provider.host_memory:
        host = np.asarray(x)
        return [leaf(np.asarray(c, dtype=x.device.default_int), x.device) for c in np.nonzero(host)]
    return coord_nodes(x._node)


def nonzero(x: GpuArray, /) -> tuple[GpuArray, ...]:
    """Indices of the non-zero elements, one array per dimension, in C order (evaluates ``x`` now).

    >>> import gpuarray as xp
    >>> xp.nonzero(xp.asarray([0.0, 2.0, 0.0, -1.0], device="cpu"))[0].tolist()
    [1, 3]
    """
    expect_array(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero: x must have at least one dimension; got a 0-d array")
    if x.ndim == 1 and not x.device.provider.host_memory:
        return (finish(compact_node(x._node, "flat")),)
    return tuple(finish(c) for c in _coords(x))


def argwhere(x: GpuArray, /) -> GpuArray:
    """The coordinates of the non-zero elements of ``x`` (at least 1-D), one row each: ``(count, ndim)``.

    >>> import gpuarray as xp
    >>> argwhere(xp.asarray([[0, 5], [7, 0]], device="cpu")).tolist()
    [[0, 1], [1, 0]]
    """
    expect_array(x, "argwhere")
    if x.ndim == 0:
        raise ValueError("argwhere: x must have at least one dimension; got a 0-d array")
    if x.device.provider.host_memory or not _flags_past_binding(x._node):
        r = (leaf(np.array(np.nonzero(np.asarray(x)), dtype=x.device.default_int).reshape(x.ndim, -1), x.device)
             if x.device.provider.host_memory else compact_node(x._node, "coords"))
        return finish(views.permute(r, (1, 0)))      # a view of the (ndim, count) rows: no copy
    cs = coord_nodes(x._node)                        # one array per dimension, joined as columns
    count = cs[0].shape[0]
    return finish(concat_nodes([views.reshape(c, (count, 1)) for c in cs], 1))


def masked_values(x: GpuArray, mask: GpuArray, /) -> GpuArray:
    """``x[mask != 0]`` for a ``mask`` of ``x``'s shape: the selected elements in C order, compacted
    directly on a GPU device (no index array).

    >>> import gpuarray as xp
    >>> x = xp.asarray([1.0, -2.0, 3.0], device="cpu")
    >>> masked_values(x, x > 0).tolist()
    [1.0, 3.0]
    """
    expect_array(x, "masked_values")
    expect_array(mask, "masked_values")
    common_device([x, mask], "masked_values")
    if x.shape != mask.shape:
        raise ValueError(f"masked_values: the mask's shape {mask.shape} is not the array's {x.shape}")
    if x.device.provider.host_memory:
        return finish(leaf(np.asarray(x)[np.asarray(mask) != 0], x.device))
    return finish(compact_node(mask._node, "values", x._node))


__all__ = ["searchsorted", "nonzero"]
