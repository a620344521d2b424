"""Transforms of any length on a GPU: Bluestein's chirp-z algorithm over power-of-two transforms.

The ``fft`` kernel kind of the wgpu provider is a radix-2 Stockham transform of power-of-two lengths.
A length ``n`` that is not a power of two is rewritten, on a GPU device, as a convolution computed
with two transforms of a power-of-two length ``m >= 2n - 1`` (Bluestein 1970): with the chirp
``c_j = exp(-+pi i j^2 / n)`` (the sign of the transform),

    X_k = c_k * sum_j (x_j c_j) conj(c_{k - j}),

so ``X = c * ifft_m(fft_m(pad_m(x * c)) * B)[:n]``, where ``B = fft_m(b)`` is the transform of
``b_j = conj(c_|j|)`` laid out circularly. Every step is an ordinary graph node: the chirp product
and the zero padding fuse into the first transform's prologue, the product with ``B`` into the
second's, the final chirp and the normalization into one elementwise kernel. ``c`` (with the
normalization folded in) and ``B`` are computed on the host in float64, from ``j^2 mod 2n`` so that
the angles are exact, and kept on the device for the next transform of the same length
(``TABLES`` most recent ones).

Accuracy: the error is that of two power-of-two transforms of length ``m`` (relative to the largest
magnitude, a few ``eps * log2(m)``; ``tests/test_fft.py``). The host (``numpy.fft``) computes other
lengths directly, so this is used only where the device is a GPU.

>>> import numpy as np, gpuarray as xp
>>> x = xp.asarray(np.arange(6.0) + 0j, device="wgpu:0")
>>> np.allclose(np.asarray(xp.fft.fft(x)), np.fft.fft(np.arange(6.0)))
True
"""

from __future__ import annotations

import collections
import math
from typing import Any

import numpy as np

from ._array import GpuArray
from ._devices import Device
from .namespace.creation import asarray, zeros
from .namespace.manipulation import concat

TABLES = 16         # (n, direction, scale, dtype, device) tables kept on their devices
_tables: collections.OrderedDict[tuple, tuple[GpuArray, GpuArray, GpuArray, int]] = collections.OrderedDict()


def wanted(n: int, device: Device) -> bool:
    """Whether a transform of length ``n`` on ``device`` goes through Bluestein's algorithm: ``n``
    is not a power of two and the device is a GPU (the host's numpy.fft takes every length)."""
    return n > 1 and n & (n - 1) != 0 and not device.provider.host_memory


def _tables_for(n: int, inverse: bool, scale: float, dtype: np.dtype,
                device: Device) -> tuple[GpuArray, GpuArray, GpuArray, int]:
    """(the chirp and the chirp times ``scale``, length ``n``; ``B``, length ``m``; ``m``) on ``device``."""
    key = (n, inverse, scale, dtype.str, device.name)
    hit = _tables.get(key)
    if hit is not None:
        _tables.move_to_end(key)
        return hit
    m = 1 << (2 * n - 2).bit_length()            # the smallest power of two >= 2n - 1
    j = np.arange(n, dtype=np.int64)
    ang = np.pi * ((j * j) % (2 * n)).astype(np.float64) / n      # pi j^2 / n, reduced exactly
    sign = 1.0 if inverse else -1.0
    c = np.cos(ang) + 1j * sign * np.sin(ang)
    b = np.zeros(m, dtype=np.complex128)
    b[:n] = np.conj(c)
    b[m - n + 1:] = np.conj(c[1:])[::-1]
    big_b = np.fft.fft(b)
    out = (asarray(c.astype(dtype), device=device), asarray((c * scale).astype(dtype), device=device),
           asarray(big_b.astype(dtype), device=device), m)
    _tables[key] = out
    if len(_tables) > TABLES:
        _tables.popitem(last=False)
    return out


def transform(x: GpuArray, axis: int, inverse: bool, scale: float, c2c: Any) -> GpuArray:
    """The transform of ``x`` (complex, length ``n`` along ``axis``) by Bluestein's algorithm;
    ``c2c(y, m, axis, norm, inverse)`` makes the power-of-two transforms."""
    n = x.shape[axis]
    chirp, post, big_b, m = _tables_for(n, inverse, scale, x.dtype, x.device)
    bshape = (1,) * axis + (n,) + (1,) * (x.ndim - axis - 1)
    mshape = (1,) * axis + (m,) + (1,) * (x.ndim - axis - 1)
    a = x * chirp.reshape(bshape)
    pad = zeros(x.shape[:axis] + (m - n,) + x.shape[axis + 1:], dtype=x.dtype, device=x.device)
    a = concat([a, pad], axis=axis)
    conv = c2c(c2c(a, m, axis, "backward", False) * big_b.reshape(mshape), m, axis, "backward", True)
    head = conv[(slice(None),) * axis + (slice(0, n),)]
    return head * post.reshape(bshape)


def table_bytes() -> int:
    """Bytes of the tables kept (``TABLES`` most recent)."""
    return sum(math.prod(t.shape) * t.dtype.itemsize for *ts, _m in _tables.values() for t in ts)
