"""Evaluation plans replayed with new values of their scalar constants (runtime/replay.py,
providers/wgpu_replay.py, render/const_tags.py).

A loop whose Python scalars change at every step (a learning rate schedule, a time step, a solver's
step length) builds graphs of one structure with new constant nodes. The plan recorded by the first
evaluation replays with the new values written into its parameter words (32-bit constants) or into
new 64-bit constant buffers; each test checks the values against NumPy at every step and that the
provider's ``enqueue`` is not called once the plan exists."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.runtime import devices as _devices
from gpuarray.runtime import replay

from .test_replay import _Counter

rng = np.random.default_rng(11)

# the scalars of successive evaluations: signs, zeros of both signs, a subnormal, large, NaN, inf
VALUES = (1.5, 2.5, -0.75, 0.0, -0.0, 1e-40, 3.0e4, float("nan"), float("inf"), 0.25)


def _f32(shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-3, 3, shape).astype(np.float32)


def _softmax(m: Any, a: list[Any], s: float) -> Any:
    # NumPy's reference from float64 inputs: the product rounded to float32 as the device's is (the
    # exponent amplifies its rounding 3e4-fold at s = 3e4)
    z = a[0] * s if m is not np else (a[0] * np.float32(s)).astype(np.float32).astype(np.float64)
    e = m.exp(z - m.max(z, axis=1, keepdims=True))
    return e / m.sum(e, axis=1, keepdims=True)


# name: (function of (namespace, inputs, scalar), inputs, relative tolerance, whether the scalar
# must be finite: NaN and inf make some of these compare NaN patterns NumPy and a GPU order differently)
CASES: dict[str, tuple[Callable[..., Any], Callable[[], list[np.ndarray]], float, bool]] = {
    "f32 x*s+1": (lambda m, a, s: a[0] * s + 1.0, lambda: [_f32((5000,))], 2e-7, False),
    "f32 where/clip": (lambda m, a, s: m.where(a[0] > s / 4, m.clip(a[0], -1.0, 2.0), -s),
                       lambda: [_f32((3000,))], 0.0, False),
    "f64 x*s-1.75": (lambda m, a, s: a[0] * s - 1.75, lambda: [rng.uniform(-3, 3, 4000)], 1e-15, False),
    "c64 z*s": (lambda m, a, s: a[0] * complex(s, -2 * s) + 1j,
                lambda: [(_f32((700,)) + 1j * _f32((700,))).astype(np.complex64)], 1e-6, True),
    "c128 z*s": (lambda m, a, s: a[0] * complex(s, s / 2) - 2j,
                 lambda: [rng.uniform(-3, 3, 700) + 1j * rng.uniform(-3, 3, 700)], 1e-14, True),
    "int32 i*k+k": (lambda m, a, s: a[0] * int(s * 3 if np.isfinite(s) and abs(s) < 1e3 else 7) + 5,
                    lambda: [rng.integers(-1000, 1000, 3000).astype(np.int32)], 0.0, False),
    "int64 i*k": (lambda m, a, s: a[0] * int(s * 5 if np.isfinite(s) and abs(s) < 1e3 else -9) - 3,
                  lambda: [rng.integers(-10**12, 10**12, 3000)], 0.0, False),
    "sum(x*s)": (lambda m, a, s: m.sum(a[0] * s), lambda: [_f32((100_000,))], 2e-5, False),
    "sum axis=0": (lambda m, a, s: m.sum(a[0] * s + 1.0, axis=0), lambda: [_f32((300, 70))], 2e-5, False),
    "softmax(x*s)": (_softmax, lambda: [_f32((64, 300))], 2e-5, True),
    "(r*s) @ X": (lambda m, a, s: (a[0] * s) @ a[1], lambda: [_f32((513,)), _f32((513, 40))], 2e-5, True),
    "X @ W * s": (lambda m, a, s: (a[0] @ a[1]) * s, lambda: [_f32((70, 33)), _f32((33, 50))], 2e-5, True),
    "argmax(x*s)": (lambda m, a, s: m.argmax(a[0] * s - a[0] * a[0], axis=1), lambda: [_f32((70, 90))],
                    0.0, True),
    "cumsum(x*s)": (lambda m, a, s: m.cumulative_sum(a[0] * s), lambda: [_f32((5000,))], 2e-5, True),
}


def _want(fn: Callable[..., Any], hs: list[np.ndarray], s: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        up = [h.astype(np.float64) if h.dtype == np.float32 else h for h in hs]
        want = np.asarray(fn(np, up, s))
        return want


@pytest.mark.parametrize("case", list(CASES))
def test_new_scalars_replay_with_their_values(wgpu_device: xp.Device, case: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    fn, make, rtol, finite = CASES[case]
    count = _Counter(_devices.provider_for(wgpu_device), monkeypatch)
    values = [v for v in VALUES if np.isfinite(v) or not finite]
    with xp.config(offload="always"):
        for i, s in enumerate(values):
            hs = make()
            xs = [xp.asarray(h, device=wgpu_device) for h in hs]         # new buffers too
            before = count.n
            y = fn(xp, xs, s)
            xp.evaluate(y)
            if i >= 2:
                assert count.n == before, f"{case}: evaluation {i} (scalar {s}) was not replayed"
            got = np.asarray(y)
            want = _want(fn, hs, s).astype(got.dtype)
            scale = float(np.nanmax(np.abs(want), initial=1.0)) if want.dtype.kind in "fc" and np.isfinite(s) else 0
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale,
                                       err_msg=f"{case}: evaluation {i} (scalar {s})")


def test_a_replayed_recipe_holds_the_new_values(wgpu_device: xp.Device) -> None:
    """The recipe kept with a replayed kernel's output (to compute it again after a lost device,
    runtime/residency.py) holds the constants of that evaluation, not the recorded ones."""
    h = _f32((2000,))
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        for s in (1.25, 2.25, 3.25, 4.25):
            y = x * s + 0.5
            xp.evaluate(y)
            consts = sorted(float(i.params[0]) for i in y._node.data.recipe.fields["instrs"] if i.op == "const")
            assert consts == [0.5, s]
            # (within 1 ulp of the product: a GPU's compiler may contract x * s + 0.5 into one fma)
            np.testing.assert_allclose(np.asarray(y), h * np.float32(s) + np.float32(0.5), rtol=2e-7, atol=4e-6)


def test_constants_whose_places_are_not_known_take_a_fresh_plan(wgpu_device: xp.Device,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel whose parameter words reach the dispatch as another array than the one
    ``Rendered.meta`` made (here: a copy) has constants in places a replay cannot find: its plan
    replays only with the recorded values, and a new value is evaluated afresh (and right)."""
    from gpuarray.render.wgsl import Rendered
    meta = Rendered.meta
    monkeypatch.setattr(Rendered, "meta", lambda self, k, extra=None: meta(self, k, extra).copy())
    replay.clear()
    count = _Counter(_devices.provider_for(wgpu_device), monkeypatch)
    h = _f32((3000,))
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        for i, s in enumerate((1.5, 1.5, 1.5, 2.5, 2.5, 3.5)):
            before = count.n
            y = x * s + 1.0
            xp.evaluate(y)
            if i in (2, 4):
                assert count.n == before, f"evaluation {i} (the same constant) was not replayed"
            elif i in (3, 5):
                assert count.n > before, f"evaluation {i} (a new constant) replayed words it could not place"
            np.testing.assert_allclose(np.asarray(y), h * np.float32(s) + np.float32(1), rtol=2e-7, atol=4e-6)
    replay.clear()


def test_float64_constants_new_and_met_again(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """A float64 constant of a new value goes into the parameter arena; one met again (a loop over a
    few values) gets a buffer kept by value at its second meeting and binds that from then on."""
    prov: Any = wgpu_device.provider
    count = _Counter(prov, monkeypatch)
    h = rng.uniform(-3, 3, 3000)
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        for i, s in enumerate([0.125, 0.375] + [0.625, -1.125] * 5 + [2.0 + j / 64 for j in range(6)]):
            before = count.n
            y = x * s + 0.5
            xp.evaluate(y)
            if i >= 2:
                assert count.n == before, f"evaluation {i} (scalar {s}) was not replayed"
            np.testing.assert_allclose(np.asarray(y), h * s + 0.5, rtol=1e-15, atol=1e-15)
    wide = prov._static.tables[1]
    for s in (0.625, -1.125):
        assert ("wide", "<f8", np.array([s, 0.5]).tobytes()) in wide
    assert ("wide", "<f8", np.array([2.0 + 5 / 64, 0.5]).tobytes()) not in wide


@pytest.mark.parametrize("dt", [np.float32, np.int32, np.bool_])
def test_one_host_value_arrays_are_uniforms(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch, dt: Any) -> None:
    """A 0-d array held on the host only (``asarray`` of a scalar: SciPy's ``xp.asarray(n > 1, device=d) & mask``)
    goes into an operation with device data as a constant: nothing uploaded for it, and the plan replays with each
    new value (special values included) as with a Python scalar; NumPy's values and dtypes."""
    count = _Counter(_devices.provider_for(wgpu_device), monkeypatch)
    h = _f32((3000,)) if dt != np.bool_ else _f32((3000,)) > 0
    h = h.astype(dt) if dt != np.bool_ else h
    x = xp.asarray(h, device=wgpu_device)
    xp.evaluate(x)
    vals = {np.float32: (1.5, -0.0, np.nan, np.inf, 2.5), np.int32: (3, -2**31, 2**31 - 1, 0, 7),
            np.bool_: (True, False, True, False, True)}[dt]
    with xp.config(offload="always"):
        for i, v in enumerate(vals):
            s = xp.asarray(dt(v), device=wgpu_device)
            before, up = count.n, xp.metrics()["bytes_uploaded"]
            y = (x & s) if dt == np.bool_ else xp.where(x > s, x - s, s * x)
            xp.evaluate(y)
            assert i == 0 or xp.metrics()["bytes_uploaded"] == up, f"value {v} was uploaded"    # (0: x's upload)
            if i >= 2:
                assert count.n == before, f"evaluation {i} (value {v}) was not replayed"
            with np.errstate(all="ignore"):
                want = (h & dt(v)) if dt == np.bool_ else np.where(h > dt(v), h - dt(v), dt(v) * h)
            got = np.asarray(y)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
