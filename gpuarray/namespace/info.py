"""Inspection API (Array API 2024.12): ``__array_namespace_info__()``.

Answers are truthful for the code as it is now and for each device: a wgpu
adapter without ``shader-f64`` has no ``float64`` and no ``complex128``, one
without ``shader-int64`` has no ``int64`` / ``uint64``, and its default dtypes
are the 32-bit ones (complex64 for complex).

>>> import gpuarray as xp
>>> info = xp.__array_namespace_info__()
>>> info.capabilities()["boolean indexing"]
True
>>> sorted(info.dtypes(device="cpu", kind="real floating"))
['float32', 'float64']
>>> info.default_dtypes(device="cpu")["integral"]
dtype('int64')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import dtypes as _dtypes
from ..runtime.devices import Device, all_devices, as_device
from ..runtime.devices import default_device as _default_device

# Canonical Array API names, in the spec's order.
_NAMES: dict[str, np.dtype] = {
    "bool": _dtypes.bool_,
    "int8": _dtypes.int8, "int16": _dtypes.int16, "int32": _dtypes.int32, "int64": _dtypes.int64,
    "uint8": _dtypes.uint8, "uint16": _dtypes.uint16, "uint32": _dtypes.uint32, "uint64": _dtypes.uint64,
    "float32": _dtypes.float32, "float64": _dtypes.float64,
    "complex64": _dtypes.complex64, "complex128": _dtypes.complex128,
}

# The spec's kind strings.
_KINDS: dict[str, tuple[np.dtype, ...]] = {
    "bool": (_dtypes.bool_,),
    "signed integer": _dtypes.SIGNED,
    "unsigned integer": _dtypes.UNSIGNED,
    "integral": _dtypes.INTEGER,
    "real floating": _dtypes.FLOATING,
    "complex floating": _dtypes.COMPLEX,
    "numeric": _dtypes.NUMERIC,
}

# Arrays hold their values in NumPy on the host (in-process provider, transfers), and
# NumPy allows at most 64 dimensions; the WGSL kernels read shapes from a storage
# buffer and have no lower limit of their own.
MAX_DIMENSIONS = 64


def _kind_dtypes(kind: str | tuple[str, ...] | None) -> set[np.dtype]:
    if kind is None:
        return set(_dtypes.ALL_DTYPES)
    if isinstance(kind, tuple):
        out: set[np.dtype] = set()
        for k in kind:
            out |= _kind_dtypes(k)
        return out
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"dtypes: unknown kind {kind!r}; expected None, one of {tuple(_KINDS)} "
                             "or a tuple of those")
        return set(_KINDS[kind])
    raise TypeError(f"dtypes: kind must be None, a str or a tuple of str; got {type(kind).__name__}")


class Info:
    """What this namespace supports: capabilities, devices and dtypes per device."""

    __module__ = "gpuarray"

    def capabilities(self) -> dict[str, Any]:
        """Boolean-mask indexing and data-dependent shapes (``unique_*``, ``nonzero``, masks) are
        supported; at most 64 dimensions (NumPy's limit, which evaluation goes through).

        >>> Info().capabilities()["max dimensions"]
        64
        """
        return {
            "boolean indexing": True,
            "data-dependent shapes": True,
            "max dimensions": MAX_DIMENSIONS,
        }

    def default_device(self) -> Device:
        """The device arrays go to when no ``device=`` is given (``GPUARRAY_PROVIDER`` can force it)."""
        return _default_device()

    def devices(self) -> list[Device]:
        """Every usable device: ``cpu`` first, then each wgpu adapter, best first."""
        return all_devices()

    def dtypes(self, *, device: Device | str | None = None,
               kind: str | tuple[str, ...] | None = None) -> dict[str, np.dtype]:
        """Supported dtypes on ``device`` (the default device if None), keyed by canonical name.

        >>> Info().dtypes(device="cpu", kind=("bool", "real floating"))
        {'bool': dtype('bool'), 'float32': dtype('float32'), 'float64': dtype('float64')}
        """
        wanted = _kind_dtypes(kind)
        dev = as_device(device)
        return {name: dt for name, dt in _NAMES.items() if dt in wanted and dev.supports(dt)}

    def default_dtypes(self, *, device: Device | str | None = None) -> dict[str, np.dtype]:
        """Default dtypes on ``device`` (the default device if None).

        >>> Info().default_dtypes(device="cpu")["complex floating"]
        dtype('complex128')
        """
        dev = as_device(device)
        return {
            "real floating": dev.default_float,
            "complex floating": dev.default_complex,
            "integral": dev.default_int,
            "indexing": dev.default_int,
        }

    def __repr__(self) -> str:
        return "gpuarray.__array_namespace_info__()"


def __array_namespace_info__() -> Info:
    """The inspection namespace: ``capabilities()``, ``devices()``, ``dtypes()`` and so on.

    >>> import gpuarray as xp
    >>> xp.__array_namespace_info__().default_dtypes(device="cpu")["indexing"]
    dtype('int64')
    """
    return Info()
