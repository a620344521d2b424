"""One-element reads of pending elementwise work from one element of each input (runtime/sink.py), and the
small results of a reading evaluation downloaded with its read (residency.read_together)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.runtime import sink

from .conftest import assert_same


def _device_only(h: np.ndarray, device: xp.Device) -> Any:
    with xp.config(offload="always"):
        g = xp.asarray(h, device=device) + 0        # a kernel's result: no host copy
        xp.evaluate(g)
    return g


def test_element_of_pending_work_reads_no_device(wgpu_device: xp.Device) -> None:
    """``float((a * 2 + b)[i])`` with a's and b's elements known on the host takes no kernel and no read, and the
    pending array stays pending (computed whole, right, when read whole)."""
    ha = np.linspace(-3, 3, 300).astype(np.float32)
    hb = np.arange(300, dtype=np.float32)
    a, b = _device_only(ha, wgpu_device), xp.asarray(hb, device=wgpu_device)
    with xp.config(offload="auto"):
        assert float(a[7]) == ha[7]                 # one element read, kept (residency.element)
        y = a * 2 + b
        xp.reset_metrics()
        assert float(y[7]) == float(ha[7] * np.float32(2) + hb[7])
        m = xp.metrics()
        assert m["dispatches"] == 0 and m["bytes_downloaded"] == 0, m
        assert y._node.data is None
        assert_same(y, ha * np.float32(2) + hb)
        z = xp.exp(_device_only(ha * 2, wgpu_device)) - 1
        assert sink.sunk(z[8]._node) is None        # an element not known on the host: evaluated as recorded
        assert float(z[8]) == pytest.approx(float(np.expm1(ha[8] * 2)), rel=2e-6)


def test_scipy_is_lazy_check_after_the_mean_reads_nothing(wgpu_device: xp.Device) -> None:
    """SciPy's ``is_lazy_array(x - mean)``: the first check computes the mean (one read, the mean downloaded
    with it), a later check of ``(x - mean) * (x - mean)`` none."""
    h = np.random.default_rng(0).standard_normal(1 << 18).astype(np.float32)
    x = _device_only(h, wgpu_device)
    with xp.config(offload="auto"):
        assert bool(xp.any(xp.reshape(x, (-1,))[0])) == bool(h[0] != 0)
        mean = xp.mean(x, keepdims=True)
        d = x - mean
        xp.reset_metrics()
        assert bool(xp.any(xp.reshape(d, (-1,))[0])) is True
        assert xp.metrics()["submits"] == 1
        xp.reset_metrics()
        assert bool(xp.any(xp.reshape(d * d, (-1,))[0])) is True
        m = xp.metrics()
        assert m["dispatches"] == 0 and m["bytes_downloaded"] == 0 and m["submits"] == 0, m
        assert float(xp.mean(d * d)) == pytest.approx(float(np.mean((h - h.mean()) ** 2)), rel=1e-4)


@pytest.mark.parametrize("dt", ["float32", "int32", "bool"])
def test_any_all_of_a_known_element_run_at_once(wgpu_device: xp.Device, dt: str) -> None:
    """``any`` / ``all`` of a one-element view of evaluated device data whose element is known on the host (read
    once before) are computed at once on the host (evaluated results, no evaluation); NumPy's values for NaN,
    -0.0, inf, integer extremes and False; an unknown element, or ``offload="always"``, stays a reduction."""
    vals = {"float32": [np.nan, -0.0, np.inf, 0.0, 1.5], "int32": [np.iinfo(np.int32).min, 0, 7, -1, 0],
            "bool": [False, True, False, True, False]}[dt]
    h = np.array(vals * 60, dtype=dt).reshape(30, 10)
    x = _device_only(h, wgpu_device)
    with xp.config(offload="auto"):
        for i in range(5):
            flat = xp.reshape(x, (-1,))
            bool(flat[i])                           # the element read once (residency.element keeps it)
            bool(x[2, 4])
            xp.reset_metrics()
            for f, nf in ((xp.any, np.any), (xp.all, np.all)):
                r = f(flat[i])
                assert r._node.data is not None and r._node.data.host is not None
                assert bool(r) == bool(nf(h.reshape(-1)[i])) and r.dtype == xp.bool and r.shape == ()
            r2 = xp.any(x[1:3, 4:5][1:2, :], axis=1)       # a (1, 1)-shaped view: the reduced shape kept
            assert r2.shape == (1,) and bool(r2[0]) == bool(h[2, 4])
            m = xp.metrics()
            assert m["evaluations"] == 0 and m["submits"] == 0, m
        unknown = xp.any(xp.reshape(x, (-1,))[57])
        assert unknown._node.data is None and bool(unknown) == bool(h.reshape(-1)[57])
    with xp.config(offload="always"):
        assert xp.any(xp.reshape(x, (-1,))[0])._node.data is None


def test_quick_test_refuses_reads_through_a_reduction(wgpu_device: xp.Device) -> None:
    """A one-element view of ``x - mean`` with ``mean`` pending is no candidate (the rewrite would stop at the
    reduction): the read computes it as recorded, and right."""
    h = np.random.default_rng(1).uniform(-30, 30, (257, 3)).astype(np.float32)
    x = _device_only(h, wgpu_device)
    with xp.config(offload="auto"):
        float(x[0, 0])
        d = x - xp.mean(x, axis=0, keepdims=True)
        assert not sink.candidate(xp.reshape(d, (-1,))[1]._node)
        assert float(d[0, 1]) == pytest.approx(float(h[0, 1] - h[:, 1].astype(np.float64).mean()), abs=1e-4)
        e = x * 2 + 1
        assert sink.candidate(xp.any(xp.reshape(e, (-1,))[0])._node)
        y = _device_only(h, wgpu_device)            # none of its elements read: no candidate either
        m = xp.mean(y, axis=0, keepdims=True)
        xp.evaluate(m)
        dy = y - m
        assert not sink.candidate(xp.any(xp.reshape(dy, (-1,))[0])._node)
        assert bool(xp.any(xp.reshape(dy, (-1,))[0])) == bool(float(h[0, 0]) != float(np.asarray(m)[0, 0]))
        float(y[0, 0])
        assert sink.candidate(xp.any(xp.reshape(dy, (-1,))[0])._node)


@pytest.mark.parametrize("seed", range(40))
def test_rewritten_reads_match_numpy(wgpu_device: xp.Device, seed: int) -> None:
    """Random elementwise expressions over broadcast operands, transposes, flips, strided slices, reshapes and
    casts, read one element at a time (``float``, ``bool``, ``int``, ``x[i, j]``, ``any(reshape(.., -1)[k])``)
    with every input known on the host (host copies): NumPy's values, NaN and signed zeros included; the
    expression itself stays pending and is right when read whole."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-3, 3, (6, 5)).astype(np.float32)
    a.reshape(-1)[rng.integers(0, 30, 3)] = [np.nan, -0.0, np.inf]
    b = rng.uniform(-2, 2, (5,)).astype(np.float32)
    c = rng.integers(-4, 5, (6, 1)).astype(np.int32)
    ga, gb, gc = (xp.asarray(v, device=wgpu_device) for v in (a, b, c))
    forms = [
        lambda m, a, b, c: a * b + c,
        lambda m, a, b, c: m.abs(a.T[::-1]) - b[:, None],
        lambda m, a, b, c: m.reshape(a[1::2, ::-2] * 2, (9,)),
        lambda m, a, b, c: m.where(a > b, a, c),
        lambda m, a, b, c: (a - b) * (a - b) / (1 + m.abs(c)),
        lambda m, a, b, c: m.astype(a * 3, m.int32) + c,
        lambda m, a, b, c: m.sqrt(m.abs(a)) + m.reshape(b, (1, 5)),
    ]
    form = forms[seed % len(forms)]
    want = form(np, a, b, c)
    with xp.config(offload="always"):
        got = form(xp, ga, gb, gc)                  # recorded, not computed at once on the host
    with xp.config(offload="auto"), np.errstate(all="ignore"):
        for idx in itertools.islice(np.ndindex(*want.shape), seed % 3, None, 7):
            g = got[idx]
            assert sink.sunk(g._node) is not None
            w = want[idx]
            v = g._scalar("float") if want.dtype.kind == "f" else int(g)
            if np.isnan(w):
                assert np.isnan(v)
            else:
                assert v == w and np.signbit(v) == np.signbit(w), (idx, v, w)
            assert bool(xp.any(xp.reshape(got, (-1,))[int(np.ravel_multi_index(idx, want.shape))])) == \
                bool(np.any(want.reshape(-1)[np.ravel_multi_index(idx, want.shape)]))
        assert_same(got, want)


def test_reads_of_packed_results_under_auto(wgpu_device: xp.Device) -> None:
    """Reads whose target shares a buffer with more (linear algebra's results packed before an error flag) or
    is a prefix of another array keep their plain download under ``offload="auto"``: ``read_together`` takes
    only data whose buffer holds exactly its elements (``np.polyfit``'s ``lstsq`` raised ValueError here)."""
    rng = np.random.default_rng(5)
    h = rng.standard_normal((300, 300)) + 30 * np.eye(300)
    xs, ys = np.linspace(-1, 1, 5000), rng.standard_normal(5000)
    with xp.config(offload="auto"):
        a = _device_only(h, wgpu_device)
        assert float(xp.linalg.det(a)) == pytest.approx(float(np.linalg.det(h)), rel=1e-9)
        sign, logdet = xp.linalg.slogdet(a)
        assert float(sign) == 1.0 and float(logdet) == pytest.approx(float(np.linalg.slogdet(h)[1]), rel=1e-12)
        got = np.polyfit(_device_only(xs, wgpu_device), _device_only(ys, wgpu_device), 3)
        np.testing.assert_allclose(np.asarray(got), np.polyfit(xs, ys, 3), rtol=1e-9, atol=1e-12)
        q, r = xp.linalg.qr(a)
        np.testing.assert_allclose(np.abs(np.asarray(r)), np.abs(np.linalg.qr(h)[1]), rtol=1e-9, atol=1e-9)


def test_read_together_takes_only_whole_buffers(wgpu_device: xp.Device) -> None:
    """A target or companion whose buffer holds more than its elements (a packed result before its flag) is
    left to the plain download; whole ones come back together, each with its host copy."""
    from gpuarray.runtime.residency import Data, read_together

    prov: Any = wgpu_device.provider
    packed = Data(np.dtype(np.float32), (5,), handle=prov.upload(np.arange(8, dtype=np.float32)), provider=prov)
    one = Data(np.dtype(np.float32), (1,), handle=prov.upload(np.full(1, 7, np.float32)), provider=prov)
    read_together([packed], [one])          # (such data is read by its flag's element, never whole)
    assert packed.host is None and one.host is None
    flag = Data(np.dtype(np.bool_), (), handle=prov.upload(np.ones((), np.bool_)), provider=prov)
    two = Data(np.dtype(np.float64), (2,), handle=prov.upload(np.array([1.5, -0.0])), provider=prov)
    read_together([flag], [packed, one, two])
    assert flag.host is not None and bool(flag.host) is True
    assert packed.host is None
    np.testing.assert_array_equal(one.host, [7.0])
    assert_same(two.host, np.array([1.5, -0.0]))
