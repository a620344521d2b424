"""Rounding to integers against NumPy, bit for bit: ``round`` / ``rint`` / ``around`` (half to even, with
``decimals``), ``trunc``, ``floor``, ``ceil`` and ``fix`` on float32 and float64, on both providers.

The inputs hold what drivers get wrong (render/wgsl_round.py: lavapipe's float64 ``round`` gave
97.5 -> 97 and -0.5 -> +0.0, its ``trunc`` lost -0.0 and left values above 2^50 alone): halves,
signed zeros, values at and above 2^MB (integers already), NaN, +-inf, subnormals, the largest
finite values, random bit patterns; the arrays have more than 65536 elements, where
``offload="auto"`` sends float64 work to the GPU. The start-up probe that decides whether float32
may use WGSL's built-ins (providers/wgpu_probe.py) is tested here too, and the exact float32
helpers are run on their own by making the probe's answer "not exact".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_probe

from .conftest import assert_same

FLOATS = [np.float32, np.float64]
N = 70001                  # > 65536, odd: float32 takes the one-element-per-thread form too
DECIMALS = [-2, -1, 0, 1, 3]


def special_values(dt: Any) -> np.ndarray:
    """The values named in issue 15 and their neighbours, both signs."""
    dt = np.dtype(dt)
    fi = np.finfo(dt)
    mb = int(fi.nmant)
    vals = [0.0, 0.5, 1.5, 2.5, 3.5, 97.5, 0.25, 0.75, 0.3, 0.7, 1.0, 2.0, 3.7, 1e6 + 0.5, 123456.789,
            float(np.nextafter(dt.type(0.5), dt.type(0))), float(np.nextafter(dt.type(0.5), dt.type(1))),
            float(np.nextafter(dt.type(1), dt.type(0))), float(np.nextafter(dt.type(1.5), dt.type(2))),
            2.0 ** (mb - 2) + 0.25, 2.0 ** (mb - 2) + 0.75, 2.0 ** (mb - 1) + 0.5, 2.0 ** (mb - 1) + 1.5,
            2.0 ** mb - 0.5, 2.0 ** mb - 1.0, 2.0 ** mb, 2.0 ** mb + 1.0, 2.0 ** mb + 2.0, 2.0 ** (mb + 1) + 2.0,
            2.0 ** (mb + 1) + 4.0, 2.0 ** 60, 1e30, float(fi.max), float(np.nextafter(fi.max, dt.type(0))),
            float(fi.tiny), float(fi.smallest_subnormal), float(fi.tiny) / 4, np.inf]
    if dt == np.float64:
        vals += [2.0 ** 50 + 0.25, 2.0 ** 51 + 0.5, 4503599627370495.5, 1e300]
    with np.errstate(over="ignore"):
        x = np.array(vals, dtype=np.float64).astype(dt)
    return np.concatenate([x, -x, np.array([np.nan], dtype=dt)])


def sample(dt: Any, n: int = N, seed: int = 15) -> np.ndarray:
    """``n`` values: the specials, random bit patterns (every exponent), halves, quarters and values next to
    powers of two up to 2^(MB+2), and uniform values in [-3, 3]."""
    dt = np.dtype(dt)
    rng = np.random.default_rng(seed)
    ut = np.dtype(f"u{dt.itemsize}")
    mb = int(np.finfo(dt).nmant)
    part = (n - special_values(dt).size) // 5 + 1
    bits = rng.integers(0, np.iinfo(ut).max, part, dtype=ut, endpoint=True).view(dt)
    k = rng.integers(-(2 ** (mb + 2)), 2 ** (mb + 2), part).astype(np.float64)
    p2 = (2.0 ** rng.integers(0, mb + 3, part) * rng.choice([-1.0, 1.0], part)).astype(dt)
    near = np.where(rng.random(part) < 0.5, np.nextafter(p2, dt.type(0)), np.nextafter(p2, p2 * 2))
    parts = [special_values(dt), bits, (k / 2).astype(dt), (k / 4).astype(dt), near.astype(dt),
             rng.uniform(-3, 3, part).astype(dt)]
    return np.concatenate(parts)[:n]


def _fix(a: Any) -> Any:
    return np.fix(a)


# name -> (gpuarray's function, NumPy's): namespace functions, NumPy ufuncs and NumPy functions
FUNCS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "xp.round": (xp.round, np.rint),
    "np.rint": (np.rint, np.rint),
    "np.round": (np.round, np.round),
    "np.around": (np.around, np.around),
    "xp.trunc": (xp.trunc, np.trunc),
    "np.trunc": (np.trunc, np.trunc),
    "xp.floor": (xp.floor, np.floor),
    "np.floor": (np.floor, np.floor),
    "xp.ceil": (xp.ceil, np.ceil),
    "np.ceil": (np.ceil, np.ceil),
    "np.fix": (_fix, _fix),
}


def _run(device: xp.Device, fn: Callable[[Any], Any], h: np.ndarray) -> np.ndarray:
    """``fn`` of ``h`` on ``device``; on wgpu it must be dispatched there, with no host fallback."""
    xp.reset_metrics()
    with xp.config(offload="always"), np.errstate(all="ignore"):
        got = np.asarray(fn(xp.asarray(h, device=device)))
    m = xp.metrics()
    if device.kind == "wgpu":
        assert m["dispatches"] > 0 and m["host_fallbacks"] == 0 and m["host_kernels"] == 0, m
    return got


def _check(device: xp.Device, fn: Callable[[Any], Any], ref: Callable[[Any], Any], h: np.ndarray) -> None:
    got = _run(device, fn, h)
    with np.errstate(all="ignore"):          # signaling NaNs among the random bit patterns
        want = ref(h)
    assert_same(got, want)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(FUNCS))
def test_rounding_matches_numpy(device: xp.Device, name: str, dtype: Any) -> None:
    fn, ref = FUNCS[name]
    h = sample(dtype)
    _check(device, fn, ref, h)
    _check(device, fn, ref, h[:N - 1])          # a multiple of 4: float32 in vec4 form


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("decimals", DECIMALS)
def test_round_decimals_matches_numpy(device: xp.Device, decimals: int, dtype: Any) -> None:
    rng = np.random.default_rng(decimals + 10)
    dt = np.dtype(dtype)
    # values whose scaled form lands on halves (0.125 * 10^-d ...), plus the special values and a sample
    step = 10.0 ** -decimals
    halves = ((rng.integers(-10 ** 5, 10 ** 5, 20000) + 0.5) * step).astype(dt)
    h = np.concatenate([special_values(dt), halves, rng.uniform(-1e4, 1e4, 30000).astype(dt), sample(dt, 20000)])
    with np.errstate(all="ignore"):
        want = np.round(h, decimals)
    for fn in (lambda a: np.round(a, decimals), lambda a: np.around(a, decimals=decimals),
               lambda a: a.round(decimals)):
        assert_same(_run(device, fn, h), want)


@pytest.mark.parametrize("decimals", DECIMALS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_round_integers(device: xp.Device, decimals: int, dtype: Any) -> None:
    info = np.iinfo(dtype)
    h = np.array([0, 1, -1, 149, 150, -150, 151, 250, -250, 1234, -1250, 1350, 99999, info.max // 4,
                  info.min // 4], dtype=dtype)
    with xp.config(offload="always"):
        a = xp.asarray(h, device=device)
        assert_same(np.round(a, decimals), np.round(h, decimals))
        for f in (np.trunc, np.floor, np.ceil, np.rint, np.fix):
            assert_same(f(a), f(h))
        assert_same(xp.round(a), h)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_round_complex(device: xp.Device, dtype: Any) -> None:
    re = special_values(np.float32 if dtype == np.complex64 else np.float64)
    h = np.empty(re.size, dtype=dtype)
    h.real, h.imag = re, np.roll(re, 5)           # -0.0, NaN and inf parts as they are
    with xp.config(offload="always"):
        assert_same(xp.round(xp.asarray(h, device=device)), np.rint(h))


@pytest.mark.parametrize("n", [65535, 65536, 65537])
def test_float64_auto_offload_across_the_threshold(device: xp.Device, n: int) -> None:
    """Under offload="auto", float64 elementwise work from 65536 elements on goes to the GPU: the
    same answers on either side of the threshold."""
    h = sample(np.float64, n, seed=n)
    with xp.config(offload="auto"):
        a = xp.asarray(h, device=device)
        with np.errstate(all="ignore"):
            for fn, ref in (FUNCS["np.rint"], FUNCS["np.trunc"], FUNCS["np.floor"], FUNCS["np.ceil"],
                            FUNCS["np.fix"]):
                assert_same(fn(a), ref(h))
            assert_same(np.round(a, 1), np.round(h, 1))


def test_floor_divide_float64_large_quotients(device: xp.Device) -> None:
    """floor_divide's floor of the quotient goes through the exact helper too."""
    a = np.array([2.0 ** 52 + 1, -(2.0 ** 52 + 1), 2.0 ** 51 + 1, -(2.0 ** 51 + 3), 2.0 ** 60, 7.5, -7.5, -0.0, 1e300],
                 dtype=np.float64)
    for b in (1.0, -1.0, 2.0, 0.5, 3.0):
        with xp.config(offload="always"):
            assert_same(xp.floor_divide(xp.asarray(a, device=device), b), np.floor_divide(a, b))


# ---------------------------------------------------------------- the probe and the float32 exact helpers
def test_wgpu_probe_checks_every_builtin(wgpu_device: xp.Device) -> None:
    prov: Any = wgpu_device.provider
    checks = wgpu_probe.builtin_checks(prov)
    assert set(checks) == ({"f32", "f64"} if prov.f64 else {"f32"})
    for found in checks.values():
        assert set(found) == set(wgpu_probe.BUILTINS) and all(isinstance(v, bool) for v in found.values())
    notes = wgpu_probe.fallbacks(checks, wgpu_probe.numerics(prov))
    for sfx, found in checks.items():
        assert set(notes[sfx]) == {k for k, v in found.items() if not v}
        assert all(notes[sfx][k] == "exact helper on the bits" for k in wgpu_probe.ROUNDING if not found[k])
    src = "override ga_okround_f32: bool = false;\noverride ga_okceil_f32: bool = false;"
    constants = wgpu_probe.overrides(prov, src)["constants"]
    assert constants == {"ga_okround_f32": float(checks["f32"]["round"]), "ga_okceil_f32": float(checks["f32"]["ceil"])}


def test_probe_judges_wrong_builtins() -> None:
    """The judge flags what lavapipe's float64 round / trunc did, and accepts the exact answers."""
    dt = np.dtype(np.float64)
    x = wgpu_probe._unary(dt)
    y = np.roll(x, 7)
    t = wgpu_probe._fma_triples(dt)
    a, b, c = t[0::3], t[1::3], t[2::3]
    with np.errstate(all="ignore"):
        exact = [np.rint(x), np.trunc(x), np.floor(x), np.ceil(x), x - np.floor(x), np.abs(x), np.sign(x),
                 np.minimum(x, y), np.maximum(x, y), np.sqrt(x), x / y]
    fused = np.array([wgpu_probe._exact(Fraction(float(p)) * Fraction(float(q)) + Fraction(float(s)), dt)
                      for p, q, s in zip(a, b, c, strict=True)])
    good = np.concatenate(exact + [fused])
    assert all(wgpu_probe._judge(dt, x, y, t, good, False).values())
    bad = good.copy()
    n = x.size
    with np.errstate(all="ignore"):
        bad[:n] = np.where(np.abs(x) < 2.0 ** 52, np.trunc(x + np.copysign(0.5, x) * (np.abs(x % 1) != 0.5)), x)
        bad[n:2 * n] = np.where(np.abs(x) < 2.0 ** 50, np.trunc(x) + 0.0, x)      # -0.0 lost, no truncation above
    bad[11 * n:] = a * b + c                                                        # rounded twice
    found = wgpu_probe._judge(dt, x, y, t, bad, False)
    assert not found["round"] and not found["trunc"] and not found["fma"]
    assert all(found[k] for k in wgpu_probe.BUILTINS if k not in ("round", "trunc", "fma"))


@pytest.fixture
def float32_builtins_wrong(wgpu_device: xp.Device) -> Iterator[xp.Device]:
    """The wgpu device as if its float32 round / trunc / floor / ceil were not exact: kernels then take the
    exact helpers (the pipelines are compiled again with the probe's new answer)."""
    prov: Any = wgpu_device.provider
    xp.synchronize(wgpu_device)
    saved = prov._builtins
    prov._builtins = {k: dict(v) for k, v in saved.items()}
    prov._builtins["f32"].update(dict.fromkeys(wgpu_probe.ROUNDING, False))
    prov.pipelines.clear()
    try:
        yield wgpu_device
    finally:
        xp.synchronize(wgpu_device)
        prov._builtins = saved
        prov.pipelines.clear()


@pytest.mark.parametrize("name", ["xp.round", "np.trunc", "np.floor", "np.ceil", "np.fix"])
def test_wgpu_float32_exact_helpers(float32_builtins_wrong: xp.Device, name: str) -> None:
    fn, ref = FUNCS[name]
    src = "override ga_okround_f32: bool = false;"
    assert wgpu_probe.overrides(float32_builtins_wrong.provider, src)["constants"]["ga_okround_f32"] == 0.0
    h = sample(np.float32)
    _check(float32_builtins_wrong, fn, ref, h)
    _check(float32_builtins_wrong, fn, ref, h[:N - 1])
    # the float32 math that rounds (exp, sin, cos) through ga_round_f32
    x = np.linspace(-80, 80, 4099, dtype=np.float32)
    with xp.config(offload="always"):
        a = xp.asarray(x, device=float32_builtins_wrong)
        for f in (np.exp, np.sin, np.cos, np.expm1):
            np.testing.assert_array_max_ulp(np.asarray(f(a)), f(x), maxulp=4)
