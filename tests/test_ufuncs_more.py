"""NumPy's fmod, gcd, lcm, ldexp, frexp, spacing, cbrt and bitwise_count on GpuArrays: on the device on both
providers (no host fallback; WGSL on wgpu: render/wgsl_bits.py), equal to NumPy bit for bit (cbrt: within
2 ULP of NumPy and 1 ULP of the exact cube root), special values, every dtype NumPy has a loop for.

NumPy's float16 loops (spacing, cbrt, frexp and ldexp of bool, int8, uint8, int16, uint16) compute in
float32 here, as every float16 loop does in gpuarray (interop/ufuncs.py): they are compared with NumPy's
float32 loop."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.namespace.elementwise import OP_FUNCTIONS

from .conftest import assert_same, cbrt_near_exact, device_numerics, flush_subnormals

FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]
INTS = [np.dtype(t) for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")]
UINT = {np.dtype(np.float16): np.uint16, np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}


@contextmanager
def on_device(device: xp.Device) -> Iterator[None]:
    """No host fallback in the interop layer (config raise) and, on wgpu, no kernel routed to the host."""
    xp.reset_metrics()
    with xp.config(fallback="raise"), np.errstate(all="ignore"):
        yield
    m = xp.metrics()
    assert m["host_fallbacks"] == 0
    if device.kind == "wgpu":
        assert m["host_kernels"] == 0 and m["eager_host_ops"] == 0


def specials(dt: np.dtype) -> np.ndarray:
    fi = np.finfo(dt)
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, 0.75, -1.5, 2.0, 3.0, -7.25, 0.1, 1e10,
            float(fi.max), -float(fi.max), float(fi.tiny), -float(fi.tiny), float(fi.smallest_subnormal),
            -float(fi.smallest_subnormal), float(fi.tiny) / 3, -float(fi.tiny) / 7, float(fi.tiny) * (1 - fi.eps),
            2.0 ** (fi.maxexp - 1), float(fi.eps), 1 + float(fi.eps)]
    return np.array(vals, dtype=dt)


def sample(dt: np.dtype, n: int = 3000, seed: int = 0) -> np.ndarray:
    """The specials and random bit patterns (every exponent, subnormals, NaN payloads)."""
    rng = np.random.default_rng(seed)
    ut = UINT[dt]
    bits = rng.integers(0, np.iinfo(ut).max, n, dtype=ut, endpoint=True)
    return np.concatenate([specials(dt), bits.view(dt)])


def same_bits(got: Any, want: np.ndarray) -> None:
    """assert_same, and for floats the encodings equal wherever NumPy's result is not NaN."""
    assert_same(got, want)
    g, w = np.asarray(got), np.asarray(want)
    if w.dtype.kind == "f":
        keep = ~np.isnan(w)
        ut = UINT[w.dtype]
        np.testing.assert_array_equal(g[keep].view(ut), w[keep].view(ut))


def int_values(dt: np.dtype, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Pairs: every pair of the extremes and small values, and random pairs."""
    info = np.iinfo(dt)
    small = [0, 1, 2, 3, 6, 7, 12, 18, 100, -1, -2, -3, -7, -12, -18, -100]
    vals = np.array(sorted({v for v in small + [info.min, info.min + 1, info.max, info.max - 1]
                            if info.min <= v <= info.max}), dtype=dt)
    a, b = np.repeat(vals, vals.size), np.tile(vals, vals.size)
    rng = np.random.default_rng(seed)
    ra = rng.integers(info.min, info.max, 400, dtype=dt, endpoint=True)
    rb = rng.integers(info.min, info.max, 400, dtype=dt, endpoint=True)
    rb[::3] = (ra[::3] // 7) if info.min == 0 else ra[::3] // 6      # common factors
    return np.concatenate([a, ra]), np.concatenate([b, rb])


def up(x: Any, device: xp.Device) -> xp.GpuArray:
    return xp.asarray(x, device=device)


# ---------------------------------------------------------------- exact float ufuncs
@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_spacing_frexp_bitwise(dt: np.dtype, device: xp.Device) -> None:
    x = sample(dt)
    g = up(x, device)
    with on_device(device):
        same_bits(np.spacing(g), np.spacing(x))
        m, e = np.frexp(g)
        wm, we = np.frexp(x)
        same_bits(m, wm)
        assert_same(e, we)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_fmod_float_bitwise(dt: np.dtype, device: xp.Device) -> None:
    # a device that flushes float32 subnormals (NVIDIA's Vulkan driver) gets none and is compared flushed
    ftz = dt == np.float32 and device_numerics(device)["flushes_f32_subnormals"]
    fl: Any = flush_subnormals if ftz else (lambda v: v)
    s = fl(specials(dt))
    a, b = np.repeat(s, s.size), np.tile(s, s.size)          # every pair of special values
    r1, r2 = fl(sample(dt, 2000, 1)), fl(sample(dt, 2000, 2))
    with on_device(device):
        same_bits(fl(np.asarray(np.fmod(up(a, device), up(b, device)))), fl(np.fmod(a, b)))
        same_bits(fl(np.asarray(np.fmod(up(r1, device), up(r2, device)))), fl(np.fmod(r1, r2)))
        same_bits(fl(np.asarray(np.fmod(up(r1, device), dt.type(0.7)))), fl(np.fmod(r1, dt.type(0.7))))
        same_bits(fl(np.asarray(np.fmod(-3.5, up(s, device)))), fl(np.fmod(-3.5, s)))   # a Python float first


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_ldexp_bitwise(dt: np.dtype, device: xp.Device) -> None:
    fi = np.finfo(dt)
    x = sample(dt, 1500)
    rng = np.random.default_rng(3)
    span = fi.maxexp - fi.minexp + int(fi.nmant) + 3
    n = rng.integers(-span, span, x.size).astype(np.int32)
    n[:40] = [0, 1, -1, fi.maxexp, -fi.maxexp, fi.minexp - fi.nmant, fi.minexp - fi.nmant - 1, 2**31 - 1, -2**31,
              1000, -1000, 5000, -5000, 127, -126, -149, -150, -1074, -1075, 1023, -1022, 3, -3, 7, -7, 64, -64,
              2, -2, 10, -10, 30, -30, 100, -100, 200, -200, 300, -300, 20]
    # subnormal results that round half to even, half up and down
    halves = np.array([1.5, 2.5, 3.5, -1.5, 1.25, 1.75, 0.75, 1 + float(fi.eps)], dtype=dt)
    k = fi.minexp - fi.nmant
    with on_device(device):
        same_bits(np.ldexp(up(x, device), up(n, device)), np.ldexp(x, n))
        same_bits(np.ldexp(up(halves, device), k), np.ldexp(halves, k))
        same_bits(np.ldexp(up(halves, device), k - 1), np.ldexp(halves, k - 1))
        for ndt in (np.int8, np.int16, np.int64, np.uint8, np.uint16, np.uint32, np.bool_):
            nn = np.array([0, 1, 5, 100, 127], dtype=np.int64).astype(ndt)
            if np.dtype(ndt).kind == "i":
                nn = np.concatenate([nn, -nn])
            xx = np.resize(x[:40], nn.size)
            got = np.ldexp(up(xx, device), up(nn, device))
            assert_same(got, np.ldexp(xx, nn))
        big = np.array([2**40, -2**40, 2**62, -2**63], dtype=np.int64)
        xx = np.array([3.0, 3.0, fi.smallest_subnormal, -fi.smallest_subnormal], dtype=dt)
        same_bits(np.ldexp(up(xx, device), up(big, device)), np.ldexp(xx, big))


def cbrt_close(got: Any, want: np.ndarray) -> None:
    """cbrt: NumPy's dtype, shape, NaN, infinities and zeros, the rest within 2 ULP (float32; 1 float64)."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape
    special = ~np.isfinite(w) | (w == 0)
    same_bits(g[special], w[special])
    assert _ulps(g, w).max(initial=0) <= (2 if w.dtype == np.float32 else 1)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    fin = np.isfinite(want) & (np.abs(want) <= np.finfo(got.dtype).max)
    w = want[fin]
    return np.abs(got[fin].astype(np.longdouble) - w) / np.spacing(np.abs(w).astype(got.dtype)).astype(np.longdouble)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_cbrt(dt: np.dtype, device: xp.Device) -> None:
    x = np.concatenate([sample(dt, 20000), np.random.default_rng(5).uniform(-1000, 1000, 5000).astype(dt),
                        np.arange(-30, 31).astype(dt) ** 3])
    with on_device(device):
        got = np.asarray(np.cbrt(up(x, device)))
    # (the WGSL's float64 against the extended-precision cube root: NumPy's own is 2.3 ULP off on some CPUs)
    want = cbrt_near_exact(x) if device.kind == "wgpu" else np.cbrt(x)
    assert got.dtype == dt
    cbrt_close(got, want)                                    # nan, +-inf, +-0 as NumPy's; 2 / 1 ULP
    if device.kind == "wgpu":                  # the WGSL (the in-process provider's is NumPy's: 1.9 ULP in float32)
        assert_same(got[-61:], np.arange(-30, 31).astype(dt))               # exact cubes exactly
        if dt == np.float32:                                                  # within 1 ULP of the exact value
            with np.errstate(invalid="ignore"):                              # signaling NaNs
                exact = np.cbrt(x.astype(np.float64))
            assert _ulps(got, exact).max() < 1


# ---------------------------------------------------------------- integer ufuncs
@pytest.mark.parametrize("dt", INTS, ids=str)
def test_integer_ufuncs(dt: np.dtype, device: xp.Device) -> None:
    a, b = int_values(dt)
    ga, gb = up(a, device), up(b, device)
    with on_device(device):
        for fn in (np.fmod, np.gcd, np.lcm):
            assert_same(fn(ga, gb), fn(a, b))
        assert_same(np.bitwise_count(ga), np.bitwise_count(a))
        assert_same(np.gcd(ga, 12), np.gcd(a, 12))             # a Python int
        assert_same(np.lcm(6, gb), np.lcm(6, b))


def test_bool_loops(device: xp.Device) -> None:
    """fmod and bitwise_count of bools are NumPy's int8 loops; gcd and lcm have none."""
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    with on_device(device):
        assert_same(np.fmod(up(a, device), up(b, device)), np.fmod(a, b))
        assert_same(np.bitwise_count(up(a, device)), np.bitwise_count(a))
    for fn in (np.gcd, np.lcm):
        with pytest.raises(TypeError):
            fn(up(a, device), up(b, device))


def test_mixed_integer_dtypes(device: xp.Device) -> None:
    """NumPy's promotion: int8 with uint8 is int16; int64 with uint64 has no gcd loop but an fmod (float64)."""
    a = np.array([-128, 100, 7, -6], np.int8)
    b = np.array([255, 30, 0, 4], np.uint8)
    c = np.array([-2**63, 12, 5, 0], np.int64)
    d = np.array([2**64 - 1, 18, 0, 3], np.uint64)
    with on_device(device):
        for fn in (np.fmod, np.gcd, np.lcm):
            assert_same(fn(up(a, device), up(b, device)), fn(a, b))
        assert_same(np.fmod(up(c, device), up(d, device)), np.fmod(c, d))
    with pytest.raises(TypeError):
        np.gcd(up(c, device), up(d, device))


# ---------------------------------------------------------------- dtypes, shapes, out=, where=
def test_float16_loops_of_small_integers(device: xp.Device) -> None:
    """spacing / cbrt / frexp / ldexp of small integers: NumPy's float16 loops, float16 results."""
    x = np.array([0, 1, -3, 100, -128, 127], np.int8)
    with on_device(device), np.errstate(all="ignore"):
        g = up(x, device)
        same_bits(np.spacing(g), np.spacing(x))
        cbrt_close(np.cbrt(g), np.cbrt(x))
        m, e = np.frexp(g)
        same_bits(m, np.frexp(x)[0])
        assert_same(e, np.frexp(x)[1])
        same_bits(np.ldexp(g, up(x, device)), np.ldexp(x, x))
        same_bits(np.ldexp(up(np.array([True, False]), device), 3), np.ldexp(np.array([True, False]), 3))


def test_integer_operands_of_float_ufuncs(device: xp.Device) -> None:
    """int32 / int64 operands: NumPy's float64 loops (ldexp of two ints too)."""
    x = np.array([0, 1, -27, 2**31 - 1, -2**31], np.int32)
    y = np.array([0, 1, -27, 2**53 + 1, -2**63], np.int64)
    with on_device(device):
        for v in (x, y):
            same_bits(np.spacing(up(v, device)), np.spacing(v))
            cbrt_close(np.cbrt(up(v, device)), np.cbrt(v))
            m, e = np.frexp(up(v, device))
            same_bits(m, np.frexp(v)[0])
            assert_same(e, np.frexp(v)[1])
            same_bits(np.ldexp(up(v, device), up(x, device)), np.ldexp(v, x))
        same_bits(np.fmod(up(x, device), 2.5), np.fmod(x, 2.5))


def test_zero_d_empty_and_broadcasting(device: xp.Device) -> None:
    a = np.array([[1.5], [-0.0], [np.inf], [1e-40]], np.float32)     # (4, 1)
    n = np.array([1, -3, 200], np.int64)                              # (3,)
    i = np.array([[12], [-18], [0]], np.int16)
    j = np.array([8, -27, 5, 0], np.int16)
    with on_device(device):
        same_bits(np.ldexp(up(a, device), up(n, device)), np.ldexp(a, n))
        same_bits(np.fmod(up(a, device), up(np.float32([0.7, -2.0, 0.0]), device)),
                  np.fmod(a, np.float32([0.7, -2.0, 0.0])))
        assert_same(np.gcd(up(i, device), up(j, device)), np.gcd(i, j))
        assert_same(np.lcm(up(i, device), up(j, device)), np.lcm(i, j))
        for v in (np.float64(-27.0), np.array([], np.float64), np.zeros((0, 3), np.float32)):
            g = up(v, device)
            cbrt_close(np.cbrt(g), np.cbrt(v))
            assert_same(np.spacing(g), np.spacing(v))
            m, e = np.frexp(g)
            assert_same(m, np.frexp(v)[0])
            assert_same(e, np.frexp(v)[1])
            assert_same(np.ldexp(g, 3), np.ldexp(v, 3))
            assert_same(np.fmod(g, g), np.fmod(v, v))
        for v in (np.int32(-12), np.array([], np.uint16)):
            assert_same(np.gcd(up(v, device), 8), np.gcd(v, 8))
            assert_same(np.lcm(up(v, device), 8), np.lcm(v, 8))
            assert_same(np.bitwise_count(up(v, device)), np.bitwise_count(v))


def test_out_where_dtype(device: xp.Device) -> None:
    x = np.array([1.5, -8.0, 1e-310, np.inf, -0.0])
    n = np.array([3, -1, 60, 2, 5], np.int32)
    with on_device(device):
        g = up(x, device)
        out = xp.zeros(5, dtype=xp.float64, device=device)
        assert np.ldexp(g, up(n, device), out=out) is out
        same_bits(out, np.ldexp(x, n))
        mo = xp.zeros(5, dtype=xp.float64, device=device)
        eo = xp.zeros(5, dtype=xp.int32, device=device)
        r = np.frexp(g, out=(mo, eo))
        assert r[0] is mo and r[1] is eo
        same_bits(mo, np.frexp(x)[0])
        assert_same(eo, np.frexp(x)[1])
        mask = np.array([True, False, True, False, True])
        o2 = xp.full(5, 7.0, device=device)
        np.cbrt(g, out=o2, where=mask)
        want = np.full(5, 7.0)
        np.cbrt(x, out=want, where=mask)
        cbrt_close(o2, want)
        host_out = np.zeros(5)                      # an ndarray out
        np.spacing(g, out=host_out)
        same_bits(host_out, np.spacing(x))
        cbrt_close(np.cbrt(up(x.astype(np.float32), device), dtype=np.float64),
                  np.cbrt(x.astype(np.float32), dtype=np.float64))
        i = np.array([12, -18, 7], np.int32)
        assert_same(np.gcd(up(i, device), 8, dtype=np.int64), np.gcd(i, 8, dtype=np.int64))
        assert_same(np.fmod(up(i, device), 5, dtype=np.float32), np.fmod(i, 5, dtype=np.float32))
        bo = xp.zeros(3, dtype=xp.uint8, device=device)
        np.bitwise_count(up(i, device), out=bo)
        assert_same(bo, np.bitwise_count(i))


def test_frexp_is_one_kernel(device: xp.Device) -> None:
    g = up(np.array([3.0, -0.1, 1e-310, 0.0]), device)
    xp.evaluate(g + 0)
    xp.reset_metrics()
    with xp.config(fallback="raise"):
        m, e = np.frexp(g)
        xp.evaluate(m, e)
    metrics = xp.metrics()
    assert metrics["evaluations"] == 1
    assert metrics["dispatches" if device.kind == "wgpu" else "host_kernels"] == 1


# ---------------------------------------------------------------- errors and the namespace
def test_bad_inputs_raise_as_numpy(device: xp.Device) -> None:
    f = np.array([1.5, 2.0])
    c = np.array([1 + 1j])
    cases = [(np.gcd, (f, f)), (np.lcm, (f, np.array([2, 3]))), (np.bitwise_count, (f,)), (np.ldexp, (f, f)),
             (np.ldexp, (f, np.array([1, 2], np.uint64))), (np.ldexp, (f, 1.5)), (np.spacing, (c,)),
             (np.cbrt, (c,)), (np.frexp, (c,)), (np.fmod, (c, c))]
    for fn, args in cases:
        with pytest.raises(TypeError) as numpy_error:
            fn(*args)
        with pytest.raises(type(numpy_error.value)):
            fn(*(up(a, device) for a in args))


def test_namespace_functions(device: xp.Device) -> None:
    x = np.array([1.5, -3.0, 1e-40, 0.0], np.float32)
    n = np.array([2, -130, 10, 5], np.int64)
    i = np.array([-128, 12, 0, 5], np.int64)
    with on_device(device):
        g = up(x, device)
        r = xp.ldexp(g, up(n, device))
        assert r.dtype == np.float32                     # NumPy's fl->f loop, not float64
        same_bits(r, np.ldexp(x, n))
        same_bits(xp.ldexp(g, 3), np.ldexp(x, 3))
        e = OP_FUNCTIONS["frexp_exponent"](g)          # numpy.frexp's half, in no namespace
        assert e.dtype == np.int32
        assert_same(e, np.frexp(x)[1])
        assert not hasattr(xp, "frexp_exponent")
        b = xp.bitwise_count(up(i, device))
        assert b.dtype == np.uint8
        assert_same(b, np.bitwise_count(i))
        assert_same(xp.gcd(up(i, device), 6), np.gcd(i, 6))
        assert_same(xp.lcm(up(i, device), 6), np.lcm(i, 6))
        same_bits(xp.fmod(g, np.float32(0.5)), np.fmod(x, np.float32(0.5)))
        same_bits(xp.spacing(g), np.spacing(x))
        cbrt_close(xp.cbrt(up(np.float32([64, -8, 3]), device)), np.cbrt(np.float32([64, -8, 3])))
    with pytest.raises(TypeError):
        xp.ldexp(g, g)                                   # a float exponent
    with pytest.raises(TypeError):
        xp.ldexp(g, 1.5)
    with pytest.raises(TypeError):
        xp.ldexp(g, up(np.array([1, 2, 3, 4], np.uint64), device))
    with pytest.raises(TypeError):
        xp.gcd(g, g)
