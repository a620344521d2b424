"""float16 against NumPy on both devices.

On a GPU float16 values are held in float32 words (core/dtypes.py) and every result is rounded to float16
where it is made (``ga_half_f32``, render/wgsl_bits.py); operations other than the elementwise ones compute
in float32 and round once (graph/node.py ``_in_float32``), as NumPy's half loops accumulate in float. So
casts, arithmetic and comparisons are bit-exact against NumPy, functions within one float16 ULP, and
reductions, products and scans within the float16 rounding of a float32 result.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.core.dtypes import ALL_DTYPES
from gpuarray.providers.host_cast import cast as host_cast

from .conftest import assert_same

F16 = np.dtype(np.float16)
ALL_HALF = np.arange(1 << 16, dtype=np.uint16).view(np.float16)        # every float16, NaNs included


def _same_bits(got: object, want: np.ndarray) -> None:
    """Bit for bit (NaN payloads aside), the sign of zero included."""
    g = np.asarray(got)
    assert g.dtype == want.dtype, f"dtype {g.dtype}, NumPy gives {want.dtype}"
    assert g.shape == want.shape
    if want.dtype.kind == "c":
        _same_bits(g.real, want.real)
        _same_bits(g.imag, want.imag)
        return
    if want.dtype.kind == "f":
        nan = np.isnan(want)
        assert (np.isnan(g) == nan).all(), f"NaN differs: got {g[np.isnan(g) != nan][:5]}"
        bad = ~nan & (g.view(f"u{want.itemsize}") != want.view(f"u{want.itemsize}"))
    else:
        bad = g != want
    assert not bad.any(), f"{int(bad.sum())} values differ: got {g[bad][:5]}, want {want[bad][:5]}"


def _around_ties(rng: np.random.Generator, n: int) -> np.ndarray:
    """float64 values at, beside and between float16 ties (the double-rounding traps of float64 -> float32
    -> float16), random magnitudes over float16's range and past it, subnormals and the overflow edge."""
    h = rng.choice(ALL_HALF[np.isfinite(ALL_HALF)], n).astype(np.float64)
    nxt = np.nextafter(h.astype(np.float16), np.float16(np.inf)).astype(np.float64)
    mid = (h + nxt) / 2
    with np.errstate(invalid="ignore"):
        vals = [h, mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf), mid + np.abs(mid) * 2.0**-30,
                rng.standard_normal(n) * 10.0 ** rng.integers(-9, 6, n),
                [65504.0, 65519.99, 65520.0, -65520.0, 2.0**-24, 2.0**-25, 2.0**-25 * (1 + 2**-40), 1.5 * 2.0**-24,
                 2.0**-14, 2.0**-14 - 2.0**-25, -0.0, np.inf, -np.inf, np.nan, 1e300, 1e-300]]
    return np.concatenate([np.asarray(v, np.float64) for v in vals])


def test_the_namespace_has_float16(device):
    assert xp.float16 == F16
    assert xp.isdtype(xp.float16, "real floating") and not xp.isdtype(xp.float16, "integral")
    fi = xp.finfo(xp.float16)
    assert (fi.bits, fi.eps, fi.max, fi.smallest_normal) == (16, 2.0**-10, 65504.0, 2.0**-14)
    # not an Array API dtype: the inspection namespace lists the standard's own
    assert "float16" not in xp.__array_namespace_info__().dtypes(device=device)
    x = xp.zeros(3, dtype=xp.float16, device=device)
    assert x.dtype == F16 and x.itemsize == 2 and x.nbytes == 6


def test_casts_to_float16_round_as_numpy(device):
    rng = np.random.default_rng(3)
    wide = _around_ties(rng, 4000)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        sources = [wide, wide.astype(np.float32), rng.integers(0, 1 << 32, 20000, dtype=np.uint32).view(np.float32)]
        for dt in ALL_DTYPES:
            if dt.kind in "iu":
                info = np.iinfo(dt)
                sources.append(np.concatenate([rng.integers(info.min, info.max, 300, dtype=dt, endpoint=True),
                                               np.array([info.min, info.max, 0, 2048, 2049, 4097, 65519, 65520]
                                                        if dt.itemsize >= 4 else [info.min, info.max, 0], dt)]))
        sources.append(np.array([True, False]))
        for src in sources:
            _same_bits(xp.astype(xp.asarray(src, device=device), xp.float16), src.astype(np.float16))
        for c in ((wide + 1j * wide[::-1]).astype(np.complex64), wide + 1j * wide[::-1]):     # the real part
            _same_bits(xp.astype(xp.real(xp.asarray(c, device=device)), xp.float16), c.real.astype(np.float16))


def test_casts_from_float16(device):
    a = xp.asarray(ALL_HALF, device=device)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for dt in ALL_DTYPES:
            want = ALL_HALF.astype(dt)
            if dt.kind in "iu":          # NaN and inf: the cast rule of tests/test_casts.py, through float32
                want = host_cast(ALL_HALF, dt)
            _same_bits(xp.astype(a, dt), want)
    assert_same(xp.asarray(ALL_HALF[:100], device=device), ALL_HALF[:100])


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "fmin",
                                "nextafter", "copysign", "floor_divide", "remainder", "equal", "less"])
def test_binary_ops_are_exact(device, op):
    rng = np.random.default_rng(5)
    a = rng.choice(ALL_HALF, 30000)
    b = rng.choice(ALL_HALF, 30000)
    b[:5000] = a[:5000]                                  # equal operands, and +-0 against +-0
    b[5000:5100] = -a[5000:5100]
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a, b)
    _same_bits(getattr(xp, op)(xp.asarray(a, device=device), xp.asarray(b, device=device)), want)


@pytest.mark.parametrize("op", ["negative", "abs", "sqrt", "square", "floor", "ceil", "trunc", "round", "sign",
                                "spacing", "isnan", "isfinite", "signbit", "reciprocal"])
def test_unary_ops_are_exact(device, op):
    with np.errstate(all="ignore"):
        want = (np.rint if op == "round" else getattr(np, op))(ALL_HALF)
    _same_bits(getattr(xp, op)(xp.asarray(ALL_HALF, device=device)), want)


_XP_FUNCTIONS = {"arctan": xp.atan, "arcsinh": xp.asinh, "exp2": xp.special.exp2, "sinc": xp.special.sinc}


@pytest.mark.parametrize("op", ["exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "arctan", "arcsinh",
                                "cbrt", "exp2", "sinc"])
def test_functions_within_one_float16_ulp(device, op):
    x = ALL_HALF[np.isfinite(ALL_HALF) | np.isinf(ALL_HALF)]
    with np.errstate(all="ignore"):
        want = getattr(np, op)(x)
        got = np.asarray(_XP_FUNCTIONS.get(op, getattr(xp, op, None))(xp.asarray(x, device=device)))
        assert got.dtype == F16
        assert (np.isnan(got) == np.isnan(want)).all()
        both = ~np.isnan(want)
        ulps = np.abs(got[both].view(np.int16).astype(np.int32) - want[both].view(np.int16).astype(np.int32))
    assert ulps.max() <= 1, f"{op}: {int((ulps > 1).sum())} values off by more than one float16 ULP"


def test_promotion_as_numpy(device):
    h = xp.ones(2, dtype=xp.float16, device=device)
    for dt in ALL_DTYPES:
        other = xp.ones(2, dtype=dt, device=device)
        assert (h + other).dtype == np.promote_types(F16, dt), dt
    assert (h + 1.5).dtype == F16 and (h * 3).dtype == F16 and (h + 1j).dtype == np.complex64
    assert (h > 0.5).dtype == np.bool_
    assert np.exp(xp.asarray(np.array([1, 2], np.int8), device=device)).dtype == F16     # NumPy's half loop
    big = xp.asarray(np.array([60000.0], np.float16), device=device)
    assert np.isinf(float((big * 2)[0])) and float((big * 2 / 4)[0]) == np.inf          # each step rounds


def test_reductions_accumulate_in_float32(device):
    rng = np.random.default_rng(11)
    x = rng.uniform(-30, 30, (300, 70)).astype(np.float16)
    x32 = x.astype(np.float32)
    g = xp.asarray(x, device=device)
    for name, kw in [("sum", {}), ("sum", {"axis": 0}), ("sum", {"axis": 1}), ("mean", {}), ("mean", {"axis": 0}),
                     ("prod", {"axis": 1}), ("var", {"axis": 1}), ("std", {"axis": 0})]:
        got = getattr(xp, name)(g[:, :8] if name == "prod" else g, **kw)
        ref = getattr(np, name)(x32[:, :8] if name == "prod" else x32, **kw)
        assert got.dtype == F16, name
        with np.errstate(over="ignore"):
            assert_same(got, np.asarray(ref).astype(np.float16), rtol=1e-3, atol=1e-3)
    # NumPy's float16 sum adds in float32 too: 10^5 x 0.1 is 10^4, not float16's stuck 256
    tenth = xp.asarray(np.full(100000, 0.1, np.float16), device=device)
    assert float(xp.sum(tenth)) == float(np.sum(np.full(100000, 0.1, np.float16)))
    assert float(xp.mean(tenth)) == float(np.mean(np.full(100000, 0.1, np.float16)))
    for name in ("max", "min"):
        _same_bits(getattr(xp, name)(g, axis=1), getattr(np, name)(x, axis=1))
    _same_bits(xp.argmax(g, axis=0), np.argmax(x, axis=0))
    e = xp.zeros((0, 3), dtype=xp.float16, device=device)
    _same_bits(xp.sum(e, axis=0), np.zeros(3, np.float16))
    _same_bits(xp.prod(e, axis=0), np.ones(3, np.float16))
    nan = xp.asarray(np.array([1, np.nan, 3], np.float16), device=device)
    assert np.isnan(float(xp.sum(nan))) and np.isnan(float(xp.max(nan)))


def test_scans_round_each_float32_sum_once(device):
    x = np.random.default_rng(2).uniform(-3, 3, 5000).astype(np.float16)
    got = xp.cumulative_sum(xp.asarray(x, device=device))
    assert got.dtype == F16
    assert_same(got, np.cumsum(x.astype(np.float32)).astype(np.float16), rtol=2e-3, atol=2e-2)


def test_matmul_sort_and_selection(device):
    rng = np.random.default_rng(4)
    a = rng.uniform(-3, 3, (70, 300)).astype(np.float16)
    b = rng.uniform(-3, 3, (300, 9)).astype(np.float16)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    got = ga @ gb
    assert got.dtype == F16
    assert_same(got, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16), rtol=2e-3, atol=2e-2)
    assert_same(ga.T @ ga, (a.T.astype(np.float32) @ a.astype(np.float32)).astype(np.float16), rtol=2e-3, atol=0.1)
    s = rng.choice(ALL_HALF, 5000)
    gs = xp.asarray(s, device=device)
    _same_bits(xp.sort(gs), np.sort(s))
    _same_bits(xp.argsort(gs, stable=True), np.argsort(s, kind="stable"))
    _same_bits(xp.unique_values(gs[~xp.isnan(gs)]), np.unique(s[~np.isnan(s)]))
    _same_bits(gs[gs > 1.0], s[s > 1.0])
    _same_bits(xp.where(gs > 0, gs, -gs), np.where(s > 0, s, -s))
    _same_bits(xp.take(gs, xp.asarray([4999, 0, 17], device=device)), s[[4999, 0, 17]])
    _same_bits(xp.concat([gs[:3], gs[-2:]]), np.concatenate([s[:3], s[-2:]]))


def test_writes_through_views(device):
    x = np.arange(12, dtype=np.float16).reshape(3, 4)
    g = xp.asarray(x, device=device)
    x[1:, 2] = 2.25
    g[1:, 2] = 2.25
    row = g[0]
    row *= 3.3
    x[0] *= np.float16(3.3)
    g += 1
    x += 1
    _same_bits(g, x)
    g[2, 3] = 1e6                                 # overflows to inf as NumPy's float16 does
    assert np.isinf(float(g[2, 3]))


def test_large_dimensions(device):
    """More than 65535 elements along each axis in turn (one workgroup count per dimension on a GPU)."""
    for shape in [(70000, 2), (2, 70000)]:
        x = (np.arange(140000, dtype=np.float32).reshape(shape) % 2048 - 1024).astype(np.float16)
        g = xp.asarray(x, device=device)
        _same_bits(g * 3 + 1, x * np.float16(3) + np.float16(1))
        assert_same(xp.sum(g, axis=0), x.astype(np.float32).sum(axis=0).astype(np.float16), rtol=1e-3)
        _same_bits(xp.max(g, axis=1), x.max(axis=1))


def test_creation_and_other_dtypes(device):
    _same_bits(xp.arange(0, 3, 0.25, dtype=xp.float16, device=device), np.arange(0, 3, 0.25, dtype=np.float16))
    _same_bits(xp.linspace(0, 1, 33, dtype=xp.float16, device=device), np.linspace(0, 1, 33, dtype=np.float16))
    with np.errstate(over="ignore"):
        _same_bits(xp.full(3, 70000.0, dtype=xp.float16, device=device), np.full(3, np.inf, np.float16))
    _same_bits(xp.eye(3, dtype=xp.float16, device=device), np.eye(3, dtype=np.float16))
    _same_bits(xp.asarray(2.5, dtype=xp.float16, device=device), np.asarray(2.5, np.float16))
    z = xp.asarray(np.float16(-0.0), device=device)
    assert z.ndim == 0 and np.signbit(float(z * 2))
    assert xp.fft.fft(xp.ones(8, dtype=xp.float16, device=device)).dtype == np.complex64      # NumPy's
    # linear algebra computes float16 in float32 and rounds (CuPy's rule; NumPy raises TypeError)
    m = np.array([[4.0, 1.0], [1.0, 3.0]], np.float16)
    inv = xp.linalg.inv(xp.asarray(m, device=device))
    assert inv.dtype == F16
    assert_same(inv, np.linalg.inv(m.astype(np.float32)).astype(np.float16), rtol=1e-3)


def test_host_walk_and_device_agree():
    """Under automatic placement a small float16 evaluation may run on the host (NumPy's half loops):
    the same values as the kernels'."""
    x = np.random.default_rng(8).uniform(-3, 3, 1000).astype(np.float16)
    want = (x * np.float16(2.5) - np.float16(1)) / np.float16(3)
    got = {}
    for offload in ("auto", "always"):
        with xp.config(offload=offload):
            g = xp.asarray(x, device="wgpu:0")
            got[offload] = np.asarray((g * 2.5 - 1) / 3)
    _same_bits(got["auto"], want)
    _same_bits(got["always"], want)
