"""``linalg_potrf`` (Cholesky) and ``linalg_lu`` (LU with partial pivoting: solve, inv, det,
slogdet) on the wgpu provider: blocked, right-looking, in place, every dispatch in the open pass.

Cholesky goes by block columns of 64 whose trailing updates
are the matmul provider's register-blocked products (``wgpu_linalg_blocked.enqueue_potrf_blocked``;
``2 + 2 n / 64`` dispatches; narrower ones as one block, ``panel_layout``). With
``wgpu_linalg_blocked.SMALL_CHOLESKY`` off matrices of at most 32 rows, and every size with
``BLOCKED_CHOLESKY`` off, are factored into the output
buffer itself (``B n^2`` factors, then the error flag): the operand copied in with zeros above the
diagonal, then per block column of ``NB``: one dispatch factoring the diagonal block and solving
the first 256 rows of the panel below, one solving the rest against the stored block
(``potrf_source``), one trailing update ``A22 -= L21 L21^T`` over the lower 64 x 64 tiles
(``gemm_source``): about ``3 n / NB`` dispatches (H200, n = 4096 float32: 377 dispatches, 24.2 ms
against cuSOLVER's 1.83).

LU works on the augmented ``[A | B]`` (``B``: the right-hand sides, the identity for ``inv``, nothing for
``det``) in a scratch buffer with the pivots in another, so that the forward substitution is the
factorization's own row operations: per panel, its factorization by one workgroup a matrix
(``wgpu_linalg_blocked.dispatch_lu_panel``: ``lu_panel_reg_source`` of ``render/wgsl_lu_panel.py`` with its
rows in named registers where a thread has at most 4, else ``lu_panel_source`` of
``render/wgsl_linalg_blocked.py``; ``panel_source``, a pass over the panel a column, for panels of more than
``MAX_ROWS`` rows or with ``BLOCKED_LU_PANEL`` off: 207 ms for n = 4096 float32 with 16 right-hand sides on
the H200, against cuSOLVER's 13.6; 59 ms with the register panel; panels of ``solve`` and ``inv`` of at least
``wgpu_lu_mw.MIN_ROWS`` rows over several workgroups on GPU adapters, ``wgpu_lu_mw``: 15.0 -> 11.2 ms for
float64 2048), the swaps on every other column with ``U12 = L11^-1 A12`` (``swap_trsm_source``), the trailing
update ``A22 -= L21 U12`` over the right-hand sides too (``gemm_source``); then back substitution by block
rows of ``NB`` from the bottom (``backsub_source``), or the determinant from the diagonal (``det_source``).
``solve`` and ``inv`` of matrices of at most 32 rows whose ``[A | B]`` fits in workgroup memory take one
dispatch of ``lu_small_source`` after the loads instead (``wgpu_linalg_blocked.small_lu``). The flag (an
exactly zero pivot, a pivot of Cholesky that is not positive) is the last element of the output, which
``gpuarray.linalg.lu`` reads once.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP
from ..render.wgsl import WORKGROUP
from ..render.wgsl_linalg import (
    NB,
    NONE,
    TILE,
    backsub_source,
    det_source,
    eye_source,
    gemm_source,
    panel_source,
    potrf_source,
    render_load,
    swap_trsm_source,
)
from ..render.wgsl_linalg_blocked import MAX_ROWS
from . import wgpu_eigh, wgpu_hqr, wgpu_laed4, wgpu_linalg_blocked, wgpu_lu_mw, wgpu_qr, wgpu_sytrd
from .wgpu_bindings import wide_buffers

_WGSL = {"float32": "f32", "float64": "f64"}


def _u32(*vals: int) -> np.ndarray:
    return np.array(vals, dtype=np.uint32)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _shape(kernel: Kernel, which: int) -> tuple[int, ...]:
    return tuple(kernel.instrs[kernel.operands[which]].shape)


def linalg_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    """Why the device cannot run this ``linalg_potrf`` / ``linalg_lu`` kernel (None: it can)."""
    dt = kernel.out_nodes[0].dtype
    if dt.name not in _WGSL:
        return f"no WGSL {kernel.kind} for {dt}; it runs on the host"
    a = _shape(kernel, 0)
    n = a[-1]
    nrhs = _shape(kernel, 1)[-1] if len(kernel.operands) > 1 else n if kernel.attrs == ("inv",) else 0
    nbytes = (math.prod(a[:-2]) * n * (n + nrhs) + 1) * STORAGE_NP[dt].itemsize
    if nbytes > provider.max_binding:
        return f"the work matrix of {nbytes} bytes exceeds the adapter's storage binding limit {provider.max_binding}"
    return None


def _load(provider: Any, kernel: Kernel, in_handles: list[Any], which: int, work: Any, **extra: int) -> None:
    """Dispatch ``render_load`` for operand ``which`` into ``work``."""
    r = provider.rendered_for(kernel, render_load, which)
    wide = wide_buffers(provider, r, kernel)
    provider.dispatch(r.source, r.meta(kernel, extra), [*in_handles, work, *wide], max(1, _cdiv(extra["N"], WORKGROUP)))


def _gemm(provider: Any, t: str, work: Any, ld: int, r0: int, rend: int, c0: int, cend: int, kc: int, w: int,
          bs: int, batch: int, trans: int) -> None:
    """``W[r0:rend, c0:cend] -= W[r0:rend, kc:kc+w] @ B`` for every matrix (``gemm_source``)."""
    if rend <= r0 or cend <= c0 or w == 0:
        return
    tm, tn = _cdiv(rend - r0, TILE), _cdiv(cend - c0, TILE)
    groups = batch * tm * tn
    provider.dispatch(gemm_source(t), _u32(ld, r0, rend, c0, cend, kc, w, bs, tm, tn, trans, trans, groups),
                      [work], groups)


def enqueue_potrf(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    if wgpu_linalg_blocked.BLOCKED_CHOLESKY and (wgpu_linalg_blocked.SMALL_CHOLESKY or _shape(kernel, 0)[-1] > NB):
        return wgpu_linalg_blocked.enqueue_potrf_blocked(
            provider, kernel, lambda work, **extra: _load(provider, kernel, in_handles, 0, work, **extra), in_handles)
    dt = kernel.out_nodes[0].dtype
    t = _WGSL[dt.name]
    a = _shape(kernel, 0)
    n, batch = a[-1], math.prod(a[:-2])
    out = provider.alloc(kernel.size * STORAGE_NP[dt].itemsize)
    flag = batch * n * n
    _load(provider, kernel, in_handles, 0, out, N=flag, R=n, C=n, BS=n * n, LD=n, COFF=0, LOWER=1, FLAG=flag)
    if flag == 0:
        return [out]
    for k in range(0, n, NB):
        w = min(NB, n - k)
        g = _cdiv(n - k - w, WORKGROUP) - 1          # workgroups a matrix past the first
        provider.dispatch(potrf_source(t), _u32(n, k, w, 1, flag, batch, 0, 0), [out], batch)
        if g > 0:
            provider.dispatch(potrf_source(t), _u32(n, k, w, g, flag, batch * g, 1, 1), [out], batch * g)
        _gemm(provider, t, out, n, k + w, n, k + w, n, k, w, n * n, batch, 1)
    return [out]


def enqueue_lu(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    mode = kernel.attrs[0]        # attrs[1:] == ("single",): one workgroup a panel (wgpu_lu_mw's fallback)
    dt = kernel.out_nodes[0].dtype
    t = _WGSL[dt.name]
    item = STORAGE_NP[dt].itemsize
    a = _shape(kernel, 0)
    n, batch = a[-1], math.prod(a[:-2])
    nrhs = _shape(kernel, 1)[-1] if mode == "solve" else n if mode == "inv" else 0
    ld, ncols = n + nrhs, n + nrhs
    bs = n * ld
    flagw = batch * bs
    out = provider.alloc(kernel.size * item)
    work = provider.alloc((flagw + 1) * item)
    piv = provider.alloc(max(batch * n, 1) * 4)
    xbuf: Any = None
    try:
        _load(provider, kernel, in_handles, 0, work, N=batch * n * n, R=n, C=n, BS=bs, LD=ld, COFF=0, LOWER=0,
              FLAG=flagw)
        if mode == "solve":
            _load(provider, kernel, in_handles, 1, work, N=batch * n * nrhs, R=n, C=nrhs, BS=bs, LD=ld, COFF=n,
                  LOWER=0, FLAG=NONE)
        elif mode == "inv" and batch * n:
            count = batch * n * n
            provider.dispatch(eye_source(t), _u32(count, n, ld, bs, n), [work], _cdiv(count, WORKGROUP))
        if batch * n == 0:
            if mode in ("solve", "inv"):
                rest = kernel.size - 1
                _load(provider, kernel, in_handles, 0, out, N=0, R=1, C=1, BS=0, LD=0, COFF=0, LOWER=0, FLAG=rest)
            return [out]
        if mode in ("solve", "inv") and wgpu_linalg_blocked.small_lu(provider, t, work, out, n, ld, bs, nrhs, batch,
                                                                    kernel.size - 1):
            return [out]
        # det and slogdet without a flag after their values (gpuarray.linalg.lu reads none) keep one workgroup
        flagged = mode in ("solve", "inv") or kernel.size == (1 if mode == "det" else 2) * batch + 1
        mw = flagged and len(kernel.attrs) == 1 and wgpu_lu_mw.groups(provider, n, n, batch)
        xbuf, xs = wgpu_lu_mw.exchange(provider, t, n, batch) if mw else (None, 0)
        for k in range(0, n, NB):
            w = min(NB, n - k)
            p = wgpu_lu_mw.groups(provider, n - k, n, batch) if mw else 0
            if p:
                wgpu_lu_mw.dispatch_panel(provider, t, [n, ld, k, w, bs, flagw], [work, piv, xbuf], batch, p, xs)
            elif wgpu_linalg_blocked.BLOCKED_LU_PANEL and n - k <= MAX_ROWS:
                wgpu_linalg_blocked.dispatch_lu_panel(provider, t, item, n - k, _u32(n, ld, k, w, bs, flagw),
                                                      [work, piv], batch)
            else:
                provider.dispatch(panel_source(t), _u32(n, ld, k, w, bs, flagw), [work, piv], batch)
            g = _cdiv(ncols - w, WORKGROUP)
            if g:
                provider.dispatch(swap_trsm_source(t), _u32(n, ld, k, w, bs, ncols, g, batch * g), [work, piv],
                                  batch * g)
            _gemm(provider, t, work, ld, k + w, n, k + w, ncols, k, w, bs, batch, 0)
            provider.submit_early()      # the GPU starts while the rest is recorded
        if mw:
            wgpu_lu_mw.fold(provider, t, work, xbuf, batch, xs, flagw)
        if mode in ("det", "slogdet"):
            prm = _u32(n, ld, bs, int(mode == "slogdet"), batch, flagw, kernel.size - 1 if flagged else NONE)
            provider.dispatch(det_source(t), prm, [work, piv, out], batch)
            return [out]
        cc = _cdiv(nrhs, TILE)
        for r0 in reversed(range(0, n, NB)):
            w = min(NB, n - r0)
            rc = max(1, _cdiv(r0, TILE))
            groups = batch * rc * cc
            prm = _u32(n, ld, r0, w, bs, nrhs, rc, cc, n * nrhs, flagw, kernel.size - 1, int(r0 == 0), groups)
            provider.dispatch(backsub_source(t), prm, [work, out], groups)
        return [out]
    finally:
        provider.free(work)          # back to the pool once the pass is submitted
        provider.free(piv)
        if xbuf is not None:
            provider.free(xbuf)


def enqueue_geqrf(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """``linalg_geqrf``: Householder QR (``wgpu_qr.enqueue_geqrf``) after the operand's load."""
    return wgpu_qr.enqueue_geqrf(provider, kernel, in_handles,
                                 lambda work, **extra: _load(provider, kernel, in_handles, 0, work, **extra))


def enqueue_syevj(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """``linalg_syevj``: Jacobi eigh of small matrices (``wgpu_eigh.enqueue_syevj``) after the load."""
    return wgpu_eigh.enqueue_syevj(provider, kernel, in_handles,
                                   lambda work, **extra: _load(provider, kernel, in_handles, 0, work, **extra))


def enqueue_syevb(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """``linalg_syevb``: eigenvalues by tridiagonal reduction and bisection (``wgpu_sytrd``) after the load."""
    return wgpu_sytrd.enqueue_syevb(provider, kernel, in_handles,
                                    lambda work, **extra: _load(provider, kernel, in_handles, 0, work, **extra))


def enqueue_gesvj(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """``linalg_gesvj``: one-sided Jacobi svd of small matrices (``wgpu_eigh.enqueue_gesvj``)."""
    return wgpu_eigh.enqueue_gesvj(provider, kernel, in_handles,
                                   lambda work, **extra: _load(provider, kernel, in_handles, 0, work, **extra))


def enqueue_hqr(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """``linalg_hqr``: eigenvalues of small matrices (``wgpu_hqr.enqueue_hqr``) after the load."""
    return wgpu_hqr.enqueue_hqr(provider, kernel, in_handles,
                                lambda work, **extra: _load(provider, kernel, in_handles, 0, work, **extra))


def enqueue_laed4(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    """``linalg_laed4``: a divide-and-conquer level's merges (``wgpu_laed4.enqueue_laed4``) after the load."""
    return wgpu_laed4.enqueue_laed4(provider, kernel, in_handles,
                                    lambda work, **extra: _load(provider, kernel, in_handles, 0, work, **extra))
