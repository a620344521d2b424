"""``scatter`` on the wgpu provider: a copy pass, then a scatter pass, in one compute pass."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP
from ..render.wgsl import WORKGROUP
from ..render.wgsl_scatter import pass_roots, render_scatter, used_inputs
from .wgpu_bindings import wide_buffers


def enqueue_scatter(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    dt = kernel.out_nodes[0].dtype
    out = provider.alloc(kernel.size * STORAGE_NP[dt].itemsize)
    if kernel.size == 0:
        return [out]
    copy = dataclasses.replace(kernel, attrs=(kernel.attrs[0], "copy"), _sig=None)
    n_val = math.prod(kernel.instrs[kernel.operands[2]].shape)
    for k, n in ((copy, kernel.size), (kernel, n_val)):
        if n == 0:
            continue
        r = provider.rendered_for(k, render_scatter)
        ins = [in_handles[j] for j in used_inputs(k, pass_roots(k))]
        wide = wide_buffers(provider, r, k)
        provider.dispatch(r.source, r.meta(k, {"N": n}), [*ins, out, *wide], -(-n // WORKGROUP))
    return [out]
