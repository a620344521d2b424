"""Reductions and arg-reductions whose fused prologue is heavy (``render.wgsl_size.heavy``: thousands of lines
once its helpers are inlined, as SciPy's tanhsinh/nsum fuse) render the prologue once per loop trip: no
unrolled copies, no ``vec4`` words, so that a driver compiles it once. Each layout against NumPy, with the
limit lowered so that a prologue of a few float64 functions counts as heavy."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import webgpu
from gpuarray.render import wgsl_reduce, wgsl_size

pytestmark = pytest.mark.usefixtures("low_limit")


@pytest.fixture
def low_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wgsl_size, "HEAVY_LINES", 300)
    monkeypatch.setattr(wgsl_reduce, "_HEAVY", {})


@pytest.fixture
def sources(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The WGSL of every pipeline the wgpu provider asks for."""
    seen: list[str] = []
    original = webgpu.WgpuProvider.pipeline_for

    def spy(self: Any, source: str, background: bool = False) -> Any:
        seen.append(source)
        return original(self, source, background)
    monkeypatch.setattr(webgpu.WgpuProvider, "pipeline_for", spy)
    return seen


def _heavy(m: Any, x: Any) -> Any:
    """log1p, cosh, sin and exp of float64 values: about 720 lines once inlined (above the lowered limit)."""
    with np.errstate(invalid="ignore"):
        return m.log1p(m.abs(x)) * m.cosh(x / 4) + m.sin(x) * m.exp(-x * x)


def _calls(src: str, name: str) -> int:
    main = src[src.index("fn main"):]
    return len(re.findall(rf"\b{name}\(", main))


@pytest.mark.parametrize("shape, axis", [((5003,), None), ((301, 2000), 1), ((2000, 301), 0),
                                         ((16384, 100), 1), ((7, 3, 500), (0, 2))])
@pytest.mark.parametrize("dt", ["float64", "float32"])
def test_heavy_reduction_one_copy(wgpu_device: xp.Device, sources: list[str], shape: tuple[int, ...],
                                  axis: Any, dt: str) -> None:
    """One copy of the prologue a trip; float32 rows and columns keep their vec4 words (a copy a lane, and
    one for the unaligned ends): at most five, against thirteen unrolled."""
    if dt == "float64" and not wgpu_device.supports("float64"):
        pytest.skip("no float64 on this adapter")
    h = np.random.default_rng(len(shape)).uniform(-30, 30, shape).astype(dt)
    h.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        got = np.asarray(xp.sum(_heavy(xp, x), axis=axis))
    want = np.sum(_heavy(np, h.astype(np.float64)), axis=axis)
    np.testing.assert_allclose(got, want, rtol=1e-12 if dt == "float64" else 2e-4)
    sfx = "f64" if dt == "float64" else "f32"
    fused = [s for s in sources if f"ga_cosh_{sfx}" in s and "fn main" in s]
    assert fused and all(_calls(s, f"ga_cosh_{sfx}") <= (1 if dt == "float64" else 5) for s in fused)


@pytest.mark.parametrize("shape, axis", [((5003,), None), ((300, 700), 1), ((20000, 64), 1)])
def test_heavy_argreduce_one_copy(wgpu_device: xp.Device, sources: list[str], shape: tuple[int, ...],
                                  axis: Any) -> None:
    if not wgpu_device.supports("float64"):
        pytest.skip("no float64 on this adapter")
    h = np.random.default_rng(3).uniform(-3, 3, shape)
    h.reshape(-1)[7] = np.nan
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        for op in ("argmax", "argmin"):
            got = np.asarray(getattr(xp, op)(_heavy(xp, x), axis=axis))
            np.testing.assert_array_equal(got, getattr(np, op)(_heavy(np, h), axis=axis))
    fused = [s for s in sources if "ga_cosh_f64" in s and "fn main" in s]
    assert fused and all(_calls(s, "ga_cosh_f64") == 1 for s in fused)


def test_light_prologue_keeps_its_copies(wgpu_device: xp.Device, sources: list[str]) -> None:
    """A light prologue still loads two elements a trip (and its last one): three copies."""
    h = np.random.default_rng(4).uniform(-3, 3, (301, 2000)).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        got = np.asarray(xp.sum(xp.abs(x) * 3, axis=0))
    np.testing.assert_allclose(got, np.sum(np.abs(h) * 3, axis=0), rtol=1e-5)
    fused = [s for s in sources if "abs(" in s and "fn main" in s]
    assert fused and max(_calls(s, "abs") for s in fused) >= 3


def test_inlined_lines_count_helpers_at_each_call() -> None:
    one = wgsl_size.inlined_lines(["let a = ga_cosh_f64(x);"])
    assert one > 100
    assert wgsl_size.inlined_lines(["let a = ga_cosh_f64(x);", "let b = ga_cosh_f64(y);"]) == 2 * one
