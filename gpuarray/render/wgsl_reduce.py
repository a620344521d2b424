"""Render a reduction kernel (sum, prod, max, min, any, all) as WGSL.

One workgroup of 256 threads produces one partial result: output ``m`` is
split into ``G`` chunks (``G`` = 1 for one pass), workgroup ``w`` reduces
chunk ``w % G`` of output ``w / G``; each thread strides over its chunk
evaluating the fused prologue at the input index, then the workgroup
combines in shared memory. The provider runs a second pass over the ``G``
partials when ``G`` > 1. Sizes and ``G`` are runtime parameters.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import WGSL_STORAGE_TYPE, WGSL_TYPE
from .._ops import OPS
from ..compiler.kernel import Kernel
from .wgsl import _SMALL_WRAP, WORKGROUP, Rendered, _Gen, _suffix, declare_bindings, fill, input_types, reduction_index
from .wgsl_lib import helpers_for

COMBINE = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
           "any": "maximum", "all": "minimum"}


def identity(rop: str, dtype: np.dtype) -> str:
    """WGSL expression of the identity of ``rop`` for ``dtype`` (bools travel as u32 0/1)."""
    if dtype == np.bool_:
        return "0u" if rop in ("any", "sum") else "1u"
    t = WGSL_TYPE[dtype]
    if rop == "sum":
        return f"{t}(0)"
    if rop == "prod":
        return f"{t}(1, 0)" if dtype.kind == "c" else f"{t}(1)"
    if dtype.kind == "f":
        inf = f"ga_inf_{_suffix(dtype)}()"
        return f"-{inf}" if rop == "max" else inf
    info = np.iinfo(dtype)
    v = info.min if rop == "max" else info.max
    if t == "i64" and v < 0:
        return "(i64(-9223372036854775807) - i64(1))"
    if t == "i32" and v == -(2**31):
        return "(i32(-2147483647) - i32(1))"
    if t in ("u32", "u64") and v == np.iinfo(np.dtype(t.replace("u", "uint"))).max:
        return f"(~{t}(0))"
    return f"{t}({v})"


def combine(rop: str, dtype: np.dtype, a: str, b: str) -> str:
    if dtype == np.bool_:   # bools travel as u32 0/1: sum and any are "or", prod and all are "and"
        return f"{'max' if rop in ('any', 'sum') else 'min'}({a}, {b})"
    expr = fill(OPS[COMBINE[rop]].template(dtype.kind), dtype, (a, b))
    if dtype in _SMALL_WRAP:     # int8/int16/uint8/uint16 live in 32 bits: wrap after each step
        expr = _SMALL_WRAP[dtype].replace("{x}", expr)
    return expr


def render_reduce(kernel: Kernel) -> Rendered:
    """WGSL for a ``reduce`` kernel; ``prm`` extras: M (outputs), L (reduce length), G (chunks)."""
    rop, axes = kernel.attrs
    op_i = kernel.operands[0]
    dt = kernel.out_nodes[0].dtype
    acc_t = "u32" if dt == np.bool_ else WGSL_TYPE[dt]
    g = _Gen(kernel)
    head = ["  let w = wid.y * nwg.x + wid.x;",
            f"  let G = {g.slot(('extra', 'G'))};",
            f"  if (w >= {g.slot(('extra', 'MG'))}) {{ return; }}",
            "  let m = w / G;",
            "  let chunk = w % G;",
            f"  let L = {g.slot(('extra', 'L'))};"]
    split, body, v = reduction_index(g, op_i, axes)
    head += split
    val = f"select(0u, 1u, {v})" if dt == np.bool_ else v
    body.append(f"    acc = {combine(rop, dt, 'acc', val)};")
    decls = declare_bindings(input_types(kernel), [WGSL_STORAGE_TYPE[dt]], g.wide)
    decls.append(f"var<workgroup> sh: array<{acc_t}, {WORKGROUP}>;")
    main = "\n".join([
        f"@compute @workgroup_size({WORKGROUP})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        *head,
        f"  var acc: {acc_t} = {identity(rop, dt)};",
        f"  var k = chunk * {WORKGROUP}u + lid;",
        "  loop {",
        "    if (k >= L) { break; }",
        *body,
        f"    k = k + G * {WORKGROUP}u;",
        "  }",
        "  sh[lid] = acc;",
        "  workgroupBarrier();",
        f"  var s = {WORKGROUP // 2}u;",
        "  loop {",
        "    if (s == 0u) { break; }",
        f"    if (lid < s) {{ sh[lid] = {combine(rop, dt, 'sh[lid]', 'sh[lid + s]')}; }}",
        "    workgroupBarrier();",
        "    s = s >> 1u;",
        "  }",
        "  if (lid == 0u) { out0[w] = sh[0]; }",
        "}",
    ])
    source = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main + "\n"
    return Rendered(source, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs), 1)
