"""Basic indexing as views: integers, slices (with steps, negative indices), None, ``...``."""

from __future__ import annotations

import operator
from typing import Any

from .graph.node import Node
from .graph.views import strided_parts, strided_view


def _normalize_key(key: Any, ndim: int) -> list[Any]:
    if not isinstance(key, tuple):
        key = (key,)
    items = list(key)
    n_ell = sum(1 for k in items if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = 0
    for k in items:
        if k is None or k is Ellipsis:
            continue
        if isinstance(k, (slice, int)) or hasattr(k, "__index__"):
            consumed += 1
            continue
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`) and None (`numpy.newaxis`) are valid indices "
            f"here; got {type(k).__name__}"
        )
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed")
    if n_ell:
        i = items.index(Ellipsis)
        items[i:i + 1] = [slice(None)] * (ndim - consumed)
    else:
        items += [slice(None)] * (ndim - consumed)
    return items


def basic_index(node: Node, key: Any) -> Node:
    """The view ``node[key]`` for a basic index."""
    base, shape, strides, offset = strided_parts(node)
    items = _normalize_key(key, len(shape))
    new_shape: list[int] = []
    new_strides: list[int] = []
    axis = 0
    for k in items:
        if k is None:
            new_shape.append(1)
            new_strides.append(0)
            continue
        size, stride = shape[axis], strides[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(size)
            n = len(range(start, stop, step))
            new_shape.append(n)
            new_strides.append(stride * step)
            if n:
                offset += start * stride
        else:
            i = operator.index(k)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size}")
            offset += (i % size) * stride
        axis += 1
    return strided_view(base, tuple(new_shape), tuple(new_strides), offset)
