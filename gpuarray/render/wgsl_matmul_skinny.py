"""Render the first pass of a split-K product with one narrow side (``M <= 8`` or ``N <= 8``).

``G.T @ X`` with ``G`` (K x 3) and ``X`` (K x 64), or ``X.T @ G``: the tiled kernels load the few
valid rows of the narrow operand into tiles of 64 rows (most threads of the load and of the outer
products have nothing to do) and evaluate a fused operand cone (``softmax(X @ W) - Y``) per tile
load. Here a workgroup walks one ``K`` chunk (``tile_grid(split=True)``) for ``BW`` columns of the
wide side:

- per ``K`` step of ``BK`` the narrow operand's ``S x BK`` elements are loaded into workgroup
  memory by ``S * BK`` threads, the narrow index fastest (``G.T``'s elements lie next to each other
  in ``G``), each element's prologue evaluated once per workgroup: once in all where the wide
  side fits one tile (``N <= BW``);
- thread ``t`` owns wide column ``t % BW`` and ``K`` lane ``t / BW`` (``LANES`` lanes): it reads
  the wide operand at ``(k, column)`` straight from global memory (neighbouring threads read
  neighbouring columns of a row of ``X``: coalesced; each element is read by one thread only; its
  ``BK / LANES`` reads per step are written out, loads first) and keeps ``S`` partial sums in
  registers;
- with one narrow row that is an input or a view of one (``X.T @ r``), each thread reads it straight
  from memory next to its wide reads (the threads of a subgroup read one address) and the ``K``
  loop has no workgroup memory and no barrier;
- at the end the lanes are added through workgroup memory and lane 0 writes the ``S`` partial sums
  of its column to the partial-sum binding (``out0``) like the tiled kernels' split pass, so
  ``render_splitk_sum`` adds the chunks and evaluates the fused epilogue.

With ``S == 1`` this is the column-sum form of a matrix-vector product (``X.T @ r``, ``r @ X``:
``wgpu_matmul_classes.gemv_for``); where its ``K`` is not split (``final``) lane 0 stores the product
itself, through the fused epilogue, and there is no second pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_TYPE
from .wgsl import Rendered, _Gen
from .wgsl_cast import SMALL_WRAP, wrap_small
from .wgsl_matmul import epilogue_lines, k_loop_shader, tile_grid, touch_unused, vec4_operand
from .wgsl_parts import declare_bindings, input_types, output_types

UNROLL = 16                # wide-operand reads per K step written out (more: a loop)
READS_FIRST = True         # a step's wide reads issued before the narrow tile's load and its barrier


@dataclass(frozen=True)
class Skinny:
    """The narrow-side split-K kernel: ``s`` rows of ``A`` (``side == "a"``) or columns of ``B``
    (``"b"``), ``bw`` wide columns per workgroup, ``K`` step ``bk``, ``lanes`` threads per column."""

    s: int
    side: str = "a"
    bw: int = 64
    bk: int = 64
    lanes: int = 4
    one_pass: bool = False    # without a K split, store the product (``final``): the GEMV column sum
    vec: bool = False         # the wide operand read as vec4 words, 4 columns a thread

    @property
    def threads(self) -> int:
        return (self.bw // 4 if self.vec else self.bw) * self.lanes

    @property
    def bm(self) -> int:          # the output tile, as ``split_for`` and ``plan`` count tiles
        return self.s if self.side == "a" else self.bw

    @property
    def bn(self) -> int:
        return self.bw if self.side == "a" else self.s

    @property
    def load_steps(self) -> int:
        """Iterations of the narrow tile's load loop per ``K`` step."""
        return -(-self.s * self.bk // self.threads)

    @property
    def smem_elems(self) -> int:
        return self.s * self.bk + self.s * self.bw

    def check(self) -> None:
        if self.side not in ("a", "b") or not 1 <= self.s <= 16:
            raise ValueError(f"skinny matmul: side {self.side!r}, {self.s} narrow rows; expected 'a'/'b', 1..16")
        if self.vec and self.bw % 4:
            raise ValueError(f"skinny matmul: vec4 reads need bw a multiple of 4, not {self.bw}")
        if self.bk % self.lanes or not 1 <= self.threads <= 1024:
            raise ValueError(f"skinny matmul: bk {self.bk} not a multiple of {self.lanes} lanes, "
                             f"or {self.threads} threads")


def _plain(kernel: Kernel, op: int) -> bool:
    """Whether operand ``op`` is an input or a view of one (no computed cone: reading it once per
    thread costs a load, not its prologue)."""
    ins = kernel.instrs[op]
    return ins.op == "input" or ins.op == "view" and kernel.instrs[ins.args[0]].op == "input"


def _narrow_load(g: _Gen, t: Skinny, narrow: int, batch: list[str], reg: str) -> list[str]:
    """A ``K`` step's narrow tile into workgroup memory: element ``e`` is (narrow index ``e % S``,
    ``K`` step ``e / S``), stored at ``Ns[e]``, its prologue evaluated once per workgroup."""
    s = t.s
    g.memo, g.lines = {}, []
    idx = (*batch, "gi", "gk") if t.side == "a" else (*batch, "gk", "gi")
    v = g.value(narrow, ("multi", idx))
    body = ["        " + line.strip() for line in g.lines]
    return [f"    for (var l = 0u; l < {t.load_steps}u; l = l + 1u) {{",
            f"      let e = l * {t.threads}u + lid;",
            f"      if (e >= {s * t.bk}u) {{ break; }}",
            f"      let gi = e % {s}u;",
            f"      let gk = k0 + e / {s}u;",
            f"      var x: {reg} = {reg}(0);",
            "      if (gk < K) {", *body, f"        x = {v};", "      }",
            "      Ns[e] = x;",
            "    }"]


def _lane_sums(lanes: int, s: int, width: int, col: str) -> list[str]:
    """The ``K`` lanes' sums added in order ``L-1, ..., 0`` through ``Rs`` (narrow row ``i`` of column
    ``col`` at ``Rs[i * width + col]``; one barrier a lane, written out, no loop): lane 0 then adds
    ``Rs`` to its own."""
    red: list[str] = []
    for lane in range(lanes - 1, 0, -1):
        red.append(f"  if (kl == {lane}u) {{")
        for i in range(s):
            prev = f" + Rs[{i * width}u + {col}]" if lane < lanes - 1 else ""
            red.append(f"    Rs[{i * width}u + {col}] = acc{i}{prev};")
        red += ["  }", "  workgroupBarrier();"]
    return red


def render_matmul_skinny(kernel: Kernel, t: Skinny, final: bool = False) -> Rendered:
    """WGSL for the partial-sum pass of a narrow split-K product (module docstring); ``prm`` extras
    GM, GN, NG, GT, KC, TS as for ``render_matmul(split=True)``; one output binding ``part``. With
    ``final`` (``K`` not split: GM, GN, NG only) it stores the product and its fused epilogue."""
    t.check()
    if t.vec:
        return _render_vec(kernel, t, final)
    ai, bi = kernel.operands
    nb = len(kernel.instrs[ai].shape) - 2
    reg = WGSL_TYPE[kernel.result_dtype]
    g = _Gen(kernel)
    s, bw, bk, lanes = t.s, t.bw, t.bk, t.lanes
    narrow, wide = (ai, bi) if t.side == "a" else (bi, ai)
    grid, batch = tile_grid(g, nb, t.bm, t.bn, split=not final)
    head = ["  " + line for line in grid]
    w0, wlim = ("n0", "N") if t.side == "a" else ("m0", "M")
    head += [f"  let col = lid % {bw}u;", f"  let kl = lid / {bw}u;", f"  let gw = {w0} + col;",
             f"  let live = gw < {wlim};"]
    head += [f"  var acc{i}: {reg} = {reg}(0);" for i in range(s)]

    load = _narrow_load(g, t, narrow, batch, reg)
    # the wide operand at (k, gw), read by this thread only; up to UNROLL reads per step are written
    # out, all loads before the products, so that they are in flight together
    steps = bk // lanes
    direct = s == 1 and steps <= UNROLL and _plain(kernel, narrow)
    if direct:      # one narrow row read straight from memory (a subgroup reads one address): no Ns, no barriers
        load = []
        inner = []
        for j in range(steps):
            g.memo, g.lines = {}, []
            v = g.value(narrow, ("multi", (*batch, "0u", f"gk{j}") if t.side == "a" else (*batch, f"gk{j}", "0u")))
            inner += [f"    let gk{j} = k0 + kl + {j * lanes}u;", f"    var x{j}: {reg} = {reg}(0);",
                      f"    if (gk{j} < K) {{", *["      " + ln.strip() for ln in g.lines],
                      f"      x{j} = {v};", "    }"]
    if steps <= UNROLL:
        inner = inner if direct else []
        for j in range(steps):
            g.memo, g.lines = {}, []
            v = g.value(wide, ("multi", (*batch, f"gk{j}", "gw") if t.side == "a" else (*batch, "gw", f"gk{j}")))
            if not direct:
                inner.append(f"    let gk{j} = k0 + kl + {j * lanes}u;")
            inner += [f"    var y{j}: {reg} = {reg}(0);",
                      f"    if (live && gk{j} < K) {{", *["      " + ln.strip() for ln in g.lines],
                      f"      y{j} = {v};", "    }"]
        products = [f"    acc0 = acc0 + x{j} * y{j};" for j in range(steps)] if direct else \
            [f"    acc{i} = acc{i} + Ns[(kl + {j * lanes}u) * {s}u + {i}u] * y{j};"
             for j in range(steps) for i in range(s)]
    else:
        g.memo, g.lines = {}, []
        v = g.value(wide, ("multi", (*batch, "gk", "gw") if t.side == "a" else (*batch, "gw", "gk")))
        products = []                   # a loop of reads and products: the reads after the barrier
        inner = [f"    for (var kk = kl; kk < {bk}u; kk = kk + {lanes}u) {{",
                 "      let gk = k0 + kk;",
                 f"      var y: {reg} = {reg}(0);",
                 "      if (live && gk < K) {", *["          " + ln.strip() for ln in g.lines],
                 f"        y = {v};", "      }",
                 *[f"      acc{i} = acc{i} + Ns[kk * {s}u + {i}u] * y;" for i in range(s)],
                 "    }"]
    red = _lane_sums(lanes, s, bw, "col")
    base = "bat * M * N" if final else f"sp * {g.slot(('extra', 'TS'))} + bat * M * N"
    store = ["  if (kl == 0u && live) {", f"    let obase = {base};"]
    for i in range(s):
        val = f"acc{i}" + (f" + Rs[{i * bw}u + col]" if lanes > 1 else "")
        at = f"{i}u * N + gw" if t.side == "a" else f"gw * N + {i}u"
        if not final:
            store.append(f"    out0[obase + {at}] = {val};")
            continue
        if kernel.result_dtype in SMALL_WRAP:
            val = wrap_small(kernel.result_dtype, f"({val})")
        om, on = (f"{i}u", "gw") if t.side == "a" else ("gw", f"{i}u")
        store += ["    {", f"      let eo = obase + {at};", f"      let om = {om};", f"      let on = {on};",
                  *epilogue_lines(g, val, "eo", (*batch, "om", "on"), nb, 6), "    }"]
    store.append("  }")
    decls = declare_bindings(input_types(kernel), output_types(kernel) if final else [reg], g.wide)
    decls.append(f"var<workgroup> Ns: array<{reg}, {s * bk}>;")
    decls.append(f"var<workgroup> Rs: array<{reg}, {max(1, s * bw)}>;")
    body_all = [*head, *load, *inner, *products, *red, *store]
    head = ["  " + x for x in touch_unused(decls, body_all)] + head
    step = _step(load, inner, products, direct) if products else \
        [*load, "    workgroupBarrier();", *inner, "    workgroupBarrier();"]
    return k_loop_shader(kernel, g, decls, t.threads, head, step, bk, [*red, *store], not final)


def _render_vec(kernel: Kernel, t: Skinny, final: bool) -> Rendered:
    """The narrow product with vec4 reads of the wide operand (``t.vec``): thread ``t`` owns its
    four columns ``4 * (t % (bw / 4)) ..`` and ``K`` lane ``t / (bw / 4)`` and keeps a ``vec4`` sum
    per narrow row; word ``q`` of the wide operand's row ``k`` is ``<w>_off + k * <w>_st + batch .
    <w>_b + q`` (``prm`` extras in vec4 units, ``w`` the wide side: ``wgpu_matmul_classes.gemv_vec``
    with mode ``vo``). One plain narrow row is read straight from memory, more rows (or a cone) go
    through ``Ns`` as in the scalar form; the lanes are added in order ``L-1, ..., 0`` through
    workgroup memory, and lane 0 stores its four columns of each narrow row."""
    ai, bi = kernel.operands
    nb = len(kernel.instrs[ai].shape) - 2
    reg = WGSL_TYPE[kernel.result_dtype]
    g = _Gen(kernel)
    s, bk, lanes, q4 = t.s, t.bk, t.lanes, t.bw // 4
    steps = bk // lanes
    narrow, wide = (ai, bi) if t.side == "a" else (bi, ai)
    grid, batch = tile_grid(g, nb, t.bm, t.bn, split=not final)
    buf, base, st = vec4_operand(g, wide, "b" if t.side == "a" else "a", batch)
    w0, wlim = ("n0", "N") if t.side == "a" else ("m0", "M")
    head = ["  " + line for line in grid]
    head += [f"  let c4 = lid % {q4}u;", f"  let kl = lid / {q4}u;", f"  let gw = {w0} + c4 * 4u;",
             f"  let live = gw < {wlim};", f"  let wq = {base} + gw / 4u;"]
    head += [f"  var acc{i}: vec4<{reg}> = vec4<{reg}>(0);" for i in range(s)]
    direct = s == 1 and steps <= UNROLL and _plain(kernel, narrow)
    load = [] if direct else _narrow_load(g, t, narrow, batch, reg)
    inner: list[str] = []           # the wide reads (and, when direct, the narrow row's), then the products
    for j in range(steps):
        inner += [f"    let gk{j} = k0 + kl + {j * lanes}u;", f"    var y{j}: vec4<{reg}> = vec4<{reg}>(0);"]
        if direct:
            g.memo, g.lines = {}, []
            v = g.value(narrow, ("multi", (*batch, "0u", f"gk{j}") if t.side == "a" else (*batch, f"gk{j}", "0u")))
            inner += [f"    var x{j}: {reg} = {reg}(0);", f"    if (gk{j} < K) {{",
                      *["      " + ln.strip() for ln in g.lines], f"      x{j} = {v};",
                      f"      if (live) {{ y{j} = {buf}[wq + gk{j} * {st}]; }}", "    }"]
        else:
            inner += [f"    if (live && gk{j} < K) {{ y{j} = {buf}[wq + gk{j} * {st}]; }}"]
    if direct:
        products = [f"    acc0 = acc0 + y{j} * x{j};" for j in range(steps)]
    else:
        products = [f"    acc{i} = acc{i} + y{j} * Ns[(kl + {j * lanes}u) * {s}u + {i}u];"
                    for j in range(steps) for i in range(s)]
    red = _lane_sums(lanes, s, q4, "c4")
    obase = "bat * M * N" if final else f"sp * {g.slot(('extra', 'TS'))} + bat * M * N"
    store = ["  if (kl == 0u && live) {", f"    let obase = {obase};"]
    for i in range(s):
        store.append(f"    let tot{i} = acc{i}" + (f" + Rs[{i * q4}u + c4];" if lanes > 1 else ";"))
        for e, comp in enumerate("xyzw"):
            gwe = f"gw + {e}u"
            at = f"{i}u * N + {gwe}" if t.side == "a" else f"({gwe}) * N + {i}u"
            if not final:
                store.append(f"    out0[obase + {at}] = tot{i}.{comp};")
                continue
            val = f"tot{i}.{comp}"
            if kernel.result_dtype in SMALL_WRAP:
                val = wrap_small(kernel.result_dtype, f"({val})")
            om, on = (f"{i}u", gwe) if t.side == "a" else (gwe, f"{i}u")
            store += ["    {", f"      let eo = obase + {at};", f"      let om = {om};", f"      let on = {on};",
                      *epilogue_lines(g, val, "eo", (*batch, "om", "on"), nb, 6), "    }"]
    store.append("  }")
    types = input_types(kernel)
    types[int(buf[2:])] = f"vec4<{reg}>"
    decls = declare_bindings(types, output_types(kernel) if final else [reg], g.wide)
    decls.append(f"var<workgroup> Ns: array<{reg}, {s * bk}>;")
    decls.append(f"var<workgroup> Rs: array<vec4<{reg}>, {max(1, s * q4)}>;")
    head = ["  " + x for x in touch_unused(decls, [*head, *load, *inner, *products, *red, *store])] + head
    return k_loop_shader(kernel, g, decls, t.threads, head, _step(load, inner, products, direct), bk,
                         [*red, *store], not final)


def _step(load: list[str], reads: list[str], products: list[str], direct: bool) -> list[str]:
    """A ``K`` step: the narrow tile's load into ``Ns`` between barriers, the wide operand's reads and
    the products. The wide reads go first (``READS_FIRST``): they do not need ``Ns``, so their memory
    latency overlaps the narrow operand's loads (a fused cone's: ``softmax(X @ W) - Y``) and the barrier."""
    if direct:
        return [*reads, *products]
    if READS_FIRST:
        return [*reads, *load, "    workgroupBarrier();", *products, "    workgroupBarrier();"]
    return [*load, "    workgroupBarrier();", *reads, *products, "    workgroupBarrier();"]
