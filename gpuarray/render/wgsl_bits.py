"""WGSL helpers of the op table's bit-level ops: ``ldexp`` (``ga_scalbn``), the exponent of ``frexp``
(``ga_frexpe``), ``spacing``, ``cbrt``, and the integer ``fmod``, ``gcd``, ``lcm`` and ``bitwise_count``;
merged into ``wgsl_lib``'s tables (``FLT_B`` into ``FLT``, ``F32_B`` into ``F32``, ``INT_B`` into ``INT``).

The float helpers read and build the encoding with integer operations only (``bitcast``, shifts, masks):
no float arithmetic touches a subnormal, so a driver that flushes subnormals (NVIDIA's float32) still gets
ldexp's subnormal results, frexp of subnormals and spacing's subnormal ULPs right, and no float64 built-in
is used (drivers get some wrong: render/wgsl_round.py). ``ga_scalbn`` rounds a subnormal result to nearest
even on the integer significand: exactly NumPy's ``ldexp``. ``cbrt`` is the one inexact op: Halley steps
from a quadratic start for the significand in [1, 8), then a Newton step, the exponent divided by 3 exactly
on the bits. On lavapipe, over 400000 random float32 bit patterns, it is within 0.94 ULP of the exact
cube root, where NumPy's float32 cbrt is up to 1.87 ULP off it (so the two differ by up to 2 ULP); float64
within 1 ULP of NumPy (tests/test_ufuncs_more.py).

Integer helpers (``INT_B``) take ``{UT}``, the unsigned type of the register's width, and ``{POP}``, the
population count of a ``{UT}`` named ``u`` (64-bit: on its two 32-bit halves, since SPIR-V's bit count is
32-bit only on Vulkan). Divisions are ``a - (a / b) * b`` rather than ``%`` (NVIDIA's Vulkan driver got
``%`` of negative operands wrong: wgsl_lib.py's ``ga_remainder``); WGSL defines ``INT_MIN / -1`` as
``INT_MIN``, so ``fmod(INT_MIN, -1)`` is 0 as in NumPy.
"""

from __future__ import annotations

FLT_B: dict[str, str] = {}   # every float type (the float64 versions where a type needs its own)
F32_B: dict[str, str] = {}   # float32 versions
INT_B: dict[str, str] = {}   # signed and unsigned integers (i32 also holds int8 / int16, u32 uint8 / uint16)

# floor(log2(a)) of a nonzero integer of the float's bit type (float64: on the two 32-bit halves)
FLT_B["log2i"] = """fn ga_log2i_{S}(a: {U}) -> i32 {
  let hi = u32(a >> 32u);
  if (hi != 0u) { return 63 - i32(countLeadingZeros(hi)); }
  return 31 - i32(countLeadingZeros(u32(a & 0xfffffffflu)));
}"""
F32_B["log2i"] = "fn ga_log2i_f32(a: u32) -> i32 { return 31 - i32(countLeadingZeros(a)); }"

# floor(log2 |x|) of a finite nonzero x, subnormals included
FLT_B["ilogb"] = """fn ga_ilogb_{S}(x: {T}) -> i32 {
  let a = bitcast<{U}>(x) & {ABSM};
  let e = i32(u32(a >> {MB}));
  if (e != 0) { return e - i32({BIAS}); }
  return ga_log2i_{S}(a) - i32({BIAS}) + 1 - i32({MB});
}"""

# the significand of a finite nonzero x as an integer with its leading bit at {IMPL} (subnormals normalized)
FLT_B["sig"] = """fn ga_sig_{S}(x: {T}) -> {U} {
  let a = bitcast<{U}>(x) & {ABSM};
  if ((a >> {MB}) != {U}(0)) { return (a & {MANT}) | {IMPL}; }
  return a << u32(i32({MB}) - ga_log2i_{S}(a));
}"""

# ldexp(x, n), the integer n held in a float of x's type (the op table converts the exponent operand):
# x 2^n with one rounding, to nearest even where the result is subnormal; +-inf past the largest, +-0
# below half the smallest subnormal; +-0, +-inf and NaN as they are
FLT_B["scalbn"] = """fn ga_scalbn_{S}(x: {T}, n: {T}) -> {T} {
  let u = bitcast<{U}>(x);
  let a = u & {ABSM};
  if (a == {U}(0) || a >= {INFB}) { return x; }
  let k = select(select(i32(n), -100000, n < {T}(-100000)), 100000, n > {T}(100000));
  let e = ga_ilogb_{S}(x) + k;
  let s = u & {SIGN};
  let bias = i32({BIAS});
  if (e > bias) { return bitcast<{T}>(s | {INFB}); }
  let m = ga_sig_{S}(x);
  if (e >= 1 - bias) { return bitcast<{T}>(s | ({U}(u32(e + bias)) << {MB}) | (m & {MANT})); }
  let sh = 1 - bias - e;
  if (sh > i32({MB}) + 1) { return bitcast<{T}>(s); }
  let q = m >> u32(sh);
  let r = m - (q << u32(sh));
  let half = {ONE} << u32(sh - 1);
  let up = r > half || (r == half && (q & {ONE}) != {U}(0));
  return bitcast<{T}>(s | (q + select({U}(0), {ONE}, up)));
}"""

# frexp's exponent: floor(log2 |x|) + 1, 0 for +-0, +-inf and NaN (as NumPy gives); the mantissa is
# ldexp(x, -exponent) (interop/ufuncs.py)
FLT_B["frexpe"] = """fn ga_frexpe_{S}(x: {T}) -> i32 {
  let a = bitcast<{U}>(x) & {ABSM};
  if (a == {U}(0) || a >= {INFB}) { return 0; }
  return ga_ilogb_{S}(x) + 1;
}"""

# NumPy's spacing: the distance from x to the next float away from zero, with x's sign (+ for +-0);
# NaN for +-inf, +-inf for +-max; on the bits: 2^(e - MB), a subnormal where that is below the normals
FLT_B["spacing"] = """fn ga_spacing_{S}(x: {T}) -> {T} {
  let u = bitcast<{U}>(x);
  let a = u & {ABSM};
  if (a > {INFB}) { return x; }
  if (a == {INFB}) { return ga_nan_{S}(); }
  let s = select(u & {SIGN}, {U}(0), a == {U}(0));
  if (a == {INFB} - {ONE}) { return bitcast<{T}>(s | {INFB}); }
  let eb = max(i32(u32(a >> {MB})), 1);
  let p = eb - i32({MB});
  if (p >= 1) { return bitcast<{T}>(s | ({U}(u32(p)) << {MB})); }
  return bitcast<{T}>(s | ({ONE} << u32(eb - 1)));
}"""

# cbrt: |x| = y 2^(3k) with y in [1, 8) (k = floor(ilogb / 3), on the bits), cbrt(y) in [1, 2) by three
# Halley steps t (t^3 + 2y) / (2t^3 + y) from a quadratic fit (relative error 1.6e-2: 4e-6, 1e-16, then
# rounding only) and one Newton step t - (t^3 - y) / (3t^2), whose rounding errors are a third of an ULP;
# the result t 2^k with x's sign (2^k a normal number: |k| <= 358)
FLT_B["cbrt"] = """fn ga_cbrt_{S}(x: {T}) -> {T} {
  let u = bitcast<{U}>(x);
  let a = u & {ABSM};
  if (a == {U}(0) || a >= {INFB}) { return x; }
  let e = ga_ilogb_{S}(x);
  let k = (e + 1200) / 3 - 400;
  let j = e - 3 * k;
  let y = bitcast<{T}>((ga_sig_{S}(x) & {MANT}) | ({U}(u32(j + i32({BIAS}))) << {MB}));
  var t = ({T}(-0.01466817) * y + {T}(0.26800662)) * y + {T}(0.7626868);
  for (var i = 0; i < 3; i = i + 1) {
    let t3 = t * t * t;
    t = t * (t3 + {T}(2) * y) / ({T}(2) * t3 + y);
  }
  t = t - (t * t * t - y) / ({T}(3) * t * t);
  let p = bitcast<{T}>({U}(u32(k + i32({BIAS}))) << {MB});
  return bitcast<{T}>(bitcast<{U}>(t * p) | (u & {SIGN}));
}"""

# |a| as the unsigned type of its width (|INT_MIN| = 2^(w-1), as NumPy's unsigned gcd / lcm take it)
# the nearest float16 (ties to even; subnormals, overflow to inf, NaN kept) as the float32 that holds it
# (core/dtypes.py): float16 results and casts to float16, on the bits (no subnormal float arithmetic);
# float64 rounds once from its own bits (NumPy's double_to_half)
F32_B["half"] = """fn ga_half_f32(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  let s = b & 0x80000000u;
  let a = b & 0x7fffffffu;
  if (a > 0x7f800000u) { return x; }
  if (a >= 0x477ff000u) { return bitcast<f32>(s | 0x7f800000u); }
  if (a >= 0x38800000u) { return bitcast<f32>(s | ((a + 0xfffu + ((a >> 13u) & 1u)) & 0xffffe000u)); }
  let e = a >> 23u;
  if (e < 102u) { return bitcast<f32>(s); }
  let m = (a & 0x7fffffu) | 0x800000u;
  let sh = 126u - e;
  let q = m >> sh;
  let rem = m & ((1u << sh) - 1u);
  let hf = 1u << (sh - 1u);
  let qq = q + select(0u, 1u, rem > hf || (rem == hf && (q & 1u) == 1u));
  return bitcast<f32>(s | bitcast<u32>(f32(qq) * bitcast<f32>(0x33800000u)));
}"""
FLT_B["half"] = """fn ga_half_{S}(x: f64) -> f32 {
  let b = bitcast<u64>(x);
  let s = u32(b >> 32u) & 0x80000000u;
  let a = b & 0x7ffffffffffffffflu;
  if (a > 0x7ff0000000000000lu) { return bitcast<f32>(s | 0x7fc00000u); }
  if (a >= 0x40effe0000000000lu) { return bitcast<f32>(s | 0x7f800000u); }
  if (a >= 0x3f10000000000000lu) {
    let r = (a + 0x1fffffffffflu + ((a >> 42u) & 1lu)) & 0xfffffc0000000000lu;
    return bitcast<f32>(s | ((u32(r >> 52u) - 896u) << 23u) | u32((r >> 29u) & 0x7ffffflu));
  }
  let e = u32(a >> 52u);
  if (e < 998u) { return bitcast<f32>(s); }
  let m = (a & 0xffffffffffffflu) | 0x10000000000000lu;
  let sh = 1051u - e;
  let q = u32(m >> sh);
  let rem = m & ((1lu << sh) - 1lu);
  let hf = 1lu << (sh - 1u);
  let qq = q + select(0u, 1u, rem > hf || (rem == hf && (q & 1u) == 1u));
  return bitcast<f32>(s | bitcast<u32>(f32(qq) * bitcast<f32>(0x33800000u)));
}"""
# float16 ops that step on its own encoding (NumPy's npy_half_nextafter and npy_half_spacing), on the
# 16-bit pattern of the float16 value a float32 holds
F32_B["tohbits"] = """fn ga_tohbits_f32(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  let s = (b >> 16u) & 0x8000u;
  let a = b & 0x7fffffffu;
  if (a >= 0x7f800000u) { return s | 0x7c00u | select(0u, 0x200u, a > 0x7f800000u); }
  if (a >= 0x38800000u) { return s | (((a >> 23u) - 112u) << 10u) | ((a >> 13u) & 0x3ffu); }
  return s | u32(bitcast<f32>(a) * 16777216.0);
}"""
F32_B["fromhbits"] = """fn ga_fromhbits_f32(h: u32) -> f32 {
  let s = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0x1fu) { return bitcast<f32>(s | 0x7f800000u | (m << 13u)); }
  if (e == 0u) { return bitcast<f32>(s | bitcast<u32>(f32(m) * bitcast<f32>(0x33800000u))); }
  return bitcast<f32>(s | ((e + 112u) << 23u) | (m << 13u));
}"""
# (``tie``: the result where x == y, +-0 too: y from NumPy 2.5 on, as C's nextafter; x before: core/ops.py)
F32_B["nextafterh"] = """fn ga_nextafterh_f32(x: f32, y: f32, tie: f32) -> f32 {
  let hx = ga_tohbits_f32(x);
  let hy = ga_tohbits_f32(y);
  if ((hx & 0x7fffu) > 0x7c00u || (hy & 0x7fffu) > 0x7c00u) { return bitcast<f32>(0x7fc00000u); }
  if (hx == hy || ((hx | hy) & 0x7fffu) == 0u) { return tie; }
  var r = hx + 1u;
  if ((hx & 0x7fffu) == 0u) {
    r = (hy & 0x8000u) + 1u;
  } else if ((hx & 0x8000u) == 0u) {
    if ((bitcast<i32>(hx << 16u) >> 16u) > (bitcast<i32>(hy << 16u) >> 16u)) { r = hx - 1u; }
  } else if ((hy & 0x8000u) == 0u || (hx & 0x7fffu) > (hy & 0x7fffu)) {
    r = hx - 1u;
  }
  return ga_fromhbits_f32(r);
}"""
F32_B["spacingh"] = """fn ga_spacingh_f32(x: f32) -> f32 {
  let h = ga_tohbits_f32(x);
  let e = h & 0x7c00u;
  var r = 1u;
  if (e == 0x7c00u) {
    r = 0x7e00u;
  } else if (h == 0x7bffu) {
    r = 0x7c00u;
  } else if ((h & 0x8000u) != 0u && (h & 0x3ffu) == 0u) {
    if (e > 0x2c00u) { r = e - 0x2c00u; } else if (e > 0x0400u) { r = 1u << ((e >> 10u) - 2u); }
  } else if (e > 0x2800u) {
    r = e - 0x2800u;
  } else if (e > 0x0400u) {
    r = 1u << ((e >> 10u) - 1u);
  }
  return ga_fromhbits_f32(r);
}"""
INT_B["absu"] = """fn ga_absu_{S}(a: {T}) -> {UT} {
  return select(bitcast<{UT}>(a), {UT}(0) - bitcast<{UT}>(a), a < {T}(0));
}"""
INT_B["gcdu"] = """fn ga_gcdu_{S}(a0: {UT}, b0: {UT}) -> {UT} {
  var a = a0;
  var b = b0;
  loop {
    if (b == {UT}(0)) { break; }
    let r = a - (a / b) * b;
    a = b;
    b = r;
  }
  return a;
}"""
# NumPy's gcd / lcm: Euclid on |a|, |b| in the unsigned type, the result reinterpreted (gcd(INT_MIN, 0) is
# INT_MIN); lcm = |a| / gcd * |b| wrapping, 0 where gcd is 0
INT_B["gcd"] = """fn ga_gcd_{S}(a: {T}, b: {T}) -> {T} {
  return bitcast<{T}>(ga_gcdu_{S}(ga_absu_{S}(a), ga_absu_{S}(b)));
}"""
INT_B["lcm"] = """fn ga_lcm_{S}(a: {T}, b: {T}) -> {T} {
  let ua = ga_absu_{S}(a);
  let ub = ga_absu_{S}(b);
  let g = ga_gcdu_{S}(ua, ub);
  if (g == {UT}(0)) { return {T}(0); }
  return bitcast<{T}>((ua / g) * ub);
}"""
# C's fmod of integers (the sign of a), 0 for b == 0 as NumPy gives
INT_B["fmod"] = """fn ga_fmod_{S}(a: {T}, b: {T}) -> {T} {
  if (b == {T}(0)) { return {T}(0); }
  return a - (a / b) * b;
}"""
# NumPy's bitwise_count: the one bits of |x| (a u32: the op's uint8 result)
INT_B["popcount"] = """fn ga_popcount_{S}(x: {T}) -> u32 {
  let u = ga_absu_{S}(x);
  return {POP};
}"""

# per integer suffix: the unsigned type of its width and the population count of a value u of it
INT_B_CONSTS = {
    "i32": {"UT": "u32", "POP": "countOneBits(u)"},
    "u32": {"UT": "u32", "POP": "countOneBits(u)"},
    "i64": {"UT": "u64", "POP": "countOneBits(u32(u & 0xfffffffflu)) + countOneBits(u32(u >> 32u))"},
    "u64": {"UT": "u64", "POP": "countOneBits(u32(u & 0xfffffffflu)) + countOneBits(u32(u >> 32u))"},
}
