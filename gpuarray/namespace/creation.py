"""Creation functions (Array API: creation category). All lazy: nothing is
uploaded or computed until a value is needed.

>>> import gpuarray as xp
>>> xp.arange(4, device="cpu").tolist()
[0, 1, 2, 3]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..array_object.array import GpuArray, expect_array
from ..array_object.elementwise import apply, astype_node, finish
from ..array_object.hooks import register
from ..core import dtypes as _dtypes
from ..core.ops import OPS
from ..graph.node import const, leaf, make
from ..graph.views import strided_view
from ..runtime.devices import Device, as_device
from ..runtime.planner import after_upload
from .manipulation import broadcast_to, reshape

ShapeLike = int | Sequence[int]


def _shape(shape: ShapeLike) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    try:
        out = tuple(operator.index(s) for s in shape)  # type: ignore[union-attr]
    except TypeError as exc:
        raise TypeError(f"shape must be an int or a sequence of ints; got {shape!r}") from exc
    if any(s < 0 for s in out):
        raise ValueError(f"negative dimensions are not allowed; got shape {out}")
    return out


def _dtype_or(dtype: Any, default: np.dtype, device: Device) -> np.dtype:
    dt = default if dtype is None else _dtypes.as_dtype(dtype)
    device.check_dtype(dt)
    return dt


def _infer_dtype(host: np.ndarray, obj: Any, device: Device) -> np.dtype:
    """Default dtypes for Python data: bool, the device's default int, float and complex."""
    kind = host.dtype.kind
    from_python = not isinstance(obj, (np.ndarray, np.generic)) and not _numpy_leaves(obj)
    if kind == "b":
        return _dtypes.bool_
    if kind in "iu" and from_python:
        return device.default_int if host.dtype.itemsize <= 8 else host.dtype
    if kind == "f" and from_python:
        return device.default_float
    if kind == "c" and from_python:
        return device.default_complex
    if host.dtype in _dtypes.ALL_DTYPES:
        return host.dtype
    raise TypeError(f"Unsupported dtype: gpuarray does not support dtype {host.dtype}; "
                    f"expected one of {_dtypes.dtype_names()}")


def _numpy_leaves(obj: Any) -> bool:
    """Whether ``obj`` is a non-empty list or tuple whose items are all NumPy scalars or arrays, or
    GpuArrays: NumPy's dtype then, as ``np.asarray`` gives (``[np.int32(1)]`` and a list of 0-d
    int32 GpuArrays stay int32)."""
    if isinstance(obj, (list, tuple)):
        return bool(obj) and all(_numpy_leaves(o) for o in obj)
    return isinstance(obj, (np.ndarray, np.generic, GpuArray))


def _has_float(obj: Any) -> bool:
    if isinstance(obj, (list, tuple)):
        return any(_has_float(o) for o in obj)
    return isinstance(obj, (float, np.floating))


def _has_big_int(obj: Any) -> bool:
    if isinstance(obj, int) and not isinstance(obj, bool):
        return not -(2**63) <= obj < 2**64
    if isinstance(obj, (list, tuple)):
        return any(_has_big_int(o) for o in obj)
    return False


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> GpuArray:
    """Convert lists, scalars, NumPy arrays and GpuArrays to a GpuArray.

    >>> asarray([1, 2], dtype="float32", device="cpu").dtype
    dtype('float32')
    """
    if isinstance(obj, GpuArray):
        node = obj._node
        if not copy and (device is None or device is node.device) and (dtype is None or dtype is node.dtype):
            return obj              # the common case (SciPy's xp.asarray(x, device=xp_device(x))), without calls
        dev = obj.device if device is None else as_device(device)
        out = obj
        if dtype is not None and _dtypes.as_dtype(dtype) != obj.dtype:
            if copy is False:
                raise ValueError("asarray: copy=False but a dtype conversion needs a copy")
            out = GpuArray(astype_node(obj._node, _dtypes.as_dtype(dtype)))
        if dev != obj.device:
            if copy is False:
                raise ValueError(f"asarray: copy=False but moving to {dev.name} needs a copy")
            dev.check_dtype(out.dtype)
            return GpuArray(leaf(out._host(), dev))
        return GpuArray(out._node) if copy else out
    dev = as_device(device)
    if copy is False:
        raise ValueError(f"asarray: copy=False, but a {type(obj).__name__} must be copied into a GpuArray")
    try:
        host = np.asarray(obj)
        if dtype is not None and host.dtype == np.float64 and _dtypes.as_dtype(dtype).kind in "iu" and \
                isinstance(obj, (list, tuple)) and not _has_float(obj):
            host = np.asarray(obj, dtype=_dtypes.as_dtype(dtype))   # big ints: NumPy went through float64
    except (ValueError, TypeError, OverflowError) as exc:
        raise type(exc)(f"asarray: cannot convert {type(obj).__name__} to an array: {exc}") from exc
    if host.dtype == object and _has_big_int(obj):
        raise OverflowError("asarray: Python integer out of bounds for int64 / uint64")
    if host.dtype == object:
        raise TypeError(f"asarray: cannot convert {type(obj).__name__} with mixed or non-numeric items")
    if dtype is None:
        dt = _infer_dtype(host, obj, dev)
    else:
        dt = _dtypes.as_dtype(dtype)
        if host.dtype.kind == "c" and dt.kind != "c":
            raise TypeError(f"asarray: cannot convert complex data to {dt}; take real() or abs() of it first")
    dev.check_dtype(dt)
    if host.dtype.kind in "iu" and dt.kind in "iu" and host.size and not isinstance(obj, np.ndarray):
        info = np.iinfo(dt)
        if host.min() < info.min or host.max() > info.max:
            raise OverflowError(f"Python integer out of bounds for {dt}")
    data = np.array(host, dtype=dt, copy=True)
    node = leaf(data, dev)
    after_upload(node)              # a read learned to follow this upload starts now (runtime/speculate.py)
    return GpuArray(node)


def full(shape: ShapeLike, fill_value: bool | int | float | complex, *, dtype: Any = None,
         device: Any = None) -> GpuArray:
    """An array of ``shape`` filled with ``fill_value`` (lazy: a broadcast uniform)."""
    dev = as_device(device)
    shp = _shape(shape)
    if isinstance(fill_value, GpuArray):
        fill_value = fill_value.item()
    if isinstance(fill_value, (np.generic,)):
        fill_value = fill_value.item()
    kind = _dtypes.scalar_kind(fill_value)
    if kind is None:
        raise TypeError(f"fill_value must be bool, int, float or complex; got {type(fill_value).__name__}")
    default = {"b": _dtypes.bool_, "i": dev.default_int, "f": dev.default_float, "c": dev.default_complex}[kind]
    dt = _dtype_or(dtype, default, dev)
    if kind == "c" and dt.kind != "c":
        raise TypeError(f"full: a complex fill_value needs a complex dtype; got {dt}")
    if kind == "i" and dt.kind in "iu":
        info = np.iinfo(dt)
        assert isinstance(fill_value, int)
        if not info.min <= fill_value <= info.max:
            raise OverflowError(f"Python integer {fill_value} out of bounds for {dt}")
    c = const(fill_value, dt, dev)
    return GpuArray(strided_view(c, shp, (0,) * len(shp), 0) if shp else c)


def zeros(shape: ShapeLike, *, dtype: Any = None, device: Any = None) -> GpuArray:
    """An array of zeros (default float dtype)."""
    dev = as_device(device)
    return full(shape, 0, dtype=_dtype_or(dtype, dev.default_float, dev), device=dev)


def ones(shape: ShapeLike, *, dtype: Any = None, device: Any = None) -> GpuArray:
    """An array of ones (default float dtype)."""
    dev = as_device(device)
    return full(shape, 1, dtype=_dtype_or(dtype, dev.default_float, dev), device=dev)


def empty(shape: ShapeLike, *, dtype: Any = None, device: Any = None) -> GpuArray:
    """An uninitialized array; gpuarray fills it with zeros."""
    return zeros(shape, dtype=dtype, device=device)


def _like(x: GpuArray, dtype: Any, device: Any) -> tuple[Any, Any]:
    expect_array(x, "")
    return (x.dtype if dtype is None else dtype), (x.device if device is None else device)


def zeros_like(x: GpuArray, /, *, dtype: Any = None, device: Any = None) -> GpuArray:
    dt, dev = _like(x, dtype, device)
    return zeros(x.shape, dtype=dt, device=dev)


def ones_like(x: GpuArray, /, *, dtype: Any = None, device: Any = None) -> GpuArray:
    dt, dev = _like(x, dtype, device)
    return ones(x.shape, dtype=dt, device=dev)


def empty_like(x: GpuArray, /, *, dtype: Any = None, device: Any = None) -> GpuArray:
    dt, dev = _like(x, dtype, device)
    return empty(x.shape, dtype=dt, device=dev)


def full_like(x: GpuArray, /, fill_value: bool | int | float | complex, *, dtype: Any = None,
              device: Any = None) -> GpuArray:
    dt, dev = _like(x, dtype, device)
    return full(x.shape, fill_value, dtype=dt, device=dev)


def _iota(n: int, dtype: np.dtype, device: Device) -> GpuArray:
    return GpuArray(make("iota", (), dtype, (n,), (), device))


def _ramp(i: GpuArray, step: Any, start: Any) -> GpuArray:
    """``start + i * step`` with the product rounded before the sum, as NumPy's ``arange`` fill and
    ``linspace`` compute it (a device compiler may otherwise fuse the two into one fma)."""
    return apply(OPS["add"], apply(OPS["multiply_rounded"], i, step), start)


def _at(i: GpuArray, k: int, value: Any, y: GpuArray) -> GpuArray:
    """``y`` with ``value`` where the index ramp ``i`` is ``k`` (NumPy's first elements and endpoint)."""
    return apply(OPS["where"], apply(OPS["equal"], i, float(k)), value, y)


def _scalar_bound(v: Any) -> Any:
    """A 0-d array (GpuArray or NumPy) given as a bound of ``arange``: its value, as NumPy takes it."""
    if isinstance(v, (GpuArray, np.ndarray)) and v.ndim == 0:
        return v.item()
    return v


def arange(start: int | float, /, stop: int | float | None = None, step: int | float = 1, *,
           dtype: Any = None, device: Any = None) -> GpuArray:
    """Evenly spaced values in [start, stop), computed on the device as NumPy fills them: ``start``,
    ``start + step``, then ``start + i * delta`` with ``delta`` the difference of the first two.

    >>> arange(0.5, 2, 0.5, device="cpu").tolist()
    [0.5, 1.0, 1.5]
    """
    dev = as_device(device)
    start, stop, step = (_scalar_bound(v) for v in (start, stop, step))
    if stop is None:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if _dtypes.scalar_kind(v) is None and not isinstance(v, np.number):
            raise TypeError(f"arange: {name} must be a real number; got {type(v).__name__}")
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    is_float = any(isinstance(v, (float, np.floating)) for v in (start, stop, step))
    dt = _dtype_or(dtype, dev.default_float if is_float else dev.default_int, dev)
    n = max(0, math.ceil((stop - start) / step))
    if dt.kind in "iu" and n:
        info = np.iinfo(dt)
        last = start + (n - 1) * step
        if not (info.min <= start <= info.max and info.min <= last <= info.max):
            raise OverflowError(f"arange: values do not fit {dt}")
    if dt == _dtypes.bool_:
        if n > 2:
            raise ValueError("arange: no more than 2 elements for a boolean result")
        return asarray(np.arange(start, stop, step, dtype=bool), device=dev)
    i = _iota(n, dt, dev)
    if dt.kind == "f":
        # NumPy's fill: x0 = start and x1 = start + step (the operands' arithmetic, then cast), then
        # x_i = x0 + i * (x1 - x0) in ``dt`` with the product rounded: the same bits
        with np.errstate(all="ignore"):
            x0, x1 = dt.type(start), dt.type(start + step)
            delta = x1 - x0
        out = _at(i, 1, x1.item(), _ramp(i, delta.item(), x0.item()))
        return _at(i, 0, x0.item(), out)
    mul, add = OPS["multiply"], OPS["add"]
    out = i if step == 1 else apply(mul, i, dt.type(step).item())
    return out if start == 0 else apply(add, out, dt.type(start).item())


def linspace(start: int | float | complex, stop: int | float | complex, /, num: int, *, dtype: Any = None,
             device: Any = None, endpoint: bool = True) -> GpuArray:
    """``num`` evenly spaced samples over [start, stop] (as NumPy: the last is exactly ``stop``).

    Complex endpoints (or a complex ``dtype``) give a complex result (the device's default
    complex dtype unless ``dtype`` says otherwise).

    >>> import gpuarray as xp
    >>> xp.linspace(0, 2 + 2j, 3, device="cpu").tolist()
    [0j, (1+1j), (2+2j)]
    """
    dev = as_device(device)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples {num} must be non-negative")
    is_complex = isinstance(start, (complex, np.complexfloating)) or isinstance(stop, (complex, np.complexfloating))
    dt = _dtype_or(dtype, dev.default_complex if is_complex else dev.default_float, dev)
    if dt.kind not in "fciu":
        raise TypeError(f"linspace: dtype must be a numeric dtype; got {dt}")
    if is_complex and dt.kind != "c":
        raise TypeError(f"linspace: complex start or stop needs a complex dtype; got {dt}")
    # NumPy computes in the dtype of start and stop (float64 for Python numbers, float32 for float32
    # scalars), y = i * step + start with the product rounded, and casts the result to ``dtype``: the
    # same bits here where the device has that dtype (histogram bin edges compared with NumPy's)
    ct = np.result_type(start, stop, 1.0)           # inexact: Python numbers and integers float64
    ct = np.dtype(np.float32) if ct == np.float16 else ct
    if not dev.provider.supports(ct):       # float64 where the device has none: in ``dtype`` (an ULP apart)
        ct = dt if dt.kind in "fc" else dev.default_float
    cast: Any = complex if ct.kind == "c" else float
    div = (num - 1) if endpoint else num
    start_c, stop_c = ct.type(start), ct.type(stop)
    with np.errstate(all="ignore"):
        delta = stop_c - start_c
        step = delta / ct.type(div) if div > 0 else delta
    i = _iota(num, ct, dev)
    if div > 0 and step == 0:       # subnormal steps: (i / div) * delta, as NumPy (gh-5437)
        y = _ramp(apply(OPS["divide"], i, float(div)), cast(delta), cast(start_c))
    else:
        y = _ramp(i, cast(step), cast(start_c))
    if endpoint and num > 1:
        y = _at(i, num - 1, cast(stop_c), y)
    if dt.kind in "iu":
        y = apply(OPS["floor"], y)      # NumPy floors in the computing dtype, then casts
    return y if y.dtype == dt else finish(astype_node(y._node, dt))


def logspace(start: int | float, stop: int | float, /, num: int = 50, *, endpoint: bool = True,
             base: int | float = 10.0, dtype: Any = None, device: Any = None) -> GpuArray:
    """``base ** linspace(start, stop, num)``, as ``numpy.logspace`` (not in the Array API; SciPy's
    tests call it). An integer ``dtype`` truncates, as NumPy's ``astype`` does.

    >>> import gpuarray as xp
    >>> xp.logspace(0, 2, 3, device="cpu").tolist()
    [1.0, 10.0, 100.0]
    """
    dev = as_device(device)
    for name, v in (("start", start), ("stop", stop), ("base", base)):
        if isinstance(v, (complex, np.complexfloating)) or (isinstance(v, GpuArray) and v.dtype.kind == "c"):
            raise TypeError(f"logspace: complex {name} is not supported; got {v!r}")
        if isinstance(v, GpuArray) and v.ndim != 0:
            raise TypeError(f"logspace: {name} must be a scalar (array {name} is not supported); got shape {v.shape}")
    dt = _dtype_or(dtype, dev.default_float, dev)
    if dt.kind not in "iuf":
        raise TypeError(f"logspace: dtype must be a real numeric dtype; got {dt}")
    y = linspace(float(start), float(stop), num, dtype=dev.default_float, device=dev, endpoint=endpoint)
    out = apply(OPS["pow"], float(base), y)
    return out if out.dtype == dt else finish(astype_node(out._node, dt))


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
        device: Any = None) -> GpuArray:
    """Ones on the k-th diagonal, zeros elsewhere (computed from two index ramps)."""
    dev = as_device(device)
    n_cols = n_rows if n_cols is None else n_cols
    n_rows, n_cols, k = operator.index(n_rows), operator.index(n_cols), operator.index(k)
    if n_rows < 0 or n_cols < 0:
        raise ValueError("eye: dimensions must be non-negative")
    dt = _dtype_or(dtype, dev.default_float, dev)
    k = max(-n_rows - 1, min(k, n_cols + 1))     # a diagonal outside the matrix: all zeros
    it = _dtypes.int32
    rows = GpuArray(make("reshape", (_iota(n_rows, it, dev)._node,), it, (n_rows, 1)))
    cols = _iota(n_cols, it, dev)
    hit = apply(OPS["equal"], apply(OPS["add"], rows, k) if k else rows, cols)
    return finish(astype_node(hit._node, dt))


def meshgrid(*arrays: GpuArray, indexing: str = "xy") -> list[GpuArray]:
    """Coordinate grids from 1-D arrays (broadcast views: nothing is copied).

    >>> [g.shape for g in meshgrid(arange(3, device="cpu"), arange(2, device="cpu"))]
    [(2, 3), (2, 3)]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij'; got {indexing!r}")
    for a in arrays:
        if not isinstance(a, GpuArray) or a.ndim != 1:
            raise ValueError("meshgrid: every input must be a one-dimensional GpuArray")
    if arrays:
        dts = {a.dtype for a in arrays}
        devs = {a.device for a in arrays}
        if len(dts) > 1:
            raise ValueError(f"meshgrid: inputs must share one dtype; got {sorted(str(d) for d in dts)}")
        if len(devs) > 1:
            raise ValueError(f"meshgrid: inputs are on different devices: {sorted(d.name for d in devs)}")
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        axis = i
        if indexing == "xy" and len(arrays) > 1 and i < 2:
            axis = 1 - i
        view = [1] * len(arrays)
        view[axis] = a.shape[0]
        out.append(broadcast_to(reshape(a, tuple(view)), tuple(shape)))
    return out


def _triangle(x: GpuArray, k: int, lower: bool, name: str) -> GpuArray:
    expect_array(x, f"{name}")
    if x.ndim < 2:
        raise ValueError(f"{name}: x must have at least 2 dimensions; got {x.ndim}")
    k = operator.index(k)
    m, n = x.shape[-2], x.shape[-1]
    it = _dtypes.int64 if x.device.supports(_dtypes.int64) else _dtypes.int32
    rows = GpuArray(make("reshape", (_iota(m, it, x.device)._node,), it, (m, 1)))
    diff = apply(OPS["subtract"], _iota(n, it, x.device), rows)          # col - row
    keep = apply(OPS["less_equal"] if lower else OPS["greater_equal"], diff, k)
    return apply(OPS["where"], keep, x, zeros((), dtype=x.dtype, device=x.device))


def tril(x: GpuArray, /, *, k: int = 0) -> GpuArray:
    """The lower triangle of the last two axes (elements above diagonal ``k`` are zero)."""
    return _triangle(x, k, True, "tril")


def triu(x: GpuArray, /, *, k: int = 0) -> GpuArray:
    """The upper triangle of the last two axes (elements below diagonal ``k`` are zero)."""
    return _triangle(x, k, False, "triu")


register(asarray=asarray, full=full)   # what GpuArray's methods and operators call
