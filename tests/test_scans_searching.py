"""cumulative_sum / cumulative_prod, argmax / argmin, count_nonzero and diff against NumPy on both providers:
dtypes, axes, keepdims, special values, integer wraparound, empty and 0-d arrays, and sizes that take
the multi-block and multi-pass paths; plus dispatch counts and prologue fusion on wgpu."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.exceptions import AxisError

import gpuarray as xp
from gpuarray.providers import wgpu_scan

from .conftest import assert_same

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"]


def _data(dtype: str, shape: tuple[int, ...] = (3, 4, 5), lo: int = -20, hi: int = 20) -> np.ndarray:
    dt = np.dtype(dtype)
    rng = np.random.default_rng(7)
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, lo), min(info.max, hi), shape, endpoint=True).astype(dt)


def _acc(dt: np.dtype) -> np.dtype:
    """NumPy's dtype for sum/prod accumulation with the default int of both devices here (int64)."""
    if dt.kind in "bi":
        return np.dtype(np.int64)
    if dt.kind == "u":
        return np.dtype(np.uint64)
    return dt


def _tol(dt: np.dtype) -> dict:
    return {"rtol": 1e-5, "atol": 1e-5} if dt == np.float32 else {"rtol": 1e-12, "atol": 1e-12}


# ---------------------------------------------------------------- cumulative_sum / cumulative_prod

@pytest.fixture(params=["auto", "serial", "parallel", "lookback"])
def strategy(request, monkeypatch):
    """The wgpu scan strategy: as chosen, or forced to a thread per row / workgroups (with chunks) /
    the single-pass look-back (rows along the last axis; the others chunked)."""
    monkeypatch.setattr(wgpu_scan, "STRATEGY", request.param)
    return request.param


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumulative(device, dtype, axis):
    a = _data(dtype, lo=-3, hi=3)
    g = xp.asarray(a, device=device)
    acc = _acc(a.dtype)
    for init in (False, True):
        assert_same(xp.cumulative_sum(g, axis=axis, include_initial=init),
                    np.cumulative_sum(a, axis=axis, dtype=acc, include_initial=init), **_tol(acc))
        assert_same(xp.cumulative_prod(g, axis=axis, include_initial=init),
                    np.cumulative_prod(a, axis=axis, dtype=acc, include_initial=init), **_tol(acc))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cumulative_strategies(wgpu_device, strategy, dtype):
    a = _data(dtype, (4, 3, 5), lo=-3, hi=3)
    g = xp.asarray(a, device=wgpu_device)
    acc = _acc(a.dtype)
    for axis, init in ((0, True), (2, False)):
        assert_same(xp.cumulative_sum(g, axis=axis, include_initial=init),
                    np.cumulative_sum(a, axis=axis, dtype=acc, include_initial=init), **_tol(acc))
        assert_same(xp.cumulative_prod(g, axis=axis, include_initial=not init),
                    np.cumulative_prod(a, axis=axis, dtype=acc, include_initial=not init), **_tol(acc))


def test_cumulative_1d_axis_none_and_dtype_kwarg(device):
    a = np.array([3, -1, 4, 1, -5, 9], np.int16)
    g = xp.asarray(a, device=device)
    assert_same(xp.cumulative_sum(g), np.cumulative_sum(a, dtype=np.int64))
    assert_same(xp.cumulative_sum(g, dtype=xp.float32), np.cumulative_sum(a, dtype=np.float32))
    assert_same(xp.cumulative_prod(g, dtype=xp.int16, include_initial=True),
                np.cumulative_prod(a, dtype=np.int16, include_initial=True))
    assert_same(xp.cumulative_sum(g, axis=-1, dtype=xp.float64), np.cumulative_sum(a, dtype=np.float64))
    b = np.array([True, False, True])
    gb = xp.asarray(b, device=device)
    assert_same(xp.cumulative_sum(gb, dtype=xp.bool), np.cumulative_sum(b, dtype=bool))
    assert_same(xp.cumulative_prod(gb, dtype=xp.bool), np.cumulative_prod(b, dtype=bool))


def test_cumulative_integer_wraparound(device, strategy):
    if device.kind != "wgpu" and strategy != "auto":
        pytest.skip("the strategy is a wgpu provider setting")
    for dt in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"):
        info = np.iinfo(dt)
        a = np.array([info.max, 1, info.max, info.min, info.min, 3, -1 if info.min else 5], dt)
        g = xp.asarray(a, device=device)
        with np.errstate(over="ignore"):
            assert_same(xp.cumulative_sum(g, dtype=dt), np.cumulative_sum(a, dtype=dt))
            assert_same(xp.cumulative_prod(g, dtype=dt, include_initial=True),
                        np.cumulative_prod(a, dtype=dt, include_initial=True))
            # the stored values are wrapped, so a later kernel on the device reads NumPy's values
            assert_same(xp.cumulative_sum(g, dtype=dt) < 1, np.cumulative_sum(a, dtype=dt) < 1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cumulative_special_values(device, strategy, dtype):
    if device.kind != "wgpu" and strategy != "auto":
        pytest.skip("the strategy is a wgpu provider setting")
    nan, inf = np.nan, np.inf
    big = np.finfo(dtype).max / 4
    a = np.array([[-0.0, -0.0, 1.0, -1.0, -0.0, 2.0],
                  [inf, 1.0, -inf, 2.0, 3.0, -1.0],
                  [1.0, nan, 2.0, -0.0, inf, 1.0],
                  [-0.0, 5.0, inf, 0.0, -2.0, 1.0],
                  # a running 0 (or inf) stays 0 (inf) where a regrouped product overflows (underflows)
                  [0.0, big, big, -big, big, 3.0],
                  [-inf, 1 / big, 1 / big, 1 / big, -1 / big, 0.5]], dtype)
    g = xp.asarray(a, device=device)
    with np.errstate(invalid="ignore"):
        for axis in (0, 1):
            for init in (False, True):
                assert_same(xp.cumulative_sum(g, axis=axis, include_initial=init),
                            np.cumulative_sum(a, axis=axis, include_initial=init))
                assert_same(xp.cumulative_prod(g, axis=axis, include_initial=init),
                            np.cumulative_prod(a, axis=axis, include_initial=init))


def test_cumulative_empty_and_errors(device):
    for shape, axis in (((0,), 0), ((3, 0), 0), ((3, 0), 1), ((0, 4), 1), ((0, 4), 0), ((2, 0, 3), 2)):
        a = np.zeros(shape, np.float32)
        g = xp.asarray(a, device=device)
        for init in (False, True):
            assert_same(xp.cumulative_sum(g, axis=axis, include_initial=init),
                        np.cumulative_sum(a, axis=axis, include_initial=init))
            assert_same(xp.cumulative_prod(g, axis=axis, include_initial=init),
                        np.cumulative_prod(a, axis=axis, include_initial=init))
    with pytest.raises(ValueError, match="at least one dimension"):
        xp.cumulative_sum(xp.asarray(1.0, device=device))
    with pytest.raises(ValueError, match="axis must be given"):
        xp.cumulative_prod(xp.zeros((2, 2), device=device))
    with pytest.raises(AxisError):
        xp.cumulative_sum(xp.zeros((2, 2), device=device), axis=2)
    with pytest.raises(TypeError):
        xp.cumulative_sum(np.zeros(3))


@pytest.mark.parametrize("shape,axis", [((100_000,), 0), ((3, 40_000), 1), ((40_000, 3), 0),
                                        ((300, 1000), 1), ((700, 50), 0), ((5000, 20), 1), ((20, 3000), 0)])
def test_cumulative_large(device, strategy, shape, axis):
    if device.kind != "wgpu" and strategy != "auto":
        pytest.skip("the strategy is a wgpu provider setting")
    if strategy == "parallel" and len(shape) == 2 and shape[1 - axis] >= 3000:
        pytest.skip("thousands of workgroups with barriers: slow on lavapipe, and never chosen for such shapes")
    rng = np.random.default_rng(3)
    # integer-valued floats: every partial sum is exact, whatever the order of additions
    f = rng.integers(-3, 4, shape).astype(np.float32)
    g = xp.asarray(f, device=device)
    assert_same(xp.cumulative_sum(g, axis=axis), np.cumulative_sum(f, axis=axis))
    assert_same(xp.cumulative_sum(g, axis=axis, include_initial=True),
                np.cumulative_sum(f, axis=axis, include_initial=True))
    s = np.where(rng.random(shape) < 0.5, -1, 1).astype(np.float64)
    assert_same(xp.cumulative_prod(xp.asarray(s, device=device), axis=axis),
                np.cumulative_prod(s, axis=axis))
    i8 = rng.integers(-128, 128, shape).astype(np.int8)
    assert_same(xp.cumulative_sum(xp.asarray(i8, device=device), axis=axis, dtype=xp.int8),
                np.cumulative_sum(i8, axis=axis, dtype=np.int8))
    u = rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)
    assert_same(xp.cumulative_sum(xp.asarray(u, device=device), axis=axis),
                np.cumulative_sum(u, axis=axis, dtype=np.uint64))


# ---------------------------------------------------------------- argmax / argmin

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argmax_argmin(device, dtype, axis):
    a = _data(dtype, lo=-2, hi=2)          # few values: many ties, the first occurrence must win
    if a.dtype.kind == "f":
        a = np.round(a)
    g = xp.asarray(a, device=device)
    for keepdims in (False, True):
        assert_same(xp.argmax(g, axis=axis, keepdims=keepdims), np.argmax(a, axis=axis, keepdims=keepdims))
        assert_same(xp.argmin(g, axis=axis, keepdims=keepdims), np.argmin(a, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_arg_special_values(device, dtype):
    nan, inf = np.nan, np.inf
    a = np.array([[1.0, nan, 3.0, nan],
                  [-0.0, 0.0, -0.0, 0.0],
                  [0.0, -0.0, 0.0, -0.0],
                  [-inf, -inf, -inf, -inf],
                  [inf, inf, -inf, 2.0],
                  [nan, nan, nan, nan],
                  [2.0, -inf, inf, nan]], dtype)
    g = xp.asarray(a, device=device)
    for axis in (None, 0, 1):
        assert_same(xp.argmax(g, axis=axis), np.argmax(a, axis=axis))
        assert_same(xp.argmin(g, axis=axis), np.argmin(a, axis=axis))


def test_arg_integer_extremes_0d_and_errors(device):
    for dt in ("int8", "uint8", "int32", "uint32", "int64", "uint64"):
        info = np.iinfo(dt)
        a = np.array([info.min, info.max, info.max, info.min, 0], dt)
        g = xp.asarray(a, device=device)
        assert_same(xp.argmax(g), np.argmax(a))
        assert_same(xp.argmin(g), np.argmin(a))
    z = xp.asarray(np.float32(2.5), device=device)
    assert_same(xp.argmax(z), np.argmax(np.float32(2.5)))
    assert_same(xp.argmin(z, axis=0), np.argmin(np.float32(2.5), axis=0))
    assert_same(xp.argmax(z, keepdims=True), np.argmax(np.float32(2.5), keepdims=True))
    with pytest.raises(ValueError, match="empty"):
        xp.argmax(xp.zeros((0,), device=device))
    with pytest.raises(ValueError, match="empty"):
        xp.argmin(xp.zeros((3, 0), device=device), axis=1)
    # reducing a non-empty axis of an array with an empty other axis is fine
    assert_same(xp.argmax(xp.zeros((0, 3), device=device), axis=1), np.argmax(np.zeros((0, 3)), axis=1))
    with pytest.raises(AxisError):
        xp.argmax(xp.zeros((2, 2), device=device), axis=2)
    with pytest.raises(TypeError):
        xp.argmax(xp.zeros((2, 2), device=device), axis=(0, 1))


@pytest.mark.parametrize("shape,axis", [((100_000,), None), ((2, 60_000), 1), ((60_000, 2), 0),
                                        ((40, 50, 60), None), ((500, 300), 1)])
def test_arg_large(device, shape, axis):
    rng = np.random.default_rng(5)
    a = rng.integers(-1000, 1000, shape).astype(np.float32)
    flat = a.reshape(-1)
    flat[-7] = 5000.0       # a late maximum and its tie
    flat[-3] = 5000.0
    flat[len(flat) // 3] = -5000.0
    g = xp.asarray(a, device=device)
    assert_same(xp.argmax(g, axis=axis), np.argmax(a, axis=axis))
    assert_same(xp.argmin(g, axis=axis, keepdims=True), np.argmin(a, axis=axis, keepdims=True))
    flat[len(flat) // 2] = np.nan
    flat[len(flat) // 2 + 5] = np.nan
    g = xp.asarray(a, device=device)
    assert_same(xp.argmax(g, axis=axis), np.argmax(a, axis=axis))
    assert_same(xp.argmin(g, axis=axis), np.argmin(a, axis=axis))
    i = rng.integers(-3, 3, shape).astype(np.int16)
    gi = xp.asarray(i, device=device)
    assert_same(xp.argmax(gi, axis=axis), np.argmax(i, axis=axis))
    assert_same(xp.argmin(gi, axis=axis), np.argmin(i, axis=axis))


@pytest.mark.parametrize("shape,axis", [((5000, 64), 1), ((70_000, 3), 1), ((64, 5000), 0), ((4096, 256), -1),
                                        ((20, 300, 7), 2)])
def test_arg_many_short_rows(device, shape, axis):
    """Many outputs over short rows (a thread per output on wgpu), with ties, NaN, ±0 and a fused
    prologue (k-means' argmin of distances)."""
    rng = np.random.default_rng(9)
    a = np.round(rng.uniform(-4, 4, shape)).astype(np.float32)
    flat = a.reshape(-1)
    flat[::97] = np.nan
    flat[5::89] = -0.0
    g = xp.asarray(a, device=device)
    assert_same(xp.argmax(g, axis=axis), np.argmax(a, axis=axis))
    assert_same(xp.argmin(g, axis=axis, keepdims=True), np.argmin(a, axis=axis, keepdims=True))
    assert_same(xp.argmin((g - 1.5) ** 2, axis=axis), np.argmin((a - np.float32(1.5)) ** 2, axis=axis))
    i = rng.integers(-3, 3, shape).astype(np.int64)
    assert_same(xp.argmax(xp.asarray(i, device=device), axis=axis), np.argmax(i, axis=axis))


# ---------------------------------------------------------------- count_nonzero

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), ()], ids=repr)
def test_count_nonzero(device, dtype, axis):
    a = _data(dtype, lo=-1, hi=1)
    if a.dtype.kind == "f":
        a = np.round(a)
        a[0, 0, :3] = [np.nan, -0.0, np.inf]
    g = xp.asarray(a, device=device)
    for keepdims in (False, True):
        want = np.asarray(np.count_nonzero(a, axis=axis, keepdims=keepdims)).astype(np.int64)
        assert_same(xp.count_nonzero(g, axis=axis, keepdims=keepdims), want)


def test_count_nonzero_empty_and_large(device):
    e = np.zeros((0, 4), np.float32)
    ge = xp.asarray(e, device=device)
    assert_same(xp.count_nonzero(ge), np.asarray(np.count_nonzero(e), dtype=np.int64))
    assert_same(xp.count_nonzero(ge, axis=0), np.count_nonzero(e, axis=0).astype(np.int64))
    big = (np.random.default_rng(2).random(100_000) < 0.3).astype(np.float32)
    assert_same(xp.count_nonzero(xp.asarray(big, device=device)), np.asarray(np.count_nonzero(big), np.int64))
    z = np.float64(0.0)
    assert_same(xp.count_nonzero(xp.asarray(z, device=device)), np.asarray(0, np.int64))


# ---------------------------------------------------------------- diff

@pytest.mark.parametrize("dtype", DTYPES)
def test_diff(device, dtype):
    a = _data(dtype)
    g = xp.asarray(a, device=device)
    with np.errstate(over="ignore"):
        for axis in (0, 1, -1):
            for n in (0, 1, 2, 3, 6):
                assert_same(xp.diff(g, axis=axis, n=n), np.diff(a, axis=axis, n=n), **_tol(a.dtype))


def test_diff_wraparound_and_special_values(device):
    info = np.iinfo(np.int8)
    a = np.array([info.min, info.max, info.min, 0, 1], np.int8)
    u = np.array([0, 255, 1, 0], np.uint8)
    f = np.array([1.0, np.inf, np.inf, np.nan, -0.0, 0.0, -np.inf], np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        for arr in (a, u, f):
            g = xp.asarray(arr, device=device)
            for n in (1, 2):
                assert_same(xp.diff(g, n=n), np.diff(arr, n=n))


def test_diff_prepend_append(device):
    rng = np.random.default_rng(9)
    a = rng.integers(-9, 9, (3, 4)).astype(np.int32)
    p = rng.integers(-9, 9, (3, 2)).astype(np.int32)
    q = rng.integers(-9, 9, (1, 4)).astype(np.int32)
    g, gp, gq = (xp.asarray(v, device=device) for v in (a, p, q))
    assert_same(xp.diff(g, prepend=gp), np.diff(a, prepend=p))
    assert_same(xp.diff(g, axis=0, append=gq, n=2), np.diff(a, axis=0, append=q, n=2))
    assert_same(xp.diff(g, axis=1, prepend=gp, append=gp, n=3), np.diff(a, axis=1, prepend=p, append=p, n=3))
    assert_same(xp.diff(g, axis=0, prepend=5, append=-1), np.diff(a, axis=0, prepend=np.int32(5),
                                                                  append=np.int32(-1)))
    f = np.array([1.0, 4.0, 9.0], np.float32)
    assert_same(xp.diff(xp.asarray(f, device=device), prepend=xp.asarray(np.float32(0.5), device=device)),
                np.diff(f, prepend=np.float32(0.5)))


def test_diff_errors(device):
    with pytest.raises(ValueError, match="at least one dimension"):
        xp.diff(xp.asarray(1.0, device=device))
    with pytest.raises(ValueError, match="non-negative"):
        xp.diff(xp.zeros(3, device=device), n=-1)
    with pytest.raises(AxisError):
        xp.diff(xp.zeros(3, device=device), axis=1)
    with pytest.raises(ValueError, match="shape"):
        xp.diff(xp.zeros((2, 3), device=device), axis=1, prepend=xp.zeros((3, 1), device=device))


# ---------------------------------------------------------------- on the device: dispatches, fusion

def test_wgpu_dispatches_and_fused_prologue(wgpu_device):
    small = np.linspace(-2, 2, 1000).astype(np.float32)
    big = np.linspace(-2, 2, 100_000).astype(np.float32)
    # long rows: the single-pass look-back (clear its status words, scan) on a GPU adapter; on a CPU
    # adapter chunk totals, their scan, the chunks again (the prologue runs in passes 1 and 3)
    long = 3 if str(wgpu_device.provider.adapter.info.get("adapter_type")) == "CPU" else 2
    cases = [
        # (function, input, expected dispatches): the exp prologue runs inside the kernel
        (lambda v: xp.cumulative_sum(xp.exp(v)), small, 1,
         lambda v: np.cumulative_sum(np.exp(v))),
        (lambda v: xp.cumulative_prod(v * 0.5 + 1.0, include_initial=True), small, 1,
         lambda v: np.cumulative_prod(v * np.float32(0.5) + np.float32(1), include_initial=True)),
        (lambda v: xp.cumulative_sum(xp.exp(v)), big, long, lambda v: np.cumulative_sum(np.exp(v))),
        # float products too: a running 0 stays 0 where the later factors' product overflows
        (lambda v: xp.cumulative_prod(v * 0.5 + 1.0), big, long,
         lambda v: np.cumulative_prod(v * np.float32(0.5) + np.float32(1))),
        (lambda v: xp.argmax(xp.exp(v) - v), small, 1, lambda v: np.argmax(np.exp(v) - v)),
        # few outputs over many elements: per-chunk pairs, then their combination
        (lambda v: xp.argmin(xp.sin(v * 3.0)), big, 2, lambda v: np.argmin(np.sin(v * np.float32(3)))),
        (lambda v: xp.count_nonzero(xp.floor(v)), small, 1, lambda v: np.count_nonzero(np.floor(v))),
        (lambda v: xp.diff(v * v, n=3), small, 1, lambda v: np.diff(v * v, n=3)),
        # prepend / append are joined by concat, which fuses too
        (lambda v: xp.diff(v, prepend=v[:2], append=v[::-1], n=2), small, 1,
         lambda v: np.diff(v, prepend=v[:2], append=v[::-1], n=2)),
    ]
    for fn, host, dispatches, ref in cases:
        x = xp.asarray(host, device=wgpu_device)
        xp.evaluate(x)
        xp.reset_metrics()
        r = fn(x)
        xp.evaluate(r)
        xp.synchronize(r.device)    # small work waits for later evaluations to share a submit
        m = xp.metrics()
        assert m["host_fallbacks"] == 0, m
        assert m["dispatches"] == dispatches, m
        assert m["submits"] == 1, m
        np.testing.assert_allclose(np.asarray(r), ref(host), rtol=2e-4, atol=1e-4)
