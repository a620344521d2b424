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
