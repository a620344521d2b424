"""Laziness, hash-consing and fusion, asserted through metrics()."""

from __future__ import annotations

import numpy as np
import pytest

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
    xp.synchronize(device)          # small work waits for later evaluations to share a submit
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


@pytest.mark.parametrize(("first", "second"), [(12, 1000), (10, 1001)], ids=["vec4", "scalar"])
def test_changed_size_reuses_pipeline(wgpu_device, first, second):
    """Sizes are runtime parameters: one pipeline per signature and form (vec4 for sizes that are
    multiples of 4, one element per thread otherwise)."""
    xp.evaluate(xp.asarray(np.ones(first, np.float32), device=wgpu_device) * 2.0 - 1.0)
    xp.reset_metrics()
    y = xp.asarray(np.ones(second, np.float32), device=wgpu_device) * 5.0 - 2.0
    assert_same(y, np.full(second, 3.0, np.float32))
    assert xp.metrics()["kernels_compiled"] == 0


def test_vec4_form_is_used_where_it_applies(wgpu_device):
    """32-bit and float64 operands whose size is a multiple of 4: one vec4 per thread (float64 with
    several float64 functions: a vec2, the sin and cos of one value counting once), operands read
    through views or broadcast read lane by lane; 64-bit integers: one element per thread; all give
    NumPy's values."""
    from gpuarray.compiler import schedule
    from gpuarray.render.wgsl import render
    h = np.arange(24, dtype=np.float32).reshape(4, 6) - 7.5
    x = xp.asarray(h, device=wgpu_device)
    row = xp.asarray(h[0], device=wgpu_device)
    cases = [(xp.exp(x) * 2 + x, np.exp(h) * 2 + h, 4), ((x > 0) & (x < 9), (h > 0) & (h < 9), 4),
             (xp.astype(x, xp.int32) + 1, h.astype(np.int32) + 1, 4), (x + row, h + h[0], 4),
             (x.T * 2, h.T * 2, 4)]
    if wgpu_device.supports(np.float64):
        d, hd = xp.astype(x, xp.float64), h.astype(np.float64)
        # no scalar constants: one already evaluated elsewhere in the session is an input read at a
        # broadcast index (no vec form)
        cases += [(d + d, hd + hd, 4), (xp.exp(d) * d, np.exp(hd) * hd, 4),
                  (xp.sin(d) + xp.cos(d), np.sin(hd) + np.cos(hd), 4),
                  (xp.sin(d) + xp.cos(d * d), np.sin(hd) + np.cos(hd * hd), 2),
                  (xp.exp(-d * d) * xp.sin(d) - xp.tanh(d), np.exp(-hd * hd) * np.sin(hd) - np.tanh(hd), 2)]
    if wgpu_device.supports(np.int64):
        cases.append((xp.astype(x, xp.int64) + 1, h.astype(np.int64) + 1, 1))
    for got, want, vec in cases:
        kernel = schedule([got._node])[-1]
        assert render(kernel, 4).vec == vec, (want.dtype, vec)
        # exp: within 4 ULP in float32; float64: 1 ULP each function, and a little cancellation
        assert_same(got, want, rtol=4e-7 if want.dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("mixed", [0, 1, 2])
def test_vec4_lanes_read_broadcast_and_view_operands(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch,
                                                      mixed: int) -> None:
    """vec4 kernels whose operands are not all read at the thread's own elements (a row or a column
    broadcast, a 0-d array, a reversed or strided view, a gather, an int32 and a bool operand) bind
    those as arrays of scalars, read lane by lane (``GPUARRAY_VEC4_MIXED`` 1: where another operand is
    read as words, 2: also where none is; 0: one element a thread): NumPy's values with NaN, infinities
    and -0.0, in each setting, rows that are not a multiple of 4 long included."""
    from gpuarray.compiler import schedule
    from gpuarray.render import wgsl
    monkeypatch.setattr(wgsl, "MIXED_LANES", mixed)
    rng = np.random.default_rng(5)
    h = rng.uniform(-30, 30, (12, 10)).astype(np.float32)
    h[1, 2], h[3, 4], h[5, 6], h[7, 8] = np.nan, np.inf, -np.inf, -0.0
    hw = np.concatenate([h, h[:, :2]], axis=1)          # 12 x 12: views of it are 12 x 10
    row, col = rng.uniform(-3, 3, 10).astype(np.float32), rng.uniform(1, 3, (12, 1)).astype(np.float32)
    k = rng.integers(-50, 50, (12, 10)).astype(np.int32)
    idx = rng.integers(0, 12, 12)
    x, xw, r, c, ki = (xp.asarray(a, device=wgpu_device) for a in (h, hw, row, col, k))
    with xp.config(offload="always"):           # a 0-d array computed on the device (one held on the host only,
        s0 = xp.max(xp.asarray(np.float32([2.5, -1.0]), device=wgpu_device))    # as asarray(2.5), is a uniform)
        xp.evaluate(s0)
    ix = xp.asarray(idx, device=wgpu_device)
    lazy = xp.config(offload="always", eager_host=False)      # recorded, not computed at once on the host
    lazy.__enter__()
    cases = [  # (got, want, an operand read as words); no two share work (an evaluated one is an input)
        (x - r, h - row, True), (x * r + c, h * row + col, True), (x / c, h / col, True),
        (x * s0 - 1, h * np.float32(2.5) - 1, True), (xp.where(x > r, k, -k), np.where(h > row, k, -k), True),
        (xw[:, 2:] * 2, hw[:, 2:] * 2, False), (xw[::-1, 1:11] + x, hw[::-1, 1:11] + h, True),
        (x[ix] * 2, h[idx] * 2, False),
        (xp.exp(x + r) + xp.astype(ki, xp.float32), np.exp(h + row) + k.astype(np.float32), True),
        (ki * 3 - xp.astype(x < r, xp.int32), k * 3 - (h < row).astype(np.int32), True)]
    try:
        with np.errstate(all="ignore"):
            for n, (got, want, words) in enumerate(cases):
                kernel = schedule([got._node])[-1]
                vec = wgsl.render(kernel, 4).vec
                assert vec == (4 if mixed == 2 or (mixed == 1 and words) else 1), (n, mixed, words)
                # float32 exp within a few ULP, then sums that cancel (exp(x + r) + k, |k| < 50): an ULP of
                # terms below 128 absolutely, else relatively
                assert_same(got, want, rtol=4e-7, atol=8e-6)
    finally:
        lazy.__exit__(None, None, None)


@pytest.mark.parametrize("heavy", [False, True], ids=["arith", "exp"])
@pytest.mark.parametrize("extra", [0, 1, 37], ids=["whole", "one-more", "partial"])
def test_vec4_grid_stride_loop(wgpu_device, monkeypatch, heavy, extra):
    """vec4 kernels loop over the array with a grid-sized stride, ``per_thread`` vec4 per thread
    (2 for arithmetic, 8 with helper functions): every element is computed once, including where
    the last round of the loop is partial; two inputs, two outputs."""
    from gpuarray.compiler import schedule
    from gpuarray.render.wgsl import WORKGROUP, render
    per = 8 if heavy else 2
    n = 4 * (WORKGROUP * per * 3 + extra)
    a = np.arange(n, dtype=np.float32) / 7 - 40
    b = np.arange(n, dtype=np.float32)[::-1] * 0.5
    x, y = xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device)
    f = (lambda m, u, v: m.exp(u * 0.01) * v) if heavy else (lambda m, u, v: u * v + 1)
    got1, got2 = f(xp, x, y), x - y
    kernel = schedule([got1._node, got2._node])[-1]
    r = render(kernel, 4)
    assert (r.vec, r.per_thread) == (4, per) and "loop {" in r.source
    provider = wgpu_device.provider
    groups = []
    orig = provider.dispatch
    monkeypatch.setattr(provider, "dispatch", lambda src, prm, bufs, g: (groups.append(g), orig(src, prm, bufs, g)))
    xp.evaluate(got1, got2)
    assert groups == [-(-n // (4 * WORKGROUP * per))]
    if heavy:
        assert_same(got1, f(np, a, b), rtol=4e-7)
    else:       # a driver may contract u * v + 1 into an fma (NVIDIA does): one ULP of the larger term
        g, want = np.asarray(got1), f(np, a, b)
        assert g.dtype == want.dtype
        assert np.all(np.abs(g - want) <= np.spacing(np.maximum(np.abs(a * b), np.float32(1))))
    assert_same(got2, a - b)


def test_vec4_four_lane_helper_matches_per_lane(wgpu_device):
    """float32 tanh in the vec4 form is one ``ga_tanhx4`` call per thread: its polynomial for the four
    lanes, and the exp form of the four where one is 1 or more in magnitude (NaN, +-inf, -0.0 and large
    values mixed into one vec4). Same bits as the one-element-per-thread form, and NumPy's values."""
    from gpuarray.compiler import schedule
    from gpuarray.render.wgsl import render
    fours = [[0.5, -0.25, 0.1, 0.9], [0.5, 2.0, -0.0, np.nan], [np.inf, -np.inf, 1e-30, -1.0],
             [-0.0, 0.0, 0.999, -0.999], [20.0, -9.5, 3.0, 1.0], [1e-6, -1e-6, 0.75, np.nan]]
    h = np.array(fours * 50, np.float32).ravel()
    x4 = xp.asarray(h, device=wgpu_device)
    x1 = xp.asarray(np.append(h, np.float32(0.5)), device=wgpu_device)    # size 4k + 1: one per thread
    got4, got1 = xp.tanh(x4 * 1.0), xp.tanh(x1 * 1.0)
    src = render(schedule([got4._node])[-1], 4).source
    assert src.count("ga_tanhx4_f32(vec4<f32>(") == 1
    a, b = np.asarray(got4), np.asarray(got1)[:-1]
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32))
    assert_same(got4, np.tanh(h), rtol=2.4e-7)


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
    xp.synchronize(wgpu_device)     # small work waits for later evaluations to share a submit
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


def test_sin_and_cos_of_one_value_share_a_range_reduction(device):
    """chain8 takes sin(x) and cos(x): the float32 kernel computes both with one ga_sincos call."""
    from gpuarray.compiler import schedule
    from gpuarray.render.wgsl import render
    h = np.concatenate([np.linspace(-700, 700, 2001), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 3e38]])
    h = h.astype(np.float32)
    x = xp.asarray(h, device=device)
    y = xp.sin(x) * 2 + xp.cos(x)
    if device.kind == "wgpu":
        assert "ga_sincos_f32(" in render(schedule([y._node])[-1]).source
    with np.errstate(all="ignore"):
        want = np.sin(h) * np.float32(2) + np.cos(h)
        want2 = np.sin(h) - np.cos(h) * np.float32(0)
    assert_same(y, want, rtol=4e-6, atol=4e-7)
    assert_same(xp.sin(x) - xp.cos(x) * 0, want2, rtol=4e-7)


def test_a_realized_constant_stays_a_uniform_elsewhere(wgpu_device):
    """Constants are shared nodes; one that an earlier evaluation realized (an array of its own) must not
    become an input of later kernels that use the same value: same pipeline, vec4 form (CI saw both
    fail when another test file on the same worker had realized 3.0 or 0.0 first)."""
    from gpuarray.compiler import schedule
    from gpuarray.graph.node import const
    from gpuarray.render.wgsl import render
    from gpuarray.runtime.planner import evaluate_nodes
    for v in (0.0, 3.0, 9.0):
        c = const(v, np.dtype(np.float32), wgpu_device)
        evaluate_nodes([c])
        assert c.data is not None
    h = np.arange(64, dtype=np.float32) - 7.5
    x = xp.asarray(h, device=wgpu_device)
    xp.evaluate(x * 2.0 + 1.0)
    xp.reset_metrics()
    assert_same(x * 3.0 + 7.0, h * 3 + 7)
    assert xp.metrics()["kernels_compiled"] == 0
    e = (x > 0) & (x < 9)
    kernel = schedule([e._node])[-1]
    assert render(kernel, 4).vec == 4
    assert render(kernel, 4).n_inputs == 1
    assert_same(e, (h > 0) & (h < 9))
