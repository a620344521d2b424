"""SciPy with ``SCIPY_ARRAY_API=1`` on GpuArrays: special, stats, fft, signal, cluster.vq.

Each function gets GpuArrays and returns GpuArrays on the same device, matching SciPy on NumPy.
``scipy.special`` functions come from ``gpuarray.special`` (on the device where it composes them,
else SciPy's ufunc on a host copy with the result back on the input's device)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import gpuarray as xp

from .conftest import close, on_device

scipy = pytest.importorskip("scipy")
import scipy.fft as sfft  # noqa: E402
import scipy.signal as signal  # noqa: E402
import scipy.special as special  # noqa: E402
import scipy.stats as stats  # noqa: E402
from scipy.cluster.vq import whiten  # noqa: E402

# SciPy special functions without a device version run on a host copy (counted, warned once each)
pytestmark = pytest.mark.filterwarnings("ignore::gpuarray.HostFallbackWarning")

RNG = np.random.default_rng(1)
A = RNG.standard_normal((6, 10))
POS = np.abs(A) + 0.25
UNIT = 1.0 / (1.0 + np.exp(-A))           # in (0, 1)


def test_array_api_enabled() -> None:
    from scipy._lib._array_api import SCIPY_ARRAY_API
    assert SCIPY_ARRAY_API, "SCIPY_ARRAY_API=1 must be set before SciPy is imported"


Case = tuple[Callable[..., Any], tuple]
CASES: dict[str, Case] = {
    # scipy.special
    "special.logsumexp": (lambda a: special.logsumexp(a, axis=1), (A,)),
    "special.logsumexp-all": (special.logsumexp, (A,)),
    "special.logsumexp-b": (lambda a, b: special.logsumexp(a, axis=0, b=b), (A, POS)),
    "special.softmax": (lambda a: special.softmax(a, axis=1), (A,)),
    "special.log_softmax": (lambda a: special.log_softmax(a, axis=0), (A,)),
    "special.erf": (special.erf, (A,)),
    "special.erfc": (special.erfc, (A,)),
    "special.erfinv": (special.erfinv, (np.tanh(A),)),
    "special.gammaln": (special.gammaln, (POS,)),
    "special.ndtr": (special.ndtr, (A,)),
    "special.ndtri": (special.ndtri, (UNIT,)),
    "special.log_ndtr": (special.log_ndtr, (A,)),
    "special.psi": (special.psi, (POS,)),
    "special.i0": (special.i0, (A,)),
    "special.expit": (special.expit, (A,)),
    "special.logit": (special.logit, (UNIT,)),
    "special.entr": (special.entr, (A,)),
    "special.xlogy": (special.xlogy, (A, POS)),
    "special.xlog1py": (special.xlog1py, (A, POS)),
    "special.rel_entr": (special.rel_entr, (POS, POS[::-1].copy())),
    "special.exp2": (special.exp2, (A,)),
    "special.exp10": (special.exp10, (A,)),
    "special.sinc": (special.sinc, (A,)),
    # scipy.stats
    "stats.zscore": (lambda a: stats.zscore(a, axis=0), (A,)),
    "stats.zscore-ddof": (lambda a: stats.zscore(a, axis=1, ddof=1), (A,)),
    "stats.skew": (lambda a: stats.skew(a, axis=1), (A,)),
    "stats.skew-unbiased": (lambda a: stats.skew(a, axis=0, bias=False), (A,)),
    "stats.kurtosis": (lambda a: stats.kurtosis(a, axis=1), (A,)),
    "stats.moment": (lambda a: stats.moment(a, order=3, axis=0), (A,)),
    "stats.moment-4": (lambda a: stats.moment(a, order=4, axis=None), (A,)),
    "stats.variation": (lambda a: stats.variation(a, axis=0), (POS,)),
    "stats.sem": (lambda a: stats.sem(a, axis=1), (A,)),
    "stats.gmean": (lambda a: stats.gmean(a, axis=0), (POS,)),
    "stats.hmean": (lambda a: stats.hmean(a, axis=1), (POS,)),
    "stats.describe-mean": (lambda a: stats.describe(a, axis=0).mean, (A,)),
    "stats.describe-variance": (lambda a: stats.describe(a, axis=0).variance, (A,)),
    "stats.ttest_ind": (lambda a: stats.ttest_ind(a[:3], a[3:], axis=0).statistic, (A,)),
    "stats.pearsonr": (lambda a: stats.pearsonr(a[0], a[1]).statistic, (A,)),
    # scipy.cluster.vq
    "cluster.vq.whiten": (whiten, (A,)),
    # scipy.signal
    "signal.fftconvolve": (lambda a: signal.fftconvolve(a[0], a[1]), (A,)),
    "signal.fftconvolve-same-2d": (lambda a: signal.fftconvolve(a, a[:3, :4], mode="same"), (A,)),
    "signal.fftconvolve-valid-axes": (lambda a: signal.fftconvolve(a, a[:, :3], mode="valid", axes=1), (A,)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_issue21_functions_without_host_fallback(dtype: Any, wgpu_device: xp.Device) -> None:
    """Issue 21's SciPy functions run whole on a wgpu device, every kernel there under
    ``offload="always"``: special functions, the ``stats`` moments and tests, ``fftconvolve``."""
    if dtype == np.float64 and not wgpu_device.supports(np.dtype(np.float64)):
        pytest.skip("no float64 on this adapter")
    names = ("special.erf", "special.gammaln", "stats.zscore", "stats.skew", "stats.kurtosis", "stats.moment",
             "stats.ttest_ind", "stats.pearsonr", "signal.fftconvolve", "signal.fftconvolve-same-2d")
    with xp.config(offload="always"):
        for name in names:
            fn, args = CASES[name]
            xp.reset_metrics()
            got = fn(*(xp.asarray(a.astype(dtype), device=wgpu_device) for a in args))
            xp.evaluate(got)
            assert xp.metrics()["host_fallbacks"] == 0, name


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(CASES))
def test_scipy_function(name: str, dtype: Any, device: xp.Device) -> None:
    fn, args = CASES[name]
    host = tuple(a.astype(dtype) for a in args)
    want = fn(*host)
    got = fn(*(xp.asarray(a, device=device) for a in host))
    on_device(got, device)
    assert got.dtype == np.asarray(want).dtype, f"dtype {got.dtype} != {np.asarray(want).dtype}"
    rtol, atol = (1e-9, 1e-12) if dtype == np.float64 else (2e-4, 2e-5)
    if name in ("signal.fftconvolve-same-2d", "signal.fftconvolve-valid-axes", "signal.fftconvolve"):
        atol = 1e-10 if dtype == np.float64 else 1e-4      # FFT round-off on values near zero
    close(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ttest_ind_and_pearsonr_on_the_device(dtype: Any, wgpu_device: xp.Device) -> None:
    """ttest_ind (special.stdtr) and pearsonr (special.betaincc, SciPy 1.17's two-sided p-value) of
    GpuArrays: SciPy's NumPy results, with no host fallback (betainc, betaincc and stdtr run on the device)."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((5, 30)).astype(dtype)
    b = (0.3 * a + rng.standard_normal((5, 30))).astype(dtype)
    ga, gb = xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device)
    rtol = 1e-10 if dtype == np.float64 else 2e-5
    for fn in (lambda u, v: stats.ttest_ind(u, v, axis=1), lambda u, v: stats.pearsonr(u, v, axis=1)):
        want = fn(a, b)
        xp.reset_metrics()
        with xp.config(fallback="raise"):
            got = fn(ga, gb)
            stat, p = on_device(got.statistic, wgpu_device), on_device(got.pvalue, wgpu_device)
            assert p.dtype == np.asarray(want.pvalue).dtype
            close(stat, want.statistic, rtol=rtol, atol=0)
            close(p, want.pvalue, rtol=rtol, atol=0)
        assert xp.metrics()["host_fallbacks"] == 0


def test_special_results_stay_on_a_non_default_device(wgpu_device: xp.Device) -> None:
    """SciPy's generic fallback would put results on the default device (here cpu); gpuarray.special
    keeps them on the input's device, and reports the host round trip as a fallback."""
    g = xp.asarray(A, device=wgpu_device)
    xp.reset_metrics()
    with xp.config(fallback="silent"):
        on_device(special.j0(g), wgpu_device)
    assert xp.metrics()["host_fallbacks"] == 1
    for fn in (special.expit, special.erf, special.ndtri, special.gammaln, special.i0e,
               lambda v: special.gammainc(xp.abs(v), xp.abs(v)), lambda v: special.chdtrc(xp.abs(v), xp.abs(v)),
               lambda v: special.betainc(xp.abs(v), xp.abs(v), v * v / (1 + v * v))):
        xp.reset_metrics()
        on_device(fn(g.astype(xp.float32)), wgpu_device)
        assert xp.metrics()["host_fallbacks"] == 0, fn


# SciPy code that makes arrays without device= (xp.asarray(0.0), xp.zeros(n)) puts them on the default
# device. 0-d ones follow the other operands (gpuarray treats them as scalars); arrays with dimensions
# do not, so these need the default device to be the data's device, as CuPy's current device would be.
DEFAULT_DEVICE_CASES: dict[str, Case] = {
    "stats.ttest_1samp": (lambda a: stats.ttest_1samp(a, 0.0, axis=1).statistic, (A,)),
    "signal.convolve": (lambda a: signal.convolve(a[0], a[1]), (A,)),
}


@contextmanager
def default_device(device: xp.Device | str) -> Iterator[xp.Device]:
    """``device`` as the default device inside the block (restored after)."""
    before = xp.default_device()
    xp.set_default_device(device)
    try:
        yield xp.Device(str(device))
    finally:
        xp.set_default_device(before)


@pytest.fixture
def default_is(device: xp.Device) -> Iterator[xp.Device]:
    with default_device(device) as dev:
        yield dev


@pytest.mark.parametrize("name", list(DEFAULT_DEVICE_CASES))
def test_scipy_with_default_device(name: str, default_is: xp.Device) -> None:
    fn, args = DEFAULT_DEVICE_CASES[name]
    got = fn(*(xp.asarray(a, device=default_is) for a in args))
    close(on_device(got, default_is), fn(*args), rtol=1e-9, atol=1e-12)


@pytest.mark.xfail(strict=True, raises=ValueError, reason=(
    "SciPy's ttest_1samp builds popmean with xp.asarray/xp.broadcast_to and no device=: an array with "
    "dimensions on the default device (cpu here) cannot meet one on wgpu:0"))
def test_scipy_ttest_1samp_on_a_non_default_device(wgpu_device: xp.Device) -> None:
    with default_device("cpu"):
        stats.ttest_1samp(xp.asarray(A, device=wgpu_device), 0.0, axis=1)


# ---- scipy.fft: through gpuarray.fft (complex64 / complex128)
X1 = RNG.standard_normal(24)
C1 = X1 + 1j * RNG.standard_normal(24)
X2 = RNG.standard_normal((6, 8))
C2 = X2 + 1j * RNG.standard_normal((6, 8))

FFT_CASES: dict[str, Case] = {
    "fft": (sfft.fft, (C1,)),
    "fft-real-input": (sfft.fft, (X1,)),
    "fft-n-ortho": (lambda a: sfft.fft(a, n=32, norm="ortho"), (C1,)),
    "ifft": (sfft.ifft, (C1,)),
    "rfft": (sfft.rfft, (X1,)),
    "rfft-odd-n": (lambda a: sfft.rfft(a, n=15), (X1,)),
    "irfft": (lambda a: sfft.irfft(sfft.rfft(a)), (X1,)),
    "hfft": (lambda a: sfft.hfft(a[:13]), (C1,)),
    "ihfft": (sfft.ihfft, (X1,)),
    "fft2": (sfft.fft2, (C2,)),
    "ifft2": (sfft.ifft2, (C2,)),
    "fftn-axes": (lambda a: sfft.fftn(a, axes=(0,)), (C2,)),
    "rfft2": (sfft.rfft2, (X2,)),
    "irfft2": (lambda a: sfft.irfft2(sfft.rfft2(a), s=a.shape), (X2,)),
    "rfftn-forward": (lambda a: sfft.rfftn(a, norm="forward"), (X2,)),
    "irfftn": (lambda a: sfft.irfftn(sfft.rfftn(a), s=a.shape), (X2,)),
    "fftshift": (sfft.fftshift, (X2,)),
    "ifftshift": (lambda a: sfft.ifftshift(a, axes=1), (X2,)),
}


@pytest.mark.parametrize("precision", ["double", "single"])
@pytest.mark.parametrize("name", list(FFT_CASES))
def test_scipy_fft(name: str, precision: str, device: xp.Device) -> None:
    fn, args = FFT_CASES[name]
    host = tuple(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64) if precision == "double" else
                 a.astype(np.complex64 if a.dtype.kind == "c" else np.float32) for a in args)
    want = fn(*host)
    got = fn(*(xp.asarray(a, device=device) for a in host))
    on_device(got, device)
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    rtol, atol = (1e-9, 1e-10) if precision == "double" else (1e-4, 1e-4)
    close(got, want, rtol=rtol, atol=atol)


def test_scipy_fftfreq_on_device(device: xp.Device) -> None:
    got = sfft.fftfreq(8, d=0.5, xp=xp, device=device)
    close(on_device(got, device), np.fft.fftfreq(8, d=0.5))
    close(on_device(sfft.rfftfreq(9, xp=xp, device=device), device), np.fft.rfftfreq(9))
