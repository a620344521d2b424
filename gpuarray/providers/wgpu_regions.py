"""``regions`` on the wgpu provider (``compiler/regions.py``): the array under a chain of writes copied
into the result, then each write's value computed over its region and stored there, one dispatch each,
in order, in the open compute pass (``render/wgsl_regions.py``).

Each pass is a kernel of its own operand's cone (``regions.parts``): writes of one structure (``a[i] = b[i] * 2``
for every ``i``) render one shader and differ only in run-time parameters.
"""

from __future__ import annotations

from typing import Any

from ..compiler.kernel import Kernel
from ..compiler.regions import part_kernel, parts
from ..core.dtypes import STORAGE_NP
from ..graph.shapes import contiguous_strides
from ..render.wgsl import WORKGROUP
from ..render.wgsl_regions import render_region
from .wgpu_bindings import wide_buffers


def max_part_inputs(kernel: Kernel) -> int:
    """The most inputs one pass of ``kernel`` binds."""
    return max((len(ks) for _c, ks in kernel.memoized(("regions_parts",), lambda: parts(kernel))), default=0)


def enqueue_regions(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    out = provider.alloc(kernel.size * STORAGE_NP[kernel.out_nodes[0].dtype].itemsize)
    if kernel.size == 0:
        return [out]
    spans = [(0, contiguous_strides(kernel.out_shape)), *kernel.attrs]
    for (cone, ks), (offset, strides) in zip(kernel.memoized(("regions_parts",), lambda: parts(kernel)), spans,
                                             strict=True):
        sub = part_kernel(kernel, cone, ks)
        n = sub.size
        if n == 0:
            continue
        extra = {"OFF": offset}
        for d, st in enumerate(strides):
            extra[f"S{d}"] = st
        r = provider.rendered_for(sub, render_region)
        bufs = [*[in_handles[k] for k in ks], out, *wide_buffers(provider, r, sub)]
        provider.dispatch(r.source, r.meta(sub, extra), bufs, -(-n // WORKGROUP))
    return [out]
