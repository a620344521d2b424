"""``np.linalg.eigvals``, ``np.roots`` and ``np.poly`` of a square matrix on the device (LAPACK's
``dgeev`` path, one thread a matrix: ``gpuarray/linalg/hqr.py``, ``providers/wgpu_hqr.py``) against
NumPy on both providers: random, symmetric, triangular matrices, complex pairs, Jordan blocks
(accuracy ``eps^(1/k)``), companion matrices of known roots, badly scaled matrices, 1x1, 0x0,
stacks, float32 and float64 (and the float32 kernel), NumPy's dtypes (real where every eigenvalue
is) and errors; no host fallback on wgpu up to 64 rows, LAPACK past them (counted, with a reason).
Eigenvalues are compared as sets (each matched to its nearest) within ``c n eps ||A||``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.linalg import hqr
from gpuarray.providers import wgpu_hqr
from gpuarray.runtime import planner

RNG = np.random.default_rng(31)


def _dist(got: np.ndarray, want: np.ndarray) -> float:
    """The largest distance from an eigenvalue of either set to the nearest of the other, per matrix."""
    if got.size == 0:
        return 0.0
    g = np.asarray(got, np.complex128).reshape(-1, got.shape[-1])
    w = np.asarray(want, np.complex128).reshape(g.shape)
    d = np.abs(g[:, :, None] - w[:, None, :])
    return float(max(d.min(axis=2).max(initial=0), d.min(axis=1).max(initial=0)))


def _eigvals(device: xp.Device, a: np.ndarray, **kw: Any) -> np.ndarray:
    """``np.linalg.eigvals`` of ``a`` on ``device``, run there (``offload="always"``) with host
    fallbacks forbidden; the kernel must have run on the device."""
    xp.reset_metrics()
    with xp.config(offload="always", fallback="raise"), pytest.MonkeyPatch.context() as mp:
        mp.setattr(wgpu_hqr, "MIN_BATCH", 1)        # the kernel at every size (a few large ones: LAPACK)
        g = xp.asarray(a, device=device)
        got = hqr.eigvals(g, **kw) if kw else np.linalg.eigvals(g)
        assert isinstance(got, xp.GpuArray)
        out = np.asarray(got)
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 0
        hq = [e for e in planner.decisions() if "linalg_hqr" in e["kernel"]]
        assert hq and hq[-1]["placed"] == "device", hq[-1:]
    return out


def _check(device: xp.Device, a: np.ndarray, c: float = 8.0, tol: float | None = None) -> np.ndarray:
    got = _eigvals(device, a)
    want = np.linalg.eigvals(a)
    assert got.dtype == want.dtype and got.shape == want.shape
    n = a.shape[-1]
    eps = np.finfo(np.float64 if a.dtype.kind != "f" else a.dtype).eps
    scale = max(float(np.abs(a).max(initial=0)) * n, np.finfo(np.float64).tiny)
    assert _dist(got, want) <= (c * n * eps * scale if tol is None else tol * scale), (_dist(got, want), scale)
    return got


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 17, 33, 64])
def test_eigvals_random(device: xp.Device, dtype: Any, n: int) -> None:
    _check(device, RNG.normal(size=(2, n, n)).astype(dtype))


def test_eigvals_float32_kernel(device: xp.Device) -> None:
    """The single-precision kernel (NumPy, and the default here, compute float32 in float64)."""
    a = RNG.normal(size=(3, 12, 12)).astype(np.float32)
    got = _eigvals(device, a, work_dtype=np.float32)
    want = np.linalg.eigvals(a.astype(np.float64))
    assert got.dtype == np.complex64
    assert _dist(got, want) <= 8 * 12 * np.finfo(np.float32).eps * 12 * np.abs(a).max()


def test_eigvals_structured(device: xp.Device) -> None:
    b = RNG.normal(size=(10, 10))
    for a in (b + b.T, np.triu(b), np.tril(b), np.diag(np.arange(6.0)), np.zeros((4, 4)), np.eye(5) * 3,
              np.array([[7.0]]), np.array([[0.0, -2.0], [2.0, 0.0]]), b[:3, :3].astype(np.int64)):
        _check(device, a)
    # complex pairs: a block diagonal of rotations, similar to a random basis
    blocks = np.zeros((8, 8))
    for k, (r, t) in enumerate([(1.0, 0.3), (2.0, 1.2), (0.5, 2.9), (3.0, 0.0)]):
        blocks[2 * k:2 * k + 2, 2 * k:2 * k + 2] = r * np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    q = RNG.normal(size=(8, 8))
    got = _check(device, q @ blocks @ np.linalg.inv(q), c=2000)
    assert got.dtype == np.complex128


@pytest.mark.parametrize("k", [2, 3, 5])
def test_eigvals_jordan(device: xp.Device, k: int) -> None:
    """A Jordan block of order k: its eigenvalue is accurate to about eps^(1/k)."""
    a = 2.0 * np.eye(k) + np.eye(k, k=1)
    q = RNG.normal(size=(k, k))
    a = q @ a @ np.linalg.inv(q)
    got = _eigvals(device, a)
    assert np.abs(got - 2.0).max() <= 20 * np.abs(a).max() * np.finfo(np.float64).eps ** (1 / k)


def test_eigvals_badly_scaled(device: xp.Device) -> None:
    """Balancing (dgebal's scaling) and dgeev's scaling of tiny and huge matrices."""
    d = np.diag(10.0 ** np.arange(-12, 13, 3))
    b = RNG.normal(size=(9, 9))
    a = d @ b @ np.linalg.inv(d)
    got = _eigvals(device, a)
    want = np.linalg.eigvals(b)                   # similar: the same eigenvalues
    assert _dist(got, want) <= 1e-10 * np.abs(want).max()
    for s in (1e-160, 1e160, 1e-300):
        _check(device, b * s)
    _check(device, (b * 1e-20).astype(np.float32))
    _check(device, (b * 1e20).astype(np.float32))


def test_eigvals_stacks_and_empty(device: xp.Device) -> None:
    _check(device, RNG.normal(size=(1000, 8, 8)))
    _check(device, RNG.normal(size=(2, 3, 4, 4)).astype(np.float32))
    for shape, dt in (((0, 0), np.float64), ((2, 0, 0), np.float32), ((0, 3, 3), np.float64)):
        got = np.asarray(np.linalg.eigvals(xp.asarray(np.zeros(shape, dt), device=device)))
        want = np.linalg.eigvals(np.zeros(shape, dt))
        assert got.shape == want.shape and got.dtype == want.dtype


def test_eigvals_errors(device: xp.Device) -> None:
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        np.linalg.eigvals(xp.asarray(np.zeros((2, 3)), device=device))
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        np.linalg.eigvals(xp.asarray(np.zeros(3), device=device))
    for bad in (np.nan, np.inf):
        a = RNG.normal(size=(3, 5, 5))
        a[1, 2, 3] = bad
        with xp.config(offload="always"), pytest.raises(np.linalg.LinAlgError, match="infs or NaNs"):
            np.linalg.eigvals(xp.asarray(a, device=device))


def test_eigvals_large_and_complex_take_lapack(device: xp.Device) -> None:
    """Past 64 rows and complex input: LAPACK, a counted fallback on wgpu whose reason says why."""
    a = RNG.normal(size=(70, 70))
    xp.reset_metrics()
    with xp.config(offload="always"):
        got = np.asarray(np.linalg.eigvals(xp.asarray(a, device=device)))
    assert _dist(got, np.linalg.eigvals(a)) <= 1e-10
    c = RNG.normal(size=(4, 4)) + 1j * RNG.normal(size=(4, 4))
    with xp.config(offload="always"):
        gc = np.asarray(np.linalg.eigvals(xp.asarray(c, device=device)))
    assert gc.dtype == np.complex128 and _dist(gc, np.linalg.eigvals(c)) <= 1e-12
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 2
        why = [e["why"] for e in planner.decisions() if e["placed"] == "fallback"]
        assert any("at most 64 rows" in w for w in why) and any("complex" in w for w in why)


@pytest.mark.parametrize("p", [np.poly(np.arange(1, 11)), [1.0, 0.0, 0.0, 0.0, 1.0], [1.0] + [0.0] * 4 + [-1.0],
                               [1.0] + [0.0] * 15 + [-1.0], [0, 0, 2, -6, 4, 0, 0], [3.0], [0.0, 0.0], [],
                               np.array([1.0, -2.5, 1.0], np.float32), [1, 2, 3]])
def test_roots(device: xp.Device, p: Any) -> None:
    """np.roots: NumPy's values, dtype and shape; on wgpu without a host fallback."""
    p = np.asarray(p)
    want = np.roots(p)
    xp.reset_metrics()
    with xp.config(offload="always", fallback="raise"):
        got = np.roots(xp.asarray(p, device=device))
        assert isinstance(got, xp.GpuArray) or p.size == 0      # empty arguments: NumPy's, uncounted
        got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 1e-4 if p.dtype == np.float32 else 2e-5 if p.size == 11 else 1e-10
    assert _dist(got, want) <= tol * max(1.0, float(np.abs(want).max(initial=0)))
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 0


def test_poly_of_square_matrix(device: xp.Device) -> None:
    for a in (RNG.normal(size=(6, 6)), np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[2, 0], [0, 3]]),
              RNG.normal(size=(5, 5)).astype(np.float32)):
        with xp.config(offload="always", fallback="raise"):
            got = np.asarray(np.poly(xp.asarray(a, device=device)))
        want = np.poly(a)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-4 if a.dtype == np.float32 else 1e-10, atol=1e-10)


def test_eigvals_of_a_few_large_matrices_take_lapack(device: xp.Device) -> None:
    """A few matrices of more than ``SMALL_N`` rows: LAPACK on the host (counted, with the reason), many
    of them or small ones: the device."""
    a = RNG.normal(size=(2, 33, 33))
    xp.reset_metrics()
    with xp.config(offload="always"):
        got = np.asarray(np.linalg.eigvals(xp.asarray(a, device=device)))
    assert got.dtype == np.linalg.eigvals(a).dtype and _dist(got, np.linalg.eigvals(a)) <= 1e-10 * 33 * np.abs(a).max()
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] >= 1
        why = [e["why"] for e in planner.decisions() if e["placed"] == "fallback"]
        assert any("LAPACK on the host is faster" in w for w in why)
    _check(device, RNG.normal(size=(3, 16, 16)))           # 16 rows: the device
