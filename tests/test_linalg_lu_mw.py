"""LU panels over several workgroups (``providers/wgpu_lu_mw.py``): solutions and inverses against
NumPy's with the path forced (CPU adapters too, panels of any height), and the fallback when the
workgroups of a panel do not all run (a workgroup left out of the dispatch): the same solution
through one workgroup a panel, and that device kept on it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler import plan_cache
from gpuarray.linalg import lu
from gpuarray.providers import wgpu_lu_mw
from gpuarray.runtime import replay

RNG = np.random.default_rng(31)


def _skip_f64(device: xp.Device, dtype: Any) -> None:
    if np.dtype(dtype) == np.float64 and not device.supports(np.dtype(np.float64)):
        pytest.skip("no float64 on this adapter")


@pytest.fixture(autouse=True)
def _fresh_plans() -> Any:
    """Recorded evaluation plans of these shapes would replay other panels (and these would be
    replayed elsewhere): none before or after each test."""
    replay.clear()
    plan_cache.clear()
    yield
    replay.clear()
    plan_cache.clear()


def _forced(monkeypatch: pytest.MonkeyPatch, device: xp.Device, threads: int) -> None:
    if "subgroup" not in getattr(device.provider, "features", ()):
        pytest.skip("no subgroups on this adapter")
    monkeypatch.setattr(wgpu_lu_mw, "CPU", True)
    monkeypatch.setattr(wgpu_lu_mw, "MIN_ROWS", 1)
    monkeypatch.setattr(wgpu_lu_mw, "THREADS", threads)
    monkeypatch.setattr(lu, "_SINGLE", set())
    monkeypatch.setattr(lu, "FLAGGED_DET", 1)


def _residual(a: np.ndarray, x: np.ndarray, b: np.ndarray) -> float:
    """max |A x - b| over n eps |A| |x| (1 or so for a backward-stable solve)."""
    n, eps = a.shape[-1], np.finfo(a.dtype).eps
    a64, x64 = a.astype(np.float64), x.astype(np.float64)
    r = np.abs(a64 @ x64 - b).max()
    return float(r / (n * eps * np.abs(a64).sum(-1).max() * np.abs(x64).max()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, batch", [(33, ()), (150, ()), (97, (2,))])
def test_solve_and_inv_with_panels_over_workgroups(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch,
                                                   dtype: Any, n: int, batch: tuple[int, ...]) -> None:
    """Every panel by the exchange kernel (one workgroup a matrix where the adapter runs workgroups
    a few at a time: lavapipe; ``P`` of them on GPUs: 256 threads here, 32 below); rows scaled over
    two orders so that the pivots move rows between workgroups."""
    _skip_f64(wgpu_device, dtype)
    _forced(monkeypatch, wgpu_device, 256)
    a = (RNG.uniform(-3, 3, batch + (n, n)) * np.geomspace(1, 1e2, n)[:, None]).astype(dtype)
    b = RNG.uniform(-30, 30, batch + (n, 3)).astype(dtype)
    ga = xp.asarray(a, device=wgpu_device)
    x = np.asarray(xp.linalg.solve(ga, xp.asarray(b, device=wgpu_device)))
    assert _residual(a, x, b) < 4
    inv = np.asarray(xp.linalg.inv(ga)).astype(np.float64)
    eye = np.broadcast_to(np.eye(n), batch + (n, n))
    assert np.abs(a.astype(np.float64) @ inv - eye).max() < 50 * n * np.finfo(dtype).eps * np.linalg.cond(
        a.astype(np.float64)).max()
    sign, logdet = (np.asarray(v) for v in xp.linalg.slogdet(ga))
    want_sign, want_log = np.linalg.slogdet(a.astype(np.float64))
    np.testing.assert_array_equal(sign, want_sign)
    np.testing.assert_allclose(logdet, want_log, rtol=20 * n * np.finfo(dtype).eps)
    scaled = (a / np.exp(want_log / n)[..., None, None]).astype(dtype)      # |det| near 1
    det = np.asarray(xp.linalg.det(xp.asarray(scaled, device=wgpu_device)))
    s64 = scaled.astype(np.float64)       # det's relative error grows with the condition number
    np.testing.assert_allclose(det, np.linalg.det(s64), rtol=n * np.finfo(dtype).eps * np.linalg.cond(s64).max())
    assert str(wgpu_device) not in lu._SINGLE


def test_tall_panels_of_several_workgroups(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """32 rows a workgroup: panels of up to five workgroups (on GPUs; lavapipe falls back or not,
    the solution is right either way), a vector right-hand side, and a singular matrix."""
    _forced(monkeypatch, wgpu_device, 32)
    n = 150
    a = RNG.uniform(-3, 3, (n, n)).astype(np.float32)
    b = RNG.uniform(-3, 3, n).astype(np.float32)
    x = np.asarray(xp.linalg.solve(xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device)))
    assert x.shape == (n,) and _residual(a, x[:, None], b[:, None]) < 4
    s = a.copy()
    s[:, 40] = 0
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        xp.linalg.solve(xp.asarray(s, device=wgpu_device), xp.asarray(b, device=wgpu_device))
    gs = xp.asarray(s, device=wgpu_device)
    assert float(xp.linalg.det(gs)) == 0.0          # no error for det and slogdet, as NumPy
    assert [float(v) for v in xp.linalg.slogdet(gs)] == [0.0, -np.inf]


def test_nan_matrix_gives_nan_not_an_error(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """A column of NaN: no pivot is chosen among NaN (the row itself stays), the solution is NaN as
    NumPy's, without LinAlgError."""
    _forced(monkeypatch, wgpu_device, 256)
    a = RNG.uniform(-3, 3, (40, 40))
    a[:, 5] = np.nan
    x = np.asarray(xp.linalg.solve(xp.asarray(a, device=wgpu_device), xp.asarray(np.ones(40), device=wgpu_device)))
    assert np.isnan(x).all() == np.isnan(np.linalg.solve(a, np.ones(40))).all()


@pytest.mark.parametrize("mode", ["solve", "slogdet"])
def test_panels_that_wait_for_a_missing_workgroup_fall_back(wgpu_device: xp.Device,
                                                            monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """The kernel told of one workgroup more than the dispatch runs: every wait on it gives up after
    ``SPIN_LIMIT`` reads, the flag says 2, and ``linalg.lu`` factors again with one workgroup a panel:
    the right solution, and that device kept on one workgroup a panel."""
    _forced(monkeypatch, wgpu_device, 256)
    monkeypatch.setattr(wgpu_lu_mw, "SPIN_LIMIT", 64)
    real_exchange = wgpu_lu_mw.exchange

    def exchange(provider: Any, t: str, n: int, batch: int) -> Any:
        return real_exchange(provider, t, n + wgpu_lu_mw.THREADS, batch)

    def dispatch(provider: Any, t: str, prm: list[int], buffers: list[Any], batch: int, p: int, xs: int) -> None:
        src = wgpu_lu_mw.lu_mw_panel_source(t, wgpu_lu_mw.THREADS)
        provider.dispatch(src, wgpu_lu_mw._u32(*prm, p + 1, xs, 64), buffers, batch * p)

    monkeypatch.setattr(wgpu_lu_mw, "exchange", exchange)
    monkeypatch.setattr(wgpu_lu_mw, "dispatch_panel", dispatch)
    n = 70
    a = RNG.uniform(-3, 3, (n, n)).astype(np.float32)
    b = RNG.uniform(-3, 3, (n, 2)).astype(np.float32)
    ga, gb = xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device)
    if mode == "solve":
        x = np.asarray(xp.linalg.solve(ga, gb))
        assert _residual(a, x, b) < 4
    else:
        sign, logdet = (float(v) for v in xp.linalg.slogdet(ga))
        want_sign, want_log = np.linalg.slogdet(a.astype(np.float64))
        assert sign == want_sign and logdet == pytest.approx(want_log, rel=1e-4)
    assert str(wgpu_device) in lu._SINGLE
    inv = np.asarray(xp.linalg.inv(ga)).astype(np.float64)
    assert np.abs(a.astype(np.float64) @ inv - np.eye(n)).max() < 1e-3
