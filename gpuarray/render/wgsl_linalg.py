"""WGSL for blocked Cholesky and LU with partial pivoting (``providers/wgpu_linalg.py`` runs them).

Every shader works in place on a work buffer ``W`` holding a stack of matrices (row stride ``ld``,
matrix stride ``bs``, all in ``prm``), one dispatch covering every matrix of the stack (the
workgroup index is split into matrix and block; workgroups past the count, which a 2-D grid adds
past 65535, return at once). ``NB`` is the panel width.

- ``render_load``: an operand of a ``linalg_*`` node (its fused prologue evaluated through
  ``render.wgsl._Gen``) copied into ``W`` at a column offset (``lower``: zeros above the diagonal),
  and the error flag cleared;
- ``potrf_source``: one block column of Cholesky: one workgroup a matrix factors the ``w x w``
  diagonal block in workgroup memory (right-looking, one barrier a column: ``_SCALE_COL``), writes
  it back and raises the flag on a pivot that is not positive (NaN propagates without one, as in
  NumPy), and each thread solves one row of the panel below
  against it (``L21 = A21 L11^-T``); a second dispatch solves rows past the first 256;
- ``gemm_source``: the trailing update ``C -= A B`` of 64 x 64 tiles in place, ``A`` and ``B``
  panels of ``W`` (``B`` read transposed and only lower tiles for Cholesky's ``A22 -= L21 L21^T``),
  ``K`` the panel width in steps of 16 through ``vec4`` workgroup tiles, 4 x 4 outputs a thread;
- ``panel_source``: the LU factorization of one ``(n - k) x w`` panel by one workgroup (the path
  for panels taller than ``wgsl_linalg_blocked.MAX_ROWS``; ``lu_panel_source`` there keeps the
  rows in registers): pivot
  search (each thread's rows, then 256 -> 16 -> 1 through workgroup memory, the first of equal
  magnitudes as LAPACK's ``idamax``), the row swap within the panel, scaling by the reciprocal
  pivot and the rank-1 update of the panel's other columns, which also finds the next column's
  candidates; an exactly zero pivot raises the flag and is not divided by (``getf2``);
- ``swap_trsm_source``: the panel's row swaps applied to every other column (right-hand sides
  included) and ``U12 = L11^-1 A12`` (unit lower), one thread a column;
- ``backsub_source``: one block row of ``U X = Y`` from the bottom: each workgroup solves the
  ``w x 64`` block of ``X`` (a full block with a column's values in named registers, ``BACKSUB_UNROLL``:
  H200 ``solve`` float32 4096 41.6 -> 39.1 ms, ``inv`` 73 -> 62), the first row of workgroups stores it,
  and each updates 64 rows of ``Y`` above;
- ``det_source``: sign and log of ``|det|`` from the diagonal and the pivots, one workgroup a matrix
  (NumPy's ``det`` is ``sign * exp(logdet)`` too);
- ``eye_source``: identity right-hand sides (``inv``).

>>> "workgroupBarrier" in potrf_source("f32")
True
"""

from __future__ import annotations

import functools
import os
import re

from ..compiler.kernel import Kernel
from .wgsl import WORKGROUP, Rendered, _Gen
from .wgsl_lib import helpers_for
from .wgsl_parts import declare_bindings, input_types

NB = 32                 # panel width
# GPUARRAY_BACKSUB_UNROLL=0: the back substitution's block solve as a loop over workgroup memory only
BACKSUB_UNROLL = os.environ.get("GPUARRAY_BACKSUB_UNROLL", "1") != "0"
# GPUARRAY_GEMM_COALESCED=0: gemm_source's threads take 4 adjacent columns (strided accesses across a warp)
GEMM_COALESCED = os.environ.get("GPUARRAY_GEMM_COALESCED", "1") != "0"
TILE = 64               # trailing-update and back-substitution tile
NONE = 0xFFFFFFFF       # "no flag" in render_load's FLAG

_HEAD = ("@compute @workgroup_size({wg})\n"
         "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
         "        @builtin(local_invocation_index) lid: u32) {{\n"
         "  let id = wid.y * nwg.x + wid.x;\n")


def _shader(t: str, bindings: list[str], body: str, shared: str = "", wg: int = WORKGROUP, nb: int = NB) -> str:
    """A complete shader: ``prm`` then ``bindings`` (``name:access:type``), workgroup memory, body;
    ``T`` stands for the element type ``t``, ``NB`` for the panel width ``nb`` and ``LS`` for ``nb + 1``
    (the row stride of a Cholesky block in workgroup memory: padded so that the threads of a
    subgroup reading a column hit different banks)."""
    decls = ["@group(0) @binding(0) var<storage, read> prm: array<u32>;"]
    for b, spec in enumerate(bindings, 1):
        name, access, ty = spec.split(":")
        decls.append(f"@group(0) @binding({b}) var<storage, {access}> {name}: array<{ty}>;")
    text = "\n".join(decls) + "\n" + shared + "\n@@HELPERS@@\n\n" + _HEAD.format(wg=wg) + body + "}\n"
    text = re.sub(r"\bLS\b", str(nb + 1), re.sub(r"\bNB\b", str(nb), re.sub(r"\bT\b", t, text)))
    return text.replace("@@HELPERS@@", helpers_for(text))


# Column ``j`` of a Cholesky block in workgroup memory scaled by the root of its pivot ``d``, one
# column behind the trailing update (which reads column ``j + 1`` and writes the columns past it): one
# barrier a column instead of three.
_SCALE_COL = """fn scale_col(j: u32, w: u32, d: T, lid: u32) {
  let dj = sqrt(d);
  for (var i = j + 1u + lid; i < w; i += 256u) { L[i * LS + j] = L[i * LS + j] / dj; }
  if (lid == 0u) { L[j * LS + j] = dj; }
}
"""


def render_load(kernel: Kernel, which: int) -> Rendered:
    """Copy operand ``which`` of ``kernel`` (its prologue evaluated) into the work buffer ``out0``.

    ``prm`` extras: N (elements), R, C (rows, columns of each matrix), BS, LD, COFF (matrix stride,
    row stride and column offset in ``out0``), LOWER (1: zeros above the diagonal), FLAG (index of
    the error flag to clear, or ``NONE``)."""
    op_i = kernel.operands[which]
    dt = kernel.instrs[op_i].dtype
    t = {"float32": "f32", "float64": "f64"}[dt.name]
    g = _Gen(kernel)
    n, r, c, bs, ld, coff, lower, flag = (g.slot(("extra", s)) for s in
                                          ("N", "R", "C", "BS", "LD", "COFF", "LOWER", "FLAG"))
    v = g.value(op_i, ("lin", "gi"))
    decls = declare_bindings(input_types(kernel), [t], g.wide)
    main = (
        f"@compute @workgroup_size({WORKGROUP})\n"
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
        "        @builtin(local_invocation_index) lid: u32) {\n"
        f"  let gi = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;\n"
        f"  if (gi == 0u && {flag} != {NONE}u) {{ out0[{flag}] = {t}(0); }}\n"
        f"  if (gi >= {n}) {{ return; }}\n" + "\n".join(g.lines) + "\n"
        f"  let cc = gi % {c};\n  let q = gi / {c};\n  let rr = q % {r};\n  let b = q / {r};\n"
        f"  out0[b * {bs} + rr * {ld} + {coff} + cc] = select({v}, {t}(0), {lower} != 0u && cc > rr);\n}}\n")
    src = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main
    return Rendered(src, sorted(g.slots, key=lambda s: g.slots[s]), g.wide, len(kernel.inputs), 1)


@functools.cache
def eye_source(t: str) -> str:
    """``prm``: [count, n, ld, bs, col0]: identity matrices at column ``col0`` of ``W``."""
    body = """  let gi = id * 256u + lid;
  let n = prm[1];
  if (gi >= prm[0]) { return; }
  let j = gi % n;
  let i = (gi / n) % n;
  let b = gi / (n * n);
  W[b * prm[3] + i * prm[2] + prm[4] + j] = select(T(0), T(1), i == j);
"""
    return _shader(t, ["W:read_write:T"], body)


def diag_factor(t: str, wf: str) -> str:
    """WGSL factoring the first ``wf`` columns of the ``w x w`` lower triangle held in ``L`` (workgroup
    memory, row stride ``LS``) in place: right-looking, ``scale_col`` (``_SCALE_COL``) one barrier a
    column; ``bad`` is set on a pivot that is not positive (NaN passes through). Thread ``lid`` owns
    column ``lid % NB`` of the trailing update and rows ``lid / NB + (256 / NB) t`` of it (no division
    by a run-time value; the padded stride keeps the column reads free of bank conflicts). Shared by
    ``potrf_source`` and the blocked panel (``wgsl_linalg_blocked.potrf_panel_source``)."""
    return f"""  var bad = false;
  var dp = T(1);
  let wf = {wf};
  let cq = lid % NB;
  let rq = lid / NB;
  for (var j = 0u; j < wf; j++) {{
    let d = L[j * LS + j];
    if (d <= T(0) && !ga_isnan_{t}(d)) {{ bad = true; }}
    if (j > 0u) {{ scale_col(j - 1u, w, dp, lid); }}
    if (cq > j && cq < w) {{
      let lc = L[cq * LS + j] / d;
      let i0 = select(rq + ((cq - rq + (256u / NB) - 1u) / (256u / NB)) * (256u / NB), rq, rq >= cq);
      for (var i = i0; i < w; i += 256u / NB) {{ L[i * LS + cq] = L[i * LS + cq] - L[i * LS + j] * lc; }}
    }}
    dp = d;
    workgroupBarrier();
  }}
  if (wf > 0u) {{ scale_col(wf - 1u, w, dp, lid); }}
  workgroupBarrier();
"""


@functools.cache
def potrf_source(t: str) -> str:
    """``prm``: [n, k, w, G (workgroups a matrix), FLAG, groups, mode, g0]: block column ``k`` of
    Cholesky. ``mode`` 0 (one workgroup a matrix, ``g0`` 0): factor the diagonal block, write it
    back, solve the first 256 rows below; ``mode`` 1 (``g0`` 1): load the factored block and solve
    the rest (a workgroup of one dispatch that read the block after another wrote it back would
    factor it twice)."""
    shared = "var<workgroup> L: array<T, NB * LS>;\n" + _SCALE_COL
    body = f"""  if (id >= prm[5]) {{ return; }}
  let n = prm[0];
  let k = prm[1];
  let w = prm[2];
  let b = id / prm[3];
  let g = id % prm[3] + prm[7];
  let base = b * n * n;
  for (var e = lid; e < w * w; e += 256u) {{
    let i = e / w;
    let j = e % w;
    L[i * LS + j] = select(T(0), W[base + (k + i) * n + k + j], j <= i);
  }}
  workgroupBarrier();
{diag_factor(t, "select(w, 0u, prm[6] != 0u)")}  if (g == 0u) {{
    for (var e = lid; e < w * w; e += 256u) {{
      let i = e / w;
      let j = e % w;
      W[base + (k + i) * n + k + j] = select(T(0), L[i * LS + j], j <= i);
    }}
    if (lid == 0u && bad) {{ W[prm[4]] = T(1); }}
  }}
  let r = k + w + g * 256u + lid;
  if (r < n) {{
    var x: array<T, NB>;
    let row = base + r * n + k;
    for (var j = 0u; j < w; j++) {{
      var s = W[row + j];
      for (var p = 0u; p < j; p++) {{ s = s - x[p] * L[j * LS + p]; }}
      s = s / L[j * LS + j];
      x[j] = s;
      W[row + j] = s;
    }}
  }}
"""
    return _shader(t, ["W:read_write:T"], body, shared)


@functools.cache
def gemm_source(t: str) -> str:
    """``prm``: [ld, r0, rend, c0, cend, kc, w, bs, TM, TN, trans, lower, groups]:
    ``W[i, j] -= sum_p W[i, kc + p] * B[p, j]`` for rows ``r0 <= i < rend``, columns ``c0 <= j < cend``,
    ``B[p, j] = W[kc + p, j]`` (``trans`` 0) or ``W[j, kc + p]`` (``trans`` 1); ``lower``: only
    ``j <= i`` (tiles above the diagonal return). A thread's columns are 16 apart (``GEMM_COALESCED``: H200
    ``solve`` float32 4096 38.2 -> 37.2 ms, float64 2048 16.1 -> 15.0)."""
    shared = "var<workgroup> As: array<vec4<T>, 256>;\nvar<workgroup> Bs: array<vec4<T>, 256>;\n"
    # a thread's 4 columns: 4 tx .. 4 tx + 3, or (GEMM_COALESCED) tx + 16 e, so that 16 threads' loads of B and
    # read-modify-writes of W touch 16 consecutive elements of a row for each e
    col = (lambda v, e: f"{v} + {16 * e}u") if GEMM_COALESCED else (lambda v, e: f"4u * {v} + {e}u")
    loads_a = "\n".join(f"      let a{q} = rd(base + (i0 + 4u * mq + {q}u) * ld + kc + kg, "
                        f"kg < w && i0 + 4u * mq + {q}u < rend);" for q in range(4))
    loads_bt = "\n".join(f"      let b{q} = rd(base + (j0 + {col('mq', q)}) * ld + kc + kg, "
                         f"kg < w && j0 + {col('mq', q)} < cend);" for q in range(4))
    loads_bn = "\n".join(f"      let b{q} = rd(base + (kc + kg) * ld + j0 + {col('jq', q)}, "
                         f"kg < w && j0 + {col('jq', q)} < cend);" for q in range(4))
    stores = []
    for q in range(4):
        comp = "xyzw"
        stores.append(f"  {{ let i = i0 + 4u * ty + {q}u;\n    if (i < rend) {{")
        for e in range(4):
            stores.append(f"      {{ let j = j0 + {col('tx', e)};\n"
                          f"        if (j < cend && (lower == 0u || j <= i)) {{ let a = base + i * ld + j; "
                          f"W[a] = W[a] - acc{q}.{comp[e]}; }} }}")
        stores.append("    } }")
    body = f"""  if (id >= prm[12]) {{ return; }}
  let ld = prm[0];
  let r0 = prm[1];
  let rend = prm[2];
  let c0 = prm[3];
  let cend = prm[4];
  let kc = prm[5];
  let w = prm[6];
  let tiles = prm[8] * prm[9];
  let b = id / tiles;
  let tm = (id % tiles) / prm[9];
  let tn = (id % tiles) % prm[9];
  let lower = prm[11];
  if (lower != 0u && tn > tm) {{ return; }}
  let base = b * prm[7];
  let i0 = r0 + tm * 64u;
  let j0 = c0 + tn * 64u;
  let tx = lid % 16u;
  let ty = lid / 16u;
  var acc0 = vec4<T>(T(0));
  var acc1 = vec4<T>(T(0));
  var acc2 = vec4<T>(T(0));
  var acc3 = vec4<T>(T(0));
  for (var k0 = 0u; k0 < w; k0 += 16u) {{
    {{
      let kk = lid % 16u;
      let mq = lid / 16u;
      let kg = k0 + kk;
{loads_a}
      As[kk * 16u + mq] = vec4<T>(a0, a1, a2, a3);
    }}
    if (prm[10] != 0u) {{
      let kk = lid % 16u;
      let mq = lid / 16u;
      let kg = k0 + kk;
{loads_bt}
      Bs[kk * 16u + mq] = vec4<T>(b0, b1, b2, b3);
    }} else {{
      let kk = lid / 16u;
      let jq = lid % 16u;
      let kg = k0 + kk;
{loads_bn}
      Bs[kk * 16u + jq] = vec4<T>(b0, b1, b2, b3);
    }}
    workgroupBarrier();
    for (var kk = 0u; kk < 16u; kk++) {{
      let av = As[kk * 16u + ty];
      let bv = Bs[kk * 16u + tx];
      acc0 = fma(vec4<T>(av.x), bv, acc0);
      acc1 = fma(vec4<T>(av.y), bv, acc1);
      acc2 = fma(vec4<T>(av.z), bv, acc2);
      acc3 = fma(vec4<T>(av.w), bv, acc3);
    }}
    workgroupBarrier();
  }}
""" + "\n".join(stores) + "\n"
    rd = "fn rd(a: u32, ok: bool) -> T {\n  if (ok) { return W[a]; }\n  return T(0);\n}\n"
    return _shader(t, ["W:read_write:T"], body, shared + rd)


@functools.cache
def panel_source(t: str) -> str:
    """``prm``: [n, ld, k, w, bs, FLAG]: LU of the panel of columns ``k .. k + w``, rows ``k .. n``,
    one workgroup a matrix; pivots (absolute rows) to ``piv[b * n + k + j]``."""
    shared = ("var<workgroup> cv: array<T, 256>;\nvar<workgroup> ci: array<u32, 256>;\n"
              "var<workgroup> rv: array<T, 16>;\nvar<workgroup> ri: array<u32, 16>;\n"
              "var<workgroup> prow: array<T, NB>;\n")
    body = """  let n = prm[0];
  let ld = prm[1];
  let k = prm[2];
  let w = prm[3];
  let base = id * prm[4];
  let pb = id * n;
  let m = n - k;
  var best = T(-1);
  var bi = 0u;
  for (var r = lid; r < m; r += 256u) {
    let v = abs(W[base + (k + r) * ld + k]);
    if (v > best) { best = v; bi = r; }
  }
  cv[lid] = best;
  ci[lid] = bi;
  for (var j = 0u; j < w; j++) {
    workgroupBarrier();
    if (lid < 16u) {
      var bv = cv[lid * 16u];
      var bx = ci[lid * 16u];
      for (var q = 1u; q < 16u; q++) {
        let v = cv[lid * 16u + q];
        let x = ci[lid * 16u + q];
        if (v > bv || (v == bv && x < bx)) { bv = v; bx = x; }
      }
      rv[lid] = bv;
      ri[lid] = bx;
    }
    workgroupBarrier();
    var pv = rv[0];
    var px = ri[0];
    for (var q = 1u; q < 16u; q++) {
      let v = rv[q];
      let x = ri[q];
      if (v > pv || (v == pv && x < px)) { pv = v; px = x; }
    }
    if (pv < T(0) || px < j) { px = j; }
    let jr = k + j;
    let pr = k + px;
    if (lid < w) {
      let c = base + k + lid;
      let a1 = W[c + jr * ld];
      let a2 = W[c + pr * ld];
      W[c + pr * ld] = a1;
      W[c + jr * ld] = a2;
      prow[lid] = a2;
    }
    if (lid == 0u) {
      piv[pb + jr] = pr;
      if (pv == T(0)) { W[prm[5]] = T(1); }
    }
    storageBarrier();
    workgroupBarrier();
    let pval = prow[j];
    let sc = select(T(1) / pval, T(1), pval == T(0));
    best = T(-1);
    bi = j + 1u;
    for (var r = lid; r < m; r += 256u) {
      if (r > j) {
        let row = base + (k + r) * ld + k;
        let l = W[row + j] * sc;
        W[row + j] = l;
        for (var c = j + 1u; c < w; c++) {
          let v = W[row + c] - l * prow[c];
          W[row + c] = v;
          if (c == j + 1u && abs(v) > best) { best = abs(v); bi = r; }
        }
      }
    }
    cv[lid] = best;
    ci[lid] = bi;
  }
"""
    return _shader(t, ["W:read_write:T", "piv:read_write:u32"], body, shared)


@functools.cache
def swap_trsm_source(t: str) -> str:
    """``prm``: [n, ld, k, w, bs, ncols, G, groups]: the row swaps of panel ``k`` applied to every
    column outside it, and ``U12 = L11^-1 A12`` for the columns right of it."""
    shared = "var<workgroup> L: array<T, NB * NB>;\n"
    body = """  if (id >= prm[7]) { return; }
  let n = prm[0];
  let ld = prm[1];
  let k = prm[2];
  let w = prm[3];
  let b = id / prm[6];
  let g = id % prm[6];
  let base = b * prm[4];
  let pb = b * n;
  for (var e = lid; e < w * w; e += 256u) {
    L[(e / w) * NB + e % w] = W[base + (k + e / w) * ld + k + e % w];
  }
  workgroupBarrier();
  let t = g * 256u + lid;
  let c = select(t, t + w, t >= k);
  if (c >= prm[5]) { return; }
  for (var j = 0u; j < w; j++) {
    let p = piv[pb + k + j];
    if (p != k + j) {
      let a = base + (k + j) * ld + c;
      let bb = base + p * ld + c;
      let v = W[a];
      W[a] = W[bb];
      W[bb] = v;
    }
  }
  if (c >= k + w) {
@@TRSM@@
  }
"""
    return _shader(t, ["W:read_write:T", "piv:read:u32"], body.replace("@@TRSM@@", _TRSM), shared)


# U12 = L11^-1 A12 for a thread's column: its NB panel rows loaded at once into named registers (after
# the swaps), solved there and stored at once; a load behind each row's store made NB global round
# trips in a row on the few workgroups of this dispatch
def unit_lower_sums(x: str, m: str, stride: int, n: int, ind: str) -> list[str]:
    """``x<j> = x<j> - m[j * stride + p] * x<p>`` for ``p < j``, ``j = 1 .. n - 1``, written out: ``L^-1 x`` for a
    unit lower ``L`` (row stride ``stride`` in ``m``) over a column's ``n`` values in named registers, the
    sums in a loop's order (``_TRSM``; ``wgsl_lu_panel._chunk_solve``)."""
    return [f"{ind}{x}{j} = {x}{j}" + "".join(f" - {m}[{j * stride + p}u] * {x}{p}" for p in range(j)) + ";"
            for j in range(1, n)]


_TRSM = "\n".join(
    [f"    let a{j} = base + (k + {j}u) * ld + c;\n    var x{j} = T(0);\n    if ({j}u < w) {{ x{j} = W[a{j}]; }}"
     for j in range(NB)]
    + unit_lower_sums("x", "L", NB, NB, "    ")
    + [f"    if ({j}u < w) {{ W[a{j}] = x{j}; }}" for j in range(NB)])


@functools.cache
def backsub_source(t: str) -> str:
    """``prm``: [n, ld, r0, w, bs, nrhs, RC, CC, obs, FLAGW, FLAG, last, groups]: block row ``r0``
    of ``U X = Y`` (``U`` in ``W[:, :n]``, ``Y`` in ``W[:, n:]``, ``X`` to ``out``). The block of ``U``
    and the ``w x 64`` block of ``Y`` are loaded together into workgroup memory, so that the serial
    solve of the block reads no global memory; then each thread subtracts the block's product from
    4 x 4 elements of ``Y`` above it, one load of ``U`` for four columns, a row's loads at once (H200,
    float32 4096 with 16 right-hand sides: 74 -> 49 us a block row; the serial solve's loads of ``Y``
    and the update's loads behind its stores were global round trips in a row)."""
    shared = "var<workgroup> U: array<T, NB * NB>;\nvar<workgroup> X: array<T, NB * 64>;\n"
    body = """  if (id >= prm[12]) { return; }
  let n = prm[0];
  let ld = prm[1];
  let r0 = prm[2];
  let w = prm[3];
  let nrhs = prm[5];
  let per = prm[6] * prm[7];
  let b = id / per;
  let rc = (id % per) / prm[7];
  let cc = (id % per) % prm[7];
  let base = b * prm[4];
  let ob = b * prm[8];
  let c0 = cc * 64u;
  for (var e = lid; e < w * w; e += 256u) {
    U[(e / w) * NB + e % w] = W[base + (r0 + e / w) * ld + r0 + e % w];
  }
  for (var e = lid; e < w * 64u; e += 256u) {
    let c = c0 + e % 64u;
    X[e] = select(T(0), W[base + (r0 + e / 64u) * ld + n + min(c, nrhs - 1u)], c < nrhs);
  }
  workgroupBarrier();
  if (lid < 64u && c0 + lid < nrhs) {
    let c = c0 + lid;
@@BSSOLVE@@
    else {
      for (var jj = 0u; jj < w; jj++) {
        let j = w - 1u - jj;
        var s = X[j * 64u + lid];
        for (var p = j + 1u; p < w; p++) { s = s - U[j * NB + p] * X[p * 64u + lid]; }
        let xv = s / U[j * NB + j];
        X[j * 64u + lid] = xv;
        if (rc == 0u) { out[ob + (r0 + j) * nrhs + c] = xv; }
      }
    }
  }
  workgroupBarrier();
  let tx = lid % 16u;
  let ty = lid / 16u;
  for (var q = 0u; q < 4u; q++) {
    let i = rc * 64u + ty * 4u + q;
    if (i < r0 && c0 + tx * 4u < nrhs) {
      let row = base + i * ld + r0;
      var s0 = T(0);
      var s1 = T(0);
      var s2 = T(0);
      var s3 = T(0);
@@BSUPD@@
      let y = base + i * ld + n + c0 + tx * 4u;
      let cl = c0 + tx * 4u;
      W[y] = W[y] - s0;
      if (cl + 1u < nrhs) { W[y + 1u] = W[y + 1u] - s1; }
      if (cl + 2u < nrhs) { W[y + 2u] = W[y + 2u] - s2; }
      if (cl + 3u < nrhs) { W[y + 3u] = W[y + 3u] - s3; }
    }
  }
  if (prm[11] != 0u && id == 0u && lid == 0u) { out[prm[10]] = W[prm[9]]; }
"""
    solve = _BSSOLVE if BACKSUB_UNROLL else "    if (false) {}"
    return _shader(t, ["W:read_write:T", "out:read_write:T"],
                   body.replace("@@BSUPD@@", _BSUPD).replace("@@BSSOLVE@@", solve), shared)


# the solve of a full block (w == NB) with the column's NB values in named registers, the rows' sums written
# out: the same operations in the same order as the loop below it (which takes a partial last block), without
# its chain of workgroup-memory loads behind each multiply-add (BACKSUB_UNROLL = False: the loop always)
_BSSOLVE = "\n".join(
    ["    if (w == NB) {"]
    + [f"      var x{j} = X[{j * 64}u + lid];" for j in range(NB)]
    + [f"      x{j} = (x{j}" + "".join(f" - U[{j * NB + p}u] * x{p}" for p in range(j + 1, NB))
       + f") / U[{j * NB + j}u];\n      X[{j * 64}u + lid] = x{j};\n"
       f"      if (rc == 0u) {{ out[ob + (r0 + {j}u) * nrhs + c] = x{j}; }}" for j in reversed(range(NB))]
    + ["    }"])


# the update's sums for one row: its NB values of U loaded at once (a loop of one load and four fmas
# waited for each load in turn), then the fmas in the same order
_BSUPD = "\n".join(
    ["      let pw = w - 1u;"]
    + [f"      let a{p} = W[row + min({p}u, pw)];" for p in range(NB)]
    + [f"      if ({p}u < w) {{ let xp = {p * 64}u + tx * 4u; s0 = fma(a{p}, X[xp], s0); "
       f"s1 = fma(a{p}, X[xp + 1u], s1); s2 = fma(a{p}, X[xp + 2u], s2); s3 = fma(a{p}, X[xp + 3u], s3); }}"
       for p in range(NB)])


@functools.cache
def det_source(t: str) -> str:
    """``prm``: [n, ld, bs, mode, groups, FLAG, OUTFLAG]: per matrix, ``mode`` 0: ``det`` to ``out[b]``; 1:
    sign and log of ``|det|`` to ``out[2b]``, ``out[2b + 1]``; zero pivots give 0 and (0, -inf); the flag
    ``W[FLAG]`` copied to ``out[OUTFLAG]`` unless that is ``NONE``."""
    shared = "var<workgroup> sl: array<T, 64>;\nvar<workgroup> sn: array<u32, 64>;\n"
    body = f"""  if (id == 0u && lid == 0u && prm[6] != {NONE}u) {{ out[prm[6]] = W[prm[5]]; }}
  if (id >= prm[4]) {{ return; }}
  let n = prm[0];
  let base = id * prm[2];
  var s = T(0);
  var f = 0u;
  for (var i = lid; i < n; i += 64u) {{
    let d = W[base + i * prm[1] + i];
    if (d == T(0)) {{ f = f | 2u; }} else {{ s = s + ga_log_{t}(abs(d)); }}
    if (d < T(0)) {{ f = f ^ 1u; }}
    if (piv[id * n + i] != i) {{ f = f ^ 1u; }}
  }}
  sl[lid] = s;
  sn[lid] = f;
  workgroupBarrier();
  if (lid == 0u) {{
    var tot = T(0);
    var ff = 0u;
    for (var q = 0u; q < 64u; q++) {{ tot = tot + sl[q]; ff = (ff ^ (sn[q] & 1u)) | (sn[q] & 2u); }}
    var sign = select(T(1), T(-1), (ff & 1u) != 0u);
    if ((ff & 2u) != 0u) {{ sign = T(0); tot = -ga_inf_{t}(); }}
    if (prm[3] == 0u) {{
      out[id] = select(sign * ga_exp_{t}(tot), T(0), (ff & 2u) != 0u);
    }} else {{
      out[2u * id] = sign;
      out[2u * id + 1u] = tot;
    }}
  }}
"""
    return _shader(t, ["W:read_write:T", "piv:read:u32", "out:read_write:T"], body, shared, 64)
