"""Laziness, hash-consing and fusion, asserted through metrics()."""

from __future__ import annotations

import numpy as np

import gpuarray as xp
from gpuarray.graph.node import MAX_DEPTH

from .conftest import assert_same


def chain8(m, x):
    return m.exp(-x * x * 0.5) * m.sin(x) + m.cos(x) * 0.25 - m.tanh(x)


def test_ops_are_lazy(device):
    x = xp.asarray(np.arange(8, dtype=np.float32), device=device)
    xp.reset_metrics()
    y = xp.sin(x) * 2 + 1
    assert xp.metrics()["evaluations"] == 0
    assert not y._node.realized
    xp.evaluate(y)
    assert y._node.realized
    assert xp.metrics()["evaluations"] == 1


def test_chain8_is_one_kernel(device):
    host = np.linspace(-3, 3, 1000, dtype=np.float32)
    x = xp.asarray(host, device=device)
    xp.evaluate(x + 0)  # upload outside the measured region
    xp.reset_metrics()
    y = chain8(xp, x)
    xp.evaluate(y)
    m = xp.metrics()
    if device.kind == "wgpu":
        assert m["dispatches"] == 1 and m["submits"] == 1 and m["host_fallbacks"] == 0
    else:
        assert m["host_kernels"] == 1
    with np.errstate(all="ignore"):
        assert_same(y, chain8(np, host), rtol=2e-6, atol=2e-6)


def test_broadcasting_chain_is_one_kernel(device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.arange(4, dtype=np.float32)
    c = np.arange(3, dtype=np.float32).reshape(3, 1)
    ga, gb, gc = (xp.asarray(v, device=device) for v in (a, b, c))
    xp.evaluate(ga + 0, gb + 0, gc + 0)
    xp.reset_metrics()
    y = (ga * gb - gc) / (gb + 1) + 2.5
    xp.evaluate(y)
    m = xp.metrics()
    assert (m["dispatches"] if device.kind == "wgpu" else m["host_kernels"]) == 1
    assert_same(y, (a * b - c) / (b + 1) + np.float32(2.5), rtol=1e-6)


def test_changed_scalar_reuses_pipeline(wgpu_device):
    x = xp.asarray(np.arange(64, dtype=np.float32), device=wgpu_device)
    xp.evaluate(x * 2.0 + 1.0)
    xp.reset_metrics()
    y = x * 3.0 + 7.0
    assert_same(y, np.arange(64, dtype=np.float32) * 3 + 7)
    m = xp.metrics()
    assert m["kernels_compiled"] == 0, m
    assert m["pipeline_cache_hits"] >= 1, m


def test_changed_size_reuses_pipeline(wgpu_device):
    xp.evaluate(xp.asarray(np.ones(10, np.float32), device=wgpu_device) * 2.0 - 1.0)
    xp.reset_metrics()
    y = xp.asarray(np.ones(1000, np.float32), device=wgpu_device) * 5.0 - 2.0
    assert_same(y, np.full(1000, 3.0, np.float32))
    assert xp.metrics()["kernels_compiled"] == 0


def test_common_subexpressions_are_shared(device):
    x = xp.asarray([1.0, 2.0], device=device)
    a = xp.exp(x) + 1
    b = xp.exp(x) + 1
    assert a._node is b._node


def test_signed_zero_and_nan_constants_stay_distinct(device):
    x = xp.asarray([1.0, 2.0], device=device)
    assert (x * 0.0)._node is not (x * -0.0)._node
    assert_same(x * -0.0, np.array([1.0, 2.0]) * -0.0)


def test_long_loop_stays_bounded(device):
    x = xp.zeros(16, dtype=xp.float32, device=device)
    for _ in range(10**5 if device.kind == "cpu" else 2 * 10**4):
        x = x + 1
        assert x._node.depth <= MAX_DEPTH + 1
    expected = 10**5 if device.kind == "cpu" else 2 * 10**4
    assert_same(x, np.full(16, expected, np.float32))


def test_deep_graph_without_loop_evaluates(device):
    x = xp.asarray(np.zeros(4), device=device)
    y = x
    for i in range(3000):
        y = y + float(i % 3)
    assert float(y[0]) == sum(i % 3 for i in range(3000))


def test_evaluate_several_outputs_in_one_submit(wgpu_device):
    x = xp.asarray(np.arange(10, dtype=np.float32), device=wgpu_device)
    xp.evaluate(x + 0)
    xp.reset_metrics()
    a, b, c = x + 1, x * 2, (x - 3).reshape(2, 5)
    xp.evaluate(a, b, c)
    m = xp.metrics()
    assert m["submits"] == 1
    assert m["dispatches"] == 2     # same shape -> one kernel with two outputs; c has another shape
    assert_same(c, (np.arange(10, dtype=np.float32) - 3).reshape(2, 5))


def test_large_dispatch_uses_two_dimensions(wgpu_device):
    n = 65535 * 256 + 1000          # more workgroups than one dimension allows
    x = xp.ones(n, dtype=xp.float32, device=wgpu_device)
    y = x * 2.0 + xp.arange(n, dtype=xp.float32, device=wgpu_device)
    got = np.asarray(y[-3:])
    assert_same(got, np.arange(n - 3, n, dtype=np.float32) + 2)


def test_repeated_evaluation_moves_no_bytes(wgpu_device):
    x = xp.asarray(np.arange(100, dtype=np.float32), device=wgpu_device)
    y = x * 2
    xp.evaluate(y)
    xp.reset_metrics()
    xp.evaluate(y)
    z = y + 1
    xp.evaluate(z)
    m = xp.metrics()
    assert m["bytes_uploaded"] == 0 and m["bytes_downloaded"] == 0
