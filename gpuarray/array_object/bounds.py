"""The duplication bound of index instructions (``bounded``): how much of a pending cone a gather, concat or
write into a region may inline before what it reads at several indices is evaluated first.

>>> import gpuarray as xp
>>> a = xp.arange(6.0, device="cpu")
>>> concat_nodes([a[3:]._node, a[:3]._node], 0).shape
(6,)
"""

from __future__ import annotations

from ..compiler.kernel import FUSABLE_OPS
from ..compiler.regions import WRITES
from ..compiler.schedule import compiles
from ..graph.node import Node, depths_again, make, redepth
from ..runtime.planner import evaluate_nodes

# Largest fused cone, in distinct (node, index path) pairs, that an index instruction inlines, and
# the most it may exceed the cone's distinct nodes by (DUP_RATIO times them, plus DUP_SLACK). A node
# read at several indices (shifted slices, gathers, a concat of an array with a slice of itself) is
# computed once per index in a fused kernel: a heat stencil's step reads the previous step at three
# shifts, so fusing k steps computes about 3^k values per element where k kernels compute 5k. Past
# the duplication bound or FUSE_LIMIT the outermost computing nodes read at several indices are evaluated
# first (a stencil's step before: each step then is one kernel, and repeated steps replay one plan); the
# instruction's inputs only where that finds none or leaves the cone past FUSE_LIMIT. On a device
# whose kernels are NumPy calls on the host (the cpu device) every value computed twice is computed
# twice by whole-array calls, so there any node read at several indices is evaluated first (ratio 1,
# no slack). Before the duplication bound, FUSE_LIMIT alone (a tree size of 256) let 200 heat steps run
# as 159 kernels of up to 5 fused steps: 10x NumPy's time on the host; and lavapipe once took 14 s to
# compile a 3000-line shader of such a cone. Until the sixty-second session the duplication bound also
# evaluated all inputs (the step's new values too, which recomputed the previous step at three shifts
# in a kernel of their own): 200 heat steps took 328 evaluations and 463 dispatches (200 and 200 now).
FUSE_LIMIT = 256
DUP_RATIO = 2
DUP_SLACK = 16
_REINDEX = frozenset({"view", "reshape", "concat", "gather", "setslice", "setstrided", "setpart"})
# what moves values without computing them: read at several indices, each read only addresses (the
# values under it may be worth a kernel of their own: ``_reread`` looks below these)
_MOVES = frozenset({"view", "reshape", "astype", "const", "concat", "gather"})
# index instructions recorded through ``bounded`` whose fused cones it keeps (``_kept``)
_KEPT = WRITES | {"concat", "gather"}


def _fused_size(node: Node, limit: int, paths: dict[int, int] | None = None,
                pending: list[Node] | None = None) -> tuple[int, int]:
    """(distinct (node, index path) pairs, distinct nodes) of ``node``'s fusable cone, counting
    stops past ``limit`` pairs: what a kernel fusing it computes per element, against what
    evaluating each node once would. ``paths``, when given, receives the index paths counted per
    node serial; ``pending``, the pending nodes whose inputs were walked (``node`` aside).

    A pending index instruction met below ``node`` whose cone was counted before (``_kept``: a write into
    a region, a concat, a gather) and whose walked nodes are all still pending adds that count instead
    of being walked again: every pair under it has it in its path, so the pairs it adds under each path
    that reaches it are new (a stencil's step reads the step before at several shifts: its cone was
    walked once per shift, each step)."""

    seen: set[tuple[int, tuple]] = set()
    counts: dict[int, int] = {} if paths is None else paths      # index paths per node serial
    stack: list[tuple[Node, tuple]] = [(node, ())]
    pop, push, add, get, fusable, reindex = stack.pop, stack.append, seen.add, counts.get, FUSABLE_OPS, _REINDEX
    pairs = 0
    while stack:
        n, path = pop()
        serial = n.serial
        key = (serial, path)
        if key in seen:
            continue
        add(key)
        counts[serial] = get(serial, 0) + 1
        pairs += 1
        if pairs > limit:
            break
        if n.data is not None or (n is not node and n.op not in fusable):     # realized, or a breaker
            continue
        if n is not node:
            cone = n.cone
            if cone is not None:
                for m in cone[2]:
                    if m.data is not None:
                        n.cone = cone = None
                        break
                if cone is not None:
                    pairs += cone[0]
                    for s, k in cone[1].items():
                        counts[s] = get(s, 0) + k
                    if pending is not None:
                        pending += cone[2]
                        pending.append(n)
                    if pairs > limit:
                        break
                    continue
            if pending is not None:
                pending.append(n)
        sub = path + (serial,) if n.op in reindex else path
        for i in n.inputs:
            push((i, sub))
    return pairs, len(counts)


def _kept(node: Node, pairs: int, paths: dict[int, int], pending: list[Node] | None) -> Node:
    """``node``, a pending index instruction (``_KEPT``: a write into a region, a concat, a gather), with its
    fused cone's count kept where it is within ``FUSE_LIMIT`` (``Node.cone``: the pairs and index paths per
    node below it, and the pending nodes walked, whose evaluation makes the count stale) for ``_fused_size``
    to add where a later cone reads it; ``_fused_size``'s (pairs, paths, pending) of ``node``, counted just
    now (``pending`` None: not kept). A device loss that puts evaluated nodes back (``planner``) leaves such
    a count low: more is fused, the values are the same."""
    if pending is not None and node.data is None and pairs <= FUSE_LIMIT:
        paths.pop(node.serial, None)
        node.cone = (pairs - 1, paths, tuple(pending))
    return node


def _remember(node: Node, depth: bool = False) -> Node:
    """``_kept`` of a node whose cone changed since it was counted (evaluations under it); ``depth``: and the
    depths of its pending nodes counted again (``graph.node.redepth``), from the same walk where it met every
    pending node under ``node`` (no breaker left unwalked): an input's serial is below its node's, so serial
    order is an order of inputs first."""
    if node.op not in _KEPT or node.data is not None:
        if depth:
            redepth(node)
        return node
    paths: dict[int, int] = {}
    pending: list[Node] = []
    pairs = _fused_size(node, FUSE_LIMIT, paths, pending)[0]
    if depth:
        nodes = {n.serial: n for n in pending}
        nodes[node.serial] = node
        order = sorted(nodes)
        for s in order:
            for i in nodes[s].inputs:
                if i.data is None and (i.serial not in nodes or i.serial > s):
                    redepth(node)       # a pending node the walk did not go through (a breaker's cone)
                    return _kept(node, pairs, paths, pending)
        depths_again([nodes[s] for s in order])
    return _kept(node, pairs, paths, pending)


def _reread(node: Node, paths: dict[int, int]) -> list[Node]:
    """The outermost nodes of ``node``'s fusable cone that compute something and are read at several
    indices (``paths``: ``_fused_size``'s counts); the nodes under them are not looked at."""
    out: list[Node] = []
    seen: set[int] = set()
    stack = list(node.inputs)
    fusable = FUSABLE_OPS
    while stack:
        n = stack.pop()
        if n.serial in seen or n.data is not None or n.op not in fusable:
            continue
        seen.add(n.serial)
        if paths.get(n.serial, 0) > 1 and n.op not in _MOVES:
            out.append(n)
            continue
        stack.extend(n.inputs)
    return out


def bounded(node: Node) -> Node:
    """``node``, with the outermost nodes its fused cone reads at several indices evaluated first when the
    cone would compute too much twice (``DUP_RATIO``; any of them on a host device) or exceed
    ``FUSE_LIMIT``; its inputs when evaluating those does not bring the cone under ``FUSE_LIMIT``."""
    host = None
    for _ in range(4):
        paths: dict[int, int] = {}
        pending: list[Node] | None = [] if node.op in _KEPT else None    # (its cone is kept: _kept)
        pairs, distinct = _fused_size(node, FUSE_LIMIT, paths, pending)
        over = pairs > FUSE_LIMIT
        if not over:
            if pairs <= distinct:
                return _kept(node, pairs, paths, pending)
            if host is None:
                host = not compiles(node.device)
            if not (pairs > distinct if host else pairs > DUP_RATIO * distinct + DUP_SLACK):
                return _kept(node, pairs, paths, pending)
        again = _reread(node, paths)
        if not again:
            if not over and host:
                return _kept(node, pairs, paths, pending)   # only addressing read twice: nothing computed twice
            break
        evaluate_nodes(again)
        if not over:
            return _remember(node, depth=True)
        redepth(node)
    else:
        if _fused_size(node, FUSE_LIMIT)[0] <= FUSE_LIMIT:
            return _remember(node)
    evaluate_nodes([i for i in node.inputs if not i.realized])
    redepth(node)
    return _remember(node)


def concat_nodes(nodes: list[Node], ax: int) -> Node:
    """The node joining ``nodes`` along axis ``ax`` (``concat``; the reductions and compactions by blocks)."""
    if len(nodes) == 1:
        return nodes[0]
    n0 = nodes[0]
    shape = n0.shape[:ax] + (sum(n.shape[ax] for n in nodes),) + n0.shape[ax + 1:]
    return bounded(make("concat", tuple(nodes), n0.dtype, shape, (ax,), n0.device))
