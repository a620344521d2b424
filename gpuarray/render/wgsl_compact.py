"""Render a stream compaction (``compact`` kernel: ``nonzero``, ``x[mask]``) as WGSL.

A compaction of ``N`` flags (the non-zero elements of an operand, its
producing expression fused as the prologue) runs in three kernels over ``G``
chunks of ``CH = ceil(N / G)`` flat positions:

- ``count``: each chunk's number of non-zero flags (operand: the flags as a
  1-D ``uint32`` array). Rendered by the scan renderer in its ``partial``
  mode (``render/wgsl_scan.py``): a reduction of one row in ``G`` chunks.
- the chunk counts scanned (an ordinary ``scan`` kernel with
  ``include_initial``): ``offsets``, ``G + 1`` values, the last the total,
  which the namespace reads back to size the result;
- ``flat`` / ``coords`` / ``values`` (this module): workgroup ``w`` walks chunk
  ``w`` in blocks of ``BLOCK`` = 256 x ``PER_THREAD`` positions. Each thread
  evaluates the flags (and, for ``values``, the values) of its
  ``PER_THREAD`` consecutive positions in registers, the workgroup scans the
  thread counts in shared memory (Hillis-Steele over two halves, as the scan
  kernels do), and each thread writes its selected elements from
  ``offsets[w]`` plus the counts before it: the flat index (``flat``), one
  row per dimension of the n-d coordinates (``coords``: output ``(ndim,
  COUNT)``), or the value at the position (``values``).

Operands: ``(flags, offsets)`` or ``(flags, offsets, values)``, flags and
values of one shape; ``prm`` extras ``G``, ``N``, ``CH``, ``COUNT``.

>>> import numpy as np
>>> from gpuarray.graph import leaf, make
>>> from gpuarray.compiler import schedule
>>> f = leaf(np.array([0, 1, 1], np.uint32), "cpu")
>>> o = leaf(np.array([0, 2], np.uint32), "cpu")
>>> k = schedule([make("compact", (f, o), np.dtype(np.int64), (2,), ("flat",))])[0]
>>> "out0[pos]" in render_compact(k).source
True
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE
from .wgsl import WORKGROUP, Rendered, _Gen
from .wgsl_lib import helpers_for
from .wgsl_parts import store_value
from .wgsl_scan import render_scan
from .wgsl_sort import storage_decls

PER_THREAD = 8
BLOCK = WORKGROUP * PER_THREAD
MODES = ("count", "flat", "coords", "values")


def count_kernel(kernel: Kernel) -> Kernel:
    """The ``count`` kernel as the scan kernel that computes it (``partial`` mode over one row)."""
    assert kernel.attrs[0] == "count"
    return dataclasses.replace(kernel, kind="scan", attrs=("sum", 0, False, "partial"), _sig=None)


def render_compact(kernel: Kernel) -> Rendered:
    """WGSL for a ``compact`` kernel (``count``: the scan renderer's chunk totals; see the module
    docstring for the others)."""
    mode = kernel.attrs[0]
    assert mode in MODES, mode
    if mode == "count":
        return render_scan(count_kernel(kernel))
    dt = kernel.out_nodes[0].dtype
    g = _Gen(kernel)
    flags_i, offs_i = kernel.operands[:2]
    head = ["  let w = wid.y * nwg.x + wid.x;",
            f"  if (w >= {g.slot(('extra', 'G'))}) {{ return; }}",
            f"  let CH = {g.slot(('extra', 'CH'))};",
            "  let start = w * CH;",
            f"  let stop = min(start + CH, {g.slot(('extra', 'N'))});",
            f"  let COUNT = {g.slot(('extra', 'COUNT'))};"]
    g.lines = []
    off = g.value(offs_i, ("lin", "w"))
    head += g.lines + [f"  var carry: u32 = u32({off});"]
    g.lines = []
    flag = g.value(flags_i, ("lin", "k"))
    st = WGSL_STORAGE_TYPE[dt]
    keep: list[str] = []
    if mode == "values":
        v = g.value(kernel.operands[2], ("lin", "k"))
        keep = [f"        vals[j] = {store_value(kernel.instrs[kernel.operands[2]].dtype, v)};"]
    read = ["      " + ln for ln in g.lines]
    g.lines = []
    if mode == "values":
        store = ["        out0[pos] = vals[j];"]
    elif mode == "flat":
        store = [f"        out0[pos] = {g._cast('k', np.dtype(np.uint32), dt)};"]
    else:
        store = _coords(g, flags_i, dt)
    write = ["      " + ln for ln in g.lines] + store
    body = [
        "  var base = start;",
        "  loop {",
        "    if (base >= stop) { break; }",
        "    var bits = 0u;",
        "    var tot = 0u;",
        *([f"    var vals: array<{st}, {PER_THREAD}>;"] if mode == "values" else []),
        f"    for (var j = 0u; j < {PER_THREAD}u; j = j + 1u) {{",
        f"      let k = base + lid * {PER_THREAD}u + j;",
        "      if (k < stop) {",
        *read,
        f"        if ({flag} != 0u) {{ bits = bits | (1u << j); tot = tot + 1u; }}",
        *keep,
        "      }",
        "    }",
        # the workgroup's inclusive scan of the thread counts (ping-pong halves: one barrier a step)
        "    sh[lid] = tot;",
        "    workgroupBarrier();",
        "    var src = 0u;",
        f"    for (var o = 1u; o < {WORKGROUP}u; o = o << 1u) {{",
        "      var s = sh[src + lid];",
        "      if (lid >= o) { s = s + sh[src + lid - o]; }",
        f"      src = src ^ {WORKGROUP}u;",
        "      sh[src + lid] = s;",
        "      workgroupBarrier();",
        "    }",
        "    var pos = carry + sh[src + lid] - tot;",
        f"    for (var j = 0u; j < {PER_THREAD}u; j = j + 1u) {{",
        "      if (((bits >> j) & 1u) != 0u) {",
        f"        let k = base + lid * {PER_THREAD}u + j;",
        *write,
        "        pos = pos + 1u;",
        "      }",
        "    }",
        f"    carry = carry + sh[src + {WORKGROUP - 1}u];",
        "    workgroupBarrier();",
        f"    base = base + {BLOCK}u;",
        "  }",
    ]
    decls = storage_decls(kernel, g, ("inputs", "out", "wide"), {"out": st})
    decls.append(f"var<workgroup> sh: array<u32, {2 * WORKGROUP}>;")
    main = "\n".join([
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        *head,
        *body,
        "}",
    ])
    source = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main + "\n"
    return Rendered(source, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs), 1)


def _coords(g: _Gen, flags_i: int, dt: np.dtype) -> list[str]:
    """Stores of flat position ``k``'s coordinates in the flags' shape, row ``d`` of ``out0`` each."""
    nd = len(g.ins[flags_i].shape)
    rep = g.rep[flags_i]
    lines: list[str] = []
    rem = "k"
    for d in range(nd - 1, -1, -1):
        if d:
            dim = g.slot(("dim", rep, d))
            lines += [f"        let m{d} = {rem} % {dim};", f"        let q{d} = {rem} / {dim};"]
            c, rem = f"m{d}", f"q{d}"
        else:
            c = rem
        lines.append(f"        out0[{d}u * COUNT + pos] = {g._cast(c, np.dtype(np.uint32), dt)};")
    return lines
