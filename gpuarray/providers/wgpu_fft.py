"""The ``fft`` kernel kind on the wgpu provider: lengths whose prime factors are at most 13, along one axis.

An operand that is not a plain input buffer (a fused elementwise cone) is computed by the first of the
transform's passes as it loads it (``render/wgsl_fft_fused.py``; ``GPUARRAY_FFT_FUSE=0``, the other
kernels, or a shader of another form: one prologue pass writes it first), then the transform's passes.
By default every such length (powers of two included) is a mixed-radix Stockham transform whose
passes load their first stage's inputs and store their last stage's outputs from registers
(``render/wgsl_fft_reg.py``: one exchange through workgroup memory per pass of two stages, powers of
two as radices of up to 16, ``GPUARRAY_FFT_MAX_RADIX``, and 2s with odd primes as radices ``2 p`` where
that saves a stage, ``GPUARRAY_FFT_PAIR``), in tiles of up to 32 KiB
(``GPUARRAY_FFT_REG_TILE_BYTES``: 4096 complex64 points, where the adapter has 34 KiB of workgroup
memory: NVIDIA's Vulkan drivers report 48, lavapipe 32) when those save a pass, else
``GPUARRAY_FFT_TILE_BYTES`` (``pass_tile``): complex64 dispatches 2^16 2, 2^20 2 (2^10 x 2^10), 2^22
and 2^24 3 (lavapipe: 2^20 3).
``GPUARRAY_FFT_REG=0`` gives the previous passes (``render/wgsl_fft_mixed.py``: every stage from and
back to workgroup memory, radix 8/4 for powers of two, 8 KiB tiles: 2^16 2, 2^20 3, 2^22 3, 2^24 3;
H200 complex64 wall / GPU ms 2^20 0.107 / 0.053, 2^22 0.161 / 0.160). Both take the same plan
(``mixed_plan``), groups and twiddles (per pass: each group's factors and a local table, made once per
(length, plan, direction, scale, dtype) in float64 and kept on the device, ``static_buffer``).
The radix-2 kernels stay behind switches: several radix-2 stages per dispatch
(``render/wgsl_fft_block.py``, ``GPUARRAY_FFT_MIXED_POW2=0`` for powers of two; H200, complex64, wall /
GPU ms: 2^20 0.097 / 0.084, 2^22 0.261 / 0.257, with 8 KiB tiles, faster than 16 or 32 KiB there) and
one stage per dispatch (``render/wgsl_fft.py``: ``GPUARRAY_FFT_BLOCK=0``, or an adapter with too
little workgroup memory, which also turn the mixed kernel off, so that lengths other than powers of
two go through Bluestein). ``GPUARRAY_FFT_MIXED=0`` sends every length that is not a power of two
through Bluestein (``gpuarray/fft/chirp.py``; H200: 10^6 0.72 / 0.32 ms, 3 x 10^6 1.08 / 1.08 ms
before the mixed kernel). The register kernel is not yet measured on the H200
(``python -m bench.fft_lengths``). Tuning: ``GPUARRAY_FFT_TILE_BYTES`` (workgroup memory per block,
at most; 8192) and ``GPUARRAY_FFT_MIN_RUN`` (contiguous bytes a multi-pass plan keeps per access;
32). Everything is recorded into the open compute pass.

Other lengths reach this kernel as Bluestein's two transforms of a 7-smooth length (``fft_chirp.py``);
a length with a larger prime factor here (the host's own ``fft`` kernels) runs on the host
(``fft_cannot_run``).
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP
from ..render import wgsl_fft_mixed as mixed
from ..render.wgsl import WORKGROUP
from ..render.wgsl_fft import render_fft_stage, twiddles
from ..render.wgsl_fft_block import block_plan, render_fft_block, tile_elements
from ..render.wgsl_fft_fused import fuse
from ..render.wgsl_fft_mixed import mixed_plan, mixed_twiddles, render_fft_mixed, smooth, table_offsets
from ..render.wgsl_fft_reg import render_fft_reg
from .wgpu_bindings import wide_buffers

# GPUARRAY_FFT_BLOCK=0: one dispatch per radix-2 stage (render/wgsl_fft.py) instead of several
# stages per dispatch in workgroup memory (render/wgsl_fft_block.py)
BLOCK = os.environ.get("GPUARRAY_FFT_BLOCK", "1") != "0"
# GPUARRAY_FFT_MIXED=0: lengths other than powers of two go through Bluestein (fft_chirp.py) instead of
# the mixed-radix kernel (render/wgsl_fft_mixed.py); GPUARRAY_FFT_MIXED_POW2=0: powers of two keep the
# radix-2 block kernel instead of the mixed-radix one (radix-8/4 butterflies)
MIXED = os.environ.get("GPUARRAY_FFT_MIXED", "1") != "0"
MIXED_POW2 = os.environ.get("GPUARRAY_FFT_MIXED_POW2", "1") != "0"
TILE_BYTES = int(os.environ.get("GPUARRAY_FFT_TILE_BYTES", "8192"))     # workgroup memory per block, at most
# GPUARRAY_FFT_REG=0: the mixed-radix passes go through workgroup memory around every stage, powers of
# two as radix 8/4 (render/wgsl_fft_mixed.py), instead of loading and storing from registers with
# radices up to GPUARRAY_FFT_MAX_RADIX (render/wgsl_fft_reg.py) in tiles of GPUARRAY_FFT_REG_TILE_BYTES
# of workgroup memory (32 KiB: 4096 complex64 points, 2^20 = 2^10 x 2^10 in two passes)
REG = os.environ.get("GPUARRAY_FFT_REG", "1") != "0"
# GPUARRAY_FFT_FUSE=0: an operand that is not a plain buffer is written by a pass of its own before the
# transform's first pass (render/wgsl_fft_fused.py folds it into that pass's loads)
FUSE_PROLOGUE = os.environ.get("GPUARRAY_FFT_FUSE", "1") != "0"
REG_TILE_BYTES = int(os.environ.get("GPUARRAY_FFT_REG_TILE_BYTES", "32768"))
MAX_RADIX = int(os.environ.get("GPUARRAY_FFT_MAX_RADIX", "16"))
# a multi-pass plan keeps runs of at least this many contiguous bytes per access (a 32-byte sector)
MIN_RUN_BYTES = int(os.environ.get("GPUARRAY_FFT_MIN_RUN", "32"))


def fft_scale(n: int, inverse: bool, norm: str) -> float:
    """The factor a transform of length ``n`` is multiplied by, for ``norm`` and direction."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm == "backward") == inverse:
        return 1.0 / n
    return 1.0


def fft_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    axis = kernel.attrs[0]
    n = kernel.out_shape[axis]
    if n & (n - 1) and not mixed_runs(provider, kernel.out_nodes[0].dtype, n):
        return (f"fft of length {n}: the WGSL kernels handle lengths whose prime factors are at most 13 "
                "(other lengths run on the host)")
    return None


def mixed_runs(provider: Any, dtype: np.dtype, n: int) -> bool:
    """Whether a transform of length ``n`` runs as mixed-radix passes (``render/wgsl_fft_mixed.py``) on
    ``provider``: ``n`` smooth (prime factors at most 13), ``MIXED`` on (``MIXED_POW2`` too for a
    power of two), and workgroup memory for a block."""
    if not MIXED or not smooth(n) or not mixed_tile(provider, dtype):
        return False
    return MIXED_POW2 or n & (n - 1) != 0


def block_tile(provider: Any, dtype: np.dtype, cap_bytes: int | None = None) -> int:
    """Elements per workgroup of the block kernel for ``dtype`` on ``provider`` (0: one dispatch per stage)
    in at most ``cap_bytes`` of workgroup memory (``TILE_BYTES``)."""
    if not BLOCK:
        return 0
    limit = int(provider.limits.get("max-compute-workgroup-storage-size", 16384))
    return tile_elements(limit, STORAGE_NP[dtype].itemsize, TILE_BYTES if cap_bytes is None else cap_bytes)


def mixed_tile(provider: Any, dtype: np.dtype) -> int:
    """Elements per workgroup of the mixed-radix kernel: the block kernel's tile (``REG_TILE_BYTES``
    for the register kernel), halved until one group of that many elements (with the kernel's
    padding) fits the adapter's workgroup memory."""
    tile = block_tile(provider, dtype, REG_TILE_BYTES if REG else None)
    limit = int(provider.limits.get("max-compute-workgroup-storage-size", 16384))
    while tile >= 2 * WORKGROUP and mixed.workgroup_bytes(dtype, (tile,), 1, True) > limit:
        tile //= 2
    return tile if tile >= 2 * WORKGROUP else 0


def min_groups(dtype: np.dtype) -> int:
    """Groups per workgroup a multi-pass plan keeps (``MIN_RUN_BYTES`` contiguous per access)."""
    return max(1, MIN_RUN_BYTES // STORAGE_NP[dtype].itemsize)


def pass_tile(provider: Any, dtype: np.dtype, n: int) -> int:
    """The tile of a transform of length ``n``'s passes: ``mixed_tile``; in the register kernel halved
    while that keeps the number of passes and at least ``TILE_BYTES`` (more, smaller workgroups with
    the same passes: on the H200 8 KiB tiles beat 16 and 32 KiB ones at equal passes)."""
    tile = mixed_tile(provider, dtype)
    if REG:
        floor = block_tile(provider, dtype)
        big = max(2, MAX_RADIX)
        k = len(mixed_plan(n, tile, min_groups(dtype), big))
        while tile // 2 >= max(floor, 2 * WORKGROUP) and len(mixed_plan(n, tile // 2, min_groups(dtype), big)) == k:
            tile //= 2
    return tile


def pass_plan(provider: Any, dtype: np.dtype, n: int) -> list[tuple[int, ...]]:
    """The radices of each mixed-radix pass of a transform of length ``n`` (``mixed_runs``) in tiles of
    ``pass_tile``: powers of two as radices of at most ``MAX_RADIX`` in the register kernel, 8 in the
    workgroup-memory one."""
    return mixed_plan(n, pass_tile(provider, dtype, n), min_groups(dtype), max(2, MAX_RADIX) if REG else 8)


def fft_dispatches(provider: Any, dtype: np.dtype, n: int) -> int:
    """Dispatches of a transform of length ``n`` (not counting the prologue's)."""
    if mixed_runs(provider, dtype, n):
        return len(pass_plan(provider, dtype, n))
    tile = block_tile(provider, dtype)
    stages = n.bit_length() - 1
    return len(block_plan(n, tile, min_groups(dtype))) if tile else stages


def _operand_kernel(kernel: Kernel) -> Kernel:
    """An elementwise kernel computing the fft's operand (its fused prologue)."""
    return Kernel(kernel.instrs, kernel.inputs, [kernel.operands[0]], kernel.out_nodes, kernel.out_shape,
                  kernel.device)


def enqueue_fft(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    axis, inverse, norm = kernel.attrs
    dt = kernel.out_nodes[0].dtype
    shape = kernel.out_shape
    n = shape[axis]
    total = kernel.size
    nbytes = total * STORAGE_NP[dt].itemsize
    out = provider.alloc(nbytes)
    if total == 0:
        return [out]
    temps: list[Any] = []
    src_ins = kernel.instrs[kernel.operands[0]]
    scale = fft_scale(n, inverse, norm)
    inner = math.prod(shape[axis + 1:])
    if src_ins.op == "input" and n > 1:
        cur = in_handles[src_ins.params[0]]
    else:
        ek = _operand_kernel(kernel)
        r = provider.rendered_for(ek)
        wide = wide_buffers(provider, r, ek)
        meta = r.meta(ek)
        if n > 1 and REG and FUSE_PROLOGUE and mixed_runs(provider, dt, n):
            pro = (r.source, meta, [*in_handles, *wide])
            if _mixed_passes(provider, n, inverse, scale, dt, pass_tile(provider, dt, n), inner, total, None, out,
                             temps, pro):
                for h in temps:
                    provider.free(h)
                return [out]
        cur = out if n == 1 else provider.alloc(nbytes)
        if cur is not out:
            temps.append(cur)
        provider.dispatch(r.source, meta, [*in_handles, cur, *wide], -(-total // WORKGROUP))
    if n == 1:                       # the transform is the identity (every norm scales by 1)
        return [out]
    if mixed_runs(provider, dt, n):
        _mixed_passes(provider, n, inverse, scale, dt, pass_tile(provider, dt, n), inner, total, cur, out, temps)
        for h in temps:
            provider.free(h)
        return [out]
    tw = provider.static_buffer(("fft twiddles", n, inverse, scale, dt.str), lambda: twiddles(n, inverse, scale, dt))
    tile = block_tile(provider, dt)
    stages = n.bit_length() - 1
    plan = block_plan(n, tile, min_groups(dt)) if tile else [1] * stages
    tmp = provider.alloc(nbytes) if len(plan) > 1 else None
    if tmp is not None:
        temps.append(tmp)
    if tile:
        source = render_fft_block(dt, tile)
        lns = 0
        for q, lr in enumerate(plan):
            dst = out if (len(plan) - 1 - q) % 2 == 0 else tmp
            groups = total >> lr
            prm = [groups, stages, inner, lns, lr, int(q == len(plan) - 1), int(inner == 1 and lr == stages),
                   int(inner == 1 and lns == 0)]
            provider.dispatch(source, np.array(prm, dtype=np.uint32), [cur, dst, tw], -(-groups // (tile >> lr)))
            cur = dst
            lns += lr
    else:
        half = n // 2
        butterflies = total // 2
        source = render_fft_stage(dt)
        for s in range(stages):
            p = 1 << s
            dst = out if (stages - 1 - s) % 2 == 0 else tmp
            prm = [butterflies, half, p, inner, half // p, int(s == stages - 1)]
            provider.dispatch(source, np.array(prm, dtype=np.uint32), [cur, dst, tw], -(-butterflies // WORKGROUP))
            cur = dst
    for h in temps:
        provider.free(h)
    return [out]


def _mixed_passes(provider: Any, n: int, inverse: bool, scale: float, dt: np.dtype, tile: int, inner: int,
                  total: int, cur: Any, out: Any, temps: list[Any], pro: tuple | None = None) -> bool:
    """Record the mixed-radix passes of ``cur`` (``total`` elements) into ``out``; with ``pro`` (the
    operand's elementwise kernel: source, ``prm`` words, buffers) instead of ``cur``, the first pass
    computes its operand through it (``render/wgsl_fft_fused.py``). False (nothing recorded, nothing
    allocated) where the two do not fuse."""
    plan = pass_plan(provider, dt, n)
    offs, at_scale = table_offsets(plan)
    limit = int(provider.limits.get("max-compute-workgroup-storage-size", 16384))
    render = render_fft_reg if REG else render_fft_mixed
    passes = []             # (source, prm, workgroups) of each pass
    ns = 1
    for q, rads in enumerate(plan):
        rb = math.prod(rads)
        g = tile // rb
        while g > 1 and mixed.workgroup_bytes(dt, rads, g, q == 0) > limit:
            g -= 1
        source, _threads = render(dt, rads, g, bool(inverse), q == 0, q == len(plan) - 1,
                                  inner == 1 and len(plan) == 1, inner == 1 and ns == 1)
        groups = total // rb
        passes.append((source, np.array([groups, n // rb, inner, ns, *offs[q], at_scale], dtype=np.uint32),
                       -(-groups // g)))
        ns *= rb
    first = None
    if pro is not None:
        first = fuse(passes[0][0], pro[0], len(passes[0][1]))
        if first is None:
            return False
    key = ("fft mixed twiddles", n, tuple(plan), inverse, scale, dt.str)
    tw = provider.static_buffer(key, lambda: mixed_twiddles(n, plan, inverse, scale, dt))
    tmp = None
    if len(plan) > 1:
        tmp = provider.alloc(total * STORAGE_NP[dt].itemsize)
        temps.append(tmp)
    for q, (source, prm, wgs) in enumerate(passes):
        dst = out if (len(plan) - 1 - q) % 2 == 0 else tmp
        if q == 0 and first is not None and pro is not None:
            provider.dispatch(first, np.concatenate([prm, pro[1]]), [dst, tw, *pro[2]], wgs)
        else:
            provider.dispatch(source, prm, [cur, dst, tw], wgs)
        cur = dst
    return True
