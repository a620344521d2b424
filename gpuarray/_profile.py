"""``with gpuarray.profile() as p:``: per-kernel counts and times of what ran.

>>> import gpuarray as xp
>>> with xp.profile() as p:
...     xp.evaluate(xp.ones(4, device="cpu") * 2)
>>> len(p.records)
1
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Any

from .compiler.kernel import Kernel


class Profile:
    """Per-kernel counts and times collected inside ``with gpuarray.profile() as p:``.

    Each kernel is submitted on its own and waited for, so its time is the wall
    time of that submit on the device (or of the NumPy run on the host).
    """

    def __init__(self) -> None:
        self.records: dict[tuple[str, str, str], list[float]] = collections.defaultdict(list)

    def add(self, kernel: Kernel, placed: str, seconds: float) -> None:
        key = (kernel.summary().replace("kernel -> ", ""), kernel.device.name, placed)
        self.records[key].append(seconds)

    @property
    def total_seconds(self) -> float:
        return sum(sum(v) for v in self.records.values())

    def table(self) -> str:
        rows = sorted(self.records.items(), key=lambda kv: -sum(kv[1]))
        lines = [f"{'kernel':<48} {'device':<8} {'ran on':<8} {'count':>6} {'total ms':>10} {'mean ms':>9}"]
        for (name, dev, placed), times in rows:
            lines.append(f"{name[:48]:<48} {dev:<8} {placed:<8} {len(times):>6} {sum(times) * 1e3:>10.3f} "
                         f"{sum(times) / len(times) * 1e3:>9.3f}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


_active = threading.local()


class profile:  # noqa: N801 - used like a function
    """``with gpuarray.profile() as p: ...`` then ``print(p)``: per-kernel counts and times."""

    def __init__(self) -> None:
        self.result = Profile()

    def __enter__(self) -> Profile:
        _active.profile = self.result
        return self.result

    def __exit__(self, *exc: Any) -> None:
        _active.profile = None


def current() -> Profile | None:
    return getattr(_active, "profile", None)


def timed(kernel: Kernel, placed: str, provider: Any, fn: Any) -> Any:
    """Run ``fn`` (one kernel); when profiling, submit it alone, wait, and record its time."""
    prof = current()
    if prof is None:
        return fn()
    t0 = time.perf_counter()
    out = fn()
    if provider is not None:
        provider.synchronize()
    prof.add(kernel, placed, time.perf_counter() - t0)
    return out
