"""Render an ``extremes`` kernel as WGSL: ``(min(x), max(x))`` of a whole array in one read of it.

An ``extremes`` kernel has one operand ``x`` (any shape, its fused prologue evaluated at each flat
index) and a result of shape ``(2,)`` and ``x``'s dtype: ``[min(x), max(x)]``, NaN where ``x``
holds one (NumPy's ``min`` / ``max``: the minimum and maximum of the op table propagate NaN).
``bincount``, ``histogram`` and ``add.at`` read it back in one transfer
(``namespace/counting.py``). The provider (``providers/wgpu_extremes``) runs

- ``render_extremes``: ``G`` workgroups; each thread strides over the elements ``UNROLL`` at a
  time (independent loads in flight; past the end it reads the last element again, which changes
  neither extreme), keeping a minimum and a maximum; the workgroup combines
  its 256 pairs in workgroup memory and writes its pair at ``out0[2 * w]``, ``out0[2 * w + 1]``
  (the result itself when ``G = 1``);
- ``render_pairs`` (when ``G > 1``): one workgroup combines the ``G`` pairs into ``out0``.

Bools are not an operand dtype here (the namespace converts them to uint8, whose storage is u32).

>>> import numpy as np
>>> "fn ex_min" in render_pairs(np.dtype("float32"))
True
"""

from __future__ import annotations

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE, WGSL_TYPE
from .wgsl import WORKGROUP, Rendered, _Gen
from .wgsl_lib import helpers_for
from .wgsl_reduce import combine, identity
from .wgsl_sort import _load_fn, storage_decls

UNROLL = 4      # elements a thread loads before combining them

_HEAD = ("@compute @workgroup_size({wg})\n"
         "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
         "        @builtin(local_invocation_index) lid: u32) {{\n")


def _combiners(dt: np.dtype) -> list[str]:
    """``ex_min`` / ``ex_max`` of two values and the workgroup arrays of the tree."""
    t = WGSL_TYPE[dt]
    return [f"var<workgroup> ex_lo: array<{t}, {WORKGROUP}>;",
            f"var<workgroup> ex_hi: array<{t}, {WORKGROUP}>;",
            f"fn ex_min(a: {t}, b: {t}) -> {t} {{ return {combine('min', dt, 'a', 'b')}; }}",
            f"fn ex_max(a: {t}, b: {t}) -> {t} {{ return {combine('max', dt, 'a', 'b')}; }}"]


def _tree(store: list[str]) -> list[str]:
    """Combine the workgroup's pairs (``lo`` / ``hi`` of each thread); thread 0 runs ``store``."""
    lines = ["  ex_lo[lid] = lo;", "  ex_hi[lid] = hi;", "  workgroupBarrier();"]
    s = WORKGROUP // 2
    while s >= 1:
        lines += [f"  if (lid < {s}u) {{",
                  f"    ex_lo[lid] = ex_min(ex_lo[lid], ex_lo[lid + {s}u]);",
                  f"    ex_hi[lid] = ex_max(ex_hi[lid], ex_hi[lid + {s}u]);",
                  "  }", "  workgroupBarrier();"]
        s //= 2
    return lines + ["  if (lid == 0u) {", *store, "  }"]


def _source(decls: list[str], fns: list[str], main: str) -> str:
    body = "\n\n".join(fns) + "\n\n" + main
    return "\n".join(decls) + "\n\n" + helpers_for(body) + "\n\n" + body


def render_extremes(kernel: Kernel) -> Rendered:
    """The first pass: each workgroup's (min, max) of its elements. ``prm`` extras: N (elements),
    G (workgroups)."""
    dt = kernel.out_nodes[0].dtype
    g = _Gen(kernel)
    n, groups = g.slot(("extra", "N")), g.slot(("extra", "G"))
    op_i = kernel.operands[0]
    fns = [_load_fn(g, op_i, "ex_val"), *_combiners(dt)]
    lo0, hi0 = identity("min", dt), identity("max", dt)
    # all loads first (in flight together), past the end at the last element: min and max do not
    # mind reading an element twice, so no branch
    loads = [f"      let v{u} = ex_val(min(e + {u}u * stride, last));" for u in range(UNROLL)]
    mins, maxs = [f"v{u}" for u in range(UNROLL)], [f"v{u}" for u in range(UNROLL)]
    while len(mins) > 1:        # a tree: independent combines
        mins = [f"ex_min({a}, {b})" for a, b in zip(mins[::2], mins[1::2])]
        maxs = [f"ex_max({a}, {b})" for a, b in zip(maxs[::2], maxs[1::2])]
    loads += [f"      lo = ex_min(lo, {mins[0]});", f"      hi = ex_max(hi, {maxs[0]});"]
    main = _HEAD.format(wg=WORKGROUP) + "\n".join([
        "  let grp = wid.y * nwg.x + wid.x;",
        f"  var lo = {lo0};",
        f"  var hi = {hi0};",
        f"  if (grp < {groups}) {{",
        f"    let stride = {groups} * {WORKGROUP}u;",
        f"    let last = {n} - 1u;",
        f"    for (var e = grp * {WORKGROUP}u + lid; e < {n}; e += {UNROLL}u * stride) {{",
        *loads,
        "    }",
        "  }",
        *_tree([f"    if (grp < {groups}) {{ out0[2u * grp] = ex_lo[0]; out0[2u * grp + 1u] = ex_hi[0]; }}"]),
        "}"])
    decls = storage_decls(kernel, g, ("inputs", "out", "wide"), {"out": WGSL_STORAGE_TYPE[dt]})
    src = _source(decls, fns, main)
    return Rendered(src, sorted(g.slots, key=lambda s: g.slots[s]), g.wide, len(kernel.inputs), 1)


def render_pairs(dt: np.dtype) -> str:
    """The second pass: one workgroup combines the ``G`` pairs of ``in0`` (``prm[0]``) into ``out0``."""
    st = WGSL_STORAGE_TYPE[dt]
    decls = ["@group(0) @binding(0) var<storage, read> prm: array<u32>;",
             f"@group(0) @binding(1) var<storage, read> in0: array<{st}>;",
             f"@group(0) @binding(2) var<storage, read_write> out0: array<{st}>;"]
    main = _HEAD.format(wg=WORKGROUP) + "\n".join([
        f"  var lo = {identity('min', dt)};",
        f"  var hi = {identity('max', dt)};",
        f"  for (var j = lid; j < prm[0]; j += {WORKGROUP}u) {{",
        "    lo = ex_min(lo, in0[2u * j]);",
        "    hi = ex_max(hi, in0[2u * j + 1u]);",
        "  }",
        *_tree(["    out0[0] = ex_lo[0];", "    out0[1] = ex_hi[0];"]),
        "}"])
    return _source(decls, _combiners(dt), main)
