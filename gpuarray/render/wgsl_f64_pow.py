"""float64 ``pow`` (``power``, ``float_power``, ``**``) and ``exp10`` in software (WGSL helpers merged into
``wgsl_f64.F64_MATH``).

fdlibm's e_pow.c (Sun Microsystems, 2004; as in FreeBSD's msun), on the high and low 32-bit words of x and y
as there:

- special cases first, as C99 Annex F and NumPy: x^+-0 = 1 and 1^y = 1 (even for a NaN), NaN for a NaN
  otherwise; y = +-inf by |x| against 1 ((-1)^+-inf = 1); y = +-1, 2 and 1/2 (x > 0) as 1 / x, x, x x and
  sqrt(x) (the same as the correctly rounded result); x = +-0, +-inf, +-1 by the sign of y and whether y is
  an odd integer (-0^-3 = -inf, -inf^3 = -inf, -1^odd = -1); a negative x with a non-integer y gives NaN,
  with an odd integer y the negated result.
- |y| > 2^31: overflow or underflow unless |x| is within 2^-20 of 1, where log2(x) comes from
  x - x^2/2 + x^3/3 - x^4/4; else log2(|x|) = n + log2(m) with m in [sqrt(2)/2, sqrt(2)) (subnormals scaled
  by 2^53 first) reduced around 1 or 3/2, s = (m - c) / (m + c) in two parts and log2(m) from fdlibm's
  polynomial in s^2 in extra precision: t1 + t2, t1 with 21 significant bits.
- y log2(x) = p_h + p_l (y split the same way, y1 t1 exact), overflow above 1024 and underflow below -1075
  (the last half ULP tested on the parts), then 2^(p_h + p_l) = 2^n exp(r ln2), exp in fdlibm's rational
  form, and the exponent put in its bits (a subnormal result in two factors, so that it rounds once).

Compilers: lavapipe (Mesa's NIR) and NVIDIA's Vulkan compiler simplify floating-point expressions as if
they were exact (SPIR-V from naga carries no NoContraction): both fold ``(a + b) - a`` to b, NVIDIA also
regroups ``(a - b) - c`` as a - (b + c) and fuses ``a * b + c`` into an fma. So every step of e_pow.c whose
rounding matters (the low parts t2, p_l, w, the residuals of the splits, the overflow test
``p_l + ovt > z - p_h``) takes its operands through ``ga_keep`` (wgsl_f64_inv.py), an identity on every
value but a signalling NaN that no algebraic rule sees through; the products in those steps are exact (21 by
21 or 32 bits), so a fused multiply-add changes nothing. The infinities and zeros of overflow and underflow
are made on the bits (``ga_copysign``): NVIDIA's compiler took ``s * inf`` for undefined and returned
whatever the register held (z, p_h: 1023.99, 3072.0 for pow(5e-324, -3)).

``exp10`` is pow(10, x), as the op table's host version (``np.power(10.0, x)``). ``float_power`` and
``power`` use ``ga_pow`` directly; NumPy's fast paths (``x ** 2`` is ``square``, ``x ** 0.5`` ``sqrt``,
``x ** -1`` ``reciprocal``) are taken before, when the node is made (``OpDef.scalar_forms``).

Largest errors against NumPy (glibc's pow, correctly rounded in practice) on lavapipe and the H200
(tests/test_mathlib_f64_inv.py, scripts/gen_accuracy.py; 32 million random pairs on lavapipe before the
keeps were added): 1 ULP for pow, float_power and exp10 (about 6% of results 1 ULP off), over random bases
and exponents across the whole range, x near 1 with huge y, results near overflow and in the subnormals;
exact for integer powers with a representable result; special values as NumPy's (including the signs of
zeros and infinities). Constants are written as bits.
"""

from __future__ import annotations

from .wgsl_f64_trig import _c

# e_pow.c's constants
DP_H = 5.84962487220764160156e-01        # 0x3fe2b80340000000: log2(3/2), high part
DP_L = 1.35003920212974897128e-08        # 0x3e4cfdeb43cfd006
L = (5.99999999999994648725e-01, 4.28571428578550184252e-01, 3.33333329818377432918e-01,
     2.72728123808534006489e-01, 2.30660745775561754067e-01, 2.06975017800338417784e-01)
P = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
     -1.65339022054652515390e-06, 4.13813679705723846039e-08)
LG2 = 6.93147180559945286227e-01         # 0x3fe62e42fefa39ef
LG2_H = 6.93147182464599609375e-01       # 0x3fe62e4300000000
LG2_L = -1.90465429995776804525e-09      # 0xbe205c610ca86c39
OVT = 8.0085662595372944372e-17          # -(1024 - log2(ovfl + .5ulp))
CP = 9.61796693925975554329e-01          # 0x3feec709dc3a03fd: 2 / (3 ln2)
CP_H = 9.61796700954437255859e-01        # 0x3feec709e0000000
CP_L = -7.02846165095275826516e-09       # 0xbe3e2fe0145b01f5
IVLN2 = 1.44269504088896338700e+00       # 0x3ff71547652b82fe: 1 / ln2
# e_pow.c's ivln2_h (0x3ff7154760000000) has 24 significant bits, not the 21 its comment says, so that
# ivln2_h t (t = x - 1, up to 32 bits) rounds: pow(1.0000001770526101, 3844047975.998365) was 591 ULP off.
# Here 1/ln2 is split after 21 bits, and ivln2_h t is exact.
IVLN2_H = 1.4426946640014648             # 0x3ff7154700000000
IVLN2_L = 3.768874985636099e-07          # 0x3e994ae0bf85ddf4: 1/ln2 - IVLN2_H, to 2^-76

F64_POW: dict[str, str] = {}

F64_POW["powlog2"] = f"""fn ga_powlog2_f64(ax0: f64) -> vec2<f64> {{
  // log2(ax0) = t1 + t2 for ax0 > 0 finite (e_pow.c's general path), t1 with its low 32 bits zero
  var ax = ax0;
  var ix = ga_hi_f64(ax);
  var n = 0;
  if (ix < 0x00100000) {{
    ax = ax * {_c(2.0 ** 53)};
    n = -53;
    ix = ga_hi_f64(ax);
  }}
  n = n + (ix >> 20u) - 0x3ff;
  let j = ix & 0x000fffff;
  ix = j | 0x3ff00000;
  var k = 0;
  if (j <= 0x3988e) {{
    k = 0;                         // |m| < sqrt(3/2)
  }} else if (j < 0xbb67a) {{
    k = 1;                         // |m| < sqrt(3)
  }} else {{
    k = 0;
    n = n + 1;
    ix = ix - 0x00100000;
  }}
  ax = bitcast<f64>((u64(u32(ix)) << 32u) | (bitcast<u64>(ax) & 0xfffffffflu));
  let bp = select(f64(1), {_c(1.5)}, k == 1);
  let dph = select(f64(0), {_c(DP_H)}, k == 1);
  let dpl = select(f64(0), {_c(DP_L)}, k == 1);
  // ss = s_h + s_l = (m - bp) / (m + bp)
  let u = ax - bp;
  let v = f64(1) / (ax + bp);
  let ss = u * v;
  let s_h = ga_lo0_f64(ss);
  // t_h = m + bp, its high part
  let t_h = bitcast<f64>(u64(u32(((ix >> 1u) | 0x20000000) + 0x00080000 + (k << 18u))) << 32u);
  let t_l = ax - ga_keep_f64(t_h - bp);
  let s_l = v * (ga_keep_f64(u - s_h * t_h) - s_h * t_l);
  // log(m)
  var s2 = ss * ss;
  var r = s2 * s2 * ({_c(L[0])} + s2 * ({_c(L[1])} + s2 * ({_c(L[2])} + s2 * ({_c(L[3])} + s2 * ({_c(L[4])}
    + s2 * {_c(L[5])})))));
  r = r + s_l * (s_h + ss);
  s2 = s_h * s_h;
  let t3 = ga_lo0_f64(f64(3) + s2 + r);
  let t3l = r - ga_keep_f64(ga_keep_f64(t3 - f64(3)) - s2);
  // u + v = ss (1 + ...)
  let pu = s_h * t3;
  let pv = s_l * t3 + t3l * ss;
  // 2 / (3 log2) (ss + ...)
  let p_h = ga_lo0_f64(pu + pv);
  let p_l = pv - ga_keep_f64(p_h - pu);
  let z_h = {_c(CP_H)} * p_h;
  let z_l = {_c(CP_L)} * p_h + ga_keep_f64(p_l * {_c(CP)}) + dpl;
  // log2(ax) = (ss + ...) 2 / (3 log2) = n + dp_h + z_h + z_l
  let t = f64(n);
  let t1 = ga_lo0_f64(((z_h + z_l) + dph) + t);
  let t2 = z_l - ga_keep_f64(ga_keep_f64(ga_keep_f64(t1 - t) - dph) - z_h);
  return vec2<f64>(t1, t2);
}}"""

F64_POW["powexp2"] = f"""fn ga_powexp2_f64(ph: f64, pl: f64, j: i32) -> f64 {{
  // 2^(p_h + p_l) for -1075 <= p_h + p_l <= 1024 (j: the high word of p_h + p_l)
  var p_h = ph;
  let i = j & 0x7fffffff;
  var k = (i >> 20u) - 0x3ff;
  var n = 0;
  if (i > 0x3fe00000) {{
    // |z| > 1/2: n = [z + 1/2], p_h - n
    n = j + (0x00100000 >> u32(k + 1));
    k = ((n & 0x7fffffff) >> 20u) - 0x3ff;
    let tn = bitcast<f64>(u64(u32(n & ~(0x000fffff >> u32(k)))) << 32u);
    n = ((n & 0x000fffff) | 0x00100000) >> u32(20 - k);
    if (j < 0) {{ n = -n; }}
    p_h = ga_keep_f64(p_h - tn);
  }}
  let t = ga_lo0_f64(pl + p_h);
  let u = t * {_c(LG2_H)};
  let v = ga_keep_f64(pl - ga_keep_f64(t - p_h)) * {_c(LG2)} + ga_keep_f64(t * {_c(LG2_L)});
  let z = ga_keep_f64(u + v);
  let w = v - ga_keep_f64(z - u);
  let tt = z * z;
  let t1 = z - tt * ({_c(P[0])} + tt * ({_c(P[1])} + tt * ({_c(P[2])} + tt * ({_c(P[3])} + tt * {_c(P[4])}))));
  let r = ga_keep_f64((z * t1) / (t1 - f64(2)) - ga_keep_f64(w + ga_keep_f64(z * w)));
  let e = f64(1) - ga_keep_f64(r - z);
  // e 2^n: the exponent into the bits, or (subnormal result) two factors of at least 2^-538, normal
  // numbers both, so that only the last product rounds
  let je = ga_hi_f64(e) + (n << 20u);
  if ((je >> 20u) <= 0) {{
    let h = n / 2;
    return (e * ga_pow2i_f64(h)) * ga_pow2i_f64(n - h);
  }}
  return bitcast<f64>((u64(u32(je)) << 32u) | (bitcast<u64>(e) & 0xfffffffflu));
}}"""

F64_POW["pow"] = f"""fn ga_pow_f64(x: f64, y: f64) -> f64 {{
  let hx = ga_hi_f64(x);
  let lx = u32(bitcast<u64>(x) & 0xfffffffflu);
  let hy = ga_hi_f64(y);
  let ly = u32(bitcast<u64>(y) & 0xfffffffflu);
  let ix = hx & 0x7fffffff;
  let iy = hy & 0x7fffffff;
  // x^+-0 = 1; 1^y = 1, even for a NaN y; else NaN for a NaN
  if ((u32(iy) | ly) == 0u) {{ return f64(1); }}
  if (hx == 0x3ff00000 && lx == 0u) {{ return f64(1); }}
  if (ga_isnan_f64(x) || ga_isnan_f64(y)) {{ return ga_nan_f64(); }}
  // yisint for x < 0: 0 not an integer, 1 odd, 2 even
  var yisint = 0;
  if (hx < 0) {{
    if (iy >= 0x43400000) {{
      yisint = 2;
    }} else if (iy >= 0x3ff00000) {{
      let k = (iy >> 20u) - 0x3ff;
      if (k > 20) {{
        let jj = ly >> u32(52 - k);
        if ((jj << u32(52 - k)) == ly) {{ yisint = 2 - i32(jj & 1u); }}
      }} else if (ly == 0u) {{
        let jj = iy >> u32(20 - k);
        if ((jj << u32(20 - k)) == iy) {{ yisint = 2 - (jj & 1); }}
      }}
    }}
  }}
  // y = +-inf, +-1, 2, 1/2
  if (ly == 0u) {{
    if (iy == 0x7ff00000) {{
      if (ix == 0x3ff00000 && lx == 0u) {{ return f64(1); }}                       // (-1)^+-inf
      if (ix >= 0x3ff00000) {{ return select(f64(0), ga_inf_f64(), hy >= 0); }}   // |x| > 1
      return select(f64(0), ga_inf_f64(), hy < 0);                                 // |x| < 1
    }}
    if (iy == 0x3ff00000) {{
      if (hy < 0) {{ return ga_div_f64(f64(1), x); }}
      return x;
    }}
    if (hy == 0x40000000) {{ return x * x; }}
    if (hy == 0x3fe00000 && hx >= 0) {{ return ga_sqrt_f64(x); }}
  }}
  let ax = abs(x);
  // x = +-0, +-inf, +-1
  if (lx == 0u && (ix == 0x7ff00000 || ix == 0 || ix == 0x3ff00000)) {{
    var z = ax;
    if (hy < 0) {{ z = ga_div_f64(f64(1), z); }}
    if (hx < 0) {{
      if (ix == 0x3ff00000 && yisint == 0) {{ return ga_nan_f64(); }}      // (-1)^non-integer
      if (yisint == 1) {{ z = -z; }}                                        // (-x)^odd = -(x^odd)
    }}
    return z;
  }}
  // (x < 0)^(non-integer) is NaN; s: the sign of the result
  if (hx < 0 && yisint == 0) {{ return ga_nan_f64(); }}
  let s = select(f64(1), f64(-1), hx < 0 && yisint == 1);
  // +-inf and +-0 with the sign of the result, on the bits: no arithmetic on an infinity (NVIDIA's compiler
  // took s * inf for undefined and returned whatever was in the register: z, p_h)
  let sinf = ga_copysign_f64(ga_inf_f64(), s);
  let szero = ga_copysign_f64(f64(0), s);
  var t1: f64;
  var t2: f64;
  if (iy > 0x41e00000) {{
    // |y| > 2^31
    if (iy > 0x43f00000) {{
      // |y| > 2^64: overflow or underflow (|x| != 1 here)
      if (ix <= 0x3fefffff) {{ return select(f64(0), ga_inf_f64(), hy < 0); }}
      if (ix >= 0x3ff00000) {{ return select(f64(0), ga_inf_f64(), hy > 0); }}
    }}
    // over- or underflow unless x is within 2^-20 of 1
    if (ix < 0x3fefffff) {{ return select(szero, sinf, hy < 0); }}
    if (ix > 0x3ff00000) {{ return select(szero, sinf, hy > 0); }}
    // log2(x) by x - x^2/2 + x^3/3 - x^4/4, t = x - 1 (at most 32 significant bits, so ivln2_h t is exact)
    let t = ax - f64(1);
    let w = (t * t) * ({_c(0.5)} - t * ({_c(0.3333333333333333333333)} - t * {_c(0.25)}));
    let u = {_c(IVLN2_H)} * t;
    let v = t * {_c(IVLN2_L)} - w * {_c(IVLN2)};
    t1 = ga_lo0_f64(u + v);
    t2 = v - ga_keep_f64(t1 - u);
  }} else {{
    let lg = ga_powlog2_f64(ax);
    t1 = lg.x;
    t2 = lg.y;
  }}
  // y log2(x) = p_h + p_l: y = y1 + (y - y1), y1 with its low 32 bits zero, y1 t1 exact
  let y1 = ga_lo0_f64(y);
  let p_l = ga_keep_f64(y - y1) * t1 + y * t2;
  let p_h = y1 * t1;
  let z = ga_keep_f64(p_l + p_h);
  let j = ga_hi_f64(z);
  let i = u32(bitcast<u64>(z) & 0xfffffffflu);
  if (j >= 0x40900000) {{
    // z >= 1024: overflow, unless z is 1024 exactly and p_l takes it below
    if (j != 0x40900000 || i != 0u) {{ return sinf; }}
    if (ga_keep_f64(p_l + {_c(OVT)}) > ga_keep_f64(z - p_h)) {{ return sinf; }}
  }} else if ((j & 0x7fffffff) >= 0x4090cc00) {{
    // z <= -1075: underflow, unless z is -1075 exactly and p_l takes it above
    if (j != i32(0xc090cc00u) || i != 0u) {{ return szero; }}
    if (p_l <= ga_keep_f64(z - p_h)) {{ return szero; }}
  }}
  return s * ga_powexp2_f64(p_h, p_l, j);
}}"""

F64_POW["exp10"] = """fn ga_exp10_f64(x: f64) -> f64 {
  // 10^x as the op table's host version computes it: np.power(10.0, x)
  return ga_pow_f64(f64(10), x);
}"""
