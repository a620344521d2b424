"""Elementwise kernels that read an operand transposed, through shared-memory tiles.

``x + x.T`` reads ``x`` twice: once in order, once through a view whose last axis walks
memory with a stride of a whole row. One element per thread in output order, neighbouring
threads read the transposed operand a row apart: 32 memory transactions for a warp's 32 values
instead of one (``x + x.T`` of 8192^2 float32 took 0.79 ms on the H200, ``torch.compile`` 0.20).

Here a workgroup of 256 threads computes a 32 x 32 tile of the output's last two axes (``R`` x
``C``; a leading batch axis is walked by workgroups too). First it loads the tile of every
transposed operand (``transposed_views``) into workgroup memory, thread ``t`` reading the
element at output row ``t % 32``: along the output's rows the transposed operand is contiguous,
so a warp reads 32 neighbouring values. After a barrier each thread computes four output
elements at row ``t / 32 + 8 k``, column ``t % 32`` (stores in order), reading the transposed
operands from the tiles (rows padded to 33 values: no bank conflicts) and everything else as
the generic renderer does (``render.wgsl._Gen``).

Where the tiles fit in the 16 KiB WebGPU guarantees at 64 x 64 (one 32-bit transposed operand), the
tile is 64 x 64 and each thread computes 16 elements (rows of the tile unpadded, column ``c`` of
row ``r`` stored at ``c ^ r``: the load's row and the compute's column both fall in distinct banks).
H200, raw WGSL, ``x + x.T`` of 8192^2 float32: 0.187 GPU ms (4.3 TB/s) against 0.30 for the 32 x 32
tiles (``torch.compile`` 0.187 wall); at 4096^2 32 x 32 tiles with vec4 words were faster still
(0.039 against 0.046 ms: the 64 MiB fit in the L2 cache).

>>> import numpy as np, gpuarray as xp
>>> from gpuarray.compiler.schedule import schedule
>>> x = xp.asarray(np.ones((64, 64), np.float32), device="wgpu:0")
>>> [transposed_views(k) for k in schedule([(x + x.T)._node])]
[(1,)]
"""

from __future__ import annotations

import math

import numpy as np

from ..compiler.kernel import INDEX_OPS, Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE, WGSL_TYPE
from .wgsl import WORKGROUP, Rendered, _Gen
from .wgsl_lib import helpers_for
from .wgsl_parts import declare_bindings, input_types, store_value

TILE = 32                   # the smallest output tile: TILE x TILE, WORKGROUP / TILE rows of threads
PAD = TILE + 1              # a tile row in workgroup memory
BIG_TILE = 64               # where its tiles fit: 64 x 64, rows unpadded, columns swizzled
SHARED_BYTES = 16384        # the workgroup memory WebGPU guarantees (lavapipe's limit)
_MOVES = frozenset({"view", "reshape"}) | frozenset(INDEX_OPS)     # ops that read their operands elsewhere
_TILE_TYPES = frozenset({np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint32), np.dtype(np.float64)})


def _read_in_place(kernel: Kernel) -> set[int]:
    """Instructions whose every read is at the output element being computed: outputs, and values
    used only by elementwise instructions of the output's shape that are themselves read so. (A value
    read through a view, a reshape or an index op, ``flip(v)`` of a write ``v += 1`` through ``v =
    a.T``, is read at other elements, which a thread's tile does not hold.)"""
    ins, shape = kernel.instrs, kernel.out_shape
    users: list[list[int]] = [[] for _ in ins]
    for u, x in enumerate(ins):
        for a in x.args:
            users[a].append(u)
    outs, ok = set(kernel.outputs), set()
    for j in range(len(ins) - 1, -1, -1):       # users come after what they use
        if (j in outs or users[j]) and all(u in ok and ins[u].shape == shape and ins[u].op not in _MOVES
                                           for u in users[j]):
            ok.add(j)
    return ok


def transposed_views(kernel: Kernel) -> tuple[int, ...]:
    """The view instructions of ``kernel`` read transposed: a view of an input, at the output's
    shape, that walks memory with stride 1 along the output's rows and not along its columns, and
    is read only at the output element a thread computes (``_read_in_place``). Empty unless the
    kernel is elementwise, of rank 2 or 3, with at least 32 rows and columns, and its tiles fit in
    the workgroup memory WebGPU guarantees."""
    shape = kernel.out_shape
    if kernel.kind != "elementwise" or len(shape) not in (2, 3) or min(shape[-2:]) < TILE:
        return ()
    found = []
    in_place: set[int] | None = None
    for i, ins in enumerate(kernel.instrs):
        if ins.op != "view" or ins.shape != shape or kernel.instrs[ins.args[0]].op != "input":
            continue
        if in_place is None:
            in_place = _read_in_place(kernel)
        if i not in in_place:
            continue
        strides = ins.params[0]
        if strides[-2] == 1 and abs(strides[-1]) > 1 and ins.dtype in _TILE_TYPES:
            found.append(i)
    nbytes = sum(TILE * PAD * kernel.instrs[i].dtype.itemsize for i in found)
    return tuple(found) if found and nbytes <= SHARED_BYTES else ()


def tile_for(kernel: Kernel, views: tuple[int, ...]) -> int:
    """The output tile's side for ``views``: ``BIG_TILE`` where its tiles fit in ``SHARED_BYTES``
    (one 32-bit operand), else ``TILE`` (a choice by dtypes alone: one rendering serves every size)."""
    big = sum(BIG_TILE * BIG_TILE * kernel.instrs[i].dtype.itemsize for i in views)
    return BIG_TILE if big <= SHARED_BYTES else TILE


def groups_for(shape: tuple[int, ...], tile: int = TILE) -> int:
    """Workgroups of the tiled kernel with ``tile`` x ``tile`` output tiles over an output of ``shape``."""
    return math.prod(shape[:-2]) * -(-shape[-2] // tile) * -(-shape[-1] // tile)


def render_tiled(kernel: Kernel, variant: tuple[tuple[int, ...], int]) -> Rendered:
    """WGSL for elementwise ``kernel`` with the view instructions ``views`` read through ``tile`` x
    ``tile`` tiles, ``variant = (views, tile)`` (``tile_for``'s choice: part of the cache key)."""
    views, tile = variant
    g = _Gen(kernel)
    out = kernel.outputs[0]
    rank = len(kernel.out_shape)
    rows, cols = g.slot(("dim", g.rep[out], rank - 2)), g.slot(("dim", g.rep[out], rank - 1))
    per = WORKGROUP // tile
    if tile == TILE:          # rows padded to PAD values: a column's values fall in distinct banks
        def at(row: str, col: str) -> str:
            return f"({row}) * {PAD}u + {col}"
        size = TILE * PAD
    else:                     # unpadded rows, column c of row r at c ^ r: distinct banks both ways
        def at(row: str, col: str) -> str:
            return f"({row}) * {tile}u + (({col}) ^ ({row}))"
        size = tile * tile
    head = ["  let w = wid.y * nwg.x + wid.x;",
            f"  let R = {rows};",
            f"  let C = {cols};",
            f"  let tr = (R + {tile - 1}u) / {tile}u;",
            f"  let tc = (C + {tile - 1}u) / {tile}u;",
            "  let bb = w / (tr * tc);",
            "  if (bb * R * C >= prm[0]) { return; }        // the same for the whole workgroup",
            "  let rem = w % (tr * tc);",
            f"  let r0 = (rem / tc) * {tile}u;",
            f"  let c0 = (rem % tc) * {tile}u;",
            f"  let tx = lid % {tile}u;",
            f"  let ty = lid / {tile}u;"]
    shared = [f"var<workgroup> tile{i}: array<{WGSL_TYPE[kernel.instrs[i].dtype]}, {size}>;" for i in views]

    def block(cond: str, lines_of: list[str]) -> list[str]:
        return [f"  if ({cond}) {{", *["  " + ln for ln in lines_of], "  }"]

    def fresh_block() -> None:
        g.lines = []
        g.memo = {}             # names from another block are out of scope
        g.alias = {}

    # Coordinates are clamped to the array, so that no load sits behind a branch: a thread's loads are
    # all in flight at once, and the stores come after every load (H200, x + x.T of 8192^2 with each
    # pass's load, or load and store, inside its bounds test: 0.64 GPU ms with 64 x 64 tiles)
    body: list[str] = []
    for k in range(tile // per):            # load: output (r0 + tx, c0 + ty + per k), in memory order
        fresh_block()
        idx = ("multi", (*(("bb",) if rank == 3 else ()), "min(r0 + tx, R - 1u)",
                         f"min(c0 + ty + {per * k}u, C - 1u)"))
        stores = [f"  tile{i}[{at(f'ty + {per * k}u', 'tx')}] = {g.value(i, idx)};" for i in views]
        body += g.lines + stores
    body.append("  workgroupBarrier();")
    out_stores: list[str] = []
    for k in range(tile // per):            # compute: output (r0 + ty + per k, c0 + tx)
        fresh_block()
        for i in views:         # a name, so that value numbers see its reads as one value (min(x, x) is x)
            g.named[i] = g.emit(f"tile{i}[{at('tx', f'ty + {per * k}u')}]")
        g.lines.append(f"  let gi{k} = (bb * R + min(r0 + ty + {per * k}u, R - 1u)) * C + min(c0 + tx, C - 1u);")
        stores = []
        for j, o in enumerate(kernel.outputs):
            v = g.value(o, ("lin", f"gi{k}"))
            stores.append(f"  out{j}[gi{k}] = {store_value(kernel.instrs[o].dtype, v)};")
        body += g.lines
        out_stores += block(f"r0 + ty + {per * k}u < R && c0 + tx < C", stores)
    body += out_stores
    decls = declare_bindings(input_types(kernel),
                             [WGSL_STORAGE_TYPE[kernel.instrs[o].dtype] for o in kernel.outputs], g.wide)
    main = (
        f"@compute @workgroup_size({WORKGROUP})\n"
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
        "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(head + body) + "\n}\n"
    )
    src = "\n".join(decls + shared) + "\n\n" + helpers_for(main) + "\n\n" + main
    return Rendered(src, sorted(g.slots, key=lambda s: g.slots[s]), g.wide, len(kernel.inputs),
                    len(kernel.outputs), tile=tile)
