"""Render a reduction kernel (sum, prod, max, min, any, all) as WGSL.

A reduction of the operand over ``axes`` produces ``M`` outputs, each of ``L``
elements. Three layouts (``Variant.layout``):

- ``row``: a workgroup of 256 threads produces one partial result. Output ``m``
  is split into ``G`` chunks (``G`` = 1 for one pass); workgroup ``w`` reduces
  chunk ``w % G`` of output ``w / G``, its threads striding over the chunk, then
  the workgroup combines its 256 values: with subgroup operations
  (``Variant.sg``) or a shared-memory tree. The partials are laid out ``(M, G)``.
  Used for full reductions and reductions over the trailing axes.
- ``col``: each thread owns one output (four with ``vec`` = 4) and walks the
  reduced elements; with the reduced axes leading (``sum(axis=0)`` of a
  C-contiguous array), neighbouring threads read neighbouring addresses. The
  ``L`` elements are split into ``G`` chunks of ``LC``; partials are laid out
  ``(G, M)``. No cross-thread combine at all. When the outputs need fewer threads
  than a workgroup has (``P`` < 256: ``X.T @ r``, ``mean(axis=0)`` of 64 features),
  one workgroup takes ``R`` = 256 / ``P`` chunks, ``P`` threads each.
- ``seg``: many short contiguous rows (``SEG_MIN`` to ``SHORT_ROW`` elements, flat
  prologues): ``Variant.seg`` threads per output stride over its row, so a warp reads
  neighbouring addresses, then combine through workgroup memory; one pass.

A fused epilogue (``Kernel.result_index``) is evaluated where the last pass
stores each result (``_Parts.stores``); the provider runs a kernel with one
only in one pass (``G`` = 1, so ``w`` and ``m`` name the output) and runs the
epilogue-free ``Kernel.prologue_part`` for the first of several passes.

The fused prologue is evaluated at each element either by the multi-index
(``reduction_index``: any prologue, any axes) or, when ``Variant.flat``, by the
operand's flat index (``wgsl_reduce_flat``): no index arithmetic, values
broadcast along the reduced axes hoisted out of the loop, and with ``vec`` = 4
the inputs read as ``vec4`` (the row layout handles the unaligned head and
tail of each output's range one element per thread). Loops are unrolled by two
with independent loads. The provider (``providers/wgpu_reduce``) picks the
variant, ``G``, and runs further passes over the partials when ``G`` > 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_TYPE
from ..core.ops import OPS
from .wgsl import WORKGROUP, Rendered, _Gen, _suffix, fill
from .wgsl_cast import SMALL_WRAP, wrap_small
from .wgsl_lib import helpers_for
from .wgsl_parts import declare_bindings, epilogue_stores, input_types, output_types, reduction_index, store_value
from .wgsl_reduce_flat import FlatGen, axes_block, block_sizes, flat_inputs, trips, vector_ok, vector_types, word_walk
from .wgsl_size import heavy

COMBINE = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
           "any": "maximum", "all": "minimum", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}
BITWISE = ("and", "or", "xor")     # integer and bool reductions (``bitwise_and.reduce`` ...)
SUBGROUP_TYPES = ("f32", "i32", "u32", "vec2<f32>")   # accumulators the subgroup combine handles
SMALL_ROW = 64       # a row layout needs at least this many elements per output (else: a thread per output)
COL_MIN_INNER = 16   # the col layout needs at least this many contiguous kept elements (I)
# Many short rows: a thread per output. On the H200, sum(axis=1) of a (2^20, 64) float32 array took
# 1.76 ms of GPU time with a workgroup per row (three quarters of its threads idle) and 0.35 ms
# with a thread per row; so did the matrix-vector product X @ w, a sum of that shape.
# many rows at least this long, too short for the row layout, take the seg layout (H200, 2^18 x 128
# float32 sum(axis=1): 0.159 -> 0.074 ms; at 64 elements seg and col took the same time, at 16 col half)
SEG_MIN = 96
MANY_ROWS = 16384
SHORT_ROW = 128
_HEAVY: dict[tuple, bool] = {}      # (signature, operand, axes) -> whether the prologue is heavy


def heavy_prologue(kernel: Kernel, op_i: int, axes: tuple[int, ...]) -> bool:
    """Whether operand ``op_i``'s fused prologue, reduced over ``axes``, is ``heavy`` (rendered once
    per signature to count its lines): then ``Variant.single``, one element (or 4-byte ``vec4`` word) a
    loop trip."""
    key = (kernel.signature, op_i, axes)
    got = _HEAVY.get(key)
    if got is None:
        if len(_HEAVY) >= 4096:
            _HEAVY.clear()
        _head, body, _v = reduction_index(_Gen(kernel), op_i, axes)
        got = _HEAVY[key] = heavy(body)
    return got


@dataclass(frozen=True)
class Variant:
    """Which shader to render for a reduce kernel (part of the pipeline cache key)."""

    layout: str = "row"    # "row" | "col"
    flat: bool = False     # evaluate the prologue by flat index (wgsl_reduce_flat)
    vec: int = 1           # 4: vec4 loads of the flat inputs
    sg: bool = False       # subgroup combine (row layout)
    seg: int = 0           # seg layout: threads per output (a power of two up to 32)
    single: bool = False   # one element or word a loop trip (a heavy prologue: ``heavy_prologue``)


def identity(rop: str, dtype: np.dtype) -> str:
    """WGSL expression of the identity of ``rop`` for ``dtype`` (bools travel as u32 0/1)."""
    if dtype == np.bool_:
        return "0u" if rop in ("any", "sum", "or", "xor") else "1u"
    t = WGSL_TYPE[dtype]
    if rop in ("or", "xor"):
        return f"{t}(0)"
    if rop == "and":
        return f"(~{t}(0))"
    if rop == "sum":
        return f"{t}(0)"
    if rop == "prod":
        return f"{t}(1, 0)" if dtype.kind == "c" else f"{t}(1)"
    if dtype.kind == "f":
        inf = f"ga_inf_{_suffix(dtype)}()"
        return f"-{inf}" if rop == "max" else inf
    info = np.iinfo(dtype)
    v = info.min if rop == "max" else info.max
    if t == "i64" and v < 0:
        return "(i64(-9223372036854775807) - i64(1))"
    if t == "i32" and v == -(2**31):
        return "(i32(-2147483647) - i32(1))"
    if t in ("u32", "u64") and v == np.iinfo(np.dtype(t.replace("u", "uint"))).max:
        return f"(~{t}(0))"
    return f"{t}({v})"


def combine(rop: str, dtype: np.dtype, a: str, b: str) -> str:
    if dtype == np.bool_:   # bools travel as u32 0/1: sum and any are "or", prod and all are "and"
        if rop == "xor":
            return f"({a} ^ {b})"
        return f"{'max' if rop in ('any', 'sum', 'or') else 'min'}({a}, {b})"
    expr = fill(OPS[COMBINE[rop]].template(dtype.kind), dtype, (a, b))
    if dtype in SMALL_WRAP:     # int8/int16/uint8/uint16 live in 32 bits: wrap after each step
        expr = "(" + wrap_small(dtype, expr) + ")"
    return expr


# the keys of -inf (max) and +inf (min): identities of the keyed float32 accumulators
KEYED_IDENTITY = {"max": "i32(-2139095041)", "min": "i32(2139095040)"}


def acc_type(dtype: np.dtype) -> str:
    return "u32" if dtype == np.bool_ else WGSL_TYPE[dtype]


def choose_variant(kernel: Kernel, subgroups: bool = False,
                   vector: bool = True) -> tuple[Variant, tuple[int, int, int]]:
    """The variant for ``kernel`` and its ``(O, L, I)`` sizes (``I`` = 0 when the reduced axes
    are not one block: then only the multi-index row layout applies)."""
    rop, axes = kernel.attrs
    op_i = kernel.operands[0]
    shape = kernel.instrs[op_i].shape
    dt = kernel.result_dtype
    sg = subgroups and acc_type(dt) in SUBGROUP_TYPES
    single = heavy_prologue(kernel, op_i, tuple(axes))
    block = axes_block(len(shape), axes)
    if block is None:
        return Variant("row", sg=sg, single=single), (0, math.prod(shape[d] for d in axes), 0)
    o, length, inner = block_sizes(shape, block)
    fi = flat_inputs(kernel, op_i, axes)
    # a heavy prologue keeps 4-byte vec4 words (one a trip), not 8-byte ones
    wide = kernel.instrs[op_i].dtype.itemsize > 4
    vec_ok = vector and fi is not None and vector_ok(kernel, fi) and not (single and wide)
    short = length < SMALL_ROW or (o >= MANY_ROWS and length <= SHORT_ROW)
    if inner == 1 and (not short or o == 1):
        return Variant("row", flat=fi is not None, vec=4 if vec_ok else 1, sg=sg, single=single), (o, length, inner)
    if inner == 1 and fi is not None and length >= SEG_MIN:
        # short contiguous rows: a few threads per row, so that a warp reads neighbouring addresses
        seg = min(32, 1 << max(1, (length - 1).bit_length() - 1))
        return Variant("seg", flat=True, seg=seg, single=single), (o, length, inner)
    if inner >= COL_MIN_INNER or inner == 1:
        vec = 4 if vec_ok and inner % 4 == 0 else 1
        return Variant("col", flat=fi is not None, vec=vec, single=single), (o, length, inner)
    return Variant("row", sg=sg, single=single), (o, length, inner)


def compute_main(sg: bool, body: list[str], wg: int = WORKGROUP) -> str:
    """The ``main`` entry point of a workgroup-of-``wg`` kernel around ``body`` (with the
    subgroup built-ins ``sgi``, ``sgs``, ``sgid``, ``nsg`` when ``sg``)."""
    builtins = ["@builtin(workgroup_id) wid: vec3<u32>", "@builtin(num_workgroups) nwg: vec3<u32>",
                "@builtin(local_invocation_index) lid: u32"]
    if sg:
        builtins += ["@builtin(subgroup_invocation_id) sgi: u32", "@builtin(subgroup_size) sgs: u32",
                     "@builtin(subgroup_id) sgid: u32", "@builtin(num_subgroups) nsg: u32"]
    return "\n".join([f"@compute @workgroup_size({wg})", f"fn main({', '.join(builtins)}) {{", *body, "}"])


def workgroup_combine(rop: str, dt: np.dtype, a: str, sg: bool,
                      store: Callable[[str], list[str]] | None = None) -> list[str]:
    """Combine every thread's ``a`` (a ``var``) and store the result to ``out0[w]`` from thread 0
    (``store``: the lines thread 0 runs instead, given the combined value)."""
    def put(v: str) -> list[str]:
        return ["    " + ln for ln in store(v)] if store is not None else [f"    out0[w] = {v};"]

    if sg:
        return [
            "  var so = sgs >> 1u;",
            "  loop {",
            "    if (so == 0u) { break; }",
            f"    {a} = {combine(rop, dt, a, f'subgroupShuffleXor({a}, so)')};",
            "    so = so >> 1u;",
            "  }",
            f"  if (sgi == 0u) {{ sh[sgid] = {a}; }}",
            "  workgroupBarrier();",
            "  if (lid == 0u) {",
            "    var t = sh[0];",
            "    for (var j = 1u; j < nsg; j = j + 1u) {",
            f"      t = {combine(rop, dt, 't', 'sh[j]')};",
            "    }",
            *put("t"),
            "  }",
        ]
    return [*shared_tree(rop, dt, a, WORKGROUP, "lid"),
            "  if (lid == 0u) {",
            *put("sh[0]"),
            "  }"]


def shared_tree(rop: str, dt: np.dtype, a: str, width: int, lane: str) -> list[str]:
    """Combine every thread's ``a`` within aligned groups of ``width`` threads (``lane``: the index
    in the group) through workgroup memory ``sh``; afterwards ``sh[lid]`` of lane 0 holds its
    group's value. Every thread runs it (barriers)."""
    return [
        f"  sh[lid] = {a};",
        "  workgroupBarrier();",
        f"  var s = {width // 2}u;",
        "  loop {",
        "    if (s == 0u) { break; }",
        f"    if ({lane} < s) {{ sh[lid] = {combine(rop, dt, 'sh[lid]', 'sh[lid + s]')}; }}",
        "    workgroupBarrier();",
        "    s = s >> 1u;",
        "  }",
    ]


def _indent(lines: list[str], n: int) -> list[str]:
    return [" " * n + ln for ln in lines]


class _Parts:
    """What the layouts share: the generator, accumulators and the element->accumulator step."""

    def __init__(self, kernel: Kernel, v: Variant) -> None:
        self.k = kernel
        self.v = v
        self.rop, self.axes = kernel.attrs
        self.op_i = kernel.operands[0]
        self.dt = kernel.result_dtype
        # float32 max/min accumulate integer order keys (ga_rmaxkey/ga_rminkey: NaN at the
        # winning end, -0 below +0): one key per element and the integer max/min, where the
        # NaN-propagating float combine keys both operands at every step
        self.keyed = self.dt == np.float32 and self.rop in ("max", "min")
        self.cdt = np.dtype(np.int32) if self.keyed else self.dt      # the accumulators' dtype
        self.acc_t = acc_type(self.cdt)
        fi = flat_inputs(kernel, self.op_i, self.axes) if v.flat else None
        self.vec_inputs: set[int] = set(fi or ()) if v.vec == 4 else set()
        self.g: _Gen = FlatGen(kernel, self.op_i, self.axes, self.vec_inputs) if v.flat else _Gen(kernel)

    def stores(self, value: str, at: str) -> list[str]:
        """Lines storing the reduced ``value`` (an accumulator expression) of output ``at``: through
        the fused epilogue when the kernel has one (its last pass), else to ``out0[at]``."""
        if self.keyed:
            value = f"ga_unkey_f32({value})"
        if self.k.result_index is None:
            return [f"out0[{at}] = {value};"]
        g = self.g
        if isinstance(g, FlatGen):
            g.inline = True                  # the epilogue runs here, not before the loop
        o = g.fresh("eo")
        res = f"({value} != 0u)" if self.dt == np.bool_ else value
        return [f"let {o} = {at};", *epilogue_stores(g, res, o)]

    def acc_decl(self, names: list[str]) -> list[str]:
        ident = (KEYED_IDENTITY[self.rop] if self.keyed else identity(self.rop, self.dt))
        return [f"  var {n}: {self.acc_t} = {ident};" for n in names]

    def step(self, acc: str, v: str) -> str:
        if self.keyed:
            return f"  {acc} = {self.rop}({acc}, ga_r{self.rop}key_f32({v}));"
        return f"  {acc} = {combine(self.rop, self.dt, acc, store_value(self.dt, v))};"

    def fold(self, names: list[str]) -> str:
        """WGSL combining the accumulators ``names`` pairwise."""
        while len(names) > 1:
            names = [combine(self.rop, self.cdt, names[i], names[i + 1]) if i + 1 < len(names) else names[i]
                     for i in range(0, len(names), 2)]
        return names[0]

    def elem(self, acc: str, flat: str, out: str) -> list[str]:
        """Lines adding the element at flat index ``flat`` (a WGSL expression) of output ``out``."""
        g = self.g
        assert isinstance(g, FlatGen)
        f = g.fresh("fx")
        g.lines = [f"  let {f} = {flat};"]
        val = g.value(self.op_i, g.flat(f, out))
        return [*g.lines, self.step(acc, val)]

    def vec_elems(self, accs: list[str], qs: list[str], outs: list[str], flat_of: list[str]) -> list[str]:
        """Lines adding the 4 elements of ``vec4`` number ``q`` to ``accs[set][c]`` for each ``q`` of
        ``qs`` (set n); component c belongs to output ``outs[c]``; loads are emitted first."""
        g = self.g
        assert isinstance(g, FlatGen)
        g.lines = []
        for q in qs:
            g.preload(q)
        for n, q in enumerate(qs):
            for c in range(4):
                f = g.fresh("fx")
                g.lines.append(f"  let {f} = {flat_of[n]} + {c}u;")
                val = g.value(self.op_i, g.flat(f, outs[c], (q, c)))
                g.lines.append(self.step(accs[n * 4 + c] if len(accs) > 4 else accs[c], val))
        return g.lines

    def paired_walk(self, start: str, step: str, end: str, accs: list[str]) -> tuple[list[str], list[str]]:
        """(head lines, loop lines) of the multi-index walk ``k = start, start + step, ... < end``
        adding its elements to ``accs[0]`` and ``accs[1]``, two elements per trip so that their loads
        are in flight together (``reduction_index`` renders both bodies); one a trip for a heavy prologue
        (``Variant.single``: ``accs[1]`` stays the identity)."""
        split, body, val = reduction_index(self.g, self.op_i, self.axes)
        one = [*body, "  " + self.step(accs[0], val)]
        two: list[str] = []
        if not self.v.single:
            _s, body_b, val_b = reduction_index(self.g, self.op_i, self.axes, "kb", "_b")
            two = [*body, *body_b, "  " + self.step(accs[0], val), "  " + self.step(accs[1], val_b)]
        return split, [*self.acc_decl(accs), f"  var k = {start};",
                       *trips(two, one, step, end, self.v.single, [f"    let kb = k + {step};"])]

    def source(self, main: str, shared: bool) -> Rendered:
        in_types = input_types(self.k)
        if self.vec_inputs:
            in_types = vector_types(self.k, self.vec_inputs, in_types)
        out_types = output_types(self.k)
        decls = declare_bindings(in_types, out_types, self.g.wide)
        if shared:
            decls.append(f"var<workgroup> sh: array<{self.acc_t}, {WORKGROUP}>;")
        source = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main + "\n"
        return Rendered(source, sorted(self.g.slots, key=lambda sp: self.g.slots[sp]), self.g.wide,
                        len(self.k.inputs), len(out_types))


def _row(p: _Parts) -> Rendered:
    g, v = p.g, p.v
    head = ["  let w = wid.y * nwg.x + wid.x;",
            f"  let G = {g.slot(('extra', 'G'))};",
            f"  if (w >= {g.slot(('extra', 'MG'))}) {{ return; }}",
            "  let m = w / G;",
            "  let chunk = w % G;",
            f"  let L = {g.slot(('extra', 'L'))};",
            f"  let step = G * {WORKGROUP}u;"]
    if not v.flat:
        split, loop = p.paired_walk(f"chunk * {WORKGROUP}u + lid", "step", "L", ["acc", "accb"])
        loop.append(f"  acc = {p.fold(['acc', 'accb'])};")
        combined = workgroup_combine(p.rop, p.cdt, "acc", v.sg, lambda x: p.stores(x, "w"))
        return p.source(compute_main(v.sg, head + split + loop + combined), True)
    assert isinstance(g, FlatGen)
    if v.vec == 4:
        accs = ["acc0", "acc1", "acc2", "acc3"]
        unrolled = None if v.single else p.vec_elems(accs, ["qa", "qb"], ["m"] * 4, ["qa * 4u", "qb * 4u"])
        single = p.vec_elems(accs, ["qa"], ["m"] * 4, ["qa * 4u"])
        tail = p.elem("acc0", "fs", "m")
        loop = [*p.acc_decl(accs),
                "  let s0 = m * L;",
                "  let e0 = s0 + L;",
                *word_walk(f"chunk * {WORKGROUP}u + lid", unrolled, single, tail),
                f"  var acc = {p.fold(accs)};"]
    else:
        two = [] if v.single else p.elem("acc0", "s0 + k", "m") + p.elem("acc1", "s0 + k + step", "m")
        one = p.elem("acc0", "s0 + k", "m")
        loop = [*p.acc_decl(["acc0", "acc1"]),
                "  let s0 = m * L;",
                f"  var k = chunk * {WORKGROUP}u + lid;",
                *trips(two, one, "step", "L", v.single),
                f"  var acc = {p.fold(['acc0', 'acc1'])};"]
    combined = workgroup_combine(p.rop, p.cdt, "acc", v.sg, lambda x: p.stores(x, "w"))
    body = head + g.hoisted + loop + combined
    return p.source(compute_main(v.sg, body), True)


def _col(p: _Parts) -> Rendered:
    g, v = p.g, p.v
    vc = v.vec
    # R chunks per workgroup of PT threads each (R = 1, PT = WORKGROUP unless fewer than
    # WORKGROUP threads cover the outputs: then NB = 1 and the workgroup's threads take R chunks)
    head = ["  let w = wid.y * nwg.x + wid.x;",
            f"  if (w >= {g.slot(('extra', 'MG'))}) {{ return; }}",
            f"  let NB = {g.slot(('extra', 'NB'))};",
            f"  let PT = {g.slot(('extra', 'PT'))};",
            f"  let R = {g.slot(('extra', 'R'))};",
            "  if (lid / PT >= R) { return; }",
            "  let c = (w / NB) * R + lid / PT;",
            f"  if (c >= {g.slot(('extra', 'G'))}) {{ return; }}",
            f"  let p = (w % NB) * {WORKGROUP}u + lid % PT;",
            f"  if (p >= {g.slot(('extra', 'P'))}) {{ return; }}",
            f"  let m = p * {vc}u;",
            f"  let M = {g.slot(('extra', 'M'))};",
            f"  let L = {g.slot(('extra', 'L'))};",
            f"  let k0 = c * {g.slot(('extra', 'LC'))};",
            f"  let k1 = min(L, k0 + {g.slot(('extra', 'LC'))});"]
    outs = ["m"] + [f"m + {j}u" for j in range(1, vc)]
    if not v.flat:
        split, loop = p.paired_walk("k0", "1u", "k1", ["acc0", "acc1"])
        loop += _indent(p.stores(p.fold(["acc0", "acc1"]), "c * M + m"), 2)
        return p.source(compute_main(False, head + split + loop), False)
    assert isinstance(g, FlatGen)
    head += [f"  let I = {g.slot(('extra', 'I'))};",
             "  let base = (m / I) * L * I + m % I;     // flat index of (o, 0, i)"]
    accs = [f"acc{s}_{j}" for s in "ab" for j in range(vc)]
    if vc == 4:
        two = p.vec_elems(accs, ["qa", "qb"], outs, ["qa * 4u", "qb * 4u"])
        one = p.vec_elems(accs[:4], ["qa"], outs, ["qa * 4u"])
        pre_two = ["    let qa = (base + k * I) >> 2u;", "    let qb = qa + (I >> 2u);"]
        pre_one = ["    let qa = (base + k * I) >> 2u;"]
    else:
        two = [] if v.single else (p.elem("acca_0", "base + k * I", "m")
                                   + p.elem("accb_0", "base + (k + 1u) * I", "m"))
        one = p.elem("acca_0", "base + k * I", "m")
        pre_two, pre_one = [], []
    loop = [*p.acc_decl(accs),
            "  var k = k0;",
            *trips(two, one, "1u", "k1", v.single, pre_two, pre_one)]
    for j in range(vc):
        loop += _indent(p.stores(combine(p.rop, p.cdt, f"acca_{j}", f"accb_{j}"), f"c * M + {outs[j]}"), 2)
    return p.source(compute_main(False, head + g.hoisted + loop), False)


def _seg(p: _Parts) -> Rendered:
    """``seg``: ``S`` = ``Variant.seg`` threads per output, ``256 / S`` outputs per workgroup;
    the threads of an output stride over its ``L`` contiguous elements (a warp reads neighbouring
    addresses), then combine through workgroup memory; one pass."""
    g, v = p.g, p.v
    assert isinstance(g, FlatGen)
    seg = v.seg
    head = ["  let w = wid.y * nwg.x + wid.x;",
            f"  let lane = lid % {seg}u;",
            f"  let m = w * {WORKGROUP // seg}u + lid / {seg}u;",
            f"  let valid = w < {g.slot(('extra', 'MG'))} && m < {g.slot(('extra', 'M'))};",
            f"  let L = {g.slot(('extra', 'L'))};"]
    two = [] if v.single else p.elem("acc0", "s0 + k", "m") + p.elem("acc1", f"s0 + k + {seg}u", "m")
    one = p.elem("acc0", "s0 + k", "m")
    loop = [*p.acc_decl(["acc0", "acc1"]),
            "  if (valid) {",
            "    let s0 = m * L;",
            "    var k = lane;",
            *_indent(trips(two, one, f"{seg}u", "L", v.single), 2),
            "  }",
            *shared_tree(p.rop, p.cdt, p.fold(["acc0", "acc1"]), seg, "lane"),
            "  if (valid && lane == 0u) {",
            *_indent(p.stores("sh[lid]", "m"), 4),
            "  }"]
    return p.source(compute_main(False, head + g.hoisted + loop), True)


def render_reduce(kernel: Kernel, variant: Variant | None = None) -> Rendered:
    """WGSL for a ``reduce`` kernel in ``variant`` (default: what ``choose_variant`` picks without
    subgroups). ``prm`` extras: row: G, MG, L; col: MG, NB, PT, R, G, P, M, L, LC (and I when flat)."""
    v = variant if variant is not None else choose_variant(kernel)[0]
    parts = _Parts(kernel, v)
    return _row(parts) if v.layout == "row" else _seg(parts) if v.layout == "seg" else _col(parts)
