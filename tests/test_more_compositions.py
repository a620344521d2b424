"""ufunc ``reduceat``, ``unique(axis=)``, ``place``, cyclic ``putmask``, ``trim_zeros`` and
``numpy.random.shuffle`` / ``permutation`` as compositions of device operations
(``_interop/adapters/segmented.py`` and ``inplace_more.py``), against NumPy on both providers."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.interop.adapters.inplace_more import permutation_array, shuffle_array

from .conftest import assert_same

RNG = np.random.default_rng(1234)


def _g(a: np.ndarray, device: xp.Device) -> xp.GpuArray:
    return xp.asarray(a, device=device)


# ---------------------------------------------------------------- reduceat

_INDICES = [[0, 3, 5], [5, 2, 8, 8, 1], [0], [9], [4, 4, 4], list(range(10)), [9, 0], [0, 9, 1]]


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "logical_and", "logical_or"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int8", "bool"])
def test_reduceat_matches_numpy(device, name, dtype):
    uf = getattr(np, name)
    a = (RNG.integers(-3, 4, 10) if dtype != "bool" else RNG.integers(0, 2, 10)).astype(dtype)
    if dtype.startswith("float"):
        a[2] = np.nan if name in ("maximum", "minimum") else a[2]
        a[6] = -0.0
    g = _g(a, device)
    with xp.config(fallback="raise"):
        for idx in _INDICES:
            assert_same(uf.reduceat(g, idx), uf.reduceat(a, idx), rtol=1e-6)


@pytest.mark.parametrize("n", [3000, 70000])
def test_reduceat_long_segments(device, n):
    a = RNG.standard_normal(n)
    m = (1 + RNG.standard_normal(n) * 1e-3).astype(np.float32)
    idx = np.array([0, 10, n // 2, 7, n - 1, 1])
    g, gm = _g(a, device), _g(m, device)
    with xp.config(fallback="raise"):
        assert_same(np.add.reduceat(g, idx), np.add.reduceat(a, idx), rtol=1e-9, atol=1e-9)
        assert_same(np.maximum.reduceat(g, idx), np.maximum.reduceat(a, idx))
        assert_same(np.multiply.reduceat(gm, idx), np.multiply.reduceat(m, idx), rtol=2e-4)
        ints = np.arange(n, dtype=np.int64)
        assert_same(np.add.reduceat(_g(ints, device), idx), np.add.reduceat(ints, idx))


def test_reduceat_axes_dtype_out(device):
    a = RNG.standard_normal((4, 7, 3))
    g = _g(a, device)
    with xp.config(fallback="raise"):
        for axis in (0, 1, -1, 2):
            idx = [0, 2, 1] if a.shape[axis] > 2 else [0, 1]
            assert_same(np.add.reduceat(g, idx, axis=axis), np.add.reduceat(a, idx, axis=axis), rtol=1e-12)
        assert_same(np.add.reduceat(g, [0, 5], axis=1, dtype=np.float32),
                    np.add.reduceat(a, [0, 5], axis=1, dtype=np.float32), rtol=1e-6, atol=1e-6)
        i8 = np.full((2, 50), 100, np.int8)
        assert_same(np.add.reduceat(_g(i8, device), [0, 3], axis=1), np.add.reduceat(i8, [0, 3], axis=1))
        b = np.array([True, True, False, True])
        assert_same(np.add.reduceat(_g(b, device), [0, 2]), np.add.reduceat(b, [0, 2]))   # int64 counts
        out = xp.zeros((4, 2, 3), device=device)
        r = np.add.reduceat(g, [0, 4], axis=1, out=out)
        assert r is out
        assert_same(out, np.add.reduceat(a, [0, 4], axis=1), rtol=1e-12)
        gi = _g(np.array([0, 3]), device)
        assert_same(np.add.reduceat(g, gi, axis=1), np.add.reduceat(a, [0, 3], axis=1), rtol=1e-12)


def test_reduceat_empty_and_errors(device):
    a = np.arange(10.0)
    g = _g(a, device)
    with xp.config(fallback="raise"):
        assert_same(np.add.reduceat(g, []), np.add.reduceat(a, []))
        e = np.zeros((0, 3))
        assert_same(np.add.reduceat(_g(e, device), [], axis=0), np.add.reduceat(e, [], axis=0))
        for bad in ([0, 10], [-1, 3], [0, 3, 12, 20]):
            with pytest.raises(IndexError) as got:
                np.add.reduceat(g, bad)
            with pytest.raises(IndexError) as want:
                np.add.reduceat(a, bad)
            assert str(got.value) == str(want.value)
        with pytest.raises(IndexError, match=r"index 0 out-of-bounds in add.reduceat \[0, 0\)"):
            np.add.reduceat(_g(np.zeros(0), device), [0])
        with pytest.raises(TypeError, match="rule 'safe'"):
            np.add.reduceat(g, np.array([0.0, 3.0]))
        with pytest.raises(TypeError, match="cannot reduceat on a scalar"):
            np.add.reduceat(_g(np.array(3.0), device), [0])
        with pytest.raises(np.exceptions.AxisError):
            np.add.reduceat(_g(np.ones((3, 4)), device), [0, 2], axis=2)
        with pytest.raises(ValueError):
            np.add.reduceat(_g(np.ones((3, 4)), device), [[0, 2]])
        with pytest.raises(ValueError, match="reduceat does not allow multiple axes"):
            np.add.reduceat(_g(np.ones((3, 4)), device), [0, 2], axis=None)
    # ufuncs without a device reduceat (not associative) still give NumPy's answer on the host
    with xp.config(fallback="silent"):
        assert_same(np.subtract.reduceat(g, [0, 3]), np.subtract.reduceat(a, [0, 3]))


# ---------------------------------------------------------------- unique along an axis

def _check_unique(g, a, **kw):
    got, want = np.unique(g, **kw), np.unique(a, **kw)
    if not isinstance(want, tuple):
        got, want = (got,), (want,)
    assert len(got) == len(want)
    for x, y in zip(got, want):
        assert isinstance(x, xp.GpuArray)
        assert_same(x, y, check_signed_zero=False)


def test_unique_axis_ints_with_ties(device):
    a = RNG.integers(0, 3, (30, 4)).astype(np.int32)
    g = _g(a, device)
    with xp.config(fallback="raise"):
        for axis in (0, 1, -2):
            _check_unique(g, a, axis=axis)
            _check_unique(g, a, axis=axis, return_index=True, return_inverse=True, return_counts=True)
        b = RNG.integers(0, 2, (3, 5, 4)).astype(bool)
        _check_unique(_g(b, device), b, axis=1, return_index=True, return_inverse=True, return_counts=True)
        one = np.array([[5, 1, 5]])
        _check_unique(_g(one, device), one, axis=0, return_counts=True)


def test_unique_axis_nan_and_signed_zero(device):
    a = np.array([[1., np.nan], [1., np.nan], [0, 1], [-0., 1], [np.nan, 0], [0, 1], [-np.inf, 2]])
    g = _g(a, device)
    with xp.config(fallback="raise"):
        _check_unique(g, a, axis=0, return_index=True, return_inverse=True, return_counts=True)
        _check_unique(g.T, a.T, axis=1, return_counts=True)
        f = RNG.integers(0, 2, (40, 3)).astype(np.float32)
        _check_unique(_g(f, device), f, axis=0, return_inverse=True)


def test_unique_axis_1d_empty_and_errors(device):
    a = np.array([2.0, np.nan, 1.0, np.nan, 2.0])
    g = _g(a, device)
    with xp.config(fallback="raise"):
        _check_unique(g, a, axis=0, return_counts=True)               # 1-D: NumPy's equal_nan path
        _check_unique(g, a, axis=None, return_inverse=True)
        with pytest.raises(np.exceptions.AxisError):
            np.unique(_g(np.ones((2, 2)), device), axis=2)
        with pytest.raises(np.exceptions.AxisError):
            np.unique(g, axis=1)
    e = np.zeros((0, 3))
    with xp.config(fallback="raise"):                                 # no data: not a counted fallback
        _check_unique(_g(e, device), e, axis=0)


# ---------------------------------------------------------------- place and putmask

def test_place(device):
    a = np.arange(12.0).reshape(3, 4)
    cases = [(a > 4, [9.0, 8.0]), (a > 100, [1.0]), (a % 2 == 0, [7.0]), (np.ones(12), [1.0, 2.0, 3.0]),
             ((a > 2).reshape(2, 6), np.array([5, 6]))]
    with xp.config(fallback="raise"):
        for mask, vals in cases:
            g, want = _g(a, device), a.copy()
            assert np.place(g, _g(np.asarray(mask), device), vals) is None
            np.place(want, mask, vals)
            assert_same(g, want)
        gi, wi = _g(np.arange(6), device), np.arange(6)
        np.place(gi, gi > 2, [1.7, -2.5])
        np.place(wi, wi > 2, [1.7, -2.5])
        assert_same(gi, wi)
        g = _g(a, device)
        view = g[1]
        np.place(g, a > 5, _g(np.array([-1.0, -2.0, -3.0]), device))
        want = a.copy()
        np.place(want, a > 5, [-1.0, -2.0, -3.0])
        assert_same(g, want)
        assert_same(view, want[1])
        g = _g(a, device)
        np.place(g, a > 100, [])                                       # nothing to insert: no error
        assert_same(g, a)
        with pytest.raises(ValueError, match="Cannot insert from an empty array!"):
            np.place(g, a > 2, [])
        with pytest.raises(ValueError, match="place: mask and data must be the same size"):
            np.place(g, [True, False], [1.0])
        with pytest.raises(OverflowError):
            np.place(_g(np.arange(6, dtype=np.int8), device), np.ones(6, bool), [300])
        with pytest.raises(TypeError, match="rule 'safe'"):
            np.place(_g(np.arange(6, dtype=np.int8), device), np.ones(6, bool), np.array([3, 4]))
        with pytest.raises(TypeError, match="rule 'safe'"):
            np.place(_g(np.arange(6.0), device), np.ones(6, bool), _g(np.array([1 + 1j]), device))
        e = _g(np.zeros(0), device)
        np.place(e, np.zeros(0, bool), [1.0])
        assert e.shape == (0,)


def test_putmask_cyclic(device):
    a = np.arange(12).reshape(3, 4)
    with xp.config(fallback="raise"):
        for vals in ([10, 20], [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130], np.array([1, 2, 3]),
                     [1.5, -2.5, 3.5]):
            g, want = _g(a, device), a.copy()
            np.putmask(g, _g(a % 3 == 1, device), vals)
            np.putmask(want, a % 3 == 1, vals)
            assert_same(g, want)
        g = _g(a, device)
        np.putmask(g, a > 2, [])                                      # NumPy: nothing written
        assert_same(g, a)
        with pytest.raises(TypeError, match="rule 'safe'"):
            np.putmask(g, a > 2, np.array([1.5, 2.5]))
        g, want = _g(a, device), a.copy()
        np.putmask(g, a > 2, 5)                                       # the indexing adapter's sizes still work
        np.putmask(want, a > 2, 5)
        assert_same(g, want)


# ---------------------------------------------------------------- trim_zeros

def test_trim_zeros(device):
    cases = [np.array([0, 0, 3, 0, 1, 0]), np.array([0, 1, 0.0, np.nan, -0.0]), np.zeros(4), np.array([5, 0]),
             np.zeros(0), np.array([[0, 0, 2, 3, 0, 0], [0, 1, 0, 3, 0, 0], [0, 0, 0, 0, 0, 0]]),
             np.zeros((2, 3)), np.array([False, True, False])]
    with xp.config(fallback="raise"):
        for a in cases:
            g = _g(a, device)
            for trim in ("fb", "f", "b", "BF"):
                assert_same(np.trim_zeros(g, trim), np.trim_zeros(a, trim))
            if a.ndim == 2:
                for axis in (0, 1, -1, (0, 1)):
                    assert_same(np.trim_zeros(g, axis=axis), np.trim_zeros(a, axis=axis))
        s = _g(np.array(5.0), device)
        assert_same(np.trim_zeros(s), np.trim_zeros(np.array(5.0)))
        with pytest.raises(ValueError, match="unexpected character"):
            np.trim_zeros(s, trim="x")
        g = _g(np.array([0.0, 1.0, 2.0, 0.0]), device)
        t = np.trim_zeros(g)
        t += 10                                                        # a view, as NumPy's
        assert g.tolist() == [0.0, 11.0, 12.0, 0.0]


# ---------------------------------------------------------------- numpy.random

def test_shuffle_global_state_matches_numpy(device):
    for shape in ((10,), (7, 3), (5, 2, 2), (1,), (0,), (3, 0)):
        a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        g = _g(a, device)
        with xp.config(fallback="raise"), warnings.catch_warnings():
            warnings.simplefilter("error")                             # no "not a Sequence" warning
            np.random.seed(7)
            np.random.shuffle(g)
            after_g = np.random.rand()
        np.random.seed(7)
        np.random.shuffle(a)
        after_a = np.random.rand()
        assert_same(g, a)
        assert after_g == after_a                                      # the same draws were taken


def test_shuffle_rows_intact_and_a_permutation(device):
    a = np.arange(200).reshape(100, 2)
    g = _g(a, device)
    view = g[3]
    np.random.shuffle(g)
    h = np.asarray(g)
    assert sorted(map(tuple, h.tolist())) == sorted(map(tuple, a.tolist()))
    assert (h[:, 1] == h[:, 0] + 1).all()                             # rows kept whole
    assert_same(view, h[3])                                            # views see the write


def test_permutation(device):
    a = RNG.standard_normal((6, 3))
    g = _g(a, device)
    with xp.config(fallback="raise"):
        np.random.seed(3)
        r = np.random.permutation(g)
        np.random.seed(3)
        assert isinstance(r, xp.GpuArray)
        assert_same(r, np.random.permutation(a))
        assert_same(g, a)                                              # a copy: x unchanged
        with pytest.raises(IndexError, match="x must be an integer or at least 1-dimensional"):
            np.random.permutation(_g(np.array(1.0), device))
        with pytest.raises(TypeError, match="len"):
            np.random.shuffle(_g(np.array(1.0), device))
    for shape in ((0,), (3, 0), (4,)):
        e = np.zeros(shape)
        np.random.seed(5)
        r = np.random.permutation(_g(e, device))
        after_g = np.random.rand()
        np.random.seed(5)
        assert_same(r, np.random.permutation(e))
        assert after_g == np.random.rand()
    assert isinstance(np.random.permutation(5), np.ndarray)           # other arguments: NumPy's own
    x = np.arange(5)
    np.random.shuffle(x)
    assert sorted(x.tolist()) == list(range(5))


def test_seeded_generator_reproduces_numpy(device):
    a = np.arange(24.0).reshape(8, 3)
    for make in (lambda: np.random.default_rng(11), lambda: np.random.RandomState(11)):
        g = _g(a, device)
        shuffle_array(g, make())
        want = a.copy()
        make().shuffle(want)
        assert_same(g, want)
        assert_same(permutation_array(_g(a, device), make()), make().permutation(a))


UNWRAP = [(np.cumsum(np.random.default_rng(2).uniform(-3, 3, 200)), {}),
          (np.random.default_rng(3).uniform(-10, 10, (4, 30)), {"axis": 0}),
          (np.random.default_rng(4).uniform(-10, 10, (4, 30)).astype(np.float32), {"discont": 4.0}),
          (np.array([0, 1, 2, -1, 0, 4, 5, 1, 2]), {"period": 6}), (np.array([2, 3, 4, 5, 2, 3, 4, 5]), {"period": 4}),
          (np.array([0, 3, 6, 1]), {"period": 5}), (np.array([0.0, 5.0, -5.0, np.pi, np.nan, 1.0]), {"period": 5.0}),
          (np.array([1.0]), {}), (np.zeros((3, 0)), {}), (np.zeros((0, 3)), {"axis": 0})]


@pytest.mark.parametrize("a, kw", UNWRAP, ids=[f"{a.dtype}{a.shape}{kw}" for a, kw in UNWRAP])
def test_unwrap_matches_numpy(device, a, kw):
    """``numpy.unwrap`` (wrapped phases, integer periods with their ambiguous boundary, NaN, empty and
    one-element axes) on the device, in NumPy's dtype."""
    if a.ndim == 1 and a.dtype == np.float64 and not kw:
        a = np.angle(np.exp(1j * a))
    with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"):
        got = np.unwrap(_g(a, device), **kw)
    assert_same(got, np.unwrap(a, **kw), rtol=1e-6, atol=1e-5)


def test_unwrap_errors(device):
    with pytest.raises(ValueError, match="at least one dimensional"):
        np.unwrap(_g(np.array(1.0), device))


_PW = np.array([-3.0, -1.0, 0.0, -0.0, 0.5, 2.0, np.inf, np.nan, -np.inf])
PIECEWISE = [
    lambda a: np.piecewise(a, [a < 0, a >= 0], [-1, 1]),
    lambda a: np.piecewise(a, [a < 0, a > 1], [lambda v: -v, lambda v: v * 2, 7.0]),      # an "otherwise" value
    lambda a: np.piecewise(a, [a < 0], [lambda v: v - v.max()]),                          # sees x[cond] only
    lambda a: np.piecewise(a, [a < 0, a < 1], [lambda v, k: v * k, lambda v, k: v + k], 3),  # later wins
    lambda a: np.piecewise(a, [a > 100], [lambda v: v, 5]),                                # an empty selection
    lambda a: np.piecewise(a, (a > 0,), [lambda v: v * 2.5, lambda v: v - 1]),            # into int64
]


@pytest.mark.parametrize("k", range(len(PIECEWISE)))
def test_piecewise_matches_numpy(device, k):
    x = _PW if k != 5 else np.array([-3, 0, 2, 7, -1])
    with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"), np.errstate(invalid="ignore"):
        got = PIECEWISE[k](_g(x, device))
    with np.errstate(invalid="ignore"):
        assert_same(got, PIECEWISE[k](x))


def test_piecewise_errors(device):
    g = _g(_PW, device)
    with pytest.raises(ValueError, match="with 2 condition\\(s\\), either 2 or 3 functions are expected"):
        np.piecewise(g, [g < 0, g > 0], [1])


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_matches_numpy(device, mode):
    rng = np.random.default_rng(6)
    a = rng.integers(0, 3, (4, 5)) if mode == "raise" else rng.integers(-7, 9, (4, 5)).astype(np.int32)
    ch = [rng.standard_normal((4, 5)), np.float32(2.5), rng.standard_normal(5).astype(np.float32)]
    with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"):
        got = np.choose(_g(a, device), [_g(c, device) if isinstance(c, np.ndarray) else c for c in ch], mode=mode)
        assert_same(got, np.choose(a, ch, mode=mode))
        rows = np.arange(15).reshape(3, 5)                 # choices as one array: its first axis
        assert_same(np.choose(_g(a[0], device), _g(rows, device), mode=mode), np.choose(a[0], rows, mode=mode))
    if mode == "raise":
        with pytest.raises(ValueError, match="invalid entry in choice array"):
            np.choose(_g(a * 2, device), [_g(c, device) if isinstance(c, np.ndarray) else c for c in ch])


@pytest.mark.parametrize("kw", [{}, {"order": "F"}, {"mode": "wrap"}, {"mode": ("clip", "wrap")}], ids=str)
def test_ravel_multi_index_matches_numpy(device, kw):
    rng = np.random.default_rng(7)
    i, j = rng.integers(0, 3, 10), rng.integers(0, 4, 10).astype(np.int32)
    if "mode" in kw:
        i, j = i * 3 - 5, j * 2 - 3
    with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"):
        assert_same(np.ravel_multi_index((_g(i, device), _g(j, device)), (3, 4), **kw),
                    np.ravel_multi_index((i, j), (3, 4), **kw))


def test_ravel_multi_index_errors(device):
    i = _g(np.array([0, 3]), device)
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        np.ravel_multi_index((i, i), (3, 4))
    with pytest.raises(ValueError, match="sequence of length 2"):
        np.ravel_multi_index((i,), (3, 4))
    with pytest.raises(TypeError, match="only int indices"):
        np.ravel_multi_index((i, _g(np.array([0.5, 1.0]), device)), (3, 4))


_A2 = np.arange(12.0).reshape(3, 4)
_A1 = np.arange(6)
INSERT = [(_A1, 2, 99, {}), (_A1, [1, 3], [7, 8], {}), (_A1, [3, 1], [7, 8], {}), (_A1, -1, [5, 6, 7], {}),
          (_A1, 6, 1, {}), (_A1, slice(1, 4), 0, {}), (_A1, 2, 2.7, {}), (_A1, [2, 2, 0], [1, 2, 3], {}),
          (_A2, 1, 5, {"axis": 0}), (_A2, 1, [1, 2, 3], {"axis": 1}), (_A2, [1], [[1], [2], [3]], {"axis": 1}),
          (_A2, [0, 2, 2], -1, {"axis": 1}), (_A2, 1, [[9, 8, 7, 6]], {"axis": 0}), (_A2, 5, 0, {}),
          (_A2, [2, 0], [[1, 2], [3, 4], [5, 6]], {"axis": -1}), (np.zeros((0, 3)), 0, 1, {"axis": 0})]


@pytest.mark.parametrize("k", range(len(INSERT)))
def test_insert_matches_numpy(device, k):
    """``numpy.insert``: scalar, sequence (unsorted, repeated) and slice positions, values broadcast
    and cast into the array's dtype, along an axis or flattened."""
    arr, obj, val, kw = INSERT[k]
    with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"):
        assert_same(np.insert(_g(arr, device), obj, val, **kw), np.insert(arr, obj, val, **kw))


def test_insert_device_positions_and_errors(device):
    g = _g(_A1, device)
    assert_same(np.insert(g, _g(np.array([0, 6]), device), _g(np.array([-1, -2]), device)),
                np.insert(_A1, [0, 6], [-1, -2]))
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 6"):
        np.insert(g, 9, 1)
    with pytest.raises(ValueError):
        np.insert(_g(_A2, device), [0, 1], [[1, 2, 3]], axis=1)


def test_setxor1d_and_sort_complex_match_numpy(device):
    rng = np.random.default_rng(8)
    a, b = rng.integers(0, 10, 20), rng.integers(5, 15, 12).astype(np.int32)
    fa, fb = np.array([1.0, np.nan, 2.0, -0.0, 3.0]), np.array([2.0, 0.0, np.nan, 5.0])
    c = np.array([1 + 2j, 1 - 1j, np.nan + 0j, 1j, 1 + np.nan * 1j, -1 + 5j, 1 - 1j, np.nan * (1 + 1j)], np.complex64)
    with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"):
        for x, y, kw in ((a, b, {}), (np.unique(a), np.unique(b), {"assume_unique": True}), (fa, fb, {}),
                         (a[:0], b[:0], {}), (a.reshape(4, 5), b, {})):
            assert_same(np.setxor1d(_g(x, device), _g(y, device), **kw), np.setxor1d(x, y, **kw))
        for x in (c, c.astype(np.complex128), rng.standard_normal((3, 4)).astype(np.float32), a.astype(np.int16),
                  np.array([True, False])):
            assert_same(np.sort_complex(_g(x, device)), np.sort_complex(x))


_R = np.random.default_rng(11)
BIN_EDGES = [(_R.standard_normal(500).astype(np.float32), {}), (_R.standard_normal(500), {"bins": 7}),
             (_R.standard_normal(50).astype(np.float32), {"bins": 5, "range": (-1, 1)}),
             (_R.integers(-5, 9, 300).astype(np.int16), {"bins": 4}), (_R.integers(0, 200, 50).astype(np.uint8), {}),
             (np.zeros(0, np.float32), {}), (np.full(10, 3.0), {"bins": 3}),
             (_R.standard_normal(20), {"bins": [-1, 0, 0.5, 2]}), (_R.integers(-5, 9, (10, 30)), {"bins": 6})]


@pytest.mark.parametrize("k", range(len(BIN_EDGES)))
def test_histogram_bin_edges_matches_numpy(device, k):
    a, kw = BIN_EDGES[k]
    with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"):
        assert_same(np.histogram_bin_edges(_g(a, device), **kw), np.histogram_bin_edges(a, **kw))


def test_histogram_bin_edges_errors(device):
    g = _g(_R.standard_normal(20), device)
    for kw, match in (({"bins": 0}, "must be positive"), ({"bins": [3, 1]}, "increase monotonically"),
                      ({"bins": 2, "range": (2, 1)}, "max must be larger than min"),
                      ({"bins": _g(np.array([2.0, 1.0]), device)}, "increase monotonically")):
        with pytest.raises(ValueError, match=match):
            np.histogram_bin_edges(g, **kw)


_BITS = np.random.default_rng(12).integers(0, 2, (3, 13))
_BYTES = np.random.default_rng(13).integers(0, 256, (4, 3)).astype(np.uint8)
PACK = [(_BITS, {}), (_BITS, {"axis": 1}), (_BITS, {"axis": 0, "bitorder": "little"}),
        (_BITS.astype(bool), {"axis": -1}), (np.arange(-3, 17), {}), (np.zeros((2, 0), np.int8), {"axis": 1}),
        (np.zeros((2, 0), np.int8), {})]
UNPACK = [{}, {"axis": 0}, {"axis": 1, "bitorder": "little"}, {"axis": 0, "count": -3}, {"axis": 1, "count": 30},
          {"count": 5}, {"axis": 1, "count": 0}, {"count": -96}]


@pytest.mark.parametrize("k", range(len(PACK)))
def test_packbits_matches_numpy(device, k):
    a, kw = PACK[k]
    with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"):
        assert_same(np.packbits(_g(a, device), **kw), np.packbits(a, **kw))


@pytest.mark.parametrize("kw", UNPACK, ids=str)
def test_unpackbits_matches_numpy(device, kw):
    with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"):
        assert_same(np.unpackbits(_g(_BYTES, device), **kw), np.unpackbits(_BYTES, **kw))
        packed = np.packbits(_g(_BITS, device), axis=1)
        assert_same(np.unpackbits(packed, axis=1, count=13), _BITS.astype(np.uint8))


def test_packbits_unpackbits_errors(device):
    with pytest.raises(TypeError, match="integer or boolean"):
        np.packbits(_g(np.ones(3, np.float32), device))
    with pytest.raises(TypeError, match="unsigned byte"):
        np.unpackbits(_g(np.ones(3, np.int8), device))
    with pytest.raises(ValueError, match="'little' or 'big'"):
        np.packbits(_g(_BITS, device), bitorder="middle")
    with pytest.raises(ValueError, match="-count larger than number of elements"):
        np.unpackbits(_g(np.ones(3, np.uint8), device), count=-100)


def test_no_host_fallbacks_on_wgpu(wgpu_device):
    a = RNG.standard_normal((20, 3))
    g = _g(a, wgpu_device)
    (g + 0).tolist()
    with xp.config(offload="always", fallback="raise"):
        xp.reset_metrics()
        np.add.reduceat(g, [0, 5, 2], axis=0).tolist()
        np.maximum.reduceat(g, [0, 2], axis=1).tolist()
        np.unique(_g(np.round(a), wgpu_device), axis=0, return_inverse=True, return_counts=True)[0].tolist()
        h = _g(a, wgpu_device)
        np.place(h, h > 0, [1.0, 2.0])
        np.putmask(h, h < 0, [3.0, 4.0, 5.0])
        np.random.shuffle(h)
        np.random.permutation(h).tolist()
        np.trim_zeros(_g(np.array([0.0, 1.0, 0.0]), wgpu_device)).tolist()
        np.diff(g, axis=0, prepend=0.0, append=g[:1]).tolist()        # already on the device
        np.ediff1d(g, to_begin=[1.0], to_end=2.0).tolist()
        srt = _g(np.array([3.0, 1.0, 2.0]), wgpu_device)
        np.searchsorted(srt, [1.5, 2.5], sorter=_g(np.array([1, 2, 0]), wgpu_device)).tolist()
        h.tolist()
        assert xp.metrics()["host_fallbacks"] == 0


def test_shuffle_1e5_under_a_second(wgpu_device):
    warm = _g(np.arange(100_000, dtype=np.float32), wgpu_device)
    np.random.shuffle(warm)
    warm.tolist()
    g = _g(np.arange(100_000, dtype=np.float32), wgpu_device)
    g.tolist()
    t0 = time.perf_counter()
    np.random.shuffle(g)
    h = np.asarray(g)
    elapsed = time.perf_counter() - t0
    assert elapsed < 1.0, f"{elapsed:.2f} s"
    assert (np.sort(h) == np.arange(100_000)).all()
