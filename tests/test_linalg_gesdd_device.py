"""``svd`` with singular vectors of matrices past Jacobi's size on the device (``linalg/gesdd.py``: the
eigenvectors of ``[[0, A], [A^T, 0]]``, the halves normalized, a null cluster's bases from its Gram
matrix, Newton-Schulz orthonormalization) against LAPACK on both providers: singular values within
``8 (m + n) eps ||A||`` of NumPy's, reconstruction ``|A - U S Vh|`` and orthogonality of ``U`` and ``Vh``
within LAPACK's bounds; square, tall and wide matrices (reduced and full), stacks, float32 and float64,
rank-deficient, zero and graded (1e-7 .. 1) matrices, views, ``pinv`` through it; no host fallback on the device where
the path takes the matrix, NaN taken by LAPACK (NumPy's LinAlgError)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.linalg import gesdd

from .test_linalg_tridiag_device import skip_f64

RNG = np.random.default_rng(43)


@pytest.fixture(autouse=True)
def small_min_k(monkeypatch: pytest.MonkeyPatch) -> None:
    """Matrices past Jacobi's 64 columns take the device path (the calibrated ``MIN_K`` is larger)."""
    monkeypatch.setattr(gesdd, "MIN_K", 2)


def _svd(device: xp.Device, a: Any, fallbacks: int | None = 0) -> tuple[np.ndarray, ...]:
    xp.reset_metrics()
    g = a if isinstance(a, xp.GpuArray) else xp.asarray(a, device=device)
    got = tuple(np.asarray(f) for f in xp.linalg.svd(g, full_matrices=False))
    if device.kind == "wgpu" and fallbacks is not None:
        assert xp.metrics()["host_fallbacks"] == fallbacks
    return got


def _check(a: np.ndarray, u: np.ndarray, s: np.ndarray, vh: np.ndarray, tol: float = 8.0) -> None:
    """LAPACK's bounds, scaled by ``(m + n) eps`` and ``||A||``, in float64."""
    m, n = a.shape[-2:]
    k = min(m, n)
    assert u.shape == a.shape[:-2] + (m, k) and s.shape == a.shape[:-2] + (k,) and vh.shape == a.shape[:-2] + (k, n)
    assert u.dtype == s.dtype == vh.dtype == a.dtype
    a64 = a.astype(np.float64)
    want = np.linalg.svd(a64, compute_uv=False)
    eps = float(np.finfo(a.dtype).eps)
    norm = np.maximum(want[..., :1], np.finfo(a.dtype).tiny)
    bound = tol * (m + n) * eps
    assert np.all(np.abs(s - want) <= bound * norm)
    assert np.all(np.diff(s, axis=-1) <= 0) and np.all(s >= 0)
    u64, vh64 = u.astype(np.float64), vh.astype(np.float64)
    back = a64 - (u64 * s[..., None, :].astype(np.float64)) @ vh64
    assert np.all(np.abs(back).max(axis=(-2, -1)) <= bound * norm[..., 0])
    assert np.abs(np.swapaxes(u64, -1, -2) @ u64 - np.eye(k)).max() <= bound
    assert np.abs(vh64 @ np.swapaxes(vh64, -1, -2) - np.eye(k)).max() <= bound


def _with_values(s: np.ndarray, m: int, n: int) -> np.ndarray:
    p, _ = np.linalg.qr(RNG.standard_normal((m, s.size)))
    q, _ = np.linalg.qr(RNG.standard_normal((n, s.size)))
    return (p * s) @ q.T


@pytest.mark.parametrize("shape", [(70, 70), (100, 70), (70, 100), (2, 66, 66)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_svd_random(device: xp.Device, shape: tuple[int, ...], dtype: Any) -> None:
    skip_f64(device, dtype)
    a = RNG.uniform(-3, 3, shape).astype(dtype)
    _check(a, *_svd(device, a))


@pytest.mark.parametrize("kind", ["rank_deficient", "graded", "clustered", "huge"])
def test_svd_structured(device: xp.Device, kind: str) -> None:
    n = 80
    if kind == "rank_deficient":        # 20 zero singular values: a null cluster of 40 eigenvectors (Jacobi)
        a = RNG.standard_normal((n, 60)) @ RNG.standard_normal((60, n))
    elif kind == "graded":              # singular values 1e-7 .. 1: the halves' pairs mix, Newton-Schulz mends
        a = _with_values(np.geomspace(1e-7, 1, n), n, n)
    elif kind == "clustered":           # three repeated singular values
        a = _with_values(np.repeat([1.0, 0.5, 1e-3], [30, 30, 20]), n, n)
    else:                               # squares of the columns near float32's largest (the reduction's norms)
        a = RNG.uniform(-3, 3, (n, n)) * 1e17
    a = a.astype(np.float32)
    _check(a, *_svd(device, a))


def test_svd_zero_and_stack_with_a_singular_matrix(device: xp.Device) -> None:
    z = np.zeros((72, 72), np.float32)
    u, s, vh = _svd(device, z, None)        # a null cluster of 144: its Gram matrix past Jacobi's 64 rows
    _check(z, u, s, vh)
    assert not s.any()
    b = np.stack([RNG.uniform(-3, 3, (72, 72)), RNG.standard_normal((72, 50)) @ RNG.standard_normal((50, 72))])
    b = b.astype(np.float32)
    _check(b, *_svd(device, b))


def test_svd_views(device: xp.Device) -> None:
    big = RNG.uniform(-3, 3, (160, 150)).astype(np.float32)
    g = xp.asarray(big, device=device)[::2, 3:145]
    _check(big[::2, 3:145], *_svd(device, g))
    _check(big[:70, :70].T, *_svd(device, xp.matrix_transpose(xp.asarray(big, device=device)[:70, :70])))


def test_svd_nan_takes_lapack(wgpu_device: xp.Device) -> None:
    a = RNG.uniform(-3, 3, (70, 70)).astype(np.float32)
    a[5, 9] = np.nan
    with pytest.raises(np.linalg.LinAlgError):          # as NumPy's
        np.linalg.svd(a)
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        xp.linalg.svd(xp.asarray(a, device=wgpu_device), full_matrices=False)


@pytest.mark.parametrize("shape", [(100, 70), (70, 100), (2, 90, 72)])
def test_svd_full_matrices_non_square(device: xp.Device, shape: tuple[int, ...]) -> None:
    a = RNG.uniform(-3, 3, shape).astype(np.float32)
    xp.reset_metrics()
    u, s, vh = (np.asarray(f) for f in xp.linalg.svd(xp.asarray(a, device=device)))
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 0
    m, n = shape[-2:]
    k = min(m, n)
    assert u.shape == shape[:-2] + (m, m) and vh.shape == shape[:-2] + (n, n)
    bound = 8 * (m + n) * float(np.finfo(np.float32).eps)
    u64, vh64 = u.astype(np.float64), vh.astype(np.float64)
    assert np.abs(np.swapaxes(u64, -1, -2) @ u64 - np.eye(m)).max() <= bound
    assert np.abs(vh64 @ np.swapaxes(vh64, -1, -2) - np.eye(n)).max() <= bound
    back = (u64[..., :k] * s[..., None, :]) @ vh64[..., :k, :]
    assert np.abs(back - a).max() <= bound * np.linalg.svd(a.astype(np.float64), compute_uv=False).max()


@pytest.mark.parametrize("shape", [(90, 70), (70, 90)])
def test_pinv_through_the_device_svd(device: xp.Device, shape: tuple[int, int]) -> None:
    a = RNG.standard_normal((shape[0], 60)) @ RNG.standard_normal((60, shape[1]))      # rank 60
    a = a.astype(np.float32)
    xp.reset_metrics()
    got = np.asarray(xp.linalg.pinv(xp.asarray(a, device=device), rtol=1e-4))
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 0
    want = np.linalg.pinv(a.astype(np.float64), rcond=1e-4)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * np.abs(want).max())


def test_cluster_and_applies() -> None:
    eps = float(np.finfo(np.float32).eps)
    w = np.array([-2.0, -1.0, -1.0 + 10 * eps, -eps, eps, 1.0 - 10 * eps, 1.0, 2.0], np.float32)
    assert gesdd.cluster(w, 4) == 1
    w[5] = 60 * eps                     # within TAU eps of the cluster: joins it
    assert gesdd.cluster(np.sort(np.r_[-w[4:], w[4:]]).astype(np.float32), 4) == 2
    assert gesdd.applies((1024, 1024)) and gesdd.applies((8, 200, 100)) and gesdd.applies((100, 200))
    assert not gesdd.applies((1, 5)) and not gesdd.applies((0, 2, 2))


def test_min_k_keeps_smaller_matrices_on_lapack(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gesdd, "MIN_K", 512)
    assert gesdd.applies((512, 512)) and gesdd.applies((3000, 600)) and gesdd.applies((2, 600, 4000))
    assert not gesdd.applies((511, 511)) and not gesdd.applies((8, 256, 256)) and not gesdd.applies((4096, 300))
