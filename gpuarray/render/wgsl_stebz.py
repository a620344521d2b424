"""WGSL for the eigenvalues of symmetric tridiagonal matrices by bisection (LAPACK's ``dstebz``: Sturm
counts with ``dlaebz``'s ``pivmin``), many points of the interval at a time; ``providers/wgpu_sytrd.py``
runs it after the reduction to tridiagonal form (``render/wgsl_sytrd.py``).

- ``stebz_source``: one workgroup of ``TB`` threads an eigenvalue: the tridiagonal matrix scaled by its
  largest magnitude, Gershgorin bounds widened as ``dstebz`` does, then a fixed number of rounds in
  which every thread counts the eigenvalues below one of ``TB`` points of the interval and the
  interval shrinks to the two neighbouring points whose counts bracket the eigenvalue's index:
  ``log2(TB + 1)`` bits a round.

>>> "atomicAdd" in stebz_source("f32")
True
"""

from __future__ import annotations

import functools

from .wgsl_linalg import _shader

TB = 64                 # threads (points of the interval) a workgroup of stebz_source
# rounds of stebz_source: each narrows the interval by a factor TB + 1 = 65, from the widened
# Gershgorin interval (at most 2.1 of the scaled norm each side) to below ulp * norm
ROUNDS = {"f32": 6, "f64": 10}
CONST = {  # safe minimum, ulp (LAPACK's dlamch('S'), dlamch('P')), largest finite value
    "f32": ("1.1754943508222875e-38", "1.1920928955078125e-07", "3.4028234663852886e+38"),
    "f64": ("2.2250738585072014e-308", "2.220446049250313e-16", "1.7976931348623157e+308"),
}


@functools.cache
def stebz_source(t: str) -> str:
    """``prm``: [n, total, TDFLAG, FLAG]: eigenvalue ``id % n`` (ascending) of tridiagonal matrix
    ``id / n`` (``TD``: ``[d | e | tau]`` per matrix) into ``D[id]``; ``D[FLAG]`` raised where the
    reduction raised ``TD[TDFLAG]`` or ``d`` and ``e`` are not finite (LAPACK then takes the matrix)."""
    safmin, ulp, big = CONST[t]
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
