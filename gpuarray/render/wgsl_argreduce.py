"""Render an argmax / argmin kernel as WGSL.

Like the reduction (``wgsl_reduce``): one workgroup of 256 threads per
output, or per chunk ``w % G`` of output ``w / G``. Each thread keeps a
(value, index) pair while it strides over its elements, evaluating the fused
prologue at each index; the workgroup then combines pairs in shared memory.
The index is the position in C order over the reduced axes (the flat index
for ``axis=None``).

``arg_better`` decides whether pair b replaces pair a: NaN beats every
number, a larger (argmax) / smaller (argmin) value wins, and ties go to the
smaller index, so the first occurrence (and the first NaN) wins as in NumPy,
whatever order the pairs meet in. An empty pair has the index 0xffffffff.

The kernel's ``attrs`` are ``(op, axes[, mode])``:

- ``final``   (default) the prologue feeds the pairs, ``out0`` gets the index;
- ``partial`` the prologue feeds the pairs, ``out0``/``out1`` get value and index per chunk;
- ``pairs``   the inputs are those (value, index) partials, laid out (M, G); ``out0`` gets the index;
- ``thread``  one thread per output walks its ``L`` elements (many short rows: ``argmin(d, axis=1)``
  of 2^20 x 64 took 2.9 ms of H200 time with a workgroup per row, three quarters of it idle);
- ``cols_partial`` / ``cols_final``  over leading axes (``argmax(x, axis=0)``): thread ``w`` takes output
  ``w % M`` and chunk ``w / M`` of ``G`` (consecutive threads read consecutive columns), writing a pair per
  chunk for the ``pairs`` pass, or, with one chunk, the index.
"""

from __future__ import annotations

import os

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE, WGSL_TYPE
from .wgsl import WORKGROUP, Rendered, _Gen, _suffix
from .wgsl_lib import helpers_for
from .wgsl_parts import declare_bindings, input_types, reduction_index

EMPTY = "0xffffffffu"
# elements a chunk thread loads before comparing them (``_unrolled_walk``); 0: one at a time, as before
UNROLL = int(os.environ.get("GPUARRAY_ARGREDUCE_UNROLL", "4"))


def val_type(dtype: np.dtype) -> str:
    return "u32" if dtype == np.bool_ else WGSL_TYPE[dtype]


def better_fn(op: str, dtype: np.dtype) -> str:
    t = val_type(dtype)
    cmp = ">" if op == "max" else "<"
    lines = [f"fn arg_better(av: {t}, ai: u32, bv: {t}, bi: u32) -> bool {{",
             f"  if (bi == {EMPTY}) {{ return false; }}",
             f"  if (ai == {EMPTY}) {{ return true; }}"]
    if dtype.kind == "f":
        s = _suffix(dtype)
        lines += [f"  let an = ga_isnan_{s}(av);",
                  f"  let bn = ga_isnan_{s}(bv);",
                  "  if (an || bn) { return bn && (!an || bi < ai); }"]
    lines += [f"  return bv {cmp} av || (bv == av && bi < ai);", "}"]
    return "\n".join(lines)


def _unrolled_walk(g: _Gen, op_i: int, axes: tuple[int, ...], op: str, vdt: np.dtype) -> list[str]:
    """A chunk thread's loop body for ``UNROLL`` of its elements, ``k``, ``k + step``, ...: every value is
    loaded (and its prologue evaluated) before any is compared, so that the loads are in flight together,
    and indices past ``L`` read element ``L - 1`` and are not taken. A thread walks its elements in
    increasing order, so a later one replaces the pair only when strictly better (or the first NaN),
    without ``arg_better``'s index test (H200, argmax of 2^28 float32: the loop of one load and one
    compare at a time read 1.2 TB/s)."""
    cmp = ">" if op == "max" else "<"
    s = _suffix(vdt) if vdt.kind == "f" else ""
    step = f"G * {WORKGROUP}u"
    lines: list[str] = []
    vals: list[str] = []
    for j in range(UNROLL):
        lines += [f"    let ka{j} = k + {j}u * {step};",
                  f"    let ok{j} = ka{j} < L && ka{j} >= k;",
                  f"    let kq{j} = select(L - 1u, ka{j}, ok{j});"]
        _head, body, v = reduction_index(g, op_i, axes, k=f"kq{j}", sfx=f"_{j}")
        lines += body
        vals.append(f"select(0u, 1u, {v})" if vdt == np.bool_ else v)
    for j, v in enumerate(vals):
        nan = f" || (ga_isnan_{s}(vv{j}) && !ga_isnan_{s}(bv))" if s else ""
        lines += [f"    let vv{j} = {v};",
                  f"    let bt{j} = ok{j} && (bi == {EMPTY} || vv{j} {cmp} bv{nan});",
                  f"    bv = select(bv, vv{j}, bt{j});",
                  f"    bi = select(bi, kq{j}, bt{j});"]
    return lines


def render_argreduce(kernel: Kernel) -> Rendered:
    """WGSL for an ``argreduce`` kernel; ``prm`` extras: G (chunks), MG (outputs x G), L (reduced length)."""
    op, axes = kernel.attrs[:2]
    mode = kernel.attrs[2] if len(kernel.attrs) > 2 else "final"
    out_dt = kernel.out_nodes[0].dtype
    g = _Gen(kernel)
    thread = mode == "thread"
    cols = mode.startswith("cols")
    wg = "(wid.y * nwg.x + wid.x)"
    head = [f"  let w = {wg} * {WORKGROUP}u + lid;" if thread or cols else f"  let w = {wg};",
            f"  let G = {g.slot(('extra', 'G'))};",
            f"  let MG = {g.slot(('extra', 'MG'))};",
            "  if (w >= MG) { return; }",
            *(["  let m = w % (MG / G);", "  let chunk = w / (MG / G);"] if cols else
              ["  let m = w / G;", "  let chunk = w % G;"]),
            f"  let L = {g.slot(('extra', 'L'))};"]
    unrolled: list[str] = []
    if mode == "pairs":
        vdt = kernel.instrs[0].dtype
        body = ["    let v = in0[m * L + k];", "    let i = in1[m * L + k];"]
    else:
        op_i = kernel.operands[0]
        vdt = kernel.instrs[op_i].dtype
        split, body, v = reduction_index(g, op_i, axes)
        head += split
        body.append(f"    let v = {'select(0u, 1u, ' + v + ')' if vdt == np.bool_ else v};")
        body.append("    let i = k;")
        if not thread and not cols and UNROLL > 1:      # the body first: it declares the values it memoized
            unrolled = body + _unrolled_walk(g, op_i, axes, op, vdt)
    t = val_type(vdt)
    in_types = [WGSL_STORAGE_TYPE[vdt], "u32"] if mode == "pairs" else input_types(kernel)
    if mode in ("partial", "cols_partial"):
        decls = declare_bindings(in_types, [WGSL_STORAGE_TYPE[vdt], "u32"], g.wide)
        store = ["  if (lid == 0u) { out0[w] = shv[0]; out1[w] = shi[0]; }"]
    else:
        decls = declare_bindings(in_types, [WGSL_STORAGE_TYPE[out_dt]], g.wide)
        store = [f"  if (lid == 0u) {{ out0[w] = {WGSL_TYPE[out_dt]}(shi[0]); }}"]
    decls.append(f"var<workgroup> shv: array<{t}, {WORKGROUP}>;")
    decls.append(f"var<workgroup> shi: array<u32, {WORKGROUP}>;")
    if mode == "pairs":
        start, step = "lid", f"{WORKGROUP}u"     # G is 1: one workgroup reads the L pairs of output m
    elif thread:
        start, step = "0u", "1u"                 # G is 1: this thread reads the L elements of output m
    elif cols:
        start, step = "chunk * ((L + G - 1u) / G)", "1u"      # chunk ``chunk`` of output m's elements
        head.append("  let kend = min(L, (chunk + 1u) * ((L + G - 1u) / G));")
    else:
        start, step = f"chunk * {WORKGROUP}u + lid", f"G * {WORKGROUP}u"
    walk = [*head,
            f"  var bv: {t} = {t}(0);",
            f"  var bi: u32 = {EMPTY};",
            f"  var k = {start};",
            "  loop {",
            f"    if (k >= {'kend' if cols else 'L'}) {{ break; }}",
            *(unrolled or [*body, "    if (arg_better(bv, bi, v, i)) { bv = v; bi = i; }"]),
            f"    k = k + {UNROLL if unrolled else 1}u * {step};",
            "  }"]
    entry = [f"@compute @workgroup_size({WORKGROUP})",
             "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
             "        @builtin(local_invocation_index) lid: u32) {"]
    if thread or mode == "cols_final":
        main = "\n".join([*entry, *walk, f"  out0[w] = {WGSL_TYPE[out_dt]}(bi);", "}"])
        decls = decls[:-2]
    elif cols:
        main = "\n".join([*entry, *walk, "  out0[m * G + chunk] = bv;", "  out1[m * G + chunk] = bi;", "}"])
        decls = decls[:-2]
    else:
        main = "\n".join([
            *entry,
            *walk,
            "  shv[lid] = bv;",
            "  shi[lid] = bi;",
            "  workgroupBarrier();",
            f"  var s = {WORKGROUP // 2}u;",
            "  loop {",
            "    if (s == 0u) { break; }",
            "    if (lid < s && arg_better(shv[lid], shi[lid], shv[lid + s], shi[lid + s])) {",
            "      shv[lid] = shv[lid + s];",
            "      shi[lid] = shi[lid + s];",
            "    }",
            "    workgroupBarrier();",
            "    s = s >> 1u;",
            "  }",
            *store,
            "}",
        ])
    fn = better_fn(op, vdt)
    source = "\n".join(decls) + "\n\n" + helpers_for(fn + "\n" + main) + "\n\n" + fn + "\n\n" + main + "\n"
    return Rendered(source, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs),
                    2 if mode in ("partial", "cols_partial") else 1)
