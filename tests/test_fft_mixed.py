"""Mixed-radix transforms (render/wgsl_fft_mixed.py) against NumPy on both providers: every radix,
products of radices, batches and strided axes, real transforms, complex128, norms; plans and tables;
lengths with a prime factor above 13 still through Bluestein (fft_chirp.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.fft import chirp as fft_chirp
from gpuarray.providers import wgpu_fft
from gpuarray.render.wgsl_fft_mixed import (
    mixed_plan,
    mixed_twiddles,
    next_smooth,
    render_fft_mixed,
    smooth,
    table_offsets,
)
from gpuarray.runtime import devices as _devices
from gpuarray.runtime import replay

TOL = {"complex64": 2e-6, "complex128": 1e-14, "float32": 2e-6, "float64": 1e-14}
NORMS = ["backward", "ortho", "forward"]
# every radix, products of radices, one- two- and three-pass lengths (8 KiB tiles: 1024 complex64 points)
LENGTHS = [2, 3, 4, 5, 7, 8, 11, 13, 6, 12, 14, 15, 30, 49, 60, 105, 210, 1000, 3 ** 7, 5 ** 6, 16 * 3 * 5 * 7,
           4 * 7 ** 3, 1 << 13, 11 * 13 * 64, 2 * 3 ** 5 * 5 ** 4]


def _cdata(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _close(got: Any, want: np.ndarray, dtype: str) -> None:
    g = np.asarray(got)
    assert g.dtype == want.dtype and g.shape == want.shape
    scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-30)
    err = float(np.max(np.abs(g - want))) / scale if want.size else 0.0
    assert err <= TOL[dtype], f"relative error {err:.3g}"


def _plan_len(device: xp.Device, n: int, dtype: Any) -> int:
    p = _devices.provider_for(device)
    dt = np.dtype(dtype)
    return len(wgpu_fft.pass_plan(p, dt, n))


def test_smooth_and_plans():
    assert [n for n in range(1, 30) if not smooth(n)] == [17, 19, 23, 29]
    assert not smooth(1_000_003) and smooth(3 * 10 ** 6) and smooth(1 << 30)
    assert mixed_plan(1, 1024, 4) == [] and mixed_plan(2, 1024, 4) == [(2,)]
    assert mixed_plan(1000, 1024, 4) == [(8, 5, 5, 5)] and mixed_plan(1024, 1024, 4) == [(8, 8, 4, 4)]
    assert mixed_plan(10 ** 6, 1024, 4) == [(5, 5, 4)] * 3
    assert [math.prod(p) for p in mixed_plan(3 * 10 ** 6, 1024, 4)] == [200, 150, 100]
    assert mixed_plan(1 << 22, 1024, 4) == [(8, 8, 4), (8, 4, 4), (8, 4, 4)]
    # 2s go with odd primes as radices 2 p <= max_pow2 where that saves a stage, never otherwise
    assert mixed_plan(1000, 1024, 4, 16) == [(10, 10, 10)] and mixed_plan(4 * 7 ** 3, 2048, 4, 16) == [(14, 14, 7)]
    assert mixed_plan(12, 1024, 4) == [(4, 3)] and mixed_plan(640, 1024, 4, 16) == [(16, 8, 5)]
    assert mixed_plan(2 * 3 ** 5 * 5 ** 4, 1024, 4) == [(6, 5, 3), (5, 5, 3), (5, 3, 3)]
    for n in [*LENGTHS, 10 ** 6, 3 * 10 ** 6, 13 ** 5, 7 ** 6 * 2, 1 << 24, 4096 * 1000]:
        for tile, groups in ((1024, 4), (512, 2), (4096, 4)):
            plan = mixed_plan(n, tile, groups)
            assert math.prod(math.prod(p) for p in plan) == n
            assert all(set(p) <= {2, 3, 4, 5, 6, 7, 8, 11, 13} for p in plan)
            assert len(plan) == 1 and n <= tile or all(math.prod(p) <= tile // groups for p in plan)
            assert len(plan) <= math.ceil(math.log(n) / math.log(tile // groups)) + 1


def test_twiddle_table_exact_angles():
    """Pass 1 (Ns = 1): its local w_{pl R}^{r kl}; pass 2 (Ns = 20): per k' < 20 its stage's
    w_{60}^{r k'}, then its local table (pl = 1: ones, never read)."""
    plan = [(5, 4), (3,)]
    assert table_offsets(plan) == ([(0, 0), (19, 59)], 61)
    tw = mixed_twiddles(60, plan, False, 0.5, np.dtype(np.complex128))
    assert tw.shape == (62,) and tw[-1] == 0.5
    for kl in range(5):                 # pass 1, stage 2 (pl = 5, R = 4): w_20^(r kl) at 4 + kl * 3 + r - 1
        for r in (1, 2, 3):
            assert abs(tw[4 + 3 * kl + r - 1] - np.exp(-2j * np.pi * r * kl / 20)) < 1e-15
    for k in range(20):                 # pass 2: w_60^(r k') at 19 + k' * 2 + r - 1
        for r in (1, 2):
            assert abs(tw[19 + 2 * k + r - 1] - np.exp(-2j * np.pi * r * k / 60)) < 1e-15
    assert abs(mixed_twiddles(60, plan, True, 1.0, np.dtype(np.complex128))[21] - np.exp(2j * np.pi / 60)) < 1e-15
    src, threads = render_fft_mixed(np.dtype(np.complex128), (13, 11), 3, True, False, True, False, False)
    assert "workgroup_size(64)" in src and "f64" in src and threads == 64
    assert next_smooth(2 * 4097 - 1) == 8232 == 2 ** 3 * 3 * 7 ** 3 and next_smooth(1) == 1


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", LENGTHS)
def test_mixed_lengths(device, n, dtype):
    """Forward, inverse and round trip in every norm; on wgpu exactly one dispatch per pass of the
    plan and nothing on the host."""
    x = _cdata((3, n) if n < 5000 else (n,), dtype, n)
    g = xp.asarray(x, device=device)
    xp.evaluate(g)
    xp.reset_metrics()
    f = xp.fft.fft(g)
    xp.evaluate(f)
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 0
        assert xp.metrics()["dispatches"] == _plan_len(device, n, dtype)
    _close(f, np.fft.fft(x), dtype)
    for norm in NORMS:
        _close(xp.fft.ifft(g, norm=norm), np.fft.ifft(x, norm=norm), dtype)
        _close(xp.fft.fft(g, norm=norm), np.fft.fft(x, norm=norm), dtype)
    _close(xp.fft.ifft(f), x, dtype)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(("shape", "axis"), [((6, 35, 3), 1), ((2100, 2), 0), ((3, 5, 12), 0), ((4, 3, 7), 2),
                                             ((2, 5 ** 5, 3), 1), ((1000, 5), 0)], ids=str)
def test_mixed_axes_and_batches(device, dtype, shape, axis):
    """Strided transforms (inner > 1), batches, a prologue and every norm, in one and several passes."""
    x = _cdata(shape, dtype, 5)
    g = xp.asarray(x, device=device)
    _close(xp.fft.fft(g, axis=axis), np.fft.fft(x, axis=axis), dtype)
    for norm in NORMS:
        _close(xp.fft.ifft(g[::-1] * 2 - 1j, axis=axis, norm=norm),
               np.fft.ifft(x[::-1] * 2 - 1j, axis=axis, norm=norm), dtype)
    _close(xp.fft.fftn(g), np.fft.fftn(x), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [9, 10, 15, 60, 105, 1000, 2187, 3000])
def test_mixed_real_transforms(device, dtype, n):
    x = np.random.default_rng(n).standard_normal((2, n)).astype(dtype)
    g = xp.asarray(x, device=device)
    spec = xp.fft.rfft(g)
    _close(spec, np.fft.rfft(x), dtype.replace("float32", "complex64").replace("float64", "complex128"))
    _close(xp.fft.irfft(spec, n=n), np.fft.irfft(np.fft.rfft(x), n=n), dtype)
    _close(xp.fft.hfft(spec, n=n, norm="ortho"), np.fft.hfft(np.fft.rfft(x), n=n, norm="ortho"), dtype)
    _close(xp.fft.ihfft(g), np.fft.ihfft(x), dtype.replace("float32", "complex64").replace("float64", "complex128"))
    _close(xp.fft.rfftn(g), np.fft.rfftn(x), dtype.replace("float32", "complex64").replace("float64", "complex128"))


def test_nan_and_empty(device):
    x = _cdata((2, 30), np.complex64, 3)
    x[0, 7] = np.nan
    got = np.asarray(xp.fft.fft(xp.asarray(x, device=device)))
    want = np.fft.fft(x)
    assert np.isnan(want[0]).all() and np.isnan(got[0]).all()
    _close(got[1:], want[1:], "complex64")
    e = xp.fft.fft(xp.asarray(np.zeros((0, 15), np.complex64), device=device))
    assert e.shape == (0, 15) and e.dtype == xp.complex64
    with pytest.raises(ValueError):
        xp.fft.fft(xp.asarray(np.complex64(1), device=device))


@pytest.mark.parametrize("n", [17, 2 * 10007])
def test_large_prime_factors_use_bluestein(wgpu_device, n):
    """A prime factor above 13: Bluestein, whose inner power-of-two transforms are mixed-radix passes."""
    x = _cdata((2, n), np.complex64, n)
    g = xp.asarray(x, device=wgpu_device)
    xp.evaluate(g)
    assert fft_chirp.wanted(n, wgpu_device, np.dtype(np.complex64))
    assert not fft_chirp.wanted(n - 1 if n == 17 else 3 * 10 ** 6, wgpu_device, np.dtype(np.complex64))
    xp.reset_metrics()
    f = xp.fft.fft(g)
    xp.evaluate(f)
    m = fft_chirp.inner_length(n, wgpu_device, np.dtype(np.complex64))
    assert m == next_smooth(2 * n - 1)
    # the chirp product and padding, and the product with B, read by the transforms' first passes
    assert xp.metrics()["dispatches"] == 2 * _plan_len(wgpu_device, m, np.complex64) + 1
    assert xp.metrics()["host_fallbacks"] == 0
    _close(f, np.fft.fft(x), "complex64")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_mixed_pow2_matches_radix2(wgpu_device, dtype, monkeypatch):
    """Powers of two: the mixed kernel (radix 8/4) and the radix-2 block kernel (GPUARRAY_FFT_MIXED_POW2=0)
    agree, and both match NumPy."""
    monkeypatch.setattr(replay, "ENABLED", False)
    x = _cdata((2, 1 << 15), dtype, 9)
    g = xp.asarray(x, device=wgpu_device)
    got = {}
    for mixed in (True, False):
        monkeypatch.setattr(wgpu_fft, "MIXED_POW2", mixed)
        got[mixed] = np.asarray(xp.fft.fft(g, axis=1, norm="ortho"))
        _close(got[mixed], np.fft.fft(x, axis=1, norm="ortho"), dtype)
    _close(got[True], got[False], dtype)


def test_mixed_off_uses_bluestein(wgpu_device, monkeypatch):
    monkeypatch.setattr(replay, "ENABLED", False)
    monkeypatch.setattr(wgpu_fft, "MIXED", False)
    x = _cdata((2, 60), np.complex64, 2)
    assert fft_chirp.wanted(60, wgpu_device, np.dtype(np.complex64))
    _close(xp.fft.fft(xp.asarray(x, device=wgpu_device)), np.fft.fft(x), "complex64")


def test_many_workgroups(wgpu_device, monkeypatch):
    """More than 65535 workgroups (a 2-D dispatch): 65600 rows of 273 = 3 x 7 x 13 points, one row per
    workgroup with 4 KiB tiles."""
    monkeypatch.setattr(wgpu_fft, "TILE_BYTES", 4096)
    monkeypatch.setattr(wgpu_fft, "REG_TILE_BYTES", 4096)
    x = _cdata((65600, 273), np.complex64, 4)
    f = xp.fft.fft(xp.asarray(x, device=wgpu_device))
    _close(f, np.fft.fft(x), "complex64")


def test_million_points(wgpu_device):
    """10^6: three passes of 100 (8 KiB tiles, GPUARRAY_FFT_REG=0; the register kernel where a 16 KiB
    tile does not fit, as on lavapipe), two of 1000 (the register kernel's 32 KiB tiles)."""
    x = _cdata((10 ** 6,), np.complex64, 6)
    g = xp.asarray(x, device=wgpu_device)
    xp.evaluate(g)
    xp.reset_metrics()
    f = xp.fft.fft(g)
    xp.evaluate(f)
    assert xp.metrics()["dispatches"] == _plan_len(wgpu_device, 10 ** 6, np.complex64) in (2, 3)
    _close(f, np.fft.fft(x), "complex64")


def test_workgroup_memory_limit(wgpu_device, monkeypatch):
    """7^5: the later passes' radix-7 groups with their twiddles would take 17440 bytes at 146 groups
    per workgroup; under a 16 KiB limit the provider takes fewer groups per workgroup."""
    from gpuarray.render.wgsl_fft_mixed import workgroup_bytes
    assert mixed_plan(7 ** 5, 1024, 4) == [(7, 7), (7, 7), (7,)]
    assert workgroup_bytes(np.dtype(np.complex64), (7,), 146, False) == 17440
    p = _devices.provider_for(wgpu_device)
    monkeypatch.setitem(p.limits, "max-compute-workgroup-storage-size", 16384)
    monkeypatch.setattr(replay, "ENABLED", False)
    x = _cdata((7 ** 5,), np.complex64, 8)
    _close(xp.fft.fft(xp.asarray(x, device=wgpu_device)), np.fft.fft(x), "complex64")
