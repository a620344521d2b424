"""Index instructions and repeated reads at shifted indices (gpuarray/array_object/bounds.py ``bounded``): a
stencil step reads the previous step at several shifts, so fusing steps would compute each value
once per shift (3^k work for k fused heat steps). What a step reads at several indices is evaluated
instead (the previous step, not the step's own new values), and the results are NumPy's. Counts of
evaluations and dispatches per step hold the loop to one kernel a step on a GPU."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

import gpuarray as xp
from gpuarray.array_object import bounds as _indexing
from gpuarray.graph.node import MAX_DEPTH, redepth

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
    # one evaluation a step: the step before (Life: the booleans, not the rolls of their int8 copy)
    assert jm["evaluations"] == 12 and lm["evaluations"] == 10, (jm, lm)
    if device.kind == "wgpu":
        assert jm["dispatches"] == 12, jm
        assert lm["dispatches"] == 10, lm               # each step one kernel of its eight rolls


def test_depth_counts_only_pending_history(device: xp.Device) -> None:
    """A node made before nodes under it were evaluated counts its depth again before ``MAX_DEPTH``
    evaluates it (``graph.node.redepth``): a long elementwise chain on a value whose history was evaluated
    after the chain's first node was made is not evaluated for that history."""
    x = xp.asarray(np.arange(50, dtype=np.float32), device=device)
    xp.evaluate(x)
    with xp.config(offload="always"):
        y = x
        for _ in range(MAX_DEPTH - 10):
            y = y * 1.0 + 0.5
        z = y + 1.0                      # made at depth MAX_DEPTH - 10 + ...
        xp.evaluate(y)                   # z's input is evaluated; z keeps its depth
        xp.reset_metrics()
        w = z
        for _ in range(40):
            w = w - 0.25
        assert xp.metrics()["evaluations"] == 0
        assert w._node.depth <= 42                              # type: ignore[attr-defined]
    assert_same(w, np.arange(50, dtype=np.float32) + np.float32(0.5 * (MAX_DEPTH - 10) + 1.0 - 10.0))


def test_redepth_keeps_chained_writes_at_the_depth_below() -> None:
    a = xp.asarray(np.zeros((8, 4), np.float32), device="cpu")
    xp.evaluate(a)
    with xp.config(offload="always"):
        for i in range(8):
            a[i] = a[i] + i
        node = a._node                                          # type: ignore[attr-defined]
        before = node.depth
        assert redepth(node) == before


# (start, step) of the heat and Jacobi loops the kept-cone tests run
_STARTS = ((np.sin(np.linspace(0, 3, 301)).astype(np.float32), _heat),
           (np.linspace(-3, 3, 40 * 30).reshape(40, 30), _jacobi))


def _stepped(device: xp.Device, count: int) -> Iterator[tuple[Any, np.ndarray, Any, int]]:
    """Each start of ``_STARTS`` on ``device`` stepped ``count`` times: (the array, its start, its step, the steps
    so far) after each step."""
    for u0, step in _STARTS:
        u = xp.asarray(u0, device=device)
        for k in range(1, count + 1):
            step(xp, u, 1)
            yield u, u0, step, k


def _fresh_count(node: Any) -> tuple[int, int, dict[int, int]]:
    """``_fused_size`` of ``node`` with every kept write cone under it set aside (the walk it replaces)."""
    kept, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.cone is not None:
            kept.append((n, n.cone))
            n.cone = None
        stack.extend(n.inputs)
    paths: dict[int, int] = {}
    try:
        pairs, distinct = _indexing._fused_size(node, _indexing.FUSE_LIMIT, paths)
    finally:
        for n, c in kept:
            n.cone = c
    return pairs, distinct, paths


def _counted(node: Any) -> tuple[int, int, dict[int, int]]:
    paths: dict[int, int] = {}
    pairs, distinct = _indexing._fused_size(node, _indexing.FUSE_LIMIT, paths)
    return pairs, distinct, paths


def test_kept_write_cones_count_what_the_walk_counts(device: xp.Device) -> None:
    # a stencil's write (a roll's concat too) keeps its cone's count (bounds._kept), which the next step's
    # count adds under each of its shifted reads instead of walking it again: pairs, distinct nodes and the
    # paths per node (what _reread decides by) are the walk's, before and after the step before is evaluated
    with xp.config(offload="always"):
        for u, u0, step, k in _stepped(device, 4):
            node = u._node                                                  # type: ignore[attr-defined]
            assert node.cone is not None and node.data is None
            v = u[1:-1] * 2 + u[:-2]                                        # type: ignore[index, operator]
            for n in (node, v._node):                                       # type: ignore[attr-defined]
                assert _counted(n) == _fresh_count(n)
            if k == 4:
                assert_same(u, step(np, u0.copy(), 4), rtol=1e-5, atol=1e-6)
        # a Game of Life step's rolls are concats, which keep their cones too (bounds._KEPT)
        g0 = np.random.default_rng(3).random((24, 20)) < 0.35
        g = xp.asarray(g0, device=device)
        for _ in range(3):
            g = _life(xp, g, 1)
            kept, stack = 0, [g._node]                                      # type: ignore[attr-defined]
            while stack:
                n = stack.pop()
                kept += n.op == "concat" and n.cone is not None
                stack.extend(n.inputs)
            assert kept >= 8
            assert _counted(g._node) == _fresh_count(g._node)               # type: ignore[attr-defined]
            rolled = xp.roll(g.astype(xp.int8), 1, axis=0) + xp.roll(g.astype(xp.int8), -1, axis=1)
            assert _counted(rolled._node) == _fresh_count(rolled._node)     # type: ignore[attr-defined]
        assert_same(g, _life(np, g0.copy(), 3))


def test_kept_write_cone_goes_stale_when_its_cone_is_evaluated(device: xp.Device) -> None:
    # a kept count holds the pending nodes it walked: once one of them is evaluated (here the written value's
    # inner sum, read on its own) the count is walked again, not added
    h = np.linspace(-3, 3, 64).astype(np.float32)
    with xp.config(offload="always"):
        u = xp.asarray(h, device=device)
        xp.evaluate(u)
        inner = u[2:] - 2 * u[1:-1]                                         # type: ignore[index, operator]
        u[1:-1] = u[1:-1] + 0.1 * (inner + u[:-2])                          # type: ignore[index, operator]
        node = u._node                                                      # type: ignore[attr-defined]
        assert node.cone is not None
        v = u[1:-1] + u[2:]                                                 # type: ignore[index, operator]
        before = _counted(v._node)                                          # type: ignore[attr-defined]
        xp.evaluate(inner)
        after = _counted(v._node)                                           # type: ignore[attr-defined]
        assert after == _fresh_count(v._node) and after[0] < before[0]      # type: ignore[attr-defined]
        assert node.cone is None                                            # dropped where it was found stale
    w = _heat(np, h.copy(), 1)
    assert_same(v, w[1:-1] + w[2:], rtol=1e-6, atol=1e-6)


def test_depths_counted_from_the_walk_are_redepths(device: xp.Device) -> None:
    # after bounded evaluates the step before, it counts the write's pending depths from its own walk
    # (bounds._remember(depth=True)) instead of graph.node.redepth: the same depths, every step
    def depths(node: Any) -> dict[int, int]:
        out, stack = {}, [node]
        while stack:
            n = stack.pop()
            if n.data is None and n.serial not in out:
                out[n.serial] = n.depth
                stack.extend(n.inputs)
        return out

    with xp.config(offload="always"):
        for u, _u0, _step, _k in _stepped(device, 5):
            node = u._node                                                  # type: ignore[attr-defined]
            got = depths(node)
            redepth(node)
            assert got == depths(node)
        g = xp.asarray(np.random.default_rng(3).random((24, 20)) < 0.35, device=device)
        for _ in range(3):
            g = _life(xp, g, 1)
            got = depths(g._node)                                           # type: ignore[attr-defined]
            redepth(g._node)                                                # type: ignore[attr-defined]
            assert got == depths(g._node)                                   # type: ignore[attr-defined]
