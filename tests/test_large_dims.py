"""Kernel families with one dimension at the workgroup-count limit and past it (65535, 65536, 70000),
on wgpu, against NumPy. A dispatch over one long axis is where a per-dimension limit of 65535
workgroups, or a loop bound, shows; the other dimensions stay small so that lavapipe runs it quickly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp

from .conftest import assert_same

SIZES = [65535, 65536, 70000]


def _data(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-3, 3, shape).astype(np.float32)


def _close(got: Any, want: np.ndarray, n: int) -> None:
    """float32 sums over n terms: NumPy's pairwise sum and a GPU's tree differ by about sqrt(n) ULPs."""
    assert_same(got, np.asarray(want), rtol=2e-5, atol=2e-5 * np.sqrt(n) * 3, check_signed_zero=False)


@pytest.fixture(params=SIZES)
def n(request: pytest.FixtureRequest) -> int:
    return int(request.param)


def _cases(n: int) -> list[tuple[str, Callable[[Any, Any], Any], tuple[int, ...], int]]:
    """(name, f(module, x), shape of x, terms per output for the tolerance)."""
    out: list[tuple[str, Callable[[Any, Any], Any], tuple[int, ...], int]] = []
    for shape in ((n, 3), (3, n)):
        tag = "long-rows" if shape[0] == n else "long-cols"
        out.append((f"broadcast-{tag}", lambda m, x: m.exp(x * 0.5) - x[:1] * x[:, :1], shape, 1))
        for ax in (0, 1, None):
            k = n if ax is None or shape[ax] == n else 3
            out.append((f"sum-{tag}-{ax}", lambda m, x, ax=ax: m.sum(x, axis=ax), shape, k * (3 if ax is None else 1)))
            out.append((f"mean-{tag}-{ax}", lambda m, x, ax=ax: m.mean(x, axis=ax), shape, k))
            out.append((f"max-{tag}-{ax}", lambda m, x, ax=ax: m.max(x, axis=ax), shape, 1))
            out.append((f"min-{tag}-{ax}", lambda m, x, ax=ax: m.min(x, axis=ax), shape, 1))
            out.append((f"argmax-{tag}-{ax}", lambda m, x, ax=ax: m.argmax(x, axis=ax), shape, 1))
            out.append((f"argmin-{tag}-{ax}", lambda m, x, ax=ax: m.argmin(x, axis=ax), shape, 1))
            out.append((f"any-{tag}-{ax}", lambda m, x, ax=ax: m.any(x > 2.99, axis=ax), shape, 1))
            out.append((f"all-{tag}-{ax}", lambda m, x, ax=ax: m.all(x > -2.99, axis=ax), shape, 1))
        for ax in (0, 1):
            k = shape[ax]
            out.append((f"var-{tag}-{ax}", lambda m, x, ax=ax: m.var(x, axis=ax), shape, k))
            out.append((f"cumsum-{tag}-{ax}", lambda m, x, ax=ax: m.cumsum(x, axis=ax), shape, k))
            out.append((f"sort-{tag}-{ax}", lambda m, x, ax=ax: m.sort(x, axis=ax), shape, 1))
            out.append((f"argsort-{tag}-{ax}",
                        lambda m, x, ax=ax: m.take_along_axis(x, m.argsort(x, axis=ax), axis=ax), shape, 1))
    return out


def test_families_along_long_axes(wgpu_device: xp.Device, n: int) -> None:
    for name, f, shape, terms in _cases(n):
        h = _data(shape)
        g = xp.asarray(h, device=wgpu_device)
        want = f(np, h)
        got = f(np, g)
        assert isinstance(got, xp.GpuArray), name
        if want.dtype.kind in "biu":
            assert_same(got, want)
        else:
            try:
                _close(got, want, terms)
            except AssertionError as exc:
                raise AssertionError(f"{name} (n = {n}): {exc}") from None


def test_gathers_and_scatters(wgpu_device: xp.Device, n: int) -> None:
    rng = np.random.default_rng(3)
    h = _data((n, 3))
    idx = rng.integers(-n, n, 5000)
    g = xp.asarray(h, device=wgpu_device)
    assert_same(g[idx], h[idx])
    assert_same(np.take(g, idx[idx >= 0], axis=0), np.take(h, idx[idx >= 0], axis=0))
    t = _data((3, n), 1)
    gt = xp.asarray(t, device=wgpu_device)
    assert_same(gt[:, idx], t[:, idx])
    uniq = rng.permutation(n)[:4000]
    for x in (h, g):
        x[uniq] = -7.0
        x[n - 1, :] = 11.0
    assert_same(g, h)
    mask = t > 2.5
    for x, m in ((t, mask), (gt, xp.asarray(mask, device=wgpu_device))):
        x[m] = 0.0
    assert_same(gt, t)


def test_matmul_with_a_long_dimension(wgpu_device: xp.Device, n: int) -> None:
    a = _data((n, 3))
    v3 = _data((3,), 1)
    g = xp.asarray(a, device=wgpu_device)
    gv3 = xp.asarray(v3, device=wgpu_device)
    _close(g @ gv3, a @ v3, 3)                      # M = n
    _close(gv3 @ g.T, v3 @ a.T, 3)                  # N = n
    b = _data((n, 2, 2), 2)
    gb = xp.asarray(b, device=wgpu_device)
    _close(gb @ gb, b @ b, 2)                       # batch = n
    _close(g.T @ g, a.T @ a, n)                     # K = n, 3 x 3 output


def test_matrix_vector_with_a_long_contraction(wgpu_device: xp.Device, n: int) -> None:
    x = _data((n, 64))
    r = _data((n,), 1)
    g, gr = xp.asarray(x, device=wgpu_device), xp.asarray(r, device=wgpu_device)
    _close(g.T @ gr, x.T @ r, n)
    _close(gr @ g, r @ x, n)


def test_fft_along_a_long_axis(wgpu_device: xp.Device, n: int) -> None:
    h = _data((2, n))
    g = xp.asarray(h, device=wgpu_device)
    want = np.fft.fft(h, axis=1)
    got = np.asarray(np.fft.fft(g, axis=1))
    assert got.dtype == np.complex64
    scale = np.abs(want).max()
    assert np.abs(got - want).max() <= 1e-5 * scale * np.log2(n)
