"""The fft extension: frequencies and shifts against NumPy on both providers; transforms say why not."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp

from .conftest import assert_same


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 101])
@pytest.mark.parametrize("d", [1.0, 0.1, 3])
def test_fftfreq_rfftfreq(device, n, d):
    assert_same(xp.fft.fftfreq(n, d=d, device=device), np.fft.fftfreq(n, d=d))
    assert_same(xp.fft.rfftfreq(n, d=d, device=device), np.fft.rfftfreq(n, d=d))
    assert_same(xp.fft.fftfreq(n, d=d, dtype=xp.float32, device=device), np.fft.fftfreq(n, d=d).astype(np.float32))
    assert_same(xp.fft.rfftfreq(n, d=d, dtype=xp.float32, device=device),
                np.fft.rfftfreq(n, d=d).astype(np.float32))
    assert xp.fft.fftfreq(n, device=device).device == device


def test_freq_errors(device):
    with pytest.raises(ValueError):
        xp.fft.fftfreq(0, device=device)
    with pytest.raises(TypeError):
        xp.fft.fftfreq(4.0, device=device)
    with pytest.raises(TypeError):
        xp.fft.rfftfreq(4, dtype=xp.int32, device=device)


@pytest.mark.parametrize("shape", [(1,), (5,), (8,), (3, 4), (5, 7), (2, 3, 5), (0, 3)], ids=str)
def test_shifts(device, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    g = xp.asarray(a, device=device)
    assert_same(xp.fft.fftshift(g), np.fft.fftshift(a))
    assert_same(xp.fft.ifftshift(g), np.fft.ifftshift(a))
    for axes in range(-len(shape), len(shape)):
        assert_same(xp.fft.fftshift(g, axes=axes), np.fft.fftshift(a, axes=axes))
        assert_same(xp.fft.ifftshift(g, axes=(axes,)), np.fft.ifftshift(a, axes=(axes,)))
    assert_same(xp.fft.ifftshift(xp.fft.fftshift(g)), a)


def test_shift_of_expression_and_views(device):
    a = np.arange(30, dtype=np.int32).reshape(5, 6)
    g = xp.asarray(a, device=device)
    assert_same(xp.fft.fftshift(g[::-1, 1:] * 2, axes=(0, 1)), np.fft.fftshift(a[::-1, 1:] * 2, axes=(0, 1)))
    assert_same(xp.fft.fftshift(g, axes=1)[1:, ::2], np.fft.fftshift(a, axes=1)[1:, ::2])
    assert_same(xp.sum(xp.fft.ifftshift(g, axes=0), axis=0), np.sum(np.fft.ifftshift(a, axes=0), axis=0))


def test_shift_is_lazy_and_one_kernel(wgpu_device):
    f = xp.fft.fftshift(xp.fft.fftfreq(9, device=wgpu_device) * 2)
    xp.reset_metrics()
    xp.evaluate(f)
    assert xp.metrics()["dispatches"] == 1
    assert_same(f, np.fft.fftshift(np.fft.fftfreq(9) * 2))


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_transforms_need_complex(device, name):
    g = xp.asarray(np.ones(8), device=device)
    with pytest.raises(TypeError, match="complex dtypes are not supported yet"):
        getattr(xp.fft, name)(g)
    with pytest.raises(ValueError, match="norm"):
        getattr(xp.fft, name)(g, norm="bogus")
    with pytest.raises(ValueError):
        getattr(xp.fft, name)(g, n=0)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_nd_transforms_need_complex(device, name):
    g = xp.asarray(np.ones((4, 4)), device=device)
    with pytest.raises(TypeError, match="complex dtypes are not supported yet"):
        getattr(xp.fft, name)(g, axes=(0, 1))
    with pytest.raises(ValueError):
        getattr(xp.fft, name)(g, s=(4,), axes=(0, 1))


def test_fft_namespace():
    assert set(xp.fft.__all__) == {"fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn",
                                   "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"}
    assert xp.fft is xp.asarray(1.0, device="cpu").__array_namespace__().fft
