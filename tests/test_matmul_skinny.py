"""Split-K products with a narrow side (``M`` or ``N`` <= 8, a long ``K``): ``G.T @ X`` and
``X.T @ G`` with ``G`` a few columns (the classes of a logistic regression), computed by the
narrow kernel (``render/wgsl_matmul_skinny.py``, ``providers/wgpu_matmul_classes.skinny_for``) whose
loader gives threads only to the valid rows and evaluates a fused operand cone once per element."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_matmul, wgpu_matmul_classes
from gpuarray.render.wgsl_matmul_skinny import Skinny

from .conftest import assert_same

K_BIG = (1 << 20) + 3


def _rand(shape: tuple[int, ...], seed: int, dt: str = "float32") -> np.ndarray:
    x = np.random.default_rng(seed).uniform(-3, 3, shape)
    return (np.round(x * 10) if np.dtype(dt).kind in "iu" else x).astype(dt)


def _close(got: Any, a: np.ndarray, b: np.ndarray) -> None:
    """``got`` against ``a @ b`` in float64, within ``4 * L * eps`` of ``|a| @ |b|`` where ``L`` is the
    longest sequential sum of a split product (a chunk of at most 4096, then at most 256 chunks)."""
    g = np.asarray(got)
    want = a @ b
    assert g.dtype == want.dtype and g.shape == want.shape
    k = max(a.shape[-1], 1)
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    eps = np.finfo(want.dtype).eps
    err = np.abs(g.astype(np.float64) - a.astype(np.float64) @ b.astype(np.float64))
    assert np.all(err <= 4 * min(k, 4096 + 256) * eps * scale), float(err.max())


@pytest.fixture
def skinny_spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Skinny]]:
    """The Skinny configurations rendered while the test runs (the shader cache starts empty)."""
    seen: list[Skinny] = []
    real = wgpu_matmul.render_matmul_skinny

    def spy(kernel: Any, t: Skinny, **kw: Any) -> Any:
        seen.append(t)
        return real(kernel, t, **kw)

    monkeypatch.setattr(wgpu_matmul, "render_matmul_skinny", spy)
    monkeypatch.setattr(wgpu_matmul, "_rendered", {})
    yield seen


@pytest.mark.parametrize("m", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("k", [1, 255, 256, 65537, K_BIG])
def test_narrow_products(device: xp.Device, m: int, k: int) -> None:
    """``G.T @ X`` (M narrow) and ``X.T @ G`` (N narrow) against NumPy; K from 1 to past 2^20 (many
    chunks, each within lavapipe's loop limit)."""
    n = 7 if k == K_BIG else 64
    g, x = _rand((k, m), m), _rand((k, n), k % 97)
    gg, gx = xp.asarray(g, device=device), xp.asarray(x, device=device)
    _close(gg.T @ gx, g.T, x)
    _close(gx.T @ gg, x.T, g)


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "uint32", "int8"])
def test_narrow_dtypes_batches_and_widths(wgpu_device: xp.Device, skinny_spy: list[Skinny], dt: str) -> None:
    """Every real and integer dtype (integers wrap like NumPy's), batches (broadcast too) and wide
    sides from 2 to past one tile (300 columns: two 256-column tiles)."""
    dev = wgpu_device
    if dt == "float64" and not dev.provider.supports(np.dtype(dt)):
        pytest.skip("no shader-f64")
    for sa, sb in [((3, 3000), (3000, 64)), ((2000, 5), (2000, 2)), ((8, 4097), (4097, 300)),
                   ((2, 3, 1500), (2, 1500, 10)), ((3, 1100), (4, 1100, 6))]:
        a, b = _rand(sa, 1, dt), _rand(sb, 2, dt)
        if sa == (2000, 5):
            a, b = b.T.copy(), _rand((2000, 5), 3, dt)     # (2, 2000) @ (2000, 5)
        got = xp.asarray(a, device=dev) @ xp.asarray(b, device=dev)
        if np.dtype(dt).kind == "f":
            _close(got, a, b)
        else:
            assert_same(got, a @ b)
    assert skinny_spy and {t.side for t in skinny_spy} == {"a"}
    i8 = np.random.default_rng(4).integers(-128, 128, (3000, 4)).astype(np.int8)
    j8 = np.random.default_rng(5).integers(-128, 128, (3000, 40)).astype(np.int8)
    assert_same(xp.asarray(j8, device=dev).T @ xp.asarray(i8, device=dev), j8.T @ i8)    # N narrow, wraps
    assert any(t.side == "b" for t in skinny_spy)


def _softmax_grad(lib: Any, x: Any, w: Any, y1: Any, sw: Any, alpha: float) -> Any:
    """scikit-learn's multinomial gradient: ``(softmax(X @ W) - Y) * sw`` as the operand of ``.T @ X``."""
    z = x @ w
    z = z - lib.max(z, axis=1, keepdims=True)
    e = lib.exp(z)
    g = (e / lib.sum(e, axis=1, keepdims=True) - y1) * sw[:, None]
    return g.T @ x / x.shape[0] + alpha * w.T


@pytest.mark.parametrize("k", [3000, 65537])
def test_fused_softmax_cone(device: xp.Device, k: int) -> None:
    """The logistic-regression gradient with its softmax cone read by the product, against NumPy."""
    rng = np.random.default_rng(k)
    x = rng.standard_normal((k, 64)).astype(np.float32)
    w = (rng.standard_normal((64, 3)) * 0.3).astype(np.float32)
    y1 = np.eye(3, dtype=np.float32)[rng.integers(0, 3, k)]
    sw = rng.uniform(0.5, 2, k).astype(np.float32)
    want = _softmax_grad(np, x.astype(np.float64), w.astype(np.float64), y1, sw.astype(np.float64), 0.1)
    got = np.asarray(_softmax_grad(xp, *(xp.asarray(v, device=device) for v in (x, w, y1, sw)), 0.1))
    assert got.dtype == np.float32 and got.shape == (3, 64)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5 * float(np.abs(want).max()) + 1e-6)


def test_fused_cone_is_read_by_the_narrow_kernel(wgpu_device: xp.Device, skinny_spy: list[Skinny]) -> None:
    """On wgpu the cone is the narrow operand's prologue (no materialized G), two dispatches for the
    product (partial sums, chunk sum with the epilogue), one evaluation, only the result comes down."""
    dev = wgpu_device
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5000, 64)).astype(np.float32)
    z = rng.standard_normal((5000, 3)).astype(np.float32)
    gx, gz = xp.asarray(x, device=dev), xp.asarray(z, device=dev)
    xp.evaluate(gx), xp.evaluate(gz)
    before = xp.metrics()
    got = np.asarray((xp.tanh(gz) * 2 - 1).T @ gx + 1)
    after = xp.metrics()
    np.testing.assert_allclose(got, (np.tanh(z) * 2 - 1).T @ x + 1, rtol=1e-4, atol=1e-3)
    assert skinny_spy == [Skinny(3, "a", 64, 64, 16, vec=True)]
    assert after["dispatches"] - before["dispatches"] == 2
    assert after["evaluations"] - before["evaluations"] == 1
    assert after["bytes_downloaded"] - before["bytes_downloaded"] == 3 * 64 * 4


def test_narrow_special_values(device: xp.Device) -> None:
    a, b = _rand((4, 3000), 6), _rand((3000, 20), 7)
    a[0, 10], a[1, 2900] = np.inf, -np.inf            # in different chunks
    a[1, 5], b[400, 2] = np.inf, np.nan
    a[2, :] = -0.0
    with np.errstate(invalid="ignore"):
        want = a @ b
    assert_same(xp.asarray(a, device=device) @ xp.asarray(b, device=device), want, rtol=1e-4, atol=1e-2,
                check_signed_zero=False)


def test_selection_rules(wgpu_device: xp.Device) -> None:
    """``skinny_for``: narrow side <= SKINNY_MAX, K >= LONG_K, real or integer, wide operand read
    along its rows; not for ``X @ W`` (rows K apart), complex, or a forced configuration."""
    prov = wgpu_device.provider
    seen: list[tuple[Any, Any]] = []
    real = wgpu_matmul.skinny_for

    def spy(p: Any, kernel: Any, m: int, n: int, k: int, dt: np.dtype) -> Any:
        cfg = real(p, kernel, m, n, k, dt)
        seen.append(((m, n, k), cfg))
        return cfg

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wgpu_matmul, "skinny_for", spy)
        x = xp.asarray(_rand((2048, 64), 1), device=wgpu_device)
        g = xp.asarray(_rand((2048, 3), 2), device=wgpu_device)
        y = xp.asarray(_rand((5, 2048), 3), device=wgpu_device)
        for r in (g.T @ x, x.T @ g, x[:, :9].T @ g, x.T[:3] @ x, g.T @ y.T,
                  g.T[:, :1000] @ x[:1000]):
            xp.evaluate(r)
        with wgpu_matmul.use_config("g64x64x16_4x4"):
            xp.evaluate(g.T @ x * 2)
    cfgs = [c for _s, c in seen]
    vec = Skinny(3, "a", 64, 64, 16, vec=True)            # the wide operand read as vec4 words
    assert cfgs[0] == vec and cfgs[1] == Skinny(3, "b", 64, 64, 16, vec=True)
    assert cfgs[2] == Skinny(3, "b", 16, 64, 16)              # 9 wide columns: scalar reads
    assert cfgs[3] == Skinny(3, "a", 64, 64, 4)               # x on both sides: scalar reads
    assert cfgs[4] is None                       # B = Y.T: its 5 columns are K apart (the tiled kernels)
    assert cfgs[5] is None and cfgs[6] is None   # K < LONG_K; forced configuration
    del prov


def test_cpu_adapters_bound_the_narrow_k_loop() -> None:
    cpu = SimpleNamespace(adapter=SimpleNamespace(info={"adapter_type": "CPU"}), max_binding=1 << 30)
    cfg = Skinny(3, "a", 64, 64, 4)
    cap = wgpu_matmul.loop_steps_cap(cpu, cfg)
    assert cap == 32768 // (1 + 1 + 16)
    s = wgpu_matmul.split_for(cpu, cfg, 3, 64, K_BIG, 1, 4)
    assert s.kc <= cap * cfg.bk and (s.chunks - 1) * s.kc < K_BIG <= s.chunks * s.kc
    with pytest.raises(ValueError, match="lanes"):
        Skinny(3, "a", 64, 60, 8).check()


def test_narrow_unsplit_with_epilogue(wgpu_device: xp.Device, skinny_spy: list[Skinny]) -> None:
    """With enough wide tiles K is not split (one chunk); the narrow kernel still writes partial sums
    and the sum pass evaluates the fused epilogue."""
    dev = wgpu_device
    a, b, bias = _rand((260, 2, 1024), 1), _rand((260, 1024, 16), 2), _rand((16,), 3)
    ga, gb, gbias = (xp.asarray(v, device=dev) for v in (a, b, bias))
    s = wgpu_matmul.split_for(dev.provider, Skinny(2, "a", 16, 64, 16), 2, 16, 1024, 260, 4)
    assert s.chunks == 1
    got = xp.maximum(ga @ gb * 2 + gbias, 0)
    want = np.maximum((a.astype(np.float64) @ b) * 2 + bias, 0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=1e-3)
    assert skinny_spy == [Skinny(2, "a", 16, 64, 16, vec=True)]


@pytest.mark.parametrize("vec4", [True, False])
def test_vec4_and_scalar_wide_reads(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch, vec4: bool) -> None:
    """The narrow kernel with vec4 reads of the wide operand (``SKINNY_VEC4``) and without: float32
    and float64, narrow sides of 1 to 8 on both sides, offsets and strides, batches, a fused cone
    and epilogue, a split K, NaN and infinities."""
    monkeypatch.setattr(wgpu_matmul_classes, "SKINNY_VEC4", vec4)
    dev = wgpu_device
    for dt in ("float32", "float64"):
        if not dev.provider.supports(np.dtype(dt)):
            continue
        big = _rand((5000, 200), 1).astype(dt)
        g8 = _rand((5000, 8), 2).astype(dt)
        gb, gg = xp.asarray(big, device=dev), xp.asarray(g8, device=dev)
        tol = dict(rtol=1e-4, atol=1e-3) if dt == "float32" else dict(rtol=1e-10, atol=1e-10)
        for s in (1, 2, 3, 5, 8):
            assert_same(gg[:, :s].T @ gb, g8[:, :s].T @ big, **tol)
            assert_same(gb.T @ gg[:, :s], big.T @ g8[:, :s], **tol)
        assert_same(gg[:, :3].T @ gb[:, 4:68], g8[:, :3].T @ big[:, 4:68], **tol)         # an offset
        assert_same(gg[::2, :3].T @ gb[::2, 8:200], g8[::2, :3].T @ big[::2, 8:], **tol)  # strides
        assert_same(gg[:, :3].T @ gb[:, 1:65], g8[:, :3].T @ big[:, 1:65], **tol)         # odd offset
        a3, b3 = _rand((3, 2, 1500), 3).astype(dt), _rand((3, 1500, 24), 4).astype(dt)
        assert_same(xp.asarray(a3, device=dev) @ xp.asarray(b3, device=dev), a3 @ b3, **tol)
        got = (xp.tanh(gg[:, :4]) * 2 - 1).T @ gb * 0.5 + 1
        assert_same(got, (np.tanh(g8[:, :4]) * 2 - 1).T @ big * 0.5 + 1, **tol)
        a = g8[:, :3].T.copy()
        a[0, 10], a[1, 4000], a[1, 5] = np.inf, -np.inf, np.inf
        b = big.copy()
        b[400, 2], b[10, 7] = np.nan, 0.0
        with np.errstate(invalid="ignore"):
            want = a @ b
        got = xp.asarray(a, device=dev) @ xp.asarray(b, device=dev)
        assert_same(got, want, check_signed_zero=False, **tol)
