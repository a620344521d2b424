"""WGSL for the ``fft`` kernel kind: several radix-2 Stockham stages per dispatch, in workgroup memory.

The radix-2 Stockham transform of ``render/wgsl_fft.py`` is ``log2(n)`` passes over memory. Its stages
``s0 .. s0 + L - 1`` (``Ns = 2^s0`` the stage ``p`` they start from, ``R = 2^L``) split into independent
groups of ``R`` elements, one per ``j < n / R`` (``b = j / Ns``, ``k' = j mod Ns``): local element ``r``
of group ``j`` is, before those stages, at ``j + r n / R``, and after them at ``b Ns R + k' + Ns m``
(``m = r``); in between, the stage ``s0 + l`` butterflies of the group are those of a local Stockham
transform of length ``R`` at its stage ``l``::

    kl = i mod 2^l,  j_l = 2 (i - kl) + kl
    u0 = v[i],  u1 = v[i + R/2] * w^((k' + Ns kl) n / (2 Ns 2^l))
    v'[j_l] = u0 + u1,  v'[j_l + 2^l] = u0 - u1

with the very twiddle factor (``tw``, the float64-derived table of ``wgsl_fft.twiddles``) and the very
arithmetic of the global stage, so the results are those of ``log2(n)`` single-stage dispatches. One
dispatch of ``render_fft_block`` does this for ``G = TILE / R`` groups per workgroup: it gathers their
``TILE`` elements into workgroup memory (laid out ``index * G + group``), runs ``L`` stages there (each:
butterflies into registers, barrier, stores, barrier; barriers in uniform control flow only, so no
subgroup feature is needed), and scatters them to their places after the stages; the last pass
multiplies by the normalization factor (``tw[n / 2]``) in its last stage. Which thread moves which
element is chosen so that consecutive threads touch consecutive addresses: group-major where the
groups' elements are adjacent (``inner > 1``, or ``Ns >= G``), element-major where a group's elements
are (the first pass's stores, a whole transform's loads, ``inner == 1``).

``block_plan`` splits ``log2(n)`` stages into passes: one when ``n <= TILE``; otherwise as few as
keep ``G >= min_groups`` (so a group-major access moves at least 32 contiguous bytes), balanced
(``TILE = 4096`` complex64: 2^20 is 10 + 10 stages, 2^22 is 8 + 7 + 7, 2^26 is 9 + 9 + 8).
Batches are as in the single-stage kernel: element ``idx`` of transform ``bt`` is at
``(bt / inner) n inner + idx inner + bt mod inner``; group ``g`` is ``((bt / inner) (n / R) + j) inner +
bt mod inner``, so the groups of one workgroup are adjacent in memory for every ``inner``.
"""

from __future__ import annotations

import numpy as np

from ..core.dtypes import WGSL_TYPE, real_dtype
from .wgsl import WORKGROUP


def tile_elements(storage_limit: int, itemsize: int, cap_bytes: int = 32768) -> int:
    """Elements per workgroup: the largest power of two whose ``itemsize``-byte elements fit in
    ``min(storage_limit, cap_bytes)`` bytes of workgroup memory; 0 when fewer than ``2 * WORKGROUP``
    fit (a thread then would have no butterfly)."""
    cap = min(int(storage_limit), int(cap_bytes)) // itemsize
    if cap < 2 * WORKGROUP:
        return 0
    return 1 << (cap.bit_length() - 1)


def block_plan(n: int, tile: int, min_groups: int) -> list[int]:
    """Stages per pass (``L`` each, summing to ``log2(n)``) for a power-of-two ``n``: one pass when
    ``n <= tile``, else the fewest passes of at most ``log2(tile / min_groups)`` stages, balanced
    (larger ones first)."""
    s = n.bit_length() - 1
    if s == 0:
        return []
    if n <= tile:
        return [s]
    lmax = max(1, (tile // max(1, min_groups)).bit_length() - 1)
    passes = -(-s // lmax)
    base, extra = divmod(s, passes)
    return [base + 1] * extra + [base] * (passes - extra)


def render_fft_block(dtype: np.dtype, tile: int) -> str:
    """``L`` radix-2 Stockham stages of ``tile / 2^L`` groups per workgroup, for ``dtype``.

    ``prm``: [groups (total / R), log2 n, inner, log2 Ns, L, scale in the last stage (0/1),
    element-major loads (0/1), element-major stores (0/1)].
    """
    t = WGSL_TYPE[dtype]
    f = WGSL_TYPE[real_dtype(dtype)]
    wg = WORKGROUP
    log_tile = tile.bit_length() - 1
    per = tile // (2 * wg)          # butterflies per thread per stage
    assert tile == 1 << log_tile and per >= 1
    fly = []
    for q in range(per):
        fly.append(f"""    {{
      let bq = lid + {q * wg}u;
      let gl = bq & gmask;
      let i = bq >> logg;
      let kl = i & (p - 1u);
      let kp = group_kp(g0 + gl, inner, ns);
      let w = tw[(kp + (kl << lns)) << tsh];
      let u0 = sh[i * gsz + gl];
      let v = sh[(i + halfr) * gsz + gl];
      let u1 = {t}(v.x * w.x - v.y * w.y, v.x * w.y + v.y * w.x);
      ya{q} = (u0 + u1) * sc;
      yb{q} = (u0 - u1) * sc;
      ia{q} = (((i - kl) << 1u) + kl) * gsz + gl;
    }}""")
    stores = "\n".join(f"    sh[ia{q}] = ya{q};\n    sh[ia{q} + pg] = yb{q};" for q in range(per))
    decls = "\n".join(f"  var ya{q}: {t};\n  var yb{q}: {t};\n  var ia{q}: u32;" for q in range(per))
    return f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<{t}>;
@group(0) @binding(2) var<storage, read_write> dst: array<{t}>;
@group(0) @binding(3) var<storage, read> tw: array<{t}>;

var<workgroup> sh: array<{t}, {tile}>;

// k' (the index within the stage's p) of group g
fn group_kp(g: u32, inner: u32, ns: u32) -> u32 {{
  var q = g;
  if (inner != 1u) {{ q = g / inner; }}
  return q & (ns - 1u);
}}

// the index of group g's first element (element idx is at base + idx * inner) and its j
fn group_base(g: u32, inner: u32, ls: u32, lr: u32) -> vec2<u32> {{
  var q = g;
  var lo = 0u;
  if (inner != 1u) {{ q = g / inner; lo = g - q * inner; }}
  let j = q & ((1u << (ls - lr)) - 1u);
  let hi = q >> (ls - lr);
  return vec2<u32>(((hi << ls) * inner) + lo, j);
}}

@compute @workgroup_size({wg})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
  let groups = prm[0];
  let ls = prm[1];
  let inner = prm[2];
  let lns = prm[3];
  let lr = prm[4];
  let ns = 1u << lns;
  let logg = {log_tile}u - lr;
  let gsz = 1u << logg;
  let gmask = gsz - 1u;
  let rmask = (1u << lr) - 1u;
  let halfr = 1u << (lr - 1u);
  let g0 = (wid.y * nwg.x + wid.x) * gsz;
{decls}
  for (var e = lid; e < {tile}u; e += {wg}u) {{
    var gl = e & gmask;
    var r = e >> logg;
    if (prm[6] != 0u) {{ gl = e >> lr; r = e & rmask; }}
    let g = g0 + gl;
    if (g < groups) {{
      let bj = group_base(g, inner, ls, lr);
      sh[r * gsz + gl] = src[bj.x + (bj.y + (r << (ls - lr))) * inner];
    }}
  }}
  workgroupBarrier();
  for (var l = 0u; l < lr; l++) {{
    let p = 1u << l;
    let pg = p * gsz;
    let tsh = ls - 1u - lns - l;
    var sc: {f} = 1.0;
    if (prm[5] != 0u && l + 1u == lr) {{ sc = tw[1u << (ls - 1u)].x; }}
{chr(10).join(fly)}
    workgroupBarrier();
{stores}
    workgroupBarrier();
  }}
  for (var e = lid; e < {tile}u; e += {wg}u) {{
    var gl = e & gmask;
    var m = e >> logg;
    if (prm[7] != 0u) {{ gl = e >> lr; m = e & rmask; }}
    let g = g0 + gl;
    if (g < groups) {{
      let bj = group_base(g, inner, ls, lr);
      let b = bj.y >> lns;
      let kp = bj.y & (ns - 1u);
      dst[bj.x + (((b << (lns + lr)) + kp + (m << lns)) * inner)] = sh[m * gsz + gl];
    }}
  }}
}}
"""
