"""``rowfuse`` kernels on the wgpu provider: one dispatch, one workgroup per row (``render/wgsl_rowfuse.py``)."""

from __future__ import annotations

import math
from typing import Any

from .._dtypes import STORAGE_NP
from ..compiler.kernel import Kernel
from ..render.wgsl_rowfuse import render_rowfuse
from .wgpu_reduce import dispatch_subgroups, use_subgroups


def enqueue_rowfuse(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """Record ``kernel``; returns its output handles."""
    outs = [provider.alloc(kernel.size * STORAGE_NP[kernel.instrs[o].dtype].itemsize) for o in kernel.outputs]
    rows = math.prod(kernel.instrs[kernel.instrs[kernel.operands[0]].args[0]].shape[:-1])
    if kernel.size == 0:
        return outs
    sg = use_subgroups(provider)
    wide = [provider.data_buffer(v) for _t, v in sorted(provider.rendered_for(kernel, render_rowfuse, sg)
                                                        .wide_values(kernel).items())]
    dispatch_subgroups(provider, kernel, lambda sg: provider.rendered_for(kernel, render_rowfuse, sg), sg,
                       {"ROWS": rows}, [*in_handles, *outs, *wide], rows)
    return outs
