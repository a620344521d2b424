"""Scheduling: cut the unevaluated part of a graph into kernels.

Elementwise ops and views fuse: each group of targets with one shape becomes
ONE kernel that inlines the whole unevaluated cone below it (views included,
as index arithmetic). Other ops (reductions, ...) are cut points ("breakers"):
each gets a kernel of its own kind, which absorbs the fusable cone of its
operands as a prologue. A ``reduce`` or ``matmul`` breaker also absorbs, as
an *epilogue*, a group of elementwise targets that read its value only at
their own output index (``relu(a @ b + bias)``, the division of ``mean``):
the kernel evaluates them per output element before the store, and the
breaker's value is written too only when something else needs it.
Evaluated nodes and earlier breakers are read as kernel inputs. Walks are
iterative, so graph depth is never limited by Python's recursion limit.

>>> import numpy as np
>>> from gpuarray.graph import leaf, make
>>> a = leaf(np.arange(4.0), "cpu")
>>> b = make("exp", (make("negative", (a,), a.dtype, a.shape),), a.dtype, a.shape)
>>> [k.describe().splitlines()[0] for k in schedule([b])]
['kernel -> (4,) (1 output(s))']
"""

from __future__ import annotations

import math
import sys
from collections.abc import Collection, Sequence
from typing import Any

from ..core.ops import OPS
from ..graph.node import Node, post_order
from ..graph.shapes import contiguous_strides
from . import plan_cache
from .colfuse import col_kernel
from .kernel import FUSABLE_OPS, INDEX_OPS, Instr, Kernel
from .regions import region_chains, spans
from .rowfuse import row_kernel

EPILOGUE_KINDS = frozenset({"reduce", "matmul"})    # breakers whose renderers evaluate a fused epilogue


def is_breaker(node: Node) -> bool:
    """True for nodes that need a kernel of their own kind (reductions, scans, ...)."""
    return node.op not in FUSABLE_OPS and not node.realized


def _topo(targets: Sequence[Node], through_breakers: bool, stop: Collection[int] = ()) -> list[Node]:
    """Unrealized-cone nodes of ``targets`` in dependency order (iterative DFS).

    With ``through_breakers`` False, the walk stops at breaker nodes, targets
    included, which then appear as leaves (a breaker's operand that is itself a
    breaker is read as an input, not inlined), and at the nodes whose serials are
    in ``stop`` (computed by a kernel of their own: ``_reused_operands``).
    """
    if through_breakers:
        return post_order(targets, _unrealized)
    return post_order(targets, lambda n: not (n.realized or is_breaker(n) or n.serial in stop))


def _unrealized(n: Node) -> bool:
    return not n.realized


def build_kernel(targets: Sequence[Node], epilogue: Sequence[Node] = (), stop: Collection[int] = ()) -> Kernel:
    """One kernel computing every target from its fusable cone.

    Elementwise targets (all of one shape) give an ``elementwise`` kernel. A single
    breaker target gives a kernel of that kind whose ``operands`` are its inputs,
    computed inside the kernel from their fusable cones (a fused prologue).
    ``epilogue`` (with a breaker target): elementwise nodes of one shape, evaluated per
    output element after the breaker's value (a ``result`` instruction); they become the
    kernel's outputs in place of the breaker (see ``schedule``).
    Realized nodes, other breakers and the nodes in ``stop`` are read as inputs.
    """
    instrs: list[Instr] = []
    inputs: list[Any] = []
    index: dict[int, int] = {}
    breaker = len(targets) == 1 and is_breaker(targets[0])
    cone_roots = list(targets[0].inputs) if breaker else list(targets)
    add = _adder(instrs, inputs, index, stop)
    add(_topo(cone_roots, through_breakers=False, stop=stop) if cone_roots else [])
    t0 = targets[0]
    if breaker:
        operands = [index[i.serial] for i in t0.inputs]
        if not epilogue:
            return Kernel(instrs, inputs, [], list(targets), t0.shape, t0.device, kind=t0.op,
                          attrs=t0.attrs, operands=operands)
        # the prologue's instructions and inputs come first: ``Kernel.prologue_part`` cuts there
        index[t0.serial] = len(instrs)
        instrs.append(Instr("result", (), t0.dtype, t0.shape))
        add(_topo(list(epilogue), through_breakers=False, stop=stop))
        return Kernel(instrs, inputs, [index[t.serial] for t in epilogue], list(epilogue), epilogue[0].shape,
                      t0.device, kind=t0.op, attrs=t0.attrs, operands=operands)
    outputs = [index[t.serial] for t in targets]
    return Kernel(instrs, inputs, outputs, list(targets), t0.shape, t0.device)


def _adder(instrs: list[Instr], inputs: list[Any], index: dict[int, int], stop: Collection[int],
           prev: Collection[int] = ()) -> Any:
    """``add(nodes)``: appends the instructions of ``nodes`` (in dependency order) to ``instrs``;
    evaluated nodes, breakers and those in ``stop`` become ``input`` instructions (``inputs``), those in
    ``prev`` ``rprev`` instructions (a ``regions`` pass's reads of the result as the passes before left it)."""
    def add(nodes: list[Node]) -> None:
        for node in nodes:
            if node.serial in index:
                continue
            if node.serial in prev:
                index[node.serial] = len(instrs)
                instrs.append(Instr("rprev", (), node.dtype, node.shape))
                continue
            if node.realized or is_breaker(node) or node.serial in stop:
                index[node.serial] = len(instrs)
                instrs.append(Instr("input", (), node.dtype, node.shape, (len(inputs),)))
                inputs.append(node)
                continue
            args = tuple(index[i.serial] for i in node.inputs)
            index[node.serial] = len(instrs)
            instrs.append(Instr(node.op, args, node.dtype, node.shape, node.attrs))
    return add


def regions_kernel(top: Node, base: Node, chain: list[Node], prev: Collection[int] = (),
                   stop: Collection[int] = ()) -> Kernel:
    """The ``regions`` kernel of a chain of writes (``compiler/regions.py``): operands the array under
    the chain and each write's value (its region's shape), attrs each write's region (``regions.spans``);
    the members in ``prev`` (read by the next write's value: ``regions.prevreads``) become ``rprev``."""
    instrs: list[Instr] = []
    inputs: list[Any] = []
    index: dict[int, int] = {}
    roots = [base, *[w.inputs[1] for w in chain]]
    _adder(instrs, inputs, index, stop, prev)(_topo(roots, through_breakers=False, stop={*stop, *prev}))
    return Kernel(instrs, inputs, [], [top], top.shape, top.device, kind="regions", attrs=spans(chain),
                  operands=[index[r.serial] for r in roots])


def _aligned_edge(node: Node, arg: Node) -> bool:
    """Whether ``node`` reads ``arg`` at its own (C-order) linear index."""
    if node.op in OPS or node.op == "astype":
        return arg.shape == node.shape
    if node.op == "reshape":
        return True
    if node.op == "view":        # only a view that just adds or drops unit dims
        strides, offset = node.attrs
        return offset == 0 and math.prod(node.shape) == math.prod(arg.shape) and all(
            s == c for s, c, d in zip(strides, contiguous_strides(node.shape), node.shape, strict=True) if d != 1)
    return False


def _epilogue_host(group: list[Node], pos: dict[int, int], stop: Collection[int] = ()) -> Node | None:
    """The breaker that can take ``group`` (elementwise targets of one shape) as its epilogue:
    the last breaker (in dependency order) the group's cone reads, when it is a reduce or
    matmul on the group's device whose value every read takes at the output index itself
    (through elementwise ops without broadcasting, ``astype`` and reshapes). Else None."""
    cone = _topo(group, through_breakers=False, stop=stop)
    read = [n for n in cone if is_breaker(n)]
    if not read:
        return None
    b = max(read, key=lambda n: pos[n.serial])
    if b.op not in EPILOGUE_KINDS or b.device != group[0].device:
        return None
    if any(n.serial in stop and pos[n.serial] > pos[b.serial] for n in cone):
        return None     # it reads a node computed after b by a kernel of its own (``stdtr`` of b's value)
    aligned = {t.serial: True for t in group}
    for n in reversed(cone):       # consumers before their inputs
        if n.realized or is_breaker(n) or n.serial in stop:
            continue
        here = aligned[n.serial]
        for a in n.inputs:
            aligned[a.serial] = aligned.get(a.serial, True) and here and _aligned_edge(n, a)
    return b if aligned[b.serial] else None


def _fusion_ok(kernel: Kernel, breaker: Node, stop: Collection[int] = ()) -> bool:
    """False when the device could run the breaker alone but not with this epilogue (say a
    float64 op that has no exact WGSL yet): fusing must not move a kernel to the host."""
    provider = getattr(breaker.device, "provider", None)
    if provider is None or getattr(provider, "host_memory", True):
        return True
    if provider.cannot_run(kernel) is None:
        return True
    return provider.cannot_run(build_kernel([breaker], stop=stop)) is not None


# A matmul operand computed by a fused prologue is computed again for every tile of the product that
# loads it: ``X @ f(W)`` with X of 2^20 rows evaluates f 2^14 times per element of W (PCA's transform,
# whose components are eigenvectors with their signs flipped by a gather, took 1.7 ms against 0.1 for
# the plain product on the H200). An operand whose other side (N for the left operand, M for the right
# one) is at least REUSE_SIDE long, whose cone does CUT_WORK operations or more beyond addressing (a
# gather or a write into a view counts INDEX_WORK), and which is small (at most CUT_MAX elements and an
# eighth of the product's output) is computed by a kernel of its own first: one small dispatch in place
# of that work repeated per tile. A cheap cone (``X @ (w * 2)``) stays fused: one dispatch.
REUSE_SIDE = 4096
CUT_MAX = 1 << 22
CUT_WORK = 4
INDEX_WORK = 4
_ADDRESSING = frozenset({"input", "const", "view", "reshape", "astype"})
# ``Xc.T @ Xc`` of a computed ``Xc`` (a centred X): with at most GRAM_FUSED features the product is one
# output tile and loads each element of Xc once per workgroup, fused; with more, every tile of the other
# side computes it again (H200, 2^16 x 512 float32 with the centring fused: 2.84 ms, PyTorch 0.90), so Xc
# is computed by a kernel of its own first (a pass over X) and the product reads it as a plain matrix.
GRAM_FUSED = 64


def _reused_operands(order: list[Node]) -> set[int]:
    """Serials of the matmul operands in ``order`` to compute by a kernel of their own (see above)."""
    cut: set[int] = set()
    for n in order:
        if n.op != "matmul" or n.data is not None or len(n.inputs) != 2:
            continue
        a, b = n.inputs
        if a.op == "view" and a.inputs and a.inputs[0] is b and b.data is None and not is_breaker(b) \
                and n.shape[-1] > GRAM_FUSED and b.serial not in cut and _computes(b):
            cut.add(b.serial)           # Xc.T @ Xc of several tiles (GRAM_FUSED)
            continue
        for o, side in ((a, b.shape[-1]), (b, a.shape[-2])):
            if o.data is not None or is_breaker(o) or o.serial in cut or side < REUSE_SIDE:
                continue
            size = math.prod(o.shape)
            if size > CUT_MAX or 8 * size > math.prod(n.shape):
                continue
            work = 0
            for c in _topo([o], through_breakers=False):
                if c.op == "reduce" and not c.realized:
                    work = -1       # it could be taken into a row-fused kernel scheduled after the product
                    break
                if c.op not in _ADDRESSING and not c.realized and not is_breaker(c):
                    work += INDEX_WORK if c.op in INDEX_OPS else 1
            if work >= CUT_WORK:
                cut.add(o.serial)
    return cut


def _computes(node: Node) -> bool:
    """Whether ``node``'s fused cone does any operation beyond addressing its inputs."""
    return any(c.op not in _ADDRESSING and not c.realized and not is_breaker(c)
               for c in _topo([node], through_breakers=False))


def _ref_excess(nodes: list[Any], uses: list[int]) -> list[int]:
    """References to each of ``nodes`` beyond ``uses`` and those this function holds."""
    out: list[int] = []
    for k, obj in enumerate(nodes):
        out += (sys.getrefcount(obj) - uses[k],)
    return out


_REFCOUNTS = hasattr(sys, "getrefcount")
_REF_BASE = _ref_excess([object()], [0])[0] if _REFCOUNTS else 0


def _held_elsewhere(order: list[Node]) -> tuple[set[int], bool]:
    """Serials of the breakers in ``order`` that something outside the graph being scheduled
    still references (a user's array, a node that is not evaluated now): their values must be
    written even when an epilogue consumes them, or they would be computed again later; and
    whether one of them could take an epilogue (``EPILOGUE_KINDS``; if none can, the set is empty:
    it is not used).

    One loop over ``order`` finds the breakers and counts how often each node is an input of an
    unevaluated one; this runs for every evaluation, a repeated one included."""
    breakers: list[Node] = []
    uses: dict[int, int] = {}
    epilogue = False
    for n in order:
        if n.data is None:
            if n.op not in FUSABLE_OPS:       # is_breaker
                breakers += (n,)
                if n.op in EPILOGUE_KINDS:
                    epilogue = True
            for i in n.inputs:
                k = i.serial
                if k in uses:
                    uses[k] += 1
                else:
                    uses[k] = 1
    if not epilogue:
        return set(), False
    n = i = None            # type: ignore[assignment]  # the loops' last nodes: not counted below
    if not _REFCOUNTS:
        return {b.serial for b in breakers}, True
    # each breaker is also held by the caller's ``order`` and ``breakers`` (one more than _REF_BASE counts)
    excess = _ref_excess(breakers, [uses[b.serial] + 1 if b.serial in uses else 1 for b in breakers])
    return {b.serial for b, e in zip(breakers, excess, strict=True) if e > _REF_BASE}, True


def compiles(device: Any) -> bool:
    """Whether ``device``'s kernels are compiled shaders (a GPU's), not NumPy and SciPy loops on the host."""
    return not getattr(getattr(device, "provider", None), "host_memory", True)


def _row_fusion(order: list[Node], live: list[Node], groups: dict[tuple, list[Node]],
                held: set[int] | None, cut: Collection[int] = ()) -> Any:
    """``try(group, taken)``: the group's ``rowfuse`` kernel (over rows, else over columns) and the
    reductions it absorbs, or None (``taken``: breakers already computed by another kernel). A
    group of the row (column) shape is fused only when it absorbs two reductions or more
    (``logsumexp``, ``std``): one
    reduction with its epilogue is the reduce kernel's, which also splits long rows. None when
    nothing here can be fused; nodes in ``cut`` (computed by kernels of their own) are read, not inlined."""
    if held is None or not any(n.op == "reduce" and not n.realized for n in order) or not any(
            compiles(g[0].device) for g in groups.values()):
        return None
    consumers: dict[int, list[Node]] = {}
    for n in order:
        if n.data is None:
            for i in n.inputs:
                consumers.setdefault(i.serial, []).append(n)
    targets = {t.serial for t in live}

    def fusable(n: Node) -> bool:       # a node computed by a kernel of its own is read, not inlined
        return not is_breaker(n) and n.serial not in cut

    def attempt(group: list[Node], taken: set[int]) -> tuple[Kernel, set[int]] | None:
        got = row_kernel(group, fusable, consumers, held | taken, targets)
        if got is None:         # reductions over the first axis (compiler/colfuse.py)
            got = col_kernel(group, fusable, consumers, held | taken, targets)
        if got is None or got[1] & taken:
            return None
        k, reds = got
        if len(reds) < 2 and k.out_shape != k.instrs[k.instrs[k.operands[0]].args[0]].shape:
            return None
        return got
    return attempt


def schedule(targets: Sequence[Node]) -> list[Kernel]:
    """Kernels that realize ``targets``, in dependency order.

    Every breaker in the unevaluated graph gets its own kernel first (in
    dependency order); then the remaining targets, grouped by shape and device,
    each group ONE elementwise kernel. A group that reads a reduce or matmul only
    at its own output index becomes that breaker's epilogue instead (``_epilogue_host``):
    the breaker's kernel computes the group's targets, and writes the breaker's own
    value as one more output only when it is a target, another kernel reads it, or
    something outside this evaluation holds it (``_held_elsewhere``). A small matmul operand
    that the product would compute again for every tile of its long side gets a kernel of its
    own, just before the product (``_reused_operands``).
    A graph of a structure scheduled before takes its kernels from ``plan_cache``.
    """
    live = [t for t in targets if t.data is None]
    order, held, key = prepare(live)
    return kernels_for(order, live, held, key)


def prepare(live: list[Node]) -> tuple[list[Node], set[int] | None, tuple | None]:
    """(the walk of ``live``'s unevaluated graph, the breakers held outside it, the structural key)."""
    order, pos, parts, offsets = plan_cache.walk(live)      # = _topo(live, through_breakers=True)
    # reference counts are read here, before anything in this function holds a breaker; None:
    # no breaker could take an epilogue
    found, epilogue = _held_elsewhere(order)
    held = found if epilogue else None
    return order, held, plan_cache.structure(parts, pos, live, held, offsets)


# A heavy special function (``extra["heavy"]`` in the op table: the incomplete beta and gamma functions and the
# distributions built on them) runs, on a device that compiles shaders, in a kernel of its own whose operands are
# computed first: ``op(input, input, ...)``, one source for every call site of that op and dtype (and operand
# broadcast), compiled once per process (and kept by the driver's shader cache after). NVIDIA's compiler takes
# 12-17 s for a kernel of one ``stdtr`` or ``betainc`` and 76 s for ``sum(stdtr(df, t * 2 + 1) * x)``; fused
# into its neighbours, every context (each reduction, row-fused t-test, sideways group) was a new compile:
# SciPy's ``stats.power(batch=1)`` took 160 s on the H200. The cost is one more pass over the heavy op's
# operands and result, small beside its own arithmetic.
HEAVY_OPS = frozenset(n for n, d in OPS.items() if d.extra.get("heavy"))


def _heavy_apart(order: list[Node]) -> set[int]:
    """Serials of the heavy op nodes in ``order`` on compiling devices and of their computed operands."""
    cut: set[int] = set()
    for n in order:
        if n.op in HEAVY_OPS and n.data is None and compiles(n.device):
            cut.add(n.serial)
            cut.update(i.serial for i in n.inputs if not i.realized and i.op != "const" and not is_breaker(i))
    return cut


def kernels_for(order: list[Node], live: list[Node], held: set[int] | None, key: tuple | None) -> list[Kernel]:
    """``schedule``'s kernels for a graph ``prepare`` walked."""
    seen = plan_cache.lookup(key)
    if seen is not None:
        return seen.instantiate(order)
    kernels = _schedule(order, live, held)
    plan_cache.store(key, kernels, order)
    return kernels


def _schedule(order: list[Node], live: list[Node], held: set[int] | None) -> list[Kernel]:
    pos = {n.serial: i for i, n in enumerate(order)}
    cut = _reused_operands(order) | _heavy_apart(order)
    chains = region_chains(order, live, cut)
    cut |= chains.keys()
    groups: dict[tuple, list[Node]] = {}
    for t in live:
        if is_breaker(t) or t.serial in cut:
            continue
        group = groups.setdefault((t.shape, t.device), [])
        if all(t is not g for g in group):
            group.append(t)
    fused: dict[int, Kernel] = {}
    rest: list[list[Node]] = []
    rowk: dict[int, Kernel] = {}          # index in ``rest`` -> its rowfuse kernel (compiler/rowfuse.py)
    absorbed: set[int] = set()
    rowfuse = _row_fusion(order, live, groups, held, cut)
    for group in groups.values():
        got = rowfuse(group, absorbed | set(fused)) if rowfuse is not None else None
        if got is not None:
            rowk[len(rest)] = got[0]
            absorbed |= got[1]
            rest.append(group)
            continue
        b = _epilogue_host(group, pos, cut) if held is not None else None
        if b is not None and b.serial not in fused and b.serial not in absorbed:
            k = build_kernel([b], group, cut)
            if _fusion_ok(k, b, cut):
                fused[b.serial] = k
                continue
        rest.append(group)
    kernels: list[Kernel] = []
    for n in order:         # dependency order: a cut operand before its product
        if n.serial in chains:
            kernels += (regions_kernel(n, *chains[n.serial], stop=cut - {n.serial}),)
        elif n.serial in cut:
            kernels += (build_kernel([n], stop=cut - {n.serial}),)
        elif is_breaker(n) and n.serial not in absorbed:
            kernels += (fused[n.serial] if n.serial in fused else build_kernel([n], stop=cut),)
    kernels += [rowk[gi] if gi in rowk else build_kernel(g, stop=cut) for gi, g in enumerate(rest)]
    if fused:
        read = {n.serial for k in kernels for n in k.inputs}
        wanted = read | (held or set()) | {t.serial for t in live}
        for b_serial, k in fused.items():
            if b_serial in wanted:      # the breaker's value is needed too: one more output
                r = k.result_index
                assert r is not None
                k.outputs.append(r)
                k.out_nodes.append(order[pos[b_serial]])
                k._sig = None
    return kernels
