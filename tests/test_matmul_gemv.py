"""Matrix-vector products (the GEMV class, ``providers/wgpu_matmul_classes.gemv_for``): ``A @ v``, ``v @ A``,
``A.T @ r`` and ``v @ A.T`` are matmul nodes; on wgpu the row-dot kernel (``render/wgsl_matmul_gemv.py``)
reads a matrix along ``K``, the narrow kernel with one narrow row (``Skinny(1, ..., one_pass=True)``)
reads it along the output, each in one dispatch unless ``K`` is split. Every case against NumPy on
both devices; the kernel choice and dispatch counts on wgpu."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler.schedule import schedule
from gpuarray.providers import wgpu_matmul, wgpu_matmul_classes
from gpuarray.render.wgsl_matmul_gemv import Gemv, render_gemv_sum, sum_lanes
from gpuarray.render.wgsl_matmul_skinny import Skinny

from .conftest import assert_same


def _rand(shape: tuple[int, ...], seed: int, dt: str = "float32") -> np.ndarray:
    x = np.random.default_rng(seed).uniform(-3, 3, shape)
    return (np.round(x * 10) if np.dtype(dt).kind in "iu" else x).astype(dt)


def _close(got: Any, a: np.ndarray, b: np.ndarray) -> None:
    """``got`` against ``a @ b``: the dtype and shape NumPy gives, values within ``4 * L * eps`` of
    ``|a| @ |b|`` (``L``: the longest sequential sum, at most ``K``); integers exactly."""
    g = np.asarray(got)
    want = a @ b
    assert g.dtype == want.dtype and g.shape == want.shape
    if want.dtype.kind in "iu":
        assert np.array_equal(g, want)
        return
    k = max(a.shape[-1], 1)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    scale = np.abs(a64) @ np.abs(b64)
    err = np.abs(g.astype(np.float64) - a64 @ b64)
    assert np.all(err <= 4 * k * np.finfo(want.dtype).eps * scale + 1e-30), float(err.max())


def _skip_f64(device: xp.Device, dt: str) -> None:
    if dt == "float64" and not device.provider.supports(np.dtype(dt)):
        pytest.skip("no shader-f64")


@pytest.fixture
def chosen(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The configurations ``enqueue_matmul`` picked (GEMV class or not) while the test runs."""
    seen: list[Any] = []
    real = wgpu_matmul.plan

    def spy(kernel: Any, cfg: Any, *args: Any, **kw: Any) -> Any:
        seen.append(cfg)
        return real(kernel, cfg, *args, **kw)

    monkeypatch.setattr(wgpu_matmul, "plan", spy)
    yield seen


def _dispatches(fn: Any) -> tuple[Any, int]:
    """(result on the host, dispatches of its evaluation)."""
    before = xp.metrics()["dispatches"]
    r = np.asarray(fn())
    return r, xp.metrics()["dispatches"] - before


@pytest.mark.parametrize("dt", ["float32", "float64", "int32"])
@pytest.mark.parametrize("m, k", [(1, 1), (3, 7), (300, 64), (257, 100), (65, 512), (33, 513), (5, 3000),
                                  (4000, 3)])
def test_four_forms(device: xp.Device, dt: str, m: int, k: int) -> None:
    """``A @ v``, ``A.T @ r``, ``r @ A`` and ``v @ A.T`` for shapes around the row-dot thresholds (K
    of 1, 64, 512 and 513: lanes of 1, 16 and 32, long rows past ``GEMV_LONG``) and the column sum's
    widths (16, 64, past 64)."""
    _skip_f64(device, dt)
    a, v, r = _rand((m, k), 1, dt), _rand((k,), 2, dt), _rand((m,), 3, dt)
    ga, gv, gr = (xp.asarray(x, device=device) for x in (a, v, r))
    _close(ga @ gv, a, v)
    _close(ga.T @ gr, a.T, r)
    _close(gr @ ga, r, a)
    _close(gv @ ga.T, v, a.T)


@pytest.mark.parametrize("dt", ["int8", "uint16", "int64", "uint32", "bool"])
def test_integer_and_bool_dtypes(device: xp.Device, dt: str) -> None:
    """Integers wrap like NumPy's matmul (int8 and uint16 accumulate in 32 bits and wrap at the store);
    bool products are counts compared with zero."""
    if dt == "int64" and not device.provider.supports(np.dtype(dt)):
        pytest.skip("no shader-int64")
    rng = np.random.default_rng(5)
    if dt == "bool":
        a, v = rng.random((70, 90)) < 0.05, rng.random(90) < 0.5
    else:
        info = np.iinfo(dt)
        a = rng.integers(max(info.min, -1000), min(info.max, 1000), (70, 2000)).astype(dt)
        v = rng.integers(max(info.min, -1000), min(info.max, 1000), 2000).astype(dt)
    ga, gv = xp.asarray(a, device=device), xp.asarray(v, device=device)
    assert_same(ga @ gv, a @ v)
    assert_same(gv[:70] @ ga, v[:70] @ a)


def test_batches_and_broadcasting(device: xp.Device) -> None:
    """Batched matrices times a vector, a batch of vectors times one matrix, broadcast batches."""
    a, b = _rand((3, 50, 70), 1), _rand((2, 1, 70, 1), 2)
    v, w = _rand((70,), 3), _rand((4, 1, 1, 50), 4)
    ga, gb, gv, gw = (xp.asarray(x, device=device) for x in (a, b, v, w))
    _close(ga @ gv, a, v)
    _close(ga @ gb, a, b)
    _close(gw @ ga, w, a)
    _close(xp.matrix_transpose(ga) @ xp.asarray(v[:50], device=device), np.swapaxes(a, -1, -2), v[:50])


def test_non_contiguous_operands(device: xp.Device) -> None:
    """Slices with steps (both axes strided: the smaller stride is read along), transposed views,
    reversed vectors, a broadcast (zero-stride) matrix."""
    big, v = _rand((300, 400), 1), _rand((400,), 2)
    g, gv = xp.asarray(big, device=device), xp.asarray(v, device=device)
    _close(g[::2, ::3] @ gv[::3], big[::2, ::3], v[::3])
    _close(g[::3, ::2].T @ gv[:100][::-1], big[::3, ::2].T, v[:100][::-1])
    _close(gv[::-1][:300] @ g[:, 5:305:1], v[::-1][:300], big[:, 5:305])
    _close(g.T[7] @ g[:, :9], big.T[7], big[:, :9])
    row = _rand((1, 64), 3)
    gb = xp.broadcast_to(xp.asarray(row, device=device), (500, 64))
    _close(gb @ gv[:64], np.broadcast_to(row, (500, 64)), v[:64])
    _close(g[1:200, 4:68] @ gv[:64], big[1:200, 4:68], v[:64])          # vec4 reads from an offset
    _close(g[1:200, 1:65] @ gv[:64], big[1:200, 1:65], v[:64])          # an offset of 1: scalar reads
    _close(gv[:64] @ g[3:203, 8:72].T, v[:64], big[3:203, 8:72].T)
    _close(g[::2, 8:72] @ gv[8:72], big[::2, 8:72], v[8:72])
    _close(g[:64, :64] @ g[0, :64], big[:64, :64], big[0, :64])         # one buffer, read both ways


@pytest.mark.parametrize("vec4", [True, False])
def test_vec4_and_scalar_reads(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch, vec4: bool) -> None:
    """The row dot with vec4 matrix reads and without (``GEMV_VEC4``), float32 and float64, short and
    long rows, batches (vec4 batch strides), a split K and an epilogue."""
    monkeypatch.setattr(wgpu_matmul_classes, "GEMV_VEC4", vec4)
    for dt in ("float32", "float64"):
        _skip_f64(wgpu_device, dt)
        for sa, sb in [((300, 64), (64,)), ((3, 50, 64), (64,)), ((2, 1, 40, 128), (3, 128, 1)), ((64, 9000), (9000,)),
                       ((5, 4), (4,)), ((1, 4096), (4096,))]:
            a, b = _rand(sa, 1, dt), _rand(sb, 2, dt)
            ga, gb = xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device)
            _close(ga @ gb, a, b)
            got = np.asarray(ga @ gb * 2 + 1)
            np.testing.assert_allclose(got, (a.astype(np.float64) @ b) * 2 + 1, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("vec4", [True, False])
def test_column_sum_vec4_and_scalar_reads(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch, vec4: bool) -> None:
    """The column sum (``X.T @ r``, ``r @ X``) with vec4 reads of four columns a thread and without:
    float32 and float64, several column tiles, offsets and strides, batches, a split K, an epilogue,
    NaN and infinities."""
    monkeypatch.setattr(wgpu_matmul_classes, "GEMV_VEC4", vec4)
    for dt in ("float32", "float64"):
        _skip_f64(wgpu_device, dt)
        big, r = _rand((9000, 400), 1, dt), _rand((9000,), 2, dt)
        g, gr = xp.asarray(big, device=wgpu_device), xp.asarray(r, device=wgpu_device)
        _close(g[:300, :64].T @ gr[:300], big[:300, :64].T, r[:300])
        _close(gr @ g, r, big)                                           # 7 tiles of 64, K split
        _close(g[1:301, 8:72].T @ gr[:300], big[1:301, 8:72].T, r[:300])     # an offset
        _close(g[::3, 4:400:1].T @ gr[::3], big[::3, 4:].T, r[::3])      # a row stride
        _close(g[:300, 1:65].T @ gr[:300], big[:300, 1:65].T, r[:300])   # an odd offset: scalar reads
        b3 = big[:1500].reshape(3, 500, 400)
        g3 = xp.asarray(b3, device=wgpu_device)
        _close(xp.matrix_transpose(g3) @ gr[:500], np.swapaxes(b3, -1, -2), r[:500])
        got = np.asarray(g.T @ gr * 2 + 1)
        np.testing.assert_allclose(got, (big.T.astype(np.float64) @ r) * 2 + 1, rtol=1e-4, atol=1e-2)
        a = big[:500, :64].copy()
        a[0, 3], a[7, 5], a[9, 5], a[499, 63] = np.nan, np.inf, -np.inf, np.inf
        rr = r[:500].copy()
        rr[[7, 9, 499]] = 1
        with np.errstate(invalid="ignore"):
            want = a.T @ rr
        got = np.asarray(xp.asarray(a, device=wgpu_device).T @ xp.asarray(rr, device=wgpu_device))
        assert np.array_equal(np.isnan(got), np.isnan(want)) and np.isnan(want[[3, 5]]).all()
        assert got[63] == want[63] == np.inf
        ok = np.isfinite(want)
        np.testing.assert_allclose(got[ok], want[ok], rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("vec4", [True, False])
def test_one_array_on_both_sides(device: xp.Device, monkeypatch: pytest.MonkeyPatch, vec4: bool) -> None:
    """``x @ x``, ``x @ x.T`` and ``v @ v`` with one array as matrix and vector (one kernel input for
    both roles: a 1 x 1 ``x @ x`` rendered an empty row index before)."""
    monkeypatch.setattr(wgpu_matmul_classes, "GEMV_VEC4", vec4)
    for shape in [(1, 1), (1, 12), (12, 1), (1, 4096)]:
        a = _rand(shape, 3, "float32")
        g = xp.asarray(a, device=device)
        _close(g @ g.T, a, a.T)
        _close(g.T @ g, a.T, a)
        _close(g.reshape(-1) @ g.reshape(-1), a.reshape(-1), a.reshape(-1))
        if shape[0] == shape[1]:
            _close(g @ g, a, a)
            _close(xp.linalg.matrix_power(g, 3), a @ a, a)


def test_fused_prologue_and_epilogue(device: xp.Device) -> None:
    """``xp.exp(X) @ v + 1``, ``X.T @ (r * 2) - b``, ``relu(v @ W + b)``: one dispatch on wgpu (no
    split; two with a split K), the operand cones and the epilogue in the product's kernels."""
    x, v, r = _rand((3000, 64), 1) * 0.3, _rand((64,), 2), _rand((3000,), 3)
    b = _rand((64,), 4)
    gx, gv, gr, gb = (xp.asarray(t, device=device) for t in (x, v, r, b))
    for t in (gx, gv, gr, gb):
        xp.evaluate(t)
    want = np.exp(x.astype(np.float64)) @ v + 1
    got, n = _dispatches(lambda: xp.exp(gx) @ gv + 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    got2, n2 = _dispatches(lambda: xp.maximum(gv @ gx[:64].T + gb, 0.0))
    np.testing.assert_allclose(got2, np.maximum(v @ x[:64].T.astype(np.float64) + b, 0), rtol=1e-5, atol=1e-4)
    got3, n3 = _dispatches(lambda: gx[:500].T @ (gr[:500] * 2.0) - gb)
    np.testing.assert_allclose(got3, x[:500].T.astype(np.float64) @ (r[:500] * 2.0) - b, rtol=1e-5, atol=1e-3)
    got4, n4 = _dispatches(lambda: gx.T @ (gr * 2.0) - gb)      # K = 3000: split, the epilogue in the sum
    np.testing.assert_allclose(got4, x.T.astype(np.float64) @ (r * 2.0) - b, rtol=1e-5, atol=1e-3)
    if device.kind == "wgpu":
        assert (n, n2, n3, n4) == (1, 1, 1, 2)


def test_empty_products(device: xp.Device) -> None:
    for sa, sb in [((5, 0), (0,)), ((0, 7), (7,)), ((0,), (0, 4)), ((7,), (7, 0)), ((0,), (0,)), ((2, 0, 3), (3,))]:
        a, b = _rand(sa, 1), _rand(sb, 2)
        assert_same(xp.asarray(a, device=device) @ xp.asarray(b, device=device), a @ b)


def test_special_values(device: xp.Device) -> None:
    """NaN and infinities reach their outputs (in the row dot, the column sum and a split sum);
    inf - inf within one output, and 0 * inf, are NaN like NumPy's."""
    for m, k in [(40, 64), (8, 5000)]:
        a, v = _rand((m, k), 1), _rand((k,), 2)
        a[0, 3], a[1, k - 1], a[2, 0], a[2, k // 2], a[3, k - 2] = np.nan, np.inf, np.inf, -np.inf, 0.0
        v[0], v[k // 2] = 1.0, 1.0
        vinf = np.array([1.0, -np.inf, 2.0], np.float32)
        ga, gv = xp.asarray(a, device=device), xp.asarray(v, device=device)
        with np.errstate(invalid="ignore"):
            cases = [(ga @ gv, a @ v), (ga.T[: k - 2] @ gv[:m], a.T[: k - 2] @ v[:m]),
                     (ga[:, k - 3:] @ xp.asarray(vinf, device=device), a[:, k - 3:] @ vinf)]
        for got_arr, want in cases:
            got = np.asarray(got_arr)
            assert np.array_equal(np.isnan(got), np.isnan(want))
            assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)]) and np.isinf(want).any()
            ok = np.isfinite(want)
            np.testing.assert_allclose(got[ok], want[ok], rtol=1e-4, atol=1e-2)
        with np.errstate(invalid="ignore"):
            assert np.isnan(a @ v)[[0, 2]].all()


@pytest.mark.parametrize("k", [70000, (1 << 18) + 5])
def test_long_k(device: xp.Device, k: int) -> None:
    """A long K (past lavapipe's 65535 loop iterations): long rows split over chunks, the column sum
    split likewise, and a dot product."""
    a, v = _rand((64, k), 1), _rand((k,), 2)
    ga, gv = xp.asarray(a, device=device), xp.asarray(v, device=device)
    _close(ga @ gv, a, v)
    _close(gv @ ga.T, v, a.T)
    _close(ga.T[:, :3].T @ gv, a[:3], v)
    t = np.ascontiguousarray(a[:8].T)
    gt = xp.asarray(t, device=device)
    _close(gt.T @ gv, t.T, v)
    _close(gv @ gt, v, t)
    _close(gv @ gv, v, v)


@pytest.mark.parametrize("form", ["rows", "columns", "dot"])
def test_long_k_in_one_chunk(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    """Without splitting for occupancy (``GEMV_FILL = 1``) one workgroup walks all of K = 140001: the
    row dot's loop steps stay within lavapipe's loop limit, the column sum's are bounded by
    ``loop_steps_cap``."""
    monkeypatch.setattr(wgpu_matmul, "GEMV_FILL", 1)
    k = 140001
    a, v = _rand((8, k), 1), _rand((k,), 2)
    ga, gv = xp.asarray(a, device=wgpu_device), xp.asarray(v, device=wgpu_device)
    t = np.ascontiguousarray(a.T)
    if form == "rows":
        _close(ga @ gv, a, v)
    elif form == "columns":
        _close(xp.asarray(t, device=wgpu_device).T @ gv, t.T, v)
    else:
        _close(gv @ gv, v, v)


def test_long_m(device: xp.Device) -> None:
    """M = 2^17 + 3 rows: more row tiles than one dispatch dimension holds for short rows (K = 3:
    one thread per row), and rows of 64."""
    m = (1 << 17) + 3
    for k in (3, 64):
        a, v, r = _rand((m, k), k), _rand((k,), 2), _rand((m,), 3)
        ga, gv, gr = (xp.asarray(x, device=device) for x in (a, v, r))
        _close(ga @ gv, a, v)
        _close(gr @ ga, r, a)
        _close(gv @ ga.T, v, a.T)


def test_kernel_choice_and_dispatches(wgpu_device: xp.Device, chosen: list[Any]) -> None:
    """The GEMV class picks the row dot for a matrix read along K and the one-pass column sum for
    one read along the output; one dispatch unless K is split (then two: partial sums and their sum)."""
    dev = wgpu_device
    x = xp.asarray(_rand((4096, 64), 1), device=dev)
    w = xp.asarray(_rand((64, 1 << 14), 2), device=dev)
    v64, r = xp.asarray(_rand((64,), 3), device=dev), xp.asarray(_rand((4096,), 4), device=dev)
    vl = xp.asarray(_rand((1 << 14,), 5), device=dev)
    for t in (x, w, v64, r, vl):
        xp.evaluate(t)
    cases = [(lambda: x @ v64, Gemv("a", 4, 2, 4, True), 1),    # gemv: rows of 64 (16 vec4 words)
             (lambda: w @ vl, Gemv("a", 32, 8, 1, True), 2),     # gemv_t: long rows, split
             (lambda: x @ (v64 * 2.0), Gemv("a", 4, 2, 4, True), 1),       # a vector cone
             (lambda: xp.exp(x) @ v64, Gemv("a", 16, 4, 4), 1),            # a matrix cone: scalar reads
             (lambda: x[:, 1:] @ v64[1:], Gemv("a", 16, 4, 4), 1),         # K = 63: scalar reads
             (lambda: x.T @ r, Skinny(1, "b", 64, 128, 16, True, True), 2),      # xtr: column sum (vec4), split
             (lambda: r @ x, Skinny(1, "a", 64, 128, 16, True, True), 2),
             (lambda: v64 @ w, Skinny(1, "a", 64, 128, 16, True, True), 1),      # short K, many columns
             (lambda: x[:, 1:].T @ r, Skinny(1, "b", 64, 64, 4, True), 2),     # 63 columns: scalar reads
             (lambda: vl @ w.T, Gemv("b", 32, 8, 1, True), 2)]
    for fn, cfg, n in cases:
        chosen.clear()
        _, got = _dispatches(fn)
        assert chosen == [cfg] and got == n, (chosen, got)
    chosen.clear()
    with wgpu_matmul.use_config("g64x64x16_4x4"):           # a forced configuration: the tiled kernels
        xp.evaluate(x @ v64 * 2)
    assert chosen == [wgpu_matmul.GENERAL]


def test_configuration_rules() -> None:
    rows = wgpu_matmul.gemv_rows
    assert rows(1 << 20, 64, 4, "a") == Gemv("a", 16, 4, 4)       # 64 rows of 64 per workgroup
    assert rows(64, 1 << 20, 4, "a") == Gemv("a", 32, 8, 2)       # long rows: 8 side by side
    assert rows(64, 1 << 20, 8, "a") == Gemv("a", 32, 4, 4)       # 8-byte: fewer rows per thread
    assert rows(1, 1 << 20, 4, "a") == Gemv("a", 256, 1, 16)      # a dot product: all on one row
    assert rows(1000, 3, 4, "b") == Gemv("b", 1, 4, 3)            # a row per thread
    assert rows(1 << 20, 16, 4, "a", True) == Gemv("a", 4, 2, 4, True)     # 64 = 16 vec4 words
    assert rows(64, 1 << 18, 4, "a", True) == Gemv("a", 32, 8, 1, True)
    for m in (1, 2, 3, 7, 64, 1000, 1 << 20):
        for k in (1, 2, 5, 64, 100, 512, 513, 70000):
            for item, vec in ((4, False), (8, False), (4, True), (8, True)):
                cfg = rows(m, k, item, "a", vec)
                cfg.check()
                assert cfg.smem_elems * item <= 16384
                assert 1 <= cfg.rows * cfg.unroll <= (8 if vec else 16) or cfg.rows == 1
    assert [sum_lanes(c) for c in (1, 2, 3, 64, 1024)] == [1, 2, 4, 64, 64]
    cpu = SimpleNamespace(adapter=SimpleNamespace(info={"adapter_type": "CPU"}), max_binding=1 << 30)
    assert wgpu_matmul.loop_steps_cap(cpu, Gemv()) == 32768
    s = wgpu_matmul.split_for(cpu, Gemv("a", 32, 8, 2), 64, 1, 1 << 20, 1, 4, wgpu_matmul.GEMV_FILL)
    assert s.chunks == 1024 and s.kc == 1024
    with pytest.raises(ValueError, match="gemv"):
        Gemv("a", 16, 32, 4).check()
    with pytest.raises(ValueError, match="gemv"):
        Gemv("c").check()


def test_sum_pass_renders_per_lane_count(wgpu_device: xp.Device) -> None:
    """The second pass of a split product: one shader per lane count, the epilogue included."""
    x = xp.asarray(_rand((8, 5000), 1), device=wgpu_device)
    v = xp.asarray(_rand((5000,), 2), device=wgpu_device)
    (kernel,) = schedule([(x @ v + 1.0)._node])
    src = render_gemv_sum(kernel, 16).source
    assert "workgroup_size(256)" in src and "lid % 16u" in src and "part" in src


@pytest.mark.parametrize("dt", ["float32", "float64", "int32"])
@pytest.mark.parametrize("m, k, c", [(300, 64, 4), (257, 100, 3), (1000, 7, 2), (65, 513, 8), (33, 3000, 5),
                                     ((1 << 17) + 3, 64, 4)])
@pytest.mark.parametrize("stage", [True, False])
def test_few_vector_columns(device: xp.Device, dt: str, m: int, k: int, c: int, stage: bool,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``X @ W.T`` and ``W @ X.T`` with ``W`` of 2 to 8 rows (the classes of a linear model): the row
    dot against several vector columns, short and long rows (split K), K not a multiple of 4, rows
    past one dispatch dimension; ``X @ W`` with ``W`` C-ordered (K x c) too; the vector columns
    staged in workgroup memory a step at a time (``Gemv.staged``) and read by each thread."""
    _skip_f64(device, dt)
    if m > 1 << 16 and (dt != "float32" or not stage):
        pytest.skip("one dtype and form for the long case")
    if not stage and device.kind != "wgpu":
        pytest.skip("a wgpu kernel form")
    monkeypatch.setattr(wgpu_matmul_classes, "GEMV_STAGE", stage)
    x, w = _rand((m, k), 1, dt), _rand((c, k), 2, dt)
    gx, gw = xp.asarray(x, device=device), xp.asarray(w, device=device)
    _close(gx @ gw.T, x, w.T)
    _close(gw @ gx.T, w, x.T)
    wt = np.ascontiguousarray(w.T)
    _close(gx @ xp.asarray(wt, device=device), x, wt)


@pytest.mark.parametrize("stage", [True, False])
def test_few_columns_batches_views_and_fusion(device: xp.Device, stage: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batched and broadcast few-column products, strided and offset matrices, a fused prologue on
    either operand and an epilogue (a linear model's ``X @ W.T + b`` and ``softmax``'s input), the
    vector columns staged and not."""
    if not stage and device.kind != "wgpu":
        pytest.skip("a wgpu kernel form")
    monkeypatch.setattr(wgpu_matmul_classes, "GEMV_STAGE", stage)
    a, w = _rand((3, 50, 70), 1), _rand((70, 4), 2)
    wb = _rand((2, 1, 70, 3), 3)
    ga, gw, gwb = (xp.asarray(t, device=device) for t in (a, w, wb))
    _close(ga @ gw, a, w)
    _close(ga @ gwb, a, wb)
    _close(xp.matrix_transpose(gw) @ xp.matrix_transpose(ga), w.T, np.swapaxes(a, -1, -2))
    big = _rand((300, 400), 4)
    g = xp.asarray(big, device=device)
    _close(g[::2, ::3] @ g[:4, ::3].T, big[::2, ::3], big[:4, ::3].T)
    _close(g[1:200, 4:68] @ g[5:11, 4:68].T, big[1:200, 4:68], big[5:11, 4:68].T)     # vec4 from an offset
    _close(g[1:200, 1:65] @ g[5:11, 1:65].T, big[1:200, 1:65], big[5:11, 1:65].T)     # offset 1: scalar reads
    x, coef, b = _rand((3000, 64), 5) * 0.3, _rand((4, 64), 6), _rand((4,), 7)
    gx, gc, gb = (xp.asarray(t, device=device) for t in (x, coef, b))
    for t in (gx, gc, gb):
        xp.evaluate(t)
    x64 = x.astype(np.float64)
    got, n = _dispatches(lambda: gx @ gc.T + gb)
    np.testing.assert_allclose(got, x64 @ coef.T + b, rtol=1e-5, atol=1e-4)
    got2, n2 = _dispatches(lambda: xp.exp(gx) @ (gc * 2.0).T)
    np.testing.assert_allclose(got2, np.exp(x64) @ (coef.T * 2.0), rtol=1e-5, atol=1e-3)
    if device.kind == "wgpu":
        assert (n, n2) == (1, 1)


def test_few_columns_special_values(device: xp.Device) -> None:
    """NaN and infinities reach their outputs of every column, inf - inf and 0 * inf give NaN."""
    x, w = _rand((40, 64), 1), _rand((3, 64), 2)
    x[0, 3], x[1, 63], x[2, 0], x[2, 32], x[3, 62] = np.nan, np.inf, np.inf, -np.inf, 0.0
    w[:, 32], w[1, 62] = 1.0, np.inf
    with np.errstate(invalid="ignore"):
        want = x @ w.T
    got = np.asarray(xp.asarray(x, device=device) @ xp.asarray(w, device=device).T)
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.isnan(want).any()
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)]) and np.isinf(want).any()
    ok = np.isfinite(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-4, atol=1e-2)


def test_few_columns_kernel_choice(wgpu_device: xp.Device, chosen: list[Any]) -> None:
    """The row dot with vector columns for a matrix read along K (one dispatch, two with a split K);
    ``G.T @ X`` (read along the output) keeps the narrow split-K kernel; two small sides the tiles."""
    dev = wgpu_device
    x = xp.asarray(_rand((4096, 64), 1), device=dev)
    w = xp.asarray(_rand((4, 64), 2), device=dev)
    g = xp.asarray(_rand((4096, 4), 3), device=dev)
    wl = xp.asarray(_rand((3, 1 << 14), 4), device=dev)
    xl = xp.asarray(_rand((64, 1 << 14), 5), device=dev)
    for t in (x, w, g, wl, xl):
        xp.evaluate(t)
    cases = [(lambda: x @ w.T, Gemv("a", 4, 1, 4, True, 4), 1),
             (lambda: w @ x.T, Gemv("b", 4, 1, 4, True, 4), 1),
             (lambda: xl @ wl.T, Gemv("a", 32, 2, 4, True, 3), 2),       # long rows: K split
             (lambda: g.T @ x, Skinny(4, "a", 64, 64, 16, vec=True), 2)]
    for fn, cfg, n in cases:
        chosen.clear()
        _, got = _dispatches(fn)
        assert chosen == [cfg] and got == n, (chosen, got)
    chosen.clear()
    xp.evaluate(w @ w.T)
    assert not isinstance(chosen[0], Gemv)
