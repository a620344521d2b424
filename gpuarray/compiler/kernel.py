"""Kernel plans: a small SSA program over one output shape.

A ``Kernel`` is what a provider runs. Its instructions are:

- ``input``   a realized array read from a buffer (params: ``(k,)`` into ``inputs``)
- ``const``   a 0-d scalar, passed as a uniform (params: ``(value,)``)
- ``iota``    the linear index as a 1-d array of ``shape``
- ``view``    a strided view of its argument's C-contiguous layout
              (params: ``(strides, offset)``, in elements)
- ``reshape`` the argument's elements in C order, in a new shape
- ``astype``  a conversion to ``dtype``
- ``result``  a breaker kernel's own value at the output index (epilogues only)
- ``rowreduce`` a ``rowfuse`` kernel's reduction of its argument over the last axis, read at
              any element of the row (params: ``(rop,)``; see ``compiler/rowfuse.py``), or over
              the first axis with params ``(rop, 0)`` (column fusion, ``compiler/colfuse.py``)
- any op-table name: elementwise, operands broadcast to ``shape``

A kernel of another ``kind`` (a reduction, ...) computes its ``operands``
with these instructions (a fused prologue) and then does its own work. A
``reduce`` or ``matmul`` kernel may also have a fused *epilogue*: after the
prologue comes one ``result`` instruction (the breaker's value at the output
index), then elementwise instructions over it; ``outputs`` are the epilogue's
roots (the ``result`` itself among them when the breaker's value is needed
too). Without an epilogue a breaker kernel has no ``outputs`` and writes its
value to its one out node.

Shapes, strides, offsets and scalar values are runtime parameters; only the
structure (ops, dtypes, ranks, broadcast patterns) goes into ``signature``,
so one compiled pipeline serves every size and every scalar value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..core.ops import OPS
from ..graph.shapes import Shape, broadcast_pattern

# Fusable index instructions (beyond ``view``/``reshape``): each output element reads its
# arguments at computed indices. The value says whether the params are structural (part of
# the signature) or run-time values (sent in ``prm``).
#   concat    (axis,)            arguments joined along ``axis``
#   gather    (axis, mode)       arg 0 read at indices taken from arg 1 ("take" / "along")
#   setslice  (starts, steps)    arg 0 with the strided region replaced by arg 1
#   setstrided ((offset,), strides)  arg 0 with the elements of its strided view (arg 1's shape,
#                                 decreasing positive strides, in arg 0's C layout) replaced by arg 1
#   setpart   (which,)           complex arg 0 with its real (0) or imaginary (1) part replaced by arg 1
INDEX_OPS: dict[str, bool] = {"concat": True, "gather": True, "setslice": False, "setstrided": False,
                              "setpart": True}
# instructions a kernel computes inline (everything else needs a kernel of its own kind: a breaker)
FUSABLE_OPS = frozenset({"input", "const", "iota", "view", "reshape", "astype"}) | frozenset(OPS) | frozenset(INDEX_OPS)


@dataclass
class Instr:
    op: str
    args: tuple[int, ...]
    dtype: np.dtype
    shape: Shape
    params: tuple = ()

    def static(self, instrs: list[Instr]) -> tuple:
        """The structural part of this instruction (what the shader depends on)."""
        extra: tuple = ()
        if self.op in ("view", "reshape"):
            pats: tuple = ()
            extra = (len(instrs[self.args[0]].shape),)
        elif self.op == "rowreduce":
            pats = (broadcast_pattern(instrs[self.args[0]].shape, instrs[self.args[0]].shape),)
            extra = self.params
        elif self.op in INDEX_OPS:
            pats = ()
            extra = tuple(len(instrs[a].shape) for a in self.args) + (self.params if INDEX_OPS[self.op] else ())
        else:
            pats = tuple(broadcast_pattern(instrs[a].shape, self.shape) for a in self.args)
        return (self.op, self.args, self.dtype.str, len(self.shape), pats, extra)


class Signature(tuple):
    """A kernel signature: a tuple that keeps its hash (pipelines and shaders are looked up by
    signature on every dispatch, and hashing the nested tuple again costs microseconds)."""

    _hash: int

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            self._hash = h = tuple.__hash__(self)
            return h


_SUMMARIES: dict[tuple, str] = {}       # (signature, out_shape) -> Kernel.summary()


class Result(NamedTuple):
    """A stand-in graph node, its dtype and shape: the out node of a breaker kernel without its epilogue,
    and the inputs and out nodes of kernels the providers build themselves (blocks, tuning, linear
    algebra)."""

    dtype: np.dtype
    shape: Shape


@dataclass
class Kernel:
    instrs: list[Instr]
    inputs: list[Any]            # realized graph nodes, in ``input`` order
    outputs: list[int]           # instruction indices, all of shape ``out_shape``
    out_nodes: list[Any]         # graph nodes that receive the outputs
    out_shape: Shape
    device: Any = None
    kind: str = "elementwise"    # or a breaker op: "reduce", ...
    attrs: tuple = ()            # the breaker node's attrs (structural: part of the signature)
    operands: list[int] = field(default_factory=list)   # breaker inputs, as instruction indices
    _sig: tuple | None = field(default=None, repr=False)
    _res: int | None = field(default=None, repr=False)
    _size: int = field(default=-1, repr=False)
    # answers that depend only on what a plan_cache key fixes (structure, shapes, dtypes), shared by
    # every kernel instantiated from one template (providers keep cannot_run / needs_split there).
    # Not an init field: a kernel made by dataclasses.replace (another structure) starts without one;
    # ``with_memo`` attaches it
    memo: dict | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def result_index(self) -> int | None:
        """Index of the ``result`` instruction (a breaker kernel with a fused epilogue), else None."""
        if self._res is None:
            self._res = next((n for n, i in enumerate(self.instrs) if i.op == "result"), -1)
        return self._res if self._res >= 0 else None

    @property
    def result_dtype(self) -> np.dtype:
        """The dtype of the breaker's own value (its accumulators), epilogue or not."""
        r = self.result_index
        return self.instrs[r].dtype if r is not None else self.out_nodes[0].dtype

    def prologue_part(self) -> Kernel:
        """This breaker kernel without its epilogue: instructions and inputs up to the ``result``,
        one out node (a ``Result``) of the breaker's dtype and shape. ``self`` when it has none."""
        r = self.result_index
        if r is None:
            return self
        res = self.instrs[r]
        n_in = max((i.params[0] for i in self.instrs[:r] if i.op == "input"), default=-1) + 1
        part = Kernel(self.instrs[:r], self.inputs[:n_in], [], [Result(res.dtype, res.shape)], res.shape,
                      self.device, self.kind, self.attrs, list(self.operands))
        return part.with_memo(self.derived_memo(("prologue",)))

    def epilogue_inputs(self) -> list[int]:
        """The inputs (``k`` of ``in<k>``) that the epilogue reads, in order."""
        return self.memoized("epilogue_inputs", lambda: sorted(
            {self.instrs[i].params[0] for i in self._epilogue_cone() if self.instrs[i].op == "input"}))

    def _epilogue_cone(self) -> list[int]:
        need: set[int] = set()
        stack = list(self.outputs)
        while stack:
            i = stack.pop()
            if i not in need:
                need.add(i)
                stack.extend(self.instrs[i].args)
        return sorted(need)

    def with_epilogue_of(self, source: Kernel) -> Kernel:
        """This breaker kernel (without an epilogue) with ``source``'s epilogue: its ``result`` stands
        for this kernel's value. Inputs the epilogue reads follow this kernel's own, in the order
        of ``source.epilogue_inputs()`` (the multi-pass reduction's last pass)."""
        assert source.result_index is not None and self.result_index is None
        ks, plan, outs = self.memoized(("epilogue_plan",), lambda: self._epilogue_plan(source))
        instrs = list(self.instrs)
        for i, args, inp in plan:
            x = source.instrs[i]
            instrs.append(x if args is None else
                          Instr(x.op, args, x.dtype, x.shape, x.params if inp is None else (inp,)))
        return Kernel(instrs, [*self.inputs, *[source.inputs[k] for k in ks]], outs, list(source.out_nodes),
                      source.out_shape, self.device, self.kind, self.attrs,
                      list(self.operands)).with_memo(self.derived_memo(("epilogue",)))

    def _epilogue_plan(self, source: Kernel) -> tuple[list[int], list[tuple], list[int]]:
        """``with_epilogue_of``'s structure: the inputs of ``source`` its epilogue reads, each epilogue
        instruction as (index in ``source``, remapped args or None for the ``result``, new input
        number or None), and the remapped outputs."""
        r = source.result_index
        assert r is not None
        n_in = len(self.inputs)
        remap = {r: len(self.instrs)}
        ks = source.epilogue_inputs()
        new_k = {k: n_in + n for n, k in enumerate(ks)}
        plan: list[tuple] = [(r, None, None)]
        for i in source._epilogue_cone():
            if i == r:
                continue
            x = source.instrs[i]
            remap[i] = len(self.instrs) + len(plan)
            plan.append((i, tuple(remap[a] for a in x.args), new_k[x.params[0]] if x.op == "input" else None))
        return ks, plan, [remap[o] for o in source.outputs]

    @property
    def signature(self) -> tuple:
        """Structure only: ops, dtypes, ranks, broadcast patterns (kinds add their own parts), and whether the
        output has the shape each operand reduces (a row kernel writes a value per element or one per row: rows
        of one element, ``(33, 1)``, and a row value of ``(300, 3)`` had one signature, and one shader)."""
        if self._sig is None:
            ins = self.instrs
            self._sig = self.memoized("signature", lambda: Signature((
                self.kind, self.attrs, tuple(i.static(ins) for i in ins), tuple(self.outputs),
                tuple(self.operands), len(self.out_shape),
                tuple(ins[ins[q].args[0]].shape == self.out_shape for q in self.operands if ins[q].args))))
        return self._sig

    def with_memo(self, memo: dict | None) -> Kernel:
        """This kernel with ``memo`` attached (see ``memo``)."""
        self.memo = memo
        return self

    def memoized(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()``, kept in the template's memo under ``key`` where this kernel has one (the
        answer must depend only on its structure, shapes and dtypes, and on what ``key`` holds)."""
        memo = self.memo
        if memo is None:
            return compute()
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    def derived_memo(self, key: tuple) -> dict | None:
        """The memo of a kernel derived from this one by ``key`` (``prologue_part``, the reduction
        passes of providers/wgpu_reduce.py): as fixed by this kernel's structure and shapes as this
        one's, so shared by every kernel instantiated from one plan_cache template. None without one."""
        return None if self.memo is None else self.memoized(key, dict)

    @property
    def size(self) -> int:
        if self._size < 0:
            self._size = math.prod(self.out_shape)    # (np.prod costs microseconds per call)
        return self._size

    def ops(self) -> set[str]:
        return {i.op for i in self.instrs}

    def dtypes(self) -> set[np.dtype]:
        return {i.dtype for i in self.instrs}

    def summary(self) -> str:
        """One line: the output shape and what the kernel is (and its fused epilogue)."""
        key = (self.signature, self.out_shape)
        got = _SUMMARIES.get(key)
        if got is None:
            if len(_SUMMARIES) >= 4096:
                _SUMMARIES.clear()
            got = _SUMMARIES[key] = self._summary()
        return got

    def _summary(self) -> str:
        what = f"{len(self.outputs)} output(s)" if self.kind == "elementwise" else \
            f"regions: {len(self.attrs)} writes" if self.kind == "regions" else f"{self.kind}{self.attrs}"
        r = self.result_index
        if r is not None:
            ops = [i.op for i in self.instrs[r + 1:] if i.op not in ("input", "const")]
            what += f" + epilogue [{', '.join(dict.fromkeys(ops))}] -> {len(self.outputs)} output(s)"
        return f"kernel -> {self.out_shape} ({what})"

    def describe(self) -> str:
        lines = [self.summary()]
        r = self.result_index
        for n, ins in enumerate(self.instrs):
            if n == r:
                lines.append("  epilogue (at each output element):")
            out = f"  -> out{self.outputs.index(n)}" if r is not None and n in self.outputs else ""
            lines.append(f"  %{n} = {ins.op}{list(ins.args)} : {ins.dtype}{list(ins.shape)}{out}")
        return "\n".join(lines)
