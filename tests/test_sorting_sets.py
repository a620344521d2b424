"""sort, argsort, searchsorted, nonzero and the unique_* functions against NumPy on both providers."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.exceptions import AxisError

import gpuarray as xp

from .conftest import assert_same

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"]


def _data(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Many duplicates, plus the dtype's special values: extremes, or NaN, +-inf, -0.0."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dt.kind == "b":
        return (rng.random(shape) > 0.5)
    if dt.kind == "f":
        a = rng.integers(-4, 4, n).astype(dt) * dt.type(0.5)
        specials = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(dt).max, np.finfo(dt).tiny],
                            dtype=dt)
    else:
        info = np.iinfo(dt)
        a = rng.integers(max(info.min, -4), min(info.max, 4), n, endpoint=True).astype(dt)
        specials = np.array([info.min, info.max, info.min, info.max - 1, 0], dtype=dt)
    pos = rng.choice(n, size=min(n, 3 * len(specials)), replace=False)
    a[pos] = np.resize(specials, pos.size)
    return a.reshape(shape)


def _ref_argsort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable; descending keeps ties in their original order and puts NaN first (array-api-strict's rule)."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    return (n - 1) - np.flip(np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)


def _check_sort(g: xp.GpuArray, a: np.ndarray, axis: int, descending: bool) -> None:
    want = _ref_argsort(a, axis, descending)
    assert_same(xp.argsort(g, axis=axis, descending=descending), want)
    # values taken at the reference permutation: also checks where each -0.0 / NaN went
    assert_same(xp.sort(g, axis=axis, descending=descending), np.take_along_axis(a, want, axis=axis))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_argsort_dtypes_axes(device, dtype):
    a = _data(dtype, (3, 5, 37))
    g = xp.asarray(a, device=device)
    for axis in (0, 1, -1):
        for descending in (False, True):
            _check_sort(g, a, axis, descending)
    assert xp.argsort(g).dtype == device.default_int


def test_reference_order_matches_python_sorted():
    """The reference above is the order array-api-tests checks (Python's stable sorted, reverse=True)."""
    a = np.array([2, 1, 2, 3, 1, 2], dtype=np.int32)
    for desc in (False, True):
        want = sorted(range(a.size), key=a.__getitem__, reverse=desc)
        np.testing.assert_array_equal(_ref_argsort(a, 0, desc), want)


def test_special_values_order(device):
    a = np.array([np.nan, 1.0, -0.0, -np.inf, 0.0, np.inf, -1.0, np.nan, 0.0, -0.0], dtype=np.float32)
    g = xp.asarray(a, device=device)
    assert xp.argsort(g).tolist() == [3, 6, 2, 4, 8, 9, 1, 5, 0, 7]
    assert xp.argsort(g, descending=True).tolist() == [0, 7, 5, 1, 2, 4, 8, 9, 6, 3]
    s = np.asarray(xp.sort(g))
    assert np.signbit(s[2:6]).tolist() == [True, False, False, True]     # zeros keep their order
    _check_sort(g, a, 0, False)
    _check_sort(g, a, 0, True)


@pytest.mark.parametrize(("dtype", "shape", "axis"), [
    ("float32", (5000,), 0), ("int32", (70000,), 0), ("float64", (2, 5000), -1), ("int64", (5000, 3), 0),
    ("uint16", (3, 1500, 2), 1),
])
def test_long_rows(device, dtype, shape, axis):
    a = _data(dtype, shape, seed=3)
    g = xp.asarray(a, device=device)
    for descending in (False, True):
        _check_sort(g, a, axis, descending)


def test_empty_and_small(device):
    for shape, axis in [((0,), 0), ((3, 0), 1), ((3, 0), 0), ((0, 4), -1), ((1,), 0), ((4, 1), 1), ((2,), 0)]:
        a = _data("float32", shape) if 0 not in shape else np.zeros(shape, dtype=np.float32)
        g = xp.asarray(a, device=device)
        for descending in (False, True):
            _check_sort(g, a, axis, descending)
    z = xp.asarray(1.5, device=device)
    for fn in (xp.sort, xp.argsort):
        with pytest.raises(AxisError):
            fn(z)
        with pytest.raises(AxisError):
            fn(xp.asarray([1, 2], device=device), axis=1)


def test_sort_fuses_prologue_and_views(device):
    a = _data("float32", (6, 40), seed=5)
    g = xp.asarray(a, device=device)
    xp.evaluate(g)
    xp.reset_metrics()
    s = xp.sort(g.T * 2.0 - 1.0, axis=0, descending=True)
    xp.evaluate(s)
    if device.kind == "wgpu":
        assert xp.metrics()["dispatches"] == 1
    with np.errstate(over="ignore"):
        want = a.T * np.float32(2) - np.float32(1)
    assert_same(s, np.take_along_axis(want, _ref_argsort(want, 0, True), axis=0))
    i = xp.argsort(g[:, ::-3], stable=False)
    assert_same(i, np.argsort(a[:, ::-3], axis=-1, kind="stable"))


def test_sort_errors():
    with pytest.raises(TypeError):
        xp.sort(np.arange(3))
    with pytest.raises(TypeError):
        xp.argsort(xp.asarray([1, 2], device="cpu"), descending=1)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float32", "float64"])
def test_searchsorted(device, dtype):
    x1 = np.sort(_data(dtype, (60,), seed=7))
    v = _data(dtype, (4, 9), seed=8)
    g1, gv = xp.asarray(x1, device=device), xp.asarray(v, device=device)
    perm = np.random.default_rng(9).permutation(x1.size)
    shuffled = x1[perm]
    sorter = np.argsort(shuffled, kind="stable")
    for side in ("left", "right"):
        assert_same(xp.searchsorted(g1, gv, side=side), np.searchsorted(x1, v, side=side))
        got = xp.searchsorted(xp.asarray(shuffled, device=device), gv, side=side,
                              sorter=xp.asarray(sorter, device=device))
        assert_same(got, np.searchsorted(shuffled, v, side=side, sorter=sorter))
        scalar = 3 if dtype[0] in "iu" else 0.5
        assert_same(xp.searchsorted(g1, scalar, side=side), np.asarray(np.searchsorted(x1, scalar, side=side)))
    assert xp.searchsorted(g1, gv).dtype == device.default_int


def test_searchsorted_special(device):
    x1 = np.array([-np.inf, -1.0, -0.0, 0.0, 0.0, 2.0, np.inf, np.nan, np.nan], dtype=np.float32)
    v = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, 3.0], dtype=np.float32)
    for side in ("left", "right"):
        got = xp.searchsorted(xp.asarray(x1, device=device), xp.asarray(v, device=device), side=side)
        assert_same(got, np.searchsorted(x1, v, side=side))
    empty = xp.asarray(np.zeros(0, dtype=np.float32), device=device)
    assert_same(xp.searchsorted(empty, xp.asarray(v, device=device)), np.zeros(v.shape, dtype=np.int64))
    assert_same(xp.searchsorted(xp.asarray(x1, device=device), xp.asarray(v[:0], device=device)),
                np.zeros(0, dtype=np.int64))
    # mixed dtypes promote: int32 x1, float32 x2 -> float64 comparison
    xi = np.array([1, 2, 4], dtype=np.int32)
    got = xp.searchsorted(xp.asarray(xi, device=device), xp.asarray(np.array([2.5, 2.0], np.float32), device=device))
    assert got.tolist() == [2, 1]
    with pytest.raises(ValueError):
        xp.searchsorted(xp.asarray(np.zeros((2, 2)), device=device), xp.asarray([1.0], device=device))
    with pytest.raises(ValueError):
        xp.searchsorted(xp.asarray(x1, device=device), xp.asarray(v, device=device), side="middle")


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float64"])
def test_nonzero(device, dtype):
    for shape in [(7,), (4, 6), (2, 3, 5), (0, 3)]:
        a = _data(dtype, shape, seed=11) if 0 not in shape else np.zeros(shape, dtype=dtype)
        got = xp.nonzero(xp.asarray(a, device=device))
        want = np.nonzero(a)
        assert len(got) == len(want)
        for gi, wi in zip(got, want):
            assert gi.device == device
            assert_same(gi, wi.astype(device.default_int))
    with pytest.raises(ValueError):
        xp.nonzero(xp.asarray(1.0, device=device))


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique(device, dtype):
    for shape in [(4, 33), (0,), (), (1,)]:
        a = _data(dtype, shape, seed=13) if 0 not in shape and shape != () else np.zeros(shape, dtype=dtype)
        g = xp.asarray(a, device=device)
        vals, idx, inv, cnt = np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                                        equal_nan=False)
        di = device.default_int
        r = xp.unique_all(g)
        assert r.values.device == device and r.indices.device == device
        # -0.0 and 0.0 are one value: NumPy may report either sign, so the sign is not compared
        assert_same(r.values, vals, check_signed_zero=False)
        assert_same(r.indices, idx.astype(di))
        assert_same(r.inverse_indices, inv.reshape(a.shape).astype(di))
        assert_same(r.counts, cnt.astype(di))
        assert_same(xp.unique_values(g), vals, check_signed_zero=False)
        c = xp.unique_counts(g)
        assert_same(c.counts, cnt.astype(di))
        u = xp.unique_inverse(g)
        assert_same(u.inverse_indices, inv.reshape(a.shape).astype(di))
        assert_same(u.values, vals, check_signed_zero=False)


def test_unique_nans_distinct_and_zero_sign(device):
    a = np.array([np.nan, 0.0, -0.0, np.nan, 1.0, -0.0], dtype=np.float32)
    r = xp.unique_all(xp.asarray(a, device=device))
    v = np.asarray(r.values)
    assert np.isnan(v).sum() == 2 and r.counts.tolist() == [3, 1, 1, 1]
    assert not np.signbit(v[0])                       # the first occurrence of the zero is +0.0
    assert r.indices.tolist() == [1, 4, 0, 3]
    np.testing.assert_array_equal(np.asarray(r.values)[np.asarray(r.inverse_indices)], a)


@pytest.mark.parametrize("dtype", ["int64", "float32", "uint8", "bool"])
def test_unique_stays_on_the_device(wgpu_device, dtype):
    """On a GPU only the number of unique values comes back (scikit-learn's labels: 8 MB at 2^20
    int64 labels per call before); results as NumPy's."""
    rng = np.random.default_rng(21)
    a = (rng.integers(0, 5, 70001) * 3 - 4).astype(dtype)
    g = xp.asarray(a, device=wgpu_device)
    xp.evaluate(g)
    vals, idx, inv, cnt = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    di = wgpu_device.default_int
    with xp.config(offload="always"):
        xp.reset_metrics()
        r = xp.unique_all(g)
        c = xp.unique_counts(g)
        v = xp.unique_values(g)
        xp.evaluate(*r, *c, v)
        m = xp.metrics()
    assert m["bytes_downloaded"] <= 3 * 8 and m["host_fallbacks"] == 0 and m["host_kernels"] == 0
    assert_same(r.values, vals)
    assert_same(r.indices, idx.astype(di))
    assert_same(r.inverse_indices, inv.astype(di))
    assert_same(r.counts, cnt.astype(di))
    assert_same(c.counts, cnt.astype(di))
    assert_same(v, vals)


def test_wgpu_runs_on_device(wgpu_device):
    a = _data("float32", (8, 300), seed=17)
    g = xp.asarray(a, device=wgpu_device)
    xp.evaluate(g)
    xp.reset_metrics()
    s = xp.sort(g)
    i = xp.argsort(g, axis=0, descending=True)
    p = xp.searchsorted(xp.sort(g[0]), g)
    xp.evaluate(s, i, p)
    m = xp.metrics()
    assert m["host_fallbacks"] == 0 and m["host_kernels"] == 0
    assert m["dispatches"] >= 4
    assert_same(p, np.searchsorted(np.sort(a[0]), a))
    # a row longer than one workgroup block: several dispatches, still none on the host
    xp.reset_metrics()
    xp.evaluate(xp.argsort(xp.asarray(_data("float32", (20000,)), device=wgpu_device)))
    xp.synchronize(wgpu_device)     # small work waits for later evaluations to share a submit
    m = xp.metrics()
    assert m["host_fallbacks"] == 0 and m["dispatches"] > 3 and m["submits"] == 1
    # nonzero's compaction runs on the device too: only its count is read back
    xp.reset_metrics()
    xp.nonzero(g)
    assert xp.metrics()["host_fallbacks"] == 0 and xp.metrics()["bytes_downloaded"] == 4


def test_unique_values_of_the_same_array_again(wgpu_device):
    """A GPU array's unique values are remembered while it lives (libraries ask again and again): the
    second call runs nothing; a write into the array or a new array is computed afresh."""
    import gc

    from gpuarray.namespace import sets

    h = np.array([3, 1, 3, 2, 1, 7, 7, 0], dtype=np.int64)
    with xp.config(offload="always"):
        x = xp.asarray(h, device=wgpu_device) * 1
        u = xp.unique_values(x)
        xp.reset_metrics()
        again = xp.unique_values(x)
        assert xp.metrics()["evaluations"] == 0 and xp.metrics()["dispatches"] == 0
        assert again is not u and np.asarray(again).tolist() == [0, 1, 2, 3, 7]
        again[0] = 5                        # the caller's copy: the remembered values stay
        assert np.asarray(xp.unique_values(x)).tolist() == [0, 1, 2, 3, 7]
        x[0] = 9
        assert np.asarray(xp.unique_values(x)).tolist() == [0, 1, 2, 3, 7, 9]
        before = len(sets._UNIQUE)
        del x, u, again
        gc.collect()
        assert len(sets._UNIQUE) < before


def test_numpy_unique_stays_on_the_device(wgpu_device):
    """``np.unique`` (axis=None) with every flag and NumPy's equal_nan: on the device, as the set functions;
    what comes down is the count of unique values (and the results when read)."""
    rng = np.random.default_rng(8)
    a = rng.integers(0, 50, 100000).astype(np.float32)
    a[rng.integers(0, a.size, 30)] = np.nan
    g = xp.asarray(a, device=wgpu_device)
    for eq in (True, False):
        xp.reset_metrics()
        got = np.unique(g, return_index=True, return_inverse=True, return_counts=True, equal_nan=eq)
        assert xp.metrics()["bytes_downloaded"] <= 64 and xp.metrics()["host_fallbacks"] == 0
        want = np.unique(a, return_index=True, return_inverse=True, return_counts=True, equal_nan=eq)
        for x, w in zip(got, want, strict=True):
            assert np.asarray(x).dtype == w.dtype
            np.testing.assert_array_equal(np.asarray(x), w)
