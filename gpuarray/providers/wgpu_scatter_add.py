"""``scatter_add`` on the wgpu provider (WGSL from ``render.wgsl_scatter_add``): ``out = base``, then
``out[idx[i]] += val[i]``, recorded into the open pass.

- 32-bit integers, 64-bit integers (two words with a carry) and float32 (a compare-exchange loop):
  atomics. Bins that fit ``PRIVATE_WORDS`` words of workgroup memory, with at least as many elements
  as bins, take the privatized pass: ``G`` workgroups of ``K * 256`` elements each (about
  ``TARGET_GROUPS`` workgroups, at least enough elements per workgroup to pay for its ``B`` flushes);
  more bins take one global atomic per element. Integer sums of one constant (``bincount`` and
  ``histogram`` without weights: ``counting``) count in one 32-bit word a bin (4096 bins fit, one
  workgroup atomic an element, no carry), then add ``count * value`` per bin. H200 before the
  counting mode and the unrolled loads (``UNROLL``): ``histogram`` of 2^26 float32 into 100 bins
  0.87 ms GPU, 2 dispatches (CuPy 0.55 ms wall); ``bincount`` of 1000 bins 0.72 (CuPy 1.49).
- ``attrs == ("sorted",)`` (indices sorted by the namespace: float64, which has no atomics): the
  segmented sum by key, ``ceil(log(N) / log(SEG_BLOCK / 2))`` levels of one dispatch each over two
  pairs of ping-pong scratch arrays, deterministic.

- another combine (attrs ending with ``max`` / ``min`` / ``fmax`` / ``fmin`` / ``and`` / ``or`` /
  ``xor``: ``scatter_reduce``): unsorted, one global atomic an element (``render.wgsl_scatter_reduce``;
  32-bit integers and int64 / uint64 and / or / xor: ``copy`` then the atomics, 2 dispatches; float32:
  ``init``, the compare-exchange loop and ``fixup`` over a scratch tie word a bin, 3); sorted (64-bit
  max / min, float64): the segmented reduction above with the combine in place of the sum.

An unsorted float64 (or other non-atomic) kernel is refused by ``scatter_add_cannot_run`` and runs on
the host, counted as a fallback.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP, int32, uint32
from ..render.wgsl import WORKGROUP
from ..render.wgsl_scatter import pass_roots, render_scatter, used_inputs
from ..render.wgsl_scatter_add import (
    ATOMIC_DTYPES,
    COPIES,
    PRIVATE_WORDS,
    SEG_BLOCK,
    WORDS,
    SaShader,
    counting,
    render_atomic,
    render_segsum,
    scatter_op,
)
from ..render.wgsl_scatter_reduce import (
    ATOMIC_REDUCE,
    has_ties,
    render_reduce_atomic,
    render_reduce_fixup,
    render_reduce_init,
)
from .wgpu_bindings import wide_buffers

TARGET_GROUPS = 1024    # workgroups of the privatized pass (each flushes its bins once)
MAX_K = 1024            # elements per thread there (CPU adapters end loops after 65535 steps)


def _sorted(kernel: Kernel) -> bool:
    return kernel.attrs[:1] == ("sorted",)


def _count(kernel: Kernel) -> int:
    return math.prod(kernel.instrs[kernel.operands[1]].shape)


def scatter_add_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    """Limits of ``scatter_add`` beyond the provider's generic ones."""
    dt = kernel.out_nodes[0].dtype
    if kernel.instrs[kernel.operands[1]].dtype not in (int32, uint32):
        return "scatter_add: indices must be int32 or uint32 on the device"
    op = scatter_op(kernel.attrs)
    if not _sorted(kernel) and dt not in (ATOMIC_DTYPES if op == "add" else ATOMIC_REDUCE[op]):
        return (f"scatter_add: WGSL has no atomics for {op} of {dt}; it runs on the device only over "
                "sorted indices (attrs ('sorted', ...))")
    if _count(kernel) >= 2**31 or kernel.size >= 2**31:
        return "scatter_add: 2**31 or more elements or bins"
    return None


def plan_private(bins: int, n: int, dt: Any, count: bool = False) -> tuple[int, int] | None:
    """``(K, G)`` of the privatized pass, or None where the bins do not fit workgroup memory (or there
    are fewer elements than bins: the global pass is cheaper); ``count``: the counting mode (one
    word a bin)."""
    w = 1 if count else WORDS[dt]
    if bins * w > PRIVATE_WORDS or n < bins:
        return None
    k = max(4, -(-bins * w // WORKGROUP), -(-n // (WORKGROUP * TARGET_GROUPS)))
    k = min(k, MAX_K)
    return k, -(-n // (WORKGROUP * k))


def copies(bins: int) -> int:
    """Copies of the counting mode's workgroup bins: the largest power of two up to ``COPIES``
    that fits ``PRIVATE_WORDS``."""
    c = COPIES
    while c > 1 and c * bins > PRIVATE_WORDS:
        c //= 2
    return c


def _shader(provider: Any, kernel: Kernel, variant: tuple, make: Any) -> SaShader:
    key = ("wgpu_scatter_add", kernel.signature, variant)
    sh = provider.rendered.get(key)
    if sh is None:
        sh = provider.rendered[key] = make()
    return sh


def _dispatch(provider: Any, kernel: Kernel, sh: SaShader, in_handles: list[Any], out: Any,
              named: dict[str, Any], extra: dict[str, int], groups: int) -> None:
    r = sh.rendered
    wide = wide_buffers(provider, r, kernel)
    bufs = [*(in_handles[j] for j in sh.inputs), out, *wide, *(named[s] for s in sh.scratch)]
    provider.dispatch(r.source, r.meta(kernel, extra), bufs, groups)


def _copy(provider: Any, kernel: Kernel, in_handles: list[Any], out: Any) -> None:
    """``out = base`` (``render_scatter``'s copy pass)."""
    copy = dataclasses.replace(kernel, attrs=(0, "copy"), _sig=None)
    r = provider.rendered_for(copy, render_scatter)
    ins = [in_handles[j] for j in used_inputs(copy, pass_roots(copy))]
    wide = wide_buffers(provider, r, copy)
    provider.dispatch(r.source, r.meta(copy, {"N": kernel.size}), [*ins, out, *wide], -(-kernel.size // WORKGROUP))


def enqueue_scatter_add(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """Record a ``scatter_add`` kernel; returns its output handle."""
    dt = kernel.out_nodes[0].dtype
    out = provider.alloc(kernel.size * STORAGE_NP[dt].itemsize)
    if kernel.size == 0:
        return [out]
    op = scatter_op(kernel.attrs)
    if op != "add" and not _sorted(kernel):
        _reduce(provider, kernel, in_handles, out, op)
        return [out]
    _copy(provider, kernel, in_handles, out)
    n = _count(kernel)
    if n == 0:
        return [out]
    if _sorted(kernel):
        _segsum(provider, kernel, in_handles, out, n)
        return [out]
    pp = plan_private(kernel.size, n, dt, counting(kernel))
    if pp is None:
        sh = _shader(provider, kernel, ("global",), lambda: render_atomic(kernel, False))
        _dispatch(provider, kernel, sh, in_handles, out, {}, {"N": n}, -(-n // WORKGROUP))
    else:
        k, g = pp
        sh = _shader(provider, kernel, ("private",), lambda: render_atomic(kernel, True))
        _dispatch(provider, kernel, sh, in_handles, out, {}, {"N": n, "K": k, "G": g, "C": copies(kernel.size)}, g)
    return [out]


def _reduce(provider: Any, kernel: Kernel, in_handles: list[Any], out: Any, op: str) -> None:
    """An atomic combine other than the sum (``render.wgsl_scatter_reduce``)."""
    dt = kernel.out_nodes[0].dtype
    n = _count(kernel)
    if not has_ties(op, dt):
        _copy(provider, kernel, in_handles, out)
        if n:
            sh = _shader(provider, kernel, ("reduce",), lambda: render_reduce_atomic(kernel))
            _dispatch(provider, kernel, sh, in_handles, out, {}, {"N": n}, -(-n // WORKGROUP))
        return
    tie = provider.alloc(4 * kernel.size)
    named = {"tie": tie}
    for variant, render, count in (("init", render_reduce_init, kernel.size), ("reduce", render_reduce_atomic, n),
                                   ("fixup", render_reduce_fixup, kernel.size)):
        if count:
            sh = _shader(provider, kernel, (variant,), lambda r=render: r(kernel))
            _dispatch(provider, kernel, sh, in_handles, out, named, {"N": n}, -(-count // WORKGROUP))
    provider.free(tie)


def _segsum(provider: Any, kernel: Kernel, in_handles: list[Any], out: Any, n: int) -> None:
    """The levels of the segmented sum (``render_segsum``) over ping-pong (key, value) scratch pairs."""
    dt = kernel.out_nodes[0].dtype
    item = STORAGE_NP[dt].itemsize
    nb = -(-n // SEG_BLOCK)
    pairs: list[tuple[Any, Any]] = []
    if nb > 1:
        sizes = [2 * nb, 2 * -(-2 * nb // SEG_BLOCK)]
        pairs = [(provider.alloc(4 * s), provider.alloc(item * s)) for s in sizes]
    level = 0
    while True:
        first, final = level == 0, nb == 1
        sh = _shader(provider, kernel, ("segsum", first, final), lambda f=first, z=final: render_segsum(kernel, (f, z)))
        named: dict[str, Any] = {}
        if not first:
            named["kin"], named["vin"] = pairs[(level - 1) % 2]
        if not final:
            named["kout"], named["vout"] = pairs[level % 2]
        _dispatch(provider, kernel, sh, in_handles if first else [], out, named, {"N": n, "NB": nb},
                  -(-nb // WORKGROUP))
        if final:
            break
        n, level = 2 * nb, level + 1
        nb = -(-n // SEG_BLOCK)
    for kb, vb in pairs:
        provider.free(kb)
        provider.free(vb)
