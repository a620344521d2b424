"""Blocked Cholesky on the wgpu provider whose trailing updates are the provider's matrix products
(``linalg_potrf``; ``providers/wgpu_linalg.py`` calls ``enqueue_potrf_blocked``).

Per block column of ``CHOL_NB`` (64) two dispatches: ``potrf_panel_source`` (the diagonal block
and ``CHOL_ROWS`` (32) rows of the panel below it factored together in registers by each workgroup
of ``CHOL_THREADS`` (512) threads, one barrier a column; the diagonal block redundantly by every
workgroup, written by the first), then ``S' = S22 - L21 L21^T`` as one register-blocked matmul
(``wgpu_matmul.enqueue_matmul`` on a synthetic ``matmul`` kernel whose operands are views of the
factor and whose fused epilogue subtracts from a view of the current trailing matrix ``S``; its
attribute ``"lower"`` skips the tiles above the diagonal, which nothing reads). ``S'`` is a fresh
buffer (a product may not write the buffer it reads), contiguous, the next block column's ``S``; the
operand's copy is the first. Before them one load of the operand and one dispatch zeroing above the
diagonal: ``2 + 2 n / CHOL_NB`` dispatches, whatever the batch. H200, GPU ms by timestamp queries
(n = 4096 float32 / 2048 float64): panels 11.4 / 6.7 with the earlier row-a-thread solve, 2.8 / 2.0
now; products 3.4 / 1.3 on whole squares, 2.2 / 0.9 on the lower tiles.

>>> CHOL_NB
64
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compiler.kernel import Instr, Kernel, Result
from ..core.dtypes import STORAGE_NP
from ..render import wgsl_lu_panel
from ..render.wgsl import WORKGROUP
from ..render.wgsl_linalg_blocked import (
    PANEL_ROWS,
    SMALL_N,
    lu_panel_source,
    lu_small_source,
    potrf_panel_source,
    prep_source,
)
from ..render.wgsl_lu_panel import RPT, lu_panel_reg_source
from . import wgpu_matmul
from .wgpu_reduce import use_subgroups

CHOL_NB = 64            # block column width of Cholesky
CHOL_THREADS = 512      # threads of potrf_panel_source where the adapter allows them (else 256)
CHOL_ROWS = PANEL_ROWS  # panel rows a workgroup of potrf_panel_source
# float64: half the threads, half the rows (H200, 2048: GPU 2.60 -> 2.45 ms, wall 2.90 -> 2.79; float32
# 4096 the same either way)
CHOL_F64 = (256, 16)
# float64 panels take their pivot's reciprocal by one inverseSqrt (else sqrt and a division, as float32 keeps):
# H200 GPU ms, float64 2048 2.87 -> 2.66, 1024 1.33 -> 1.22; float32 4096 5.37 -> 5.42-6.05 (no gain)
CHOL_RSQRT = True
BLOCKED_CHOLESKY = True     # False: the 32-column path of wgpu_linalg.py (gemm_source updates)
SMALL_CHOLESKY = True       # False: matrices of at most 32 rows by that path too (potrf_source)
SMALL_LU = True             # False: small stacks through the panel kernels too
BLOCKED_LU_PANEL = True     # False: LU panels by panel_source (wgsl_linalg.py), a global pass a column
LU_PANEL_THREADS = 1024     # threads of lu_panel_source where the adapter allows them (else 256)
REG_LU_PANEL = True         # False: LU panels by lu_panel_source (its rows in a private array)
LU_MAX_RPT = {"f32": 4, "f64": 4}   # rows a thread of the subgroup register panel, at most
LU_MIN_THREADS = 256


def _u32(*vals: int) -> np.ndarray:
    return np.array(vals, dtype=np.uint32)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _pad4(count: int) -> int:
    """``count`` rounded up to a multiple of 4 (whole ``vec4`` words for the products' loads)."""
    return -(-count // 4) * 4


def binding_overflow(provider: Any, op: str, parts: list[tuple[str, int]]) -> str | None:
    """Why ``op``'s buffers do not fit the adapter: the first of ``parts`` (name, bytes) above its storage
    binding limit, or None."""
    for what, nbytes in parts:
        if nbytes > provider.max_binding:
            return (f"the {op} {what} of {nbytes} bytes exceeds the adapter's storage binding limit "
                    f"{provider.max_binding}")
    return None


def cpu_adapter(provider: Any) -> bool:
    """Whether ``provider`` runs on a CPU adapter (lavapipe: its loop limit bounds some kernels)."""
    adapter = getattr(provider, "adapter", None)
    return adapter is not None and str(adapter.info.get("adapter_type")) == "CPU"


def lu_threads(provider: Any, item: int, rows: int) -> int:
    """The workgroup size of ``lu_panel_source`` for a panel of ``rows`` rows of ``item`` bytes on
    ``provider``: ``LU_PANEL_THREADS`` for more than 1024 rows where the adapter allows that many
    threads and their workgroup memory (a value and an index a thread, 1296 values besides), else
    256 (at most 4 rows a thread either way up to 4096 rows)."""
    if rows <= 1024:
        return 256
    lim = int(provider.limits.get("max-compute-invocations-per-workgroup", 256))
    smem = int(provider.limits.get("max-compute-workgroup-storage-size", 16384))
    t = LU_PANEL_THREADS
    return t if t <= lim and t * (item + 4) + 1296 * item + 512 <= smem else 256


def dispatch_lu_panel(provider: Any, t: str, item: int, rows: int, prm: np.ndarray, buffers: list[Any],
                      groups: int) -> None:
    """Dispatch the LU panel shader for ``rows`` rows: ``lu_panel_reg_source`` (rows in named registers;
    the pivot by subgroup shuffles where the adapter has them) where a thread has at most ``RPT`` of
    them and ``REG_LU_PANEL`` is on, else ``lu_panel_source``. A driver that rejects the subgroup
    built-ins gets the workgroup-memory pivot from then on (``wgpu_reduce.dispatch_subgroups``'s rule,
    with a flag of its own: the reductions keep their subgroups)."""
    threads = lu_threads(provider, item, rows)
    if not (REG_LU_PANEL and rows <= RPT * threads):
        provider.dispatch(lu_panel_source(t, threads), prm, buffers, groups)
        return
    sg = use_subgroups(provider) and not getattr(provider, "_lu_sg_failed", False)
    if sg:
        rpt, threads = reg_layout(provider, t, rows)
        regs = wgsl_lu_panel.UNROLL_CHUNK and groups <= wgsl_lu_panel.CHUNK_REG_GROUPS
        try:
            provider.dispatch(lu_panel_reg_source(t, threads, True, rpt, regs), prm, buffers, groups)
            return
        except Exception as exc:
            if "lost" in str(exc).lower():
                raise
            provider._lu_sg_failed = True
        threads = lu_threads(provider, item, rows)
    provider.dispatch(lu_panel_reg_source(t, threads, False), prm, buffers, groups)


def reg_layout(provider: Any, t: str, rows: int) -> tuple[int, int]:
    """(rows a thread, threads) of the subgroup register panel for ``rows`` rows: the fewest threads
    (at least ``LU_MIN_THREADS``, a power of two within the adapter's limit) that hold them with at
    most ``LU_MAX_RPT[t]`` rows a thread (fewer threads issue fewer instructions a column), and the
    rows a thread rounded up to a power of two (few shaders).

    >>> class _P: limits = {"max-compute-invocations-per-workgroup": 1024}
    >>> reg_layout(_P(), "f32", 3000), reg_layout(_P(), "f32", 100)
    ((4, 1024), (1, 256))
    """
    lim = int(provider.limits.get("max-compute-invocations-per-workgroup", 256))
    threads = LU_MIN_THREADS
    while threads * LU_MAX_RPT[t] < rows and threads * 2 <= lim:
        threads *= 2
    rpt = 1
    while rpt * threads < rows:
        rpt *= 2
    return rpt, threads


def syrk_kernel(dt: np.dtype, batch: int, m: int, w: int, lsize: int, ld: int, bs: int, loff: int,
                ssize: int, sld: int, sbs: int, soff: int) -> Kernel:
    """The ``matmul`` kernel ``S[soff:] - A @ A^T``: ``A`` the ``(batch, m, w)`` view of input 0 (row
    stride ``ld``, matrix stride ``bs``, offset ``loff``; ``lsize`` elements), ``S`` the ``(batch, m,
    m)`` view of input 1 (``sld``, ``sbs``, ``soff``; ``ssize``). Strides and sizes are run-time
    values: every block column of every size shares one pipeline.

    >>> k = syrk_kernel(np.dtype(np.float32), 1, 8, 4, 64, 8, 64, 32, 64, 8, 64, 36)
    >>> k.kind, k.out_shape, k.operands
    ('matmul', (1, 8, 8), [1, 2])
    """
    shp = (batch, m, m)
    instrs = [Instr("input", (), dt, (lsize,), (0,)),
              Instr("view", (0,), dt, (batch, m, w), ((bs, ld, 1), loff)),
              Instr("view", (0,), dt, (batch, w, m), ((bs, 1, ld), loff)),
              Instr("result", (), dt, shp, ()),
              Instr("input", (), dt, (ssize,), (1,)),
              Instr("view", (4,), dt, shp, ((sbs, sld, 1), soff)),
              Instr("subtract", (5, 3), dt, shp, ())]
    return Kernel(instrs, [Result(dt, (lsize,)), Result(dt, (ssize,))], [6], [Result(dt, shp)], shp,
                  kind="matmul", attrs=("lower",), operands=[1, 2])


def panel_layout(provider: Any, n: int, t: str = "f32") -> tuple[int, int, int]:
    """(block width, threads, panel rows a workgroup) of ``potrf_panel_source`` for ``n x n`` matrices:
    ``CHOL_NB`` columns with ``CHOL_THREADS`` threads (256 where the adapter allows fewer) and
    ``CHOL_ROWS`` rows, for float64 (``t``) ``CHOL_F64``'s; a matrix narrower than ``CHOL_NB`` is one
    block of the next power of two columns (at least 8) with 8 rows of threads and no panel below
    (stacks of small matrices: one workgroup a matrix, one dispatch).

    >>> class _P: limits = {"max-compute-invocations-per-workgroup": 1024}
    >>> panel_layout(_P(), 4096), panel_layout(_P(), 2048, "f64"), panel_layout(_P(), 20)
    ((64, 512, 32), (64, 256, 16), (32, 256, 8))
    """
    if n < CHOL_NB:
        nb = max(8, 1 << (n - 1).bit_length())
        return nb, 8 * nb, 8
    lim = int(provider.limits.get("max-compute-invocations-per-workgroup", 256))
    threads, rows = CHOL_F64 if t == "f64" else (CHOL_THREADS, CHOL_ROWS)
    return CHOL_NB, threads if threads <= lim else 256, rows


def enqueue_potrf_blocked(provider: Any, kernel: Kernel, load: Any, in_handles: list[Any]) -> list[Any]:
    """``linalg_potrf`` of ``kernel`` (``load(work, **extras)`` copies the operand into ``work``)."""
    dt = kernel.out_nodes[0].dtype
    t = {"float32": "f32", "float64": "f64"}[dt.name]
    item = STORAGE_NP[dt].itemsize
    a = tuple(kernel.instrs[kernel.operands[0]].shape)
    n, batch = a[-1], math.prod(a[:-2])
    flag = batch * n * n
    nb, threads, rows = panel_layout(provider, n, t)
    dsize = _pad4(flag + 1)
    out = provider.alloc(dsize * item)
    count = batch * n * n
    if count == 0:
        provider.dispatch(prep_source(t), _u32(0, 1, flag), [out], 1)
        return [out]
    src = provider.alloc(_pad4(count) * item)
    load(src, N=count, R=n, C=n, BS=n * n, LD=n, COFF=0, LOWER=0, FLAG=0xFFFFFFFF)
    provider.dispatch(prep_source(t), _u32(count, n, flag), [out], _cdiv(count, WORKGROUP))
    # the trailing matrices alternate between the operand's copy and one more buffer, the same two
    # every call (a repeated call binds the bind groups of the last: new buffers made 51 new groups
    # a call at n = 1536)
    bufs = [src] + ([provider.alloc(_pad4(batch * (n - nb) ** 2) * item)] if n > nb else [])
    sizes = [_pad4(count), _pad4(batch * (n - nb) ** 2)]
    cur, sld, sbs = 0, n, n * n
    for k in range(0, n, nb):
        w, m = min(nb, n - k), n - k
        g = max(1, _cdiv(m - w, rows))
        provider.dispatch(potrf_panel_source(t, threads, rows, nb, CHOL_RSQRT and t == "f64"),
                          _u32(sld, sbs, 0, n, k, w, m, g, flag, batch * g), [bufs[cur], out], batch * g)
        if m == w:
            break
        m2 = m - w
        upd = syrk_kernel(dt, batch, m2, w, dsize, n, n * n, (k + w) * n + k, sizes[cur], sld, sbs, w * sld + w)
        wgpu_matmul.enqueue_matmul(provider, upd, [out, bufs[cur]], outs=[bufs[1 - cur]])
        cur, sld, sbs = 1 - cur, m2, m2 * m2
        provider.submit_early()      # the GPU starts while the rest is recorded
    for b in bufs:
        provider.free(b)             # back to the pool once the pass is submitted
    return [out]


def small_lu(provider: Any, t: str, work: Any, out: Any, n: int, ld: int, bs: int, nrhs: int, batch: int,
             flag: int) -> bool:
    """``solve`` / ``inv`` of a stack of matrices of at most ``SMALL_N`` rows whose ``[A | B]`` fits in
    workgroup memory as one dispatch of ``lu_small_source`` (after one clearing the flag); False
    (nothing dispatched) for larger ones."""
    item = 4 if t == "f32" else 8
    elems = max(256, 1 << (n * (n + nrhs) - 1).bit_length())
    limit = int(provider.limits.get("max-compute-workgroup-storage-size", 16384))
    if not SMALL_LU or n > SMALL_N or elems * item + 16 > limit:
        return False
    provider.dispatch(prep_source(t), _u32(0, 1, flag), [out], 1)
    provider.dispatch(lu_small_source(t, elems), _u32(n, ld, bs, nrhs, n * nrhs, flag, batch), [work, out], batch)
    return True
