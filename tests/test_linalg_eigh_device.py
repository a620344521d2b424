"""``eigh`` / ``eigvalsh`` of small symmetric matrices on the device (cyclic Jacobi, one workgroup a
matrix: ``gpuarray/linalg/jacobi.py``, ``providers/wgpu_eigh.py``) against NumPy on both providers:
orders 1 to 64, stacks (one beyond 65535 matrices), float32 and float64, repeated and clustered
eigenvalues, zero and diagonal matrices, only the lower triangle read (as LAPACK), eigenvalues
within n * eps * ||A|| of LAPACK's, residuals and orthogonality scaled by n * eps; a single matrix
(the one-sided kernel, ``render/wgsl_jacobi1.py``); each vector's largest component positive; NaN
and infinity taken by LAPACK (one counted host fallback, NumPy's result)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_eigh
from gpuarray.runtime import devices as _devices

RNG = np.random.default_rng(22)


def _skip_f64(device: xp.Device, dtype: Any) -> None:
    if device.kind == "wgpu" and np.dtype(dtype) == np.float64 and not device.supports(np.dtype(np.float64)):
        pytest.skip("no float64 on this adapter")


def _sym(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    b = RNG.uniform(-3, 3, shape)
    return ((b + np.swapaxes(b, -1, -2)) / 2).astype(dtype)


def _eigh(device: xp.Device, a: np.ndarray, fallbacks: int | None = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``eigh`` and ``eigvalsh``; ``fallbacks`` expected on a wgpu device (None: not checked)."""
    xp.reset_metrics()
    g = xp.asarray(a, device=device)
    w, v = xp.linalg.eigh(g)
    wv = xp.linalg.eigvalsh(g)
    got = np.asarray(w), np.asarray(v), np.asarray(wv)
    if device.kind == "wgpu" and fallbacks is not None:
        assert xp.metrics()["host_fallbacks"] == fallbacks
    return got


def _check(a: np.ndarray, w: np.ndarray, v: np.ndarray, wv: np.ndarray) -> None:
    n = a.shape[-1]
    dtype = a.dtype
    assert w.dtype == v.dtype == wv.dtype == dtype
    assert w.shape == wv.shape == a.shape[:-1] and v.shape == a.shape
    eps = np.finfo(dtype).eps
    a64 = a.astype(np.float64)
    want = np.linalg.eigvalsh(a64)
    scale = 8 * n * eps * max(np.abs(want).max(initial=0), np.finfo(dtype).tiny)     # ||A||_2
    np.testing.assert_allclose(w, want, atol=scale, rtol=0)
    np.testing.assert_allclose(wv, want, atol=scale, rtol=0)
    assert np.all(np.diff(w, axis=-1) >= 0)
    v64 = v.astype(np.float64)
    assert np.abs(a64 @ v64 - v64 * w[..., None, :]).max() <= scale
    assert np.abs(np.swapaxes(v64, -1, -2) @ v64 - np.eye(n)).max() <= 8 * n * eps


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 31, 32, 33, 48, 53, 54, 62, 63, 64])
def test_eigh_orders(device: xp.Device, dtype: Any, n: int) -> None:
    """Stacks; ``V`` beside ``A`` in workgroup memory where both fit, else in the output (float64 from
    54 rows on a 48 KiB adapter); orders past the adapter's workgroup memory for ``A`` alone (lavapipe:
    63 in float64) go to LAPACK, counted once for ``eigh`` and once for ``eigvalsh``."""
    _skip_f64(device, dtype)
    a = _sym((2, n, n), dtype)
    fits = device.kind != "wgpu" or n <= wgpu_eigh.max_order(_devices.provider_for(device),
                                                             "f32" if dtype == np.float32 else "f64")
    w, v, wv = _eigh(device, a, 0 if fits else 2)
    _check(a, w, v, wv)
    if device.kind == "wgpu" and fits:
        _largest_positive(v)


def _largest_positive(v: np.ndarray) -> None:
    """Each eigenvector's component of largest magnitude (the first of equal ones) is positive."""
    n = v.shape[-1]
    big = np.argmax(np.abs(v), axis=-2)
    assert np.all(np.take_along_axis(v, big[..., None, :], axis=-2) > 0)
    assert big.shape[-1] == n


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 31, 32, 33, 48, 53, 54, 62, 63, 64])
def test_eigh_single_matrix(device: xp.Device, dtype: Any, n: int) -> None:
    """One matrix on the device (the one-sided kernel where it fits the workgroup memory, else the
    two-sided one, else LAPACK: lavapipe's 32 KiB hold float64 up to 62 rows): NumPy's eigenvalues,
    the same vectors up to sign, each vector's largest component positive (LAPACK's signs are its
    algorithm's, cuSOLVER's others)."""
    _skip_f64(device, dtype)
    fits = device.kind != "wgpu" or n <= wgpu_eigh.max_order(_devices.provider_for(device),
                                                             "f32" if dtype == np.float32 else "f64")
    for a in (_sym((n, n), dtype), (lambda b: (b.T @ b).astype(dtype))(RNG.normal(size=(2 * n, n)))):
        w, v, wv = _eigh(device, a, 0 if fits else 2)
        _check(a, w, v, wv)
        if device.kind == "wgpu" and fits:
            _largest_positive(v)
        wn, vn = np.linalg.eigh(a.astype(np.float64))
        gaps = np.diff(wn)
        if n > 1 and gaps.min() > 1e-2 * np.abs(wn).max():      # separated: the same vectors, up to sign
            np.testing.assert_allclose(np.abs(np.sum(v * vn, axis=0)), 1, atol=100 * n * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigh_single_matrix_structure(device: xp.Device, dtype: Any) -> None:
    """Diagonal matrices give their diagonal exactly (each eigenvalue is its vector's Rayleigh
    quotient with the input, not a difference of the shifted copy's norms); zero, -I, eigenvalues +-1
    repeated, a covariance whose spectrum spans eight decades, tiny and huge scales."""
    _skip_f64(device, dtype)
    d = np.array([1e3, 1e-3, -5.0, 2.0, 0.0, -0.0], dtype)
    w, v, wv = _eigh(device, np.diag(d))
    np.testing.assert_array_equal(w, np.sort(d))
    np.testing.assert_array_equal(np.abs(v), np.abs(np.linalg.eigh(np.diag(d))[1]))
    q, _ = np.linalg.qr(RNG.normal(size=(16, 16)))
    x = RNG.normal(size=(400, 40)) * np.logspace(0, -4, 40)
    pm = (q * np.r_[np.ones(8), -np.ones(8)]) @ q.T
    for a in (np.zeros((5, 5), dtype), -np.eye(6, dtype=dtype), pm.astype(dtype), np.cov(x.T).astype(dtype),
              _sym((9, 9), dtype) * 1e-20, _sym((9, 9), dtype) * 1e15):
        a = (a + a.T) / 2
        w, v, wv = _eigh(device, a)
        _check(a, w, v, wv)
        if device.kind == "wgpu":
            _largest_positive(v)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigh_stacks_and_structure(device: xp.Device, dtype: Any) -> None:
    _skip_f64(device, dtype)
    for a in (_sym((3, 2, 20, 20), dtype), np.zeros((4, 9, 9), dtype), np.eye(12, dtype=dtype) * 5,
              np.diag(np.array([3.0, -1.0, 3.0, 3.0, 0.0, -1.0], dtype)),
              _sym((6, 6), dtype) * 1e-20, _sym((6, 6), dtype) * 1e15):
        w, v, wv = _eigh(device, a)
        _check(a, w, v, wv)
    # a matrix with clustered eigenvalues: Q diag Q^T
    q, _ = np.linalg.qr(RNG.normal(size=(24, 24)))
    a = ((q * np.r_[np.full(12, 1.0), np.full(12, 1.0 + 1e-6)]) @ q.T).astype(dtype)
    a = (a + a.T) / 2
    _check(a, *_eigh(device, a))


def test_eigh_reads_the_lower_triangle(device: xp.Device) -> None:
    a = _sym((10, 10), np.float32)
    junk = a + np.triu(RNG.uniform(-9, 9, (10, 10)).astype(np.float32), 1)
    w, v, wv = _eigh(device, junk)
    _check(a, w, v, wv)
    wn, vn = np.linalg.eigh(junk)
    np.testing.assert_allclose(np.abs(np.sum(v * vn, axis=0)), 1, atol=1e-4)     # the same vectors, up to sign


def test_eigh_large_stack(device: xp.Device) -> None:
    """More matrices than one dispatch dimension holds (65535)."""
    a = _sym((70000, 3, 3), np.float32)
    _check(a, *_eigh(device, a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigh_special_values_take_lapack(device: xp.Device, dtype: Any) -> None:
    _skip_f64(device, dtype)
    for put in (np.nan, np.inf):
        a = _sym((8, 8), dtype)
        a[5, 2] = put
        with np.errstate(invalid="ignore"):
            try:
                wn, vn = np.linalg.eigh(a)
            except np.linalg.LinAlgError:
                with pytest.raises(np.linalg.LinAlgError):
                    _eigh(device, a, fallbacks=None)
                continue
        w, v, _ = _eigh(device, a, fallbacks=None)
        np.testing.assert_array_equal(w, wn)
        np.testing.assert_array_equal(v, vn)


def test_eigh_empty(device: xp.Device) -> None:
    for shape in [(0, 0), (3, 0, 0)]:
        w, v = xp.linalg.eigh(xp.asarray(np.zeros(shape, np.float32), device=device))
        assert w.shape == shape[:-1] and v.shape == shape


def test_eigh_flag_read_before_the_next_evaluation(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """``eigh`` submits the Jacobi kernel and leaves its flag to be read before the next evaluation or read
    (``runtime/guards.py``): nothing is read at the call. Where the flag is raised (an infinity), LAPACK's
    result replaces the kernel's in place before anything reads it: the views handed out, their elements, and
    a product computed on the device from them are all NumPy's, with one counted host fallback. Where LAPACK
    raises (a NaN: "Eigenvalues did not converge"), the LinAlgError comes at the next read, once, naming
    ``linalg.eigh``, and the results read as NaN. Read at the call (``DEFER`` off): the same values, and
    NumPy's error at the call."""
    from gpuarray.linalg import jacobi
    from gpuarray.runtime import guards
    rng = np.random.default_rng(22)
    b = rng.uniform(-3, 3, (12, 12))
    a = ((b + b.T) / 2).astype(np.float32)
    for defer in (True, False):
        monkeypatch.setattr(jacobi, "DEFER", defer)
        x = xp.asarray(a, device=wgpu_device)
        xp.evaluate(x)
        xp.reset_metrics()
        w, v = xp.linalg.eigh(x)
        assert (xp.metrics()["bytes_downloaded"] == 0) == defer and bool(guards.PENDING) == defer
        wn = np.linalg.eigh(a)[0]
        np.testing.assert_allclose(np.asarray(w), wn, rtol=0, atol=1e-5 * np.abs(wn).max())
        assert not guards.PENDING
        bad = a.copy()
        bad[7, 7] = np.inf
        with np.errstate(invalid="ignore"):
            wb, vb = np.linalg.eigh(bad)
        xp.reset_metrics()
        w, v = xp.linalg.eigh(xp.asarray(bad, device=wgpu_device))
        prod = v @ v.T                                  # recorded before the check ran
        xp.evaluate(prod)                               # the check runs first: the product reads LAPACK's vectors
        assert xp.metrics()["host_fallbacks"] == 1
        np.testing.assert_array_equal(np.asarray(w), wb)
        np.testing.assert_array_equal(float(v[0, 0]), vb[0, 0])
        np.testing.assert_array_equal(np.asarray(v), vb)
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(np.asarray(prod), vb @ vb.T, rtol=1e-6, atol=1e-6)
        nan = a.copy()
        nan[7, 3] = np.nan
        with pytest.raises(np.linalg.LinAlgError, match="did not converge"):
            np.linalg.eigh(nan)
        if not defer:
            with pytest.raises(np.linalg.LinAlgError, match="did not converge"):
                xp.linalg.eigh(xp.asarray(nan, device=wgpu_device))
            continue
        w, v = xp.linalg.eigh(xp.asarray(nan, device=wgpu_device))
        with pytest.raises(np.linalg.LinAlgError, match="did not converge.*linalg.eigh"):
            float(xp.sum(x))
        assert float(xp.sum(x)) == pytest.approx(float(a.sum()), rel=1e-4, abs=1e-4)    # raised once
        assert np.isnan(np.asarray(w)).all() and np.isnan(np.asarray(v)).all()


def test_deferred_checks_run_once_and_other_threads_wait() -> None:
    """``runtime/guards.py``: a check runs once, its own reads do not run it again, and a thread that reads while
    another runs the check waits for it (the check stays pending until it has finished)."""
    import threading
    import time

    from gpuarray.runtime import guards
    runs, seen = [], []
    started = threading.Event()

    def check() -> None:
        runs.append(1)
        guards.resolve()                    # the check's own read: not run again
        started.set()
        time.sleep(0.2)
        runs.append(2)

    guards.defer(check)
    first = threading.Thread(target=guards.resolve)
    first.start()
    started.wait(5)
    assert guards.PENDING                   # still pending while it runs
    if guards.PENDING:
        guards.resolve()                    # waits for the other thread's check
    seen.append(list(runs))
    first.join()
    assert seen == [[1, 2]] and runs == [1, 2] and not guards.PENDING
