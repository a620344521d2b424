"""The single-pass scan (decoupled look-back; ``render/wgsl_scan_lookback.py`` has the kernel) on
the wgpu provider: few long rows along the last axis, two dispatches per call: a tiny one that
zeroes the tile counter and the status words, then the scan, which reads the input once and
writes the output once (2^26 float32: 537 MB, about 0.11 ms at the H200's ~4.8 TB/s). Its tile
body before this one (the tile through workgroup memory, a thread's elements folded from there,
a workgroup-wide look-back) took 0.586 ms of GPU time there, and every variant of it 0.56-1.4 ms;
the register tile (vec4 loads, subgroup scans, look-back by one subgroup) 0.283 ms, and float64
(2^25, the same bytes) about twice that by scalar loads and the workgroup-memory scan of 64-bit
states (docs/benchmarks.md); its 64-bit path (vec2 loads and stores, subgroup scans of the states'
32-bit parts) is not measured on a GPU yet (``python -m bench.scan_lookback`` compares it with the
chunked scan and its tunables). On lavapipe (2 cores, shared) both take about 0.1 s for 2^21
float32, so CPU adapters keep the chunked scan; ``wgpu_scan.STRATEGY = "lookback"`` forces this one
there (the tests do).

Tunables: ``LOOKBACK`` (off: the chunked scan of ``wgpu_scan`` instead), ``PER_THREAD`` (elements
per thread; unset: the environment variable ``GPUARRAY_SCAN_ITEMS``, else 16, 8 for float64
products) and ``WG`` (threads per workgroup, a power of two from 32 to the adapter's limit; unset:
``GPUARRAY_SCAN_WG``, else 256), ``VECTORIZE`` (16-byte loads and stores where the rows are 16-byte
aligned and ``PER_THREAD`` a multiple of 4), ``STRIPED`` (with subgroups, sums' and products'
elements of a thread in 16-byte runs strided by the subgroup, so that a subgroup's loads and stores
cover consecutive bytes; off, and for maximum / minimum: each thread's elements consecutive),
``USE_SUBGROUPS`` (the subgroup tile scan and look-back where the adapter has the feature and ``WG``
is a multiple of its largest subgroup; a driver that rejects the shader gets the workgroup-memory
scan from then on, for 32-bit and for wider states apart), ``WIDE_REG`` (the 64-bit path: ``vec2``
loads and stores of 64-bit rows, and the subgroup scans for states wider than 32 bits, 64-bit values
and products' (product, flags) pairs; unset: ``GPUARRAY_SCAN_WIDE_REG``, ``0`` off (scalar 64-bit
loads and stores, the workgroup-memory scan for those states), else on), ``SPIN`` (reads of a
missing status before the look-back computes the waited-on tile's total itself) and ``WINDOW``
(predecessor tiles the workgroup look-back reads at once, without subgroups), both per adapter type.

>>> words("sum", np.dtype("float32")), words("prod", np.dtype("float64"))
(2, 5)
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP, WGSL_STORAGE_TYPE
from ..render.wgsl import VEC_TYPES, WORKGROUP
from ..render.wgsl_scan_lookback import (
    CLEAR,
    WIDE_TYPES,
    can_use_subgroups,
    default_items,
    is_wide,
    render_lookback,
    smem_bytes,
    words,
)
from .wgpu_bindings import wide_buffers
from .wgpu_split import GpuHandle


def _env_int(name: str) -> int | None:
    """The positive integer in environment variable ``name``, or None where it is not set."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        v = int(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected a positive integer") from None
    if v < 1:
        raise ValueError(f"{name}={raw!r}: expected a positive integer")
    return v


LOOKBACK = True         # few long rows along the last axis: the single-pass scan
USE_SUBGROUPS = True    # the subgroup tile scan and look-back where the adapter has them
VECTORIZE = True        # 16-byte loads and stores (vec4; vec2 of 64-bit values) where the rows are 16-byte aligned
STRIPED = True          # with subgroups: a thread's elements in 16-byte runs strided by the subgroup (else blocked)
SPIN = {"GPU": 1 << 12, "CPU": 32}      # by adapter type (lavapipe: each read is a loop iteration)
WINDOW = {"GPU": 256, "CPU": 16}        # tiles the workgroup look-back reads at once, by adapter type
WIDE_REG: bool | None = None    # the 64-bit path: vec2 loads, subgroups (None: GPUARRAY_SCAN_WIDE_REG, else on)
PER_THREAD: int | None = None   # elements per thread (None: GPUARRAY_SCAN_ITEMS, else default_items)
WG: int | None = None           # threads per workgroup (None: GPUARRAY_SCAN_WG, else 256)
MAX_ITEMS = 64
__all__ = ["LOOKBACK", "PER_THREAD", "SPIN", "STRIPED", "USE_SUBGROUPS", "VECTORIZE", "WG", "WIDE_REG", "WINDOW",
           "enqueue_lookback", "items", "tile", "wide_registers", "workgroup_size", "words"]


def items(op: str, dtype: np.dtype) -> int:
    """Elements per thread of the scan of ``op`` with result ``dtype``."""
    pt = PER_THREAD if PER_THREAD is not None else _env_int("GPUARRAY_SCAN_ITEMS") or default_items(op, dtype)
    if not 1 <= pt <= MAX_ITEMS:
        raise ValueError(f"GPUARRAY_SCAN_ITEMS / PER_THREAD = {pt}: expected 1 to {MAX_ITEMS} elements per thread")
    return pt


def wide_registers() -> bool:
    """Whether the 64-bit path is on: ``vec2`` loads and stores of 64-bit rows, and the subgroup scan
    and look-back for states wider than 32 bits (``WIDE_REG``; unset: ``GPUARRAY_SCAN_WIDE_REG``,
    ``0`` off, ``1`` on, the default)."""
    if WIDE_REG is not None:
        return bool(WIDE_REG)
    raw = os.environ.get("GPUARRAY_SCAN_WIDE_REG", "").strip()
    if raw not in ("", "0", "1"):
        raise ValueError(f"GPUARRAY_SCAN_WIDE_REG={raw!r}: expected 0 or 1")
    return raw != "0"


def workgroup_size(provider: Any) -> int:
    """Threads per workgroup of the scan on ``provider``."""
    wg = WG if WG is not None else _env_int("GPUARRAY_SCAN_WG") or 256
    top = int(provider.limits.get("max-compute-invocations-per-workgroup", 256))
    if wg < 32 or wg & (wg - 1) or wg > top:
        raise ValueError(f"GPUARRAY_SCAN_WG / WG = {wg}: expected a power of two from 32 to {top} "
                         "(the adapter's threads per workgroup)")
    return wg


def tile(provider: Any, kernel: Kernel) -> int:
    """Elements per tile (a workgroup's share) of ``kernel``'s scan on ``provider``."""
    return workgroup_size(provider) * items(kernel.attrs[0], kernel.out_nodes[0].dtype)


def use_subgroups(provider: Any, kernel: Kernel) -> bool:
    """Whether to render the subgroup tile scan and look-back for ``kernel`` on ``provider``: the
    feature, a 32-bit state or ``wide_registers()``, and whole subgroups (``WG`` a multiple of the
    largest subgroup size); not after the driver rejected such a shader (32-bit and wider states
    apart)."""
    info = provider.adapter.info
    sgmax = int(info.get("subgroup_max_size") or info.get("stackgroup_max_size") or 128)
    op, dt = kernel.attrs[0], kernel.out_nodes[0].dtype
    return USE_SUBGROUPS and "subgroup" in getattr(provider, "features", ()) and \
        workgroup_size(provider) % sgmax == 0 and can_use_subgroups(op, dt, wide_registers()) and \
        not getattr(provider, _failed_flag(op, dt), False)


def _failed_flag(op: str, dtype: np.dtype) -> str:
    """The provider attribute that records a driver's refusal of the subgroup shader of such states."""
    return "_lookback_sg_wide_failed" if is_wide(op, dtype) else "_lookback_sg_failed"


def _rendered(provider: Any, kernel: Kernel, variant: tuple[int, int, bool, int, bool, bool, bool]) -> Any:
    """The scan's shader; with subgroups where they can be used and the driver compiles them."""
    pt, wg, sg, window, vin, vout, striped = variant
    if sg:
        r = provider.rendered_for(kernel, render_lookback, variant)
        try:
            provider.pipeline_for(r.source)
            return r
        except Exception as exc:
            if "lost" in str(exc).lower():
                raise
            setattr(provider, _failed_flag(kernel.attrs[0], kernel.out_nodes[0].dtype), True)
    return provider.rendered_for(kernel, render_lookback, (pt, wg, False, window, vin, vout, False))


def enqueue_lookback(provider: Any, kernel: Kernel, in_handles: list[Any], out: Any, rows: int, length: int) -> bool:
    """Record the single-pass scan of ``kernel`` (``rows`` > 0 rows of ``length`` along the last
    axis) into the open pass, writing ``out``; False (nothing recorded) where its workgroup memory
    exceeds the adapter's."""
    op, _axis, init = kernel.attrs[:3]
    dt = kernel.out_nodes[0].dtype
    pt, wg = items(op, dt), workgroup_size(provider)
    sg = use_subgroups(provider, kernel)
    if smem_bytes(op, dt, wg, sg) > int(provider.limits.get("max-compute-workgroup-storage-size", 16384)):
        return False
    tr = max(1, math.ceil(length / (wg * pt)))      # length 0: the include_initial value
    nt = rows * tr
    nwords = 1 + nt * words(op, dt)
    kind = str(provider.adapter.info.get("adapter_type"))
    aligned = VECTORIZE and pt % 4 == 0 and (rows == 1 or length % 4 == 0)
    w64 = wide_registers()
    # 16-byte stores: the output bound to a whole number of them (its buffer, a size class, has room)
    nbytes = kernel.size * STORAGE_NP[dt].itemsize
    room = -(-max(nbytes, 16) // 16) * 16
    vout = aligned and not init and isinstance(out, GpuHandle) and out.buffer.size >= room and \
        (WGSL_STORAGE_TYPE[dt] in VEC_TYPES or w64 and WGSL_STORAGE_TYPE[dt] in WIDE_TYPES)
    vin = aligned and all(isinstance(h, GpuHandle) for h in in_handles) and \
        (w64 or not any(WGSL_STORAGE_TYPE[n.dtype] in WIDE_TYPES for n in kernel.inputs))
    window = min(WINDOW.get(kind, WINDOW["CPU"]), wg)
    # striped for sums and products (H200, 2^26: float32 cumsum 0.289 -> 0.249 ms, int32 0.305 -> 0.243,
    # float64 0.287 -> 0.239, float32 cumprod 0.327 -> 0.313); not for maximum / minimum, whose runs are
    # scanned by shuffles a run (float32 maximum.accumulate 0.405 -> 0.467)
    striped = STRIPED and op in ("sum", "prod")
    r = _rendered(provider, kernel, (pt, wg, sg, window, vin, vout, striped))
    nbuf = 2 + len(in_handles) * (2 if r.vec > 1 else 1) + len(r.wide)
    if nbuf > int(provider.limits.get("max-storage-buffers-per-shader-stage", 8)):
        r = _rendered(provider, kernel, (pt, wg, sg, window, False, vout, striped))
    flags = provider.alloc(nwords * 4)
    provider.dispatch(CLEAR, np.array([nwords], dtype=np.uint32), [flags], -(-nwords // WORKGROUP))
    extra = {"NT": nt, "TR": tr, "L": length, "LI": length + int(bool(init)), "SPIN": SPIN.get(kind, SPIN["CPU"])}
    wide = wide_buffers(provider, r, kernel)
    outb = (out.buffer, 0, room) if vout else out
    provider.dispatch(r.source, r.meta(kernel, extra), [*in_handles, outb, flags, *wide,
                                                        *(in_handles if r.vec > 1 else [])], nt)
    provider.free(flags)
    return True
