"""The float64 inverse trigonometric and hyperbolic functions (render/wgsl_f64_inv.py: asin, acos, atan,
atan2, asinh, acosh, atanh), pow (render/wgsl_f64_pow.py: power, float_power, ``**``, exp10) and the
special functions built on the float64 library (sinc, entr, xlog1py) against NumPy, on both devices.

On wgpu these run on the device (no host fallback, ``offload="always"``), within ``ULP_BOUND`` of NumPy
(glibc) over the whole argument range (random arguments across the exponent range and the natural domain,
values near +-1, subnormals), on the boundaries of every branch of fdlibm's code with their neighbours,
and with NumPy's special values (NaN, +-inf, +-0.0, the signs of zeros and infinities) exactly. pow also
on every pair of special values (C99 Annex F), near overflow and underflow (subnormal results), for x
near 1 with huge exponents, and exactly for integer powers that are representable; NumPy's fast paths
(``x ** 2``, ``x ** 0.5``, ``x ** -1``) bit for bit, ``x ** 3`` through pow as in NumPy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.core.ops import OPS
from gpuarray.providers.wgpu_kinds import F64_HOST_OPS

from .test_mathlib_f64 import SPECIAL, _around, _ulps

# the largest errors measured against NumPy on lavapipe (NumPy: glibc) and the H200 (whose NumPy does not
# give glibc's inverse hyperbolics); asinh, acosh, atanh: correctly rounded on samples checked against an
# exact reference, 1 ULP from NumPy on the H200, 2 from glibc (itself 1-2 ULP off) on lavapipe;
# sinc, entr, xlog1py: a product or quotient of a 1 ULP function
ULP_BOUND = {"asin": 1.0, "acos": 1.0, "atan": 1.0, "asinh": 2.0, "acosh": 2.0, "atanh": 2.0,
             "atan2": 1.0, "pow": 1.0, "float_power": 1.0, "exp10": 1.0, "sinc": 2.0, "entr": 2.0, "xlog1py": 2.0}
UNARY = ("asin", "acos", "atan", "asinh", "acosh", "atanh")


def _mags(rng: np.random.Generator, n: int, lo: float = -323.5, hi: float = 308.2) -> np.ndarray:
    """``n`` magnitudes spread evenly over the exponent range, both signs."""
    return rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(lo, hi, n)


def _unary_args(name: str) -> np.ndarray:
    rng = np.random.default_rng(13)
    near1 = 1.0 - 10.0 ** rng.uniform(-16, -1, 20000)
    if name in ("asin", "acos", "atanh"):
        # |x| < 1/2 (the tiny cut-offs), the 0.975 split of asin, 1 and beyond
        edges = _around([0.5, 0.975, 0.9749999999999999, 1.0, 2.0 ** -27, 2.0 ** -28, 2.0 ** -57, 1e-300, 0.3, 0.7], 4)
        parts = [rng.uniform(-1, 1, 100000), near1, 10.0 ** rng.uniform(-323.5, 0, 20000), _mags(rng, 5000)]
    elif name == "atan":
        # the reduction's intervals 7/16, 11/16, 19/16, 39/16, the tiny cut-off and 2^66
        edges = _around([7 / 16, 11 / 16, 19 / 16, 39 / 16, 2.0 ** -29, 2.0 ** 66, 1.0, 1e300], 4)
        parts = [_mags(rng, 100000), rng.uniform(-3, 3, 50000), rng.uniform(-1, 1, 20000)]
    elif name == "asinh":
        edges = _around([2.0 ** -28, 2.0, 2.0 ** 28, 1.0, 0.5, 1e300], 4)
        parts = [_mags(rng, 100000), rng.uniform(-3, 3, 50000), rng.uniform(-1e-3, 1e-3, 10000)]
    else:                                                              # acosh
        edges = _around([1.0, 2.0, 2.0 ** 28, 1.5, 1e300, 1.7976931348623157e308], 4)
        parts = [10.0 ** rng.uniform(0, 308.2, 100000), rng.uniform(1, 3, 50000), 2.0 - near1,
                 1.0 + 10.0 ** rng.uniform(-15.5, -6, 10000), rng.uniform(-2, 1, 5000)]
    return np.concatenate([np.array(SPECIAL), edges, -edges, *parts])


def _check(name: str, args: tuple[np.ndarray, ...], got: np.ndarray, want: np.ndarray) -> None:
    """NumPy's NaN, infinities and signed zeros exactly, the rest within ULP_BOUND."""
    assert got.dtype == np.float64
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{name}: NaN positions differ")
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf], err_msg=f"{name}: infinities differ")
    zero = want == 0
    np.testing.assert_array_equal(got[zero], want[zero], err_msg=f"{name}: zeros differ")
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]), err_msg=f"{name}: signs of zeros")
    e = _ulps(got, want)
    w = int(np.argmax(e))
    assert e[w] <= ULP_BOUND[name], (f"{name}{tuple(float(a[w]) for a in args)} = {got[w]!r}, "
                                     f"NumPy {want[w]!r}: {e[w]} ULP")


def _on(device: xp.Device, fn: Callable[..., Any], *arrays: np.ndarray) -> np.ndarray:
    """``fn`` of ``arrays`` on ``device``, checked to run there (no host fallback)."""
    gs = [xp.asarray(a, device=device) for a in arrays]
    with xp.config(offload="always"), np.errstate(all="ignore"):
        xp.reset_metrics()
        got = np.asarray(fn(*gs))
        assert xp.metrics()["host_fallbacks"] == 0
    return got


@pytest.mark.parametrize("name", UNARY)
def test_float64_inverse_functions_on_the_device(name: str, device: xp.Device) -> None:
    x = _unary_args(name)
    with np.errstate(all="ignore"):
        want = getattr(np, OPS[name].ufunc)(x)
    _check(name, (x,), _on(device, getattr(xp, name), x), want)


def _pairs(values: list[float]) -> tuple[np.ndarray, np.ndarray]:
    v = np.array(values)
    return np.repeat(v, v.size), np.tile(v, v.size)


def test_float64_atan2_on_the_device(device: xp.Device) -> None:
    """Every pair of special values (C99 Annex F: +-0, +-inf by the signs), random pairs across the
    exponent range, and ratios around 2^+-60, where e_atan2.c switches to +-pi/2 and 0 / pi."""
    rng = np.random.default_rng(17)
    ys, xs = _pairs([*SPECIAL, 2.0 ** 60, 2.0 ** -60, 0.5, -3.0, 1e-310])
    n = 100000
    r = 2.0 ** rng.uniform(-64, 64, n) * rng.choice([-1.0, 1.0], n)
    xb = rng.choice([-1.0, 1.0], n) * rng.uniform(1, 2, n)
    y = np.concatenate([ys, _mags(rng, n), rng.uniform(-1, 1, n), xb * r])
    x = np.concatenate([xs, _mags(rng, n), rng.uniform(-1, 1, n), xb])
    _check("atan2", (y, x), _on(device, xp.atan2, y, x), np.arctan2(y, x))


POW_SPECIAL = [*SPECIAL, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 1.5, -1.5, 10.0, 0.1, 2.0 ** 31, 2.0 ** 31 + 1, 2.0 ** 53,
               2.0 ** 53 + 2, 2.0 ** 52 + 1, -(2.0 ** 52 + 1), 2.0 ** 64, -(2.0 ** 64), 2.0 ** 65, 1 + 2.0 ** -52,
               1 - 2.0 ** -53, 1 + 2.0 ** -21, 1 - 2.0 ** -21, -(1 + 2.0 ** -52), 1024.0, 1023.0, -1074.0, -1075.0]


def _pow_args() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(19)
    xs, ys = _pairs(POW_SPECIAL)
    n = 60000
    xl, yl = [xs], [ys]

    def add(x: np.ndarray, y: np.ndarray) -> None:
        xl.append(x)
        yl.append(y)

    add(_mags(rng, n), rng.uniform(-30, 30, n))
    add(np.abs(_mags(rng, n)), rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-20, 20, n))
    add(rng.uniform(0, 4, n), rng.uniform(-400, 400, n))
    # x near 1 with huge exponents: |x - 1| < 2^-20 (the series path above 2^31) and beyond
    d = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-15, -5, n)
    x = 1.0 + d
    add(x, rng.choice([-1.0, 1.0], n) * rng.uniform(1, 740, n) / (x - 1.0))
    # negative bases with integer exponents, up to 2^53 and the odd ones near 2^52
    add(-rng.uniform(0, 10, n), rng.integers(-300, 300, n).astype(np.float64))
    add(-(1.0 + rng.uniform(-1e-15, 1e-15, n)), rng.integers(-2 ** 53, 2 ** 53, n).astype(np.float64))
    # results near overflow and in the subnormals; subnormal bases
    x = 10.0 ** rng.uniform(-5, 5, n)
    add(x, (1024 - rng.uniform(0, 1e-9, n) * rng.integers(0, 2, n)) / np.log2(x))
    x = rng.uniform(0.01, 0.99, n)
    add(x, rng.uniform(-1076, -1000, n) / np.log2(x))
    add(10.0 ** rng.uniform(-323.5, -308, n), rng.uniform(-1.2, 1.2, n))
    # 2^y where y log2(x) is around 1024 and -1075 (e_pow.c's last-half-ULP tests)
    e = np.arange(-6, 7)
    y = np.concatenate([1024 + e * 2.0 ** -42, -1075 + e * 2.0 ** -42, -1074.5 + e * 2.0 ** -43])
    for b in (2.0, -2.0, 0.5):
        add(np.full(y.size, b), y if b != 0.5 else -y)
    return np.concatenate(xl), np.concatenate(yl)


@pytest.mark.parametrize("name", ["pow", "float_power"])
def test_float64_pow_on_the_device(name: str, device: xp.Device) -> None:
    x, y = _pow_args()
    with np.errstate(all="ignore"):
        want = getattr(np, OPS[name].ufunc)(x, y)
    _check(name, (x, y), _on(device, getattr(np, OPS[name].ufunc), x, y), want)


def test_float64_pow_exact_for_integer_powers(device: xp.Device) -> None:
    """b^k for integers with a representable result is exact, as in NumPy (fdlibm's promise)."""
    b, k = np.meshgrid(np.arange(-100.0, 101.0), np.arange(0.0, 80.0))
    b, k = b.ravel(), k.ravel()
    keep = np.abs(b) ** k < 2.0 ** 53
    b, k = b[keep], k[keep]
    np.testing.assert_array_equal(_on(device, xp.pow, b, k), np.power(b, k))


def test_float64_power_fast_paths_as_numpy(device: xp.Device) -> None:
    """``x ** 2``, ``x ** 0.5``, ``x ** -1`` (and np.power with those scalars) are NumPy's square, sqrt and
    reciprocal bit for bit (sqrt: -0.0 stays -0.0 and -inf gives NaN, where C's pow gives +0 and +inf);
    ``x ** 1`` and ``x ** 0`` are x and 1 (pow's own special cases); ``x ** 3`` is pow, as in NumPy."""
    rng = np.random.default_rng(23)
    x = np.concatenate([np.array(SPECIAL), _mags(rng, 20000), rng.uniform(-3, 3, 20000)])
    g = xp.asarray(x, device=device)
    with xp.config(offload="always"), np.errstate(all="ignore"):
        for p in (2, 2.0, 0.5, -1, -1.0, 1, 1.0, 0, 0.0, 3, 3.0, -2.0):
            xp.reset_metrics()
            for got, want in ((g ** p, x ** p), (np.power(g, p), np.power(x, p))):
                got = np.asarray(got)
                assert xp.metrics()["host_fallbacks"] == 0
                if p in (3, 3.0, -2.0):
                    _check("pow", (x,), got, want)
                else:
                    np.testing.assert_array_equal(got, want, err_msg=f"x ** {p!r}")
                    num = ~np.isnan(want)
                    np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(want[num]), err_msg=f"x ** {p!r}")


def test_float64_exp10_sinc_entr_xlog1py_on_the_device(device: xp.Device) -> None:
    """Against the op table's oracles: exp10 is np.power(10, x), sinc NumPy's, entr and xlog1py SciPy's
    definitions (entr(0) = 0, entr(x < 0) = -inf, xlog1py(0, y) = 0 unless y is NaN)."""
    rng = np.random.default_rng(29)
    e = np.concatenate([np.array(SPECIAL), _around([308.25, 308.3, -307.65, -323.3, -323.7, 0.0, 22.0, -22.0]),
                        rng.uniform(-330, 310, 50000), rng.uniform(-1, 1, 20000), np.arange(-330.0, 311.0)])
    s = np.concatenate([np.array(SPECIAL), _mags(rng, 30000), rng.uniform(-20, 20, 30000), np.arange(-200, 201) * 0.5,
                        _around([1.0, 2.0, 0.5, 1e-20, 1e300])])
    p = np.concatenate([np.array(SPECIAL), np.abs(_mags(rng, 30000)), rng.uniform(0, 2, 30000),
                        -rng.uniform(0, 1, 100)])
    a = np.concatenate([np.repeat(np.array(SPECIAL), len(SPECIAL)), _mags(rng, 40000), rng.uniform(-3, 3, 20000)])
    b = np.concatenate([np.tile(np.array(SPECIAL), len(SPECIAL)), rng.uniform(-1, 3, 40000), _mags(rng, 20000)])
    b[-100:] = -1.0
    a[-50:] = 0.0
    with np.errstate(all="ignore"):
        cases = (("exp10", xp.special.exp10, (e,)), ("sinc", xp.special.sinc, (s,)), ("entr", xp.special.entr, (p,)),
                 ("xlog1py", xp.special.xlog1py, (a, b)))
        for name, fn, args in cases:
            want = np.sinc(*args) if name == "sinc" else OPS[name].host_impl()(*args)
            _check(name, args, _on(device, fn, *args), want)
    # the defining special values
    got = _on(device, xp.special.entr, np.array([0.0, -0.0, -1.0, np.inf, 1.0]))
    np.testing.assert_array_equal(got, [0.0, 0.0, -np.inf, -np.inf, 0.0])
    got = _on(device, xp.special.xlog1py, np.array([0.0, 0.0, 0.0, 1.0]), np.array([-1.0, np.inf, np.nan, -1.0]))
    np.testing.assert_array_equal(got, [0.0, 0.0, np.nan, -np.inf])
    got = _on(device, xp.special.sinc, np.array([0.0, -0.0, 1.0, np.inf]))
    np.testing.assert_array_equal(got, [1.0, 1.0, np.sinc(1.0), np.nan])
    np.testing.assert_array_equal(_on(device, xp.special.exp10, np.arange(0.0, 23.0)), 10.0 ** np.arange(0.0, 23.0))


def test_float64_ops_have_no_host_fallback(wgpu_device: xp.Device) -> None:
    """Every float64 transcendental of the op table runs on an adapter with shader-f64."""
    assert F64_HOST_OPS == frozenset()
    assert not wgpu_device.provider.device_info()["float64_on_host"]
