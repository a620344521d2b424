"""Multi-dimensional histograms: ``numpy.histogramdd``, and ``numpy.histogram2d`` where the 2-D fast
path of ``counting.py`` declines (edges given, ``density=``, ``weights=``).

NumPy's algorithm on the device: per dimension the bin edges (``numpy.linspace`` on the host over
the range or the data's extremes, all dimensions' extremes in one read; given edges checked, device
ones with one read), each sample's bin a ``searchsorted`` on the edges (a value on the last edge
counted in the last bin, NaN and values outside dropped), the flat bin index a weighted sum of
them, and the counts (or the sums of the weights) one ``scatter_add``.

>>> import numpy as np, gpuarray as xp
>>> s = xp.asarray([[0.0, 1.0], [1.0, 1.0], [0.5, 0.0]], device="cpu")
>>> h, edges = np.histogramdd(s, bins=2)
>>> h.tolist(), [e.tolist() for e in edges]
([[0.0, 1.0], [1.0, 1.0]], [[0.0, 0.5, 1.0], [0.0, 0.5, 1.0]])
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ...array_object.array import GpuArray
from ...core import dtypes as _dtypes
from ...namespace import counting
from ...namespace import manipulation as _m
from ...namespace.creation import asarray
from ...namespace.searching_sorted import searchsorted
from ...namespace.statistical import extremes_array
from ..host import _FALLBACK
from ..operands import _as_array, _cast, _device, _map_dtype
from ..registry import register
from .counting import _histogram2d as _histogram2d_fast
from .counting import _outer_edges, _scalar, kept

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays


def _sample(sample: Any, dev: Any) -> GpuArray | None:
    """NumPy's ``(N, D)`` sample: a 2-D array as it is, else ``atleast_2d(sample).T``; None where the
    host should take it (no GpuArray, ragged or mixed sequences)."""
    if isinstance(sample, GpuArray):
        if sample.ndim == 2:
            return sample
        s = _m.reshape(sample, (1,) * (2 - sample.ndim) + sample.shape) if sample.ndim < 2 else sample
        return _m.permute_dims(s, tuple(range(s.ndim))[::-1])
    if not isinstance(sample, (list, tuple)) or not any(isinstance(c, GpuArray) for c in sample):
        return None
    cols = [_as_array(c, dev) for c in sample]
    if not cols or any(c.ndim != 1 or c.shape != cols[0].shape for c in cols):
        return None
    dt = np.result_type(*(c.dtype for c in cols))
    return _m.stack([_cast(c, dt) for c in cols], axis=1)


def _scalar_bins(b: Any) -> Any:
    """A 0-d GpuArray number of bins as a host scalar (a parameter, read as NumPy reads it)."""
    return np.asarray(b)[()] if isinstance(b, GpuArray) and b.ndim == 0 else b


def histogramdd(sample: Any, bins: Any, range_: Any, density: Any, weights: Any) -> Any:
    """``numpy.histogramdd``'s ``(hist, edges)`` on the device, or ``_FALLBACK``."""
    dev = _device(sample, weights, bins if isinstance(bins, (list, tuple, GpuArray)) else None)
    s = _sample(sample, dev)
    if s is None or s.dtype.kind not in "iuf" or isinstance(range_, GpuArray):
        return _FALLBACK                  # bool and complex samples: NumPy's own way
    n_samples, d = s.shape
    w = None
    if weights is not None:
        w = _as_array(weights, dev)
        if w.dtype.kind not in "biuf":
            return _FALLBACK              # NumPy's TypeError (bincount's cast of complex weights)
        if w.ndim != 1:
            raise ValueError("object too deep for desired array" if w.ndim else
                             "object of too small depth for desired array")
        if w.shape[0] != n_samples:
            raise ValueError("The weights and list don't have the same length.")
    if isinstance(bins, GpuArray):
        bins = np.asarray(bins)           # a parameter: NumPy reads it on the host too
    try:
        if len(bins) != d:
            raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
    except TypeError:
        bins = d * [bins]
    bins = [_scalar_bins(b) for b in bins]
    if range_ is None:
        range_ = (None,) * d
    elif len(range_) != d:
        raise ValueError("range argument must have one entry per dimension")
    cols = [s[:, i] for i in range(d)]
    auto = [i for i in range(d) if np.ndim(bins[i]) == 0 and range_[i] is None]
    ext: dict[int, Any] = {}
    if auto and n_samples and all(bins[i] >= 1 for i in auto):      # every dimension's extremes, one read
        mm = np.asarray(_m.concat([extremes_array(cols[i]) for i in auto]))
        ext = {i: (mm[2 * k], mm[2 * k + 1]) for k, i in enumerate(auto)}
    edges: list[Any] = []
    host_edges: list[np.ndarray | None] = []
    for i in range(d):
        b = bins[i]
        if np.ndim(b) == 0:
            if b < 1:
                raise ValueError(f"`bins[{i}]` must be positive, when an integer")
            smin, smax = _outer_edges(cols[i], range_[i], ext.get(i))
            try:
                n = operator.index(b)
            except TypeError as exc:
                raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from exc
            e_h = np.linspace(smin, smax, n + 1)
        elif np.ndim(b) == 1:
            if isinstance(b, GpuArray):
                if b.shape[0] == 0 or b.dtype.kind not in "iuf":
                    return _FALLBACK
                if b.shape[0] > 1 and bool(np.asarray(_np.any(_np.greater(b[:-1], b[1:])))):     # one read
                    raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an array")
                edges.append(b)
                host_edges.append(None)
                continue
            e_h = np.asarray(b)
            if e_h.shape[0] == 0 or e_h.dtype.kind not in "iuf":
                return _FALLBACK
            if np.any(e_h[:-1] > e_h[1:]):
                raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an array")
        else:
            raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")
        if not dev.supports(e_h.dtype):
            return _FALLBACK
        edges.append(e_h)
        host_edges.append(e_h)
    nbin = [len(e) + 1 for e in edges]
    total = math.prod(nbin)
    ft = _map_dtype(np.dtype(np.float64), dev)
    if total >= 2 ** 31 or ft is None:
        return _FALLBACK
    flat: Any = None
    stride = 1
    for i in reversed(range(d)):
        e, eh, col = edges[i], host_edges[i], cols[i]
        ct = np.result_type(col.dtype, e.dtype)
        if not dev.supports(ct):
            return _FALLBACK
        ed = kept(eh, dev) if eh is not None else e
        c = searchsorted(_cast(ed, ct), _cast(col, ct), side="right")
        last = _scalar(eh[-1], ct, dev) if eh is not None else _cast(e[-1], ct)
        c = _np.where(_np.equal(_cast(col, ct), last), _np.subtract(c, 1), c).astype(_dtypes.int32)
        term = c if stride == 1 else _np.multiply(c, stride)
        flat = term if flat is None else _np.add(flat, term)
        stride *= nbin[i]
    if flat is None:                       # no dimensions
        return _FALLBACK
    if w is None:
        counts = counting.scatter_add(counting.constant(total, 0, dev.default_int, dev), flat, 1)
    else:
        counts = counting.scatter_add(counting.constant(total, 0, ft, dev), flat, _cast(w, ft))
    hist = _cast(_m.reshape(counts, tuple(nbin))[(slice(1, -1),) * d], ft)
    if density:
        total_sum = _np.sum(hist)
        for i in range(d):
            shape = [1] * d
            shape[i] = nbin[i] - 2
            eh = host_edges[i]
            de = asarray(np.diff(eh), device=dev) if eh is not None else _np.diff(edges[i])
            hist = _np.divide(hist, _m.reshape(de, tuple(shape)))
        hist = _np.divide(hist, total_sum)
    out_edges = [asarray(e, device=dev) if isinstance(e, np.ndarray) else e for e in edges]
    return hist, out_edges


@register(np.histogramdd)
def _histogramdd(p: dict) -> Any:
    return histogramdd(p["sample"], p["bins"], p["range"], p["density"], p["weights"])


@register(np.histogram2d)
def _histogram2d(p: dict) -> Any:
    """The 2-D counting fast path (``counting.py``), else NumPy's ``histogram2d`` over ``histogramdd``."""
    r = _histogram2d_fast(p)
    if r is not _FALLBACK:
        return r
    x, y, bins = p["x"], p["y"], p["bins"]
    if len(x) != len(y):
        raise ValueError("x and y must have the same length.")
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):
        bins = [bins, bins]
    got = histogramdd([x, y], bins, p["range"], p["density"], p["weights"])
    if got is _FALLBACK:
        return _FALLBACK
    hist, edges = got
    return hist, edges[0], edges[1]


__all__ = ["histogramdd"]
