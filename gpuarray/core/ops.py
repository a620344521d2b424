"""THE op table: one ``OpDef`` per elementwise operation.

Each entry drives the namespace function, the Python operator (with its
reflected and in-place forms), the NumPy ufunc mapping, the WGSL (through
the renderer) and the host implementation (the in-process provider).
Adding an elementwise op means adding one entry here.

WGSL templates are format strings: ``{0}``, ``{1}``, ``{2}`` are the operands,
``{T}`` their WGSL register type and ``{S}`` the suffix of helper functions
(``f32``, ``i64``, ``c64`` ...), ``{F}`` the WGSL type of a complex number's
components (``f32`` for ``vec2<f32>``; the type itself for real dtypes);
``ga_*_{S}`` helpers come from ``render/wgsl_lib.py``.
``module`` says where the function lives: ``""`` the ``gpuarray`` namespace, ``"special"``
``gpuarray.special`` (the SciPy special functions that SciPy looks up there), ``"internal"`` none
(a building block of other functions, e.g. ``frexp_exponent`` of ``numpy.frexp``).
A template may be a dict keyed by dtype kind: ``f`` float, ``c`` complex,
``i`` signed, ``u`` unsigned, ``b`` bool. Complex numbers are ``vec2`` pairs
(real, imaginary) in registers, so a plain string template that is only right
componentwise (``+``, ``-``, ``select``) serves them too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Template = str | dict[str, str]
# OpDef.module of an op without a namespace function (a building block of other functions)
INTERNAL = "internal"


@dataclass(frozen=True)
class OpDef:
    """One elementwise operation.

    name: Array API name; ufunc: NumPy ufunc name; nargs: operand count;
    category: dtype category the operands must belong to (``_dtypes.CATEGORIES``);
    result: ``same`` (the promoted operand dtype), ``bool``, ``float``
    (integer operands are promoted to the default float first), ``real``
    (the promoted dtype, with complex dtypes replaced by their component dtype:
    ``abs``, ``real``, ``imag``), ``double`` (computed in the device's widest float:
    float64 / complex128 where it has them, else float32 / complex64: ``float_power``), a dtype name
    (``uint8``, ``int32``: that dtype whatever the operands', ``bitwise_count``, ``frexp_exponent``; the
    template's value has its WGSL type) or ``first`` (``ldexp``: the first operand's float dtype, the
    default float for an integer; the other operands must be integers other than uint64, as NumPy's loops
    take, and are converted to that float dtype for the kernel);
    dunders: operator names, e.g. ``("add",)`` for ``__add__``/``__radd__``/``__iadd__``;
    wgsl: template; host: NumPy implementation taking arrays of the compute dtype;
    module: where the op's function is exported: ``""`` (the ``gpuarray`` namespace), ``"special"``
    (``gpuarray.special``) or ``INTERNAL`` (``"internal"``: no namespace function; the op is for other
    code to build on with ``apply(OPS[name], ...)`` or ``namespace.elementwise.OP_FUNCTIONS[name]``, as
    interop.ufuncs.COMPOSED's ``numpy.frexp`` does with ``frexp_exponent``);
    scalar_forms: for a second operand that is a scalar of one of these values, the unary op
    NumPy computes instead, for floating and complex operands (``power``'s fast paths:
    ``x ** 2`` is ``square(x)``, ``x ** 0.5`` is ``sqrt(x)``, ``x ** -1`` is ``reciprocal(x)``;
    graph/node.py rewrites such nodes as they are made); operator_forms: the same for the operator
    (``__pow__``) on complex operands, by Python scalar type and value (NumPy's fast_scalar_power:
    ``z ** 2``, ``z ** -1``, ``z ** 0.5``; ``np.power`` of complex operands takes no fast path).
    """

    name: str
    ufunc: str | None
    nargs: int
    category: str
    wgsl: Template
    result: str = "same"
    dunders: tuple[str, ...] = ()
    unary_dunder: str | None = None
    host: Callable[..., Any] | None = None
    doc: str = ""
    module: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    scalar_forms: dict[float, str] = field(default_factory=dict)
    operator_forms: dict[tuple[type, float], str] = field(default_factory=dict)

    def template(self, kind: str, fast: bool = False) -> str:
        """The template for operands of ``kind`` (a dtype kind, or ``"e"``: float16); ``fast``: the ``"fast"``
        entry where there is one (float32 under ``config(fast_math=True)``: WGSL built-ins, NaN and infinities
        kept)."""
        t = self.wgsl
        if isinstance(t, str):
            return t
        if fast and "fast" in t:
            return t["fast"]
        if kind == "e":             # float16 (held as float32): its own template, else float32's
            kind = "e" if "e" in t else "f"
        if kind in t:
            return t[kind]
        if kind in "iu" and "int" in t:
            return t["int"]
        return t["default"]

    def host_impl(self) -> Callable[..., Any]:
        if self.host is not None:
            return self.host
        assert self.ufunc is not None
        return getattr(np, self.ufunc)


OPS: dict[str, OpDef] = {}


def op(name: str, ufunc: str | None, nargs: int, category: str, wgsl: Template, **kw: Any) -> None:
    assert kw.get("module", "") in ("", "special", INTERNAL), (name, kw["module"])
    OPS[name] = OpDef(name, ufunc, nargs, category, wgsl, **kw)


# ---- host implementations where NumPy's own ufunc differs from what the kernel computes
def _int_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer power; negative exponents give the truncated result (NumPy raises instead)."""
    if a.dtype.kind in "iu":
        neg = b < 0
        if np.any(neg):
            safe = np.where(neg, 0, b)
            r = np.power(a, safe)
            trunc = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
            return np.where(neg, trunc.astype(a.dtype), r)
    return np.power(a, b)


def _clip_ties(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """lo where x is below it, then hi where that is above it: x kept at a +-0 tie (NumPy's loop for scalar
    bounds; its loop for arrays takes the bound), NaN where an operand is NaN."""
    t = np.where(lo > x, lo, x)
    r = np.where(t > hi, hi, t)
    if r.dtype.kind == "f":
        r = np.where(np.isnan(x), x, np.where(np.isnan(lo), lo, np.where(np.isnan(hi), hi, r)))
    return r


def _multiply_rounded(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a * b`` with a complex product's parts as NumPy's reduction along a contiguous axis computes them, each
    product rounded before the sum (``re = ar*br - ai*bi``), where its ``*`` rounds once (fma) on most CPUs."""
    dt = np.result_type(a, b)
    if dt.kind != "c":
        return np.multiply(a, b)
    a, b = np.broadcast_arrays(np.asarray(a, dt), np.asarray(b, dt))
    out = np.empty(a.shape, dt)
    out.real = a.real * b.real - a.imag * b.imag
    out.imag = a.real * b.imag + a.imag * b.real
    return out


def _shift(fn: Callable[..., Any]) -> Callable[..., Any]:
    def impl(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # NumPy defines shifts past the width (0, or -1 for negative >>); negative
        # counts are undefined there: we treat them like counts past the width.
        bits = a.dtype.itemsize * 8
        big = (b < 0) | (b >= bits)
        r = fn(a, np.where(big, 0, b).astype(a.dtype))
        if fn is np.left_shift:
            fill = np.zeros_like(a)
        else:
            fill = np.where(a < 0, -1, 0).astype(a.dtype) if a.dtype.kind == "i" else np.zeros_like(a)
        return np.where(big, fill, r)
    return impl


def _round(a: np.ndarray) -> np.ndarray:
    """Round half to even (both parts of a complex number); integers are returned as they are
    (np.rint would give float16/32/64)."""
    return np.rint(a) if a.dtype.kind in "fc" else a.copy()


def _log1p(a: np.ndarray) -> np.ndarray:
    """log1p; for complex ``z`` near 0 as ``log1p(x (2 + x) + y^2) / 2 + i atan2(y, 1 + x)`` (NumPy's own
    complex log1p is ``log(1 + z)``, which loses every digit for small ``z``), as the WGSL does."""
    if a.dtype.kind != "c":
        return np.log1p(a)
    shape, a = np.shape(a), np.asarray(a).reshape(-1)
    x = a.real.astype(np.float64)
    y = a.imag.astype(np.float64)
    w = a.copy()
    w.real += 1                      # 1 + z that keeps the sign of a zero imaginary part
    out = np.log(w)
    near = np.isfinite(a) & (np.abs(x) < 0.5) & (np.abs(y) < 0.5)
    if near.any():
        xn, yn = x[near], y[near]
        part = np.empty(xn.shape, dtype=a.dtype)
        part.real = 0.5 * np.log1p(xn * (2 + xn) + yn * yn)
        part.imag = np.arctan2(yn, 1 + xn)
        out[near] = part
    return out.reshape(shape)


def _expm1(a: np.ndarray) -> np.ndarray:
    """expm1; for complex, NumPy's formula on finite input and the standard's special values
    (those of ``exp(z) - 1``; ``-1 +- 0j`` for a real part of -inf) elsewhere, as the WGSL does."""
    if a.dtype.kind != "c":
        return np.expm1(a)
    shape, a = np.shape(a), np.asarray(a).reshape(-1)
    out = np.expm1(a)
    x, y = a.real, a.imag
    big = ~np.isfinite(a) | (x > (80.0 if a.dtype == np.complex64 else 700.0))
    if big.any():
        w = np.exp(a[big])
        w.real -= 1
        out[big] = w
    ninf = np.isneginf(x)
    out.real[ninf] = -1
    out.imag[ninf] = np.copysign(0, y[ninf])
    flat = np.isfinite(x) & (y == 0)
    out.real[flat] = np.expm1(x[flat]) + 0.0          # + 0.0: the standard's +0 for a real part of -0
    out.imag[flat] = y[flat]
    return out.reshape(shape)


def _imag(a: np.ndarray) -> np.ndarray:
    return a.imag.copy() if a.dtype.kind == "c" else np.zeros_like(a)


def _real(a: np.ndarray) -> np.ndarray:
    return a.real.copy() if a.dtype.kind == "c" else a.copy()


def _fmaxmin(fn: Callable[..., Any]) -> Callable[..., Any]:
    """NumPy's fmax / fmin, a tie of zeros giving the first operand as the WGSL does (NumPy's own
    loops give either zero there: its SIMD loops the second operand, its scalar loop sometimes the first)."""
    def impl(a: Any, b: Any) -> np.ndarray:
        r = np.asarray(fn(a, b))
        if r.dtype.kind != "f":
            return r
        tie = (np.asarray(a) == 0) & (np.asarray(b) == 0)
        return np.where(tie, a, r).astype(r.dtype, copy=False) if np.any(tie) else r
    return impl


def _wide(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` computed in float64 and rounded once to the operands' float dtype (integers: float64)."""
    def impl(*args: Any) -> np.ndarray:
        dt = np.result_type(*args)
        dt = dt if dt.kind == "f" else np.dtype(np.float64)
        return np.asarray(fn(*(np.asarray(a, dtype=np.float64) for a in args))).astype(dt, copy=False)
    return impl


def _ldexp(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """ldexp with the integer exponent held in a float of ``x``'s dtype (the kernel's operands), clamped
    where every nonzero finite x overflows or underflows anyway."""
    return np.ldexp(x, np.clip(n, -100000, 100000).astype(np.int32))


def _frexp_exponent(x: np.ndarray) -> np.ndarray:
    return np.frexp(x)[1]


def _expit(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)); for x < 0 as e / (1 + e), e = exp(x), as the kernels do (and SciPy): it
    keeps its relative accuracy down to the subnormals instead of giving 0 below -709.78."""
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _logit(x: np.ndarray) -> np.ndarray:
    """SciPy's formula: ``log(x / (1 - x))``, near 1/2 ``log1p(s) - log1p(-s)``, ``s = 2 (x - 1/2)``."""
    s = 2.0 * (x - 0.5)
    return np.where((x >= 0.3) & (x <= 0.65), np.log1p(s) - np.log1p(-s), np.log(x / (1.0 - x)))


def _entr(x: np.ndarray) -> np.ndarray:
    r = np.where(x > 0, -x * np.log(np.where(x > 0, x, 1.0)), np.where(x == 0, 0.0, -np.inf))
    return np.where(np.isnan(x), x, r)


def _xlog1py(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log1p(y))


def _exp10(x: np.ndarray) -> np.ndarray:
    return np.power(10.0, x)


def _stdtr(df: np.ndarray, t: np.ndarray) -> np.ndarray:
    """SciPy's stdtr, with the Cauchy cdf atan2(1, -t) / pi at df = 1: SciPy's (Boost's arcsine case of
    ibetac(1/2, 1/2, t^2 / (1 + t^2))) is up to 1.4e7 ULP (3e-9) off there for 1e-9 < |t| < 1e-2, where the
    device's is within an ULP of the exact value."""
    r = _scipy_special("stdtr")(df, t)
    one = np.asarray(df) == 1
    if np.any(one):
        with np.errstate(all="ignore"):
            c = np.arctan2(1.0, -np.asarray(t, dtype=np.float64)) / np.pi
        r = np.where(one & ~np.isinf(t), c, r)
    return r


# SciPy special functions computed on the device (render/wgsl_special.py, render/wgsl_gamma.py): the
# error function family, the gamma functions and the modified Bessel functions of order 0 and 1
SCIPY_DEVICE = ("erf", "erfc", "erfcx", "ndtr", "log_ndtr", "ndtri", "erfinv", "erfcinv",
                "gammaln", "psi", "i0", "i0e", "i1", "i1e")
# multi-argument SciPy special functions on the device (render/wgsl_incomplete.py, render/wgsl_igamma.py: the
# incomplete beta and gamma functions, Student's t and the chi-square distributions): name -> operand count.
# Their float32 versions compute in float64 (providers/wgpu_kinds.py F32_VIA_F64).
SCIPY_DEVICE_N = {"betainc": 3, "betaincc": 3, "stdtr": 2, "gammainc": 2, "gammaincc": 2, "chdtr": 2, "chdtrc": 2}


def _scipy_special(name: str) -> Callable[..., Any]:
    """SciPy's ufunc ``name`` (imported when first called: SciPy is needed only to compute these)."""
    def fn(*args: np.ndarray) -> np.ndarray:
        import scipy.special

        with np.errstate(all="ignore"):
            return np.asarray(getattr(scipy.special, name)(*args))
    fn.__name__ = name
    return fn


_FLOAT_GUARD = "select({body}, {0}, ga_isnan_{S}({0}))"

# "fast" templates (float32 under config(fast_math=True), render/wgsl.py): WGSL's built-ins, with
# NaN and +-inf put back as NumPy gives them by a select around each (built-ins leave them
# undefined or wrong: tanh(inf) through exp is inf / inf). Both select arms are evaluated, so
# the special-value arm stays cheap.
_NANF = "ga_isnan_{S}({0})"
_LOGSPECIAL = ("select(select(ga_nan_{S}(), -ga_inf_{S}(), {0} == {T}(0)), {0}, "
               "(ga_isinf_{S}({0}) && {0} > {T}(0)) || ga_isnan_{S}({0}))")
_TRIG_FAST = "select({f}({0}), ga_nan_{S}(), ga_isinf_{S}({0}) || " + _NANF + ")"
FAST: dict[str, str] = {
    "exp": "select(exp({0}), {0}, " + _NANF + ")",
    "exp2": "select(exp2({0}), {0}, " + _NANF + ")",
    "log": "select(log({0}), " + _LOGSPECIAL + ", !({0} > {T}(0)) || ga_isinf_{S}({0}))",
    "log2": "select(log2({0}), " + _LOGSPECIAL + ", !({0} > {T}(0)) || ga_isinf_{S}({0}))",
    "sin": _TRIG_FAST.replace("{f}", "sin"), "cos": _TRIG_FAST.replace("{f}", "cos"),
    "tan": _TRIG_FAST.replace("{f}", "tan"),
    "tanh": "select(select(tanh({0}), sign({0}), abs({0}) > {T}(9)), {0}, " + _NANF + " || abs({0}) < {T}(1e-3))",
    "divide": "({0} / {1})",
}


def _fast(name: str) -> dict[str, str]:
    return {"fast": FAST[name]} if name in FAST else {}


def _fl(body: str) -> str:
    """Float template that propagates NaN explicitly (WGSL may assume no NaN)."""
    return _FLOAT_GUARD.replace("{body}", body)


# Ops whose helpers return NaN for NaN themselves, for every float type (render/wgsl_lib.py: the F32 versions
# test for it where their common path would not give it, NAN_THROUGH's FLT versions first thing), so that
# their templates need no _FLOAT_GUARD. tests/test_mathlib.py checks the list against the helpers.
NAN_THROUGH = frozenset({
    "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
})


# ---- arithmetic
op("add", "add", 2, "numeric", {"default": "({0} + {1})", "b": "({0} || {1})"}, dunders=("add",))
op("subtract", "subtract", 2, "numeric", "({0} - {1})", dunders=("sub",))
op("multiply", "multiply", 2, "numeric", {"default": "({0} * {1})", "b": "({0} && {1})",
                                          "c": "ga_cmul_{S}({0}, {1})"}, dunders=("mul",))
op("divide", "divide", 2, "numeric",
   {"default": "({0} / {1})", "f": "ga_div_{S}({0}, {1})", "c": "ga_cdiv_{S}({0}, {1})", **_fast("divide")},
   result="float",
   dunders=("truediv",))
op("floor_divide", "floor_divide", 2, "real numeric", "ga_floordiv_{S}({0}, {1})", dunders=("floordiv",))
op("remainder", "remainder", 2, "real numeric", "ga_remainder_{S}({0}, {1})", dunders=("mod",))
op("pow", "power", 2, "numeric", {"default": "ga_pow_{S}({0}, {1})", "c": "ga_cpow_{S}({0}, {1})"},
   dunders=("pow",), host=_int_pow, scalar_forms={2.0: "square", 0.5: "sqrt", -1.0: "reciprocal"},
   operator_forms={(int, 2): "square", (int, -1): "reciprocal", (float, 0.5): "sqrt"})
op("negative", "negative", 1, "numeric", {"default": "({T}(0) - {0})", "f": "(-{0})", "c": "ga_cneg_{S}({0})"},
   unary_dunder="neg")
op("positive", "positive", 1, "numeric", "{0}", unary_dunder="pos")
op("abs", "absolute", 1, "numeric", {"f": "abs({0})", "i": "abs({0})", "u": "{0}", "c": "ga_cabs_{S}({0})"},
   result="real", unary_dunder="abs")
op("square", "square", 1, "numeric", {"default": "({0} * {0})", "c": "ga_csquare_{S}({0})"})
op("reciprocal", "reciprocal", 1, "floating-point", {"f": "ga_div_{S}({T}(1), {0})", "c": "ga_crecip_{S}({0})"})
op("sign", "sign", 1, "numeric", {"f": "ga_sign_{S}({0})", "i": "ga_sign_{S}({0})",
                                   "u": "select({T}(0), {T}(1), {0} > {T}(0))", "c": "ga_csign_{S}({0})"})
op("maximum", "maximum", 2, "real numeric", {"f": "ga_maximum_{S}({0}, {1})", "int": "max({0}, {1})",
                                            "e": "select({1}, {0}, {0} >= {1} || ga_isnan_f32({0}))"})
op("minimum", "minimum", 2, "real numeric", {"f": "ga_minimum_{S}({0}, {1})", "int": "min({0}, {1})",
                                            "e": "select({1}, {0}, {0} <= {1} || ga_isnan_f32({0}))"})
op("copysign", "copysign", 2, "real floating", "ga_copysign_{S}({0}, {1})")
op("hypot", "hypot", 2, "real floating", "ga_hypot_{S}({0}, {1})")
op("logaddexp", "logaddexp", 2, "real floating", "ga_logaddexp_{S}({0}, {1})")
# float16 nextafter where x == y (+-0 too): y from NumPy 2.5 on (C's rule), x in NumPy 2.4's half loop; the
# device follows the NumPy it runs with, as the host does
_HALF_TIE = "{1}" if np.signbit(np.nextafter(np.float16(0.0), np.float16(-0.0))) else "{0}"
op("nextafter", "nextafter", 2, "real floating",
   {"e": f"ga_nextafterh_f32({{0}}, {{1}}, {_HALF_TIE})", "default": "ga_nextafter_{S}({0}, {1})"})
op("atan2", "arctan2", 2, "real floating", "ga_atan2_{S}({0}, {1})")

# ---- rounding: exact helpers on the bits, not WGSL's built-ins, which drivers get wrong (lavapipe's float64
# round and trunc: halves, -0.0, values above 2^50); float32 takes the built-in where the start-up probe
# found it exact (render/wgsl_round.py, providers/wgpu_probe.py)
op("ceil", "ceil", 1, "real numeric", {"f": "ga_ceil_{S}({0})", "int": "{0}"})
op("floor", "floor", 1, "real numeric", {"f": "ga_floor_{S}({0})", "int": "{0}"})
op("trunc", "trunc", 1, "real numeric", {"f": "ga_trunc_{S}({0})", "int": "{0}"})
op("round", "rint", 1, "numeric", {"f": "ga_round_{S}({0})", "int": "{0}",
                                   "c": "{T}(ga_round_{F}({0}.x), ga_round_{F}({0}.y))"}, host=_round)

# ---- transcendental (NaN propagated explicitly, by the helpers for NAN_THROUGH; special values in the helpers)
for _name, _uf, _body in [
    ("exp", "exp", "ga_exp_{S}({0})"), ("expm1", "expm1", "ga_expm1_{S}({0})"),
    ("log", "log", "ga_log_{S}({0})"), ("log1p", "log1p", "ga_log1p_{S}({0})"),
    ("log2", "log2", "ga_log2_{S}({0})"), ("log10", "log10", "ga_log10_{S}({0})"),
    ("sqrt", "sqrt", "ga_sqrt_{S}({0})"),
    ("sin", "sin", "ga_sin_{S}({0})"), ("cos", "cos", "ga_cos_{S}({0})"), ("tan", "tan", "ga_tan_{S}({0})"),
    ("asin", "arcsin", "ga_asin_{S}({0})"), ("acos", "arccos", "ga_acos_{S}({0})"),
    ("atan", "arctan", "ga_atan_{S}({0})"),
    ("sinh", "sinh", "ga_sinh_{S}({0})"), ("cosh", "cosh", "ga_cosh_{S}({0})"),
    ("tanh", "tanh", "ga_tanh_{S}({0})"),
    ("asinh", "arcsinh", "ga_asinh_{S}({0})"), ("acosh", "arccosh", "ga_acosh_{S}({0})"),
    ("atanh", "arctanh", "ga_atanh_{S}({0})"),
]:
    op(_name, _uf, 1, "floating-point",
       {"f": _body if _name in NAN_THROUGH else _fl(_body), "c": _body.replace("ga_", "ga_c"), **_fast(_name)},
       host={"log1p": _log1p, "expm1": _expm1}.get(_name), extra={"transcendental": True})

# ---- predicates
op("isnan", "isnan", 1, "numeric", {"f": "ga_isnan_{S}({0})", "int": "false", "c": "ga_cisnan_{S}({0})"},
   result="bool")
op("isinf", "isinf", 1, "numeric", {"f": "ga_isinf_{S}({0})", "int": "false", "c": "ga_cisinf_{S}({0})"},
   result="bool")
op("isfinite", "isfinite", 1, "numeric", {"f": "ga_isfinite_{S}({0})", "int": "true",
                                          "c": "ga_cisfinite_{S}({0})"}, result="bool")
op("signbit", "signbit", 1, "real floating", "ga_signbit_{S}({0})", result="bool")

# ---- comparison (NaN compares unordered, written out explicitly)
for _name, _uf, _sym, _dunder in [
    ("equal", "equal", "==", "eq"), ("not_equal", "not_equal", "!=", "ne"),
    ("less", "less", "<", "lt"), ("less_equal", "less_equal", "<=", "le"),
    ("greater", "greater", ">", "gt"), ("greater_equal", "greater_equal", ">=", "ge"),
]:
    _nan = "true" if _sym == "!=" else "false"
    _f = (f"select((ga_key_{{S}}({{0}}) {_sym} ga_key_{{S}}({{1}})), {_nan}, "
          f"ga_isnan_{{S}}({{0}}) || ga_isnan_{{S}}({{1}}))")
    _cat = "any" if _sym in ("==", "!=") else "real numeric"
    _c = {"==": "ga_ceq_{S}({0}, {1})", "!=": "(!ga_ceq_{S}({0}, {1}))"}.get(_sym, "")
    op(_name, _uf, 2, _cat, {"f": _f, "default": f"({{0}} {_sym} {{1}})", "c": _c}, result="bool",
       dunders=(_dunder,))

# ---- logical and bitwise
op("logical_and", "logical_and", 2, "bool", "({0} && {1})")
op("logical_or", "logical_or", 2, "bool", "({0} || {1})")
op("logical_xor", "logical_xor", 2, "bool", "({0} != {1})")
op("logical_not", "logical_not", 1, "bool", "(!{0})")
op("bitwise_and", "bitwise_and", 2, "integer or boolean", {"default": "({0} & {1})", "b": "({0} && {1})"},
   dunders=("and",))
op("bitwise_or", "bitwise_or", 2, "integer or boolean", {"default": "({0} | {1})", "b": "({0} || {1})"},
   dunders=("or",))
op("bitwise_xor", "bitwise_xor", 2, "integer or boolean", {"default": "({0} ^ {1})", "b": "({0} != {1})"},
   dunders=("xor",))
op("bitwise_invert", "invert", 1, "integer or boolean", {"default": "(~{0})", "b": "(!{0})"},
   unary_dunder="invert")
op("bitwise_left_shift", "left_shift", 2, "integer", "ga_shl_{S}({0}, {1}, {BITS})", dunders=("lshift",),
   host=_shift(np.left_shift))
op("bitwise_right_shift", "right_shift", 2, "integer", "ga_shr_{S}({0}, {1}, {BITS})", dunders=("rshift",),
   host=_shift(np.right_shift))

# ---- complex parts (identities and zeros on real dtypes)
op("conj", "conjugate", 1, "numeric", {"default": "{0}", "c": "ga_conj_{S}({0})"})
op("real", None, 1, "numeric", {"default": "{0}", "c": "{0}.x"}, result="real", host=_real)
op("imag", None, 1, "numeric", {"default": "{T}(0)", "c": "{0}.y"}, result="real", host=_imag)

# ---- NumPy-only ufuncs (numpy.fmax(g, h) ... dispatch here; gpuarray.fmax too). numpy.divmod is not an
# entry: an op has one result, divmod two; it stays floor_divide and remainder (interop.ufuncs.COMPOSED).
op("fmax", "fmax", 2, "real numeric", {"f": "ga_fmax_{S}({0}, {1})", "int": "max({0}, {1})",
                                      "e": "select({1}, {0}, {0} >= {1} || ga_isnan_f32({1}))"},
   host=_fmaxmin(np.fmax))
op("fmin", "fmin", 2, "real numeric", {"f": "ga_fmin_{S}({0}, {1})", "int": "min({0}, {1})",
                                      "e": "select({1}, {0}, {0} <= {1} || ga_isnan_f32({1}))"},
   host=_fmaxmin(np.fmin))
op("heaviside", "heaviside", 2, "real floating", "ga_heaviside_{S}({0}, {1})")
op("deg2rad", "deg2rad", 1, "real floating", "({0} * ga_deg2rad_{S}())")
op("rad2deg", "rad2deg", 1, "real floating", "({0} * ga_rad2deg_{S}())")
op("float_power", "float_power", 2, "numeric", {"default": "ga_pow_{S}({0}, {1})", "c": "ga_cpow_{S}({0}, {1})"},
   result="double")
# exact ops on the bits (render/wgsl_bits.py); numpy.frexp (two results) is frexp_exponent and ldexp of x
# by minus it (interop.ufuncs.COMPOSED); cbrt within 2 ULP of NumPy (1 of the exact value). fmod of floats is
# the exact ga_fmod that remainder uses; of integers C's truncated remainder, 0 for a zero divisor (NumPy's)
op("fmod", "fmod", 2, "real numeric", "ga_fmod_{S}({0}, {1})")
op("gcd", "gcd", 2, "integer", "ga_gcd_{S}({0}, {1})")
op("lcm", "lcm", 2, "integer", "ga_lcm_{S}({0}, {1})")
op("bitwise_count", "bitwise_count", 1, "integer", "ga_popcount_{S}({0})", result="uint8")
op("ldexp", "ldexp", 2, "real numeric", "ga_scalbn_{S}({0}, {1})", result="first", host=_ldexp)
op("frexp_exponent", None, 1, "real floating", "ga_frexpe_{S}({0})", result="int32", host=_frexp_exponent,
   module=INTERNAL)
op("spacing", "spacing", 1, "real floating", {"e": "ga_spacingh_f32({0})", "default": "ga_spacing_{S}({0})"})
op("cbrt", "cbrt", 1, "real floating", "ga_cbrt_{S}({0})")

# ---- SciPy special functions: gpuarray.special.expit ... (scipy.special looks them up there); integer
# operands compute in the default float. Host versions compute float32 in float64, rounded once.
_special: list[tuple[str, str | None, int, str, Callable[..., Any]]] = [
    ("expit", None, 1, "ga_expit_{S}({0})", _wide(_expit)),
    ("logit", None, 1, "ga_logit_{S}({0})", _wide(_logit)),
    ("entr", None, 1, "ga_entr_{S}({0})", _wide(_entr)),
    ("exp2", "exp2", 1, "ga_exp2_{S}({0})", _wide(np.exp2)),
    ("exp10", None, 1, "ga_exp10_{S}({0})", _wide(_exp10)),
    ("sinc", None, 1, "ga_sinc_{S}({0})", np.sinc),               # NumPy's sinc, in the operands' dtype
    ("xlog1py", None, 2, "ga_xlog1py_{S}({0}, {1})", _wide(_xlog1py)),
    # the error function family (render/wgsl_special.py) and the gamma and Bessel functions
    # (render/wgsl_gamma.py); their host versions are SciPy's ufuncs
    *((_n, None, 1, f"ga_{_n.replace('_', '')}_{{S}}({{0}})", _wide(_scipy_special(_n))) for _n in SCIPY_DEVICE),
    # the incomplete beta and gamma functions, Student's t and the chi-square distributions
    # (render/wgsl_incomplete.py, render/wgsl_igamma.py): special values
    # (NaN included) in the helpers
    *((_n, None, _k, f"ga_{_n}_{{S}}(" + ", ".join(f"{{{_i}}}" for _i in range(_k)) + ")",
       _wide(_stdtr if _n == "stdtr" else _scipy_special(_n))) for _n, _k in SCIPY_DEVICE_N.items()),
]
# "heavy": a helper so long that a device compiler takes seconds for each kernel with it (NVIDIA's: stdtr and
# betainc 12-17 s, gammainc and chdtr 4-5 s): on a GPU each call is a kernel of its own (compiler/schedule.py)
for _name, _sufunc, _nargs, _body, _host in _special:
    op(_name, _sufunc, _nargs, "real numeric", {"f": _fl(_body) if _nargs == 1 else _body, **_fast(_name),
                                                **({"e": "ga_sinch_f32({0})"} if _name == "sinc" else {})},
       result="float",
       host=_host, module="special", extra={"transcendental": True, "heavy": _name in SCIPY_DEVICE_N})

# ---- selection
op("where", None, 3, "any", "select({2}, {1}, {0})", host=np.where)
# numpy.clip with both bounds (interop.ufuncs.COMPOSED, namespace clip): NumPy keeps x at a +-0 tie
# (clip(-0.0, 0.0, 1.0) is -0.0), which maximum/minimum do not
op("clip_ties", None, 3, "real numeric", {"f": "ga_clip_{S}({0}, {1}, {2})", "int": "min(max({0}, {1}), {2})"},
   host=_clip_ties, module=INTERNAL)

# complex prod along the last axis (namespace/statistical._prod_in_order): NumPy's reduction loop there rounds
# each part's products apart, its multiply loop with one fused multiply-add (ga_cmul); a real product rounded
# before what follows (linspace's i * step + start: NVIDIA's compiler fused it into an fma, moving a bin edge)
op("multiply_rounded", None, 2, "numeric",
   {"default": "({0} * {1})", "f": "ga_keep_{S}({0} * {1})", "c": "ga_cmulr_{S}({0}, {1})"},
   host=_multiply_rounded, module=INTERNAL)

UFUNC_TO_OP: dict[str, str] = {d.ufunc: n for n, d in OPS.items() if d.ufunc}

# A ``scan`` of op ``fold_<name>`` applies the binary op ``name`` of this table in order along its axis
# (``ufunc.accumulate`` of a non-associative ufunc: interop/adapters/folds.py, render/wgsl_scan.py)
FOLD = "fold_"


def folded(scan_op: str) -> str | None:
    """The table op a scan of op ``scan_op`` folds with, or None for the other scans.

    >>> folded("fold_subtract"), folded("sum")
    ('subtract', None)
    """
    return scan_op[len(FOLD):] if scan_op.startswith(FOLD) else None
