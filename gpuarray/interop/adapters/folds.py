"""``ufunc.accumulate`` and one-axis ``ufunc.reduce`` of the binary ufuncs without a scan of their own.

NumPy computes ``f.accumulate(x)`` as ``out[0] = x[0]``, ``out[k] = f(out[k - 1], x[k])``, in the dtype
of the ufunc's loop for ``x``'s dtype, and ``f.reduce(x, axis)`` as the last of those. For ``subtract``,
``divide``, ``power``, ``arctan2``, ``hypot``, ``logaddexp``, ``fmod``, ``remainder``, ``floor_divide``,
``copysign``, ``nextafter``, ``heaviside``, the shifts, ``gcd``, ``lcm`` ... no regrouping gives the same
values (most are not associative), so the device does what NumPy does: a ``scan`` node of op
``fold_<elementwise op>`` in that order (``render/wgsl_scan.py``: a workgroup per contiguous row folding
tiles in workgroup memory, or a thread per row along other axes), the step computed as the elementwise
kernels compute ``f``. The ufuncs with scans of their own (``add``, ``multiply``, ``maximum``, ``minimum``,
``fmax``, ``fmin``, the logical and bitwise ones) keep them; loops gpuarray has no dtype for (NumPy's
float16 loop of ``arctan2`` on int8, complex) and integer ``power`` (NumPy raises for a negative
exponent, which a kernel cannot) stay host fallbacks, named as such.

>>> import numpy as np, gpuarray as xp
>>> x = xp.asarray([10, 1, 2], device="cpu")
>>> np.subtract.accumulate(x).tolist(), int(np.subtract.reduce(x))
([10, 9, 7], 7)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...array_object.array import GpuArray
from ...array_object.elementwise import astype_node, finish
from ...core import dtypes as _dtypes
from ...core.ops import INTERNAL, OPS
from ...graph.node import make
from ...namespace.manipulation import expand_dims
from ..host import _FALLBACK
from ..ufuncs import METHODS, _into_out, register_ufunc_method

# results of the ops a fold may take: their loops compute in one dtype (T, T -> T)
_RESULTS = frozenset({"same", "float", "double"})


def fold_ops() -> dict[str, str]:
    """NumPy ufunc name -> elementwise op name, for the binary ufuncs a fold computes."""
    out: dict[str, str] = {}
    for name, d in OPS.items():
        if d.nargs == 2 and d.ufunc and d.module != INTERNAL and d.result in _RESULTS and d.ufunc not in out:
            out[d.ufunc] = name
    return out


def _fold(ufunc: np.ufunc, a: GpuArray, axis: Any, dtype: Any, method: str) -> Any:
    """The accumulate node of ``a`` along ``axis`` (NumPy's dtype and axis checks first), or _FALLBACK."""
    extra = {} if method == "accumulate" else {"keepdims": False}
    probe = getattr(ufunc, method)(np.zeros((1,) * a.ndim, a.dtype), axis=axis, dtype=dtype, **extra)
    want = np.dtype(probe.dtype)
    if want not in _dtypes.ALL_DTYPES or want.kind in "bc" or not a.device.supports(want) or (
            ufunc.__name__ in ("power",) and want.kind in "iu"):
        return _FALLBACK
    ax = int(axis) % a.ndim
    node = make("scan", (astype_node(a._node, want),), want, a.shape, ("fold_" + FOLDS[ufunc.__name__], ax, False),
                a.device)
    return finish(node), ax


def _accumulate(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    (a,) = inputs
    outs = tuple(kwargs.get("out") or ())
    if (not isinstance(a, GpuArray) or a.ndim == 0 or set(kwargs) - {"axis", "dtype", "out"}
            or not all(isinstance(o, GpuArray) and o.device == a.device for o in outs)):
        return _FALLBACK
    got = _fold(ufunc, a, kwargs.get("axis", 0), kwargs.get("dtype"), "accumulate")
    return got if got is _FALLBACK else _into_out(got[0], outs, ufunc, "accumulate")


def _reduce(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """One axis (NumPy raises for more: these ufuncs are not reorderable), no ``initial`` / ``where``."""
    (a,) = inputs
    outs = tuple(kwargs.get("out") or ())
    axis = kwargs.get("axis", 0)
    if (not isinstance(a, GpuArray) or a.ndim == 0 or set(kwargs) - {"axis", "dtype", "keepdims", "out"}
            or isinstance(axis, tuple) and len(axis) != 1 or axis is None and a.ndim != 1
            or not all(isinstance(o, GpuArray) and o.device == a.device for o in outs)):
        return _FALLBACK
    axis = axis[0] if isinstance(axis, tuple) else 0 if axis is None else axis
    if a.shape[int(axis) % a.ndim] == 0:
        return _FALLBACK                    # NumPy's identity or its error
    got = _fold(ufunc, a, axis, kwargs.get("dtype"), "reduce")
    if got is _FALLBACK:
        return got
    acc, ax = got
    r = acc[(slice(None),) * ax + (-1,)]
    if kwargs.get("keepdims", False):
        r = expand_dims(r, axis=ax)
    return _into_out(r, outs, ufunc, "reduction")


# ufuncs whose accumulate and reduce are scans and reductions of their own (interop/ufuncs.py, ufunc_methods.py)
OWN = frozenset({"add", "multiply", "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
                 "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"})
FOLDS = {u: name for u, name in fold_ops().items() if u not in OWN}
for _ufunc in FOLDS:
    for _method, _impl in (("accumulate", _accumulate), ("reduce", _reduce)):
        if (_ufunc, _method) not in METHODS:       # (logaddexp.reduce: a fused row reduction of its own)
            register_ufunc_method(_ufunc, _method, _impl)
