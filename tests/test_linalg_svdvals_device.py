"""``svdvals`` of real matrices that are neither small (Jacobi) nor tall and skinny, on the device as
the largest eigenvalues of ``[[0, A], [A^T, 0]]`` (``gpuarray/linalg/tridiag.py``), against NumPy on
both providers: square, wide and moderately tall matrices, stacks, float32 and float64, rank-deficient,
zero and huge/tiny-scaled matrices, views; ``matrix_rank`` and ``matrix_norm`` (2, -2, 'nuc') through
it; NaN and infinity taken by LAPACK (one counted host fallback, NumPy's result)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.linalg import tridiag

from .test_linalg_tridiag_device import counted, skip_f64

RNG = np.random.default_rng(25)


@pytest.fixture
def small_min_n(monkeypatch: pytest.MonkeyPatch) -> None:
    """Matrices past Jacobi's 64 columns take the device path (the calibrated ``MIN_WORK`` is larger)."""
    monkeypatch.setattr(tridiag, "MIN_WORK", 0)


def _svdvals(device: xp.Device, a: Any, fallbacks: int | None = 0) -> np.ndarray:
    return counted(device, xp.linalg.svdvals, a, fallbacks)


def _check(a: np.ndarray, s: np.ndarray) -> None:
    """NumPy's singular values (float64) within LAPACK's absolute bound, descending, non-negative."""
    m, n = a.shape[-2:]
    assert s.dtype == a.dtype and s.shape == a.shape[:-2] + (min(m, n),)
    want = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    eps = np.finfo(a.dtype).eps
    norm = np.maximum(want[..., :1], np.finfo(a.dtype).tiny)
    assert np.all(np.abs(s - want) <= 8 * (m + n) * eps * norm)
    assert np.all(np.diff(s, axis=-1) <= 0) and np.all(s >= 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(70, 70), (65, 90), (130, 67), (150, 66), (66, 140), (2, 3, 66, 80),
                                   (2, 140, 66)])
def test_svdvals_shapes(device: xp.Device, small_min_n: None, dtype: Any, shape: tuple[int, ...]) -> None:
    """Square, wide, tall (not skinny enough for Cholesky-QR), twice as long one way (through QR's
    ``R``) and stacks."""
    skip_f64(device, dtype)
    a = RNG.uniform(-3, 3, shape).astype(dtype)
    _check(a, _svdvals(device, a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_svdvals_structure(device: xp.Device, small_min_n: None, dtype: Any) -> None:
    skip_f64(device, dtype)
    n = 72
    low_rank = RNG.normal(size=(n, 4)) @ RNG.normal(size=(4, n + 5))
    u, _ = np.linalg.qr(RNG.normal(size=(n, n)))
    graded = (u * np.logspace(0, -6, n)) @ u.T
    cases = [np.zeros((n, n + 3)), low_rank, graded, np.eye(n) * 4, np.diag(np.arange(n) - 30.0),
             RNG.uniform(-3, 3, (n, n)) * 1e-15, RNG.uniform(-3, 3, (n, n)) * 1e15, RNG.uniform(0, 1, (n, n))]
    for a in cases:
        a = a.astype(dtype)
        _check(a, _svdvals(device, a))


def test_svdvals_views(device: xp.Device, small_min_n: None) -> None:
    big = RNG.uniform(-3, 3, (120, 130)).astype(np.float32)
    g = xp.asarray(big, device=device)
    _check(np.ascontiguousarray(big[5:110, 10:90].T), _svdvals(device, xp.matrix_transpose(g[5:110, 10:90])))


def test_svdvals_default_size_on_device(device: xp.Device) -> None:
    """At the calibrated size the device path is taken (a stack of 8 of ``MIN_WORK / 8`` rows and
    columns); a single matrix below it goes to LAPACK, counted."""
    n = tridiag.MIN_WORK // 8
    a = RNG.uniform(-3, 3, (8, n, n)).astype(np.float32)
    _check(a, _svdvals(device, a))
    _check(a[0], _svdvals(device, a[0], fallbacks=1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_svdvals_special_values_take_lapack(device: xp.Device, small_min_n: None, dtype: Any) -> None:
    skip_f64(device, dtype)
    for put in (np.nan, np.inf):
        a = RNG.uniform(-3, 3, (70, 75)).astype(dtype)
        a[40, 3] = put
        with np.errstate(invalid="ignore", over="ignore"):
            try:
                want = np.linalg.svd(a, compute_uv=False)
            except np.linalg.LinAlgError:
                with pytest.raises(np.linalg.LinAlgError):
                    _svdvals(device, a, fallbacks=None)
                continue
            np.testing.assert_array_equal(_svdvals(device, a, fallbacks=1), want)


def test_matrix_rank_and_norms(device: xp.Device, small_min_n: None) -> None:
    n = 80
    a = (RNG.normal(size=(3, n, 7)) @ RNG.normal(size=(3, 7, n))).astype(np.float32)
    g = xp.asarray(a, device=device)
    xp.reset_metrics()
    np.testing.assert_array_equal(np.asarray(xp.linalg.matrix_rank(g)), np.linalg.matrix_rank(a))
    want = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    tol = 8 * 2 * n * np.finfo(np.float32).eps * want[..., 0]
    for ord_, ref in ((2, want[..., 0]), (-2, want[..., -1]), ("nuc", want.sum(axis=-1))):
        got = np.asarray(xp.linalg.matrix_norm(g, ord=ord_))
        assert np.all(np.abs(got - ref) <= tol * (n if ord_ == "nuc" else 1)), ord_
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 0
