"""Process-wide counters: what was compiled, dispatched and moved.

Two entries are gauges rather than counters: ``device_bytes_live`` (bytes of
device buffers that arrays hold now) and ``device_bytes_pooled`` (bytes of
free buffers the providers keep for reuse). They are summed over every live
buffer pool and ``reset_metrics()`` leaves them alone.

>>> import gpuarray
>>> sorted(gpuarray.metrics())[:3]
['bytes_downloaded', 'bytes_uploaded', 'device_bytes_live']
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

_KEYS = (
    "kernels_compiled", "pipeline_cache_hits", "dispatches", "submits", "evaluations",
    "bytes_uploaded", "bytes_downloaded", "host_fallbacks", "host_kernels",
    "eager_host_ops", "device_buffers_created",
)
GAUGES = ("device_bytes_live", "device_bytes_pooled")
_counters: dict[str, int] = dict.fromkeys(_KEYS, 0)
_lock = threading.Lock()
# Objects with a ``gauges() -> dict[str, int]`` method (the wgpu buffer pools).
_gauge_sources: weakref.WeakSet[Any] = weakref.WeakSet()


def add(key: str, amount: int = 1) -> None:
    with _lock:
        _counters[key] = _counters.get(key, 0) + amount


def add_replayed(amount: int) -> None:
    """Count a replayed evaluation plan (``replay.py``): one evaluation, ``amount`` dispatches of
    pipelines found in the cache."""
    with _lock:
        _counters["evaluations"] += 1
        _counters["dispatches"] += amount
        _counters["pipeline_cache_hits"] += amount


def register_gauges(source: Any) -> None:
    """Sum ``source.gauges()`` into ``metrics()`` for as long as ``source`` lives."""
    with _lock:
        _gauge_sources.add(source)


def gauges() -> dict[str, int]:
    out = dict.fromkeys(GAUGES, 0)
    with _lock:
        sources = list(_gauge_sources)
    for s in sources:
        for k, v in s.gauges().items():
            out[k] = out.get(k, 0) + v
    return out


def metrics() -> dict[str, int]:
    """A snapshot of the counters since the last ``reset_metrics()``, and the memory gauges."""
    with _lock:
        out = dict(_counters)
    out.update(gauges())
    return out


def reset_metrics() -> None:
    """Set every counter back to zero (the gauges keep measuring what is held now)."""
    with _lock:
        for k in _counters:
            _counters[k] = 0
