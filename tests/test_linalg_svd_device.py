"""``svd`` (reduced, or square) and ``svdvals`` of small matrices on the device (one-sided Jacobi,
one workgroup a matrix: ``gpuarray/linalg/jacobi.py``, ``render/wgsl_svdj.py``) against NumPy on both
providers: tall, wide and square shapes, stacks, float32 and float64; singular values within
n * eps * ||A|| of LAPACK's, reconstruction and orthogonality scaled by n * eps; rank-deficient
matrices (``U`` needs LAPACK's completion), NaN and infinity taken by LAPACK (counted)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_eigh
from gpuarray.runtime import devices as _devices

RNG = np.random.default_rng(23)
SHAPES = [(1, 1), (2, 2), (3, 5), (5, 3), (4, 40), (40, 4), (24, 24), (3, 20, 7), (2, 6, 30), (90, 17)]


def _skip_f64(device: xp.Device, dtype: Any) -> None:
    if device.kind == "wgpu" and np.dtype(dtype) == np.float64 and not device.supports(np.dtype(np.float64)):
        pytest.skip("no float64 on this adapter")


def _fits(device: xp.Device, dtype: Any, shape: tuple[int, ...]) -> bool:
    t = "f32" if np.dtype(dtype) == np.float32 else "f64"
    return wgpu_eigh.svd_fits(_devices.provider_for(device), t, *shape[-2:])


def _svd(device: xp.Device, a: np.ndarray, fallbacks: int | None) -> tuple[np.ndarray, ...]:
    xp.reset_metrics()
    g = xp.asarray(a, device=device)
    u, s, vh = xp.linalg.svd(g, full_matrices=False)
    sv = xp.linalg.svdvals(g)
    got = tuple(np.asarray(v) for v in (u, s, vh, sv))
    if device.kind == "wgpu" and fallbacks is not None:
        assert xp.metrics()["host_fallbacks"] == fallbacks
    return got


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_svd_small(device: xp.Device, dtype: Any, shape: tuple[int, ...]) -> None:
    _skip_f64(device, dtype)
    a = RNG.uniform(-3, 3, shape).astype(dtype)
    u, s, vh, sv = _svd(device, a, 0 if device.kind != "wgpu" or _fits(device, dtype, shape) else 2)
    m, n = shape[-2:]
    k = min(m, n)
    assert u.shape == shape[:-2] + (m, k) and s.shape == sv.shape == shape[:-2] + (k,)
    assert vh.shape == shape[:-2] + (k, n) and u.dtype == s.dtype == vh.dtype == sv.dtype == dtype
    eps = np.finfo(dtype).eps
    want = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    tol = 8 * max(m, n) * eps * want.max()
    np.testing.assert_allclose(s, want, atol=tol, rtol=0)
    np.testing.assert_allclose(sv, want, atol=tol, rtol=0)
    assert np.all(np.diff(s, axis=-1) <= 0)
    u64, vh64 = u.astype(np.float64), vh.astype(np.float64)
    assert np.abs((u64 * s[..., None, :]) @ vh64 - a).max() <= tol
    assert np.abs(np.swapaxes(u64, -1, -2) @ u64 - np.eye(k)).max() <= 8 * max(m, n) * eps
    assert np.abs(vh64 @ np.swapaxes(vh64, -1, -2) - np.eye(k)).max() <= 8 * max(m, n) * eps


def test_svd_square_full_matrices(device: xp.Device) -> None:
    a = RNG.uniform(-3, 3, (12, 12)).astype(np.float32)
    u, s, vh = (np.asarray(v) for v in xp.linalg.svd(xp.asarray(a, device=device)))
    assert u.shape == vh.shape == (12, 12)
    assert np.abs((u * s) @ vh - a).max() < 1e-4


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_svd_rank_deficient_and_special_values(device: xp.Device, dtype: Any) -> None:
    """A numerically rank-deficient matrix stays on the device (its ``U`` orthonormal: one-sided
    Jacobi's columns are orthogonal to relative accuracy); an exactly zero singular value needs
    LAPACK's completion of ``U``, and NaN and infinity go to LAPACK too: NumPy's results."""
    _skip_f64(device, dtype)
    a = RNG.uniform(-3, 3, (2, 10, 6)).astype(dtype)
    a[..., 4] = a[..., 1] * np.float32(1.7)      # rounded: a singular value near eps, not exactly 0
    u, s, vh, sv = _svd(device, a, 0)
    eps = np.finfo(dtype).eps
    u64 = u.astype(np.float64)
    assert np.abs(np.swapaxes(u64, -1, -2) @ u64 - np.eye(6)).max() <= 80 * eps
    assert np.abs((u64 * s[:, None, :]) @ vh - a).max() <= 80 * eps * s.max()
    a[..., 4] = 0
    xp.reset_metrics()
    u, s, vh = (np.asarray(v) for v in xp.linalg.svd(xp.asarray(a, device=device), full_matrices=False))
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 1
    un, sn, vhn = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_array_equal(s, sn)
    np.testing.assert_array_equal(u, un)
    for put in (np.nan, np.inf):
        b = RNG.uniform(-3, 3, (7, 5)).astype(dtype)
        b[2, 3] = put
        try:
            want = np.linalg.svd(b, compute_uv=False)
        except np.linalg.LinAlgError:
            with pytest.raises(np.linalg.LinAlgError):
                xp.linalg.svdvals(xp.asarray(b, device=device))
            continue
        np.testing.assert_array_equal(np.asarray(xp.linalg.svdvals(xp.asarray(b, device=device))), want)


def test_svd_stack_of_random_matrices_stays_on_the_device(device: xp.Device) -> None:
    """Many random matrices (some badly conditioned) converge: no matrix sends the stack to LAPACK (3000; 1000
    on a CPU adapter, where 3000 took 44 s)."""
    cpu = device.kind == "wgpu" and str(device.provider.adapter.info.get("adapter_type")) == "CPU"
    a = RNG.uniform(-3, 3, (1000 if cpu else 3000, 12, 12)).astype(np.float32)
    u, s, vh, sv = _svd(device, a, 0)
    assert np.abs(np.einsum("bij,bj,bjk->bik", u.astype(np.float64), s, vh) - a).max() < 1e-3
