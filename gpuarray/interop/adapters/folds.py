"""``ufunc.accumulate``, one-axis ``ufunc.reduce`` and ``ufunc.reduceat`` of the binary ufuncs without a scan
of their own.

NumPy computes ``f.accumulate(x)`` as ``out[0] = x[0]``, ``out[k] = f(out[k - 1], x[k])``, in the dtype
of the ufunc's loop for ``x``'s dtype, and ``f.reduce(x, axis)`` as the last of those. For ``subtract``,
``divide``, ``power``, ``arctan2``, ``hypot``, ``logaddexp``, ``fmod``, ``remainder``, ``floor_divide``,
``copysign``, ``nextafter``, ``heaviside``, the shifts, ``gcd``, ``lcm`` ... no regrouping gives the same
values (most are not associative), so the device does what NumPy does: a ``scan`` node of op
``fold_<elementwise op>`` in that order (``render/wgsl_scan.py``: a workgroup per contiguous row folding
tiles in workgroup memory, or a thread per row along other axes), the step computed as the elementwise
kernels compute ``f``; ``reduceat`` folds the segments gathered into the rows of a matrix. The ufuncs with
scans of their own (``add``, ``multiply``, ``maximum``, ``minimum``, ``fmax``, ``fmin``, the logical and
bitwise ones) keep them; loops gpuarray has no dtype for (NumPy's float16 loop of ``arctan2`` on int8,
complex), integer ``power`` (NumPy raises for a negative exponent, which a kernel cannot) and the
``reduce`` / ``reduceat`` of ufuncs whose NumPy reduction is not the fold (``numpy_reduce_folds``) stay
host fallbacks, named as such.

>>> import numpy as np, gpuarray as xp
>>> x = xp.asarray([10, 1, 2], device="cpu")
>>> np.subtract.accumulate(x).tolist(), int(np.subtract.reduce(x))
([10, 9, 7], 7)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ...array_object.array import GpuArray
from ...array_object.elementwise import astype_node, finish
from ...core import dtypes as _dtypes
from ...core.ops import INTERNAL, OPS
from ...graph.node import make
from ...namespace.creation import arange, asarray
from ...namespace.indexing import take
from ...namespace.manipulation import expand_dims, moveaxis, reshape
from ..host import _FALLBACK
from ..operands import _into_out as _into_out_array
from ..operands import _w
from ..ufuncs import METHODS, _into_out, register_ufunc_method
from .segmented import _indices as _segment_indices

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
    if not _foldable(ufunc, want, a):
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


def _reduceat(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """``ufunc.reduceat(a, indices, axis=0, dtype=None, out=None)``: the segments (NumPy's rules, the
    indices read on the host) gathered into rows of a matrix as wide as the longest, each row folded and
    its value at the segment's length taken. One long segment among many short ones (a matrix over four
    times the data): the host."""
    if len(inputs) != 2 or set(kwargs) - {"axis", "dtype", "out"}:
        return _FALLBACK
    a, indices = inputs
    out = kwargs.get("out")
    out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if not isinstance(a, GpuArray) or a.ndim == 0 or out is not None and not isinstance(out, GpuArray):
        return _FALLBACK
    idx = _segment_indices(indices)
    axis, dtype = kwargs.get("axis", 0), kwargs.get("dtype")
    with np.errstate(all="ignore"):             # NumPy's checks of the indices, axis and dtype=
        probe = np.zeros((1,) * a.ndim, a.dtype)
        if idx.ndim != 1:
            ufunc.reduceat(probe, idx, axis=axis, dtype=dtype)
        want = np.dtype(ufunc.reduceat(probe, np.zeros(1, np.intp), axis=axis, dtype=dtype).dtype)
    if not _foldable(ufunc, want, a):
        return _FALLBACK
    ax = normalize_axis_index(int(axis), a.ndim)
    n = a.shape[ax]
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:
        raise IndexError(f"index {idx[bad[0]]} out-of-bounds in {ufunc.__name__}.reduceat [0, {n})")
    ends = np.append(idx[1:], n)
    lengths = np.where(ends > idx, ends - idx, 1).astype(np.int64)     # idx[i] >= idx[i + 1]: a[idx[i]]
    width = int(lengths.max()) if lengths.size else 0
    if idx.size == 0 or a.size == 0 or idx.size * width > 4 * n + 4096:
        return _FALLBACK
    dev = a.device
    x = moveaxis(a if a.dtype == want else a.astype(want), ax, -1)
    lane = arange(width, dtype=_dtypes.int64, device=dev)
    pos = _w("minimum", asarray(idx.astype(np.int64)[:, None], device=dev) + lane[None, :], n - 1)
    rows = take(x, pos, axis=-1)                                    # (..., segments, width)
    acc = finish(make("scan", (rows._node,), want, rows.shape, ("fold_" + ALL[ufunc.__name__], rows.ndim - 1,
                                                                 False), dev))
    last = np.arange(idx.size, dtype=np.int64) * width + lengths - 1
    flat = reshape(acc, (*acc.shape[:-2], idx.size * width))
    r = moveaxis(take(flat, asarray(last, device=dev), axis=-1), -1, ax)
    return r if out is None else _into_out_array(r, out, ufunc.__name__)


def _foldable(ufunc: np.ufunc, want: np.dtype, a: GpuArray) -> bool:
    """Whether a fold computes ``ufunc`` in NumPy's loop dtype ``want`` on ``a``'s device."""
    return want in _dtypes.ALL_DTYPES and want.kind not in "bc" and a.device.supports(want) and not (
        ufunc.__name__ == "power" and want.kind in "iu")


# ufuncs whose accumulate and reduce are scans and reductions of their own (interop/ufuncs.py, ufunc_methods.py)
OWN = frozenset({"add", "multiply", "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
                 "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"})
ALL = fold_ops()
FOLDS = {u: name for u, name in ALL.items() if u not in OWN}
def numpy_reduce_folds(ufunc: np.ufunc) -> bool:
    """Whether this NumPy's ``ufunc.reduce`` is the left fold its documentation defines (the last of
    ``accumulate``). NumPy 2.4's float loops of ``power`` and ``arctan2`` reduce to ``f(x[0], x[-1])``
    (``np.power.reduce([2.0, 3.0, 2.0])`` is 4.0, not 64.0; ``reduceat`` alike): those stay host
    fallbacks, so that gpuarray gives what NumPy gives, and move to the device once NumPy folds."""
    x = np.array([0.5, -1.2, 2.0, 0.7, 3.0] if "dd->d" in ufunc.types else [7, 3, 2, 5, 1])
    with np.errstate(all="ignore"):
        return bool(np.array_equal(ufunc.reduce(x), ufunc.accumulate(x)[-1], equal_nan=True))


for _ufunc in ALL:
    _folds = numpy_reduce_folds(getattr(np, _ufunc))
    for _method, _impl in (("accumulate", _accumulate), ("reduce", _reduce), ("reduceat", _reduceat)):
        # (logaddexp.reduce: a row reduction of its own; of the OWN ufuncs only reduceat is a fold:
        # bitwise_and / or / xor and fmax / fmin, whose reduce and accumulate are scans and reductions)
        if (_ufunc, _method) not in METHODS and (_folds or _method == "accumulate") and (
                _ufunc not in OWN or _method == "reduceat" and not _ufunc.startswith("logical_")):
            register_ufunc_method(_ufunc, _method, _impl)
