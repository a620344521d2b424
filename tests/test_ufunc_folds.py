"""``ufunc.accumulate`` and one-axis ``ufunc.reduce`` of binary ufuncs without scans of their own, on the
device as a fold in NumPy's order (interop/adapters/folds.py, render/wgsl_scan.py's ``tile`` and ``serial``
modes), against NumPy on both devices."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.interop.adapters.folds import FOLDS

from .conftest import assert_same, device_numerics

# exactly rounded (or exact) steps: the whole accumulation is NumPy's, bit for bit
EXACT = ("subtract", "copysign", "nextafter", "heaviside", "fmod", "left_shift", "right_shift", "gcd", "lcm")
# steps within a few ULP of NumPy's (libm-like functions): each step checked from the device's previous value
STEPPED = ("divide", "arctan2", "hypot", "logaddexp", "remainder", "floor_divide", "float_power",
           "power")
FLOATS = ("float32", "float64")
INTS = ("int8", "int32", "int64", "uint16")
# (shape, axis): a short row, contiguous rows (a workgroup each), rows along the first axis (a thread
# each), a middle axis
LAYOUTS = [((37,), 0), ((5, 300), 1), ((300, 6), 0), ((4, 5, 7), 1)]


def _values(dt: str, shape: tuple[int, ...], name: str) -> np.ndarray:
    rng = np.random.default_rng(sum(shape) + len(name))
    if dt in FLOATS:
        v = rng.uniform(-4, 4, shape).astype(dt)
        flat = v.reshape(-1)
        flat[rng.integers(0, flat.size, 6)] = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30], dtype=dt)
        return v
    info = np.iinfo(dt)
    if name in ("left_shift", "right_shift"):
        return rng.integers(0, 6, shape).astype(dt)
    v = rng.integers(max(info.min, -50), min(info.max, 50), shape).astype(dt)
    flat = v.reshape(-1)
    flat[rng.integers(1, flat.size, 2)] = (info.min, info.max)
    return v


def _cases() -> list[tuple[str, str]]:
    out = []
    for name in EXACT + STEPPED:
        for dt in FLOATS + INTS:
            try:
                want = getattr(np, name).accumulate(np.zeros(2, dt))
            except TypeError:
                continue            # no NumPy loop for this dtype
            if want.dtype in (np.float16, np.bool_) or name == "power" and dt in INTS:
                continue            # host fallbacks (tested below)
            out.append((name, dt))
    return out


def _check(name: str, got: np.ndarray, want: np.ndarray, x: np.ndarray, axis: int) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    if name in EXACT or want.dtype.kind in "iu":
        assert_same(got, want)
        return
    # first elements NumPy's; each later one NumPy's step from the device's previous value (a chain of
    # powers or divisions amplifies each step's rounding, so the whole is compared step by step)
    g = np.moveaxis(got, axis, 0)
    xs = np.moveaxis(x.astype(want.dtype), axis, 0)
    assert_same(g[0], np.moveaxis(want, axis, 0)[0])
    with np.errstate(all="ignore"):
        step = getattr(np, name)(g[:-1], xs[1:]).astype(want.dtype)
    ulp = np.finfo(want.dtype).eps
    assert_same(g[1:], step, rtol=8 * ulp, atol=float(np.finfo(want.dtype).tiny))


@pytest.mark.parametrize(("name", "dt"), _cases())
@pytest.mark.parametrize(("shape", "axis"), LAYOUTS, ids=[f"{s}-{a}" for s, a in LAYOUTS])
def test_accumulate(name: str, dt: str, shape: tuple[int, ...], axis: int, device: xp.Device) -> None:
    if dt == "float64" and not device.supports(np.dtype("float64")):
        pytest.skip("no float64 on this adapter")
    h = _values(dt, shape, name)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(np, name).accumulate(h, axis=axis)
        before = xp.metrics().get("host_fallbacks", 0)
        got = np.asarray(getattr(np, name).accumulate(xp.asarray(h, device=device), axis=axis))
    assert xp.metrics().get("host_fallbacks", 0) == before, "ran on the host"
    _check(name, got, want, h, axis)


@pytest.mark.parametrize("name", ["subtract", "divide", "hypot", "gcd"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_one_axis(name: str, keepdims: bool, device: xp.Device) -> None:
    dt = "int32" if name == "gcd" else "float32"
    h = _values(dt, (6, 40), name)
    for axis in (0, 1, -1):
        with np.errstate(all="ignore"):
            want = getattr(np, name).reduce(h, axis=axis, keepdims=keepdims)
            got = np.asarray(getattr(np, name).reduce(xp.asarray(h, device=device), axis=axis, keepdims=keepdims))
        acc = getattr(np, name).accumulate(h, axis=axis) if name != "divide" else None
        if name == "divide":        # the last of the device's own accumulation, step checked there
            with np.errstate(all="ignore"):
                full = np.asarray(np.divide.accumulate(xp.asarray(h, device=device), axis=axis))
            assert_same(got, np.take(full, [-1], axis=axis) if keepdims else np.take(full, -1, axis=axis))
            assert got.shape == want.shape
            continue
        assert acc is not None
        tol = 64 * float(np.finfo(np.float32).eps) if name == "hypot" else 0.0    # its steps: a few ULP
        assert_same(got, want, rtol=tol)
    v = xp.asarray(h[0], device=device)
    if name != "divide":
        assert_same(getattr(np, name).reduce(v), getattr(np, name).reduce(h[0]),      # axis=None, 1-D
                    rtol=64 * float(np.finfo(np.float32).eps) if name == "hypot" else 0.0)


def test_long_rows_cross_passes_and_dispatches(device: xp.Device) -> None:
    """Rows past a tile (2048) and a dispatch's positions (32768): the fold continues from the value the
    pass or dispatch before wrote; integers wrap as NumPy's loop does."""
    h = _values("int32", (2, 70001), "subtract")
    assert_same(np.subtract.accumulate(xp.asarray(h, device=device), axis=1), np.subtract.accumulate(h, axis=1))
    f = np.random.default_rng(3).uniform(-1, 1, 70001).astype(np.float32)
    assert_same(np.subtract.accumulate(xp.asarray(f, device=device)), np.subtract.accumulate(f))
    i8 = (np.arange(40000) % 97).astype(np.int8)
    assert_same(np.subtract.accumulate(xp.asarray(i8, device=device)), np.subtract.accumulate(i8))
    many = np.random.default_rng(4).uniform(-2, 2, (70000, 3)).astype(np.float32)   # 70000 workgroups (2-D grid)
    assert_same(np.subtract.accumulate(xp.asarray(many, device=device), axis=1), np.subtract.accumulate(many, axis=1))


def test_fused_prologue_and_out(device: xp.Device) -> None:
    """The folded values computed in the same kernel (a fused prologue), and ``out=``."""
    h = _values("float32", (3, 500), "subtract")
    x = xp.asarray(h, device=device)
    want = np.subtract.accumulate(np.abs(h) * 2, axis=1)
    assert_same(np.subtract.accumulate(xp.abs(x) * 2, axis=1), want)
    out = xp.empty((3, 500), dtype=xp.float32, device=device)
    r = np.subtract.accumulate(xp.abs(x) * 2, axis=1, out=out)
    assert r is out
    assert_same(out, want)


def test_numpys_errors_and_host_cases(device: xp.Device) -> None:
    """NumPy's errors for what it refuses; loops gpuarray has no dtype for, and integer powers, by the host."""
    x = xp.asarray(np.array([[1.0, 2.0], [3.0, 4.0]]), device=device)
    with pytest.raises(ValueError, match="not reorderable"):
        np.subtract.reduce(x, axis=(0, 1))
    with pytest.raises(ValueError):
        np.subtract.reduce(xp.asarray(np.zeros((0, 3)), device=device), axis=0)
    with pytest.raises(TypeError):
        np.subtract.accumulate(xp.asarray(np.array([True, False]), device=device))
    i = np.array([2, 3, 2], dtype=np.int64)
    assert_same(np.power.accumulate(xp.asarray(i, device=device)), np.power.accumulate(i))
    assert set(FOLDS) >= {"subtract", "divide", "power", "arctan2", "hypot", "logaddexp", "fmod", "gcd"}


@pytest.mark.parametrize("name", ["subtract", "divide", "hypot", "gcd", "fmod", "logaddexp", "bitwise_xor",
                                  "bitwise_and", "fmax", "fmin"])
def test_reduceat(name: str, device: xp.Device) -> None:
    """Segments gathered into rows and folded: NumPy's rules (``indices[i] >= indices[i + 1]`` gives
    ``a[indices[i]]``), along either axis, no host fallback (``bitwise_*`` and ``fmax`` / ``fmin``, whose
    reduce and accumulate are scans of their own, fold their reduceat too)."""
    dt = "int32" if name in ("gcd", "bitwise_xor", "bitwise_and") else "float32"
    h = _values(dt, (6, 40), name)
    tol = 0.0 if name in ("subtract", "gcd", "fmod", "bitwise_xor", "bitwise_and", "fmax", "fmin") else \
        64 * float(np.finfo(np.float32).eps)
    # a device that flushes float32 subnormals (docs/accuracy.md) loses a subnormal quotient: the H200 gave
    # 0 for NumPy's 9.4e-40; absolute errors below the smallest normal are not counted there
    atol = float(np.finfo(np.float32).tiny) if tol and device_numerics(device)["flushes_f32_subnormals"] else 0.0
    for axis, idx in ((1, [0, 4, 1, 5]), (1, [0, 3, 3, 39]), (1, [7]), (0, [0, 2, 5]), (0, [4, 1])):
        with np.errstate(all="ignore"):
            want = getattr(np, name).reduceat(h, idx, axis=axis)
            before = xp.metrics().get("host_fallbacks", 0)
            got = getattr(np, name).reduceat(xp.asarray(h, device=device), idx, axis=axis)
            assert xp.metrics().get("host_fallbacks", 0) == before, "ran on the host"
        # (the sign of fmax / fmin at a tie of zeros is NumPy's loop's own: docs/reliability.md, fuzz runs)
        assert_same(got, want, rtol=tol, atol=atol, check_signed_zero=name not in ("fmax", "fmin"))
    with pytest.raises(IndexError, match="out-of-bounds"):
        getattr(np, name).reduceat(xp.asarray(h, device=device), [0, 40], axis=1)


def test_numpys_own_reductions_of_power_and_arctan2(device: xp.Device) -> None:
    """NumPy 2.4's float ``power.reduce`` / ``arctan2.reduce`` (and ``reduceat``) give ``f(x[0], x[-1])``,
    not the left fold its documentation defines (their ``accumulate`` folds): gpuarray runs those on the
    host, so that it gives what NumPy gives."""
    h = np.array([[0.5, -1.2, 2.0, 0.7, 3.0]] * 2)
    g = xp.asarray(h, device=device)
    with xp.config(fallback="silent"), np.errstate(all="ignore"):
        for name in ("power", "arctan2"):
            f = getattr(np, name)
            assert_same(f.reduce(g, axis=1), f.reduce(h, axis=1))
            assert_same(f.reduceat(g, [0, 2], axis=1), f.reduceat(h, [0, 2], axis=1))
            assert_same(f.accumulate(g, axis=1), f.accumulate(h, axis=1), rtol=1e-13)


@pytest.mark.parametrize("dt", FLOATS)
def test_nextafter_steps_through_subnormals(dt: str, device: xp.Device) -> None:
    """nextafter compares through integer keys: a driver that flushes subnormals (the H200's Vulkan driver)
    compared the smallest subnormal equal to zero, and the fold stayed at the smallest subnormal."""
    if dt == "float64" and not device.supports(np.dtype("float64")):
        pytest.skip("no float64 on this adapter")
    h = np.array([0, 1, 1, 1, -1, -1, -1, -1, -1, 0, -0.0], dtype=dt)
    assert_same(np.nextafter.accumulate(xp.asarray(h, device=device)), np.nextafter.accumulate(h))
    s = np.finfo(dt).smallest_subnormal
    a = np.array([s, -s, 2 * s, s, 0.0, -0.0, s, -s], dtype=dt)
    b = np.array([1, -1, 0, -1, s, -s, s, -0.0], dtype=dt)
    assert_same(xp.nextafter(xp.asarray(a, device=device), xp.asarray(b, device=device)), np.nextafter(a, b))



def test_few_long_rows_fold_on_the_host_by_cost(device: xp.Device) -> None:
    """Fewer than SERIAL_ROWS rows longer than SERIAL_LENGTH fold faster in NumPy's loop than on one GPU
    thread a row: on a GPU they run on the host, counted and named with the reason; many rows and
    config(fallback="raise") keep them on the device; the cpu device folds them itself."""
    from gpuarray.interop.adapters.folds import SERIAL_LENGTH, SERIAL_ROWS
    from gpuarray.interop.host import reset_fallback_warnings
    few = _values("float32", (2, SERIAL_LENGTH + 5), "subtract")
    many = _values("int32", (SERIAL_ROWS, SERIAL_LENGTH + 5), "subtract")
    on_gpu = int(device.kind == "wgpu")
    calls = (lambda v: np.subtract.accumulate(v, axis=1), lambda v: np.subtract.reduce(v, axis=-1),
             lambda v: np.subtract.reduceat(v, [0, 3], axis=1))
    with np.errstate(all="ignore"):
        for f in calls:
            before = xp.metrics().get("host_fallbacks", 0)
            with xp.config(fallback="silent"):
                assert_same(f(xp.asarray(few, device=device)), f(few))
            assert xp.metrics().get("host_fallbacks", 0) == before + on_gpu
            before = xp.metrics().get("host_fallbacks", 0)
            assert_same(f(xp.asarray(many, device=device)), f(many))
            assert xp.metrics().get("host_fallbacks", 0) == before
        g = xp.asarray(few, device=device)
        with xp.config(fallback="raise"):
            assert_same(np.subtract.accumulate(g, axis=1), np.subtract.accumulate(few, axis=1))
        if on_gpu:
            reset_fallback_warnings()
            with pytest.warns(xp.HostFallbackWarning, match=r"accumulate runs on the host: 2 row\(s\) of 4101"):
                np.subtract.accumulate(g, axis=1)
            with pytest.warns(xp.HostFallbackWarning, match=r"reduceat runs on the host: 4 row\(s\) of 4098"):
                np.subtract.reduceat(g, [0, 3], axis=1)
