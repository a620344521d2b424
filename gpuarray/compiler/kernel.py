"""Kernel plans: a small SSA program over one output shape.

A ``Kernel`` is what a provider runs. Its instructions are:

- ``input``   a realized array read from a buffer (params: ``(k,)`` into ``inputs``)
- ``const``   a 0-d scalar, passed as a uniform (params: ``(value,)``)
- ``iota``    the linear index as a 1-d array of ``shape``
- ``view``    a strided view of its argument's C-contiguous layout
              (params: ``(strides, offset)``, in elements)
- ``reshape`` the argument's elements in C order, in a new shape
- ``astype``  a conversion to ``dtype``
- any op-table name: elementwise, operands broadcast to ``shape``

A kernel of another ``kind`` (a reduction, ...) computes its ``operands``
with these instructions (a fused prologue) and then does its own work.

Shapes, strides, offsets and scalar values are runtime parameters; only the
structure (ops, dtypes, ranks, broadcast patterns) goes into ``signature``,
so one compiled pipeline serves every size and every scalar value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..graph.shapes import Shape, broadcast_pattern

# Fusable index instructions (beyond ``view``/``reshape``): each output element reads its
# arguments at computed indices. The value says whether the params are structural (part of
# the signature) or run-time values (sent in ``prm``).
#   concat    (axis,)            arguments joined along ``axis``
#   gather    (axis, mode)       arg 0 read at indices taken from arg 1 ("take" / "along")
#   setslice  (starts, steps)    arg 0 with the strided region replaced by arg 1
INDEX_OPS: dict[str, bool] = {"concat": True, "gather": True, "setslice": False}


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
        elif self.op in INDEX_OPS:
            pats = ()
            extra = tuple(len(instrs[a].shape) for a in self.args) + (self.params if INDEX_OPS[self.op] else ())
        else:
            pats = tuple(broadcast_pattern(instrs[a].shape, self.shape) for a in self.args)
        return (self.op, self.args, self.dtype.str, len(self.shape), pats, extra)


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

    @property
    def signature(self) -> tuple:
        """Structure only: ops, dtypes, ranks, broadcast patterns (kinds add their own parts)."""
        if self._sig is None:
            self._sig = (self.kind, self.attrs, tuple(i.static(self.instrs) for i in self.instrs),
                         tuple(self.outputs), tuple(self.operands), len(self.out_shape))
        return self._sig

    @property
    def size(self) -> int:
        return int(np.prod(self.out_shape, dtype=np.int64))

    def ops(self) -> set[str]:
        return {i.op for i in self.instrs}

    def dtypes(self) -> set[np.dtype]:
        return {i.dtype for i in self.instrs}

    def summary(self) -> str:
        """One line: the output shape and what the kernel is."""
        what = f"{len(self.outputs)} output(s)" if self.kind == "elementwise" else f"{self.kind}{self.attrs}"
        return f"kernel -> {self.out_shape} ({what})"

    def describe(self) -> str:
        lines = [self.summary()]
        for n, ins in enumerate(self.instrs):
            lines.append(f"  %{n} = {ins.op}{list(ins.args)} : {ins.dtype}{list(ins.shape)}")
        return "\n".join(lines)
