"""WGSL for the fusable index instructions: ``concat``, ``gather``, ``setslice`` and ``setstrided``.

Each output element reads its arguments at computed indices, so these fuse
with elementwise work like views do. Which argument an element comes from is
an ``if`` chain (only the taken branch is evaluated); everything emitted inside
a branch is forgotten when the branch closes, so no value leaks out of scope.
Sizes, offsets, slice starts and steps are ``prm`` values; the shader depends
only on the number of arguments, ranks, dtypes and (for concat and gather) the
axis.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.dtypes import WGSL_TYPE


def branches(g: Any, dtype: np.dtype, cases: list[tuple[str | None, Callable[[], str]]]) -> str:
    """``var r; if (c0) { r = f0(); } else if (c1) { ... } else { r = fn(); }``; returns ``r``.

    Conditions must only use names emitted before the chain (they are evaluated outside it).
    """
    if len(cases) == 1:
        return cases[0][1]()
    name = g.fresh("c")
    g.lines.append(f"  var {name}: {WGSL_TYPE[dtype]};")
    for n, (cond, fn) in enumerate(cases):
        if n == 0:
            g.lines.append(f"  if ({cond}) {{")
        elif cond is None:
            g.lines.append("  } else {")
        else:
            g.lines.append(f"  }} else if ({cond}) {{")
        saved = dict(g.memo)
        v = fn()
        g.lines.append(f"  {name} = {v};")
        g.memo = saved
    g.lines.append("  }")
    return name


def clamp_index(g: Any, v: str, dtype: np.dtype, n: str) -> str:
    """u32 index from an index value ``v``: negative values count from the end, then clamp to [0, n-1]."""
    t = WGSL_TYPE[dtype]
    hi = g.emit(f"{t}(max({n}, 1u) - 1u)", "h")
    if dtype.kind == "u":
        return g.emit(f"u32(select({v}, {hi}, {v} > {hi}))", "c")
    w = g.emit(f"select({v}, {v} + {t}({n}), {v} < {t}(0))", "w")
    w = g.emit(f"select({w}, {t}(0), {w} < {t}(0))", "w")
    return g.emit(f"u32(select({w}, {hi}, {w} > {hi}))", "c")


def _concat(g: Any, i: int, idx: tuple) -> str:
    ins = g.ins[i]
    (axis,) = ins.params
    m = g.multi(idx, i)
    j = m[axis]
    off = "0u"
    cases: list[tuple[str | None, Callable[[], str]]] = []
    last = len(ins.args) - 1
    for k, a in enumerate(ins.args):
        start = off
        cond = None
        if k < last:
            off = g.emit(f"{start} + {g.slot(('dim', g.rep[a], axis))}", "ei")
            cond = f"{j} < {off}"
        sub = m[:axis] + (f"({j} - {start})",) + m[axis + 1:]
        cases.append((cond, _reader(g, a, sub)))
    return branches(g, ins.dtype, cases)


def _reader(g: Any, a: int, sub: tuple) -> Callable[[], str]:
    return lambda: g.value(a, ("multi", sub))


def _gather(g: Any, i: int, idx: tuple) -> str:
    ins = g.ins[i]
    axis, mode = ins.params
    xa, ia = ins.args
    m = g.multi(idx, i)
    if mode == "take":
        k = len(g.ins[ia].shape)
        im, rest = m[axis:axis + k], m[axis + k:]
    else:
        im, rest = m, m[axis + 1:]
    v = g.value(ia, ("multi", tuple(im)))
    c = clamp_index(g, v, g.ins[ia].dtype, g.slot(("dim", g.rep[xa], axis)))
    return g.value(xa, ("multi", tuple(m[:axis]) + (c,) + tuple(rest)))


def _setslice(g: Any, i: int, idx: tuple) -> str:
    ins = g.ins[i]
    old, val = ins.args
    m = g.multi(idx, i)
    conds, q = [], []
    for d in range(len(m)):
        start = g.slot(("param", i, 0, d))
        step = g.slot(("param", i, 1, d))          # positive (write_region walks negative steps forwards)
        # the quotient and remainder of unsigned operands only: on the NVIDIA driver an i32 ``%`` of a negative
        # dividend came out as the unsigned one's (a[1::3] = v also wrote a[0]: 2^32 - 1 is a multiple of 3)
        t = g.emit(f"{m[d]} - {start}", "t")
        qd = g.emit(f"{t} / {step}", "q")
        conds.append(f"({m[d]} >= {start} && {t} % {step} == 0u && {qd} < {g.slot(('dim', g.rep[val], d))})")
        q.append(qd)
    inside = g.emit(" && ".join(conds) or "true", "inr")   # not "in": storage buffers are in0, in1, ...
    # select, not a branch: chains of assignments (x[i] = v in a loop) would nest ifs as deep as the
    # chain, which lavapipe miscompiled past ~80 levels. Outside the region the value is read at 0.
    qs = tuple(g.emit(f"select(0u, {qd}, {inside})", "q") for qd in q)
    v = g.value(val, ("multi", qs))
    return g.emit(f"select({g.value(old, idx)}, {v}, {inside})")


def _setstrided(g: Any, i: int, idx: tuple) -> str:
    """A base element's view index by dividing its offset from the view's start by each stride in
    turn (strides decreasing, views do not overlap: ``graph.views.write_view``)."""
    ins = g.ins[i]
    old, val = ins.args
    r0 = g.emit(f"i32({g.lin(idx, i)}) - i32({g.slot(('param', i, 0, 0))})", "t")
    conds, q, r = [f"{r0} >= 0"], [], r0
    for d in range(len(g.ins[val].shape)):
        st = f"i32({g.slot(('param', i, 1, d))})"
        qd = g.emit(f"{r} / {st}", "q")
        conds.append(f"{qd} < i32({g.slot(('dim', g.rep[val], d))})")
        r = g.emit(f"{r} - {qd} * {st}", "t")
        q.append(qd)
    conds.append(f"{r} == 0")
    inside = g.emit(" && ".join(conds), "inr")
    qs = tuple(g.emit(f"select(0u, u32({qd}), {inside})", "q") for qd in q)
    v = g.value(val, ("multi", qs))
    return g.emit(f"select({g.value(old, idx)}, {v}, {inside})")


def _setpart(g: Any, i: int, idx: tuple) -> str:
    """A complex value with its real (``which`` 0) or imaginary (1) part replaced."""
    ins = g.ins[i]
    old, val = ins.args
    (which,) = ins.params
    o, v = g.value(old, idx), g.value(val, idx)
    t = WGSL_TYPE[ins.dtype]
    return g.emit(f"{t}({v}, {o}.y)" if which == 0 else f"{t}({o}.x, {v})")


_RENDER = {"concat": _concat, "gather": _gather, "setslice": _setslice, "setstrided": _setstrided,
           "setpart": _setpart}


def index_value(g: Any, i: int, idx: tuple) -> str:
    """The value of index instruction ``i`` at ``idx`` (``render.wgsl._Gen`` calls this)."""
    return _RENDER[g.ins[i].op](g, i, idx)
