"""NumPy's order of complex values for its ordering ufuncs on complex GpuArrays.

NumPy orders complex numbers by real part, then imaginary part (``CLT``/``CLE``/``CGT``/``CGE`` in its
loops: the real parts decide only where neither imaginary part is NaN, so a comparison with a NaN part
is False); ``maximum``/``minimum`` keep the first operand
where it has a NaN part or compares ``>=`` (``<=``) to the second, ``fmax``/``fmin`` keep the first
where the second has a NaN part or the first compares so. The Array API (and gpuarray's namespace)
leaves these undefined for complex input; ``np.maximum(z1, z2)``, ``np.less(z1, z2)`` ... of GpuArrays
get them here as elementwise compositions of the parts, fused on the device.

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray(np.array([1 + 2j, 3 + 0j, complex(np.nan, 1)]), device="cpu")
>>> b = xp.asarray(np.array([1 + 3j, 2 + 9j, 0j]), device="cpu")
>>> ordered("maximum", a, b).tolist(), ordered("less", a, b).tolist()
([(1+3j), (3+0j), (nan+1j)], [True, False, False])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..array_object.array import GpuArray
from ..array_object.elementwise import apply
from ..core.ops import OPS
from ..namespace.manipulation import reshape
from .host import _xp

ORDERING = frozenset({"less", "less_equal", "greater", "greater_equal", "maximum", "minimum", "fmax", "fmin"})


def _f(name: str, *args: Any) -> Any:
    return apply(OPS[name], *args)


def _compare(a: GpuArray, b: GpuArray, strict: str, ties: str) -> GpuArray:
    """``(a.re strict b.re & neither imaginary part NaN) | (a.re == b.re & a.im ties b.im)``: NumPy's
    ``CLT``, ``CLE``, ``CGT``, ``CGE``."""
    ar, ai, br, bi = _f("real", a), _f("imag", a), _f("real", b), _f("imag", b)
    no_nan = _f("logical_not", _f("logical_or", _f("isnan", ai), _f("isnan", bi)))
    return _f("logical_or", _f("logical_and", _f(strict, ar, br), no_nan),
              _f("logical_and", _f("equal", ar, br), _f(ties, ai, bi)))


def _has_nan(z: GpuArray) -> GpuArray:
    return _f("logical_or", _f("isnan", _f("real", z)), _f("isnan", _f("imag", z)))


def ordered(name: str, a: GpuArray, b: GpuArray) -> GpuArray:
    """NumPy's ufunc ``name`` (one of ``ORDERING``) of complex ``a`` and ``b`` (one dtype)."""
    if name in ("less", "less_equal", "greater", "greater_equal"):
        strict = "less" if name.startswith("less") else "greater"
        return _compare(a, b, strict, name if name.endswith("equal") else strict)
    ge = _compare(a, b, "greater", "greater_equal") if name in ("maximum", "fmax") else \
        _compare(a, b, "less", "less_equal")
    keep = _f("logical_or", _has_nan(a), ge) if name in ("maximum", "minimum") else \
        _f("logical_or", _has_nan(b), ge)
    return _f("where", keep, a, b)


def complex_arg(a: GpuArray, kind: str, axis: Any, keepdims: bool) -> GpuArray:
    """NumPy's ``arg<kind>`` (``kind`` "max" or "min") of complex ``a`` along ``axis`` (None: the flattened
    array) on the device: the first element with a NaN part where there is one (NumPy's order puts NaNs
    last and ``argmax``/``argmin`` return the first), else the first of the extremes by real part, then by
    imaginary part (``-0.0`` ties ``0.0``, as NumPy's comparisons).

    >>> import numpy as np, gpuarray as xp
    >>> z = xp.asarray(np.array([1 + 5j, 3 - 1j, 3 + 2j, 3 + 2j, 0j]), device="cpu")
    >>> int(complex_arg(z, "max", None, False)), int(complex_arg(z, "min", None, False))
    (2, 4)
    """
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    ax = normalize_axis_tuple(axis, a.ndim)[0]
    re, im, nan = _f("real", a), _f("imag", a), _has_nan(a)
    far = -np.inf if kind == "max" else np.inf          # below (above) every value that is not NaN
    ext, first = _xp(kind), _xp("argmax")               # (argmax of bools: the first True)
    best_re = ext(_f("where", nan, far, re), axis=ax, keepdims=True)
    cand = _f("logical_and", _f("equal", re, best_re), _f("logical_not", nan))
    best_im = ext(_f("where", cand, im, far), axis=ax, keepdims=True)
    hit = _f("logical_and", cand, _f("equal", im, best_im))
    return _f("where", _xp("any")(nan, axis=ax, keepdims=keepdims), first(nan, axis=ax, keepdims=keepdims),
              first(hit, axis=ax, keepdims=keepdims))


def complex_extreme(a: GpuArray, kind: str, axis: Any, keepdims: bool) -> GpuArray:
    """NumPy's ``max``/``min`` (``kind``) of complex ``a`` over ``axis`` (None, an int or a tuple): the
    element at ``complex_arg``'s index, the reduced axes moved last and merged where there are several."""
    axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
    rest = [d for d in range(a.ndim) if d not in axes]
    kept = tuple(1 if d in axes else s for d, s in enumerate(a.shape))
    if len(axes) == 1:
        x, last = a, axes[0]
    else:                   # the reduced axes last, merged into one
        x = _xp("permute_dims")(a, (*rest, *axes)) if list(axes) != list(range(len(rest), a.ndim)) else a
        x = reshape(x, (*(a.shape[d] for d in rest), -1))
        last = x.ndim - 1
    r = _xp("take_along_axis")(x, complex_arg(x, kind, last, True), axis=last)
    return reshape(r, kept if keepdims else tuple(s for d, s in enumerate(a.shape) if d not in axes))
