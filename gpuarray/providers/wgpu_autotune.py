"""Autotuning of kernel configurations per adapter, remembered in the calibration cache.

The first time a tunable kernel (today: large float32 matmul) runs on an
adapter, ``tune`` times each candidate configuration on a synthetic problem
of the same size class: it submits a few dispatches of each in a command
buffer of its own, waits for the queue and keeps the fastest median. The
result is kept in memory for the provider and written to
``<cache>/calibration/<adapter>.autotune.json`` (the cache directory of
``gpuarray.runtime.calibration``: ``GPUARRAY_CACHE_DIR``, else
``$XDG_CACHE_HOME/gpuarray``, else ``~/.cache/gpuarray``), so later processes
reuse it without timing anything. The file records ``VERSION``: a change of
the kernels' code bumps it and old choices are ignored.

``GPUARRAY_MATMUL_AUTOTUNE`` controls it:

- ``auto`` (default): tune on GPUs; on CPU adapters (lavapipe, llvmpipe) never
  tune and ignore stored choices, so results there stay deterministic;
- ``off`` (or ``0``): never tune, ignore stored choices (built-in rules);
- ``on`` (or ``1``): tune on every adapter, CPU ones included.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..core import cache as _cache

ENV = "GPUARRAY_MATMUL_AUTOTUNE"
VERSION = 1                 # bump when a tuned kernel's code changes: stored choices are then ignored
BUDGET_S = 1.0              # stop timing further candidates past this (compilation included)
TARGET_S = 0.004            # wall time one timed submission of a candidate aims at

_lock = threading.RLock()
_choices: weakref.WeakKeyDictionary[Any, dict[str, str]] = weakref.WeakKeyDictionary()


@dataclass
class Trial:
    """One candidate's dispatch: WGSL source, ``prm`` array, bound buffers (after ``prm``), workgroups."""

    source: str
    prm: np.ndarray
    buffers: Sequence[Any]
    groups: int


def mode() -> str:
    """``auto``, ``off`` or ``on``, from ``GPUARRAY_MATMUL_AUTOTUNE``."""
    raw = os.environ.get(ENV, "").strip().lower()
    if raw in ("", "auto"):
        return "auto"
    if raw in ("0", "off", "false", "no"):
        return "off"
    if raw in ("1", "on", "true", "yes"):
        return "on"
    raise ValueError(f"{ENV}={raw!r}; expected auto, on or off")


def enabled(provider: Any) -> bool:
    """Whether choices are tuned and used on this provider's adapter."""
    m = mode()
    if m == "off":
        return False
    return m == "on" or str(provider.adapter.info.get("adapter_type")) != "CPU"


def path_for(provider: Any) -> Path:
    key = _cache.adapter_key(SimpleNamespace(kind="wgpu", provider=provider))
    return _cache.cache_dir() / "calibration" / f"{key}.autotune.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("choices"), dict):
        return {}
    return data


def _loaded(provider: Any) -> dict[str, str]:
    """The provider's choices, read from the cache file on first use."""
    with _lock:
        got = _choices.get(provider)
        if got is None:
            data = _read(path_for(provider))
            got = {k: v["best"] for k, v in data.get("choices", {}).items()
                   if isinstance(v, dict) and isinstance(v.get("best"), str)}
            _choices[provider] = got
        return got


def lookup(provider: Any, key: str) -> str | None:
    """The stored choice for ``key`` on this adapter, or None (never tuned, or tuning disabled)."""
    if not enabled(provider):
        return None
    return _loaded(provider).get(key)


def forget() -> None:
    """Drop choices held in memory (the next lookup re-reads the cache files)."""
    with _lock:
        _choices.clear()


def _bind(provider: Any, layout: Any, prm: np.ndarray, buffers: Sequence[Any]) -> Any:
    dev = provider.device
    pbuf = dev.create_buffer_with_data(data=prm, usage=provider.wgpu.BufferUsage.STORAGE)
    entries = [{"binding": 0, "resource": {"buffer": pbuf}}]
    for b, h in enumerate(buffers, start=1):
        res = {"buffer": h.buffer, "offset": 0, "size": max(h.nbytes, 16)} if hasattr(h, "nbytes") else {"buffer": h}
        entries.append({"binding": b, "resource": res})
    return dev.create_bind_group(layout=layout, entries=entries)


def time_trial(provider: Any, trial: Trial, target_s: float = TARGET_S) -> float:
    """Seconds per dispatch of ``trial``: a warm-up submission, then the median of 3 submissions of
    several dispatches each, waiting for the queue after each (device time plus one submit's latency)."""
    pipeline, layout = provider.pipeline_for(trial.source)
    bind = _bind(provider, layout, trial.prm, trial.buffers)
    gx = min(trial.groups, provider.max_groups)
    gy = -(-trial.groups // gx)
    dev = provider.device
    bu = provider.wgpu.BufferUsage
    # wait for the queue by mapping a buffer copied after the dispatches (wgpu-py 0.32's
    # on_submitted_work_done fails); the provider's own open pass is left alone
    src = dev.create_buffer(size=4, usage=bu.COPY_SRC | bu.STORAGE)
    dst = dev.create_buffer(size=4, usage=bu.MAP_READ | bu.COPY_DST)

    def run(n: int) -> float:
        t0 = time.perf_counter()
        enc = dev.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(pipeline)
        p.set_bind_group(0, bind, [0])
        for _ in range(n):
            p.dispatch_workgroups(gx, gy, 1)
        p.end()
        enc.copy_buffer_to_buffer(src, 0, dst, 0, 4)
        dev.queue.submit([enc.finish()])
        dst.map_sync(provider.wgpu.MapMode.READ, 0, 4)
        dst.unmap()
        return time.perf_counter() - t0

    warm = run(1)
    reps = max(2, min(20, int(target_s / max(warm, 1e-6))))
    return statistics.median(run(reps) / reps for _ in range(3))


def tune(provider: Any, key: str, trials: Mapping[str, Callable[[], Trial]],
         budget_s: float = BUDGET_S, persist: bool = True) -> str | None:
    """Time each candidate (in order, until ``budget_s`` is spent), remember the fastest for ``key``
    and store it in the cache file; returns its name. ``trials`` maps names to trial builders.

    A candidate that fails (a shader the driver rejects) is skipped and recorded; when every one
    fails the result is None and nothing is remembered. A lost device is raised."""
    start = time.perf_counter()
    times: dict[str, float] = {}
    failed: dict[str, str] = {}
    for name, make in trials.items():
        if (times or failed) and time.perf_counter() - start > budget_s:
            break
        try:
            times[name] = time_trial(provider, make())
        except Exception as exc:  # noqa: BLE001 - any wgpu error; a lost device is raised below
            if "lost" in str(exc).lower() or getattr(provider, "lost", None) is not None:
                raise
            failed[name] = f"{type(exc).__name__}: {str(exc).strip()[:300]}"
    best = min(times, key=lambda n: times[n]) if times else None
    with _lock:
        _loaded(provider)[key] = best or ""      # "": tried and failed, not again in this process
        if persist:
            _store(provider, key, best, times, failed, time.perf_counter() - start)
    return best


def _store(provider: Any, key: str, best: str | None, times: dict[str, float], failed: dict[str, str],
           spent: float) -> None:
    path = path_for(provider)
    data = _read(path)
    info = provider.device_info()
    data.update(version=VERSION, adapter=info.get("name"), backend=info.get("backend"))
    entry: dict[str, Any] = {"best": best, "ms": {n: round(t * 1e3, 4) for n, t in times.items()},
             "tuning_s": round(spent, 3), "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    if failed:
        entry["failed"] = failed
    if best is None:          # nothing usable: keep the record, but lookups ignore it
        entry.pop("best")
    data.setdefault("choices", {})[key] = entry
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, path)
    except OSError:
        pass            # a read-only cache only costs tuning again in the next process
