"""Schedules remembered by graph structure (compiler/plan_cache.py): a repeated evaluation takes
its kernels from the cache, with its own nodes and scalar values, and never a stale input; any
change of structure (shape, dtype, wiring, which nodes are evaluated, which breakers the user
holds) schedules afresh."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler import plan_cache
from gpuarray.compiler.schedule import schedule

from .conftest import assert_same


def _softmax(p: Any, x: Any, c: float) -> Any:
    e = p.exp(c * (x - p.max(x, axis=-1, keepdims=True)))
    return e / p.sum(e, axis=-1, keepdims=True)


def _layernorm(p: Any, x: Any, c: float) -> Any:
    mu = p.mean(x, axis=-1, keepdims=True)
    return (x - mu) / p.sqrt(p.mean((x - mu) ** 2, axis=-1, keepdims=True) + c)


WORKLOADS: dict[str, Callable[[Any, Any, float], Any]] = {
    "chain": lambda p, x, c: p.sin(x * c + 0.5) - p.cos(x) * c,
    "softmax": _softmax,
    "layernorm": _layernorm,
    "sum_epilogue": lambda p, x, c: p.sqrt(p.sum(x * x, axis=0) * abs(c)),
    "var0": lambda p, x, c: p.var(x * c, axis=0),
    "matmul_epilogue": lambda p, x, c: p.tanh((x @ x.T) * c + 1.0),
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_new_scalars_and_inputs_reuse_the_schedule(device: xp.Device, name: str, counted: list[int]) -> None:
    rng = np.random.default_rng(0)
    fn = WORKLOADS[name]
    with xp.config(offload="always"):
        for trial, c in enumerate((1.5, -0.25, 3.0, 1.5)):
            x = rng.uniform(-3, 3, (96, 130)).astype("float32")
            got = fn(xp, xp.asarray(x, device=device), c)
            assert_same(got, fn(np, x.astype(np.float64), c).astype("float32"), rtol=2e-5, atol=2e-4)
            del got
            assert counted[0] == 1, f"trial {trial}: scheduled {counted[0]} times"


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_cached_kernels_equal_fresh_ones(wgpu_device: xp.Device, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels instantiated from the cache are the ones a fresh schedule gives: the same
    instructions, scalar values, input and output nodes."""
    rng = np.random.default_rng(1)
    x = xp.asarray(rng.uniform(-3, 3, (96, 130)).astype("float32"), device=wgpu_device)
    plan_cache.clear()
    schedule([WORKLOADS[name](xp, x, 2.0)._node])           # fills the cache
    root = WORKLOADS[name](xp, x, -7.0)._node
    cached = schedule([root])
    monkeypatch.setattr(plan_cache, "ENABLED", False)
    fresh = schedule([root])
    assert [k.describe() for k in cached] == [k.describe() for k in fresh]
    for a, b in zip(cached, fresh, strict=True):
        assert [id(n) for n in a.inputs] == [id(n) for n in b.inputs]
        assert [id(n) if hasattr(n, "serial") else n for n in a.out_nodes] == \
            [id(n) if hasattr(n, "serial") else n for n in b.out_nodes]
        assert [i.params for i in a.instrs] == [i.params for i in b.instrs]
        assert a.signature == b.signature and a.kind == b.kind and a.device is b.device


def test_structure_changes_schedule_afresh(wgpu_device: xp.Device, counted: list[int]) -> None:
    rng = np.random.default_rng(2)
    with xp.config(offload="always"):
        for shape, dt in (((64, 100), "float32"), ((64, 101), "float32"), ((64, 100), "float64")):
            x = rng.uniform(-3, 3, shape).astype(dt)
            assert_same(_softmax(xp, xp.asarray(x, device=wgpu_device), 1.0), _softmax(np, x, 1.0),
                        rtol=1e-5, atol=1e-6)
        assert counted[0] == 3
        # the same values wired differently: x * c + c (one constant) and x * c + d (two)
        x = rng.uniform(-3, 3, 5000).astype("float32")
        g = xp.asarray(x, device=wgpu_device)
        assert_same(g * 2.0 + 2.0, x * np.float32(2) + np.float32(2))
        assert_same(g * 2.0 + 3.0, x * np.float32(2) + np.float32(3))
        assert_same(g * 4.0 + 4.0, x * np.float32(4) + np.float32(4))
        assert counted[0] == 5


def test_evaluated_intermediates_and_held_breakers(wgpu_device: xp.Device, counted: list[int]) -> None:
    """An intermediate evaluated earlier is read, not recomputed; a reduction the user holds is
    written as well as consumed by its epilogue: each is its own structure."""
    x = np.random.default_rng(3).uniform(-3, 3, (64, 300)).astype("float32")
    g = xp.asarray(x, device=wgpu_device)
    with xp.config(offload="always"):
        for hold in (False, True, False, True):
            s = xp.sum(g, axis=-1, keepdims=True)
            y = g / s
            if hold:
                xp.evaluate(y)
                assert_same(s, np.sum(x, axis=-1, keepdims=True), rtol=1e-5, atol=1e-5)
            else:
                del s
            assert_same(y, x / np.sum(x, axis=-1, keepdims=True), rtol=1e-4, atol=1e-5)
        for early in (False, True, False, True):
            a = g * 3.0
            if early:
                xp.evaluate(a)
            assert_same(xp.exp(a) + 1.0, np.exp(x * np.float32(3)) + np.float32(1), rtol=2e-6)
    assert counted[0] <= 8


def test_kernels_never_read_stale_inputs(wgpu_device: xp.Device, counted: list[int]) -> None:
    """The same structure over different arrays: each evaluation reads its own inputs (a new leaf,
    a view of another array, an array written in place since)."""
    rng = np.random.default_rng(4)
    with xp.config(offload="always"):
        a = rng.uniform(-3, 3, 9000).astype("float32")
        g = xp.asarray(a, device=wgpu_device)
        outs = []
        for k in range(4):
            b = rng.uniform(-3, 3, 9000).astype("float32")
            outs.append((xp.asarray(b, device=wgpu_device) * 2.0 - g, b * np.float32(2) - a))
            g[:10] = float(k)
            a[:10] = k
        for got, want in outs:
            assert_same(got, want)
    assert counted[0] >= 1


def test_multi_pass_reductions_from_the_cache(wgpu_device: xp.Device, counted: list[int]) -> None:
    """Reductions long enough to take several passes (partials, then the epilogue in the last pass):
    the passes' kernels, variants and signatures come from the template's memo on repeats, and each
    repeat computes its own values."""
    rng = np.random.default_rng(6)
    with xp.config(offload="always"):
        for trial, c in enumerate((2.0, -0.5, 3.0)):
            a = rng.uniform(-3, 3, (50000, 4)).astype("float32")
            b = rng.uniform(-3, 3, 1 << 18).astype("float32")
            ga, gb = xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device)
            assert_same(xp.sqrt(xp.abs(xp.sum(ga * c, axis=0))) + 1.0,
                        (np.sqrt(np.abs(np.sum(a.astype(np.float64) * c, axis=0))) + 1.0).astype("float32"),
                        rtol=1e-5, atol=1e-5)
            assert_same(xp.std(gb * c), np.float32(np.std(b.astype(np.float64) * c)), rtol=1e-5)
            assert counted[0] == 2, f"trial {trial}: scheduled {counted[0]} times"


def test_kernels_made_by_replace_do_not_share_the_memo(wgpu_device: xp.Device) -> None:
    """A pass made from a cached kernel with other attrs (argreduce, scan, scatter use
    dataclasses.replace) is another structure: it must not read the template's memo (its signature
    would be the parent's); repeated argmax and cumsum over long rows stay right."""
    import dataclasses
    rng = np.random.default_rng(7)
    x = rng.uniform(-3, 3, (8, 70000)).astype("float32")
    g = xp.asarray(x, device=wgpu_device)
    with xp.config(offload="always"):
        for _ in range(3):
            assert_same(xp.argmax(g * 2.0, axis=1), np.argmax(x * 2, axis=1))
            assert_same(xp.cumulative_sum(g + 1.0, axis=1), np.cumsum(x.astype(np.float64) + 1, axis=1)
                        .astype("float32"), rtol=1e-4, atol=0.5)
        (k,) = schedule([xp.argmax(g * 2.0, axis=1)._node])
        assert k.memo is not None and "signature" in k.memo
        assert dataclasses.replace(k, attrs=(*k.attrs, "partial"), _sig=None).memo is None
