"""The reduction kernels' paths (render/wgsl_reduce.py, providers/wgpu_reduce.py) against NumPy.

Each path is checked on both providers (the cpu results are the reference semantics):
row layout with vec4 loads (lengths not divisible by 4, unaligned rows), the scalar
flat row, the col layout (axis 0, small and large C, vec4 and scalar), the multi-index
fallbacks (views, weights broadcast along the reduced axis, non-contiguous axes),
subgroup versus shared-memory combine, many chunks and several passes, and the fused
prologue staying one pass over memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_reduce
from gpuarray.render.wgsl_reduce import Variant, choose_variant

from .conftest import assert_same


@pytest.fixture
def variants(monkeypatch: pytest.MonkeyPatch) -> list[Variant]:
    """Records the variant of every reduce pass the wgpu provider records."""
    seen: list[Variant] = []

    def spy(kernel: Any, subgroups: bool = False, vector: bool = True) -> Any:
        v, sizes = choose_variant(kernel, subgroups, vector)
        seen.append(v)
        return v, sizes
    monkeypatch.setattr(wgpu_reduce, "choose_variant", spy)
    monkeypatch.setattr(wgpu_reduce, "VECTOR_ALL", True)     # render every variant chosen
    return seen


@pytest.fixture(params=[True, False], ids=["subgroups", "tree"])
def combine_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[bool]:
    monkeypatch.setattr(wgpu_reduce, "USE_SUBGROUPS", request.param)
    yield request.param


@pytest.fixture
def many_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny thresholds: even small arrays are split into many chunks and several passes."""
    monkeypatch.setattr(wgpu_reduce, "TARGET_GROUPS", 64)
    monkeypatch.setattr(wgpu_reduce, "ROW_MIN_ELEMS", 32)
    monkeypatch.setattr(wgpu_reduce, "COL_MIN_ROWS", 2)


def _f32(shape: Any, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _check_all_ops(device: xp.Device, a: np.ndarray, axis: Any, rtol: float = 2e-5) -> None:
    """sum, max, min, mean, var, any, all; float sums against the float64 result (NumPy's own
    float32 sum along a strided axis is sequential, so it is no exact reference)."""
    g = xp.asarray(a, device=device)
    d = a.astype(np.float64)
    n = max(1, a.size // max(1, np.sum(a, axis=axis).size))
    atol = 4e-7 * float(np.max(np.sum(np.abs(d), axis=axis), initial=1.0))
    assert_same(xp.sum(g, axis=axis), np.sum(d, axis=axis).astype(np.float32), rtol=rtol, atol=atol)
    assert_same(xp.max(g, axis=axis), np.max(a, axis=axis))
    assert_same(xp.min(g, axis=axis), np.min(a, axis=axis))
    assert_same(xp.mean(g, axis=axis), np.mean(d, axis=axis).astype(np.float32), rtol=rtol, atol=atol / n)
    assert_same(xp.var(g, axis=axis), np.var(d, axis=axis).astype(np.float32), rtol=1e-4, atol=1e-6)
    assert_same(xp.any(g > 2.5, axis=axis), np.any(a > 2.5, axis=axis))
    assert_same(xp.all(g > -2.5, axis=axis), np.all(a > -2.5, axis=axis))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 63, 64, 65, 1001, 4097, 70_001])
def test_full_vector_lengths(device, combine_mode, n):
    _check_all_ops(device, _f32(n, n), None)


@pytest.mark.parametrize("shape", [(7, 1001), (33, 65), (5, 4096), (3, 66), (2, 130)])
def test_rows_unaligned(device, combine_mode, variants, shape):
    _check_all_ops(device, _f32(shape, 1), 1)
    if device.kind == "wgpu":
        sg = combine_mode and "subgroup" in device.provider.features
        assert Variant("row", True, 4, sg) in variants


@pytest.mark.parametrize("shape", [(100, 16), (37, 20), (50, 18), (3000, 1024), (9, 4096), (1000, 3), (2, 17)])
def test_axis0_small_and_large_c(device, variants, shape):
    _check_all_ops(device, _f32(shape, 2), 0)
    if device.kind == "wgpu":
        c = shape[1]
        want = "col" if c >= 16 else "row"
        assert variants[0].layout == want
        if c >= 16:
            assert variants[0].flat and variants[0].vec == (4 if c % 4 == 0 else 1)


@pytest.mark.parametrize("shape,axis", [((4, 50, 24), 1), ((5, 6, 7), (1, 2)), ((6, 7, 20), (0, 1)),
                                        ((3, 4, 5), (0, 2)), ((2, 3, 4, 5), (1, 2)), ((40, 3), 1)])
def test_axis_blocks(device, shape, axis):
    _check_all_ops(device, _f32(shape, 3), axis)


def test_many_chunks_and_passes(device, many_chunks, variants):
    for shape, axis in [((20_001,), None), ((3, 5000), 1), ((700, 40), 0), ((1000, 3), 0), ((50, 6, 24), (0, 1))]:
        _check_all_ops(device, _f32(shape, 4), axis)
    if device.kind == "wgpu":
        xp.reset_metrics()
        g = xp.asarray(_f32((20_001,), 5), device=device)
        xp.evaluate(g + 0)
        xp.reset_metrics()
        xp.evaluate(xp.sum(g))
        assert xp.metrics()["dispatches"] >= 3       # 20001 / 32 -> 64 chunks -> 2 -> 1
        xp.reset_metrics()
        xp.evaluate(xp.sum(xp.asarray(_f32((700, 40), 6), device=device) + 0, axis=0))
        assert xp.metrics()["dispatches"] >= 3       # the elementwise copy, then col passes


def test_subgroup_and_tree_agree(wgpu_device, monkeypatch):
    a = _f32(100_003, 7)
    ints = np.random.default_rng(8).integers(-1000, 1000, 100_003).astype(np.int32)
    out = {}
    for sg in (True, False):
        monkeypatch.setattr(wgpu_reduce, "USE_SUBGROUPS", sg)
        g, gi = xp.asarray(a, device=wgpu_device), xp.asarray(ints, device=wgpu_device)
        out[sg] = (float(xp.sum(g)), float(xp.max(g)), int(xp.sum(gi)), int(xp.min(gi)))
    assert out[True][1:] == out[False][1:]
    assert out[True][0] == pytest.approx(out[False][0], rel=1e-5)
    assert out[True][2] == int(ints.astype(np.int64).sum())


def test_vector_off_matches(wgpu_device, monkeypatch, variants):
    monkeypatch.setattr(wgpu_reduce, "USE_VECTOR", False)
    _check_all_ops(wgpu_device, _f32(1001, 9), None)
    _check_all_ops(wgpu_device, _f32((40, 36), 9), 0)
    assert variants and all(v.vec == 1 for v in variants)


def test_prologue_fusion_one_pass(wgpu_device, variants):
    n = 50_000
    xs, ys = _f32(n, 10) * 0.1, _f32(n, 11)
    x, y = xp.asarray(xs, device=wgpu_device), xp.asarray(ys, device=wgpu_device)
    xp.evaluate(x + 0, y + 0)
    xp.reset_metrics()
    r = xp.sum(xp.exp(x) * y)
    xp.evaluate(r)
    xp.synchronize(r.device)        # small work waits for later evaluations to share a submit
    m = xp.metrics()
    assert m["dispatches"] == 2 and m["submits"] == 1   # the fused pass over x and y, then 13 partials
    assert variants[0] == Variant("row", True, 4, variants[0].sg)
    assert_same(r, np.sum(np.exp(xs) * ys), rtol=1e-4)
    xp.reset_metrics()
    small = xp.sum(xp.exp(x[:1000]) * y[:1000])
    xp.evaluate(small)
    assert xp.metrics()["dispatches"] == 1


def test_hoisted_broadcasts(device, variants):
    a = _f32((64, 40), 12)
    g = xp.asarray(a, device=device)
    w_row = np.linspace(0.5, 2, 64, dtype=np.float32)[:, None]    # broadcast along axis 1: hoisted there
    w_col = np.linspace(0.5, 2, 40, dtype=np.float32)              # varies along axis 1: multi-index path
    for w in (w_row, w_col):
        gw = xp.asarray(w, device=device)
        for axis in (0, 1, None):
            assert_same(xp.sum(g * gw + 1.5, axis=axis), np.sum(a * w + np.float32(1.5), axis=axis),
                        rtol=1e-5, atol=1e-5)
    if device.kind == "wgpu":
        assert any(not v.flat for v in variants) and any(v.flat for v in variants)


def test_views_use_multi_index(device):
    a = _f32((30, 48), 13)
    g = xp.asarray(a, device=device)
    assert_same(xp.sum(g.T, axis=0), np.sum(a.T, axis=0), rtol=1e-5, atol=1e-5)
    assert_same(xp.max(g[::2, 1:], axis=0), np.max(a[::2, 1:], axis=0))
    assert_same(xp.sum(g[:, ::-1], axis=1), np.sum(a[:, ::-1], axis=1), rtol=1e-5, atol=1e-5)
    assert_same(xp.min(g.reshape(48, 30), axis=0), np.min(a.reshape(48, 30), axis=0))


@pytest.mark.parametrize("shape,axis", [((4099,), None), ((9, 130), 1), ((130, 24), 0), ((60, 5), 0)])
def test_nan_propagation(device, shape, axis):
    a = _f32(shape, 14)
    flat = a.reshape(-1)
    for pos in (0, 3, flat.size // 2, flat.size - 1):
        b = flat.copy()
        b[pos] = np.nan
        b = b.reshape(shape)
        g = xp.asarray(b, device=device)
        assert_same(xp.max(g, axis=axis), np.max(b, axis=axis))
        assert_same(xp.min(g, axis=axis), np.min(b, axis=axis))
        assert_same(xp.sum(g, axis=axis), np.sum(b, axis=axis), rtol=1e-4, atol=1e-4)
    c = a.copy().reshape(-1)
    c[1], c[-2] = np.inf, -np.inf
    g = xp.asarray(c.reshape(shape), device=device)
    with np.errstate(invalid="ignore"):
        assert_same(xp.max(g, axis=axis), np.max(c.reshape(shape), axis=axis))
        assert_same(xp.sum(g, axis=axis), np.sum(c.reshape(shape), axis=axis), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape,axis", [((4099,), None), ((9, 130), 1), ((130, 24), 0), ((20_001,), None)])
def test_max_min_order_keys(device, many_chunks, variants, shape, axis):
    """float32 max/min accumulate integer order keys: negative and positive NaN win wherever they
    are, infinities, all-negative data, signed zeros and subnormals come back bit for bit."""
    rng = np.random.default_rng(15)
    neg_nan = np.array([0xFFC00001], np.uint32).view(np.float32)[0]
    cases = {
        "negative": -rng.random(shape, dtype=np.float32) - 1,
        "neg_nan": _f32(shape, 16),
        "infs": np.where(rng.random(shape) < 0.5, -np.inf, np.inf).astype(np.float32),
        "neg_inf_only": np.full(shape, -np.inf, np.float32),
        "zeros_and_tiny": np.where(rng.random(shape) < 0.5, np.float32(-0.0), np.float32(-1e-45)),
    }
    cases["neg_nan"].reshape(-1)[cases["neg_nan"].size // 3] = neg_nan
    for a in cases.values():
        g = xp.asarray(a, device=device)
        for fn in ("max", "min"):
            got, want = getattr(xp, fn)(g, axis=axis), getattr(np, fn)(a, axis=axis)
            assert_same(got, want, check_signed_zero=False)
    one = np.float32(-0.0).reshape(())
    assert np.signbit(np.asarray(xp.max(xp.asarray(np.full(shape, -0.0, np.float32), device=device),
                                        axis=axis))).all()            # only -0: -0 comes back
    assert np.signbit(np.asarray(xp.min(xp.asarray(one, device=device))))


@pytest.mark.parametrize("shape,axis", [((5001,), None), ((7, 301), 1), ((301, 20), 0), ((40, 6), 0)])
def test_integers_wrap_and_bools(device, shape, axis):
    rng = np.random.default_rng(15)
    i32 = rng.integers(2**30, 2**31 - 1, shape, dtype=np.int64).astype(np.int32)
    g = xp.asarray(i32, device=device)
    assert_same(xp.sum(g, axis=axis, dtype=xp.int32), np.sum(i32, axis=axis, dtype=np.int32))
    assert_same(xp.sum(g, axis=axis), np.sum(i32, axis=axis, dtype=np.int64))
    assert_same(xp.max(g, axis=axis), np.max(i32, axis=axis))
    u8 = rng.integers(0, 256, shape).astype(np.uint8)
    gu = xp.asarray(u8, device=device)
    assert_same(xp.sum(gu, axis=axis, dtype=xp.uint8), np.sum(u8, axis=axis, dtype=np.uint8))
    assert_same(xp.min(gu, axis=axis), np.min(u8, axis=axis))
    i64 = rng.integers(-2**62, 2**62, shape, dtype=np.int64)
    assert_same(xp.sum(xp.asarray(i64, device=device), axis=axis), np.sum(i64, axis=axis))
    b = rng.random(shape) > 0.999
    gb = xp.asarray(b, device=device)
    assert_same(xp.any(gb, axis=axis), np.any(b, axis=axis))
    assert_same(xp.all(~gb, axis=axis), np.all(~b, axis=axis))
    assert_same(xp.sum(gb, axis=axis), np.sum(b, axis=axis, dtype=np.int64))


@pytest.mark.parametrize("shape,axis", [((3001,), None), ((5, 257), 1), ((257, 20), 0)])
def test_float64_and_complex(device, shape, axis):
    rng = np.random.default_rng(16)
    d = rng.standard_normal(shape)
    g = xp.asarray(d, device=device)
    assert_same(xp.sum(g, axis=axis), np.sum(d, axis=axis), rtol=1e-12, atol=1e-12)
    assert_same(xp.max(g, axis=axis), np.max(d, axis=axis))
    assert_same(xp.var(g, axis=axis), np.var(d, axis=axis), rtol=1e-11)
    for dt in (np.complex64, np.complex128):
        c = (d + 1j * rng.standard_normal(shape)).astype(dt)
        gc = xp.asarray(c, device=device)
        tol = 1e-4 if dt == np.complex64 else 1e-12
        assert_same(xp.sum(gc, axis=axis), np.sum(c, axis=axis), rtol=tol, atol=tol)
        assert_same(xp.sum(gc * gc, axis=axis), np.sum(c * c, axis=axis), rtol=tol, atol=tol)


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
def test_empty_and_0d_paths(device):
    for shape, axis in [((0, 40), 0), ((40, 0), 1), ((0,), None), ((3, 0, 20), 1), ((0, 3), 0)]:
        z = np.zeros(shape, np.float32)
        g = xp.asarray(z, device=device)
        assert_same(xp.sum(g, axis=axis), np.sum(z, axis=axis))
        assert_same(xp.prod(g, axis=axis), np.prod(z, axis=axis))
        assert_same(xp.any(g, axis=axis), np.any(z, axis=axis))
        assert_same(xp.all(g, axis=axis), np.all(z, axis=axis))
    s = xp.asarray(np.float32(-0.0), device=device)
    assert_same(xp.sum(s), np.sum(np.float32(-0.0)))
    assert_same(xp.max(s), np.float32(-0.0)[()])
    a = _f32((6, 20), 17)
    assert_same(xp.sum(xp.asarray(a, device=device), axis=()), np.sum(a, axis=()))


def test_float32_accuracy(device):
    a = np.random.default_rng(18).random(1 << 22, dtype=np.float32)
    exact = np.sum(a, dtype=np.float64)
    got = float(xp.sum(xp.asarray(a, device=device)))
    assert abs(got - exact) <= 1e-6 * exact         # sequential float32 summation is ~100x worse
    m = a.reshape(1024, 4096)
    exact0 = np.sum(m, axis=0, dtype=np.float64)
    got0 = np.asarray(xp.sum(xp.asarray(m, device=device), axis=0), dtype=np.float64)
    assert np.max(np.abs(got0 - exact0) / exact0) <= 2e-6


def test_every_variant_is_exercised(wgpu_device, variants, monkeypatch):
    monkeypatch.setattr(wgpu_reduce, "USE_SUBGROUPS", False)
    a = _f32((30, 48), 19)
    g = xp.asarray(a, device=wgpu_device)
    c = xp.asarray(a.astype(np.complex64), device=wgpu_device)
    h = xp.asarray(np.ascontiguousarray(a[:, :30]), device=wgpu_device)
    cases = [
        (xp.sum(g), np.sum(a.astype(np.float64))),                        # row, flat, vec4
        (xp.sum(c), np.sum(a.astype(np.complex128))),                     # row, flat, scalar (complex)
        (xp.sum(g[:, ::2]), np.sum(a[:, ::2].astype(np.float64))),        # row, multi-index (a view)
        (xp.sum(g, axis=0), np.sum(a.astype(np.float64), axis=0)),        # col, flat, vec4
        (xp.sum(h, axis=0), np.sum(a[:, :30].astype(np.float64), axis=0)),  # col, flat, scalar (C % 4 != 0)
        (xp.sum(g.T, axis=0), np.sum(a.T.astype(np.float64), axis=0)),    # col, multi-index
    ]
    for n, (got, want) in enumerate(cases):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
        if n == 4:
            assert variants[-1] == Variant("col", True, 1, False)
    seen = {(v.layout, v.flat, v.vec) for v in variants}
    assert seen >= {("row", True, 4), ("row", True, 1), ("row", False, 1), ("col", True, 4), ("col", True, 1),
                    ("col", False, 1)}


def test_subgroup_shader_rejected_falls_back_to_tree(wgpu_device, monkeypatch, variants):
    prov = wgpu_device.provider
    if "subgroup" not in prov.features:
        pytest.skip("the adapter has no subgroup feature")
    monkeypatch.setattr(prov, "_reduce_sg_failed", False, raising=False)
    real = prov.pipeline_for

    def picky(source: str) -> Any:
        if "subgroupShuffleXor" in source:
            raise RuntimeError("Shader '' parsing error: unknown built-in")
        return real(source)
    monkeypatch.setattr(prov, "pipeline_for", picky)
    a = _f32((5, 3001), 20)
    assert_same(xp.sum(xp.asarray(a, device=wgpu_device), axis=1), np.sum(a.astype(np.float64), axis=1)
                .astype(np.float32), rtol=1e-5)
    assert prov._reduce_sg_failed and variants[0].sg
    assert_same(xp.max(xp.asarray(a, device=wgpu_device)), np.max(a))
    assert not variants[-1].sg


def test_params_arena_overflow_and_reuse(wgpu_device, many_chunks, monkeypatch):
    """Dispatch parameters share one buffer per pass (``wgpu_pool.ParamArena``); a pass with more
    dispatches than fit continues in a fresh buffer, and the buffer is reused after each submit."""
    prov = wgpu_device.provider
    monkeypatch.setattr(prov.params, "nbytes", 4 * prov.params.align)     # four dispatches per buffer
    monkeypatch.setattr(prov.params, "buffer", None)
    a = _f32((3, 5000), 21)
    g = xp.asarray(a, device=wgpu_device)
    outs = [xp.sum(g * float(k), axis=1) for k in range(6)] + [xp.max(g + float(k)) for k in range(6)]
    xp.reset_metrics()
    xp.evaluate(*outs)                     # one pass, more than four dispatches
    assert xp.metrics()["dispatches"] > 8
    for k in range(6):
        assert_same(outs[k], np.sum(a * np.float32(k), axis=1), rtol=1e-5, atol=1e-3)
        assert_same(outs[6 + k], np.max(a + np.float32(k)))
    again = xp.sum(g * 7.0, axis=1)        # after the submit: offsets start over
    assert_same(again, np.sum(a * np.float32(7), axis=1), rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("length", [64, 100, 128, 129])
def test_many_short_rows_take_a_few_threads_each(wgpu_device, variants, length):
    """At least MANY_ROWS rows of at most SHORT_ROW elements: a few threads per row (the seg
    layout, flat prologues; the col layout over a unit inner dimension otherwise); longer rows
    keep a workgroup each."""
    from gpuarray.render import wgsl_reduce
    a = _f32((wgsl_reduce.MANY_ROWS, length), length)
    g = xp.asarray(a, device=wgpu_device)
    with xp.config(offload="always"):
        got = xp.sum(g, axis=1)
        np.asarray(got)
    want = np.sum(a.astype(np.float64), axis=1).astype(np.float32)
    assert_same(got, want, rtol=2e-5, atol=4e-7 * float(np.abs(a).sum(axis=1).max()))
    assert variants[-1].layout == ("col" if length < wgsl_reduce.SEG_MIN else
                                   "seg" if length <= wgsl_reduce.SHORT_ROW else "row")
