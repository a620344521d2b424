"""Matrix products with an operand past one storage binding, by blocks.

A kernel binds at most ``Device.binding_bytes()`` of one array (2 GiB on the H200, 128 MiB on lavapipe).
A product ``a @ b`` (2-D after NumPy's promotion of 1-D operands, no batch) whose operand reads an
array past that is recorded as products of blocks that each read a window of it
(``providers/wgpu_split.window_kernel``, as the reductions by blocks do): blocks of rows of ``a``
(``X @ w``: the blocks' results joined along the rows), of columns of ``b`` (``w @ X.T``: joined along
the columns), or of the contracted dimension of both (``X.T @ r``, ``X.T @ X``: the blocks' products
added). The split is the one whose blocks are longest: along the dimension that is outermost in the
big array's memory, so that a block is a contiguous run of it.

>>> import numpy as np, gpuarray as xp
>>> x = xp.asarray(np.ones((4, 3), dtype=np.float32))
>>> (x.T @ x).tolist()[0]
[4.0, 4.0, 4.0]
"""

from __future__ import annotations

import math

import numpy as np

from ..array_object.bounds import concat_nodes
from ..graph import views
from ..graph.node import Node, make
from ..graph.shapes import contiguous_strides
from ..runtime.planner import evaluate_nodes
from .reduce_blocks import SLACK, SMALL, _widest, block_of, cut_spans, reads_past, segments


def _layout(t: Node, depth: int = 16) -> tuple[tuple[int, ...], int]:
    """The strides and offset at which ``t``'s elements lie in the largest array it reads: a view's own,
    else those of the operand of its shape that reads the most (``exp(x.T)`` reads ``x`` as ``x.T``)."""
    nd = t
    for _ in range(depth):
        if nd.op == "view" and not nd.realized:
            return tuple(nd.attrs[0]), int(nd.attrs[1])
        same = [] if nd.realized else [i for i in nd.inputs if i.shape == nd.shape]
        if not same:
            break
        nd = max(same, key=_read_size)
    return contiguous_strides(t.shape), 0


def _spans(t: Node, axis: int, per: int) -> list[tuple[int, int]] | None:
    """Blocks of ``t`` along ``axis`` of at most ``per`` indices, none reading two parts of an array stored
    in several buffers (``reduce_blocks.cut_spans``)."""
    strides, off = _layout(t)
    other = 1 - axis
    rest = (t.shape[other] - 1) * abs(strides[other]) + 1
    return cut_spans(t.shape[axis], per, max(1, abs(strides[axis])), off, rest, segments(t))


def _block_len(t: Node, axis: int, limit: int) -> int:
    """The longest block of ``t`` (2-D) along ``axis`` whose elements span at most ``limit`` bytes of
    the array it reads (0 when not even one index fits)."""
    shape, strides = t.shape, _layout(t)[0]
    item = _widest(t)
    other = 1 - axis
    rest = (shape[other] - 1) * abs(strides[other]) + 1
    room = (limit - SLACK) // item - rest
    if room < 0:
        return 0
    step = abs(strides[axis])
    return shape[axis] if step == 0 else min(shape[axis], room // step + 1)


def _read_size(t: Node) -> int:
    """Elements of the array ``t`` reads: its base's for a pending view (an evaluated view, whose inputs
    are gone, holds its own elements)."""
    return math.prod(t.inputs[0].shape if t.op == "view" and not t.realized else t.shape)


def blocked_matmul(a: Node, b: Node, dtype: np.dtype, shape: tuple[int, ...]) -> Node | None:
    """``a @ b`` by blocks when ``a`` (M, K) or ``b`` (K, N) reads an array past one binding of its
    device, with the result's ``shape`` (M, N, or either dropped for a 1-D operand); None when neither
    does, or no split gives blocks that fit (the provider then says why it cannot run the product)."""
    if len(a.shape) != 2 or len(b.shape) != 2:
        return None
    most = max(_read_size(t) for t in (a, b))
    most = max(most, math.prod(a.shape), math.prod(b.shape))
    if most <= SMALL:                        # no device binds less than 16 bytes an element of this
        return None
    limit = a.device.binding_bytes()
    if limit is None or most * 16 <= limit:
        return None
    big = [reads_past(t, limit) for t in (a, b)]
    if not any(big):
        return None
    if all(big):
        # one operand small but read from the big array (``x @ x[:300].T``): computed first, so that the
        # product splits along the other's rows or columns (both read the whole array else: the host)
        for j, t in enumerate((a, b)):
            if not t.realized and math.prod(t.shape) * _widest(t) * 2 <= limit:
                evaluate_nodes([t])
                big[j] = False
                break
    m, k = a.shape
    n = b.shape[1]
    # (which split, block length): rows of a, columns of b, or the contracted dimension of both
    options: list[tuple[str, int, int]] = []
    if not big[1]:
        options.append(("m", m, _block_len(a, 0, limit)))
    if not big[0]:
        options.append(("n", n, _block_len(b, 1, limit)))
    ks = [_block_len(t, ax, limit) for t, ax, bg in ((a, 1, big[0]), (b, 0, big[1])) if bg]
    options.append(("k", k, min(ks)))
    how, dim, per = min(options, key=lambda o: (-(o[2] / max(1, o[1])), o[0] == "k"))
    if per < 1 or per >= dim:
        return None
    split = [(t, ax) for t, ax, bg in ((a, 0 if how == "m" else 1, big[0]), (b, 1 if how == "n" else 0, big[1]))
             if bg and (how == "k" or (how == "m") == (t is a))]
    ends: set[int] = set()
    for t, ax in split:
        spans = _spans(t, ax, per)
        if spans is None:
            return None
        ends.update(e for _s, e in spans)
    dev = a.device
    parts: list[Node] = []
    i0 = 0
    for i1 in sorted(ends):
        if how == "m":
            pa, pb = block_of(a, 0, i0, i1), b
        elif how == "n":
            pa, pb = a, block_of(b, 1, i0, i1)
        else:
            pa, pb = block_of(a, 1, i0, i1), block_of(b, 0, i0, i1)
        parts.append(make("matmul", (pa, pb), dtype, (pa.shape[0], pb.shape[1]), (), dev))
        i0 = i1
    if how == "k":
        out = parts[0]
        for p in parts[1:]:
            out = make("add", (out, p), dtype, (m, n), (), dev)
    else:
        out = concat_nodes(parts, 0 if how == "m" else 1)
    return views.reshape(out, tuple(shape))
