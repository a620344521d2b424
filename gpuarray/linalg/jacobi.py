"""``eigh`` and ``eigvalsh`` of stacks of small real symmetric matrices (float32 / float64, at most
``wgpu_eigh.MAX_N`` rows) on a wgpu device: the cyclic Jacobi method, one workgroup a matrix, one
dispatch for the stack (``providers/wgpu_eigh.py``).

One node, ``linalg_syevj`` (attrs ``(vectors,)``), holds per matrix the eigenvalues ascending (then
the eigenvectors, as LAPACK lays them out) and a flag after the last matrix: raised for input that
is not finite or a matrix that did not converge, which LAPACK then decomposes on the host (its
result, NaN included). Eigenvectors are unique up to sign (and within eigenspaces of repeated
eigenvalues); Jacobi's signs are not LAPACK's.

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray(np.array([[2.0, 1.0], [1.0, 2.0]], np.float32), device="wgpu:0")
>>> w, v = eigh(a._node, True)
>>> np.round(np.asarray(w), 5).tolist()
[1.0, 3.0]
"""

from __future__ import annotations

import math

from ..array_object.array import GpuArray
from ..graph import views
from ..graph.node import Node
from ..graph.shapes import contiguous_strides
from ..providers.wgpu_eigh import MAX_N
from .lu import _packed


def applies(n: int) -> bool:
    """Whether matrices of ``n`` rows take the Jacobi kernel (the adapter may still decline them)."""
    return 0 < n <= MAX_N


def eigh(a: Node, vectors: bool) -> tuple[GpuArray, GpuArray | None] | None:
    """(eigenvalues, eigenvectors or None) of each matrix of ``a``, or None where LAPACK must take it."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    per = (n + 1) * n if vectors else n
    packed = _packed("syevj", (a,), math.prod(batch) * per + 1, (bool(vectors),))
    if float(GpuArray(views.strided_view(packed, (), (), packed.shape[0] - 1))) != 0.0:
        return None
    bst = tuple(s * per for s in contiguous_strides(batch))
    w = GpuArray(views.strided_view(packed, batch + (n,), bst + (1,), 0))
    if not vectors:
        return w, None
    return w, GpuArray(views.strided_view(packed, batch + (n, n), bst + (n, 1), n))
