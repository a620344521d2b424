"""Reductions on the wgpu provider: one pass, or two when few outputs reduce many elements."""

from __future__ import annotations

import math
from typing import Any

from .._dtypes import STORAGE_NP
from ..compiler.kernel import Instr, Kernel
from ..render.wgsl_reduce import render_reduce

CHUNK = 4096          # elements per workgroup before a reduction is split into chunks
MAX_CHUNKS = 1024


def chunks_for(m: int, length: int) -> int:
    if m == 0 or length <= CHUNK or m >= 1024:
        return 1
    return max(1, min(MAX_CHUNKS, math.ceil(length / CHUNK), 65535 * 64 // max(m, 1)))


def enqueue_reduce(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    rop, axes = kernel.attrs
    src = kernel.instrs[kernel.operands[0]]
    dt = kernel.out_nodes[0].dtype
    item = STORAGE_NP[dt].itemsize
    m = kernel.size
    length = math.prod(src.shape[d] for d in axes)
    g = chunks_for(m, length)
    out = provider.alloc(m * item)
    if m == 0:
        return [out]
    r = provider.rendered_for(kernel, render_reduce)
    wide = [provider.data_buffer(v) for _t, v in sorted(r.wide_values(kernel).items())]
    target = provider.alloc(m * g * item) if g > 1 else out
    prm = r.meta(kernel, {"G": g, "MG": m * g, "L": length})
    provider.dispatch(r.source, prm, [*in_handles, target, *wide], m * g)
    if g > 1:
        # second pass: reduce the (m, g) partials along their last axis
        part = Instr("input", (), dt, (m, g), (0,))
        k2 = Kernel([part], [kernel.out_nodes[0]], [], kernel.out_nodes, kernel.out_shape, kernel.device,
                    kind="reduce", attrs=(rop, (1,)), operands=[0])
        r2 = provider.rendered_for(k2, render_reduce)
        provider.dispatch(r2.source, r2.meta(k2, {"G": 1, "MG": m, "L": g}), [target, out], m)
        provider.free(target)
    return [out]
