"""NumPy functions that libraries call on the array namespace although the Array API has no such name.

xarray calls ``xp.einsum`` (``xr.dot``), ``xp.transpose`` (``Variable.transpose``, which
``DataArray.quantile`` uses) and ``xp.quantile`` (``quantile`` with ``skipna=False``) on the
namespace of its data. These are NumPy's signatures, run on the operands' device by gpuarray's
own implementations of ``numpy.einsum`` and ``numpy.quantile`` (``interop/adapters``: contractions
as products and one sum; quantiles by a sort or radix selection), so they give what NumPy gives.

>>> import gpuarray as xp
>>> a = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device="cpu")
>>> xp.einsum("ij,j->i", a, xp.asarray([1.0, 1.0], device="cpu")).tolist()
[3.0, 7.0]
>>> xp.transpose(a).tolist(), float(xp.quantile(a, 0.5))
([[1.0, 3.0], [2.0, 4.0]], 2.5)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..array_object.array import GpuArray
from .operands import _as_array, _device, _permute


def _on_device(name: str, operands: tuple[Any, ...]) -> list[GpuArray]:
    """``operands`` as GpuArrays on their GpuArrays' common device (the default device where there is
    none; arrays on two devices raise), array-likes in NumPy's dtypes."""
    if not operands:
        raise TypeError(f"{name}: expected at least one operand")
    dev = _device(*operands)
    return [_as_array(x, dev) for x in operands]


def einsum(subscripts: str, /, *operands: Any, **kwargs: Any) -> GpuArray:
    """``numpy.einsum(subscripts, *operands, **kwargs)`` on the operands' device.

    >>> import gpuarray as xp
    >>> x = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device="cpu")
    >>> float(xp.einsum("ii", x))
    5.0
    """
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: expected the subscripts as a str first (as gpuarray.einsum('ij,jk->ik', a, b)); "
                        f"got {type(subscripts).__name__}")
    arrays = _on_device("einsum", operands)
    return _as_array(np.einsum(subscripts, *arrays, **kwargs), arrays[0].device)


def transpose(x: GpuArray, /, axes: Any = None) -> GpuArray:
    """``numpy.transpose``: the axes reversed, or permuted as ``axes`` says (a view; the Array API's
    ``permute_dims`` with NumPy's default).

    >>> import gpuarray as xp
    >>> xp.transpose(xp.zeros((2, 3, 4), device="cpu")).shape
    (4, 3, 2)
    """
    (x,) = _on_device("transpose", (x,))
    return _permute(x, axes)       # numpy.transpose's adapter and GpuArray.transpose take the same path


def _quantile_like(np_func: Any) -> Any:
    def fn(a: Any, q: Any, axis: Any = None, *, method: str = "linear", keepdims: bool = False,
           **kwargs: Any) -> GpuArray:
        (x,) = _on_device(np_func.__name__, (a,))
        return _as_array(np_func(x, q, axis=axis, method=method, keepdims=keepdims, **kwargs), x.device)
    fn.__name__ = fn.__qualname__ = np_func.__name__
    fn.__doc__ = (f"``numpy.{np_func.__name__}(a, q, axis, method=..., keepdims=...)`` on ``a``'s device "
                  "(NumPy's methods and dtypes; ``q`` in [0, 1]).")
    return fn


quantile = _quantile_like(np.quantile)
nanquantile = _quantile_like(np.nanquantile)

__all__ = ["einsum", "transpose", "quantile", "nanquantile"]
