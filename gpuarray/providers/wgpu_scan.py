"""Scans (cumulative sum / product, ``maximum`` / ``minimum`` / ``logical_and`` / ``logical_or``
``.accumulate``) on the wgpu provider. The chunk totals of stream compaction (``wgpu_compact.py``)
are this module's ``partial`` kernel.

Four strategies (``render/wgsl_scan.py`` has the kernels, ``render/wgsl_scan_lookback.py`` the last):

- ``serial``: a thread per row, in order. Best where there are many rows and
  the axis is not the last one (neighbouring threads read neighbouring
  elements), for many short rows, and on CPU adapters (lavapipe), where
  workgroup barriers are expensive. One dispatch per ``SERIAL_SEGMENT``
  positions along the axis.
- ``single``: a workgroup per row; one dispatch.
- chunked, when few rows are long: (1) each chunk's total, (2) a scan of those
  totals per row (``spine``), (3) each chunk scanned again, starting from the
  total of the chunks before it. Three dispatches; the prologue runs in 1 and 3.
  Still taken on CPU adapters and along other axes than the last.
- ``lookback`` (``wgpu_scan_lookback.py``), when few rows are long along the last
  axis on a GPU adapter: the single-pass decoupled look-back, one read and one
  write of the data; two dispatches (zero the status words, scan). Not for complex
  products (their state is not among the look-back's published words): they take
  the chunked scan.

Measured on the H200 (float32; ms): cumsum of 4096 x 4096 along axis 0: a
workgroup per row 0.88, serial 0.16; along axis 1: 0.34 and 0.50; 256 x 65536
along axis 0: 0.96 and 0.24; 64 x 262144 along axis 1: 0.65 (chunked) and 60.
On lavapipe, cumsum of 1000 x 1000 along either axis: 190-200 and 20.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..compiler.kernel import Instr, Kernel
from ..core.dtypes import STORAGE_NP
from ..core.ops import folded
from ..render.wgsl import WORKGROUP
from ..render.wgsl_scan import BLOCK, render_scan, state_nbytes
from . import wgpu_scan_lookback
from .wgpu_bindings import wide_buffers
from .wgpu_split import window_inputs

MIN_CHUNK = 8 * BLOCK     # rows up to this long are scanned by one workgroup
MANY_ROWS = 256           # with this many rows, one workgroup per row is enough
TARGET_GROUPS = 1024      # workgroups to aim for when rows are split into chunks
SERIAL_SHORT = (1024, 64)  # (rows, length): at least this many rows this short: serial
SERIAL_STRIDED = 2048     # at least this many rows, axis not last: serial
SERIAL_CPU = 16           # on a CPU adapter, at least this many rows: serial
# Axis positions per serial dispatch. Lavapipe (gallivm) silently ends every loop of an invocation
# once 65535 loop iterations have run in it (all loops together), so a serial scan of a longer row
# is split into dispatches that each continue from the value the previous one wrote.
SERIAL_SEGMENT = 32768
STRATEGY = "auto"         # "auto", or force "serial" / "parallel" / "lookback" (tests use this)
# Rows at least this long take the look-back scan (a tile of vec4 loads and subgroup scans per 4096
# elements, the look-back within each row) however many there are, not a workgroup per row
# (``single``; H200, cumsum of float32 along axis 1: 16384 x 16384 2.57 -> 0.79 ms, PyTorch 1.14;
# 4096 x 4096 0.18 -> 0.085; 65536 x 2048 1.30 -> 0.70)
LOOKBACK_ROW_MIN = 2048


def serial(rows: int, length: int, inner: int, cpu_adapter: bool) -> bool:
    """Whether to scan with one thread per row (see the module docstring)."""
    if STRATEGY != "auto":
        return STRATEGY == "serial"
    if cpu_adapter:
        return rows >= SERIAL_CPU
    return (rows >= SERIAL_SHORT[0] and length <= SERIAL_SHORT[1]) or (inner > 1 and rows >= SERIAL_STRIDED)


def lookback(rows: int, length: int, inner: int, cpu_adapter: bool) -> bool:
    """Whether to scan with the single-pass decoupled look-back (``wgpu_scan_lookback``): rows
    along the last axis, too few and too long for a workgroup per row, or at least
    ``LOOKBACK_ROW_MIN`` long however many, on a GPU adapter (or forced)."""
    if STRATEGY != "auto":
        return STRATEGY == "lookback" and inner == 1
    return wgpu_scan_lookback.LOOKBACK and inner == 1 and not cpu_adapter and (
        chunking(rows, length)[0] > 1 or length >= LOOKBACK_ROW_MIN)


def chunking(rows: int, length: int) -> tuple[int, int]:
    """(G, CH): chunks per row and chunk length (a multiple of BLOCK unless G is 1)."""
    if rows >= MANY_ROWS or length <= MIN_CHUNK:
        return 1, length
    g = max(1, min(math.ceil(length / MIN_CHUNK), TARGET_GROUPS // max(rows, 1)))
    ch = math.ceil(math.ceil(length / g) / BLOCK) * BLOCK
    g = math.ceil(length / ch)
    return (1, length) if g <= 1 else (g, ch)


def _mode(kernel: Kernel, mode: str) -> Kernel:
    """The same kernel in another mode (its own signature, so its own pipeline)."""
    return dataclasses.replace(kernel, attrs=tuple(kernel.attrs[:3]) + (mode,), _sig=None)


def _dispatch(provider: Any, kernel: Kernel, extra: dict[str, int], buffers: list[Any], groups: int) -> None:
    r = provider.rendered_for(kernel, render_scan)
    wide = wide_buffers(provider, r, kernel)
    provider.dispatch(r.source, r.meta(kernel, extra), [*buffers, *wide], groups)


def enqueue_scan(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    kernel, in_handles = window_inputs(provider, kernel, in_handles)     # arrays past one binding
    op, axis, init = kernel.attrs[:3]
    src = kernel.instrs[kernel.operands[0]]
    dt = kernel.out_nodes[0].dtype
    out = provider.alloc(kernel.size * STORAGE_NP[dt].itemsize)
    length = src.shape[axis]
    rows = math.prod(s for d, s in enumerate(src.shape) if d != axis)
    if kernel.size == 0 or rows == 0:
        return [out]
    inner = math.prod(src.shape[axis + 1:])
    li = (length + int(bool(init))) * inner
    adapter = getattr(provider, "adapter", None)
    cpu = adapter is not None and str(adapter.info.get("adapter_type")) == "CPU"
    fold = folded(op) is not None
    if fold or serial(rows, length, inner, cpu):        # in order (a fold only so)
        # a fold of contiguous rows: a workgroup per row (``tile``); else a thread per row
        tile = fold and inner == 1
        ks = _mode(kernel, "tile" if tile else "serial")
        for start in range(0, max(length, 1), SERIAL_SEGMENT):
            extra = {"RG": rows, "START": start, "STOP": min(start + SERIAL_SEGMENT, length), "INNER": inner, "LI": li}
            _dispatch(provider, ks, extra, [*in_handles, out], rows if tile else -(-rows // WORKGROUP))
        return [out]
    if dt.kind != "c" and lookback(rows, length, inner, cpu) and wgpu_scan_lookback.enqueue_lookback(
            provider, kernel, in_handles, out, rows, length):
        return [out]
    g, ch = chunking(rows, length)
    extra = {"G": g, "RG": rows * g, "L": length, "CH": ch, "INNER": inner, "LI": li}
    if g == 1:
        _dispatch(provider, _mode(kernel, "single"), extra, [*in_handles, out], rows)
        return [out]
    # scratch from the pool (every chunk's total is written before it is read): no buffer made per call
    nbytes = rows * g * state_nbytes(op, dt)
    partial, scanned = provider.alloc(nbytes), provider.alloc(nbytes)
    try:
        _dispatch(provider, _mode(kernel, "partial"), extra, [*in_handles, partial], rows * g)
        part = Instr("input", (), dt, (rows, g), (0,))
        spine = Kernel([part], [kernel.out_nodes[0]], [], kernel.out_nodes, (rows, g), kernel.device,
                       kind="scan", attrs=(op, 1, False, "spine"), operands=[0])
        _dispatch(provider, spine, {"G": 1, "RG": rows, "L": g, "CH": g, "INNER": 1, "LI": g}, [partial, scanned],
                  rows)
        _dispatch(provider, _mode(kernel, "carry"), extra, [*in_handles, out, scanned], rows * g)
    finally:
        provider.free(partial)          # back to the pool once the pass is submitted
        provider.free(scanned)
    return [out]
