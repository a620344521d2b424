"""Writes into an argument as compositions of device operations: ``numpy.place``, ``numpy.putmask``
with values repeated cyclically, ``numpy.random.shuffle`` / ``numpy.random.permutation``, and
``numpy.piecewise`` (masked reads and writes of its result).

- ``place(arr, mask, vals)``: the rank of each ``True`` of ``mask`` (a cumulative sum) picks
  ``vals[rank % len(vals)]`` with one gather; a ``where`` writes it. Nothing is read back (but
  whether ``mask`` has a ``True``, when ``vals`` is empty: NumPy's error).
- ``putmask(a, mask, values)`` with ``values`` of another size than 1 or ``a.size``: ``values[i %
  len(values)]`` at each flat position ``i``, one gather and a ``where`` (the other sizes: the
  ``indexing`` adapter).
- ``numpy.random.shuffle(x)`` / ``numpy.random.permutation(x)`` of a GpuArray: NumPy does not
  dispatch ``numpy.random`` through ``__array_function__``; without this module ``shuffle`` swaps
  rows one by one through the GpuArray (seconds for 10^4 elements, and duplicated rows for a 2-D
  array, whose rows are views) and ``permutation`` returns a host ndarray. Importing gpuarray
  wraps these two functions of ``numpy.random`` (the legacy global ``RandomState``; every other
  argument goes to NumPy's own): the permutation is drawn on the host from that ``RandomState``
  (``RandomState.permutation(len(x))``: the same draws, so the same order, as NumPy's shuffle of
  ``x``) and applied on the device with one gather along the first axis; ``shuffle`` rebinds ``x``.
  ``Generator`` and ``RandomState`` methods cannot be wrapped (their types are immutable): call
  ``shuffle_array`` / ``permutation_array`` with the generator.

>>> import numpy as np, gpuarray as xp
>>> g = xp.asarray([1.0, 2.0, 3.0, 4.0], device="cpu")
>>> np.place(g, g > 1.5, [9.0, 8.0]); g.tolist()
[1.0, 9.0, 8.0, 9.0]
>>> rng = np.random.default_rng(0)
>>> shuffle_array(g, rng); sorted(g.tolist())
[1.0, 8.0, 9.0, 9.0]
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np

from ...array_object.aliasing import assign
from ...array_object.array import GpuArray
from ...core import dtypes as _dtypes
from ...namespace import manipulation as _m
from ...namespace import statistical as _st
from ...namespace.creation import arange, asarray, zeros_like
from ...namespace.indexing import take
from ..host import _FALLBACK
from ..operands import _as_array, _cast, _w
from ..registry import register_array
from . import indexing as _indexing


def _values(vals: Any, dt: np.dtype, dev: Any) -> GpuArray:
    """``vals`` flattened and converted to ``dt`` as NumPy's ``place`` / ``putmask`` convert them:
    arrays (GpuArrays too) must cast 'safe' (NumPy's TypeError), Python data and NumPy scalars are
    converted as ``numpy.array(vals, dtype=dt)`` (Python ints out of range: OverflowError)."""
    if isinstance(vals, (GpuArray, np.ndarray)):
        if not np.can_cast(vals.dtype, dt, "safe"):
            raise TypeError(f"Cannot cast array data from {vals.dtype!r} to {dt!r} according to the rule 'safe'")
        if isinstance(vals, GpuArray):
            return _m.reshape(_cast(vals, dt), (-1,))
        return asarray(vals.astype(dt).reshape(-1), device=dev)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        host = np.array(vals, dtype=dt)
    return asarray(host.reshape(-1), device=dev)


def _cyclic(vals: GpuArray, pos: GpuArray) -> GpuArray:
    """``vals[pos % len(vals)]`` (``pos`` >= 0), the indices bounded by construction (no read back)."""
    nv = vals.shape[0]
    if nv == 1:
        return _m.reshape(vals, ())
    k = _w("minimum", _w("maximum", _w("remainder", pos, nv), 0), nv - 1)
    return take(vals, k)


@register_array(np.place, arg="arr")
def _place(arr: GpuArray, p: dict) -> Any:
    """``numpy.place(arr, mask, vals)``: the ``True`` positions of ``mask`` take ``vals`` in turn."""
    dev = arr.device
    m = _cast(_as_array(p["mask"], dev), _dtypes.bool_)
    if m.size != arr.size:
        raise ValueError("place: mask and data must be the same size")
    v = _values(p["vals"], arr.dtype, dev)
    mf = _m.reshape(m, (-1,))
    if v.shape[0] == 0:
        if arr.size and bool(_st.any(mf)):
            raise ValueError("Cannot insert from an empty array!")
        return None
    if arr.size == 0:
        return None
    rank = _st.cumulative_sum(mf.astype(_dtypes.int64)) - 1
    new = _w("where", mf, _cyclic(v, _w("maximum", rank, 0)), _m.reshape(arr, (-1,)))
    assign(arr, _m.reshape(new, arr.shape)._node)
    return None


@register_array(np.putmask, arg="a")
def _putmask(a: GpuArray, p: dict) -> Any:
    """``numpy.putmask``; values of another size than 1 or ``a.size`` repeat cyclically over the
    flat positions of ``a``."""
    done = _indexing._putmask(p)
    if done is not _FALLBACK:
        return done
    dev = a.device
    m = _cast(_as_array(p["mask"], dev), _dtypes.bool_)
    v = _values(p["values"], a.dtype, dev)
    if v.shape[0] == 0 or a.size == 0:
        return None                             # NumPy: nothing is written
    pos = arange(a.size, dtype=_dtypes.int64, device=dev)
    new = _w("where", _m.reshape(m, (-1,)), _cyclic(v, pos), _m.reshape(a, (-1,)))
    assign(a, _m.reshape(new, a.shape)._node)
    return None


# ============================================================ numpy.random
def permutation_array(x: GpuArray, rng: Any = None) -> GpuArray:
    """``x`` with its first axis permuted as ``rng.permutation(x)`` (a ``Generator`` or
    ``RandomState``; None: NumPy's global ``RandomState``) permutes it, by one gather on the device.

    >>> import numpy as np, gpuarray as xp
    >>> g = xp.asarray([[1, 2], [3, 4], [5, 6]], device="cpu")
    >>> sorted(permutation_array(g, np.random.default_rng(1)).tolist())
    [[1, 2], [3, 4], [5, 6]]
    """
    if x.ndim < 1:
        raise IndexError("x must be an integer or at least 1-dimensional")
    rs = np.random.mtrand._rand if rng is None else rng
    perm = rs.permutation(x.shape[0])
    return take(x, perm.astype(np.int64), axis=0)


def shuffle_array(x: GpuArray, rng: Any = None) -> None:
    """Shuffle ``x`` along its first axis in place, drawing as ``rng.shuffle`` would (a
    ``Generator`` or ``RandomState``; None: NumPy's global ``RandomState``): the same order as
    NumPy's shuffle of an ndarray with the same state, applied by one gather on the device.

    >>> import numpy as np, gpuarray as xp
    >>> g = xp.asarray([0, 1, 2, 3], device="cpu"); shuffle_array(g, np.random.default_rng(2))
    >>> sorted(g.tolist())
    [0, 1, 2, 3]
    """
    n = len(x)                                  # TypeError for 0-d, as NumPy
    if x.size == 0:
        return                                  # NumPy draws nothing for an empty ndarray
    rs = np.random.mtrand._rand if rng is None else rng
    perm = rs.permutation(n)
    assign(x, take(x, perm.astype(np.int64), axis=0)._node)


def _wrap(original: Any, device_impl: Any) -> Any:
    """``original`` (a function of ``numpy.random``) with GpuArray arguments sent to ``device_impl``."""
    if getattr(original, "__gpuarray_wrapped__", False):
        return original

    @functools.wraps(original)
    def call(x: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(x, GpuArray) and not args and not kwargs:
            return device_impl(x, getattr(original, "__self__", None))
        return original(x, *args, **kwargs)

    call.__gpuarray_wrapped__ = True            # type: ignore[attr-defined]
    return call


np.random.shuffle = _wrap(np.random.shuffle, shuffle_array)
np.random.permutation = _wrap(np.random.permutation, permutation_array)


@register_array(np.piecewise, arg="x")
def _piecewise(x: GpuArray, p: dict) -> Any:
    """``numpy.piecewise`` as NumPy does it, with device masks: each function gets ``x[cond]`` (a
    compaction) and its values go to ``y[cond]`` (a masked write); later conditions win."""
    condlist, funclist = p["condlist"], list(p["funclist"])
    args, kw = p.get("args") or (), p.get("kw") or {}
    if x.ndim == 0 or not isinstance(condlist, (list, tuple)) or not condlist:
        return _FALLBACK                  # NumPy's own special cases for 0-d input and array condlists
    if not isinstance(condlist[0], (list, np.ndarray, GpuArray)):
        condlist = [condlist]
    conds = [_cast(_as_array(c, x.device), _dtypes.bool_) for c in condlist]
    n, n2 = len(conds), len(funclist)
    if n == n2 - 1:
        conds.append(_w("logical_not", _st.any(_m.stack([_m.broadcast_to(c, x.shape) for c in conds]), axis=0)))
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = zeros_like(x)
    for cond, func in zip(conds, funclist):
        if callable(func):
            vals = x[cond]
            if vals.size == 0:
                continue
            func = func(vals, *args, **kw)
        y[cond] = _cast(_as_array(func, x.device), y.dtype)      # NumPy's setitem casts unsafely
    return y
