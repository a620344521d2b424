"""Render a kernel plan as one WGSL compute shader.

The output index ``gi`` is spread over a 2-D grid of workgroups (at most
65535 per dimension). Operands are inlined as SSA ``let``s; views and
broadcasting become index arithmetic, shapes and strides are read from the
``prm`` parameter array, and scalars are uniforms too, so the source depends
only on ``kernel.signature``.

>>> import numpy as np
>>> from gpuarray.graph import leaf, make
>>> from gpuarray.compiler import schedule
>>> a = leaf(np.arange(4, dtype=np.float32), "cpu")
>>> k = schedule([make("exp", (a,), a.dtype, a.shape)])[0]
>>> "fn main" in render(k).source
True
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..compiler.kernel import INDEX_OPS, Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE, WGSL_SUFFIX, WGSL_TYPE, real_dtype
from ..core.ops import OPS
from ..graph.shapes import contiguous_strides
from . import const_tags as _tags
from .wgsl_cast import cast, wrap_small
from .wgsl_f64 import F64_DEVICE_OPS
from .wgsl_index import index_value
from .wgsl_lib import helpers_for
from .wgsl_parts import _WIDE, Idx, declare_bindings, input_types, store_value
from .wgsl_vn import ValueNumbers, opaque

WORKGROUP = 256

# float32 binary ops whose result with both operands of one value is not a constant: rendered as they are
_NO_SELF_FOLD = frozenset({"multiply", "add", "maximum", "minimum"})
# float and complex ops of one value with itself whose second operand is hidden from the compiler
_LAUNDER = frozenset({"divide", "floor_divide", "remainder", "fmod"})
# value-class tests: their operand, where this kernel computes it (an op, a cast, a reduction's result), is hidden
_CLASS_TESTS, _LOADS = frozenset({"isnan", "isinf", "isfinite"}), frozenset({"input", "const", "view", "reshape"})
# float32 ops with a helper taking a thread's four vec4 lanes at once (render/wgsl_f32.py): one call a thread
VEC4_HELPERS = {"tanh": "ga_tanhx4_f32"}


@dataclass
class Rendered:
    """WGSL source plus how to fill its parameter arrays for any kernel of the same signature."""

    source: str
    slots: list[tuple]                 # prm[1:] specs
    wide: dict[str, list[Any]]         # 64-bit const arrays: WGSL type -> const instr indices
                                       # (or (index, part) for a part of a complex128 const)
    n_inputs: int
    n_outputs: int
    vec: int = 1                       # elements per thread: 4 = vec4 loads and stores (render(kernel, 4))
    per_thread: int = 1                # vec-sized items per thread: > 1 for the grid-stride loop of vec4 kernels
    tile: int = 0                      # > 0: tile x tile outputs per workgroup (render/wgsl_tiled.py)

    def meta(self, kernel: Kernel, extra: dict[str, int] | None = None) -> np.ndarray:
        """The ``prm`` array: [size, slot values...]; ``("extra", name)`` slots come from ``extra``."""
        vals = [kernel.size]
        ins = kernel.instrs
        tags: list[tuple] | None = [] if _tags.sink.tags is not None else None    # recorded for replay
        for spec in self.slots:
            kind = spec[0]
            if kind == "dim":
                vals.append(ins[spec[1]].shape[spec[2]])
            elif kind == "cstride":
                vals.append(contiguous_strides(ins[spec[1]].shape)[spec[2]])
            elif kind == "vstride":
                vals.append(ins[spec[1]].params[0][spec[2]])
            elif kind == "voffset":     # tagged: a replay gives a moved view its new offset (runtime/replay.py)
                if tags is not None:
                    tags.append((len(vals), ins[spec[1]].params, _tags.VOFFSET, None))
                vals.append(ins[spec[1]].params[1])
            elif kind == "param":          # ("param", instr, j, d): params[j][d] of an index op
                vals.append(ins[spec[1]].params[spec[2]][spec[3]])
            elif kind == "extra":
                vals.append((extra or {})[spec[1]])
            elif kind == "zero":           # ("zero"[, n]): a +0.0 the compiler cannot see (bits of f32 and u32 0)
                vals.append(0)
            elif kind == "c32":         # ("c32", i[, part]): part 0 / 1 of a complex64 is its real / imaginary
                c = ins[spec[1]]
                part = spec[2] if len(spec) > 2 else None
                if tags is not None:
                    tags.append((len(vals), c.params, c.dtype, part))
                vals.append(_tags.word(c.params, c.dtype, part))
        out = np.array([v & 0xFFFFFFFF for v in vals], dtype=np.uint32)
        if tags:
            _tags.note(out, tags)
        return out

    def wide_values(self, kernel: Kernel, tags: list[list[tuple]] | None = None) -> dict[str, np.ndarray]:
        """The 64-bit constant arrays by WGSL type; with ``tags``, each array's tags
        (``render/const_tags.py``) appended to it in the same (sorted) order."""
        out = {}
        for t in sorted(self.wide):
            dt = {"f64": np.float64, "i64": np.int64, "u64": np.uint64}[t]
            vals = []
            tl = []
            for j, i in enumerate(self.wide[t]):
                c, part = (kernel.instrs[i[0]], i[1]) if isinstance(i, tuple) else (kernel.instrs[i], None)
                vals.append(_tags.wide(c.params, part))
                tl.append((j, c.params, c.dtype, part))
            out[t] = np.array(vals, dtype=dt)
            if tags is not None:
                tags.append(tl)
        return out


def _suffix(dtype: np.dtype) -> str:
    return WGSL_SUFFIX[dtype]


def fill(tmpl: str, dtype: np.dtype, args: Sequence[str]) -> str:
    """An op template with its placeholders filled for operands of ``dtype``."""
    expr = (tmpl.replace("{T}", WGSL_TYPE[dtype]).replace("{S}", _suffix(dtype))
            .replace("{F}", WGSL_TYPE[real_dtype(dtype)]).replace("{BITS}", f"{dtype.itemsize * 8}u"))
    for n, v in enumerate(args):
        expr = expr.replace("{" + str(n) + "}", v)
    return expr


def _shape_classes(kernel: Kernel) -> list[int]:
    """Representative instruction per shape-equality class that holds for the whole signature."""
    parent = list(range(len(kernel.instrs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for n, ins in enumerate(kernel.instrs):
        if ins.op in ("view", "reshape", "iota", "input", "const") or ins.op in INDEX_OPS:
            continue
        for a in ins.args:
            if kernel.instrs[a].shape == ins.shape:
                union(n, a)
    if kernel.kind == "elementwise":    # its outputs have one shape (a fused epilogue's may not)
        for o in kernel.outputs[1:]:
            union(kernel.outputs[0], o)
    return [find(i) for i in range(len(kernel.instrs))]


class _Gen:
    def __init__(self, kernel: Kernel) -> None:
        self.k = kernel
        self.ins = kernel.instrs
        self.rep = _shape_classes(kernel)
        self.lines: list[str] = []
        self.slots: dict[tuple, int] = {}
        self.wide: dict[str, list[Any]] = {}
        self.memo: dict[tuple, str] = {}
        self.alias: dict[str, tuple[str, bool]] = {}    # name -> (root name, negated): +x, -x, -(-x)
        self.vn = ValueNumbers()                         # which names hold one value (render/wgsl_vn.py)
        self.count = 0
        self.fast = False                  # config(fast_math=True): the op table's "fast" templates
        self.lane: int | None = None       # vec4 rendering: the lane whose element index is e{lane}
        self.lane_miss = False             # an input was read at another index: no vec4 form
        # vec4 rendering with inputs read elsewhere (a broadcast row, a view, a gather): those inputs, bound
        # as arrays of scalars and read lane by lane (None: no such inputs, such a read is a ``lane_miss``)
        self.scalar_in: set[int] | None = None
        self.result: str | None = None     # a fused epilogue's ``result``: the breaker's value (WGSL)
        self.named: dict[int, str] = {}    # instructions whose value is a WGSL name (rowfuse's rowreduce)
        # float32 and float64 values whose sin and cos are both taken: one shared range reduction (ga_sincos)
        trig: dict[int, set[str]] = {}
        for ins in kernel.instrs:
            if ins.op in ("sin", "cos") and ins.dtype in _SINCOS and ins.shape == kernel.instrs[ins.args[0]].shape:
                trig.setdefault(ins.args[0], set()).add(ins.op)
        self.sincos = {a for a, ops in trig.items() if len(ops) == 2}

    def fresh(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def emit(self, expr: str, prefix: str = "v") -> str:
        name = self.fresh(prefix)
        self.lines.append(f"  let {name} = {expr};")
        self.vn.note(name, expr)
        return name

    def hidden(self, v: str, dt: np.dtype) -> str:
        """``v`` of ``dt`` hidden from the compiler's algebra (``wgsl_vn.opaque``), by a zero of its own (a value
        hidden twice by one zero is ``v ^ z ^ z``, which lavapipe saw to be ``v``)."""
        return opaque(v, dt, self.slot(("zero", sum(s[0] == "zero" for s in self.slots))))

    def slot(self, spec: tuple) -> str:
        if spec not in self.slots:
            self.slots[spec] = len(self.slots) + 1
        return f"prm[{self.slots[spec]}]"

    def multi(self, idx: Idx, i: int) -> tuple[str, ...]:
        if idx[0] == "multi":
            return idx[1]
        nd = len(self.ins[i].shape)
        if nd == 0:
            return ()
        if nd == 1:
            return (idx[1],)
        key = ("multi", idx, self.rep[i])
        if key in self.memo:
            return tuple(self.memo[key].split(","))
        rem = idx[1]
        out = [""] * nd
        for d in range(nd - 1, 0, -1):
            dim = self.slot(("dim", self.rep[i], d))
            out[d] = self.emit(f"{rem} % {dim}", "m")
            rem = self.emit(f"{rem} / {dim}", "q")
        out[0] = rem
        self.memo[key] = ",".join(out)
        return tuple(out)

    def lin(self, idx: Idx, i: int) -> str:
        if idx[0] == "lin":
            return idx[1]
        m = idx[1]
        if not m:
            return "0u"
        key = ("lin", idx, self.rep[i])
        if key not in self.memo:
            terms = [f"{m[d]} * {self.slot(('cstride', self.rep[i], d))}" for d in range(len(m) - 1)]
            terms.append(m[-1])
            self.memo[key] = self.emit(" + ".join(terms), "l")
        return self.memo[key]

    def value(self, i: int, idx: Idx) -> str:
        ins = self.ins[i]
        if idx[0] == "multi" and len(idx[1]) == 1 and len(ins.shape) == 1:
            # a 1-D multi-index is the linear index: one memo key, so that a value read by a
            # gather's index or a broadcast (histogram's bins) is computed once, not once per form
            idx = ("lin", idx[1][0])
        key = (i, None) if ins.op == "const" else (i, idx)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = out = self._value(i, idx)
        return out

    def _value(self, i: int, idx: Idx) -> str:
        ins = self.ins[i]
        op, dt = ins.op, ins.dtype
        if op == "input":
            k = ins.params[0]
            expr = f"in{k}[{self.lin(idx, i)}]"
            if self.lane is not None:
                own = idx == ("lin", f"e{self.lane}")
                if self.scalar_in is None:
                    self.lane_miss = self.lane_miss or not own
                    expr = f"x{k}[{self.lane}]"
                elif own and k not in self.scalar_in:
                    expr = f"x{k}[{self.lane}]"
                else:
                    self.scalar_in.add(k)
            return self.emit(f"{expr} != 0u" if dt == np.bool_ else expr)
        if op == "const":
            if dt.kind == "c":
                ft = WGSL_TYPE[real_dtype(dt)]
                if ft in _WIDE:
                    lst = self.wide.setdefault(ft, [])
                    lst += [(i, 0), (i, 1)]
                    return self.emit(f"vec2<{ft}>({_WIDE[ft]}[{len(lst) - 2}], {_WIDE[ft]}[{len(lst) - 1}])")
                re, im = self.slot(("c32", i, 0)), self.slot(("c32", i, 1))
                return self.emit(f"vec2<f32>(bitcast<f32>({re}), bitcast<f32>({im}))")
            st = WGSL_STORAGE_TYPE[dt]
            if st in _WIDE:
                lst = self.wide.setdefault(st, [])
                lst.append(i)
                return self.emit(f"{_WIDE[st]}[{len(lst) - 1}]")
            raw = self.slot(("c32", i))
            if dt == np.bool_:
                return self.emit(f"{raw} != 0u")
            return self.emit(raw if st == "u32" else f"bitcast<{st}>({raw})")
        if i in self.named:
            return self.named[i]
        if op == "result":
            assert self.result is not None, "the breaker's value is read only by its epilogue"
            return self.emit(self.result)
        if op == "iota":
            return self.emit(self._cast(self.lin(idx, i), np.dtype(np.uint32), dt))
        if op == "rprev":           # a regions pass's read of its result (render/wgsl_regions.py)
            expr = f"out0[{self.lin(idx, i)}]"
            return self.emit(f"{expr} != 0u" if dt == np.bool_ else expr)
        if op == "view":
            m = self.multi(idx, i)
            terms = [f"i32({self.slot(('voffset', i))})"]
            terms += [f"i32({m[d]}) * i32({self.slot(('vstride', i, d))})" for d in range(len(m))]
            return self.value(ins.args[0], ("lin", self.emit(f"u32({' + '.join(terms)})", "l")))
        if op == "reshape":
            return self.value(ins.args[0], ("lin", self.lin(idx, i)))
        if op in INDEX_OPS:
            return index_value(self, i, idx)
        if op == "astype":
            src = self.ins[ins.args[0]]
            return self.emit(self._cast(self.value(ins.args[0], idx), src.dtype, dt))
        if op in ("sin", "cos") and ins.args[0] in self.sincos and not self.fast:
            v = self.value(ins.args[0], idx)
            key = ("sincos", v)
            if key not in self.memo:
                self.memo[key] = self.emit(f"ga_sincos_{_SINCOS[dt]}({v})", "sc")
            return self.emit(f"{self.memo[key]}.{'x' if op == 'sin' else 'y'}")
        if (op in VEC4_HELPERS and self.lane is not None and dt == np.float32 and not self.fast
                and idx == ("lin", f"e{self.lane}")):
            return self.emit(f"{self._four_lanes(i)}[{self.lane}]")
        opdef = OPS[op]
        vals = []
        for a in ins.args:
            arg = self.ins[a]
            if arg.shape == ins.shape:
                vals.append(self.value(a, idx))
            else:
                m = self.multi(idx, i)
                lead = len(ins.shape) - len(arg.shape)
                am = tuple("0u" if (arg.shape[d] == 1 and ins.shape[lead + d] != 1) else m[lead + d]
                           for d in range(len(arg.shape)))
                vals.append(self.value(a, ("multi", am)))
        odt = self.ins[ins.args[-1]].dtype
        if op in _CLASS_TESTS and odt.kind in "fc" and self.ins[ins.args[0]].op not in _LOADS:
            # isnan / isinf / isfinite of a value this kernel computes, hidden: the H200's compiler took a float64 sum
            # for finite (SciPy's logsumexp: where(isfinite(a + b), a + b, c) in a sum's epilogue kept inf and NaN)
            vals[0] = self.emit(self.hidden(vals[0], odt))
        tmpl = opdef.template("e" if odt == np.float16 else odt.kind, fast=self.fast and odt == np.float32)
        roots = [self.alias.get(v) or self.alias.get(self.vn.of(v), (v, False)) for v in vals]
        same = len(roots) == 2 and self.vn.of(roots[0][0]) == self.vn.of(roots[1][0])     # one value (wgsl_vn.py)
        if op in _LAUNDER and odt.kind in "fc" and (same or self.vn.shares_factor(vals[0], vals[1])):
            # x / x, x % x of one value: the H200's compiler gave float64 x / x = 1 at x = 0, inf and NaN (and
            # complex128 1 + nan i for inf parts); the divisor hidden keeps it from using the operands' equality
            vals[1] = self.emit(self.hidden(vals[1], odt))
        if (op in ("add", "subtract") and odt.kind in "fc" and not same or op == "multiply" and odt.kind == "c") \
                and self.vn.common(vals[0], vals[1]) or (op == "subtract" and odt.kind in "fc" or op == "negative"
                                                         and odt.kind == "f") and self.vn.is_sum(vals[-1]):
            # a * c + b * c, which compilers distribute (wgsl_vn.py): the second term hidden; so are a complex
            # product's related operands (conj(b) * b: x*y + (-y)*x, -0 on lavapipe) and a sum taken away or negated
            vals[-1] = self.emit(self.hidden(vals[-1], odt))
        expr = fill(tmpl, odt, vals)
        if op in ("add", "subtract") and odt.kind in "fc" and same and (
                (roots[0][1] == roots[1][1]) == (op == "subtract")):
            # x - x, x + (-x), x - (+x) of one SSA value: compilers fold these to 0 (lavapipe and
            # the H200 did, complex vec2 values too), but with x = inf or NaN the result is NaN
            # (of a complex x, in each part by itself: NumPy's (inf+0j) - (inf+0j) is nan+0j)
            rdt = real_dtype(odt)
            s, r = _suffix(rdt), vals[0]        # (+-x: the same NaNs and infinities; a name in scope)
            parts = [r] if odt.kind == "f" else [f"{r}.x", f"{r}.y"]
            zeros = [f"select(ga_nan_{s}(), {WGSL_TYPE[rdt]}(0), !(ga_isnan_{s}({x}) || ga_isinf_{s}({x})))"
                     for x in parts]
            expr = zeros[0] if odt.kind == "f" else f"{WGSL_TYPE[odt]}({zeros[0]}, {zeros[1]})"
        elif not any("{" + str(n) + "}" in tmpl for n in range(len(vals))) or (
                len(vals) > 1 and not (op in _NO_SELF_FOLD and odt == np.float32)
                and len({r for r, _n in roots}) == 1):
            # A result the compiler knows without the data: a literal (isnan of an integer is
            # false, imag of a real is 0), or an op of one value with itself (x > x, x ^ x; not
            # float32 x * x, -x * x, x + x, _NO_SELF_FOLD, which chain8 has and which no compiler
            # turns into a constant; float64 keeps the guard: without it the H200's compiler gave
            # a number, not NaN, for min(x, x) / (x * x) at x = 0).
            # It would fold what follows, and it folds 0 / x and 0 * x to 0 even where x is 0,
            # inf or NaN (lavapipe did: imag(x) / 0 and astype(x > x) / 0 were 0, not NaN).
            # Hide it (not behind prm[0], the element count: a compiler can know it nonzero past the bounds test).
            expr = self.hidden(expr, dt)
        name = self.emit(wrap_small(dt, expr))
        if dt.kind in "fc":
            self.vn.float_op(name, op, vals)        # the multiplicands of products and negations
        if op in ("positive", "negative") and dt.kind in "fc":
            root, neg = self.alias.get(vals[0]) or self.alias.get(self.vn.of(vals[0]), (vals[0], False))
            self.alias[name] = (root, neg != (op == "negative"))
        return name

    def _four_lanes(self, i: int) -> str:
        """The vec4 of unary op ``i`` for all four lanes, by its ``VEC4_HELPERS`` function (the
        argument is rendered for every lane at the first lane that needs it)."""
        key = ("lanes", i)
        if key not in self.memo:
            lane, args = self.lane, []
            for other in range(4):
                self.lane = other
                args.append(self.value(self.ins[i].args[0], ("lin", f"e{other}")))
            self.lane = lane
            self.memo[key] = self.emit(f"{VEC4_HELPERS[self.ins[i].op]}(vec4<f32>({', '.join(args)}))", "w")
        return self.memo[key]

    def _cast(self, v: str, src: np.dtype, dst: np.dtype) -> str:
        return cast(self, v, src, dst)


_SINCOS = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}   # dtypes with a ga_sincos helper
VEC_TYPES = frozenset({"f32", "i32", "u32"})   # 16-byte vec4 words (the scans use these too)
# elementwise kernels also read and write float64 as vec4 (32 bytes): H200, float64 exp of 2^26 values
# 0.42 -> 0.31 GPU ms, sin 0.71 -> 0.43, tanh 0.68 -> 0.60 (one element per thread before); where two
# or more float64 functions of wgsl_f64 meet in one kernel, two lanes (vec2) instead: H200, 2^26 values,
# wall ms, one / two / four lanes: chain8 1.34 / 1.15 / 1.15 (2.7 four lanes before sin and cos shared
# their reduction), sin(x) + cos(x) (one ga_sincos_f64: four lanes) 0.77 / 0.60 / 0.52, sin alone two
# lanes 0.53, four 0.47
ELEMENTWISE_VEC_TYPES = VEC_TYPES | {"f64"}
F64_VEC4_MAX_FUNCTIONS = 1
F64_MULTI_LANES = 2      # lanes (vec2, 16 bytes) of the float64 kernels with more functions; 1: one element
# vec4 kernels whose inputs are not all read at the thread's own elements (a broadcast row such as
# ``x - mean(x, axis=0)``, a view, a gather) read those inputs element by element, lane by lane: 0 never
# (one element a thread), 1 where at least one input is read as words, 2 also where none is
MIXED_LANES = int(os.environ.get("GPUARRAY_VEC4_MIXED", "2"))


def _f64_functions(kernel: Kernel) -> int:
    """How many calls of wgsl_f64's software float64 functions ``kernel`` makes (the sin and cos of one
    value count once: ``ga_sincos_f64``)."""
    calls = [ins for ins in kernel.instrs if ins.op in F64_DEVICE_OPS and ins.dtype == np.float64]
    sin_args = {ins.args[0] for ins in calls if ins.op == "sin"}
    return len(calls) - sum(1 for ins in calls if ins.op == "cos" and ins.args[0] in sin_args)


def thread_main(lines: Sequence[str], count: str = "prm[0]") -> str:
    """The entry point of a shader of one thread per element: ``gi`` over a 2-d grid of workgroups,
    threads past ``count`` return, then ``lines``."""
    return (
        f"@compute @workgroup_size({WORKGROUP})\n"
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
        "        @builtin(local_invocation_index) lid: u32) {\n"
        f"  let gi = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;\n"
        f"  if (gi >= {count}) {{ return; }}\n" + "\n".join(lines) + "\n}\n"
    )


def render_variant(kernel: Kernel, variant: tuple[int, bool]) -> Rendered:
    """``render(kernel, vec, fast)`` for ``variant = (vec, fast)`` (the provider's cache key)."""
    return render(kernel, *variant)


def render(kernel: Kernel, vec: int = 1, fast: bool = False) -> Rendered:
    """WGSL for ``kernel``; reusable for every kernel with the same signature.

    ``vec=4``: each thread reads every input as one ``vec4`` at its own index, computes four
    elements and writes each output as one ``vec4`` (the kernel's size must be a multiple of 4;
    plain WGSL reached 94 % of the H200's copy bandwidth this way, against ~55 % for one element
    per thread). A kernel that reads an input anywhere else (views, broadcasting, gathers) or has
    64-bit integer or complex data is rendered one element per thread instead; ``Rendered.vec`` says which.
    """
    if vec == 4:
        r = _render_vec4(kernel, fast)
        if r is not None:
            return r
    g = _Gen(kernel)
    g.fast = fast
    stores = []
    for j, o in enumerate(kernel.outputs):
        v = g.value(o, ("lin", "gi"))
        dt = kernel.instrs[o].dtype
        stores.append(f"  out{j}[gi] = {store_value(dt, v)};")
    decls = declare_bindings(input_types(kernel),
                             [WGSL_STORAGE_TYPE[kernel.instrs[o].dtype] for o in kernel.outputs], g.wide)
    main = thread_main(g.lines + stores)
    src = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main
    return Rendered(src, sorted(g.slots, key=lambda s: g.slots[s]), g.wide, len(kernel.inputs),
                    len(kernel.outputs))


def _before_four_lane_calls(kernel: Kernel, fast: bool) -> list[int]:
    """The instructions that the ``VEC4_HELPERS`` ops and what follows from them read, but that do
    not depend on such an op themselves (same-shape operands only: the vec4 form has no others)."""
    if fast:
        return []
    dep: set[int] = set()
    out: dict[int, None] = {}
    for n, ins in enumerate(kernel.instrs):
        if (ins.op in VEC4_HELPERS and ins.dtype == np.float32) or any(a in dep for a in ins.args):
            dep.add(n)
            out.update((a, None) for a in ins.args if a not in dep and kernel.instrs[a].shape == ins.shape)
    return list(out)


def _lanes(g: _Gen, kernel: Kernel, fast: bool, n_lanes: int) -> list[list[str]]:
    """Render each lane's outputs into ``g`` (vec4 form): per lane, the outputs' stored values."""
    g.fast = fast
    g.lines += [f"  let e{lane} = gi * {n_lanes}u + {lane}u;" for lane in range(n_lanes)]
    # Values that a four-lane helper's call does not depend on come first, lane by lane, and the call after
    # them: its branch does not split the lanes' other work (H200 chain8: 0.665 ms after lane 0's work, 0.645)
    first = _before_four_lane_calls(kernel, fast)
    for lane in range(n_lanes if first else 0):
        g.lane = lane
        for a in first:
            g.value(a, ("lin", f"e{lane}"))
    lanes = []
    for lane in range(n_lanes):
        g.lane = lane
        lanes.append([store_value(kernel.instrs[o].dtype, g.value(o, ("lin", f"e{lane}"))) for o in kernel.outputs])
    return lanes


# vec4 words a thread takes in the grid-stride loop: 2 for plain arithmetic (memory-bound), 8 where
# helpers (exp, sin, ...) make the thread compute long enough to hide a load behind it (H200, bench/
# chain8 and x*2+1)
PER_PLAIN = 2
PER_HELPERS = 8


def _render_vec4(kernel: Kernel, fast: bool = False) -> Rendered | None:
    """The ``vec=4`` form of ``render`` (two lanes, ``vec2``, for float64 kernels with several float64
    functions), or None where it does not apply."""
    ins = kernel.instrs
    types = [WGSL_STORAGE_TYPE[n.dtype] for n in kernel.inputs]
    out_types = [WGSL_STORAGE_TYPE[ins[o].dtype] for o in kernel.outputs]
    if not set(types + out_types) <= ELEMENTWISE_VEC_TYPES:
        return None
    n_lanes = 4
    if "f64" in types + out_types and _f64_functions(kernel) > F64_VEC4_MAX_FUNCTIONS:
        if any(i.op in VEC4_HELPERS and i.dtype == np.float32 for i in ins):
            return None
        n_lanes = F64_MULTI_LANES
        if n_lanes == 1:
            return None
    scalar: set[int] = set()
    while True:                 # again while an input is found read elsewhere than at its lane's index
        g = _Gen(kernel)
        g.scalar_in = set(scalar) if MIXED_LANES else None
        lanes = _lanes(g, kernel, fast, n_lanes)
        if g.lane_miss:
            return None
        if g.scalar_in is None or g.scalar_in == scalar:
            break
        scalar = g.scalar_in
    if scalar and len(scalar) == len(types) and MIXED_LANES < 2:
        return None             # no input read as words: the one-element-a-thread form
    words = [k for k in range(len(types)) if k not in scalar]
    stores = [f"  out{j}[gi] = vec{n_lanes}<{t}>({', '.join(lanes[lane][j] for lane in range(n_lanes))});"
              for j, t in enumerate(out_types)]
    decls = declare_bindings([t if k in scalar else f"vec{n_lanes}<{t}>" for k, t in enumerate(types)],
                             [f"vec{n_lanes}<{t}>" for t in out_types], g.wide)
    # A grid-stride loop: thread t takes vec4 number t, t + (threads in the grid), ...; the next
    # vec4 of each input is read before the current one is computed, so that loads are in flight
    # while the thread computes (H200: chain8 0.758 -> 0.683 ms at 8 per thread, x*2+1 0.548 ->
    # 0.507 at 2). The number of threads is the dispatch's choice (``per_thread``). Inputs read
    # elsewhere (``scalar``) are read where used, lane by lane.
    prefetch = [f"  var n{k} = in{k}[i];" for k in words]
    nxt = " ".join(f"n{k} = in{k}[i];" for k in words)
    body = [f"  let x{k} = n{k};" for k in words] + [
        "  i = i + stride;", f"  if (i < nv) {{ {nxt} }}" if words else ""] + g.lines + stores
    main = (
        f"@compute @workgroup_size({WORKGROUP})\n"
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
        "        @builtin(local_invocation_index) lid: u32) {\n"
        f"  let nv = prm[0] / {n_lanes}u;\n"
        f"  let stride = nwg.x * nwg.y * {WORKGROUP}u;\n"
        f"  var i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;\n"
        "  if (i >= nv) { return; }\n" + "\n".join(prefetch) + "\n  loop {\n    let gi = i;\n"
        + "\n".join("  " + line for line in body if line) + "\n    if (i >= nv) { break; }\n  }\n}\n"
    )
    helpers = helpers_for(main)
    per = PER_HELPERS if helpers else PER_PLAIN
    src = "\n".join(decls) + "\n\n" + helpers + "\n\n" + main
    return Rendered(src, sorted(g.slots, key=lambda s: g.slots[s]), g.wide, len(kernel.inputs),
                    len(kernel.outputs), vec=n_lanes, per_thread=per)
