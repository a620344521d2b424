"""LU panels over several workgroups on the wgpu provider (``render/wgsl_lu_mw.py`` has the kernel).

``enqueue_lu`` (``wgpu_linalg.py``) asks :func:`exchange` once a factorization for the exchange words
(zeroed by one dispatch; ``solve``, ``inv``, and ``det`` and ``slogdet`` given a flag slot after their
values), then :func:`groups` per panel: panels of at least ``MIN_ROWS`` rows go to
``P = ceil(rows / THREADS)`` workgroups a matrix (:func:`dispatch_panel`), smaller ones to the one
workgroup kernels of ``wgpu_linalg_blocked``; after the last panel :func:`fold` turns a wait that gave
up into the error flag's value 2 (``gpuarray.linalg.lu`` then factors again with ``single``).

The workgroups of a panel wait on each other, so they must run at once: the path is taken on GPU
adapters with subgroups, for at most ``MAX_GROUPS`` workgroups a dispatch; CPU adapters (lavapipe
runs workgroups a few at a time) keep the one-workgroup panels unless ``CPU`` is set (the tests do,
with one workgroup a panel, or with a short ``SPIN_LIMIT`` to take the fallback).

>>> groups(type("P", (), {"features": ()})(), 4096, 4096, 1) == 0   # no subgroups: off
True
"""

from __future__ import annotations

import os
from typing import Any

from ..render.wgsl import WORKGROUP
from ..render.wgsl_lu_mw import layout, lu_mw_fold_source, lu_mw_panel_source
from ..render.wgsl_scan_lookback import CLEAR
from .wgpu_linalg_blocked import _u32, cpu_adapter
from .wgpu_reduce import use_subgroups

# GPUARRAY_LU_MW=0: every LU panel by one workgroup a matrix (wgpu_linalg_blocked.dispatch_lu_panel)
ENABLED = os.environ.get("GPUARRAY_LU_MW", "1") != "0"
THREADS = int(os.environ.get("GPUARRAY_LU_MW_THREADS", "128"))      # rows (threads) a workgroup
MIN_ROWS = int(os.environ.get("GPUARRAY_LU_MW_MIN_ROWS", "256"))    # smaller panels: one workgroup
MAX_GROUPS = 64         # workgroups of one dispatch (all of a batch's matrices), at most
MAX_N = 65534           # the exchange words' 16-bit tags number the columns
SPIN_LIMIT = 1 << 16    # reads of an exchange word before a wait gives up
CPU = False             # the path on CPU adapters too (tests)


def groups(provider: Any, rows: int, n: int, batch: int) -> int:
    """Workgroups a matrix for an LU panel of ``rows`` rows of ``n x n`` matrices (0: one-workgroup
    kernels instead)."""
    if not ENABLED or n > MAX_N or rows < MIN_ROWS or not use_subgroups(provider):
        return 0
    if cpu_adapter(provider) and not CPU:
        return 0
    lim = int(provider.limits.get("max-compute-invocations-per-workgroup", 256))
    p = -(-rows // THREADS)
    return p if THREADS <= lim and p * batch <= MAX_GROUPS else 0


def exchange(provider: Any, t: str, n: int, batch: int) -> tuple[Any, int]:
    """(buffer, words a matrix) of the exchange words for panels of up to ``n`` rows, zeroed."""
    xs = 1 + 2 * layout(t, -(-n // THREADS))[2]
    buf = provider.alloc(batch * xs * 4)
    count = batch * xs
    provider.dispatch(CLEAR, _u32(count), [buf], -(-count // WORKGROUP))      # the look-back scan's zeroing
    return buf, xs


def dispatch_panel(provider: Any, t: str, prm: list[int], buffers: list[Any], batch: int, p: int, xs: int) -> None:
    """The panel of ``prm`` = [n, ld, k, w, bs, FLAG] by ``p`` workgroups a matrix; ``buffers``: the
    work buffer, the pivots, the exchange words (``xs`` a matrix)."""
    provider.dispatch(lu_mw_panel_source(t, THREADS), _u32(*prm, p, xs, SPIN_LIMIT), buffers, batch * p)


def fold(provider: Any, t: str, work: Any, buf: Any, batch: int, xs: int, flag: int) -> None:
    """The error flag ``flag`` of ``work`` set to 2 where a panel's wait gave up."""
    provider.dispatch(lu_mw_fold_source(t), _u32(batch, xs, flag), [work, buf], 1)
