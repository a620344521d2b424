"""``linalg_geqrf`` on the wgpu provider: blocked Householder QR, every panel and update a dispatch
of one evaluation (MAGMA's ``sgeqrf`` / ``sorgqr`` without the host).

The operand is copied into a work matrix ``W`` (``m x n`` each, the flag after them); per panel of
``QB`` (32) columns at ``c0``: ``qr_panel_source`` factors it in place by one workgroup a matrix
(the reflectors ``V`` written out with their unit diagonal, and ``T``), then the trailing columns
``C = W[c0:, c0 + w:]`` take the block reflector: ``U = V T`` and ``Y = U^T C`` by the matmul
provider (synthetic ``matmul`` kernels whose operands are views: ``Y``'s class, split-K for long
columns, is the dispatcher's), and ``C -= V Y`` in place (``larfb_source``). ``Q`` is then formed
in the result itself, backwards (``dorgqr``): ``Q = I``, and per panel from the last
``Q[c0:, c0:] -= V (T V^T Q[c0:, c0:])`` the same way (``U = V T^T``). Last, ``R`` (the upper
triangle of ``W``) and the flag are copied after ``Q``. The result per matrix is ``[Q | R]``
(``m x kq`` and ``kq x n``, ``kq = min(m, n)``, or ``m`` for ``mode="complete"``), the flag after
the last matrix.

>>> from gpuarray.render.wgsl_qr import QB
>>> QB
32
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..compiler.kernel import Instr, Kernel, Result
from ..core.dtypes import STORAGE_NP
from ..render.wgsl import WORKGROUP
from ..render.wgsl_qr import (
    LT,
    QB,
    col_smem,
    larfb_source,
    panel_smem,
    qr_col_source,
    qr_copy_r_source,
    qr_init_source,
    qr_panel_source,
)
from . import wgpu_matmul
from .wgpu_linalg_blocked import _cdiv, _pad4, _u32, binding_overflow, cpu_adapter

_WGSL = {"float32": "f32", "float64": "f64"}
PANEL_THREADS = 1024    # threads of qr_panel_source where the adapter allows them
COL_PANEL = True        # False: every panel by qr_panel_source (one workgroup a matrix)
# panels of more rows take qr_col_source; H200, GPU ms of qr f32 4096 with 1024 / 1536 / 2048: 134 /
# 125 / 128 (every panel by qr_panel_source: 180); f64 2048 with 512 / 1024: 46.2 / 45.0 (54.5)
COL_MIN_ROWS = {"f32": 1536, "f64": 1024}
CPU_MAX_ROWS = 16384    # lavapipe ends an invocation's loops after 65535 iterations: 2 a column a row group


class View(NamedTuple):
    """A ``(batch, rows, cols)`` view of a flat buffer of ``size`` elements: strides and offset."""
    size: int
    rows: int
    cols: int
    strides: tuple[int, int, int]
    offset: int








def product_kernel(dt: np.dtype, batch: int, a: View, b: View) -> Kernel:
    """The plain ``matmul`` kernel ``A @ B`` of two views (sizes and strides are run-time values).

    >>> f = np.dtype(np.float32)
    >>> k = product_kernel(f, 2, View(64, 4, 2, (8, 2, 1), 0), View(32, 2, 3, (6, 3, 1), 0))
    >>> k.out_shape, k.operands
    ((2, 4, 3), [1, 3])
    """
    shp = (batch, a.rows, b.cols)
    instrs = [Instr("input", (), dt, (a.size,), (0,)),
              Instr("view", (0,), dt, (batch, a.rows, a.cols), (a.strides, a.offset)),
              Instr("input", (), dt, (b.size,), (1,)),
              Instr("view", (2,), dt, (batch, b.rows, b.cols), (b.strides, b.offset))]
    return Kernel(instrs, [Result(dt, (a.size,)), Result(dt, (b.size,))], [], [Result(dt, shp)], shp,
                  kind="matmul", operands=[1, 3])


def _product(provider: Any, dt: np.dtype, batch: int, a: View, ha: Any, b: View, hb: Any, out: Any) -> None:
    wgpu_matmul.enqueue_matmul(provider, product_kernel(dt, batch, a, b), [ha, hb], outs=[out])


def panel_threads(provider: Any, t: str, rows: int) -> int:
    """Threads of ``qr_panel_source`` for panels of ``rows`` rows on ``provider``: ``PANEL_THREADS``
    (32 rows at a time) within the adapter's limits, fewer (at least 64) for short panels."""
    item = 4 if t == "f32" else 8
    lim = int(provider.limits.get("max-compute-invocations-per-workgroup", 256))
    smem = int(provider.limits.get("max-compute-workgroup-storage-size", 16384))
    threads = PANEL_THREADS
    while threads > 64 and (threads > lim or panel_smem(threads, item) > smem or threads > 32 * max(rows, 2)):
        threads //= 2
    return threads


def col_layout(provider: Any, t: str) -> tuple[int, int]:
    """(rows, threads) of a workgroup of ``qr_col_source`` on ``provider``: the most rows (256 down
    to 32), then the most threads (1024 down to 256, at most 32 a row) whose workgroup memory
    fits. Panels of more rows than that take it, the others ``qr_panel_source``.

    >>> class _P: limits = {"max-compute-workgroup-storage-size": 49152,
    ...                     "max-compute-invocations-per-workgroup": 1024}
    >>> col_layout(_P(), "f32"), col_layout(_P(), "f64")
    ((256, 1024), (128, 512))
    """
    item = 4 if t == "f32" else 8
    smem = int(provider.limits.get("max-compute-workgroup-storage-size", 16384))
    lim = int(provider.limits.get("max-compute-invocations-per-workgroup", 256))
    for rb in (256, 128, 64, 32):
        for th in (1024, 512, 256):
            if th <= lim and th <= 32 * rb and col_smem(rb, item, th) <= smem:
                return rb, th
    return 32, 256


def _sizes(kernel: Kernel) -> tuple[int, int, int, int, int, int]:
    a = tuple(kernel.instrs[kernel.operands[0]].shape)
    m, n = a[-2:]
    kk = min(m, n)
    kq = m if kernel.attrs == ("complete",) else kk
    return math.prod(a[:-2]), m, n, kk, kq, m * kq + kq * n


def geqrf_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    """Why the device cannot run this ``linalg_geqrf`` kernel (None: it can)."""
    dt = kernel.out_nodes[0].dtype
    if dt.name not in _WGSL:
        return f"no WGSL QR for {dt}; it runs on the host"
    batch, m, n, kk, kq, per = _sizes(kernel)
    item = STORAGE_NP[dt].itemsize
    parts = (("work matrix", batch * m * n + 1), ("result", batch * per + 1), ("reflector matrix", batch * m * kk),
             ("triangular factors", batch * -(-kk // QB) * min(QB, kk) ** 2))
    why = binding_overflow(provider, "QR", [(what, count * item) for what, count in parts])
    if why is None and cpu_adapter(provider) and m > CPU_MAX_ROWS:
        return f"QR panels of more than {CPU_MAX_ROWS} rows exceed a CPU adapter's loop limit"
    return why


def _update(provider: Any, dt: np.dtype, t: str, batch: int, v: View, hv: Any, tview: View, ht: Any,
            c: View, hc: Any, hu: Any, hy: Any) -> None:
    """``C -= V (U^T C)`` for every matrix: ``U = V T'`` and ``Y = U^T C`` by the matmul provider,
    then ``larfb_source`` in place (``T'``: ``T`` for the factorization, ``T^T`` for ``Q``, as
    ``tview`` reads it)."""
    w = v.cols
    _product(provider, dt, batch, v, hv, tview, ht, hu)
    ut = View(batch * v.rows * w, w, v.rows, (v.rows * w, 1, w), 0)
    _product(provider, dt, batch, ut, hu, c, hc, hy)
    tm, tn = _cdiv(c.rows, LT), _cdiv(c.cols, LT)
    groups = batch * tm * tn
    prm = _u32(c.rows, c.cols, w, c.strides[1], c.strides[0], c.offset, v.strides[1], v.strides[0], v.offset,
               tm, tn, groups)
    provider.dispatch(larfb_source(t), prm, [hc, hv, hy], groups)


def enqueue_geqrf(provider: Any, kernel: Kernel, in_handles: list[Any], load: Any) -> list[Any]:
    """``linalg_geqrf`` of ``kernel`` (``load(work, **extras)`` copies the operand into ``work``)."""
    dt = kernel.out_nodes[0].dtype
    t = _WGSL[dt.name]
    item = STORAGE_NP[dt].itemsize
    batch, m, n, kk, kq, per = _sizes(kernel)
    wsize, vsize = _pad4(batch * m * n + 1), _pad4(batch * m * kk)
    npan = _cdiv(kk, QB)
    out = provider.alloc(_pad4(kernel.size) * item)
    work = provider.alloc(wsize * item)
    vbuf = provider.alloc(vsize * item)
    tq = min(QB, kk)
    tsize = _pad4(batch * npan * tq * tq)
    tbuf = provider.alloc(tsize * item)
    pbuf = None
    # U = V T' and Y = U^T C of every panel in the same two buffers (the same bind groups each time)
    hu = provider.alloc(_pad4(batch * m * QB) * item)
    hy = provider.alloc(_pad4(batch * QB * max(n, kq)) * item)
    flag = batch * m * n
    try:
        load(work, N=batch * m * n, R=m, C=n, BS=m * n, LD=n, COFF=0, LOWER=0, FLAG=flag)
        threads = panel_threads(provider, t, m)
        rb, cth = col_layout(provider, t)
        ps = _cdiv(m, rb) * (QB + 1) + QB
        pbuf = provider.alloc(_pad4(2 * batch * ps) * item) if COL_PANEL and m > rb else None
        for p in range(npan):
            c0 = p * QB
            w = min(QB, kk - c0)
            nblk = _cdiv(m - c0, rb)
            if pbuf is not None and nblk > 1 and m - c0 > COL_MIN_ROWS[t]:
                for j in range(-1, w):
                    prm = _u32(m, n, c0, w, m * n, max(j, 0), kk, m * kk, npan * tq * tq, p * tq * tq, tq, nblk,
                               batch * nblk, flag, int(j < 0), ps)
                    provider.dispatch(qr_col_source(t, rb, cth), prm, [work, vbuf, tbuf, pbuf], batch * nblk)
            else:
                provider.dispatch(qr_panel_source(t, threads),
                                  _u32(m, n, c0, w, m * n, p, flag, kk, m * kk, npan * tq * tq, batch, tq),
                                  [work, vbuf, tbuf], batch)
            if c0 + w < n:
                v = View(vsize, m - c0, w, (m * kk, kk, 1), c0 * kk + c0)
                tt = View(tsize, w, w, (npan * tq * tq, tq, 1), p * tq * tq)          # Y = (V T)^T C
                c = View(wsize, m - c0, n - c0 - w, (m * n, n, 1), c0 * n + c0 + w)
                _update(provider, dt, t, batch, v, vbuf, tt, tbuf, c, work, hu, hy)
            provider.submit_early()      # the GPU starts while the rest is recorded
        count = batch * m * kq
        provider.dispatch(qr_init_source(t), _u32(count, m, kq, per), [out], _cdiv(count, WORKGROUP))
        osize = _pad4(kernel.size)
        for p in reversed(range(npan)):
            c0 = p * QB
            w = min(QB, kk - c0)
            v = View(vsize, m - c0, w, (m * kk, kk, 1), c0 * kk + c0)
            tv = View(tsize, w, w, (npan * tq * tq, 1, tq), p * tq * tq)           # Y = (V T^T)^T Q
            q = View(osize, m - c0, kq - c0, (per, kq, 1), c0 * kq + c0)
            _update(provider, dt, t, batch, v, vbuf, tv, tbuf, q, out, hu, hy)
            provider.submit_early()
        count = batch * kq * n
        provider.dispatch(qr_copy_r_source(t), _u32(count, kq, n, m, per, m * kq, flag, batch * per),
                          [work, out], max(1, _cdiv(count, WORKGROUP)))
        return [out]
    finally:
        for h in (work, vbuf, tbuf, pbuf, hu, hy):
            if h is not None:
                provider.free(h)         # back to the pool once the pass is submitted
