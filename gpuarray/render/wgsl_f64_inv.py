"""float64 ``asin``, ``acos``, ``atan``, ``atan2``, ``asinh``, ``acosh`` and ``atanh`` in software (WGSL
helpers merged into ``wgsl_f64.F64_MATH``).

fdlibm (Sun Microsystems; FreeBSD msun's e_asin.c, e_acos.c, s_atan.c, e_atan2.c, s_asinh.c, e_acosh.c,
e_atanh.c; glibc's asinh, acosh and atanh are the same algorithms), on the bits of the argument as there:

- ``asin``: below 1/2 x + x^3 R(x^2), R = P / Q fdlibm's rational approximation of (asin(x) - x) / x^3
  (error below 2^-58.75); above, asin(x) = pi/2 - 2 asin(sqrt((1 - x) / 2)) with z = (1 - |x|) / 2 and
  s = sqrt(z), pi/2 in two parts, and for |x| <= 0.975 s split into f (its high 32 bits) and
  c = (z - f^2) / (s + f), so that 2 f is exact and pi/4 - 2 f cancels without loss.
- ``acos``: pi/2 - (x + x^3 R(x^2)) below 1/2 (pi/2 in two parts), pi - 2 (s + s z R(z)) below -1/2 and
  2 (f + (c + s z R(z))) above 1/2, with the same z, s, f and c.
- ``atan``: |x| reduced to [0, 7/16] by atan(x) = atan(c) + atan((x - c) / (1 + x c)) for c = 1/2, 1,
  3/2 and inf (the intervals [7/16, 11/16), [11/16, 19/16), [19/16, 39/16), [39/16, 2^66)), atan(c) in two
  parts, then fdlibm's odd polynomial of degree 23 split into even and odd parts.
- ``atan2``: e_atan2.c: the special values by the signs of x and y (C99 Annex F), +-pi/2 where
  |y / x| > 2^60, 0 or pi where x < 0 and |y / x| < 2^-60, else atan(|y / x|) and pi - (z - pi_lo).
- ``asinh``: log1p(|x| + x^2 / (1 + sqrt(1 + x^2))) below 2, log(2 |x| + 1 / (sqrt(x^2 + 1) + |x|))
  below 2^28, log(|x|) + ln2 above.
- ``acosh``: log1p(t + sqrt(2 t + t^2)), t = x - 1 below 2, log(2 x - 1 / (x + sqrt(x^2 - 1))) below
  2^28, log(x) + ln2 above.
- ``atanh``: 1/2 log1p(2 |x| / (1 - |x|)).
- for these three the argument of log / log1p is a double-double (Dekker's exact products on mask-split
  halves, ``ga_mul2``; fast two-sums, ``ga_add2``; sqrt and quotient with their exact residuals), and the
  logarithm is e_pow.c's log2 in extra precision (``ga_powlog2``, t1 + t2) times ln2 in two parts
  (``ga_logdd``): correctly rounded on 7,000 arguments per function checked against an exact reference
  (lavapipe), where the plain formulas on wgsl_f64's log1p (1 ULP off in a quarter of its results) were
  2-3 ULP from NumPy on the H200.

Compilers: lavapipe (Mesa's NIR) and NVIDIA's Vulkan compiler simplify floating-point expressions as if
they were exact, unless an operand is hidden from them: ``(a + b) - a`` becomes b (both), ``c1 - (u - c2)``
becomes (c1 + c2) - u (constants gathered), ``a b + a c`` becomes a (b + c), ``(a - b) - c`` becomes
a - (b + c) (NVIDIA), and NVIDIA fuses ``a * b + c`` into an fma. fdlibm's two-part constants (pi/2 =
pio2_hi + pio2_lo, atan(c) in two parts) and the double-doubles rely on the order of evaluation, so the
sums that carry a low part go through ``ga_keep``, an identity on every value but a signalling NaN (it sets
a NaN's quiet bit) that no algebraic rule sees through.

Largest errors against NumPy (tests/test_mathlib_f64_inv.py, scripts/gen_accuracy.py; asin, acos, atan
and atan2 also on about 18 million random arguments per function on lavapipe, over the domain, near +-1
and the branch points): asin, acos, atan and atan2 1 ULP on lavapipe and the H200 (2-5% of results 1 ULP
off); asinh, acosh and atanh 1 ULP on the H200, whose NumPy does not give glibc's results there (its SIMD
versions, presumably), and 2 on lavapipe, where NumPy is glibc, itself 1-2 ULP off (acosh(1.0004847194506379):
glibc 2 ULP off, ours correctly rounded); special values (NaN,
+-inf, +-0.0, +-1, the branch boundaries and their neighbours) as NumPy's. Constants are written as their
bits (``bitcast<f64>(0x...lu)``).
"""

from __future__ import annotations

from .wgsl_f64_trig import _c

LG2_H = 6.93147182464599609375e-01       # 0x3fe62e4300000000: ln2, 21 bits
LG2_L = -1.90465429995776804525e-09      # 0xbe205c610ca86c39

PIO2_HI = 1.57079632679489655800e+00     # 0x3ff921fb54442d18
PIO2_LO = 6.12323399573676603587e-17     # 0x3c91a62633145c07
PIO4_HI = 7.85398163397448278999e-01     # 0x3fe921fb54442d18
PI = 3.14159265358979311600e+00          # 0x400921fb54442d18
PI_LO = 1.2246467991473531772e-16        # 0x3ca1a62633145c07
LN2 = 6.93147180559945286227e-01         # 0x3fe62e42fefa39ef
# e_asin.c / e_acos.c: R(z) = P(z) / Q(z)
PS = (1.66666666666666657415e-01, -3.25565818622400915405e-01, 2.01212532134862925881e-01,
      -4.00555345006794114027e-02, 7.91534994289814532176e-04, 3.47933107596021167570e-05)
QS = (-2.40339491173441421878e+00, 2.02094576023350569471e+00, -6.88283971605453293030e-01,
      7.70381505559019352791e-02)
# s_atan.c: atan(1/2), atan(1), atan(3/2), atan(inf) in two parts, and the polynomial
ATANHI = (4.63647609000806093515e-01, 7.85398163397448278999e-01, 9.82793723247329054082e-01,
          1.57079632679489655800e+00)
ATANLO = (2.26987774529616870924e-17, 3.06161699786838301793e-17, 1.39033110312309984516e-17,
          6.12323399573676603587e-17)
AT = (3.33333333333329318027e-01, -1.99999999998764832476e-01, 1.42857142725034663711e-01,
      -1.11111104054623557880e-01, 9.09088713343650656196e-02, -7.69187620504482999495e-02,
      6.66107313738753120669e-02, -5.83357013379057348645e-02, 4.97687799461593236017e-02,
      -3.65315727442169155270e-02, 1.62858201153657823623e-02)

F64_INV: dict[str, str] = {}

F64_INV["keep"] = """fn ga_keep_f64(v: f64) -> f64 {
  // v itself, hidden from the compiler's algebra, so that (keep(a + b) - a) is not folded to b, nor a sum
  // regrouped, nor a product fused into a following add: a NaN gets its quiet bit (an identity on every
  // other value, and on quiet NaNs), which no algebraic rule can prove to be the identity. (An and-mask
  // that keeps every bit, u & (0x7ff...f | (u & sign)), was seen through by NVIDIA's compiler, which
  // then reassociated: (a + b) - a gave b on the H200.)
  let u = bitcast<u64>(v);
  return bitcast<f64>(select(u, u | 0x0008000000000000lu, (u & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu));
}"""

F64_INV["hi"] = """fn ga_hi_f64(x: f64) -> i32 {
  // the high 32 bits of x (fdlibm's GET_HIGH_WORD)
  return i32(u32(bitcast<u64>(x) >> 32u));
}"""

F64_INV["lo0"] = """fn ga_lo0_f64(x: f64) -> f64 {
  // x with its low 32 bits cleared (fdlibm's SET_LOW_WORD(x, 0))
  return bitcast<f64>(bitcast<u64>(x) & 0xffffffff00000000lu);
}"""

F64_INV["asinr"] = f"""fn ga_asinr_f64(t: f64) -> f64 {{
  // R(t) = P(t) / Q(t) of e_asin.c (t P(t) / Q(t) approximates (asin(x) - x) / x with t = x^2)
  let p = t * ({_c(PS[0])} + t * ({_c(PS[1])} + t * ({_c(PS[2])} + t * ({_c(PS[3])} + t * ({_c(PS[4])}
    + t * {_c(PS[5])})))));
  let q = f64(1) + t * ({_c(QS[0])} + t * ({_c(QS[1])} + t * ({_c(QS[2])} + t * {_c(QS[3])})));
  return p / q;
}}"""

F64_INV["asin"] = f"""fn ga_asin_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  let a = abs(x);
  if (a > f64(1)) {{ return ga_nan_f64(); }}
  if (a == f64(1)) {{ return ga_copysign_f64({_c(PIO2_HI)}, x); }}
  if (a < {_c(0.5)}) {{
    if (a < {_c(2.0 ** -27)}) {{ return x; }}
    return x + x * ga_asinr_f64(x * x);
  }}
  // asin(|x|) = pi/2 - 2 asin(s), z = (1 - |x|) / 2 (exact), s = sqrt(z)
  let z = (f64(1) - a) * {_c(0.5)};
  let r = ga_asinr_f64(z);
  let s = sqrt(z);
  var t: f64;
  if (ga_hi_f64(a) >= 0x3fef3333) {{
    // |x| > 0.975: pio2_hi - (2 (s + s r) - pio2_lo)
    t = {_c(PIO2_HI)} - ga_keep_f64(f64(2) * (s + s * r) - {_c(PIO2_LO)});
  }} else {{
    // s = f + c, f its high 32 bits: pio4_hi + (pio4_hi - 2 f) - (2 s r - (pio2_lo + 2 c))
    let f = ga_lo0_f64(s);
    let c = (z - f * f) / (s + f);
    let p = ga_keep_f64(f64(2) * s * r - ga_keep_f64({_c(PIO2_LO)} - f64(2) * c));
    let q = ga_keep_f64({_c(PIO4_HI)} - f64(2) * f);
    t = {_c(PIO4_HI)} - ga_keep_f64(p - q);
  }}
  return ga_copysign_f64(t, x);
}}"""

F64_INV["acos"] = f"""fn ga_acos_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  let a = abs(x);
  if (a > f64(1)) {{ return ga_nan_f64(); }}
  if (x == f64(1)) {{ return f64(0); }}
  if (x == f64(-1)) {{ return {_c(PI)}; }}
  if (a < {_c(0.5)}) {{
    if (a <= {_c(2.0 ** -57)}) {{ return {_c(PIO2_HI)}; }}
    // pio2_hi - (x - (pio2_lo - x R(x^2)))
    let r = ga_asinr_f64(x * x);
    return {_c(PIO2_HI)} - ga_keep_f64(x - ga_keep_f64({_c(PIO2_LO)} - x * r));
  }}
  if (x < f64(0)) {{
    // pi - 2 (s + (s R(z) - pio2_lo)), z = (1 + x) / 2
    let z = (f64(1) + x) * {_c(0.5)};
    let s = sqrt(z);
    let w = ga_keep_f64(ga_asinr_f64(z) * s - {_c(PIO2_LO)});
    return {_c(PI)} - ga_keep_f64(f64(2) * (s + w));
  }}
  // 2 (f + (s R(z) + c)), z = (1 - x) / 2, s = sqrt(z) = f + c, f its high 32 bits
  let z = (f64(1) - x) * {_c(0.5)};
  let s = sqrt(z);
  let f = ga_lo0_f64(s);
  let c = (z - f * f) / (s + f);
  let w = ga_asinr_f64(z) * s + c;
  return f64(2) * (f + w);
}}"""

_at = [_c(v) for v in AT]
F64_INV["atanr"] = f"""fn ga_atanr_f64(t: f64) -> f64 {{
  // t (s1 + s2) of s_atan.c: atan(t) = t - t (s1 + s2) for |t| <= 7/16
  let z = t * t;
  let w = z * z;
  let s1 = z * ({_at[0]} + w * ({_at[2]} + w * ({_at[4]} + w * ({_at[6]} + w * ({_at[8]} + w * {_at[10]})))));
  let s2 = w * ({_at[1]} + w * ({_at[3]} + w * ({_at[5]} + w * ({_at[7]} + w * {_at[9]}))));
  return t * (s1 + s2);
}}"""

F64_INV["atanpos"] = f"""fn ga_atanpos_f64(a: f64) -> f64 {{
  // atan(a) for a >= 2^-29 finite (s_atan.c's reduction)
  let ia = ga_hi_f64(a);
  if (ia >= 0x44100000) {{ return {_c(ATANHI[3])}; }}         // a >= 2^66: pi/2 (atanhi + atanlo, rounded)
  if (ia < 0x3fdc0000) {{ return a - ga_atanr_f64(a); }}      // a < 7/16
  var t: f64;
  var hi: f64;
  var lo: f64;
  if (ia < 0x3fe60000) {{                 // [7/16, 11/16): atan(1/2) + atan((2a - 1) / (2 + a))
    t = (f64(2) * a - f64(1)) / (f64(2) + a);
    hi = {_c(ATANHI[0])};
    lo = {_c(ATANLO[0])};
  }} else if (ia < 0x3ff30000) {{         // [11/16, 19/16): atan(1) + atan((a - 1) / (a + 1))
    t = (a - f64(1)) / (a + f64(1));
    hi = {_c(ATANHI[1])};
    lo = {_c(ATANLO[1])};
  }} else if (ia < 0x40038000) {{         // [19/16, 39/16): atan(3/2) + atan((a - 3/2) / (1 + 3/2 a))
    t = (a - {_c(1.5)}) / (f64(1) + {_c(1.5)} * a);
    hi = {_c(ATANHI[2])};
    lo = {_c(ATANLO[2])};
  }} else {{                               // [39/16, 2^66): atan(inf) + atan(-1 / a)
    t = f64(-1) / a;
    hi = {_c(ATANHI[3])};
    lo = {_c(ATANLO[3])};
  }}
  // atanhi - ((t (s1 + s2) - atanlo) - t)
  return hi - ga_keep_f64(ga_keep_f64(ga_atanr_f64(t) - lo) - t);
}}"""

F64_INV["atan"] = f"""fn ga_atan_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  let a = abs(x);
  if (a < {_c(2.0 ** -29)}) {{ return x; }}
  return ga_copysign_f64(ga_atanpos_f64(a), x);
}}"""

F64_INV["atan2"] = f"""fn ga_atan2_f64(y: f64, x: f64) -> f64 {{
  // e_atan2.c: C99 Annex F's special values by the signs of x and y, then atan(|y / x|)
  if (ga_isnan_f64(x) || ga_isnan_f64(y)) {{ return ga_nan_f64(); }}
  let sy = ga_signbit_f64(y);
  let sx = ga_signbit_f64(x);
  let ax = abs(x);
  let ay = abs(y);
  var z: f64;
  if (ay == f64(0)) {{
    // atan2(+-0, +anything) = +-0, atan2(+-0, -anything) = +-pi
    z = select(f64(0), {_c(PI)}, sx);
  }} else if (ax == f64(0)) {{
    z = {_c(PIO2_HI)};
  }} else if (ga_isinf_f64(ax)) {{
    if (ga_isinf_f64(ay)) {{
      z = select({_c(PIO4_HI)}, {_c(3 * PIO4_HI)}, sx);
    }} else {{
      z = select(f64(0), {_c(PI)}, sx);
    }}
  }} else if (ga_isinf_f64(ay)) {{
    z = {_c(PIO2_HI)};
  }} else {{
    let k = (ga_hi_f64(ay) - ga_hi_f64(ax)) >> 20u;
    if (k > 60) {{
      // |y / x| > 2^60: pi/2 + pi_lo / 2 (= pio2_hi rounded), whatever the sign of x
      z = {_c(PIO2_HI)};
    }} else {{
      var t = f64(0);
      if (!sx || k >= -60) {{
        let q = ay / ax;
        t = select(ga_atanpos_f64(q), q, q < {_c(2.0 ** -29)});
      }}
      // x < 0: pi - (t - pi_lo)
      z = select(t, {_c(PI)} - ga_keep_f64(t - {_c(PI_LO)}), sx);
    }}
  }}
  return ga_copysign_f64(z, y);
}}"""

# Exact products and sums for asinh, acosh and atanh, whose log1p argument is carried as a double-double
# (h + l), so that its rounding does not add to log1p's error: on the H200 (which contracts, reassociates,
# and computes log1p within 1 ULP but not the same ULP as glibc) the plain formulas were 2-3 ULP off NumPy.
# Products are Dekker's on halves split by a mask (no fma: lavapipe's rounds twice), every intermediate
# whose rounding matters goes through ga_keep.
F64_INV["hi26"] = """fn ga_hi26_f64(x: f64) -> f64 {
  // x with its low 27 bits cleared: its top 26 significant bits, so that products of two such are exact
  return bitcast<f64>(bitcast<u64>(x) & 0xfffffffff8000000lu);
}"""

F64_INV["mul2"] = """fn ga_mul2_f64(a: f64, b: f64) -> vec2<f64> {
  // a b = p + e, p the rounded product (Dekker: a = ah + al, b = bh + bl; ah bh, ah bl, al bh exact, al bl
  // below 2^-104 of p), for a b and its halves' products normal
  let p = ga_keep_f64(a * b);
  let ah = ga_hi26_f64(a);
  let al = a - ah;
  let bh = ga_hi26_f64(b);
  let bl = b - bh;
  let e = ga_keep_f64(ga_keep_f64(ga_keep_f64(ah * bh - p) + ah * bl) + al * bh) + al * bl;
  return vec2<f64>(p, e);
}"""

F64_INV["add2"] = """fn ga_add2_f64(a: f64, b: f64) -> vec2<f64> {
  // a + b = s + e exactly for |a| >= |b| (Dekker's fast two-sum)
  let s = ga_keep_f64(a + b);
  return vec2<f64>(s, b - ga_keep_f64(s - a));
}"""

F64_INV["sqrt2"] = """fn ga_sqrt2_f64(h: f64, l: f64) -> vec2<f64> {
  // sqrt(h + l) = r + c (|l| << h, h > 0 normal): c from the exact residual h - r^2
  let r = sqrt(h);
  let rr = ga_mul2_f64(r, r);
  return vec2<f64>(r, ((ga_keep_f64(h - rr.x) - rr.y) + l) / (f64(2) * r));
}"""

F64_INV["div2"] = """fn ga_div2_f64(nh: f64, nl: f64, dh: f64, dl: f64) -> vec2<f64> {
  // (nh + nl) / (dh + dl) = q + c: c from the exact residual nh - q dh
  let q = nh / dh;
  let p = ga_mul2_f64(q, dh);
  return vec2<f64>(q, (((ga_keep_f64(nh - p.x) - p.y) + nl) - q * dl) / dh);
}"""

F64_INV["logdd"] = f"""fn ga_logdd_f64(h: f64, l: f64, e: f64) -> f64 {{
  // ln(2^e (h + l)) for h > 0 normal, |l| <= 2^-50 h, e = 0 or log2(h) >= 22 (so that t1 + e is exact): log2(h)
  // = t1 + t2 in extra precision (e_pow.c's, ga_powlog2), times ln2 in two parts (t1 ln2_hi exact), plus
  // l / h; within about 0.5 ULP (the log1p of wgsl_f64 is 1 ULP off in a quarter of its results)
  let lg = ga_powlog2_f64(h);
  let t1 = ga_keep_f64(lg.x + e);
  return t1 * {_c(LG2_H)} + ga_keep_f64(lg.y * {_c(LN2)} + t1 * {_c(LG2_L)} + l / h);
}}"""

F64_INV["log1p2"] = """fn ga_log1p2_f64(h: f64, l: f64) -> f64 {
  // log1p(h + l) for h > 0, |l| <= 2^-52 h: 1 + h + l as a double-double, then ga_logdd
  var u = ga_add2_f64(f64(1), h);
  if (h > f64(1)) { u = ga_add2_f64(h, f64(1)); }
  return ga_logdd_f64(u.x, u.y + l, f64(0));
}"""

F64_INV["asinh"] = f"""fn ga_asinh_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  let a = abs(x);
  if (ga_isinf_f64(a) || a < {_c(2.0 ** -28)}) {{ return x; }}
  var w: f64;
  if (a > {_c(2.0 ** 28)}) {{
    w = ga_logdd_f64(a, f64(0), f64(1));                             // log(a) + ln2
  }} else if (a > f64(2)) {{
    // log(2 a + 1 / (sqrt(a^2 + 1) + a)), the sum as a double-double
    let s = ga_add2_f64(f64(2) * a, f64(1) / (sqrt(a * a + f64(1)) + a));
    w = ga_logdd_f64(s.x, s.y, f64(0));
  }} else {{
    // log1p(a + t / (1 + sqrt(1 + t))), t = a^2, the argument as a double-double
    let t = ga_mul2_f64(a, a);
    var u = ga_add2_f64(f64(1), t.x);
    if (t.x > f64(1)) {{ u = ga_add2_f64(t.x, f64(1)); }}
    let r = ga_sqrt2_f64(u.x, u.y + t.y);
    let d = ga_add2_f64(r.x, f64(1));
    let q = ga_div2_f64(t.x, t.y, d.x, d.y + r.y);
    let s = ga_add2_f64(a, q.x);
    w = ga_log1p2_f64(s.x, s.y + q.y);
  }}
  return ga_copysign_f64(w, x);
}}"""

F64_INV["acosh"] = f"""fn ga_acosh_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  if (x < f64(1)) {{ return ga_nan_f64(); }}
  if (ga_isinf_f64(x)) {{ return x; }}
  if (x >= {_c(2.0 ** 28)}) {{ return ga_logdd_f64(x, f64(0), f64(1)); }}            // log(x) + ln2
  if (x == f64(1)) {{ return f64(0); }}
  if (x > f64(2)) {{
    // log(2 x - 1 / (x + sqrt(x^2 - 1))), the difference as a double-double
    let s = ga_add2_f64(f64(2) * x, f64(-1) / (x + sqrt(x * x - f64(1))));
    return ga_logdd_f64(s.x, s.y, f64(0));
  }}
  // log1p(t + sqrt(2 t + t^2)), t = x - 1 (exact), the argument as a double-double
  let t = x - f64(1);
  let tt = ga_mul2_f64(t, t);
  let q = ga_add2_f64(f64(2) * t, tt.x);
  let r = ga_sqrt2_f64(q.x, q.y + tt.y);
  let s = ga_add2_f64(r.x, t);
  return ga_log1p2_f64(s.x, s.y + r.y);
}}"""

F64_INV["atanh"] = f"""fn ga_atanh_f64(x: f64) -> f64 {{
  if (ga_isnan_f64(x)) {{ return x; }}
  let a = abs(x);
  if (a > f64(1)) {{ return ga_nan_f64(); }}
  if (a == f64(1)) {{ return ga_copysign_f64(ga_inf_f64(), x); }}
  if (a < {_c(2.0 ** -28)}) {{ return x; }}
  // 1/2 log1p(2 a / (1 - a)), the quotient as a double-double
  let d = ga_add2_f64(f64(1), -a);
  let q = ga_div2_f64(a + a, f64(0), d.x, d.y);
  return ga_copysign_f64({_c(0.5)} * ga_log1p2_f64(q.x, q.y), x);
}}"""
