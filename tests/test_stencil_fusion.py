"""Index instructions and repeated reads at shifted indices (gpuarray/array_object/indexing.py ``bounded``): a
stencil step reads the previous step at several shifts, so fusing steps would compute each value
once per shift (3^k work for k fused heat steps). What a step reads at several indices is evaluated
instead (the previous step, not the step's own new values), and the results are NumPy's. Counts of
evaluations and dispatches per step hold the loop to one kernel a step on a GPU."""

from __future__ import annotations

from typing import Any

import numpy as np

import gpuarray as xp
from gpuarray.array_object import indexing as _indexing

from .conftest import assert_same


def _heat(mod: object, u: object, steps: int) -> object:
    for _ in range(steps):
        u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])      # type: ignore[index, operator]
    return u


def _jacobi(mod: object, u: object, steps: int) -> object:
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])   # type: ignore[index]
    return u


def _life(mod: Any, x: Any, steps: int) -> Any:
    for _ in range(steps):
        xi = mod.astype(x, mod.int8) if mod is xp else x.astype(np.int8)
        n = sum(mod.roll(mod.roll(xi, i, axis=0), j, axis=1) for i in (-1, 0, 1) for j in (-1, 0, 1) if i or j)
        x = (n == 3) | (x & (n == 2))
    return x


def test_heat_stencil_matches_numpy_without_duplicated_work(device: xp.Device) -> None:
    h = np.sin(np.linspace(0, 3, 3001)).astype(np.float32)
    want = _heat(np, h.copy(), 40)
    u = xp.asarray(h, device=device)
    xp.evaluate(u)
    xp.reset_metrics()
    with xp.config(offload="always"):
        got = _heat(xp, u, 40)
        node = got._node                                                     # type: ignore[attr-defined]
        pairs, distinct = _indexing._fused_size(node, _indexing.FUSE_LIMIT)
        assert pairs <= _indexing.DUP_RATIO * distinct + _indexing.DUP_SLACK
        assert_same(got, want, rtol=1e-5, atol=1e-6)     # GPUs may contract a + 0.1 * d into an fma
    m = xp.metrics()
    # one evaluation a step (the step before, when the next reads it at three shifts; the last by the read):
    # 52 before the sixty-second session (each step's new values evaluated with the step before, and every
    # third step again when its depth, never lowered after those evaluations, passed MAX_DEPTH)
    assert m["evaluations"] == 40, m
    if device.kind == "wgpu":
        assert m["dispatches"] == 40, m                  # one kernel a step


def test_jacobi_and_life_steps_are_not_recomputed(device: xp.Device) -> None:
    rng = np.random.default_rng(3)
    h = rng.uniform(-3, 3, (70, 130)).astype(np.float32)
    b = rng.random((40, 70)) < 0.3
    with xp.config(offload="always"):
        xp.reset_metrics()
        got = _jacobi(xp, xp.asarray(h, device=device), 12)
        assert_same(got, _jacobi(np, h.copy(), 12), rtol=1e-5, atol=1e-5)
        jm = xp.metrics()
        xp.reset_metrics()
        life = _life(xp, xp.asarray(b, device=device), 10)
        assert_same(life, _life(np, b.copy(), 10))
        lm = xp.metrics()
    if device.kind == "wgpu":
        assert jm["dispatches"] == 12, jm
        assert lm["dispatches"] == 10, lm               # each step one kernel of its eight rolls
    else:                                               # the cpu device: what is read twice is computed once
        assert jm["evaluations"] == 12, jm
        assert lm["evaluations"] <= 5 * 10, lm


def test_depth_is_lowered_after_a_bounded_evaluation(device: xp.Device) -> None:
    """A node whose inputs ``bounded`` evaluated counts its depth from them (``MAX_DEPTH`` evaluates a node
    by its depth: stale depths made it evaluate again)."""
    u = xp.asarray(np.arange(50, dtype=np.float32), device=device)
    with xp.config(offload="always"):
        for _ in range(30):
            u[1:-1] = u[1:-1] + 0.5 * (u[2:] - u[:-2])
        assert u._node.depth < 16                       # type: ignore[attr-defined]


def test_fused_size_counts_each_index_path_once() -> None:
    """A node read at the same index twice costs once; read through two views, twice."""
    x = xp.asarray(np.arange(10, dtype=np.float32), device="cpu")
    e = xp.exp(x * 2)
    same = e * e + e
    pairs, distinct = _indexing._fused_size(same._node, 256)
    assert pairs == distinct
    shifted = e[1:] + e[:-1]
    pairs2, distinct2 = _indexing._fused_size(shifted._node, 256)
    assert pairs2 > distinct2
