"""``random`` on the wgpu provider (WGSL from ``render.wgsl_random``): one dispatch, a Philox block a
thread, ``2-D`` workgroups past 65535 (``provider.dispatch``). The shader depends on the kernel's
signature (the distribution, the dtype, which operands are one constant node) and on whether the
adapter has 64-bit integers; the key and counter values are parameters."""

from __future__ import annotations

import math
from typing import Any

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP
from ..render.wgsl import WORKGROUP
from ..render.wgsl_random import render_random
from .host_random import blocks
from .wgpu_bindings import wide_buffers


def random_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    """Limits of ``random`` beyond the provider's generic ones."""
    node = kernel.out_nodes[0]
    if node.dtype.itemsize == 8 and not getattr(provider, "i64", False):
        return f"random: {node.dtype} draws need 64-bit integers in shaders (shader-int64)"
    if math.prod(node.shape) >= 2**32:
        return "random: 2**32 or more elements in one draw"
    return None


def enqueue_random(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """Record a ``random`` kernel; returns its output handle."""
    node = kernel.out_nodes[0]
    n = math.prod(node.shape)
    out = provider.alloc(n * STORAGE_NP[node.dtype].itemsize)
    if n == 0:
        return [out]
    # by the kernel's signature: its instructions (which constants are one node: a key word equal to a
    # counter word, a zero counter) and the distribution, not the constants' values (uniforms)
    r = provider.rendered_for(kernel, render_random, (bool(getattr(provider, "i64", False)), node.dtype.str))
    nblocks = blocks(n, kernel.attrs[0], node.dtype)
    groups = -(-nblocks // WORKGROUP)
    wide = wide_buffers(provider, r, kernel)
    provider.dispatch(r.source, r.meta(kernel, {"N": n, "NB": nblocks}), [*in_handles, out, *wide], groups)
    return [out]
