"""gpuarray: NumPy-style arrays on any GPU through WebGPU, with automatic fusion.

>>> import gpuarray as xp
>>> x = xp.linspace(0.0, 1.0, 5, device="cpu")
>>> y = xp.exp(-x * x * 0.5) * xp.sin(x)      # recorded lazily
>>> xp.evaluate(y)                            # one fused kernel
>>> round(float(y[-1]), 4)
0.5104
"""

from __future__ import annotations

import sys as _sys
from typing import Any

from . import (
    fft,
    lib,  # xp.lib.stride_tricks.sliding_window_view, which xarray's rolling windows use
    linalg,
    random,  # xp.random.default_rng(seed, device=...): draws on the device
    special,  # xp.special, which SciPy's special functions look for
)
from .array_object.array import GpuArray
from .array_object.hooks import register as _register
from .array_object.jit import jit
from .core import __version__
from .core import dtypes as _dtypes
from .core.config import HostFallbackError, HostFallbackWarning, config
from .core.errors import DeviceLostError, OutOfMemoryError
from .core.metrics import metrics, reset_metrics
from .interop import adapters as _adapters  # NumPy function adapters (each module registers its own)
from .interop import from_dlpack
from .interop.host import register_namespace as _register_namespace
from .interop.numpy_compat import pad  # NumPy's pad, which xarray's rolling calls on the namespace
from .interop.numpy_names import einsum, nanquantile, quantile, transpose  # NumPy's, which xarray calls on it
from .namespace import indexing_advanced as _indexing_advanced  # noqa: F401 - registers x[idx], x[mask]
from .namespace.creation import (
    arange,
    asarray,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    linspace,
    logspace,
    meshgrid,
    ones,
    ones_like,
    tril,
    triu,
    zeros,
    zeros_like,
)
from .namespace.data_types import astype, can_cast, finfo, iinfo, isdtype, result_type
from .namespace.diag import diag  # NumPy's diag (not in the standard): SciPy's RBFInterpolator calls it
from .namespace.elementwise import FUNCTIONS as _ELEMENTWISE
from .namespace.indexing import take, take_along_axis
from .namespace.info import __array_namespace_info__
from .namespace.linear_algebra import matmul, tensordot, vecdot
from .namespace.manipulation import (
    broadcast_arrays,
    broadcast_to,
    concat,
    expand_dims,
    flip,
    matrix_transpose,
    moveaxis,
    permute_dims,
    repeat,
    reshape,
    roll,
    squeeze,
    stack,
    tile,
    unstack,
)
from .namespace.searching import argmax, argmin, count_nonzero
from .namespace.searching_sorted import nonzero, searchsorted
from .namespace.sets import unique_all, unique_counts, unique_inverse, unique_values
from .namespace.sorting import argsort, sort
from .namespace.statistical import (  # noqa: A004
    all,
    any,
    cumulative_prod,
    cumulative_sum,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from .namespace.utility import diff
from .runtime import planner  # gpuarray.planner.decisions(): the placement log
from .runtime import recovery as _recovery  # noqa: F401 - registers the recomputation of lost device data
from .runtime.calibration import calibrate
from .runtime.calibration import register_api as _register_api
from .runtime.devices import CPU, Device, all_devices, default_device, set_default_device
from .runtime.devices import as_device as _as_device
from .runtime.explain import explain
from .runtime.profile import profile

__array_api_version__ = "2024.12"

bool = _dtypes.bool_  # noqa: A001 - Array API name
int8, int16, int32, int64 = _dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64
uint8, uint16, uint32, uint64 = _dtypes.uint8, _dtypes.uint16, _dtypes.uint32, _dtypes.uint64
float16, float32, float64 = _dtypes.float16, _dtypes.float32, _dtypes.float64  # float16: NumPy's, beyond the Array API
complex64, complex128 = _dtypes.complex64, _dtypes.complex128

e = 2.718281828459045
inf = float("inf")
nan = float("nan")
pi = 3.141592653589793
newaxis = None

globals().update(_ELEMENTWISE)


def evaluate(*arrays: GpuArray) -> None:
    """Compute these arrays now (fused). Values are kept on their device. On wgpu the kernels are
    submitted at once, or, for small work, with the next evaluations' (a read or ``synchronize``
    submits them).

    >>> a = asarray([1.0, 2.0], device="cpu") + 1
    >>> evaluate(a)
    """
    nodes: list[Any] = []
    for a in arrays:
        if a.__class__ is not GpuArray and not isinstance(a, GpuArray):
            raise TypeError(f"evaluate: expected GpuArrays; got {type(a).__name__}")
        nodes += (a._node,)
    planner.evaluate_nodes(nodes)




def synchronize(device: Any = None) -> None:
    """Wait until every kernel submitted to ``device`` (default: the default device) has finished.

    >>> synchronize("cpu")
    """
    _as_device(device).provider.synchronize()


_register_api(_sys.modules[__name__])                 # what calibrate() measures with
_register(package=_sys.modules[__name__])            # x.__array_namespace__()
_register_namespace(_sys.modules[__name__])          # the NumPy adapters' namespace lookups


# NumPy dtypes that gpuarray does not have (nor does the Array API require them): the error says so.
_NO_DTYPE = {"half": "float16", "longdouble": "float64", "float128": "float64",
             "clongdouble": "complex128", "complex256": "complex128"}


def __getattr__(name: str) -> Any:
    if name in _NO_DTYPE:
        raise AttributeError(f"module 'gpuarray' has no attribute {name!r}: gpuarray has no {name} dtype "
                             f"(the Array API does not require it); use {_NO_DTYPE[name]}")
    raise AttributeError(f"module 'gpuarray' has no attribute {name!r}")


__all__ = [
    "GpuArray", "Device", "CPU", "default_device", "set_default_device", "all_devices",
    "metrics", "reset_metrics", "evaluate", "synchronize", "jit", "explain", "profile", "calibrate",
    "config", "HostFallbackWarning", "HostFallbackError", "OutOfMemoryError", "DeviceLostError", "from_dlpack",
    "__array_namespace_info__",
    "asarray", "arange", "empty", "empty_like", "eye", "full", "full_like", "linspace", "logspace",
    "ones", "ones_like", "zeros", "zeros_like", "meshgrid", "tril", "triu",
    "astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type", "diag",
    "broadcast_arrays", "broadcast_to", "expand_dims", "flip", "matrix_transpose", "permute_dims",
    "reshape", "squeeze",
    "concat", "stack", "unstack", "tile", "repeat", "roll", "moveaxis", "take", "take_along_axis",
    "sum", "prod", "max", "min", "mean", "var", "std", "all", "any",
    "matmul", "tensordot", "vecdot", "linalg", "fft", "lib", "special", "random",
    "pad", "einsum", "transpose", "quantile", "nanquantile",
    "sort", "argsort", "searchsorted", "nonzero",
    "unique_values", "unique_counts", "unique_inverse", "unique_all",
    "cumulative_sum", "cumulative_prod", "argmax", "argmin", "count_nonzero", "diff",
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64",
    "complex64", "complex128",
    "e", "inf", "nan", "pi", "newaxis",
    *_ELEMENTWISE,
]
