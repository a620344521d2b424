"""float64 math in software: ``exp`` and ``log`` as WGSL helpers for adapters with ``shader-f64``.

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

Both within 1 ULP of NumPy in a NumPy emulation of these steps over 4 million arguments each (the
exponent ranges, [-1, 1], [0.5, 2], around 1, subnormals); special values as NumPy's. Constants
are written as their bits (``bitcast<f64>(0x...lu)``), so no literal parsing can change them.

``F64_MATH`` maps helper names to templates (``ga_<name>_f64``); ``wgsl_lib`` uses them for float64
in place of the generic ``FLT`` ones.
"""

from __future__ import annotations

import math
import struct


def _c(v: float) -> str:
    """A float64 constant as its bits."""
    return f"bitcast<f64>({struct.unpack('<Q', struct.pack('<d', v))[0]:#018x}lu)"


LN2_HI = 6.93147180369123816490e-01     # 0x3fe62e42fee00000: 32 trailing zero bits
LN2_LO = 1.90821492927058770002e-10     # 0x3dea39ef35793c76
INV_LN2 = 1.44269504088896338700e+00
EXP_MAX = 709.782712893383973096        # above: +inf
EXP_MIN = -745.13321910194110842        # below: +0
LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
      1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01)

F64_MATH: dict[str, str] = {}

F64_MATH["pow2i"] = """fn ga_pow2i_f64(k: i32) -> f64 {
  // 2^k for k in [-1022, 1023]
  return bitcast<f64>(u64(u32(k + 1023)) << 52u);
}"""

_horner = _c(1.0 / math.factorial(13))
for _n in range(12, 1, -1):
    _horner = f"({_horner} * r + {_c(1.0 / math.factorial(_n))})"

F64_MATH["exp"] = f"""fn ga_exp_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  if (x > {_c(EXP_MAX)}) {{ return ga_inf_f64(); }}
  if (x < {_c(EXP_MIN)}) {{ return f64(0); }}
  let k = ga_round_f64(x * {_c(INV_LN2)});
  let r = (x - k * {_c(LN2_HI)}) - k * {_c(LN2_LO)};
  let q = {_horner};
  let p = f64(1) + (r + r * r * q);
  // p 2^k, k in [-1075, 1024]: two factors of at least 2^-538, so only the last product rounds
  let ki = i32(k);
  let h = ki / 2;
  return (p * ga_pow2i_f64(h)) * ga_pow2i_f64(ki - h);
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
  return dk * {_c(LN2_HI)} - ((hfsq - (s * (hfsq + (t2 + t1)) + dk * {_c(LN2_LO)})) - f);
}}"""
