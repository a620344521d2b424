"""WGSL for ``svd`` / ``svdvals`` of small matrices by the one-sided Jacobi method (Hestenes), one
workgroup a matrix (``providers/wgpu_eigh.py`` runs it).

The working matrix ``B`` is ``A`` (``m >= n``) or ``A^T`` (``trans``), ``mm x nn`` with ``mm >= nn``,
in workgroup memory with ``V = I``. A sweep takes every pair of columns ``(p, q)`` once in ``N - 1``
steps of disjoint pairs (round robin, as ``wgsl_jacobi.py``); per step each pair's ``|b_p|^2``,
``|b_q|^2`` and ``b_p . b_q`` are summed by the pair's group of threads, the rotation that makes the
two columns orthogonal (skipped where ``|b_p . b_q| <= eps |b_p| |b_q|``) is applied to the columns of
``B`` and ``V``; a sweep without a rotation ends it (at most ``MAX_SWEEPS``; the tolerance is
``4 mm eps``: the products' rounding, LAPACK's ``sgesvj`` scales them to reach ``sqrt(mm) eps``). The
columns come out orthogonal to that relative accuracy whatever their
norms, so ``U`` of a numerically rank-deficient matrix is orthonormal too. Then the singular
values are the column norms, sorted descending; ``U``'s columns are ``B``'s divided by them. The
result per matrix is LAPACK's reduced layout ``[U (m x k) | S (k) | Vh (k x n)]`` (``k = min(m, n)``;
for ``trans`` the roles of ``U`` and ``V`` swap), or ``S`` alone. The flag is raised for input that is
not finite, no convergence, or (with vectors) a singular value that is zero (below ``1e-30`` in
float32): LAPACK then completes ``U``.

>>> "workgroupBarrier" in svdj_source("f32", 8, 4, True)
True
"""

from __future__ import annotations

import functools

from .wgsl_jacobi import THREADS, column_norms, rotation, round_robin, sweep_end
from .wgsl_linalg import _shader


def svdj_smem(mm: int, nn: int, item: int) -> int:
    """Bytes of workgroup memory ``svdj_source(t, mm, nn, ...)`` declares."""
    npad = nn + (nn & 1)
    return ((mm + nn) * (nn + 1) + 3 * THREADS + npad + 2 * nn) * item + 4 * (2 * nn + 4)


@functools.cache
def svdj_source(t: str, mm: int, nn: int, vectors: bool) -> str:
    """``prm``: [batch, P, FLAG, trans]: each ``m x n`` matrix of ``A0`` (contiguous; ``B`` is it, or
    its transpose with ``trans``: ``mm x nn``) to ``O[b * P ..]`` (module docstring)."""
    npad = nn + (nn & 1)
    half = npad // 2
    tp = 1
    while tp * 2 * half <= THREADS and tp * 2 <= 64:
        tp *= 2                              # threads a pair
    ld = nn + 1
    eps = "5.960464477539063e-08" if t == "f32" else "1.1102230246251565e-16"
    tiny = "1e-30" if t == "f32" else "1e-290"
    shared = (f"var<workgroup> B: array<T, {mm * ld}>;\n"
              f"var<workgroup> V: array<T, {nn * ld}>;\n"
              f"var<workgroup> red: array<T, {3 * THREADS}>;\n"
              f"var<workgroup> cs: array<T, {half}>;\n"
              f"var<workgroup> sn: array<T, {half}>;\n"
              f"var<workgroup> pp: array<u32, {half}>;\n"
              f"var<workgroup> pq: array<u32, {half}>;\n"
              f"var<workgroup> sv: array<T, {nn}>;\n"
              f"var<workgroup> rank: array<u32, {nn}>;\n"
              "var<workgroup> rot: u32;\n"
              "var<workgroup> bad: u32;\n")
    k = nn
    vec_out = f"""  if (VEC) {{
    // U (m x k) then S then Vh (k x n); for trans U = V and Vh = B^T / s
    let m = select({mm}u, {nn}u, tr);
    let n = select({nn}u, {mm}u, tr);
    for (var e = lid; e < {mm * nn}u; e += {THREADS}u) {{
      let i = e / {nn}u;
      let j = e % {nn}u;
      let u = select(B[i * {ld}u + j] / sv[j], T(0), sv[j] == T(0));
      if (tr) {{ O[ob + m * {k}u + {k}u + rank[j] * n + i] = u; }} else {{ O[ob + i * {k}u + rank[j]] = u; }}
    }}
    for (var e = lid; e < {nn * nn}u; e += {THREADS}u) {{
      let l = e / {nn}u;
      let j = e % {nn}u;
      let v = V[l * {ld}u + j];
      if (tr) {{ O[ob + l * {k}u + rank[j]] = v; }} else {{ O[ob + m * {k}u + {k}u + rank[j] * n + l] = v; }}
    }}
  }}
""".replace("VEC", "true" if vectors else "false")
    sbase = f"select({mm}u, {nn}u, tr) * {k}u" if vectors else "0u"
    body = f"""  if (id >= prm[0]) {{ return; }}
  let tr = prm[3] != 0u;
  let ab = id * {mm * nn}u;
  let ob = id * prm[1];
  if (lid == 0u) {{ bad = 0u; }}
  for (var e = lid; e < {mm * nn}u; e += {THREADS}u) {{
    let i = e / {nn}u;
    let j = e % {nn}u;
    let v = A0[ab + select(e, j * {mm}u + i, tr)];
    B[i * {ld}u + j] = v;
    if (!ga_isfinite_{t}(v)) {{ bad = 1u; }}
  }}
  for (var e = lid; e < {nn * nn}u; e += {THREADS}u) {{
    V[(e / {nn}u) * {ld}u + e % {nn}u] = select(T(0), T(1), e / {nn}u == e % {nn}u);
  }}
  let kp = lid / {tp}u;
  let sub = lid % {tp}u;
  var sweep = 0u;
  loop {{
    workgroupBarrier();
    if (lid == 0u) {{ rot = 0u; }}
    workgroupBarrier();
    for (var st = 0u; st < {max(npad - 1, 1)}u; st++) {{
      var p = 0u;
      var q = 1u;
      if (kp < {half}u) {{
{round_robin(npad, "kp")}        var sa = T(0);
        var sb = T(0);
        var sg = T(0);
        if (q < {nn}u) {{
          for (var i = sub; i < {mm}u; i += {tp}u) {{
            let x = B[i * {ld}u + p];
            let y = B[i * {ld}u + q];
            sa = sa + x * x;
            sb = sb + y * y;
            sg = sg + x * y;
          }}
        }}
        red[lid] = sa;
        red[{THREADS}u + lid] = sb;
        red[{2 * THREADS}u + lid] = sg;
      }}
      workgroupBarrier();
      if (kp < {half}u && sub == 0u) {{
        var sa = T(0);
        var sb = T(0);
        var sg = T(0);
        for (var i = 0u; i < {tp}u; i++) {{
          sa = sa + red[lid + i];
          sb = sb + red[{THREADS}u + lid + i];
          sg = sg + red[{2 * THREADS}u + lid + i];
        }}
        var c = T(1);
        var s = T(0);
        if (q < {nn}u && abs(sg) > T({eps}) * T({4 * mm}) * sqrt(sa) * sqrt(sb)) {{
{rotation("(sb - sa) / (T(2) * sg)", "          ")}        }}
        pp[kp] = p;
        pq[kp] = min(q, {nn - 1}u);
        cs[kp] = c;
        sn[kp] = s;
      }}
      workgroupBarrier();
      for (var e = lid; e < {half * (mm + nn)}u; e += {THREADS}u) {{
        let kk = e / {mm + nn}u;
        let r = e % {mm + nn}u;
        let s = sn[kk];
        if (s != T(0)) {{
          let c = cs[kk];
          let p2 = pp[kk];
          let q2 = pq[kk];
          if (r < {mm}u) {{
            let x = B[r * {ld}u + p2];
            let y = B[r * {ld}u + q2];
            B[r * {ld}u + p2] = c * x - s * y;
            B[r * {ld}u + q2] = s * x + c * y;
          }} else {{
            let l = r - {mm}u;
            let x = V[l * {ld}u + p2];
            let y = V[l * {ld}u + q2];
            V[l * {ld}u + p2] = c * x - s * y;
            V[l * {ld}u + q2] = s * x + c * y;
          }}
        }}
      }}
      workgroupBarrier();         // the next step's pairs read columns this step's other pairs wrote
    }}
{sweep_end(npad)}  }}
  workgroupBarrier();
{column_norms(mm, nn, ld)}  workgroupBarrier();
  if (lid < {nn}u) {{
    let d = sv[lid];
    var r = 0u;
    var top = T(0);
    for (var i = 0u; i < {nn}u; i++) {{
      let o = sv[i];
      top = max(top, o);
      if (o > d || (o == d && i < lid)) {{ r = r + 1u; }}
    }}
    rank[lid] = r;
    O[ob + {sbase} + r] = d;
    if ({"true" if vectors else "false"} && d <= T({tiny})) {{ bad = 1u; }}      // U's column undefined
  }}
  workgroupBarrier();
{vec_out}  if (lid == 0u && bad != 0u) {{ O[prm[2]] = T(1); }}
"""
    return _shader(t, ["A0:read:T", "O:read_write:T"], body, shared, wg=THREADS)
