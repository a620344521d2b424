"""``ufunc.at`` for every ufunc and the bitwise ``reduce`` methods (interop/adapters/ufunc_methods.py)
against NumPy on both providers: repeated positions in order, per-step casts, NaN, integer wrap, views,
errors that leave the array as it was, and no host fallback on the device."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import gpuarray as xp

I8 = np.iinfo(np.int8)
I64 = np.iinfo(np.int64)


def _strict(device):
    return xp.config(fallback="raise") if device.kind == "wgpu" else contextlib.nullcontext()


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


# (ufunc, a, indices, b): b None for unary ufuncs; repeated positions in most
AT_CASES = [
    ("maximum", np.array([1.0, 5.0, 2.0, -0.0], np.float32), [0, 0, 2, 3, 3], [4.0, 3.0, 1.0, 0.0, -1.0]),
    ("maximum", np.array([1.0, 5.0, 2.0]), [0, 0, 1], [np.nan, 7.0, 1.0]),
    ("minimum", np.array([0, 5, -3], np.int8), [2, 2, 0, 2], np.array([-128, 4, -7, 9], np.int8)),
    ("fmax", np.array([np.nan, 1.0, 2.0]), [0, 0, 1, 1], [np.nan, 3.0, np.nan, 0.5]),
    ("fmin", np.array([np.nan, 1.0, 2.0], np.float32), [0, 1, 1], np.array([5.0, np.nan, -1.0], np.float32)),
    ("multiply", np.array([1, 2], np.int8), [0, 0, 0], np.array([100, 100, 3], np.int8)),   # wraps
    ("multiply", np.array([1.5, 2.0, 3.0]), [0, 0, 2, 0], [1e308, 10.0, 0.5, 1e-308]),   # overflow on the way
    ("subtract", np.array([1.0, 2.0, 3.0], np.float32), [1, 1, 1, 0], np.array([0.1, 0.2, 0.3, 1e-8], np.float32)),
    ("power", np.arange(4.0), [1, 1, 2], [2.0, 3.0, 2.0]),
    ("divide", np.array([1.0, 8.0]), [1, 1, 0], [2.0, 0.0, 3.0]),
    ("bitwise_or", np.array([1, 0, I64.min], np.int64), [0, 0, 2, 1], np.array([6, 8, 1, I64.max], np.int64)),
    ("bitwise_xor", np.array([3, 5], np.uint8), [0, 0, 0, 1], np.array([1, 2, 1, 255], np.uint8)),
    ("logical_xor", np.array([True, False]), [0, 0, 1], [True, True, True]),
    ("add", np.zeros(3, np.int64), [0, 0], 2.5),                    # each step truncated: 2, then 4
    ("add", np.array([1 + 1j, 2j], np.complex64), [1, 1, 0], np.array([1j, -3, 2], np.complex64)),
    ("arctan2", np.array([1.0, -1.0], np.float32), [0, 1, 0], np.array([2.0, -0.0, 0.5], np.float32)),
    ("remainder", np.array([7, -7, 9], np.int32), [0, 1, 1, 2], np.array([3, 4, 3, 0], np.int32)),
    ("negative", np.arange(3.0), [0, 0, 1], None),                  # applied twice at 0
    ("sqrt", np.array([4, 9, 16]), [0, 2, 2], None),                # int: each result cast back
    ("exp", np.array([0.0, -1.0], np.float32), [1, 1, 0], None),
    ("logical_not", np.array([True, False, True]), [0, 1, 1], None),
]


@pytest.mark.parametrize("k", range(len(AT_CASES)), ids=[f"{c[0]}{i}" for i, c in enumerate(AT_CASES)])
def test_ufunc_at_matches_numpy(device, k):
    name, a, idx, b = AT_CASES[k]
    uf = getattr(np, name)
    want = a.copy()
    with np.errstate(all="ignore"):
        uf.at(want, idx, *(() if b is None else (b,)))
    g = xp.asarray(a, device=device)
    gi = xp.asarray(np.array(idx), device=device)
    gb = b if b is None or np.isscalar(b) else xp.asarray(np.asarray(b), device=device)
    with _strict(device), np.errstate(all="ignore"):
        uf.at(g, gi, *(() if gb is None else (gb,)))
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(np.asarray(g), want, rtol=2e-7 if want.dtype.itemsize <= 8 else 1e-15)
        assert np.asarray(g).dtype == want.dtype
    else:
        _same(g, want)


def test_ufunc_at_many_repeats_and_every_path(device):
    """5000 positions drawn from 7: the run-combining scan for ``maximum`` (about 700 a run), the
    rounds' limit for ``subtract`` (the host's loop, counted), integers exact either way."""
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 7, 5000)
    a = rng.integers(-50, 50, 9).astype(np.int32)
    b = rng.integers(-1000, 1000, 5000).astype(np.int32)
    for name in ("maximum", "minimum", "bitwise_and", "multiply"):
        want = a.copy()
        getattr(np, name).at(want, idx, b)
        g = xp.asarray(a, device=device)
        with _strict(device):
            getattr(np, name).at(g, xp.asarray(idx, device=device), xp.asarray(b, device=device))
        _same(g, want)
    want = a.copy()
    np.subtract.at(want, idx, b)
    g = xp.asarray(a, device=device)
    with xp.config(fallback="silent"):
        before = xp.metrics()["host_fallbacks"]
        np.subtract.at(g, idx, b)
        assert xp.metrics()["host_fallbacks"] == before + 1      # 714 occurrences of a position: past ROUNDS
    _same(g, want)


def test_ufunc_at_axes_views_and_scalars(device):
    base = np.arange(12.0).reshape(3, 4)
    want = base.copy()
    np.maximum.at(want, ([2, 0, 2], [1, 3, 1]), [50.0, -1.0, 60.0])        # two index arrays
    g = xp.asarray(base, device=device)
    with _strict(device):
        np.maximum.at(g, (xp.asarray([2, 0, 2], device=device), [1, 3, 1]), [50.0, -1.0, 60.0])
    _same(g, want)
    want = base.copy()
    np.minimum.at(want, [-1, 0], 5.0)                                       # leading axis, scalar b, row each
    g = xp.asarray(base, device=device)
    with _strict(device):
        np.minimum.at(g, [-1, 0], 5.0)
    _same(g, want)
    want = base.copy()
    np.multiply.at(want[1], [0, 0, 3], 2.0)                                 # through a view
    g = xp.asarray(base, device=device)
    row = g[1]
    with _strict(device):
        np.multiply.at(row, [0, 0, 3], 2.0)
    _same(row, want[1])
    _same(g, want)
    want = base.copy()
    np.maximum.at(want, [], np.zeros((0, 4)))                               # nothing to do
    g = xp.asarray(base, device=device)
    with _strict(device):
        np.maximum.at(g, [], np.zeros((0, 4)))
    _same(g, want)


def test_ufunc_at_errors_leave_the_array(device):
    a = np.arange(4.0)
    g = xp.asarray(a, device=device)
    with pytest.raises(IndexError, match="out of bounds"):
        np.maximum.at(g, [1, 4], 1.0)
    with pytest.raises(IndexError):
        np.negative.at(g, [-5])
    with pytest.raises(TypeError):
        np.bitwise_or.at(g, [0], 1)                  # no float loop
    with pytest.raises(ValueError):
        np.maximum.at(g, [0, 1], [1.0, 2.0, 3.0])    # b does not broadcast to a[indices]
    _same(g, a)


INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("dt", INTS + [np.bool_])
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_reduce_matches_numpy(device, name, dt):
    rng = np.random.default_rng(1)
    if dt is np.bool_:
        x = rng.integers(0, 2, (5, 7)).astype(bool)
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, (5, 7), dtype=dt, endpoint=True)
        x[0, 0], x[1, 1] = info.min, info.max
    uf = getattr(np, name)
    g = xp.asarray(x, device=device)
    with _strict(device):
        for kw in ({}, {"axis": 1}, {"axis": None}, {"axis": (0, 1), "keepdims": True}, {"axis": -1, "keepdims": True}):
            _same(uf.reduce(g, **kw), uf.reduce(x, **kw))
        _same(uf.reduce(g[:0], axis=0), uf.reduce(x[:0], axis=0))          # empty: the identity
        _same(uf.reduce(g[0]), uf.reduce(x[0]))


def test_logical_xor_reduce_and_out(device):
    x = np.array([[0.0, 1.5, -2.0], [0.0, 0.0, np.nan]])
    g = xp.asarray(x, device=device)
    with _strict(device):
        _same(np.logical_xor.reduce(g, axis=1), np.logical_xor.reduce(x, axis=1))
        _same(np.logical_xor.reduce(g, axis=None), np.logical_xor.reduce(x, axis=None))
        out = xp.zeros(3, dtype=xp.int32, device=device)
        r = np.bitwise_or.reduce(xp.asarray(np.array([[1, 2, 4], [8, 0, 4]], np.int32), device=device), axis=0, out=out)
    assert r is out
    _same(out, np.array([9, 2, 4], np.int32))
    with pytest.raises(TypeError):
        np.bitwise_or.reduce(g)
