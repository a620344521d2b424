"""Products with an operand past one storage binding (2 GiB on the H200) run on the device by blocks that
each read a window of it (``namespace/matmul_blocks.py``): rows of ``X`` for ``X @ w``, the contracted
dimension for ``X.T @ r`` and ``X.T @ X``, columns for ``w @ X.T``. Before, every such product ran on the
host. The wgpu provider's limits are lowered to 1 MiB a binding and 3 MiB a buffer here, so that arrays of
a few MiB take these paths; results against NumPy."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers.webgpu import WgpuProvider
from gpuarray.runtime import planner

MIB = 1 << 20


@pytest.fixture
def small_limits(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> Iterator[WgpuProvider]:
    p = wgpu_device.provider
    monkeypatch.setattr(p, "max_binding", 1 * MIB)
    monkeypatch.setattr(p, "max_buffer", 3 * MIB)
    monkeypatch.setattr(p.pool, "max_bytes", 3 * MIB)
    yield p


def _check(f: Callable[[], Any], want: np.ndarray, rtol: float) -> None:
    xp.reset_metrics()
    with xp.config(offload="always"):
        got = np.asarray(f())
    m = xp.metrics()
    assert m["host_fallbacks"] == 0 and m["host_kernels"] == 0, planner.decisions()[-1:]
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("dt", ["float32", "float64", "int32"])
def test_products_with_an_operand_past_one_binding(small_limits: WgpuProvider, wgpu_device: xp.Device,
                                                   dt: str) -> None:
    rng = np.random.default_rng(7)
    item = np.dtype(dt).itemsize
    n = MIB // item * 5 // 2 // 48 + 37                   # rows of 48: 2.5 bindings, one buffer
    if dt == "int32":
        h = rng.integers(-50, 50, (n, 48)).astype(dt)
        v, r, w = (rng.integers(-3, 3, s).astype(dt) for s in (48, n, (48, 5)))
    else:
        h = np.concatenate([rng.uniform(-3, 3, (n // 2, 48)), rng.uniform(-30, 30, (n - n // 2, 48))]).astype(dt)
        v, r, w = (rng.uniform(-1, 1, s).astype(dt) for s in (48, n, (48, 5)))
    x = xp.asarray(h, device=wgpu_device)
    gv, gr, gw = (xp.asarray(t, device=wgpu_device) for t in (v, r, w))
    rtol = {"float32": 2e-5, "float64": 1e-12, "int32": 0.0}[dt]
    _check(lambda: x @ gv, h @ v, rtol)                                # rows of X
    _check(lambda: x @ gw, h @ w, rtol)
    _check(lambda: x.T @ gr, h.T @ r, rtol)                            # the contracted dimension
    _check(lambda: gr @ x, r @ h, rtol)
    _check(lambda: x.T @ x, h.T @ h, rtol)                             # a Gram matrix of blocks
    _check(lambda: gw.T @ x.T, w.T @ h.T, rtol)                        # columns of X.T
    _check(lambda: x[:, 3:9].T @ gr, h[:, 3:9].T @ r, rtol)            # a column band spans all of X
    _check(lambda: x[100:300] @ gw, h[100:300] @ w, rtol)              # a view within one window: no blocks


def test_fused_operands_vectors_and_bools(small_limits: WgpuProvider, wgpu_device: xp.Device) -> None:
    """Elementwise work on the big operand is read block by block (a prologue); a 1-D product of two long
    vectors adds its blocks; bool products (counts) compare after the blocks are added."""
    rng = np.random.default_rng(8)
    n = MIB // 4 * 5 // 2 // 32 + 11
    h = rng.uniform(-3, 3, (n, 32)).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device)
    mu = h.mean(axis=0, dtype=np.float64).astype(np.float32)
    gmu = xp.asarray(mu, device=wgpu_device)
    _check(lambda: (x - gmu).T @ (x - gmu), (h - mu).T @ (h - mu), 2e-5)
    ones = xp.ones(32, dtype=xp.float32, device=wgpu_device)
    _check(lambda: xp.exp(x * 0.1) @ ones, np.exp(h * np.float32(0.1)) @ np.ones(32, np.float32), 2e-5)
    long = rng.uniform(-1, 1, MIB // 4 * 3 // 2 + 5).astype(np.float32)       # 1.5 bindings
    gl = xp.asarray(long, device=wgpu_device)
    _check(lambda: gl @ gl, np.asarray(long.astype(np.float64) @ long, np.float32), 2e-5)
    hb = h > 2.5
    gb = xp.asarray(hb, device=wgpu_device)
    _check(lambda: gb.T @ gb, hb.T @ hb, 0.0)


def test_past_one_buffer_falls_back_with_its_reason(small_limits: WgpuProvider, wgpu_device: xp.Device) -> None:
    """An operand stored in several buffers (past ``max_buffer``) has no windows yet: the product runs on
    the host, NumPy's result, and the planner says why."""
    n = 3 * MIB // 4 * 3 // 2 // 16                      # 1.5 buffers
    h = np.random.default_rng(9).uniform(-1, 1, (n, 16)).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device)
    xp.reset_metrics()
    got = np.asarray(x.T @ x)
    assert xp.metrics()["host_fallbacks"] >= 1
    assert "exceeds" in planner.decisions()[-1]["why"]
    np.testing.assert_allclose(got, h.T @ h, rtol=2e-5, atol=2e-5 * np.abs(h.T @ h).max())
