"""Utility functions: diff.

``diff`` is views and ``subtract`` (``not_equal`` for booleans, as NumPy
does), and ``prepend`` / ``append`` are joined with ``concat`` (a fusable
instruction), so ``n`` rounds of differences, with what is joined, are one
elementwise kernel.

>>> import gpuarray as xp
>>> xp.diff(xp.asarray([1, 4, 9, 16], device="cpu")).tolist()
[3, 5, 7]
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..array_object.array import GpuArray, expect_array
from ..array_object.elementwise import apply
from ..core import dtypes as _dtypes
from ..core.ops import OPS
from ..graph.shapes import normalize_axis
from . import manipulation
from .creation import asarray, full


def _piece(v: Any, x: GpuArray, axis: int, name: str) -> GpuArray:
    """``prepend`` / ``append`` as an array on ``x``'s device; a scalar becomes length 1 along ``axis``."""

    if isinstance(v, GpuArray):
        if v.device != x.device:
            raise ValueError(f"diff: {name} is on {v.device.name} and x on {x.device.name}; "
                             "move one with to_device() first")
        arr = v
    elif _dtypes.scalar_kind(v) is not None:
        shape = tuple(1 if d == axis else s for d, s in enumerate(x.shape))
        return full(shape, v, dtype=_dtypes.result_type(x.dtype, v, default_float=x.device.default_float),
                    device=x.device)
    else:
        arr = asarray(v, device=x.device)
    if arr.ndim == 0:
        shape = tuple(1 if d == axis else s for d, s in enumerate(x.shape))
        return manipulation.broadcast_to(arr, shape)
    if arr.ndim != x.ndim or any(a != b for d, (a, b) in enumerate(zip(arr.shape, x.shape, strict=True))
                                 if d != axis):
        raise ValueError(f"diff: {name} has shape {arr.shape}; expected the shape of x {x.shape} "
                         f"except along axis {axis}")
    return arr


def diff(x: GpuArray, /, n: int = 1, axis: int = -1, *, prepend: Any = None, append: Any = None) -> GpuArray:
    """The ``n``-th discrete difference along ``axis``: ``out[i] = x[i + 1] - x[i]``, applied ``n`` times.

    ``n`` and ``axis`` may also be passed by position, in NumPy's order (``diff(x, 2)``, as
    scikit-learn's ``roc_curve`` does). ``prepend`` / ``append`` are joined to ``x`` along ``axis``
    first. The result is ``n`` shorter along ``axis`` (empty when ``n`` is at least its length).
    Booleans give ``x[i + 1] != x[i]``.

    >>> import gpuarray as xp
    >>> xp.diff(xp.asarray([[1, 2, 4], [0, 0, 5]], device="cpu"), axis=1, n=2).tolist()
    [[1], [5]]
    """
    expect_array(x, "diff")
    if x.ndim == 0:
        raise ValueError("diff: x must have at least one dimension; got a 0-d array")
    if x.dtype not in _dtypes.NUMERIC and x.dtype != _dtypes.bool_:
        raise TypeError(f"Only numeric dtypes are allowed in diff; got {x.dtype}.")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"diff: axis must be an int; got {type(axis).__name__}")
    ax = normalize_axis(int(axis), x.ndim)
    if isinstance(n, bool):
        raise TypeError("diff: n must be an int; got bool")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative; got {n}")
    if prepend is not None or append is not None:
        parts = [x]
        if prepend is not None:
            parts.insert(0, _piece(prepend, x, ax, "prepend"))
        if append is not None:
            parts.append(_piece(append, x, ax, "append"))
        x = manipulation.concat(parts, axis=ax)
    hi = tuple(slice(1, None) if d == ax else slice(None) for d in range(x.ndim))
    lo = tuple(slice(None, -1) if d == ax else slice(None) for d in range(x.ndim))
    op = OPS["not_equal" if x.dtype == _dtypes.bool_ else "subtract"]
    for _ in range(n):
        if x.shape[ax] == 0:
            break
        x = apply(op, x[hi], x[lo])
    return x


__all__ = ["diff"]
