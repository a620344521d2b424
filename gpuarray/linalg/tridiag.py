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

``eigh``'s reduction is the same node with attrs ``(True,)`` (``reduce``): per matrix ``[d | e | tau |
V]`` (``n``, ``n`` with the last unused, ``n``, ``n x n`` row-major: column ``k`` the reflector of step
``k``, zero in rows ``<= k``, 1 at row ``k + 1``, all zero where ``tau = 0``; ``A = Q T Q^T``, ``Q =
H_0 ... H_{n-2}``, ``H_k = I - tau_k v_k v_k^T``), the flag after the last matrix; ``back_transform``
applies ``Q`` with array operations on the device (block reflectors of ``NB_APPLY`` columns in
compact-WY form, their triangular factors for every block at once). H200, one 4096 x 4096 matrix,
warm: ``reduce`` 168 ms float32 / 268 float64, ``back_transform`` of the identity 34 / 24 (77
dispatches, 23 evaluations); NumPy's whole ``eigh`` 2.9-3.2 s.

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray(np.diag(np.arange(4.0, dtype=np.float32)), device="wgpu:0")
>>> np.round(np.asarray(eigvalsh(a._node)), 5).tolist()     # LAPACK-like absolute accuracy on the device
[0.0, 1.0, 2.0, 3.0]
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..array_object.array import GpuArray
from ..array_object.elementwise import apply
from ..core.ops import OPS
from ..graph import views
from ..graph.node import Node
from ..graph.shapes import contiguous_strides
from ..namespace.creation import asarray, zeros
from ..namespace.linear_algebra import matmul
from ..namespace.manipulation import concat, matrix_transpose, moveaxis, reshape
from ..namespace.sorting import sort
from ..runtime.planner import evaluate_nodes
from . import householder
from .lu import _packed, flagged

MIN_WORK = 1024         # n * min(matrices, 8) below this: LAPACK on the host (calibrated on the H200)
# columns of back_transform's block reflectors (a power of two); H200, 4096 x 4096 Q, warm wall ms
# with 128 / 256: float32 41-80 / 26-56, float64 44-58 / 36-44 (host-bound: an evaluation a block)
NB_APPLY = 256


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


class Reduced(NamedTuple):
    """The tridiagonal reduction ``A = Q T Q^T`` of a stack (``reduce``; module docstring)."""
    d: GpuArray          # (..., n) diagonal of T
    e: GpuArray          # (..., n - 1) subdiagonal of T
    v: GpuArray          # (..., n, n) the reflectors, column k the one of step k
    tau: GpuArray        # (..., n) their scalars (0: the identity)
    de: np.ndarray       # (..., 2 n - 1) d then e, on the host (read with the flag)
    factors: tuple[GpuArray, GpuArray, int] | None     # back_transform's (V, T, nb); None: Q = I


def reduce(a: Node) -> Reduced | None:
    """The tridiagonal reduction of each symmetric matrix of ``a`` (its lower triangle), or None where
    LAPACK must take them (the flag: values that are not finite, underflowing columns) or ``a`` is empty.
    ``back_transform``'s block reflectors are recorded before ``d``, ``e`` and the flag are read (one
    download): the host records them while the device still runs the reduction.

    >>> import numpy as np, gpuarray as xp
    >>> a = xp.asarray(np.array([[2.0, 1, 1], [1, 2, 1], [1, 1, 2]]), device="cpu")
    >>> r = reduce(a._node)
    >>> np.asarray(r.d).round(3).tolist(), np.asarray(r.tau).round(3).tolist(), r.de.shape
    ([2.0, 3.0, 1.0], [1.707, 0.0, 0.0], (5,))
    """
    n = a.shape[-1]
    batch = a.shape[:-2]
    if 0 in a.shape:
        return None
    per = 3 * n + n * n
    packed = _packed("syevb", (a,), math.prod(batch) * per + 1, (True,), flag=False)
    bst = tuple(s * per for s in contiguous_strides(batch))

    def part(shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> GpuArray:
        return GpuArray(views.strided_view(packed, batch + shape, bst + strides, offset))
    d, e, v, tau = part((n,), (1,), 0), part((n - 1,), (1,), n), part((n, n), (n, 1), 3 * n), part((n,), (1,), 2 * n)
    factors = None
    if n > 2:                           # reflectors that can differ from I (the last two do not)
        m = n - 2
        nb = min(NB_APPLY, 1 << (m - 1).bit_length())
        factors = (*_factors(v, tau, -(-m // nb), nb), nb)
    flag = GpuArray(views.strided_view(packed, (1,), (1,), packed.shape[0] - 1))
    host = np.asarray(concat([reshape(part((2 * n - 1,), (1,), 0), (-1,)), flag]))
    if host[-1] != 0:
        return None
    return Reduced(d, e, v, tau, host[:-1].reshape(batch + (2 * n - 1,)), factors)


def _mask(nb: int, s: int) -> np.ndarray:
    """1 in the upper right ``s x s`` block of each diagonal ``2 s x 2 s`` block of an ``nb x nb`` matrix.

    >>> _mask(4, 1).astype(int).tolist()
    [[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]]
    """
    i = np.arange(nb)
    return (((i[:, None] // (2 * s)) == (i[None, :] // (2 * s))) & ((i[:, None] // s) % 2 == 0)
            & ((i[None, :] // s) % 2 == 1)).astype(np.float64)


def _factors(v: GpuArray, tau: GpuArray, blocks: int, nb: int) -> tuple[GpuArray, GpuArray]:
    """``V`` with zero columns to ``blocks * nb`` (at least ``n``) and the upper triangular ``T`` of
    each block of ``nb`` reflectors (``H_c0 ... H_c0+nb-1 = I - V_b T V_b^T``), ``(..., blocks, nb,
    nb)``: ``G = V_b^T V_b`` of every block as one product, then ``log2 nb`` doublings of LAPACK's
    recursive ``dlarft`` (``T12 = -T11 (V1^T V2) T22``) on whole blocks, ``T <- T - T (G * M) T`` with
    ``M`` the mask of the level's ``T12`` (``_mask``): the same products every level."""
    batch, n = v.shape[:-2], v.shape[-1]
    cols = blocks * nb
    if cols > n:                        # zero reflectors (tau = 0) past the last
        v = concat([v, zeros(batch + (n, cols - n), dtype=v.dtype, device=v.device)], axis=-1)
        tau = concat([tau, zeros(batch + (cols - n,), dtype=v.dtype, device=v.device)], axis=-1)
        evaluate_nodes([v._node])       # once, not in the prologue of every product that reads it
    vb = moveaxis(reshape(v[..., :cols], batch + (n, blocks, nb)), -2, -3)
    g = matmul(matrix_transpose(vb), vb)
    t = asarray(np.eye(nb), dtype=v.dtype, device=v.device) * reshape(tau[..., :cols], batch + (blocks, 1, nb))
    s = 1
    while s < nb:
        t = t - matmul(matmul(t, g * asarray(_mask(nb, s), dtype=v.dtype, device=v.device)), t)
        evaluate_nodes([t._node])       # one buffer, not a growing chain of differences in the next prologue
        s *= 2
    return v, t


def back_transform(r: Reduced, z: GpuArray) -> GpuArray:
    """``Q @ z`` for each matrix (``z``: ``(..., n, p)``, ``Q`` of ``r``): block reflectors of
    ``NB_APPLY`` columns from the last, ``z[c0 + 1:] -= V (T (V^T z[c0 + 1:]))`` (LAPACK's ``dormtr``).

    >>> import numpy as np, gpuarray as xp
    >>> a = np.array([[2.0, 1, 1], [1, 2, 1], [1, 1, 2]])
    >>> r = reduce(xp.asarray(a, device="cpu")._node)
    >>> q = np.asarray(back_transform(r, xp.eye(3, device="cpu")))
    >>> bool(np.allclose(q.T @ a @ q, np.diag(r.d) + np.diag(r.e, 1) + np.diag(r.e, -1)))
    True
    """
    if r.factors is None:
        return z
    v, t, nb = r.factors
    blocks = t.shape[-3]
    for b in reversed(range(blocks)):   # whole blocks: the columns past the last reflector are zero
        c0 = b * nb
        vb = v[..., c0 + 1:, c0:c0 + nb]
        low = z[..., c0 + 1:, :]
        y = matmul(t[..., b, :, :], matmul(matrix_transpose(vb), low))
        z = concat([z[..., :c0 + 1, :], low - matmul(vb, y)], axis=-2)
        if b:
            evaluate_nodes([z._node])   # (as in _factors)
    return z
