"""sort / argsort and searchsorted on the wgpu provider (WGSL from ``render.wgsl_sort``
and ``render.wgsl_radix``).

Rows of the sorted axis padded to ``P <= B`` (the workgroup block) are sorted
by one dispatch of the bitonic block sort. Longer rows take the LSD radix sort
(``wgpu_radix``: three dispatches per 8-bit digit, 12 for 32-bit keys). Only an
adapter whose workgroup memory is too small for the radix sort's tiles takes the
bitonic network for them: one block dispatch, then for each bitonic stage
``k = 2B, 4B, ..., P`` one global dispatch per substep of distance ``j >= B`` and
one block dispatch for the substeps below ``B``; the last block dispatch writes
the result. All are recorded into the open pass.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP
from ..render.wgsl import WORKGROUP
from ..render.wgsl_sort import Shader, key_bytes, key_type, render_block, render_global, render_searchsorted
from .wgpu_radix import cached_shader, enqueue_radix, plan, radix_cannot_run, shader_buffers
from .wgpu_split import window_inputs

MAX_BLOCK = 4096


def geometry(kernel: Kernel) -> tuple[int, int, int, int]:
    """(rows, L, I, P): rows of the sorted axis, its length, the inner size, L padded to a power of two."""
    axis, _desc = kernel.attrs
    shape = kernel.out_shape
    length = shape[axis]
    inner = math.prod(shape[axis + 1:])
    rows = math.prod(shape[:axis]) * inner
    return rows, length, inner, 1 << max(length - 1, 0).bit_length()


def block_for(provider: Any, dtype: np.dtype) -> int:
    """Slots per workgroup: the largest power of two whose (key, position) pairs fit workgroup memory."""
    limit = int(provider.limits.get("max-compute-workgroup-storage-size", 16384))
    b = MAX_BLOCK
    while b > 2 * WORKGROUP and b * (key_bytes(dtype) + 4) > limit:
        b //= 2
    return b


def sort_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    """Limits of the sort kernels beyond the provider's generic ones (scratch size, bindings)."""
    dt = kernel.instrs[kernel.operands[0]].dtype
    rows, length, inner, p = geometry(kernel)
    if p > block_for(provider, dt):
        rp = plan(provider, kernel, rows, length, inner)
        if rp is not None:
            return radix_cannot_run(provider, kernel, rp)
    slots = rows * p
    if slots >= 2**31:
        return "sort: more than 2**31 padded elements"
    nbytes = slots * key_bytes(dt)
    if nbytes > provider.max_binding:
        return f"sort: scratch of {nbytes} bytes exceeds the adapter's storage binding limit {provider.max_binding}"
    n_wide = len({ins.dtype for ins in kernel.instrs if ins.op == "const" and ins.dtype.itemsize == 8})
    need = len(kernel.inputs) + 4 + n_wide
    if need > provider.max_storage_buffers:
        return f"sort needs {need} storage buffers; the adapter allows {provider.max_storage_buffers}"
    return None


def _shader(provider: Any, kernel: Kernel, variant: tuple, make: Any) -> Shader:
    return cached_shader(provider, kernel, variant, make, "wgpu_sort")



def enqueue_sort(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """Record a ``sort`` or ``argsort`` kernel; returns its output handle."""
    kernel, in_handles = window_inputs(provider, kernel, in_handles)     # arrays past one binding
    out_dt = kernel.out_nodes[0].dtype
    out = provider.alloc(kernel.size * STORAGE_NP[out_dt].itemsize)
    if kernel.size == 0:
        return [out]
    dt = kernel.instrs[kernel.operands[0]].dtype
    rows, length, inner, p = geometry(kernel)
    b = block_for(provider, dt)
    slots = rows * p
    geo = {"T": slots, "P": p, "L": length, "I": inner}
    named: dict[str, Any] = {"out": out}

    def block(src: str, dst: str, k0: int, k1: int) -> None:
        sh = _shader(provider, kernel, ("block", src, dst, b), lambda: render_block(kernel, src, dst, b))
        prm = sh.rendered.meta(kernel, {**geo, "K0": k0, "K1": k1})
        provider.dispatch(sh.rendered.source, prm, shader_buffers(provider, kernel, sh, named, in_handles),
                          -(-slots // b))

    if p <= b:
        block("prologue", "final", 2, p)
        return [out]
    rp = plan(provider, kernel, rows, length, inner)
    if rp is not None:
        enqueue_radix(provider, kernel, in_handles, out, rp)
        return [out]
    named["sk"] = provider.alloc(slots * key_bytes(dt))
    named["si"] = provider.alloc(slots * 4)
    glob = render_global(key_type(dt))
    block("prologue", "scratch", 2, b)
    k = 2 * b
    while k <= p:
        j = k // 2
        while j >= b:
            prm = np.array([slots // 2, j, k, p], dtype=np.uint32)
            provider.dispatch(glob, prm, [named["sk"], named["si"]], -(-(slots // 2) // WORKGROUP))
            j //= 2
        block("scratch", "final" if k == p else "scratch", k, k)
        k *= 2
    provider.free(named["sk"])
    provider.free(named["si"])
    return [out]


def enqueue_searchsorted(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """Record a ``searchsorted`` kernel: one thread per element of ``x2`` (``x1`` past one binding: the
    block of it that the kernel reads, bound as a window; ``namespace/searching_sorted.searchsorted``)."""
    kernel, in_handles = window_inputs(provider, kernel, in_handles)
    out_dt = kernel.out_nodes[0].dtype
    out = provider.alloc(kernel.size * STORAGE_NP[out_dt].itemsize)
    if kernel.size == 0:
        return [out]
    sh = _shader(provider, kernel, ("searchsorted",), lambda: render_searchsorted(kernel))
    m = kernel.instrs[kernel.operands[0]].shape[0]
    prm = sh.rendered.meta(kernel, {"M": m})
    provider.dispatch(sh.rendered.source, prm, shader_buffers(provider, kernel, sh, {"out": out}, in_handles),
                      -(-kernel.size // WORKGROUP))
    return [out]


def searchsorted_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    if kernel.instrs[kernel.operands[0]].shape[0] >= 2**31:
        return "searchsorted: x1 has 2**31 or more elements"
    return None
