"""Data type functions: astype, can_cast, finfo, iinfo, isdtype, result_type.

>>> import gpuarray as xp
>>> xp.isdtype(xp.float32, "real floating")
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..array_object.array import GpuArray, expect_array
from ..array_object.elementwise import astype_node, finish
from ..array_object.hooks import register
from ..core import dtypes as _dtypes
from ..runtime.devices import as_device


def astype(x: GpuArray, dtype: Any, /, *, copy: bool = True, device: Any = None) -> GpuArray:
    """``x`` converted to ``dtype`` (NumPy's casting results, computed on the device).

    Complex to real is not allowed (as the standard says): take ``real``, ``imag`` or ``abs``
    explicitly. Complex to bool is allowed: ``0 + 0j`` is False, anything else True.
    """
    expect_array(x, "astype")
    dt = _dtypes.as_dtype(dtype)
    if x.dtype.kind == "c" and dt.kind not in "cb":
        raise TypeError(f"astype: casting {x.dtype} to {dt} is not allowed; use real(x), imag(x) or abs(x)")
    dev = x.device if device is None else as_device(device)
    dev.check_dtype(dt)
    out = x if dt == x.dtype and not copy else finish(astype_node(x._node, dt))
    if dt == x.dtype and copy:
        out = GpuArray(x._node)
    return out if dev == x.device else out.to_device(dev)


def _dt(x: Any) -> np.dtype:
    return x.dtype if isinstance(x, GpuArray) else _dtypes.as_dtype(x)


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether Array API promotion allows ``from_`` -> ``to``."""
    return bool(np.can_cast(_dt(from_), _dtypes.as_dtype(to), casting="safe"))


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype an operation on these would return (Python scalars weak)."""
    first, weak = None, False
    for a in arrays_and_dtypes:     # the common case, one dtype and maybe Python floats, without the calls below
        c = a.__class__
        if c is float:
            weak = True
            continue
        d = a._node.dtype if c is GpuArray else a if isinstance(a, np.dtype) else None
        if d is None or first is not None and d is not first and d != first:
            break
        first = d
    else:
        if first is not None and first in _dtypes.ALL_DTYPES and (not weak or first.kind in "fc"):
            return first
    args = [a.dtype if isinstance(a, GpuArray) else a for a in arrays_and_dtypes]
    args = [a if _dtypes.scalar_kind(a) is not None and not isinstance(a, np.dtype)
            else _dtypes.as_dtype(a) for a in args]
    return _dtypes.result_type(*args)


class FInfo:
    """Machine limits of a floating-point dtype, as the standard wants them: ``bits`` (int), ``eps``,
    ``max``, ``min``, ``smallest_normal`` (Python floats) and ``dtype`` (the real floating-point
    dtype). Other attributes of ``numpy.finfo`` (``tiny``, ``resolution`` ...) are passed through."""

    __slots__ = ("_np", "bits", "eps", "max", "min", "smallest_normal", "dtype")

    def __init__(self, dtype: np.dtype) -> None:
        fi = np.finfo(dtype)
        self._np = fi
        self.bits = int(fi.bits)
        self.eps = float(fi.eps)
        self.max = float(fi.max)
        self.min = float(fi.min)
        self.smallest_normal = float(fi.smallest_normal)
        self.dtype = np.dtype(fi.dtype)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._np, name)

    def __repr__(self) -> str:
        return (f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, "
                f"smallest_normal={self.smallest_normal}, dtype={self.dtype})")


def finfo(type: Any, /) -> FInfo:
    """Machine limits of a floating-point dtype; for a complex dtype, those of its real and
    imaginary components (``finfo(complex64).dtype`` is float32).

    >>> import gpuarray as xp
    >>> xp.finfo(xp.complex64).dtype, xp.finfo(xp.float32).eps
    (dtype('float32'), 1.1920928955078125e-07)
    """
    dt = _dt(type)
    if dt.kind not in "fc":
        raise ValueError(f"finfo: expected a floating-point dtype; got {dt}")
    return FInfo(_dtypes.real_dtype(dt))


def iinfo(type: Any, /) -> Any:
    """Machine limits of an integer dtype."""
    dt = _dt(type)
    if dt.kind not in "iu":
        raise ValueError(f"iinfo: expected an integer dtype; got {dt}")
    return np.iinfo(dt)


_KIND_NAMES = ("bool", "signed integer", "unsigned integer", "integral", "real floating",
               "complex floating", "numeric")


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind`` (a dtype, a kind name, or a tuple of those)."""
    dt = _dtypes.as_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dt, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KIND_NAMES:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {_KIND_NAMES}")
        return dt in _dtypes.CATEGORIES[kind]
    return dt == _dtypes.as_dtype(kind)


register(astype=astype)
