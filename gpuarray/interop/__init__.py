"""NumPy protocols on GpuArray: ``__array_ufunc__``, ``__array_function__``, DLPack, ``get()``.

NumPy code that is handed a GpuArray keeps working and keeps its data on the
device where gpuarray can do the work:

- ufunc calls (``np.exp(g)``, ``np.add(g, a, out=..., where=..., dtype=...)``,
  ``np.multiply.outer(g, h)``) map onto the op table and are recorded lazily,
  so they fuse like ``xp.exp(g)`` (``ufuncs.py``).
- NumPy functions (``np.transpose``, ``np.where``, ``np.clip``, ``np.zeros_like``,
  ``np.asarray(x, like=g)`` ...) are adapted onto the gpuarray namespace
  (``registry.py``; the adapters, by NumPy area, in ``adapters/``).
- Everything else runs on the host: GpuArray arguments are copied to NumPy,
  the NumPy function runs, and array results come back as GpuArrays on the
  caller's device (``host.py``). Each such host fallback is counted in
  ``metrics()["host_fallbacks"]`` and, by default, warned about once per
  function (``gpuarray.config(fallback="warn" | "silent" | "raise")``).

Modules: ``host`` (host fallback), ``operands`` (NumPy operands as GpuArrays in
NumPy's dtypes; shared argument helpers), ``ufuncs``, ``registry``, ``dlpack``
(``get()``, DLPack) and ``adapters/`` (imported by ``gpuarray/__init__`` once
GpuArray exists; each module registers its adapters).

Device implementations plug in by name: ``register_ufunc_method("add",
"reduce", impl)`` and ``register_function(np.sum, impl)``; the built-in
adapters for reductions (``np.sum``, ``np.add.reduce`` ...) use the gpuarray
function of that name as soon as the namespace has it.

>>> import numpy as np, gpuarray as xp
>>> g = xp.asarray([1, 2, 3], device="cpu")
>>> type(np.exp(g)).__name__, np.exp(g).dtype
('GpuArray', dtype('float64'))
"""

from __future__ import annotations

from ..array_object.array import GpuArray
from ..array_object.hooks import register
from ..core.config import HostFallbackError, HostFallbackWarning
from .dlpack import dlpack, dlpack_device, from_dlpack, get
from .host import host_function, host_ufunc, note_fallback, reset_fallback_warnings
from .registry import array_function, register_function
from .ufuncs import array_ufunc, register_ufunc_method

# the protocols are GpuArray's class attributes, set here (the array object sits below this layer)
GpuArray.__array_ufunc__ = array_ufunc
GpuArray.__array_function__ = array_function
GpuArray.__dlpack__ = dlpack
GpuArray.__dlpack_device__ = dlpack_device
GpuArray.get = get


def _dask_token(x: GpuArray) -> tuple:
    """dask's token for ``x`` (``GpuArray.__dask_tokenize__``): registers GpuArray with dask first."""
    from .dask import token  # deferred: interop.dask imports dask.distributed (optional, heavy) on import
    return token(x)


register(dask_token=_dask_token)

__all__ = [
    "HostFallbackError", "HostFallbackWarning", "array_function", "array_ufunc", "dlpack", "dlpack_device",
    "from_dlpack", "get", "host_function", "host_ufunc", "note_fallback", "register_function",
    "register_ufunc_method", "reset_fallback_warnings",
]
