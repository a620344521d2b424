"""NumPy functions that were host fallbacks, now compositions of device operations: ``geomspace`` with
device endpoints, ``histogramdd`` / ``histogram2d``, the ``poly*`` functions, ``apply_along_axis``,
``linalg.cond`` / ``tensorsolve`` / ``tensorinv``: NumPy's values, dtypes and errors on both providers,
with no host fallback."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from tests.conftest import assert_same


@contextlib.contextmanager
def on_device(lapack: bool = False) -> Iterator[None]:
    """No host fallback inside (refused, and counted as none); with ``lapack``, the NumPy function
    itself still runs on the device but a small ``gpuarray.linalg`` decomposition inside may take
    LAPACK (counted): the wgpu Jacobi SVD declines some exactly singular matrices."""
    before = xp.metrics()["host_fallbacks"]
    with xp.config(fallback="raise"):
        yield
    if not lapack:
        assert xp.metrics()["host_fallbacks"] == before


def up(a: Any, device: xp.Device) -> xp.GpuArray:
    return xp.asarray(np.asarray(a), device=device)


# ============================================================ geomspace
GEOM = [
    (1.0, 1000.0, {}),
    (-1.0, -1000.0, {"num": 4}),
    (2.0, 5.0, {"num": 1}),
    (2.0, 5.0, {"num": 5, "endpoint": False}),
    (8.0, 2.0, {"num": 1, "endpoint": False}),
    (np.array([1.0, -2.0]), np.array([10.0, -20.0]), {"num": 3, "axis": 1}),
    (1 + 1j, 1000 + 1j, {"num": 5}),
    (np.array(-1j), np.array(-8j), {"num": 4}),
    (np.float32(1), np.float32(7), {"num": 4}),
    (np.float32(1), np.float32(7), {"num": 4, "dtype": np.float32}),
    (np.int64(1), 1000, {"num": 4, "dtype": int}),
    (np.int32(3), 5, {"num": 6}),
    (1.0, 8.0, {"num": 0}),
    (np.array([[1.0], [2.0]]), np.array([4.0, 8.0]), {"num": 3, "axis": -1}),
]


@pytest.mark.parametrize("start,stop,kw", GEOM)
def test_geomspace(device: xp.Device, start: Any, stop: Any, kw: dict) -> None:
    want = np.geomspace(start, stop, **kw)
    with on_device():
        got = np.geomspace(up(start, device), stop, **kw)
    assert isinstance(got, xp.GpuArray)
    rtol = 1e-6 if want.dtype in (np.float32, np.complex64) else 1e-13
    assert_same(got, want, rtol=rtol, atol=1e-12 if want.dtype.kind == "c" else 0)
    g, w = np.asarray(got), want
    # NumPy fixes the first (and last) sample exactly; complex ones pass through a complex division and
    # product by sign(start), whose rounding on the device is not NumPy's (within rtol above)
    if w.size and kw.get("axis", 0) == 0 and w.dtype.kind != "c":
        assert np.array_equal(g[0], w[0])
        if kw.get("endpoint", True) and kw.get("num", 50) > 1:
            assert np.array_equal(g[-1], w[-1])


def test_geomspace_errors(device: xp.Device) -> None:
    bad: list[tuple[Any, Any, dict, type]] = [
        (0.0, 4.0, {}, ValueError), (np.array([1.0, 2.0]), np.array([3.0, 0.0]), {}, ValueError),
        (1.0, 4.0, {"num": -1}, ValueError), (1.0, 4.0, {"num": 2.5}, TypeError),
        (np.array([1.0, 2.0]), np.array([1.0, 2.0, 3.0]), {}, ValueError)]
    for start, stop, kw, exc in bad:
        with pytest.raises(exc):
            np.geomspace(start, stop, **kw)
        with pytest.raises(exc):
            np.geomspace(up(start, device), stop, **kw)


# ============================================================ histogramdd, histogram2d
def _hist_case(h: Any, want: Any) -> None:
    assert isinstance(h[0], xp.GpuArray)
    assert_same(h[0], want[0], rtol=1e-12)
    assert len(h[1]) == len(want[1])
    for g, w in zip(h[1], want[1]):
        assert_same(g, w)


_S = np.array([[0.0, 1.0], [1.0, 1.0], [0.5, 0.0], [1.0, 0.25]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("kw", [
    {"bins": 2},
    {"bins": (2, 3), "range": [(0, 1), (-1, 2)]},
    {"bins": [np.array([0.0, 0.5, 1.0]), 3], "density": True},
    {"bins": 3, "weights": np.array([1.0, 2.0, 3.0, 0.5])},
    {"bins": [2, [0, 1, 2]], "weights": np.array([1, 2, 3, 4])},
])
def test_histogramdd(device: xp.Device, dtype: Any, kw: dict) -> None:
    s = (_S * 4).astype(dtype)
    want = np.histogramdd(s, **kw)
    kw_d = {k: up(v, device) if k == "weights" else v for k, v in kw.items()}
    with on_device():
        got = np.histogramdd(up(s, device), **kw_d)
    _hist_case(got, want)


def test_histogramdd_cases(device: xp.Device) -> None:
    rng = np.random.default_rng(1)
    s = rng.normal(size=(40, 3))
    s[3, 1] = np.nan                         # NaN: dropped where the range is given
    s[4] = [1.0, 0.5, 1.0]                   # on the last edge: in the last bin
    cases: list[tuple[Any, dict]] = [
        (s, {"bins": 3, "range": [(-1, 1), (-1, 0.5), (0, 1)]}),
        (s[5:], {"bins": (2, 3, 4), "density": True}),
        (s[:, 0].copy(), {"bins": 4}),                       # 1-D sample: one dimension
        (np.zeros((0, 2)), {"bins": 2}),                     # empty: the range [0, 1]
        (np.full((3, 1), 2.0), {"bins": 2}),                 # equal extremes: widened by 0.5
    ]
    for a, kw in cases:
        want = np.histogramdd(a, **kw)
        with on_device():
            got = np.histogramdd(up(a, device), **kw)
        _hist_case(got, want)
    with on_device():                                         # a list of 1-D samples; device edges
        e = up(np.array([-2.0, 0.0, 2.0]), device)
        got = np.histogramdd([up(s[:, 0], device), up(s[:, 2], device)], bins=[e, 2], range=[None, (-1, 1)])
    _hist_case(got, np.histogramdd([s[:, 0], s[:, 2]], bins=[np.array([-2.0, 0.0, 2.0]), 2], range=[None, (-1, 1)]))


def test_histogramdd_errors(device: xp.Device) -> None:
    s = _S.copy()
    s[0, 0] = np.nan
    bad: list[tuple[Any, dict, type]] = [
        (s, {"bins": 2}, ValueError),                                  # autodetected range not finite
        (_S, {"bins": [2, 2, 2]}, ValueError),
        (_S, {"bins": 0}, ValueError),
        (_S, {"bins": 2.5}, TypeError),
        (_S, {"bins": [2, [1.0, 0.0]]}, ValueError),
        (_S, {"range": [(0, 1)]}, ValueError),
        (_S, {"range": [(1, 0), (0, 1)]}, ValueError),
        (_S, {"weights": np.ones(3)}, ValueError),
        (_S, {"bins": [2, np.ones((2, 2))]}, ValueError),
    ]
    for a, kw, exc in bad:
        with pytest.raises(exc):
            np.histogramdd(a, **kw)
        with pytest.raises(exc):
            np.histogramdd(up(a, device), **kw)


@pytest.mark.parametrize("kw", [{"bins": 3, "density": True},
                                {"bins": [np.array([-1.0, 0.0, 1.0]), 2], "weights": np.arange(20.0)},
                                {"bins": [-2.0, -1.0, 0.0, 1.0, 2.0]}])
def test_histogram2d_via_histogramdd(device: xp.Device, kw: dict) -> None:
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=20), rng.normal(size=20)
    want = np.histogram2d(x, y, **kw)
    with on_device():
        got = np.histogram2d(up(x, device), up(y, device), **kw)
    assert len(got) == 3
    _hist_case((got[0], got[1:]), (want[0], want[1:]))


# ============================================================ polynomials
_X = np.linspace(-1.0, 1.0, 30)
_Y = 3 * _X ** 3 - _X + 0.5 + 0.01 * np.random.default_rng(0).normal(size=30)


def _same_tuple(got: Any, want: Any, rtol: float, atol: float = 1e-12) -> None:
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            assert isinstance(g, xp.GpuArray)
            assert_same(g, w, rtol=rtol, atol=atol, check_signed_zero=False)
        else:
            assert g == w and type(g) is type(w), (g, w)


@pytest.mark.parametrize("args,kw", [
    ((_X, _Y, 3), {}),
    ((_X, _Y, 3), {"full": True}),
    ((_X, np.stack([_Y, 2 * _Y], axis=1), 2), {"cov": True}),
    ((_X, _Y, 3), {"w": np.abs(_Y) + 1, "cov": "unscaled"}),
    ((_X.astype(np.float32), _Y.astype(np.float32), 2), {}),
    ((np.arange(6), np.arange(6) ** 2, 2), {"full": True}),
    ((np.array([1.0, 2.0]), np.array([3.0, 5.0]), 0), {}),
])
def test_polyfit(device: xp.Device, args: tuple, kw: dict) -> None:
    want = np.polyfit(*args, **kw)
    with on_device():
        got = np.polyfit(*(up(a, device) for a in args[:2]), args[2],
                         **{k: up(v, device) if isinstance(v, np.ndarray) else v for k, v in kw.items()})
    _same_tuple(got, want, rtol=1e-8, atol=1e-10)


def test_polyfit_rank_deficient(device: xp.Device) -> None:
    x, y = np.array([0.0, 0.0, 1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    with pytest.warns(np.exceptions.RankWarning):
        want = np.polyfit(x, y, 3)
    with on_device(lapack=True), pytest.warns(np.exceptions.RankWarning, match="poorly conditioned"):
        got = np.polyfit(up(x, device), up(y, device), 3)
    _same_tuple(got, want, rtol=1e-6, atol=1e-8)
    for xs, ys in ((x, y), (y[:2], y[:2])):                 # full=True: no warning; fewer points than terms
        want = np.polyfit(xs, ys, 3, full=True)
        with on_device(lapack=True), warnings.catch_warnings():
            warnings.simplefilter("error")
            got = np.polyfit(up(xs, device), up(ys, device), 3, full=True)
        _same_tuple(got, want, rtol=1e-6, atol=1e-8)


def test_polyfit_errors(device: xp.Device) -> None:
    x, y = np.arange(4.0), np.arange(4.0)
    for args, kw, exc in [((x, y, -1), {}, ValueError), ((x[:, None], y, 1), {}, TypeError),
                          ((x[:0], y[:0], 1), {}, TypeError), ((x, y[:3], 1), {}, TypeError),
                          ((x, np.ones((4, 1, 1)), 1), {}, TypeError), ((x, y, 1), {"w": np.ones(3)}, TypeError),
                          ((x, y, 1), {"w": np.ones((4, 1))}, TypeError), ((x, y, 3), {"cov": True}, ValueError)]:
        with pytest.raises(exc):
            np.polyfit(*args, **kw)
        with pytest.raises(exc):
            np.polyfit(up(args[0], device), up(args[1], device), args[2], **kw)


_P = np.array([3.0, 2.0, 1.0, 5.0])


@pytest.mark.parametrize("func,args", [
    (np.polyder, (_P,)), (np.polyder, (_P, 2)), (np.polyder, (_P.astype(np.float32), 1)), (np.polyder, (_P, 0)),
    (np.polyder, (np.array([1, 2, 3]), 3)), (np.polyder, (np.array([4.0]), 1)),
    (np.polyint, (_P,)), (np.polyint, (_P, 2, [1, 2])), (np.polyint, (_P, 3, 4)), (np.polyint, (np.array([1, 2]),)),
    (np.polyint, (_P.astype(np.float32), 0)),
    (np.polyadd, (_P, np.array([1.0, 2.0]))), (np.polyadd, (np.array([1, 2]), _P.astype(np.float32))),
    (np.polyadd, (np.array(2.0), _P)),
    (np.polysub, (_P, np.array([1.0, 2.0]))), (np.polysub, (np.array([1.0]), _P)), (np.polysub, (_P, _P)),
    (np.polymul, (_P, np.array([0.0, 1.0, 2.0]))), (np.polymul, (np.array([0, 0]), np.array([1, 2]))),
    (np.polymul, (np.array([1, 2], np.int32), np.array([3, 4], np.int32))),
    (np.polydiv, (_P, np.array([1.0, 2.0]))), (np.polydiv, (np.array([1.0, 2.0]), _P)),
    (np.polydiv, (np.array([1.0, 3.0, 2.0]), np.array([1.0, 1.0]))), (np.polydiv, (np.array([2, 4, 6]), np.array([2]))),
])
def test_poly_coefficients(device: xp.Device, func: Any, args: tuple) -> None:
    want = func(*args)
    with on_device():
        got = func(up(args[0], device), *args[1:])
    _same_tuple(got, want, rtol=1e-6 if np.asarray(want[0] if isinstance(want, tuple) else want).dtype == np.float32
                else 1e-13)


def test_poly_errors(device: xp.Device) -> None:
    for func, args, exc in [(np.polyder, (_P, -1), ValueError), (np.polyint, (_P, -1), ValueError),
                            (np.polyint, (_P, 3, [1, 2]), ValueError), (np.polymul, (np.ones((2, 2)), _P), ValueError),
                            (np.polyder, (np.array(2.0),), TypeError)]:
        with pytest.raises(exc):
            func(*args)
        with pytest.raises(exc):
            func(up(args[0], device), *args[1:])


# ============================================================ apply_along_axis
def _double(v: Any) -> Any:
    return v * 2


def _total(v: Any) -> Any:
    return v.sum()


def _pair(v: Any) -> Any:
    return np.stack([v, v[::-1]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("func,axis", [(_double, 0), (_total, 1), (_pair, 2), (np.diag, -1), (np.cumsum, 1),
                                       (lambda v: 3, 0), (lambda v: v[:2], 1)])
def test_apply_along_axis(device: xp.Device, dtype: Any, func: Any, axis: int) -> None:
    a = np.arange(24).reshape(2, 3, 4).astype(dtype)
    want = np.apply_along_axis(func, axis, a)
    with on_device():
        got = np.apply_along_axis(func, axis, up(a, device))
    assert isinstance(got, xp.GpuArray)
    assert_same(got, want, rtol=1e-6)


def test_apply_along_axis_args_and_errors(device: xp.Device) -> None:
    a = np.arange(6.0).reshape(2, 3)
    want = np.apply_along_axis(np.clip, 1, a, 1.0, a_max=4.0)
    with on_device():
        got = np.apply_along_axis(np.clip, 1, up(a, device), 1.0, a_max=4.0)
    assert_same(got, want)
    for arr, axis, exc in [(np.zeros((0, 3)), 1, ValueError), (a, 2, np.exceptions.AxisError),
                           (np.array(1.0), 0, np.exceptions.AxisError)]:
        with pytest.raises(exc):
            np.apply_along_axis(_double, axis, arr)
        with pytest.raises(exc):
            np.apply_along_axis(_double, axis, up(arr, device))
    ragged = [0]

    def grow(v: Any) -> Any:
        ragged[0] += 1
        return v[:ragged[0]]
    for arr in (a, up(a, device)):
        ragged[0] = 0
        with pytest.raises(ValueError):
            np.apply_along_axis(grow, 1, arr)


# ============================================================ linalg: cond, tensorsolve, tensorinv
_M = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])
_SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
_SINGULAR_STACK = np.stack([_M, _SINGULAR])


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf])
@pytest.mark.parametrize("x", [_M, _M.astype(np.float32), np.stack([_M, 2 * _M + 1]), np.array([[1, 2], [3, 4]]),
                               _SINGULAR_STACK, _SINGULAR, np.zeros((2, 2)), _M[:2]],
                         ids=["f64", "f32", "stack", "int", "singular_stack", "singular", "zeros", "wide"])
def test_cond(device: xp.Device, x: np.ndarray, p: Any) -> None:
    try:
        with np.errstate(all="ignore"):
            want = np.asarray(np.linalg.cond(x, p))
    except np.linalg.LinAlgError:               # NumPy: 'nuc' of a NaN inverse, other orders of a non-square x
        with pytest.raises(np.linalg.LinAlgError):
            np.linalg.cond(up(x, device), p)
        return
    with on_device(lapack=(x is _SINGULAR_STACK or x is _SINGULAR) and p in (None, 2, -2)):
        got = np.linalg.cond(up(x, device), p)
    assert isinstance(got, xp.GpuArray)
    assert_same(got, want, rtol=1e-4 if x.dtype == np.float32 else 1e-9)


def test_cond_errors(device: xp.Device) -> None:
    for x, p, exc in [(np.zeros((0, 0)), None, np.linalg.LinAlgError), (np.zeros((2, 0, 3)), 1, np.linalg.LinAlgError),
                      (np.ones(3), None, np.linalg.LinAlgError), (np.ones(3), 1, np.linalg.LinAlgError),
                      (_M, 3, ValueError), (_M, "bad", ValueError)]:
        with pytest.raises(exc):
            np.linalg.cond(x, p)
        with pytest.raises(exc):
            np.linalg.cond(up(x, device), p)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_tensorsolve_tensorinv(device: xp.Device, dtype: Any) -> None:
    rng = np.random.default_rng(3)
    t = (rng.normal(size=(2, 3, 6)) * 4).astype(dtype) + 10 * np.eye(6).reshape(2, 3, 6).astype(dtype)
    b = np.arange(6.0).reshape(2, 3).astype(dtype)
    t2 = np.moveaxis(t, 2, 0).copy()
    t3 = (rng.normal(size=(4, 6, 8, 3)) * 4).astype(dtype)
    rtol = 1e-4 if dtype == np.float32 else 1e-9
    with on_device():
        got = [np.linalg.tensorsolve(up(t, device), up(b, device)),
               np.linalg.tensorsolve(up(t2, device), b, axes=(0,)),
               np.linalg.tensorinv(up(t3, device), ind=2),
               np.linalg.tensorinv(up(t3.reshape(24, 8, 3), device), ind=1)]
    want = [np.linalg.tensorsolve(t, b), np.linalg.tensorsolve(t2, b, axes=(0,)), np.linalg.tensorinv(t3, ind=2),
            np.linalg.tensorinv(t3.reshape(24, 8, 3), ind=1)]
    for g, w in zip(got, want):
        assert_same(g, w, rtol=rtol, atol=rtol)


def test_tensorsolve_tensorinv_errors(device: xp.Device) -> None:
    t, t6 = np.ones((2, 3, 5)), np.ones((6, 2, 3))
    for func, args, kw, exc in [(np.linalg.tensorsolve, (t, np.ones((2, 3))), {}, np.linalg.LinAlgError),
                                (np.linalg.tensorsolve, (np.ones((2, 2)), np.ones(2)), {}, np.linalg.LinAlgError),
                                (np.linalg.tensorsolve, (t6, np.ones((2, 3))), {"axes": (5,)}, ValueError),
                                (np.linalg.tensorinv, (np.ones((4, 6, 8, 3)),), {"ind": 0}, ValueError),
                                (np.linalg.tensorinv, (np.ones((4, 6, 8, 3)),), {"ind": 1}, np.linalg.LinAlgError),
                                (np.linalg.tensorinv, (np.ones((4, 6, 8, 3)),), {}, np.linalg.LinAlgError)]:
        with pytest.raises(exc):
            func(*args, **kw)
        with pytest.raises(exc):
            func(up(args[0], device), *args[1:], **kw)


@pytest.mark.parametrize("roots", [np.array([1.0, -2.0, 3.5]), np.arange(1, 41), np.array([1 + 2j, 1 - 2j, 3.0]),
                                   np.array([1j, 2.0]), np.array([2.5, -0.5], np.float32), np.array([0.0])],
                         ids=["float64", "int40", "conjugates", "complex", "float32", "zero"])
def test_poly_of_roots(device: xp.Device, roots: np.ndarray) -> None:
    """``np.poly`` of 1-D roots: NumPy's coefficients and dtype (integers to float64, float32 kept,
    conjugate pairs real), 40 roots evaluated in steps."""
    want = np.poly(roots)
    with on_device():
        got = np.poly(up(roots, device))
    assert isinstance(got, xp.GpuArray) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5 if roots.dtype == np.float32 else 1e-12)


def test_poly_edges(device: xp.Device) -> None:
    with on_device():
        assert np.poly(up(np.array([], np.float64), device)) == 1.0
    with pytest.raises(ValueError, match="1d or non-empty square 2d"):
        np.poly(up(np.zeros((2, 3)), device))
    with xp.config(fallback="silent"):          # a square matrix: the polynomial of its eigvals
        m = np.array([[2.0, 1.0], [0.0, 3.0]])
        np.testing.assert_allclose(np.asarray(np.poly(up(m, device))), np.poly(m))


@pytest.mark.parametrize("axes", [[0, 2], 1, (-1,), [], [2, 0, 1]])
def test_apply_over_axes(device: xp.Device, axes: Any) -> None:
    a = np.arange(24.0).reshape(2, 3, 4) - 7.5
    for func in (np.sum, np.max, lambda v, ax: np.cumsum(v, axis=ax)):
        want = np.apply_over_axes(func, a, axes)
        with on_device():
            got = np.apply_over_axes(func, up(a, device), axes)
        assert isinstance(got, xp.GpuArray)
        assert_same(got, want)


def test_apply_over_axes_wrong_shape(device: xp.Device) -> None:
    with pytest.raises(ValueError, match="not returning an array of the correct shape"):
        np.apply_over_axes(lambda v, ax: np.sum(v), up(np.ones((2, 3)), device), [0])
