"""LSD radix sort on the wgpu provider (WGSL from ``render.wgsl_radix``): ``sort`` / ``argsort``
of rows longer than one bitonic block.

One pass per 8-bit digit of the key (1, 2, 4 or 8 by dtype), each three dispatches recorded
into the open pass: upsweep (digit counts per partition), scan (per row and digit over the
partitions), downsweep (stable scatter). A float32 sort or argsort is 12 dispatches, a 64-bit
one 24. Keys (raw bits) and, for ``argsort``, positions move between ping-pong scratch buffers
from the provider's pool; the first pass reads through the fused prologue and the last writes
the result. No workgroup waits on another (``render.wgsl_radix`` says why).

Tunables (module attributes): ``MAX_PARTS`` (workgroups of the upsweep and downsweep: more
partitions give a larger count array to scan, fewer give each workgroup more tiles),
``THREAD_SCAN`` (partitions per row up to which the scan gives one thread to each segment),
``KPT_CHOICES`` (keys per thread: the largest whose tile fits workgroup memory is taken),
``USE_SUBGROUPS`` (subgroup scans where the adapter has the feature; a driver that rejects them
gets the workgroup-memory scans from then on, as ``wgpu_reduce`` does) and ``UNROLL``;
``MULTISPLIT`` (the downsweep ranked by subgroup ballots, ``render_downsweep_ms``, where the
adapter's subgroup sizes are known to lie in ``subgroup_floor(provider)..32``: NVIDIA, llvmpipe,
or ``MULTISPLIT_SG``; else the counting rounds), ``MS_KPT_CHOICES`` and ``MS_KPT_SORT32`` (its
keys per thread).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ..compiler.kernel import Kernel
from ..render.wgsl import WORKGROUP
from ..render.wgsl_radix import (
    DIGITS,
    downsweep_bytes,
    downsweep_ms_bytes,
    passes,
    raw_bytes,
    render_downsweep,
    render_downsweep_ms,
    render_scan,
    render_upsweep,
)
from ..render.wgsl_sort import Shader
from .wgpu_bindings import wide_buffers

MAX_PARTS = 2048        # target workgroups per pass (partitions of every row together)
THREAD_SCAN = 64        # partitions per row up to which the scan runs a thread per (row, digit)
KPT_CHOICES = (16, 8, 4, 2)     # keys per thread, largest first: the tile is 256 * KPT keys
MS_KPT_CHOICES = (16, 8, 4, 2)  # the same for the multisplit downsweep
MS_KPT_SORT32 = 8               # at most this many for the multisplit of 32-bit keys without positions
                                # (H200, float32 sort of 2^24: 214 us a pass at 8, 282 at 16; other
                                # kinds were best at 16)
USE_SUBGROUPS = True            # workgroup scans with subgroup operations where the adapter has them
UNROLL: bool | None = None      # per-key code unrolled (None: except on CPU adapters, whose compiler is slow at it)
MULTISPLIT = True               # rank the downsweep's tiles by subgroup ballots where the subgroup size is known
MULTISPLIT_SG: int | None = None    # the smallest subgroup size (None: known adapters only, see subgroup_floor)


@dataclass(frozen=True)
class Plan:
    """How one radix sort runs: ``kpt`` keys per thread (tiles of ``256 * kpt``), ``tpp`` tiles
    per partition, ``pr`` partitions per row, ``passes`` digit passes."""

    rows: int
    length: int
    inner: int
    kpt: int
    tpp: int
    pr: int
    passes: int
    ms: int = 0         # the multisplit downsweep for subgroups of ms..32 invocations (0: the counting rounds)

    @property
    def tile(self) -> int:
        return WORKGROUP * self.kpt

    @property
    def size(self) -> int:
        return self.rows * self.length


def subgroup_floor(provider: Any) -> int:
    """The smallest subgroup size a compute shader of ``provider`` can get, where it is known to lie
    in 4..32 (the multisplit's ballots use one word), else 0. The adapter's reported range is no
    help (wgpu reports 4..128 on the H200 and on lavapipe), so: ``MULTISPLIT_SG``, else NVIDIA's 32,
    else llvmpipe's vector width (256 bits: 8 lanes of 32 bits)."""
    if MULTISPLIT_SG is not None:
        return MULTISPLIT_SG
    info = getattr(getattr(provider, "adapter", None), "info", None) or {}
    if info.get("vendor_id") == 0x10DE:
        return 32
    m = re.search(r"llvmpipe \(.*?(\d+) bits\)", str(info.get("device", "")))
    if m and 4 <= int(m.group(1)) // 32 <= 32:
        return int(m.group(1)) // 32
    return 0


def multisplit(provider: Any) -> int:
    """The ``ms`` of the multisplit downsweep on ``provider`` (0: the workgroup-memory counting rounds)."""
    if not (MULTISPLIT and use_subgroups(provider)):
        return 0
    return subgroup_floor(provider)


def _fit(provider: Any, kernel: Kernel, ms: int) -> int | None:
    dt = kernel.instrs[kernel.operands[0]].dtype
    limit = int(provider.limits.get("max-compute-workgroup-storage-size", 16384))
    vals = kernel.kind == "argsort"
    choices: tuple[int, ...] = KPT_CHOICES
    if ms:
        small = raw_bytes(dt) == 4 and not vals
        choices = tuple(k for k in MS_KPT_CHOICES if not small or k <= MS_KPT_SORT32) or MS_KPT_CHOICES[-1:]
    for kpt in choices:
        need = downsweep_ms_bytes(dt, kpt, vals, ms) if ms else downsweep_bytes(dt, kpt, vals)
        if need <= limit:
            return kpt
    return None


def tile_choice(provider: Any, kernel: Kernel) -> tuple[int, int] | None:
    """(kpt, ms): the largest ``KPT_CHOICES`` whose downsweep fits the adapter's workgroup memory,
    the multisplit's where ``multisplit`` allows it and one fits, else the counting rounds'; None
    where none fits."""
    ms = multisplit(provider)
    kpt = _fit(provider, kernel, ms) if ms else None
    if kpt is not None:
        return kpt, ms
    kpt = _fit(provider, kernel, 0)
    return None if kpt is None else (kpt, 0)


def keys_per_thread(provider: Any, kernel: Kernel, ms: int | None = None) -> int | None:
    """Keys per thread of the downsweep (``ms``: of the multisplit for that subgroup floor, 0 of
    the counting rounds, None: ``tile_choice``'s), or None where no tile fits."""
    if ms is not None:
        return _fit(provider, kernel, ms)
    c = tile_choice(provider, kernel)
    return None if c is None else c[0]


def plan(provider: Any, kernel: Kernel, rows: int, length: int, inner: int) -> Plan | None:
    """The plan of ``kernel``'s rows, or None where the adapter's workgroup memory is too small."""
    c = tile_choice(provider, kernel)
    if c is None:
        return None
    kpt, ms = c
    tile = WORKGROUP * kpt
    tiles = math.ceil(length / tile)
    tpp = max(1, math.ceil(rows * tiles / MAX_PARTS))
    pr = math.ceil(tiles / tpp)
    return Plan(rows, length, inner, kpt, tpp, pr, passes(kernel.instrs[kernel.operands[0]].dtype), ms)


def radix_cannot_run(provider: Any, kernel: Kernel, p: Plan) -> str | None:
    """Limits of the radix sort beyond the provider's generic ones (scratch sizes, bindings)."""
    dt = kernel.instrs[kernel.operands[0]].dtype
    n = p.size
    if n >= 2**31:
        return "sort: 2**31 elements or more"
    for what, nbytes in (("key scratch", n * raw_bytes(dt)), ("position scratch", n * 4),
                         ("digit counts", p.rows * DIGITS * p.pr * 4)):
        if nbytes > provider.max_binding:
            return f"sort: {what} of {nbytes} bytes exceeds the adapter's storage binding limit {provider.max_binding}"
    n_wide = len({ins.dtype for ins in kernel.instrs if ins.op == "const" and ins.dtype.itemsize == 8})
    need = 1 + len(kernel.inputs) + 4 + n_wide      # prm, inputs, cnt, tot, keys and positions out, constants
    if need > provider.max_storage_buffers:
        return f"sort needs {need} storage buffers; the adapter allows {provider.max_storage_buffers}"
    return None


def shader_buffers(provider: Any, kernel: Kernel, sh: Shader, named: dict[str, Any], inputs: list[Any]) -> list[Any]:
    """The buffers of a sort or radix shader in its roles' order: the kernel's ``inputs``, its 64-bit
    constants (``wide``), and the ``named`` scratch and result buffers."""
    bufs: list[Any] = []
    for role in sh.roles:
        if role == "inputs":
            bufs += inputs
        elif role == "wide":
            bufs += wide_buffers(provider, sh.rendered, kernel)
        else:
            bufs.append(named[role])
    return bufs


def cached_shader(provider: Any, kernel: Kernel, variant: tuple, make: Any, kind: str = "wgpu_radix") -> Shader:
    """``make()``'s shader for ``kernel`` and ``variant``, made once per provider (the sort kinds')."""
    key = (kind, kernel.signature, variant)
    sh = provider.rendered.get(key)
    if sh is None:
        sh = make()
        provider.rendered[key] = sh
    return sh


def use_subgroups(provider: Any) -> bool:
    """Whether to render the subgroup scans for ``provider`` (off once its driver rejected them)."""
    return USE_SUBGROUPS and "subgroup" in getattr(provider, "features", ()) and \
        not getattr(provider, "_radix_sg_failed", False)


def _shaders(provider: Any, kernel: Kernel, p: Plan, scan_mode: str, sg: bool) -> list[tuple[Shader, Shader, Shader]]:
    """(upsweep, scan, downsweep) of each pass."""
    unroll = UNROLL if UNROLL is not None else provider.adapter.info.get("adapter_type") != "CPU"
    scan = cached_shader(provider, kernel, ("scan", scan_mode, sg), lambda: render_scan(kernel, scan_mode, sg))
    out = []
    for q in range(p.passes):
        src = "prologue" if q == 0 else "scratch"
        dst = "final" if q == p.passes - 1 else "scratch"
        up = cached_shader(provider, kernel, ("up", src, p.kpt, unroll),
                     lambda src=src: render_upsweep(kernel, src, p.kpt, unroll))
        if p.ms and sg:
            down = cached_shader(provider, kernel, ("down_ms", src, dst, p.kpt, p.ms, unroll),
                           lambda src=src, dst=dst: render_downsweep_ms(kernel, src, dst, p.kpt, p.ms, unroll))
        else:
            down = cached_shader(provider, kernel, ("down", src, dst, p.kpt, unroll, sg),
                           lambda src=src, dst=dst: render_downsweep(kernel, src, dst, p.kpt, unroll, sg))
        out.append((up, scan, down))
    return out


def _scan_mode(p: Plan) -> str:
    return "thread" if p.pr <= THREAD_SCAN else "wg"


def _replan(provider: Any, kernel: Kernel, p: Plan) -> Plan:
    q = plan(provider, kernel, p.rows, p.length, p.inner)
    assert q is not None and not q.ms
    return q


def enqueue_radix(provider: Any, kernel: Kernel, in_handles: list[Any], out: Any, p: Plan) -> None:
    """Record the passes of the radix sort of ``kernel`` writing ``out``."""
    dt = kernel.instrs[kernel.operands[0]].dtype
    vals = kernel.kind == "argsort"
    sg = use_subgroups(provider)
    if p.ms and not (sg and multisplit(provider)):      # the tunables changed since the plan
        p = _replan(provider, kernel, p)
    shaders = _shaders(provider, kernel, p, _scan_mode(p), sg)
    if sg:      # compiled before anything is recorded: a driver that rejects subgroups gets the plain scans
        try:
            for sh in {s.rendered.source for trio in shaders for s in trio}:
                provider.pipeline_for(sh)
        except Exception as exc:
            if "lost" in str(exc).lower():
                raise
            provider._radix_sg_failed = True
            if p.ms:        # the counting rounds' tile may be smaller
                p = _replan(provider, kernel, p)
            shaders = _shaders(provider, kernel, p, _scan_mode(p), False)
    n = p.size
    nw = p.rows * p.pr
    nseg = p.rows * DIGITS
    scan_groups = -(-nseg // WORKGROUP) if _scan_mode(p) == "thread" else nseg
    cnt = provider.alloc(nseg * p.pr * 4)
    tot = provider.alloc(nseg * 4)
    nscratch = min(p.passes - 1, 2)
    keys = [provider.alloc(n * raw_bytes(dt)) for _ in range(nscratch)]
    poss = [provider.alloc(n * 4) for _ in range(nscratch)] if vals else []

    def run(sh: Shader, named: dict[str, Any], extra: dict[str, int], groups: int) -> None:
        provider.dispatch(sh.rendered.source, sh.rendered.meta(kernel, extra),
                          shader_buffers(provider, kernel, sh, named, in_handles), groups)

    for q, (up, scan, down) in enumerate(shaders):
        named: dict[str, Any] = {"cnt": cnt, "tot": tot, "out": out}
        if q > 0:
            named["kin"] = keys[(q - 1) % 2]
            if vals:
                named["vin"] = poss[(q - 1) % 2]
        if q < p.passes - 1:
            named["kout"] = keys[q % 2]
            if vals:
                named["vout"] = poss[q % 2]
        extra = {"L": p.length, "I": p.inner, "PR": p.pr, "TPP": p.tpp, "NW": nw, "SH": 8 * q,
                 "NSEG": nseg}
        run(up, named, extra, nw)
        run(scan, named, extra, scan_groups)
        run(down, named, extra, nw)
    for h in [cnt, tot, *keys, *poss]:
        provider.free(h)
