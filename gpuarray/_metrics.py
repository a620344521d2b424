"""Process-wide counters: what was compiled, dispatched and moved.

>>> import gpuarray
>>> sorted(gpuarray.metrics())[:3]
['bytes_downloaded', 'bytes_uploaded', 'dispatches']
"""

from __future__ import annotations

import threading

_KEYS = (
    "kernels_compiled", "pipeline_cache_hits", "dispatches", "submits", "evaluations",
    "bytes_uploaded", "bytes_downloaded", "host_fallbacks", "host_kernels",
)
_counters: dict[str, int] = dict.fromkeys(_KEYS, 0)
_lock = threading.Lock()


def add(key: str, amount: int = 1) -> None:
    with _lock:
        _counters[key] = _counters.get(key, 0) + amount


def metrics() -> dict[str, int]:
    """A snapshot of the counters since the last ``reset_metrics()``."""
    with _lock:
        return dict(_counters)


def reset_metrics() -> None:
    """Set every counter back to zero."""
    with _lock:
        for k in _counters:
            _counters[k] = 0
