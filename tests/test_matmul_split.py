"""Split-K matrix products on wgpu: a product with few output tiles and a long K is computed as
partial sums over K chunks (one workgroup per tile and chunk) and a second pass that adds them in
chunk order and evaluates the fused epilogue (``providers/wgpu_matmul.split_for``)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_matmul
from gpuarray.render.wgsl_matmul import Tiles

from .conftest import assert_same


def _provider(adapter_type: str = "DiscreteGPU", max_binding: int = 1 << 30) -> SimpleNamespace:
    return SimpleNamespace(adapter=SimpleNamespace(info={"adapter_type": adapter_type}), max_binding=max_binding)


def test_split_rules() -> None:
    p = _provider()
    sf = wgpu_matmul.split_for
    # X.T @ X with X 2^20 x 64: one 64 x 64 tile, split into FILL_GROUPS chunks of 4096
    assert sf(p, wgpu_matmul.BLOCK_MEDIUM, 64, 64, 1 << 20, 1, 4) == wgpu_matmul.Split(256, 4096)
    # enough tiles already, or a short K: no split
    assert sf(p, wgpu_matmul.BLOCK_LARGE, 4096, 4096, 1 << 16, 1, 4).chunks == 1
    assert sf(p, wgpu_matmul.MATVEC, 1 << 20, 1, 64, 1, 4).chunks == 1
    assert sf(p, wgpu_matmul.SMALL, 64, 64, 300, 1, 4).chunks == 1
    # chunks are multiples of the K step and cover K exactly once
    s = sf(p, wgpu_matmul.VECMAT, 1, 64, 100003, 1, 8)
    assert s.kc % wgpu_matmul.VECMAT.bk == 0 and (s.chunks - 1) * s.kc < 100003 <= s.chunks * s.kc
    # the partial sums stay within 256 MiB even when the output is large
    s = sf(p, wgpu_matmul.SMALL, 1000, 30, 1 << 20, 1, 4)
    assert s.chunks * 1000 * 30 * 4 <= 256 << 20


def test_cpu_adapters_bound_the_k_loop() -> None:
    """On a CPU adapter every workgroup walks at most ``loop_steps_cap`` K steps, split or not."""
    cpu = _provider("CPU")
    for cfg in (wgpu_matmul.MATVEC, wgpu_matmul.GENERAL, wgpu_matmul.BLOCK_MEDIUM):
        cap = wgpu_matmul.loop_steps_cap(cpu, cfg)
        assert cap is not None and cap >= 64
        s = wgpu_matmul.split_for(cpu, cfg, 100, 100, 1 << 22, 1, 4)
        assert s.kc <= cap * cfg.bk and s.chunks * s.kc >= 1 << 22
    assert wgpu_matmul.loop_steps_cap(_provider(), wgpu_matmul.MATVEC) is None
    with pytest.raises(NotImplementedError, match="largest binding"):
        wgpu_matmul.split_for(_provider("CPU", 1 << 20), wgpu_matmul.GENERAL, 512, 512, 1 << 22, 1, 4)


@pytest.fixture
def eager_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split small products too (chunks of 32), so that lavapipe tests them quickly."""
    monkeypatch.setattr(wgpu_matmul, "MIN_KC", 32)


def _rand(shape: tuple[int, ...], seed: int, dt: str = "float32") -> np.ndarray:
    x = np.random.default_rng(seed).uniform(-3, 3, shape)
    return (np.round(x * 10) if np.dtype(dt).kind in "iu" else x).astype(dt)


def _close(got: xp.GpuArray, want: np.ndarray, k: int) -> None:
    got_np = np.asarray(got)
    assert got_np.dtype == want.dtype and got_np.shape == want.shape
    eps = np.finfo(want.dtype).eps if want.dtype.kind == "f" else 0
    np.testing.assert_allclose(got_np, want, rtol=0, atol=4 * k * eps * max(float(np.abs(want).max()), 1))


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64"])
def test_split_products(wgpu_device: xp.Device, eager_split: None, dt: str) -> None:
    dev = wgpu_device
    if dt == "float64" and not dev.provider.supports(np.dtype(dt)):
        pytest.skip("no shader-f64")
    for sa, sb in [((70, 1000), (1000, 66)), ((3, 999), (999, 1)), ((1, 1000), (1000, 5)),
                   ((2, 1, 9, 500), (3, 500, 7))]:
        a, b = _rand(sa, 1, dt), _rand(sb, 2, dt)
        _close(xp.asarray(a, device=dev) @ xp.asarray(b, device=dev), a @ b, sa[-1])


def test_split_with_prologue_epilogue_and_views(wgpu_device: xp.Device, eager_split: None) -> None:
    dev = wgpu_device
    x, r, bias = _rand((2000, 64), 3), _rand((2000,), 4), _rand((64,), 5)
    gx, gr, gb = (xp.asarray(v, device=dev) for v in (x, r, bias))
    _close(xp.tanh(gx.T @ gx * 0.01 + gb), np.tanh(x.T @ x * np.float32(0.01) + bias), 2000)
    _close(gx.T @ (gr * 2), x.T @ (r * 2), 2000)                # X.T @ r, matrix-vector
    _close((gr - 1) @ gx, (r - 1) @ x, 2000)                    # r @ X, vector-matrix
    _close(gx[::2, 3:40].T @ gx[::2, :9], x[::2, 3:40].T @ x[::2, :9], 1000)
    with wgpu_matmul.use_config(Tiles(32, 32, 16, 2, 2)):
        _close(gx.T @ gx + gb, x.T @ x + bias, 2000)
    y = gx.T @ gx                                               # the inputs stay usable
    _close(gx.T @ gx, x.T @ x, 2000)
    del y


def test_split_special_values_and_small_ints(wgpu_device: xp.Device, eager_split: None) -> None:
    dev = wgpu_device
    a, b = _rand((5, 800), 6), _rand((800, 4), 7)
    a[0, 10], a[1, 700] = np.inf, -np.inf            # in different chunks of row 0 and 1
    a[1, 5], b[400, 2] = np.inf, np.nan
    a[2, :] = -0.0
    with np.errstate(invalid="ignore"):
        want = a @ b
    assert_same(xp.asarray(a, device=dev) @ xp.asarray(b, device=dev), want, rtol=1e-4, atol=1e-3,
                check_signed_zero=False)
    i8 = np.random.default_rng(8).integers(-128, 128, (4, 3000)).astype(np.int8)
    j8 = np.random.default_rng(9).integers(-128, 128, (3000, 3)).astype(np.int8)
    assert_same(xp.asarray(i8, device=dev) @ xp.asarray(j8, device=dev), i8 @ j8)   # wraps like NumPy
    m = np.random.default_rng(10).random((4, 3000)) < 0.001
    n = np.random.default_rng(11).random((3000, 3)) < 0.01
    assert_same(xp.asarray(m, device=dev) @ xp.asarray(n, device=dev), m @ n)


def test_split_keeps_one_evaluation(wgpu_device: xp.Device, eager_split: None) -> None:
    """The two passes and the reduction after them are one evaluation: only the result comes down."""
    dev = wgpu_device
    x = _rand((1500, 64), 12)
    gx = xp.asarray(x, device=dev)
    with xp.config(offload="always"):
        before = xp.metrics()
        got = np.asarray((gx.T @ gx).sum(axis=0))
        after = xp.metrics()
    assert after["bytes_downloaded"] - before["bytes_downloaded"] == 64 * 4
    assert after["evaluations"] - before["evaluations"] == 1
    assert after["host_fallbacks"] == before["host_fallbacks"]
    np.testing.assert_allclose(got, (x.T @ x).sum(axis=0), rtol=1e-4, atol=1e-2)


def test_one_output_tile_with_a_long_k_takes_the_split_tiles(wgpu_device: xp.Device) -> None:
    """Outputs of at most 64 x 64 (M or N below 64 included) with K >= LONG_K: the register-blocked
    kernel with BLOCK_SPLIT tiles (float32), untuned; right at any M, N up to 64."""
    prov = wgpu_device.provider
    sel = wgpu_matmul.select
    k = wgpu_matmul.LONG_K
    assert sel(prov, 64, 64, 1 << 20, 1, np.dtype(np.float32)) == wgpu_matmul.BLOCK_SPLIT
    assert sel(prov, 64, 32, k, 1, np.dtype(np.float32)) == wgpu_matmul.BLOCK_SPLIT
    assert sel(prov, 64, 32, k - 1, 1, np.dtype(np.float32)) == wgpu_matmul.choose_tiles(64, 32, k - 1, np.float32)
    rng = np.random.default_rng(5)
    with xp.config(offload="always"):
        for m, kk, n in [(64, 5000, 32), (13, 3000, 50), (2, 9000, 3), (64, 20000, 64), (33, 4096, 33)]:
            a = rng.uniform(-3, 3, (kk, m)).astype(np.float32)
            b = rng.uniform(-3, 3, (kk, n)).astype(np.float32)
            got = np.asarray(xp.asarray(a, device=wgpu_device).T @ xp.asarray(b, device=wgpu_device))
            want = a.T.astype(np.float64) @ b
            assert np.all(np.abs(got - want) <= 1e-6 * (np.abs(a.T) @ np.abs(b)) + 1e-6)
