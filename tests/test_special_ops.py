"""The op-table entries beyond the Array API: NumPy-only ufuncs (``fmax``, ``heaviside``, ``deg2rad``,
``float_power`` ...) and SciPy special functions (``gpuarray.special.expit`` ...).

tests/test_elementwise.py tests every entry against its oracle (for the special functions: the host
implementation, computed in float64). Here: the host implementations against SciPy itself, the
special values SciPy defines, that each op is one kernel op that fuses, and that the NumPy ufuncs
reach the op table without a host fallback.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.core.ops import OPS, SCIPY_DEVICE_N

from .conftest import assert_same, incomplete_f64_scale, scipy_f64_scale

special = pytest.importorskip("scipy.special")

SPECIAL_OPS = sorted(n for n, d in OPS.items() if d.module == "special")
F32, F64 = np.dtype("float32"), np.dtype("float64")


def _values(dt: np.dtype) -> np.ndarray:
    fi = np.finfo(dt)
    rng = np.random.default_rng(7)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, 0.3, 0.65, 0.25, 0.75, 1e-30, 1 - 1e-7, 2.0, 3.0, -3.0, 88.0, -88.0,
            -104.0, 700.0, -745.0, np.nan, np.inf, -np.inf, float(fi.tiny), float(fi.max), -float(fi.max)]
    with np.errstate(all="ignore"):
        return np.concatenate([np.array(vals), rng.uniform(-30, 30, 3000), rng.uniform(0, 1, 3000),
                               10.0 ** rng.uniform(-30, 30, 1000)]).astype(dt)


def _incomplete(name: str, dt: np.dtype) -> tuple[np.ndarray, ...]:
    """The operands of the multi-argument functions with positive parameters (betainc, betaincc: a, b, x;
    stdtr: df, t), sampled where they are defined, with the special values."""
    rng = np.random.default_rng(5)
    sp = [0.0, -0.0, 1.0, 0.5, 2.0, -1.0, np.nan, np.inf, 1e-30, 1e30]
    n = 2000
    par = np.concatenate([sp, rng.uniform(0, 5, n), 10 ** rng.uniform(-4, 5, n), rng.integers(1, 60, n // 2)])
    if name in ("gammainc", "gammaincc", "chdtr", "chdtrc"):
        x = np.concatenate([sp, rng.uniform(0, 10, n), 10 ** rng.uniform(-6, 6, n), rng.uniform(0, 400, n // 2)])
        a = rng.permutation(par)
        near = rng.uniform(0, 1, a.size) < 0.4      # x about a (the asymptotic series' region)
        with np.errstate(all="ignore"):
            x = np.where(near & np.isfinite(a), np.abs(a + rng.normal(0, 3, a.size) * np.sqrt(np.abs(a))), x)
        return a.astype(dt), x.astype(dt)
    if name == "stdtr":
        t = np.concatenate([[0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1.0, -50.0, 2.0],
                            rng.uniform(-50, 50, n), rng.uniform(-3, 3, n),
                            rng.choice([-1.0, 1.0], n // 2) * 10 ** rng.uniform(-8, 2, n // 2)])
        return par.astype(dt), rng.permutation(t).astype(dt)
    x = np.concatenate([[0.0, -0.0, 1.0, 0.5, np.nan, 1.5, -0.1, np.inf, 1e-30, 1 - 1e-7], rng.uniform(0, 1, n),
                        10 ** rng.uniform(-30, 0, n), 1 - 10 ** rng.uniform(-7, -0.3, n // 2)])
    return par.astype(dt), rng.permutation(par).astype(dt), rng.permutation(x).astype(dt)


# operands of the multi-argument functions that _values does not suit (positive parameters)
ARGS: dict[str, Callable[[np.dtype], tuple[np.ndarray, ...]]] = {
    n: (lambda dt, n=n: _incomplete(n, dt)) for n in SCIPY_DEVICE_N}


def _incomplete_scale(name: str, *args: np.ndarray) -> np.ndarray | None:
    """float64 betainc, betaincc, stdtr: 24 + 24 (a + b) ULP of the result (a + b = df / 2 + 1/2 for stdtr; ndtr's
    t^2 / 2 for df = inf). Against exact values (tests/test_special_incomplete.py) the device's are within
    24 + 2 (a + b) ULP, as Boost's double algorithm that SciPy runs; SciPy's own are up to about 20 (a + b) ULP
    off (its betainc at (433.8, 5, 0.98) by 2874 ULP, its betaincc at (17, 342.8, 0.052) by 6233;
    render/wgsl_incomplete.py), and more below 1e-280, where its binomial sum starts from a subnormal x^k
    (betainc(32, 30, 3.6e-10) = 9e-286: 1.4e4 ULP): there within 4 ULP of 1e-280.
    gammainc, gammaincc, chdtr, chdtrc (a = v / 2, x = x / 2 for the last two): 512 + 4 L ULP, L = |a log x| + x
    + |lgamma(a)|, the size of the exponent of x^a exp(-x) / Gamma(a): both SciPy's (xsf's) and the device's are
    up to about L ULP off the exact values (2 L + 32 for the device's), SciPy's also up to 355 ULP for a near 1/2
    and x in (0.5, 1.1), its series of 1 - P (gammaincc(0.501, 0.796); the device's 3)."""
    if args[0].dtype != np.float64:
        return None
    return incomplete_f64_scale(name, _scipy(name, *args), *args)


def _scipy(name: str, *args: np.ndarray) -> np.ndarray:
    """SciPy's result for float64 operands (SciPy's float32 loops are less accurate than ours:
    its float32 expit is 0 where the result is a subnormal)."""
    with np.errstate(all="ignore"):
        if name == "stdtr":     # SciPy's stdtr(1, t) is up to 1.4e7 ULP off for small t: the Cauchy cdf there
            return OPS[name].host_impl()(*(np.asarray(a, np.float64) for a in args))
        return np.asarray(getattr(special, name)(*(np.asarray(a, np.float64) for a in args)))


# name -> the magnitude that an error is measured in ULP of, where that is not the result's own (a
# result that is a small difference of larger terms: gammaln near its zeros). render/wgsl_gamma.py says why:
# - gammaln, x < 0: log(pi / |sin(pi x)|) - gammaln(1 - x), small near the zeros at -2.457, -2.747 ...:
#   the larger term; float64, 0 < x < 2: 1, since SciPy's own (Cephes lgam) result there is only
#   absolutely accurate (log(z) + p, z a rounded 1 / x: 5e7 ULP off at 1 - 2^-30)
# - psi, x < 0 farther than 0.3 from the zero x0 = -0.50408 (within it, both SciPy and ours are
#   relatively accurate): psi(1 - x) - pi / tan(pi x), small near the zeros in each (-n - 1, -n): the
#   larger term
SCALE: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "gammaln": lambda x: (lambda v: np.where(
        v < 0, np.maximum(np.abs(np.log(np.pi / np.abs(np.sin(np.pi * (v - np.round(v)))))),
                          np.abs(special.gammaln(1 - v))),
        np.where((v > 0) & (v < 2) & (x.dtype == np.float64), 1.0, 0.0)))(x.astype(np.float64)),
    "psi": lambda x: (lambda v: np.where(
        (v < 0) & (np.abs(v + 0.5040830082644554) >= 0.3),
        np.maximum(np.abs(np.pi / np.tan(np.pi * (v - np.round(v)))), np.abs(special.psi(1 - v))),
        0.0))(x.astype(np.float64)),
}


def _ulps(got: np.ndarray, want: np.ndarray, scale: np.ndarray | None = None) -> float:
    with np.errstate(all="ignore"):
        w = want.astype(got.dtype)
    fin = np.isfinite(w) & np.isfinite(got) & (np.abs(w) >= np.finfo(got.dtype).tiny)
    mag = np.abs(w[fin]) if scale is None else np.maximum(np.abs(w[fin]), scale[fin].astype(got.dtype))
    return float(np.max(np.abs(got[fin].astype(np.float64) - want[fin]) / np.spacing(mag), initial=0.0))


@pytest.mark.parametrize("dt", [F32, F64], ids=str)
@pytest.mark.parametrize("name", SPECIAL_OPS)
def test_special_matches_scipy(name: str, dt: np.dtype, device: xp.Device) -> None:
    """Within 4 ULP of SciPy's float64 result rounded to ``dt``; NaN, infinities and zeros exactly.
    ``sinc`` is NumPy's formula in the operands' dtype (``pi x`` rounded first), so its float32
    values are compared with NumPy's float32 sinc."""
    if not device.supports(dt):
        pytest.skip(f"{dt} is not supported on {device}")
    x = _values(dt)
    args = ARGS[name](dt) if name in ARGS else \
        (x, np.random.default_rng(3).permutation(x)) if OPS[name].nargs == 2 else (x,)
    got = np.asarray(getattr(xp.special, name)(*(xp.asarray(a, device=device) for a in args)))
    if name == "sinc":
        with np.errstate(all="ignore"):
            want = np.sinc(x)
    else:
        want = _scipy(name, *args)
    assert got.dtype == dt
    with np.errstate(all="ignore"):
        w = want.astype(dt)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(w), err_msg=f"{name}: NaN positions")
    inf = np.isinf(w) | np.isinf(got)
    np.testing.assert_array_equal(got[inf], w[inf], err_msg=f"{name}: infinities")
    zero = (w == 0) & (got == 0)
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(w[zero]), err_msg=f"{name}: sign of zero")
    with np.errstate(all="ignore"):
        scale = SCALE[name](x) if name in SCALE else _incomplete_scale(name, *args) if name in ARGS else \
            scipy_f64_scale(name, x)
    err = _ulps(got, want, scale)
    assert err <= 4, f"{name}({dt}) is {err} ULP from SciPy"


def test_special_integers_compute_in_the_default_float(device: xp.Device) -> None:
    x = xp.asarray(np.array([-2, 0, 3], np.int16), device=device)
    for name in SPECIAL_OPS:
        args = (x,) * OPS[name].nargs
        assert getattr(xp.special, name)(*args).dtype == device.default_float, name
    with pytest.raises(TypeError, match="expit"):
        xp.special.expit(xp.asarray([1 + 1j], device=device))


@pytest.mark.parametrize("dt", [F32, F64], ids=str)
def test_cbrt_matches_scipy(dt: np.dtype, device: xp.Device) -> None:
    """``scipy.special.cbrt(g)`` is ``gpuarray.special.cbrt``: NumPy's cbrt entry (``OPS["cbrt"]``) on the
    device, no host fallback. SciPy's float32 cbrt is correctly rounded (it computes in float64): the WGSL is
    within 1 ULP of it (0.94 of the exact cube root); the in-process provider's NumPy cbrt (up to 1.9 ULP off
    in float32) within 2. NaN, +-inf, +-0 and subnormal inputs as SciPy; exact cubes exactly on wgpu."""
    if not device.supports(dt):
        pytest.skip(f"{dt} is not supported on {device}")
    fi = np.finfo(dt)
    rng = np.random.default_rng(9)
    tiny, sub = float(fi.tiny), float(fi.smallest_subnormal)
    vals = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5, tiny, -tiny, sub, -sub, tiny / 3,
            -tiny / 7, tiny - sub, float(fi.max), -float(fi.max), float(fi.eps)]
    sign = rng.choice([-1.0, 1.0], 3000)
    with np.errstate(all="ignore"):
        x = np.concatenate([vals, rng.uniform(-1000, 1000, 3000),
                            sign * 10.0 ** rng.uniform(np.log10(sub), np.log10(float(fi.max)), 3000),
                            sign[:500] * rng.uniform(0, tiny, 500),                       # subnormals
                            np.arange(-30, 31) ** 3.0]).astype(dt)
    g = xp.asarray(x, device=device)
    xp.reset_metrics()
    with xp.config(fallback="raise", offload="always"):
        got = special.cbrt(g)
        assert got.device == device
        got = np.asarray(got)
    assert xp.metrics()["host_fallbacks"] == 0
    want = special.cbrt(x)
    assert got.dtype == want.dtype == dt
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg="NaN positions")
    zero_inf = (want == 0) | np.isinf(want)
    u = f"u{dt.itemsize}"
    np.testing.assert_array_equal(got[zero_inf].view(u), want[zero_inf].view(u), err_msg="+-0, +-inf")
    err = _ulps(got, want)
    # (the in-process provider's NumPy float64 cbrt is up to 2.3 ULP off on some CPUs: NumPy 2.4.6, AMD EPYC, AVX2)
    assert err <= (1 if device.kind == "wgpu" else 2 if dt == F32 else 3), f"cbrt({dt}) is {err} ULP from SciPy"
    if device.kind == "wgpu":
        np.testing.assert_array_equal(got[-61:], np.arange(-30, 31).astype(dt))


def test_cbrt_dtypes_are_scipys(device: xp.Device) -> None:
    """SciPy's cbrt loops are float32 and float64: integers and bools compute in the device's default float
    (SciPy's float64), one kernel with the conversion; complex operands raise as SciPy's do."""
    for dt in ("bool", "int8", "uint16", "int32", "int64", "uint64"):
        a = np.array([0, 1, 1, 0], bool) if dt == "bool" else np.array([0, 1, 27, -8 if dt[0] == "i" else 125], dt)
        g = xp.asarray(a, device=device)
        xp.reset_metrics()
        with xp.config(fallback="raise", offload="always"):
            got = special.cbrt(g)
            xp.evaluate(got)
        m = xp.metrics()
        assert m["host_fallbacks"] == 0
        assert m["dispatches" if device.kind == "wgpu" else "host_kernels"] == 1
        assert got.dtype == device.default_float, dt
        if device.supports(xp.float64):     # SciPy's loop order varies by version ('f->f' first: bool
            assert_same(got, special.cbrt(a).astype(np.float64), rtol=5e-16)   # gives float32): compare values
    # (within 2 ULP: NumPy's own float64 cbrt, the cpu device's, gives 3.0000000000000004 for 27 on some CPUs)
    assert xp.special.cbrt(np.array([8, -27], np.int16)).tolist() == pytest.approx([2.0, -3.0], rel=5e-16, abs=0)
    with pytest.raises(TypeError, match="cbrt"):
        special.cbrt(xp.asarray([1 + 1j], device=device))


@pytest.mark.parametrize("name", ["fmax", "fmin", "heaviside", "deg2rad", "rad2deg", "float_power", "exp2"])
def test_numpy_ufunc_reaches_the_op_table(name: str, device: xp.Device) -> None:
    """``numpy.<ufunc>(g)`` records the op-table entry: no host fallback, one fused kernel."""
    ufunc = getattr(np, name)
    a = np.array([0.5, -2.0, np.nan, 3.0, -0.0, 0.0, np.inf], np.float32)
    b = np.array([1.0, np.nan, np.nan, -3.0, 0.0, -0.0, 2.0], np.float32)
    args = (a, b) if ufunc.nin == 2 else (a,)
    xp.reset_metrics()
    with xp.config(fallback="raise"):
        got = ufunc(*(xp.asarray(v, device=device) for v in args))
    with np.errstate(all="ignore"):
        want = ufunc(*args)
    if name in ("fmax", "fmin"):      # a tie of zeros: the first operand (NumPy's loops give either)
        want = np.where((a == 0) & (b == 0), a, want)
    assert_same(got, want, rtol=4e-7 if name in ("float_power", "exp2") else 0.0)
    assert xp.metrics()["host_fallbacks"] == 0     # float_power too: float64 pow runs on the device


def test_numpy_aliases(device: xp.Device) -> None:
    a = np.array([0.5, -180.0, np.nan, -0.0, 1e30], np.float32)
    g = xp.asarray(a, device=device)
    assert_same(np.radians(g), np.radians(a))
    assert_same(np.degrees(g), np.degrees(a))
    assert_same(xp.deg2rad(g), np.deg2rad(a))


def test_new_ops_fuse_into_one_kernel(device: xp.Device) -> None:
    a = np.linspace(-3, 3, 50, dtype=np.float32)
    g = xp.asarray(a, device=device)
    y = xp.special.logit(xp.special.expit(xp.fmax(g, 0.0) * 0.5)) + xp.heaviside(g, 0.5) + xp.deg2rad(g)
    xp.reset_metrics()
    xp.evaluate(y)
    m = xp.metrics()
    assert m["dispatches" if device.kind == "wgpu" else "host_kernels"] == 1
    want = special.logit(special.expit(np.fmax(a, 0.0) * 0.5)) + np.heaviside(a, 0.5) + np.deg2rad(a)
    assert_same(y, want.astype(np.float32), rtol=2e-6, atol=2e-6)


def test_float_power_widens(device: xp.Device) -> None:
    """float_power computes in the widest float the device has (NumPy: float64 / complex128)."""
    g = xp.asarray(np.array([2, 3], np.int8), device=device)
    wide = xp.float64 if device.supports(xp.float64) else xp.float32
    assert xp.float_power(g, 2).dtype == wide
    assert xp.float_power(g.astype(xp.float32), 0.5).dtype == wide
    assert np.float_power(g.astype(xp.float32), g).dtype == wide
    assert_same(xp.float_power(g, -1), np.float_power(np.array([2, 3], np.int8), -1).astype(wide))
