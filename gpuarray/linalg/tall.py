"""Tall and skinny ``svd`` / ``svdvals`` / ``qr`` with the long dimension on the device (Cholesky-QR2).

For an ``m x n`` matrix with ``m >= TALL * n`` and ``n <= MAX_COLS`` (``X`` of samples by features:
``Ridge(solver="svd")``, ``LinearDiscriminantAnalysis``, ``PCA(svd_solver="full")``), ``X = Q R``
is computed as Cholesky-QR2 (Fukaya, Nakatsukasa et al. 2014): ``G = X^T X`` on the device, its
Cholesky factor ``R1`` on the host (``n x n``), ``Q1 = X R1^-1`` on the device, and once more from
``Q1`` (``R = R2 R1``), which makes ``Q`` orthogonal to working precision for condition numbers up
to about ``eps^-1/2`` of the working dtype. Then ``R = Ur S Vh`` on the host (LAPACK, ``n x n``) and
``U = Q1 (R2^-1 Ur)`` on the device (``qr``: ``Q = Q1 R2^-1`` and ``R``). float32 data is first
tried in float32 (condition numbers up to 3e2), then in float64 where the adapter has it (widened
inside the kernels: up to 1e7).

Only ``n x n`` matrices cross to the host (counted in ``metrics()``); a matrix whose first
factor shows a larger condition number, or that is rank deficient, takes Householder QR on the
device instead (``svd_householder``: ``R``'s SVD on the host), the long dimension still on the device;
LAPACK's SVD on the host only where that declines too (NaN, infinity, the in-process provider).

>>> import numpy as np, gpuarray as xp
>>> x = xp.asarray(np.random.default_rng(0).normal(size=(4096, 8)), device="cpu")
>>> u, s, vh = svd_tall(x, True)
>>> bool(np.allclose(np.asarray(u) * np.asarray(s) @ np.asarray(vh), np.asarray(x)))
True
"""

from __future__ import annotations

import numpy as np

from ..array_object.array import GpuArray
from ..core import dtypes as _dtypes
from ..namespace.creation import asarray
from . import householder

TALL = 8            # m >= TALL * n
MAX_COLS = 64       # n <= MAX_COLS: the host works on panels of at most 64 columns
MIN_ROWS = 4096     # smaller problems go to the host whole (cheaper than five dispatches)
COND_LIMIT = {np.dtype(np.float64): 1e7, np.dtype(np.float32): 3e2}   # by working dtype


def applies(x: GpuArray, reduced: bool) -> bool:
    """Whether ``svd_tall`` takes ``x`` (a 2-D real matrix, tall and skinny, reduced ``U``)."""
    if x.ndim != 2 or x.dtype not in (_dtypes.float32, _dtypes.float64):
        return False
    m, n = x.shape
    return reduced and 0 < n <= MAX_COLS and m >= max(TALL * n, MIN_ROWS)


def _work_dtypes(x: GpuArray) -> list[np.dtype]:
    """The working dtypes to try in order: float32 data first in float32 (its kernels compile in a
    moment; the first float64 register-blocked products took the H200's driver about 5 s each to
    compile), then in float64 where the adapter has it; float64 data in float64."""
    if x.dtype == _dtypes.float64:
        return [_dtypes.float64]
    return [x.dtype] + ([_dtypes.float64] if x.device.supports(_dtypes.float64) else [])


def _gram_chol(q: GpuArray, wdt: np.dtype) -> np.ndarray | None:
    """The upper Cholesky factor of ``q^T q`` (computed on the device, factored on the host), or
    None when it is not positive definite or its condition number exceeds the working limit."""
    g = np.asarray(q.mT @ q).astype(np.float64)
    try:
        r = np.linalg.cholesky((g + g.T) / 2).T
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(r)):
        return None
    sv = np.linalg.svd(r, compute_uv=False)         # n x n: the condition number of q itself
    if sv[-1] <= sv[0] / COND_LIMIT[np.dtype(wdt)]:
        return None
    return r


def _cholqr2(x: GpuArray) -> tuple[GpuArray, np.ndarray, np.ndarray, np.dtype] | None:
    """``(Q1, R1, R2, work dtype)`` of Cholesky-QR2 (``x = Q1 R1``, ``Q1 = Q R2``), or None."""
    for wdt in _work_dtypes(x):
        xw = x.astype(wdt) if x.dtype != wdt else x
        r1 = _gram_chol(xw, wdt)
        if r1 is None:
            continue
        q1 = xw @ asarray(np.linalg.inv(r1).astype(wdt), device=x.device)
        r2 = _gram_chol(q1, wdt)
        if r2 is not None:
            return q1, r1, r2, np.dtype(wdt)
    return None


def qr_tall(x: GpuArray) -> tuple[GpuArray, GpuArray] | None:
    """``(Q, R)`` of ``x`` (reduced; R with a positive diagonal), or None (see the module docstring)."""
    got = _cholqr2(x)
    if got is None:
        return None
    q1, r1, r2, wdt = got
    q = q1 @ asarray(np.linalg.inv(r2).astype(wdt), device=x.device)
    if q.dtype != x.dtype:
        q = q.astype(x.dtype)
    return q, asarray(np.triu(r2 @ r1).astype(x.dtype), device=x.device)


def svd_tall(x: GpuArray, want_vectors: bool) -> tuple[GpuArray, GpuArray, GpuArray] | GpuArray | None:
    """``(U, S, Vh)`` of ``x`` (reduced), or only ``S`` without ``want_vectors``; None when
    Cholesky-QR2 does not apply to this matrix (see the module docstring)."""
    got = _cholqr2(x)
    if got is None:
        return None
    q1, r1, r2, wdt = got
    dev = x.device
    if not want_vectors:
        return asarray(np.linalg.svd(r2 @ r1, compute_uv=False).astype(x.dtype), device=dev)
    ur, s, vh = np.linalg.svd(r2 @ r1)
    sv = asarray(s.astype(x.dtype), device=dev)
    u = q1 @ asarray(np.linalg.solve(r2, ur).astype(wdt), device=dev)
    if u.dtype != x.dtype:
        u = u.astype(x.dtype)
    return u, sv, asarray(vh.astype(x.dtype), device=dev)


def svd_householder(x: GpuArray, want_vectors: bool) -> tuple[GpuArray, GpuArray, GpuArray] | GpuArray | None:
    """``svd_tall`` for the matrices Cholesky-QR2 declines (ill-conditioned or rank deficient): ``x = Q R``
    by Householder QR on the device (``householder.qr``), the SVD of the ``n x n`` ``R`` on the host,
    ``U = Q Ur`` on the device; None where the device's QR declines ``x`` too (NaN, infinity)."""
    if not applies_device(x):
        return None
    got = householder.qr(x._node, "reduced")
    if got is None:
        return None
    q, r = got
    rh = np.asarray(r).astype(np.float64)
    dev = x.device
    if not want_vectors:
        return asarray(np.linalg.svd(rh, compute_uv=False).astype(x.dtype), device=dev)
    ur, s, vh = np.linalg.svd(rh)
    return (q @ asarray(ur.astype(x.dtype), device=dev), asarray(s.astype(x.dtype), device=dev),
            asarray(vh.astype(x.dtype), device=dev))


def applies_device(x: GpuArray) -> bool:
    """Whether ``x`` (tall and skinny, ``applies``) is on a wgpu device with its dtype (Householder QR)."""
    return x.device.kind == "wgpu" and x.device.supports(x.dtype)
