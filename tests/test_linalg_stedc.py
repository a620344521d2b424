"""Divide and conquer for symmetric tridiagonal matrices (``gpuarray/linalg/stedc.py``) against LAPACK
(NumPy's ``eigh`` of the dense matrix, in float64) on both providers: residual ``|T Q - Q W|`` and
orthogonality ``|Q^T Q - I|`` within a small multiple of ``n eps ||T||``, eigenvalues within ``n eps
||T||``; sizes across one and several merge levels (leaves of 32 rows, halves of odd size), repeated
eigenvalues (the deflation's rotations), zero couplings (every pole deflated), graded, Wilkinson's,
zero and tiny matrices, float32 and float64, and no host fallback on the device."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.linalg import stedc

from .test_linalg_tridiag_device import skip_f64

RNG = np.random.default_rng(31)


def _check(device: xp.Device, d: np.ndarray, e: np.ndarray) -> None:
    xp.reset_metrics()
    got = stedc.stedc(d, e, device)
    assert got is not None
    w, q = got
    assert w.dtype == d.dtype and q.dtype == d.dtype and q.shape == (d.size, d.size)
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 0
    q64 = np.asarray(q).astype(np.float64)
    t = np.diag(d.astype(np.float64)) + np.diag(e.astype(np.float64), -1) + np.diag(e.astype(np.float64), 1)
    want = np.linalg.eigvalsh(t)
    n = d.size
    tol = n * np.finfo(d.dtype).eps * max(float(np.abs(want).max()), np.finfo(d.dtype).tiny)
    assert np.all(np.diff(w) >= 0)
    np.testing.assert_allclose(w, want, rtol=0, atol=4 * tol)
    assert np.abs(t @ q64 - q64 * w.astype(np.float64)).max() <= 4 * tol
    assert np.abs(q64.T @ q64 - np.eye(n)).max() <= 8 * n * np.finfo(d.dtype).eps


CASES = {
    "random": lambda n: (RNG.standard_normal(n), RNG.standard_normal(n - 1)),
    "toeplitz": lambda n: (np.full(n, 2.0), np.ones(n - 1)),       # distinct, evenly spread
    "repeated": lambda n: (np.tile([1.0, 1.0, 2.0, 3.0], n)[:n], np.where(np.arange(n - 1) % 4 == 3, 0.0, 1e-9)),
    "decoupled": lambda n: (RNG.standard_normal(n), np.zeros(n - 1)),
    "identity": lambda n: (np.ones(n), np.zeros(n - 1)),
    "graded": lambda n: (np.geomspace(1e-6, 1e6, n), np.geomspace(1e-7, 1e5, n - 1)),
    "wilkinson": lambda n: (np.abs(np.arange(n) - (n - 1) / 2), np.ones(n - 1)),
    "zero": lambda n: (np.zeros(n), np.zeros(n - 1)),
    "tiny": lambda n: (RNG.standard_normal(n) * 1e-30, RNG.standard_normal(n - 1) * 1e-30),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stedc_matches_lapack(device: xp.Device, case: str, dtype: Any) -> None:
    skip_f64(device, dtype)
    d, e = CASES[case](97)          # leaves of 24 and 25 rows, two merge levels
    if case == "tiny" and dtype == np.float32:
        d, e = d * 1e20, e * 1e20   # float32's range
    _check(device, d.astype(dtype), e.astype(dtype))


@pytest.mark.parametrize("n", [1, 2, 32, 33, 130])
def test_stedc_sizes(device: xp.Device, n: int) -> None:
    d, e = CASES["random"](n)
    _check(device, d.astype(np.float32), e.astype(np.float32))


def test_stedc_many_deflations_and_rotations(device: xp.Device) -> None:
    # eigenvalues repeated across the halves: poles equal to working precision rotate together
    n = 80
    base = np.diag(np.repeat([1.0, 2.0], 20)) + 0.0
    d = np.concatenate([np.diag(base), np.diag(base)])
    e = np.zeros(n - 1)
    e[39] = 0.5
    e[[9, 49]] = 1e-3
    _check(device, d.astype(np.float64) if device.supports(np.dtype(np.float64)) else d.astype(np.float32),
           e.astype(np.float64) if device.supports(np.dtype(np.float64)) else e.astype(np.float32))


def test_levels_halve_to_leaves_at_one_depth() -> None:
    levels = stedc._levels(97)
    assert levels[0] == [(0, 97)]
    assert {hi - lo for lo, hi in levels[-1]} <= {24, 25} and len(levels[-1]) == 4
    assert all(max(hi - lo for lo, hi in lv) > stedc.LEAF for lv in levels[:-1])


def test_evaluations_per_level(device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    # the leaves, then one evaluation a merge level (its z rows read with the level below's roots), one read
    # last, and one more for a level whose close poles rotated
    rotated = []
    real = stedc._rotated
    monkeypatch.setattr(stedc, "_rotated", lambda *a: rotated.append(1) or real(*a))
    d, e = CASES["random"](300)         # leaves of 18 and 19 rows, four merge levels
    xp.reset_metrics()
    stedc.stedc(d.astype(np.float32), e.astype(np.float32), device)
    assert xp.metrics()["evaluations"] <= len(stedc._levels(300)) + 2 + len(rotated)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_laed4_matches_the_host_kind(device: xp.Device, dtype: Any) -> None:
    # one level of merges (rotations in one of them) on the device against the NumPy kind of the same layout
    skip_f64(device, dtype)
    rng = np.random.default_rng(5)
    merges, n1s = [], []
    for k, n1 in ((40, 20), (37, 19), (64, 32)):
        dd = np.sort(rng.standard_normal(k))
        if k == 37:
            dd[5] = dd[4]                   # two equal poles: a rotation
        z = rng.standard_normal(k)
        z[3] = 0.0                          # a deflated pole
        merges.append(stedc._Merge(dd, z / np.linalg.norm(z), 0.7, float(np.finfo(dtype).eps) / 2))
        n1s.append(n1)
    assert merges[1].touched is not None
    data, kmax, _ = stedc._merge_data(merges, n1s, 32, np.dtype(dtype))
    size = 3 * 64 * 64 + 5 * 3 * kmax
    got = []
    for dev in (device, xp.Device("cpu")):
        node = stedc.make("linalg_laed4", (xp.asarray(data, device=dev)._node,), np.dtype(dtype), (size,), (kmax, 64),
                          dev)
        parts = [stedc.views.strided_view(node, (3 * 64 * 64,), (1,), 0),
                 stedc.views.strided_view(node, (5 * 3 * kmax,), (1,), 3 * 64 * 64)]
        got.append(np.concatenate([np.asarray(stedc.GpuArray(p)).astype(np.float64) for p in parts]))
    eps = float(np.finfo(dtype).eps)
    m = 3 * 64 * 64
    np.testing.assert_allclose(got[0][m:m + 3 * kmax], got[1][m:m + 3 * kmax], rtol=0, atol=16 * eps)   # roots
    np.testing.assert_allclose(got[0][:m], got[1][:m], rtol=0, atol=1e3 * eps)                             # vectors
    mm = got[0][:m].reshape(3, 64, 64)
    for i, mg in enumerate(merges):          # orthonormal columns: the live vectors and the deflated unit vectors
        cols = mm[i][:, :mg.k]
        assert np.abs(cols.T @ cols - np.eye(mg.k)).max() <= 1e3 * eps


def test_laed4_past_the_workgroup_limit(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    # 1100 merges of 64 live poles: 70400 workgroups of roots, 18 million elements of merge matrices (2-D grids);
    # on a CPU adapter (lavapipe: 42 s) 24 merges past a workgroup limit lowered to 1024, the same 2-D paths
    rng = np.random.default_rng(9)
    cnt, k, s = 1100, 64, 128
    if str(wgpu_device.provider.adapter.info.get("adapter_type")) == "CPU":
        monkeypatch.setattr(wgpu_device.provider, "max_groups", 1024)
        cnt = 24
    data = np.zeros((cnt, 2 * k + 2 + s), np.float32)
    data[:, :k] = np.sort(rng.standard_normal((cnt, k)), axis=1)
    z = rng.standard_normal((cnt, k))
    data[:, k:2 * k] = z / np.linalg.norm(z, axis=1, keepdims=True)
    data[:, 2 * k], data[:, 2 * k + 1] = rng.uniform(0.1, 2.0, cnt), k
    data[:, 2 * k + 2:] = -(s + 1)
    data[:, 2 * k + 2 + 2 * np.arange(k)] = np.arange(k)      # secular row t at row 2 t of M
    got = []
    for dev in (wgpu_device, xp.Device("cpu")):
        node = stedc.make("linalg_laed4", (xp.asarray(data, device=dev)._node,), np.dtype(np.float32),
                          (cnt * s * s + 5 * cnt * k,), (k, s), dev)
        parts = [stedc.views.strided_view(node, (cnt, s, s), (s * s, s, 1), 0),
                 stedc.views.strided_view(node, (cnt, k), (k, 1), cnt * s * s)]
        got.append([np.asarray(stedc.GpuArray(p)).astype(np.float64) for p in parts])
    eps = float(np.finfo(np.float32).eps)
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=0, atol=16 * eps)
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=0, atol=1e3 * eps)
    assert np.all(got[0][0][:, 1::2, :] == 0) and np.all(got[0][0][:, :, k:] == 0)
