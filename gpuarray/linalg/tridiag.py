"""``eigvalsh`` of real symmetric matrices (float32 / float64) larger than Jacobi takes, on a wgpu
device: Householder reduction to tridiagonal form and bisection (``providers/wgpu_sytrd.py``),
nothing of the matrix on the host; and ``svdvals`` of real matrices that are neither small (Jacobi)
nor tall and skinny (``linalg/tall.py``) through it: the singular values of ``A`` (``m x n``) are the
``min(m, n)`` largest eigenvalues of the symmetric ``[[0, A], [A^T, 0]]`` (Jordan-Wielandt; the others
are their negatives and ``|m - n|`` zeros), found with LAPACK's absolute accuracy (a few ``eps
||A||``) at four times the arithmetic of a bidiagonal reduction.

One node, ``linalg_syevb`` (attrs ``(False,)``: values only), holds per matrix the eigenvalues
ascending and a flag after the last matrix: raised for input that is not finite or a column so
small that LAPACK would rescale it, which LAPACK then decomposes on the host (its result, its
errors). Below ``MIN_WORK`` (rows times matrices, at most 8 of them counted) the host's LAPACK is
faster (``2 n`` dependent dispatches, whatever the stack) and takes them: on the H200 one 1024 x
1024 float32 matrix took 36 ms on the device and 60-120 with NumPy, one 512 x 512 float32 19 and
18, float64 25 and 17, a stack of 8 of 512 x 512 float32 20 and 124 (docs/benchmarks.md).

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray(np.diag(np.arange(4.0, dtype=np.float32)), device="wgpu:0")
>>> np.asarray(eigvalsh(a._node)).tolist()
[0.0, 1.0, 2.0, 3.0]
"""

from __future__ import annotations

import math

from ..array_object.array import GpuArray
from ..array_object.elementwise import apply
from ..core.ops import OPS
from ..graph import views
from ..graph.node import Node
from ..graph.shapes import contiguous_strides
from ..namespace.creation import zeros
from ..namespace.manipulation import concat, matrix_transpose
from ..namespace.sorting import sort
from . import householder
from .lu import _packed, flagged

MIN_WORK = 1024         # n * min(matrices, 8) below this: LAPACK on the host (calibrated on the H200)


def applies(shape: tuple[int, ...]) -> bool:
    """Whether a stack of ``shape`` (``(..., n, n)``) takes the device reduction (the adapter may
    still decline it; matrices Jacobi takes never reach it: ``gpuarray.linalg.eigvalsh``).

    >>> applies((1024, 1024)), applies((512, 512)), applies((2, 512, 512))
    (True, False, True)
    """
    return shape[-1] * min(math.prod(shape[:-2]), 8) >= MIN_WORK


def eigvalsh(a: Node) -> GpuArray | None:
    """The eigenvalues (ascending) of each symmetric matrix of ``a`` (its lower triangle), or None
    where LAPACK must take them."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    packed = _packed("syevb", (a,), math.prod(batch) * n + 1, (False,))
    if flagged(packed):
        return None
    return GpuArray(views.strided_view(packed, batch + (n,), contiguous_strides(batch + (n,)), 0))


def svd_applies(shape: tuple[int, ...]) -> bool:
    """Whether ``svdvals`` of a stack of ``shape`` (``(..., m, n)``) takes the device: its symmetric
    matrix of ``m + n`` rows at twice ``MIN_WORK`` (calibrated on the H200).

    >>> svd_applies((1024, 1024)), svd_applies((300, 200)), svd_applies((8, 256, 256))
    (True, False, True)
    """
    m, n = shape[-2:]
    return (m + n) * min(math.prod(shape[:-2]), 8) >= 2 * MIN_WORK


def svdvals(x: GpuArray) -> GpuArray | None:
    """The singular values (descending) of each real matrix of ``x``, or None where LAPACK must take
    them (the symmetric matrix's flag: values that are not finite, underflowing columns). A matrix at
    least twice as long one way as the other is first reduced to the ``R`` of its QR factorization on
    the device (``linalg.householder``): the symmetric matrix then has ``2 min(m, n)`` rows."""
    m, n = x.shape[-2:]
    if max(m, n) >= 2 * min(m, n):
        got = householder.qr((x if m >= n else matrix_transpose(x))._node, "reduced")
        if got is not None:
            x = got[1]
            m = n = min(m, n)
    batch = x.shape[:-2]
    top = concat([zeros(batch + (m, m), dtype=x.dtype, device=x.device), x], axis=-1)
    low = concat([matrix_transpose(x), zeros(batch + (n, n), dtype=x.dtype, device=x.device)], axis=-1)
    w = eigvalsh(concat([top, low], axis=-2)._node)
    if w is None:
        return None
    # the min(m, n) largest, each at least -eps ||A|| where the singular value is 0: their magnitudes
    return sort(apply(OPS["abs"], w[..., m + n - min(m, n):]), axis=-1, descending=True)
