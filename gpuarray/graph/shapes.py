"""Shape arithmetic: broadcasting, contiguous strides, view composition."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Shape = tuple[int, ...]


def broadcast_shapes(*shapes: Shape) -> Shape:
    """Broadcast shapes as NumPy does.

    >>> broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    ndim = max(map(len, shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s):
            j = ndim - len(s) + i
            if out[j] == 1:
                out[j] = d
            elif d != 1 and d != out[j]:
                raise ValueError(
                    "operands could not be broadcast together with shapes "
                    + " ".join(str(tuple(x)) for x in shapes)
                )
    return tuple(out)


def broadcast_pair(a: Shape, b: Shape) -> Shape:
    """``broadcast_shapes(a, b)`` for two shapes (a binary operation's; fewer calls for equal ranks).

    >>> broadcast_pair((3, 1), (1, 4))
    (3, 4)
    """
    if len(a) != len(b):
        return broadcast_shapes(a, b)
    out: tuple[int, ...] = ()
    for x, y in zip(a, b):
        if x == y or y == 1:
            out += (x,)
        elif x == 1:
            out += (y,)
        else:
            return broadcast_shapes(a, b)        # raises NumPy's error
    return out


# Strides by shape, remembered: every view and index records them several times (a transpose
# asked for them nine times), and programs see few distinct shapes. Values are Python ints
# whatever integer type the shape held; the tables are emptied when they reach _STRIDES_MAX.
_STRIDES_MAX = 4096
_contiguous: dict[tuple, Shape] = {}
_view: dict[tuple, Shape] = {}


def contiguous_strides(shape: Sequence[int]) -> Shape:
    """Element strides of a C-contiguous array of this shape."""
    key = shape if type(shape) is tuple else tuple(shape)
    got = _contiguous.get(key)
    if got is not None:
        return got
    strides = [1] * len(key)
    acc = 1
    for i in range(len(key) - 1, -1, -1):
        strides[i] = acc
        acc *= max(int(key[i]), 1)
    if len(_contiguous) >= _STRIDES_MAX:
        _contiguous.clear()
    got = _contiguous[key] = tuple(strides)
    return got


def view_strides(shape: Sequence[int]) -> Shape:
    """C-contiguous element strides as a ``view`` node records them: 0 along axes of length 1.

    >>> view_strides((2, 1, 3))
    (3, 0, 1)
    """
    key = shape if type(shape) is tuple else tuple(shape)
    got = _view.get(key)
    if got is None:
        got = tuple([0 if d == 1 else s for d, s in zip(key, contiguous_strides(key), strict=True)])
        if len(_view) >= _STRIDES_MAX:
            _view.clear()
        _view[key] = got
    return got


def size_of(shape: Sequence[int]) -> int:
    return math.prod(shape)


def broadcast_pattern(in_shape: Shape, out_shape: Shape) -> tuple[bool, ...] | None:
    """None when in_shape == out_shape, else a flag per input dim: True where it is broadcast."""
    if in_shape == out_shape:
        return None
    lead = len(out_shape) - len(in_shape)
    return tuple(d == 1 and out_shape[lead + i] != 1 for i, d in enumerate(in_shape))


def normalize_axis(axis: int, ndim: int, name: str = "axis") -> int:
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{name} must be an integer; got {type(axis).__name__}")
    axis = int(axis)      # NumPy integers are fine, as in NumPy
    if not -ndim <= axis < ndim:
        from numpy.exceptions import AxisError

        raise AxisError(f"{name} {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim
