"""``linalg_syevj`` and ``linalg_gesvj`` on the wgpu provider: ``eigh`` / ``eigvalsh`` of small
symmetric matrices and stacks of them by the cyclic Jacobi method (one matrix with vectors by the
one-sided method on a shifted copy) and ``svd`` / ``svdvals`` of small matrices and stacks by the
one-sided Jacobi method, one workgroup a matrix, one dispatch for the stack (``render/wgsl_jacobi.py``,
``render/wgsl_jacobi1.py``, ``render/wgsl_svdj.py``).

The result per matrix is LAPACK's layout (the ``n`` eigenvalues ascending, then with vectors the
``n x n`` eigenvector matrix), the flag after the last matrix.

>>> class _P: limits = {"max-compute-workgroup-storage-size": 49152}
>>> max_order(_P(), "f32"), max_order(_P(), "f64"), v_shared(_P(), "f64", 53), v_shared(_P(), "f64", 64)
(64, 64, True, False)
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP
from ..render.wgsl_jacobi import jacobi_smem, jacobi_source, threads_for
from ..render.wgsl_jacobi1 import jacobi1_smem, jacobi1_source
from ..render.wgsl_linalg_blocked import prep_source
from ..render.wgsl_svdj import svdj_smem, svdj_source

_WGSL = {"float32": "f32", "float64": "f64"}
MAX_N = 64              # larger matrices go to LAPACK (a sweep is n - 1 steps of two barriers)
THREAD_CAP = int(os.environ.get("GPUARRAY_JACOBI_THREADS", "1024"))    # threads a workgroup at most
ONE_THREADS = int(os.environ.get("GPUARRAY_JACOBI1_THREADS", "512"))   # one-matrix kernel (H200: 512 fastest)


def _smem(provider: Any) -> int:
    return int(provider.limits.get("max-compute-workgroup-storage-size", 16384))


def max_order(provider: Any, t: str) -> int:
    """The largest ``n`` (at most ``MAX_N``) whose ``A`` fits in the adapter's workgroup memory (``V``
    goes to the output where it does not fit beside ``A``: ``v_shared``)."""
    item = 4 if t == "f32" else 8
    n = MAX_N
    while n > 1 and jacobi_smem(n, item, False) > _smem(provider):
        n -= 1
    return n


def v_shared(provider: Any, t: str, n: int) -> bool:
    """Whether ``V`` fits in workgroup memory beside ``A`` for ``n x n`` matrices of WGSL type ``t``."""
    return jacobi_smem(n, 4 if t == "f32" else 8, True) <= _smem(provider)


def _invocations(provider: Any) -> int:
    return int(provider.limits.get("max-compute-invocations-per-workgroup", 256))


def one_matrix_threads(provider: Any, t: str, n: int) -> int | None:
    """Threads of ``wgsl_jacobi1``'s workgroup for one ``n x n`` matrix with vectors on ``provider``
    (at most ``ONE_THREADS`` and the adapter's limit, fewer where workgroup memory is short), or None
    where it does not fit (the two-sided kernel then takes the matrix)."""
    th = min(ONE_THREADS, _invocations(provider))
    item = 4 if t == "f32" else 8
    while th >= 64 and jacobi1_smem(n, item, th) > _smem(provider):
        th //= 2
    return th if th >= 64 else None


def syevj_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    """Why the device cannot run this ``linalg_syevj`` kernel (None: it can)."""
    dt = kernel.out_nodes[0].dtype
    if dt.name not in _WGSL:
        return f"no WGSL eigh for {dt}; it runs on the host"
    n = kernel.instrs[kernel.operands[0]].shape[-1]
    top = max_order(provider, _WGSL[dt.name])
    if n > top:
        return f"Jacobi eigh takes matrices of at most {top} rows on this adapter, not {n}"
    nbytes = kernel.size * STORAGE_NP[dt].itemsize
    if nbytes > provider.max_binding:
        return f"the eigh result of {nbytes} bytes exceeds the adapter's storage binding limit {provider.max_binding}"
    return None


def _stack(provider: Any, kernel: Kernel, load: Any, source: str, per: int, trans: int = 0) -> list[Any]:
    """Load the stack of ``kernel``'s operand (contiguous), clear the flag after ``per`` elements a
    matrix and dispatch ``source`` (one workgroup a matrix)."""
    dt = kernel.out_nodes[0].dtype
    item = STORAGE_NP[dt].itemsize
    a = tuple(kernel.instrs[kernel.operands[0]].shape)
    m, n = a[-2:]
    batch = math.prod(a[:-2])
    out = provider.alloc(kernel.size * item)
    work = provider.alloc(max(batch * m * n, 1) * item)
    try:
        load(work, N=batch * m * n, R=m, C=n, BS=m * n, LD=n, COFF=0, LOWER=0, FLAG=0xFFFFFFFF)
        flag = batch * per
        provider.dispatch(prep_source(_WGSL[dt.name]), _u32(0, 1, flag), [out], 1)
        provider.dispatch(source, _u32(batch, per, flag, trans), [work, out], batch)
        return [out]
    finally:
        provider.free(work)          # back to the pool once the pass is submitted


def enqueue_syevj(provider: Any, kernel: Kernel, in_handles: list[Any], load: Any) -> list[Any]:
    """``linalg_syevj`` of ``kernel`` (``load(work, **extras)`` copies the operand, contiguous)."""
    n = kernel.instrs[kernel.operands[0]].shape[-1]
    (vectors,) = kernel.attrs
    t = _WGSL[kernel.out_nodes[0].dtype.name]
    a = kernel.instrs[kernel.operands[0]].shape
    one = one_matrix_threads(provider, t, n) if vectors and math.prod(a[:-2]) == 1 else None
    if one is not None:             # a single matrix: the one-sided kernel (half the work a step, no V)
        source = jacobi1_source(t, n, one)
    else:
        source = jacobi_source(t, n, bool(vectors), v_shared(provider, t, n),
                               threads_for(n, min(_invocations(provider), THREAD_CAP)))
    return _stack(provider, kernel, load, source, (n + 1) * n if vectors else n)


def _u32(*vals: int) -> np.ndarray:
    return np.array(vals, dtype=np.uint32)


def svd_fits(provider: Any, t: str, m: int, n: int) -> bool:
    """Whether ``svdj_source`` takes ``m x n`` matrices on ``provider`` (``B`` and ``V`` in workgroup
    memory, at most ``MAX_N`` columns of the working matrix)."""
    mm, nn = max(m, n), min(m, n)
    item = 4 if t == "f32" else 8
    return 0 < nn <= MAX_N and svdj_smem(mm, nn, item) <= _smem(provider)


def gesvj_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    """Why the device cannot run this ``linalg_gesvj`` kernel (None: it can)."""
    dt = kernel.out_nodes[0].dtype
    if dt.name not in _WGSL:
        return f"no WGSL svd for {dt}; it runs on the host"
    m, n = kernel.instrs[kernel.operands[0]].shape[-2:]
    if not svd_fits(provider, _WGSL[dt.name], m, n):
        return f"one-sided Jacobi svd of {m} x {n} matrices does not fit this adapter's workgroup memory"
    return None


def enqueue_gesvj(provider: Any, kernel: Kernel, in_handles: list[Any], load: Any) -> list[Any]:
    """``linalg_gesvj`` of ``kernel``: ``[U | S | Vh]`` (reduced) or ``S`` per matrix, then the flag."""
    m, n = kernel.instrs[kernel.operands[0]].shape[-2:]
    (vectors,) = kernel.attrs
    k = min(m, n)
    source = svdj_source(_WGSL[kernel.out_nodes[0].dtype.name], max(m, n), k, bool(vectors))
    return _stack(provider, kernel, load, source, m * k + k + k * n if vectors else k, int(m < n))
