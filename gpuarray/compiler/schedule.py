"""Scheduling: cut the unevaluated part of a graph into kernels.

Elementwise ops and views fuse: each group of targets with one shape becomes
ONE kernel that inlines the whole unevaluated cone below it (views included,
as index arithmetic). Other ops (reductions, ...) are cut points ("breakers"):
each gets a kernel of its own kind, which absorbs the fusable cone of its
operands as a prologue. Evaluated nodes and earlier breakers are read as
kernel inputs. Walks are iterative, so graph depth is never limited by
Python's recursion limit.

>>> import numpy as np
>>> from gpuarray.graph import leaf, make
>>> a = leaf(np.arange(4.0), "cpu")
>>> b = make("exp", (make("negative", (a,), a.dtype, a.shape),), a.dtype, a.shape)
>>> [k.describe().splitlines()[0] for k in schedule([b])]
['kernel -> (4,) (1 output(s))']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._ops import OPS
from ..graph.node import Node
from .kernel import INDEX_OPS, Instr, Kernel

FUSABLE_OPS = frozenset({"input", "const", "iota", "view", "reshape", "astype"}) | frozenset(OPS) | frozenset(INDEX_OPS)


def is_breaker(node: Node) -> bool:
    """True for nodes that need a kernel of their own kind (reductions, scans, ...)."""
    return node.op not in FUSABLE_OPS and not node.realized


def _topo(targets: Sequence[Node], through_breakers: bool) -> list[Node]:
    """Unrealized-cone nodes of ``targets`` in dependency order (iterative DFS).

    With ``through_breakers`` False, the walk stops at breaker nodes, targets
    included, which then appear as leaves (a breaker's operand that is itself a
    breaker is read as an input, not inlined).
    """
    order: list[Node] = []
    seen: set[int] = set()
    for t in targets:
        stack: list[tuple[Node, bool]] = [(t, False)]
        while stack:
            node, expanded = stack.pop()
            if node.serial in seen and not expanded:
                continue
            if expanded:
                order.append(node)
                continue
            seen.add(node.serial)
            stack.append((node, True))
            leaf = node.realized or (not through_breakers and is_breaker(node))
            if not leaf:
                for i in reversed(node.inputs):
                    if i.serial not in seen:
                        stack.append((i, False))
    return order


def build_kernel(targets: Sequence[Node]) -> Kernel:
    """One kernel computing every target from its fusable cone.

    Elementwise targets (all of one shape) give an ``elementwise`` kernel. A single
    breaker target gives a kernel of that kind whose ``operands`` are its inputs,
    computed inside the kernel from their fusable cones (a fused prologue).
    Realized nodes and other breakers are read as inputs.
    """
    instrs: list[Instr] = []
    inputs: list[Any] = []
    index: dict[int, int] = {}
    breaker = len(targets) == 1 and is_breaker(targets[0])
    cone_roots = list(targets[0].inputs) if breaker else list(targets)
    for node in _topo(cone_roots, through_breakers=False) if cone_roots else []:
        if node.realized or is_breaker(node):
            index[node.serial] = len(instrs)
            instrs.append(Instr("input", (), node.dtype, node.shape, (len(inputs),)))
            inputs.append(node)
            continue
        args = tuple(index[i.serial] for i in node.inputs)
        index[node.serial] = len(instrs)
        instrs.append(Instr(node.op, args, node.dtype, node.shape, node.attrs))
    t0 = targets[0]
    if breaker:
        operands = [index[i.serial] for i in t0.inputs]
        return Kernel(instrs, inputs, [], list(targets), t0.shape, t0.device, kind=t0.op,
                      attrs=t0.attrs, operands=operands)
    outputs = [index[t.serial] for t in targets]
    return Kernel(instrs, inputs, outputs, list(targets), t0.shape, t0.device)


def schedule(targets: Sequence[Node]) -> list[Kernel]:
    """Kernels that realize ``targets``, in dependency order.

    Every breaker in the unevaluated graph gets its own kernel first (in
    dependency order); then the remaining targets, grouped by shape and device,
    each group ONE elementwise kernel.
    """
    live = [t for t in targets if not t.realized]
    kernels = [build_kernel([n]) for n in _topo(live, through_breakers=True) if is_breaker(n)]
    groups: dict[tuple, list[Node]] = {}
    for t in live:
        if is_breaker(t):
            continue
        group = groups.setdefault((t.shape, t.device), [])
        if all(t is not g for g in group):
            group.append(t)
    return kernels + [build_kernel(g) for g in groups.values()]
