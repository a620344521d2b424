"""Small arrays under offload="auto": elementwise operations on host data run at once (_eager.py).

The eager result must be what the lazy path computes (the in-process provider, itself tested
against NumPy in test_elementwise.py): same dtype, same bits, same errors. The reference
here is the lazy path on the cpu device with ``config(eager_host=False)``.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.core.dtypes import ALL_DTYPES, CATEGORIES
from gpuarray.core.ops import OPS
from gpuarray.namespace.elementwise import OP_FUNCTIONS
from gpuarray.runtime import calibration as _calibration
from gpuarray.runtime import planner
from gpuarray.runtime.residency import Data

from .conftest import assert_same

WHY = "eager host: small inputs on host"


@pytest.fixture
def auto():
    with xp.config(offload="auto", eager_host=True, elementwise_threshold=None):
        yield


def values(dt: np.dtype) -> np.ndarray:
    """Special values of ``dt``: signed zeros, infinities, NaN, extremes, integer limits."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind == "c":
        re = values(np.dtype(np.float32 if dt == np.complex64 else np.float64))[:10]
        out = np.empty((len(re), len(re[::3])), dtype=dt)
        out.real, out.imag = re[:, None], re[None, ::3]
        return out.reshape(-1)
    if dt.kind == "f":
        fi = np.finfo(dt)
        with np.errstate(all="ignore"):
            return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.nan, np.inf, -np.inf, fi.max, -fi.max,
                             fi.tiny, fi.smallest_subnormal, 100.0, -7.0], dtype=dt)
    info = np.iinfo(dt)
    bits = dt.itemsize * 8
    out = [v for v in (0, 1, -1, 2, 3, -7, 100, bits - 1, bits, info.min, info.max, info.min + 1)
           if info.min <= v <= info.max]
    return np.array(sorted(set(out), key=out.index), dtype=dt)


def same_bits(got: Any, want: Any) -> None:
    """Same dtype, shape and bytes (NaN payloads and signs of zero included)."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype, f"dtype {g.dtype} != {w.dtype}"
    assert g.shape == w.shape, f"shape {g.shape} != {w.shape}"
    if w.dtype.kind in "fc":
        assert np.array_equal(np.isnan(g), np.isnan(w))
        ok = np.isnan(w) | ((g == w) & (np.signbit(g.real) == np.signbit(w.real)))
        if w.dtype.kind == "c":
            ok |= np.isnan(w.real) | np.isnan(w.imag)
            ok &= np.isnan(w) | (np.signbit(g.imag) == np.signbit(w.imag))
        assert ok.all(), f"differ at {np.argwhere(~ok)[:5].tolist()}: {g[~ok][:5]} != {w[~ok][:5]}"
    else:
        assert np.array_equal(g, w), f"{g} != {w}"


def outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    """('ok', host result) or ('error', exception type) of computing ``fn()`` to the end."""
    try:
        return "ok", np.asarray(fn())
    except (TypeError, ValueError, OverflowError, ZeroDivisionError) as exc:
        return "error", type(exc)


def compare(fn: Callable[[Any], Any], device: xp.Device, *hosts: np.ndarray | Any) -> None:
    """``fn`` on ``hosts`` (arrays become GpuArrays) eagerly on ``device`` and lazily on cpu."""
    def args(dev: xp.Device) -> list[Any]:
        return [xp.asarray(h, device=dev) if isinstance(h, np.ndarray) else h for h in hosts]
    with xp.config(eager_host=False):
        want = outcome(lambda: fn(*args(xp.Device("cpu"))))
    xp.reset_metrics()
    got = outcome(lambda: fn(*args(device)))
    assert got[0] == want[0], f"eager {got}, lazy {want}"
    if got[0] == "error":
        assert got[1] is want[1]
        return
    same_bits(got[1], want[1])
    m = xp.metrics()
    assert m["eager_host_ops"] >= 1 and m["evaluations"] == 0 and m["dispatches"] == 0
    assert m["bytes_uploaded"] == 0


def _ops(nargs: int) -> list[str]:
    return [n for n, o in OPS.items() if o.nargs == nargs]


def _dtypes(name: str, device: xp.Device) -> list[np.dtype]:
    cpu = xp.Device("cpu")
    if device.default_float != cpu.default_float:
        pytest.skip("the reference (cpu) promotes integers to another default float")
    return [d for d in ALL_DTYPES if d in CATEGORIES[OPS[name].category] and device.supports(d)]


@pytest.mark.parametrize("name", _ops(1))
def test_unary_ops_match_the_lazy_path(name: str, device: xp.Device, auto: None) -> None:
    fn = OP_FUNCTIONS[name]
    for dt in _dtypes(name, device):
        compare(fn, device, values(dt))
        compare(fn, device, values(dt)[-1])             # 0-d
        compare(fn, device, values(dt)[:0])             # empty


@pytest.mark.parametrize("name", _ops(2))
def test_binary_ops_match_the_lazy_path(name: str, device: xp.Device, auto: None) -> None:
    fn = OP_FUNCTIONS[name]
    for dt in _dtypes(name, device):
        v = values(dt)
        a, b = np.repeat(v, len(v)), np.tile(v, len(v))          # every pair of special values
        compare(fn, device, a, b)
        compare(fn, device, v[:, None], v[None, :5])               # broadcasting
        compare(fn, device, v[-1], v)                              # 0-d with 1-d
        for s in (0, -1, 3, 2.5, -0.0, float("nan"), float("inf"), True, 1000, -(2 ** 40), 1 + 2j):
            compare(fn, device, v, s)
            compare(lambda x, s=s: fn(s, x), device, v)


OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
             operator.pow, operator.lt, operator.eq, operator.and_, operator.lshift]


@pytest.mark.parametrize("op", OPERATORS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dt", ["int8", "uint8", "int64", "float32", "float64", "bool"])
def test_operators_with_python_scalars(op: Callable[[Any, Any], Any], dt: str, device: xp.Device,
                                       auto: None) -> None:
    v = values(np.dtype(dt))
    for s in (1, -1, 7, 300, 2 ** 70, 0.5, float("-inf"), False, 2j):
        compare(lambda x, s=s: op(x, s), device, v)
        compare(lambda x, s=s: op(s, x), device, v)
    compare(op, device, v, v[::-1].copy())
    compare(op, device, v, v[:1])


def test_float_results_match_numpy(device: xp.Device, auto: None) -> None:
    h = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 1e30, -1e-30], dtype=np.float32)
    x = xp.asarray(h, device=device)
    with np.errstate(all="ignore"):
        assert_same(x * 0.999 + 0.001, h * 0.999 + 0.001)
        assert_same(x / 0.0, h / 0.0)
        assert_same(-x, -h)
        assert_same(x * x - x, h * h - h)
        assert_same(xp.sqrt(x), np.sqrt(h))
        assert_same(x > 0, h > 0)
        assert_same(2 ** x, 2 ** h, rtol=1e-6)
    i = np.array([0, 1, -1, 127, -128], dtype=np.int8)
    with np.errstate(all="ignore"):
        assert_same(xp.asarray(i, device=device) + 1, i + 1)       # wraps around
        assert_same(xp.asarray(i, device=device) // 0, i // 0)     # 0, as NumPy


def test_eager_path_is_taken_for_small_host_data(device: xp.Device, auto: None) -> None:
    h = np.arange(16, dtype=np.float32)
    x = xp.asarray(h, device=device)
    xp.reset_metrics()
    y = x * 2 + 1
    assert y._node.realized and y.device == device and y.dtype == np.float32
    m = xp.metrics()
    assert m["eager_host_ops"] == 2
    assert m["evaluations"] == 0 and m["dispatches"] == 0 and m["bytes_uploaded"] == 0
    last = planner.decisions()[-1]
    assert last["placed"] == "host" and last["why"] == WHY and last["elements"] == 16
    assert "add" in last["kernel"] and last["device"] == device.name
    d = y._node.data                                     # built without Data.__init__: every slot set
    assert all(hasattr(d, a) for a in type(d).__slots__ if a != "__weakref__") and type(d) is Data
    host = y._node.data.get_host()                      # handed out read-only
    assert not host.flags.writeable and host.flags.c_contiguous and host is y._node.data.host
    assert_same(y, h * 2 + 1)
    x += 1                                               # in-place operators too
    assert x._node.realized and xp.metrics()["eager_host_ops"] == 3
    assert_same(x, h + 1)


def test_eager_result_feeds_the_device(wgpu_device: xp.Device, auto: None) -> None:
    small = xp.asarray(np.arange(4, dtype=np.float32), device=wgpu_device) * 2       # eager, on the host
    big = xp.asarray(np.ones(1 << 17, dtype=np.float32), device=wgpu_device)
    xp.reset_metrics()
    r = big + xp.sum(small)                              # large: runs on the device, uploads what it reads
    assert_same(r, np.full(1 << 17, 13, dtype=np.float32))
    assert xp.metrics()["dispatches"] >= 1


def test_not_taken_for_device_resident_inputs(wgpu_device: xp.Device, auto: None) -> None:
    with xp.config(offload="always"):
        r = xp.asarray(np.arange(8, dtype=np.float32), device=wgpu_device) + 0
        xp.evaluate(r)                                   # lives on the device only
    assert r._node.data.handle is not None and r._node.data.host is None
    xp.reset_metrics()
    y = r * 3
    assert not y._node.realized and xp.metrics()["eager_host_ops"] == 0
    xp.evaluate(y)
    assert xp.metrics()["dispatches"] == 1
    assert "already on wgpu:0" in planner.decisions()[-1]["why"]
    assert_same(y, np.arange(8, dtype=np.float32) * 3)
    np.asarray(r)                                        # now on both: still the device (planner rule 4)
    xp.reset_metrics()
    assert not (r + 1)._node.realized and xp.metrics()["eager_host_ops"] == 0


def test_downloaded_data_is_used_in_its_shape(wgpu_device: xp.Device, auto: None) -> None:
    """A device result read back (downloaded flat) and then released from the device feeds the
    eager path in its own shape, and so does a reshape sharing its data."""
    with xp.config(offload="always"):
        r = xp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3), device=wgpu_device) + 0
        xp.evaluate(r)
    np.asarray(r)
    data = r._node.data
    assert data.host.shape == (2, 3)
    data.release()                                       # host only from now on
    assert_same(r * 2.0, np.arange(6, dtype=np.float32).reshape(2, 3) * 2)
    assert_same(r * 2.0 + 1.0, np.arange(6, dtype=np.float32).reshape(2, 3) * 2 + 1)
    flat = xp.reshape(r, (6,))
    assert flat._node.data is data
    assert_same(flat * 2.0, np.arange(6, dtype=np.float32) * 2)
    assert_same(flat * 3.0, np.arange(6, dtype=np.float32) * 3)


@pytest.mark.parametrize("settings", [{"offload": "always"}, {"offload": "never"}, {"eager_host": False},
                                      {"elementwise_threshold": 16}],
                         ids=["always", "never", "eager_host=False", "threshold"])
def test_not_taken_when_configured_off(settings: dict[str, Any], device: xp.Device, auto: None) -> None:
    x = xp.asarray(np.arange(16, dtype=np.float32), device=device)
    xp.reset_metrics()
    with xp.config(**settings):
        y = x * 2
        assert not y._node.realized
        assert_same(y, np.arange(16, dtype=np.float32) * 2)
    assert xp.metrics()["eager_host_ops"] == 0
    with xp.config(elementwise_threshold=17):
        assert (x * 2)._node.realized


def _eager_now(x: Any) -> bool:
    """Whether operations on ``x`` run at once now: the full path and the operators' fast path
    (the repeat of an array-with-Python-float call) must agree."""
    got = {(x + 1)._node.realized, (x * 0.5)._node.realized, (x * 0.5)._node.realized}
    assert len(got) == 1, "the fast path and the full path disagree"
    return got.pop()


def test_threshold_from_the_environment_is_followed(device: xp.Device, auto: None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    x = xp.asarray(np.arange(16, dtype=np.float32), device=device)
    assert _eager_now(x)
    monkeypatch.setenv("GPUARRAY_ELEMENTWISE_THRESHOLD", "16")
    assert not _eager_now(x)
    monkeypatch.setenv("GPUARRAY_ELEMENTWISE_THRESHOLD", "17")
    assert _eager_now(x)
    monkeypatch.delenv("GPUARRAY_ELEMENTWISE_THRESHOLD")
    assert _eager_now(x)


def test_threshold_from_a_calibration_is_followed(wgpu_device: xp.Device, auto: None, tmp_path: Any,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUARRAY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GPUARRAY_ELEMENTWISE_THRESHOLD", raising=False)
    path = _calibration.path_for(wgpu_device)
    path.parent.mkdir(parents=True)
    x = xp.asarray(np.arange(64, dtype=np.float32), device=wgpu_device)
    try:
        for limit, eager in ((1000, True), (64, False), (65, True)):
            path.write_text(json.dumps({"thresholds": {"elementwise": limit}}))
            _calibration.forget()                        # the next use reads the file again
            assert _eager_now(x) == eager, limit
    finally:
        _calibration.forget()


def test_not_taken_for_unevaluated_inputs(device: xp.Device, auto: None) -> None:
    x = xp.asarray(np.arange(16, dtype=np.float32), device=device)
    v = x[::2]                                           # a view: recorded, not evaluated
    xp.reset_metrics()
    y = v + 1
    assert not y._node.realized and xp.metrics()["eager_host_ops"] == 0
    assert_same(y, np.arange(0, 16, 2, dtype=np.float32) + 1)


def test_errors_leave_inputs_intact(device: xp.Device, auto: None) -> None:
    h = np.arange(6, dtype=np.int8)
    x = xp.asarray(h, device=device)
    xp.reset_metrics()
    with pytest.raises(TypeError):
        x & 1.5                                          # noqa: B018 - float with a bitwise op
    with pytest.raises(ValueError):
        x + xp.asarray(np.ones(4, np.int8), device=device)   # noqa: B018 - shapes do not broadcast
    with pytest.raises(OverflowError):
        x + 1000                                         # noqa: B018 - out of int8's range, as NumPy
    with pytest.raises(TypeError):
        xp.sqrt(x > 2)                                   # bool is not floating-point
    assert xp.metrics()["eager_host_ops"] == 1           # only the comparison ran
    assert x._node.realized and x.dtype == np.int8
    assert_same(x, h)
    assert_same(x * 2, h * 2)


def test_explain_reports_it(device: xp.Device, auto: None) -> None:
    x = xp.asarray(np.ones(8, np.float32), device=device)
    y = xp.exp(x) * 2
    report = xp.explain(y)
    assert report.kernels == []                          # nothing left to run
    eager = [d for d in report.recent_decisions if d["why"] == WHY]
    assert [d["kernel"] for d in eager[-2:]] == ["eager exp -> (8,)", "eager multiply -> (8,)"]
    with xp.config(eager_host=False):
        lazy = xp.explain(xp.exp(x) * 2)
    assert lazy.kernels[0].ops == ["exp", "multiply"] and lazy.kernels[0].placed == "host"


def test_numpy_operands_and_ufuncs(device: xp.Device, auto: None) -> None:
    h = np.linspace(-1, 1, 9, dtype=np.float32)
    x = xp.asarray(h, device=device)
    xp.reset_metrics()
    r = np.sin(x) * np.float32(2) + np.ones(9, np.float32)
    assert r._node.realized and xp.metrics()["eager_host_ops"] == 3
    assert_same(r, np.sin(h) * np.float32(2) + np.ones(9, np.float32), rtol=1e-6)


def test_lazy_recording_keeps_hash_consing_and_depth_bound(device: xp.Device) -> None:
    with xp.config(offload="always"):
        x = xp.asarray(np.ones(4, np.float32), device=device)
        assert (x + 1.5)._node is (x + 1.5)._node
        assert (x + 0.0)._node is not (x + -0.0)._node
        assert (x * float("nan"))._node is (x * float("nan"))._node
        y = x
        for _ in range(300):
            y = y + 1.0
        from gpuarray.graph.node import MAX_DEPTH
        assert y._node.depth <= MAX_DEPTH + 1
        assert_same(y, np.full(4, 301, np.float32))


def test_signed_zero_and_nan_scalars_are_not_confused(device: xp.Device, auto: None) -> None:
    h = np.array([1.0, -1.0, 0.0], dtype=np.float64)
    x = xp.asarray(h, device=device)
    for s in (0.0, -0.0, 0.0, complex(0.0, 1.0), complex(-0.0, 1.0), complex(0.0, -0.0), complex(-0.0, -0.0),
              float("nan"), 0.0):
        with np.errstate(all="ignore"):
            want = np.asarray(h * np.asarray(s)), np.asarray(h + np.asarray(s)), np.asarray(np.asarray(s) / h)
        same_bits(x * s, want[0])
        same_bits(x + s, want[1])
        same_bits(s / x, want[2])


NUMPY_OPERANDS = [("float32", "float32"), ("float32", "float64"), ("int32", "float32"), ("uint8", "int64"),
                  ("bool", "float64"), ("complex64", "float64"), ("int64", "uint64")]


@pytest.mark.parametrize("op", [operator.add, operator.mul, operator.truediv, operator.sub, operator.lt,
                                operator.pow, operator.and_], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dts", NUMPY_OPERANDS, ids=lambda d: "-".join(d))
def test_numpy_array_operands_match_the_lazy_path(op: Callable[[Any, Any], Any], dts: tuple[str, str],
                                                  device: xp.Device, auto: None) -> None:
    """A GpuArray with a NumPy array operand (a window, weights: ``x * np.hanning(n)``), either side,
    same or other dtype, broadcasting: computed at once without an upload where the GpuArray is small
    and on the host only; NumPy's dtype and bits (the lazy path's), NumPy's errors."""
    a, b = np.dtype(dts[0]), np.dtype(dts[1])
    if not (device.supports(a) and device.supports(b)):
        pytest.skip("a dtype the device does not take")
    va, vb = values(a), values(b)
    cases = [(np.repeat(va, len(vb)), np.tile(vb, len(va))), (va[:, None], vb[None, :4]), (va[:3], vb)]
    for ha, hb in cases:
        for flip in (False, True):
            def fn(x: Any, hb: np.ndarray = hb, flip: bool = flip) -> Any:
                return op(hb, x) if flip else op(x, hb)
            with xp.config(eager_host=False):
                want = outcome(lambda fn=fn, ha=ha: fn(xp.asarray(ha, device="cpu")))
            for _ in range(2):          # the second call takes the cached signature
                got = outcome(lambda fn=fn, ha=ha: fn(xp.asarray(ha, device=device)))
                assert got[0] == want[0], (got, want)
                if got[0] == "ok":
                    same_bits(got[1], want[1])
                else:
                    assert got[1] is want[1]


def test_a_numpy_operand_is_not_uploaded(device: xp.Device, auto: None) -> None:
    x = xp.asarray(np.linspace(-1, 1, 1024, dtype=np.float32), device=device)
    win = np.hanning(1024)                                   # float64, as SciPy's windows are
    for _ in range(3):
        xp.reset_metrics()
        y = x * win
        m = xp.metrics()
        assert y.dtype == xp.float64 and m["bytes_uploaded"] == 0 and m["evaluations"] == 0, m
        np.testing.assert_array_equal(np.asarray(y), np.linspace(-1, 1, 1024, dtype=np.float32) * win)


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64", "complex128"])
def test_small_transforms_at_once(dt: str, device: xp.Device, auto: None) -> None:
    """``fft``, ``ifft``, ``rfft`` (cut or padded by ``n``, along an axis, every ``norm``) of small arrays
    on the host only are computed at once with ``numpy.fft`` (no evaluation planned: a Python loop over
    segments, as SciPy's ``welch``, pays none); NumPy's dtypes (complex of the input's precision) and
    values to the transform's rounding."""
    if not device.supports(np.dtype(dt)):
        pytest.skip("a dtype the device does not take")
    rng = np.random.default_rng(5)
    h = rng.standard_normal((6, 1000)).astype(dt)
    if h.dtype.kind == "c":
        h = (h + 1j * rng.standard_normal((6, 1000))).astype(dt)
    real = h.dtype.kind == "f"
    ctype = np.dtype("complex64" if h.dtype.itemsize == (4 if real else 8) else "complex128")
    tol = 2e-5 if ctype == np.complex64 else 1e-12
    fns = [("fft", {}), ("ifft", {"norm": "ortho"}), ("fft", {"n": 700, "axis": -1}),
           ("fft", {"n": 1300, "norm": "forward"}), ("fft", {"axis": 0})]
    if real:
        fns += [("rfft", {}), ("rfft", {"n": 999, "axis": -1}), ("rfft", {"axis": 0, "norm": "ortho"})]
    for name, kw in fns:
        x = xp.asarray(h, device=device)
        np.asarray(x)
        xp.reset_metrics()
        got = getattr(xp.fft, name)(x, **kw)
        m = xp.metrics()
        assert m["evaluations"] == 0 and m["eager_host_ops"] >= 1, (name, kw, m)
        want = getattr(np.fft, name)(h.astype(ctype) if name != "rfft" else h.astype(ctype.type(0).real.dtype),
                                     **kw)
        assert got.dtype == ctype and got.shape == want.shape, (name, kw, got.dtype, got.shape)
        np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol * np.max(np.abs(want)))
    with xp.config(eager_host=False):           # the planned path: the same values
        x = xp.asarray(h, device=device)
        lazy = np.asarray(xp.fft.fft(x, n=700))
    np.testing.assert_allclose(lazy, np.fft.fft(h.astype(ctype), n=700), rtol=tol, atol=tol * 40)


@pytest.mark.parametrize("dt", ["bool", "int32", "float32", "float64", "complex64"])
def test_any_and_all_of_small_host_data_at_once(dt: str, device: xp.Device, auto: None) -> None:
    """``any`` / ``all`` of small data held on the host only are reduced at once there (SciPy's
    ``xp.any(order == 0)`` of a 0-d host value, read by ``bool``): NumPy's results (NaN counts as true,
    empty axes give all's True and any's False) for every axis and keepdims, no evaluation."""
    if not device.supports(np.dtype(dt)):
        pytest.skip(f"{dt} on {device.name}")
    v = values(np.dtype(dt))
    cases = [v, v[:1].reshape(()), np.zeros((3, 0), dt), np.resize(v, (4, 6)), np.zeros((2, 3), dt)]
    for h in cases:
        g = xp.asarray(h, device=device)
        axes = [None, *range(-h.ndim, h.ndim)] + ([(0, 1)] if h.ndim == 2 else [])
        for ax in axes:
            for keep in (False, True):
                for name in ("any", "all"):
                    xp.reset_metrics()
                    got = getattr(xp, name)(g, axis=ax, keepdims=keep)
                    assert xp.metrics()["evaluations"] == 0 and xp.metrics()["eager_host_ops"] == 1
                    same_bits(got, getattr(np, name)(h, axis=ax, keepdims=keep))
    with xp.config(offload="always"):           # recorded as before elsewhere
        xp.reset_metrics()
        assert bool(xp.any(xp.asarray(v, device=device))) == bool(np.any(v))
        assert xp.metrics()["eager_host_ops"] == 0
