"""Reads computed ahead with the read before them (runtime/speculate.py): a loop that reads a loss, then a
gradient and an intercept recorded after that read, pays one evaluation an iteration, with NumPy's values;
followers that read only what the reads before them did not compute, that miss, or that draw random numbers
are not speculated."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.runtime import speculate


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    speculate.clear()
    yield
    speculate.clear()


def _data(n: int = 3000, d: int = 8) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return rng.uniform(-3, 3, (n, d)).astype(np.float32), np.where(rng.random(n) < 0.5, -1.0, 1.0).astype(np.float32)


def _step(X: Any, y: Any, w: Any, mod: Any) -> tuple[float, np.ndarray, float]:
    """scikit-learn's loss_gradient in small: the loss read, then the gradient and the intercept's, each
    recorded after the read before it returned."""
    raw = X @ w
    loss = float(mod.sum(mod.log1p(mod.exp(-raw * y))) / X.shape[0])
    g = -y / (1 + mod.exp(raw * y))
    g = g / X.shape[0]
    grad = np.asarray(X.T @ g)
    return loss, grad, float(mod.sum(g))


def _loop(X: Any, y: Any, hX: np.ndarray, hy: np.ndarray, device: xp.Device, offload: str) -> list[int]:
    """Six iterations with new weights, each compared with NumPy; the evaluations each took."""
    rng = np.random.default_rng(4)
    counts = []
    with xp.config(offload=offload):
        for _ in range(6):
            hw = rng.uniform(-0.5, 0.5, hX.shape[1]).astype(np.float32)
            xp.reset_metrics()
            got = _step(X, y, xp.asarray(hw, device=device), xp)
            counts.append(xp.metrics()["evaluations"])
            want = _step(hX, hy, hw, np)
            assert got[0] == pytest.approx(want[0], rel=1e-5)
            np.testing.assert_allclose(got[1], want[1], rtol=1e-4, atol=1e-6)
            assert got[2] == pytest.approx(want[2], rel=1e-4, abs=1e-6)
    return counts


def test_gradient_reads_join_the_loss_read(device: xp.Device) -> None:
    """From the third iteration on (learned from the first two) each iteration is one evaluation; every value is
    NumPy's, for new weights each time."""
    hX, hy = _data()
    counts = _loop(xp.asarray(hX, device=device), xp.asarray(hy, device=device), hX, hy, device, "always")
    assert counts[0] >= 3 and counts[3:] == [1, 1, 1], counts


def test_gradient_reads_join_under_auto(wgpu_device: xp.Device) -> None:
    """The same under ``offload="auto"`` with device-only data (scikit-learn's on a GPU). (Small arrays with host
    copies are computed at once on the host there, each a new leaf: nothing to compute ahead, or needed.)"""
    hX, hy = _data(20000, 16)
    with xp.config(offload="always"):
        X, y = xp.asarray(hX, device=wgpu_device) + 0, xp.asarray(hy, device=wgpu_device) + 0
        xp.evaluate(X, y)
    counts = _loop(X, y, hX, hy, wgpu_device, "auto")
    assert counts[3:] == [1, 1, 1], counts


def test_off_switch_keeps_one_evaluation_a_read(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(speculate, "ENABLED", False)
    hX, hy = _data()
    X, y = xp.asarray(hX, device=wgpu_device), xp.asarray(hy, device=wgpu_device)
    with xp.config(offload="always"):
        for k in range(4):
            xp.reset_metrics()
            _step(X, y, xp.asarray(np.full(hX.shape[1], 0.1 * k, np.float32), device=wgpu_device), xp)
            assert xp.metrics()["evaluations"] == 3


def test_a_later_calls_read_of_the_same_inputs_is_not_computed_ahead(wgpu_device: xp.Device) -> None:
    """``float(x.sum())`` then ``float((x * 2).max())`` in a loop: neither reads what the other computed, so the
    next iteration's reads are not computed ahead (that would only repeat the last ones): two evaluations each."""
    h = np.random.default_rng(5).uniform(-30, 30, 5000).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        for _ in range(5):
            xp.reset_metrics()
            assert float(xp.sum(x)) == pytest.approx(float(h.astype(np.float64).sum()), rel=1e-4)
            assert float(xp.max(x * 2)) == float((h * 2).max())
            assert xp.metrics()["evaluations"] == 2


def test_a_repeated_read_of_the_same_inputs_is_computed_again(wgpu_device: xp.Device) -> None:
    """``scipy.stats.skew``'s shape: the same precision check read twice a call over one pending mean, then the
    result evaluated; calls on the same input. The second check and the next call's first are the read
    itself again (the same nodes), so they are not kept: each call computes its mean and reads its checks
    (three evaluations a call, as the first), never an earlier call's values."""
    h = np.random.default_rng(6).uniform(-3, 3, (300, 64)).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device)

    def check(mean: Any) -> bool:
        d = x - mean
        return bool(xp.any(xp.max(xp.abs(d), axis=1, keepdims=True) / xp.abs(mean) < 1e-6))

    counts = []
    with xp.config(offload="always"):
        for _ in range(8):
            xp.reset_metrics()
            mean = xp.mean(x, axis=1, keepdims=True)
            assert not check(mean)
            m2 = xp.mean((x - mean) ** 2, axis=1)
            assert not check(mean)
            xp.evaluate(m2 / 2)
            counts.append((xp.metrics()["evaluations"], xp.metrics()["dispatches"]))
            np.testing.assert_allclose(np.asarray(m2), ((h - h.mean(axis=1, keepdims=True)) ** 2).mean(axis=1),
                                       rtol=1e-4)
    assert all(e == 3 and d >= 5 for e, d in counts), counts    # two reads and the result; the mean's
    # reduction, each check's max and any, the result's kernel (some fused: 5 to 7 dispatches)


def test_a_follower_that_changes_misses_then_stops(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gradient scaled by a new constant every iteration: the speculated one is never the one read (each
    iteration's values still NumPy's); after ``MISSES`` it is not speculated any more."""
    monkeypatch.setattr(speculate, "MAX_UPLOADS", 0)        # followers alone (reads started at uploads: below)
    hX, _ = _data(500, 4)
    X = xp.asarray(hX, device=wgpu_device)
    hw = np.full(4, 0.2, np.float32)
    extras = []
    with xp.config(offload="always"):
        for k in range(3 + 2 * speculate.MISSES):
            w = xp.asarray(hw, device=wgpu_device)
            raw = X @ w
            s = float(xp.sum(raw * raw))
            extras.append(len(speculate.state.kept))
            got = np.asarray(X.T @ (raw * float(k + 1)))
            np.testing.assert_allclose(got, hX.T @ ((hX @ hw) * np.float32(k + 1)), rtol=1e-4, atol=1e-4)
            assert s == pytest.approx(float(((hX @ hw) ** 2).sum()), rel=1e-4)
    assert any(extras) and not any(extras[-2:]), extras


def test_draws_are_not_computed_ahead(wgpu_device: xp.Device) -> None:
    """A follower that draws random numbers is not learned: a replayed draw would repeat its numbers."""
    gen = xp.random.default_rng(1, device=wgpu_device)
    x = xp.asarray(np.linspace(-3, 3, 4096, dtype=np.float32), device=wgpu_device)
    with xp.config(offload="always"):
        seen = set()
        for _ in range(4):
            m = x * 2 + 1
            float(xp.sum(m))
            assert not speculate.state.kept
            r = gen.random(16, dtype=xp.float32) + m[:16]
            v = tuple(np.asarray(r).tolist())
            assert v not in seen
            seen.add(v)


def test_kept_nodes_go_with_the_next_read(wgpu_device: xp.Device) -> None:
    """What a read computed ahead is kept only until the next read that computes nothing ahead."""
    hX, hy = _data(400, 4)
    X, y = xp.asarray(hX, device=wgpu_device), xp.asarray(hy, device=wgpu_device)
    with xp.config(offload="always"):
        for k in range(4):
            _step(X, y, xp.asarray(np.full(4, 0.1 * k, np.float32), device=wgpu_device), xp)
            xp.reset_metrics()
        raw = X @ xp.asarray(np.full(4, 0.7, np.float32), device=wgpu_device)
        float(xp.sum(xp.log1p(xp.exp(-raw * y))) / 400)
        assert speculate.state.kept                 # the loss read computed the gradient ahead
        float(xp.sum(X))                            # another read: nothing follows it
        assert not speculate.state.kept


def test_results_not_read_stop_being_computed_ahead(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gradient read in the first iterations only (a loop whose later iterations read the loss alone): what
    was computed ahead and not read counts as a miss, and after ``MISSES`` nothing is computed ahead."""
    monkeypatch.setattr(speculate, "MAX_UPLOADS", 0)        # followers alone (reads started at uploads: below)
    hX, hy = _data(400, 4)
    X, y = xp.asarray(hX, device=wgpu_device), xp.asarray(hy, device=wgpu_device)
    kept = []
    with xp.config(offload="always"):
        for k in range(4 + 2 * speculate.MISSES):
            w = xp.asarray(np.full(4, 0.05 * k, np.float32), device=wgpu_device)
            raw = X @ w
            loss = float(xp.sum(xp.log1p(xp.exp(-raw * y))))
            kept.append(len(speculate.state.kept))
            if k < 3:
                g = -y / (1 + xp.exp(raw * y))
                np.testing.assert_allclose(np.asarray(X.T @ g),
                                           hX.T @ (-hy / (1 + np.exp((hX @ np.full(4, 0.05 * k)) * hy))),
                                           rtol=1e-4, atol=1e-4)
            assert loss == pytest.approx(float(np.log1p(np.exp(-(hX @ np.full(4, 0.05 * k)) * hy)).sum()),
                                         rel=1e-5)
    assert any(kept[:4]) and not any(kept[-3:]), kept


def test_errors_while_computing_ahead_leave_the_read_right(wgpu_device: xp.Device,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An error while learning or making the reads ahead, or while evaluating them with the read, never fails
    the read: it runs alone (``speculate.errors`` counts), with NumPy's values."""
    monkeypatch.setattr(speculate, "MAX_UPLOADS", 0)        # followers alone (reads started at uploads: below)
    from gpuarray.runtime import planner
    hX, hy = _data(400, 4)
    X, y = xp.asarray(hX, device=wgpu_device), xp.asarray(hy, device=wgpu_device)
    w = [np.full(4, 0.1 * k, np.float32) for k in range(8)]
    with xp.config(offload="always"):
        for k in range(4):
            _step(X, y, xp.asarray(w[k], device=wgpu_device), xp)
        before = speculate.errors
        evaluate, raised = planner._evaluate, []

        def failing(nodes: Any, undo: Any, reading: bool = False, auto: bool = False, ahead: bool = False) -> None:
            evaluate(nodes, undo, reading, auto, ahead)
            if ahead and speculate.state.extra and not raised:
                raised.append(True)
                raise MemoryError("simulated: out of device memory for the reads computed ahead")
        monkeypatch.setattr(planner, "_evaluate", failing)
        got = _step(X, y, xp.asarray(w[4], device=wgpu_device), xp)
        want = _step(hX, hy, w[4], np)
        assert raised and speculate.errors == before + 1
        assert got[0] == pytest.approx(want[0], rel=1e-5)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-4, atol=1e-6)
        monkeypatch.setattr(planner, "_evaluate", evaluate)

        def broken(*args: Any) -> Any:
            raise KeyError("simulated: a template that cannot be made")
        monkeypatch.setattr(speculate, "reading", broken)
        got = _step(X, y, xp.asarray(w[5], device=wgpu_device), xp)
        want = _step(hX, hy, w[5], np)
        assert speculate.errors >= before + 2
        assert got[0] == pytest.approx(want[0], rel=1e-5)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-4, atol=1e-6)


def test_a_follower_that_cannot_be_made_is_dropped(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """A follower whose graph raises while it is made costs one error, then is not made again (each of the
    loop's followers once)."""
    monkeypatch.setattr(speculate, "MAX_UPLOADS", 0)        # followers alone (reads started at uploads: below)
    hX, hy = _data(400, 4)
    X, y = xp.asarray(hX, device=wgpu_device), xp.asarray(hy, device=wgpu_device)
    with xp.config(offload="always"):
        for k in range(3):
            _step(X, y, xp.asarray(np.full(4, 0.1 * k, np.float32), device=wgpu_device), xp)
        calls: list[int] = []

        def broken(self: Any, ctx: Any) -> Any:
            calls.append(1)
            raise ValueError("simulated: a step that cannot be made")
        monkeypatch.setattr(speculate.Template, "made", broken)
        before = speculate.errors
        seen = []
        for k in range(3, 9):
            hw = np.full(4, 0.1 * k, np.float32)
            got = _step(X, y, xp.asarray(hw, device=wgpu_device), xp)
            want = _step(hX, hy, hw, np)
            assert got[0] == pytest.approx(want[0], rel=1e-5)
            np.testing.assert_allclose(got[1], want[1], rtol=1e-4, atol=1e-6)
            seen.append(len(calls))
        assert speculate.errors - before == len(calls) and 1 <= len(calls) <= 3 and seen[-3] == seen[-1], seen
