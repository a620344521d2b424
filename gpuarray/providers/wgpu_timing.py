"""GPU time per dispatch from timestamp queries.

On a device with ``timestamp-query`` and ``timestamp-query-inside-passes``, each dispatch
is bracketed by two timestamps written into a query set. After the submit, the query
set is resolved into a buffer and copied to a MAP_READ buffer; the times are read when
the queue is waited for anyway (a download, ``synchronize()``, the end of ``profile()``).
Each dispatch's time goes to the kernel being enqueued (``GpuTimer.scope``):
``metrics()["gpu_time_ns"]`` (and ``"gpu_dispatches_timed"``), the per-kernel table
``kernel_times()``, and ``profile()``.

Timing is on inside ``profile()`` and when ``GPUARRAY_GPU_TIMING=1``; otherwise nothing
is written (it costs two commands per dispatch and a resolve and a map per submit).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..core import metrics as _metrics

CAP = 512                       # queries per query set: 256 dispatches
FEATURES = ("timestamp-query", "timestamp-query-inside-passes")

_lock = threading.Lock()
_profiles = 0                   # profile() blocks open (in any thread)
_table: dict[str, list[int]] = {}   # kernel name -> [dispatches, ns]


# os.environ's own mapping (bytes keys on POSIX): one dict lookup per dispatch instead of
# os.environ.get's four Python calls; setenv and monkeypatch write through to it
_ENV = getattr(os.environ, "_data", None)
_ENV_KEY: Any = os.environ.encodekey("GPUARRAY_GPU_TIMING") if hasattr(os.environ, "encodekey") else None


def active() -> bool:
    """Whether dispatches are timed now."""
    if _profiles > 0:
        return True
    if type(_ENV) is dict:
        v = _ENV.get(_ENV_KEY)
        return v is not None and v not in (b"", b"0", "", "0")
    return os.environ.get("GPUARRAY_GPU_TIMING", "") not in ("", "0")


@contextlib.contextmanager
def enabled() -> Iterator[None]:
    """Time dispatches inside this block."""
    global _profiles
    with _lock:
        _profiles += 1
    try:
        yield
    finally:
        with _lock:
            _profiles -= 1


def kernel_times(reset: bool = False) -> dict[str, tuple[int, int]]:
    """GPU time per kernel: name -> (dispatches, nanoseconds), summed since the last reset."""
    with _lock:
        out = {k: (v[0], v[1]) for k, v in _table.items()}
        if reset:
            _table.clear()
    return out


def kernel_name(kernel: Any) -> str:
    """A short name of a kernel's signature: its kind and ops, e.g. ``elementwise:exp,mul,sin``."""
    ops = [i.op for i in kernel.instrs if i.op not in ("input", "const", "view", "reshape")]
    seen = list(dict.fromkeys(ops))
    body = ",".join(seen[:8]) + (",..." if len(seen) > 8 else "")
    kind = kernel.kind
    if kind != "elementwise" and kernel.attrs and isinstance(kernel.attrs[0], str):
        kind = f"{kind}({kernel.attrs[0]})"            # reduce(sum), scan(cumulative_sum) ...
    return f"{kind}:{body}" if body else kind


class Label:
    """What a dispatch's time is charged to: a kernel name, and optionally a callback
    that receives the kernel's nanoseconds (possibly in several parts)."""

    __slots__ = ("name", "sink")

    def __init__(self, name: str, sink: Callable[[int], None] | None = None) -> None:
        self.name = name
        self.sink = sink


def supported(features: list[str]) -> bool:
    return all(f in features for f in FEATURES)


class GpuTimer:
    """Timestamps around the dispatches of one provider."""

    def __init__(self, provider: Any) -> None:
        self.p = provider
        self.wgpu = provider.wgpu
        self.period = _timestamp_period(provider.device)
        self.label: Label | None = None
        self._slab: list[Any] | None = None      # [query set, resolve buffer, readback buffer, labels]
        self._used: list[list[Any]] = []          # slabs written in the open pass
        self._pending: list[list[Any]] = []       # slabs submitted, not read yet
        self._free: list[list[Any]] = []

    @contextlib.contextmanager
    def scope(self, label: Label) -> Iterator[None]:
        old, self.label = self.label, label
        try:
            yield
        finally:
            self.label = old

    def _new_slab(self) -> list[Any]:
        if self._free:
            slab = self._free.pop()
            slab[3] = []
            return slab
        bu = self.wgpu.BufferUsage
        qs = self.p.device.create_query_set(type="timestamp", count=CAP)
        resolve = self.p.device.create_buffer(size=CAP * 8, usage=bu.QUERY_RESOLVE | bu.COPY_SRC)
        readback = self.p.device.create_buffer(size=CAP * 8, usage=bu.MAP_READ | bu.COPY_DST)
        return [qs, resolve, readback, []]

    def begin(self, cpass: Any) -> None:
        """Write the timestamp before a dispatch (call right before ``dispatch_workgroups``)."""
        from wgpu.backends.wgpu_native.extras import write_timestamp

        if self._slab is None or 2 * len(self._slab[3]) >= CAP:
            self._slab = self._new_slab()
            self._used.append(self._slab)
        i = len(self._slab[3])
        self._slab[3].append(self.label or Label("untracked"))
        write_timestamp(cpass, self._slab[0], 2 * i)

    def end(self, cpass: Any) -> None:
        from wgpu.backends.wgpu_native.extras import write_timestamp

        assert self._slab is not None
        write_timestamp(cpass, self._slab[0], 2 * len(self._slab[3]) - 1)

    def resolve(self, encoder: Any) -> None:
        """Record the resolves and copies for the pass just ended (before ``encoder.finish()``)."""
        for qs, resolve, readback, labels in self._used:
            n = 2 * len(labels)
            encoder.resolve_query_set(qs, 0, n, resolve, 0)
            encoder.copy_buffer_to_buffer(resolve, 0, readback, 0, n * 8)
        self._pending.extend(self._used)
        self._used = []
        self._slab = None

    def abandon(self) -> None:
        """The pass was dropped (device lost): forget its slabs."""
        self._used, self._pending, self._free, self._slab = [], [], [], None

    def harvest(self, limit: int | None = None) -> int:
        """Read the times of submitted passes (waits for them); returns the nanoseconds read."""
        total = 0
        todo = self._pending if limit is None else self._pending[:limit]
        self._pending = self._pending[len(todo):]
        per_label: dict[int, list[Any]] = {}
        for slab in todo:
            qs, _resolve, readback, labels = slab
            n = 2 * len(labels)
            readback.map_sync(self.wgpu.MapMode.READ, 0, n * 8)
            try:
                ts = np.frombuffer(readback.read_mapped(0, n * 8), dtype=np.uint64).astype(np.int64)
            finally:
                readback.unmap()
            dt = np.maximum(ts[1::2] - ts[0::2], 0) * self.period
            for label, ns in zip(labels, dt.tolist(), strict=True):
                entry = per_label.setdefault(id(label), [label, 0, 0])
                entry[1] += int(ns)
                entry[2] += 1
            self._free.append(slab)
        with _lock:
            for label, ns, count in per_label.values():
                row = _table.setdefault(label.name, [0, 0])
                row[0] += count
                row[1] += ns
                total += ns
        for label, ns, _count in per_label.values():
            if label.sink is not None:
                label.sink(ns)
        if per_label:
            _metrics.add("gpu_time_ns", total)
            _metrics.add("gpu_dispatches_timed", sum(c for _l, _n, c in per_label.values()))
        return total

    def backlog(self) -> int:
        return len(self._pending)


def _timestamp_period(device: Any) -> float:
    """Nanoseconds per timestamp tick (wgpuQueueGetTimestampPeriod; 1.0 if unavailable)."""
    try:
        from wgpu.backends.wgpu_native._ffi import lib
        period = float(lib.wgpuQueueGetTimestampPeriod(device.queue._internal))
        return period if period > 0 else 1.0
    except Exception:  # noqa: BLE001 - an older wgpu-native: assume nanoseconds
        return 1.0
