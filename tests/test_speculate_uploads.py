"""Reads started at uploads (runtime/speculate.py, ``uploaded``): a loop that uploads new weights and then reads
a loss computed from them has the loss (and the reads computed ahead with it) evaluated and submitted when the
last weight is uploaded, so the device computes while the program records; every value stays NumPy's, and a
read whose operations change (a new constant, a write into the weights, no read at all) is not started, or
stops being started after ``MISSES``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.graph import views
from gpuarray.graph.node import leaf
from gpuarray.runtime import planner, residency, speculate

from .conftest import run_in_threads


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    speculate.clear()
    monkeypatch.setattr(speculate, "MIN_ELEMENTS", 1000)
    yield
    speculate.clear()


def _data(n: int = 2000, d: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows of ``d`` features and labels (small: the tests lower ``MIN_ELEMENTS``)."""
    rng = np.random.default_rng(8)
    return rng.uniform(-3, 3, (n, d)).astype(np.float32), np.where(rng.random(n) < 0.5, -1.0, 1.0).astype(np.float32)


def _step(X: Any, y: Any, w: Any, b: Any, mod: Any, c: float = 1.0) -> tuple[float, np.ndarray, float]:
    """A logistic loss read, then its gradient and the intercept's (scikit-learn's loss_gradient in small)."""
    raw = X @ w + b
    loss = float(mod.sum(mod.log1p(mod.exp(-raw * y))) * c / X.shape[0])
    g = -y / (1 + mod.exp(raw * y)) / X.shape[0]
    return loss, np.asarray(X.T @ g), float(mod.sum(g))


def _check(got: tuple, want: tuple) -> None:
    assert got[0] == pytest.approx(want[0], rel=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-4, atol=1e-6)
    assert got[2] == pytest.approx(want[2], rel=1e-4, abs=1e-6)


def _iteration(X: Any, y: Any, hX: np.ndarray, hy: np.ndarray, hw: np.ndarray, hb: np.ndarray, dev: xp.Device,
               c: float = 1.0) -> tuple[int, int]:
    """One iteration against NumPy: (evaluations during the uploads, evaluations after them)."""
    xp.reset_metrics()
    w, b = xp.asarray(hw, device=dev), xp.asarray(hb, device=dev)
    at_upload = xp.metrics()["evaluations"]
    _check(_step(X, y, w, b, xp, c), _step(hX, hy, hw, hb, np, c))
    return at_upload, xp.metrics()["evaluations"] - at_upload


def test_the_loss_read_starts_at_the_upload(wgpu_device: xp.Device) -> None:
    """Learned over the first iterations (the same read twice after the same read): from then on the whole
    iteration is one evaluation, made when the intercept is uploaded; the reads find their values computed."""
    hX, hy = _data()
    rng = np.random.default_rng(9)
    with xp.config(offload="always"):
        X, y = xp.asarray(hX, device=wgpu_device), xp.asarray(hy, device=wgpu_device)
        counts = [_iteration(X, y, hX, hy, rng.uniform(-0.5, 0.5, 6).astype(np.float32),
                             rng.uniform(-0.5, 0.5, 1).astype(np.float32), wgpu_device) for _ in range(7)]
    assert counts[4:] == [(1, 0)] * 3, counts
    assert not residency.READ_WITH                  # each started read was read, with its followers


def test_a_new_constant_each_iteration_is_not_started(wgpu_device: xp.Device) -> None:
    """The loss scaled by a constant that changes every iteration: its form never repeats, so it is never
    started at an upload (nothing computed in vain)."""
    hX, hy = _data(800, 4)
    rng = np.random.default_rng(10)
    with xp.config(offload="always"):
        X, y = xp.asarray(hX, device=wgpu_device), xp.asarray(hy, device=wgpu_device)
        counts = [_iteration(X, y, hX, hy, rng.uniform(-0.5, 0.5, 4).astype(np.float32),
                             np.zeros(1, np.float32), wgpu_device, c=1.0 + k) for k in range(8)]
    assert all(at == 0 for at, _ in counts), counts


def test_a_write_into_the_weights_leaves_the_read_right(wgpu_device: xp.Device) -> None:
    """Weights written after their upload (``w[0] = ...`` before the product): the read started at the upload
    computed the weights as uploaded; the program's read is another value, evaluated for real (NumPy's)."""
    hX, hy = _data(800, 4)
    rng = np.random.default_rng(11)
    with xp.config(offload="always"):
        X, y = xp.asarray(hX, device=wgpu_device), xp.asarray(hy, device=wgpu_device)
        for k in range(8):
            hw, hb = rng.uniform(-0.5, 0.5, 4).astype(np.float32), np.zeros(1, np.float32)
            w, b = xp.asarray(hw, device=wgpu_device), xp.asarray(hb, device=wgpu_device)
            if k >= 5:
                w[0] = 2.0
                hw = hw.copy()
                hw[0] = 2.0
            _check(_step(X, y, w, b, xp), _step(hX, hy, hw, hb, np))


def test_a_read_that_changes_is_learned_again(wgpu_device: xp.Device) -> None:
    """A loop whose read changes (the loss, then a maximum): the loss started at the upload and not read counts a
    miss, and the new read is learned (twice the same after the same read) and started in its turn; every value
    NumPy's, and from then on the program's read finds its value computed."""
    hX, hy = _data(800, 4)
    rng = np.random.default_rng(12)
    counts = []
    with xp.config(offload="always"):
        X, y = xp.asarray(hX, device=wgpu_device), xp.asarray(hy, device=wgpu_device)
        for k in range(12):
            hw, hb = rng.uniform(-0.5, 0.5, 4).astype(np.float32), np.zeros(1, np.float32)
            if k < 5:
                counts.append(_iteration(X, y, hX, hy, hw, hb, wgpu_device))
                continue
            xp.reset_metrics()
            w, b = xp.asarray(hw, device=wgpu_device), xp.asarray(hb, device=wgpu_device)
            at = xp.metrics()["evaluations"]
            assert float(xp.max(X @ w + b)) == pytest.approx(float((hX @ hw + hb).max()), rel=1e-5)
            counts.append((at, xp.metrics()["evaluations"] - at))
    assert counts[4] == (1, 0) and counts[5] == (1, 1) and counts[-3:] == [(1, 0)] * 3, counts
    assert not residency.READ_WITH


def test_errors_while_starting_never_fail_the_upload(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error while evaluating a read started at an upload fails neither the upload nor the read (NumPy's
    values); it counts in ``speculate.errors`` and that read is not started again."""
    hX, hy = _data(800, 4)
    rng = np.random.default_rng(13)
    with xp.config(offload="always"):
        X, y = xp.asarray(hX, device=wgpu_device), xp.asarray(hy, device=wgpu_device)
        for _ in range(4):
            _iteration(X, y, hX, hy, rng.uniform(-0.5, 0.5, 4).astype(np.float32), np.zeros(1, np.float32),
                       wgpu_device)
        evaluate, raised = planner.evaluate_nodes, []

        def failing(nodes: Any, reading: bool = False) -> None:
            if speculate.state.busy:
                raised.append(True)
                raise MemoryError("simulated: out of device memory for a read started at an upload")
            evaluate(nodes, reading)
        monkeypatch.setattr(planner, "evaluate_nodes", failing)
        before = speculate.errors
        counts = [_iteration(X, y, hX, hy, rng.uniform(-0.5, 0.5, 4).astype(np.float32), np.zeros(1, np.float32),
                             wgpu_device) for _ in range(3)]
    assert raised == [True] and speculate.errors == before + 1, (raised, counts)


def test_uploads_to_the_host_device_start_nothing() -> None:
    """On the cpu device evaluating early gains nothing (its kernels are the host's own calls)."""
    hX, hy = _data(300, 4)
    X, y = xp.asarray(hX, device="cpu"), xp.asarray(hy, device="cpu")
    for _ in range(6):
        hw = np.full(4, 0.1, np.float32)
        w, b = xp.asarray(hw, device="cpu"), xp.asarray(np.zeros(1, np.float32), device="cpu")
        assert not speculate.state.uploads
        _check(_step(X, y, w, b, xp), _step(hX, hy, hw, np.zeros(1, np.float32), np))


def test_a_reshape_of_evaluated_data_is_one_node() -> None:
    """``views.reshape`` of evaluated data gives the same leaf while it lives (so ``X @ w`` recorded twice on one
    ``w`` is one node), and a reshape recorded before the data was evaluated is that reshape."""
    a = leaf(np.arange(6, dtype=np.float32), None)
    assert views.reshape(a, (6, 1)) is views.reshape(a, (6, 1))
    assert views.reshape(a, (6, 1)) is not views.reshape(a, (2, 3))
    X = xp.asarray(np.ones((5, 6), np.float32), device="cpu")
    w = xp.asarray(np.arange(6, dtype=np.float32), device="cpu")
    assert (X @ w)._node is (X @ w)._node
    np.testing.assert_array_equal(np.asarray(X @ w), np.ones((5, 6), np.float32) @ np.arange(6, dtype=np.float32))


def test_small_work_is_not_started(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read whose arrays are all smaller than ``MIN_ELEMENTS`` is not started at an upload (under
    ``offload="auto"`` such reads run on the host, and their expressions stay pending)."""
    monkeypatch.setattr(speculate, "MIN_ELEMENTS", 1 << 18)
    hX, hy = _data(800, 4)
    rng = np.random.default_rng(14)
    with xp.config(offload="always"):
        X, y = xp.asarray(hX, device=wgpu_device), xp.asarray(hy, device=wgpu_device)
        counts = [_iteration(X, y, hX, hy, rng.uniform(-0.5, 0.5, 4).astype(np.float32), np.zeros(1, np.float32),
                             wgpu_device) for _ in range(6)]
    assert all(at == 0 for at, _ in counts), counts


def test_start_read_gives_the_arrays(wgpu_device: xp.Device) -> None:
    """``start_read`` submits the copies and asks for the mapping; ``finish_read`` gives the arrays (of their
    dtypes and shapes); a later ``start_read`` lets an unread one go (its ``finish_read`` is None); arrays that
    do not fit the read buffer, or an empty list, start nothing."""
    prov = wgpu_device.provider
    with xp.config(offload="always"):
        a = xp.asarray(np.arange(10, dtype=np.float32), device=wgpu_device) * 2
        b = xp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3), device=wgpu_device) - 7
        big = xp.zeros(1 << 16, dtype=xp.float32, device=wgpu_device) + 1
        xp.evaluate(a, b, big)
    items = [(n._node.data.handle, n.dtype, n.shape) for n in (a, b)]
    got = prov.finish_read(prov.start_read(items))
    np.testing.assert_array_equal(got[0], np.arange(10, dtype=np.float32) * 2)
    np.testing.assert_array_equal(got[1], np.arange(6, dtype=np.int32).reshape(2, 3) - 7)
    assert got[1].dtype == np.int32 and got[1].shape == (2, 3)
    first = prov.start_read(items)
    second = prov.start_read(items[:1])
    assert prov.finish_read(first) is None
    np.testing.assert_array_equal(prov.finish_read(second)[0], np.arange(10, dtype=np.float32) * 2)
    assert prov.start_read([(big._node.data.handle, big.dtype, big.shape)]) is None
    assert prov.start_read([]) is None


def test_two_threads_each_get_their_values(wgpu_device: xp.Device) -> None:
    """Two threads running the loop at once on their own data (reads started at uploads in each; the learned
    templates are shared, the reads in flight are each thread's): every value NumPy's."""
    def loop(seed: int) -> None:
        hX, hy = _data(1200 + 100 * seed, 4)
        rng = np.random.default_rng(20 + seed)
        with xp.config(offload="always"):
            X, y = xp.asarray(hX, device=wgpu_device), xp.asarray(hy, device=wgpu_device)
            for _ in range(8):
                _iteration(X, y, hX, hy, rng.uniform(-0.5, 0.5, 4).astype(np.float32),
                           rng.uniform(-0.5, 0.5, 1).astype(np.float32), wgpu_device)
    run_in_threads(loop, 2)


def test_a_reshape_made_before_evaluation_costs_no_kernel(wgpu_device: xp.Device) -> None:
    """A reshape recorded before its input was evaluated is the reshape taken after (one node), realized on the
    input's data: evaluating it runs no kernel."""
    with xp.config(offload="always"):
        x = xp.asarray(np.arange(12.0, dtype=np.float32), device=wgpu_device) + 1
        r = xp.reshape(x, (3, 4))
        xp.evaluate(x)
        xp.reset_metrics()
        r2 = xp.reshape(x, (3, 4))
        assert r2._node is r._node
        xp.evaluate(r2)
        assert xp.metrics()["dispatches"] == 0
        np.testing.assert_array_equal(np.asarray(r2), np.arange(1.0, 13.0, dtype=np.float32).reshape(3, 4))
        np.testing.assert_array_equal(np.asarray(r + 0), np.arange(1.0, 13.0, dtype=np.float32).reshape(3, 4))
