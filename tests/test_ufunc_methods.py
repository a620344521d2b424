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
    ("maximum", np.zeros(2, np.float32), [0, 1], -1e-50),          # a float64 loop: +0.0, not -0.0
    ("hypot", np.array([3.0, 1e-30], np.float32), [0, 1, 1], 4.0),
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


def _bits_data(dt, shape, seed):
    """Random bools, or integers over ``dt``'s whole range with its minimum and maximum in it."""
    rng = np.random.default_rng(seed)
    if dt is np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    x[0, 0], x[1, 1] = info.min, info.max
    return x


@pytest.mark.parametrize("dt", INTS + [np.bool_])
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_reduce_matches_numpy(device, name, dt):
    x = _bits_data(dt, (5, 7), 1)
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


# ============================================================ ufunc.at as one scatter_reduce (atomics)
SCATTER_UFUNCS = ["maximum", "minimum", "fmax", "fmin", "bitwise_and", "bitwise_or", "bitwise_xor",
                  "logical_and", "logical_or"]
SCATTER_DTYPES = [np.float32, np.float64, np.int8, np.int32, np.int64, np.uint64, np.bool_]


def _values(dt, rng, n):
    """``n`` values of ``dt`` heavy in what orders or ties decide: NaN of both signs, both zeros,
    infinities, the integer extremes."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        pool = np.array([0.0, -0.0, np.nan, -np.nan, 1.5, -1.5, np.inf, -np.inf, 2.0, 5e-324], dt)
        return rng.choice(pool, n)
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    info = np.iinfo(dt)
    v = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    v[: min(n, 3)] = [info.min, info.max, 0][: min(n, 3)]
    return v


def _ufunc_fits(name, dt):
    dt = np.dtype(dt)
    if name.startswith("logical"):
        return dt == np.bool_
    return not (name.startswith("bitwise") and dt.kind == "f")


def _bits_equal(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    w = np.dtype(f"u{want.dtype.itemsize}")
    bad = np.flatnonzero(got.reshape(-1).view(w) != want.reshape(-1).view(w))
    assert bad.size == 0, (bad[:10], got.reshape(-1)[bad[:10]], want.reshape(-1)[bad[:10]])


@pytest.mark.parametrize("dt", SCATTER_DTYPES, ids=lambda d: np.dtype(d).name)
def test_scatter_ufunc_at_bit_for_bit(device, dt):
    """Every scatter ufunc that has a loop of ``dt``: 10^5 indices into 7 positions (NaN payloads
    and signs, zeros of both signs, extremes: NumPy's order decides them; the device's atomics
    land in any order), 3000 into 5000 (mostly distinct), host and device indices, a scalar."""
    rng = np.random.default_rng(7)
    for name in SCATTER_UFUNCS:
        if not _ufunc_fits(name, dt):
            continue
        uf = getattr(np, name)
        for size, n, host_idx in ((7, 100_000, False), (5000, 3000, True)):
            a, b = _values(dt, rng, size), _values(dt, rng, n)
            idx = rng.integers(-size, size, n)
            want = a.copy()
            with np.errstate(all="ignore"):
                uf.at(want, idx, b)
            g = xp.asarray(a, device=device)
            gi = idx if host_idx else xp.asarray(idx, device=device)
            with _strict(device), np.errstate(all="ignore"):
                uf.at(g, gi, xp.asarray(b, device=device))
            _bits_equal(g, want)
        s = _values(dt, rng, 1)[0]
        # a NumPy scalar of dt; a Python int (NumPy's at takes it as an int64 array: uint64 loops in float64)
        for sc in (s, s.item()) if np.dtype(dt).kind == "i" else (s,):
            want = a.copy()
            with np.errstate(all="ignore"):
                uf.at(want, idx[:50], sc)
            g = xp.asarray(a, device=device)
            with _strict(device), np.errstate(all="ignore"):
                uf.at(g, idx[:50], sc)
            _bits_equal(g, want)


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_scatter_ufunc_at_signed_zero_and_nan_orders(device, name):
    """What NumPy's order decides: ``maximum(a, b)`` takes ``b`` on a tie, so the last zero's sign
    stands; ``maximum`` keeps the first NaN (payload and sign), ``fmax`` the base over NaN values."""
    uf = getattr(np, name)
    nan, nnan = np.float32(np.nan), -np.float32(np.nan)
    cases = [
        (np.array([-0.0, 0.0], np.float32), [0, 1], [0.0, -0.0]),
        (np.array([0.0, -0.0, -1.0], np.float32), [0, 0, 0, 1, 2, 2], [-0.0, -0.0, 0.0, 0.0, -0.0, 0.0]),
        (np.array([1.0, nan, nnan], np.float32), [0, 0, 1, 2, 2], [nnan, nan, nnan, nan, 1.0]),
        (np.array([nnan, 2.0], np.float32), [0, 0, 1, 1], [nan, nan, nan, nnan]),
    ]
    for dt in (np.float32, np.float64):
        for a, idx, b in cases:
            a, b = a.astype(dt), np.array(b, np.float32).astype(dt)
            want = a.copy()
            with np.errstate(all="ignore"):
                uf.at(want, idx, b)
            g = xp.asarray(a, device=device)
            with _strict(device), np.errstate(all="ignore"):
                uf.at(g, xp.asarray(np.array(idx), device=device), xp.asarray(b, device=device))
            _bits_equal(g, want)


def test_scatter_ufunc_at_large_2d_and_empty(device):
    """3 * 10^5 float32 / int32 indices into 4096 rows of a 2-D array (each index a row), a narrow
    integer dtype widened, a view, and empty indices."""
    rng = np.random.default_rng(8)
    for dt, name in ((np.float32, "maximum"), (np.int32, "bitwise_xor"), (np.int8, "minimum"),
                     (np.uint64, "bitwise_or")):
        a = _values(dt, rng, 4096 * 2).reshape(4096, 2)
        n = 300_000 if np.dtype(dt).itemsize == 4 else 20_000
        idx = rng.integers(0, 4096, n)
        b = _values(dt, rng, n * 2).reshape(n, 2)
        want = a.copy()
        with np.errstate(all="ignore"):
            getattr(np, name).at(want, idx, b)
        g = xp.asarray(a, device=device)
        with _strict(device), np.errstate(all="ignore"):
            getattr(np, name).at(g, xp.asarray(idx, device=device), xp.asarray(b, device=device))
        _bits_equal(g, want)
    base = np.arange(12, dtype=np.int32).reshape(3, 4)
    want = base.copy()
    np.maximum.at(want[:, 1], [0, 2, 2], [50, 7, 60])
    g = xp.asarray(base, device=device)
    col = g[:, 1]
    with _strict(device):
        np.maximum.at(col, xp.asarray([0, 2, 2], device=device),
                      xp.asarray(np.array([50, 7, 60], np.int32), device=device))
    _bits_equal(g, want)
    for dt in (np.float32, np.int64):
        g = xp.asarray(np.arange(4, dtype=dt), device=device)
        with _strict(device):
            np.minimum.at(g, xp.asarray(np.array([], np.int64), device=device),
                          xp.asarray(np.array([], dt), device=device))
        _bits_equal(g, np.arange(4, dtype=dt))


def test_scatter_ufunc_at_casts_keep_the_generic_path(device):
    """Where NumPy's loop is wider than ``a`` (float32 with a float64 ``b``, int8 with a float scalar,
    an out-of-range Python int) each step is cast: the generic path, as NumPy."""
    a = np.array([1.0, 2.0, 3.0], np.float32)
    for b in (np.array([1.0000001, 2.5, -7.0]), 2.5):
        want = a.copy()
        np.maximum.at(want, [0, 0, 2], b)
        g = xp.asarray(a, device=device)
        with _strict(device):
            np.maximum.at(g, [0, 0, 2], b)
        _bits_equal(g, want)
    ai = np.array([1, -5, 3], np.int8)
    want = ai.copy()
    np.minimum.at(want, [0, 1, 1], 2.7)
    g = xp.asarray(ai, device=device)
    with _strict(device):
        np.minimum.at(g, [0, 1, 1], 2.7)
    _bits_equal(g, want)


def test_maximum_at_float32_no_sort(wgpu_device, monkeypatch):
    """``maximum.at`` of float32 with repeated positions: no sort or argsort dispatch, no count read;
    a warm call is the three scatter passes and reads nothing (the indices' bounds were read back by
    the first call and are remembered for that index array)."""
    from gpuarray.providers import wgpu_kinds

    sorts = []
    for kind in ("sort", "argsort"):
        real = wgpu_kinds.WGPU_KINDS[kind]

        def counted(*args, _real=real, _kind=kind, **kw):
            sorts.append(_kind)
            return _real(*args, **kw)
        monkeypatch.setitem(wgpu_kinds.WGPU_KINDS, kind, counted)
    rng = np.random.default_rng(9)
    idx = xp.asarray(rng.integers(0, 7, 50_000).astype(np.int32), device=wgpu_device)
    b = xp.asarray(rng.standard_normal(50_000).astype(np.float32), device=wgpu_device)
    want = np.full(7, -np.inf, np.float32)
    np.maximum.at(want, np.asarray(idx), np.asarray(b))

    def call():
        g = xp.full(7, -np.inf, dtype=xp.float32, device=wgpu_device)
        np.maximum.at(g, idx, b)
        xp.evaluate(g)
        return g

    with xp.config(fallback="raise"):
        call()
        xp.synchronize(wgpu_device)
        xp.reset_metrics()
        g = call()
        m = xp.metrics()
    _bits_equal(g, want)
    assert sorts == [], sorts
    assert m["host_fallbacks"] == 0 and m["host_kernels"] == 0, m
    assert m["dispatches"] == 3 and m["bytes_downloaded"] == 0, m      # init, atomics, fixup


def test_scatter_reduce_namespace(device):
    """``counting.scatter_reduce`` itself: indices outside ``[0, B)`` dropped (int64 ones past 2**32
    too), ``val`` converted to ``base``'s dtype first, a scalar, the errors."""
    from gpuarray.namespace.counting import scatter_reduce

    base = np.array([3, -4, 0, 9], np.int16)
    idx = np.array([0, -1, 4, 2**32 + 1, 1, 1, 3], np.int64)
    val = np.array([7, 100, 100, 100, -9, 2, 70000], np.int64)       # 70000 wraps to int16 4464
    keep = (idx >= 0) & (idx < 4)
    with _strict(device):
        for op, uf in (("max", np.maximum), ("min", np.minimum), ("xor", np.bitwise_xor), ("add", np.add)):
            want = base.copy()
            uf.at(want, idx[keep], val[keep].astype(np.int16))
            got = scatter_reduce(xp.asarray(base, device=device), xp.asarray(idx, device=device),
                                 xp.asarray(val, device=device), op)
            _bits_equal(got, want)
        got = scatter_reduce(xp.asarray(base, device=device), xp.asarray(idx, device=device), -5, "min")
        _bits_equal(got, np.array([-5, -5, 0, -5], np.int16))           # 2 is never named
    with pytest.raises(ValueError, match="op must be"):
        scatter_reduce(xp.asarray(base, device=device), xp.asarray(idx, device=device), 1, "mul")
    with pytest.raises(TypeError):
        scatter_reduce(xp.asarray(np.ones(3), device=device), xp.asarray(np.array([0]), device=device), 1.0, "and")


FMAX_DATA = np.array([[np.nan, 1.0, np.nan, -0.0, 3.0, np.nan], [np.nan] * 6,
                      [-np.inf, np.nan, 2.0, 0.0, 5.0, np.inf], [4.0, -1.0, np.nan, np.nan, -7.5, 1e-40]])


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int16, np.uint32])
@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_reduce_and_accumulate(device, name, dt):
    """NaN ignored unless every value (of the prefix) is NaN; integers as maximum / minimum."""
    x = FMAX_DATA.astype(dt) if np.dtype(dt).kind == "f" else \
        np.random.default_rng(3).integers(0, 100, (4, 6)).astype(dt)
    uf = getattr(np, name)
    g = xp.asarray(x, device=device)
    with _strict(device), np.errstate(all="ignore"):
        for ax in (0, 1, -1):
            for got, want in ((uf.accumulate(g, axis=ax), uf.accumulate(x, axis=ax)),
                              (uf.reduce(g, axis=ax), uf.reduce(x, axis=ax)),
                              (uf.reduce(g, axis=ax, keepdims=True), uf.reduce(x, axis=ax, keepdims=True))):
                got = np.asarray(got)
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want)        # NaN where NumPy has NaN
        np.testing.assert_array_equal(np.asarray(uf.reduce(g, axis=None)), uf.reduce(x, axis=None))
    with pytest.raises(ValueError, match="no identity"):
        uf.reduce(xp.asarray(np.zeros((0, 3), dt), device=device), axis=0)


def test_logical_xor_accumulate(device):
    x = np.array([[1.0, 0.0, np.nan, -0.0, 2.0], [0.0, 0.0, 3.0, 3.0, 3.0]])
    g = xp.asarray(x, device=device)
    with _strict(device):
        for ax in (0, 1):
            _same(np.logical_xor.accumulate(g, axis=ax), np.logical_xor.accumulate(x, axis=ax))
        b = np.array([True, False, True, True, False])
        _same(np.logical_xor.accumulate(xp.asarray(b, device=device)), np.logical_xor.accumulate(b))


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.bool_])
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_accumulate(device, name, dt):
    x = _bits_data(dt, (5, 9), 4)
    uf = getattr(np, name)
    g = xp.asarray(x, device=device)
    with _strict(device):
        for ax in (0, 1, -1):
            _same(uf.accumulate(g, axis=ax), uf.accumulate(x, axis=ax))
