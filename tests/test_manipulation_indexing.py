"""concat/stack/unstack/tile/repeat/roll/moveaxis, take/take_along_axis, advanced
indexing and __setitem__, against NumPy on both providers; fusion through metrics()."""

from __future__ import annotations

import weakref

import numpy as np
import pytest
from numpy.exceptions import AxisError

import gpuarray as xp

from .conftest import assert_same

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"]


def _data(dtype: str, shape=(3, 4), seed: int = 0) -> np.ndarray:
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind == "f":
        a = rng.standard_normal(shape).astype(dt)
        flat = a.reshape(-1)
        for i, v in enumerate([np.nan, -0.0, np.inf, -np.inf, 0.0][:flat.size]):
            flat[i] = v
        return a
    info = np.iinfo(dt)
    a = rng.integers(max(info.min, -100), min(info.max, 100), shape).astype(dt)
    a.reshape(-1)[:2] = [info.min, info.max][:a.size]
    return a


def _ga(a: np.ndarray, device) -> xp.GpuArray:
    return xp.asarray(a, device=device)


# ---------------------------------------------------------------- manipulation

@pytest.mark.parametrize("dtype", DTYPES)
def test_concat_stack_all_dtypes(device, dtype):
    a, b = _data(dtype, (3, 4), 1), _data(dtype, (2, 4), 2)
    ga, gb = _ga(a, device), _ga(b, device)
    assert_same(xp.concat([ga, gb]), np.concatenate([a, b]))
    assert_same(xp.concat([ga, ga[:, ::-1]], axis=-1), np.concatenate([a, a[:, ::-1]], axis=-1))
    assert_same(xp.concat((ga, gb), axis=None), np.concatenate([a, b], axis=None))
    assert_same(xp.stack([ga, ga[::-1]], axis=1), np.stack([a, a[::-1]], axis=1))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concat_axes_and_sizes(device, axis):
    arrs = [_data("float32", s, i) for i, s in enumerate([(2, 3, 4), (2, 3, 4), (2, 3, 4)])]
    shp = list(arrs[1].shape)
    shp[axis] = 5
    arrs[1] = _data("float32", tuple(shp), 7)
    shp[axis] = 0
    arrs.append(np.zeros(shp, np.float32))
    g = [_ga(a, device) for a in arrs]
    assert_same(xp.concat(g, axis=axis), np.concatenate(arrs, axis=axis))
    assert_same(xp.concat([g[0] * 2, g[1] + 1, g[2]], axis=axis),
                np.concatenate([arrs[0] * 2, arrs[1] + 1, arrs[2]], axis=axis))


def test_concat_promotion_many_and_empty(device):
    a8 = np.array([1, -2], np.int8)
    a16 = np.array([300], np.int16)
    f = np.array([0.5], np.float32)
    assert_same(xp.concat([_ga(a8, device), _ga(a16, device)]), np.concatenate([a8, a16]))
    assert_same(xp.concat([_ga(f, device), _ga(np.array([1.5], np.float64), device)]),
                np.concatenate([f, np.array([1.5])]))
    many = [np.arange(i, i + 3, dtype=np.int32) for i in range(40)]
    assert_same(xp.concat([_ga(m, device) for m in many]), np.concatenate(many))
    e = np.zeros((0, 3), np.float32)
    assert_same(xp.concat([_ga(e, device), _ga(e, device)]), np.concatenate([e, e]))
    one = _ga(a8, device)
    assert_same(xp.concat([one]), a8)


def test_concat_errors(device):
    a = _ga(np.zeros((2, 3), np.float32), device)
    with pytest.raises(ValueError, match="must match exactly"):
        xp.concat([a, _ga(np.zeros((2, 4), np.float32), device)])
    with pytest.raises(ValueError, match="same number of dimensions"):
        xp.concat([a, _ga(np.zeros(3, np.float32), device)])
    with pytest.raises(ValueError, match="zero-dimensional"):
        xp.concat([a[0, 0], a[0, 1]])
    with pytest.raises(ValueError, match="at least one"):
        xp.concat([])
    with pytest.raises(AxisError):
        xp.concat([a, a], axis=2)
    with pytest.raises(TypeError):
        xp.concat(a)
    with pytest.raises(ValueError, match="same shape"):
        xp.stack([a, a[:1]])


def test_unstack_moveaxis(device):
    a = _data("int32", (2, 3, 4))
    g = _ga(a, device)
    for axis in (0, 1, -1):
        got = xp.unstack(g, axis=axis)
        want = [np.take(a, i, axis=axis) for i in range(a.shape[axis])]
        assert len(got) == len(want)
        for x, w in zip(got, want):
            assert_same(x, w)
    assert_same(xp.moveaxis(g, 0, -1), np.moveaxis(a, 0, -1))
    assert_same(xp.moveaxis(g, (0, 2), (2, 0)), np.moveaxis(a, (0, 2), (2, 0)))
    assert_same(xp.moveaxis(g, (-1, 0), (0, 1)), np.moveaxis(a, (-1, 0), (0, 1)))
    with pytest.raises(ValueError):
        xp.moveaxis(g, (0, 1), (0,))
    with pytest.raises(AxisError):
        xp.moveaxis(g, 3, 0)
    with pytest.raises(AxisError):
        xp.unstack(g[0, 0, 0])


@pytest.mark.parametrize("reps", [(2,), (1, 3), (2, 1, 2), (0, 2), (3, 1, 1, 1)], ids=repr)
def test_tile(device, reps):
    a = _data("float32", (2, 3))
    assert_same(xp.tile(_ga(a, device), reps), np.tile(a, reps))
    assert_same(xp.tile(_ga(a, device) * 2, reps), np.tile(a * 2, reps))


def test_tile_errors_and_0d(device):
    assert_same(xp.tile(_ga(np.array(5, np.int16), device), (3,)), np.tile(np.array(5, np.int16), (3,)))
    with pytest.raises(ValueError):
        xp.tile(_ga(np.zeros(2), device), (-1,))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float32"])
def test_repeat(device, dtype):
    a = _data(dtype, (3, 4))
    g = _ga(a, device)
    assert_same(xp.repeat(g, 2), np.repeat(a, 2))
    assert_same(xp.repeat(g, 3, axis=0), np.repeat(a, 3, axis=0))
    assert_same(xp.repeat(g, 0, axis=-1), np.repeat(a, 0, axis=-1))
    r = np.array([1, 0, 3])
    assert_same(xp.repeat(g, _ga(r, device), axis=0), np.repeat(a, r, axis=0))
    assert_same(xp.repeat(g, [2, 0, 1, 1], axis=1), np.repeat(a, [2, 0, 1, 1], axis=1))
    assert_same(xp.repeat(g, _ga(np.array([2]), device), axis=1), np.repeat(a, [2], axis=1))


def test_repeat_errors(device):
    g = _ga(np.zeros((3, 4)), device)
    with pytest.raises(ValueError):
        xp.repeat(g, -1)
    with pytest.raises(ValueError):
        xp.repeat(g, [1, 2], axis=0)
    with pytest.raises(ValueError):
        xp.repeat(g, [1, -2, 1], axis=0)
    with pytest.raises(TypeError):
        xp.repeat(g, _ga(np.array([1.0, 2.0, 1.0]), device), axis=0)
    with pytest.raises(AxisError):
        xp.repeat(g, 2, axis=2)


@pytest.mark.parametrize("shift,axis", [(1, None), (-7, None), (2, 0), (-1, -1), (5, 1), ((1, 2), (0, 1)),
                                        ((1, -1), (1, 1)), (3, (0, 1)), (0, 0), (12, None)], ids=repr)
def test_roll(device, shift, axis):
    a = _data("float32", (3, 4))
    assert_same(xp.roll(_ga(a, device), shift, axis=axis), np.roll(a, shift, axis=axis))
    assert_same(xp.roll(_ga(a, device) + 1, shift, axis=axis), np.roll(a + 1, shift, axis=axis))



def test_roll_of_views(device):
    """Rolls of strided views (transposed, flipped, sliced, an axis of one element): the two slices are
    taken on the view's base at its offset and strides."""
    a = _data("float32", (5, 1, 6))
    for view in (lambda x: x, lambda x: x[::-1], lambda x: x[1:, :, ::-2], lambda x: xp.permute_dims(x, (2, 1, 0))
                 if isinstance(x, xp.GpuArray) else np.transpose(x, (2, 1, 0))):
        for axis, shift in ((0, 2), (1, 3), (2, -4), (-1, 7)):
            assert_same(xp.roll(view(_ga(a, device)), shift, axis=axis), np.roll(view(a), shift, axis=axis))

def test_roll_special(device):
    b = np.array([True, False, False])
    assert_same(xp.roll(_ga(b, device), 1), np.roll(b, 1))
    e = np.zeros((0, 3), np.int32)
    assert_same(xp.roll(_ga(e, device), 2, axis=0), np.roll(e, 2, axis=0))
    s = np.array(4.0)
    assert_same(xp.roll(_ga(s, device), 3), np.roll(s, 3))
    with pytest.raises(ValueError):
        xp.roll(_ga(np.zeros((2, 2)), device), (1, 2, 3), axis=(0, 1))


# ---------------------------------------------------------------- take

@pytest.mark.parametrize("dtype", DTYPES)
def test_take_all_dtypes(device, dtype):
    a = _data(dtype, (3, 4))
    g = _ga(a, device)
    idx = np.array([3, 0, -1, -4, 2])
    assert_same(xp.take(g, _ga(idx, device), axis=1), np.take(a, idx, axis=1))
    assert_same(xp.take(g[0], _ga(idx, device)), np.take(a[0], idx))
    idx2 = np.array([[0, -1], [2, 1]], dtype=np.int8)
    assert_same(xp.take(g, _ga(idx2, device), axis=0), np.take(a, idx2, axis=0))
    assert_same(xp.take(g, _ga(np.array([5], np.uint16), device)), np.take(a, [5]))


def test_take_indices_variants(device):
    a = _data("float32", (2, 3, 4))
    g = _ga(a, device)
    assert_same(xp.take(g, [1, -1], axis=-1), np.take(a, [1, -1], axis=-1))
    assert_same(xp.take(g, np.array(1), axis=1), np.take(a, np.array(1), axis=1))
    assert_same(xp.take(g, _ga(np.array([], np.int32), device), axis=1), np.take(a, np.array([], np.int32), axis=1))
    i = _ga(np.array([1, 0], np.int64), device)
    assert_same(xp.take(g * 2, i + 1, axis=1), np.take(a * 2, [2, 1], axis=1))
    assert_same(xp.take(_ga(np.float32(3), device), [0, 0]), np.take(np.float32(3), [0, 0]))


def test_take_errors(device):
    g = _ga(np.arange(6.0).reshape(2, 3), device)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.take(g, _ga(np.array([3]), device), axis=1)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.take(g, [-3], axis=0)
    with pytest.raises(IndexError):
        xp.take(g[:, :0], [0], axis=1)
    with pytest.raises(TypeError, match="integer dtype"):
        xp.take(g, _ga(np.array([1.0]), device), axis=0)
    with pytest.raises(TypeError, match="integer dtype"):
        xp.take(g, _ga(np.array([True]), device), axis=0)
    with pytest.raises(AxisError):
        xp.take(g, [0], axis=2)


def test_take_device_indices_checked(device):
    """Indices computed on the device are checked as NumPy checks them (their minimum and maximum
    read back, once per index array); ranges known by construction are not read back."""
    from gpuarray.namespace import indexing as ix
    g = _ga(np.arange(5, dtype=np.int32) * 10, device)
    for bad, first in (([7, -1, 4], 7), ([0, -6, 2], -6), ([-9, 9], -9)):
        idx = _ga(np.array(bad, np.int32), device) + 0     # lazy, then only on the device
        with pytest.raises(IndexError, match=f"index {first} is out of bounds for axis 0 with size 5"):
            xp.take(g, idx)
        with pytest.raises(IndexError, match="out of bounds"):
            xp.take_along_axis(g, idx, axis=0)
    ok = _ga(np.array([4, -5, -1, 0], np.int64), device) * 1
    assert xp.take(g, ok).tolist() == [40, 0, 40, 0]
    assert xp.take(g, _ga(np.array([4, 1], np.uint32), device) + 0).tolist() == [40, 10]
    with pytest.raises(IndexError, match="index 5 is out"):
        xp.take(g, _ga(np.array([5], np.uint32), device) + 0)
    assert xp.take(g, _ga(np.zeros(0, np.int32), device) + 0).shape == (0,)
    # argsort's, argmax's and searchsorted's results are in range by construction: nothing read back
    h = np.array([[3.0, -1.0, 2.0], [0.5, 9.0, -7.0]], np.float32)
    x = _ga(h, device)
    assert ix._known_range(xp.argsort(x, axis=1)._node) == (0, 2)
    assert ix._known_range(xp.reshape(xp.argmax(x, axis=0), (3, 1))._node) == (0, 1)
    assert ix._known_range(xp.searchsorted(xp.sort(x[0]), x[1])._node) == (0, 3)
    assert ix._known_range(xp.argsort(x, axis=1)._node) is not None
    assert_same(xp.take_along_axis(x, xp.argsort(x, axis=1), axis=1), np.sort(h, axis=1))
    # clip-ed and where-guarded indices are bounded by interval arithmetic: nothing read back
    hi = np.linspace(-9, 9, 40, dtype=np.float32)
    i = (_ga(hi, device) * 1).astype(xp.int32)
    want = np.clip(hi.astype(np.int32), 0, 4) * 10
    if not device.provider.host_memory:
        with xp.config(offload="always"):           # lazy: the graph is there to analyse
            i = (_ga(hi, device) * 1).astype(xp.int32)
            assert ix._known_range(i._node) == (-2**31, 2**31 - 1)         # only the dtype's bounds
            c = xp.minimum(xp.maximum(i, 0), 4)
            assert ix._known_range(c._node) == (0, 4)
            assert ix._known_range(xp.where(i > 4, 4, i)._node) == (-2**31, 4)
            assert ix._known_range(xp.where(i < 0, 0, i)._node) == (0, 2**31 - 1)
            assert ix._known_range(xp.where(i <= 4, i, 4)._node) == (-2**31, 4)
            assert ix._known_range((xp.where(i >= 2, i, 2) - 2)._node) == (0, 2**31 - 3)
            assert ix._known_range((xp.where(c < 1, 1, c) - 1)._node) == (0, 3)
            xp.evaluate(g)
            xp.reset_metrics()
            r = xp.take(g, c)
            assert xp.metrics()["bytes_downloaded"] == 0
            assert_same(r, want)
    assert_same(xp.take(g, xp.minimum(xp.maximum(i, 0), 4)), want)
    with pytest.raises(IndexError, match="index 5 is out"):
        xp.take(g, xp.minimum(xp.maximum(i, 0), 5))


def test_take_flat_offsets_not_downloaded(device):
    """scikit-learn's loss picks raw_prediction.ravel()[arange(n) * k + y]: iota, a multiply by a
    constant and stored labels are bounded without reading the index array back (the first
    version of the device bounds check downloaded it whole, 8 MB per iteration at 2^20 rows)."""
    from gpuarray.namespace import indexing as ix
    n, k = 5000, 3
    y = np.random.default_rng(4).integers(0, k, n)
    gy = _ga(y, device) + 0              # computed: no host copy on a GPU device
    raw = _ga(np.arange(n * k, dtype=np.float32), device)
    xp.evaluate(gy, raw)
    with xp.config(offload="always"):
        idx = xp.arange(n, device=device) * k + gy
        if not device.provider.host_memory:
            assert ix._known_range(idx._node) == (0, n * k - 1)
        xp.reset_metrics()
        got = xp.take(raw, idx)
        assert xp.metrics()["bytes_downloaded"] <= 16           # the labels' extremes, once
        assert_same(got, np.arange(n * k, dtype=np.float32)[np.arange(n) * k + y])
        wide = xp.arange(n, device=device) * (2 * k) + gy        # out of range: NumPy's IndexError
        with pytest.raises(IndexError, match="out of bounds for axis 0 with size 15000"):
            xp.take(raw, wide)


def test_take_offsets_of_cast_labels_read_once(device):
    """scikit-learn's multinomial loss builds ``y_int = asarray(y, dtype=int64)`` (a cast of float
    labels, held by the loss) once and takes at ``y_int + arange(n) * k`` at every evaluation: the
    cast's extremes are read back at the first take only (the whole index expression was reduced and
    read at every evaluation before: one more wait per iteration)."""
    from gpuarray.namespace import indexing as ix
    n, k = 5000, 3
    y = np.random.default_rng(5).integers(0, k, n)
    yf = _ga(y.astype(np.float32), device) + 0
    raw = _ga(np.arange(n * k, dtype=np.float32), device)
    xp.evaluate(yf, raw)
    with xp.config(offload="always"):
        y_int = xp.astype(yf, xp.int64)
        # an entry left by a dead node at the address y_int's node reuses (seen in a full run) is no answer
        stale = type("Dead", (), {})()
        ix._DEVICE_EXTREMES[id(y_int._node)] = (weakref.ref(stale), 0, 0)
        del stale
        offsets = xp.arange(n, device=device) * k
        want = np.arange(n * k, dtype=np.float32)[np.arange(n) * k + y]
        assert_same(xp.take(raw, y_int + offsets), want)
        xp.reset_metrics()
        for _ in range(3):
            assert_same(xp.take(raw, y_int + offsets), want)
        if not device.provider.host_memory:
            assert xp.metrics()["bytes_downloaded"] == 3 * want.nbytes      # the results only
        with pytest.raises(IndexError, match="out of bounds for axis 0 with size 15000"):
            xp.take(raw, y_int + offsets + 1)


def test_reshaped_evaluated_indices_read_once(device):
    """``take_along_axis(r, y[:, None], axis=1)`` with an evaluated device ``y``: ``y[:, None]`` is a leaf of
    its own on ``y``'s data at every call, and the extremes read back at the first call are remembered by
    that data, so later calls read back the results only; a new out-of-range index is still caught."""
    n, k = 3000, 4
    y = np.random.default_rng(6).integers(0, k, n)
    r = np.arange(n * k, dtype=np.float32).reshape(n, k)
    with xp.config(offload="always"):
        gy = xp.astype(_ga(y.astype(np.float32), device), xp.int64)
        gr = _ga(r, device)
        xp.evaluate(gy, gr)
        want = np.take_along_axis(r, y[:, None], axis=1)
        assert_same(xp.take_along_axis(gr * 1.0, gy[:, None], axis=1), want)
        xp.reset_metrics()
        for i in range(3):
            assert_same(xp.take_along_axis(gr * (1.0 + i), gy[:, None], axis=1), want * (1.0 + i))
        if not device.provider.host_memory:
            assert xp.metrics()["bytes_downloaded"] == 3 * want.nbytes      # the results only
        bad = xp.astype(_ga(np.full(n, k, np.float32), device), xp.int64)
        xp.evaluate(bad)
        with pytest.raises(IndexError):
            xp.take_along_axis(gr, bad[:, None], axis=1)


@pytest.mark.parametrize("dt", ["int64", "int32", "int8", "uint8", "uint32"])
def test_index_intervals_hold_the_values(dt):
    """The bounds ``_interval`` derives (never read back when they fit the axis) contain the values the
    expression computes, for clip, remainder, floor division, bitwise and, abs, negative and gathers of
    operands of both signs (a bound that missed a value would skip a bounds check)."""
    from gpuarray.namespace import indexing as ix
    rng = np.random.default_rng(7)
    info = np.iinfo(dt)
    lo, hi = max(int(info.min), -300), min(int(info.max), 300)
    for trial in range(40):
        a = rng.integers(lo, hi + 1, 50).astype(dt)
        if trial % 5 == 0:
            a[:2] = (info.min, info.max)                    # the dtype's extremes too
        ga = xp.asarray(a, device="cpu")
        k = int(rng.integers(1, 20)) * (1 if info.min == 0 or trial % 2 else -1)
        i = xp.asarray(rng.integers(0, 50, 30), device="cpu")
        with np.errstate(all="ignore"):
            exprs = [(np.clip(a, k, k + 7), xp.clip(ga, k, k + 7)), (a % k, ga % k), (a // k, ga // k),
                     (a & abs(k), ga & abs(k)), (np.abs(a), xp.abs(ga)), (-a, -ga), (a[np.asarray(i)], ga[i]),
                     ((a % k)[np.asarray(i)] // 3, xp.take(ga % k, i) // 3)]
        for want, got in exprs:
            bounds = ix._interval(got._node, 0)
            assert np.array_equal(np.asarray(got), want), (trial, got._node.op)
            assert bounds[0] <= want.min() and want.max() <= bounds[1], (trial, got._node.op, bounds, want.min(),
                                                                          want.max())
    if dt == "int64":               # bounds past 2^53, where floats are not exact integers
        big = np.array([2**60 + 1023, 2**60 + 2047, -(2**60) - 1], np.int64)
        gb = xp.asarray(big, device="cpu")
        for want, got in ((big // 1024, gb // 1024), (big % 4096, gb % 4096), (big & 7, gb & 7), (-big, -gb)):
            bounds = ix._interval(got._node, 0)
            assert bounds[0] <= want.min() and want.max() <= bounds[1], (got._node.op, bounds)


def test_index_intervals_still_catch_out_of_range(device):
    """Indices bounded by construction but past the axis (``lab % 9`` into 8 elements) are checked and raise
    NumPy's IndexError; within it they are not read back."""
    lab = xp.astype(_ga(np.arange(40, dtype=np.float32), device), xp.int64)
    x = _ga(np.arange(8, dtype=np.float32), device)
    xp.evaluate(lab, x)
    assert_same(x[lab % 8], np.arange(8, dtype=np.float32)[np.arange(40) % 8])
    with pytest.raises(IndexError):
        xp.evaluate(x[lab % 9])
    with pytest.raises(IndexError):
        xp.evaluate(xp.take(x, -(lab // 4) - 9))


def test_unravel_known_indices_read_nothing(device):
    """``np.unravel_index(argmax(m), m.shape)`` and ``ravel_multi_index`` of indices bounded by construction
    check their range without a read back; indices of unknown range are checked (one value read) and raise
    NumPy's ValueError."""
    h = np.random.default_rng(8).standard_normal((6, 7)).astype(np.float32)
    m = _ga(h, device)
    xp.evaluate(m)
    with xp.config(offload="always"):
        xp.reset_metrics()
        got = np.unravel_index(xp.argmax(m * 2.0), m.shape)
        rows = np.ravel_multi_index((xp.arange(6, device=device) % 6, xp.argmax(m, axis=1)), (6, 7))
        xp.evaluate(*got, rows)
        if not device.provider.host_memory:
            assert xp.metrics()["bytes_downloaded"] == 0
        assert tuple(int(v) for v in got) == np.unravel_index(np.argmax(h), h.shape)
        assert_same(rows, np.ravel_multi_index((np.arange(6), np.argmax(h, axis=1)), (6, 7)))
        bad = xp.astype(_ga(np.array([3.0, 42.0], np.float32), device), xp.int64)
        with pytest.raises(ValueError):
            np.unravel_index(bad, (6, 7))
        with pytest.raises(ValueError):
            np.ravel_multi_index((bad, bad), (6, 7))


def test_take_along_axis(device):
    a = _data("float32", (3, 4), 3)
    g = _ga(a, device)
    order = np.argsort(np.nan_to_num(a), axis=1)
    assert_same(xp.take_along_axis(g, _ga(order, device), axis=1), np.take_along_axis(a, order, axis=1))
    order0 = np.argsort(np.nan_to_num(a), axis=0)[:2]
    assert_same(xp.take_along_axis(g, _ga(order0, device), axis=0), np.take_along_axis(a, order0, axis=0))
    col = np.array([[0], [3], [-1]])
    assert_same(xp.take_along_axis(g, _ga(col, device), axis=-1), np.take_along_axis(a, col, axis=-1))
    row = np.array([[1, 0, 2, 1]])
    assert_same(xp.take_along_axis(g, row, axis=0), np.take_along_axis(a, row, axis=0))
    b = np.ones((1, 4), np.int32)
    assert_same(xp.take_along_axis(_ga(b, device), _ga(np.zeros((3, 2), np.int32), device), axis=1),
                np.take_along_axis(b, np.zeros((3, 2), np.int64), axis=1).astype(np.int32))
    with pytest.raises(ValueError):
        xp.take_along_axis(g, _ga(np.zeros(2, np.int32), device), axis=0)
    with pytest.raises(IndexError):
        xp.take_along_axis(g, _ga(np.array([[4]]), device), axis=1)


# ---------------------------------------------------------------- advanced getitem

A = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
I1 = np.array([2, 0, -1])
I2 = np.array([[1, 0], [3, -4]])
MASK = (A % 3) == 0
GET_KEYS = [
    [1, 0], (slice(None), [2, 0]), (Ellipsis, I2), (0, I1), (1, slice(None), [0, 3]), (I1[1:], 1),
    (slice(None), I1, slice(1, 3)), ([0, 1], [1, 2]), ([0, 1], slice(None), [1, 2]), ([[0], [1]], [1, 2], 0),
    (None, slice(None), [1]), (slice(None), None, [2, 1]), (slice(None), [], 0), ([-2], 2, slice(None, None, -1)),
    MASK, (slice(None), MASK[0]), (1, MASK[0]), (slice(None), MASK[0, :, 0]), (MASK[:, 0, 0], slice(1, 3)),
    (Ellipsis, MASK[0, 0]), (MASK[:, :, 0], 2), np.zeros(2, bool), True, (False, 0), (1, [True, False, True]),
]


@pytest.mark.parametrize("key", GET_KEYS, ids=lambda k: repr(k).replace("\n", "")[:60])
def test_advanced_getitem_matches_numpy(device, key):
    g = _ga(A, device)
    assert_same(g[key], A[key])


@pytest.mark.parametrize("dtype", DTYPES)
def test_advanced_getitem_dtypes_and_device_keys(device, dtype):
    a = _data(dtype, (3, 4))
    g = _ga(a, device)
    m = a.astype(bool)
    assert_same(g[_ga(m, device)], a[m])
    assert_same(g[:, _ga(np.array([3, -1, 0]), device)], a[:, [3, -1, 0]])
    assert_same(g[_ga(np.array([1, 2]), device) + 0, _ga(np.array([0, 3]), device) + 0], a[[1, 2], [0, 3]])


def test_advanced_getitem_0d_and_empty(device):
    s = np.float32(2.5)
    gs = _ga(np.array(s), device)
    assert_same(gs[True], np.array(s)[True])
    assert_same(gs[np.array(False)], np.array(s)[np.array(False)])
    e = np.zeros((0, 3), np.float32)
    ge = _ga(e, device)
    assert_same(ge[np.zeros((0, 3), bool)], e[np.zeros((0, 3), bool)])
    assert_same(ge[:, [0, 2]], e[:, [0, 2]])


def test_advanced_getitem_errors(device):
    g = _ga(A, device)
    with pytest.raises(IndexError, match="out of bounds"):
        g[[0, 2]]
    with pytest.raises(IndexError, match="out of bounds"):
        g[:, _ga(np.array([-4]), device)]
    with pytest.raises(IndexError):
        g[np.array([0.0, 1.0])]
    with pytest.raises(IndexError):
        g[_ga(np.array([1.0]), device)]
    with pytest.raises(IndexError, match="boolean index did not match"):
        g[np.ones(3, bool)]
    with pytest.raises(IndexError, match="too many indices"):
        g[0, 0, 0, [0]]
    with pytest.raises(IndexError, match="shape mismatch"):
        g[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError):
        g["a"]
    with pytest.raises(IndexError):
        g[1.5]


# ---------------------------------------------------------------- setitem

SET_CASES = [
    (0, 7), ((1, 2), -1), ((slice(None), 1), [[10], [20]]), ((Ellipsis, slice(None, None, -2)), 5),
    ((slice(None, None, -1), slice(1, None, 2), 0), np.array([[1, 2]]).T), ((), 3), ((None, 1), 9),
    (slice(5, 9), 4), ([1, 0], 8), ((slice(None), [2, 0]), np.arange(8).reshape(2, 1, 4)),
    ((0, [1, 2], [3, -1]), [100, 200]), (([0, 1], slice(None), [1, 2]), 6), (MASK, -5), (MASK, np.arange(MASK.sum())),
    ((Ellipsis, MASK[0]), 11), ((1, MASK[0, :, 0]), np.array([1, 2, 3, 4])), ((slice(None), MASK[0, :, 0], 2), 12),
    ((MASK[:, :, 0], slice(1, 3)), np.array([[1, 2]])), (np.zeros((2, 3, 4), bool), 1),
]


@pytest.mark.parametrize("key,value", SET_CASES, ids=lambda k: repr(k).replace("\n", "")[:40])
def test_setitem_matches_numpy(device, key, value):
    want = A.copy()
    want[key] = value
    g = _ga(A, device)
    g[key] = value
    assert_same(g, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem_dtypes_and_special_values(device, dtype):
    a = _data(dtype, (3, 4))
    b = _data(dtype, (3, 4), 5)
    g = _ga(a, device)
    w = a.copy()
    g[1:, ::2] = _ga(b[:2, :2], device)
    w[1:, ::2] = b[:2, :2]
    g[_ga(b.astype(bool), device)] = _ga(b, device)[0, 0]
    w[b.astype(bool)] = b[0, 0]
    g[[2, 0], -1] = _ga(b[0, :2], device)
    w[[2, 0], -1] = b[0, :2]
    assert_same(g, w)
    if a.dtype.kind == "f":
        g[0] = float("nan")
        w[0] = np.nan
        g[:, 0] = -0.0
        w[:, 0] = -0.0
        assert_same(g, w)


def test_setitem_casting(device):
    g = _ga(np.zeros(3, np.float32), device)
    g[0] = 2                                   # Python int into float: weak
    g[1] = _ga(np.array(1.5), device)          # float64 array into float32: same_kind
    assert_same(g, np.array([2, 1.5, 0], np.float32))
    i = _ga(np.zeros(3, np.int8), device)
    i[0] = True
    i[1:] = _ga(np.array([300, -1], np.int16), device)   # same kind: wraps like astype
    assert_same(i, np.array([1, 44, -1], np.int8))
    with pytest.raises(TypeError):
        i[0] = 1.5
    with pytest.raises(TypeError):
        i[:] = _ga(np.ones(3), device)
    with pytest.raises(OverflowError):
        i[0] = 300
    b = _ga(np.zeros(2, bool), device)
    with pytest.raises(TypeError):
        b[0] = 1
    with pytest.raises(ValueError, match="cannot store the string"):
        g[0] = "x"                  # NumPy: ValueError (it parses strings: g[0] = "5" stores 5)
    s = _ga(np.zeros(2, np.float32), device)
    s[1] = "5"
    assert_same(s, np.array([0, 5], np.float32))
    with pytest.raises(ValueError, match="could not broadcast"):
        g[:2] = _ga(np.ones(3, np.float32), device)
    with pytest.raises(ValueError):
        g[[0, 1]] = [1.0, 2.0, 3.0]
    with pytest.raises(IndexError):
        g[3] = 1.0
    with pytest.raises(IndexError):
        g[[3]] = 1.0
    assert_same(g, np.array([2, 1.5, 0], np.float32))


def test_fancy_index_device_indices_checked(device):
    """x[i], x[i, j] and x[i] = v with index arrays only on the device raise IndexError as NumPy;
    a mask's coordinates are in range by construction (no read back)."""
    a = _data("float32", (4, 3))
    g = _ga(a, device)
    i = _ga(np.array([1, 4], np.int64), device) + 0
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        g[i]
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 3"):
        g[_ga(np.array([0, 1]), device) + 0, _ga(np.array([2, -4]), device) + 0]
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        g[i] = 1.0
    assert_same(g, a)                        # nothing written
    j = _ga(np.array([1, -4], np.int64), device) + 0
    assert_same(g[j], a[[1, -4]])
    m = _ga(np.array([[True, False, True], [False, False, True], [True, True, False], [False, True, False]]),
            device)
    assert_same(g[m], a[np.asarray(m)])
    if not device.provider.host_memory:
        from gpuarray.namespace import indexing as ix
        from gpuarray.namespace.searching_sorted import compact_node
        coords = compact_node(m._node, "coords")
        assert ix._known_range(coords) == (0, 3)
        assert ix._known_range(xp.GpuArray(coords)[1]._node) == (0, 2)


def test_setitem_device_indices(device):
    a = _data("float32", (4, 3))
    g = _ga(a, device)
    idx = _ga(np.array([3, -4], np.int64), device) + 0      # lazy: checked by its extremes
    g[idx] = _ga(np.arange(6, dtype=np.float32).reshape(2, 3), device) * 2
    w = a.copy()
    w[[3, 0]] = np.arange(6, dtype=np.float32).reshape(2, 3) * 2
    assert_same(g, w)
    u = _ga(np.array([2, 0], np.uint64), device)
    assert_same(g[:, u], w[:, [2, 0]])
    g[:, u] = 1.0
    w[:, [2, 0]] = 1.0
    assert_same(g, w)
    if device.kind == "wgpu":
        other = _ga(np.array([0]), "cpu")
        with pytest.raises(ValueError):
            g[other]


def test_setitem_writes_through_views(device):
    x = _ga(np.zeros((2, 3), np.float32), device)
    y = x[0]
    y[...] = 1                 # y is a view, as in NumPy: x changes too
    z = x
    x[1, 1] = 5
    assert_same(x, np.array([[1, 1, 1], [0, 5, 0]], np.float32))
    assert_same(y, np.ones(3, np.float32))
    assert z is x
    x0 = _ga(np.zeros((), np.int32), device)
    x0[()] = 4
    assert x0.item() == 4


def test_setitem_loop_stays_bounded(device):
    x = _ga(np.zeros(200, np.float32), device)
    w = np.zeros(200, np.float32)
    for i in range(150):
        x[i] = i
        w[i] = i
    assert_same(x, w)


# ---------------------------------------------------------------- fusion

def _dispatches(device, *arrays) -> int:
    xp.evaluate(*arrays)
    m = xp.metrics()
    return m["dispatches"] if device.kind == "wgpu" else m["host_kernels"]


def test_concat_and_take_fuse(device):
    a = _ga(np.arange(6, dtype=np.float32).reshape(2, 3), device)
    b = _ga(np.arange(4, dtype=np.float32).reshape(2, 2), device)
    idx = _ga(np.array([2, 0, 1, 1], np.int32), device)
    xp.evaluate(a + 0, b + 0, idx + 0)                 # uploads outside the measured region
    xp.reset_metrics()
    c = xp.concat([a * 2, b + 1], axis=1)
    assert _dispatches(device, c) == 1
    assert xp.metrics()["host_fallbacks"] == 0 and xp.metrics()["bytes_downloaded"] == 0
    xp.reset_metrics()
    t = xp.take(a * 2, idx, axis=1) - 1
    assert _dispatches(device, t) == 1
    assert xp.metrics()["bytes_downloaded"] == 0
    xp.reset_metrics()
    r = xp.roll(xp.tile(a, (1, 2)), 1, axis=1) + xp.repeat(a, 2, axis=1)
    assert _dispatches(device, r) == 1
    assert_same(c, np.concatenate([np.arange(6.0).reshape(2, 3) * 2, np.arange(4.0).reshape(2, 2) + 1], 1)
                .astype(np.float32))
    assert_same(t, np.take(np.arange(6, dtype=np.float32).reshape(2, 3) * 2, [2, 0, 1, 1], axis=1) - 1)


def test_setitem_then_arithmetic_fuses(device):
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = _ga(host, device)
    m = _ga(host > 5, device)
    xp.evaluate(x + 0, m)
    xp.reset_metrics()
    x[1:, ::2] = 0.5
    x[m] = -1.0
    y = x * 2 + 1
    assert _dispatches(device, y) == 1
    assert xp.metrics()["bytes_downloaded"] == 0
    w = host.copy()
    w[1:, ::2] = 0.5
    w[host > 5] = -1
    assert_same(y, w * 2 + 1)


def test_pipelines_are_reused_across_sizes(wgpu_device):
    def run(n: int, k: int) -> None:
        a = _ga(np.arange(n, dtype=np.float32), wgpu_device)
        b = _ga(np.arange(k, dtype=np.float32), wgpu_device)
        xp.evaluate(xp.concat([a * 2, b + 1]))
        x = a + 0
        x[1:n:2] = 3.0
        xp.evaluate(x)
    run(8, 3)
    xp.reset_metrics()
    run(20, 7)
    assert xp.metrics()["kernels_compiled"] == 0


def test_index_bounds_checked_once_per_index_array(device, monkeypatch):  # noqa: ANN001
    """take() with the same (immutable) index array checks its bounds on the host once, not at every
    call; new arrays, and out-of-bounds indices, are still checked and raise as NumPy does."""
    from gpuarray.namespace import indexing
    x = xp.asarray(np.arange(10.0), device=device)
    idx = xp.asarray(np.array([3, -1, 9]), device=device)
    assert_same(xp.take(x, idx), np.take(np.arange(10.0), [3, -1, 9]))
    scans = []
    orig = indexing._scan
    monkeypatch.setattr(indexing, "_scan", lambda a: scans.append(a.size) or orig(a))
    for _ in range(3):
        assert_same(xp.take(x, idx), np.take(np.arange(10.0), [3, -1, 9]))
    assert scans == []                             # remembered from the first call
    fresh = xp.asarray(np.array([3, -1, 9]), device=device)
    assert_same(xp.take(x, fresh), np.take(np.arange(10.0), [3, -1, 9]))
    assert scans == [3]
    for bad in ([0, 10], [-11, 2]):
        with pytest.raises(IndexError, match="out of bounds"):
            xp.take(x, xp.asarray(np.array(bad), device=device))


def test_bounds_of_evaluated_index_arrays(device):
    """Evaluated index arrays drop their graph inputs: the bounds check reads their stored extremes
    (scikit-learn's LabelEncoder.inverse_transform takes with an evaluated searchsorted result)."""
    classes = _ga(np.array([1, 3, 7]), device)
    codes = xp.searchsorted(classes, _ga(np.array([3, 1, 3, 7, 1, 1]), device))
    xp.evaluate(codes)
    assert_same(xp.take(classes, codes), np.array([3, 1, 3, 7, 1, 1]))
    v = codes[1:]
    xp.evaluate(v)
    assert_same(xp.take(classes, v), np.array([1, 3, 7, 1, 1]))
    am = xp.argmax(_ga(np.array([[1.0, 5.0], [7.0, 2.0]]), device), axis=1)
    xp.evaluate(am)
    assert_same(xp.take(classes, am), np.array([3, 1]))


def test_basic_place_of_plain_slices_matches_the_walk():
    """``basic_place``'s path for one slice a dimension (a stencil's views) gives the place the general
    walk gives (the same key with a trailing ``...``), for steps of either sign, bounds past the ends,
    NumPy integers as bounds and empty dimensions."""
    from gpuarray.array_object.indexing import basic_place
    rng = np.random.default_rng(5)
    bounds = [None, -9, -2, -1, 0, 1, 3, 8, np.int64(2)]
    for _ in range(3000):
        nd = int(rng.integers(1, 4))
        shape = tuple(int(d) for d in rng.integers(0, 7, nd))
        strides = tuple(int(s) for s in rng.integers(-20, 21, nd))
        key = tuple(slice(bounds[rng.integers(len(bounds))], bounds[rng.integers(len(bounds))],
                          [None, 1, 2, -1, -3][rng.integers(5)]) for _ in range(nd))
        off = int(rng.integers(0, 100))
        assert basic_place(shape, strides, off, key) == basic_place(shape, strides, off, key + (Ellipsis,))
        if nd == 1:
            assert basic_place(shape, strides, off, key[0]) == basic_place(shape, strides, off, key + (Ellipsis,))


def test_tuple_subclass_keys_index_as_tuples(device):
    """A tuple subclass (a namedtuple) is a tuple index, as in NumPy: basic indexing, one element and a write."""
    import collections
    Key = collections.namedtuple("Key", "r c")
    a = _data("float32", (4, 5))
    g = _ga(a, device)
    assert_same(g[Key(slice(1, 3), 2)], a[1:3, 2])
    assert_same(g[Key(1, slice(None, None, -2))], a[1, ::-2])
    assert float(g[Key(2, 3)]) == float(a[2, 3])
    g[Key(0, slice(1, 4))] = 7.0
    a[0, 1:4] = 7.0
    assert_same(g, a)


@pytest.mark.parametrize("shape", [(50, 4), (7,), (3, 4, 5)])
def test_whole_mask_write_of_one_value(device: xp.Device, shape: tuple[int, ...]) -> None:
    """``x[mask] = v`` with a boolean array of x's whole shape and one value (scikit-learn's ``_logsumexp``:
    ``array[index_max] = -inf``) takes a short path that makes the general path's nodes; NumPy's values for
    arrays, views of them, empty and full masks, special values, and views taken before see the write."""
    from gpuarray.graph import node as graph
    from gpuarray.namespace import indexing_advanced
    rng = np.random.default_rng(9)
    h = rng.uniform(-3, 3, shape).astype(np.float32)
    h.flat[0] = -0.0
    for mask_of in (lambda a: a > 0.5, lambda a: a > 10, lambda a: a > -10):
        for value in (-np.inf, np.nan, -0.0, 2.5):
            x = xp.asarray(h, device=device) * 1.0
            y = x[::-1] if len(shape) == 1 else x[1:]
            hy = (h * 1.0)[::-1] if len(shape) == 1 else (h * 1.0)[1:]
            for arr, want in ((x, h.copy()), (y, hy.copy())):
                m, hm = mask_of(arr), mask_of(want)
                val = graph.const(value, arr._node.dtype, arr._node.device)
                assert indexing_advanced.advanced_setitem(arr._node, m, val) is \
                    indexing_advanced.advanced_setitem(arr._node, (m,), val)
                before = arr[...]                       # a view taken before the write sees it
                arr[m] = value
                want[hm] = value
                assert_same(arr, want)
                assert_same(before, want)
