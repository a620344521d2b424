"""Chains of writes into regions, evaluated in place.

``x[i] = v`` in a Python loop (rows filled one by one, a Jacobi step's boundary rows, a solver's
columns) records a chain of ``setslice`` nodes (``setstrided`` for writes through a view), each the
array before it with one region replaced.
Fused into one elementwise kernel, a chain of ``k`` writes tests every element of the array against
every region and computes every value at every element: ``k`` times the array's work (and ``bounded``
evaluated such chains every few dozen writes, each time over the whole array: writing the rows of an
``n``-row array cost ``n^2 / 30`` row's worth of work, 4.8 s for 4000 rows of 256 on the host against
NumPy's 7 ms).

A chain of at least REGIONS_MIN writes runs instead as one ``regions`` kernel: the array under the
chain is copied once into the result, then each value is computed over its own region only and stored
there, in order (later writes win, as in NumPy). The chain's members below its top are never
materialised: nothing but the next write reads them (``region_chains`` stops at a member that anything
else reads). Correctness does not depend on how values were recorded; the writes that
``array_object/indexing.py`` records as *clean* (values that read no pending write: they never inline
a chain) are the ones a chain takes, and their chain lengths live here (``clean``), so that the
recorder evaluates a chain every CHAIN_MAX writes instead of every few dozen.

>>> import numpy as np, gpuarray as xp
>>> a = xp.zeros((64, 3), dtype=xp.float32)
>>> for i in range(64):
...     a[i] = i
>>> float(a[63, 2]), xp.metrics()["evaluations"] >= 0
(63.0, True)
"""

from __future__ import annotations

import math
import weakref

from ..graph.node import Node
from ..graph.shapes import contiguous_strides

WRITES = frozenset({"setslice", "setstrided"})     # a write into a region: (old, value) -> new
REGIONS_MIN = 8          # writes in a chain before it runs as a ``regions`` kernel (fewer: one fused kernel)
CHAIN_MAX = 4096         # pending clean writes on one array before the recorder evaluates them

# clean writes (``WRITES`` nodes whose value reads no pending write) -> their chain's length so far
clean: weakref.WeakKeyDictionary[Node, int] = weakref.WeakKeyDictionary()


def chain_length(node: Node) -> int:
    """Pending clean writes under and including ``node`` (0 when ``node`` is not one)."""
    if node.data is not None or node.op not in WRITES:
        return 0
    return clean.get(node, 0)


def region_chains(order: list[Node], live: list[Node], stop: set[int]) -> dict[int, tuple[Node, list[Node]]]:
    """The chains in the walk ``order`` to run as ``regions`` kernels: top's serial -> (the array under
    the chain, its writes bottom first). A top is a pending clean write that is a target, or that
    something other than the next write of its chain reads; its chain goes down through clean writes
    that only the write above reads, past none in ``stop`` (computed by kernels of their own)."""
    if not clean or not any(n.op in WRITES and n.data is None for n in order):
        return {}
    reads: dict[int, int] = {}
    as_base: dict[int, int] = {}
    for n in order:
        if n.data is not None:
            continue
        for j, i in enumerate(n.inputs):
            reads[i.serial] = reads.get(i.serial, 0) + 1
            if j == 0 and n.op in WRITES and n in clean:
                as_base[i.serial] = as_base.get(i.serial, 0) + 1
    targets = {t.serial for t in live}
    out: dict[int, tuple[Node, list[Node]]] = {}
    for n in order:
        if n.data is not None or n.op not in WRITES or n not in clean or n.serial in stop:
            continue
        s = n.serial
        if s not in targets and reads.get(s, 0) == as_base.get(s, 0) == 1:
            continue                # the next clean write's base only: inside a chain
        chain = [n]
        b = n.inputs[0]
        while b.data is None and b.op in WRITES and b in clean and b.serial not in targets \
                and b.serial not in stop and reads.get(b.serial, 0) == as_base.get(b.serial, 0) == 1:
            chain.append(b)
            b = b.inputs[0]
        if len(chain) >= REGIONS_MIN and _fits(n):
            chain.reverse()
            out[s] = (b, chain)
    return out


def _fits(node: Node) -> bool:
    """Whether ``node``'s array fits one storage binding of its device (a regions kernel writes it
    through one; a larger array keeps the fused form, which splits)."""
    limit = getattr(getattr(node.device, "provider", None), "max_binding", None)
    return limit is None or math.prod(node.shape) * node.dtype.itemsize <= limit


def spans(chain: list[Node]) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """Each write's region as (offset, strides) in elements of the array's C layout (one stride per axis
    of its value), in order: a ``regions`` kernel's attrs."""
    out: list[tuple[int, tuple[int, ...]]] = []
    for w in chain:
        if w.op == "setslice":
            starts, steps = w.attrs
            c = contiguous_strides(w.shape)
            out.append((sum(s * k for s, k in zip(starts, c, strict=True)),
                        tuple(s * k for s, k in zip(steps, c, strict=True))))
        else:                       # setstrided ((offset,), strides)
            (offset,), strides = w.attrs
            out.append((offset, tuple(strides)))
    return tuple(out)
