"""``X^T X`` takes the gram tiles on wgpu (``wgpu_matmul.gram_for``): with at most 64 features only the
blocks on and above the diagonal are computed, with more only the tiles on and above it (``upper``);
each is stored twice. Results against NumPy on both
providers, with more than 65535 rows, feature counts that are not multiples of the tiles, views, batches,
fused epilogues; products that look alike but are not a gram take the full tiles."""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_matmul, wgpu_matmul_classes


@pytest.fixture
def chosen(monkeypatch: pytest.MonkeyPatch) -> Iterator[list]:
    """The configurations ``gram_for`` returned (None: not a gram) during the test."""
    seen: list = []
    real = wgpu_matmul.gram_for

    def spy(*args, **kwargs):       # noqa: ANN002, ANN003, ANN202
        got = real(*args, **kwargs)
        seen.append(got)
        return got
    monkeypatch.setattr(wgpu_matmul, "gram_for", spy)
    yield seen


def _data(rows: int, cols: int, dt: str, seed: int = 0) -> np.ndarray:
    """Values in [-3, 3] for the first half of the rows, [-30, 30] for the rest."""
    rng = np.random.default_rng(seed)
    half = rows // 2
    return np.concatenate([rng.uniform(-3, 3, (half, cols)), rng.uniform(-30, 30, (rows - half, cols))]).astype(dt)


def _check(got: xp.GpuArray, want: np.ndarray, dt: str, k: int) -> None:
    tol = {"float32": 2e-6, "float64": 1e-14}[dt]
    scale = float(np.abs(want).max()) if want.size else 1.0
    np.testing.assert_allclose(np.asarray(got), want.astype(dt), rtol=tol * 8, atol=tol * scale)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("rows,cols", [(70001, 64), (70001, 32), (5000, 40), (3000, 60), (100, 64), (1, 64),
                                       (70001, 17), (20000, 12), (9, 4), (70001, 96), (3000, 200), (64, 260),
                                       (2000, 130)])
def test_gram_products(device: xp.Device, chosen: list, dt: str, rows: int, cols: int) -> None:
    x = _data(rows, cols, dt, rows + cols)
    g = xp.asarray(x, device=device)
    got = g.T @ g
    want = x.T.astype(np.float64) @ x.astype(np.float64)
    _check(got, want, dt, rows)
    host = np.asarray(got)
    assert np.array_equal(host, host.T) or device.name == "cpu"
    # one row is an outer product: X^T is a reshape there, not a transposed view
    if device.name != "cpu" and cols > wgpu_matmul_classes.SKINNY_MAX and rows > 1:
        cfg = chosen[-1] if chosen else None
        assert cfg is not None and (cfg.gram if cols <= 64 else cfg.upper)
        assert cols > 64 or cfg.bm == (32 if cols <= 32 else 64)


def test_selection_rules(wgpu_device: xp.Device, chosen: list) -> None:
    """Only the same data at the same place on both sides is a gram: X[:, :32]^T X[:, 32:], X^T Y and a
    transposed right side are not; a view at the same place on both sides is."""
    x = _data(6000, 64, "float32", 3)
    y = _data(6000, 64, "float32", 4)
    g, h = xp.asarray(x, device=wgpu_device), xp.asarray(y, device=wgpu_device)
    z = _data(3000, 256, "float32", 5)
    gz = xp.asarray(z, device=wgpu_device)
    c = x - x.mean(axis=0)
    gc = g - xp.mean(g, axis=0)
    cases = [
        (g[:, :32].T @ g[:, 32:], x[:, :32].T @ x[:, 32:], False),
        (g.T @ h, x.T @ y, False),
        (g[8:].T @ g[8:], x[8:].T @ x[8:], True),
        (g[:, 8:40].T @ g[:, 8:40], x[:, 8:40].T @ x[:, 8:40], True),
        (g[:64].T @ g[:64].T.T, x[:64].T @ x[:64], True),
        (g[:64] @ g[:64].T, x[:64] @ x[:64].T, True),            # X X^T: the Gram matrix of the rows
        (g[:300] @ g[:300].T, x[:300] @ x[:300].T, True),
        (g[:300] @ g[1:301].T, x[:300] @ x[1:301].T, False),       # other rows on the other side
        ((gc[:200] * 2) @ (gc[:200] * 2).T, (c[:200] * 2) @ (c[:200] * 2).T, True),
        (gz[:, :128].T @ gz[:, 128:], z[:, :128].T @ z[:, 128:], False),   # several tiles, other columns
        (gz[:, 64:].T @ gz[:, 64:], z[:, 64:].T @ z[:, 64:], True),
        (gc.T @ gc, c.T @ c, True),                                  # a centred X fused into both sides
        (gc.T @ (gc * 2), c.T @ (c * 2), False),
        (g[:, ::-1].T @ g, x[:, ::-1].T @ x, False),                 # a view of X, not its transpose
        (gz[:, :40].T @ gz[:, :40], z[:, :40].T @ z[:, :40], True),  # read element by element (not vec4)
    ]
    for got, want, gram in cases:
        chosen.clear()
        _check(got, want.astype(np.float64), "float32", 6000)
        assert bool(chosen and chosen[-1] is not None) == gram, (want.shape, chosen)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_batched_and_epilogue(device: xp.Device, chosen: list, dt: str) -> None:
    """A stack of grams (each its own tile), a fused epilogue in one pass (short K) and after the split
    sum (long K), and a centred covariance as scikit-learn's PCA computes it."""
    for shape in ((3, 4000, 48), (2, 1500, 136)):
        s = _data(shape[0] * shape[1], shape[2], dt, 7).reshape(shape)
        gs = xp.asarray(s, device=device)
        want = np.matmul(np.swapaxes(s, 1, 2).astype(np.float64), s.astype(np.float64))
        _check(xp.matrix_transpose(gs) @ gs, want, dt, shape[1])
    for rows, cols in ((200, 64), (70001, 64), (300, 128), (5000, 72)):
        x = _data(rows, cols, dt, rows)
        g = xp.asarray(x, device=device)
        c = x.T.astype(np.float64) @ x.astype(np.float64)
        _check(xp.abs(g.T @ g) * 0.5 + 1.0, np.abs(c) * 0.5 + 1.0, dt, rows)
        mean = x.mean(axis=0)
        gm = xp.mean(g, axis=0)
        cov = g.T @ g
        cov -= rows * xp.reshape(gm, (-1, 1)) * xp.reshape(gm, (1, -1))
        cov /= rows - 1
        _check(cov, (c - rows * np.outer(mean, mean)) / (rows - 1), dt, rows)
    if device.name != "cpu":
        assert any(c is not None and c.gram for c in chosen)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("rows,cols", [(48, 64), (700, 64), (300, 17), (1000, 3)])
def test_row_gram_and_distances(device: xp.Device, chosen: list, dt: str, rows: int, cols: int) -> None:
    """``X @ X.T`` (one tile, or the tiles on and above the diagonal) and squared Euclidean distances as
    scikit-learn computes them, ``-2 X X^T + |x_i|^2 + |x_j|^2``, whose epilogue is evaluated at each
    stored position, the mirrored ones included."""
    x = _data(rows, cols, dt, rows * cols)
    g = xp.asarray(x, device=device)
    want = x.astype(np.float64) @ x.T
    with xp.config(offload="always"):
        got = g @ g.T
        sq = xp.sum(g * g, axis=1)
        dist = -2.0 * (g @ g.T) + sq[:, None] + sq[None, :]
        _check(got, want, dt, cols)
        n2 = (x.astype(np.float64) ** 2).sum(axis=1)
        _check(dist, -2 * want + n2[:, None] + n2[None, :], dt, cols)
    host = np.asarray(got)
    assert np.array_equal(host, host.T) or device.name == "cpu"
    if device.name != "cpu":
        assert chosen and all(c is not None and (c.gram or c.upper) for c in chosen)


def test_empty_and_names(device: xp.Device) -> None:
    g = xp.asarray(np.zeros((0, 64), np.float32), device=device)
    assert np.array_equal(np.asarray(g.T @ g), np.zeros((64, 64), np.float32))
    assert wgpu_matmul.parse_config(wgpu_matmul.GRAM.name) == wgpu_matmul.GRAM
    assert wgpu_matmul.GRAM.threads == 136 and wgpu_matmul.GRAM32.threads == 36
    up = wgpu_matmul.BlockTiles(128, 128, 8, 8, 8, 2, 8, False, True)
    assert wgpu_matmul.parse_config(up.name) == up
    assert wgpu_matmul._tiles(up, 1000, 1000) == 36 and wgpu_matmul._tiles(wgpu_matmul.BLOCK_LARGE, 1000, 1000) == 64
    with pytest.raises(ValueError, match="gram tiles"):
        wgpu_matmul.BlockTiles(64, 32, 8, 4, 4, 2, 0, True).check()
    with pytest.raises(ValueError, match="upper tiles"):
        wgpu_matmul.BlockTiles(64, 128, 8, 4, 8, 2, 8, False, True).check()


def test_forced_gram_tiles_on_other_products(wgpu_device: xp.Device) -> None:
    """A forced configuration (``use_config``) named with the gram or upper flag runs as full tiles:
    only ``gram_for`` knows that a product is ``X^T X``."""
    rng = np.random.default_rng(9)
    a, b = rng.uniform(-3, 3, (300, 64)).astype(np.float32), rng.uniform(-3, 3, (64, 64)).astype(np.float32)
    ga, gb = xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device)
    for cfg in (wgpu_matmul.GRAM, wgpu_matmul.BlockTiles(64, 64, 8, 4, 4, 2, 8, False, True)):
        with wgpu_matmul.use_config(cfg):
            _check(ga @ gb, a.astype(np.float64) @ b, "float32", 64)
            _check(ga.T @ ga, a.T.astype(np.float64) @ a, "float32", 300)


@pytest.mark.parametrize("cols", [64, 136])
def test_centred_gram_is_cut_past_one_tile(device: xp.Device, cols: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Xc.T @ Xc`` of a centred X: fused into the product while it is one tile (at most ``GRAM_FUSED``
    features), computed by a kernel of its own first with more (each tile would compute it again)."""
    sched = importlib.import_module("gpuarray.compiler.schedule")     # (the package exports the function)
    monkeypatch.setattr(importlib.import_module("gpuarray.compiler.plan_cache"), "ENABLED", False)
    x = _data(3000, cols, "float32", cols)
    g = xp.asarray(x, device=device)
    gc = g - xp.mean(g, axis=0)
    prod = gc.T @ gc
    kinds = [k.kind for k in sched.schedule([prod._node])]
    assert len(kinds) == (2 if cols <= sched.GRAM_FUSED else 3), kinds
    c = x - x.mean(axis=0)
    _check(prod, c.T.astype(np.float64) @ c, "float32", 3000)
