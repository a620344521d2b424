"""WGSL helpers for complex numbers: ``vec2<f32>`` (complex64) and ``vec2<f64>`` (complex128).

A complex number is a (real, imaginary) pair in registers and in storage.
``CPX`` helpers serve both types (``{T}`` the pair, ``{F}`` its component type,
``{FS}`` the component helpers' suffix); they use only ``+ - * /``, ``sqrt``
and bit operations, which are exact on every device in float64 too.
``C64`` holds the complex64 transcendentals. They are built on the accurate
float32 helpers of ``wgsl_lib.F32`` and follow C99 Annex G (and NumPy, where
NumPy defines its own: ``expm1``, ``pow`` with integer exponents, ``sign``)
for infinities, NaNs and signed zeros:

- exp, sinh, cosh, tanh (and sin, cos, tan through ``sin(z) = -i sinh(iz)``
  ...): FreeBSD msun's ``csinhf``/``ccoshf``/``ctanhf``/``cexpf`` algorithms,
  scaled with ``ldexp`` where ``e^x`` alone would overflow;
- log: ``log|z|`` as ``log1p((a-1)(a+1) + b^2) / 2`` near the unit circle, so
  ``log(z)`` near 1 keeps its digits; log1p likewise (NumPy's own complex
  log1p loses every digit for small ``z``; the host uses the same formula);
- asin, acos, atan, asinh, acosh, atanh: FreeBSD msun's ``catrigf.c``
  (Hull, Fairgrieve and Tang's algorithm);
- sqrt: Kahan's ``sqrt((|x| + |z|) / 2)`` with scaling at both ends of the range.

complex128 versions are made from these by ``render/wgsl_c128.py`` (double constants, the float64
library) on adapters with ``shader-f64``.
"""

from __future__ import annotations

CPLX_CONSTS = {
    "c64": {"T": "vec2<f32>", "F": "f32", "FS": "f32", "U": "u32", "SIGN": "0x80000000u",
            "BIG": "bitcast<f32>(0x7e000000u)", "TINY": "bitcast<f32>(0x0d800000u)",
            "UP": "bitcast<f32>(0x57800000u)", "DOWN": "bitcast<f32>(0x33800000u)"},
    "c128": {"T": "vec2<f64>", "F": "f64", "FS": "f64", "U": "u64", "SIGN": "0x8000000000000000lu",
             "BIG": "bitcast<f64>(0x7fb0000000000000lu)", "TINY": "bitcast<f64>(0x0170000000000000lu)",
             "UP": "bitcast<f64>(0x46d0000000000000lu)", "DOWN": "bitcast<f64>(0x3c80000000000000lu)"},
}

CPX: dict[str, str] = {}   # every complex type
C64: dict[str, str] = {}   # complex64 only (transcendentals on the float32 helpers)

for _p, _join in (("isnan", "||"), ("isinf", "||"), ("isfinite", "&&")):     # either component / both
    CPX["c" + _p] = f"fn ga_c{_p}_{{S}}(z: {{T}}) -> bool {{ return ga_{_p}_{{FS}}(z.x) {_join} ga_{_p}_{{FS}}(z.y); }}"
CPX["ceq"] = """fn ga_ceq_{S}(a: {T}, b: {T}) -> bool {
  if (ga_cisnan_{S}(a) || ga_cisnan_{S}(b)) { return false; }
  return a.x == b.x && a.y == b.y;
}"""
CPX["conj"] = """fn ga_conj_{S}(z: {T}) -> {T} {
  return {T}(z.x, bitcast<{F}>(bitcast<{U}>(z.y) ^ {SIGN}));
}"""
CPX["cneg"] = """fn ga_cneg_{S}(z: {T}) -> {T} {
  return bitcast<{T}>(bitcast<vec2<{U}>>(z) ^ vec2<{U}>({SIGN}));
}"""
CPX["cmul"] = """fn ga_cmul_{S}(a: {T}, b: {T}) -> {T} {
  // NumPy's SIMD loops' rounding (x86-64 with FMA, AArch64): each part one fused multiply-add of a product
  return {T}(fma(a.x, b.x, -(a.y * b.y)), fma(a.x, b.y, a.y * b.x));
}"""
CPX["cmulr"] = """fn ga_cmulr_{S}(a: {T}, b: {T}) -> {T} {
  // NumPy's reduction along a contiguous axis: each product rounded (kept from contraction), then the sum
  return {T}(ga_keep_{FS}(a.x * b.x) - ga_keep_{FS}(a.y * b.y), ga_keep_{FS}(a.x * b.y) + ga_keep_{FS}(a.y * b.x));
}"""
CPX["csquare"] = """fn ga_csquare_{S}(a: {T}) -> {T} {
  return {T}(fma(a.x, a.x, -(a.y * a.y)), fma(a.x, a.y, a.y * a.x));
}"""
CPX["cdivscl"] = """fn ga_cdivscl_{S}(re: {F}, im: {F}, den: {F}) -> {T} {
  // (re, im) * (1 / den) as NumPy computes it; divided when 1 / den would be subnormal (flushed on NVIDIA)
  if (abs(den) > {F}(8.507059173023462e37)) { return {T}(ga_div_{FS}(re, den), ga_div_{FS}(im, den)); }
  let scl = {F}(1) / den;
  return {T}(re * scl, im * scl);
}"""
CPX["cdiv"] = """fn ga_cdiv_{S}(a: {T}, b: {T}) -> {T} {
  // Smith's algorithm, as NumPy computes it
  let br = abs(b.x);
  let bi = abs(b.y);
  if (br >= bi) {
    if (br == {F}(0) && bi == {F}(0)) { return {T}(a.x / br, a.y / br); }
    let rat = ga_div_{FS}(b.y, b.x);
    return ga_cdivscl_{S}(a.x + a.y * rat, a.y - a.x * rat, b.x + b.y * rat);
  }
  let rat = ga_div_{FS}(b.x, b.y);
  return ga_cdivscl_{S}(a.x * rat + a.y, a.y * rat - a.x, b.y + b.x * rat);
}"""
CPX["crecip"] = """fn ga_crecip_{S}(z: {T}) -> {T} {
  // as NumPy computes it
  if (abs(z.y) <= abs(z.x)) {
    let r = ga_div_{FS}(z.y, z.x);
    let d = z.x + z.y * r;
    return {T}({F}(1) / d, -r / d);
  }
  let r = ga_div_{FS}(z.x, z.y);
  let d = z.x * r + z.y;
  return {T}(r / d, {F}(-1) / d);
}"""
CPX["cabs"] = "fn ga_cabs_{S}(z: {T}) -> {F} { return ga_hypot_{FS}(z.x, z.y); }"
CPX["csign"] = """fn ga_csign_{S}(z: {T}) -> {T} {
  // z / |z|; NumPy's special values (infinite components give +-1 or +-i)
  let a = ga_hypot_{FS}(z.x, z.y);
  if (ga_isnan_{FS}(a)) { return {T}(ga_nan_{FS}(), ga_nan_{FS}()); }
  if (ga_isinf_{FS}(a)) {
    let ix = ga_isinf_{FS}(z.x);
    let iy = ga_isinf_{FS}(z.y);
    if (ix && iy) { return {T}(ga_nan_{FS}(), ga_nan_{FS}()); }
    if (ix) { return {T}(select({F}(-1), {F}(1), z.x > {F}(0)), {F}(0)); }
    // both parts finite, |z| overflows: NumPy gives +-i (its sign of the imaginary part)
    return {T}({F}(0), select({F}(-1), {F}(1), z.y > {F}(0)));
  }
  if (a == {F}(0)) { return {T}(0); }
  return {T}(ga_div_{FS}(z.x, a), ga_div_{FS}(z.y, a));
}"""
CPX["csqrt"] = """fn ga_csqrt_{S}(z: {T}) -> {T} {
  let x = z.x;
  let y = z.y;
  if (x == {F}(0) && y == {F}(0)) { return {T}({F}(0), y); }
  if (ga_isinf_{FS}(y)) { return {T}(ga_inf_{FS}(), y); }
  if (ga_isnan_{FS}(x)) { return {T}(x, ga_nan_{FS}()); }
  if (ga_isinf_{FS}(x)) {
    if (x < {F}(0)) {
      if (ga_isnan_{FS}(y)) { return {T}(ga_nan_{FS}(), ga_inf_{FS}()); }
      return {T}({F}(0), ga_copysign_{FS}(ga_inf_{FS}(), y));
    }
    if (ga_isnan_{FS}(y)) { return {T}(x, y); }
    return {T}(x, ga_copysign_{FS}({F}(0), y));
  }
  if (ga_isnan_{FS}(y)) { return {T}(ga_nan_{FS}(), ga_nan_{FS}()); }
  var ax = abs(x);
  var ay = abs(y);
  var s = {F}(1);
  if (ax > {BIG} || ay > {BIG}) {
    ax = ax * {F}(0.25);
    ay = ay * {F}(0.25);
    s = {F}(2);
  } else if (ax < {TINY} && ay < {TINY}) {
    ax = ax * {UP};
    ay = ay * {UP};
    s = {DOWN};
  }
  let t = sqrt({F}(0.5) * (ax + ga_hypot_{FS}(ax, ay)));
  let u = ay / (t + t);
  if (x >= {F}(0)) { return {T}(t * s, ga_copysign_{FS}(u * s, y)); }
  return {T}(u * s, ga_copysign_{FS}(t * s, y));
}"""

# ---------------------------------------------------------------- complex64 transcendentals
C64["cexpscale"] = """fn ga_cexpscale_c64(x: f32, y: f32, expt: i32) -> vec2<f32> {
  // e^x (cos y, sin y) 2^expt for |x| large: e^x = e^r 2^k, scaled with ldexp (no overflow on the way)
  let xc = clamp(x, -300.0, 300.0);
  let k = ga_round_f32(xc * 1.44269504088896341);
  let r = (xc - k * 0.693359375) - k * -2.12194440e-4;
  let e = ga_exp_f32(r);
  let ki = i32(k) + expt;
  // magnitudes scaled, signs copied after (a compiler may fold the scale factors of an underflow to 0)
  let c = ga_cos_f32(y);
  let s = ga_sin_f32(y);
  return vec2<f32>(ga_copysign_f32(ga_scaled_c64(e, abs(c), ki), c), ga_copysign_f32(ga_scaled_c64(e, abs(s), ki), s));
}"""
C64["scaled"] = """fn ga_scaled_c64(e: f32, a: f32, k: i32) -> f32 {
  // e a 2^k, e in [0.5, 2]: a tiny a is scaled up by 2^64 first so that e a is not a subnormal, which
  // NVIDIA's driver flushes to 0 (then 0 times the 2^k steps became NaN: exp(1e30 + 1.2e-38j) on the H200)
  if (a < 1e-30) { return ga_ldexp_f32(e * (a * 18446744073709551616.0), k - 64); }
  return ga_ldexp_f32(e * a, k);
}"""
C64["cexp"] = """fn ga_cexp_c64(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (ga_isnan_f32(x)) {
    if (y == 0.0) { return z; }
    return vec2<f32>(x, ga_nan_f32());
  }
  if (ga_isinf_f32(x)) {
    if (x < 0.0) {
      if (!ga_isfinite_f32(y)) { return vec2<f32>(0.0, ga_copysign_f32(0.0, y)); }
      return vec2<f32>(ga_copysign_f32(0.0, ga_cos_f32(y)), ga_copysign_f32(0.0, ga_sin_f32(y)));
    }
    if (y == 0.0) { return z; }
    if (!ga_isfinite_f32(y)) { return vec2<f32>(x, ga_nan_f32()); }
    return vec2<f32>(ga_copysign_f32(x, ga_cos_f32(y)), ga_copysign_f32(x, ga_sin_f32(y)));
  }
  if (!ga_isfinite_f32(y)) { return vec2<f32>(ga_nan_f32(), ga_nan_f32()); }
  if (y == 0.0) { return vec2<f32>(ga_exp_f32(x), y); }
  if (abs(x) < 80.0) {
    let e = ga_exp_f32(x);
    return vec2<f32>(e * ga_cos_f32(y), e * ga_sin_f32(y));
  }
  return ga_cexpscale_c64(x, y, 0);
}"""
C64["cexpm1"] = """fn ga_cexpm1_c64(z: vec2<f32>) -> vec2<f32> {
  // NumPy's formula (expm1(x) cos y - 2 sin^2(y/2), e^x sin y) for finite z; the standard's special
  // values (those of exp(z) - 1, with -1 +- 0j for a real part of -inf) elsewhere
  let x = z.x;
  let y = z.y;
  if (!ga_cisfinite_c64(z) || x > 80.0) {
    if (ga_isinf_f32(x) && x < 0.0) { return vec2<f32>(-1.0, ga_copysign_f32(0.0, y)); }
    let e = ga_cexp_c64(z);
    return vec2<f32>(e.x - 1.0, e.y);
  }
  if (y == 0.0) {
    if (x == 0.0) { return vec2<f32>(0.0, y); }          // the standard: +-0 + 0j -> +0 + 0j
    return vec2<f32>(ga_expm1_f32(x), y);
  }
  let a = ga_sin_f32(y * 0.5);
  return vec2<f32>(ga_expm1_f32(x) * ga_cos_f32(y) - 2.0 * a * a, ga_exp_f32(x) * ga_sin_f32(y));
}"""
C64["clogabs"] = """fn ga_clogabs_c64(x: f32, y: f32) -> f32 {
  // log(hypot(x, y)) for finite x, y, not both 0
  let a = max(abs(x), abs(y));
  let b = min(abs(x), abs(y));
  if (a >= 0.5 && a <= 2.0) { return 0.5 * ga_log1p_f32((a - 1.0) * (a + 1.0) + b * b); }
  let r = ga_div_f32(b, a);
  return ga_log_f32(a) + 0.5 * ga_log1p_f32(r * r);
}"""
C64["clog"] = """fn ga_clog_c64(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  let im = ga_atan2_f32(y, x);
  if (ga_isinf_f32(x) || ga_isinf_f32(y)) { return vec2<f32>(ga_inf_f32(), im); }
  if (ga_isnan_f32(x) || ga_isnan_f32(y)) { return vec2<f32>(ga_nan_f32(), ga_nan_f32()); }
  if (x == 0.0 && y == 0.0) { return vec2<f32>(-ga_inf_f32(), im); }
  return vec2<f32>(ga_clogabs_c64(x, y), im);
}"""
for _name, _scale in (("clog2", "1.44269504088896341"), ("clog10", "0.434294481903251828")):   # log(z) / log(base)
    C64[_name] = f"fn ga_{_name}_c64(z: vec2<f32>) -> vec2<f32> {{ return ga_clog_c64(z) * {_scale}; }}"
C64["clog1p"] = """fn ga_clog1p_c64(z: vec2<f32>) -> vec2<f32> {
  // log(1 + z); near 0, log|1 + z| = log1p(x (2 + x) + y^2) / 2 keeps the digits 1 + z would lose
  let x = z.x;
  let y = z.y;
  if (ga_cisfinite_c64(z) && abs(x) < 0.5 && abs(y) < 0.5) {
    return vec2<f32>(0.5 * ga_log1p_f32(x * (2.0 + x) + y * y), ga_atan2_f32(y, 1.0 + x));
  }
  return ga_clog_c64(vec2<f32>(1.0 + x, y));
}"""
# csinh and ccosh (FreeBSD csinhf, ccoshf) from one template: sinh is odd in x (its real part takes x's
# sign), cosh even (its imaginary part does); the special values outside the finite plane differ.
_CHYP = """fn ga_c{F}_c64(z: vec2<f32>) -> vec2<f32> {
  // FreeBSD c{F}f
  let x = z.x;
  let y = z.y;
  let ax = abs(x);
  let fx = ga_isfinite_f32(x);
  let fy = ga_isfinite_f32(y);
  if (fx && fy) {
    if (y == 0.0) { return {YZERO}; }
    if (ax < 9.0) { return vec2<f32>(ga_{F}_f32(x) * ga_cos_f32(y), ga_{G}_f32(x) * ga_sin_f32(y)); }
    if (ax < 88.72283935546875) {
      let h = ga_exp_f32(ax) * 0.5;
      return vec2<f32>({HRE} * ga_cos_f32(y), {HIM} * ga_sin_f32(y));
    }
    let e = ga_cexpscale_c64(ax, y, -1);
    return {BIG};
  }
{SPECIAL}
  if (fx) { return vec2<f32>(ga_nan_f32(), ga_nan_f32()); }
  if (ga_isinf_f32(x)) {
    if (!fy) { return vec2<f32>(ga_inf_f32(), ga_nan_f32()); }
    // y finite and nonzero here, so cos y and sin y are nonzero: the infinite parts are signed
    // infinities, set without arithmetic on infinity (NVIDIA's compiler turned the float64 port's
    // ga_inf_f64() * ga_cos_f64(y) into the argument reduction's quadrant count)
    let cy = ga_cos_f32(y);
    let sy = ga_sin_f32(y);
    return {INF};
  }
  return vec2<f32>(ga_nan_f32(), ga_nan_f32());
}"""
_SIGN_X = "select(1.0, -1.0, x < 0.0)"
for _f, _g, _fill in (
    ("sinh", "cosh", {
        "YZERO": "vec2<f32>(ga_sinh_f32(x), y)", "HRE": "ga_copysign_f32(h, x)", "HIM": "h",
        "BIG": f"vec2<f32>(e.x * {_SIGN_X}, e.y)",
        "SPECIAL": """  if (x == 0.0) { return vec2<f32>(x, ga_nan_f32()); }
  if (y == 0.0) { return z; }""",
        "INF": f"vec2<f32>(ga_copysign_f32(ga_inf_f32(), cy * {_SIGN_X}), ga_copysign_f32(ga_inf_f32(), sy))"}),
    ("cosh", "sinh", {
        "YZERO": "vec2<f32>(ga_cosh_f32(x), x * y)", "HRE": "h", "HIM": "ga_copysign_f32(h, x)",
        "BIG": f"vec2<f32>(e.x, e.y * {_SIGN_X})",
        "SPECIAL": """  if (x == 0.0) { return vec2<f32>(ga_nan_f32(), 0.0); }
  if (y == 0.0) {
    if (ga_isnan_f32(x)) { return vec2<f32>(x, y); }
    return vec2<f32>(ga_inf_f32(), ga_copysign_f32(0.0, x) * y);
  }""",
        "INF": f"vec2<f32>(ga_copysign_f32(ga_inf_f32(), cy), ga_copysign_f32(ga_inf_f32(), sy * {_SIGN_X}))"}),
):
    _t = _CHYP.replace("{F}", _f).replace("{G}", _g)
    for _k, _v in _fill.items():
        _t = _t.replace("{" + _k + "}", _v)
    C64["c" + _f] = _t
C64["ctanh"] = """fn ga_ctanh_c64(z: vec2<f32>) -> vec2<f32> {
  // FreeBSD ctanhf
  let x = z.x;
  let y = z.y;
  if (ga_isnan_f32(x)) { return vec2<f32>(x, select(ga_nan_f32(), y, y == 0.0)); }
  if (ga_isinf_f32(x)) {
    var s = y;
    if (!ga_isinf_f32(y)) { s = ga_sin_f32(y) * ga_cos_f32(y); }
    return vec2<f32>(ga_copysign_f32(1.0, x), ga_copysign_f32(0.0, s));
  }
  if (!ga_isfinite_f32(y)) { return vec2<f32>(select(ga_nan_f32(), x, x == 0.0), ga_nan_f32()); }
  let ax = abs(x);
  if (ax >= 11.0) {
    let e = ga_exp_f32(-ax);
    return vec2<f32>(ga_copysign_f32(1.0, x), 4.0 * ga_sin_f32(y) * ga_cos_f32(y) * e * e);
  }
  let t = ga_tan_f32(y);
  let beta = 1.0 + t * t;
  let s = ga_sinh_f32(x);
  let rho = sqrt(1.0 + s * s);
  let den = 1.0 + beta * s * s;
  return vec2<f32>((beta * rho * s) / den, t / den);
}"""
# sin(z) = -i sinh(iz), cos(z) = cosh(iz), tan(z) = -i tanh(iz); iz = (-y, x)
C64["csin"] = """fn ga_csin_c64(z: vec2<f32>) -> vec2<f32> {
  if (ga_isinf_f32(z.y) && !ga_isfinite_f32(z.x)) { return vec2<f32>(ga_nan_f32(), ga_inf_f32()); }
  let w = ga_csinh_c64(vec2<f32>(-z.y, z.x));
  return vec2<f32>(w.y, -w.x);
}"""
C64["ccos"] = """fn ga_ccos_c64(z: vec2<f32>) -> vec2<f32> { return ga_ccosh_c64(vec2<f32>(-z.y, z.x)); }"""
C64["ctan"] = """fn ga_ctan_c64(z: vec2<f32>) -> vec2<f32> {
  let w = ga_ctanh_c64(vec2<f32>(-z.y, z.x));
  return vec2<f32>(w.y, -w.x);
}"""
C64["cpow"] = """fn ga_cpow_c64(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  // NumPy's complex power: special cases, repeated squaring for small integer exponents, else
  // exp(b log a) with C99's multiplication (glibc's cpowf)
  if (b.x == 0.0 && b.y == 0.0) { return vec2<f32>(1.0, 0.0); }
  if (a.x == 0.0 && a.y == 0.0) {
    if (b.x > 0.0) { return vec2<f32>(0.0, 0.0); }
    return vec2<f32>(ga_nan_f32(), ga_nan_f32());
  }
  if (b.y == 0.0 && abs(b.x) < 100.0 && ga_trunc_f32(b.x) == b.x) {
    let n = i32(b.x);
    if (n == 1) { return a; }
    if (n == 2) { return ga_cmul_c64(a, a); }
    if (n == 3) { return ga_cmul_c64(a, ga_cmul_c64(a, a)); }
    let m = abs(n);
    var r = vec2<f32>(1.0, 0.0);
    var p = a;
    var mask = 1;
    loop {
      if ((m & mask) != 0) { r = ga_cmul_c64(r, p); }
      mask = mask << 1u;
      if (m < mask) { break; }
      p = ga_cmul_c64(p, p);
    }
    if (n < 0) { r = ga_cdiv_c64(vec2<f32>(1.0, 0.0), r); }
    return r;
  }
  return ga_cexp_c64(ga_cmulg_c64(b, ga_clog_c64(a)));
}"""
C64["cmulg"] = """fn ga_cmulg_c64(z: vec2<f32>, w: vec2<f32>) -> vec2<f32> {
  // C99 Annex G multiplication (libgcc __mulsc3): an infinite operand gives an infinite result
  var a = z.x;
  var b = z.y;
  var c = w.x;
  var d = w.y;
  let ac = a * c;
  let bd = b * d;
  let ad = a * d;
  let bc = b * c;
  let x = ac - bd;
  let y = ad + bc;
  if (!(ga_isnan_f32(x) && ga_isnan_f32(y))) { return vec2<f32>(x, y); }
  var recalc = false;
  if (ga_isinf_f32(a) || ga_isinf_f32(b)) {
    a = ga_copysign_f32(select(0.0, 1.0, ga_isinf_f32(a)), a);
    b = ga_copysign_f32(select(0.0, 1.0, ga_isinf_f32(b)), b);
    if (ga_isnan_f32(c)) { c = ga_copysign_f32(0.0, c); }
    if (ga_isnan_f32(d)) { d = ga_copysign_f32(0.0, d); }
    recalc = true;
  }
  if (ga_isinf_f32(c) || ga_isinf_f32(d)) {
    c = ga_copysign_f32(select(0.0, 1.0, ga_isinf_f32(c)), c);
    d = ga_copysign_f32(select(0.0, 1.0, ga_isinf_f32(d)), d);
    if (ga_isnan_f32(a)) { a = ga_copysign_f32(0.0, a); }
    if (ga_isnan_f32(b)) { b = ga_copysign_f32(0.0, b); }
    recalc = true;
  }
  if (!recalc && (ga_isinf_f32(ac) || ga_isinf_f32(bd) || ga_isinf_f32(ad) || ga_isinf_f32(bc))) {
    if (ga_isnan_f32(a)) { a = ga_copysign_f32(0.0, a); }
    if (ga_isnan_f32(b)) { b = ga_copysign_f32(0.0, b); }
    if (ga_isnan_f32(c)) { c = ga_copysign_f32(0.0, c); }
    if (ga_isnan_f32(d)) { d = ga_copysign_f32(0.0, d); }
    recalc = true;
  }
  if (!recalc) { return vec2<f32>(x, y); }
  // INFINITY * (a c - b d) without arithmetic on the infinity: NVIDIA's compiler distributed that product
  // over the difference in float64 (inf * 0 - inf * d: NaN; 1j ** (inf + inf j) gave NaN, not 0)
  return vec2<f32>(ga_infscale_f32(a * c - b * d), ga_infscale_f32(a * d + b * c));
}"""

# ---- inverse functions: FreeBSD catrigf.c (Hull, Fairgrieve and Tang), float32 constants
_EPS = "1.1920928955078125e-7"
C64["cathalf"] = """fn ga_cathalf_c64(a: f32, b: f32, h: f32) -> f32 {
  // (hypot(a, b) - b) / 2 without cancellation; h = hypot(a, b)
  if (b < 0.0) { return (h - b) * 0.5; }
  if (b == 0.0) { return a * 0.5; }
  return a * a / (h + b) * 0.5;
}"""
C64["catwork"] = """fn ga_catwork_c64(x: f32, y: f32) -> vec4<f32> {
  // catrigf do_hard_work for x, y >= 0 below 2^23: (rx, B usable (1) or not (0), B or sqrt(A^2 - y^2), new y)
  let eps = EPS;
  let R = ga_hypot_f32(x, y + 1.0);
  let S = ga_hypot_f32(x, y - 1.0);
  var A = (R + S) * 0.5;
  if (A < 1.0) { A = 1.0; }
  var rx: f32;
  if (A < 10.0) {
    if (y == 1.0 && x < bitcast<f32>(0x25000000u)) {
      rx = sqrt(x);
    } else if (x >= eps * abs(y - 1.0)) {
      let am1 = ga_cathalf_c64(x, 1.0 + y, R) + ga_cathalf_c64(x, 1.0 - y, S);
      rx = ga_log1p_f32(am1 + sqrt(am1 * (A + 1.0)));
    } else if (y < 1.0) {
      rx = x / sqrt((1.0 - y) * (1.0 + y));
    } else {
      rx = ga_log1p_f32((y - 1.0) + sqrt((y - 1.0) * (y + 1.0)));
    }
  } else {
    rx = ga_log_f32(A + sqrt(A * A - 1.0));
  }
  if (y < bitcast<f32>(0x21000000u)) {
    return vec4<f32>(rx, 0.0, A * (2.0 / eps), y * (2.0 / eps));
  }
  let B = ga_div_f32(y, A);
  if (B > 0.6417) {
    if (y == 1.0 && x < eps / 128.0) {
      return vec4<f32>(rx, 0.0, sqrt(x) * sqrt((A + y) * 0.5), y);
    }
    if (x >= eps * abs(y - 1.0)) {
      let amy = ga_cathalf_c64(x, y + 1.0, R) + ga_cathalf_c64(x, y - 1.0, S);
      return vec4<f32>(rx, 0.0, sqrt(amy * (A + y)), y);
    }
    if (y > 1.0) {
      let k = bitcast<f32>(0x57800000u);   // 4 / eps^2 = 2^48
      return vec4<f32>(rx, 0.0, x * k * y / sqrt((y + 1.0) * (y - 1.0)), y * k);
    }
    return vec4<f32>(rx, 0.0, sqrt((1.0 - y) * (1.0 + y)), y);
  }
  return vec4<f32>(rx, 1.0, B, y);
}""".replace("EPS", _EPS)
C64["catlog"] = """fn ga_catlog_c64(x: f32, y: f32) -> vec2<f32> {
  // clog for |z| finite and large (catrigf clog_for_large_values)
  let ax = max(abs(x), abs(y));
  let ay = min(abs(x), abs(y));
  let im = ga_atan2_f32(y, x);
  if (ax > bitcast<f32>(0x7effffffu)) {
    return vec2<f32>(ga_log_f32(ga_hypot_f32(x / 2.7182818285, y / 2.7182818285)) + 1.0, im);
  }
  if (ax > bitcast<f32>(0x5e000000u) || ay < bitcast<f32>(0x20000000u)) {
    return vec2<f32>(ga_log_f32(ga_hypot_f32(x, y)), im);
  }
  return vec2<f32>(ga_log_f32(ax * ax + ay * ay) * 0.5, im);
}"""
C64["casinh"] = """fn ga_casinh_c64(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  let ax = abs(x);
  let ay = abs(y);
  if (ga_isnan_f32(x) || ga_isnan_f32(y)) {
    if (ga_isinf_f32(x)) { return vec2<f32>(x, ga_nan_f32()); }
    if (ga_isinf_f32(y)) { return vec2<f32>(ga_inf_f32(), ga_nan_f32()); }
    if (y == 0.0) { return vec2<f32>(ga_nan_f32(), y); }
    return vec2<f32>(ga_nan_f32(), ga_nan_f32());
  }
  if (ax > 8388608.0 || ay > 8388608.0) {
    var w: vec2<f32>;
    if (ga_signbit_f32(x)) { w = ga_catlog_c64(-x, -y); } else { w = ga_catlog_c64(x, y); }
    return vec2<f32>(ga_copysign_f32(w.x + 0.693147180559945309, x), ga_copysign_f32(w.y, y));
  }
  if (x == 0.0 && y == 0.0) { return z; }
  if (ax < 2.11431983e-4 && ay < 2.11431983e-4) { return z; }
  let h = ga_catwork_c64(ax, ay);
  var ry: f32;
  if (h.y == 1.0) { ry = ga_asin_f32(h.z); } else { ry = ga_atan2_f32(h.w, h.z); }
  return vec2<f32>(ga_copysign_f32(h.x, x), ga_copysign_f32(ry, y));
}"""
C64["casin"] = """fn ga_casin_c64(z: vec2<f32>) -> vec2<f32> {
  let w = ga_casinh_c64(z.yx);
  return w.yx;
}"""
C64["cacos"] = """fn ga_cacos_c64(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  let sx = ga_signbit_f32(x);
  let sy = ga_signbit_f32(y);
  let ax = abs(x);
  let ay = abs(y);
  if (ga_isnan_f32(x) || ga_isnan_f32(y)) {
    if (ga_isinf_f32(x)) { return vec2<f32>(ga_nan_f32(), -ga_inf_f32()); }
    if (ga_isinf_f32(y)) { return vec2<f32>(ga_nan_f32(), -y); }
    if (x == 0.0) { return vec2<f32>(1.57079637050628662, ga_nan_f32()); }
    return vec2<f32>(ga_nan_f32(), ga_nan_f32());
  }
  if (ax > 8388608.0 || ay > 8388608.0) {
    let w = ga_catlog_c64(x, y);
    var ry = w.x + 0.693147180559945309;
    if (!sy) { ry = -ry; }
    return vec2<f32>(abs(w.y), ry);
  }
  if (x == 1.0 && y == 0.0) { return vec2<f32>(0.0, -y); }
  if (ax < 2.11431983e-4 && ay < 2.11431983e-4) {
    return vec2<f32>(1.5707962513 - (x - 7.5497899549e-8), -y);
  }
  let h = ga_catwork_c64(ay, ax);
  var rx: f32;
  let sgn = select(1.0, -1.0, sx);
  if (h.y == 1.0) { rx = ga_acos_f32(sgn * h.z); } else { rx = ga_atan2_f32(h.z, sgn * h.w); }
  var ry = h.x;
  if (!sy) { ry = -ry; }
  return vec2<f32>(rx, ry);
}"""
C64["cacosh"] = """fn ga_cacosh_c64(z: vec2<f32>) -> vec2<f32> {
  let w = ga_cacos_c64(z);
  let nx = ga_isnan_f32(w.x);
  let ny = ga_isnan_f32(w.y);
  if (nx && ny) { return w.yx; }
  if (nx) { return vec2<f32>(abs(w.y), w.x); }
  if (ny) { return w.yx; }
  return vec2<f32>(abs(w.y), ga_copysign_f32(w.x, z.y));
}"""
C64["catrecip"] = """fn ga_catrecip_c64(x: f32, y: f32) -> f32 {
  // Re(1 / (x + iy)) without spurious underflow (catrigf real_part_reciprocal)
  let ix = i32(bitcast<u32>(x) & 0x7f800000u);
  let iy = i32(bitcast<u32>(y) & 0x7f800000u);
  let cut = 13 << 23u;
  if (ix - iy >= cut || ga_isinf_f32(x)) { return 1.0 / x; }
  if (iy - ix >= cut) { return x / y / y; }
  if (ix <= (127 + 64 - 13) << 23u) { return x / (x * x + y * y); }
  let scale = bitcast<f32>(u32(0x7f800000 - ix));
  let xs = x * scale;
  let ys = y * scale;
  return xs / (xs * xs + ys * ys) * scale;
}"""
C64["catanh"] = """fn ga_catanh_c64(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  let ax = abs(x);
  let ay = abs(y);
  let pio2 = 1.57079637050628662;
  let eps = EPS;
  if (y == 0.0 && ax <= 1.0) { return vec2<f32>(ga_atanh_f32(x), y); }
  if (x == 0.0) { return vec2<f32>(x, ga_atan_f32(y)); }
  if (ga_isnan_f32(x) || ga_isnan_f32(y)) {
    if (ga_isinf_f32(x)) { return vec2<f32>(ga_copysign_f32(0.0, x), ga_nan_f32()); }
    if (ga_isinf_f32(y)) { return vec2<f32>(ga_copysign_f32(0.0, x), ga_copysign_f32(pio2, y)); }
    return vec2<f32>(ga_nan_f32(), ga_nan_f32());
  }
  if (ax > 8388608.0 || ay > 8388608.0) {
    return vec2<f32>(ga_catrecip_c64(x, y), ga_copysign_f32(pio2, y));
  }
  if (ax < 2.99009978e-4 && ay < 2.99009978e-4) { return z; }
  var rx: f32;
  if (ax == 1.0 && ay < eps) {
    rx = (0.693147180559945309 - ga_log_f32(ay)) * 0.5;
  } else {
    let d = ax - 1.0;
    var ss = d * d;
    if (ay >= bitcast<f32>(0x20000000u)) { ss = ss + ay * ay; }
    rx = ga_log1p_f32(4.0 * ax / ss) * 0.25;
  }
  var ry: f32;
  if (ax == 1.0) {
    ry = ga_atan2_f32(2.0, -ay) * 0.5;
  } else if (ay < eps) {
    ry = ga_atan2_f32(2.0 * ay, (1.0 - ax) * (1.0 + ax)) * 0.5;
  } else {
    ry = ga_atan2_f32(2.0 * ay, (1.0 - ax) * (1.0 + ax) - ay * ay) * 0.5;
  }
  return vec2<f32>(ga_copysign_f32(rx, x), ga_copysign_f32(ry, y));
}""".replace("EPS", _EPS)
C64["catan"] = """fn ga_catan_c64(z: vec2<f32>) -> vec2<f32> {
  let w = ga_catanh_c64(z.yx);
  return w.yx;
}"""
