"""Render the single-pass scan (decoupled look-back, Merrill & Garland 2016) of few long rows along
the last axis as WGSL: ``scan`` kernels of every op of ``render/wgsl_scan.py`` (its monoids: the
float sum from -0.0, wrapping narrow integers, the float product's (product, flags) pair).

One dispatch scans every row: a workgroup of ``WG`` threads takes the next tile id from an atomic
counter (dynamic tile ids: a tile only ever waits on tiles whose workgroups already started, so
no scheduler can deadlock it) and scans a tile of ``WG x PT`` elements of one row, as CUB's and
Onesweep's tiles do:

1. each thread loads its ``PT`` elements (the fused prologue evaluated at each) into registers:
   consecutive ones (blocked order), or with subgroups (``striped``: sums and products) runs of 16
   bytes strided by the subgroup, each run scanned across the subgroup in turn before step 2 takes
   the subgroup's total; as vector loads (``vin``: every input read at the element's own index,
   the provider's choice where the rows are 16-byte aligned: ``vec4`` where every input has 32-bit
   storage, ``vec2`` where one has 64-bit storage (float64, int64, uint64: 16 bytes a load)) in
   full tiles, scalar loads otherwise and in a row's last tile, and scans them in registers;
2. the thread totals are scanned: with subgroups, a subgroup inclusive scan (``subgroupInclusiveAdd``
   for 32-bit sums, ``subgroupShuffleUp`` steps for the other ops; a state wider than 32 bits, a
   64-bit value or a product's (product, flags) pair, moves between lanes as its 32-bit parts,
   ``_sg_ops``) and one exchange of the per-subgroup totals in workgroup memory; a thread's place
   in the tile is its place in its subgroup (``sgid * sgs + sgi``: full subgroups, ``WG`` a
   multiple of the subgroup size); without them, a Hillis-Steele scan in workgroup memory
   (``lb_scan``);
3. the tile's aggregate is published (status AGG; the row's first tile its prefix, status PREFIX),
   then the look-back: with subgroups, subgroup 0 alone reads the ``sgs`` tiles before at once and
   combines the run of tiles that have a status, up to the nearest prefix, by a shuffle tree;
   without them, the workgroup reads a window of ``window`` tiles and combines them by
   ``lb_scan``. The tile's inclusive prefix is published. A value is published in
   ``words(op, dtype)`` atomic u32 words, each carrying its status in bits 16-17 and 16 bits of
   the value (Levien's split-word protocol for WebGPU's relaxed 32-bit atomics): a reader accepts
   it only when every word carries the same status. While the tile just before is missing, only it
   is read; after ``SPIN`` (a parameter) such reads the look-back computes that tile's total from
   its input itself (decoupled fallback: no forward-progress assumption, and bounded loops:
   lavapipe ends every loop of an invocation after 65535 iterations in all);
4. the exclusive prefix reaches every thread (one barrier), each thread adds it and its
   predecessors' total to its registers and stores them (``vout``: 16-byte stores, ``vec4`` of a
   32-bit or ``vec2`` of a 64-bit output, where the output rows are 16-byte aligned; a component
   at a time in the row's last tile).

With subgroups a tile takes three workgroup barriers (the tile id, the subgroup totals, the
prefix) and no workgroup-memory copy of the tile.

``flags`` (binding after ``out0``): word 0 the tile counter, then ``words`` per tile; it must be
zero at the start (``CLEAR``, a tiny dispatch before the scan in the same pass). Memory traffic:
one read of the input (plus the prologue's operands) and one write of the output.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE
from .wgsl import VEC4_HELPERS, VEC_TYPES, WORKGROUP, Rendered, _Gen
from .wgsl_cast import wrap_small
from .wgsl_lib import helpers_for
from .wgsl_parts import store_value
from .wgsl_scan import _row_index, initial, is_pair, monoid
from .wgsl_scan_words import _publish, _read, _sg_ops, is_wide, words

__all__ = ["AGG", "CLEAR", "PREFIX", "WIDE_TYPES", "can_use_subgroups", "default_items", "is_wide",
           "render_lookback", "smem_bytes", "state_bytes", "words"]

AGG, PREFIX = 1, 2
WIDE_TYPES = frozenset({"f64", "i64", "u64"})      # 64-bit storage: vec2 loads and stores (16 bytes)

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


def default_items(op: str, dtype: np.dtype) -> int:
    """Elements per thread unless the provider is told otherwise: 16 of 32-bit elements, 8 of 64-bit
    ones or of the 16-byte states of float64 products: 64 bytes a thread either way (H200, 2^25
    float64 / int64 cumsum: 0.36 ms of GPU time with 16, 0.29 with 8; float32 2^26: 0.28 with 16,
    0.34 with 8).

    >>> default_items("sum", np.dtype("float32")), default_items("sum", np.dtype("float64"))
    (16, 8)
    """
    return 16 if dtype.itemsize <= 4 and state_bytes(op, dtype) <= 8 else 8


def smem_bytes(op: str, dtype: np.dtype, wg: int, sg: bool) -> int:
    """Bytes of workgroup memory the scan's shader declares (an upper bound)."""
    sb = max(state_bytes(op, dtype), 4)
    return (wg if sg else 2 * wg) * sb + 4 * sb + 64


def can_use_subgroups(op: str, dtype: np.dtype, wide: bool = True) -> bool:
    """Whether the workgroup scan of this op can use subgroup operations: 32-bit states, and with
    ``wide`` the wider ones (64-bit values, (product, flags) pairs) by their 32-bit parts."""
    return wide or not is_wide(op, dtype)


def _wg_scan(t: str, ident: str, comb: str, wg: int) -> str:
    """``lb_comb(a, b)``, and ``lb_scan(lid, x)``: the combination of the ``x`` of the threads before
    ``lid`` (identity for thread 0), by a Hillis-Steele scan in workgroup memory; the total lands in
    ``lb_tot``. Called in uniform control flow."""
    c = comb.replace("{a}", "a").replace("{b}", "b")
    return "\n".join([
        f"fn lb_comb(a: {t}, b: {t}) -> {t} {{ return {c}; }}",
        "",
        f"fn lb_scan(lid: u32, x: {t}) -> {t} {{",
        "  workgroupBarrier();",
        "  lb_sh[lid] = x;",
        "  workgroupBarrier();",
        "  var src = 0u;",
        f"  for (var off = 1u; off < {wg}u; off = off << 1u) {{",
        "    var s = lb_sh[src + lid];",
        "    if (lid >= off) { s = lb_comb(lb_sh[src + lid - off], s); }",
        f"    src = src ^ {wg}u;",
        "    lb_sh[src + lid] = s;",
        "    workgroupBarrier();",
        "  }",
        f"  if (lid == {wg - 1}u) {{ lb_tot = lb_sh[src + lid]; }}",
        f"  var e: {t} = {ident};",
        "  if (lid > 0u) { e = lb_sh[src + lid - 1u]; }",
        "  workgroupBarrier();",
        "  return e;",
        "}",
    ])


def _sg_inclusive(op: str, dt: np.dtype, t: str, x: str, mv: dict[str, str]) -> list[str]:
    """Lines that set ``v`` to the inclusive scan of ``x`` over the lanes of the subgroup:
    ``subgroupInclusiveAdd`` for 32-bit sums (narrow integers wrapped after it, which gives the
    wrapped running sum; a float sum of nothing but -0.0 kept -0.0, whatever zero the adapter's
    scan starts from), shuffles (Hillis-Steele, in lane order; ``mv``: ``_sg_ops``) for every other op."""
    if op == "sum" and dt != np.bool_ and t in ("f32", "i32", "u32"):
        expr = f"subgroupInclusiveAdd({x})"
        expr = wrap_small(dt, expr)
        lines = [f"  var v = {expr};"]
        if t == "f32":
            lines.append(f"  if (subgroupInclusiveAdd(select(1u, 0u, bitcast<u32>({x}) == 0x80000000u)) == 0u) "
                         "{ v = bitcast<f32>(0x80000000u); }")
        return lines
    return [f"  var v = {x};",
            "  for (var d = 1u; d < lb_sgs; d = d << 1u) {",
            f"    let o = {mv['up'].replace('{v}', 'v').replace('{d}', 'd')};",
            "    if (lb_sgi >= d) { v = lb_comb(o, v); }",
            "  }"]


def _sg_reduce(later_first: bool, mv: dict[str, str]) -> list[str]:
    """Lines that combine ``v`` over the lanes, in order, into lane 0's ``v`` (a shuffle tree);
    ``later_first``: lane 0 holds the latest part (the look-back's window), else the earliest."""
    comb = "lb_comb(o, v)" if later_first else "lb_comb(v, o)"
    return ["        for (var d = 1u; d < lb_sgs; d = d << 1u) {",
            f"          let o = {mv['down'].replace('{v}', 'v').replace('{d}', 'd')};",
            f"          if (lb_sgi + d < lb_sgs) {{ v = {comb}; }}",
            "        }"]


def _lanes(g: _Gen, kernel: Kernel, lift: str, w: int) -> tuple[list[str], list[str]] | None:
    """The prologue of ``w`` consecutive elements ``e0 ..`` (linear indices of the operand) from the
    ``vec<w>`` of each input ``x<k>``: (lines, the ``w`` lifted values), or None where an input is
    read at another index (views, broadcasting, gathers) or, with ``w`` 2, a float32 op has a
    four-lane helper (``VEC4_HELPERS``)."""
    if w != 4 and any(i.op in VEC4_HELPERS and i.dtype == np.float32 for i in kernel.instrs):
        return None
    saved = g.lines, g.memo
    g.lines, g.memo = [], {}
    vals = []
    src = kernel.instrs[kernel.operands[0]]
    for lane in range(w):
        g.lane = lane
        vals.append(lift.replace("{x}", store_value(src.dtype, g.value(kernel.operands[0], ("lin", f"e{lane}")))))
    lines, miss = g.lines, g.lane_miss
    g.lines, g.memo = saved
    g.lane, g.lane_miss = None, False
    return None if miss else (lines, vals)


def _blocked(j: int) -> str:
    """The row position of a thread's element ``j`` in blocked order: ``b0 + j``."""
    return f"b0 + {j}u"


def _striped(cw: int) -> Callable[[int], str]:
    """Row positions of a thread's elements in subgroup-striped order: runs of ``cw`` consecutive
    elements, run ``q`` of lane ``l`` at ``sb + (q sgs + l) cw`` (``sb``: the subgroup's segment plus
    ``l cw``), so that a subgroup's 16-byte loads and stores of one run cover consecutive bytes."""
    return lambda j: f"sb + {j // cw}u * cs + {j % cw}u"


def _loads(pt: int, prologue: list[str], lift: str, guard: bool, pos: Callable[[int], str] = _blocked) -> list[str]:
    """A thread's ``pt`` elements (at row positions ``pos(j)``) into ``a<j>`` one at a time (``guard``:
    those < L)."""
    out = []
    for j in range(pt):
        body = [*prologue, f"a{j} = {lift};"]
        if guard:
            out += [f"    {{ let k = {pos(j)}; if (k < L) {{", *["      " + ln for ln in body], "    } }"]
        else:
            out += [f"    {{ let k = {pos(j)};", *["      " + ln for ln in body], "    }"]
    return out


def _vec_loads(pt: int, nin: int, lanes: tuple[list[str], list[str]],
               pos: Callable[[int], str] = _blocked) -> list[str]:
    """A thread's ``pt`` elements as ``pt / w`` ``vec<w>`` loads of each input (``iv<k>``)."""
    lines, vals = lanes
    w = len(vals)
    out = []
    for q in range(pt // w):
        out += ["    {", f"      let e0 = rin + {pos(w * q)};",
                *[f"      let e{i} = e0 + {i}u;" for i in range(1, w)],
                *[f"      let x{k} = iv{k}[e0 >> {w.bit_length() - 1}u];" for k in range(nin)],
                *["      " + ln.strip() for ln in lines],
                *[f"      a{w * q + i} = {vals[i]};" for i in range(w)], "    }"]
    return out


def _lookback_sg(t: str, ident: str, tile: int, prologue: list[str], lift: str, mv: dict[str, str]) -> list[str]:
    """Subgroup 0's look-back (lanes read the ``sgs`` tiles before at once); leaves the tile's
    exclusive prefix in ``lb_excl`` and publishes its inclusive prefix."""
    bc0 = mv["bc0"].replace("{v}", "v")
    return [
        "  if (lb_sgid == 0u) {",
        f"    var excl: {t} = {ident};",
        "    if (c > 0u) {",
        "      let first = r * TR;",
        "      var j = tid;",           # the tiles first .. j - 1 are still to be combined
        "      var spins = 0u;",
        "      loop {",
        "        let win = select(min(j - first, lb_sgs), 1u, spins > 0u);",
        "        var st = 0u;",
        f"        var v: {t} = {ident};",
        "        if (lb_sgi < win) { st = lb_read(j - 1u - lb_sgi); if (st != 0u) { v = lb_val; } }",
        "        let m = subgroupMin(select(win, lb_sgi, lb_sgi < win && st == 0u));",
        f"        let q = subgroupMin(select(0xffffffffu, lb_sgi, lb_sgi < win && st == {PREFIX}u));",
        "        let nc = select(m, q + 1u, q < m);",
        "        if (nc > 0u) {",
        f"          if (lb_sgi >= nc) {{ v = {ident}; }}",
        *["  " + ln for ln in _sg_reduce(True, mv)],
        f"          excl = lb_comb({bc0}, excl);",
        "          if (q < m) { break; }",
        "          j = j - nc;",
        "          spins = 0u;",
        "          continue;",
        "        }",
        "        spins = spins + 1u;",
        "        if (spins < SPIN) { continue; }",
        # the decoupled fallback: tile j - 1's total from its input, a run of elements per lane
        "        let fc = j - 1u - first;",
        f"        let M = {tile}u / lb_sgs;",
        f"        var v2: {t} = {ident};",
        "        for (var i = 0u; i < M; i = i + 1u) {",
        f"          let k = fc * {tile}u + lb_sgi * M + i;",
        f"          var x: {t} = {ident};",
        "          if (k < L) {",
        *["            " + ln for ln in prologue],
        f"            x = {lift};",
        "          }",
        "          v2 = lb_comb(v2, x);",
        "        }",
        "        v = v2;",
        *_sg_reduce(False, mv),
        f"        excl = lb_comb({bc0}, excl);",
        "        if (fc == 0u) { break; }",
        "        j = j - 1u;",
        "        spins = 0u;",
        "      }",
        f"      if (lb_sgi == 0u) {{ lb_publish(tid, lb_comb(excl, agg), {PREFIX}u); }}",
        "    }",
        "    if (lb_sgi == 0u) { lb_excl = excl; }",
        "  }",
        "  let excl = workgroupUniformLoad(&lb_excl);",
    ]


def _lookback_wg(t: str, ident: str, wg: int, pt: int, window: int, prologue: list[str], lift: str) -> list[str]:
    """The workgroup's look-back (a window of tiles read at once, combined by ``lb_scan``); leaves
    the tile's exclusive prefix in ``excl`` (every thread) and publishes its inclusive prefix."""
    tile = wg * pt
    return [
        f"  var excl: {t} = {ident};",
        "  if (c > 0u) {",
        "    let first = r * TR;",
        "    var j = tid;",
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
        "        excl = lb_comb(lb_first, excl);",
        "      } else if (nc > 1u) {",
        f"        var x: {t} = {ident};",
        "        if (lid < nc) { x = lb_val; }",
        f"        _ = lb_scan({wg - 1}u - lid, x);",
        "        excl = lb_comb(lb_tot, excl);",
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
        f"      var ft: {t} = {ident};",
        f"      for (var i = 0u; i < {pt}u; i = i + 1u) {{",
        f"        let k = fc * {tile}u + lid * {pt}u + i;",
        f"        var x: {t} = {ident};",
        "        if (k < L) {",
        *["          " + ln for ln in prologue],
        f"          x = {lift};",
        "        }",
        "        ft = lb_comb(ft, x);",
        "      }",
        "      _ = lb_scan(lid, ft);",
        "      excl = lb_comb(lb_tot, excl);",
        "      if (fc == 0u) { break; }",
        "      j = j - 1u;",
        "      spins = 0u;",
        "    }",
        f"    if (lid == 0u) {{ lb_publish(tid, lb_comb(excl, agg), {PREFIX}u); }}",
        "  }",
    ]


def render_lookback(kernel: Kernel, variant: tuple[int, int, bool, int, bool, bool, bool]) -> Rendered:
    """WGSL for the single-pass scan of ``kernel`` (a ``scan`` along its last axis); ``variant`` is
    (PT: elements per thread, WG: threads per workgroup, subgroups, window: tiles the workgroup
    look-back reads at once (at most WG; without subgroups), vin: vector loads in full tiles
    (where every input has 32- or 64-bit storage and is read at the element's own index: ``vec4``
    where all are 32-bit, else ``vec2``; ``Rendered.vec`` is the width where they were rendered,
    the inputs then bound a second time as arrays of those vectors after the 64-bit constants),
    vout: 16-byte stores (``out0`` an array of ``vec4`` of 32-bit or ``vec2`` of 64-bit values, no
    include_initial, PT a multiple of 4), striped: with subgroups, a thread's elements in runs of 16
    bytes strided by the subgroup (``_striped``: a subgroup's loads and stores cover consecutive
    bytes; the blocked order, each thread's ``PT`` consecutive elements, spreads a load instruction
    over ``PT`` times the bytes: H200, a copy of 2^26 float32 in tiles of 4096, 0.27-0.29 ms blocked
    against 0.18 striped), each run scanned across the subgroup in turn). With subgroups, states
    wider than 32 bits move between lanes as their 32-bit parts (``_sg_ops``). ``prm`` extras: NT
    (tiles), TR (tiles per row), L (row length), LI (output row length), SPIN (reads of a missing
    status before the fallback)."""
    pt, wg, sg, window, vin, vout, striped = variant
    op, axis, init = kernel.attrs[:3]
    dt = kernel.out_nodes[0].dtype
    st = WGSL_STORAGE_TYPE[dt]
    assert 1 <= window <= wg, window
    assert not vout or (not init and pt % 4 == 0 and st in VEC_TYPES | WIDE_TYPES), variant
    ow = 4 if st in VEC_TYPES else 2        # output elements per 16-byte store
    mo = monoid(op, dt)
    t, ident = mo.t, mo.ident
    sg_fns, mv = _sg_ops(op, dt, t)
    tile = wg * pt
    one = int(bool(init))
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
            f"  let obase = r * {g.slot(('extra', 'LI'))};",
            "  let rin = r * L;",
            f"  let p = {'lb_sgid * lb_sgs + lb_sgi' if sg else 'lid'};",     # the thread's place in the tile
            f"  let b0 = base + p * {pt}u;",
            f"  let full = base + {tile}u <= L;"]
    ins = [WGSL_STORAGE_TYPE[n.dtype] for n in kernel.inputs]
    vw = 4 if set(ins) <= VEC_TYPES else 2     # input elements per vector load
    cw = max(vw, ow)                           # elements of a run (striped)
    striped = striped and sg and pt % cw == 0
    pos = _striped(cw) if striped else _blocked
    if striped:
        head += [f"  let sb = base + lb_sgid * lb_sgs * {pt}u + lb_sgi * {cw}u;", f"  let cs = lb_sgs * {cw}u;"]
    val = _row_index(g, kernel.operands[0], axis, head)
    prologue = [ln.strip() for ln in g.lines]
    lift = mo.lift.replace("{x}", val)
    lanes = None
    if vin and pt % 4 == 0 and ins and set(ins) <= VEC_TYPES | WIDE_TYPES:
        lanes = _lanes(g, kernel, mo.lift, vw)
    # 1. the thread's elements into registers, scanned there
    body = [*[f"  var a{j}: {t} = {ident};" for j in range(pt)],
            "  if (full) {",
            *(_vec_loads(pt, len(kernel.inputs), lanes, pos) if lanes else _loads(pt, prologue, lift, False, pos)),
            "  } else {",
            *_loads(pt, prologue, lift, True, pos),
            "  }",
            *[f"  a{j} = lb_comb(a{j - 1}, a{j});" for j in range(1, pt) if not striped or j % cw]]
    # 2. the scan of the thread totals: ``pre`` (exclusive), ``agg`` (the tile's)
    if striped:
        # each run across the subgroup in turn: its lanes' exclusive prefixes after the earlier runs'
        # total (``carry``), added to the run's elements; ``carry`` ends as the subgroup's total
        body.append(f"  var carry: {t} = {ident};")
        for q in range(pt // cw):
            last = q * cw + cw - 1
            body += ["  {", *["  " + ln for ln in _sg_inclusive(op, dt, t, f"a{last}", mv)],
                     f"    var ex = {mv['up'].replace('{v}', 'v').replace('{d}', '1u')};",
                     f"    if (lb_sgi == 0u) {{ ex = {ident}; }}",
                     "    let cp = lb_comb(carry, ex);",
                     *[f"    a{j} = lb_comb(cp, a{j});" for j in range(q * cw, q * cw + cw)],
                     f"    carry = lb_comb(carry, {mv['last'].replace('{v}', 'v')});",
                     "  }"]
        body.append(f"  var pre: {t} = {ident};")     # the lane's place in the subgroup is in the a<j>
        writer, total = "lb_sgi == 0u", "carry"
    elif sg:
        body += [*_sg_inclusive(op, dt, t, f"a{pt - 1}", mv),
                 f"  var pre = {mv['up'].replace('{v}', 'v').replace('{d}', '1u')};",
                 f"  if (lb_sgi == 0u) {{ pre = {ident}; }}"]
        writer, total = "lb_sgi == lb_sgs - 1u", "v"
    if sg:      # one exchange of the subgroups' totals: ``pre`` gains the earlier subgroups'
        body += [f"  if ({writer}) {{ lb_sh[lb_sgid] = {total}; }}",
                 "  workgroupBarrier();",
                 f"  var agg: {t} = {ident};",
                 "  for (var q = 0u; q < lb_nsg; q = q + 1u) {",
                 "    if (q == lb_sgid) { pre = lb_comb(agg, pre); }",
                 "    agg = lb_comb(agg, lb_sh[q]);",
                 "  }"]
    else:
        body += [f"  let pre = lb_scan(lid, a{pt - 1});", "  let agg = lb_tot;"]
    # 3. publish the aggregate (the row's first tile: its prefix), look back, publish the prefix
    body.append(f"  if (p == 0u) {{ lb_publish(tid, agg, select({AGG}u, {PREFIX}u, c == 0u)); }}")
    body += (_lookback_sg(t, ident, tile, prologue, lift, mv) if sg
             else _lookback_wg(t, ident, wg, pt, window, prologue, lift))
    # 4. the prefix of the thread's elements added, the results stored
    body += ["  let run = lb_comb(excl, pre);", *[f"  a{j} = lb_comb(run, a{j});" for j in range(pt)]]

    def out(j: int) -> str:
        return mo.out.replace("{x}", f"a{j}")
    if vout:
        sh = ow.bit_length() - 1
        body += ["  if (full) {",
                 *[f"    out0[(obase + {pos(ow * q)}) >> {sh}u] = "
                   f"vec{ow}<{st}>({', '.join(out(ow * q + i) for i in range(ow))});" for q in range(pt // ow)],
                 "  } else {",
                 *[f"    {{ let k = {pos(j)}; if (k < L) {{ let o = obase + k; "
                   f"out0[o >> {sh}u][o & {ow - 1}u] = {out(j)}; }} }}" for j in range(pt)],
                 "  }"]
    else:
        body += ["  if (full) {", *[f"    out0[obase + {pos(j)} + {one}u] = {out(j)};" for j in range(pt)],
                 "  } else {",
                 *[f"    {{ let k = {pos(j)}; if (k < L) {{ out0[obase + k + {one}u] = {out(j)}; }} }}"
                   for j in range(pt)],
                 "  }"]
    if init:
        body.append(f"  if (c == 0u && lid == 0u) {{ out0[obase] = {initial(op, dt)}; }}")
    decls = ["@group(0) @binding(0) var<storage, read> prm: array<u32>;"]
    b = 1
    for k, node in enumerate(kernel.inputs):
        decls.append(f"@group(0) @binding({b}) var<storage, read> in{k}: array<{WGSL_STORAGE_TYPE[node.dtype]}>;")
        b += 1
    decls.append(f"@group(0) @binding({b}) var<storage, read_write> out0: array<{f'vec{ow}<{st}>' if vout else st}>;")
    decls.append(f"@group(0) @binding({b + 1}) var<storage, read_write> flags: array<atomic<u32>>;")
    b += 2
    for w in sorted(g.wide):
        decls.append(f"@group(0) @binding({b}) var<storage, read> c{w}: array<{w}>;")
        b += 1
    if lanes:
        for k, node in enumerate(kernel.inputs):
            vt = WGSL_STORAGE_TYPE[node.dtype]
            decls.append(f"@group(0) @binding({b}) var<storage, read> iv{k}: array<vec{vw}<{vt}>>;")
            b += 1
    decls += [f"var<workgroup> lb_sh: array<{t}, {wg if sg else 2 * wg}>;",
              f"var<workgroup> lb_tot: {t};",
              f"var<workgroup> lb_excl: {t};",
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
    fns = "\n\n".join(x for x in (mo.decls, _wg_scan(t, ident, mo.comb, wg), _publish(op, dt, t),
                                  _read(op, dt, t), sg_fns if sg else "") if x)
    main = "\n".join([f"@compute @workgroup_size({wg})", f"fn main({', '.join(builtins)}) {{",
                      *head, *body, "}"])
    code = fns + "\n\n" + main
    source = "\n".join(decls) + "\n\n" + helpers_for(code) + "\n\n" + code + "\n"
    return Rendered(source, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs), 1,
                    vec=vw if lanes else 1)
