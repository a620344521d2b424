"""Render the LSD radix sort of ``sort`` / ``argsort`` (rows longer than one bitonic block) as WGSL.

Keys are the element's raw bits (``u32``, or ``u64`` for 64-bit dtypes) in ping-pong scratch
buffers; each pass takes its 8-bit digit from the order key of ``wgsl_sort.sort_key`` (NumPy's
order: NaN last, ``-0.0 == 0.0``, inverted when descending), so ``sort`` needs no second array
and keeps ``-0.0`` and NaN payloads where NumPy puts them. ``argsort`` carries the original
positions (``u32``) as values; the first pass makes them. Booleans and 8- / 16-bit integers use a
key of 1, 8 or 16 bits (one or two passes), other dtypes 32 or 64 bits (4 or 8 passes).

A pass is three dispatches, a reduce-then-scan:

- ``render_upsweep``: each workgroup counts the digits of its partition (``TPP`` tiles of
  ``T = 256 * KPT`` keys of one row) in workgroup-memory histograms and writes the 256 counts to
  ``cnt[(row * 256 + digit) * PR + part]``;
- ``render_scan``: an exclusive scan of each (row, digit) segment of ``cnt`` over the ``PR``
  partitions of its row, in place, with the segment's total to ``tot[row * 256 + digit]`` (one
  workgroup per segment, ``SCAN_VPT`` consecutive counts a thread, or one thread per segment
  when ``PR`` is small);
- ``render_downsweep``: each workgroup takes its row's digit offsets (an exclusive scan of
  ``tot`` over the digits, plus ``row * L``) plus its own partition's offsets from ``cnt``, then
  for each of its tiles in order: loads the tile into workgroup memory, sorts it stably by the
  digit (two rounds of 4-bit counting: per-thread counters of 16-bit halves over the thread's
  ``KPT`` consecutive keys, a workgroup scan of them, a stable scatter in workgroup memory),
  finds where each digit's run starts, and writes each key to
  ``offset[digit] + (index in the tile - run start)``; writes of one digit are consecutive.
  ``render_downsweep_ms`` ranks the tile by a subgroup multisplit instead (Onesweep's warp-level
  ranking: 8 ballots match the keys of a subgroup's round that share a digit, per-subgroup
  digit counters in workgroup memory, no counting rounds); it needs subgroups of a known size
  range (``ms`` to 32 invocations; ``providers.wgpu_radix.subgroup_floor``). H200, float32 sort
  of 2^24: 214 us a pass against the counting rounds' 382 (upsweep 34 us, scan 15 us). A pass where
  a row's keys all share one digit copies the row in order instead (``_one_digit_pass``).

The workgroup scans (of the counters, of the digit totals, and in ``render_scan``) use the
subgroup extension where the provider has it (``sg``; it assumes full subgroups, as every driver
gives a workgroup of 256), else Hillis-Steele in workgroup memory. The per-key code is a loop
over the thread's ``KPT`` keys or, with ``unroll``, ``KPT`` copies (constant indices: the
per-thread arrays stay in registers whatever the driver's loop unrolling).

Rows are segments: partitions never cross a row, the counts are kept per row, so each row is
sorted in place within its ``[row * L, row * L + L)`` slots (slot ``row * L + pos``; row ``r`` is
``x[o, :, i]`` with ``r = o * I + i``). The first pass reads through the kernel's fused
prologue (``sk_load``), the last writes the result (``out0``), transposed back where ``I > 1``.

Why not decoupled look-back (CUB's Onesweep, one dispatch per pass): a workgroup there spins on
a flag that an earlier workgroup publishes, which needs forward progress between workgroups.
WebGPU guarantees none, and some adapters (Apple GPUs, CPU drivers such as lavapipe) do not run
a waiting workgroup's predecessor, so the sort could hang. Here no workgroup waits on another;
the dispatch boundaries order the phases.
"""

from __future__ import annotations

import re

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE, WGSL_TYPE
from .wgsl import WORKGROUP, Rendered, _Gen
from .wgsl_lib import helpers_for
from .wgsl_parts import store_value
from .wgsl_sort import Shader, _load_fn, sort_key, storage_decls

DIGITS = 256                # 8-bit digits
COUNTERS = 8 * WORKGROUP    # per-thread 16-bit counter pairs of the 4-bit local rounds
HIST_COPIES = 4             # upsweep: histogram copies (threads lid % 4 share one), fewer atomic collisions
assert WORKGROUP == DIGITS, "the radix kernels give one digit to each thread"


def key_bits(dtype: np.dtype) -> int:
    """Significant bits of the radix key of ``dtype``."""
    if dtype == np.bool_:
        return 1
    return 32 if dtype.itemsize == 4 else 8 * dtype.itemsize


def passes(dtype: np.dtype) -> int:
    """8-bit digit passes over ``dtype``'s key."""
    return -(-key_bits(dtype) // 8)


def raw_type(dtype: np.dtype) -> str:
    """The scratch type holding an element's raw bits."""
    return "u64" if dtype.itemsize == 8 else "u32"


def raw_bytes(dtype: np.dtype) -> int:
    return 8 if dtype.itemsize == 8 else 4


def padded(n: int) -> int:
    """Workgroup-memory words of ``n`` items with one spare word every 32 (``rx_pd``)."""
    return n + n // 32


def downsweep_bytes(dtype: np.dtype, kpt: int, values: bool) -> int:
    """Workgroup memory of ``render_downsweep`` with ``kpt`` keys per thread."""
    tp = padded(WORKGROUP * kpt)
    return tp * raw_bytes(dtype) + (tp * 4 if values else 0) + padded(COUNTERS) * 4 + SCAN_WORDS * 4 + 3 * DIGITS * 4


def key_fns(dtype: np.dtype, descending: bool) -> str:
    """``rk_raw`` (value -> raw bits), ``rk_val`` (raw bits -> value), ``sk_key`` (the order key)
    and ``rx_digit(raw, shift)`` (8 bits of the key)."""
    r = raw_type(dtype)
    t = "bool" if dtype == np.bool_ else WGSL_TYPE[dtype]
    if dtype == np.bool_:
        raw, val = "select(0u, 1u, v)", "r != 0u"
    elif dtype.kind == "u":
        raw, val = "v", "r"
    else:
        raw, val = f"bitcast<{r}>(v)", f"bitcast<{t}>(r)"
    fns = [f"fn rk_raw(v: {t}) -> {r} {{ return {raw}; }}", f"fn rk_val(r: {r}) -> {t} {{ return {val}; }}"]
    bits = key_bits(dtype)
    if bits >= 32:
        fns.append(sort_key(dtype, descending))
    else:
        mask = (1 << bits) - 1
        if dtype == np.bool_:
            body = "select(0u, 1u, v)"
        elif dtype.kind == "i":
            body = f"u32(v + {1 << (bits - 1)}) & {mask}u"
        else:
            body = f"v & {mask}u"
        flip = f" ^ {mask}u" if descending else ""
        fns.append(f"fn sk_key(v: {t}) -> u32 {{ return ({body}){flip}; }}")
    lit = "255lu" if r == "u64" else "255u"
    fns.append(f"fn rx_digit(r: {r}, sh: u32) -> u32 {{ return u32((sk_key(rk_val(r)) >> sh) & {lit}); }}")
    return "\n".join(fns)


_PAD = "fn rx_pd(i: u32) -> u32 { return i + (i >> 5u); }"

# An exclusive scan of one u32 per thread across the workgroup, in ``lid`` order: Hillis-Steele
# in ``rx_sc`` (18 barriers), or with the subgroup extension (4 barriers): each thread scans the
# value of position ``sgid * sgs + sgi`` (a permutation of the workgroup when subgroups are full,
# whatever the driver's mapping of ``lid`` to subgroups), the subgroups' sums through ``rx_sg``.
_SCAN = f"""struct RxScan {{ ex: u32, tot: u32 }}

fn rx_scan(lid: u32, v: u32) -> RxScan {{
  rx_sc[lid] = v;
  workgroupBarrier();
  var x = v;
  for (var o = 1u; o < {WORKGROUP}u; o = o << 1u) {{
    if (lid >= o) {{ x = x + rx_sc[lid - o]; }}
    workgroupBarrier();
    rx_sc[lid] = x;
    workgroupBarrier();
  }}
  let tot = rx_sc[{WORKGROUP - 1}];
  workgroupBarrier();
  return RxScan(x - v, tot);
}}"""

_SCAN_SG = """struct RxScan { ex: u32, tot: u32 }

var<private> rx_sgi: u32;
var<private> rx_sgs: u32;
var<private> rx_sgid: u32;
var<private> rx_nsg: u32;

fn rx_scan(lid: u32, v: u32) -> RxScan {
  rx_sc[lid] = v;
  workgroupBarrier();
  let p = rx_sgid * rx_sgs + rx_sgi;
  let x = rx_sc[p];
  let inc = subgroupInclusiveAdd(x);
  if (rx_sgi == rx_sgs - 1u) { rx_sg[rx_sgid] = inc; }
  workgroupBarrier();
  var off = 0u;
  var tot = 0u;
  for (var s = 0u; s < rx_nsg; s = s + 1u) {
    let t = rx_sg[s];
    off = off + select(0u, t, s < rx_sgid);
    tot = tot + t;
  }
  rx_sc[p] = off + inc - x;
  workgroupBarrier();
  let r = RxScan(rx_sc[lid], tot);
  workgroupBarrier();
  return r;
}"""
SCAN_WORDS = WORKGROUP + WORKGROUP // 4     # rx_sc, and rx_sg (subgroups of 4 lanes or more)
SCAN_VPT = 8                                # render_scan (wg): consecutive counts per thread


def _head(sg: bool) -> list[str]:
    """The entry point's first lines (with the subgroup built-ins copied to ``rx_sg*`` when ``sg``)."""
    builtins = ["@builtin(workgroup_id) wid: vec3<u32>", "@builtin(num_workgroups) nwg: vec3<u32>",
                "@builtin(local_invocation_index) lid: u32"]
    if not sg:
        return [f"@compute @workgroup_size({WORKGROUP})", f"fn main({', '.join(builtins)}) {{"]
    builtins += ["@builtin(subgroup_invocation_id) sgi: u32", "@builtin(subgroup_size) sgs: u32",
                 "@builtin(subgroup_id) sgid: u32", "@builtin(num_subgroups) nsg: u32"]
    return [f"@compute @workgroup_size({WORKGROUP})", f"fn main({', '.join(builtins)}) {{",
            "  rx_sgi = sgi;", "  rx_sgs = sgs;", "  rx_sgid = sgid;", "  rx_nsg = nsg;"]


def _scan_decls(sg: bool) -> list[str]:
    decls = [f"var<workgroup> rx_sc: array<u32, {WORKGROUP}>;"]
    if sg:
        decls.append(f"var<workgroup> rx_sg: array<u32, {WORKGROUP // 4}>;")
    return decls


def _decls(kernel: Kernel, g: _Gen, roles: tuple[str, ...], raw: str, out_dt: np.dtype,
           writes: frozenset[str]) -> list[str]:
    types = {"kin": raw, "kout": raw, "vin": "u32", "vout": "u32", "cnt": "u32", "tot": "u32",
             "out": WGSL_STORAGE_TYPE[out_dt]}
    return storage_decls(kernel, g, roles, types, writes)


def _finish(kernel: Kernel, g: _Gen, fns: list[str], main: list[str], roles: tuple[str, ...],
            writes: frozenset[str]) -> Shader:
    dt = kernel.instrs[kernel.operands[0]].dtype
    body = "\n\n".join(fns) + "\n\n" + "\n".join(main)
    decls = _decls(kernel, g, roles, raw_type(dt), kernel.out_nodes[0].dtype, writes)
    source = "\n".join(decls) + "\n\n" + helpers_for(body) + "\n\n" + body + "\n"
    slots = sorted(g.slots, key=lambda sp: g.slots[sp])
    return Shader(Rendered(source, slots, g.wide, len(kernel.inputs), 1), roles)


def _row_setup(g: _Gen, tile: int, names: tuple[str, ...]) -> list[str]:
    """The ``prm`` extras and the workgroup's row, partition and key range ``[lo, hi)`` in its row."""
    ex = {name: g.slot(("extra", name)) for name in names}
    return [
        *(f"  let {name} = {slot};" for name, slot in ex.items()),
        "  let w = wid.y * nwg.x + wid.x;",
        "  if (w >= NW) { return; }",
        "  let row = w / PR;",
        "  let part = w % PR;",
        "  let rb = row * L;",
        "  let ro = (row / I) * L * I + row % I;",
        f"  let lo = part * TPP * {tile}u;",
        f"  let hi = min(lo + TPP * {tile}u, L);",
    ]


def _each(kpt: int, body: list[str], unroll: bool, ind: str) -> list[str]:
    """``body`` for ``k = 0 .. kpt - 1``: a WGSL loop, or ``kpt`` copies with ``k`` a literal
    (the per-thread arrays then have constant indices: registers on every driver)."""
    if not unroll:
        return [f"{ind}for (var k = 0u; k < {kpt}u; k = k + 1u) {{", *(f"{ind}  {x}" for x in body), f"{ind}}}"]
    out: list[str] = []
    for k in range(kpt):
        out += [f"{ind}{{", *(f"{ind}  " + re.sub(r"\bk\b", f"{k}u", x) for x in body), f"{ind}}}"]
    return out


def _key_load(src: str, e: str) -> str:
    """The raw key bits of tile element ``e``: from the scratch keys, or through the fused prologue."""
    return f"kin[rb + tb + {e}]" if src == "scratch" else f"rk_raw(sk_load(ro + (tb + {e}) * I))"


def _downsweep_io(src: str, dst: str, out_dt: np.dtype, vals: bool, e: str, k_ranked: str,
                  v_ranked: str) -> tuple[str, str, list[str]]:
    """(key load, value load, store lines) of a downsweep: element ``e`` read from scratch or through
    the prologue; the ranked key ``k_ranked`` (and position ``v_ranked``) stored to scratch or, in the
    last pass, as the result (the sorted value, or the position for ``argsort``)."""
    val = f"vin[rb + tb + {e}]" if src == "scratch" else f"tb + {e}"
    if dst == "scratch":
        store = [f"kout[t] = {k_ranked};", *([f"vout[t] = {v_ranked};"] if vals else [])]
    else:
        v = f"{WGSL_TYPE[out_dt]}({v_ranked})" if vals else store_value(out_dt, f"rk_val({k_ranked})")
        store = [f"out0[ro + (t - rb) * I] = {v};"]
    return _key_load(src, e), val, store


def _one_digit_pass(src: str, dst: str, out_dt: np.dtype, vals: bool, kpt: int, unroll: bool, r: str) -> list[str]:
    """Lines that end a downsweep whose row has every key on one digit this pass (``tot`` of a digit
    equal to the row's length: small integers' high bytes, labels, a constant row): the order stays, so
    the workgroup copies its keys (and values) in place, a tile's loads first."""
    key, val, store = _downsweep_io(src, dst, out_dt, vals, "e", "ck[k]", "cv[k]")
    e = f"let e = lid + k * {WORKGROUP}u;"
    ld = [e, f"if (e < n) {{ ck[k] = {key};" + (f" cv[k] = {val};" if vals else "") + " }"]
    st = [e, "if (e < n) {", "  let t = rb + tb + e;", *(f"  {x}" for x in store), "}"]
    return ["  if (lid == 0u) { rx_one = 0u; }", "  workgroupBarrier();",
            f"  if (tot[row * {DIGITS}u + lid] == L) {{ rx_one = 1u; }}",
            "  if (workgroupUniformLoad(&rx_one) != 0u) {",
            f"    var ck: array<{r}, {kpt}>;" + (f" var cv: array<u32, {kpt}>;" if vals else ""),
            f"    for (var tb = lo; tb < hi; tb = tb + {WORKGROUP * kpt}u) {{",
            f"      let n = min({WORKGROUP * kpt}u, hi - tb);", *_each(kpt, ld, unroll, "      "),
            *_each(kpt, st, unroll, "      "), "    }", "    return;", "  }"]


def render_upsweep(kernel: Kernel, src: str, kpt: int, unroll: bool = True) -> Shader:
    """Digit counts of each partition. ``src``: ``prologue`` or ``scratch`` (``kin``).
    ``prm`` extras: L, I, PR, TPP, NW, SH."""
    _axis, descending = kernel.attrs
    op_i = kernel.operands[0]
    dt = kernel.instrs[op_i].dtype
    r = raw_type(dt)
    g = _Gen(kernel)
    tile = WORKGROUP * kpt
    fns = [key_fns(dt, descending)]
    if src == "prologue":
        fns.append(_load_fn(g, op_i, "sk_load"))
    load = _key_load(src, "i")
    hist = HIST_COPIES * DIGITS
    main = [f"var<workgroup> rx_h: array<atomic<u32>, {hist}>;", "", *_head(False),
            *_row_setup(g, tile, ("L", "I", "PR", "TPP", "NW", "SH")),
            f"  for (var c = lid; c < {hist}u; c = c + {WORKGROUP}u) {{ atomicStore(&rx_h[c], 0u); }}",
            "  workgroupBarrier();",
            f"  let cp = (lid % {HIST_COPIES}u) * {DIGITS}u;",
            f"  var a: array<{r}, {kpt}>;",
            f"  for (var tb = lo; tb < hi; tb = tb + {tile}u) {{",
            f"    let n = min({tile}u, hi - tb);",
            # all loads first (in flight together), then the counting
            *_each(kpt, [f"let i = lid + k * {WORKGROUP}u;", f"if (i < n) {{ a[k] = {load}; }}"], unroll, "    "),
            *_each(kpt, [f"if (lid + k * {WORKGROUP}u < n) {{ atomicAdd(&rx_h[cp + rx_digit(a[k], SH)], 1u); }}"],
                   unroll, "    "),
            "  }",
            "  workgroupBarrier();",
            "  let c = " + " + ".join(f"atomicLoad(&rx_h[{j * DIGITS}u + lid])" for j in range(HIST_COPIES)) + ";",
            f"  cnt[(row * {DIGITS}u + lid) * PR + part] = c;", "}"]
    roles = ("inputs", "cnt", "wide") if src == "prologue" else ("kin", "cnt")
    return _finish(kernel, g, fns, main, roles, frozenset({"cnt"}))


def render_scan(kernel: Kernel, mode: str, sg: bool = False) -> Shader:
    """Exclusive scan of each of the ``NSEG`` segments of ``PR`` counts in ``cnt``, totals to ``tot``.
    ``mode``: ``wg`` (a workgroup per segment) or ``thread`` (a thread per segment); ``sg``: the
    workgroup scan with subgroup operations."""
    g = _Gen(kernel)
    ex = {name: g.slot(("extra", name)) for name in ("NSEG", "PR")}
    setup = [*(f"  let {name} = {slot};" for name, slot in ex.items()), "  let w = wid.y * nwg.x + wid.x;"]
    fns: list[str] = []
    if mode == "thread":
        main = [*_head(False), *setup,
                f"  let seg = w * {WORKGROUP}u + lid;",
                "  if (seg >= NSEG) { return; }",
                "  let base = seg * PR;",
                "  var acc = 0u;",
                "  for (var i = 0u; i < PR; i = i + 1u) {",
                "    let v = cnt[base + i];",
                "    cnt[base + i] = acc;",
                "    acc = acc + v;",
                "  }",
                "  tot[seg] = acc;",
                "}"]
    else:       # each thread scans SCAN_VPT consecutive counts of a chunk, one workgroup scan a chunk
        v = SCAN_VPT
        fns.append(_SCAN_SG if sg else _SCAN)
        main = [*_scan_decls(sg), "", *_head(sg), *setup,
                "  if (w >= NSEG) { return; }",
                "  let base = w * PR;",
                "  var carry = 0u;",
                f"  var a: array<u32, {v}>;",
                f"  for (var c = 0u; c < PR; c = c + {WORKGROUP * v}u) {{",
                f"    let i0 = c + lid * {v}u;",
                "    var sum = 0u;",
                *(f"    if (i0 + {k}u < PR) {{ a[{k}] = cnt[base + i0 + {k}u]; }} else {{ a[{k}] = 0u; }}\n"
                  f"    sum = sum + a[{k}];" for k in range(v)),
                "    let sr = rx_scan(lid, sum);",
                "    var acc = carry + sr.ex;",
                *(f"    if (i0 + {k}u < PR) {{ cnt[base + i0 + {k}u] = acc; }}\n"
                  f"    acc = acc + a[{k}];" for k in range(v)),
                "    carry = carry + sr.tot;",
                "  }",
                "  if (lid == 0u) { tot[w] = carry; }",
                "}"]
    return _finish(kernel, g, fns, main, ("cnt", "tot"), frozenset({"cnt", "tot"}))


def render_downsweep(kernel: Kernel, src: str, dst: str, kpt: int, unroll: bool = True,
                     sg: bool = False) -> Shader:
    """The stable scatter of one pass. ``src``: ``prologue`` or ``scratch`` (``kin``, ``vin``);
    ``dst``: ``scratch`` (``kout``, ``vout``) or ``final`` (``out0``); ``sg``: the workgroup scans
    with subgroup operations. ``prm`` extras: L, I, PR, TPP, NW, SH."""
    _axis, descending = kernel.attrs
    op_i = kernel.operands[0]
    dt = kernel.instrs[op_i].dtype
    out_dt = kernel.out_nodes[0].dtype
    r = raw_type(dt)
    vals = kernel.kind == "argsort"
    g = _Gen(kernel)
    tile = WORKGROUP * kpt
    tp = padded(tile)
    fns = [key_fns(dt, descending), _PAD, _SCAN_SG if sg else _SCAN]
    if src == "prologue":
        fns.append(_load_fn(g, op_i, "sk_load"))
    pad_key = "0xfffffffffffffffflu" if r == "u64" else "0xffffffffu"
    key, val, store = _downsweep_io(src, dst, out_dt, vals, "i", "rx_k[rx_pd(i)]", "rx_v[rx_pd(i)]")

    def each(body: list[str], ind: str = "    ") -> list[str]:
        return _each(kpt, body, unroll, ind)

    def if_vals(*lines: str) -> list[str]:
        return list(lines) if vals else []

    main = [f"var<workgroup> rx_k: array<{r}, {tp}>;",
            *if_vals(f"var<workgroup> rx_v: array<u32, {tp}>;"),
            f"var<workgroup> rx_c: array<u32, {padded(COUNTERS)}>;",
            *_scan_decls(sg),
            f"var<workgroup> rx_gb: array<u32, {DIGITS}>;",     # where the digit's next key goes
            f"var<workgroup> rx_ds: array<u32, {DIGITS}>;",     # the digit's run in the sorted tile
            f"var<workgroup> rx_de: array<u32, {DIGITS}>;", "var<workgroup> rx_one: u32;", "", *_head(sg),
            *_row_setup(g, tile, ("L", "I", "PR", "TPP", "NW", "SH")),
            *_one_digit_pass(src, dst, out_dt, vals, kpt, unroll, r),
            f"  let sr0 = rx_scan(lid, tot[row * {DIGITS}u + lid]);",
            f"  rx_gb[lid] = rb + sr0.ex + cnt[(row * {DIGITS}u + lid) * PR + part];",
            "  rx_ds[lid] = 0u;",
            "  rx_de[lid] = 0u;",
            f"  var x: array<{r}, {kpt}>;",      # this thread's keys (and positions)
            *if_vals(f"  var y: array<u32, {kpt}>;"),
            f"  var u: array<u32, {kpt}>;",      # a key's counter slot, 16-bit half and rank; then its place
            f"  var gd: array<u32, {kpt}>;",     # a key's digit in the scatter
            f"  let j = lid * {kpt}u;",
            f"  for (var tb = lo; tb < hi; tb = tb + {tile}u) {{",
            f"    let n = min({tile}u, hi - tb);",
            "    workgroupBarrier();",
            # load the tile, coalesced (item i = k * 256 + lid); the keys past n sort last
            *each([f"let i = lid + k * {WORKGROUP}u;", f"x[k] = {pad_key};", *if_vals("y[k] = 0u;"),
                   f"if (i < n) {{ x[k] = {key};" + (f" y[k] = {val};" if vals else "") + " }"]),
            *each([f"let i = lid + k * {WORKGROUP}u;", "rx_k[rx_pd(i)] = x[k];", *if_vals("rx_v[rx_pd(i)] = y[k];")]),
            "    workgroupBarrier();",
            # two stable 4-bit counting rounds in workgroup memory; thread lid holds items j + k
            "    for (var q = 0u; q < 8u; q = q + 4u) {",
            *(f"      rx_c[rx_pd({m * WORKGROUP}u + lid)] = 0u;" for m in range(8)),
            *each(["x[k] = rx_k[rx_pd(j + k)];",
                   *if_vals("y[k] = rx_v[rx_pd(j + k)];"),
                   "let nb = select((rx_digit(x[k], SH) >> q) & 15u, 15u, j + k >= n);",
                   "let c = rx_pd(((nb & 7u) << 8u) + lid);",
                   "let h = (nb >> 3u) << 4u;",
                   "let v = rx_c[c];",
                   "rx_c[c] = v + (1u << h);",
                   "u[k] = (c << 16u) | ((nb >> 3u) << 15u) | ((v >> h) & 0x7fffu);"], "      "),
            "      workgroupBarrier();",
            *(f"      let e{m} = rx_c[rx_pd(lid * 8u + {m}u)];" for m in range(8)),
            "      let s = rx_scan(lid, " + " + ".join(f"e{m}" for m in range(8)) + ");",
            "      var acc = s.ex;",
            *(f"      rx_c[rx_pd(lid * 8u + {m}u)] = acc;\n      acc = acc + e{m};" for m in range(8)),
            "      workgroupBarrier();",
            "      let lt = s.tot & 0xffffu;",     # keys of nibbles 0..7: before those of 8..15
            *each(["let hb = (u[k] >> 15u) & 1u;",
                   "u[k] = ((rx_c[u[k] >> 16u] >> (hb << 4u)) & 0xffffu) + select(0u, lt, hb != 0u)"
                   " + (u[k] & 0x7fffu);"],
                  "      "),
            *each(["rx_k[rx_pd(u[k])] = x[k];", *if_vals("rx_v[rx_pd(u[k])] = y[k];")], "      "),
            "      workgroupBarrier();",
            "    }",
            # where each digit's run starts and ends in the sorted tile
            *each([f"let i = lid + k * {WORKGROUP}u;",
                   "if (i < n) {",
                   "  let gk = rx_digit(rx_k[rx_pd(i)], SH);",
                   "  gd[k] = gk;",
                   "  if (i == 0u || rx_digit(rx_k[rx_pd(i - 1u)], SH) != gk) { rx_ds[gk] = i; }",
                   "  if (i + 1u == n || rx_digit(rx_k[rx_pd(i + 1u)], SH) != gk) { rx_de[gk] = i + 1u; }",
                   "}"]),
            "    workgroupBarrier();",
            *each([f"let i = lid + k * {WORKGROUP}u;",
                   "if (i < n) {",
                   "  let t = rx_gb[gd[k]] + i - rx_ds[gd[k]];",
                   *(f"  {x}" for x in store),
                   "}"]),
            "    workgroupBarrier();",
            "    rx_gb[lid] = rx_gb[lid] + rx_de[lid] - rx_ds[lid];",
            "    rx_ds[lid] = 0u;",
            "    rx_de[lid] = 0u;",
            "  }",
            "}"]
    roles: list[str] = ["inputs"] if src == "prologue" else ["kin", *if_vals("vin")]
    roles += ["cnt", "tot"]
    roles += ["kout", *if_vals("vout")] if dst == "scratch" else ["out"]
    if src == "prologue":
        roles.append("wide")
    return _finish(kernel, g, fns, main, tuple(roles), frozenset({"kout", "vout", "out"}))


def hist_words(ms: int) -> int:
    """Words of ``render_downsweep_ms``'s per-subgroup histograms: ``256 / ms`` subgroups at most,
    two 16-bit digit counters a word."""
    return (WORKGROUP // ms) * (DIGITS // 2)


def downsweep_ms_bytes(dtype: np.dtype, kpt: int, values: bool, ms: int) -> int:
    """Workgroup memory of ``render_downsweep_ms`` with ``kpt`` keys per thread."""
    tile = WORKGROUP * kpt
    return tile * raw_bytes(dtype) + (tile * 4 if values else 0) + hist_words(ms) * 4 + SCAN_WORDS * 4 \
        + 3 * DIGITS * 4


def render_downsweep_ms(kernel: Kernel, src: str, dst: str, kpt: int, ms: int, unroll: bool = True) -> Shader:
    """The stable scatter of one pass, ranked by a subgroup multisplit (Onesweep's warp-level
    ranking) for subgroups of ``ms`` to 32 invocations (the ballots' first word).

    Subgroup ``s`` (``subgroup_id``) takes the tile's keys ``[s * sgs * KPT, (s + 1) * sgs * KPT)``,
    lane ``i`` key ``s * sgs * KPT + k * sgs + i`` of round ``k`` (coalesced loads). In each round
    the lanes holding the same digit find each other with 8 ballots (one per digit bit); the lowest
    of them adds their number to the subgroup's counter of the digit (16-bit halves of
    ``rx_h``, atomics in workgroup memory) and hands the old count to the others (a shuffle):
    a key's rank among its subgroup's keys of its digit is that count plus its peers on lower
    lanes. Then a scan over the subgroups per digit, a workgroup scan of the digit totals, and
    each key goes to its place in the tile sorted by the digit (``rx_k``, ``rx_v``). The scatter
    reads the sorted tile in order: consecutive threads write consecutive addresses within a
    digit's run. ``prm`` extras: L, I, PR, TPP, NW, SH."""
    _axis, descending = kernel.attrs
    op_i = kernel.operands[0]
    dt = kernel.instrs[op_i].dtype
    out_dt = kernel.out_nodes[0].dtype
    r = raw_type(dt)
    vals = kernel.kind == "argsort"
    g = _Gen(kernel)
    tile = WORKGROUP * kpt
    nh = hist_words(ms)
    fns = [key_fns(dt, descending), _SCAN_SG]
    if src == "prologue":
        fns.append(_load_fn(g, op_i, "sk_load"))
    key, val, store = _downsweep_io(src, dst, out_dt, vals, "e", "kk", "rx_v[i]")

    def each(body: list[str], ind: str = "    ") -> list[str]:
        return _each(kpt, body, unroll, ind)

    def if_vals(*lines: str) -> list[str]:
        return list(lines) if vals else []

    bits = key_bits(dt)
    ballots: list[str] = []
    for b in range(min(bits, 8)):
        ballots += [f"let b{b} = subgroupBallot((d & {1 << b}u) != 0u).x;",
                    f"pm = pm & select(~b{b}, b{b}, (d & {1 << b}u) != 0u);"]
    clear = f"  for (var c = lid; c < {nh}u; c = c + {WORKGROUP}u) {{ atomicStore(&rx_h[c], 0u); }}"
    main = [f"var<workgroup> rx_k: array<{r}, {tile}>;",
            *if_vals(f"var<workgroup> rx_v: array<u32, {tile}>;"),
            f"var<workgroup> rx_h: array<atomic<u32>, {nh}>;",
            *_scan_decls(True),
            f"var<workgroup> rx_tt: array<u32, {DIGITS}>;",     # the digit's keys in the tile
            f"var<workgroup> rx_ds: array<u32, {DIGITS}>;",     # the digit's run in the sorted tile
            f"var<workgroup> rx_bs: array<u32, {DIGITS}>;",     # where the run's item 0 would go
            "var<workgroup> rx_one: u32;",
            "", *_head(True),
            *_row_setup(g, tile, ("L", "I", "PR", "TPP", "NW", "SH")),
            *_one_digit_pass(src, dst, out_dt, vals, kpt, unroll, r),
            f"  let sr0 = rx_scan(lid, tot[row * {DIGITS}u + lid]);",
            f"  var gb = rb + sr0.ex + cnt[(row * {DIGITS}u + lid) * PR + part];",   # digit lid's next place
            clear,
            f"  var x: array<{r}, {kpt}>;",
            *if_vals(f"  var y: array<u32, {kpt}>;"),
            f"  var u: array<u32, {kpt}>;",      # a key's digit << 16 | its rank in its subgroup's keys of the digit
            f"  let sb = rx_sgid * rx_sgs * {kpt}u;",
            "  let lt = (1u << rx_sgi) - 1u;",
            "  let hs = rx_sgid * 128u;",
            f"  for (var tb = lo; tb < hi; tb = tb + {tile}u) {{",
            f"    let n = min({tile}u, hi - tb);",
            "    workgroupBarrier();",
            *each(["let e = sb + k * rx_sgs + rx_sgi;",
                   "if (e < n) { x[k] = " + key + ";" + (f" y[k] = {val};" if vals else "") + " }"]),
            *each(["let e = sb + k * rx_sgs + rx_sgi;",
                   "let ok = e < n;",
                   "let d = select(0u, rx_digit(x[k], SH), ok);",
                   "var pm = subgroupBallot(ok).x;",      # the lanes of this round with the key's digit
                   *ballots,
                   "let ld = select(0u, firstTrailingBit(pm), pm != 0u);",
                   "let hh = (d >> 7u) << 4u;",
                   "var old = 0u;",
                   "if (ok && rx_sgi == ld) { old = atomicAdd(&rx_h[hs + (d & 127u)], countOneBits(pm) << hh); }",
                   "let ob = subgroupShuffle(old, ld);",
                   "u[k] = (d << 16u) | (((ob >> hh) & 0xffffu) + countOneBits(pm & lt));"]),
            "    workgroupBarrier();",
            "    if (lid < 128u) {",      # per digit: exclusive scan over the subgroups (both halves at once)
            "      var acc = 0u;",
            "      for (var s = 0u; s < rx_nsg; s = s + 1u) {",
            "        let v = atomicLoad(&rx_h[s * 128u + lid]);",
            "        atomicStore(&rx_h[s * 128u + lid], acc);",
            "        acc = acc + v;",
            "      }",
            "      rx_tt[lid] = acc & 0xffffu;",
            "      rx_tt[lid + 128u] = acc >> 16u;",
            "    }",
            "    workgroupBarrier();",
            "    let tt = rx_tt[lid];",
            "    let sr = rx_scan(lid, tt);",
            "    rx_ds[lid] = sr.ex;",
            "    rx_bs[lid] = gb - sr.ex;",
            "    gb = gb + tt;",
            "    workgroupBarrier();",
            *each(["let e = sb + k * rx_sgs + rx_sgi;",
                   "if (e < n) {",
                   "  let d = u[k] >> 16u;",
                   "  let p = rx_ds[d] + ((atomicLoad(&rx_h[hs + (d & 127u)]) >> ((d >> 7u) << 4u)) & 0xffffu)"
                   " + (u[k] & 0xffffu);",
                   "  rx_k[p] = x[k];",
                   *if_vals("  rx_v[p] = y[k];"),
                   "}"]),
            "    workgroupBarrier();",
            "  " + clear,
            *each([f"let i = lid + k * {WORKGROUP}u;",
                   "if (i < n) {",
                   "  let kk = rx_k[i];",
                   "  let t = rx_bs[rx_digit(kk, SH)] + i;",
                   *(f"  {x}" for x in store),
                   "}"]),
            "  }",
            "}"]
    roles: list[str] = ["inputs"] if src == "prologue" else ["kin", *if_vals("vin")]
    roles += ["cnt", "tot"]
    roles += ["kout", *if_vals("vout")] if dst == "scratch" else ["out"]
    if src == "prologue":
        roles.append("wide")
    return _finish(kernel, g, fns, main, tuple(roles), frozenset({"kout", "vout", "out"}))
