"""Stream compaction (nonzero, flatnonzero, argwhere, x[mask], x[mask] = v, compress, extract) and the
max / min scans (maximum.accumulate ...) against NumPy on both providers: special values, empty and 0-d
arrays, 1-D to 4-D, masks from expressions, sizes that take the multi-level paths; on wgpu no host
fallback and only the count read back."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.namespace import searching_sorted
from gpuarray.providers import wgpu_scan

from .conftest import assert_same

SHAPES = [(7,), (3, 5), (2, 3, 4), (2, 1, 3, 5)]
DTYPES = ["bool", "uint8", "int16", "int32", "int64", "uint64", "float32", "float64", "complex64"]


def _mask_data(dtype: str, shape: tuple[int, ...], seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) > 0.5
    a = rng.integers(-2, 3, shape) * (rng.random(shape) > 0.4)
    if dt.kind == "c":
        return (a + 1j * rng.integers(0, 2, shape) * (a == 0)).astype(dt)
    if dt.kind == "u":
        a = np.abs(a)
    return a.astype(dt)


def _special(dtype: str) -> np.ndarray:
    """NaN is non-zero, -0.0 is zero."""
    return np.array([0.0, -0.0, np.nan, 1.0, -np.inf, 0.0, -0.0, 2.5], dtype=dtype)


# ---------------------------------------------------------------- nonzero and friends

@pytest.mark.parametrize("dtype,shape", [(d, (2, 3, 4)) for d in DTYPES] +
                         [(d, s) for d in ("bool", "float32") for s in SHAPES if s != (2, 3, 4)])
def test_nonzero_matches_numpy(device, dtype, shape):
    a = _mask_data(dtype, shape)
    g = xp.asarray(a, device=device)
    got = xp.nonzero(g)
    want = np.nonzero(a)
    assert len(got) == len(want)
    for gi, wi in zip(got, want):
        assert_same(gi, wi.astype(np.int64))
    for gi, wi in zip(np.nonzero(g), want):
        assert_same(gi, wi.astype(np.int64))
    assert_same(np.flatnonzero(g), np.flatnonzero(a).astype(np.int64))
    assert_same(np.argwhere(g), np.argwhere(a).astype(np.int64))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nonzero_nan_and_negative_zero(device, dtype):
    a = _special(dtype)
    g = xp.asarray(a, device=device)
    assert_same(xp.nonzero(g)[0], np.nonzero(a)[0].astype(np.int64))
    assert_same(g[g != 0], a[a != 0])
    assert_same(g[g.astype(xp.bool)], a[a.astype(bool)])
    assert_same(np.extract(g, g), np.extract(a, a))
    m = a.reshape(2, 4)
    for gi, wi in zip(xp.nonzero(xp.asarray(m, device=device)), np.nonzero(m)):
        assert_same(gi, wi.astype(np.int64))


@pytest.mark.parametrize("fill", [False, True])
@pytest.mark.parametrize("shape", [(5,), (4, 6), (2, 3, 2, 2)])
def test_nonzero_all_false_all_true(device, fill, shape):
    a = np.full(shape, fill)
    g = xp.asarray(a, device=device)
    for gi, wi in zip(xp.nonzero(g), np.nonzero(a)):
        assert_same(gi, wi.astype(np.int64))
    x = np.arange(a.size, dtype=np.float32).reshape(shape)
    gx = xp.asarray(x, device=device)
    assert_same(gx[g], x[a])
    assert_same(np.argwhere(g), np.argwhere(a).astype(np.int64))


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 2, 4)])
def test_nonzero_empty(device, shape):
    a = np.zeros(shape, dtype=np.float32)
    g = xp.asarray(a, device=device)
    got = xp.nonzero(g)
    assert len(got) == len(shape)
    for gi, wi in zip(got, np.nonzero(a)):
        assert_same(gi, wi.astype(np.int64))
    assert_same(g[g > 0], a[a > 0])
    assert_same(np.argwhere(g), np.argwhere(a).astype(np.int64))
    assert_same(np.flatnonzero(g), np.flatnonzero(a).astype(np.int64))


def test_nonzero_zero_d(device):
    g = xp.asarray(np.float32(1.0), device=device)
    with pytest.raises(ValueError, match="at least one dimension"):
        xp.nonzero(g)
    with pytest.raises(ValueError, match="nonzero on 0d arrays"):
        np.nonzero(g)
    with pytest.raises(ValueError, match="at least one dimension"):
        searching_sorted.argwhere(g)
    for v in (0.0, 2.0):          # NumPy's own (shape (1, 0) or (0, 0)), on the host
        with xp.config(fallback="silent"):
            assert_same(np.argwhere(xp.asarray(np.float32(v), device=device)),
                        np.argwhere(np.float32(v)))


# ---------------------------------------------------------------- boolean-mask reads and writes

def _xy(shape: tuple[int, ...], seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32) + 1


@pytest.mark.parametrize("shape", SHAPES)
def test_mask_reads_from_expressions(device, shape):
    x, y = _xy(shape)
    gx, gy = xp.asarray(x, device=device), xp.asarray(y, device=device)
    assert_same(gx[gx > 0], x[x > 0])
    assert_same(gx[(gx > 0) & (gy < 1)], x[(x > 0) & (y < 1)])
    assert_same((gx * 2 + gy)[gx * gy < 0.5], (x * 2 + y)[x * y < 0.5])
    ix = (x * 10).astype(np.int32)
    gi = xp.asarray(ix, device=device)
    assert_same(gi[gi % 3 == 1], ix[ix % 3 == 1])


def test_mask_reads_complex_and_bool_values(device):
    x, y = _xy((4, 5))
    c = (x + 1j * y).astype(np.complex64)
    gc = xp.asarray(c, device=device)
    assert_same(gc[gc.real > 0], c[c.real > 0])
    b = x > 0
    gb = xp.asarray(b, device=device)
    assert_same(gb[xp.asarray(y > 1, device=device)], b[y > 1])


def test_mask_reads_partial_and_mixed(device):
    x, y = _xy((3, 4, 5))
    gx = xp.asarray(x, device=device)
    m2 = x[:, :, 0] > 0                         # a mask over the leading axes: coordinates + gather
    gm2 = gx[:, :, 0] > 0
    assert_same(gx[gm2], x[m2])
    assert_same(gx[gm2, 1:3], x[m2, 1:3])
    m1 = x[0, :, 0] > 0
    gm1 = gx[0, :, 0] > 0
    assert_same(gx[:, gm1], x[:, m1])
    assert_same(gx[1:, gm1, ::2], x[1:, m1, ::2])
    assert_same(gx[..., gx[0, 0] > 0], x[..., x[0, 0] > 0])
    mk = x[:, 0, 0] > -10                       # all true, with an integer array: broadcast together
    assert_same(gx[xp.asarray(mk, device=device), :, [0, 2, 1]], x[mk, :, [0, 2, 1]])


@pytest.mark.parametrize("shape", SHAPES)
def test_mask_writes(device, shape):
    x, y = _xy(shape)
    m = x > 0
    gx = xp.asarray(x, device=device)
    gm = gx > 0
    want = x.copy()
    want[m] = y[m] * 3
    gv = xp.asarray(y, device=device)[gm] * 3
    gx[gm] = gv
    assert_same(gx, want)
    gx[gx > 1] = 0.5                            # a scalar: the lazy where
    want[want > 1] = 0.5
    assert_same(gx, want)
    n = int(np.count_nonzero(want < 0))
    vals = np.arange(n, dtype=np.float32)
    gx[gx < 0] = xp.asarray(vals, device=device)
    want[want < 0] = vals
    assert_same(gx, want)


def test_mask_write_partial_mask(device):
    x, _ = _xy((3, 4, 2))
    gx = xp.asarray(x, device=device)
    m = x[:, :, 0] > 0
    n = int(m.sum())
    v = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
    want = x.copy()
    want[m] = v
    gx[gx[:, :, 0] > 0] = xp.asarray(v, device=device)
    assert_same(gx, want)
    with pytest.raises(ValueError):
        gx[gx[:, :, 0] > 0] = xp.asarray(np.zeros((n + 1, 2), np.float32), device=device)


def test_compress_and_extract(device):
    x, y = _xy((4, 5))
    gx, gy = xp.asarray(x, device=device), xp.asarray(y, device=device)
    c = x[:, 0] > 0
    gc = gx[:, 0] > 0
    assert_same(np.compress(gc, gx, axis=0), np.compress(c, x, axis=0))
    assert_same(np.compress(gy[0] > 1, gx, axis=1), np.compress(y[0] > 1, x, axis=1))
    assert_same(np.compress(gc[:3], gx), np.compress(c[:3], x))
    assert_same(np.compress(c, gx, axis=0), np.compress(c, x, axis=0))
    assert_same(np.extract(gx > gy, gy), np.extract(x > y, y))
    assert_same(np.extract((gx > 0)[:2], gy), np.extract((x > 0)[:2], y))
    long = np.ones(6, bool)
    with pytest.raises(IndexError):
        np.compress(xp.asarray(long, device=device), gx, axis=0)


# ---------------------------------------------------------------- on the device: counts, sizes

def test_no_host_fallback_and_only_the_count_read_back(wgpu_device):
    x, y = _xy((64, 33))
    gx, gy = xp.asarray(x, device=wgpu_device), xp.asarray(y, device=wgpu_device)
    (gx + gy).tolist()                          # uploaded and computed before counting
    with xp.config(offload="always"):
        xp.reset_metrics()
        r = gx[(gx > 0) & (gy < 1)]
        idx = xp.nonzero(gx * gy > 0.2)
        flat = np.flatnonzero(gx > 0)
        aw = np.argwhere(gy < 0.5)
        gx[gx < -1] = gy[gx < -1]
        cum = np.maximum.accumulate(gx, axis=1)
        m = xp.metrics()
        assert m["host_fallbacks"] == 0
        assert m["bytes_downloaded"] == 6 * 4      # six compactions, a uint32 count each
        assert m["bytes_uploaded"] == 0
    want = x.copy()
    want[x < -1] = y[x < -1]
    assert_same(r, x[(x > 0) & (y < 1)])
    for gi, wi in zip(idx, np.nonzero(x * y > 0.2)):
        assert_same(gi, wi.astype(np.int64))
    assert_same(flat, np.flatnonzero(x > 0).astype(np.int64))
    assert_same(aw, np.argwhere(y < 0.5).astype(np.int64))
    assert_same(gx, want)
    assert_same(cum, np.maximum.accumulate(want, axis=1))


def test_compaction_kernels_on_the_host(wgpu_device):
    # kernels of a wgpu array placed on the host (offload="never"): the in-process compact kinds
    x, y = _xy((5, 6))
    gx, gy = xp.asarray(x, device=wgpu_device), xp.asarray(y, device=wgpu_device)
    with xp.config(offload="never"):
        assert_same(gx[(gx > 0) & (gy < 1)], x[(x > 0) & (y < 1)])
        for gi, wi in zip(xp.nonzero(gx > 0.3), np.nonzero(x > 0.3)):
            assert_same(gi, wi.astype(np.int64))
        assert_same(np.flatnonzero(gy > 1), np.flatnonzero(y > 1).astype(np.int64))
        assert_same(np.maximum.accumulate(gx, axis=0), np.maximum.accumulate(x, axis=0))


def test_compaction_dispatches(wgpu_device):
    x, _ = _xy((100_000,))
    gx = xp.asarray(x, device=wgpu_device)
    gx.tolist()
    with xp.config(offload="always"):
        xp.reset_metrics()
        r = gx[gx > 0]
        assert xp.metrics()["dispatches"] == 3      # counts, their scan, the count read
        r.tolist()
        assert xp.metrics()["dispatches"] == 4      # the compaction of the values: one kernel
    assert_same(r, x[x > 0])


def test_multi_level_scan_of_counts(wgpu_device, monkeypatch):
    # 4096 chunks of 1024: the scan of the counts takes its chunked path (three dispatches)
    monkeypatch.setattr(searching_sorted, "COMPACT_CHUNK", 1024)
    monkeypatch.setattr(wgpu_scan, "MIN_CHUNK", 2048)
    n = (1 << 22) - 37
    rng = np.random.default_rng(11)
    a = rng.standard_normal(n).astype(np.float32)
    g = xp.asarray(a, device=wgpu_device)
    assert_same(g[g > 1.0], a[a > 1.0])
    assert_same(xp.nonzero(g < -2.0)[0], np.nonzero(a < -2.0)[0].astype(np.int64))


@pytest.mark.slow
def test_more_than_65535_workgroups(wgpu_device, monkeypatch):
    # chunks of 16 positions: 65538 workgroups, a 2-D grid, for the count and the write kernels
    monkeypatch.setattr(searching_sorted, "COMPACT_CHUNK", 16)
    n = 65537 * 16 + 3
    a = (np.arange(n) % 7 == 3) | (np.arange(n) == n - 1)
    g = xp.asarray(a, device=wgpu_device)
    assert_same(xp.nonzero(g)[0], np.nonzero(a)[0].astype(np.int64))


def test_two_to_the_24(wgpu_device):
    n = 1 << 24
    a = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    g = xp.asarray(a, device=wgpu_device)
    with xp.config(offload="always"):
        xp.reset_metrics()
        r = g[g > 0.5]
        assert xp.metrics()["bytes_downloaded"] == 4
    assert_same(r, a[a > 0.5])


# ---------------------------------------------------------------- max / min / logical accumulate

ACC_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32",
              "float64"]


@pytest.fixture(params=["auto", "serial", "parallel"])
def strategy(request, monkeypatch):
    monkeypatch.setattr(wgpu_scan, "STRATEGY", request.param)
    return request.param


def _acc_data(dtype: str, shape: tuple[int, ...] = (3, 4, 5)) -> np.ndarray:
    rng = np.random.default_rng(9)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) > 0.6
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, endpoint=True, dtype=dt)


@pytest.mark.parametrize("dtype", ACC_DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_max_min_accumulate(device, dtype, axis):
    a = _acc_data(dtype)
    g = xp.asarray(a, device=device)
    xp.reset_metrics()
    for uf in (np.maximum, np.minimum, np.logical_and, np.logical_or):
        assert_same(uf.accumulate(g, axis=axis), uf.accumulate(a, axis=axis))
    assert xp.metrics()["host_fallbacks"] == 0


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
def test_accumulate_strategies(wgpu_device, strategy, dtype):
    a = _acc_data(dtype, (4, 3, 50))
    if a.dtype.kind == "f":
        a[1, 2, 7] = a[3, 0, 0] = a[0, 1, 49] = np.nan
    g = xp.asarray(a, device=wgpu_device)
    for axis in (0, 2):
        assert_same(np.maximum.accumulate(g, axis=axis), np.maximum.accumulate(a, axis=axis))
        assert_same(np.minimum.accumulate(g, axis=axis), np.minimum.accumulate(a, axis=axis))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_accumulate_nan_and_signed_zero(device, dtype):
    rows = np.array([[np.nan, 1.0, 2.0, -5.0], [1.0, 3.0, np.nan, 7.0], [1.0, 2.0, 3.0, np.nan],
                     [-0.0, 0.0, -0.0, 0.0], [0.0, -0.0, 0.0, -0.0], [-np.inf, np.inf, -np.inf, 1.0]], dtype)
    g = xp.asarray(rows, device=device)
    for uf in (np.maximum, np.minimum):
        for axis in (0, 1):
            assert_same(uf.accumulate(g, axis=axis), uf.accumulate(rows, axis=axis))


def test_accumulate_long_rows_and_empty(device):
    a = np.random.default_rng(4).standard_normal((2, 40_000)).astype(np.float32)
    a[1, 30_000] = np.nan
    g = xp.asarray(a, device=device)
    assert_same(np.maximum.accumulate(g, axis=1), np.maximum.accumulate(a, axis=1))
    assert_same(np.minimum.accumulate(g[0]), np.minimum.accumulate(a[0]))
    for shape, axis in (((0,), 0), ((3, 0), 1), ((0, 4), 0), ((0, 4), 1)):
        e = np.zeros(shape, np.float32)
        assert_same(np.maximum.accumulate(xp.asarray(e, device=device), axis=axis),
                    np.maximum.accumulate(e, axis=axis))


def test_accumulate_dtype_out_and_errors(device):
    a = np.array([[3, -1, 4], [1, -5, 9]], np.int16)
    g = xp.asarray(a, device=device)
    assert_same(np.maximum.accumulate(g, axis=1, dtype=np.float32),
                np.maximum.accumulate(a, axis=1, dtype=np.float32))
    out = xp.zeros((2, 3), dtype=xp.int16, device=device)
    r = np.minimum.accumulate(g, axis=0, out=out)
    assert r is out
    assert_same(out, np.minimum.accumulate(a, axis=0))
    with pytest.raises(np.exceptions.AxisError):
        np.maximum.accumulate(g, axis=2)


@pytest.mark.parametrize("shape,at,k", [((6, 7, 3), 0, 2), ((6, 7, 3), 1, 2), ((4, 5, 6, 2), 1, 2), ((4, 5, 6), 0, 3)])
@pytest.mark.parametrize("fill", ["some", "none", "all"])
def test_a_mask_over_several_dims_gathers_by_flat_index(device: xp.Device, shape: tuple[int, ...], at: int, k: int,
                                                        fill: str) -> None:
    """``a[:, mask]`` with a mask over k > 1 dims: the mask's flat indices gather along those dims merged
    (``indexing_advanced.advanced_getitem``); NumPy's result, the mask anywhere, none or every element set."""
    rng = np.random.default_rng(sum(shape) + at)
    h = rng.uniform(-3, 3, shape).astype(np.float32)
    m = rng.uniform(0, 1, shape[at:at + k]) > 0.5 if fill == "some" else np.full(shape[at:at + k], fill == "all")
    g, gm = xp.asarray(h, device=device), xp.asarray(m, device=device)
    with xp.config(offload="always"):
        got = np.asarray(g[(slice(None),) * at + (gm,)])
    np.testing.assert_array_equal(got, h[(slice(None),) * at + (m,)])
