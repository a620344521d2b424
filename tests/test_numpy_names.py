"""NumPy's ``einsum``, ``transpose``, ``quantile`` and ``nanquantile`` on the namespace (xarray calls
them as ``xp.<name>``): NumPy's results and errors, on the operands' device, with no host fallback."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp

from .conftest import assert_same

RNG = np.random.default_rng(11)


def _g(v: Any, device: xp.Device) -> xp.GpuArray:
    return xp.asarray(np.asarray(v), device=device)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("subs,shapes", [
    ("ij,jk->ik", [(5, 7), (7, 3)]),
    ("ij,kj->ik", [(4, 6), (5, 6)]),       # xr.dot's form: contraction over a shared last dimension
    ("ij,ij->", [(6, 3), (6, 3)]),         # everything summed: a 0-d result
    ("ii->i", [(5, 5)]),                    # a diagonal
    ("ii", [(4, 4)]),                       # a trace
    ("i,j->ij", [(3,), (4,)]),              # an outer product
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bj->bi", [(3, 70000, 2), (3, 2)]),    # a long dimension (past 65535)
])
def test_einsum(subs: str, shapes: list[tuple[int, ...]], dtype: Any, device: xp.Device) -> None:
    ops = [(RNG.uniform(-3, 3, s) * (4 if dtype == np.int64 else 1)).astype(dtype) for s in shapes]
    xp.reset_metrics()
    got = xp.einsum(subs, *[_g(o, device) for o in ops])
    assert isinstance(got, xp.GpuArray) and got.device == device
    want = np.einsum(subs, *ops)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert_same(got, np.asarray(want), rtol=tol if dtype != np.int64 else 0, atol=tol * 10 if dtype != np.int64 else 0)
    assert xp.metrics()["host_fallbacks"] == 0


def test_einsum_array_likes_join_the_device(device: xp.Device) -> None:
    a = RNG.standard_normal((3, 4))
    got = xp.einsum("ij,j->i", _g(a, device), [1.0, 2.0, 3.0, 4.0])
    assert got.device == device
    assert_same(got, a @ np.array([1.0, 2.0, 3.0, 4.0]), rtol=1e-12)


def test_einsum_errors(device: xp.Device) -> None:
    a = _g(np.ones((2, 3)), device)
    with pytest.raises(TypeError, match="subscripts as a str"):
        xp.einsum(a, [0, 1])            # NumPy's sublist form is not taken
    with pytest.raises(TypeError, match="at least one operand"):
        xp.einsum("ij->ji")
    with pytest.raises(ValueError):     # NumPy's own error: the shapes do not match the subscripts
        xp.einsum("ij,jk->ik", a, a)


@pytest.mark.parametrize("shape,axes", [((2, 3, 4), None), ((2, 3, 4), (1, 2, 0)), ((2, 3, 4), (-1, 0, 1)),
                                        ((5,), None), ((), None), ((0, 3), None), ((70000, 2), None)])
def test_transpose(shape: tuple[int, ...], axes: Any, device: xp.Device) -> None:
    h = RNG.standard_normal(shape)
    got = xp.transpose(_g(h, device), axes)
    assert_same(got, np.transpose(h, axes))


def test_transpose_errors(device: xp.Device) -> None:
    a = _g(np.ones((2, 3)), device)
    with pytest.raises(ValueError):
        xp.transpose(a, (0, 0))
    with pytest.raises((ValueError, IndexError)):
        xp.transpose(a, (0, 2))


@pytest.mark.parametrize("method", ["linear", "nearest", "lower", "higher", "midpoint", "median_unbiased"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ((0, 1), False)])
def test_quantile(method: str, axis: Any, keepdims: bool, device: xp.Device) -> None:
    h = RNG.uniform(-30, 30, (9, 13))
    h[2, 3] = -0.0
    q = np.array([0.0, 0.1, 0.5, 0.93, 1.0])
    got = xp.quantile(_g(h, device), q, axis=axis, method=method, keepdims=keepdims)
    assert_same(got, np.quantile(h, q, axis=axis, method=method, keepdims=keepdims), rtol=1e-12,
                check_signed_zero=False)
    one = xp.quantile(_g(h, device), 0.25, axis=axis, method=method, keepdims=keepdims)
    assert_same(one, np.asarray(np.quantile(h, 0.25, axis=axis, method=method, keepdims=keepdims)), rtol=1e-12,
                check_signed_zero=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_quantile_dtypes_and_nan(dtype: Any, device: xp.Device) -> None:
    h = RNG.uniform(-3, 3, (6, 40)).astype(dtype) if dtype != np.int32 else RNG.integers(-9, 9, (6, 40), dtype=dtype)
    q = [0.2, 0.8]
    assert_same(xp.quantile(_g(h, device), q, axis=1), np.quantile(h, q, axis=1), rtol=1e-6)
    if dtype != np.int32:
        h = h.copy()
        h[1, ::3] = np.nan
        h[4] = np.nan               # an all-NaN row: NaN and NumPy's warning
        with pytest.warns(RuntimeWarning):
            want = np.nanquantile(h, q, axis=1)
        got = xp.nanquantile(_g(h, device), q, axis=1)
        assert_same(got, want, rtol=1e-6)
        assert_same(xp.quantile(_g(h, device), q, axis=1), np.quantile(h, q, axis=1), rtol=1e-6)


def test_quantile_errors(device: xp.Device) -> None:
    a = _g(np.ones((2, 3)), device)
    with pytest.raises(ValueError):
        xp.quantile(a, 1.5)         # NumPy: Quantiles must be in the range [0, 1]
    with pytest.raises(ValueError):
        xp.quantile(a, 0.5, method="no-such-method")


def test_einsum_arrays_on_two_devices(wgpu_device: xp.Device) -> None:
    a, b = xp.asarray([1.0, 2.0], device="cpu"), xp.asarray([3.0, 4.0], device=wgpu_device)
    with pytest.raises(ValueError, match="different devices"):
        xp.einsum("i,i->", a, b)
