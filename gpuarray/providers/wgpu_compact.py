"""Stream compaction (``compact`` kernels: ``nonzero``, ``x[mask]``) on the wgpu provider.

One dispatch per kernel, ``G`` workgroups (one per chunk; ``render/wgsl_compact.py``
has the kernels and ``namespace/searching_sorted.py`` builds the three of a
compaction). ``G`` and the chunk length ``CH = ceil(N / G)`` follow from the
shapes: the ``count`` kernel's output has ``G`` elements, the offsets that
the other modes read ``G + 1``.
"""

from __future__ import annotations

import math
from typing import Any

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP
from ..render.wgsl_compact import render_compact
from .wgpu_bindings import wide_buffers
from .wgpu_split import window_inputs


def enqueue_compact(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """Record one ``compact`` kernel; returns its output handle."""
    kernel, in_handles = window_inputs(provider, kernel, in_handles)     # arrays past one binding
    mode = kernel.attrs[0]
    dt = kernel.out_nodes[0].dtype
    out = provider.alloc(kernel.size * STORAGE_NP[dt].itemsize)
    n = math.prod(kernel.instrs[kernel.operands[0]].shape)
    if mode == "count":
        g = kernel.size
        extra = {"G": g, "RG": g, "L": n, "CH": -(-n // g) if g else 0, "INNER": 1, "LI": n}
    else:
        g = math.prod(kernel.instrs[kernel.operands[1]].shape) - 1
        extra = {"G": g, "N": n, "CH": -(-n // g) if g > 0 else 0, "COUNT": kernel.out_shape[-1]}
    if kernel.size == 0 or g <= 0 or n == 0:
        return [out]
    r = provider.rendered_for(kernel, render_compact)
    wide = wide_buffers(provider, r, kernel)
    provider.dispatch(r.source, r.meta(kernel, extra), [*in_handles, out, *wide], g)
    return [out]
