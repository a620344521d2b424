"""Reductions (and sorts along a later axis) of arrays past one storage binding, by blocks.

A device binds at most ``Device.binding_bytes()`` of one array to a kernel (2 GiB on the H200, 128 MiB
on lavapipe). A reduction over a larger array is recorded as reductions of blocks that each fit (blocks
of rows along the first axis, or blocks of the flattened array when every axis is reduced), whose kernels
read their block as a window of the array (``providers/wgpu_split.window_kernel``), and a reduction or a
concatenation of the blocks' results. The operations reduced (sum, prod, max, min, any, all and the
bitwise ones) are associative, so the result is the reduction's; sums add the blocks' partial sums as
a tree adds its partial sums. A sort or argsort along an axis other than the first sorts blocks of rows
and concatenates them (``namespace/sorting.py``).

>>> import numpy as np, gpuarray as xp
>>> x = xp.asarray(np.arange(12, dtype=np.float32).reshape(4, 3))
>>> float(xp.sum(x))
66.0
"""

from __future__ import annotations

import math

from ..array_object.bounds import concat_nodes
from ..core.dtypes import STORAGE_NP
from ..core.ops import OPS
from ..graph import views
from ..graph.node import Node, make
from ..graph.shapes import contiguous_strides

SLACK = 4096        # bytes a block leaves for its window's alignment
SMALL = 1 << 16     # elements below which no device's binding (1 MiB in tests) is exceeded: nothing to ask


def past_binding(x: Node) -> int | None:
    """``x``'s device's binding limit when ``x`` might exceed it (at 16 bytes an element), else None: the
    cheap test every recorded reduction, scan and sort makes."""
    n = math.prod(x.shape)
    if n <= SMALL:
        return None
    limit = x.device.binding_bytes()
    return limit if limit is not None and n * 16 > limit else None


def blocks_of(x: Node, axes: tuple[int, ...], limit: int | None, share: int = 1, out: int = 0) -> list[Node] | None:
    """The blocks of ``x`` to reduce one by one over ``axes`` (then ``combine``), or None when ``x``
    fits one binding (or a block of one row would not, or the result of ``out`` bytes, which a block
    over the first axis writes whole, would not). A block takes at most ``1 / share`` of a binding (a
    sort's scratch holds its padded keys and indices)."""
    if limit is None or not x.shape or (0 in axes and out > limit):
        return None
    n = math.prod(x.shape)
    if n * 16 <= limit:                     # fits whatever it is computed from: no walk (the common case)
        return None
    item = _widest(x)
    if n * item <= limit:
        return None
    limit //= share
    segs = segments(x)
    if len(axes) == len(x.shape):            # every axis: blocks of the flattened array
        flat = views.reshape(x, (n,))
        spans = cut_spans(n, max(1, (limit - SLACK) // item), 1, 0, 1, segs)
        return None if spans is None else [rows_view(flat, a, b) for a, b in spans]
    row = math.prod(x.shape[1:]) * item
    if row > limit - SLACK:
        return None
    rl = math.prod(x.shape[1:])
    spans = cut_spans(x.shape[0], max(1, (limit - SLACK) // row), rl, 0, rl, segs)
    return None if spans is None else [block_of(x, 0, a, b) for a, b in spans]


def segments(x: Node) -> set[int]:
    """The part lengths (elements) of the arrays ``x`` reads that are stored in several buffers (past the
    device's largest buffer); none known for a cone too large to look at."""
    out: set[int] = set()
    for nd in cone(x) or []:
        seg = nd.device.segment_elems(nd) if nd.realized else None
        if seg is not None:
            out.add(seg)
    return out


def cut_spans(count: int, per: int, step: int, off: int, rest: int, segs: set[int]) -> list[tuple[int, int]] | None:
    """Ranges ``[a, b)`` of ``count`` units, at most ``per`` each, where unit ``i`` reads elements
    ``[off + i * step, off + i * step + rest)`` of an array stored in parts of each length in ``segs``: no
    range reads two parts (each is then bound as one window). None when a unit itself does."""
    cuts = {count}
    end = off + max(0, count - 1) * step + rest
    for s in segs:
        for bound in range((off // s + 1) * s, end, s):
            c = -(-(bound - off) // step)
            if c > 0 and (c - 1) * step + off + rest > bound:
                return None
            cuts.add(min(count, c))
    spans: list[tuple[int, int]] = []
    a = 0
    for c in sorted(cuts):
        while a < c:
            b = min(c, a + per)
            spans.append((a, b))
            a = b
    return spans


def combine(parts: list[Node], rop: str, axes: tuple[int, ...], ndim: int, shape: tuple[int, ...]) -> Node:
    """The reduction's result from its blocks' results (each reduced over ``axes`` of an array of
    ``ndim`` dimensions; ``shape`` the result's)."""
    p0 = parts[0]
    if len(axes) == ndim or 0 in axes:      # the blocks' results are partial reductions: reduce them
        stacked = concat_nodes([views.reshape(p, (1, *p.shape)) for p in parts], 0)
        return make("reduce", (stacked,), p0.dtype, p0.shape, (rop, (0,)), p0.device)
    return concat_nodes(parts, 0)          # blocks of the result's rows


def reads_past(x: Node, limit: int) -> bool:
    """Whether ``x`` reads an array (a realized node) past ``limit`` bytes (True for a cone too large to
    look at)."""
    nodes = cone(x)
    return nodes is None or any(nd.realized and math.prod(nd.shape) * STORAGE_NP[nd.dtype].itemsize > limit
                                for nd in nodes)


def cone(x: Node, most: int = 64) -> list[Node] | None:
    """``x`` and the nodes it is computed from, up to the realized ones it reads; None when that is more
    than ``most`` nodes (callers then assume the worst)."""
    seen: dict[int, Node] = {}
    todo = [x]
    while todo:
        nd = todo.pop()
        if id(nd) in seen:
            continue
        seen[id(nd)] = nd
        if len(seen) > most:
            return None
        if not nd.realized:
            todo += list(nd.inputs)
    return list(seen.values())


def _widest(x: Node) -> int:
    """The largest storage item size among ``x`` and the nodes it is computed from (a block of ``x`` reads
    that many bytes an element of them: ``count_nonzero(x > 0)`` of float64 data); 16 (complex128) for
    a cone too large to look at."""
    nodes = cone(x)
    return 16 if nodes is None else max(STORAGE_NP[nd.dtype].itemsize for nd in nodes)


def _transposed(t: Node) -> bool:
    """Whether the view ``t`` is the transpose of its whole (2-D) base."""
    base = t.inputs[0]
    return len(base.shape) == 2 and t.shape == base.shape[::-1] and t.attrs == (
        tuple(contiguous_strides(base.shape)[::-1]), 0)


def block_of(t: Node, axis: int, i0: int, i1: int, depth: int = 8) -> Node:
    """Indices ``i0:i1`` of ``t`` along ``axis``: elementwise work on the blocks of its operands of
    its shape (so that each block reads views of the arrays themselves, whose windows are tight), a view
    of anything else."""
    new = tuple(i1 - i0 if d == axis else s for d, s in enumerate(t.shape))
    if depth and t.op == "view" and not t.realized and _transposed(t):      # (X - mu).T: a block of X - mu
        return views.permute(block_of(t.inputs[0], 1 - axis, i0, i1, depth - 1), (1, 0))
    if depth and not t.realized and (t.op in OPS or t.op == "astype"):
        args = []
        for i in t.inputs:                   # operands broadcast from the right (``x - mu``'s ``mu``)
            ax = axis - (len(t.shape) - len(i.shape))
            args.append(i if ax < 0 or i.shape[ax] == 1 else block_of(i, ax, i0, i1, depth - 1))
        return make(t.op, tuple(args), t.dtype, new, t.attrs, t.device)
    _base, shape, strides, off = views.strided_parts(t)
    return views.compose(t, new, strides, off + i0 * strides[axis])


def alone(g: Node) -> Node:
    """``g`` as a kernel of its own: reduced by ``max`` over a unit axis (the values themselves, -0.0 and
    NaN included), so that no later kernel fuses it with another block's work (fused, the blocks' kernels
    would bind their windows together: the whole array; an output of its own also joins by a copy)."""
    return make("reduce", (views.reshape(g, (1, *g.shape)),), g.dtype, g.shape, ("max", (0,)), g.device)


def rows_view(x: Node, a: int, b: int) -> Node:
    """Rows ``a:b`` of ``x`` along its first axis, as a view (also ``searching_sorted``'s compaction blocks)."""
    _base, shape, strides, offset = views.strided_parts(x)
    return views.compose(x, (b - a, *shape[1:]), strides, offset + a * strides[0])
