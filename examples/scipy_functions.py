"""SciPy on GpuArrays (SCIPY_ARRAY_API=1): special functions, statistics, FFT-based convolution
and whitening, each returning GpuArrays on the input's device.

    python examples/scipy_functions.py [--device wgpu:0]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")    # before SciPy is imported

import numpy as np  # noqa: E402
import scipy.fft  # noqa: E402
import scipy.signal  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402
from scipy.cluster.vq import whiten  # noqa: E402

import gpuarray as xp  # noqa: E402


def main(device: str | None = None) -> dict[str, float]:
    dev = xp.Device(device) if device else xp.default_device()
    rng = np.random.default_rng(0)
    host = rng.standard_normal((64, 256)).astype(np.float32)
    x = xp.asarray(host, device=dev)

    out = {
        "logsumexp": scipy.special.logsumexp(x, axis=1),       # on the device (gpuarray functions)
        "softmax": scipy.special.softmax(x, axis=1),
        "erf": scipy.special.erf(x),                           # gpuarray.special.erf: on `dev`, one kernel
        "gammaln": scipy.special.gammaln(abs(x) + 1),
        "zscore": scipy.stats.zscore(x, axis=1),
        "skew": scipy.stats.skew(x, axis=1),
        "moment": scipy.stats.moment(x, order=3, axis=0),
        "rfft": scipy.fft.rfft(x, axis=1),                     # complex64, through gpuarray.fft
        "fftconvolve": scipy.signal.fftconvolve(x, x[:4, :16], mode="same"),
        "whiten": whiten(x),
    }
    for name, value in out.items():
        assert isinstance(value, xp.GpuArray) and value.device == dev, (name, type(value))

    want = {
        "logsumexp": scipy.special.logsumexp(host, axis=1),
        "zscore": scipy.stats.zscore(host, axis=1),
        "fftconvolve": scipy.signal.fftconvolve(host, host[:4, :16], mode="same"),
    }
    errors = {k: float(np.max(np.abs(np.asarray(out[k]) - v))) for k, v in want.items()}
    assert all(e < 1e-3 for e in errors.values()), errors
    return errors


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cpu or wgpu:N (default: gpuarray's default device)")
    for k, v in main(parser.parse_args().device).items():
        print(f"max |gpuarray - numpy| for {k}: {v:.2e}")
