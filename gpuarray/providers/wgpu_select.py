"""``select`` on the wgpu provider (WGSL from ``render.wgsl_select``): the values at given ranks of
an array's sort order by MSD radix selection, recorded into the open pass.

Dispatches per kernel: ``render_init`` (one workgroup), then per pass a counting pass
(``render_hist``, about ``TARGET_GROUPS`` workgroups walking ``K`` elements a thread) and a find
(``render_find``, one workgroup a rank): the first pass takes the top ``FIRST_BITS`` (11) bits of the key
in one histogram, the next ones ``B = min(11, log2(HIST_WORDS / R))`` bits for each of the ``R``
ranks (``plan``). A float32 key with two ranks (one ``q`` of ``percentile``) takes 11 + 11 + 10
bits: 7 dispatches, three reads of the data; float64 11 + 4 x 11 + 9 bits: 13 dispatches.
The sort it replaces for ``percentile`` (q = 30 of 10^7 float32, H200): 13 dispatches, 0.70 ms
GPU, 1.58 ms wall (CuPy 0.353); this path is not measured on the H200 yet (``bench/selection.py``).

>>> plan(np.dtype("float32"), 2)
[(21, 11), (10, 11), (0, 10)]
>>> len(plan(np.dtype("float64"), 2)), plan(np.dtype("int32"), 9)[1]
(6, (13, 8))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP, int32
from ..render.wgsl import WORKGROUP
from ..render.wgsl_select import (
    FIRST_BITS,
    HIST_WORDS,
    KEY_BITS,
    SELECT_DTYPES,
    STATE_WORDS,
    render_find,
    render_hist,
    render_init,
)
from .wgpu_bindings import wide_buffers

TARGET_GROUPS = 1024    # workgroups of a counting pass (each flushes its bins once)
MIN_PER_THREAD = 64     # elements a thread walks at least (fewer workgroups, fewer flushes)
MAX_RANKS = 64          # ranks of one kernel (the later passes' bins: R * 2^B <= HIST_WORDS)


def plan(dt: np.dtype, ranks: int) -> list[tuple[int, int]]:
    """``(shift, bits)`` of each pass, from the top of the key: ``FIRST_BITS``, then as many bits
    as ``ranks`` histograms fit in ``HIST_WORDS`` (at most 11)."""
    bits = KEY_BITS[dt]
    later = min(FIRST_BITS, int(math.log2(HIST_WORDS // max(ranks, 1))))
    out = [(bits - FIRST_BITS, FIRST_BITS)]
    left = bits - FIRST_BITS
    while left > 0:
        b = min(later, left)
        left -= b
        out.append((left, b))
    return out


def select_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    """Limits of ``select`` beyond the provider's generic ones."""
    dt = kernel.instrs[kernel.operands[0]].dtype
    if dt not in SELECT_DTYPES:
        return f"select: no radix key for {dt} (float32/64, int32/64, uint32/64)"
    if kernel.instrs[kernel.operands[1]].dtype != int32:
        return "select: ranks must be int32"
    r = kernel.size - 1
    if r > MAX_RANKS:
        return f"select: at most {MAX_RANKS} ranks a kernel; got {r}"
    if math.prod(kernel.instrs[kernel.operands[0]].shape) >= 2**31:
        return "select: 2**31 or more elements"
    return None


def _get(provider: Any, kernel: Kernel, name: str, make: Any) -> Any:
    key = ("wgpu_select", name, kernel.signature)
    sh = provider.rendered.get(key)
    if sh is None:
        sh = provider.rendered[key] = make(kernel)
    return sh


def _wide(provider: Any, kernel: Kernel, r: Any) -> list[Any]:
    return wide_buffers(provider, r, kernel)        # kept by value: no new buffer or bind group a call


def enqueue_select(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """Record a ``select`` kernel; returns its output handle (``R + 1`` values)."""
    dt = kernel.out_nodes[0].dtype
    out = provider.alloc(kernel.size * STORAGE_NP[dt].itemsize)
    nr = kernel.size - 1
    n = math.prod(kernel.instrs[kernel.operands[0]].shape)
    if nr == 0 or n == 0:
        return [out]
    passes = plan(dt, nr)
    offs, cn = [], 0
    for p, (_sh, b) in enumerate(passes):
        offs.append(cn)
        cn += (1 << b) + 1 if p == 0 else nr << b
    cnt = provider.alloc(4 * cn)
    st = provider.alloc(4 * STATE_WORDS * nr)
    r_init, ins_init = _get(provider, kernel, "init", render_init)
    provider.dispatch(r_init.source, r_init.meta(kernel, {"N": n, "R": nr, "CN": cn}),
                      [*(in_handles[j] for j in ins_init), *_wide(provider, kernel, r_init), cnt, st], 1)
    r_hist, ins_hist = _get(provider, kernel, "hist", render_hist)
    r_find = _get(provider, kernel, "find", render_find)
    groups = max(1, min(TARGET_GROUPS, n // (WORKGROUP * MIN_PER_THREAD)))
    k = -(-n // (WORKGROUP * groups))
    hist_bufs = [*(in_handles[j] for j in ins_hist), *_wide(provider, kernel, r_hist), cnt, st]
    for p, (sh, b) in enumerate(passes):
        first, last = p == 0, p == len(passes) - 1
        extra = {"N": n, "K": k, "G": groups, "SH": sh, "B": b, "HI": 0 if first else sh + b,
                 "NR": 1 if first else nr, "NANW": 1 if first else 0, "COFF": offs[p]}
        provider.dispatch(r_hist.source, r_hist.meta(kernel, extra), hist_bufs, groups)
        extra = {"R": nr, "SH": sh, "B": b, "SHARED": 1 if first else 0, "COFF": offs[p], "LAST": 1 if last else 0,
                 "NANAT": 1 << passes[0][1]}
        provider.dispatch(r_find.source, r_find.meta(kernel, extra), [cnt, st, out], nr)
    provider.free(cnt)
    provider.free(st)
    return [out]


__all__ = ["enqueue_select", "select_cannot_run", "plan", "MAX_RANKS"]
