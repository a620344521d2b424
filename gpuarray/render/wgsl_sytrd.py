"""WGSL for eigenvalues of symmetric matrices of any size: Householder reduction to tridiagonal form
(LAPACK's ``dsytrd`` with ``uplo = 'L'``, blocked as ``dlatrd``) and bisection of the tridiagonal
matrix (``dstebz``'s Sturm counts, many points at a time). ``providers/wgpu_sytrd.py`` runs them.

- ``sym_source``: the lower triangle copied over the upper one (NumPy's ``eigvalsh`` reads the
  lower triangle only), the reduction's flag cleared;
- ``finish_source``: one workgroup a matrix finishes column ``k - 1`` of a panel (``w = tau (y -
  V (W^T v) - W (V^T v))``, ``w -= tau / 2 (w^T v) v``: ``dlatrd``'s column of ``W``) and prepares
  column ``k`` (its update by the panel's earlier columns, ``A[k:, k] -= V W[k]^T + W V[k]^T``, and
  the reflector of ``A[k + 1:, k]`` as ``dlarfg`` makes it, the norm scaled by the column's largest
  magnitude); ``d``, ``e`` and ``tau`` go to ``TD`` (``[d | e | tau]`` per matrix, then a flag raised
  for values that are not finite or a reflector so small that ``dlarfg`` would rescale it);
- ``symv_source``: ``y = A22 v`` for the reflector just made, ``A22`` the trailing matrix as it was at
  the panel's start (``rw`` rows a workgroup, a row's products summed over the workgroup);
- ``stebz_source``: one workgroup of ``tb`` threads an eigenvalue: the tridiagonal matrix scaled by its
  largest magnitude, Gershgorin bounds widened as ``dstebz`` does, then a fixed number of rounds in
  which every thread counts the eigenvalues below one of ``tb`` points of the interval (the Sturm
  sequence with ``dlaebz``'s ``pivmin``) and the interval shrinks to the two neighbouring points
  whose counts bracket the eigenvalue's index: ``log2(tb + 1)`` bits a round.

The trailing update of a panel (``A22 -= V W^T + W V^T``) is the matmul provider's product of the
``[V | W | V]`` panel buffer's views, not a kernel of this module.

>>> "workgroupBarrier" in finish_source("f32")
True
"""

from __future__ import annotations

import functools

from .wgsl_linalg import _shader

NB = 32                 # panel width (columns of V and W between two trailing updates)
VS = 3 * NB             # row stride of the [V | W | V] panel buffer
TH = 256                # threads of symv_source (finish_source: as many as the adapter allows, up to 1024)
RW = 8                  # rows of y a workgroup of symv_source
TB = 64                 # threads (points of the interval) a workgroup of stebz_source
# rounds of stebz_source: each narrows the interval by a factor tb + 1 = 65, from the widened
# Gershgorin interval (at most 2.1 of the scaled norm each side) to below ulp * norm
ROUNDS = {"f32": 6, "f64": 10}
_CONST = {  # safe minimum, ulp (LAPACK's dlamch('S'), dlamch('P')), largest finite value
    "f32": ("1.1754943508222875e-38", "1.1920928955078125e-07", "3.4028234663852886e+38"),
    "f64": ("2.2250738585072014e-308", "2.220446049250313e-16", "1.7976931348623157e+308"),
}

def _reduce(th: int) -> str:
    """``wsum`` / ``wmax`` over ``th`` threads (``th / 32`` partial sums, then one), and ``wnrm2``:
    ``dnrm2``'s scaled sum of squares, each thread's ``(scale, ssq)`` combined in one pass."""
    g = th // 32
    return f"""fn wsum(v: T, lid: u32) -> T {{
  red[lid] = v;
  workgroupBarrier();
  if (lid < 32u) {{
    var s = T(0);
    for (var i = 0u; i < {g}u; i++) {{ s += red[lid * {g}u + i]; }}
    red2[lid] = s;
  }}
  workgroupBarrier();
  var r = T(0);
  for (var i = 0u; i < 32u; i++) {{ r += red2[i]; }}
  workgroupBarrier();
  return r;
}}

fn wmax(v: T, lid: u32) -> T {{
  red[lid] = v;
  workgroupBarrier();
  if (lid < 32u) {{
    var s = T(0);
    for (var i = 0u; i < {g}u; i++) {{ s = max(s, red[lid * {g}u + i]); }}
    red2[lid] = s;
  }}
  workgroupBarrier();
  var r = T(0);
  for (var i = 0u; i < 32u; i++) {{ r = max(r, red2[i]); }}
  workgroupBarrier();
  return r;
}}

fn nrm2_add(sc: ptr<function, T>, sq: ptr<function, T>, x: T) {{
  let ax = abs(x);
  if (ax > *sc) {{ *sq = T(1) + *sq * (*sc / ax) * (*sc / ax); *sc = ax; }}
  else if (ax > T(0)) {{ *sq += (ax / *sc) * (ax / *sc); }}
}}

fn wnrm2(sc0: T, sq0: T, lid: u32) -> T {{
  red[lid] = sc0;
  red2[lid] = sq0;
  workgroupBarrier();
  var sc = T(0);
  var sq = T(0);
  if (lid < 32u) {{
    for (var i = 0u; i < {g}u; i++) {{
      let a = red[lid * {g}u + i];
      if (a > T(0)) {{ nrm2_add(&sc, &sq, a); sq += (red2[lid * {g}u + i] - T(1)) * (a / sc) * (a / sc); }}
    }}
  }}
  workgroupBarrier();
  if (lid < 32u) {{ red[lid] = sc; red2[lid] = sq; }}
  workgroupBarrier();
  sc = T(0);
  sq = T(0);
  for (var i = 0u; i < 32u; i++) {{
    let a = red[i];
    if (a > T(0)) {{ nrm2_add(&sc, &sq, a); sq += (red2[i] - T(1)) * (a / sc) * (a / sc); }}
  }}
  workgroupBarrier();
  return sc * sqrt(sq);
}}
"""


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


@functools.cache
def finish_source(t: str, th: int = TH) -> str:
    """``prm``: [n, k, k0, org, sld, sbs, complete, prepare, FLAG]: one workgroup of ``th`` threads a
    matrix (``id``). ``A`` is the trailing matrix of the panel starting at column ``k0`` (row ``org`` of
    the whole matrix at ``A[id * sbs]``, row stride ``sld``), ``VW`` the panel's ``[V | W | V]`` (``n``
    rows of ``3 NB`` a matrix), ``Y`` per matrix ``y = A22 v`` (``n``) then ``v`` (``n``), ``TD`` per
    matrix ``[d | e | tau]`` (``3 n``) and the flag at ``FLAG``. A thread takes whole rows of ``V`` and
    ``W``, except for ``W^T v`` and ``V^T v`` (``th / NB`` lanes of rows a column, four rows an
    iteration)."""
    safmin, ulp, big = _CONST[t]
    lanes = th // NB
    shared = (f"var<workgroup> red: array<T, {th}>;\nvar<workgroup> red2: array<T, {th}>;\n"
              f"var<workgroup> sa: array<T, {NB}>;\nvar<workgroup> sb: array<T, {NB}>;\n"
              f"var<workgroup> rk: array<T, {2 * NB}>;\n" + _reduce(th))
    body = f"""  let n = prm[0]; let k = prm[1]; let k0 = prm[2]; let org = prm[3]; let sld = prm[4];
  let b = id;
  let vb = b * n * {VS}u;
  let yb = b * 2u * n;
  let tb = b * 3u * n;
  let ab = b * prm[5];
  let q = lid % {NB}u;
  let rl = lid / {NB}u;
  if (prm[6] != 0u) {{
    // column c = k - 1 of the panel: w = tau (y - V (W^T v) - W (V^T v)), then w += alpha v
    let c = k - 1u;
    let jc = c - k0;
    let tau = TD[tb + 2u * n + c];
    var pa = T(0);
    var pb = T(0);
    if (q < jc) {{
      // four rows an iteration: their loads in flight together
      var pa1 = T(0);
      var pb1 = T(0);
      var r = c + 1u + rl;
      for (; r + {3 * lanes}u < n; r += {4 * lanes}u) {{
        let r1 = r + {lanes}u;
        let r2 = r + {2 * lanes}u;
        let r3 = r + {3 * lanes}u;
        let v0 = Y[yb + n + r];
        let v1 = Y[yb + n + r1];
        let v2 = Y[yb + n + r2];
        let v3 = Y[yb + n + r3];
        let w0 = VW[vb + r * {VS}u + {NB}u + q];
        let w1 = VW[vb + r1 * {VS}u + {NB}u + q];
        let w2 = VW[vb + r2 * {VS}u + {NB}u + q];
        let w3 = VW[vb + r3 * {VS}u + {NB}u + q];
        let u0 = VW[vb + r * {VS}u + q];
        let u1 = VW[vb + r1 * {VS}u + q];
        let u2 = VW[vb + r2 * {VS}u + q];
        let u3 = VW[vb + r3 * {VS}u + q];
        pa += w0 * v0 + w2 * v2;
        pa1 += w1 * v1 + w3 * v3;
        pb += u0 * v0 + u2 * v2;
        pb1 += u1 * v1 + u3 * v3;
      }}
      for (; r < n; r += {lanes}u) {{
        let vr = Y[yb + n + r];
        pa += VW[vb + r * {VS}u + {NB}u + q] * vr;
        pb += VW[vb + r * {VS}u + q] * vr;
      }}
      pa += pa1;
      pb += pb1;
    }}
    red[lid] = pa;
    red2[lid] = pb;
    workgroupBarrier();
    if (lid < {NB}u) {{
      var s1 = T(0);
      var s2 = T(0);
      for (var i = 0u; i < {lanes}u; i++) {{ s1 += red[i * {NB}u + lid]; s2 += red2[i * {NB}u + lid]; }}
      sa[lid] = s1;
      sb[lid] = s2;
    }}
    workgroupBarrier();
    var pyv = T(0);
    for (var r = c + 1u + lid; r < n; r += {th}u) {{
      var yr = Y[yb + r];
      let row = vb + r * {VS}u;
      var s0 = T(0);
      var s1 = T(0);
      var qq = 0u;
      for (; qq + 1u < jc; qq += 2u) {{     // two columns an iteration: four loads in flight
        let x0 = VW[row + qq];
        let x1 = VW[row + qq + 1u];
        let z0 = VW[row + {NB}u + qq];
        let z1 = VW[row + {NB}u + qq + 1u];
        s0 += x0 * sa[qq] + z0 * sb[qq];
        s1 += x1 * sa[qq + 1u] + z1 * sb[qq + 1u];
      }}
      if (qq < jc) {{ s0 += VW[row + qq] * sa[qq] + VW[row + {NB}u + qq] * sb[qq]; }}
      yr -= s0 + s1;
      yr = yr * tau;
      Y[yb + r] = yr;
      pyv += yr * Y[yb + n + r];
    }}
    let alpha = T(-0.5) * tau * wsum(pyv, lid);
    for (var r = c + 1u + lid; r < n; r += {th}u) {{
      VW[vb + r * {VS}u + {NB}u + jc] = Y[yb + r] + alpha * Y[yb + n + r];
    }}
    storageBarrier();
  }}
  if (prm[7] != 0u) {{
    // column k: A[k:, k] -= V W[k]^T + W V[k]^T, then the reflector of A[k + 1:, k]
    let j = k - k0;
    if (lid < j) {{ rk[lid] = VW[vb + k * {VS}u + lid]; rk[{NB}u + lid] = VW[vb + k * {VS}u + {NB}u + lid]; }}
    workgroupBarrier();
    var sc = T(0);
    var sq = T(0);
    var bad = T(0);
    for (var r = k + lid; r < n; r += {th}u) {{
      var x = A[ab + (r - org) * sld + k - org];
      let row = vb + r * {VS}u;
      var s0 = T(0);
      var s1 = T(0);
      var qq = 0u;
      for (; qq + 1u < j; qq += 2u) {{
        let x0 = VW[row + qq];
        let x1 = VW[row + qq + 1u];
        let z0 = VW[row + {NB}u + qq];
        let z1 = VW[row + {NB}u + qq + 1u];
        s0 += x0 * rk[{NB}u + qq] + z0 * rk[qq];
        s1 += x1 * rk[{NB}u + qq + 1u] + z1 * rk[qq + 1u];
      }}
      if (qq < j) {{ s0 += VW[row + qq] * rk[{NB}u + qq] + VW[row + {NB}u + qq] * rk[qq]; }}
      x -= s0 + s1;
      VW[row + j] = x;
      bad = select(bad, T(1), !(abs(x) <= T({big})));
      if (r >= k + 2u) {{ nrm2_add(&sc, &sq, x); }}
    }}
    let xn = wnrm2(sc, sq, lid);
    let nbad = wmax(bad, lid);
    storageBarrier();
    let dk = VW[vb + k * {VS}u + j];
    let k1 = min(k + 1u, n - 1u);
    let al = select(T(0), VW[vb + k1 * {VS}u + j], k + 1u < n);
    storageBarrier();
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
    for (var r = k + lid; r < n; r += {th}u) {{
      if (r >= k + 2u) {{
        let v = VW[vb + r * {VS}u + j] * scal;
        VW[vb + r * {VS}u + j] = v;
        VW[vb + r * {VS}u + {2 * NB}u + j] = v;
        Y[yb + n + r] = v;
      }}
    }}
    if (lid == 0u) {{
      if (k + 1u < n) {{
        VW[vb + k1 * {VS}u + j] = T(1);
        VW[vb + k1 * {VS}u + {2 * NB}u + j] = T(1);
        Y[yb + n + k1] = T(1);
        TD[tb + n + k] = beta;
      }}
      TD[tb + k] = dk;
      TD[tb + 2u * n + k] = tau;
      // dlarfg rescales a reflector below safmin / ulp; such columns (and values that are not
      // finite) go to LAPACK
      let tiny = beta != T(0) && abs(beta) < T({safmin}) / T({ulp});
      if (nbad > T(0) || tiny || !(abs(dk) <= T({big}))) {{ TD[prm[8]] = T(1); }}
    }}
  }}
"""
    return _shader(t, ["A:read:T", "VW:read_write:T", "Y:read_write:T", "TD:read_write:T"], body,
                   shared=shared, wg=th)


@functools.cache
def symv_source(t: str) -> str:
    """``prm``: [n, k, org, sld, sbs, G, groups]: ``Y[:n] = A22 v`` for rows ``k + 1 ..`` of every
    matrix, ``A22 = A[k + 1:, k + 1:]`` (the trailing matrix at ``A[b * sbs]``, row ``org`` of the
    whole matrix first, row stride ``sld``), ``v`` the second half of ``Y``; ``G`` workgroups of
    ``RW`` rows a matrix."""
    accs = "\n".join(f"  var a{i} = T(0);" for i in range(RW))
    rows = "\n".join(f"  let w{i} = min(r0 + {i}u, n - 1u) - org;" for i in range(RW))
    fma = "\n".join(f"    a{i} += A[ab + w{i} * sld + cc] * vc;" for i in range(RW))
    put = "\n".join(f"  red[{i * TH}u + lid] = a{i};" for i in range(RW))
    shared = f"var<workgroup> red: array<T, {RW * TH}>;\n"
    body = f"""  if (id >= prm[6]) {{ return; }}
  let n = prm[0]; let k = prm[1]; let org = prm[2]; let sld = prm[3];
  let b = id / prm[5];
  let g = id % prm[5];
  let ab = b * prm[4];
  let yb = b * 2u * n;
  let r0 = k + 1u + g * {RW}u;
{accs}
{rows}
  for (var c = k + 1u + lid; c < n; c += {TH}u) {{
    let vc = Y[yb + n + c];
    let cc = c - org;
{fma}
  }}
{put}
  workgroupBarrier();
  for (var s = {TH // 2}u; s > 0u; s = s >> 1u) {{
    if (lid < s) {{
      for (var i = 0u; i < {RW}u; i++) {{ red[i * {TH}u + lid] = red[i * {TH}u + lid] + red[i * {TH}u + lid + s]; }}
    }}
    workgroupBarrier();
  }}
  if (lid < {RW}u && r0 + lid < n) {{ Y[yb + r0 + lid] = red[lid * {TH}u]; }}
"""
    return _shader(t, ["A:read:T", "Y:read_write:T"], body, shared=shared, wg=TH)


@functools.cache
def stebz_source(t: str) -> str:
    """``prm``: [n, total, TDFLAG, FLAG]: eigenvalue ``id % n`` (ascending) of tridiagonal matrix
    ``id / n`` (``TD``: ``[d | e | tau]`` per matrix) into ``D[id]``; ``D[FLAG]`` raised where the
    reduction raised ``TD[TDFLAG]`` or ``d`` and ``e`` are not finite (LAPACK then takes the matrix)."""
    safmin, ulp, big = _CONST[t]
    shared = (f"var<workgroup> red: array<T, {TB}>;\nvar<workgroup> red2: array<T, {TB}>;\n"
              f"var<workgroup> red3: array<T, {TB}>;\nvar<workgroup> cnt: atomic<u32>;\n")
    body = f"""  let n = prm[0];
  let live = id < prm[1];
  let b = min(id, prm[1] - 1u) / n;
  let i = min(id, prm[1] - 1u) % n;
  let db = b * 3u * n;
  // the matrix scaled by its largest magnitude s
  var pm = T(0);
  var bad = false;
  for (var l = lid; l < n; l += {TB}u) {{
    let dl = TD[db + l];
    let el = select(T(0), TD[db + n + min(l, n - 2u)], l + 1u < n);
    bad = bad || !(abs(dl) <= T({big})) || !(abs(el) <= T({big}));
    pm = max(pm, max(abs(dl), abs(el)));
  }}
  red[lid] = pm;
  red2[lid] = select(T(0), T(1), bad);
  workgroupBarrier();
  for (var s = {TB // 2}u; s > 0u; s = s >> 1u) {{
    if (lid < s) {{ red[lid] = max(red[lid], red[lid + s]); red2[lid] = max(red2[lid], red2[lid + s]); }}
    workgroupBarrier();
  }}
  let sc = red[0];
  let nbad = red2[0];
  workgroupBarrier();
  let is = select(T(1) / sc, T(0), sc == T(0));
  // Gershgorin bounds of the scaled matrix, and max e^2 (pivmin)
  var lo = T({big});
  var hi = -T({big});
  var e2 = T(0);
  for (var l = lid; l < n; l += {TB}u) {{
    let dl = TD[db + l] * is;
    let er = select(T(0), abs(TD[db + n + min(l, n - 2u)]) * is, l + 1u < n);
    let el = select(T(0), abs(TD[db + n + l - 1u]) * is, l > 0u);
    lo = min(lo, dl - er - el);
    hi = max(hi, dl + er + el);
    e2 = max(e2, er * er);
  }}
  red[lid] = lo;
  red2[lid] = hi;
  red3[lid] = e2;
  workgroupBarrier();
  for (var s = {TB // 2}u; s > 0u; s = s >> 1u) {{
    if (lid < s) {{
      red[lid] = min(red[lid], red[lid + s]);
      red2[lid] = max(red2[lid], red2[lid + s]);
      red3[lid] = max(red3[lid], red3[lid + s]);
    }}
    workgroupBarrier();
  }}
  let pivmin = T({safmin}) * max(T(1), red3[0]);
  let tnorm = max(abs(red[0]), abs(red2[0]));
  let widen = T(2.1) * tnorm * T({ulp}) * T(n) + T(4.2) * pivmin;
  lo = red[0] - widen;
  hi = red2[0] + widen;
  workgroupBarrier();
  for (var round = 0u; round < {ROUNDS[t]}u; round++) {{
    let x = lo + (hi - lo) * T(lid + 1u) / T({TB + 1});
    // the Sturm count: eigenvalues <= x
    var qv = TD[db] * is - x;
    if (abs(qv) < pivmin) {{ qv = -pivmin; }}
    var c = select(0u, 1u, qv <= T(0));
    for (var l = 1u; l < n; l++) {{
      let el = TD[db + n + l - 1u] * is;
      qv = TD[db + l] * is - x - el * el / qv;
      if (abs(qv) < pivmin) {{ qv = -pivmin; }}
      c += select(0u, 1u, qv <= T(0));
    }}
    if (lid == 0u) {{ atomicStore(&cnt, 0u); }}
    workgroupBarrier();
    if (c <= i) {{ atomicAdd(&cnt, 1u); }}
    workgroupBarrier();
    let below = atomicLoad(&cnt);
    workgroupBarrier();
    let nlo = select(lo, lo + (hi - lo) * T(below) / T({TB + 1}), below > 0u);
    let nhi = select(hi, lo + (hi - lo) * T(below + 1u) / T({TB + 1}), below < {TB}u);
    lo = nlo;
    hi = nhi;
  }}
  if (lid == 0u && live) {{ D[id] = T(0.5) * (lo + hi) * sc; }}
  if (id == 0u && lid == 0u) {{
    D[prm[3]] = select(T(0), T(1), nbad > T(0) || TD[prm[2]] != T(0));
  }}
"""
    return _shader(t, ["TD:read:T", "D:read_write:T"], body, shared=shared, wg=TB)
