"""Render a column-fused ``rowfuse`` kernel (``compiler/colfuse.py``: reductions over the first axis).

The operand shape is ``S = (R, C...)``; columns are numbered ``0 .. C - 1`` in C order. A
workgroup takes a tile of ``W`` adjacent columns: thread ``lid`` takes column ``lid % W`` of the
tile and row slice ``s = lid / W`` (``256 / W`` slices), rows ``s, s + 256 / W, ...``, so the
threads of a warp read adjacent addresses. For each walk (``colfuse.levels``: ``mean``, then
``var`` about it) the threads walk their rows, ``U`` per trip (8, or 16 where few tiles run) with
one accumulator each (their loads in flight together, float32 sums in shorter chains),
evaluating the reductions' operands through the fused cone (column values that depend only on
earlier walks' results, ``mean = sum / n``, are computed once before the walk); then the slices'
results are combined through workgroup memory in a fixed order, so every thread of a column
holds the same column result in a register (``rv<j>``). A sum of squared deviations from a column
value, ``sum((a - m)**2)`` (``colfuse.moments``: ``var`` about the mean), is computed in the first walk:
each thread keeps the count, mean and M2 of ``a - k`` (``k`` the column's first value), merging each
trip's ``U`` values into them (Chan et al.), the slices are merged the same way, and
``M2 + n (mean - (m - k))**2`` gives the sum once ``m`` is known. Walks alternate direction, so that a
walk starts on the rows the previous one read last (still in cache). Outputs of shape ``S`` are
stored by a last walk; outputs of one value per column (``std(axis=0)``) by slice 0. ``prm``
extras: COLS (``C``).

>>> import numpy as np, gpuarray as xp
>>> from gpuarray.compiler.schedule import schedule
>>> x = xp.asarray(np.ones((64, 8), np.float32), device="wgpu:0")
>>> (k,) = schedule([xp.std(x, axis=0)._node])
>>> k.kind, k.attrs, "cf_col" in render_colfuse(k).source
('rowfuse', (0,), True)
"""

from __future__ import annotations

from collections.abc import Sequence

from ..compiler.colfuse import geometry, levels, moments
from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE
from .wgsl import WORKGROUP, Rendered, _Gen
from .wgsl_lib import helpers_for
from .wgsl_moments import slice_combine, welford
from .wgsl_parts import declare_bindings, input_types, split_index, store_value
from .wgsl_reduce import acc_type, combine, compute_main, identity


def render_colfuse(kernel: Kernel, variant: tuple[int, int] | None = None) -> Rendered:
    """WGSL for a column-fused kernel; ``variant`` = (columns per workgroup ``W``, rows per thread
    and trip), by default ``colfuse.geometry(kernel)[2:]``. One workgroup per tile of ``W`` columns
    (``prm`` extra COLS)."""
    w, unroll = variant if variant is not None else geometry(kernel)[2:]
    slices = WORKGROUP // w
    span = slices * unroll
    g = _Gen(kernel)
    src = kernel.instrs[kernel.operands[0]].args[0]
    shape = kernel.instrs[src].shape
    nd = len(shape)
    rep = g.rep[src]
    cols = g.slot(("extra", "COLS"))
    body = ["  let cf_tile = wid.y * nwg.x + wid.x;",
            f"  if (cf_tile * {w}u >= {cols}) {{ return; }}",
            f"  let cf_c = {cols};", f"  let cf_s = lid / {w}u;", f"  let cf_col = cf_tile * {w}u + lid % {w}u;",
            "  let cf_cc = min(cf_col, cf_c - 1u);",        # columns past the end read the last one
            f"  let cf_R = {g.slot(('dim', rep, 0))};",
            f"  let cf_T = (cf_R + {span - 1}u) / {span}u;", f"  let cf_TF = cf_R / {span}u;"]
    lines, coords = split_index(g, rep, 1, nd, "cf_cc", "cf_k", "cf_q")
    body += ["  " + ln for ln in lines]
    at = ("multi", ("cf_r", *coords[1:]))

    def walk(inner: list[str], reverse: bool,
             full: tuple[Sequence[str], Sequence[str]] = ((), ()), checked: Sequence[str] = ()) -> list[str]:
        """Trips over this thread's rows (``cf_r``), ``unroll`` rows each; ``inner`` uses ``{u}``
        for the row's accumulator; ``full`` = (lines per row, lines after the rows) of
        trips whose rows all exist, ``checked`` lines per existing row of the last trip."""
        def rows(check: bool) -> list[str]:
            out: list[str] = []
            for u in range(unroll):
                lines = [ln.replace("{u}", str(u)) for ln in [*inner, *(checked if check else full[0])]]
                row = [f"      let cf_r = cf_rb + {u * slices}u;"]
                out += ["      {", *row, *(["      if (cf_r < cf_R) {"] if check else []), *lines,
                        *(["      }"] if check else []), "      }"]
            return out
        trip = "cf_T - 1u - cf_t" if reverse else "cf_t"
        return ["  for (var cf_t = 0u; cf_t < cf_T; cf_t = cf_t + 1u) {", f"    let cf_tt = {trip};",
                f"    let cf_rb = cf_tt * {span}u + cf_s;",
                "    if (cf_tt < cf_TF) {", *rows(False), *full[1], "    } else {", *rows(True), "    }", "  }"]

    col_shapes = {shape[1:], (1,) + shape[1:]} - {shape}

    def hoist(roots: list[int]) -> list[str]:
        """Evaluate once per thread, before a walk, the values of one column that ``roots`` read and
        that depend on nothing but column results and constants (``mean = sum / n``, ``sqrt(var)``):
        lines at function scope, and the values named in ``g``."""
        ok: dict[int, bool] = {}
        for i, ins in enumerate(kernel.instrs):
            ok[i] = i in g.named or (ins.op != "input" and ins.shape in col_shapes and ins.op != "rowreduce"
                                     and bool(ins.args) and all(ok[a] or kernel.instrs[a].op == "const"
                                                                for a in ins.args))
        front: list[int] = []
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            i = stack.pop()
            if i in seen or i in g.named:
                continue
            seen.add(i)
            if ok[i]:
                front.append(i)
            else:
                stack.extend(kernel.instrs[i].args)
        g.memo, g.lines = {}, []
        for i in sorted(front):
            rank = len(kernel.instrs[i].shape)
            g.named[i] = g.value(i, ("multi", tuple(coords[1:]) if rank == nd - 1 else ("0u", *coords[1:])))
        return list(g.lines)

    decls: list[str] = []
    walks = 0
    merged = moments(kernel)
    for level in levels(kernel):
        plain = [j for j in level if j not in merged]
        moms = [j for j in level if j in merged]
        body += hoist([kernel.instrs[kernel.operands[j]].args[0] for j in plain] + [merged[j][0] for j in moms])
        g.memo, g.lines = {}, []
        adds: list[str] = []
        for j in plain:
            ins = kernel.instrs[kernel.operands[j]]
            v = g.value(ins.args[0], at)
            if ins.dtype.kind == "b":
                v = f"select(0u, 1u, {v})"
            adds.append(f"        acc{j}_{{u}} = {combine(ins.params[0], ins.dtype, f'acc{j}_{{u}}', v)};")
        mvals = {j: f"({g.value(merged[j][0], at)} - cw_k{j})" for j in moms}
        inner = ["        " + ln.strip() for ln in g.lines] + adds
        if moms:        # the moments' values shifted by the column's first: no error from a large mean
            g.memo, g.lines = {}, []
            first = {j: g.value(merged[j][0], at) for j in moms}
            body += [f"  var cw_k{j}: {acc_type(kernel.instrs[kernel.operands[j]].dtype)};" for j in moms]
            body += ["  {", "  let cf_r = 0u;", *g.lines, *[f"  cw_k{j} = {first[j]};" for j in moms], "  }"]
        head: list[str] = []
        tail: list[str] = []
        full: tuple[list[str], list[str]] = ([], [])
        checked: list[str] = []
        for j in moms:
            t = acc_type(kernel.instrs[kernel.operands[j]].dtype)
            h, f, c, tl, decl = welford(j, t, kernel.instrs[kernel.operands[j]].dtype, mvals[j], unroll)
            head += h
            full[0].extend(f[0])
            full[1].extend(f[1])
            checked += c
            tail += tl
            decls += decl
        for j in plain:
            ins = kernel.instrs[kernel.operands[j]]
            rop, dt, at_t = ins.params[0], ins.dtype, acc_type(ins.dtype)
            decls.append(f"var<workgroup> sh{j}: array<{at_t}, {WORKGROUP}>;")
            head += [f"  var rv{j}: {at_t};"] + [f"  var acc{j}_{u}: {at_t} = {identity(rop, dt)};"
                                                 for u in range(unroll)]
            part = f"acc{j}_0"
            for u in range(1, unroll):
                part = combine(rop, dt, part, f"acc{j}_{u}")
            tail += [f"  sh{j}[lid] = {part};"]
        tail.append("  workgroupBarrier();")
        for j in plain:
            ins = kernel.instrs[kernel.operands[j]]
            rop, dt = ins.params[0], ins.dtype
            tail += [f"  rv{j} = sh{j}[lid % {w}u];",
                     f"  for (var cf_q = 1u; cf_q < {slices}u; cf_q = cf_q + 1u) {{",
                     f"    rv{j} = {combine(rop, dt, f'rv{j}', f'sh{j}[lid % {w}u + cf_q * {w}u]')};", "  }"]
            q = kernel.operands[j]
            g.named[q] = f"(rv{j} != 0u)" if dt.kind == "b" else f"rv{j}"
        for j in moms:      # the column's n, mean and M2 combined over the slices, in slice order
            tail += slice_combine(j, kernel.instrs[kernel.operands[j]].dtype, w, slices)
        body += head + walk(inner, walks % 2 == 1, full, checked) + tail
        if moms:            # sum((a - m)**2) = M2 + n (mean - m)**2 (all shifted by k), m from this walk's results
            body += hoist([merged[j][1] for j in moms])
            for j in moms:
                m = g.named[merged[j][1]]
                d = f"(cw_m{j} - ({m} - cw_k{j}))"
                body.append(f"  rv{j} = cw_q{j} + cw_n{j} * ({d} * {d});")
                g.named[kernel.operands[j]] = f"rv{j}"
        walks += 1
    outs = kernel.outputs
    if kernel.out_shape == shape:
        body += hoist(list(outs))
    g.memo, g.lines = {}, []
    if kernel.out_shape == shape:
        vals = [g.value(o, at) for o in outs]
        stores = [f"        out{n}[cf_r * cf_c + cf_col] = {store_value(kernel.instrs[o].dtype, v)};"
                  for n, (o, v) in enumerate(zip(outs, vals, strict=True))]
        inner = ["        " + ln.strip() for ln in g.lines] + ["        if (cf_col < cf_c) {", *stores, "        }"]
        body += walk(inner, walks % 2 == 1)
    else:               # one value per column (std(axis=0)): slice 0 stores it
        pat = ("multi", ("0u", *coords[1:])) if len(kernel.out_shape) == nd else ("multi", tuple(coords[1:]))
        vals = [g.value(o, pat) for o in outs]
        stores = [f"    out{n}[cf_col] = {store_value(kernel.instrs[o].dtype, v)};"
                  for n, (o, v) in enumerate(zip(outs, vals, strict=True))]
        body += ["  if (cf_s == 0u && cf_col < cf_c) {", *g.lines, *stores, "  }"]
    out_types = [WGSL_STORAGE_TYPE[kernel.instrs[o].dtype] for o in outs]
    decls = declare_bindings(input_types(kernel), out_types, g.wide) + decls
    main = compute_main(False, body)
    source = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main + "\n"
    return Rendered(source, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs), len(outs))
