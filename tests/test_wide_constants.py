"""64-bit constants (float64 / int64 scalars: WGSL has no 64-bit uniforms, so a kernel reads them
from a storage array) kept by value on wgpu (``wgpu_bindings.wide_buffers`` in the provider's
``KeptBuffers``): a warm call of every kernel kind with such a constant in its fused prologue or
epilogue creates no buffer and no bind group (issue 16), and the kept constants cannot push the
FFT twiddle tables out of the provider's static buffers.

Buffers and bind groups created by the 4 counted warm evaluations below on this machine's lavapipe
before the change (each kind bound its constants from ``provider.data_buffer``, new every call; the
chunked scan and two-pass argmax also uploaded zero-filled scratch): 4 and 4 for most kinds (one
kernel with a constant a call; 5 and 5 for the linalg ones), 16 and 12 for the chunked scan, 12 and 8
for two-pass argmax, 8 and 8 for radix sort, 16 and 16 for the split elementwise kernel (4 chunks),
12 and 8 for scatter, 9 and 9 for histogram through extremes and for compaction; after: 0 and 0 for
every case (elementwise, reduce and select were 0 already).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import webgpu, wgpu_scan
from gpuarray.providers.wgpu_bindings import KeptBuffers

from .conftest import assert_same, record_creations

_RNG = np.random.default_rng(7)
X = _RNG.standard_normal(1 << 16)                       # float64
XS = _RNG.standard_normal(1000)
K = _RNG.integers(-1000, 1000, 1 << 14)                 # int64
M = _RNG.uniform(0.5, 3.0, (64, 48))
A = _RNG.standard_normal((64, 64))
B = _RNG.standard_normal((64, 64))
G = _RNG.standard_normal((1024, 4))
W = _RNG.standard_normal((1024, 64))
KS, KT = _RNG.standard_normal((16, 8192)), _RNG.standard_normal((8192, 16))
S16 = A[:16, :16] @ A[:16, :16].T + 16 * np.eye(16)
S48 = A[:48, :48] @ A[:48, :48].T + 48 * np.eye(48)
IDX = _RNG.integers(0, 100, 5000)
PERM = _RNG.permutation(1 << 16)[:1000]


def _scatter(p: Any, x: Any, i: Any, v: Any) -> Any:
    y = x * 1.0
    y[i + 0] = v * 2.0      # a computed index: a host-side index is linearized and uploaded each call
    return y


# name: (function of (namespace, *arrays), host arrays, the provider module that dispatches it)
CASES: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...], str]] = {
    "elementwise": (lambda p, x: x * 2.5 + 1.0, (X,), "webgpu.py"),
    "split": (lambda p, x: x * 2.5 + 2.0, (X,), "wgpu_split.py"),      # not "elementwise"'s: a fresh result
    "scan chunked": (lambda p, x: p.cumulative_sum(x * 2.5), (X,), "wgpu_scan.py"),
    "scan serial": (lambda p, m: p.cumulative_sum(m * 2.5, axis=1), (M,), "wgpu_scan.py"),
    "scan int64": (lambda p, k: p.cumulative_sum(k * 3 + 1), (K,), "wgpu_scan.py"),
    "scan lookback": (lambda p, x: p.cumulative_sum(x * 2.5), (X,), "wgpu_scan_lookback.py"),
    "scan lookback int64": (lambda p, k: p.cumulative_sum(k * 5 - 2), (K,), "wgpu_scan_lookback.py"),
    "reduce": (lambda p, x: p.sum(x * 3.0), (X,), "wgpu_reduce.py"),
    "reduce axis 0": (lambda p, m: p.sum(m * 3.0, axis=0), (M,), "wgpu_reduce.py"),
    "rowfuse": (lambda p, m: m * 1.5 - p.mean(m, axis=1, keepdims=True), (M,), "wgpu_reduce.py"),
    "colfuse": (lambda p, m: m * 1.5 - p.mean(m, axis=0), (M,), "wgpu_colfuse.py"),
    "matmul": (lambda p, a, b: a @ b * 1.5, (A, B), "wgpu_matmul.py"),
    "matmul skinny": (lambda p, g, w: g.T @ w * 1.5, (G, W), "wgpu_matmul.py"),
    "matmul split-K": (lambda p, a, b: a @ b * 1.5, (KS, KT), "wgpu_matmul.py"),
    "matmul gemv": (lambda p, w, v: w @ v * 1.5, (W, W[0]), "wgpu_matmul.py"),
    "matmul gemv split": (lambda p, w, v: w.T @ v * 1.5, (W, W[:, 0]), "wgpu_matmul.py"),
    "argmax": (lambda p, x: p.argmax(x + 1.5), (X,), "wgpu_argreduce.py"),
    "argmax int64": (lambda p, k: p.argmin(k * 3 - 7), (K,), "wgpu_argreduce.py"),
    "argmax rows": (lambda p, m: p.argmax(m + 1.5, axis=1), (M,), "wgpu_argreduce.py"),
    "sort": (lambda p, x: p.sort(x * 2.0), (XS,), "wgpu_sort.py"),
    "sort radix": (lambda p, x: p.sort(x[:1 << 15] * 2.0), (X,), "wgpu_radix.py"),
    "sort int64": (lambda p, k: p.sort(k * 3 - 7), (K,), "wgpu_radix.py"),
    "searchsorted": (lambda p, s, v: p.searchsorted(s, v * 2.0), (np.sort(XS), XS), "wgpu_sort.py"),
    "fft": (lambda p, x: p.fft.fft(x[:512] * 2.0), (X,), "wgpu_fft.py"),
    "cholesky": (lambda p, s: p.linalg.cholesky(s * 2.0), (S16,), "wgpu_linalg.py"),
    "cholesky blocked": (lambda p, s: p.linalg.cholesky(s * 2.0), (S48,), "wgpu_linalg_blocked.py"),
    "solve": (lambda p, a, b: p.linalg.solve(a * 2.0, b), (S16, A[:16, :4]), "wgpu_linalg.py"),
    "det": (lambda p, a: p.linalg.det(a * 0.5), (S16,), "wgpu_linalg.py"),
    "scatter": (_scatter, (X, PERM, XS), "wgpu_scatter.py"),
    "histogram (scatter_add)": (lambda p, x: np.histogram(x * 2.0, bins=10, range=(-4.0, 4.0))[0], (X,),
                                "wgpu_scatter_add.py"),
    "histogram (extremes)": (lambda p, x: np.histogram(x * 2.0, bins=10)[0], (X,), "wgpu_extremes.py"),
    "bincount weights": (lambda p, i, w: np.bincount(i, weights=w * 2.0, minlength=100), (IDX, X[:5000]),
                         "wgpu_scatter_add.py"),
    "compact": (lambda p, x: x[x * 2.0 > 1.5], (XS,), "wgpu_compact.py"),
    "select": (lambda p, x: np.percentile(x * 2.0, 30), (X,), "wgpu_select.py"),
}


@pytest.fixture
def paths(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """The strategy a case names where the defaults would take another on this adapter."""
    case = request.node.callspec.params["case"]
    if case.startswith("scan lookback"):
        monkeypatch.setattr(wgpu_scan, "STRATEGY", "lookback")
    elif case in ("scan chunked", "scan int64"):        # a GPU adapter's default is the look-back scan
        monkeypatch.setattr(wgpu_scan, "STRATEGY", "parallel")


def _check(got: Any, want: Any) -> None:
    w = np.asarray(want)
    tol = 0.0 if w.dtype.kind not in "fc" else 1e-9 if w.dtype in (np.float64, np.complex128) else 1e-5
    scale = float(np.max(np.abs(w), initial=0.0)) if w.size else 0.0
    assert_same(got, w, rtol=tol, atol=tol * max(1.0, scale), check_signed_zero=False)


@pytest.mark.parametrize("case", list(CASES))
def test_kinds_with_wide_constants_match_numpy(device: xp.Device, case: str, paths: None,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    fn, hosts, _module = CASES[case]
    if case == "split" and device.kind == "wgpu":
        monkeypatch.setattr(device.provider, "max_binding", 1 << 18)     # X's 512 KiB: 2 bindings or more
    with xp.config(offload="always"):
        got = fn(xp, *(xp.asarray(h, device=device) for h in hosts))
        _check(got, fn(np, *hosts))


@pytest.mark.parametrize("case", list(CASES))
def test_warm_call_makes_no_buffer_or_bind_group(wgpu_device: xp.Device, case: str, paths: None,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Three calls, then five counted: no buffer, bind group or upload, nothing run on the host, and
    the intended kernel kind ran (its provider module dispatched in the first call)."""
    fn, hosts, module = CASES[case]
    prov: Any = wgpu_device.provider
    if case == "split":
        monkeypatch.setattr(prov, "max_binding", 1 << 18)
    dispatched: set[str] = set()
    real_dispatch = prov.dispatch

    def dispatch(*a: Any, **k: Any) -> Any:
        f = sys._getframe(1)            # the caller, and its caller where that is the provider's own helper
        dispatched.add(os.path.basename(f.f_code.co_filename))
        if f.f_code.co_name == "dispatch_elementwise" and f.f_back is not None:
            dispatched.add(os.path.basename(f.f_back.f_code.co_filename))
        return real_dispatch(*a, **k)

    with xp.config(offload="always"):
        gs = [xp.asarray(h, device=wgpu_device) for h in hosts]
        monkeypatch.setattr(prov, "dispatch", dispatch)
        xp.evaluate(fn(xp, *gs))
        monkeypatch.delattr(prov, "dispatch")
        assert module in dispatched, dispatched
        for _ in range(2):
            xp.evaluate(fn(xp, *gs))
        xp.synchronize(wgpu_device)
        misses = prov.bindings.misses
        made = record_creations(monkeypatch, prov)
        xp.reset_metrics()
        for _ in range(4):
            xp.evaluate(fn(xp, *gs))
        r = fn(xp, *gs)
        xp.synchronize(wgpu_device)
        m = xp.metrics()
        for name in ("create_buffer", "create_buffer_with_data", "create_bind_group"):
            monkeypatch.delattr(prov.device, name)
        assert made == [], made
        assert prov.bindings.misses == misses
        assert m["bytes_uploaded"] == 0 and m["host_fallbacks"] == 0, m
        _check(r, fn(np, *hosts))


def test_kept_buffers_least_recently_used_per_table() -> None:
    """Each table drops its least recently used entry (a hit counts as a use); constants (keys
    ``("wide", ...)``) and other tables never push each other out."""
    made: list[tuple] = []
    kept = KeptBuffers(lambda v: made.append(v) or SimpleNamespace(size=8), capacity=2, wide_capacity=3)
    tw = kept.get(("fft twiddles", 8), lambda: ("tw",))
    for i in range(3):
        kept.get(("wide", "<f8", i), lambda i=i: ("c", i))
    assert kept.get(("wide", "<f8", 0), lambda: ("again",))[0] is not None and ("again",) not in made   # a hit
    for i in range(3, 40):
        kept.get(("wide", "<f8", i), lambda i=i: ("c", i))
        kept.get(("wide", "<f8", 0), lambda: ("again",))             # used all along: kept
    assert list(kept.tables[1]) == [("wide", "<f8", 38), ("wide", "<f8", 39), ("wide", "<f8", 0)]
    assert ("again",) not in made and len(kept) == 4
    assert kept.get(("fft twiddles", 8), lambda: ("tw again",)) is tw           # not pushed out
    kept.get(("fft twiddles", 16), lambda: ("tw16",))
    kept.get(("fft twiddles", 8), lambda: ("tw again",))
    kept.get(("fft twiddles", 32), lambda: ("tw32",))                            # drops 16, not 8
    assert list(kept.tables[0]) == [("fft twiddles", 8), ("fft twiddles", 32)]
    assert ("tw again",) not in made
    kept.clear()
    assert len(kept) == 0


def test_kept_constants_do_not_evict_twiddles(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """A loop over ever new float64 constants keeps at most ``WIDE_KEEP`` of them, the oldest
    dropped first, and leaves the FFT twiddle table alone; results stay right throughout, those of
    programs replayed with a constant no longer in the table included (the program holds its buffer).
    (Evaluated afresh each time: a replayed plan puts new values into the parameter arena, below.)"""
    from gpuarray.runtime import replay
    prov: Any = wgpu_device.provider
    monkeypatch.setattr(replay, "ENABLED", False)
    h = XS[:256].astype(np.complex64)
    with xp.config(offload="always"):
        g = xp.asarray(h, device=wgpu_device)
        x = xp.asarray(XS, device=wgpu_device)
        xp.evaluate(xp.fft.fft(g))
        twiddles = {k: v[0] for k, v in prov._static.tables[0].items()}
        assert any(k[0].startswith("fft") for k in twiddles), twiddles
        for _ in range(3):
            xp.evaluate(x * 0.5 + 0.25)
        for i in range(webgpu.WIDE_KEEP + 40):
            c = 1.0 + i / 1024          # exact in float64: each a new constant (and a new buffer)
            y = x * c
            if i % 64 == 0:
                _check(y, XS * c)
            else:
                xp.evaluate(y)
        wide = prov._static.tables[1]
        assert len(wide) == webgpu.WIDE_KEEP
        assert ("wide", "<f8", np.array([1.0]).tobytes()) not in wide      # the oldest: dropped
        assert ("wide", "<f8", np.array([1.0 + (webgpu.WIDE_KEEP + 39) / 1024]).tobytes()) in wide
        assert {k: v[0] for k, v in prov._static.tables[0].items()} == twiddles
        _check(x * 0.5 + 0.25, XS * 0.5 + 0.25)
        _check(xp.fft.fft(g), np.fft.fft(h))
        monkeypatch.setattr(replay, "ENABLED", True)
        kept = dict(wide)
        for i in range(100):                # replayed: new values in the arena, no buffer kept for them
            c = 3.0 + i / 1024
            if i % 16 == 0:
                _check(x * c, XS * c)
            else:
                xp.evaluate(x * c)
        assert len([k for k in wide if k not in kept]) <= 3      # (the recordings' values)
