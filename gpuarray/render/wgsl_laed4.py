"""WGSL for the merges of a divide-and-conquer level (LAPACK's ``dlaed4`` and ``dlaed3``): the roots of
every merge's secular equation ``1/rho + sum_j z_j^2 / (d_j - x) = 0``, ``z`` recomputed from them
(Gu and Eisenstat) and the merge matrix ``M`` whose columns are the normalized vectors ``z / (d - x)``
scattered to their rows (and the deflated columns' unit vectors); ``providers/wgpu_laed4.py`` runs the
four kernels in one pass, ``linalg/stedc.py`` builds the data.

Input ``D``: a row of ``W = 2 K + 2 + S`` values a merge: the poles ``d`` (ascending, ``K`` padded),
``z``, ``rho``, the count ``kk`` of live poles, then ``src`` (``S`` values): the secular row ``t >= 0``
that row ``p`` of ``M`` takes, or ``-(c + 1)`` for the unit vector of column ``c``, ``-(S + 1)`` for
none. Output ``O``: ``M`` (``cnt x S x S``), then from ``A``: the roots, each root's distance ``tau``
from its origin pole, the origin's index, ``zhat`` and the vectors' norms (``cnt x K`` each).

- ``roots_source``: a workgroup a root: the origin is the pole nearer the root (the sign of ``f`` halfway
  to the next pole; the last root's is its lower pole), then bisection in ``tau`` (geometric while the
  bracket spans more than a factor of two, so tiny distances keep their relative accuracy), ``f`` a
  workgroup sum over the poles each step.
- ``zhat_source``: a workgroup a pole: ``zhat_i^2 = -prod_j (d_i - x_j) / prod_{j != i} (d_i - d_j)``.
- ``norm_source``: a workgroup a root: the norm of ``zhat / (d - x_j)``.
- ``fill_source``: a thread an element of ``M``.

``d_i - x_j`` is always ``(d_i - d_o) - tau`` with the difference of poles kept from the compiler's
algebra (``ga_keep``): NVIDIA's compiler regroups it as ``d_i - (d_o + tau)``, which loses ``tau`` next
to the pole.

>>> "ga_keep_f64" in roots_source("f64", 64, 68)
True
"""

from __future__ import annotations

import functools

from .wgsl_linalg import _shader

ITERS = {"float32": 36, "float64": 68}      # bisection steps: geometric to a factor 2, then the mantissa
_BIND = ["D:read:T", "O:read_write:T"]
_PRM = """  let cnt = prm[0];
  let K = prm[1];
  let S = prm[2];
  let W = prm[3];
  let A = prm[4];
  let ck = cnt * K;
"""


def _merge_row(var: str) -> str:
    """A workgroup ``id = b K + var`` (past ``cnt K``: none): ``b``, ``var``, the row ``base`` of ``D``, ``kk``."""
    return f"""  if (id >= ck) {{ return; }}
  let b = id / K;
  let {var} = id % K;
  let base = b * W;
  let kk = u32(D[base + 2u * K + 1u]);
"""


def _reduce(wg: int, var: str, op: str) -> str:
    """Tree-reduce ``red`` (``red[lid]`` set) with ``op`` ('+' or '*') into ``var`` for every thread."""
    return f"""  red[lid] = {var};
  workgroupBarrier();
  for (var h = {wg // 2}u; h > 0u; h = h >> 1u) {{
    if (lid < h) {{ red[lid] = red[lid] {op} red[lid + h]; }}
    workgroupBarrier();
  }}
  {var} = red[0];
  workgroupBarrier();
"""


def _secular_fn(t: str, wg: int) -> str:
    """``fsec(base, K, kk, dor, tau, rho, lid)``: ``1/rho + sum_j z_j^2 / ((d_j - d_o) - tau)``."""
    return f"""fn fsec(base: u32, K: u32, kk: u32, dor: T, tau: T, rho: T, lid: u32) -> T {{
  var s = T(0);
  for (var j = lid; j < kk; j += {wg}u) {{
    let zj = D[base + K + j];
    s += zj * zj / (ga_keep_{t}(D[base + j] - dor) - tau);
  }}
{_reduce(wg, "s", "+")}  return T(1) / rho + s;
}}
"""


@functools.cache
def roots_source(t: str, wg: int, iters: int) -> str:
    """A workgroup a root ``id = b K + t`` of merge ``b``: root, ``tau`` and origin into ``O``."""
    eps = "1.1920928955078125e-07" if t == "f32" else "2.220446049250313e-16"
    shared = f"var<workgroup> red: array<T, {wg}>;\n" + _secular_fn(t, wg)
    body = _PRM + _merge_row("r") + f"""  let rho = D[base + 2u * K];
  if (r >= kk) {{
    if (lid == 0u) {{ O[A + id] = T(0); O[A + ck + id] = T(0); O[A + 2u * ck + id] = T(r); }}
    return;
  }}
  var zz = T(0);
  for (var j = lid; j < kk; j += {wg}u) {{ zz += D[base + K + j] * D[base + K + j]; }}
{_reduce(wg, "zz", "+")}  let lo = D[base + r];
  let last = r + 1u == kk;
  let hi = select(D[base + r + 1u], D[base + kk - 1u] + rho * zz, last);
  var left = true;
  if (!last) {{ left = fsec(base, K, kk, lo, (hi - lo) / T(2), rho, lid) >= T(0); }}
  let o = select(r + 1u, r, left);
  let dor = D[base + o];
  let sg = select(T(-1), T(1), left);
  let span = select((hi - lo) / T(2), hi - lo, last);
  var tl = span * (T({eps}) * T({eps}) * T({eps}));
  var th = span;
  for (var it = 0u; it < {iters}u; it++) {{
    let mid = select((tl + th) / T(2), sqrt(tl) * sqrt(th), th > tl * T(2));
    let below = sg * fsec(base, K, kk, dor, sg * mid, rho, lid) < T(0);
    tl = select(tl, mid, below);
    th = select(mid, th, below);
  }}
  let tau = sg * ((tl + th) / T(2));
  if (lid == 0u) {{ O[A + id] = dor + tau; O[A + ck + id] = tau; O[A + 2u * ck + id] = T(o); }}
"""
    return _shader(t, _BIND, body, shared=shared, wg=wg)


@functools.cache
def zhat_source(t: str, wg: int) -> str:
    """A workgroup a pole ``id = b K + i``: ``zhat_i`` into ``O``."""
    body = _PRM + _merge_row("i") + f"""  if (i >= kk) {{
    if (lid == 0u) {{ O[A + 3u * ck + id] = T(0); }}
    return;
  }}
  let di = D[base + i];
  var p = T(1);
  for (var j = lid; j < kk; j += {wg}u) {{
    let num = ga_keep_{t}(di - D[base + u32(O[A + 2u * ck + b * K + j])]) - O[A + ck + b * K + j];
    p *= select(num / (di - D[base + j]), num, j == i);
  }}
{_reduce(wg, "p", "*")}  if (lid == 0u) {{
    let zi = D[base + K + i];
    O[A + 3u * ck + id] = select(T(1), T(-1), zi < T(0)) * sqrt(max(-p, T(0)));
  }}
"""
    return _shader(t, _BIND, body, shared=f"var<workgroup> red: array<T, {wg}>;\n", wg=wg)


@functools.cache
def norm_source(t: str, wg: int) -> str:
    """A workgroup a root ``id = b K + j``: the norm of its vector ``zhat / (d - x_j)`` into ``O``."""
    body = _PRM + _merge_row("j") + f"""  let dor = D[base + u32(O[A + 2u * ck + id])];
  let tau = O[A + ck + id];
  var s = T(0);
  for (var i = lid; i < kk; i += {wg}u) {{
    let v = O[A + 3u * ck + b * K + i] / (ga_keep_{t}(D[base + i] - dor) - tau);
    s += v * v;
  }}
{_reduce(wg, "s", "+")}  if (lid == 0u) {{ O[A + 4u * ck + id] = sqrt(s); }}
"""
    return _shader(t, _BIND, body, shared=f"var<workgroup> red: array<T, {wg}>;\n", wg=wg)


@functools.cache
def fill_source(t: str) -> str:
    """A thread an element ``(b, p, j)`` of ``M``: row ``p`` takes secular row ``src[p]`` of root ``j``'s
    normalized vector, or a deflated column's unit vector."""
    body = _PRM + f"""  let g = id * 256u + lid;
  if (g >= cnt * S * S) {{ return; }}
  let b = g / (S * S);
  let p = (g / S) % S;
  let j = g % S;
  let base = b * W;
  let kk = u32(D[base + 2u * K + 1u]);
  let s = i32(D[base + 2u * K + 2u + p]);
  var v = T(0);
  if (j < kk) {{
    if (s >= 0) {{
      let q = b * K + j;
      let dor = D[base + u32(O[A + 2u * ck + q])];
      let den = ga_keep_{t}(D[base + u32(s)] - dor) - O[A + ck + q];
      v = O[A + 3u * ck + b * K + u32(s)] / den / O[A + 4u * ck + q];
    }}
  }} else if (s < 0 && u32(-s - 1) == j) {{
    v = T(1);
  }}
  O[g] = v;
"""
    return _shader(t, _BIND, body, wg=256)
