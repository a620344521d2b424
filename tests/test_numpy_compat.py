"""NumPy functions beyond the Array API that the ecosystem calls (gpuarray/namespace/numpy_compat.py):
``pad``, ``lib.stride_tricks.sliding_window_view``, ``numpy.take`` and the NaN-ignoring reductions,
on the device, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp

from .conftest import assert_same

H = np.arange(24.0).reshape(4, 6) - 7.5
HN = H.copy()
HN[1, 2] = HN[3, 0] = HN[3, 5] = np.nan
HN[:, 4] = np.nan                                  # an all-NaN column


@pytest.mark.parametrize(("width", "mode", "kw"), [
    (1, "constant", {}),
    ((1, 2), "constant", {"constant_values": 9}),
    (((0, 1), (2, 0)), "constant", {"constant_values": ((1, 2), (3, 4))}),
    (2, "edge", {}),
    (((1, 2), (3, 0)), "reflect", {}),
    (3, "symmetric", {}),
    (((2, 5), (7, 1)), "wrap", {}),
])
def test_pad(width, mode, kw, device):
    g = xp.asarray(H, device=device)
    want = np.pad(H, width, mode=mode, **kw)
    assert_same(xp.pad(g, width, mode=mode, **kw), want)
    got = np.pad(g, width, mode=mode, **kw)          # numpy.pad on a GpuArray runs the same code
    assert isinstance(got, xp.GpuArray) and got.device == device
    assert_same(got, want)


def test_pad_other_modes(device):
    g = xp.asarray(H, device=device)
    with pytest.raises(NotImplementedError, match="mean"):
        xp.pad(g, 1, mode="mean")
    with xp.config(fallback="silent"):
        assert_same(np.pad(g, 1, mode="mean"), np.pad(H, 1, mode="mean"))     # host fallback


@pytest.mark.parametrize(("window", "axis"), [(3, 1), ((2, 3), None), ((2, 2), (1, 0)), (4, 0)])
def test_sliding_window_view(window, axis, device):
    from gpuarray.lib.stride_tricks import sliding_window_view
    g = xp.asarray(H, device=device)
    want = np.lib.stride_tricks.sliding_window_view(H, window, axis=axis)
    assert_same(sliding_window_view(g, window, axis=axis), want)
    assert_same(sliding_window_view(g[::-1, 1:], window, axis=axis),       # of a view: still one view
                np.lib.stride_tricks.sliding_window_view(H[::-1, 1:], window, axis=axis))
    assert_same(np.lib.stride_tricks.sliding_window_view(g, window, axis=axis), want)
    with pytest.raises(ValueError, match="larger than input"):
        sliding_window_view(g, 7, axis=1)


@pytest.mark.parametrize(("indices", "axis"), [([2, 0, 3], 0), (np.array([[1, 5], [0, 0]]), 1), (3, 1),
                                               (-1, None), ([7, 23], None)])
def test_numpy_take(indices, axis, device):
    g = xp.asarray(H, device=device)
    got = np.take(g, indices, axis=axis)
    assert isinstance(got, xp.GpuArray)
    assert_same(got, np.take(H, indices, axis=axis))
    with pytest.raises(IndexError):
        np.take(g, [0, 99], axis=0)


NAN_FUNCS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("name", NAN_FUNCS)
def test_nan_reductions(name, axis, device):
    fn = getattr(np, name)
    for host in (HN, HN.astype(np.float32), np.arange(12, dtype=np.int32).reshape(3, 4)):
        g = xp.asarray(host, device=device)
        xp.reset_metrics()
        got = fn(g, axis=axis)
        assert isinstance(got, xp.GpuArray), name
        want = fn(host, axis=axis)
        rtol = 1e-6 if host.dtype == np.float32 else 1e-12
        assert_same(got, np.asarray(want), rtol=rtol, check_signed_zero=False)
        assert xp.metrics()["host_fallbacks"] == 0
    assert_same(fn(xp.asarray(HN, device=device), axis=1, keepdims=True), fn(HN, axis=1, keepdims=True),
                rtol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_reduction_options(device):
    g = xp.asarray(HN, device=device)
    assert_same(np.nanvar(g, axis=0, ddof=1), np.nanvar(HN, axis=0, ddof=1), rtol=1e-12)
    assert_same(np.nanstd(g, axis=1, ddof=2), np.nanstd(HN, axis=1, ddof=2), rtol=1e-12)
    assert_same(np.nansum(g, axis=0, dtype=np.float32), np.nansum(HN, axis=0, dtype=np.float32), rtol=1e-6)
    assert_same(np.nanmean(g.astype(xp.float32), axis=1, dtype=np.float64),
                np.nanmean(HN.astype(np.float32), axis=1, dtype=np.float64), rtol=1e-7)


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
def test_nan_arg_reductions(name, device):
    fn = getattr(np, name)
    ok = HN[:, [0, 1, 2, 3, 5]]
    g = xp.asarray(ok, device=device)
    for axis in (None, 0, 1):
        assert_same(fn(g, axis=axis), fn(ok, axis=axis))
    with pytest.raises(ValueError, match="All-NaN slice"):
        fn(xp.asarray(HN, device=device), axis=0)


@pytest.mark.parametrize("name", ["nancumsum", "nancumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_cumulative(name, axis, device):
    fn = getattr(np, name)
    host = HN / 8
    assert_same(fn(xp.asarray(host, device=device), axis=axis), fn(host, axis=axis), rtol=1e-12)
