"""float -> integer casts of NaN, +-inf, +-0 and values at and past each integer range:
one rule on both devices (providers/host_cast.py, render/wgsl_cast.py), which is NumPy's
result on Linux/x86-64 (docs/user-guide.md, "Deviations from NumPy")."""

from __future__ import annotations

import platform
import warnings

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers.host_cast import cast

FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)]
X86 = platform.machine().lower() in ("x86_64", "amd64")


def _specials(fdt: np.dtype) -> np.ndarray:
    """NaN (both signs), +-inf, +-0, subnormals, fractions, and for every power of two that
    bounds an integer range (2**7 ... 2**64) the floats around +-2**k; then large values."""
    f = fdt.type
    vals = [f(np.nan), -f(np.nan), f(np.inf), -f(np.inf), f(0.0), -f(0.0), np.finfo(fdt).smallest_subnormal,
            -np.finfo(fdt).smallest_subnormal, f(0.5), f(-0.5), f(0.999), f(-0.999), f(1.0), f(-1.0),
            f(300.7), f(-300.7), f(70000.0), f(-70000.0), f(3e9), f(-3e9), f(1e30), f(-1e30),
            np.finfo(fdt).max, -np.finfo(fdt).max]
    for k in (7, 8, 15, 16, 31, 32, 53, 55, 56, 57, 63, 64, 65):
        for s in (1.0, -1.0):
            b = f(s * 2.0**k)
            vals += [b, np.nextafter(b, f(0)), np.nextafter(b, f(s * np.inf))]
            vals += [f(s * 2.0**k + d) for d in (-1.5, -1.0, -0.5, 0.5, 1.0, 1.5)]
    rng = np.random.default_rng(7)
    vals += list((rng.standard_normal(300) * 10.0 ** rng.integers(0, 22, 300)).astype(fdt))
    return np.array(vals, dtype=fdt)


def _reference(x: np.ndarray, idt: np.dtype) -> np.ndarray:
    """The rule written element by element with Python integers (no float -> int conversion)."""
    out = []
    for v in x.tolist():
        t64 = -(1 << 63) if not np.isfinite(v) or not -(1 << 63) <= int(v) < (1 << 63) else int(v)
        t32 = -(1 << 31) if not np.isfinite(v) or not -(1 << 31) <= int(v) < (1 << 31) else int(v)
        bits = idt.itemsize * 8
        if idt == np.uint64:
            if np.isnan(v):
                r = 1 << 63
            elif v >= 2.0**64:
                r = 0
            elif v >= 2.0**63:
                r = int(v)
            else:
                r = t64 % (1 << 64)
        elif bits == 64:
            r = t64
        elif idt == np.uint32:
            r = t64 % (1 << 32)
        else:
            r = t32 % (1 << bits)
            if idt.kind == "i" and r >= 1 << (bits - 1):
                r -= 1 << bits
        out.append(r)
    return np.array(out, dtype=idt)


@pytest.mark.parametrize("idt", INTS, ids=str)
@pytest.mark.parametrize("fdt", FLOATS, ids=str)
def test_host_rule_matches_reference(fdt: np.dtype, idt: np.dtype) -> None:
    x = _specials(fdt)
    np.testing.assert_array_equal(cast(x, idt), _reference(x, idt))
    # strided and 0-d sources give the same
    s = np.zeros(2 * x.size, dtype=fdt)
    s[::2] = x
    np.testing.assert_array_equal(cast(s[::2], idt), _reference(x, idt))
    for v in x[:6]:
        assert cast(np.asarray(v), idt)[()] == _reference(np.asarray([v]), idt)[0]


@pytest.mark.skipif(not X86, reason="the rule is NumPy's result on x86-64; other CPUs convert differently")
@pytest.mark.parametrize("idt", INTS, ids=str)
@pytest.mark.parametrize("fdt", FLOATS, ids=str)
def test_host_rule_is_numpy_on_x86(fdt: np.dtype, idt: np.dtype) -> None:
    """On x86-64 the rule is what NumPy gives; for uint32 what its scalar loop gives (its SIMD loop
    differs for NaN, inf and values outside [-2**31, 2**32): see host_cast.py)."""
    x = _specials(fdt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if idt == np.uint32:
            want = np.array([np.asarray(v).astype(idt) for v in x], dtype=idt)
        else:
            want = x.astype(idt)
    np.testing.assert_array_equal(cast(x, idt), want)


@pytest.mark.parametrize("extra", [0, 1], ids=["vec4", "scalar"])
@pytest.mark.parametrize("idt", INTS, ids=str)
@pytest.mark.parametrize("fdt", FLOATS, ids=str)
def test_astype_specials(fdt: np.dtype, idt: np.dtype, extra: int, device: xp.Device) -> None:
    """Each float -> integer pair on each device (float64 / 64-bit integers where supported);
    the two sizes render the wgpu kernel with and without vec4 lanes."""
    if not device.supports(fdt) or not device.supports(idt):
        pytest.skip(f"{device.name} lacks {fdt} or {idt}")
    x = _specials(fdt)
    x = np.concatenate([x, np.zeros((-len(x)) % 4 + extra, dtype=fdt)])
    want = _reference(x, idt)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)       # no "invalid value encountered in cast"
        got = xp.asarray(x, device=device).astype(idt)
        assert got.dtype == idt
        np.testing.assert_array_equal(np.asarray(got), want)
    # fused behind other work, and through a strided view
    y = xp.asarray(x, device=device)
    np.testing.assert_array_equal(np.asarray((y * 1).astype(idt) + 0), want)
    np.testing.assert_array_equal(np.asarray(y[::-2].astype(idt)), want[::-2])


@pytest.mark.parametrize("idt", [np.dtype(np.int8), np.dtype(np.uint32), np.dtype(np.uint64)], ids=str)
def test_astype_specials_large_array_on_host(idt: np.dtype) -> None:
    """Past the in-process provider's chunk size (its blocked path) the rule holds too."""
    x = np.resize(_specials(np.dtype(np.float64)), 40_000)
    np.testing.assert_array_equal(np.asarray(xp.asarray(x, device="cpu").astype(idt)), _reference(x, idt))


@pytest.mark.parametrize("idt", [np.dtype(np.int16), np.dtype(np.uint32)], ids=str)
def test_complex_to_int_takes_the_real_part(idt: np.dtype, device: xp.Device) -> None:
    z = np.array([complex(np.nan, 1), complex(3e9, 7), complex(-1.5, np.nan), complex(70000, 0)], dtype=np.complex64)
    a = xp.asarray(z, device=device)
    from gpuarray.array_object.elementwise import astype_node, finish  # astype() refuses complex -> int
    got = finish(astype_node(a._node, idt))
    np.testing.assert_array_equal(np.asarray(got), _reference(z.real.copy(), idt))


def test_float_to_bool_is_unchanged(device: xp.Device) -> None:
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3e9], dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(xp.asarray(x, device=device).astype(bool)), x.astype(bool))
