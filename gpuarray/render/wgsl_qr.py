"""WGSL for Householder QR on the device (``providers/wgpu_qr.py`` runs it, ``linalg/householder.py``
calls it).

- ``qr_panel_source``: the Householder QR of one panel of ``w <= 32`` columns (rows ``c0 .. m``) of
  the work matrix ``W``, in place, one workgroup a matrix (LAPACK's ``dgeqr2`` and ``dlarft``): each
  thread owns the rows ``c0 + lid + i * threads`` of the panel; per column ``j`` one reduction over
  the rows below the pivot row ``g`` gives the products of the column ``x`` with every column of
  the panel (``x^T x`` for the norm, ``x^T a_c`` for the columns to its right, ``x^T v_c`` with
  the reflectors to its left, which the triangular factor ``T`` needs) and ``sum |x|`` (see the
  flag), so that ``beta``, ``tau``, the reflector ``v = x / (alpha - beta)`` and every
  ``v^T a_c = a_gc + (x^T a_c) / (alpha - beta)`` follow from one reduction: one or two
  barriers a column. The reflectors stay below the diagonal of ``W`` and go, with their unit
  diagonal and zeros above, to ``V``; ``T`` (``Q_panel = I - V T V^T``) goes to ``Tb``.
  The flag (``W``'s element ``prm[6]``) is raised where a column's norm is not finite (overflow,
  NaN or infinity in the input) or underflows while the column is not zero: the caller then
  recomputes the factorization with LAPACK, which scales such columns;
- ``larfb_source``: ``C -= V Y`` in place (``V``: ``M x w`` reflectors, ``Y``: ``w x N``): the update
  of the trailing matrix by a panel's block reflector (``Y = T^T V^T C`` comes from the matmul
  provider) and of ``Q`` when it is formed (``Y = T V^T Q``); 64 x 64 tiles, ``K = w <= 32``
  whole in workgroup memory;
- ``qr_init_source`` (``Q = I``) and ``qr_copy_r_source`` (``R``: the upper triangle of ``W``, and
  the flag) write the packed result ``[Q | R]`` per matrix, then the flag.

>>> "workgroupBarrier" in qr_panel_source("f32", 256)
True
"""

from __future__ import annotations

import functools

from .wgsl_linalg import _shader

QB = 32                 # panel width: a lane of 32 threads a panel row
LT = 64                 # larfb tile (LT x LT outputs a workgroup of 256 threads)
UNROLL = 4              # panel rows a thread loads at a time


def panel_smem(threads: int, item: int) -> int:
    """Bytes of workgroup memory ``qr_panel_source(t, threads)`` declares (``item``: bytes a value)."""
    return (2 * threads + 4 * (QB + 1) + QB * QB) * item


def _partials(threads: int) -> tuple[list[str], list[str]]:
    """Lines leaving in ``tot[pn * 33 ..]`` the products of column ``jn`` (pivot row ``gn``) below its
    pivot with every panel column (``V``'s for those left of it) and, last, ``sum |x|``; the pivot
    row in ``arow[pn * 33 ..]``: the row loop (lanes of panel columns only), then the sums."""
    nq, n = threads // QB, QB + 1
    loop = ["var pp = T(0);",
            "var pa = T(0);",
            "if (c < w) {",
            f"  for (var r0 = c0 + q; r0 < m; r0 += {nq * UNROLL}u) {{"]
    for u in range(UNROLL):     # the rows' loads issued together (the loop is bound by their latency)
        loop += [f"    let r{u} = r0 + {u * nq}u;",
                 f"    let ok{u} = r{u} < m && r{u} >= gn;",
                 f"    let row{u} = base + min(r{u}, m - 1u) * ld;",
                 f"    let e{u} = select(T(0), select(W[row{u} + c], V[vb + min(r{u}, m - 1u) * kk + c], c < jn), "
                 f"ok{u});",
                 f"    let x{u} = select(T(0), W[row{u} + jn], ok{u} && r{u} > gn);"]
    for u in range(UNROLL):
        loop += [f"    if (ok{u} && r{u} == gn) {{ arow[pn * {n}u + c] = e{u}; }}",
                 f"    pp = pp + x{u} * e{u};",
                 f"    pa = pa + abs(x{u});"]
    loop += ["  }", "}"]
    sums = ["red[lid] = pp;",
            f"red[{threads}u + lid] = pa;",
            "workgroupBarrier();",
            f"if (lid < {n}u) {{",
            "  var s = T(0);",
            f"  let col = select(lid, jn, lid == {QB}u);",
            f"  let off = select(0u, {threads}u, lid == {QB}u);",
            f"  for (var i = 0u; i < {nq}u; i++) {{ s = s + red[off + i * {QB}u + col]; }}",
            f"  tot[pn * {n}u + lid] = s;",
            "}",
            "workgroupBarrier();"]
    return loop, sums


@functools.cache
def qr_panel_source(t: str, threads: int = 256) -> str:
    """``prm``: [m, ld, c0, w, bs, p, FLAG, kk, vbs, tbs, batch, tq]: the panel of columns
    ``c0 .. c0 + w`` of each ``m x ld`` matrix of ``W`` (matrix stride ``bs``), rows ``c0 .. m``,
    factored in place (``R`` on and above the diagonal; below it ``W`` is left stale); its
    reflectors to ``V`` (``m x kk`` matrices, stride ``vbs``; rows ``c0 ..`` of columns
    ``c0 .. c0 + w``, unit diagonal, zeros above), its ``T`` to ``Tb[b * tbs + p * tq * tq]``
    (``tq x tq``, upper triangular; ``tq = min(32, kk)``). Thread ``lid`` takes column ``lid % 32``
    of the rows ``c0 + lid / 32 + i * threads / 32``: the panel is read a whole row at a time."""
    nq, n = threads // QB, QB + 1
    tiny = "1.1754943508222875e-38" if t == "f32" else "2.2250738585072014e-308"
    shared = (f"var<workgroup> red: array<T, {2 * threads}>;\n"
              f"var<workgroup> tot: array<T, {2 * n}>;\n"
              f"var<workgroup> arow: array<T, {2 * n}>;\n"
              f"var<workgroup> Ts: array<T, {QB * QB}>;\n")
    loop, sums = _partials(threads)
    lines = ["if (id >= prm[10]) { return; }",
             "let m = prm[0];", "let ld = prm[1];", "let c0 = prm[2];", "let w = prm[3];",
             "let kk = prm[7];",
             "let base = id * prm[4] + c0;",
             "let vb = id * prm[8] + c0;",
             f"let c = lid % {QB}u;",
             f"let q = lid / {QB}u;",
             f"for (var e = lid; e < {QB * QB}u; e += {threads}u) {{ Ts[e] = T(0); }}",
             "var bad = false;",
             "{",
             "  let jn = 0u;", "  let gn = c0;", "  let pn = 0u;",
             *["  " + x for x in loop + sums],
             "}",
             "for (var j = 0u; j < w; j++) {",
             "  let g = c0 + j;",
             "  let par = j & 1u;",
             f"  let alpha = arow[par * {n}u + j];",
             f"  let xn2 = tot[par * {n}u + j];",
             "  var beta = alpha;",
             "  var tau = T(0);",
             "  var scale = T(0);",
             "  let nn = alpha * alpha + xn2;",
             f"  if (!ga_isfinite_{t}(nn) || (xn2 < T({tiny}) && tot[par * {n}u + {QB}u] != T(0))) {{ bad = true; }}",
             "  if (xn2 != T(0)) {",
             "    let nrm = sqrt(nn);",
             "    beta = select(nrm, -nrm, alpha >= T(0));",
             "    tau = (beta - alpha) / beta;",
             "    scale = T(1) / (alpha - beta);",
             "  }",
             f"  let dc = arow[par * {n}u + c] + scale * tot[par * {n}u + c];",
             # the update: the columns right of j take the reflector, column j goes to V
             "  if (c >= j && c < w) {",
             "    let td = tau * dc;",
             f"    for (var r0 = c0 + q; r0 < m; r0 += {nq * UNROLL}u) {{",
             *[x for u in range(UNROLL) for x in (
                 f"      let r{u} = r0 + {u * nq}u;",
                 f"      let ok{u} = r{u} < m && r{u} >= g;",
                 f"      let row{u} = base + min(r{u}, m - 1u) * ld;",
                 f"      let v{u} = select(W[row{u} + j] * scale, T(1), r{u} == g);",
                 f"      let a{u} = W[row{u} + c];")],
             *[x for u in range(UNROLL) for x in (
                 f"      if (ok{u}) {{",
                 "        if (c > j) {",
                 f"          W[row{u} + c] = a{u} - td * v{u};",
                 "        } else {",
                 f"          V[vb + r{u} * kk + j] = v{u};",
                 f"          if (r{u} == g) {{ W[row{u} + j] = beta; }}",
                 "        }",
                 "      }")],
             "    }",
             "  }",
             # column j of T: T[0:j, j] = -tau T[0:j, 0:j] (V[:, 0:j]^T v_j); row lid of Ts is
             # written by thread lid only
             "  if (lid < j) {",
             "    var s = T(0);",
             "    for (var i = lid; i < j; i++) {",
             f"      s = s + Ts[lid * {QB}u + i] * (arow[par * {n}u + i] + scale * tot[par * {n}u + i]);",
             "    }",
             f"    Ts[lid * {QB}u + j] = -tau * s;",
             f"  }} else if (lid == j) {{ Ts[j * {QB}u + j] = tau; }}",
             "  storageBarrier();",
             "  if (j + 1u < w) {",
             "    let jn = j + 1u;", "    let gn = g + 1u;", "    let pn = 1u - par;",
             *["    " + x for x in loop + sums],
             "  }",
             "}",
             "if (bad && lid == 0u) { W[prm[6]] = T(1); }",
             "workgroupBarrier();",
             "let tq = prm[11];",
             "let tb = id * prm[9] + prm[5] * tq * tq;",
             f"for (var e = lid; e < tq * tq; e += {threads}u) {{ Tb[tb + e] = Ts[(e / tq) * {QB}u + e % tq]; }}",
             f"for (var r = c0 + q; r < min(m, c0 + c) && c < w; r += {nq}u) {{ V[vb + r * kk + c] = T(0); }}"]
    body = "".join("  " + x + "\n" for x in lines)
    return _shader(t, ["W:read_write:T", "V:read_write:T", "Tb:read_write:T"], body, shared, wg=threads)


@functools.cache
def larfb_source(t: str) -> str:
    """``prm``: [M, N, w, cld, cbs, coff, vld, vbs, voff, tm, tn, groups]: ``C -= V Y`` for each
    matrix: ``C`` the ``M x N`` block of ``X`` at ``coff`` (row stride ``cld``, matrix stride
    ``cbs``), ``V`` the ``M x w`` block of ``V`` at ``voff`` (``vld``, ``vbs``), ``Y`` contiguous
    ``w x N`` matrices; ``tm x tn`` tiles of 64 x 64 a matrix."""
    acc = [f"a{i}_{j}" for i in range(4) for j in range(4)]
    body = f"""  if (id >= prm[11]) {{ return; }}
  let M = prm[0];
  let N = prm[1];
  let w = prm[2];
  let per = prm[9] * prm[10];
  let b = id / per;
  let ti = (id % per) / prm[10];
  let tj = id % prm[10];
  let r0 = ti * {LT}u;
  let j0 = tj * {LT}u;
  let vb = b * prm[7] + prm[8];
  let yb = b * w * N;
  for (var e = lid; e < {LT * QB}u; e += 256u) {{
    let r = e / {QB}u;
    let l = e % {QB}u;
    var v = T(0);
    if (r0 + r < M && l < w) {{ v = V[vb + (r0 + r) * prm[6] + l]; }}
    Vs[r * {QB + 1}u + l] = v;
    let l2 = e / {LT}u;
    let c2 = e % {LT}u;
    var y = T(0);
    if (j0 + c2 < N && l2 < w) {{ y = Y[yb + l2 * N + j0 + c2]; }}
    Ys[e] = y;
  }}
  workgroupBarrier();
  let tx = lid % 16u;
  let ty = lid / 16u;
{"".join(f"  var {a} = T(0);{chr(10)}" for a in acc)}  for (var l = 0u; l < w; l++) {{
{"".join(f"    let v{i} = Vs[(ty + {16 * i}u) * {QB + 1}u + l];{chr(10)}" for i in range(4))}\
{"".join(f"    let y{j} = Ys[l * {LT}u + tx + {16 * j}u];{chr(10)}" for j in range(4))}\
{"".join(f"    a{i}_{j} = a{i}_{j} + v{i} * y{j};{chr(10)}" for i in range(4) for j in range(4))}  }}
  let cb = b * prm[4] + prm[5];
{"".join(f"  let ok{i}_{j} = r0 + ty + {16 * i}u < M && j0 + tx + {16 * j}u < N;{chr(10)}"
         f"  let o{i}_{j} = cb + min(r0 + ty + {16 * i}u, M - 1u) * prm[3] + min(j0 + tx + {16 * j}u, N - 1u);{chr(10)}"
         f"  let x{i}_{j} = X[o{i}_{j}];{chr(10)}" for i in range(4) for j in range(4))}\
{"".join(f"  if (ok{i}_{j}) {{ X[o{i}_{j}] = x{i}_{j} - a{i}_{j}; }}{chr(10)}" for i in range(4) for j in range(4))}"""
    shared = f"var<workgroup> Vs: array<T, {LT * (QB + 1)}>;\nvar<workgroup> Ys: array<T, {LT * QB}>;\n"
    return _shader(t, ["X:read_write:T", "V:read:T", "Y:read:T"], body, shared)


@functools.cache
def qr_init_source(t: str) -> str:
    """``prm``: [count, m, kq, P]: ``Q = I`` (``m x kq``) at the start of each ``P``-element row of ``O``."""
    body = """  let gi = id * 256u + lid;
  if (gi >= prm[0]) { return; }
  let kq = prm[2];
  let j = gi % kq;
  let i = (gi / kq) % prm[1];
  let b = gi / (kq * prm[1]);
  O[b * prm[3] + i * kq + j] = select(T(0), T(1), i == j);
"""
    return _shader(t, ["O:read_write:T"], body)


@functools.cache
def qr_copy_r_source(t: str) -> str:
    """``prm``: [count, kr, n, m, P, roff, FLAG, OFLAG]: ``R`` (``kr x n``, the upper triangle of each
    ``m x n`` matrix of ``W``, zeros below) to ``O[b * P + roff ..]``; ``W[FLAG]`` to ``O[OFLAG]``."""
    body = """  let gi = id * 256u + lid;
  if (gi == 0u) { O[prm[7]] = W[prm[6]]; }
  if (gi >= prm[0]) { return; }
  let n = prm[2];
  let j = gi % n;
  let i = (gi / n) % prm[1];
  let b = gi / (n * prm[1]);
  O[b * prm[4] + prm[5] + i * n + j] = select(T(0), W[b * prm[3] * n + i * n + j], j >= i);
"""
    return _shader(t, ["W:read:T", "O:read_write:T"], body)


def col_smem(rb: int, item: int, threads: int) -> int:
    """Bytes of workgroup memory ``qr_col_source(t, rb, threads)`` declares."""
    return (rb * QB + 2 * threads + 2 * (QB + 1) + rb) * item


@functools.cache
def qr_col_source(t: str, rb: int, th: int = 1024) -> str:
    """``prm``: [m, ld, c0, w, bs, j, kk, vbs, tbs, toff, tq, nblk, groups, FLAG, first, ps]: column
    ``j`` of the panel at ``c0`` (see ``qr_panel_source``) by ``nblk`` workgroups of ``th`` threads a
    matrix, each taking ``rb`` rows of the panel into workgroup memory: the previous dispatch's
    pivot row and partial products (``P``: two buffers by parity, ``ps`` each, per matrix) give
    ``beta``, ``tau`` and the reflector; the block's rows take it and the products of column
    ``j + 1`` with every panel column are summed over the block into ``P``, with that column's
    pivot row. ``first``: only the products of column 0. The first workgroup of a matrix writes
    column ``j`` of ``T`` and the flag. A panel is ``w + 1`` dispatches, each over every row block of
    every matrix: the panel's work spread over the GPU rather than one workgroup a matrix
    (``qr_panel_source``). Every global load of a thread is written out (issued together)."""
    n = QB + 1
    nq = th // QB
    if rb % nq:
        raise ValueError(f"qr_col_source: {rb} rows do not split into steps of {nq}")
    tiny = "1.1754943508222875e-38" if t == "f32" else "2.2250738585072014e-308"
    shared = (f"var<workgroup> Ws: array<T, {rb * QB}>;\n"
              f"var<workgroup> red: array<T, {2 * th}>;\n"
              f"var<workgroup> tot: array<T, {n}>;\n"
              f"var<workgroup> arow: array<T, {n}>;\n"
              f"var<workgroup> vs: array<T, {rb}>;\n")
    steps = rb // nq
    load = "".join(f"  let ld{u} = select(T(0), W[base + (rs + min(rg + {u * nq}u, nr - 1u)) * ld + min(c, w - 1u)], "
                   f"rg + {u * nq}u < nr && c < w);\n" for u in range(steps))
    load += "".join(f"  Ws[(rg + {u * nq}u) * {QB}u + c] = ld{u};\n" for u in range(steps))
    store = "".join(f"    if (rg + {u * nq}u < nr && c >= j && c < w) {{ W[base + (rs + rg + {u * nq}u) * ld + c] = "
                    f"Ws[(rg + {u * nq}u) * {QB}u + c]; }}\n" for u in range(steps))
    tsum = "".join(f"        if ({i}u >= lid && {i}u < j) {{ s = s + Tb[tb + lid * tq + {i}u] * "
                   f"(arow[{i}u] + scale * tot[{i}u]); }}\n" for i in range(QB))
    # the previous dispatch's partial sums, every block's, in one pass: column products and sum |x|
    sums = f"""    {{
      var s = T(0);
      var a = T(0);
      for (var kb = rg; kb < nblk; kb += {nq}u) {{
        let pk = po + {QB}u + kb * {n}u;
        s = s + P[pk + c];
        if (c == 0u) {{ a = a + P[pk + {QB}u]; }}
      }}
      red[lid] = s;
      red[{th}u + lid] = a;
    }}
    workgroupBarrier();
    if (lid < {n}u) {{
      let col = select(lid, 0u, lid == {QB}u);
      let off = select(0u, {th}u, lid == {QB}u);
      var s = T(0);
      for (var i = 0u; i < {nq}u; i++) {{ s = s + red[off + i * {QB}u + col]; }}
      tot[lid] = s;
    }}
    workgroupBarrier();
"""
    body = f"""  if (id >= prm[12]) {{ return; }}
  let m = prm[0];
  let ld = prm[1];
  let c0 = prm[2];
  let w = prm[3];
  let j = prm[5];
  let kk = prm[6];
  let nblk = prm[11];
  let b = id / nblk;
  let k = id % nblk;
  let base = b * prm[4] + c0;
  let ps = prm[15];
  let pb = b * 2u * ps;
  let rs = c0 + k * {rb}u;
  let nr = min(m, rs + {rb}u) - rs;
  let first = prm[14] != 0u;
  let c = lid % {QB}u;
  let rg = lid / {QB}u;
{load}  var jn = 0u;
  if (!first) {{
    let g = c0 + j;
    let po = pb + (j & 1u) * ps;
    if (lid < {QB}u) {{ arow[lid] = P[po + lid]; }}
{sums}    let alpha = arow[j];
    let xn2 = tot[j];
    var beta = alpha;
    var tau = T(0);
    var scale = T(0);
    let nn = alpha * alpha + xn2;
    let bad = !ga_isfinite_{t}(nn) || (xn2 < T({tiny}) && tot[{QB}u] != T(0));
    if (xn2 != T(0)) {{
      let nrm = sqrt(nn);
      beta = select(nrm, -nrm, alpha >= T(0));
      tau = (beta - alpha) / beta;
      scale = T(1) / (alpha - beta);
    }}
    for (var rl = lid; rl < nr; rl += {th}u) {{
      let r = rs + rl;
      vs[rl] = select(select(T(0), T(1), r == g), Ws[rl * {QB}u + j] * scale, r > g);
    }}
    workgroupBarrier();
    if (c > j && c < w) {{
      let td = tau * (arow[c] + scale * tot[c]);
      for (var rl = rg; rl < nr; rl += {nq}u) {{
        if (rs + rl >= g) {{ Ws[rl * {QB}u + c] = Ws[rl * {QB}u + c] - td * vs[rl]; }}
      }}
    }} else if (c == j) {{
      for (var rl = rg; rl < nr; rl += {nq}u) {{
        let r = rs + rl;
        if (r > g) {{ Ws[rl * {QB}u + j] = vs[rl]; }} else if (r == g) {{ Ws[rl * {QB}u + j] = beta; }}
      }}
    }}
    let vb = b * prm[7] + c0;
    for (var rl = lid; rl < nr; rl += {th}u) {{ V[vb + (rs + rl) * kk + j] = vs[rl]; }}
    if (k == 0u) {{
      if (lid == 0u && bad) {{ W[prm[13]] = T(1); }}
      let tq = prm[10];
      let tb = b * prm[8] + prm[9];
      if (lid < j) {{
        var s = T(0);
{tsum}        Tb[tb + lid * tq + j] = -tau * s;
      }} else if (lid == j) {{
        Tb[tb + j * tq + j] = tau;
      }} else if (lid < tq) {{
        Tb[tb + lid * tq + j] = T(0);
      }}
    }}
    workgroupBarrier();
    jn = j + 1u;
  }}
  if (jn < w) {{
    let gn = c0 + jn;
    var pp = T(0);
    var pa = T(0);
    if (c < w) {{
      for (var rl = rg; rl < nr; rl += {nq}u) {{
        if (rs + rl > gn) {{
          let x = Ws[rl * {QB}u + jn];
          pp = pp + x * Ws[rl * {QB}u + c];
          pa = pa + abs(x);
        }}
      }}
    }}
    red[lid] = pp;
    red[{th}u + lid] = pa;
    workgroupBarrier();
    let po = pb + (jn & 1u) * ps;
    if (lid < {n}u) {{
      let col = select(lid, jn, lid == {QB}u);
      let off = select(0u, {th}u, lid == {QB}u);
      var s = T(0);
      for (var i = 0u; i < {nq}u; i++) {{ s = s + red[off + i * {QB}u + col]; }}
      P[po + {QB}u + k * {n}u + lid] = s;
    }}
    // the next pivot row for the next dispatch (its owner writes the row back in this one)
    if (gn >= rs && gn < rs + nr && lid < {QB}u) {{ P[po + lid] = Ws[(gn - rs) * {QB}u + lid]; }}
  }}
  if (!first) {{
{store}  }}
"""
    return _shader(t, ["W:read_write:T", "V:read_write:T", "Tb:read_write:T", "P:read_write:T"], body, shared,
                   wg=th)
