"""``eigh`` with eigenvectors of symmetric matrices past Jacobi's size on the device (``linalg/syevd.py``:
tridiagonal reduction keeping its reflectors, divide and conquer, back-transformation) against LAPACK on
both providers: eigenvalues within a small multiple of ``n eps ||A||`` of NumPy's, residual ``|A V - V
diag(w)|`` and orthogonality ``|V^T V - I|`` as LAPACK's bounds; random indefinite, repeated and
clustered eigenvalues, diagonal, zero and rank-one matrices, stacks, only the lower triangle read,
non-contiguous operands, float32 and float64; no host fallback on the device, and NaN input taken by
LAPACK (one counted fallback, NumPy's result)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.linalg import syevd

from .test_linalg_tridiag_device import skip_f64

RNG = np.random.default_rng(41)


@pytest.fixture(autouse=True)
def small_min_n(monkeypatch: pytest.MonkeyPatch) -> None:
    """Matrices past Jacobi's 64 rows take the device path (the calibrated ``MIN_N`` is larger)."""
    monkeypatch.setattr(syevd, "MIN_N", 0)


def _eigh(device: xp.Device, a: np.ndarray, fallbacks: int = 0) -> tuple[np.ndarray, np.ndarray]:
    xp.reset_metrics()
    w, v = xp.linalg.eigh(xp.asarray(a, device=device))
    got = np.asarray(w), np.asarray(v)
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == fallbacks
    return got


def _check(device: xp.Device, a: np.ndarray) -> None:
    w, v = _eigh(device, a)
    a64 = np.tril(a.astype(np.float64)) + np.swapaxes(np.tril(a.astype(np.float64), -1), -1, -2)
    want = np.linalg.eigvalsh(a64)
    n = a.shape[-1]
    eps = np.finfo(a.dtype).eps
    scale = max(float(np.abs(want).max()), np.finfo(a.dtype).tiny)
    assert w.dtype == a.dtype and v.dtype == a.dtype and v.shape == a.shape
    np.testing.assert_allclose(w, want, rtol=0, atol=4 * n * eps * scale)
    v64 = v.astype(np.float64)
    assert np.abs(a64 @ v64 - v64 * w[..., None, :]).max() <= 8 * n * eps * scale
    assert np.abs(np.swapaxes(v64, -1, -2) @ v64 - np.eye(n)).max() <= 8 * n * eps


def _sym(n: int, dtype: Any, batch: tuple[int, ...] = ()) -> np.ndarray:
    b = RNG.uniform(-3, 3, batch + (n, n))
    return ((b + np.swapaxes(b, -1, -2)) / 2).astype(dtype)


def _with_values(w: np.ndarray, dtype: Any) -> np.ndarray:
    q, _ = np.linalg.qr(RNG.standard_normal((w.size, w.size)))
    return ((q * w) @ q.T).astype(dtype)


@pytest.mark.parametrize("n", [65, 97, 130])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigh_random(device: xp.Device, n: int, dtype: Any) -> None:
    skip_f64(device, dtype)
    _check(device, _sym(n, dtype))


@pytest.mark.parametrize("kind", ["repeated", "clustered", "diagonal", "zero", "rank_one", "graded"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigh_structured(device: xp.Device, kind: str, dtype: Any) -> None:
    skip_f64(device, dtype)
    n = 90
    if kind == "repeated":
        a = _with_values(np.repeat([-2.0, 0.0, 1.0], 30), dtype)
    elif kind == "clustered":
        a = _with_values(1 + 1e-7 * RNG.standard_normal(n), dtype)
    elif kind == "diagonal":
        a = np.diag(RNG.standard_normal(n)).astype(dtype)
    elif kind == "zero":
        a = np.zeros((n, n), dtype)
    elif kind == "rank_one":
        u = RNG.standard_normal(n)
        a = np.outer(u, u).astype(dtype)
    else:
        a = _with_values(np.geomspace(1e-6, 1e3, n) * RNG.choice([-1, 1], n), dtype)
    _check(device, a)


def test_eigh_stack_lower_triangle_and_views(device: xp.Device) -> None:
    a = _sym(70, np.float32, (2,))
    a[..., 3, 40] = 99.0            # above the diagonal: not read
    _check(device, a)
    big = _sym(140, np.float32)
    xp.reset_metrics()
    g = xp.asarray(big, device=device)[::2, ::2]
    w, v = xp.linalg.eigh(g)
    want = np.linalg.eigvalsh(big[::2, ::2])
    np.testing.assert_allclose(np.asarray(w), want, rtol=0, atol=1e-3)
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 0


def test_eigh_nan_goes_to_lapack(wgpu_device: xp.Device) -> None:
    a = _sym(80, np.float32)
    a[50, 10] = np.nan
    w, v = _eigh(wgpu_device, a, 1)
    want_w, want_v = np.linalg.eigh(a)
    np.testing.assert_array_equal(np.isnan(w), np.isnan(want_w))


def test_min_n_keeps_mid_sized_matrices_on_lapack(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syevd, "MIN_N", 4096)
    assert syevd.applies((4096, 4096)) and not syevd.applies((2048, 2048)) and not syevd.applies((0, 0))
    assert syevd.applies((4, 2048, 2048)) and not syevd.applies((3, 2048, 2048)) and not syevd.applies((8, 1024, 1024))
