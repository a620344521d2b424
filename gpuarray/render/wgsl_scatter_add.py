"""Render the passes of a ``scatter_add`` kernel as WGSL.

A ``scatter_add`` kernel has operands ``(base, idx, val)``: ``base`` of the output's shape ``(B,)``,
``idx`` (int32) and ``val`` (the output dtype) of one shape ``(N,)``; the result is ``base`` with
``out[idx[i]] += val[i]`` for every ``i`` whose ``idx[i]`` lies in ``[0, B)`` (others are dropped:
histogram's values outside the range). attrs: ``()``, or ``("sorted",)`` when ``idx`` is sorted
(every bin's elements adjacent). The provider runs:

- ``copy`` (``render_scatter`` of ``wgsl_scatter``): ``out = base``;
- the 32-bit atomics (``render_atomic``), one of
  - ``global``: one thread per element, one atomic add to ``out0`` (bins past ``PRIVATE_WORDS``);
  - ``private``: a workgroup takes ``256 * K`` elements and adds them into a copy of the bins in
    workgroup memory, then adds each bin it touched to ``out0`` once (fewer global atomics and
    collisions: bincount / histogram of few bins). Each thread loads ``UNROLL`` elements (their
    bins and values) before their atomics, so that several loads are in flight. In the counting
    mode (``counting``: an integer sum of one constant, bincount / histogram without weights) the
    workgroup bins are 32-bit counts (one ``atomicAdd(1)`` an element, whatever the output's width)
    and the flush adds ``count * value``; threads ``lid % C`` share one of ``C`` copies of the bins
    (up to ``COPIES``, as many as fit: fewer collisions on a popular bin);

  int32 / uint32 by ``atomicAdd``; int64 / uint64 as two words (low, high): ``atomicAdd`` of the low
  word, whose old value says whether it wrapped, then the high word plus that carry (two's
  complement: a negative addend is its 64-bit pattern); float32 by a compare-exchange loop on the
  bits. Integer sums are exact; float32 sums depend on the order the atomics land in
  (nondeterministic, within rounding of NumPy's sequential sum);
- ``render_segsum`` for sorted keys (float64, which has no atomics): a reduction by key over blocks
  of ``SEG_BLOCK`` positions, one thread per block summing its runs in order. A run that is neither
  the first nor the last of its block is a whole bin: it is added to ``out0`` at once; the first and
  last runs go to a list of two (key, partial sum) entries per block (``-0`` for the second of a
  block with one run), which is again sorted by key and is reduced by the next level, until one
  block remains. Deterministic: a fixed tree of sums, sequential within each block.

A combine other than the sum (attrs ending with one of ``REDUCE_OPS``: ``scatter_reduce``) runs its
atomics in ``wgsl_scatter_reduce``; over sorted keys (64-bit max / min, float64) it is this segmented
reduction with ``combine_fn``'s NumPy rule in place of ``+`` and ``identity`` as the filler entry: the
rule is associative and every key's elements stay in their order, so the result is NumPy's bit for bit.

>>> WORDS[np.dtype("int64")], "atomicCompareExchangeWeak" in _add_fn("sa_gadd", "out0", np.dtype("float32"))
(2, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE, WGSL_SUFFIX, WGSL_TYPE
from .wgsl import WORKGROUP, Rendered, _Gen
from .wgsl_lib import helpers_for
from .wgsl_scatter import used_inputs
from .wgsl_sort import _load_fn, storage_decls

ATOMIC_DTYPES = frozenset(np.dtype(d) for d in ("int32", "uint32", "int64", "uint64", "float32"))
WORDS = {np.dtype(d): 2 if np.dtype(d).itemsize == 8 else 1
         for d in ("int32", "uint32", "int64", "uint64", "float32", "float64")}
PRIVATE_WORDS = 4096        # workgroup-memory words of the private bins (16 KiB: WebGPU's minimum limit)
SEG_BLOCK = 128             # positions per thread of a segmented-sum level
NONE = "0xffffffffu"        # the bin of a dropped element
UNROLL = 4                  # private pass: elements a thread loads before their atomics (loads in flight)
COPIES = 8                  # counting mode: copies of the workgroup bins at most (lanes spread over them)

REDUCE_OPS = ("max", "min", "fmax", "fmin", "and", "or", "xor")   # combines other than the sum

_HEAD = ("@compute @workgroup_size({wg})\n"
         "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
         "        @builtin(local_invocation_index) lid: u32) {{\n")


@dataclass
class SaShader:
    """A rendered pass and its bindings after ``prm``: the kernel inputs ``inputs`` (indices), ``out0``,
    the 64-bit constants, then the named scratch arrays ``scratch``."""

    rendered: Rendered
    inputs: list[int]
    scratch: tuple[str, ...] = ()


def scatter_op(attrs: tuple) -> str:
    """A ``scatter_add`` kernel's combine: its last attr where that is one of ``REDUCE_OPS``, else ``add``."""
    return attrs[-1] if attrs and attrs[-1] in REDUCE_OPS else "add"


def _bits(dt: np.dtype, word: int) -> str:
    """A WGSL constant of ``dt`` with the bits ``word``."""
    t = WGSL_TYPE[dt]
    lit = f"0x{word:x}{'lu' if dt.itemsize == 8 else 'u'}"
    return lit if t in ("u32", "u64") else f"bitcast<{t}>({lit})"


def identity(op: str, dt: np.dtype) -> str:
    """The element that leaves every value as it is under ``op``'s combine (the segmented reduction's
    filler): ``-0.0`` / 0 for the sum, the lowest value for max, NaN for fmax (ignored), all ones for and."""
    nbits = 8 * dt.itemsize
    ones = (1 << nbits) - 1
    sign = 1 << (nbits - 1)
    if op == "add":
        return f"-{WGSL_TYPE[dt]}(0)" if dt.kind == "f" else f"{WGSL_TYPE[dt]}(0)"
    if op in ("or", "xor"):
        return _bits(dt, 0)
    if op == "and":
        return _bits(dt, ones)
    if dt.kind == "f":
        inf = 0x7F800000 if nbits == 32 else 0x7FF0000000000000
        if op in ("fmax", "fmin"):
            return _bits(dt, inf | 1 << (22 if nbits == 32 else 51))     # the quiet NaN
        return _bits(dt, inf | sign if op == "max" else inf)
    lo, hi = (sign, sign - 1) if dt.kind == "i" else (0, ones)
    return _bits(dt, lo if op in ("max", "fmax") else hi)


def combine_fn(op: str, dt: np.dtype) -> str:
    """``fn sa_cmb(a, b)``: NumPy's ``a = op(a, b)`` step of ``op.at`` (``b`` the later value), on
    ``dt``: ``maximum`` keeps ``a`` when it is NaN or greater, else takes ``b`` (a NaN ``b``, and ``b``
    on a tie: ``maximum(-0.0, 0.0)`` is ``0.0`` there, ``maximum(0.0, -0.0)`` is ``-0.0``); ``fmax``
    keeps ``a`` when ``b`` is NaN or ``a`` is greater. Floats compare by ``sa_key`` (their bits,
    exact on adapters that flush subnormals)."""
    t = WGSL_TYPE[dt]
    head = f"fn sa_cmb(a: {t}, b: {t}) -> {t} {{"
    if op in ("and", "or", "xor"):
        sym = {"and": "&", "or": "|", "xor": "^"}[op]
        return f"{head} return a {sym} b; }}"
    gt = ">" if op in ("max", "fmax") else "<"
    if dt.kind != "f":
        return f"{head} return select(b, a, a {gt} b); }}"
    s = WGSL_SUFFIX[dt]
    keep = (f"ga_isnan_{s}(a) || (!ga_isnan_{s}(b) && sa_key(a) {gt} sa_key(b))" if op in ("max", "min")
            else f"ga_isnan_{s}(b) || (!ga_isnan_{s}(a) && sa_key(a) {gt} sa_key(b))")
    return key_fn(dt) + "\n\n" + f"{head}\n  if ({keep}) {{ return a; }}\n  return b;\n}}"


def key_fn(dt: np.dtype) -> str:
    """``fn sa_key(x)``: the float ``x``'s bits as an unsigned integer in the order of the values,
    ``-0.0`` and ``0.0`` the same key (NaN not handled)."""
    u = "u32" if dt.itemsize == 4 else "u64"
    z, sign = ("0u", "0x80000000u") if u == "u32" else ("0lu", "0x8000000000000000lu")
    return "\n".join([
        f"fn sa_key(x: {WGSL_TYPE[dt]}) -> {u} {{",
        f"  let w = bitcast<{u}>(x);",
        f"  let m = select(w, {z}, w == {sign});",
        f"  return select(m | {sign}, ~m, m >= {sign});",
        "}"])


def _identity(dt: np.dtype) -> str:
    """The bits of a word of an empty private bin: ``-0.0`` for float32 (``x + -0 == x``), else 0."""
    return "0x80000000u" if dt == np.float32 else "0u"


def _add_fn(name: str, arr: str, dt: np.dtype) -> str:
    """``fn name(b, ...)``: add to bin ``b`` of the atomic word array ``arr``; arguments: the addend's
    word (32-bit integers), its low and high words (64-bit), or the float32 value."""
    if dt == np.float32:
        return "\n".join([
            f"fn {name}(b: u32, v: f32) {{",
            f"  var o = atomicLoad(&{arr}[b]);",
            "  loop {",
            f"    let r = atomicCompareExchangeWeak(&{arr}[b], o, bitcast<u32>(bitcast<f32>(o) + v));",
            "    if (r.exchanged) { break; }",
            "    o = r.old_value;",
            "  }",
            "}"])
    if WORDS[dt] == 1:
        return f"fn {name}(b: u32, w: u32) {{ atomicAdd(&{arr}[b], w); }}"
    return "\n".join([
        f"fn {name}(b: u32, lo: u32, hi: u32) {{",
        f"  let o = atomicAdd(&{arr}[2u * b], lo);",
        "  let h = hi + select(0u, 1u, o + lo < o);      // carry out of the low word",
        f"  if (h != 0u) {{ atomicAdd(&{arr}[2u * b + 1u], h); }}",
        "}"])


def _args(dt: np.dtype, v: str) -> str:
    """The adder's arguments after the bin for value ``v`` of ``dt``."""
    if dt == np.float32:
        return v
    if dt == np.int32:
        return f"bitcast<u32>({v})"
    if dt == np.uint32:
        return v
    bits = v if dt == np.uint64 else f"bitcast<u64>({v})"
    return f"u32({bits} & 0xfffffffflu), u32({bits} >> 32u)"


def _decls(kernel: Kernel, g: _Gen, inputs: list[int], out_type: str, scratch: dict[str, str]) -> list[str]:
    """``prm``, the used inputs, ``out0``, the 64-bit constants, then the scratch arrays (``kin`` /
    ``vin`` read-only)."""
    types = {"out": out_type, **scratch}
    writes = frozenset(r for r in types if r not in ("kin", "vin"))
    return storage_decls(kernel, g, ("inputs", "out", "wide", *scratch), types, writes, inputs)


def _loaders(kernel: Kernel, g: _Gen) -> list[str]:
    """``sa_idx`` / ``sa_val``: the operands' prologues at a position; ``sa_bin``: the bin or NONE."""
    _base_i, idx_i, val_i = kernel.operands
    idx_t = WGSL_TYPE[kernel.instrs[idx_i].dtype]
    fns = [_load_fn(g, idx_i, "sa_idx"), _load_fn(g, val_i, "sa_val")]
    ok = "i < prm[0]" if idx_t == "u32" else "i >= 0 && u32(i) < prm[0]"
    fns.append(f"fn sa_bin(li: u32) -> u32 {{\n  let i = sa_idx(li);\n  return select({NONE}, u32(i), {ok});\n}}")
    return fns


def _finish(kernel: Kernel, g: _Gen, decls: list[str], fns: list[str], main: str) -> Rendered:
    body = "\n\n".join(fns) + "\n\n" + main
    src = "\n".join(decls) + "\n\n" + helpers_for(body) + "\n\n" + body
    return Rendered(src, sorted(g.slots, key=lambda s: g.slots[s]), g.wide, len(kernel.inputs), 1)


def uniform_value(kernel: Kernel) -> bool:
    """Whether every element adds the same value: ``val`` is a constant (a scalar's broadcast),
    as in ``bincount`` / ``histogram`` without weights."""
    i = kernel.operands[2]
    while kernel.instrs[i].op in ("view", "reshape", "astype"):
        i = kernel.instrs[i].args[0]
    return kernel.instrs[i].op == "const"


def counting(kernel: Kernel) -> bool:
    """The counting mode of the private pass: an integer sum of one constant (``uniform_value``):
    each workgroup counts its elements per bin in 32-bit words (at most ``256 * MAX_K`` elements)
    and adds ``count * value`` to each bin it touched (exact: integer sums wrap)."""
    return kernel.out_nodes[0].dtype.kind in "iu" and uniform_value(kernel)


def _private_main(kernel: Kernel, g: _Gen, dt: np.dtype, n: str, fns: list[str]) -> str:
    """The privatized pass: bins in workgroup memory, ``UNROLL`` loads a step before their atomics."""
    k, groups = g.slot(("extra", "K")), g.slot(("extra", "G"))
    count = counting(kernel)
    copies = g.slot(("extra", "C")) if count else "1u"
    w = 1 if count else WORDS[dt]
    ident = "0u" if count else _identity(dt)
    fns.insert(0, f"var<workgroup> sa_h: array<atomic<u32>, {PRIVATE_WORDS}>;")
    if count:
        flush = ["    var v = 0u;",
                 f"    for (var c = 0u; c < {copies}; c++) {{ v += atomicLoad(&sa_h[c * nb + i]); }}"]
        if WORDS[dt] == 1:
            flush.append(f"    if (v != 0u) {{ sa_gadd(i, v * {_args(dt, 'sa_val(0u)')}); }}")
        else:
            c = "sa_val(0u)" if dt == np.uint64 else "bitcast<u64>(sa_val(0u))"
            flush += ["    if (v != 0u) {", f"      let p = u64(v) * {c};",
                      "      sa_gadd(i, u32(p & 0xfffffffflu), u32(p >> 32u));", "    }"]
    else:
        fns.append(_add_fn("sa_wadd", "sa_h", dt))
        if dt == np.float32:
            flush = ["    let v = atomicLoad(&sa_h[i]);", f"    if (v != {ident}) {{ sa_gadd(i, bitcast<f32>(v)); }}"]
        elif w == 1:
            flush = ["    let v = atomicLoad(&sa_h[i]);", "    if (v != 0u) { sa_gadd(i, v); }"]
        else:
            flush = ["    let lo = atomicLoad(&sa_h[2u * i]);", "    let hi = atomicLoad(&sa_h[2u * i + 1u]);",
                     "    if ((lo | hi) != 0u) { sa_gadd(i, lo, hi); }"]
    t = WGSL_TYPE[dt]
    loads, adds = [], []
    for u in range(UNROLL):
        loads += [f"      let e{u} = start + (j + {u}u) * {WORKGROUP}u;",
                  f"      var b{u} = {NONE};"]
        if not count:
            loads.append(f"      var v{u} = {t}(0);")
        body = f"b{u} = sa_bin(e{u});" + ("" if count else f" v{u} = sa_val(e{u});")
        loads.append(f"      if (j + {u}u < {k} && e{u} < {n}) {{ {body} }}")
        add = f"atomicAdd(&sa_h[cp + b{u}], 1u);" if count else f"sa_wadd(b{u}, {_args(dt, f'v{u}')});"
        adds.append(f"      if (b{u} != {NONE}) {{ {add} }}")
    words = f"nb * {copies}" if count else f"nb * {w}u"
    return _HEAD.format(wg=WORKGROUP) + "\n".join([
        "  let nb = prm[0];",
        *([f"  let cp = (lid % {copies}) * nb;      // this thread's copy of the bins"] if count else []),
        f"  for (var i = lid; i < {words}; i += {WORKGROUP}u) {{ atomicStore(&sa_h[i], {ident}); }}",
        "  workgroupBarrier();",
        "  let grp = wid.y * nwg.x + wid.x;",
        f"  if (grp < {groups}) {{",
        f"    let start = grp * {k} * {WORKGROUP}u + lid;",
        f"    for (var j = 0u; j < {k}; j += {UNROLL}u) {{",
        *loads,
        *adds,
        "    }",
        "  }",
        "  workgroupBarrier();",
        f"  for (var i = lid; i < nb; i += {WORKGROUP}u) {{",
        *flush,
        "  }",
        "}"])


def render_atomic(kernel: Kernel, private: bool) -> SaShader:
    """The atomic pass (``private``: through workgroup-memory bins). ``prm`` extras: N (elements), and
    for ``private`` K (elements per thread) and G (workgroups with elements)."""
    dt = kernel.out_nodes[0].dtype
    g = _Gen(kernel)
    n = g.slot(("extra", "N"))
    fns = _loaders(kernel, g)
    fns.append(_add_fn("sa_gadd", "out0", dt))
    if not private:
        main = _HEAD.format(wg=WORKGROUP) + "\n".join([
            f"  let e = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
            f"  if (e >= {n}) {{ return; }}",
            "  let b = sa_bin(e);",
            f"  if (b == {NONE}) {{ return; }}",
            f"  sa_gadd(b, {_args(dt, 'sa_val(e)')});",
            "}"])
    else:
        main = _private_main(kernel, g, dt, n, fns)
    inputs = used_inputs(kernel, list(kernel.operands[1:]))
    return SaShader(_finish(kernel, g, _decls(kernel, g, inputs, "atomic<u32>", {}), fns, main), inputs)


def render_segsum(kernel: Kernel, variant: tuple[bool, bool]) -> SaShader:
    """One level of the segmented sum (or ``scatter_op``'s combine) over sorted keys; ``variant =
    (first, final)``: the first level reads the operands through their prologues (else ``kin`` /
    ``vin``), the final level (one block) adds every run to ``out0`` (else the first and last runs
    of each block go to ``kout`` / ``vout``). ``prm`` extras: N (positions at this level), NB (blocks)."""
    first, final = variant
    dt = kernel.out_nodes[0].dtype
    t = WGSL_TYPE[dt]
    g = _Gen(kernel)
    n, nb = g.slot(("extra", "N")), g.slot(("extra", "NB"))
    fns = _loaders(kernel, g) if first else []
    key, val = ("sa_bin", "sa_val") if first else ("kin", "vin")
    ld = (lambda p: f"{key}({p})") if first else (lambda p: f"{key}[{p}]")
    lv = (lambda p: f"{val}({p})") if first else (lambda p: f"{val}[{p}]")
    op = scatter_op(kernel.attrs)
    if op != "add":
        fns.append(combine_fn(op, dt))
    cmb = (lambda a, b: f"{a} + {b}") if op == "add" else (lambda a, b: f"sa_cmb({a}, {b})")
    fns.append(f"fn sa_put(k: u32, v: {t}) {{ if (k < prm[0]) {{ out0[k] = {cmb('out0[k]', 'v')}; }} }}")
    neg_zero = identity(op, dt)
    if final:
        head_run = ["      sa_put(key, acc);"]
        tail = ["  sa_put(key, acc);"]
    else:
        head_run = ["      if (fr) { kout[2u * j] = key; vout[2u * j] = acc; } else { sa_put(key, acc); }"]
        tail = ["  if (fr) {",
                f"    kout[2u * j] = key; vout[2u * j] = acc; kout[2u * j + 1u] = key; vout[2u * j + 1u] = {neg_zero};",
                "  } else {",
                "    kout[2u * j + 1u] = key; vout[2u * j + 1u] = acc;",
                "  }"]
    main = _HEAD.format(wg=WORKGROUP) + "\n".join([
        f"  let j = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
        f"  if (j >= {nb}) {{ return; }}",
        f"  let s = j * {SEG_BLOCK}u;",
        f"  let t = min({n}, s + {SEG_BLOCK}u);",
        f"  var key = {ld('s')};",
        f"  var acc = {lv('s')};",
        "  var fr = true;",
        "  for (var p = s + 1u; p < t; p++) {",
        f"    let k = {ld('p')};",
        f"    let v = {lv('p')};",
        "    if (k == key) {",
        f"      acc = {cmb('acc', 'v')};",
        "    } else {",
        *head_run,
        "      fr = false;",
        "      key = k;",
        "      acc = v;",
        "    }",
        "  }",
        *tail,
        "}"])
    scratch = ({} if first else {"kin": "u32", "vin": WGSL_STORAGE_TYPE[dt]}) | \
        ({} if final else {"kout": "u32", "vout": WGSL_STORAGE_TYPE[dt]})
    inputs = used_inputs(kernel, list(kernel.operands[1:])) if first else []
    return SaShader(_finish(kernel, g, _decls(kernel, g, inputs, WGSL_STORAGE_TYPE[dt], scratch), fns, main),
                    inputs, tuple(scratch))
