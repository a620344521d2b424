"""WGSL helpers of SciPy's gamma and Bessel functions: ``gammaln``, ``psi`` (digamma), ``i0``, ``i0e``,
``i1``, ``i1e``, merged into ``wgsl_lib``'s tables (``FLT_G`` every float type, used for float64;
``F32_G`` float32 versions that replace them). The op table (core/ops.py, ``SCIPY_DEVICE``) wraps each in
a NaN guard; its host version, the oracle, is SciPy's float64 ufunc rounded once.

Algorithms (the templates are generated per type by the builders below):

- ``gammaln``: fdlibm's e_lgamma_r.c / e_lgammaf_r.c (Sun Microsystems, freely distributable; FreeBSD
  msun, musl src/math/lgamma_r.c and lgammaf_r.c), with its coefficients: below 2 three approximations
  (about 1 and 2 in 1 - x, 2 - x, x - 1, which are exact, so that the zeros 1 and 2 keep their relative
  accuracy; about the minimum 1.4616 a degree-14 polynomial in x - tc; near 0 a rational one) after
  lgamma(x) = lgamma(x + 1) - log(x) below 0.9; on [2, 8) a rational function of the fraction and the log
  of the product (y + 2) ... (y + n - 1); from 8 on (x - 1/2)(log x - 1) + w(1/x); from 2^58 on
  x (log x - 1). Negative x: on (-2, 0) lgamma(x + n) - log|x ... (x + n - 1)| (n = 1, 2; no zeros
  there, all terms positive); below, log(pi / |x sin(pi x)|) - lgamma(-x), sin(pi x) after an exact
  reduction (x - floor(x), then the distance to the nearest integer). One ``ga_log`` call serves all
  positive cases, one more the terms for tiny and negative x. Special values as SciPy's (Cephes lgam):
  +inf at 0, -0.0 and the negative integers (every |x| >= 2^52, float32 2^23), +-inf for +-inf;
  float64 also +inf for 0 < |x| <= 2^-1024 (SciPy's 1 / x overflows there) and above 2.556348e305
  (Cephes's MAXLGM).
- ``psi``, float64: xsf's ``digamma`` operation for operation (SciPy's, so that the results follow it
  to about an ULP): within 0.3 of the first negative zero x0 = -0.5040830082644554, its Taylor series
  sum_n (-1)^(n+1) zeta(n + 1, x0) (x - x0)^n summed until a term is below eps times the sum, with the
  Hurwitz zeta values as SciPy computes them (Cephes zeta; ``PSI_ZETA``: taken from scipy.special.zeta,
  some a few ULP off, which is what SciPy's own results carry); elsewhere Cephes psi.c: reflection
  psi(x) = psi(1 - x) - pi / tan(pi r), r the fraction of x (modf), for x < 0; for 0 < n <= 10 integer
  the harmonic sum minus Euler's constant; the recurrence down to [1, 2] (psi(x) = psi(x - 1) + 1 / (x
  - 1)) below 10, there Boost's rational approximation (x - root) (Y + P(x - 1) / Q(x - 1)) about the
  positive zero (the root in three parts); from 10 on the asymptotic series log x - 1 / 2x - sum B_2k /
  (2k x^2k) (seven terms, none from 1e17 on).
  float32: the same recurrence, rational function and series (three terms), but its own handling of
  x < 0, since float32 cannot follow SciPy's float64 rounding there: the reflection with the fraction
  reduced exactly to [-1/2, 1/2] and pi cot(pi r) as pi / tan(pi r) or pi tan(pi (1/2 - |r|)) (no
  argument near pi/2); within 0.3 of x0 psi(x) = psi(x + 2) - (2x + 1) / (x (x + 1)) with psi(x + 2) in
  Boost's form about the positive zero from x itself, and within 0.01 of x0 the Taylor series (five
  terms, exact coefficients polygamma(n, x0) / n!) in x - x0 (x0 in two parts).
  psi(+-0) = -+inf, psi(-inf) and psi(negative integer) NaN, psi(inf) = inf, as SciPy.
- ``i0``, ``i0e``, ``i1``, ``i1e``, float64: Cephes i0.c / i1.c as SciPy's (xsf's) installed version
  computes them: the Chebyshev expansions (chbevl, Clenshaw's recurrence, unrolled) of exp(-x) I(x) on
  [0, 8] in x / 2 - 2 and of exp(-x) sqrt(x) I(x) above 8 in 32 / x - 2, times exp(x) for i0 / i1 (so
  +inf from 709.78 on, where exp overflows, as SciPy; NaN at +-inf), i1 and i1e odd (i1(-0.0) = +0.0).
  float32: SciPy's Chebyshev series lose up to 17 ULP to Clenshaw's recurrence near the ends of their
  intervals in float32, so float32 evaluates polynomials fitted here (least squares in relative error
  on Chebyshev nodes against mpmath, coefficients rounded to float32) by Horner's rule: exp(-z) I0(z)
  and exp(-z) I1(z) on [0, 2] (I1 as z times a polynomial), [2, 4] and [4, 8] in z minus the interval's
  start (exact; [0, 2] about 1), and sqrt(z) exp(-z) I(z) above 8 as a polynomial in 1 / z; i0 and i1
  multiply by exp(z) (above 80 by exp(z / 2) twice, one scaled by 2^-64, so that results up to 3.4e38
  stay finite).

Accuracy (tests/test_special_ops.py, tests/test_elementwise.py, tests/test_special_gamma.py, lavapipe):
within 4 ULP of SciPy's float64 result rounded to the type, except where measured in ULP of a scale
(``SCALE`` / ``ERROR_SCALE`` in those tests), where the result is a small difference of larger terms or
SciPy's own float64 result is only absolutely accurate:

- gammaln, x < 0: ULP of max(|log(pi / |sin(pi x)|)|, |gammaln(1 - x)|) (>= log(pi)), the terms of the
  reflection, whose difference is small near the zeros at -2.457, -2.747, -3.144 ... (float32 and
  SciPy's float64 itself lose their relative accuracy there).
- gammaln, float64, 0 < x < 2: ULP of 1: SciPy's (Cephes lgam's) result there is log(z) + p with z a
  rounded 1 / x or 1 / (x (x + 1)), accurate only absolutely (Cephes's documentation: "the error
  criterion was relative when the function magnitude was greater than one but absolute when it was less
  than one"): 5e7 ULP off at x = 1 - 2^-30. Ours keeps relative accuracy there (tests/test_special_gamma.py
  checks it against exact values).
- psi, x < 0 farther than 0.3 from x0: ULP of max(|pi / tan(pi x)|, |psi(1 - x)|), the reflection's terms.

Largest errors measured on lavapipe against SciPy (the tests' inputs plus 38,000 more: uniform in
[-40, 40], [0, 3], [-1, 1], within 0.3 of x0, and 10^U(-40, 300)), in ULP (of the scales above where
they apply): gammaln float32 2.2, float64 4.0 (x = 13.14: ours 1.5 from the exact value, SciPy's 2.5 the
other way; SciPy is up to 3.6 off near 2.77); psi float32 3.8, float64 3.0; i0 float32 3.2, float64 3;
i0e float32 3.1, float64 0 (bit for bit); i1 float32 3.1, float64 3; i1e float32 2.4, float64 0. Against
exact values (tests/test_special_gamma.py): gammaln within 4 ULP at 1 +- 2^-52, 1 - 2^-30, 2 +- 2^-51 and
the minimum, psi at its zeros 1.4616 and -0.5041 (float32 within 4, float64 within SciPy's 8 + 4).
"""

from __future__ import annotations

import struct

from .wgsl_f64_trig import _c  # a float64 constant as its bits

FLT_G: dict[str, str] = {}   # float64 (generic templates: {S}, {T}, ... as in wgsl_lib)
F32_G: dict[str, str] = {}   # float32 versions


def _k(t: str, v: float) -> str:
    """Constant ``v`` for type ``t`` ("f64" or "f32") as its bits, so that no literal parsing changes it."""
    if t == "f64":
        return _c(v)
    return f"bitcast<f32>({struct.unpack('<I', struct.pack('<f', v))[0]:#010x}u)"


def _horner(t: str, u: str, coefs: tuple[float, ...] | list[float]) -> str:
    """sum_k coefs[k] u^k by Horner's rule (coefficients lowest first)."""
    expr = _k(t, coefs[-1])
    for c in coefs[-2::-1]:
        expr = f"({expr} * {u} + {_k(t, c)})"
    return expr


# A value hidden from the compiler's algebra (wgsl_f64_inv's ga_keep, for either type): the sums that
# carry a root in two or three parts must not be regrouped ((x - r1) - r2 into x - (r1 + r2)).
FLT_G["gkeep"] = """fn ga_gkeep_{S}(v: {T}) -> {T} {
  let u = bitcast<{U}>(v);
  return bitcast<{T}>(select(u, u | {NANB}, (u & {ABSM}) > {INFB}));
}"""


# ---------------------------------------------------------------- gammaln (fdlibm e_lgamma_r.c)
LG_A = (7.72156649015328655494e-02, 3.22467033424113591611e-01, 6.73523010531292681824e-02,
        2.05808084325167332806e-02, 7.38555086081402883957e-03, 2.89051383673415629091e-03,
        1.19270763183362067845e-03, 5.10069792153511336608e-04, 2.20862790713908385557e-04,
        1.08011567247583939954e-04, 2.52144565451257326939e-05, 4.48640949618915160150e-05)
LG_TC = 1.46163214496836224576e+00      # the minimum of lgamma (float32: its own tc, tf, tt)
LG_TF = -1.21486290535849611461e-01     # lgamma(tc)
LG_TT = -3.63867699703950536541e-18     # -(the rest of lgamma(tc))
LG_TC32, LG_TF32, LG_TT32 = 1.4616321325e+00, -1.2148628384e-01, 6.6971006518e-09
LG_T = (4.83836122723810047042e-01, -1.47587722994593911752e-01, 6.46249402391333854778e-02,
        -3.27885410759859649565e-02, 1.79706750811820387126e-02, -1.03142241298341437450e-02,
        6.10053870246291332635e-03, -3.68452016781138256760e-03, 2.25964780900612472250e-03,
        -1.40346469989232843813e-03, 8.81081882437654011382e-04, -5.38595305356740546715e-04,
        3.15632070903625950361e-04, -3.12754168375120860518e-04, 3.35529192635519073543e-04)
LG_U = (-7.72156649015328655494e-02, 6.32827064025093366517e-01, 1.45492250137234768737e+00,
        9.77717527963372745603e-01, 2.28963728064692451092e-01, 1.33810918536787660377e-02)
LG_V = (1.0, 2.45597793713041134822e+00, 2.12848976379893395361e+00, 7.69285150456672783825e-01,
        1.04222645593369134254e-01, 3.21709242282423911810e-03)
LG_S = (-7.72156649015328655494e-02, 2.14982415960608852501e-01, 3.25778796408930981787e-01,
        1.46350472652464452805e-01, 2.66422703033638609560e-02, 1.84028451407337715652e-03,
        3.19475326584100867617e-05)
LG_R = (1.0, 1.39200533467621045958e+00, 7.21935547567138069525e-01, 1.71933865632803078993e-01,
        1.86459191715652901344e-02, 7.77942496381893596434e-04, 7.32668430744625636189e-06)
LG_W = (4.18938533204672725052e-01, 8.33333333333329678849e-02, -2.77777777728775536470e-03,
        7.93650558643019558500e-04, -5.95187557450339963135e-04, 8.36339918996282139126e-04,
        -1.63092934096575273989e-03)
PI = 3.14159265358979311600e+00


def _f32(v: float) -> float:
    """v rounded to float32."""
    return float(struct.unpack('<f', struct.pack('<f', v))[0])


def _gammaln(t: str) -> tuple[str, str, str]:
    """(ga_gammaln, ga_lgpos, ga_gsinpi) templates for type ``t``."""
    def k(v: float) -> str:
        return _k(t, v)
    tc, tf, tt = (LG_TC, LG_TF, LG_TT) if t == "f64" else (_f32(LG_TC32), LG_TF32, LG_TT32)
    # below TINY: -log|x| (fdlibm: 2^-70, float32 2^-21); at or below ZINF: +inf (SciPy float64: 1 / x
    # overflows below 2^-1024; float32 only 0); from BIGINT on every value is an integer
    tiny, zinf, bigint = (2.0 ** -70, 2.0 ** -1024, 2.0 ** 52) if t == "f64" else (2.0 ** -21, 0.0, 2.0 ** 23)
    maxlgm = f"\n  if (x > {k(2.556348e305)}) {{ return ga_inf_{{S}}(); }}     // Cephes's MAXLGM" if t == "f64" else ""
    a_even = _horner(t, "z", LG_A[0::2])
    a_odd = _horner(t, "z", LG_A[1::2])
    lgpos = f"""fn ga_lgpos_{{S}}(a: {{T}}) -> {{T}} {{
  // lgamma(a) for a >= 2^-70 (float32 2^-21), finite (fdlibm e_lgamma_r.c): r + lk log(lg), one log
  if (a == {{T}}(1) || a == {{T}}(2)) {{ return {{T}}(0); }}
  var r = {{T}}(0);
  var lg = {{T}}(1);
  var lk = {{T}}(0);
  if (a < {{T}}(2)) {{
    // y: 1 - a, 2 - a, a - 1 (exact) about the zeros, a - tc about the minimum, or a; below 0.9
    // lgamma(a) = lgamma(a + 1) - log(a)
    let lo = a <= {{T}}(0.9);
    let c = select({{T}}(1), {{T}}(0), lo);
    var i = 2;
    var y = select(a - {{T}}(1), a, lo);
    if (a >= c + {k(0.7316)}) {{
      i = 0;
      y = (c + {{T}}(1)) - a;
    }} else if (a >= c + {k(0.23164)}) {{
      i = 1;
      y = a - (c + {k(tc - 1.0)});
    }}
    if (lo) {{ lk = {{T}}(-1); lg = a; }}
    let z = y * y;
    if (i == 0) {{
      r = (y * {a_even} + z * {a_odd}) - {{T}}(0.5) * y;
    }} else if (i == 1) {{
      let w = z * y;
      let p1 = {_horner(t, "w", LG_T[0::3])};
      let p2 = {_horner(t, "w", LG_T[1::3])};
      let p3 = {_horner(t, "w", LG_T[2::3])};
      r = {k(tf)} + (z * p1 - ({k(tt)} - w * (p2 + y * p3)));
    }} else {{
      r = ga_div_{{S}}(y * {_horner(t, "y", LG_U)}, {_horner(t, "y", LG_V)}) - {{T}}(0.5) * y;
    }}
  }} else if (a < {{T}}(8)) {{
    // lgamma(n + y) = lgamma(2 + y) + log((y + 2) ... (y + n - 1))
    let n = ga_floor_{{S}}(a);
    let y = a - n;
    r = {{T}}(0.5) * y + ga_div_{{S}}(y * {_horner(t, "y", LG_S)}, {_horner(t, "y", LG_R)});
    for (var j = {{T}}(2); j < n; j = j + {{T}}(1)) {{ lg = lg * (y + j); }}
    lk = {{T}}(1);
  }} else {{
    lg = a;
  }}
  let l = ga_log_{{S}}(lg);
  if (a < {{T}}(8)) {{ return r + lk * l; }}
  if (a < {k(2.0 ** 58)}) {{
    let z = ga_div_{{S}}({{T}}(1), a);
    let y = z * z;
    let w = {k(LG_W[0])} + z * {_horner(t, "y", LG_W[1:])};
    return (a - {{T}}(0.5)) * (l - {{T}}(1)) + w;
  }}
  return a * (l - {{T}}(1));
}}"""
    gsinpi = f"""fn ga_gsinpi_{{S}}(a: {{T}}) -> {{T}} {{
  // |sin(pi a)| for 0 < a < 2^52 (float32 2^23): the distance to the nearest integer, exact, times pi
  let f = a - ga_floor_{{S}}(a);
  return ga_sin_{{S}}({k(PI)} * select(f, {{T}}(1) - f, f > {{T}}(0.5)));
}}"""
    gammaln = f"""fn ga_gammaln_{{S}}(x: {{T}}) -> {{T}} {{
  // SciPy's gammaln (log|Gamma(x)|) in fdlibm's way (render/wgsl_gamma.py); NaN: the op's guard
  if (ga_isinf_{{S}}(x)) {{ return x; }}
  let a = abs(x);
  let negint = x < {{T}}(0) && (a >= {k(bigint)} || a == ga_floor_{{S}}(a));
  if (a <= {k(zinf)} || negint) {{ return ga_inf_{{S}}(); }}{maxlgm}
  let tiny = a < {k(tiny)};
  let neg = x < {{T}}(0) && !tiny;
  // -2 < x < 0: lgamma(x + n) - log|x ... (x + n - 1)|, n = 1 or 2 (x + n exact; all terms positive)
  let near = neg && a < {{T}}(2);
  var p = a;
  var l = {{T}}(0);
  if (tiny || neg) {{
    // one log: -log|x| for tiny x, of the product for -2 < x < 0, of pi / |x sin(pi x)| below
    var la = a;
    if (near) {{
      p = select({{T}}(2) - a, {{T}}(1) - a, a < {{T}}(1));
      la = select(a * (a - {{T}}(1)), a, a < {{T}}(1));
    }} else if (neg) {{
      la = ga_div_{{S}}({k(PI)}, ga_gsinpi_{{S}}(a) * a);
    }}
    l = ga_log_{{S}}(la);
    if (tiny) {{ return -l; }}
  }}
  let r = ga_lgpos_{{S}}(p);
  return select(r, select(l - r, r - l, near), neg);
}}"""
    return gammaln, lgpos, gsinpi


for _t, _table in (("f64", FLT_G), ("f32", F32_G)):
    _table["gammaln"], _table["lgpos"], _table["gsinpi"] = _gammaln(_t)
PSI_ZETA = (
    8.939798558792132, 0.8093454625306492, 32.25857206491551, 2.761011648790821, 128.27342343090905,
    14.706721735530339, 513.2704629562861, 75.3770006634462, 2055.535711946331, 368.5783503832186, 8234.667099203065,
    1743.3646088673604, 32997.78565525505, 8051.81815536348, 132262.95480834588, 36529.94596948558, 530280.3912420176,
    163451.79342700215, 2126602.372596875, 723318.8861804291, 8530604.878543982, 3172131.3155744695,
    34228316.69580112, 13807481.997263862, 137373435.87411496, 59721085.411294185, 551481251.8585448,
    256915093.79875314, 2214464568.0139103, 1100067148.9416318, 8894384049.698204, 4691108165.464198,
    35733149689.1997, 19932951831.31558, 143593265361.61185, 84427777205.9957, 577169303800.4994, 356587583747.6127,
    2320479554068.252, 1502246808129.2224, 9331609972791.018, 6314216613755.216, 37535190870239.27, 26484684511361.96,
    151015931286965.88, 110878926240539.72, 607726007220707.0, 463397408554349.75, 2446203594688413.0,
    1933621531448282.5, 9848631064699276.0, 8056719714934248.0, 3.966033418706299e+16, 3.352458218519522e+16,
    1.5974703846095734e+17, 1.393256073313975e+17, 6.435820112041242e+17, 5.783630021481716e+17,
    2.5933926695029007e+18, 2.398322687545823e+18, 1.0452606668648067e+19, 9.935377914500428e+18,
    4.2137766423157514e+19, 4.112064452831596e+19, 1.6990556309721845e+20, 1.7004372382577053e+20,
    6.8522226506873e+20, 7.026038929889101e+20, 2.764023275935674e+21, 2.900893253646807e+21, 1.115159170357447e+22,
    1.196862745715766e+22, 4.5000311645821485e+22, 4.934769367647048e+22, 1.816252543790399e+23,
    2.0333695330919317e+23, 7.331917212319315e+23, 8.373526739745051e+23, 2.9603156332049827e+24,
    3.4463364563646236e+24, 1.19546310752253e+25, 1.4176778047087605e+25, 4.828481533255975e+25,
    5.828817746743598e+25, 1.950561973063074e+26, 2.3954001183928075e+26, 7.881016936454602e+26,
    9.839682679529298e+26, 3.1847595510935494e+27, 4.040169682322971e+27, 1.2871864919195942e+28,
    1.6582231942712868e+28, 5.20325725283157e+28, 6.803305986480628e+28, 2.103665545254441e+29, 2.790222727774384e+29,
    8.506369437934225e+29, 1.1439506354873035e+30, 3.440143256278426e+30,)
PSI_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
         -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
         8.33333333333333333333E-2)     # Cephes psi.c (highest power first)
PSI_Y = 0.99558162689208984             # Boost's digamma on [1, 2]: (x - root) (Y + P(x - 1) / Q(x - 1))
PSI_P = (-0.0020713321167745952, -0.045251321448739056, -0.28919126444774784, -0.65031853770896507,
         -0.32555031186804491, 0.25479851061131551)
PSI_Q = (-0.55789841321675513e-6, 0.0021284987017821144, 0.054151797245674225, 0.43593529692665969,
         1.4606242909763515, 2.0767117023730469, 1.0)
PSI_ROOT = (1569415565.0 / 1073741824.0, (381566830.0 / 1073741824.0) / 1073741824.0,
            0.9016312093258695918615325266959189453125e-19)     # the positive zero in three parts (Boost)
PSI_NEGROOT = -0.504083008264455409     # xsf's first negative zero and psi there
PSI_NEGROOTVAL = 7.2897639029768949e-17
EULER = 0.577215664901532860606512090082402431
# float32: the zeros in two float32 parts, and psi's Taylor coefficients polygamma(n, x0) / n! at x0
PSI_ROOT32 = (1.4616321325302124, 1.243815006546356e-08)
PSI_NEGROOT32 = (-0.5040830373764038, 2.9111948407489763e-08)
PSI_TAYLOR = (8.939798558792134, -0.8093454625306507, 32.258572064915505, -2.761011648790828,
              128.27342343090902)


def _psi_rational(t: str, g: str, u: str) -> str:
    """Boost's form on [1, 2]: g Y + g P(u) / Q(u), g = x - root, u = x - 1."""
    return (f"{g} * {_k(t, PSI_Y)} + {g} * ga_div_{{S}}({_horner(t, u, PSI_P[::-1])}, "
            f"{_horner(t, u, PSI_Q[::-1])})")


def _psi_asym(t: str, terms: int) -> str:
    """log v - 1 / 2v - z A(z), z = 1 / v^2 (none from 1e17 on: float32 then has z A(z) below its ULP)."""
    return f"""  let z = ga_div_{{S}}({{T}}(1), v * v);
  let s = select({{T}}(0), z * {_horner(t, "z", PSI_A[::-1][:terms])}, v < {_k(t, 1e17)});
  return y + ((ga_log_{{S}}(v) - ga_div_{{S}}({{T}}(0.5), v)) - s);"""


_PSI_HEAD = """  if (ga_isinf_{S}(x)) { return select(ga_nan_{S}(), x, x > {T}(0)); }
  // psi(+-0) = -+inf (the sign from the bits: a compiler may take x == 0 for +0)
  if (x == {T}(0)) { return select(-ga_inf_{S}(), ga_inf_{S}(), ga_signbit_{S}(x)); }"""

_PSI_STEP = """    if (v < {T}(1)) {
      y = y - ga_div_{S}({T}(1), v);
      v = v + {T}(1);
    } else if (v < {T}(10)) {
      loop {
        if (v <= {T}(2)) { break; }
        v = v - {T}(1);
        y = y + ga_div_{S}({T}(1), v);
      }
    }"""

_psiz = ", ".join(_c(v).replace("bitcast<f64>(", "").replace(")", "") for v in PSI_ZETA)
FLT_G["psi"] = f"""var<private> ga_psiz_tab: array<u64, 99> = array<u64, 99>({_psiz});
fn ga_psi_{{S}}(x: {{T}}) -> {{T}} {{
  // xsf's digamma (SciPy's), operation for operation: render/wgsl_gamma.py; NaN: the op's guard
{_PSI_HEAD}
  if (abs(x - {_c(PSI_NEGROOT)}) < {_c(0.3)}) {{
    // the Taylor series about the first negative zero, with SciPy's zeta(n + 1, x0)
    let z = x - {_c(PSI_NEGROOT)};
    var res = {_c(PSI_NEGROOTVAL)};
    var coeff = {{T}}(-1);
    for (var n = 0; n < 99; n = n + 1) {{
      coeff = coeff * -z;
      let term = coeff * bitcast<f64>(ga_psiz_tab[n]);
      res = res + term;
      if (abs(term) < {_c(2.0 ** -52)} * abs(res)) {{ break; }}
    }}
    return res;
  }}
  var y = {{T}}(0);
  var v = x;
  if (x < {{T}}(0)) {{
    // psi(x) = psi(1 - x) - pi / tan(pi r), r the fraction of x (as SciPy: pi r rounded, not reduced)
    let r = x - ga_trunc_{{S}}(x);
    if (r == {{T}}(0)) {{ return ga_nan_{{S}}(); }}
    y = -ga_div_{{S}}({_c(PI)}, ga_tan_{{S}}({_c(PI)} * r));
    v = {{T}}(1) - x;
  }}
  if (v <= {{T}}(10) && v == ga_floor_{{S}}(v)) {{
    // psi(n) = 1 + 1/2 + ... + 1/(n - 1) - Euler's constant
    for (var i = {{T}}(1); i < v; i = i + {{T}}(1)) {{ y = y + ga_div_{{S}}({{T}}(1), i); }}
    return y - {_c(EULER)};
  }}
{_PSI_STEP}
  if (v >= {{T}}(1) && v <= {{T}}(2)) {{
    let g = ga_gkeep_{{S}}(ga_gkeep_{{S}}(v - {_c(PSI_ROOT[0])}) - {_c(PSI_ROOT[1])}) - {_c(PSI_ROOT[2])};
    let u = v - {{T}}(1);
    return y + ({_psi_rational("f64", "g", "u")});
  }}
{_psi_asym("f64", 7)}
}}"""

F32_G["psi"] = f"""fn ga_psi_f32(x: f32) -> f32 {{
  // psi in float32 (render/wgsl_gamma.py): Cephes's recurrence and series, Boost's form on [1, 2], an
  // exact reflection for x < 0 and its own forms about the first negative zero x0; NaN: the op's guard
{_PSI_HEAD}
  var y = 0.0;
  var v = x;
  var g = 0.0;
  var u = 0.0;
  var rat = false;
  if (x < 0.0) {{
    let t = ga_gkeep_f32(x - {_k("f32", PSI_NEGROOT32[0])}) - {_k("f32", PSI_NEGROOT32[1])};
    if (abs(t) < 0.3) {{
      if (abs(t) < 0.01) {{ return t * {_horner("f32", "t", PSI_TAYLOR)}; }}
      // psi(x + 2) - 1 / x - 1 / (x + 1), psi(x + 2) about the positive zero from x itself
      y = -ga_div_f32(2.0 * x + 1.0, x * (x + 1.0));
      g = ga_gkeep_f32(x - {_k("f32", PSI_ROOT32[0] - 2.0)}) - {_k("f32", PSI_ROOT32[1])};
      u = x + 1.0;
      rat = true;
    }} else {{
      // psi(1 - x) - pi cot(pi r), r = x - round(x) in [-1/2, 1/2] exactly; pi cot(pi r) as
      // pi / tan(pi r) for |r| <= 1/4, else sign(r) pi tan(pi (1/2 - |r|))
      let r = x - ga_round_f32(x);
      if (r == 0.0) {{ return ga_nan_f32(); }}
      let ar = abs(r);
      let far = ar > 0.25;
      let tv = ga_tan_f32({_k("f32", PI)} * select(r, 0.5 - ar, far));
      y = select(-ga_div_f32({_k("f32", PI)}, tv), ga_copysign_f32({_k("f32", PI)} * tv, -r), far);
      v = 1.0 - x;
    }}
  }}
  if (!rat) {{
{_PSI_STEP.replace("{S}", "f32").replace("{T}", "f32")}
    if (v <= 2.0) {{
      g = ga_gkeep_f32(v - {_k("f32", PSI_ROOT32[0])}) - {_k("f32", PSI_ROOT32[1])};
      u = v - 1.0;
      rat = true;
    }}
  }}
  if (rat) {{ return y + ({_psi_rational("f32", "g", "u").replace("{S}", "f32")}); }}
{_psi_asym("f32", 3).replace("{S}", "f32").replace("{T}", "f32")}
}}"""


# ---------------------------------------------------------------- i0, i0e, i1, i1e
# Cephes i0.c / i1.c Chebyshev coefficients (highest order first, as chbevl takes them)
I0_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
        1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
        -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
        9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
        -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
        1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
        -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
        1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
        -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
        1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
I0_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
        3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
        1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
        -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
        7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
        -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
        3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
        2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
        8.04490411014108831608E-1)
I1_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
        -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
        3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
        -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
        9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
        -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
        4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
        -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
        2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
        -1.76416518357834055153E-1, 2.52587186443633654823E-1)
I1_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
        -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
        -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
        4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
        -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
        3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
        -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
        -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
        7.78576235018280120474E-1)


def _chbevl(name: str, coefs: tuple[float, ...]) -> str:
    """Cephes chbevl(y, coefs, n) unrolled: Clenshaw's recurrence b0 = y b1 - b2 + c, then (b0 - b2) / 2.
    The product is kept from being fused into an fma (``ga_gkeep``): near the ends of the interval the
    recurrence amplifies each rounding difference about n-fold, and SciPy's compiled chbevl rounds the
    product, nor regrouped (lavapipe turned (y b1 - b2) + c into another order): either put float64 i1 up
    to 15 ULP from SciPy near 7.5 on lavapipe; kept, the results are SciPy's bit for bit there."""
    step = "  b2 = b1; b1 = b0; b0 = ga_gkeep_{S}(ga_gkeep_{S}(y * b1) - b2) + "
    steps = "\n".join(f"{step}{_c(c)};" for c in coefs[1:])
    return f"""fn ga_{name}_{{S}}(y: {{T}}) -> {{T}} {{
  var b0 = {_c(coefs[0])};
  var b1 = {{T}}(0);
  var b2 = {{T}}(0);
{steps}
  return {_c(0.5)} * (b0 - b2);
}}"""


FLT_G["chbi0a"] = _chbevl("chbi0a", I0_A)
FLT_G["chbi0b"] = _chbevl("chbi0b", I0_B)
FLT_G["chbi1a"] = _chbevl("chbi1a", I1_A)
FLT_G["chbi1b"] = _chbevl("chbi1b", I1_B)

# float64, as SciPy's installed xsf computes them: z = |x|; z <= 8: chbevl(z / 2 - 2, A) (times z for
# order 1); above: chbevl(32 / z - 2, B) / sqrt(z); times exp(z) for i0 / i1 (inf where exp overflows,
# NaN at +-inf as SciPy's inf / inf); i1, i1e odd
for _n in ("0", "1"):
    _small = f"ga_chbi{_n}a_{{S}}(z * {{T}}(0.5) - {{T}}(2))" + (" * z" if _n == "1" else "")
    _big = f"ga_chbi{_n}b_{{S}}(ga_div_{{S}}({{T}}(32), z) - {{T}}(2))"
    _sign = "select(v, -v, x < {T}(0))" if _n == "1" else "v"
    _zero = "ga_copysign_{S}({T}(0), x)" if _n == "1" else "{T}(0)"     # i1e(-inf) = -0.0
    FLT_G[f"i{_n}e"] = f"""fn ga_i{_n}e_{{S}}(x: {{T}}) -> {{T}} {{
  // Cephes i{_n}e (render/wgsl_gamma.py); NaN: the op's guard
  let z = abs(x);
  if (ga_isinf_{{S}}(z)) {{ return {_zero}; }}
  var v: {{T}};
  if (z <= {{T}}(8)) {{ v = {_small}; }} else {{ v = ga_div_{{S}}({_big}, ga_sqrt_{{S}}(z)); }}
  return {_sign};
}}"""
    FLT_G[f"i{_n}"] = f"""fn ga_i{_n}_{{S}}(x: {{T}}) -> {{T}} {{
  // Cephes i{_n} (render/wgsl_gamma.py); NaN: the op's guard
  let z = abs(x);
  if (ga_isinf_{{S}}(z)) {{ return ga_nan_{{S}}(); }}
  let e = ga_exp_{{S}}(z);
  var v: {{T}};
  if (z <= {{T}}(8)) {{ v = {_small} * e; }} else {{ v = ga_div_{{S}}(e * {_big}, ga_sqrt_{{S}}(z)); }}
  return {_sign};
}}"""

# float32: fitted polynomials (see the module docstring), lowest order first: on [0, 2] in z - 1 (i1e:
# i1e(z) / z), on [2, 4] in z - 2, on [4, 8] in z - 4, and sqrt(z) i(z) exp(-z) above 8 in 1 / z
I32 = {
    "i0e_0": (0.46575960516929626, -0.2578491270542145, 0.15389332175254822, -0.07626809179782867,
              0.031217331066727638, -0.010758395306766033, 0.003174137556925416, -0.0008293294813483953,
              0.00020972815400455147, -4.08719752158504e-05),
    "i0e_2": (0.30850833654403687, -0.09323903173208237, 0.03942161425948143, -0.016111208125948906,
              0.005882099270820618, -0.0018813422648236156, 0.0005228189984336495, -0.00012313590559642762,
              2.296842103532981e-05, -2.9442949198710267e-06, 1.8824520964244584e-07),
    "i0e_4": (0.2070019245147705, -0.0282509196549654, 0.0059058647602796555, -0.0013868041569367051,
              0.0003334573411848396, -7.509974238928407e-05, 1.4226625353330746e-05, -2.0007576040370623e-06,
              1.7789902528875245e-07, -7.31815230636812e-09),
    "i0e_8": (0.3989422917366028, 0.04986743628978729, 0.028093459084630013, 0.027290044352412224,
              0.08461951464414597, -0.30263614654541016, 1.8211160898208618),
    "i1e_0": (0.207910418510437, -0.15797162055969238, 0.08306335657835007, -0.034484103322029114,
              0.011894140392541885, -0.003510675160214305, 0.0009032022790051997, -0.00020820584904868156,
              4.6198376367101446e-05, -8.065876500040758e-06),
    "i1e_2": (0.2152692973613739, -0.01439594104886055, -0.008909684605896473, 0.007404929492622614,
              -0.0034942252095788717, 0.0012156806187704206, -0.00031129689887166023, 5.215275086811744e-05,
              -4.195311248622602e-06),
    "i1e_4": (0.17875084280967712, -0.01643664948642254, 0.0017335247248411179, -2.740473792073317e-05,
              -7.190811447799206e-05, 3.094026760663837e-05, -8.56974111229647e-06, 1.7102100855481694e-06,
              -2.3576473040520796e-07, 1.9918202198709878e-08, -7.699781923165006e-10),
    "i1e_8": (0.3989422917366028, -0.14960521459579468, -0.04659070447087288, -0.04582879692316055,
              0.006757539231330156, -0.4431082606315613),
}


def _sel3(c: tuple[float, ...]) -> str:
    """The coefficient of the interval (first, second, third) picked by the flags m2, m4."""
    k = [_k("f32", v) for v in c]
    return k[0] if k[0] == k[1] == k[2] else f"select(select({k[0]}, {k[1]}, m2), {k[2]}, m4)"


for _n in ("0", "1"):
    _ps = [I32[f"i{_n}e_{s}"] for s in (0, 2, 4)]
    _deg = max(len(p) for p in _ps)
    _cs = [tuple(p[j] if j < len(p) else 0.0 for p in _ps) for j in range(_deg)]
    _hs = _sel3(_cs[-1])
    for _c3 in _cs[-2::-1]:
        _hs = f"({_hs} * u + {_sel3(_c3)})"
    F32_G[f"bi{_n}e"] = f"""fn ga_bi{_n}e_f32(z: f32) -> f32 {{
  // exp(-z) I{_n}(z) for z >= 0 finite (render/wgsl_gamma.py: one polynomial per interval, the
  // coefficients picked by selects)
  if (z > 8.0) {{
    let w = ga_div_f32(1.0, z);
    return ga_div_f32({_horner("f32", "w", I32[f"i{_n}e_8"])}, ga_sqrt_f32(z));
  }}
  let m2 = z > 2.0;
  let m4 = z > 4.0;
  let u = z - select(select(1.0, 2.0, m2), 4.0, m4);
  return {_hs}{" * select(z, 1.0, m2)" if _n == "1" else ""};
}}"""
    _sign = "select(v, -v, x < 0.0)" if _n == "1" else "v"
    _zero = "ga_copysign_{S}({T}(0), x)" if _n == "1" else "{T}(0)"
    F32_G[f"i{_n}e"] = f"""fn ga_i{_n}e_f32(x: f32) -> f32 {{
  let z = abs(x);
  if (ga_isinf_f32(z)) {{ return {_zero.replace("{S}", "f32").replace("{T}", "f32")}; }}
  let v = ga_bi{_n}e_f32(z);
  return {_sign};
}}"""
    F32_G[f"i{_n}"] = f"""fn ga_i{_n}_f32(x: f32) -> f32 {{
  // exp(z) i{_n}e(z); above 80 exp(z / 2) twice, one of them scaled by 2^-64 and the product by 2^64
  // (exact), so that results up to 3.4e38 stay finite in any order of the products (NVIDIA's gave inf)
  let z = abs(x);
  if (ga_isinf_f32(z)) {{ return ga_nan_f32(); }}
  let big = z > 80.0;
  let e = ga_exp_f32(select(z, 0.5 * z, big));
  let b = ga_bi{_n}e_f32(z);
  let v = select(b * e, ldexp(b * e * ldexp(e, -64), 64), big);
  return {_sign};
}}"""
