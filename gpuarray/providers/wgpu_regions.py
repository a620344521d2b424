"""``regions`` on the wgpu provider (``compiler/regions.py``): the array under a chain of writes copied
into the result, then each write's value computed over its region and stored there, one dispatch each,
in order, in the open compute pass (``render/wgsl_regions.py``).

Each pass is a kernel of its own operand's cone (``regions.parts``): writes of one structure (``a[i] = b[i] * 2``
for every ``i``) render one shader and differ only in run-time parameters.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..compiler.regions import extent, part_kernel, parts, place
from ..core.dtypes import STORAGE_NP
from ..graph.shapes import contiguous_strides
from ..render.wgsl import WORKGROUP
from ..render.wgsl_regions import render_region, render_regions_batched
from .wgpu_bindings import wide_buffers


def max_part_inputs(kernel: Kernel) -> int:
    """The most inputs one pass of ``kernel`` binds."""
    return max((len(ks) for _c, ks in kernel.memoized(("regions_parts",), lambda: parts(kernel))), default=0)


def enqueue_regions(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    out = provider.alloc(kernel.size * STORAGE_NP[kernel.out_nodes[0].dtype].itemsize)
    if kernel.size == 0:
        return [out]
    spans = [(0, contiguous_strides(kernel.out_shape)), *kernel.attrs]
    batch = _Batch(provider, out)
    for j, ((cone, ks), (offset, strides)) in enumerate(zip(
            kernel.memoized(("regions_parts",), lambda: parts(kernel)), spans, strict=True)):
        sub = part_kernel(kernel, cone, ks)
        n = sub.size
        if n == 0:
            continue
        extra = {"OFF": offset}
        for d, st in enumerate(strides):
            extra[f"S{d}"] = st
        r = provider.rendered_for(sub, render_region)
        bufs = [in_handles[k] for k in ks]
        if j and not r.wide and _own_reads_only(sub, offset, strides):
            batch.add(sub, r, bufs, r.meta(sub, extra), offset, strides)
            continue
        batch.flush()
        provider.dispatch(r.source, r.meta(sub, extra), [*bufs, out, *wide_buffers(provider, r, sub)],
                          -(-n // WORKGROUP))
    batch.flush()
    return [out]


class _Batch:
    """Consecutive writes of one shader over one set of buffers whose regions do not overlap, run as one
    dispatch (``render_regions_batched``): 4096 row writes took 4096 dispatches, each about 10 us of
    encoding on the H200's host. A region joins the run when it lies outside the run's span, or, for runs
    of one-dimensional regions of one stride and length (columns: their spans interleave), when no region of
    the run starts at its offset modulo the stride within its length. A write that breaks the run (another
    shader or buffers, a region that may overlap) dispatches what was gathered first, so writes still land
    in order."""

    __slots__ = ("provider", "out", "sub", "r", "bufs", "metas", "lo", "hi", "line", "starts")

    def __init__(self, provider: Any, out: Any) -> None:
        self.provider, self.out = provider, out
        self.sub: Kernel | None = None
        self.r: Any = None
        self.bufs: list[Any] = []
        self.metas: list[np.ndarray] = []
        self.lo = self.hi = 0
        self.line: tuple[int, int] | None = None         # (length, stride) of the run's 1-d regions
        self.starts: dict[int, list[int]] = {}          # their offsets by offset modulo the stride

    def add(self, sub: Kernel, r: Any, bufs: list[Any], meta: np.ndarray, offset: int,
            strides: tuple[int, ...]) -> None:
        lo, hi = extent(place(offset, sub.out_shape, strides))
        dims = [(d, st) for d, st in zip(sub.out_shape, strides) if d != 1]
        line = dims[0] if len(dims) == 1 and dims[0][1] > 0 else None
        if self.metas and not self._joins(sub, r, bufs, lo, hi, offset, line):
            self.flush()
        if not self.metas:
            self.sub, self.r, self.bufs, self.lo, self.hi, self.line = sub, r, bufs, lo, hi, line
            self.starts = {}
        if line != self.line:
            self.line = None
        if self.line is not None:
            self.starts.setdefault(offset % self.line[1], []).append(offset)
        self.metas.append(meta)
        self.lo, self.hi = min(self.lo, lo), max(self.hi, hi)

    def _joins(self, sub: Kernel, r: Any, bufs: list[Any], lo: int, hi: int, offset: int,
               line: tuple[int, int] | None) -> bool:
        """Whether a write joins the run: one shader, one size, the same buffers, and a region that meets
        none of the run's (see the class)."""
        if not (r is self.r and self.sub is not None and sub.size == self.sub.size and len(bufs) == len(self.bufs)
                and all(a is b for a, b in zip(bufs, self.bufs))):
            return False
        if lo > self.hi or hi < self.lo:
            return True
        if line is None or line != self.line:
            return False
        n, st = line
        return all(abs(offset - o) >= n * st for o in self.starts.get(offset % st, ()))

    def flush(self) -> None:
        metas, sub, r = self.metas, self.sub, self.r
        if not metas:
            return
        self.metas = []
        assert sub is not None
        n = sub.size
        bufs = [*self.bufs, self.out]
        if len(metas) == 1:
            self.provider.dispatch(r.source, metas[0], bufs, -(-n // WORKGROUP))
            return
        rb = self.provider.rendered_for(sub, render_regions_batched)
        prm = np.concatenate([np.array([n * len(metas), n], np.uint32), *metas])
        self.provider.dispatch(rb.source, prm, bufs, -(-(n * len(metas)) // WORKGROUP))


def _own_reads_only(sub: Kernel, offset: int, strides: tuple[int, ...]) -> bool:
    """Whether a pass may run beside other writes of disjoint regions: its strides are not negative and
    it reads the result (``rprev``) only through views of its own region (each thread its own element:
    ``regions.prevreads``), not elsewhere (where another write of the run may store)."""
    if any(s < 0 for s in strides):
        return False
    prev = {i for i, ins in enumerate(sub.instrs) if ins.op == "rprev"}
    if not prev:
        return True
    key = place(offset, sub.out_shape, strides)
    for ins in sub.instrs:
        if any(a in prev for a in ins.args):
            if ins.op != "view":
                return False
            vstrides, voff = ins.params
            if place(voff, ins.shape, vstrides) != key:
                return False
    return True
