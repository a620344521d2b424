"""WGSL helper functions used by op templates, instantiated per type on demand.

Helpers are named ``ga_<name>_<suffix>`` (``ga_isnan_f32``); ``helpers_for(src)``
returns the definitions a shader needs, dependencies included. NaN and
infinity are detected through bitcasts and never written as literals
(WGSL compilers may assume no NaN; ``1.0/0.0`` is a creation error).
"""

from __future__ import annotations

import re

# Per float suffix: bits type and masks.
FLOAT_CONSTS = {
    "f32": {"T": "f32", "U": "u32", "SIGN": "0x80000000u", "ABSM": "0x7fffffffu",
            "INFB": "0x7f800000u", "NANB": "0x7fc00000u", "ONE": "1u"},
    "f64": {"T": "f64", "U": "u64", "SIGN": "0x8000000000000000lu", "ABSM": "0x7ffffffffffffffflu",
            "INFB": "0x7ff0000000000000lu", "NANB": "0x7ff8000000000000lu", "ONE": "1lu"},
}
INT_CONSTS = {s: {"T": s} for s in ("i32", "i64", "u32", "u64")}

FLT: dict[str, str] = {}   # float helpers: name -> body template
INT: dict[str, str] = {}   # integer helpers (signed and unsigned)

FLT["isnan"] = "fn ga_isnan_{S}(x: {T}) -> bool { return (bitcast<{U}>(x) & {ABSM}) > {INFB}; }"
FLT["isinf"] = "fn ga_isinf_{S}(x: {T}) -> bool { return (bitcast<{U}>(x) & {ABSM}) == {INFB}; }"
FLT["isfinite"] = "fn ga_isfinite_{S}(x: {T}) -> bool { return (bitcast<{U}>(x) & {INFB}) != {INFB}; }"
FLT["signbit"] = "fn ga_signbit_{S}(x: {T}) -> bool { return (bitcast<{U}>(x) & {SIGN}) != {U}(0); }"
FLT["nan"] = "fn ga_nan_{S}() -> {T} { return bitcast<{T}>({NANB}); }"
FLT["inf"] = "fn ga_inf_{S}() -> {T} { return bitcast<{T}>({INFB}); }"
FLT["copysign"] = """fn ga_copysign_{S}(a: {T}, b: {T}) -> {T} {
  return bitcast<{T}>((bitcast<{U}>(a) & {ABSM}) | (bitcast<{U}>(b) & {SIGN}));
}"""
FLT["maximum"] = """fn ga_maximum_{S}(a: {T}, b: {T}) -> {T} {
  if (ga_isnan_{S}(a)) { return a; }
  if (ga_isnan_{S}(b)) { return b; }
  return select(b, a, a > b);
}"""
FLT["minimum"] = """fn ga_minimum_{S}(a: {T}, b: {T}) -> {T} {
  if (ga_isnan_{S}(a)) { return a; }
  if (ga_isnan_{S}(b)) { return b; }
  return select(b, a, a < b);
}"""
FLT["sign"] = """fn ga_sign_{S}(x: {T}) -> {T} {
  if (ga_isnan_{S}(x)) { return x; }
  if (x > {T}(0)) { return {T}(1); }
  if (x < {T}(0)) { return {T}(-1); }
  return {T}(0);
}"""
FLT["fmod"] = """fn ga_fmod_{S}(a: {T}, b: {T}) -> {T} {
  if (ga_isnan_{S}(a) || ga_isnan_{S}(b) || ga_isinf_{S}(a) || b == {T}(0)) { return ga_nan_{S}(); }
  if (ga_isinf_{S}(b)) { return a; }
  let r = a - b * trunc(a / b);
  if (r == {T}(0)) { return ga_copysign_{S}({T}(0), a); }
  return r;
}"""
FLT["remainder"] = """fn ga_remainder_{S}(a: {T}, b: {T}) -> {T} {
  let m = ga_fmod_{S}(a, b);
  if (ga_isnan_{S}(m)) { return m; }
  if (m != {T}(0)) {
    if ((b < {T}(0)) != (m < {T}(0))) { return m + b; }
    return m;
  }
  return ga_copysign_{S}({T}(0), b);
}"""
FLT["floordiv"] = """fn ga_floordiv_{S}(a: {T}, b: {T}) -> {T} {
  if (b == {T}(0) || ga_isnan_{S}(a) || ga_isnan_{S}(b)) { return a / b; }
  let m = ga_fmod_{S}(a, b);
  if (ga_isnan_{S}(m)) { return m; }
  var d = (a - m) / b;
  if (m != {T}(0) && ((b < {T}(0)) != (m < {T}(0)))) { d = d - {T}(1); }
  if (d != {T}(0)) {
    var f = floor(d);
    if (d - f > {T}(0.5)) { f = f + {T}(1); }
    return f;
  }
  return ga_copysign_{S}({T}(0), a / b);
}"""
FLT["pow"] = """fn ga_pow_{S}(x: {T}, y: {T}) -> {T} {
  if (y == {T}(0) || x == {T}(1)) { return {T}(1); }
  if (ga_isnan_{S}(x) || ga_isnan_{S}(y)) { return ga_nan_{S}(); }
  let yint = ga_isfinite_{S}(y) && floor(y) == y;
  let yodd = yint && floor(y * {T}(0.5)) != y * {T}(0.5);
  if (ga_isinf_{S}(y)) {
    let ax = abs(x);
    if (ax == {T}(1)) { return {T}(1); }
    if ((ax > {T}(1)) == (y > {T}(0))) { return ga_inf_{S}(); }
    return {T}(0);
  }
  if (x == {T}(0)) {
    if (y < {T}(0)) { return select(ga_inf_{S}(), ga_copysign_{S}(ga_inf_{S}(), x), yodd); }
    return select({T}(0), x, yodd);
  }
  if (ga_isinf_{S}(x)) {
    if (x > {T}(0)) { return select({T}(0), x, y > {T}(0)); }
    if (y < {T}(0)) { return select({T}(0), -{T}(0), yodd); }
    return select(ga_inf_{S}(), x, yodd);
  }
  if (x < {T}(0)) {
    if (!yint) { return ga_nan_{S}(); }
    let r = pow(-x, y);
    return select(r, -r, yodd);
  }
  return pow(x, y);
}"""
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
  return atan2(y, x);
}"""
FLT["hypot"] = """fn ga_hypot_{S}(a: {T}, b: {T}) -> {T} {
  if (ga_isinf_{S}(a) || ga_isinf_{S}(b)) { return ga_inf_{S}(); }
  if (ga_isnan_{S}(a) || ga_isnan_{S}(b)) { return ga_nan_{S}(); }
  let x = abs(a);
  let y = abs(b);
  let m = max(x, y);
  if (m == {T}(0)) { return {T}(0); }
  let n = min(x, y) / m;
  return m * sqrt({T}(1) + n * n);
}"""
FLT["logaddexp"] = """fn ga_logaddexp_{S}(a: {T}, b: {T}) -> {T} {
  if (ga_isnan_{S}(a) || ga_isnan_{S}(b)) { return ga_nan_{S}(); }
  if (a == b) { return a + {T}(0.69314718055994530942); }
  let m = max(a, b);
  if (ga_isinf_{S}(m)) { return m; }
  return m + ga_log1p_{S}(ga_exp_{S}(-abs(a - b)));
}"""
FLT["nextafter"] = """fn ga_nextafter_{S}(x: {T}, y: {T}) -> {T} {
  if (ga_isnan_{S}(x) || ga_isnan_{S}(y)) { return ga_nan_{S}(); }
  if (x == y) { return y; }
  if (x == {T}(0)) { return ga_copysign_{S}(bitcast<{T}>({ONE}), y); }
  let b = bitcast<{U}>(x);
  if ((x < y) == (x > {T}(0))) { return bitcast<{T}>(b + {ONE}); }
  return bitcast<{T}>(b - {ONE});
}"""

INT["sign"] = """fn ga_sign_{S}(x: {T}) -> {T} {
  return select(select({T}(0), {T}(-1), x < {T}(0)), {T}(1), x > {T}(0));
}"""
INT["floordiv"] = """fn ga_floordiv_{S}(a: {T}, b: {T}) -> {T} {
  if (b == {T}(0)) { return {T}(0); }
  var q = a / b;
  if ((a % b != {T}(0)) && ((a < {T}(0)) != (b < {T}(0)))) { q = q - {T}(1); }
  return q;
}"""
INT["remainder"] = """fn ga_remainder_{S}(a: {T}, b: {T}) -> {T} {
  if (b == {T}(0)) { return {T}(0); }
  var r = a % b;
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

_NAME = re.compile(r"\bga_([a-z0-9]+)_(f32|f64|i32|i64|u32|u64)\b")


def _definition(name: str, suffix: str) -> str:
    if suffix in FLOAT_CONSTS:
        table, consts = FLT, FLOAT_CONSTS[suffix]
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
        text = _definition(name, suffix)
        done[key] = text
        for m in _NAME.finditer(text):
            if (m.group(1), m.group(2)) != key:
                visit(m.group(1), m.group(2))
        order.append(key)

    for m in _NAME.finditer(src):
        visit(m.group(1), m.group(2))
    return "\n".join(done[k] for k in order)
