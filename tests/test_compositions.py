"""Data-dependent NumPy functions as compositions of device operations (issue 19), against NumPy on
both providers: percentile / quantile (every method) and their nan* variants, nanmedian, interp,
cov, corrcoef, convolve, correlate, lexsort. On wgpu none of them may fall back to the host."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.exceptions import AxisError

import gpuarray as xp

from .conftest import assert_same

METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
           "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint", "nearest"]


def _g(a: Any, device: xp.Device) -> Any:
    return xp.asarray(a, device=device) if isinstance(a, np.ndarray) else a


def _on_device(device: xp.Device, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """``fn`` on the arguments with NumPy arrays as GpuArrays on ``device``, computed, with no host
    fallback (counted; and refused on wgpu)."""
    before = xp.metrics()["host_fallbacks"]
    mode = "raise" if device.kind == "wgpu" else "silent"
    with xp.config(offload="always", fallback=mode):
        r = fn(*[_g(a, device) for a in args], **{k: _g(v, device) for k, v in kw.items()})
        out = tuple(np.asarray(v) for v in r) if isinstance(r, tuple) else np.asarray(r)
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == before
    return out


def _copy(a: Any) -> Any:
    return a.copy() if isinstance(a, np.ndarray) else a


def _same(device: xp.Device, fn: Callable[..., Any], *args: Any, rtol: float = 1e-12, atol: float = 0.0,
          **kw: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = fn(*[_copy(a) for a in args], **{k: _copy(v) for k, v in kw.items()})   # NumPy's cov writes w
    assert_same(_on_device(device, fn, *args, **kw), np.asarray(want), rtol=rtol, atol=atol,
                check_signed_zero=False)


def _ties(shape: tuple[int, ...], dtype: str = "float64", seed: int = 0) -> np.ndarray:
    """Small integers (many ties) in ``dtype``."""
    return np.random.default_rng(seed).integers(-5, 6, shape).astype(dtype)


# ============================================================ quantiles
def test_quantile_every_method(device):
    a = _ties((4, 11))
    a[1] = np.linspace(-3, 3, 11)
    q = np.array([0.0, 0.1, 0.3, 0.5, 0.77, 1.0])
    for method in METHODS:
        _same(device, np.quantile, a, q, axis=1, method=method)
        _same(device, np.percentile, a, 30, method=method)
        _same(device, np.nanquantile, a, q, axis=1, method=method)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "int64"])
def test_quantile_dtypes_axes(device, dtype):
    a = _ties((3, 4, 5), dtype, seed=1)
    tol = 1e-6 if dtype == "float32" else 1e-12
    # float32: an adapter that contracts a + (b - a) * t into one rounding (NVIDIA) is an ULP of
    # the operands away from NumPy where the result cancels to about 0 (docs/accuracy.md)
    atol = 1e-6 if dtype == "float32" else 0.0
    for axis in (None, 0, -1, (0, 2)):
        _same(device, np.percentile, a, [10.0, 50.0, 95.0], axis=axis, rtol=tol, atol=atol)
        _same(device, np.quantile, a, 0.25, axis=axis, keepdims=True, rtol=tol, atol=atol)
    _same(device, np.quantile, a, np.float32(0.4), axis=1, rtol=tol, atol=atol)
    _same(device, np.quantile, a, [0, 1], axis=1, rtol=tol, atol=atol)                # integer q: NumPy takes
    _same(device, np.percentile, a, [[5.0, 50.0], [60.0, 100.0]], axis=2, method="lower", rtol=tol, atol=atol)
    _same(device, np.nanpercentile, a, 60, axis=0, rtol=tol, atol=atol)


def test_quantile_index_products_rounded_alone(device):
    """The virtual index n * q - 1 of a nan-variant is NumPy's two roundings even where the driver
    contracts a * b + c (5 * 0.2 - 1 is 0, so inverted_cdf takes the lower order statistic)."""
    a = np.array([[np.nan, 0.3, -1.0, 2.0, 4.0, np.nan, 7.0]])
    for method in ("inverted_cdf", "lower", "closest_observation", "averaged_inverted_cdf", "hazen"):
        _same(device, np.nanquantile, a, [0.2, 0.4, 0.6], axis=1, method=method)


def test_quantile_nan(device):
    a = np.random.default_rng(2).standard_normal((4, 7))
    a[0, 3] = a[2, 0] = a[2, 5] = np.nan
    a[3] = np.nan
    for method in ("linear", "lower", "midpoint", "hazen", "inverted_cdf"):
        _same(device, np.quantile, a, [0.2, 0.5], axis=1, method=method)
        _same(device, np.nanquantile, a, [0.0, 0.2, 0.5, 1.0], axis=1, method=method)
    _same(device, np.percentile, a, 50, axis=0)
    _same(device, np.nanpercentile, a, 50)
    _same(device, np.nanpercentile, a.astype(np.float32), [25.0, 75.0], axis=1, keepdims=True, rtol=1e-6,
          atol=1e-7)
    _same(device, np.nanquantile, np.array([np.inf, -np.inf, 1.0, np.nan]), [0.0, 0.5, 1.0])
    _same(device, np.nanquantile, a.astype(np.float32), 0.3, axis=1, method="weibull", rtol=1e-6,
          atol=1e-7)   # weak q


def test_nanmedian(device):
    a = np.random.default_rng(3).standard_normal((5, 6)).astype(np.float32)
    a[0, 1] = a[1, :] = a[2, 2] = a[2, 3] = np.nan
    for axis in (None, 0, 1, (0, 1)):
        _same(device, np.nanmedian, a, axis=axis, rtol=1e-6)
    _same(device, np.nanmedian, a, axis=1, keepdims=True, rtol=1e-6)
    _same(device, np.nanmedian, _ties((4, 5), "int32"), axis=0)
    _same(device, np.median, a, axis=1)


def test_quantile_views_scalars_out(device):
    base = np.random.default_rng(4).standard_normal((6, 8))
    _same(device, lambda z: np.quantile(z.T[::2], [0.1, 0.9], axis=0), base)
    _same(device, lambda z: np.nanpercentile(z[1:, ::3], 35, axis=1), base)
    _same(device, np.quantile, np.array(2.5), 0.3)
    g = xp.asarray(base, device=device)
    out = xp.zeros((8,), dtype=xp.float64, device=device)
    with xp.config(offload="always"):
        r = np.percentile(g, 40, axis=0, out=out)
    assert r is out
    assert_same(out, np.percentile(base, 40, axis=0), rtol=1e-12)


def test_quantile_errors_and_empty(device):
    g = xp.asarray(np.ones((2, 3)), device=device)
    with pytest.raises(ValueError, match="Percentiles must be in the range"):
        np.percentile(g, 101)
    with pytest.raises(ValueError, match="Quantiles must be in the range"):
        np.quantile(g, [0.5, np.nan])
    with pytest.raises(ValueError, match="not a valid method"):
        np.quantile(g, 0.5, method="cubic")
    with pytest.raises(AxisError):
        np.quantile(g, 0.5, axis=2)
    with pytest.raises(TypeError, match="real numbers"):
        np.quantile(xp.asarray(np.ones(3, np.complex128), device=device), 0.5)
    with pytest.raises(ValueError, match="scalar or 1d"):
        np.quantile(g, np.full((1, 1, 1), 0.5))
    e = np.zeros((0, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same(np.nanquantile(xp.asarray(e, device=device), 0.5, axis=0), np.nanquantile(e, 0.5, axis=0))


# ============================================================ interp
def test_interp(device):
    rng = np.random.default_rng(5)
    xpts = np.sort(rng.uniform(-3, 3, 12))
    xpts[4] = xpts[5]                                          # a tie
    fp = rng.standard_normal(12)
    x = np.concatenate([rng.uniform(-4, 4, 40), xpts, [np.nan, np.inf, -np.inf]])
    _same(device, np.interp, x, xpts, fp)
    _same(device, np.interp, x, xpts, fp, left=-10.0, right=10.0)
    _same(device, lambda a, b, c: np.interp(a.reshape(4, -1)[:, ::2], b, c), x[:52], xpts, fp)
    _same(device, np.interp, x, xpts, fp, period=2.5, rtol=1e-12, atol=1e-12)
    _same(device, np.interp, x, xpts, fp + 1j * fp[::-1], left=1j)
    _same(device, np.interp, x, xpts[:1], fp[:1], left=-1.0)
    _same(device, np.interp, np.array(0.3), xpts, fp)
    _same(device, np.interp, np.arange(-2, 9), np.array([0, 2, 2, 5, 7]), np.array([1, 5, 7, 3, 0]))
    _same(device, np.interp, x.astype(np.float32), xpts.astype(np.float32), fp.astype(np.float32))
    _same(device, np.interp, np.array([0.0, 1.0, 1.5, 3.0]), np.array([0.0, 1.0, 2.0, 3.0]),
          np.array([0.0, np.inf, 2.0, np.nan]))


def test_interp_errors(device):
    g = xp.asarray(np.array([1.0, 2.0]), device=device)
    with pytest.raises(ValueError, match="not of the same length"):
        np.interp(g, g, g[:1])
    with pytest.raises(ValueError, match="period must be a non-zero value"):
        np.interp(g, g, g, period=0)
    with pytest.raises(ValueError, match="array of sample points is empty"):
        np.interp(g, g[:0], g[:0])
    with pytest.raises(ValueError, match="too deep"):
        np.interp(g, xp.reshape(g, (1, 2)), g)


# ============================================================ cov, corrcoef
def test_cov(device):
    rng = np.random.default_rng(6)
    m = rng.standard_normal((3, 9))
    y = rng.standard_normal((2, 9))
    fw = np.array([1, 2, 1, 3, 1, 1, 2, 1, 1])
    aw = rng.uniform(0.5, 2.0, 9)
    _same(device, np.cov, m)
    _same(device, np.cov, m.T, rowvar=False, bias=True)
    _same(device, np.cov, m, y, ddof=2)
    _same(device, np.cov, m[0])
    _same(device, np.cov, m[:, ::2], fweights=fw[::2])
    _same(device, np.cov, m, fweights=fw, aweights=aw, ddof=1)
    _same(device, np.cov, m, aweights=aw, dtype=np.float32, rtol=1e-6)
    _same(device, np.cov, m.astype(np.float32), rtol=2e-6, atol=1e-6)
    _same(device, np.cov, m + 1j * y[0], rtol=1e-12, atol=1e-15)
    _same(device, np.cov, (m * 3).astype(np.int32))
    _same(device, lambda a, f, w: np.cov(a, fweights=f, aweights=w), m, fw.astype(np.float64), aw)  # on device
    with pytest.raises(ValueError, match="ddof must be integer"):
        np.cov(xp.asarray(m, device=device), ddof=1.5)
    with pytest.raises(TypeError, match="fweights must be integer"):
        np.cov(xp.asarray(m, device=device), fweights=xp.asarray(fw * 0.5, device=device))
    with pytest.raises(ValueError, match="aweights cannot be negative"):
        np.cov(xp.asarray(m, device=device), aweights=-aw)
    with pytest.raises(ValueError, match="more than 2 dimensions"):
        np.cov(xp.asarray(np.ones((2, 2, 2)), device=device))


def test_corrcoef(device):
    rng = np.random.default_rng(7)
    m = rng.standard_normal((4, 10))
    m[2] = m[1] * 3 + 1                          # perfectly correlated rows: NumPy clips to [-1, 1]
    _same(device, np.corrcoef, m, rtol=1e-12, atol=1e-15)
    _same(device, np.corrcoef, m.T, rowvar=False, rtol=1e-12, atol=1e-15)
    _same(device, np.corrcoef, m[0], m[3], rtol=1e-12, atol=1e-15)
    _same(device, np.corrcoef, m[0])
    _same(device, np.corrcoef, m + 1j * m[::-1], rtol=1e-12, atol=1e-15)
    _same(device, np.corrcoef, m, dtype=np.float32, rtol=1e-5, atol=1e-6)
    c = _on_device(device, np.corrcoef, m)
    assert np.all(np.abs(c) <= 1)


# ============================================================ convolve, correlate
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate_direct(device, mode):
    rng = np.random.default_rng(8)
    a, v = rng.standard_normal(20), rng.standard_normal(5)
    for fn in (np.convolve, np.correlate):
        _same(device, fn, a, v, mode=mode, rtol=1e-12, atol=1e-12)
        _same(device, fn, v, a, mode=mode, rtol=1e-12, atol=1e-12)                # the longer one second
        _same(device, fn, a[::-2], v.astype(np.float32), mode=mode, rtol=1e-12, atol=1e-12)
        _same(device, fn, a.astype(np.float32), v.astype(np.float32), mode=mode, rtol=1e-5, atol=1e-5)
        _same(device, fn, a + 1j * a[::-1], v - 2j * v, mode=mode, rtol=1e-12, atol=1e-12)
        _same(device, fn, (a * 3).astype(np.int8), (v * 3).astype(np.int8), mode=mode)      # wraps as NumPy
        _same(device, fn, a > 0, v > 0, mode=mode)


def test_convolve_long(device):
    rng = np.random.default_rng(9)
    a, v = rng.standard_normal(300), rng.standard_normal(100)       # FFT for floats, chunks for ints
    for mode in ("full", "same", "valid"):
        _same(device, np.convolve, a, v, mode=mode, atol=1e-10)
        _same(device, np.correlate, v, a + 1j, mode=mode, atol=1e-10)
    _same(device, np.correlate, a.astype(np.float32), v.astype(np.float32), mode="full", atol=2e-4)
    ia, iv = rng.integers(-1000, 1000, 300), rng.integers(-1000, 1000, 130)
    _same(device, np.convolve, ia, iv)
    _same(device, np.convolve, 2.5, a[:3])                       # convolve takes scalars


def test_convolve_errors(device):
    g = xp.asarray(np.ones(3), device=device)
    with pytest.raises(ValueError, match="v cannot be empty"):
        np.convolve(g, g[:0])
    with pytest.raises(ValueError, match="first array argument cannot be empty"):
        np.correlate(g[:0], g)
    with pytest.raises(ValueError, match="mode must be one of"):
        np.convolve(g, g, mode="middle")
    with pytest.raises(ValueError, match="too deep"):
        np.correlate(xp.reshape(g, (1, 3)), g)


# ============================================================ lexsort
def test_lexsort(device):
    rng = np.random.default_rng(10)
    k1, k2 = rng.integers(0, 3, 30), rng.standard_normal(30).round(0)
    k2[[3, 8]] = np.nan
    k3 = rng.integers(0, 2, 30).astype(bool)
    _same(device, np.lexsort, (k2, k1))
    _same(device, lambda a, b, c: np.lexsort((a, b, c)), k1, k2, k3)
    _same(device, np.lexsort, np.stack([k1, k1[::-1]]))                     # a 2-D array of keys
    m1, m2 = rng.integers(0, 3, (4, 6)), rng.integers(0, 3, (4, 6)).astype(np.float32)
    _same(device, lambda a, b: np.lexsort((a, b), axis=0), m1, m2)
    _same(device, lambda a, b: np.lexsort((a.T, b.T)), m1, m2)
    _same(device, lambda a: np.lexsort((a,)), np.array(2.0))
    _same(device, lambda a: np.lexsort((a,)), np.zeros(0))
    g = xp.asarray(k1, device=device)
    with pytest.raises(ValueError, match="same shape"):
        np.lexsort((g, g[:3]))
    with pytest.raises(AxisError):
        np.lexsort((g,), axis=1)


# ============================================================ einsum with a repeated letter
EINSUM_DIAGONALS = [("ii->i", (5, 5)), ("ii", (5, 5)), ("iij->j", (3, 3, 2)), ("...ii->...i", (2, 4, 4)),
                    ("...ii", (2, 4, 4)), ("bii->ib", (3, 4, 4)), ("iiii", (2, 2, 2, 2)), ("ii->", (1, 1)),
                    ("ii->i", (0, 0))]


@pytest.mark.parametrize("spec, shape", EINSUM_DIAGONALS, ids=[s for s, _ in EINSUM_DIAGONALS])
@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64"])
def test_einsum_repeated_letters(device, spec, shape, dtype):
    """A letter twice in one operand's subscripts takes the diagonal (trace, ``diag``) as NumPy does,
    on the device (it ran on the host before)."""
    a = np.random.default_rng(3).integers(-9, 10, shape).astype(dtype)
    if dtype == "complex64":
        a = a + 1j * a[..., ::-1]
    _same(device, lambda x: np.einsum(spec, x), a, rtol=1e-6)


def test_einsum_repeated_letters_with_other_operands(device):
    rng = np.random.default_rng(4)
    a, b, c = rng.standard_normal((3, 4, 3)), rng.standard_normal((3, 4)), rng.standard_normal((4, 4))
    _same(device, lambda x, y: np.einsum("iji,ij->j", x, y), a, b)
    _same(device, lambda x, y: np.einsum("ii,jj->ij", x, y), c, c[::-1, ::-1])
    _same(device, lambda x, y: np.einsum("jii,jk", x, y), a[:, :3, :], b)
    _same(device, lambda x, y: np.einsum("ij,ii->j", x, y), c, c.T)


def test_einsum_repeated_letters_errors(device):
    g = xp.asarray(np.ones((3, 4)), device=device)
    with pytest.raises(ValueError, match="single operand for collapsing index 'i' don't match \\(3 != 4\\)"):
        np.einsum("ii->i", g)
    with pytest.raises(ValueError, match="operand 0 for collapsing index 'i' don't match"):
        np.einsum("ii,j->i", g, xp.asarray(np.ones(2), device=device))


def test_einsum_dtype_and_out(device):
    """``dtype=`` / ``casting=`` and a GpuArray ``out=`` (a view too) stay on the device, with NumPy's
    TypeError for a cast the rule forbids."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    _same(device, lambda x, y: np.einsum("ij,jk", x, y, dtype=np.float64), a, b, rtol=1e-12)
    _same(device, lambda x, y: np.einsum("ij,jk->ki", x, y, dtype=np.int32, casting="unsafe"), a * 4, b * 4)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"):
        o = xp.zeros((2, 3, 2), dtype=xp.float64, device=device)
        r = np.einsum("ij,jk", ga, gb, out=o[1])
        assert r.shape == (3, 2)
        want = np.zeros((2, 3, 2))
        np.einsum("ij,jk", a, b, out=want[1])
        assert_same(np.asarray(o), want, rtol=1e-6)
        with pytest.raises(TypeError, match="int32"):
            np.einsum("ij,jk", ga, gb, dtype=np.int32)
        with pytest.raises(TypeError, match="int32"):
            np.einsum("ij,jk", ga, gb, out=xp.zeros((3, 2), dtype=xp.int32, device=device))
        with pytest.raises(ValueError, match="shape"):
            np.einsum("ij,jk", ga, gb, out=xp.zeros((2, 2), dtype=xp.float32, device=device))
