"""``with gpuarray.profile() as p:``: per-kernel counts and times of what ran.

On a wgpu device with timestamp queries, a device kernel's time is its GPU time (the
sum of its dispatches, from timestamps written around each one); kernels are batched
as usual and the times are read when the block ends. Elsewhere each kernel is
submitted on its own and waited for, and its time is wall clock. The table says which
clock each row used.

>>> import gpuarray as xp
>>> with xp.profile() as p:
...     xp.evaluate(xp.ones(4, device="cpu") * 2)
>>> len(p.records)
1
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from typing import Any

from ..compiler.kernel import Kernel
from ..providers import wgpu_timing

CLOCKS = {"gpu": "GPU time from timestamp queries",
          "wall": "wall clock (each kernel submitted alone and waited for)"}


class Profile:
    """Per-kernel counts and times collected inside ``with gpuarray.profile() as p:``.

    ``records`` maps (kernel, device, where it ran) to one time in seconds per run;
    ``clock`` says for each key whether the times are GPU times (``"gpu"``) or wall
    clock (``"wall"``: host kernels, and devices without timestamp queries).
    """

    def __init__(self) -> None:
        self.records: dict[tuple[str, str, str], list[float]] = collections.defaultdict(list)
        self.clock: dict[tuple[str, str, str], str] = {}
        self._providers: dict[int, Any] = {}

    @staticmethod
    def key(kernel: Kernel, placed: str) -> tuple[str, str, str]:
        return (f"{wgpu_timing.kernel_name(kernel)} {kernel.out_shape}", kernel.device.name, placed)

    def add(self, kernel: Kernel, placed: str, seconds: float, clock: str = "wall") -> int:
        """Record one run; returns its index in ``records[key]``."""
        key = self.key(kernel, placed)
        self.records[key].append(seconds)
        self.clock.setdefault(key, clock)
        return len(self.records[key]) - 1

    def gpu_sink(self, kernel: Kernel, placed: str, provider: Any) -> Any:
        """A callback that adds GPU nanoseconds to a new record of ``kernel`` (read later)."""
        key = self.key(kernel, placed)
        idx = self.add(kernel, placed, 0.0, "gpu")
        self._providers[id(provider)] = provider
        times = self.records[key]

        def sink(ns: int) -> None:
            times[idx] += ns * 1e-9
        return sink

    def collect(self) -> None:
        """Wait for the devices used and read their GPU times."""
        for provider in self._providers.values():
            with contextlib.suppress(Exception):     # a lost device: its rows keep what was read
                provider.synchronize()

    @property
    def total_seconds(self) -> float:
        return sum(sum(v) for v in self.records.values())

    def table(self) -> str:
        rows = sorted(self.records.items(), key=lambda kv: -sum(kv[1]))
        lines = [f"{'kernel':<44} {'device':<8} {'ran on':<8} {'count':>6} {'total ms':>10} {'mean ms':>9} clock"]
        for key, times in rows:
            name, dev, placed = key
            lines.append(f"{name[:44]:<44} {dev:<8} {placed:<8} {len(times):>6} {sum(times) * 1e3:>10.3f} "
                         f"{sum(times) / len(times) * 1e3:>9.3f} {self.clock.get(key, 'wall')}")
        for clock in sorted(set(self.clock.values())):
            lines.append(f"{clock}: {CLOCKS[clock]}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


_active = threading.local()


class profile:  # noqa: N801 - used like a function
    """``with gpuarray.profile() as p: ...`` then ``print(p)``: per-kernel counts and times."""

    def __init__(self) -> None:
        self.result = Profile()
        self._timing: Any = None

    def __enter__(self) -> Profile:
        _active.profile = self.result
        self._timing = wgpu_timing.enabled()
        self._timing.__enter__()
        return self.result

    def __exit__(self, *exc: Any) -> None:
        _active.profile = None
        try:
            self.result.collect()
        finally:
            self._timing.__exit__(None, None, None)


def current() -> Profile | None:
    return getattr(_active, "profile", None)


def quiet() -> bool:
    """True when nothing is profiled or timed now: kernels run without ``timed``'s wrapping."""
    return getattr(_active, "profile", None) is None and not wgpu_timing.active()     # current() is None


def timed(kernel: Kernel, placed: str, provider: Any, fn: Any) -> Any:
    """Run ``fn`` (one kernel). When profiling: on a device with timestamp queries, charge
    its dispatches' GPU time to it; elsewhere submit it alone, wait, and record wall time.
    With ``GPUARRAY_GPU_TIMING=1``, device kernels are timed on the GPU outside profiles too."""
    prof = current()
    timer = getattr(provider, "timer", None) if provider is not None else None
    if prof is None:
        if timer is None or not wgpu_timing.active():
            return fn()
        with timer.scope(wgpu_timing.Label(wgpu_timing.kernel_name(kernel))):
            return fn()
    if timer is not None:
        label = wgpu_timing.Label(wgpu_timing.kernel_name(kernel), prof.gpu_sink(kernel, placed, provider))
        with timer.scope(label):
            return fn()
    t0 = time.perf_counter()
    out = fn()
    if provider is not None:
        provider.synchronize()
    prof.add(kernel, placed, time.perf_counter() - t0)
    return out
