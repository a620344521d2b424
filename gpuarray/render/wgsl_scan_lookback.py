"""Render the single-pass scan (decoupled look-back, Merrill & Garland 2016) of few long rows along
the last axis as WGSL: ``scan`` kernels of every op of ``render/wgsl_scan.py`` (its monoids: the
float sum from -0.0, wrapping narrow integers, the float product's (product, flags) pair).

One dispatch scans every row: a workgroup of 256 threads takes the next tile id from an atomic
counter (dynamic tile ids: a tile only ever waits on tiles whose workgroups already started, so
no scheduler can deadlock it) and scans a tile of ``256 x PT`` elements of one row:

1. coalesced loads (element ``i * 256 + lid`` of the tile, the fused prologue evaluated at its
   index) into workgroup memory, padded by one word in 32 against bank conflicts;
2. each thread folds its ``PT`` consecutive elements (blocked order), the workgroup scans the 256
   thread totals (subgroup shuffles for 32-bit states where ``sg``, else Hillis-Steele in
   workgroup memory: ``lb_scan``);
3. thread 0 publishes the tile's aggregate (status AGG; the row's first tile its prefix, status
   PREFIX); then the workgroup looks back: each thread reads one of the ``window`` tiles before
   (a window, so that the prefix front moves ``window`` tiles per round trip to memory), and the
   run of tiles that have a status, up to the nearest prefix, is combined in order by ``lb_scan``;
   thread 0 publishes the tile's inclusive prefix. A value is published in ``words(op, dtype)``
   atomic u32 words, each carrying its status in bits 16-17 and 16 bits of the value (Levien's
   split-word protocol for WebGPU's relaxed 32-bit atomics): a reader accepts it only when every
   word carries the same status. While the tile just before is missing, only it is read; after
   ``SPIN`` (a parameter) such reads the workgroup computes that tile's total from its input
   itself (decoupled fallback: no forward-progress assumption, and bounded loops: lavapipe ends
   every loop of an invocation after 65535 iterations in all);
4. each thread runs over its elements again from its exclusive prefix, in workgroup memory, and
   the results go out as coalesced stores.

``flags`` (binding after ``out0``): word 0 the tile counter, then ``words`` per tile; it must be
zero at the start (``CLEAR``, a tiny dispatch before the scan in the same pass). Memory traffic:
one read of the input (plus the prologue's operands) and one write of the output.
"""

from __future__ import annotations

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE, WGSL_TYPE
from .wgsl import WORKGROUP, Rendered, _Gen
from .wgsl_lib import helpers_for
from .wgsl_scan import _row_index, initial, is_pair, monoid

AGG, PREFIX = 1, 2
PT_CHOICES = (16, 8, 4, 2, 1)

CLEAR = "\n".join([
    "@group(0) @binding(0) var<storage, read> prm: array<u32>;",
    "@group(0) @binding(1) var<storage, read_write> flags: array<u32>;",
    "",
    f"@compute @workgroup_size({WORKGROUP})",
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
    "        @builtin(local_invocation_index) lid: u32) {",
    f"  let i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
    "  if (i < prm[0]) { flags[i] = 0u; }",
    "}",
    "",
])


def state_bytes(op: str, dtype: np.dtype) -> int:
    """Bytes of one scan state in workgroup memory."""
    if is_pair(op, dtype):
        return 16 if dtype.itemsize == 8 else 8
    return 8 if dtype.itemsize == 8 else 4


def _halves(op: str, dtype: np.dtype) -> list[tuple[str, str]]:
    """The 32-bit parts of a state ``s`` as (WGSL u32 expression of the bits, how many 16-bit halves
    carry them: "lo" where the value fits 16 bits, "both" otherwise)."""
    if is_pair(op, dtype):
        return [*_halves_of(WGSL_TYPE[dtype], "s.v"), ("s.f", "lo")]
    if dtype == np.bool_:
        return [("s", "lo")]
    return _halves_of(WGSL_TYPE[dtype], "s")


def _halves_of(t: str, e: str) -> list[tuple[str, str]]:
    if t == "u32":
        return [(e, "both")]
    if t in ("i32", "f32"):
        return [(f"bitcast<u32>({e})", "both")]
    b = e if t == "u64" else f"bitcast<u64>({e})"
    return [(f"u32({b} & 0xfffffffflu)", "both"), (f"u32({b} >> 32u)", "both")]


def _from_bits(t: str, parts: list[str]) -> str:
    """The value of type ``t`` from its 32-bit parts (u32 expressions)."""
    if t == "u32":
        return parts[0]
    if t in ("i32", "f32"):
        return f"bitcast<{t}>({parts[0]})"
    b = f"((u64({parts[1]}) << 32u) | u64({parts[0]}))"
    return b if t == "u64" else f"bitcast<{t}>({b})"


def words(op: str, dtype: np.dtype) -> int:
    """Atomic u32 words per published value (16 value bits each)."""
    return sum(1 if n == "lo" else 2 for _e, n in _halves(op, dtype))


def per_thread(op: str, dtype: np.dtype, limit: int) -> int:
    """Elements per thread: 16 for 4-byte states, 8 for 8-byte, 4 for 16-byte ones, less where
    the tile (padded) and the scan arrays exceed ``limit`` bytes of workgroup memory.

    >>> per_thread("sum", np.dtype("float32"), 49152), per_thread("sum", np.dtype("float64"), 16384)
    (16, 4)
    """
    sb = state_bytes(op, dtype)
    for pt in PT_CHOICES:
        n = WORKGROUP * pt
        if pt * sb <= 64 and (n + n // 32 + 2 * WORKGROUP + 2) * sb + 64 <= limit:
            return pt
    return 1


def _publish(op: str, dtype: np.dtype, t: str) -> str:
    """``lb_publish(i, s, st)``: the state ``s`` of tile ``i`` in its words, with status ``st``."""
    lines = [f"fn lb_publish(i: u32, s: {t}, st: u32) {{", f"  let w = 1u + i * {words(op, dtype)}u;"]
    k = 0
    for e, n in _halves(op, dtype):
        lines.append(f"  atomicStore(&flags[w + {k}u], ({e} & 0xffffu) | (st << 16u));")
        k += 1
        if n == "both":
            lines.append(f"  atomicStore(&flags[w + {k}u], ({e} >> 16u) | (st << 16u));")
            k += 1
    return "\n".join([*lines, "}"])


def _read(op: str, dtype: np.dtype, t: str) -> str:
    """``lb_read(i)``: tile ``i``'s published state into ``lb_val``; returns its status (0: none
    yet, or words of two statuses: a value being replaced)."""
    nw = words(op, dtype)
    lines = ["fn lb_read(i: u32) -> u32 {", f"  let w = 1u + i * {nw}u;"]
    lines += [f"  let w{k} = atomicLoad(&flags[w + {k}u]);" for k in range(nw)]
    lines.append("  let st = w0 >> 16u;")
    if nw > 1:
        same = " || ".join(f"(w{k} >> 16u) != st" for k in range(1, nw))
        lines.append(f"  if ({same}) {{ return 0u; }}")
    parts, k = [], 0
    for _e, n in _halves(op, dtype):
        if n == "lo":
            parts.append(f"(w{k} & 0xffffu)")
            k += 1
        else:
            parts.append(f"((w{k} & 0xffffu) | (w{k + 1} << 16u))")
            k += 2
    if is_pair(op, dtype):
        ft = WGSL_TYPE[dtype]
        val = f"SP({_from_bits(ft, parts[:-1])}, {parts[-1]})"
    else:
        val = _from_bits("u32" if dtype == np.bool_ else WGSL_TYPE[dtype], parts)
    lines += [f"  lb_val = {val};", "  return st;", "}"]
    return "\n".join(lines)


def _wg_scan(t: str, ident: str, comb: str, sg: bool) -> str:
    """``lb_scan(lid, x)``: the combination of the ``x`` of the threads before ``lid`` (identity for
    thread 0); the total lands in ``lb_tot``. Called in uniform control flow."""
    c = comb.replace("{a}", "a").replace("{b}", "b")
    head = [f"fn lb_comb(a: {t}, b: {t}) -> {t} {{ return {c}; }}", "",
            f"fn lb_scan(lid: u32, x: {t}) -> {t} {{"]
    if not sg:
        return "\n".join([
            *head,
            "  workgroupBarrier();",
            "  lb_sh[lid] = x;",
            "  workgroupBarrier();",
            "  var src = 0u;",
            f"  for (var off = 1u; off < {WORKGROUP}u; off = off << 1u) {{",
            "    var s = lb_sh[src + lid];",
            "    if (lid >= off) { s = lb_comb(lb_sh[src + lid - off], s); }",
            f"    src = src ^ {WORKGROUP}u;",
            "    lb_sh[src + lid] = s;",
            "    workgroupBarrier();",
            "  }",
            f"  if (lid == {WORKGROUP - 1}u) {{ lb_tot = lb_sh[src + lid]; }}",
            f"  var e: {t} = {ident};",
            "  if (lid > 0u) { e = lb_sh[src + lid - 1u]; }",
            "  workgroupBarrier();",
            "  return e;",
            "}",
        ])
    # subgroups (32-bit states): the lanes of subgroup q hold threads q * sgs .. of the tile (the
    # subgroups need not follow ``lid``); a Hillis-Steele scan by shuffles in each, then the
    # subgroups' totals, combined in order by every thread (at most 64 of them)
    return "\n".join([
        *head,
        "  workgroupBarrier();",
        "  lb_sh[lid] = x;",
        "  workgroupBarrier();",
        "  let p = lb_sgid * lb_sgs + lb_sgi;",
        "  var v = lb_sh[p];",
        "  for (var d = 1u; d < lb_sgs; d = d << 1u) {",
        "    let o = subgroupShuffleUp(v, d);",
        "    if (lb_sgi >= d) { v = lb_comb(o, v); }",
        "  }",
        "  var e = subgroupShuffleUp(v, 1u);",
        f"  if (lb_sgi == 0u) {{ e = {ident}; }}",
        f"  if (lb_sgi == lb_sgs - 1u) {{ lb_sh[{WORKGROUP}u + lb_sgid] = v; }}",
        "  workgroupBarrier();",
        f"  var tot: {t} = {ident};",
        "  for (var q = 0u; q < lb_nsg; q = q + 1u) {",
        "    if (q == lb_sgid) { e = lb_comb(tot, e); }",
        f"    tot = lb_comb(tot, lb_sh[{WORKGROUP}u + q]);",
        "  }",
        "  lb_sh[p] = e;",
        "  if (lid == 0u) { lb_tot = tot; }",
        "  workgroupBarrier();",
        "  return lb_sh[lid];",
        "}",
    ])


def can_use_subgroups(op: str, dtype: np.dtype) -> bool:
    """Whether the workgroup scan of this op can use subgroup shuffles (32-bit states)."""
    return not is_pair(op, dtype) and dtype.itemsize <= 4


def _loads(pt: int, unroll: bool, t: str, ident: str, prologue: list[str], lift: str) -> list[str]:
    """A thread's ``pt`` elements ``i * 256 + lid`` of the tile (from ``base``) into ``lb_tile``."""
    def one(q: str, ind: str) -> list[str]:
        return [f"{ind}let q = {q};", f"{ind}let k = base + q;", f"{ind}var x: {t} = {ident};",
                f"{ind}if (k < L) {{", *[ind + ln[4:] for ln in prologue], f"{ind}  x = {lift};",
                f"{ind}}}", f"{ind}lb_tile[q + (q >> 5u)] = x;"]
    if not unroll:
        return [f"  for (var i = 0u; i < {pt}u; i = i + 1u) {{", *one(f"i * {WORKGROUP}u + lid", "    "), "  }"]
    out = []
    for i in range(pt):
        out += ["  {", *one(f"{i * WORKGROUP}u + lid", "    "), "  }"]
    return out


def render_lookback(kernel: Kernel, variant: tuple[int, bool, int, bool]) -> Rendered:
    """WGSL for the single-pass scan of ``kernel`` (a ``scan`` along its last axis); ``variant`` is
    (PT, subgroups, window: tiles the look-back reads at once (at most 256), unroll the loads). ``prm`` extras: NT
    (tiles), TR (tiles per row), L (row length), LI (output row length), SPIN (reads of a missing
    status before the fallback)."""
    pt, sg, window, unroll = variant
    assert 1 <= window <= WORKGROUP, window
    op, axis, init = kernel.attrs[:3]
    dt = kernel.out_nodes[0].dtype
    mo = monoid(op, dt)
    t = mo.t
    sg = sg and can_use_subgroups(op, dt)
    tile = WORKGROUP * pt
    g = _Gen(kernel)
    head = [f"  let NT = {g.slot(('extra', 'NT'))};",
            "  if (lid == 0u) { lb_id = atomicAdd(&flags[0], 1u); }",
            "  let tid = workgroupUniformLoad(&lb_id);",
            "  if (tid >= NT) { return; }",
            f"  let TR = {g.slot(('extra', 'TR'))};",
            f"  let L = {g.slot(('extra', 'L'))};",
            f"  let SPIN = {g.slot(('extra', 'SPIN'))};",
            "  let r = tid / TR;",
            "  let c = tid % TR;",
            f"  let base = c * {tile}u;",
            f"  let obase = r * {g.slot(('extra', 'LI'))};"]
    val = _row_index(g, kernel.operands[0], axis, head)
    prologue = ["      " + ln.strip() for ln in g.lines]
    lift = mo.lift.replace("{x}", val)
    one = int(bool(init))

    def c(a: str, b: str) -> str:
        return f"lb_comb({a}, {b})"

    body = [
        # 1. coalesced loads into workgroup memory (unrolled: all of a thread's loads in flight at once)
        *_loads(pt, unroll, t, mo.ident, prologue, lift),
        "  workgroupBarrier();",
        # 2. each thread's PT consecutive elements: their total; the workgroup scan of the totals
        f"  let b0 = lid * {pt}u;",
        "  let tot0 = lb_tile[b0 + (b0 >> 5u)];",
        *[f"  let tot{j} = {c(f'tot{j - 1}', f'lb_tile[b0 + {j}u + ((b0 + {j}u) >> 5u)]')};" for j in range(1, pt)],
    ]
    body += [
        f"  let pre = lb_scan(lid, tot{pt - 1});",
        "  let agg = lb_tot;",
        # 3. publish the aggregate (the row's first tile: its prefix), look back, publish the prefix
        f"  if (lid == 0u) {{ lb_publish(tid, agg, select({AGG}u, {PREFIX}u, c == 0u)); }}",
        f"  var excl: {t} = {mo.ident};",
        "  if (c > 0u) {",
        "    let first = r * TR;",
        "    var j = tid;",          # the tiles first .. j - 1 are still to be combined
        "    var spins = 0u;",
        "    loop {",
        # a window of tiles j - 1, j - 2, ... (one while waiting on tile j - 1): the run of tiles that
        # have a status, up to the nearest prefix, is combined in order (their positions reversed)
        f"      let win = select(min(j - first, {window}u), 1u, spins > 0u);",
        "      var st = 0u;",
        "      if (lid < win) { st = lb_read(j - 1u - lid); }",
        "      if (lid == 0u) { atomicStore(&lb_miss, 0xffffffffu); atomicStore(&lb_pre, 0xffffffffu); }",
        "      workgroupBarrier();",
        "      if (lid == 0u) { lb_first = lb_val; }",
        "      if (lid < win && st == 0u) { atomicMin(&lb_miss, lid); }",
        f"      if (lid < win && st == {PREFIX}u) {{ atomicMin(&lb_pre, lid); }}",
        "      workgroupBarrier();",
        "      if (lid == 0u) {",
        "        let m = min(atomicLoad(&lb_miss), win);",
        "        let q = atomicLoad(&lb_pre);",
        "        lb_cut = select(m, (q + 1u) | 0x10000u, q < m);",
        "      }",
        "      let cut = workgroupUniformLoad(&lb_cut);",
        "      let nc = cut & 0xffffu;",
        "      if (nc == 1u) {",          # the common case: no workgroup scan
        f"        excl = {c('lb_first', 'excl')};",
        "      } else if (nc > 1u) {",
        f"        var x: {t} = {mo.ident};",
        "        if (lid < nc) { x = lb_val; }",
        f"        _ = lb_scan({WORKGROUP - 1}u - lid, x);",
        f"        excl = {c('lb_tot', 'excl')};",
        "      }",
        "      if (nc > 0u) {",
        "        if (cut > 0xffffu) { break; }",
        "        j = j - nc;",
        "        spins = 0u;",
        "        continue;",
        "      }",
        "      spins = spins + 1u;",
        "      if (spins < SPIN) { continue; }",
        # the decoupled fallback: tile j - 1's total from its input (blocked order, as its owner folds it)
        "      let fc = j - 1u - first;",
        f"      var ft: {t} = {mo.ident};",
        f"      for (var i = 0u; i < {pt}u; i = i + 1u) {{",
        f"        let k = fc * {tile}u + lid * {pt}u + i;",
        f"        var x: {t} = {mo.ident};",
        "        if (k < L) {",
        *["  " + ln for ln in prologue],
        f"          x = {lift};",
        "        }",
        f"        ft = {c('ft', 'x')};",
        "      }",
        "      _ = lb_scan(lid, ft);",
        f"      excl = {c('lb_tot', 'excl')};",
        "      if (fc == 0u) { break; }",
        "      j = j - 1u;",
        "      spins = 0u;",
        "    }",
        f"    if (lid == 0u) {{ lb_publish(tid, {c('excl', 'agg')}, {PREFIX}u); }}",
        "  }",
        # 4. the thread's elements again, from the running value: the results through workgroup
        #    memory, coalesced stores
        f"  var run = {c('excl', 'pre')};",
        *[f"  run = {c('run', f'lb_tile[b0 + {j}u + ((b0 + {j}u) >> 5u)]')};\n"
          f"  lb_tile[b0 + {j}u + ((b0 + {j}u) >> 5u)] = run;" for j in range(pt)],
    ]
    body += [
        "  workgroupBarrier();",
        f"  for (var i = 0u; i < {pt}u; i = i + 1u) {{",
        f"    let q = i * {WORKGROUP}u + lid;",
        "    let k = base + q;",
        f"    if (k < L) {{ out0[obase + k + {one}u] = {mo.out.replace('{x}', 'lb_tile[q + (q >> 5u)]')}; }}",
        "  }",
    ]
    if init:
        body.append(f"  if (c == 0u && lid == 0u) {{ out0[obase] = {initial(op, dt)}; }}")
    decls = ["@group(0) @binding(0) var<storage, read> prm: array<u32>;"]
    b = 1
    for k, node in enumerate(kernel.inputs):
        decls.append(f"@group(0) @binding({b}) var<storage, read> in{k}: array<{WGSL_STORAGE_TYPE[node.dtype]}>;")
        b += 1
    decls.append(f"@group(0) @binding({b}) var<storage, read_write> out0: array<{WGSL_STORAGE_TYPE[dt]}>;")
    decls.append(f"@group(0) @binding({b + 1}) var<storage, read_write> flags: array<atomic<u32>>;")
    b += 2
    for st in sorted(g.wide):
        decls.append(f"@group(0) @binding({b}) var<storage, read> c{st}: array<{st}>;")
        b += 1
    decls += [f"var<workgroup> lb_tile: array<{t}, {tile + tile // 32}>;",
              f"var<workgroup> lb_sh: array<{t}, {2 * WORKGROUP}>;",
              f"var<workgroup> lb_tot: {t};",
              "var<workgroup> lb_id: u32;",
              "var<workgroup> lb_miss: atomic<u32>;",
              "var<workgroup> lb_pre: atomic<u32>;",
              "var<workgroup> lb_cut: u32;",
              f"var<workgroup> lb_first: {t};",
              f"var<private> lb_val: {t};"]
    builtins = ["@builtin(local_invocation_index) lid: u32"]
    if sg:
        decls += [f"var<private> lb_{n}: u32;" for n in ("sgi", "sgs", "sgid", "nsg")]
        builtins += ["@builtin(subgroup_invocation_id) sgi: u32", "@builtin(subgroup_size) sgs: u32",
                     "@builtin(subgroup_id) sgid: u32", "@builtin(num_subgroups) nsg: u32"]
        head = ["  lb_sgi = sgi;", "  lb_sgs = sgs;", "  lb_sgid = sgid;", "  lb_nsg = nsg;", *head]
    fns = "\n\n".join(x for x in (mo.decls, _wg_scan(t, mo.ident, mo.comb, sg), _publish(op, dt, t),
                                  _read(op, dt, t)) if x)
    main = "\n".join([f"@compute @workgroup_size({WORKGROUP})", f"fn main({', '.join(builtins)}) {{",
                      *head, *body, "}"])
    code = fns + "\n\n" + main
    source = "\n".join(decls) + "\n\n" + helpers_for(code) + "\n\n" + code + "\n"
    return Rendered(source, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs), 1)
