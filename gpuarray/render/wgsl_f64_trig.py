"""float64 ``sin``, ``cos`` and ``tan`` in software (WGSL helpers merged into ``wgsl_f64.F64_MATH``).

fdlibm (Sun Microsystems; FreeBSD msun's versions of e_rem_pio2.c, k_rem_pio2.c, k_sin.c, k_cos.c,
k_tan.c, s_sin.c, s_cos.c, s_tan.c), on a = |x| (sin and tan odd, cos even; fdlibm's reduction is
symmetric):

- ``rempio2``: a = n pi/2 + (y0 + y1), |y0 + y1| <= pi/4 (about), y0 + y1 a double-double. Below
  2^20 pi/2: n = round(a 2/pi), and pi/2 in three 33-bit parts with their tails (pio2_1, pio2_1t ...):
  a - n pio2_1 is exact (n < 2^20), and fdlibm's check on the exponent lost to cancellation decides
  whether a second (118 bits of pi/2) or third (151 bits) step is needed. Above: ``rempio2big``,
  Payne-Hanek as k_rem_pio2.c (prec 2, jk = 4, with its recomputation when the fraction's leading
  chunks cancel): a's 53 bits as three 24-bit chunks times the 24-bit chunks of 2/pi (the table
  ``ipio2``), every product and sum exact in float64, integer work in i32 only (u64 only for bit casts,
  as in wgsl_f64), the fraction times pi/2 in 24-bit parts (``PIo2``).
- ``ksin``, ``kcos``, ``ktan``: __kernel_sin / __kernel_cos / __kernel_tan on (y0, y1) with fdlibm's
  minimax coefficients (sin and cos degree 13 / 14 on [-pi/4, pi/4], tan's 13 terms with the pi/4 - x
  fold above 0.6744 and an accurate -1 / (x + r) for odd n).
- ``sin``, ``cos``, ``tan``: the kernel and sign by n mod 4; a NaN is returned as it is, +-inf gives NaN,
  |x| < 2^-27 gives x (sin, tan: -0.0 and subnormals kept) or 1 (cos).

Compilers: lavapipe folded ``f64(i32(v))`` to ``v`` (so the integer parts in the Payne-Hanek reduction
are ``ga_trunc_f64``, exact on the bits; an i32 would also saturate) and ``(1 - (1 - hz)) - hz`` to 0 (by
reassociating the constants: k_cos.c's rounding-error term, kept by a mask that changes nothing). The
tables are ``var<private>`` arrays at module scope, as wgsl_f32's pow tables (lavapipe lowers a dynamically
indexed function-local array to a ladder of selects per access); their names (``ga_rp_...``) are not helper
names. k_rem_pio2's working arrays are function-local in ``rempio2big`` and passed down by pointer: as
module-scope ``var<private>`` arrays they cost every thread of every sin / cos / tan kernel, large argument
or not (H200, float64 ``sin`` of 2^26 values in [-30, 30]: 12.7 GPU ms with them, 0.71 without; lavapipe
21.6 -> 18.3 ms at 2^18). A shader with all three compiles in about a second on lavapipe.

Largest errors on lavapipe (tests/test_mathlib_f64.py): 1 ULP from NumPy for all three, and within 1 ULP
of the correctly rounded value (measured against an exact reference on 12,000 arguments, 2-3% of them not
correctly rounded) also where NumPy (glibc) is not.
"""

from __future__ import annotations

import struct


def _b(v: float) -> str:
    """The bits of float64 ``v`` as a hexadecimal literal."""
    return f"{struct.unpack('<Q', struct.pack('<d', v))[0]:#018x}"


def _c(v: float) -> str:
    """A float64 constant as its bits, so that no literal parsing can change it (wgsl_f64, which
    imports this module, uses this one too)."""
    return f"bitcast<f64>({_b(v)}lu)"


# 2/pi in 24-bit chunks (k_rem_pio2.c's ipio2: 1584 bits, enough for |x| up to 2^1024)
IPIO2 = (
    0xA2F983, 0x6E4E44, 0x1529FC, 0x2757D1, 0xF534DD, 0xC0DB62, 0x95993C, 0x439041, 0xFE5163, 0xABDEBB,
    0xC561B7, 0x246E3A, 0x424DD2, 0xE00649, 0x2EEA09, 0xD1921C, 0xFE1DEB, 0x1CB129, 0xA73EE8, 0x8235F5,
    0x2EBB44, 0x84E99C, 0x7026B4, 0x5F7E41, 0x3991D6, 0x398353, 0x39F49C, 0x845F8B, 0xBDF928, 0x3B1FF8,
    0x97FFDE, 0x05980F, 0xEF2F11, 0x8B5A0A, 0x6D1F6D, 0x367ECF, 0x27CB09, 0xB74F46, 0x3F669E, 0x5FEA2D,
    0x7527BA, 0xC7EBE5, 0xF17B3D, 0x0739F7, 0x8A5292, 0xEA6BFB, 0x5FB11F, 0x8D5D08, 0x560330, 0x46FC7B,
    0x6BABF0, 0xCFBC20, 0x9AF436, 0x1DA9E3, 0x91615E, 0xE61B08, 0x659985, 0x5F14A0, 0x68408D, 0xFFD880,
    0x4D7327, 0x310606, 0x1556CA, 0x73A8C9, 0x60E27B, 0xC08C6B)
# pi/2 in 24-bit parts (k_rem_pio2.c's PIo2)
PIO2 = (1.57079625129699707031e+00, 7.54978941586159635335e-08, 5.39030252995776476554e-15,
        3.28200341580791294123e-22, 1.27065575308067607349e-29, 1.22933308981111328932e-36,
        2.73370053816464559624e-44, 2.16741683877804819444e-51)
# e_rem_pio2.c: 2/pi, and pi/2 in three 33-bit parts, each with the rest of pi/2 as a tail
INVPIO2 = 6.36619772367581382433e-01     # 0x3fe45f306dc9c883
PIO2_1 = 1.57079632673412561417e+00      # 0x3ff921fb54400000
PIO2_1T = 6.07710050650619224932e-11     # 0x3dd0b4611a626331
PIO2_2 = 6.07710050630396597660e-11      # 0x3dd0b4611a600000
PIO2_2T = 2.02226624879595063154e-21     # 0x3ba3198a2e037073
PIO2_3 = 2.02226624871116645580e-21      # 0x3ba3198a2e000000
PIO2_3T = 8.47842766036889956997e-32     # 0x397b839a252049c1
MEDIUM = 0x413921fb00000000              # |x| below (about 2^20 pi/2): the medium reduction
# k_sin.c, k_cos.c, k_tan.c
S = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
     2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
C = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
     -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)
T = (3.33333333333334091986e-01, 1.33333333333201242699e-01, 5.39682539762260521377e-02,
     2.18694882948595424599e-02, 8.86323982359930005737e-03, 3.59207910759131235356e-03,
     1.45620945432529025516e-03, 5.88041240820264096874e-04, 2.46463134818469906812e-04,
     7.81794442939557092300e-05, 7.14072491382608190305e-05, -1.85586374855275456654e-05,
     2.59073051863633712884e-05)
PIO4 = 7.85398163397448278999e-01        # 0x3fe921fb54442d18
PIO4LO = 3.06161699786838301793e-17      # 0x3c81a62633145c07
TINY = 2.0 ** -27                        # below: sin x = tan x = x, cos x = 1 (rounded)

F64_TRIG: dict[str, str] = {}

_ipio2 = ",".join(("\n  " if i % 11 == 0 else " ") + f"{v:#08x}" for i, v in enumerate(IPIO2))
_pio2 = ", ".join(f"{_b(v)}lu" for v in PIO2)
# k_rem_pio2's working arrays, function-local in ga_rempio2big and passed down by pointer
_RP_ARRAYS = (("x", "f64, 3"), ("f", "f64, 24"), ("q", "f64, 24"), ("fq", "f64, 24"), ("iq", "i32, 24"))
_RP_PARAMS = ",\n    ".join(f"p{n}: ptr<function, array<{t}>>" for n, t in _RP_ARRAYS)
_RP_ARGS = ", ".join(f"p{n}" for n, _ in _RP_ARRAYS)
F64_TRIG["rpq"] = """fn ga_rpq_f64(i: i32, jx: i32, RP_PARAMS) -> f64 {
  // q[i] = sum over j <= jx of x[j] f[jx + i - j]: 24-bit integers times 24-bit integers, exact
  var fw = f64(0);
  for (var j = 0; j <= jx; j = j + 1) { fw = fw + (*px)[j] * (*pf)[jx + i - j]; }
  return fw;
}""".replace("RP_PARAMS", _RP_PARAMS)

F64_TRIG["krempio2"] = f"""var<private> ga_rp_ipio2: array<i32, 66> = array<i32, 66>({_ipio2});
var<private> ga_rp_pio2: array<u64, 8> = array<u64, 8>({_pio2});
fn ga_krempio2_f64(e0: i32, nx: i32, {_RP_PARAMS}) -> vec3<f64> {{
  // fdlibm's __kernel_rem_pio2 (k_rem_pio2.c) for prec 2 (jk = 4): x = ((*px)[0 .. nx-1]) 2^e0 in
  // 24-bit chunks -> (y0, y1, n mod 8) with x = n pi/2 + y0 + y1
  let jk = 4;
  let jx = nx - 1;
  let jv = max((e0 - 3) / 24, 0);
  var q0 = e0 - 24 * (jv + 1);
  for (var i = 0; i <= jx + jk; i = i + 1) {{
    let j = jv - jx + i;
    (*pf)[i] = select(f64(ga_rp_ipio2[max(j, 0)]), f64(0), j < 0);
  }}
  for (var i = 0; i <= jk; i = i + 1) {{ (*pq)[i] = ga_rpq_f64(i, jx, {_RP_ARGS}); }}
  var jz = jk;
  var z: f64;
  var n: i32;
  var ih: i32;
  loop {{
    // distill q[] into 24-bit integers iq[], lowest first
    z = (*pq)[jz];
    for (var j = jz; j > 0; j = j - 1) {{
      let fw = ga_trunc_f64({_c(2.0 ** -24)} * z);
      (*piq)[jz - j] = i32(z - {_c(2.0 ** 24)} * fw);
      z = (*pq)[j - 1] + fw;
    }}
    // n: the integer part mod 8
    z = z * ga_pow2i_f64(q0);
    z = z - f64(8) * ga_floor_f64(z * {_c(0.125)});     // z < 2^53: exact (i32 would saturate)
    let zi = ga_trunc_f64(z);
    n = i32(zi);
    z = z - zi;
    ih = 0;
    if (q0 > 0) {{
      let i = (*piq)[jz - 1] >> u32(24 - q0);
      n = n + i;
      (*piq)[jz - 1] = (*piq)[jz - 1] - (i << u32(24 - q0));
      ih = (*piq)[jz - 1] >> u32(23 - q0);
    }} else if (q0 == 0) {{
      ih = (*piq)[jz - 1] >> 23u;
    }} else if (z >= {_c(0.5)}) {{
      ih = 2;
    }}
    if (ih > 0) {{
      // fraction > 1/2: n + 1 and the fraction 1 - q
      n = n + 1;
      var carry = 0;
      for (var i = 0; i < jz; i = i + 1) {{
        let j = (*piq)[i];
        if (carry == 0) {{
          if (j != 0) {{ carry = 1; (*piq)[i] = 0x1000000 - j; }}
        }} else {{
          (*piq)[i] = 0xffffff - j;
        }}
      }}
      if (q0 == 1) {{ (*piq)[jz - 1] = (*piq)[jz - 1] & 0x7fffff; }}
      if (q0 == 2) {{ (*piq)[jz - 1] = (*piq)[jz - 1] & 0x3fffff; }}
      if (ih == 2) {{
        z = f64(1) - z;
        if (carry != 0) {{ z = z - ga_pow2i_f64(q0); }}
      }}
    }}
    if (z != f64(0)) {{ break; }}
    var j = 0;
    for (var i = jz - 1; i >= jk; i = i - 1) {{ j = j | (*piq)[i]; }}
    if (j != 0) {{ break; }}
    // the leading chunks of the fraction are all zero: k more chunks of 2/pi, and again
    var k = 1;
    loop {{
      if (k >= jk || (*piq)[jk - k] != 0) {{ break; }}
      k = k + 1;
    }}
    for (var i = jz + 1; i <= jz + k; i = i + 1) {{
      (*pf)[jx + i] = f64(ga_rp_ipio2[jv + i]);
      (*pq)[i] = ga_rpq_f64(i, jx, {_RP_ARGS});
    }}
    jz = jz + k;
  }}
  return ga_krempio2tail_f64(z, jz, q0, n, ih, {_RP_ARGS});
}}"""

F64_TRIG["krempio2tail"] = f"""fn ga_krempio2tail_f64(zin: f64, jzin: i32, q0in: i32, n: i32, ih: i32,
    {_RP_PARAMS}) -> vec3<f64> {{
  // the end of __kernel_rem_pio2: the fraction in iq[0 .. jz] (and z) as doubles, times pi/2
  var z = zin;
  var jz = jzin;
  var q0 = q0in;
  if (z == f64(0)) {{
    // chop off zero chunks
    jz = jz - 1;
    q0 = q0 - 24;
    loop {{
      if (jz <= 0 || (*piq)[jz] != 0) {{ break; }}
      jz = jz - 1;
      q0 = q0 - 24;
    }}
  }} else {{
    // z into 24-bit chunks if necessary
    z = z * ga_pow2i_f64(-q0);
    if (z >= {_c(2.0 ** 24)}) {{
      let fw = ga_trunc_f64({_c(2.0 ** -24)} * z);
      (*piq)[jz] = i32(z - {_c(2.0 ** 24)} * fw);
      jz = jz + 1;
      q0 = q0 + 24;
      (*piq)[jz] = i32(fw);
    }} else {{
      (*piq)[jz] = i32(z);
    }}
  }}
  var fw = ga_pow2i_f64(q0);
  for (var i = jz; i >= 0; i = i - 1) {{
    (*pq)[i] = fw * f64((*piq)[i]);
    fw = fw * {_c(2.0 ** -24)};
  }}
  // fq[jz - i] = sum over k <= min(4, jz - i) of PIo2[k] q[i + k]
  for (var i = jz; i >= 0; i = i - 1) {{
    fw = f64(0);
    for (var k = 0; k <= 4 && k <= jz - i; k = k + 1) {{ fw = fw + bitcast<f64>(ga_rp_pio2[k]) * (*pq)[i + k]; }}
    (*pfq)[jz - i] = fw;
  }}
  // compress fq[] into y0 + y1
  fw = f64(0);
  for (var i = jz; i >= 0; i = i - 1) {{ fw = fw + (*pfq)[i]; }}
  let y0 = fw;
  fw = (*pfq)[0] - fw;
  for (var i = 1; i <= jz; i = i + 1) {{ fw = fw + (*pfq)[i]; }}
  let s = select(f64(1), f64(-1), ih != 0);
  return vec3<f64>(s * y0, s * fw, f64(n & 7));
}}"""

F64_TRIG["rempio2big"] = f"""fn ga_rempio2big_f64(a: f64) -> vec3<f64> {{
  // e_rem_pio2.c for a >= 2^20 pi/2 finite: a = z 2^e0, z in [2^23, 2^24) split into three 24-bit chunks
  var x: array<f64, 3>;
  var f: array<f64, 24>;
  var q: array<f64, 24>;
  var fq: array<f64, 24>;
  var iq: array<i32, 24>;
  let b = bitcast<u64>(a);
  let e0 = i32(u32(b >> 52u)) - 1046;
  var z = bitcast<f64>((b & 0x000ffffffffffffflu) | {_b(2.0 ** 23)}lu);
  for (var i = 0; i < 2; i = i + 1) {{
    x[i] = ga_trunc_f64(z);
    z = (z - x[i]) * {_c(2.0 ** 24)};
  }}
  x[2] = z;
  var nx = 3;
  if (x[2] == f64(0)) {{ nx = select(2, 1, x[1] == f64(0)); }}
  return ga_krempio2_f64(e0, nx, &x, &f, &q, &fq, &iq);
}}"""

F64_TRIG["rempio2"] = f"""fn ga_rempio2_f64(x: f64) -> vec3<f64> {{
  // (y0, y1, n) for a = |x| finite: a = n pi/2 + y0 + y1, |y0 + y1| <= pi/4 (about); y0 = a below pi/4
  let a = abs(x);
  let b = bitcast<u64>(a);
  if (a <= {_c(PIO4)}) {{ return vec3<f64>(a, f64(0), f64(0)); }}
  if (b >= {MEDIUM:#018x}lu) {{ return ga_rempio2big_f64(a); }}
  // e_rem_pio2.c's medium path: n < 2^20, so n pio2_1 is exact; the products as fmas, so that no
  // compiler merges n pio2_1 and n pio2_1t into n (pio2_1 + pio2_1t) (see wgsl_f64's ga_redln2)
  // n rounded from x 2/pi, not a 2/pi: ga_rint's mask must not be provably a no-op (a 2/pi + 1.5 2^52 is
  // positive; see wgsl_f32's ga_trigcw: NVIDIA's 580 driver dropped that rounding in float32); rounding
  // is symmetric, so |n| is a's
  let nf = abs(ga_rint_f64(x * {_c(INVPIO2)} + {_c(1.5 * 2.0 ** 52)}));
  var r = fma(-nf, {_c(PIO2_1)}, a);
  var w = nf * {_c(PIO2_1T)};
  var y0 = r - w;
  let j = i32(u32(b >> 52u));
  if (j - i32(u32(bitcast<u64>(y0) >> 52u) & 0x7ffu) > 16) {{
    // cancellation: a second step, pi/2 to 118 bits
    var t = r;
    w = nf * {_c(PIO2_2)};
    r = t - w;
    w = fma(nf, {_c(PIO2_2T)}, -((t - r) - w));
    y0 = r - w;
    if (j - i32(u32(bitcast<u64>(y0) >> 52u) & 0x7ffu) > 49) {{
      // and a third, 151 bits
      t = r;
      w = nf * {_c(PIO2_3)};
      r = t - w;
      w = fma(nf, {_c(PIO2_3T)}, -((t - r) - w));
      y0 = r - w;
    }}
  }}
  return vec3<f64>(y0, (r - y0) - w, nf);
}}"""

F64_TRIG["ksin"] = f"""fn ga_ksin_f64(x: f64, y: f64) -> f64 {{
  // __kernel_sin (k_sin.c): sin(x + y), |x + y| <= pi/4, y the tail of x
  let z = x * x;
  let w = z * z;
  let r = {_c(S[1])} + z * ({_c(S[2])} + z * {_c(S[3])}) + z * w * ({_c(S[4])} + z * {_c(S[5])});
  let v = z * x;
  return x - ((z * ({_c(0.5)} * y - v * r) - y) - v * {_c(S[0])});
}}"""

F64_TRIG["kcos"] = f"""fn ga_kcos_f64(x: f64, y: f64) -> f64 {{
  // __kernel_cos (k_cos.c): cos(x + y), |x + y| <= pi/4; 1 - z/2 and its rounding error
  let z = x * x;
  let w = z * z;
  let r = z * ({_c(C[0])} + z * ({_c(C[1])} + z * {_c(C[2])}))
          + w * w * ({_c(C[3])} + z * ({_c(C[4])} + z * {_c(C[5])}));
  let hz = {_c(0.5)} * z;
  // u = 1 - hz > 0: the mask on its sign bit changes nothing, but keeps compilers from folding (1 - u) - hz,
  // the rounding error of u, to 0 (lavapipe did: 1 - (1 - hz) -> hz by reassociating the constants)
  let u = bitcast<f64>(bitcast<u64>(f64(1) - hz) & 0x7ffffffffffffffflu);
  return u + (((f64(1) - u) - hz) + (z * r - x * y));
}}"""

_t = [_c(v) for v in T]
F64_TRIG["ktan"] = f"""fn ga_ktan_f64(xin: f64, yin: f64, odd: bool) -> f64 {{
  // __kernel_tan (k_tan.c): tan(x + y) (odd: -1 / tan(x + y)), |x + y| <= pi/4
  var x = xin;
  var y = yin;
  let big = abs(x) >= {_c(0.6744)};
  if (big) {{
    // tan(pi/4 - |x|) and the identity for tan(pi/4 - t) below
    if (x < f64(0)) {{ x = -x; y = -y; }}
    x = ({_c(PIO4)} - x) + ({_c(PIO4LO)} - y);
    y = f64(0);
  }}
  let z = x * x;
  let w = z * z;
  var r = {_t[1]} + w * ({_t[3]} + w * ({_t[5]} + w * ({_t[7]} + w * ({_t[9]} + w * {_t[11]}))));
  let v = z * ({_t[2]} + w * ({_t[4]} + w * ({_t[6]} + w * ({_t[8]} + w * ({_t[10]} + w * {_t[12]})))));
  let s = z * x;
  r = y + z * (s * (r + v) + y);
  r = r + {_t[0]} * s;
  let t = x + r;
  if (big) {{
    let iy = select(f64(1), f64(-1), odd);
    let e = iy - f64(2) * (x - (t * t / (t + iy) - r));
    return select(e, -e, xin < f64(0));
  }}
  if (!odd) {{ return t; }}
  // -1 / (x + r) accurately: t = x + r split as zh + zl, zh with its low 32 bits cleared
  let zh = bitcast<f64>(bitcast<u64>(t) & 0xffffffff00000000lu);
  let zl = r - (zh - x);
  let a = f64(-1) / t;
  let ah = bitcast<f64>(bitcast<u64>(a) & 0xffffffff00000000lu);
  let e = f64(1) + ah * zh;
  return ah + a * (e + ah * zl);
}}"""

_TRIG_HEAD = """  if (ga_isnan_f64(x)) { return x; }
  let a = abs(x);
  let b = bitcast<u64>(a);
  if (b == 0x7ff0000000000000lu) { return ga_nan_f64(); }
"""
F64_TRIG["sin"] = "fn ga_sin_f64(x: f64) -> f64 {\n" + _TRIG_HEAD + f"""  if (b < {_b(TINY)}lu) {{ return x; }}
  let y = ga_rempio2_f64(x);
  let n = i32(y.z) & 3;
  var v = select(ga_ksin_f64(y.x, y.y), ga_kcos_f64(y.x, y.y), (n & 1) == 1);
  if (n >= 2) {{ v = -v; }}
  return select(v, -v, x < f64(0));
}}"""
F64_TRIG["cos"] = "fn ga_cos_f64(x: f64) -> f64 {\n" + _TRIG_HEAD + f"""  if (b < {_b(TINY)}lu) {{ return f64(1); }}
  let y = ga_rempio2_f64(x);
  let n = i32(y.z) & 3;
  let v = select(ga_kcos_f64(y.x, y.y), ga_ksin_f64(y.x, y.y), (n & 1) == 1);
  return select(v, -v, n == 1 || n == 2);
}}"""
F64_TRIG["tan"] = "fn ga_tan_f64(x: f64) -> f64 {\n" + _TRIG_HEAD + f"""  if (b < {_b(TINY)}lu) {{ return x; }}
  let y = ga_rempio2_f64(x);
  let v = ga_ktan_f64(y.x, y.y, (i32(y.z) & 1) == 1);
  return select(v, -v, x < f64(0));
}}"""
_PAIR_HEAD = _TRIG_HEAD.replace("return x;", "return vec2<f64>(x, x);").replace(
    "return ga_nan_f64();", "return vec2<f64>(ga_nan_f64(), ga_nan_f64());")
F64_TRIG["sincos"] = "fn ga_sincos_f64(x: f64) -> vec2<f64> {\n" + _PAIR_HEAD + f"""\
  // sin and cos of one value with one range reduction (the renderer's choice where a kernel takes both);
  // the same operations as ga_sin_f64 and ga_cos_f64, so the same results
  if (b < {_b(TINY)}lu) {{ return vec2<f64>(x, f64(1)); }}
  let y = ga_rempio2_f64(x);
  let n = i32(y.z) & 3;
  let s = ga_ksin_f64(y.x, y.y);
  let c = ga_kcos_f64(y.x, y.y);
  let odd = (n & 1) == 1;
  var v = select(s, c, odd);
  if (n >= 2) {{ v = -v; }}
  let w = select(c, s, odd);
  return vec2<f64>(select(v, -v, x < f64(0)), select(w, -w, n == 1 || n == 2));
}}"""
