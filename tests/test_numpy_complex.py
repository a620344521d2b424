"""NumPy's functions called on complex (and bool) GpuArrays through the NumPy protocols give NumPy's results: on
the device where gpuarray computes them (NumPy's order of complex values too for the ordering ufuncs,
``max``/``min``/``argmax``/``argmin``/``ptp``), on the host (a named fallback) for the other functions that
need that order (``median``, ``unique``, the ``nan`` forms ...). Each case against NumPy on both devices; the
ones found wrong or raising before are marked: ``vdot`` did not conjugate its first argument (a silent wrong
result), ``std``/``var``, ``nanstd``, ``linalg.norm``/``matrix_rank`` raised ``TypeError`` (a cast to the real
result dtype), ``max``/``argmax``/ ``median``/``unique``/``searchsorted`` and the ``nan`` forms raised the
standard's ``TypeError``, and ``max``/ ``min`` of bools too."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp

CDT = ["complex64", "complex128"]


def _c(dt: str) -> np.ndarray:
    rng = np.random.default_rng(3)
    h = (rng.uniform(-3, 3, (6, 5)) + 1j * rng.uniform(-3, 3, (6, 5))).astype(dt)
    h[1, 2] = complex(np.nan, 1)
    h[4, 0] = complex(-0.0, 0.0)
    return h


CASES: dict[str, Any] = {
    "vdot": lambda m, a: m.vdot(a, a[::-1]),
    "vdot 2-D": lambda m, a: m.vdot(a[2:], a[:4]),
    "std": lambda m, a: m.std(a, axis=1, ddof=1),
    "var": lambda m, a: m.var(a),
    "mean": lambda m, a: m.mean(a, axis=0),
    "nanstd": lambda m, a: m.nanstd(a, axis=0),
    "nanvar": lambda m, a: m.nanvar(a),
    "linalg.norm": lambda m, a: m.linalg.norm(a),
    "linalg.norm axis": lambda m, a: m.linalg.norm(a, axis=1),
    "linalg.norm ord": lambda m, a: m.linalg.norm(a[2:], ord=1),
    "matrix_rank": lambda m, a: m.linalg.matrix_rank(a[2:]),
    "max": lambda m, a: m.max(a, axis=1),
    "amin": lambda m, a: m.amin(a),
    "ptp": lambda m, a: m.ptp(a, axis=0),
    "argmax": lambda m, a: m.argmax(a, axis=1),
    "argmin": lambda m, a: m.argmin(a),
    "nanmax": lambda m, a: m.nanmax(a, axis=0),
    "nanargmin": lambda m, a: m.nanargmin(a[2:], axis=1),
    "median": lambda m, a: m.median(a, axis=0),
    "unique": lambda m, a: m.unique(a),
    "searchsorted": lambda m, a: m.searchsorted(m.sort(a.ravel()), a[0]),
    "lstsq": lambda m, a: m.linalg.lstsq(a[2:], a[2:, 0] * (1 - 2j), rcond=None)[0],
    "solve": lambda m, a: m.linalg.solve(a[2:, :4] + 4 * m.eye(4, dtype=a.dtype), a[2:, 4]),
    "intersect1d": lambda m, a: m.intersect1d(a[:3].ravel(), a[2:4].ravel()),
    "setxor1d": lambda m, a: m.setxor1d(a[:3].ravel(), a[2:4].ravel()),
    "union1d": lambda m, a: m.union1d(a[:3].ravel(), a[2:4].ravel()),
}


def _same(got: Any, want: Any, dt: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 2e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
    for part in (np.real, np.imag):
        assert np.allclose(part(got), part(want), rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dt", CDT)
@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_through_numpy(device: xp.Device, dt: str, name: str) -> None:
    h = _c(dt)
    fn = CASES[name]
    with np.errstate(all="ignore"):
        want = fn(np, h)
    with xp.config(fallback="silent"):
        got = fn(np, xp.asarray(h, device=device))
    _same(got, want, dt)


def test_vdot_conjugates_on_the_device(device: xp.Device) -> None:
    a = np.array([1 + 2j, 3 - 1j, -0.5j], np.complex64)
    b = np.array([2 - 1j, 1j, 4 + 0j], np.complex64)
    with xp.config(fallback="raise"):
        got = np.vdot(xp.asarray(a, device=device), xp.asarray(b, device=device))
    _same(got, np.vdot(a, b), "complex64")
    _same(np.vdot(xp.asarray(a, device=device), xp.asarray(a, device=device)), np.vdot(a, a), "complex64")


@pytest.mark.parametrize("fn", [np.max, np.min, np.amax, np.amin], ids=lambda f: f.__name__)
def test_max_min_of_bools(device: xp.Device, fn: Any) -> None:
    """The largest / smallest of bools (``any`` / ``all``), on the device; NumPy's error for an empty one."""
    h = np.array([[True, False, False], [False, False, False]])
    g = xp.asarray(h, device=device)
    with xp.config(fallback="raise"):
        for kw in ({}, {"axis": 0}, {"axis": 1, "keepdims": True}):
            got = np.asarray(fn(g, **kw))
            want = fn(h, **kw)
            assert got.dtype == want.dtype and np.array_equal(got, want)
    with pytest.raises(ValueError), xp.config(fallback="silent"):
        fn(xp.asarray(np.zeros(0, bool), device=device))
    # the namespace's max / min too (SciPy's stats.describe of bools, gh-24847), as NumPy, CuPy and PyTorch
    xfn = xp.max if fn in (np.max, np.amax) else xp.min
    for kw in ({}, {"axis": 0}, {"axis": 1, "keepdims": True}):
        got = np.asarray(xfn(g, **kw))
        want = fn(h, **kw)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    with pytest.raises(ValueError, match="zero-size"):
        xfn(xp.asarray(np.zeros((2, 0), bool), device=device), axis=1)


_ORDER = np.array([1 + 2j, 1 + 3j, 3 + 0j, complex(np.nan, 1), complex(1, np.nan), complex(np.inf, 0),
                   complex(-np.inf, 2), complex(-0.0, 0.0), 0j, complex(0.0, -0.0), 2 - 1j, 1 + 2j])


@pytest.mark.parametrize("dt", CDT)
@pytest.mark.parametrize("fn", [np.less, np.less_equal, np.greater, np.greater_equal, np.maximum, np.minimum,
                                np.fmax, np.fmin], ids=lambda f: f.__name__)
def test_ordering_ufuncs_of_complex_on_the_device(device: xp.Device, dt: str, fn: Any) -> None:
    """NumPy's order of complex values in its ordering ufuncs (the real parts decide only where neither
    imaginary part is NaN; ``maximum``/``minimum`` keep a NaN of either operand, ``fmax``/``fmin`` the
    other one), every pair of special values, with no host fallback; also against a real array and a
    Python scalar. gpuarray's own ``maximum``/``less`` take real arrays only (the Array API)."""
    a, b = np.repeat(_ORDER, len(_ORDER)).astype(dt), np.tile(_ORDER, len(_ORDER)).astype(dt)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    with np.errstate(all="ignore"), xp.config(fallback="raise"):
        for got, want in ((fn(ga, gb), fn(a, b)), (fn(ga, 1.5), fn(a, 1.5)),
                          (fn(xp.asarray(b.real, device=device), ga), fn(b.real, a))):
            got = np.asarray(got)
            assert got.dtype == want.dtype and got.shape == want.shape
            for part in ((lambda v: v,) if want.dtype == bool else (np.real, np.imag)):
                assert np.array_equal(part(got), part(want), equal_nan=True)
                assert np.array_equal(np.signbit(part(got)), np.signbit(part(want)))
    with pytest.raises(TypeError):
        xp.maximum(ga, gb)


@pytest.mark.parametrize("dt", CDT)
@pytest.mark.parametrize("fn", [np.max, np.min, np.ptp, np.maximum.reduce, np.minimum.reduce],
                         ids=["max", "min", "ptp", "maximum.reduce", "minimum.reduce"])
def test_complex_extremes_over_axes_on_the_device(device: xp.Device, dt: str, fn: Any) -> None:
    """The largest / smallest complex values (NumPy's order, the first NaN wins) over one axis, several
    (merged) and all, with ``keepdims``, on the device; ``maximum.reduce`` raised the standard's
    ``TypeError`` before."""
    rng = np.random.default_rng(4)
    h = (rng.integers(-2, 3, (3, 4, 5)) + 1j * rng.integers(-2, 3, (3, 4, 5))).astype(dt)
    h[1, 2, 3] = complex(np.nan, 1)
    h[2, 0, 0] = complex(1, np.nan)
    g = xp.asarray(h, device=device)
    with xp.config(fallback="raise"):
        for axis in (None, 0, 1, 2, (0, 2), (2, 0), (0, 1, 2)):
            for kd in (False, True):
                got, want = np.asarray(fn(g, axis=axis, keepdims=kd)), fn(h, axis=axis, keepdims=kd)
                assert got.dtype == want.dtype and got.shape == want.shape
                assert np.array_equal(got, want, equal_nan=True), (axis, kd)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize(("shape", "axis"), [((5, 3), 0), ((5, 3), 1), ((4, 7, 2), 1), ((64, 4), 0), ((3, 65), 1),
                                             ((6,), None)])
def test_prod_multiplies_in_numpy_order(device: xp.Device, dt: str, shape: tuple[int, ...], axis: Any) -> None:
    """``np.prod`` / ``xp.prod`` of complex arrays along one axis of up to ``IN_ORDER_PROD`` elements multiply
    as NumPy does, ``((1 * x_0) * x_1) * ...``: NaN, infinities and signed zeros as NumPy's (the reduce
    kernel's tree regrouped them: 108 of these cases differed on lavapipe; found by the fuzz). Longer axes keep
    the tree (its rounding differs, its special values may)."""
    parts = [0.0, -0.0, 1.0, -2.0, np.inf, -np.inf, np.nan, 0.5]
    vals = np.array([complex(a, b) for a in parts for b in parts])
    rng = np.random.default_rng(sum(shape))
    for _ in range(8):
        h = rng.choice(vals, size=shape).astype(dt)
        with np.errstate(all="ignore"), xp.config(offload="always"):
            for keepdims in (False, True):
                want = np.prod(h, axis=axis, keepdims=keepdims)
                for got in (np.prod(xp.asarray(h, device=device), axis=axis, keepdims=keepdims),
                            xp.prod(xp.asarray(h, device=device), axis=axis, keepdims=keepdims)):
                    g = np.asarray(got)
                    assert g.shape == want.shape and g.dtype == want.dtype
                    for part in (np.real, np.imag):
                        a, b = part(g), part(want)
                        assert (((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))).all()


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize(("shape", "axis"), [((40,), None), ((6, 33), 1), ((6, 33), -1), ((2, 3, 64), 2)])
def test_prod_along_the_last_axis_rounds_as_numpy(device: xp.Device, dt: str, shape: tuple[int, ...],
                                                  axis: Any) -> None:
    """Complex ``prod`` along the last axis equals NumPy's bit for bit on random values: NumPy's reduction loop
    there rounds each part's two products apart (``re = ar*br - ai*bi``), where its ``*`` uses one fused
    multiply-add on most CPUs (``multiply_rounded``: both devices, whatever the adapter's fma; before, 1-ULP
    differences on the cpu device and where the adapter contracts)."""
    rng = np.random.default_rng(len(shape) * 100 + shape[-1])
    h = (rng.standard_normal(shape) * 3 + 1j * rng.standard_normal(shape)).astype(dt)
    want = np.prod(h, axis=axis)
    with xp.config(offload="always"):
        got = np.asarray(xp.prod(xp.asarray(h, device=device), axis=axis))
    assert got.dtype == want.dtype and np.array_equal(got, want), int((got != want).sum())
