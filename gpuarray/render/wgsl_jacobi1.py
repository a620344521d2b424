"""WGSL for ``eigh`` of one small symmetric matrix (at most ``MAX_N`` rows) by the one-sided Jacobi
method on a shifted copy, one workgroup a matrix (``providers/wgpu_eigh.py`` runs it for a single
matrix; stacks take ``wgsl_jacobi.py``'s two-sided method, which does twice this one's work a step and
keeps ``V``; on the H200 the one matrix's time follows its chain of steps and the GPU's clock: 7-20 % less
than the two-sided kernel's in one machine start, the same in two others).

The matrix's lower triangle (as LAPACK reads it), mirrored, is scaled and shifted in workgroup memory
to ``B = A / c + I`` with ``c = 1.0625 g`` and ``g = max_i sum_j |a_ij|`` (Gershgorin's bound of
``||A||_2``), so that ``B`` is symmetric positive definite with eigenvalues in ``[1/17, 2]``: its
singular vectors are ``A``'s eigenvectors, distinct where ``A``'s eigenvalues are, and no column
vanishes. A sweep takes every pair of columns once in ``N - 1`` steps of disjoint pairs (round robin,
as ``wgsl_jacobi.py``); per step the ``G`` threads of a pair sum ``|b_p|^2``, ``|b_q|^2`` and
``b_p . b_q`` over the rows they hold, each of them reads the pair's ``G`` partial sums and computes
the rotation itself (skipped where ``|b_p . b_q| <= 4 sqrt(N) eps |b_p| |b_q|``, tested on squares: the vectors
come out orthogonal to about that, 16 eps at 64 rows; the angle's tangent in float32, its cosine and sine
from it in the matrix's type, so that the rotation is orthogonal to that type's precision), and rotates its rows of
the two columns: two barriers a step, no ``V`` (``B``'s rotated columns are ``V``'s, scaled by the
singular values). A sweep without a rotation ends it (at most ``MAX_SWEEPS``).

Then each eigenvector is its column normalized, signed so that its largest component (the first of
equal magnitude) is positive, and each eigenvalue is its vector's Rayleigh quotient ``u^T A u`` with
the input ``A`` (not ``c (|b| - 1)``, which would lose the small eigenvalues of a matrix with large
ones to cancellation; a diagonal matrix gives its diagonal exactly). The result is LAPACK's layout:
the ``n`` eigenvalues ascending, then the eigenvector matrix row by row; the flag is raised for input
that is not finite and for no convergence (the caller then asks LAPACK).

>>> "workgroupBarrier" in jacobi1_source("f32", 8, 64)
True
"""

from __future__ import annotations

import functools

from .wgsl_jacobi import column_norms, largest_is_negative, round_robin, sweep_end
from .wgsl_linalg import _shader


def _pow2_at_most(x: int) -> int:
    p = 1
    while p * 2 <= x:
        p *= 2
    return p


def pair_threads(n: int, threads: int) -> int:
    """Threads that hold the rows of one pair of columns (``G``): a power of two, at most ``n``
    rounded up to one, and ``G`` times the pairs of a step at most ``threads``.

    >>> pair_threads(64, 256), pair_threads(64, 1024), pair_threads(5, 256)
    (8, 32, 8)
    """
    half = (n + (n & 1)) // 2
    return max(1, min(_pow2_at_most(max(threads // max(half, 1), 1)), _pow2_at_most(2 * n - 1)))


def jacobi1_smem(n: int, item: int, threads: int) -> int:
    """Bytes of workgroup memory ``jacobi1_source(t, n, threads)`` declares."""
    npad = n + (n & 1)
    return (n * (npad + 1) + 3 * threads + 3 * n + 1) * item + 4 * (n + 2)


@functools.cache
def jacobi1_source(t: str, n: int, threads: int) -> str:
    """``prm``: [batch, P, FLAG]: each ``n x n`` matrix of ``A0`` (contiguous) to ``O[b * P ..]``: the
    ``n`` eigenvalues ascending, then the ``n x n`` eigenvector matrix; ``O[FLAG]`` raised where a
    matrix is not finite or did not converge (module docstring)."""
    npad = n + (n & 1)
    half = npad // 2
    ld = npad + 1
    th = threads
    g = pair_threads(n, th)
    rows = -(-n // g)
    g2 = _pow2_at_most(max(th // n, 1))         # threads a Rayleigh quotient
    eps = "5.960464477539063e-08" if t == "f32" else "1.1102230246251565e-16"
    shared = (f"var<workgroup> B: array<T, {n * ld}>;\n"
              f"var<workgroup> red: array<T, {3 * th}>;\n"
              f"var<workgroup> sv: array<T, {n}>;\n"
              f"var<workgroup> lam: array<T, {n}>;\n"
              f"var<workgroup> scl: array<T, {n}>;\n"
              f"var<workgroup> rank: array<u32, {n}>;\n"
              "var<workgroup> shift: T;\n"
              "var<workgroup> rot: u32;\n"
              "var<workgroup> bad: u32;\n")

    def guard(r: int) -> str:
        return "live" if (r + 1) * g <= n else f"live && sub + {r * g}u < {n}u"
    loads = "".join(f"""      if ({guard(r)}) {{
        x{r} = B[(sub + {r * g}u) * {ld}u + p];
        y{r} = B[(sub + {r * g}u) * {ld}u + q];
        sa = sa + x{r} * x{r};
        sb = sb + y{r} * y{r};
        sg = sg + x{r} * y{r};
      }}
""" for r in range(rows))
    regs = "".join(f"      var x{r} = T(0);\n      var y{r} = T(0);\n" for r in range(rows))
    stores = "".join(f"""          if ({guard(r)}) {{
            B[(sub + {r * g}u) * {ld}u + p] = c * x{r} - s * y{r};
            B[(sub + {r * g}u) * {ld}u + q] = s * x{r} + c * y{r};
          }}
""" for r in range(rows))
    body = f"""  if (id >= prm[0]) {{ return; }}
  let ab = id * {n * n}u;
  let ob = id * prm[1];
  let vb = ob + {n}u;
  if (lid == 0u) {{ bad = 0u; rot = 0u; }}
  for (var e = lid; e < {n * npad}u; e += {th}u) {{
    let i = e / {npad}u;
    let j = e % {npad}u;
    var v = T(0);
    if (j < {n}u) {{ v = A0[ab + select(j * {n}u + i, i * {n}u + j, j <= i)]; }}   // the lower triangle, mirrored
    B[i * {ld}u + j] = v;
  }}
  workgroupBarrier();
  if (lid < {n}u) {{
    var s = T(0);
    for (var j = 0u; j < {n}u; j++) {{ s = s + abs(B[lid * {ld}u + j]); }}
    red[lid] = s;
    if (!ga_isfinite_{t}(s)) {{ bad = 1u; }}
  }}
  workgroupBarrier();
  if (lid == 0u) {{
    var gb = T(0);
    for (var i = 0u; i < {n}u; i++) {{ gb = max(gb, red[i]); }}
    shift = select(gb * T(1.0625), T(1), gb == T(0));
  }}
  let c0 = workgroupUniformLoad(&shift);
  for (var e = lid; e < {n * n}u; e += {th}u) {{
    let i = e / {n}u;
    let j = e % {n}u;
    B[i * {ld}u + j] = B[i * {ld}u + j] / c0 + select(T(0), T(1), i == j);
  }}
  let kp = lid / {g}u;
  let sub = lid % {g}u;
  let tol2 = T({eps}) * T({eps}) * T({16 * npad});       // (4 sqrt(N) eps)^2
  var sweep = 0u;
  loop {{
    workgroupBarrier();
    for (var st = 0u; st < {max(npad - 1, 1)}u; st++) {{
      var p = 0u;
      var q = 1u;
      var live = false;
      if (kp < {half}u) {{
{round_robin(npad, "kp")}        live = q < {n}u;
      }}
      var sa = T(0);
      var sb = T(0);
      var sg = T(0);
{regs}{loads}      red[lid] = sa;
      red[{th}u + lid] = sb;
      red[{2 * th}u + lid] = sg;
      workgroupBarrier();
      if (live) {{
        var ta = T(0);
        var tb = T(0);
        var tg = T(0);
        for (var k = kp * {g}u; k < kp * {g}u + {g}u; k++) {{
          ta = ta + red[k];
          tb = tb + red[{th}u + k];
          tg = tg + red[{2 * th}u + k];
        }}
        if (tg * tg > tol2 * ta * tb) {{
          // the angle's tangent in f32 (Golub and Van Loan's t = sign(th) / (|th| + sqrt(th^2 + 1)),
          // 1 / (2 |th|) past 1e15); c and s from that one t in T, so the rotation stays orthogonal to T's
          // precision and zeroes the pair's product to f32's (the next sweeps take the rest)
          let th = f32(clamp((tb - ta) / (T(2) * tg), T(-1e30), T(1e30)));
          var tf = 1.0 / (abs(th) + sqrt(th * th + 1.0));
          if (abs(th) > 1e15) {{ tf = 0.5 / abs(th); }}
          let tt = T(select(-tf, tf, th >= 0.0));
          let c = T(1) / sqrt(tt * tt + T(1));
          let s = tt * c;
          rot = 1u;
{stores}        }}
      }}
      workgroupBarrier();
    }}
{sweep_end(npad)}    workgroupBarrier();
    if (lid == 0u) {{ rot = 0u; }}
  }}
  workgroupBarrier();
{column_norms(n, n, ld)}  workgroupBarrier();
  for (var e = lid; e < {n * n}u; e += {th}u) {{      // the vectors: a lone component becomes exactly 1
    let j = e % {n}u;
    B[(e / {n}u) * {ld}u + j] = B[(e / {n}u) * {ld}u + j] / sv[j];
  }}
  workgroupBarrier();
  let kv = lid / {g2}u;
  var acc = T(0);
  if (kv < {n}u) {{
    for (var i = lid % {g2}u; i < {n}u; i += {g2}u) {{
      var y = T(0);
      for (var k = 0u; k < {n}u; k++) {{
        y = y + A0[ab + select(k * {n}u + i, i * {n}u + k, k <= i)] * B[k * {ld}u + kv];
      }}
      acc = acc + y * B[i * {ld}u + kv];
    }}
  }}
  red[lid] = acc;
  workgroupBarrier();
  if (lid < {n}u) {{
    var s = T(0);
    for (var k = lid * {g2}u; k < lid * {g2}u + {g2}u; k++) {{ s = s + red[k]; }}
    lam[lid] = s;
  }}
  workgroupBarrier();
  if (lid < {n}u) {{
    let d = lam[lid];
    var r = 0u;
    for (var i = 0u; i < {n}u; i++) {{
      let o = lam[i];
      if (o < d || (o == d && i < lid)) {{ r = r + 1u; }}
    }}
    rank[lid] = r;
    O[ob + r] = d;
{largest_is_negative(n, f"B[i * {ld}u + lid]")}    scl[lid] = select(T(1), T(-1), neg);
    if (!(sv[lid] > T(0)) || !ga_isfinite_{t}(d)) {{ bad = 1u; }}
  }}
  workgroupBarrier();
  for (var e = lid; e < {n * n}u; e += {th}u) {{
    let i = e / {n}u;
    let j = e % {n}u;
    O[vb + i * {n}u + rank[j]] = B[i * {ld}u + j] * scl[j];
  }}
  if (lid == 0u && bad != 0u) {{ O[prm[2]] = T(1); }}
"""
    return _shader(t, ["A0:read:T", "O:read_write:T"], body, shared, wg=th)
