"""Differential tests of the NumPy interface: one table of NumPy calls, run on ndarrays and on GpuArrays.

Each case draws its inputs with hypothesis (dtypes, shapes, axes, keywords, sometimes invalid
ones) and runs the same call twice: on NumPy arrays, and on the same data as GpuArrays on the
device under test. Then:

- if NumPy raised, gpuarray must raise the same (public) exception type;
- otherwise results must agree: GpuArray where NumPy gives an ndarray or a NumPy scalar, on the
  operands' device, with NumPy's dtype and shape and equal values (floats within a tolerance),
  and Python objects (bools, ints, tuples, lists, dtypes) equal to NumPy's.

Cases marked ``native`` are expected to run on the device: they run under
``config(fallback="raise")``, so a host fallback in the interop layer fails the test. The
``mk`` argument every call gets turns host arrays built inside the call (``out=`` buffers)
into the kind of array of that run.

Bounded for CI: ``EXAMPLES`` examples per case and device, derandomized, no deadline.
``GPUARRAY_DIFF_EXAMPLES=200`` runs more.
"""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import gpuarray as xp  # noqa: E402

EXAMPLES = int(os.environ.get("GPUARRAY_DIFF_EXAMPLES", "6"))

BOOL = [np.dtype(bool)]
INTS = [np.dtype(t) for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")]
FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]
NUMERIC = INTS + FLOATS
ALL = BOOL + NUMERIC
SPECIAL = [np.nan, np.inf, -np.inf, -0.0]


# --------------------------------------------------------------------------- drawing inputs
class Host:
    """An argument that stays a NumPy array in both runs (mixed ndarray / GpuArray operands)."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _elements(dt: np.dtype, special: bool) -> st.SearchStrategy:
    if dt.kind == "b":
        return st.booleans()
    if dt.kind == "c":
        part = st.floats(-100, 100, width=dt.itemsize * 4)
        return st.builds(complex, part, part)
    if dt.kind == "u":
        return st.integers(0, 40)
    if dt.kind == "i":
        return st.integers(-20, 20)
    finite = st.floats(-100, 100, width=dt.itemsize * 8)
    return st.one_of(finite, finite, finite, st.sampled_from(SPECIAL)) if special else finite


class D:
    """Drawing helpers around hypothesis' ``data.draw``."""

    def __init__(self, draw: Callable[..., Any]) -> None:
        self.draw = draw

    def __call__(self, strategy: st.SearchStrategy) -> Any:
        return self.draw(strategy)

    def dtype(self, dtypes: list[np.dtype]) -> np.dtype:
        return self.draw(st.sampled_from(dtypes))

    def shape(self, min_dims: int = 0, max_dims: int = 3, min_side: int = 0, max_side: int = 4) -> tuple[int, ...]:
        return self.draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                          max_side=max_side))

    def array(self, dtypes: list[np.dtype] = ALL, shape: tuple[int, ...] | None = None, special: bool = False,
              **shape_kw: Any) -> np.ndarray:
        dt = self.dtype(dtypes)
        if shape is None:
            shape = self.shape(**shape_kw)
        return self.draw(hnp.arrays(dt, shape, elements=_elements(dt, special)))

    def axis(self, ndim: int, none: bool = True, many: bool = True, bad: bool = True) -> Any:
        options: list[st.SearchStrategy] = []
        if none:
            options.append(st.none())
        if ndim:
            options.append(st.integers(-ndim, ndim - 1))
            if many:
                options.append(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple))
        if bad:
            options.append(st.sampled_from([ndim, -ndim - 1]))
        return self.draw(st.one_of(*options)) if options else None

    def flag(self) -> bool:
        return self.draw(st.booleans())

    def pick(self, *values: Any) -> Any:
        return self.draw(st.sampled_from(values))


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable[..., Any]                       # fn(mk, *args, **kwargs)
    draw: Callable[[D], tuple[tuple, dict]]      # host (args, kwargs)
    native: bool = True
    rtol: float | None = None
    atol: float | None = None
    compare: Callable[[Any], Any] | None = None  # applied to both results before comparing


CASES: list[Case] = []


def case(name: str, fn: Callable[..., Any], draw: Callable[[D], tuple[tuple, dict]], **kw: Any) -> None:
    CASES.append(Case(name, fn, draw, **kw))


def one(dtypes: list[np.dtype] = ALL, special: bool = False, **shape_kw: Any) -> Callable[[D], tuple[tuple, dict]]:
    return lambda d: ((d.array(dtypes, special=special, **shape_kw),), {})


def reduction_kw(d: D, a: np.ndarray, *, dtype: tuple = (), where: bool = True, initial: Any = None,
                 ddof: bool = False) -> dict:
    kw: dict[str, Any] = {}
    axis = d.axis(a.ndim)
    if axis is not None:
        kw["axis"] = axis
    if d.flag():
        kw["keepdims"] = True
    if dtype and d.flag():
        kw["dtype"] = d.pick(*dtype)
    if where and d.pick(0, 0, 1):
        kw["where"] = d.array(BOOL, shape=a.shape[d.pick(0, min(1, a.ndim)):])
    if initial is not None and d.pick(0, 1):
        kw["initial"] = initial
    if ddof:
        kw["ddof"] = d.pick(0, 1, 2)
    return kw


def _defined_cast(a: np.ndarray, kw: dict) -> np.ndarray:
    """Float -> integer casts of NaN and infinities are undefined (C, NumPy): keep them out."""
    if kw.get("dtype") is not None and np.dtype(kw["dtype"]).kind in "iu" and a.dtype.kind == "f":
        return np.asarray(np.nan_to_num(a, nan=0.0, posinf=0.0, neginf=0.0))
    return a


def reduction(np_name: str, dtypes: list[np.dtype] = ALL, method: bool = False, **kw_opts: Any) -> None:
    def draw(d: D) -> tuple[tuple, dict]:
        a = d.array(dtypes, special=d.flag())
        kw = reduction_kw(d, a, **kw_opts)
        return (_defined_cast(a, kw),), kw
    fn = (lambda mk, a, **kw: getattr(a, np_name)(**kw)) if method else \
        (lambda mk, a, **kw: getattr(np, np_name)(a, **kw))
    case(f"{'x.' if method else 'np.'}{np_name}", fn, draw, rtol=2e-4, atol=1e-3)


# --------------------------------------------------------------------------- reductions and scans
for _m in (False, True):
    reduction("sum", method=_m, dtype=(None, np.int64, np.float32, np.int8), initial=3)
    reduction("prod", dtypes=INTS + FLOATS, method=_m, dtype=(np.float64, np.int32), initial=2)
    reduction("mean", dtypes=NUMERIC, method=_m, dtype=(np.float32, np.float64))
    reduction("std", dtypes=NUMERIC, method=_m, ddof=True)
    reduction("var", dtypes=NUMERIC, method=_m, ddof=True)
    reduction("max", dtypes=NUMERIC, method=_m, initial=5)
    reduction("min", dtypes=NUMERIC, method=_m, initial=-5)
    reduction("all", method=_m)
    reduction("any", method=_m)


def _argreduce(d: D) -> tuple[tuple, dict]:
    a = d.array(NUMERIC, special=d.flag())
    kw: dict[str, Any] = {"axis": d.axis(a.ndim, many=False)}
    if d.flag():
        kw["keepdims"] = True
    return (a,), kw


for _name in ("argmax", "argmin"):
    case(f"np.{_name}", lambda mk, a, _n=_name, **kw: getattr(np, _n)(a, **kw), _argreduce)
    case(f"x.{_name}", lambda mk, a, _n=_name, **kw: getattr(a, _n)(**kw), _argreduce)


def _out_reduction(d: D) -> tuple[tuple, dict]:
    a = d.array(NUMERIC, min_dims=1)
    axis = d.pick(0, -1)
    return (a, axis, d.pick(np.float32, np.float64, np.int64)), {}


def _sum_into_out(mk: Any, a: Any, axis: int, dt: Any) -> Any:
    out = mk(np.zeros(np.delete(np.array(a.shape), axis).tolist(), dt))
    r = np.sum(a, axis=axis, out=out)
    assert r is out
    return out


case("np.sum out=", _sum_into_out, _out_reduction, rtol=2e-4, atol=1e-3)


def _scan(d: D) -> tuple[tuple, dict]:
    a = d.array(ALL, special=d.flag())
    kw = {"axis": d.axis(a.ndim, many=False)}
    if d.flag():
        kw["dtype"] = d.pick(np.int64, np.float64, np.float32)
    return (_defined_cast(a, kw),), kw


case("np.cumsum", lambda mk, a, **kw: np.cumsum(a, **kw), _scan, rtol=2e-4, atol=1e-3)
case("x.cumsum", lambda mk, a, **kw: a.cumsum(**kw), _scan, rtol=2e-4, atol=1e-3)
case("x.cumprod", lambda mk, a, **kw: a.cumprod(**kw),
     lambda d: ((d.array(INTS + FLOATS, max_side=3),), {"axis": d.axis(1, many=False)}), rtol=2e-4, atol=1e-3)
case("np.cumulative_sum", lambda mk, a, **kw: np.cumulative_sum(a, **kw),
     lambda d: ((d.array(NUMERIC, min_dims=1, max_dims=1),), {"include_initial": d.flag()}))
case("np.count_nonzero", lambda mk, a, **kw: np.count_nonzero(a, **kw),
     lambda d: (lambda a: ((a,), {"axis": d.axis(a.ndim), "keepdims": d.flag()}))(d.array(special=True)))
case("np.ptp", lambda mk, a, **kw: np.ptp(a, **kw),
     lambda d: (lambda a: ((a,), {"axis": d.axis(a.ndim, many=False)}))(d.array(NUMERIC, min_side=1)))
case("np.median", lambda mk, a, **kw: np.median(a, **kw),
     lambda d: (lambda a: ((a,), {"axis": d.axis(a.ndim), "keepdims": d.flag()}))(
         d.array(NUMERIC, min_side=1, special=d.flag())), rtol=1e-5, atol=1e-5)
case("np.average", lambda mk, a, **kw: np.average(a, **kw),
     lambda d: (lambda a: ((a,), {"axis": d.axis(a.ndim, bad=False), "returned": d.flag()}))(
         d.array(NUMERIC, min_side=1)), rtol=2e-4, atol=1e-3)
case("np.average weights", lambda mk, a, w: np.average(a, axis=-1, weights=w),
     lambda d: (lambda a: ((a, d.array(FLOATS, shape=a.shape[-1:]) + 200.0), {}))(
         d.array(NUMERIC, min_dims=1, min_side=1)), rtol=2e-4, atol=1e-3)
case("np.nansum", lambda mk, a, **kw: np.nansum(a, **kw),
     lambda d: (lambda a: ((a,), {"axis": d.axis(a.ndim)}))(d.array(NUMERIC, special=True, min_side=1)),
     rtol=2e-4, atol=1e-3)
case("np.nanmax", lambda mk, a, **kw: np.nanmax(a, **kw),
     lambda d: (lambda a: ((a,), {"axis": d.axis(a.ndim, many=False)}))(d.array(FLOATS, special=True, min_side=1)))


# --------------------------------------------------------------------------- elementwise
def _round(d: D) -> tuple[tuple, dict]:
    return (d.array(NUMERIC),), {"decimals": d.pick(0, 1, 2, -1)}


case("np.round", lambda mk, a, **kw: np.round(a, **kw), _round, rtol=1e-6, atol=1e-6)
case("x.round", lambda mk, a, **kw: a.round(**kw), _round, rtol=1e-6, atol=1e-6)


def _clip(d: D) -> tuple[tuple, dict]:
    a = d.array(NUMERIC, special=True)
    lo, hi = d.pick(None, -3, 0.5), d.pick(None, 4, 10.5)
    return (a, lo, hi), {}


case("x.clip", lambda mk, a, lo, hi: a.clip(lo, hi) if lo is not None or hi is not None else a.clip(0, 1), _clip)
case("np.clip", lambda mk, a, lo, hi: np.clip(a, lo, hi), _clip)
case("np.where", lambda mk, c, a, b: np.where(c, a, b),
     lambda d: (lambda s: ((d.array(BOOL, shape=s), d.array(NUMERIC, shape=s), d.pick(1, 2.5, -1)), {}))(d.shape()))
case("np.add mixed", lambda mk, a, b: np.add(a, b.value),
     lambda d: (lambda s: ((d.array(NUMERIC, shape=s), Host(d.array(NUMERIC, shape=s[1:]))), {}))(d.shape()))
case("np.multiply.outer", lambda mk, a, b: np.multiply.outer(a, b),
     lambda d: ((d.array(NUMERIC, max_dims=2), d.array(NUMERIC, max_dims=1)), {}))
case("np.add.reduce", lambda mk, a, **kw: np.add.reduce(a, **kw),
     lambda d: (lambda a: ((a,), {"axis": d.axis(a.ndim, none=True, many=False)}))(d.array(NUMERIC, min_side=1)),
     rtol=2e-4, atol=1e-3)
case("np.nan_to_num", lambda mk, a: np.nan_to_num(a), one(NUMERIC, special=True))
case("np.isposinf", lambda mk, a: np.isposinf(a), one(NUMERIC, special=True))
case("np.sinc", lambda mk, a: np.sinc(a), one(FLOATS), rtol=1e-5, atol=1e-6)
case("np.fix", lambda mk, a: np.fix(a), one(FLOATS, special=True))
case("np.angle", lambda mk, a: np.angle(a), one(NUMERIC, special=True), rtol=1e-6)
case("x.real/imag/conj", lambda mk, a: (a.real, a.imag, a.conj(), a.conjugate()), one(NUMERIC))
case("divmod", lambda mk, a: divmod(a, 3), one(INTS + FLOATS))
if hasattr(xp, "complex128"):
    COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
    case("complex x.real/imag/conj", lambda mk, a: (a.real, a.imag, a.conj(), np.real(a), np.imag(a),
                                                    np.iscomplexobj(a), np.isrealobj(a)), one(COMPLEX))


# --------------------------------------------------------------------------- shape and conversion methods
case("x.astype", lambda mk, a, dt, casting: a.astype(dt, casting=casting),
     lambda d: ((d.array(ALL), d.pick(*ALL), d.pick("unsafe", "same_kind", "safe")), {}))
case("x.reshape", lambda mk, a, order: a.reshape(-1, a.shape[-1] if a.ndim else 1, order=order),
     lambda d: ((d.array(min_dims=1, min_side=1), d.pick("C", "F")), {}))
case("x.reshape *shape", lambda mk, a: a.reshape(*reversed(a.shape)), one())
case("x.ravel", lambda mk, a, order: a.ravel(order), lambda d: ((d.array(), d.pick("C", "F")), {}))
case("x.flatten", lambda mk, a: a.flatten(), one())
case("x.transpose", lambda mk, a, form: a.transpose() if form == 0 else (
    a.transpose(tuple(range(a.ndim))[::-1]) if form == 1 else a.transpose(*range(a.ndim))),
    lambda d: ((d.array(), d.pick(0, 1, 2)), {}))
case("x.squeeze", lambda mk, a, **kw: a.squeeze(**kw),
     lambda d: (lambda a: ((a,), {"axis": d.axis(a.ndim, many=False)}))(d.array(max_side=2)))
case("x.swapaxes", lambda mk, a, i, j: a.swapaxes(i, j),
     lambda d: (lambda a: ((a, d.axis(a.ndim, none=False, many=False), d.axis(a.ndim, none=False, many=False)),
                           {}))(d.array(min_dims=1)))
case("x.copy / copy.copy", lambda mk, a: (a.copy(), copy.copy(a), copy.deepcopy(a)), one())
case("x.item", lambda mk, a, i: a.item(i) if a.size else a.item(),
     lambda d: (lambda a: ((a, d(st.integers(-a.size - 1, a.size))), {}))(d.array(min_dims=1)))
case("x.tolist", lambda mk, a: a.tolist(), one())
case("x.fill", lambda mk, a, v: (a.fill(v), a)[1], lambda d: ((d.array(NUMERIC), d.pick(0, 3, 2.5, True)), {}))
case("x.flags", lambda mk, a: (a.flags.c_contiguous, a.flags.f_contiguous, a.flags["F"], a.flags.writeable), one())
case("len/iter/in", lambda mk, a, v: (len(a), [x for x in a], v in a),
     lambda d: ((d.array(NUMERIC, min_dims=1), d.pick(0, 3, 2.5)), {}))
case("x.nonzero", lambda mk, a: a.nonzero(), one(special=True))
case("x.dot", lambda mk, a, b: a.dot(b),
     lambda d: (lambda n: ((d.array(FLOATS, shape=(d.pick(1, 3), n)), d.array(FLOATS, shape=(n,) + d.pick((), (2,)))),
                           {}))(d.pick(1, 2, 4)), rtol=1e-5, atol=1e-4)
case("x.trace", lambda mk, a, off: a.trace(off), lambda d: ((d.array(NUMERIC, min_dims=2), d.pick(0, 1, -1)), {}))
case("x.sort", lambda mk, a, ax: (a.sort(axis=ax), a)[1],
     lambda d: (lambda a: ((a, d.axis(a.ndim, none=False, many=False)), {}))(
         d.array(NUMERIC, min_dims=1, special=True)))
case("x.argsort", lambda mk, a: a.argsort(kind="stable"), one(NUMERIC, min_dims=1, special=True))
case("x.searchsorted", lambda mk, a, v: a.searchsorted(v),
     lambda d: ((np.sort(d.array(NUMERIC, max_dims=1, min_dims=1)), d.pick(0, 5, 2.5)), {}))
case("x.take", lambda mk, a, idx: a.take(idx),
     lambda d: (lambda a: ((a, d(st.lists(st.integers(-a.size, a.size - 1), min_size=1, max_size=4))), {}))(
         d.array(min_dims=1, min_side=1)))
case("x.repeat", lambda mk, a, r, ax: a.repeat(r, axis=ax),
     lambda d: (lambda a: ((a, d.pick(0, 1, 3), d.axis(a.ndim, many=False, bad=False)), {}))(d.array()))


# --------------------------------------------------------------------------- searching, sorting, sets
case("np.nonzero", lambda mk, a: np.nonzero(a), one(special=True))
case("np.argwhere", lambda mk, a: np.argwhere(a), one(min_dims=1))
case("np.flatnonzero", lambda mk, a: np.flatnonzero(a), one())
case("np.searchsorted", lambda mk, a, v, side: np.searchsorted(a, v, side=side),
     lambda d: (lambda a: ((a, d.array(NUMERIC, max_dims=2), d.pick("left", "right")), {}))(
         np.sort(d.array(NUMERIC, min_dims=1, max_dims=1, special=True))))
case("np.sort", lambda mk, a, **kw: np.sort(a, **kw),
     lambda d: (lambda a: ((a,), {"axis": d.axis(a.ndim, many=False)}))(d.array(NUMERIC, min_dims=1, special=True)))
case("np.partition kth", lambda mk, a, k: np.partition(a, k)[..., k],
     lambda d: (lambda a: ((a, d(st.integers(-a.shape[-1], a.shape[-1] - 1))), {}))(
         d.array(NUMERIC, min_dims=1, min_side=1)))
case("np.unique", lambda mk, a, **kw: np.unique(a, **kw),
     lambda d: ((d.array(NUMERIC, special=True),),
                {"return_index": d.flag(), "return_inverse": d.flag(), "return_counts": d.flag()}))
case("np.unique_values", lambda mk, a: np.sort(np.unique_values(a)), one(NUMERIC))
case("np.isin", lambda mk, a, b, inv: np.isin(a, b, invert=inv),
     lambda d: ((d.array(NUMERIC, special=True), d.array(NUMERIC, max_dims=1, special=True), d.flag()), {}))
case("np.digitize", lambda mk, a, bins, right: np.digitize(a, bins.value, right=right),
     lambda d: ((d.array(NUMERIC, special=True), Host(d.pick(np.array([-1.0, 2.0, 10.0]), np.array([5, 0]))),
                 d.flag()), {}))
case("np.union1d / intersect1d / setdiff1d",
     lambda mk, a, b: (np.union1d(a, b), np.intersect1d(a, b), np.setdiff1d(a, b)),
     lambda d: (lambda dt: ((d.array([dt], max_dims=2), d.array([dt], max_dims=1)), {}))(d.dtype(INTS + FLOATS)))


# --------------------------------------------------------------------------- manipulation
def _axis_arr(dtypes: list[np.dtype] = ALL, many: bool = False, **kw: Any) -> Callable[[D], tuple[tuple, dict]]:
    return lambda d: (lambda a: ((a,), {"axis": d.axis(a.ndim, many=many)}))(d.array(dtypes, **kw))


case("np.take", lambda mk, a, idx, **kw: np.take(a, idx, **kw),
     lambda d: (lambda a: ((a, np.asarray(d.array(INTS[:4], max_dims=2) % max(a.shape[0], 1))), {"axis": 0}))(
         d.array(min_dims=1, min_side=1)))
case("np.take_along_axis", lambda mk, a, i, **kw: np.take_along_axis(a, i, **kw),
     lambda d: (lambda a: ((a, np.argsort(a, axis=-1)), {"axis": -1}))(d.array(NUMERIC, min_dims=1)))
case("np.repeat", lambda mk, a, r, **kw: np.repeat(a, r, **kw),
     lambda d: (lambda a: ((a, d.pick(2, [1, 0, 2][: a.shape[0]] if a.ndim and a.shape[0] <= 3 else 2)),
                           {"axis": 0 if a.ndim else None}))(d.array()))
case("np.tile", lambda mk, a, r: np.tile(a, r), lambda d: ((d.array(), d.pick(2, (2, 1), (1, 2, 2))), {}))
case("np.roll", lambda mk, a, s, **kw: np.roll(a, s, **kw),
     lambda d: (lambda a: ((a, d.pick(1, -2, 5)), {"axis": d.axis(a.ndim, many=False)}))(d.array()))
case("np.diff", lambda mk, a, **kw: np.diff(a, **kw),
     lambda d: (lambda a: ((a,), {"n": d.pick(0, 1, 2), "axis": d.axis(a.ndim, none=False, many=False),
                                  **({"prepend": d.pick(0, 1.5)} if d.flag() else {})}))(d.array(ALL)))
case("np.concatenate", lambda mk, a, b, **kw: np.concatenate([a, b], **kw),
     lambda d: (lambda s: ((d.array(shape=s), d.array(shape=s)), {"axis": d.axis(len(s), many=False)}))(
         d.shape(min_dims=1)))
case("np.stack/vstack/hstack/dstack/column_stack",
     lambda mk, a, b: (np.stack([a, b], axis=-1), np.vstack([a, b]), np.hstack([a, b]), np.dstack([a, b]),
                       np.column_stack([a, b])),
     lambda d: (lambda s: ((d.array(NUMERIC, shape=s), d.array(NUMERIC, shape=s)), {}))(d.shape(max_dims=2)))
case("np.append", lambda mk, a, b, **kw: np.append(a, b, **kw),
     lambda d: (lambda s: ((d.array(shape=s), d.array(shape=s)), {"axis": d.pick(None, 0)}))(d.shape(min_dims=1)))
case("np.split / array_split", lambda mk, a, n: (np.array_split(a, n), np.split(a, n)),
     lambda d: ((d.array(min_dims=1), d.pick(1, 2, 3, [1, 3])), {}))
case("np.block", lambda mk, a, b: np.block([[a, b], [b, a]]),
     lambda d: (lambda s: ((d.array(NUMERIC, shape=s), d.array(NUMERIC, shape=s)), {}))(d.shape(max_dims=2)))
case("np.meshgrid", lambda mk, a, b, **kw: np.meshgrid(a, b, **kw),
     lambda d: (lambda dt: ((d.array([dt], max_dims=1, min_dims=1), d.array([dt], max_dims=1, min_dims=1)),
                            {"indexing": d.pick("xy", "ij"), "sparse": d.flag()}))(d.dtype(NUMERIC)))
case("np.rot90", lambda mk, a, k: np.rot90(a, k), lambda d: ((d.array(min_dims=2), d.pick(0, 1, 2, 3, -1)), {}))
case("np.rollaxis", lambda mk, a, ax, start: np.rollaxis(a, ax, start),
     lambda d: (lambda a: ((a, d.axis(a.ndim, none=False, many=False), d.pick(0, 1, -1)), {}))(d.array(min_dims=1)))
case("np.moveaxis / swapaxes / expand_dims", lambda mk, a: (np.moveaxis(a, 0, -1), np.swapaxes(a, 0, -1),
                                                              np.expand_dims(a, (0, -1))), one(min_dims=1))
case("np.tril / triu", lambda mk, a, k: (np.tril(a, k), np.triu(a, k)),
     lambda d: ((d.array(min_dims=1), d.pick(0, 1, -1)), {}))
case("np.diag / diagflat", lambda mk, a, k: (np.diag(a, k), np.diagflat(a, k)),
     lambda d: ((d.array(NUMERIC, min_dims=1, max_dims=2), d.pick(0, 1, -2)), {}))
case("np.diagonal / trace", lambda mk, a, off: (np.diagonal(a, off), np.trace(a, off), np.trace(a, dtype=np.float32)),
     lambda d: ((d.array(NUMERIC, min_dims=2), d.pick(0, 1, -1)), {}), rtol=1e-5, atol=1e-4)
case("np.resize", lambda mk, a, s: np.resize(a, s), lambda d: ((d.array(min_side=1), d.pick(5, (2, 3), 0)), {}))
case("np.delete", lambda mk, a, obj, **kw: np.delete(a, obj, **kw),
     lambda d: (lambda a: ((a, d.pick(0, [0, 1], slice(None, None, 2))), {"axis": d.pick(None, 0)}))(
         d.array(min_dims=1, min_side=2)))
case("np.pad", lambda mk, a, w, mode: np.pad(a, w, mode=mode),
     lambda d: ((d.array(NUMERIC, min_side=1), d.pick(1, (1, 2), 0), d.pick("constant", "edge", "wrap", "reflect")),
                {}))
case("np.select", lambda mk, c1, c2, a: np.select([c1, c2], [a, a * 2], default=-1),
     lambda d: (lambda s: ((d.array(BOOL, shape=s), d.array(BOOL, shape=s), d.array(INTS[:4] + FLOATS, shape=s)),
                           {}))(d.shape()))
case("np.extract / compress", lambda mk, c, a: (np.extract(c, a), np.compress(c.ravel(), a.ravel())),
     lambda d: (lambda s: ((d.array(BOOL, shape=s), d.array(shape=s)), {}))(d.shape()))


def _copyto(mk: Any, dst: Any, src: Any, where: Any, casting: str) -> Any:
    np.copyto(dst, src, where=where, casting=casting)
    return dst


case("np.copyto", _copyto,
     lambda d: (lambda s: ((d.array(NUMERIC, shape=s), d.array(NUMERIC, shape=s[1:]), d.pick(True, False),
                            d.pick("same_kind", "unsafe", "safe")), {}))(d.shape()))
case("np.putmask", lambda mk, a, m, v: (np.putmask(a, m, v), a)[1],
     lambda d: (lambda s: ((d.array(NUMERIC, shape=s), d.array(BOOL, shape=s), d.pick(7, -1)), {}))(d.shape()))
case("np.put_along_axis", lambda mk, a, v: (np.put_along_axis(a, np.argsort(np.asarray(a), axis=-1)[..., :1],
                                                              v, axis=-1), a)[1],
     lambda d: ((d.array(NUMERIC, min_dims=1, min_side=1), d.pick(0, 9)), {}))
case("np.fill_diagonal", lambda mk, a, v: (np.fill_diagonal(a, v), a)[1],
     lambda d: ((d.array(NUMERIC, shape=d.pick((3, 3), (2, 4), (2, 2, 2))), d.pick(5, -2)), {}))


# --------------------------------------------------------------------------- products, linalg, fft
def _matrix(d: D, n: int, m: int | None = None) -> np.ndarray:
    a = d.array(FLOATS, shape=(n, n if m is None else m))
    return a / 100.0 + (3.0 * np.eye(n, n if m is None else m, dtype=a.dtype))


case("np.dot / matmul / vdot / inner / outer",
     lambda mk, a, b: (np.dot(a, b), np.matmul(a, b), np.vdot(a, b), np.inner(a, b), np.outer(a, b)),
     lambda d: (lambda n: ((d.array(FLOATS + INTS[:4], shape=(n, n)), d.array(FLOATS + INTS[:4], shape=(n, n))),
                           {}))(d.pick(1, 2, 3)), rtol=1e-5, atol=1e-3)
case("np.kron", lambda mk, a, b: np.kron(a, b), lambda d: ((d.array(NUMERIC, max_dims=2), d.array(NUMERIC, max_dims=2)),
                                                          {}))
case("np.einsum", lambda mk, spec, a, b: np.einsum(spec, a, b),
     lambda d: ((d.pick("ij,jk->ik", "ij,kj", "i,i", "ij,j->i", "...j,j", "ii,ij->j", "ij,jj"),
                 d.array(FLOATS + INTS[:4], shape=(3, 3)),
                 d.array(FLOATS + INTS[:4], shape=(3, 3))), {}), rtol=1e-5, atol=1e-3)
case("np.tensordot", lambda mk, a, b: np.tensordot(a, b, axes=1),
     lambda d: ((d.array(FLOATS, shape=(2, 3)), d.array(FLOATS, shape=(3, 2))), {}), rtol=1e-5, atol=1e-3)
case("np.cross", lambda mk, a, b: np.cross(a, b),
     lambda d: ((d.array(FLOATS + INTS[:4], shape=(2, 3)), d.array(FLOATS + INTS[:4], shape=(3,))), {}), rtol=1e-5)
case("np.linalg basics", lambda mk, a: (np.linalg.det(a), np.linalg.inv(a), np.linalg.slogdet(a),
                                        np.linalg.eigvalsh(a + a.T), np.linalg.svdvals(a), np.linalg.matrix_rank(a),
                                        np.linalg.matrix_power(a, 3), np.linalg.cholesky(a @ a.T)),
     lambda d: ((_matrix(d, d.pick(1, 2, 3)),), {}), rtol=1e-4, atol=1e-4)
case("np.linalg.solve", lambda mk, a, b: np.linalg.solve(a, b),
     lambda d: (lambda n: ((_matrix(d, n), d.array(FLOATS, shape=d.pick((n,), (n, 2)))), {}))(d.pick(1, 3)),
     rtol=1e-4, atol=1e-4)
case("np.linalg.norm", lambda mk, a, **kw: np.linalg.norm(a, **kw),
     lambda d: (lambda a: ((a,), d.pick({}, {"ord": 1}, {"axis": -1}, {"axis": (0, 1), "ord": "fro"},
                                         {"axis": 0, "ord": np.inf, "keepdims": True}, {"ord": 2})))(
         d.array(NUMERIC, shape=d.pick((3,), (2, 3)))), rtol=1e-5, atol=1e-4)
case("np.fft transforms", lambda mk, a, f, **kw: getattr(np.fft, f)(a, **kw),
     lambda d: (lambda a: ((a, d.pick("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")),
                           {"axis": d.pick(-1, 0), "norm": d.pick(None, "ortho", "forward"),
                            "n": d.pick(None, 4, 5)}))(d.array(FLOATS + INTS[:4], min_dims=1, min_side=1)),
     rtol=1e-4, atol=1e-3)
case("np.fft n-d transforms", lambda mk, a, f, **kw: getattr(np.fft, f)(a, **kw),
     lambda d: (lambda a: ((a, d.pick("fftn", "ifftn", "rfftn", "irfftn", "fft2", "rfft2")),
                           {"axes": d.pick(None, (0, 1), (-1,))}))(d.array(FLOATS, min_dims=2, max_dims=3, min_side=1)),
     rtol=1e-4, atol=1e-3)
case("like=", lambda mk, a: (np.tri(3, 2, k=1, like=a), np.asarray([1, 2], like=a), np.zeros((2, 1), like=a),
                             np.full(2, 7, like=a), np.arange(1, 7, 2, like=a), np.eye(3, k=-1, like=a),
                             np.asfortranarray(a, like=a), np.require(a, np.float32, like=a)), one(NUMERIC))
case("np.fft.fftshift", lambda mk, a, **kw: (np.fft.fftshift(a, **kw), np.fft.ifftshift(a, **kw)),
     lambda d: (lambda a: ((a,), {"axes": d.axis(a.ndim, bad=False)}))(d.array(min_dims=1)))


# --------------------------------------------------------------------------- comparisons with a host answer
def _pair(d: D) -> tuple[tuple, dict]:
    s = d.shape()
    a = d.array(NUMERIC, shape=s, special=True)
    b = a + d.pick(0, 1e-9, 1e-3, 1) if a.dtype.kind == "f" else a + d.pick(0, 1)
    return (a, d.pick(b, a[..., :1] if a.ndim else a)), {"equal_nan": d.flag()}


case("np.isclose", lambda mk, a, b, **kw: np.isclose(a, b, **kw), _pair)
case("np.allclose", lambda mk, a, b, **kw: np.allclose(a, b, **kw), _pair)
case("np.array_equal", lambda mk, a, b, **kw: np.array_equal(a, b, **kw), _pair)
case("np.array_equiv", lambda mk, a, b, **kw: np.array_equiv(a, b), _pair)


# --------------------------------------------------------------------------- numerics helpers
case("np.gradient", lambda mk, a, **kw: np.gradient(a, 0.5, **kw),
     lambda d: (lambda a: ((a,), {"edge_order": d.pick(1, 2)}))(d.array(NUMERIC, min_dims=1, min_side=3)),
     rtol=1e-5, atol=1e-4)
case("np.trapezoid", lambda mk, a: np.trapezoid(a), one(FLOATS, min_dims=1, min_side=1), rtol=1e-5, atol=1e-4)
case("np.vander", lambda mk, a, n: np.vander(a, n),
     lambda d: ((d.array(INTS[:4] + FLOATS, min_dims=1, max_dims=1), d.pick(None, 0, 3)), {}), rtol=1e-5)
case("np.polyval", lambda mk, p, a: np.polyval(p.value, a),
     lambda d: ((Host(np.array([1.5, -2.0, 3.0])), d.array(FLOATS)), {}), rtol=1e-5, atol=1e-4)
case("np.ediff1d", lambda mk, a: np.ediff1d(a, to_begin=0), one(INTS[:4] + FLOATS))
case("np.unravel_index", lambda mk, i, s: np.unravel_index(i, s),
     lambda d: ((np.asarray(d.array(INTS[:4], max_dims=1) % 6), d.pick((2, 3), (6,), (3, 2))), {}))


# --------------------------------------------------------------------------- the test
def _host_copy(x: Any) -> Any:
    if isinstance(x, Host):
        return x
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (list, tuple)):
        return type(x)(_host_copy(v) for v in x)
    return x


def _to_device(x: Any, device: xp.Device) -> Any:
    if isinstance(x, Host):
        return x
    if isinstance(x, np.ndarray):
        return xp.asarray(x, device=device)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_device(v, device) for v in x)
    if isinstance(x, dict):
        return {k: _to_device(v, device) for k, v in x.items()}
    return x


def _public(exc_type: type) -> type:
    """The first public class of an exception (NumPy raises private subclasses of TypeError ...)."""
    for t in exc_type.__mro__:
        if not t.__module__.startswith("numpy._"):
            return t
    return Exception


def _check(got: Any, want: Any, device: xp.Device, c: Case) -> None:
    if isinstance(want, (np.ndarray, np.generic)):
        assert isinstance(got, xp.GpuArray), f"expected a GpuArray; got {type(got).__name__}"
        assert got.device == device
        g, w = np.asarray(got), np.asarray(want)
        rtol = c.rtol
        if w.dtype == np.float16:                # functions within a float16 ULP (float32 math, rounded once)
            rtol = 2e-3
        assert g.dtype == w.dtype, f"dtype {g.dtype} != {w.dtype}"
        assert g.shape == w.shape, f"shape {g.shape} != {w.shape}"
        if w.dtype.kind in "fc":
            small = w.real.dtype.itemsize <= 4
            rtol = rtol if rtol is not None else (1e-6 if small else 1e-12)
            atol = c.atol if c.atol is not None else (1e-6 if small else 1e-12)
            if not small:
                rtol, atol = min(rtol, 1e-9), min(atol, 1e-9)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)
        return
    if isinstance(want, (tuple, list)):
        assert isinstance(got, tuple) == isinstance(want, tuple) and isinstance(got, list) == isinstance(want, list), \
            f"{type(got).__name__} != {type(want).__name__}"
        assert len(got) == len(want)
        assert getattr(got, "_fields", None) == getattr(want, "_fields", None)
        for g, w in zip(got, want):
            _check(g, w, device, c)
        return
    assert type(got) is type(want), f"{type(got).__name__} != {type(want).__name__}"
    if isinstance(want, float) and want != want:
        assert got != got
    else:
        assert got == want


def _run(c: Case, device: xp.Device, data: Any) -> None:
    args, kwargs = c.draw(D(data.draw))
    gargs, gkwargs = _to_device(_host_copy(args), device), _to_device(_host_copy(kwargs), device)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = c.fn(lambda h: h, *args, **kwargs)
            error = None
        except Exception as exc:  # noqa: BLE001 - the same exception type is expected
            error = exc
        if error is not None:
            with xp.config(fallback="silent"), pytest.raises(_public(type(error))):
                c.fn(lambda h: xp.asarray(h, device=device), *gargs, **gkwargs)
            return
        with xp.config(fallback="raise" if c.native else "silent"):
            got = c.fn(lambda h: xp.asarray(h, device=device), *gargs, **gkwargs)
    _check(got, want, device, c)


SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large, HealthCheck.filter_too_much])


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
@SETTINGS
@given(data=st.data())
def test_numpy_call(device: xp.Device, c: Case, data: Any) -> None:
    _run(c, device, data)


def test_table_is_broad() -> None:
    names = {c.name for c in CASES}
    assert len(CASES) >= 100, len(CASES)
    assert {"x.sum", "x.mean", "np.unique", "np.linalg.solve", "np.einsum"} <= names


# --------------------------------------------------------------------------- printing, flags, laziness
PRINTED = [np.array(5.0), np.array(-0.0), np.array(3, np.int8), np.zeros((0, 3)), np.zeros(0, np.int32),
           np.array([True, False]), np.array([-0.0, 1.5, np.nan, -np.inf]), np.arange(6, dtype=np.uint8).reshape(2, 3),
           np.arange(2000), np.arange(2000.0).reshape(40, 50) / 7, np.arange(3000, dtype=np.float32).reshape(3, 1000),
           np.zeros((2, 0), np.float32), np.full(1500, -0.0)]


@pytest.mark.parametrize("h", PRINTED, ids=[f"{h.dtype}{h.shape}" for h in PRINTED])
def test_repr_and_str_are_numpys(device: xp.Device, h: np.ndarray) -> None:
    g = xp.asarray(h, device=device)
    xp.evaluate(g)
    want = repr(h)
    pad = " " * (len("GpuArray(") - len("array("))
    body = want[len("array("):-1].replace("\n", "\n" + pad)
    if h.ndim == 0:        # NumPy would give a scalar: its text, at full precision (5.0, 0.30000000000000004)
        body = str(h[()]) + (body[body.index(", dtype="):] if ", dtype=" in body else "")
    assert repr(g) == "GpuArray(" + body + f", device='{device.name}')"
    assert str(g) == str(h)
    assert format(g, "") == format(h, "")
    if h.ndim == 0:
        assert format(g, ".3f") == format(h, ".3f")
    elif h.size:
        with pytest.raises(TypeError):
            format(g, ">10")
    with np.printoptions(threshold=5, edgeitems=1, precision=2):
        assert str(g) == str(h)


def test_repr_of_a_large_array_reads_back_only_the_edges(device: xp.Device) -> None:
    g = xp.arange(1_000_000, dtype=xp.float32, device=device).reshape(1000, 1000) * 2
    xp.evaluate(g)
    xp.reset_metrics()
    text = repr(g)
    assert "shape=(1000, 1000)" in text and "..." in text
    if device.kind == "wgpu":
        assert xp.metrics()["bytes_downloaded"] < 1000


def test_flags_copy_fill_and_parts(device: xp.Device) -> None:
    h = np.arange(6.0).reshape(2, 3)
    g = xp.asarray(h, device=device)
    for shape in [(), (0,), (3,), (3, 1), (1, 3), (2, 3), (0, 2, 3), (1, 2, 1)]:
        z = np.zeros(shape)
        f = xp.zeros(shape, device=device).flags
        assert (f.c_contiguous, f.f_contiguous, f["C"], f["F_CONTIGUOUS"], f.writeable, f.owndata) == \
            (z.flags.c_contiguous, z.flags.f_contiguous, True, z.flags.f_contiguous, True, True)
    with pytest.raises(KeyError):
        g.flags["NOPE"]
    assert "C_CONTIGUOUS : True" in repr(g.flags)
    c = g.copy()
    g.fill(7)
    assert_values = np.testing.assert_array_equal
    assert_values(np.asarray(c), h)
    assert_values(np.asarray(g), np.full((2, 3), 7.0))
    g.real = np.arange(3.0)
    assert_values(np.asarray(g), np.broadcast_to(np.arange(3.0), (2, 3)))
    with pytest.raises(TypeError):
        g.imag = 1.0
    assert g.base is None and not (g.imag != 0).any()


def test_methods_are_lazy(device: xp.Device) -> None:
    g = xp.asarray(np.arange(12, dtype=np.int8).reshape(3, 4), device=device)
    xp.evaluate(g)
    xp.reset_metrics()
    with xp.config(fallback="raise"):
        r = [g.sum(axis=0), g.mean(), g.std(ddof=1), g.max(where=g > 2, initial=0), g.astype(np.float32).round(1),
             g.ravel(), g.T.copy(), g.clip(2, 5), g.cumsum(), g.argmax(axis=1), g.transpose(1, 0), g.squeeze(),
             g.swapaxes(0, 1), g.prod(), g.any(), g.all(axis=1), g.var(where=g > 1)]
    assert xp.metrics()["evaluations"] == 0
    assert [x.dtype for x in r[:3]] == [np.int64, np.float64, np.float64]
    xp.evaluate(*r)
    assert xp.metrics()["host_fallbacks"] == 0 or device.kind == "wgpu"   # float64 functions may run on the host


def test_more_ndarray_methods(device: xp.Device) -> None:
    """``partition`` (in place), ``argpartition``, ``compress``, ``choose``, ``put``, ``tofile`` and ``conj`` of a
    real array (the array itself, as NumPy's method returns it), against NumPy's ndarray methods."""
    h = np.array([[5, 1, 4, 9, 0], [3, 3, 7, -2, 8]], dtype=np.int32)
    g = xp.asarray(h, device=device)
    p = h.copy()
    p.partition(2, axis=1)
    gp = xp.asarray(h, device=device)
    gp.partition(2, axis=1)
    assert np.array_equal(np.asarray(gp)[:, 2], p[:, 2])
    assert np.array_equal(np.sort(np.asarray(gp), axis=1), np.sort(h, axis=1))
    ap = np.asarray(g.argpartition(1, axis=0))
    assert np.array_equal(np.take_along_axis(h, ap, axis=0)[1], np.sort(h, axis=0)[1])
    assert np.array_equal(np.asarray(g.compress([True, False, True], axis=1)), h.compress([True, False, True], axis=1))
    sel = xp.asarray(np.array([0, 1, 1, 0, 1]), device=device)
    assert np.array_equal(np.asarray(sel.choose([g[0], g[1]])), np.array([0, 1, 1, 0, 1]).choose([h[0], h[1]]))
    row = g[1]
    row.put([0, -1], [10, 20])                 # writes through the view to its base
    q = h.copy()
    q[1].put([0, -1], [10, 20])
    assert np.array_equal(np.asarray(g), q)
    b = xp.asarray(np.array([True, False]), device=device)
    assert b.conj() is b and b.conjugate().dtype == np.bool_
    f = xp.asarray(np.array([1.5, -2.0]), device=device)
    assert f.conj() is f


def test_tofile(device: xp.Device, tmp_path: Any) -> None:
    h = np.arange(6, dtype=np.float32).reshape(2, 3)
    xp.asarray(h, device=device).tofile(tmp_path / "a.bin")
    assert np.array_equal(np.fromfile(tmp_path / "a.bin", dtype=np.float32), h.ravel())
