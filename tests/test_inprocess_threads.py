"""Fused kernels on the in-process provider split over threads (``providers/inprocess.py``: ``THREADS``,
``PARALLEL_MIN``): the same bits as one thread, every output and dtype, element counts that leave the
last part short, and an error in a worker raised to the caller with the inputs intact."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler import plan_cache
from gpuarray.providers import inprocess


def chain8(p: Any, a: Any) -> Any:
    return p.exp(-a * a * 0.5) * p.sin(a) + p.cos(a) * 0.25 - p.tanh(a)


def _run(monkeypatch: pytest.MonkeyPatch, threads: int, fn: Any, *hosts: np.ndarray) -> list[np.ndarray]:
    monkeypatch.setattr(inprocess, "THREADS", threads)
    monkeypatch.setattr(inprocess, "PARALLEL_MIN", 1 << 15)
    plan_cache.clear()
    with xp.config(offload="always"):
        args = [xp.asarray(h, device="cpu") for h in hosts]
        outs = fn(*args)
        outs = outs if isinstance(outs, tuple) else (outs,)
        xp.evaluate(*outs)
        return [np.asarray(o) for o in outs]


@pytest.mark.parametrize("n", [100003, 1 << 17, 3 * 65536 + 64])
def test_threads_give_the_same_bits(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """chain8 in float32 and float64, two outputs of one kernel, integer and boolean results, a cast,
    NaN and infinities: three threads give one thread's bits, and NumPy's values."""
    rng = np.random.default_rng(n)
    h = rng.uniform(-30, 30, n).astype(np.float32)
    h[::977] = np.nan
    h[5::1009] = np.inf
    i = rng.integers(-2**31, 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    cases = {
        "chain8 float32": (lambda a, b: chain8(xp, a), (h, i)),
        "chain8 float64": (lambda a, b: chain8(xp, a), (h.astype(np.float64), i)),
        "two outputs": (lambda a, b: (xp.exp(a) * 2 + 1, xp.sqrt(xp.abs(a)) - a), (h, i)),
        "integers": (lambda a, b: ((b * 3) ^ 5) + xp.astype(a > 0, xp.int32), (h, i)),
        "mixed": (lambda a, b: xp.where(a > b.astype(xp.float32) * 1e-9, a, -a) * 2, (h, i)),
        "one op": (lambda a, b: a + 1.5, (h, i)),
    }
    for name, (fn, hosts) in cases.items():
        with np.errstate(all="ignore"):
            one = _run(monkeypatch, 1, fn, *hosts)
            three = _run(monkeypatch, 3, fn, *hosts)
        for a, b in zip(one, three, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape == (n,), name
            assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), name
    with np.errstate(all="ignore"):
        want = chain8(np, h.astype(np.float64)).astype(np.float32)
        got = _run(monkeypatch, 3, lambda a: chain8(xp, a), h)[0]
    fin = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[fin], want[fin], rtol=2e-6, atol=2e-6)


def test_an_error_in_a_worker_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    """An instruction that fails in another thread raises in the evaluating thread, after every part has
    stopped; the arrays that went in stay usable."""
    n = 1 << 17
    h = np.random.default_rng(1).uniform(-3, 3, n).astype(np.float32)
    orig = inprocess._apply
    main = threading.get_ident()

    def failing(op: str, fn: Any, ins: Any, args: list[Any], out: np.ndarray) -> None:
        if threading.get_ident() != main:
            raise RuntimeError("a worker failed")
        orig(op, fn, ins, args, out)
    monkeypatch.setattr(inprocess, "THREADS", 2)
    monkeypatch.setattr(inprocess, "PARALLEL_MIN", 1 << 15)
    monkeypatch.setattr(inprocess, "_apply", failing)
    plan_cache.clear()
    x = xp.asarray(h, device="cpu")
    with xp.config(offload="always"), pytest.raises(RuntimeError, match="a worker failed"):
        xp.evaluate(xp.exp(x) * 2 + xp.sin(x))
    monkeypatch.setattr(inprocess, "_apply", orig)
    np.testing.assert_array_equal(np.asarray(x), h)
    with xp.config(offload="always"):
        y = xp.exp(x) * 2 + xp.sin(x)
        np.testing.assert_allclose(np.asarray(y), np.exp(h) * 2 + np.sin(h), rtol=1e-6)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")
def test_a_forked_child_gets_its_own_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the pool has run in the parent, a forked child's fused kernels still finish (its copy of the
    parent's pool has no threads: it makes a new one)."""
    import multiprocessing as mp
    monkeypatch.setattr(inprocess, "THREADS", 2)
    monkeypatch.setattr(inprocess, "PARALLEL_MIN", 1 << 15)
    h = np.random.default_rng(2).uniform(-3, 3, 1 << 17).astype(np.float32)
    want = _run(monkeypatch, 2, lambda a: chain8(xp, a), h)[0]
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(_child_chain8, (h,)).get(timeout=120)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


def _child_chain8(h: np.ndarray) -> np.ndarray:
    inprocess.THREADS = 2
    inprocess.PARALLEL_MIN = 1 << 15
    plan_cache.clear()
    with xp.config(offload="always"):
        y = chain8(xp, xp.asarray(h, device="cpu"))
        xp.evaluate(y)
        return np.asarray(y).copy()
