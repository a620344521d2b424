"""Complex arrays in the kernel kinds beyond elementwise and reductions: ``cumulative_sum`` (on wgpu the
parts' real scans joined by ``setpart``), writes at integer indices (``scatter``: a complex element is one
``vec2`` store), ``np.add.at``, ``cumulative_prod`` (a complex scan state). Against NumPy on both devices,
with no host fallback on wgpu."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp

from .conftest import assert_same

CDT = ["complex64", "complex128"]


def _c(shape: tuple[int, ...], seed: int, dt: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.uniform(-3, 3, shape) + 1j * rng.uniform(-3, 3, shape)).astype(dt)


def _on_device(device: xp.Device, fn: Any, *args: Any) -> np.ndarray:
    """``fn(*args)`` read back; on wgpu (offload "always") with no host fallback."""
    xp.reset_metrics()
    with xp.config(offload="always"):
        out = np.asarray(fn(*args))
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 0
    return out


@pytest.mark.parametrize("dt", CDT)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("init", [False, True])
def test_cumulative_sum(device: xp.Device, dt: str, axis: int, init: bool) -> None:
    h = _c((300, 7), 1, dt)
    h[3, 2] = complex(np.inf, np.nan)
    h[5, 1] = complex(-0.0, -0.0)
    h[7, 4] = complex(1.0, -np.inf)
    got = _on_device(device, lambda a: xp.cumulative_sum(a, axis=axis, include_initial=init),
                     xp.asarray(h, device=device))
    want = np.cumsum(h, axis=axis)
    if init:
        want = np.concatenate([np.zeros_like(np.take(want, [0], axis=axis)), want], axis=axis)
    tol = {"rtol": 1e-5, "atol": 1e-4} if dt == "complex64" else {"rtol": 1e-12, "atol": 1e-11}
    assert got.dtype == want.dtype
    for part in (np.real, np.imag):     # each part's sums (an infinite part beside a finite one, rounded)
        assert_same(part(got), part(want), check_signed_zero=False, **tol)


def test_cumulative_sum_dtypes(device: xp.Device) -> None:
    """A complex ``dtype`` for real input, and complex64 input summed in complex128."""
    x = np.arange(1, 11, dtype=np.int32)
    got = _on_device(device, lambda a: xp.cumulative_sum(a, dtype=xp.complex64), xp.asarray(x, device=device))
    assert_same(got, np.cumsum(x, dtype=np.complex64))
    h = _c((1000,), 2, "complex64")
    got = _on_device(device, lambda a: xp.cumulative_sum(a, dtype=xp.complex128), xp.asarray(h, device=device))
    assert_same(got, np.cumsum(h, dtype=np.complex128), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dt", CDT)
def test_integer_index_writes(device: xp.Device, dt: str) -> None:
    """Rows, points, a broadcast scalar and negative indices written at once (a ``scatter``)."""
    h = _c((300, 7), 3, dt)
    rng = np.random.default_rng(4)
    idx = rng.permutation(300)[:50]
    v = _c((50, 7), 5, dt)

    def write(key: Any, value: Any) -> np.ndarray:
        g = xp.asarray(h, device=device)
        gkey = tuple(xp.asarray(k, device=device) if isinstance(k, np.ndarray) else k for k in key)
        gval = xp.asarray(value, device=device) if isinstance(value, np.ndarray) else value
        return _on_device(device, lambda: (g.__setitem__(gkey, gval), g)[1])

    for key, value in [((idx,), v), ((idx, 3), v[:, 0] * 2), ((idx, slice(None)), 1 + 2j), ((idx - 300,), v[:, ::-1])]:
        want = h.copy()
        want[key] = value
        assert_same(write(key, value), want)


@pytest.mark.parametrize("dt", CDT)
def test_repeated_index_writes_keep_pairs(device: xp.Device, dt: str) -> None:
    """With repeated indices one of the writes wins (NumPy: the last), both parts of that one."""
    h = np.zeros(4, dt)
    vals = np.array([1 + 10j, 2 + 20j, 3 + 30j, 4 + 40j, 5 + 50j, 6 + 60j], dt)
    idx = np.array([1, 1, 1, 2, 2, 3])
    g = xp.asarray(h, device=device)
    gi, gv = xp.asarray(idx, device=device), xp.asarray(vals, device=device)
    got = _on_device(device, lambda: (g.__setitem__(gi, gv), g)[1])
    assert got[0] == 0
    for pos, choices in [(1, vals[:3]), (2, vals[3:5]), (3, vals[5:])]:
        assert got[pos] in choices


@pytest.mark.parametrize("dt", CDT)
def test_add_at(device: xp.Device, dt: str) -> None:
    h = _c((300,), 6, dt)
    idx = np.random.default_rng(7).integers(-300, 300, 2000)
    v = _c((2000,), 8, dt)
    g = xp.asarray(h, device=device)
    gi, gv = xp.asarray(idx, device=device), xp.asarray(v, device=device)
    got = _on_device(device, lambda: (np.add.at(g, gi, gv), g)[1])
    want = h.copy()
    np.add.at(want, idx, v)
    assert_same(got, want, rtol=1e-5 if dt == "complex64" else 1e-12, atol=1e-4 if dt == "complex64" else 1e-11)


def _unit(shape: tuple[int, ...], seed: int, dt: str) -> np.ndarray:
    """Factors near the unit circle: long products stay in range."""
    rng = np.random.default_rng(seed)
    return (rng.uniform(0.9, 1.1, shape) * np.exp(1j * rng.uniform(-3, 3, shape))).astype(dt)


@pytest.mark.parametrize("dt", CDT)
@pytest.mark.parametrize("shape, axis", [((300,), 0), ((3, 70_000), 1), ((37, 500), 1), ((500, 37), 0),
                                         ((2, 3, 40), 1)])
@pytest.mark.parametrize("init", [False, True])
@pytest.mark.parametrize("strategy", ["auto", "serial", "parallel"])
def test_cumulative_prod(device: xp.Device, dt: str, shape: tuple[int, ...], axis: int, init: bool, strategy: str,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Complex products along an axis on the device (a ``vec2`` scan state combined by NumPy's complex
    product): one thread per row in NumPy's order (``serial``), chunked scans of long rows and a
    workgroup a row (``parallel``), against NumPy's left-to-right products in complex128."""
    from gpuarray.providers import wgpu_scan
    if strategy != "auto" and device.kind != "wgpu":
        pytest.skip("a wgpu strategy")
    monkeypatch.setattr(wgpu_scan, "STRATEGY", strategy)
    h = _unit(shape, 3, dt)
    got = _on_device(device, lambda a: xp.cumulative_prod(a, axis=axis, include_initial=init),
                     xp.asarray(h, device=device))
    want = np.cumprod(h.astype(np.complex128), axis=axis)
    if init:
        want = np.concatenate([np.ones_like(np.take(want, [0], axis=axis)), want], axis=axis)
    assert got.dtype == np.dtype(dt) and got.shape == want.shape
    # float32 products of up to 70000 factors: relative error grows with the count (NumPy's own too)
    rtol = (2e-7 * shape[axis] ** 0.5 * 8) if dt == "complex64" else 1e-13
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


@pytest.mark.parametrize("dt", CDT)
def test_cumulative_prod_special_values(device: xp.Device, dt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Zeros, signed zeros, NaN and infinities in complex products: in NumPy's order (one thread a row)
    the same values as NumPy's, NaN patterns included; a row of zeros and small factors stays exact."""
    from gpuarray.providers import wgpu_scan
    if device.kind == "wgpu":
        monkeypatch.setattr(wgpu_scan, "STRATEGY", "serial")
    rows = [[1 + 1j, 2j, complex(-0.0, 1), 0j, 3 - 1j, 1 + 0j],
            [1 + 1j, complex(np.inf, 0), 2 + 0j, 1j, 1 + 0j, 1 + 0j],
            [complex(np.nan, 1), 1 + 0j, 1j, 2 + 0j, 1 + 0j, 1 + 0j],
            [0.5 + 0.5j, 0.5 - 0.5j, -1 + 0j, complex(0, -0.0), 1j, -1j]]
    h = np.array(rows, dtype=dt)
    got = _on_device(device, lambda a: xp.cumulative_prod(a, axis=1), xp.asarray(h, device=device))
    with np.errstate(all="ignore"):
        want = np.cumprod(h, axis=1)
    for part in (np.real, np.imag):
        np.testing.assert_array_equal(np.isnan(part(got)), np.isnan(part(want)))
        ok = ~np.isnan(part(want))
        np.testing.assert_allclose(part(got)[ok], part(want)[ok], rtol=1e-6 if dt == "complex64" else 1e-14)


_ORDER_VALUES = np.array([1 + 2j, complex(1, np.nan), complex(np.nan, 1), complex(np.nan, np.nan), complex(-0.0, 0),
                          0j, 1 + 1j, complex(np.inf, 0), complex(-np.inf, 3), 2 - 1j, complex(0, -0.0),
                          complex(-3, np.nan), complex(np.nan, -5), complex(1, -np.inf)])


def _same_parts(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    for part in (np.real, np.imag):
        assert np.array_equal(part(got), part(want), equal_nan=True)


@pytest.mark.parametrize("dt", CDT)
@pytest.mark.parametrize("axis", [0, 1, None])
def test_numpy_sort_order(device: xp.Device, dt: str, axis: Any) -> None:
    """``np.sort``, stable ``np.argsort`` and ``np.sort_complex`` of complex arrays: NumPy's order (by real
    part, then imaginary part; values with a NaN imaginary part, then a NaN real part, then both, last),
    on the device (the namespace's ``sort`` takes real values only, as the standard)."""
    h = np.random.default_rng(10).choice(_ORDER_VALUES, (40, 30)).astype(dt)
    g = xp.asarray(h, device=device)
    _same_parts(_on_device(device, lambda a: np.sort(a, axis=axis), g), np.sort(h, axis=axis))
    got = _on_device(device, lambda a: np.argsort(a, axis=axis, kind="stable"), g)
    assert np.array_equal(got, np.argsort(h, axis=axis, kind="stable"))
    _same_parts(_on_device(device, np.sort_complex, g[0]), np.sort_complex(h[0]))


@pytest.mark.parametrize("dt", CDT)
@pytest.mark.parametrize("ufunc", [np.add, np.multiply], ids=["add", "multiply"])
def test_reduceat(device: xp.Device, dt: str, ufunc: np.ufunc) -> None:
    """``np.add.reduceat`` and ``np.multiply.reduceat`` of complex arrays (repeated, decreasing and last
    indices; an infinite and a NaN part), on the device."""
    h = _c((40, 5), 11, dt) * 0.4
    h[7, 1] = complex(np.inf, 1)
    h[9, 2] = complex(np.nan, 0)
    idx = [0, 4, 1, 5, 20, 20, 39, 37]
    got = _on_device(device, lambda a: ufunc.reduceat(a, idx, axis=0), xp.asarray(h, device=device))
    with np.errstate(all="ignore"):
        want = ufunc.reduceat(h, idx, axis=0)
    assert got.dtype == want.dtype
    for part in (np.real, np.imag):
        assert_same(part(got), part(want), rtol=1e-5 if dt == "complex64" else 1e-12, check_signed_zero=False)


def test_isin_complex_names_its_fallback(wgpu_device: xp.Device) -> None:
    h = np.array([1 + 2j, 3j, complex(np.nan, 1), -0.0 + 0j], np.complex64)
    t = np.array([0j, 1 + 2j, complex(np.nan, 1)], np.complex64)
    ga, gt = xp.asarray(h, device=wgpu_device), xp.asarray(t, device=wgpu_device)
    with xp.config(fallback="raise"), pytest.raises(xp.HostFallbackError, match="numpy.isin"):
        np.isin(ga, gt)
    with xp.config(fallback="silent"):
        assert_same(np.isin(ga, gt), np.isin(h, t))


@pytest.mark.parametrize("dt", CDT)
@pytest.mark.parametrize("shape", [(100,), (7, 9), (3, 4, 5), (1,)])
@pytest.mark.parametrize("fn", [np.argmax, np.argmin, np.max, np.min])
def test_numpy_complex_extremes(device: xp.Device, dt: str, shape: tuple[int, ...], fn: Any) -> None:
    """``np.argmax``/``argmin``/``max``/``min`` of complex arrays in NumPy's order (real part, then imaginary;
    the first NaN wins; -0.0 ties 0.0) along every axis and with ``keepdims``, on the device (the namespace's
    own ``argmax`` takes real arrays only, as the Array API says)."""
    rng = np.random.default_rng(5)
    h = (rng.integers(-2, 3, shape) + 1j * rng.integers(-2, 3, shape)).astype(dt)     # many ties
    clean = h.copy()
    flat = h.reshape(-1)
    if flat.size > 3:
        flat[3] = complex(np.nan, 1)
        flat[-2] = complex(1, np.nan)
        flat[1] = complex(np.inf, -np.inf)
        clean.reshape(-1)[0] = complex(-0.0, 2)
    for arr in (h, clean):
        g = xp.asarray(arr, device=device)
        for axis in [None, *range(arr.ndim)]:
            for kd in (False, True):
                got = _on_device(device, lambda a, axis=axis, kd=kd: fn(a, axis=axis, keepdims=kd), g)
                want = np.asarray(fn(arr, axis=axis, keepdims=kd))
                assert got.dtype == want.dtype and got.shape == want.shape
                assert np.array_equal(got, want, equal_nan=True), (axis, kd, got, want)
    with pytest.raises(TypeError):
        xp.argmax(xp.asarray(h, device=device))
