"""The Array API ``fft`` extension (2024.12): what works today and what does not.

Working, on the array's device:

- ``fftfreq``, ``rfftfreq``: an index ramp and one elementwise kernel;
- ``fftshift``, ``ifftshift``: rolls, which are views (no data is copied:
  the kernel that reads them computes the wrapped index).

Not yet: every transform. gpuarray has no complex dtypes, and each
transform either returns a complex array (``fft``, ``ifft``, ``fftn``,
``ifftn``, ``rfft``, ``rfftn``, ``ihfft``) or takes one (``irfft``,
``irfftn``, ``hfft``), so each raises ``TypeError`` after checking its
arguments. Until then, transform a host copy: ``numpy.fft.fft(np.asarray(x))``.

What adding them takes: complex64/complex128 in ``_dtypes`` and the op table
(storage as interleaved ``vec2<f32>``), then one ``fft`` kernel kind: a
Stockham radix-2/4 WGSL kernel per axis (one workgroup per transform while
it fits in shared memory, one dispatch per stage beyond that, Bluestein for
sizes that are not powers of two), with a NumPy host implementation in
``providers/inprocess.py`` ``HOST_KINDS``. ``_transform`` below is where the
kernels would be called; argument checking is already done there.

>>> import gpuarray as xp
>>> xp.fft.fftfreq(4, device="cpu").tolist()
[0.0, 0.25, -0.5, -0.25]
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from . import _dtypes
from ._array import GpuArray
from ._devices import as_device
from ._elementwise import apply, astype_node, finish
from ._ops import OPS
from .graph.node import make
from .graph.shapes import normalize_axis
from .namespace.linear_algebra import roll_node

_NORMS = ("backward", "ortho", "forward")


def _check_args(name: str, x: Any, n: Any, axis: Any, norm: str, sizes: str = "n") -> GpuArray:
    if not isinstance(x, GpuArray):
        raise TypeError(f"fft.{name}: expected a GpuArray; got {type(x).__name__}")
    if norm not in _NORMS:
        raise ValueError(f"fft.{name}: norm must be one of {_NORMS}; got {norm!r}")
    if sizes == "n":
        if n is not None and operator.index(n) < 1:
            raise ValueError(f"fft.{name}: invalid number of data points ({n}) specified")
        if x.ndim == 0:
            raise ValueError(f"fft.{name}: x must have at least one dimension")
        normalize_axis(operator.index(axis), x.ndim)
    else:
        axes = range(x.ndim) if axis is None else [operator.index(a) for a in axis]
        for a in axes:
            normalize_axis(a, x.ndim)
        if n is not None:
            if axis is not None and len(n) != len(axis):
                raise ValueError(f"fft.{name}: s and axes must have the same length")
            if any(operator.index(v) < 1 for v in n):
                raise ValueError(f"fft.{name}: invalid number of data points ({tuple(n)}) specified")
    return x


def _transform(name: str, x: Any, n: Any, axis: Any, norm: str, sizes: str, complex_side: str) -> GpuArray:
    _check_args(name, x, n, axis, norm, sizes)
    raise TypeError(
        f"fft.{name}: complex dtypes are not supported yet (gpuarray has no complex64/complex128), "
        f"and {name} {complex_side}; transform a host copy with numpy.fft.{name}(numpy.asarray(x)) for now")


def fft(x: GpuArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> GpuArray:
    """One-dimensional discrete Fourier transform. Not available yet: it returns a complex array."""
    return _transform("fft", x, n, axis, norm, "n", "returns a complex array")


def ifft(x: GpuArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> GpuArray:
    """Inverse of ``fft``. Not available yet: it takes and returns complex arrays."""
    return _transform("ifft", x, n, axis, norm, "n", "returns a complex array")


def fftn(x: GpuArray, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str = "backward") -> GpuArray:
    """N-dimensional discrete Fourier transform. Not available yet: it returns a complex array."""
    return _transform("fftn", x, s, axes, norm, "s", "returns a complex array")


def ifftn(x: GpuArray, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> GpuArray:
    """Inverse of ``fftn``. Not available yet: it returns a complex array."""
    return _transform("ifftn", x, s, axes, norm, "s", "returns a complex array")


def rfft(x: GpuArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> GpuArray:
    """Transform of real input. Not available yet: its result is complex."""
    return _transform("rfft", x, n, axis, norm, "n", "returns a complex array")


def irfft(x: GpuArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> GpuArray:
    """Inverse of ``rfft``; its result is real but its input is complex, so it is not available yet."""
    return _transform("irfft", x, n, axis, norm, "n", "takes a complex array (the half spectrum)")


def rfftn(x: GpuArray, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> GpuArray:
    """N-dimensional transform of real input. Not available yet: its result is complex."""
    return _transform("rfftn", x, s, axes, norm, "s", "returns a complex array")


def irfftn(x: GpuArray, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str = "backward") -> GpuArray:
    """Inverse of ``rfftn``; its input is complex, so it is not available yet."""
    return _transform("irfftn", x, s, axes, norm, "s", "takes a complex array (the half spectrum)")


def hfft(x: GpuArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> GpuArray:
    """Transform of a Hermitian-symmetric signal; its input is complex, so it is not available yet."""
    return _transform("hfft", x, n, axis, norm, "n", "takes a complex array")


def ihfft(x: GpuArray, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> GpuArray:
    """Inverse of ``hfft``. Not available yet: its result is complex."""
    return _transform("ihfft", x, n, axis, norm, "n", "returns a complex array")


def _freq_dtype(dtype: Any, device: Any) -> tuple[Any, Any]:
    dev = as_device(device)
    if dtype is None:
        return dev.default_float, dev
    dt = _dtypes.as_dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"dtype must be a real floating-point dtype; got {dt}")
    dev.check_dtype(dt)
    return dt, dev


def _positive(n: Any, name: str) -> int:
    if isinstance(n, bool):
        raise TypeError(f"fft.{name}: n must be an integer; got bool")
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"fft.{name}: n must be a positive integer; got {n}")
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
    if not isinstance(x, GpuArray):
        raise TypeError(f"fft.{name}: expected a GpuArray; got {type(x).__name__}")
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
