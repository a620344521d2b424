"""WGSL for ``eigh`` / ``eigvalsh`` of small symmetric matrices by the cyclic Jacobi method, one
workgroup a matrix (``providers/wgpu_eigh.py`` runs it).

The matrix (its lower triangle, as LAPACK reads it) and the eigenvector matrix ``V = I`` sit in
workgroup memory (``V`` in the output where both do not fit, ``jacobi_source``). A sweep visits
every pair ``(p, q)`` once, in ``N - 1`` steps of ``N / 2`` disjoint pairs (the round-robin order:
player 0 stays, the others rotate; ``N``: ``n`` rounded up to even, the extra player a zero row and
column); per step each pair's rotation ``J`` (Golub and Van Loan's symmetric Schur decomposition,
8.5.2) zeroes ``A[p, q]``, and ``A`` takes ``J^T A J`` by 2 x 2 blocks while the columns of ``V``
take ``J``: two barriers a step. A rotation is skipped where ``|A[p, q]|`` is below ``eps`` relative
to ``sqrt(|A[p, p] A[q, q]|)`` or to ``||A|| / 64``; a sweep without a rotation ends the iteration
(at most ``MAX_SWEEPS``). The eigenvalues (the diagonal) are sorted ascending with their vectors
(rank by comparisons: ``n`` is small) and written as LAPACK's layout: the ``n`` eigenvalues, then
(``vectors``) ``V`` row by row, each vector signed so that its largest component (the first of equal
magnitude) is positive, as ``wgsl_jacobi1.py``'s; the flag is raised for input that is not finite or a matrix that did
not converge (the caller then asks LAPACK).

>>> "workgroupBarrier" in jacobi_source("f32", 32, True)
True
"""

from __future__ import annotations

import functools

from .wgsl_linalg import _shader

MAX_SWEEPS = 30
THREADS = 256           # threads_for's default limit (the invocations WebGPU guarantees); the H200 takes 1024


def threads_for(n: int, limit: int = THREADS) -> int:
    """Threads of the workgroup for ``n x n`` matrices: one a 2 x 2 block of a step (``(N / 2)^2``,
    a power of two from 64) up to ``limit`` (the adapter's invocations per workgroup).

    >>> threads_for(3), threads_for(16), threads_for(64), threads_for(64, 1024)
    (64, 64, 256, 1024)
    """
    half = (n + (n & 1)) // 2
    t = 64
    while t < half * half and t < limit:
        t *= 2
    return t


def jacobi_smem(n: int, item: int, v_shared: bool = True) -> int:
    """Bytes of workgroup memory ``jacobi_source(t, n, vectors, v_shared)`` declares (``V`` in it
    with ``v_shared``)."""
    npad = n + (n & 1)
    mats = 2 if v_shared else 1
    return (mats * npad * (npad + 1) + 2 * (npad // 2) + n + 2) * item + 4 * (2 * (npad // 2) + n + 2)


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


def sweep_end(npad: int) -> str:
    """WGSL that ends a sweep of the one-sided kernels (``wgsl_svdj``, ``wgsl_jacobi1``): out of the
    sweep loop where the sweep made no rotation, or (the flag raised) after ``MAX_SWEEPS``."""
    return f"""    sweep = sweep + 1u;
    let more = workgroupUniformLoad(&rot);
    if (more == 0u || sweep >= {MAX_SWEEPS}u || {npad}u < 2u) {{
      if (more != 0u && lid == 0u) {{ bad = 1u; }}
      break;
    }}
"""


def round_robin(npad: int, who: str) -> str:
    """WGSL (in a step ``st`` of a sweep) setting ``p < q`` to the pair of columns that pair ``who`` of
    the step takes: player 0 stays, the others rotate (``npad`` players, the last a padding column
    where ``n`` is odd)."""
    m = max(npad - 1, 1)
    return f"""        var a = 0u;
        if ({who} > 0u) {{ a = ({who} - 1u + st) % {m}u + 1u; }}
        let b = ({npad - 1}u - {who} - 1u + st) % {m}u + 1u;
        p = min(a, b);
        q = max(a, b);
"""


def largest_is_negative(n: int, elem: str) -> str:
    """WGSL setting ``neg`` to whether the component of largest magnitude (the first of equal ones) of
    a vector of ``n`` elements ``elem`` (a WGSL expression of ``i``) is negative: the device's sign
    convention for eigenvectors (each vector's largest component positive)."""
    return f"""    var big = T(-1);
    var neg = false;
    for (var i = 0u; i < {n}u; i++) {{
      let x = {elem};
      if (abs(x) > big) {{ big = abs(x); neg = x < T(0); }}
    }}
"""


def column_norms(rows: int, cols: int, ld: int) -> str:
    """WGSL setting ``sv[j]`` to the norm of column ``j`` of the workgroup matrix ``B`` (row stride ``ld``)."""
    return f"""  if (lid < {cols}u) {{
    var s = T(0);
    for (var i = 0u; i < {rows}u; i++) {{ let x = B[i * {ld}u + lid]; s = s + x * x; }}
    sv[lid] = sqrt(s);
  }}
"""


@functools.cache
def jacobi_source(t: str, n: int, vectors: bool, v_shared: bool = True, threads: int = THREADS) -> str:
    """``prm``: [batch, P, FLAG]: each ``n x n`` matrix of ``A`` (contiguous) to ``O[b * P ..]``:
    ``n`` eigenvalues ascending, then (``vectors``) the ``n x n`` eigenvector matrix (columns);
    ``O[FLAG]`` raised where a matrix is not finite or did not converge. Without ``v_shared`` (``A``
    and ``V`` together exceed the workgroup memory: float64 from 54 rows) ``V`` is kept transposed in
    the matrix's own output (``O[vb + p * n + i]`` = ``V[i, p]``, consecutive threads on consecutive
    words), ordered by storage barriers, and goes through ``A``'s workgroup memory at the end to
    take its LAPACK layout; without ``vectors`` there is no ``V``.

    An odd ``n`` is padded to ``N = n + 1`` with a zero row and column (its pairs never rotate). A
    step computes its ``N / 2`` rotations, then each thread takes whole 2 x 2 blocks ``(k, l)`` of
    ``A`` (the rows of pair ``k``, the columns of pair ``l``: ``J_k^T B J_l`` at once) and the rows
    of ``V``'s pair columns: two barriers a step, every element of ``A`` read and written once."""
    npad = n + (n & 1)
    half = npad // 2
    ld = npad + 1                           # padded row stride of A and V in workgroup memory
    eps = "5.960464477539063e-08" if t == "f32" else "1.1102230246251565e-16"
    vsh = vectors and v_shared
    vgl = vectors and not v_shared
    th = threads

    def vat(i: str, j: str) -> str:         # V[i, j]
        return f"V[({i}) * {ld}u + {j}]" if vsh else f"O[vb + ({j}) * {n}u + {i}]"
    shared = (f"var<workgroup> A: array<T, {npad * ld}>;\n"
              + (f"var<workgroup> V: array<T, {npad * ld}>;\n" if vsh else "") +
              f"var<workgroup> cs: array<T, {half}>;\n"
              f"var<workgroup> sn: array<T, {half}>;\n"
              f"var<workgroup> pp: array<u32, {half}>;\n"
              f"var<workgroup> pq: array<u32, {half}>;\n"
              f"var<workgroup> red: array<T, {n}>;\n"
              f"var<workgroup> rank: array<u32, {n}>;\n"
              "var<workgroup> rot: u32;\n"
              "var<workgroup> anorm: T;\n"
              "var<workgroup> bad: u32;\n")
    store_v = "" if not vectors else f"""  for (var e = lid; e < {n * n}u; e += {th}u) {{
    let j = e / {n}u;
    let i = e % {n}u;
    A[j * {ld}u + i] = O[vb + e];
  }}
  storageBarrier();
  workgroupBarrier();
  for (var e = lid; e < {n * n}u; e += {th}u) {{
    let i = e / {n}u;
    let j = e % {n}u;
    O[vb + i * {n}u + rank[j]] = A[j * {ld}u + i] * red[j];
  }}
""" if vgl else f"""  for (var e = lid; e < {n * n}u; e += {th}u) {{
    let i = e / {n}u;
    let j = e % {n}u;
    O[vb + i * {n}u + rank[j]] = V[i * {ld}u + j] * red[j];
  }}
"""
    vinit = f"""  for (var e = lid; e < {n * n}u; e += {th}u) {{
    let i = e / {n}u;
    let j = e % {n}u;
    {vat('i', 'j')} = select(T(0), T(1), i == j);
  }}
""" if vectors else ""
    vrot = "" if not vectors else f"""      for (var e = lid; e < {half * n}u; e += {th}u) {{
        let l = e / {n}u;
        let i = e % {n}u;
        let s = sn[l];
        if (s != T(0)) {{
          let c = cs[l];
          let vx = {vat('i', 'pp[l]')};
          let vy = {vat('i', 'pq[l]')};
          {vat('i', 'pp[l]')} = c * vx - s * vy;
          {vat('i', 'pq[l]')} = s * vx + c * vy;
        }}
      }}
"""
    sbar = "  storageBarrier();\n" if vgl else ""
    sign_scan = largest_is_negative(n, vat("i", "lid") if vectors else "T(0)")
    body = f"""  if (id >= prm[0]) {{ return; }}
  let ab = id * {n * n}u;
  let ob = id * prm[1];
  let vb = ob + {n}u;
  if (lid == 0u) {{ bad = 0u; }}
  for (var e = lid; e < {npad * npad}u; e += {th}u) {{
    let i = e / {npad}u;
    let j = e % {npad}u;
    var v = T(0);
    if (i < {n}u && j < {n}u) {{
      v = A0[ab + select(j * {n}u + i, i * {n}u + j, j <= i)];     // the lower triangle, mirrored
    }}
    A[i * {ld}u + j] = v;
  }}
{vinit}{sbar}  workgroupBarrier();
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
        let apq = A[p * {ld}u + q];
        let app = A[p * {ld}u + p];
        let aqq = A[q * {ld}u + q];
        if (abs(apq) > max(T({eps}) * sqrt(abs(app * aqq)), small)) {{
{rotation("(aqq - app) / (T(2) * apq)", "          ")}        }}
        pp[lid] = p;
        pq[lid] = q;
        cs[lid] = c;
        sn[lid] = s;
      }}
      workgroupBarrier();
      for (var e = lid; e < {half * half}u; e += {th}u) {{
        let k = e / {half}u;
        let l = e % {half}u;
        let sk = sn[k];
        let sl = sn[l];
        if (sk != T(0) || sl != T(0)) {{
          let ck = cs[k];
          let cl = cs[l];
          let p = pp[k] * {ld}u;
          let q = pq[k] * {ld}u;
          let r = pp[l];
          let u = pq[l];
          let a = A[p + r];
          let b = A[p + u];
          let c = A[q + r];
          let d = A[q + u];
          let a1 = ck * a - sk * c;
          let b1 = ck * b - sk * d;
          let c1 = sk * a + ck * c;
          let d1 = sk * b + ck * d;
          A[p + r] = cl * a1 - sl * b1;
          A[p + u] = sl * a1 + cl * b1;
          A[q + r] = cl * c1 - sl * d1;
          A[q + u] = sl * c1 + cl * d1;
        }}
      }}
{vrot}{sbar.replace("  ", "      ", 1)}      workgroupBarrier();
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
    if ({"true" if vectors else "false"}) {{          // each vector signed: its largest component positive
{sign_scan}      red[lid] = select(T(1), T(-1), neg);         // red is free by now: the vectors' signs
    }}
  }}
{sbar}  workgroupBarrier();
{store_v}  if (lid == 0u && bad != 0u) {{ O[prm[2]] = T(1); }}
"""
    return _shader(t, ["A0:read:T", "O:read_write:T"], body, shared, wg=th)
