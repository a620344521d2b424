"""Parts of a kernel too wide for its adapter, to evaluate first (``runtime/planner.py``).

An adapter binds a limited number of storage buffers to a kernel (WebGPU's minimum is 8). A fused cone that
reads more arrays than that (a sum of 40 arrays, a deep chain of gathers) would run on the host; ``cuts``
names nodes inside it to evaluate first, each group an evaluation, so that each part reads at most about half
the limit, and ``output_groups`` splits a kernel of many outputs (scalars computed in a Python loop and
evaluated together) into groups that fit.

>>> cuts([])
[]
"""

from __future__ import annotations

from ..compiler.kernel import Kernel
from ..graph.node import Node


def cuts(kernels: list[Kernel]) -> list[list[Node]]:
    """Groups of nodes inside the fused cones of ``kernels`` that bind more storage buffers than their adapter
    allows (``too_wide``) to evaluate first, a group an evaluation, so that each part reads at most about half
    the limit of inputs: a greedy bounded fan-in partition of the cone, in dependency order (a deep chain of
    gathers, each reading a sort's result, as ``unique(axis=0)``'s row sort builds, read 33 buffers of 32 and
    ran on the host). A kernel of several outputs none of which is too wide alone evaluates its outputs in
    groups (``output_groups``). Empty where no kernel is too wide or none can be split (one node reading
    that many inputs itself)."""
    out: list[list[Node]] = []
    for k in kernels:
        prov = k.device.provider
        wide = getattr(prov, "too_wide", None)
        if wide is None or not wide(k):
            continue
        budget = max(2, (prov.max_storage_buffers - 8) // 2)
        leaf = {n.serial for n in k.inputs}
        roots = list(k.out_nodes[0].inputs) if k.kind != "elementwise" and len(k.out_nodes) == 1 \
            and k.out_nodes[0].op == k.kind else list(k.out_nodes)
        reads: dict[int, set[int]] = {}
        cut: dict[int, Node] = {}
        alone = prov.max_storage_buffers - 5      # inputs of a one-output kernel at most (elementwise's 4 more)
        hopeless: set[int] = set()      # nodes reading more than that themselves, and the cones that hold one
        stack: list[tuple[Node, bool]] = [(r, False) for r in roots if r.serial not in leaf]
        while stack:
            n, done = stack.pop()
            if n.serial in reads and not done:
                continue
            if not done:
                reads[n.serial] = set()
                stack.append((n, True))
                stack += [(i, False) for i in n.inputs if i.serial not in leaf and i.serial not in reads]
                continue
            # (a node without inputs, a hash-consed constant, is never evaluated on its own: every expression with
            # that value shares it, and would read it as an array from then on)
            inner = [i for i in n.inputs if i.serial not in leaf and i.serial not in cut and i.inputs]
            if len({i.serial for i in n.inputs}) > alone or any(i.serial in hopeless for i in inner):
                hopeless.add(n.serial)
            mine = {i.serial for i in n.inputs if i.serial in leaf or i.serial in cut}
            for i in inner:
                mine |= reads[i.serial]
            for i in sorted(inner, key=lambda i: -len(reads[i.serial])):
                if len(mine) <= budget:
                    break
                cut[i.serial] = i
                mine = {j.serial for j in n.inputs if j.serial in leaf or j.serial in cut}
                for j in inner:
                    if j.serial not in cut:
                        mine |= reads[j.serial]
            reads[n.serial] = mine
        if not cut and len(roots) > 1:      # a sideways fusion of several cones, none too wide itself
            out += output_groups(roots, reads, prov.max_storage_buffers - 8, hopeless)
            continue
        if cut:
            out.append(list(cut.values()))
    return out


def output_groups(roots: list[Node], reads: dict[int, set[int]], room: int,
                   hopeless: set[int]) -> list[list[Node]]:
    """The outputs ``roots`` of a kernel too wide for its adapter (independent results of one shape that
    the schedule fused sideways: scalars computed in a Python loop and evaluated together) in groups, in
    order, whose inputs and outputs together bind at most ``room`` buffers (at least one output a group),
    to evaluate a group at a time; at most half of them when they would all fit in one group, so that
    the rest follow in another kernel. All groups at once: a thousand p-values concatenated (SciPy's
    ``stats.power`` with ``batch=1``) took 461 evaluations and 35 s on lavapipe when each round scheduled
    the whole rest again to take its next few. Stops (the rest, as before) at an output whose cone holds
    a node that reads more inputs than a kernel can bind (``hopeless``): evaluated alone, it would still
    run on the host, one evaluation per output instead of one for all."""
    groups: list[list[Node]] = []
    acc: set[int] = set()
    group: list[Node] = []
    for r in roots:
        mine = reads.get(r.serial, set())
        if not r.inputs or r.serial in hopeless:
            return [*groups, group] if group else groups
        if group and (len(acc | mine) + len(group) + 1 > room or not groups and 2 * len(group) >= len(roots)):
            groups.append(group)
            acc, group = set(), []
        acc |= mine
        group.append(r)
    return groups           # the last group is left to the kernel of the rest
