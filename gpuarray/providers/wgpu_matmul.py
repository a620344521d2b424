"""Matmul on the wgpu provider: one dispatch of the tiled kernel (``render/wgsl_matmul.py``).

``choose_tiles`` picks the tile sizes from the shape; it is the place where an
autotuner's table per device would plug in. Rendered shaders are cached per
(kernel signature, tiles).

Measured on the H200 (float32, 4096^3, one run each, 2026-11): 64x64 tiles
with 4x4 per thread 12.2 TFLOP/s, 64x128 with 4x8 14.3, 128x128 with 8x8
12.5 (cuBLAS: 51); 8192^3: 14.8, and 12.9 for ``a @ b.T``. At 1024^3 the
64x128 tiles leave SMs idle (2.2 vs 4.0 TFLOP/s with 64x64). Tile sizes alone
do not close the gap; the next levers are vec4 shared-memory reads, double
buffering and cheaper prologue loads.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._dtypes import STORAGE_NP
from ..compiler.kernel import Kernel
from ..render.wgsl import Rendered
from ..render.wgsl_matmul import Tiles, render_matmul

LARGE = Tiles(64, 128, 16, 4, 8)       # 256 threads, 4x8 outputs each; both sides >= 2048
GENERAL = Tiles(64, 64, 16, 4, 4)      # 256 threads, 4x4 outputs each
SMALL = Tiles(32, 32, 16, 2, 2)        # 256 threads, for matrices under one general tile
MATVEC = Tiles(128, 1, 32, 1, 1)       # N == 1: one row per thread
VECMAT = Tiles(1, 128, 32, 1, 1)       # M == 1: one column per thread

_rendered: dict[tuple, Rendered] = {}


def choose_tiles(m: int, n: int, k: int, dtype: np.dtype) -> Tiles:
    """Tile sizes for an ``m x k`` by ``k x n`` product (a fixed rule until autotuning exists)."""
    if n == 1:
        return MATVEC
    if m == 1:
        return VECMAT
    if m <= 32 or n <= 32:
        return SMALL
    if m >= 2048 and n >= 2048:      # below that, too few workgroups to fill the GPU
        return LARGE
    return GENERAL


def rendered_for(kernel: Kernel, tiles: Tiles) -> Rendered:
    key = (kernel.signature, tiles)
    r = _rendered.get(key)
    if r is None:
        r = _rendered[key] = render_matmul(kernel, tiles)
    return r


def enqueue_matmul(provider: Any, kernel: Kernel, in_handles: list[Any], tiles: Tiles | None = None) -> list[Any]:
    dt = kernel.out_nodes[0].dtype
    out = provider.alloc(kernel.size * STORAGE_NP[dt].itemsize)
    if kernel.size == 0:
        return [out]
    a = kernel.instrs[kernel.operands[0]]
    b = kernel.instrs[kernel.operands[1]]
    m, k = a.shape[-2:]
    n = b.shape[-1]
    batch = math.prod(a.shape[:-2])
    t = tiles or choose_tiles(m, n, k, dt)
    r = rendered_for(kernel, t)
    gm, gn = -(-m // t.bm), -(-n // t.bn)
    groups = batch * gm * gn
    wide = [provider.data_buffer(v) for _t, v in sorted(r.wide_values(kernel).items())]
    prm = r.meta(kernel, {"GM": gm, "GN": gn, "NG": groups})
    provider.dispatch(r.source, prm, [*in_handles, out, *wide], groups)
    return [out]
