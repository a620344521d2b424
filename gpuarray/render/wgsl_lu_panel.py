"""WGSL for the LU panel with its rows in named registers (``providers/wgpu_linalg.py`` runs it).

``lu_panel_reg_source`` performs ``lu_panel_source``'s operations (``wgsl_linalg_blocked.py``: the same
8-column chunks, left-looking between them, the same pivot search, exchanges, scaling and rank-1
updates in the same order, so the factors are bitwise the same) with every index into a thread's
rows and columns known when the shader is generated: the column loop of a chunk and the rows of a
thread are unrolled here, the values are named registers ``x<q>_<c>`` and the pivot row is picked
out by comparisons; the pivot search's shuffle steps are unrolled, each behind a test of the
subgroup's size (``UNROLL_PIVOT``; H200 ``solve`` float32 4096 46.7 -> 41.6 ms).
``lu_panel_source``'s private array, indexed by the pivot's row and the loop's column at run time,
is kept in local memory by the compilers; this one stays in registers. For
panels of at most ``RPT * threads`` rows (``RPT`` = 4: 1024 rows with 256 threads, 4096 with 1024).

>>> "@workgroup_size(1024)" in lu_panel_reg_source("f32", 1024)
True
"""

from __future__ import annotations

import functools
import os

from .wgsl_linalg import _shader, unit_lower_sums

CH = 8          # columns of a chunk (``wgsl_linalg_blocked.CHUNK``)
RPT = 4         # rows a thread
SQ = {256: 16, 1024: 32}
# GPUARRAY_LU_UNROLL_PIVOT=0: the pivot search's shuffle steps as a loop over the subgroup's size instead of
# unrolled steps each behind a test of it (subgroups of up to 128 invocations)
UNROLL_PIVOT = os.environ.get("GPUARRAY_LU_UNROLL_PIVOT", "1") != "0"
# GPUARRAY_LU_UNROLL_CHUNK=0: the chunk's triangular solve of U as a loop over workgroup memory instead of a
# column's values in named registers, for dispatches of at most CHUNK_REG_GROUPS matrices
UNROLL_CHUNK = os.environ.get("GPUARRAY_LU_UNROLL_CHUNK", "1") != "0"
CHUNK_REG_GROUPS = 128
_SG_BUILTINS = ("@builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) sgi: u32,\n"
                "        @builtin(subgroup_size) sgs: u32, @builtin(subgroup_id) sgid: u32, "
                "@builtin(num_subgroups) nsg: u32)")


def _shuffle(t: str, v: str) -> str:
    """``subgroupShuffleXor(v, so)`` for ``t`` (float64 as its two 32-bit halves)."""
    if t == "f32":
        return f"subgroupShuffleXor({v}, so)"
    return (f"bitcast<f64>((u64(subgroupShuffleXor(u32(bitcast<u64>({v}) >> 32u), so)) << 32u) | "
            f"u64(subgroupShuffleXor(u32(bitcast<u64>({v}) & 0xfffffffflu), so)))")


def _sg_pivot(t: str) -> list[str]:
    """The pivot ``(pv, px)``: the largest ``best`` of the workgroup, the lowest row among equals, by
    shuffles within each subgroup, then every thread over the subgroups' results (``sgs`` at a time)."""
    def butterfly(v: str, x: str) -> list[str]:
        step = [f"let ov = {_shuffle(t, v)};", f"let ox = subgroupShuffleXor({x}, so);",
                f"if (ov > {v} || (ov == {v} && ox < {x})) {{ {v} = ov; {x} = ox; }}"]
        if UNROLL_PIVOT:        # the same steps, each behind a uniform test of the subgroup's size
            return [f"  if ({so}u < sgs) {{ let so = {so}u; {' '.join(step)} }}" for so in (64, 32, 16, 8, 4, 2, 1)]
        return ["  var so = sgs >> 1u;", "  loop {", "    if (so == 0u) { break; }", *("    " + x for x in step),
                "    so = so >> 1u;", "  }"]
    return ["  var bv = best;", "  var bx = bi;", *butterfly("bv", "bx"),
            "  if (sgi == 0u) { rv[sgid] = bv; ri[sgid] = bx; }",
            "  workgroupBarrier();",
            "  var pv = T(-1);",
            "  var px = 0xFFFFFFFFu;",
            "  for (var q0 = 0u; q0 < nsg; q0 += sgs) {",
            "    let q = q0 + sgi;",
            "    if (q < nsg && (rv[q] > pv || (rv[q] == pv && ri[q] < px))) { pv = rv[q]; px = ri[q]; }",
            "  }",
            "  {",
            *["  " + x for x in butterfly("pv", "px")],
            "  }"]


def _chunk_column(jj: int, threads: int, t: str, sg: bool, rpt: int) -> list[str]:
    """Lines for column ``c0 + jj`` of the chunk: pivot search, exchange, scaling, update."""
    sq = SQ.get(threads, 0)
    xs = [[f"x{q}_{c}" for c in range(CH)] for q in range(rpt)]
    out = [f"if ({jj}u < cw) {{",
           f"  let j = c0 + {jj}u;"]
    if sg:
        out += _sg_pivot(t)
    else:
        out += _shared_pivot(sq)
    out += ["  if (pv < T(0) || px < j) { px = j; }",
            f"  let pq = px / {threads}u;",
            f"  let jq = j / {threads}u;",
            f"  if (lid == px % {threads}u) {{"]
    for q in range(rpt):
        out.append(f"    if (pq == {q}u) {{ " + " ".join(f"prow[{c}] = {xs[q][c]};" for c in range(CH)) + " }")
    return _column_rest(out, jj, threads, xs, sg)


def _shared_pivot(sq: int) -> list[str]:
    """The pivot ``(pv, px)`` through workgroup memory: ``sq`` threads each over ``sq`` of ``cv``, then
    every thread over their ``sq`` results (``lu_panel_source``'s two levels)."""
    return ["  workgroupBarrier();",
           f"  if (lid < {sq}u) {{",
           f"    var bv = cv[lid * {sq}u];",
           f"    var bx = ci[lid * {sq}u];",
           f"    for (var q = 1u; q < {sq}u; q++) {{",
           f"      let v = cv[lid * {sq}u + q];",
           f"      let x2 = ci[lid * {sq}u + q];",
           "      if (v > bv || (v == bv && x2 < bx)) { bv = v; bx = x2; }",
           "    }",
           "    rv[lid] = bv;",
           "    ri[lid] = bx;",
           "  }",
           "  workgroupBarrier();",
           "  var pv = rv[0];",
           "  var px = ri[0];",
           f"  for (var q = 1u; q < {sq}u; q++) {{",
           "    let v = rv[q];",
           "    let x2 = ri[q];",
           "    if (v > pv || (v == pv && x2 < px)) { pv = v; px = x2; }",
           "  }"]


def _column_rest(out: list[str], jj: int, threads: int, xs: list[list[str]], sg: bool) -> list[str]:
    """``out`` (the pivot found, its row in ``prow``) followed by the exchange, scaling and update."""
    rpt = len(xs)
    out += ["  }", f"  if (lid == j % {threads}u) {{"]
    for q in range(rpt):
        out.append(f"    if (jq == {q}u) {{ " + " ".join(f"srow[{c}] = {xs[q][c]};" for c in range(CH)) + " }")
    out += ["  }",
            "  if (lid == 0u) {",
            "    piv[pb + j] = k + px;",
            "    if (pv == T(0)) { W[prm[5]] = T(1); }",
            "  }",
            "  workgroupBarrier();",
            # the exchange of the columns outside the chunk (nobody reads them before the chunk ends)
            # after the barrier, where it overlaps the update instead of delaying the barrier
            "  if (lid < w && (lid < c0 || lid >= c0 + cw) && px != j) {",
            "    let a1 = base + j * ld + lid;",
            "    let a2 = base + px * ld + lid;",
            "    let v = W[a1];",
            "    W[a1] = W[a2];",
            "    W[a2] = v;",
            "  }",
            f"  if (lid == px % {threads}u) {{"]
    for q in range(rpt):
        out.append(f"    if (pq == {q}u) {{ " + " ".join(f"{xs[q][c]} = srow[{c}];" for c in range(CH)) + " }")
    out += ["  }", f"  if (lid == j % {threads}u) {{"]
    for q in range(rpt):
        out.append(f"    if (jq == {q}u) {{ " + " ".join(f"{xs[q][c]} = prow[{c}];" for c in range(CH)) + " }")
    out += ["  }",
            f"  let pval = prow[{jj}];",
            "  let sc = select(T(1) / pval, T(1), pval == T(0));",
            *[f"  let pr{c} = prow[{c}];" for c in range(jj + 1, CH)],
            "  best = T(-1);",
            "  bi = j + 1u;"]
    for q in range(rpt):
        out += [f"  if (lid + {q * threads}u < m && lid + {q * threads}u > j) {{",
                f"    let l = {xs[q][jj]} * sc;",
                f"    {xs[q][jj]} = l;"]
        out += [f"    if ({c}u < cw) {{ {xs[q][c]} = {xs[q][c]} - l * pr{c}; }}" for c in range(jj + 1, CH)]
        if jj + 1 < CH:
            out.append(f"    if ({jj + 1}u < cw && abs({xs[q][jj + 1]}) > best) "
                       f"{{ best = abs({xs[q][jj + 1]}); bi = lid + {q * threads}u; }}")
        out.append("  }")
    out += ([] if sg else ["  cv[lid] = best;", "  ci[lid] = bi;"]) + ["}"]
    return out


def _chunk_solve(regs: bool) -> list[str]:
    """The chunk's ``U`` rows ``L11^-1 U`` (unit lower ``Lt``, ``c0`` rows of ``Ut``) for a thread's column:
    with ``regs``, for each ``c0`` a panel of at most 32 columns has (8, 16, 24) the column's values in named
    registers and each row's sum written out, the loop's operations in its order; the loop otherwise."""
    loop = ["      for (var p = 0u; p < c0; p++) {",
            f"        var s = Ut[p * {CH}u + lid];",
            f"        for (var q = 0u; q < p; q++) {{ s = s - Lt[p * c0 + q] * Ut[q * {CH}u + lid]; }}",
            f"        Ut[p * {CH}u + lid] = s;",
            "      }"]
    if not regs:
        return loop
    out: list[str] = []
    for c in range(CH, 32, CH):
        out.append(f"      {'if' if c == CH else '} else if'} (c0 == {c}u) {{")
        out += [f"        var u{p} = Ut[{p * CH}u + lid];" for p in range(c)]
        out += unit_lower_sums("u", "Lt", c, c, "        ")
        out += [f"        Ut[{p * CH}u + lid] = u{p};" for p in range(1, c)]
    return out + ["      } else {", *("  " + x for x in loop), "      }"]


@functools.cache
def lu_panel_reg_source(t: str, threads: int = 256, sg: bool = False, rpt: int = RPT,
                        chunk_regs: bool = False) -> str:
    """``prm``: [n, ld, k, w, bs, FLAG] as ``lu_panel_source``'s: LU of the panel of columns
    ``k .. k + w`` (``w <= 32``), rows ``k .. n`` (at most ``RPT * threads``), one workgroup of
    ``threads`` (256 or 1024) a matrix; pivots to ``piv[b * n + k + j]``. ``sg``: the pivot search
    by subgroup shuffles (one barrier a column instead of two, no serial scan of ``SQ`` values; any
    power-of-two ``threads`` then, else 256 or 1024). ``rpt``: rows a thread. ``chunk_regs``: the chunks'
    triangular solves in named registers (``_chunk_solve``: a panel's few workgroups wait on that chain; H200
    ``solve`` float32 4096 39.3 -> 38.3 ms; stacks of many small matrices, whose occupancy it lowers, keep the
    loop)."""
    if not sg and threads not in SQ:
        raise ValueError(f"the workgroup-memory pivot search takes 256 or 1024 threads, not {threads}")
    sq = SQ.get(threads, 0)
    pivots = (f"var<workgroup> rv: array<T, {threads}>;\nvar<workgroup> ri: array<u32, {threads}>;\n" if sg else
              f"var<workgroup> cv: array<T, {threads}>;\nvar<workgroup> ci: array<u32, {threads}>;\n"
              f"var<workgroup> rv: array<T, {sq}>;\nvar<workgroup> ri: array<u32, {sq}>;\n")
    shared = pivots + (f"var<workgroup> prow: array<T, {CH}>;\nvar<workgroup> srow: array<T, {CH}>;\n"
                       f"var<workgroup> Ut: array<T, {32 * CH}>;\nvar<workgroup> Lt: array<T, {32 * 32}>;\n")
    xs = [[f"x{q}_{c}" for c in range(CH)] for q in range(rpt)]
    lines = ["let n = prm[0];", "let ld = prm[1];", "let k = prm[2];", "let w = prm[3];",
             "let base = id * prm[4] + k * ld + k;", "let pb = id * n + k;", "let m = n - k;"]
    lines += [f"var {xs[q][c]} = T(0);" for q in range(rpt) for c in range(CH)]
    lines += ["for (var c0 = 0u; c0 < w; c0 += {CH}u) {".replace("{CH}", str(CH)),
              f"  let cw = min({CH}u, w - c0);",
              "  if (c0 > 0u) {",
              f"    for (var e = lid; e < c0 * c0; e += {threads}u) {{ Lt[e] = W[base + (e / c0) * ld + e % c0]; }}",
              f"    for (var e = lid; e < c0 * {CH}u; e += {threads}u) {{",
              f"      if (e % {CH}u < cw) {{ Ut[e] = W[base + (e / {CH}u) * ld + c0 + e % {CH}u]; }}",
              "    }",
              "    workgroupBarrier();",
              "    if (lid < cw) {",
              *_chunk_solve(chunk_regs),
              "    }",
              "    workgroupBarrier();",
              f"    for (var e = lid; e < c0 * {CH}u; e += {threads}u) {{",
              f"      if (e % {CH}u < cw) {{ W[base + (e / {CH}u) * ld + c0 + e % {CH}u] = Ut[e]; }}",
              "    }",
              "  }",
              "  var best = T(-1);",
              "  var bi = c0;"]
    for q in range(rpt):
        r = f"lid + {q * threads}u"
        lines += [f"  if ({r} < m && {r} >= c0) {{",
                  f"    let row = base + ({r}) * ld;"]
        lines += [f"    if ({c}u < cw) {{ {xs[q][c]} = W[row + c0 + {c}u]; }}" for c in range(CH)]
        lines += ["    for (var p = 0u; p < c0; p++) {",
                  "      let l = W[row + p];"]
        lines += [f"      if ({c}u < cw) {{ {xs[q][c]} = {xs[q][c]} - l * Ut[p * {CH}u + {c}u]; }}" for c in range(CH)]
        lines += ["    }",
                  f"    if (abs({xs[q][0]}) > best) {{ best = abs({xs[q][0]}); bi = {r}; }}",
                  "  }"]
    if not sg:
        lines += ["  cv[lid] = best;", "  ci[lid] = bi;"]
    for jj in range(CH):
        lines += ["  " + x for x in _chunk_column(jj, threads, t, sg, rpt)]
    for q in range(rpt):
        r = f"lid + {q * threads}u"
        lines += [f"  if ({r} < m && {r} >= c0) {{",
                  f"    let row = base + ({r}) * ld + c0;"]
        lines += [f"    if ({c}u < cw) {{ W[row + {c}u] = {xs[q][c]}; }}" for c in range(CH)]
        lines += ["  }"]
    lines += ["  storageBarrier();", "  workgroupBarrier();", "}"]
    body = "".join("  " + x + "\n" for x in lines)
    src = _shader(t, ["W:read_write:T", "piv:read_write:u32"], body, shared, wg=threads)
    if sg:
        src = src.replace("@builtin(local_invocation_index) lid: u32)", _SG_BUILTINS, 1)
    return src
