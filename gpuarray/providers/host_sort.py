"""Host (NumPy) versions of the ``sort``, ``argsort`` and ``searchsorted`` kernel kinds.

Same order as the WGSL kernels: stable, NaN last (first when descending),
``-0.0 == 0.0``, equal elements in their original order in both directions.
"""

from __future__ import annotations

import numpy as np

from ..compiler.kernel import Kernel


def stable_argsort(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """NumPy's stable argsort; descending keeps ties in their original order (and puts NaN first)."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    r = np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(r, axis=axis)


def host_sort(kernel: Kernel, operands: list[np.ndarray]) -> list[np.ndarray]:
    axis, descending = kernel.attrs
    x = operands[0]
    idx = stable_argsort(x, axis, descending)
    dt = kernel.out_nodes[0].dtype
    if kernel.kind == "argsort":
        return [idx.astype(dt)]
    return [np.take_along_axis(x, idx, axis=axis).astype(dt, copy=False)]


def host_searchsorted(kernel: Kernel, operands: list[np.ndarray]) -> list[np.ndarray]:
    side, has_sorter = kernel.attrs
    sorter = operands[2] if has_sorter else None
    r = np.searchsorted(operands[0], operands[1], side=side, sorter=sorter)
    return [np.asarray(r, dtype=kernel.out_nodes[0].dtype).reshape(kernel.out_shape)]


HOST_SORT_KINDS = {"sort": host_sort, "argsort": host_sort, "searchsorted": host_searchsorted}
