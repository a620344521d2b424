"""NumPy functions that were host fallbacks, now compositions of device operations: ``geomspace`` with
device endpoints, ``histogramdd`` / ``histogram2d``, the ``poly*`` functions, ``apply_along_axis``,
``linalg.cond`` / ``tensorsolve`` / ``tensorinv``: NumPy's values, dtypes and errors on both providers,
with no host fallback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from tests.conftest import assert_same


@contextlib.contextmanager
def on_device() -> Iterator[None]:
    """No host fallback inside (refused, and counted as none)."""
    before = xp.metrics()["host_fallbacks"]
    with xp.config(fallback="raise"):
        yield
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
