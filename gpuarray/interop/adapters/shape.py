"""Shape and axis adapters: transposes, reshapes, flips, moves of axes, repeats and rolls (mostly views)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ...array_object.aliasing import derive
from ...array_object.array import GpuArray
from ...namespace import manipulation as _m
from ...namespace.creation import asarray, zeros
from ...namespace.data_types import astype
from ...namespace.indexing import take as _take
from ...namespace.indexing import take_along_axis
from ..host import _FALLBACK, _NOVALUE, _first_array
from ..operands import _along, _as_array, _axes, _int_index, _permute, _reshape_order, _shape_arg
from ..registry import register, register_array

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays


@register("transpose", "permute_dims")
def _transpose(p: dict) -> Any:
    return _permute(p["a"], p["axes"])


@register("matrix_transpose")
def _matrix_transpose(p: dict) -> Any:
    return p["x"].mT


@register("reshape")
def _reshape(p: dict) -> Any:
    shape = p.get("shape")
    if shape is None or shape is _NOVALUE:
        shape = p.get("newshape")
    if shape is None or shape is _NOVALUE:
        raise TypeError("reshape() missing required argument 'shape' (pos 2)")
    return _reshape_order(p["a"], _shape_arg(shape), p.get("order", "C"), p.get("copy"))


@register("ravel")
def _ravel(p: dict) -> Any:
    """NumPy's ``ravel``: in C or F order a view only of an array contiguous in that order, else a copy
    (``reshape(-1)`` would give a strided view of ``a[:, 0]``, through which later writes to the base
    would show); ``A``: F for an array only F-contiguous; ``K``: the axes by decreasing stride, a view
    where they cover a dense block with positive strides. (An operation's result is C-contiguous whatever its inputs'
    layout, where NumPy keeps theirs: ``K`` follows that.)"""
    a, order = p["a"], p["order"]
    if order not in ("C", "F", "A", "K", None):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if not isinstance(a, GpuArray):
        return _FALLBACK
    flags = a.flags
    if order == "A":
        order = "F" if flags.f_contiguous and not flags.c_contiguous else "C"
    if order == "K":
        if flags.c_contiguous or flags.f_contiguous:
            order = "C" if flags.c_contiguous else "F"
        else:
            st = a.strides
            perm = sorted(range(a.ndim), key=lambda d: -abs(st[d]))      # stable: ties keep their order
            r = _m.reshape(_m.permute_dims(a, tuple(perm)), (-1,))
            dense, step = True, a.itemsize          # a view only of a dense block with positive strides
            for d in reversed(perm):
                if a.shape[d] != 1:
                    dense = dense and st[d] == step
                    step *= a.shape[d]
            return r if dense else r.copy()
    r = _reshape_order(a, (-1,), "F" if order == "F" else "C")
    return r if (flags.f_contiguous if order == "F" else flags.c_contiguous) else r.copy()


@register("expand_dims")
def _expand_dims(p: dict) -> Any:
    a, axis = p["a"], p["axis"]
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    ndim = a.ndim + len(axes)
    axes = _axes(axes, ndim)
    rest = iter(a.shape)
    return _m.reshape(a, tuple(1 if i in axes else next(rest) for i in range(ndim)))


@register("squeeze")
def _squeeze(p: dict) -> Any:
    a, axis = p["a"], p["axis"]
    if axis is None:
        return _m.reshape(a, tuple(s for s in a.shape if s != 1))
    if a.ndim == 0:
        _axes(axis, 1)                   # NumPy takes axis 0 or -1 of a 0-d array
        return derive(a)
    axes = _axes(axis, a.ndim)
    if any(a.shape[i] != 1 for i in axes):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return _m.reshape(a, tuple(s for i, s in enumerate(a.shape) if i not in axes))


@register("broadcast_to")
def _broadcast_to(p: dict) -> Any:
    return _m.broadcast_to(p["array"], _shape_arg(p["shape"]))


@register("broadcast_arrays")
def _broadcast_arrays(p: dict) -> Any:
    args = p["args"]
    device = _first_array(args).device
    return tuple(_m.broadcast_arrays(*(_as_array(a, device) for a in args)))


def _flip_axes(m: Any, axis: Any) -> Any:
    return _m.flip(m, axis=axis if axis is None else _axes(axis, m.ndim))


@register("flip")
def _flip(p: dict) -> Any:
    return _flip_axes(p["m"], p["axis"])


@register("fliplr")
def _fliplr(p: dict) -> Any:
    if p["m"].ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return _flip_axes(p["m"], 1)


@register("flipud")
def _flipud(p: dict) -> Any:
    if p["m"].ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return _flip_axes(p["m"], 0)


@register("moveaxis")
def _moveaxis(p: dict) -> Any:
    a = p["a"]
    src = _axes(p["source"], a.ndim, "source")
    dst = _axes(p["destination"], a.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _permute(a, order)


@register("swapaxes")
def _swapaxes(p: dict) -> Any:
    a = p["a"]
    (i,), (j,) = _axes(p["axis1"], a.ndim, "axis1"), _axes(p["axis2"], a.ndim, "axis2")
    order = list(range(a.ndim))
    order[i], order[j] = order[j], order[i]
    return _permute(a, order)


def _atleast_nd(n: int) -> Callable[..., Any]:
    def impl(p: dict) -> Any:
        arys = p["arys"]
        device = _first_array(arys).device
        out = []
        for a in arys:
            a = _as_array(a, device)
            s = a.shape
            if a.ndim == 0:
                s = (1,) * n
            elif a.ndim == 1 and n > 1:
                s = (1, s[0], 1)[:n]
            elif a.ndim == 2 and n == 3:
                s = s + (1,)
            out.append(_m.reshape(a, s) if s != a.shape else a)
        return out[0] if len(out) == 1 else tuple(out)
    return impl


for _n in (1, 2, 3):
    register(f"atleast_{_n}d")(_atleast_nd(_n))


@register("copy")
def _copy(p: dict) -> Any:
    return GpuArray(p["a"]._node)       # nodes are immutable: an array sharing the node is a copy


@register("astype")
def _astype(p: dict) -> Any:
    return astype(p["x"], np.dtype(p["dtype"]), copy=p["copy"], device=p.get("device"))


@register_array(np.take_along_axis, arg="arr")
def _take_along_axis(arr: Any, p: dict) -> Any:
    indices, axis = p["indices"], p["axis"]
    if axis is None and np.ndim(indices) != 1:
        raise ValueError("when axis=None, `indices` must have a single dimension.")
    arr, ax = _along(arr, axis)
    return take_along_axis(arr, indices, axis=ax)


@register_array(np.repeat, arg="a")
def _repeat(a: GpuArray, p: dict) -> Any:
    repeats, axis = p["repeats"], p["axis"]
    if isinstance(repeats, GpuArray) and repeats.dtype.kind == "b":
        repeats = repeats.astype(a.device.default_int)      # NumPy casts bools to counts (a safe cast)
    if not isinstance(repeats, (int, np.integer, GpuArray)):
        repeats = np.asarray(repeats)
        if repeats.dtype.kind == "b":
            repeats = repeats.astype(np.intp)
        if repeats.dtype.kind not in "iu":
            return _FALLBACK
        if repeats.ndim == 0:
            repeats = int(repeats)
    return _m.repeat(a, repeats, axis=None if axis is None else _int_index(axis))  # type: ignore[arg-type]


@register_array(np.tile, arg="A", host=("reps",))
def _tile(A: GpuArray, p: dict) -> Any:
    reps = p["reps"]
    return _m.tile(A, reps if isinstance(reps, (int, np.integer)) else tuple(reps))  # type: ignore[arg-type]


@register_array(np.roll, arg="a", host=("shift",))
def _roll(a: GpuArray, p: dict) -> Any:
    shift, axis = p["shift"], p["axis"]
    shift = _int_index(shift) if np.ndim(shift) == 0 else tuple(int(s) for s in np.asarray(shift).reshape(-1))
    if axis is not None and np.ndim(axis) != 0:
        axis = tuple(_int_index(v) for v in axis)
    elif axis is not None:
        axis = _int_index(axis)
    if axis is None and isinstance(shift, tuple):
        return _FALLBACK
    return _m.roll(a, shift, axis=axis)


@register_array("unstack")
def _unstack(x: GpuArray, p: dict) -> Any:
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    return _m.unstack(x, axis=_int_index(p["axis"]))


@register_array(np.rollaxis, arg="a")
def _rollaxis(a: GpuArray, p: dict) -> Any:
    axis, start = p["axis"], p["start"]
    n = a.ndim
    axis = normalize_axis_index(_int_index(axis), n)
    start = _int_index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return derive(a)
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return _m.permute_dims(a, tuple(axes))


@register_array(np.rot90, arg="m")
def _rot90(m: GpuArray, p: dict) -> Any:
    k, axes = p["k"], p["axes"]
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if axes[0] >= m.ndim or axes[0] < -m.ndim or axes[1] >= m.ndim or axes[1] < -m.ndim:
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k = _int_index(k) % 4
    if k == 0:
        return derive(m)
    if k == 2:
        return _m.flip(_m.flip(m, axis=axes[0]), axis=axes[1])
    order = list(range(m.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return _m.permute_dims(_m.flip(m, axis=axes[1]), tuple(order))
    return _m.flip(_m.permute_dims(m, tuple(order)), axis=axes[1])


@register_array(np.resize, arg="a")
def _resize(a: GpuArray, p: dict) -> Any:
    idx = np.resize(np.arange(a.size, dtype=np.int64), p["new_shape"])      # NumPy's own index map
    if a.size == 0:
        return zeros(idx.shape, dtype=a.dtype, device=a.device)
    return _take(_m.reshape(a, (-1,)), asarray(idx.reshape(-1), device=a.device)).reshape(idx.shape)


@register_array(np.delete, arg="arr")
def _delete(arr: Any, p: dict) -> Any:
    obj = p["obj"]
    arr, ax = _along(arr, p["axis"])
    if isinstance(obj, GpuArray):
        obj = obj.get()
    keep = np.delete(np.arange(arr.shape[ax], dtype=np.int64), obj)   # NumPy's own index map (and errors)
    return _take(arr, asarray(keep, device=arr.device), axis=ax)


@register_array(np.insert, arg="arr")
def _insert(arr: Any, p: dict) -> Any:
    """``numpy.insert`` as one gather along the axis from ``arr`` and the broadcast block of values;
    the gather's index map is NumPy's own ``insert`` of the value slots into ``arange(n)``."""
    obj, values = p["obj"], p["values"]
    arr, ax = _along(arr, p["axis"])
    n = arr.shape[ax]
    if isinstance(obj, GpuArray):
        obj = obj.get()
    indices = np.arange(n)[obj] if isinstance(obj, slice) else np.asarray(obj)
    if isinstance(values, GpuArray) and values.device != arr.device:
        return _FALLBACK
    v = astype(_as_array(values, arr.device), arr.dtype)           # NumPy casts the values unsafely
    if indices.size == 1:
        v = _m.reshape(v, (1,) * (arr.ndim - v.ndim) + v.shape)
        if indices.ndim == 0:
            v = _m.moveaxis(v, 0, ax)
        count = v.shape[ax]
    else:
        count = indices.size
    block = arr.shape[:ax] + (count,) + arr.shape[ax + 1:]
    v = _m.broadcast_to(v, block) if v.shape != block else v
    where = np.insert(np.arange(n, dtype=np.int64), obj, np.arange(n, n + count))   # NumPy's errors too
    both = _m.concat([arr, v], axis=ax)
    return _take(both, asarray(where.astype(np.int64), device=arr.device), axis=ax)


def _bit_weights(bitorder: str, dt: Any, dev: Any) -> Any:
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    w = 1 << np.arange(8, dtype=np.int64)
    return asarray((w[::-1] if bitorder == "big" else w).astype(dt), device=dev)


@register_array(np.packbits, arg="a")
def _packbits(a: Any, p: dict) -> Any:
    """Eight elements a byte along the axis (zero-padded), by a weighted sum of the nonzero flags."""
    if a.dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    a, ax = _along(a, p["axis"])
    x = _m.moveaxis(astype(a != 0, np.dtype(np.uint8)), ax, -1)
    n = x.shape[-1]
    pad = -n % 8
    if pad:
        x = _m.concat([x, zeros(x.shape[:-1] + (pad,), dtype=x.dtype, device=x.device)], axis=-1)
    x = _m.reshape(x, x.shape[:-1] + ((n + pad) // 8, 8))
    w = _bit_weights(p["bitorder"], np.dtype(np.uint8), a.device)
    return _m.moveaxis(astype(_np.sum(x * w, axis=-1), np.dtype(np.uint8)), -1, ax)


@register_array(np.unpackbits, arg="a")
def _unpackbits(a: Any, p: dict) -> Any:
    """Each byte's eight bits along the axis, then ``count`` of them (zero-padded past the end)."""
    if a.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    count = p["count"]
    a, ax = _along(a, p["axis"])
    x = _m.moveaxis(a, ax, -1)
    w = _bit_weights(p["bitorder"], np.dtype(np.uint8), a.device)
    bits = _np.not_equal(_np.bitwise_and(x[..., None], w), 0)
    bits = astype(_m.reshape(bits, x.shape[:-1] + (x.shape[-1] * 8,)), np.dtype(np.uint8))
    if count is not None:
        total, c = bits.shape[-1], _int_index(count)
        if c < -total:
            raise ValueError("-count larger than number of elements")
        keep = c if c >= 0 else total + c
        if keep <= total:
            bits = bits[..., :keep]
        else:
            bits = _m.concat([bits, zeros(bits.shape[:-1] + (keep - total,), dtype=bits.dtype, device=bits.device)],
                             axis=-1)
    return _m.moveaxis(bits, -1, ax)
