"""Reductions on the wgpu provider: the variant, the chunking, and the passes over partials.

``render.wgsl_reduce.choose_variant`` picks the layout (row: workgroups per
output, col: threads per output), flat-index evaluation, ``vec4`` loads and the
subgroup combine. Here the reduced elements of each output are split into
``G`` chunks so that about ``TARGET_GROUPS`` workgroups fill the GPU; when
``G`` > 1 the partials (``(M, G)`` for the row layout, ``(G, M)`` for the col
layout) are reduced by further passes, planned the same way. A fused epilogue
(``Kernel.result_index``) runs in the last pass only: earlier passes run the
kernel's ``prologue_part``, and the epilogue moves to the pass over the partials
(``Kernel.with_epilogue_of``) with the inputs it reads. The tunables are
module attributes (``bench/reductions.py --sweep`` varies them).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from ..compiler.kernel import Instr, Kernel, Result
from ..core.dtypes import STORAGE_NP
from ..render.wgsl import WORKGROUP
from ..render.wgsl_reduce import choose_variant, render_reduce
from ..render.wgsl_reduce_flat import flat_inputs
from .wgpu_bindings import wide_buffers
from .wgpu_split import window_inputs

TARGET_GROUPS = 2048    # workgroups a split reduction aims for (a few per SM)
ROW_MIN_ELEMS = 4096    # row layout: elements per workgroup before an output is split into chunks
COL_MIN_ROWS = 32       # col layout: reduced elements per thread before the rows are split into chunks
USE_SUBGROUPS = True    # subgroup combine where the adapter has the feature (False: shared-memory tree)
USE_VECTOR = True       # vec4 loads where the prologue allows them
VECTOR_ALL = True       # also for full reductions and the col layout (False: only many rows; see _run)

CHUNK = 4096            # argreduce (chunks_for): elements per workgroup before it splits
MAX_CHUNKS = 1024


def chunks_for(m: int, length: int) -> int:
    """Chunks per output for argmax / argmin (one workgroup per chunk)."""
    if m == 0 or length <= CHUNK or m >= 1024:
        return 1
    return max(1, min(MAX_CHUNKS, math.ceil(length / CHUNK), 65535 * 64 // max(m, 1)))


def row_chunks(m: int, length: int) -> int:
    """Chunks per output of the row layout."""
    if m >= TARGET_GROUPS or length <= ROW_MIN_ELEMS:
        return 1
    return max(1, min(TARGET_GROUPS // m, math.ceil(length / ROW_MIN_ELEMS)))


def col_chunks(blocks: int, length: int, per_group: int = 1) -> tuple[int, int]:
    """(chunks, rows per chunk) of the col layout with ``blocks`` workgroups per chunk, or with
    ``per_group`` chunks per workgroup (outputs narrower than a workgroup)."""
    if length == 0:
        return 1, 0
    g = 1
    if blocks < TARGET_GROUPS and length > COL_MIN_ROWS:
        g = max(1, min(TARGET_GROUPS * per_group // blocks, math.ceil(length / COL_MIN_ROWS)))
    lc = math.ceil(length / g)
    return math.ceil(length / lc), lc


def use_subgroups(provider: Any) -> bool:
    """Whether to render the subgroup combine for ``provider`` (off once its driver rejected one)."""
    return USE_SUBGROUPS and "subgroup" in provider.features and not getattr(provider, "_reduce_sg_failed", False)


def dispatch_subgroups(provider: Any, kernel: Kernel, rendered: Callable[[bool], Any], sg: bool,
                       extra: dict[str, int], buffers: list[Any], groups: int) -> None:
    """Dispatch ``rendered(sg)``; a driver that rejects the subgroup built-ins gets ``rendered(False)``,
    the shared-memory tree, from then on (the pipeline is compiled before anything is recorded, so
    nothing was recorded)."""
    r = rendered(sg)
    try:
        provider.dispatch(r.source, r.meta(kernel, extra), buffers, groups)
    except Exception as exc:
        if not sg or "lost" in str(exc).lower():
            raise
        provider._reduce_sg_failed = True
        r = rendered(False)
        provider.dispatch(r.source, r.meta(kernel, extra), buffers, groups)


def vector_bindings(provider: Any, kernel: Kernel, handles: list[Any]) -> list[Any] | None:
    """The input bindings with every ``vec4`` input bound to a whole number of vectors
    (its buffer is allocated in size classes, so the padding is there), or None."""
    ins = flat_inputs(kernel, kernel.operands[0], kernel.attrs[1]) or frozenset()
    out = list(handles)
    for k in ins:
        h = handles[k]
        if type(h) is tuple:            # a window (wgpu_split.window_kernel): bound as it is
            return None
        vbytes = 4 * STORAGE_NP[kernel.inputs[k].dtype].itemsize
        need = max(1, -(-h.nbytes // vbytes)) * vbytes     # an empty array binds one vector
        buf = getattr(h, "buffer", None)
        if buf is None or need > int(buf.size) or need > provider.max_binding:
            return None
        out[k] = (buf, 0, need)
    return out


def _partials(kernel: Kernel, shape: tuple[int, int], axis: int) -> Kernel:
    """The kernel reducing ``kernel``'s partials, laid out ``shape``, along ``axis`` (without
    ``kernel``'s epilogue)."""
    rop = kernel.attrs[0]
    base = kernel.prologue_part()
    dt = base.result_dtype
    part = Instr("input", (), dt, shape, (0,))
    k = Kernel([part], [Result(dt, shape)], [], base.out_nodes, base.out_shape, kernel.device,
               kind="reduce", attrs=(rop, (axis,)), operands=[0])
    return k.with_memo(kernel.derived_memo(("partials", shape, axis)))


def _layout(kernel: Kernel, v: Any, inner: int) -> tuple[int, int, dict[str, int], tuple[tuple[int, int], int]]:
    """(chunks per output, workgroups, the ``extra`` parameters, the partials' (shape, axis)) of
    ``kernel`` rendered as variant ``v`` (``inner``: contiguous kept elements, ``choose_variant``'s
    ``I``): fixed by its shapes, so memoized per template."""
    src = kernel.instrs[kernel.operands[0]]
    length = math.prod([src.shape[d] for d in kernel.attrs[1]])
    m = kernel.size
    if v.layout == "seg":
        groups = -(-m // (WORKGROUP // v.seg))
        return 1, groups, {"MG": groups, "M": m, "L": length}, ((m, 1), 1)
    if v.layout == "row":
        g = row_chunks(m, length)
        return g, m * g, {"G": g, "MG": m * g, "L": length}, ((m, g), 1)
    units = -(-m // v.vec)
    blocks = -(-units // WORKGROUP)
    r = WORKGROUP // units if units < WORKGROUP and units else 1     # chunks per workgroup
    g, lc = col_chunks(blocks, length, r)
    groups = blocks * -(-g // r)
    return g, groups, {"MG": groups, "NB": blocks, "PT": units if r > 1 else WORKGROUP, "R": r, "G": g,
                       "P": units, "M": m, "L": length, "LC": lc, "I": inner}, ((g, m), 0)


def _run(provider: Any, kernel: Kernel, in_handles: list[Any], outs: list[Any]) -> None:
    """Record the passes of ``kernel`` writing its ``M`` results (its epilogue's) to ``outs``."""
    sg = use_subgroups(provider)
    v, (o, _l, inner) = kernel.memoized(("variant", sg, USE_VECTOR), lambda: choose_variant(kernel, sg, USE_VECTOR))
    if v.vec == 4 and not VECTOR_ALL and (v.layout == "col" or o == 1):
        # An earlier wall-clock sweep found vec4 slower for full sums and axis 0; timed by the GPU
        # (timestamp queries, 16384^2 float32, after a warm-up) vec4 is faster everywhere: full
        # sum 0.25 vs 0.31 ms, full max 0.25 vs 0.31-0.34, sum(axis=0) 0.27-0.28 vs 0.31-0.33
        v = dataclasses.replace(v, vec=1)
    bound: list[Any] = list(in_handles)
    if v.vec == 4:
        vb = vector_bindings(provider, kernel, in_handles)
        if vb is None:
            v = dataclasses.replace(v, vec=1)
        else:
            bound = vb
    # keys of plain tuples (a Variant's dataclass hash is Python code)
    g, groups, extra, part = kernel.memoized(("layout", v.layout, v.vec, TARGET_GROUPS, ROW_MIN_ELEMS,
                                              COL_MIN_ROWS), lambda: _layout(kernel, v, inner))
    full = kernel
    if g > 1:          # several passes: a fused epilogue runs in the last one only
        kernel = kernel.prologue_part()
        bound = bound[:len(kernel.inputs)]
    nxt = _partials(kernel, *part) if g > 1 else None

    def rendered(sg: bool) -> Any:
        vs = v if sg == v.sg else dataclasses.replace(v, sg=sg)
        return kernel.memoized(("rendered", v.layout, v.flat, v.vec, v.seg, sg),
                               lambda: provider.rendered_for(kernel, render_reduce, vs))

    r = rendered(v.sg)
    wide = wide_buffers(provider, r, kernel) if r.wide else []      # kept by value: cached bind groups
    targets = outs if nxt is None else [provider.alloc(kernel.size * g * STORAGE_NP[kernel.result_dtype].itemsize)]
    dispatch_subgroups(provider, kernel, rendered, v.sg, extra, [*bound, *targets, *wide], groups)
    if nxt is not None:
        handles = [targets[0]]
        if full.result_index is not None:
            handles += [in_handles[k] for k in full.epilogue_inputs()]
            nxt = nxt.with_epilogue_of(full)
        _run(provider, nxt, handles, outs)
        provider.free(targets[0])       # returned to the pool once the pass is submitted


def enqueue_reduce(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    kernel, in_handles = window_inputs(provider, kernel, in_handles)     # arrays past one binding
    if kernel.result_index is None:
        outs = [provider.alloc(kernel.size * STORAGE_NP[kernel.result_dtype].itemsize)]
    else:
        outs = [provider.alloc(kernel.size * STORAGE_NP[kernel.instrs[o].dtype].itemsize) for o in kernel.outputs]
    if kernel.size:
        _run(provider, kernel, list(in_handles), outs)
    return outs
