"""Every entry of the op table against NumPy, on both devices, for every dtype of its category.

The parametrization is generated from ``gpuarray.core.ops.OPS``: a new op is tested
without touching this file. For each op and dtype:

- special values (zeros of both signs, +-inf, NaN, tiny, huge, finfo.max,
  subnormals; iinfo.min/max, shift widths ...) plus, for floats, a dense sample
  that measures accuracy; binary ops take every pair through broadcasting
  ``a[:, None] op b[None, :]``; 0-d and empty operands;
- the namespace function and the operator (plain, reflected, in-place);
- array-with-Python-scalar (weak scalar promotion, OverflowError like NumPy 2);
- dtypes outside the category raise TypeError.

The oracle is the NumPy ufunc (``opdef.ufunc``) under ``np.errstate(all="ignore")``,
or ``opdef.host_impl()`` for ops without one. Inputs where NumPy raises or that
we define differently (``DEVIATIONS``) are not given to NumPy: there the result
must equal the host implementation, which is what the ``cpu`` device runs.

Accuracy: results must have NumPy's dtype, NaN at the same places, the same
infinities and the same sign of zero; finite values must match exactly, except
for the ops in ``ULPS`` which may differ by that many units in the last place
of the result (see ``ULPS`` for why each is there).

Complex dtypes (complex64, complex128) are in the categories of many ops; their
cases are generated from the same table in ``tests/test_complex.py``, which
measures errors on the complex plane. Here every real dtype of each category is
tested, and ``test_rejects_other_dtypes`` checks that complex operands raise
``TypeError`` where the standard allows only real ones.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.core.dtypes import ALL_DTYPES, CATEGORIES
from gpuarray.core.ops import INTERNAL, OPS, SCIPY_DEVICE, SCIPY_DEVICE_N, OpDef
from gpuarray.namespace.elementwise import OP_FUNCTIONS

from .conftest import (
    assert_same,
    cbrt_near_exact,
    device_numerics,
    flush_subnormals,
    incomplete_f64_scale,
    scipy_f64_scale,
    zero_tie_first,
)

# ---------------------------------------------------------------- tolerances
# Allowed error, in units in the last place of the result, for the inexact float
# functions below; every other op, and every integer or bool result, must match
# NumPy exactly (IEEE + - * / and sqrt are correctly rounded on both devices, so
# divide, reciprocal, sqrt, floor_divide and remainder are exact too). NumPy's own
# float32 libm results are 1-3 ULP from the exact values; on wgpu these functions
# are software float32 implementations (render/wgsl_f32.py, F32) measured within
# 4 ULP of NumPy over ~2 million inputs each; float64 ones are software float64
# (render/wgsl_f64*.py). 4 ULP is 4.8e-7 relative in float32 (8.9e-16 in float64).
TRANSCENDENTAL_ULPS = 4
ULPS: dict[str, int] = {
    name: TRANSCENDENTAL_ULPS
    for name in (
        "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
        "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "atan2", "hypot", "logaddexp", "pow",
        "float_power", "expit", "logit", "entr", "exp2", "exp10", "sinc", "xlog1py", *SCIPY_DEVICE,
        *SCIPY_DEVICE_N,
    )
}
# cbrt (render/wgsl_bits.py): within 1 ULP of the exact value, NumPy's float32 cbrt up to 1.9 ULP from it; its
# float64 oracle is near exact (conftest.cbrt_near_exact): NumPy's float64 cbrt (the cpu device's) is within 2.3 ULP
ULPS["cbrt"] = 3

# logaddexp(a, b) = m + log1p(exp(-|a - b|)), m = max(a, b), cancels when the result
# is near 0: NumPy's own float32 result is then hundreds of ULP from the exact value
# (229 on this grid), so there the error is measured in ULP of the terms summed,
# max(|result|, |m|), not of the result.
ERROR_SCALE: dict[str, Callable[..., np.ndarray | None]] = {
    "logaddexp": lambda a, b: np.abs(np.maximum(a, b)),
    # gammaln and psi: the scales of tests/test_special_ops.py's SCALE (render/wgsl_gamma.py says why), with
    # SciPy's functions through the ops' host versions (float64 here)
    "gammaln": lambda x: (lambda v: np.where(
        v < 0, np.maximum(np.abs(np.log(np.pi / np.abs(np.sin(np.pi * (v - np.round(v)))))),
                          np.abs(OPS["gammaln"].host_impl()(1 - v))),
        np.where((v > 0) & (v < 2) & (np.asarray(x).dtype == np.float64), 1.0, 0.0)))(np.asarray(x, np.float64)),
    "psi": lambda x: (lambda v: np.where(
        (v < 0) & (np.abs(v + 0.5040830082644554) >= 0.3),
        np.maximum(np.abs(np.pi / np.tan(np.pi * (v - np.round(v)))), np.abs(OPS["psi"].host_impl()(1 - v))),
        0.0))(np.asarray(x, np.float64)),
    # SciPy's own float64 error function family: tests/conftest.py scipy_f64_scale
    **{n: (lambda x, n=n: scipy_f64_scale(n, x))
       for n in ("erfc", "erfcx", "ndtr", "log_ndtr", "ndtri", "erfinv", "erfcinv")},
    # float64 betainc, betaincc, stdtr, gammainc ...: tests/test_special_ops.py _incomplete_scale says why
    **{n: (lambda *args, n=n: _incomplete_scale(n, *args)) for n in SCIPY_DEVICE_N},
}


def _incomplete_scale(name: str, *args: Any) -> np.ndarray | None:
    v = [np.asarray(a) for a in args]
    if np.result_type(*v) != np.float64 and all(a.dtype.kind == "f" for a in v):
        return None         # float32 (and float64 through integer operands: default float, below)
    f = [a.astype(np.float64) for a in v]
    with np.errstate(all="ignore"):
        want = np.asarray(OPS[name].host_impl()(*f), np.float64)
    return incomplete_f64_scale(name, want, *f)


# ---------------------------------------------------------------- deviations
def _int_pow_negative(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    # NumPy raises "Integers to negative integer powers are not allowed".
    return (b < 0) if b.dtype.kind == "i" else None


def _shift_out_of_range(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    # Shift counts < 0 or >= the bit width are undefined in C; NumPy's results
    # there are an implementation detail. Ours: 0 (or -1 for negative >>).
    return (b < 0) | (b >= a.dtype.itemsize * 8)


# name -> (mask of inputs the NumPy oracle must not see, value substituted for them there)
DEVIATIONS: dict[str, tuple[Callable[[np.ndarray, np.ndarray], np.ndarray | None], int]] = {
    "pow": (_int_pow_negative, 1),
    "bitwise_left_shift": (_shift_out_of_range, 0),
    "bitwise_right_shift": (_shift_out_of_range, 0),
}

# Where NumPy's ufunc differs from the Array API result: np.rint has no integer
# loops (rint(int8) is float16); the Array API's round of an integer is the integer.
ORACLE: dict[str, Callable[..., Any]] = {"round": np.round}


# NumPy's fmax / fmin give either zero for a tie of zeros; gpuarray the first operand
ORACLE.update(fmax=zero_tie_first(np.fmax), fmin=zero_tie_first(np.fmin))
# numpy.exp2 of an integer is float16 (which gpuarray has not); gpuarray.special.exp2 computes integers
# in the default float, like SciPy's exp2 and the other special functions (whose oracle is the host
# implementation in float64, rounded once; tests/test_special_ops.py checks it against SciPy).


def _clip_keep_x(x: Any, lo: Any, hi: Any) -> Any:
    """The clip_ties op (numpy.clip with scalar bounds): lo where x is below it, then hi where that is above
    it (x kept at a +-0 tie, as NumPy's loop for scalar bounds does), NaN where an operand is NaN."""
    t = np.where(lo > x, lo, x)
    r = np.where(t > hi, hi, t)
    if r.dtype.kind == "f":
        r = np.where(np.isnan(x), x, np.where(np.isnan(lo), lo, np.where(np.isnan(hi), hi, r)))
    return r


ORACLE["clip_ties"] = _clip_keep_x


ORACLE["cbrt"] = cbrt_near_exact
ORACLE["exp2"] = lambda x: np.exp2(x if np.asarray(x).dtype.kind == "f" else np.asarray(x, np.float64))


def namespace_fn(name: str) -> Callable[..., Any]:
    """The namespace function of op ``name``: ``gpuarray.<name>`` or ``gpuarray.<module>.<name>``; an
    internal op's (``frexp_exponent``: in no namespace) from ``OP_FUNCTIONS``."""
    module = OPS[name].module
    if module == INTERNAL:
        return OP_FUNCTIONS[name]
    return getattr(getattr(xp, module) if module else xp, name)

# Python operators for each dunder name.
BINARY_OPERATOR = {
    "and": operator.and_, "or": operator.or_, "xor": operator.xor,
}
INPLACE_OPERATOR = {"and": operator.iand, "or": operator.ior, "xor": operator.ixor}
COMPARISON = ("eq", "ne", "lt", "le", "gt", "ge")


def _binary_operator(d: str) -> Callable[[Any, Any], Any]:
    return BINARY_OPERATOR.get(d) or getattr(operator, d)


def _inplace_operator(d: str) -> Callable[[Any, Any], Any]:
    return INPLACE_OPERATOR.get(d) or getattr(operator, "i" + d)


# ---------------------------------------------------------------- inputs
HUGE = {np.dtype("float16"): 3e4, np.dtype("float32"): 1e30, np.dtype("float64"): 1e300}


def specials(dt: np.dtype) -> np.ndarray:
    """The special values of ``dt`` (duplicates removed, order kept)."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind == "f":
        fi = np.finfo(dt)
        vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 7.0, -7.0, 0.1, 100.0,
                np.nan, np.inf, -np.inf, fi.tiny, -fi.tiny, HUGE[dt], -HUGE[dt], fi.max, -fi.max,
                fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny / 4]
        with np.errstate(all="ignore"):
            return np.array(vals, dtype=dt)
    info = np.iinfo(dt)
    bits = dt.itemsize * 8
    vals = [0, 1, -1, 2, 3, 7, -7, 100, bits - 1, bits, bits + 1, info.min, info.max, info.min + 1, info.max - 1]
    out: list[int] = []
    for v in vals:
        if info.min <= v <= info.max and v not in out:
            out.append(v)
    return np.array(out, dtype=dt)


def _rng(seed: str) -> np.random.Generator:
    return np.random.default_rng(list(seed.encode()))


def float_sample(dt: np.dtype, n: int, seed: str) -> np.ndarray:
    """A dense sample for accuracy: small, moderate, huge and tiny magnitudes, values
    near 1, near multiples of pi/2, and half-integers (rounding)."""
    dt = np.dtype(dt)
    rng = _rng(seed)
    fi = np.finfo(dt)
    top = np.log10(float(fi.max)) - 0.1
    low = np.log10(float(fi.smallest_subnormal)) + 0.1
    sign = rng.choice([-1.0, 1.0], n)
    parts = [
        rng.uniform(-1, 1, n),
        rng.uniform(-20, 20, n),
        rng.uniform(-100, 100, n // 4),
        sign * 10.0 ** rng.uniform(low, top, n),
        sign * 10.0 ** rng.uniform(-8, 8, n),
        1.0 + rng.uniform(-1e-3, 1e-3, n // 4),
        1.0 + float(fi.eps) * rng.integers(-64, 64, n // 8),
        np.arange(-200, 201) * (np.pi / 2),
        np.arange(-20, 20.5, 0.5),
    ]
    with np.errstate(all="ignore"):
        return np.concatenate(parts).astype(dt)


def unary_input(dt: np.dtype, name: str) -> np.ndarray:
    dt = np.dtype(dt)
    if dt.kind == "f":
        return np.concatenate([specials(dt), float_sample(dt, 4000, name)])
    if dt.kind == "b":
        return specials(dt)
    info = np.iinfo(dt)
    rnd = _rng(name).integers(info.min, info.max, 64, dtype=dt, endpoint=True)
    return np.concatenate([specials(dt), rnd])


def binary_axis(dt: np.dtype, name: str) -> np.ndarray:
    """Values along one axis of the binary grid: the specials plus a few random ones."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        rng = _rng(name)
        extra = np.concatenate([rng.uniform(-10, 10, 24), rng.uniform(0, 3, 12),
                                rng.choice([-1.0, 1.0], 12) * 10.0 ** rng.uniform(-6, 6, 12)])
        axis = np.concatenate([specials(dt), extra.astype(dt)])
        if name.split("-")[0] in SCIPY_DEVICE_N and dt == np.float64:
            # betainc, betaincc, stdtr, gammainc ...: SciPy's float64 results for parameters above 2^990 are
            # artifacts of overflow (betainc(1e300, 1.8e308, 0.5) is 1, betaincc of the same 0; NaN elsewhere),
            # and below 2^-1000 of subnormal power terms (betainc(2.2e-308, 2.2e-308, 0.3) is 0, betaincc 0.5;
            # the device's betaincc there is 35 ULP from 0.5); SciPy loses the precision of a subnormal x
            # (betainc(0.1, 7, 5e-324) is 1 % off), the device keeps it (tests/test_special_incomplete.py)
            axis = axis[~((np.abs(axis) >= 2.0 ** 990) | ((axis != 0) & (np.abs(axis) < 2.0 ** -1000)))]
        return axis
    if dt.kind == "b":
        return specials(dt)
    info = np.iinfo(dt)
    return np.concatenate([specials(dt), _rng(name).integers(info.min, info.max, 8, dtype=dt, endpoint=True)])


# ---------------------------------------------------------------- oracle and checks
def oracle(opdef: OpDef, *args: Any) -> np.ndarray:
    """NumPy's answer for ``args`` (NumPy arrays or Python scalars), deviations aside."""
    fn = ORACLE.get(opdef.name) or (getattr(np, opdef.ufunc) if opdef.ufunc else opdef.host_impl())
    with np.errstate(all="ignore"):
        dev = DEVIATIONS.get(opdef.name)
        if dev is not None and opdef.nargs == 2:
            ct = np.result_type(*args)
            a, b = (np.asarray(v, dtype=ct) for v in args)
            mask = dev[0](a, b)
            if mask is not None and np.any(mask):
                safe = np.where(mask, np.asarray(dev[1], dtype=ct), b)
                want = np.asarray(fn(a, safe))
                return np.where(mask, np.asarray(opdef.host_impl()(a, b)), want).astype(want.dtype)
        return np.asarray(fn(*args))


def ulp_error(got: np.ndarray, want: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """|got - want| in units of the last place of ``want`` (or of ``max(|want|, scale)``)."""
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    with np.errstate(all="ignore"):
        mag = np.abs(want) if scale is None else np.maximum(np.abs(want), scale.astype(want.dtype))
        spacing = np.spacing(mag).astype(np.float64)
        if want.dtype == np.float64:
            return np.abs(got.astype(np.longdouble) - want.astype(np.longdouble)) / spacing
        return np.abs(g - w) / spacing


_FTZ = {"on": False}   # set per test by the fixture below: does the device flush float32 subnormals?


@pytest.fixture(autouse=True)
def _device_flushes(request: pytest.FixtureRequest) -> Any:
    dev = request.getfixturevalue("device") if "device" in request.fixturenames else None
    _FTZ["on"] = dev is not None and device_numerics(dev)["flushes_f32_subnormals"]
    yield
    _FTZ["on"] = False


def _distance(g: np.ndarray, w: np.ndarray) -> np.ndarray:
    """How far ``g`` is from ``w`` elementwise, NaN and the sign of zero included (0 = identical)."""
    with np.errstate(all="ignore"):
        d = np.where(g == w, 0.0, np.abs(g.astype(np.float64) - w.astype(np.float64)))
    d = np.where(np.isnan(g) & np.isnan(w), 0.0, np.where(np.isnan(g) | np.isnan(w), np.inf, d))
    return np.where((g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w)), 1e-300, np.nan_to_num(d, nan=np.inf))


def flushed_want(g: np.ndarray, w: np.ndarray, opdef: OpDef, args: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray]:
    """On a device that flushes float32 subnormals (NVIDIA through Vulkan; docs/accuracy.md), arithmetic
    may read a subnormal input as a zero and return a zero for a subnormal result. Per element, the
    answer expected is NumPy's for the inputs as given or for the inputs flushed, whichever ``g`` is
    closer to, with subnormal results flushed on both sides."""
    g = np.asarray(flush_subnormals(g))
    w1 = np.asarray(flush_subnormals(w))
    w2 = np.asarray(flush_subnormals(np.broadcast_to(oracle(opdef, *(flush_subnormals(a) for a in args)), w.shape)))
    return g, np.where(_distance(g, w2) < _distance(g, w1), w2, w1).astype(w.dtype)


def check(got: Any, want: np.ndarray, opdef: OpDef, what: str, args: tuple[Any, ...] = ()) -> float:
    """Assert ``got`` matches ``want`` (NumPy's result for ``args``); returns the largest ULP error seen."""
    g = np.asarray(got)
    w = np.asarray(want)
    if _FTZ["on"] and args and w.dtype == np.float32 and g.shape == w.shape:
        g, w = flushed_want(g, w, opdef, args)
    assert g.dtype == w.dtype, f"{what}: dtype {g.dtype}, NumPy gives {w.dtype}"
    assert g.shape == w.shape, f"{what}: shape {g.shape}, NumPy gives {w.shape}"
    if w.dtype.kind != "f":
        bad = g != w
        assert not bad.any(), f"{what}: {int(bad.sum())} wrong values, e.g. got {g[bad][:5]}, want {w[bad][:5]}"
        return 0.0
    gn, wn = np.isnan(g), np.isnan(w)
    bad = gn != wn
    assert not bad.any(), f"{what}: NaN differs at {int(bad.sum())} places, e.g. got {g[bad][:5]}, want {w[bad][:5]}"
    inf = np.isinf(g) | np.isinf(w)
    bad = inf & (g != w)
    assert not bad.any(), f"{what}: infinities differ, e.g. got {g[bad][:5]}, want {w[bad][:5]}"
    zero = (g == 0) & (w == 0)
    bad = zero & (np.signbit(g) != np.signbit(w))
    if bad.any():
        at = [tuple(np.broadcast_to(a, w.shape)[bad][:3]) for a in args]
        raise AssertionError(f"{what}: sign of zero differs at {int(bad.sum())} places, e.g. got {g[bad][:3]}, "
                             f"want {w[bad][:3]} for inputs {at}")
    fin = ~(gn | inf)
    if not fin.any():
        return 0.0
    scale = None
    if opdef.name in ERROR_SCALE and args:
        with np.errstate(all="ignore"):
            s = ERROR_SCALE[opdef.name](*args)
        scale = None if s is None else np.broadcast_to(s, w.shape)[fin]
    err = ulp_error(g[fin], w[fin], scale)
    worst = float(err.max())
    allowed = ULPS.get(opdef.name, 0)
    if worst > allowed:
        i = int(np.argmax(err))
        raise AssertionError(f"{what}: {int((err > allowed).sum())} values off by more than {allowed} ULP; "
                             f"worst {worst:.3g} ULP: got {g[fin][i]!r}, want {w[fin][i]!r}")
    return worst


# ---------------------------------------------------------------- parametrization
# SciPy's special functions (erf ... i1e, and betainc, stdtr, gammainc ... of several operands): float32,
# float64 and one integer dtype (integer operands all take one route, converted to the default float). Each
# of their kernels takes 1-8 s to compile on lavapipe with a cold shader cache (every helper is inlined), so
# the other integer dtypes would add about 15 minutes to CI; tests/test_special_erf.py,
# tests/test_special_gamma.py and tests/test_special_incomplete.py test them in depth.
_NARY_DTYPES = frozenset(np.dtype(t) for t in ("float32", "float64", "int8"))


# ops whose operands have two dtypes (ldexp: a float and an integer exponent, OpDef.result "first"): the
# grids of one dtype here do not apply; tests/test_ufuncs_more.py tests them
MIXED_OPERANDS = frozenset(n for n, d in OPS.items() if d.result == "first")


def _cases(nargs: int) -> list[Any]:
    """(op, dtype) for every real dtype of each op's category (complex ones: tests/test_complex.py)."""
    return [pytest.param(name, dt, id=f"{name}-{dt}")
            for name, d in OPS.items() if d.nargs == nargs and name not in MIXED_OPERANDS
            for dt in CATEGORIES[d.category]
            if dt.kind != "c" and (name not in SCIPY_DEVICE_N and name not in SCIPY_DEVICE or dt in _NARY_DTYPES)]


def _upload(host: np.ndarray, device: xp.Device) -> xp.GpuArray:
    return xp.asarray(host, device=device)


def _maybe_skip(dt: np.dtype, device: xp.Device) -> None:
    if not device.supports(dt):
        pytest.skip(f"{dt} is not supported on {device}")


# ---------------------------------------------------------------- unary ops
@pytest.mark.parametrize(("name", "dt"), _cases(1))
def test_unary(name: str, dt: np.dtype, device: xp.Device) -> None:
    _maybe_skip(dt, device)
    opdef = OPS[name]
    fn = namespace_fn(name)
    x = unary_input(dt, name)
    xa = _upload(x, device)
    want = oracle(opdef, x)
    check(fn(xa), want, opdef, f"{name}({dt})", (x,))
    if opdef.unary_dunder:
        check(getattr(operator, opdef.unary_dunder)(xa), want, opdef, f"__{opdef.unary_dunder}__({dt})", (x,))
    # 0-d and empty operands
    for v in (x[:0], x[:0].reshape(3, 0), x[1], x[-1]):
        va = _upload(np.asarray(v), device)
        check(fn(va), oracle(opdef, np.asarray(v)), opdef, f"{name}({dt}) of shape {np.shape(v)}", (np.asarray(v),))


# ---------------------------------------------------------------- binary ops
@pytest.mark.parametrize(("name", "dt"), _cases(2))
def test_binary(name: str, dt: np.dtype, device: xp.Device) -> None:
    _maybe_skip(dt, device)
    opdef = OPS[name]
    fn = namespace_fn(name)
    a = binary_axis(dt, name)[:, None]
    b = binary_axis(dt, name + "-b")[None, :]
    aa, ba = _upload(a, device), _upload(b, device)
    want = oracle(opdef, a, b)
    check(fn(aa, ba), want, opdef, f"{name}({dt} pairs)", (a, b))
    for d in opdef.dunders:
        op = _binary_operator(d)
        check(op(aa, ba), want, opdef, f"__{d}__({dt})", (a, b))
        # reflected with a NumPy array on the left is NumPy's business; with our array: x.__rop__(y) == op(y, x)
        if d not in COMPARISON:
            check(getattr(ba, f"__r{d}__")(aa), want, opdef, f"__r{d}__({dt})", (a, b))
            full = _upload(np.broadcast_to(a, want.shape).copy(), device)
            before = full
            try:
                full = _inplace_operator(d)(full, ba)
            except TypeError:
                assert want.dtype != dt, f"__i{d}__({dt}) raised TypeError for a {want.dtype} result"
            else:
                assert full is before, f"__i{d}__ must return the same array"
                assert want.dtype == dt or np.can_cast(want.dtype, dt, "same_kind")
                with np.errstate(all="ignore"):
                    check(full, want.astype(dt), opdef, f"__i{d}__({dt})", (a, b))
    # 0-d with 0-d, 0-d with 1-d, and empty operands (broadcast to empty)
    a1, b1 = a[:, 0], b[0]
    for x, y in ((a1[-1], b1[-2]), (a1[1], b1), (a1, b1[0]), (a1[:0], b1[:1]), (a1[:0].reshape(0, 1), b1)):
        xs, ys = np.asarray(x), np.asarray(y)
        check(fn(_upload(xs, device), _upload(ys, device)), oracle(opdef, xs, ys), opdef,
              f"{name}({dt}) of shapes {xs.shape}, {ys.shape}", (xs, ys))


# ---------------------------------------------------------------- Python scalars
def _scalars(opdef: OpDef, dt: np.dtype) -> list[Any]:
    """Python scalars to combine with a ``dt`` array: every kind the op's category allows."""
    kinds = {d.kind for d in CATEGORIES[opdef.category]}
    out: list[Any] = []
    if dt.kind == "b":
        out += [True, False]
    if kinds & {"i", "u"}:   # int with a float-only op: see test_python_int_with_float_only_op
        out += [3, 0, 1] if dt.kind in "ub" else [3, -2, 0]
        if "shift" in opdef.name:
            out += [dt.itemsize * 8 + 1]
    if "f" in kinds:
        out += [1.5, -0.0, float("inf"), float("nan")]
    return out


@pytest.mark.parametrize(("name", "dt"), [c for c in _cases(2) if c.values[0] not in SCIPY_DEVICE_N
                                          or c.values[1] == np.float64])   # (their kernels: 3-8 s to compile)
def test_python_scalar(name: str, dt: np.dtype, device: xp.Device) -> None:
    _maybe_skip(dt, device)
    opdef = OPS[name]
    fn = namespace_fn(name)
    x = binary_axis(dt, name)
    xa = _upload(x, device)
    for s in _scalars(opdef, dt):
        for args, label in (((x, s), f"{name}({dt}, {s!r})"), ((s, x), f"{name}({s!r}, {dt})")):
            gargs = tuple(xa if isinstance(v, np.ndarray) else v for v in args)
            try:
                want = oracle(opdef, *args)
            except TypeError:
                with pytest.raises(TypeError):
                    fn(*gargs)
                continue
            check(fn(*gargs), want, opdef, label, args)
        want = oracle(opdef, x, s)
        for d in opdef.dunders:
            op = _binary_operator(d)
            check(op(xa, s), want, opdef, f"x.__{d}__({s!r}) for {dt}", (x, s))
            check(op(s, xa), oracle(opdef, s, x), opdef, f"{s!r} {d} x for {dt}", (s, x))
            if d in COMPARISON:
                continue
            y = _upload(x, device)
            if want.dtype == dt:
                y2 = _inplace_operator(d)(y, s)
                assert y2 is y
                check(y, want, opdef, f"x.__i{d}__({s!r}) for {dt}", (x, s))
            else:
                with pytest.raises(TypeError):
                    _inplace_operator(d)(y, s)


def _float_only(opdef: OpDef) -> bool:
    return {d.kind for d in CATEGORIES[opdef.category]} <= {"f", "c"}


@pytest.mark.parametrize("name", [n for n, d in OPS.items() if d.nargs == 2 and _float_only(d)])
def test_python_int_with_float_only_op(name: str, device: xp.Device) -> None:
    opdef = OPS[name]
    x = binary_axis(np.dtype("float32"), name)
    xa = _upload(x, device)
    for s in (3, -2, 0):
        check(namespace_fn(name)(xa, s), oracle(opdef, x, s), opdef, f"{name}(float32, {s})", (x, s))
        check(namespace_fn(name)(s, xa), oracle(opdef, s, x), opdef, f"{name}({s}, float32)", (s, x))


def _numpy_raises_overflow(opdef: OpDef) -> bool:
    try:
        oracle(opdef, np.zeros(1, np.int8), 1000)
    except OverflowError:
        return True
    return False


_INT_BINARY = [n for n, d in OPS.items() if d.nargs == 2 and {"i", "u"} & {t.kind for t in CATEGORIES[d.category]}
               and n not in MIXED_OPERANDS]


@pytest.mark.parametrize("name", _INT_BINARY)
def test_python_int_out_of_range(name: str, device: xp.Device) -> None:
    """An int scalar that does not fit the array's integer dtype: OverflowError where NumPy 2 raises it,
    NumPy's result where NumPy 2 defines one."""
    opdef = OPS[name]
    fn = namespace_fn(name)
    for dt in CATEGORIES[opdef.category]:
        if dt.kind not in "iu" or not device.supports(dt):
            continue
        info = np.iinfo(dt)
        x = np.array([0, 1, info.max], dt)
        xa = _upload(x, device)
        for s in (info.max + 1, info.min - 1, 2**64):
            for args in ((x, s), (s, x)):
                gargs = tuple(xa if isinstance(v, np.ndarray) else v for v in args)
                try:
                    want = oracle(opdef, *args)
                except OverflowError:
                    with pytest.raises(OverflowError):
                        fn(*gargs)
                else:
                    # the SciPy functions' float64 error scales need the operands (ERROR_SCALE)
                    check(fn(*gargs), want, opdef, f"{name}{tuple(map(str, args))}",
                          args if name in SCIPY_DEVICE_N else ())


@pytest.mark.parametrize("ufunc", [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
                                   np.add, np.maximum], ids=lambda u: u.__name__)
def test_python_int_out_of_range_through_numpy_ufuncs(ufunc: np.ufunc, device: xp.Device) -> None:
    """The same through NumPy's ufuncs on a GpuArray (``np.less(uint8_array, -1)``): comparisons exact (they
    wrapped the int to the dtype, a silent wrong result), arithmetic NumPy's OverflowError."""
    for dt in ("uint8", "int8", "uint32", "int32", "uint64", "int64"):
        info = np.iinfo(dt)
        x = np.array([0, 1, 100, info.max], dt)
        xa = xp.asarray(x, device=device)
        for s in (info.max + 1, info.min - 1, -1, 2**64):
            for args, gargs in (((x, s), (xa, s)), ((s, x), (s, xa))):
                try:
                    want = ufunc(*args)
                except OverflowError:
                    with pytest.raises(OverflowError):
                        ufunc(*gargs)
                    continue
                assert_same(ufunc(*gargs), want)


# ---------------------------------------------------------------- where (three operands)
@pytest.mark.parametrize(("name", "dt"), _cases(3))
def test_ternary(name: str, dt: np.dtype, device: xp.Device) -> None:
    """Three-operand ops: ``where`` (a boolean condition, then two ``dt`` operands, broadcast), ``clip_ties`` and the
    SciPy special functions of three operands (``betainc``, ``betaincc``): every triple of ``binary_axis``'s
    values."""
    _maybe_skip(dt, device)
    opdef = OPS[name]
    fn = namespace_fn(name)
    x1 = binary_axis(dt, name)
    if opdef.module == "special":       # betainc, betaincc: every triple of the axis's values
        a, b, x = x1[:, None, None], x1[None, :, None], x1[None, None, :]
        check(fn(_upload(a, device), _upload(b, device), _upload(x, device)), oracle(opdef, a, b, x), opdef,
              f"{name}({dt} triples)", (a, b, x))
        for s in _scalars(opdef, dt):
            check(fn(_upload(x1, device), s, _upload(x1[::-1].copy(), device)), oracle(opdef, x1, s, x1[::-1]),
                  opdef, f"{name}({dt}, {s!r}, {dt})", (x1, s, x1[::-1]))
        return
    if name == "clip_ties":             # x, lo, hi: every triple of the axis's values
        x, lo, hi = x1[:, None, None], x1[None, :, None], x1[None, None, :]
        check(fn(_upload(x, device), _upload(lo, device), _upload(hi, device)), oracle(opdef, x, lo, hi), opdef,
              f"clip_ties({dt} triples)", (x, lo, hi))
        return
    cond = (np.arange(x1.size) % 3 == 0)[:, None, None]
    a, b = x1[None, :, None], x1[::-1][None, None, :]
    got = fn(_upload(cond, device), _upload(a, device), _upload(b, device))
    check(got, oracle(opdef, cond, a, b), opdef, f"{name}({dt})")
    for s in _scalars(opdef, dt):
        c1, x = cond[:, 0, 0], x1
        check(fn(_upload(c1, device), _upload(x, device), s), oracle(opdef, c1, x, s), opdef,
              f"{name}(c, {dt}, {s!r})")


# ---------------------------------------------------------------- dtype checks
@pytest.mark.parametrize("name", [n for n, d in OPS.items() if d.category != "any"])
def test_rejects_other_dtypes(name: str, device: xp.Device) -> None:
    opdef = OPS[name]
    fn = namespace_fn(name)
    for dt in ALL_DTYPES:
        if dt in CATEGORIES[opdef.category] or not device.supports(dt):
            continue
        if dt == np.bool_ and name in ("add", "multiply", "less", "less_equal", "greater", "greater_equal"):
            continue        # NumPy's logical or / and, False < True (tests/test_ecosystem_fixes.py)
        xa = _upload(np.ones(2, dt), device)
        with pytest.raises(TypeError, match=name):
            fn(*([xa] * opdef.nargs))


def test_every_op_is_covered() -> None:
    """Each op has a NumPy oracle and lands in one of the tests above."""
    for name, d in OPS.items():
        assert d.nargs in (1, 2, 3), name
        assert namespace_fn(name).__name__ == name, f"gpuarray.{name} missing"
        if d.module == INTERNAL:
            assert not hasattr(xp, name) and not hasattr(xp.special, name), f"internal {name} exported"
        fn = ORACLE.get(name) or (getattr(np, d.ufunc) if d.ufunc else d.host_impl())
        assert callable(fn), name


# ---------------------------------------------------------------- float -> integer casts
_FLOATS = [d for d in ALL_DTYPES if d.kind == "f"]
_INTS = [d for d in ALL_DTYPES if d.kind in "iu"]


def _in_range_floats(fdt: np.dtype, idt: np.dtype) -> np.ndarray:
    """Floats whose truncation fits ``idt``: there the cast is defined, and NumPy is the oracle."""
    info = np.iinfo(idt)
    with np.errstate(all="ignore"):
        top = fdt.type(info.max)
        if float(top) > info.max:
            top = np.nextafter(top, fdt.type(0))
    vals = [0.0, -0.0, 0.5, -0.5, 0.9, 1.5, -1.5, 2.5, 7.9, -7.9, 100.25, -100.25, 127.9, -128.9,
            float(info.min), float(top)]
    return np.array([v for v in vals if info.min <= np.trunc(v) <= info.max], dtype=fdt)


@pytest.mark.parametrize("idt", _INTS, ids=str)
@pytest.mark.parametrize("fdt", _FLOATS, ids=str)
def test_float_to_int_cast(fdt: np.dtype, idt: np.dtype, device: xp.Device) -> None:
    """astype of floats whose truncation fits the integer dtype: truncation toward zero, like NumPy."""
    _maybe_skip(fdt, device)
    _maybe_skip(idt, device)
    x = _in_range_floats(fdt, idt)
    got = np.asarray(_upload(x, device).astype(idt))
    np.testing.assert_array_equal(got, x.astype(idt))
    assert got.dtype == idt


@pytest.mark.parametrize("fdt", _FLOATS, ids=str)
def test_float_to_int_cast_undefined_inputs_agree(fdt: np.dtype) -> None:
    """Where C leaves the cast undefined, the wgpu device gives what the cpu device gives: NumPy's
    x86-64 results (providers/host_cast.py; every pair is checked in tests/test_casts.py)."""
    specials_ = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 3e9, -3e9, 70000.0, -70000.0, 300.7, -300.7, -1.0],
                         dtype=fdt)
    wgpu = xp.Device("wgpu:0")
    for idt in _INTS:
        if not wgpu.supports(idt) or not wgpu.supports(fdt):
            continue
        cpu_res = np.asarray(xp.asarray(specials_, device="cpu").astype(idt))
        wgpu_res = np.asarray(xp.asarray(specials_, device=wgpu).astype(idt))
        np.testing.assert_array_equal(wgpu_res, cpu_res, err_msg=f"{fdt} -> {idt}")
