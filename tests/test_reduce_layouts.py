"""Reduction layouts for the shapes statistics and machine learning use most, against NumPy on both
devices: short contiguous rows (the ``seg`` layout: a few threads per output), column reductions
narrower than a workgroup (several chunks per workgroup), and products with a vector operand read
in the matrix's memory order (``X.T @ r``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler.schedule import schedule
from gpuarray.render.wgsl_reduce import choose_variant

RNG = np.random.default_rng(21)
SHAPES = [(20000, 64), (17000, 9), (16384, 128), (20000, 100), (17000, 97), (5000, 63), (70000, 17),
          (3, 6000, 120), (300, 8)]


def _close(got: Any, want: np.ndarray, scale: np.ndarray | None = None, rtol: float = 2e-6) -> None:
    """``got`` within ``rtol`` of ``want``, relative to ``scale`` (the same sum of magnitudes:
    float32 sums of many terms are as exact as that, whatever the order of their additions)."""
    g = np.asarray(got)
    assert g.shape == want.shape
    bound = rtol * (np.abs(want) if scale is None else scale) + 1e-6
    assert np.all(np.abs(g - want) <= bound), float(np.max(np.abs(g - want) - bound))


@pytest.mark.parametrize("shape", SHAPES)
def test_short_rows(device: xp.Device, shape: tuple[int, ...]) -> None:
    h = RNG.uniform(-3, 3, shape).astype(np.float32)
    w = RNG.uniform(-3, 3, shape[-1]).astype(np.float32)
    x, v = xp.asarray(h, device=device), xp.asarray(w, device=device)
    a = np.abs(h.astype(np.float64))
    with xp.config(offload="always"):
        _close(x.sum(axis=-1), h.astype(np.float64).sum(-1), a.sum(-1))
        _close(x.mean(axis=-1), h.astype(np.float64).mean(-1), a.mean(-1))
        _close(xp.sqrt((x * x).sum(axis=-1)) + 1, np.sqrt((h.astype(np.float64) ** 2).sum(-1)) + 1)
        _close(x @ v, h.astype(np.float64) @ w, a @ np.abs(w))
        assert np.array_equal(np.asarray(x.max(axis=-1)), h.max(-1))
        assert np.array_equal(np.asarray(x.min(axis=-1)), h.min(-1))
        assert np.array_equal(np.asarray((x > 2.9).any(axis=-1)), (h > 2.9).any(-1))


def test_short_rows_special_values_and_float64(device: xp.Device) -> None:
    h = RNG.uniform(-3, 3, (20000, 100))
    h[3, 5], h[7, 0], h[9, 99], h[11, :] = np.nan, np.inf, -np.inf, -0.0
    if device.name.startswith("wgpu") and not device.provider.supports(np.dtype(np.float64)):
        h = h.astype(np.float32)
    x = xp.asarray(h, device=device)
    with xp.config(offload="always"):
        for got, want in [(x.sum(axis=1), h.sum(1)), (x.max(axis=1), h.max(1)), (x.min(axis=1), h.min(1))]:
            g = np.asarray(got)
            assert np.array_equal(np.isnan(g), np.isnan(want))
            ok = ~np.isnan(want)
            np.testing.assert_allclose(g[ok], want[ok], rtol=1e-5, atol=1e-4)
        assert np.signbit(np.asarray(x.max(axis=1))[11])


def test_seg_layout_is_chosen(wgpu_device: xp.Device) -> None:
    x = xp.asarray(np.ones((20000, 128), np.float32), device=wgpu_device)
    assert [choose_variant(k)[0].layout for k in schedule([x.sum(axis=1)._node])] == ["seg"]
    assert [choose_variant(k)[0].seg for k in schedule([x.sum(axis=1)._node])] == [32]


@pytest.mark.parametrize("shape", [(1 << 17, 64), (100003, 7), (65537, 130), (33, 16), (5000, 1)])
def test_narrow_columns_and_transposed_vector_products(device: xp.Device, shape: tuple[int, int]) -> None:
    h = RNG.uniform(-3, 3, shape).astype(np.float32)
    r = RNG.uniform(-3, 3, shape[0]).astype(np.float32)
    c = RNG.uniform(-3, 3, shape[1]).astype(np.float32)
    x, rv, cv = (xp.asarray(a, device=device) for a in (h, r, c))
    h64, a, ar, ac = h.astype(np.float64), np.abs(h.astype(np.float64)), np.abs(r), np.abs(c)
    with xp.config(offload="always"):
        _close(x.sum(axis=0), h64.sum(0), a.sum(0))
        _close(x.T @ rv, h64.T @ r, a.T @ ar)
        _close(rv @ x, r.astype(np.float64) @ h, ar @ a)
        _close(cv @ x.T, c.astype(np.float64) @ h64.T, ac @ a.T)
        assert np.array_equal(np.asarray(x.max(axis=0)), h.max(0))
