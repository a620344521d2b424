"""The pieces of WGSL that every kernel kind's renderer shares: binding declarations, input and
output types, the multi-index walk of a reduction, epilogues and stores.

>>> declare_bindings(["f32"], ["f32"], {})[1]
'@group(0) @binding(1) var<storage, read> in0: array<f32>;'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE
from ..core.ops import OPS

if TYPE_CHECKING:
    from .wgsl import _Gen

_WIDE = {"f64": "cf64", "i64": "ci64", "u64": "cu64"}
Idx = tuple  # ("lin", expr) | ("multi", (expr, ...))


def declare_bindings(in_types: list[str], out_types: list[str], wide: dict[str, list[int]]) -> list[str]:
    """Binding declarations every kernel kind uses: 0 is ``prm``, then inputs ``in<k>``,
    outputs ``out<j>`` and the arrays of 64-bit scalars (``cf64``, ...)."""
    decls = ["@group(0) @binding(0) var<storage, read> prm: array<u32>;"]
    b = 1
    for k, st in enumerate(in_types):
        decls.append(f"@group(0) @binding({b}) var<storage, read> in{k}: array<{st}>;")
        b += 1
    for j, st in enumerate(out_types):
        decls.append(f"@group(0) @binding({b}) var<storage, read_write> out{j}: array<{st}>;")
        b += 1
    for st in sorted(wide):
        decls.append(f"@group(0) @binding({b}) var<storage, read> {_WIDE[st]}: array<{st}>;")
        b += 1
    return decls


def input_types(kernel: Kernel) -> list[str]:
    return [WGSL_STORAGE_TYPE[node.dtype] for node in kernel.inputs]


def reduction_index(g: _Gen, op_i: int, axes: tuple[int, ...], k: str = "k",
                    sfx: str = "") -> tuple[list[str], list[str], str]:
    """Index code for reducing operand ``op_i`` over ``axes``: (head lines that split the output
    index ``m`` over the kept axes, loop-body lines that split the reduce index ``k`` (< the
    product of the reduced dimensions, so the outermost reduced coordinate needs no ``%``: one
    reduced axis costs no division) and evaluate the fused prologue there, the WGSL name of the
    value). ``sfx`` names a second copy of the body (unrolled loops). Resets ``g.lines``."""
    src = g.ins[op_i]
    rep = g.rep[op_i]
    kept = [d for d in range(len(src.shape)) if d not in axes]
    red = [d for d in range(len(src.shape)) if d in axes]
    head: list[str] = []
    full: dict[int, str] = {}
    rem = "m"
    for d in reversed(kept):
        dim = g.slot(("dim", rep, d))
        head.append(f"  let o{d} = {rem} % {dim};")
        head.append(f"  let oq{d} = {rem} / {dim};")
        full[d], rem = f"o{d}", f"oq{d}"
    g.lines = []
    body = [f"    var kr{sfx} = {k};"]
    for d in reversed(red):
        if d == red[0]:
            body.append(f"    let r{d}{sfx} = kr{sfx};")
        else:
            dim = g.slot(("dim", rep, d))
            body.append(f"    let r{d}{sfx} = kr{sfx} % {dim};")
            body.append(f"    kr{sfx} = kr{sfx} / {dim};")
        full[d] = f"r{d}{sfx}"
    v = g.value(op_i, ("multi", tuple(full[d] for d in range(len(src.shape)))))
    return head, body + g.lines, v


def output_types(kernel: Kernel) -> list[str]:
    """Storage types of a breaker kernel's outputs: its epilogue's, else the breaker's own."""
    if kernel.result_index is None:
        return [WGSL_STORAGE_TYPE[kernel.result_dtype]]
    return [WGSL_STORAGE_TYPE[kernel.instrs[o].dtype] for o in kernel.outputs]


def _result_shaped(kernel: Kernel) -> bool:
    """Whether every epilogue instruction is elementwise (or a cast) at the ``result``'s shape,
    its operands broadcast to it: then each can be read at the result's multi-index (true for
    every kernel of this signature). Views and reshapes need the linear index."""
    r = kernel.result_index
    assert r is not None
    shape = kernel.instrs[r].shape
    for x in kernel.instrs[r + 1:]:
        if x.op in ("input", "const"):
            continue
        if not (x.op in OPS or x.op == "astype") or x.shape != shape:
            return False
    return True


def epilogue_values(g: _Gen, result: str, at: str, multi: tuple[str, ...] | None = None) -> tuple[list[str], list[str]]:
    """A fused epilogue evaluated for the output element at linear index ``at`` (a WGSL name), the
    breaker's value there being ``result`` (a WGSL expression of its register type; bools as
    ``bool``), like an elementwise kernel's instructions (``multi``: the element's multi-index in
    the ``result``'s shape, used when the outputs have that shape): (lines, unindented; one value
    per output)."""
    saved = g.lines, g.memo, g.result
    g.lines, g.memo, g.result = [], {}, result       # values emitted elsewhere are out of scope here
    try:
        idx: Idx = ("multi", multi) if multi is not None and _result_shaped(g.k) else ("lin", at)
        vals = [g.value(o, idx) for o in g.k.outputs]
        return [ln.strip() for ln in g.lines], vals
    finally:
        g.lines, g.memo, g.result = saved


def epilogue_stores(g: _Gen, result: str, at: str, multi: tuple[str, ...] | None = None) -> list[str]:
    """``epilogue_values`` and the stores of its values to ``out<j>[at]``; without an epilogue,
    ``result`` stored to ``out0[at]``."""
    k = g.k
    if k.result_index is None:
        return [f"out0[{at}] = {store_value(k.result_dtype, result)};"]
    lines, vals = epilogue_values(g, result, at, multi)
    return lines + [f"out{j}[{at}] = {store_value(k.instrs[o].dtype, v)};"
                    for j, (o, v) in enumerate(zip(k.outputs, vals, strict=True))]


def store_value(dt: np.dtype, v: str) -> str:
    """WGSL value ``v`` of ``dt`` as it is stored (bools as u32 0/1)."""
    return f"select(0u, 1u, {v})" if dt == np.bool_ else v


def split_index(g: _Gen, rep: int, lo: int, hi: int, rem: str, name: str, quot: str) -> tuple[list[str], list[str]]:
    """Lines splitting the flat index ``rem`` into dimensions ``lo .. hi - 1`` of instruction ``rep``'s
    shape (row-major; dimension ``lo`` takes the last quotient, so it needs no ``%``), and the names
    of those coordinates (``hi`` entries, empty below ``lo``): ``<name><d>``, quotients ``<quot><d>``.

    >>> class G:
    ...     def slot(self, key): return f"prm[{key[2]}]"
    >>> lines, names = split_index(G(), 0, 0, 3, "row", "r", "rq")
    >>> lines[:2], names
    (['let r2 = row % prm[2];', 'let rq2 = row / prm[2];'], ['rq1', 'r1', 'r2'])
    """
    names = [""] * hi
    lines: list[str] = []
    for d in range(hi - 1, lo - 1, -1):
        if d == lo:
            names[d] = rem
        else:
            dim = g.slot(("dim", rep, d))
            lines += [f"let {name}{d} = {rem} % {dim};", f"let {quot}{d} = {rem} / {dim};"]
            names[d], rem = f"{name}{d}", f"{quot}{d}"
    return lines, names
