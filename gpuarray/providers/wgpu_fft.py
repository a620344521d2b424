"""The ``fft`` kernel kind on the wgpu provider: power-of-two lengths along one axis.

One prologue pass (skipped when the operand is a plain input buffer), then the ``log2(n)`` radix-2
Stockham stages, several per dispatch: each dispatch of ``render/wgsl_fft_block.py`` runs up to
``log2(tile)`` stages in workgroup memory (``tile``: 1024 complex64 / 512 complex128 elements in
8 KiB; ``block_plan``), so a transform of up to ``tile`` points is one dispatch, up to 2^16 two,
up to 2^24 three, up to 2^30 four. (On the H200 8 KiB tiles beat 16 and 32 KiB: 2^22 complex64
0.258 / 0.330 / 0.556 ms of GPU time, 3 x 10^6 by Bluestein 1.09 / 1.35 / 2.36; more workgroups
resident.) The twiddle table of each
(length, direction, scale, dtype) is made once in float64 and kept on the device
(``static_buffer``); the block kernel computes exactly the butterflies of the one-stage-per-dispatch
kernel (``render/wgsl_fft.py``), which remains for adapters with too little workgroup memory
(``tile`` below ``2 * WORKGROUP`` elements) and for ``GPUARRAY_FFT_BLOCK=0``. Tuning:
``GPUARRAY_FFT_TILE_BYTES`` (workgroup memory per block, at most; 8192) and ``GPUARRAY_FFT_MIN_RUN``
(contiguous bytes a multi-pass plan keeps per access; 32). Everything is recorded into the open compute pass.

Other lengths reach this kernel as Bluestein's two power-of-two transforms (``gpuarray/fft_chirp.py``);
a length that is not a power of two here (the host's own ``fft`` kernels) runs on the host
(``fft_cannot_run``).
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from .._dtypes import STORAGE_NP
from ..compiler.kernel import Kernel
from ..render.wgsl import WORKGROUP
from ..render.wgsl_fft import render_fft_stage, twiddles
from ..render.wgsl_fft_block import block_plan, render_fft_block, tile_elements

# GPUARRAY_FFT_BLOCK=0: one dispatch per radix-2 stage (render/wgsl_fft.py) instead of several
# stages per dispatch in workgroup memory (render/wgsl_fft_block.py)
BLOCK = os.environ.get("GPUARRAY_FFT_BLOCK", "1") != "0"
TILE_BYTES = int(os.environ.get("GPUARRAY_FFT_TILE_BYTES", "8192"))     # workgroup memory per block, at most
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
    if n & (n - 1):
        return (f"fft of length {n}: the WGSL kernel handles power-of-two lengths only "
                "(other lengths run on the host)")
    return None


def block_tile(provider: Any, dtype: np.dtype) -> int:
    """Elements per workgroup of the block kernel for ``dtype`` on ``provider`` (0: one dispatch per stage)."""
    if not BLOCK:
        return 0
    limit = int(provider.limits.get("max-compute-workgroup-storage-size", 16384))
    return tile_elements(limit, STORAGE_NP[dtype].itemsize, TILE_BYTES)


def min_groups(dtype: np.dtype) -> int:
    """Groups per workgroup a multi-pass plan keeps (``MIN_RUN_BYTES`` contiguous per access)."""
    return max(1, MIN_RUN_BYTES // STORAGE_NP[dtype].itemsize)


def fft_dispatches(provider: Any, dtype: np.dtype, n: int) -> int:
    """Dispatches of a power-of-two transform of length ``n`` (not counting the prologue's)."""
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
    stages = n.bit_length() - 1
    temps = []
    src_ins = kernel.instrs[kernel.operands[0]]
    if src_ins.op == "input" and stages > 0:
        cur = in_handles[src_ins.params[0]]
    else:
        ek = _operand_kernel(kernel)
        r = provider.rendered_for(ek)
        wide = [provider.data_buffer(v) for _t, v in sorted(r.wide_values(ek).items())]
        cur = out if stages == 0 else provider.alloc(nbytes)
        if cur is not out:
            temps.append(cur)
        provider.dispatch(r.source, r.meta(ek), [*in_handles, cur, *wide], -(-total // WORKGROUP))
    if stages == 0:                  # n == 1: the transform is the identity (every norm scales by 1)
        return [out]
    scale = fft_scale(n, inverse, norm)
    tw = provider.static_buffer(("fft twiddles", n, inverse, scale, dt.str), lambda: twiddles(n, inverse, scale, dt))
    inner = math.prod(shape[axis + 1:])
    tile = block_tile(provider, dt)
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
