"""``qr`` of real float32 / float64 matrices on a wgpu device: blocked Householder QR, the
factorization and the forming of ``Q`` on the device (``providers/wgpu_qr.py``), nothing of the
matrix on the host.

One node, ``linalg_geqrf`` (attrs ``(mode,)``), holds ``[Q | R]`` per matrix and a flag after the
last: the flag (read once, one small read) is raised where a column's norm overflowed or
underflowed, or the input holds NaN or infinity; such input is factored again with LAPACK on the
host (which scales those columns), so the result is always LAPACK's. Empty matrices, complex
input, the in-process provider and adapters without the dtype keep the ``linalg_qr`` node.

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray(np.array([[3.0, 1.0], [4.0, 2.0]], np.float32), device="wgpu:0")
>>> q, r = qr(a._node, "reduced")
>>> np.round(np.asarray(r), 3).tolist()
[[-5.0, -2.2], [0.0, 0.4]]
"""

from __future__ import annotations

import math

from ..array_object.array import GpuArray
from ..graph import views
from ..graph.node import Node
from ..graph.shapes import contiguous_strides
from .lu import _packed, flagged


def qr(a: Node, mode: str) -> tuple[GpuArray, GpuArray] | None:
    """``(Q, R)`` of each matrix of ``a`` (``mode``: ``"reduced"`` or ``"complete"``), or None where
    the device declined it (empty, or a column that needs LAPACK's scaling)."""
    shape = a.shape
    if 0 in shape:
        return None
    m, n = shape[-2:]
    batch = shape[:-2]
    kq = m if mode == "complete" else min(m, n)
    per = m * kq + kq * n
    packed = _packed("geqrf", (a,), math.prod(batch) * per + 1, (mode,))
    if flagged(packed):
        return None
    bst = tuple(s * per for s in contiguous_strides(batch))
    return (GpuArray(views.strided_view(packed, batch + (m, kq), bst + (kq, 1), 0)),
            GpuArray(views.strided_view(packed, batch + (kq, n), bst + (n, 1), m * kq)))
