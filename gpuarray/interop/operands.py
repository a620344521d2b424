"""Operands and arguments: NumPy's arguments turned into GpuArrays in the dtypes NumPy would give,
and the small argument helpers every adapter shares (axes, ``out=``, devices, casts)."""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ..array_object.aliasing import assign
from ..array_object.array import GpuArray
from ..array_object.elementwise import apply, common_device
from ..core import dtypes as _dtypes
from ..core.ops import OPS
from ..namespace.creation import asarray, full
from ..namespace.manipulation import permute_dims, reshape
from ..runtime.devices import Device, as_device
from .host import _FALLBACK, _NOVALUE, _xp


# ============================================================ dtypes and operands
def _map_dtype(dt: np.dtype, device: Device) -> np.dtype | None:
    """The dtype gpuarray computes a NumPy loop dtype in: itself (float32 for float64 on a device
    without it); None when gpuarray has no such dtype (longdouble, object ...)."""
    if dt in _dtypes.ALL_DTYPES:
        if device.supports(dt):
            return dt
        return _dtypes.float32 if dt.kind == "f" else None
    return None


def _probe(x: Any) -> Any:
    """A stand-in with the same NumPy dtype semantics: 0-d arrays for arrays, scalars as they are."""
    if isinstance(x, (GpuArray, np.ndarray)):
        return np.zeros((), x.dtype)
    return x


def _py_scalar(x: Any, dt: np.dtype) -> Any:
    """A scalar operand converted to ``dt`` as NumPy would, as a Python scalar (a weak uniform)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(x).astype(dt)[()].item()


def _prepare(operands: tuple, dt: np.dtype, device: Device) -> list[Any]:
    """Operands as GpuArrays in compute dtype ``dt``: cast lazily, NumPy arrays uploaded, scalars as uniforms."""
    GA = GpuArray
    out: list[Any] = []
    for x in operands:
        if isinstance(x, GA):
            out.append(x if x.dtype == dt else x.astype(dt))
        elif isinstance(x, np.ndarray) and x.ndim > 0:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(asarray(x.astype(dt), device=device))
        else:                        # a 0-d constant: it reaches kernels as a uniform
            out.append(full((), _py_scalar(x, dt), dtype=dt, device=device))
    return out


def _device_from(objs: tuple, fallback: Any) -> Device:
    GA = GpuArray
    arrays = [x for x in objs if isinstance(x, GA)]
    if not arrays:
        return fallback.device if isinstance(fallback, GA) else as_device(None)
    return common_device(arrays)


def _mask(where: Any, device: Device) -> Any:
    GA = GpuArray
    m = where if isinstance(where, GA) else asarray(np.asarray(where), device=device)
    return m if m.dtype == _dtypes.bool_ else m.astype(_dtypes.bool_)


def _as_array(x: Any, device: Device) -> Any:
    """A GpuArray on ``device`` for any array-like (NumPy's dtypes for Python data)."""
    if isinstance(x, GpuArray):
        return x
    return asarray(np.asarray(x), device=device)


def _device(*objs: Any) -> Device:
    """The device of the GpuArrays in ``objs`` (searching lists and tuples); they must agree."""
    found: list[Any] = []

    def walk(o: Any) -> None:
        if isinstance(o, GpuArray):
            found.append(o)
        elif isinstance(o, (list, tuple)):
            for v in o:
                walk(v)
    walk(objs)
    return _device_from(tuple(found), None)


def _probe_dtype(func: Callable[..., Any], *dtypes_or_arrays: Any, **kw: Any) -> np.dtype:
    """The dtype NumPy's ``func`` gives on 1-element stand-ins of these arrays (scalars stay as they are)."""
    args = [np.zeros((1,) * x.ndim, x.dtype) if isinstance(x, (GpuArray, np.ndarray)) else x
            for x in dtypes_or_arrays]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(func(*args, **kw)).dtype


def _cast(x: GpuArray, dt: np.dtype) -> GpuArray:
    return x if x.dtype == dt else x.astype(dt)


def _np_array(x: Any) -> Any:
    """GpuArrays as they are, everything else (lists, scalars) as NumPy would see it."""
    return x if isinstance(x, (GpuArray, np.ndarray)) else np.asarray(x)


def _w(op: str, *args: Any) -> Any:
    return apply(OPS[op], *args)


def _ndim(x: Any) -> int:
    return int(x.ndim) if isinstance(x, (GpuArray, np.ndarray)) else 0


def _via(xp_name: str, a: Any, probe: Callable[[np.ndarray], Any], **kw: Any) -> Any:
    """Call ``gpuarray.<xp_name>(a, **kw)`` on the GpuArray ``a``; NumPy's result dtype comes from ``probe``
    on a tiny array. ``_FALLBACK`` while gpuarray has no such function, and for empty arrays."""
    fn = _xp(xp_name)
    if fn is None or a.size == 0:
        return _FALLBACK
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(probe(np.zeros((1,) * a.ndim, a.dtype))).dtype
    mw = _map_dtype(want, a.device)
    if mw is None:
        return _FALLBACK
    if "dtype" in kw:
        kw["dtype"] = mw
    r = fn(a, **kw)
    return r if r.dtype == mw else r.astype(mw)


# ============================================================ arguments
def _axes(axis: Any, ndim: int, name: str = "axis") -> tuple[int, ...]:
    return tuple(normalize_axis_tuple(axis, ndim, name))


def _given(*values: Any) -> bool:
    return any(v is not None and v is not _NOVALUE for v in values)


def _flag(value: Any) -> bool:
    return False if value is _NOVALUE else bool(value)


def _shape_arg(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)


def _permute(a: Any, axes: Any) -> Any:
    return permute_dims(a, tuple(range(a.ndim))[::-1] if axes is None else tuple(axes))


def _reshape_order(a: Any, shape: tuple[int, ...], order: Any, copy: Any = None) -> Any:
    if order == "F":
        return _permute(reshape(_permute(a, None), shape[::-1], copy=copy), None)
    if order not in ("C", "A", "K", None):
        raise ValueError(f"reshape: order must be 'C', 'F' or 'A'; got {order!r}")
    return reshape(a, shape, copy=copy)


def _int_index(x: Any) -> int:
    return operator.index(x)


def _along(a: Any, axis: Any) -> tuple[Any, int]:
    """NumPy's ``axis`` argument: ``None`` means the flattened array along axis 0; else the axis,
    normalized (AxisError / TypeError as NumPy gives)."""
    if axis is None:
        return reshape(a, (-1,)), 0
    return a, normalize_axis_index(_int_index(axis), a.ndim)


def _into_out(r: Any, out: Any, name: str) -> Any:
    """NumPy's ``out=`` of a reduction or scan: same shape, any dtype (cast 'unsafe'); returns ``out``."""
    GA = GpuArray
    o = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if not isinstance(o, (GA, np.ndarray)):
        return _FALLBACK              # NumPy raises its own TypeError on the host
    if o.shape != r.shape:
        raise ValueError(f"output parameter for reduction operation {name} has the wrong shape: "
                         f"{o.shape}; expected {r.shape}")
    if isinstance(o, GA):
        if o.device != r.device:
            raise ValueError(f"numpy.{name}: out is on {o.device.name} but the operand is on {r.device.name}; "
                             "move one with to_device() first")
        assign(o, (r if r.dtype == o.dtype else r.astype(o.dtype))._node)
    else:
        with np.errstate(all="ignore"):
            np.copyto(o, np.asarray(r), casting="unsafe")
    return o
