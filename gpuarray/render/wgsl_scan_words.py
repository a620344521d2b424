"""The look-back scan's published values and the subgroup moves of its states (``wgsl_scan_lookback.py``).

A tile's value is published in ``words(op, dtype)`` atomic u32 words, each carrying its status in bits
16-17 and 16 bits of the value (Levien's split-word protocol for WebGPU's relaxed 32-bit atomics): a
reader accepts it only when every word carries the same status. States wider than 32 bits (64-bit
values, a float product's (product, flags) pair) move between the lanes of a subgroup as their 32-bit
parts (WGSL's subgroup built-ins take 32- and 16-bit types).

>>> words("sum", np.dtype("float32")), words("prod", np.dtype("float64"))
(2, 5)
"""

from __future__ import annotations

import numpy as np

from ..core.dtypes import WGSL_TYPE
from .wgsl_scan import is_pair


def _halves(op: str, dtype: np.dtype) -> list[tuple[str, str]]:
    """The 32-bit parts of a state ``s`` as (WGSL u32 expression of the bits, how many 16-bit halves
    carry them: "lo" where the value fits 16 bits, "both" otherwise)."""
    if is_pair(op, dtype):
        return [*_halves_of(WGSL_TYPE[dtype], "s.v"), ("s.f", "lo")]
    if dtype == np.bool_:
        return [("s", "lo")]
    return _halves_of(WGSL_TYPE[dtype], "s")


def _halves_of(t: str, e: str) -> list[tuple[str, str]]:
    if t == "u32":
        return [(e, "both")]
    if t in ("i32", "f32"):
        return [(f"bitcast<u32>({e})", "both")]
    b = e if t == "u64" else f"bitcast<u64>({e})"
    return [(f"u32({b} & 0xfffffffflu)", "both"), (f"u32({b} >> 32u)", "both")]


def _from_bits(t: str, parts: list[str]) -> str:
    """The value of type ``t`` from its 32-bit parts (u32 expressions)."""
    if t == "u32":
        return parts[0]
    if t in ("i32", "f32"):
        return f"bitcast<{t}>({parts[0]})"
    b = f"((u64({parts[1]}) << 32u) | u64({parts[0]}))"
    return b if t == "u64" else f"bitcast<{t}>({b})"


def words(op: str, dtype: np.dtype) -> int:
    """Atomic u32 words per published value (16 value bits each)."""
    return sum(1 if n == "lo" else 2 for _e, n in _halves(op, dtype))


def _publish(op: str, dtype: np.dtype, t: str) -> str:
    """``lb_publish(i, s, st)``: the state ``s`` of tile ``i`` in its words, with status ``st``."""
    lines = [f"fn lb_publish(i: u32, s: {t}, st: u32) {{", f"  let w = 1u + i * {words(op, dtype)}u;"]
    k = 0
    for e, n in _halves(op, dtype):
        lines.append(f"  atomicStore(&flags[w + {k}u], ({e} & 0xffffu) | (st << 16u));")
        k += 1
        if n == "both":
            lines.append(f"  atomicStore(&flags[w + {k}u], ({e} >> 16u) | (st << 16u));")
            k += 1
    return "\n".join([*lines, "}"])


def _read(op: str, dtype: np.dtype, t: str) -> str:
    """``lb_read(i)``: tile ``i``'s published state into ``lb_val``; returns its status (0: none
    yet, or words of two statuses: a value being replaced)."""
    nw = words(op, dtype)
    lines = ["fn lb_read(i: u32) -> u32 {", f"  let w = 1u + i * {nw}u;"]
    lines += [f"  let w{k} = atomicLoad(&flags[w + {k}u]);" for k in range(nw)]
    lines.append("  let st = w0 >> 16u;")
    if nw > 1:
        same = " || ".join(f"(w{k} >> 16u) != st" for k in range(1, nw))
        lines.append(f"  if ({same}) {{ return 0u; }}")
    parts, k = [], 0
    for _e, n in _halves(op, dtype):
        if n == "lo":
            parts.append(f"(w{k} & 0xffffu)")
            k += 1
        else:
            parts.append(f"((w{k} & 0xffffu) | (w{k + 1} << 16u))")
            k += 2
    if is_pair(op, dtype):
        ft = WGSL_TYPE[dtype]
        val = f"SP({_from_bits(ft, parts[:-1])}, {parts[-1]})"
    else:
        val = _from_bits("u32" if dtype == np.bool_ else WGSL_TYPE[dtype], parts)
    lines += [f"  lb_val = {val};", "  return st;", "}"]
    return "\n".join(lines)


def is_wide(op: str, dtype: np.dtype) -> bool:
    """Whether the scan state is wider than 32 bits (64-bit values, (product, flags) pairs)."""
    return is_pair(op, dtype) or dtype.itemsize > 4


def _sg_ops(op: str, dtype: np.dtype, t: str) -> tuple[str, dict[str, str]]:
    """The subgroup moves of a state: (WGSL functions, templates over {v} and {d} of ``up``
    (``subgroupShuffleUp``), ``down`` (``subgroupShuffleDown``), ``bc0`` (``subgroupBroadcast``
    from lane 0), ``last`` (from the last lane)). A 32-bit state moves as it is; a wider one (WGSL
    defines the subgroup built-ins for 32- and 16-bit types, not the 64-bit ones of shader-f64 /
    shader-int64) as its 32-bit parts, each moved and the state rebuilt from their bits."""
    calls = {"up": "subgroupShuffleUp({v}, {d})", "down": "subgroupShuffleDown({v}, {d})",
             "bc0": "subgroupBroadcast({v}, 0u)", "last": "subgroupShuffle({v}, lb_sgs - 1u)"}
    if not is_wide(op, dtype):
        return "", calls
    halves = _halves(op, dtype)
    fns = []
    for k, call in calls.items():
        c = call.replace("{d}", "d")
        parts = [f"p{i}" for i in range(len(halves))]
        val = (f"SP({_from_bits(WGSL_TYPE[dtype], parts[:-1])}, {parts[-1]})" if is_pair(op, dtype)
               else _from_bits(WGSL_TYPE[dtype], parts))
        fns += [f"fn lb_{k}(s: {t}{'' if k in ('bc0', 'last') else ', d: u32'}) -> {t} {{",
                *[f"  let p{i} = {c.replace('{v}', e)};" for i, (e, _n) in enumerate(halves)],
                f"  return {val};", "}"]
    return "\n".join(fns), {"up": "lb_up({v}, {d})", "down": "lb_down({v}, {d})", "bc0": "lb_bc0({v})",
                             "last": "lb_last({v})"}
