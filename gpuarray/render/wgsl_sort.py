"""Render ``sort`` / ``argsort`` and ``searchsorted`` kernels as WGSL.

Keys are unsigned integers whose order is NumPy's (``sort_key``): NaN after
+inf, ``-0.0`` equal to ``0.0``; a descending sort inverts the key, so NaN comes
first, as in ``flip(sort(x))``. Rows longer than one workgroup block are
sorted by the LSD radix sort of ``wgsl_radix`` (same keys, stable); the
bitonic network here sorts the short rows in one dispatch, and long rows only
on adapters whose workgroup memory is too small for the radix sort's tiles.

The bitonic network sorts (key, original position) pairs. The position makes
every pair distinct, so the sort is stable in both directions. Each row of the
sorted axis is padded to a power of two ``P`` with sentinel pairs (all-ones
key, position ``0xffffffff``) that sort after every real pair.

- ``render_block``: one workgroup loads a block of ``B`` slots into
  workgroup memory (from the fused prologue or from scratch), runs the
  bitonic stages ``k0..k1`` (substeps of distance below ``B`` only), and
  stores the block (to scratch, or as the final result). Rows with
  ``P <= B`` are sorted by one dispatch of it.
- ``render_global``: one substep of distance ``j >= B`` over the scratch
  arrays; longer rows alternate these passes with ``render_block``.
- ``render_searchsorted``: a binary search per element of ``x2`` with the
  same keys.

Slot ``s`` of the scratch arrays is element ``s % P`` of row ``s / P``; row
``r`` is ``x[o, :, i]`` with ``r = o * I + i``, so no transpose is needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE, WGSL_TYPE
from .wgsl import _WIDE, WORKGROUP, Rendered, _Gen, _suffix
from .wgsl_lib import helpers_for
from .wgsl_parts import store_value

_SIGN = {"u32": "0x80000000u", "u64": "0x8000000000000000lu"}


def key_type(dtype: np.dtype) -> str:
    """``u64`` for 64-bit dtypes, else ``u32``."""
    return "u64" if dtype.itemsize == 8 else "u32"


def key_bytes(dtype: np.dtype) -> int:
    return 8 if key_type(dtype) == "u64" else 4


def sort_key(dtype: np.dtype, descending: bool = False) -> str:
    """WGSL ``fn sk_key(v) -> K``: an unsigned key in NumPy's sort order (inverted if descending)."""
    k = key_type(dtype)
    sign = _SIGN[k]
    if dtype == np.bool_:
        t, body = "bool", "  let r = select(0u, 1u, v);"
    elif dtype.kind == "u":
        t, body = WGSL_TYPE[dtype], "  let r = v;"
    elif dtype.kind == "i":
        t, body = WGSL_TYPE[dtype], f"  let r = bitcast<{k}>(v) ^ {sign};"
    else:
        t = WGSL_TYPE[dtype]
        body = "\n".join([
            f"  var r = ~{k}(0);",
            f"  if (!ga_isnan_{_suffix(dtype)}(v)) {{",
            f"    var b = bitcast<{k}>(v);",
            f"    if (b == {sign}) {{ b = {k}(0); }}",           # -0.0 sorts as 0.0
            f"    r = select(b | {sign}, ~b, (b & {sign}) != {k}(0));",
            "  }",
        ])
    ret = "~r" if descending else "r"
    return f"fn sk_key(v: {t}) -> {k} {{\n{body}\n  return {ret};\n}}"


def _load_fn(g: _Gen, instr: int, name: str) -> str:
    """``fn name(li: u32) -> T``: the fused prologue of instruction ``instr`` at linear index ``li``."""
    g.lines = []
    g.memo = {}
    v = g.value(instr, ("lin", "li"))
    dt = g.ins[instr].dtype
    t = "bool" if dt == np.bool_ else WGSL_TYPE[dt]
    return "\n".join([f"fn {name}(li: u32) -> {t} {{", *g.lines, f"  return {v};", "}"])


def storage_decls(kernel: Kernel, g: _Gen, roles: tuple[str, ...], types: dict[str, str],
                  writes: frozenset[str] | None = None, inputs: list[int] | None = None) -> list[str]:
    """Bindings after ``prm`` in ``roles`` order: the kernel's inputs (``inputs``: those numbered in
    ``inputs``, all when None), its 64-bit constants (``wide``), and named arrays of ``types[role]``
    (``out`` is ``out0``), read-write where in ``writes`` (all of them when None). Shared by the
    sort, radix, compaction and scatter-add shaders."""
    decls = ["@group(0) @binding(0) var<storage, read> prm: array<u32>;"]
    b = 1
    for role in roles:
        if role == "inputs":
            for k in range(len(kernel.inputs)) if inputs is None else inputs:
                decls.append(f"@group(0) @binding({b}) var<storage, read> in{k}: "
                             f"array<{WGSL_STORAGE_TYPE[kernel.inputs[k].dtype]}>;")
                b += 1
        elif role == "wide":
            for st in sorted(g.wide):
                decls.append(f"@group(0) @binding({b}) var<storage, read> {_WIDE[st]}: array<{st}>;")
                b += 1
        else:
            name = "out0" if role == "out" else role
            mode = "read_write" if writes is None or role in writes else "read"
            decls.append(f"@group(0) @binding({b}) var<storage, {mode}> {name}: array<{types[role]}>;")
            b += 1
    return decls


def _decls(kernel: Kernel, g: _Gen, roles: tuple[str, ...], key: str, out_dtype: np.dtype) -> list[str]:
    return storage_decls(kernel, g, roles, {"sk": key, "si": "u32", "out": WGSL_STORAGE_TYPE[out_dtype]})


@dataclass
class Shader:
    """A rendered shader and the order of its bindings after ``prm``.

    ``roles`` items: ``inputs`` (the kernel's input buffers), ``sk`` / ``si``
    (scratch keys / positions), ``out`` (the result), ``wide`` (64-bit constants).
    """

    rendered: Rendered
    roles: tuple[str, ...]


def render_block(kernel: Kernel, src: str, dst: str, block: int) -> Shader:
    """Bitonic stages ``k0..k1`` over blocks of ``block`` slots held in workgroup memory.

    ``src``: ``prologue`` or ``scratch``; ``dst``: ``scratch`` or ``final``. ``prm`` extras:
    T (slots: rows * P), P, L (row length), I (inner size), K0, K1 (first and last stage).
    """
    _axis, descending = kernel.attrs
    op_i = kernel.operands[0]
    dt = kernel.instrs[op_i].dtype
    out_dt = kernel.out_nodes[0].dtype
    k = key_type(dt)
    g = _Gen(kernel)
    uses_prologue = src == "prologue" or (dst == "final" and kernel.kind == "sort")
    fns = [sort_key(dt, descending)]
    if uses_prologue:
        fns.append(_load_fn(g, op_i, "sk_load"))
    ex = {name: g.slot(("extra", name)) for name in ("T", "P", "L", "I", "K0", "K1")}
    half = block // 2
    if src == "prologue":
        load = [
            "      let pos = s & (P - 1u);",
            "      if (pos < L) {",
            "        let row = s / P;",
            "        key = sk_key(sk_load(((row / I) * L + pos) * I + row % I));",
            "        ix = pos;",
            "      }",
        ]
    else:
        load = ["      key = sk[s];", "      ix = si[s];"]
    if dst == "scratch":
        store = ["    if (s < T) { sk[s] = wk[t]; si[s] = wi[t]; }"]
    else:
        if kernel.kind == "argsort":
            val = f"{WGSL_TYPE[out_dt]}(wi[t])"
        else:
            val = store_value(out_dt, "sk_load((o * L + wi[t]) * I + i)")
        store = [
            "    let pos = s & (P - 1u);",
            "    if (s < T && pos < L) {",
            "      let row = s / P;",
            "      let o = row / I;",
            "      let i = row % I;",
            f"      out0[(o * L + pos) * I + i] = {val};",
            "    }",
        ]
    main = "\n".join([
        f"var<workgroup> wk: array<{k}, {block}>;",
        f"var<workgroup> wi: array<u32, {block}>;",
        "",
        f"fn sk_less(ka: {k}, ia: u32, kb: {k}, ib: u32) -> bool {{ return ka < kb || (ka == kb && ia < ib); }}",
        "",
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        *(f"  let {name} = {slot};" for name, slot in ex.items()),
        f"  let base = (wid.y * nwg.x + wid.x) * {block}u;",
        "  if (base >= T) { return; }",
        f"  for (var t = lid; t < {block}u; t = t + {WORKGROUP}u) {{",
        "    let s = base + t;",
        f"    var key = ~{k}(0);",
        "    var ix = 0xffffffffu;",
        "    if (s < T) {",
        *load,
        "    }",
        "    wk[t] = key;",
        "    wi[t] = ix;",
        "  }",
        "  workgroupBarrier();",
        "  var kk = K0;",
        "  loop {",
        "    if (kk > K1) { break; }",
        f"    var j = min(kk >> 1u, {half}u);",
        "    loop {",
        "      if (j == 0u) { break; }",
        f"      for (var q = lid; q < {half}u; q = q + {WORKGROUP}u) {{",
        "        let a = ((q & ~(j - 1u)) << 1u) | (q & (j - 1u));",
        "        let b = a + j;",
        "        let up = (((base + a) & (P - 1u)) & kk) == 0u;",
        "        let ka = wk[a];",
        "        let kb = wk[b];",
        "        let ia = wi[a];",
        "        let ib = wi[b];",
        "        if (sk_less(kb, ib, ka, ia) == up) {",
        "          wk[a] = kb;",
        "          wk[b] = ka;",
        "          wi[a] = ib;",
        "          wi[b] = ia;",
        "        }",
        "      }",
        "      workgroupBarrier();",
        "      j = j >> 1u;",
        "    }",
        "    kk = kk << 1u;",
        "  }",
        f"  for (var t = lid; t < {block}u; t = t + {WORKGROUP}u) {{",
        "    let s = base + t;",
        *store,
        "  }",
        "}",
    ])
    roles: list[str] = []
    if uses_prologue:
        roles.append("inputs")
    if src == "scratch" or dst == "scratch":
        roles += ["sk", "si"]
    if dst == "final":
        roles.append("out")
    if uses_prologue:
        roles.append("wide")
    decls = _decls(kernel, g, tuple(roles), k, out_dt)
    body = "\n\n".join(fns) + "\n\n" + main
    source = "\n".join(decls) + "\n\n" + helpers_for(body) + "\n\n" + body + "\n"
    slots = sorted(g.slots, key=lambda sp: g.slots[sp])
    return Shader(Rendered(source, slots, g.wide, len(kernel.inputs), 1), tuple(roles))


def render_global(key: str) -> str:
    """One bitonic substep of distance ``j`` over scratch; ``prm`` = [pairs, j, k, P]."""
    return "\n".join([
        "@group(0) @binding(0) var<storage, read> prm: array<u32>;",
        f"@group(0) @binding(1) var<storage, read_write> sk: array<{key}>;",
        "@group(0) @binding(2) var<storage, read_write> si: array<u32>;",
        "",
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        f"  let q = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
        "  if (q >= prm[0]) { return; }",
        "  let j = prm[1];",
        "  let kk = prm[2];",
        "  let P = prm[3];",
        "  let a = ((q & ~(j - 1u)) << 1u) | (q & (j - 1u));",
        "  let b = a + j;",
        "  let up = ((a & (P - 1u)) & kk) == 0u;",
        "  let ka = sk[a];",
        "  let kb = sk[b];",
        "  let ia = si[a];",
        "  let ib = si[b];",
        "  if ((kb < ka || (kb == ka && ib < ia)) == up) {",
        "    sk[a] = kb;",
        "    sk[b] = ka;",
        "    si[a] = ib;",
        "    si[b] = ia;",
        "  }",
        "}",
        "",
    ])


def render_searchsorted(kernel: Kernel) -> Shader:
    """Binary search of each ``x2`` element in ``x1`` (through ``sorter`` if given); ``prm`` extra: M."""
    side, has_sorter = kernel.attrs
    ops = kernel.operands
    dt = kernel.instrs[ops[0]].dtype
    out_dt = kernel.out_nodes[0].dtype
    g = _Gen(kernel)
    fns = [sort_key(dt), _load_fn(g, ops[0], "ss_x1"), _load_fn(g, ops[1], "ss_x2")]
    probe = "mid"
    if has_sorter:
        fns.append(_load_fn(g, ops[2], "ss_sorter"))
        probe = "min(u32(ss_sorter(mid)), M - 1u)"
    m = g.slot(("extra", "M"))
    cmp = "<" if side == "left" else "<="
    main = "\n".join([
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        f"  let gi = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
        "  if (gi >= prm[0]) { return; }",
        f"  let M = {m};",
        "  let kv = sk_key(ss_x2(gi));",
        "  var lo = 0u;",
        "  var hi = M;",
        "  loop {",
        "    if (lo >= hi) { break; }",
        "    let mid = (lo + hi) >> 1u;",
        f"    if (sk_key(ss_x1({probe})) {cmp} kv) {{ lo = mid + 1u; }} else {{ hi = mid; }}",
        "  }",
        f"  out0[gi] = {WGSL_TYPE[out_dt]}(lo);",
        "}",
    ])
    roles = ("inputs", "out", "wide")
    decls = _decls(kernel, g, roles, key_type(dt), out_dt)
    body = "\n\n".join(fns) + "\n\n" + main
    source = "\n".join(decls) + "\n\n" + helpers_for(body) + "\n\n" + body + "\n"
    slots = sorted(g.slots, key=lambda sp: g.slots[sp])
    return Shader(Rendered(source, slots, g.wide, len(kernel.inputs), 1), roles)
