"""Render the atomic passes of a ``scatter_add`` kernel whose combine is not a sum
(``scatter_reduce``: attrs ending with one of ``REDUCE_OPS``), one global atomic per element.

- int32 / uint32 (and the narrow integers and bool, widened by the namespace): ``atomicMax`` /
  ``atomicMin`` / ``atomicAnd`` / ``atomicOr`` / ``atomicXor``; int64 / uint64 ``and`` / ``or`` /
  ``xor`` as two independent word atomics (the bits do not interact). Exact in any order. An atomic
  that cannot change the stored word (``_changes``: a look at it first) is skipped.
- float32 ``max`` / ``min`` / ``fmax`` / ``fmin``: a compare-exchange loop on the bits that replaces
  the stored value only by a strictly better one (``maximum``: a NaN, or a greater value while the
  stored one is not NaN; ``fmax``: a greater non-NaN value, or any non-NaN one over a NaN). Comparing
  through ``sa_key`` (the bits, ``-0.0`` and ``0.0`` equal) is exact where an adapter flushes
  subnormals. What NumPy's sequential loop decides by order, two ties that compare equal but differ
  in their bits, is decided afterwards from a ``tie`` word a bin (``atomicMax``): a zero at element
  ``e`` writes ``e + 1`` (NumPy's ``maximum(a, b)`` returns ``b`` on a tie, so the last zero's sign
  stands), a NaN at ``e`` (``max`` / ``min`` only) writes ``0x80000000 | (0x7ffffffe - e)`` (NumPy
  keeps the first NaN, payload and sign), a NaN base ``0xffffffff`` (it stays). Three passes:
  ``init`` (``out = base``, the tie words), the atomics, ``fixup`` (per bin: the first NaN, or the
  last zero where the result is a zero). The result is NumPy's bit for bit, in any order of atomics.

Other dtypes (64-bit max / min, float64) are reduced over sorted keys (``render_segsum``).

>>> sorted(ATOMIC_REDUCE["fmax"]), "atomicCompareExchangeWeak" in _atomic_fn("max", np.dtype("float32"))
([dtype('float32')], True)
"""

from __future__ import annotations

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_TYPE
from .wgsl import WORKGROUP, _Gen
from .wgsl_scatter import used_inputs
from .wgsl_scatter_add import (
    _HEAD,
    NONE,
    SaShader,
    _decls,
    _finish,
    _loaders,
    key_fn,
    scatter_op,
)
from .wgsl_sort import _load_fn

_I32, _U32, _I64, _U64, _F32 = (np.dtype(d) for d in ("int32", "uint32", "int64", "uint64", "float32"))
# the dtypes each combine has atomics for (the others: sorted keys)
ATOMIC_REDUCE: dict[str, frozenset[np.dtype]] = {
    "max": frozenset({_I32, _U32, _F32}), "min": frozenset({_I32, _U32, _F32}),
    "fmax": frozenset({_F32}), "fmin": frozenset({_F32}),
    **{op: frozenset({_I32, _U32, _I64, _U64}) for op in ("and", "or", "xor")},
}
_ATOMIC_FN = {"max": "atomicMax", "min": "atomicMin", "and": "atomicAnd", "or": "atomicOr", "xor": "atomicXor"}
TIE_NAN = "0xffffffffu"     # the tie word of a bin whose base is NaN (max / min: it stays)


def has_ties(op: str, dt: np.dtype) -> bool:
    """Whether the kernel takes the float passes (``init``, the compare-exchange loop, ``fixup``)."""
    return dt == _F32 and op in ("max", "min", "fmax", "fmin")


def _better(op: str, v: str, c: str) -> str:
    """WGSL: whether ``v`` strictly improves on the stored ``c`` under ``op`` (float32)."""
    gt = ">" if op in ("max", "fmax") else "<"
    cmp = f"sa_key({v}) {gt} sa_key({c})"
    if op in ("max", "min"):
        return f"!ga_isnan_f32({c}) && (ga_isnan_f32({v}) || {cmp})"
    return f"!ga_isnan_f32({v}) && (ga_isnan_f32({c}) || {cmp})"


def _atomic_fn(op: str, dt: np.dtype) -> str:
    """``fn sa_gred(b, e, v)``: combine element ``e``'s value ``v`` into bin ``b`` of ``out0``."""
    t = WGSL_TYPE[dt]
    head = f"fn sa_gred(b: u32, e: u32, v: {t}) {{"
    if dt == _F32:
        rec = ["  let w = bitcast<u32>(v);"]
        if op in ("max", "min"):
            rec.append("  if (ga_isnan_f32(v)) { atomicMax(&tie[b], 0x80000000u | (0x7ffffffeu - e)); }")
        rec.append("  if ((w & 0x7fffffffu) == 0u) { atomicMax(&tie[b], e + 1u); }")
        return "\n".join([
            key_fn(dt), "", head, *rec,
            "  var o = atomicLoad(&out0[b]);",
            "  loop {",
            f"    if (!({_better(op, 'v', 'bitcast<f32>(o)')})) {{ break; }}",
            "    let r = atomicCompareExchangeWeak(&out0[b], o, w);",
            "    if (r.exchanged) { break; }",
            "    o = r.old_value;",
            "  }",
            "}"])
    fn = _ATOMIC_FN[op]
    if dt.itemsize == 4:
        return f"{head} if ({_changes(op, 'v', 'out0[b]', t)}) {{ {fn}(&out0[b], v); }} }}"
    bits = "v" if dt == _U64 else "bitcast<u64>(v)"
    return "\n".join([
        head,
        f"  let u = {bits};",
        "  let lo = u32(u & 0xfffffffflu);",
        "  let hi = u32(u >> 32u);",
        f"  if ({_changes(op, 'lo', 'out0[2u * b]', 'u32')}) {{ {fn}(&out0[2u * b], lo); }}",
        f"  if ({_changes(op, 'hi', 'out0[2u * b + 1u]', 'u32')}) {{ {fn}(&out0[2u * b + 1u], hi); }}",
        "}"])


def _changes(op: str, v: str, word: str, t: str) -> str:
    """WGSL: whether combining ``v`` into the atomic ``word`` can change it. The stored value only
    moves one way (max grows, and loses bits, or gains them), so a look at it now that finds ``v``
    changing nothing stays true: most elements of a popular bin then skip the atomic."""
    if op == "xor":
        return f"{v} != {t}(0)"
    cur = f"atomicLoad(&{word})"
    return {"max": f"{v} > {cur}", "min": f"{v} < {cur}", "and": f"({cur} & ~{v}) != {t}(0)",
            "or": f"({v} & ~{cur}) != {t}(0)"}[op]


def _out_word(dt: np.dtype) -> str:
    return "atomic<i32>" if dt == _I32 else "atomic<u32>"


def render_reduce_atomic(kernel: Kernel) -> SaShader:
    """The atomic pass: one thread an element. ``prm`` extras: N (elements). Binds the ``tie`` words
    after ``out0`` where ``has_ties``."""
    dt, op = kernel.out_nodes[0].dtype, scatter_op(kernel.attrs)
    g = _Gen(kernel)
    n = g.slot(("extra", "N"))
    fns = _loaders(kernel, g)
    fns.append(_atomic_fn(op, dt))
    main = _HEAD.format(wg=WORKGROUP) + "\n".join([
        f"  let e = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
        f"  if (e >= {n}) {{ return; }}",
        "  let b = sa_bin(e);",
        f"  if (b == {NONE}) {{ return; }}",
        "  sa_gred(b, e, sa_val(e));",
        "}"])
    scratch = {"tie": "atomic<u32>"} if has_ties(op, dt) else {}
    inputs = used_inputs(kernel, list(kernel.operands[1:]))
    return SaShader(_finish(kernel, g, _decls(kernel, g, inputs, _out_word(dt), scratch), fns, main),
                    inputs, tuple(scratch))


def render_reduce_init(kernel: Kernel) -> SaShader:
    """The float passes' first: ``out0 = base`` and each bin's tie word (``TIE_NAN`` over a NaN base
    for max / min, else 0), one thread a bin."""
    op = scatter_op(kernel.attrs)
    g = _Gen(kernel)
    fns = [_load_fn(g, kernel.operands[0], "sa_base")]
    nan = f"select(0u, {TIE_NAN}, ga_isnan_f32(x))" if op in ("max", "min") else "0u"
    main = _HEAD.format(wg=WORKGROUP) + "\n".join([
        f"  let b = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
        "  if (b >= prm[0]) { return; }",
        "  let x = sa_base(b);",
        "  out0[b] = x;",
        f"  tie[b] = {nan};",
        "}"])
    inputs = used_inputs(kernel, [kernel.operands[0]])
    return SaShader(_finish(kernel, g, _decls(kernel, g, inputs, "f32", {"tie": "u32"}), fns, main),
                    inputs, ("tie",))


def render_reduce_fixup(kernel: Kernel) -> SaShader:
    """The float passes' last, one thread a bin: the first NaN's bits where one was combined (and the
    base was not NaN), else the last zero's where the result is a zero."""
    g = _Gen(kernel)
    _base_i, _idx_i, val_i = kernel.operands
    fns = [_load_fn(g, val_i, "sa_val")]
    main = _HEAD.format(wg=WORKGROUP) + "\n".join([
        f"  let b = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
        "  if (b >= prm[0]) { return; }",
        "  let t = tie[b];",
        f"  if (t == 0u || t == {TIE_NAN}) {{ return; }}",
        "  if (t >= 0x80000000u) {",
        "    out0[b] = sa_val(0x7ffffffeu - (t & 0x7fffffffu));",
        "  } else if ((bitcast<u32>(out0[b]) & 0x7fffffffu) == 0u) {",
        "    out0[b] = sa_val(t - 1u);",
        "  }",
        "}"])
    inputs = used_inputs(kernel, [val_i])
    return SaShader(_finish(kernel, g, _decls(kernel, g, inputs, "f32", {"tie": "u32"}), fns, main),
                    inputs, ("tie",))
