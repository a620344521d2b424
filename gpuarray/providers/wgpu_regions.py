"""``regions`` on the wgpu provider (``compiler/regions.py``): the array under a chain of writes copied
into the result, then each write's value computed over its region and stored there, one dispatch each,
in order, in the open compute pass (``render/wgsl_regions.py``).

Each pass is a kernel of its own operand's cone (``parts``): writes of one structure (``a[i] = b[i] * 2``
for every ``i``) render one shader and differ only in run-time parameters.
"""

from __future__ import annotations

from typing import Any

from ..compiler.kernel import Instr, Kernel, Result
from ..core.dtypes import STORAGE_NP
from ..graph.shapes import contiguous_strides
from ..render.wgsl import WORKGROUP
from ..render.wgsl_regions import render_region
from .wgpu_bindings import wide_buffers


def parts(kernel: Kernel) -> list[tuple[list[int], list[int]]]:
    """Per operand of a ``regions`` kernel: (its cone's instructions in order, the inputs they read);
    the operand is the cone's last instruction."""
    out = []
    for root in kernel.operands:
        need: set[int] = set()
        stack = [root]
        while stack:
            i = stack.pop()
            if i not in need:
                need.add(i)
                stack.extend(kernel.instrs[i].args)
        cone = sorted(need)
        out.append((cone, sorted({kernel.instrs[i].params[0] for i in cone if kernel.instrs[i].op == "input"})))
    return out


def part_kernel(kernel: Kernel, cone: list[int], ks: list[int]) -> Kernel:
    """The elementwise kernel computing the operand at the end of ``cone`` (``parts``)."""
    remap = {old: new for new, old in enumerate(cone)}
    kmap = {k: n for n, k in enumerate(ks)}
    instrs = []
    for old in cone:
        x = kernel.instrs[old]
        if x.op == "input":
            instrs.append(Instr("input", (), x.dtype, x.shape, (kmap[x.params[0]],)))
        else:
            instrs.append(Instr(x.op, tuple(remap[a] for a in x.args), x.dtype, x.shape, x.params))
    root = instrs[-1]
    return Kernel(instrs, [kernel.inputs[k] for k in ks], [len(instrs) - 1], [Result(root.dtype, root.shape)],
                  root.shape, kernel.device)


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
