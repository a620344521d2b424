"""Complex products (``namespace/linear_algebra._complex_product``): on wgpu one real product
``[Ar, Ai] @ [[Br, Bi], [-Bi, Br]]`` and a ``setpart`` join, never the host; on the cpu device NumPy's
complex matmul. Every case against NumPy on both devices: shapes that no tile divides, K = 1, vectors,
broadcasting batches, views and prologues, empty operands, mixed dtypes, more than 65535 rows, and
special values (against NumPy's elementwise definition, ``sum(a * b)``)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import pytest

import gpuarray as xp

from .conftest import assert_same

CDT = ["complex64", "complex128"]


def _c(shape: tuple[int, ...], seed: int, dt: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.uniform(-3, 3, shape) + 1j * rng.uniform(-3, 3, shape)).astype(dt)


def _close(got: Any, a: np.ndarray, b: np.ndarray) -> None:
    """``got`` against ``a @ b``: NumPy's dtype and shape, each element within ``8 K eps`` of
    ``|a| @ |b|`` (four real products a term, summed in another order than NumPy's)."""
    g = np.asarray(got)
    want = a @ b
    assert g.dtype == want.dtype and g.shape == want.shape
    eps = np.finfo(want.dtype).eps
    k = max(np.shape(a)[-1], 1)
    bound = 8 * k * eps * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)) + 1e-30
    assert np.all(np.abs(g.astype(np.complex128) - want) <= bound)


def _no_host(device: xp.Device, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` evaluated; on wgpu (offload "always") with no host fallback."""
    xp.reset_metrics()
    with xp.config(offload="always"):
        out = fn(*args)
        host = np.asarray(out)
    if device.kind == "wgpu":
        assert xp.metrics()["host_fallbacks"] == 0
    return host


@pytest.mark.parametrize("dt", CDT)
@pytest.mark.parametrize(("sa", "sb"), [
    ((70, 33), (33, 45)), ((1, 5), (5, 1)), ((67, 1), (1, 65)), ((3, 4, 5), (5, 6)), ((2, 1, 7, 3), (4, 3, 2)),
    ((33,), (33, 8)), ((9, 33), (33,)), ((9,), (9,)), ((130, 68), (68, 72))])
def test_shapes(device: xp.Device, dt: str, sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a, b = _c(sa, 1, dt), _c(sb, 2, dt)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    _close(_no_host(device, lambda: ga @ gb), a, b)


@pytest.mark.parametrize("dt", CDT)
def test_views_and_prologues(device: xp.Device, dt: str) -> None:
    """Transposed and sliced operands, a conjugate and an elementwise prologue, a negative-step view."""
    a, b = _c((40, 70), 3, dt), _c((40, 50), 4, dt)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    _close(_no_host(device, lambda: ga.T @ gb), a.T, b)
    _close(_no_host(device, lambda: xp.conj(ga).T @ (gb * (2 - 1j))), np.conj(a).T, b * (2 - 1j))
    _close(_no_host(device, lambda: ga[::-2, 3:40].T @ gb[::-2, ::3]), a[::-2, 3:40].T, b[::-2, ::3])


@pytest.mark.parametrize("dt", CDT)
def test_empty_and_mixed_dtypes(device: xp.Device, dt: str) -> None:
    for sa, sb in [((0, 5), (5, 3)), ((4, 0), (0, 3)), ((4, 5), (5, 0))]:
        a, b = _c(sa, 5, dt), _c(sb, 6, dt)
        ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
        assert_same(_no_host(device, operator.matmul, ga, gb), a @ b)
    a = _c((20, 11), 7, dt)
    for other in (np.float32, np.float64, np.int32):
        b = np.random.default_rng(8).uniform(-3, 3, (11, 13)).astype(other)
        ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
        _close(_no_host(device, operator.matmul, ga, gb), a, b)
        _close(_no_host(device, operator.matmul, gb.T, ga.T), b.T, a.T)


@pytest.mark.parametrize("dt", CDT)
def test_large_product(device: xp.Device, dt: str) -> None:
    """M, K and N from ``COMPLEX_APART`` on: the real operands computed apart, then a plain real product."""
    a, b = _c((520, 513), 15, dt), _c((513, 530), 16, dt)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    _close(_no_host(device, operator.matmul, ga, gb), a, b)
    _close(_no_host(device, operator.matmul, ga.T, xp.conj(ga)), a.T, np.conj(a))


def test_many_rows(device: xp.Device) -> None:
    """More rows than a dispatch has workgroups along one dimension (65535)."""
    a, b = _c((70000, 3), 9, "complex64"), _c((3, 2), 10, "complex64")
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    _close(_no_host(device, lambda: ga @ gb), a, b)
    _close(_no_host(device, lambda: ga.T @ ga), a.T, a)


@pytest.mark.parametrize("dt", CDT)
def test_special_values(device: xp.Device, dt: str) -> None:
    """NaN, infinities and signed zeros as NumPy's elementwise definition ``sum(a[:, :, None] * b, 1)``
    gives them (NumPy's own ``@`` calls BLAS, whose kernels may give NaN for both parts of a product
    with an infinite part: ``[[inf, 1 + 1j]] @ [[1], [2 - 1j]]`` is ``inf + nan j`` here and by the
    definition, ``nan + nan j`` in OpenBLAS)."""
    inf, nan = np.inf, np.nan
    z = complex(-0.0, -0.0)
    a = np.array([[inf, 1 + 1j, 0], [complex(nan, 1), 1, 0], [z, z, z], [1 + 2j, 0, 1j], [complex(0, -0.0), 2, 3]], dt)
    b = np.array([[1, z], [2 - 1j, complex(inf, inf)], [3, z]], dt)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    got = _no_host(device, lambda: ga @ gb)
    with np.errstate(all="ignore"):
        want = np.sum(a[:, :, None] * b[None, :, :], axis=1)
    if device.kind == "cpu":        # NumPy's matmul itself (BLAS): the positions of NaN may differ
        with np.errstate(all="ignore"):
            assert_same(got, a @ b, check_signed_zero=False)
        return
    assert_same(got, want, rtol=1e-6, check_signed_zero=False)
    # K = 1: each element is one complex product, the definition's values (a sum that starts from +0, as
    # the real products' do, gives +0 where the product is -0)
    a1, b1 = a[:, :1], b[:1]
    ga1, gb1 = xp.asarray(a1, device=device), xp.asarray(b1, device=device)
    with np.errstate(all="ignore"):
        assert_same(_no_host(device, lambda: ga1 @ gb1), a1 * b1, check_signed_zero=False)


@pytest.mark.parametrize("dt", CDT)
def test_contractions(device: xp.Device, dt: str) -> None:
    """tensordot, einsum and vecdot of complex operands (lowered onto the product or a reduction)."""
    a, b = _c((6, 7, 8), 11, dt), _c((7, 8, 5), 12, dt)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    _close(_no_host(device, lambda: xp.tensordot(ga, gb, axes=2)), a.reshape(6, 56), b.reshape(56, 5))
    got = _no_host(device, lambda: np.einsum("ijk,jkl->il", ga, gb))
    _close(got, a.reshape(6, 56), b.reshape(56, 5))
    v, w = _c((4, 9), 13, dt), _c((4, 9), 14, dt)
    got = _no_host(device, lambda: xp.vecdot(xp.asarray(v, device=device), xp.asarray(w, device=device)))
    assert_same(got, np.sum(np.conj(v) * w, axis=-1), rtol=1e-5 if dt == "complex64" else 1e-12,
                check_signed_zero=False)
