"""Counting adapters on the ``scatter_add`` kernel kind (``namespace/counting.py``): ``numpy.bincount``,
``numpy.histogram``, ``numpy.histogram2d`` (2-D counts; the rest in ``histograms.py``) and ``numpy.add.at``.

``histogram`` with a number of bins computes each value's bin as NumPy does (the same float
operations in the same dtypes, then the same one-step corrections against the edges; the last bin
includes its right edge, values outside the range and NaN are dropped); its edges come from
``numpy.linspace`` on the host, from the range (nothing read back) or from the data's ``min`` /
``max`` (one ``extremes`` kernel, one transfer), and are kept on the device by value (``kept``),
with the 64-bit scalars of the bin computation: a call with the same bins uploads nothing. With
explicit edges each value's bin is a ``searchsorted`` (edges given on the host are checked there).
``add.at`` rebinds ``a`` (``_aliasing.assign``).

>>> import numpy as np, gpuarray as xp
>>> g = xp.asarray([1.0, 2.0, 2.5, 4.0], device="cpu")
>>> h, e = np.histogram(g, bins=3)
>>> type(h).__name__, h.tolist(), e.tolist()
('GpuArray', [1, 2, 1], [1.0, 2.0, 3.0, 4.0])
>>> c = xp.zeros(3, dtype="int32", device="cpu"); np.add.at(c, [0, 0, 2], 5); c.tolist()
[10, 0, 5]
"""

from __future__ import annotations

import collections
import operator
import threading
import warnings
from typing import Any

import numpy as np

from ...array_object.aliasing import assign
from ...array_object.array import GpuArray
from ...array_object.elementwise import finish
from ...core import dtypes as _dtypes
from ...graph.node import Node, leaf, make
from ...namespace import counting
from ...namespace.creation import asarray
from ...namespace.elementwise import FUNCTIONS as _EW
from ...namespace.manipulation import concat, reshape
from ...namespace.searching_sorted import searchsorted
from ...namespace.statistical import any as _any
from ...namespace.statistical import extremes_array
from ...namespace.statistical import sum as _sum
from ..host import _FALLBACK
from ..registry import register_array
from ..ufuncs import register_ufunc_method

_where = _EW["where"]
_INT_OR_BOOL = frozenset(_dtypes.INTEGER) | {_dtypes.bool_}


@register_array(np.bincount, arg="x")
def _bincount(x: GpuArray, p: dict) -> Any:
    w = p["weights"]
    if x.ndim != 1 or x.dtype not in _INT_OR_BOOL or isinstance(p["minlength"], GpuArray):
        return _FALLBACK            # NumPy's own errors (2-D, float input ...)
    if w is not None and (w.dtype if isinstance(w, GpuArray) else np.asarray(w).dtype).kind not in "biuf":
        return _FALLBACK            # complex weights: NumPy's TypeError
    return counting.bincount(x, weights=w, minlength=p["minlength"])


def _outer_edges(a: GpuArray, range_: Any, ext: Any = None) -> tuple[Any, Any]:
    """NumPy's ``_get_outer_edges``: the range, or the data's extremes (``ext``, or read back: one
    extremes kernel, one read), widened by 0.5 when equal."""
    if range_ is not None:
        first, last = range_
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = counting.extremes(a) if ext is None else ext
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first = first - 0.5
        last = last + 0.5
    return first, last


def _unsigned_subtract(a: Any, b: Any) -> Any:
    """NumPy's ``_unsigned_subtract`` on host scalars / arrays."""
    dt = np.result_type(a, b)
    if dt.kind == "i":
        udt = np.dtype(f"u{dt.itemsize}")
        return np.subtract(np.asarray(a, dtype=dt), np.asarray(b, dtype=dt), casting="unsafe", dtype=udt)
    return np.subtract(a, b, dtype=dt)


def _py(v: Any, dt: np.dtype) -> Any:
    """``v`` converted to ``dt`` as a Python scalar (a weak operand that keeps an array's dtype)."""
    return np.asarray(v).astype(dt)[()].item()


# Small host constants kept on the device by value (bin edges, 64-bit scalars): a histogram called
# again with the same bins uploads nothing, and its kernels bind no buffer made for the call (a
# 64-bit constant of a kernel is one: ``render.wgsl`` ``wide`` values).
_KEPT: collections.OrderedDict[tuple, Node] = collections.OrderedDict()
KEPT_MAX = 64               # arrays kept
KEPT_BYTES = 1 << 18        # larger ones are uploaded for each call (at most 16 MiB kept)
_kept_lock = threading.Lock()


def kept(values: np.ndarray, dev: Any) -> GpuArray:
    """``values`` (a small host array) as a GpuArray on ``dev``, uploaded once per distinct value
    (the ``KEPT_MAX`` most recently used of at most ``KEPT_BYTES`` are kept); a new array each call
    over one shared node."""
    v = np.ascontiguousarray(values)
    if v.nbytes > KEPT_BYTES:
        return asarray(v, device=dev)
    key = (dev.name, v.dtype.str, v.shape, v.tobytes())
    with _kept_lock:
        node = _KEPT.get(key)
        if node is None:
            node = _KEPT[key] = leaf(v.copy(), dev)
            if len(_KEPT) > KEPT_MAX:
                _KEPT.popitem(last=False)
        else:
            _KEPT.move_to_end(key)
    return finish(node)


def _scalar(v: Any, dt: np.dtype, dev: Any) -> Any:
    """``v`` in ``dt`` as an operand: a Python scalar (a kernel parameter), or for a 64-bit dtype a
    0-d array kept on the device (``kept``)."""
    if dt.itemsize == 8 and dt.kind in "iuf":
        return kept(np.asarray(v).astype(dt), dev)
    return _py(v, dt)


def _cmp_dtype(dt: np.dtype, edge: Any) -> np.dtype:
    """The dtype NumPy compares an array of ``dt`` with ``edge`` in (a Python int out of an integer
    dtype's range compares by value: in int64 here)."""
    if type(edge) is int and dt.kind in "iu":
        return np.result_type(dt, np.int64)
    return np.result_type(dt, edge)


def _bin_count(bins: Any) -> int:
    """An integer ``bins`` checked as NumPy does."""
    try:
        nb = operator.index(bins)
    except TypeError:
        raise TypeError("`bins` must be an integer, a string, or an array") from None
    if nb < 1:
        raise ValueError("`bins` must be positive, when an integer")
    return nb


def _equal_edges(a: GpuArray, n: int, range_: Any) -> tuple[Any, Any, np.ndarray]:
    """(first, last, the ``n + 1`` edges) as NumPy's ``_get_bin_edges``: ``numpy.linspace`` over the
    range or the data's extremes, in NumPy's bin dtype (a float one for integer data)."""
    first, last = _outer_edges(a, range_)
    bt = np.result_type(first, last, np.empty(0, a.dtype))
    if bt.kind in "iub":
        bt = np.result_type(bt, float)
    return first, last, np.linspace(first, last, n + 1, endpoint=True, dtype=bt)


def _uniform_bins(a: GpuArray, n: int, range_: Any) -> tuple[Any, np.ndarray]:
    """Each element's bin (int32; -1: dropped) and the edges, as ``numpy.histogram`` computes them.
    The edges are ``numpy.linspace``'s (kept on the device by value: ``kept``); the bins are one
    fused expression of the data."""
    first, last, edges = _equal_edges(a, n, range_)
    bt = edges.dtype
    dev = a.device
    if not dev.supports(bt):
        return _FALLBACK, edges
    denom = _unsigned_subtract(last, first)
    c1, c2 = _cmp_dtype(a.dtype, first), _cmp_dtype(a.dtype, last)
    if not (dev.supports(c1) and dev.supports(c2)):
        return _FALLBACK, edges
    keep = (a.astype(c1) >= _scalar(first, c1, dev)) & (a.astype(c2) <= _scalar(last, c2, dev))
    tmp = a.astype(bt)
    probe = _unsigned_subtract(np.zeros(1, bt), first)
    d1t = probe.dtype
    ft = (probe / denom * n).dtype
    if not dev.supports(ft):
        return _FALLBACK, edges
    f = ((tmp.astype(d1t) - _scalar(first, d1t, dev)).astype(ft) / _scalar(denom, ft, dev)) * _scalar(n, ft, dev)
    ind = f.astype(_dtypes.int32)
    # NumPy's ``indices == n -> n - 1`` for the values kept (in [0, n] there), as a clamp
    ind = _EW["minimum"](_EW["maximum"](ind, 0), n - 1)
    eg = kept(edges, dev)._node

    def edge(i: GpuArray) -> GpuArray:
        # the edge at bin i, i in [0, n] by construction (nothing to check; the kernel clamps too);
        # the gather's node made here, without ``gather``'s fused-size walk of the whole expression
        return finish(make("gather", (eg, i._node), eg.dtype, i.shape, (0, "take"), dev))

    # NumPy's one-step corrections against the edges
    ind = _where(tmp < edge(ind), ind - 1, ind)
    ind = _where((ind != n - 1) & (tmp >= edge(ind + 1)), ind + 1, ind)
    return _where(keep, ind, -1), edges


def _edge_bins(a: GpuArray, edges: GpuArray) -> GpuArray:
    """Each element's bin among explicit ``edges`` (int32; out of range and NaN: dropped)."""
    nb = edges.shape[0] - 1
    s = searchsorted(edges, a, side="right")
    ind = _where((s == nb + 1) & (a == edges[nb]), nb - 1, s - 1)
    return ind.astype(_dtypes.int32)


def _weights(w: Any, a: GpuArray) -> tuple[Any, np.dtype | None]:
    """Weights as a raveled GpuArray and NumPy's result dtype for them (None: no weights)."""
    if w is None:
        return None, None
    g = w if isinstance(w, GpuArray) else asarray(np.asarray(w), device=a.device)
    if g.shape != a.shape:
        raise ValueError("weights should have the same shape as a.")
    return reshape(g, (-1,)), g.dtype


def _hist(idx: GpuArray, nbins: int, w: Any, wt: np.dtype | None, dev: Any) -> GpuArray:
    """Counts (default int) or weight sums (in the default float for float weights, int64 for
    integers, then ``wt``) of the bins ``idx``."""
    if w is None:
        return counting.scatter_add(counting.constant(nbins, 0, dev.default_int, dev), idx, 1)
    assert wt is not None
    st = dev.default_float if wt.kind == "f" else (_dtypes.uint64 if wt == _dtypes.uint64 else dev.default_int)
    r = counting.scatter_add(counting.constant(nbins, 0, st, dev), idx, w.astype(st) if w.dtype != st else w)
    return r.astype(wt) if r.dtype != wt and dev.supports(wt) else r


@register_array(np.histogram, arg="a")
def _histogram(a: GpuArray, p: dict) -> Any:
    bins, range_, density, weights = p["bins"], p["range"], p["density"], p["weights"]
    if a.dtype == _dtypes.bool_ and not isinstance(bins, str) and not isinstance(range_, GpuArray):
        warnings.warn(f"Converting input from bool to {np.uint8} for compatibility.", RuntimeWarning, stacklevel=5)
        a = a.astype(_dtypes.uint8)         # as NumPy does
    if a.dtype.kind not in "iuf" or isinstance(bins, str) or isinstance(range_, GpuArray):
        return _FALLBACK
    if weights is not None:
        wd = weights.dtype if isinstance(weights, GpuArray) else np.asarray(weights).dtype
        if wd.kind not in "iuf":
            return _FALLBACK
    dev = a.device
    flat = reshape(a, (-1,))
    w, wt = _weights(weights, a)
    edges_h: np.ndarray | None = None        # the edges on the host, where they are known there
    if isinstance(bins, GpuArray):
        if bins.ndim != 1:
            raise ValueError("`bins` must be 1d, when an array")
        if bins.shape[0] < 1:
            return _FALLBACK
        if bins.shape[0] > 1 and bool(_any(bins[:-1] > bins[1:])):        # one read
            raise ValueError("`bins` must increase monotonically, when an array")
        nb = bins.shape[0] - 1
        idx = _edge_bins(flat, bins)
        edges: Any = bins
    elif np.ndim(bins) == 1:
        edges_h = np.asarray(bins)
        if edges_h.shape[0] < 1 or edges_h.dtype.kind not in "biuf" or not dev.supports(edges_h.dtype):
            return _FALLBACK
        if np.any(edges_h[:-1] > edges_h[1:]):
            raise ValueError("`bins` must increase monotonically, when an array")
        nb = edges_h.shape[0] - 1
        idx = _edge_bins(flat, kept(edges_h, dev))
        edges = asarray(edges_h, device=dev)
    elif np.ndim(bins) == 0:
        nb = _bin_count(bins)
        idx, edges_h = _uniform_bins(flat, nb, range_)
        if idx is _FALLBACK:
            return _FALLBACK
        edges = asarray(edges_h, device=dev)
    else:
        raise ValueError("`bins` must be 1d, when an array")
    hist = _hist(idx, nb, w, wt, dev)
    if density:
        ft = dev.default_float
        db = (edges[1:] - edges[:-1]).astype(ft) if edges_h is None else \
            kept(np.diff(edges_h).astype(float).astype(ft), dev)
        return hist.astype(ft) / db / _sum(hist).astype(ft), edges
    return hist, edges


@register_array(np.histogram_bin_edges, arg="a")
def _histogram_bin_edges(a: GpuArray, p: dict) -> Any:
    """NumPy's bin edges: an array of edges as given (checked), or ``bins + 1`` equal widths over the
    range or the data's extremes (one extremes kernel, one read), computed as NumPy does."""
    bins, range_, weights = p["bins"], p["range"], p["weights"]
    if a.dtype.kind not in "iuf" or isinstance(bins, str) or isinstance(range_, GpuArray):
        return _FALLBACK                      # bool input and the estimators ("auto", "fd" ...): NumPy's
    if weights is not None and tuple(np.shape(weights)) != a.shape:
        raise ValueError("weights should have the same shape as a.")
    dev = a.device
    if isinstance(bins, GpuArray):
        if bins.ndim != 1:
            raise ValueError("`bins` must be 1d, when an array")
        if bins.shape[0] > 1 and bool(_any(bins[:-1] > bins[1:])):        # one read
            raise ValueError("`bins` must increase monotonically, when an array")
        return bins
    if np.ndim(bins) == 1:
        edges = np.asarray(bins)
        if np.any(edges[:-1] > edges[1:]):
            raise ValueError("`bins` must increase monotonically, when an array")
        return asarray(edges, device=dev) if dev.supports(edges.dtype) else _FALLBACK
    if np.ndim(bins) != 0:
        raise ValueError("`bins` must be 1d, when an array")
    nb = _bin_count(bins)
    edges = _equal_edges(reshape(a, (-1,)), nb, range_)[2]
    if np.any(edges[:-1] >= edges[1:]):
        raise ValueError(f"Too many bins for data range. Cannot create {nb} finite-sized bins.")
    return asarray(edges, device=dev) if dev.supports(edges.dtype) else _FALLBACK


def _histogram2d(p: dict) -> Any:
    """``numpy.histogram2d`` of two 1-D samples with numbers of bins, no weights or density: both
    dimensions' extremes in one read, the bins one ``scatter_add`` (``histograms.py`` registers it and
    takes the other cases)."""
    x, y, bins, range_, density, weights = (p[k] for k in ("x", "y", "bins", "range", "density", "weights"))
    if not (isinstance(x, GpuArray) and isinstance(y, GpuArray)) or x.ndim != 1 or x.shape != y.shape \
            or x.dtype != y.dtype:
        return _FALLBACK
    if x.dtype.kind not in "iuf" or y.dtype.kind not in "iuf" or density or weights is not None:
        return _FALLBACK
    nbs = [bins, bins] if np.ndim(bins) == 0 else list(bins)
    if len(nbs) != 2 or not all(isinstance(b, (int, np.integer)) and b >= 1 for b in nbs):
        return _FALLBACK
    dev = x.device
    ft = dev.default_float
    parts, edges = [], []
    ext: list[Any] = [None, None]
    if range_ is None and x.size:       # both extremes in one read
        mm = np.asarray(concat([extremes_array(x), extremes_array(y)]))
        ext = [(mm[0], mm[1]), (mm[2], mm[3])]
    for d, (s, nb) in enumerate(zip((x, y), nbs)):
        first, last = _outer_edges(s, None if range_ is None else range_[d], ext[d])
        e = np.linspace(first, last, int(nb) + 1)
        ct = np.result_type(s.dtype, e.dtype)
        if not (dev.supports(e.dtype) and dev.supports(ct)):
            return _FALLBACK
        c = searchsorted(kept(e, dev), s, side="right")       # histogramdd: 0 below, nb + 1 above
        c = _where(s.astype(ct) == _scalar(e[-1], ct, dev), c - 1, c)     # compared as NumPy does: in ct
        parts.append(c)
        edges.append(asarray(e, device=dev))
    n0, n1 = int(nbs[0]) + 2, int(nbs[1]) + 2
    lin = (parts[0] * n1 + parts[1]).astype(_dtypes.int32)
    full = counting.scatter_add(counting.constant(n0 * n1, 0, dev.default_int, dev), lin, 1)
    hist = reshape(full, (n0, n1))[1:-1, 1:-1]
    return hist.astype(ft), edges[0], edges[1]


def _add_at(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """``numpy.add.at(a, indices, b)`` for a GpuArray ``a`` and integer (array) indices."""
    if len(inputs) != 3 or kwargs:
        return _FALLBACK
    a, indices, b = inputs
    if not isinstance(a, GpuArray) or a.dtype.kind == "c":
        return _FALLBACK
    key = indices if isinstance(indices, tuple) else (indices,)
    for k in key:
        if isinstance(k, GpuArray):
            if k.dtype not in _dtypes.INTEGER:
                return _FALLBACK
        elif isinstance(k, (slice, type(Ellipsis))) or k is None or np.asarray(k).dtype.kind not in "iu":
            return _FALLBACK
    bk = (b.dtype if isinstance(b, (GpuArray, np.ndarray, np.generic)) else np.asarray(b).dtype).kind
    if bk == "c" or a.dtype.kind in "iu" and bk not in "biu" or a.dtype.kind == "b" and bk != "b":
        return _FALLBACK           # per-element casts (int += float truncates each step): the host's loop
    if len(key) > a.ndim:
        return _FALLBACK
    assign(a, counting.add_at(a, key, b)._node)
    return None


register_ufunc_method("add", "at", _add_at)
