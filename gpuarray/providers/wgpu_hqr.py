"""``linalg_hqr`` on the wgpu provider: the eigenvalues of stacks of small real matrices (``eigvals``)
by LAPACK's ``dgeev`` path (scaling, ``dgebal`` balancing, ``dgehd2`` Hessenberg reduction, ``dlahqr``
double-shift QR), one thread a matrix in a scratch copy, one dispatch for the stack
(``render/wgsl_hqr.py``).

The result is ``[flags(4) | per matrix: n real parts, n imaginary parts]``; the flags (not finite,
not converged, complex, unfinished) are cleared by a one-thread dispatch before. On CPU adapters
(lavapipe: Mesa's llvmpipe ends every loop of an invocation once 65535 iterations have run in all)
the work is cut into units of bounded loop iterations (a balancing pass or row, a Hessenberg
column, a QR iteration), one matrix a workgroup, and the kernel is dispatched ``dispatches(n)``
times, each resuming from the state it left (``S``); elsewhere one dispatch does it all.

>>> MAX_N
64
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP
from ..render.wgsl_hqr import CPU_BUDGET, FLAG_COUNT, NS, THREADS, flags_source, hqr_source

_WGSL = {"float32": "f32", "float64": "f64"}
MAX_N = 64              # larger matrices go to LAPACK (one thread a matrix: O(10 n^3) steps each)
# A few matrices of more than SMALL_N rows go to LAPACK too: one GPU thread a matrix is slower than the
# host's LAPACK unless there are many of them (H100: one 64 x 64 matrix 79 ms, NumPy 1.4 ms; 1000 x 16 x 16
# 6.2 ms, NumPy 62 ms; 4096 x 8 x 8 1.8 ms, NumPy 71 ms)
SMALL_N = 16
MIN_BATCH = 64


def hqr_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    """Why the device cannot run this ``linalg_hqr`` kernel (None: it can)."""
    dt = kernel.out_nodes[0].dtype
    if dt.name not in _WGSL:
        return f"no WGSL eigvals for {dt}; it runs on the host"
    n = kernel.instrs[kernel.operands[0]].shape[-1]
    if n > MAX_N:
        return (f"eigvals on the device takes matrices of at most {MAX_N} rows (one thread a matrix: "
                f"Hessenberg reduction and Francis double-shift QR), not {n}; LAPACK's geev on the host")
    matrices = math.prod(kernel.instrs[kernel.operands[0]].shape[:-2])
    if n > SMALL_N and matrices < MIN_BATCH:
        return (f"eigvals of {matrices} matrix(es) of {n} rows: LAPACK on the host is faster than one GPU "
                f"thread a matrix below {MIN_BATCH} matrices of more than {SMALL_N} rows")
    nbytes = kernel.size * STORAGE_NP[dt].itemsize
    if nbytes > provider.max_binding:
        return (f"the eigvals result of {nbytes} bytes exceeds the adapter's storage binding limit "
                f"{provider.max_binding}")
    return None


def enqueue_hqr(provider: Any, kernel: Kernel, in_handles: list[Any], load: Any) -> list[Any]:
    """``linalg_hqr`` of ``kernel`` (``load(work, **extras)`` copies the operand, contiguous)."""
    dt = kernel.out_nodes[0].dtype
    t = _WGSL[dt.name]
    item = STORAGE_NP[dt].itemsize
    a = tuple(kernel.instrs[kernel.operands[0]].shape)
    n = a[-1]
    batch = math.prod(a[:-2])
    out = provider.alloc(kernel.size * item)
    work = provider.alloc(max(batch * n * n, 1) * item)
    state = provider.alloc(max(batch * NS, 1) * item)
    budgeted = str(provider.adapter.info.get("adapter_type")) == "CPU"
    threads, budget, rounds = (1, CPU_BUDGET, dispatches(n, t)) if budgeted else (THREADS, 0xF0000000, 1)
    try:
        load(work, N=batch * n * n, R=n, C=n, BS=n * n, LD=n, COFF=0, LOWER=0, FLAG=0xFFFFFFFF)
        provider.dispatch(flags_source(t), np.array([FLAG_COUNT], np.uint32), [out], 1)
        source = hqr_source(t, threads)
        for r in range(rounds):
            prm = np.array([batch, n, int(r == 0), budget, int(r == rounds - 1)], np.uint32)
            provider.dispatch(source, prm, [work, out, state], -(-batch // threads))
        return [out]
    finally:
        provider.free(work)          # back to the pool once the pass is submitted
        provider.free(state)


def dispatches(n: int, t: str) -> int:
    """Dispatches of ``CPU_BUDGET`` loop iterations each for an ``n x n`` matrix on lavapipe: a generous
    estimate of the work (4 balancing passes, the Hessenberg reduction, 4 QR iterations an
    eigenvalue, the units' bounds of ``render/wgsl_hqr.py``); a matrix not done by then raises the
    unfinished flag and ``linalg.hqr`` asks LAPACK.

    >>> dispatches(8, "f64"), dispatches(64, "f64")
    (3, 118)
    """
    fexp = 970 if t == "f64" else 104
    perm = 3 * n * n + n + 16
    scl = 8 * n + 2 * fexp + 16
    hess = 4 * n * n + 27 * n + 64
    sweep = n * (2 * n + 45) + 2 * n + 64
    total = 2 * n * n + 8 * perm + 4 * n * scl + n * hess + (4 * n + 8) * sweep
    return -(-total // (CPU_BUDGET - max(perm, scl, hess, sweep))) + 1
