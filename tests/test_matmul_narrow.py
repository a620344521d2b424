"""Narrow products: 5 to 32 output columns over many rows take the ``NARROW`` register-blocked tiles,
33 to 63 the 64-wide blocked tiles (``wgpu_matmul.select``); results against NumPy at widths that are
not multiples of the tiles, with more than 65535 rows, transposed and computed operands."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_matmul


def test_selection(wgpu_device: xp.Device) -> None:
    prov, sel = wgpu_device.provider, wgpu_matmul.select
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    assert sel(prov, 1 << 20, 16, 64, 1, f32) == wgpu_matmul.NARROW16
    assert sel(prov, 1 << 20, 5, 64, 1, f64) == wgpu_matmul.NARROW16
    assert sel(prov, 1 << 20, 32, 64, 1, f32) == wgpu_matmul.NARROW32
    assert sel(prov, 1 << 20, 17, 256, 1, f64) == wgpu_matmul.NARROW32
    assert sel(prov, 1 << 20, 48, 64, 1, f32) == wgpu_matmul.BLOCK_MEDIUM
    assert sel(prov, 1 << 20, 4, 64, 1, f32) == wgpu_matmul.THIN               # the generic thin tiles
    assert sel(prov, 512, 16, 64, 1, f32) == wgpu_matmul.choose_tiles(512, 16, 64, f32)   # few rows
    assert sel(prov, 1 << 20, 16, 64, 1, np.dtype(np.int32)) == wgpu_matmul.choose_tiles(1 << 20, 16, 64, np.int32)


@pytest.mark.parametrize("dt", ["float32", "float64", "int32"])
@pytest.mark.parametrize("n", [5, 12, 16, 24, 32, 33, 48])
def test_narrow_products(device: xp.Device, dt: str, n: int) -> None:
    """``X @ W.T`` (W stored row-major, read through a transposed view) and ``X @ B`` with 70001 rows
    (past 65535 workgroups of one row), values in [-3, 3] and [-30, 30]; a computed right operand."""
    rng = np.random.default_rng(n)
    m, k = 70001, 64
    if dt == "int32":
        x, w = rng.integers(-30, 30, (m, k), dtype=np.int32), rng.integers(-3, 3, (n, k), dtype=np.int32)
    else:
        x = np.concatenate([rng.uniform(-3, 3, (m // 2, k)), rng.uniform(-30, 30, (m - m // 2, k))]).astype(dt)
        w = rng.uniform(-3, 3, (n, k)).astype(dt)
    gx, gw = xp.asarray(x, device=device), xp.asarray(w, device=device)
    tol = {"float32": 2e-5, "float64": 1e-12, "int32": 0}[dt]
    want = x.astype(np.float64) @ w.T.astype(np.float64)
    for got in (gx @ gw.T, gx @ xp.asarray(np.ascontiguousarray(w.T), device=device)):
        np.testing.assert_allclose(np.asarray(got), want.astype(dt), rtol=tol, atol=tol * 30 * k)
    got = xp.exp(gx[:5000] / 30.0) @ (gw.T + 1) if dt != "int32" else gx[:5000] @ (gw.T + 1)
    want = (np.exp(x[:5000] / 30.0) if dt != "int32" else x[:5000]).astype(np.float64) @ (w.T + 1.0)
    np.testing.assert_allclose(np.asarray(got), want.astype(dt), rtol=tol * 4, atol=tol * 30 * k)


def test_empty_and_batched(device: xp.Device) -> None:
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-3, 3, (3, 2000, 64)).astype(np.float32), rng.uniform(-3, 3, (64, 20)).astype(np.float32)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    np.testing.assert_allclose(np.asarray(ga @ gb), a @ b, rtol=2e-5, atol=1e-3)
    assert np.asarray(ga[:, :0] @ gb).shape == (3, 0, 20)
