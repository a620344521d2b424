"""What a wgpu adapter does to float32 arithmetic, measured by one tiny kernel.

WGSL leaves two things to the driver that change results bit for bit:

- subnormal float32 values: NVIDIA's Vulkan driver (580, seen on the H200)
  flushes them to zero in arithmetic (``x * 1.0`` of 2.9e-39 gives 0), as
  CUDA's ``-ftz=true`` does; lavapipe keeps them;
- contraction of ``a * b + c`` into one fused multiply-add (one rounding
  instead of two), which naga's SPIR-V does not forbid;
- whether WGSL's ``fma`` rounds once (NVIDIA) or twice (lavapipe), which
  WGSL leaves open.

``numerics(provider)`` runs the probe once per provider and returns the
findings; ``python -m gpuarray info`` prints them and docs/accuracy.md says
what they mean for results.

Example::

    >>> numerics(provider)                               # doctest: +SKIP
    {'flushes_f32_subnormals': True, 'fuses_multiply_add': True, 'exact_fma': True}

``builtin_checks(provider)`` runs the WGSL built-ins that the float32 and
float64 paths use (``round``, ``trunc``, ``floor``, ``ceil``, ``fract``,
``abs``, ``sign``, ``min``, ``max``, ``fma``, ``sqrt`` and division) on hard
inputs (halves, -0.0, values at and above 2^MB, NaN, +-inf, subnormals, the
largest finite values) and says, per dtype, which give NumPy's / IEEE's
exact answer. lavapipe on an AMD CPU gets float64 ``round`` and ``trunc``
wrong (97.5 -> 97, -0.5 -> +0.0, nothing truncated above 2^50).

``overrides(provider, source)`` gives the pipeline constants a shader declares:
``ga_exactfma_f32`` turns on the fma-based correction that makes float32
division and sqrt correctly rounded on drivers whose own are not (NVIDIA's);
``ga_ok<op>_f32`` (``op`` one of round, trunc, floor, ceil) lets float32 take the
driver's built-in where the probe found it exact (render/wgsl_round.py; float64
always takes the exact helpers on the bits).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import numpy as np

_SOURCE = """
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(1)
fn main() {
  out[0] = x[0] * x[1] + f32(prm[0]);   // subnormal * 1 + 0
  out[1] = x[2] * x[3] + x[4];          // rounds a*b first unless fused
  out[2] = fma(x[2], x[3], x[4]);       // WGSL lets fma round twice
}
"""

# x[0] = 2^-130 (subnormal); (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the 2^-24 is lost when the product is
# rounded, kept by a fused multiply-add; adding -(1 + 2^-11) leaves 0 or 2^-24.
_INPUT = np.array([2.0 ** -130, 1.0, 1.0 + 2.0 ** -12, 1.0 + 2.0 ** -12, -(1.0 + 2.0 ** -11)], dtype=np.float32)


def numerics(provider: Any) -> dict[str, bool]:
    """Run the probe on ``provider`` (a WgpuProvider) once; cached on the provider."""
    found = getattr(provider, "_numerics", None)
    if found is not None:
        return dict(found)
    x = provider.upload(_INPUT)
    out = provider.alloc(3 * 4)
    try:
        provider.dispatch(_SOURCE, np.zeros(4, dtype=np.uint32), [x, out], 1)
        provider.flush()
        got = provider.download(out, np.dtype(np.float32), (3,))
    finally:
        provider.free(x)
        provider.free(out)
    found = {"flushes_f32_subnormals": bool(got[0] == 0.0),
             "fuses_multiply_add": bool(got[1] != 0.0),
             "exact_fma": bool(got[2] != 0.0)}
    provider._numerics = found
    return dict(found)


# ---------------------------------------------------------------- the built-ins, float32 and float64
# Unary built-ins are checked on the values of _unary, min / max on pairs of them, fma on _fma_triples.
BUILTINS = ("round", "trunc", "floor", "ceil", "fract", "abs", "sign", "min", "max", "fma", "sqrt", "div")
# the rounding built-ins that float32 kernels take where they are exact (render/wgsl_round.py)
ROUNDING = ("round", "trunc", "floor", "ceil")

_BUILTIN_SOURCE = """
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<{T}>;
@group(0) @binding(2) var<storage, read_write> out: array<{T}>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let n = prm[0];                      // unary values x[0, n), pairs' second values x[n, 2n)
  let k = prm[1];                      // fma triples x[2n, 2n + 3k)
  let i = gid.x;
  if (i < n) {
    let a = x[i];
    let b = x[n + i];
    out[i] = round(a);
    out[n + i] = trunc(a);
    out[2u * n + i] = floor(a);
    out[3u * n + i] = ceil(a);
    out[4u * n + i] = fract(a);
    out[5u * n + i] = abs(a);
    out[6u * n + i] = sign(a);
    out[7u * n + i] = min(a, b);
    out[8u * n + i] = max(a, b);
    out[9u * n + i] = sqrt(a);
    out[10u * n + i] = a / b;
  }
  if (i < k) {
    let t = 2u * n + 3u * i;
    out[11u * n + i] = fma(x[t], x[t + 1u], x[t + 2u]);
  }
}
"""


def _unary(dt: np.dtype) -> np.ndarray:
    """Hard inputs for rounding: zeros, halves, values next to 1/2 and 1, at and around 2^(MB-2) .. 2^(MB+1)
    (MB the significand's width), NaN, +-inf, subnormals, tiny and the largest finite values."""
    fi = np.finfo(dt)
    mb = int(fi.nmant)
    big = [2.0 ** (mb - 2) + 0.25, 2.0 ** (mb - 2) + 0.75, 2.0 ** (mb - 1) + 0.5, 2.0 ** (mb - 1) + 1.5,
           2.0 ** mb - 0.5, 2.0 ** mb - 1.0, 2.0 ** mb, 2.0 ** mb + 1.0, 2.0 ** mb + 2.0, 2.0 ** (mb + 1) + 2.0]
    vals = [0.0, 0.5, 1.5, 2.5, 3.5, 97.5, 0.3, 0.7, 1.0, 3.7, 123456.75, 1e6 + 0.5,
            float(np.nextafter(dt.type(0.5), dt.type(0))), float(np.nextafter(dt.type(0.5), dt.type(1))),
            float(np.nextafter(dt.type(1), dt.type(0))), float(fi.tiny), float(fi.smallest_subnormal),
            float(fi.tiny) / 4, float(fi.max), 1e30, np.inf, *big]
    vals = vals + [-v for v in vals] + [np.nan]
    return np.array(vals, dtype=dt)


def _fma_triples(dt: np.dtype) -> np.ndarray:
    """(a, b, c) with a b + c exact only when rounded once: (1 + 2^-h)^2 - (1 + 2^-(h-1)) = 2^-2h, h above
    half the significand's width, and the same with other signs and scales."""
    h = (int(np.finfo(dt).nmant) + 3) // 2
    e = 2.0 ** -h
    rows = [(1 + e, 1 + e, -(1 + 2 * e)), (1 + e, -(1 + e), 1 + 2 * e), (1 - e, 1 + e, -1.0),
            (3 * (1 + e), 1 + e, -3 * (1 + 2 * e)), ((1 + e) * 2.0 ** 40, (1 + e) * 2.0 ** -40, -(1 + 2 * e)),
            (0.1, 10.0, -1.0), (1.0, 1.0, 1.0)]
    return np.array(rows, dtype=dt).reshape(-1)


def _exact(values: Fraction, dt: np.dtype) -> float:
    """``values`` rounded once to ``dt`` (to nearest, ties to even)."""
    q = dt.type(float(values))                       # float64 correctly rounded, then dt: maybe off by one step
    best = q
    for c in (np.nextafter(q, dt.type(-np.inf)), np.nextafter(q, dt.type(np.inf))):
        dc, db = abs(Fraction(float(c)) - values), abs(Fraction(float(best)) - values)
        if dc < db or (dc == db and int(np.array(c).view(f"u{dt.itemsize}")) % 2 == 0):
            best = c
    return float(best)


def _same(got: np.ndarray, want: np.ndarray, signed_zero: bool = True) -> bool:
    """Bit-for-bit agreement up to NaN payloads (and the sign of zero unless ``signed_zero``)."""
    nan = np.isnan(want)
    if not np.array_equal(np.isnan(got), nan):
        return False
    g, w = got[~nan], want[~nan]
    return bool(np.all(g == w) and (not signed_zero or np.all(np.signbit(g) == np.signbit(w))))


def _judge(dt: np.dtype, x: np.ndarray, y: np.ndarray, t: np.ndarray, got: np.ndarray,
           flushes: bool) -> dict[str, bool]:
    """Which built-ins gave the exact answer. On an adapter that flushes float32 subnormals
    (``numerics``) the arithmetic ones are not judged on subnormal inputs or results: that flushing
    is reported by itself."""
    n, k = x.size, t.size // 3
    r = {name: got[j * n:(j + 1) * n] for j, name in enumerate(BUILTINS[:9] + BUILTINS[10:])}
    r["fma"] = got[11 * n:11 * n + k]
    tiny = np.finfo(dt).tiny
    with np.errstate(all="ignore"):
        want = {"round": np.rint(x), "trunc": np.trunc(x), "floor": np.floor(x), "ceil": np.ceil(x),
                "fract": x - np.floor(x), "abs": np.abs(x), "sign": np.sign(x),
                "min": np.minimum(x, y), "max": np.maximum(x, y), "sqrt": np.sqrt(x), "div": x / y}
        sub = (np.abs(x) < tiny) | (np.abs(y) < tiny)
    out: dict[str, bool] = {}
    for name, w in want.items():
        keep = np.ones(n, dtype=bool)
        if name == "fract":                       # WGSL: x - floor(x), finite x only
            keep = np.isfinite(x)
        if name == "sign":                        # of NaN: WGSL leaves it open (lavapipe: 0); ga_sign tests
            keep = ~np.isnan(x)
        if name in ("min", "max"):                # WGSL leaves NaN operands and ties of zeros open
            keep = ~np.isnan(x) & ~np.isnan(y) & ~((x == 0) & (y == 0))
        if name in ("sqrt", "div"):               # IEEE special values come from the helpers (ga_sqrt, ga_div)
            keep = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y != 0) & np.isfinite(w)
        if flushes and name not in ROUNDING:
            keep &= ~sub & ~((w != 0) & (np.abs(w) < tiny))
        out[name] = _same(r[name][keep], w[keep], signed_zero=name not in ("fract", "sign"))
    a, b, c = t[0::3], t[1::3], t[2::3]
    fma = np.array([_exact(Fraction(float(p)) * Fraction(float(q)) + Fraction(float(s)), dt)
                    for p, q, s in zip(a, b, c, strict=True)], dtype=dt)
    out["fma"] = _same(r["fma"], fma)
    return {name: out[name] for name in BUILTINS}


def builtin_checks(provider: Any) -> dict[str, dict[str, bool]]:
    """``{"f32": {builtin: exact?}, "f64": {...}}`` (``f64`` only where the adapter has float64) for
    ``provider`` (a WgpuProvider); run once, cached on the provider."""
    found = getattr(provider, "_builtins", None)
    if found is not None:
        return {k: dict(v) for k, v in found.items()}
    flushes = numerics(provider)["flushes_f32_subnormals"]
    result: dict[str, dict[str, bool]] = {}
    for suffix, dt in (("f32", np.dtype(np.float32)), ("f64", np.dtype(np.float64))):
        if dt == np.float64 and not getattr(provider, "f64", False):
            continue
        x = _unary(dt)
        y = np.roll(x, 7)
        t = _fma_triples(dt)
        data = np.concatenate([x, y, t])
        n, k = x.size, t.size // 3
        h = provider.upload(data)
        out = provider.alloc((11 * n + k) * dt.itemsize)
        try:
            provider.dispatch(_BUILTIN_SOURCE.replace("{T}", suffix), np.array([n, k, 0, 0], dtype=np.uint32),
                              [h, out], -(-max(n, k) // 64))
            provider.flush()
            got = provider.download(out, dt, (11 * n + k,))
        finally:
            provider.free(h)
            provider.free(out)
        result[suffix] = _judge(dt, x, y, t, got, flushes and dt == np.float32)
    provider._builtins = result
    return {k: dict(v) for k, v in result.items()}


def fallbacks(checks: dict[str, dict[str, bool]], found: dict[str, bool]) -> dict[str, dict[str, str]]:
    """Per dtype (``f32``, ``f64``), for each built-in that ``builtin_checks`` found not exact, what the
    kernels do about it (``found``: ``numerics``)."""
    out: dict[str, dict[str, str]] = {}
    for suffix, ok in checks.items():
        notes: dict[str, str] = {}
        for name in (n for n in BUILTINS if not ok.get(n, True)):
            if name in ROUNDING:
                notes[name] = "exact helper on the bits"
            elif name in ("sqrt", "div"):
                notes[name] = ("one fma correction (exact_fma)" if suffix == "f32" and found.get("exact_fma")
                               else "none: the driver's is used")
            elif name == "fma":
                notes[name] = ("rounds twice; not used" if suffix == "f64"
                               else "rounds twice; division and sqrt go without the fma correction")
            elif name == "fract":
                notes[name] = "not used"
            elif name == "sign":
                notes[name] = "not used (ga_sign on the bits; fast_math's tanh only for |x| > 9)"
            else:
                notes[name] = "none: the driver's is used"
        out[suffix] = notes
    return out


_OK_CONSTANT = re.compile(r"override ga_ok([a-z]+)_f32\b")


def overrides(provider: Any, source: str) -> dict[str, Any]:
    """``{"constants": ...}`` for the pipeline of ``source`` (empty when it declares none)."""
    constants: dict[str, float] = {}
    if "override ga_exactfma_f32" in source:
        found = getattr(provider, "_numerics", None) or numerics(provider)
        constants["ga_exactfma_f32"] = 1.0 if found["exact_fma"] else 0.0
    ok = _OK_CONSTANT.findall(source)
    if ok:
        checks = (getattr(provider, "_builtins", None) or builtin_checks(provider))["f32"]
        constants.update({f"ga_ok{name}_f32": 1.0 if checks.get(name) else 0.0 for name in ok})
    return {"constants": constants} if constants else {}
