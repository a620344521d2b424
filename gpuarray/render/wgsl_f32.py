"""float32 math in software: the exp/log/trig/pow/hyperbolic family as WGSL helpers.

The f32 built-ins (exp, log, sin, pow ...) of WGSL implementations are far from
NumPy's (lavapipe: exp 60 ULP, sin of 1e30 garbage, subnormal results flushed;
DESIGN.md 5.9). These are Cephes-style single-precision versions, written so that
NIR's inexact algebraic rewrites (it folds ``(a + b) - a`` to ``b``) cannot break
them: every step whose exactness matters uses bit masks or integer arithmetic, never
the error term of a float addition. Polynomial coefficients: Cephes (S. L. Moshier)
single-precision library, refitted where docs/architecture.md says. Rounding to an
integer goes through ``ga_round_f32`` (render/wgsl_round.py: WGSL's ``round`` where
the start-up probe found it exact, else an exact version on the bits).

``F32_MATH`` maps helper names to templates (``ga_<name>_f32``); ``wgsl_lib`` merges
it into ``F32``, whose entries replace the generic ``FLT`` ones for float32.
"""

from __future__ import annotations

F32_MATH: dict[str, str] = {}
F32 = F32_MATH      # the entries below are written as in wgsl_lib

F32["mask12"] = """fn ga_mask12_f32(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0xfffff000u); }"""
F32["pow2i"] = """fn ga_pow2i_f32(k: i32) -> f32 { return bitcast<f32>(u32(k + 127) << 23u); }"""
F32["ldexp"] = """fn ga_ldexp_f32(x: f32, n: i32) -> f32 {
  // x * 2^n with one rounding (musl scalbnf).
  var y = x;
  var k = n;
  if (k > 127) {
    y = y * bitcast<f32>(0x7f000000u);
    k = k - 127;
    if (k > 127) {
      y = y * bitcast<f32>(0x7f000000u);
      k = min(k - 127, 127);
    }
  } else if (k < -126) {
    y = y * bitcast<f32>(0x0c800000u);
    k = k + 102;
    if (k < -126) {
      y = y * bitcast<f32>(0x0c800000u);
      k = max(k + 102, -126);
    }
  }
  return y * ga_pow2i_f32(k);
}"""
F32["rint"] = """fn ga_rint_f32(t: f32) -> f32 {
  // t - 1.5 2^23 for t = y + 1.5 2^23 (y rounded to an integer by that addition, |y| < 2^22): y, while the
  // bits of t hold it as an integer. The masks (t in [2^23, 2^24): they change nothing) keep compilers from
  // folding (y + c) - c to the unrounded y: the sign mask alone is provably a no-op where t is known
  // positive (y = |x| 2/pi or x^2 log2 e), and NVIDIA's 580 driver then dropped the rounding in kernels with
  // 64-bit integer arithmetic (tests/test_rounding_tricks.py); t's exponent bits, or-ed in, are not. This
  // rounds without round() and f32 -> i32 conversions, which run at 1/8 of the rate of an fma on NVIDIA GPUs
  return bitcast<f32>((bitcast<u32>(t) & 0x7fffffffu) | 0x4b000000u) - 12582912.0;
}"""
F32["exppoly"] = """fn ga_exppoly_f32(x: f32) -> vec2<f32> {
  // (p, t) for |x| < 2^14: exp(x) = p 2^k, x = k ln2 + r, |r| <= ln2 / 2 (k * 0.693359375 exact: 9 bits by at
  // most 15), p = exp(r) in [0.70, 1.42] as 1 + (r + r^2 Q(r)), Q of degree 4 (minimax: exp to 3e-9 relative,
  // p within 0.81 ULP, 0.84 with contracted fmas); k in the bits of t (ga_rint)
  let t = x * 1.44269504088896341 + 12582912.0;
  let k = ga_rint_f32(t);
  let r = (x - k * 0.693359375) - k * -2.12194440e-4;
  let z = r * r;
  let p = ((((1.3814548e-3 * r + 8.368735e-3) * r + 4.166839e-2) * r + 1.6666521e-1) * r + 4.9999994e-1) * z
          + r + 1.0;
  return vec2<f32>(p, t);
}"""
F32["expcore"] = """fn ga_expcore_f32(x: f32) -> f32 {
  // exp(x) for |x| < 86.5: no special value, a normal result: 2^k added to p's exponent field (k in
  // [-125, 125]); (bits of t) << 23 is k << 23
  let pt = ga_exppoly_f32(x);
  return bitcast<f32>(bitcast<u32>(pt.x) + (bitcast<u32>(pt.y) << 23u));
}"""
F32["exp"] = """fn ga_exp_f32(x: f32) -> f32 {
  // one range test (false for NaN) between the polynomial and the result; the rest in a branch rarely taken
  let pt = ga_exppoly_f32(x);
  if (abs(x) < 86.5) { return bitcast<f32>(bitcast<u32>(pt.x) + (bitcast<u32>(pt.y) << 23u)); }
  if (ga_isnan_f32(x)) { return x; }
  if (x > 89.0) { return ga_inf_f32(); }
  if (x < -104.0) { return 0.0; }
  // p 2^k for k in [-151, 129], in two steps so that each factor is a normal float; the second rounds once
  let k = bitcast<i32>(pt.y) - 0x4b400000;
  let h = k / 2;
  return (pt.x * ga_pow2i_f32(h)) * ga_pow2i_f32(k - h);
}"""
F32["expm1"] = """fn ga_expm1_f32(x: f32) -> f32 {
  if (ga_isnan_f32(x) || x == 0.0) { return x; }
  if (x > 89.0) { return ga_inf_f32(); }
  if (x < -17.5) { return -1.0; }
  var k = 0.0;
  var r = x;
  if (abs(x) > 0.34657359) {
    k = ga_round_f32(x * 1.44269504088896341);
    r = (x - k * 0.693359375) - k * -2.12194440e-4;
  }
  // expm1(r), |r| <= ln(2)/2: Taylor series to r^8
  let e = r + r * r * (0.5 + r * (1.6666666666666667e-1 + r * (4.1666666666666667e-2 + r * (8.3333333333333333e-3
          + r * (1.3888888888888889e-3 + r * (1.9841269841269841e-4 + r * 2.4801587301587302e-5))))));
  let ki = i32(k);
  if (ki == 0) { return e; }
  if (ki > 24 || ki < -24) { return ga_ldexp_f32(1.0 + e, ki) - 1.0; }
  let t = ga_pow2i_f32(ki);
  return (t - 1.0) + t * e;
}"""
F32["logparts"] = """fn ga_logparts_f32(x: f32) -> vec3<f32> {
  // x > 0 finite: x = 2^e (1 + m), 1 + m in [sqrt(1/2), sqrt(2)); returns (m, m^3 P(m), e)
  var v = x;
  var e = 0;
  if (v < bitcast<f32>(0x00800000u)) { v = v * 16777216.0; e = -24; }
  let b = bitcast<u32>(v);
  e = e + i32(b >> 23u) - 126;
  var m = bitcast<f32>((b & 0x007fffffu) | 0x3f000000u);
  if (m < 0.70710678118654752440) { e = e - 1; m = m + m - 1.0; } else { m = m - 1.0; }
  let z = m * m;
  let y = ((((((((7.0376836292e-2 * m - 1.1514610310e-1) * m + 1.1676998740e-1) * m - 1.2420140846e-1) * m
            + 1.4249322787e-1) * m - 1.6668057665e-1) * m + 2.0000714765e-1) * m - 2.4999993993e-1) * m
            + 3.3333331174e-1) * m * z;
  return vec3<f32>(m, y, f32(e));
}"""
_LOG_SPECIAL = """  if (ga_isnan_f32(x)) { return x; }
  if (x < 0.0) { return ga_nan_f32(); }
  if (x == 0.0) { return -ga_inf_f32(); }
  if (ga_isinf_f32(x)) { return x; }
  let p = ga_logparts_f32(x);
  let m = p.x;
  let fe = p.z;
  let z = m * m;
"""
F32["log"] = """fn ga_log_f32(x: f32) -> f32 {
""" + _LOG_SPECIAL + """  let y = (p.y + -2.12194440e-4 * fe) + -0.5 * z;
  return (m + y) + 0.693359375 * fe;
}"""
F32["log2"] = """fn ga_log2_f32(x: f32) -> f32 {
""" + _LOG_SPECIAL + """  let y = p.y - 0.5 * z;
  let l = 0.44269504088896340736;
  return (((y * l + m * l) + y) + m) + fe;
}"""
F32["log10"] = """fn ga_log10_f32(x: f32) -> f32 {
""" + _LOG_SPECIAL + """  let y = p.y - 0.5 * z;
  var r = y * 7.00731903251827651129e-4;
  r = r + m * 7.00731903251827651129e-4;
  r = r + fe * 2.48745663981195213739e-4;
  r = r + y * 4.3359375e-1;
  r = r + m * 4.3359375e-1;
  return r + fe * 3.0078125e-1;
}"""
F32["log1p"] = """fn ga_log1p_f32(x: f32) -> f32 {
  if (ga_isnan_f32(x)) { return x; }
  if (x == -1.0) { return -ga_inf_f32(); }
  if (x < -1.0) { return ga_nan_f32(); }
  if (ga_isinf_f32(x)) { return x; }
  if (abs(x) < 0.0078125) {
    return x + x * x * (-0.5 + x * (3.3333333333333333e-1 + x * (-0.25 + x * (0.2 + x * -1.6666666666666667e-1))));
  }
  if (x < -0.5) { return ga_log_f32(1.0 + x); }
  if (x > 8388608.0) { return ga_log_f32(x) + 1.0 / x; }
  // 1 + x = uh + ul exactly enough: uh has 16 bits, so 1 - uh is exact
  let uh = bitcast<f32>(bitcast<u32>(1.0 + x) & 0xffffff00u);
  let ul = ga_keep_f32(1.0 - uh) + x;     // ga_keep: no compiler regroups this as (1 + x) - uh (wgsl_f64.py log1p)
  let d = ul / uh;
  return ga_log_f32(uh) + (d - 0.5 * d * d);
}"""
F32["keep"] = """fn ga_keep_f32(v: f32) -> f32 {
  // v itself, hidden from the compiler's algebra (render/wgsl_f64_inv.py ga_keep_f64): a NaN gets its quiet bit
  let u = bitcast<u32>(v);
  return bitcast<f32>(select(u, u | 0x00400000u, (u & 0x7fffffffu) > 0x7f800000u));
}"""
F32["cwpio2"] = """fn ga_cwpio2_f32(x: f32, q: f32) -> f32 {
  // x - q pi/2 for an integer |q| < 2^9 (Cody-Waite): pi/2 in four parts of 8, 11, 12 and 24 bits, so q * part
  // is exact for the first three and the partial differences are exact. The steps are fmas: a compiler
  // may regroup x - q p1 - q p2 as x - q (p1 + p2) (distribution; the H200 did in kernels with int64
  // arithmetic: tan near pi/2 54 ULP off), not an fma's operands; with exact products, the same results.
  return fma(-q, 2.5633440682570896e-12, fma(-q, 7.549533620476723e-08,
             fma(-q, 4.837512969970703125e-4, fma(-q, 1.5703125, x))));
}"""
F32["trigred"] = """fn ga_trigred_f32(x: f32) -> vec2<f32> {
  // (r, q): x = (q + r / (pi/2)) * pi/2 modulo 2 pi, |r| <= pi/4
  if (abs(x) <= 0.785398163397448) { return vec2<f32>(x, 0.0); }
  if (abs(x) < 512.0) {
    // Cody-Waite (ga_cwpio2): no table, so cheap enough for fused chains (chain8)
    let q = ga_round_f32(x * 0.636619772367581343);
    let r = ga_cwpio2_f32(x, q);
    return vec2<f32>(r, f32(i32(q) & 3));
  }
  return ga_trigpha_f32(x);
}"""
F32["trigpha"] = """fn ga_trigpha_f32(x: f32) -> vec2<f32> {
  // ga_trigred for |x| >= 512: Payne-Hanek with the bits of 2/pi, words wi .. wi + 3 of
  // 0, a2f9836e 4e441529 fc2757d1 f534ddc0 db629599 3c439041 fe5163ab, wi <= 4 (|x| < 2^128), picked by
  // selects: no function-local array, which a driver may keep in per-thread memory for every kernel
  // using it, and fewer operations than a switch where a SIMD compiler executes every case (lavapipe)
  let bits = bitcast<u32>(x) & 0x7fffffffu;
  let m = (bits & 0x7fffffu) | 0x800000u;
  let idx = (bits >> 23u) - 120u;   // exponent + 7 >= 6
  let wi = idx >> 5u;
  let bo = idx & 31u;
  let s1 = wi == 1u;
  let s2 = wi == 2u;
  let s3 = wi == 3u;
  let s4 = wi == 4u;
  var w0 = select(select(select(select(0x00000000u, 0xa2f9836eu, s1), 0x4e441529u, s2),
    0xfc2757d1u, s3), 0xf534ddc0u, s4);
  var w1 = select(select(select(select(0xa2f9836eu, 0x4e441529u, s1), 0xfc2757d1u, s2),
    0xf534ddc0u, s3), 0xdb629599u, s4);
  var w2 = select(select(select(select(0x4e441529u, 0xfc2757d1u, s1), 0xf534ddc0u, s2),
    0xdb629599u, s3), 0x3c439041u, s4);
  if (bo != 0u) {
    let w3 = select(select(select(select(0xfc2757d1u, 0xf534ddc0u, s1), 0xdb629599u, s2),
      0x3c439041u, s3), 0xfe5163abu, s4);
    w0 = (w0 << bo) | (w1 >> (32u - bo));
    w1 = (w1 << bo) | (w2 >> (32u - bo));
    w2 = (w2 << bo) | (w3 >> (32u - bo));
  }
  // P = m * (w0:w1:w2); x * 2/pi = P * 2^-94; only bits 0..95 of P matter
  let p2 = ga_umul_f32(m, w2);
  let p1 = ga_umul_f32(m, w1);
  let p0 = ga_umul_f32(m, w0);
  let c0 = p2.x;
  let c1 = p2.y + p1.x;
  let k1 = select(0u, 1u, c1 < p2.y);
  let c2a = p1.y + p0.x;
  let c2 = c2a + k1;
  var q = c2 >> 30u;
  var a = c2 & 0x3fffffffu;
  var b = c1;
  var c = c0;
  var neg = false;
  if ((a & 0x20000000u) != 0u) {
    // fraction >= 1/2: use fraction - 1, rounding the quadrant up
    q = q + 1u;
    neg = true;
    c = ~c + 1u;
    let kc = select(0u, 1u, c == 0u);
    b = ~b + kc;
    let kb = select(0u, 1u, b == 0u && kc == 1u);
    a = (~a + kb) & 0x3fffffffu;
  }
  // fraction = a 2^-30 + b 2^-62 + c 2^-94 as hi + lo
  var h: u32;
  var l: u32;
  var sc: i32;
  if (a != 0u) {
    let s = countLeadingZeros(a);
    h = (a << s) | (b >> (32u - s));
    l = (b << s) | (c >> (32u - s));
    sc = -30 - i32(s);
  } else {
    let s = countLeadingZeros(b);
    h = b << s;
    l = c << s;
    if (s != 0u) { h = h | (c >> (32u - s)); }
    sc = -62 - i32(s);
  }
  let scale = ga_pow2i_f32(sc);
  let fh = f32(h & 0xffffff00u) * scale;
  let fl = (f32(h & 0xffu) + f32(l) * 2.3283064365386963e-10) * scale;
  var r = fh * 1.57079637050628662 + (fh * -4.37113900018624284e-8 + fl * 1.57079637050628662);
  if (neg) { r = -r; }
  if (x < 0.0) { r = -r; q = 4u - q; }
  return vec2<f32>(r, f32(q & 3u));
}"""
F32["umul"] = """fn ga_umul_f32(a: u32, b: u32) -> vec2<u32> {
  // (low, high) 32-bit halves of the 64-bit product a * b
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}"""
F32["sinpoly"] = """fn ga_sinpoly_f32(r: f32) -> f32 {
  let z = r * r;
  return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
}"""
F32["cospoly"] = """fn ga_cospoly_f32(r: f32) -> f32 {
  let z = r * r;
  return ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
}"""
F32["trigcw"] = """fn ga_trigcw_f32(x: f32) -> vec2<f32> {
  // (r, t) for a = |x|: a = q pi/2 + r, |r| <= pi/4 (about); the quadrant, q mod 4, is the low 2 bits of t's.
  // The common path, a < 512: q by ga_rint and r by Cody-Waite (ga_cwpio2; q = 0 leaves r = a exactly).
  // ga_rint rounds x 2/pi, not a 2/pi: its mask must not be provably a no-op, and a 2/pi + 1.5 2^23 is
  // provably positive (NVIDIA's 580 driver dropped the rounding in kernels with 64-bit integer arithmetic:
  // cos(0.066) gave 0.907); rounding is symmetric, so |q| is a's, and a's quadrant is minus x's.
  // Otherwise, in a branch rarely taken: Payne-Hanek, r NaN for inf and NaN.
  let a = abs(x);
  let t = x * 0.636619772367581343 + 12582912.0;
  if (a < 512.0) {
    let q = abs(ga_rint_f32(t));
    let r = ga_cwpio2_f32(a, q);
    let b = bitcast<u32>(t);
    return vec2<f32>(r, bitcast<f32>(select(b, 0u - b, x < 0.0)));
  }
  let rq = ga_trigpha_f32(a);
  let r = select(rq.x, ga_nan_f32(), bitcast<u32>(a) >= 0x7f800000u);
  return vec2<f32>(r, bitcast<f32>(u32(rq.y)));
}"""
# sin and cos from sin(a) and cos(a), a = |x|: both polynomials and a select (a branch on the quadrant
# would diverge), the quadrant's sign (and, for sin, x's) applied by flipping the sign bit: sin(-0) = -0
# with no zero test, NaN for inf and NaN through r.
F32["sin"] = """fn ga_sin_f32(x: f32) -> f32 {
  let rq = ga_trigcw_f32(x);
  let q = bitcast<u32>(rq.y);
  let v = select(ga_cospoly_f32(rq.x), ga_sinpoly_f32(rq.x), (q & 1u) == 0u);
  return bitcast<f32>(bitcast<u32>(v) ^ (((q << 30u) ^ bitcast<u32>(x)) & 0x80000000u));
}"""
F32["cos"] = """fn ga_cos_f32(x: f32) -> f32 {
  let rq = ga_trigcw_f32(x);
  let q = bitcast<u32>(rq.y);
  let v = select(ga_sinpoly_f32(rq.x), ga_cospoly_f32(rq.x), (q & 1u) == 0u);
  return bitcast<f32>(bitcast<u32>(v) ^ (((q + 1u) << 30u) & 0x80000000u));
}"""
F32["sincos"] = """fn ga_sincos_f32(x: f32) -> vec2<f32> {
  // (sin x, cos x) with one range reduction, for kernels that take both (render/wgsl.py)
  let rq = ga_trigcw_f32(x);
  let q = bitcast<u32>(rq.y);
  let s = ga_sinpoly_f32(rq.x);
  let c = ga_cospoly_f32(rq.x);
  let even = (q & 1u) == 0u;
  let sv = bitcast<u32>(select(c, s, even)) ^ (((q << 30u) ^ bitcast<u32>(x)) & 0x80000000u);
  let cv = bitcast<u32>(select(s, c, even)) ^ (((q + 1u) << 30u) & 0x80000000u);
  return vec2<f32>(bitcast<f32>(sv), bitcast<f32>(cv));
}"""
F32["tan"] = """fn ga_tan_f32(x: f32) -> f32 {
  if (ga_isnan_f32(x) || ga_isinf_f32(x)) { return ga_nan_f32(); }
  if (x == 0.0) { return x; }
  let rq = ga_trigred_f32(x);
  let r = rq.x;
  let z = r * r;
  var y = r;
  if (abs(r) > 1e-4) {
    y = (((((9.38540185543e-3 * z + 3.11992232697e-3) * z + 2.44301354525e-2) * z + 5.34112807005e-2) * z
         + 1.33387994085e-1) * z + 3.33331568548e-1) * z * r + r;
  }
  if ((u32(rq.y) & 1u) == 1u) { return -1.0 / y; }
  return y;
}"""
F32["asinpoly"] = """fn ga_asinpoly_f32(a: f32) -> f32 {
  // asin(a) for 0 <= a <= 1/2
  if (a < 1e-4) { return a; }
  let z = a * a;
  return ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z + 7.4953002686e-2) * z
          + 1.6666752422e-1) * z * a + a;
}"""
F32["asin"] = """fn ga_asin_f32(x: f32) -> f32 {
  if (ga_isnan_f32(x)) { return x; }
  let a = abs(x);
  if (a > 1.0) { return ga_nan_f32(); }
  if (x == 0.0) { return x; }
  var r: f32;
  if (a > 0.5) {
    let s = ga_asinpoly_f32(sqrt(0.5 * (1.0 - a)));
    r = (1.57079637050628662 - (s + s)) + -4.37113900018624284e-8;
  } else {
    r = ga_asinpoly_f32(a);
  }
  return ga_copysign_f32(r, x);
}"""
F32["acos"] = """fn ga_acos_f32(x: f32) -> f32 {
  if (ga_isnan_f32(x)) { return x; }
  if (abs(x) > 1.0) { return ga_nan_f32(); }
  if (x > 0.5) {
    let s = ga_asinpoly_f32(sqrt(0.5 * (1.0 - x)));
    return s + s;
  }
  if (x < -0.5) {
    let s = ga_asinpoly_f32(sqrt(0.5 * (1.0 + x)));
    return (3.14159274101257324 - (s + s)) + -8.74227800037248567e-8;
  }
  let s = ga_copysign_f32(ga_asinpoly_f32(abs(x)), x);
  return (1.57079637050628662 - s) + -4.37113900018624284e-8;
}"""
F32["atan"] = """fn ga_atan_f32(x: f32) -> f32 {
  if (ga_isnan_f32(x)) { return x; }
  let a = abs(x);
  var yh = 0.0;
  var yl = 0.0;
  var t = a;
  if (a > 2.414213562373095) {
    yh = 1.57079637050628662;
    yl = -4.37113900018624284e-8;
    t = -1.0 / a;
  } else if (a > 0.4142135623730950) {
    yh = 0.785398185253143311;
    yl = -2.18556950009312142e-8;
    t = (a - 1.0) / (a + 1.0);
  }
  let z = t * t;
  let p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * t + t;
  return ga_copysign_f32(yh + (p + yl), x);
}"""
F32["atan2core"] = """fn ga_atan2core_f32(y: f32, x: f32) -> f32 {
  // x, y finite and nonzero
  let ay = abs(y);
  let ax = abs(x);
  var r: f32;
  if (ay <= ax) {
    r = ga_atan_f32(ga_div_f32(ay, ax));
  } else {
    r = (1.57079637050628662 - ga_atan_f32(ga_div_f32(ax, ay))) + -4.37113900018624284e-8;
  }
  if (x < 0.0) { r = (3.14159274101257324 - r) + -8.74227800037248567e-8; }
  return ga_copysign_f32(r, y);
}"""
F32["powcore"] = """// the tables at module scope, not in the function: lavapipe lowers a dynamically indexed
// function-local array to a ladder of selects per call, and took 42 s to compile a vec4 pow kernel
var<private> ga_pow_rt_f32: array<f32, 64> = array<f32, 64>(
  1.0, 0.9765625, 0.9609375, 0.94921875, 0.93359375, 0.921875, 0.90625, 0.89453125, 0.8828125,
  0.87109375, 0.859375, 0.84765625, 0.8359375, 0.82421875, 0.81640625, 0.8046875, 0.796875,
  0.78515625, 0.77734375, 0.765625, 0.7578125, 0.75, 0.73828125, 0.73046875, 0.72265625, 0.71484375,
  0.70703125, 1.3984375, 1.3828125, 1.3671875, 1.35546875, 1.33984375, 1.328125, 1.3125, 1.30078125,
  1.28515625, 1.2734375, 1.26171875, 1.25, 1.23828125, 1.2265625, 1.21484375, 1.203125, 1.19140625,
  1.1796875, 1.16796875, 1.16015625, 1.1484375, 1.13671875, 1.12890625, 1.1171875, 1.109375,
  1.09765625, 1.08984375, 1.08203125, 1.0703125, 1.0625, 1.0546875, 1.04296875, 1.03515625,
  1.02734375, 1.01953125, 1.01171875, 1.0);
var<private> ga_pow_th_f32: array<u32, 64> = array<u32, 64>(
  0x00000000u, 0x3d0c2000u, 0x3d6b7000u, 0x3d99f000u, 0x3dcb0000u, 0x3df05000u, 0x3e116000u,
  0x3e24a000u, 0x3e382000u, 0x3e4be000u, 0x3e5fe000u, 0x3e742000u, 0x3e845000u, 0x3e8ec000u,
  0x3e95d000u, 0x3ea08000u, 0x3ea7b000u, 0x3eb2a000u, 0x3eba0000u, 0x3ec54000u, 0x3eccd000u,
  0x3ed47000u, 0x3ee02000u, 0x3ee7f000u, 0x3eefe000u, 0x3ef7f000u, 0x3f000000u, 0xbef7b000u,
  0xbeef6000u, 0xbee70000u, 0xbee0a000u, 0xbed81000u, 0xbed19000u, 0xbec8d000u, 0xbec23000u,
  0xbeb95000u, 0xbeb28000u, 0xbeabb000u, 0xbea4d000u, 0xbe9dd000u, 0xbe96d000u, 0xbe8fc000u,
  0xbe889000u, 0xbe815000u, 0xbe742000u, 0xbe656000u, 0xbe5b7000u, 0xbe4c7000u, 0xbe3d4000u,
  0xbe331000u, 0xbe23b000u, 0xbe195000u, 0xbe09a000u, 0xbdfe3000u, 0xbde8f000u, 0xbdc8c000u,
  0xbdb31000u, 0xbd9d5000u, 0xbd789000u, 0xbd4c2000u, 0xbd1f6000u, 0xbce49000u, 0xbc89b000u,
  0x00000000u);
var<private> ga_pow_tl_f32: array<u32, 64> = array<u32, 64>(
  0x00000000u, 0x36b8e4c5u, 0x36bd1f20u, 0x37be6f0au, 0x374af9acu, 0x378d7479u, 0x3856e156u,
  0x37f863b9u, 0x3740638fu, 0x366589e4u, 0x374f5000u, 0x383e9e9bu, 0x38e706cbu, 0x38c164ebu,
  0x3820c34cu, 0x37c02f88u, 0x387bb2cfu, 0x3895a4ccu, 0x38c5675eu, 0x38180ac0u, 0x3883954bu,
  0x38fcb8c1u, 0x3761678cu, 0x38d7308du, 0x38ec4eacu, 0x38461b01u, 0x3921995fu, 0xb8567329u,
  0xb89fea21u, 0xb824923au, 0xb8953612u, 0xb88df7f0u, 0xb8bb0540u, 0xb8dd4490u, 0xb8de19ecu,
  0xb6b1be5eu, 0xb8c7f234u, 0xb8848d9au, 0xb7f0979au, 0xb8e9d051u, 0xb8887e27u, 0xb717db62u,
  0xb883ed6au, 0xb8d5d127u, 0xb5be74e7u, 0xb631e3b8u, 0xb7cf1760u, 0xb7dd077eu, 0xb87f63e8u,
  0xb87b7d65u, 0xb7a9f984u, 0xb7e9e279u, 0xb7e1b489u, 0xb6d41e16u, 0xb6538d6eu, 0xb7216e46u,
  0xb7fb7d65u, 0xb63f74a0u, 0xb744c199u, 0xb75fe1a5u, 0xb7184a34u, 0xb6b1dd43u, 0xb5445ea6u,
  0x00000000u);
fn ga_powcore_f32(x: f32, y: f32) -> f32 {
  // x > 0 finite, y finite nonzero: 2^(y log2 x) with y log2 x carried to ~2^-30 absolute.
  // log2 x = e + T_j + log2(1 + u), u = m r_j - 1, |u| < 2^-6 (tables: 1/m to 9 bits, -log2 r_j as hi + lo);
  // every product that can be large is made exact by splitting factors into 12-bit halves.
  if (y == 1.0 || x == 1.0) { return x; }
  if (y == 2.0) { return x * x; }
  if (y == -1.0) { return 1.0 / x; }
  if (abs(y) > 1.8446744e19) { return select(0.0, ga_inf_f32(), (x > 1.0) == (y > 0.0)); }  // |y log2 x| > 2^40
  var v = x;
  var e = 0;
  if (v < bitcast<f32>(0x00800000u)) { v = v * 16777216.0; e = -24; }
  let b = bitcast<u32>(v);
  e = e + i32(b >> 23u) - 127;
  let j = (b >> 17u) & 63u;
  var m = bitcast<f32>((b & 0x007fffffu) | 0x3f800000u);
  if (j >= 27u) { m = m * 0.5; e = e + 1; }
  let rj = ga_pow_rt_f32[j];
  let mh = ga_mask12_f32(m);
  let uh = mh * rj - 1.0;
  let ul = (m - mh) * rj;
  let us = uh + ul;
  let tail = us * us * (-0.5 + us * (3.3333333333333333e-1 + us * (-0.25 + us * (0.2 + us * -1.6666666666666667e-1))));
  let g1 = bitcast<f32>(0x3fb8a000u);
  let a1 = ga_mask12_f32(uh);
  let a2 = uh - a1;
  let b1 = ga_mask12_f32(ul);
  let b2 = ul - b1;
  let th1 = bitcast<f32>(ga_pow_th_f32[j]);
  let zrest = bitcast<f32>(ga_pow_tl_f32[j]) + ((uh + ul) * bitcast<f32>(0x39a3b296u) + tail * 1.44269504088896341);
  let zs = th1 + (a1 * g1 + (a2 * g1 + (b1 * g1 + (b2 * g1 + zrest))));
  let zh = ga_mask12_f32(zs);
  let zl = ((((th1 - zh) + a1 * g1) + a2 * g1) + b1 * g1) + (b2 * g1 + zrest);
  let yh = ga_mask12_f32(y);
  let yl = y - yh;
  let fe = f32(e);
  let p1 = yh * fe;
  let p2 = yl * fe;
  let p3 = yh * zh;
  let p4 = yl * zh + y * zl;
  let n1 = ga_round_f32(p1);
  let n2 = ga_round_f32(p2);
  let n3 = ga_round_f32(p3);
  var f = ((p1 - n1) + (p2 - n2)) + ((p3 - n3) + p4);
  let n4 = ga_round_f32(f);
  f = f - n4;
  let n = (n1 + n2) + (n3 + n4);
  if (n > 300.0) { return ga_inf_f32(); }
  if (n < -300.0) { return 0.0; }
  let r = f * 0.693147180559945309;
  let zz = r * r;
  let p = (((((1.9875691500e-4 * r + 1.3981999507e-3) * r + 8.3334519073e-3) * r + 4.1665795894e-2) * r
           + 1.6666665459e-1) * r + 5.0000001201e-1) * zz + r + 1.0;
  return ga_ldexp_f32(p, i32(n));
}"""
F32["sinh"] = """fn ga_sinh_f32(x: f32) -> f32 {
  if (ga_isnan_f32(x) || ga_isinf_f32(x) || x == 0.0) { return x; }
  let a = abs(x);
  var r: f32;
  if (a < 1.0) {
    let e = ga_expm1_f32(a);
    r = 0.5 * (e + e / (e + 1.0));
  } else if (a < 9.0) {
    let e = ga_exp_f32(a);
    r = 0.5 * (e - 1.0 / e);
  } else if (a < 88.0) {
    r = 0.5 * ga_exp_f32(a);
  } else {
    r = ga_exp_f32(a - 0.693359375) * 1.00021221693;
  }
  return ga_copysign_f32(r, x);
}"""
F32["cosh"] = """fn ga_cosh_f32(x: f32) -> f32 {
  if (ga_isnan_f32(x)) { return x; }
  let a = abs(x);
  if (ga_isinf_f32(a)) { return a; }
  if (a < 9.0) {
    let e = ga_exp_f32(a);
    return 0.5 * (e + 1.0 / e);
  }
  if (a < 88.0) { return 0.5 * ga_exp_f32(a); }
  return ga_exp_f32(a - 0.693359375) * 1.00021221693;
}"""
# tanh(a) for |a| < 1, z = a * a, a scalar or vector: a + a^3 P(a^2)
_TANH_POLY = ("((((((-3.5845177e-4 * z + 2.3013637e-3) * z - 7.946106e-3) * z + 2.1486657e-2) * z - 5.38798e-2) * z\n"
              "         + 1.3332345e-1) * z - 3.3333296e-1) * (z * a) + a")
F32["tanh"] = """fn ga_tanh_f32(x: f32) -> f32 {
  // odd: computed for a = |x| and given x's sign bit (tanh(-0) = -0 with no zero test). |x| < 1 (chain8's
  // inputs, and the relative accuracy near 0) by a minimax polynomial, a + a^3 P(a^2), P of degree 6 (1.2 ULP
  // with separate roundings, 1 with a contracted fma); otherwise 1 - 2 / (exp(2a) + 1) with a clamped at 9.1
  // (where tanh rounds to 1, which the formula gives, also for inf); NaN by a select. Both values are computed
  // and one selected, without a branch: inputs on both sides of 1 in one warp ran both sides anyway, plus the
  // branch (H200, 2^28 float32, GPU ms: chain8 in [-3, 3] 0.907 -> 0.874, in [-30, 30] 1.008 -> 0.993; GELU
  // 0.616 -> 0.611 and 0.598 -> 0.579; in [-1, 1], where ga_tanhx4 takes the polynomial alone, 0.671 -> 0.687)
  let a = abs(x);
  let z = a * a;
  let rp = """ + _TANH_POLY + """;
  let re = 1.0 - 2.0 / (ga_expcore_f32(2.0 * min(a, 9.1)) + 1.0);
  let r = select(select(re, rp, a < 1.0), a, ga_isnan_f32(a));
  return bitcast<f32>(bitcast<u32>(r) | (bitcast<u32>(x) & 0x80000000u));
}"""
F32["tanhx4"] = """fn ga_tanhx4_f32(x: vec4<f32>) -> vec4<f32> {
  // ga_tanh of four values (a thread's vec4 lanes, render/wgsl.py VEC4_HELPERS), the same values: the
  // polynomial of the four lanes, then, where some |x| >= 1 (one test per thread), the exp form of the four
  // lanes without a branch per lane, and a select. H200, 2^28 float32, wall ms, against the form before (the
  // polynomial alone where all four |x| < 1, else ga_tanh lane by lane, a branch per lane that kept the
  // compiler from interleaving the lanes): chain8 in [-3, 3] 0.888 -> 0.846, in [-30, 30] 1.010 -> 0.978,
  // GELU 0.600 -> 0.546 and 0.567 -> 0.549; in [-1, 1] and [0, 1) unchanged (0.69-0.70 and 0.54)
  let a = abs(x);
  let z = a * a;
  var r = """ + _TANH_POLY + """;
  let big = a >= vec4<f32>(1.0);
  if (any(big)) {
    let b = 2.0 * min(a, vec4<f32>(9.1));
    let e = vec4<f32>(ga_expcore_f32(b.x), ga_expcore_f32(b.y), ga_expcore_f32(b.z), ga_expcore_f32(b.w));
    r = select(r, 1.0 - 2.0 / (e + 1.0), big);
  }
  r = select(r, a, a != a);
  return bitcast<vec4<f32>>(bitcast<vec4<u32>>(r) | (bitcast<vec4<u32>>(x) & vec4<u32>(0x80000000u)));
}"""
F32["asinh"] = """fn ga_asinh_f32(x: f32) -> f32 {
  if (ga_isnan_f32(x) || ga_isinf_f32(x) || x == 0.0) { return x; }
  let a = abs(x);
  var r: f32;
  if (a < 0.5) {
    let z = a * a;
    r = (((2.0122003309e-2 * z - 4.2699340972e-2) * z + 7.4847586088e-2) * z - 1.6666288134e-1) * z * a + a;
  } else if (a < 2.0) {
    r = ga_log1p_f32(a + a * a / (1.0 + sqrt(1.0 + a * a)));
  } else if (a < 1e18) {
    r = ga_log_f32(a + sqrt(a * a + 1.0));
  } else {
    r = ga_log_f32(a) + 0.693147180559945309;
  }
  return ga_copysign_f32(r, x);
}"""
F32["acosh"] = """fn ga_acosh_f32(x: f32) -> f32 {
  if (ga_isnan_f32(x)) { return x; }
  if (x < 1.0) { return ga_nan_f32(); }
  if (ga_isinf_f32(x)) { return x; }
  if (x > 4096.0) { return ga_log_f32(x) + 0.693147180559945309; }
  let z = x - 1.0;
  if (z < 0.5) {
    return ((((1.7596881071e-3 * z - 7.5272886713e-3) * z + 2.6454905019e-2) * z - 1.1784741703e-1) * z
            + 1.4142135263) * sqrt(z);
  }
  return ga_log1p_f32(z + sqrt(z * (x + 1.0)));
}"""
F32["atanh"] = """fn ga_atanh_f32(x: f32) -> f32 {
  if (ga_isnan_f32(x)) { return x; }
  let a = abs(x);
  if (a > 1.0) { return ga_nan_f32(); }
  if (a == 1.0) { return ga_copysign_f32(ga_inf_f32(), x); }
  if (a < 1e-4) { return x; }
  if (a < 0.5) {
    let z = x * x;
    return ((((1.81740078349e-1 * z + 8.24370301058e-2) * z + 1.46691431730e-1) * z + 1.99782164500e-1) * z
            + 3.33337300303e-1) * z * x + x;
  }
  return ga_copysign_f32(0.5 * ga_log1p_f32((a + a) / (1.0 - a)), x);
}"""
