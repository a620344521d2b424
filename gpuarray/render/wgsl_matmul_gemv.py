"""Render matrix-vector products (one operand a vector: ``N == 1`` or ``M == 1``) as row dots.

``A @ v`` with ``A``'s rows contiguous (``X @ w``: the ``gemv`` class), ``v @ B.T`` likewise, and
long rows (``(64 x 2^20) @ (2^20,)``: ``gemv_t``) read each matrix element once, coalesced along the
rows. The matrix is ``A`` (``side == "a"``, ``N == 1``) or ``B`` (``"b"``, ``M == 1``: its rows
are ``B``'s columns); "rows" below are the output's elements.

- ``LANES`` neighbouring threads share a row and split its ``K``: in a ``K`` step of ``BK = LANES *
  UNROLL`` lane ``l`` reads ``k = k0 + l + j * LANES`` (``j < UNROLL``), so the lanes of a row read
  neighbouring addresses; the ``256 / LANES`` row slots of a workgroup sit side by side, and each
  thread owns ``ROWS`` rows (``slot + i * slots``), so a tile is ``slots * ROWS`` rows;
- a thread reads its ``UNROLL`` vector elements once per step into registers (the vector's fused
  prologue evaluated there, once per slot and step) and uses them for its ``ROWS`` rows; all its
  ``ROWS * UNROLL`` matrix reads of a step are written out before the products, so that they are
  in flight together; there is no barrier in the ``K`` loop;
- with ``vec`` (a float32 or float64 matrix that is a plain buffer, or a strided view of one, with
  unit stride along ``K``, ``K`` and its other strides multiples of 4: ``wgpu_matmul_classes.gemv_vec``)
  the matrix is read as ``vec4`` words, lane ``l`` taking word ``k0 / 4 + l + j * LANES``, and
  each row keeps four partial sums in a ``vec4`` register (added at the end); the vector's four
  elements of a word are read through its prologue as above;
- at the end the lanes' partial sums go through workgroup memory (padded, no bank conflicts) and
  the first ``tile`` threads each add one row's lanes in lane order and store it: the product with
  its fused epilogue, or with ``split`` one partial sum per ``K`` chunk (``tile_grid(split=True)``),
  added by ``render_gemv_sum``.

``render_gemv_sum`` is the second pass of a split product: up to 64 threads per output element
add its chunks (many: a few outputs of a long ``K`` are split into up to a thousand chunks, which
one thread per element would add one after another), then evaluate the epilogue.

The column-sum form (``X.T @ r``: the matrix read with unit stride along the output) is the narrow
split-K kernel with one narrow row (``render/wgsl_matmul_skinny.py``, ``Skinny(1, ...)``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_TYPE
from .wgsl import Rendered, _Gen
from .wgsl_cast import wrap_small
from .wgsl_matmul import chunk_sum_shader, epilogue_lines, k_loop_shader, tile_grid, touch_unused, vec4_operand
from .wgsl_parts import declare_bindings, input_types, output_types

THREADS = 256
READS_FIRST = True         # a step's matrix reads issued before the staged vector's loads and barriers


@dataclass(frozen=True)
class Gemv:
    """The row-dot kernel: ``lanes`` threads per row, ``rows`` rows per thread, ``unroll`` reads per
    row and ``K`` step; ``side`` names the matrix operand (``"a"``: ``N == 1``, ``"b"``: ``M == 1``)."""

    side: str = "a"
    lanes: int = 16
    rows: int = 4
    unroll: int = 4
    vec: bool = False        # vec4 matrix reads (``K`` steps of ``4 * lanes * unroll``)
    cols: int = 1            # the vector operand's columns (``X @ W`` of a few classes: ``N`` = 2 .. 8)
    stage: bool = True       # with cols > 1: the vector operand's step staged in workgroup memory

    @property
    def threads(self) -> int:
        return THREADS

    @property
    def slots(self) -> int:
        return THREADS // self.lanes

    @property
    def tile(self) -> int:
        """Rows (output elements) per workgroup."""
        return self.slots * self.rows

    @property
    def bk(self) -> int:
        return self.lanes * self.unroll * (4 if self.vec else 1)

    @property
    def bm(self) -> int:          # the output tile, as ``split_for`` and ``plan`` count tiles
        return self.tile if self.side == "a" else self.cols

    @property
    def bn(self) -> int:
        return self.cols if self.side == "a" else self.tile

    @property
    def staged(self) -> int:
        """Elements of the vector operand's ``K`` step kept in workgroup memory (``cols`` > 1): each
        read once per workgroup and step, through its prologue, instead of by every thread."""
        return self.cols * self.bk if self.cols > 1 and self.stage else 0

    @property
    def smem_elems(self) -> int:
        return (self.cols * self.lanes * (self.tile + 1) if self.lanes > 1 else 0) + self.staged

    def check(self) -> None:
        if self.side not in ("a", "b") or self.lanes < 1 or THREADS % self.lanes:
            raise ValueError(f"gemv: side {self.side!r}, {self.lanes} lanes; expected 'a'/'b' and a divisor of "
                             f"{THREADS}")
        if not 1 <= self.rows <= 16 or not 1 <= self.unroll <= 32 or self.lanes > 1 and self.tile > THREADS:
            raise ValueError(f"gemv: {self.rows} rows and {self.unroll} reads per thread, {self.tile} rows per "
                             f"workgroup; expected 1..16, 1..32 and at most {THREADS} (with lanes to add)")
        if not 1 <= self.cols <= 8:
            raise ValueError(f"gemv: {self.cols} vector columns; expected 1..8")


def render_matmul_gemv(kernel: Kernel, t: Gemv, split: bool = False) -> Rendered:
    """WGSL for a matrix-vector product (module docstring); ``prm`` extras GM, GN, NG as for
    ``render_matmul``, with ``split`` also GT, KC, TS and one output binding of partial sums. With
    ``t.cols`` > 1 the vector operand has that many columns (``X @ W`` of a few classes): each matrix
    read serves every column, each thread keeps ``rows * cols`` sums."""
    t.check()
    ai, bi = kernel.operands
    nb = len(kernel.instrs[ai].shape) - 2
    dt = kernel.result_dtype
    reg = WGSL_TYPE[dt]
    g = _Gen(kernel)
    mat, vec = (ai, bi) if t.side == "a" else (bi, ai)
    lanes, rows, unroll, slots, tile, cols = t.lanes, t.rows, t.unroll, t.slots, t.tile, t.cols
    grid, batch = tile_grid(g, nb, t.bm, t.bn, split)
    r0, rlim = ("m0", "M") if t.side == "a" else ("n0", "N")
    head = ["  " + line for line in grid]
    head += [f"  let lane = lid % {lanes}u;", f"  let slot = lid / {lanes}u;"]
    for i in range(rows):
        head += [f"  let row{i} = {r0} + slot + {i * slots}u;", f"  let live{i} = row{i} < {rlim};"]
        head += [f"  var acc{i}_{c}: {reg} = {reg}(0);" for c in range(cols)]

    def at(is_mat: bool, row: str, k: str) -> tuple[str, ...]:
        # (batch..., row, column) of the matrix, or of the vector's column ``row`` (by role: both may
        # be one instruction, x @ x)
        if is_mat:
            return (*batch, row, k) if t.side == "a" else (*batch, k, row)
        return (*batch, k, f"{row}u") if t.side == "a" else (*batch, f"{row}u", k)

    types = input_types(kernel)
    # a step: the matrix reads (``reads``), the vector's elements (``vals``, through ``Ws`` when staged)
    # and the products. The matrix reads are issued first, before the staging's barriers, so that their
    # memory latency overlaps the vector's loads and the barriers (``READS_FIRST``)
    if t.vec:
        reads, vals, products, buf = _vec_step(g, t, mat, vec, batch, at)
        types[int(buf[2:])] = f"vec4<{reg}>"
        head += [f"  var accv{i}_{c}: vec4<{reg}> = vec4<{reg}>(0);" for i in range(rows) for c in range(cols)]
    else:
        reads = [f"    let gk{j} = k0 + lane + {j * lanes}u;" for j in range(unroll)]
        vals, products = [], []
        for j in range(unroll):                      # the vector's elements of this step, in registers
            for c in range(cols):
                if t.staged:
                    vals += [f"    let x{j}_{c} = Ws[{c * t.bk + j * lanes}u + lane];"]
                    continue
                g.memo, g.lines = {}, []
                v = g.value(vec, ("multi", at(False, str(c), f"gk{j}")))
                vals += [f"    var x{j}_{c}: {reg} = {reg}(0);", f"    if (gk{j} < K) {{",
                         *["      " + ln.strip() for ln in g.lines], f"      x{j}_{c} = {v};", "    }"]
        for i in range(rows):                        # the matrix reads, all before the products
            for j in range(unroll):
                g.memo, g.lines = {}, []
                v = g.value(mat, ("multi", at(True, f"row{i}", f"gk{j}")))
                reads += [f"    var y{i}_{j}: {reg} = {reg}(0);", f"    if (live{i} && gk{j} < K) {{",
                          *["      " + ln.strip() for ln in g.lines], f"      y{i}_{j} = {v};", "    }"]
        products = [f"    acc{i}_{c} = acc{i}_{c} + y{i}_{j} * x{j}_{c};"
                    for i in range(rows) for c in range(cols) for j in range(unroll)]
    stage = _stage(g, t, vec, batch) if t.staged else []
    step = [*reads, *stage, *vals, *products] if READS_FIRST else [*stage, *reads, *vals, *products]

    def store(val: str, row: str, c: int) -> list[str]:
        # output element (row, c) (side a) or (c, row) (side b), at its flat index
        eo = f"bat * M * N + {row} * N + {c}u" if t.side == "a" else f"bat * M * N + {c}u * N + {row}"
        if split:
            return [f"out0[sp * {g.slot(('extra', 'TS'))} + {eo}] = {val};"]
        val = wrap_small(dt, val)
        om, on = (row, f"{c}u") if t.side == "a" else (f"{c}u", row)
        lines = [f"let eo = {eo};"]
        if kernel.result_index is None:
            return [*lines, f"out0[eo] = {val};"]
        return [*lines, *epilogue_lines(g, val, "eo", (*batch, om, on), nb, 0)]

    tail: list[str] = [f"  acc{i}_{c} = (accv{i}_{c}.x + accv{i}_{c}.y) + (accv{i}_{c}.z + accv{i}_{c}.w);"
                       for i in range(rows if t.vec else 0) for c in range(cols)]
    if lanes == 1:                   # a row per thread: no lanes to add
        for i in range(rows):
            tail += [f"  if (live{i}) {{"]
            for c in range(cols):
                tail += ["    {", *["      " + ln for ln in store(f"acc{i}_{c}", f"row{i}", c)], "    }"]
            tail += ["  }"]
    else:                            # lane l of row r, column c at Rs[(c lanes + l) (tile + 1) + r]; thread r adds
        pitch = tile + 1
        tail += [f"  Rs[({c * lanes}u + lane) * {pitch}u + slot + {i * slots}u] = acc{i}_{c};"
                 for i in range(rows) for c in range(cols)]
        tail += ["  workgroupBarrier();",
                 f"  let orow = {r0} + lid;",
                 f"  if (lid < {tile}u && orow < {rlim}) {{"]
        for c in range(cols):
            tail += ["    {", f"    var s = Rs[{c * lanes * pitch}u + lid];",
                     f"    for (var l = 1u; l < {lanes}u; l = l + 1u) {{",
                     f"      s = s + Rs[({c * lanes}u + l) * {pitch}u + lid];", "    }",
                     *["    " + ln for ln in store("s", "orow", c)], "    }"]
        tail += ["  }"]
    decls = declare_bindings(types, [reg] if split else output_types(kernel), g.wide)
    if lanes > 1:
        decls.append(f"var<workgroup> Rs: array<{reg}, {t.smem_elems - t.staged}>;")
    if t.staged:
        w = f"vec4<{reg}>" if t.vec else reg
        decls.append(f"var<workgroup> Ws: array<{w}, {t.staged // (4 if t.vec else 1)}>;")
    body = [*head, *step, *tail]
    head = ["  " + x for x in touch_unused(decls, body)] + head
    return k_loop_shader(kernel, g, decls, THREADS, head, step, t.bk, tail, split)


def _vec_step(g: _Gen, t: Gemv, mat: int, vec: int, batch: list[str],
              at: Callable[[bool, str, str], tuple[str, ...]]) -> tuple[list[str], list[str], list[str], str]:
    """The ``K`` step of the ``vec4`` form: (the matrix's reads, the vector's words, the products, the
    matrix's binding). Word ``q`` of row ``r`` is ``<side>_off + r * <side>_st + batch . <side>_b + q``
    (``prm`` extras in vec4 units)."""
    reg = WGSL_TYPE[g.k.result_dtype]
    buf, base, st = vec4_operand(g, mat, t.side, batch)
    reads = [f"    let wbase = {base};", "    let qb = k0 / 4u + lane;"]
    reads += [f"    let q{j} = qb + {j * t.lanes}u;" for j in range(t.unroll)]
    for i in range(t.rows):
        for j in range(t.unroll):
            reads += [f"    var y{i}_{j}: vec4<{reg}> = vec4<{reg}>(0);",
                      f"    if (live{i} && q{j} * 4u < K) {{ y{i}_{j} = {buf}[wbase + row{i} * {st} + q{j}]; }}"]
    vals: list[str] = []
    for j in range(t.unroll):
        if t.staged:            # word q of column c at Ws[c * bk / 4 + q - k0 / 4] (_stage)
            vals += [f"    let x{j}_{c} = Ws[{c * t.bk // 4 + j * t.lanes}u + lane];" for c in range(t.cols)]
            continue
        vals += [f"    var x{j}_{c}: vec4<{reg}> = vec4<{reg}>(0);" for c in range(t.cols)]
        vals += [f"    if (q{j} * 4u < K) {{"]
        vals += [f"      let gk{j}_{e} = q{j} * 4u + {e}u;" for e in range(4)]
        for c in range(t.cols):
            parts = []
            for e in range(4):
                g.memo, g.lines = {}, []
                v = g.value(vec, ("multi", at(False, str(c), f"gk{j}_{e}")))
                vals += ["      " + ln.strip() for ln in g.lines]
                parts.append(v)
            vals += [f"      x{j}_{c} = vec4<{reg}>({', '.join(parts)});"]
        vals += ["    }"]
    products = [f"    accv{i}_{c} = accv{i}_{c} + y{i}_{j} * x{j}_{c};"
                for i in range(t.rows) for c in range(t.cols) for j in range(t.unroll)]
    return reads, vals, products, buf


def _stage(g: _Gen, t: Gemv, vec: int, batch: list[str]) -> list[str]:
    """The ``K`` step's elements of the vector operand's ``cols`` columns, through its prologue, into
    ``Ws`` (column ``c``'s at ``c * bk``; ``vec4`` words of four along ``K`` in the ``vec`` form, ``K``
    then a multiple of 4), zero past ``K``; between two barriers (the step before has read them)."""
    reg = WGSL_TYPE[g.k.result_dtype]
    per = t.bk // 4 if t.vec else t.bk          # Ws entries per column

    def at(k: str) -> tuple[str, ...]:
        return (*batch, k, "sc") if t.side == "a" else (*batch, "sc", k)

    lines = ["    workgroupBarrier();",
             f"    for (var w = lid; w < {t.cols * per}u; w = w + {THREADS}u) {{",
             f"      let sc = w / {per}u;",
             f"      let sk = k0 + (w % {per}u) * {4 if t.vec else 1}u;"]
    parts = []
    for e in range(4 if t.vec else 1):
        g.memo, g.lines = {}, []
        lines += [f"      let sk{e} = sk + {e}u;"]
        v = g.value(vec, ("multi", at(f"sk{e}")))
        parts.append((list(g.lines), v))
    lines += [f"      var sv: {'vec4<' + reg + '>' if t.vec else reg} = {'vec4<' + reg + '>' if t.vec else reg}(0);",
              "      if (sk < K) {"]
    for e, (pre, v) in enumerate(parts):
        lines += ["        " + ln.strip() for ln in pre]
        lines += [f"        sv{'[' + str(e) + ']' if t.vec else ''} = {v};"]
    lines += ["      }", "      Ws[w] = sv;", "    }", "    workgroupBarrier();"]
    return lines


def sum_lanes(chunks: int) -> int:
    """Threads per output element of ``render_gemv_sum`` for ``chunks`` partial sums (a power of two
    up to 64)."""
    return min(64, 1 << max(0, chunks - 1).bit_length())


def render_gemv_sum(kernel: Kernel, lanes: int) -> Rendered:
    """WGSL for the second pass of a split matrix-vector product: ``lanes`` threads per output element
    add its ``S`` partial sums (binding ``part`` after the kernel's own, chunk ``s`` at ``s * TS``;
    lane ``l`` takes chunks ``l, l + lanes, ...``), the first lane adds the lanes and evaluates the
    fused epilogue. ``prm`` extras: S, TS. ``THREADS / lanes`` neighbouring outputs per workgroup,
    neighbouring threads taking neighbouring outputs of one chunk (coalesced reads for many outputs,
    ``X.T @ X``; for a GEMV's few outputs the H200 took the same time as with an output's lanes side
    by side)."""
    g = _Gen(kernel)
    reg = WGSL_TYPE[kernel.result_dtype]
    ts, ns = g.slot(("extra", "TS")), g.slot(("extra", "S"))
    per = THREADS // lanes
    head = [f"let eo = lid % {per}u;",
            f"let ln = lid / {per}u;",
            f"let e = (wid.y * nwg.x + wid.x) * {per}u + eo;",
            f"var acc: {reg} = {reg}(0);",
            f"if (e < {ts}) {{",
            f"  for (var s = ln; s < {ns}; s = s + {lanes}u) {{ acc = acc + part[s * {ts} + e]; }}",
            "}",
            "Rs[lid] = acc;",
            "workgroupBarrier();",
            f"if (ln != 0u || e >= {ts}) {{ return; }}",
            f"for (var l = 1u; l < {lanes}u; l = l + 1u) {{ acc = acc + Rs[l * {per}u + eo]; }}"]
    return chunk_sum_shader(kernel, g, THREADS, head, [f"var<workgroup> Rs: array<{reg}, {THREADS}>;"])
