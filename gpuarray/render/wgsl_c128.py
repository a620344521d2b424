"""complex128 transcendentals as WGSL helpers (``ga_<name>_c128``) on the float64 library (``wgsl_f64*.py``),
for adapters with ``shader-f64``: exp, expm1, log, log1p, log2, log10, sin, cos, tan, sinh, cosh, tanh,
asin, acos, atan, asinh, acosh, atanh and pow (``float_power`` too).

They are the complex64 algorithms of ``wgsl_clib.C64`` (FreeBSD msun's ``cexp``/``csinh``/``ccosh``/
``ctanh``, ``catrig.c``, NumPy's ``cpow`` and ``expm1``, C99 Annex G special values) with the double
versions' constants: each C64 helper is ported by replacing its float32 constants (listed per helper in
``_PORTS``, every one required to occur) and then its types and suffixes (``f32`` -> ``f64``, ``c64`` ->
``c128``). Three helpers differ in structure and are written here: ``cexpscale`` (the ``e^x`` scaling of
exp, sinh and cosh near and past overflow, on ``ga_redln2_f64`` / ``ga_exp_f64``), ``ldexp`` (``x 2^n``
with one rounding, n up to +-2300) and ``catrecip`` (catrig.c's ``real_part_reciprocal`` on the 11-bit
exponents). Constants are written as their bits (``bitcast<f64>(0x...lu)``).

``C128_DEVICE_OPS``: the op-table names whose complex128 kernels use these (providers/wgpu_kinds.py).
Largest errors against NumPy: docs/accuracy.md (tests/test_complex128_device.py).
"""

from __future__ import annotations

import math
import re

from .wgsl_clib import C64
from .wgsl_f64_trig import _c

C128_DEVICE_OPS = frozenset({
    "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh",
    "asin", "acos", "atan", "asinh", "acosh", "atanh", "pow", "float_power",
})

EPS = 2.0 ** -52
LN2 = math.log(2)
_ONE = "select(f64(1), f64(-1), "
_RECIP_EPS = "4503599627370496.0"                     # 1 / DBL_EPSILON = 2^52, exact
_SQRT_6_EPS_4 = _c(3.6500241499888571e-8 / 4)         # catrig.c SQRT_6_EPSILON / 4
_SQRT_3_EPS_2 = _c(2.5809568279517849e-8 / 2)         # SQRT_3_EPSILON / 2
_SQRT_MIN = _c(2.0 ** -511)

# per C64 helper: (float32 text, float64 text) replacements, applied before the type rename
_PORTS: dict[str, list[tuple[str, str]]] = {
    "cexp": [("abs(x) < 80.0", "abs(x) < 700.0")],
    "cexpm1": [("x > 80.0", "x > 700.0")],
    "clogabs": [], "clog": [], "clog1p": [],
    "clog2": [("1.44269504088896341", _c(1 / LN2))],
    "clog10": [("0.434294481903251828", _c(1 / math.log(10)))],
    "csinh": [("ax < 9.0", "ax < 22.0"), ("88.72283935546875", "709.7822265625"), ("select(1.0, -1.0, ", _ONE)],
    "ccosh": [("ax < 9.0", "ax < 22.0"), ("88.72283935546875", "709.7822265625"), ("select(1.0, -1.0, ", _ONE)],
    "ctanh": [("ax >= 11.0", "ax >= 22.0")],
    "csin": [], "ccos": [], "ctan": [], "cpow": [],
    "cmulg": [("select(0.0, 1.0, ", "select(f64(0), f64(1), ")],
    "cathalf": [],
    "catwork": [("1.1920928955078125e-7", _c(EPS)), ("bitcast<f32>(0x25000000u)", _c(EPS * EPS / 128)),
                ("bitcast<f32>(0x21000000u)", _c(2.0 ** -509)), ("bitcast<f32>(0x57800000u)", _c(4 / EPS / EPS))],
    "catlog": [("bitcast<f32>(0x7effffffu)", _c(1.7976931348623157e308 / 2)), ("2.7182818285", _c(math.e)),
               ("bitcast<f32>(0x5e000000u)", _c(2.0 ** 509)), ("bitcast<f32>(0x20000000u)", _SQRT_MIN)],
    "casinh": [("8388608.0", _RECIP_EPS), ("0.693147180559945309", _c(LN2)), ("2.11431983e-4", _SQRT_6_EPS_4)],
    "casin": [],
    "cacos": [("1.57079637050628662", _c(math.pi / 2)), ("8388608.0", _RECIP_EPS),
              ("0.693147180559945309", _c(LN2)), ("2.11431983e-4", _SQRT_6_EPS_4),
              ("1.5707962513", _c(1.5707963267948966)), ("7.5497899549e-8", _c(6.1232339957367659e-17)),
              ("select(1.0, -1.0, ", _ONE)],
    "cacosh": [],
    "catanh": [("1.57079637050628662", _c(math.pi / 2)), ("1.1920928955078125e-7", _c(EPS)),
               ("8388608.0", _RECIP_EPS), ("2.99009978e-4", _SQRT_3_EPS_2), ("0.693147180559945309", _c(LN2)),
               ("bitcast<f32>(0x20000000u)", _SQRT_MIN)],
    "catan": [],
}

# float32 leftovers a port must not keep: 32-bit bit patterns, literals that would be f32 in a let or select
_LEFT = re.compile(r"0x[0-9a-f]{8}u\)|let \w+ = -?[0-9.]+(e-?\d+)?;|select\(-?[0-9.]+, |e-\d+\b")


def _port(name: str, subs: list[tuple[str, str]]) -> str:
    """The complex128 version of ``C64[name]``."""
    text = C64[name]
    for old, new in subs:
        if old not in text:
            raise ValueError(f"{name}: {old!r} not in the complex64 helper")
        text = text.replace(old, new)
    text = text.replace("_c64", "_c128").replace("f32", "f64")
    left = _LEFT.search(text)
    if left:
        raise ValueError(f"{name}: float32 constant {left.group(0)!r} left in the port")
    return text


C128: dict[str, str] = {name: _port(name, subs) for name, subs in _PORTS.items()}

C128["cexpscale"] = f"""fn ga_cexpscale_c128(x: f64, y: f64, expt: i32) -> vec2<f64> {{
  // e^x (cos y, sin y) 2^expt for |x| large: e^x = e^r 2^k (r = x - k ln2 in two parts), the magnitudes
  // scaled by ga_ldexp_c128 (one rounding, no overflow on the way), the signs copied after; |x| clamped at
  // 1500, past which every nonzero result overflows or underflows anyway
  let xc = clamp(x, f64(-1500), f64(1500));
  let k = ga_round_f64(xc * {_c(1 / LN2)});
  let e = ga_exp_f64(ga_redln2_f64(xc, k));
  let ki = i32(k) + expt;
  let c = ga_cos_f64(y);
  let s = ga_sin_f64(y);
  return vec2<f64>(ga_copysign_f64(ga_scaled_c128(e, abs(c), ki), c),
                   ga_copysign_f64(ga_scaled_c128(e, abs(s), ki), s));
}}"""
C128["scaled"] = f"""fn ga_scaled_c128(e: f64, a: f64, k: i32) -> f64 {{
  // e a 2^k, e in [0.7, 1.5], a in [0, 1]: a tiny a is scaled up by 2^128 first so that e a is normal
  if (a < {_c(2.0 ** -900)}) {{ return ga_ldexp_c128(e * (a * {_c(2.0 ** 128)}), k - 128); }}
  return ga_ldexp_c128(e * a, k);
}}"""
C128["ldexp"] = f"""fn ga_ldexp_c128(x: f64, n: i32) -> f64 {{
  // x 2^n for a normal x (or 0) and any n: the exponent field set directly where the result is normal, else
  // one multiplication by 2^-54 that rounds a subnormal result once
  if (x == f64(0)) {{ return x; }}
  let b = bitcast<u64>(x);
  let ne = i32((b >> 52u) & 0x7fflu) + n;
  let m = b & 0x800ffffffffffffflu;
  if (ne >= 2047) {{ return ga_copysign_f64(ga_inf_f64(), x); }}
  if (ne >= 1) {{ return bitcast<f64>(m | (u64(ne) << 52u)); }}
  if (ne < -54) {{ return ga_copysign_f64(f64(0), x); }}
  return bitcast<f64>(m | (u64(ne + 54) << 52u)) * {_c(2.0 ** -54)};
}}"""
C128["catrecip"] = """fn ga_catrecip_c128(x: f64, y: f64) -> f64 {
  // Re(1 / (x + iy)) without spurious underflow (catrig.c real_part_reciprocal, on the exponent fields)
  let ix = i32((bitcast<u64>(x) >> 52u) & 0x7fflu);
  let iy = i32((bitcast<u64>(y) >> 52u) & 0x7fflu);
  if (ix - iy >= 27 || ga_isinf_f64(x)) { return 1.0 / x; }
  if (iy - ix >= 27) { return x / y / y; }
  if (ix <= 1023 + 512 - 27) { return x / (x * x + y * y); }
  let scale = bitcast<f64>(u64(2047 - ix) << 52u);
  let xs = x * scale;
  let ys = y * scale;
  return xs / (xs * xs + ys * ys) * scale;
}"""
C128["csign"] = """fn ga_csign_c128(z: vec2<f64>) -> vec2<f64> {
  // z / |z| with NumPy's special values: an infinite |z| gives +-1 for an infinite real part, else +-i
  // (also where |z| overflows with both parts finite), NaN for two infinite parts
  let a = ga_hypot_f64(z.x, z.y);
  if (ga_isnan_f64(a)) { return vec2<f64>(ga_nan_f64(), ga_nan_f64()); }
  if (ga_isinf_f64(a)) {
    if (ga_isinf_f64(z.x)) {
      if (ga_isinf_f64(z.y)) { return vec2<f64>(ga_nan_f64(), ga_nan_f64()); }
      return vec2<f64>(select(f64(-1), f64(1), z.x > 0.0), 0.0);
    }
    return vec2<f64>(0.0, select(f64(-1), f64(1), z.y > 0.0));
  }
  if (a == 0.0) { return vec2<f64>(0.0, 0.0); }
  return vec2<f64>(z.x / a, z.y / a);
}"""
