"""``cholesky``, ``solve``, ``inv``, ``det`` and ``slogdet`` on the device (blocked Cholesky and LU with
partial pivoting: ``gpuarray/linalg/lu.py``, ``providers/wgpu_linalg.py``) against NumPy on both
providers: sizes over several panels, stacks (empty and broadcast ones), float32 and float64,
residuals scaled by n * eps * norm on well- and ill-conditioned matrices, singular and indefinite
input raising LinAlgError as NumPy does, and no host fallback on the wgpu device."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp

RNG = np.random.default_rng(20)
SIZES = [0, 1, 2, 31, 64, 65, 200]


def _skip_f64(device: xp.Device, dtype: Any) -> None:
    if device.kind == "wgpu" and np.dtype(dtype) == np.float64 and not device.supports(np.dtype(np.float64)):
        pytest.skip("no float64 on this adapter")


def _general(shape: tuple[int, ...], cond: float, dtype: Any) -> np.ndarray:
    """Matrices with singular values from 1 down to 1 / ``cond``."""
    n = shape[-1]
    u, _, _ = np.linalg.svd(RNG.normal(size=shape))
    v, _, _ = np.linalg.svd(RNG.normal(size=shape))
    return ((u * np.geomspace(1, 1 / cond, n)) @ v).astype(dtype)


def _spd(shape: tuple[int, ...], cond: float, dtype: Any) -> np.ndarray:
    n = shape[-1]
    u, _, _ = np.linalg.svd(RNG.normal(size=shape))
    s = (u * np.geomspace(1, 1 / cond, n)) @ np.swapaxes(u, -1, -2)
    return ((s + np.swapaxes(s, -1, -2)) / 2).astype(dtype)


def _norm(x: np.ndarray) -> np.ndarray:
    return np.linalg.norm(x.astype(np.float64), ord=np.inf, axis=(-2, -1)) if x.ndim >= 2 else np.abs(x).max()


def _fallbacks_checked(device: xp.Device) -> Any:
    class _Check:
        def __enter__(self) -> None:
            xp.reset_metrics()

        def __exit__(self, *exc: Any) -> None:
            if device.kind == "wgpu" and exc[0] is None:
                assert xp.metrics()["host_fallbacks"] == 0
    return _Check()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("cond", [10.0, 1e4])
def test_cholesky_residual(device: xp.Device, dtype: Any, n: int, cond: float) -> None:
    _skip_f64(device, dtype)
    s = _spd((n, n), cond, dtype) if n else np.zeros((0, 0), dtype)
    with _fallbacks_checked(device):
        low = np.asarray(xp.linalg.cholesky(xp.asarray(s, device=device)))
        up = np.asarray(xp.linalg.cholesky(xp.asarray(s, device=device), upper=True))
    assert low.dtype == np.dtype(dtype) and low.shape == (n, n)
    np.testing.assert_array_equal(np.triu(low, 1), 0)
    np.testing.assert_array_equal(np.tril(up, -1), 0)
    if n:
        eps = np.finfo(dtype).eps
        l64 = low.astype(np.float64)
        assert np.abs(l64 @ l64.T - s).max() <= 8 * n * eps * _norm(s)
        u64 = up.astype(np.float64)
        assert np.abs(u64.T @ u64 - s).max() <= 8 * n * eps * _norm(s)
        assert np.all(np.diag(low) > 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("cond", [10.0, 1e4])
def test_solve_inv_det_residual(device: xp.Device, dtype: Any, n: int, cond: float) -> None:
    _skip_f64(device, dtype)
    a = _general((n, n), cond, dtype) if n else np.zeros((0, 0), dtype)
    b = RNG.normal(size=(n, 3)).astype(dtype)
    ga = xp.asarray(a, device=device)
    with _fallbacks_checked(device):
        x = np.asarray(xp.linalg.solve(ga, xp.asarray(b, device=device)))
        xv = np.asarray(xp.linalg.solve(ga, xp.asarray(b[:, 0], device=device)))
        ai = np.asarray(xp.linalg.inv(ga))
        det = np.asarray(xp.linalg.det(ga))
        sign, logabs = (np.asarray(v) for v in xp.linalg.slogdet(ga))
    assert (x.dtype, x.shape, xv.shape, ai.shape) == (np.dtype(dtype), (n, 3), (n,), (n, n))
    want = np.linalg.slogdet(a.astype(np.float64))
    assert det.dtype == sign.dtype == logabs.dtype == np.dtype(dtype) and det.shape == ()
    assert sign == want.sign
    eps = np.finfo(dtype).eps
    if not n:
        assert det == 1 and logabs == 0
        return
    a64, bound = a.astype(np.float64), 8 * n * eps * _norm(a)
    assert np.abs(a64 @ x - b).max() <= bound * np.abs(x).max()
    assert np.abs(a64 @ xv - b[:, 0]).max() <= bound * np.abs(xv).max()
    assert np.abs(a64 @ ai - np.eye(n)).max() <= bound * _norm(ai)
    # the determinant of a perturbed matrix moves by up to cond * eps relatively (the smallest pivot)
    assert abs(logabs - want.logabsdet) <= 8 * n * eps * (cond + abs(want.logabsdet))
    want_det = (want.sign * np.exp(want.logabsdet)).astype(dtype)
    np.testing.assert_allclose(det, want_det, rtol=16 * n * eps * cond, atol=np.finfo(dtype).tiny)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stacks_and_broadcasting(device: xp.Device, dtype: Any) -> None:
    _skip_f64(device, dtype)
    eps = np.finfo(dtype).eps
    for batch in [(3,), (2, 2)]:
        for n in (2, 31, 70):
            a, s = _general(batch + (n, n), 30.0, dtype), _spd(batch + (n, n), 30.0, dtype)
            with _fallbacks_checked(device):
                got = {"chol": xp.linalg.cholesky(xp.asarray(s, device=device)),
                       "inv": xp.linalg.inv(xp.asarray(a, device=device)),
                       "det": xp.linalg.det(xp.asarray(a, device=device))}
                got = {k: np.asarray(v) for k, v in got.items()}
            np.testing.assert_allclose(got["chol"], np.linalg.cholesky(s), atol=64 * n * eps, rtol=0)
            np.testing.assert_allclose(got["inv"], np.linalg.inv(a), atol=64 * n * eps * 30, rtol=0)
            np.testing.assert_allclose(got["det"], np.linalg.det(a), rtol=64 * n * eps, atol=np.finfo(dtype).tiny)
    a = _general((4, 1, 5, 5), 10.0, dtype)
    b = RNG.normal(size=(3, 5, 2)).astype(dtype)
    vec = RNG.normal(size=5).astype(dtype)
    with _fallbacks_checked(device):
        x = np.asarray(xp.linalg.solve(xp.asarray(a, device=device), xp.asarray(b, device=device)))
        xv = np.asarray(xp.linalg.solve(xp.asarray(a, device=device), xp.asarray(vec, device=device)))
    np.testing.assert_allclose(x, np.linalg.solve(a, b), atol=500 * eps, rtol=0)
    np.testing.assert_allclose(xv, np.linalg.solve(a, vec), atol=500 * eps, rtol=0)
    assert x.shape == (4, 3, 5, 2) and xv.shape == (4, 1, 5)
    for shape in [(0, 3, 3), (2, 0, 0)]:
        e = np.zeros(shape, dtype)
        g = xp.asarray(e, device=device)
        assert np.asarray(xp.linalg.cholesky(g)).shape == shape
        assert np.asarray(xp.linalg.inv(g)).shape == shape
        np.testing.assert_array_equal(np.asarray(xp.linalg.det(g)), np.linalg.det(e))
        assert np.asarray(xp.linalg.solve(g, g)).shape == shape


def test_batched_small_stack(device: xp.Device) -> None:
    a = _general((256, 32, 32), 100.0, np.float32)
    s = _spd((256, 32, 32), 100.0, np.float32)
    b = RNG.normal(size=(256, 32, 4)).astype(np.float32)
    with _fallbacks_checked(device):
        x = np.asarray(xp.linalg.solve(xp.asarray(a, device=device), xp.asarray(b, device=device)))
        low = np.asarray(xp.linalg.cholesky(xp.asarray(s, device=device)))
    eps = np.finfo(np.float32).eps
    res = np.abs(np.einsum("bij,bjk->bik", a.astype(np.float64), x) - b).max(axis=(1, 2))
    assert np.all(res <= 8 * 32 * eps * _norm(a) * np.abs(x).max(axis=(1, 2)))
    l64 = low.astype(np.float64)
    assert np.abs(l64 @ np.swapaxes(l64, -1, -2) - s).max() <= 8 * 32 * eps * _norm(s).max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [2, 40])
def test_singular_and_indefinite_raise(device: xp.Device, dtype: Any, n: int) -> None:
    _skip_f64(device, dtype)
    a = RNG.normal(size=(n, n)).astype(dtype)
    a[:, n // 2] = a[:, 0] * 2            # columns dependent: an exactly zero pivot
    a[:, 0] = 1.0
    a[:, n // 2] = 2.0
    g = xp.asarray(a, device=device)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        xp.linalg.inv(g)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        xp.linalg.solve(g, xp.asarray(np.ones(n, dtype), device=device))
    stack = np.stack([np.eye(n, dtype=dtype), a])
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        xp.linalg.inv(xp.asarray(stack, device=device))
    with _fallbacks_checked(device):
        det = np.asarray(xp.linalg.det(xp.asarray(stack, device=device)))
        sign, logabs = (np.asarray(v) for v in xp.linalg.slogdet(g))
    np.testing.assert_array_equal(det, [1.0, 0.0])
    assert sign == 0 and logabs == -np.inf
    s = _spd((n, n), 10.0, dtype)
    s[n - 1, n - 1] = -1.0
    for m in (s, np.stack([np.eye(n, dtype=dtype), s])):
        with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite"):
            xp.linalg.cholesky(xp.asarray(m, device=device))
    nan = np.full((n, n), np.nan, dtype)          # NumPy returns NaN factors without an error
    np.testing.assert_array_equal(np.asarray(xp.linalg.cholesky(xp.asarray(nan, device=device))),
                                  np.linalg.cholesky(nan))


def test_prologue_and_integers(device: xp.Device) -> None:
    a = np.array([[4, 1, 0], [1, 3, 1], [0, 1, 2]], np.int32)
    g = xp.asarray(a, device=device)
    with _fallbacks_checked(device):
        low = np.asarray(xp.linalg.cholesky(g * 2 + g.T))
        x = np.asarray(xp.linalg.solve(g.T * 1.5, xp.asarray(np.arange(3), device=device)))
    dt = g.device.default_float
    np.testing.assert_allclose(low, np.linalg.cholesky((a * 2 + a.T).astype(dt)), rtol=1e-6)
    # the exact solution is (0, 0, 2/3): its zeros come out as 0 or as rounding noise near 1e-17
    np.testing.assert_allclose(x, np.linalg.solve(a.T * 1.5, np.arange(3)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_panels_wider_than_a_workgroup(wgpu_device: xp.Device, dtype: Any) -> None:
    """n = 300: the panel below the first diagonal block has more rows than one workgroup."""
    _skip_f64(wgpu_device, dtype)
    n, eps = 300, np.finfo(dtype).eps
    s, a = _spd((n, n), 100.0, dtype), _general((n, n), 100.0, dtype)
    b = RNG.normal(size=(n, 2)).astype(dtype)
    with _fallbacks_checked(wgpu_device):
        low = np.asarray(xp.linalg.cholesky(xp.asarray(s, device=wgpu_device))).astype(np.float64)
        x = np.asarray(xp.linalg.solve(xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device)))
    assert np.abs(low @ low.T - s).max() <= 8 * n * eps * _norm(s)
    assert np.abs(a.astype(np.float64) @ x - b).max() <= 8 * n * eps * _norm(a) * np.abs(x).max()


# Block boundaries of the blocked paths: Cholesky's block columns (CHOL_NB: 64 where the adapter's
# workgroup memory holds the block), LU's 32-column panels and its 8-column register chunks, the
# one-workgroup path for matrices of at most 32 rows (SMALL_N).
EDGE_SIZES = [7, 8, 9, 31, 32, 33, 63, 64, 65, 101, 197]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_block_boundaries(device: xp.Device, dtype: Any) -> None:
    _skip_f64(device, dtype)
    eps = np.finfo(dtype).eps
    for n in EDGE_SIZES:
        s, a = _spd((n, n), 100.0, dtype), _general((n, n), 100.0, dtype)
        b = RNG.normal(size=(n, 5)).astype(dtype)
        with _fallbacks_checked(device):
            low = np.asarray(xp.linalg.cholesky(xp.asarray(s, device=device))).astype(np.float64)
            x = np.asarray(xp.linalg.solve(xp.asarray(a, device=device), xp.asarray(b, device=device)))
            ai = np.asarray(xp.linalg.inv(xp.asarray(a, device=device)))
            sign, logabs = (np.asarray(v) for v in xp.linalg.slogdet(xp.asarray(a, device=device)))
        np.testing.assert_array_equal(np.triu(low, 1), 0)
        assert np.abs(low @ low.T - s).max() <= 8 * n * eps * _norm(s), n
        a64 = a.astype(np.float64)
        assert np.abs(a64 @ x - b).max() <= 8 * n * eps * _norm(a) * np.abs(x).max(), n
        assert np.abs(a64 @ ai - np.eye(n)).max() <= 8 * n * eps * _norm(a) * _norm(ai), n
        want = np.linalg.slogdet(a64)
        assert sign == want.sign and abs(logabs - want.logabsdet) <= 8 * n * eps * (100 + abs(want.logabsdet))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ill_conditioned_and_pivoting_heavy(device: xp.Device, dtype: Any) -> None:
    """Backward errors stay at n eps ||A|| ||x|| for condition numbers near 1 / eps, and rows of
    increasing magnitude (every pivot from the bottom of the panel) match NumPy's LU."""
    _skip_f64(device, dtype)
    eps = np.finfo(dtype).eps
    cond = 0.01 / eps
    for n in (40, 97):
        a = _general((n, n), cond, dtype)
        s = _spd((n, n), cond, dtype)
        b = RNG.normal(size=(n, 3)).astype(dtype)
        with _fallbacks_checked(device):
            x = np.asarray(xp.linalg.solve(xp.asarray(a, device=device), xp.asarray(b, device=device)))
            low = np.asarray(xp.linalg.cholesky(xp.asarray(s, device=device))).astype(np.float64)
        assert np.abs(a.astype(np.float64) @ x - b).max() <= 8 * n * eps * _norm(a) * np.abs(x).max()
        assert np.abs(low @ low.T - s).max() <= 8 * n * eps * _norm(s)
        grow = (RNG.normal(size=(n, n)) * np.geomspace(1, 1e3, n)[:, None]).astype(dtype)
        with _fallbacks_checked(device):
            x = np.asarray(xp.linalg.solve(xp.asarray(grow, device=device), xp.asarray(b, device=device)))
            det = np.asarray(xp.linalg.slogdet(xp.asarray(grow, device=device)).sign)
        assert np.abs(grow.astype(np.float64) @ x - b).max() <= 8 * n * eps * _norm(grow) * np.abs(x).max()
        assert det == np.linalg.slogdet(grow.astype(np.float64)).sign


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_singular_at_each_panel_position(device: xp.Device, dtype: Any) -> None:
    """An exactly zero pivot at column p (column p twice column 0, column 0 constant) raises
    "Singular matrix" wherever p falls in a panel or chunk; det is 0 there, as in NumPy."""
    _skip_f64(device, dtype)
    for n, cols in ((20, (1, 7, 19)), (70, (1, 8, 31, 32, 33, 64, 69))):
        for p in cols:
            a = RNG.normal(size=(n, n)).astype(dtype)
            a[:, 0] = 1.0
            a[:, p] = 2.0
            g = xp.asarray(a, device=device)
            with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
                xp.linalg.solve(g, xp.asarray(np.ones((n, 2), dtype), device=device))
            with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
                xp.linalg.inv(g)
            assert np.asarray(xp.linalg.det(g)) == 0.0
            s = _spd((n, n), 10.0, dtype)
            s[p, p] = -1.0
            with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite"):
                xp.linalg.cholesky(xp.asarray(s, device=device))


@pytest.mark.parametrize("n", [3, 40])
def test_nonfinite_and_signed_zero(device: xp.Device, n: int) -> None:
    """NaN and inf input give NaN results without an error, as in NumPy; -0.0 entries are zeros."""
    for bad in (np.nan, np.inf, -np.inf):
        a = RNG.normal(size=(n, n)).astype(np.float32)
        a[n // 2, 1] = bad
        b = np.ones((n, 2), np.float32)
        with np.errstate(all="ignore"):
            want = np.linalg.solve(a, b)
        got = np.asarray(xp.linalg.solve(xp.asarray(a, device=device), xp.asarray(b, device=device)))
        np.testing.assert_array_equal(np.isnan(got).any(), np.isnan(want).any())
    a = np.eye(n, dtype=np.float32)[::-1].copy()
    a[a == 0] = -0.0
    got = np.asarray(xp.linalg.solve(xp.asarray(a, device=device), xp.asarray(np.arange(n, dtype=np.float32),
                                                                                device=device)))
    np.testing.assert_array_equal(got, np.arange(n, dtype=np.float32)[::-1])
    np.testing.assert_array_equal(np.asarray(xp.linalg.det(xp.asarray(a, device=device))), np.linalg.det(a))


def test_stack_past_65535_workgroups(device: xp.Device) -> None:
    """70000 small matrices: a workgroup each, the dispatch grid two-dimensional."""
    s = _spd((70000, 3, 3), 10.0, np.float32)
    b = RNG.normal(size=(70000, 3, 2)).astype(np.float32)
    with _fallbacks_checked(device):
        x = np.asarray(xp.linalg.solve(xp.asarray(s, device=device), xp.asarray(b, device=device)))
        low = np.asarray(xp.linalg.cholesky(xp.asarray(s, device=device)))
    np.testing.assert_allclose(x, np.linalg.solve(s, b), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(low, np.linalg.cholesky(s), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("threads", [256, 1024])
def test_lu_panel_threads_and_old_panels(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch,
                                         threads: int) -> None:
    """Both workgroup sizes of ``lu_panel_source`` for panels of more than 1024 rows (several rows
    a thread), and panels taller than its limit through ``panel_source`` in the same factorization
    (MAX_ROWS lowered to 1100)."""
    from gpuarray.providers import wgpu_linalg, wgpu_linalg_blocked
    monkeypatch.setattr(wgpu_linalg_blocked, "LU_PANEL_THREADS", threads)
    monkeypatch.setattr(wgpu_linalg, "MAX_ROWS", 1100)
    n = 1150 if threads == 256 else 1151         # sizes of their own: no recorded plan is replayed
    a = (RNG.normal(size=(n, n)) * np.geomspace(1, 1e2, n)[:, None]).astype(np.float32)
    b = RNG.normal(size=(n, 2)).astype(np.float32)
    with _fallbacks_checked(wgpu_device):
        x = np.asarray(xp.linalg.solve(xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device)))
    eps = np.finfo(np.float32).eps
    assert np.abs(a.astype(np.float64) @ x - b).max() <= 8 * n * eps * _norm(a) * np.abs(x).max()


def test_large_cholesky(wgpu_device: xp.Device) -> None:
    """n = 600: Cholesky trailing products of several register-blocked tiles a side."""
    n, eps = 600, np.finfo(np.float32).eps
    s = _spd((n, n), 100.0, np.float32)
    with _fallbacks_checked(wgpu_device):
        low = np.asarray(xp.linalg.cholesky(xp.asarray(s, device=wgpu_device))).astype(np.float64)
    assert np.abs(low @ low.T - s).max() <= 8 * n * eps * _norm(s)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_cholesky_stack(device: xp.Device, dtype: Any) -> None:
    """A stack past one block column: each panel workgroup's 32 rows, the last partial block, and the
    trailing products that compute only the tiles on and below the diagonal."""
    _skip_f64(device, dtype)
    n, eps = 161, np.finfo(dtype).eps
    s = _spd((3, n, n), 50.0, dtype)
    with _fallbacks_checked(device):
        low = np.asarray(xp.linalg.cholesky(xp.asarray(s, device=device))).astype(np.float64)
    np.testing.assert_array_equal(np.triu(low, 1), 0)
    for i in range(3):
        assert np.abs(low[i] @ low[i].T - s[i]).max() <= 8 * n * eps * _norm(s[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lu_register_panel_matches_array_panel(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch,
                                               dtype: Any) -> None:
    """``lu_panel_reg_source`` performs ``lu_panel_source``'s operations in the same order: the same
    pivots and bitwise the same solution, with 256 and 1024 threads, a panel too tall for it, and the
    pivot search by subgroup shuffles (unrolled steps, or a loop over the subgroup's size; the chunk's
    triangular solve unrolled into registers, or that loop too) or through workgroup memory (256 threads;
    1024 threads too on a GPU: lavapipe takes about 70 s to compile that panel, a third of CI's time for
    this file)."""
    from gpuarray.compiler import plan_cache
    from gpuarray.providers import wgpu_linalg_blocked
    from gpuarray.render import wgsl_lu_panel
    from gpuarray.runtime import replay
    _skip_f64(wgpu_device, dtype)
    n = 1100                          # panels of 1100 rows: 1024 threads; of at most 1024 rows: 256
    a = (RNG.normal(size=(n, n)) * np.geomspace(1, 1e2, n)[:, None]).astype(dtype)
    b = RNG.normal(size=(n, 3)).astype(dtype)
    ties = RNG.integers(-2, 3, size=(n, n)).astype(dtype)
    ties[:40, 9] = 2
    got, dets = [], []
    variants = [(False, 1024, True, True), (True, 1024, True, True), (True, 256, True, True),
                (True, 256, False, True), (True, 1024, True, False)]
    if str(wgpu_device.provider.adapter.info.get("adapter_type")) != "CPU":
        variants.append((True, 1024, False, True))
    for reg, threads, sg, unroll in variants:
        monkeypatch.setattr(wgsl_lu_panel, "UNROLL_PIVOT", unroll)
        # the chunk's solve in registers with the subgroup search (the loops together; fewer shaders to compile)
        monkeypatch.setattr(wgsl_lu_panel, "UNROLL_CHUNK", unroll and sg)
        wgsl_lu_panel.lu_panel_reg_source.cache_clear()
        monkeypatch.setattr(wgpu_linalg_blocked, "REG_LU_PANEL", reg)
        monkeypatch.setattr(wgpu_linalg_blocked, "LU_PANEL_THREADS", threads)
        if not sg:                    # the pivot through workgroup memory (adapters without subgroups)
            monkeypatch.setattr(wgpu_linalg_blocked, "use_subgroups", lambda provider: False)
        replay.clear()
        plan_cache.clear()
        with _fallbacks_checked(wgpu_device):
            got.append(np.asarray(xp.linalg.solve(xp.asarray(a, device=wgpu_device),
                                                  xp.asarray(b, device=wgpu_device))))
            # pivots among equal magnitudes (the lowest row wins): another choice rounds otherwise
            sign, logdet = xp.linalg.slogdet(xp.asarray(ties, device=wgpu_device))
            dets.append((float(sign), float(logdet)))
    # the chunk's solve in registers is written-out sums, which a GPU's compiler may contract into fused
    # multiply-adds otherwise than the loop (the H200's float64): within rounding there, bitwise on lavapipe
    gpu = str(wgpu_device.provider.adapter.info.get("adapter_type")) != "CPU"
    regs = [reg and sg and unroll for reg, threads, sg, unroll in variants]
    tol = 1e-12 if dtype == np.float64 else 1e-5

    def same(i: int) -> None:
        if gpu and regs[i]:
            np.testing.assert_allclose(got[i], got[0], rtol=tol, atol=tol * np.abs(got[0]).max())
            assert dets[i][0] == dets[0][0] and abs(dets[i][1] - dets[0][1]) <= tol * abs(dets[0][1]), dets
        else:
            np.testing.assert_array_equal(got[i], got[0])
            assert dets[i] == dets[0], dets
    same(1)
    same(2)                                           # 1100 rows, 256 threads: lu_panel_source's first panels
    wgsl_lu_panel.lu_panel_reg_source.cache_clear()   # no loop-search shaders left for later tests
    for i in range(3, len(got)):                      # the pivot through workgroup memory; the search as a loop
        same(i)
    assert dets[0][0] != 0 and np.isfinite(dets[0][1]), dets
    prov: Any = wgpu_device.provider
    assert not getattr(prov, "_lu_sg_failed", False), "the subgroup pivot search did not compile here"
    assert not getattr(prov, "_reduce_sg_failed", False)
    eps = np.finfo(dtype).eps
    assert np.abs(a.astype(np.float64) @ got[0] - b).max() <= 8 * n * eps * _norm(a) * np.abs(got[0]).max()


@pytest.mark.parametrize("small, blocked", [(False, True), (False, False)])
def test_cholesky_workgroup_memory_paths(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch,
                                         small: bool, blocked: bool) -> None:
    """The paths the register panel replaced (``potrf_source``: small stacks, and every size with the
    blocked Cholesky off) stay correct: ``bench.linalg --old`` times them."""
    from gpuarray.compiler import plan_cache
    from gpuarray.providers import wgpu_linalg_blocked
    from gpuarray.runtime import replay
    monkeypatch.setattr(wgpu_linalg_blocked, "SMALL_CHOLESKY", small)
    monkeypatch.setattr(wgpu_linalg_blocked, "BLOCKED_CHOLESKY", blocked)
    replay.clear()
    plan_cache.clear()
    eps = np.finfo(np.float32).eps
    for shape in [(300, 5, 5), (2, 32, 32), (100, 100)]:
        s = _spd(shape, 30.0, np.float32)
        with _fallbacks_checked(wgpu_device):
            low = np.asarray(xp.linalg.cholesky(xp.asarray(s, device=wgpu_device)))
        n = shape[-1]
        np.testing.assert_allclose(low, np.linalg.cholesky(s), atol=64 * n * eps, rtol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_back_substitution_in_registers_matches_the_loop(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch,
                                                         dtype: Any) -> None:
    """``backsub_source``'s solve of a full block with a column's values in named registers performs the
    loop's operations in the same order, and ``gemm_source`` with a thread's columns 16 apart (coalesced) the
    same sums as with 4 adjacent ones: solutions within rounding of each other (bitwise on lavapipe; a GPU
    compiler may contract the written-out sums otherwise) and of NumPy's, for full blocks and a partial last
    one (n = 200: six blocks of 32 and one of 8), 5 and 70 right-hand sides (two column tiles), and ``inv``."""
    from gpuarray.compiler import plan_cache
    from gpuarray.render import wgsl_linalg
    from gpuarray.runtime import replay
    _skip_f64(wgpu_device, dtype)
    n = 200
    rng = np.random.default_rng(200)        # its own draws: the module's RNG depends on which tests ran first
    a = (rng.normal(size=(n, n)) + 4 * np.eye(n)).astype(dtype)
    rhs = [rng.normal(size=(n, k)).astype(dtype) for k in (5, 70)]
    got: list[list[np.ndarray]] = []
    for unroll in (True, False):
        monkeypatch.setattr(wgsl_linalg, "BACKSUB_UNROLL", unroll)
        monkeypatch.setattr(wgsl_linalg, "GEMM_COALESCED", unroll)      # the trailing updates' column layout
        wgsl_linalg.backsub_source.cache_clear()
        wgsl_linalg.gemm_source.cache_clear()
        replay.clear()
        plan_cache.clear()
        with _fallbacks_checked(wgpu_device):
            ga = xp.asarray(a, device=wgpu_device)
            got.append([np.asarray(xp.linalg.solve(ga, xp.asarray(b, device=wgpu_device))) for b in rhs]
                       + [np.asarray(xp.linalg.inv(ga))])
    wgsl_linalg.backsub_source.cache_clear()
    wgsl_linalg.gemm_source.cache_clear()
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    cpu = str(wgpu_device.provider.adapter.info.get("adapter_type")) == "CPU"
    # against NumPy within the forward error bound: a random matrix plus 4 I can be ill-conditioned
    near = 50 * rtol * max(1.0, float(np.linalg.cond(a.astype(np.float64))) / 100)
    for reg, loop, want in zip(got[0], got[1], [np.linalg.solve(a, b) for b in rhs] + [np.linalg.inv(a)]):
        if cpu:
            np.testing.assert_array_equal(reg, loop)
        np.testing.assert_allclose(reg, loop, rtol=rtol, atol=rtol)
        np.testing.assert_allclose(reg, want, rtol=near, atol=near)
