"""WGSL for ``eigh`` / ``eigvalsh`` of small symmetric matrices by the cyclic Jacobi method, one
workgroup a matrix (``providers/wgpu_eigh.py`` runs it).

The matrix (its lower triangle, as LAPACK reads it) and the eigenvector matrix ``V = I`` sit in
workgroup memory. A sweep visits every pair ``(p, q)`` once, in ``N - 1`` steps of ``N / 2``
disjoint pairs (the round-robin order: player 0 stays, the others rotate; ``N``: ``n`` rounded up
to even, the extra player sits out); per step each pair's rotation ``J`` (Golub and Van Loan's
symmetric Schur decomposition, 8.5.2) zeroes ``A[p, q]``, the rows take ``J^T``, then the columns of
``A`` and ``V`` take ``J``: three barriers a step. A rotation is skipped where ``|A[p, q]|`` is
below ``eps`` relative to ``sqrt(|A[p, p] A[q, q]|)`` or to ``||A|| / 64``; a sweep without a rotation
ends the iteration (at most ``MAX_SWEEPS``). The eigenvalues (the diagonal) are sorted ascending
with their vectors (rank by comparisons: ``n`` is small) and written as LAPACK's layout: the ``n``
eigenvalues, then (``vectors``) ``V`` row by row; the flag is raised for input that is not finite or
a matrix that did not converge (the caller then asks LAPACK).

>>> "workgroupBarrier" in jacobi_source("f32", 32, True)
True
"""

from __future__ import annotations

import functools

from .wgsl_linalg import _shader

MAX_SWEEPS = 30
THREADS = 256


def jacobi_smem(n: int, item: int) -> int:
    """Bytes of workgroup memory ``jacobi_source(t, n, ...)`` declares."""
    npad = n + (n & 1)
    return (2 * n * (n + 1) + 4 * (npad // 2) + n + 2) * item + 4 * (npad // 2 + n + 2)


def rotation(theta: str, pad: str) -> str:
    """Lines setting ``c``, ``s`` (and ``rot = 1u``) to the Jacobi rotation of ``theta`` (a WGSL
    expression: ``(a_qq - a_pp) / (2 a_pq)``, or the one-sided method's column products): Golub and
    Van Loan's ``t = sign(theta) / (|theta| + sqrt(theta^2 + 1))``, ``1 / (2 |theta|)`` past 1e15."""
    return "".join(pad + x + "\n" for x in (
        f"let th = {theta};",
        "var tt = T(1) / (abs(th) + sqrt(th * th + T(1)));",
        "if (abs(th) > T(1e15)) { tt = T(0.5) / abs(th); }",
        "tt = select(-tt, tt, th >= T(0));",
        "c = T(1) / sqrt(tt * tt + T(1));",
        "s = tt * c;",
        "rot = 1u;"))


@functools.cache
def jacobi_source(t: str, n: int, vectors: bool) -> str:
    """``prm``: [batch, P, FLAG]: each ``n x n`` matrix of ``A`` (contiguous) to ``O[b * P ..]``:
    ``n`` eigenvalues ascending, then (``vectors``) the ``n x n`` eigenvector matrix (columns);
    ``O[FLAG]`` raised where a matrix is not finite or did not converge."""
    npad = n + (n & 1)
    half = npad // 2
    ld = n + 1                              # padded row stride of A and V in workgroup memory
    eps = "5.960464477539063e-08" if t == "f32" else "1.1102230246251565e-16"
    shared = (f"var<workgroup> A: array<T, {n * ld}>;\n"
              f"var<workgroup> V: array<T, {n * ld}>;\n"
              f"var<workgroup> cs: array<T, {half}>;\n"
              f"var<workgroup> sn: array<T, {half}>;\n"
              f"var<workgroup> pp: array<u32, {half}>;\n"
              f"var<workgroup> pq: array<u32, {half}>;\n"
              f"var<workgroup> red: array<T, {n}>;\n"
              f"var<workgroup> rank: array<u32, {n}>;\n"
              "var<workgroup> rot: u32;\n"
              "var<workgroup> anorm: T;\n"
              "var<workgroup> bad: u32;\n")
    store_v = f"""  if (VEC) {{
    for (var e = lid; e < {n * n}u; e += {THREADS}u) {{
      let i = e / {n}u;
      let j = e % {n}u;
      O[ob + {n}u + i * {n}u + rank[j]] = V[i * {ld}u + j];
    }}
  }}
""".replace("VEC", "true" if vectors else "false")
    body = f"""  if (id >= prm[0]) {{ return; }}
  let ab = id * {n * n}u;
  let ob = id * prm[1];
  if (lid == 0u) {{ bad = 0u; }}
  for (var e = lid; e < {n * n}u; e += {THREADS}u) {{
    let i = e / {n}u;
    let j = e % {n}u;
    let v = A0[ab + select(j * {n}u + i, e, j <= i)];     // the lower triangle, mirrored
    A[i * {ld}u + j] = v;
    V[i * {ld}u + j] = select(T(0), T(1), i == j);
  }}
  workgroupBarrier();
  if (lid < {n}u) {{
    var s = T(0);
    for (var j = 0u; j < {n}u; j++) {{ let v = A[lid * {ld}u + j]; s = s + v * v; }}
    red[lid] = s;
    if (!ga_isfinite_{t}(s)) {{ bad = 1u; }}
  }}
  workgroupBarrier();
  if (lid == 0u) {{
    var s = T(0);
    for (var i = 0u; i < {n}u; i++) {{ s = s + red[i]; }}
    anorm = sqrt(s);
  }}
  workgroupBarrier();
  let small = T({eps}) * anorm / T(64);
  var sweep = 0u;
  loop {{
    workgroupBarrier();
    if (lid == 0u) {{ rot = 0u; }}
    workgroupBarrier();
    for (var st = 0u; st < {npad - 1}u; st++) {{
      if (lid < {half}u) {{
        var a = 0u;
        if (lid > 0u) {{ a = (lid - 1u + st) % {npad - 1}u + 1u; }}
        let b = ({npad - 1}u - lid - 1u + st) % {npad - 1}u + 1u;
        let p = min(a, b);
        let q = max(a, b);
        var c = T(1);
        var s = T(0);
        if (q < {n}u) {{
          let apq = A[p * {ld}u + q];
          let app = A[p * {ld}u + p];
          let aqq = A[q * {ld}u + q];
          if (abs(apq) > max(T({eps}) * sqrt(abs(app * aqq)), small)) {{
{rotation("(aqq - app) / (T(2) * apq)", "            ")}          }}
        }}
        pp[lid] = p;
        pq[lid] = min(q, {n - 1}u);
        cs[lid] = c;
        sn[lid] = s;
      }}
      workgroupBarrier();
      for (var e = lid; e < {half * n}u; e += {THREADS}u) {{
        let k = e / {n}u;
        let j = e % {n}u;
        let s = sn[k];
        if (s != T(0)) {{
          let c = cs[k];
          let p = pp[k];
          let q = pq[k];
          let x = A[p * {ld}u + j];
          let y = A[q * {ld}u + j];
          A[p * {ld}u + j] = c * x - s * y;
          A[q * {ld}u + j] = s * x + c * y;
        }}
      }}
      workgroupBarrier();
      for (var e = lid; e < {half * n}u; e += {THREADS}u) {{
        let k = e / {n}u;
        let i = e % {n}u;
        let s = sn[k];
        if (s != T(0)) {{
          let c = cs[k];
          let p = pp[k];
          let q = pq[k];
          let x = A[i * {ld}u + p];
          let y = A[i * {ld}u + q];
          A[i * {ld}u + p] = c * x - s * y;
          A[i * {ld}u + q] = s * x + c * y;
          let vx = V[i * {ld}u + p];
          let vy = V[i * {ld}u + q];
          V[i * {ld}u + p] = c * vx - s * vy;
          V[i * {ld}u + q] = s * vx + c * vy;
        }}
      }}
      workgroupBarrier();
    }}
    sweep = sweep + 1u;
    let more = workgroupUniformLoad(&rot);
    if (more == 0u || sweep >= {MAX_SWEEPS}u) {{
      if (more != 0u && lid == 0u) {{ bad = 1u; }}
      break;
    }}
  }}
  workgroupBarrier();
  if (lid < {n}u) {{
    let d = A[lid * {ld}u + lid];
    var r = 0u;
    for (var i = 0u; i < {n}u; i++) {{
      let o = A[i * {ld}u + i];
      if (o < d || (o == d && i < lid)) {{ r = r + 1u; }}
    }}
    rank[lid] = r;
    O[ob + r] = d;
  }}
  workgroupBarrier();
{store_v}  if (lid == 0u && bad != 0u) {{ O[prm[2]] = T(1); }}
"""
    return _shader(t, ["A0:read:T", "O:read_write:T"], body, shared, wg=THREADS)
