"""Column fusion: reductions over the first axis and the elementwise work that reads them back, one kernel.

Column statistics (``std(x, axis=0)``, ``var``, centring ``x - x.mean(axis=0)``, standardising
``(x - mean) / std`` as scikit-learn's ``StandardScaler`` does, ``x / x.sum(axis=0)``) reduce each
column of an operand of shape ``S = (R, C...)`` and then use the column's results at every
element of the column, or return them (one value per column). Scheduled the usual way this is
a reduction kernel (two or three passes each) per reduction plus an elementwise kernel.
``col_kernel`` makes it one ``rowfuse`` kernel with ``attrs = (0,)`` (``rowreduce`` params
``(rop, 0)``): a workgroup takes a tile of ``W`` adjacent columns and ``256 / W`` row slices
(adjacent threads read adjacent columns), walks the rows once per level of dependent reductions
(``mean``, then ``var`` about it; independent reductions share a walk), combines the slices
through workgroup memory, keeps the columns' results in registers, then walks the rows once more
to store the outputs (``render/wgsl_colfuse.py``).

What may be fused (anything else keeps the separate kernels), as for row fusion:

- the group's targets have one shape: ``S`` (rank >= 2), or the column shape ``S[1:]`` or
  ``(1,) + S[1:]`` (``std(axis=0)``, with or without keepdims), on a device whose provider runs
  ``rowfuse`` kernels (not the host);
- every reduction absorbed is a ``reduce`` over axis 0 only of an operand of shape ``S``, of a
  real or boolean dtype, not evaluated, not a target, not held outside this evaluation, and read
  only by nodes the fused kernel computes (as is every value derived from it, none of which is a
  target but the group's own; a breaker among the cone's leaves is not computed there);
- a value derived from a reduction reaches the elements only through elementwise ops and casts
  at a column shape (without broadcasting there), reshapes and unit-axis views between the column
  shapes (keepdims), and elementwise ops of shape ``S`` that broadcast it along the rows;
- the columns are at most ``SHORT_COL`` long, or there are at least ``MIN_TILES`` column tiles
  (one workgroup per tile: a few long columns leave a GPU idle, and the reduction kernels split
  them over many workgroups); each thread makes at most ``MAX_TRIPS`` trips in all (lavapipe
  ends an invocation's loops after 65535 iterations);
- operands past ``MAX_BYTES`` (64 MiB) are fused only where that is faster on the H200: column-shaped
  targets with ``TARGET_TILES`` tiles or more, or a quarter of that where one walk computes them all
  (``std``, ``var``: ``moments``), targets of shape ``S`` with two levels of reductions
  (standardising) up to twice ``MAX_BYTES``; else the reduction kernels and one elementwise kernel
  (which reads the columns' results lane by lane in its vec4 form) move the data faster than the
  walks of one workgroup per tile.

>>> tile_width(8192, 8), tile_width(1024, 8), tile_width(3, 4)
(16, 4, 4)
"""

from __future__ import annotations

import math
import os
from typing import Any

from ..graph.node import Node
from ..graph.shapes import contiguous_strides
from .kernel import Kernel
from .rowfuse import ROW_OPS, _build, _cone, aligned, kept_apart, reduced_shape

WORKGROUP = 256         # threads per workgroup (render.wgsl.WORKGROUP)
# rows per thread and trip of a walk, their loads in flight together: more where few tiles run (each
# workgroup's walk is then a chain of trips, each waiting for memory); GPUARRAY_COLFUSE_UNROLL fixes it
UNROLL, UNROLL_FEW = 8, 16
UNROLL_ENV = int(os.environ.get("GPUARRAY_COLFUSE_UNROLL", "0") or 0)
# bytes of a row a tile reads at least (a memory sector; GPUARRAY_COLFUSE_TILE_BYTES for sweeps)
TILE_BYTES = int(os.environ.get("GPUARRAY_COLFUSE_TILE_BYTES", "32") or 32)
TARGET_TILES = 512      # column tiles wanted: the tile narrows (down to TILE_BYTES of a row) until there are
MIN_TILES = 64          # fewer tiles than this, with columns longer than SHORT_COL: not fused
SHORT_COL = 1024
MAX_TRIPS = 16384       # walk trips per thread, all walks together
# Operands of more bytes than this: column-shaped targets (``std(axis=0)``) are fused only where there are
# TARGET_TILES tiles or more (the walks' parallelism), targets of the operand's shape (centring,
# standardising) only with two levels of reductions to save (a standardisation) and up to twice this: else
# the reductions split their columns over many workgroups and the elementwise pass runs at the copy
# bandwidth (vec4 words, broadcast rows read lane by lane). H200, wall ms fused -> separate kernels:
# 16384 x 4096 float32 centring 0.423 -> 0.232, (x - mean) / std 0.527 -> 0.407, x / sum 0.429 -> 0.234,
# std 0.183 -> 0.197 (kept); 65536 x 1024 centring 1.112 -> 0.239, standardising 1.257 -> 0.427, std
# (128 tiles) 0.297 -> 0.243; 4096 x 8192 centring 0.191 -> 0.142, standardising 0.240 -> 0.320 (kept),
# std 0.112 -> 0.196 (kept); 4096 x 1024 (16 MiB) centring 0.089 -> 0.136 (below this: kept). With
# ``moments`` (one walk for std): 16384 x 4096 std 0.123-0.138, 65536 x 1024 std 0.136 fused against
# 0.203-0.264 separate (PyTorch 0.113 and 0.149); standardising 65536 x 1024 still 1.164 against 0.420
MAX_BYTES = int(os.environ.get("GPUARRAY_COLFUSE_MAX_BYTES", str(64 << 20)))
# sums of squared deviations computed in the first walk (``moments``)
MOMENTS = os.environ.get("GPUARRAY_COLFUSE_MOMENTS", "1") != "0"


def tile_width(cols: int, itemsize: int) -> int:
    """Columns per workgroup for ``cols`` columns of ``itemsize`` bytes: the widest of 64 .. 1 that
    still gives ``TARGET_TILES`` tiles, but at least 32 bytes of a row (one memory sector), and no
    wider than the columns need."""
    w = 64
    while w * itemsize > TILE_BYTES and -(-cols // w) < TARGET_TILES:
        w //= 2
    while w > 1 and w // 2 >= cols:
        w //= 2
    return w


def unroll_for(tiles: int) -> int:
    """Rows per thread and trip for a kernel of ``tiles`` column tiles (``UNROLL``, or ``UNROLL_FEW``
    where fewer than half of ``TARGET_TILES`` run)."""
    return UNROLL_ENV or (UNROLL_FEW if tiles < TARGET_TILES // 2 else UNROLL)


def geometry(kernel: Kernel) -> tuple[int, int, int, int]:
    """(rows ``R``, columns ``C``, tile width ``W``, rows per thread and trip) of a column-fused kernel."""
    shape = kernel.instrs[kernel.instrs[kernel.operands[0]].args[0]].shape
    cols = math.prod(shape[1:])
    item = max(kernel.instrs[kernel.instrs[q].args[0]].dtype.itemsize for q in kernel.operands)
    w = tile_width(cols, item)
    return shape[0], cols, w, unroll_for(-(-cols // w))


def reads_of(kernel: Kernel) -> list[frozenset[int]]:
    """Per instruction, the reductions (indices into ``operands``) its value depends on."""
    pos = {q: j for j, q in enumerate(kernel.operands)}
    out: list[frozenset[int]] = []
    for i, ins in enumerate(kernel.instrs):
        out.append(frozenset({pos[i]}) if i in pos else frozenset().union(*(out[a] for a in ins.args)))
    return out


def moments(kernel: Kernel) -> dict[int, tuple[int, int]]:
    """Sums of squared deviations from a column value, ``sum((a - m)**2)`` (``var``'s second reduction,
    ``m`` the column mean), where ``a`` reads no reduction and ``m`` only first-walk reductions:
    {operand index: (instruction of ``a``, of ``m``)}. The first walk computes them together with the
    other first-walk reductions by Welford's method (``render/wgsl_colfuse.py``): with ``n``, ``mean_a`` and
    ``M2`` of ``a``'s column, ``sum((a - m)**2) = M2 + n (mean_a - m)**2``, a sum of two terms that are
    never negative (no cancellation) and one walk over the rows less (``GPUARRAY_COLFUSE_MOMENTS=0``: off)."""
    if not MOMENTS:
        return {}
    reads = reads_of(kernel)
    shape = kernel.instrs[kernel.instrs[kernel.operands[0]].args[0]].shape
    first = {j for j, q in enumerate(kernel.operands) if not reads[kernel.instrs[q].args[0]]}
    out: dict[int, tuple[int, int]] = {}
    for j, q in enumerate(kernel.operands):
        ins = kernel.instrs[q]
        if ins.params[0] != "sum" or ins.dtype.kind != "f":
            continue
        sq = kernel.instrs[ins.args[0]]
        if not (sq.op == "square" or sq.op == "multiply" and sq.args[0] == sq.args[1]):
            continue
        d = kernel.instrs[sq.args[0]]
        if d.op != "subtract":
            continue
        a, m = d.args if kernel.instrs[d.args[0]].shape == shape else d.args[::-1]
        if (kernel.instrs[a].shape != shape or reads[a] or not reads[m] or not reads[m] <= first
                or kernel.instrs[m].shape == shape
                or {kernel.instrs[i].dtype for i in (a, m, d.args[0], sq.args[0])} != {ins.dtype}):
            continue
        out[j] = (a, m)
    return out


def levels(kernel: Kernel, merged: bool = True) -> list[list[int]]:
    """The kernel's reductions (indices into ``operands``) by walk: each reads only reductions of
    earlier walks (``var`` after ``mean``; ``max`` and ``min`` of one input share a walk); ``merged``:
    the ``moments`` in the first walk (else by what they read)."""
    level: dict[int, int] = {}
    merge = {kernel.operands[j] for j in moments(kernel)} if merged else set()
    for q in kernel.operands:
        if q in merge:
            level[q] = 0
            continue
        deep, stack, seen = 0, [kernel.instrs[q].args[0]], set()
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            if i in level:
                deep = max(deep, level[i] + 1)
                continue
            stack.extend(kernel.instrs[i].args)
        level[q] = deep
    out: list[list[int]] = [[] for _ in range(max(level.values(), default=-1) + 1)]
    for j, q in enumerate(kernel.operands):
        out[level[q]].append(j)
    return out


def _col_reduce(n: Node, shape: tuple[int, ...]) -> bool:
    """Whether ``n`` is an unevaluated reduction over the first axis only of an operand of ``shape``."""
    return (n.op == "reduce" and not n.realized and n.attrs[0] in ROW_OPS and n.attrs[1] == (0,)
            and len(shape) >= 2 and n.inputs[0].shape == shape and n.dtype.kind != "c")


def _unit_view(n: Node) -> bool:
    """Whether view ``n`` only adds or drops unit axes (each element keeps its linear index)."""
    strides, offset = n.attrs
    return offset == 0 and math.prod(n.shape) == math.prod(n.inputs[0].shape) and all(
        s == c for s, c, d in zip(strides, contiguous_strides(n.shape), n.shape, strict=True) if d != 1)


def _aligned(cone: list[Node], reds: set[int], shape: tuple[int, ...]) -> bool:
    """Whether every value derived from a column reduction reaches the elements of its own column
    only (see the module docstring)."""
    cols = {shape[1:], (1,) + shape[1:]}
    return aligned(cone, reds, shape, cols, cols | {shape}, _unit_view)


def col_kernel(group: list[Node], fusable: Any, consumers: dict[int, list[Node]], held: set[int],
               live: set[int]) -> tuple[Kernel, set[int]] | None:
    """A column-fused ``rowfuse`` kernel computing ``group`` (elementwise targets of one shape) with
    the column reductions it reads, and the serials of those reductions; None where the rules
    above do not hold (arguments as ``rowfuse.row_kernel``'s)."""
    provider = getattr(group[0].device, "provider", None)
    if provider is None or getattr(provider, "host_memory", True):
        return None
    shape = reduced_shape(group, fusable, first=True)
    if shape is None:
        return None
    rows, cols = shape[0], math.prod(shape[1:])
    if rows <= 0 or cols <= 0:
        return None
    cone = _cone(group, shape, fusable, _col_reduce)
    reds = {n.serial for n in cone if not n.realized and _col_reduce(n, shape)}
    if not reds or kept_apart(group, cone, reds, consumers, held, live, fusable):
        return None
    if not _aligned(cone, reds, shape):
        return None
    k = _build(group, cone, reds, fusable, axis=0)
    r, c, w, u = geometry(k)
    trips = -(-r // (WORKGROUP // w * u))
    if -(-c // w) < MIN_TILES and r > SHORT_COL or trips * (len(levels(k)) + 1) > MAX_TRIPS:
        return None
    nbytes = r * c * max(k.instrs[k.instrs[q].args[0]].dtype.itemsize for q in k.operands)
    tiles = -(-c // w)
    if nbytes > MAX_BYTES and (tiles < (TARGET_TILES // 4 if len(levels(k)) == 1 else TARGET_TILES)
                               if group[0].shape != shape else
                               len(levels(k, merged=False)) < 2 or nbytes > 2 * MAX_BYTES):
        return None
    if provider.cannot_run(k) is not None:
        return None
    return k, reds
