"""Sorting functions: sort, argsort.

Each is one node of kind ``sort`` / ``argsort``; its elementwise operand runs
inside the sort kernel as a prologue. Sorts are always stable (``stable`` is
accepted and ignored). NaN sorts after +inf and ``-0.0`` equals ``0.0``, as
in NumPy; ``descending=True`` gives the reverse order by value (NaN first)
and keeps equal elements in their original order.

>>> import gpuarray as xp
>>> x = xp.asarray([3.0, float("nan"), 1.0, 2.0], device="cpu")
>>> xp.sort(x).tolist()
[1.0, 2.0, 3.0, nan]
>>> xp.argsort(x, descending=True).tolist()
[1, 0, 3, 2]
"""

from __future__ import annotations

import operator
from typing import Any

from ..array_object.array import GpuArray, expect_array
from ..array_object.elementwise import finish
from ..graph.node import make
from ..graph.shapes import normalize_axis
from .reduce_blocks import blocks_of, combine, past_binding

SORT_SHARE = 8          # a block's keys at most 1/8 of a binding: the sort's padded scratch fits


def _sort_node(x: Any, axis: int, descending: bool, kind: str) -> GpuArray:
    expect_array(x, f"{kind}")
    if isinstance(axis, bool):
        raise TypeError(f"{kind}: axis must be an integer; got bool")
    if x.dtype.kind == "c":
        raise TypeError(f"Only real-valued dtypes are allowed in {kind}; got {x.dtype}.")
    ax = normalize_axis(operator.index(axis), x.ndim)
    if not isinstance(descending, bool):
        raise TypeError(f"{kind}: descending must be a bool; got {type(descending).__name__}")
    dtype = x.dtype if kind == "sort" else x.device.default_int
    n = x._node
    lim = past_binding(n) if ax else None
    parts = blocks_of(n, (ax,), lim, SORT_SHARE) if lim else None
    if parts is not None:       # past one binding: blocks of rows, each sorted reading a window of x
        return finish(combine([make(kind, (p,), dtype, p.shape, (ax, descending), x.device) for p in parts],
                              kind, (ax,), x.ndim, x.shape))
    return finish(make(kind, (n,), dtype, x.shape, (ax, descending), x.device))


def sort(x: GpuArray, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> GpuArray:
    """A sorted copy of ``x`` along ``axis`` (stable; NaN last, or first when descending).

    >>> import gpuarray as xp
    >>> xp.sort(xp.asarray([[3, 1], [0, 2]], device="cpu"), axis=0).tolist()
    [[0, 1], [3, 2]]
    """
    return _sort_node(x, axis, descending, "sort")


def argsort(x: GpuArray, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> GpuArray:
    """Indices (default integer dtype) that sort ``x`` along ``axis``; ties keep their original order.

    >>> import gpuarray as xp
    >>> xp.argsort(xp.asarray([2, 1, 2, 0], device="cpu")).tolist()
    [3, 1, 0, 2]
    """
    return _sort_node(x, axis, descending, "argsort")


__all__ = ["sort", "argsort"]
