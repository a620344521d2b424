"""Row fusion: reductions over the last axis and the elementwise work that reads them back, one kernel.

Softmax, log-softmax, logsumexp, layer normalisation, standardising and centring reduce each row
of an array and then use the row's results at every element of the same row::

    m = max(x, axis=-1, keepdims=True)
    e = exp(x - m)
    y = e / sum(e, axis=-1, keepdims=True)

Scheduled the usual way this is three kernels (two reductions, then the elementwise group), each
reading ``x`` from memory. ``row_kernel`` makes it one ``rowfuse`` kernel: one workgroup per row
runs the reductions in dependency order (``rowreduce`` instructions: each a sum, product, max,
min, any or all of its operand over the row, evaluated through the fused cone), keeps their
results in registers, then evaluates the group's outputs along the row.

What may be fused (anything else keeps the separate kernels):

- the group's targets have one shape: ``S`` (rank >= 1), or the row shape ``S[:-1]`` or
  ``S[:-1] + (1,)`` (``logsumexp``: one value per row, written by the row's first thread), on a
  device whose provider runs ``rowfuse`` kernels (not the host);
- every reduction absorbed is a ``reduce`` over the last axis of an operand of shape ``S``, of a
  real or boolean dtype, not evaluated, not a target, not held outside this evaluation, and read
  only by nodes the fused kernel computes (as is every value derived from it, none of which is a
  target but the group's own; a breaker among the cone's leaves is not computed there);
- a value derived from a reduction reaches the row's elements only through elementwise ops and
  casts at the row shape ``S[:-1]`` or ``S[:-1] + (1,)``, the reshape or view that appends the
  unit axis (keepdims), and elementwise ops of shape ``S`` that broadcast it along the row. Then
  every element reads its own row's result (the renderer substitutes the row's register);
- rows are at most ``MAX_ROW`` long, and there are at least ``MIN_ROWS`` of them unless they are
  at most ``SHORT_ROW`` long (one workgroup per row leaves a GPU idle with a few long rows).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..core.ops import OPS
from ..graph.node import Node, post_order
from ..graph.shapes import contiguous_strides
from .kernel import Instr, Kernel

ROW_OPS = frozenset({"sum", "prod", "max", "min", "any", "all"})
MAX_ROW = 65536
MIN_ROWS = 64
SHORT_ROW = 4096


def _row_reduce(n: Node, shape: tuple[int, ...]) -> bool:
    """Whether ``n`` is an unevaluated reduction over the last axis of an operand of ``shape``."""
    return (n.op == "reduce" and not n.realized and n.attrs[0] in ROW_OPS and n.attrs[1] == (len(shape) - 1,)
            and n.inputs[0].shape == shape and n.dtype.kind != "c")


def _cone(targets: Sequence[Node], shape: tuple[int, ...], fusable: Any,
          absorbs: Callable[[Node, tuple[int, ...]], bool] = _row_reduce) -> list[Node]:
    """The unevaluated cone of ``targets`` in dependency order, through the reductions of
    ``shape`` that ``absorbs`` (row reductions; other breakers and realized nodes are leaves)."""
    return post_order(targets, lambda n: not n.realized and (fusable(n) or absorbs(n, shape)))


def reduced_shape(group: list[Node], fusable: Any, first: bool = False) -> tuple[int, ...] | None:
    """The shape ``S`` whose rows (``first``: columns, the first axis) are reduced: the group's own
    shape when it reads such a reduction of an operand of that shape, or the operand shape of one
    whose result shape the group has (rows: ``S[:-1]``, or ``S[:-1] + (1,)`` with keepdims, as
    ``logsumexp``; columns: ``S[1:]`` or ``(1,) + S[1:]``); else None."""
    t = group[0].shape
    found: tuple[int, ...] | None = None
    seen: set[int] = set()
    stack = list(group)
    while stack:
        n = stack.pop()
        if n.serial in seen or n.realized:
            continue
        seen.add(n.serial)
        if fusable(n):
            stack.extend(n.inputs)
            continue
        if n.op != "reduce" or not n.inputs:
            continue
        s = n.inputs[0].shape
        if len(s) < (2 if first else 1) or n.attrs[1] != ((0,) if first else (len(s) - 1,)):
            continue
        if s == t:
            return t
        kept = s[1:] if first else s[:-1]
        if t in (kept, (1,) + kept if first else kept + (1,)):
            found = s
    return found


def kept_apart(group: list[Node], cone: list[Node], reds: set[int], consumers: dict[int, list[Node]],
               held: set[int], live: set[int], fusable: Any) -> bool:
    """Whether the reductions ``reds`` stay out of a kernel fusing ``group`` (row and column fusion): one
    of them is held or a target, or a value computed from one is read by a node this kernel does not
    compute (another kernel would evaluate it again, or read the reduction, which is never written; a
    breaker among the cone's leaves is such a node: ``t + b + s`` with ``s = sum(b, axis=0)`` and
    ``t = sum(s)`` ran t's kernel first, on the unwritten s) or is itself a target or held other than the
    group's own (``xp.evaluate(x & r, r)`` with ``r = any(x, keepdims=True)``: r's kernel read the
    never-written reduction)."""
    if any(r in held or r in live for r in reds):
        return True
    inside = {n.serial for n in cone if n.serial in reds or not n.realized and fusable(n)}
    outs = {g.serial for g in group}
    return any(any(c.serial not in inside for c in consumers.get(d, ())) or (d in live or d in held) and d not in outs
               for d in _derived(cone, reds))


def _derived(cone: list[Node], reds: set[int]) -> set[int]:
    """Serials of the cone's nodes computed from a row reduction (the reductions included)."""
    out = set(reds)
    for n in cone:
        if not n.realized and any(i.serial in out for i in n.inputs):
            out.add(n.serial)
    return out


def aligned(cone: list[Node], reds: set[int], shape: tuple[int, ...], reduced: set[tuple[int, ...]],
            full: set[tuple[int, ...]], view_ok: Callable[[Node], bool]) -> bool:
    """Whether every value derived from a reduction reaches the elements of its own row (or column)
    only (see the module docstring): elementwise at a ``reduced`` shape from operands of that shape,
    at ``shape`` from operands of a ``full`` shape, and reshapes or views (``view_ok``) between
    ``reduced`` shapes."""
    derived: set[int] = set(reds)
    for n in cone:
        if n.serial in reds or n.realized:
            continue
        ins = [i for i in n.inputs if i.serial in derived]
        if not ins:
            continue
        derived.add(n.serial)
        if n.op in OPS or n.op == "astype":
            if n.shape == shape:
                if any(i.shape not in full for i in ins):
                    return False
            elif n.shape in reduced:
                if any(i.shape != n.shape for i in ins):
                    return False
            else:
                return False
        elif n.op in ("reshape", "view"):
            if n.inputs[0].shape not in reduced or n.shape not in reduced:
                return False
            if n.op == "view" and not view_ok(n):
                return False
        else:
            return False
    return True


def _row_view(n: Node, nd: int) -> bool:
    """A view between the row shapes of an ``nd``-dimensional operand that keeps each row's value
    at its row (keepdims' unit axis)."""
    strides, offset = n.attrs
    cs = contiguous_strides(n.inputs[0].shape)
    return offset == 0 and all(strides[d] == cs[d] for d in range(nd - 1) if n.shape[d] > 1)


def _aligned(cone: list[Node], reds: set[int], shape: tuple[int, ...]) -> bool:
    rows, keep = shape[:-1], shape[:-1] + (1,)
    full = {shape, keep} | ({()} if len(shape) == 1 else set())
    return aligned(cone, reds, shape, {rows, keep}, full, lambda n: _row_view(n, len(shape)))


def row_kernel(group: list[Node], fusable: Any, consumers: dict[int, list[Node]], held: set[int],
               live: set[int]) -> tuple[Kernel, set[int]] | None:
    """A ``rowfuse`` kernel computing ``group`` (elementwise targets of one shape) with the row
    reductions it reads, and the serials of those reductions; None where the rules above do not hold.

    ``fusable(node)``: whether the scheduler inlines ``node``; ``consumers``: the unevaluated nodes
    reading each node; ``held``: breakers referenced outside this evaluation; ``live``: targets."""
    provider = getattr(group[0].device, "provider", None)
    if provider is None or getattr(provider, "host_memory", True):
        return None
    shape = reduced_shape(group, fusable)
    if shape is None:
        return None
    nd = len(shape)
    if nd == 0 or not 0 < shape[-1] <= MAX_ROW:
        return None
    nrows = math.prod(shape[:-1])
    if nrows < MIN_ROWS and shape[-1] > SHORT_ROW:
        return None
    cone = _cone(group, shape, fusable)
    reds = {n.serial for n in cone if not n.realized and _row_reduce(n, shape)}
    if not reds:
        return None
    if kept_apart(group, cone, reds, consumers, held, live, fusable):
        return None
    if not _aligned(cone, reds, shape):
        return None
    k = _build(group, cone, reds, fusable)
    if provider.cannot_run(k) is not None:
        return None
    return k, reds


def _build(group: list[Node], cone: list[Node], reds: set[int], fusable: Any, axis: int | None = None) -> Kernel:
    """The ``rowfuse`` kernel of ``cone``; ``axis`` = 0: its reductions are over the first axis
    (``compiler/colfuse.py``: ``rowreduce`` params ``(rop, 0)``, kernel attrs ``(0,)``)."""
    extra = () if axis is None else (axis,)
    instrs: list[Instr] = []
    inputs: list[Any] = []
    index: dict[int, int] = {}
    operands: list[int] = []
    for n in cone:
        if n.serial in reds:
            operands.append(len(instrs))
            instrs.append(Instr("rowreduce", (index[n.inputs[0].serial],), n.dtype, n.shape, (n.attrs[0], *extra)))
        elif n.realized or not fusable(n):
            instrs.append(Instr("input", (), n.dtype, n.shape, (len(inputs),)))
            inputs.append(n)
        else:
            instrs.append(Instr(n.op, tuple(index[i.serial] for i in n.inputs), n.dtype, n.shape, n.attrs))
        index[n.serial] = len(instrs) - 1
    return Kernel(instrs, inputs, [index[t.serial] for t in group], list(group), group[0].shape,
                  group[0].device, kind="rowfuse", attrs=extra, operands=operands)
