"""WGSL for the LU panel spread over several workgroups (``providers/wgpu_lu_mw.py`` runs it).

One workgroup factors a panel (``wgsl_lu_panel.py``) at one multiprocessor's pace: on the H200 a
float64 panel of 2048 x 32 took about 5 us a column, most of ``solve``'s time. Here the panel's rows
are spread over ``P`` workgroups of ``R`` threads, one row a thread with its ``w <= 32`` values in named
registers, and the workgroups agree on each column's pivot through an exchange buffer of atomic
words: partial pivoting, the same pivot as LAPACK's ``getf2`` (the largest magnitude, the lowest row
among equals, NaN never chosen), right-looking within the panel.

A column: each workgroup finds its candidate (subgroup shuffles, one barrier), publishes it (its
magnitude and row) and the candidate row's values, the owner of row ``j`` publishes that row too;
then every workgroup reads the ``P`` candidates, picks the pivot the same way, reads the pivot row
(and, in the pivot's workgroup, the old row ``j`` that takes its place), exchanges, scales and
updates its rows. The words carry 16 bits of a value and the column's tag in their upper half
(Levien's split-word protocol, as ``wgsl_scan_words.py``: WebGPU's atomics are relaxed, so a reader
accepts a word only when it carries the tag it waits for); tags are the columns' numbers plus one, so
a factorization's words never match a stale one (the buffer is zeroed first; ``n < 65535``), and the
two parities of columns use two slots, so a slot is written again only after everyone read it.

A wait gives up after ``lim`` reads (a workgroup that never ran: the adapter did not hold all ``P``
at once) and marks the matrix's status word; ``lu_mw_fold_source`` turns a marked status into the
value 2 of the error flag, on which ``gpuarray.linalg.lu`` factors again with one workgroup a panel.

>>> src = lu_mw_panel_source("f64", 128)
>>> "atomicLoad" in src and "@workgroup_size(128)" in src
True
>>> words("f32"), words("f64")
(2, 4)
"""

from __future__ import annotations

import functools

from .wgsl_linalg import NB as W_MAX  # panel columns at most
from .wgsl_linalg import _shader
from .wgsl_lu_panel import _SG_BUILTINS, _sg_pivot


def words(t: str) -> int:
    """Exchange words (16 value bits each) of one value of ``t``."""
    return 2 if t == "f32" else 4


def layout(t: str, p: int) -> tuple[int, int, int]:
    """(header words, row words, slot words) of a panel of ``p`` workgroups: a header is a candidate's
    magnitude and row, a row ``W_MAX`` values; a slot holds ``p`` headers, ``p`` rows and row ``j``."""
    hw, rw = words(t) + 2, W_MAX * words(t)
    return hw, rw, p * hw + (p + 1) * rw


def _piece(t: str, v: str, q: str) -> str:
    """16-bit piece ``q`` (a u32 expression) of ``v``'s bits, as u32."""
    if t == "f32":
        return f"((bitcast<u32>({v}) >> (16u * ({q}))) & 0xffffu)"
    return f"u32((bitcast<u64>({v}) >> (16u * ({q}))) & 0xfffflu)"


def _spins(t: str) -> str:
    """``spin_v`` and ``spin_x``: the value of ``t`` (``words(t)`` words) and the u32 (2 words) at ``X[a]``,
    read until every word carries ``tag`` or ``lim`` reads went by (then ``*dead``; a dead thread's
    later waits read once)."""
    out = []
    for name, cnt, ty in (("spin_v", words(t), t), ("spin_x", 2, "u32")):
        ws = [f"w{q}" for q in range(cnt)]
        bad = "((" + " | ".join(f"({x} ^ tag)" for x in ws) + ") & 0xffff0000u) != 0u"
        if ty == "u32":
            val = "(w0 & 0xffffu) | ((w1 & 0xffffu) << 16u)"
        elif ty == "f32":
            val = "bitcast<f32>((w0 & 0xffffu) | ((w1 & 0xffffu) << 16u))"
        else:
            val = "bitcast<f64>(" + " | ".join(f"(u64({x} & 0xffffu) << {16 * q}u)" for q, x in enumerate(ws)) + ")"
        out += [f"fn {name}(a: u32, tag: u32, lim: u32, dead: ptr<function, u32>) -> {ty} {{",
                *[f"  var {x} = atomicLoad(&X[a + {q}u]);" for q, x in enumerate(ws)],
                "  var i = select(lim, 0u, *dead != 0u);",
                "  loop {",
                f"    if (!({bad}) || i == 0u) {{ break; }}",
                "    i = i - 1u;",
                *[f"    {x} = atomicLoad(&X[a + {q}u]);" for q, x in enumerate(ws)],
                "  }",
                f"  if ({bad}) {{ *dead = 1u; }}",
                f"  return {val};",
                "}"]
    return "\n".join(out) + "\n"


def _switch(cases: list[str]) -> list[str]:
    """``switch jj`` over the panel's columns, case ``c`` running ``cases[c]`` (``jj`` is uniform)."""
    return (["switch jj {"] + [f"  case {c}u: {{ {x} }}" for c, x in enumerate(cases)]
            + ["  default: {}", "}"])


def _pivot(t: str, v: str, x: str, then: list[str]) -> list[str]:
    """The workgroup's pivot of the threads' ``(best, bi)`` (``_sg_pivot``) into ``v``, ``x``, after
    the lines ``then`` on ``pv``, ``px``."""
    return ["  {", *["  " + y for y in _sg_pivot(t)], *["    " + y for y in then], f"    {v} = pv;", f"    {x} = px;",
            "  }"]


def _row(dst: str, src: str) -> str:
    """``dst<c> = src[c]`` (or ``dst[c] = src<c>``: brackets on the side that has them) for every column."""
    return " ".join(f"{dst.format(c=c)} = {src.format(c=c)};" for c in range(W_MAX))


def _column(t: str, threads: int) -> list[str]:
    """The body of the loop over the panel's columns ``jj``."""
    vw = words(t)
    xs = [f"x{c}" for c in range(W_MAX)]
    pub_h = [f"atomicStore(&X[hb + {q}u], {_piece(t, 'lv', str(q))} | tag);" for q in range(vw)]
    pub_h += [f"atomicStore(&X[hb + {vw}u], (lx & 0xffffu) | tag);",
              f"atomicStore(&X[hb + {vw + 1}u], (lx >> 16u) | tag);"]
    return ["for (var jj = 0u; jj < w; jj++) {",
            "  let tag = ((k + jj + 1u) & 0xffffu) << 16u;",
            "  let sb = xb + (jj & 1u) * SW;",
            "  var xj = T(0);",
            *["  " + x for x in _switch([f"xj = {x};" for x in xs])],
            "  var best = T(-1);",
            "  var bi = 0xFFFFFFFFu;",
            "  if (valid && r >= jj && abs(xj) > best) { best = abs(xj); bi = r; }",
            "  var lv = T(-1);",
            "  var lx = 0xFFFFFFFFu;",
            *_pivot(t, "lv", "lx", []),
            "  if (lid == 0u) {",
            "    let hb = sb + g * HW;",
            *["    " + x for x in pub_h],
            "  }",
            "  if (r == lx) { " + _row("crow[{c}]", "x{c}") + " }",
            "  if (r == jj) { " + _row("jrow[{c}]", "x{c}") + " }",
            "  workgroupBarrier();",
            f"  let own_j = g == jj / {threads}u;",
            f"  for (var e = lid; e < RW; e += {threads}u) {{",
            f"    let c = e / {vw}u;",
            f"    let q = e % {vw}u;",
            "    if (lx != 0xFFFFFFFFu) { atomicStore(&X[sb + P * HW + g * RW + e], "
            f"{_piece(t, 'crow[c]', 'q')} | tag); }}",
            f"    if (own_j) {{ atomicStore(&X[sb + P * (HW + RW) + e], {_piece(t, 'jrow[c]', 'q')} | tag); }}",
            "  }",
            # every workgroup reads the P candidates and picks the pivot as the workgroups did their rows
            "  best = T(-1);",
            "  bi = 0xFFFFFFFFu;",
            "  if (lid < P) {",
            "    let hb = sb + lid * HW;",
            "    let hv = spin_v(hb, tag, lim, &dead);",
            f"    let hx = spin_x(hb + {vw}u, tag, lim, &dead);",
            "    if (hx != 0xFFFFFFFFu) { best = hv; bi = hx; }",
            "  }",
            *_pivot(t, "gv", "gx", ["if (pv < T(0) || px < jj) { px = jj; }"]),
            # threads c < 32 read value c of the pivot row, threads 32 + c (in the pivot's workgroup) of row j
            f"  let src = select(sb + P * HW + (gx / {threads}u) * RW, sb + P * (HW + RW), gx == jj);",
            f"  let need_j = gx != jj && gx / {threads}u == g;",
            f"  for (var e = lid; e < {2 * W_MAX}u; e += {threads}u) {{",
            f"    if (e < {W_MAX}u) {{ prow[e] = spin_v(src + e * {vw}u, tag, lim, &dead); }}",
            f"    else if (need_j) {{ jrow2[e - {W_MAX}u] = "
            f"spin_v(sb + P * (HW + RW) + (e - {W_MAX}u) * {vw}u, tag, lim, &dead); }}",
            "  }",
            "  workgroupBarrier();",
            "  let pval = prow[jj];",
            "  let sc = select(T(1) / pval, T(1), pval == T(0));",
            "  if (r == jj) { " + _row("x{c}", "prow[{c}]") + " }",
            "  if (need_j && r == gx) { " + _row("x{c}", "jrow2[{c}]") + " }",
            # the update of the columns past jj, each behind a uniform test
            "  if (valid && r > jj) {",
            "    xj = T(0);",
            *["    " + x for x in _switch([f"xj = {x};" for x in xs])],
            "    let l = xj * sc;",
            *["    " + x for x in _switch([f"{x} = l;" for x in xs])],
            *[f"    if ({c}u > jj) {{ {xs[c]} = {xs[c]} - l * prow[{c}]; }}" for c in range(1, W_MAX)],
            "  }",
            "  if (g == 0u && lid == 0u) {",
            "    piv[pb + jj] = k + gx;",
            "    if (gv == T(0)) { W[prm[5]] = T(1); }",
            "  }",
            "}"]


@functools.cache
def lu_mw_panel_source(t: str, threads: int) -> str:
    """``prm``: [n, ld, k, w, bs, FLAG, P, XS, lim]: LU with partial pivoting of the panel of columns
    ``k .. k + w`` (``w <= 32``), rows ``k .. n`` (at most ``P * threads``) of each matrix, ``P``
    workgroups of ``threads`` a matrix (dispatch ``batch * P``); pivots to ``piv[b * n + k + j]``; ``X``:
    the exchange words, ``XS`` of them a matrix (its status word first); ``lim``: reads of a word before
    a wait gives up."""
    hw, rw, _ = layout(t, 1)
    rows = "".join(f"var<workgroup> {a}: array<T, {W_MAX}>;\n" for a in ("crow", "jrow", "prow", "jrow2"))
    shared = (f"var<workgroup> rv: array<T, {threads}>;\nvar<workgroup> ri: array<u32, {threads}>;\n" + rows
              + _spins(t))
    xs = [f"x{c}" for c in range(W_MAX)]
    lines = ["let n = prm[0];", "let ld = prm[1];", "let k = prm[2];", "let w = prm[3];",
             "let P = prm[6];", "let lim = prm[8];",
             f"let HW = {hw}u;", f"let RW = {rw}u;", "let SW = P * HW + (P + 1u) * RW;",
             "let b = id / P;", "let g = id % P;",
             "let base = b * prm[4] + k * ld + k;", "let pb = b * n + k;", "let m = n - k;",
             f"let r = g * {threads}u + lid;", "let valid = r < m;", "let xb = b * prm[7] + 1u;",
             "var dead = 0u;", "var gv = T(0);", "var gx = 0u;"]
    lines += [f"var {x} = T(0);" for x in xs]
    lines += ["if (valid) {", "  let row = base + r * ld;"]
    lines += [f"  if ({c}u < w) {{ {xs[c]} = W[row + {c}u]; }}" for c in range(W_MAX)]
    lines += ["}"]
    lines += _column(t, threads)
    lines += ["if (valid) {", "  let row = base + r * ld;"]
    lines += [f"  if ({c}u < w) {{ W[row + {c}u] = {xs[c]}; }}" for c in range(W_MAX)]
    lines += ["}", "if (dead != 0u) { atomicMax(&X[b * prm[7]], 1u); }"]
    body = "".join("  " + x + "\n" for x in lines)
    src = _shader(t, ["W:read_write:T", "piv:read_write:u32", "X:read_write:atomic<u32>"], body, shared, wg=threads)
    return src.replace("@builtin(local_invocation_index) lid: u32)", _SG_BUILTINS, 1)


@functools.cache
def lu_mw_fold_source(t: str) -> str:
    """``prm``: [batch, XS, FLAG]: the error flag ``W[FLAG]`` set to 2 where a matrix's status word says
    that a wait of its panels gave up (one thread)."""
    body = ("  if (id == 0u && lid == 0u) {\n"
            "    for (var b = 0u; b < prm[0]; b++) {\n"
            "      if (atomicLoad(&X[b * prm[1]]) != 0u) { W[prm[2]] = T(2); }\n"
            "    }\n  }\n")
    return _shader(t, ["W:read_write:T", "X:read_write:atomic<u32>"], body)
