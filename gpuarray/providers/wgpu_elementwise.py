"""Elementwise kernels on the wgpu provider: the shader form a kernel takes (shared-memory tiles where it
reads an operand transposed, vec4 words where its size allows, else one element a thread) and its
dispatch. ``WgpuProvider.enqueue`` and the split chunks and row blocks of arrays past one binding
(``wgpu_split``) dispatch through ``dispatch_elementwise``.

>>> import gpuarray as xp
>>> x = xp.ones((4, 8), device="wgpu:0")
>>> float(xp.sum(x - xp.mean(x, axis=0)))   # a broadcast row: vec4 stores, the row read lane by lane
0.0
"""

from __future__ import annotations

import os
from typing import Any

from ..compiler.kernel import Kernel
from ..core import config as _config
from ..render import wgsl_tiled
from ..render.wgsl import WORKGROUP, Rendered, render_variant
from .wgpu_bindings import wide_buffers

TILED = os.environ.get("GPUARRAY_TILED", "1") != "0"      # transposed operands through tiles (wgsl_tiled)


def dispatch_elementwise(provider: Any, kernel: Kernel, bound: list[Any]) -> None:
    """Dispatch elementwise ``kernel`` over ``bound`` (its inputs, then its outputs: handles or
    (buffer, offset, size) ranges) in the shader form ``elementwise_shader`` gives."""
    fast = bool(_config.get("fast_math"))
    vec = 4 if provider.vec4 and kernel.size % 4 == 0 else 1
    r = kernel.memoized(("wgsl", vec, fast, TILED), lambda: elementwise_shader(provider, kernel, vec, fast))
    wide = wide_buffers(provider, r, kernel) if r.wide else []
    groups = wgsl_tiled.groups_for(kernel.out_shape, r.tile) if r.tile else \
        -(-kernel.size // (WORKGROUP * r.vec * r.per_thread))
    provider.dispatch(r.source, r.meta(kernel), [*bound, *wide], groups)


def elementwise_shader(provider: Any, kernel: Kernel, vec: int, fast: bool) -> Rendered:
    """The shader of an elementwise kernel: through shared-memory tiles where it reads an operand
    transposed (``render/wgsl_tiled.py``), vec4 where asked and rendered so, else scalar."""
    views = wgsl_tiled.transposed_views(kernel) if TILED and not fast else ()
    if views:
        return provider.rendered_for(kernel, wgsl_tiled.render_tiled, (views, wgsl_tiled.tile_for(kernel, views)))
    r = provider.rendered_for(kernel, render_variant, (vec, fast)) if vec == 4 or fast else None
    if r is None or (r.vec == 1) != (vec == 1):        # asked for vec4, rendered one element a thread
        r = provider.rendered_for(kernel, render_variant, (1, fast)) if fast else provider.rendered_for(kernel)
    return r
