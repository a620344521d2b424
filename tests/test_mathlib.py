"""The float32 math library's path boundaries (render/wgsl_f32.py: exp, sin, cos, sincos, tanh).

Each function has a common path chosen by one range test and a rare branch for the rest; these
inputs sit on and around every boundary (a few ULP either side), on the trig quadrant boundaries,
on the word boundaries of the Payne-Hanek reduction, and on the special values, and are checked
against NumPy with the ULP bounds and flushing rules of tests/test_elementwise.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.core.ops import NAN_THROUGH, OPS
from gpuarray.render.wgsl_lib import helpers_for

# _device_flushes: the autouse fixture that turns on check's rules for adapters that flush subnormals
from .test_elementwise import _device_flushes, check  # noqa: F401

F32 = np.float32


def _around(points: list[float], ulps: int = 3) -> np.ndarray:
    """``points`` in float32, each with its ``ulps`` neighbours on either side, and their negatives."""
    p = np.asarray(points, dtype=np.float64).astype(F32)
    bits = p.view(np.int32)[:, None] + np.arange(-ulps, ulps + 1, dtype=np.int32)[None, :]
    v = bits.ravel().view(F32)
    v = v[np.isfinite(v)]
    return np.concatenate([v, -v])


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, 1.1754944e-38, 3.4028235e38],
                   dtype=F32)
# exp: the common path |x| < 86.5, overflow above 88.72, subnormal results below -87.33, 0 below -103.97
EXP = _around([86.5, 88.0, 88.72, 88.7228, 89.0, 87.33, 103.97, 104.0, 0.34657359, 1.0397208, 20.0])
# sin / cos: quadrant boundaries (odd multiples of pi/4) and multiples of pi/2 up to the Cody-Waite
# limit 512, the limit itself, and the Payne-Hanek word boundaries (2^25, 2^57, 2^89, 2^121)
TRIG = _around([*(np.arange(1, 652) * (np.pi / 4)), 511.9, 512.0, 1024.0, 2.0 ** 25, 2.0 ** 57, 2.0 ** 89,
                2.0 ** 121, 1e30])
# tanh: the polynomial below 1, exp's formula above (its argument clamped at 9.1, where tanh rounds to 1)
TANH = _around([1.0, 9.1, 9.0, 1e-4, 0.5, 0.625, 0.9, 5.0, 20.0, 1e30])


@pytest.mark.parametrize(("name", "x"), [("exp", EXP), ("sin", TRIG), ("cos", TRIG), ("tanh", TANH),
                                         ("exp", TRIG), ("tanh", EXP)])
def test_path_boundaries(name: str, x: np.ndarray, device: xp.Device) -> None:
    x = np.concatenate([SPECIAL, x])
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    with xp.config(offload="always"):       # on the device, however small
        got = np.asarray(getattr(xp, name)(xp.asarray(x, device=device)))
    check(got, want, OPS[name], f"{name} near its path boundaries", (x,))


def test_sin_and_cos_of_one_input(device: xp.Device) -> None:
    """sin and cos of the same array in one kernel share one range reduction (ga_sincos)."""
    x = np.concatenate([SPECIAL, TRIG, np.random.default_rng(3).uniform(-600, 600, 4096).astype(F32)])
    with xp.config(offload="always"):
        xa = xp.asarray(x, device=device)
        s, c = xp.sin(xa), xp.cos(xa)
        if device.kind == "wgpu":
            assert "ga_sincos_f32(" in str(xp.explain(s, c))
        xp.evaluate(s, c)
    with np.errstate(all="ignore"):
        check(s, np.sin(x), OPS["sin"], "sin next to cos", (x,))
        check(c, np.cos(x), OPS["cos"], "cos next to sin", (x,))


def test_chain8(device: xp.Device) -> None:
    """exp, sin, cos and tanh fused into one kernel (bench/chain8.py), against NumPy in float64."""
    x = np.concatenate([np.random.default_rng(5).random(1 << 14, dtype=F32), TANH[np.abs(TANH) < 30]])
    with xp.config(offload="always"):
        xa = xp.asarray(x, device=device)
        got = np.asarray(xp.exp(-xa * xa * 0.5) * xp.sin(xa) + xp.cos(xa) * 0.25 - xp.tanh(xa))
    x64 = x.astype(np.float64)
    want = np.exp(-x64 * x64 * 0.5) * np.sin(x64) + np.cos(x64) * 0.25 - np.tanh(x64)
    # each of the four terms within a few ULP: an absolute bound on the order of the terms' size
    assert np.max(np.abs(got - want)) < 2e-6


def test_vec4_form_with_rare_values_in_some_lanes(device: xp.Device) -> None:
    """Rare values (special, huge, near the path boundaries) in some lanes of a thread and not
    others: the vec4 form (4096 elements, four per thread, each lane through its own branches) and
    one element per thread (4097), each within the ULP bounds."""
    rng = np.random.default_rng(11)
    x = rng.uniform(-4, 4, 4096).astype(F32)
    rare = np.concatenate([SPECIAL, EXP, TRIG[np.abs(TRIG) >= 500]])
    x[rng.choice(len(x), len(rare), replace=False)] = rng.permutation(rare)
    with xp.config(offload="always"), np.errstate(all="ignore"):
        for n in (4096, 4097):
            h = np.append(x, F32(0.5))[:n]
            xa = xp.asarray(h, device=device)
            s, c, e = xp.sin(xa), xp.cos(xa), xp.exp(xa)           # one kernel: sincos and exp
            xp.evaluate(s, c, e)
            check(s, np.sin(h), OPS["sin"], f"sin, {n} elements", (h,))
            check(c, np.cos(h), OPS["cos"], f"cos, {n} elements", (h,))
            check(e, np.exp(h), OPS["exp"], f"exp, {n} elements", (h,))
            check(xp.sin(xa * 1), np.sin(h), OPS["sin"], f"sin alone, {n} elements", (h,))


# NaNs of both signs and several payloads (quiet ones: a signalling NaN may be quieted on the way)
NANS = np.array([0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FE00000], dtype=np.uint32).view(F32)


@pytest.mark.parametrize("name", sorted(NAN_THROUGH))
def test_nan_through_without_guard(name: str, device: xp.Device) -> None:
    """The ops of NAN_THROUGH have no NaN guard in their templates: their helpers give NaN for NaN
    themselves (float32 on the device here; float64's FLT versions test for it first thing)."""
    f = OPS[name].template("f")
    assert "isnan" not in f, f
    assert "ga_isnan_f64(x)) { return x; }" in helpers_for(f.replace("{S}", "f64").replace("{0}", "x"))
    x = np.concatenate([NANS, np.array([0.5, -0.5], dtype=F32)])
    with xp.config(offload="always"):
        got = np.asarray(getattr(xp, name)(xp.asarray(x, device=device)))
    with np.errstate(all="ignore"):
        check(got, getattr(np, name)(x), OPS[name], f"{name} of NaNs", (x,))
    assert np.isnan(got[:len(NANS)]).all()
