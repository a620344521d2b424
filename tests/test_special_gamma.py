"""``gammaln``, ``psi``, ``i0``, ``i0e``, ``i1``, ``i1e`` (render/wgsl_gamma.py) beyond the generic tests
(tests/test_special_ops.py, tests/test_elementwise.py): special values as SciPy's, the zeros of gammaln
(1, 2) and psi (1.4616, -0.5041) against exact values (mpmath, 200 bits), negative arguments, the overflow
of i0 and i1, fusion with a neighbour, and no host fallback.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp

from .conftest import device_numerics

special = pytest.importorskip("scipy.special")

NAMES = ("gammaln", "psi", "i0", "i0e", "i1", "i1e")
F32, F64 = np.dtype("float32"), np.dtype("float64")

# (x, exact value) from mpmath at 200 bits; float32 pairs have float32 arguments
GAMMALN_EXACT = (
    (0.9999999990686774, 5.375739798578573e-10),
    (1.0000000000009095, -5.249745890076018e-13),
    (0.9999999999999998, 1.2816762426960017e-16),
    (1.0000000000000002, -1.2816762426960008e-16),
    (1.001, -0.0005763935982833062),
    (0.999, 0.0005780385328913802),
    (1.9999999999999996, -1.8775396131086232e-16),
    (2.0000000000000004, 1.8775396131086244e-16),
    (1.9999999990686774, -3.9374859519130207e-10),
    (2.000001, 4.2278465762452923e-07),
    (1.4616321449683622, -0.12148629053584961),
    (1.25, -0.09827183642181316),
    (1.75, -0.08440112102048555),
    (0.9, 0.06637623973474295),
    (2.5, 0.2846828704729192),
)
GAMMALN_EXACT32 = (
    (0.9999999403953552, 3.440473758723674e-08),
    (1.0000001192092896, -6.880945764253472e-08),
    (1.9999998807907104, -5.0399815637755424e-08),
    (2.000000238418579, 1.0079965877070314e-07),
    (1.4616321325302124, -0.12148629053584953),
    (0.9990000128746033, 0.0005780310802754651),
    (1.0010000467300415, -0.0005764204947818381),
    (1.999899983406067, -4.228222335681117e-05),
    (2.0000998973846436, 4.2238267333173845e-05),
)
PSI_EXACT = (
    (1.4616321449683622, -9.241265521729427e-17),
    (1.4616321449683625, 1.2245374622004068e-16),
    (1.46163214496836, -2.2410766695906462e-15),
    (1.4616, -3.110625123034165e-05),
    (1.4617, 6.56593922936765e-05),
    (-0.5040830082644554, 7.289763902976895e-17),
    (-0.50408, 2.6893270919759762e-05),
    (-0.5041, -0.00015190292676457303),
    (-0.51, -0.05293173696963593),
    (-0.49, 0.1258288023670366),
    (-0.3, 2.113309779635399),
    (-0.7, -2.073952793628704),
)
PSI_EXACT32 = (
    (1.4616321325302124, -1.203605254910667e-08),
    (1.461632251739502, 1.0331946336967871e-07),
    (1.4600000381469727, -0.0015805250181043615),
    (-0.5040830373764038, -2.602549550299359e-07),
    (-0.504082977771759, 2.7259856236381173e-07),
    (-0.5040000081062317, 0.0007419991377107876),
    (-0.5049999952316284, -0.008198384193321365),
    (-0.5099999904632568, -0.05293165158939068),
    (-0.49000000953674316, 0.12582871714488275),
    (-0.30000001192092896, 2.113309613396139),
    (-0.699999988079071, -2.0739526233241623),
    (-0.800000011920929, -4.039040228350195),
)


def _skip(dt: np.dtype, device: xp.Device) -> None:
    if not device.supports(dt):
        pytest.skip(f"{dt} is not supported on {device}")


def _run(name: str, x: np.ndarray, device: xp.Device) -> np.ndarray:
    xp.reset_metrics()
    with xp.config(fallback="raise"):
        got = np.asarray(getattr(xp.special, name)(xp.asarray(x, device=device)))
    assert xp.metrics()["host_fallbacks"] == 0
    assert got.dtype == x.dtype
    return got


def _scipy(name: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(getattr(special, name)(x.astype(np.float64)))


def _ulps(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in ULP of the exact value rounded to got's type."""
    e = exact.astype(got.dtype)
    return np.abs(got.astype(np.float64) - exact) / np.spacing(np.abs(e)).astype(np.float64)


def _scaled_ulps(name: str, x: np.ndarray, got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in ULP of max(|want|, SCALE[name](x)) (tests/test_special_ops.py: the reflection's
    terms for gammaln and psi at x < 0 ...)."""
    from .test_special_ops import SCALE

    with np.errstate(all="ignore"):
        mag = np.abs(want.astype(got.dtype))
        if name in SCALE:
            mag = np.maximum(mag, SCALE[name](x).astype(got.dtype))
        return np.abs(got.astype(np.float64) - want) / np.spacing(mag).astype(np.float64)


def _specials(dt: np.dtype) -> np.ndarray:
    fi = np.finfo(dt)
    big = 2.0 ** (52 if dt == F64 else 23)
    vals = [0.0, -0.0, 1.0, 2.0, 3.0, 10.0, 11.0, -1.0, -2.0, -3.0, -10.0, -34.0, -35.0, -big, -big - 2, -1e30,
            0.5, -0.5, -1.5, -2.5, -100.5, 1e-30, -1e-30, float(fi.tiny), -float(fi.tiny),
            float(fi.smallest_subnormal), -float(fi.smallest_subnormal), float(fi.tiny) / 4, 1e30,
            float(fi.max), -float(fi.max), np.inf, -np.inf, np.nan, 8.0, -8.0, 7.999, 8.001]
    if dt == F64:
        vals += [2.0 ** -1024, 2.0 ** -1024 * (1 + 2.0 ** -50), -(2.0 ** -1024), 2.556348e305, 2.5563481e305,
                 1e300, -1e300, 709.782712893384, 709.7827128933841, -709.7827128933841, 1e17, 2.0 ** 58]
    else:
        vals += [1e36, 4e36, 5e36, 2.0 ** 58]
    with np.errstate(all="ignore"):
        return np.array(vals, dtype=dt)


@pytest.mark.parametrize("dt", [F32, F64], ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_special_values_as_scipy(name: str, dt: np.dtype, device: xp.Device) -> None:
    """NaN, infinities and signed zeros exactly as SciPy's float64 result rounded to ``dt`` (gammaln of 0,
    -0.0, negative integers, +-inf; psi of +-0, negative integers, -inf; i0 / i1 of +-inf: NaN; i1(-0.0) =
    +0.0 ...), finite values within 4 ULP (of the reflection's terms for gammaln and psi at x < 0)."""
    _skip(dt, device)
    x = _specials(dt)
    if dt == F32 and device_numerics(device)["flushes_f32_subnormals"]:
        x = x[(x == 0) | ~(np.abs(x) < np.finfo(dt).tiny)]      # read as zeros there (docs/accuracy.md)
    got = _run(name, x, device)
    want = _scipy(name, x)
    with np.errstate(all="ignore"):
        w = want.astype(dt)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(w), err_msg=f"{name}({dt}) NaN at {x}")
    inf = np.isinf(got) | np.isinf(w)
    np.testing.assert_array_equal(got[inf], w[inf], err_msg=f"{name}({dt}) infinities at {x[inf]}")
    zero = (got == 0) & (w == 0)
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(w[zero]), err_msg=f"{name}({dt}) signs")
    # zero and subnormal results (i1 of subnormals: x / 2 rounded): within 1 ULP of the subnormals
    sub = np.isfinite(w) & (np.abs(w) < np.finfo(dt).tiny)
    close = np.abs(got[sub].astype(np.float64) - w[sub]) <= float(np.finfo(dt).smallest_subnormal)
    if dt == F32 and device_numerics(device)["flushes_f32_subnormals"]:
        close |= got[sub] == 0           # a subnormal result flushed (NVIDIA: docs/accuracy.md)
    assert np.all(close), name
    fin = np.isfinite(w) & (w != 0) & (np.abs(w) >= np.finfo(dt).tiny)
    err = _scaled_ulps(name, x, got, want)[fin]
    assert err.max(initial=0) <= 4, f"{name}({dt}): {err.max()} ULP at {x[fin][np.argmax(err)]}"


@pytest.mark.parametrize("dt", [F32, F64], ids=str)
def test_gammaln_relative_accuracy_at_its_zeros(dt: np.dtype, device: xp.Device) -> None:
    """Near 1 and 2 (the zeros) and at the minimum 1.4616, within 4 ULP of the exact value (SciPy's float64
    is accurate only absolutely below 2: 5e7 ULP off at 1 - 2^-30, which tests/test_special_ops.py's
    SCALE allows for)."""
    _skip(dt, device)
    if device.kind != "wgpu" and dt == F64:
        pytest.skip("the host computes SciPy's float64 gammaln, accurate only absolutely there")
    pairs = np.array(GAMMALN_EXACT if dt == F64 else GAMMALN_EXACT32)
    x = pairs[:, 0].astype(dt)
    got = _run("gammaln", x, device)
    assert np.all(got[(x == 1) | (x == 2)] == 0)
    err = _ulps(got, pairs[:, 1])
    assert err.max() <= 4, f"gammaln({dt}): {err.max()} ULP at {x[np.argmax(err)]}"
    exact = _run("gammaln", np.array([1.0, 2.0], dt), device)
    assert np.all(exact == 0) and not np.any(np.signbit(exact))       # +0.0, as SciPy's


@pytest.mark.parametrize("dt", [F32, F64], ids=str)
def test_psi_relative_accuracy_at_its_zeros(dt: np.dtype, device: xp.Device) -> None:
    """About the positive zero 1.4616 and the first negative one -0.5041 (where SciPy's own result is
    relatively accurate too), within 4 ULP of the exact value (float64: 4 + 8, SciPy's series about -0.5041,
    which the float64 version follows, is up to 8 ULP off at 0.2 from it)."""
    _skip(dt, device)
    pairs = np.array(PSI_EXACT if dt == F64 else PSI_EXACT32)
    x = pairs[:, 0].astype(dt)
    got = _run("psi", x, device)
    err = _ulps(got, pairs[:, 1])
    assert err.max() <= (4 if dt == F32 else 12), f"psi({dt}): {err.max()} ULP at {x[np.argmax(err)]}"
    # and within 4 ULP of SciPy near them
    near = np.concatenate([1.4616321449683622 + np.linspace(-1e-3, 1e-3, 101),
                           -0.5040830082644554 + np.linspace(-0.29, 0.29, 201)]).astype(dt)
    err = _ulps(_run("psi", near, device), _scipy("psi", near))
    assert err.max() <= 4, f"psi({dt}) vs SciPy: {err.max()} ULP at {near[np.argmax(err)]}"


@pytest.mark.parametrize("dt", [F32, F64], ids=str)
def test_negative_arguments(dt: np.dtype, device: xp.Device) -> None:
    """gammaln and psi at negative non-integers (the reflection): within 4 ULP of SciPy in ULP of the
    reflection's larger term (tests/test_special_ops.py SCALE), near the negative zeros of gammaln
    (-2.457, -2.747, -3.144, -3.956) and far out too."""
    _skip(dt, device)
    rng = np.random.default_rng(11)
    zeros = np.array([-2.4570247382208006, -2.7476826467274127, -3.1435808883499797, -3.9552942848585485])
    x = np.concatenate([-rng.uniform(0, 40, 2000), -10.0 ** rng.uniform(1, 6, 500) - 0.25,
                        (zeros[:, None] + np.linspace(-1e-4, 1e-4, 21)).ravel(),
                        -np.arange(1, 30) - 0.5, -np.arange(1, 30) + 1e-6, -np.arange(1, 30) - 1e-6]).astype(dt)
    x = x[x != np.round(x)]
    for name in ("gammaln", "psi"):
        got = _run(name, x, device)
        want = _scipy(name, x)
        fin = np.isfinite(want) & np.isfinite(got)
        assert np.array_equal(np.isfinite(got), np.isfinite(want.astype(dt))), name
        err = _scaled_ulps(name, x, got, want)[fin]
        assert err.max() <= 4, f"{name}({dt}): {err.max()} ULP at {x[fin][np.argmax(err)]}"


@pytest.mark.parametrize("dt", [F32, F64], ids=str)
def test_bessel_large_arguments(dt: np.dtype, device: xp.Device) -> None:
    """i0 / i1 up to and past their overflow (float64: SciPy's exp(x) overflows above 709.78, so inf there
    although I0 is finite to 713.98; float32: SciPy's value rounded overflows above 91.90), i0e / i1e up to
    the largest values, within 4 ULP, and odd i1 / i1e."""
    _skip(dt, device)
    if dt == F64:
        x = np.concatenate([np.linspace(8, 709.78, 400), [709.782712893384, 709.7827128933841, 713.98, 1e4, 1e300]])
    else:
        x = np.concatenate([np.linspace(8, 91.9, 400), [91.90076446533203, 91.90077209472656,
                                                       91.90625762939453, 91.90626525878906, 1e4, 1e30]])
    x = np.concatenate([x, -x]).astype(dt)
    for name in ("i0", "i1", "i0e", "i1e"):
        got = _run(name, x, device)
        want = _scipy(name, x)
        with np.errstate(all="ignore"):
            w = want.astype(dt)
        np.testing.assert_array_equal(np.isinf(got), np.isinf(w), err_msg=f"{name}({dt}) overflow")
        fin = np.isfinite(w)
        err = _ulps(got[fin], want[fin])
        assert err.max() <= 4, f"{name}({dt}): {err.max()} ULP at {x[fin][np.argmax(err)]}"
        if name in ("i1", "i1e"):
            np.testing.assert_array_equal(got[: len(x) // 2], -got[len(x) // 2:])


@pytest.mark.parametrize("name", NAMES)
def test_fuses_into_one_kernel(name: str, device: xp.Device) -> None:
    """Each is one kernel op that fuses with elementwise neighbours, float32 and float64, without a host
    fallback."""
    for dt in (F32, F64):
        if not device.supports(dt):
            continue
        a = np.linspace(0.1, 6.0, 64, dtype=dt)
        g = xp.asarray(a, device=device)
        with xp.config(fallback="raise"):
            y = getattr(xp.special, name)(g * 2.0 + 0.5) - g
            xp.reset_metrics()
            xp.evaluate(y)
        m = xp.metrics()
        assert m["dispatches" if device.kind == "wgpu" else "host_kernels"] == 1
        assert m["host_fallbacks"] == 0
        f = _scipy(name, a * dt.type(2.0) + dt.type(0.5))
        tol = 8 * float(np.finfo(dt).eps) * (np.abs(f) + a)      # the terms' magnitude
        assert np.all(np.abs(np.asarray(y) - (f - a)) <= tol), name
