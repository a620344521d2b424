"""WGSL helpers of the NumPy-only and SciPy-special ops of the op table (``fmax``, ``heaviside``,
``deg2rad``, ``expit``, ``logit``, ``sinc`` ...), merged into ``wgsl_lib``'s tables.

``FLT_X`` entries serve every float type and ``F32_X`` replaces them for float32, as ``FLT`` and
``F32`` do in ``wgsl_lib.py``. Constants are written as bit patterns: a WGSL compiler may turn a
decimal literal into either neighbouring float, and NumPy's constants are exact roundings
(``deg2rad`` multiplies by ``float32(pi) / float32(180)`` rounded to float32, as NumPy's float32
loop does). The FLT versions of the transcendental ones serve float64 too, on the float64 library
(``wgsl_f64*.py``: ``entr`` on its log, ``xlog1py`` on log1p, ``sinc`` on sin, ``exp10`` is its pow).
"""

from __future__ import annotations

FLT_X: dict[str, str] = {}   # every float type (float64 bit patterns where a constant differs)
F32_X: dict[str, str] = {}   # float32 versions

# NumPy's npy_fmax / npy_fmin: a where a >= b (<=) or b is NaN, else b. NaN is ignored unless both
# are NaN; a tie of zeros gives the first operand (NumPy's own SIMD loops differ on that tie).
for _name, _cmp in (("fmax", ">="), ("fmin", "<=")):
    FLT_X[_name] = f"""fn ga_{_name}_{{S}}(a: {{T}}, b: {{T}}) -> {{T}} {{
  if (ga_isnan_{{S}}(b)) {{ return a; }}
  if (ga_isnan_{{S}}(a)) {{ return b; }}
  return select(b, a, ga_key_{{S}}(a) {_cmp} ga_key_{{S}}(b));     // keys: subnormals apart from 0 (NVIDIA)
}}"""

# heaviside(x, h0): NaN for NaN, h0 at +-0, 0 below, 1 above (signs read from the key: subnormals count)
FLT_X["heaviside"] = """fn ga_heaviside_{S}(x: {T}, h0: {T}) -> {T} {
  if (ga_isnan_{S}(x)) { return x; }
  let k = ga_key_{S}(x);
  if (k == {I}(0)) { return h0; }
  return select({T}(1), {T}(0), k < {I}(0));
}"""

# Constants: pi, pi / 180 and 180 / pi, each rounded once to the type (NumPy's deg2rad / rad2deg).
for _name, _b32, _b64 in (("pi", "0x40490fdbu", "0x400921fb54442d18lu"),
                          ("deg2rad", "0x3c8efa35u", "0x3f91df46a2529d39lu"),
                          ("rad2deg", "0x42652ee0u", "0x404ca5dc1a63c1f8lu")):
    FLT_X[_name] = f"fn ga_{_name}_{{S}}() -> {{T}} {{ return bitcast<{{T}}>({_b64}); }}"
    F32_X[_name] = f"fn ga_{_name}_f32() -> f32 {{ return bitcast<f32>({_b32}); }}"

# expit(x) = 1 / (1 + exp(-x)); for x < 0 as e / (1 + e), e = exp(x), so that the result keeps
# its relative accuracy down to the subnormals (float32: within 3 ULP)
FLT_X["expit"] = """fn ga_expit_{S}(x: {T}) -> {T} {
  if (x >= {T}(0)) { return ga_div_{S}({T}(1), {T}(1) + ga_exp_{S}(-x)); }
  let e = ga_exp_{S}(x);
  return ga_div_{S}(e, {T}(1) + e);
}"""

# logit(x) = log(x / (1 - x)); near 1/2 as log1p(s) - log1p(-s), s = 2 (x - 1/2) (exact), which
# keeps the relative accuracy where the result is near 0 (SciPy's formula)
FLT_X["logit"] = """fn ga_logit_{S}(x: {T}) -> {T} {
  if (x < {T}(0) || x > {T}(1)) { return ga_nan_{S}(); }
  if (x == {T}(1)) { return ga_inf_{S}(); }
  if (x >= {T}(0.3) && x <= {T}(0.65)) {
    let s = {T}(2) * (x - {T}(0.5));
    return ga_log1p_{S}(s) - ga_log1p_{S}(-s);
  }
  return ga_log_{S}(ga_div_{S}(x, {T}(1) - x));
}"""

# entr(x) = -x log x for x > 0, 0 at 0, -inf below
FLT_X["entr"] = """fn ga_entr_{S}(x: {T}) -> {T} {
  if (x < {T}(0) || ga_isinf_{S}(x)) { return -ga_inf_{S}(); }
  if (x == {T}(0)) { return {T}(0); }
  return -x * ga_log_{S}(x);
}"""

# xlog1py(x, y) = x log1p(y), 0 where x == 0 unless y is NaN
FLT_X["xlog1py"] = """fn ga_xlog1py_{S}(x: {T}, y: {T}) -> {T} {
  if (ga_isnan_{S}(x)) { return x; }
  if (ga_isnan_{S}(y)) { return y; }
  if (x == {T}(0)) { return {T}(0); }
  return x * ga_log1p_{S}(y);
}"""

FLT_X["exp2"] = "fn ga_exp2_{S}(x: {T}) -> {T} { return ga_pow_{S}({T}(2), x); }"
FLT_X["exp10"] = "fn ga_exp10_{S}(x: {T}) -> {T} { return ga_pow_{S}({T}(10), x); }"

# NumPy's sinc: y = pi x; sin(y) / y, 1 where y is 0
# float16 sinc as NumPy computes it in float16: pi * x rounded (pi as float16, 3.140625), a zero replaced by
# float16's eps, then sin(y) / y, each rounded to float16
F32_X["sinch"] = """fn ga_sinch_f32(x: f32) -> f32 {
  let px = ga_half_f32(3.140625 * x);
  let y = select(px, 0.0009765625, px == 0.0);
  return ga_half_f32(ga_div_f32(ga_half_f32(ga_sin_f32(y)), y));
}"""
FLT_X["sinc"] = """fn ga_sinc_{S}(x: {T}) -> {T} {
  let y = ga_pi_{S}() * x;
  if (y == {T}(0)) { return {T}(1); }
  return ga_div_{S}(ga_sin_{S}(y), y);
}"""
