"""Flat-index evaluation of a reduction's fused prologue (used by ``wgsl_reduce``).

When the reduced axes of the operand form one contiguous block of dims, the
operand is an ``(O, L, I)`` array: ``O`` outer kept elements, ``L`` reduced
ones, ``I`` inner kept ones, and element ``(o, k, i)`` sits at the flat index
``(o * L + k) * I + i`` of the operand's C order. When, in addition, every
array the prologue reads at the operand's own shape is an input (or a
reshape of one), that input holds the element at that same flat index, so
the prologue needs no per-element index arithmetic at all, and inputs can be
read four elements at a time (``vec4`` loads).

Values that the prologue broadcasts along every reduced axis (the ``mean``
that ``var`` subtracts, a scalar, a per-row weight of a row reduction) depend
only on the output index; ``FlatGen`` evaluates them once, before the loop
(``hoisted`` lines), from the kept part of the output's multi-index.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.kernel import INDEX_OPS, Kernel
from ..graph.shapes import broadcast_pattern
from .wgsl import Idx, _Gen

COMPONENTS = ("x", "y", "z", "w")


def axes_block(ndim: int, axes: tuple[int, ...]) -> tuple[int, int] | None:
    """``(a, b)`` when the reduced ``axes`` are the dims ``a .. b-1``, else None.
    No axes at all is the empty block at the end (``I`` = 1, ``L`` = 1)."""
    if not axes:
        return (ndim, ndim)
    a, b = min(axes), max(axes) + 1
    return (a, b) if tuple(range(a, b)) == tuple(sorted(axes)) else None


def block_sizes(shape: tuple[int, ...], block: tuple[int, int]) -> tuple[int, int, int]:
    """``(O, L, I)`` of an operand of ``shape`` reduced over the dims of ``block``."""
    a, b = block
    return math.prod(shape[:a]), math.prod(shape[a:b]), math.prod(shape[b:])


_FLAT_CACHE: dict[tuple, frozenset[int] | None] = {}


def flat_inputs(kernel: Kernel, op_i: int, axes: tuple[int, ...]) -> frozenset[int] | None:
    """The inputs (``k`` of ``in<k>``) read at the operand's flat index, or None when the
    prologue cannot be evaluated by flat index (a view, an index op, an array broadcast
    along a reduced axis ...). Structural: depends on the kernel signature only (cached)."""
    key = (kernel.signature, op_i, axes)
    if key not in _FLAT_CACHE:
        if len(_FLAT_CACHE) > 4096:
            _FLAT_CACHE.clear()
        _FLAT_CACHE[key] = _flat_inputs(kernel, op_i, axes)
    return _FLAT_CACHE[key]


def _flat_inputs(kernel: Kernel, op_i: int, axes: tuple[int, ...]) -> frozenset[int] | None:
    ins = kernel.instrs
    nd = len(ins[op_i].shape)
    if axes_block(nd, axes) is None:
        return None
    found: set[int] = set()
    stack, seen = [op_i], set()
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        x = ins[i]
        if x.op == "input":
            found.add(x.params[0])
        elif x.op == "const":
            pass
        elif x.op == "iota":
            if nd != 1:
                return None
        elif x.op == "reshape":
            if ins[x.args[0]].op != "input":
                return None
            found.add(ins[x.args[0]].params[0])
        elif x.op == "view" or x.op in INDEX_OPS:
            return None
        else:                       # astype and the op table: same-shape args recurse, others are hoisted
            for a in x.args:
                pat = broadcast_pattern(ins[a].shape, x.shape)
                if pat is None:
                    stack.append(a)
                    continue
                lead = len(x.shape) - len(pat)
                if any(d >= lead and not pat[d - lead] for d in axes):
                    return None     # varies along a reduced axis: needs the reduced multi-index
    return frozenset(found)


def vector_ok(kernel: Kernel, inputs: frozenset[int]) -> bool:
    """Whether the flat inputs can be read as ``vec4`` (complex storage is already a vector)."""
    return all(kernel.inputs[k].dtype.kind != "c" for k in inputs)


class FlatGen(_Gen):
    """``_Gen`` that evaluates the prologue at registered flat-index names.

    - ``flat(name, out)`` registers the WGSL name of a flat index whose element belongs
      to the output named by the WGSL expression ``out`` (``m``, ``m + 2u`` ...);
    - ``flat(name, out, (q, c))`` adds that the element is component ``c`` of ``vec4``
      number ``q`` of every vector input (``vec_inputs``: declared ``array<vec4<T>>``);
    - values at other indices (hoisted: broadcast along the reduced axes, consts) are
      emitted into ``hoisted`` rather than ``lines``.
    """

    def __init__(self, kernel: Kernel, op_i: int, axes: tuple[int, ...], vec_inputs: set[int]) -> None:
        super().__init__(kernel)
        self.op_i = op_i
        self.axes = axes
        self.vec_inputs = vec_inputs
        self.hoisted: list[str] = []
        self._flat: dict[str, tuple[str, tuple[str, int] | None]] = {}
        self._kept: dict[str, tuple[str, ...]] = {}
        self._hoisting = False
        self.inline = False      # True: emit everything where it is asked for (the epilogue, after the loop)

    def flat(self, name: str, out: str, comp: tuple[str, int] | None = None) -> Idx:
        self._flat[name] = (out, comp)
        return ("lin", name)

    def preload(self, q: str) -> None:
        """Emit the ``vec4`` loads of every vector input at ``q`` now (loads first, then math)."""
        for k in sorted(self.vec_inputs):     # always fresh: ``q`` names repeat in sibling blocks
            self.memo[("vload", k, q)] = self.emit(f"in{k}[{q}]", "ld")

    def kept_multi(self, out: str) -> tuple[str, ...]:
        """The operand multi-index of output ``out`` (kept dims; "0u" on reduced dims),
        its arithmetic emitted into ``hoisted``."""
        if out not in self._kept:
            src = self.ins[self.op_i]
            rep = self.rep[self.op_i]
            nd = len(src.shape)
            names = ["0u"] * nd
            kept = [d for d in range(nd) if d not in self.axes]
            rem = f"({out})"
            for n, d in enumerate(reversed(kept)):
                if n == len(kept) - 1:
                    names[d] = self._hoist_emit(rem, "o")
                    break
                dim = self.slot(("dim", rep, d))
                names[d] = self._hoist_emit(f"{rem} % {dim}", "o")
                rem = self._hoist_emit(f"{rem} / {dim}", "oq")
            self._kept[out] = tuple(names)
        return self._kept[out]

    def _hoist_emit(self, expr: str, prefix: str) -> str:
        name = self.fresh(prefix)
        self.hoisted.append(f"  let {name} = {expr};")
        return name

    def multi(self, idx: Idx, i: int) -> tuple[str, ...]:
        if idx[0] == "lin" and idx[1] in self._flat:
            return self.kept_multi(self._flat[idx[1]][0])
        return super().multi(idx, i)

    def value(self, i: int, idx: Idx) -> str:
        hoist = not (self._hoisting or self.inline) and (self.ins[i].op == "const" or idx[0] == "multi")
        if not hoist:
            return super().value(i, idx)
        self._hoisting = True
        saved, self.lines = self.lines, self.hoisted
        try:
            return super().value(i, idx)
        finally:
            self.hoisted, self.lines = self.lines, saved
            self._hoisting = False

    def _value(self, i: int, idx: Idx) -> str:
        ins = self.ins[i]
        if ins.op != "input" or ins.params[0] not in self.vec_inputs:
            return super()._value(i, idx)
        k = ins.params[0]
        comp = self._flat.get(idx[1], ("", None))[1] if idx[0] == "lin" else None
        if comp is not None:
            q, c = comp
            key = ("vload", k, q)
            if key not in self.memo:
                self.memo[key] = self.emit(f"in{k}[{q}]", "ld")
            expr = f"{self.memo[key]}.{COMPONENTS[c]}"
        else:                       # one element of a vector-declared input
            lin = self.lin(idx, i)
            expr = f"in{k}[({lin}) >> 2u][({lin}) & 3u]"
        return self.emit(f"{expr} != 0u" if ins.dtype == np.bool_ else expr)


def trips(two: list[str], one: list[str], step: str, end: str, single: bool,
          pre_two: Sequence[str] = (), pre_one: Sequence[str] = (), k: str = "k") -> list[str]:
    """The loop over ``k`` (declared before it) to ``end``: ``two`` elements a trip (``k`` and ``k + step``,
    after ``pre_two``) and a last ``one`` (after ``pre_one``), or ``one`` a trip when ``single`` (a heavy
    prologue rendered once: ``wgsl_size.heavy``)."""
    if single:
        return ["  loop {", f"    if ({k} >= {end}) {{ break; }}", *pre_one, *["  " + ln for ln in one],
                f"    {k} = {k} + {step};", "  }"]
    return ["  loop {", f"    if ({k} + {step} >= {end}) {{ break; }}", *pre_two, *["  " + ln for ln in two],
            f"    {k} = {k} + 2u * {step};", "  }",
            f"  if ({k} < {end}) {{", *pre_one, *["  " + ln for ln in one], "  }"]


def word_walk(first: str, two: list[str] | None, one: list[str], edge: list[str], edges: str = "chunk == 0u",
              lane: str = "lid") -> list[str]:
    """The walk over one output's flat elements ``[s0, e0)`` (``s0``, ``e0`` and ``step`` defined before it) as
    ``vec4`` words: words ``qs + first``, ``+ step`` ... two a trip (``two``: lines for the words ``qa`` and
    ``qb``, loads first), a last single word (``one``: ``qa``), then the unaligned head ``[s0, he)`` and tail
    ``[ts, e0)``, at most 3 elements each, one element a lane (``edge``: lines for the flat index ``fs``) by
    lanes ``lane`` of the threads where ``edges`` holds. ``two`` None: one word a trip (a heavy prologue,
    ``wgsl_size.heavy``). Shared by the row reductions and argmax / argmin."""
    def ind(lines: list[str], n: int) -> list[str]:
        return [" " * n + ln.strip() for ln in lines]
    words = trips(ind(two or [], 2), ind(one, 2), "step", "qe", two is None,
                  ["    let qa = q;", "    let qb = q + step;"], ["    let qa = q;"], "q")
    return ["  let qs = (s0 + 3u) / 4u;",
            "  let qe = max(e0 / 4u, qs);",
            "  let he = min(e0, qs * 4u);          // head: [s0, he)",
            # (a row inside one word, [1, 2) or [2, 3): qe * 4 passes e0, and e0 - ts wrapped around to read past it)
            "  let ts = min(max(qe * 4u, he), e0); // tail: [ts, e0)",
            f"  var q = qs + {first};",
            *words,
            f"  if ({edges}) {{",
            "    var fs = 0u;",
            "    var has = false;",
            f"    if ({lane} < he - s0) {{ fs = s0 + {lane}; has = true; }}",
            f"    else if ({lane} >= 4u && {lane} - 4u < e0 - ts) {{ fs = ts + {lane} - 4u; has = true; }}",
            "    if (has) {",
            *ind(edge, 6),
            "    }",
            "  }"]


def vector_types(kernel: Kernel, vec_inputs: set[int], types: list[str]) -> list[str]:
    """Binding types with the vector inputs as ``vec4<T>``."""
    return [f"vec4<{t}>" if k in vec_inputs else t for k, t in enumerate(types)]


def describe(kernel: Kernel) -> dict[str, Any]:
    """Which paths a reduce kernel can take (for tests and ``explain``)."""
    rop, axes = kernel.attrs
    op_i = kernel.operands[0]
    fi = flat_inputs(kernel, op_i, axes)
    return {"block": axes_block(len(kernel.instrs[op_i].shape), axes), "flat": fi is not None,
            "vector": fi is not None and vector_ok(kernel, fi)}
