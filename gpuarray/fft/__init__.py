"""The Array API ``fft`` extension (2024.12).

Every transform is built from one kernel kind, ``fft``: a one-dimensional
complex transform along one axis (forward or inverse, with its
normalization). The others are compositions recorded lazily around it:

- ``fftn``/``ifftn``: one ``fft`` node per axis;
- ``rfft``: the complex transform of the real input, of which the first
  ``n // 2 + 1`` terms are kept (a view); ``rfftn``: ``rfft`` on the last axis,
  then ``fft`` on the others;
- ``irfft``: the Hermitian spectrum is completed (``concat`` of the half
  spectrum and the conjugated, reversed interior: index arithmetic fused into
  the transform's prologue), transformed back, and its real part taken; so
  the imaginary parts of the zero (and, for even ``n``, the Nyquist) terms are
  ignored, as NumPy does; ``irfftn`` likewise;
- ``hfft(x) = irfft(conj(x))`` and ``ihfft(x) = conj(rfft(x))`` with the
  normalization swapped, as NumPy defines them.

Where it runs: on the host (the in-process provider) with ``numpy.fft``, keeping the
precision (complex64 in, complex64 out); on wgpu, lengths whose prime factors are all at most 13
are a mixed-radix Stockham WGSL kernel running several stages per dispatch, loading and storing
from registers with one exchange through workgroup memory per two stages (with 48 KiB of workgroup
memory, as NVIDIA's Vulkan drivers have, one dispatch up to 4096 complex64 points, two for 2^20 or
10^6, three for 2^22: ``render/wgsl_fft_reg.py``; ``GPUARRAY_FFT_REG=0``: ``render/wgsl_fft_mixed.py``),
and other lengths Bluestein's algorithm over two of them (``fft_chirp.py``).

Dtypes: ``fft``/``ifft``/``fftn``/``ifftn``/``irfft``/``irfftn``/``hfft``
take complex input (real floating-point input is converted to the complex
dtype of its precision); ``rfft``/``rfftn``/``ihfft`` take real floating-point
input. Results are complex64/complex128 (float32/float64 for ``irfft``,
``irfftn``, ``hfft``) of the input's precision. Integer and boolean inputs
raise ``TypeError``.

``fftfreq``/``rfftfreq`` are an index ramp and one elementwise kernel;
``fftshift``/``ifftshift`` are rolls, which are views.

>>> import gpuarray as xp
>>> xp.fft.fftfreq(4, device="cpu").tolist()
[0.0, 0.25, -0.5, -0.25]
>>> xp.fft.fft(xp.asarray([1.0, 2.0, 3.0, 4.0], device="cpu")).tolist()
[(10+0j), (-2+2j), (-2+0j), (-2-2j)]
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..array_object.array import GpuArray, expect_array
from ..array_object.elementwise import _host_of, apply, astype_node, finish
from ..core import dtypes as _dtypes
from ..core.ops import OPS
from ..graph.node import make
from ..graph.shapes import normalize_axis
from ..namespace.creation import zeros
from ..namespace.linear_algebra import roll_node
from ..namespace.manipulation import concat, flip
from ..providers.wgpu_fft import fft_scale
from ..runtime import eager as _eager
from ..runtime.devices import as_device
from . import chirp as fft_chirp

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _arr(x: Any, name: str, norm: str) -> GpuArray:
    expect_array(x, f"fft.{name}")
    if norm not in _NORMS:
        raise ValueError(f"fft.{name}: norm must be one of {_NORMS}; got {norm!r}")
    if x.ndim == 0:
        raise ValueError(f"fft.{name}: x must have at least one dimension")
    return x


def _as_complex(x: GpuArray, name: str) -> GpuArray:
    """``x`` in a complex dtype: complex stays, real floating-point goes to the complex of its precision."""
    if x.dtype.kind == "c":
        return x
    if x.dtype.kind != "f":
        raise TypeError(f"Only floating-point dtypes are allowed in fft.{name}; got {x.dtype}.")
    return GpuArray(astype_node(x._node, _dtypes.complex_dtype(x.dtype)))


def _real_input(x: GpuArray, name: str) -> GpuArray:
    if x.dtype.kind != "f":
        raise TypeError(f"Only real floating-point dtypes are allowed in fft.{name}; got {x.dtype}.")
    return x


def _length(n: Any, default: int, name: str) -> int:
    if n is None or (not isinstance(n, bool) and isinstance(n, int) and n == -1):
        return default
    return _positive(n, name, "invalid number of data points ({n}) specified")


def _resize(x: GpuArray, axis: int, n: int) -> GpuArray:
    """``x`` cut to, or padded with zeros to, length ``n`` along ``axis``."""
    m = x.shape[axis]
    if n == m:
        return x
    if n < m:
        return x[(slice(None),) * axis + (slice(0, n),)]
    pad = zeros(x.shape[:axis] + (n - m,) + x.shape[axis + 1:], dtype=x.dtype, device=x.device)
    return concat([x, pad], axis=axis)


def _eager_c2c(x: GpuArray, n: int, axis: int, norm: str, inverse: bool, half: bool = False) -> GpuArray | None:
    """The transform computed at once with ``numpy.fft`` where ``x`` is small and evaluated on the host
    only (``runtime/eager.py``'s rule for elementwise operations: a Python loop over segments, as
    SciPy's ``welch``, then pays no planned evaluation per segment), else None. ``half``: ``rfft`` of
    real ``x`` (its ``n // 2 + 1`` terms); results in the complex dtype of ``x``'s precision."""
    node = x._node
    shape = node.shape[:axis] + ((n // 2 + 1) if half else n,) + node.shape[axis + 1:]
    if not _eager.allowed((node,), node.device, node.shape) or not _eager.allowed((node,), node.device, shape):
        return None
    dt = node.dtype if node.dtype.kind == "c" else _dtypes.complex_dtype(node.dtype)
    fn: Any = np.fft.rfft if half else np.fft.ifft if inverse else np.fft.fft
    r = fn(_host_of(node, node.dtype if half else dt), n=n, axis=axis, norm=norm)
    return _eager.leaf_array("fft", np.ascontiguousarray(r, dtype=dt), shape, node.device)


def _c2c(x: GpuArray, n: int, axis: int, norm: str, inverse: bool, name: str = "fft") -> GpuArray:
    """The complex transform of ``x`` (complex, or real floating-point: converted to the complex dtype of
    its precision) resized to ``n`` along ``axis``: computed at once for small host data
    (``_eager_c2c``), else one ``fft`` node, or on a GPU for a length with a prime factor above 13,
    Bluestein's algorithm over two (``fft_chirp``)."""
    now = _eager_c2c(x, n, axis, norm, inverse)
    if now is not None:
        return now
    x = _resize(_as_complex(x, name), axis, n)
    if fft_chirp.wanted(n, x.device, x.dtype):
        return fft_chirp.transform(x, axis, inverse, fft_scale(n, inverse, norm))
    return finish(make("fft", (x._node,), x.dtype, x.shape, (axis, bool(inverse), norm), x.device))



def _axis(axis: Any, x: GpuArray) -> int:
    return normalize_axis(operator.index(axis), x.ndim)


def _plan(name: str, x: GpuArray, s: Any, axes: Any) -> list[tuple[int, int | None]]:
    """(axis, length or None) pairs for an n-dimensional transform."""
    if axes is None:
        ax = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    else:
        ax = [normalize_axis(operator.index(a), x.ndim) for a in axes]
    if s is None:
        sizes: list[Any] = [None] * len(ax)
    else:
        sizes = list(s)
        if len(sizes) != len(ax):
            raise ValueError(f"fft.{name}: s and axes must have the same length")
        for v in sizes:
            if isinstance(v, bool) or operator.index(v) < 1 and operator.index(v) != -1:
                raise ValueError(f"fft.{name}: invalid number of data points ({tuple(sizes)}) specified")
    if len(set(ax)) != len(ax):
        raise ValueError(f"fft.{name}: axes must not repeat; got {tuple(ax)}")
    return list(zip(ax, sizes, strict=True))


def _irfft_axis(x: GpuArray, n: Any, axis: int, norm: str, name: str) -> GpuArray:
    """Real inverse transform of a half spectrum along ``axis`` (the output has ``n`` points)."""
    m = x.shape[axis]
    n = _length(n, 2 * (m - 1), name)
    if n < 1:
        raise ValueError(f"fft.{name}: invalid number of data points ({n}) specified")
    half = n // 2 + 1
    h = _resize(x, axis, half)
    tail = n - half
    if tail:
        sl = (slice(None),) * axis + (slice(1, tail + 1),)
        mirrored = apply(OPS["conj"], flip(h[sl], axis=axis))
        h = concat([h, mirrored], axis=axis)
    return apply(OPS["real"], _c2c(h, n, axis, norm, inverse=True))


def fft(x: GpuArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> GpuArray:
    """One-dimensional discrete Fourier transform along ``axis`` (``x`` cut or zero-padded to ``n``).

    >>> import gpuarray as xp
    >>> xp.fft.fft(xp.asarray([1j, 0j], device="cpu")).tolist()
    [1j, 1j]
    """
    return _c2c_of(x, n, axis, norm, "fft", inverse=False)


def ifft(x: GpuArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> GpuArray:
    """Inverse of ``fft``."""
    return _c2c_of(x, n, axis, norm, "ifft", inverse=True)


def _c2c_of(x: Any, n: int | None, axis: int, norm: str, name: str, inverse: bool) -> GpuArray:
    """``fft``/``ifft`` of a complex or real floating-point ``x``."""
    x = _arr(x, name, norm)
    if x.dtype.kind not in "fc":
        _as_complex(x, name)            # raises TypeError, naming the dtype
    ax = _axis(axis, x)
    return _c2c(x, _length(n, x.shape[ax], name), ax, norm, inverse, name)


def _nd(name: str, x: GpuArray, s: Any, axes: Any, norm: str, inverse: bool) -> GpuArray:
    x = _as_complex(_arr(x, name, norm), name)
    for ax, size in reversed(_plan(name, x, s, axes)):
        x = _c2c(x, _length(size, x.shape[ax], name), ax, norm, inverse)
    return x


def fftn(x: GpuArray, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str = "backward") -> GpuArray:
    """N-dimensional discrete Fourier transform over ``axes`` (all axes by default), one axis at a time."""
    return _nd("fftn", x, s, axes, norm, inverse=False)


def ifftn(x: GpuArray, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> GpuArray:
    """Inverse of ``fftn``."""
    return _nd("ifftn", x, s, axes, norm, inverse=True)


def rfft(x: GpuArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> GpuArray:
    """Transform of real input: the ``n // 2 + 1`` non-negative frequency terms.

    >>> import gpuarray as xp
    >>> xp.fft.rfft(xp.asarray([1.0, 1.0, 1.0, 1.0], device="cpu")).tolist()
    [(4+0j), 0j, 0j]
    """
    x = _real_input(_arr(x, "rfft", norm), "rfft")
    ax = _axis(axis, x)
    size = _length(n, x.shape[ax], "rfft")
    now = _eager_c2c(x, size, ax, norm, inverse=False, half=True)
    if now is not None:
        return now
    full = _c2c(x, size, ax, norm, inverse=False, name="rfft")
    return full[(slice(None),) * ax + (slice(0, size // 2 + 1),)]


def irfft(x: GpuArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> GpuArray:
    """Inverse of ``rfft``: ``n`` real points (default ``2 * (m - 1)`` for ``m`` input terms)."""
    x = _as_complex(_arr(x, "irfft", norm), "irfft")
    return _irfft_axis(x, n, _axis(axis, x), norm, "irfft")


def rfftn(x: GpuArray, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> GpuArray:
    """N-dimensional transform of real input (``rfft`` over the last of ``axes``, ``fft`` over the others)."""
    x = _real_input(_arr(x, "rfftn", norm), "rfftn")
    plan = _plan("rfftn", x, s, axes)
    if not plan:
        return _as_complex(x, "rfftn")
    last, size = plan[-1]
    y = rfft(x, n=size if size is not None else None, axis=last, norm=norm)
    for ax, sz in reversed(plan[:-1]):
        y = _c2c(y, _length(sz, y.shape[ax], "rfftn"), ax, norm, inverse=False)
    return y


def irfftn(x: GpuArray, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str = "backward") -> GpuArray:
    """Inverse of ``rfftn``: ``ifft`` over all but the last of ``axes``, then ``irfft`` over that one."""
    x = _as_complex(_arr(x, "irfftn", norm), "irfftn")
    plan = _plan("irfftn", x, s, axes)
    if not plan:
        return apply(OPS["real"], x)
    for ax, sz in reversed(plan[:-1]):
        x = _c2c(x, _length(sz, x.shape[ax], "irfftn"), ax, norm, inverse=True)
    last, size = plan[-1]
    return _irfft_axis(x, size, last, norm, "irfftn")


def hfft(x: GpuArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> GpuArray:
    """Transform of a signal with Hermitian symmetry (given by its first half): real output of
    ``n`` points, ``irfft(conj(x))`` with the normalization swapped."""
    x = _as_complex(_arr(x, "hfft", norm), "hfft")
    return _irfft_axis(apply(OPS["conj"], x), n, _axis(axis, x), _SWAP[norm], "hfft")


def ihfft(x: GpuArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> GpuArray:
    """Inverse of ``hfft``: ``conj(rfft(x))`` with the normalization swapped."""
    x = _real_input(_arr(x, "ihfft", norm), "ihfft")
    return apply(OPS["conj"], rfft(x, n=n, axis=axis, norm=_SWAP[norm]))


def _freq_dtype(dtype: Any, device: Any) -> tuple[Any, Any]:
    dev = as_device(device)
    if dtype is None:
        return dev.default_float, dev
    dt = _dtypes.as_dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"dtype must be a real floating-point dtype; got {dt}")
    dev.check_dtype(dt)
    return dt, dev


def _positive(n: Any, name: str, problem: str = "n must be a positive integer; got {n}") -> int:
    """``n`` as an int >= 1; TypeError for bools and non-integers, ValueError (``problem``) below 1."""
    if isinstance(n, bool):
        raise TypeError(f"fft.{name}: n must be an integer; got bool")
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"fft.{name}: " + problem.format(n=n))
    return n


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> GpuArray:
    """Sample frequencies of an ``n``-point transform: ``[0, 1, ..., -(n // 2), ..., -1] / (d * n)``.

    Computed on ``device`` in its default float (float64 where the device has it), then cast
    to ``dtype``; with float64 the values equal NumPy's exactly.
    """
    n = _positive(n, "fftfreq")
    dt, dev = _freq_dtype(dtype, device)
    it = dev.default_int
    i = GpuArray(make("iota", (), it, (n,), (), dev))
    half = (n - 1) // 2 + 1
    k = apply(OPS["where"], apply(OPS["less"], i, half), i, apply(OPS["subtract"], i, n))
    f = apply(OPS["multiply"], GpuArray(astype_node(k._node, dev.default_float)), 1.0 / (n * d))
    return finish(astype_node(f._node, dt))


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> GpuArray:
    """Sample frequencies of ``rfft``: ``[0, 1, ..., n // 2] / (d * n)``."""
    n = _positive(n, "rfftfreq")
    dt, dev = _freq_dtype(dtype, device)
    i = GpuArray(make("iota", (), dev.default_float, (n // 2 + 1,), (), dev))
    f = apply(OPS["multiply"], i, 1.0 / (n * d))
    return finish(astype_node(f._node, dt))


def _shift(x: Any, axes: int | Sequence[int] | None, sign: int, name: str) -> GpuArray:
    expect_array(x, f"fft.{name}")
    if axes is None:
        ax: list[int] = list(range(x.ndim))
    elif isinstance(axes, int):
        ax = [normalize_axis(axes, x.ndim)]
    else:
        ax = [normalize_axis(operator.index(a), x.ndim) for a in axes]
    node = x._node
    for a in ax:
        node = roll_node(node, sign * (x.shape[a] // 2), a)
    return GpuArray(node)


def fftshift(x: GpuArray, /, *, axes: int | Sequence[int] | None = None) -> GpuArray:
    """Move the zero-frequency term to the centre (a roll by ``n // 2`` along each axis; a view).

    >>> import gpuarray as xp
    >>> xp.fft.fftshift(xp.fft.fftfreq(5, device="cpu")).tolist()
    [-0.4, -0.2, 0.0, 0.2, 0.4]
    """
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x: GpuArray, /, *, axes: int | Sequence[int] | None = None) -> GpuArray:
    """Inverse of ``fftshift`` (a roll by ``-(n // 2)`` along each axis; a view)."""
    return _shift(x, axes, -1, "ifftshift")


__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
