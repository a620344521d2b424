"""WGSL for the Householder reduction of symmetric matrices to tridiagonal form (LAPACK's ``dsytrd``
with ``uplo = 'L'``, blocked as ``dlatrd``), every step spread over many workgroups;
``providers/wgpu_sytrd.py`` runs them (and ``render/wgsl_stebz.py``'s bisection after them).

- ``sym_source``: the lower triangle copied over the upper one (NumPy's ``eigvalsh`` reads the
  lower triangle only), the reduction's flag cleared;
- ``prep_source`` (``PR`` rows a workgroup): completes column ``k - 1`` of the panel (``W[:, k - 1] =
  y + alpha v``, ``alpha = -tau / 2 (y^T v)`` summed from ``symvw_source``'s partials) and prepares
  column ``k``: its update by the panel's earlier columns (``x = A[k:, k] - V W[k]^T - W V[k]^T``)
  into ``Y``'s second half, and per workgroup the partial sums of squares of ``x[2:]`` (Blue's three
  accumulators, as LAPACK 3.10's ``dnrm2``: no division, no overflow or underflow), a flag for
  values that are not finite and the partial products ``W^T x`` and ``V^T x``;
- ``symvw_source`` (``RW`` rows a workgroup): every workgroup combines the partials into the norm and
  the reflector of ``x[1:]`` as ``dlarfg`` makes it (``beta``, ``tau``, ``v = x / (alpha - beta)``, the
  same bits in each), computes ``y = A22 v`` for its rows (``A22`` the trailing matrix as it was at
  the panel's start, ``v`` scaled as it is read) and ``tau (y - V (W^T v) - W (V^T v))`` (``W^T v =
  W[k + 1] + scal W^T x``), writes ``v`` into ``V`` and its partial ``y^T v``; the first workgroup
  writes ``d``, ``e`` and ``tau`` to ``TD`` (``[d | e | tau]`` per matrix, then a flag raised for
  values that are not finite or a reflector so small that ``dlarfg`` would rescale it);
- ``vcopy_source`` (``eigh``'s reduction only): after a panel, its reflectors (``VW``'s first ``NB``
  columns) into the result's ``V`` (zeros above row ``k + 1`` and in columns with ``tau = 0``), with
  their ``d``, ``e`` and ``tau`` and the flag.

Two dispatches a column, none of them one workgroup: a global sum is a workgroup's partial written by
one dispatch and summed by every workgroup of the next (``PP``: per matrix ``PS`` values per
workgroup of ``prep_source``, then one per workgroup of ``symvw_source``). The trailing update of a
panel (``A22 -= V W^T + W V^T``) is the matmul provider's product of the ``[V | W | V]`` panel
buffer's views, not a kernel of this module.

>>> "storageBarrier" in prep_source("f32"), RW["f64"]
(True, 4)
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .wgsl_linalg import _shader
from .wgsl_stebz import CONST

NB = 32                 # panel width (columns of V and W between two trailing updates)
VS = 3 * NB             # row stride of the [V | W | V] panel buffer
TH = 256                # threads a workgroup
PR = 64                 # rows of prep_source a workgroup (TH / PR threads a row)
RW = {"f32": 8, "f64": 4}   # rows of y a workgroup of symvw_source (its RW * TH sums fit 16 KiB)
PH = 4                  # a prep_source workgroup's partials before W^T x: Blue's small, flag, medium, big
PS = PH + 2 * NB        # partials of a prep_source workgroup: the PH, W^T x, V^T x


def blue_exponents(t: str) -> tuple[int, int, int, int]:
    """Blue's thresholds and scales for the scaled sum of squares (LAPACK 3.10's ``la_constants``:
    ``tsml``, ``tbig``, ``ssml``, ``sbig``) as exponents of two, from the type's exponent range and digits
    (Fortran's ``minexponent`` is NumPy's ``minexp + 1``, ``digits`` its ``nmant + 1``).

    >>> blue_exponents("f32"), blue_exponents("f64")
    ((-63, 52, 75, -76), (-511, 486, 537, -538))
    """
    fi = np.finfo(np.float32 if t == "f32" else np.float64)
    emin, emax, digits = fi.minexp + 1, fi.maxexp, fi.nmant + 1
    return (math.ceil((emin - 1) / 2), math.floor((emax - digits + 1) / 2),
            -math.floor((emin - digits) / 2), -math.ceil((emax + digits - 1) / 2))


def _tree(name: str, ops: str, th: int) -> str:
    """``name``: a reduction over ``th`` threads of one value a plane (``ops``: ``+`` sums, ``m`` maxima, one
    letter a plane), in the workgroup array ``red`` (``th`` values a plane): 32 threads a plane fold ``th /
    32`` values each into their own slot, then a tree over the 32 slots; every thread gets the results
    (a scalar for one plane, else a vector)."""
    k, g = len(ops), th // 32
    ty = "T" if k == 1 else f"vec{k}<T>"
    args = ", ".join(f"v{p}: T" for p in range(k))
    ns = ops.count("+")                 # planes of sums first, then maxima
    assert ops == "+" * ns + "m" * (k - ns), ops

    def per_plane(sum_: str, max_: str) -> str:
        if ns in (0, k):
            return sum_ if ns else max_
        return f"if (lid < {32 * ns}u) {{ {sum_} }} else {{ {max_} }}"
    fold_line = per_plane(f"for (var i = 1u; i < {g}u; i++) {{ s += red[o + i * 32u]; }}",
                          f"for (var i = 1u; i < {g}u; i++) {{ s = max(s, red[o + i * 32u]); }}")
    tree_line = per_plane("red[o] += red[o + h];", "red[o] = max(red[o], red[o + h]);")
    puts = "\n".join(f"  red[{p * th}u + lid] = v{p};" for p in range(k))
    got = ", ".join(f"red[{p * th}u]" for p in range(k))
    return f"""fn {name}({args}, lid: u32) -> {ty} {{
{puts}
  workgroupBarrier();
  if (lid < {32 * k}u) {{
    let o = (lid / 32u) * {th}u + lid % 32u;
    var s = red[o];
    {fold_line}
    red[o] = s;
  }}
  workgroupBarrier();
  for (var h = 16u; h > 0u; h >>= 1u) {{
    if (lid < {32 * k}u && lid % 32u < h) {{
      let o = (lid / 32u) * {th}u + lid % 32u;
      {tree_line}
    }}
    workgroupBarrier();
  }}
  let r = {ty}({got});
  workgroupBarrier();
  return r;
}}
"""


def _reduce(th: int, t: str) -> str:
    """``wsum`` over ``th`` threads; ``blue``, one value's part of Blue's three accumulators (small,
    medium, big: no division, no overflow, as LAPACK's ``dnrm2``), ``blue_norm`` the norm from summed
    accumulators; ``wred4``: three sums and a maximum over the workgroup in one pass; all in the
    workgroup array ``red`` (at least ``4 th`` values)."""
    ex = blue_exponents(t)
    tsml, tbig, ssml, sbig = (repr(2.0 ** e) for e in ex)
    isbig, isssml = repr(2.0 ** -ex[3]), repr(2.0 ** -ex[2])
    return _tree("wsum", "+", th) + f"""
fn blue(ax: T) -> vec3<T> {{
  if (ax > T({tbig})) {{ let s = ax * T({sbig}); return vec3<T>(T(0), T(0), s * s); }}
  if (ax < T({tsml})) {{ let s = ax * T({ssml}); return vec3<T>(s * s, T(0), T(0)); }}
  return vec3<T>(T(0), ax * ax, T(0));
}}

fn blue_norm(a: vec3<T>) -> T {{
  var scl = T(1);
  var sumsq = a.y;
  if (a.z > T(0)) {{
    sumsq = a.z;
    // not (a.y * sbig) * sbig: a compiler may fold sbig * sbig, which underflows to zero
    if (a.y > T(0) || a.y != a.y) {{ let m = sqrt(a.y) * T({sbig}); sumsq += m * m; }}
    scl = T({isbig});
  }} else if (a.x > T(0)) {{
    if (a.y > T(0) || a.y != a.y) {{
      let am = sqrt(a.y);
      let as2 = sqrt(a.x) * T({isssml});
      let ymin = min(am, as2);
      let ymax = max(am, as2);
      sumsq = ymax * ymax * (T(1) + (ymin / ymax) * (ymin / ymax));
    }} else {{
      scl = T({isssml});
      sumsq = a.x;
    }}
  }}
  return scl * sqrt(sumsq);
}}
""" + _tree("wred4", "+++m", th)


@functools.cache
def sym_source(t: str) -> str:
    """``prm``: [count, n, FLAG]: ``W[i, j] = W[j, i]`` above the diagonal of every ``n x n`` matrix
    (``count`` elements), ``TD[FLAG] = 0``."""
    body = """  let gi = id * 256u + lid;
  if (gi == 0u) { TD[prm[2]] = T(0); }
  if (gi >= prm[0]) { return; }
  let n = prm[1];
  let j = gi % n;
  let i = (gi / n) % n;
  if (j > i) { W[gi] = W[gi - i * n - j + j * n + i]; }
"""
    return _shader(t, ["W:read_write:T", "TD:read_write:T"], body)



def _head(rw: int, groups: int) -> str:
    """The bases both kernels share: matrix ``b`` and workgroup ``g`` (``prm[groups]`` workgroups a
    matrix), its ``VW``, ``Y``, ``TD``, ``A`` and partials (``PP``) offsets; ``prm`` starts [n, k, k0,
    org, sld, sbs]."""
    return f"""  let n = prm[0]; let k = prm[1]; let k0 = prm[2]; let org = prm[3]; let sld = prm[4];
  let b = id / prm[{groups}];
  let g = id % prm[{groups}];
  let vb = b * n * {VS}u;
  let yb = b * 2u * n;
  let tb = b * 3u * n;
  let ab = b * prm[5];
  let g1m = (n + {PR - 1}u) / {PR}u;
  let pb = b * (g1m * {PS}u + (n + {rw - 1}u) / {rw}u);
"""


@functools.cache
def prep_source(t: str) -> str:
    """``prm``: [n, k, k0, org, sld, sbs, G1, groups, complete, prepare]: ``G1`` workgroups a matrix of
    ``PR`` rows from row ``k`` (``TH / PR`` threads a row, each a share of the columns of its update).
    ``A`` is the trailing matrix of the panel starting at column ``k0`` (row ``org`` of the whole
    matrix at ``A[b * sbs]``, row stride ``sld``), ``VW`` the panel's ``[V | W | V]`` (``n`` rows of
    ``3 NB`` a matrix), ``Y`` per matrix ``y`` (``n``) then ``x`` (``n``), ``TD`` per matrix ``[d | e |
    tau]``, ``PP`` the partials (module docstring)."""
    big = CONST[t][2]
    rw = RW[t]
    lanes = TH // NB
    QT = TH // PR
    shared = (f"var<workgroup> red: array<T, {4 * TH}>;\nvar<workgroup> rk: array<T, {2 * NB}>;\n"
              f"var<workgroup> xs: array<T, {PR}>;\n" + _reduce(TH, t))
    body = f"""  if (id >= prm[7]) {{ return; }}
{_head(rw, 6)}  let r0 = k + g * {PR}u;
  let rl = lid % {PR}u;
  let qt = lid / {PR}u;
  let r = r0 + rl;
  let live = r < n;
  let row = vb + min(r, n - 1u) * {VS}u;
  var wk = T(0);
  var jc = {NB}u;
  if (prm[8] != 0u) {{
    // column c = k - 1: W[:, c] = y + alpha v, alpha = -tau / 2 (y^T v)
    let c = k - 1u;
    jc = c - k0;
    let g2 = (n - k + {rw - 1}u) / {rw}u;
    var p = T(0);
    for (var i = lid; i < g2; i += {TH}u) {{ p += PP[pb + g1m * {PS}u + i]; }}
    let alpha = T(-0.5) * TD[tb + 2u * n + c] * wsum(p, lid);
    wk = Y[yb + k] + alpha * VW[vb + k * {VS}u + jc];
    if (live && qt == 0u) {{ VW[row + {NB}u + jc] = Y[yb + r] + alpha * VW[row + jc]; }}
  }}
  if (prm[9] == 0u) {{ return; }}
  // column k: x = A[k:, k] - V W[k]^T - W V[k]^T (W[k, c] as just computed: other rows' writes race),
  // TH / PR threads a row, each every (TH / PR)-th column, their sums added in workgroup memory
  let j = k - k0;
  if (lid < j) {{
    rk[lid] = VW[vb + k * {VS}u + lid];
    rk[{NB}u + lid] = select(VW[vb + k * {VS}u + {NB}u + lid], wk, lid == jc);
  }}
  workgroupBarrier();
  storageBarrier();     // W[r, c] of the row's first thread
  var u0 = T(0);
  var u1 = T(0);
  if (live) {{
    var qq = qt;
    for (; qq + {QT}u < j; qq += {2 * QT}u) {{     // two columns an iteration: four loads in flight
      u0 += VW[row + qq] * rk[{NB}u + qq] + VW[row + {NB}u + qq] * rk[qq];
      u1 += VW[row + qq + {QT}u] * rk[{NB}u + qq + {QT}u] + VW[row + {NB}u + qq + {QT}u] * rk[qq + {QT}u];
    }}
    if (qq < j) {{ u0 += VW[row + qq] * rk[{NB}u + qq] + VW[row + {NB}u + qq] * rk[qq]; }}
  }}
  red[lid] = u0 + u1;
  workgroupBarrier();
  var x = T(0);
  var bad = T(0);
  if (live && qt == 0u) {{
    var su = T(0);
    for (var i = 0u; i < {QT}u; i++) {{ su += red[i * {PR}u + rl]; }}
    x = A[ab + (r - org) * sld + k - org] - su;
    Y[yb + n + r] = x;
    bad = select(T(0), T(1), !(abs(x) <= T({big})));
  }}
  workgroupBarrier();
  let tail = live && qt == 0u && r >= k + 2u;
  if (lid < {PR}u) {{ xs[lid] = select(T(0), x, tail); }}
  let bl = blue(select(T(0), abs(x), tail));
  let part = wred4(bl.x, bl.y, bl.z, bad, lid);
  storageBarrier();     // W[:, c] of the other rows
  // W^T x and V^T x over the workgroup's rows: lanes rows a column
  // (rows past n read row n - 1 times xs = 0; four rows an iteration: eight loads in flight)
  let q = lid % {NB}u;
  var s1 = T(0);
  var s2 = T(0);
  if (q < j) {{
    var t1 = T(0);
    var t2 = T(0);
    for (var i = lid / {NB}u; i < {PR}u; i += {4 * lanes}u) {{
      let ra = vb + min(r0 + i, n - 1u) * {VS}u + q;
      let rb = vb + min(r0 + i + {lanes}u, n - 1u) * {VS}u + q;
      let rc = vb + min(r0 + i + {2 * lanes}u, n - 1u) * {VS}u + q;
      let rd = vb + min(r0 + i + {3 * lanes}u, n - 1u) * {VS}u + q;
      let xa = xs[i];
      let xb = xs[i + {lanes}u];
      let xc = xs[i + {2 * lanes}u];
      let xd = xs[i + {3 * lanes}u];
      s1 += VW[ra + {NB}u] * xa + VW[rc + {NB}u] * xc;
      t1 += VW[rb + {NB}u] * xb + VW[rd + {NB}u] * xd;
      s2 += VW[ra] * xa + VW[rc] * xc;
      t2 += VW[rb] * xb + VW[rd] * xd;
    }}
    s1 += t1;
    s2 += t2;
  }}
  red[lid] = s1;
  red[{TH}u + lid] = s2;
  workgroupBarrier();
  let gp = pb + g * {PS}u;
  if (lid < {NB}u) {{
    var a1 = T(0);
    var a2 = T(0);
    for (var i = 0u; i < {lanes}u; i++) {{ a1 += red[i * {NB}u + lid]; a2 += red[{TH}u + i * {NB}u + lid]; }}
    PP[gp + {PH}u + lid] = a1;
    PP[gp + {PH + NB}u + lid] = a2;
  }}
  if (lid == 0u) {{ PP[gp] = part.x; PP[gp + 1u] = part.w; PP[gp + 2u] = part.y; PP[gp + 3u] = part.z; }}
"""
    return _shader(t, ["A:read:T", "VW:read_write:T", "Y:read_write:T", "TD:read_write:T", "PP:read_write:T"],
                   body, shared=shared, wg=TH)


@functools.cache
def symvw_source(t: str) -> str:
    """``prm``: [n, k, k0, org, sld, sbs, G1, G2, groups, FLAG]: ``G2`` workgroups a matrix of ``RW``
    rows of ``y`` from row ``k + 1`` (``G1``: the workgroups of the ``prep_source`` before it);
    buffers as ``prep_source``'s, the reduction's flag at ``TD[FLAG]``."""
    safmin, ulp, big = CONST[t]
    rw = RW[t]
    lanes = TH // rw
    accs = "\n".join(f"  var a{i} = T(0);" for i in range(rw))
    rows = "\n".join(f"  let w{i} = min(r0 + {i}u, n - 1u) - org;" for i in range(rw))
    fma = "\n".join(f"    a{i} += A[ab + w{i} * sld + cc] * vc;" for i in range(rw))
    fma2 = "\n".join(f"    a{i} += A[ab + w{i} * sld + cc] * vc + A[ab + w{i} * sld + cd] * vd;" for i in range(rw))
    put = "\n".join(f"  red[{i * TH}u + lid] = a{i};" for i in range(rw))
    shared = (f"var<workgroup> red: array<T, {rw * TH}>;\nvar<workgroup> sab: array<T, {2 * NB}>;\n"
              f"var<workgroup> yv: array<T, {rw}>;\n" + _reduce(TH, t))
    body = f"""  if (id >= prm[8]) {{ return; }}
  let g1 = prm[6];
{_head(rw, 7)}  let j = k - k0;
  // the reflector of x[1:] (dlarfg), the norm from prep_source's partials
  var asml = T(0);
  var amed = T(0);
  var abig = T(0);
  var bad = T(0);
  for (var i = lid; i < g1; i += {TH}u) {{
    let o = pb + i * {PS}u;
    asml += PP[o];
    bad = max(bad, PP[o + 1u]);
    amed += PP[o + 2u];
    abig += PP[o + 3u];
  }}
  let tot = wred4(asml, amed, abig, bad, lid);
  let xn = blue_norm(tot.xyz);
  let nbad = tot.w;
  let k1 = min(k + 1u, n - 1u);
  let dk = Y[yb + n + k];
  let al = select(T(0), Y[yb + n + k1], k + 1u < n);
  var beta = al;
  var tau = T(0);
  var scal = T(1);
  if (xn > T(0)) {{
    let h = max(abs(al), xn);
    let hy = h * sqrt((al / h) * (al / h) + (xn / h) * (xn / h));
    beta = select(hy, -hy, al >= T(0));
    tau = (beta - al) / beta;
    scal = T(1) / (al - beta);
  }}
  // W^T v (first NB) and V^T v: row k + 1 (v = 1) and the partial products with x scaled
  // (four threads a sum, then one)
  let sl = lid % {2 * NB}u;
  var ps = T(0);
  if (sl % {NB}u < j) {{
    for (var i = lid / {2 * NB}u; i < g1; i += {TH // (2 * NB)}u) {{ ps += PP[pb + i * {PS}u + {PH}u + sl]; }}
  }}
  red[lid] = ps;
  workgroupBarrier();
  if (lid < {2 * NB}u) {{
    let q = lid % {NB}u;
    var s = T(0);
    if (q < j) {{
      for (var i = 0u; i < {TH // (2 * NB)}u; i++) {{ s += red[i * {2 * NB}u + lid]; }}
      s = VW[vb + k1 * {VS}u + select(q, {NB}u + q, lid < {NB}u)] + scal * s;
    }}
    sab[lid] = s;
  }}
  workgroupBarrier();
  // y = A22 v for rows r0 ..
  let r0 = k + 1u + g * {rw}u;
{accs}
{rows}
  var c = k + 1u + lid;
  for (; c + {TH}u < n; c += {2 * TH}u) {{     // two columns an iteration: 2 RW loads in flight
    let vc = select(Y[yb + n + c] * scal, T(1), c == k + 1u);
    let vd = Y[yb + n + c + {TH}u] * scal;
    let cc = c - org;
    let cd = cc + {TH}u;
{fma2}
  }}
  if (c < n) {{
    let vc = select(Y[yb + n + c] * scal, T(1), c == k + 1u);
    let cc = c - org;
{fma}
  }}
{put}
  workgroupBarrier();
  // each row's TH sums: {lanes} threads a row add RW each (in place: each reads only its own), then one
  let ro = (lid / {lanes}u) * {TH}u + lid % {lanes}u;
  var rs = T(0);
  for (var i = 0u; i < {rw}u; i++) {{ rs += red[ro + i * {lanes}u]; }}
  red[ro] = rs;
  workgroupBarrier();
  if (lid < {rw}u) {{
    var y = T(0);
    for (var i = 0u; i < {lanes}u; i++) {{ y += red[lid * {TH}u + i]; }}
    yv[lid] = y;
  }}
  workgroupBarrier();
  // V (W^T v) + W (V^T v) for the rows: {lanes} threads a row, one column each
  let ri = r0 + lid / {lanes}u;
  let qc = lid % {lanes}u;
  var tq = T(0);
  if (qc < j && ri < n) {{
    tq = VW[vb + ri * {VS}u + qc] * sab[qc] + VW[vb + ri * {VS}u + {NB}u + qc] * sab[{NB}u + qc];
  }}
  red[lid] = tq;
  workgroupBarrier();
  if (lid < {rw}u) {{
    var s = T(0);
    for (var l = 0u; l < {NB}u; l++) {{ s += red[lid * {lanes}u + l]; }}
    let r = r0 + lid;
    var py = T(0);
    if (r < n) {{
      let yr = tau * (yv[lid] - s);
      let v = select(Y[yb + n + r] * scal, T(1), r == k + 1u);
      Y[yb + r] = yr;
      VW[vb + r * {VS}u + j] = v;
      VW[vb + r * {VS}u + {2 * NB}u + j] = v;
      py = yr * v;
    }}
    red[{TH}u + lid] = py;
  }}
  workgroupBarrier();
  if (lid == 0u) {{
    var p = T(0);
    for (var l = 0u; l < {rw}u; l++) {{ p += red[{TH}u + l]; }}
    PP[pb + g1m * {PS}u + g] = p;
    if (g == 0u) {{
      if (k + 1u < n) {{ TD[tb + n + k] = beta; }}
      TD[tb + k] = dk;
      TD[tb + 2u * n + k] = tau;
      // dlarfg rescales a reflector below safmin / ulp; such columns (and values that are not
      // finite) go to LAPACK
      let tiny = beta != T(0) && abs(beta) < T({safmin}) / T({ulp});
      if (nbad > T(0) || tiny || !(abs(dk) <= T({big}))) {{ TD[prm[9]] = T(1); }}
    }}
  }}
"""
    return _shader(t, ["A:read:T", "VW:read_write:T", "Y:read_write:T", "TD:read_write:T", "PP:read_write:T"],
                   body, shared=shared, wg=TH)


@functools.cache
def vcopy_source(t: str) -> str:
    """``prm``: [n, k0, count, per, OFLAG, TFLAG]: one thread an element of the panel's reflectors
    (``count``: ``batch * n * NB``), column ``k = k0 + j`` of matrix ``b`` into ``O[b * per + 3 n +
    r * n + k]`` (``V`` row-major, zero in rows ``r <= k`` and where ``tau = 0``); row 0's threads copy
    ``d``, ``e`` (0 in the last) and ``tau`` of the column into ``O[b * per ..]``, thread 0 the flag."""
    body = f"""  let gi = id * 256u + lid;
  let n = prm[0];
  if (gi == 0u) {{ O[prm[4]] = TD[prm[5]]; }}
  if (gi >= prm[2]) {{ return; }}
  let j = gi % {NB}u;
  let r = (gi / {NB}u) % n;
  let b = gi / ({NB}u * n);
  let k = prm[1] + j;
  if (k >= n) {{ return; }}
  let tb = b * 3u * n;
  let ob = b * prm[3];
  let tau = TD[tb + 2u * n + k];
  var v = T(0);
  if (r > k && tau != T(0)) {{ v = VW[(b * n + r) * {VS}u + j]; }}
  O[ob + 3u * n + r * n + k] = v;
  if (r == 0u) {{
    O[ob + k] = TD[tb + k];
    O[ob + n + k] = select(T(0), TD[tb + n + k], k + 1u < n);
    O[ob + 2u * n + k] = tau;
  }}
"""
    return _shader(t, ["VW:read:T", "TD:read:T", "O:read_write:T"], body)
