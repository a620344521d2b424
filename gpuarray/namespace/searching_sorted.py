"""Searching functions that need an order or data-dependent shapes: searchsorted, nonzero.

``searchsorted`` is one ``searchsorted`` node (a binary search per element of
``x2``, in NumPy's order: NaN last, ``-0.0 == 0.0``). ``nonzero`` has a
data-dependent output shape, so it evaluates ``x`` at once and finds the
indices on the host; on a GPU device this counts in
``metrics()["host_fallbacks"]`` and the results are put back on ``x``'s device.

>>> import gpuarray as xp
>>> xp.searchsorted(xp.asarray([1.0, 2.0, 3.0], device="cpu"), 2.0, side="right").item()
2
>>> [i.tolist() for i in xp.nonzero(xp.asarray([[0, 5], [7, 0]], device="cpu"))]
[[0, 1], [1, 0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtypes, _metrics
from .._array import GpuArray, expect_array
from .._elementwise import _coerce, astype_node, common_device, finish
from ..graph.node import const, make


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
    inputs = (astype_node(x1._node, dt), n2) + ((sorter._node,) if sorter is not None else ())
    return finish(make("searchsorted", inputs, device.default_int, n2.shape,
                       (side, sorter is not None), device))


def nonzero(x: GpuArray, /) -> tuple[GpuArray, ...]:
    """Indices of the non-zero elements, one array per dimension, in C order (evaluates ``x`` now).

    >>> import gpuarray as xp
    >>> xp.nonzero(xp.asarray([0.0, 2.0, 0.0, -1.0], device="cpu"))[0].tolist()
    [1, 3]
    """
    expect_array(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero: x must have at least one dimension; got a 0-d array")
    from .creation import asarray

    host = np.asarray(x)
    if not x.device.provider.host_memory:
        _metrics.add("host_fallbacks")
    dt = x.device.default_int
    return tuple(asarray(i.astype(dt), dtype=dt, device=x.device) for i in np.nonzero(host))


__all__ = ["searchsorted", "nonzero"]
