"""``qr`` on the device (blocked Householder QR: ``gpuarray/linalg/householder.py``,
``providers/wgpu_qr.py``) against NumPy on both providers: square, tall, wide and stacked
matrices over several panels, both modes, float32 and float64, well- and ill-conditioned and rank
deficient input (residual and orthogonality scaled by size * eps * norm, and LAPACK's own factors:
the same sign convention), special values (zero columns, NaN and infinity, overflowing and
underflowing columns: LAPACK on the host), and no host fallback on the wgpu device."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_qr
from gpuarray.render.wgsl_qr import qr_panel_source

RNG = np.random.default_rng(21)
SHAPES = [(1, 1), (2, 2), (5, 3), (3, 5), (33, 33), (70, 40), (40, 70), (100, 100), (130, 65), (1, 65), (65, 1)]


def _skip_f64(device: xp.Device, dtype: Any) -> None:
    if device.kind == "wgpu" and np.dtype(dtype) == np.float64 and not device.supports(np.dtype(np.float64)):
        pytest.skip("no float64 on this adapter")


def _conditioned(shape: tuple[int, ...], cond: float, dtype: Any) -> np.ndarray:
    """Matrices with singular values from 1 down to 1 / ``cond``."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(RNG.normal(size=shape[:-2] + (m, k)))
    v, _ = np.linalg.qr(RNG.normal(size=shape[:-2] + (n, k)))
    return ((u * np.geomspace(1, 1 / cond, k)) @ np.swapaxes(v, -1, -2)).astype(dtype)


def _qr(device: xp.Device, a: np.ndarray, mode: str, fallbacks: int = 0) -> tuple[np.ndarray, np.ndarray]:
    xp.reset_metrics()
    q, r = xp.linalg.qr(xp.asarray(a, device=device), mode=mode)
    got = np.asarray(q), np.asarray(r)
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == fallbacks
    return got


def _check(a: np.ndarray, q: np.ndarray, r: np.ndarray, mode: str, cond: float) -> None:
    dtype = a.dtype
    m, n = a.shape[-2:]
    k = m if mode == "complete" else min(m, n)
    assert q.dtype == r.dtype == dtype
    assert q.shape == a.shape[:-2] + (m, k) and r.shape == a.shape[:-2] + (k, n)
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    eps = np.finfo(dtype).eps
    q64, r64, a64 = (x.astype(np.float64) for x in (q, r, a))
    scale = 8 * max(m, n) * eps
    anorm = np.abs(a64).max() if a.size else 1.0
    assert np.abs(q64 @ r64 - a64).max() <= scale * anorm
    assert np.abs(np.swapaxes(q64, -1, -2) @ q64 - np.eye(k)).max() <= scale
    qn, rn = np.linalg.qr(a64, mode=mode)
    # LAPACK's factors (same reflectors, same signs); columns past the rank differ by cond * eps
    if cond <= 1e3:
        np.testing.assert_allclose(r64, rn, atol=scale * cond * anorm, rtol=0)
        np.testing.assert_allclose(q64[..., : min(m, n)], qn[..., : min(m, n)], atol=scale * cond, rtol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_shapes(device: xp.Device, dtype: Any, shape: tuple[int, int], mode: str) -> None:
    _skip_f64(device, dtype)
    a = RNG.uniform(-3, 3, shape).astype(dtype)
    q, r = _qr(device, a, mode)
    _check(a, q, r, mode, 1.0 if shape[0] == shape[1] == 1 else 1e3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cond", [10.0, 1e5])
def test_qr_conditioning_and_stacks(device: xp.Device, dtype: Any, cond: float) -> None:
    _skip_f64(device, dtype)
    for shape in [(200, 96), (2, 3, 40, 40), (4, 20, 70)]:
        a = _conditioned(shape, cond, dtype)
        for mode in ("reduced", "complete"):
            q, r = _qr(device, a, mode)
            _check(a, q, r, mode, cond)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_qr_rank_deficient_and_zero_columns(device: xp.Device, dtype: Any) -> None:
    _skip_f64(device, dtype)
    a = RNG.uniform(-3, 3, (90, 50)).astype(dtype)
    a[:, 7] = 0                          # a zero column: H = I there, as LAPACK (tau = 0)
    a[:, 40] = a[:, 3] * 2               # rank deficient
    q, r = _qr(device, a, "reduced")
    _check(a, q, r, "reduced", 1e7)
    assert r[7, 7] == 0
    z = np.zeros((40, 35), dtype)
    q, r = _qr(device, z, "complete")
    np.testing.assert_array_equal(q, np.eye(40, dtype=dtype))
    np.testing.assert_array_equal(r, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_qr_special_values_take_lapack(device: xp.Device, dtype: Any) -> None:
    """NaN, infinity and columns whose norm overflows or underflows raise the flag: LAPACK then
    factors the matrix on the host (one counted fallback), so the result is NumPy's."""
    _skip_f64(device, dtype)
    big, tiny = np.finfo(dtype).max / 4, np.finfo(dtype).tiny * 4
    base = RNG.uniform(-3, 3, (40, 36)).astype(dtype)
    cases = []
    for put in (np.nan, np.inf):
        a = base.copy()
        a[5, 6] = put
        cases.append(a)
    a = base.copy()
    a[:, 3] *= big / 3                   # the squared norm overflows
    cases.append(a)
    a = base.copy()
    a[:, 10] *= tiny                     # the squared norm of the column underflows
    cases.append(a)
    for a in cases:
        q, r = _qr(device, a, "reduced", fallbacks=1)
        qn, rn = np.linalg.qr(a)
        np.testing.assert_array_equal(q, qn.astype(dtype))
        np.testing.assert_array_equal(r, rn.astype(dtype))


def test_qr_large_stack_and_empty(device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stack of more matrices than one dispatch dimension holds (65535), and empty ones. On a CPU adapter
    (lavapipe: 68 s for 70000 matrices) the provider's workgroup limit is lowered to 1024 and 2000 matrices
    take the same 2-D path; the H200 suite runs the real size."""
    count = 70000
    if device.kind == "wgpu" and str(device.provider.adapter.info.get("adapter_type")) == "CPU":
        monkeypatch.setattr(device.provider, "max_groups", 1024)
        count = 2000
    a = RNG.uniform(-3, 3, (count, 3, 2)).astype(np.float32)
    q, r = _qr(device, a, "reduced")
    _check(a, q, r, "reduced", 1e3)
    for shape in [(0, 0), (0, 3), (3, 0), (2, 0, 4)]:
        q, r = xp.linalg.qr(xp.asarray(np.zeros(shape, np.float32), device=device))
        qn, rn = np.linalg.qr(np.zeros(shape, np.float32))
        assert q.shape == qn.shape and r.shape == rn.shape


def test_qr_panel_threads(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """Panels of fewer threads (adapters with smaller workgroups) give the same factors within rounding."""
    a = RNG.uniform(-3, 3, (150, 70)).astype(np.float32)
    q1, r1 = _qr(wgpu_device, a, "reduced")
    monkeypatch.setattr(wgpu_qr, "PANEL_THREADS", 64)
    q2, r2 = _qr(wgpu_device, a * 1, "reduced")
    np.testing.assert_allclose(r1, r2, atol=1e-4, rtol=0)
    np.testing.assert_allclose(q1, q2, atol=1e-5, rtol=0)
    assert "@workgroup_size(64)" in qr_panel_source("f32", 64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_qr_column_panels_match_the_one_workgroup_panel(wgpu_device: xp.Device, dtype: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Panels taller than ``COL_MIN_ROWS`` go column by column over many workgroups (``qr_col_source``);
    with blocks of 32 rows (several blocks a panel, the pivot row in any of them) the factors are
    those of the one-workgroup panel within rounding, in stacks too."""
    _skip_f64(wgpu_device, dtype)
    a = RNG.uniform(-3, 3, (2, 150, 70)).astype(dtype)
    monkeypatch.setattr(wgpu_qr, "COL_PANEL", False)
    q1, r1 = _qr(wgpu_device, a, "reduced")
    monkeypatch.setattr(wgpu_qr, "COL_PANEL", True)
    monkeypatch.setattr(wgpu_qr, "col_layout", lambda provider, t: (32, 256))
    monkeypatch.setattr(wgpu_qr, "COL_MIN_ROWS", {"f32": 0, "f64": 0})
    q2, r2 = _qr(wgpu_device, a * 1, "reduced")
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(r1, r2, atol=2000 * eps, rtol=0)
    np.testing.assert_allclose(q1, q2, atol=200 * eps, rtol=0)
    _check(a, q2, r2, "reduced", 1e3)


def test_numpy_qr_modes(device: xp.Device) -> None:
    """``np.linalg.qr`` on GpuArrays: reduced, complete and ``"r"`` (R alone) through ``linalg.qr``."""
    a = RNG.uniform(-3, 3, (9, 5)).astype(np.float32)
    g = xp.asarray(a, device=device)
    for mode in ("reduced", "complete", "r"):
        got = np.linalg.qr(g, mode=mode)
        want = np.linalg.qr(a, mode=mode)
        r, rn = (got, want) if mode == "r" else (got.R, want.R)
        assert isinstance(r, xp.GpuArray) and r.shape == rn.shape
        np.testing.assert_allclose(np.asarray(r), rn, atol=1e-5, rtol=0)
