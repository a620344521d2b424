"""Matmul on the wgpu provider: one dispatch of a tiled kernel.

Two kernels:

- the generic tiled kernel (``render/wgsl_matmul.py``, :class:`Tiles`): every
  dtype, scalar shared-memory reads. ``choose_tiles`` picks its tiles;
- the register-blocked kernel (``render/wgsl_matmul_blocked.py``,
  :class:`BlockTiles`): vec4 shared memory, outer products from registers,
  double-buffered tiles, vec4 global loads for operands that are plain
  buffers or strided views of them (``operand_modes``), the scalar
  prologue path for everything else. Used for float32 and float64 when
  ``M, N >= 64`` (float64 untuned: ``F64_LARGE`` / ``F64_MEDIUM`` where they fit).

Products with a vector operand (``N == 1`` or ``M == 1``, real and integer dtypes)
take the GEMV class (``gemv_for``): the row-dot kernel (``render/wgsl_matmul_gemv.py``)
where the matrix is read along ``K`` (``X @ w``), the narrow kernel with one narrow row
(column sums) where it is read along the output (``X.T @ r``, ``r @ X``); both read
each matrix element once, in one dispatch unless ``K`` is split (``GEMV_FILL``).
Products with few output tiles and a long ``K`` are split along ``K`` (``split_for``);
those with a narrow side (``M`` or ``N`` at most ``SKINNY_MAX``: ``G.T @ X`` of a few
classes) and a long ``K`` take the narrow split-K kernel
(``render/wgsl_matmul_skinny.py``, ``skinny_for``). ``X^T X`` with at most 64 features (both
operands the same buffer read at the same place) takes the gram tiles (``gram_for``): the blocks on and
above the diagonal only, each stored twice; with more features the tiles on and above it (``upper``).

Both evaluate a fused epilogue (``relu(a @ b + bias)``) at the store. Tuning
is per size class of the plain product (the epilogue is per-element work at
the store, the same for every tile shape); the rendered shaders are cached by
the kernel signature, which includes the epilogue.

Which :class:`BlockTiles` runs: the per-adapter autotuner's choice for the
size class (``wgpu_autotune``; products of at least ``TUNE_MIN_FLOPS`` are
tuned on their first use, on GPUs), else ``blocked_default``. ``use_config``
(or ``GPUARRAY_MATMUL_CONFIG=<name>``) forces one configuration, by object or
by name (``CANDIDATES``), for tests and benchmarks (``wgpu_matmul_config``; the GEMV and
skinny classes are chosen in ``wgpu_matmul_classes``).

History (H200, float32, 4096^3, one run each, 2026-11): the generic kernel
reached 12.2 TFLOP/s with 64x64 tiles and 4x4 per thread, 14.3 with 64x128
and 4x8, 12.5 with 128x128 and 8x8 (cuBLAS: 51); tile sizes alone did not
close the gap, hence the blocked kernel. At 1024^3 large tiles leave SMs idle
(2.2 vs 4.0 TFLOP/s with 64x64), hence the size rule in ``blocked_default``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..compiler.kernel import Instr, Kernel, Result
from ..core.dtypes import STORAGE_NP
from ..render.wgsl import Rendered
from ..render.wgsl_matmul import SUM_THREADS, Tiles, render_matmul, render_splitk_sum
from ..render.wgsl_matmul_blocked import BLOCKED_DTYPES, BlockTiles, render_matmul_blocked
from ..render.wgsl_matmul_gemv import Gemv, render_gemv_sum, render_matmul_gemv, sum_lanes
from ..render.wgsl_matmul_skinny import Skinny, render_matmul_skinny
from . import wgpu_autotune
from .wgpu_bindings import wide_buffers
from .wgpu_matmul_classes import LONG_K, _vector_layout, gemv_for, gemv_rows, gemv_vec, skinny_for  # noqa: F401
from .wgpu_matmul_config import CONFIG_ENV, Config, config_name, forced, parse_config, use_config  # noqa: F401
from .wgpu_split import window_inputs

# wgpu_matmul_classes picks the GEMV and skinny classes (GEMV_VEC4, GEMV_LONG, SKINNY_MAX live there);
# wgpu_matmul_config names configurations (use_config, parse_config: re-exported for tests and benchmarks)

LARGE = Tiles(64, 128, 16, 4, 8)       # 256 threads, 4x8 outputs each; both sides >= 2048
GENERAL = Tiles(64, 64, 16, 4, 4)      # 256 threads, 4x4 outputs each
SMALL = Tiles(32, 32, 16, 2, 2)        # 256 threads, for matrices under one general tile
MATVEC = Tiles(128, 1, 32, 1, 1)       # N == 1: one row per thread
THIN = Tiles(256, 4, 8, 1, 4)          # N <= 4, many rows (X @ W of a few classes): a row per thread
VECMAT = Tiles(1, 128, 32, 1, 1)       # M == 1: one column per thread

BLOCK_LARGE = BlockTiles(128, 128, 8, 8, 8, 2)     # 256 threads, 8x8 outputs each
BLOCK_WIDE = BlockTiles(64, 128, 8, 4, 8, 2)       # 256 threads, 4x8
# 128 threads, 8x4, a K step of 16, one buffer (H200, float32, ms a product, probes/mm_classes_sweep.py, against
# 64 x 64 x 8 tiles of 4 x 4 in two buffers, the tile before: (2^20 x 32) @ (32 x 64) 0.193 / 0.230, 4096 x
# (64 x 64)^2 0.101 / 0.126, (2^18 x 128) @ (128 x 128) 0.291 / 0.375; PyTorch 0.200, 0.081, 0.234)
BLOCK_MEDIUM = BlockTiles(64, 64, 16, 8, 4, 1)
# one output tile and a long K (see LONG_K): 8 x 4 outputs a thread, a K step of 32, one buffer (H200, two
# arrays, ms a product, probes/xtx_sweep.py: (2^20 x 64)^T (2^20 x 64) 0.359 against 0.403 with 64 x 64 x 16
# tiles of 4 x 4, two buffers; (2^20 x 64)^T (2^20 x 32) 0.342 / 0.392, 48 features 0.343 / 0.393, 2^18 rows
# 0.110 / 0.118, (2^22 x 16)^T (2^22 x 16) 1.22 / 1.46; PyTorch 0.243, 0.239, 0.245, 0.071, 0.381): 4 x 4 reads
# 2 vec4 shared words per 16 multiply-adds, 8 x 4 3 per 32
BLOCK_SPLIT = BlockTiles(64, 64, 32, 8, 4, 1)
# 8 x 16 outputs a thread (256 threads, 128 x 256 tiles, a K step of 32, one buffer: 48 KiB): 6 vec4 shared
# reads per 128 multiply-adds where 8 x 8 takes 4 per 64. H200, float32 squares, ms a product (of cuBLAS's
# speed, TF32 off): 2048^3 0.619 (56 %), 4096^3 4.07-4.09 (66 %), 8192^3 31.0-31.1 (69 %), against 0.70, 4.82,
# 37.7 (49-57 %) for the best 8 x 8 tiles (128 x 128 x 16, two buffers) and 0.80, 5.89, 46.0 for BLOCK_LARGE
# (probes/mm16_sweep.py; 2 buffers with the K step of 16 or 32 spill: 30-38 %)
BLOCK_LARGE16 = BlockTiles(128, 256, 32, 8, 16, 1)
# ... taken untuned from this K on, where blocked_default gives it: the tuner times a short K (256 at the 8192
# class), where its 8 K steps do not show its speed (H200, 8192^3 36.6 ms with the tuner's pick, 31.1 with it)
LARGE16_K = 1024
# float64 (H200 sweeps of 35 tilings, GPU ms): 128 x 128 tiles with a K step of 16 and one buffer
# for large products (2048^3 1.10, 4096^3 8.39; BLOCK_LARGE 1.23, 9.52), 64 x 64 tiles with a K
# step of 16, one buffer and warps of 4 x 8 threads for the rest ((2^20 x 64)^T (2^20 x 64) 0.70,
# (2^20 x 32) @ (32 x 64) 0.50-0.61, 4096 x (64 x 64)^2 0.23-0.29; BLOCK_MEDIUM 0.89, 0.65, 0.31)
F64_LARGE = BlockTiles(128, 128, 16, 8, 8, 1)
# forty-second session (probes/mm_classes_sweep.py, H200, float64 wall ms, against 4 x 4 outputs a thread, the
# tile before): 4 x 8 outputs a thread, (2^20 x 32) @ (32 x 64) 0.388 / 0.513, 4096 x (64 x 64)^2 0.190 / 0.235,
# (2^18 x 128) @ (128 x 128) 0.609 / 0.735 (PyTorch 0.214, 0.101, 0.204); one-tile products with a long K take
# 8 x 4 (F64_SPLIT, probes/xtx_sweep.py: X.T @ Y of 2^20 x 64 0.611 ms against 0.676 for 4 x 4 and 0.627 for 4 x 8,
# 32 by 64 features 0.597 / 0.665; PyTorch 0.277, 0.199)
F64_MEDIUM = BlockTiles(64, 64, 16, 4, 8, 1, 4)
F64_SPLIT = BlockTiles(64, 64, 16, 8, 4, 1, 4)

# X^T X with one output tile (at most 64 features): the blocks on and above the diagonal only, from one
# shared tile (``BlockTiles.gram``; ``gram_for``), K split into about GRAM_FILL chunks. H200, 2^20 rows,
# wall / GPU ms against the full tiles (PyTorch's wall in brackets): 64 features float32 0.38-0.40 / 0.25
# against 0.64 / 0.375 (0.26), float64 0.77-0.79 / 0.60 against 0.85 / 0.66 (0.26); 32 features float32
# 0.25 / 0.12 against 0.50 / 0.37, float64 0.35 / 0.22 against 0.86 / 0.62; 2^22 x 16 float32 0.59 / 0.43
# against 1.83 / 1.39 (0.41). K steps of 4-32 and one or two buffers were within 10 % of each other.
GRAM = BlockTiles(64, 64, 8, 4, 4, 2, 0, True)
GRAM_F64 = BlockTiles(64, 64, 8, 4, 4, 2, 0, True)
GRAM32 = BlockTiles(32, 32, 16, 4, 4, 1, 0, True)
GRAM32_F64 = BlockTiles(32, 32, 16, 4, 4, 1, 0, True)

# Narrow outputs (5 to 32 columns over at least NARROW_M rows; 4 or fewer take the generic THIN tiles, and
# the GEMV class takes up to 8 first where the matrix is read along K): tiles as narrow as the output, one
# buffer (H200, (2^20 x 64) @ (64 x N), GPU ms, float32 / float64, PyTorch's wall in brackets): N = 16
# 0.147 / 0.325 against 0.752 / 0.977 in the generic 32 x 32 tiles (0.161 / 0.165); N = 32 0.217 / 0.597
# against 0.843 / 1.092 (0.172 / 0.192); K = 256, N = 16 float32 0.510 against 2.88 (0.494). From 33 to 63
# columns the 64-wide blocked tiles: N = 48 0.362-0.374 / 0.774 against 0.839 / 1.370 (0.283 / 0.257).
NARROW_M = 1024
NARROW16 = BlockTiles(128, 16, 8, 4, 4, 1, 4)
# 17 to 32 columns: 64 x 32 tiles of 4 x 8 outputs a thread, warps of 4 x 8 threads, one buffer (forty-second
# session, probes/xct_sweep.py, H200, wall ms, (2^20 x 64) @ (64 x 32): float32 0.197 against 0.231 for 128 x 32
# tiles of 4 x 4 in two buffers, float64 0.399 against 0.604 for 64 x 32 of 4 x 4; PyTorch 0.171 / 0.195): one
# tile for both dtypes
NARROW32 = BlockTiles(64, 32, 8, 4, 8, 1, 4)

# Autotuning candidates, most promising first (the tuner stops after its time budget).
# The generic kernel's best H200 configuration is among them as a safety net.
TUNE_LARGE: list[Config] = [BLOCK_LARGE16, BLOCK_LARGE, BlockTiles(128, 128, 16, 8, 8, 2),
                            BlockTiles(128, 128, 8, 8, 8, 2, 0), BLOCK_WIDE, BlockTiles(128, 64, 8, 8, 4, 2),
                            BlockTiles(128, 128, 16, 8, 8, 1), LARGE]
TUNE_MEDIUM: list[Config] = [BLOCK_WIDE, BLOCK_MEDIUM, BlockTiles(64, 128, 16, 8, 8, 1), BLOCK_LARGE16, BLOCK_LARGE,
               BlockTiles(128, 64, 8, 8, 4, 2), BlockTiles(64, 64, 16, 4, 4, 2), GENERAL]
# A short K (<= SHORT_K) takes the 64 x 64 tiles untuned: the tuner times a long K, where large tiles
# win, but with K = 32 or 64 they only cost occupancy (H200, GPU time: (2^20 x 32) @ (32 x 64) 0.40 ms
# with the tuned tiles, 0.23 with 64 x 64; 4096 x (64 x 64) @ (64 x 64) 0.32 and 0.12 ms).
SHORT_K = 128
# Outputs of at most 64 x 64 with K >= LONG_K take BLOCK_SPLIT (float32) or BLOCK_MEDIUM (float64)
# untuned, M or N below 64 included: the tuner times a square problem, and its choice for the
# 1024 class varies between starts within its timing noise (H200: 0.145-0.157 ms for three tile
# shapes), while for (2^20 x 64)^T (2^20 x 64) float32 it decides 0.42 ms (64 x 64 x 16 tiles) or
# 0.72-1.34 ms (64 x 128, 128 x 128); (2^20 x 64)^T (2^20 x 32) took 1.61 ms in the generic kernel
# and 0.43 in BLOCK_SPLIT; float64 X.T @ X 0.89 ms in BLOCK_MEDIUM, 1.10 in 64 x 64 x 16.
TUNE_MIN_FLOPS = 2 * 1024**3           # smaller products use blocked_default without tuning
TUNE_FLOPS = 4e10                      # work of one tuning dispatch (about 2 ms at 20 TFLOP/s)


CANDIDATES: dict[str, Config] = {config_name(c): c for c in [*TUNE_LARGE, *TUNE_MEDIUM, SMALL, MATVEC, VECMAT]}


def choose_tiles(m: int, n: int, k: int, dtype: np.dtype) -> Tiles:
    """Tiles of the generic kernel for an ``m x k`` by ``k x n`` product."""
    if n == 1:
        return MATVEC
    if m == 1:
        return VECMAT
    if n <= THIN.bn and m >= 1024:
        return THIN
    if m <= 32 or n <= 32:
        return SMALL
    if m >= 2048 and n >= 2048:      # below that, too few workgroups to fill the GPU
        return LARGE
    return GENERAL


def blocked_default(m: int, n: int, batch: int, provider: Any = None) -> BlockTiles:
    """The blocked tiles without tuning: the largest tile that still gives >= 256 workgroups (128 for
    ``BLOCK_LARGE16``, where ``provider``'s workgroup memory holds it)."""
    if provider is not None and batch * -(-m // 128) * -(-n // 256) >= 128 and fits(provider, BLOCK_LARGE16):
        return BLOCK_LARGE16
    if batch * -(-m // 128) * -(-n // 128) >= 256:
        return BLOCK_LARGE
    if batch * -(-m // 64) * -(-n // 128) >= 256:
        return BLOCK_WIDE
    return BLOCK_MEDIUM


def fits(provider: Any, cfg: Config, item: int = 4) -> bool:
    """Whether the adapter's workgroup limits allow ``cfg`` for elements of ``item`` bytes."""
    lim = provider.limits
    smem = (cfg.smem_bytes * item // 4 if isinstance(cfg, BlockTiles) else item * cfg.bk * (cfg.bm + cfg.bn))
    return (smem <= int(lim.get("max-compute-workgroup-storage-size", 16384))
            and cfg.threads <= int(lim.get("max-compute-invocations-per-workgroup", 256)))


def size_class(m: int, n: int, batch: int) -> int:
    """The tuning bucket: the power of two nearest to sqrt(batch * m * n), within 1024..8192."""
    return 1 << min(13, max(10, round(math.log2(max(batch * m * n, 1)) / 2)))


def select(provider: Any, m: int, n: int, k: int, batch: int, dtype: np.dtype) -> Config:
    """The configuration for a product: forced, else blocked (float32 and float64, M >= 64 and N > 32,
    or an output of at most 64 x 64 with a long K: ``LONG_K``; M >= ``NARROW_M`` and 4 < N <= 32: the
    ``NARROW`` tiles), else generic. float64 is not tuned:
    ``F64_LARGE`` where ``blocked_default`` would take 128 x 128 tiles, else ``F64_MEDIUM`` (``F64_SPLIT``
    for one output tile and a long K), else
    ``BLOCK_MEDIUM``, whichever first fits the adapter."""
    cfg = forced()
    item = np.dtype(dtype).itemsize
    blocked = dtype in BLOCKED_DTYPES
    if isinstance(cfg, BlockTiles) and (cfg.gram or cfg.upper):      # only gram_for knows a product is X^T X
        cfg = dataclasses.replace(cfg, gram=False, upper=False)
    if cfg is not None:
        ok = (blocked or isinstance(cfg, Tiles)) and fits(provider, cfg, item)
        return cfg if ok else choose_tiles(m, n, k, dtype)
    few = m <= 64 and n <= 64 and k >= LONG_K        # one output tile, K split (X.T @ X of 64 features)
    if blocked and m >= NARROW_M and THIN.bn < n <= 32 and not few:
        narrow = NARROW16 if n <= 16 else NARROW32
        if fits(provider, narrow, item):
            return narrow
    if not blocked or (m < 64 or n <= 32) and not few:
        return choose_tiles(m, n, k, dtype)
    if dtype != np.float32:
        large = k > SHORT_K and not few and blocked_default(m, n, batch) == BLOCK_LARGE
        for cfg in ((F64_LARGE,) if large else ()) + ((F64_SPLIT,) if few else (F64_MEDIUM,)) + (BLOCK_MEDIUM,):
            if fits(provider, cfg, item):
                return cfg
        return choose_tiles(m, n, k, dtype)
    if k <= SHORT_K and fits(provider, BLOCK_MEDIUM, item):
        return BLOCK_MEDIUM
    if few and fits(provider, BLOCK_SPLIT, item):
        return BLOCK_SPLIT
    if k >= LARGE16_K and blocked_default(m, n, batch, provider) == BLOCK_LARGE16:
        return BLOCK_LARGE16
    s = size_class(m, n, batch)
    key = f"matmul:f32:{s}"
    name = wgpu_autotune.lookup(provider, key)
    if name is None and 2 * m * n * k * batch >= TUNE_MIN_FLOPS and wgpu_autotune.enabled(provider):
        name = tune(provider, s, key)
    cfg = CANDIDATES.get(name) if name else None
    if cfg is None or not fits(provider, cfg):
        cfg = blocked_default(m, n, batch, provider)
    return cfg


def synthetic_kernel(m: int, n: int, k: int, b_transposed: bool = False) -> Kernel:
    """A float32 ``(m, k) @ (k, n)`` matmul kernel over two plain inputs (``b`` stored ``(n, k)``
    and read through a transposed view when ``b_transposed``); used for tuning."""
    f32 = np.dtype(np.float32)
    instrs = [Instr("input", (), f32, (m, k), (0,))]
    if b_transposed:
        instrs += [Instr("input", (), f32, (n, k), (1,)), Instr("view", (1,), f32, (k, n), ((1, k), 0))]
    else:
        instrs.append(Instr("input", (), f32, (k, n), (1,)))
    return Kernel(instrs, [Result(f32, (m, k)), Result(f32, instrs[1].shape)], [], [Result(f32, (m, n))], (m, n),
                  kind="matmul", operands=[0, len(instrs) - 1])


def tune(provider: Any, s: int, key: str) -> str | None:
    """Autotune the float32 size class ``s`` on a synthetic ``s x s`` problem with a short ``K``."""
    while s > 256 and s * s * 4 > provider.max_binding:
        s //= 2
    k = int(min(s, max(256, TUNE_FLOPS / (2 * s * s) // 64 * 64)))
    kernel = synthetic_kernel(s, s, k)
    handles = [provider.alloc(s * k * 4), provider.alloc(k * s * 4), provider.alloc(s * s * 4)]
    cands = TUNE_LARGE if s >= 4096 else TUNE_MEDIUM

    def trial(cfg: Config) -> Callable[[], wgpu_autotune.Trial]:
        def make() -> wgpu_autotune.Trial:
            r, prm, groups = plan(kernel, cfg, s, s, 1)
            return wgpu_autotune.Trial(r.source, prm, handles, groups)
        return make

    try:
        return wgpu_autotune.tune(provider, key, {config_name(c): trial(c) for c in cands if fits(provider, c)})
    finally:
        for h in handles:
            provider.free(h)


def gram_for(provider: Any, kernel: Kernel, m: int, n: int, k: int, batch: int,
             dtype: np.dtype) -> BlockTiles | None:
    """The tiles for ``X^T X`` or ``X X^T`` (``M = N``, float32 or float64, not under a forced
    configuration) whose operands are read as vec4 words from the same buffer at the same place, one of
    them transposed (``_vector_layout``'s ``vo`` or ``vk`` for both), or where one operand is the transposed
    view of the other (``_transposed_self``: a fused cone such as a centred ``X``, read element by element):
    the gram tiles for ``M <= 64`` (A's shared tile is B's either way), else ``select``'s square tiles with
    ``upper`` (or 128 x 128 / 64 x 64 ones where it chose others); None for other products."""
    if forced() is not None or m != n or dtype not in BLOCKED_DTYPES or "lower" in kernel.attrs:
        return None
    modes, extras = operand_modes(kernel)
    if modes in (("vo", "vo"), ("vk", "vk")):        # X^T X, or X X^T (the Gram matrix of the rows)
        got = [_vector_layout(kernel, op_i, w) for w, op_i in zip("ab", kernel.operands)]
        if got[0] is None or got[1] is None or got[0][0] != got[1][0]:
            return None
        if any(extras[k] != extras.get("b" + k[1:]) for k in extras if k[0] == "a"):
            return None
    elif not (_transposed_self(kernel, 0) or _transposed_self(kernel, 1)):
        return None
    item = np.dtype(dtype).itemsize
    if m > GRAM.bm:
        full = select(provider, m, n, k, batch, dtype)
        if not isinstance(full, BlockTiles) or full.bm != full.bn:
            full = BLOCK_LARGE if blocked_default(m, n, batch) == BLOCK_LARGE else BLOCK_MEDIUM
        up = dataclasses.replace(full, upper=True)
        return up if fits(provider, up, item) else None
    small = m <= GRAM32.bm
    cfg = (GRAM32 if small else GRAM) if dtype == np.float32 else (GRAM32_F64 if small else GRAM_F64)
    return cfg if fits(provider, cfg, item) else None


def _transposed_self(kernel: Kernel, which: int) -> bool:
    """Whether operand ``which`` is the plain transposed view of the other (a 2-D matrix, computed or
    not): ``Xc.T @ Xc`` of a centred ``Xc`` fused into the product, as ``np.cov`` computes it (0), or
    ``Z @ Z.T`` (1)."""
    ti, oi = kernel.operands[which], kernel.operands[1 - which]
    t, o = kernel.instrs[ti], kernel.instrs[oi]
    if t.op != "view" or tuple(t.args) != (oi,) or len(o.shape) != 2:
        return False
    r, c = o.shape
    want = (0 if c == 1 else 1, 0 if r == 1 else c)
    return tuple(t.shape) == (c, r) and tuple(t.params[0]) == want and t.params[1] == 0


def operand_modes(kernel: Kernel) -> tuple[tuple[str, str], dict[str, int]]:
    """Load mode of each operand for the blocked kernel (``vk``, ``vo`` or ``s``; see
    ``render/wgsl_matmul_blocked.py``) and the ``prm`` extras the vector modes read."""
    found: dict[str, tuple[int, str, dict[str, int]]] = {}
    for which, op_i in zip("ab", kernel.operands):
        got = _vector_layout(kernel, op_i, which)
        if got is not None:
            found[which] = got
    users: dict[int, set[int]] = {}
    for j, ins in enumerate(kernel.instrs):
        for a in ins.args:
            users.setdefault(a, set()).add(j)
    changed = True
    while changed:        # a buffer read as vec4 may not be read any other way in the kernel
        changed = False
        vec_ops = {kernel.operands["ab".index(w)] for w in found}
        for w, (base, _m, _e) in list(found.items()):
            if not users.get(base, set()) <= vec_ops or (base in kernel.operands and base not in vec_ops):
                del found[w]
                changed = True
    modes = tuple(found[w][1] if w in found else "s" for w in "ab")
    extras = {k: v for w in found for k, v in found[w][2].items()}
    return (modes[0], modes[1]), extras


_rendered: dict[tuple, Rendered] = {}


def rendered_for(kernel: Kernel, tiles: Config | Skinny | Gemv | None, modes: tuple[str, str] = ("s", "s"),
                 vec_out: bool = False, split: bool = False) -> Rendered:
    """The shader of ``kernel`` with ``tiles`` (``None``: the split-K sum pass), cached by signature
    (a :class:`Skinny` without ``split``: its one-pass form)."""
    key = (kernel.signature, tiles, modes, vec_out, split)
    r = _rendered.get(key)
    if r is None:
        if tiles is None:
            r = render_splitk_sum(kernel)
        elif isinstance(tiles, Gemv):
            r = render_matmul_gemv(kernel, tiles, split)
        elif isinstance(tiles, Skinny):
            r = render_matmul_skinny(kernel, tiles) if split else render_matmul_skinny(kernel, tiles, final=True)
        elif isinstance(tiles, BlockTiles):
            r = render_matmul_blocked(kernel, tiles, modes, vec_out, split)
        else:
            r = render_matmul(kernel, tiles, split)
        _rendered[key] = r
    return r


class Split(NamedTuple):
    """Split-K: ``chunks`` workgroups along ``K`` per output tile, each walking ``kc`` of it."""
    chunks: int
    kc: int


def loop_steps_cap(provider: Any, cfg: Config | Skinny | Gemv) -> int | None:
    """The most ``K`` steps one workgroup may take on this adapter, or None for no limit.

    Lavapipe (gallivm) silently ends every loop of an invocation once 65535 loop iterations have
    run in it, all loops together (``wgpu_scan.SERIAL_SEGMENT`` says the same): a tiled kernel
    walking a long ``K`` stopped after 1821 steps of 32 (``X.T @ r`` wrong from K = 58273). A
    step of the generic kernel runs its load loops and its ``bk`` inner loop; the blocked kernel's
    steps are written out; the skinny kernel's step runs its load loop and ``bk / lanes`` inner
    iterations (counted also where they are written out); the row dot's steps are written out (its
    lane sum at the end, at most 256 iterations, runs in the reserve). Half the budget is kept in
    reserve."""
    adapter = getattr(provider, "adapter", None)
    if adapter is None or str(adapter.info.get("adapter_type")) != "CPU":
        return None
    if isinstance(cfg, (BlockTiles, Gemv)):
        per = 1
    elif isinstance(cfg, Skinny):
        per = 1 + cfg.load_steps + cfg.bk // cfg.lanes
    else:
        per = 1 + -(-cfg.bm * cfg.bk // cfg.threads) + -(-cfg.bk * cfg.bn // cfg.threads) + cfg.bk
    return max(1, 32768 // per)


GEMV_FILL = 1024           # workgroups a matrix-vector product should have before its K is split further
FILL_GROUPS = 256          # workgroups a product should have before its K is split further
SKINNY_FILL = 512          # the same for the narrow split-K kernel of 4-byte types (H200, float32 (2^20 x 4)^T
                           # (2^20 x 64): 0.125 ms of GPU time at 256, 0.096 at 512, 0.107 at 1024; float64 alike)
GRAM_FILL = 1024           # the same for the gram tiles (H200: 1024 best or within 5 % for 16-64 features)
MIN_KC = 256               # shortest K chunk split off for occupancy
SUM_FILL = 1 << 18         # threads a split product's sum pass should have: several per output below that


def _tiles(cfg: Config | Skinny | Gemv, m: int, n: int) -> int:
    """Output tiles of one matrix that get workgroups: those on and above the diagonal with ``upper``."""
    gm, gn = -(-m // cfg.bm), -(-n // cfg.bn)
    return gm * (gm + 1) // 2 if isinstance(cfg, BlockTiles) and cfg.upper else gm * gn


def split_for(provider: Any, cfg: Config | Skinny | Gemv, m: int, n: int, k: int, batch: int, item: int,
              fill: int = FILL_GROUPS) -> Split:
    """How to split ``K``: enough chunks to give about ``fill`` workgroups where the output has few
    tiles (each chunk at least ``MIN_KC`` long), and chunks short enough for the adapter's loop
    limit (``loop_steps_cap``). The partial sums must fit in one binding."""
    tiles = batch * _tiles(cfg, m, n)
    out = batch * m * n
    chunks = 1
    if tiles < fill and k >= 2 * MIN_KC:
        chunks = min(-(-fill // tiles), k // MIN_KC)
        while chunks > 1 and chunks * out * item > min(provider.max_binding, 256 << 20):
            chunks //= 2
    per = -(-k // chunks)
    kc = -(-per // cfg.bk) * cfg.bk
    cap = loop_steps_cap(provider, cfg)
    if cap is not None:
        kc = min(kc, cap * cfg.bk)
    chunks = -(-k // kc) if k else 1
    if chunks > 1 and chunks * out * item > provider.max_binding:
        raise NotImplementedError(
            f"matmul of ({m}, {k}) by ({k}, {n}) (batch {batch}): this adapter's kernels walk at most "
            f"{kc} of K per workgroup, and the {chunks} partial products ({chunks * out * item} bytes) "
            f"exceed its largest binding ({provider.max_binding} bytes); compute it on the cpu device "
            "or in pieces along K")
    return Split(chunks, kc)


def plan(kernel: Kernel, cfg: Config | Skinny | Gemv, m: int, n: int, batch: int,
         split: Split | None = None) -> tuple[Rendered, np.ndarray, int]:
    """(rendered shader, prm, workgroups) of ``kernel`` with configuration ``cfg`` (with ``split``:
    the partial-sum pass of a split-K product; a :class:`Skinny` configuration is always that unless
    it is ``one_pass``)."""
    gm, gn = -(-m // cfg.bm), -(-n // cfg.bn)
    groups = batch * _tiles(cfg, m, n)
    extra = {"GM": gm, "GN": gn, "NG": groups}
    sp = split is not None and (split.chunks > 1 or isinstance(cfg, Skinny) and not cfg.one_pass)
    if sp:
        assert split is not None
        extra.update({"GT": groups, "KC": split.kc, "TS": batch * m * n, "NG": groups * split.chunks})
        groups *= split.chunks
    if isinstance(cfg, (Skinny, Gemv)):
        if isinstance(cfg, Gemv) and cfg.vec:
            extra.update(gemv_vec(kernel, kernel.operands["ab".index(cfg.side)], cfg.side) or {})
        elif isinstance(cfg, Skinny) and cfg.vec:          # the wide side, read along the output
            w = "b" if cfg.side == "a" else "a"
            extra.update(gemv_vec(kernel, kernel.operands["ab".index(w)], w, "vo") or {})
        r = rendered_for(kernel, cfg, split=sp)
    elif isinstance(cfg, BlockTiles):
        modes, vec = operand_modes(kernel)
        extra.update(vec)
        r = rendered_for(kernel, cfg, modes, n % 4 == 0, sp)
    else:
        r = rendered_for(kernel, cfg, split=sp)
    return r, r.meta(kernel, extra), groups


def row_blocks(provider: Any, kernel: Kernel) -> int | None:
    """Rows per block for a plain product (no epilogue, no batch) whose output exceeds one binding but
    fits one buffer, and whose inputs each fit one binding: it runs as one product per block of rows of
    the left operand, each writing its byte range of the output (a multiple of 64 rows, so that every
    range starts at an aligned offset); None for any other product."""
    if kernel.kind != "matmul" or kernel.result_index is not None or len(kernel.operands) != 2:
        return None
    a, b = (kernel.instrs[i] for i in kernel.operands)
    if len(a.shape) != 2 or len(b.shape) != 2:
        return None
    item = STORAGE_NP[kernel.result_dtype].itemsize
    m, n = a.shape[0], b.shape[1]
    limit = int(getattr(provider, "max_binding", 0))
    if m * n * item <= limit or m * n * item > int(getattr(provider, "max_buffer", 0)):
        return None
    if any(math.prod(node.shape) * STORAGE_NP[node.dtype].itemsize > limit for node in kernel.inputs):
        return None
    rows = limit // (n * item) // 64 * 64
    return rows if rows >= 64 else None


def _row_block_kernel(kernel: Kernel, r0: int, rows: int) -> Kernel:
    """``kernel`` for rows ``r0 .. r0 + rows`` of its left operand (a view instruction added)."""
    ai, bi = kernel.operands
    a = kernel.instrs[ai]
    k = a.shape[1]
    strides = (0 if rows == 1 else k, 0 if k == 1 else 1)
    view = Instr("view", (ai,), a.dtype, (rows, k), (strides, r0 * k))
    n = kernel.instrs[bi].shape[1]
    return dataclasses.replace(kernel, instrs=[*kernel.instrs, view], operands=[len(kernel.instrs), bi],
                               out_nodes=[Result(kernel.result_dtype, (rows, n))], out_shape=(rows, n),
                               _sig=None, _res=None, _size=-1)


def _enqueue_row_blocks(provider: Any, kernel: Kernel, in_handles: list[Any], rows: int) -> list[Any]:
    a = kernel.instrs[kernel.operands[0]]
    m, n = a.shape[0], kernel.instrs[kernel.operands[1]].shape[1]
    item = STORAGE_NP[kernel.result_dtype].itemsize
    out = provider.alloc(m * n * item)
    try:
        for r0 in range(0, m, rows):
            rb = min(rows, m - r0)
            enqueue_matmul(provider, _row_block_kernel(kernel, r0, rb), in_handles,
                           outs=[(out.buffer, r0 * n * item, rb * n * item)])
    except BaseException:
        provider.free(out)
        raise
    return [out]


def enqueue_matmul(provider: Any, kernel: Kernel, in_handles: list[Any],
                   tiles: Config | Skinny | Gemv | None = None, outs: list[Any] | None = None) -> list[Any]:
    """Dispatch the product of ``kernel`` into new output buffers (or ``outs``, large enough: a
    caller that repeats products of one shape keeps its buffers, and so its bind groups; or byte
    ranges ``(buffer, offset, size)`` of them). A plain product whose output exceeds one binding runs
    by blocks of rows (``row_blocks``); inputs past one binding bind the windows their views read
    (``wgpu_split.window_inputs``: ``namespace/matmul_blocks.py`` records such products)."""
    kernel, in_handles = window_inputs(provider, kernel, in_handles)
    if outs is None and tiles is None and kernel.size:
        rows = row_blocks(provider, kernel)
        if rows is not None:
            return _enqueue_row_blocks(provider, kernel, in_handles, rows)
    dt = kernel.result_dtype       # the accumulators'; a fused epilogue's outputs have their own
    out_dts = [kernel.instrs[o].dtype for o in kernel.outputs] if kernel.result_index is not None else [dt]
    if outs is None:
        outs = [provider.alloc(kernel.size * STORAGE_NP[d].itemsize) for d in out_dts]
    if kernel.size == 0:
        return outs
    a = kernel.instrs[kernel.operands[0]]
    b = kernel.instrs[kernel.operands[1]]
    m, k = a.shape[-2:]
    n = b.shape[-1]
    batch = math.prod(a.shape[:-2])
    cfg: Config | Skinny | Gemv | None = tiles or gemv_for(provider, kernel, m, n, k, dt) or \
        skinny_for(provider, kernel, m, n, k, dt)
    if cfg is None:
        cfg = gram_for(provider, kernel, m, n, k, batch, dt) or select(provider, m, n, k, batch, dt)
    if isinstance(cfg, BlockTiles) and dt not in BLOCKED_DTYPES:
        cfg = choose_tiles(m, n, k, dt)
    item = STORAGE_NP[dt].itemsize
    gemv = isinstance(cfg, Gemv) or isinstance(cfg, Skinny) and cfg.one_pass
    fill = GEMV_FILL if gemv else GRAM_FILL if isinstance(cfg, BlockTiles) and cfg.gram else \
        SKINNY_FILL if isinstance(cfg, Skinny) and item <= 4 else FILL_GROUPS
    split = split_for(provider, cfg, m, n, k, batch, item, fill)
    r, prm, groups = plan(kernel, cfg, m, n, batch, split)
    wide = wide_buffers(provider, r, kernel)
    if split.chunks == 1 and (gemv or not isinstance(cfg, Skinny)):
        provider.dispatch(r.source, prm, [*in_handles, *outs, *wide], groups)
        return outs
    part = provider.alloc(split.chunks * batch * m * n * item)
    try:
        provider.dispatch(r.source, prm, [*in_handles, part, *wide], groups)
        ts = batch * m * n
        lanes = sum_lanes(split.chunks)
        if not gemv:     # one thread per output, or several where the outputs are few (X.T @ X)
            lanes = min(lanes, 1 << max(0, (SUM_FILL // ts).bit_length() - 1))
        if lanes > 1:    # many chunks of a few outputs: several threads add each output's chunks
            key = (kernel.signature, "gemv_sum", lanes)
            if key not in _rendered:
                _rendered[key] = render_gemv_sum(kernel, lanes)
            rs = _rendered[key]
            sum_groups = -(-ts * lanes // SUM_THREADS)
        else:
            rs, sum_groups = rendered_for(kernel, None), -(-ts // SUM_THREADS)
        prm = rs.meta(kernel, {"TS": ts, "S": split.chunks})
        wide = wide_buffers(provider, rs, kernel)
        provider.dispatch(rs.source, prm, [*in_handles, *outs, *wide, part], sum_groups)
    finally:
        provider.free(part)          # back to the pool once the pass is submitted
    return outs
