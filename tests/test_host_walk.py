"""Reads of small work on device data read ahead to the host (``planner._walk_on_host``): the nodes walked
with NumPy, no kernels scheduled, the values those kernels would give."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.runtime import planner

from .conftest import assert_same

WALK = "host walk of"


def _on_device(h: np.ndarray, device: xp.Device) -> xp.GpuArray:
    """``h`` as an array whose only copy is on ``device`` (a result computed there)."""
    with xp.config(offload="always"):
        x = xp.asarray(h, device=device) + xp.zeros((), dtype=h.dtype, device=device)
        xp.evaluate(x)
    return x


def _walks() -> int:
    return sum(1 for d in planner.decisions() if d["kernel"].startswith(WALK))


@pytest.fixture
def auto():
    with xp.config(offload="auto", elementwise_threshold=None, reduction_threshold=None):
        yield


def test_row_loop_reads_match_numpy_with_special_values(wgpu_device: xp.Device, auto: None) -> None:
    """A row loop reading one value per row of device data (NaN, infinities, -0.0 and extremes in it):
    every read equals NumPy's, and the reads run as walks on the host once the rows were read ahead."""
    rng = np.random.default_rng(3)
    h = rng.uniform(-30, 30, (300, 64)).astype(np.float32)
    h[5, 3], h[6, 7], h[7, 1], h[8, :] = np.nan, np.inf, -np.inf, -0.0
    h[9, 0] = np.finfo(np.float32).max
    b = _on_device(h, wgpu_device)
    before = _walks()
    for i in range(1, 300):
        got = float((b[i] * 2 - b[i - 1]).sum())
        terms = h[i] * np.float32(2) - h[i - 1]
        want = float(terms.sum())
        # the first reads run on the device (its order of summation), the rest as NumPy's
        bound = 0.0 if not np.isfinite(want) else 1e-6 * float(np.abs(terms).sum())
        assert got == want or abs(got - want) <= bound or (np.isnan(got) and np.isnan(want)), (i, got, want)
        assert np.signbit(got) == np.signbit(want) or np.isnan(want)
        assert_same(xp.max(b[i] - 1), np.max(h[i] - np.float32(1)))
    assert _walks() > before
    assert any(d["why"] == planner.READ_AHEAD_WHY for d in planner.decisions() if d["kernel"].startswith(WALK))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.bool_])
def test_integer_and_bool_reads(wgpu_device: xp.Device, auto: None, dtype: type) -> None:
    """Integer extremes (sums in the default integer, products wrapping as NumPy's), bool any / all."""
    rng = np.random.default_rng(4)
    if dtype is np.bool_:
        h = rng.uniform(0, 1, (200, 40)) < 0.1
    else:
        info = np.iinfo(dtype)
        h = rng.integers(info.min, info.max, (200, 40), dtype=dtype, endpoint=True)
        h[3, :2] = info.max, info.min
    b = _on_device(h, wgpu_device)
    for i in range(1, 200):
        if dtype is np.bool_:
            assert bool(xp.any(b[i] & ~b[i - 1])) == bool(np.any(h[i] & ~h[i - 1]))
            assert bool(xp.all(b[i] | b[i - 1])) == bool(np.all(h[i] | h[i - 1]))
        else:
            assert int(xp.sum(b[i])) == int(np.sum(h[i]))
            assert int(xp.max(b[i] ^ b[i - 1])) == int(np.max(h[i] ^ h[i - 1]))


def test_empty_and_zero_d_windows(wgpu_device: xp.Device, auto: None) -> None:
    h = np.arange(5000, dtype=np.float32) / 7
    b = _on_device(h, wgpu_device)
    for i in range(0, 4000, 50):
        assert float(xp.sum(b[i:i] * 3)) == 0.0
        assert float(b[i] * 3 + 1) == float(h[i] * np.float32(3) + np.float32(1))
        assert_same(np.asarray(b[i:i + 3] - b[i + 1]), h[i:i + 3] - h[i + 1])


def test_intermediates_held_elsewhere_and_later_use(wgpu_device: xp.Device, auto: None) -> None:
    """A reduction the user holds is realized by the walk that reads a value of it; intermediates left
    lazy evaluate right later, on either placement."""
    rng = np.random.default_rng(5)
    h = rng.uniform(-3, 3, (100, 32)).astype(np.float32)
    b = _on_device(h, wgpu_device)
    for i in range(1, 100):
        m = b[i] * 2
        s = xp.sum(m - b[i - 1], axis=0, keepdims=True)
        got = float(s[0] + 1)
        want = (h[i] * np.float32(2) - h[i - 1]).sum(axis=0, keepdims=True)
        np.testing.assert_allclose(got, float(want[0] + np.float32(1)), rtol=1e-5, atol=1e-5)
        assert_same(s, want, rtol=1e-5, atol=1e-5)
        assert_same(m, h[i] * np.float32(2))
    with xp.config(offload="always"):
        assert_same(m * b[0], h[99] * np.float32(2) * h[0])


def test_work_the_walk_does_not_take_runs_as_kernels(wgpu_device: xp.Device, auto: None) -> None:
    """A read of a sort or an argmax of small rows: not walked (kernels on the host), the same values."""
    rng = np.random.default_rng(6)
    h = rng.uniform(-3, 3, (60, 32)).astype(np.float32)
    b = _on_device(h, wgpu_device)
    for i in range(1, 60):
        assert int(xp.argmax(b[i] - b[i - 1])) == int(np.argmax(h[i] - h[i - 1]))
        assert float(xp.sort(b[i])[3]) == float(np.sort(h[i])[3])
    assert not planner.decisions()[-1]["kernel"].startswith(WALK)


def test_the_walk_matches_the_cpu_device(wgpu_device: xp.Device, auto: None) -> None:
    """The same loop on the cpu device (kernels on the host) and on wgpu (walks): equal values."""
    rng = np.random.default_rng(7)
    h = rng.uniform(-3, 3, (200, 48)).astype(np.float32)
    b, c = _on_device(h, wgpu_device), xp.asarray(h, device="cpu")
    def f(a: xp.GpuArray, i: int) -> float:
        return float(xp.sum(xp.exp(a[i] * 0.5) / (1 + a[i - 1] * a[i - 1])))
    for i in range(1, 200):
        assert f(b, i) == f(c, i)
