"""Scatter-add and what is built on it: ``scatter_add``, ``bincount``, ``add_at``; ``scatter_reduce``
(the same kernel kind with max / min / fmax / fmin / and / or / xor in place of the sum).

``scatter_add(base, idx, val)`` is one ``scatter_add`` node: ``base`` (1-D) with ``val[i]`` added at
``idx[i]``, indices outside ``[0, len(base))`` dropped. On a GPU device the sums are atomics for
int32 / uint32 / int64 / uint64 / float32 (float32 sums land in a nondeterministic order: within
rounding of NumPy's sequential sum); other dtypes (float64) are summed deterministically over the
indices sorted first (``argsort``, stable), by a segmented sum. Narrow integers and bool are summed
in 32 bits and wrapped (or tested for non-zero) afterwards.

``bincount`` checks its input as NumPy does, which needs one read of its extremes
(``statistical.extremes_array``: one ``extremes`` kernel, one small transfer of the two values);
``add_at`` (and ``ufunc.at``) check their indices with ``indexing.check_array_bounds``: a device
index array's extremes are read once and remembered, so a repeated call reads nothing.

>>> import gpuarray as xp
>>> x = xp.asarray([0, 1, 1, 3], device="cpu")
>>> bincount(x).tolist(), bincount(x, minlength=6).shape
([1, 2, 0, 1], (6,))
>>> scatter_add(xp.zeros(3, dtype="float32", device="cpu"), x, 1.0).tolist()
[1.0, 2.0, 0.0]
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..array_object.array import GpuArray, expect_array
from ..array_object.elementwise import _coerce, finish
from ..core import dtypes as _dtypes
from ..graph.node import make
from ..render.wgsl_scatter_reduce import ATOMIC_REDUCE
from .creation import asarray, full, zeros
from .elementwise import FUNCTIONS as _EW
from .indexing import check_array_bounds, take
from .manipulation import broadcast_to, reshape
from .sorting import argsort
from .statistical import extremes_array

# the dtype each result dtype is summed in on the device (the kernel kind has 32- and 64-bit sums)
SUM_DTYPE: dict[np.dtype, np.dtype] = {
    _dtypes.bool_: _dtypes.uint32, _dtypes.int8: _dtypes.int32, _dtypes.int16: _dtypes.int32,
    _dtypes.uint8: _dtypes.uint32, _dtypes.uint16: _dtypes.uint32,
}
SCATTER_DTYPES = frozenset({*SUM_DTYPE, _dtypes.int32, _dtypes.uint32, _dtypes.int64, _dtypes.uint64,
                            _dtypes.float32, _dtypes.float64})       # scatter_reduce's
ATOMIC = frozenset({_dtypes.int32, _dtypes.uint32, _dtypes.int64, _dtypes.uint64, _dtypes.float32})
_where = _EW["where"]


def _array(x: Any, dev: Any) -> GpuArray:
    """``x`` (a GpuArray, NumPy array, list or scalar) as a GpuArray on ``dev``."""
    return x if isinstance(x, GpuArray) else asarray(np.asarray(x), device=dev)


def _operand(x: Any, dev: Any) -> Any:
    """A GpuArray, or a Python scalar kept as it is (weak)."""
    if isinstance(x, (list, tuple)):
        return asarray(np.asarray(x), device=dev)
    return _coerce(x, dev)


def _narrow(c: Any) -> np.dtype:
    """The dtype a constant is made in: a 64-bit one that a 32-bit one holds exactly in int32 /
    uint32 / float32 (then widened in the kernel: a 64-bit constant is a buffer made for each
    dispatch), else its own."""
    dt = c.dtype
    if dt.itemsize == 8 and dt.kind in "iu":
        nt = _dtypes.uint32 if dt.kind == "u" else _dtypes.int32
        if np.iinfo(nt).min <= int(c) <= np.iinfo(nt).max:
            return nt
    if dt == _dtypes.float64:
        with np.errstate(over="ignore"):
            if np.float32(c) == c or np.isnan(c):
                return _dtypes.float32
    return dt


def constant(shape: tuple[int, ...] | int, value: Any, dtype: np.dtype, device: Any) -> GpuArray:
    """``full(shape, value, dtype)`` with a 64-bit ``value`` that fits 32 bits made as a 32-bit
    parameter and widened (``_narrow``): the zeros a sum starts from, the 1 that ``bincount`` counts."""
    c = np.asarray(value).astype(dtype)[()]
    nt = _narrow(c)
    v = full(shape, c.item(), dtype=nt, device=device)
    return v.astype(dtype) if nt != dtype else v


def _flat_indices(idx: GpuArray, n: int, in_range: bool) -> GpuArray:
    """``idx`` flattened as int32, 64-bit ones outside ``[0, n)`` made ``n`` (dropped) before narrowing
    unless ``in_range``."""
    flat_i = reshape(idx, (-1,))
    if flat_i.dtype.itemsize == 8 and not in_range:
        # 64-bit indices out of range must stay out of range once narrowed to int32: len(base) is dropped
        bad = (flat_i > n) if flat_i.dtype.kind == "u" else (flat_i < 0) | (flat_i > n)
        flat_i = _where(bad, n, flat_i)
    return flat_i.astype(_dtypes.int32) if flat_i.dtype != _dtypes.int32 else flat_i


def scatter_add(base: GpuArray, idx: Any, val: Any, in_range: bool = False) -> GpuArray:
    """``base`` (1-D) with ``val[i]`` added at ``idx[i]`` for every ``i`` (``idx`` integer, ``val`` an
    array of ``idx``'s shape or a scalar); indices outside ``[0, len(base))`` are dropped.
    ``in_range``: the caller knows every index lies in ``[0, len(base))`` (``bincount`` read them):
    64-bit indices are narrowed without the guard that keeps dropped ones dropped.

    Integer sums wrap as NumPy's do; bool adds as logical or.

    >>> import gpuarray as xp
    >>> scatter_add(xp.asarray([1, 1], device="cpu"), xp.asarray([1, 1, 5], device="cpu"), 2).tolist()
    [1, 5]
    """
    expect_array(base, "scatter_add")
    if base.ndim != 1:
        raise ValueError(f"scatter_add: base must be one-dimensional; got {base.ndim} dimensions")
    dev = base.device
    idx = _array(idx, dev)
    if idx.dtype not in _dtypes.INTEGER and idx.dtype != _dtypes.bool_:
        raise TypeError(f"scatter_add: indices must be integers; got {idx.dtype}")
    if base.dtype.kind == "c":
        raise TypeError(f"scatter_add: complex dtypes are not supported; got {base.dtype}")
    dt = base.dtype
    sdt = SUM_DTYPE.get(dt, dt)
    val = _operand(val, dev)
    if isinstance(val, GpuArray):
        if val.dtype == _dtypes.bool_ or dt == _dtypes.bool_:
            val = val != 0
        v = val.astype(sdt) if val.dtype != sdt else val
        v = broadcast_to(v, idx.shape) if v.shape != idx.shape else v
    else:
        v = constant(idx.shape, bool(val) if dt == _dtypes.bool_ else val, sdt, dev)
    flat_i = _flat_indices(idx, base.shape[0], in_range)
    flat_v = reshape(v, (-1,))
    b = base.astype(sdt) if sdt != dt else base
    attrs: tuple = ()
    if sdt not in ATOMIC and not dev.provider.host_memory and flat_i.size:
        order = argsort(flat_i, stable=True)         # float64: deterministic sums over sorted keys
        flat_i, flat_v = take(flat_i, order), take(flat_v, order)
        attrs = ("sorted",)
    r = finish(make("scatter_add", (b._node, flat_i._node, flat_v._node), sdt, b.shape, attrs, dev))
    if dt == _dtypes.bool_:
        return r != 0
    return r.astype(dt) if sdt != dt else r


def scatter_reduce(base: GpuArray, idx: Any, val: Any, op: str, in_range: bool = False) -> GpuArray:
    """``base`` (1-D) with ``base[idx[i]] = op(base[idx[i]], val[i])`` for every ``i`` in order, as
    NumPy's ``maximum.at`` / ``minimum.at`` / ``fmax.at`` / ``fmin.at`` / ``bitwise_and.at`` /
    ``bitwise_or.at`` / ``bitwise_xor.at`` leave it (``op``: ``"max"``, ``"min"``, ``"fmax"``,
    ``"fmin"``, ``"and"``, ``"or"``, ``"xor"``; ``"add"`` is ``scatter_add``), NaN and signed zeros
    included, bit for bit. ``val`` (an array of ``idx``'s shape or a scalar) is converted to
    ``base``'s dtype first; indices outside ``[0, len(base))`` are dropped (``in_range``: as
    ``scatter_add``'s). On a GPU device: one atomic an element for 32-bit values (and 64-bit
    and / or / xor, two word atomics), else over the indices sorted first (deterministic).

    >>> import gpuarray as xp
    >>> i, v = xp.asarray([0, 2, 0], device="cpu"), xp.asarray([4.0, 0.0, 3.0], device="cpu")
    >>> scatter_reduce(xp.asarray([1.0, 5.0, -0.0], device="cpu"), i, v, "max").tolist()
    [4.0, 5.0, 0.0]
    >>> scatter_reduce(xp.asarray([6, 7], device="cpu"), i[:2] // 2, 3, "and").tolist()
    [2, 3]
    """
    if op == "add":
        return scatter_add(base, idx, val, in_range)
    if op not in ATOMIC_REDUCE:
        raise ValueError(f"scatter_reduce: op must be one of add, {', '.join(ATOMIC_REDUCE)}; got {op!r}")
    expect_array(base, "scatter_reduce")
    if base.ndim != 1:
        raise ValueError(f"scatter_reduce: base must be one-dimensional; got {base.ndim} dimensions")
    dev, dt = base.device, base.dtype
    idx = _array(idx, dev)
    if idx.dtype not in _dtypes.INTEGER and idx.dtype != _dtypes.bool_:
        raise TypeError(f"scatter_reduce: indices must be integers; got {idx.dtype}")
    if dt not in SCATTER_DTYPES or (op in ("and", "or", "xor") and dt.kind not in "biu"):
        raise TypeError(f"scatter_reduce: {op} of {dt} is not supported")
    if op in ("fmax", "fmin") and dt.kind != "f":
        op = op[1:]                                     # no NaN: fmax is max
    sdt = SUM_DTYPE.get(dt, dt)
    val = _operand(val, dev)
    if isinstance(val, GpuArray):
        v = val.astype(dt) if val.dtype != dt else val
        v = v.astype(sdt) if sdt != dt else v
        v = broadcast_to(v, idx.shape) if v.shape != idx.shape else v
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            v = constant(idx.shape, np.asarray(val).astype(dt)[()], sdt, dev)
    flat_i = _flat_indices(idx, base.shape[0], in_range)
    flat_v = reshape(v, (-1,))
    b = base.astype(sdt) if sdt != dt else base
    attrs: tuple = (op,)
    if sdt not in ATOMIC_REDUCE[op] and not dev.provider.host_memory and flat_i.size:
        order = argsort(flat_i, stable=True)         # 64-bit max / min: deterministic over sorted keys
        flat_i, flat_v = take(flat_i, order), take(flat_v, order)
        attrs = ("sorted", op)
    r = finish(make("scatter_add", (b._node, flat_i._node, flat_v._node), sdt, b.shape, attrs, dev))
    if dt == _dtypes.bool_:
        return r != 0
    return r.astype(dt) if sdt != dt else r


def extremes(x: GpuArray) -> tuple[Any, Any]:
    """``(min(x), max(x))`` as NumPy scalars, read from the device in one small transfer (``x`` not
    empty): one ``extremes`` kernel (one or two dispatches) and one read."""
    mm = np.asarray(extremes_array(x))
    return mm[0], mm[1]


def bincount(x: GpuArray, /, weights: Any = None, minlength: int = 0) -> GpuArray:
    """Occurrences of each value of the non-negative integer array ``x`` (``weights``: their sums), as
    ``numpy.bincount``: length ``max(x) + 1`` or ``minlength``; the default integer dtype, or the
    default float dtype with weights. Reads ``min(x)`` and ``max(x)`` back (one transfer).

    >>> import gpuarray as xp
    >>> w = xp.asarray([0.5, 1.0, 2.0], device="cpu")
    >>> bincount(xp.asarray([2, 0, 2], device="cpu"), weights=w).tolist()
    [1.0, 0.0, 2.5]
    """
    expect_array(x, "bincount")
    if x.ndim != 1:
        raise ValueError(f"bincount: x must be one-dimensional; got {x.ndim} dimensions")
    if x.dtype not in _dtypes.INTEGER and x.dtype != _dtypes.bool_:
        raise TypeError(f"Cannot cast array data from {x.dtype!r} to dtype('int64') according to the rule 'safe'")
    if minlength is None:
        raise TypeError("use 0 instead of None for minlength")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    dev = x.device
    if x.size == 0:             # NumPy: integer zeros, whatever the weights
        return zeros(minlength, dtype=dev.default_int, device=dev)
    lo, hi = extremes(x)
    if lo < 0 or hi >= 2**63:       # NumPy casts uint64 to int64: values past 2**63 - 1 are negative there
        raise ValueError("'list' argument must have no negative elements")
    length = max(minlength, int(hi) + 1)
    if length >= 2**31:
        raise MemoryError(f"bincount: {length} bins are more than this library's 2**31 - 1")
    if weights is None:
        return scatter_add(constant(length, 0, dev.default_int, dev), x, 1, in_range=True)
    w = weights if isinstance(weights, GpuArray) else asarray(np.asarray(weights), device=dev)
    if w.shape != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    if w.dtype.kind == "c":
        raise TypeError(f"Cannot cast array data from {w.dtype!r} to dtype('float64') according to the rule 'safe'")
    ft = dev.default_float
    return scatter_add(constant(length, 0, ft, dev), x, w.astype(ft) if w.dtype != ft else w, in_range=True)


def linear_indices(a: GpuArray, indices: Sequence[Any], name: str = "add_at") -> tuple[GpuArray, tuple[int, ...]]:
    """(the flat positions in ``a`` that ``a[indices]`` names, their shape): ``indices`` are integer
    arrays (or ints) for the leading axes of ``a``, broadcast together, negative ones counting from the
    end, the remaining axes taken whole; IndexError for out-of-bounds ones, as NumPy's ``ufunc.at``
    (``indexing.check_array_bounds``: a device index array's extremes read once and remembered).

    >>> import gpuarray as xp
    >>> lin, shape = linear_indices(xp.zeros((2, 3), device="cpu"), [xp.asarray([1, -2], device="cpu")])
    >>> lin.tolist(), shape
    ([[3, 4, 5], [0, 1, 2]], (2, 3))
    """
    expect_array(a, name)
    dev = a.device
    if len(indices) > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but {len(indices)} were indexed")
    arrs = []
    for ix in indices:
        g = _array(ix, dev)
        if g.dtype not in _dtypes.INTEGER:
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        arrs.append(g)
    shape = np.broadcast_shapes(*(g.shape for g in arrs)) if arrs else ()
    lin: Any = None
    strides = [int(np.prod(a.shape[d + 1:], dtype=np.int64)) for d in range(a.ndim)]
    it = _dtypes.int64 if dev.supports(_dtypes.int64) else _dtypes.int32
    for d, g in enumerate(arrs):
        # IndexError as NumPy raises it: host indices checked there; device ones by their extremes,
        # read once per index array and remembered (a repeated call reads nothing), or known from
        # how they were made (indexing.check_array_bounds)
        check_array_bounds(g, a.shape[d], d)
    for d, g in enumerate(arrs):
        gi = g.astype(it) if g.dtype != it else g
        gi = _where(gi < 0, gi + a.shape[d], gi)
        term = broadcast_to(gi * strides[d] if strides[d] != 1 else gi, shape)
        lin = term if lin is None else lin + term
    rest = a.shape[len(arrs):]
    if lin is None:
        lin = zeros((), dtype=it, device=dev)
    if rest:
        inner = reshape(asarray(np.arange(int(np.prod(rest)), dtype=it), device=dev), rest)
        lin = reshape(lin, shape + (1,) * len(rest)) + inner
        shape = shape + rest
    return broadcast_to(lin, shape), shape


def add_at(a: GpuArray, indices: Sequence[Any], b: Any) -> GpuArray:
    """What ``numpy.add.at(a, indices, b)`` makes of ``a`` (a new array; the caller rebinds ``a``):
    ``indices`` are integer arrays (or ints) for the leading axes of ``a``, broadcast together;
    negative ones count from the end; out-of-bounds ones raise IndexError. ``b`` broadcasts to
    ``a[indices]``'s shape and is converted to ``a.dtype``.

    >>> import gpuarray as xp
    >>> add_at(xp.zeros(3, dtype="int32", device="cpu"), [xp.asarray([0, 2, 0], device="cpu")], 1).tolist()
    [2, 0, 1]
    """
    lin, shape = linear_indices(a, indices)
    val = _operand(b, a.device)
    if isinstance(val, GpuArray):
        if val.dtype.kind == "c" and a.dtype.kind != "c":
            raise TypeError(f"Cannot cast ufunc 'add' output from {val.dtype!r} to {a.dtype!r}")
        val = broadcast_to(val, shape)
    flat = reshape(a, (-1,))
    return reshape(scatter_add(flat, lin, val), a.shape)


__all__ = ["scatter_add", "scatter_reduce", "bincount", "add_at", "linear_indices", "extremes", "constant"]
