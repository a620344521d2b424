"""WGSL helpers of SciPy's error function family: ``erf``, ``erfc``, ``erfcx``, ``ndtr``, ``log_ndtr``,
``ndtri``, ``erfinv``, ``erfcinv``, merged into ``wgsl_lib``'s tables (``FLT_E`` every float type,
``F32_E`` float32 versions that replace them). Built on the accurate ``exp``/``log``/``log1p``/``sqrt``
of ``wgsl_f32.py`` and ``wgsl_f64*.py``, so float64 runs on the device too.

- ``erf``, ``erfc`` (fdlibm's s_erf.c, as FreeBSD's msun and musl): on [0, 0.84375) x + x R(x^2); on
  [0.84375, 1.25) c + P(s) / Q(s), s = |x| - 1, c = 0.845062911510467529297 (a float32 value); above,
  erfc(x) = exp(-z^2 - 0.5625) exp((z - x)(z + x) + R(1 / x^2)) / x with z = x cut to half its bits (so
  that z^2 is exact): the rounding of x^2 is never exponentiated. The rational functions are fdlibm's
  (float64 coefficients, rounded once for float32).
- ``erfcx(x) = exp(x^2) erfc(x)``: above 1.25 the same rational function, exp(R - 0.5625) / x (the x^2
  cancels exactly, no overflow up to 1.8e308); below, exp(x^2) (through the same split of x) times erfc;
  for x < 0, 2 exp(x^2) - erfcx(-x).
- ``ndtr(x) = erfc(-x / sqrt 2) / 2``. In float64 as SciPy computes it (t = x * sqrt(1/2) rounded, then
  Cephes's branches), so that the two agree to the ULP even where SciPy's rounding of t costs up to
  x^2 / 2 ULP (450 at x = -30). In float32 without that error: the rounding error of t, from an exact
  product of x's and sqrt(1/2)'s top halves, corrects erfc(t) to first order.
- ``log_ndtr``: SciPy's formula (log(erfcx(-t) / 2) - t^2 below -1, log1p(-erfc(t) / 2) above), with
  x^2 / 2 in place of t^2; float32 takes erfc from the accurate ndtr above.
- ``ndtri``: Cephes's ndtri.c (SciPy's): y - 0.5 with a rational function in the middle, else
  z = sqrt(-2 log y) and z - log(z) / z - P(1/z) / (z Q(1/z)), two rational functions split at z = 8.
- ``erfinv``, ``erfcinv``: |y| <= 1/2 from the Maclaurin series of erfinv (26 terms in float64, 13 in
  float32); else from ndtri(q / 2), q = 1 - |y|
  (exact), and one Newton step on erfc written as (1 - q / erfc(x)) erfcx(x) sqrt(pi) / 2, which neither
  overflows nor underflows where erfc(x) is the smallest subnormal.

>>> import numpy as np, gpuarray as xp
>>> [round(v, 6) for v in xp.special.erf(xp.asarray(np.array([0.5, -2.0]), device="cpu")).tolist()]
[0.5205, -0.995322]
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal, getcontext
from fractions import Fraction

from .wgsl_f64_trig import _c  # a float64 constant as its bits

FLT_E: dict[str, str] = {}
F32_E: dict[str, str] = {}
F64_E: dict[str, str] = {}   # float64 only (merged into wgsl_f64's table)


def _poly(var: str, coefs: tuple[float, ...]) -> str:
    """Horner's form of sum(coefs[i] var^i), the constants as ``{T}(...)`` literals."""
    out = f"{{T}}({coefs[-1]!r})"
    for c in reversed(coefs[:-1]):
        out = f"({{T}}({c!r}) + {var} * {out})"
    return out


def _f32(v: float) -> str:
    """A float32 constant (``v`` rounded to float32) as its bits."""
    return f"bitcast<f32>(0x{struct.unpack('<I', struct.pack('<f', v))[0]:08x}u)"


# fdlibm s_erf.c: erf on [0, 0.84375): x + x (PP / QQ)(x^2); on [0.84375, 1.25): ERX + PA / QA (|x| - 1);
# erfc above 1.25: exp(-x^2 - 0.5625 + RA / SA (1 / x^2)) / x below 1 / 0.35, RB / SB up to 28
ERX = 8.45062911510467529297e-01
PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
      -5.77027029648944159157e-03, -2.37630166566501626084e-05)
QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
      1.32494738004321644526e-04, -3.96022827877536812320e-06)
PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
      3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
      -2.16637559486879084300e-03)
QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
      1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
      -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
      -8.12874355063065934246e+01, -9.81432934416914548592e+00)
SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
      6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
      6.57024977031928170135e+00, -6.04244152148580987438e-02)
RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
      -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
      -4.83519191608651397019e+02)
SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
      3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
      -2.24409524465858183362e+01)

# erf(x) = x + x y, y = (PP / QQ)(x^2), for |x| < 0.84375
FLT_E["erfy"] = f"""fn ga_erfy_{{S}}(x: {{T}}) -> {{T}} {{
  let z = x * x;
  return {_poly("z", PP)} / {_poly("z", QQ)};
}}"""
# erf(1 + s) - ERX for |x| in [0.84375, 1.25), s = |x| - 1
FLT_E["erfpq"] = f"""fn ga_erfpq_{{S}}(a: {{T}}) -> {{T}} {{
  let s = a - {{T}}(1);
  return {_poly("s", PA)} / {_poly("s", QA)};
}}"""
# log(erfc(a) a) + a^2 + 0.5625 for a >= 1.25 (fdlibm's R / S; at a = inf its limit)
FLT_E["erfrs"] = f"""fn ga_erfrs_{{S}}(a: {{T}}) -> {{T}} {{
  let s = {{T}}(1) / (a * a);
  if (a < {{T}}(2.857142857142857)) {{ return {_poly("s", RA)} / {_poly("s", SA)}; }}
  return {_poly("s", RB)} / {_poly("s", SB)};
}}"""
# exp(-a^2 + r): a cut to half its bits (z, so that z^2 is exact) and the rest, exp(-z^2) exp((z - a)(z + a) + r)
FLT_E["expmsq"] = """fn ga_expmsq_{S}(a: {T}, r: {T}) -> {T} {
  let z = bitcast<{T}>(bitcast<{U}>(a) & {HALFM});
  return ga_exp_{S}(-z * z) * ga_exp_{S}((z - a) * (z + a) + r);
}"""
# erfc(a) for a >= 1.25; 0 where a^2 exceeds log(float64's largest), as SciPy's (its results in float64
# stop there, short of the subnormals)
FLT_E["erfctail"] = """fn ga_erfctail_{S}(a: {T}) -> {T} {
  if (a * a > {T}(709.782712893384)) { return {T}(0); }
  return ga_div_{S}(ga_expmsq_{S}(a, ga_erfrs_{S}(a) - {T}(0.5625)), a);
}"""
FLT_E["erf"] = f"""fn ga_erf_{{S}}(x: {{T}}) -> {{T}} {{
  let a = abs(x);
  if (a < {{T}}(0.84375)) {{ return x + x * ga_erfy_{{S}}(x); }}
  if (a < {{T}}(1.25)) {{ return ga_copysign_{{S}}({{T}}({ERX!r}) + ga_erfpq_{{S}}(a), x); }}
  if (a >= {{T}}(6)) {{ return ga_copysign_{{S}}({{T}}(1), x); }}
  return ga_copysign_{{S}}({{T}}(1) - ga_erfctail_{{S}}(a), x);
}}"""
FLT_E["erfc"] = f"""fn ga_erfc_{{S}}(x: {{T}}) -> {{T}} {{
  let a = abs(x);
  if (a < {{T}}(0.84375)) {{
    let y = ga_erfy_{{S}}(x);
    if (x < {{T}}(0.25)) {{ return {{T}}(1) - (x + x * y); }}
    return {{T}}(0.5) - (x * y + (x - {{T}}(0.5)));
  }}
  if (a < {{T}}(1.25)) {{
    let pq = ga_erfpq_{{S}}(a);
    if (x > {{T}}(0)) {{ return {{T}}({1.0 - ERX!r}) - pq; }}
    return {{T}}(1) + ({{T}}({ERX!r}) + pq);
  }}
  if (x < {{T}}(-6)) {{ return {{T}}(2); }}
  let r = ga_erfctail_{{S}}(a);
  return select({{T}}(2) - r, r, x > {{T}}(0));
}}"""
# erfcx(a) = exp(a^2) erfc(a) for a >= 0
FLT_E["erfcxpos"] = f"""fn ga_erfcxpos_{{S}}(a: {{T}}) -> {{T}} {{
  if (a >= {{T}}(1.25)) {{
    if (ga_isinf_{{S}}(a)) {{ return {{T}}(0); }}
    return ga_div_{{S}}(ga_exp_{{S}}(ga_erfrs_{{S}}(a) - {{T}}(0.5625)), a);
  }}
  var e: {{T}};
  if (a < {{T}}(0.84375)) {{
    let y = ga_erfy_{{S}}(a);
    e = select({{T}}(0.5) - (a * y + (a - {{T}}(0.5))), {{T}}(1) - (a + a * y), a < {{T}}(0.25));
  }} else {{
    e = {{T}}({1.0 - ERX!r}) - ga_erfpq_{{S}}(a);
  }}
  return e / ga_expmsq_{{S}}(a, {{T}}(0));
}}"""
FLT_E["erfcx"] = """fn ga_erfcx_{S}(x: {T}) -> {T} {
  if (x >= {T}(0)) { return ga_erfcxpos_{S}(x); }
  if (ga_isinf_{S}(x)) { return ga_inf_{S}(); }
  // 2 exp(x^2) - erfcx(-x), exp(x^2) = exp(z^2) exp((x - z)(x + z)) as in expmsq (not 1 / exp(-x^2), which
  // is a subnormal, flushed on NVIDIA, near the top of float32's range)
  let z = bitcast<{T}>(bitcast<{U}>(x) & {HALFM});
  let e = ga_exp_{S}(z * z) * ga_exp_{S}((x - z) * (x + z));
  return {T}(2) * e - ga_erfcxpos_{S}(-x);
}"""

SQRT1_2 = math.sqrt(0.5)
getcontext().prec = 40
_SQRT1_2_EXACT = Decimal(2).sqrt() / 2      # to 40 digits: sqrt(1/2) = ch + cl with cl its exact rest
# ndtr(-a) = erfc(a / sqrt 2) / 2 for a >= 1 without the rounding of a / sqrt 2: t = a sqrt(1/2) rounded and
# its error tl = (ah ch - t) + (ah cl + al c) from a = ah + al and sqrt(1/2) = ch + cl, ah and ch cut to half
# their bits (so ah ch is exact and ah ch - t too): erfc(t + tl) = erfc(t) - 2 / sqrt(pi) exp(-t^2) tl to
# first order. float32's ndtr and log_ndtr, and the refinement of ndtri, use it.
def _ndtrq(suffix: str) -> str:
    if suffix == "f32":
        k, split, bits = _f32, "0xfffff000u", "u32"
        c = struct.unpack("<f", struct.pack("<f", SQRT1_2))[0]
        ch = struct.unpack("<f", struct.pack("<I", struct.unpack("<I", struct.pack("<f", c))[0] & 0xFFFFF000))[0]
    else:
        k, split, bits = _c, "0xfffffffff8000000lu", "u64"
        c = SQRT1_2
        ch = struct.unpack("<d", struct.pack("<Q", struct.unpack("<Q", struct.pack("<d", c))[0]
                                              & 0xFFFFFFFFF8000000))[0]
    return f"""fn ga_ndtrq_{suffix}(a: {suffix}) -> {suffix} {{
  // max(.., 0): t is used rounded everywhere (a compiler that fused a * c into an fma below, as NVIDIA's
  // did, would correct for a rounding that it never made: 250 ULP at a = 2.9)
  let t = max(a * {k(c)}, {suffix}(0));
  if (t * t > {suffix}(709.782712893384)) {{ return {suffix}(0); }}    // as SciPy's erfc
  let ah = bitcast<{suffix}>(bitcast<{bits}>(a) & {split});
  let tl = (ah * {k(ch)} - t) + (ah * {k(float(_SQRT1_2_EXACT - Decimal(ch)))} + (a - ah) * {k(c)});
  let q = {suffix}(0.5) * (ga_erfc_{suffix}(t) - {k(2.0 / math.sqrt(math.pi))} * ga_exp_{suffix}(-t * t) * tl);
  return select(q, {suffix}(0), !(q > {suffix}(0)));     // +0 where a flushed subnormal left -0 (NVIDIA)
}}"""


F32_E["ndtrq"] = _ndtrq("f32")
F64_E["ndtrq"] = _ndtrq("f64")
FLT_E["ndtr"] = f"""fn ga_ndtr_{{S}}(x: {{T}}) -> {{T}} {{
  if (abs(x) < {{T}}(1)) {{ return {{T}}(0.5) + {{T}}(0.5) * ga_erf_{{S}}(x * {{T}}({SQRT1_2!r})); }}
  let q = ga_ndtrq_{{S}}(abs(x));
  return select(q, {{T}}(1) - q, x > {{T}}(0));
}}"""
# log(1 - q), 0 <= q < 1: below 1/2 as -2 atanh(s) = -2 (s + s^3 / 3 + ...), s = q / (2 - q) <= 1/3 (18 terms:
# 9^-18 / 37 is below float64's rounding), else log(1 - q) (1 - q exact there). Not log1p(-q): its split of
# 1 + x into halves (and any such error-free step) needs every use of x to see one rounded value, and the
# compilers apply algebra that is not exact in floating point: NVIDIA's fused ndtr's last product into 1 + x
# but not into the rest (250 ULP at log_ndtr(2.9)), and folded (1 - |1 - q|) - q to 0.
_ATANH = tuple(1.0 / (2 * k + 1) for k in range(18))
FLT_E["log1mq"] = f"""fn ga_log1mq_{{S}}(q: {{T}}) -> {{T}} {{
  if (q >= {{T}}(0.5)) {{ return ga_log_{{S}}({{T}}(1) - q); }}
  // -(q + q^2 / 2) below 1e-9 (q^3 / 3 is below float64's rounding): q / (2 - q) would be a subnormal,
  // flushed in float32 on NVIDIA, where log_ndtr is still a normal number
  if (q < {{T}}(1e-9)) {{ return -(q + {{T}}(0.5) * q * q); }}
  let s = ga_div_{{S}}(q, {{T}}(2) - q);
  let s2 = s * s;
  return {{T}}(-2) * (s * {_poly("s2", _ATANH)});
}}"""
# SciPy's formula: log(erfcx(-x / sqrt 2) / 2) - x^2 / 2 below -1 (x^2 / 2 in place of SciPy's t^2, t = x / sqrt 2
# rounded; as (x / 2) x with x / 2 made on the bits, which no compiler turns back into 0.5 (x x): NVIDIA's did
# that to (0.5 x) x in float64, which overflows above 1.3e154), else log(1 - ndtr(-x))
FLT_E["logndtr"] = f"""fn ga_logndtr_{{S}}(x: {{T}}) -> {{T}} {{
  if (x < {{T}}(-1)) {{
    let h = bitcast<{{T}}>(bitcast<{{U}}>(-x) - ({{ONE}} << {{MB}}));      // -x / 2, exact (x < -1)
    return ga_log_{{S}}(ga_erfcx_{{S}}(-x * {{T}}({SQRT1_2!r})) * {{T}}(0.5)) + h * x;
  }}
  return ga_log1mq_{{S}}(ga_ndtr_{{S}}(-x));
}}"""

# Cephes ndtri.c: P0 / Q0 on |y - 0.5| <= 3/8 (in y^2), P1 / Q1 for z = sqrt(-2 log y) in [2, 8), P2 / Q2 above
P0 = (-1.23916583867381258016E0, 1.39312609387279679503E1, -5.66762857469070293439E1,
      9.80010754185999661536E1, -5.99633501014107895267E1)
Q0 = (-1.18331621121330003142E0, 1.59056225126211695515E1, -8.20372256168333339912E1,
      2.00260212380060660359E2, -2.25462687854119370527E2, 8.63602421390890590575E1,
      4.67627912898881538453E0, 1.95448858338141759834E0, 1.0)
P1 = (-8.57456785154685413611E-4, -3.50424626827848203418E-2, -1.40256079171354495875E-1,
      2.18663306850790267539E0, 1.46849561928858024014E1, 4.40805073893200834700E1,
      5.71628192246421288162E1, 3.15251094599893866154E1, 4.05544892305962419923E0)
Q1 = (-9.33259480895457427372E-4, -3.80806407691578277194E-2, -1.42182922854787788574E-1,
      2.50464946208309415979E0, 1.50425385692907503408E1, 4.13172038254672030440E1,
      4.53907635128879210584E1, 1.57799883256466749731E1, 1.0)
P2 = (6.23974539184983293730E-9, 2.65806974686737550832E-6, 3.01581553508235416007E-4,
      1.23716634817820021358E-2, 2.01485389549179081538E-1, 1.33303460815807542389E0,
      3.93881025292474443415E0, 6.91522889068984211695E0, 3.23774891776946035970E0)
Q2 = (6.79019408009981274425E-9, 2.89247864745380683936E-6, 3.28014464682127739104E-4,
      1.34204006088543189037E-2, 2.16236993594496635890E-1, 1.37702099489081330271E0,
      3.67983563856160859403E0, 6.02427039364742014255E0, 1.0)


EXPM2 = 0.13533528323661269189
# the magnitude of ndtri(y) for y < exp(-2), given log(y): Cephes's z - log(z) / z - P(1/z) / (z Q(1/z)),
# z = sqrt(-2 log y) (from log(y), so that erfcinv's log(q / 2) keeps its accuracy for a subnormal q)
FLT_E["ndtritail"] = f"""fn ga_ndtritail_{{S}}(ly: {{T}}) -> {{T}} {{
  let x = ga_sqrt_{{S}}({{T}}(-2) * ly);
  let x0 = x - ga_log_{{S}}(x) / x;
  let z = {{T}}(1) / x;
  if (x < {{T}}(8)) {{ return x0 - z * {_poly("z", P1)} / {_poly("z", Q1)}; }}
  return x0 - z * {_poly("z", P2)} / {_poly("z", Q2)};
}}"""
# one Newton step on ndtr(r) - y (r < 0, ndtr(r) normal), written as (1 - y / ndtr(r)) ndtr(r) / phi(r) with
# ndtr(r) / phi(r) = sqrt(pi / 2) erfcx(-r / sqrt 2): neither overflows nor underflows
FLT_E["ndtrinewton"] = f"""fn ga_ndtrinewton_{{S}}(r: {{T}}, y: {{T}}) -> {{T}} {{
  let p = ga_ndtrq_{{S}}(-r);
  if (p < bitcast<{{T}}>({{IMPL}})) {{ return r; }}
  let m = ga_erfcx_{{S}}(-r * {{T}}({SQRT1_2!r})) * {{T}}({math.sqrt(math.pi / 2)!r});     // ndtr(r) / phi(r)
  return r - ({{T}}(1) - ga_div_{{S}}(y, p)) * m;
}}"""
# ndtri(y) for exp(-2) < y < 1 - exp(-2): Cephes's w + w^3 P(w^2) / Q(w^2) times sqrt(2 pi), w = y - 1/2
# float32: Cephes's tail alone is within 3.1 ULP of the exact values (1.7 with the step, which took 60 % of
# the time of ndtri at 2^24 on the H200)
F32_E["ndtrinewton"] = "fn ga_ndtrinewton_f32(r: f32, y: f32) -> f32 { return r; }"
FLT_E["ndtric"] = f"""fn ga_ndtric_{{S}}(y: {{T}}) -> {{T}} {{
  // w = y - 1/2 rounds for y < 1/4; its error wl (exact: w + 1/2 is) corrects x by wl / phi(x)
  let w = y - {{T}}(0.5);
  let wl = y - (w + {{T}}(0.5));
  let w2 = w * w;
  let x = (w + w * (w2 * {_poly("w2", P0)} / {_poly("w2", Q0)})) * {{T}}({math.sqrt(2 * math.pi)!r});
  if (wl == {{T}}(0)) {{ return x; }}
  return x + wl * {{T}}({math.sqrt(2 * math.pi)!r}) / ga_expmsq_{{S}}(x * {{T}}({SQRT1_2!r}), {{T}}(0));
}}"""
# float32: Q's coefficients alternate in sign and cancel in float32 arithmetic (4.6 ULP at y = 0.159), so
# sqrt 2 erfinv(2 w) where |w| <= 1/4 (w and 2 w exact there), else Cephes's value and one Newton step
# on ndtr from the tail's side (|x| > 0.67 there, so the step's absolute error is a relative one)
F32_E["ndtric"] = f"""fn ga_ndtric_f32(y: f32) -> f32 {{
  let w = y - 0.5;
  if (abs(w) <= 0.25) {{ return ga_copysign_f32({_f32(math.sqrt(2))} * ga_erfinvc_f32(2.0 * abs(w)), w); }}
  let w2 = w * w;
  let x = (w + w * (w2 * {_poly("w2", P0)} / {_poly("w2", Q0)})) * {_f32(math.sqrt(2 * math.pi))};
  // the step from the tail's side: ndtr(-|x|) - min(y, 1 - y) (both exact or within an ULP of 0.135..0.25)
  let d = ga_ndtrq_f32(abs(x)) - select(y, 1.0 - y, w > 0.0);
  let t = d * {_f32(math.sqrt(2 * math.pi))} / ga_expmsq_f32(x * {_f32(SQRT1_2)}, 0.0);
  return x + select(-t, t, x > 0.0);
}}""".replace("{{T}}", "f32").replace("{T}", "f32")
FLT_E["ndtri"] = f"""fn ga_ndtri_{{S}}(y0: {{T}}) -> {{T}} {{
  if (y0 <= {{T}}(0) || y0 >= {{T}}(1)) {{
    if (y0 == {{T}}(0)) {{ return -ga_inf_{{S}}(); }}
    if (y0 == {{T}}(1)) {{ return ga_inf_{{S}}(); }}
    return ga_nan_{{S}}();
  }}
  var y = y0;
  let upper = y > {{T}}({1.0 - EXPM2!r});
  if (upper) {{ y = {{T}}(1) - y; }}
  if (y > {{T}}({EXPM2!r})) {{ return ga_ndtric_{{S}}(y); }}
  let r = ga_ndtrinewton_{{S}}(-ga_ndtritail_{{S}}(ga_log_{{S}}(y)), y);
  return select(r, -r, upper);
}}"""

# erfinv(a), 0 <= a <= 1/2: its Maclaurin series z P(z^2), z = sqrt(pi) a / 2, P's coefficients c_k / (2k + 1)
# with c_0 = 1, c_k = sum c_m c_(k-1-m) / ((m + 1)(2m + 1)) (exact fractions, rounded once); the terms fall
# as (pi a^2 / 4)^k <= 0.196^k: 26 terms for float64 (2 ULP from the exact values), 13 for float32. (Newton
# steps on erf from a shorter series took 3-4 times as long.)
def _erfinv_coefs(n: int) -> tuple[float, ...]:
    c = [Fraction(1)]
    for k in range(1, n):
        c.append(sum((c[m] * c[k - 1 - m] / ((m + 1) * (2 * m + 1)) for m in range(k)), Fraction(0)))
    return tuple(float(ck / (2 * k + 1)) for k, ck in enumerate(c))


def _erfinvc(suffix: str, terms: int) -> str:
    return (f"fn ga_erfinvc_{suffix}(a: {{T}}) -> {{T}} {{\n  let z = a * {{T}}({math.sqrt(math.pi) / 2!r});\n"
            f"  let w = z * z;\n  return z * {_poly('w', _erfinv_coefs(terms))};\n}}")


FLT_E["erfinvc"] = _erfinvc("{S}", 26)
F32_E["erfinvc"] = _erfinvc("f32", 13).replace("{T}", "f32")
# erfcinv(q), 0 < q <= 1/2: -ndtri(q / 2) / sqrt 2, then one Newton step on erfc:
# x + (erfc(x) - q) exp(x^2) sqrt(pi) / 2 = x + (1 - q / erfc(x)) erfcx(x) sqrt(pi) / 2
FLT_E["erfcinvq"] = f"""fn ga_erfcinvq_{{S}}(q: {{T}}) -> {{T}} {{
  var x: {{T}};
  if (q > {{T}}({2 * EXPM2!r})) {{ x = -ga_ndtri_{{S}}({{T}}(0.5) * q) * {{T}}({SQRT1_2!r}); }}
  else {{
    let ly = ga_erfcinvlog_{{S}}(q);
    if (ga_isinf_{{S}}(ly)) {{ return ga_inf_{{S}}(); }}
    x = ga_ndtritail_{{S}}(ly) * {{T}}({SQRT1_2!r});
  }}
  let e = ga_erfc_{{S}}(x);
  if (e < bitcast<{{T}}>({{IMPL}})) {{ return x; }}
  return x + ({{T}}(1) - ga_div_{{S}}(q, e)) * ga_erfcx_{{S}}(x) * {{T}}({math.sqrt(math.pi) / 2!r});
}}"""
# log(q / 2) for erfcinv's tail: log(q) - log 2; in float64 as SciPy's -ndtri(q / 2) / sqrt 2 computes it, with
# q / 2 rounded (a subnormal q loses its last bit; inf where q / 2 is 0, q = 5e-324). float32's SciPy takes q
# in float64, so it has neither.
FLT_E["erfcinvlog"] = f"""fn ga_erfcinvlog_{{S}}(q: {{T}}) -> {{T}} {{
  return ga_log_{{S}}(q) - {{T}}({math.log(2)!r});
}}"""
F64_E["erfcinvlog"] = """fn ga_erfcinvlog_f64(q: f64) -> f64 {
  // q / 2 rounded to nearest even on the bits for a subnormal q (lavapipe's subnormal product truncated it)
  let b = bitcast<u64>(q);
  let h = select(f64(0.5) * q, bitcast<f64>((b >> 1u) + (b & (b >> 1u) & 1lu)), b < 0x0010000000000000lu);
  return ga_log_f64(h);
}"""
FLT_E["erfinv"] = """fn ga_erfinv_{S}(y: {T}) -> {T} {
  let a = abs(y);
  if (a >= {T}(1)) { return select(ga_nan_{S}(), ga_copysign_{S}(ga_inf_{S}(), y), a == {T}(1)); }
  if (a == {T}(0)) { return {T}(0); }     // +0 for -0 too, as SciPy
  if (a <= {T}(0.5)) { return ga_copysign_{S}(ga_erfinvc_{S}(a), y); }
  return ga_copysign_{S}(ga_erfcinvq_{S}({T}(1) - a), y);
}"""
FLT_E["erfcinv"] = """fn ga_erfcinv_{S}(q: {T}) -> {T} {
  if (!(q > {T}(0) && q < {T}(2))) {
    if (q == {T}(0)) { return ga_inf_{S}(); }
    if (q == {T}(2)) { return -ga_inf_{S}(); }
    return ga_nan_{S}();
  }
  if (q > {T}(1.5)) { return -ga_erfcinvq_{S}({T}(2) - q); }
  if (q == {T}(1)) { return bitcast<{T}>({SIGN}); }      // -0, as SciPy's -ndtri(1/2) / sqrt 2
  if (q >= {T}(0.5)) {
    let y = {T}(1) - q;
    return ga_copysign_{S}(ga_erfinvc_{S}(abs(y)), y);
  }
  return ga_erfcinvq_{S}(q);
}"""
