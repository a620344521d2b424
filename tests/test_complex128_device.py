"""complex128 transcendentals on the wgpu device (render/wgsl_c128.py on the float64 library) against NumPy.

Every op of ``C128_DEVICE_OPS`` (and the complex128 ops that were on the device already: sqrt, abs,
reciprocal, sign) runs as WGSL with ``offload="always"`` and no host fallback, on

- a grid of special components: +-0, +-inf, NaN, the smallest subnormal, the smallest normal, 1e-300,
  1e300, the largest double, +-1, +-0.5, +-2, pi/2, and 710 / 750 (exp, sinh, cosh past overflow). Each
  component of the result must have NumPy's NaNs, infinities and signs of zero (C99 Annex G; branch cuts:
  the sign of a zero imaginary part on the real axis picks the side), and finite results the accuracy below;
- random values: magnitudes 10^U(-300, 300) for both parts, of both signs;
- a dense sample of ordinary values, points near the branch points +-1 and +-i and the unit circle, and
  real parts up to +-700.

Tolerance: ``|got - want| / spacing(|want|)``, the error on the complex plane in units in the last place
of the result's magnitude, at most ``ULPS`` (pow: plus ``4 |b log a|``: exp(b log a) turns the rounding of
the phase b log a, about |b log a| ULP of the result, into a relative error, and both results carry it;
against a 200-bit reference ours and NumPy's were within 2 |b log a| + 20 and + 10 ULP). Results whose
magnitude is within a factor 2 of overflow, or below 2^53 times the smallest normal (subnormal components:
fewer digits, NumPy's own results there round differently), are checked for finiteness and special values
only. The largest errors measured on lavapipe are in
docs/accuracy.md; the in-process provider keeps NumPy's results bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.core.ops import OPS
from gpuarray.namespace.elementwise import OP_FUNCTIONS
from gpuarray.render.wgsl_c128 import C128_DEVICE_OPS

from .conftest import component_mismatch

C128 = np.dtype("complex128")
UNARY = sorted(n for n in C128_DEVICE_OPS if OPS[n].nargs == 1) + ["sqrt", "abs", "reciprocal", "sign"]
ULPS = 8.0                     # lavapipe: 6 at most (tanh); margin for devices that fuse multiply-adds
POW_PHASE_ULPS = 4.0
TINY = float(np.finfo(np.float64).tiny)
HUGE = float(np.finfo(np.float64).max)

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.wgpu]   # every test runs on wgpu:0

_COMPONENTS = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, TINY, 1e-300, 1e300, HUGE, 1.0, 0.5, 2.0,
               np.pi / 2, 710.0, 750.0]
_COMPONENTS += [-c for c in _COMPONENTS[5:]]


def specials() -> np.ndarray:
    """Every (re, im) pair of the special components."""
    return np.array([complex(a, b) for a in _COMPONENTS for b in _COMPONENTS], dtype=C128)


def randoms(n: int, seed: int) -> np.ndarray:
    """Magnitudes 10^U(-300, 300) for both parts, both signs."""
    rng = np.random.default_rng(seed)
    m = 10.0 ** rng.uniform(-300, 300, (2, n)) * rng.choice([-1.0, 1.0], (2, n))
    return (m[0] + 1j * m[1]).astype(C128)


def dense(n: int, seed: int) -> np.ndarray:
    """Ordinary values, the branch points +-1, +-i and the unit circle, and large real parts."""
    rng = np.random.default_rng(seed)
    ang = rng.uniform(-np.pi, np.pi, n)
    eps = rng.uniform(-1e-3, 1e-3, (2, n))
    cut = rng.uniform(-4, 4, n)
    return np.concatenate([
        10.0 ** rng.uniform(-8, 8, n) * np.exp(1j * ang),
        rng.uniform(-3, 3, n) + 1j * rng.uniform(-3, 3, n),
        rng.choice([1, -1, 1j, -1j], n) + eps[0] + 1j * eps[1],
        (1 + rng.uniform(-1e-6, 1e-6, n)) * np.exp(1j * ang),
        cut + 0j, cut - 0j, 0j + 1j * cut, -0.0 + 1j * cut,       # on the branch cuts, both sides
        rng.uniform(-700, 700, n) + 1j * rng.uniform(-3, 3, n),
    ]).astype(C128)


def _run(name: str, *args: np.ndarray) -> np.ndarray:
    """``name`` on the wgpu device, which must not fall back to the host."""
    dev = xp.Device("wgpu:0")
    if not dev.supports(C128):
        pytest.skip("no shader-f64 on this adapter")
    with xp.config(offload="always"):
        ga = [xp.asarray(a, device=dev) for a in args]
        xp.evaluate(*ga)
        xp.reset_metrics()
        got = OP_FUNCTIONS[name](*ga)
        xp.evaluate(got)
        assert xp.metrics()["host_fallbacks"] == 0, f"complex128 {name} fell back to the host"
    return np.asarray(got)


def _want(name: str, *args: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(OPS[name].host_impl()(*args))


def ulp_errors(name: str, got: np.ndarray, want: np.ndarray, args: tuple[np.ndarray, ...]) -> tuple[Any, Any, Any]:
    """(errors, allowed, mask) over the results that are checked for accuracy (docstring)."""
    with np.errstate(all="ignore"):
        mag = np.abs(want)
        keep = np.isfinite(want) & (mag < HUGE / 2) & ((mag > TINY * 2.0 ** 53) | (want == 0))
        assert np.isfinite(got[keep]).all(), f"{name}: non-finite results where NumPy's are finite"
        err = np.abs(got[keep] - want[keep]) / np.spacing(mag[keep])
        allowed: Any = ULPS
        if name in ("pow", "float_power"):
            a, b = (np.broadcast_to(x, want.shape)[keep] for x in args)
            allowed = ULPS + POW_PHASE_ULPS * np.nan_to_num(np.abs(b * np.log(a)), nan=np.inf)
    return err, allowed, keep


def check(name: str, *args: np.ndarray, signed_zero: bool = True, exempt: Any = None) -> float:
    """Run ``name`` on the device, compare with NumPy; the largest ULP error."""
    got, want = _run(name, *args), _want(name, *args)
    assert got.dtype == want.dtype and got.shape == want.shape
    bad = component_mismatch(got, want, signed_zero)
    if exempt is not None:
        bad &= ~exempt
    if bad.any():
        idx = list(zip(*np.nonzero(bad)))[:4]
        detail = [(tuple(np.broadcast_to(a, bad.shape)[i] for a in args), got[i], want[i]) for i in idx]
        raise AssertionError(f"{name}: {int(bad.sum())} special values differ from NumPy, e.g. {detail}")
    err, allowed, keep = ulp_errors(name, got, want, args)
    if exempt is not None:
        ok = ~exempt[keep]
        err, allowed = err[ok], (allowed[ok] if np.ndim(allowed) else allowed)
    over = err > allowed
    if over.any():
        i = int(np.argmax(err - allowed))
        raise AssertionError(f"{name}: {int(over.sum())} values beyond the tolerance, worst {err[i]:.3g} ULP")
    return float(err.max()) if err.size else 0.0


# ---------------------------------------------------------------- unary
@pytest.mark.parametrize("name", UNARY)
def test_unary_specials(name: str) -> None:
    check(name, specials())


@pytest.mark.parametrize("name", UNARY)
def test_unary_random(name: str) -> None:
    check(name, randoms(20000, len(name)))
    check(name, dense(3000, len(name) + 1))


# ---------------------------------------------------------------- power
def _pow_exempt(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairs whose result depends on how an intermediate overflow rounds (tests/test_complex.py's EXEMPT):
    infinite or huge operands, or a product of components that overflows."""
    a, b = np.broadcast_arrays(a, b)
    parts = [np.real(a), np.imag(a), np.real(b), np.imag(b)]
    out = ~np.isfinite(a) | ~np.isfinite(b) | (np.abs(a) > 1e6) | (np.abs(b) > 1e6)
    with np.errstate(all="ignore"):
        for p in parts:
            for q in parts:
                out |= np.isfinite(p) & np.isfinite(q) & (np.abs(p * q) > HUGE)
    return out


def _pow_pairs() -> Iterator[tuple[np.ndarray, np.ndarray]]:
    s = np.array([complex(a, b) for a in (0.0, -0.0, 1.0, -2.5, 0.5, 1e300, np.inf, -np.inf, np.nan)
                  for b in (0.0, -0.0, 1.0, -2.5, 0.5, 1e300, np.inf, -np.inf, np.nan)], dtype=C128)
    yield s[:, None], s[None, :]
    a, b = dense(3000, 3), dense(3000, 4)
    yield a, (b / np.maximum(1.0, np.abs(b) / 8)).astype(C128)          # exponents of moderate size


@pytest.mark.parametrize("name", ["pow", "float_power"])
def test_pow_complex_exponents(name: str) -> None:
    for a, b in _pow_pairs():
        check(name, a, b, signed_zero=False, exempt=_pow_exempt(a, b))


def test_pow_real_exponents() -> None:
    """complex ** real: an array of float64 exponents (promoted to complex128) and Python scalars, integer
    exponents below 100 by repeated squaring as NumPy."""
    a = dense(400, 5)
    b = np.random.default_rng(6).uniform(-6, 6, a.shape)
    check("pow", a, b, signed_zero=False, exempt=_pow_exempt(a, b.astype(C128)))
    ints = np.array([0, 1, 2, 3, 4, 7, -1, -2, -5, 99, 100, 0.5, -1.5, 2.25])
    gi = np.array([1 + 1j, 2 - 1j, -3 + 0.5j, 1j, -1j, 0.5 + 0.5j, -1e-3 - 2j], dtype=C128)
    check("pow", gi[:, None], ints[None, :], signed_zero=False)
    dev = xp.Device("wgpu:0")
    if dev.supports(C128):
        with xp.config(offload="always"):
            g = xp.asarray(gi, device=dev)
            for e in (1.5, -0.25, 3.0):
                got, want = np.asarray(g ** e), gi ** e
                err = np.abs(got - want) / np.spacing(np.abs(want))
                assert (err <= ULPS + POW_PHASE_ULPS * np.abs(e * np.log(gi))).all(), (e, err.max())


# ---------------------------------------------------------------- the device report and the host
def test_no_complex128_op_on_host() -> None:
    dev = xp.Device("wgpu:0")
    if not dev.supports(C128):
        pytest.skip("no shader-f64 on this adapter")
    info = dev.provider.device_info()
    assert not set(info["complex128_on_host"]) & C128_DEVICE_OPS
    x = dense(100, 7)
    with xp.config(offload="always"):
        g = xp.asarray(x, device=dev)
        xp.evaluate(g)
        xp.reset_metrics()
        y = xp.exp(g) * xp.log1p(g) / (g + 2j) + xp.sqrt(g) ** 1.5 - xp.asinh(g) + xp.tan(g) ** g
        xp.evaluate(y)
        m = xp.metrics()
    assert m["host_fallbacks"] == 0 and m["dispatches"] == 1


@pytest.mark.parametrize("name", UNARY)
def test_inprocess_provider_unchanged(name: str) -> None:
    """The cpu device computes NumPy's (or the op table's host) result, bit for bit."""
    x = np.concatenate([specials(), randoms(200, 8)])
    got = np.asarray(OP_FUNCTIONS[name](xp.asarray(x, device="cpu")))
    want = _want(name, x)
    np.testing.assert_array_equal(got.view(np.float64), want.view(np.float64))
    assert (np.signbit(got.view(np.float64)) == np.signbit(want.view(np.float64))).all()


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_sign_where_the_modulus_overflows(dtype: Any) -> None:
    """Finite parts whose modulus overflows: NumPy's sign gives +-i (complex64 gave NaN before)."""
    big = float(np.finfo(np.dtype(dtype)).max) / 1.2
    h = np.array([big + big * 1j, big - big * 1j, -big - big * 1j, -big + 1j, 1 + big * 1j,
                  complex(np.inf, 1), complex(1, -np.inf), complex(np.inf, np.inf), 0j], dtype=dtype)
    with np.errstate(all="ignore"):
        want = np.sign(h)
    for dev in ("cpu", "wgpu:0"):
        with xp.config(offload="always"):
            got = np.asarray(np.sign(xp.asarray(h, device=dev)))
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
