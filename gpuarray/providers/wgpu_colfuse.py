"""Column-fused ``rowfuse`` kernels (``compiler/colfuse.py``) on the wgpu provider: one dispatch, one
workgroup per tile of columns (``render/wgsl_colfuse.py``).

>>> from gpuarray.compiler.colfuse import tile_width
>>> -(-4096 // tile_width(4096, 4))      # workgroups for 4096 float32 columns
512
"""

from __future__ import annotations

from typing import Any

from ..compiler.colfuse import geometry
from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP
from ..render.wgsl_colfuse import render_colfuse
from .wgpu_bindings import wide_buffers


def enqueue_colfuse(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """Record ``kernel``; returns its output handles."""
    outs = [provider.alloc(kernel.size * STORAGE_NP[kernel.instrs[o].dtype].itemsize) for o in kernel.outputs]
    if kernel.size == 0:
        return outs
    _rows, cols, w, unroll = kernel.memoized("colfuse_geometry", lambda: geometry(kernel))
    r = provider.rendered_for(kernel, render_colfuse, (w, unroll))
    wide = wide_buffers(provider, r, kernel)
    provider.dispatch(r.source, r.meta(kernel, {"COLS": cols}), [*in_handles, *outs, *wide], -(-cols // w))
    return outs
