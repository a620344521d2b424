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
bitwise ones) keep them; float16 loops (each step rounds to float16), complex loops, integer ``power``
(NumPy raises for a negative exponent, which a kernel cannot) and the ``reduce`` / ``reduceat`` of ufuncs
whose NumPy reduction is not the fold (``numpy_reduce_folds``) stay host fallbacks, named as such; so do
fewer than ``SERIAL_ROWS`` rows longer than ``SERIAL_LENGTH`` on a GPU (``serial_on_host``: a fold is serial,
and NumPy's loop is faster than one GPU thread).

>>> import numpy as np, gpuarray as xp
>>> x = xp.asarray([10, 1, 2], device="cpu")
>>> np.subtract.accumulate(x).tolist(), int(np.subtract.reduce(x))
([10, 9, 7], 7)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...array_object.array import GpuArray
from ...array_object.elementwise import finish
from ...core import config as _config
from ...core import dtypes as _dtypes
from ...core.ops import FOLD, OPS, UFUNC_TO_OP
from ...graph.node import make
from ...namespace.creation import arange, asarray
from ...namespace.indexing import take
from ...namespace.manipulation import expand_dims, reshape
from ...runtime.devices import Device
from ..host import _FALLBACK, host_ufunc
from ..operands import _w
from ..ufuncs import METHODS, _into_out, register_ufunc_method, scan_accumulate
from .segmented import reduceat

# results of the ops a fold may take: their loops compute in one dtype (T, T -> T)
_RESULTS = frozenset({"same", "float", "double"})
# ufuncs whose accumulate and reduce are scans and reductions of their own (interop/ufuncs.py, ufunc_methods.py)
OWN = frozenset({"add", "multiply", "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
                 "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"})
# NumPy ufunc name -> the table op a fold computes it with: the binary ufuncs of the op table
ALL = {u: n for u, n in UFUNC_TO_OP.items() if OPS[n].nargs == 2 and OPS[n].result in _RESULTS}
FOLDS = {u: n for u, n in ALL.items() if u not in OWN}


# A fold is serial along its axis: a GPU thread takes ~40 ns a step (float32 subtract on the H200), ~200 ns
# (float64 divide), NumPy's loop 3.5-8 ns. Rows fold in parallel, so the device wins from a few dozen rows;
# fewer rows than SERIAL_ROWS longer than SERIAL_LENGTH fold on the host (measured on the H200: one row of
# 2^20 float32, subtract.accumulate 44 ms on the device, 4.3 ms through the host; 4096 rows of 1024 0.35 ms
# against NumPy's 16 ms). config(fallback="raise") keeps them on the device.
SERIAL_ROWS = 32
SERIAL_LENGTH = 4096


def serial_on_host(device: Device, rows: int, length: int) -> str:
    """Why ``rows`` folds of ``length`` steps run on the host on ``device`` ('' : on the device)."""
    if (device.kind != "wgpu" or rows >= SERIAL_ROWS or length <= SERIAL_LENGTH
            or _config.get("fallback") == "raise"):
        return ""
    return (f" runs on the host: {rows} row(s) of {length} elements fold in order, one GPU thread a row, slower "
            f"than NumPy's loop (gpuarray folds on the device from {SERIAL_ROWS} rows or rows of up to "
            f"{SERIAL_LENGTH} elements)")


def _by_cost(method: str, impl: Any) -> Any:
    """``impl`` (accumulate or reduce along one axis), or the host where ``serial_on_host`` says so."""
    def by_cost(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
        a, axis = inputs[0], kwargs.get("axis", 0)
        axis = axis[0] if isinstance(axis, tuple) and len(axis) == 1 else 0 if axis is None else axis
        if isinstance(a, GpuArray) and a.ndim and isinstance(axis, int | np.integer) and -a.ndim <= axis < a.ndim:
            length = a.shape[int(axis)]
            why = serial_on_host(a.device, a.size // length if length else 0, length)
            if why:
                return host_ufunc(ufunc, method, inputs, kwargs, a.device, reason=why)
        return impl(ufunc, inputs, kwargs)
    return by_cost


def fold_dtype(ufunc: np.ufunc, want: np.dtype, device: Any) -> np.dtype | None:
    """NumPy's loop dtype ``want`` where a fold computes it on ``device``, else None (the host): not a
    float16 loop (its steps round to float16), complex or bool, nor integer ``power`` (NumPy raises for a
    negative exponent, which a kernel cannot)."""
    ok = want in _dtypes.ALL_DTYPES and want.kind not in "bc" and want != _dtypes.float16 \
        and device.supports(want) and not (ufunc.__name__ == "power" and want.kind in "iu")
    return want if ok else None


def _reduce(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """One axis (NumPy raises for more: these ufuncs are not reorderable), no ``initial`` / ``where``: the
    last of the accumulation."""
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
    ufunc.reduce(np.zeros((1,) * a.ndim, a.dtype), axis=axis, dtype=kwargs.get("dtype"))     # NumPy's checks
    acc = METHODS[(ufunc.__name__, "accumulate")](ufunc, (a,), {"axis": axis, "dtype": kwargs.get("dtype")})
    if acc is _FALLBACK:
        return acc
    ax = int(axis) % a.ndim
    r = acc[(slice(None),) * ax + (-1,)]
    if kwargs.get("keepdims", False):
        r = expand_dims(r, axis=ax)
    return _into_out(r, outs, ufunc, "reduction")


def _fold_segments(ufunc: np.ufunc, x: GpuArray, starts: np.ndarray, lengths: np.ndarray) -> GpuArray | str | None:
    """``reduceat``'s segments of ``x`` (along its last axis) gathered into the rows of a matrix as wide as
    the longest, each row folded and its value at the segment's length taken; None (the host) where that
    matrix would hold over four times the data (one long segment among many short ones), and the reason
    (``serial_on_host``) where few long rows would fold faster on the host."""
    n, width, dev = x.shape[-1], int(lengths.max()), x.device
    if starts.size * width > 4 * n + 4096:
        return None
    why = serial_on_host(dev, starts.size * (x.size // n), width)
    if why:
        return why
    lane = arange(width, dtype=_dtypes.int64, device=dev)
    pos = _w("minimum", asarray(starts[:, None], device=dev) + lane[None, :], n - 1)
    rows = take(x, pos, axis=-1)                                    # (..., segments, width)
    acc = finish(make("scan", (rows._node,), x.dtype, rows.shape, (FOLD + ALL[ufunc.__name__], rows.ndim - 1, False),
                      dev))
    last = np.arange(starts.size, dtype=np.int64) * width + lengths - 1
    return take(reshape(acc, (*acc.shape[:-2], starts.size * width)), asarray(last, device=dev), axis=-1)


def numpy_reduce_folds(ufunc: np.ufunc) -> bool:
    """Whether this NumPy's ``ufunc.reduce`` is the left fold its documentation defines (the last of
    ``accumulate``). NumPy 2.4's float loops of ``power`` and ``arctan2`` reduce to ``f(x[0], x[-1])``
    (``np.power.reduce([2.0, 3.0, 2.0])`` is 4.0, not 64.0; ``reduceat`` alike): those stay host
    fallbacks, so that gpuarray gives what NumPy gives, and move to the device once NumPy folds."""
    x = np.array([0.5, -1.2, 2.0, 0.7, 3.0] if "dd->d" in ufunc.types else [7, 3, 2, 5, 1])
    with np.errstate(all="ignore"):
        return bool(np.array_equal(ufunc.reduce(x), ufunc.accumulate(x)[-1], equal_nan=True))


_REDUCEAT = reduceat(fold_dtype, _fold_segments)
for _ufunc, _op in ALL.items():
    _folds = numpy_reduce_folds(getattr(np, _ufunc))
    for _method, _impl in (("accumulate", _by_cost("accumulate", scan_accumulate(FOLD + _op, fold_dtype))),
                           ("reduce", _by_cost("reduce", _reduce)), ("reduceat", _REDUCEAT)):
        # (logaddexp.reduce: a row reduction of its own; of the OWN ufuncs only reduceat is a fold:
        # bitwise_and / or / xor and fmax / fmin, whose reduce and accumulate are scans and reductions)
        if (_ufunc, _method) not in METHODS and (_folds or _method == "accumulate") and (
                _ufunc not in OWN or _method == "reduceat" and not _ufunc.startswith("logical_")):
            register_ufunc_method(_ufunc, _method, _impl)
