"""``explain()`` and ``profile()``: what evaluating arrays would do, and what it did.

>>> import gpuarray as xp
>>> x = xp.ones(8, device="cpu")
>>> report = xp.explain(xp.exp(x) * 2)
>>> report.kernels[0].placed
'host'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..compiler.kernel import Kernel
from ..compiler.schedule import schedule
from ..graph.node import Node
from . import planner

_RENDERERS: dict[str, str] = {   # kinds whose WGSL is one shader per kernel: renderer module and function
    "elementwise": "wgsl:render", "reduce": "wgsl_reduce:render_reduce", "argreduce": "wgsl_argreduce:render_argreduce",
    "matmul": "wgsl_matmul:render_matmul", "scan": "wgsl_scan:render_scan",
    "compact": "wgsl_compact:render_compact",
    "rowfuse": "wgsl_rowfuse:render_fused",    # over rows, or over columns (attrs (0,): wgsl_colfuse.py)
}


@dataclass
class KernelReport:
    """One kernel of an evaluation: its fusion group, placement, WGSL and data movement."""

    index: int
    kind: str
    shape: tuple[int, ...]
    device: str
    placed: str
    why: str
    ops: list[str]
    upload_bytes: int
    download_bytes: int
    wgsl: str | None

    def __str__(self) -> str:
        lines = [f"kernel {self.index}: {self.kind} -> shape {self.shape} on {self.device}",
                 f"  fused ops : {', '.join(self.ops) or '(copy)'}",
                 f"  runs on   : {self.placed} ({self.why})",
                 f"  moves     : {self.upload_bytes} bytes up, {self.download_bytes} bytes down"]
        if self.wgsl:
            lines.append("  WGSL:")
            lines += ["    " + ln for ln in self.wgsl.strip().splitlines()]
        return "\n".join(lines)


@dataclass
class Explanation:
    """The plan for evaluating some arrays; ``print()`` it for a readable report."""

    kernels: list[KernelReport] = field(default_factory=list)
    recent_decisions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def upload_bytes(self) -> int:
        return sum(k.upload_bytes for k in self.kernels)

    @property
    def download_bytes(self) -> int:
        return sum(k.download_bytes for k in self.kernels)

    def __str__(self) -> str:
        if not self.kernels:
            return "nothing to do: every array is already evaluated"
        head = (f"{len(self.kernels)} kernel(s); {self.upload_bytes} bytes would be uploaded, "
                f"{self.download_bytes} downloaded")
        return head + "\n\n" + "\n\n".join(str(k) for k in self.kernels)

    __repr__ = __str__


def _wgsl(kernel: Kernel, placement: planner.Placement) -> str | None:
    if placement.where != "device":
        return None
    spec = _RENDERERS.get(kernel.kind)
    if spec is None:
        return f"(multi-pass {kernel.kind} kernel: its shaders are chosen at dispatch from the sizes)"
    import importlib
    mod, fn = spec.split(":")
    try:
        return str(getattr(importlib.import_module(f"gpuarray.render.{mod}"), fn)(kernel).source)
    except Exception as exc:  # noqa: BLE001 - a report, not a run
        return f"(could not render: {type(exc).__name__}: {exc})"


def explain(*arrays: Any, wgsl: bool = True) -> Explanation:
    """What evaluating ``arrays`` would do now: fusion groups, WGSL, placement and why, bytes moved.

    Nothing is evaluated or moved.
    """
    for a in arrays:
        if not isinstance(getattr(a, "_node", None), Node):
            raise TypeError(f"explain: expected GpuArrays; got {type(a).__name__}")
    kernels = schedule([a._node for a in arrays if not a._node.realized])
    out = Explanation(recent_decisions=planner.decisions()[-10:])
    seen: set = set()
    for i, k in enumerate(kernels):
        p = planner.place(k)
        up, down = planner.bytes_to_move(k, p, seen)
        ops = [ins.op for ins in k.instrs if ins.op not in ("input", "const")]
        if k.kind != "elementwise":
            ops.append(k.kind)
        out.kernels.append(KernelReport(i, k.kind, k.out_shape, k.device.name, p.where, p.why, ops, up, down,
                                        _wgsl(k, p) if wgsl else None))
    return out
