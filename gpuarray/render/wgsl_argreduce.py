"""Render an argmax / argmin kernel as WGSL.

Like the reduction (``wgsl_reduce``): one workgroup of 256 threads per
output, or per chunk ``w % G`` of output ``w / G``. Each thread keeps a
(value, index) pair while it strides over its elements, evaluating the fused
prologue at each index; the workgroup then combines pairs in shared memory.
The index is the position in C order over the reduced axes (the flat index
for ``axis=None``).

``arg_better`` decides whether pair b replaces pair a: NaN beats every
number, a larger (argmax) / smaller (argmin) value wins, and ties go to the
smaller index, so the first occurrence (and the first NaN) wins as in NumPy,
whatever order the pairs meet in. An empty pair has the index 0xffffffff.

The kernel's ``attrs`` are ``(op, axes[, mode[, vec]])`` (``vec``: the inputs of ``vec_inputs`` are bound
as whole ``vec4`` words, so the chunk walk reads them so):

- ``final``   (default) the prologue feeds the pairs, ``out0`` gets the index;
- ``partial`` the prologue feeds the pairs, ``out0``/``out1`` get value and index per chunk;
- ``pairs``   the inputs are those (value, index) partials, laid out (M, G); ``out0`` gets the index;
- ``thread``  one thread per output walks its ``L`` elements (many short rows: ``argmin(d, axis=1)``
  of 2^20 x 64 took 2.9 ms of H200 time with a workgroup per row, three quarters of it idle);
- ``cols_partial`` / ``cols_final``  over leading axes (``argmax(x, axis=0)``): thread ``w`` takes output
  ``w % M`` and chunk ``w / M`` of ``G`` (consecutive threads read consecutive columns), writing a pair per
  chunk for the ``pairs`` pass, or, with one chunk, the index.
"""

from __future__ import annotations

import os

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP, WGSL_STORAGE_TYPE, WGSL_TYPE
from .wgsl import WORKGROUP, Rendered, _Gen, _suffix
from .wgsl_lib import helpers_for
from .wgsl_parts import declare_bindings, input_types, reduction_index
from .wgsl_reduce_flat import FlatGen, axes_block, flat_inputs, vector_ok, vector_types, word_walk
from .wgsl_size import heavy

EMPTY = "0xffffffffu"
# elements a chunk thread loads before comparing them (``_unrolled_walk``); 0: one at a time, as before
UNROLL = int(os.environ.get("GPUARRAY_ARGREDUCE_UNROLL", "4"))
# "0": the one-output-a-thread walks (``thread``, ``cols_*``) compare one element at a time, for A/B timing
WALK_UNROLL = os.environ.get("GPUARRAY_ARGREDUCE_WALK_UNROLL", "1") != "0"
# "0": no vec4 walks (``_vec_walk``, ``cols4``), for A/B timing
VEC = os.environ.get("GPUARRAY_ARGREDUCE_VEC", "1") != "0"


def val_type(dtype: np.dtype) -> str:
    return "u32" if dtype == np.bool_ else WGSL_TYPE[dtype]


def _u32(v: str, dtype: np.dtype) -> str:
    """A bool operand's value as the u32 the pairs hold (false 0, true 1)."""
    return f"select(0u, 1u, {v})" if dtype == np.bool_ else v


def better_fn(op: str, dtype: np.dtype) -> str:
    t = val_type(dtype)
    cmp = ">" if op == "max" else "<"
    lines = [f"fn arg_better(av: {t}, ai: u32, bv: {t}, bi: u32) -> bool {{",
             f"  if (bi == {EMPTY}) {{ return false; }}",
             f"  if (ai == {EMPTY}) {{ return true; }}"]
    if dtype.kind == "f":
        s = _suffix(dtype)
        lines += [f"  let an = ga_isnan_{s}(av);",
                  f"  let bn = ga_isnan_{s}(bv);",
                  "  if (an || bn) { return bn && (!an || bi < ai); }"]
    lines += [f"  return bv {cmp} av || (bv == av && bi < ai);", "}"]
    return "\n".join(lines)


def _take_later(op: str, vdt: np.dtype, v: str, idx: str, tag: str, ok: str = "", acc: str = "") -> list[str]:
    """Lines that make the element ``v`` at index ``idx``, met after every element the pair ``(bv<acc>,
    bi<acc>)`` has seen, the pair where it is strictly better, or the first NaN (no index test: a later
    element never wins a tie); only where ``ok`` holds, if given."""
    cmp = ">" if op == "max" else "<"
    bv, bi, vv, bt = f"bv{acc}", f"bi{acc}", f"vv{tag}", f"bt{tag}"
    nan = f" || (ga_isnan_{_suffix(vdt)}({vv}) && !ga_isnan_{_suffix(vdt)}({bv}))" if vdt.kind == "f" else ""
    better = f"{bi} == {EMPTY} || {vv} {cmp} {bv}{nan}"
    return [f"let {vv} = {v};",
            f"let {bt} = {ok + ' && (' + better + ')' if ok else better};",
            f"{bv} = select({bv}, {vv}, {bt});",
            f"{bi} = select({bi}, {idx}, {bt});"]


def _unrolled_walk(g: _Gen, op_i: int, axes: tuple[int, ...], op: str, vdt: np.dtype,
                   step: str = f"G * {WORKGROUP}u", n: int = UNROLL, end: str = "L") -> list[str]:
    """A chunk thread's loop body for ``UNROLL`` of its elements, ``k``, ``k + step``, ...: every value is
    loaded (and its prologue evaluated) before any is compared, so that the loads are in flight together,
    and indices past ``L`` read element ``L - 1`` and are not taken. A thread walks its elements in
    increasing order, so a later one replaces the pair only when strictly better (or the first NaN),
    without ``arg_better``'s index test (H200, argmax of 2^28 float32: the loop of one load and one
    compare at a time read 1.2 TB/s)."""
    lines: list[str] = []
    vals: list[str] = []
    for j in range(n):
        lines += [f"    let ka{j} = k + {j}u * {step};",
                  f"    let ok{j} = ka{j} < {end} && ka{j} >= k;",
                  f"    let kq{j} = select({end} - 1u, ka{j}, ok{j});"]
        _head, body, v = reduction_index(g, op_i, axes, k=f"kq{j}", sfx=f"_{j}")
        lines += body
        vals.append(_u32(v, vdt))
    for j, v in enumerate(vals):
        lines += ["    " + ln for ln in _take_later(op, vdt, v, f"kq{j}", str(j), f"ok{j}")]
    return lines


def _word_inputs(kernel: Kernel, op_i: int, axes: tuple[int, ...]) -> frozenset[int] | None:
    """The inputs of a real 4-byte operand evaluated by flat index over 4-byte inputs (``vec4`` words of
    ``vec_inputs`` and ``cols4_inputs``), or None. 4-byte words only: float64 read as vec4<f64> was slower on
    the H200 (argmax of 2^26: 0.169 against the element walk's 0.141 ms)."""
    vdt = kernel.instrs[op_i].dtype
    if not VEC or vdt.kind == "c" or vdt.itemsize > 4:
        return None
    fi = flat_inputs(kernel, op_i, axes)
    if not fi or not vector_ok(kernel, fi) or any(STORAGE_NP[kernel.inputs[k].dtype].itemsize != 4 for k in fi):
        return None
    return fi


def _pair_tree(width: int, lane: str) -> list[str]:
    """Lines combining each group of ``width`` threads' pairs (``bv``, ``bi``) in workgroup memory into its
    first thread's slot (``lane``: the thread's place in its group), a halving tree with ``arg_better``."""
    return ["  shv[lid] = bv;",
            "  shi[lid] = bi;",
            "  workgroupBarrier();",
            f"  var s = {width // 2}u;",
            "  loop {",
            "    if (s == 0u) { break; }",
            f"    if ({lane} < s && arg_better(shv[lid], shi[lid], shv[lid + s], shi[lid + s])) {{",
            "      shv[lid] = shv[lid + s];",
            "      shi[lid] = shi[lid + s];",
            "    }",
            "    workgroupBarrier();",
            "    s = s >> 1u;",
            "  }"]


def _source(decls: list[str], fn: str, main: str) -> str:
    """A shader's text: its bindings, the library helpers it calls, ``fn`` (``arg_better``, or none) and ``main``."""
    body = (fn + "\n\n" if fn else "") + main
    return "\n".join(decls) + "\n\n" + helpers_for(fn + "\n" + main) + "\n\n" + body + "\n"


def vec_inputs(kernel: Kernel, op_i: int, axes: tuple[int, ...], mode: str) -> frozenset[int] | None:
    """The inputs a chunk walk of ``mode`` reads as ``vec4`` (``_vec_walk``), or None: the reduced axes
    are the operand's last ones and its fused prologue reads its inputs at its own flat index (a plain
    array, elementwise work of such arrays and of values broadcast along the reduced axes)."""
    block = axes_block(len(kernel.instrs[op_i].shape), axes)
    if mode not in ("final", "partial") or block is None or block[1] != len(kernel.instrs[op_i].shape):
        return None
    return _word_inputs(kernel, op_i, axes)


def _vec_walk(g: FlatGen, op_i: int, op: str, vdt: np.dtype, lane: str = "lid",
              first: str = f"chunk * {WORKGROUP}u + lid", step: str = f"G * {WORKGROUP}u",
              edges: str = "chunk == 0u") -> list[str]:
    """A chunk thread's walk over the ``vec4`` words of output ``m``'s elements (flat indices
    ``[m * L, m * L + L)``): two words a trip, their loads issued before any compare, the thread's
    elements met in increasing order (so a later one replaces the pair only when strictly better, or
    the first NaN); the unaligned head and tail (at most 3 elements each) by lanes of chunk 0 with
    ``arg_better``. The thread's first word is ``qs + first``, its next ``step`` words on; ``lane`` and
    ``edges`` pick the threads of the head and tail. H200, argmax of 2^28 float32: 0.275 ms (3.9 TB/s); the
    scalar walk (``_unrolled_walk``) 0.349."""
    t = val_type(vdt)

    def words(qs: list[str]) -> list[str]:
        g.lines = []
        for q in qs:
            g.preload(q)
        vals: list[tuple[str, str]] = []
        for q in qs:
            for c in range(4):
                f = g.fresh("fx")
                g.lines.append(f"let {f} = {q} * 4u + {c}u;")
                vals.append((_u32(g.value(op_i, g.flat(f, "m", (q, c))), vdt), f))
        lines = list(g.lines)
        for j, (v, f) in enumerate(vals):
            lines += _take_later(op, vdt, v, f"{f} - s0", str(j))
        return lines

    two = words(["qa", "qb"])
    one = words(["qa"])
    g.lines = []
    f = g.fresh("fx")
    g.lines.append(f"let {f} = fs;")
    v = _u32(g.value(op_i, g.flat(f, "m")), vdt)
    edge = [*g.lines, f"let ve = {v};", "if (arg_better(bv, bi, ve, fs - s0)) { bv = ve; bi = fs - s0; }"]
    return ["  let s0 = m * L;",
            "  let e0 = s0 + L;",
            f"  let step = {step};",
            f"  var bv: {t} = {t}(0);",
            f"  var bi: u32 = {EMPTY};",
            *word_walk(first, two, one, edge, edges, lane)]


def render_argreduce(kernel: Kernel) -> Rendered:
    """WGSL for an ``argreduce`` kernel; ``prm`` extras: G (chunks), MG (outputs x G), L (reduced length)."""
    op, axes = kernel.attrs[:2]
    mode = kernel.attrs[2] if len(kernel.attrs) > 2 else "final"
    out_dt = kernel.out_nodes[0].dtype
    # attrs[3]: the provider bound the inputs of ``vec_inputs`` as whole vec4 words (``wgpu_argreduce``)
    vin = vec_inputs(kernel, kernel.operands[0], tuple(axes), mode) if kernel.attrs[3:4] == (True,) else None
    g = FlatGen(kernel, kernel.operands[0], tuple(axes), set(vin)) if vin else _Gen(kernel)
    thread = mode == "thread"
    cols = mode.startswith("cols")
    wg = "(wid.y * nwg.x + wid.x)"
    head = [f"  let w = {wg} * {WORKGROUP}u + lid;" if thread or cols else f"  let w = {wg};",
            f"  let G = {g.slot(('extra', 'G'))};",
            f"  let MG = {g.slot(('extra', 'MG'))};",
            "  if (w >= MG) { return; }",
            *(["  let m = w % (MG / G);", "  let chunk = w / (MG / G);"] if cols else
              ["  let m = w / G;", "  let chunk = w % G;"]),
            f"  let L = {g.slot(('extra', 'L'))};"]
    unrolled: list[str] = []
    vec_walk: list[str] = []
    if vin:
        assert isinstance(g, FlatGen)
        vdt = kernel.instrs[kernel.operands[0]].dtype
        loop = _vec_walk(g, kernel.operands[0], op, vdt)
        vec_walk = [*head, *g.hoisted, *loop]
    elif mode == "pairs":
        vdt = kernel.instrs[0].dtype
        body = ["    let v = in0[m * L + k];", "    let i = in1[m * L + k];"]
    else:
        op_i = kernel.operands[0]
        vdt = kernel.instrs[op_i].dtype
        split, body, v = reduction_index(g, op_i, axes)
        head += split
        body.append(f"    let v = {_u32(v, vdt)};")
        body.append("    let i = k;")
        # the body first: it declares its memoized values; a heavy prologue is rendered once (wgsl_size.heavy)
        if UNROLL > 1 and not heavy(body) and (WALK_UNROLL or not (thread or cols)):
            step1 = "1u" if thread or cols else f"G * {WORKGROUP}u"
            unrolled = body + _unrolled_walk(g, op_i, axes, op, vdt, step=step1, end="kend" if cols else "L")
    t = val_type(vdt)
    in_types = [WGSL_STORAGE_TYPE[vdt], "u32"] if mode == "pairs" else input_types(kernel)
    if vin:
        in_types = vector_types(kernel, set(vin), in_types)
    if mode in ("partial", "cols_partial"):
        decls = declare_bindings(in_types, [WGSL_STORAGE_TYPE[vdt], "u32"], g.wide)
        store = ["  if (lid == 0u) { out0[w] = shv[0]; out1[w] = shi[0]; }"]
    else:
        decls = declare_bindings(in_types, [WGSL_STORAGE_TYPE[out_dt]], g.wide)
        store = [f"  if (lid == 0u) {{ out0[w] = {WGSL_TYPE[out_dt]}(shi[0]); }}"]
    decls.append(f"var<workgroup> shv: array<{t}, {WORKGROUP}>;")
    decls.append(f"var<workgroup> shi: array<u32, {WORKGROUP}>;")
    if mode == "pairs":
        start, step = "lid", f"{WORKGROUP}u"     # G is 1: one workgroup reads the L pairs of output m
    elif thread:
        start, step = "0u", "1u"                 # G is 1: this thread reads the L elements of output m
    elif cols:
        start, step = "chunk * ((L + G - 1u) / G)", "1u"      # chunk ``chunk`` of output m's elements
        head.append("  let kend = min(L, (chunk + 1u) * ((L + G - 1u) / G));")
    else:
        start, step = f"chunk * {WORKGROUP}u + lid", f"G * {WORKGROUP}u"
    walk = [*head,
            f"  var bv: {t} = {t}(0);",
            f"  var bi: u32 = {EMPTY};",
            f"  var k = {start};",
            "  loop {",
            f"    if (k >= {'kend' if cols else 'L'}) {{ break; }}",
            *(unrolled or [*body, "    if (arg_better(bv, bi, v, i)) { bv = v; bi = i; }"]),
            f"    k = k + {UNROLL if unrolled else 1}u * {step};",
            "  }"] if not vec_walk else vec_walk
    entry = [f"@compute @workgroup_size({WORKGROUP})",
             "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
             "        @builtin(local_invocation_index) lid: u32) {"]
    if thread or mode == "cols_final":
        main = "\n".join([*entry, *walk, f"  out0[w] = {WGSL_TYPE[out_dt]}(bi);", "}"])
        decls = decls[:-2]
    elif cols:
        main = "\n".join([*entry, *walk, "  out0[m * G + chunk] = bv;", "  out1[m * G + chunk] = bi;", "}"])
        decls = decls[:-2]
    else:
        main = "\n".join([
            *entry,
            *walk,
            *_pair_tree(WORKGROUP, "lid"),
            *store,
            "}",
        ])
    return Rendered(_source(decls, better_fn(op, vdt), main), sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide,
                    len(kernel.inputs), 2 if mode in ("partial", "cols_partial") else 1)


def render_argreduce_seg(kernel: Kernel) -> Rendered:
    """WGSL for an ``argreduce`` kernel of mode ``seg`` (attrs ``(op, axes, "seg", vec, S)``): many rows of a
    few hundred to a few thousand elements, ``S`` threads a row and ``256 / S`` rows a workgroup (a
    workgroup a row left most of its threads idle: argmax(axis=1) of 65536 x 1000 float32 took 0.27 ms on the
    H200, PyTorch 0.09). Each thread walks every ``S``-th element (or ``vec4`` word) of its row, then the
    row's threads combine their pairs in shared memory. ``prm`` extras: M (outputs), L (reduced length)."""
    op, axes, _mode, vec, seg = kernel.attrs
    op_i = kernel.operands[0]
    vdt = kernel.instrs[op_i].dtype
    out_dt = kernel.out_nodes[0].dtype
    vin = vec_inputs(kernel, op_i, tuple(axes), "final") if vec else None
    g = FlatGen(kernel, op_i, tuple(axes), set(vin)) if vin else _Gen(kernel)
    t = val_type(vdt)
    head = [f"  let M = {g.slot(('extra', 'M'))};",
            f"  let L = {g.slot(('extra', 'L'))};",
            f"  let lane = lid % {seg}u;",
            f"  let mr = (wid.y * nwg.x + wid.x) * {WORKGROUP // seg}u + lid / {seg}u;",
            "  let m = min(mr, M - 1u);           // rows past M: computed, not stored (barriers below)"]
    if vin:
        assert isinstance(g, FlatGen)
        loop = _vec_walk(g, op_i, op, vdt, lane="lane", first="lane", step=f"{seg}u", edges="true")
        walk = [*head, *g.hoisted, *loop]
    else:
        split, body, v = reduction_index(g, op_i, axes)
        n = 1 if heavy(body) else max(UNROLL, 1)
        trip = (_unrolled_walk(g, op_i, axes, op, vdt, step=f"{seg}u", n=n) if n > 1 else
                [f"    let v = {_u32(v, vdt)};", "    if (arg_better(bv, bi, v, k)) { bv = v; bi = k; }"])
        walk = [*head, *split, f"  var bv: {t} = {t}(0);", f"  var bi: u32 = {EMPTY};", "  var k = lane;",
                "  loop {", "    if (k >= L) { break; }", *body, *trip,
                f"    k = k + {n}u * {seg}u;", "  }"]
    in_types = input_types(kernel)
    if vin:
        in_types = vector_types(kernel, set(vin), in_types)
    decls = declare_bindings(in_types, [WGSL_STORAGE_TYPE[out_dt]], g.wide)
    decls.append(f"var<workgroup> shv: array<{t}, {WORKGROUP}>;")
    decls.append(f"var<workgroup> shi: array<u32, {WORKGROUP}>;")
    main = "\n".join([
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        *walk,
        *_pair_tree(seg, "lane"),
        f"  if (lane == 0u && mr < M) {{ out0[m] = {WGSL_TYPE[out_dt]}(shi[lid]); }}",
        "}"])
    return Rendered(_source(decls, better_fn(op, vdt), main), sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide,
                    len(kernel.inputs), 1)


def cols4_inputs(kernel: Kernel, op_i: int, axes: tuple[int, ...]) -> frozenset[int] | None:
    """The inputs a ``cols4`` walk reads as ``vec4`` words (``render_argreduce_cols4``), or None: the reduced axes
    are the operand's leading ones, the kept elements a multiple of 4, the operand 4-byte values evaluated by
    flat index over 4-byte inputs."""
    block = axes_block(len(kernel.instrs[op_i].shape), axes)
    if block is None or block[0] != 0 or kernel.size % 4:
        return None
    return _word_inputs(kernel, op_i, axes)


def render_argreduce_cols4(kernel: Kernel) -> Rendered:
    """WGSL for an ``argreduce`` kernel of mode ``cols4`` (attrs ``(op, axes, "cols4", final)``) over leading
    axes: thread ``w`` takes the four outputs ``4 (w % M4)`` .. ``+ 3`` and chunk ``w / M4`` of ``G`` of the
    rows, reading one ``vec4`` word a row, four rows a trip, so that a warp reads 512 consecutive bytes a row
    and four loads are in flight (``cols_partial``'s thread read one element a row). Writes the four indices
    (``final``, one chunk) or their (value, index) pairs for the ``pairs`` pass. ``prm`` extras: G, MG (threads:
    M4 x G), L (rows), M4 (outputs / 4)."""
    op, axes, _mode, final = kernel.attrs
    op_i = kernel.operands[0]
    vdt = kernel.instrs[op_i].dtype
    out_dt = kernel.out_nodes[0].dtype
    vin = cols4_inputs(kernel, op_i, tuple(axes))
    assert vin is not None
    g = FlatGen(kernel, op_i, tuple(axes), set(vin))
    t = val_type(vdt)
    rows = 4
    g.lines = []
    for j in range(rows):
        g.preload(f"q{j}")
    body: list[str] = []
    vals: list[list[str]] = []
    for j in range(rows):
        vals.append([])
        for c in range(4):
            f = g.fresh("fx")
            g.lines.append(f"let {f} = q{j} * 4u + {c}u;")
            vals[j].append(_u32(g.value(op_i, g.flat(f, f"(4u * m4 + {c}u)", (f"q{j}", c))), vdt))
    body += g.lines
    for j in range(rows):
        for c in range(4):
            body += _take_later(op, vdt, vals[j][c], f"k{j}", f"{j}_{c}", f"ok{j}", str(c))
    head = [f"  let G = {g.slot(('extra', 'G'))};",
            f"  let MG = {g.slot(('extra', 'MG'))};",
            f"  let L = {g.slot(('extra', 'L'))};",
            f"  let M4 = {g.slot(('extra', 'M4'))};",
            f"  let w = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
            "  if (w >= MG) { return; }",
            "  let m4 = w % M4;",
            "  let chunk = w / M4;",
            "  let per = (L + G - 1u) / G;",
            "  let kend = min(L, (chunk + 1u) * per);"]
    loop = [*[f"  var bv{c}: {t} = {t}(0);" for c in range(4)],
            *[f"  var bi{c}: u32 = {EMPTY};" for c in range(4)],
            "  var k = chunk * per;",
            "  loop {",
            "    if (k >= kend) { break; }",
            *[ln for j in range(rows) for ln in (f"    let ok{j} = k + {j}u < kend;",
                                                  f"    let k{j} = select(kend - 1u, k + {j}u, ok{j});",
                                                  f"    let q{j} = k{j} * M4 + m4;")],
            *["    " + ln for ln in body],
            f"    k = k + {rows}u;",
            "  }"]
    if final:
        ot = WGSL_TYPE[out_dt]
        store = [f"  out0[4u * m4 + {c}u] = {ot}(bi{c});" for c in range(4)]
        outs = [WGSL_STORAGE_TYPE[out_dt]]
    else:
        store = [ln for c in range(4) for ln in (f"  out0[(4u * m4 + {c}u) * G + chunk] = bv{c};",
                                                 f"  out1[(4u * m4 + {c}u) * G + chunk] = bi{c};")]
        outs = [WGSL_STORAGE_TYPE[vdt], "u32"]
    decls = declare_bindings(vector_types(kernel, set(vin), input_types(kernel)), outs, g.wide)
    main = "\n".join([
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        *head, *g.hoisted, *loop, *store, "}"])
    return Rendered(_source(decls, "", main), sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs),
                    1 if final else 2)
