"""Render a ``rowfuse`` kernel (``compiler/rowfuse.py``): one workgroup per row of the output, or
``256 / G`` rows of ``G`` threads a workgroup (the cached variant, ``_cached_body``), or, for rows of a
few elements, one thread per row (``_thread_body``).

For each ``rowreduce`` instruction in order, the workgroup's threads walk the row (thread
``lid`` takes elements ``lid``, ``lid + 256``, ..., ``UNROLL`` of them per trip so that their
loads are in flight together), evaluate the reduction's operand through the fused cone at each
element, combine their partial results (subgroup shuffles where the adapter has them, else a
shared-memory tree), and every thread keeps the row's result in a register (``rv<j>``); later
instructions that read the reduction use that register at any element of the row. Then the
threads walk the row once more and store the outputs (outputs of one value per row: the row's
first thread stores them). A sum of squared deviations from a value that an earlier reduction gives
(``colfuse.moments``: ``var`` about the mean) is computed in that reduction's walk instead of a walk
of its own (``render/wgsl_moments.py``; rows walked, not kept). The row index splits into the
leading coordinates of the row shape, so broadcast inputs and views are read by multi-index as in
any kernel. ``prm`` extras: ROWS (rows of the output).

>>> import numpy as np, gpuarray as xp
>>> from gpuarray.compiler.schedule import schedule
>>> x = xp.asarray(np.ones((4, 8), np.float32), device="wgpu:0")
>>> e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
>>> [k.kind for k in schedule([(e / xp.sum(e, axis=-1, keepdims=True))._node])]
['rowfuse']
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ..compiler.colfuse import moments, reads_of
from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE
from .wgsl import WORKGROUP, Rendered, _Gen
from .wgsl_colfuse import render_colfuse
from .wgsl_lib import helpers_for
from .wgsl_moments import tree_combine, welford
from .wgsl_parts import declare_bindings, input_types, split_index, store_value
from .wgsl_reduce import KEYED_IDENTITY, SUBGROUP_TYPES, acc_type, combine, compute_main, identity

UNROLL = 4      # row elements per thread and trip of a walk
THREAD = -1     # the variant with a thread per row (short rows: ``_thread_body``)


def render_fused(kernel: Kernel) -> Rendered:
    """A ``rowfuse`` kernel's shader as the wgpu provider first renders it: over rows (without
    subgroups, each row walked per reduction), or over columns (``render/wgsl_colfuse.py``)."""
    return render_colfuse(kernel) if kernel.attrs else render_rowfuse(kernel)


class _Acc:
    """How reduction ``j`` accumulates: float32 max/min as integer order keys (``ga_rmaxkey`` /
    ``ga_rminkey``: NaN at the winning end, -0 below +0, subnormals ordered whatever the driver
    flushes; one key per element and an integer max/min, as ``wgsl_reduce``'s keyed accumulators,
    where the NaN-propagating float combine keys both operands at every step: on the H200 a row
    max over 4096 x 8192 took 0.083 ms that way, 0.071 with a cheap combine), else the dtype's
    combine."""

    def __init__(self, rop: str, dt: np.dtype, j: int) -> None:
        self.rop, self.dt, self.j = rop, dt, j
        self.keyed = dt == np.float32 and rop in ("max", "min")
        self.cdt = np.dtype(np.int32) if self.keyed else dt          # the accumulator's dtype
        self.t = acc_type(self.cdt)
        self.ident = KEYED_IDENTITY[rop] if self.keyed else identity(rop, dt)

    def step(self, v: str) -> str:
        a = f"acc{self.j}"
        if self.keyed:
            return f"{a} = {self.rop}({a}, ga_r{self.rop}key_f32({v}));"
        return f"{a} = {combine(self.rop, self.dt, a, v)};"

    def named(self) -> tuple[list[str], str]:
        """(lines after the combine, the name later instructions read the row's result by)."""
        j = self.j
        if self.keyed:
            return [f"  let rvf{j} = ga_unkey_f32(rv{j});"], f"rvf{j}"
        return [], f"(rv{j} != 0u)" if self.dt.kind == "b" else f"rv{j}"


def _row_combine(rop: str, dt: np.dtype, j: int, sg: bool, wg: int = WORKGROUP) -> list[str]:
    """Combine every thread's ``acc<j>`` into ``rv<j>`` in every thread: by subgroup shuffles, one
    barrier and a walk over the subgroups' results (``sg``), else by a shared-memory tree."""
    if sg:
        return ["  var so = sgs >> 1u;", "  loop {", "    if (so == 0u) { break; }",
                f"    acc{j} = {combine(rop, dt, f'acc{j}', f'subgroupShuffleXor(acc{j}, so)')};",
                "    so = so >> 1u;", "  }",
                f"  if (sgi == 0u) {{ sh{j}[sgid] = acc{j}; }}", "  workgroupBarrier();",
                f"  rv{j} = sh{j}[0];",
                "  for (var q = 1u; q < nsg; q = q + 1u) {",
                f"    rv{j} = {combine(rop, dt, f'rv{j}', f'sh{j}[q]')};", "  }"]
    return [f"  sh{j}[lid] = acc{j};", "  workgroupBarrier();",
            f"  var s = {wg // 2}u;", "  loop {", "    if (s == 0u) { break; }",
            f"    if (lid < s) {{ sh{j}[lid] = {combine(rop, dt, f'sh{j}[lid]', f'sh{j}[lid + s]')}; }}",
            "    workgroupBarrier();", "    s = s >> 1u;", "  }", f"  rv{j} = sh{j}[0];"]


def render_rowfuse(kernel: Kernel, variant: bool | tuple[bool, int] | tuple[bool, int, int] = False) -> Rendered:
    """WGSL for a ``rowfuse`` kernel (``prm`` extra ROWS). ``variant`` is ``sg``, ``(sg, K)`` or
    ``(sg, K, G[, exact])``: with ``sg`` each reduction is combined with subgroup operations; with ``K`` > 0
    each thread keeps ``K`` elements of its row in registers (``_cached_body``), so the row is read
    from memory once; ``G`` threads share a row (a power of two from 32: ``256 / G`` rows a
    workgroup of 256 up to 256, else a workgroup of ``G`` threads a row; default 256). ``exact``
    1: rows of exactly ``K G`` elements (no element tests); 2: besides, float32 inputs and outputs of
    the row's shape read and written as ``vec4`` words where a workgroup takes a row (``_vec4``)."""
    sg, cached, grp, exact = False, 0, WORKGROUP, 0
    if isinstance(variant, tuple):
        sg, cached = variant[0], variant[1]
        grp = variant[2] if len(variant) > 2 else WORKGROUP
        exact = int(variant[3]) if len(variant) > 3 else 0
    else:
        sg = variant
    g = _Gen(kernel)
    src = kernel.instrs[kernel.operands[0]].args[0]      # an operand of the row shape S
    shape = kernel.instrs[src].shape
    nd = len(shape)
    rep = g.rep[src]
    rows = g.slot(('extra', 'ROWS'))
    if grp < WORKGROUP:         # rows share a workgroup: no early return before the barriers
        body = [f"  let row_raw = (wid.y * nwg.x + wid.x) * {WORKGROUP // grp}u + lid / {grp}u;",
                f"  let live = row_raw < {rows};", f"  let row = min(row_raw, {rows} - 1u);"]
    else:
        first = f"(wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid" if cached == THREAD else "wid.y * nwg.x + wid.x"
        body = [f"  let row = {first};", f"  if (row >= {rows}) {{ return; }}"]
    body.append(f"  let L = {g.slot(('dim', rep, nd - 1))};")
    coords = _row_coords(g, rep, nd, body)
    at = ("multi", (*coords, "c"))
    decls: list[str] = []
    if cached == THREAD:
        return _finish(kernel, g, False, _thread_body(kernel, g, body, coords, shape), [])
    if cached:
        if exact == 2 and grp >= WORKGROUP and cached % 4 == 0:
            r = _vec4(kernel, sg, cached, grp)
            if r is not None:
                return r
        return _finish(kernel, g, sg, *_cached_body(kernel, g, sg, cached, body, coords, shape, grp, bool(exact)),
                       wg=max(grp, WORKGROUP))

    def walk(inner: list[str], more: tuple[Sequence[str], Sequence[str]] = ((), ()),
             last: Sequence[str] = ()) -> list[str]:
        # UNROLL elements per thread and trip, so that their loads are in flight together; ``more`` =
        # (lines per element, lines after the elements) of full trips, ``last`` per element of the last
        # (``{u}``: the element of the trip)
        span = WORKGROUP * UNROLL
        full: list[str] = []
        tail: list[str] = []
        for u in range(UNROLL):
            sub = [ln.replace("{u}", str(u)) for ln in [*inner, *more[0]]]
            full += ["    {", f"    let c = cb + {u * WORKGROUP}u;", *sub, "    }"]
            sub = [ln.replace("{u}", str(u)) for ln in [*inner, *last]]
            tail += ["    {", f"    let c = cb + {u * WORKGROUP}u;", "    if (c < L) {", *sub, "    }", "    }"]
        return ["  var cb = lid;", "  loop {", "    if (cb >= L) { break; }",
                f"    if (cb + {span - WORKGROUP}u < L) {{", *full, *more[1], "    } else {", *tail, "    }",
                f"    cb = cb + {span}u;", "  }"]

    merged = moments(kernel)            # sums of squared deviations: in the walk their value is known after
    reads = reads_of(kernel)
    host = {i: max(reads[m]) for i, (_, m) in merged.items()}
    for j, q in enumerate(kernel.operands):
        if j in merged:
            continue
        ins = kernel.instrs[q]
        ac = _Acc(ins.params[0], ins.dtype, j)
        moms = [i for i in merged if host[i] == j]
        mom: tuple[list[str], list[str], list[str], list[str]] = ([], [], [], [])   # head, per element, after, last
        if moms:            # each moment's shift: its value at the row's first element
            g.memo, g.lines = {}, []
            shift = {i: g.value(merged[i][0], ("multi", (*coords, "0u"))) for i in moms}
            mom[0].extend(["  {", "  let c = 0u;", *g.lines])
            mom[0].extend(f"  cw_k{i} = {shift[i]};" for i in moms)
            mom[0].append("  }")
        g.memo, g.lines = {}, []
        v = g.value(ins.args[0], at)
        if ins.dtype.kind == "b":
            v = f"select(0u, 1u, {v})"
        mvals = {i: f"({g.value(merged[i][0], at)} - cw_k{i})" for i in moms}
        inner = ["    " + ln.strip() for ln in g.lines] + [f"    {ac.step(v)}"]
        tails: list[str] = []
        for i in moms:
            t = acc_type(kernel.instrs[kernel.operands[i]].dtype)
            h, (per, aft), last, tl, decl = welford(i, t, kernel.instrs[kernel.operands[i]].dtype, mvals[i], UNROLL)
            mom[0][:0] = [*h, f"  var cw_k{i}: {t};"]
            mom[1].extend(per)
            mom[2].extend(aft)
            mom[3].extend(last)
            tails += tl + tree_combine(i, kernel.instrs[kernel.operands[i]].dtype)
            decls += decl
        decls.append(f"var<workgroup> sh{j}: array<{ac.t}, {WORKGROUP}>;")
        after, g.named[q] = ac.named()
        body += [*mom[0], f"  var rv{j}: {ac.t};", "  {", f"  var acc{j}: {ac.t} = {ac.ident};",
                 *walk(inner, (mom[1], mom[2]), mom[3]),
                 *_row_combine(ac.rop, ac.cdt, j, sg and ac.t in SUBGROUP_TYPES), "  }", *after, *tails]
        for i in moms:      # sum((a - m)**2) = M2 + n (mean - (m - k))**2
            m = merged[i][1]
            g.memo, g.lines = {}, []
            pat = ("multi", (*coords, "0u")) if len(kernel.instrs[m].shape) == nd else ("multi", tuple(coords))
            mv = g.value(m, pat)
            d = f"(cw_m{i} - ({mv} - cw_k{i}))"
            body += [*g.lines, f"  rv{i} = cw_q{i} + cw_n{i} * ({d} * {d});"]
            g.named[kernel.operands[i]] = f"rv{i}"
    g.memo, g.lines = {}, []
    per_row = kernel.out_shape != shape          # one value per row (logsumexp)
    if per_row:
        at = ("multi", (*coords, "0u")) if len(kernel.out_shape) == nd else ("multi", tuple(coords))
    vals = [g.value(o, at) for o in kernel.outputs]
    where = "row" if per_row else "row * L + c"
    stores = [f"    out{k}[{where}] = {store_value(kernel.instrs[o].dtype, v)};"
              for k, (o, v) in enumerate(zip(kernel.outputs, vals, strict=True))]
    lines = ["    " + ln.strip() for ln in g.lines] + stores
    body += ["  if (lid == 0u) {", *lines, "  }"] if per_row else walk(lines)
    return _finish(kernel, g, sg, body, decls)


def _group_combine(rop: str, dt: np.dtype, j: int, sg: bool, grp: int) -> list[str]:
    """Combine ``acc<j>`` over the ``grp`` threads of a row (``grp < 256``, aligned groups of the
    workgroup) into ``rv<j>`` in each of them: with subgroups, a butterfly of shuffles inside each
    subgroup (a group of at most a subgroup's lanes ends there), then one barrier and the group's
    subgroup results from workgroup memory where a group spans several subgroups; without, a
    shared-memory tree over the group's ``grp`` slots."""
    if sg:
        return [f"  var so = min({grp}u, sgs) >> 1u;", "  loop {", "    if (so == 0u) { break; }",
                f"    acc{j} = {combine(rop, dt, f'acc{j}', f'subgroupShuffleXor(acc{j}, so)')};",
                "    so = so >> 1u;", "  }",
                f"  if (sgi == 0u) {{ sh{j}[sgid] = acc{j}; }}", "  workgroupBarrier();",
                f"  rv{j} = acc{j};",
                f"  if (sgs < {grp}u) {{",
                f"    let per = {grp}u / sgs;", "    let f = (lid / " + f"{grp}u) * per;",
                f"    rv{j} = sh{j}[f];",
                "    for (var q = 1u; q < per; q = q + 1u) {",
                f"      rv{j} = {combine(rop, dt, f'rv{j}', f'sh{j}[f + q]')};", "    }", "  }"]
    return [f"  sh{j}[lid] = acc{j};", "  workgroupBarrier();",
            f"  var s = {grp // 2}u;", "  loop {", "    if (s == 0u) { break; }",
            f"    if (lid % {grp}u < s) {{ sh{j}[lid] = {combine(rop, dt, f'sh{j}[lid]', f'sh{j}[lid + s]')}; }}",
            "    workgroupBarrier();", "    s = s >> 1u;", "  }", f"  rv{j} = sh{j}[lid - lid % {grp}u];"]


def _row_coords(g: _Gen, rep: int, nd: int, body: list[str]) -> list[str]:
    """The row index ``row`` split into the leading coordinates of the row shape (lines added to
    ``body``): the names of coordinates ``0 .. nd - 2``."""
    lines, coords = split_index(g, rep, 0, nd - 1, "row", "r", "rq")
    body += ["  " + ln for ln in lines]
    return coords


def _cached_body(kernel: Kernel, g: _Gen, sg: bool, k_max: int, body: list[str], coords: list[str],
                 shape: tuple[int, ...], grp: int = WORKGROUP, exact: bool = False,
                 vec: list[tuple[int, int]] | None = None, vec_out: bool = False,
                 bvec: list[tuple[int, int, int]] | None = None) -> tuple[list[str], list[str]]:
    """The body of the cached variant: thread ``lid`` owns elements ``ck_<k> = lid % G + G k``, k < ``k_max``,
    of row ``row`` (``G`` = ``grp`` threads a row; a name no generated value takes: ``c<n>`` are the generator's),
    straight-line code in one scope, so that a value computed for element ``k`` by one walk (a load,
    ``exp(x - max)``) is a name the later walks and the stores use again (``g.memo`` is kept); only
    the accumulations and stores test ``ck_<k> < L``, and with ``exact`` (rows of ``k_max * G``
    elements, the provider knows) none do. (Out-of-range loads read whatever the robust buffer
    access gives, and are never used.)"""
    whole = grp >= WORKGROUP           # a workgroup of grp threads a row
    lane = "lid" if whole else f"(lid % {grp}u)"
    live = "" if whole else "live && "
    if vec is not None:     # element 4 m + c of a thread: word m's lane c (4 neighbouring elements)
        body = body + [f"  let ck_{k} = 4u * lid + {4 * grp * (k // 4) + k % 4}u;" for k in range(k_max)]
    else:
        body = body + [f"  let ck_{k} = {lane} + {k * grp}u;" for k in range(k_max)]
    decls: list[str] = []

    def at(k: int) -> tuple:
        return ("multi", (*coords, f"ck_{k}"))
    g.memo = {}
    for i, b in vec or ():          # the vec4 inputs' words, read once each: lanes are their values
        for m in range(k_max // 4):
            body.append(f"  let w{i}_{m} = in{b}[row * (L / 4u) + lid + {grp * m}u];")
            for c in range(4):
                g.memo[(i, at(4 * m + c))] = f"w{i}_{m}.{'xyzw'[c]}"
    pending: dict[str, str] = {}    # a broadcast input's words, declared where first read (lazy)
    for i, b, nd in bvec or ():     # a row-long input broadcast over the rows (a layernorm's weight): no row offset
        for m in range(k_max // 4):
            pending[f"w{i}_{m}"] = f"  let w{i}_{m} = in{b}[lid + {grp * m}u];"
            for c in range(4):
                ck = f"ck_{4 * m + c}"
                g.memo[(i, ("lin", ck) if nd == 1 else ("multi", ("0u",) * (nd - 1) + (ck,)))] = \
                    f"w{i}_{m}.{'xyzw'[c]}"

    def lazy(lines: list[str]) -> list[str]:
        """``lines`` after the declarations of the broadcast words they read that are not declared yet
        (loaded where first used, not all at the start: 32 more registers held through the reductions)."""
        if not pending:
            return lines
        text = "\n".join(lines)
        return [pending.pop(n) for n in [n for n in pending if re.search(rf"\b{n}\b", text)]] + lines
    for j, q in enumerate(kernel.operands):
        ins = kernel.instrs[q]
        ac = _Acc(ins.params[0], ins.dtype, j)
        body += [f"  var rv{j}: {ac.t};", f"  var acc{j}: {ac.t} = {ac.ident};"]
        for k in range(k_max):
            g.lines = []
            v = g.value(ins.args[0], at(k))
            if ins.dtype.kind == "b":
                v = f"select(0u, 1u, {v})"
            acc = ac.step(v)
            body += lazy(g.lines + [f"  {acc}" if exact else f"  if (ck_{k} < L) {{ {acc} }}"])
        decls.append(f"var<workgroup> sh{j}: array<{ac.t}, {max(grp, WORKGROUP)}>;")
        sgj = sg and ac.t in SUBGROUP_TYPES
        comb = (_row_combine(ac.rop, ac.cdt, j, sgj, grp) if whole else _group_combine(ac.rop, ac.cdt, j, sgj, grp))
        after, g.named[q] = ac.named()
        body += ["  {", *comb, "  }", *after]
    if kernel.out_shape != shape:               # one value per row (logsumexp): the row's first thread
        g.lines = []
        pat = ("multi", (*coords, "0u")) if len(kernel.out_shape) == len(shape) else ("multi", tuple(coords))
        vals = [g.value(o, pat) for o in kernel.outputs]
        stores = [f"    out{n}[row] = {store_value(kernel.instrs[o].dtype, v)};"
                  for n, (o, v) in enumerate(zip(kernel.outputs, vals, strict=True))]
        return body + [f"  if ({live}{lane} == 0u) {{", *lazy(g.lines + stores), "  }"], decls
    if vec_out:             # every output float32 of the row's shape: one vec4 word a store
        for m in range(k_max // 4):
            g.lines = []
            vals4 = [[g.value(o, at(4 * m + c)) for c in range(4)] for o in kernel.outputs]
            body += lazy(g.lines + [f"  out{n}[row * (L / 4u) + lid + {grp * m}u] = vec4<f32>({', '.join(v4)});"
                                    for n, v4 in enumerate(vals4)])
        return body, decls
    for k in range(k_max):
        g.lines = []
        vals = [g.value(o, at(k)) for o in kernel.outputs]
        cond = live[:-4] if exact else f"{live}ck_{k} < L"         # exact: every ck_k < L
        body += lazy(g.lines + [f"  if ({cond}) {{" if cond else "  {"]
                     + [f"    out{n}[row * L + ck_{k}] = {store_value(kernel.instrs[o].dtype, v)};"
                        for n, (o, v) in enumerate(zip(kernel.outputs, vals, strict=True))] + ["  }"])
    return body, decls


def _thread_body(kernel: Kernel, g: _Gen, body: list[str], coords: list[str],
                 shape: tuple[int, ...]) -> list[str]:
    """The body of the variant with a thread per row (rows of a few elements, where a workgroup per
    row would leave most of its threads idle): the thread walks its row once per reduction, in
    order, keeping each result in a register, then once more to store the outputs."""
    at = ("multi", (*coords, "c"))
    for j, q in enumerate(kernel.operands):
        ins = kernel.instrs[q]
        rop, dt = ins.params[0], ins.dtype
        g.memo, g.lines = {}, []
        v = g.value(ins.args[0], at)
        if dt.kind == "b":
            v = f"select(0u, 1u, {v})"
        body += [f"  var rv{j}: {acc_type(dt)} = {identity(rop, dt)};",
                 "  for (var c = 0u; c < L; c = c + 1u) {", *("    " + ln.strip() for ln in g.lines),
                 f"    rv{j} = {combine(rop, dt, f'rv{j}', v)};", "  }"]
        g.named[q] = f"(rv{j} != 0u)" if dt.kind == "b" else f"rv{j}"
    g.memo, g.lines = {}, []
    if kernel.out_shape != shape:               # one value per row (logsumexp)
        pat = ("multi", (*coords, "0u")) if len(kernel.out_shape) == len(shape) else ("multi", tuple(coords))
        vals = [g.value(o, pat) for o in kernel.outputs]
        return body + g.lines + [f"  out{n}[row] = {store_value(kernel.instrs[o].dtype, v)};"
                                 for n, (o, v) in enumerate(zip(kernel.outputs, vals, strict=True))]
    vals = [g.value(o, at) for o in kernel.outputs]
    return body + ["  for (var c = 0u; c < L; c = c + 1u) {", *("    " + ln.strip() for ln in g.lines),
                   *(f"    out{n}[row * L + c] = {store_value(kernel.instrs[o].dtype, v)};"
                     for n, (o, v) in enumerate(zip(kernel.outputs, vals, strict=True))), "  }"]


def _vec4(kernel: Kernel, sg: bool, k_max: int, grp: int) -> Rendered | None:
    """The cached variant with ``vec4`` words (a workgroup a row of exactly ``k_max grp`` elements,
    ``k_max`` a multiple of 4): thread ``t`` owns words ``t + grp m`` of its row, elements ``4 t +
    4 grp m + c``; float32 inputs of the row's shape that no view reads are bound as ``vec4`` arrays
    and read a word at a time, and so are float32 inputs of one row broadcast over the rows (a
    layernorm's weight and bias: H200, 4096 x 8192, 0.0788 -> 0.0765 ms in a hand-written probe);
    where every output is float32 of the row's shape they are stored a word at a time. None where
    nothing would be read or written so (or a vec4 binding would also be read element by element: then
    without the broadcast inputs)."""
    src = kernel.instrs[kernel.operands[0]].args[0]
    shape = kernel.instrs[src].shape
    f32 = np.dtype(np.float32)
    viewed = {a for ins in kernel.instrs if ins.op != "input" and ins.op in ("view", "reshape") for a in ins.args}
    vec = [(i, ins.params[0]) for i, ins in enumerate(kernel.instrs)
           if ins.op == "input" and ins.shape == shape and ins.dtype == f32 and i not in viewed]
    bvec = [(i, ins.params[0], len(ins.shape)) for i, ins in enumerate(kernel.instrs)
            if ins.op == "input" and ins.dtype == f32 and i not in viewed and len(ins.shape) <= len(shape)
            and ins.shape[-1:] == shape[-1:] and ins.shape != shape and all(d == 1 for d in ins.shape[:-1])]
    vec_out = kernel.out_shape == shape and all(kernel.instrs[o].dtype == f32 for o in kernel.outputs)
    if not vec and not vec_out and not bvec:
        return None
    r = _vec4_with(kernel, sg, k_max, grp, shape, vec, vec_out, bvec)
    if r is None and bvec:          # a broadcast input read some other way too: the others as vec4 still
        r = _vec4_with(kernel, sg, k_max, grp, shape, vec, vec_out, []) if vec or vec_out else None
    return r


def _vec4_with(kernel: Kernel, sg: bool, k_max: int, grp: int, shape: tuple[int, ...], vec: list[tuple[int, int]],
               vec_out: bool, bvec: list[tuple[int, int, int]]) -> Rendered | None:
    """``_vec4``'s shader with inputs ``vec`` (of the row's shape) and ``bvec`` (a row broadcast over the
    rows) bound as ``vec4`` arrays; None where one of them is also read element by element."""
    g = _Gen(kernel)
    nd = len(shape)
    rep = g.rep[kernel.instrs[kernel.operands[0]].args[0]]
    body = ["  let row = wid.y * nwg.x + wid.x;", f"  if (row >= {g.slot(('extra', 'ROWS'))}) {{ return; }}",
            f"  let L = {g.slot(('dim', rep, nd - 1))};"]
    coords = _row_coords(g, rep, nd, body)
    body, decls = _cached_body(kernel, g, sg, k_max, body, coords, shape, grp, True, vec, vec_out, bvec)
    text = "\n".join(body)
    words = [b for _i, b in vec] + [b for _i, b, _n in bvec]
    for b in set(words):
        if text.count(f"in{b}[") != k_max // 4 * words.count(b):
            return None             # read element by element too (another index): not as vec4
    types = input_types(kernel)
    for b in words:
        types[b] = "vec4<f32>"
    outs = ["vec4<f32>"] * len(kernel.outputs) if vec_out else None
    return _finish(kernel, g, sg, body, decls, wg=max(grp, WORKGROUP), in_types=types, out_types=outs)


def _finish(kernel: Kernel, g: _Gen, sg: bool, body: list[str], decls: list[str], wg: int = WORKGROUP,
            in_types: list[str] | None = None, out_types: list[str] | None = None) -> Rendered:
    if out_types is None:
        out_types = [WGSL_STORAGE_TYPE[kernel.instrs[o].dtype] for o in kernel.outputs]
    decls = declare_bindings(in_types or input_types(kernel), out_types, g.wide) + decls
    main = compute_main(sg, body, wg)
    source = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main + "\n"
    return Rendered(source, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs),
                    len(kernel.outputs))
