"""The single-pass scan (decoupled look-back; ``render/wgsl_scan_lookback.py`` has the kernel) on
the wgpu provider: few long rows along the last axis, two dispatches per call: a tiny one that
zeroes the tile counter and the status words, then the scan, which reads the input once and
writes the output once (2^26 float32: 537 MB, about 0.13 ms at the H200's ~4 TB/s; the three
dispatches of the chunked scan read it twice and took 0.78 ms of GPU time there). Not measured on
a GPU yet (``python -m bench.scan_lookback`` compares it with the chunked scan and its tunables). On
lavapipe (2 cores, shared) both take about 0.1 s for 2^21 float32, so CPU adapters keep the chunked
scan; ``wgpu_scan.STRATEGY = "lookback"`` forces this one there (the tests do).

Tunables: ``LOOKBACK`` (off: the chunked scan of ``wgpu_scan`` instead), ``USE_SUBGROUPS``
(the workgroup scan by subgroup shuffles for 32-bit states where the adapter has the feature; a
driver that rejects the shader gets the workgroup-memory scan from then on), ``SPIN`` (reads of a
missing status before a workgroup computes the waited-on tile's total itself) and ``WINDOW``
(predecessor tiles the look-back reads at once: the prefix front moves that many tiles per round
trip to memory), both per adapter type, ``UNROLL`` (the loads) and ``PER_THREAD``.

>>> words("sum", np.dtype("float32")), words("prod", np.dtype("float64"))
(2, 5)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..render.wgsl import WORKGROUP
from ..render.wgsl_scan_lookback import CLEAR, can_use_subgroups, per_thread, render_lookback, words

LOOKBACK = True         # few long rows along the last axis: the single-pass scan
USE_SUBGROUPS = True    # the workgroup scan by subgroup shuffles where the adapter has them
SPIN = {"GPU": 1 << 12, "CPU": 32}      # by adapter type (lavapipe: each read is a loop iteration)
WINDOW = {"GPU": 256, "CPU": 16}        # tiles the look-back reads at once, by adapter type
UNROLL: bool | None = None      # the tile's loads unrolled (None: except on CPU adapters, slow to compile them)
PER_THREAD: int | None = None   # elements per thread (None: render.wgsl_scan_lookback.per_thread's)
__all__ = ["LOOKBACK", "PER_THREAD", "SPIN", "UNROLL", "USE_SUBGROUPS", "WINDOW", "enqueue_lookback", "tile", "words"]


def tile(provider: Any, kernel: Kernel) -> int:
    """Elements per tile (a workgroup's share) of ``kernel``'s scan on ``provider``."""
    return WORKGROUP * _pt(provider, kernel)


def _pt(provider: Any, kernel: Kernel) -> int:
    if PER_THREAD is not None:
        return PER_THREAD
    limit = int(provider.limits.get("max-compute-workgroup-storage-size", 16384))
    return per_thread(kernel.attrs[0], kernel.out_nodes[0].dtype, limit)


def use_subgroups(provider: Any, kernel: Kernel) -> bool:
    """Whether to render the subgroup workgroup scan for ``kernel`` on ``provider``."""
    op = kernel.attrs[0]
    return USE_SUBGROUPS and "subgroup" in getattr(provider, "features", ()) and \
        can_use_subgroups(op, kernel.out_nodes[0].dtype) and not getattr(provider, "_lookback_sg_failed", False)


def _rendered(provider: Any, kernel: Kernel, pt: int, window: int, unroll: bool) -> Any:
    """The scan's shader; with subgroups where they can be used and the driver compiles them."""
    if use_subgroups(provider, kernel):
        r = provider.rendered_for(kernel, render_lookback, (pt, True, window, unroll))
        try:
            provider.pipeline_for(r.source)
            return r
        except Exception as exc:
            if "lost" in str(exc).lower():
                raise
            provider._lookback_sg_failed = True
    return provider.rendered_for(kernel, render_lookback, (pt, False, window, unroll))


def enqueue_lookback(provider: Any, kernel: Kernel, in_handles: list[Any], out: Any, rows: int, length: int) -> None:
    """Record the single-pass scan of ``kernel`` (``rows`` > 0 rows of ``length`` along the last
    axis) into the open pass, writing ``out``."""
    op, _axis, init = kernel.attrs[:3]
    dt = kernel.out_nodes[0].dtype
    pt = _pt(provider, kernel)
    tr = max(1, math.ceil(length / (WORKGROUP * pt)))      # length 0: the include_initial value
    nt = rows * tr
    nwords = 1 + nt * words(op, dt)
    kind = str(provider.adapter.info.get("adapter_type"))
    unroll = UNROLL if UNROLL is not None else kind != "CPU"
    r = _rendered(provider, kernel, pt, WINDOW.get(kind, WINDOW["CPU"]), unroll)
    flags = provider.alloc(nwords * 4)
    provider.dispatch(CLEAR, np.array([nwords], dtype=np.uint32), [flags], -(-nwords // WORKGROUP))
    extra = {"NT": nt, "TR": tr, "L": length, "LI": length + int(bool(init)), "SPIN": SPIN.get(kind, SPIN["CPU"])}
    wide = [provider.data_buffer(v) for _t, v in sorted(r.wide_values(kernel).items())]
    provider.dispatch(r.source, r.meta(kernel, extra), [*in_handles, out, flags, *wide], nt)
    provider.free(flags)
