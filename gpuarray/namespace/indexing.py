"""Indexing functions (Array API: indexing category): ``take`` and ``take_along_axis``.

Both are one fusable ``gather`` instruction: each output element reads ``x`` at
an index loaded from ``indices``, so ``take(x * 2, idx) + 1`` is one kernel.

Out-of-range indices raise ``IndexError`` as NumPy does, when ``take`` is
called: indices on the host already (Python lists, NumPy arrays, evaluated
arrays with a host copy) are scanned there; indices that are only on a device
are evaluated and their minimum and maximum read back (one reduction, one
small transfer; it waits for the indices), except where their range is known
by construction (``argsort``, ``argmax``/``argmin``, ``searchsorted`` and
``nonzero`` results and views of them, ``iota``, constants and interval arithmetic over
``+``, ``-``, ``*``, ``minimum``/``maximum``, ``where`` and casts). Where only a part of an index
expression is unbounded (a cast of float labels), that part's extremes are read instead, and
remembered with the part: ``y_int + arange(n) * k`` again costs nothing while ``y_int`` lives.
Both answers are remembered per index array, so taking with the same indices again costs nothing.
Negative values count from the end.

>>> import gpuarray as xp
>>> x = xp.asarray([10, 20, 30], device="cpu")
>>> xp.take(x, xp.asarray([2, 0, -1], device="cpu")).tolist()
[30, 10, 30]
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..array_object.array import GpuArray, expect_array
from ..array_object.bounds import bounded, concat_nodes
from ..array_object.elementwise import finish
from ..core.dtypes import bool_
from ..graph import views
from ..graph.node import Node, const, leaf, make
from ..graph.shapes import broadcast_shapes, normalize_axis
from ..runtime.devices import Device
from .reduce_blocks import alone, blocks_of, past_binding, rows_view
from .statistical import extremes_array


def _arr(x: Any, fn: str) -> GpuArray:
    return expect_array(x, f"{fn}")


def index_dtype(n: int) -> np.dtype:
    """The dtype for indices gpuarray computes itself: int32 unless an axis needs int64."""
    return np.dtype(np.int32) if n < 2**31 else np.dtype(np.int64)


def host_copy(a: GpuArray) -> np.ndarray | None:
    """``a``'s values if they are on the host already (nothing is computed or downloaded)."""
    node = a._node
    if node.realized and node.data.host is not None:
        h = node.data.host
        return h if h.shape == node.shape else h.reshape(node.shape)      # the same object: _extremes
    return None


# (min, max) of read-only index arrays (host copies of device arrays: immutable) by id, with a weak
# reference to tell a new array at a reused address apart: take(x, idx) with the same 2^24 indices
# otherwise scanned them on the host at every call (40 ms on the H200's host)
_EXTREMES: dict[int, tuple[Any, int, int]] = {}
EXTREMES_KEPT = 64
MAX_PARTS = 2           # unbounded parts of an index expression read back on their own (_unknown_parts)


def _scan(idx: np.ndarray) -> tuple[int, int]:
    return int(idx.min()), int(idx.max())


def _extremes(idx: np.ndarray) -> tuple[int, int]:
    """(min, max) of a non-empty integer array, remembered for read-only ones."""
    key = id(idx)
    hit = _EXTREMES.get(key)
    if hit is not None and hit[0]() is idx:
        return hit[1], hit[2]
    lo, hi = _scan(idx)
    if not idx.flags.writeable:
        if len(_EXTREMES) >= EXTREMES_KEPT:
            _EXTREMES.pop(next(iter(_EXTREMES)))
        _EXTREMES[key] = (weakref.ref(idx), lo, hi)
    return lo, hi


def check_bounds(idx: np.ndarray, n: int, axis: int) -> None:
    """IndexError, as NumPy words it, for an index outside [-n, n)."""
    if idx.size == 0:
        return
    lo, hi = _extremes(idx)
    if hi < n and (lo >= -n if idx.dtype.kind == "i" else True):
        return
    bad = idx[(idx < -n) | (idx >= n)] if idx.dtype.kind == "i" else idx[idx >= n]
    if bad.size:
        if n == 0:
            raise IndexError(f"index {bad.flat[0]} is out of bounds for axis {axis} with size 0 "
                             "(cannot take from an empty axis)")
        raise IndexError(f"index {bad.flat[0]} is out of bounds for axis {axis} with size {n}")


# (min, max) of device index arrays by node, with a weak reference to tell a new node at a reused
# address apart (nodes are immutable: their values never change)
_DEVICE_EXTREMES: dict[int, tuple[Any, int, int]] = {}


def _remembered(node: Node) -> tuple[int, int] | None:
    """``node``'s extremes read back before, or None (an entry of a dead node whose address the
    node reuses does not count): by the node, or by its evaluated data, which reshapes of it share
    (``y[:, None]`` of an evaluated ``y`` is a leaf of its own on ``y``'s data at every call)."""
    hit = _DEVICE_EXTREMES.get(id(node))
    if hit is not None and hit[0]() is node:
        return hit[1], hit[2]
    data = _keyed_data(node)
    if data is None:
        return None
    hit = _DEVICE_EXTREMES.get(id(data))
    return (hit[1], hit[2]) if hit is not None and hit[0]() is data else None


def _keyed_data(node: Node) -> Any:
    """The evaluated data whose extremes ``node``'s are (the same values, the same dtype), or None."""
    data = node.data
    return data if data is not None and data.dtype == node.dtype else None


def _remember(node: Node, lo: int, hi: int) -> None:
    """Keep ``node``'s extremes, by the node and by its evaluated data."""
    for key in (node, _keyed_data(node)):
        if key is None:
            continue
        if len(_DEVICE_EXTREMES) >= EXTREMES_KEPT:
            _DEVICE_EXTREMES.pop(next(iter(_DEVICE_EXTREMES)))
        _DEVICE_EXTREMES[id(key)] = (weakref.ref(key), lo, hi)


_RANGES: dict[np.dtype, tuple[float, float]] = {}


def _dtype_range(dtype: np.dtype) -> tuple[float, float]:
    """(min, max) of an integer dtype as floats (``np.iinfo`` builds an object a call: 3 a ``take``)."""
    r = _RANGES.get(dtype)
    if r is None:
        info = np.iinfo(dtype)
        r = _RANGES[dtype] = (float(info.min), float(info.max))
    return r


def known_within(a: GpuArray, lo: int, hi: int) -> bool:
    """Whether every value of the integer array ``a`` is known to lie in ``[lo, hi]`` without reading
    anything back: by construction (``argmax``, ``searchsorted``, ``i % k`` ...) or from extremes read
    before (``_interval``).

    >>> import gpuarray as xp
    >>> known_within(xp.arange(5, device="cpu") % 3, 0, 2)
    True
    """
    r = _known_range(a._node)
    return r is not None and lo <= r[0] and r[1] <= hi


def _known_range(node: Node) -> tuple[int, int] | None:
    """(lo, hi) bounding ``node``'s integer values by construction, or None (see ``_interval``)."""
    if node.dtype.kind not in "iu":
        return None
    lo, hi = _interval(node, 0)
    return (int(lo), int(hi)) if math.isfinite(lo) and math.isfinite(hi) else None


def _interval(node: Node, depth: int) -> tuple[float, float]:
    """Bounds of ``node``'s values (infinite where unknown): argsort along an axis of length L gives
    [0, L), argmax/argmin over L elements [0, L), searchsorted into L values [0, L], a mask's nonzero
    flat indices or coordinates the mask's size or dimension; integer constants their value;
    ``where`` (with the bound its condition puts on a branch that is the compared operand),
    ``minimum``, ``maximum``, ``add``, ``subtract`` and integer casts interval arithmetic; views keep
    the range. ``clip``-ed and ``where``-guarded indices (``histogram``'s bins) are never read back."""
    if node.dtype.kind == "b":
        return 0.0, 1.0
    if node.dtype.kind not in "iu" or depth > 24:
        return -math.inf, math.inf
    op, ins = node.op, node.inputs
    row = None
    while op in ("view", "reshape") and ins:          # (an evaluated node has dropped its inputs)
        base = ins[0]
        if op == "view" and base.op == "compact" and len(base.shape) == 2 and base.shape[1] and \
                node.shape == (base.shape[1],) and node.attrs[0] == (1,):
            row = node.attrs[1] // base.shape[1]        # one row of nonzero's coordinates
        node = base
        op, ins = node.op, node.inputs
    hit = _remembered(node)                             # read back before (``_unknown_parts``)
    if hit is not None:
        return float(hit[0]), float(hit[1])
    lo, hi = _dtype_range(node.dtype)                   # what the dtype holds
    if op == "const":
        v = float(node.attrs[0])
        return v, v
    if op == "argsort":
        return 0.0, float(node.shape[node.attrs[0]] - 1)
    if node.realized and not ins or node.realized and op not in ("compact", "argreduce", "searchsorted"):
        # stored values (an evaluated node drops its inputs): their extremes, read once and remembered
        if math.prod(node.shape) == 0:
            return lo, hi
        e = _stored_extremes(node)
        return float(e[0]), float(e[1])
    if op == "compact" and node.attrs[0] in ("flat", "coords"):     # nonzero's indices of a mask
        dims = ins[0].shape
        if node.attrs[0] == "flat":
            return 0.0, float(math.prod(dims) - 1)
        return 0.0, float((dims[row] if row is not None else max(dims, default=1)) - 1)
    if op == "argreduce":
        return 0.0, float(math.prod(ins[0].shape[a] for a in node.attrs[1]) - 1)
    if op == "searchsorted":
        return 0.0, float(ins[0].shape[0])
    if op == "iota":
        return 0.0, float(max(node.shape[0] - 1, 0))
    if op == "where":
        (tlo, thi), (flo, fhi) = (_guarded(ins[0], b, t, depth) for b, t in ((ins[1], True), (ins[2], False)))
        r = (min(tlo, flo), max(thi, fhi))
    elif op in _INTERVALS:
        r = _INTERVALS[op]([_interval(i, depth + 1) for i in _value_inputs(op, ins)])
    else:
        return lo, hi
    if r[0] < lo or r[1] > hi or max(-r[0], r[1]) >= _EXACT:
        return lo, hi           # it could wrap around (past 2^53 the floats cannot tell: -INT64_MIN is INT64_MAX)
    return r


_EXACT = 2.0 ** 53


def _clip_interval(v: list[tuple[float, float]]) -> tuple[float, float]:
    """``clip(x, lo, hi)`` = ``minimum(maximum(x, lo), hi)`` (``clip_ties``; NumPy gives ``hi`` where lo > hi)."""
    (xl, xh), (ll, lh), (hl, hh) = v
    return min(max(xl, ll), hl), min(max(xh, lh), hh)


def _remainder_interval(v: list[tuple[float, float]]) -> tuple[float, float]:
    """Integer ``a % b`` has ``b``'s sign (NumPy, as Python): in [0, b - 1] for b > 0, at most ``a`` where
    a >= 0; in [b + 1, 0] for b < 0."""
    (al, ah), (bl, bh) = v
    if bl > 0:
        return 0.0, min(bh - 1, ah) if al >= 0 else bh - 1
    if bh < 0:
        return bl + 1, 0.0
    return -math.inf, math.inf


def _floor_divide_interval(v: list[tuple[float, float]]) -> tuple[float, float]:
    """Integer ``a // b`` for a divisor of one sign: monotone in each operand there, so the corners bound it."""
    (al, ah), (bl, bh) = v
    if not (bl > 0 or bh < 0) or not all(abs(t) < _EXACT for t in (al, ah, bl, bh)):
        return -math.inf, math.inf      # (past 2^53 the bounds are not exact integers: a quotient could be off)
    qs = [int(a) // int(b) for a in (al, ah) for b in (bl, bh)]
    return float(min(qs)), float(max(qs))


def _and_interval(v: list[tuple[float, float]]) -> tuple[float, float]:
    """``a & m`` with a non-negative operand ``m``: in [0, m] (two's complement: the sign bit is clear)."""
    tops = [h for lo, h in v if lo >= 0]
    return (0.0, min(tops)) if tops else (-math.inf, math.inf)


def _multiply_interval(v: list[tuple[float, float]]) -> tuple[float, float]:
    (a, b) = v
    ps = [u * w for u in a for w in b if math.isfinite(u * w)]
    return (min(ps), max(ps)) if len(ps) == 4 else (-math.inf, math.inf)


def _abs_interval(v: list[tuple[float, float]]) -> tuple[float, float]:
    (lo, hi), = v
    if lo >= 0:
        return lo, hi
    if hi <= 0:
        return -hi, -lo
    return 0.0, max(-lo, hi)


# op -> the interval of its result from its value inputs' (``_value_inputs``; integer values; a result outside
# the dtype's range is dropped by ``_interval``: -INT_MIN wraps). ``where`` is ``_interval``'s own (its guards).
_INTERVALS: dict[str, Callable[[list[tuple[float, float]]], tuple[float, float]]] = {
    "minimum": lambda v: (min(v[0][0], v[1][0]), min(v[0][1], v[1][1])),
    "maximum": lambda v: (max(v[0][0], v[1][0]), max(v[0][1], v[1][1])),
    "add": lambda v: (v[0][0] + v[1][0], v[0][1] + v[1][1]),
    "subtract": lambda v: (v[0][0] - v[1][1], v[0][1] - v[1][0]),
    "multiply": _multiply_interval, "astype": lambda v: v[0], "positive": lambda v: v[0],
    "clip_ties": _clip_interval, "remainder": _remainder_interval, "floor_divide": _floor_divide_interval,
    "bitwise_and": _and_interval, "abs": _abs_interval, "negative": lambda v: (-v[0][1], -v[0][0]),
    "gather": lambda v: v[0]}           # a gather's values are some of its source's


def _value_inputs(op: str, ins: tuple[Node, ...]) -> tuple[Node, ...]:
    """The inputs whose values ``op``'s result takes its range from: not ``where``'s condition, not a gather's
    indices."""
    return ins[1:] if op == "where" else ins[:1] if op == "gather" else ins


def _unknown_parts(node: Node, depth: int, out: list[Node]) -> None:
    """The unevaluated integer subexpressions of ``node`` that ``_interval`` cannot bound (a cast
    from floats, an op it does not follow), in ``out``: their extremes, read back once and
    remembered per node, bound the whole. (scikit-learn's multinomial loss takes at
    ``y_int + arange(n) * k`` at every evaluation: only ``y_int``, held across evaluations, is read.)"""
    while node.op in ("view", "reshape") and node.inputs:
        node = node.inputs[0]
    if node.dtype.kind not in "iu" or depth > 24 or node.realized or _remembered(node) is not None:
        return
    op, ins = node.op, node.inputs
    if op in ("const", "argsort", "compact", "argreduce", "searchsorted", "iota"):
        return
    if op == "astype" and ins[0].dtype.kind not in "iub" or op != "where" and op not in _INTERVALS:
        if all(n is not node for n in out):
            out.append(node)
        return
    for n in _value_inputs(op, ins):
        _unknown_parts(n, depth + 1, out)


def _guarded(cond: Node, branch: Node, taken: bool, depth: int) -> tuple[float, float]:
    """``branch``'s interval where ``where(cond, ...)`` takes it: when ``cond`` compares ``branch``
    with a constant (``branch < k`` ...), that comparison's outcome bounds it."""
    lo, hi = _interval(branch, depth + 1)
    if cond.op in _BOUNDS and cond.inputs and cond.inputs[0] is branch and cond.inputs[1].op == "const":
        k = float(cond.inputs[1].attrs[0])
        if not math.isfinite(k):
            return lo, hi
        side, edge = _BOUNDS[cond.op][taken]
        if side == "hi":
            hi = min(hi, math.floor(k) - 1 if edge == "strict" else math.floor(k))
        else:
            lo = max(lo, math.ceil(k) + 1 if edge == "strict" else math.ceil(k))
    return lo, hi


# comparison of (branch, k) -> (bound when true, bound when false): which side and whether strict
_BOUNDS = {"less": {True: ("hi", "strict"), False: ("lo", "")},
           "less_equal": {True: ("hi", ""), False: ("lo", "strict")},
           "greater": {True: ("lo", "strict"), False: ("hi", "")},
           "greater_equal": {True: ("lo", ""), False: ("hi", "strict")}}


def _stored_extremes(node: Node) -> tuple[int, int]:
    """(min, max) of an evaluated non-empty integer node: from its host copy, else read back."""
    h = node.data.host if node.data is not None else None
    if h is not None:
        return _extremes(h)
    return _device_extremes(GpuArray(node))


def _device_extremes(a: GpuArray) -> tuple[int, int]:
    """(min, max) of a non-empty integer array on a device: evaluated, and both read back in one
    transfer; remembered per node."""
    node = a._node
    hit = _remembered(node)
    if hit is not None:
        return hit
    lo, hi = (int(v) for v in np.asarray(extremes_array(a)))      # one extremes kernel, one read
    _remember(node, lo, hi)
    return lo, hi


def check_array_bounds(a: GpuArray, n: int, axis: int) -> None:
    """``check_bounds`` for the index array ``a`` wherever its values are: on the host, bounded by
    construction, or read back from the device (their minimum and maximum only)."""
    if a.size == 0:
        return
    host = host_copy(a)
    if host is not None:
        check_bounds(host, n, axis)
        return
    def inside(lo: int, hi: int) -> bool:
        return hi < n and (lo >= -n or a.dtype.kind == "u")

    known = _known_range(a._node)
    if known is not None and inside(*known):
        return
    parts: list[Node] = []
    _unknown_parts(a._node, 0, parts)
    if parts and parts[0] is not a._node and len(parts) <= MAX_PARTS:
        for part in parts:                       # bounds of the parts, remembered for the next call
            _device_extremes(GpuArray(part))
        known = _known_range(a._node)
        if known is not None and inside(*known):
            return
    if inside(*_device_extremes(a)):             # what the expression's values actually are
        return
    check_bounds(np.asarray(a), n, axis)        # out of bounds: NumPy's message names the first


def host_indices(obj: Any, what: str) -> np.ndarray:
    """A Python sequence or NumPy array of indices as an integer NumPy array."""
    try:
        a = np.asarray(obj)
    except ValueError as exc:
        raise IndexError(f"{what}: indices must be a rectangular array of integers: {exc}") from exc
    if a.size == 0 and not isinstance(obj, np.ndarray) and a.dtype.kind == "f":
        a = a.astype(np.intp)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{what}: indices must have an integer dtype; got {a.dtype}")
    return a


def index_node(indices: Any, device: Device, n: int, axis: int, what: str) -> Node:
    """A graph node of integer indices into an axis of length ``n``, checked when on the host."""
    if isinstance(indices, GpuArray):
        if indices.device != device:
            raise ValueError(f"{what}: indices are on {indices.device.name}, the array on {device.name}")
        if indices.dtype.kind not in "iu":
            raise TypeError(f"{what}: indices must have an integer dtype; got {indices.dtype}")
        check_array_bounds(indices, n, axis)
        return indices._node
    a = host_indices(indices, what)
    check_bounds(a, n, axis)
    return leaf(np.asarray(a, dtype=index_dtype(n)), device)


def gather(x: Node, idx: Node, axis: int, ordered: bool = False) -> Node:
    """``take`` on nodes: ``x`` read at ``idx`` along ``axis`` (indices already checked); by blocks of
    ``x``'s rows where ``x`` is past one binding (``_gather_blocks``; ``ordered``: ``idx`` is 1-D,
    non-negative and increasing, a mask's indices, so that each block's indices are one run of them)."""
    shape = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    lim = past_binding(x) if x.dtype.kind != "c" else None
    parts = blocks_of(x, (0,), lim) if lim else None
    if parts is not None:
        if ordered and axis == 0 and len(idx.shape) == 1:
            return _gather_ordered_blocks(parts, idx, shape)
        return _gather_blocks(parts, idx, axis, shape)
    return bounded(make("gather", (x, idx), x.dtype, shape, (axis, "take"), x.device))


def _gather_ordered_blocks(parts: list[Node], idx: Node, shape: tuple[int, ...]) -> Node:
    """``gather`` along the first axis of an array past one binding, from its blocks of rows ``parts``, at
    increasing indices ``idx``: the indices that fall in each block are one run of ``idx`` (where each
    run starts: one kernel counting the indices below each block's start, read back), and each block
    gathers its run alone, so that its result is its own rows (with any indices, every block gathers at
    all of them: a result past one binding could not be written, and took the host)."""
    dev, it = parts[0].device, idx.dtype
    starts = np.cumsum([0] + [p.shape[0] for p in parts])
    inner = np.asarray(starts[1:-1], dtype=it)
    n = idx.shape[0]
    if len(inner):
        below = make("less", (views.reshape(idx, (n, 1)), leaf(inner.reshape(1, -1), dev)),
                     bool_, (n, len(inner)), (), dev)
        counts = make("reduce", (make("astype", (below,), it, below.shape, (), dev),), it, (len(inner),),
                      ("sum", (0,)), dev)
        ends = [int(v) for v in np.asarray(GpuArray(counts))] + [n]
    else:
        ends = [n]
    out: list[Node] = []
    lo = 0
    for p, s, hi in zip(parts, starts[:-1], ends, strict=True):
        if hi > lo:
            local = rows_view(idx, lo, hi)
            if s:
                local = make("subtract", (local, const(int(s), it, dev)), it, local.shape, (), dev)
            out.append(alone(make("gather", (p, local), p.dtype, (hi - lo, *shape[1:]), (0, "take"), dev)))
        lo = hi
    if not out:
        return leaf(np.zeros(shape, dtype=parts[0].dtype), dev)
    return concat_nodes(out, 0)


def _gather_blocks(parts: list[Node], idx: Node, axis: int, shape: tuple[int, ...]) -> Node:
    """``gather`` of an array past one binding from its blocks of rows ``parts``: along a later axis, each
    block's gather, joined; along the first, each block's gather at its indices clamped into it, taken
    where the index falls in the block (each block's gather a kernel of its own, ``reduce_blocks.alone``, binding its
    block's window: fused, the gathers bound the whole array)."""
    if axis:
        return concat_nodes([alone(gather(p, idx, axis)) for p in parts], 0)
    dev, it = parts[0].device, idx.dtype
    out: Node | None = None
    ones = (1,) * (len(shape) - len(idx.shape))
    start = 0
    for p in parts:
        n = p.shape[0]
        lo, hi = const(start, it, dev), const(start + n, it, dev)
        local = make("minimum", (make("maximum", (make("subtract", (idx, lo), it, idx.shape), const(0, it, dev)),
                                       it, idx.shape), const(n - 1, it, dev)), it, idx.shape)
        g = alone(make("gather", (p, local), p.dtype, shape, (0, "take"), dev))
        inside = make("logical_and", (make("greater_equal", (idx, lo), bool_, idx.shape),
                                      make("less", (idx, hi), bool_, idx.shape)), bool_, idx.shape)
        inside = views.broadcast_to(views.reshape(inside, idx.shape + ones), shape)
        out = g if out is None else make("where", (inside, g, out), p.dtype, shape)
        start += n
    assert out is not None
    return out


def take(x: GpuArray, indices: Any, /, *, axis: int | None = None) -> GpuArray:
    """Elements of ``x`` at ``indices`` along ``axis`` (``x`` flattened when ``axis`` is None).

    ``indices`` may have any number of dimensions (as in NumPy); the result has
    shape ``x.shape[:axis] + indices.shape + x.shape[axis + 1:]``.
    """
    x = _arr(x, "take")
    node = x._node
    if axis is None:
        if x.ndim != 1:
            node = views.reshape(node, (x.size,))
        ax = 0
    else:
        ax = normalize_axis(axis, x.ndim)
    idx = index_node(indices, x.device, node.shape[ax], ax, "take")
    return finish(gather(node, idx, ax))


def take_along_axis(x: GpuArray, indices: Any, /, *, axis: int = -1) -> GpuArray:
    """``out[..., j, ...] = x[..., indices[..., j, ...], ...]`` along ``axis``.

    ``x`` and ``indices`` have the same number of dimensions; the other axes broadcast.
    """
    x = _arr(x, "take_along_axis")
    if not isinstance(indices, GpuArray):
        indices = host_indices(indices, "take_along_axis")
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices and x must have the same number of dimensions; "
                         f"got {indices.ndim} and {x.ndim}")
    ax = normalize_axis(axis, x.ndim)
    xs = x.shape[:ax] + (1,) + x.shape[ax + 1:]
    is_ = indices.shape[:ax] + (1,) + indices.shape[ax + 1:]
    try:
        common = broadcast_shapes(xs, is_)
    except ValueError as exc:
        raise ValueError(f"take_along_axis: shapes {x.shape} and {indices.shape} do not broadcast "
                         f"outside axis {ax}") from exc
    idx = index_node(indices, x.device, x.shape[ax], ax, "take_along_axis")
    out_shape = common[:ax] + (indices.shape[ax],) + common[ax + 1:]
    xb = views.broadcast_to(x._node, common[:ax] + (x.shape[ax],) + common[ax + 1:])
    ib = views.broadcast_to(idx, out_shape)
    return finish(bounded(make("gather", (xb, ib), x.dtype, out_shape, (ax, "along"), x.device)))
