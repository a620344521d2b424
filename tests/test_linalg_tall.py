"""Tall and skinny ``svd`` / ``svdvals`` by Cholesky-QR2 with the long dimension on the device
(``gpuarray/linalg/tall.py``), against LAPACK's accuracy on both devices: reconstruction,
orthogonality and singular values within a few n * eps, ill-conditioned and rank-deficient
matrices through LAPACK on the host, nothing of the long dimension downloaded."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.linalg import tall as _linalg_tall

RNG = np.random.default_rng(31)


def _matrix(m: int, n: int, cond: float, dtype: Any) -> np.ndarray:
    u, _, vh = np.linalg.svd(RNG.normal(size=(m, n)), full_matrices=False)
    return ((u * np.geomspace(1, 1 / cond, n)) @ vh).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,n,cond", [(8192, 64, 1.0), (20000, 7, 1e3), (5000, 64, 1e5), (9000, 1, 1.0)])
def test_tall_svd_is_as_accurate_as_lapack(device: xp.Device, dtype: Any, m: int, n: int, cond: float) -> None:
    if device.name.startswith("wgpu") and dtype == np.float64 and not device.supports(np.dtype(np.float64)):
        pytest.skip("no float64 on this adapter")
    h = _matrix(m, n, cond, dtype)
    x = xp.asarray(h, device=device)
    assert _linalg_tall.applies(x, True)
    xp.reset_metrics()
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    uh, sh, vhh = np.asarray(u), np.asarray(s), np.asarray(vh)
    if device.name.startswith("wgpu"):
        assert xp.metrics()["host_fallbacks"] == 0
    assert (uh.dtype, sh.dtype, vhh.dtype) == (np.dtype(dtype),) * 3
    assert uh.shape == (m, n) and sh.shape == (n,) and vhh.shape == (n, n)
    eps = np.finfo(dtype).eps
    tol = 16 * max(n, 8) * eps               # LAPACK-style thresholds: a small multiple of n eps
    assert np.max(np.abs((uh * sh) @ vhh - h)) <= tol * np.abs(h).max()
    assert np.max(np.abs(uh.T.astype(np.float64) @ uh - np.eye(n))) <= tol
    assert np.max(np.abs(vhh.astype(np.float64) @ vhh.T - np.eye(n))) <= tol
    want = np.linalg.svd(h.astype(np.float64), compute_uv=False)
    assert np.max(np.abs(sh - want)) <= tol * want[0]
    assert np.all(np.diff(sh) <= 0)
    np.testing.assert_allclose(np.asarray(xp.linalg.svdvals(x)), sh, rtol=0, atol=tol * want[0])


def test_ill_conditioned_and_rank_deficient_take_householder_qr(wgpu_device: xp.Device) -> None:
    """Matrices Cholesky-QR2 declines go through Householder QR on the device: only R (n x n) crosses."""
    for h in (_matrix(6000, 20, 1e12, np.float64), np.hstack([_matrix(6000, 9, 1.0, np.float64), np.zeros((6000, 1))])):
        if not wgpu_device.supports(np.dtype(np.float64)):
            h = h.astype(np.float32)
        x = xp.asarray(h, device=wgpu_device)
        with xp.config(offload="always"):
            xp.evaluate(x * 1)
        xp.synchronize(wgpu_device)
        xp.reset_metrics()
        u, s, vh = (np.asarray(v) for v in xp.linalg.svd(x, full_matrices=False))
        sv = np.asarray(xp.linalg.svdvals(x))
        assert xp.metrics()["host_fallbacks"] == 0
        moved = xp.metrics()["bytes_downloaded"] + xp.metrics()["bytes_uploaded"]
        assert moved <= 6000 * 20 * 8 * 2 + 64 * 20 * 20 * 8      # the results, and n x n matrices
        eps = np.finfo(h.dtype).eps
        want = np.linalg.svd(h, compute_uv=False)
        np.testing.assert_allclose(s, want, rtol=0, atol=64 * h.shape[1] * eps * want[0])
        np.testing.assert_allclose(sv, want, rtol=0, atol=64 * h.shape[1] * eps * want[0])
        assert np.abs((u * s) @ vh - h).max() <= 64 * h.shape[1] * eps * want[0]


def test_long_dimension_stays_on_the_device(wgpu_device: xp.Device) -> None:
    h = _matrix(1 << 16, 32, 10.0, np.float32)
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        xp.evaluate(x * 1)                  # x is uploaded (lazily) before the count starts
    xp.synchronize(wgpu_device)
    xp.reset_metrics()
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    xp.evaluate(u)
    moved = xp.metrics()["bytes_downloaded"] + xp.metrics()["bytes_uploaded"]
    assert moved <= 16 * 32 * 32 * 8          # a few n x n matrices, never m x n
    assert u.device == wgpu_device


def test_not_taken_for_full_matrices_wide_or_batched(device: xp.Device) -> None:
    for shape, reduced in [((8192, 16), False), ((16, 8192), True), ((2, 8192, 16), True), ((100, 16), True)]:
        x = xp.asarray(np.ones(shape, np.float32), device=device)
        assert not _linalg_tall.applies(x, reduced)


def test_nan_input_raises_as_numpy(device: xp.Device) -> None:
    h = _matrix(8192, 8, 1.0, np.float32)
    h[5, 3] = np.nan
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.svd(h, full_matrices=False)
    with pytest.raises(np.linalg.LinAlgError):
        xp.linalg.svd(xp.asarray(h, device=device), full_matrices=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tall_qr(device: xp.Device, dtype: Any) -> None:
    if device.name.startswith("wgpu") and dtype == np.float64 and not device.supports(np.dtype(np.float64)):
        pytest.skip("no float64 on this adapter")
    h = _matrix(10000, 24, 1e3, dtype)
    x = xp.asarray(h, device=device)
    xp.reset_metrics()
    q, r = xp.linalg.qr(x)
    qh, rh = np.asarray(q), np.asarray(r)
    if device.name.startswith("wgpu"):
        assert xp.metrics()["host_fallbacks"] == 0
    eps = np.finfo(dtype).eps
    tol = 16 * 24 * eps
    assert qh.shape == (10000, 24) and rh.shape == (24, 24) and qh.dtype == rh.dtype == np.dtype(dtype)
    assert np.array_equal(rh, np.triu(rh)) and np.all(np.diag(rh) > 0)
    assert np.max(np.abs(qh @ rh - h)) <= tol * np.abs(h).max()
    assert np.max(np.abs(qh.T.astype(np.float64) @ qh - np.eye(24))) <= tol
    want = np.linalg.qr(h.astype(np.float64))[1]
    np.testing.assert_allclose(np.abs(rh), np.abs(want), rtol=0, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("shape", [(6, 3), (5000, 8), (40, 40)])
def test_numpy_lstsq(device: xp.Device, shape: tuple[int, int]) -> None:
    """``np.linalg.lstsq`` on GpuArrays: NumPy's solution, residuals, rank and singular values (from
    ``linalg.svd``: tall and skinny on the device), 1-D and 2-D right-hand sides, rank deficiency and
    ``rcond``."""
    rng = np.random.default_rng(5)
    h = rng.normal(size=shape)
    h2 = h.copy()
    h2[:, 1] = h2[:, 0]                      # rank deficient
    for a in (h, h2):
        for b in (rng.normal(size=shape[0]), rng.normal(size=(shape[0], 3))):
            # rcond -1 (eps) keeps a rank-deficient matrix's rounding-level singular value: not comparable
            for rcond in ((None, -1, 1e-3) if a is h else (None, 1e-3)):
                want = np.linalg.lstsq(a, b, rcond=rcond)
                got = np.linalg.lstsq(xp.asarray(a, device=device), xp.asarray(b, device=device), rcond=rcond)
                np.testing.assert_allclose(np.asarray(got[0]), want[0], rtol=1e-8, atol=1e-8 * np.abs(want[0]).max())
                assert np.asarray(got[1]).shape == want[1].shape
                np.testing.assert_allclose(np.asarray(got[1]), want[1], rtol=1e-8)
                assert int(got[2]) == int(want[2])
                np.testing.assert_allclose(np.asarray(got[3]), want[3], rtol=1e-10, atol=1e-12 * want[3][0])


@pytest.mark.parametrize("shape", [(37, 29), (29, 37)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_lstsq_of_one_small_matrix_on_the_device(wgpu_device: xp.Device, shape: tuple[int, int],
                                                        dtype: Any) -> None:
    """One small matrix's ``np.linalg.lstsq`` takes the device's svd (Jacobi, or QR for the tall one; the
    solution does not depend on the vectors' signs): no host fallback, NumPy's solution, residuals, rank
    and singular values."""
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=shape).astype(dtype), rng.normal(size=(shape[0], 2)).astype(dtype)
    xp.reset_metrics()
    got = np.linalg.lstsq(xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device), rcond=None)
    assert xp.metrics()["host_fallbacks"] == 0
    want = np.linalg.lstsq(a.astype(np.float64), b.astype(np.float64), rcond=None)
    tol = 2e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(np.asarray(got[0]), want[0], rtol=tol, atol=tol * np.abs(want[0]).max())
    np.testing.assert_allclose(np.asarray(got[1]), want[1], rtol=tol)
    assert int(got[2]) == int(want[2]) == min(shape)
    np.testing.assert_allclose(np.asarray(got[3]), want[3], rtol=tol)
    assert got[0].dtype == np.dtype(dtype)
