"""``diag``: NumPy's function (not in the Array API; SciPy's ``RBFInterpolator`` calls ``xp.diag``).

A 1-D ``v`` gives the square matrix with ``v`` on diagonal ``k``: one elementwise kernel over the
(n+|k|)^2 output, from two index ramps (``col - row == k``) and a gather of ``v`` at the clamped
row (or column) index; a 2-D ``v`` gives its ``k``-th diagonal, a read-only strided view as
``numpy.diag`` returns (as ``linalg.diagonal``).

>>> import gpuarray as xp
>>> xp.diag(xp.asarray([1, 2], device="cpu"), k=1).tolist()
[[0, 1, 0], [0, 0, 2], [0, 0, 0]]
"""

from __future__ import annotations

import operator

from ..array_object.aliasing import derive
from ..array_object.array import GpuArray, expect_array
from ..array_object.elementwise import apply
from ..core import dtypes as _dtypes
from ..core.ops import OPS
from ..graph import views
from ..graph.node import Node, make
from .creation import _iota, zeros
from .indexing import take


def diag(v: GpuArray, k: int = 0) -> GpuArray:
    """The ``k``-th diagonal of a 2-D ``v``, or a 2-D array with the 1-D ``v`` on diagonal ``k``
    (as ``numpy.diag``).

    >>> import gpuarray as xp
    >>> xp.diag(xp.reshape(xp.arange(9, device="cpu"), (3, 3)), k=-1).tolist()
    [3, 7]
    """
    v = expect_array(v, "diag")
    k = operator.index(k)
    if v.ndim == 2:
        return derive(v, lambda node: diagonal_node(node, k), writeable=False)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = v.shape[0]
    size = n + abs(k)
    dev = v.device
    it = _dtypes.int64 if size > 2**31 - 1 else _dtypes.int32
    rows = GpuArray(make("reshape", (_iota(size, it, dev)._node,), it, (size, 1)))
    cols = _iota(size, it, dev)
    hit = apply(OPS["equal"], apply(OPS["subtract"], cols, rows), k)
    if n == 0:
        return zeros((size, size), dtype=v.dtype, device=dev)
    # the diagonal element (i, j) holds v[i] when k >= 0, v[j] when k < 0; clamp so every gather is in range
    idx = apply(OPS["minimum"], rows if k >= 0 else cols, n - 1)
    vals = take(v, GpuArray(make("reshape", (idx._node,), it, (size,))))
    if k >= 0:
        vals = GpuArray(make("reshape", (vals._node,), vals.dtype, (size, 1)))
    zero = False if v.dtype == _dtypes.bool_ else 0
    return apply(OPS["where"], hit, vals, zero)


def diagonal_node(node: Node, offset: int) -> Node:
    """The ``offset``-th diagonal of each matrix of ``node`` (last two axes), as a strided view node
    (``linalg.diagonal`` and ``diag`` of a 2-D array)."""
    base, shape, strides, off = views.strided_parts(node)
    m, n = shape[-2:]
    sm, sn = strides[-2:]
    if offset >= 0:
        length, start = max(0, min(m, n - offset)), off + offset * sn
    else:
        length, start = max(0, min(m + offset, n)), off - offset * sm
    if length == 0 or 0 in shape:
        start = off
    return views.strided_view(base, shape[:-2] + (length,), strides[:-2] + (sm + sn,), start)
