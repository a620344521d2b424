"""NumPy protocols on GpuArray, differentially against NumPy on both devices.

The same NumPy call runs on ndarrays and on GpuArrays; results must agree in
value and dtype (float16 too: computed in float32 and rounded, as NumPy's half loops), both
must raise the same exception type, and results must be GpuArrays on the
operands' device. Covered: every ufunc of the op table (``__call__`` with
NumPy promotion, ``out=``, ``where=``, ``dtype=``, ``casting=``, ``outer``,
reductions), ``__array_function__`` adapters and the host fallback (warning,
count, ``config`` modes), ``like=``, ``get()`` and DLPack.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray import interop as _interop
from gpuarray.core.ops import OPS
from gpuarray.interop import registry, ufuncs
from gpuarray.interop.adapters.folds import numpy_reduce_folds
from gpuarray.interop.host import _FALLBACK

from .conftest import assert_same

UFUNC_OPS = sorted(name for name, d in OPS.items() if d.ufunc)

INT_A = [0, 1, 2, 3, -3, 7]
INT_B = [1, 2, 1, 3, 2, 1]
FLT_A = [0.5, 1.0, 2.5, -1.5, 0.0, 7.25]
FLT_B = [1.5, 2.0, -1.0, 3.0, 0.5, 2.0]
BOOL_A = [True, False, True, False, True, True]
BOOL_B = [True, True, False, False, True, False]


def host(dtype: str, which: str = "a") -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array(BOOL_A if which == "a" else BOOL_B)
    if dt.kind == "f":
        return np.array(FLT_A if which == "a" else FLT_B, dtype=dt)
    vals = INT_A if which == "a" else INT_B
    return np.array([abs(v) for v in vals] if dt.kind == "u" else vals, dtype=dt)


def expected_dtype(dt: np.dtype) -> np.dtype:
    return dt


def tolerance(dt: np.dtype) -> dict[str, float]:
    if dt.kind != "f":
        return {}
    if dt == np.float16:                     # functions within a float16 ULP (float32 math, rounded once)
        return {"rtol": 2e-3, "atol": 2e-3}
    return {"rtol": 2e-6, "atol": 2e-6} if dt.itemsize <= 4 else {"rtol": 1e-13, "atol": 1e-13}


def to_device(x: Any, device: xp.Device) -> Any:
    """ndarrays become GpuArrays; scalars and anything else stay as they are."""
    if isinstance(x, np.ndarray):
        return xp.asarray(x, device=device)
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(v, device) for v in x)
    return x


def check(got: Any, want: Any, device: xp.Device) -> None:
    """``got`` (from GpuArrays) matches ``want`` (from ndarrays): value, dtype, GpuArray on ``device``."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w, device)
        return
    if isinstance(want, (np.ndarray, np.generic)):
        assert isinstance(got, xp.GpuArray), f"expected a GpuArray; got {type(got).__name__}"
        assert got.device == device
        w = np.asarray(want)
        tol = tolerance(w.dtype)
        assert_same(got, w.astype(expected_dtype(w.dtype)), **tol)
        return
    assert got == want


def differential(fn: Any, args: tuple, device: xp.Device, kwargs: dict | None = None) -> Any:
    """Run ``fn`` on NumPy data and on the same data as GpuArrays; compare results or exception types."""
    kwargs = kwargs or {}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            want = fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the same exception type is expected
            with pytest.raises(type(exc)):
                fn(*to_device(args, device), **to_device(kwargs, device))
            return None
        got = fn(*to_device(args, device), **to_device(kwargs, device))
    check(got, want, device)
    return got


# --------------------------------------------------------------------------- ufunc __call__
UNARY_CASES = ["int32", "float32", "float64", "bool", "int8", "uint16"]
BINARY_CASES: list[tuple[Any, Any]] = [
    ("int8", "int8"), ("int32", "float32"), ("bool", "bool"), ("float64", "float64"),
    ("uint8", 3), ("float32", 2.0), ("int16", True), ("float32", np.float64(2.0)),
    ("int64", "uint32"),
]


def operands(case: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(host(c, "ab"[i]) if isinstance(c, str) else c for i, c in enumerate(case))


def host_loop(name: str, case: tuple[Any, ...]) -> bool:
    """Cases whose NumPy loop gpuarray has no device kernel for: they run on the host by design."""
    return name == "reciprocal" and np.dtype(case[0]).kind != "f"    # NumPy's integer reciprocal


@pytest.mark.parametrize("name", UFUNC_OPS)
def test_ufunc_call_every_op(device, name):
    opdef = OPS[name]
    ufunc = getattr(np, opdef.ufunc)
    cases = [(c,) for c in UNARY_CASES] if opdef.nargs == 1 else BINARY_CASES
    for case in cases:
        args = operands(case)
        # "raise": a host fallback in the interop layer is an error here (the planner may still
        # route a kernel to the host, e.g. float64 transcendentals on wgpu; that is not counted here)
        with xp.config(fallback="silent" if host_loop(name, case) else "raise"):
            differential(ufunc, args, device)
        if opdef.nargs == 2 and isinstance(case[1], str):
            # the other operand as a NumPy array, and reflected: NumPy promotion still applies
            with np.errstate(all="ignore"):
                try:
                    want = ufunc(*args)
                except Exception:  # noqa: BLE001
                    continue
                check(ufunc(xp.asarray(args[0], device=device), args[1]), want, device)
                check(ufunc(args[0], xp.asarray(args[1], device=device)), want, device)


def test_ufunc_numpy_promotion(device):
    g8 = xp.asarray(np.array([1, 2], np.int8), device=device)
    assert np.exp(xp.asarray([1, 2], dtype=xp.int32, device=device)).dtype == np.float64
    assert np.exp(g8).dtype == np.float16          # NumPy's float16 loop
    assert np.sqrt(xp.asarray(np.array([4], np.int16), device=device)).dtype == np.float32
    assert (g8 + 1).dtype == np.int8 and np.add(g8, 1).dtype == np.int8          # Python int is weak
    assert np.add(g8, np.int64(1)).dtype == np.int64                            # NumPy scalar is not
    assert np.add(g8, 1.5).dtype == np.float64
    assert np.add(g8, np.array([1], np.uint8)).dtype == np.int16
    b = xp.asarray([True, False], device=device)
    assert_same(np.add(b, b), np.array([True, False]))
    assert_same(np.multiply(b, b), np.array([True, False]))
    assert np.abs(b).dtype == np.bool_ and np.square(b).dtype == np.int8
    with pytest.raises(OverflowError):
        np.add(g8, 1000)
    with pytest.raises(TypeError):
        np.subtract(b, b)                    # NumPy has no boolean subtract
    with pytest.raises(TypeError):
        np.negative(b)
    r = np.add(np.array([1.0, 2.0]), g8)     # ndarray first: NumPy defers to the GpuArray
    assert isinstance(r, xp.GpuArray) and r.device == device
    r = np.array([1.0, 2.0]) * g8
    assert isinstance(r, xp.GpuArray)


def test_ufunc_is_lazy_and_fuses(device):
    x = xp.asarray(np.linspace(-1, 1, 64, dtype=np.float32), device=device)
    xp.evaluate(x + 0)
    xp.reset_metrics()
    y = np.sin(x) * np.float32(2) + np.exp(np.negative(x))
    assert xp.metrics()["evaluations"] == 0 and not y._node.realized
    xp.evaluate(y)
    m = xp.metrics()
    assert m["evaluations"] == 1 and m["host_fallbacks"] == 0
    assert m["dispatches" if device.kind == "wgpu" else "host_kernels"] == 1
    h = np.linspace(-1, 1, 64, dtype=np.float32)
    assert_same(y, np.sin(h) * np.float32(2) + np.exp(-h), rtol=2e-6, atol=2e-6)


def test_ufunc_composed_and_aliases(device):
    a, b = np.array([0.5, -2.0, np.nan, 3.0, -0.0]), np.array([1.0, np.nan, np.nan, -3.0, 0.0])
    for fn in (np.fmax, np.fmin, np.heaviside, np.divmod, np.float_power):
        differential(fn, (a, b), device)
    for fn in (np.deg2rad, np.rad2deg, np.radians, np.degrees, np.fabs):
        differential(fn, (a,), device)
        differential(fn, (a.astype(np.float32),), device)
    differential(np.divmod, (np.array([7, -7, 5], np.int32), np.array([2, 2, -3], np.int32)), device)
    differential(np.fmax, (np.array([1, 5], np.int16), np.array([3, 2], np.int16)), device)


def test_modf_matvec_vecmat_i0_on_the_device(device):
    """``modf`` (two results: the signs of -0.0 and +-inf's zero fraction as NumPy's), the gufuncs
    ``matvec`` / ``vecmat`` (``vecmat`` conjugates its vector) and ``numpy.i0`` with no host fallback."""
    v = np.array([-2.5, np.inf, -np.inf, -0.0, 0.0, np.nan, 3.0, -1e30, 1e-40, 0.75, -7.25, 2.0 ** 52 + 1])
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))
    mode = "raise" if device.kind == "wgpu" else "silent"
    with xp.config(fallback=mode):
        for dt in (np.float32, np.float64):
            with np.errstate(over="ignore"):
                h = v.astype(dt)
            for got, want in zip(differential(np.modf, (h,), device), np.modf(h)):
                np.testing.assert_array_equal(np.signbit(np.asarray(got)), np.signbit(want))
            differential(np.i0, (np.linspace(-30, 30, 41).astype(dt),), device)
        differential(np.i0, (np.arange(-4, 5),), device)
        for fn, args, rtol in ((np.matvec, (a, rng.standard_normal(4)), 1e-12),
                               (np.matvec, (a.real.astype(np.float32), np.ones((2, 1, 4), np.float32)), 1e-6),
                               (np.vecmat, (1j * rng.standard_normal(3), a), 1e-12),
                               (np.vecmat, (np.arange(3, dtype=np.int32), np.ones((3, 2), np.int32)), 0)):
            want = fn(*args)
            got = fn(*to_device(args, device))
            assert isinstance(got, xp.GpuArray) and got.dtype == want.dtype
            assert_same(got, want, rtol=rtol, atol=rtol)
    with pytest.raises(TypeError, match="complex"):
        np.i0(xp.asarray(a, device=device))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_logaddexp2_on_the_device(device, dt):
    """NumPy's logaddexp2 steps (equal infinities, NaN, signed zeros) within 2 ULP of the operands'
    magnitude (its result cancels where they are near -1 apart from 0, as NumPy's own does)."""
    rng = np.random.default_rng(9)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e30, -1e30, 1e-40, 100.0, -150.0])
    with np.errstate(all="ignore"):
        x = np.concatenate([np.repeat(sp, sp.size), rng.uniform(-200, 200, 3000), rng.uniform(-3, 3, 3000)]).astype(dt)
        y = np.concatenate([np.tile(sp, sp.size), rng.uniform(-200, 200, 3000),
                            x[-3000:] + rng.uniform(-1e-3, 1e-3, 3000)]).astype(dt)
        want = np.logaddexp2(x, y)
        with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"):
            got = np.asarray(np.logaddexp2(xp.asarray(x, device=device), xp.asarray(y, device=device)))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    np.testing.assert_array_equal(got[~fin], want[~fin])
    ax, ay = (np.where(np.isfinite(v), np.abs(v), 0) for v in (x, y))
    scale = np.maximum(np.maximum(np.maximum(ax, ay)[fin], np.abs(want[fin])), 1).astype(dt)
    assert np.all(np.abs(got[fin] - want[fin]) <= 2 * np.spacing(scale))


@pytest.mark.parametrize("uf", [np.logaddexp, np.logaddexp2], ids=lambda u: u.__name__)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_logaddexp_reduce_on_the_device(device, uf, dt):
    """``logaddexp.reduce`` / ``logaddexp2.reduce`` along any axes with +-inf and NaN as NumPy's, and
    into ``out=``."""
    rng = np.random.default_rng(10)
    a = rng.uniform(-30, 30, (50, 40)).astype(dt)
    b = a.copy()
    b[0, :], b[1, 3], b[2, 5], b[3, :], b[4, 0] = -np.inf, np.inf, np.nan, np.inf, -np.inf
    b[5, :3] = [np.inf, -np.inf, 1]
    with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"), np.errstate(all="ignore"):
        for kw in ({}, {"axis": 1}, {"axis": None}, {"axis": (0, 1), "keepdims": True}, {"axis": -1, "keepdims": True}):
            for arr in (a, b, b.T):
                assert_same(uf.reduce(xp.asarray(arr, device=device), **kw), np.asarray(uf.reduce(arr, **kw)),
                            rtol=1e-5 if dt == np.float32 else 1e-12)
        o = xp.zeros(40, dtype=dt, device=device)
        assert uf.reduce(xp.asarray(a, device=device), out=o) is o
        assert_same(o, uf.reduce(a), rtol=1e-5 if dt == np.float32 else 1e-12)


def test_ufunc_out(device):
    g = xp.asarray([1.0, 2.0, 3.0], device=device)
    out = xp.zeros(3, device=device)
    r = np.multiply(g, 2, out=out)
    assert r is out
    assert_same(out, np.array([2.0, 4.0, 6.0]))
    # out as a tuple; cast into an integer out with casting='unsafe'; broadcast into a larger out
    iout = xp.zeros(3, dtype=xp.int32, device=device)
    assert np.add(g, 0.5, out=(iout,), casting="unsafe") is iout
    assert_same(iout, np.array([1, 2, 3], np.int32))
    big = xp.zeros((2, 3), device=device)
    np.add(g, 1, out=big)
    assert_same(big, np.array([[2.0, 3.0, 4.0]] * 2))
    # in place on an input
    np.add(g, g, out=g)
    assert_same(g, np.array([2.0, 4.0, 6.0]))
    # a NumPy out receives the host result
    hout = np.zeros(3, np.float32)
    assert np.subtract(g, 1, out=hout) is hout
    np.testing.assert_array_equal(hout, np.array([1.0, 3.0, 5.0], np.float32))
    # two outputs
    q, r_ = xp.zeros(3, device=device), np.zeros(3)
    res = np.divmod(g, 4, out=(q, r_))
    assert res[0] is q and res[1] is r_
    assert_same(q, np.array([0.0, 1.0, 1.0]))
    np.testing.assert_array_equal(r_, [2.0, 0.0, 2.0])
    # outputs only: every input a scalar
    s = xp.zeros((), dtype=xp.int64, device=device)
    np.add(1, 2, out=s)
    assert int(s) == 3


def test_ufunc_out_errors(device):
    g = xp.asarray([1.5, 2.5], device=device)
    iout = xp.zeros(2, dtype=xp.int32, device=device)
    a = np.array([1.5, 2.5])
    with pytest.raises(TypeError) as got:
        np.add(g, 1, out=iout)
    with pytest.raises(TypeError) as want:
        np.add(a, 1, out=np.zeros(2, np.int32))
    assert type(got.value) is type(want.value)                         # NumPy's UFuncTypeError subclass
    assert "same_kind" in str(got.value)
    with pytest.raises(TypeError):
        np.add(xp.asarray([1, 2], dtype=xp.int8, device=device), 1, out=xp.zeros(2, dtype=xp.int8,
               device=device), casting="no", dtype=np.int16)
    with pytest.raises(ValueError, match="non-broadcastable output"):
        np.add(g, 1, out=xp.zeros(3, device=device))
    with pytest.raises(ValueError, match="non-broadcastable output"):
        np.add(xp.zeros((2, 2), device=device), 1, out=xp.zeros(2, device=device))


def test_ufunc_where(device):
    a = np.array([1.0, 2.0, 3.0, 4.0])
    m = np.array([True, False, True, False])
    g, gm = xp.asarray(a, device=device), xp.asarray(m, device=device)
    for mask in (gm, m):
        out = xp.asarray([9.0, 9.0, 9.0, 9.0], device=device)
        assert np.add(g, 10, out=out, where=mask) is out
        assert_same(out, np.add(a, 10, out=np.full(4, 9.0), where=m))
    hout = np.full(4, 9.0)
    np.multiply(g, 2, out=hout, where=gm)
    np.testing.assert_array_equal(hout, [2.0, 9.0, 6.0, 9.0])
    out = xp.asarray([9.0, 9.0, 9.0, 9.0], device=device)
    np.add(g, 1, out=out, where=False)
    assert_same(out, np.full(4, 9.0))
    r = np.add(g, 1, where=gm)            # no out: unmasked positions are unspecified, as in NumPy
    np.testing.assert_array_equal(np.asarray(r)[m], (a + 1)[m])
    with pytest.raises(TypeError):
        np.add(g, 1, where=xp.asarray([1, 0, 1, 0], device=device))     # int where: NumPy refuses too


def test_ufunc_dtype_keyword(device):
    g8 = xp.asarray(np.array([100, 100], np.int8), device=device)
    differential(np.add, (np.array([100, 100], np.int8),) * 2, device, {"dtype": np.float32})
    assert_same(np.add(g8, g8, dtype=np.float32), np.array([200.0, 200.0], np.float32))
    assert_same(np.add(g8, g8, dtype="int16"), np.array([200, 200], np.int16))
    f = np.array([0.5, 1.5])
    differential(np.exp, (f,), device, {"dtype": np.float32})
    differential(np.exp, (f,), device, {"dtype": np.int32})                 # NumPy raises: same type
    differential(np.multiply, (f, f), device, {"dtype": np.int64, "casting": "unsafe"})
    differential(np.add, (f, f), device, {"casting": "no", "dtype": np.float32})


def test_ufunc_rejected_keywords(device):
    g = xp.asarray([1.0], device=device)
    with pytest.raises(TypeError, match="signature"):
        np.add(g, g, signature=("f8", "f8", "f8"))
    with pytest.raises(ValueError, match="order='F'"):
        np.add(g, g, order="F")
    assert_same(np.add(g, g, order="C"), np.array([2.0]))


def test_ufunc_outer(device):
    a, b = np.arange(3.0), np.array([[1.0, 2.0], [3.0, 4.0]])
    differential(np.add.outer, (a, b), device)
    differential(np.multiply.outer, (b, a), device)
    differential(np.less.outer, (a, a), device)
    differential(np.subtract.outer, (a, 2.0), device)
    g = xp.asarray(a, device=device)
    out = xp.zeros((3, 3), device=device)
    assert np.add.outer(g, g, out=out) is out
    assert_same(out, np.add.outer(a, a))
    with pytest.raises(ValueError):
        np.exp.outer(g, g)


def test_ufunc_reduce_accumulate_reduceat_at(device):
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    ai = np.array([[1, 2, 3], [4, 5, 6]], np.int8)
    with xp.config(fallback="silent"):
        for fn, kw in [(np.add.reduce, {}), (np.add.reduce, {"axis": 1}), (np.add.reduce, {"axis": None}),
                       (np.multiply.reduce, {"axis": 0, "keepdims": True}), (np.maximum.reduce, {"axis": 1}),
                       (np.minimum.reduce, {}), (np.add.accumulate, {"axis": 1}),
                       (np.multiply.accumulate, {}), (np.subtract.reduce, {"axis": 1}),
                       (np.add.reduce, {"dtype": np.float32})]:
            differential(fn, (a,), device, kw)
            differential(fn, (ai,), device, kw)
        differential(np.logical_and.reduce, (ai > 2,), device, {"axis": 1})
        differential(np.logical_or.reduce, (a > 2.5,), device)
        differential(np.add.reduceat, (np.arange(8.0), [0, 4, 1, 5]), device)
        differential(np.add.reduce, (a,), device, {"where": np.array([True, False, True]), "initial": 0.0})
        g = xp.asarray([1.0, 2.0, 3.0], device=device)
        assert np.add.at(g, [0, 0, 2], 1.0) is None
        assert_same(g, np.array([3.0, 2.0, 4.0]))
        assert g.device == device
        out = xp.zeros(2, device=device)
        assert np.add.reduce(xp.asarray(a, device=device), axis=1, out=out) is out
        assert_same(out, a.sum(axis=1))
        with pytest.raises(ValueError):
            np.add.reduce(xp.asarray(a, device=device), axis=1, out=xp.zeros(3, device=device))


def test_ufunc_method_plugs_in_by_name(device, monkeypatch):
    calls = []

    def fake_reduceat(ufunc, inputs, kwargs):
        calls.append(ufunc.__name__)
        return _FALLBACK

    monkeypatch.setitem(ufuncs.METHODS, ("add", "reduceat"), fake_reduceat)
    g = xp.asarray(np.arange(4.0), device=device)
    with xp.config(fallback="silent"):
        assert_same(np.add.reduceat(g, [0, 2]), np.add.reduceat(np.arange(4.0), [0, 2]))
    assert calls == ["add"]


# --------------------------------------------------------------------------- operands NumPy does not know
class Other:
    """A foreign duck array: it handles GpuArrays itself, so GpuArray must defer to it."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return ("Other", ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        return ("Other", func.__name__)


def test_unknown_operands_defer(device):
    g = xp.asarray([1.0], device=device)
    assert np.add(g, Other()) == ("Other", "add")
    assert np.concatenate([g, Other()]) == ("Other", "concatenate")
    assert _interop.array_ufunc(g, np.add, "__call__", g, object()) is NotImplemented
    assert _interop.array_function(g, np.concatenate, (xp.GpuArray, Other), ([g],), {}) is NotImplemented
    with pytest.raises(TypeError):
        np.add(g, object())


def test_mixed_devices_raise(wgpu_device):
    a = xp.asarray([1.0], device="cpu")
    b = xp.asarray([1.0], device=wgpu_device)
    with pytest.raises(ValueError, match="different devices"):
        np.add(a, b)
    with pytest.raises(ValueError, match="different devices"):
        np.where(xp.asarray([True], device="cpu"), a, b)


# --------------------------------------------------------------------------- __array_function__
A23 = np.arange(6.0).reshape(2, 3)
A1 = np.array([[[1.0], [2.0]]])            # shape (1, 2, 1)
I23 = np.arange(6, dtype=np.int32).reshape(2, 3)
M23 = np.array([[True, False, True], [False, True, False]])

FUNCTION_CASES: list[tuple[str, Any, tuple, dict]] = [
    ("transpose", np.transpose, (A23,), {}),
    ("transpose axes", np.transpose, (A1, (2, 0, 1)), {}),
    ("transpose bad axes", np.transpose, (A23, (0, 0)), {}),
    ("permute_dims", np.permute_dims, (A1, (1, 2, 0)), {}),
    ("matrix_transpose", np.matrix_transpose, (A1,), {}),
    ("reshape", np.reshape, (A23, (3, 2)), {}),
    ("reshape -1", np.reshape, (A23, -1), {}),
    ("reshape F", np.reshape, (A23, (3, 2)), {"order": "F"}),
    ("reshape bad", np.reshape, (A23, (4, 2)), {}),
    ("ravel", np.ravel, (A23,), {}),
    ("ravel F", np.ravel, (A23,), {"order": "F"}),
    ("expand_dims", np.expand_dims, (A23, 1), {}),
    ("expand_dims tuple", np.expand_dims, (A23, (0, -1)), {}),
    ("expand_dims bad", np.expand_dims, (A23, 5), {}),
    ("squeeze", np.squeeze, (A1,), {}),
    ("squeeze axis", np.squeeze, (A1,), {"axis": 2}),
    ("squeeze bad", np.squeeze, (A1,), {"axis": 1}),
    ("broadcast_to", np.broadcast_to, (np.arange(3.0), (2, 3)), {}),
    ("broadcast_to bad", np.broadcast_to, (np.arange(3.0), (2, 4)), {}),
    ("broadcast_arrays", np.broadcast_arrays, (A23, np.arange(3.0)[None, :]), {}),
    ("flip", np.flip, (A23,), {}),
    ("flip axis", np.flip, (A23,), {"axis": 1}),
    ("fliplr", np.fliplr, (A23,), {}),
    ("flipud", np.flipud, (A23,), {}),
    ("moveaxis", np.moveaxis, (A1, 0, -1), {}),
    ("moveaxis many", np.moveaxis, (A1, (0, 1), (2, 0)), {}),
    ("moveaxis bad", np.moveaxis, (A1, 3, 0), {}),
    ("swapaxes", np.swapaxes, (A1, 0, 2), {}),
    ("atleast_2d", np.atleast_2d, (np.arange(3.0),), {}),
    ("atleast_3d", np.atleast_3d, (A23,), {}),
    ("where", np.where, (M23, A23, -A23), {}),
    ("where scalars", np.where, (M23, I23, 2.5), {}),
    ("where both scalars", np.where, (M23, 1, 0), {}),
    ("where int condition", np.where, (I23, 1.0, A23), {}),
    ("clip", np.clip, (A23, 1.0, 4.0), {}),
    ("clip int by float", np.clip, (I23, 1, 3.5), {}),
    ("clip min only", np.clip, (A23, 2.0, None), {}),
    ("clip max only", np.clip, (A23,), {"a_max": 2.0, "a_min": None}),
    ("clip arrays", np.clip, (A23, np.array([0.0, 2.0, 9.0]), 4.0), {}),
    ("clip min/max keywords", np.clip, (I23,), {"min": 1, "max": 4}),
    ("zeros_like", np.zeros_like, (I23,), {}),
    ("ones_like dtype", np.ones_like, (I23,), {"dtype": np.float32}),
    ("full_like", np.full_like, (A23, 7), {}),
    ("full_like int from float", np.full_like, (I23, 2.7), {}),
    ("full_like shape", np.full_like, (A23, 3.0), {"shape": (4,)}),
    ("copy", np.copy, (A23,), {}),
    ("round", np.round, (np.array([0.5, 1.5, 2.5, -0.5]),), {}),
    ("round int", np.round, (I23,), {}),
    ("real", np.real, (A23,), {}),
    ("imag", np.imag, (A23,), {}),
    ("astype", np.astype, (A23, np.int16), {}),
]


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=[c[0] for c in FUNCTION_CASES])
def test_array_function_on_device(device, case):
    _, fn, args, kwargs = case
    xp.reset_metrics()
    differential(fn, args, device, kwargs)
    assert xp.metrics()["host_fallbacks"] == 0


def test_array_function_metadata(device):
    g = xp.asarray(A23, device=device)
    xp.reset_metrics()
    assert np.shape(g) == (2, 3) and np.ndim(g) == 2 and np.size(g) == 6 and np.size(g, 1) == 3
    assert np.result_type(g, np.int8) == np.float64 and np.result_type(g, 1) == np.float64
    assert np.result_type(xp.asarray(I23, device=device), np.uint8) == np.int32
    assert np.can_cast(g, np.float32) is False and np.can_cast(g, np.float32, casting="same_kind") is True
    assert np.iscomplexobj(g) is False and np.isrealobj(g) is True
    e = np.empty_like(g, shape=(4,))
    assert isinstance(e, xp.GpuArray) and e.shape == (4,) and e.dtype == np.float64
    assert xp.metrics()["evaluations"] == 0 and xp.metrics()["host_fallbacks"] == 0
    c = np.copy(g)
    g += 1
    assert_same(c, A23)                     # a copy does not follow later in-place changes


# ---- adapters onto namespace functions of the same meaning (they run on the device once gpuarray has them)
I8 = np.array([100, 100, -7], np.int8)
DISTINCT = np.array([[3.0, -1.0, 2.5], [0.5, 9.0, -4.0]])
NAMESPACE_CASES: list[tuple[str, Any, tuple, dict]] = [
    ("sum", np.sum, (I23,), {}),
    ("sum", np.sum, (A23,), {"axis": 1, "keepdims": True}),
    ("sum", np.sum, (I8,), {"dtype": np.int16}),
    ("sum", np.sum, (M23,), {"axis": 0}),
    ("prod", np.prod, (I23 + 1,), {"axis": 0}),
    ("max", np.max, (A23,), {"axis": 1}),
    ("max", np.amax, (I8,), {}),
    ("min", np.min, (I23,), {"axis": (0, 1)}),
    ("mean", np.mean, (I23,), {"axis": 0}),
    ("std", np.std, (A23,), {"ddof": 1}),
    ("var", np.var, (A23,), {"axis": 1}),
    ("all", np.all, (M23,), {"axis": 0}),
    ("any", np.any, (A23,), {}),
    ("argmax", np.argmax, (DISTINCT,), {"axis": 1}),
    ("argmin", np.argmin, (DISTINCT,), {}),
    ("cumulative_sum", np.cumsum, (I23,), {}),
    ("cumulative_sum", np.cumsum, (I8,), {}),
    ("cumulative_sum", np.cumsum, (A23,), {"axis": 1}),
    ("cumulative_prod", np.cumprod, (I23 + 1,), {"axis": 0}),
    ("sort", np.sort, (DISTINCT,), {}),
    ("sort", np.sort, (DISTINCT,), {"axis": None}),
    ("argsort", np.argsort, (DISTINCT,), {"axis": 0}),
    ("concat", np.concatenate, ([A23, -A23],), {}),
    ("concat", np.concatenate, ([I23, A23],), {"axis": 1}),
    ("concat", np.concatenate, ([A23, A23],), {"axis": None}),
    ("stack", np.stack, ([A23, A23],), {"axis": 1}),
    ("sum", np.add.reduce, (I23,), {}),
    ("sum", np.add.reduce, (A23,), {"axis": 1}),
    ("max", np.maximum.reduce, (A23,), {"axis": 1}),
    ("all", np.logical_and.reduce, (M23,), {}),
    ("cumulative_sum", np.add.accumulate, (I8,), {}),
    ("cumulative_prod", np.multiply.accumulate, (A23,), {"axis": 1}),
    ("matmul", np.matmul, (A23, A23.T), {}),
    ("vecdot", np.vecdot, (A23, A23), {}),
    ("matmul", np.matmul, (I23, A23.T), {}),
    ("matmul", np.dot, (A23, np.arange(3.0)), {}),
    ("matmul", np.dot, (np.arange(3.0), np.arange(3.0)), {}),
    ("tensordot", np.tensordot, (A23, A23.T), {"axes": 1}),
    ("tensordot", np.tensordot, (A23, A23), {"axes": ([0, 1], [0, 1])}),
]


@pytest.mark.parametrize("case", NAMESPACE_CASES, ids=[f"{c[1].__name__}-{i}" for i, c in enumerate(NAMESPACE_CASES)])
def test_adapters_onto_namespace(device, case):
    xp_name, fn, args, kwargs = case
    if not hasattr(xp, xp_name):
        pytest.skip(f"gpuarray has no {xp_name} yet: this call falls back to the host")
    with xp.config(fallback="raise"):
        differential(fn, args, device, kwargs)


def test_register_function(device, monkeypatch):
    seen = []

    def my_diff(a, n=1, axis=-1, **kw):
        seen.append(n)
        return a[..., 1:] - a[..., :-1] if n == 1 and not kw else _FALLBACK

    monkeypatch.setitem(registry.FUNCTIONS, np.diff, my_diff)
    g = xp.asarray(A23, device=device)
    with xp.config(fallback="raise"):
        assert_same(np.diff(g), np.diff(A23))
        with pytest.raises(TypeError, match="numpy.diff"):
            np.diff(g, n=2)                  # the adapter declines: host fallback, refused under "raise"
    assert seen == [1, 2]


# --------------------------------------------------------------------------- host fallback
FALLBACK_CASES: list[tuple[str, Any, tuple, dict]] = [
    ("concatenate", np.concatenate, ([A23, -A23],), {}),
    ("concatenate mixed", np.concatenate, ([A23, np.ones((1, 3))],), {"axis": 0}),
    ("cumsum", np.cumsum, (I23,), {}),
    ("cumsum axis", np.cumsum, (A23,), {"axis": 1}),
    ("sort", np.sort, (np.array([3.0, -1.0, 2.0]),), {}),
    ("sort axis None", np.sort, (A23,), {"axis": None}),
    ("mean", np.mean, (I23,), {}),
    ("mean axis", np.mean, (A23,), {"axis": 0}),
    ("sum", np.sum, (I23,), {"axis": 1}),
    ("max keepdims", np.max, (A23,), {"axis": 0, "keepdims": True}),
    ("std ddof", np.std, (A23,), {"ddof": 1}),
    ("unique counts", np.unique, (np.array([3, 1, 3, 2, 1]),), {"return_counts": True}),
    ("diff", np.diff, (A23,), {}),
    ("stack", np.stack, ([A23, A23],), {"axis": 1}),
    ("fmod", np.fmod, (np.array([5.0, -5.0]), 3.0), {}),
    ("where one argument", np.where, (M23,), {}),
    ("linalg.norm", np.linalg.norm, (A23,), {}),
]


@pytest.mark.parametrize("case", FALLBACK_CASES, ids=[c[0] for c in FALLBACK_CASES])
def test_functions_with_host_fallback(device, case):
    """Values agree whether gpuarray runs these on the device or falls back to the host."""
    _, fn, args, kwargs = case
    with xp.config(fallback="silent"):
        differential(fn, args, device, kwargs)


def test_fallback_results_and_writes(device):
    g = xp.asarray(I23, device=device)
    with xp.config(fallback="silent"):
        assert np.array_equal(g, g) is True
        spectrum = np.fft.fft(xp.asarray([1.0, 0.0], device=device))   # a complex result comes back too
        assert isinstance(spectrum, xp.GpuArray) and spectrum.dtype == np.complex128
        assert_same(spectrum, np.array([1.0, 1.0], np.complex128))
        out = xp.zeros(6, dtype=xp.int64, device=device)
        assert np.cumsum(g, out=out) is out
        assert_same(out, np.cumsum(I23).astype(np.int64))
        out2 = xp.zeros((2, 3), device=device)
        assert np.cumprod(g, 1, None, out2) is out2            # out given by position
        assert_same(out2, np.cumprod(I23, 1).astype(np.float64))
        parts = np.split(g, [1], axis=1)                       # a list of arrays comes back as GpuArrays
        assert isinstance(parts, list) and all(isinstance(p, xp.GpuArray) for p in parts)
        assert_same(parts[1], I23[:, 1:])
        dst = xp.zeros((2, 3), device=device)
        np.copyto(dst, g)
        assert_same(dst, I23.astype(np.float64))
        assert dst.device == device
        assert_same(g, I23)                 # the source is unchanged


def test_fallback_warns_once_and_counts(device):
    g = xp.asarray([[5.0, -5.0], [1.0, 2.0]], device=device)
    _interop.reset_fallback_warnings()
    xp.reset_metrics()
    with pytest.warns(xp.HostFallbackWarning, match="numpy.linalg.eig") as rec:
        np.linalg.eig(g)
    assert rec[0].filename == __file__      # the warning points at the caller
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = np.linalg.eig(g)                 # second call: no warning
    assert_same(r[0], np.linalg.eig(np.array([[5.0, -5.0], [1.0, 2.0]]))[0])
    assert xp.metrics()["host_fallbacks"] == 2
    assert issubclass(xp.HostFallbackWarning, UserWarning)


def test_fallback_config_modes(device):
    g = xp.asarray([5.0, -5.0], device=device)
    _interop.reset_fallback_warnings()
    with xp.config(fallback="silent"), warnings.catch_warnings():
        warnings.simplefilter("error")
        np.fmod(g, 3.0)
        np.linalg.eig(xp.asarray([[5.0, -5.0], [1.0, 2.0]], device=device))
    with xp.config(fallback="raise"):
        assert xp.config().fallback == "raise"
        with pytest.raises(xp.HostFallbackError, match="numpy.linalg.eig has no device implementation"):
            np.linalg.eig(xp.asarray([[5.0, -5.0], [1.0, 2.0]], device=device))
        with pytest.raises(xp.HostFallbackError, match=r"numpy.add .*loop \(complex256, complex256\)"):
            np.add(g, np.clongdouble(1j))    # NumPy's extended-precision loop: gpuarray has no such dtype
        assert_same(np.fmod(g, 3.0), np.fmod(np.array([5.0, -5.0]), 3.0))   # on the device now
        if numpy_reduce_folds(np.power):    # NumPy >= 2.4.6 folds power.reduce: the device's fold (folds.py)
            assert_same(np.power.reduceat(g, [0]), np.power.reduceat(np.array([5.0, -5.0]), [0]), rtol=1e-13)
        else:
            with pytest.raises(TypeError, match=r"numpy.power.reduceat"):  # (NumPy's own reduction: the host)
                np.power.reduceat(g, [0])
        assert_same(np.subtract.reduceat(g, [0]), np.subtract.reduceat(np.array([5.0, -5.0]), [0]))
        assert_same(np.exp(g), np.exp(np.array([5.0, -5.0])), rtol=1e-13)   # device ops still run
    assert xp.config().fallback == "warn"
    with pytest.raises(ValueError, match="fallback"):
        xp.config(fallback="sometimes")
    with pytest.raises(TypeError, match="unknown setting"):
        xp.config(fall_back="raise")


def test_config_call_is_global_and_with_is_local():
    try:
        xp.config(fallback="silent")
        assert xp.config().fallback == "silent"
        seen = []
        with xp.config(fallback="raise"):
            t = threading.Thread(target=lambda: seen.append(xp.config().fallback))
            t.start()
            t.join()
            assert xp.config().fallback == "raise"
        assert seen == ["silent"]          # a with-block changes only its own thread
        assert xp.config().fallback == "silent"
    finally:
        xp.config(fallback="warn")
    assert "fallback='warn'" in repr(xp.config())


# --------------------------------------------------------------------------- like=
def test_like_creation(device):
    g = xp.asarray([1.0], device=device)
    xp.reset_metrics()
    for fn, args, kwargs in [
        (np.asarray, ([1, 2, 3],), {}), (np.asarray, ([1.5, 2.0],), {"dtype": np.float32}),
        (np.array, ([[1, 2]],), {"ndmin": 3}), (np.asanyarray, (np.arange(3, dtype=np.uint8),), {}),
        (np.zeros, ((2, 3),), {}), (np.ones, (3,), {"dtype": np.int16}), (np.empty, (2,), {}),
        (np.full, ((2,), 7), {}), (np.full, ((2,), 1.5), {"dtype": np.float32}),
        (np.arange, (5,), {}), (np.arange, (1, 7, 2), {}), (np.arange, (0.0, 2.0, 0.5), {}),
        (np.eye, (3,), {"k": 1}), (np.identity, (2,), {"dtype": np.int32}),
    ]:
        want = fn(*args, **kwargs)
        got = fn(*args, **kwargs, like=g)
        check(got, want, device)
    assert xp.metrics()["host_fallbacks"] == 0
    with xp.config(fallback="silent"):
        got = np.frombuffer(b"\x01\x02", dtype=np.uint8, like=g)   # no adapter: host, then to the device
    check(got, np.array([1, 2], np.uint8), device)


# --------------------------------------------------------------------------- get() and DLPack
def test_get(device):
    g = xp.asarray(A23, device=device)
    h = g.get()
    assert isinstance(h, np.ndarray) and h.flags.writeable
    np.testing.assert_array_equal(h, A23)
    h[0, 0] = 99.0
    assert float(g[0, 0]) == 0.0
    assert g.get(order="F").flags.f_contiguous
    out = np.empty((2, 3))
    assert g.get(out=out) is out
    np.testing.assert_array_equal(out, A23)
    with pytest.raises(ValueError):
        g.get(out=np.empty(3))
    with pytest.raises(TypeError):
        g.get(out=np.empty((2, 3), np.float32))


def test_dlpack_cpu():
    g = xp.asarray(A23, device="cpu")
    assert g.__dlpack_device__() == (1, 0)
    h = np.from_dlpack(g)
    np.testing.assert_array_equal(h, A23)
    assert not h.flags.writeable            # exported data is read-only, as NumPy exports read-only arrays
    assert type(g.__dlpack__()).__name__ == "PyCapsule"    # legacy (unversioned): a writable copy
    with pytest.raises(BufferError):
        g.__dlpack__(copy=False)             # legacy DLPack cannot mark read-only, and no copy allowed
    assert np.from_dlpack(g, copy=True).flags.writeable
    assert type(g.__dlpack__(max_version=(1, 0))).__name__ == "PyCapsule"


def test_dlpack_wgpu(wgpu_device):
    g = xp.asarray(A23, device=wgpu_device)
    assert g.__dlpack_device__() == (15, 0)  # kDLWebGPU
    with pytest.raises(BufferError, match="copy=True"):
        np.from_dlpack(g)
    np.testing.assert_array_equal(np.from_dlpack(g, device="cpu"), A23)
    np.testing.assert_array_equal(np.from_dlpack(g, copy=True), A23)
    with pytest.raises(BufferError, match="copy=False"):
        g.__dlpack__(dl_device=(1, 0), copy=False, max_version=(1, 0))
    with pytest.raises(BufferError, match="WebGPU"):
        g.__dlpack__(dl_device=(15, 0), max_version=(1, 0))


def test_from_dlpack(device):
    h = np.arange(6, dtype=np.int16).reshape(2, 3)
    g = xp.from_dlpack(h, device=device)
    assert isinstance(g, xp.GpuArray) and g.device == device
    assert_same(g, h)
    back = xp.from_dlpack(g)                 # GpuArray in, same device out
    assert back.device == device
    assert_same(back, h)
    assert xp.from_dlpack(h).device == xp.Device("cpu")     # host data stays on the host
    moved = xp.from_dlpack(xp.asarray(h, device="cpu"), device=device)
    assert moved.device == device
    assert_same(np.asarray(xp.from_dlpack(h, device=device, copy=True)), h)
    if device.kind == "cpu":
        shared = np.arange(3.0)
        s = xp.from_dlpack(shared, copy=False)
        shared[0] = 42.0                     # copy=False shares the producer's memory
        assert float(s[0]) == 42.0
    else:
        with pytest.raises(BufferError):
            xp.from_dlpack(h, device=device, copy=False)
    half = np.array([1.5, -0.0, np.inf], np.float16)
    assert_same(np.asarray(xp.from_dlpack(half, device=device)), half)
    with pytest.raises(TypeError):
        xp.from_dlpack([1, 2])


def test_device_without_float64(wgpu_device, monkeypatch):
    provider = wgpu_device.provider
    monkeypatch.setattr(provider, "f64", False)
    monkeypatch.setattr(provider, "i64", False)
    g = xp.asarray(np.array([1, 2], np.int32), device=wgpu_device)
    f = xp.asarray(np.array([0.5, 1.5], np.float32), device=wgpu_device)
    with xp.config(fallback="raise"):
        assert np.exp(g).dtype == np.float32                   # NumPy: float64, which this device lacks
        assert_same(np.add(f, np.float64(0.25)), np.array([0.75, 1.75], np.float32))
        assert_same(np.true_divide(g, 2), np.array([0.5, 1.0], np.float32))
        assert np.where(g > 1, f, 2.0).dtype == np.float32
        assert np.zeros(2, like=f).dtype == np.float32
