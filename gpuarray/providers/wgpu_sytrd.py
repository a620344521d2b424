"""``linalg_syevb`` on the wgpu provider: eigenvalues of real symmetric matrices of any size by
Householder reduction to tridiagonal form and bisection, all on the device (MAGMA's ``ssytrd`` /
``sstebz`` path without the host).

The operand is copied into a work matrix and its lower triangle mirrored (``sym_source``). Per panel
of ``NB`` (32) columns at ``k0`` (``dlatrd``): for each column ``k`` one dispatch of ``prep_source``
(``W``'s column of ``k - 1`` completed, column ``k`` updated, partial norms and products) and one of
``symvw_source`` (the reflector, ``y = A22 v`` over the trailing matrix as it was at the panel's
start and ``W``'s column before its last correction), both over many workgroups; at the panel's end
a ``prep_source`` that only completes the last column, then the trailing update ``A22 - V W^T -
W V^T`` as one product of the matmul provider (a synthetic ``matmul`` kernel over two views of the
``[V | W | V]`` panel buffer, its epilogue subtracting from a view of the current trailing matrix)
into a fresh buffer, the next panel's ``A`` (two buffers alternate, the same every call).
``stebz_source`` then bisects every eigenvalue of the tridiagonal matrices. ``2 n + n / NB + 3``
dispatches (and the products').
The result per matrix is the ``n`` eigenvalues ascending, then one flag after the last matrix
(LAPACK takes matrices whose reduction met values that are not finite or underflowing columns).
With attrs ``(True,)`` (``eigh``'s reduction, ``linalg/tridiag.py``'s ``reduce``) there is no bisection:
after each panel ``vcopy_source`` copies its reflectors out, and the result per matrix is ``[d | e |
tau | V]`` (``3 n + n * n``; ``V`` row-major, column ``k`` the reflector of step ``k``), the flag after
the last matrix (``n / NB`` more dispatches, one fewer).

>>> from gpuarray.render.wgsl_sytrd import NB
>>> NB
32
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compiler.kernel import Instr, Kernel, Result
from ..core.dtypes import STORAGE_NP
from ..render.wgsl import WORKGROUP
from ..render.wgsl_stebz import stebz_source
from ..render.wgsl_sytrd import NB, PR, PS, RW, VS, prep_source, sym_source, symvw_source, vcopy_source
from . import wgpu_matmul
from .wgpu_linalg_blocked import _cdiv, _pad4, _u32, binding_overflow, cpu_adapter

_WGSL = {"float32": "f32", "float64": "f64"}
# lavapipe ends an invocation's loops after 65535 iterations in all: stebz_source counts n a point for
# ROUNDS (10 in float64) rounds
CPU_MAX_N = 4096


def syr2k_kernel(dt: np.dtype, batch: int, m: int, vsize: int, vbs: int, voff: int, ssize: int, sld: int,
                 sbs: int, soff: int) -> Kernel:
    """The ``matmul`` kernel ``S - [V | W] @ [W | V]^T`` (``S - V W^T - W V^T``): ``[V | W]`` and
    ``[W | V]`` are views of the ``[V | W | V]`` buffer (input 0: ``vsize`` elements, matrix stride
    ``vbs``, row ``voff / VS`` first), ``S`` the ``(batch, m, m)`` view of input 1 (row stride ``sld``,
    matrix stride ``sbs``, offset ``soff``).

    >>> k = syr2k_kernel(np.dtype(np.float32), 1, 8, 960, 960, 192, 100, 10, 100, 22)
    >>> k.kind, k.out_shape, k.operands
    ('matmul', (1, 8, 8), [1, 2])
    """
    shp = (batch, m, m)
    instrs = [Instr("input", (), dt, (vsize,), (0,)),
              Instr("view", (0,), dt, (batch, m, 2 * NB), ((vbs, VS, 1), voff)),
              Instr("view", (0,), dt, (batch, 2 * NB, m), ((vbs, 1, VS), voff + NB)),
              Instr("result", (), dt, shp, ()),
              Instr("input", (), dt, (ssize,), (1,)),
              Instr("view", (4,), dt, shp, ((sbs, sld, 1), soff)),
              Instr("subtract", (5, 3), dt, shp, ())]
    return Kernel(instrs, [Result(dt, (vsize,)), Result(dt, (ssize,))], [6], [Result(dt, shp)], shp,
                  kind="matmul", operands=[1, 2])


def _sizes(kernel: Kernel) -> tuple[int, int]:
    a = tuple(kernel.instrs[kernel.operands[0]].shape)
    return math.prod(a[:-2]), a[-1]


def syevb_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    """Why the device cannot run this ``linalg_syevb`` kernel (None: it can)."""
    dt = kernel.out_nodes[0].dtype
    if dt.name not in _WGSL:
        return f"no WGSL tridiagonal reduction for {dt}; it runs on the host"
    batch, n = _sizes(kernel)
    item = STORAGE_NP[dt].itemsize
    why = binding_overflow(provider, "eigvalsh", [("work matrix", batch * n * n * item),
                                                  ("panel buffer", batch * n * VS * item)])
    if why is None and not kernel.attrs[0] and cpu_adapter(provider) and n > CPU_MAX_N:
        return f"bisection of more than {CPU_MAX_N} eigenvalues exceeds a CPU adapter's loop limit"
    return why


def enqueue_syevb(provider: Any, kernel: Kernel, in_handles: list[Any], load: Any) -> list[Any]:
    """``linalg_syevb`` of ``kernel`` (``load(work, **extras)`` copies the operand into ``work``)."""
    reduced = bool(kernel.attrs[0])
    dt = kernel.out_nodes[0].dtype
    t = _WGSL[dt.name]
    item = STORAGE_NP[dt].itemsize
    batch, n = _sizes(kernel)
    count = batch * n * n
    out = provider.alloc(_pad4(kernel.size) * item)
    work = provider.alloc(_pad4(count) * item)
    vsize = _pad4(batch * n * VS)
    vw = provider.alloc(vsize * item)
    yv = provider.alloc(_pad4(batch * 2 * n) * item)
    tdflag = batch * 3 * n
    td = provider.alloc(_pad4(tdflag + 1) * item)
    rw = RW[t]
    pp = provider.alloc(_pad4(batch * (_cdiv(n, PR) * PS + _cdiv(n, rw))) * item)
    spare = provider.alloc(_pad4(batch * (n - NB) ** 2) * item) if n > NB else None
    try:
        load(work, N=count, R=n, C=n, BS=n * n, LD=n, COFF=0, LOWER=0, FLAG=0xFFFFFFFF)
        provider.dispatch(sym_source(t), _u32(count, n, tdflag), [work, td], _cdiv(count, WORKGROUP))
        bufs = [work, spare]
        sizes = [_pad4(count), _pad4(batch * (n - NB) ** 2)]
        cur, org, sld, sbs = 0, 0, n, n * n
        prep, symvw = prep_source(t), symvw_source(t)
        for k0 in range(0, n, NB):
            kend = min(k0 + NB, n)
            for k in range(k0, kend):
                g1, g2 = _cdiv(n - k, PR), max(1, _cdiv(n - k - 1, rw))
                bound = [bufs[cur], vw, yv, td, pp]
                provider.dispatch(prep, _u32(n, k, k0, org, sld, sbs, g1, batch * g1, int(k > k0), 1), bound,
                                  batch * g1)
                provider.dispatch(symvw, _u32(n, k, k0, org, sld, sbs, g1, g2, batch * g2, tdflag), bound,
                                  batch * g2)
            if reduced:              # the panel's reflectors, before the next panel's overwrite them
                cnt = batch * n * NB
                provider.dispatch(vcopy_source(t), _u32(n, k0, cnt, 3 * n + n * n, kernel.size - 1, tdflag),
                                  [vw, td, out], _cdiv(cnt, WORKGROUP))
            if kend < n:
                g1 = _cdiv(n - kend, PR)
                provider.dispatch(prep, _u32(n, kend, k0, org, sld, sbs, g1, batch * g1, 1, 0),
                                  [bufs[cur], vw, yv, td, pp], batch * g1)
                m = n - kend
                upd = syr2k_kernel(dt, batch, m, vsize, n * VS, kend * VS, sizes[cur], sld, sbs,
                                   (kend - org) * sld + kend - org)
                wgpu_matmul.enqueue_matmul(provider, upd, [vw, bufs[cur]], outs=[bufs[1 - cur]])
                cur, org, sld, sbs = 1 - cur, kend, m, m * m
            provider.submit_early()      # the GPU starts while the rest is recorded
        if not reduced:
            total = batch * n
            provider.dispatch(stebz_source(t), _u32(n, total, tdflag, total), [td, out], total)
        return [out]
    finally:
        for h in (work, vw, yv, td, pp, spare):
            if h is not None:
                provider.free(h)         # back to the pool once the pass is submitted
