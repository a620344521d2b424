"""complex64 and complex128 on both providers, against NumPy.

The elementwise part is generated from the op table like ``test_elementwise.py``:
every op whose category holds complex dtypes is run on

- a grid of special values (every pair of zeros of both signs, +-inf, NaN,
  tiny, huge and ordinary components): each component of the result must have
  NumPy's NaNs, infinities and signs of zero (C99 Annex G, as glibc gives them),
  except where ``EXEMPT`` says the result depends on how intermediate overflow
  is rounded (NumPy's SIMD loops use fused multiply-adds);
- a dense sample for accuracy. The error is measured on the complex plane, in
  units in the last place of ``|result|`` (of the component dtype), against a
  reference computed in complex128 (for complex64) or NumPy's complex128 result.

The other tests cover promotion with real dtypes and Python complex scalars,
creation, ``astype``, reductions, ``vecdot``, ``linalg``, the inspection API and
the ``TypeError`` of every function the standard keeps real-only.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.core.dtypes import CATEGORIES
from gpuarray.core.ops import OPS, OpDef
from gpuarray.namespace.elementwise import OP_FUNCTIONS

from .conftest import assert_same, component_mismatch, device_numerics, flush_subnormals

C64, C128 = np.dtype("complex64"), np.dtype("complex128")
COMPLEX = [C64, C128]
UNARY = [n for n, d in OPS.items() if d.nargs == 1 and C64 in CATEGORIES[d.category]]
BINARY = [n for n, d in OPS.items() if d.nargs == 2 and C64 in CATEGORIES[d.category]]
REAL_ONLY = [n for n, d in OPS.items() if C64 not in CATEGORIES[d.category]]

# ---------------------------------------------------------------- tolerances (ULP of |result|)
# complex64 transcendentals on wgpu are WGSL built on the float32 helpers (render/wgsl_clib.py),
# measured within 4 ULP of the complex128 reference; NumPy's own complex64 results (the cpu
# device) reach 5 (tanh, tan, atan), so 8 bounds both. Arithmetic (multiply, divide, abs ...)
# rounds a few operations, in an order that differs from NumPy's SIMD loops (fused
# multiply-adds): 4. Exact ops (add, conj, real, ...) must match NumPy bit for bit.
TRANSCENDENTAL = {"exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos",
                  "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"}
EXACT = {"add", "subtract", "negative", "positive", "conj", "real", "imag", "round"}
ULPS = {name: (8 if name in TRANSCENDENTAL else 0 if name in EXACT else 4) for name in UNARY + BINARY}
# pow(a, b) = exp(b log a): the phase b log a carries an absolute error of ~|b log a| ULP, which exp turns
# into a relative error of the result, and both sides carry it independently (docs/accuracy.md; the
# tolerance of tests/test_complex128_device.py). On the H200, (74.8-0.88j) ** (8.0-0.26j) was off by
# 1.4 |b log a| ULP against a long-double reference, NumPy's by 1.7: they differ by 3.1 |b log a|.
POW_PHASE_ULPS = 4.0
POWERS = ("pow", "float_power")

# NumPy's own overflow / invalid warnings on special values (the oracle side) are expected here.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

WORST: dict[tuple[str, str, str], float] = {}     # (op, dtype, device) -> worst ULP error seen


# ---------------------------------------------------------------- inputs

_FMA = {"on": False}   # set per test: does the device fuse a * b + c (one rounding instead of two)?
_FTZ = {"on": False}   # ... and flush float32 subnormals (docs/accuracy.md)?


@pytest.fixture(autouse=True)
def _device_fuses(request: pytest.FixtureRequest) -> Any:
    dev = request.getfixturevalue("device") if "device" in request.fixturenames else None
    found = device_numerics(dev) if dev is not None else {}
    _FMA["on"] = bool(found.get("fuses_multiply_add"))
    _FTZ["on"] = bool(found.get("flushes_f32_subnormals"))
    yield
    _FMA["on"] = _FTZ["on"] = False


def _components(dt: np.dtype) -> list[float]:
    f = np.finfo(dt)
    huge = 1e30 if dt == C64 else 1e300
    return [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.pi / 2, 100.0, float(f.tiny), huge, -huge,
            np.inf, -np.inf, np.nan]


def specials(dt: np.dtype, short: bool = False) -> np.ndarray:
    """Every (re, im) pair of the special components (a shorter list for binary grids)."""
    vals = _components(dt)
    if short:
        vals = [0.0, -0.0, 1.0, -2.5, 0.5, 1e30 if dt == C64 else 1e300, np.inf, -np.inf, np.nan]
    return np.array([complex(a, b) for a in vals for b in vals], dtype=dt)


def sample(dt: np.dtype, n: int, seed: int) -> np.ndarray:
    """Dense sample: all magnitudes and phases, the unit box, near 1, -1, +-i and the unit circle,
    the real and imaginary axes, and large real parts (exp, sinh, cosh near overflow)."""
    rng = np.random.default_rng(seed)
    ang = rng.uniform(-np.pi, np.pi, n)
    parts = [
        10.0 ** rng.uniform(-6, 6, n) * np.exp(1j * ang),
        rng.uniform(-3, 3, n) + 1j * rng.uniform(-3, 3, n),
        rng.choice([1, -1, 1j, -1j], n) + rng.uniform(-1e-3, 1e-3, n) + 1j * rng.uniform(-1e-3, 1e-3, n),
        (1 + rng.uniform(-1e-4, 1e-4, n)) * np.exp(1j * ang),
        rng.uniform(-20, 20, n // 4) + 0j,
        1j * rng.uniform(-20, 20, n // 4),
        rng.uniform(60, 95, n // 4) * rng.choice([1, -1], n // 4) + 1j * rng.uniform(-3, 3, n // 4),
    ]
    return np.concatenate(parts).astype(dt)


# ---------------------------------------------------------------- references and checks
def _host(name: str) -> Callable[..., Any]:
    return OPS[name].host_impl()


def reference(name: str, *args: np.ndarray) -> np.ndarray:
    """The exact-enough result: the host function on complex128 (complex64 inputs) or NumPy's own
    complex128 result; NumPy's complex log1p loses every digit near 0, so the host's formula is used."""
    with np.errstate(all="ignore"):
        return np.asarray(_host(name)(*(np.asarray(a).astype(np.result_type(a, C128)) for a in args)))


def ulp_error(got: np.ndarray, want: np.ndarray, comp: np.dtype) -> np.ndarray:
    """|got - want| in units of the last place of |want| in the component dtype ``comp``."""
    with np.errstate(all="ignore"):
        mag = np.abs(want).astype(comp)
        return np.abs(got.astype(np.complex128) - want.astype(np.complex128)) / np.spacing(mag).astype(np.float64)


def _overflowing_products(*args: np.ndarray) -> np.ndarray:
    """Inputs where a product of finite components overflows (its rounding order decides inf vs NaN)."""
    parts = [p for a in args for p in (np.real(a), np.imag(a))]
    mx = np.finfo(np.real(args[0]).dtype).max
    out = np.zeros(np.broadcast_shapes(*(np.shape(a) for a in args)), dtype=bool)
    with np.errstate(all="ignore"):
        for p in parts:
            for q in parts:
                out |= np.isfinite(p) & np.isfinite(q) & (np.abs(p * q.astype(np.float64)) > mx)
    return out


def _pow_exempt(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # a huge or infinite exponent: the phase b log a is meaningless in the component precision,
    # so which infinity (or which signed zero) comes out depends on rounding
    big = 1e6
    return ~np.isfinite(a) | ~np.isfinite(b) | (np.abs(b) > big) | (np.abs(a) > big) | _overflowing_products(a, b)


EXEMPT: dict[str, Callable[..., np.ndarray]] = {
    "multiply": _overflowing_products, "square": _overflowing_products, "pow": _pow_exempt,
    "float_power": _pow_exempt,       # pow computed in complex128 (on the device too: render/wgsl_c128.py)
}


def check_specials(name: str, got: Any, args: tuple[np.ndarray, ...], what: str) -> None:
    g = np.asarray(got)
    with np.errstate(all="ignore"):
        w = np.asarray(_host(name)(*args))
    if _FTZ["on"]:       # subnormal results may be flushed to zero there
        g, w = np.asarray(flush_subnormals(g)), np.asarray(flush_subnormals(w))
    assert g.dtype == w.dtype, f"{what}: dtype {g.dtype}, NumPy gives {w.dtype}"
    assert g.shape == w.shape
    # a fused multiply-add can leave -0.0 where NumPy's two roundings cancel to +0.0 (complex division)
    bad = component_mismatch(g, w, signed_zero=name not in POWERS and not (_FMA["on"] and name == "divide"))
    if name in EXEMPT:
        bad &= ~np.broadcast_to(EXEMPT[name](*args), bad.shape)
    if bad.any():
        idx = list(zip(*np.nonzero(bad)))[:4]
        detail = [(tuple(np.broadcast_to(a, bad.shape)[i] for a in args), g[i], w[i]) for i in idx]
        raise AssertionError(f"{what}: {int(bad.sum())} special values differ from NumPy, e.g. {detail}")
    fin = np.isfinite(w) & np.isfinite(g)
    if w.dtype.kind in "fc" and fin.any():
        comp = np.real(w).dtype
        err = ulp_error(g[fin], w[fin], comp)
        if name in EXEMPT:
            err = err[~np.broadcast_to(EXEMPT[name](*args), bad.shape)[fin]]
        allowed: Any = max(ULPS[name], 1)
        if name in POWERS:
            with np.errstate(all="ignore"):
                a, b = (np.broadcast_to(x, w.shape)[fin].astype(C128) for x in args)
                allowed = np.nan_to_num(ULPS[name] + POW_PHASE_ULPS * np.abs(b * np.log(a)), nan=np.inf)
                allowed = allowed[~np.broadcast_to(EXEMPT[name](*args), bad.shape)[fin]]
        if err.size and not (err <= allowed).all():
            detail = ""
            if name not in EXEMPT:          # err is indexed like g[fin]
                i = int(np.argmax(err - allowed))
                inputs = tuple(np.broadcast_to(a, w.shape)[fin][i] for a in args)
                detail = f", e.g. at {inputs}: got {g[fin][i]!r}, want {w[fin][i]!r}"
            raise AssertionError(f"{what}: finite specials off by {err.max():.3g} ULP{detail}")


def check_accuracy(name: str, got: Any, args: tuple[np.ndarray, ...], dt: np.dtype, device: xp.Device) -> float:
    g = np.asarray(got)
    w = reference(name, *args)
    if w.dtype.kind == "b":
        np.testing.assert_array_equal(g, np.asarray(_host(name)(*args)))
        return 0.0
    comp = np.real(np.zeros(1, dt)).dtype
    fmax, tiny = float(np.finfo(comp).max), float(np.finfo(comp).tiny)
    with np.errstate(all="ignore"):
        keep = np.isfinite(w) & (np.abs(w) < fmax / 2) & ((np.abs(w) > tiny * 2 ** 24) | (w == 0))
    assert np.isfinite(g[keep]).all(), f"{name}({dt}): non-finite results where the reference is finite"
    if ULPS[name] == 0:               # exact ops: NumPy's own result, bit for bit (NaN aside)
        assert_same(g, np.asarray(_host(name)(*args)))
        return 0.0
    err = ulp_error(g[keep], w[keep], comp)
    allowed: Any = ULPS[name] + (1 if _FMA["on"] else 0)    # fused multiply-adds: one rounding more or less
    if name in POWERS:
        with np.errstate(all="ignore"):
            a, b = (np.broadcast_to(x, w.shape)[keep].astype(C128) for x in args)
            phase = np.abs(b * np.log(a))
        allowed = np.nan_to_num(ULPS[name] + POW_PHASE_ULPS * phase, nan=np.inf)
    worst = float(err.max()) if err.size else 0.0
    WORST[(name, str(dt), device.name)] = max(worst, WORST.get((name, str(dt), device.name), 0.0))
    over = err > allowed
    if over.any():
        i = int(np.argmax(err - allowed))
        inputs = tuple(np.broadcast_to(x, w.shape)[keep][i] for x in args)
        raise AssertionError(f"{name}({dt}) on {device}: {int(over.sum())} values beyond the tolerance; worst "
                             f"{err[i]:.3g} ULP at {inputs}: got {g[keep][i]!r}, want {w[keep][i]!r}")
    return worst


def _skip(dt: np.dtype, device: xp.Device) -> None:
    if not device.supports(dt):
        pytest.skip(f"{dt} is not supported on {device}")


# ---------------------------------------------------------------- unary ops
@pytest.mark.parametrize("dt", COMPLEX, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary_specials(name: str, dt: np.dtype, device: xp.Device) -> None:
    _skip(dt, device)
    x = specials(dt)
    fn = OP_FUNCTIONS[name]
    check_specials(name, fn(xp.asarray(x, device=device)), (x,), f"{name}({dt} specials)")
    opdef = OPS[name]
    if opdef.unary_dunder:
        got = getattr(operator, opdef.unary_dunder)(xp.asarray(x, device=device))
        check_specials(name, got, (x,), f"__{opdef.unary_dunder}__({dt})")
    for v in (x[:0], x[:0].reshape(2, 0), x[2], x[-3]):        # empty and 0-d
        v = np.asarray(v)
        check_specials(name, fn(xp.asarray(v, device=device)), (v,), f"{name}({dt}) of shape {v.shape}")


@pytest.mark.parametrize("dt", COMPLEX, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary_accuracy(name: str, dt: np.dtype, device: xp.Device) -> None:
    _skip(dt, device)
    x = sample(dt, 2000, len(name))
    check_accuracy(name, OP_FUNCTIONS[name](xp.asarray(x, device=device)), (x,), dt, device)


# ---------------------------------------------------------------- binary ops
@pytest.mark.parametrize("dt", COMPLEX, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_specials(name: str, dt: np.dtype, device: xp.Device) -> None:
    _skip(dt, device)
    s = specials(dt, short=True)
    a, b = s[:, None], s[None, :]
    fn = OP_FUNCTIONS[name]
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    check_specials(name, fn(ga, gb), (a, b), f"{name}({dt} pairs)")
    for d in OPS[name].dunders:
        op = getattr(operator, d if d not in ("and", "or", "xor") else d + "_")
        check_specials(name, op(ga, gb), (a, b), f"__{d}__({dt})")
        if d not in ("eq", "ne"):
            check_specials(name, getattr(gb, f"__r{d}__")(ga), (a, b), f"__r{d}__({dt})")
    for x, y in ((s[3], s[:5]), (s[:0], s[:1]), (s[7], s[8])):        # 0-d and empty operands
        x, y = np.asarray(x), np.asarray(y)
        check_specials(name, fn(xp.asarray(x, device=device), xp.asarray(y, device=device)), (x, y),
                       f"{name}({dt}) of shapes {x.shape}, {y.shape}")


@pytest.mark.parametrize("dt", COMPLEX, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_accuracy(name: str, dt: np.dtype, device: xp.Device) -> None:
    _skip(dt, device)
    a, b = sample(dt, 1000, 1), sample(dt, 1000, 2)
    if name in POWERS:                    # exponents of moderate size: |b log a| stays meaningful
        b = (b / np.maximum(1.0, np.abs(b) / 8)).astype(dt)
    check_accuracy(name, OP_FUNCTIONS[name](xp.asarray(a, device=device), xp.asarray(b, device=device)), (a, b),
                   dt, device)


@pytest.mark.parametrize("dt", COMPLEX, ids=str)
def test_pow_integer_exponents(dt: np.dtype, device: xp.Device) -> None:
    """NumPy's complex power uses repeated squaring for integer exponents below 100 (exact for
    Gaussian integers): so must we."""
    _skip(dt, device)
    a = np.array([1 + 1j, 2 - 1j, -3 + 0.5j, 1j, -1j, 0.5 + 0.5j], dtype=dt)[:, None]
    b = np.array([0, 1, 2, 3, 4, 7, -1, -2, -5, 99, 100], dtype=dt)[None, :]
    got = xp.pow(xp.asarray(a, device=device), xp.asarray(b, device=device))
    # rounding differs from NumPy's (fused multiply-adds) and grows with the exponent
    want = np.power(a, b)
    if _FMA["on"]:   # where the squarings overflow, inf - inf (NumPy: NaN) may be a fused inf (seen on the H200)
        g = np.asarray(got)
        over = ~np.isfinite(want)
        assert not np.isfinite(g[over]).any(), "finite results where NumPy's power overflows"
        got, want = g[~over], want[~over]
    assert_same(got, want, rtol=64 * float(np.finfo(np.real(a).dtype).eps), check_signed_zero=False)
    gi = xp.asarray(a[:4, 0], device=device)
    assert_same(gi ** 2, a[:4, 0] ** 2, check_signed_zero=False)
    assert_same(gi ** 3, a[:4, 0] ** 3, rtol=1e-6, check_signed_zero=False)


# ---------------------------------------------------------------- worst errors (printed with -s)
def test_accuracy_report(device: xp.Device) -> None:
    """The worst complex64 errors on this device, one line per op (run pytest with -s to see them)."""
    for name in UNARY + BINARY:
        if OPS[name].result == "bool" or ULPS[name] == 0:
            continue
        if name in UNARY:
            args: tuple[np.ndarray, ...] = (sample(C64, 2000, len(name)),)
        else:
            a, b = sample(C64, 1000, 1), sample(C64, 1000, 2)
            args = (a, (b / np.maximum(1.0, np.abs(b) / 8)).astype(C64) if name in POWERS else b)
        got = OP_FUNCTIONS[name](*(xp.asarray(v, device=device) for v in args))
        check_accuracy(name, got, args, C64, device)
    rows = sorted((v, k[0]) for k, v in WORST.items() if k[1] == "complex64" and k[2] == device.name)
    print(f"\nworst complex64 errors on {device} (ULP of |result|):",
          ", ".join(f"{n} {v:.2f}" for v, n in reversed(rows)))
    assert rows and all(v <= max(ULPS[n], 1) or n in POWERS for v, n in rows)


# ---------------------------------------------------------------- signed zeros, NaN components
def test_signed_zeros(device: xp.Device) -> None:
    z = np.array([complex(0.0, 0.0), complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0)], C64)
    g = xp.asarray(z, device=device)
    assert_same(xp.conj(g), np.conj(z))
    assert_same(-g, -z)
    assert_same(xp.sqrt(g), np.sqrt(z))
    assert_same(xp.real(g), z.real)
    assert_same(xp.imag(g), z.imag)
    assert_same(xp.exp(g), np.exp(z))
    assert_same(xp.sinh(g), np.sinh(z))
    assert_same(xp.tanh(g), np.tanh(z))
    assert_same(xp.asinh(g), np.arcsinh(z))
    assert_same(xp.log1p(g), np.log1p(z))
    assert np.signbit(np.asarray(xp.conj(xp.asarray([1 + 0j], device=device))).imag[0])


def test_nan_and_inf_components(device: xp.Device) -> None:
    z = np.array([complex(np.nan, 0), complex(0, np.nan), complex(np.inf, np.nan), complex(1, np.inf),
                  complex(-np.inf, 2), 1 + 2j], C64)
    g = xp.asarray(z, device=device)
    np.testing.assert_array_equal(np.asarray(xp.isnan(g)), np.isnan(z))
    np.testing.assert_array_equal(np.asarray(xp.isinf(g)), np.isinf(z))
    np.testing.assert_array_equal(np.asarray(xp.isfinite(g)), np.isfinite(z))
    np.testing.assert_array_equal(np.asarray(g == g), z == z)             # NaN in either part: not equal
    np.testing.assert_array_equal(np.asarray(g != g), z != z)
    assert_same(xp.abs(g), np.abs(z), rtol=2 * float(np.finfo(np.float32).eps))  # hypot: inf wins over NaN
    assert np.asarray(xp.abs(g)).dtype == np.float32


# ---------------------------------------------------------------- promotion and scalars
@pytest.mark.parametrize(("real", "cplx", "want"), [
    ("float32", "complex64", "complex64"), ("float64", "complex64", "complex128"),
    ("float32", "complex128", "complex128"), ("int8", "complex64", "complex64"),
    ("uint16", "complex128", "complex128"), ("complex64", "complex128", "complex128"),
])
def test_promotion(real: str, cplx: str, want: str, device: xp.Device) -> None:
    rd, cd = np.dtype(real), np.dtype(cplx)
    _skip(np.dtype(want), device)
    a = np.array([1, 0, 1], dtype=rd)
    b = np.array([1 + 2j, -3j, 0.5], dtype=cd)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    assert xp.result_type(ga, gb) == np.dtype(want) == xp.result_type(rd, cd)
    for op in (operator.add, operator.sub, operator.mul, operator.truediv):
        with np.errstate(all="ignore"):
            w = op(a, b)
        assert_same(op(ga, gb), w.astype(want), rtol=1e-6)
        assert_same(op(gb, ga), op(b, a).astype(want), rtol=1e-6)


def test_python_complex_scalars(device: xp.Device) -> None:
    f32 = xp.asarray(np.array([1.0, -2.0], np.float32), device=device)
    c64 = xp.asarray(np.array([1 + 1j, 2j], np.complex64), device=device)
    i32 = xp.asarray(np.array([1, 2], np.int32), device=device)
    assert (f32 + 1j).dtype == xp.complex64                       # weak: the float's precision
    assert_same(f32 * 2j, np.array([2j, -4j], np.complex64))
    assert (c64 + 2.5).dtype == xp.complex64 and (c64 * 2).dtype == xp.complex64
    assert_same(c64 * 2, np.array([2 + 2j, 4j], np.complex64))
    assert_same(1j - c64, 1j - np.array([1 + 1j, 2j], np.complex64))
    assert (i32 + 1j).dtype == device.default_complex
    assert_same(c64 ** 2, np.array([1 + 1j, 2j], np.complex64) ** 2)
    assert_same(xp.where(xp.asarray([True, False], device=device), c64, 5j), np.array([1 + 1j, 5j], np.complex64))
    assert_same(xp.where(xp.asarray([True, False], device=device), 1j, 2.0),
                np.array([1j, 2], device.default_complex))
    assert_same(xp.equal(c64, 2j), np.array([False, True]))
    assert_same(c64 == np.complex64(2j), np.array([False, True]))
    with pytest.raises(TypeError):
        xp.maximum(f32, 1j)
    with pytest.raises(TypeError):
        _ = f32 < 1j
    with pytest.raises(TypeError):
        xp.bitwise_and(i32, 1j)


def test_inplace(device: xp.Device) -> None:
    c = xp.asarray(np.array([1 + 1j, 2j], np.complex64), device=device)
    c += 1.5
    c *= xp.asarray(np.array([2.0, 1.0], np.float32), device=device)
    assert_same(c, np.array([5 + 2j, 1.5 + 2j], np.complex64))
    f = xp.asarray(np.array([1.0], np.float32), device=device)
    with pytest.raises(TypeError, match="Cannot cast"):
        f += 1j


# ---------------------------------------------------------------- real-only functions
@pytest.mark.parametrize("name", REAL_ONLY)
def test_real_only_ops_raise(name: str, device: xp.Device) -> None:
    d: OpDef = OPS[name]
    z = xp.asarray(np.array([1 + 1j], np.complex64), device=device)
    with pytest.raises(TypeError, match=name):
        OP_FUNCTIONS[name](*([z] * d.nargs))


def test_real_only_functions_raise(device: xp.Device) -> None:
    z = xp.asarray(np.array([1 + 1j, 2 - 1j], np.complex64), device=device)
    for fn in (xp.max, xp.min, xp.sort, xp.argsort, xp.argmax, xp.argmin):
        with pytest.raises(TypeError, match="real"):
            fn(z)
    with pytest.raises(TypeError):
        xp.clip(z, 0.0, 1.0)
    with pytest.raises(TypeError, match="real-valued"):
        xp.searchsorted(z, z)
    for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.floordiv, operator.mod):
        with pytest.raises(TypeError):
            op(z, z)
    with pytest.raises(TypeError, match="not allowed"):
        z.astype(xp.float32)
    with pytest.raises(TypeError, match="not allowed"):
        xp.astype(z, xp.int32)


# ---------------------------------------------------------------- creation and conversion
def test_creation(device: xp.Device) -> None:
    dc = device.default_complex
    assert xp.asarray(1 + 2j, device=device).dtype == dc
    assert xp.asarray([1, 2j, 3.5], device=device).dtype == dc
    assert_same(xp.asarray([1, 2j], device=device), np.array([1, 2j], dc))
    z = np.array([[1 + 2j, -0.0 - 0j], [np.nan + 1j, np.inf - 1j]], np.complex64)
    assert_same(xp.asarray(z, device=device), z)
    assert_same(xp.asarray(np.complex64(3 - 1j), device=device), np.asarray(np.complex64(3 - 1j)))
    assert_same(xp.asarray([1, 2], dtype=xp.complex64, device=device), np.array([1, 2], np.complex64))
    assert_same(xp.full((2, 2), 1 - 2j, device=device), np.full((2, 2), 1 - 2j, dc))
    assert_same(xp.full(3, 2, dtype=xp.complex64, device=device), np.full(3, 2, np.complex64))
    assert_same(xp.zeros((2, 3), dtype=xp.complex64, device=device), np.zeros((2, 3), np.complex64))
    assert_same(xp.ones(4, dtype=xp.complex64, device=device), np.ones(4, np.complex64))
    assert_same(xp.empty(0, dtype=xp.complex64, device=device), np.empty(0, np.complex64))
    assert_same(xp.eye(3, k=1, dtype=xp.complex64, device=device), np.eye(3, k=1, dtype=np.complex64))
    g = xp.ones((2,), dtype=xp.complex64, device=device)
    assert_same(xp.full_like(g, 3j), np.full(2, 3j, np.complex64))
    assert_same(xp.zeros_like(g), np.zeros(2, np.complex64))
    assert_same(xp.linspace(0, 4 + 4j, 5, device=device), np.linspace(0, 4 + 4j, 5).astype(dc), rtol=1e-15)
    assert_same(xp.linspace(1j, -1, 7, endpoint=False, dtype=xp.complex64, device=device),
                np.linspace(1j, -1, 7, endpoint=False).astype(np.complex64), rtol=1e-6, atol=1e-7)
    assert_same(xp.linspace(0.0, 1.0, 3, dtype=xp.complex64, device=device), np.linspace(0, 1, 3).astype(np.complex64))
    with pytest.raises(TypeError, match="complex"):
        xp.full(2, 1j, dtype=xp.float32, device=device)
    with pytest.raises(TypeError, match="complex"):
        xp.linspace(0, 1j, 3, dtype=xp.float32, device=device)
    with pytest.raises(TypeError, match="complex data"):
        xp.asarray([1j], dtype=xp.float64, device=device)


def test_scalar_conversions_and_repr(device: xp.Device) -> None:
    g = xp.asarray(np.complex64(1.5 - 2j), device=device)
    assert complex(g) == 1.5 - 2j
    assert g.item() == 1.5 - 2j and isinstance(g.item(), complex)
    assert xp.asarray([1j, 2], device=device).tolist() == [1j, 2 + 0j]
    assert complex(xp.asarray(2.5, device=device)) == 2.5 + 0j
    for conv in (float, int):                     # the standard: TypeError for complex arrays
        with pytest.raises(TypeError, match="complex"):
            conv(g)
    assert bool(xp.asarray(1j, device=device)) and not bool(xp.asarray(0j, device=device))
    r = repr(xp.asarray(np.array([1 + 2j, -1j], np.complex64), device=device))
    assert r.startswith("GpuArray([ 1.+2.j, -0.-1.j], dtype=complex64") or "dtype=complex64" in r
    assert f"device='{device.name}'" in r
    assert "1.+2.j" in str(xp.asarray(np.array([1 + 2j]), device=device))


@pytest.mark.parametrize("src", ["bool", "int8", "uint16", "int32", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("dst", ["complex64", "complex128", "bool"])
def test_astype(src: str, dst: str, device: xp.Device) -> None:
    _skip(np.dtype(src), device)
    _skip(np.dtype(dst), device)
    if np.dtype(src).kind == "b":
        x = np.array([True, False])
    elif np.dtype(src).kind == "c":
        x = np.array([0j, complex(-0.0, 0), 1.5 - 2j, complex(0, -1e-30), complex(np.nan, 0), complex(0, np.inf)],
                     dtype=src)
    elif np.dtype(src).kind == "f":
        x = np.array([0.0, -0.0, 1.5, -2.5, np.nan, np.inf], dtype=src)
    else:
        x = np.array([0, 1, 7, 100], dtype=src)
    assert_same(xp.asarray(x, device=device).astype(dst), x.astype(dst))
    if x.dtype.kind != "b":
        assert_same(xp.astype(xp.asarray(x, device=device) * 1, dst), (x * 1).astype(dst))


# ---------------------------------------------------------------- reductions
@pytest.mark.parametrize("dt", COMPLEX, ids=str)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), ()], ids=repr)
def test_reductions(dt: np.dtype, axis: Any, device: xp.Device) -> None:
    _skip(dt, device)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 40, 5)) + 1j * rng.standard_normal((3, 40, 5))).astype(dt)
    g = xp.asarray(x, device=device)
    tol = 2e-6 if dt == C64 else 1e-13
    assert_same(xp.sum(g, axis=axis), np.sum(x, axis=axis), rtol=tol, atol=tol)
    assert_same(xp.prod(g[:, :6] * 0.5, axis=axis), np.prod(x[:, :6] * 0.5, axis=axis), rtol=10 * tol, atol=tol)
    assert_same(xp.mean(g, axis=axis, keepdims=True), np.mean(x, axis=axis, keepdims=True), rtol=tol, atol=tol)
    v = xp.var(g, axis=axis, correction=1) if axis != () else xp.var(g, axis=axis)
    nv = np.var(x, axis=axis, ddof=1) if axis != () else np.var(x, axis=axis)
    assert v.dtype == np.real(x).dtype
    assert_same(v, nv, rtol=10 * tol, atol=tol)
    assert_same(xp.std(g, axis=axis), np.std(x, axis=axis), rtol=10 * tol, atol=tol)
    assert_same(xp.sum(xp.conj(g) * g, axis=axis), np.sum(np.conj(x) * x, axis=axis), rtol=tol, atol=tol)


def test_reductions_special(device: xp.Device) -> None:
    x = np.array([1 + 1j, complex(np.inf, 0), 2j], np.complex64)
    g = xp.asarray(x, device=device)
    assert_same(xp.sum(g), np.sum(x))
    assert_same(xp.sum(g[:0]), np.sum(x[:0]))
    assert_same(xp.prod(g[:0]), np.prod(x[:0]))
    assert_same(xp.prod(g[::2]), np.prod(x[::2]))
    assert_same(xp.cumulative_sum(g), np.cumsum(x))
    assert_same(xp.cumulative_prod(g[::2], include_initial=True),
                np.concatenate([[1], np.cumprod(x[::2])]).astype(np.complex64))
    assert_same(xp.count_nonzero(xp.asarray(np.array([0j, 1j, 1, 0j]), device=device)), np.asarray(2))
    assert bool(xp.any(g)) and bool(xp.all(g))
    assert not bool(xp.all(xp.asarray(np.array([1j, 0j]), device=device)))


def test_reduction_fuses_on_wgpu(wgpu_device: xp.Device) -> None:
    x = np.arange(10000, dtype=np.float32).astype(np.complex64) * (1 - 1j) / 1000
    g = xp.asarray(x, device=wgpu_device)
    xp.evaluate(g)
    xp.reset_metrics()
    s = xp.sum(xp.exp(g * 1j))
    xp.evaluate(s)
    m = xp.metrics()
    assert m["host_fallbacks"] == 0 and m["dispatches"] >= 1
    assert_same(s, np.asarray(np.sum(np.exp(x * 1j), dtype=np.complex128).astype(np.complex64)), rtol=1e-4)


def test_unique_and_sets(device: xp.Device) -> None:
    x = np.array([1 + 1j, 2, 1 + 1j, -1j, 2], np.complex64)
    g = xp.asarray(x, device=device)
    assert_same(xp.unique_values(g), np.unique(x))
    r = xp.unique_counts(g)
    assert_same(r.values, np.unique(x))
    assert r.counts.tolist() == [1, 2, 2]
    inv = xp.unique_inverse(g)
    assert_same(inv.values[inv.inverse_indices], x)


# ---------------------------------------------------------------- linear algebra
def test_vecdot_conjugates(device: xp.Device) -> None:
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(np.complex64)
    b = (rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(np.complex64)
    got = xp.vecdot(xp.asarray(a, device=device), xp.asarray(b, device=device))
    assert_same(got, np.vecdot(a, b), rtol=1e-5, atol=1e-6)
    assert_same(got, np.sum(np.conj(a) * b, axis=-1), rtol=1e-5, atol=1e-6)
    r = xp.vecdot(xp.asarray(a, device=device), xp.asarray(a.real.copy(), device=device), axis=0)
    assert_same(r, np.vecdot(a, a.real, axis=0), rtol=1e-5, atol=1e-6)


def test_matmul_and_tensordot(device: xp.Device) -> None:
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))).astype(np.complex64)
    b = (rng.standard_normal((3, 5)) - 1j * rng.standard_normal((3, 5))).astype(np.complex64)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    assert_same(ga @ gb, a @ b, rtol=1e-5, atol=1e-5)
    assert_same(xp.tensordot(ga, gb, axes=1), np.tensordot(a, b, axes=1), rtol=1e-5, atol=1e-5)
    assert_same(xp.linalg.outer(ga[0, 0], gb[0]), np.outer(a[0, 0], b[0]), rtol=1e-6)
    assert_same(xp.linalg.trace(ga[:, :3, :]), np.trace(a[:, :3, :], axis1=-2, axis2=-1), rtol=1e-6)
    assert_same(xp.linalg.matrix_power(ga[0, :3, :], 3), np.linalg.matrix_power(a[0, :3, :], 3), rtol=1e-5,
                atol=1e-5)


@pytest.mark.parametrize("dt", COMPLEX, ids=str)
def test_linalg_decompositions(dt: np.dtype, device: xp.Device) -> None:
    _skip(dt, device)
    rng = np.random.default_rng(6)
    m = (rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4))).astype(dt)
    h = (m @ np.conj(np.swapaxes(m, -1, -2)) + 4 * np.eye(4)).astype(dt)     # Hermitian positive definite
    tol = 1e-4 if dt == C64 else 1e-10
    gm, gh = xp.asarray(m, device=device), xp.asarray(h, device=device)
    real = np.real(m).dtype
    assert_same(xp.linalg.det(gm), np.linalg.det(m), rtol=tol)
    assert_same(xp.linalg.inv(gm), np.linalg.inv(m), rtol=tol, atol=tol)
    b = m[..., 0]
    assert_same(xp.linalg.solve(gm, xp.asarray(b[..., None], device=device)), np.linalg.solve(m, b[..., None]),
                rtol=tol, atol=tol)
    assert_same(xp.linalg.cholesky(gh), np.linalg.cholesky(h), rtol=tol, atol=tol)
    w, v = xp.linalg.eigh(gh)
    assert w.dtype == real and v.dtype == dt
    assert_same(w, np.linalg.eigvalsh(h), rtol=tol)
    assert_same(xp.linalg.eigvalsh(gh), np.linalg.eigvalsh(h), rtol=tol)
    recon = np.asarray(v) @ (np.asarray(w)[..., None] * np.conj(np.swapaxes(np.asarray(v), -1, -2)))
    np.testing.assert_allclose(recon, h, rtol=tol, atol=10 * tol)
    q, r = xp.linalg.qr(gm)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), m, rtol=tol, atol=tol)
    u, s, vh = xp.linalg.svd(gm, full_matrices=False)
    assert s.dtype == real and u.dtype == dt
    np.testing.assert_allclose((np.asarray(u) * np.asarray(s)[..., None, :]) @ np.asarray(vh), m, rtol=tol, atol=tol)
    assert_same(xp.linalg.svdvals(gm), np.linalg.svd(m, compute_uv=False), rtol=tol)
    sign, logabs = xp.linalg.slogdet(gm)
    ns, nl = np.linalg.slogdet(m)
    assert logabs.dtype == real and sign.dtype == dt
    assert_same(sign, ns, rtol=tol, atol=tol)
    assert_same(logabs, nl, rtol=tol)
    assert_same(xp.linalg.pinv(gm), np.linalg.pinv(m), rtol=10 * tol, atol=10 * tol)
    assert xp.linalg.matrix_rank(gm).tolist() == np.linalg.matrix_rank(m).tolist()
    for ord_ in (2, 1, np.inf, 0, 3):
        assert_same(xp.linalg.vector_norm(gm, axis=-1, ord=ord_), np.linalg.norm(m, axis=-1, ord=ord_),
                    rtol=tol)
    for ord_ in ("fro", "nuc", 1, np.inf, 2):
        assert_same(xp.linalg.matrix_norm(gm, ord=ord_), np.linalg.norm(m, axis=(-2, -1), ord=ord_), rtol=tol)
    assert_same(xp.linalg.cross(gm[..., :3], gm[..., 1:]), np.cross(m[..., :3], m[..., 1:]), rtol=tol, atol=tol)


# ---------------------------------------------------------------- inspection
def test_dtype_functions() -> None:
    assert xp.complex64 == np.complex64 and xp.complex128 == np.complex128
    assert "complex64" in xp.__all__ and "complex128" in xp.__all__
    assert xp.isdtype(xp.complex64, "complex floating") and xp.isdtype(xp.complex128, "numeric")
    assert not xp.isdtype(xp.complex64, "real floating") and not xp.isdtype(xp.float32, "complex floating")
    assert xp.isdtype(xp.complex64, ("bool", "complex floating"))
    fi = xp.finfo(xp.complex64)
    assert fi.dtype == np.float32 and fi.eps == np.finfo(np.float32).eps and fi.bits == 32
    assert xp.finfo(xp.complex128).dtype == np.float64
    assert xp.can_cast(xp.float32, xp.complex64) and xp.can_cast(xp.complex64, xp.complex128)
    assert not xp.can_cast(xp.complex64, xp.float64) and not xp.can_cast(xp.complex128, xp.complex64)
    assert xp.result_type(xp.complex64, 1.0) == xp.complex64
    assert xp.result_type(xp.float32, 1j) == xp.complex64


def test_namespace_info_reports_complex(device: xp.Device) -> None:
    info = xp.__array_namespace_info__()
    kinds = info.dtypes(device=device, kind="complex floating")
    assert list(kinds) == [n for n in ("complex64", "complex128") if device.supports(np.dtype(n))]
    assert info.default_dtypes(device=device)["complex floating"] == device.default_complex


# ---------------------------------------------------------------- on the wgpu device
def test_complex64_runs_on_wgpu(wgpu_device: xp.Device) -> None:
    """complex64 elementwise work, transcendentals included, runs as WGSL (no host fallback)."""
    x = sample(C64, 500, 9)
    g = xp.asarray(x, device=wgpu_device)
    xp.evaluate(g)
    xp.reset_metrics()
    y = xp.exp(g) * xp.log1p(g) / (g + 2j) + xp.sqrt(g) ** 1.5 - xp.asinh(g) + xp.abs(g)
    xp.evaluate(y)
    m = xp.metrics()
    assert m["host_fallbacks"] == 0 and m["dispatches"] == 1


def test_complex128_transcendentals_on_device(wgpu_device: xp.Device) -> None:
    """complex128 transcendentals run as WGSL on the float64 library (render/wgsl_c128.py; accuracy and
    special values: tests/test_complex128_device.py)."""
    if not wgpu_device.supports(C128):
        pytest.skip("no shader-f64")
    x = sample(C128, 100, 10)
    g = xp.asarray(x, device=wgpu_device)
    xp.evaluate(g)
    xp.reset_metrics()
    xp.evaluate(g * g / (g + 1) + xp.sqrt(g) + xp.abs(g))     # exact operations: on the device
    assert xp.metrics()["host_fallbacks"] == 0
    xp.reset_metrics()
    with xp.config(offload="always"):
        e = xp.exp(g)
        xp.evaluate(e)
    assert xp.metrics()["host_fallbacks"] == 0
    assert_same(e, np.exp(x), rtol=4 * float(np.finfo(np.float64).eps))
    assert "exp" not in wgpu_device.provider.device_info()["complex128_on_host"]
    assert "exp" not in wgpu_device.provider.device_info()["float64_on_host"]     # render/wgsl_f64.py


def test_complex_arrays_larger_than_a_binding(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """Elementwise kernels over arrays larger than one storage binding run in chunks; a chunk of a
    complex128 array (16 bytes an element) must fit one binding too."""
    if not wgpu_device.supports(C128):
        pytest.skip("no shader-f64")
    p = wgpu_device.provider
    mib = 1 << 20
    monkeypatch.setattr(p, "max_binding", mib)
    monkeypatch.setattr(p, "max_buffer", 3 * mib)
    monkeypatch.setattr(p.pool, "max_bytes", 3 * mib)
    n = 3 * p.chunk_elems() + 11
    assert p.chunk_elems() * 16 <= mib
    rng = np.random.default_rng(11)
    x = rng.uniform(-3, 3, n) + 1j * rng.uniform(-3, 3, n)
    g = xp.asarray(x, device=wgpu_device)
    xp.reset_metrics()
    y = g * (1 - 2j) + xp.conj(g)
    assert_same(y, x * (1 - 2j) + np.conj(x), rtol=1e-15)
    assert xp.metrics()["host_fallbacks"] == 0
    c = xp.asarray(x.astype(C64), device=wgpu_device)
    assert_same(xp.exp(c), np.exp(x.astype(C64)), rtol=1e-6)
