"""Set functions: unique_values, unique_counts, unique_inverse, unique_all.

Their output shapes depend on the data, so they evaluate at once. On a GPU everything stays on
``x``'s device: a stable ``sort`` (``argsort`` and a gather where indices are asked for) of the
flattened array, the flags where runs of equal values start (``sv[1:] != sv[:-1]``), their
positions by stream compaction (the one wait: for their count), the values and first indices
gathered there, counts as differences of the positions, inverse indices as the running count of
run starts scattered back through the permutation. (Before, the sorted values came down to the
host: 8 MB per call for scikit-learn's 2^20 int64 labels, four times per LogisticRegression fit.)
On the in-process provider, and for complex values (lexicographic order, which the sort kernels do
not have), the step after the sort runs on the host. Values come out sorted; NaNs are
distinct (each its own value, count 1); ``-0.0`` and ``0.0`` are one value,
reported as the one that occurs first. Index arrays have the default integer
dtype.

>>> import gpuarray as xp
>>> r = xp.unique_counts(xp.asarray([3, 1, 3, 3], device="cpu"))
>>> r.values.tolist(), r.counts.tolist()
([1, 3], [1, 3])
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

import numpy as np

from ..array_object.array import GpuArray, expect_array
from ..graph import views
from ..runtime.planner import evaluate_nodes
from .creation import asarray, ones, zeros
from .indexing import take
from .manipulation import concat
from .searching_sorted import nonzero
from .sorting import argsort, sort
from .statistical import cumulative_sum


class UniqueAllResult(NamedTuple):
    values: GpuArray
    indices: GpuArray
    inverse_indices: GpuArray
    counts: GpuArray


class UniqueCountsResult(NamedTuple):
    values: GpuArray
    counts: GpuArray


class UniqueInverseResult(NamedTuple):
    values: GpuArray
    inverse_indices: GpuArray


def _check(x: Any, name: str) -> GpuArray:
    return expect_array(x, f"{name}")


def _flat(x: GpuArray) -> GpuArray:
    return GpuArray(views.reshape(x._node, (x.size,)))


def _starts(sv: np.ndarray) -> np.ndarray:
    """True where a run of equal values starts in sorted ``sv`` (NaN != NaN, so NaNs are distinct)."""
    flags = np.ones(sv.size, dtype=bool)
    if sv.size > 1:
        np.not_equal(sv[1:], sv[:-1], out=flags[1:])
    return flags


def _put(x: GpuArray, host: np.ndarray, dtype: np.dtype) -> GpuArray:
    return asarray(np.asarray(host, dtype=dtype), dtype=dtype, device=x.device)


def _counts(starts: np.ndarray, n: int) -> np.ndarray:
    return np.diff(np.append(np.flatnonzero(starts), n))


def _sorted_with_perm(x: GpuArray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted flat values, stable permutation) with the sort on ``x``'s device.

    Complex values have no order in the standard (``sort`` rejects them); for the set functions
    they are sorted on the host in NumPy's lexicographic order (real part, then imaginary part).
    """
    host = np.asarray(x).reshape(-1)          # evaluates x once; the argsort then reads it
    if x.dtype.kind == "c":
        perm = np.argsort(host, kind="stable")
    else:
        perm = np.asarray(argsort(_flat(x))).astype(np.intp)
    return host[perm], perm


def _sorted(x: GpuArray) -> np.ndarray:
    if x.dtype.kind == "c":
        return np.sort(np.asarray(x).reshape(-1), kind="stable")
    return np.asarray(sort(_flat(x)))


class _Runs(NamedTuple):
    """The sorted flat values of ``x`` on its device, the sorting permutation (or None), and the
    positions where runs of equal values start (evaluated: their count is known)."""
    sv: GpuArray
    perm: GpuArray | None
    flags: GpuArray
    starts: GpuArray


def _on_device(x: GpuArray) -> bool:
    """Whether the whole computation stays on ``x``'s device (a GPU, real values, not empty)."""
    return not x.device.provider.host_memory and x.dtype.kind != "c" and x.size > 0


def _runs(x: GpuArray, with_perm: bool) -> _Runs:
    flat = _flat(x)
    perm = argsort(flat, stable=True) if with_perm else None
    sv = take(flat, perm) if perm is not None else sort(flat)
    first = ones(1, dtype=bool, device=x.device)
    flags = concat([first, sv[1:] != sv[:-1]]) if x.size > 1 else first
    return _Runs(sv, perm, flags, nonzero(flags)[0])


def _device_counts(r: _Runs) -> GpuArray:
    n = asarray([r.sv.size], dtype=r.starts.dtype, device=r.sv.device)
    return concat([r.starts[1:], n]) - r.starts


def _device_inverse(r: _Runs, x: GpuArray) -> GpuArray:
    assert r.perm is not None
    di = x.device.default_int
    inv = zeros(x.size, dtype=di, device=x.device)
    inv[r.perm] = cumulative_sum(r.flags, dtype=di) - 1
    return GpuArray(views.reshape(inv._node, x.shape))


# the unique values of arrays still alive, by their (immutable) nodes: libraries ask for the same
# array's again and again (scikit-learn: five times in a LogisticRegression fit, each a sort)
_UNIQUE: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def unique_values(x: GpuArray, /) -> GpuArray:
    """The unique elements of ``x``, sorted, as a 1-D array (on a GPU remembered while ``x`` lives).

    >>> import gpuarray as xp
    >>> xp.unique_values(xp.asarray([2, 0, 2], device="cpu")).tolist()
    [0, 2]
    """
    x = _check(x, "unique_values")
    if _on_device(x):
        hit = _UNIQUE.get(x._node)
        if hit is not None:
            return GpuArray(hit)
        r = _runs(x, False)
        out = take(r.sv, r.starts)
        evaluate_nodes([out._node])     # (realized: the memo holds no graph that reaches x)
        _UNIQUE[x._node] = out._node
        return out
    sv = _sorted(x)
    return _put(x, sv[_starts(sv)], x.dtype)


def unique_counts(x: GpuArray, /) -> UniqueCountsResult:
    """The unique elements of ``x`` and how often each occurs."""
    x = _check(x, "unique_counts")
    if _on_device(x):
        r = _runs(x, False)
        return UniqueCountsResult(take(r.sv, r.starts), _device_counts(r))
    sv = _sorted(x)
    starts = _starts(sv)
    di = x.device.default_int
    return UniqueCountsResult(_put(x, sv[starts], x.dtype), _put(x, _counts(starts, sv.size), di))


def _inverse(starts: np.ndarray, perm: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    inv = np.empty(perm.size, dtype=np.int64)
    inv[perm] = np.cumsum(starts) - 1
    return inv.reshape(shape)


def unique_inverse(x: GpuArray, /) -> UniqueInverseResult:
    """The unique elements of ``x`` and, for each element of ``x``, the index of its value (shape of ``x``)."""
    x = _check(x, "unique_inverse")
    if _on_device(x):
        r = _runs(x, True)
        return UniqueInverseResult(take(r.sv, r.starts), _device_inverse(r, x))
    sv, perm = _sorted_with_perm(x)
    starts = _starts(sv)
    di = x.device.default_int
    return UniqueInverseResult(_put(x, sv[starts], x.dtype), _put(x, _inverse(starts, perm, x.shape), di))


def unique_all(x: GpuArray, /) -> UniqueAllResult:
    """Unique values, the flat index of each one's first occurrence, inverse indices and counts.

    >>> import gpuarray as xp
    >>> r = xp.unique_all(xp.asarray([5, 3, 5], device="cpu"))
    >>> r.values.tolist(), r.indices.tolist(), r.inverse_indices.tolist(), r.counts.tolist()
    ([3, 5], [1, 0], [1, 0, 1], [1, 2])
    """
    x = _check(x, "unique_all")
    if _on_device(x):
        r = _runs(x, True)
        assert r.perm is not None
        return UniqueAllResult(take(r.sv, r.starts), take(r.perm, r.starts), _device_inverse(r, x),
                               _device_counts(r))
    sv, perm = _sorted_with_perm(x)
    starts = _starts(sv)
    di = x.device.default_int
    return UniqueAllResult(_put(x, sv[starts], x.dtype), _put(x, perm[starts], di),
                           _put(x, _inverse(starts, perm, x.shape), di), _put(x, _counts(starts, sv.size), di))


__all__ = ["unique_values", "unique_counts", "unique_inverse", "unique_all",
           "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult"]
