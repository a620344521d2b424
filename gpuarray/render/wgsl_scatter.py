"""Render the two passes of a ``scatter`` kernel as WGSL.

A ``scatter`` kernel has operands (old, idx, value) and attrs ``(axis,)``:
the result is ``old`` with ``out[..., idx[j], ...] = value[..., j, ...]``
along ``axis``. The provider runs two shaders in one compute pass:

- ``copy``: one thread per output element writes ``old`` (its fused prologue);
- ``scatter``: one thread per element of ``value`` evaluates the prologues of
  ``value`` and ``idx`` there and writes one output element.

Negative indices count from the end and indices are clamped to the axis, as
for ``gather``. With repeated indices the writes race: one of them wins.
Each shader declares only the inputs it reads (``used_inputs``), because
wgpu drops unused bindings from an automatic bind-group layout.
"""

from __future__ import annotations

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE
from .wgsl import Rendered, _Gen, thread_main
from .wgsl_index import clamp_index
from .wgsl_lib import helpers_for
from .wgsl_parts import store_value


def used_inputs(kernel: Kernel, roots: list[int]) -> list[int]:
    """Indices into ``kernel.inputs`` that the cones of instructions ``roots`` read."""
    seen: set[int] = set()
    stack = list(roots)
    used: set[int] = set()
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        ins = kernel.instrs[i]
        if ins.op == "input":
            used.add(ins.params[0])
        stack.extend(ins.args)
    return sorted(used)


def pass_roots(kernel: Kernel) -> list[int]:
    old_i, idx_i, val_i = kernel.operands
    return [old_i] if kernel.attrs[1:] == ("copy",) else [idx_i, val_i]


def render_scatter(kernel: Kernel) -> Rendered:
    """WGSL for one pass (attrs ``(axis,)``: scatter; ``(axis, "copy")``: copy); ``prm`` extra N."""
    axis = kernel.attrs[0]
    old_i, idx_i, val_i = kernel.operands
    dt = kernel.out_nodes[0].dtype
    g = _Gen(kernel)
    n = g.slot(("extra", "N"))
    if kernel.attrs[1:] == ("copy",):
        v = g.value(old_i, ("lin", "gi"))
        lin = "gi"
    else:
        val = kernel.instrs[val_i]
        k = len(kernel.instrs[idx_i].shape)
        nd = len(val.shape)
        m = [""] * nd
        rem = "gi"
        for d in range(nd - 1, 0, -1):
            dim = g.slot(("dim", g.rep[val_i], d))
            m[d] = g.emit(f"{rem} % {dim}", "m")
            rem = g.emit(f"{rem} / {dim}", "q")
        if nd:
            m[0] = rem
        v = g.value(val_i, ("multi", tuple(m)))
        iv = g.value(idx_i, ("multi", tuple(m[axis:axis + k])))
        c = clamp_index(g, iv, kernel.instrs[idx_i].dtype, g.slot(("dim", g.rep[old_i], axis)))
        target = m[:axis] + [c] + m[axis + k:]
        terms = [f"{t} * {g.slot(('cstride', g.rep[old_i], d))}" for d, t in enumerate(target)]
        lin = g.emit(" + ".join(terms) if terms else "0u", "l")
    store = store_value(dt, v)
    decls = ["@group(0) @binding(0) var<storage, read> prm: array<u32>;"]
    b = 1
    for j in used_inputs(kernel, pass_roots(kernel)):
        st = WGSL_STORAGE_TYPE[kernel.inputs[j].dtype]
        decls.append(f"@group(0) @binding({b}) var<storage, read> in{j}: array<{st}>;")
        b += 1
    decls.append(f"@group(0) @binding({b}) var<storage, read_write> out0: array<{WGSL_STORAGE_TYPE[dt]}>;")
    b += 1
    for st in sorted(g.wide):
        decls.append(f"@group(0) @binding({b}) var<storage, read> c{st}: array<{st}>;")
        b += 1
    main = thread_main([*g.lines, f"  out0[{lin}] = {store};"], n)
    src = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main
    return Rendered(src, sorted(g.slots, key=lambda s: g.slots[s]), g.wide, len(kernel.inputs), 1)
