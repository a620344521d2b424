"""Radix selection (``select`` kernels: namespace/selection.py) and the percentile / quantile /
median / nan* paths over a whole array that use it, against NumPy on both providers: many ``q``,
every method, ties, NaN, signed zeros, infinities, sizes around a workgroup and past 65535
workgroups' worth of elements, float32 / float64 / integer inputs."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.namespace import quantiles as _q
from gpuarray.namespace import selection
from gpuarray.providers.host_select import order_statistics as host_order_statistics
from gpuarray.runtime import planner

from .conftest import assert_same

METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
           "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint", "nearest"]
QS = [0.0, 100.0, 50.0, 30.7, [0.0, 12.5, 50.0, 99.9, 100.0], np.linspace(0, 100, 11)]


def _run(device: xp.Device, fn: Callable[..., Any], a: np.ndarray, *args: Any, **kw: Any) -> tuple[Any, bool]:
    """``fn`` on ``a`` as a GpuArray on ``device``, computed without a host fallback; and whether a
    ``select`` kernel (and no sort) ran."""
    before = xp.metrics()["host_fallbacks"]
    mark = planner._log[-1] if planner._log else None      # the newest placement decision so far
    with xp.config(offload="always", fallback="raise" if device.kind == "wgpu" else "silent"):
        r = np.asarray(fn(xp.asarray(a, device=device), *args, **kw))
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == before
    log = list(planner._log)
    new = log[next((i + 1 for i in range(len(log) - 1, -1, -1) if log[i] is mark), 0):]
    kernels = [str(e["kernel"] if type(e) is dict else e) for e in new]
    return r, any("select(" in k for k in kernels) and not any("sort(" in k for k in kernels)


def _same(device: xp.Device, fn: Callable[..., Any], a: np.ndarray, *args: Any, selected: bool = True,
          zero_sign: bool = False, rtol: float = 1e-12, **kw: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.asarray(fn(a.copy(), *args, **kw))
    got, used = _run(device, fn, a, *args, **kw)
    assert_same(got, want, rtol=rtol, check_signed_zero=zero_sign)
    assert used == selected, f"select kernel used: {used}"


def _data(n: int, dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(n) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


# ============================================================ order_statistics
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint32", "int64", "uint64", "int8", "uint16"])
def test_order_statistics_exact(device, dtype):
    rng = np.random.default_rng(1)
    for n in (1, 2, 255, 256, 257, 5000):
        x = _data(n, dtype, seed=n)
        if np.dtype(dtype).kind == "f" and n > 4:
            x[:5] = [np.nan, -0.0, 0.0, np.inf, -np.inf]
        if np.dtype(dtype).kind in "iu" and n > 2:
            info = np.iinfo(dtype)
            x[:2] = [info.min, info.max]
        ranks = np.concatenate([[0, n - 1, n // 2], rng.integers(0, n, 5)])
        got = np.asarray(selection.order_statistics(xp.asarray(x, device=device), ranks))
        want = host_order_statistics(x, ranks)
        np.testing.assert_array_equal(want[:-1], np.sort(x)[ranks])     # NumPy's order (zeros: either sign)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        zero = want == 0
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))   # -0.0 before 0.0


def test_order_statistics_clamps_and_device_ranks(device):
    x = np.array([5.0, -1.0, 3.0, 3.0, np.nan])
    g = xp.asarray(x, device=device)
    got = np.asarray(selection.order_statistics(g, [-3, 0, 3, 4, 99]))
    np.testing.assert_array_equal(got, [-1.0, -1.0, 5.0, np.nan, np.nan, np.nan])     # clamped; NaN flag last
    r = xp.asarray(np.array([2, 1], dtype=np.int64), device=device)
    np.testing.assert_array_equal(np.asarray(selection.order_statistics(g, r)), [3.0, 3.0, np.nan])


def test_order_statistics_errors(device):
    g = xp.asarray(np.ones(4, np.complex64), device=device)
    with pytest.raises(ValueError, match="no selection for complex64"):
        selection.order_statistics(g, [0])
    with pytest.raises(ValueError, match="at most 64"):
        selection.order_statistics(xp.asarray(np.ones(100), device=device), np.arange(65))
    with pytest.raises(TypeError, match="ranks must be one-dimensional integers"):
        selection.order_statistics(xp.asarray(np.ones(4), device=device), xp.asarray(np.ones(2), device=device))


# ============================================================ percentile / quantile by selection
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8"])
def test_percentile_many_q(device, dtype):
    for n in (1, 2, 255, 256, 257, 3001):
        a = _data(n, dtype, seed=n)
        for q in QS:
            rtol = 1e-6 if dtype == "float32" else 1e-12
            _same(device, np.percentile, a, q, rtol=rtol)
        _same(device, np.quantile, a, np.array([0.25, 0.75]), rtol=1e-6)
        _same(device, np.median, a, rtol=1e-6)
        _same(device, np.median, a, axis=0, keepdims=True, rtol=1e-6)


def test_every_method(device):
    a = _data(1001, "float64")
    t = np.random.default_rng(3).integers(-4, 5, 600).astype(np.float32)
    for method in METHODS:
        _same(device, np.percentile, a, [0, 30.7, 50, 100], method=method)
        _same(device, np.quantile, t, 0.37, method=method, rtol=1e-6)
        _same(device, np.nanquantile, a, [0.1, 0.5, 0.9], method=method)


def test_ties(device):
    for a in (np.full(300, 2.5), np.full(7, -1, np.int32), np.repeat([1.0, 3.0], [100, 157]),
              np.repeat(np.array([7, -7], np.int64), [2, 301])):
        for q in ([0, 25, 50, 75, 100], 30.7, 49.9):
            _same(device, np.percentile, a, q)
            _same(device, np.nanpercentile, a, q)
    _same(device, _q_nanmedian, np.repeat([1.0, 3.0], [100, 100]))


def _q_nanmedian(a: Any) -> Any:
    return np.nanmedian(a)


def test_nan(device):
    a = _data(1000, "float64")
    a[[3, 500, 999]] = np.nan
    for q in (0, 30.7, 50, 100, [10, 90]):
        _same(device, np.percentile, a, q)
        _same(device, np.nanpercentile, a, q)
        _same(device, np.nanpercentile, a.astype(np.float32), q, rtol=1e-6)
    _same(device, np.nanmedian, a)
    _same(device, np.nanmedian, a[:-1])
    for full in (np.full(5, np.nan), np.full(300, np.nan, np.float32)):
        _same(device, np.percentile, full, [0, 50])
        _same(device, np.nanpercentile, full, 50)   # NumPy: float32 all-NaN with array q -> float32 (data-dependent)
        _same(device, np.nanmedian, full)
    _same(device, np.nanpercentile, np.full(5, np.nan), [0, 50])
    one = np.array([np.nan, 4.0, np.nan])
    _same(device, np.nanquantile, one, [0.0, 0.5, 1.0])
    _same(device, np.nanmedian, one)
    _same(device, np.median, a)
    _same(device, np.median, a.astype(np.float32), rtol=1e-6)
    _same(device, np.median, a.reshape(10, 100), axis=1, selected=False)     # rows: the sort


def test_signed_zeros_and_infinities(device):
    _same(device, np.percentile, np.full(257, -0.0), [0, 30.7, 50, 100], zero_sign=True)
    _same(device, np.nanmedian, np.full(256, -0.0, np.float32))     # NumPy: mean(-0.0, -0.0) is 0.0 there
    mixed = np.array([0.0, -0.0, 1.0, -0.0, 0.0, -1.0] * 50)
    _same(device, np.percentile, mixed, [0, 10, 50, 90, 100])
    inf = np.array([np.inf, -np.inf, 1.0, 2.0, np.inf, -np.inf, 0.5])
    for q in ([0, 100], [1, 99], 50, 30.7):
        _same(device, np.percentile, inf, q)
        _same(device, np.nanpercentile, np.append(inf, np.nan), q)
    _same(device, np.percentile, np.array([-np.inf, np.inf]), 50)       # inf - inf: NaN, as NumPy


def test_shapes_keepdims_views_scalars(device):
    base = _data(6 * 7 * 5, "float32").reshape(6, 7, 5)
    _same(device, np.percentile, base, [20, 80], rtol=1e-6)
    _same(device, np.percentile, base, 20, axis=(0, 1, 2), keepdims=True, rtol=1e-6)
    _same(device, lambda z: np.quantile(z[::2, 1:, ::-1], 0.3), base, rtol=1e-6)
    _same(device, np.quantile, np.array(2.5), 0.3)
    _same(device, np.percentile, base, [[5.0, 50.0], [60.0, 100.0]], method="lower")
    _same(device, np.percentile, base, 40, axis=1, selected=False, rtol=1e-6)     # rows: the sort
    _same(device, np.percentile, base, np.linspace(0, 100, 40), selected=False, rtol=1e-6)   # 80 ranks


def test_switch_off(device, monkeypatch):
    monkeypatch.setattr(selection, "ENABLED", False)
    _same(device, np.percentile, _data(500, "float64"), 30.7, selected=False)


def test_median_selected(device):
    for a in (_data(1000, "float64"), _data(999, "int32"), np.array([1.0, np.nan, 2.0]), np.full(4, -0.0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = np.median(a)
        got = np.asarray(_q.median_selected(xp.asarray(a, device=device)))
        assert_same(got, np.asarray(want), rtol=1e-12)


def test_large_past_65535_workgroups(device):
    n = 65535 * 256 + 300
    a = np.random.default_rng(7).random(n, dtype=np.float32)
    a[12345] = np.nan
    _same(device, np.percentile, a, 30.0, rtol=1e-6)
    _same(device, np.nanpercentile, a, [0.0, 30.7, 100.0], rtol=1e-6)


def test_repeated_calls_kept_parameters(device):
    """Host plans, layouts, result dtypes and parameter arrays kept between calls (issue 19's host
    cost) give each call its own answer: other q of one length, other n, q of other types, the sort
    path's gathers, and NumPy's errors raised again on a repeated bad call."""
    a, b = _data(1001, "float32", seed=1), _data(1000, "float32", seed=2)
    m = _data(12 * 50, "float64", seed=3).reshape(12, 50)
    for _ in range(2):
        for q in (30.0, 70.0, 30, np.float64(30.0), np.float32(30.0), [30.0], [70.0], [5.0, 95.0], [95.0, 5.0]):
            _same(device, np.percentile, a, q, rtol=1e-6)
            _same(device, np.percentile, b, q, rtol=1e-6)
            _same(device, np.nanpercentile, a, q, rtol=1e-6)
        _same(device, np.quantile, a, np.array([0.05, 0.25, 0.5, 0.75, 0.95]), rtol=1e-6)
        _same(device, np.quantile, a, np.array([0.1, 0.2, 0.3, 0.4, 0.5]), rtol=1e-6)
        _same(device, np.nanquantile, b, np.array([0.1, 0.9]), rtol=1e-6)
        for q in (30.0, [10.0, 50.0, 90.0], np.float64(42.0)):
            _same(device, np.percentile, m, q, axis=1, selected=False)
            _same(device, np.percentile, m, q, axis=0, method="nearest", selected=False)
        for x in (a, b, a[:-2], b.astype(np.float64)):
            _same(device, np.median, x, rtol=1e-6)
            _same(device, np.nanmedian, x, rtol=1e-6)
        with pytest.raises(ValueError):
            np.percentile(xp.asarray(a, device=device), 101)


def test_median_of_huge_floats(device):
    """The mean of the middle two in the data's dtype (an overflow to inf as NumPy's), the middle one
    alone for an odd count; with NaN (nanmedian) and without."""
    big = np.float32(3e38)
    for n in (1, 2, 3, 4):
        x = np.full(n, big, np.float32)
        _same(device, np.median, x)
        _same(device, _q_nanmedian, np.append(x, np.float32(np.nan)))
        _same(device, _q_nanmedian, -x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nanmedian_sign_of_zero(device, dtype):
    """NumPy's (nan)median is the mean of the middle value(s), a sum that starts at +0.0: a middle of
    -0.0 gives +0.0 (the selection path returned -0.0), over the whole array and along an axis."""
    cases = [[-0.0, -0.0, -0.0], [-0.0, -0.0, np.nan, -0.0], [-0.0, -0.0], [0.0, -0.0], [-0.0],
             [np.nan, np.nan], [1.0, -0.0, np.inf], [-np.inf, np.nan, -0.0, -0.0]]
    with warnings.catch_warnings(), xp.config(offload="always"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for values in cases:
            h = np.array(values, dtype=dtype)
            for fn in (np.nanmedian, np.median):
                got, want = np.asarray(fn(xp.asarray(h, device=device))), fn(h)
                assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True), (fn, values)
                assert np.signbit(got) == np.signbit(want), (fn.__name__, values, got, want)
        m = np.array([[-0.0, -0.0], [-0.0, np.nan], [1.0, -0.0]], dtype=dtype)
        for axis in (0, 1):
            got, want = np.asarray(np.nanmedian(xp.asarray(m, device=device), axis=axis)), np.nanmedian(m, axis=axis)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
