"""``gpuarray.random``: Philox4x32-10 against its published known answers, the device's draws equal
to the host's bit for bit, the distributions by Kolmogorov-Smirnov and chi-square tests at fixed
seeds, NumPy's errors, reproducibility, fusion, and draws that a replayed plan or ``jit`` must not
repeat."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import gpuarray as xp
from gpuarray.providers.host_random import draw, philox4x32

# Random123's known-answer tests for philox4x32-10: (counter, key) -> output
KAT = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
       ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
       ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]


def _strict(device):
    return xp.config(fallback="raise")


def test_philox_known_answers():
    for ctr, key, want in KAT:
        assert philox4x32(np.array([ctr], np.uint32), key)[0].tolist() == list(want)


@pytest.mark.parametrize("dist,dtype", [("bits", "uint32"), ("bits", "uint64"), ("uniform", "float32"),
                                        ("uniform", "float64"), ("normal", "float32"), ("normal", "float64")])
@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 1023, 4099, 70001])
def test_draws_match_the_host_reference(device, dist, dtype, n):
    """Every element of every distribution as host_random lays it out (odd sizes cut the last block)."""
    rng = xp.random.default_rng(7, device=device)
    with _strict(device):
        got = np.asarray(rng._draw(dist, np.dtype(dtype), (n,)))
    want = draw(n, dist, np.dtype(dtype), rng._key, 0, 0)
    assert got.dtype == want.dtype and got.shape == (n,)
    if dist == "normal":
        np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == "float32" else 1e-14, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


def test_providers_agree_and_draws_are_reproducible():
    a = xp.random.default_rng(123, device="cpu")
    b = xp.random.default_rng(123, device="wgpu:0")
    with xp.config(fallback="raise"):
        for _ in range(2):                          # successive draws: new counters, same on both
            for name, kw in [("random", {"size": (3, 5)}), ("integers", {"low": -5, "high": 9, "size": 17}),
                             ("permutation", {"x": 11}), ("choice", {"a": 20, "size": 6, "replace": False}),
                             ("uniform", {"low": -3.0, "high": 3.0, "size": 8, "dtype": "float32"})]:
                x, y = np.asarray(getattr(a, name)(**kw)), np.asarray(getattr(b, name)(**kw))
                if name == "uniform":       # low + (high - low) u: one rounding where a driver fuses it
                    np.testing.assert_allclose(x, y, rtol=2.0 ** -23, atol=2.0 ** -21)
                else:
                    np.testing.assert_array_equal(x, y)
    c = xp.random.default_rng(123, device="cpu")
    first, second = np.asarray(c.random(100)), np.asarray(c.random(100))
    assert not np.array_equal(first, second)
    assert np.array_equal(first, np.asarray(xp.random.default_rng(123, device="cpu").random(100)))
    assert not np.array_equal(first, np.asarray(xp.random.default_rng(124, device="cpu").random(100)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_distributions(device, dtype):
    rng = xp.random.default_rng(2024, device=device)
    n = 1 << 16
    with _strict(device):
        u = np.asarray(rng.random(n, dtype=dtype))
        z = np.asarray(rng.standard_normal(n, dtype=dtype))
        e = np.asarray(rng.exponential(2.0, size=n, dtype=dtype))
        v = np.asarray(rng.uniform(-30.0, 30.0, size=n, dtype=dtype))
        w = np.asarray(rng.normal(5.0, 3.0, size=n, dtype=dtype))
    assert u.dtype == z.dtype == e.dtype == v.dtype == w.dtype == np.dtype(dtype)
    assert u.min() >= 0 and u.max() < 1 and np.isfinite(z).all() and (e >= 0).all()
    assert v.min() >= -30 and v.max() < 30
    for sample, cdf in [(u, "uniform"), (z, "norm"), (e / 2.0, "expon"), ((v + 30) / 60, "uniform"),
                        ((w - 5.0) / 3.0, "norm")]:
        assert stats.kstest(sample.astype(np.float64), cdf).pvalue > 1e-4
    # the two halves of each Box-Muller pair are independent
    assert abs(np.corrcoef(z[0::2], z[1::2])[0, 1]) < 0.02


def test_integers(device):
    rng = xp.random.default_rng(5, device=device)
    with _strict(device):
        x = np.asarray(rng.integers(0, 7, size=70000))
        assert x.dtype == np.int64 and x.min() == 0 and x.max() == 6
        counts = np.bincount(x, minlength=7)
        assert stats.chisquare(counts).pvalue > 1e-4
        y = np.asarray(rng.integers(-128, 127, size=5000, dtype=np.int8, endpoint=True))
        assert y.dtype == np.int8 and y.min() == -128 and y.max() == 127
        big = np.asarray(rng.integers(0, 2**64 - 1, size=4000, dtype=np.uint64, endpoint=True))
        assert big.dtype == np.uint64 and big.max() > 2**63          # the whole range
        assert stats.kstest(big.astype(np.float64) / 2.0**64, "uniform").pvalue > 1e-4
        neg = np.asarray(rng.integers(-(2**63), 2**63 - 1, size=4000, endpoint=True))
        assert neg.min() < -(2**61) and neg.max() > 2**61
        b = np.asarray(rng.integers(2, size=1000, dtype=bool))
        assert b.dtype == np.bool_ and 400 < b.sum() < 600
        one = np.asarray(rng.integers(3, 4, size=5))
        assert one.tolist() == [3] * 5
        assert np.asarray(rng.integers(10)).shape == ()
    with pytest.raises(ValueError, match="low >= high"):
        rng.integers(5, 5)
    with pytest.raises(ValueError, match="high is out of bounds"):
        rng.integers(0, 300, dtype=np.uint8, endpoint=True)
    with pytest.raises(ValueError, match="low is out of bounds"):
        rng.integers(-1, 3, dtype=np.uint16)
    with pytest.raises(TypeError, match="Unsupported dtype"):
        rng.integers(0, 3, dtype=np.float32)
    with pytest.raises(ValueError, match="negative dimensions"):
        rng.random(-1)
    with pytest.raises(TypeError, match="Unsupported dtype"):
        rng.random(3, dtype=np.int32)
    with pytest.raises(ValueError, match="scale < 0"):
        rng.normal(0.0, -1.0, size=3)
    with pytest.raises(ValueError, match="scale < 0"):
        rng.normal(0.0, xp.asarray([1.0, -1.0], device=device))


def test_permutation_shuffle_choice(device):
    rng = xp.random.default_rng(9, device=device)
    base = np.arange(40.0).reshape(8, 5)
    with _strict(device):
        p = np.asarray(rng.permutation(1000))
        assert sorted(p.tolist()) == list(range(1000)) and p.tolist() != list(range(1000))
        g = xp.asarray(base, device=device)
        q = np.asarray(rng.permutation(g, axis=1))
        assert sorted(q[0].tolist()) == base[0].tolist() and (q[:, :1] - q[:1, :1] == base[:, :1] - base[:1, :1]).all()
        v = g[2:]                                     # a view sees the shuffle of its base
        rng.shuffle(g)
        s = np.asarray(g)
        assert sorted(map(tuple, s.tolist())) == sorted(map(tuple, base.tolist()))
        np.testing.assert_array_equal(np.asarray(v), s[2:])
        c = np.asarray(rng.choice(10, size=(4, 3)))
        assert c.shape == (4, 3) and c.min() >= 0 and c.max() < 10
        d = np.asarray(rng.choice(xp.asarray(base, device=device), size=5, replace=False))
        assert d.shape == (5, 5) and len({tuple(r) for r in d.tolist()}) == 5
        pw = np.array([0.1, 0.0, 0.6, 0.3])
        e = np.asarray(rng.choice(4, size=40000, p=pw))
        counts = np.bincount(e, minlength=4)
        assert counts[1] == 0 and stats.chisquare(counts[[0, 2, 3]], 40000 * pw[[0, 2, 3]]).pvalue > 1e-4
        f = np.asarray(rng.choice(4, size=3, replace=False, p=pw))
        assert sorted(f.tolist()) == [0, 2, 3]
        # weighted sampling without replacement: the first pick's distribution is p
        firsts = np.array([int(np.asarray(rng.choice(4, size=2, replace=False, p=pw))[0]) for _ in range(300)])
        assert (firsts != 1).all() and 130 < (firsts == 2).sum() < 230
    with pytest.raises(ValueError, match="larger sample than population"):
        rng.choice(3, size=4, replace=False)
    with pytest.raises(ValueError, match="do not sum to 1"):
        rng.choice(3, size=2, p=[0.5, 0.2, 0.2])
    with pytest.raises(ValueError, match="non-negative"):
        rng.choice(3, size=2, p=[1.5, -0.5, 0.0])
    with pytest.raises(ValueError, match="Fewer non-zero entries"):
        rng.choice(4, size=4, replace=False, p=pw)


def test_draws_fuse_and_are_never_replayed(wgpu_device):
    """``rng.random(n) * 2 - 1`` is the draw and one fused kernel; a loop of the same expression and a
    ``jit`` function that draws give new numbers each time (the plan is reused, the counter is not)."""
    rng = xp.random.default_rng(0, device=wgpu_device)
    with xp.config(fallback="raise"):
        xp.evaluate(rng.random(1024) * 2 - 1)
        xp.reset_metrics()
        r = rng.random(1024) * 2 - 1
        xp.evaluate(r)
        assert xp.metrics()["dispatches"] == 2
        seen = {tuple(np.asarray(rng.random(64) * 2 - 1)[:4].tolist()) for _ in range(4)}
        assert len(seen) == 4

        @xp.jit
        def noisy(x):
            return x + rng.standard_normal(x.shape, dtype=x.dtype)
        x = xp.zeros(16, dtype=xp.float32, device=wgpu_device)
        outs = [np.asarray(noisy(x)) for _ in range(3)]
        assert not np.array_equal(outs[0], outs[1]) and not np.array_equal(outs[1], outs[2])


def test_large_draw_crosses_the_workgroup_limit(wgpu_device):
    """More than 65535 x 256 blocks: a 2-D dispatch (GPU adapters; lavapipe draws a smaller one)."""
    cpu = str(wgpu_device.provider.adapter.info.get("adapter_type")) == "CPU"
    n = (1 << 22) + 3 if cpu else 65535 * 256 * 4 + 4099
    rng = xp.random.default_rng(11, device=wgpu_device)
    with xp.config(fallback="raise"):
        u = rng.random(n, dtype="float32")
        tail = np.asarray(u[-5000:])
        head = np.asarray(u[:5000])
    want = draw(n, "uniform", np.dtype("float32"), rng._key, 0, 0)
    np.testing.assert_array_equal(tail, want[-5000:])
    np.testing.assert_array_equal(head, want[:5000])
