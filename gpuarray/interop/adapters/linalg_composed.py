"""``numpy.linalg`` functions composed of other device ``linalg`` operations: ``cond``, ``tensorsolve``,
``tensorinv``.

- ``cond``: ``p=None`` / 2 / -2 from the singular values (``svdvals``; one-sided Jacobi on a wgpu
  device); ``'fro'``, ``'nuc'``, 1, -1, inf, -inf as ``norm(x) * norm(inv(x))`` with the inverse in
  float64 as NumPy's (LU on a wgpu device); a singular matrix's inverse is NaN and its condition
  number inf, as NumPy gives it.
- ``tensorsolve`` / ``tensorinv``: NumPy's reshapes around ``solve`` / ``inv``, its shape rules and errors.

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray([[2.0, 0.0], [0.0, 0.5]], device="cpu")
>>> float(np.linalg.cond(a)), float(np.linalg.cond(a, 1))
(4.0, 4.0)
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ... import linalg
from ...array_object.array import GpuArray
from ...core import dtypes as _dtypes
from ...namespace import manipulation as _m
from ...namespace.creation import full
from ..host import _FALLBACK
from ..operands import _as_array, _cast, _device, _int_index, _map_dtype
from ..registry import register, register_array

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays
LinAlgError = np.linalg.LinAlgError


def _inv_or_nan(x: GpuArray) -> GpuArray:
    """``inv(x)`` of each matrix, NaN where one is singular (NumPy's ``inv`` gufunc under
    ``errstate(all="ignore")``): one call, or where it raises one call per matrix."""
    try:
        return linalg.inv(x)
    except LinAlgError:
        if x.ndim == 2:
            return full(x.shape, float("nan"), dtype=x.dtype, device=x.device)
    parts = [_inv_or_nan(x[i]) for i in itertools.product(*(range(s) for s in x.shape[:-2]))]
    return _m.reshape(_m.stack(parts), x.shape)


@register_array(np.linalg.cond)
def _cond(x: GpuArray, p: dict) -> Any:
    pp = p["p"]
    if x.dtype.kind == "c":
        return _FALLBACK
    dt = _map_dtype(x.dtype if x.dtype.kind == "f" else _dtypes.float64, x.device)
    wt = _map_dtype(_dtypes.float64, x.device)
    if dt is None or wt is None:
        return _FALLBACK
    if x.size == 0 and math.prod(x.shape[-2:]) == 0:
        raise LinAlgError("cond is not defined on empty arrays")
    xf = _cast(x, dt)
    if pp is None or (not isinstance(pp, str) and pp in (2, -2)):
        s = linalg.svdvals(xf)
        r = _np.divide(s[..., -1], s[..., 0]) if pp == -2 else _np.divide(s[..., 0], s[..., -1])
    else:
        if x.ndim < 2:
            raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be at least two-dimensional")
        if x.shape[-1] != x.shape[-2]:
            raise LinAlgError("Last 2 dimensions of the array must be square")
        invx = _inv_or_nan(_cast(x, wt))
        r = _cast(_np.multiply(_np.linalg.norm(xf, pp, axis=(-2, -1)), _np.linalg.norm(invx, pp, axis=(-2, -1))), dt)
    bad = _np.logical_and(_np.isnan(r), _np.logical_not(_np.any(_np.isnan(xf), axis=(-2, -1))))
    return _np.where(bad, full((), float("inf"), dtype=r.dtype, device=r.device), r)


@register(np.linalg.tensorsolve)
def _tensorsolve(p: dict) -> Any:
    a, b, axes = p["a"], p["b"], p["axes"]
    if not any(isinstance(v, GpuArray) for v in (a, b)):
        return _FALLBACK
    dev = _device(a, b)
    a, b = _as_array(a, dev), _as_array(b, dev)
    an = a.ndim
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        a = _m.permute_dims(a, tuple(allaxes))
    oldshape = a.shape[-(an - b.ndim):]
    prod = math.prod(oldshape)
    if a.size != prod ** 2:
        raise LinAlgError("Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    res = _np.linalg.solve(_m.reshape(a, (prod, prod)), _m.reshape(b, (-1,)))
    return _m.reshape(res, oldshape)


@register_array(np.linalg.tensorinv, arg="a")
def _tensorinv(a: GpuArray, p: dict) -> Any:
    ind = _int_index(p["ind"])
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    invshape = a.shape[ind:] + a.shape[:ind]
    prod = math.prod(a.shape[ind:])
    if prod == 0:
        return _FALLBACK                      # NumPy's reshape error
    ia = _np.linalg.inv(_m.reshape(a, (prod, -1)))
    return _m.reshape(ia, invshape)
