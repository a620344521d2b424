"""Fused epilogues: elementwise work that consumes a reduction's or a matmul's result runs inside
that kernel, at the store (compiler/schedule.py). Every result is compared with NumPy on both
providers, and the number of kernels (dispatches on wgpu, host kernels on cpu) is checked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler.schedule import schedule

from .conftest import assert_same


def _kernels(device: xp.Device, fn: Callable[[], Any]) -> tuple[Any, int]:
    """``fn()`` evaluated, and the kernels that took: wgpu dispatches (a multi-pass reduction counts
    each pass) or host kernels on the cpu device."""
    xp.reset_metrics()
    out = fn()
    xp.evaluate(*(out if isinstance(out, tuple) else (out,)))
    m = xp.metrics()
    return out, m["dispatches"] if device.kind == "wgpu" else m["host_kernels"]


def _tol(dt: Any) -> float:
    return 1e-5 if np.dtype(dt) == np.float32 else 1e-12


def _data(dtype: str, shape: tuple[int, ...] = (3, 4, 5)) -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)], ids=repr)
@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_var_std(device, dtype, axis, keepdims):
    a = _data(dtype)
    g = xp.asarray(a, device=device)
    t = _tol(dtype)
    assert_same(xp.mean(g, axis=axis, keepdims=keepdims), np.mean(a, axis=axis, keepdims=keepdims), rtol=t, atol=t)
    assert_same(xp.var(g, axis=axis, keepdims=keepdims), np.var(a, axis=axis, keepdims=keepdims), rtol=10 * t, atol=t)
    assert_same(xp.std(g, axis=axis, keepdims=keepdims, correction=1),
                np.std(a, axis=axis, keepdims=keepdims, ddof=1), rtol=10 * t, atol=t)


@pytest.mark.parametrize("axis", [None, 0, 1], ids=repr)
def test_mean_var_std_kernel_counts(device, axis):
    a = _data("float32", (40, 300))

    def fresh() -> xp.GpuArray:       # a new array each time: no result shared through hash-consing
        return xp.asarray(a, device=device)

    s, n_sum = _kernels(device, lambda: xp.sum(fresh(), axis=axis))
    m, n_mean = _kernels(device, lambda: xp.mean(fresh(), axis=axis))
    assert n_mean == n_sum            # the division runs in the sum's last pass
    kd, n_kd = _kernels(device, lambda: xp.mean(fresh(), axis=axis, keepdims=True))
    assert n_kd == n_sum              # keepdims is a reshape of the result: fused too
    v, n_var = _kernels(device, lambda: xp.var(fresh(), axis=axis))
    if axis in (0, 1) and device.name.startswith("wgpu"):     # both sums in one rowfuse kernel
        assert n_var == 1 and (axis == 0 or n_sum == 1)     # (over rows, or columns: compiler/colfuse.py)
    else:
        assert n_var == 2 * n_sum     # the mean's sum and the squares' sum, nothing else
    sd, n_std = _kernels(device, lambda: xp.std(fresh(), axis=axis))
    assert n_std == n_var
    assert_same(m, np.mean(a, axis=axis), rtol=1e-5, atol=1e-6)
    assert_same(kd, np.mean(a, axis=axis, keepdims=True), rtol=1e-5, atol=1e-6)
    assert_same(v, np.var(a, axis=axis), rtol=1e-4, atol=1e-6)
    assert_same(sd, np.std(a, axis=axis), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint32"])
@pytest.mark.parametrize("axis", [None, 0, 1], ids=repr)
def test_sum_affine(device, dtype, axis):
    a = (_data("float64", (6, 7)) * 10).astype(dtype)
    g = xp.asarray(a, device=device)
    got, n = _kernels(device, lambda: xp.sum(g, axis=axis) * 2 + 1)
    want = np.sum(a, axis=axis) * 2 + 1
    assert_same(got, want.astype(np.asarray(got).dtype), rtol=_tol("float32"))
    assert n == 1


def test_integer_epilogues(device):
    a = np.array([[127, -128, 5], [100, 100, -7], [3, 0, 2]], dtype=np.int8)
    g = xp.asarray(a, device=device)
    assert_same(xp.max(g, axis=0) + np.int8(1), np.max(a, axis=0) + np.int8(1))        # wraps in int8
    assert_same(xp.min(g, axis=1) * np.int8(2), np.min(a, axis=1) * np.int8(2))
    assert_same(xp.sum(g, axis=0) // 3, np.sum(a, axis=0) // 3)
    assert_same(xp.sum(g, axis=1) % -4, np.sum(a, axis=1) % -4)
    big = np.array([[2**62, 2**62], [-(2**63), 5]], dtype=np.int64)
    gb = xp.asarray(big, device=device)
    with np.errstate(over="ignore"):
        assert_same(xp.sum(gb, axis=0) - 1, np.sum(big, axis=0) - 1)
    u = np.array([[0, 4294967295], [1, 7]], dtype=np.uint32)
    gu = xp.asarray(u, device=device)
    assert_same(xp.max(gu, axis=0) + np.uint32(1), np.max(u, axis=0) + np.uint32(1))
    assert_same(xp.prod(gu, axis=1, dtype=xp.uint32) ^ np.uint32(3),
                np.prod(u, axis=1, dtype=np.uint32) ^ np.uint32(3))


def test_dtype_changing_epilogues(device):
    a = np.array([[1.5, -2.0, np.nan], [0.5, 3.0, 1.0], [-4.0, 1e10, 2.0]], dtype=np.float32)
    g = xp.asarray(a, device=device)
    b, n = _kernels(device, lambda: xp.sum(g, axis=0) > 0)
    assert_same(b, np.sum(a, axis=0) > 0)
    assert n == 1
    with np.errstate(invalid="ignore"):       # NaN to int32: the host's result (host_cast.py)
        assert_same(xp.sum(g, axis=1).astype(xp.int32), np.sum(a, axis=1).astype(np.int32))
    assert_same(xp.isnan(xp.max(g, axis=1)), np.isnan(np.max(a, axis=1)))
    assert_same(xp.any(g > 1, axis=0).astype(xp.float32) * 2, (np.any(a > 1, axis=0)).astype(np.float32) * 2)
    assert_same(xp.logical_not(xp.all(g > 0, axis=1)), np.logical_not(np.all(a > 0, axis=1)))
    assert_same(xp.sum(g > 0, axis=0) == 2, np.sum(a > 0, axis=0) == 2)


def test_special_values(device):
    a = np.array([[np.nan, 1.0, -0.0, np.inf], [2.0, -np.inf, -0.0, np.inf],
                  [3.0, 5.0, -0.0, 1.0]], dtype=np.float32)
    g = xp.asarray(a, device=device)
    with np.errstate(all="ignore"):
        assert_same(xp.max(g, axis=0) * -1.0, np.max(a, axis=0) * np.float32(-1.0))
        assert_same(xp.min(g, axis=0) * 0.0, np.min(a, axis=0) * np.float32(0.0))
        s = xp.sum(g, axis=1)
        assert_same(s - s, np.sum(a, axis=1) - np.sum(a, axis=1))          # inf - inf, NaN - NaN
        assert_same(xp.sum(g, axis=0) / 0.0, np.sum(a, axis=0) / np.float32(0.0))
        assert_same(xp.mean(g, axis=0), np.mean(a, axis=0))
        assert_same(xp.max(g, axis=0) - xp.min(g, axis=0), np.max(a, axis=0) - np.min(a, axis=0))


def test_two_breakers_one_epilogue(device):
    """``max - min``: the later breaker takes the epilogue and reads the earlier one's result."""
    a = _data("float32", (2000, 30))      # long columns, few of them: not column-fused (compiler/colfuse.py)
    _m, n_max = _kernels(device, lambda: xp.max(xp.asarray(a, device=device), axis=0))
    g = xp.asarray(a, device=device)
    r, n = _kernels(device, lambda: xp.max(g, axis=0) - xp.min(g, axis=0))
    assert_same(r, np.max(a, axis=0) - np.min(a, axis=0))
    assert n == 2 * n_max             # each reduction's passes, and no third kernel
    k = schedule([(xp.max(g, axis=0) - xp.min(g, axis=0))._node])
    assert [x.result_index is not None for x in k] == [False, True]


def test_result_used_by_two_consumers(device):
    a = _data("float32", (20, 9))
    g = xp.asarray(a, device=device)
    s = xp.sum(g, axis=0)
    t, u = s * 2, s + 1
    xp.reset_metrics()
    xp.evaluate(t, u)
    m = xp.metrics()
    assert (m["dispatches"] if device.kind == "wgpu" else m["host_kernels"]) == 1
    assert_same(t, np.sum(a, axis=0) * 2, rtol=1e-5, atol=1e-5)
    assert_same(u, np.sum(a, axis=0) + 1, rtol=1e-5, atol=1e-5)
    # s is held here: the kernel wrote it too, so reading it computes nothing more
    xp.reset_metrics()
    assert_same(s, np.sum(a, axis=0), rtol=1e-5, atol=1e-5)
    assert xp.metrics()["dispatches"] == 0 and xp.metrics()["host_kernels"] == 0


def test_result_needed_elsewhere(device):
    a = _data("float32", (20, 9))
    g = xp.asarray(a, device=device)
    want = np.sum(a, axis=0)
    s = xp.sum(g, axis=0)
    t = s * 3
    w = xp.sum(s * s)                           # another breaker reads s: s is written too
    xp.evaluate(t, w)
    assert_same(t, want * 3, rtol=1e-5, atol=1e-5)
    assert_same(w, np.sum(want * want), rtol=1e-5)
    s2 = xp.sum(g, axis=1)
    both = (s2 + 1, s2)                         # the breaker is a target itself
    _out, n = _kernels(device, lambda: both)
    assert n == 1
    assert_same(both[0], np.sum(a, axis=1) + 1, rtol=1e-5, atol=1e-5)
    assert_same(both[1], np.sum(a, axis=1), rtol=1e-5, atol=1e-5)
    s3 = xp.sum(g, axis=1)
    other = s3[::-1] + s3                       # read at another index: not an epilogue
    assert_same(other, np.sum(a, axis=1)[::-1] + np.sum(a, axis=1), rtol=1e-5, atol=1e-5)
    h = xp.asarray(a, device=device)
    s5 = xp.sum(h, axis=1)
    kd = xp.sum(h, axis=1, keepdims=True)       # the same reduce node, reshaped; s5 is held: written too
    _out, n = _kernels(device, lambda: kd)
    assert n == 1 and s5._node.realized
    assert_same(kd, np.sum(a, axis=1, keepdims=True), rtol=1e-5, atol=1e-5)
    assert_same(s5, np.sum(a, axis=1), rtol=1e-5, atol=1e-5)
    s4 = xp.sum(g, axis=0)
    wide = s4[None, :] + xp.asarray(a, device=device)      # broadcast to a bigger shape: not fused
    assert_same(wide, np.sum(a, axis=0)[None, :] + a, rtol=1e-5, atol=1e-5)


def test_result_not_written_when_nothing_else_needs_it(device):
    """``mean`` and ``relu(a @ b + bias)``: the reduction's / product's own value is a temporary
    nobody holds, so the fused kernel has one output (the epilogue's), not two."""
    a = _data("float32", (32, 16))
    g = xp.asarray(a, device=device)
    bias = xp.asarray(a[0], device=device)
    for y in (xp.mean(g, axis=0), xp.mean(g, axis=1), xp.maximum(g.T @ g + bias, 0)):
        (k,) = schedule([y._node])
        assert k.result_index is not None and len(k.outputs) == 1, k.summary()
    s = xp.sum(g, axis=0)                       # held by the user: written too
    (k,) = schedule([(s * 2)._node])
    assert len(k.outputs) == 2


def test_empty_and_0d(device):
    e = np.zeros((0, 5), dtype=np.float32)
    g = xp.asarray(e, device=device)
    assert_same(xp.mean(g, axis=0), np.full(5, np.nan, np.float32))          # 0 / 0: NaN
    assert_same(xp.sum(g, axis=1) * 2, np.sum(e, axis=1) * 2)        # an empty result
    z = np.ones((0, 4), np.float32)
    assert_same(xp.max(xp.asarray(z, device=device), axis=1) + 1, z.max(axis=1) + 1)
    a = _data("float64", (7,))
    g1 = xp.asarray(a, device=device)
    r, n = _kernels(device, lambda: xp.sqrt(xp.sum(g1 * g1)) + 1)
    assert_same(r, np.sqrt(np.sum(a * a)) + 1, rtol=1e-12)
    assert r.shape == () and n == 1
    v = xp.asarray(a, device=device)
    assert_same((v @ v) * 2, (a @ a) * 2, rtol=1e-12)                  # a 0-d matmul result


@pytest.mark.parametrize("mnk", [(5, 3, 4), (70, 33, 130), (128, 64, 256)], ids=str)
def test_matmul_bias_activation(device, mnk):
    m, k, n = mnk
    rng = np.random.default_rng(3)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    col_bias = rng.standard_normal(n).astype(np.float32)          # along the columns (one per column)
    row_bias = rng.standard_normal((m, 1)).astype(np.float32)     # along the rows
    c = rng.standard_normal((m, n)).astype(np.float32)
    ga, gb, gcb, grb, gc = (xp.asarray(v, device=device) for v in (a, b, col_bias, row_bias, c))
    p = a @ b
    r, cnt = _kernels(device, lambda: xp.maximum(ga @ gb + gcb, 0.0))
    assert_same(r, np.maximum(p + col_bias, 0), rtol=1e-4, atol=1e-4)
    assert cnt == 1
    r, cnt = _kernels(device, lambda: (ga @ gb) * 0.5 + grb)
    assert_same(r, p * np.float32(0.5) + row_bias, rtol=1e-4, atol=1e-4)
    assert cnt == 1
    r, cnt = _kernels(device, lambda: (ga @ gb) * 3.0 + gc)
    assert_same(r, p * np.float32(3.0) + c, rtol=1e-4, atol=1e-4)
    assert cnt == 1
    r, cnt = _kernels(device, lambda: xp.tanh(ga @ gb - grb + gcb).astype(xp.float64))
    assert_same(r, np.tanh(p - row_bias + col_bias).astype(np.float64), rtol=1e-4, atol=1e-5)
    r = (ga @ gb) > 0                     # a bool epilogue
    assert_same(r, p > 0)


def test_matmul_batched_and_vectors(device):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 65, 20)).astype(np.float32)
    b = rng.standard_normal((20, 68)).astype(np.float32)
    c = rng.standard_normal((3, 1, 68)).astype(np.float32)
    ga, gb, gc = (xp.asarray(v, device=device) for v in (a, b, c))
    r, cnt = _kernels(device, lambda: xp.exp(ga @ gb * 0.1) - gc)
    assert_same(r, np.exp(a @ b * np.float32(0.1)) - c, rtol=1e-4, atol=1e-5)
    assert cnt == 1
    v = rng.standard_normal(20).astype(np.float32)
    gv = xp.asarray(v, device=device)
    assert_same(ga @ gv * 3.0 + 1.0, a @ v * np.float32(3.0) + 1, rtol=1e-4, atol=1e-5)     # (3, 65)
    assert_same(gv @ gb - 2.0, v @ b - np.float32(2.0), rtol=1e-4, atol=1e-5)               # (68,)
    ai = rng.integers(-5, 5, (9, 6)).astype(np.int32)
    bi = rng.integers(-5, 5, (6, 11)).astype(np.int32)
    gai, gbi = xp.asarray(ai, device=device), xp.asarray(bi, device=device)
    assert_same((gai @ gbi) // 2 + xp.asarray(bi[0], device=device), (ai @ bi) // 2 + bi[0])
    aa = rng.standard_normal((8, 8)).astype(np.float64)
    g8 = xp.asarray(aa, device=device)
    assert_same(g8 @ g8 + g8, aa @ aa + aa, rtol=1e-12, atol=1e-12)     # the operand read again at the store


def test_multi_pass_reductions_with_epilogue_inputs(device):
    """Reductions split into several passes (on wgpu): the epilogue, with an array it reads,
    runs in the last pass only."""
    rng = np.random.default_rng(5)
    tall = rng.standard_normal((20000, 3)).astype(np.float32)
    wide = rng.standard_normal((3, 20000)).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    gt, gw, gwi = (xp.asarray(v, device=device) for v in (tall, w, wide))
    assert_same(xp.sum(gt, axis=0) * gw + 1, np.sum(tall, axis=0) * w + 1, rtol=1e-4, atol=1e-3)
    assert_same(xp.sum(gwi, axis=1) - gw, np.sum(wide, axis=1) - w, rtol=1e-4, atol=1e-3)
    assert_same(xp.mean(gt) + gw, np.mean(tall) + w, rtol=1e-4, atol=1e-5)
    assert_same(xp.sum(gwi * gwi, axis=1) / gw, np.sum(wide * wide, axis=1) / w, rtol=1e-4)
    assert_same(xp.max(gt, axis=0) > gw, np.max(tall, axis=0) > w)


def test_describe_and_explain_show_the_epilogue(device):
    g = xp.asarray(_data("float32", (4, 6)), device=device)
    m = xp.mean(g, axis=1)
    (k,) = schedule([m._node])
    text = k.describe()
    assert k.kind == "reduce" and "epilogue" in text and "divide" in text and "result" in text
    assert "epilogue [divide]" in k.summary()
    rep = str(xp.explain(m, wgsl=False))
    assert "divide" in rep and "reduce" in rep
    m2 = xp.maximum(g @ xp.asarray(_data("float32", (6, 5)), device=device), 0.0)
    (k2,) = schedule([m2._node])
    assert k2.kind == "matmul" and "epilogue [maximum]" in k2.summary()


def test_float64_host_only_epilogue_keeps_the_reduction_on_device(wgpu_device):
    """exp of float64 has no exact WGSL yet: it must not drag the reduction to the host."""
    prov = wgpu_device.provider
    if not prov.supports(np.dtype(np.float64)):
        pytest.skip("no shader-f64 here")
    a = _data("float64", (30, 40))
    g = xp.asarray(a, device=wgpu_device)
    xp.reset_metrics()
    r = xp.exp(xp.sum(g, axis=0) * 0.1)
    assert_same(r, np.exp(np.sum(a, axis=0) * 0.1), rtol=1e-12)
    assert xp.metrics()["dispatches"] >= 1          # the reduction ran on the device


def test_epilogue_outputs_of_other_shapes(device):
    """The breaker's own value (0-d), a reshape of it and a target that does not read it, evaluated
    together (what dask's std does): outputs of different shapes in one epilogue."""
    a = _data("float64", (40, 30))
    g = xp.asarray(a, device=device)
    s = xp.sum(g[:10, :15])
    r = xp.reshape(s, (1, 1))
    c = xp.astype(xp.broadcast_to(xp.asarray(7.0, device=device), (1, 1)), xp.int64)
    xp.evaluate(s, r, c)
    want = np.sum(a[:10, :15])
    assert_same(s, want, rtol=1e-12, atol=1e-12)
    assert_same(r, np.reshape(want, (1, 1)), rtol=1e-12, atol=1e-12)
    assert_same(c, np.full((1, 1), 7, np.int64))
