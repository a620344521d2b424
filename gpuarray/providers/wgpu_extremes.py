"""``extremes`` on the wgpu provider (WGSL from ``render.wgsl_extremes``): ``[min(x), max(x)]`` in
one read of ``x``: one dispatch up to ``ONE_PASS`` elements, else ``G`` workgroups writing a pair
each into a scratch buffer and one workgroup combining them (two dispatches)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP, bool_
from ..render.wgsl import WORKGROUP
from ..render.wgsl_extremes import UNROLL, render_extremes, render_pairs
from .wgpu_bindings import wide_buffers

MAX_GROUPS = 1024                   # workgroups of the first pass (each writes one pair)
ONE_PASS = WORKGROUP * UNROLL * 16  # up to this many elements: one workgroup, one dispatch


def extremes_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    """Limits of ``extremes`` beyond the provider's generic ones."""
    dt = kernel.out_nodes[0].dtype
    if dt == bool_ or dt.kind not in "iuf":
        return f"extremes: no WGSL kernel for {dt} (bools are converted by the namespace)"
    if math.prod(kernel.instrs[kernel.operands[0]].shape) >= 2**31:
        return "extremes: 2**31 or more elements"
    return None


def groups_for(n: int) -> int:
    """Workgroups of the first pass for ``n`` elements (1: the result in one dispatch)."""
    if n <= ONE_PASS:
        return 1
    return min(MAX_GROUPS, -(-n // (WORKGROUP * UNROLL * 4)))


def enqueue_extremes(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """Record an ``extremes`` kernel; returns its output handle."""
    dt = kernel.out_nodes[0].dtype
    item = STORAGE_NP[dt].itemsize
    out = provider.alloc(2 * item)
    n = math.prod(kernel.instrs[kernel.operands[0]].shape)
    if n == 0:
        return [out]
    g = groups_for(n)
    r = provider.rendered_for(kernel, render_extremes)
    wide = wide_buffers(provider, r, kernel)
    part = out if g == 1 else provider.alloc(2 * g * item)
    provider.dispatch(r.source, r.meta(kernel, {"N": n, "G": g}), [*in_handles, part, *wide], g)
    if g > 1:
        key = ("wgpu_extremes", dt)
        src = provider.rendered.get(key)
        if src is None:
            src = provider.rendered[key] = render_pairs(dt)
        provider.dispatch(src, np.array([g], dtype=np.uint32), [part, out], 1)
        provider.free(part)
    return [out]
