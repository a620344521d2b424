"""Fixes found by running SciPy's and scikit-learn's own array-API suites with gpuarray
(tests/ecosystem/, docs/ecosystem.md): each behaviour checked against NumPy on both devices."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import gpuarray as xp

from .conftest import assert_same


@pytest.mark.parametrize("args, kw", [
    ((-3, 0, 10), {}),
    ((0, 2, 3), {}),
    ((1, 2, 5), {"endpoint": False}),
    ((0, 3, 4), {"base": 2.0}),
    ((2, -2, 5), {"base": 0.5}),
    ((0, 1, 0), {}),
    ((0, 1, 1), {}),
    ((0, 400, 3), {}),            # 1e400 overflows to inf
    ((-400, 0, 3), {}),           # 1e-400 underflows to 0
    ((0, 1, 70000), {}),          # crosses 65535 workgroups
])
def test_logspace_matches_numpy(device: xp.Device, args: tuple, kw: dict) -> None:
    assert_same(xp.logspace(*args, device=device, **kw), np.logspace(*args, **kw), rtol=1e-13)


def test_logspace_dtypes(device: xp.Device) -> None:
    assert_same(xp.logspace(0, 3, 4, base=2.0, dtype=xp.int32, device=device),
                np.logspace(0, 3, 4, base=2.0, dtype=np.int32))
    assert_same(xp.logspace(-1, 1, 5, dtype=xp.float32, device=device),
                np.logspace(-1, 1, 5, dtype=np.float32), rtol=1e-6)
    assert_same(xp.logspace(xp.asarray(0.0, device=device), 2, 3, device=device), np.logspace(0.0, 2, 3))


def test_logspace_rejects(device: xp.Device) -> None:
    with pytest.raises(TypeError, match="complex start"):
        xp.logspace(1j, 2, 3, device=device)
    with pytest.raises(TypeError, match="must be a scalar"):
        xp.logspace(xp.asarray([0.0, 1.0], device=device), 2, 3, device=device)
    with pytest.raises(TypeError, match="real numeric dtype"):
        xp.logspace(0, 1, 3, dtype=xp.bool, device=device)
    with pytest.raises(ValueError, match="non-negative"):
        xp.logspace(0, 1, -1, device=device)


@pytest.mark.parametrize("name, args", [
    ("chdtrc", ([0.0, 1.0, 2.0, -1.0, 3.0, np.nan], [-1.0, 0.0, 2.0, 1.0, np.inf, 1.0])),
    ("chdtr", ([0.0, 1.0, 2.0, -1.0, 3.0, np.nan], [-1.0, 0.0, 2.0, 1.0, np.inf, 1.0])),
    ("stdtr", ([1, 3, 10, 2**40, -2, 5], [0, -3, 10, 2**40, 1, -(2**62)])),
    ("stdtrit", ([1.0, 3.0, 10.0, -1.0], [0.5, 0.1, 0.99, 0.5])),
    ("betaincc", ([1.0, 2.0, 0.5, -1.0], [2.0, 3.0, 0.5, 1.0], [0.5, 0.0, 1.0, 0.5])),
])
def test_scipy_special_matches_ufunc_out_of_domain(device: xp.Device, name: str, args: tuple) -> None:
    """SciPy's generic versions of these (built on gammaincc/betainc) differ from its ufuncs out of
    domain; gpuarray.special defines them, so scipy.special runs its own ufunc."""
    special = pytest.importorskip("scipy.special")
    np_args = [np.asarray(a) for a in args]
    got = getattr(special, name)(*[xp.asarray(a, device=device) for a in np_args])
    assert isinstance(got, xp.GpuArray) and got.device == device
    assert_same(got, getattr(special, name)(*np_args), rtol=1e-14)


_INF_PAIRS = [complex(-np.inf, 0.7533), complex(np.inf, 0.7533), complex(-np.inf, 0.0), complex(np.inf, -0.0),
              complex(np.inf, np.inf), complex(-np.inf, 3.927), complex(np.inf, 5.4978), -np.inf, np.inf]


def test_scipy_logsumexp_of_infinities(device: xp.Device) -> None:
    """SciPy's own test_gh22601_infinite_elements: ``logsumexp`` of pairs of real and complex infinities equals
    ``log(sum(exp(x)))``. SciPy keeps the direct value where its shifted one is not finite, a
    ``where(isfinite(a + b), ...)`` that gpuarray fuses into the sum's epilogue; on the H200 172 of these
    failed (the compiler took the sum for finite), which the hidden class-test operand answers."""
    special = pytest.importorskip("scipy.special")
    with np.errstate(all="ignore"):
        for x in _INF_PAIRS:
            for y in _INF_PAIRS:
                a = xp.asarray(np.array([x, y], dtype=np.complex128), device=device)
                got, want = np.asarray(special.logsumexp(a)), np.asarray(xp.log(xp.sum(xp.exp(a))))
                assert (got == want) | (np.isnan(got) & np.isnan(want)), (x, y, got, want)


@pytest.mark.parametrize("source, destination", [(10, 0), (0, -3), ((0, 5), (1, 0)), (-11, 0)])
def test_moveaxis_out_of_bounds_message_as_numpy(device: xp.Device, source: object, destination: object) -> None:
    """NumPy prefixes the argument's name ("source: axis 10 is out of bounds ..."); SciPy's tests match it."""
    a = np.zeros((2, 3))
    with pytest.raises(np.exceptions.AxisError) as want:
        np.moveaxis(a, source, destination)
    with pytest.raises(np.exceptions.AxisError) as got:
        xp.moveaxis(xp.asarray(a, device=device), source, destination)
    assert str(got.value) == str(want.value)
    assert isinstance(got.value, ValueError) and isinstance(got.value, IndexError)


def test_moveaxis_still_moves(device: xp.Device) -> None:
    a = np.arange(24.0).reshape(2, 3, 4)
    for s, d in [(0, -1), (-1, 0), ((0, 1), (2, 0)), (np.int64(1), np.int32(2))]:
        assert_same(xp.moveaxis(xp.asarray(a, device=device), s, d), np.moveaxis(a, s, d))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "complex64", "int64", "float64", "bool"])
def test_asarray_of_gpuarrays_keeps_their_dtype(device: xp.Device, dtype: str) -> None:
    """``np.asarray([a, b])`` of 0-d (or n-d) arrays keeps their dtype; SciPy's nsum tests build
    references that way."""
    vals = np.array([1, 0, 3], dtype=dtype)
    items = [xp.asarray(v, device=device) for v in vals]
    assert_same(xp.asarray(items, device=device), np.asarray([np.asarray(v) for v in vals]))
    rows = [xp.asarray(vals, device=device), xp.asarray(vals[::-1].copy(), device=device)]
    assert_same(xp.asarray(rows, device=device), np.asarray([vals, vals[::-1]]))
    # mixed with a NumPy scalar of another dtype: NumPy's promotion
    mixed = [items[0], np.float64(2.5)]
    assert_same(xp.asarray(mixed, device=device), np.asarray([vals[0], np.float64(2.5)]))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool", "complex64"])
@pytest.mark.parametrize("k", [0, 1, -2, 4])
def test_diag_of_vector_matches_numpy(device: xp.Device, dtype: str, k: int) -> None:
    v = np.array([1.5, -0.0, np.inf, np.nan, -2.0]).astype(dtype) if dtype != "bool" else np.array([True, False, True])
    assert_same(xp.diag(xp.asarray(v, device=device), k), np.diag(v, k))


def test_diag_edges(device: xp.Device) -> None:
    for k in (0, 2, -1):
        e = np.zeros(0, dtype=np.int32)
        assert_same(xp.diag(xp.asarray(e, device=device), k), np.diag(e, k))
    m = np.arange(12.0).reshape(3, 4)
    for k in (-4, -1, 0, 2, 5):
        got = xp.diag(xp.asarray(m, device=device), k)
        assert_same(got, np.diag(m, k))
    with pytest.raises(ValueError, match="Input must be 1- or 2-d"):
        xp.diag(xp.asarray(1.0, device=device))
    with pytest.raises(ValueError, match="Input must be 1- or 2-d"):
        xp.diag(xp.zeros((2, 2, 2), device=device))


def test_diag_large(device: xp.Device) -> None:
    """4200^2 outputs: more than 65535 workgroups of 256 along the dispatched dimension."""
    v = (np.arange(4200) % 251).astype(np.uint8) + 1
    got = np.asarray(xp.diag(xp.asarray(v, device=device), -3))
    assert got.shape == (4203, 4203) and got.dtype == np.uint8
    np.testing.assert_array_equal(np.diagonal(got, -3), v)
    assert int(got.sum(dtype=np.int64)) == int(v.sum(dtype=np.int64))


_B = np.array([True, False, True, False])
_OTHERS = [2, 2.5, 2j, -3, np.arange(4, dtype=np.int32), np.arange(4, dtype=np.uint8), np.arange(4, dtype=np.float32),
           np.array([1.0, -0.0, np.inf, np.nan]), np.int32(2), np.float32(0.5)]


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "maximum",
                                "minimum", "less", "less_equal", "greater", "greater_equal"])
@pytest.mark.parametrize("k", range(len(_OTHERS)))
def test_bool_array_with_numbers_as_numpy(device: xp.Device, op: str, k: int) -> None:
    """A bool array with a number converts to that number's type, as in NumPy (SciPy's tanhsinh:
    ``negative * xp.pi``)."""
    other = _OTHERS[k]
    if op in ("maximum", "minimum", "less", "less_equal", "greater", "greater_equal") and isinstance(other, complex):
        with pytest.raises(TypeError):          # gpuarray orders no complex numbers, bool or not
            getattr(xp, op)(xp.asarray(_B, device=device), other)
        return
    with np.errstate(all="ignore"):
        try:
            want = getattr(np, op)(_B, other)
            want_r = getattr(np, op)(other, _B)
        except TypeError:
            with pytest.raises(TypeError):
                getattr(xp, op)(xp.asarray(_B, device=device), other)
            return
    o = xp.asarray(other, device=device) if isinstance(other, np.ndarray) else other
    assert_same(getattr(xp, op)(xp.asarray(_B, device=device), o), np.asarray(want), rtol=1e-15)
    assert_same(getattr(xp, op)(o, xp.asarray(_B, device=device)), np.asarray(want_r), rtol=1e-15)


def test_bool_with_bool_as_numpy(device: xp.Device) -> None:
    """bool + bool is logical or, bool * bool logical and (SciPy: ``(x < 0) + (x > 2)``); bool - bool raises."""
    b, c = _B, np.array([True, True, False, False])
    g, h = xp.asarray(b, device=device), xp.asarray(c, device=device)
    assert_same(g + h, b + c)
    assert_same(g * h, b * c)
    assert_same(g + True, b + True)
    assert_same(False * g, False * b)
    assert_same(xp.add(g, h), np.add(b, c))
    big = np.arange(70000 * 256) % 3 == 0           # crosses 65535 workgroups
    assert_same(xp.asarray(big, device=device) + xp.asarray(~big, device=device), big + ~big)
    assert_same(xp.asarray(big, device=device) * 1.5, big * 1.5)
    with pytest.raises(TypeError, match="boolean subtract"):
        g - h
    with pytest.raises(TypeError, match="boolean subtract"):
        g - True
    with pytest.raises(TypeError):
        -g  # noqa: B018
    with pytest.raises(TypeError):      # NumPy's ``b ** 2`` is int8 (square); not taken
        g ** 2
    for op in ("less", "less_equal", "greater", "greater_equal"):     # False < True, as NumPy's
        assert_same(getattr(xp, op)(g, h), getattr(np, op)(b, c))
        assert_same(getattr(xp, op)(g, True), getattr(np, op)(b, True))
        assert_same(getattr(xp, op)(False, h), getattr(np, op)(False, c))


def test_bool_in_place_as_numpy(device: xp.Device) -> None:
    b = np.array([True, False, True])
    g = xp.asarray([False, False, True], device=device)
    g += xp.asarray(b, device=device)
    assert_same(g, np.array([False, False, True]) + b)
    i = xp.asarray(np.array([1, 2, 3], np.int32), device=device)
    i += xp.asarray(b, device=device)
    assert_same(i, np.array([1, 2, 3], np.int32) + b)
    with pytest.raises(TypeError):          # NumPy: cannot cast int64 to bool in place
        g += 1


@pytest.mark.parametrize("cdt, fdt", [("complex128", "float64"), ("complex64", "float32")])
def test_view_complex_as_parts_as_numpy(device: xp.Device, cdt: str, fdt: str) -> None:
    """``x.view(float)`` of a complex array and back (SciPy's RBFInterpolator): NumPy's values,
    special values kept bit for bit, in a read-only array (a write raises instead of being lost)."""
    if not device.supports(np.dtype(cdt)):
        pytest.skip(f"{device} has no {cdt}")
    h = np.array([[1 + 2j, -0.0 - np.inf * 1j, np.nan + 3j], [np.inf, -5j, 6 - 0.0j]], dtype=cdt)
    g = xp.asarray(h, device=device)
    f = g.view(fdt)
    assert f.device == g.device
    assert_same(f, h.view(fdt))
    assert_same(f.view(cdt), h)
    assert_same(g[1:].view(np.dtype(fdt)), h[1:].view(fdt))            # a view whose last axis is contiguous
    assert_same(xp.asarray(h.view(fdt), device=device)[:, 2:].view(cdt), h.view(fdt)[:, 2:].view(cdt))
    assert_same(g[:, :0].view(fdt), h[:, :0].view(fdt))
    assert not f.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        f[0, 0] = 1.0
    assert_same(g, h)


def test_view_dtype_errors_as_numpy(device: xp.Device) -> None:
    h = np.arange(12.0).reshape(3, 4)
    g = xp.asarray(h, device=device)
    c = xp.asarray(h.view(np.complex128), device=device)
    for got, want in [(lambda: g.T.view(np.complex128), lambda: h.T.view(np.complex128)),
                      (lambda: g[:, :3].view(np.complex128), lambda: h[:, :3].view(np.complex128)),
                      (lambda: g[:, ::2].view(np.complex128), lambda: h[:, ::2].view(np.complex128)),
                      (lambda: c.T.view(np.float64), lambda: h.view(np.complex128).T.view(np.float64)),
                      (lambda: c.real.view(np.complex128), lambda: h.view(np.complex128).real.view(np.complex128)),
                      (lambda: c[0, 0].view(np.float64), lambda: h.view(np.complex128)[0, 0, ...].view(np.float64))]:
        with pytest.raises(ValueError) as exc:
            want()
        with pytest.raises(ValueError, match=exc.value.args[0].replace(".", r"\.")):
            got()
    with pytest.raises(NotImplementedError, match="reinterpreting the bytes of a float64 array"):
        g.view(np.int64)


def test_iterating_a_vector_reads_it_once(device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """``max(x)`` / ``list(x)`` of a 1-D array read it to the host once (SciPy's minimum_phase calls
    Python's ``max`` over 2^19 elements), yielding 0-d arrays on its device, as NumPy's values."""
    h = np.array([3.5, -np.inf, np.nan, -0.0, 7.25, 1e300])
    g = xp.asarray(h, device=device) * 1.0
    reads = []
    host = xp.GpuArray._host
    monkeypatch.setattr(xp.GpuArray, "_host", lambda self: reads.append(self.shape) or host(self))
    items = list(g)
    assert reads == [(6,)]
    assert all(isinstance(v, xp.GpuArray) and v.shape == () and v.device == g.device for v in items)
    assert_same(xp.stack(items), h)
    monkeypatch.undo()
    k = np.array([5, -3, 9, 0], dtype=np.int8)
    gk = xp.asarray(k, device=device)
    assert int(max(gk)) == 9 and int(min(gk)) == -3 and {v.dtype for v in gk} == {np.dtype(np.int8)}
    assert list(xp.asarray(np.zeros(0), device=device)) == []


def test_iterating_sees_writes_made_during_the_loop(device: xp.Device) -> None:
    """NumPy yields each element's value when the loop reaches it: a write during the loop shows."""
    h = np.array([1, 2, 3, 4])
    g = xp.asarray(h, device=device)
    seen_np, seen = [], []
    for v in h:
        seen_np.append(int(v))
        h[2:] = 10
    for v in g:
        seen.append(int(v))
        g[2:] = 10
    assert seen == seen_np == [1, 2, 10, 10]
    rows = [r for r in xp.asarray(np.arange(6).reshape(3, 2), device=device)]   # 2-D: rows are views
    assert rows[1].base is not None


def test_ndimage_output_array_raises(device: xp.Device) -> None:
    """scipy.ndimage cannot fill a GpuArray given as ``output=`` (NumPy gets a host copy): a
    TypeError that says so, not an array silently left as it was; the return value is right."""
    ndimage = pytest.importorskip("scipy.ndimage")
    h = np.arange(20.0).reshape(4, 5)
    x = xp.asarray(h, device=device)
    out = xp.zeros((4, 5), device=device)
    with pytest.raises(TypeError, match="cannot write its result into a GpuArray passed as output="):
        ndimage.sobel(x, output=out)
    with pytest.raises(TypeError, match="output="):
        ndimage.correlate1d(x, xp.asarray([1.0, 2.0, 1.0], device=device), output=out)
    assert_same(out, np.zeros((4, 5)))
    assert_same(xp.asarray(ndimage.sobel(x)), ndimage.sobel(h))
    copy = np.asarray(x)                      # elsewhere np.asarray is a writable host copy, as before
    copy[0, 0] = -1.0
    assert copy.flags.writeable and float(x[0, 0]) == 0.0


def test_missing_numpy_dtypes_say_so() -> None:
    assert xp.float16 == np.float16 and not hasattr(xp, "longdouble")
    with pytest.raises(AttributeError, match="gpuarray has no longdouble dtype.*use float64"):
        xp.longdouble  # noqa: B018 - the attribute access is the test
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'$"):
        xp.no_such_name  # noqa: B018


def test_unsupported_dtype_message(device: xp.Device) -> None:
    """The wording SciPy's tests accept from array libraries ("Unsupported ..."), with what is supported."""
    for bad in ("a duck", np.zeros(2, dtype="datetime64[s]"), ["a", "b"]):
        with pytest.raises(TypeError, match=r"^Unsupported dtype: gpuarray does not support dtype .*; expected one of"):
            xp.asarray(bad, device=device)
    with pytest.raises(TypeError, match=r"^Unsupported dtype: gpuarray does not support dtype datetime64\[s\]"):
        xp.zeros(2, dtype="datetime64[s]", device=device)


def test_zero_d_host_results_are_arrays(device: xp.Device) -> None:
    """A NumPy ufunc of 0-d operands returns a NumPy scalar; the eager host path keeps 0-d arrays."""
    a, b = xp.asarray(2.5, device=device), xp.asarray(-1.0, device=device)
    for got, want in [(a > b, np.asarray(2.5) > np.asarray(-1.0)), (a * b, np.asarray(-2.5)),
                      (xp.asarray(np.int8(100), device=device) + xp.asarray(np.int8(100), device=device),
                       np.asarray(np.int8(100)) + np.asarray(np.int8(100)))]:
        assert got.shape == () and got.device == device
        assert_same(got, np.asarray(want))


def test_laziness_probe_computes_nothing(device: xp.Device) -> None:
    """array-api-compat's ``is_lazy_array`` (and SciPy's vendored copy) asks ``bool(any(x[0]))`` of an unknown
    library and discards the value: a pending GpuArray answers "not lazy" without being evaluated; any other
    ``bool()`` of it still computes its value (NumPy's), and the probe of an evaluated array is unchanged."""
    h = np.random.default_rng(2).uniform(-3, 3, (50, 8))
    x = xp.asarray(h, device=device)
    probes = [pytest.importorskip("array_api_compat").is_lazy_array]
    with contextlib.suppress(ImportError):
        from scipy._lib.array_api_compat import is_lazy_array
        probes.append(is_lazy_array)
    for probe in probes:
        pending = xp.mean(x * 2, axis=1)
        xp.reset_metrics()
        assert probe(pending) is False
        assert xp.metrics()["evaluations"] == 0 and pending._node.data is None
        assert bool(xp.any(pending[0] > 100)) is False and bool(pending[3] < 100) is True
        assert xp.metrics()["evaluations"] > 0
        np.testing.assert_allclose(np.asarray(pending), (h * 2).mean(axis=1), rtol=1e-12)
        assert probe(pending) is False
    assert bool(xp.asarray(np.zeros(()), device=device) * 0 + 1) is True
