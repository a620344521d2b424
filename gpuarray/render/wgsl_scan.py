"""Render a scan kernel (cumulative sum / product along one axis) as WGSL.

Workgroup ``w`` scans chunk ``w % G`` of row ``w / G`` (a row is one line
along the scan axis; ``G`` = 1 scans whole rows). It walks its chunk in
blocks of ``BLOCK`` = 256 x ``PER_THREAD`` elements: each thread scans its
``PER_THREAD`` consecutive elements in registers (evaluating the fused
prologue at their index), the workgroup scans the 256 thread totals in
shared memory (Hillis-Steele over two halves, one barrier per step), and a
running total (``carry``) takes the result from one block to the next.

The kernel's ``attrs`` are ``(op, axis, include_initial[, mode])``, ``op`` one of
``sum``, ``prod`` (cumulative_sum / cumulative_prod) and ``max``, ``min``
(``maximum.accumulate`` / ``minimum.accumulate``; on bools also ``logical_or`` /
``logical_and``); the provider picks the mode:

- ``single``  (default) whole rows, the output is written;
- ``partial`` only each chunk's total is written (``out0[w]``), a plain reduction;
- ``spine``   the chunk totals (``in0``, laid out rows x L) scanned per row, into ``out0``;
- ``carry``   like ``single`` over chunks, starting from the scanned totals of the chunks
  before (``carries[r * G + c - 1]``);
- ``serial``  one thread per row, in order, over axis positions [START, STOP), continuing
  from the value at START - 1: NumPy's order of operations, so the same bits;
- ``tile``    a fold (op ``fold_<elementwise op>``: ``subtract.accumulate`` ..., ``fold_combine``) of
  contiguous rows, a workgroup per row: passes of ``TILE`` positions evaluated into workgroup memory
  by the workgroup, folded in order by one thread, stored by the workgroup. Folds take this mode or
  ``serial`` only: their ops are applied in NumPy's order, ``out[k] = f(out[k - 1], x[k])``.

The float sum starts from -0.0, the exact identity of ``+``, so a leading
-0.0 stays -0.0 as in NumPy. Narrow integers wrap after every step, so the
stored values are the ones NumPy gives.

A complex product (``cumulative_prod`` of complex64 or complex128) is scanned as a pair (the
``vec2`` value, whether it holds one): the identity holds none, so that no element is multiplied
by 1 + 0i (which turns the partner of an infinite or NaN part into NaN, and -0.0 into 0.0), and
two values combine by NumPy's product ``(ac - bd) + (ad + bc)i``. One thread a row (``serial``)
multiplies in NumPy's order, starting from the row's first element; the other modes regroup, so
equal to NumPy's left-to-right products within rounding, and where an intermediate product leaves
the float range or meets inf or NaN a part may differ (NumPy's own ``prod`` groups pairwise too).
A complex sum stays a plain ``vec2`` (the namespace scans its parts as two real sums on a GPU).

A float product is scanned as a pair (product, flags): whether a 0, an inf
or a NaN was met, and the parity of the signs. The pair is combined
associatively, and the output follows NumPy's left-to-right product where
regrouping would differ: a 0 that was met keeps the result ±0 (a regrouped
product would give 0 * inf = NaN where the other factors overflow), an inf
keeps it ±inf, and a 0 and an inf together give NaN. Apart from that the
grouping changes only rounding, and where intermediate products leave the
float range (as NumPy's own ``prod`` does by its pairwise grouping).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE, WGSL_TYPE, real_dtype
from ..core.ops import OPS as ELEMENTWISE
from ..core.ops import folded
from .wgsl import WORKGROUP, Rendered, _Gen, _suffix, fill
from .wgsl_cast import wrap_small
from .wgsl_lib import FLOAT_CONSTS, helpers_for
from .wgsl_parts import store_value

PER_THREAD = 8
BLOCK = WORKGROUP * PER_THREAD
MODES = ("single", "partial", "spine", "carry", "serial", "tile")
TILE = WORKGROUP * 8    # elements a ``tile`` pass folds at once


OPS = ("sum", "prod", "max", "min")

# extremes of the register types: the identities of max / min (narrow integers live in i32 / u32)
_LOWEST = {"i32": "bitcast<i32>(0x80000000u)", "i64": "bitcast<i64>(0x8000000000000000lu)",
           "u32": "0u", "u64": "0lu", "f32": "bitcast<f32>(0xff800000u)",
           "f64": "bitcast<f64>(0xfff0000000000000lu)"}
_HIGHEST = {"i32": "bitcast<i32>(0x7fffffffu)", "i64": "bitcast<i64>(0x7ffffffffffffffflu)",
            "u32": "0xffffffffu", "u64": "0xfffffffffffffffflu", "f32": "bitcast<f32>(0x7f800000u)",
            "f64": "bitcast<f64>(0x7ff0000000000000lu)"}


def identity(op: str, dtype: np.dtype) -> str:
    """WGSL expression of the identity of ``op`` (-0.0 for a float sum: ``-0.0 + x == x`` for every x;
    -inf / +inf or the type's extremes for max / min).

    >>> identity("max", np.dtype("int8"))
    'bitcast<i32>(0x80000000u)'
    """
    assert op in OPS, op
    if dtype == np.bool_:
        return "0u" if op in ("sum", "max") else "1u"
    t = WGSL_TYPE[dtype]
    if dtype.kind == "c":               # sums and products only: -0.0 in both parts, or 1 + 0i
        assert op in ("sum", "prod"), f"no complex {op} scan"
        ft = WGSL_TYPE[real_dtype(dtype)]
        if op == "prod":
            return f"{t}({ft}(1), {ft}(0))"
        neg0 = f"bitcast<{ft}>({FLOAT_CONSTS[ft]['SIGN']})"
        return f"{t}({neg0}, {neg0})"
    if op in ("max", "min"):
        return (_LOWEST if op == "max" else _HIGHEST)[t]
    if op == "prod":
        return f"{t}(1)"
    if dtype.kind == "f":
        return f"bitcast<{t}>({FLOAT_CONSTS[t]['SIGN']})"
    return f"{t}(0)"


def initial(op: str, dtype: np.dtype) -> str:
    """The value ``include_initial`` writes first: +0 for a sum (as NumPy), 1 for a product."""
    assert op in ("sum", "prod"), f"include_initial has no value for {op}"
    if dtype == np.bool_:
        return "0u" if op == "sum" else "1u"
    if dtype.kind == "c":
        ft = WGSL_TYPE[real_dtype(dtype)]
        return f"{WGSL_TYPE[dtype]}({ft}({0 if op == 'sum' else 1}), {ft}(0))"
    return f"{WGSL_TYPE[dtype]}({0 if op == 'sum' else 1})"


def combine(op: str, dtype: np.dtype, a: str, b: str) -> str:
    """``a (op) b`` on the plain value type (bools as u32 0/1; narrow integers wrapped), ``a`` the
    earlier part. Float max / min keep the first NaN and, on ties (``-0.0`` and ``0.0``), take ``b``:
    NumPy's ``maximum.accumulate`` gives ``[0.0, -0.0]`` for ``[0.0, -0.0]``. Both rules are
    associative (the result is the first NaN, else the last extreme), so any grouping agrees;
    values are compared by integer keys (``ga_key``), which no subnormal flushing changes."""
    if op in ("max", "min"):
        if dtype.kind != "f":
            return f"{op}({a}, {b})"
        s, cmp = _suffix(dtype), (">=" if op == "max" else "<=")
        return (f"select({a}, {b}, !ga_isnan_{s}({a}) && (ga_isnan_{s}({b}) || "
                f"ga_key_{s}({b}) {cmp} ga_key_{s}({a})))")
    if dtype == np.bool_:
        return f"{'max' if op == 'sum' else 'min'}({a}, {b})"
    if dtype.kind == "c" and op == "prod":      # NumPy's complex product, (ac - bd) + (ad + bc)i
        return f"ga_cmul_{_suffix(dtype)}({a}, {b})"
    expr = f"({a} {'+' if op == 'sum' else '*'} {b})"
    return wrap_small(dtype, expr)


def fold_combine(op: str, dtype: np.dtype, a: str, b: str) -> str:
    """``f(a, b)`` of a fold (op ``fold_<name>``, ``f`` the elementwise op ``name``) in ``dtype``, as the
    elementwise kernels compute it (the op's template; narrow integers wrapped after the step).

    >>> fold_combine("fold_subtract", np.dtype("int8"), "acc", "x")
    '(((acc - x)) << 24u) >> 24u'
    """
    expr = fill(ELEMENTWISE[str(folded(op))].template(dtype.kind), dtype, [a, b])
    return wrap_small(dtype, expr)


def is_pair(op: str, dtype: np.dtype) -> bool:
    """True where the scan state is a (product, flags) pair: float products."""
    return op == "prod" and dtype.kind == "f"


def is_cpair(op: str, dtype: np.dtype) -> bool:
    """True where the scan state is a (complex product, whether it holds a value) pair."""
    return op == "prod" and dtype.kind == "c"


def state_nbytes(op: str, dtype: np.dtype) -> int:
    """Bytes of one scan state in a storage buffer (chunk totals)."""
    if is_pair(op, dtype):
        return 16 if dtype.itemsize == 8 else 8       # struct {value, u32}, aligned to the value
    if is_cpair(op, dtype):
        return 32 if dtype.itemsize == 16 else 16     # struct {vec2 value, u32}, aligned to the vec2
    return 4 if dtype.itemsize < 4 else dtype.itemsize


@dataclass
class _Monoid:
    """How a scan combines: the state type, its identity, and the step into and out of it."""

    t: str                      # WGSL type of the state
    ident: str
    decls: str                  # WGSL declarations the expressions below need
    comb: str                   # template over {a} and {b}
    lift: str                   # template over {x}: an element -> a state
    out: str                    # template over {x}: a state -> the stored value

    def c(self, a: str, b: str) -> str:
        return self.comb.replace("{a}", a).replace("{b}", b)


def monoid(op: str, dtype: np.dtype) -> _Monoid:
    if is_cpair(op, dtype):
        # the identity is a state without a value, so that no element is multiplied by 1 + 0i (which
        # would turn an infinite or NaN part's partner into NaN, and -0.0 into 0.0)
        t, s = WGSL_TYPE[dtype], _suffix(dtype)
        decls = "\n".join([
            f"struct CP {{ v: {t}, f: u32 }}",
            "fn cp_comb(a: CP, b: CP) -> CP {",
            "  if (a.f == 0u) { return b; }",
            "  if (b.f == 0u) { return a; }",
            f"  return CP(ga_cmul_{s}(a.v, b.v), 1u);",
            "}",
        ])
        return _Monoid("CP", f"CP({t}(0), 0u)", decls, "cp_comb({a}, {b})", "CP({x}, 1u)", "{x}.v")
    if not is_pair(op, dtype):
        t = "u32" if dtype == np.bool_ else WGSL_TYPE[dtype]
        return _Monoid(t, identity(op, dtype), "", combine(op, dtype, "{a}", "{b}"), "{x}", "{x}")
    ft, s = WGSL_TYPE[dtype], _suffix(dtype)
    k = FLOAT_CONSTS[ft]
    decls = "\n".join([
        f"struct SP {{ v: {ft}, f: u32 }}",
        "// flags: 1 a zero was met, 2 an inf, 4 a NaN, 8 the parity of the signs",
        f"fn sp_lift(x: {ft}) -> SP {{",
        f"  var f = select(0u, 8u, ga_signbit_{s}(x));",
        f"  if (x == {ft}(0)) {{ f = f | 1u; }}",
        f"  if (ga_isinf_{s}(x)) {{ f = f | 2u; }}",
        f"  if (ga_isnan_{s}(x)) {{ f = f | 4u; }}",
        "  return SP(x, f);",
        "}",
        "fn sp_comb(a: SP, b: SP) -> SP { return SP(a.v * b.v, ((a.f | b.f) & 7u) | ((a.f ^ b.f) & 8u)); }",
        f"fn sp_out(p: SP) -> {ft} {{",
        f"  let sign = select({k['U']}(0), {k['SIGN']}, (p.f & 8u) != 0u);",
        f"  if ((p.f & 4u) != 0u || (p.f & 3u) == 3u) {{ return ga_nan_{s}(); }}",
        f"  if ((p.f & 1u) != 0u) {{ return bitcast<{ft}>(sign); }}",
        f"  if ((p.f & 2u) != 0u) {{ return bitcast<{ft}>(sign | {k['INFB']}); }}",
        "  return p.v;",
        "}",
    ])
    return _Monoid("SP", f"SP({ft}(1), 0u)", decls, "sp_comb({a}, {b})", "sp_lift({x})", "sp_out({x})")


def render_scan(kernel: Kernel) -> Rendered:
    """WGSL for a ``scan`` kernel; ``prm`` extras: G, RG (rows x G), L (axis length),
    CH (chunk length), INNER (elements after the axis), LI (output axis length x INNER);
    ``serial``: RG (rows), START, STOP, INNER, LI."""
    op, axis, init = kernel.attrs[:3]
    mode = kernel.attrs[3] if len(kernel.attrs) > 3 else "single"
    assert mode in MODES, mode
    dt = kernel.out_nodes[0].dtype
    g = _Gen(kernel)
    if mode == "serial":
        return _render_serial(kernel, g, op, axis, init)
    if mode == "tile":
        return _render_tile(kernel, g, op, axis)
    mo = monoid(op, dt)
    t = mo.t
    head = ["  let w = wid.y * nwg.x + wid.x;",
            f"  if (w >= {g.slot(('extra', 'RG'))}) {{ return; }}",
            f"  let G = {g.slot(('extra', 'G'))};",
            "  let r = w / G;",
            "  let c = w % G;",
            f"  let L = {g.slot(('extra', 'L'))};",
            f"  let CH = {g.slot(('extra', 'CH'))};",
            f"  let INNER = {g.slot(('extra', 'INNER'))};",
            "  let start = min(c * CH, L);",
            "  let stop = min(start + CH, L);",
            f"  let obase = (r / INNER) * {g.slot(('extra', 'LI'))} + r % INNER;"]
    st = t if mo.t in ("SP", "CP") else WGSL_STORAGE_TYPE[dt]
    decls = ["@group(0) @binding(0) var<storage, read> prm: array<u32>;"]
    if mode == "spine":
        read = ["        x = in0[r * L + k];"]
        decls.append(f"@group(0) @binding(1) var<storage, read> in0: array<{st}>;")
        decls.append(f"@group(0) @binding(2) var<storage, read_write> out0: array<{st}>;")
        store = "{x}"
    else:
        val = _row_index(g, kernel.operands[0], axis, head)
        read = ["        " + ln.strip() for ln in g.lines] + [f"        x = {mo.lift.replace('{x}', val)};"]
        decls += _decls(kernel, g, st if mode == "partial" else WGSL_STORAGE_TYPE[dt],
                        st if mode == "carry" else None)
        store = mo.out
    decls.append(f"var<workgroup> sh: array<{t}, {WORKGROUP if mode == 'partial' else 2 * WORKGROUP}>;")
    load = [
        f"    for (var j = 0u; j < {PER_THREAD}u; j = j + 1u) {{",
        f"      let k = base + lid * {PER_THREAD}u + j;",
        f"      var x: {t} = {mo.ident};",
        "      if (k < stop) {",
        *read,
        "      }",
        f"      tot = {mo.c('tot', 'x')};",
    ]
    if mode == "partial":
        # the chunk's total: each thread folds its elements of every block, then a shared-memory tree
        body = [
            f"  var tot: {t} = {mo.ident};",
            "  var base = start;",
            "  loop {",
            "    if (base >= stop) { break; }",
            *load,
            "    }",
            f"    base = base + {BLOCK}u;",
            "  }",
            "  sh[lid] = tot;",
            "  workgroupBarrier();",
            f"  for (var s = {WORKGROUP // 2}u; s > 0u; s = s >> 1u) {{",
            f"    if (lid < s) {{ sh[lid] = {mo.c('sh[lid]', 'sh[lid + s]')}; }}",
            "    workgroupBarrier();",
            "  }",
            "  if (lid == 0u) { out0[w] = sh[0]; }",
        ]
        return _finish(g, decls, mo.decls, head + body)
    body = [f"  var carry: {t} = {mo.ident};"]
    if mode == "carry":
        body.append("  if (c > 0u) { carry = carries[r * G + c - 1u]; }")
    if init and mode != "spine":
        body.append(f"  if (c == 0u && lid == 0u) {{ out0[obase] = {initial(op, dt)}; }}")
    # per block: each thread scans its PER_THREAD elements in registers, the workgroup scans the
    # thread totals (Hillis-Steele, ping-pong halves of ``sh``: one barrier per step), and each
    # thread adds the running total and the totals of the threads before it
    one = int(bool(init)) if mode != "spine" else 0
    body += [
        "  var base = start;",
        "  loop {",
        "    if (base >= stop) { break; }",
        f"    var loc: array<{t}, {PER_THREAD}>;",
        f"    var tot: {t} = {mo.ident};",
        *load,
        "      loc[j] = tot;",
        "    }",
        "    sh[lid] = tot;",
        "    workgroupBarrier();",
        "    var src = 0u;",
        f"    for (var off = 1u; off < {WORKGROUP}u; off = off << 1u) {{",
        "      var s = sh[src + lid];",
        f"      if (lid >= off) {{ s = {mo.c('sh[src + lid - off]', 's')}; }}",
        f"      src = src ^ {WORKGROUP}u;",
        "      sh[src + lid] = s;",
        "      workgroupBarrier();",
        "    }",
        "    var pre = carry;",
        f"    if (lid > 0u) {{ pre = {mo.c('carry', 'sh[src + lid - 1u]')}; }}",
        f"    for (var j = 0u; j < {PER_THREAD}u; j = j + 1u) {{",
        f"      let k = base + lid * {PER_THREAD}u + j;",
        f"      if (k < stop) {{ out0[obase + (k + {one}u) * INNER] = "
        f"{store.replace('{x}', mo.c('pre', 'loc[j]'))}; }}",
        "    }",
        f"    carry = {mo.c('carry', f'sh[src + {WORKGROUP - 1}u]')};",
        "    workgroupBarrier();",
        f"    base = base + {BLOCK}u;",
        "  }",
    ]
    return _finish(g, decls, mo.decls, head + body)


def _row_index(g: _Gen, op_i: int, axis: int, head: list[str]) -> str:
    """Append the row's kept coordinates (from ``r``) to ``head``; the prologue value at axis index ``k``."""
    src = g.ins[op_i]
    rep = g.rep[op_i]
    nd = len(src.shape)
    idx: list[str] = [""] * nd
    rem = "r"
    for d in reversed(range(nd)):
        if d == axis:
            continue
        dim = g.slot(("dim", rep, d))
        head.append(f"  let o{d} = {rem} % {dim};")
        head.append(f"  let oq{d} = {rem} / {dim};")
        idx[d], rem = f"o{d}", f"oq{d}"
    idx[axis] = "k"
    g.lines = []
    v = g.value(op_i, ("multi", tuple(idx)))
    return store_value(src.dtype, v)


def _decls(kernel: Kernel, g: _Gen, out_type: str, carry_type: str | None) -> list[str]:
    """Bindings after ``prm``: the inputs, ``out0``, ``carries`` (if any), the 64-bit constants."""
    decls = []
    b = 1
    for k, node in enumerate(kernel.inputs):
        decls.append(f"@group(0) @binding({b}) var<storage, read> in{k}: array<{WGSL_STORAGE_TYPE[node.dtype]}>;")
        b += 1
    decls.append(f"@group(0) @binding({b}) var<storage, read_write> out0: array<{out_type}>;")
    b += 1
    if carry_type is not None:
        decls.append(f"@group(0) @binding({b}) var<storage, read> carries: array<{carry_type}>;")
        b += 1
    for st in sorted(g.wide):
        decls.append(f"@group(0) @binding({b}) var<storage, read> c{st}: array<{st}>;")
        b += 1
    return decls


def _finish(g: _Gen, decls: list[str], extra: str, body: list[str]) -> Rendered:
    main = "\n".join([
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        *body,
        "}",
    ])
    code = (extra + "\n\n" if extra else "") + main
    source = "\n".join(decls) + "\n\n" + helpers_for(code) + "\n\n" + code + "\n"
    return Rendered(source, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(g.k.inputs), 1)


def _render_serial(kernel: Kernel, g: _Gen, op: str, axis: int, init: bool) -> Rendered:
    """One thread per row (rows ``RG``), scanning axis positions [START, STOP) in order, starting
    from the value at START - 1 that an earlier dispatch wrote. The provider splits long rows into
    such segments: lavapipe (gallivm) silently ends every loop of an invocation once 65535 loop
    iterations have run in it, counted over all its loops together."""
    dt = kernel.out_nodes[0].dtype
    head = [f"  let r = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
            f"  if (r >= {g.slot(('extra', 'RG'))}) {{ return; }}",
            f"  let START = {g.slot(('extra', 'START'))};",
            f"  let STOP = {g.slot(('extra', 'STOP'))};",
            f"  let INNER = {g.slot(('extra', 'INNER'))};",
            f"  let obase = (r / INNER) * {g.slot(('extra', 'LI'))} + r % INNER;"]
    val = _row_index(g, kernel.operands[0], axis, head)
    one = int(bool(init))
    t = "u32" if dt == np.bool_ else WGSL_TYPE[dt]
    fold = folded(op) is not None
    body = [f"  var acc: {t} = {f'{t}()' if fold else identity(op, dt)};"]
    if init:
        body.append(f"  if (START == 0u) {{ out0[obase] = {initial(op, dt)}; }}")
    if fold or is_cpair(op, dt):        # the first element as it is, then f(previous, element)
        nxt = (fold_combine if fold else combine)(op, dt, "acc", val)
        step = f"    if (k == 0u) {{ acc = {val}; }} else {{ acc = {nxt}; }}"
    else:
        step = f"    acc = {combine(op, dt, 'acc', val)};"
    body += [
        f"  if (START > 0u) {{ acc = out0[obase + (START - 1u + {one}u) * INNER]; }}",
        "  for (var k = START; k < STOP; k = k + 1u) {",
        *["  " + ln for ln in g.lines],
        step,
        f"    out0[obase + (k + {one}u) * INNER] = acc;",
        "  }",
    ]
    return _finish(g, ["@group(0) @binding(0) var<storage, read> prm: array<u32>;",
                       *_decls(kernel, g, WGSL_STORAGE_TYPE[dt], None)], "", head + body)


def _render_tile(kernel: Kernel, g: _Gen, op: str, axis: int) -> Rendered:
    """A fold of contiguous rows (``INNER`` 1), a workgroup per row (rows ``RG``): positions [START, STOP)
    in passes of ``TILE``. The workgroup evaluates a pass's elements into workgroup memory (coalesced
    reads, the fused prologue once an element), one thread folds them in order there, and the
    workgroup stores them (coalesced). The serial mode's thread per row would read each row on its own,
    one element after another. ``prm`` extras: RG, START, STOP, LI (the output's row length)."""
    dt = kernel.out_nodes[0].dtype
    t = "u32" if dt == np.bool_ else WGSL_TYPE[dt]
    head = ["  let r = wid.y * nwg.x + wid.x;",
            f"  if (r >= {g.slot(('extra', 'RG'))}) {{ return; }}",
            f"  let START = {g.slot(('extra', 'START'))};",
            f"  let STOP = {g.slot(('extra', 'STOP'))};",
            f"  let obase = r * {g.slot(('extra', 'LI'))};"]
    val = _row_index(g, kernel.operands[0], axis, head)
    body = [
        f"  var acc: {t} = {t}();",
        "  if (START > 0u) { acc = out0[obase + START - 1u]; }",
        f"  for (var p = START; p < STOP; p = p + {TILE}u) {{",
        f"    let n = min({TILE}u, STOP - p);",
        f"    for (var j = lid; j < n; j = j + {WORKGROUP}u) {{",
        "      let k = p + j;",
        *["    " + ln for ln in g.lines],
        f"      tile[j] = {val};",
        "    }",
        "    workgroupBarrier();",
        "    if (lid == 0u) {",
        "      for (var j = 0u; j < n; j = j + 1u) {",
        f"        if (p + j == 0u) {{ acc = tile[j]; }} else {{ acc = {fold_combine(op, dt, 'acc', 'tile[j]')}; }}",
        "        tile[j] = acc;",
        "      }",
        "    }",
        "    workgroupBarrier();",
        f"    for (var j = lid; j < n; j = j + {WORKGROUP}u) {{ out0[obase + p + j] = tile[j]; }}",
        "    workgroupBarrier();",
        "  }",
    ]
    return _finish(g, ["@group(0) @binding(0) var<storage, read> prm: array<u32>;",
                       *_decls(kernel, g, WGSL_STORAGE_TYPE[dt], None),
                       f"var<workgroup> tile: array<{t}, {TILE}>;"], "", head + body)
