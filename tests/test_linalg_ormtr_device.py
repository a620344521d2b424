"""``eigh``'s tridiagonal reduction with its reflectors (``gpuarray/linalg/tridiag.py``'s ``reduce``: the
``linalg_syevb`` node with attrs ``(True,)``, ``providers/wgpu_sytrd.py`` on the device, the NumPy
``dsytd2`` of ``providers/host_linalg.py`` in-process) and ``back_transform`` (``Q @ Z`` by block
reflectors) on both providers: float32 and float64, one to 200 rows (across the reduction's panels of
32 and the back-transformation's blocks), random, graded, with zero columns (``tau = 0``), stacks;
``Q`` orthogonal and ``Q^T A Q`` the reduction's tridiagonal matrix within a few ``n eps ||A||``, the
layout of ``V``, ``back_transform(r, Z) = Q Z``, LAPACK's ``dsytrd`` reflectors; NaN and infinity
give None (LAPACK's turn)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.linalg import tridiag

from .test_linalg_tridiag_device import skip_f64

RNG = np.random.default_rng(31)


def _sym(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    b = RNG.uniform(-3, 3, shape)
    return ((b + np.swapaxes(b, -1, -2)) / 2).astype(dtype)


def _reduce(device: xp.Device, a: np.ndarray) -> tridiag.Reduced | None:
    xp.reset_metrics()
    got = tridiag.reduce(xp.asarray(a, device=device)._node)
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 0
    return got


def _q(device: xp.Device, r: tridiag.Reduced, n: int, dtype: Any) -> np.ndarray:
    """``Q`` of ``r`` (``back_transform`` of the identity, no host fallback) in float64."""
    xp.reset_metrics()
    q = np.asarray(tridiag.back_transform(r, xp.eye(n, dtype=dtype, device=device)))
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 0
    assert q.dtype == dtype
    return q.astype(np.float64)


def _check(device: xp.Device, a: np.ndarray, c: float = 4.0) -> tridiag.Reduced:
    """The reduction of ``a`` (one matrix): shapes, ``V``'s layout, ``Q`` orthogonal, ``Q^T A Q`` its
    tridiagonal matrix."""
    n = a.shape[-1]
    r = _reduce(device, a)
    assert r is not None
    d, e, v, tau = (np.asarray(x) for x in r[:4])
    assert np.array_equal(np.asarray(r.de), np.concatenate([d, e], axis=-1))
    assert (d.shape, e.shape, v.shape, tau.shape) == ((n,), (max(n - 1, 0),), (n, n), (n,))
    assert all(x.dtype == a.dtype for x in (d, e, v, tau))
    assert np.all(np.triu(v) == 0) and np.all(tau[n - 2:] == 0)
    live = tau != 0
    assert np.all(v[:, ~live] == 0)
    assert np.all(v[np.arange(1, n)[live[:n - 1]], np.flatnonzero(live[:n - 1])] == 1)
    assert np.all((tau[live] >= 1) & (tau[live] <= 2))
    eps = np.finfo(a.dtype).eps
    q = _q(device, r, n, a.dtype)
    assert np.abs(q.T @ q - np.eye(n)).max() <= c * max(n, 1) * eps
    t = q.T @ a.astype(np.float64) @ q
    want = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    assert np.abs(t - want).max() <= c * max(n, 1) * eps * max(np.abs(a).max(), np.finfo(a.dtype).tiny)
    return r


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 3, 33, 65, 200])
def test_reduce_random(device: xp.Device, dtype: Any, n: int) -> None:
    skip_f64(device, dtype)
    _check(device, _sym((n, n), dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reduce_graded_and_zero_columns(device: xp.Device, dtype: Any) -> None:
    """Entries graded over six orders of magnitude; zero rows and columns, a block-diagonal matrix,
    a diagonal and a tridiagonal one (reflectors with ``tau = 0``)."""
    skip_f64(device, dtype)
    n = 70
    g = np.logspace(0, -6, n)
    graded = (_sym((n, n), np.float64) * g[:, None] * g[None, :]).astype(dtype)
    holes = _sym((n, n), dtype)
    holes[[3, 40, 41], :] = 0
    holes[:, [3, 40, 41]] = 0
    blocks = _sym((n, n), dtype)
    blocks[:35, 35:] = blocks[35:, :35] = 0
    d, e = RNG.uniform(-3, 3, n), RNG.uniform(-3, 3, n - 1)
    tri = (np.diag(d) + np.diag(e, 1) + np.diag(e, -1)).astype(dtype)
    for a in (graded, holes):
        _check(device, a)
    assert np.flatnonzero(np.asarray(_check(device, blocks).tau) == 0).tolist() == [33, 34, 68, 69]
    for a in (tri, np.diag(d).astype(dtype), np.zeros((n, n), dtype)):
        assert not np.asarray(_check(device, a).tau).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_back_transform_matches_q(device: xp.Device, monkeypatch: pytest.MonkeyPatch, dtype: Any) -> None:
    """``back_transform(r, Z) = Q Z`` for ``Z`` of more columns than rows with the default blocks (one,
    padded) and of fewer with blocks of 32 (seven, the last of six live columns)."""
    skip_f64(device, dtype)
    n = 200
    a = _sym((n, n), dtype)
    r = _reduce(device, a)
    assert r is not None
    q = _q(device, r, n, dtype)
    eps = np.finfo(dtype).eps
    for nb, p in ((tridiag.NB_APPLY, 230), (32, 7)):
        monkeypatch.setattr(tridiag, "NB_APPLY", nb)
        z = RNG.normal(size=(n, p)).astype(dtype)
        got = np.asarray(tridiag.back_transform(r, xp.asarray(z, device=device)))
        assert got.shape == (n, p) and got.dtype == dtype
        assert np.abs(got - q @ z).max() <= 4 * n * eps * np.abs(z).max()


def test_stack(device: xp.Device) -> None:
    """A (2, 3) stack of matrices: each reduced on its own (the matrices' reductions of one), ``Q Z``
    per matrix."""
    n = 40
    a = _sym((2, 3, n, n), np.float32)
    r = _reduce(device, a)
    assert r is not None
    assert r.v.shape == (2, 3, n, n) and r.e.shape == (2, 3, n - 1)
    one = _reduce(device, a[1, 2])
    assert one is not None
    for x, y in zip(one[:5], r[:5], strict=True):
        np.testing.assert_allclose(np.asarray(y)[1, 2], np.asarray(x), atol=1e-4)
    assert one.factors is not None and r.factors is not None     # back_transform's V and T, per matrix
    for x, y in zip(one.factors[:2], r.factors[:2], strict=True):
        np.testing.assert_allclose(np.asarray(y)[1, 2], np.asarray(x), atol=1e-3)
    eps = np.finfo(np.float32).eps
    eye = xp.broadcast_to(xp.eye(n, dtype=xp.float32, device=device), (2, 3, n, n))
    q = np.asarray(tridiag.back_transform(r, eye)).astype(np.float64)
    assert np.abs(np.swapaxes(q, -1, -2) @ q - np.eye(n)).max() <= 4 * n * eps
    t = np.swapaxes(q, -1, -2) @ a @ q
    d, e = np.asarray(r.d), np.asarray(r.e)
    want = np.stack([np.diag(d[i]) + np.diag(e[i], 1) + np.diag(e[i], -1)
                     for i in np.ndindex(2, 3)]).reshape(2, 3, n, n)
    assert np.abs(t - want).max() <= 4 * n * eps * np.abs(a).max()
    z = RNG.normal(size=(2, 3, n, 5)).astype(np.float32)
    got = np.asarray(tridiag.back_transform(r, xp.asarray(z, device=device)))
    assert np.abs(got - q @ z).max() <= 4 * n * eps * np.abs(z).max()


def test_reflectors_are_lapacks(device: xp.Device) -> None:
    """``d``, ``e``, ``tau`` and the reflectors of SciPy's ``dsytrd`` (``lower=1``) in float64."""
    lapack = pytest.importorskip("scipy.linalg.lapack")
    skip_f64(device, np.float64)
    n = 65
    a = _sym((n, n), np.float64)
    r = _reduce(device, a)
    assert r is not None
    c, d, e, tau, info = lapack.dsytrd(a, lower=1)
    assert info == 0
    v = np.tril(c, -2)[:, : n - 1] + np.eye(n, n - 1, -1)
    v[:, tau == 0] = 0
    tol = 1e-12 * n
    np.testing.assert_allclose(np.asarray(r.d), d, atol=tol * 3)
    np.testing.assert_allclose(np.asarray(r.e), e, atol=tol * 3)
    np.testing.assert_allclose(np.asarray(r.tau)[: n - 1], tau, atol=tol)
    np.testing.assert_allclose(np.asarray(r.v)[:, : n - 1], v, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reduce_not_finite_is_none(device: xp.Device, dtype: Any) -> None:
    """NaN or infinity anywhere in the lower triangle, or in one matrix of a stack, and a matrix so
    small that LAPACK rescales its reflectors: None (LAPACK's)."""
    skip_f64(device, dtype)
    for put in (np.nan, np.inf):
        a = _sym((66, 66), dtype)
        a[50, 7] = a[7, 50] = put
        assert _reduce(device, a) is None
    assert _reduce(device, (_sym((66, 66), dtype) * np.finfo(dtype).tiny * 64).astype(dtype)) is None
    a = _sym((3, 40, 40), dtype)
    a[1, 0, 0] = np.nan
    assert _reduce(device, a) is None
    assert _reduce(device, np.zeros((0, 0), dtype)) is None
