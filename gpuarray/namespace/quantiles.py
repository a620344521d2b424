"""Quantiles and medians of sorted slices, on the device: NumPy's ``quantile`` methods as compositions.

NumPy's ``quantile`` finds, for each ``q``, a *virtual index* into the sorted
slice (a formula of the slice's length ``n`` and ``q`` that depends on
``method``), reads the order statistics at its floor and ceiling and
interpolates between them (``_lerp``). Here the sort (``sort``), the reads
(``take`` / ``take_along_axis``) and the interpolation run on the device. The
virtual indices follow NumPy's formulas with NumPy's dtypes: with a known ``n``
(the length of the reduced axes) NumPy computes them, as it computes ``q``
(they are parameters, computed once per (n, q, method) and kept on the device: ``_host_plan``,
``selection.kept``; a warm call uploads and reads nothing); with a per-slice count (the non-NaN
values of ``nanquantile``: NaN sorts last, so a slice's first ``count`` sorted
values are its non-NaN ones) the same formulas run on the device, elementwise.

Over a whole array (``quantile_selected``, ``nanmedian_selected``, ``median_selected``)
the order statistics come from radix selection (``selection.order_statistics``:
one ``select`` kernel for every rank of the call, 7 dispatches for float32,
three reads of the data) instead of a sort; the same formulas read them. H200
before it (sort and gathers): q = 30 of 10^7 float32 1.58 ms wall / 0.70 GPU,
13 dispatches (CuPy 0.353).

>>> import numpy as np, gpuarray as xp
>>> s = sorted_slices(xp.asarray([[3.0, 1.0, 2.0, 4.0]], device="cpu"), (1,))
>>> quantile_sorted(s, np.asarray(0.5), "linear", weak=True).tolist()
[2.5]
>>> quantile_sorted(s, np.asarray([0.0, 0.5]), "lower").tolist()
[[1.0], [2.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..array_object.array import GpuArray
from ..array_object.elementwise import apply, finish
from ..core.ops import OPS
from ..graph import views
from ..graph.views import strided_view
from ..runtime.planner import evaluate_nodes
from .indexing import check_bounds, gather, index_dtype, take_along_axis
from .manipulation import concat, moveaxis, permute_dims, reshape
from .selection import kept, order_statistics
from .sorting import sort
from .statistical import sum as xsum

# NumPy, untyped: its functions dispatch GpuArrays to gpuarray's adapters (NumPy's dtype rules).
# ufuncs whose array API form (``apply``) gives NumPy's result for operands of one dtype and Python
# scalars of its kind; the kinds they take that way (floor / ceil / divide of integers differ)
_SAME_AS_NUMPY = {**dict.fromkeys(("multiply", "subtract", "add", "equal", "less", "greater_equal", "maximum",
                                   "minimum", "remainder", "floor_divide", "isnan", "where"), "iuf"),
                  **dict.fromkeys(("floor", "ceil"), "f"), "logical_and": "b", "logical_not": "b"}


def _ufunc(name: str, *args: Any) -> Any:
    """NumPy's ``name`` on ``args``: through ``apply`` where it agrees with NumPy (``_SAME_AS_NUMPY``: no
    promotion), a few host calls instead of NumPy's dispatch; else NumPy's dispatch."""
    ops = args[1:] if name == "where" else args
    dt = next((a.dtype for a in ops if isinstance(a, GpuArray)), None)
    if dt is None or dt.kind not in _SAME_AS_NUMPY[name] or \
            (name == "where" and not (isinstance(args[0], GpuArray) and args[0].dtype.kind == "b")):
        return getattr(np, name)(*args)
    for a in ops:
        if isinstance(a, GpuArray):
            if a.dtype != dt:
                return getattr(np, name)(*args)
        elif not (type(a) is int and (dt.kind == "f" or -128 * (dt.kind == "i") <= a < 128)
                     or type(a) is float and dt.kind == "f"):    # small ints: they fit every integer dtype
            return getattr(np, name)(*args)
    return apply(OPS[name], *args)


class _Dispatch:
    """``_np.f(...)``: NumPy's ``f``, through ``_ufunc`` for the ufuncs of ``_SAME_AS_NUMPY``."""

    def __getattr__(self, name: str) -> Any:
        if name in _SAME_AS_NUMPY:
            return lambda *args: _ufunc(name, *args)
        return getattr(np, name)


_np: Any = _Dispatch()
Fn = Callable[[Any, Any], Any]
PLAN_CACHE = 64   # host plans of (n, q, method) kept for repeated calls (``_host_plan``)
_PLANS: dict[tuple[Any, ...], tuple[Any, ...]] = {}
_LAYOUTS: dict[tuple[Any, ...], tuple[np.ndarray, list[tuple[int, int]]]] = {}


def _mul(n: Any, q: Any) -> Any:
    """``n * q``, rounded on its own as NumPy rounds it: a device product is evaluated before the
    sums that read it, which a driver that contracts ``a * b + c`` into one rounding (NVIDIA's)
    would otherwise fuse (``5 * 0.2 - 1`` is 0 in NumPy, 5.6e-17 fused: another order statistic)."""
    p = _np.multiply(n, q)
    if isinstance(p, GpuArray):
        evaluate_nodes([p._node])
    return p


def _civ(alpha: float, beta: float) -> Fn:
    """NumPy's ``_compute_virtual_index``: ``n * q + (alpha + q * (1 - alpha - beta)) - 1``."""
    return lambda n, q: _np.subtract(_np.add(_mul(n, q), alpha + q * (1 - alpha - beta)), 1)


def _boundaries(index: Any, at_previous: Fn) -> Any:
    """NumPy's ``_discrete_interpolation_to_boundaries``: floor or floor + 1 by ``at_previous``, at least 0."""
    previous = _np.floor(index)
    res = _np.where(at_previous(_np.subtract(index, previous), index), previous, _np.add(previous, 1))
    return _np.maximum(res.astype(np.intp), 0)


def _linear(n: Any, q: Any) -> Any:
    return _mul(n - 1, q)           # a Python int n stays weak, as in NumPy


# method -> virtual index of (n, q); NumPy's _QuantileMethods, written with functions that dispatch
VIRTUAL_INDEX: dict[str, Fn] = {
    "inverted_cdf": lambda n, q: _boundaries(_np.subtract(_mul(n, q), 1),
                                             lambda g, _: _np.equal(g, 0)),
    "averaged_inverted_cdf": lambda n, q: _np.subtract(_mul(n, q), 1),
    "closest_observation": lambda n, q: _boundaries(
        _np.subtract(_np.subtract(_mul(n, q), 1), 0.5),
        lambda g, i: _np.logical_and(_np.equal(g, 0), _np.equal(_np.remainder(_np.floor(i), 2), 1))),
    "interpolated_inverted_cdf": _civ(0, 1),
    "hazen": _civ(0.5, 0.5),
    "weibull": _civ(0, 0),
    "linear": _linear,
    "median_unbiased": _civ(1 / 3.0, 1 / 3.0),
    "normal_unbiased": _civ(3 / 8.0, 3 / 8.0),
    "lower": lambda n, q: _np.floor(_linear(n, q)).astype(np.intp),
    "higher": lambda n, q: _np.ceil(_linear(n, q)).astype(np.intp),
    "midpoint": lambda n, q: _np.multiply(0.5, _np.add(_np.floor(_linear(n, q)), _np.ceil(_linear(n, q)))),
    "nearest": lambda n, q: _np.around(_linear(n, q)).astype(np.intp),
}
# methods that pick one order statistic (NumPy's fix_gamma None); the others interpolate
TAKE = frozenset({"inverted_cdf", "closest_observation", "lower", "higher", "nearest"})
# NumPy's fix_gamma of the interpolating methods that change the fractional part
FIX_GAMMA: dict[str, Fn] = {
    "averaged_inverted_cdf": lambda g, _: _np.where(_np.equal(g, 0), 0.5, 1.0),
    "midpoint": lambda g, vi: _np.where(_np.equal(_np.remainder(vi, 1), 0), 0.0, 0.5),
}


def sorted_slices(a: GpuArray, axes: Sequence[int]) -> GpuArray:
    """``a`` with the axes ``axes`` moved last, merged into one and sorted (NaN last): shape rest + (n,).

    >>> import gpuarray as xp
    >>> sorted_slices(xp.asarray([[2, 1], [0, 3]], device="cpu"), (0, 1)).tolist()
    [0, 1, 2, 3]
    """
    rest = [i for i in range(a.ndim) if i not in axes]
    x = permute_dims(a, tuple(rest) + tuple(axes)) if a.ndim else a
    x = reshape(x, tuple(a.shape[i] for i in rest) + (-1,))
    return sort(x, axis=-1)


def nan_count(s: GpuArray) -> GpuArray:
    """The non-NaN values of each slice ``s[..., :]`` (default integer dtype), shape rest + (1,)."""
    return xsum(_np.logical_not(_np.isnan(s)), axis=-1, keepdims=True, dtype=s.device.default_int)


def _neighbours(vi: Any, last: Any) -> tuple[Any, Any]:
    """NumPy's ``_get_indexes``: floor and floor + 1 of ``vi``; -1 (the last valid value) at or past
    ``last`` (n - 1), 0 below 0."""
    below, above = _np.less(vi, 0), _np.greater_equal(vi, last)
    previous = _np.floor(vi)
    pair = [_np.where(below, 0, _np.where(above, -1, i)).astype(np.intp) for i in (previous, _np.add(previous, 1))]
    return pair[0], pair[1]


def _gather(s: GpuArray, idx: Any, count: GpuArray | None) -> GpuArray:
    """``s[..., idx]``: host indices (shape (k,), -1 the last) or, with ``count``, device indices of
    shape rest + (k,) (-1: the last non-NaN value); shape rest + (k,)."""
    if count is None:               # host indices in [-n, n) (the formulas clamp them): kept on the device
        n = s.shape[-1]
        check_bounds(idx, n, s.ndim - 1)
        pos = kept(np.asarray(np.where(idx < 0, idx + n, idx), dtype=index_dtype(n)).reshape(-1), s.device)
        return finish(gather(s._node, pos._node, s.ndim - 1))
    top = _np.maximum(_np.subtract(count, 1), 0)
    return take_along_axis(s, _np.minimum(_np.where(_np.less(idx, 0), top, idx), top), axis=-1)


def lerp(a: Any, b: Any, t: Any) -> Any:
    """NumPy's ``_lerp``: ``a + (b - a) * t``, or ``b - (b - a) * (1 - t)`` where ``t >= 0.5``. A host
    array ``t`` is a parameter: it, ``1 - t`` and ``t >= 0.5`` are kept on ``a``'s device."""
    if isinstance(t, float) and isinstance(a, GpuArray) and isinstance(b, GpuArray) and a.dtype == b.dtype \
            and a.dtype.kind == "f":    # one float dtype, a weak t: the operators (NumPy's rules, fewer calls)
        d = b - a
        return b - d * (1 - t) if t >= 0.5 else a + d * t
    diff = _np.subtract(b, a)
    if isinstance(t, float):
        return _np.subtract(b, _np.multiply(diff, 1 - t)) if t >= 0.5 else _np.add(a, _np.multiply(diff, t))
    if isinstance(t, np.ndarray) and isinstance(a, GpuArray) and a.device.supports(t.dtype):
        lo = _np.add(a, _np.multiply(diff, kept(t, a.device)))
        hi = _np.subtract(b, _np.multiply(diff, kept(np.subtract(1, t), a.device)))
        return _np.where(kept(np.greater_equal(t, 0.5), a.device), hi, lo)
    lo = _np.add(a, _np.multiply(diff, t))
    return _np.where(_np.greater_equal(t, 0.5), _np.subtract(b, _np.multiply(diff, _np.subtract(1, t))), lo)


def _part(v: GpuArray, start: int, size: int) -> GpuArray:
    """``v[start:start + size]`` of a fresh 1-D array (a view node, without ``__getitem__``'s work)."""
    return finish(strided_view(v._node, (size,), (1,), start))


def _scalar(v: GpuArray) -> GpuArray:
    """The one value of a fresh array ``v`` as a 0-d array (a graph reshape)."""
    return finish(views.reshape(v._node, ()))


def _layout(n: int, idxs: list[Any]) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Ranks for ``select`` and each index list's ``(start, size)`` in its result: the distinct
    ranks, each once, where every list is then a run of consecutive ones (one ``q``, ``median``),
    else the lists one after the other (a vector of ``q``): slices, never a gather of positions."""
    key = (n, *(i.tobytes() for i in idxs), *(i.dtype.str for i in idxs))
    hit = _LAYOUTS.get(key)
    if hit is None:
        hit = _LAYOUTS[key] = _layout_of(n, idxs)
        if len(_LAYOUTS) > PLAN_CACHE:
            _LAYOUTS.pop(next(iter(_LAYOUTS)))
    return hit


def _layout_of(n: int, idxs: list[Any]) -> tuple[np.ndarray, list[tuple[int, int]]]:
    flat = [np.asarray(np.where(i < 0, i + n, i), dtype=np.int32).reshape(-1) for i in idxs]
    ranks, pos = np.unique(np.concatenate(flat), return_inverse=True)
    cuts = np.cumsum([f.size for f in flat])[:-1]
    parts = np.split(pos.reshape(-1), cuts)
    if all(p.size and np.array_equal(p, np.arange(p[0], p[0] + p.size)) for p in parts):
        return ranks, [(int(p[0]), p.size) for p in parts]
    starts = np.concatenate([[0], cuts])
    return np.concatenate(flat), [(int(a), f.size) for a, f in zip(starts, flat)]


class _Sorted:
    """Order statistics read from sorted slices ``s`` (NaN last): gathers."""

    def __init__(self, s: GpuArray) -> None:
        self.s, self.rest, self.n, self.dtype = s, s.shape[:-1], s.shape[-1], s.dtype

    def gather(self, idxs: list[Any], count: GpuArray | None) -> list[GpuArray]:
        return [_gather(self.s, i, count) for i in idxs]

    def last(self) -> GpuArray:
        """The largest value of each slice (NaN where the slice holds one), shape rest + (1,)."""
        return self.s[..., -1:]


class _Selected:
    """Order statistics of a whole array ``x`` by radix selection (``selection.order_statistics``):
    every rank of a call in one ``select`` kernel."""

    def __init__(self, x: GpuArray) -> None:
        self.x, self.rest, self.n, self.dtype = x if x.ndim == 1 else reshape(x, (-1,)), (), x.size, x.dtype
        self.stats: GpuArray | None = None

    def gather(self, idxs: list[Any], count: GpuArray | None) -> list[GpuArray]:
        if count is None:           # host indices (-1: the last): ranks and slices of the result
            ranks, parts = _layout(self.n, idxs)
            self.stats = order_statistics(self.x, ranks)
            return [_part(self.stats, start, size) for start, size in parts]
        top = apply(OPS["maximum"], count - 1, 0)      # integers: the array API's rules are NumPy's
        dev = [apply(OPS["minimum"], apply(OPS["where"], i < 0, top, i), top).astype(np.int32) for i in idxs]
        k = dev[0].shape[0]
        self.stats = order_statistics(self.x, concat(dev) if len(dev) > 1 else dev[0])
        return [_part(self.stats, j * k, k) for j in range(len(dev))]

    def last(self) -> GpuArray:
        """NaN where ``x`` holds a NaN, else 0 (the ``select`` kernel's last value), shape (1,)."""
        if self.stats is None:
            self.stats = order_statistics(self.x, np.zeros(1, np.int32))
        return _part(self.stats, self.stats.shape[0] - 1, 1)


def quantile_sorted(s: GpuArray, q: np.ndarray, method: str, count: GpuArray | None = None,
                    weak: bool = False) -> GpuArray:
    """The ``q`` quantiles (``q`` in [0, 1], any shape) of each sorted slice ``s[..., :]``, shape
    ``q.shape + s.shape[:-1]``. Without ``count`` a slice holding NaN gives NaN (NumPy's
    ``quantile``); with ``count`` (``nan_count``) only the first ``count`` values count and an empty
    slice gives NaN (``nanquantile``). ``weak``: ``q`` was a Python scalar (NumPy's weak promotion).

    >>> import numpy as np, gpuarray as xp
    >>> s = sorted_slices(xp.asarray([1.0, float("nan"), 3.0], device="cpu"), (0,))
    >>> float(quantile_sorted(s, np.asarray(0.5), "linear", nan_count(s), weak=True))
    2.0
    """
    return _quantile(_Sorted(s), q, method, count, weak)


def select_ranks(q: np.ndarray, method: str) -> int:
    """The most ranks that ``quantile_selected`` selects for ``q`` with ``method``."""
    return q.size * (1 if method in TAKE else 2)


def quantile_selected(a: GpuArray, q: np.ndarray, method: str, nan: bool, weak: bool = False) -> GpuArray:
    """``quantile_sorted``'s result over the whole array ``a`` (shape ``q.shape``) by radix selection
    instead of a sort (``selection.can_select(a, select_ranks(q, method))`` must hold); ``nan``:
    NaN values do not count (``nanquantile``).

    >>> import numpy as np, gpuarray as xp
    >>> a = xp.asarray([4.0, 1.0, float("nan"), 2.0], device="cpu")
    >>> quantile_selected(a, np.asarray([0.0, 0.5]), "linear", nan=True).tolist()
    [1.0, 2.0]
    """
    src = _Selected(a)
    count = nan_count(src.x) if nan and a.dtype.kind == "f" else None
    return _quantile(src, q, method, count, weak)


def _quantile(src: Any, q: np.ndarray, method: str, count: GpuArray | None, weak: bool) -> GpuArray:
    """NumPy's ``quantile`` over the order statistics of ``src`` (``_Sorted`` / ``_Selected``)."""
    rest, n = src.rest, src.n
    qf = q.reshape(-1)
    if count is None:                   # parameters: NumPy computes them, once per (n, q, method)
        idxs, t = _host_plan(n, qf, method, weak)
    else:
        nc = count.astype(q.dtype) if q.dtype.kind == "f" else count    # NumPy: a Python int n (weak)
        qd: Any = qf[0] if qf.size == 1 else kept(qf, count.device) if count.device.supports(qf.dtype) else qf
        vi, last = VIRTUAL_INDEX[method](nc, qd), _np.subtract(count, 1)
        idxs, t = [vi], None
        if not (method in TAKE or (method == "linear" and vi.dtype.kind in "iu")):
            previous, following = _neighbours(vi, last)
            g = _np.subtract(vi, previous)
            g = (FIX_GAMMA[method](g, vi) if method in FIX_GAMMA else g).astype(vi.dtype)
            # NumPy's float(gamma) per slice with a weak q: weak, the data's float dtype
            idxs, t = [previous, following], g.astype(np.result_type(src.dtype, 1.0)) if weak else g
    if t is None:
        r = src.gather(idxs, count)[0]
    else:
        lo, hi = src.gather(idxs, count)
        r = lerp(lo, hi, t)
    if src.dtype.kind == "f":
        if count is None:            # a NaN in the slice sorts last and makes the result NaN
            r = nan_where(src.last(), r)
        elif not isinstance(src, _Selected):    # selected: every value of x is NaN, so is r
            r = _np.where(_np.equal(count, 0), np.nan, r)
    if r.ndim == 1 and isinstance(r, GpuArray):    # a fresh result: a graph reshape, no aliasing to track
        return finish(views.reshape(r._node, q.shape + rest))
    return reshape(moveaxis(r, -1, 0) if r.ndim > 1 else r, q.shape + rest)


def _host_plan(n: int, qf: np.ndarray, method: str, weak: bool) -> tuple[list[np.ndarray], Any]:
    """The host indices of the order statistics of ``n`` values for the quantiles ``qf`` (one list
    to take, or the lower and upper neighbours) and the interpolation weight (None: take; a float
    for a weak scalar ``q``; else an array), NumPy's formulas, kept for the last ``PLAN_CACHE`` calls."""
    key = (n, qf.dtype.str, qf.tobytes(), method, weak)
    plan = _PLANS.get(key)
    if plan is None:
        vi = np.asanyarray(VIRTUAL_INDEX[method](n, qf))
        if method in TAKE or (method == "linear" and vi.dtype.kind in "iu"):
            plan = ([vi], None)
        else:
            previous, following = _neighbours(vi, n - 1)
            g = np.subtract(vi, previous)
            g = (FIX_GAMMA[method](g, vi) if method in FIX_GAMMA else g).astype(vi.dtype)
            plan = ([previous, following], float(g.reshape(())) if weak else g)
        if len(_PLANS) >= PLAN_CACHE:
            _PLANS.pop(next(iter(_PLANS)))
        _PLANS[key] = plan
    return plan


def nan_where(v: GpuArray, r: Any) -> Any:
    """``where(isnan(v), v, r)`` (``v``: NaN where a slice holds one), through the array API's
    ``where`` where the dtypes agree (fewer host calls than NumPy's dispatch)."""
    if isinstance(r, GpuArray) and r.dtype == v.dtype:
        return apply(OPS["where"], apply(OPS["isnan"], v), v, r)
    return _np.where(_np.isnan(v), v, r)


def nanmedian_sorted(s: GpuArray, count: GpuArray) -> GpuArray:
    """NumPy's ``nanmedian`` of each sorted slice (NaN last) with ``count`` non-NaN values: the middle
    value, or the mean of the middle two; NaN for an empty slice. Shape ``s.shape[:-1]``.

    >>> import gpuarray as xp
    >>> s = sorted_slices(xp.asarray([4.0, float("nan"), 1.0, 2.0], device="cpu"), (0,))
    >>> float(nanmedian_sorted(s, nan_count(s)))
    2.0
    """
    top = _np.maximum(_np.subtract(count, 1), 0)
    lo_i = _np.floor_divide(top, 2)
    lo = take_along_axis(s, lo_i, axis=-1)
    hi = take_along_axis(s, _np.minimum(_np.floor_divide(count, 2), top), axis=-1)
    # NumPy takes the mean of the middle one or two, a sum that starts at +0.0: -0.0 gives +0.0
    lo0 = _np.add(lo, 0.0)
    mid = _np.where(_np.equal(_np.remainder(count, 2), 1), lo0, _np.divide(_np.add(lo0, hi), 2))
    r = _np.where(_np.equal(count, 0), np.nan, mid)
    return reshape(r, s.shape[:-1])


def nanmedian_selected(a: GpuArray) -> GpuArray:
    """``nanmedian_sorted``'s result over the whole float array ``a`` (0-d) by radix selection: the
    non-NaN count, then its middle one or two ranks in one ``select`` kernel.

    >>> import gpuarray as xp
    >>> float(nanmedian_selected(xp.asarray([4.0, float("nan"), 1.0, 2.0], device="cpu")))
    2.0
    """
    x = reshape(a, (-1,))
    count = nan_count(x)
    # ranks (count - 1) // 2 and count // 2 at once; an all-NaN x (count 0) gives rank -1, clamped
    # to 0 by ``select``: its values are NaN, so is the median (NumPy's NaN for an empty slice)
    ranks = ((count + kept(np.asarray([-1, 0], count.dtype), a.device)) // 2).astype(np.int32)
    stats = order_statistics(x, ranks)
    lo, hi = _part(stats, 0, 1), _part(stats, 1, 1)
    lo0 = lo + 0.0          # NumPy's mean of the middle values starts its sum at +0.0: -0.0 gives +0.0
    return _scalar(apply(OPS["where"], count % 2 == 1, lo0, (lo0 + hi) / 2))


def median_selected(a: GpuArray) -> GpuArray:
    """NumPy's ``median`` of the whole array ``a`` (0-d) by radix selection: the mean of ranks
    ``(n - 1) // 2`` and ``n // 2``, NaN where ``a`` holds a NaN.

    >>> import gpuarray as xp
    >>> float(median_selected(xp.asarray([4, 1, 3, 2], device="cpu")))
    2.5
    """
    src = _Selected(a)
    n = src.n
    lo, hi = src.gather([np.asarray([(n - 1) // 2]), np.asarray([n // 2])], None)
    r = _np.mean(concat([lo, hi]) if n % 2 == 0 else lo)     # NumPy's mean: -0.0 gives 0.0, ints float64
    return nan_where(_scalar(src.last()), r) if a.dtype.kind == "f" else r


__all__ = ["VIRTUAL_INDEX", "TAKE", "FIX_GAMMA", "sorted_slices", "nan_count", "lerp", "quantile_sorted",
           "nan_where", "nanmedian_sorted", "select_ranks", "quantile_selected", "nanmedian_selected",
           "median_selected"]
