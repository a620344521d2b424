"""argmax / argmin on the wgpu provider: one pass, or two when few outputs reduce many elements.

The first pass of two writes one (value, index) pair per chunk; the second
combines each output's pairs with the same first-occurrence rule.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..compiler.kernel import Instr, Kernel
from ..core.dtypes import STORAGE_NP, uint32
from ..render.wgsl import WORKGROUP
from ..render.wgsl_argreduce import (
    cols4_inputs,
    render_argreduce,
    render_argreduce_cols4,
    render_argreduce_seg,
    vec_inputs,
)
from .wgpu_bindings import wide_buffers
from .wgpu_reduce import chunks_for, vector_bindings
from .wgpu_split import window_inputs

# rows of at most THREAD_ROW elements, at least THREAD_MIN_OUTPUTS of them: one thread per output
THREAD_ROW = 256
THREAD_MIN_OUTPUTS = 4096
# over leading axes with at least COLS_MIN_OUTPUTS outputs: a thread per output and chunk of at least
# COLS_MIN_ROWS rows, about COLS_THREADS threads in all (``_enqueue_cols``)
COLS_MIN_OUTPUTS = 32
COLS_MIN_ROWS = 64
COLS_THREADS = 1 << 18
# the same for the four-outputs-a-thread walk (``_enqueue_cols4``). H200, float32, wall ms with 2^16 / 2^17 / 2^18
# threads (the one-output walk's best, 2^18 or 2^19): argmax(axis=0) 16384^2 0.401 / 0.324 / 0.379 (0.384),
# argmin(axis=0) 4096 x 65536 0.539 / 0.467 / 0.530 (0.531), 2^20 x 64 0.107 / 0.093 / 0.129 (0.103),
# 1000 x 100000 0.368 / 0.352 / 0.403 (0.376)
COLS4_THREADS = 1 << 17
# rows of more than THREAD_ROW and at most SEG_ROW elements, at least SEG_MIN_OUTPUTS of them, along the last
# axes: SEG threads a row (``render_argreduce_seg``), about SEG_ELEMS elements a thread, 8 to 256 threads
SEG_ROW = 8192
SEG_MIN_OUTPUTS = 1024
SEG_ELEMS = 32


def enqueue_argreduce(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    kernel, in_handles = window_inputs(provider, kernel, in_handles)     # arrays past one binding
    op, axes = kernel.attrs[:2]
    src = kernel.instrs[kernel.operands[0]]
    out_dt = kernel.out_nodes[0].dtype
    m = kernel.size
    out = provider.alloc(m * STORAGE_NP[out_dt].itemsize)
    length = math.prod(src.shape[d] for d in axes)
    if m == 0 or length == 0:
        return [out]
    if length <= THREAD_ROW and m >= THREAD_MIN_OUTPUTS:      # many short rows: a thread each
        k0 = dataclasses.replace(kernel, attrs=(op, tuple(axes), "thread"), _sig=None)
        return _dispatch(provider, kernel, k0, render_argreduce, {"G": 1, "MG": m, "L": length}, in_handles, out, 1,
                         -(-m // WORKGROUP))
    if m >= COLS_MIN_OUTPUTS and tuple(axes) == tuple(range(len(axes))) and length > 1:
        return _enqueue_cols(provider, kernel, in_handles, out, m, length)
    if m >= SEG_MIN_OUTPUTS and length <= SEG_ROW:
        return _enqueue_seg(provider, kernel, in_handles, out, m, length)
    g = chunks_for(m, length)
    mode = "final" if g == 1 else "partial"
    bound = _vec_bound(provider, kernel, in_handles, vec_inputs(kernel, kernel.operands[0], tuple(axes), mode))
    k1 = dataclasses.replace(kernel, attrs=(op, tuple(axes), mode, bound is not in_handles), _sig=None)
    return _dispatch(provider, kernel, k1, render_argreduce, {"G": g, "MG": m * g, "L": length}, bound, out, g, m * g)


def _vec_bound(provider: Any, kernel: Kernel, in_handles: list[Any], vec: frozenset[int] | None) -> list[Any]:
    """The inputs bound as whole ``vec4`` words (``wgpu_reduce.vector_bindings``) where the layout reads ``vec``
    as words and they can be so bound; else ``in_handles`` itself (the element walk)."""
    vb = vector_bindings(provider, kernel, in_handles) if vec else None
    return in_handles if vb is None else vb


def _dispatch(provider: Any, kernel: Kernel, k1: Kernel, renderer: Any, extra: dict[str, int], bound: list[Any],
              out: Any, g: int, groups: int) -> list[Any]:
    """Record ``k1`` (``kernel`` in one of the layouts, rendered by ``renderer``) over ``groups`` workgroups:
    writing ``out`` where each output is one chunk (``g`` 1), else a (value, index) pair per output and chunk
    into pool scratch that the ``pairs`` pass combines."""
    r = provider.rendered_for(k1, renderer)
    wide = wide_buffers(provider, r, k1)
    prm = r.meta(k1, extra)
    if g == 1:
        provider.dispatch(r.source, prm, [*bound, out, *wide], groups)
        return [out]
    m = kernel.size
    # scratch from the pool (every chunk writes its pair before the second pass reads it)
    vals = provider.alloc(m * g * STORAGE_NP[kernel.instrs[kernel.operands[0]].dtype].itemsize)
    idxs = provider.alloc(m * g * 4)
    try:
        provider.dispatch(r.source, prm, [*bound, vals, idxs, *wide], groups)
        _combine_pairs(provider, kernel, vals, idxs, out, m, g)
    finally:
        provider.free(vals)             # back to the pool once the pass is submitted
        provider.free(idxs)
    return [out]


def _enqueue_cols(provider: Any, kernel: Kernel, in_handles: list[Any], out: Any, m: int, length: int) -> list[Any]:
    """argmax / argmin over leading axes (``argmax(x, axis=0)``): a thread per output and chunk of rows,
    consecutive threads on consecutive outputs (so on consecutive elements of a contiguous operand: the
    workgroup-per-output walk read one element per column at a stride of the row: 4.1 ms for 16384^2
    float32 on the H200, PyTorch 0.34), the chunks' pairs combined by the ``pairs`` pass."""
    op, axes = kernel.attrs[:2]
    bound = _vec_bound(provider, kernel, in_handles, cols4_inputs(kernel, kernel.operands[0], tuple(axes)))
    if bound is not in_handles:
        return _enqueue_cols4(provider, kernel, bound, out, m, length)
    g = max(1, min(-(-COLS_THREADS // m), length // COLS_MIN_ROWS))
    mode = "cols_final" if g == 1 else "cols_partial"
    k1 = dataclasses.replace(kernel, attrs=(op, tuple(axes), mode), _sig=None)
    return _dispatch(provider, kernel, k1, render_argreduce, {"G": g, "MG": m * g, "L": length}, in_handles, out,
                     g, -(-m * g // WORKGROUP))


def _enqueue_cols4(provider: Any, kernel: Kernel, bound: list[Any], out: Any, m: int, length: int) -> list[Any]:
    """``_enqueue_cols`` with four outputs a thread read as ``vec4`` words (``render_argreduce_cols4``)."""
    op, axes = kernel.attrs[:2]
    m4 = m // 4
    g = max(1, min(-(-COLS4_THREADS // m4), length // COLS_MIN_ROWS))
    k1 = dataclasses.replace(kernel, attrs=(op, tuple(axes), "cols4", g == 1), _sig=None)
    return _dispatch(provider, kernel, k1, render_argreduce_cols4, {"G": g, "MG": m4 * g, "L": length, "M4": m4},
                     bound, out, g, -(-m4 * g // WORKGROUP))


def _enqueue_seg(provider: Any, kernel: Kernel, in_handles: list[Any], out: Any, m: int, length: int) -> list[Any]:
    """argmax / argmin of many rows of a few hundred to a few thousand elements: ``seg`` threads a row (a power
    of two from 8 to 256, about ``SEG_ELEMS`` elements each), ``256 / seg`` rows a workgroup."""
    op, axes = kernel.attrs[:2]
    seg = max(8, min(WORKGROUP, 1 << max(0, (length // SEG_ELEMS).bit_length() - 1)))
    bound = _vec_bound(provider, kernel, in_handles, vec_inputs(kernel, kernel.operands[0], tuple(axes), "final"))
    k1 = dataclasses.replace(kernel, attrs=(op, tuple(axes), "seg", bound is not in_handles, seg), _sig=None)
    return _dispatch(provider, kernel, k1, render_argreduce_seg, {"M": m, "L": length}, bound, out, 1,
                     -(-m * seg // WORKGROUP))


def _combine_pairs(provider: Any, kernel: Kernel, vals: Any, idxs: Any, out: Any, m: int, g: int) -> None:
    """The second pass: each output's ``g`` (value, index) pairs, laid out (m, g), to its index."""
    src = kernel.instrs[kernel.operands[0]]
    pv = Instr("input", (), src.dtype, (m, g), (0,))
    pi = Instr("input", (), uint32, (m, g), (1,))
    k2 = Kernel([pv, pi], [kernel.out_nodes[0], kernel.out_nodes[0]], [], kernel.out_nodes, kernel.out_shape,
                kernel.device, kind="argreduce", attrs=(kernel.attrs[0], (1,), "pairs"), operands=[0])
    r2 = provider.rendered_for(k2, render_argreduce)
    provider.dispatch(r2.source, r2.meta(k2, {"G": 1, "MG": m, "L": g}), [vals, idxs, out], m)
