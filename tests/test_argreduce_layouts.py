"""argmax / argmin over the leading axes (``argmax(x, axis=0)``) take a thread per output and chunk of rows
on the wgpu provider (``wgpu_argreduce._enqueue_cols``); and a chunk thread of a flat or later-axis walk
loads several elements before comparing them (``wgsl_argreduce._unrolled_walk``). NumPy's indices on both
providers: the first occurrence of ties, the first NaN, a fused prologue, one chunk and many."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp


@pytest.mark.parametrize("shape", [(300, 7000), (70000, 300), (5, 3000), (2, 700), (64, 257), (40, 30, 500),
                                   (20000, 64), (3000, 33)])
@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "bool"])
def test_argmax_over_the_first_axis(device: xp.Device, shape: tuple[int, ...], dt: str) -> None:
    if dt == "float64" and not device.supports("float64"):
        pytest.skip("no float64 on this adapter")
    rng = np.random.default_rng(sum(shape))
    h = (rng.uniform(-3, 3, shape) > 2) if dt == "bool" else rng.integers(-4, 4, shape).astype(dt)
    if dt.startswith("float"):
        h.reshape(-1)[rng.integers(0, h.size, 40)] = np.nan
    x = xp.asarray(h, device=device)
    with xp.config(offload="always"):
        for op in ("argmax", "argmin"):
            np.testing.assert_array_equal(np.asarray(getattr(xp, op)(x, axis=0)), getattr(np, op)(h, axis=0))
        if dt != "bool":
            np.testing.assert_array_equal(np.asarray(xp.argmax(x * 2 - 1, axis=0)), np.argmax(h * 2 - 1, axis=0))


@pytest.mark.parametrize("n", [1, 3, 1000, 70001, 1 << 20])
def test_flat_argmax_ties_and_nans(device: xp.Device, n: int) -> None:
    rng = np.random.default_rng(n)
    h = rng.integers(-5, 5, n).astype(np.float32)
    x = xp.asarray(h, device=device)
    with xp.config(offload="always"):
        assert int(xp.argmax(x)) == np.argmax(h) and int(xp.argmin(x)) == np.argmin(h)
        if n > 3:
            h[[n // 3, n // 2]] = np.nan
            x = xp.asarray(h, device=device)
            assert int(xp.argmax(x)) == n // 3 == int(xp.argmin(xp.exp(x)))
