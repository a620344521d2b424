"""Evaluation plans (gpuarray/runtime/replay.py, providers/wgpu_replay.py): a repeated evaluation replays the
kernels recorded by the first, and only where that does what a fresh evaluation would.

Each test evaluates a graph several times with new data (new buffers), checks the values against
NumPy, and checks whether the plan ran (the provider's ``enqueue`` is not called when it does)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
import gpuarray.linalg.jacobi as _jacobi
from gpuarray.providers import wgpu_replay
from gpuarray.runtime import devices as _devices
from gpuarray.runtime import planner, replay

from .conftest import assert_same

rng = np.random.default_rng(7)


def _softmax(m: Any, mod: Any) -> Any:
    e = mod.exp(m - mod.max(m, axis=1, keepdims=True))
    return e / mod.sum(e, axis=1, keepdims=True)


CASES: dict[str, tuple[Callable[[Any, Any], Any], tuple[int, ...], float]] = {
    "x*2+1": (lambda x, m: x * 2 + 1, (4096,), 0.0),
    "chain": (lambda x, m: m.exp(-x * x * 0.5) * m.sin(x) + m.cos(x) * 0.25 - m.tanh(x), (5000,), 2e-6),
    "sum": (lambda x, m: m.sum(x), (100_000,), 1e-5),
    "sum axis=1": (lambda x, m: m.sum(x, axis=1), (300, 257), 1e-5),
    "std axis=0": (lambda x, m: m.std(x, axis=0), (513, 64), 1e-5),
    "softmax": (_softmax, (64, 300), 1e-6),
    "matmul": (lambda x, m: (x @ x.T) * 0.5, (65, 33), 1e-5),
    "argmax": (lambda x, m: m.argmax(x, axis=1), (70, 90), 0.0),
}


class _Counter:
    """Counts the provider's enqueues (a replayed evaluation makes none)."""

    def __init__(self, provider: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.n = 0
        orig = provider.enqueue

        def enqueue(k: Any, ins: Any) -> Any:
            self.n += 1
            return orig(k, ins)
        monkeypatch.setattr(provider, "enqueue", enqueue)


def _np(fn: Callable[[Any, Any], Any], h: np.ndarray) -> np.ndarray:
    return np.asarray(fn(h.astype(np.float64), np)).astype(np.float32) if h.dtype.kind == "f" else fn(h, np)


@pytest.mark.parametrize("case", list(CASES))
def test_replay_matches_a_fresh_evaluation(wgpu_device: xp.Device, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fn, shape, rtol = CASES[case]
    count = _Counter(_devices.provider_for(wgpu_device), monkeypatch)
    with xp.config(offload="always"):
        for i in range(4):
            h = rng.uniform(-3, 3, shape).astype(np.float32)
            x = xp.asarray(h, device=wgpu_device)            # a new buffer every time
            before = count.n
            y = fn(x, xp)
            xp.evaluate(y)
            if i >= 2:      # the first records, the second may re-record (pool state), then replays
                assert count.n == before, f"{case}: evaluation {i} was not replayed"
            want = _np(fn, h)
            assert_same(y, want.astype(np.asarray(y).dtype), rtol=rtol, atol=rtol)


def test_new_scalars_replay_with_their_values_new_shapes_and_dtypes_take_a_fresh_plan(
        wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    count = _Counter(_devices.provider_for(wgpu_device), monkeypatch)
    h = np.linspace(-2, 2, 1000, dtype=np.float32)
    with xp.config(offload="always"):
        x = xp.asarray(h, device=wgpu_device)
        for _ in range(3):
            assert_same(x * 2 + 1, h * 2 + 1)
        before = count.n
        for c in (3.0, -0.0, 0.0, float("nan"), float("-inf"), 2.0):     # constants by their bits
            # 1 ulp: NVIDIA's compiler contracts x * c + 1 into one fma (one rounding, NumPy's two)
            assert_same(x * c + 1, h * np.float32(c) + 1, rtol=float(np.finfo(np.float32).eps), atol=1e-6)
        assert count.n == before            # the plan of x * 2 + 1, its constants' words written anew
        assert_same(x * 2 + 1, h * 2 + 1)
        before = count.n
        hd = h.astype(np.float64)
        assert_same(xp.asarray(hd, device=wgpu_device) * 2 + 1, hd * 2 + 1)
        h2 = np.linspace(-2, 2, 999, dtype=np.float32)
        assert_same(xp.asarray(h2, device=wgpu_device) * 2 + 1, h2 * 2 + 1)
        hi = np.arange(1000, dtype=np.int32)
        assert_same(xp.asarray(hi, device=wgpu_device) * 2 + 1, hi * 2 + 1)
        assert count.n == before + 3        # (shapes and dtypes: new plans)


def test_constant_targets(wgpu_device: xp.Device) -> None:
    """A 0-d constant evaluated as it is: its value is the constant's, not the recorded one. (Values no
    other test uses: the evaluated constant node stays alive, and a later ``x + c`` reads it as an
    input instead of a parameter.)"""
    with xp.config(offload="always"):
        for _ in range(2):
            for v in (6.5, -7.25, 6.75):
                assert_same(xp.full((), v, dtype=xp.float32, device=wgpu_device), np.full((), v, np.float32))
            for v in (0.0, 1.0, -0.0, 2.5):
                assert_same(xp.full((3,), v, dtype=xp.float32, device=wgpu_device), np.full((3,), v, np.float32))


def test_aliased_and_distinct_inputs_are_told_apart(wgpu_device: xp.Device) -> None:
    """f(a, b) with two arrays and f(a, a) with one are different graphs (walk positions)."""
    ha, hb = np.arange(10, dtype=np.float32), np.arange(10, 20, dtype=np.float32)
    with xp.config(offload="always"):
        a, b = xp.asarray(ha, device=wgpu_device), xp.asarray(hb, device=wgpu_device)
        for _ in range(3):
            assert_same(a * 2 - b, ha * 2 - hb)
            assert_same(a * 2 - a, ha)
            assert_same(b * 2 - a, hb * 2 - ha)


def test_settings_and_residency_decide_as_a_fresh_evaluation(wgpu_device: xp.Device) -> None:
    h = np.linspace(0, 1, 256, dtype=np.float32)
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        for _ in range(3):
            xp.evaluate(x * 2 + 1)
    assert planner.decisions()[-1]["placed"] == "device"
    with xp.config(offload="never"):
        y = x * 2 + 1
        xp.evaluate(y)
        assert planner.decisions()[-1]["placed"] == "host"
        assert_same(y, h * 2 + 1)
    # offload="auto": the input on the device puts the kernel there; a host-only input of the
    # same shape (small) keeps it on the host
    with xp.config(offload="auto", eager_host=False, elementwise_threshold=1 << 20):
        d = xp.asarray(h, device=wgpu_device)
        with xp.config(offload="always"):
            xp.evaluate(d * 1)           # d is on the device now
        for _ in range(3):          # (constants no other test evaluates: one on the device is an input there)
            y = d * 2.25 + 1.75
            xp.evaluate(y)
            assert planner.decisions()[-1]["placed"] == "device"
        hostonly = xp.asarray(h + 1, device=wgpu_device)
        y = hostonly * 2.25 + 1.75
        xp.evaluate(y)
        assert planner.decisions()[-1]["placed"] == "host", planner.decisions()[-1]
        assert_same(y, (h + 1) * np.float32(2.25) + np.float32(1.75))


def test_weights_sent_up_each_step_replay_under_auto(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    # a solver step (scikit-learn's LogisticRegression with scipy's L-BFGS): the data stays on the
    # device, new weights come from the host each step. The weights' upload during the recording does
    # not make them a resident input the plan requires (it did: every step was recorded afresh)
    count = _Counter(_devices.provider_for(wgpu_device), monkeypatch)
    h = rng.uniform(-3, 3, (300, 8)).astype(np.float32)
    with xp.config(offload="auto", eager_host=False, elementwise_threshold=1 << 20, reduction_threshold=1 << 20):
        data = xp.asarray(h, device=wgpu_device)
        with xp.config(offload="always"):
            xp.evaluate(data * 1)           # the data on the device now
        seen = []
        for _ in range(4):
            w_host = rng.uniform(-1, 1, 8).astype(np.float32)
            w = xp.asarray(w_host, device=wgpu_device)         # on the host until a kernel needs it
            y = xp.sum(xp.exp(data * w - 1.5), axis=1)
            xp.evaluate(y)
            assert planner.decisions()[-1]["placed"] == "device"
            assert_same(y, np.sum(np.exp(h.astype(np.float64) * w_host - 1.5), axis=1).astype(np.float32), rtol=1e-5)
            seen.append(count.n)
        assert seen[3] == seen[2] == seen[1], seen        # the second step on: the plan, no enqueue
        # the same graph over host-only data (small): the host, as a fresh evaluation decides
        other, w = xp.asarray(h + 1, device=wgpu_device), xp.asarray(w_host, device=wgpu_device)
        y = xp.sum(xp.exp(other * w - 1.5), axis=1)
        xp.evaluate(y)
        assert planner.decisions()[-1]["placed"] == "host", planner.decisions()[-1]
        assert_same(y, np.sum(np.exp((h + 1).astype(np.float64) * w_host - 1.5), axis=1).astype(np.float32), rtol=1e-5)


def test_no_plan_while_profiling_or_disabled(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    count = _Counter(_devices.provider_for(wgpu_device), monkeypatch)
    h = np.linspace(0, 1, 256, dtype=np.float32)
    with xp.config(offload="always"):
        x = xp.asarray(h, device=wgpu_device)
        for _ in range(3):
            xp.evaluate(x - 4)
        before = count.n
        with xp.profile():
            y = x - 4
            xp.evaluate(y)
        assert count.n == before + 1
        del y                           # else x - 4 below is this node, evaluated already
        monkeypatch.setattr(replay, "ENABLED", False)
        for _ in range(2):
            assert_same(x - 4, h - 4)
        assert count.n == before + 3


def test_programs_refuse_what_they_cannot_repeat(wgpu_device: xp.Device) -> None:
    """An enqueue that uploads (or binds a buffer it did not allocate) is not recorded."""
    p = _devices.provider_for(wgpu_device)
    h = p.alloc(64)
    rec = wgpu_replay.Recorder([h])
    p._recorder = rec
    try:
        other = p.upload(np.zeros(4, np.float32))
    finally:
        p._recorder = None
    assert not rec.ok and rec.program([]) is None
    rec = wgpu_replay.Recorder([h])
    rec.dispatch(None, None, np.zeros(1, np.uint32), [other], 1, 1, 16)
    assert not rec.ok
    p.free(h)
    p.free(other)


def test_replay_counts_dispatches_and_logs_decisions(wgpu_device: xp.Device) -> None:
    h = np.linspace(-1, 1, 50_000, dtype=np.float32)
    with xp.config(offload="always"):
        x = xp.asarray(h, device=wgpu_device)
        for _ in range(2):
            xp.evaluate(xp.sum(x * x))
        xp.reset_metrics()
        n = len(planner.decisions())
        y = xp.sum(x * x)
        xp.evaluate(y)
        m = xp.metrics()
        assert m["evaluations"] == 1 and m["dispatches"] >= 1
        assert planner.decisions()[-1]["placed"] == "device"
        assert len(planner.decisions()) >= min(n + 1, 256) - 1
        assert float(y) == pytest.approx(float(np.sum(h.astype(np.float64) ** 2)), rel=1e-5)


def test_methods_and_scalar_reads_replay_with_their_own_inputs(wgpu_device: xp.Device,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``x.std(axis=0, ddof=k)`` and ``float(x.sum())`` (the methods' common case, a scalar read
    through the small reader) replay their plans over new buffers, and a new ``ddof`` (a new constant)
    replays the plan with its value: each value is the one NumPy gives for that evaluation's data."""
    count = _Counter(_devices.provider_for(wgpu_device), monkeypatch)
    with xp.config(offload="always"):
        for i, ddof in enumerate((1, 1, 1, 2, 2, 1, 1, 0, 0, 0)):
            h = rng.uniform(-3, 3, (97, 33)).astype(np.float32)
            x = xp.asarray(h, device=wgpu_device)            # a new buffer every time
            before = count.n
            s = x.std(axis=0, ddof=ddof)
            xp.evaluate(s)
            if i >= 2 and i != 7:      # (ddof 0: one divisor for the mean and the variance, another graph)
                assert count.n == before, f"evaluation {i} (ddof {ddof}) was not replayed"
            want = h.astype(np.float64).std(axis=0, ddof=ddof).astype(np.float32)
            assert_same(s, want, rtol=1e-5, atol=1e-6)
            got = float(x.sum())
            assert got == pytest.approx(float(h.astype(np.float64).sum()), rel=1e-5, abs=1e-4)
            assert float(x[i].max()) == float(h[i].max())


def test_long_kernels_submit_early_and_replay_the_submits(wgpu_device: xp.Device,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """QR, LU and Cholesky submit their pass part way (``submit_early``) so that the GPU starts while
    the rest is recorded; a replayed evaluation submits at the same points and computes the same."""
    from gpuarray.providers import webgpu
    monkeypatch.setattr(webgpu, "LONG_SUBMIT", 3)
    monkeypatch.setattr(webgpu, "FIRST_SUBMIT", 2)
    provider = _devices.provider_for(wgpu_device)
    count = _Counter(provider, monkeypatch)
    n = 130
    with xp.config(offload="always"):
        for i in range(4):
            h = rng.uniform(-3, 3, (n, n)).astype(np.float32)
            spd = (h @ h.T / n + np.eye(n)).astype(np.float32)
            before, subs = count.n, xp.metrics()["submits"]
            q, r = xp.linalg.qr(xp.asarray(h, device=wgpu_device))
            x = xp.linalg.solve(xp.asarray(h, device=wgpu_device), xp.asarray(h[:, :3], device=wgpu_device))
            c = xp.linalg.cholesky(xp.asarray(spd, device=wgpu_device))
            xp.evaluate(q, r, x, c)
            assert xp.metrics()["submits"] - subs > 6          # several a kernel
            if i >= 2:
                assert count.n == before, f"evaluation {i} was not replayed"
            q64, r64 = np.asarray(q).astype(np.float64), np.asarray(r).astype(np.float64)
            assert np.abs(q64 @ r64 - h).max() < 1e-4
            assert np.abs(h.astype(np.float64) @ np.asarray(x) - h[:, :3]).max() < 1e-2
            c64 = np.asarray(c).astype(np.float64)
            assert np.abs(c64 @ c64.T - spd).max() < 1e-4


def test_a_constant_made_anew_with_the_same_value_still_replays(wgpu_device: xp.Device,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """graph.node keeps the last 512 constants and then forgets them: a constant made again with the same
    value is a new node, whose plan replays (as one of a new value does). Before, plans compared the
    constants' nodes, so that a forgotten one re-recorded the plan (a CI run failed on it at random)."""
    from gpuarray.graph import node as graph_node
    count = _Counter(_devices.provider_for(wgpu_device), monkeypatch)
    with xp.config(offload="always"):
        for i, (c, forget, replays) in enumerate(((2.5, False, False), (2.5, True, True), (2.75, False, True),
                                                  (2.75, True, True))):
            h = rng.uniform(-3, 3, 1000).astype(np.float32)
            x = xp.asarray(h, device=wgpu_device)
            if forget:
                graph_node._recent_consts.clear()
            before = count.n
            y = x * c + 1.0
            xp.evaluate(y)
            assert (count.n == before) == replays, f"evaluation {i} (constant {c})"
            # (a GPU's compiler may fuse the multiply and the add: within rounding)
            np.testing.assert_allclose(np.asarray(y), h * np.float32(c) + np.float32(1.0), rtol=1e-6, atol=1e-6)


def test_programs_bind_again_what_they_bound_while_the_buffers_are_the_same(wgpu_device: xp.Device) -> None:
    """A replayed program binds the bind groups of its last run while it binds the same buffers (no
    lookups in the bind-group cache), and looks them up again when one differs (a new input, another
    buffer from the pool): the values are right either way."""
    prov: Any = _devices.provider_for(wgpu_device)
    n = 96
    hs = [rng.uniform(-3, 3, (n, n)).astype(np.float32) for _ in range(2)]
    xs = [xp.asarray(h, device=wgpu_device) for h in hs]
    with xp.config(offload="always"):
        for i in range(8):
            j = 0 if i < 5 else i % 2           # the same input five times, then alternating
            hits = prov.bindings.hits + prov.bindings.misses
            q, r = xp.linalg.qr(xs[j])           # one program of many dispatches
            xp.evaluate(q, r)
            looked = prov.bindings.hits + prov.bindings.misses - hits
            if 3 <= i < 5:                      # the first replay and the one after it look up (two slots)
                assert looked == 0, f"evaluation {i}: {looked} bind-group lookups"
            q64, r64 = np.asarray(q).astype(np.float64), np.asarray(r).astype(np.float64)
            assert np.abs(q64 @ r64 - hs[j]).max() < 1e-4
            assert np.abs(q64.T @ q64 - np.eye(n)).max() < 1e-4
            del q, r


def test_device_work_before_a_fallback_replays(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """PCA's covariance ``X.T @ X / n`` and then ``eigh`` of that one small matrix (LAPACK on the host: a
    fallback) in one evaluation: the device part is evaluated first, on its own, and replays from the
    second time on (no enqueue); the results match NumPy each time, with new data each time. (The device's
    Jacobi ``eigh`` is turned off: LAPACK takes the matrix, as it does complex ones.)"""
    monkeypatch.setattr(_jacobi, "applies", lambda n: False)     # LAPACK's eigh: a host fallback
    count = _Counter(_devices.provider_for(wgpu_device), monkeypatch)
    seen = []
    for i in range(4):
        h = rng.uniform(-3, 3, (4000, 16)).astype(np.float32)
        x = xp.asarray(h, device=wgpu_device)
        c = (x.T @ x) / 4000.0 - 0.5
        w, v = xp.linalg.eigh(c)
        xp.evaluate(w, v)
        c64 = h.astype(np.float64).T @ h / 4000 - 0.5
        assert_same(w, np.linalg.eigvalsh(c64).astype(np.float32), rtol=1e-4, atol=1e-4)
        vv = np.asarray(v).astype(np.float64)
        np.testing.assert_allclose(c64 @ vv, vv * np.asarray(w), atol=1e-3)
        seen.append(count.n)
        if i == 0:
            kinds = [(d["kernel"].split("(")[-1], d["placed"]) for d in planner.decisions()[-3:]]
            assert kinds[0][1] == "device" and any(p == "fallback" for _, p in kinds), kinds
    assert seen[3] == seen[2] == seen[1], seen
