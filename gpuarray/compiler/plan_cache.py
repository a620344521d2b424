"""Schedules remembered by the structure of the graph they were made for.

``schedule`` (compiler/schedule.py) groups nodes into kernels: fusion, epilogues, row fusion. For a
graph of the same structure as one seen before (the same ops, dtypes, shapes, attributes, devices
and wiring, the same nodes already evaluated, and the same breakers held outside the evaluation)
the answer is the same up to the nodes it refers to and the values of scalar constants, which are
run-time parameters of every kernel. So a repeated evaluation (a training step, a solver iteration,
a benchmark loop) looks its kernels up here instead of building them again: the graph walk that
computes the key is what remains of scheduling.

The key lists, in the walk's order, each node's structural key (``Node.skey``, set when the node is
made; a constant's value is not in it) and the walk positions of its inputs, or the dtype, shape
and device of a node already evaluated. A ``view`` of evaluated data is keyed without its offset
(only whether it is 0, which fusion decisions test): ``x[i:i + 256] * w`` in a loop over ``i`` (a
sliding window, SciPy's per-segment spectra, a row loop) is one structure, the offset a run-time
parameter of every kernel as a constant is; not where the graph writes into a region (``regions``
compares views' places with the writes'). A ``Template`` keeps the kernels with their nodes replaced
by walk positions; ``instantiate`` puts the new graph's nodes, constant values and view places back.

>>> import numpy as np, gpuarray as xp
>>> from gpuarray.compiler.schedule import schedule
>>> x = xp.asarray(np.ones(1 << 20, np.float32), device="wgpu:0")
>>> a, b = schedule([(x * 2 + 1)._node]), schedule([(x * 3 + 1)._node])
>>> a[0].signature == b[0].signature, [i.params for i in b[0].instrs if i.op == "const"]
(True, [(np.float32(3.0),), (np.float32(1.0),)])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .kernel import Instr, Kernel
from .regions import WRITES

ENABLED = True          # False: every evaluation schedules from scratch (tests compare the two)
CAPACITY = 512          # templates kept; the table is emptied when it is full


def walk(targets: Sequence[Any]) -> tuple[list[Any], dict[int, int], list[tuple] | None, list[int]]:
    """The unevaluated cone of ``targets`` in dependency order (an iterative depth-first walk that
    stops at evaluated nodes only: ``schedule``'s walk), the walk position of each node by serial,
    the structural parts of the key (None where a node has no structural key: made outside
    ``graph.node.make``) and the offsets of the views keyed without theirs. One walk gives all, so a
    repeated evaluation walks its graph once.

    Written with operators rather than method calls (``stack += ...``, ``del stack[-1]``): this
    runs for every evaluation, and each node costs no call but a leaf's device name."""
    order: list[Any] = []
    pos: dict[int, int] = {}
    parts: list[tuple] | None = []
    opened: dict[int, bool] = {}
    loose: list[int] = []           # walk positions of views of evaluated data keyed without their offset
    offsets: list[int] = []
    writes = False                  # a region write in the walk (its views keep their offsets in the key)
    n = 0
    for t in targets:
        stack = [t]
        while stack:
            node = stack[-1]
            s = node.serial
            if s in pos:
                del stack[-1]
                continue
            ins = node.inputs
            if ins and s not in opened and node.data is None:
                opened[s] = True
                stack += ins[::-1]          # its inputs first; a node reached twice is skipped
                continue
            del stack[-1]
            pos[s] = n
            n += 1
            order += (node,)
            if node.op in WRITES:
                writes = True
            if parts is not None:
                if node.data is not None:
                    parts += ((node.dtype, node.shape, getattr(node.device, "name", node.device)),)
                elif node.skey is None:
                    parts = None
                elif not ins:
                    parts += ((node.skey, ()),)
                elif not ins[1:]:
                    if node.op == "view" and ins[0].data is not None:
                        k = node.skey
                        parts += (((k[0], k[1], k[2], (node.attrs[0], "@0" if node.attrs[1] == 0 else "@"), k[4]),
                                   (pos[ins[0].serial],)),)
                        loose += (n - 1,)
                        offsets += (node.attrs[1],)
                    else:
                        parts += ((node.skey, (pos[ins[0].serial],)),)
                elif not ins[2:]:
                    parts += ((node.skey, (pos[ins[0].serial], pos[ins[1].serial])),)
                else:
                    parts += ((node.skey, tuple([pos[i.serial] for i in ins])),)
    if loose and parts is not None and writes:
        for p in loose:
            node = order[p]
            parts[p] = (node.skey, (pos[node.inputs[0].serial],))
        offsets = []
    return order, pos, parts, offsets


LOOSE = object()        # marks a key whose views' offsets were left out of the structure (its first item)


def structure(parts: list[tuple] | None, pos: dict[int, int], live: Sequence[Any],
              held: set[int] | None, offsets: Sequence[int] = ()) -> tuple | None:
    """The key of the graph walked into ``parts`` / ``pos`` (``walk``) with targets ``live`` and
    breakers ``held`` outside it; None where the walk found a node without a structural key. With
    ``offsets`` (``walk``'s), the key holds them beside the structure: an evaluation plan
    (``runtime/replay.py``) records the places its kernels read, a template (``lookup``) does not."""
    if parts is None:
        return None
    targets = tuple([pos[t.serial] for t in live])
    key = (tuple(parts), targets, None if held is None else frozenset([pos[s] for s in held if s in pos]))
    return (LOOSE, key, tuple(offsets)) if offsets else key


def loose_view(node: Any) -> bool:
    """Whether ``node`` is a view ``walk`` keys without its offset: one of evaluated data (``walk`` tests the
    same inline; where the graph writes into a region the offset goes back into the key, and templates and
    plans patch such views all the same)."""
    return node.op == "view" and node.data is None and node.inputs[0].data is not None


def loose_structure(key: tuple) -> tuple | None:
    """The structure of a key that holds its views' offsets beside it (``structure``), else None."""
    return key[1] if key[0] is LOOSE else None


@dataclass
class _KernelTemplate:
    instrs: list[Instr]
    consts: list[tuple[int, int]]       # (instruction, walk position of its constant node)
    views: list[tuple[int, int]]        # (instruction, walk position of its view node)
    inputs: list[int]                   # walk positions
    outputs: list[int]
    out_nodes: list[Any]                # walk positions, or a Result stand-in as it is
    out_shape: tuple
    device: int                         # walk position of a node on the kernel's device
    kind: str
    attrs: tuple
    operands: list[int]
    memo: dict                          # Kernel.memo of every kernel instantiated (its signature first)


class Template:
    """Kernels of one schedule with their nodes replaced by walk positions."""

    def __init__(self, parts: list[_KernelTemplate]) -> None:
        self.parts = parts

    @staticmethod
    def of(kernels: Sequence[Kernel], order: Sequence[Any]) -> Template | None:
        """The template of ``kernels`` scheduled for the walk ``order``, or None when a kernel refers
        to something the walk does not reach."""
        pos = {id(n): p for p, n in enumerate(order)}
        consts: dict[int, int] = {}
        views: dict[int, int] = {}
        first_dev: dict[int, int] = {}          # id of a device -> its first walk position (one walk, not one a kernel)
        for p, n in enumerate(order):
            first_dev.setdefault(id(n.device), p)
            if n.op == "const" and n.data is None:
                if id(n.attrs) in consts:       # two constants sharing one value tuple: not told apart
                    return None
                consts[id(n.attrs)] = p
            elif n.op == "view":
                q = views.setdefault(id(n.attrs), p)
                if q != p and (loose_view(n) or loose_view(order[q])):     # places that may differ next time
                    return None
        parts = []
        for k in kernels:
            if any(id(n) not in pos for n in k.inputs):
                return None
            outs: list[Any] = []
            for n in k.out_nodes:
                if hasattr(n, "serial"):
                    if id(n) not in pos:
                        return None
                    outs.append(pos[id(n)])
                else:
                    outs.append(n)
            dev = first_dev.get(id(k.device))
            if dev is None:
                dev = next((p for p, n in enumerate(order) if n.device == k.device), None)
                if dev is None:
                    return None
            cs, vs = [], []
            for i, ins in enumerate(k.instrs):
                if ins.op == "const":
                    cp = consts.get(id(ins.params))
                    if cp is None:      # a constant not taken from a node of the walk
                        return None
                    cs.append((i, cp))
                elif ins.op == "view":
                    vp = views.get(id(ins.params))
                    if vp is None:      # a view not taken from a node of the walk: its place is not known
                        return None
                    vs.append((i, vp))
            parts.append(_KernelTemplate(list(k.instrs), cs, vs, [pos[id(n)] for n in k.inputs], list(k.outputs),
                                         outs, k.out_shape, dev, k.kind, k.attrs, list(k.operands),
                                         {"signature": k.signature}))
        return Template(parts)

    def instantiate(self, order: Sequence[Any]) -> list[Kernel]:
        """The kernels for the walk ``order`` of a graph with this template's key."""
        out = []
        for t in self.parts:
            instrs = list(t.instrs)
            for i, p in t.consts:
                c = instrs[i]
                instrs[i] = Instr("const", c.args, c.dtype, c.shape, order[p].attrs)
            for i, p in t.views:
                v = instrs[i]
                a = order[p].attrs
                if a is not v.params:
                    instrs[i] = Instr("view", v.args, v.dtype, v.shape, a)
            out.append(Kernel(instrs, [order[p] for p in t.inputs], list(t.outputs),
                              [order[p] if type(p) is int else p for p in t.out_nodes], t.out_shape,
                              order[t.device].device, t.kind, t.attrs, list(t.operands)).with_memo(t.memo))
        return out


_table: dict[tuple, Template] = {}


def lookup(key: tuple | None) -> Template | None:
    """The template stored for ``key``."""
    return _table.get(loose_structure(key) or key) if key is not None and ENABLED else None


def store(key: tuple | None, kernels: Sequence[Kernel], order: Sequence[Any]) -> None:
    """Remember ``kernels`` (just scheduled for ``order``) under ``key``."""
    if key is None or not ENABLED:
        return
    t = Template.of(kernels, order)
    if t is None:
        return
    if len(_table) >= CAPACITY:
        _table.clear()
    _table[loose_structure(key) or key] = t


def clear() -> None:
    """Forget every template."""
    _table.clear()
