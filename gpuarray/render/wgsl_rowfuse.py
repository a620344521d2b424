"""Render a ``rowfuse`` kernel (``compiler/rowfuse.py``): one workgroup per row of the output.

For each ``rowreduce`` instruction in order, the workgroup's threads walk the row (thread
``lid`` takes elements ``lid``, ``lid + 256``, ...), evaluate the reduction's operand through the
fused cone at each element, combine their partial results in shared memory, and every thread
keeps the row's result in a register (``rv<j>``); later instructions that read the reduction use
that register at any element of the row. Then the threads walk the row once more and store the
outputs (outputs of one value per row: the row's first thread stores them). The row index splits
into the leading coordinates of the row shape, so broadcast inputs and views are read by
multi-index as in any kernel. ``prm`` extras: ROWS (rows of the output).

>>> import numpy as np, gpuarray as xp
>>> from gpuarray.compiler.schedule import schedule
>>> x = xp.asarray(np.ones((4, 8), np.float32), device="wgpu:0")
>>> e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
>>> [k.kind for k in schedule([(e / xp.sum(e, axis=-1, keepdims=True))._node])]
['rowfuse']
"""

from __future__ import annotations

from .._dtypes import WGSL_STORAGE_TYPE
from .._ops import OPS
from ..compiler.kernel import Kernel
from .wgsl import WORKGROUP, Rendered, _Gen, declare_bindings, input_types, store_value
from .wgsl_lib import helpers_for
from .wgsl_reduce import acc_type, combine, identity


def row_inputs(kernel: Kernel) -> list[int]:
    """The ``input`` instructions read only at the row element being computed: of the row shape
    ``S``, not boolean, and used only by elementwise ops, casts and reductions of that shape (a
    view or an index op would read them elsewhere). ``render_rowfuse`` can keep them in shared
    memory after the first walk."""
    shape = kernel.instrs[kernel.instrs[kernel.operands[0]].args[0]].shape
    users: dict[int, list[int]] = {}
    for j, ins in enumerate(kernel.instrs):
        for a in ins.args:
            users.setdefault(a, []).append(j)
    out = []
    for i, ins in enumerate(kernel.instrs):
        if ins.op != "input" or ins.shape != shape or ins.dtype.kind == "b" or i in kernel.outputs:
            continue
        if all((kernel.instrs[j].op in OPS or kernel.instrs[j].op in ("astype", "rowreduce"))
               and (kernel.instrs[j].shape == shape or kernel.instrs[j].op == "rowreduce") for j in users.get(i, [])):
            out.append(i)
    return out


def render_rowfuse(kernel: Kernel, cap: int = 0) -> Rendered:
    """WGSL for a ``rowfuse`` kernel; one workgroup per row (``prm`` extra ROWS). With ``cap`` > 0
    (rows of at most ``cap`` elements) the first walk also copies ``row_inputs`` into shared
    memory, and later walks read them there instead of from global memory."""
    g = _Gen(kernel)
    src = kernel.instrs[kernel.operands[0]].args[0]      # an operand of the row shape S
    shape = kernel.instrs[src].shape
    nd = len(shape)
    rep = g.rep[src]
    body = ["  let row = wid.y * nwg.x + wid.x;",
            f"  if (row >= {g.slot(('extra', 'ROWS'))}) {{ return; }}",
            f"  let L = {g.slot(('dim', rep, nd - 1))};"]
    coords: list[str] = [""] * (nd - 1)
    rem = "row"
    for d in range(nd - 2, -1, -1):
        if d == 0:
            coords[d] = rem
        else:
            dim = g.slot(("dim", rep, d))
            body += [f"  let r{d} = {rem} % {dim};", f"  let rq{d} = {rem} / {dim};"]
            coords[d], rem = f"r{d}", f"rq{d}"
    at = ("multi", (*coords, "c"))
    decls: list[str] = []
    cached = row_inputs(kernel) if cap else []
    for i in cached:
        k = kernel.instrs[i].params[0]
        decls.append(f"var<workgroup> xc{k}: array<{WGSL_STORAGE_TYPE[kernel.instrs[i].dtype]}, {cap}>;")

    def walk(inner: list[str]) -> list[str]:
        return ["  var c = lid;", "  loop {", "    if (c >= L) { break; }", *inner,
                f"    c = c + {WORKGROUP}u;", "  }"]

    for j, q in enumerate(kernel.operands):
        ins = kernel.instrs[q]
        rop, dt = ins.params[0], ins.dtype
        at_t = acc_type(dt)
        g.memo, g.lines = {}, []
        load: list[str] = []
        for i in cached:
            k = kernel.instrs[i].params[0]
            if j == 0:           # the first walk reads the row from global memory and keeps it
                load += [f"    let xv{k} = in{k}[row * L + c];", f"    xc{k}[c] = xv{k};"]
                g.named[i] = f"xv{k}"
            else:
                g.named[i] = f"xc{k}[c]"
        v = g.value(ins.args[0], at)
        if dt.kind == "b":
            v = f"select(0u, 1u, {v})"
        inner = load + ["    " + ln.strip() for ln in g.lines] + [f"    acc{j} = {combine(rop, dt, f'acc{j}', v)};"]
        decls.append(f"var<workgroup> sh{j}: array<{at_t}, {WORKGROUP}>;")
        body += ["  {", f"  var acc{j}: {at_t} = {identity(rop, dt)};", *walk(inner),
                 f"  sh{j}[lid] = acc{j};", "  workgroupBarrier();",
                 f"  var s = {WORKGROUP // 2}u;", "  loop {", "    if (s == 0u) { break; }",
                 f"    if (lid < s) {{ sh{j}[lid] = {combine(rop, dt, f'sh{j}[lid]', f'sh{j}[lid + s]')}; }}",
                 "    workgroupBarrier();", "    s = s >> 1u;", "  }", "  }",
                 f"  let rv{j} = sh{j}[0];"]
        g.named[q] = f"(rv{j} != 0u)" if dt.kind == "b" else f"rv{j}"
    g.memo, g.lines = {}, []
    for i in cached:
        g.named[i] = f"xc{kernel.instrs[i].params[0]}[c]"
    per_row = kernel.out_shape != shape          # one value per row (logsumexp)
    if per_row:
        at = ("multi", (*coords, "0u")) if len(kernel.out_shape) == nd else ("multi", tuple(coords))
    vals = [g.value(o, at) for o in kernel.outputs]
    where = "row" if per_row else "row * L + c"
    stores = [f"    out{k}[{where}] = {store_value(kernel.instrs[o].dtype, v)};"
              for k, (o, v) in enumerate(zip(kernel.outputs, vals, strict=True))]
    lines = ["    " + ln.strip() for ln in g.lines] + stores
    body += ["  if (lid == 0u) {", *lines, "  }"] if per_row else walk(lines)
    out_types = [WGSL_STORAGE_TYPE[kernel.instrs[o].dtype] for o in kernel.outputs]
    decls = declare_bindings(input_types(kernel), out_types, g.wide) + decls
    main = "\n".join([f"@compute @workgroup_size({WORKGROUP})",
                      "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
                      "        @builtin(local_invocation_index) lid: u32) {", *body, "}"])
    source = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main + "\n"
    return Rendered(source, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs),
                    len(kernel.outputs))
