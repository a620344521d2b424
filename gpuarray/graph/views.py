"""Views as index arithmetic: slicing, permuting, broadcasting, reshaping.

A ``view`` node reads its base's elements through (shape, strides, offset),
in elements of the base's C-contiguous layout, as NumPy's strided views do.
A view of a view composes into one view of the same base, so chains of
slicing stay one index computation. ``reshape`` reads elements in C order.
No view copies data; a kernel computes the index.

>>> import numpy as np
>>> from .node import leaf
>>> v = strided_view(leaf(np.arange(6.0), "cpu"), (3,), (2,), 1)
>>> v.op, v.attrs
('view', ((2,), 1))
"""

from __future__ import annotations

from .node import Node, make, reshaped_leaf
from .shapes import Shape, contiguous_strides, size_of, view_strides


def strided_parts(node: Node) -> tuple[Node, Shape, tuple[int, ...], int]:
    """(base, shape, strides, offset) describing ``node`` as a strided view of a base."""
    if node.op == "view" and not node.realized:
        strides, offset = node.attrs
        return node.inputs[0], node.shape, strides, offset
    return node, node.shape, contiguous_strides(node.shape), 0


def strided_view(base: Node, shape: Shape, strides: tuple[int, ...], offset: int) -> Node:
    """A view of ``base``; the base itself when the view is the identity."""
    shape = tuple(map(int, shape))           # map and a list: no generator resumed per axis (hot path)
    strides = tuple([0 if d == 1 else int(st) for d, st in zip(shape, strides)])
    if shape == base.shape and offset == 0 and strides == view_strides(base.shape):
        return base
    return make("view", (base,), base.dtype, shape, (strides, int(offset)))


def compose(node: Node, shape: Shape, strides: tuple[int, ...], offset: int) -> Node:
    """Apply a strided map given relative to ``node``'s strided description (already composed)."""
    base = strided_parts(node)[0]
    return strided_view(base, shape, strides, offset)


def permute(node: Node, axes: tuple[int, ...]) -> Node:
    base, shape, strides, off = strided_parts(node)
    return strided_view(base, tuple([shape[a] for a in axes]), tuple([strides[a] for a in axes]), off)


def broadcast_to(node: Node, shape: Shape) -> Node:
    if node.shape == shape:          # the node itself (strided_view would find it again)
        return node
    base, old, strides, off = strided_parts(node)
    lead = len(shape) - len(old)
    new_strides = [0] * lead
    for i, d in enumerate(old):
        new_strides.append(0 if d == 1 and shape[lead + i] != 1 else strides[i])
    return strided_view(base, shape, tuple(new_strides), off)


def reshape(node: Node, shape: Shape) -> Node:
    """``node``'s elements in C order in ``shape`` (sizes must agree)."""
    shape = tuple(shape)
    if shape == node.shape:
        return node
    if node.data is not None:
        return reshaped_leaf(node, shape)
    if node.op == "reshape":
        node = node.inputs[0]
        if node.shape == shape:
            return node
    if node.op == "view" and size_of(shape) > 0:
        base, old, strides, off = strided_parts(node)
        attempt = nocopy_strides(old, strides, shape)
        if attempt is not None:
            return strided_view(base, shape, attempt, off)
    return make("reshape", (node,), node.dtype, shape)


def nocopy_strides(old: Shape, strides: tuple[int, ...], new: Shape) -> tuple[int, ...] | None:
    """NumPy's attempt_nocopy_reshape: strides for ``new`` over the same memory, or None."""
    o = [(d, s) for d, s in zip(old, strides, strict=True) if d != 1]
    n_dims = list(new)
    out = [0] * len(new)
    oi = ni = 0
    nonones = [i for i, d in enumerate(n_dims) if d != 1]
    nn = [n_dims[i] for i in nonones]
    res = [0] * len(nn)
    while oi < len(o) and ni < len(nn):
        np_, op_ = nn[ni], o[oi][0]
        nj, oj = ni + 1, oi + 1
        while np_ != op_:
            if np_ < op_:
                np_ *= nn[nj]
                nj += 1
            else:
                op_ *= o[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if o[k][1] != o[k + 1][0] * o[k + 1][1]:
                return None
        res[nj - 1] = o[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            res[k - 1] = res[k] * nn[k]
        ni, oi = nj, oj
    if ni != len(nn) or oi != len(o):
        return None
    for idx, i in enumerate(nonones):
        out[i] = res[idx]
    return tuple(out)


def write_view(base: Node, shape: Shape, strides: tuple[int, ...], offset: int, value: Node) -> Node:
    """``base`` with the elements of its strided view (``shape``, ``strides``, ``offset``, in
    elements of ``base``'s C layout) replaced by ``value`` (of ``shape``): a ``setstrided`` node.

    The view's axes are normalized first (unit axes dropped, negative strides flipped, axes in
    decreasing stride), so that a kernel finds the view index of a base element by dividing by
    each stride in turn. A view whose elements overlap (a zero stride, as of ``broadcast_to``)
    cannot be written: ValueError.

    >>> import numpy as np
    >>> from .node import leaf
    >>> b = leaf(np.zeros(6), "cpu")
    >>> write_view(b, (3,), (2,), 1, leaf(np.ones(3), "cpu")).attrs
    ((1,), (2,))
    """
    if size_of(shape) == 0:
        return base
    if offset == 0 and size_of(shape) == size_of(base.shape) and all(
            s == c for d, s, c in zip(shape, strides, contiguous_strides(shape), strict=True) if d != 1):
        return reshape(value, base.shape)
    keep = [d for d in range(len(shape)) if shape[d] != 1]
    sh = [int(shape[d]) for d in keep]
    st = [int(strides[d]) for d in keep]
    v = reshape(value, tuple(sh))
    if not (len(st) == 1 and st[0] > 0):      # (a row or a column: nothing to flip, order or check)
        v, offset, sh, st = _normalized(v, offset, sh, st, shape, strides)
    return make("setstrided", (base, v), base.dtype, base.shape, ((int(offset),), tuple(st)), base.device)


def _normalized(v: Node, offset: int, sh: list[int], st: list[int], shape: Shape,
                strides: tuple[int, ...]) -> tuple[Node, int, list[int], list[int]]:
    """``write_view``'s value, offset, shape and strides with negative strides flipped and axes in decreasing
    stride; ValueError where the view's elements overlap."""
    vbase, vshape, vstrides, voff = strided_parts(v)
    vst = list(vstrides)
    for k in range(len(sh)):
        if st[k] < 0:                      # walk this axis forwards in the base, backwards in the value
            offset += (sh[k] - 1) * st[k]
            st[k] = -st[k]
            voff += (sh[k] - 1) * vst[k]
            vst[k] = -vst[k]
    if vst != list(vstrides):
        v = strided_view(vbase, vshape, tuple(vst), voff)
    order = sorted(range(len(sh)), key=lambda k: -st[k])
    if order != list(range(len(sh))):
        v = permute(v, tuple(order))
        sh, st = [sh[k] for k in order], [st[k] for k in order]
    for k in range(len(sh)):
        if st[k] <= sum(st[j] * (sh[j] - 1) for j in range(k + 1, len(sh))):
            raise ValueError("cannot write through a view whose elements overlap (a broadcast or "
                             f"as_strided view: strides {tuple(strides)} for shape {tuple(shape)}); "
                             "write to a copy instead")
    return v, offset, sh, st
