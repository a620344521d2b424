"""Render the passes of a ``select`` kernel (radix selection of order statistics) as WGSL.

A ``select`` kernel has operands ``(x, ranks)``: ``x`` of shape ``(N,)`` (float32 / float64 /
int32 / uint32 / int64 / uint64) and ``ranks`` (int32, shape ``(R,)``). Its output, of ``x``'s
dtype and shape ``(R + 1,)``, holds the values of ``x`` at those ranks of NumPy's sort order
(NaN last; ``-0.0`` just before ``0.0``), ranks clamped to ``[0, N)``, then NaN where ``x`` holds a
NaN (0 otherwise). Each element's key is its order-preserving unsigned image (``se_key``: the
radix sort's, without merging the zeros: a NaN is all ones); the key at a rank is found digit by
digit from the top (MSD radix selection), with the state on the device:

- ``render_init`` (one workgroup): zeroes the counters ``cnt`` and writes each rank's state to
  ``st`` (4 words a rank: the key prefix found so far, low and high words, and the rank left
  within the keys that share it);
- per pass, from the top: ``render_hist``: each workgroup walks ``K`` elements a thread
  (grid-stride, ``UNROLL`` loads before their adds), counts the digit ``(key >> SH) & (2^B - 1)``
  in workgroup-memory bins (workgroup atomics) and adds each non-zero bin to ``cnt`` once
  (global atomics). The first pass counts every key in one histogram (and the NaNs in one more
  word); later passes count, for each rank, only the keys whose bits above the digit equal its
  prefix (``R`` histograms of ``2^B`` bins);
- ``render_find`` (one workgroup a rank): a scan of its histogram (``2^B / 256`` bins a
  thread, a workgroup scan of the sums) finds the bin that holds the rank left; the digit joins
  the prefix and the bins before it leave the rank. After the last pass the prefix is the key:
  its value goes to ``out0`` (``se_val``), and ``out0[R]`` says whether a NaN was counted.

No host readback between passes: the dispatch boundaries order them.

>>> KEY_BITS[np.dtype("float64")], FIRST_BITS
(64, 11)
"""

from __future__ import annotations

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE, WGSL_TYPE
from .wgsl import WORKGROUP, Rendered, _Gen
from .wgsl_lib import helpers_for
from .wgsl_scatter import used_inputs
from .wgsl_sort import _load_fn, storage_decls

SELECT_DTYPES = frozenset(np.dtype(d) for d in ("float32", "float64", "int32", "uint32", "int64", "uint64"))
KEY_BITS = {d: 8 * d.itemsize for d in SELECT_DTYPES}
HIST_WORDS = 4096           # workgroup-memory bins (16 KiB: WebGPU's minimum limit)
FIRST_BITS = 11             # digit of the first pass (2048 bins, one histogram for every rank)
STATE_WORDS = 4             # st words a rank: prefix low, prefix high, rank left, spare
UNROLL = 4                  # keys a thread loads before their adds (several loads in flight)

_HEAD = ("@compute @workgroup_size({wg})\n"
         "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
         "        @builtin(local_invocation_index) lid: u32) {{\n")


def _key_fns(dt: np.dtype) -> str:
    """``se_key(v) -> K`` (the order key), ``se_val(k) -> T`` (its inverse; NaN for a NaN key),
    ``se_pf(r) -> K`` (rank ``r``'s prefix from ``st``)."""
    k = "u64" if dt.itemsize == 8 else "u32"
    t = WGSL_TYPE[dt]
    sign = "0x8000000000000000lu" if k == "u64" else "0x80000000u"
    if dt.kind == "f":
        nan_above = "0x7ff0000000000000lu" if k == "u64" else "0x7f800000u"
        key = [f"fn se_key(v: {t}) -> {k} {{",
               f"  let b = bitcast<{k}>(v);",
               f"  if ((b & ~{sign}) > {nan_above}) {{ return ~{k}(0); }}",
               f"  return select(b | {sign}, ~b, (b & {sign}) != {k}(0));",
               "}"]
        val = f"fn se_val(k: {k}) -> {t} {{ return bitcast<{t}>(select(~k, k ^ {sign}, (k & {sign}) != {k}(0))); }}"
    elif dt.kind == "i":
        key = [f"fn se_key(v: {t}) -> {k} {{ return bitcast<{k}>(v) ^ {sign}; }}"]
        val = f"fn se_val(k: {k}) -> {t} {{ return bitcast<{t}>(k ^ {sign}); }}"
    else:
        key = [f"fn se_key(v: {t}) -> {k} {{ return v; }}"]
        val = f"fn se_val(k: {k}) -> {t} {{ return k; }}"
    w = STATE_WORDS
    pf = (f"fn se_pf(r: u32) -> {k} {{ return (u64(st[{w}u * r + 1u]) << 32u) | u64(st[{w}u * r]); }}"
          if k == "u64" else f"fn se_pf(r: u32) -> u32 {{ return st[{w}u * r]; }}")
    return "\n".join([*key, val, pf])


def _finish(kernel: Kernel, g: _Gen, decls: list[str], fns: list[str], main: str) -> Rendered:
    body = "\n\n".join(fns) + "\n\n" + main
    src = "\n".join(decls) + "\n\n" + helpers_for(body) + "\n\n" + body
    return Rendered(src, sorted(g.slots, key=lambda s: g.slots[s]), g.wide, len(kernel.inputs), 1)


def _x_dtype(kernel: Kernel) -> np.dtype:
    return kernel.instrs[kernel.operands[0]].dtype


def render_init(kernel: Kernel) -> tuple[Rendered, list[int]]:
    """Zero ``cnt[0, CN)``; rank ``r``'s state: prefix 0, rank ``clamp(ranks[r], 0, N - 1)``.
    Bindings: the inputs of the ranks' prologue, the 64-bit constants, ``cnt``, ``st``."""
    g = _Gen(kernel)
    n, nr, cn = (g.slot(("extra", s)) for s in ("N", "R", "CN"))
    fns = [_load_fn(g, kernel.operands[1], "se_rank")]
    main = _HEAD.format(wg=WORKGROUP) + "\n".join([
        f"  for (var i = lid; i < {cn}; i += {WORKGROUP}u) {{ cnt[i] = 0u; }}",
        f"  for (var r = lid; r < {nr}; r += {WORKGROUP}u) {{",
        f"    let k = u32(clamp(i32(se_rank(r)), 0, i32({n}) - 1));",
        f"    st[{STATE_WORDS}u * r] = 0u;",
        f"    st[{STATE_WORDS}u * r + 1u] = 0u;",
        f"    st[{STATE_WORDS}u * r + 2u] = k;",
        "  }",
        "}"])
    inputs = used_inputs(kernel, [kernel.operands[1]])
    decls = storage_decls(kernel, g, ("inputs", "wide", "cnt", "st"), {"cnt": "u32", "st": "u32"}, None, inputs)
    return _finish(kernel, g, decls, fns, main), inputs


def _hist_main(s: dict[str, str], k: str, nan: bool) -> str:
    """The counting pass's body: ``UNROLL`` keys loaded a step (loads in flight), then their adds."""
    loads, adds = [], []
    for u in range(UNROLL):
        loads += [f"      let e{u} = e + {u}u * stride;", f"      var k{u} = {k}(0);",
                  f"      let ok{u} = j + {u}u < {s['k']} && e{u} < {s['n']};",
                  f"      if (ok{u}) {{ k{u} = se_key(se_x(e{u})); }}"]
        adds.append(f"      if (ok{u}) {{ se_add(k{u}, nb); }}")
    add_fn = "\n".join([
        f"fn se_add(key: {k}, nb: u32) {{",
        f"  let d = u32(key >> {s['sh']}) & ((1u << {s['b']}) - 1u);",
        f"  if ({s['hi']} == 0u) {{",
        "    atomicAdd(&se_h[d], 1u);",
        *([f"    if (key == ~{k}(0) && {s['nanw']} != 0u) {{ atomicAdd(&se_h[nb], 1u); }}"] if nan else []),
        "  } else {",
        f"    let top = key >> {s['hi']};",
        f"    for (var r = 0u; r < {s['nr']}; r++) {{",
        f"      if (top == (se_pf(r) >> {s['hi']})) {{ atomicAdd(&se_h[(r << {s['b']}) + d], 1u); }}",
        "    }",
        "  }",
        "}"])
    return add_fn + "\n\n" + _HEAD.format(wg=WORKGROUP) + "\n".join([
        f"  let nb = {s['nr']} << {s['b']};",
        f"  let nw = nb + {s['nanw']};",
        f"  for (var i = lid; i < nw; i += {WORKGROUP}u) {{ atomicStore(&se_h[i], 0u); }}",
        "  workgroupBarrier();",
        "  let grp = wid.y * nwg.x + wid.x;",
        f"  if (grp < {s['g']}) {{",
        f"    let stride = {s['g']} * {WORKGROUP}u;",
        f"    var e = grp * {WORKGROUP}u + lid;",
        f"    for (var j = 0u; j < {s['k']}; j += {UNROLL}u) {{",
        *loads,
        *adds,
        f"      e += {UNROLL}u * stride;",
        "    }",
        "  }",
        "  workgroupBarrier();",
        f"  for (var i = lid; i < nw; i += {WORKGROUP}u) {{",
        "    let c = atomicLoad(&se_h[i]);",
        f"    if (c != 0u) {{ atomicAdd(&cnt[{s['coff']} + i], c); }}",
        "  }",
        "}"])


def render_hist(kernel: Kernel) -> tuple[Rendered, list[int]]:
    """One counting pass. ``prm`` extras: N, K (elements a thread), G (workgroups), SH (digit
    shift), B (digit bits), HI (0: the first pass, one histogram; else the shift of the bits
    compared with each rank's prefix), NR (histograms), NANW (1: count NaNs after the bins),
    COFF (where the bins start in ``cnt``). Bindings: the inputs of ``x``'s prologue, the 64-bit
    constants, ``cnt`` (atomic), ``st`` (read)."""
    dt = _x_dtype(kernel)
    k = "u64" if dt.itemsize == 8 else "u32"
    g = _Gen(kernel)
    s = {name.lower(): g.slot(("extra", name)) for name in ("N", "K", "G", "SH", "B", "HI", "NR", "NANW", "COFF")}
    fns = [f"var<workgroup> se_h: array<atomic<u32>, {HIST_WORDS}>;", _load_fn(g, kernel.operands[0], "se_x"),
           _key_fns(dt)]
    main = _hist_main(s, k, dt.kind == "f")
    inputs = used_inputs(kernel, [kernel.operands[0]])
    decls = storage_decls(kernel, g, ("inputs", "wide", "cnt", "st"), {"cnt": "atomic<u32>", "st": "u32"},
                          frozenset({"cnt"}), inputs)
    return _finish(kernel, g, decls, fns, main), inputs


def render_find(kernel: Kernel) -> Rendered:
    """Find each rank's digit in its histogram (one workgroup a rank). ``prm`` extras: R (ranks),
    SH, B, SHARED (1: one histogram for every rank), COFF, LAST (1: write the values to ``out0``), NANAT
    (the NaN count's word in ``cnt``). Bindings: ``cnt``, ``st``, ``out0``."""
    dt = _x_dtype(kernel)
    k = "u64" if dt.itemsize == 8 else "u32"
    t = WGSL_STORAGE_TYPE[dt]
    g = _Gen(kernel)
    nr, sh, b, shared, coff, last, nanat = (g.slot(("extra", n)) for n in
                                            ("R", "SH", "B", "SHARED", "COFF", "LAST", "NANAT"))
    w = STATE_WORDS
    nan_value = {"f32": "bitcast<f32>(0x7fc00000u)", "f64": "bitcast<f64>(0x7ff8000000000000lu)"}.get(t, f"{t}(0)")
    store_pf = [f"    st[{w}u * r] = u32(p & 0xfffffffflu);", f"    st[{w}u * r + 1u] = u32(p >> 32u);"] \
        if k == "u64" else [f"    st[{w}u * r] = p;"]
    fns = ["var<workgroup> se_s: array<u32, 256>;", _key_fns(dt)]
    main = _HEAD.format(wg=WORKGROUP) + "\n".join([
        f"  let nbin = 1u << {b};",
        "  let per = max(1u, nbin >> 8u);",
        "  let lo = lid * per;",
        "  let r = wid.x;                 // one workgroup a rank",
        f"  let base = {coff} + select(r << {b}, 0u, {shared} != 0u);",
        f"  let want = st[{w}u * r + 2u];",
        "  var sum = 0u;",
        "  for (var i = 0u; i < per; i++) {",
        "    if (lo + i < nbin) { sum += cnt[base + lo + i]; }",
        "  }",
        "  se_s[lid] = sum;",
        "  workgroupBarrier();",
        f"  for (var off = 1u; off < {WORKGROUP}u; off <<= 1u) {{",
        "    var v = 0u;",
        "    if (lid >= off) { v = se_s[lid - off]; }",
        "    workgroupBarrier();",
        "    se_s[lid] += v;",
        "    workgroupBarrier();",
        "  }",
        "  let incl = se_s[lid];",
        "  if (want >= incl - sum && want < incl) {",
        "    var acc = incl - sum;",
        "    var d = lo;",
        "    for (var i = 0u; i < per; i++) {",
        "      let c = cnt[base + lo + i];",
        "      if (want < acc + c) { d = lo + i; break; }",
        "      acc += c;",
        "    }",
        f"    let p = se_pf(r) | ({k}(d) << {sh});",
        *store_pf,
        f"    st[{w}u * r + 2u] = want - acc;",
        f"    if ({last} != 0u) {{ out0[r] = se_val(p); }}",
        "  }",
        f"  if ({last} != 0u && r == 0u && lid == 0u) {{",
        f"    out0[{nr}] = select({t}(0), {nan_value}, cnt[{nanat}] != 0u);",
        "  }",
        "}"])
    decls = storage_decls(kernel, g, ("cnt", "st", "out"), {"cnt": "u32", "st": "u32", "out": t},
                          frozenset({"st", "out"}), [])
    return _finish(kernel, g, decls, fns, main)


__all__ = ["SELECT_DTYPES", "KEY_BITS", "HIST_WORDS", "FIRST_BITS", "STATE_WORDS", "render_init", "render_hist",
           "render_find"]
