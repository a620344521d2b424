"""``eigvalsh`` of symmetric matrices larger than Jacobi takes, on the device (Householder reduction
to tridiagonal form and bisection: ``gpuarray/linalg/tridiag.py``, ``providers/wgpu_sytrd.py``)
against NumPy on both providers: orders across panels of 32 columns, stacks (one beyond 65535
eigenvalues a dispatch), float32 and float64, repeated, clustered and zero eigenvalues, matrices
already tridiagonal, tiny and huge scales, only the lower triangle read (as LAPACK), non-contiguous
operands; eigenvalues within 8 n eps ||A|| of LAPACK's in float64; NaN, infinity and underflowing
columns taken by LAPACK (one counted host fallback, NumPy's result or error)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.linalg import tridiag

RNG = np.random.default_rng(20)


@pytest.fixture
def small_min_n(monkeypatch: pytest.MonkeyPatch) -> None:
    """Matrices past Jacobi's 64 rows take the device path (the calibrated ``MIN_WORK`` is larger)."""
    monkeypatch.setattr(tridiag, "MIN_WORK", 0)


def skip_f64(device: xp.Device, dtype: Any) -> None:
    if device.kind == "wgpu" and np.dtype(dtype) == np.float64 and not device.supports(np.dtype(np.float64)):
        pytest.skip("no float64 on this adapter")


def _sym(shape: tuple[int, ...], dtype: Any, lo: float = -3, hi: float = 3) -> np.ndarray:
    b = RNG.uniform(lo, hi, shape)
    return ((b + np.swapaxes(b, -1, -2)) / 2).astype(dtype)


def counted(device: xp.Device, fn: Callable[[Any], Any], a: Any, fallbacks: int | None = 0) -> np.ndarray:
    """``fn`` of ``a`` (put on ``device``) as a NumPy array; on wgpu with ``fallbacks`` host fallbacks
    counted (None: any number)."""
    xp.reset_metrics()
    g = a if isinstance(a, xp.GpuArray) else xp.asarray(a, device=device)
    got = np.asarray(fn(g))
    if device.kind == "wgpu" and fallbacks is not None:
        assert xp.metrics()["host_fallbacks"] == fallbacks
    return got


def _eigvalsh(device: xp.Device, a: Any, fallbacks: int | None = 0) -> np.ndarray:
    return counted(device, xp.linalg.eigvalsh, a, fallbacks)


def _same_as_lapack(device: xp.Device, a: np.ndarray, fallbacks: int | None) -> None:
    """Input the device hands to LAPACK: NumPy's eigenvalues bit for bit, or its LinAlgError."""
    with np.errstate(invalid="ignore", over="ignore"):
        try:
            want = np.linalg.eigvalsh(a)
        except np.linalg.LinAlgError:
            with pytest.raises(np.linalg.LinAlgError):
                _eigvalsh(device, a, fallbacks=None)
            return
        got = _eigvalsh(device, a, fallbacks=fallbacks)
    np.testing.assert_array_equal(got, want)


def _check(a: np.ndarray, w: np.ndarray) -> None:
    n = a.shape[-1]
    assert w.dtype == a.dtype and w.shape == a.shape[:-1]
    want = np.linalg.eigvalsh(a.astype(np.float64))
    eps = np.finfo(a.dtype).eps
    norm = np.abs(want).max(axis=-1, keepdims=True)
    assert np.all(np.abs(w - want) <= 8 * n * eps * np.maximum(norm, np.finfo(a.dtype).tiny))
    assert np.all(np.diff(w, axis=-1) >= 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [65, 96, 97, 129])
def test_eigvalsh_orders(device: xp.Device, small_min_n: None, dtype: Any, n: int) -> None:
    """One panel and a part, whole panels, and panels and a column (32 columns a panel)."""
    skip_f64(device, dtype)
    a = _sym((n, n), dtype)
    _check(a, _eigvalsh(device, a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigvalsh_stacks_and_structure(device: xp.Device, small_min_n: None, dtype: Any) -> None:
    skip_f64(device, dtype)
    n = 70
    q, _ = np.linalg.qr(RNG.normal(size=(n, n)))
    clustered = (q * np.r_[np.full(35, 1.0), np.full(35, 1.0 + 1e-6)]) @ q.T
    low_rank = RNG.normal(size=(n, 3)) @ RNG.normal(size=(3, n))
    d, e = RNG.uniform(-30, 30, n), RNG.uniform(-30, 30, n - 1)
    cases = [_sym((2, 3, n, n), dtype), np.zeros((n, n), dtype), np.eye(n, dtype=dtype) * 5,
             np.diag(np.tile(np.array([3.0, -1.0, 3.0, 0.0, -1.0]), 14)).astype(dtype),
             ((clustered + clustered.T) / 2).astype(dtype), (low_rank + low_rank.T).astype(dtype),
             (np.diag(d) + np.diag(e, 1) + np.diag(e, -1)).astype(dtype),
             _sym((n, n), dtype) * 1e-15, _sym((n, n), dtype) * 1e15, _sym((n, n), dtype, 0, 1)]
    for a in cases:
        _check(a, _eigvalsh(device, a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigvalsh_columns_across_scales(device: xp.Device, small_min_n: None, dtype: Any) -> None:
    """Columns whose values fall in two of Blue's ranges of the norm (big and medium, small and medium:
    ``dnrm2``'s combinations of its accumulators) in every row and across workgroups."""
    skip_f64(device, dtype)
    n = 300
    # entries d_i d_j past Blue's tbig (2^52 / 2^486) and below its tsml (2^-63 / 2^-511)
    big, small = (1e8, 1e-10) if dtype == np.float32 else (1e74, 1e-80)
    for s in (big, small):
        d = np.where(np.arange(n) % 3 == 0, s, 1.0)
        a = (_sym((n, n), np.float64) * d[:, None] * d[None, :]).astype(dtype)
        _check(a, _eigvalsh(device, a))


def test_eigvalsh_reads_the_lower_triangle(device: xp.Device, small_min_n: None) -> None:
    a = _sym((80, 80), np.float32)
    junk = a + np.triu(RNG.uniform(-9, 9, (80, 80)).astype(np.float32), 1)
    _check(a, _eigvalsh(device, junk))


def test_eigvalsh_views(device: xp.Device, small_min_n: None) -> None:
    """A transposed slice of a larger array (the operand's copy reads it through its view)."""
    big = _sym((100, 100), np.float32)
    g = xp.asarray(big, device=device)
    _check(np.ascontiguousarray(big[10:90, 5:85].T), _eigvalsh(device, xp.matrix_transpose(g[10:90, 5:85])))


def test_eigvalsh_many_eigenvalues(device: xp.Device, small_min_n: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """1010 matrices of 65 rows: 65650 eigenvalues, one workgroup each (a 2-D dispatch). On a CPU adapter
    (lavapipe: 134 s for those, most of a CI worker's time for this file) the provider's workgroup limit is
    lowered to 1024 instead and 20 matrices (1300 workgroups) take the same 2-D path; the H200 suite runs the
    real size."""
    count = 1010
    if device.kind == "wgpu" and str(device.provider.adapter.info.get("adapter_type")) == "CPU":
        monkeypatch.setattr(device.provider, "max_groups", 1024)
        count = 20
    a = _sym((count, 65, 65), np.float32)
    _check(a, _eigvalsh(device, a))


def test_eigvalsh_default_size_on_device(device: xp.Device) -> None:
    """At the calibrated size the device path is taken without a host fallback (a stack of 8 of
    ``MIN_WORK / 8`` rows); below it LAPACK takes the matrix, counted."""
    n = tridiag.MIN_WORK // 8
    a = _sym((8, n, n), np.float32)
    _check(a, _eigvalsh(device, a))
    _check(a[0], _eigvalsh(device, a[0], fallbacks=1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigvalsh_special_values_take_lapack(device: xp.Device, small_min_n: None, dtype: Any) -> None:
    """NaN, infinity and a matrix so small that LAPACK rescales its columns: LAPACK's result."""
    skip_f64(device, dtype)
    tiny = np.finfo(dtype).tiny
    for put in (np.nan, np.inf, None):
        a = _sym((70, 70), dtype)
        if put is None:
            a = (a * tiny * 64).astype(dtype)
        else:
            a[40, 3] = put
        _same_as_lapack(device, a, 1)


def test_eigvalsh_stack_of_one_bad_matrix(device: xp.Device, small_min_n: None) -> None:
    """One matrix with NaN in a stack sends the stack to LAPACK: NaN where NumPy has it."""
    a = _sym((3, 66, 66), np.float64)
    a[1, 10, 10] = np.nan
    _same_as_lapack(device, a, 1)
