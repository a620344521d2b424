"""``betainc``, ``betaincc``, ``stdtr``, ``gammainc``, ``gammaincc``, ``chdtr``, ``chdtrc``
(render/wgsl_incomplete.py) beyond the generic tests (tests/test_special_ops.py, tests/test_elementwise.py):
SciPy's special values, accuracy against exact values (tests/data/incomplete_truth.npz,
scripts/gen_incomplete_truth.py: mpmath, 60 digits) in float64 and against SciPy in float32 over x near 0 and
1, large a and b (100, 1e4), df from 0.5 to 1e6 and t from -50 to 50, a up to 1e5 near x, fusion with
neighbours, no host fallback, and the host for float32 on an adapter without float64.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.core.ops import OPS

from .conftest import incomplete_f64_scale

special = pytest.importorskip("scipy.special")

F32, F64 = np.dtype("float32"), np.dtype("float64")
TRUTH = np.load(pathlib.Path(__file__).parent / "data" / "incomplete_truth.npz")
INF, NAN = np.inf, np.nan


def _run(name: str, device: xp.Device, *args: np.ndarray) -> np.ndarray:
    with xp.config(offload="always"):
        return np.asarray(getattr(xp.special, name)(*(xp.asarray(a, device=device) for a in args)))


def _oracle(name: str, dt: np.dtype, *args: np.ndarray) -> np.ndarray:
    """The host implementation (SciPy's float64 ufunc, rounded once; stdtr(1, t) as the Cauchy cdf)."""
    return np.asarray(OPS[name].host_impl()(*(np.asarray(a, dt) for a in args)))


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(all="ignore"):
        e = np.where(g == w, 0.0, np.abs(g - w) / np.spacing(np.abs(want).astype(got.dtype)).astype(np.float64))
    return np.where(np.isnan(g) & np.isnan(w), 0.0, e)


def _skip(dt: np.dtype, device: xp.Device) -> None:
    if not device.supports(dt):
        pytest.skip(f"{dt} is not supported on {device}")


# (a, b, x) -> SciPy's betainc; betaincc is its complement where defined
BETA_SPECIAL = [
    (NAN, 1.0, 0.5), (1.0, NAN, 0.5), (1.0, 1.0, NAN), (-1.0, 2.0, 0.5), (2.0, -1.0, 0.5), (2.0, 3.0, -0.1),
    (2.0, 3.0, 1.5), (0.0, 0.0, 0.5), (INF, INF, 0.5), (0.0, 2.0, 0.5), (0.0, 2.0, 0.0), (-0.0, 2.0, 0.5),
    (2.0, 0.0, 0.5), (2.0, 0.0, 1.0), (INF, 2.0, 0.5), (INF, 2.0, 1.0), (2.0, INF, 0.5), (2.0, INF, 0.0),
    (2.0, 3.0, 0.0), (2.0, 3.0, 1.0), (2.0, 3.0, -0.0), (1.0, 1.0, 0.25), (1.0, 3.0, 0.25), (3.0, 1.0, 0.25),
    (0.5, 0.5, 0.5), (1e-30, 1e-30, 0.5), (1e30, 1e30, 0.5), (2.0, 3.0, INF), (INF, 0.0, 0.5), (0.0, INF, 0.5),
]
STDTR_SPECIAL = [
    (NAN, 1.0), (1.0, NAN), (0.0, 1.0), (-1.0, 1.0), (-INF, 1.0), (INF, 1.0), (INF, -2.0), (INF, 0.0),
    (1.0, INF), (1.0, -INF), (3.0, 0.0), (3.0, -0.0), (1e300, 2.0), (1e-300, 2.0), (5.0, 1e300), (5.0, -1e300),
    (1.0, 1e-7), (1.0, -1e-7), (2.0, 1e-300), (0.5, -50.0), (1e6, 3.0),
]


# (a, x) -> SciPy's gammainc (xsf's igam); chdtr(v, x) = gammainc(v / 2, x / 2), NaN for x < 0
GAMMA_SPECIAL = [
    (NAN, 1.0), (1.0, NAN), (-1.0, 1.0), (1.0, -1.0), (0.0, 0.0), (0.0, 1.0), (-0.0, 2.0), (2.0, 0.0),
    (INF, 1.0), (INF, INF), (2.0, INF), (1e-30, 1e-30), (1e30, 1e30), (0.5, 1e30), (30.0, 30.0), (300.0, 310.0),
    (1.0, 1.0), (0.5, 0.25), (25.0, 0.0), (1e5, 1e5 + 300.0),
]


@pytest.mark.parametrize("dt", [F32, F64], ids=str)
def test_gamma_special_values(dt: np.dtype, device: xp.Device) -> None:
    _skip(dt, device)
    a, x = (np.array(v, dt) for v in zip(*GAMMA_SPECIAL))
    for name in ("gammainc", "gammaincc", "chdtr", "chdtrc"):
        got, want = _run(name, device, a, x), _oracle(name, dt, a, x)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
        exact = np.isin(want, (0.0, 1.0))
        np.testing.assert_array_equal(got[exact], want[exact], err_msg=name)
        err = _ulps(got, want)
        if dt == F64:       # in ULP of tests/conftest.py incomplete_f64_scale's magnitude
            mag = np.maximum(np.abs(want), incomplete_f64_scale(name, want, a, x))
            err = np.where(np.isnan(want), 0.0, np.abs(got - want) / np.spacing(mag))
        assert err.max(initial=0) <= 4, name


@pytest.mark.parametrize("dt", [F32, F64], ids=str)
def test_special_values(dt: np.dtype, device: xp.Device) -> None:
    """NaN, the domain's edges, the point distributions and infinities exactly as SciPy's ufuncs."""
    _skip(dt, device)
    a, b, x = (np.array(v, dt) for v in zip(*BETA_SPECIAL))
    for name in ("betainc", "betaincc"):
        got, want = _run(name, device, a, b, x), _oracle(name, dt, a, b, x)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
        exact = np.isin(want, (0.0, 1.0)) | (a == 1e30)
        np.testing.assert_array_equal(got[exact], want[exact], err_msg=name)
        assert _ulps(got, want).max(initial=0) <= 4, name
    df, t = (np.array(v, dt) for v in zip(*STDTR_SPECIAL))
    got, want = _run("stdtr", device, df, t), _oracle("stdtr", dt, df, t)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    exact = np.isin(want, (0.0, 0.5, 1.0))
    np.testing.assert_array_equal(got[exact], want[exact])
    assert _ulps(got, want).max(initial=0) <= 4


# float64: allowed error against the exact values, in ULP: 24 + 2 (a + b) (Boost's double algorithm: the
# power term's bases, rounded, raised to the a-th and b-th power, and the complement 1 - I where I is near
# 1/2; render/wgsl_incomplete.py). SciPy's own betainc is up to 1.7 (a + b) ULP off on this table.
# gammainc, gammaincc: 32 + 2 L ULP, L = |a log x| + x + |lgamma(a)|, the size of the exponent of x^a exp(-x) /
# Gamma(a) (SciPy's xsf algorithm, whose own results are as far off: up to 1149 ULP on this table, L 2e3 - 1e4)
@pytest.mark.parametrize("name", ["betainc", "betaincc", "stdtr", "gammainc", "gammaincc"])
def test_float64_against_exact_values(name: str, device: xp.Device) -> None:
    _skip(F64, device)
    tab = TRUTH[name]
    a, b, x, exact = tab.T
    args = (a, b) if name in ("stdtr", "gammainc", "gammaincc") else (a, b, x)
    got = _run(name, device, *args)
    size = a / 2 + 0.5 if name == "stdtr" else a + b
    err = np.where(np.abs(exact) < np.finfo(F64).tiny, 0.0, _ulps(got, exact))
    assert not np.signbit(got).any()
    limit = 24 + 2 * size
    if name.startswith("gamma"):
        limit = 32 + 2 * (np.abs(a * np.log(b)) + b + np.abs(special.gammaln(a)))
    bad = err > limit
    assert not bad.any(), (f"{name}: {int(bad.sum())} values beyond 24 + 2 (a + b) ULP, e.g. "
                           f"{[tuple(v) for v in tab[bad][:3]]} got {got[bad][:3]} ({err[bad][:3]} ULP)")


@pytest.mark.parametrize("name", ["betainc", "betaincc", "stdtr", "gammainc", "gammaincc"])
def test_float32_against_exact_values(name: str, device: xp.Device) -> None:
    """The table's inputs are float32 values: float32 results within 1 ULP of the exact value rounded."""
    tab = TRUTH[name]
    a, b, x, exact = tab.T
    args = tuple(v.astype(F32) for v in ((a, b) if name in ("stdtr", "gammainc", "gammaincc") else (a, b, x)))
    got = _run(name, device, *args)
    want = exact.astype(F32)
    tiny = np.abs(want) < np.finfo(F32).tiny
    err = _ulps(got[~tiny], want[~tiny])
    assert err.max() <= 1, f"{name}: {err.max()} ULP"


def _beta_grid(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    par = np.concatenate([rng.uniform(0, 3, 300), 10 ** rng.uniform(-3, 3, 300), rng.integers(1, 40, 100),
                          np.full(100, 100.0), np.full(100, 1e4), 10 ** rng.uniform(2, 4.5, 100)])
    a, b = par, rng.permutation(par)
    x = np.concatenate([rng.uniform(0, 1, 300), 10 ** rng.uniform(-30, -1, 200), 1 - 10 ** rng.uniform(-7, -1, 200),
                        np.zeros(0)])
    x = np.concatenate([x, rng.uniform(0, 1, par.size - x.size)])
    m = a / (a + b)
    near = rng.uniform(0, 1, a.size) < 0.3
    x = np.where(near, np.clip(m + rng.normal(0, 1, a.size) * np.sqrt(m * (1 - m) / (a + b + 1)), 0, 1), x)
    return a, b, x


def test_float32_against_scipy(device: xp.Device) -> None:
    """float32 (computed in float64): within 1 ULP of SciPy's float64 result rounded, over x near 0 and 1,
    a and b of 100 and 1e4, df from 0.5 to 1e6 and t from -50 to 50; gammainc ... with a up to 1e5, x near a."""
    rng = np.random.default_rng(11)
    a, b, x = (v.astype(F32) for v in _beta_grid(rng))
    for name in ("betainc", "betaincc"):
        got, want = _run(name, device, a, b, x), _oracle(name, F32, a, b, x)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        err = _ulps(got, want)[np.abs(want) >= np.finfo(F32).tiny]
        assert err.max() <= 1, f"{name}: {err.max()} ULP"
    df = np.concatenate([10 ** rng.uniform(np.log10(0.5), 6, 1500), np.arange(1, 41), [0.5, 1e6]]).astype(F32)
    t = np.concatenate([rng.uniform(-50, 50, 1000), rng.uniform(-2, 2, df.size - 1000)]).astype(F32)
    got, want = _run("stdtr", device, df, t), _oracle("stdtr", F32, df, t)
    err = _ulps(got, want)[np.abs(want) >= np.finfo(F32).tiny]
    assert err.max() <= 1, f"stdtr: {err.max()} ULP"
    a = np.concatenate([rng.uniform(0, 5, 500), 10 ** rng.uniform(-4, 5, 500), rng.uniform(15, 300, 500)])
    x = rng.permutation(np.concatenate([rng.uniform(0, 10, 500), 10 ** rng.uniform(-6, 5, 500),
                                        rng.uniform(0, 400, 500)]))
    x = np.where(rng.uniform(0, 1, a.size) < 0.4, np.abs(a + rng.normal(0, 3, a.size) * np.sqrt(a)), x)
    a, x = a.astype(F32), x.astype(F32)
    for name in ("gammainc", "gammaincc", "chdtr", "chdtrc"):
        got, want = _run(name, device, a, x), _oracle(name, F32, a, x)
        err = _ulps(got, want)[np.abs(want) >= np.finfo(F32).tiny]
        assert err.max() <= 1, f"{name}: {err.max()} ULP"


def test_stdtr_df1_is_the_cauchy_cdf(device: xp.Device) -> None:
    """stdtr(1, t) = 1/2 + atan(t) / pi to an ULP or two (SciPy's own is up to 1.4e7 ULP off for small t)."""
    _skip(F64, device)
    t = np.concatenate([10 ** np.linspace(-12, 3, 31), -(10 ** np.linspace(-12, 3, 31))])
    got = _run("stdtr", device, np.ones_like(t), t)
    assert _ulps(got, np.arctan2(1.0, -t) / np.pi).max() <= 2


def test_fuses_with_neighbours(device: xp.Device) -> None:
    """betaincc, stdtr and chdtrc are kernel ops, no host fallback: on the host with their elementwise neighbours
    one kernel; on a GPU each a kernel of its own over its computed operands (``schedule._heavy_apart``: one source
    per op wherever it is called, NVIDIA's compiler taking 12-17 s for each), all in one evaluation."""
    rng = np.random.default_rng(2)
    a, b, x = rng.uniform(0.5, 20, 64), rng.uniform(0.5, 20, 64), rng.uniform(0, 1, 64)
    # (float64 only on wgpu: this kernel takes lavapipe about 16 s to compile, and float32 is float64 rounded)
    for dt in (F32, F64) if device.kind != "wgpu" else (F64,):
        if not device.supports(dt):
            continue
        with xp.config(offload="always"):
            g = [xp.asarray(v.astype(dt), device=device) for v in (a, b, x)]
            xp.evaluate(*g)
            y = xp.special.betaincc(g[0] * 0.5, g[1] + 1, g[2] * g[2]) * 2 + xp.special.stdtr(g[0], g[1] - 10) \
                - xp.special.chdtrc(g[0], g[1] * 2)
            ops = [k.ops for k in xp.explain(y, wgsl=False).kernels]
            xp.reset_metrics()
            xp.evaluate(y)
            m = xp.metrics()
        if device.kind == "wgpu":
            assert [o for o in ops if {"betaincc", "stdtr", "chdtrc"} & set(o)] == [["betaincc"], ["stdtr"], ["chdtrc"]]
            assert m["dispatches"] == len(ops) <= 9 and m["evaluations"] == 1, (ops, m)
        else:
            assert m["host_kernels"] == 1
        assert m["host_fallbacks"] == 0
        want = (special.betaincc(a * 0.5, b + 1, x * x) * 2 + special.stdtr(a, b - 10)
                - special.chdtrc(a, b * 2)).astype(dt)
        np.testing.assert_allclose(np.asarray(y), want, rtol=4e-6 if dt == F32 else 1e-12)


def test_float32_without_float64_runs_on_the_host(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """float32 computes in float64: an adapter without shader-f64 runs these on the host (a counted fallback)."""
    monkeypatch.setattr(wgpu_device.provider, "f64", False)
    a = np.array([0.5, 2.0, 30.0], F32)
    xp.reset_metrics()
    with xp.config(fallback="silent", offload="always"):
        got = np.asarray(xp.special.betainc(xp.asarray(a, device=wgpu_device), a, np.float32(0.5)))
    assert xp.metrics()["host_fallbacks"] == 1
    np.testing.assert_array_equal(got, _oracle("betainc", F32, a, a, np.full(3, 0.5, F32)))


# (a, b, x, exact betainc) for x below 2^-1000 (mpmath): SciPy's own lose the subnormal x's bits
# (betainc(0.1, 7, 5e-324) is 1 % off); the device computes x^a as pow(x, a) there
SUBNORMAL_X = (
    (0.5, 2.5, 5e-324, 3.7734724510006397e-162),
    (0.1, 7.0, 5e-324, 5.92520677590929e-33),
    (0.5, 5.624986912890943, 2.2250738585072014e-308, 3.904357832837157e-154),
    (0.5, 0.5, 5e-324, 1.41505216912524e-162),
    (1.5, 40.0, 1e-310, 0.0),
    (0.25, 300.0, 3e-315, 1.0742461081815282e-78),
)


def test_float64_subnormal_x(wgpu_device: xp.Device) -> None:
    """(The cpu device runs SciPy's ufunc.)"""
    device = wgpu_device
    _skip(F64, device)
    a, b, x, exact = (np.array(v) for v in zip(*SUBNORMAL_X))
    got = _run("betainc", device, a, b, x)
    assert _ulps(got, exact).max() <= 8
    np.testing.assert_array_equal(_run("betaincc", device, a, b, x), 1.0)
