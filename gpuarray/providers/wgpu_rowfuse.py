"""``rowfuse`` kernels on the wgpu provider: one dispatch, one workgroup per row, ``256 / G`` rows of ``G``
threads a workgroup for rows that 16 elements a thread cover (``row_layout``), or a thread per row for rows
of at most ``THREAD_ROW`` elements (``render/wgsl_rowfuse.py``; H200, softmax-like rows of 4 over 2^20 rows:
8.4 ms with a workgroup per row)."""

from __future__ import annotations

import math
import os
from typing import Any

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP
from ..render.wgsl import WORKGROUP
from ..render.wgsl_rowfuse import THREAD, render_rowfuse
from .wgpu_bindings import wide_buffers
from .wgpu_colfuse import enqueue_colfuse
from .wgpu_reduce import dispatch_subgroups, use_subgroups

CACHED = os.environ.get("GPUARRAY_ROW_CACHE", "1") != "0"     # rows kept in registers (render_rowfuse)
CACHE_MAX = 32          # elements per thread: rows of up to 8192
THREAD_ROW = 32         # rows of at most this many elements take a thread each (render_rowfuse's THREAD)
GROUPED = os.environ.get("GPUARRAY_ROW_GROUP", "1") != "0"    # short rows share a workgroup (row_layout)
GROUP_ELEMS = 16        # elements a thread keeps (at most, while threads can be added)
WIDE = os.environ.get("GPUARRAY_ROW_WIDE", "1") != "0"    # long rows: workgroups of up to MAX_THREADS
MAX_THREADS = 1024
VEC4 = os.environ.get("GPUARRAY_ROW_VEC4", "1") != "0"    # exact rows of a workgroup: vec4 words (render_rowfuse)


def enqueue_rowfuse(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """Record ``kernel``; returns its output handles."""
    if kernel.attrs:                # reductions over the first axis (compiler/colfuse.py)
        return enqueue_colfuse(provider, kernel, in_handles)
    outs = [provider.alloc(kernel.size * STORAGE_NP[kernel.instrs[o].dtype].itemsize) for o in kernel.outputs]
    rows = math.prod(kernel.instrs[kernel.instrs[kernel.operands[0]].args[0]].shape[:-1])
    if kernel.size == 0:
        return outs
    sg = use_subgroups(provider)
    length = kernel.instrs[kernel.instrs[kernel.operands[0]].args[0]].shape[-1]
    limit = int(getattr(provider, "limits", {}).get("max-compute-invocations-per-workgroup", WORKGROUP))
    k, grp = (THREAD, WORKGROUP) if length <= THREAD_ROW else row_layout(length, limit)
    groups = -(-rows // WORKGROUP) if k == THREAD else -(-rows // max(1, WORKGROUP // grp))
    exact = 0 if k <= 0 or k * grp != length else 2 if VEC4 and grp >= WORKGROUP and k % 4 == 0 else 1
    wide = wide_buffers(provider, provider.rendered_for(kernel, render_rowfuse, (sg, k, grp, exact)), kernel)
    dispatch_subgroups(provider, kernel,
                       lambda sg: provider.rendered_for(kernel, render_rowfuse, (sg, k, grp, exact)),
                       sg, {"ROWS": rows}, [*in_handles, *outs, *wide], groups)
    return outs


def row_layout(length: int, max_threads: int = WORKGROUP) -> tuple[int, int]:
    """(elements a thread keeps in registers, threads a row) for rows of ``length`` > ``THREAD_ROW``:
    ``G``, a power of two from 32, threads a row with at most ``GROUP_ELEMS`` elements each. Rows
    that fewer than 256 threads cover share a workgroup (``256 / G`` rows), so that a short row does
    not leave a workgroup's threads with one or two elements each and two barriers a reduction.
    Longer rows take a workgroup of 256 threads with up to ``CACHE_MAX`` elements each, and rows
    longer than that (8192) a workgroup of more threads with ``CACHE_MAX`` each, up to the adapter's
    ``max_threads`` (``WIDE``); past it the row is walked once per reduction (0 elements kept).
    H200, softmax over 2048 x 16384 float32, GPU ms: walked 0.212, 1024 threads of 16 elements
    0.243, 512 of 32 0.147; over 4096 x 8192, 256 threads of 32 0.130, 512 of 16 0.158."""
    if not (GROUPED and CACHED):
        return cached_elements(length), WORKGROUP
    grp = min(WORKGROUP, max(32, 1 << (-(-length // GROUP_ELEMS) - 1).bit_length()))
    if grp == WORKGROUP and WIDE and length > WORKGROUP * CACHE_MAX:
        grp = min(max(WORKGROUP, min(max_threads, MAX_THREADS)), 1 << (-(-length // CACHE_MAX) - 1).bit_length())
    per = -(-length // grp)
    if per > CACHE_MAX:
        return 0, WORKGROUP
    return -(-per // 4) * 4, grp


def cached_elements(length: int) -> int:
    """Row elements per thread kept in registers (the cached variant of ``render_rowfuse``) for rows
    of ``length``: a multiple of 4 covering the row, up to ``CACHE_MAX``; 0 (walk the row once per
    reduction) for longer rows."""
    k = -(-length // WORKGROUP)
    return 0 if k > CACHE_MAX or not CACHED else -(-k // 4) * 4
