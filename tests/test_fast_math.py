"""config(fast_math=True): float32 elementwise kernels on a GPU use WGSL's built-in functions.

Values are only as accurate as the driver's built-ins (checked here against loose bounds), but
NaN and infinities come out as NumPy gives them, and nothing changes outside the setting or on
the host.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler import schedule
from gpuarray.core.ops import FAST, OPS
from gpuarray.render.wgsl import render

from .conftest import assert_same

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 88.0, -100.0, 1e-3, -2e-3],
                   dtype=np.float32)
# (op, inputs, relative bound, absolute bound): the built-ins' error on lavapipe and on the H200
# (NVIDIA's sin/cos are absolute-error approximations: 7e-6 at |x| = 30), with margin; Vulkan
# itself allows much more (sin/cos: 2^-11 absolute on [-pi, pi])
CASES = [("exp", np.linspace(-80, 80, 4001), 2e-5, 1e-37), ("sin", np.linspace(-30, 30, 4001), 0.0, 3e-5),
         ("cos", np.linspace(-30, 30, 4001), 0.0, 3e-5), ("tan", np.linspace(-1.5, 1.5, 4001), 1e-4, 1e-5),
         ("tanh", np.linspace(-12, 12, 4001), 1e-4, 1e-5), ("log", np.linspace(1e-6, 1e6, 4001), 1e-4, 1e-5),
         ("log2", np.linspace(1e-6, 1e6, 4001), 1e-4, 1e-5), ("sqrt", np.linspace(0, 1e6, 4001), 0.0, 0.0)]


@pytest.mark.parametrize(("name", "domain", "rtol", "atol"), CASES, ids=[c[0] for c in CASES])
def test_fast_functions_keep_specials_and_stay_close(name: str, domain: np.ndarray, rtol: float, atol: float,
                                                     device: xp.Device) -> None:
    h = np.concatenate([domain, SPECIAL]).astype(np.float32)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(h)
    x = xp.asarray(h, device=device)
    with xp.config(fast_math=True):
        got = np.asarray(getattr(xp, name)(x))
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{name}: NaN positions differ"
    inf = np.isinf(want)
    assert np.array_equal(got[inf], want[inf]), f"{name}: infinities differ"
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol)


def test_fast_kernels_use_builtins_only_while_on(wgpu_device: xp.Device) -> None:
    h = np.linspace(-3, 3, 4096, dtype=np.float32)
    x = xp.asarray(h, device=wgpu_device)
    y = xp.exp(-x * x * 0.5) * xp.sin(x) + xp.cos(x) * 0.25 - xp.tanh(x)
    kernel = schedule([y._node])[-1]
    fast, accurate = render(kernel, 4, fast=True), render(kernel, 4)
    assert fast.vec == accurate.vec == 4
    assert "ga_exp_f32(" not in fast.source and "exp(" in fast.source
    assert "ga_exp_f32(" in accurate.source
    with np.errstate(all="ignore"):
        want = np.exp(-h * h * np.float32(0.5)) * np.sin(h) + np.cos(h) * np.float32(0.25) - np.tanh(h)
    with xp.config(fast_math=True):
        xp.reset_metrics()
        got = np.asarray(xp.exp(-x * x * 0.5) * xp.sin(x) + xp.cos(x) * 0.25 - xp.tanh(x))
        assert xp.metrics()["dispatches"] == 1
    np.testing.assert_allclose(got, want, rtol=0.0, atol=5e-5)
    # outside the setting, the accurate kernels again (float32 functions within 4 ULP)
    assert_same(y, want, rtol=4e-6, atol=1e-6)


def test_fast_math_leaves_float64_and_the_host_alone(device: xp.Device) -> None:
    h = np.linspace(-5, 5, 1001)
    for dt in (np.float64, np.float32):
        if not device.supports(np.dtype(dt)):
            continue
        x = xp.asarray(h.astype(dt), device=device)
        with xp.config(fast_math=True):
            got = xp.exp(x)
            xp.evaluate(got)
        if device.kind == "cpu":
            assert_same(got, np.exp(h.astype(dt)))
        elif dt == np.float64:      # the float64 library (render/wgsl_f64.py), fast_math or not: 1 ULP
            assert_same(got, np.exp(h), rtol=2.3e-16)


def test_every_fast_template_names_an_op() -> None:
    assert set(FAST) <= set(OPS)
    assert all(OPS[name].template("f", fast=True) == FAST[name] for name in FAST)
    assert OPS["sqrt"].template("f", fast=True) == OPS["sqrt"].template("f")     # no fast form: accurate


def test_fast_math_setting_is_validated() -> None:
    with pytest.raises(ValueError, match="fast_math"):
        xp.config(fast_math="yes")
