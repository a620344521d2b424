"""Sums of products keep NumPy's NaNs and signed zeros: shader compilers distribute ``a * c + b * c``
into ``(a + b) * c`` (lavapipe and the H200 did), which loses a NaN (``0 * inf + 1 * inf`` is NaN, ``(0 + 1)
* inf`` is inf) and the sign of a zero (``0 * -1 + -0 * -1`` is 0, ``(0 + -0) * -1`` is -0); the renderer
hides one term of such a sum from the compiler (``render/wgsl_vn.py``). Both found by the differential fuzz
as silent wrong results of in-place programs. Compilers also cancel a term a sum adds and takes away
(``(b + b) - b`` came out ``b`` on lavapipe: inf, not NaN, at b = inf; found by the expression fuzz), and
``square(a)`` is the product ``a * a`` to them."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp

# products of these are exact, so that an adapter that contracts a * b + c into an fma (the H200) gives
# NumPy's values too: only a distributed sum differs
_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -2.0, 0.5]
_A, _B, _C = (np.array(v) for v in zip(*itertools.product(_SPECIAL, repeat=3)))

_SUMS: dict[str, Callable[..., Any]] = {
    "a*c + b*c": lambda m, a, b, c: a * c + b * c,
    "c*a + c*b": lambda m, a, b, c: c * a + c * b,
    "a*c - b*c": lambda m, a, b, c: a * c - b * c,
    "a*c*b + b*c": lambda m, a, b, c: a * c * b + b * c,
    "(a*c + b*c) + a*c": lambda m, a, b, c: (a * c + b * c) + a * c,
    "-(a*c) + b*c": lambda m, a, b, c: -(a * c) + b * c,
    "a*-1 + b*-1": lambda m, a, b, c: a * -1.0 + b * -1.0,
    "a*0.5 + b*0.5": lambda m, a, b, c: a * 0.5 + b * 0.5,
    "where(a > b, a*c, b*c) + c*c": lambda m, a, b, c: m.where(a > b, a * c, b * c) + c * c,
    "square(a) + a*b": lambda m, a, b, c: m.square(a) + a * b,
    "(a + a) - a": lambda m, a, b, c: (a + a) - a,
    "(a - b) + b": lambda m, a, b, c: (a - b) + b,
    "a + (b - a)": lambda m, a, b, c: a + (b - a),
    "a + a*b": lambda m, a, b, c: a + a * b,
    "-a + -b": lambda m, a, b, c: (-a) + (-b),
    # a sum taken away or negated: the H200 turned a - (b - c) into a + (c - b) and -(b - c) into c - b (-0 at b == c)
    "a - (b - c)": lambda m, a, b, c: a - (b - c),
    "-(b - c)": lambda m, a, b, c: -(b - c),
    "a*b - (b - c)": lambda m, a, b, c: a * b - (b - c),
    "a * -(b - c)": lambda m, a, b, c: a * -(b - c),
    "a - (b + c)": lambda m, a, b, c: a - (b + c),
    "(a - b) - c": lambda m, a, b, c: (a - b) - c,
    "a - conj(b - c)": lambda m, a, b, c: a - m.conj(b - c),
    "-a": lambda m, a, b, c: -a,
    # quotients of operands with a multiplicand in common: the H200 cancelled c in c / (c * -0.0) and a in
    # ((b / c) * a) / a (expression fuzz seeds 45096, 45185, float64)
    "c / (c * b)": lambda m, a, b, c: c / (c * b),
    "(a * b) / b": lambda m, a, b, c: (a * b) / b,
    "(a * b) / (b * c)": lambda m, a, b, c: (a * b) / (b * c),
    "((a / c) * b) / b": lambda m, a, b, c: ((a / c) * b) / b,
}


def _same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elements equal with their sign of zero, or both NaN."""
    return ((got == want) & (np.signbit(got) == np.signbit(want))) | (np.isnan(got) & np.isnan(want))


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", list(_SUMS))
def test_sums_of_products_of_special_values(device: xp.Device, dt: str, name: str) -> None:
    """Every triple of eight special values through sums of products that share a multiplicand (a
    scalar, an array, through ``where``): NumPy's values, NaNs and signs of zero."""
    f = _SUMS[name]
    args = [v.astype(dt) for v in (_A, _B, _C)]
    with np.errstate(all="ignore"), xp.config(offload="always"):
        got = np.asarray(f(xp, *(xp.asarray(v, device=device) for v in args)))
        want = f(np, *args)
    ok = _same(got, want)
    assert ok.all(), (name, [(args[0][i], args[1][i], args[2][i], got[i], want[i]) for i in np.flatnonzero(~ok)[:5]])


def test_fuzz_findings_nan_and_signed_zero(device: xp.Device) -> None:
    """The two programs the differential fuzz found (seeds 502344 and 501876): in-place steps evaluated as
    one kernel whose last sum adds two products by one value (-inf, then -1)."""
    h = np.array([[-4.0, 1.109, 0.0], [-2.99, 2.0, 6.0], [np.nan, 6.0, 3.274], [0.272, -2.0, 4.957]])

    def nan_program(a: Any) -> Any:
        v0 = a.reshape(2, -1)
        v0[1:] = v0[:-1] + v0[1:]
        a *= float("-inf")
        a[:-1] = a[1:]
        a += a[::-1]
        return a

    def zero_program(a: Any) -> Any:
        a /= float("-inf")
        a *= -1.0
        a += a[::-1]
        return a

    with np.errstate(all="ignore"), xp.config(offload="always"):
        for prog, start in ((nan_program, h), (zero_program, h[1:])):
            got = np.asarray(prog(xp.asarray(start.copy(), device=device)))
            want = prog(start.copy())
            assert _same(got, want).all(), (got, want)


_CLIP_VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, 2.0]


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_clip_keeps_numpy_ties_and_nans(device: xp.Device, dt: str) -> None:
    """``np.clip`` and ``xp.clip`` with scalar bounds keep ``x`` at a +-0 tie (NumPy's
    ``clip(-0.0, 0.0, 1.0)`` is -0.0; ``maximum``/``minimum`` gave 0.0, found by the fuzz), with array
    bounds take the bound as NumPy's SIMD loop does, and give NaN where any operand is NaN: every x against
    every pair of bounds among nine special values, on both devices."""
    h = np.array(_CLIP_VALUES * 3, dtype=dt)
    with np.errstate(all="ignore"), xp.config(offload="always"):
        x = xp.asarray(h, device=device)
        for lo in _CLIP_VALUES:
            for hi in _CLIP_VALUES:
                want = np.clip(h, np.dtype(dt).type(lo), np.dtype(dt).type(hi))
                for got in (np.clip(x, np.dtype(dt).type(lo), np.dtype(dt).type(hi)), xp.clip(x, lo, hi)):
                    assert _same(np.asarray(got), want).all(), (lo, hi, np.asarray(got), want)
        lo, hi = (np.array(v, dtype=dt) for v in zip(*itertools.product(_CLIP_VALUES, repeat=2)))
        hx = np.resize(h, lo.shape)
        want = np.clip(hx, lo, hi)
        got = np.clip(xp.asarray(hx, device=device), xp.asarray(lo, device=device), xp.asarray(hi, device=device))
        assert _same(np.asarray(got), want).all()


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_equal_operands_and_negated_terms(device: xp.Device, dt: str) -> None:
    """``a - where(c, a, a)``, ``(c - b) + minimum(b, b)`` and ``-c + (c - b)`` (also with ``b`` read
    transposed through the tiled kernel): NaN where NumPy's is. Compilers know ``where(c, a, a)`` and
    ``minimum(b, b)`` to be ``a`` and ``b``, then fold ``a - a`` to 0 and cancel the terms (found by the
    expression fuzz, seeds 1478, 1249, 1532)."""
    rng = np.random.default_rng(7)
    pick = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -2.0, 0.5])
    a, b, c = (pick[rng.integers(0, pick.size, (64, 64))].astype(dt) for _ in range(3))
    fs: list[Callable[..., Any]] = [
        lambda m, a, b, c: a - m.where(b > c, a, a),
        lambda m, a, b, c: (c - b) + m.minimum(b, b),
        lambda m, a, b, c: (c - b.T) + m.maximum(b.T, b.T),
        lambda m, a, b, c: m.negative(c) + (c - b),
        lambda m, a, b, c: (-c + (c - b.T)) * 2.0,
    ]
    with np.errstate(all="ignore"), xp.config(offload="always"):
        for f in fs:
            got = np.asarray(f(xp, *(xp.asarray(v, device=device) for v in (a, b, c))))
            want = f(np, a, b, c)
            assert _same(got, want).all()


_SELECTS: dict[str, Callable[..., Any]] = {
    "where(a > b, a, b)": lambda m, a, b: m.where(a > b, a, b),
    "where(a < b, a, b)": lambda m, a, b: m.where(a < b, a, b),
    "where(a >= b, a, b)": lambda m, a, b: m.where(a >= b, a, b),
    "where(a > b, b, a)": lambda m, a, b: m.where(a > b, b, a),
    "where(a < 0, 0, a)": lambda m, a, b: m.where(a < 0.0, 0.0, a),
    "where(a == b, a, b)": lambda m, a, b: m.where(a == b, a, b),
    "a * (a > 0)": lambda m, a, b: a * (a > 0),
}


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_selects_on_a_comparison_of_their_arms(device: xp.Device, dt: str) -> None:
    """``where(a > b, a, b)`` and its kin are not ``max(a, b)``: NaN in ``b`` gives NaN, a tie of zeros
    gives ``b``. A compiler that turns such a select into a max (lavapipe did so to ``clip``'s selects) would
    change both; every pair of eight special values."""
    a, b = (np.tile(np.array(v), 8).astype(dt) for v in zip(*itertools.product(_SPECIAL, repeat=2)))
    with np.errstate(all="ignore"), xp.config(offload="always"):
        for name, f in _SELECTS.items():
            got = np.asarray(f(xp, xp.asarray(a, device=device), xp.asarray(b, device=device)))
            assert _same(got, f(np, a, b)).all(), name


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("name", ["a - (b - c)", "a*b - (b - c)", "-(b - c)", "a - (b + c)", "(a - b) - c",
                                  "a - conj(b - c)"])
def test_complex_sums_taken_away(device: xp.Device, dt: str, name: str) -> None:
    """Complex sums taken away or negated, each part over special values (signs of zero): the H200's compiler
    rewrote ``a - (b - c)`` as ``a + (c - b)`` (252 of 729 cases differed)."""
    f = _SUMS[name]
    parts = [0.0, -0.0, 1.0, -2.0, np.inf, np.nan]
    vals = np.array([complex(x, y) for x in parts for y in parts], dtype=dt)[::2]
    a, b, c = (np.array(v, dtype=dt) for v in zip(*itertools.product(vals, repeat=3)))
    with np.errstate(all="ignore"), xp.config(offload="always"):
        got = np.asarray(f(xp, *(xp.asarray(v, device=device) for v in (a, b, c))))
        want = f(np, a, b, c)
    for part in (np.real, np.imag):
        ok = _same(part(got), part(want)) | ~(np.isfinite(want.real) & np.isfinite(want.imag))
        assert ok.all(), (name, [(a[i], b[i], c[i], got[i], want[i]) for i in np.flatnonzero(~ok)[:4]])


# (left operand, right operand) of a complex product, each from ``b``
_RELATED_PRODUCTS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]] = {
    "conj(b) * b": (lambda m, b: m.conj(b), lambda m, b: b), "b * conj(b)": (lambda m, b: b, lambda m, b: m.conj(b)),
    "-b * b": (lambda m, b: -b, lambda m, b: b), "b * b": (lambda m, b: b, lambda m, b: b),
    "conj(b) * conj(b)": (lambda m, b: m.conj(b), lambda m, b: m.conj(b)),
    "(b + b) * b": (lambda m, b: b + b, lambda m, b: b),
    "conj(b) * (b * 2)": (lambda m, b: m.conj(b), lambda m, b: b * 2.0),
}


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("name", list(_RELATED_PRODUCTS))
def test_complex_products_of_related_operands(device: xp.Device, dt: str, name: str) -> None:
    """A complex product of a value and its conjugate (``|z|^2`` as ``conj(z) * z``), negation or itself, over
    every pair of special parts: each part as the textbook sums compute it, ``re = ar*br - ai*bi``, ``im = ar*bi
    + ai*br`` (products exact here, so that no rounding or contraction differs; NumPy's own loop may use fma,
    which differs where a product overflows). Lavapipe gave ``conj(b) * b`` the imaginary part -0 for +0
    (``x*y + (-y)*x`` regrouped; expression fuzz seed 32028)."""
    b = np.array([complex(x, y) for x in _SPECIAL for y in _SPECIAL], dtype=dt)
    left, right = _RELATED_PRODUCTS[name]
    with np.errstate(all="ignore"), xp.config(offload="always"):
        g = xp.asarray(b, device=device)
        got = np.asarray(left(xp, g) * right(xp, g))
        lo, ro = left(np, b), right(np, b)
        want = np.empty(b.shape, dt)
        want.real = lo.real * ro.real - lo.imag * ro.imag
        want.imag = lo.real * ro.imag + lo.imag * ro.real
    for part in (np.real, np.imag):
        ok = _same(part(got), part(want))
        assert ok.all(), (name, [(b[i], got[i], want[i]) for i in np.flatnonzero(~ok)[:5]])


def _fma(x: Any, y: Any, z: Any, once: bool, dt: type) -> Any:
    """``x * y + z`` in ``dt`` rounded once (exactly, by fractions) or twice (the product first)."""
    from fractions import Fraction
    if not once:
        return dt(dt(x) * dt(y)) + dt(z)
    return dt(float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))))


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_products_round_as_numpy_simd_loops(device: xp.Device, dt: str) -> None:
    """Each part of a complex product (``*``, ``square``; through views and a scalar) is one fused multiply-add
    of a rounded product, ``re = fma(ar, br, -(ai*bi))``, ``im = fma(ar, bi, ai*br)``: NumPy's SIMD loops on
    x86-64 with FMA and AArch64, bit for bit where the adapter's fma rounds once (the H200; the probe's
    ``exact_fma``), and the twice-rounded value where it does not (lavapipe)."""
    rng = np.random.default_rng(11)
    rdt = np.float32 if dt == "complex64" else np.float64
    n = 256
    a = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n) + 1j * rng.standard_normal(n)).astype(dt)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dt)
    once = True
    if device.name.startswith("wgpu"):
        from gpuarray.providers.wgpu_probe import numerics
        once = numerics(device.provider)["exact_fma"]
    z = complex(1.25, -3.5)
    with xp.config(offload="always"):
        ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
        cases = {"a * b": (ga * gb, a, b, a * b), "a[::-1] * b": (ga[::-1] * gb, a[::-1], b, a[::-1] * b),
                 "square(a)": (xp.square(ga), a, a, np.square(a)), "a * z": (ga * z, a, np.full(n, z, dt), a * z)}
        for name, (g, x, y, host) in cases.items():
            got = np.asarray(g)
            if device.name == "cpu":
                want = host                                 # NumPy's own loop, whatever this CPU has
            else:
                want = np.array([complex(_fma(p.real, q.real, -rdt(rdt(p.imag) * rdt(q.imag)), once, rdt),
                                         _fma(p.real, q.imag, rdt(rdt(p.imag) * rdt(q.real)), once, rdt))
                                 for p, q in zip(x, y)], dt)
            bad = np.flatnonzero(got != want)
            assert bad.size == 0, (name, once, [(x[i], y[i], got[i], want[i]) for i in bad[:3]])


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_minus_its_own_real_part(device: xp.Device, dt: str) -> None:
    """``z - z.real`` where the real part is the same value as ``z``'s (after ``z[...] = nan``, a broadcast
    constant): NaN in the real part as NumPy's ``(nan - nan) + 0j``; the real operand, cast to complex, is kept
    from the compiler, which folded ``re(z) - re(z)`` to 0 (fuzz seed 901312)."""
    parts = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.5]
    h = np.array([complex(a, b) for a in parts for b in parts], dtype=dt)
    with np.errstate(all="ignore"), xp.config(offload="always"):
        for fill in (complex(np.nan, 0.0), complex(np.inf, 1.0), None):
            z, hz = xp.asarray(h, device=device), h.copy()
            if fill is not None:
                z[...] = fill
                hz[...] = fill
            for f in (lambda w: w - w.real, lambda w: w + (-w.real), lambda w: w.real - w):
                got, want = np.asarray(f(z)), f(hz)
                for part in (np.real, np.imag):
                    assert _same(part(got), part(want)).all(), (fill, part(got), part(want))
            a, ha = xp.asarray(h[:1], device=device).reshape(()), h[:1].reshape(()).copy()
            v, hv = a.real, ha.real
            a[...] = complex(np.nan, 0.0)
            ha[...] = complex(np.nan, 0.0)
            a -= v
            ha -= hv
            assert _same(np.asarray(a).real, ha.real).all() and _same(np.asarray(a).imag, ha.imag).all()


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_sums_keep_their_terms(device: xp.Device, dt: str) -> None:
    """Complex sums that add and take away one term, part by part: ``conj(c) + (b - c)`` (its real part is
    ``re(c) + (re(b) - re(c))``, which compilers cancelled to ``re(b)``: -0 for NumPy's 0 at re(c) = 1, re(b)
    = -0; expression fuzz seed 21114), ``(b - c) + c``, ``-c + (c + b)``."""
    parts = [0.0, -0.0, 1.0, -2.0, 0.5, np.inf, -np.inf, np.nan]
    vals = np.array([complex(x, y) for x in parts for y in parts], dtype=dt)
    b, c = (np.array(v, dtype=dt) for v in zip(*itertools.product(vals[::3], repeat=2)))
    fs: list[Callable[..., Any]] = [lambda m, b, c: m.conj(c) + (b - c), lambda m, b, c: (b - c) + c,
                                    lambda m, b, c: -c + (c + b)]
    with np.errstate(all="ignore"), xp.config(offload="always"):
        for f in fs:
            got = np.asarray(f(xp, xp.asarray(b, device=device), xp.asarray(c, device=device)))
            want = f(np, b, c)
            for part in (np.real, np.imag):
                assert _same(part(got), part(want)).all()


_CLASS_VALUES = [0.0, -0.0, 1.0, -2.0, np.inf, -np.inf, np.nan, 1e300]


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64", "complex128"])
def test_class_tests_of_computed_values(device: xp.Device, dt: str) -> None:
    """``isfinite`` / ``isinf`` / ``isnan`` of sums computed in the same kernel, elementwise and in a row
    reduction's epilogue (``where(isfinite(s + a), s + a, c)`` with ``s`` a sum over the row: SciPy's
    ``logsumexp`` shape). The H200's compiler took such a float64 sum for finite and kept inf and NaN (172 of
    scipy.special's tests, fifty-fifth session); the renderer hides the tested operand (render/wgsl.py)."""
    vals = np.array(_CLASS_VALUES, dtype=np.float64)
    if dt.startswith("complex"):
        vals = np.array([complex(x, y) for x in _CLASS_VALUES for y in _CLASS_VALUES[::3]])
    a, b = (np.array(v, dtype=dt) for v in zip(*itertools.product(vals, repeat=2)))
    rows = np.resize(b, (a.size, 3))
    with np.errstate(all="ignore"), xp.config(offload="always"):
        ga, gb, gr = (xp.asarray(v, device=device) for v in (a, b, rows))
        for f in (lambda m, a, b: m.isfinite(a + b), lambda m, a, b: m.isinf(a * b), lambda m, a, b: m.isnan(a - b),
                  lambda m, a, b: m.where(m.isfinite(a + b), a + b, b * 0.5)):
            got, want = np.asarray(f(xp, ga, gb)), f(np, a, b)
            assert (_same(got.real, want.real) & _same(np.imag(got), np.imag(want))).all(), f
        s, hs = xp.sum(gr, axis=1), np.sum(rows, axis=1)
        for g, w in ((xp.where(xp.isfinite(s + ga), s + ga, gb), np.where(np.isfinite(hs + a), hs + a, b)),
                     (xp.isnan(s - ga), np.isnan(hs - a))):
            got = np.asarray(g)
            assert (_same(got.real, w.real) & _same(np.imag(got), np.imag(w))).all()


def test_class_test_operand_hidden_in_the_kernel(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """The WGSL of ``isfinite(a + b)`` tests a hidden copy of the sum (its bits xored with a zero
    parameter in both halves: zero-extended, the exponent stays the sum's, and the H200 folded
    ``where(isfinite(s), s, t)`` to ``s`` for a NaN complex128 ``s``), not the sum the compiler made."""
    prov = wgpu_device.provider
    seen: list[str] = []
    real = prov.pipeline_for

    def spy(source: str, background: bool = False) -> Any:
        seen.append(source)
        return real(source, background)
    monkeypatch.setattr(prov, "pipeline_for", spy)
    a = xp.asarray(np.arange(5.0) + 0.25, device=wgpu_device)
    with xp.config(offload="always"):
        assert np.asarray(xp.isfinite(a + a * 3.0)).all()
    tests = [ln for src in seen for ln in src.splitlines() if "ga_isfinite_f64(v" in ln and "let" in ln]
    assert tests, seen
    for ln in tests:
        v = ln.split("ga_isfinite_f64(")[1].split(")")[0]
        assert any(f"let {v} = bitcast<f64>(bitcast<u64>(" in s and "^ ((u64(prm[" in s and "<< 32u) | u64(prm["
                   in s for s in seen), ln


@pytest.mark.parametrize("dt", ["float32", "float64", "complex128"])
def test_class_tests_of_reductions_and_casts(device: xp.Device, dt: str) -> None:
    """``isfinite`` / ``isnan`` of a row sum fused into the reduction's epilogue, and of a cast: NumPy's
    answers where the sums overflow, cancel infinities or carry NaN."""
    rows = np.array([[1.0, 2.0, 3.0], [1e308, 1e308, 0.0], [np.inf, -np.inf, 1.0], [np.nan, 0.0, 0.0],
                     [np.inf, 1.0, 2.0], [-0.0, 0.0, -0.0]]).astype(dt)
    with np.errstate(all="ignore"), xp.config(offload="always"):
        g = xp.asarray(rows, device=device)
        for f in (lambda m, r: m.isfinite(m.sum(r, axis=1)), lambda m, r: m.isnan(m.sum(r * 2.0, axis=1)),
                  lambda m, r: m.isinf(m.max(m.abs(r), axis=1) * 2.0),
                  lambda m, r: m.isfinite(m.astype(r[:, 0] * 1e10, m.float32 if dt == "float64" else r.dtype))):
            assert (np.asarray(f(xp, g)) == f(np, rows)).all()
