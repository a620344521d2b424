"""Ufunc methods on the device for every ufunc: ``ufunc.at`` and the bitwise ``reduce``.

- ``ufunc.at(a, indices[, b])`` (``add.at`` of real dtypes is ``counting.py``'s scatter-add): the
  flat positions ``a[indices]`` names (``counting.linear_indices``: one read of the indices' extremes,
  IndexError as NumPy). ``maximum``, ``minimum``, ``fmax``, ``fmin``, ``bitwise_and`` / ``or`` /
  ``xor`` and (bool) ``logical_and`` / ``or``, where NumPy's loop computes in ``a``'s dtype
  (``_scatter_op``), are then one ``counting.scatter_reduce`` (atomics on a GPU for 32-bit values and
  64-bit and / or / xor; 64-bit max / min over sorted indices), NumPy's result bit for bit. Other
  ufuncs: through a ``scatter_add`` of ones, how often each position occurs (one read of the largest
  count). NumPy applies the ufunc once per index, in order, casting each result to ``a``'s dtype
  ("unsafe"); so does this, in rounds:

  * unary ufuncs: ``c`` applications where a position occurs ``c`` times, all in one fused kernel
    (``where(count >= k, f(x), x)`` for ``k = 1 .. max count``);
  * binary ufuncs, positions all distinct: one gather, the ufunc, one scatter;
  * repeated positions: the index list sorted (stable ``argsort``: occurrences keep their order)
    and, for an exact associative ufunc of ``a``'s own dtype (``maximum``, ``minimum``, ``fmax``,
    ``fmin``, the bitwise and logical ones; ``multiply`` / ``add`` of integers), each run of equal
    positions combined first by a segmented Hillis-Steele scan (``log2`` of the longest run steps),
    its last element then applied once; otherwise round ``k`` applies every position's ``k``-th
    occurrence (the rank inside its run, from a running maximum of the run starts), at most
    ``ROUNDS`` rounds (more: the host's loop, a counted fallback).

  Writes go to a copy with one spare element that the positions left out of a round write to,
  then ``a`` is rebound (``aliasing.assign``: views of ``a`` see it).
- ``bitwise_and`` / ``bitwise_or`` / ``bitwise_xor`` ``.reduce``: one ``reduce`` node of the ``and`` / ``or`` /
  ``xor`` combine (every integer dtype and bool; identities all ones / 0 / 0); ``logical_xor.reduce``: the
  ``xor`` of the truth values, ``.accumulate`` the parity of their running count.
- ``bitwise_and`` / ``bitwise_or`` / ``bitwise_xor`` ``.accumulate``: each bit's running maximum / minimum /
  count parity over the bit planes ``(x >> k) & 1``, put together again.
- ``fmax`` / ``fmin`` ``.reduce`` and ``.accumulate``: the maximum / minimum (a ``scan`` for accumulate)
  of the values with NaN replaced by -inf / +inf, NaN where every value (of the prefix) is NaN.

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray([1.0, 5.0, 2.0], device="cpu")
>>> np.maximum.at(a, [0, 0, 2], [4.0, 3.0, 1.0]); a.tolist()
[4.0, 5.0, 2.0]
>>> int(np.bitwise_or.reduce(xp.asarray([1, 2, 8], device="cpu")))
11
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ...array_object.aliasing import assign
from ...array_object.array import GpuArray
from ...array_object.elementwise import finish
from ...core import dtypes as _dtypes
from ...graph.node import make
from ...namespace import counting
from ...namespace import statistical as _st
from ...namespace.creation import arange, asarray
from ...namespace.indexing import take
from ...namespace.manipulation import broadcast_to, concat, reshape
from ...namespace.sorting import argsort
from ...namespace.statistical import _reduce_node
from ...runtime.planner import evaluate_nodes
from ..host import _FALLBACK
from ..operands import _into_out, _map_dtype, _w
from ..ufuncs import _device_ufunc, register_ufunc_method
from .counting import _add_at

ROUNDS = 64         # most occurrences of one position ``ufunc.at`` applies in rounds on the device
# associative and exact in any order of application (within a run of one position)
ASSOCIATIVE = frozenset({"maximum", "minimum", "fmax", "fmin", "bitwise_and", "bitwise_or", "bitwise_xor",
                         "logical_and", "logical_or", "logical_xor"})
INTEGER_ASSOCIATIVE = frozenset({"add", "multiply"})       # exact (wrapping) for integers only
# ufuncs whose ``at`` is one ``scatter_reduce`` (atomics) when their loop computes in ``a``'s dtype
SCATTER_OPS = {"maximum": "max", "minimum": "min", "fmax": "fmax", "fmin": "fmin", "bitwise_and": "and",
               "bitwise_or": "or", "bitwise_xor": "xor", "logical_and": "and", "logical_or": "or"}


def _key(indices: Any) -> tuple | None:
    """``indices`` as one entry per leading axis (``[]`` as an empty integer array, as NumPy takes
    it), or None where it holds what this path does not take (slices, Ellipsis, None, booleans,
    floats: the host's loop, with NumPy's own errors)."""
    out: list[Any] = []
    for k in indices if isinstance(indices, tuple) else (indices,):
        if isinstance(k, GpuArray):
            if k.dtype not in _dtypes.INTEGER:
                return None
        elif isinstance(k, (slice, type(Ellipsis))) or k is None or isinstance(k, bool):
            return None
        else:
            try:
                h = np.asarray(k)
            except (TypeError, ValueError):
                return None
            if h.size == 0 and h.dtype.kind == "f":
                k = h.astype(np.intp)
            elif h.dtype.kind not in "iu":
                return None
        out.append(k)
    return tuple(out)


def _scan_max(x: GpuArray, op: str = "max", axis: int = 0) -> GpuArray:
    """The running maximum (``op`` ``min``: minimum) of ``x`` along ``axis``."""
    return finish(make("scan", (x._node,), x.dtype, x.shape, (op, axis, False), x.device))


def _shifted(x: GpuArray, s: int) -> GpuArray:
    """``x`` moved ``s`` places to the right (the first ``s`` places repeat ``x``'s first: masked by callers)."""
    return concat([x[:s], x[:-s]]) if s < x.shape[0] else x


def _run_combine(ufunc: np.ufunc, lin: GpuArray, v: GpuArray, longest: int) -> GpuArray:
    """Each element of ``v`` combined with the earlier ones of its run of equal ``lin`` (sorted), in
    order: a segmented Hillis-Steele scan, ``ceil(log2(longest))`` evaluated steps."""
    i = arange(lin.shape[0], dtype=lin.dtype, device=lin.device)
    s = 1
    while s < longest:
        same = _w("logical_and", _w("greater_equal", i, s), _w("equal", _shifted(lin, s), lin))
        step = ufunc(_shifted(v, s), v)
        v = _w("where", same, step if step.dtype == v.dtype else step.astype(v.dtype), v)
        evaluate_nodes([v._node])           # the next step reads it shifted: one kernel a step
        s *= 2
    return v


def _apply(ufunc: np.ufunc, cur: GpuArray, val: Any, dt: np.dtype) -> GpuArray:
    """``ufunc(cur, val)`` (``val`` None: unary) cast to ``dt`` as NumPy casts an ``at`` result ("unsafe")."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = ufunc(cur) if val is None else ufunc(cur, val)
    if not isinstance(r, GpuArray):
        r = asarray(np.asarray(r), device=cur.device)
    return r if r.dtype == dt else r.astype(dt)


def _loop_dtype(ufunc: np.ufunc, dt: np.dtype) -> np.dtype | None:
    """The dtype NumPy's loop for two operands of ``dt`` computes in (None: no loop)."""
    try:
        return np.dtype(ufunc.resolve_dtypes((dt, dt, None))[-1])
    except (TypeError, ValueError):
        return None


def _scatter_op(ufunc: np.ufunc, dt: np.dtype, val: Any) -> str | None:
    """The ``scatter_reduce`` combine that is ``ufunc.at(a, ..., val)`` for ``a`` of ``dt``, where
    NumPy's loop for ``(dt, val's dtype)`` computes in ``dt`` (no per-step cast); else None.

    ``at`` takes a Python scalar as a 0-d array of its own dtype (int64, float64, bool: not weak;
    ``maximum.at`` of uint64 and a Python int loops in float64); an integer loop wider than ``dt``
    over a Python int that ``dt`` holds gives ``dt``'s result (max / min / and / or / xor of values
    in range, cast back), so that one takes the scatter too."""
    op = SCATTER_OPS.get(ufunc.__name__)
    if op is None or dt not in counting.SCATTER_DTYPES:
        return None
    if ufunc.__name__.startswith("logical") and dt != _dtypes.bool_:
        return None                                             # their loops give bool
    if isinstance(val, GpuArray):
        other = val.dtype
    elif isinstance(val, (bool, int, float)):
        other = np.asarray(val).dtype
    else:
        return None
    try:
        loop = np.dtype(ufunc.resolve_dtypes((dt, other, None))[-1])
    except (TypeError, ValueError):
        return None
    if loop == dt:
        return op
    fits = (type(val) is int and dt.kind in "iu" and loop.kind in "iu"
            and np.iinfo(dt).min <= val <= np.iinfo(dt).max)
    return op if fits else None


def ufunc_at(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """``numpy.<ufunc>.at(a, indices[, b])`` for a GpuArray ``a`` (see the module docstring)."""
    if kwargs or len(inputs) != ufunc.nin + 1 or ufunc.nout != 1:
        return _FALLBACK
    a, indices = inputs[0], inputs[1]
    b = inputs[2] if ufunc.nin == 2 else None
    key = _key(indices)
    if not isinstance(a, GpuArray) or key is None or len(key) > a.ndim:
        return _FALLBACK
    if isinstance(b, GpuArray) and b.device != a.device:
        return _FALLBACK
    dev, dt = a.device, a.dtype
    lin, shape = counting.linear_indices(a, key, f"{ufunc.__name__}.at")
    val: Any = None
    if ufunc.nin == 2:
        if isinstance(b, GpuArray):
            val = b
        elif isinstance(b, (bool, int, float, complex)):
            val = b                         # a weak scalar, as NumPy's ufunc call takes it
        else:
            bh = np.asarray(b)
            if _map_dtype(bh.dtype, dev) != bh.dtype:
                return _FALLBACK
            val = asarray(bh, device=dev)
        if isinstance(val, GpuArray):
            val = reshape(broadcast_to(val, shape), (-1,)) if val.shape != shape else reshape(val, (-1,))
    n, size = math.prod(shape), a.size
    if n == 0:
        return None
    flat_lin = reshape(lin, (-1,))
    op = _scatter_op(ufunc, dt, val)
    if op is not None:                                        # one scatter_reduce: atomics, no count read
        r = counting.scatter_reduce(reshape(a, (-1,)), flat_lin, val, op, in_range=True)
        assign(a, reshape(r, a.shape)._node)
        return None
    if val is not None and not isinstance(val, GpuArray):
        # ``at`` takes a Python scalar as a 0-d array of NumPy's dtype for it (int64, float64 ...),
        # not as a weak scalar: maximum.at(float32 0.0, -1e-50) loops in float64 and gives +0.0
        bh = np.asarray(val)
        if _map_dtype(bh.dtype, dev) != bh.dtype:
            return _FALLBACK
        val = reshape(broadcast_to(asarray(bh, device=dev), shape), (-1,))
    count = counting.scatter_add(counting.constant(size, 0, _dtypes.int32, dev), flat_lin, 1)
    most = int(np.asarray(_st.max(count)))                    # the one read: the longest run
    flat_a = reshape(a, (-1,))
    if val is None:                                           # unary: c applications, one fused kernel
        if most > ROUNDS:
            return _FALLBACK
        x = flat_a
        for k in range(1, most + 1):
            x = _w("where", count >= k, _apply(ufunc, x, None, dt), x)
        assign(a, reshape(x, a.shape)._node)
        return None
    ext = concat([flat_a, flat_a[:1]])                        # a spare element for positions left out
    if most == 1:
        ext[flat_lin] = _apply(ufunc, take(flat_a, flat_lin), val, dt)
        assign(a, reshape(ext[:size], a.shape)._node)
        return None
    name = ufunc.__name__
    order = argsort(flat_lin, stable=True)
    srt = take(flat_lin, order)
    vs = take(val, order) if isinstance(val, GpuArray) else val
    spare = asarray(np.asarray(size, dtype=srt.dtype), device=dev)
    assoc = name in ASSOCIATIVE or (name in INTEGER_ASSOCIATIVE and dt.kind in "iub")
    if assoc and isinstance(vs, GpuArray) and vs.dtype == dt and _loop_dtype(ufunc, dt) == dt:
        vs = _run_combine(ufunc, srt, vs, most)
        last = concat([_w("not_equal", srt[1:], srt[:-1]), asarray(np.array([True]), device=dev)])
        tgt = _w("where", last, srt, spare)
        ext[tgt] = _apply(ufunc, take(ext, tgt), vs, dt)
    else:
        if most > ROUNDS:
            return _FALLBACK
        i = arange(n, dtype=srt.dtype, device=dev)
        head = concat([asarray(np.array([True]), device=dev), _w("not_equal", srt[1:], srt[:-1])])
        rank = i - _scan_max(_w("where", head, i, 0))
        for k in range(most):
            tgt = _w("where", rank == k, srt, spare)
            ext[tgt] = _apply(ufunc, take(ext, tgt), vs, dt)
    assign(a, reshape(ext[:size], a.shape)._node)
    return None


# ============================================================ bitwise reductions
def _bit_reduce(op: str) -> Any:
    """``bitwise_<op>.reduce`` (``and``, ``or``, ``xor``) and ``logical_xor.reduce`` (``lxor``): one reduction."""
    def impl(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
        (a,) = inputs
        outs = tuple(kwargs.get("out") or ())
        if (not isinstance(a, GpuArray) or set(kwargs) - {"axis", "dtype", "keepdims", "out"}
                or not all(isinstance(o, GpuArray) and o.device == a.device for o in outs)):
            return _FALLBACK
        axis, keepdims = kwargs.get("axis", 0), bool(kwargs.get("keepdims", False))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = ufunc.reduce(np.zeros((1,) * a.ndim, a.dtype), axis=axis, dtype=kwargs.get("dtype"),
                                keepdims=keepdims).dtype
        mw = _map_dtype(want, a.device)
        if mw is None or mw.kind not in "biu" or (op != "lxor" and a.dtype.kind not in "biu"):
            return _FALLBACK
        axes = normalize_axis_tuple(tuple(range(a.ndim)) if axis is None else axis, a.ndim)
        if op == "lxor":                     # the xor of the truth values
            r = finish(_reduce_node(_w("not_equal", a, 0)._node, "xor", axes, _dtypes.bool_, keepdims))
        else:
            x = a if a.dtype == mw else a.astype(mw)
            r = finish(_reduce_node(x._node, op, axes, mw, keepdims))
        r = r if r.dtype == mw else r.astype(mw)
        return _into_out(r, outs, ufunc.__name__) if outs else r
    return impl


for _name, _op in (("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor"), ("logical_xor", "lxor")):
    register_ufunc_method(_name, "reduce", _bit_reduce(_op))


# ============================================================ NaN-ignoring and parity scans
def _nan_ignoring(op: str, accumulate: bool) -> Any:
    """``fmax`` / ``fmin`` ``.reduce`` and ``.accumulate`` (``op`` ``max`` / ``min``): the maximum of the
    values that are not NaN (NaN replaced by -inf / +inf), NaN where every value (of the prefix) is."""
    def impl(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
        (a,) = inputs
        outs = tuple(kwargs.get("out") or ())
        allowed = {"axis", "dtype", "out"} | (set() if accumulate else {"keepdims"})
        if (not isinstance(a, GpuArray) or a.ndim == 0 or set(kwargs) - allowed or a.dtype.kind not in "biuf"
                or kwargs.get("dtype") not in (None, a.dtype)
                or not all(isinstance(o, GpuArray) and o.device == a.device for o in outs)):
            return _FALLBACK
        axis = kwargs.get("axis", 0)
        axes = normalize_axis_tuple(tuple(range(a.ndim)) if axis is None else axis, a.ndim)
        if any(a.shape[d] == 0 for d in axes) or (accumulate and len(axes) != 1):
            return _FALLBACK                    # NumPy's errors (no identity; accumulate takes one axis)
        if a.dtype.kind != "f":                 # no NaN: maximum / minimum
            if accumulate:
                r = _scan_max(a, op, axes[0])
            else:
                r = (_st.max if op == "max" else _st.min)(a, axis=axes, keepdims=bool(kwargs.get("keepdims")))
            return _into_out(r, outs, ufunc.__name__) if outs else r
        nan = _w("isnan", a)
        x = _w("where", nan, -np.inf if op == "max" else np.inf, a)
        if accumulate:
            seen = _st.cumulative_sum(_w("logical_not", nan).astype(_dtypes.int32), axis=axes[0])
            r = _w("where", _w("equal", seen, 0), np.nan, _scan_max(x, op, axes[0]))
        else:
            keep = bool(kwargs.get("keepdims"))
            m = (_st.max if op == "max" else _st.min)(x, axis=axes, keepdims=keep)
            r = _w("where", _st.all(nan, axis=axes, keepdims=keep), np.nan, m)
        r = r if r.dtype == a.dtype else r.astype(a.dtype)
        return _into_out(r, outs, ufunc.__name__) if outs else r
    return impl


def _xor_accumulate(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """``logical_xor.accumulate``: the parity of the running count of true values (bool)."""
    (a,) = inputs
    outs = tuple(kwargs.get("out") or ())
    if (not isinstance(a, GpuArray) or a.ndim == 0 or set(kwargs) - {"axis", "dtype", "out"}
            or kwargs.get("dtype") not in (None, np.bool_, _dtypes.bool_) or a.dtype.kind == "c"
            or not all(isinstance(o, GpuArray) and o.device == a.device for o in outs)):
        return _FALLBACK
    ax = int(kwargs.get("axis", 0)) % a.ndim
    it = _dtypes.int64 if a.device.supports(_dtypes.int64) else _dtypes.int32
    c = _st.cumulative_sum(_w("not_equal", a, 0).astype(it), axis=ax)
    r = _w("equal", _w("bitwise_and", c, 1), 1)
    return _into_out(r, outs, ufunc.__name__) if outs else r


def _bit_accumulate(op: str) -> Any:
    """``bitwise_<op>.accumulate``: each bit's running maximum (or), minimum (and) or count's parity
    (xor) along the axis, over the bit planes ``(x >> k) & 1``, put together again (``sum`` of
    ``plane << k``: the bits are distinct); bools are the logical accumulations."""
    def impl(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
        (a,) = inputs
        outs = tuple(kwargs.get("out") or ())
        if (not isinstance(a, GpuArray) or a.ndim == 0 or set(kwargs) - {"axis", "dtype", "out"}
                or a.dtype.kind not in "biu" or kwargs.get("dtype") not in (None, a.dtype)
                or not all(isinstance(o, GpuArray) and o.device == a.device for o in outs)):
            return _FALLBACK
        ax = int(kwargs.get("axis", 0)) % a.ndim
        if a.dtype == _dtypes.bool_:
            if op == "xor":
                return _xor_accumulate(ufunc, inputs, kwargs)
            r = _scan_max(a, "max" if op == "or" else "min", ax)
            return _into_out(r, outs, ufunc.__name__) if outs else r
        bits = 8 * a.dtype.itemsize
        k = reshape(arange(bits, dtype=a.dtype, device=a.device), (1,) * a.ndim + (bits,))
        planes = _w("bitwise_and", _w("bitwise_right_shift", reshape(a, a.shape + (1,)), k), 1)
        if op == "xor":
            it = _dtypes.int64 if a.device.supports(_dtypes.int64) else _dtypes.int32
            p = _w("bitwise_and", _st.cumulative_sum(planes.astype(it), axis=ax), 1).astype(a.dtype)
        else:
            p = _scan_max(planes, "max" if op == "or" else "min", ax)
        r = _st.sum(_w("bitwise_left_shift", p, k), axis=-1, dtype=a.dtype)
        return _into_out(r, outs, ufunc.__name__) if outs else r
    return impl


for _name, _op in (("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor")):
    register_ufunc_method(_name, "accumulate", _bit_accumulate(_op))
for _name, _op in (("fmax", "max"), ("fmin", "min")):
    register_ufunc_method(_name, "reduce", _nan_ignoring(_op, False))
    register_ufunc_method(_name, "accumulate", _nan_ignoring(_op, True))
register_ufunc_method("logical_xor", "accumulate", _xor_accumulate)


def _register_at() -> None:
    """``at`` for every NumPy ufunc of one output that runs on the device (``add`` keeps the
    scatter-add for real dtypes)."""
    for name in dir(np):
        uf = getattr(np, name)
        if (isinstance(uf, np.ufunc) and uf.nout == 1 and uf.nin in (1, 2) and uf.__name__ != "add"
                and _device_ufunc(uf.__name__) is not None):            # not isnat: no datetimes
            register_ufunc_method(uf.__name__, "at", ufunc_at)

    def add_at(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
        r = _add_at(ufunc, inputs, kwargs)
        return ufunc_at(ufunc, inputs, kwargs) if r is _FALLBACK else r
    register_ufunc_method("add", "at", add_at)


_register_at()
