"""Scheduling: cut the unevaluated part of a graph into kernels.

Every op we have today is elementwise or a view, so each group of targets
with one shape becomes ONE kernel that inlines the whole unevaluated cone
below it (views included, as index arithmetic). Evaluated nodes are read as
kernel inputs. The walk is iterative, so graph depth is never limited by
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

from ..graph.node import Node
from .kernel import Instr, Kernel


def _topo(targets: Sequence[Node]) -> list[Node]:
    """Unrealized-cone nodes of ``targets`` in dependency order (iterative DFS)."""
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
            if not node.realized:
                for i in reversed(node.inputs):
                    if i.serial not in seen:
                        stack.append((i, False))
    return order


def build_kernel(targets: Sequence[Node]) -> Kernel:
    """One kernel computing every target (all of one shape) from its cone."""
    instrs: list[Instr] = []
    inputs: list[Any] = []
    index: dict[int, int] = {}
    for node in _topo(targets):
        if node.realized:
            index[node.serial] = len(instrs)
            instrs.append(Instr("input", (), node.dtype, node.shape, (len(inputs),)))
            inputs.append(node)
            continue
        args = tuple(index[i.serial] for i in node.inputs)
        index[node.serial] = len(instrs)
        instrs.append(Instr(node.op, args, node.dtype, node.shape, node.attrs))
    outputs = [index[t.serial] for t in targets]
    return Kernel(instrs, inputs, outputs, list(targets), targets[0].shape, targets[0].device)


def schedule(targets: Sequence[Node]) -> list[Kernel]:
    """Kernels that realize ``targets``, grouped by shape and device."""
    groups: dict[tuple, list[Node]] = {}
    for t in targets:
        if t.realized:
            continue
        group = groups.setdefault((t.shape, t.device), [])
        if all(t is not g for g in group):
            group.append(t)
    return [build_kernel(g) for g in groups.values()]
