"""Host (NumPy) versions of the fusable index instructions and of the ``scatter`` kind (and the strided views
the host's ``regions`` passes store through: ``providers/inprocess._host_regions``).

Out-of-range indices follow the kernels' rule: negative indices count from the
end, then indices are clamped to the axis (NumPy would raise; the namespace
checks indices that are on the host before building the graph).

>>> clamp_indices(np.array([-1, 0, 7]), 3).tolist()
[2, 0, 2]
"""

from __future__ import annotations

from typing import Any

import numpy as np


def clamp_indices(idx: np.ndarray, n: int) -> np.ndarray:
    """Negative indices wrap once, then everything is clamped to [0, n - 1] (0 when n == 0)."""
    i = np.asarray(idx)
    if i.dtype.kind == "u":
        i = np.minimum(i, np.uint64(max(n - 1, 0))).astype(np.int64)
    else:
        i = i.astype(np.int64)
        i = np.where(i < 0, i + n, i)
        i = np.clip(i, 0, max(n - 1, 0))
    return i


def _region(starts: tuple[int, ...], steps: tuple[int, ...], counts: tuple[int, ...]) -> tuple[slice, ...]:
    out = []
    for start, step, count in zip(starts, steps, counts, strict=True):
        stop = start + step * count
        out.append(slice(start, stop if stop >= 0 else None, step))
    return tuple(out)


def host_index(ins: Any, args: list[np.ndarray]) -> np.ndarray:
    """One index instruction (``concat``, ``gather``, ``setslice``, ``setstrided``) on whole arrays."""
    op = ins.op
    if op == "concat":
        return np.concatenate(args, axis=ins.params[0]).astype(ins.dtype, copy=False)
    if op == "gather":
        axis, mode = ins.params
        x, idx = args
        n = x.shape[axis]
        if n == 0:
            return np.zeros(ins.shape, dtype=ins.dtype)
        c = clamp_indices(idx, n)
        if mode == "take":
            return np.take(x, c, axis=axis)
        return np.take_along_axis(x, c, axis=axis)
    if op == "setslice":
        starts, steps = ins.params
        old, value = args
        out = np.array(old, dtype=ins.dtype, copy=True)
        out[_region(starts, steps, value.shape)] = value
        return out
    if op == "setstrided":
        (offset,), strides = ins.params
        old, value = args
        out = np.array(old, dtype=ins.dtype, copy=True, order="C")
        strided(out.reshape(-1), offset, value.shape, strides)[...] = value
        return out
    if op == "setpart":
        old, value = args
        out = np.array(old, dtype=ins.dtype, copy=True)
        if ins.params[0] == 0:
            out.real = value
        else:
            out.imag = value
        return out
    raise NotImplementedError(f"no host implementation for index op {op}")


def host_scatter(kernel: Any, operands: list[np.ndarray]) -> list[np.ndarray]:
    """``scatter``: a copy of operand 0 with ``out[..., idx, ...] = value`` along ``axis``.

    With repeated indices the last write wins (as in NumPy).
    """
    (axis,) = kernel.attrs
    old, idx, value = operands
    out = np.array(old, dtype=kernel.out_nodes[0].dtype, copy=True)
    n = out.shape[axis]
    if n and idx.size:
        out[(slice(None),) * axis + (clamp_indices(idx, n),)] = value
    return [out]


def strided(flat: np.ndarray, offset: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """The view of the 1-d C-contiguous ``flat`` at element ``offset`` with element ``strides`` (writable
    where ``flat`` is; NumPy checks that it lies inside ``flat``). A few times cheaper than ``as_strided``,
    which matters for the one-region passes of ``regions`` kernels."""
    if 0 in shape:
        return np.empty(shape, flat.dtype)
    item = flat.itemsize
    return np.ndarray(shape, flat.dtype, flat, offset * item, tuple([s * item for s in strides]))
