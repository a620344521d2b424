"""Write docs/accuracy.md: the largest error of every floating-point elementwise op, per provider.

    XDG_RUNTIME_DIR=/tmp python scripts/gen_accuracy.py            # writes docs/accuracy.md
    python scripts/gen_accuracy.py --out - --n 20000                # a quick look, to stdout
    # on the NVIDIA H200 (docs/accuracy-h200.md):
    XDG_RUNTIME_DIR=/tmp python scripts/gen_accuracy.py --devices cpu,wgpu:0 --out docs/accuracy-h200.md

For each op of ``gpuarray.core.ops.OPS`` that takes and returns real floating-point values,
each device (``cpu``, every ``wgpu:N``) and float32 / float64 (where the device has it),
the op runs on a fixed sample (seeded, so every run sees the same inputs):

- unary ops: the special values (0, -0.0, +-inf, NaN, 1, -1, 0.5, finfo.max, finfo.tiny,
  subnormals, halves such as 97.5 and 2^(MB-1) + 0.5, values at and above 2^MB, ...) and a
  dense sample: uniform on [-1, 1], [-20, 20] and [-100, 100],
  magnitudes spread over the whole exponent range, values near 1 and near multiples
  of pi/2, half-integers;
- binary ops: every pair of special values, and as many random pairs from the dense
  sample (``ldexp``: int32 exponents, special ones with every special value and random ones).

Each result is compared with NumPy's on the same inputs (the ``vs NumPy`` columns) and
with a more precise reference rounded to the dtype (``vs exact``: NumPy in float64 for
float32 inputs, in long double for float64 inputs; long double is x87 80-bit on x86-64,
so the float64 ``vs exact`` column is only as good as its libm). Errors are in units in
the last place (ULP) of the reference. ``special`` counts the inputs where NaN, an
infinity or the sign of a zero differs from NumPy (these must be 0). ``host`` marks ops
that this device runs on the host (float64 ops in the adapter's ``host_only_f64``, DESIGN.md 5.8;
none now: every float64 transcendental has a software version, render/wgsl_f64*.py).
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from typing import Any

import numpy as np

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import gpuarray as xp  # noqa: E402
from gpuarray.core.dtypes import CATEGORIES  # noqa: E402
from gpuarray.core.ops import OPS, SCIPY_DEVICE_N  # noqa: E402
from gpuarray.namespace.elementwise import OP_FUNCTIONS  # noqa: E402

F32, F64 = np.dtype("float32"), np.dtype("float64")
# Real floating in, real floating out. Complex helpers (conj, real, imag) are identities on
# real input, and where/comparisons/predicates do not round.
SKIP = {"conj", "real", "imag", "where"}
# ops defined on the dtype's own encoding (one ULP of x, the next value): a wider type's result is another
# function's, so their "exact" reference is NumPy's in the dtype itself
OWN_DTYPE = {"spacing", "nextafter"}
NUMPY_FUNC = {"round": np.round}
# logaddexp(a, b) = m + log1p(exp(-|a - b|)), m = max(a, b), cancels when the result is near 0:
# there NumPy itself is thousands of ULP of the result from the exact value. Its error is measured
# in ULP of max(|result|, |m|), as tests/test_elementwise.py does.
ERROR_SCALE: dict[str, Any] = {"logaddexp": lambda a, b: np.abs(np.maximum(a, b))}
# gpuarray.special's ops against SciPy, measured as the tests measure them: float64 erfc, erfcx, ndtr, log_ndtr,
# ndtri, erfinv, erfcinv in ULP of a magnitude that allows for SciPy's own error (tests/conftest.py
# scipy_f64_scale; the error function family against exact values: the hand-written section below);
# gammaln and psi at x < 0 in ULP of the reflection's terms (tests/test_special_ops.py SCALE)
try:
    from tests.conftest import scipy_f64_scale  # noqa: E402
    from tests.test_special_ops import SCALE  # noqa: E402
except ImportError:            # no SciPy or pytest: those ops compare in ULP of the result
    pass
else:
    ERROR_SCALE.update({n: (lambda x, n=n: scipy_f64_scale(n, x))
                        for n in ("erfc", "erfcx", "ndtr", "log_ndtr", "ndtri", "erfinv", "erfcinv")})
    ERROR_SCALE.update(SCALE)


def float_ops() -> list[str]:
    """The multi-argument SciPy functions (betainc, stdtr, gammainc ...) are measured against exact values
    by tests/test_special_incomplete.py: the hand-written section of docs/accuracy.md; ops of three
    operands (``clip_ties``: comparisons, exact) are not sampled here."""
    return [n for n, d in OPS.items() if n not in SKIP and n not in SCIPY_DEVICE_N and d.nargs <= 2
            and F32 in CATEGORIES[d.category] and d.result in ("same", "float", "real", "double", "first")]


def specials(dt: np.dtype) -> np.ndarray:
    fi = np.finfo(dt)
    huge = 1e30 if dt == F32 else 1e300
    mb = int(fi.nmant)            # from 2^mb on every value is an integer
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 7.0, -7.0, 0.1, 100.0, np.nan, np.inf,
            -np.inf, fi.tiny, -fi.tiny, huge, -huge, fi.max, -fi.max, fi.smallest_subnormal,
            -fi.smallest_subnormal, fi.tiny / 4, np.pi / 2, np.pi, 88.7, -103.9, 709.7, -745.1,
            # what drivers' rounding built-ins got wrong (render/wgsl_round.py)
            -1.5, 97.5, -97.5, float(np.nextafter(dt.type(0.5), dt.type(0))), 2.0 ** (mb - 1) + 0.5,
            -(2.0 ** (mb - 1) + 0.5), 2.0 ** mb - 0.5, -(2.0 ** mb - 0.5), 2.0 ** mb + 1, -(2.0 ** mb + 2)]
    with np.errstate(all="ignore"):
        return np.array(vals, dtype=np.float64).astype(dt)


def dense(dt: np.dtype, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    fi = np.finfo(dt)
    top = np.log10(float(fi.max)) - 0.01
    low = np.log10(float(fi.smallest_subnormal)) + 0.01
    sign = rng.choice([-1.0, 1.0], n)
    parts = [
        rng.uniform(-1, 1, n), rng.uniform(-20, 20, n), rng.uniform(-100, 100, n // 4),
        sign * 10.0 ** rng.uniform(low, top, n), sign * 10.0 ** rng.uniform(-8, 8, n),
        1.0 + rng.uniform(-1e-3, 1e-3, n // 4), 1.0 + float(fi.eps) * rng.integers(-64, 64, n // 8),
        np.arange(-200, 201) * (np.pi / 2), np.arange(-20, 20.5, 0.5),
    ]
    with np.errstate(all="ignore"):
        return np.concatenate(parts).astype(dt)


def inputs(name: str, dt: np.dtype, n: int) -> tuple[np.ndarray, ...]:
    sp = specials(dt)
    d = dense(dt, n, seed=sum(name.encode()) + dt.itemsize)
    if OPS[name].nargs == 1:
        return (np.concatenate([sp, d]),)
    rng = np.random.default_rng(7 + dt.itemsize)
    a = np.concatenate([np.repeat(sp, sp.size), d])
    b = np.concatenate([np.tile(sp, sp.size), rng.permutation(d)])
    if name == "pow":      # exponents spread over a useful range too
        b[sp.size ** 2:] = rng.uniform(-30, 30, d.size).astype(dt)
    if OPS[name].result == "first":      # ldexp: int32 exponents, past both ends of the range
        mb = int(np.finfo(dt).nmant)
        e = np.array([0, 1, -1, 2, -2, 10, -10, mb, -mb, 127, -126, -149, -150, 1023, -1022, -1074, -1075,
                      2100, -2100, 2 ** 31 - 1, -(2 ** 31)], np.int64)
        b = np.concatenate([np.tile(e, sp.size), rng.integers(-1100, 1100, d.size)]).astype(np.int32)
        a = np.concatenate([np.repeat(sp, e.size), d])
    return a, b


def numpy_ref(name: str, args: tuple[np.ndarray, ...], dt: np.dtype, exact: bool) -> np.ndarray:
    d = OPS[name]
    # gpuarray.special's ops: their host implementation (SciPy's formulas, float32 through float64);
    # fmax / fmin: NumPy's, with the tie of zeros that gpuarray defines (NumPy's loops give either zero)
    own = d.module or name in ("fmax", "fmin")
    fn = NUMPY_FUNC.get(name) or (d.host_impl() if own else getattr(np, d.ufunc or name))
    with np.errstate(all="ignore"):
        if not exact or name in OWN_DTYPE:
            return np.asarray(fn(*args))
        wide = np.float64 if dt == F32 else np.longdouble
        return np.asarray(fn(*(a.astype(wide) if a.dtype.kind == "f" else a for a in args))).astype(dt)


def ulp(got: np.ndarray, want: np.ndarray, scale: np.ndarray | None = None,
        floor: float = 0.0) -> tuple[float, int]:
    """(largest ULP error over values finite in both, count of special-value mismatches); with
    ``scale``, ULP of max(|want|, scale); absolute errors up to ``floor`` count as none."""
    gn, wn = np.isnan(got), np.isnan(want)
    special = (gn != wn) | ((np.isinf(got) | np.isinf(want)) & (got != want) & ~(gn | wn))
    zero = (got == 0) & (want == 0)
    special |= zero & (np.signbit(got) != np.signbit(want))
    fin = np.isfinite(got) & np.isfinite(want)
    if not fin.any():
        return 0.0, int(special.sum())
    g, w = got[fin], want[fin]
    with np.errstate(all="ignore"):
        mag = np.abs(w) if scale is None else np.maximum(np.abs(w), scale[fin].astype(w.dtype))
        sp = np.spacing(mag)
        if w.dtype == F64:
            err = np.abs(g.astype(np.longdouble) - w.astype(np.longdouble)) / sp.astype(np.longdouble)
        else:
            diff = np.maximum(np.abs(g.astype(np.float64) - w.astype(np.float64)) - floor, 0.0)
            err = diff / sp.astype(np.float64)
    return float(np.max(err)), int(special.sum())


def on_host(device: xp.Device, name: str, dt: np.dtype) -> bool:
    p = device.provider
    return bool(getattr(p, "host_only_f64", set())) and dt == F64 and name in p.host_only_f64


def flushes(device: xp.Device) -> bool:
    """Does ``device`` flush float32 subnormals (providers/wgpu_probe.py)?"""
    return bool(getattr(device.provider, "numerics", {}).get("flushes_f32_subnormals"))


def flush(a: np.ndarray) -> np.ndarray:
    """float32 subnormals replaced by zeros of the same sign."""
    if a.dtype != F32:
        return a
    return np.where((a != 0) & (np.abs(a) < np.finfo(F32).tiny), np.copysign(F32.type(0), a), a).astype(F32)


def _closer(got: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Per element, ``second`` where ``got`` is closer to it (NaN and signed zeros included), else ``first``."""
    with np.errstate(all="ignore"):
        def dist(w: np.ndarray) -> np.ndarray:
            d = np.where(got == w, 0.0, np.abs(got.astype(np.float64) - w.astype(np.float64)))
            d = np.where(np.isnan(got) & np.isnan(w), 0.0, np.where(np.isnan(got) | np.isnan(w), np.inf, d))
            d = np.where((got == 0) & (w == 0) & (np.signbit(got) != np.signbit(w)), 1e-300, d)
            return np.nan_to_num(d, nan=np.inf)
        return np.where(dist(second) < dist(first), second, first).astype(first.dtype)


def measure(device: xp.Device, name: str, dt: np.dtype, n: int) -> dict[str, Any]:
    args = inputs(name, dt, n)
    with xp.config(offload="always"):
        got = np.asarray(OP_FUNCTIONS[name](*(xp.asarray(a, device=device) for a in args)))
    want = numpy_ref(name, args, dt, exact=False)
    exact = numpy_ref(name, args, dt, exact=True)
    if dt == F32 and flushes(device):
        # subnormals may be read as zeros and subnormal results returned as zeros (docs/accuracy.md):
        # compare with NumPy's answer for the inputs as given or flushed, whichever is closer
        fargs = tuple(flush(a) for a in args)
        got = flush(got)
        want = _closer(got, flush(want), flush(numpy_ref(name, fargs, dt, exact=False)))
        exact = _closer(got, flush(exact), flush(numpy_ref(name, fargs, dt, exact=True)))
    with np.errstate(all="ignore"):
        scale = ERROR_SCALE[name](*args) if name in ERROR_SCALE else None
    # on a flushing device a subnormal intermediate (below finfo.tiny) may be lost: absolute errors up to
    # finfo.tiny are that, not the function's error (logaddexp(-1.2e-37, -87.7) drops exp(-87.7) = 8e-39)
    floor = float(np.finfo(F32).tiny) if dt == F32 and flushes(device) else 0.0
    e_np, s_np = ulp(got, want, scale, floor)
    e_ex, _ = ulp(got, exact, scale, floor)
    e_npx, _ = ulp(want, exact, scale)
    return {"vs_numpy": e_np, "vs_exact": e_ex, "numpy_vs_exact": e_npx, "special": s_np,
            "host": on_host(device, name, dt), "count": int(got.size)}


def fmt(e: float) -> str:
    if e == 0:
        return "0"
    return f"{e:.2f}" if e < 10 else f"{e:.3g}"


KEEP = "<!-- written by hand below this line: scripts/gen_accuracy.py keeps it -->"


def kept_sections(path: str) -> str:
    """The hand-written part of the page at ``path`` (from the ``KEEP`` line on: the complex128
    measurements of tests/test_complex128_device.py's method), kept when the page is rewritten."""
    try:
        with open(path) as f:
            old = f.read()
    except OSError:
        return ""
    i = old.find(KEEP)
    return "" if i < 0 else "\n" + old[i:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs", "accuracy.md"))
    ap.add_argument("--n", type=int, default=200_000, help="dense sample size per part (default 200000)")
    ap.add_argument("--devices", default=None, help="comma-separated devices (default: all)")
    args = ap.parse_args()
    devices = [xp.Device(d) for d in args.devices.split(",")] if args.devices else xp.all_devices()
    ops = float_ops()
    t0 = time.time()
    results: dict[tuple[str, str, str], dict[str, Any]] = {}
    for dev in devices:
        for dt in (F32, F64):
            if not dev.supports(dt):
                continue
            for name in ops:
                results[(dev.name, dt.name, name)] = measure(dev, name, dt, args.n)
            print(f"{dev.name} {dt}: {len(ops)} ops ({time.time() - t0:.0f} s)", file=sys.stderr)
    lines = render(devices, ops, results, args.n, time.time() - t0)
    text = "\n".join(lines) + "\n" + kept_sections(args.out)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as f:
            f.write(text)
        print(f"wrote {os.path.normpath(args.out)}", file=sys.stderr)


def render(devices: list[xp.Device], ops: list[str], results: dict, n: int, seconds: float) -> list[str]:
    counts = {k[2]: v["count"] for k, v in results.items()}
    out = [
        "# Accuracy of floating-point ops",
        "",
        "Generated by `scripts/gen_accuracy.py` (do not edit by hand; run it again after changing a",
        f"kernel). Run on {datetime.date.today().isoformat()}, numpy {np.__version__}, in {seconds:.0f} s.",
        "",
        "Devices:",
        "",
    ]
    for dev in devices:
        if dev.provider.host_memory:
            out.append(f"- `{dev.name}`: the in-process provider (NumPy on the host)")
            continue
        info = dev.provider.device_info()
        out.append(f"- `{dev.name}`: {info.get('name')} ({info.get('backend')}, {info.get('adapter_type')}); "
                   "float32 arithmetic: " + ", ".join(f"{k}={v}" for k, v in
                                                       getattr(dev.provider, "numerics", {}).items()))
        checks: dict[str, dict[str, bool]] = getattr(dev.provider, "builtins", {})
        names = {"f32": "float32", "f64": "float64"}
        wrong = [names[sfx] + " " + ", ".join(k for k, v in found.items() if not v)
                 for sfx, found in checks.items() if not all(found.values())]
        if checks:
            out.append(f"  (WGSL built-ins the start-up probe found not exact: {'; '.join(wrong) or 'none'})")
    out += [
        "",
        "Each op runs on a fixed sample: special values (0, -0.0, +-inf, NaN, +-1, 0.5, finfo.max,",
        "finfo.tiny, subnormals, overflow thresholds, halves such as 97.5 and 2^(MB-1) + 0.5, values",
        "at and above 2^MB, MB the significand's width) and a dense seeded sample (uniform on [-1, 1],",
        "[-20, 20], [-100, 100], magnitudes over the whole exponent range, values near 1 and near",
        "multiples of pi/2, half-integers); binary ops get every pair of special values and as",
        f"many random pairs ({n} is the size of each part of the dense sample; unary ops see",
        f"about {max(counts.values()) if counts else 0} inputs, binary ops about as many pairs).",
        "",
        "Columns, in ULP (units in the last place of the reference), largest over the values that",
        "are finite in both results:",
        "",
        "- **vs NumPy**: against NumPy's result in the same dtype (what the tests compare with);",
        "- **vs exact**: against the result computed in a wider type and rounded (float64 for",
        "  float32; long double, x87 80-bit on x86-64, for float64);",
        "- **NumPy vs exact**: NumPy's own error, for scale;",
        "- **special**: inputs where NaN, an infinity or the sign of zero differs from NumPy",
        "  (must be 0);",
        "- *host*: the device runs this op on the host (float64 ops an adapter lacks software for:",
        "  `python -m gpuarray info`; none on an adapter with shader-f64 now).",
        "",
        "logaddexp cancels when its result is near 0 (NumPy itself is then thousands of ULP of",
        "the result off), so its error is in ULP of max(|result|, |max(a, b)|), as in",
        "tests/test_elementwise.py. A 1 in a float64 `vs exact` column can be the double rounding",
        "of the long double reference itself (NumPy's correctly rounded `+ - * /` show it too).",
        "Add, subtract, multiply, divide, sqrt and the rounding ops are correctly rounded (0 ULP",
        "against NumPy).",
        "",
        "`fmod`, `ldexp`, `spacing` and `frexp` (its mantissa `ldexp(x, -e)` and its exponent, not",
        "in the tables: an integer), and on integers `gcd`, `lcm` and `bitwise_count`, are exact: bit",
        "for bit NumPy's results, subnormals and special values included (render/wgsl_bits.py works",
        "on the encoding's bits; tests/test_ufuncs_more.py checks every dtype NumPy has a loop for on",
        "both devices). `ldexp`'s exponents here are int32: every special value with 0, +-1, +-2, +-10,",
        "+-MB, the ends of both dtypes' exponent ranges, +-2100 and the int32 extremes, and random",
        "ones in [-1100, 1100]. `spacing`'s and `nextafter`'s `vs exact` reference is NumPy's in the",
        "dtype itself (in a wider type they are other functions). `cbrt` (also `gpuarray.special.cbrt`,",
        "the same kernel) is not correctly rounded, and neither is NumPy's: its float32 cbrt is up to",
        "1.9 ULP off the exact cube root, so the two can differ by 2 ULP (the hand-written section",
        "below measures ours against the unrounded cube root).",
        "",
        "**Rounding** (`ceil`, `floor`, `trunc`, `round` = `rint`; `around` / `np.round(x, decimals)`",
        "and `fix` are built from them as NumPy builds them) does not trust the driver. WGSL's",
        "`round` / `trunc` / `floor` / `ceil` are the driver's, and lavapipe on an AMD CPU got float64",
        "`round` and `trunc` wrong (97.5 -> 97, -1.5 -> -1, -0.5 -> +0.0, -0.0 lost, values above",
        "about 2^50 left untruncated). Every float64 rounding op is an exact helper that works on the",
        "value's bits as an integer (render/wgsl_round.py): it clears the fraction bits of |x|, adds",
        "one unit of the last integer place where the rounding goes up (half to even for `round`) and",
        "copies the sign bit back, so -0.0, halves, values at and above 2^52 (returned unchanged), NaN,",
        "+-inf, subnormals and the largest values come out as NumPy's, whatever the driver contracts,",
        "reassociates or flushes. float32 takes the built-in only where the start-up probe",
        "(providers/wgpu_probe.py `builtin_checks`, also run on `fract`, `abs`, `sign`, `min`, `max`,",
        "`fma`, `sqrt` and division; `python -m gpuarray info` lists the results) found it exact on",
        "hard inputs, and the same exact helper elsewhere; complex round rounds both parts.",
        "tests/test_rounding.py checks all of them bit for bit against NumPy on both devices.",
        "",
        "Two pages are written by `scripts/gen_accuracy.py`: [accuracy.md](accuracy.md) on the",
        "development machine (lavapipe) and [accuracy-h200.md](accuracy-h200.md) on the NVIDIA",
        "H200 (`XDG_RUNTIME_DIR=/tmp python scripts/gen_accuracy.py --devices cpu,wgpu:0 --out",
        "docs/accuracy-h200.md`; an adapter that flushes float32 subnormals).",
        "The float32 arithmetic line of each adapter comes from a probe kernel run when the",
        "provider starts (providers/wgpu_probe.py). On an adapter with flushes_f32_subnormals=True",
        "(NVIDIA's Vulkan driver) float32 arithmetic reads a subnormal input as a zero and returns",
        "zero for a subnormal result, as CUDA's `-ftz=true` does; there the columns compare with",
        "NumPy's answer for the inputs as given or with subnormals flushed, whichever the result",
        "is closer to, subnormal results flushed on both sides, and absolute errors up to the",
        "smallest normal (1.2e-38: a subnormal intermediate lost) are not counted. Comparisons, `maximum`/`minimum`,",
        "sorting and `nextafter` keep subnormals apart from zero on every adapter (integer keys).",
        "fuses_multiply_add=True: the driver contracts `a * b + c` into one rounding, which can",
        "move compound results (complex products, polynomials) by an ULP against NumPy; tests of such",
        "arithmetic on a wgpu device compare within one ULP of the larger of `a * b` and `c`, not exactly.",
        "exact_fma=True: WGSL's `fma` rounds once there, so float32 division and sqrt get one",
        "correction step that makes them correctly rounded (NVIDIA's own are 1-2 ULP off).",
        "",
    ]
    for dt in ("float32", "float64"):
        devs = [d for d in devices if (d.name, dt, ops[0]) in results]
        if not devs:
            continue
        out += [f"## {dt}", ""]
        head = "| op |"
        rule = "| --- |"
        for d in devs:
            head += f" `{d.name}` vs NumPy | `{d.name}` vs exact | special |"
            rule += " ---: | ---: | ---: |"
        head += " NumPy vs exact |"
        rule += " ---: |"
        out += [head, rule]
        for name in ops:
            row = f"| {name} |"
            npx = 0.0
            for d in devs:
                r = results[(d.name, dt, name)]
                tag = " *host*" if r["host"] else ""
                row += f" {fmt(r['vs_numpy'])}{tag} | {fmt(r['vs_exact'])} | {r['special']} |"
                npx = r["numpy_vs_exact"]
            row += f" {fmt(npx)} |"
            out.append(row)
        out.append("")
    worst = {dt: max((v["vs_numpy"] for k, v in results.items() if k[1] == dt and not v["host"]
                      and k[0] != "cpu"), default=0.0) for dt in ("float32", "float64")}
    specials_total = sum(v["special"] for v in results.values())
    out += ["## Summary", "",
            f"- largest error against NumPy on a GPU provider: float32 {fmt(worst['float32'])} ULP, "
            f"float64 {fmt(worst['float64'])} ULP;",
            f"- special-value mismatches (NaN, inf, sign of zero) against NumPy: {specials_total}."]
    return out


if __name__ == "__main__":
    main()
