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


def test_operands_past_one_buffer_read_their_parts(small_limits: WgpuProvider, wgpu_device: xp.Device) -> None:
    """An operand stored in several buffers (past ``max_buffer``): each block lies in one part and binds
    its window there (blocks are cut at the parts' starts, and parts hold whole rows where a unit of rows
    fits a buffer); rows that straddle two parts leave the product to the host, which says why.
    Reductions and masks of such arrays take the same parts."""
    seg = small_limits.segment_elems(4)
    n = seg * 3 // 2 // 16                               # 1.5 buffers of rows of 16: no row straddles
    h = np.random.default_rng(9).uniform(-1, 1, (n, 16)).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device)
    r = np.random.default_rng(10).uniform(-1, 1, n).astype(np.float32)
    gr = xp.asarray(r, device=wgpu_device)
    w = np.ones((16, 3), np.float32)
    _check(lambda: x.T @ x, h.T @ h, 2e-5)
    _check(lambda: x.T @ gr, h.T @ r, 2e-5)
    _check(lambda: x @ xp.asarray(w, device=wgpu_device), h @ w, 2e-5)
    _check(lambda: xp.sum(x, axis=0), np.sum(h.astype(np.float64), axis=0).astype(np.float32), 2e-5)
    _check(lambda: xp.max(x), np.max(h), 0.0)
    _check(lambda: xp.argmax(xp.reshape(x, (-1,))), np.argmax(h), 0.0)
    _check(lambda: x[x > 0.999], h[h > 0.999], 0.0)
    # rows of 7: the parts are whole rows (a multiple of 7 x 1024 elements), so no row straddles two
    odd = seg * 3 // 2 // 7
    ho = np.random.default_rng(11).uniform(-1, 1, (odd, 7)).astype(np.float32)
    xo = xp.asarray(ho, device=wgpu_device)
    _check(lambda: xo.T @ xo, ho.T @ ho, 2e-5)
    assert xo._node.data.handle.seg_elems % 7 == 0         # uploaded by the product
    _check(lambda: xp.sum(xo * 2, axis=0), np.sum(ho.astype(np.float64) * 2, axis=0).astype(np.float32), 2e-5)
    _check(lambda: xp.max(xo, axis=1), np.max(ho, axis=1), 0.0)
    # rows of 1001: 1001 x 1024 elements exceed a buffer, the parts are not whole rows and one row
    # straddles two: its products run on the host, which says why
    wide = small_limits.max_buffer // 4 * 3 // 2 // 1001
    hw = np.random.default_rng(12).uniform(-1, 1, (wide, 1001)).astype(np.float32)
    xw = xp.asarray(hw, device=wgpu_device)
    xp.evaluate(xw * 1)                                     # uploads it
    assert xw._node.data.handle.seg_elems % 1001 != 0
    xp.reset_metrics()
    got = np.asarray(xw.T @ xw[:, :3])
    assert xp.metrics()["host_fallbacks"] >= 1
    assert "exceeds" in planner.decisions()[-1]["why"]
    want = hw.T @ hw[:, :3]
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * np.abs(want).max())
