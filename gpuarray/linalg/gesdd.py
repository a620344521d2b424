"""``svd`` with singular vectors of real matrices (float32 / float64) too large for Jacobi, on a wgpu
device: the eigendecomposition of the symmetric Jordan-Wielandt matrix ``J = [[0, A], [A^T, 0]]``
(``linalg.syevd``'s pieces: the reduction keeping its reflectors, divide and conquer, the
back-transformation), whose eigenvalues are ``+-sigma_i`` with eigenvectors ``(u_i; +-v_i) / sqrt(2)``.

Only the ``n`` columns of the positive eigenvalues are carried back through the reflectors. Each
``u_i`` (``v_i``) is the top (bottom) half of its eigenvector normalized on its own: the eigenvectors of
``sigma`` and ``-sigma`` mix in floating point by an angle near ``eps ||A|| / sigma``, which changes the
two halves' lengths, not their directions. Singular values at most ``TAU eps ||A||`` (the null cluster,
widened while the next one is within that of it) have no usable pairing: the ``2 k`` eigenvectors of
the cluster's eigenvalues (the middle of the spectrum, whatever their signs) span ``{(u; 0), (0; v)}``
of the cluster, and an orthonormal basis of the span of their top (bottom) halves, from the
eigenvectors of the halves' ``2 k x 2 k`` Gram matrix, gives ``U`` (``V``) there; ``A V - U S`` stays
of the order of ``TAU eps ||A||``. A non-square matrix is first ``Q R`` on the device
(``linalg.householder``): ``U = Q U_R`` (with ``full_matrices``, ``Q``'s complete form and its last
``m - n`` columns as they are). Only ``J``'s ``d`` and ``e`` (``4 n`` values), the
divide-and-conquer levels' values and ``z`` rows and, for a null cluster, its Gram matrix's
eigenproblem where no device kernel takes it reach the host.

Singular vectors are unique up to sign (together: ``u_i`` and ``v_i``) and within repeated singular
values; these are not LAPACK's signs.

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray(np.diag([3.0, 1.0, 2.0]).astype(np.float32), device="wgpu:0")
>>> u, s, vh = svd(a, lambda g: xp.linalg.eigh(g))
>>> np.round(np.asarray(s), 5).tolist(), np.round(np.abs(np.asarray(u)), 5).tolist()
([3.0, 2.0, 1.0], [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..array_object.array import GpuArray
from ..array_object.elementwise import apply
from ..core.ops import OPS
from ..namespace.creation import asarray, zeros
from ..namespace.indexing import take
from ..namespace.linear_algebra import matmul
from ..namespace.manipulation import concat, matrix_transpose, reshape, stack
from ..namespace.statistical import max as _max
from ..namespace.statistical import sum as _sum
from . import householder, jacobi, syevd, tridiag

MIN_K = 512             # min(m, n) from which the device is faster than LAPACK on the host (applies)
NS_STEPS = 4            # Newton-Schulz steps at most (_orthonormalized): from a defect of 0.1, 1e-16 in four
TAU = 64                # singular values at most TAU eps ||A|| form the null cluster (module docstring)

Eigh = Callable[[GpuArray], Any]        # gpuarray.linalg.eigh: (eigenvalues ascending, vectors in columns)
SVD = tuple[GpuArray, GpuArray, GpuArray]


def applies(shape: tuple[int, ...]) -> bool:
    """Whether ``svd`` of a stack of ``shape`` takes the device path: ``min(m, n) >= MIN_K`` (the
    adapter may still decline). Calibrated on the H200 (docs/benchmarks.md), one matrix against
    NumPy on its host: 768 x 768 float32 102 ms against 283, 512 x 512 54-69 against 72-81, 384 x
    384 51 against 37; the divide and conquer runs matrix by matrix, so a stack gains no more.

    >>> applies((1024, 1024)), applies((2048, 512)), applies((512, 4096)), applies((4, 768, 768))
    (True, True, True, True)
    >>> applies((384, 384)), applies((8, 256, 256)), applies((0, 600, 600)), applies((4096, 1))
    (False, False, False, False)
    """
    return 0 not in shape and min(shape[-2:]) >= MIN_K


def svd(x: GpuArray, eigh: Eigh, full_matrices: bool = False) -> SVD | None:
    """``(U, S, Vh)`` of each real matrix of ``x`` (``full_matrices``: ``U`` and ``Vh`` square), or None
    where LAPACK must take them (values that are not finite, columns the reduction would rescale);
    ``eigh`` decomposes a null cluster's Gram matrix where Jacobi does not take it."""
    m, n = x.shape[-2:]
    if m == n:
        return _square(x, eigh)
    k = min(m, n)
    got = householder.qr((x if m > n else matrix_transpose(x))._node, "complete" if full_matrices else "reduced")
    if got is None:
        return None
    q, r = got
    sq = _square(r[..., :k, :], eigh)
    if sq is None:
        return None
    u, s, vh = sq
    qu = matmul(q[..., :k], u)
    if full_matrices:                   # Q (U_R 0; 0 I): the complement of Q's first k columns as it is
        qu = concat([qu, q[..., k:]], axis=-1)
    if m > n:
        return qu, s, vh
    return matrix_transpose(vh), s, matrix_transpose(qu)       # x^T = (Q U) S Vh


def cluster(w: np.ndarray, n: int) -> int:
    """How many of the ``n`` smallest singular values form the null cluster, from ``J``'s eigenvalues
    ``w`` (ascending, ``2 n``; the singular values are ``w[n:]``).

    >>> cluster(np.array([-2.0, -1.0, -1e-9, 1e-9, 1.0, 2.0], np.float32), 3)
    1
    >>> cluster(np.array([-2.0, -1.0, 1.0, 2.0], np.float32), 2), cluster(np.zeros(4, np.float32), 2)
    (0, 2)
    """
    sig = w[n:].astype(np.float64)
    tau = TAU * float(np.finfo(w.dtype).eps) * max(float(sig[-1]), 0.0)
    k = int(np.count_nonzero(sig <= tau))
    while 0 < k < n and sig[k] <= sig[k - 1] + tau:
        k += 1
    return k


def _jordan_wielandt(a: GpuArray) -> GpuArray:
    batch, n = a.shape[:-2], a.shape[-1]
    zero = zeros(batch + (n, n), dtype=a.dtype, device=a.device)
    return concat([concat([zero, a], axis=-1), concat([matrix_transpose(a), zero], axis=-1)], axis=-2)


def _normalized(t: GpuArray) -> GpuArray:
    """``t`` with each column scaled to unit length."""
    return t / apply(OPS["sqrt"], _sum(t * t, axis=-2, keepdims=True))


def _basis(t: GpuArray, r: int, eigh: Eigh) -> GpuArray:
    """``r`` orthonormal columns spanning the dominant ``r``-dimensional part of the span of ``t``'s
    columns (``n x c``): the eigenvectors of the ``r`` largest eigenvalues of ``t^T t`` through ``t``."""
    c = t.shape[-1]
    # shifted by I (eigenvalues near 2 and 1, not 1 and 0): Jacobi's relative test converges on the null half
    g = matmul(matrix_transpose(t), t) + asarray(np.eye(c), dtype=t.dtype, device=t.device)
    got = jacobi.eigh(g[None]._node, True) if jacobi.applies(c) else None
    vecs = got[1][0] if got is not None and got[1] is not None else eigh(g)[1]
    return _normalized(matmul(t, take(vecs, asarray(np.arange(c - 1, c - r - 1, -1), device=t.device), axis=1)))


def _square(a: GpuArray, eigh: Eigh) -> SVD | None:
    n = a.shape[-1]
    batch = a.shape[:-2]
    red = tridiag.reduce(_jordan_wielandt(a)._node)
    got = None if red is None else syevd.tridiagonal_eigen(red, a.device)
    if red is None or got is None:
        return None
    w, z = got
    ws = w.reshape(-1, 2 * n)
    ks = [cluster(wi, n) for wi in ws]
    kmax = max(ks)
    cols = asarray(np.arange(2 * n - 1, n - kmax - 1, -1), device=a.device)     # descending, past 0 by kmax
    zb = tridiag.back_transform(red, take(z, cols, axis=-1))
    u = _normalized(zb[..., :n, :n])
    v = _normalized(zb[..., n:, :n])
    s = np.maximum(w[..., 2 * n - 1:n - 1:-1], 0)
    if kmax:                            # the null clusters' columns, matrix by matrix
        u3, v3, z3 = (reshape(t, (len(ks),) + t.shape[-2:]) for t in (u, v, zb))
        us, vs = [], []
        for i, k in enumerate(ks):
            part = z3[i][:, n - k:n + k]
            us.append(concat([u3[i][:, :n - k], _basis(part[:n], k, eigh)], axis=-1) if k else u3[i])
            vs.append(concat([v3[i][:, :n - k], _basis(part[n:], k, eigh)], axis=-1) if k else v3[i])
        u, v = reshape(stack(us), batch + (n, n)), reshape(stack(vs), batch + (n, n))
    u, v = _orthonormalized(u, v)
    return u, asarray(s, device=a.device), matrix_transpose(v)


def _orthonormalized(u: GpuArray, v: GpuArray) -> tuple[GpuArray, GpuArray]:
    """``u`` and ``v`` (square stacks of nearly orthonormal columns) carried to their nearest
    orthonormal matrices: Newton-Schulz steps ``X <- X (3 I - X^T X) / 2`` until ``max |X^T X - I|`` of
    both is at most ``n eps`` (one scalar read a step; at most ``NS_STEPS``)."""
    n = u.shape[-1]
    tol = n * float(np.finfo(u.dtype).eps)
    eye = asarray(np.eye(n), dtype=u.dtype, device=u.device)
    for _ in range(NS_STEPS):
        gu = matmul(matrix_transpose(u), u)
        gv = matmul(matrix_transpose(v), v)
        worst = _max(apply(OPS["abs"], concat([gu - eye, gv - eye], axis=-1)))
        if not float(worst) > tol:
            break
        u = 1.5 * u - 0.5 * matmul(u, gu)
        v = 1.5 * v - 0.5 * matmul(v, gv)
    return u, v
