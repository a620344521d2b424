"""Sums of squared deviations from a value computed in the walk that computes that value
(``compiler/colfuse.py``'s ``moments``: ``var`` about the mean), for the column-fused and the
long-row ``rowfuse`` kernels.

Each thread keeps the count ``n``, mean and ``M2`` of ``a - k`` over its elements (``k`` the first
element of the column or row, so that a large mean costs no precision); a trip of ``U`` elements
takes their mean and M2 and merges them into the thread's by Chan, Golub and LeVeque's pairwise
update (one division a trip), the last trip element by element (Welford). The threads' states merge
the same way (in slice order for columns, ``slice_combine``; by a tree for rows, ``tree_combine``),
and ``M2 + n (mean - (m - k))**2`` (two terms never negative: no cancellation) is the sum of squared
deviations from ``m`` once ``m`` is known.

>>> import numpy as np
>>> head, (per, after), last, tail, decls = welford(1, "f32", np.dtype("float32"), "v{u}", 4)
>>> per
['        cw_v1_{u} = v{u};']
"""

from __future__ import annotations

from typing import Any

from ..core.ops import OPS
from .wgsl import WORKGROUP, fill


def merge(a: tuple[str, str, str], b: tuple[str, str, str], dtype: Any) -> list[str]:
    """Lines merging the count, mean and M2 ``b`` (expressions, count not 0) into ``a`` (lvalues, read
    before they are written) by Chan, Golub and LeVeque's pairwise update; ``cw_nn``, ``cw_d``, ``cw_f``
    are declared in the caller's block."""
    (na, ma, qa), (nb, mb, qb) = a, b
    return [f"let cw_nn = {na} + {nb}; let cw_d = {mb} - {ma};",
            f"let cw_f = {fill(OPS['divide'].template('f'), dtype, (nb, 'cw_nn'))};",
            f"{ma} = {ma} + cw_d * cw_f; {qa} = {qa} + {qb} + cw_d * ({na} * cw_f) * cw_d; {na} = cw_nn;"]


def welford(j: int, t: str, dtype: Any, v: str,
            unroll: int) -> tuple[list[str], tuple[list[str], list[str]], list[str], list[str], list[str]]:
    """Lines of moment ``j`` (``colfuse.moments``) over a walk whose elements give ``v`` (``{u}`` in
    ``v`` and the per-element lines: the element of the trip): (declarations at function scope, (per
    element, after the elements) of a full trip, per element of the last trip, the tail storing the
    thread's n, mean and M2 to workgroup memory, workgroup declarations). A full trip takes the
    mean and M2 of its ``unroll`` values and merges them into the thread's (Chan et al.'s pairwise
    update, one division a trip); the last trip adds its rows one by one (Welford)."""
    div = OPS["divide"].template("f")
    n, mn, q = f"cw_n{j}", f"cw_m{j}", f"cw_q{j}"
    head = [f"  var rv{j}: {t};", *[f"  var {a}: {t} = {t}(0);" for a in (n, mn, q)],
            *[f"  var cw_v{j}_{u}: {t};" for u in range(unroll)]]
    per_row = [f"        cw_v{j}_{{u}} = {v};"]
    s = " + ".join(f"cw_v{j}_{u}" for u in range(unroll))
    after = [f"      {{ let cw_b = ({s}) * {t}({1.0 / unroll!r});", f"      var cw_s = {t}(0);",
             *[f"      let cw_e{u} = cw_v{j}_{u} - cw_b; cw_s = cw_s + cw_e{u} * cw_e{u};" for u in range(unroll)],
             *["      " + ln for ln in merge((n, mn, q), (f"{t}({unroll})", "cw_b", "cw_s"), dtype)], "      }"]
    checked = [f"        {n} = {n} + {t}(1); let cw_d{j} = {v} - {mn};",
               f"        {mn} = {mn} + {fill(div, dtype, (f'cw_d{j}', n))}; {q} = {q} + cw_d{j} * ({v} - {mn});"]
    tail = [f"  shn{j}[lid] = {n};", f"  shm{j}[lid] = {mn};", f"  shq{j}[lid] = {q};"]
    decls = [f"var<workgroup> sh{c}{j}: array<{t}, {WORKGROUP}>;" for c in "nmq"]
    return head, (per_row, after), checked, tail, decls


def slice_combine(j: int, dtype: Any, w: int, slices: int) -> list[str]:
    """Tail lines combining the slices' n, mean and M2 of moment ``j`` into ``cw_n``, ``cw_m``, ``cw_q``."""
    n, mn, q = f"cw_n{j}", f"cw_m{j}", f"cw_q{j}"
    return [f"  {n} = shn{j}[lid % {w}u]; {mn} = shm{j}[lid % {w}u]; {q} = shq{j}[lid % {w}u];",
            f"  for (var cf_q = 1u; cf_q < {slices}u; cf_q = cf_q + 1u) {{",
            f"    let cw_i = lid % {w}u + cf_q * {w}u; let cw_b = shn{j}[cw_i];",
            "    if (cw_b > 0.0) {",
            *["      " + ln for ln in merge((n, mn, q), ("cw_b", f"shm{j}[cw_i]", f"shq{j}[cw_i]"), dtype)],
            "    }", "  }"]


def tree_combine(j: int, dtype: Any, wg: int = WORKGROUP) -> list[str]:
    """Lines merging the ``wg`` threads' n, mean and M2 of moment ``j`` (stored by ``welford``'s tail)
    by a tree in workgroup memory into ``cw_n``, ``cw_m``, ``cw_q`` of every thread."""
    n, mn, q = f"cw_n{j}", f"cw_m{j}", f"cw_q{j}"
    return ["  workgroupBarrier();", f"  var cw_s{j} = {wg // 2}u;", "  loop {", f"    if (cw_s{j} == 0u) {{ break; }}",
            f"    if (lid < cw_s{j}) {{ let cw_i = lid + cw_s{j}; let cw_b = shn{j}[cw_i];",
            "      if (cw_b > 0.0) {",
            *["        " + ln for ln in merge((f"shn{j}[lid]", f"shm{j}[lid]", f"shq{j}[lid]"),
                                            ("cw_b", f"shm{j}[cw_i]", f"shq{j}[cw_i]"), dtype)],
            "      } }",
            "    workgroupBarrier();", f"    cw_s{j} = cw_s{j} >> 1u;", "  }",
            f"  {n} = shn{j}[0]; {mn} = shm{j}[0]; {q} = shq{j}[0];"]
