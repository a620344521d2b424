"""Fixes found by running SciPy's and scikit-learn's own array-API suites with gpuarray
(tests/ecosystem/, docs/ecosystem.md): each behaviour checked against NumPy on both devices."""

from __future__ import annotations

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
                                "minimum"])
@pytest.mark.parametrize("k", range(len(_OTHERS)))
def test_bool_array_with_numbers_as_numpy(device: xp.Device, op: str, k: int) -> None:
    """A bool array with a number converts to that number's type, as in NumPy (SciPy's tanhsinh:
    ``negative * xp.pi``)."""
    other = _OTHERS[k]
    if op in ("maximum", "minimum") and isinstance(other, complex):
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
