"""WGSL for the blocked Cholesky whose trailing updates are matrix products, and the LU panel that
keeps its rows in registers (``providers/wgpu_linalg_blocked.py`` runs them).

- ``prep_source``: zeros above the diagonal of the factor buffer and the error flag cleared (the
  factor is written below the diagonal by ``potrf_panel_source``, block column by block column);
- ``potrf_panel_source``: one block column of ``nb`` columns of Cholesky, read from the current
  trailing matrix ``S`` (row stride and matrix stride in ``prm``: the operand's copy, then each
  product's fresh output) and written to the factor ``D``: each workgroup factors the tall panel of
  the diagonal block and ``rows`` rows below it, right-looking, every value in a register (thread
  ``lid`` holds column ``lid % nb`` of every ``threads / nb``-th row; ``S`` is not written, so no
  workgroup can see a half-written block and the block column takes one dispatch); per column the
  threads holding it put it in workgroup memory (two buffers, one barrier a column) and every thread
  scales it and updates its own values. The first workgroup of each matrix stores the diagonal
  block and raises the flag on a pivot that is not positive. The trailing update
  ``S22 - L21 L21^T`` is the register-blocked matmul with a fused epilogue
  (``providers/wgpu_matmul.py``), not a kernel of this module;
- ``lu_panel_source``: the LU factorization of an ``(n - k) x w`` panel (``w <= 32``, at most
  ``MAX_ROWS`` rows) by one workgroup of 256 or 1024 threads, each holding its rows of the current
  8-column chunk in a private array: per chunk, the update by the chunks to its left (left-looking:
  the chunk's top rows solved by 8 threads from workgroup memory, the others a rank ``8c`` update
  with ``U`` from workgroup memory), then per column the pivot search (two levels through workgroup
  memory, the first of equal magnitudes as LAPACK's ``idamax``), the row exchange (the chunk
  through workgroup memory, the other columns in the buffer), scaling and the rank-1 update of the
  chunk in registers. The panel is read and written once per chunk instead of once per column
  (``panel_source`` of ``wgsl_linalg.py``: 528 read-modify-writes a row for 32 columns, here about
  100), in the same order of operations (the factors are bitwise those of ``panel_source``);
- ``lu_small_source``: ``solve`` / ``inv`` of a matrix of at most 32 rows by one workgroup, the
  augmented ``[A | B]`` whole in workgroup memory: elimination with partial pivoting and back
  substitution in one dispatch (a stack of 4096 32 x 32 systems: one dispatch after the loads,
  against three of ``panel_source``, ``swap_trsm_source`` and ``backsub_source``).

>>> "workgroupBarrier" in potrf_panel_source("f32", 64)
True
"""

from __future__ import annotations

import functools
import re

from .wgsl_linalg import _shader

CHUNK = 8               # LU panel columns held in registers at a time
MAX_ROWS = 4096         # LU panels of at most this many rows take lu_panel_source


@functools.cache
def prep_source(t: str) -> str:
    """``prm``: [count, n, FLAG]: ``D`` zero above the diagonal of every ``n x n`` matrix (``count``
    elements), ``D[FLAG] = 0``."""
    body = """  let gi = id * 256u + lid;
  if (gi == 0u) { D[prm[2]] = T(0); }
  if (gi >= prm[0]) { return; }
  let n = prm[1];
  let j = gi % n;
  let i = (gi / n) % n;
  if (j > i) { D[gi] = T(0); }
"""
    return _shader(t, ["D:read_write:T"], body)


PANEL_ROWS = 32          # rows of the panel below the diagonal block taken by one workgroup of potrf_panel_source


@functools.cache
def potrf_panel_source(t: str, threads: int = 256, rows: int = PANEL_ROWS, nb: int = 64, rsqrt: bool = False) -> str:
    """``prm``: [sld, sbs, soff, n, k, w, m, G, FLAG, groups]: block column ``k`` (width ``w <= nb``)
    of Cholesky from the trailing ``m x m`` matrix at ``S[soff + b * sbs]`` (row stride ``sld``) into
    the factor ``D`` (``n x n`` matrices), ``G`` workgroups a matrix. Each workgroup factors the tall
    panel made of the diagonal block and its ``PANEL_ROWS`` rows below (right-looking, in registers:
    thread ``lid`` holds column ``lid % nb`` of rows ``lid / nb + 4 i``); per column ``j`` the threads
    holding it put it, unscaled, in workgroup memory (two buffers: one barrier a column), and every
    thread scales it by ``1 / sqrt`` of its pivot (with ``rsqrt`` one ``inverseSqrt``, the pivot's
    square root its product with that) and updates its own values by it (``dpotf2``'s
    operations, right-looking). The first workgroup of a matrix stores the diagonal block and raises
    the flag on a pivot that is not positive (NaN passes through)."""
    _QUAD = threads // nb
    dn, pn = [f"d{i}" for i in range(nb // _QUAD)], [f"p{i}" for i in range(rows // _QUAD)]
    prows = rows
    rows = nb + prows
    lines = []
    for i, v in enumerate(dn):
        lines.append(f"  let rd{i} = rq + {_QUAD * i}u;\n"
                     f"  var {v} = select(T(0), S[sb + min(rd{i}, w - 1u) * sld + cl], rd{i} < w && c <= rd{i});")
    for i, v in enumerate(pn):
        lines.append(f"  let rp{i} = w + g * {prows}u + rq + {_QUAD * i}u;\n"
                     f"  var {v} = select(T(0), S[sb + min(rp{i}, m - 1u) * sld + cl], rp{i} < m && c < w);")
    loads = "\n".join(lines)
    put = "\n".join([f"      C[buf + rq + {_QUAD * i}u] = {v};" for i, v in enumerate(dn)]
                    + [f"      C[buf + {nb}u + rq + {_QUAD * i}u] = {v};" for i, v in enumerate(pn)])
    upd = "\n".join([f"      {v} = {v} - (C[buf + rq + {_QUAD * i}u] * rinv) * lc;" for i, v in enumerate(dn)]
                    + [f"      {v} = {v} - (C[buf + {nb}u + rq + {_QUAD * i}u] * rinv) * lc;"
                       for i, v in enumerate(pn)])
    fin = "\n".join([f"      {v} = select({v} * rinv, ajj, rd{i} == j);" for i, v in enumerate(dn)]
                    + [f"      {v} = {v} * rinv;" for v in pn])
    store = "\n".join([f"    if (rd{i} < w && c <= rd{i}) {{ D[db + (k + rd{i}) * n + k + c] = {v}; }}"
                       for i, v in enumerate(dn)])
    pstore = "\n".join(f"  if (rp{i} < m && c < w) {{ D[db + (k + rp{i}) * n + k + c] = {v}; }}"
                        for i, v in enumerate(pn))
    shared = f"var<workgroup> C: array<T, {2 * rows}>;\n"
    pivot = ("    let rinv = inverseSqrt(dj);\n    let ajj = dj * rinv;" if rsqrt else
             "    let ajj = sqrt(dj);\n    let rinv = T(1) / ajj;")
    body = f"""  if (id >= prm[9]) {{ return; }}
  let sld = prm[0];
  let n = prm[3];
  let k = prm[4];
  let w = prm[5];
  let m = prm[6];
  let b = id / prm[7];
  let g = id % prm[7];
  let sb = b * prm[1] + prm[2];
  let db = b * n * n;
  let c = lid % {nb}u;
  let rq = lid / {nb}u;
  let cl = min(c, w - 1u);
{loads}
  var bad = false;
  for (var j = 0u; j < w; j++) {{
    let buf = (j & 1u) * {rows}u;
    if (c == j) {{
{put}
    }}
    workgroupBarrier();
    let dj = C[buf + j];
    if (dj <= T(0) && !ga_isnan_{t}(dj)) {{ bad = true; }}
{pivot}
    if (c > j && c < w) {{
      let lc = C[buf + c] * rinv;
{upd}
    }} else if (c == j) {{
{fin}
    }}
  }}
  if (g == 0u && c < w) {{
{store}
  }}
  if (g == 0u && lid == 0u && bad) {{ D[prm[8]] = T(1); }}
{pstore}
"""
    return _shader(t, ["S:read:T", "D:read_write:T"], body, shared, wg=threads, nb=nb)


@functools.cache
def lu_panel_source(t: str, threads: int = 256) -> str:
    """``prm``: [n, ld, k, w, bs, FLAG]: LU of the panel of columns ``k .. k + w`` (``w <= 32``),
    rows ``k .. n`` (at most ``MAX_ROWS``), one workgroup of ``threads`` (256 or 1024) a matrix;
    pivots (absolute rows) to ``piv[b * n + k + j]``, the flag raised on an exactly zero pivot (not
    divided by).

    >>> "@workgroup_size(1024)" in lu_panel_source("f64", 1024)
    True
    """
    shared = ("var<workgroup> cv: array<T, TPB>;\nvar<workgroup> ci: array<u32, TPB>;\n"
              "var<workgroup> rv: array<T, SQ>;\nvar<workgroup> ri: array<u32, SQ>;\n"
              "var<workgroup> prow: array<T, CH>;\nvar<workgroup> srow: array<T, CH>;\n"
              "var<workgroup> Ut: array<T, 32 * CH>;\nvar<workgroup> Lt: array<T, 32 * 32>;\n")
    body = """  let n = prm[0];
  let ld = prm[1];
  let k = prm[2];
  let w = prm[3];
  let base = id * prm[4] + k * ld + k;
  let pb = id * n + k;
  let m = n - k;
  var x: array<T, RPT * CH>;
  for (var c0 = 0u; c0 < w; c0 += CH) {
    let cw = min(CH, w - c0);
    if (c0 > 0u) {
      for (var e = lid; e < c0 * c0; e += TPBu) { Lt[e] = W[base + (e / c0) * ld + e % c0]; }
      for (var e = lid; e < c0 * CH; e += TPBu) {
        if (e % CH < cw) { Ut[e] = W[base + (e / CH) * ld + c0 + e % CH]; }
      }
      workgroupBarrier();
      if (lid < cw) {
        for (var p = 0u; p < c0; p++) {
          var s = Ut[p * CH + lid];
          for (var q = 0u; q < p; q++) { s = s - Lt[p * c0 + q] * Ut[q * CH + lid]; }
          Ut[p * CH + lid] = s;
        }
      }
      workgroupBarrier();
      for (var e = lid; e < c0 * CH; e += TPBu) {
        if (e % CH < cw) { W[base + (e / CH) * ld + c0 + e % CH] = Ut[e]; }
      }
    }
    var best = T(-1);
    var bi = c0;
    for (var q = 0u; q < RPT; q++) {
      let r = lid + q * TPBu;
      if (r < m && r >= c0) {
        let row = base + r * ld;
        var v: array<T, CH>;
        for (var c = 0u; c < cw; c++) { v[c] = W[row + c0 + c]; }
        for (var p = 0u; p < c0; p++) {
          let l = W[row + p];
          for (var c = 0u; c < cw; c++) { v[c] = v[c] - l * Ut[p * CH + c]; }
        }
        for (var c = 0u; c < CH; c++) { x[q * CH + c] = v[c]; }
        if (abs(v[0]) > best) { best = abs(v[0]); bi = r; }
      }
    }
    cv[lid] = best;
    ci[lid] = bi;
    for (var jj = 0u; jj < cw; jj++) {
      let j = c0 + jj;
      workgroupBarrier();
      if (lid < SQu) {
        var bv = cv[lid * SQu];
        var bx = ci[lid * SQu];
        for (var q = 1u; q < SQu; q++) {
          let v = cv[lid * SQu + q];
          let x2 = ci[lid * SQu + q];
          if (v > bv || (v == bv && x2 < bx)) { bv = v; bx = x2; }
        }
        rv[lid] = bv;
        ri[lid] = bx;
      }
      workgroupBarrier();
      var pv = rv[0];
      var px = ri[0];
      for (var q = 1u; q < SQu; q++) {
        let v = rv[q];
        let x2 = ri[q];
        if (v > pv || (v == pv && x2 < px)) { pv = v; px = x2; }
      }
      if (pv < T(0) || px < j) { px = j; }
      if (lid == px % TPBu) {
        for (var c = 0u; c < CH; c++) { prow[c] = x[(px / TPBu) * CH + c]; }
      }
      if (lid == j % TPBu) {
        for (var c = 0u; c < CH; c++) { srow[c] = x[(j / TPBu) * CH + c]; }
      }
      if (lid < w && (lid < c0 || lid >= c0 + cw) && px != j) {
        let a1 = base + j * ld + lid;
        let a2 = base + px * ld + lid;
        let v = W[a1];
        W[a1] = W[a2];
        W[a2] = v;
      }
      if (lid == 0u) {
        piv[pb + j] = k + px;
        if (pv == T(0)) { W[prm[5]] = T(1); }
      }
      workgroupBarrier();
      if (lid == px % TPBu) {
        for (var c = 0u; c < CH; c++) { x[(px / TPBu) * CH + c] = srow[c]; }
      }
      if (lid == j % TPBu) {
        for (var c = 0u; c < CH; c++) { x[(j / TPBu) * CH + c] = prow[c]; }
      }
      let pval = prow[jj];
      let sc = select(T(1) / pval, T(1), pval == T(0));
      best = T(-1);
      bi = j + 1u;
      for (var q = 0u; q < RPT; q++) {
        let r = lid + q * TPBu;
        if (r < m && r > j) {
          let l = x[q * CH + jj] * sc;
          x[q * CH + jj] = l;
          for (var c = jj + 1u; c < cw; c++) { x[q * CH + c] = x[q * CH + c] - l * prow[c]; }
          if (jj + 1u < cw && abs(x[q * CH + jj + 1u]) > best) { best = abs(x[q * CH + jj + 1u]); bi = r; }
        }
      }
      cv[lid] = best;
      ci[lid] = bi;
    }
    for (var q = 0u; q < RPT; q++) {
      let r = lid + q * TPBu;
      if (r < m && r >= c0) {
        let row = base + r * ld + c0;
        for (var c = 0u; c < cw; c++) { W[row + c] = x[q * CH + c]; }
      }
    }
    storageBarrier();
    workgroupBarrier();
  }
"""
    sq = {256: 16, 1024: 32}[threads]
    names = {"RPT": str(MAX_ROWS // threads), "CH": str(CHUNK), "TPB": str(threads), "SQ": str(sq)}
    body, shared = (re.sub(r"\b(RPT|CH|TPB|SQ)(?=\b|u\b)", lambda mt: names[mt.group(1)], v) for v in (body, shared))
    return _shader(t, ["W:read_write:T", "piv:read_write:u32"], body, shared, wg=threads)


SMALL_N = 32            # lu_small_source: matrices of at most this many rows
SMALL_WG = 128          # its workgroup size


@functools.cache
def lu_small_source(t: str, elems: int) -> str:
    """``prm``: [n, ld, bs, nrhs, obs, FLAG, groups]: ``A^-1 B`` of one ``[A | B]`` (``n <= SMALL_N``
    rows, ``n + nrhs`` columns, ``elems`` at least ``n (n + nrhs)``) a workgroup, whole in workgroup
    memory: Gaussian elimination with partial pivoting over the augmented matrix, then back
    substitution a right-hand side a thread, ``X`` to ``out`` (matrix stride ``obs``); an exactly zero
    pivot raises ``out[FLAG]`` (cleared before by ``prep_source``).

    >>> "var<workgroup> M: array<f32, 1024>" in lu_small_source("f32", 1024)
    True
    """
    shared = (f"var<workgroup> M: array<T, {elems}>;\nvar<workgroup> pr: u32;\n")
    body = """  if (id >= prm[6]) { return; }
  let n = prm[0];
  let ld = prm[1];
  let nrhs = prm[3];
  let nc = n + nrhs;
  let base = id * prm[2];
  for (var e = lid; e < n * nc; e += WG) { M[e] = W[base + (e / nc) * ld + e % nc]; }
  workgroupBarrier();
  for (var j = 0u; j < n; j++) {
    if (lid == 0u) {
      var bv = abs(M[j * nc + j]);
      var bx = j;
      for (var r = j + 1u; r < n; r++) {
        let v = abs(M[r * nc + j]);
        if (v > bv) { bv = v; bx = r; }
      }
      if (bv == T(0)) { out[prm[5]] = T(1); }
      pr = bx;
    }
    workgroupBarrier();
    let p = pr;
    if (p != j) {
      for (var c = lid; c < nc; c += WG) {
        let v = M[j * nc + c];
        M[j * nc + c] = M[p * nc + c];
        M[p * nc + c] = v;
      }
    }
    workgroupBarrier();
    let d = M[j * nc + j];
    let sc = select(T(1) / d, T(1), d == T(0));
    let q = nc - j - 1u;
    for (var e = lid; e < (n - j - 1u) * q; e += WG) {
      let r = j + 1u + e / q;
      let c = j + 1u + e % q;
      M[r * nc + c] = M[r * nc + c] - (M[r * nc + j] * sc) * M[j * nc + c];
    }
    workgroupBarrier();
  }
  let ob = id * prm[4];
  for (var c = lid; c < nrhs; c += WG) {
    for (var jj = 0u; jj < n; jj++) {
      let j = n - 1u - jj;
      var s = M[j * nc + n + c];
      for (var p = j + 1u; p < n; p++) { s = s - M[j * nc + p] * M[p * nc + n + c]; }
      s = s / M[j * nc + j];
      M[j * nc + n + c] = s;
      out[ob + j * nrhs + c] = s;
    }
  }
"""
    return _shader(t, ["W:read:T", "out:read_write:T"], body.replace("WG", f"{SMALL_WG}u"), shared, wg=SMALL_WG)
