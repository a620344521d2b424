"""Reductions against NumPy on both providers: dtypes, axes, keepdims, special values, sizes."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.exceptions import AxisError

import gpuarray as xp

from .conftest import assert_same

AXES = [None, 0, -1, (0, 2), (1,), ()]
DTYPES = ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "float32", "float64"]


def _data(dtype: str) -> np.ndarray:
    dt = np.dtype(dtype)
    rng = np.random.default_rng(1)
    if dt.kind == "b":
        return rng.random((3, 4, 5)) > 0.5
    if dt.kind == "f":
        return rng.standard_normal((3, 4, 5)).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -20), min(info.max, 20), (3, 4, 5)).astype(dt)


def _np_sum_dtype(dt: np.dtype) -> np.dtype:
    if dt.kind in "bi":
        return np.dtype(np.int64)
    if dt.kind == "u":
        return np.dtype(np.uint64)
    return dt


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", AXES, ids=repr)
def test_sum_prod_max_min(device, dtype, axis):
    a = _data(dtype)
    g = xp.asarray(a, device=device)
    tol = {"rtol": 1e-5} if a.dtype == np.float32 else {"rtol": 1e-12}
    if a.dtype != np.bool_:
        assert_same(xp.sum(g, axis=axis), np.sum(a, axis=axis, dtype=_np_sum_dtype(a.dtype)), **tol)
        assert_same(xp.prod(g, axis=axis, keepdims=True),
                    np.prod(a, axis=axis, dtype=_np_sum_dtype(a.dtype), keepdims=True), **tol)
        assert_same(xp.max(g, axis=axis), np.max(a, axis=axis))
        assert_same(xp.min(g, axis=axis, keepdims=True), np.min(a, axis=axis, keepdims=True))
    assert_same(xp.any(g, axis=axis), np.any(a, axis=axis))
    assert_same(xp.all(g, axis=axis, keepdims=True), np.all(a, axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)], ids=repr)
def test_mean_var_std(device, dtype, axis):
    a = _data(dtype) * 3 + 1
    g = xp.asarray(a, device=device)
    tol = 2e-5 if dtype == "float32" else 1e-12
    assert_same(xp.mean(g, axis=axis), np.mean(a, axis=axis), rtol=tol)
    assert_same(xp.var(g, axis=axis), np.var(a, axis=axis), rtol=tol)
    assert_same(xp.var(g, axis=axis, correction=1, keepdims=True), np.var(a, axis=axis, ddof=1, keepdims=True),
                rtol=tol)
    assert_same(xp.std(g, axis=axis, correction=1), np.std(a, axis=axis, ddof=1), rtol=tol)


def test_special_values(device):
    nan, inf = np.nan, np.inf
    a = np.array([[1.0, nan, 3.0], [inf, -inf, 0.0], [-0.0, -0.0, -0.0], [inf, 1.0, 2.0]], np.float32)
    g = xp.asarray(a, device=device)
    with np.errstate(invalid="ignore"):
        for fn in ("sum", "prod", "max", "min"):
            for axis in (None, 0, 1):
                # the sign of a zero result depends on NumPy's summation order and memory layout
                # (sum of [-0., -0.] along a contiguous axis is +0.); it is not compared here
                assert_same(getattr(xp, fn)(g, axis=axis), getattr(np, fn)(a, axis=axis), rtol=1e-6,
                            check_signed_zero=False)
        assert_same(xp.any(g, axis=1), np.any(a, axis=1))
        assert_same(xp.all(g, axis=0), np.all(a, axis=0))


def test_integer_extremes_wrap_like_numpy(device):
    a = np.array([np.iinfo(np.int32).max, 1, np.iinfo(np.int32).min, -1], np.int32)
    g = xp.asarray(a, device=device)
    assert_same(xp.sum(g, dtype=xp.int32), np.sum(a, dtype=np.int32))
    assert_same(xp.sum(g), np.sum(a, dtype=np.int64))
    assert_same(xp.max(g), np.max(a))
    assert_same(xp.min(xp.asarray(np.array([5, 200, 7], np.uint8), device=device)), np.uint8(5)[()])


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
def test_empty_and_0d(device):
    e = xp.asarray(np.zeros((0, 3), np.float32), device=device)
    assert_same(xp.sum(e), np.float32(0.0)[()])
    assert_same(xp.sum(e, axis=0), np.zeros(3, np.float32))
    assert_same(xp.prod(e, axis=0), np.ones(3, np.float32))
    assert_same(xp.sum(e, axis=1), np.zeros(0, np.float32))
    assert_same(xp.any(e), np.False_[()])
    assert_same(xp.all(e), np.True_[()])
    with np.errstate(invalid="ignore"):
        assert_same(xp.mean(e, axis=0), np.mean(np.zeros((0, 3), np.float32), axis=0))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        xp.max(e, axis=0)
    assert_same(xp.max(e, axis=1), np.zeros(0, np.float32))
    s = xp.asarray(np.float32(2.5), device=device)
    assert_same(xp.sum(s), np.float32(2.5)[()])
    assert_same(xp.max(s, axis=0), np.float32(2.5)[()])


@pytest.mark.parametrize("n", [4097, 100_003])
def test_large_two_pass(device, n):
    a = np.random.default_rng(2).random(n, dtype=np.float32)
    g = xp.asarray(a, device=device)
    assert_same(xp.sum(g), np.sum(a), rtol=1e-5)
    assert_same(xp.max(g), np.max(a))
    ints = xp.asarray(np.arange(n, dtype=np.int32), device=device)
    assert_same(xp.sum(ints), np.sum(np.arange(n, dtype=np.int64)))
    m = xp.asarray(a[: (n // 7) * 7].reshape(7, -1), device=device)
    assert_same(xp.sum(m, axis=1), np.sum(a[: (n // 7) * 7].reshape(7, -1), axis=1), rtol=1e-5)


def test_fused_prologue_is_one_kernel(wgpu_device):
    x = xp.asarray(np.linspace(0, 1, 1000, dtype=np.float32), device=wgpu_device)
    y = xp.asarray(np.linspace(1, 2, 1000, dtype=np.float32), device=wgpu_device)
    xp.evaluate(x + 0, y + 0)
    xp.reset_metrics()
    r = xp.sum(xp.exp(x) * y)
    xp.evaluate(r)
    assert xp.metrics()["dispatches"] == 1
    xs, ys = np.linspace(0, 1, 1000, dtype=np.float32), np.linspace(1, 2, 1000, dtype=np.float32)
    assert_same(r, np.sum(np.exp(xs) * ys), rtol=1e-5)


def test_reduction_of_views(device):
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    g = xp.asarray(a, device=device)
    assert_same(xp.sum(g[:, ::-1, 1:].mT, axis=(0, 1)), np.sum(np.swapaxes(a[:, ::-1, 1:], -1, -2), axis=(0, 1)))
    assert_same(xp.max(g.reshape(12, 5)[::3], axis=0), np.max(a.reshape(12, 5)[::3], axis=0))


def test_reduction_errors(device):
    g = xp.asarray(np.zeros((2, 3), np.float32), device=device)
    with pytest.raises(AxisError):
        xp.sum(g, axis=2)
    with pytest.raises(ValueError, match="duplicate"):
        xp.sum(g, axis=(0, 0))
    with pytest.raises(TypeError, match="floating-point"):
        xp.mean(xp.asarray([1, 2], device=device))
    with pytest.raises(TypeError):
        xp.sum([1, 2])
    with pytest.raises(TypeError, match="axis must be an int"):
        xp.sum(g, axis=(1.0,))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # NumPy's, for ddof past the count and empty slices
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
def test_reduction_methods_match_numpy(device, dtype):
    """``x.sum()``, ``x.std(axis=0)`` ... with their default arguments call gpuarray's function
    directly (``_methods._plain``); with any other argument they go through NumPy's dispatch. Both
    give NumPy's dtypes, values, special values and errors."""
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{dtype} not on {device.name}")
    a = _data(dtype)
    if a.dtype.kind == "f":
        a = a * 3 + 1
        a[0, 1, 2], a[2, 0, 1] = np.nan, np.inf          # NaN and infinity propagate as in NumPy
        a[1] = np.abs(a[1])
    g = xp.asarray(a, device=device)
    tol = {"rtol": 2e-5, "atol": 1e-6} if a.dtype != np.float64 else {"rtol": 1e-12}
    with np.errstate(all="ignore"):
        for axis in (None, 0, 1, -1, 2):
            for keepdims in (False, True):
                for name in ("sum", "prod", "mean", "var", "std", "max", "min"):
                    if a.dtype.kind != "f" and name in ("mean", "var", "std", "prod"):
                        continue
                    want = getattr(a, name)(axis=axis, keepdims=keepdims)
                    assert_same(getattr(g, name)(axis=axis, keepdims=keepdims), np.asarray(want), **tol)
                if a.dtype.kind == "f":
                    for ddof in (1, 2.5, 4):        # past the count: inf or NaN, as NumPy gives
                        assert_same(g.var(axis=axis, ddof=ddof, keepdims=keepdims),
                                    np.asarray(a.var(axis=axis, ddof=ddof, keepdims=keepdims)), **tol)
                        assert_same(g.std(axis, None, None, ddof), np.asarray(a.std(axis, None, None, ddof)), **tol)
        # arguments past the common case take NumPy's dispatch, with NumPy's answers
        assert_same(g.sum(axis=1, dtype=np.float64 if device.supports(np.dtype("float64")) else np.float32),
                    np.asarray(a.sum(axis=1, dtype=np.float64 if device.supports(np.dtype("float64"))
                                     else np.float32)), **tol)
        assert_same(g.max(axis=(0, 2)), np.asarray(a.max(axis=(0, 2))))
        assert_same(g.min(axis=np.int64(1)), np.asarray(a.min(axis=np.int64(1))))
        assert_same(g.sum(initial=2), np.asarray(a.sum(initial=2, dtype=_np_sum_dtype(a.dtype))), **tol)
        assert_same(g.max(axis=0, where=a > 0, initial=3), np.asarray(a.max(axis=0, where=a > 0, initial=3)))
        if a.dtype.kind == "f":
            assert_same(g.std(axis=1, correction=1), np.asarray(np.std(a, axis=1, correction=1)), **tol)
            assert_same(g.mean(axis=0, where=a > 1), np.asarray(a.mean(axis=0, where=a > 1)), **tol)
    for name in ("sum", "max", "std"):
        with pytest.raises(AxisError):
            getattr(g, name)(axis=3)
        with pytest.raises(AxisError):
            getattr(g, name)(axis=-4)
    with pytest.raises(ValueError, match="zero-size array"):
        xp.asarray(np.zeros((0, 3), a.dtype), device=device).max(axis=0)


def test_reduction_methods_of_0d_and_views(device):
    a = np.float32(2.5)
    g = xp.asarray(a, device=device)
    for name in ("sum", "mean", "std", "max"):
        for axis in (None, 0, -1):
            try:
                want = np.asarray(getattr(np.asarray(a), name)(axis=axis))
            except AxisError:       # NumPy's mean, var and std take no axis of a 0-d array; sum does
                with pytest.raises(AxisError):
                    getattr(g, name)(axis=axis)
                continue
            assert_same(getattr(g, name)(axis=axis), want)
    with pytest.raises(AxisError):
        g.sum(axis=1)
    h = np.arange(24, dtype=np.float32).reshape(4, 6)
    v = xp.asarray(h, device=device)[::-1, 1:].T
    assert_same(v.std(axis=0), h[::-1, 1:].T.std(axis=0), rtol=1e-6)
    assert_same(v.sum(axis=1, keepdims=True), h[::-1, 1:].T.sum(axis=1, keepdims=True))


def test_var_std_record_the_graph_of_their_formula(device):
    """``var`` and ``std`` of a real array build their nodes directly (``statistical._var_real``):
    the same nodes, hash-consed, as the formula written with the namespace's operations."""
    h = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32)
    g = xp.asarray(h, device=device)
    with xp.config(offload="always"):
        d = g - xp.sum(g, axis=0, keepdims=True) / 4.0
        want = xp.sum(d * d, axis=0, keepdims=True) / 3.0
        got = xp.var(g, axis=0, correction=1, keepdims=True)
        assert got._node is want._node
        assert xp.std(g, axis=0, correction=1, keepdims=True)._node is xp.sqrt(want)._node
        assert g.std(axis=0, ddof=1, keepdims=True)._node is xp.sqrt(want)._node     # the method's common case
        assert_same(got, h.var(axis=0, ddof=1, keepdims=True), rtol=1e-5)
