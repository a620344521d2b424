"""Render a ``matmul`` kernel as a tiled WGSL compute shader.

The kernel's two operands are ``A`` of shape ``(*batch, M, K)`` and ``B`` of
shape ``(*batch, K, N)`` (the namespace broadcasts the batch dimensions with
zero-stride views). Each is computed by its fused prologue, evaluated at the
index being loaded, so ``matmul(a * 2, b.T)`` reads ``a`` and ``b`` through
index arithmetic and never writes ``a * 2`` or ``b.T`` to memory.

Tiling (all sizes are a :class:`Tiles`, so they can be tuned per device and
shape later):

- one workgroup computes a ``BM x BN`` tile of one batch's output, with
  ``(BM / TM) * (BN / TN)`` threads; each thread keeps ``TM x TN``
  accumulators in registers;
- the ``K`` loop steps by ``BK``: the workgroup loads a ``BM x BK`` tile of
  ``A`` and a ``BK x BN`` tile of ``B`` into shared memory (zero outside the
  matrix, so sizes need not be multiples of the tile), then every thread
  accumulates its outer products from shared memory.

Workgroups are numbered ``(batch, tile row, tile column)`` over a 2-D grid;
sizes, strides and the tile counts are runtime parameters, so one pipeline
serves every shape with the same structure.

A fused epilogue (``Kernel.result_index``: ``relu(a @ b + bias)``) is
evaluated per output element at the store, at its (batch, row, column)
coordinates, so a bias broadcast along rows or columns is read by index.

Not done yet (the levers for the H200 target): vector (vec4) loads and
stores, double buffering of the shared tiles, subgroup operations, and an
autotuner that picks :class:`Tiles` per device.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_TYPE
from .wgsl import Rendered, _Gen
from .wgsl_cast import SMALL_WRAP, wrap_small
from .wgsl_lib import helpers_for
from .wgsl_parts import declare_bindings, epilogue_stores, input_types, output_types, split_index


@dataclass(frozen=True)
class Tiles:
    """Tile sizes of the matmul kernel: workgroup tile ``bm x bn``, K step ``bk``, ``tm x tn`` per thread.

    With ``strided`` a thread's outputs are rows ``ty + i * bm / tm`` and columns
    ``tx + j * bn / tn`` of the tile, so neighbouring threads read neighbouring
    shared-memory words and write neighbouring outputs; otherwise each thread
    owns a contiguous ``tm x tn`` block.
    """

    bm: int = 64
    bn: int = 64
    bk: int = 16
    tm: int = 4
    tn: int = 4
    strided: bool = True     # a thread's outputs are spaced by the thread grid (conflict-free shared reads)

    @property
    def threads(self) -> int:
        return (self.bm // self.tm) * (self.bn // self.tn)

    def check(self) -> None:
        if self.bm % self.tm or self.bn % self.tn:
            raise ValueError(f"tile {self.bm}x{self.bn} is not a multiple of the per-thread {self.tm}x{self.tn}")
        if not 1 <= self.threads <= 1024:
            raise ValueError(f"{self.threads} threads per workgroup; expected 1..1024")


def _load(g: _Gen, op_i: int, batch: list[str], rows: str, cols: str, tile: str,
          n_elems: int, threads: int, inner: int, row_lim: str, col_lim: str,
          reg_t: str, store_index: str) -> list[str]:
    """Code that loads one shared-memory tile, evaluating operand ``op_i``'s prologue per element.

    Element ``e`` of the tile is (row ``e / inner``, column ``e % inner``) relative to
    ``(rows, cols)``; ``store_index`` is the shared-memory index written, in terms of
    ``r`` and ``c``.
    """
    g.memo = {}          # values computed in another block are out of scope here
    g.lines = []
    idx = (*batch, "gr", "gc")
    v = g.value(op_i, ("multi", idx))
    body = ["        " + line.strip() for line in g.lines]
    count = -(-n_elems // threads)
    out = [f"  for (var l = 0u; l < {count}u; l = l + 1u) {{",
           f"    let e = l * {threads}u + lid;"]
    if n_elems % threads:
        out.append(f"    if (e >= {n_elems}u) {{ break; }}")
    out += [f"    let r = e / {inner}u;",
            f"    let c = e % {inner}u;",
            f"    let gr = {rows} + r;",
            f"    let gc = {cols} + c;",
            f"    var x: {reg_t} = {reg_t}(0);",
            f"    if (gr < {row_lim} && gc < {col_lim}) {{",
            *body,
            f"        x = {v};",
            "    }",
            f"    {tile}[{store_index}] = x;",
            "  }"]
    return out


def batch_index(g: _Gen, nb: int, rem: str) -> tuple[list[str], list[str]]:
    """Lines that split the flat batch index ``rem`` into the ``nb`` batch dimensions of operand A,
    and the WGSL names of those indices."""
    return split_index(g, g.rep[g.k.operands[0]], 0, nb, rem, "b", "bq")


def triangle_row(row: str, rest: str, side: str) -> list[str]:
    """WGSL lines that turn ``rest`` (a ``var`` holding an index into the cells on and above the diagonal
    of a ``side x side`` grid, row by row) into ``row`` (a new ``var``) and its column offset from the
    diagonal (left in ``rest``): the gram tiles' workgroups (``tile_grid(upper=True)``) and threads."""
    return [f"var {row} = 0u;",
            f"loop {{ if ({row} + 1u >= {side} || {rest} < {side} - {row}) {{ break; }}",
            f"  {rest} = {rest} - ({side} - {row}); {row} = {row} + 1u; }}"]


def tile_grid(g: _Gen, nb: int, bm: int, bn: int, split: bool = False,
              upper: bool = False) -> tuple[list[str], list[str]]:
    """The lines (unindented) that map workgroup ``w`` to its ``bm x bn`` output tile (``m0``, ``n0``),
    its batch, the sizes ``M``, ``N`` and its ``K`` range ``klo .. K``; and the batch index of each of
    the ``nb`` batch dimensions. Shared by both matmul renderers (``prm`` extras: GM, GN, NG).

    With ``split`` (split-K) workgroup ``w`` is chunk ``sp = w / GT`` of tile ``w % GT`` and walks
    ``K`` from ``klo = sp * KC`` to ``min(klo + KC, K)`` (extras GT, KC): its accumulators are one
    partial sum of the product, stored at ``part[sp * TS + ...]`` for ``render_splitk_sum``.

    A kernel with the attribute ``"lower"`` computes only the tiles that reach the diagonal or below
    it: the others' outputs are left as they were (the blocked Cholesky reads only the lower
    triangle of its trailing matrices). With ``upper`` (a gram product of several tiles, ``GM ==
    GN``) the workgroups are only the ``GM (GM + 1) / 2`` tiles on and above the diagonal of each
    batch, row by row (extra NG counts those)."""
    ra, rb = g.rep[g.k.operands[0]], g.rep[g.k.operands[1]]
    head = ["let w0 = wid.y * nwg.x + wid.x;",
            f"if (w0 >= {g.slot(('extra', 'NG'))}) {{ return; }}"]
    kdim = g.slot(("dim", ra, nb + 1))
    if split:
        gt, kc = g.slot(("extra", "GT")), g.slot(("extra", "KC"))
        head += [f"let sp = w0 / {gt};", f"let w = w0 % {gt};", f"let klo = sp * {kc};",
                 f"let K = min({kdim}, klo + {kc});"]
    else:
        head += ["let w = w0;", "let klo = 0u;", f"let K = {kdim};"]
    head += [f"let GN = {g.slot(('extra', 'GN'))};",
             f"let GM = {g.slot(('extra', 'GM'))};"]
    if upper:
        head += ["let per = GM * (GM + 1u) / 2u;",
                 "let bat = w / per;",
                 "var rest = w % per;",
                 *triangle_row("trow", "rest", "GM"),
                 "let tcol = trow + rest;"]
    else:
        head += ["let tcol = w % GN;",
                 "let q = w / GN;",
                 "let trow = q % GM;",
                 "let bat = q / GM;"]
    head += [f"let M = {g.slot(('dim', ra, nb))};",
             f"let N = {g.slot(('dim', rb, nb + 1))};",
             f"let m0 = trow * {bm}u;",
             f"let n0 = tcol * {bn}u;"]
    if "lower" in g.k.attrs:        # only the tiles on and below the diagonal (Cholesky's trailing update)
        head.append(f"if (n0 >= m0 + {bm}u) {{ return; }}")
    lines, batch = batch_index(g, nb, "bat")
    return head + lines, batch


def render_matmul(kernel: Kernel, t: Tiles | None = None, split: bool = False) -> Rendered:
    """WGSL for a ``matmul`` kernel with tile sizes ``t``; ``prm`` extras: GM, GN (tiles), NG (workgroups).

    With ``split`` the shader is the first pass of a split-K product (see ``tile_grid``): one
    output binding of the accumulator type receives the partial sums (extras GT, KC, TS)."""
    t = t or Tiles()
    t.check()
    ai, bi = kernel.operands
    a = kernel.instrs[ai]
    dt = kernel.result_dtype
    reg = WGSL_TYPE[dt]
    nb = len(a.shape) - 2
    g = _Gen(kernel)
    threads = t.threads
    cols_per = t.bn // t.tn
    grid, batch = tile_grid(g, nb, t.bm, t.bn, split)
    head = ["  " + line for line in grid]
    head += [f"  let tx = lid % {cols_per}u;", f"  let ty = lid / {cols_per}u;"]
    head += [f"  var acc{i}_{j}: {reg} = {reg}(0);" for i in range(t.tm) for j in range(t.tn)]
    # A tile, stored k-major (As[k * BM + m]) so the inner loop reads a thread's rows together
    load_a = _load(g, ai, batch, "m0", "k0", "As", t.bm * t.bk, threads, t.bk, "M", "K", reg,
                   f"c * {t.bm}u + r")
    load_b = _load(g, bi, batch, "k0", "n0", "Bs", t.bk * t.bn, threads, t.bn, "K", "N", reg,
                   f"r * {t.bn}u + c")
    rows_per = t.bm // t.tm

    def row(i: int) -> str:      # tile row of a thread's i-th output row
        return f"ty + {i * rows_per}u" if t.strided else f"ty * {t.tm}u + {i}u"

    def col(j: int) -> str:
        return f"tx + {j * cols_per}u" if t.strided else f"tx * {t.tn}u + {j}u"

    inner = [f"      let av{i} = As[kk * {t.bm}u + {row(i)}];" for i in range(t.tm)]
    inner += [f"      let bv{j} = Bs[kk * {t.bn}u + {col(j)}];" for j in range(t.tn)]
    # Floats sum each K step's bk products apart and add that to the total (blocked summation: the
    # rounding error grows with bk + K / bk terms instead of K; the NumPy host's BLAS keeps partial
    # sums too). H200: a float32 (2 x 500) @ (500 x 2) was 5.0e-7 off where NumPy was 9.1e-8, enough
    # for scikit-learn's GaussianMixture test (E[x^2] - mean^2 with means near 50) to fail there.
    blocked_sum = np.dtype(dt).kind == "f"
    acc_name = "part" if blocked_sum else "acc"
    inner += [f"      {acc_name}{i}_{j} = {acc_name}{i}_{j} + av{i} * bv{j};" for i in range(t.tm) for j in range(t.tn)]
    stores = ["  let obase = bat * M * N" + (f" + sp * {g.slot(('extra', 'TS'))};" if split else ";")]
    stores += [f"  let on{j} = n0 + {col(j)};" for j in range(t.tn)]
    for i in range(t.tm):
        stores.append(f"  let om{i} = m0 + {row(i)};")
        for j in range(t.tn):
            val = f"acc{i}_{j}"
            if dt in SMALL_WRAP and not split:
                val = wrap_small(dt, val)
            if kernel.result_index is None or split:
                stores.append(f"  if (om{i} < M && on{j} < N) {{ out0[obase + om{i} * N + on{j}] = {val}; }}")
                continue
            # the fused epilogue, at the element's output coordinates (batch, om, on)
            stores += [f"  if (om{i} < M && on{j} < N) {{", f"    let eo = obase + om{i} * N + on{j};",
                       *epilogue_lines(g, val, "eo", (*batch, f"om{i}", f"on{j}"), nb), "  }"]
    decls = declare_bindings(input_types(kernel), [reg] if split else output_types(kernel), g.wide)
    decls.append(f"var<workgroup> As: array<{reg}, {t.bm * t.bk}>;")
    decls.append(f"var<workgroup> Bs: array<{reg}, {t.bk * t.bn}>;")
    if split:
        head = ["  " + x for x in touch_unused(decls, [*head, *load_a, *load_b, *stores])] + head
    pairs = [(i, j) for i in range(t.tm) for j in range(t.tn)] if blocked_sum else []
    parts = [f"    var part{i}_{j}: {reg} = {reg}(0);" for i, j in pairs]
    totals = [f"    acc{i}_{j} = acc{i}_{j} + part{i}_{j};" for i, j in pairs]
    step = [*["  " + line for line in load_a], *["  " + line for line in load_b], "    workgroupBarrier();", *parts,
            f"    for (var kk = 0u; kk < {t.bk}u; kk = kk + 1u) {{", *inner, "    }", *totals,
            "    workgroupBarrier();"]
    return k_loop_shader(kernel, g, decls, threads, head, step, t.bk, stores, split)


def k_loop_shader(kernel: Kernel, g: _Gen, decls: list[str], threads: int, head: list[str], step: list[str],
                  bk: int, tail: list[str], split: bool) -> Rendered:
    """The shader of a product kernel that walks its ``K`` chunk from ``klo`` in steps of ``bk``:
    ``head``, the loop around ``step``, ``tail`` (lines indented for ``main``); one output binding of
    partial sums with ``split``, else the kernel's outputs. Shared by the tiled, narrow and GEMV
    kernels."""
    main = "\n".join([
        f"@compute @workgroup_size({threads})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        *head,
        "  var k0 = klo;",
        "  loop {",
        "    if (k0 >= K) { break; }",
        *step,
        f"    k0 = k0 + {bk}u;",
        "  }",
        *tail,
        "}",
    ])
    source = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main + "\n"
    return Rendered(source, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs),
                    1 if split else max(1, len(kernel.outputs)))


SUM_THREADS = 256


def vec4_operand(g: _Gen, op: int, side: str, batch: list[str]) -> tuple[str, str, str]:
    """(binding, base word, stride) of matrix operand ``op`` read as ``vec4`` words through its input's
    buffer: word ``q`` of its row (along its vec4 axis) ``r`` is ``base + r * stride + q``, from the
    ``prm`` extras ``<side>_off``, ``<side>_st`` and ``<side>_b<d>`` (vec4 units;
    ``wgpu_matmul_classes.gemv_vec``) and the batch indices ``batch``. The row dot and the narrow
    kernel use it."""
    ins = g.ins[op]
    buf = f"in{g.ins[ins.args[0] if ins.op == 'view' else op].params[0]}"
    base = [g.slot(("extra", f"{side}_off")),
            *[f"{b} * {g.slot(('extra', f'{side}_b{d}'))}" for d, b in enumerate(batch)]]
    return buf, " + ".join(base), g.slot(("extra", f"{side}_st"))


def touch_unused(decls: list[str], body: list[str]) -> list[str]:
    """Statements that reference each storage binding of ``decls`` that ``body`` does not use, so
    that the pipeline's automatic layout keeps it (the two passes of a split-K product bind the
    kernel's inputs and outputs like the one-pass shader, but each uses only some of them)."""
    text = "\n".join(body)
    names = [m.group(1) for d in decls for m in [re.search(r"var<storage[^>]*> (\w+):", d)] if m]
    return [f"_ = arrayLength(&{n});" for n in names if not re.search(rf"\b{n}\b", text)]


def render_splitk_sum(kernel: Kernel) -> Rendered:
    """WGSL for the second pass of a split-K product: each output element adds its ``S`` partial
    sums (binding ``part`` after the kernel's own, chunk ``s`` at ``s * TS``) in chunk order and
    evaluates the fused epilogue. ``prm`` extras: S, TS (elements per chunk); one thread per element.
    """
    g = _Gen(kernel)
    reg = WGSL_TYPE[kernel.result_dtype]
    ts, ns = g.slot(("extra", "TS")), g.slot(("extra", "S"))
    head = [f"let e = (wid.y * nwg.x + wid.x) * {SUM_THREADS}u + lid;",
            f"if (e >= {ts}) {{ return; }}",
            f"var acc: {reg} = part[e];",
            f"for (var s = 1u; s < {ns}; s = s + 1u) {{ acc = acc + part[s * {ts} + e]; }}"]
    return chunk_sum_shader(kernel, g, SUM_THREADS, head)


def chunk_sum_shader(kernel: Kernel, g: _Gen, threads: int, head: list[str], shared: Sequence[str] = ()) -> Rendered:
    """The shader of a split product's sum pass around ``head``, which leaves output element ``e``'s
    sum in ``acc`` (threads without an element have returned): the element's (batch, row, column),
    the fused epilogue, the kernel's bindings with ``part`` (the partial sums) last, and the
    workgroup declarations ``shared``. Shared by ``render_splitk_sum`` and the GEMV sum pass."""
    ai, bi = kernel.operands
    nb = len(kernel.instrs[ai].shape) - 2
    dt = kernel.result_dtype
    reg = WGSL_TYPE[dt]
    ra, rb = g.rep[ai], g.rep[bi]
    head = [*head, f"let N = {g.slot(('dim', rb, nb + 1))};",
            f"let M = {g.slot(('dim', ra, nb))};",
            "let on = e % N;", "let q = e / N;", "let om = q % M;", "let bat = q / M;"]
    lines, batch = batch_index(g, nb, "bat")
    val = wrap_small(dt, "acc")
    body = [*head, *lines, *epilogue_lines(g, val, "e", (*batch, "om", "on"), nb, 0)]
    decls = declare_bindings(input_types(kernel), output_types(kernel), g.wide)
    decls.append(f"@group(0) @binding({len(decls)}) var<storage, read> part: array<{reg}>;")
    body = touch_unused(decls, body) + body
    decls += shared
    main = "\n".join([
        f"@compute @workgroup_size({threads})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        *["  " + x for x in body],
        "}",
    ])
    source = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main + "\n"
    return Rendered(source, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs),
                    max(1, len(kernel.outputs)))


def epilogue_multi(g: _Gen, multi: tuple[str, ...], nb: int) -> tuple[str, ...] | None:
    """``multi`` (batch..., row, column), or None where the ``result`` is a reshaped 1-D product."""
    res = g.k.instrs[g.k.result_index or 0]
    return multi if len(res.shape) == nb + 2 else None


def epilogue_lines(g: _Gen, val: str, at: str, multi: tuple[str, ...], nb: int, indent: int = 4) -> list[str]:
    """The fused epilogue's lines for one output element (``at``: its linear index, ``multi``: its
    (batch..., row, column) coordinates)."""
    return [" " * indent + ln for ln in epilogue_stores(g, val, at, epilogue_multi(g, multi, nb))]
