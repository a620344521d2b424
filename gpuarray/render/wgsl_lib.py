"""WGSL helper functions used by op templates, instantiated per type on demand.

Helpers are named ``ga_<name>_<suffix>`` (``ga_isnan_f32``); ``helpers_for(src)``
returns the definitions a shader needs, dependencies included. NaN and
infinity are detected through bitcasts and never written as literals
(WGSL compilers may assume no NaN; ``1.0/0.0`` is a creation error).

``FLT`` templates serve every float type; ``F32`` holds float32 versions that
replace them: the exp/log/trig/pow family computed in software to within a
few ULP of NumPy (the WGSL built-ins are not; ``wgsl_f32.py``). The float64 transcendentals are
software too (``wgsl_f64.py``, ``wgsl_f64_trig.py``, ``wgsl_f64_inv.py``, ``wgsl_f64_pow.py``), so the
``FLT`` versions that use the 32-bit-only built-ins are not used for float64 (an op that would need
one runs on the host: ``providers/wgpu_kinds.py`` ``F64_HOST_OPS``, empty now).
Complex helpers (suffixes ``c64`` and ``c128``) live in ``wgsl_clib.py`` (complex128 transcendentals:
``wgsl_c128.py``).
"""

from __future__ import annotations

import re

from ..core.ops import NAN_THROUGH
from .wgsl_bits import F32_B, FLT_B, INT_B, INT_B_CONSTS
from .wgsl_c128 import C128
from .wgsl_clib import C64, CPLX_CONSTS, CPX
from .wgsl_f32 import F32_MATH
from .wgsl_f64 import F64_MATH
from .wgsl_gamma import F32_G, FLT_G
from .wgsl_igamma import F32_IG, FLT_IG
from .wgsl_incomplete import F32_I, FLT_I
from .wgsl_round import F32_ROUND, FLT_ROUND, ROUND_CONSTS
from .wgsl_special import F32_E, F64_E, FLT_E
from .wgsl_xlib import F32_X, FLT_X

# Per float suffix: bits type and masks.
FLOAT_CONSTS = {
    "f32": {"T": "f32", "U": "u32", "I": "i32", "SIGN": "0x80000000u", "ABSM": "0x7fffffffu",
            "INFB": "0x7f800000u", "NANB": "0x7fc00000u", "ONE": "1u",
            "MB": "23u", "MANT": "0x007fffffu", "IMPL": "0x00800000u", "HALFM": "0xffffe000u"},
    "f64": {"T": "f64", "U": "u64", "I": "i64", "SIGN": "0x8000000000000000lu", "ABSM": "0x7ffffffffffffffflu",
            "INFB": "0x7ff0000000000000lu", "NANB": "0x7ff8000000000000lu", "ONE": "1lu",
            "MB": "52u", "MANT": "0x000ffffffffffffflu", "IMPL": "0x10000000000000lu",
            "HALFM": "0xffffffff00000000lu"},
}
for _s, _c in ROUND_CONSTS.items():
    FLOAT_CONSTS[_s].update(_c)
INT_CONSTS = {s: {"T": s, **INT_B_CONSTS[s]} for s in ("i32", "i64", "u32", "u64")}

FLT: dict[str, str] = {}   # float helpers: name -> body template (every float type)
F32: dict[str, str] = {}   # float32 versions that replace FLT's (software math: see below)
INT: dict[str, str] = {}   # integer helpers (signed and unsigned)

FLT["isnan"] = "fn ga_isnan_{S}(x: {T}) -> bool { return (bitcast<{U}>(x) & {ABSM}) > {INFB}; }"
FLT["isinf"] = "fn ga_isinf_{S}(x: {T}) -> bool { return (bitcast<{U}>(x) & {ABSM}) == {INFB}; }"
FLT["isfinite"] = "fn ga_isfinite_{S}(x: {T}) -> bool { return (bitcast<{U}>(x) & {INFB}) != {INFB}; }"
FLT["signbit"] = "fn ga_signbit_{S}(x: {T}) -> bool { return (bitcast<{U}>(x) & {SIGN}) != {U}(0); }"
# An integer key with the order of the (non-NaN) floats, -0.0 and 0.0 equal: comparisons
# through it do not depend on the driver keeping subnormals (the H200's Vulkan driver
# compared 1e-45 < 2e-45 as false).
FLT["key"] = """fn ga_key_{S}(x: {T}) -> {I} {
  let u = bitcast<{U}>(x);
  let b = select(bitcast<{I}>(u), {I}(0), u == {SIGN});
  return select(b, b ^ bitcast<{I}>({ABSM}), b < {I}(0));
}"""
FLT["nan"] = "fn ga_nan_{S}() -> {T} { return bitcast<{T}>({NANB}); }"
FLT["inf"] = "fn ga_inf_{S}() -> {T} { return bitcast<{T}>({INFB}); }"
# inf * r on the bits: +-inf by r's sign, NaN for a zero or NaN r (C99 Annex G's recovery of infinities)
FLT["infscale"] = """fn ga_infscale_{S}(r: {T}) -> {T} {
  let m = bitcast<{U}>(r) & {ABSM};
  return select(ga_copysign_{S}(ga_inf_{S}(), r), ga_nan_{S}(), m == {U}(0) || m > {INFB});
}"""
FLT["copysign"] = """fn ga_copysign_{S}(a: {T}, b: {T}) -> {T} {
  return bitcast<{T}>((bitcast<{U}>(a) & {ABSM}) | (bitcast<{U}>(b) & {SIGN}));
}"""
# Keys for maximum / minimum: the order of the floats (-0.0 and 0.0 equal, subnormals apart from 0
# whatever the driver flushes), with every NaN above +inf (maxkey) or below -inf (minkey), so that
# NaN propagation is part of the one comparison: no branch in reduction loops.
FLT["maxkey"] = """fn ga_maxkey_{S}(x: {T}) -> {I} {
  let m = bitcast<{U}>(x) & {ABSM};
  let k = select(bitcast<{I}>(m), -bitcast<{I}>(m), (bitcast<{U}>(x) & {SIGN}) != {U}(0));
  return select(k, bitcast<{I}>({ABSM}), m > {INFB});
}"""
FLT["minkey"] = """fn ga_minkey_{S}(x: {T}) -> {I} {
  let m = bitcast<{U}>(x) & {ABSM};
  let k = select(bitcast<{I}>(m), -bitcast<{I}>(m), (bitcast<{U}>(x) & {SIGN}) != {U}(0));
  return select(k, -bitcast<{I}>({ABSM}) - {I}(1), m > {INFB});
}"""
# Order keys of a reduction's accumulators (render/wgsl_reduce.py): integers in the order of the
# values, -0 just below +0, NaN at the end that wins (the top for max, the bottom for min);
# ga_unkey gives the value back (NaN as a NaN).
FLT["rmaxkey"] = """fn ga_rmaxkey_{S}(x: {T}) -> {I} {
  let m = bitcast<{U}>(x) & {ABSM};
  return select(bitcast<{I}>(m), -bitcast<{I}>(m) - {I}(1), (bitcast<{U}>(x) & {SIGN}) != {U}(0) && m <= {INFB});
}"""
FLT["rminkey"] = """fn ga_rminkey_{S}(x: {T}) -> {I} {
  let m = bitcast<{U}>(x) & {ABSM};
  return select(bitcast<{I}>(m), -bitcast<{I}>(m) - {I}(1), (bitcast<{U}>(x) & {SIGN}) != {U}(0) || m > {INFB});
}"""
FLT["unkey"] = """fn ga_unkey_{S}(k: {I}) -> {T} {
  let neg = k < {I}(0);
  let m = bitcast<{U}>(select(k, -(k + {I}(1)), neg));
  return bitcast<{T}>(m | select({U}(0), {SIGN}, neg));
}"""
FLT["maximum"] = """fn ga_maximum_{S}(a: {T}, b: {T}) -> {T} {
  // NaN if either is NaN, else the larger; b for equal values (NumPy's +-0 ties)
  return select(b, a, ga_maxkey_{S}(a) > ga_maxkey_{S}(b));
}"""
FLT["minimum"] = """fn ga_minimum_{S}(a: {T}, b: {T}) -> {T} {
  return select(b, a, ga_minkey_{S}(a) < ga_minkey_{S}(b));
}"""
FLT["clip"] = """fn ga_clip_{S}(x: {T}, lo: {T}, hi: {T}) -> {T} {
  // NumPy's clip: lo where x is below it, then hi where that is above it (a +-0 tie keeps x), a NaN operand's
  // NaN; compared by maximum's integer keys: compilers make a select on x < lo into max(x, lo), 0 at x = -0
  let t = select(x, lo, ga_maxkey_{S}(lo) > ga_maxkey_{S}(x));
  let r = select(t, hi, ga_maxkey_{S}(t) > ga_maxkey_{S}(hi));
  return select(select(select(r, hi, ga_isnan_{S}(hi)), lo, ga_isnan_{S}(lo)), x, ga_isnan_{S}(x));
}"""
FLT["sign"] = """fn ga_sign_{S}(x: {T}) -> {T} {
  // bit tests: lavapipe rewrote the comparison version into one that gives -0 for +0
  if (ga_isnan_{S}(x)) { return x; }
  let b = bitcast<{U}>(x);
  if ((b & {ABSM}) == {U}(0)) { return bitcast<{T}>({U}(0)); }
  return bitcast<{T}>((b & {SIGN}) | bitcast<{U}>({T}(1)));
}"""
FLT["fmod"] = """fn ga_fmod_{S}(a: {T}, b: {T}) -> {T} {
  // C fmod, exact: long division on the significands (musl's algorithm).
  if (ga_isnan_{S}(a) || ga_isnan_{S}(b) || ga_isinf_{S}(a) || b == {T}(0)) { return ga_nan_{S}(); }
  let ux = bitcast<{U}>(a);
  let sx = ux & {SIGN};
  let ax = ux & {ABSM};
  let ay = bitcast<{U}>(b) & {ABSM};
  if (ax <= ay) {
    if (ax == ay) { return bitcast<{T}>(sx); }
    return a;
  }
  var ex = i32(ax >> {MB});
  var ey = i32(ay >> {MB});
  var mx = (ax & {MANT}) | {IMPL};
  var my = (ay & {MANT}) | {IMPL};
  if (ex == 0) {
    mx = ax;
    ex = 1;
    while ((mx & {IMPL}) == {U}(0)) { mx = mx << 1u; ex = ex - 1; }
  }
  if (ey == 0) {
    my = ay;
    ey = 1;
    while ((my & {IMPL}) == {U}(0)) { my = my << 1u; ey = ey - 1; }
  }
  while (ex > ey) {
    if (mx >= my) {
      mx = mx - my;
      if (mx == {U}(0)) { return bitcast<{T}>(sx); }
    }
    mx = mx << 1u;
    ex = ex - 1;
  }
  if (mx >= my) {
    mx = mx - my;
    if (mx == {U}(0)) { return bitcast<{T}>(sx); }
  }
  while ((mx & {IMPL}) == {U}(0)) { mx = mx << 1u; ex = ex - 1; }
  if (ex > 0) {
    mx = (mx - {IMPL}) | ({U}(u32(ex)) << {MB});
  } else {
    mx = mx >> u32(1 - ex);
  }
  return bitcast<{T}>(mx | sx);
}"""
# remainder and floordiv inline ga_fmod (four loops, returns inside them) at ONE place each, whatever the
# case: lavapipe's (LLVM 15) compile time grew about threefold per inlined copy of the earlier remainder,
# whose two cases each inlined it (`if (small) { ...fmod...; return remainderc(..) } return remainderc(..)`):
# 4 s for one copy, 109 s for four, and np.interp(period=)'s kernel, whose gathers of gathers inline ten,
# did not finish in 500 s (tests/test_interp_period.py; docs/reliability.md, "Compile time on lavapipe").
FLT["remainder"] = """fn ga_remainder_{S}(a: {T}, b: {T}) -> {T} {
  // |b| < 2^-100: at 2^64 times the scale (a reduced by fmod(a, b 2^64) first when |a| >= 2^60), so
  // that no intermediate is subnormal: NVIDIA flushes those in float32 (remainder(81, -9.9e-38) gave -0).
  // One ga_fmod in a loop of at most two passes, not one per case (see wgsl_lib.py).
  let small = abs(b) < {T}(7.888609052210118e-31) && b != {T}(0) && ga_isfinite_{S}(a);
  let s = {T}(18446744073709551616.0);
  let y = select(b, b * s, small);
  var again = small && abs(a) >= {T}(1152921504606846976.0);
  var x = select(select(a, a * s, small), a, again);
  var m = x;
  loop {
    m = ga_fmod_{S}(x, y);
    if (!again) { break; }
    again = false;
    x = m * s;
  }
  if (!ga_isnan_{S}(m)) {
    if (m != {T}(0)) {
      if ((y < {T}(0)) != (m < {T}(0))) { m = m + y; }
    } else {
      m = ga_copysign_{S}({T}(0), y);
    }
  }
  return select(m, m * {T}(5.421010862427522e-20), small);
}"""
FLT["floordiv"] = """fn ga_floordiv_{S}(a: {T}, b: {T}) -> {T} {
  // |b| < 2^-100, |a| < 2^60: the same quotient at 2^64 times the scale, so that the remainder is not a
  // subnormal that NVIDIA flushes (floor_divide(7.3e-38, 1.26e-38) gave 6 there). One ga_floordivc
  // (so one ga_fmod) for both cases (see ga_remainder).
  // (select, not a product with 1: a driver that flushes subnormals would flush a * 1)
  let small = abs(b) < {T}(7.888609052210118e-31) && abs(a) < {T}(1152921504606846976.0);
  let s = {T}(18446744073709551616.0);
  return ga_floordivc_{S}(select(a, a * s, small), select(b, b * s, small));
}"""
FLT["floordivc"] = """fn ga_floordivc_{S}(a: {T}, b: {T}) -> {T} {
  if (b == {T}(0) || ga_isnan_{S}(a) || ga_isnan_{S}(b)) { return ga_div_{S}(a, b); }
  let m = ga_fmod_{S}(a, b);
  if (ga_isnan_{S}(m)) { return m; }
  var d = ga_div_{S}(a - m, b);
  if (m != {T}(0) && ((b < {T}(0)) != (m < {T}(0)))) { d = d - {T}(1); }
  if (d != {T}(0)) {
    var f = ga_floor_{S}(d);
    if (d - f > {T}(0.5)) { f = f + {T}(1); }
    return f;
  }
  return ga_copysign_{S}({T}(0), ga_div_{S}(a, b));
}"""
FLT["pow"] = """fn ga_pow_{S}(x: {T}, y: {T}) -> {T} {
  // C99 pow special cases, then ga_powcore for x > 0 and finite y != 0
  if (y == {T}(0) || x == {T}(1)) { return {T}(1); }
  if (ga_isnan_{S}(x) || ga_isnan_{S}(y)) { return ga_nan_{S}(); }
  let yint = ga_isfinite_{S}(y) && ga_floor_{S}(y) == y;
  let yodd = yint && ga_floor_{S}(y * {T}(0.5)) != y * {T}(0.5);
  if (ga_isinf_{S}(y)) {
    let ax = abs(x);
    if (ax == {T}(1)) { return {T}(1); }
    if ((ax > {T}(1)) == (y > {T}(0))) { return ga_inf_{S}(); }
    return {T}(0);
  }
  // signs of zeros and infinities from the sign bit, through copysign: NVIDIA's compiler folded
  // select(0, -0, c) to -0 and may take x == 0 for +0
  let sg = select({T}(1), {T}(-1), yodd && ga_signbit_{S}(x));
  if (x == {T}(0)) {
    if (y < {T}(0)) { return ga_copysign_{S}(ga_inf_{S}(), sg); }
    return ga_copysign_{S}({T}(0), sg);
  }
  if (ga_isinf_{S}(x)) {
    if (x > {T}(0)) { return select({T}(0), x, y > {T}(0)); }
    if (y < {T}(0)) { return ga_copysign_{S}({T}(0), sg); }
    return ga_copysign_{S}(ga_inf_{S}(), sg);
  }
  if (x < {T}(0)) {
    if (!yint) { return ga_nan_{S}(); }
    let r = ga_powcore_{S}(-x, y);
    return select(r, -r, yodd);
  }
  return ga_powcore_{S}(x, y);
}"""
FLT["powcore"] = """fn ga_powcore_{S}(x: {T}, y: {T}) -> {T} { return pow(x, y); }"""
FLT["exp"] = """fn ga_exp_{S}(x: {T}) -> {T} {
  if (ga_isinf_{S}(x)) { return select({T}(0), x, x > {T}(0)); }
  return exp(x);
}"""
FLT["expm1"] = """fn ga_expm1_{S}(x: {T}) -> {T} {
  if (abs(x) > {T}(0.5) || ga_isinf_{S}(x)) { return ga_exp_{S}(x) - {T}(1); }
  if (x == {T}(0)) { return x; }
  let u = exp(x);
  if (u == {T}(1)) { return x; }
  let um1 = u - {T}(1);
  return um1 * x / log(u);
}"""
FLT["log"] = """fn ga_log_{S}(x: {T}) -> {T} {
  if (x < {T}(0)) { return ga_nan_{S}(); }
  if (x == {T}(0)) { return -ga_inf_{S}(); }
  if (ga_isinf_{S}(x)) { return x; }
  return log(x);
}"""
FLT["log2"] = """fn ga_log2_{S}(x: {T}) -> {T} {
  if (x < {T}(0)) { return ga_nan_{S}(); }
  if (x == {T}(0)) { return -ga_inf_{S}(); }
  if (ga_isinf_{S}(x)) { return x; }
  return log2(x);
}"""
FLT["log10"] = """fn ga_log10_{S}(x: {T}) -> {T} {
  if (x < {T}(0)) { return ga_nan_{S}(); }
  if (x == {T}(0)) { return -ga_inf_{S}(); }
  if (ga_isinf_{S}(x)) { return x; }
  return log2(x) * {T}(0.30102999566398119521);
}"""
FLT["log1p"] = """fn ga_log1p_{S}(x: {T}) -> {T} {
  if (x == {T}(-1)) { return -ga_inf_{S}(); }
  if (x < {T}(-1)) { return ga_nan_{S}(); }
  if (ga_isinf_{S}(x)) { return x; }
  let u = {T}(1) + x;
  if (u == {T}(1)) { return x; }
  return log(u) * x / (u - {T}(1));
}"""
FLT["sqrt"] = """fn ga_sqrt_{S}(x: {T}) -> {T} {
  if (x < {T}(0)) { return ga_nan_{S}(); }
  if (ga_isinf_{S}(x) || x == {T}(0)) { return x; }
  return sqrt(x);
}"""
for _f in ("sin", "cos", "tan"):
    FLT[_f] = f"""fn ga_{_f}_{{S}}(x: {{T}}) -> {{T}} {{
  if (ga_isinf_{{S}}(x)) {{ return ga_nan_{{S}}(); }}
  {"if (x == {T}(0)) { return x; }" if _f != "cos" else ""}
  return {_f}(x);
}}"""
for _f in ("asin", "acos"):
    FLT[_f] = f"""fn ga_{_f}_{{S}}(x: {{T}}) -> {{T}} {{
  if (abs(x) > {{T}}(1)) {{ return ga_nan_{{S}}(); }}
  {"if (x == {T}(0)) { return x; }" if _f == "asin" else ""}
  return {_f}(x);
}}"""
FLT["sinh"] = """fn ga_sinh_{S}(x: {T}) -> {T} {
  if (ga_isinf_{S}(x) || x == {T}(0)) { return x; }
  let a = abs(x);
  var r: {T};
  if (a < {T}(1)) {
    let e = ga_expm1_{S}(a);
    r = {T}(0.5) * (e + e / (e + {T}(1)));
  } else {
    let e = ga_exp_{S}({T}(0.5) * a);
    r = ({T}(0.5) * e) * e - {T}(0.5) / (e * e);
  }
  return ga_copysign_{S}(r, x);
}"""
FLT["cosh"] = """fn ga_cosh_{S}(x: {T}) -> {T} {
  let a = abs(x);
  if (ga_isinf_{S}(a)) { return a; }
  let e = ga_exp_{S}({T}(0.5) * a);
  return ({T}(0.5) * e) * e + {T}(0.5) / (e * e);
}"""
FLT["tanh"] = """fn ga_tanh_{S}(x: {T}) -> {T} {
  if (x == {T}(0)) { return x; }
  let a = abs(x);
  if (a > {T}(20)) { return ga_copysign_{S}({T}(1), x); }
  let e = ga_expm1_{S}({T}(2) * a);
  return ga_copysign_{S}(e / (e + {T}(2)), x);
}"""
FLT["asinh"] = """fn ga_asinh_{S}(x: {T}) -> {T} {
  if (ga_isinf_{S}(x) || x == {T}(0)) { return x; }
  let a = abs(x);
  var r: {T};
  if (a > {T}(1e18)) {
    r = ga_log_{S}(a) + {T}(0.69314718055994530942);
  } else {
    r = ga_log1p_{S}(a + a * a / ({T}(1) + sqrt({T}(1) + a * a)));
  }
  return ga_copysign_{S}(r, x);
}"""
FLT["acosh"] = """fn ga_acosh_{S}(x: {T}) -> {T} {
  if (x < {T}(1)) { return ga_nan_{S}(); }
  if (ga_isinf_{S}(x)) { return x; }
  if (x > {T}(1e18)) { return ga_log_{S}(x) + {T}(0.69314718055994530942); }
  let t = x - {T}(1);
  return ga_log1p_{S}(t + sqrt({T}(2) * t + t * t));
}"""
FLT["atanh"] = """fn ga_atanh_{S}(x: {T}) -> {T} {
  let a = abs(x);
  if (a > {T}(1)) { return ga_nan_{S}(); }
  if (a == {T}(1)) { return ga_copysign_{S}(ga_inf_{S}(), x); }
  if (x == {T}(0)) { return x; }
  return ga_copysign_{S}({T}(0.5) * ga_log1p_{S}({T}(2) * a / ({T}(1) - a)), x);
}"""
FLT["atan2"] = """fn ga_atan2_{S}(y: {T}, x: {T}) -> {T} {
  let pi = {T}(3.14159265358979323846);
  if (ga_isnan_{S}(x) || ga_isnan_{S}(y)) { return ga_nan_{S}(); }
  if (ga_isinf_{S}(x) && ga_isinf_{S}(y)) {
    return ga_copysign_{S}(select({T}(0.75) * pi, {T}(0.25) * pi, x > {T}(0)), y);
  }
  if (ga_isinf_{S}(x)) { return ga_copysign_{S}(select(pi, {T}(0), x > {T}(0)), y); }
  if (ga_isinf_{S}(y)) { return ga_copysign_{S}({T}(0.5) * pi, y); }
  if (y == {T}(0)) { return ga_copysign_{S}(select({T}(0), pi, ga_signbit_{S}(x)), y); }
  if (x == {T}(0)) { return ga_copysign_{S}({T}(0.5) * pi, y); }
  return ga_atan2core_{S}(y, x);
}"""
FLT["atan2core"] = """fn ga_atan2core_{S}(y: {T}, x: {T}) -> {T} { return atan2(y, x); }"""
FLT["div"] = """fn ga_div_{S}(a: {T}, b: {T}) -> {T} {
  // a / b, also for |b| > 2^126: NVIDIA's Vulkan driver (580) divides as a * (1 / b), and there 1 / b is a
  // subnormal that it flushes to 0 (1e38 / 3e38 gave 0 on the H200)
  if (abs(b) > {T}(8.507059173023462e37)) { return ({T}(0.25) * a) / ({T}(0.25) * b); }
  return a / b;
}"""
F32["div"] = """fn ga_div_f32(a0: f32, b0: f32) -> f32 {
  // a / b correctly rounded. NVIDIA's Vulkan driver (580) divides as a * (1 / b): up to 2 ULP off (Vulkan
  // allows 2.5), and 0 for |b| > 2^126, where 1 / b is a subnormal that it flushes. One correction with the
  // exact residual a - q b (fma) rounds correctly; it needs an fma that rounds once, which WGSL does not
  // promise (lavapipe's rounds twice): the pipeline constant ga_exactfma_f32 says (providers/wgpu_probe.py).
  let big = abs(b0) > 8.507059173023462e37;
  let a = select(a0, 0.25 * a0, big);
  let b = select(b0, 0.25 * b0, big);
  if (!ga_exactfma_f32) { return a / b; }
  // |a| < 2^-100: scaled by 2^64 (and the quotient back), so that the residual is not a flushed subnormal
  let t = abs(a) < 7.888609052210118e-31;
  let u = select(a, a * 18446744073709551616.0, t);
  var q = u / b;
  if (ga_isfinite_f32(q) && q != 0.0) { q = fma(fma(-q, b, u), 1.0 / b, q); }
  return select(q, q * 5.421010862427522e-20, t);
}"""
F32["exactfma"] = "override ga_exactfma_f32: bool = false;"
F32["sqrt"] = """fn ga_sqrt_f32(x: f32) -> f32 {
  if (x < 0.0) { return ga_nan_f32(); }
  if (ga_isinf_f32(x) || x == 0.0) { return x; }
  // one Newton step with the exact residual x - s s (fma) rounds correctly where the driver's sqrt is
  // 1 ULP off (NVIDIA's Vulkan driver 580)
  if (!ga_exactfma_f32) { return sqrt(x); }
  // x < 2^-100: scaled by 2^64 (and the root by 2^-32), so that the residual is not a flushed subnormal
  let t = x < 7.888609052210118e-31;
  let u = select(x, x * 18446744073709551616.0, t);
  let s = sqrt(u);
  let c = fma(fma(-s, s, u), 0.5 / s, s);
  return select(c, c * 2.3283064365386963e-10, t);
}"""
FLT["hypot"] = """fn ga_hypot_{S}(a: {T}, b: {T}) -> {T} {
  if (ga_isinf_{S}(a) || ga_isinf_{S}(b)) { return ga_inf_{S}(); }
  if (ga_isnan_{S}(a) || ga_isnan_{S}(b)) { return ga_nan_{S}(); }
  let x = abs(a);
  let y = abs(b);
  let m = max(x, y);
  if (m == {T}(0)) { return {T}(0); }
  let n = ga_div_{S}(min(x, y), m);
  return m * sqrt({T}(1) + n * n);
}"""
# float32: NumPy's hypotf is within 1 ULP; m * sqrt(1 + n^2) was 3 ULP off on the H200 (its sqrt and divide
# round loosely), biased low, and 2^16 steps of hypot.accumulate drifted 1e-3 from NumPy's
F32["hypot"] = """fn ga_hypot_f32(a: f32, b: f32) -> f32 {
  if (ga_isinf_f32(a) || ga_isinf_f32(b)) { return ga_inf_f32(); }
  if (ga_isnan_f32(a) || ga_isnan_f32(b)) { return ga_nan_f32(); }
  let x0 = max(abs(a), abs(b));
  let y0 = min(abs(a), abs(b));
  if (x0 == 0.0) { return 0.0; }
  if (!ga_exactfma_f32) {
    let n = ga_div_f32(y0, x0);
    return x0 * sqrt(1.0 + n * n);
  }
  // Borges (2019), "An improved algorithm for hypot(a, b)", with an fma correction: sqrt(x^2 + y^2) less
  // (h^2 - x^2 - y^2) / 2h from exact residuals, x and y scaled first by the power of two that brings x to
  // [0.5, 1) (no overflow, and no flushed subnormal square that matters)
  let e = frexp(x0).exp;
  let x = ldexp(x0, -e);
  let y = ldexp(y0, -e);
  var h = sqrt(fma(x, x, y * y));
  let hs = h * h;
  let xs = x * x;
  let d = fma(-y, y, hs - xs) + fma(h, h, -hs) - fma(x, x, -xs);
  h = h - d / (2.0 * h);
  return ldexp(h, e);
}"""
FLT["logaddexp"] = """fn ga_logaddexp_{S}(a: {T}, b: {T}) -> {T} {
  if (ga_isnan_{S}(a) || ga_isnan_{S}(b)) { return ga_nan_{S}(); }
  if (a == b) { return a + {T}(0.69314718055994530942); }
  let m = max(a, b);
  if (ga_isinf_{S}(m)) { return m; }
  return m + ga_log1p_{S}(ga_exp_{S}(-abs(a - b)));
}"""
# compared through ga_key: a driver that flushes subnormals (the H200's) compares the smallest subnormal
# equal to 0.0, and nextafter(nextafter(0, 1), 1) came out as the smallest subnormal again
FLT["nextafter"] = """fn ga_nextafter_{S}(x: {T}, y: {T}) -> {T} {
  if (ga_isnan_{S}(x) || ga_isnan_{S}(y)) { return ga_nan_{S}(); }
  let kx = ga_key_{S}(x);
  let ky = ga_key_{S}(y);
  if (kx == ky) { return y; }
  let b = bitcast<{U}>(x);
  if ((b & {ABSM}) == {U}(0)) { return bitcast<{T}>((bitcast<{U}>(y) & {SIGN}) | {ONE}); }
  if ((kx < ky) == (kx > {I}(0))) { return bitcast<{T}>(b + {ONE}); }
  return bitcast<{T}>(b - {ONE});
}"""


# ---------------------------------------------------------------- float32 math in software
# (render/wgsl_f32.py: exp, log, sin/cos, tan, asin/acos/atan, pow, sinh/cosh/tanh ...)
F32.update(F32_MATH)
FLT["atan"] = """fn ga_atan_{S}(x: {T}) -> {T} {
  if (x == {T}(0)) { return x; }
  return atan(x);
}"""
# The ops that the op table leaves without a NaN guard (_ops.NAN_THROUGH) return NaN for NaN from their
# helpers: the F32 versions test for it where their common path would not give it; these FLT versions
# (float64, which runs them on the host on wgpu) test first, since the built-ins they call may assume no NaN.
for _f in sorted(NAN_THROUGH):
    FLT[_f] = FLT[_f].replace(" {\n", " {\n  if (ga_isnan_{S}(x)) { return x; }\n", 1)
INT["sign"] = """fn ga_sign_{S}(x: {T}) -> {T} {
  return select(select({T}(0), {T}(-1), x < {T}(0)), {T}(1), x > {T}(0));
}"""
INT["floordiv"] = """fn ga_floordiv_{S}(a: {T}, b: {T}) -> {T} {
  if (b == {T}(0)) { return {T}(0); }
  var q = a / b;
  // the remainder as a - q * b, not a % b (wrong for negative operands on NVIDIA's Vulkan driver 580)
  if ((a - q * b != {T}(0)) && ((a < {T}(0)) != (b < {T}(0)))) { q = q - {T}(1); }
  return q;
}"""
INT["remainder"] = """fn ga_remainder_{S}(a: {T}, b: {T}) -> {T} {
  if (b == {T}(0)) { return {T}(0); }
  // not a % b: the NVIDIA Vulkan driver (580) returned 0 for -1 % 3 (seen on the H200)
  var r = a - (a / b) * b;
  if (r != {T}(0) && ((r < {T}(0)) != (b < {T}(0)))) { r = r + b; }
  return r;
}"""
INT["pow"] = """fn ga_pow_{S}(a: {T}, b: {T}) -> {T} {
  if (b < {T}(0)) {
    if (a == {T}(1)) { return {T}(1); }
    if (a == {T}(0) - {T}(1)) { return select(a, {T}(1), (b & {T}(1)) == {T}(0)); }
    return {T}(0);
  }
  var r = {T}(1);
  var base = a;
  var e = b;
  loop {
    if (e == {T}(0)) { break; }
    if ((e & {T}(1)) != {T}(0)) { r = r * base; }
    base = base * base;
    e = e >> 1u;
  }
  return r;
}"""
INT["shl"] = """fn ga_shl_{S}(a: {T}, b: {T}, bits: u32) -> {T} {
  if (b < {T}(0) || b >= {T}(bits)) { return {T}(0); }
  return a << u32(b);
}"""
INT["shr"] = """fn ga_shr_{S}(a: {T}, b: {T}, bits: u32) -> {T} {
  if (b < {T}(0) || b >= {T}(bits)) { return select({T}(0), {T}(0) - {T}(1), a < {T}(0)); }
  return a >> u32(b);
}"""

# helpers of the NumPy-only and SciPy-special ops (fmax, heaviside, expit, logit ...): wgsl_xlib.py
FLT.update(FLT_X)
F32.update(F32_X)
# SciPy's error function family (erf, ndtr, ndtri ...): wgsl_special.py; gamma and Bessel: wgsl_gamma.py
FLT.update(FLT_E)
F32.update(F32_E)
F64_MATH.update(F64_E)
FLT.update(FLT_G)
F32.update(F32_G)
# incomplete gamma and beta functions, Student's t and the chi-square distributions: wgsl_igamma.py,
# wgsl_incomplete.py
FLT.update(FLT_IG)
F32.update(F32_IG)
FLT.update(FLT_I)
F32.update(F32_I)
# exact round / trunc / floor / ceil on the bits (float32: the driver's where the start-up probe found it
# exact): wgsl_round.py
FLT.update(FLT_ROUND)
F32.update(F32_ROUND)
# ldexp, frexp's exponent, spacing, cbrt on the bits; the integer fmod, gcd, lcm, bitwise_count: wgsl_bits.py
FLT.update(FLT_B)
F32.update(F32_B)
INT.update(INT_B)

# a library helper's name in WGSL text: ga_<name>_<type suffix> (wgsl_size counts their inlined lines too)
HELPER_NAME = re.compile(r"\bga_([a-z0-9]+)_(f32|f64|i32|i64|u32|u64|c64|c128)\b")


def definition(name: str, suffix: str) -> str:
    """The WGSL text of helper ``ga_<name>_<suffix>`` with its type's constants filled in (KeyError: none such).

    >>> definition("isnan", "f32").startswith("fn ga_isnan_f32")
    True
    """
    if suffix in CPLX_CONSTS:
        table = C64 if suffix == "c64" and name in C64 else C128 if suffix == "c128" and name in C128 else CPX
        consts = CPLX_CONSTS[suffix]
    elif suffix in FLOAT_CONSTS:
        table = F32 if suffix == "f32" and name in F32 else F64_MATH if suffix == "f64" and name in F64_MATH else FLT
        consts = FLOAT_CONSTS[suffix]
    else:
        table, consts = INT, INT_CONSTS[suffix]
    if name not in table:
        raise KeyError(f"no WGSL helper ga_{name} for {suffix}")
    text = table[name].replace("{S}", suffix)
    for k, v in consts.items():
        text = text.replace("{" + k + "}", v)
    return text


def helpers_for(src: str) -> str:
    """The helper definitions that ``src`` calls, dependencies first."""
    done: dict[tuple[str, str], str] = {}
    order: list[tuple[str, str]] = []

    def visit(name: str, suffix: str) -> None:
        key = (name, suffix)
        if key in done:
            return
        text = definition(name, suffix)
        done[key] = text
        for m in HELPER_NAME.finditer(text):
            if (m.group(1), m.group(2)) != key:
                visit(m.group(1), m.group(2))
        order.append(key)

    for m in HELPER_NAME.finditer(src):
        visit(m.group(1), m.group(2))
    return "\n".join(done[k] for k in order)
