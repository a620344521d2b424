"""Render a ``random`` kernel as WGSL: one Philox4x32-10 block a thread, its elements written
(``providers/host_random.py`` says which element takes which word; the device draws the same bits).

The kernel's four operands are the key ``(k0, k1)`` and the draw's counter words ``(c0, c1)``, 0-d
uint32 constants: run-time parameters (uniforms, or 0-d inputs where a constant was evaluated on its
own), so one shader serves every draw of a dtype and distribution (and a replayed plan takes the
new draw's counter). Philox's 32 x 32 -> 64-bit products are one
``u64`` multiply on adapters with ``shader-int64``, else four 16-bit products (``i64`` False).
Thread ``b`` writes its block's ``j``-th element at ``j * NB + b`` (``NB`` blocks: a warp's stores are
contiguous; H100, 2^26 float32 uniforms: 0.355 ms of GPU time with a block's four elements side by
side, a thread's stores 16 bytes apart), those at ``N`` or past it dropped; threads past the last
block return.

>>> import numpy as np
>>> "ga_philox" in philox_fn(True) and "u64" in philox_fn(True) and "u64" not in philox_fn(False)
True
"""

from __future__ import annotations

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE
from .wgsl import WORKGROUP, Rendered, _Gen
from .wgsl_lib import helpers_for
from .wgsl_parts import declare_bindings, input_types


def philox_fn(i64: bool) -> str:
    """``ga_philox(ctr, key) -> vec4<u32>``: ten rounds of Philox4x32 (with ``i64``: 64-bit products)."""
    if i64:
        mul = ["  let p0 = u64(c.x) * u64(0xD2511F53u);", "  let p1 = u64(c.z) * u64(0xCD9E8D57u);",
               "  let h0 = u32(p0 >> 32u); let l0 = u32(p0 & u64(0xFFFFFFFFu));",
               "  let h1 = u32(p1 >> 32u); let l1 = u32(p1 & u64(0xFFFFFFFFu));"]
    else:
        mul = ["  let h0 = ga_mulhi32(c.x, 0xD2511F53u); let l0 = c.x * 0xD2511F53u;",
               "  let h1 = ga_mulhi32(c.z, 0xCD9E8D57u); let l1 = c.z * 0xCD9E8D57u;"]
    rnd = ["fn ga_philox_round(c: vec4<u32>, k: vec2<u32>) -> vec4<u32> {", *mul,
           "  return vec4<u32>(h1 ^ c.y ^ k.x, l1, h0 ^ c.w ^ k.y, l0);", "}"]
    mulhi = [] if i64 else [
        "fn ga_mulhi32(a: u32, b: u32) -> u32 {",
        "  let a0 = a & 0xFFFFu; let a1 = a >> 16u; let b0 = b & 0xFFFFu; let b1 = b >> 16u;",
        "  let p01 = a0 * b1; let p10 = a1 * b0;",
        "  let mid = ((a0 * b0) >> 16u) + (p01 & 0xFFFFu) + (p10 & 0xFFFFu);",
        "  return a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);", "}"]
    # the ten rounds written out: a loop took 0.207 ms of H100 time for 2^26 float32 draws, 0.150 unrolled
    rounds = ["  c = ga_philox_round(c, k);", "  k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);"] * 9
    body = ["fn ga_philox(ctr: vec4<u32>, key: vec2<u32>) -> vec4<u32> {",
            "  var c = ctr;", "  var k = key;", *rounds, "  return ga_philox_round(c, k);", "}"]
    return "\n".join(mulhi + rnd + body)


def _values(dist: str, dt: np.dtype) -> list[str]:
    """Lines that turn the block's words ``w`` into this thread's elements ``rn_v0 ..``."""
    if dist == "bits":
        if dt.itemsize == 4:
            return [f"  let rn_v{j} = rn_w[{j}];" for j in range(4)]
        return [f"  let rn_v{j} = u64(rn_w[{2 * j}]) | (u64(rn_w[{2 * j + 1}]) << 32u);" for j in range(2)]
    if dt == np.float32:
        lines = [f"  let rn_u{j} = f32(rn_w[{j}] >> 8u) * 5.9604644775390625e-8;" for j in range(4)]
        if dist == "uniform":
            return lines + [f"  let rn_v{j} = rn_u{j};" for j in range(4)]
        for p in range(2):
            lines += [f"  let rn_r{p} = ga_sqrt_f32(-2.0 * ga_log_f32(rn_u{2 * p} + 5.9604644775390625e-8));",
                      f"  let rn_sc{p} = ga_sincos_f32(6.2831855 * rn_u{2 * p + 1});",
                      f"  let rn_v{2 * p} = rn_r{p} * rn_sc{p}.y;", f"  let rn_v{2 * p + 1} = rn_r{p} * rn_sc{p}.x;"]
        return lines
    lines = [f"  let rn_u{j} = f64((u64(rn_w[{2 * j}]) >> 5u) * u64(67108864u) + (u64(rn_w[{2 * j + 1}]) >> 6u))"
             " * 1.1102230246251565e-16;" for j in range(2)]
    if dist == "uniform":
        return lines + [f"  let rn_v{j} = rn_u{j};" for j in range(2)]
    return lines + ["  let rn_r = ga_sqrt_f64(-2.0 * ga_log_f64(rn_u0 + 1.1102230246251565e-16));",
                    "  let rn_sc = ga_sincos_f64(6.283185307179586 * rn_u1);",
                    "  let rn_v0 = rn_r * rn_sc.y;", "  let rn_v1 = rn_r * rn_sc.x;"]


def per_block(dist: str, dt: np.dtype) -> int:
    """Elements of ``dt`` one block gives."""
    return 4 if dt.itemsize == 4 else 2


def render_random(kernel: Kernel, variant: tuple[bool, str]) -> Rendered:
    """WGSL for a ``random`` kernel (attrs ``(dist,)``); ``variant``: (64-bit integers in shaders, the
    result's dtype string: part of the cache key); ``prm`` extras: N (elements), NB (blocks)."""
    i64 = variant[0]
    dist = kernel.attrs[0]
    dt = kernel.out_nodes[0].dtype
    g = _Gen(kernel)
    n, nb = g.slot(("extra", "N")), g.slot(("extra", "NB"))
    k0, k1, c0, c1 = (g.value(o, ("lin", "0u")) for o in kernel.operands)
    per = per_block(dist, dt)
    body = ["  let rn_b = (wid.y * nwg.x + wid.x) * " + f"{WORKGROUP}u + lid;",
            f"  if (rn_b >= {nb}) {{ return; }}",
            *("  " + ln.strip() for ln in g.lines),
            f"  let rn_w = ga_philox(vec4<u32>(rn_b, {c0}, {c1}, 0u), vec2<u32>({k0}, {k1}));",
            *_values(dist, dt)]
    for j in range(per):         # element j * NB + b: a warp's stores are contiguous
        at = f"{j}u * {nb} + rn_b" if j else "rn_b"
        body.append(f"  if ({at} < {n}) {{ out0[{at}] = rn_v{j}; }}" if j else "  out0[rn_b] = rn_v0;")
    main = "\n".join([f"@compute @workgroup_size({WORKGROUP})",
                      "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
                      "        @builtin(local_invocation_index) lid: u32) {", *body, "}"])
    fns = philox_fn(i64)
    decls = declare_bindings(input_types(kernel), [WGSL_STORAGE_TYPE[dt]], g.wide)
    src = "\n".join(decls) + "\n\n" + helpers_for(fns + "\n" + main) + "\n\n" + fns + "\n\n" + main + "\n"
    return Rendered(src, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs), 1)
