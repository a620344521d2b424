"""Transforms of any length on a GPU: Bluestein's chirp-z algorithm over mixed-radix transforms.

The ``fft`` kernel kind of the wgpu provider takes lengths whose prime factors are all at most 13
(mixed-radix Stockham passes, ``render/wgsl_fft_mixed.py``). Any other length ``n`` is rewritten, on
a GPU device, as a convolution computed with two transforms of a length ``m >= 2n - 1``, the smallest
``2^a 3^b 5^c 7^d`` (a power of two where the mixed-radix kernel is off: ``GPUARRAY_FFT_MIXED=0``)
(Bluestein 1970): with the chirp ``c_j = exp(-+pi i j^2 / n)`` (the sign of the transform),

    X_k = c_k * sum_j (x_j c_j) conj(c_{k - j}),

so ``X = c * ifft_m(fft_m(pad_m(x * c)) * B)[:n]``, where ``B = fft_m(b)`` is the transform of
``b_j = conj(c_|j|)`` laid out circularly. Every step is an ordinary graph node: the chirp product
and the zero padding are computed by the first transform's first pass as it loads them
(``render/wgsl_fft_fused.py``), the product with ``B`` by the second's, the final chirp and the
normalization into one elementwise kernel. ``c`` (with the normalization folded in) and ``B`` are
computed on the host in float64, from ``j^2 mod 2n`` so that the angles are exact, and kept on the
device for the next transform of the same length (``TABLES`` most recent ones). So 10^6 + 3 (prime)
is two transforms of 2000376 = 2^3 3^6 7^3 points (three passes of 126-point groups each), plus the
final product.

Accuracy: the error is that of two transforms of length ``m`` (relative to the largest
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

import numpy as np

from ..array_object.array import GpuArray
from ..array_object.bounds import bounded
from ..array_object.elementwise import finish
from ..graph import views
from ..graph.node import Node, const, make
from ..graph.shapes import contiguous_strides
from ..namespace.creation import asarray
from ..providers.wgpu_fft import mixed_runs
from ..render.wgsl_fft_mixed import next_smooth
from ..runtime.devices import Device

TABLES = 16         # (n, direction, scale, dtype, device) tables kept on their devices
_tables: collections.OrderedDict[tuple, tuple[GpuArray, GpuArray, GpuArray, int]] = collections.OrderedDict()


def wanted(n: int, device: Device, dtype: np.dtype) -> bool:
    """Whether a transform of length ``n`` on ``device`` goes through Bluestein's algorithm: the
    device is a GPU (the host's numpy.fft takes every length) and ``n`` is neither a power of two nor
    a length of the mixed-radix kernel (prime factors at most 13: ``wgpu_fft.mixed_runs``)."""
    if n <= 1 or n & (n - 1) == 0 or device.provider.host_memory:
        return False
    return not mixed_runs(device.provider, dtype, n)


def inner_length(n: int, device: Device, dtype: np.dtype) -> int:
    """The length ``m >= 2n - 1`` of the two inner transforms: the smallest ``2^a 3^b 5^c 7^d`` where the
    mixed-radix kernel runs it (``wgpu_fft.mixed_runs``), else the smallest power of two."""
    m = next_smooth(2 * n - 1)
    if mixed_runs(device.provider, dtype, m):
        return m
    return 1 << (2 * n - 2).bit_length()


def _tables_for(n: int, inverse: bool, scale: float, dtype: np.dtype,
                device: Device) -> tuple[GpuArray, GpuArray, GpuArray, int]:
    """(the chirp and the chirp times ``scale``, length ``n``; ``B``, length ``m``; ``m``) on ``device``."""
    key = (n, inverse, scale, dtype.str, device.name)
    hit = _tables.get(key)
    if hit is not None:
        _tables.move_to_end(key)
        return hit
    m = inner_length(n, device, dtype)
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


def transform(x: GpuArray, axis: int, inverse: bool, scale: float) -> GpuArray:
    """The transform of ``x`` (complex, length ``n`` along ``axis``, ``axis`` >= 0) by Bluestein's
    algorithm, recorded as nodes directly (seven of them: the chirp product, the zero padding, the two
    ``fft`` nodes of length ``m``, the product with ``B``, the first ``n`` and the final product), no
    array-level call: a call's host time is that of a transform of length ``m``, not of the dozen
    array operations it replaces (10^6 + 3 points: 418 -> 149 us of recording on the development machine)."""
    n = x.shape[axis]
    dt, dev, node = x.dtype, x.device, x._node
    chirp, post, big_b, m = _tables_for(n, inverse, scale, dt, dev)
    shape = x.shape
    mshape = shape[:axis] + (m,) + shape[axis + 1:]
    a = make("multiply", (node, _along(chirp._node, axis, len(shape))), dt, shape, (), dev)
    pshape = shape[:axis] + (m - n,) + shape[axis + 1:]
    pad = views.strided_view(const(0, dt, dev), pshape, (0,) * len(pshape), 0)
    a = bounded(make("concat", (a, pad), dt, mshape, (axis,), dev))
    f = make("fft", (a,), dt, mshape, (axis, False, "backward"), dev)
    f = make("multiply", (f, _along(big_b._node, axis, len(shape))), dt, mshape, (), dev)
    conv = make("fft", (f,), dt, mshape, (axis, True, "backward"), dev)
    head = views.strided_view(conv, shape, contiguous_strides(mshape), 0)
    return finish(make("multiply", (head, _along(post._node, axis, len(shape))), dt, shape, (), dev))


def _along(table: Node, axis: int, ndim: int) -> Node:
    """A 1-D table broadcast along ``axis`` of an ``ndim``-dimensional operand: the table itself
    for the last axis (elementwise nodes broadcast trailing dimensions), else a view of shape
    ``(n, 1, ..., 1)`` behind ``axis`` leading dimensions of 1."""
    if axis == ndim - 1:
        return table
    shape = (1,) * axis + table.shape + (1,) * (ndim - axis - 1)
    strides = (0,) * axis + (1,) + (0,) * (ndim - axis - 1)
    return views.strided_view(table, shape, strides, 0)


def table_bytes() -> int:
    """Bytes of the tables kept (``TABLES`` most recent)."""
    return sum(math.prod(t.shape) * t.dtype.itemsize for *ts, _m in _tables.values() for t in ts)
