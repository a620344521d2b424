"""``rowfuse`` kernels on the wgpu provider: one dispatch, one workgroup per row (``render/wgsl_rowfuse.py``)."""

from __future__ import annotations

import math
from typing import Any

from .._dtypes import STORAGE_NP
from ..compiler.kernel import Kernel
from ..render.wgsl_rowfuse import render_rowfuse
from .wgpu_reduce import USE_SUBGROUPS


def enqueue_rowfuse(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """Record ``kernel``; returns its output handles."""
    outs = [provider.alloc(kernel.size * STORAGE_NP[kernel.instrs[o].dtype].itemsize) for o in kernel.outputs]
    rows = math.prod(kernel.instrs[kernel.instrs[kernel.operands[0]].args[0]].shape[:-1])
    if kernel.size == 0:
        return outs
    sg = USE_SUBGROUPS and "subgroup" in provider.features and not getattr(provider, "_reduce_sg_failed", False)
    r = provider.rendered_for(kernel, render_rowfuse, sg)
    wide = [provider.data_buffer(v) for _t, v in sorted(r.wide_values(kernel).items())]
    try:
        provider.dispatch(r.source, r.meta(kernel, {"ROWS": rows}), [*in_handles, *outs, *wide], rows)
    except Exception as exc:
        # a driver that rejects the subgroup built-ins (as in wgpu_reduce): nothing was recorded
        if not sg or "lost" in str(exc).lower():
            raise
        provider._reduce_sg_failed = True
        r = provider.rendered_for(kernel, render_rowfuse, False)
        provider.dispatch(r.source, r.meta(kernel, {"ROWS": rows}), [*in_handles, *outs, *wide], rows)
    return outs
