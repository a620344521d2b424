"""Every transform length from 1 to 64 and large primes, against NumPy on both devices (on wgpu the
lengths with a prime factor above 13 are Bluestein's algorithm, gpuarray/fft/chirp.py; the others
mixed-radix passes, render/wgsl_fft_mixed.py)."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp

TOL = {"complex64": 2e-6, "complex128": 1e-14}


def _rel(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got - want))) / max(float(np.max(np.abs(want))), 1e-30)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_lengths_1_to_64(device: xp.Device, dtype: str) -> None:
    rng = np.random.default_rng(1)
    for n in range(1, 65):
        x = (rng.standard_normal((2, n)) + 1j * rng.standard_normal((2, n))).astype(dtype)
        g = xp.asarray(x, device=device)
        for inverse, norm in ((False, "backward"), (True, "ortho"), (False, "forward")):
            got = np.asarray((xp.fft.ifft if inverse else xp.fft.fft)(g, norm=norm))
            want = (np.fft.ifft if inverse else np.fft.fft)(x, norm=norm)
            assert got.dtype == want.dtype
            assert _rel(got, want) <= TOL[dtype], (n, inverse, norm, _rel(got, want))


@pytest.mark.parametrize("n", [10007, 65537, 1_000_003])
def test_large_primes_and_real_transforms(device: xp.Device, n: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n)
    g = xp.asarray(x.astype(np.float32), device=device)
    xp.reset_metrics()
    spec = xp.fft.rfft(g)
    back = xp.fft.irfft(spec, n=n)
    xp.evaluate(spec, back)
    if device.kind == "wgpu":           # Bluestein on the device: no kernel falls back to the host
        assert xp.metrics()["host_fallbacks"] == 0
    want = np.fft.rfft(x.astype(np.float32))
    assert _rel(np.asarray(spec), want) <= 2e-6
    assert _rel(np.asarray(back), x.astype(np.float32)) <= 2e-6


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_bluestein_along_every_axis(device: xp.Device, dtype: str) -> None:
    """Lengths with a prime factor above 13 along the first, a middle and the last axis of a 3-D array
    (Bluestein's tables broadcast along that axis), forward and inverse, and fftn over two such axes;
    a non-contiguous (transposed) operand; the input is left as it was."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((17, 3, 19)) + 1j * rng.standard_normal((17, 3, 19))).astype(dtype)
    g = xp.asarray(x, device=device)
    for axis in (0, 1, 2, -1):
        for inverse, norm in ((False, "backward"), (True, "ortho")):
            got = np.asarray((xp.fft.ifft if inverse else xp.fft.fft)(g, axis=axis, norm=norm))
            want = (np.fft.ifft if inverse else np.fft.fft)(x, axis=axis, norm=norm)
            assert got.shape == want.shape and got.dtype == want.dtype
            assert _rel(got, want) <= TOL[dtype], (axis, inverse, _rel(got, want))
    got = np.asarray(xp.fft.fftn(g, axes=(0, 2)))
    assert _rel(got, np.fft.fftn(x, axes=(0, 2))) <= TOL[dtype]
    t = xp.permute_dims(g, (2, 1, 0))
    got = np.asarray(xp.fft.fft(t, axis=0, n=23))        # cut and padded to another prime, of a view
    assert _rel(got, np.fft.fft(x.transpose(2, 1, 0), axis=0, n=23)) <= TOL[dtype]
    np.testing.assert_array_equal(np.asarray(g), x)
