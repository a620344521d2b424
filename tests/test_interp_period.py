"""np.interp(period=) and the kernel shape it produces: a gather of a concat of slices of a gather of
``remainder`` values, fused into one elementwise kernel that inlines ``remainder`` at every read
site (each gather and each branch of the concat).

That kernel once never finished on lavapipe: the WGSL was valid, but lavapipe's (LLVM 15) compile
time grew about threefold per inlined ``ga_remainder``, which inlined ``ga_fmod`` (a helper with
loops and returns inside them) twice, in two branches (docs/reliability.md, "Compile time on
lavapipe"). ``ga_remainder`` and ``ga_floordiv`` now inline ``ga_fmod`` once each
(render/wgsl_lib.py), and the adapter no longer evaluates the concat on its own first."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.render.wgsl_lib import helpers_for

from .conftest import assert_same, device_numerics, flush_subnormals

# A small graph that did not finish on lavapipe (nine inlined remainders; with two gathers, six, it
# took 64 s, with three more than 400 s; 3 s now, on a 2-core machine): three gathers of a concat of
# two shifted slices and a gather of remainder values. It prints its result.
SMALLEST = """
import sys
import numpy as np
import gpuarray as xp
dev = xp.Device(sys.argv[1])
a = xp.asarray(np.array([190.0, -190.0, 350.0, -350.0]), device=dev)
order = xp.asarray(np.array([3, 1, 0, 2]), device=dev)
j = xp.asarray(np.array([0, 1, 2, 3, 4, 5, 0, 5]), device=dev)
b = xp.take(np.remainder(a, 360.0), order)
c = xp.concat([b[-1:] - 360.0, b, b[:1] + 360.0])
with xp.config(offload="always"):
    print(np.asarray(xp.take(c, j) + xp.take(c, j + 1 - 1) + xp.take(c, j + 2 - 2)).tolist())
"""


@pytest.mark.parametrize("name", ["cpu", "wgpu:0"])
def test_smallest_hanging_graph_finishes(name: str, tmp_path: Path) -> None:
    """In a process of its own with empty shader caches (gpuarray's and Mesa's), so that the
    compile is done each time; the time limit stands for the hang (before the fix: over 400 s)."""
    env = dict(os.environ, XDG_RUNTIME_DIR="/tmp", GPUARRAY_CACHE_DIR=str(tmp_path),
               MESA_SHADER_CACHE_DISABLE="true")
    out = subprocess.run([sys.executable, "-c", SMALLEST, name], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    b = np.remainder(np.array([190.0, -190.0, 350.0, -350.0]), 360.0)[[3, 1, 0, 2]]
    c = np.concatenate([b[-1:] - 360.0, b, b[:1] + 360.0])
    j = np.array([0, 1, 2, 3, 4, 5, 0, 5])
    assert out.stdout.strip() == str((c[j] + c[j] + c[j]).tolist())


@pytest.mark.parametrize("suffix", ["f32", "f64"])
@pytest.mark.parametrize("helper", ["remainder", "floordiv"])
def test_helpers_inline_fmod_once(helper: str, suffix: str) -> None:
    """Each of these helpers calls ga_fmod (loops with returns inside them) at one place: one inlined
    copy per use, not one per case (render/wgsl_lib.py)."""
    assert _inlined(f"ga_{helper}_{suffix}", f"ga_fmod_{suffix}") == 1


def _inlined(name: str, callee: str) -> int:
    """How many copies of ``callee`` inlining every call in ``name`` makes (as lavapipe does)."""
    text = helpers_for(f"{name}(a, b)")
    bodies = {d.split("(")[0][3:]: d for d in re.split(r"(?m)^(?=fn )", text) if d.startswith("fn ")}
    calls = re.findall(r"(ga_\w+)\(", bodies[name].split("{", 1)[1])
    return sum(1 if c == callee else _inlined(c, callee) for c in calls if c in bodies)


def _interp(device: xp.Device, x: np.ndarray, xpts: np.ndarray, fp: np.ndarray, period: float,
            rtol: float = 1e-12) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.interp(x, xpts, fp, period=period)
    before = xp.metrics()["host_fallbacks"]
    with xp.config(offload="always", fallback="raise" if device.kind == "wgpu" else "silent"):
        g = np.interp(*(xp.asarray(v, device=device) for v in (x, xpts, fp)), period=period)
        assert isinstance(g, xp.GpuArray)
        got = np.asarray(g)
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == before
    assert_same(got, want, rtol=rtol, atol=1e-12, check_signed_zero=False)


def test_interp_period_against_numpy(device: xp.Device) -> None:
    x = np.array([-180.0, -170, -100, 0, 100, 190, 350, 360, 370, 540, 720.5, -1e6, 1e6 + 0.25,
                  10, 10, np.nan, np.inf, -np.inf, -0.0])
    xpts = np.array([190.0, -190, 350, -350, 10, 730])     # unsorted; 10 and 730 fall on the same point
    fp = np.array([5.0, 10, 3, 4, 7, 7])                   # equal values at the duplicate point
    # (ties of xp with different fp are left out: NumPy's argsort does not order them stably)
    for period in (360, 360.0, -360.0, 400.0, 1000.0, -7.25, 2.75):
        _interp(device, x, xpts, fp, period)
    _interp(device, x, xpts, fp + 1j * fp[::-1], 360.0)     # complex fp
    _interp(device, x.astype(np.float32), xpts.astype(np.float32), fp.astype(np.float32), 360.0)
    _interp(device, np.arange(-7, 30), np.array([3, 1, 2]), np.array([0, 5, -2]), 4)     # integers
    _interp(device, x, xpts[:1], fp[:1], 360.0)             # one point: a constant
    _interp(device, x, np.array([0.0, 90.0, 180.0]), np.array([1.0, np.inf, np.nan]), 360.0)   # inf, nan in fp


def test_interp_period_errors(device: xp.Device) -> None:
    g = xp.asarray(np.array([1.0, 2.0]), device=device)
    with pytest.raises(ValueError, match="period must be a non-zero value"):
        np.interp(g, g, g, period=0.0)
    with pytest.raises(ValueError, match="Data points must be 1-D sequences"):
        np.interp(g, xp.reshape(g, (1, 2)), g, period=3.0)
    with pytest.raises(ValueError, match="fp and xp are not of the same length"):
        np.interp(g, g, g[:1], period=3.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_remainder_floor_divide_special_values(device: xp.Device, dtype: str) -> None:
    """The rewritten ga_remainder / ga_floordiv against NumPy on every pair of special values: tiny
    divisors (the 2^64 scaling), huge dividends (the extra fmod pass), subnormals, zeros, inf, nan."""
    t = np.dtype(dtype)
    tiny = np.finfo(t).smallest_subnormal
    vals = np.array([0.0, -0.0, 1.0, -1.5, 81.0, 3.0, 7.3e-38, 1.26e-38, -9.9e-38, 1e-40, 2.0**61 + 2.0**40,
                     -(2.0**70), 1e30, np.inf, -np.inf, np.nan], dtype=t)
    vals = np.concatenate([vals, np.array([tiny, -3 * tiny, np.finfo(t).max], dtype=t)])
    a, b = (v.ravel() for v in np.meshgrid(vals, vals, indexing="ij"))
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    # an adapter that flushes float32 subnormals (NVIDIA's) reads them as zeros and returns zero for a
    # subnormal result, as CUDA's -ftz=true (docs/accuracy.md): NumPy's answer for the flushed inputs
    ftz = t == np.float32 and device_numerics(device)["flushes_f32_subnormals"]
    fl = flush_subnormals if ftz else (lambda v: v)
    a_in, b_in = fl(a), fl(b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want_r, want_q = np.remainder(a_in, b_in), np.floor_divide(a_in, b_in)
        want_r3 = (fl(np.remainder(a_in, b_in)) + fl(np.remainder(fl(a_in * 2), b_in))
                   + fl(np.remainder(a_in, fl(b_in * 2))))
    with xp.config(offload="always"):
        assert_same(fl(np.asarray(np.remainder(ga, gb))), fl(want_r))
        assert_same(fl(np.asarray(np.floor_divide(ga, gb))), fl(want_q))
        r3 = np.remainder(ga, gb) + np.remainder(ga * 2, gb) + np.remainder(ga, gb * 2)   # one kernel, three copies
    assert_same(fl(np.asarray(r3)), fl(want_r3))
