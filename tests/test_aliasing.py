"""Views and aliasing, differentially against NumPy: the same NumPy code runs on NumPy arrays and
on GpuArrays (through NumPy's protocols), and every array it returns, bases and views alike, must
hold NumPy's values afterwards. Writes through views (indexing, in-place operators, ufunc ``out=``,
``copyto``, ``put``, ``place``, ``fill``, ``sort``, parts of complex arrays) change the base and
every other live view, as in NumPy."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp

from .conftest import assert_same

Case = Callable[[Callable[[Any], Any]], Any]
CASES: dict[str, Case] = {}


def case(fn: Case) -> Case:
    CASES[fn.__name__] = fn
    return fn


def _grid(shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


# --------------------------------------------------------------------------- the reported cases
@case
def game_of_life(mk: Any) -> Any:
    rng = np.random.default_rng(1)
    Z = mk(rng.integers(0, 2, (24, 30)).astype(np.int32))
    for _ in range(12):
        N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] + Z[1:-1, 0:-2] + Z[1:-1, 2:]
             + Z[2:, 0:-2] + Z[2:, 1:-1] + Z[2:, 2:])
        birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
        survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
        Z[...] = 0
        Z[1:-1, 1:-1][birth | survive] = 1
    return Z


@case
def jacobi_steps(mk: Any) -> Any:
    T = mk(np.zeros((12, 17), np.float32))
    T[0, :] = 1.0
    T[:, -1] = 2.0
    inner = T[1:-1, 1:-1]
    for _ in range(8):
        inner[...] = 0.25 * (T[:-2, 1:-1] + T[2:, 1:-1] + T[1:-1, :-2] + T[1:-1, 2:])
    return T, inner


@case
def row_inplace(mk: Any) -> Any:
    A = mk(_grid((4, 5)))
    r = A[1]
    r *= 2
    r += 1
    return A, r


@case
def column_slice_assign(mk: Any) -> Any:
    A = mk(_grid((4, 5)))
    c = A[:, 0]
    c[:] = -1
    return A, c


@case
def chained_index_assign(mk: Any) -> Any:
    D = mk(_grid((3, 4), np.int64))
    D[0][1] = 5
    D.T[2, 1] = 7
    D[1:][1][::2] = 9
    return D


@case
def row_swap_with_views(mk: Any) -> Any:
    B = mk(_grid((3, 4)))
    B[0], B[1] = B[1], B[0]          # NumPy: two copies of row 1 (the views see the first write)
    return B


@case
def ufunc_out_views(mk: Any) -> Any:
    y = mk(_grid((10,)))
    np.multiply(y[::2], 10, out=y[::2])
    z = mk(_grid((3, 4)))
    np.add(z[0], 1, out=z[0])
    np.multiply(z[:, 1], -1, out=z[:, 1])   # (NumPy 2.4's float32 negative is wrong in place on a column)
    np.sum(z[:2], axis=0, out=z[2])
    return y, z


@case
def view_sees_later_write(mk: Any) -> Any:
    a = mk(_grid((8,)))
    v = a[2:6]
    t = a.reshape(2, 4).T
    a[3] = -1
    a += 0.5
    return a, v, t


# --------------------------------------------------------------------------- combinations
@case
def view_of_view(mk: Any) -> Any:
    A = mk(_grid((6, 7)))
    v = A[1:, ::2]
    w = v[::-1][1:3]
    w += 100
    v[0, 0] = -5
    return A, v, w


@case
def transposed_and_moved_views(mk: Any) -> Any:
    A = mk(_grid((3, 4, 5)))
    t = A.T
    t[0] = 9                              # A[..., 0]
    s = np.swapaxes(A, 0, 2)[1:3]
    s *= -1
    m = np.moveaxis(A, 0, -1)
    m[2, 3] = 0
    p = np.transpose(A, (1, 0, 2))[::2, :, 1::2]
    p += 1000
    return A, t, s, m, p


@case
def strided_negative_views(mk: Any) -> Any:
    A = mk(_grid((7, 9)))
    A[::-1, 1::2] = 3
    v = A[::-2, ::-3]
    v -= 10
    f = np.flip(A)
    f[0, :2] = 55
    return A, v, f


@case
def reshape_ravel_views(mk: Any) -> Any:
    A = mk(_grid((4, 6)))
    r = A.reshape(-1)
    r[3] = 8
    r2 = A.reshape(2, 3, 4)
    r2[1, :, 0] = 7
    rv = np.ravel(A)
    rv[-1] = -2
    copy = A.T.reshape(-1)              # needs a copy in NumPy: writes do not reach A
    copy[0] = 12345
    flat = A.flatten()                  # always a copy
    flat[1] = 999
    e = A[None, :, None]
    e[0, 1, 0, 2] = 31
    sq = np.squeeze(A[:, None, 1:2])
    sq += 0.25
    return A, r, r2, rv, copy, flat, e, sq


@case
def views_across_evaluation(mk: Any) -> Any:
    A = mk(_grid((5, 6)))
    v = A[1]
    first = np.asarray(v).copy()          # evaluates the view
    A[1, 1] = 77
    w = v[2:]
    float(w.sum())                        # evaluates again
    w[0] = -7
    v2 = A[2:4]
    np.asarray(A)                         # evaluates the base
    v2 *= 3
    return A, v, w, v2, first


@case
def base_reassigned(mk: Any) -> Any:
    A = mk(_grid((4, 5)))
    v = A[0]
    w = v[1:]
    A[...] = 5                            # a write to the base
    w += 1
    A += 1
    old = A
    A = A * 2                             # a new array: the views keep the old base
    v[0] = 100
    return old, A, v, w


@case
def writes_by_numpy_functions(mk: Any) -> Any:
    A = mk(_grid((4, 5)))
    np.copyto(A[1], 5)
    np.copyto(A[:, 4], np.arange(4, dtype=np.float32))
    np.put(A[0], [0, 2], [7, 8])
    np.place(A[:, 1], np.array([True, False, True, False]), [-3])
    np.putmask(A[3], np.array([1, 0, 1, 0, 1], bool), 0.5)
    A[2].fill(3)
    A[3, ::-1].sort()
    np.fill_diagonal(A[1:, 1:], -9)
    return A


@case
def advanced_setitem_on_views(mk: Any) -> Any:
    A = mk(_grid((4, 6)))
    A[1][[0, 2, 5]] = 9
    A[:, 1:][A[:, 1:] > 20] = -1
    A[2, ::2][np.array([True, False, True])] = 4
    return A


@case
def advanced_indexing_copies(mk: Any) -> Any:
    A = mk(_grid((4, 5)))
    f = A[[0, 1]]
    f[0] = 100
    m = A[A > 10]
    m[:] = 0
    g = A[:, [1, 3]]
    g += 1
    return A, f, m, g


@case
def iterate_rows(mk: Any) -> Any:
    A = mk(_grid((3, 4)))
    for row in A:
        row += 1
        row[0] = row[1] * 2
    return A


@case
def split_views(mk: Any) -> Any:
    x = mk(_grid((8, 3)))
    a, b = np.split(x, 2)
    a += 1
    c, d, e = np.array_split(x[:, 0], 3)
    d[:] = -1
    h = np.hsplit(x, [1])[1]
    h[0] = 42
    return x, a, b, c, d, e, h


@case
def atleast_and_expand(mk: Any) -> Any:
    x = mk(_grid((5,)))
    y = np.atleast_2d(x)
    y[0, 1] = 10
    z = np.expand_dims(x, 1)
    z[2, 0] = 20
    return x, y, z


@case
def complex_parts(mk: Any) -> Any:
    c = mk((_grid((2, 3)) + 1j * _grid((2, 3))[::-1]).astype(np.complex64))
    c.real[1] = 5
    im = c.imag
    im *= 2
    c[0].imag[1:] = -1
    c.real = c.real + 0.5
    re = np.real(c)
    c.imag = 3
    r = mk(_grid((4,)))
    rr = r.real                           # a real array's real part: the array itself, as a view
    rr += 1
    return c, im, re, r, rr


@case
def zero_d_and_full_integer_index(mk: Any) -> Any:
    A = mk(_grid((3, 3)))
    s = A[1, 1]                           # NumPy: a scalar, not a view
    s += 100
    e = A[1, 1, ...]                      # a 0-d view
    e += 1000
    B = mk(np.array(2.5, np.float32))
    v = B[...]
    v *= 4
    return A, s, e, B, v


@case
def sort_in_place_of_view(mk: Any) -> Any:
    A = mk(np.array([[3, 1, 2], [9, 7, 8]], np.float32))
    A[1].sort()
    A.T[0].sort()
    return A


@case
def integer_and_bool_bases(mk: Any) -> Any:
    i = mk(np.array([[np.iinfo(np.int32).max, -1, 0], [5, 6, 7]], np.int32))
    i[:, 0] -= 1
    i.T[1] += 2
    b = mk(np.zeros((2, 3), bool))
    b[1][::2] = True
    bb = b.T
    bb[0] = True
    return i, b, bb


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_numpy(device: xp.Device, name: str) -> None:
    fn = CASES[name]
    want = fn(lambda a: np.array(a, copy=True))
    got = fn(lambda a: xp.asarray(np.array(a, copy=True), device=device))
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if isinstance(w, np.generic):     # NumPy returned a scalar where gpuarray has a 0-d array
            w = np.asarray(w)
        assert isinstance(g, (xp.GpuArray, np.ndarray)), f"result {k}: {type(g).__name__}"
        assert_same(g, w)


# --------------------------------------------------------------------------- flags, base, shares_memory
def test_base_flags_and_memory(device: xp.Device) -> None:
    h = _grid((4, 6)).copy()
    g = xp.asarray(h, device=device)
    pairs = [(g, h), (g[1:], h[1:]), (g.T, h.T), (g[:, ::2], h[:, ::2]), (g.reshape(6, 4), h.reshape(6, 4)),
             (g[::-1], h[::-1]), (g[1], h[1]), (g[:, 1], h[:, 1]), (g[None], h[None])]
    for gv, hv in pairs:
        assert gv.flags.c_contiguous == hv.flags.c_contiguous, hv.strides
        assert gv.flags.f_contiguous == hv.flags.f_contiguous, hv.strides
        assert gv.flags.owndata == hv.flags.owndata
        assert gv.flags.writeable == hv.flags.writeable
        assert (gv.base is None) == (hv.base is None)
        if hv.base is not None:
            assert gv.base is g
        nonunit = [i for i, n in enumerate(hv.shape) if n > 1]
        assert [gv.strides[i] for i in nonunit] == [hv.strides[i] for i in nonunit]
    views = {"a": (g[::2], h[::2]), "b": (g[1::2], h[1::2]), "c": (g[:, 0], h[:, 0]), "d": (g.T[1], h.T[1]),
             "e": (g[2:, 3:], h[2:, 3:]), "f": (g, h), "g": (g.reshape(-1)[5:9], h.reshape(-1)[5:9])}
    for x, (gx, hx) in views.items():
        for y, (gy, hy) in views.items():
            assert np.shares_memory(gx, gy) == np.shares_memory(hx, hy), (x, y)
            assert np.may_share_memory(gx, gy) == np.may_share_memory(hx, hy), (x, y)
    other = xp.asarray(h, device=device)
    assert not np.shares_memory(g, other) and not np.may_share_memory(g, other)
    assert not np.shares_memory(g, h)
    c = xp.asarray(np.ones(4, np.complex64), device=device)
    assert not np.shares_memory(c.real, c.imag) and np.shares_memory(c.real, c)
    assert not c.real.flags.c_contiguous and c.real.base is c


def test_read_only_views(device: xp.Device) -> None:
    g = xp.asarray(_grid((3, 4)), device=device)
    b = np.broadcast_to(g[0], (5, 4))
    d = np.diagonal(g)
    w = np.lib.stride_tricks.sliding_window_view(g[0], 2)
    for v in (b, d, w, np.imag(g)):
        assert not v.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            v[0] = 1
        with pytest.raises(ValueError, match="read-only"):
            v += 1
        with pytest.raises(ValueError, match="read-only"):
            np.add(v, 1, out=v)
    assert_same(g, _grid((3, 4)))                 # nothing changed
    g[0, 1] = 50
    g[1, 1] = 60
    assert_same(b, np.broadcast_to(np.array([0, 50, 2, 3], np.float32), (5, 4)))
    assert_same(d, np.array([0, 60, 10], np.float32))
    assert_same(w, np.array([[0, 50], [50, 2], [2, 3]], np.float32))
    same, grown = np.broadcast_arrays(g, g[:1])
    same[0, 0] = -1                               # not broadcast: a writeable view, as in NumPy
    assert float(g[0, 0]) == -1
    with pytest.raises(ValueError, match="read-only"):
        grown[0, 0] = 1


def test_writeable_flag(device: xp.Device) -> None:
    g = xp.asarray(_grid((3, 4)), device=device)
    v = g[1]
    g.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        g[0] = 1
    v[0] = 5                                      # v was taken while g was writeable, as in NumPy
    assert float(g[1, 0]) == 5
    later = g[2]
    assert not later.flags.writeable
    with pytest.raises(ValueError, match="cannot set WRITEABLE flag"):
        later.flags.writeable = True
    g.flags["WRITEABLE"] = True
    g[0, 0] = 9
    assert float(g[0, 0]) == 9
    with pytest.raises(ValueError, match="only WRITEABLE"):
        g.flags["C_CONTIGUOUS"] = False


def test_failed_write_leaves_arrays_intact(device: xp.Device) -> None:
    g = xp.asarray(_grid((3, 4), np.int32), device=device)
    v = g[1]
    with pytest.raises(TypeError):
        v += 1.5                                  # same_kind casting, as NumPy's UFuncTypeError
    with pytest.raises(ValueError):
        v[...] = np.ones(3, np.int32)             # does not broadcast
    with pytest.raises(ValueError):
        v[0] = "x"
    assert_same(g, _grid((3, 4), np.int32))
    assert_same(v, _grid((3, 4), np.int32)[1])
    v += 1
    assert_same(g[1], _grid((3, 4), np.int32)[1] + 1)


def test_views_stay_fused(wgpu_device: xp.Device) -> None:
    """A write through a view is one fusable node: the base, a read of it and the arithmetic after
    the write run as one kernel, with nothing copied to or from the host."""
    g = xp.asarray(_grid((64, 80)), device=wgpu_device)
    xp.evaluate(g + 0)                            # uploads g
    v = g[1:-1, 1:-1]
    xp.reset_metrics()
    v[...] = v * 2 + 1
    y = g + 1
    xp.evaluate(y)
    m = xp.metrics()
    assert m["dispatches"] == 1 and m["bytes_uploaded"] == 0 and m["bytes_downloaded"] == 0
    h = _grid((64, 80))
    h[1:-1, 1:-1] = h[1:-1, 1:-1] * 2 + 1
    assert_same(y, h + 1)


def test_many_short_lived_views_do_not_accumulate(device: xp.Device) -> None:
    g = xp.asarray(np.zeros(300, np.float32), device=device)
    h = np.zeros(300, np.float32)
    for i in range(150):
        v = g[i:i + 2]
        v += 1
        h[i:i + 2] += 1
    assert_same(g, h)
    del v
    g[0] = 5                                      # the last view died: g is a plain array again
    assert g._view is None
    h[0] = 5
    assert_same(g, h)


@pytest.mark.parametrize("n", [65535, 65536, 70000])
def test_writes_through_views_of_long_axes(wgpu_device: xp.Device, n: int) -> None:
    h = np.zeros((3, n), np.float32)
    g = xp.asarray(h, device=wgpu_device)
    for x in (h, g):
        x[1, ::7] = 1
        x[:, n - 1] = 2
        col = x.T[n // 2]
        col += 3
        tail = x[2, -5:][::-1]
        tail[:] = np.arange(5, dtype=np.float32)
    assert_same(g, h)
    t = np.zeros((n, 3), np.float32)
    gt = xp.asarray(t, device=wgpu_device)
    for x in (t, gt):
        x.T[1][::1000] = -1
        x[n - 2:, ::2] += 7
    assert_same(gt, t)


def test_eq_none_and_sequences(device: xp.Device) -> None:
    h = np.array([[1.0, np.nan], [0.0, -2.0]], np.float32)
    g = xp.asarray(h, device=device)
    assert_same(g == None, h == None)  # noqa: E711 - NumPy compares elementwise
    assert_same(g != None, h != None)  # noqa: E711
    assert_same(None == g, None == h)  # noqa: E711
    assert_same(g == "a", h == "a")
    assert_same(g == [1.0, 0.0], h == [1.0, 0.0])
    assert_same(g + [1, 2], h + [1, 2])     # a sequence of numbers is an array, as in NumPy
    with pytest.raises(TypeError):
        g + [1, None]  # noqa: B018 - not a sequence of numbers
    with pytest.raises(TypeError):
        g < None  # noqa: B015


def test_flat(device: xp.Device) -> None:
    h = _grid((3, 4)).copy()
    g = xp.asarray(h, device=device)
    for x in (h, g):
        x.flat[5] = -1
        x.flat[np.array([0, 2])] = 9
        x.T.flat[1] = 7                 # a view: its flat order is the transposed one, written through
    assert_same(g, h)
    assert_same(g.flat[3:6], h.flat[3:6])
    assert [float(v) for v in g.flat] == h.ravel().tolist()
    g.flat = 2
    assert_same(g, np.full((3, 4), 2, np.float32))


def test_threads_writing_disjoint_parts_keep_every_write(device: xp.Device) -> None:
    """joblib's threads fill column blocks of one result (scikit-learn's pairwise functions with
    n_jobs): each write must build on the others, as NumPy's do (882 of 1280 column writes were lost
    before writes took ``_aliasing.WRITE_LOCK``)."""
    old = sys.getswitchinterval()
    # switch threads as often as possible; the race is in the array layer, so the wgpu device (where
    # lavapipe's threads make each switch slow) runs it once at the usual interval
    sys.setswitchinterval(1e-6 if device.kind == "cpu" else old)
    try:
        per = 16 if device.kind == "cpu" else 2  # columns a thread (each write a new graph on lavapipe)
        for _ in range(3 if device.kind == "cpu" else 1):
            ret = xp.zeros((8, 4 * per), dtype=xp.float32, device=device)
            blocks = [ret[:, per * t:per * (t + 1)] for t in range(4)]     # views of each thread's part
            bar = threading.Barrier(4)

            def work(t: int, ret: Any = ret, blocks: list = blocks, bar: threading.Barrier = bar) -> None:
                bar.wait()
                for j in range(per * t, per * (t + 1)):
                    ret[:, j:j + 1] = xp.full((8, 1), float(j + 1), dtype=xp.float32, device=device)
                blocks[t] += 100.0               # then through its view

            threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            want = np.broadcast_to(np.arange(1, 4 * per + 1, dtype=np.float32), (8, 4 * per)) + 100.0
            np.testing.assert_array_equal(np.asarray(ret), want)
    finally:
        sys.setswitchinterval(old)


def test_views_after_the_base_is_reshaped_in_place(device: xp.Device) -> None:
    """``x.shape = s`` keeps the views taken before and places the views taken after in the new shape
    (``derive`` finds a base's own place without the probe only while their shapes agree)."""
    x = xp.arange(6.0, device=device)
    before = x[2:]
    x.shape = (2, 3)
    row = x[1]
    row *= 10
    col = x.T
    col[0, 1] = -1
    n = np.arange(6.0)
    n_before = n[2:]
    n.shape = (2, 3)
    n_row = n[1]
    n_row *= 10
    n.T[0, 1] = -1
    assert x.tolist() == n.tolist() and before.tolist() == n_before.tolist()
    assert row.tolist() == n_row.tolist() and col.tolist() == n.T.tolist()


_RAVEL_VIEWS: list[Callable[[Any], Any]] = [
    lambda x: x, lambda x: x.T, lambda x: x[:, ::2], lambda x: x[::-1], lambda x: x.T[::2], lambda x: x[:, :, 0],
    lambda x: x[..., ::-1], lambda x: np.swapaxes(x, 0, 1), lambda x: x[:, 1:, 1:], lambda x: x[0], lambda x: x[0, 0],
    lambda x: x[:, :1], lambda x: np.transpose(x, (1, 0, 2))[:, :, :2]]


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("k", range(len(_RAVEL_VIEWS)))
def test_ravel_copies_where_numpy_does(device: xp.Device, order: str, k: int) -> None:
    """``ravel`` (NumPy's function and the method) gives a view only where NumPy's does (an array contiguous in
    the order asked, or for ``K`` a dense block in stride order), else a copy, so that later writes to the
    base show through exactly as in NumPy; and the elements in NumPy's order (``A`` and ``K`` of transposed
    views). Before, ``a[:, 0].ravel()`` was a strided view and ``ravel(a.T, 'K')`` took C order."""
    f = _RAVEL_VIEWS[k]
    h = np.arange(24.0).reshape(2, 3, 4)
    for rav in (lambda v: np.ravel(v, order=order), lambda v: v.ravel(order)):
        a, hb = xp.asarray(h.copy(), device=device), h.copy()
        got, want = rav(f(a)), rav(f(hb))
        assert_same(got, want)
        a[...] = -1
        hb[...] = -1
        assert_same(got, want)


@pytest.mark.parametrize("dt", ["complex64", "complex128", "float32", "float64"])
def test_an_array_minus_itself_keeps_nan(device: xp.Device, dt: str) -> None:
    """``x - x``, ``x + (-x)`` and ``x - (+x)`` of one array (and through aliased ``out=`` and in-place
    operators) are NaN where ``x`` is NaN or infinite, in each part of a complex ``x`` (NumPy's
    ``(inf+0j) - (inf+0j)`` is ``nan+0j``): shader compilers fold them to 0, which complex values got
    before; and ``x / x``, ``x % x``, ``x // x`` are NaN where NumPy's are (the H200 gave float64 ``x / x``
    = 1 at 0, inf and NaN, and complex128 1 + nan i for infinite parts)."""
    if dt.startswith("complex"):
        h = np.array([complex(np.nan, 0), complex(0, np.nan), complex(np.inf, 1), complex(2, -np.inf),
                      complex(-0.0, 0.0), 1 - 2j], dt)
    else:
        h = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5], dt)
    g = xp.asarray(h, device=device)
    with np.errstate(all="ignore"), xp.config(offload="always"):
        fs: list[Callable[[Any], Any]] = [lambda x: x - x, lambda x: x + (-x), lambda x: (-x) + x,
                                          lambda x: x - (+x), lambda x: (x - x) * 2, lambda x: x / x,
                                          lambda x: x / (-x)]
        if not dt.startswith("complex"):
            fs += [lambda x: x % x, lambda x: x // x, lambda x: np.fmod(x, x)]
        for f in fs:
            got, want = np.asarray(f(g)), f(h)
            for part in ((np.real, np.imag) if dt.startswith("complex") else (lambda v: v,)):
                assert np.array_equal(part(got), part(want), equal_nan=True)
        a, ha = xp.asarray(h, device=device), h.copy()
        np.subtract(a[::-1], a[::-1], out=a)
        np.subtract(ha[::-1], ha[::-1], out=ha)
        b, hb = xp.asarray(h, device=device), h.copy()
        b -= b
        hb -= hb
        for got, want in ((np.asarray(a), ha), (np.asarray(b), hb)):
            for part in ((np.real, np.imag) if dt.startswith("complex") else (lambda v: v,)):
                assert np.array_equal(part(got), part(want), equal_nan=True)


def test_two_views_of_one_value_subtracted_keep_nan(device: xp.Device) -> None:
    """``v - v[::-1]`` where both views read one broadcast value (after ``b[:] = inf``): two expressions
    the shader compiler merges and folds to 0 although they were emitted apart (found by the differential
    fuzz); the renderer numbers values (``render/wgsl_vn.py``) and keeps NumPy's NaN."""
    h = np.array([1 + 0j, -4 + 4j, 5 - 3j, -5j], np.complex64)
    with np.errstate(all="ignore"), xp.config(offload="always"):
        for fill in (np.inf, np.nan, 2.0):
            b, hb = xp.asarray(h, device=device), h.copy()
            v, hv = b.real, hb.real
            b[:] = np.complex64(complex(fill, 0))
            hb[:] = np.complex64(complex(fill, 0))
            v -= v[::-1]
            hv -= hv[::-1]
            assert_same(v, hv)
            assert_same(b, hb)



def test_permute_and_reshape_by_place_match_derive() -> None:
    """``derive_permute`` and ``derive_reshape`` (index arithmetic on a member's place) give the member that
    ``derive`` gives through the storage's probe: the same place, node, writeability and part, for bases,
    sliced, flipped, broadcast (read-only), unit-axis and complex-part members, and the copy where a
    reshape of a strided member needs one; writes through either reach the base as NumPy's do."""
    from gpuarray.array_object.aliasing import derive, derive_permute, derive_reshape
    from gpuarray.graph import views

    def same(u: Any, v: Any) -> bool:       # one node, or the same view of the same data (reshapes of evaluated
        if u is v:                          # data are leaves of their own, not hash-consed)
            return True
        return (u.op, u.shape, u.dtype, u.attrs) == (v.op, v.shape, v.dtype, v.attrs) and \
            all(same(a, b) for a, b in zip(u.inputs, v.inputs, strict=True)) and u.data is v.data

    base = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    cbase = (base + 1j * base).astype(np.complex64)
    members: list[tuple[str, Callable[[Any], Any]]] = [
        ("base", lambda a: a), ("slice", lambda a: a[:, 1:, ::2]), ("flip", lambda a: a[::-1, :, ::-1]),
        ("unit", lambda a: a[:, 1:2, :]), ("newaxis", lambda a: a[None, 1]), ("transpose", lambda a: a.T),
        ("broadcast", lambda a: np.broadcast_to(a[:1], (5, 3, 4))), ("real", lambda a: a.real),
        ("imag", lambda a: a.imag), ("empty", lambda a: a[:, :0])]
    for name, take in members:
        h = cbase if name in ("real", "imag") else base
        m = take(xp.asarray(h, device="cpu"))
        hm = take(h.copy())
        perms = [tuple(range(m.ndim))[::-1], tuple(range(m.ndim)), *([(1, 0, 2)] if m.ndim == 3 else [])]
        for axes in perms:
            got = derive_permute(m, axes)
            want = derive(m, lambda n, axes=axes: views.permute(n, axes))
            assert same(got._node, want._node) and got.base is want.base, (name, axes)
            g, w = got._view, want._view
            assert (g.shape, g.strides, g.offset, g.part, g.writeable) == \
                (w.shape, w.strides, w.offset, w.part, w.writeable), (name, axes)
            assert_same(got, np.transpose(hm, axes))
        for shape in [(m.size,), (1, m.size), (*m.shape[:-1], 1, m.shape[-1]) if m.ndim else (1,)]:
            got = derive_reshape(m, shape)
            want = derive(m, lambda n, shape=shape: views.reshape(n, shape))
            assert same(got._node, want._node) and (got._view is None) == (want._view is None), (name, shape)
            if got._view is not None:
                g, w = got._view, want._view
                assert (g.shape, g.strides, g.offset, g.part, g.writeable) == \
                    (w.shape, w.strides, w.offset, w.part, w.writeable), (name, shape)
            assert_same(got, np.reshape(hm, shape))
    a, ha = xp.asarray(base, device="cpu"), base.copy()
    t, ht = xp.reshape(a[:, 1], (8,)), ha[:, 1].reshape(8)         # a copy in NumPy and here: no write-through
    r, hr = xp.reshape(a[1], (12,)), ha[1].reshape(12)              # a view in both
    p, hp = xp.permute_dims(a, (2, 0, 1)), ha.transpose(2, 0, 1)
    t += 100
    ht += 100
    r[::5] = -1
    hr[::5] = -1
    p[1] *= 3
    hp[1] *= 3
    for got, want in ((a, ha), (t, ht), (r, hr), (p, hp)):
        assert_same(got, want)
