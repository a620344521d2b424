"""bincount, histogram, histogram2d and add.at (the ``scatter_add`` kind) against NumPy on both providers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.interop.adapters import counting as adapter
from gpuarray.namespace.statistical import extremes_array

from .conftest import assert_same


def _g(a: np.ndarray, device: xp.Device) -> xp.GpuArray:
    return xp.asarray(a, device=device)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "bool"])
def test_bincount_dtypes(device, dtype):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2 if dtype == "bool" else 40, 1000).astype(dtype)
    assert_same(np.bincount(_g(x, device)), np.bincount(x))
    assert_same(np.bincount(_g(x, device), minlength=100), np.bincount(x, minlength=100))


def test_bincount_empty_minlength(device):
    e = np.array([], dtype=np.int64)
    assert_same(np.bincount(_g(e, device)), np.bincount(e))
    assert_same(np.bincount(_g(e, device), minlength=5), np.bincount(e, minlength=5))
    w = np.array([], dtype=np.float64)
    assert_same(np.bincount(_g(e, device), weights=_g(w, device), minlength=3), np.bincount(e, weights=w, minlength=3))


@pytest.mark.parametrize("wdtype", ["float32", "float64", "int32", "int64"])
def test_bincount_weights(device, wdtype):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 50, 5000)
    w = (rng.standard_normal(5000) * 10).astype(wdtype)
    want = np.bincount(x, weights=w)
    got = np.bincount(_g(x, device), weights=_g(w, device))
    # float64 on the device: a fixed tree of sums (not NumPy's sequential order); exact for integers
    assert_same(got, want, rtol=1e-12 if wdtype.startswith("float") else 0, atol=1e-9)
    assert_same(np.bincount(_g(x, device), weights=w), want, rtol=1e-12, atol=1e-9)


def test_bincount_errors(device):
    with pytest.raises(ValueError, match="negative"):
        np.bincount(_g(np.array([0, 3, -1, 2]), device))
    with pytest.raises(ValueError, match="minlength"):
        np.bincount(_g(np.array([0, 3]), device), minlength=-1)
    with pytest.raises(ValueError, match="same length"):
        np.bincount(_g(np.array([0, 3]), device), weights=_g(np.ones(3), device))
    with pytest.raises(TypeError), xp.config(fallback="silent"):        # NumPy's own error, on the host
        np.bincount(_g(np.array([0.5]), device))


def test_bincount_many_bins_and_values(device):
    rng = np.random.default_rng(3)
    # > 65535 bins: one global atomic per element
    x = rng.integers(0, 200_000, 300_000)
    assert_same(np.bincount(_g(x, device)), np.bincount(x))
    # few bins, many values: the privatized workgroup-memory bins (several workgroups, K > 4 per thread)
    y = rng.integers(0, 1000, (1 << 18) + 7).astype(np.int32)
    assert_same(np.bincount(_g(y, device)), np.bincount(y))
    w = rng.random(y.size).astype(np.float32)
    assert_same(np.bincount(_g(y, device), weights=_g(w, device)), np.bincount(y, weights=w), rtol=1e-10)


def test_contention_float32_int64(device):
    """Many adds to one bin: the float32 compare-exchange loop and the int64 carries under contention,
    through the workgroup-memory bins (few bins) and the global atomics (many bins)."""
    rng = np.random.default_rng(12)
    n = 100_000
    idx = np.where(rng.random(n) < 0.9, 3, rng.integers(0, 10, n))
    v = rng.random(n).astype(np.float32)
    for size in (10, 70_000):
        _add_at_check(device, np.zeros(size, np.float32), idx, v, rtol=1e-4)
        _add_at_check(device, np.zeros(size, np.int64), idx, rng.integers(-2**40, 2**40, n))


def test_bincount_past_65535_workgroups(wgpu_device):
    """2**24 + 1000 elements with many bins: one thread each, a 2-D grid of workgroups (~2 s on lavapipe)."""
    rng = np.random.default_rng(13)
    x = rng.integers(0, 100_000, (1 << 24) + 1000).astype(np.int32)
    assert_same(np.bincount(_g(x, wgpu_device)), np.bincount(x))


def test_bincount_float64_levels(device):
    """Float64 weights over long runs: several levels of the segmented sum, deterministic."""
    rng = np.random.default_rng(4)
    x = np.sort(rng.integers(0, 3, 200_000))[::-1].copy()
    x[:10] = 7
    w = rng.standard_normal(x.size)
    got = np.bincount(_g(x, device), weights=_g(w, device))
    assert_same(got, np.bincount(x, weights=w), rtol=1e-11, atol=1e-11)
    again = np.bincount(_g(x, device), weights=_g(w, device))
    np.testing.assert_array_equal(np.asarray(again), np.asarray(got))


def _add_at_check(device, a, idx, b, **tol):
    want = a.copy()
    np.add.at(want, idx, b)
    g = _g(a, device)
    gidx = tuple(_g(np.asarray(i), device) for i in idx) if isinstance(idx, tuple) else _g(np.asarray(idx), device)
    gb = _g(b, device) if isinstance(b, np.ndarray) else b
    assert np.add.at(g, gidx, gb) is None
    assert_same(g, want, **tol)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "uint32", "int64", "uint64",
                                   "float32", "float64", "bool"])
def test_add_at_dtypes_duplicates(device, dtype):
    rng = np.random.default_rng(5)
    a = (rng.integers(0, 2, 64) if dtype == "bool" else rng.integers(0, 100, 64)).astype(dtype)
    idx = rng.integers(-64, 64, 3000)          # duplicates, negative indices wrap
    b = (rng.integers(0, 2, 3000) if dtype == "bool" else rng.integers(-50, 50, 3000)).astype(dtype)
    tol = {"rtol": 1e-5} if dtype == "float32" else {"rtol": 1e-12} if dtype == "float64" else {}
    _add_at_check(device, a, idx, b, **tol)
    _add_at_check(device, a, idx, dtype == "bool" or 3, **{})        # a scalar value


def test_add_at_int64_carries(device):
    """64-bit sums through two 32-bit words: carries out of the low word, negative addends."""
    a = np.array([2**32 - 1, -(2**40), 2**62, 0], dtype=np.int64)
    idx = np.array([0, 0, 1, 1, 2, 3, 3, 3] * 50)
    b = np.array([1, 2**32 - 1, -1, -(2**33) + 5, -(2**61), 2**31, 2**31, -3] * 50, dtype=np.int64)
    _add_at_check(device, a, idx, b)
    u = np.array([2**32 - 1, 2**63, 5], dtype=np.uint64)
    _add_at_check(device, u, np.array([0, 0, 1, 2, 2]), np.array([1, 2**32 + 7, 2**63, 2**64 - 1, 9], dtype=np.uint64))


def test_add_at_nd_and_errors(device):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((5, 4, 3))
    _add_at_check(device, a, np.array([0, 4, 4, -1]), rng.standard_normal((4, 4, 3)), rtol=1e-12)
    _add_at_check(device, a, (np.array([0, 1, 1]), np.array([3, 3, -4])), 1.0, rtol=1e-12)
    _add_at_check(device, a.astype(np.float32), 2, np.float32(0.5), rtol=1e-6)
    g = _g(np.zeros(3), device)
    with pytest.raises(IndexError, match="out of bounds"):
        np.add.at(g, _g(np.array([0, 3]), device), 1.0)
    with pytest.raises(IndexError, match="out of bounds"):
        np.add.at(g, [-4], 1.0)
    np.testing.assert_array_equal(np.asarray(g), np.zeros(3))


def test_add_at_view_writes_through(device):
    base = np.zeros((4, 6), dtype=np.float32)
    g = _g(base, device)
    v = g[1]
    np.add.at(v, [0, 0, 5], np.float32(2.0))
    base[1, 0], base[1, 5] = 4.0, 2.0
    assert_same(g, base)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8"])
def test_histogram_uniform(device, dtype):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(20_000) * 30).astype(dtype) if dtype.startswith("float") else \
        rng.integers(0, 200, 20_000).astype(dtype)
    for bins in (1, 7, 64, 5000):
        h, e = np.histogram(_g(a, device), bins=bins)
        wh, we = np.histogram(a, bins=bins)
        assert_same(h, wh)
        assert_same(e, we)
    h, e = np.histogram(_g(a, device), bins=13, range=(-5, 100.5))
    wh, we = np.histogram(a, bins=13, range=(-5, 100.5))
    assert_same(h, wh)
    assert_same(e, we)


def test_histogram_edges_nan_inf(device):
    # values on every edge, the right edge inclusive on the last bin, NaN and inf outside the range
    a = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.0, -0.0, np.nan, np.inf, -np.inf, 1.0000001, -1e-300, 0.1, 0.3])
    for bins, rng_ in ((4, (0.0, 1.0)), (3, (0.0, 1.0)), (10, (0.1, 0.7)), (1, (1.0, 1.0))):
        h, e = np.histogram(_g(a, device), bins=bins, range=rng_)
        wh, we = np.histogram(a, bins=bins, range=rng_)
        assert_same(h, wh)
        assert_same(e, we)
    a32 = np.linspace(-1, 1, 1001, dtype=np.float32)
    assert_same(np.histogram(_g(a32, device), bins=10)[0], np.histogram(a32, bins=10)[0])
    assert_same(np.histogram(_g(a32, device), bins=7, range=(-0.3, 0.9))[0],
                np.histogram(a32, bins=7, range=(-0.3, 0.9))[0])
    with pytest.raises(ValueError, match="not finite"):
        np.histogram(_g(a, device))
    with pytest.raises(ValueError, match="larger than min"):
        np.histogram(_g(a, device), range=(1, 0))
    with pytest.raises(ValueError, match="positive"):
        np.histogram(_g(a, device), bins=0, range=(0, 1))


def test_histogram_empty_constant(device):
    e = np.array([], dtype=np.float32)
    for got, want in zip(np.histogram(_g(e, device)), np.histogram(e)):
        assert_same(got, want)
    c = np.full(10, 5, dtype=np.int64)
    for got, want in zip(np.histogram(_g(c, device), bins=4), np.histogram(c, bins=4)):
        assert_same(got, want)


def test_histogram_weights_density(device):
    rng = np.random.default_rng(8)
    a = rng.standard_normal(3000)
    for wd in ("float64", "float32", "int64"):
        w = (rng.random(3000) * 10).astype(wd)
        h, _ = np.histogram(_g(a, device), bins=20, weights=_g(w, device))
        assert_same(h, np.histogram(a, bins=20, weights=w)[0], rtol=1e-6 if wd == "float32" else 1e-12)
    h, e = np.histogram(_g(a, device), bins=15, range=(-2, 2), density=True)
    wh, we = np.histogram(a, bins=15, range=(-2, 2), density=True)
    assert_same(h, wh, rtol=1e-14)


def test_histogram_explicit_edges(device):
    rng = np.random.default_rng(9)
    a = np.concatenate([rng.standard_normal(4000), [np.nan, np.inf, -1.0, 0.0, 0.5, 2.0, 3.0]])
    for edges in ([-1.0, 0.0, 0.5, 2.0], [-3.0, 0.0, 0.0, 1.0, 3.0], [0.0, 2.0, 2.0]):
        ed = np.array(edges)
        h, e = np.histogram(_g(a, device), bins=ed)
        assert_same(h, np.histogram(a, bins=ed)[0])
        assert_same(e, ed)
        h, _ = np.histogram(_g(a, device), bins=_g(ed, device), density=True)
        with np.errstate(all="ignore"):
            assert_same(h, np.histogram(a, bins=ed, density=True)[0], rtol=1e-12)
    with pytest.raises(ValueError, match="monotonically"):
        np.histogram(_g(a, device), bins=_g(np.array([0.0, 2.0, 1.0]), device))


def test_histogram2d(device):
    rng = np.random.default_rng(10)
    x, y = rng.standard_normal(5000), rng.random(5000) * 4
    for kw in ({"bins": 10}, {"bins": (3, 7)}, {"bins": 5, "range": [[-1, 1], [0, 2]]}):
        got = np.histogram2d(_g(x, device), _g(y, device), **kw)
        want = np.histogram2d(x, y, **kw)
        for g, w in zip(got, want):
            assert_same(g, w)


def test_no_host_fallbacks_on_wgpu(wgpu_device):
    rng = np.random.default_rng(11)
    x = _g(rng.integers(0, 30, 10_000), wgpu_device)
    w = _g(rng.random(10_000), wgpu_device)
    f = _g(rng.standard_normal(10_000).astype(np.float32), wgpu_device)
    with xp.config(offload="always"):
        before = xp.metrics()["host_fallbacks"]
        for r in (np.bincount(x), np.bincount(x, weights=w), np.histogram(f, bins=30)[0],
                  np.histogram(f, bins=_g(np.array([-1.0, 0.0, 2.0]), wgpu_device))[0],
                  np.histogram(f, bins=10, weights=w)[0], np.histogram2d(f, f, bins=4)[0]):
            np.asarray(r)
        a = xp.zeros(30, dtype="float32", device=wgpu_device)
        np.add.at(a, x, f)
        d = xp.zeros(30, dtype="float64", device=wgpu_device)
        np.add.at(d, x, w)
        np.asarray(a), np.asarray(d)
        assert xp.metrics()["host_fallbacks"] == before


def test_counting_mode_private_bins(device):
    """The privatized counting mode (an integer sum of one constant: 32-bit workgroup counts, then
    ``count * value`` per bin): up to 4096 bins fit whatever the output's width, ``K`` not a
    multiple of the unrolled loads, constants other than 1 (negative, past 32 bits) wrapping as NumPy's."""
    rng = np.random.default_rng(21)
    n = 256 * 1024 * 4 + 777                       # K = 5 elements a thread: a partial unrolled step
    for bins in (4096, 4097, 3000):
        x = rng.integers(0, bins, n).astype(np.int32)
        assert_same(np.bincount(_g(x, device), minlength=bins), np.bincount(x, minlength=bins))
    for bins in (10, 1000, 2048):                  # 8, 4, 2 copies of the bins; one popular bin
        x = np.where(rng.random(300_000) < 0.9, 3, rng.integers(0, bins, 300_000))
        assert_same(np.bincount(_g(x, device), minlength=bins), np.bincount(x, minlength=bins))
    x = rng.integers(0, 50, 5000)
    for dtype, value in (("int64", -3), ("int64", 2**40 + 7), ("uint64", 2**63 + 5), ("int32", -7),
                         ("uint32", 2**31 + 3), ("int8", 100), ("uint16", 65535)):
        want = np.zeros(50, dtype)
        np.add.at(want, x, np.asarray(value).astype(dtype))
        g = xp.zeros(50, dtype=dtype, device=device)
        np.add.at(g, _g(x, device), np.asarray(value).astype(dtype)[()])
        assert_same(g, want)


def test_histogram_private_edges_out_of_range(device):
    """Many values through the counting mode: values on every edge (the last bin closed), outside
    the range, NaN and infinities dropped; weights and density through the weighted pass."""
    edges = np.linspace(-2.0, 2.0, 101)
    a = np.concatenate([np.repeat(edges, 300), [np.nan] * 50, [np.inf, -np.inf, 2.0000001, -2.5] * 40,
                        np.random.default_rng(22).uniform(-3, 3, 100_000)])
    for dt in (np.float64, np.float32):
        ad = a.astype(dt)
        for kw in ({"range": (-2.0, 2.0)}, {"range": (-1.0, 1.5)}):
            h, e = np.histogram(_g(ad, device), bins=100, **kw)
            wh, we = np.histogram(ad, bins=100, **kw)
            assert_same(h, wh)
            assert_same(e, we)
    w = np.random.default_rng(23).integers(-5, 6, a.size)
    h, _e = np.histogram(_g(a, device), bins=100, range=(-2.0, 2.0), weights=_g(w, device))
    assert_same(h, np.histogram(a, bins=100, range=(-2.0, 2.0), weights=w)[0])
    h, _e = np.histogram(_g(a, device), bins=100, range=(-2.0, 2.0), density=True)
    assert_same(h, np.histogram(a, bins=100, range=(-2.0, 2.0), density=True)[0], rtol=1e-12)


# ------------------------------------------------ the extremes kernel and what each call costs

@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                                   "float32", "float64", "bool"])
def test_extremes_one_read(device, dtype):
    """``[min, max]`` in one kernel, one pass (up to 16384 elements) or two, the extremes anywhere
    (first, last, the second pass's last workgroup); NaN propagates as in NumPy's min / max."""
    rng = np.random.default_rng(31)
    for n in (1, 3, 16384, 16385, 300_001):
        if dtype == "bool":
            x = rng.random(n) < 0.5
        elif dtype.startswith("float"):
            x = (rng.standard_normal(n) * 100).astype(dtype)
        else:
            info = np.iinfo(dtype)
            x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        for pos in {0, n - 1, n // 2}:
            y = x.copy()
            if dtype != "bool":
                y[pos] = np.iinfo(dtype).max if dtype[0] in "iu" else np.inf
            got = np.asarray(extremes_array(_g(y, device)))
            want = np.array([y.min(), y.max()]).astype("uint8" if dtype == "bool" else dtype)
            assert_same(got, want)
    if dtype.startswith("float"):
        y = x.copy()
        y[-1] = np.nan
        assert np.isnan(np.asarray(extremes_array(_g(y, device)))).all()
        z = np.array([-0.0, 0.0, -5.5, np.inf, -np.inf], dtype=dtype)
        assert_same(np.asarray(extremes_array(_g(z, device))), np.array([-np.inf, np.inf], dtype=dtype))


def test_extremes_of_an_expression(device):
    """The operand's fused prologue (a view and arithmetic) evaluated inside the kernel."""
    x = np.arange(-50_000, 50_000, dtype=np.int64).reshape(400, 250)
    g = _g(x, device)
    got = np.asarray(extremes_array((g[::3, 1:] * 3 - 7).T))
    v = (x[::3, 1:] * 3 - 7).T
    assert_same(got, np.array([v.min(), v.max()]))
    with pytest.raises(ValueError, match="zero-size"):
        extremes_array(_g(np.zeros(0, np.int32), device))


def test_bincount_negative_anywhere_raises(device):
    for n, pos in ((10, 9), (20_000, 19_999), (300_000, 123_457)):
        x = np.arange(n) % 7
        x[pos] = -1
        with pytest.raises(ValueError, match="negative"):
            np.bincount(_g(x, device))
        x[pos] = 10**6 + 3             # the largest value anywhere sets the length
        assert_same(np.bincount(_g(x, device), minlength=5), np.bincount(x, minlength=5))
    u = np.array([1, 2**63 + 5, 3], dtype=np.uint64)     # negative once cast to int64, as NumPy casts
    with pytest.raises(ValueError, match="negative"):
        np.bincount(u)
    with pytest.raises(ValueError, match="negative"):
        np.bincount(_g(u, device))


def _per_call(fn: Any, dev: xp.Device) -> dict[str, int]:
    """The metrics of the second of two calls of ``fn`` (the first compiles and uploads what is
    kept), and ``reads``: the provider's downloads (host waits for data) during it; the result's
    own read excluded."""
    prov: Any = dev.provider
    reads = [0]
    real = prov.download

    def counted(*args: Any, **kw: Any) -> Any:
        reads[0] += 1
        return real(*args, **kw)

    with xp.config(offload="always"):
        xp.evaluate(fn())
        xp.synchronize(dev)
        xp.reset_metrics()
        prov.download = counted
        try:
            r = fn()
            xp.evaluate(r)
        finally:
            del prov.download
        m = xp.metrics()
        np.asarray(r)
    return {**m, "reads": reads[0]}


def test_bincount_histogram_reads_dispatches_uploads(wgpu_device):
    """What one call costs on wgpu: bincount one read of (min, max) (16 bytes of int64), one
    extremes kernel (two dispatches past 16384 elements) and the scatter-add's two dispatches;
    histogram with a range or explicit host edges no read, no upload and two or three dispatches;
    with the data's range one read of its (min, max); never a host fallback."""
    rng = np.random.default_rng(32)
    n = 1 << 16
    xi = _g(rng.integers(0, 1000, n), wgpu_device)
    x32 = _g(rng.integers(0, 1000, n).astype(np.int32), wgpu_device)
    xs = _g(rng.integers(0, 1000, 5000), wgpu_device)
    f = _g(rng.uniform(-3, 3, n).astype(np.float32), wgpu_device)
    d = _g(rng.uniform(-3, 3, n), wgpu_device)
    edges = np.linspace(-3, 3, 41)
    cases = [  # (call, bytes read, dispatches)
        (lambda: np.bincount(xi), 16, 4),
        (lambda: np.bincount(xi, minlength=2000), 16, 4),
        (lambda: np.bincount(x32), 8, 4),
        (lambda: np.bincount(xs), 16, 3),
        (lambda: np.histogram(f, 100, range=(-3, 3))[0], 0, 2),
        (lambda: np.histogram(d, 100, range=(-3.0, 3.0))[0], 0, 2),
        (lambda: np.histogram(f, 100)[0], 8, 4),
        (lambda: np.histogram(d, 4000)[0], 16, 4),
        (lambda: np.histogram(f, edges)[0], 0, 3),
        (lambda: np.histogram(f, 50, range=(-2, 2), density=True)[0], 0, None),
    ]
    for fn, read, dispatches in cases:
        m = _per_call(fn, wgpu_device)
        assert m["bytes_downloaded"] == read and m["reads"] == (1 if read else 0), m
        assert m["bytes_uploaded"] == 0 and m["host_fallbacks"] == 0 and m["host_kernels"] == 0, m
        if dispatches is not None:
            assert m["dispatches"] == dispatches, m


def test_histogram_kept_edges_are_not_shared(device):
    """The edges handed back are the caller's own: writing into them changes no later histogram."""
    a = np.linspace(0, 1, 1000)
    h1, e1 = np.histogram(_g(a, device), 10, range=(0, 1))
    e1[3] = 100.0
    h2, e2 = np.histogram(_g(a, device), 10, range=(0, 1))
    wh, we = np.histogram(a, 10, range=(0, 1))
    assert_same(h2, wh)
    assert_same(e2, we)
    b = np.array([0.0, 0.3, 0.5, 1.0])
    _h, eb = np.histogram(_g(a, device), b)
    eb[1] = 0.9
    assert_same(np.histogram(_g(a, device), b)[0], np.histogram(a, b)[0])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_histogram_integer_dtypes(device, dtype):
    """Integer data: the data's range (values on the edges), a range, a range past the dtype's."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(33)
    a = rng.integers(max(info.min, -1000), min(info.max, 1000), 20_000, dtype=dtype, endpoint=True)
    for kw in ({"bins": 10}, {"bins": 7, "range": (-3, 250)}, {"bins": 3, "range": (0, 2**40)}):
        for got, want in zip(np.histogram(_g(a, device), **kw), np.histogram(a, **kw)):
            assert_same(got, want)
    e = np.array([], dtype=dtype)
    for got, want in zip(np.histogram(_g(e, device), bins=4), np.histogram(e, bins=4)):
        assert_same(got, want)


def test_histogram_bool_as_numpy(device):
    """bool data: NumPy's warning, then counted as uint8 (on the device)."""
    a = np.array([True, False, True, True])
    for kw in ({}, {"bins": 3, "range": (0, 2)}):
        with pytest.warns(RuntimeWarning, match="bool"):
            want = np.histogram(a, **kw)
        with pytest.warns(RuntimeWarning, match="bool"):
            got = np.histogram(_g(a, device), **kw)
        for gv, wv in zip(got, want):
            assert_same(gv, wv)


def test_add_at_mixed_index_dtypes(device):
    """Index arrays of several dtypes: one read of their extremes; uint64 past int64 is out of bounds."""
    a = np.zeros((4, 5), dtype=np.int64)
    i0, i1 = np.array([0, 3, 3], dtype=np.uint8), np.array([-1, 4, 0], dtype=np.int64)
    np.add.at(a, (i0, i1), 2)
    g = xp.zeros((4, 5), dtype="int64", device=device)
    np.add.at(g, (_g(i0, device), _g(i1, device)), 2)
    assert_same(g, a)
    big = np.array([1, 2**63 + 1], dtype=np.uint64)
    with pytest.raises(IndexError, match="out of bounds"):
        np.add.at(g, (_g(big, device), _g(np.array([0, 1]), device)), 1)


def test_histogram2d_one_read_and_float32_last_edge(device):
    """The data's ranges of both coordinates in one read; a float32 value equal to the last edge
    in float32 but not in float64 is outside, as NumPy compares in float64."""
    rng = np.random.default_rng(34)
    x = rng.random(3000).astype(np.float32)
    y = rng.random(3000).astype(np.float32)
    x[:5] = np.float32(0.7)
    for kw in ({"bins": 6}, {"bins": (4, 5), "range": [[0.1, 0.7], [0.0, 0.9]]}):
        got = np.histogram2d(_g(x, device), _g(y, device), **kw)
        want = np.histogram2d(x, y, **kw)
        for gv, wv in zip(got, want):
            assert_same(gv, wv)
    if device.kind == "wgpu":
        m = _per_call(lambda: np.histogram2d(_g(x, device), _g(y, device), bins=6)[0], device)
        assert m["bytes_downloaded"] == 16 and m["reads"] == 1 and m["host_fallbacks"] == 0, m


def test_scalar_values_made_narrow_or_not(device):
    """A scalar value of a 64-bit sum is a 32-bit parameter where one holds it exactly (0.5, -3,
    2**31 - 1), else a 64-bit constant (0.1, 2**40, 1e300); both sum as NumPy does."""
    x = np.array([0, 2, 2, 5, 2])
    for dtype, value in (("float64", 0.5), ("float64", 0.1), ("float64", 1e300), ("float64", np.nan),
                         ("float64", -0.0), ("int64", -3), ("int64", 2**31 - 1), ("int64", 2**40),
                         ("uint64", 2**32 - 1), ("uint64", 2**32)):
        want = np.zeros(6, dtype)
        np.add.at(want, x, value)
        g = xp.zeros(6, dtype=dtype, device=device)
        np.add.at(g, _g(x, device), value)
        assert_same(g, want)


def test_histogram_many_bins_not_kept(device, monkeypatch):
    """Edges past ``KEPT_BYTES`` are not kept on the device (uploaded for the call); same results."""
    monkeypatch.setattr(adapter, "KEPT_BYTES", 64)
    a = np.random.default_rng(35).uniform(-1, 1, 5000)
    for got, want in zip(np.histogram(_g(a, device), 50, range=(-1.5, 1.0)), np.histogram(a, 50, range=(-1.5, 1.0))):
        assert_same(got, want)
    e = np.linspace(-1.5, 1.0, 51)
    assert (device.name, e.dtype.str, e.shape, e.tobytes()) not in adapter._KEPT
