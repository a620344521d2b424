"""One-element reads of pending elementwise work, computed from one element of each input.

SciPy's ``is_lazy_array(x)`` reads ``bool(any(reshape(x, -1)[0]))``, and ``scipy.stats`` asks it of
``x - mean`` several times a call; a loop body reads ``float(y[0])`` of ``y = a * 2 + b``. Evaluated as
recorded, such a read computes the whole pending array first: a device kernel and a round trip even
where every element it needs is known on the host. ``sunk`` rewrites the read's graph so that each
one-element view of a pending elementwise node (an ``OPS`` op, ``astype``, a reshape or a view of one)
becomes that op applied to one-element views of its inputs, down to evaluated data; it gives the
rewritten graph only where that graph then needs nothing from a device: every pending node of at most
``SMALL`` elements, and every device-only input read through one-element views whose values are known
on the host (``residency.element_known``: a host copy, or an element read before). The planner evaluates
it on the host in place of the read's own graph (``planner.evaluate_nodes``); the nodes the read skipped
stay pending, to be computed, fused, by whatever reads them whole.

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray(np.arange(6.0))
>>> float((a * 2 + 1)[4])
9.0
"""

from __future__ import annotations

import math
import os

from ..core.ops import OPS
from ..graph.node import Node, make, post_order
from ..graph.shapes import contiguous_strides
from ..graph.views import strided_view
from .residency import element_known, some_element_known

SMALL = 16                  # elements of a pending node of a rewritten read, at most
ENABLED = os.environ.get("GPUARRAY_SINK_READS", "1") != "0"
_THROUGH = frozenset(OPS) | {"astype"}
_OVER = _THROUGH | {"view", "reshape"}


def _flat(index: tuple[int, ...], strides: tuple[int, ...]) -> int:
    return sum(i * s for i, s in zip(index, strides, strict=True))


def _multi(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for d in reversed(shape):
        flat, r = divmod(flat, d) if d else (flat, 0)
        out.append(r)
    return tuple(reversed(out))


def _element(e: Node, at: int, seen: dict[tuple[int, int], Node]) -> Node | None:
    """A node of shape () whose value is ``e``'s flat element ``at``; None where ``e`` is pending work of
    another kind (a reduction, a gather: computed whole)."""
    key = (e.serial, at)
    got = seen.get(key)
    if got is not None:
        return got
    if e.data is not None or not e.inputs:
        out: Node | None = strided_view(e, (), (), at) if e.shape else e
    elif e.op == "view":
        if e.dtype != e.inputs[0].dtype:
            return None
        strides, offset = e.attrs
        out = _element(e.inputs[0], offset + _flat(_multi(at, e.shape), strides), seen)
    elif e.op == "reshape":
        out = _element(e.inputs[0], at, seen)
    elif e.op in _THROUGH:
        index = _multi(at, e.shape)
        ins: list[Node] = []
        for a in e.inputs:
            lead = len(e.shape) - len(a.shape)
            if lead < 0 or any(d not in (1, e.shape[lead + k]) for k, d in enumerate(a.shape)):
                return None
            one = _element(a, _flat(tuple(0 if d == 1 else index[lead + k] for k, d in enumerate(a.shape)),
                                    contiguous_strides(a.shape)), seen)
            if one is None:
                return None
            ins.append(one)
        out = make(e.op, tuple(ins), e.dtype, (), e.attrs, e.device)
    else:
        return None
    if out is not None:
        seen[key] = out
    return out


def candidate(target: Node) -> bool:
    """Whether ``target``, or a pending node at most two inputs below it, is a one-element view of pending
    work that ``_element`` passes through (a quick test on every read: most reads have none)."""
    if not ENABLED:
        return False
    level = [target]
    for _ in range(3):
        below = []
        for n in level:
            if n.op == "view" and n.inputs and n.inputs[0].data is None and math.prod(n.shape) == 1:
                return _through(n.inputs[0])
            below += [i for i in n.inputs if i.data is None]
        if not below:
            return False
        level = below
    return False


def _through(base: Node) -> bool:
    """Whether every pending node under ``base`` (itself too) is one ``_element`` passes through (an ``_OVER``
    op, a view of its input's dtype) and every device-only input has some element known on the host: where not
    (``x - mean`` of a pending ``mean``, or of an ``x`` none of whose elements was read), the rewrite fails,
    found here without making nodes."""
    stack, seen = [base], {base.serial}
    while stack:
        n = stack.pop()
        if n.op not in _OVER or n.op == "view" and n.dtype != n.inputs[0].dtype:
            return False
        for i in n.inputs:
            d = i.data
            if d is not None:
                if d.host is None and i.op != "const" and not some_element_known(d):
                    return False
            elif i.inputs and i.serial not in seen:
                seen.add(i.serial)
                stack.append(i)
    return True


def sunk(target: Node) -> Node | None:
    """A graph of ``target``'s value whose one-element views of pending elementwise work are rewritten as
    above, where it changed something and needs no device; else None."""
    return rewritten(target) if candidate(target) else None


def rewritten(target: Node) -> Node | None:
    """``sunk`` without the quick test (the planner made it)."""
    seen: dict[tuple[int, int], Node] = {}
    done: dict[int, Node] = {}
    changed = False
    for n in post_order([target], lambda n: n.data is None):
        if n.data is not None or not n.inputs:
            done[n.serial] = n
            continue
        base = n.inputs[0]
        if n.op == "view" and math.prod(n.shape) == 1 and base.data is None and n.dtype == base.dtype and \
                base.op in _OVER:
            one = _element(base, n.attrs[1], seen)
            if one is None:
                return None
            done[n.serial] = make("reshape", (one,), n.dtype, n.shape) if n.shape else one
            changed = True
            continue
        ins = tuple(done[i.serial] for i in n.inputs)
        done[n.serial] = n if all(a is b for a, b in zip(ins, n.inputs, strict=True)) else \
            make(n.op, ins, n.dtype, n.shape, n.attrs, n.device)
    out = done[target.serial]
    if not changed or not _host_only(out):
        return None
    return out


def _host_only(root: Node) -> bool:
    """Whether evaluating ``root`` needs nothing from a device: small pending nodes, and device-only data
    read only through one-element views of known elements."""
    for n in post_order([root], lambda n: n.data is None):
        if n.data is not None:
            continue
        if math.prod(n.shape) > SMALL:
            return False
        for i in n.inputs:
            d = i.data
            if d is None or d.host is not None or i.op == "const":
                continue
            if n.op != "view" or math.prod(n.shape) != 1 or not element_known(d, n.attrs[1]):
                return False
    return True
