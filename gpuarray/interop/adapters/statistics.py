"""Data-dependent statistics as compositions of device operations: quantiles, interp, cov, corrcoef,
convolve, correlate, lexsort.

- ``percentile`` / ``quantile`` / ``nanpercentile`` / ``nanquantile`` / ``nanmedian``: a sort
  along the reduced axes, gathers of the neighbouring order statistics, NumPy's interpolation
  (``namespace/quantiles.py``; every NumPy ``method``); over the whole array (``axis=None`` or
  every axis), up to 64 ranks, by radix selection instead of the sort (``namespace/selection.py``).
  ``weights=`` runs on the host.
- ``interp``: ``searchsorted`` on ``xp``, gathers of the bracketing points, the linear formula with
  NumPy's edge cases (``left`` / ``right``, ties in ``xp``, ``period``).
- ``cov`` / ``corrcoef``: centering and one ``matmul`` of the centered data with its conjugate
  transpose. Weights on the host are checked and summed there (they are parameters); weights on
  the device are checked with one read of two booleans and summed on the device.
- ``convolve`` / ``correlate``: for a shorter operand of up to ``DIRECT_MAX`` values, a sum of
  shifted slices in one fused kernel; longer ones through ``gpuarray.fft`` (float and complex:
  float32 rounding then grows like that of an FFT), in exact chunks of ``DIRECT_MAX`` shifts for
  integers and booleans (NumPy's wrap-around included), and for float operands that hold a NaN or an
  infinity (one read of a flag; the FFT would spread them to every output). Each slice's products
  cover only the outputs it reaches, as NumPy sums only overlapping elements.
- ``lexsort``: stable argsorts from the least significant key (the first) to the primary one (the
  last), each of the key gathered through the permutation so far.

>>> import numpy as np, gpuarray as xp
>>> g = xp.asarray([[1.0, 4.0, 2.0], [3.0, 0.0, 5.0]], device="cpu")
>>> np.percentile(g, 50, axis=1).tolist(), np.convolve(g[0], g[1]).tolist()
([2.0, 3.0], [3.0, 12.0, 11.0, 20.0, 10.0])
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ... import fft
from ...array_object.array import GpuArray
from ...core import dtypes as _dtypes
from ...namespace import manipulation as _m
from ...namespace import quantiles as _q
from ...namespace.creation import asarray, full, zeros
from ...namespace.indexing import take, take_along_axis
from ...namespace.linear_algebra import matmul
from ...namespace.searching_sorted import searchsorted
from ...namespace.selection import can_select
from ...namespace.sorting import argsort
from ...namespace.statistical import mean as xmean
from ...namespace.statistical import sum as xsum
from ...runtime.planner import evaluate_nodes
from ..host import _FALLBACK
from ..operands import _as_array, _cast, _device, _flag, _into_out, _map_dtype, _probe_dtype
from ..registry import register, register_array


def evaluate(*arrays: GpuArray) -> None:
    """Compute ``arrays`` now (``gpuarray.evaluate``), so that later kernels read them as buffers."""
    evaluate_nodes([a._node for a in arrays])

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays
DIRECT_MAX = 64   # convolve / correlate: the longest shorter operand summed as shifted slices


# ============================================================ quantiles
_DTYPES: dict[tuple[Any, ...], np.dtype] = {}     # _result_dtype's answers, for a repeated call
DTYPE_CACHE = 64


def _result_dtype(np_func: Any, a: GpuArray, q: Any, axis: Any, method: Any, keepdims: bool) -> np.dtype:
    """NumPy's result dtype, from NumPy on a one-element stand-in: NumPy checks ``q``, ``method``,
    ``axis`` and the dtype of ``a`` (its ValueError, AxisError and TypeError). Answers are kept per
    arguments (a call that raised is not kept: it raises again)."""
    qa = np.asarray(q)
    key = (np_func, a.dtype, a.ndim, type(q), qa.dtype.str, qa.shape, qa.tobytes(),
           tuple(axis) if isinstance(axis, list) else axis, method, keepdims)
    try:
        hit = _DTYPES.get(key)
    except TypeError:                  # an unhashable axis or method: NumPy says what is wrong
        return _numpy_dtype(np_func, a, q, axis, method, keepdims)
    if hit is None:
        hit = _numpy_dtype(np_func, a, q, axis, method, keepdims)
        if len(_DTYPES) >= DTYPE_CACHE:
            _DTYPES.pop(next(iter(_DTYPES)))
        _DTYPES[key] = hit
    return hit


def _numpy_dtype(np_func: Any, a: GpuArray, q: Any, axis: Any, method: Any, keepdims: bool) -> np.dtype:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stand_in = np.zeros((1,) * a.ndim, a.dtype)
        return np.asarray(np_func(stand_in, q, axis=axis, method=method, keepdims=keepdims)).dtype


def _quantile_fn(np_func: Any, percent: bool, nan: bool) -> None:
    name = np_func.__name__

    @register_array(np_func, arg="a")
    def impl(a: GpuArray, p: dict) -> Any:
        q, axis, method, keepdims = p["q"], p["axis"], p["method"], _flag(p["keepdims"])
        if p.get("weights") is not None or a.dtype not in _dtypes.ALL_DTYPES:
            return _FALLBACK
        weak = type(q) in (int, float)          # NumPy: a Python scalar q promotes weakly
        if isinstance(q, GpuArray):
            q = np.asarray(q)                   # a parameter: NumPy reads it on the host too
        want = _result_dtype(np_func, a, q, axis, method, keepdims)
        mw = _map_dtype(want, a.device)
        if mw is None or a.size == 0:
            return _FALLBACK                    # empty: NumPy's errors and warnings, no data moves
        qa = np.true_divide(q, 100) if percent else np.asanyarray(q)
        axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
        if len(axes) == a.ndim and can_select(a, _q.select_ranks(qa, method)):
            r = _q.quantile_selected(a, qa, method, nan, weak)     # radix selection, no sort
        else:
            s = _q.sorted_slices(a, axes)
            count = _q.nan_count(s) if nan and a.dtype.kind == "f" else None
            r = _q.quantile_sorted(s, qa, method, count, weak)
        if keepdims:
            r = _m.reshape(r, qa.shape + tuple(1 if i in axes else a.shape[i] for i in range(a.ndim)))
        r = _cast(r, mw)
        return r if p["out"] is None else _into_out(r, p["out"], name)


_quantile_fn(np.percentile, True, False)
_quantile_fn(np.quantile, False, False)
_quantile_fn(np.nanpercentile, True, True)
_quantile_fn(np.nanquantile, False, True)


@register_array(np.nanmedian, arg="a")
def _nanmedian(a: GpuArray, p: dict) -> Any:
    """Sort with NaN last, count the non-NaN values per slice, gather the middle one or two."""
    axis, keepdims = p["axis"], _flag(p["keepdims"])
    if a.dtype.kind != "f" or a.size == 0:
        if a.dtype not in _dtypes.REAL_NUMERIC or a.size == 0:
            return _FALLBACK
        r = _np.median(a, axis=axis, keepdims=keepdims)           # no NaN: the median (on the device)
    else:
        axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
        if len(axes) == a.ndim and can_select(a, 2):
            r = _q.nanmedian_selected(a)                              # radix selection, no sort
        else:
            s = _q.sorted_slices(a, axes)
            r = _q.nanmedian_sorted(s, _q.nan_count(s))
        if keepdims:
            r = _m.reshape(r, tuple(1 if i in axes else a.shape[i] for i in range(a.ndim)))
    return r if p["out"] is None else _into_out(r, p["out"], "nanmedian")


# ============================================================ interp
def _edge(v: Any, default: Any, dt: np.dtype) -> Any:
    """``left`` / ``right``: a 0-d GpuArray, or a Python number converted as NumPy's C code does."""
    if v is None:
        return default
    if isinstance(v, GpuArray):
        if v.ndim != 0:
            raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
        return _cast(v, dt)
    return complex(v) if dt.kind == "c" else float(v)


def _interp_real(x: GpuArray, xp_: GpuArray, fp: GpuArray, left: Any, right: Any) -> GpuArray:
    """NumPy's ``arr_interp`` for real ``fp`` (``xp_`` sorted, at least two points)."""
    n = xp_.shape[0]
    j = _np.subtract(searchsorted(xp_, x, side="right"), 1)      # the last j with xp[j] <= x
    jc = _np.clip(j, 0, n - 2)
    x0, x1 = take(xp_, jc), take(xp_, _np.add(jc, 1))
    y0, y1 = take(fp, jc), take(fp, _np.add(jc, 1))
    if fp.dtype.kind == "c":                # NumPy's complex loop: no retry from the right end
        slope = _np.multiply(_np.subtract(y1, y0), _np.divide(1.0, _np.subtract(x1, x0)))
        r = _np.add(_np.multiply(slope, _np.subtract(x, x0)), y0)
    else:
        slope = _np.divide(_np.subtract(y1, y0), _np.subtract(x1, x0))
        r = _np.add(_np.multiply(slope, _np.subtract(x, x0)), y0)
        r2 = _np.add(_np.multiply(slope, _np.subtract(x, x1)), y1)        # a NaN from one side: the other
        r2 = _np.where(_np.logical_and(_np.isnan(r2), _np.equal(y0, y1)), y0, r2)
        r = _np.where(_np.isnan(r), r2, r)
    r = _np.where(_np.equal(x, x0), y0, r)
    r = _np.where(_np.equal(j, n - 1), fp[n - 1], r)
    r = _np.where(_np.less(j, 0), left, r)
    r = _np.where(_np.greater(x, xp_[n - 1]), right, r)
    return _np.where(_np.isnan(x), x, r)


@register(np.interp)
def _interp(p: dict) -> Any:
    x, xp_, fp, left, right, period = p["x"], p["xp"], p["fp"], p["left"], p["right"], p["period"]
    dev = _device(x, xp_, fp, left, right)
    x, xp_, fp = (_as_array(v, dev) for v in (x, xp_, fp))
    if x.dtype.kind == "c" or xp_.dtype.kind == "c" or fp.dtype not in _dtypes.ALL_DTYPES:
        return _FALLBACK                    # NumPy raises its own TypeError
    dt = _map_dtype(np.dtype(np.complex128 if fp.dtype.kind == "c" else np.float64), dev)
    rdt = None if dt is None else _dtypes.REAL_OF.get(dt, dt)
    if dt is None or rdt is None:
        return _FALLBACK
    x, xp_, fp = _cast(x, rdt), _cast(xp_, rdt), _cast(fp, dt)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period, left, right = abs(period), None, None
        if xp_.ndim != 1 or fp.ndim != 1:
            raise ValueError("Data points must be 1-D sequences")
        if xp_.shape[0] != fp.shape[0]:
            raise ValueError("fp and xp are not of the same length")
        if xp_.shape[0]:
            x, xp_ = _np.remainder(x, period), _np.remainder(xp_, period)
            order = argsort(xp_)
            xp_, fp = take(xp_, order), take(fp, order)
            xp_ = _m.concat([_np.subtract(xp_[-1:], period), xp_, _np.add(xp_[:1], period)])
            fp = _m.concat([fp[-1:], fp, fp[:1]])
            # computed here, not inlined: every gather below reads the extended points at three indices
            # with a branch per concat part, so one fused kernel would inline ten remainders (a cold
            # compile of 7.8 s against 2.2 s on lavapipe; the schedule does not weigh that yet)
            evaluate(xp_, fp)
    for v in (xp_, fp):
        if v.ndim != 1:
            raise ValueError("object too deep for desired array" if v.ndim else
                             "object of too small depth for desired array")
    if xp_.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if fp.shape[0] != xp_.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    lval, rval = _edge(left, fp[0], dt), _edge(right, fp[-1], dt)
    if xp_.shape[0] == 1:
        r = _np.where(_np.less(x, xp_[0]), lval, _np.where(_np.greater(x, xp_[0]), rval, fp[0]))
    else:
        r = _interp_real(x, xp_, fp, lval, rval)
    return _cast(r, dt)


# ============================================================ cov, corrcoef
def _weights(w: Any, name: str, n: int, dev: Any, integer: bool) -> Any:
    """``fweights`` / ``aweights`` checked as NumPy checks them: a host float64 array (a parameter), or a
    float GpuArray whose values are checked with one read of two booleans."""
    on_device = isinstance(w, GpuArray)
    wd = _cast(w, _map_dtype(np.dtype(np.float64), dev) or w.dtype) if on_device else np.asarray(w, dtype=float)
    if integer and not on_device and not np.all(wd == np.around(wd)):
        raise TypeError("fweights must be integer")
    if wd.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if wd.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if on_device:
        false = full((), False, dtype=_dtypes.bool_, device=dev)
        bad = _np.any(_np.not_equal(wd, _np.around(wd))) if integer else false
        flags = np.asarray(_m.stack([bad, _np.any(_np.less(wd, 0))]))      # the one read
        if flags[0]:
            raise TypeError("fweights must be integer")
        negative = bool(flags[1])
    else:
        negative = bool(np.any(wd < 0))
    if negative:
        raise ValueError(f"{name} cannot be negative")
    return wd


def _atleast_2d(a: GpuArray) -> GpuArray:
    return _m.reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a


def _times_conj_t(x: GpuArray, y: GpuArray) -> GpuArray:
    """``x @ conj(y).T``; for complex operands as four real matmuls (the matmul kernels are real)."""
    if x.dtype.kind != "c" and y.dtype.kind != "c":
        return matmul(x, y.T)
    a, b, p, q = _np.real(x), _np.imag(x), _np.real(y), _np.imag(y)
    re = _np.add(matmul(a, p.T), matmul(b, q.T))
    im = _np.subtract(matmul(b, p.T), matmul(a, q.T))
    out = zeros(re.shape, dtype=np.result_type(x.dtype, y.dtype), device=x.device)
    out.real, out.imag = re, im
    return out


def _covariance(m: Any, y: Any, rowvar: Any, bias: Any, ddof: Any, fweights: Any, aweights: Any,
                dtype: Any) -> Any:
    """NumPy's ``cov``: X centered by its (weighted) row means, ``X @ conj(X * w).T / fact``."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    dev = _device(m, y, fweights, aweights)
    m = _as_array(m, dev)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None:
        y = _as_array(y, dev)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(m.dtype, np.float64) if y is None else np.result_type(m.dtype, y.dtype, np.float64)
    dt = _map_dtype(np.dtype(dtype), dev)
    if dt is None or dt.kind not in "fc" or m.dtype not in _dtypes.ALL_DTYPES:
        return _FALLBACK
    X = _cast(_atleast_2d(m), dt)
    if not rowvar and m.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return zeros((0, 0), dtype=_map_dtype(np.dtype(np.float64), dev), device=dev)
    if y is not None:
        Y = _cast(_atleast_2d(y), dt)
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = _m.concat([X, Y], axis=0)
    if X.shape[1] == 0:
        return _FALLBACK                     # NumPy's warnings about empty slices; no data moves
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    n = X.shape[1]
    fw = None if fweights is None else _weights(fweights, "fweights", n, dev, True)
    aw = None if aweights is None else _weights(aweights, "aweights", n, dev, False)
    w = fw if aw is None else aw if fw is None else _np.multiply(fw, aw)
    fact: Any
    if w is None:
        avg = xmean(X, axis=1, keepdims=True)
        fact = n - ddof
    else:
        w_sum = _np.sum(w)
        wd = w if isinstance(w, GpuArray) else asarray(w, device=dev)
        avg = _np.divide(xsum(_np.multiply(X, wd), axis=1, keepdims=True), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aw is None:
            fact = _np.subtract(w_sum, ddof)
        else:
            fact = _np.subtract(w_sum, _np.divide(_np.multiply(ddof, _np.sum(_np.multiply(w, aw))), w_sum))
    if not isinstance(fact, GpuArray) and fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=4)
        fact = 0.0
    X = _cast(_np.subtract(X, avg), dt)
    c = _times_conj_t(X, X if w is None else _np.multiply(X, wd))     # with weights: NumPy's float64 result
    if isinstance(fact, GpuArray):          # device weights: no warning; fact <= 0 gives inf as NumPy's 1/0
        inv = _np.divide(1.0, _np.where(_np.greater(fact, 0), fact, 0.0))
    else:
        inv = 1.0 / fact if fact else math.inf
    c = _cast(_np.multiply(c, inv), c.dtype)
    return _m.reshape(c, ()) if c.shape == (1, 1) else c


@register(np.cov)
def _cov(p: dict) -> Any:
    return _covariance(p["m"], p["y"], p["rowvar"], p["bias"], p["ddof"], p["fweights"], p["aweights"],
                       p["dtype"])


@register(np.corrcoef)
def _corrcoef(p: dict) -> Any:
    """``cov``, divided by the outer product of the standard deviations, clipped to [-1, 1] per part."""
    c = _covariance(p["x"], p["y"], p["rowvar"], False, None, None, None, p["dtype"])
    if c is _FALLBACK or c.ndim == 0:
        return c if c is _FALLBACK else _np.divide(c, c)
    if c.size == 0:
        return c
    stddev = _np.sqrt(_np.real(_m.reshape(c, (-1,))[::c.shape[0] + 1]))     # the diagonal, a view
    if c.dtype.kind != "c":
        return _np.clip(_np.divide(_np.divide(c, stddev[:, None]), stddev[None, :]), -1, 1)
    re, im = (_np.clip(_np.divide(_np.divide(part, stddev[:, None]), stddev[None, :]), -1, 1)
              for part in (_np.real(c), _np.imag(c)))     # NumPy's complex / real: each part divided
    c.real, c.imag = re, im
    return c


# ============================================================ convolve, correlate
def _shifted_sum(a: GpuArray, v: GpuArray, n_left: int, length: int, dt: np.dtype) -> GpuArray:
    """``out[k] = sum_j a[k + j - n_left] * v[j]`` for k < ``length``, over the j where ``a`` has that
    element, as sums of shifted slices: one fused kernel per ``DIRECT_MAX`` shifts (a balanced sum, so the
    graph stays shallow). Each product covers only the outputs its slice of ``a`` reaches, zeros added
    around it: as NumPy, no element meets a padding zero (``0 * nan`` would make every output NaN)."""
    evaluate(a, v)                            # each slice then reads a buffer, not a recomputed cone
    n1 = a.shape[0]
    acc: GpuArray | None = None
    for start in range(0, v.shape[0], DIRECT_MAX):
        terms = []
        for j in range(start, min(start + DIRECT_MAX, v.shape[0])):
            lo, hi = max(0, n_left - j), min(length, n_left - j + n1)     # the outputs this shift reaches
            if hi <= lo:
                continue
            prod = _np.multiply(a[lo + j - n_left:hi + j - n_left], v[j])
            parts = [zeros((lo,), dtype=prod.dtype, device=a.device)] if lo else []
            parts += [prod] + ([zeros((length - hi,), dtype=prod.dtype, device=a.device)] if hi < length else [])
            terms.append(_m.concat(parts) if len(parts) > 1 else prod)
        if not terms:
            continue
        while len(terms) > 1:
            terms = [_np.add(terms[i], terms[i + 1]) if i + 1 < len(terms) else terms[i]
                     for i in range(0, len(terms), 2)]
        part = _cast(terms[0], dt)
        if acc is not None:
            evaluate(part)
        acc = part if acc is None else _cast(_np.add(acc, part), dt)
    return acc if acc is not None else zeros((length,), dtype=dt, device=a.device)


def _fft_correlate(a: GpuArray, v: GpuArray, dt: np.dtype) -> GpuArray:
    """The full correlation of ``a`` with ``v`` (``a`` convolved with ``v`` reversed) through the FFT."""
    full_len = a.shape[0] + v.shape[0] - 1
    nfft = 1 << (full_len - 1).bit_length()
    vr = _m.flip(v)
    if dt.kind == "c":
        r = fft.ifft(_np.multiply(fft.fft(a, n=nfft), fft.fft(vr, n=nfft)), n=nfft)
    else:
        r = fft.irfft(_np.multiply(fft.rfft(a, n=nfft), fft.rfft(vr, n=nfft)), n=nfft)
    return _cast(r[:full_len], dt)


def _correlate_core(a: GpuArray, v: GpuArray, mode: int, dt: np.dtype) -> GpuArray:
    """NumPy's ``_pyarray_correlate`` with ``len(a) >= len(v)``: mode 0 valid, 1 same, 2 full."""
    n1, n2 = a.shape[0], v.shape[0]
    n_left = (0, n2 // 2, n2 - 1)[mode]
    length = (n1 - n2 + 1, n1, n1 + n2 - 1)[mode]
    work = dt
    if dt.kind == "b":                          # NumPy's boolean dot: any(a & v), counted exactly
        work = _dtypes.int32
    a, v = _cast(a, work), _cast(v, work)
    # the FFT spreads a NaN or an infinity to every output: operands that hold one take the direct sums (one
    # read of a flag)
    if n2 > DIRECT_MAX and dt.kind in "fc" and bool(_np.logical_and(_np.all(_np.isfinite(a)),
                                                                    _np.all(_np.isfinite(v)))):
        start = n2 - 1 - n_left
        r = _fft_correlate(a, v, dt)[start:start + length]
    else:
        r = _shifted_sum(a, v, n_left, length, work)
    return _np.not_equal(r, 0) if dt.kind == "b" else r


def _mode(mode: Any) -> int:
    """NumPy's mode (0 valid, 1 same, 2 full), read off NumPy's result length on stand-ins (its errors)."""
    return {2: 0, 3: 1, 4: 2}[np.correlate(np.ones(3), np.ones(2), mode=mode).shape[0]]


def _operands(a: Any, v: Any, ndmin: bool) -> tuple[GpuArray, GpuArray, np.dtype] | None:
    dev = _device(a, v)
    a, v = _as_array(a, dev), _as_array(v, dev)
    for x in (a, v):
        if x.ndim > 1:
            raise ValueError("object too deep for desired array")
        if x.ndim == 0 and not ndmin:
            raise ValueError("object of too small depth for desired array")
    a, v = _m.reshape(a, (-1,)), _m.reshape(v, (-1,))
    if a.dtype not in _dtypes.ALL_DTYPES or v.dtype not in _dtypes.ALL_DTYPES:
        return None
    dt = _map_dtype(_probe_dtype(np.correlate, a, v), dev)
    return None if dt is None else (a, v, dt)


@register(np.correlate)
def _correlate(p: dict) -> Any:
    ops = _operands(p["a"], p["v"], False)
    mode = _mode(p["mode"])
    if ops is None:
        return _FALLBACK
    a, v, dt = ops
    if a.shape[0] == 0:
        raise ValueError("first array argument cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("second array argument cannot be empty")
    if v.dtype.kind == "c":
        v = _np.conj(v)
    if a.shape[0] < v.shape[0]:               # NumPy swaps the operands and reverses the result
        return _m.flip(_correlate_core(v, a, mode, dt))
    return _correlate_core(a, v, mode, dt)


@register(np.convolve)
def _convolve(p: dict) -> Any:
    ops = _operands(p["a"], p["v"], True)
    mode = _mode(p["mode"])
    if ops is None:
        return _FALLBACK
    a, v, dt = ops
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    if a.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("v cannot be empty")
    return _correlate_core(a, _m.flip(v), mode, dt)


# ============================================================ lexsort
@register(np.lexsort)
def _lexsort(p: dict) -> Any:
    """Stable argsorts from the first key to the last (the primary one), each of the key gathered
    through the permutation found so far."""
    keys, axis = p["keys"], p["axis"]
    dev = _device(keys)
    if isinstance(keys, GpuArray):
        if keys.ndim == 0:
            raise TypeError("need sequence of keys with len > 0 in lexsort")
        seq = [keys[i] for i in range(keys.shape[0])]
    else:
        seq = [_as_array(k, dev) for k in keys]
    if not seq:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if any(k.shape != seq[0].shape for k in seq):
        raise ValueError("all keys need to be the same shape")
    if any(k.dtype not in _dtypes.ALL_DTYPES or k.dtype.kind == "c" for k in seq):
        return _FALLBACK
    ip = _map_dtype(np.dtype(np.intp), dev) or dev.default_int
    shape = seq[0].shape
    ax = normalize_axis_index(axis, max(len(shape), 1))
    if not shape or 0 in shape:
        return zeros(shape, dtype=ip, device=dev)
    perm = argsort(seq[0], axis=ax, stable=True)
    for k in seq[1:]:
        perm = take_along_axis(perm, argsort(take_along_axis(k, perm, axis=ax), axis=ax, stable=True), axis=ax)
    return _cast(perm, ip)


__all__ = ["DIRECT_MAX"]
