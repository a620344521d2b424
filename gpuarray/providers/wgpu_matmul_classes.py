"""Which matmul kernel class a product takes, where it is not the tiled kernels of ``wgpu_matmul``:
the GEMV class for a vector operand (``gemv_for``: the row dot where the matrix is read along ``K``,
``X @ w``; the narrow kernel with one narrow row, column sums, where it is read along the output,
``X.T @ r``), and the narrow split-K kernel for a side of at most ``SKINNY_MAX`` and a long ``K``
(``skinny_for``: ``G.T @ X`` of a few classes). Also which operands the blocked kernel can read as
``vec4`` words (``_vector_layout``).

>>> gemv_rows(64, 1 << 20, 4, "a").lanes > 1      # long rows: several threads a row
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP
from ..graph.shapes import contiguous_strides
from ..render.wgsl_matmul_blocked import BLOCKED_DTYPES
from ..render.wgsl_matmul_gemv import Gemv
from ..render.wgsl_matmul_skinny import Skinny
from .wgpu_matmul_config import forced

# Outputs of at most 64 x 64 with K >= LONG_K take BLOCK_SPLIT (float32) or BLOCK_MEDIUM (float64)
# in the tiled kernels (``wgpu_matmul.select``); a narrow side with K >= LONG_K takes the skinny kernel.
LONG_K = 1024


def _vector_layout(kernel: Kernel, op_i: int, which: str) -> tuple[int, str, dict[str, int]] | None:
    """(base input instr, mode, extras) when operand ``op_i`` can be read as vec4, else None."""
    ins = kernel.instrs[op_i]
    f32 = kernel.result_dtype           # float32 or float64: the blocked kernel's dtype
    if ins.dtype != f32 or f32 not in BLOCKED_DTYPES:
        return None
    if ins.op == "input":
        base, strides, off = op_i, tuple(contiguous_strides(ins.shape)), 0
    elif ins.op == "view" and kernel.instrs[ins.args[0]].op == "input":
        base, (strides, off) = ins.args[0], ins.params
    else:
        return None
    node = kernel.inputs[kernel.instrs[base].params[0]]
    if node.dtype != f32 or math.prod(node.shape) % 4:
        return None
    shape = ins.shape
    st = [0 if shape[d] == 1 else int(s) for d, s in enumerate(strides)]
    nb = len(shape) - 2
    o_ax, k_ax = (nb, nb + 1) if which == "a" else (nb + 1, nb)
    if min(st) < 0 or off % 4:
        return None
    for mode, vax, oax in (("vk", k_ax, o_ax), ("vo", o_ax, k_ax)):
        if st[vax] == 1 and shape[vax] >= 4 and shape[vax] % 4 == 0 and all(
                st[d] % 4 == 0 for d in range(len(shape)) if d != vax):
            extras = {f"{which}_off": off // 4, f"{which}_st": st[oax] // 4}
            extras.update({f"{which}_b{d}": st[d] // 4 for d in range(nb)})
            return base, mode, extras
    return None


SKINNY_MAX = 8             # the narrow side of the skinny split-K kernel, at most
SKINNY_VEC4 = True         # it reads a plain float32 / float64 wide operand as vec4 words (gemv_vec "vo")


def _along(kernel: Kernel, op_i: int, axis: int) -> bool:
    """Whether operand ``op_i`` is read with unit stride along ``axis`` as far as the kernel shows:
    an input (C order) or a view of one by its strides; an elementwise cone by its full-shape
    arguments; anything else as if C order (its elements are computed where they are read)."""
    ins = kernel.instrs[op_i]
    if ins.shape[axis] == 1:
        return True
    if ins.op == "input":
        return axis == len(ins.shape) - 1
    if ins.op == "view" and kernel.instrs[ins.args[0]].op == "input":
        return abs(int(ins.params[0][axis])) == 1
    full = [a for a in ins.args if kernel.instrs[a].shape == ins.shape]
    if ins.op != "view" and full:
        return all(_along(kernel, a, axis) for a in full)
    return axis == len(ins.shape) - 1


def skinny_for(provider: Any, kernel: Kernel, m: int, n: int, k: int, dtype: np.dtype) -> Skinny | None:
    """The narrow split-K kernel for a product with ``min(M, N) <= SKINNY_MAX`` and ``K >= LONG_K``
    (real and integer dtypes), when its wide operand is read coalesced along the wide side (``G.T @
    X``, ``X.T @ G``; ``X @ W`` is not: its rows are ``K`` apart), else None. The wide tile ``bw``
    covers the wide side up to 256 columns (128 for 8-byte types), so a narrow operand cone is
    evaluated once per element when the wide side fits one tile and ``ceil(wide / bw)`` times
    otherwise (the tiled kernels: once per 64-row tile of which ``M`` rows are valid)."""
    if forced() is not None or np.dtype(dtype).kind not in "iuf" or k < LONG_K or min(m, n) > SKINNY_MAX:
        return None
    side = "a" if m <= n else "b"
    s, wide = (m, n) if side == "a" else (n, m)
    nd = len(kernel.instrs[kernel.operands[0]].shape)
    if not _along(kernel, kernel.operands[1] if side == "a" else kernel.operands[0], nd - 1 if side == "a" else nd - 2):
        return None
    item = STORAGE_NP[np.dtype(dtype)].itemsize
    bw = min(256 if item <= 4 else 128, max(16, 1 << (wide - 1).bit_length()))
    w = "b" if side == "a" else "a"
    if SKINNY_VEC4 and gemv_vec(kernel, kernel.operands["ab".index(w)], w, "vo") is not None:
        lanes = min(16, 256 // (bw // 4))            # four wide columns a thread, vec4 words
        reads = SKINNY_VEC_READS if item <= 4 else VEC_READS_8B
        cfg = Skinny(s, side, bw, reads * lanes, lanes, vec=True)
    else:
        cfg = Skinny(s, side, bw, 64, min(16, 256 // bw))
    lim = getattr(provider, "limits", {})
    if (cfg.smem_elems * item > int(lim.get("max-compute-workgroup-storage-size", 16384))
            or cfg.threads > int(lim.get("max-compute-invocations-per-workgroup", 256))):
        return None
    return cfg


GEMV_STAGE = True          # against several vector columns: their K step staged in workgroup memory
GEMV_COLS_ROWS = 2         # rows a thread against several vector columns (rows longer than GEMV_LONG) ...
GEMV_COLS_SHORT = 1        # ... and short rows (H200, (2^20 x 64) @ (64 x 4) with the matrix reads before the
                           # staging barrier: 1 row 0.103 / 0.215 ms float32 / float64, 2 rows 0.108 / 0.227;
                           # 2 were best before, when the reads waited on the barrier)
GEMV_LONG = 512            # rows (of the matrix along K) longer than this share a workgroup's threads
GEMV_VEC4 = True           # the row dot reads plain float32 / float64 matrices as vec4 words (gemv_vec)


def gemv_rows(rows: int, k: int, item: int, side: str, vec: bool = False, cols: int = 1) -> Gemv:
    """The row-dot configuration for ``rows`` output elements of length ``k`` (in vec4 words with
    ``vec``) against ``cols`` vector columns: short rows take ``ceil(k / 4)`` lanes (a power of two,
    at most 32) and up to 16 reads (8 vec4 words) per thread and step over several rows; long rows
    (``k > GEMV_LONG``) spread a workgroup's 256 threads over at most 8 rows (all 256 on one row for a
    dot product). Rows per thread: at most 8 (4 for 8-byte types); against several columns 2 (1 for short rows)."""
    cap, loads = (8 if item <= 4 else 4), (8 if vec else 16)
    if cols > 1:                     # H200: 1 or 2 rows a thread against several columns
        cap = GEMV_COLS_ROWS if k > GEMV_LONG else GEMV_COLS_SHORT
    want = 1 << max(0, rows - 1).bit_length()                  # rows, to a power of two
    if k > GEMV_LONG:
        lanes = 256 // min(8, want)
        rt = max(1, min(cap, loads, want * lanes // 256))
        return Gemv(side, lanes, rt, max(1, loads // rt), vec, cols, GEMV_STAGE)
    lanes = min(32, 1 << max(0, -(-k // 4) - 1).bit_length())
    unroll = max(1, -(-k // lanes))
    rt = max(1, min(cap, loads // unroll, -(-want * lanes // 256), lanes if lanes > 1 else cap))
    return Gemv(side, lanes, rt, unroll, vec, cols, GEMV_STAGE)


def gemv_vec(kernel: Kernel, mat: int, side: str, mode: str = "vk") -> dict[str, int] | None:
    """The ``prm`` extras (vec4 units) for reading matrix operand ``mat`` as vec4 words along ``K``
    (``_vector_layout``'s ``vk``; ``vo``: along the output, the column sum), or None (also where its
    buffer is read elsewhere in the kernel)."""
    got = _vector_layout(kernel, mat, side)
    if not GEMV_VEC4 or got is None or got[1] != mode:
        return None
    base = got[0]
    users = {j for j, ins in enumerate(kernel.instrs) for a in ins.args if a in (base, mat)}
    ok = users <= ({mat} if base != mat else set()) and (base == mat or base not in kernel.operands)
    return got[2] if ok else None


def _row_major(kernel: Kernel, op_i: int, k_axis: int, o_axis: int) -> bool:
    """Whether matrix operand ``op_i`` is better read along ``k_axis`` (the row dot) than along
    ``o_axis`` (the column sum): unit stride along ``K``, else not along the output, where a view
    of an input with neither takes its smaller stride (``_along``'s C-order guess otherwise)."""
    if _along(kernel, op_i, k_axis):
        return True
    if _along(kernel, op_i, o_axis):
        return False
    ins = kernel.instrs[op_i]
    if ins.op == "view" and kernel.instrs[ins.args[0]].op == "input":
        st = ins.params[0]
        return abs(int(st[k_axis])) <= abs(int(st[o_axis]))
    return k_axis > o_axis


COLSUM_VEC_READS = 8      # vec4 words a thread of the column sum reads per K step
SKINNY_VEC_READS = 4      # the narrow split-K kernel's for 4-byte types (H200, (exp(P) - Y).T @ X, 2^20 x 64 float32,
                          # 4 classes, reads before the barrier: 0.101 ms at 4 words, 0.108 at 8, 0.144 at 16)
VEC_READS_8B = 4          # the same for 8-byte types, there and in the narrow split-K kernel (H200, float64 2^20 x
                          # 64, GPU ms at 4 / 8 / 16 words: (2^20 x 4)^T @ X 0.18 / 0.42-0.48 / 0.43-0.47, r @ X
                          # 0.144 / 0.145-0.40 / 0.26-0.29; float32 alike at any of them)
GEMV_COLS = 8             # the row dot takes up to this many vector columns (X @ W.T of a few classes) ...
GEMV_COL_BYTES = 32       # ... whose sums for a row fit in 32 bytes (8 float32, 4 float64; past that the tiles win)


def gemv_for(provider: Any, kernel: Kernel, m: int, n: int, k: int, dtype: np.dtype) -> Gemv | Skinny | None:
    """The GEMV class for a product with ``N == 1`` or ``M == 1`` (real and integer dtypes, not
    under a forced configuration), else None: the row dot (``gemv_rows``) where the matrix is read
    along ``K`` (``_row_major``) or the output is one element, else the column sum (the narrow
    kernel with ``S == 1``, 64 columns of the matrix per workgroup, or 16-32 when it has fewer,
    ``256 / width`` lanes along ``K``, 16 reads per thread and step). Also the row dot against
    2-8 vector columns (2-4 for float64) where the matrix has more rows and is read along ``K``
    (``X @ W.T`` of a few classes, ``W @ X.T``; H200, (2^20 x 64) @ (64 x 4): float32 0.157 ms of
    GPU time, 0.25 in the generic tiles; float64 0.28, 0.65)."""
    item = STORAGE_NP[np.dtype(dtype)].itemsize
    if forced() is not None or np.dtype(dtype).kind not in "iuf" or \
            not 1 <= min(m, n) <= min(GEMV_COLS, GEMV_COL_BYTES // item):
        return None
    side = "a" if n <= m else "b"
    rows, cols = (m, n) if side == "a" else (n, m)
    nd = len(kernel.instrs[kernel.operands[0]].shape)
    mat = kernel.operands[0 if side == "a" else 1]
    k_ax, o_ax = (nd - 1, nd - 2) if side == "a" else (nd - 2, nd - 1)
    cfg: Gemv | Skinny
    if cols > 1:
        if rows <= GEMV_COLS or not _row_major(kernel, mat, k_ax, o_ax):
            return None
        vec = gemv_vec(kernel, mat, side) is not None
        cfg = gemv_rows(rows, k // 4 if vec else k, item, side, vec, cols)
        smem = cfg.smem_elems
    elif rows == 1 or _row_major(kernel, mat, k_ax, o_ax):
        vec = gemv_vec(kernel, mat, side) is not None
        cfg = gemv_rows(rows, k // 4 if vec else k, item, side, vec)
        smem = cfg.smem_elems
    else:
        bw = min(64, max(16, 1 << (rows - 1).bit_length()))
        if gemv_vec(kernel, mat, side, "vo") is not None:     # 4 columns a thread, COLSUM_VEC_READS words a step
            lanes = 256 // (bw // 4)
            reads = COLSUM_VEC_READS if item <= 4 else VEC_READS_8B
            cfg = Skinny(1, "b" if side == "a" else "a", bw, reads * lanes, lanes, one_pass=True, vec=True)
        else:
            cfg = Skinny(1, "b" if side == "a" else "a", bw, 16 * (256 // bw), 256 // bw, one_pass=True)
        smem = cfg.smem_elems
    lim = getattr(provider, "limits", {})
    if smem * item > int(lim.get("max-compute-workgroup-storage-size", 16384)) or \
            cfg.threads > int(lim.get("max-compute-invocations-per-workgroup", 256)):
        return None
    return cfg
