"""Segmented and run-detecting compositions: ufunc ``reduceat``, ``numpy.unique`` with ``axis=``,
``numpy.trim_zeros``.

- ``ufunc.reduceat`` (``add``, ``multiply``, ``maximum``, ``minimum``, ``logical_and``,
  ``logical_or``): the segments (from the indices, a parameter read on the host, with NumPy's rules:
  ``indices[i] >= indices[i + 1]`` gives ``a[indices[i]]``) are cut in chunks of ``B`` elements; one
  gather builds a ``(chunks, B)`` matrix padded with the ufunc's identity and one reduction along
  its rows gives each chunk's partial; the partials of a segment are contiguous, so the same step
  repeats on them until each segment is one value (``log_B`` of the longest segment levels; no
  cumulative-sum differences, so no cancellation for floats). No data is read back.
- ``unique(ar, axis=k)``: rows (the slices along ``k``) sorted lexicographically by stable
  ``argsort`` s from the last column to the first, neighbours compared on the device (NaN rows never
  equal, as NumPy's structured comparison), the starts of runs compacted with ``nonzero`` (one read
  of their count). ``return_index`` / ``return_inverse`` / ``return_counts`` stay on the device.
- ``trim_zeros``: the first and last non-zero position along each trimmed axis, all read back in
  one transfer; the result is a view, as NumPy's.

>>> import numpy as np, gpuarray as xp
>>> g = xp.asarray(np.arange(8.0), device="cpu")
>>> np.add.reduceat(g, [0, 4, 1, 5]).tolist()
[6.0, 4.0, 10.0, 18.0]
>>> np.unique(xp.asarray([[1, 2], [0, 5], [1, 2]], device="cpu"), axis=0).tolist()
[[0, 5], [1, 2]]
>>> np.trim_zeros(xp.asarray([0, 0, 3, 0, 1, 0], device="cpu")).tolist()
[3, 0, 1]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ...array_object.array import GpuArray
from ...core import dtypes as _dtypes
from ...namespace import manipulation as _m
from ...namespace import statistical as _st
from ...namespace.creation import arange, asarray, full
from ...namespace.indexing import take
from ...namespace.searching_sorted import nonzero
from ...namespace.sorting import argsort
from ..host import _FALLBACK, host_ufunc
from ..operands import _into_out, _map_dtype, _w
from ..registry import register_array
from ..ufuncs import register_ufunc_method
from . import sorting as _sorting

CHUNK_MAX = 1024  # reduceat: the longest chunk reduced by one row of the chunk matrix

# ufunc -> the namespace reduction of its rows (bool maximum / minimum are any / all)
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_and": "all", "logical_or": "any"}


# ============================================================ reduceat
def _identity(name: str, dt: np.dtype) -> Any:
    """The value that pads a chunk: the ufunc's identity in ``dt`` (``-inf`` / the smallest value
    for ``maximum`` ...)."""
    if name in ("add", "logical_or"):
        return False if dt.kind == "b" else 0
    if name in ("multiply", "logical_and"):
        return True if dt.kind == "b" else 1
    low = name == "maximum"
    if dt.kind == "b":
        return not low
    if dt.kind == "f":
        return -math.inf if low else math.inf
    info = np.iinfo(dt)
    return int(info.min if low else info.max)


def _reduce_rows(m: GpuArray, name: str, dt: np.dtype) -> GpuArray:
    """``m`` reduced along its last axis by the ufunc ``name``, in ``dt``."""
    fn = _REDUCE[name]
    if dt.kind == "b" and fn in ("max", "min"):
        fn = "any" if fn == "max" else "all"
    if fn in ("sum", "prod"):
        r = getattr(_st, fn)(m, axis=-1, dtype=dt)
    else:
        r = getattr(_st, fn)(m, axis=-1)
    return r if r.dtype == dt else r.astype(dt)


def _chunk_size(lengths: np.ndarray) -> int:
    """The chunk length of one level: the largest power of two up to ``CHUNK_MAX`` whose padding
    keeps the chunk matrix within twice the segments' total length."""
    total = int(lengths.sum())
    best = 2
    b = 4
    while b <= CHUNK_MAX:
        if int((-(-lengths // b)).sum()) * b > 2 * total + 64:
            break
        best = b
        b *= 2
    return best


def segmented_reduce(x: GpuArray, starts: np.ndarray, lengths: np.ndarray, name: str) -> GpuArray:
    """Reduce ``x`` (reduced axis last) over the segments ``[starts[i], starts[i] + lengths[i])``
    (all lengths >= 1, inside the axis) with the ufunc ``name``; the result's last axis has one
    value per segment, in ``x``'s dtype.

    >>> import gpuarray as xp
    >>> x = xp.asarray([1.0, 2.0, 3.0, 4.0, 5.0], device="cpu")
    >>> segmented_reduce(x, np.array([0, 2]), np.array([2, 3]), "add").tolist()
    [3.0, 12.0]
    """
    dt, dev = x.dtype, x.device
    while True:
        if lengths.size == 0 or int(lengths.max()) == 1:
            n = x.shape[-1]
            if starts.size == n and np.array_equal(starts, np.arange(n)):
                return x
            return take(x, starts.astype(np.int64), axis=-1)
        b = _chunk_size(lengths)
        per = -(-lengths // b)                              # chunks of each segment
        seg = np.repeat(np.arange(lengths.size), per)
        first = np.cumsum(per) - per
        j = np.arange(seg.size) - first[seg]                # chunk number within its segment
        cstart = starts[seg] + j * b
        clen = np.minimum(b, lengths[seg] - j * b)
        n = x.shape[-1]
        lane = arange(b, dtype=_dtypes.int64, device=dev)
        pos = _w("minimum", asarray(cstart.astype(np.int64)[:, None], device=dev) + lane[None, :], n - 1)
        valid = _w("less", lane[None, :], asarray(clen.astype(np.int64)[:, None], device=dev))
        vals = take(x, pos, axis=-1)                        # (..., chunks, b)
        pad = full((), _identity(name, dt), dtype=dt, device=dev)
        x = _reduce_rows(_w("where", valid, vals, pad), name, dt)
        starts, lengths = first.astype(np.int64), per.astype(np.int64)


def _indices(indices: Any) -> np.ndarray:
    """reduceat's indices as NumPy converts them (a parameter: read on the host)."""
    if isinstance(indices, GpuArray):
        indices = indices.get()
    if isinstance(indices, np.ndarray):
        if not np.can_cast(indices.dtype, np.intp, "safe"):
            raise TypeError(f"Cannot cast array data from {indices.dtype!r} to {np.dtype(np.intp)!r} "
                            "according to the rule 'safe'")
        return indices.astype(np.intp)
    return np.array(indices, dtype=np.intp)


def reduceat(loop_dtype: Callable[[np.ufunc, np.dtype, Any], np.dtype | None],
             segments: Callable[[np.ufunc, GpuArray, np.ndarray, np.ndarray], GpuArray | str | None]
             ) -> Callable[..., Any]:
    """``ufunc.reduceat(a, indices, axis=0, dtype=None, out=None)`` for a GpuArray ``a``, NumPy's checks and
    rules (``indices[i] >= indices[i + 1]`` gives ``a[indices[i]]``): ``loop_dtype(ufunc, want, device)``
    the dtype to compute NumPy's loop dtype ``want`` in (None: the host), ``segments(ufunc, x, starts,
    lengths)`` the values of the segments along ``x``'s last axis (None: the host; a string: the host, for that
    reason)."""
    def impl(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
        if len(inputs) != 2 or set(kwargs) - {"axis", "dtype", "out"}:
            return _FALLBACK
        a, indices = inputs
        axis, dtype, out = kwargs.get("axis", 0), kwargs.get("dtype"), kwargs.get("out")
        out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if not isinstance(a, GpuArray) or out is not None and not isinstance(out, GpuArray):
            return _FALLBACK
        idx = _indices(indices)
        # NumPy checks the indices' shape, axis, dtype= and a 0-d a on a one-element stand-in
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe = np.zeros((1,) * a.ndim, a.dtype)
            if idx.ndim != 1:
                ufunc.reduceat(probe, idx, axis=axis, dtype=dtype)
            want = ufunc.reduceat(probe, np.zeros(1, np.intp), axis=axis, dtype=dtype).dtype
        mw = loop_dtype(ufunc, np.dtype(want), a.device)
        if mw is None:
            return _FALLBACK
        ax = normalize_axis_index(int(axis), a.ndim)
        n = a.shape[ax]
        bad = np.flatnonzero((idx < 0) | (idx >= n))
        if bad.size:
            raise IndexError(f"index {idx[bad[0]]} out-of-bounds in {ufunc.__name__}.reduceat [0, {n})")
        shape = a.shape[:ax] + (idx.size,) + a.shape[ax + 1:]
        if idx.size == 0 or a.size == 0:
            r = full(shape, 0, dtype=mw, device=a.device)
        else:
            ends = np.append(idx[1:], n)
            lengths = np.where(ends > idx, ends - idx, 1).astype(np.int64)
            x = _m.moveaxis(a if a.dtype == mw else a.astype(mw), ax, -1)
            got = segments(ufunc, x, idx.astype(np.int64), lengths)
            if got is None:
                return _FALLBACK
            if isinstance(got, str):            # the host by choice: why, for the fallback's message
                return host_ufunc(ufunc, "reduceat", inputs, kwargs, a.device, reason=got)
            r = _m.moveaxis(got, -1, ax)
        if out is not None:
            return _into_out(r, out, ufunc.__name__)
        return r
    return impl


def _reduce_dtype(ufunc: np.ufunc, want: np.dtype, device: Any) -> np.dtype | None:
    """A segmented reduction's dtype: ``_map_dtype``'s; complex only for ``add`` and ``multiply``."""
    mw = _map_dtype(want, device)
    return None if mw is None or mw.kind == "c" and ufunc.__name__ not in ("add", "multiply") else mw


for _name in _REDUCE:
    register_ufunc_method(_name, "reduceat", reduceat(
        _reduce_dtype, lambda ufunc, x, starts, lengths: segmented_reduce(x, starts, lengths, ufunc.__name__)))


# ============================================================ unique along an axis
def _sort_rows(rows: GpuArray) -> GpuArray:
    """The permutation sorting the rows of the 2-D ``rows`` lexicographically (stable; NaN last,
    -0.0 equal to 0.0, as NumPy's structured comparison)."""
    n, m = rows.shape
    perm = arange(n, dtype=_dtypes.int64, device=rows.device)
    for c in reversed(range(m)):
        key = take(rows[:, c], perm)
        if key.dtype.kind == "f":
            key = _w("where", _w("equal", key, 0), 0.0, key)    # -0.0 sorts with 0.0
        perm = take(perm, argsort(key, stable=True))
    return perm


@register_array(np.unique, arg="ar")
def _unique(ar: GpuArray, p: dict) -> Any:
    """``numpy.unique``; with ``axis=`` on an array of two or more dimensions, on the device."""
    axis = p["axis"]
    if axis is None or ar.ndim == 1:
        if axis is not None:
            normalize_axis_index(axis, ar.ndim)
        return _sorting._unique({**p, "axis": None})
    try:
        ax = normalize_axis_index(axis, ar.ndim)
    except np.exceptions.AxisError:
        raise np.exceptions.AxisError(axis, ar.ndim) from None
    if ar.size == 0 or ar.dtype.kind not in "biuf":
        return _FALLBACK
    dev = ar.device
    moved = _m.moveaxis(ar, ax, 0)
    n, rest = moved.shape[0], moved.shape[1:]
    rows = _m.reshape(moved, (n, -1))
    perm = _sort_rows(rows)
    srt = take(rows, perm, axis=0)
    diff = _st.any(_w("not_equal", srt[1:], srt[:-1]), axis=1)      # NaN != NaN: rows with NaN stay apart
    mask = _m.concat([full((1,), True, dtype=_dtypes.bool_, device=dev), diff])
    (first,) = nonzero(mask)
    ip = _map_dtype(np.dtype(np.intp), dev) or dev.default_int
    uniq = _m.moveaxis(_m.reshape(take(srt, first, axis=0), (first.shape[0],) + rest), 0, ax)
    out: list[Any] = [uniq]
    if p["return_index"]:
        out.append(take(perm, first).astype(ip))
    if p["return_inverse"]:
        run = _st.cumulative_sum(mask.astype(ip)) - 1
        out.append(take(run, argsort(perm, stable=True)).astype(ip))
    if p["return_counts"]:
        ends = _m.concat([first[1:].astype(ip), full((1,), n, dtype=ip, device=dev)])
        out.append(ends - first.astype(ip))
    return out[0] if len(out) == 1 else tuple(out)


# ============================================================ trim_zeros
@register_array(np.trim_zeros, arg="filt")
def _trim_zeros(filt: GpuArray, p: dict) -> Any:
    trim, axis = p["trim"], p["axis"]
    if not isinstance(trim, str):
        return _FALLBACK
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = tuple(range(filt.ndim)) if axis is None else normalize_axis_tuple(axis, filt.ndim, argname="axis")
    if not axes:
        return filt
    dev = filt.device
    bounds: list[tuple[int, int]] = []
    if filt.size:
        nz = filt.astype(_dtypes.bool_) if filt.dtype.kind != "b" else filt
        parts = []
        for d in axes:
            others = tuple(k for k in range(filt.ndim) if k != d)
            v = _st.any(nz, axis=others) if others else nz
            i = arange(filt.shape[d], dtype=_dtypes.int64, device=dev)
            parts += [_st.min(_w("where", v, i, filt.shape[d])), _st.max(_w("where", v, i, -1))]
        got = [int(t) for t in np.asarray(_m.stack(parts))]      # one transfer
        bounds = [(got[2 * k], got[2 * k + 1] + 1) for k in range(len(axes))]
    if not bounds or bounds[0][1] == 0:                          # all zero: every trimmed axis empty
        bounds = [(0, 0)] * len(axes)
    else:
        bounds = [(lo if "f" in trim else 0, hi if "b" in trim else filt.shape[d])
                  for (lo, hi), d in zip(bounds, axes)]
    where = dict(zip(axes, bounds))
    sl = tuple(slice(*where[d]) if d in where else slice(None) for d in range(filt.ndim))
    return filt[sl[0]] if len(sl) == 1 else filt[sl]
