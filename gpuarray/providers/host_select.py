"""``select`` kernels with NumPy (the in-process provider and host fallbacks): the values at the
given ranks of the sort order of ``x`` (NaN last, ``-0.0`` before ``0.0``, as the WGSL radix
selection orders keys), ranks clamped to ``[0, N)``, then NaN where ``x`` holds a NaN (else 0).

>>> import numpy as np
>>> from gpuarray.providers.host_select import order_statistics
>>> order_statistics(np.array([3.0, np.nan, 0.0, -0.0]), np.array([0, 1, 9])).tolist()
[-0.0, 0.0, nan, nan]
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _keys(x: np.ndarray) -> np.ndarray:
    """The device's order keys (``render/wgsl_select.se_key``): unsigned, NaN all ones."""
    u = np.dtype(f"u{x.dtype.itemsize}")
    sign = u.type(1 << (8 * x.dtype.itemsize - 1))
    if x.dtype.kind == "u":
        return x.astype(u, copy=False)
    b = x.view(u)
    if x.dtype.kind == "i":
        return b ^ sign
    k = np.where(b & sign, ~b, b | sign)
    k[np.isnan(x)] = ~u.type(0)
    return k


def _values(k: np.ndarray, dt: np.dtype) -> np.ndarray:
    """``_keys``' inverse (a NaN key gives a NaN)."""
    sign = k.dtype.type(1 << (8 * k.dtype.itemsize - 1))
    if dt.kind == "u":
        return k.astype(dt)
    if dt.kind == "i":
        return (k ^ sign).view(dt)
    return np.where(k & sign, k ^ sign, ~k).view(dt)


def order_statistics(x: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """``x``'s values at ``ranks`` of the radix order, then the NaN flag (shape ``(R + 1,)``)."""
    x = np.ascontiguousarray(x).reshape(-1)
    out = np.zeros(np.size(ranks) + 1, dtype=x.dtype)
    if x.size == 0:
        return out
    r = np.clip(np.asarray(ranks, dtype=np.int64).reshape(-1), 0, x.size - 1)
    keys = _keys(x)
    if r.size:
        out[:-1] = _values(np.partition(keys, np.unique(r))[r], x.dtype)
    if x.dtype.kind == "f" and np.isnan(x).any():
        out[-1] = np.nan
    return out


def host_select(kernel: Any, operands: list[np.ndarray]) -> list[np.ndarray]:
    """The ``select`` kind on the host (``HOST_KINDS``)."""
    return [order_statistics(operands[0], operands[1]).astype(kernel.out_nodes[0].dtype, copy=False)]


__all__ = ["order_statistics", "host_select"]
