"""float64 math in software: ``exp``, ``log``, ``expm1``, ``log1p``, ``sinh``, ``cosh``, ``tanh``, ``log2``,
``log10``, ``exp2``, ``sin``, ``cos``, ``tan`` (wgsl_f64_trig.py), ``asin``, ``acos``, ``atan``, ``atan2``,
``asinh``, ``acosh``, ``atanh`` (wgsl_f64_inv.py) and ``pow``, ``exp10`` (wgsl_f64_pow.py) as WGSL helpers
for adapters with ``shader-f64``.

SPIR-V's GLSL built-ins (``exp``, ``log``, ...) are 32-bit only, so float64 transcendentals cannot
use them; arithmetic, ``fma``, comparisons and bit casts are exact in float64 on every adapter with
the feature. These follow fdlibm (Sun Microsystems, as in FreeBSD's msun and musl):

- ``exp``: x = k ln2 + r with k = round(x / ln2) (``ga_round_f64``, exact on the bits) and ln2 in two
  parts (the first with 32 trailing zero bits, so k * ln2_hi is exact), |r| <= ln2 / 2; exp(r) as
  1 + (r + r^2 Q(r)), Q the Taylor series to r^13 / 13! (the next term is below 5e-18); the result
  p 2^k in two power-of-two factors, each a normal number, so that a subnormal result rounds once.
- ``log``: x = 2^k m with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^54 first), f = m - 1,
  s = f / (2 + f) with one correction step (s + (f - s (2 + f)) / (2 + f), so that a division that
  is not correctly rounded costs nothing), and fdlibm's e_log.c: log(1 + f) = f - (hfsq - s (hfsq
  + R(s^2))), R of degree 7 in s^2, hfsq = f^2 / 2, plus k ln2 in two parts.
- ``expm1``: the same reduction for |x| > ln2 / 2, a Taylor series to r^15 / 15!, and
  (2^k - 1) + 2^k expm1(r). ``log1p``: a Taylor series below 2^-10; else 1 + x split into uh (its
  top 26 bits, by a mask) and ul = (1 - uh) + x, and log(uh) + log1p(ul / uh) to second order.
- ``sinh``, ``cosh``, ``tanh``: e_sinh.c, e_cosh.c and s_tanh.c on ``expm1`` and ``exp``.
- ``log2``, ``log10``: log's reduction, then k + log(m) / ln2, and e_log10.c's split of k log10(2);
  ``exp2``: x = k + r exactly, exp(r ln2) with the rounding error of r ln2 carried.
- ``sin``, ``cos``, ``tan`` (wgsl_f64_trig.py): fdlibm's e_rem_pio2.c reduction x = n pi/2 + (y0 + y1)
  (below 2^20 pi/2 with pi/2 in three 33-bit parts, the second and third used where fdlibm's check on
  the cancellation asks for them; above, Payne-Hanek as k_rem_pio2.c with the 24-bit chunks of 2/pi),
  then k_sin.c / k_cos.c / k_tan.c on (y0, y1), chosen and signed by n mod 4.
- the inverse trigonometric and hyperbolic functions (wgsl_f64_inv.py) and ``pow`` (wgsl_f64_pow.py):
  e_asin.c, e_acos.c, s_atan.c, e_atan2.c, s_asinh.c, e_acosh.c, e_atanh.c and e_pow.c, 1 ULP from NumPy
  on lavapipe and the H200 (asinh, acosh, atanh: correctly rounded on the samples, 2 ULP from glibc's on
  lavapipe; tests/test_mathlib_f64_inv.py); wgsl_lib's / wgsl_xlib's ``sinc``, ``entr``, ``xlog1py``,
  ``exp10`` and ``float_power`` on top of them (1-2 ULP).

Largest errors against NumPy (tests/test_mathlib_f64.py, lavapipe and the H200): exp, exp2, log and
log1p 1 ULP, log2, log10, expm1, sinh and cosh 2, tanh and ``expit`` (its own version below) 3; sin, cos
and tan 1 (lavapipe) over the whole range up to 1.8e308, and within 1 ULP of the correctly rounded value
where NumPy (glibc) is not (cos and tan of 5.319372648326541e255: 8 and 14 ULP off there); special values
as NumPy's, and log2 / log10 / exp2 exact where NumPy's are (powers of two and ten).
wgsl_lib's generic ``logit`` and ``logaddexp`` use these. Constants are written as their bits
(``bitcast<f64>(0x...lu)``), so no literal parsing can change them.

``F64_MATH`` maps helper names to templates (``ga_<name>_f64``); ``wgsl_lib`` uses them for float64
in place of the generic ``FLT`` ones.
"""

from __future__ import annotations

import math

from ..core.ops import SCIPY_DEVICE, SCIPY_DEVICE_N
from .wgsl_f64_inv import F64_INV
from .wgsl_f64_pow import F64_POW
from .wgsl_f64_trig import F64_TRIG, _c  # _c: a float64 constant as its bits

LN2_HI = 6.93147180369123816490e-01     # 0x3fe62e42fee00000: 32 trailing zero bits
LN2_LO = 1.90821492927058770002e-10     # 0x3dea39ef35793c76
INV_LN2 = 1.44269504088896338700e+00
EXP_MAX = 709.782712893383973096        # above: +inf
EXP_MIN = -745.13321910194110842        # below: +0
LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
      1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01)

# op-table names computed on the device in float64 with these helpers (logit, logaddexp, entr, xlog1py
# and sinc: the generic versions of wgsl_lib / wgsl_xlib on top of them; SciPy's erf ... i1e: those of
# wgsl_special / wgsl_gamma; sin, cos, tan: wgsl_f64_trig.py;
# the inverse trigonometric and hyperbolic functions: wgsl_f64_inv.py; pow, float_power, exp10:
# wgsl_f64_pow.py); the other float64 transcendentals (providers/wgpu_kinds.py F64_HOST_OPS; none now)
# run on the host
F64_DEVICE_OPS = frozenset({"exp", "exp2", "log", "log2", "log10", "expm1", "log1p", "sinh", "cosh",
                            "tanh", "expit", "logit", "logaddexp", "sin", "cos", "tan",
                            "asin", "acos", "atan", "atan2", "asinh", "acosh", "atanh",
                            "pow", "float_power", "exp10", "entr", "xlog1py", "sinc", *SCIPY_DEVICE,
                            *SCIPY_DEVICE_N})

F64_MATH: dict[str, str] = {}

F64_MATH["pow2i"] = """fn ga_pow2i_f64(k: i32) -> f64 {
  // 2^k for k in [-1022, 1023]
  return bitcast<f64>(u64(u32(k + 1023)) << 52u);
}"""

_horner = _c(1.0 / math.factorial(13))
for _n in range(12, 1, -1):
    _horner = f"({_horner} * r + {_c(1.0 / math.factorial(_n))})"

_SHIFT = _c(1.5 * 2.0 ** 52)
F64_MATH["rint"] = f"""fn ga_rint_f64(t: f64) -> f64 {{
  // t - 1.5 2^52 for t = y + 1.5 2^52 (y rounded to an integer, half to even, by that addition; |y| < 2^51):
  // e_rem_pio2.c's toint, as wgsl_f32's ga_rint. The mask (t > 0, so it changes nothing) keeps compilers
  // from folding (y + c) - c to the unrounded y. In place of ga_round_f64 (exact on the bits: some 25
  // 64-bit integer operations) where the argument is bounded (exp, expm1, sin / cos / tan's medium
  // reduction; results bit-identical on lavapipe): H200, 2^26 values, wall ms: sin 0.448 -> 0.377,
  // tanh 0.443 -> 0.388, chain8 1.101 -> 0.849. t's exponent bits (t in [2^52, 2^53)) or-ed in as well:
  // the sign mask alone is provably a no-op for a t known positive (see wgsl_f32's ga_rint)
  return bitcast<f64>((bitcast<u64>(t) & 0x7ffffffffffffffflu) | 0x4330000000000000lu) - {_SHIFT};
}}"""

F64_MATH["redln2"] = f"""fn ga_redln2_f64(x: f64, k: f64) -> f64 {{
  // x - k ln2 with ln2 in two parts, as two explicit fmas: written as (x - k hi) - k lo, a compiler
  // may merge the products into x - k (hi + lo), which rounds k ln2 (about 200 ULP of exp(x) at
  // |x| ~ 700, seen on the H200 where exp was inlined into sinh); the first fma is exact either way
  return fma(-k, {_c(LN2_LO)}, fma(-k, {_c(LN2_HI)}, x));
}}"""

F64_MATH["expscaled"] = f"""fn ga_expscaled_f64(x: f64, s: i32) -> f64 {{
  // exp(x) 2^s for x in [-746, 711] and a finite result (s = -1: sinh and cosh near overflow, where
  // exp(x) itself overflows): p 2^(k + s), k + s in [-1076, 1024], in two factors of at least 2^-538,
  // each a normal number, so that only the last product rounds (once, for a subnormal result)
  let k = ga_rint_f64(x * {_c(INV_LN2)} + {_SHIFT});
  let r = ga_redln2_f64(x, k);
  let q = {_horner};
  let p = f64(1) + (r + r * r * q);
  let ki = i32(k) + s;
  let h = ki / 2;
  return (p * ga_pow2i_f64(h)) * ga_pow2i_f64(ki - h);
}}"""

F64_MATH["exp"] = f"""fn ga_exp_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  if (x > {_c(EXP_MAX)}) {{ return ga_inf_f64(); }}
  if (x < {_c(EXP_MIN)}) {{ return f64(0); }}
  return ga_expscaled_f64(x, 0);
}}"""

F64_MATH["log"] = f"""fn ga_log_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  if (x < f64(0)) {{ return ga_nan_f64(); }}
  if (x == f64(0)) {{ return -ga_inf_f64(); }}
  if (ga_isinf_f64(x)) {{ return x; }}
  var v = x;
  var k = 0;
  if (v < {_c(2.0 ** -1022)}) {{ v = v * {_c(2.0 ** 54)}; k = -54; }}
  let b = bitcast<u64>(v);
  k = k + i32(u32(b >> 52u)) - 1023;
  var m = bitcast<f64>((b & 0x000fffffffffffffflu) | 0x3ff0000000000000lu);
  if (m > {_c(math.sqrt(2.0))}) {{ m = m * {_c(0.5)}; k = k + 1; }}
  let f = m - f64(1);
  let d = f64(2) + f;
  var s = f / d;
  s = s + fma(-s, d, f) / d;
  let dk = f64(k);
  let z = s * s;
  let w = z * z;
  let t1 = w * ({_c(LG[1])} + w * ({_c(LG[3])} + w * {_c(LG[5])}));
  let t2 = z * ({_c(LG[0])} + w * ({_c(LG[2])} + w * ({_c(LG[4])} + w * {_c(LG[6])})));
  let hfsq = {_c(0.5)} * f * f;
  // the two parts of k ln2 as explicit fmas, so that no compiler merges them (see ga_redln2)
  return fma(dk, {_c(LN2_HI)}, -((hfsq - fma(dk, {_c(LN2_LO)}, s * (hfsq + (t2 + t1)))) - f));
}}"""

F64_MATH["log1p"] = f"""fn ga_log1p_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  if (x == f64(-1)) {{ return -ga_inf_f64(); }}
  if (x < f64(-1)) {{ return ga_nan_f64(); }}
  if (ga_isinf_f64(x)) {{ return x; }}
  if (abs(x) < {_c(2.0 ** -10)}) {{
    // Taylor series to x^8 (the next term is below 2^-80 x)
    return x * (f64(1) + x * ({_c(-1 / 2)} + x * ({_c(1 / 3)} + x * ({_c(-1 / 4)} + x * ({_c(1 / 5)}
      + x * ({_c(-1 / 6)} + x * ({_c(1 / 7)} + x * {_c(-1 / 8)})))))));
  }}
  if (x < {_c(-0.5)}) {{ return ga_log_f64(f64(1) + x); }}     // 1 + x exact (Sterbenz)
  if (x > {_c(2.0 ** 53)}) {{ return ga_log_f64(x) + f64(1) / x; }}
  // 1 + x = uh + ul: uh keeps the top 26 bits of the rounded sum, so 1 - uh is exact and ul carries
  // the rest (the mask, not a float identity, keeps compilers from folding (1 + x) - 1 to x; ga_keep keeps
  // NVIDIA's from regrouping (1 - uh) + x as (1 + x) - uh, which lost ul: 123 ULP in log1p(-v), v = 2 / 578,
  // on the H200); log(1 + x) = log(uh) + log1p(d), d = ul / uh < 2^-26
  let uh = bitcast<f64>(bitcast<u64>(f64(1) + x) & 0xfffffffffc000000lu);
  let ul = ga_keep_f64(f64(1) - uh) + x;
  let d = ul / uh;
  return ga_log_f64(uh) + (d - {_c(0.5)} * d * d);
}}"""

_expm1_horner = _c(1.0 / math.factorial(15))
for _n in range(14, 1, -1):
    _expm1_horner = f"({_expm1_horner} * r + {_c(1.0 / math.factorial(_n))})"

F64_MATH["expm1"] = f"""fn ga_expm1_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  if (x == f64(0)) {{ return x; }}
  if (x > {_c(EXP_MAX)}) {{ return ga_inf_f64(); }}
  if (x < {_c(-38.5)}) {{ return f64(-1); }}
  // without branches below ln2 / 2 (k = 0: r = x exactly, and (2^0 - 1) + 2^0 e = e exactly), so that
  // a warp whose values lie on both sides runs one path (H200: tanh of 2^26 values in [-30, 30] 0.60 -> 0.42 GPU ms)
  let k = select(f64(0), ga_rint_f64(x * {_c(INV_LN2)} + {_SHIFT}), abs(x) > {_c(math.log(2.0) / 2)});
  let r = ga_redln2_f64(x, k);
  // expm1(r), |r| <= ln2 / 2: r + r^2 Q(r), Q the Taylor series to r^15 / 15!
  let e = r + r * r * {_expm1_horner};
  let ki = i32(k);
  if (ki > 56) {{
    let h = ki / 2;
    return ((f64(1) + e) * ga_pow2i_f64(h)) * ga_pow2i_f64(ki - h) - f64(1);
  }}
  let t = ga_pow2i_f64(ki);
  return (t - f64(1)) + t * e;
}}"""

# sinh, cosh, tanh: fdlibm's e_sinh.c, e_cosh.c, s_tanh.c on expm1 and exp (the generic versions in
# wgsl_lib.py square exp(|x| / 2) and were 4-5 ULP off in float64); above 22, exp(|x|) / 2 as one
# scaled exp (fdlibm's (h w) w with w = exp(|x| / 2) overflowed on the H200 between 709.78 and 710.48)
_OVF = 710.4758600739439                 # above: sinh and cosh overflow
F64_MATH["sinh"] = f"""fn ga_sinh_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  if (ga_isinf_f64(x)) {{ return x; }}
  let a = abs(x);
  if (a < {_c(2.0 ** -28)}) {{ return x; }}
  let h = ga_copysign_f64({_c(0.5)}, x);
  if (a < f64(22)) {{
    let t = ga_expm1_f64(a);
    if (a < f64(1)) {{ return h * (f64(2) * t - t * t / (t + f64(1))); }}
    return h * (t + t / (t + f64(1)));
  }}
  if (a <= {_c(_OVF)}) {{ return ga_copysign_f64(ga_expscaled_f64(a, -1), x); }}     // exp(a) / 2
  return ga_copysign_f64(ga_inf_f64(), x);
}}"""
F64_MATH["cosh"] = f"""fn ga_cosh_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  let a = abs(x);
  if (a < {_c(math.log(2.0) / 2)}) {{
    let t = ga_expm1_f64(a);
    let w = f64(1) + t;
    return f64(1) + (t * t) / (w + w);
  }}
  if (a < f64(22)) {{
    let t = ga_exp_f64(a);
    return {_c(0.5)} * t + {_c(0.5)} / t;
  }}
  if (a <= {_c(_OVF)}) {{ return ga_expscaled_f64(a, -1); }}       // exp(a) / 2
  return ga_inf_f64();
}}"""
F64_MATH["tanh"] = f"""fn ga_tanh_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  let a = abs(x);
  if (a < {_c(2.0 ** -28)}) {{ return x; }}
  // s_tanh.c's two formulas with one expm1 and one division (no branch between them: both sides in
  // one warp ran both); 1 from 22 on (t may be inf there: 2 / inf = 0)
  let small = a < f64(1);
  let t = ga_expm1_f64(select(f64(2) * a, f64(-2) * a, small));
  let q = select(f64(2), -t, small) / (t + f64(2));
  let z = select(select(f64(1) - q, q, small), f64(1), a >= f64(22));
  return ga_copysign_f64(z, x);
}}"""

# expit as wgsl_xlib's, with e * (1 / (1 + e)) for x < 0: NVIDIA's float64 division (580) loses
# accuracy for numerators near the bottom of the normal range (e / (1 + e) was 211 ULP off at x = -702)
F64_MATH["expit"] = """fn ga_expit_f64(x: f64) -> f64 {
  if (ga_isnan_f64(x)) { return x; }
  if (x >= f64(0)) { return f64(1) / (f64(1) + ga_exp_f64(-x)); }
  let e = ga_exp_f64(x);
  return e * (f64(1) / (f64(1) + e));
}"""

# log2 and log10 (fdlibm e_log10.c's split): x = 2^k m as in log; log(m) = f - (hfsq - s (hfsq + R));
# then k + log(m) / ln2, and k log10(2) in two parts (the first with trailing zero bits, so k times it
# is exact) plus log(m) / ln10. A power of two gives k exactly in log2.
F64_MATH["logm"] = f"""fn ga_logm_f64(x: f64) -> vec2<f64> {{
  // (log(m), k) for x > 0 finite, x = 2^k m, m in [sqrt(1/2), sqrt(2))
  var v = x;
  var k = 0;
  if (v < {_c(2.0 ** -1022)}) {{ v = v * {_c(2.0 ** 54)}; k = -54; }}
  let b = bitcast<u64>(v);
  k = k + i32(u32(b >> 52u)) - 1023;
  var m = bitcast<f64>((b & 0x000fffffffffffffflu) | 0x3ff0000000000000lu);
  if (m > {_c(math.sqrt(2.0))}) {{ m = m * {_c(0.5)}; k = k + 1; }}
  let f = m - f64(1);
  let d = f64(2) + f;
  var s = f / d;
  s = s + fma(-s, d, f) / d;
  let z = s * s;
  let w = z * z;
  let t1 = w * ({_c(LG[1])} + w * ({_c(LG[3])} + w * {_c(LG[5])}));
  let t2 = z * ({_c(LG[0])} + w * ({_c(LG[2])} + w * ({_c(LG[4])} + w * {_c(LG[6])})));
  let hfsq = {_c(0.5)} * f * f;
  return vec2<f64>(f - (hfsq - s * (hfsq + (t2 + t1))), f64(k));
}}"""
_LOG_SPECIAL64 = """  if (ga_isnan_f64(x)) { return x; }
  if (x < f64(0)) { return ga_nan_f64(); }
  if (x == f64(0)) { return -ga_inf_f64(); }
  if (ga_isinf_f64(x)) { return x; }
  let lk = ga_logm_f64(x);
"""
F64_MATH["log2"] = "fn ga_log2_f64(x: f64) -> f64 {\n" + _LOG_SPECIAL64 + f"""
  // log(m) / ln2 with 1 / ln2 in two parts
  return lk.y + fma(lk.x, {_c(INV_LN2)}, lk.x * {_c(2.0355273740931033e-17)});
}}"""
F64_MATH["log10"] = "fn ga_log10_f64(x: f64) -> f64 {\n" + _LOG_SPECIAL64 + f"""
  let z = fma(lk.y, {_c(3.69423907715893078616e-13)}, lk.x * {_c(4.34294481903251816668e-01)});
  let r = fma(lk.y, {_c(3.01029995663611771306e-01)}, z);
  // the double nearest 10^n gives n exactly, as NumPy's correctly rounded log10 does (floor(log10(x))
  // counts digits): for |n| <= 22 tested exactly (10^n is exact, 1 / 10^n the double nearest 10^-n);
  // beyond, where log10 of the doubles around 10^n rounds to n, r within 2 ULP of n is taken as n
  let n = ga_round_f64(r);
  if (abs(r - n) < {_c(1e-12)}) {{
    if (abs(n) <= f64(22)) {{
      var p = f64(1);
      for (var i = 0; i < i32(abs(n)); i = i + 1) {{ p = p * f64(10); }}
      if (x == select(p, f64(1) / p, n < f64(0))) {{ return n; }}
    }} else {{
      let an = abs(n);
      if (abs(r - n) <= f64(2) * (bitcast<f64>(bitcast<u64>(an) + 1lu) - an)) {{ return n; }}
    }}
  }}
  return r;
}}"""
# exp2: x = k + r (exact, |r| <= 1/2), 2^r = exp(r ln2) with r ln2 = t + tl (tl the rounding error of
# t, from an fma, plus r times the low part of ln2), exp(t) 2^k (ga_expscaled) times (1 + tl)
F64_MATH["exp2"] = f"""fn ga_exp2_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  if (x >= f64(1024)) {{ return ga_inf_f64(); }}
  if (x < f64(-1075)) {{ return f64(0); }}
  let k = ga_round_f64(x);
  let r = x - k;
  let t = r * {_c(math.log(2.0))};
  let tl = fma(r, {_c(math.log(2.0))}, -t) + r * {_c(2.3190468138462996e-17)};
  let e = ga_expscaled_f64(t, i32(k));
  return fma(e, tl, e);
}}"""

# float32 -> float64 by the bits where the float32 is zero or subnormal: a driver that flushes float32
# subnormals (the H200's) converted 1.4e-45 to 0.0 (float_power(-1, 1.4e-45) was 1, NumPy's NaN);
# the mantissa times 2^-149 is exact in float64
F64_MATH["fromf32"] = """fn ga_fromf32_f64(x: f32) -> f64 {
  let b = bitcast<u32>(x);
  if ((b & 0x7f800000u) != 0u) { return f64(x); }
  let m = f64(b & 0x7fffffu) * bitcast<f64>(0x36a0000000000000lu);
  return select(m, -m, (b >> 31u) != 0u);
}"""

# sin, cos, tan with their range reduction and kernels: wgsl_f64_trig.py
F64_MATH.update(F64_TRIG)
# asin, acos, atan, atan2, asinh, acosh, atanh: wgsl_f64_inv.py; pow and exp10: wgsl_f64_pow.py
F64_MATH.update(F64_INV)
F64_MATH.update(F64_POW)
