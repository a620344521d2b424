"""Arrays larger than the adapter's bindings and buffers on the wgpu provider.

A buffer holds at most ``max-buffer-size`` bytes and a binding at most
``max-storage-buffer-binding-size`` (4 GiB and 2 GiB on the H200, 2 GiB and
128 MiB on lavapipe). Larger arrays live in ``SegmentedHandle`` parts; an
elementwise kernel over them (or over arrays above one binding) runs as one
dispatch per chunk, each binding the matching byte range of every array
(``split_kernel`` rewrites the kernel for a flat chunk, ``enqueue_split``
records the dispatches). A plain matrix product writes an output above one binding by blocks of
rows (``wgpu_matmul.row_blocks``); elementwise results that cannot be split flat run by blocks of
rows (``elementwise_row_blocks``); other kinds bind windows (``window_kernel``) or refuse such arrays
(``WgpuProvider.cannot_run``).

Example::

    >>> h = SegmentedHandle([GpuHandle(None, 8), GpuHandle(None, 4)], 2, 4, 12)
    >>> [(off, size) for _p, off, size in h.ranges()]
    [(0, 8), (8, 4)]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..compiler.kernel import INDEX_OPS, Instr, Kernel, Result
from ..core.dtypes import STORAGE_NP
from ..graph.shapes import view_strides
from .wgpu_elementwise import dispatch_elementwise


class GpuHandle:
    __slots__ = ("buffer", "nbytes")

    def __init__(self, buffer: Any, nbytes: int) -> None:
        self.buffer = buffer
        self.nbytes = nbytes


class SegmentedHandle:
    """An array larger than the adapter's largest buffer: consecutive ``parts`` of
    ``seg_elems`` elements each (the last one shorter; ``WgpuMemory.segment_elems``). Chunked
    elementwise kernels, uploads and downloads read them whole; other kernels bind windows within one
    part (``window_kernel``)."""

    __slots__ = ("parts", "seg_elems", "itemsize", "nbytes")

    def __init__(self, parts: list[GpuHandle], seg_elems: int, itemsize: int, nbytes: int) -> None:
        self.parts = parts
        self.seg_elems = seg_elems
        self.itemsize = itemsize
        self.nbytes = nbytes

    def ranges(self) -> list[tuple[GpuHandle, int, int]]:
        """(part, first byte in the array, bytes) for each part."""
        seg = self.seg_elems * self.itemsize
        return [(p, i * seg, p.nbytes) for i, p in enumerate(self.parts)]


def _elem_ranges(h: GpuHandle | SegmentedHandle, itemsize: int) -> list[tuple[GpuHandle, int, int]]:
    """(part, first element in the array, elements) for each buffer of an array."""
    if isinstance(h, SegmentedHandle):
        return [(p, off // itemsize, size // itemsize) for p, off, size in h.ranges()]
    return [(h, 0, h.nbytes // itemsize)]


def _sub_range(h: GpuHandle | SegmentedHandle, start: int, count: int, itemsize: int) -> tuple[Any, int, int]:
    """(buffer, byte offset, bytes) of elements [start, start + count) of an array. A range that a kernel
    was planned to read in one part but that crosses into the next is an error, never a read of the
    part's buffer past its elements (a pooled buffer is larger than its part: stale values)."""
    if isinstance(h, SegmentedHandle):
        seg = start // h.seg_elems
        off = (start - seg * h.seg_elems) * itemsize
        if count and off + count * itemsize > h.parts[seg].nbytes:
            raise RuntimeError(f"internal error: elements [{start}, {start + count}) of an array stored in parts of "
                               f"{h.seg_elems} elements cross from part {seg} into the next (please report it)")
        return (h.parts[seg].buffer, off, count * itemsize)
    return (h.buffer, start * itemsize, count * itemsize)


def split_kernel(kernel: Kernel, count: int) -> Kernel | None:
    """The kernel over a flat chunk of ``count`` elements, or None when it cannot be split.

    It can be split when every instruction is elementwise over arrays of the output's size
    (contiguous inputs read in C order, reshapes of them) or a scalar (a const, a 0-d input
    such as an evaluated ``x.sum()``, or a broadcast view of one): then element i of every
    array lines up with element i of the output, and a chunk reads the same range of each
    buffer (a 0-d input's one element in every chunk).
    """
    n = kernel.size
    instrs: list[Instr] = []
    for ins in kernel.instrs:
        size = math.prod(ins.shape)
        if ins.op == "const":
            instrs.append(ins)
            continue
        if ins.op == "iota" or ins.op in INDEX_OPS:
            return None
        if ins.op == "view":
            src = kernel.instrs[ins.args[0]]
            if src.shape != () or any(ins.params[0]) or size != n:
                return None
            instrs.append(Instr("view", ins.args, ins.dtype, (count,), ((0,), 0)))
            continue
        if ins.shape == () and all(kernel.instrs[a].shape == () for a in ins.args):
            instrs.append(ins)          # a 0-d input (bound whole in every chunk) or arithmetic on scalars
            continue
        if size != n:
            return None
        if ins.op not in ("input", "reshape"):
            for a in ins.args:
                ashape = kernel.instrs[a].shape
                if ashape != () and math.prod(ashape) != n:
                    return None
        elif ins.op == "reshape" and math.prod(kernel.instrs[ins.args[0]].shape) != n:
            return None
        instrs.append(Instr(ins.op, ins.args, ins.dtype, (count,), ins.params))
    return Kernel(instrs, list(kernel.inputs), list(kernel.outputs), list(kernel.out_nodes), (count,),
                  kernel.device)


def row_concat(kernel: Kernel) -> bool:
    """Whether ``kernel`` only joins whole inputs along the first axis (their bytes one after another):
    past one binding it is then copies, no binding (``enqueue_split``; from and into the parts of arrays
    past one buffer too)."""
    if len(kernel.outputs) != 1:
        return False
    out = kernel.instrs[kernel.outputs[0]]
    return out.op == "concat" and out.params[0] == 0 and len(kernel.instrs) == len(out.args) + 1 and all(
        kernel.instrs[a].op == "input" and kernel.instrs[a].dtype == out.dtype for a in out.args)


def _copy_rows(provider: Any, kernel: Kernel, in_handles: Sequence[Any]) -> list[Any]:
    """``row_concat``'s kernel: each input's bytes copied into its rows of the output (one submit)."""
    out = kernel.instrs[kernel.outputs[0]]
    it = STORAGE_NP[out.dtype].itemsize
    dst = provider.alloc_array(kernel.size, it, row=math.prod(out.shape[1:]))
    # each input's buffers (an array past one buffer: its parts) with their byte offsets in the output
    srcs = []
    off = 0
    for a in out.args:
        h = in_handles[kernel.instrs[a].params[0]]
        n = math.prod(kernel.instrs[a].shape)
        srcs += [(p.buffer, off + start * it, min(m, n - start) * it) for p, start, m in _elem_ranges(h, it)
                 if start < n]
        off += n * it
    ranges = [(p.buffer, start * it, n * it) for p, start, n in _elem_ranges(dst, it)]

    def copies(enc: Any) -> None:
        for src, at, nb in srcs:
            for buf, lo, size in ranges:           # the output's parts this source's bytes fall in
                a, b = max(at, lo), min(at + nb, lo + size)
                if a < b:
                    enc.copy_buffer_to_buffer(src, a - at, buf, a - lo, b - a)

    provider.flush(copies)
    return [dst]


def elementwise_row_blocks(provider: Any, kernel: Kernel) -> list[tuple[int, int, Kernel, list[Any]]] | None:
    """An elementwise kernel of outputs past one binding that cannot be split into flat chunks (a
    broadcast operand, ``X - mean(X, axis=0)``; a strided view, ``X[:, ::2] * 2``) as kernels of blocks of
    its output rows, each reading windows of its inputs (``window_kernel`` of the kernel with a view of
    those rows as its output; an operand broadcast along the rows keeps its positions, as the window
    moves by whole rows): ``(first row, end row, block kernel, windows)`` per block, cut where an
    output's next part starts, or None when some block has no windows (or a row is past one binding)."""
    shape = kernel.out_shape
    if kernel.kind != "elementwise" or not shape or kernel.size == 0:
        return None
    row = math.prod(shape[1:])
    widest = max(STORAGE_NP[n.dtype].itemsize for n in [*kernel.inputs, *kernel.out_nodes])
    # blocks start at rows whose byte offset in every output is a multiple of the offset alignment
    step = math.lcm(*(provider.offset_align // math.gcd(provider.offset_align, row * STORAGE_NP[n.dtype].itemsize)
                      for n in kernel.out_nodes))
    per = (provider.max_binding - 4096) // (row * widest) // step * step
    parts: set[int] = set()
    for node in kernel.out_nodes:
        if _nbytes(node) > provider.max_buffer:
            seg = provider.segment_elems(STORAGE_NP[node.dtype].itemsize, row)
            if seg % row:
                return None
            parts.update(range(seg // row, shape[0], seg // row))
    for node in kernel.inputs:       # an input of the output's rows stored in parts: cut where its parts start too
        seg = segment_of(provider, node) if node.shape[:1] == shape[:1] and len(node.shape) > 1 else None
        r_in = math.prod(node.shape[1:])
        if seg is not None and seg % r_in == 0:
            parts.update(r for r in range(seg // r_in, shape[0], seg // r_in) if r % step == 0)
    if per < 1:
        return None
    big = any(_nbytes(n) > provider.max_binding for n in kernel.inputs)
    blocks: list[tuple[int, int, Kernel, list[Any]]] = []
    todo = []
    r0 = 0
    for r1 in sorted(parts | set(range(per, shape[0], per)) | {shape[0]}):
        todo.append((r0, r1))
        r0 = r1
    todo.reverse()
    while todo:              # a block whose windows do not fit (an input's rows wider than the output's, a
        r0, r1 = todo.pop()  # window across two parts of an input) is halved, at aligned rows
        bk = _rows_of(kernel, r0, r1)
        win = window_kernel(provider, bk) if big else (bk, [None] * len(kernel.inputs))
        if win is not None:
            blocks.append((r0, r1, win[0], win[1]))
            continue
        mid = (r0 + r1) // 2 // step * step
        if not r0 < mid < r1:
            return None
        todo += [(mid, r1), (r0, mid)]
    return blocks


def _rows_of(kernel: Kernel, r0: int, r1: int) -> Kernel:
    """``kernel`` computing rows ``r0:r1`` of its outputs, in the block's own positions: every array of
    the output's rows is read through a view of those rows (an input, a view's offset moved by ``r0``
    rows), elementwise work takes the block's shape, and operands broadcast along the rows (``mu`` of
    ``X - mu``) stay as they are; a reshape, an ``iota``, an index op or a view of computed work is
    computed where it lies and read through a view of its rows, where it does not read the block's own
    work (else a view of the outputs' rows over the whole kernel, ``_rows_view``). View offsets are
    parameters: one shader for every block of that many rows."""
    rows = kernel.out_shape[0]
    nd = len(kernel.out_shape)
    src = kernel.instrs
    instrs: list[Instr] = []
    at: dict[int, int] = {}                        # old index -> new index
    row_view: dict[int, int] = {}                  # a blocked input -> the view of its rows

    def blocked(ins: Instr) -> bool:
        return len(ins.shape) == nd and ins.shape[0] == rows

    def use(a: int) -> int:                        # an operand of elementwise work on the block
        if src[a].op != "input" or not blocked(src[a]):
            return at[a]
        if a not in row_view:
            instrs.append(_row_view(at[a], src[a], r0, r1))
            row_view[a] = len(instrs) - 1
        return row_view[a]

    def setslice_rows(ins: Instr) -> bool:         # rows of a write whose value is its own or the block's rows
        starts, steps = ins.params
        val = src[ins.args[1]]
        return blocked(src[ins.args[0]]) and len(val.shape) == nd and steps[0] != 0 and (
            not blocked(val) or (starts[0] == 0 and steps[0] == 1))

    for i, ins in enumerate(src):
        if ins.op != "input" and not blocked(ins) and any(blocked(src[a]) and src[a].op != "input" for a in ins.args):
            return _rows_view(kernel, r0, r1)      # the block's work read at the whole array's positions
        if ins.op == "input" or not blocked(ins):
            instrs.append(Instr(ins.op, tuple(at[a] for a in ins.args), ins.dtype, ins.shape, ins.params))
        elif ins.op == "view" and src[ins.args[0]].op == "input":    # it reads its input where it lies
            strides, off = ins.params
            instrs.append(Instr("view", (at[ins.args[0]],), ins.dtype, (r1 - r0, *ins.shape[1:]),
                                (strides, off + r0 * strides[0])))
        elif ins.op == "concat" and ins.params[0] > 0 and all(blocked(src[a]) for a in ins.args):
            # a join along a later axis: the block's rows of each part, joined
            instrs.append(Instr("concat", tuple(use(a) for a in ins.args), ins.dtype, (r1 - r0, *ins.shape[1:]),
                                ins.params))
        elif ins.op == "setslice" and setslice_rows(ins):
            b = use(ins.args[0])
            blk = use(ins.args[1]) if blocked(src[ins.args[1]]) else None
            instrs.extend(_setslice_rows(ins, src[ins.args[1]], b, at[ins.args[1]], blk, r0, r1, len(instrs)))
        elif ins.op in INDEX_OPS or ins.op in ("iota", "reshape", "view"):
            # computed where it lies (a concatenation of column blocks, a reshaped input), read through a
            # view of its rows; not where it reads the block's own work
            if any(blocked(src[a]) and src[a].op != "input" for a in ins.args):
                return _rows_view(kernel, r0, r1)
            instrs.append(Instr(ins.op, tuple(at[a] for a in ins.args), ins.dtype, ins.shape, ins.params))
            instrs.append(_row_view(len(instrs) - 1, ins, r0, r1))
        else:
            args = tuple(use(a) for a in ins.args)
            instrs.append(Instr(ins.op, args, ins.dtype, (r1 - r0, *ins.shape[1:]), ins.params))
        at[i] = len(instrs) - 1
    shape = (r1 - r0, *kernel.out_shape[1:])
    outs = [at[o] for o in kernel.outputs]
    return Kernel(instrs, list(kernel.inputs), outs, [Result(instrs[o].dtype, shape) for o in outs], shape,
                  kernel.device, kernel.kind, kernel.attrs, [at[o] for o in kernel.operands])


def _setslice_rows(ins: Instr, val: Instr, base: int, whole: int, block: int | None, r0: int, r1: int,
                   at: int) -> list[Instr]:
    """Rows ``r0:r1`` of ``base[starts::steps] = value`` (``ins``, a write through a view: ``x[5] = 7``,
    ``x[100:900] = 1``, ``m[::7, 1::3] = -1``): the block's rows of the base (instruction ``base``) with the
    rows of the region that fall in the block written, their start moved into the block's positions. The
    value's rows are read through a view of instruction ``whole`` (the value computed where it lies), or are
    the block's own (``block``: a region of every row, ``m[:, 3] = m[:, 3] * 2``); no region row in the block:
    the base's rows alone (an identity view). ``at``: the index the first instruction returned will have."""
    starts, steps = ins.params
    s0, st0, cnt = starts[0], steps[0], val.shape[0]
    if st0 > 0:             # region row i is s0 + i st0: those in [r0, r1)
        i0, i1 = max(0, -(-(r0 - s0) // st0)), min(cnt, max(0, -(-(r1 - s0) // st0)))
    else:                   # a reversed step (m[::-1] = v): the block's rows from its last down
        i0, i1 = max(0, -(-(s0 - r1 + 1) // -st0)), min(cnt, max(0, (s0 - r0) // -st0 + 1))
    shape = (r1 - r0, *ins.shape[1:])
    if i1 <= i0:
        return [Instr("view", (base,), ins.dtype, shape, (view_strides(shape), 0))]
    out: list[Instr] = []
    if block is not None:       # a region of every row (setslice_rows: start 0, step 1): the block's own rows
        v = block
    else:
        out.append(_row_view(whole, val, i0, i1))
        v = at
    return [*out, Instr("setslice", (base, v), ins.dtype, shape, ((s0 + i0 * st0 - r0, *starts[1:]), steps))]


def _row_view(i: int, ins: Instr, r0: int, r1: int) -> Instr:
    """A view of rows ``r0:r1`` of instruction ``i`` (``ins``, C-contiguous)."""
    shape = (r1 - r0, *ins.shape[1:])
    return Instr("view", (i,), ins.dtype, shape, (view_strides(shape), r0 * math.prod(ins.shape[1:])))


def _rows_view(kernel: Kernel, r0: int, r1: int) -> Kernel:
    """``_rows_of`` by a view of rows ``r0:r1`` of each output over the whole kernel."""
    instrs = list(kernel.instrs)
    shape = (r1 - r0, *kernel.out_shape[1:])
    outs = []
    for o in kernel.outputs:
        instrs.append(_row_view(o, instrs[o], r0, r1))
        outs.append(len(instrs) - 1)
    return Kernel(instrs, list(kernel.inputs), outs, [Result(instrs[o].dtype, shape) for o in outs], shape,
                  kernel.device, kernel.kind, kernel.attrs, list(kernel.operands))


def _enqueue_row_blocks(provider: Any, kernel: Kernel, in_handles: Sequence[Any],
                        blocks: list[tuple[int, int, Kernel, list[Any]]]) -> list[Any]:
    row = math.prod(kernel.out_shape[1:])
    out_items = [STORAGE_NP[kernel.instrs[o].dtype].itemsize for o in kernel.outputs]
    outs = [provider.alloc_array(kernel.size, it, row=row) for it in out_items]
    for r0, r1, bk, windows in blocks:
        bound = window_handles(in_handles, bk, windows)
        bound += [_sub_range(h, r0 * row, (r1 - r0) * row, it) for h, it in zip(outs, out_items, strict=True)]
        dispatch_elementwise(provider, bk, bound)
    return outs


def enqueue_split(provider: Any, kernel: Kernel, in_handles: Sequence[Any]) -> list[Any]:
    """An elementwise kernel over arrays larger than one binding: one dispatch per chunk of
    ``chunk_elems()`` elements, each binding the matching byte range of every array (a ``row_concat``:
    copies; a kernel that cannot be split flat: ``elementwise_row_blocks``)."""
    flat_ok = split_kernel(kernel, 1) is not None
    if not flat_ok and row_concat(kernel) and all(type(h) in (GpuHandle, SegmentedHandle)
                                                            for h in in_handles):
        return _copy_rows(provider, kernel, in_handles)
    if not flat_ok:
        blocks = elementwise_row_blocks(provider, kernel)
        assert blocks is not None, "cannot_run refuses kernels that cannot be split"
        return _enqueue_row_blocks(provider, kernel, in_handles, blocks)
    n = kernel.size
    chunk = provider.chunk_elems()
    items = [STORAGE_NP[node.dtype].itemsize for node in kernel.inputs]
    out_items = [STORAGE_NP[kernel.instrs[o].dtype].itemsize for o in kernel.outputs]
    outs = [provider.alloc_array(n, it, row=math.prod(node.shape[1:]))
            for it, node in zip(out_items, kernel.out_nodes, strict=True)]
    # chunks of at most ``chunk`` elements, cut where any array's next part starts (parts are of whole
    # alignment units, so every cut is aligned for every array)
    cuts = set(range(chunk, n, chunk)) | {n}
    for h in [*in_handles, *outs]:
        if isinstance(h, SegmentedHandle):
            cuts.update(range(h.seg_elems, n, h.seg_elems))
    flat: dict[int, Kernel] = {}
    start = 0
    for end in sorted(cuts):
        c = end - start
        k = flat.get(c)
        if k is None:
            k = split_kernel(kernel, c)
            assert k is not None, "cannot_run refuses kernels that cannot be split"
            flat[c] = k
        bound = [(h.buffer, 0, it) if node.shape == () else _sub_range(h, start, c, it)
                 for h, it, node in zip(in_handles, items, kernel.inputs)]
        bound += [_sub_range(h, start, c, it) for h, it in zip(outs, out_items)]
        dispatch_elementwise(provider, k, bound)
        start = end
    return outs


def segment_of(provider: Any, node: Any) -> int | None:
    """Elements per part of the array ``node`` (its stored shape) where it is stored in several buffers:
    its handle's, once realized on ``provider``, else what ``alloc_array`` will give it; None when it
    fits one buffer."""
    data = node.data if node.realized else None
    h = getattr(data, "handle", None) if data is not None and getattr(data, "provider", None) is provider else None
    if isinstance(h, SegmentedHandle):
        return int(h.seg_elems)
    if h is not None or _nbytes(node) <= provider.max_buffer:
        return None
    # data not on the device yet is uploaded in the rows of its own shape, which a reshape sharing it
    # (``x.reshape(-1, 3)`` of a (1500, 200, 3) array) does not have: blocks cut at the reshape's rows
    # crossed the parts the upload made (a window across two parts: the host)
    shape = data.shape if data is not None and math.prod(getattr(data, "shape", ())) == math.prod(node.shape) \
        else node.shape
    return int(provider.segment_elems(STORAGE_NP[node.dtype].itemsize, math.prod(shape[1:])))


def window_kernel(provider: Any, kernel: Kernel) -> tuple[Kernel, list[tuple[int, int] | None]] | None:
    """An elementwise kernel (or a reduction, whose operand counts as read whole) that reads its inputs
    past one binding only through views (a slice, a block of rows, a reversed tail; also of an elementwise
    value of such inputs, ``where(x > 0, x, 0)[-100:]``), each within a window of the input that fits one
    binding: that kernel with those views' offsets moved to their window's start, and per input its window
    (first element, elements; None for an input bound whole). None when some input past one binding is
    read otherwise (elementwise over all of it, a broadcast, a gather), an output exceeds one binding, or
    the window of an input stored in parts (past one buffer) spans two of them. A window starts at a
    multiple of the adapter's offset alignment; the offsets
    are parameters, so the shader is the one of the whole-array kernel."""
    if kernel.size >= 2**32 or any(_nbytes(n) > provider.max_binding for n in kernel.out_nodes):
        return None
    items = [STORAGE_NP[n.dtype].itemsize for n in kernel.inputs]
    big = {j for j, n in enumerate(kernel.inputs) if _nbytes(n) > provider.max_binding}
    if not big:
        return None
    found = _window_reads(kernel, big)
    if found is None:
        return None
    reads, tainted = found
    # views and the inputs they reach form groups that share one start (the views' one shift)
    group: dict[Any, Any] = {}

    def root(k: Any) -> Any:
        while group.setdefault(k, k) != k:
            k = group[k]
        return k

    for j, views in reads.items():
        for v in views:
            group[root(("v", v))] = root(("i", j))
    bounds: dict[Any, list[Any]] = {}
    for j, views in reads.items():
        r = root(("i", j))
        b = bounds.setdefault(r, [math.inf, -1, 1])         # first, end, alignment step in elements
        for lo, hi in views.values():
            b[0], b[1] = min(b[0], lo), max(b[1], hi)
        b[2] = max(b[2], provider.offset_align // items[j])
    for j, views in reads.items():           # a view whose positions place other reads moves by whole periods
        b = bounds[root(("i", j))]
        for v in views:
            if v in tainted:
                b[2] = math.lcm(b[2], tainted[v]) if tainted[v] else 0
    for b in bounds.values():
        if b[2] == 0:                        # not moved at all: the window starts at the array's start
            b[0], b[2] = 0, 1
    windows: list[tuple[int, int] | None] = [None] * len(kernel.inputs)
    for j in reads:
        first, end, step = bounds[root(("i", j))]
        start = int(first) // step * step
        if (end - start) * items[j] > provider.max_binding:
            return None
        seg = segment_of(provider, kernel.inputs[j])      # stored in parts: the window in one of them
        if seg is not None and start // seg != (int(end) - 1) // seg:
            return None
        windows[j] = (start, int(end) - start)
    moved = {v: int(b[0]) // b[2] * b[2] for views in reads.values() for v in views
             for b in [bounds[root(("v", v))]]}
    instrs = [Instr("view", ins.args, ins.dtype, ins.shape, (ins.params[0], ins.params[1] - moved[i]))
              if i in moved else ins for i, ins in enumerate(kernel.instrs)]
    return Kernel(instrs, list(kernel.inputs), list(kernel.outputs), list(kernel.out_nodes), kernel.out_shape,
                  kernel.device, kernel.kind, kernel.attrs, list(kernel.operands)), windows


def _window_reads(kernel: Kernel, big: set[int]) -> tuple[dict[int, dict[int, tuple[int, int]]], dict[int, int]] | None:
    """Per input in ``big``: the views it is read through, each with the range of its flat elements that
    view reads ([first, end)); None when it is read otherwise. Positions pass unchanged from a view's
    source to its inputs through elementwise instructions of the source's shape and reshapes. Also the
    views whose positions place other reads (a broadcast operand, another view, an ``iota``, an index
    op), with the period by whose multiples it may still move (a row ``mu`` broadcast over ``X``: the
    row's length; 0: not at all): moving its offset moves those reads too (``(X * col)[2000:2002]`` read
    rows 0 and 1 of ``col`` with any move, ``(X - mu)[1500:1503]`` the wrong columns of ``mu`` on the H200)."""
    OUT = -1                                   # positions not mapped from a view (all of an output's)
    need: dict[int, dict[int, tuple[int, int]]] = {      # a breaker (a reduction) reads its operands whole
        o: {OUT: (0, math.prod(kernel.instrs[o].shape))} for o in [*kernel.outputs, *kernel.operands]}
    reads: dict[int, dict[int, tuple[int, int]]] = {}
    tainted: dict[int, int] = {}                   # view -> period its moves must keep (0: none)

    def taint(origins: dict[int, tuple[int, int]], period: int) -> None:
        for o in origins:
            if o != OUT:
                tainted[o] = math.lcm(tainted.get(o, 1), period) if period and tainted.get(o, 1) else 0
    for i in range(len(kernel.instrs) - 1, -1, -1):
        origins = need.get(i)
        if origins is None:
            continue
        ins = kernel.instrs[i]
        if ins.op == "input":
            if ins.params[0] in big:
                if OUT in origins:
                    return None
                into = reads.setdefault(ins.params[0], {})
                for v, (lo, hi) in origins.items():
                    a, b = into.get(v, (lo, hi))
                    into[v] = (min(a, lo), max(b, hi))
            continue
        if ins.op == "view":
            taint(origins, 0)
            strides, off = ins.params
            box = _box(ins.shape, min(r[0] for r in origins.values()), max(r[1] for r in origins.values()))
            ext = (off + sum(min(st * a, st * b) for st, (a, b) in zip(strides, box, strict=True)),
                   off + 1 + sum(max(st * a, st * b) for st, (a, b) in zip(strides, box, strict=True)))
            need.setdefault(ins.args[0], {})[i] = ext
            continue
        same = ins.op == "reshape" or (ins.op not in INDEX_OPS and ins.op != "iota")
        if not same:
            taint(origins, 0)
        for a in ins.args:
            arg = kernel.instrs[a]
            if math.prod(arg.shape) <= 1:
                passed = {OUT: (0, 1)}          # one element: position 0 whatever the position
            elif same and (arg.shape == ins.shape or ins.op == "reshape"):
                passed = origins
            else:
                taint(origins, _period(arg.shape, ins.shape) if same else 0)
                passed = {OUT: (0, math.prod(arg.shape))}      # broadcast or gathered: all positions
            into = need.setdefault(a, {})
            for v, (lo, hi) in passed.items():
                c, d = into.get(v, (lo, hi))
                into[v] = (min(c, lo), max(d, hi))
    return (reads, tainted) if reads and all(reads.get(j) for j in big) else None


def _period(arg: tuple[int, ...], shape: tuple[int, ...]) -> int:
    """The period in the C-order positions of ``shape`` of the elements read of an operand of shape ``arg``
    broadcast to it (from the right): the size of the trailing dimensions it has whole, when it has
    none before them (a row ``(C,)`` of ``(R, C)``: ``C``); 0 where its index depends on more (``(R, 1)``)."""
    full = (1,) * (len(shape) - len(arg)) + tuple(arg)
    d = len(shape)
    while d > 0 and full[d - 1] == shape[d - 1]:
        d -= 1
    return math.prod(shape[d:]) if all(a == 1 for a in full[:d]) else 0


def _box(shape: tuple[int, ...], lo: int, hi: int) -> list[tuple[int, int]]:
    """Per dimension, the first and last index of the C-order positions [lo, hi) of ``shape``: the
    box around them (whole trailing dimensions once the range spans more than one index of one)."""
    box: list[tuple[int, int]] = []
    last = max(lo, hi - 1)
    for d in range(len(shape)):
        inner = math.prod(shape[d + 1:])
        a, b = lo // inner, last // inner
        box.append((a, b))
        if a != b:
            box += [(0, m - 1) for m in shape[d + 1:]]
            break
        lo, last = lo - a * inner, last - a * inner
    return box


# kinds (besides elementwise) whose enqueue binds windows of their inputs: they only pass the handles on
WINDOW_KINDS = frozenset({"reduce", "argreduce", "sort", "argsort", "scan", "compact", "matmul", "searchsorted"})


def window_inputs(provider: Any, kernel: Kernel, in_handles: list[Any]) -> tuple[Kernel, list[Any]]:
    """A ``WINDOW_KINDS`` kernel with inputs past one binding (which ``cannot_run`` let through, as
    ``window_kernel`` finds their windows): the windowed kernel and handles; else as they are."""
    if not any(type(h) is SegmentedHandle or type(h) is GpuHandle and h.nbytes > provider.max_binding
               for h in in_handles):
        return kernel, in_handles
    win = window_kernel(provider, kernel)
    assert win is not None, "cannot_run refuses kernels over inputs past one binding without windows"
    return win[0], window_handles(in_handles, kernel, win[1])


def windowed(provider: Any, kernel: Kernel, in_handles: Sequence[Any]) -> tuple[Kernel, list[Any]] | None:
    """For a kernel over arrays past one binding that cannot be split into chunks: ``window_kernel``'s
    kernel and ``in_handles`` with each windowed input's handle replaced by its (buffer, byte offset,
    bytes); None when it has no windows (it is split, ``enqueue_split``)."""
    win = None if split_kernel(kernel, 1) is not None else window_kernel(provider, kernel)
    return None if win is None else (win[0], window_handles(in_handles, kernel, win[1]))


def window_handles(in_handles: Sequence[Any], kernel: Kernel, windows: list[tuple[int, int] | None]) -> list[Any]:
    """``in_handles`` with each windowed input's handle replaced by its (buffer, byte offset, bytes): of the
    part holding the window, for an array stored in parts."""
    return [h if w is None else _sub_range(h, w[0], w[1], STORAGE_NP[node.dtype].itemsize)
            for h, node, w in zip(in_handles, kernel.inputs, windows, strict=True)]


def _nbytes(node: Any) -> int:
    return math.prod(node.shape) * STORAGE_NP[node.dtype].itemsize
