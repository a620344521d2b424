"""Exact rounding to integers in WGSL: ``ga_round`` (half to even), ``ga_trunc``, ``ga_floor``, ``ga_ceil``.

WGSL's ``round`` / ``trunc`` / ``floor`` / ``ceil`` are the driver's, and drivers get them wrong:
lavapipe on an AMD CPU rounds float64 halves toward zero (97.5 -> 97, -1.5 -> -1), gives +0.0 for
``round(-0.5)`` and ``trunc(-0.5)``, and leaves values above about 2^50 untruncated. The helpers here
work on the bits of the value as an unsigned integer: the fraction bits of ``|x|`` (the low
``EINT - e`` bits of its encoding, ``e`` the biased exponent) are cleared, and one unit of the last
integer place is added where the rounding goes up (a carry out of the significand is the next binade,
which the encoding gets right by itself); the sign bit is copied back, so -0.0 and the sign of a
zero result are NumPy's. No float arithmetic is involved, so a driver that contracts, reassociates
or flushes cannot change the result. ``|x| >= 2^MB`` (already an integer), infinities and NaN are
returned unchanged.

``FLT_ROUND`` holds them for every float type (``ga_<op>exact_{S}``, and ``ga_<op>_{S}`` calling
it). ``F32_ROUND`` replaces ``ga_<op>_f32``: the driver's built-in where the start-up probe found it
exact (``providers/wgpu_probe.py``: the pipeline constant ``ga_ok<op>_f32``), else the exact helper.
float64 always takes the exact helper: its built-ins are the ones found wrong, and the bit version
costs a few integer operations.
"""

from __future__ import annotations

# Extra per-type constants (merged into wgsl_lib.FLOAT_CONSTS): the exponent bias, the biased exponent
# of 2^MB (from there on every value is an integer), and the bits of 0.5 and 1.0.
ROUND_CONSTS = {
    "f32": {"BIAS": "127u", "EINT": "150u", "HALFB": "0x3f000000u", "ONEB": "0x3f800000u"},
    "f64": {"BIAS": "1023u", "EINT": "1075u", "HALFB": "0x3fe0000000000000lu", "ONEB": "0x3ff0000000000000lu"},
}

ROUNDING = ("round", "trunc", "floor", "ceil")

# The common part: a = |x|'s bits, e its biased exponent, s the number of fraction bits in the
# encoding for 1 <= |x| < 2^MB (clamped to [1, MB] elsewhere, where the result does not use it), unit
# the last integer place, f the fraction bits.
_HEAD = """  let u = bitcast<{U}>(x);
  let a = u & {ABSM};
  let e = u32(a >> {MB});
  let neg = (u & {SIGN}) != {U}(0);
  let s = select(select({EINT} - e, {MB}, e < {BIAS}), 1u, e >= {EINT});
  let unit = {ONE} << s;
  let f = a & (unit - {ONE});"""

# (the rounded magnitude for 1 <= |x| < 2^MB, the rounded magnitude for |x| < 1)
_RULES = {
    # half to even: up when the fraction is above one half, or exactly one half and the integer part
    # odd (its lowest bit is the encoding's bit s; for 1 <= |x| < 2 the exponent's lowest bit, 1 as
    # the bias is odd); |x| < 1: 1 above 0.5, else 0
    "round": ("(a - f) + select({U}(0), unit, f > (unit >> 1u) || (f == (unit >> 1u) && (a & unit) != {U}(0)))",
              "select({U}(0), {ONEB}, a > {HALFB})"),
    "trunc": ("a - f", "{U}(0)"),
    # toward -inf: the magnitude goes up for a negative value with a fraction; -1 for -1 < x < 0
    "floor": ("(a - f) + select({U}(0), unit, neg && f != {U}(0))", "select({U}(0), {ONEB}, neg && a != {U}(0))"),
    "ceil": ("(a - f) + select({U}(0), unit, !neg && f != {U}(0))", "select({U}(0), {ONEB}, !neg && a != {U}(0))"),
}

FLT_ROUND: dict[str, str] = {}
F32_ROUND: dict[str, str] = {}
for _op, (_big, _small) in _RULES.items():
    FLT_ROUND[_op + "exact"] = (
        f"fn ga_{_op}exact_{{S}}(x: {{T}}) -> {{T}} {{\n"
        f"  // {_op} on the bits (render/wgsl_round.py): exact on every driver\n"
        f"{_HEAD}\n"
        f"  let m = select(select({_big}, {_small}, e < {{BIAS}}), a, e >= {{EINT}});\n"
        "  return bitcast<{T}>(m | (u & {SIGN}));\n"
        "}")
    FLT_ROUND[_op] = f"fn ga_{_op}_{{S}}(x: {{T}}) -> {{T}} {{ return ga_{_op}exact_{{S}}(x); }}"
    # the pipeline constant is set per provider from the probe (providers/wgpu_probe.overrides)
    F32_ROUND["ok" + _op] = f"override ga_ok{_op}_f32: bool = false;"
    F32_ROUND[_op] = (
        f"fn ga_{_op}_f32(x: f32) -> f32 {{\n"
        f"  if (ga_ok{_op}_f32) {{ return {_op}(x); }}     // the driver's, found exact by the start-up probe\n"
        f"  return ga_{_op}exact_f32(x);\n"
        "}")
