"""Calibration of the planner's thresholds, stored per adapter in the user's cache directory.

``gpuarray.calibrate()`` times representative kernels on the host (NumPy) and
on the device (upload, kernel, download: what moving small host work to the
GPU costs) at growing sizes, finds where the device starts to win, and writes
the crossover sizes to ``<cache>/calibration/<adapter>.json``. Later processes
load them (``load``). The cache directory is ``GPUARRAY_CACHE_DIR``, else
``$XDG_CACHE_HOME/gpuarray``, else ``~/.cache/gpuarray``.
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..core import config as _config
from ..core.cache import adapter_key, cache_dir

_loaded: dict[str, dict[str, int]] = {}
_lock = threading.Lock()


def path_for(device: Any) -> Path:
    return cache_dir() / "calibration" / f"{adapter_key(device)}.json"


def load(device: Any) -> dict[str, int]:
    """Stored thresholds for ``device`` ({} when it was never calibrated)."""
    if device.kind == "cpu":
        return {}
    with _lock:
        if device.name not in _loaded:
            p = path_for(device)
            try:
                data = json.loads(p.read_text())
                _loaded[device.name] = {k: int(v) for k, v in data.get("thresholds", {}).items()}
            except (OSError, ValueError):
                _loaded[device.name] = {}
            _config.bump()
        return dict(_loaded[device.name])


def forget() -> None:
    """Drop thresholds loaded in this process (the next use re-reads the files)."""
    with _lock:
        _loaded.clear()
        _config.bump()


def _time(fn: Callable[[], Any], repeats: int) -> float:
    fn()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def _progress(done: int, total: int, label: str, enabled: bool) -> None:
    if not enabled:
        return
    width = 30
    fill = width * done // max(total, 1)
    sys.stderr.write(f"\rcalibrate [{'=' * fill}{' ' * (width - fill)}] {done}/{total} {label:<28}")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _workloads(xp: Any) -> dict[str, tuple[list[int], Callable[[int], tuple[Callable[..., Any], list[np.ndarray]]],
                                          Callable[[int], int]]]:
    def ew(n: int) -> tuple[Callable[..., Any], list[np.ndarray]]:
        rng = np.random.default_rng(n)
        return (lambda x, y: xp.exp(x) * y + 1.0), [rng.random(n, dtype=np.float32) for _ in range(2)]

    def red(n: int) -> tuple[Callable[..., Any], list[np.ndarray]]:
        return (lambda x: xp.sum(x)), [np.random.default_rng(n).random(n, dtype=np.float32)]

    def mm(n: int) -> tuple[Callable[..., Any], list[np.ndarray]]:
        rng = np.random.default_rng(n)
        return (lambda a, b: xp.matmul(a, b)), [rng.random((n, n), dtype=np.float32) for _ in range(2)]

    return {
        "elementwise": ([1 << k for k in range(8, 23, 2)], ew, lambda n: n),
        "reduction": ([1 << k for k in range(8, 23, 2)], red, lambda n: n),
        "matmul": ([16, 32, 64, 128, 256, 512], mm, lambda n: 2 * n**3),
    }


def calibrate(device: Any = None, *, repeats: int = 3, progress: bool = True,
              sizes: dict[str, list[int]] | None = None) -> dict[str, Any]:
    """Measure host-versus-device crossovers for ``device`` and store them.

    Returns ``{"thresholds": {...}, "measurements": [...], "path": ...}``. A kind
    whose device time never beats the host gets a threshold past the largest size.

    >>> import gpuarray as xp
    >>> xp.calibrate("cpu")["thresholds"]
    {}
    """
    xp = _api
    if xp is None:
        raise RuntimeError("calibrate: import gpuarray first (it registers the namespace calibration measures with)")
    dev = xp.Device(device) if isinstance(device, str) else (device or xp.default_device())
    if dev.kind == "cpu":
        return {"thresholds": {}, "measurements": [], "path": None}
    work = _workloads(xp)
    if sizes:
        work = {k: (sizes.get(k, v[0]), v[1], v[2]) for k, v in work.items()}
    total = sum(len(v[0]) for v in work.values())
    done = 0
    measurements: list[dict[str, Any]] = []
    thresholds: dict[str, int] = {}
    for kind, (ns, make, amount) in work.items():
        crossover = None
        for n in ns:
            fn, hosts = make(n)
            _progress(done, total, f"{kind} n={n}", progress)

            def on_host(fn: Callable[..., Any] = fn, hosts: list[np.ndarray] = hosts) -> Any:
                return np.asarray(fn(*(xp.asarray(h, device="cpu") for h in hosts)))

            def on_device(fn: Callable[..., Any] = fn, hosts: list[np.ndarray] = hosts) -> Any:
                with xp.config(offload="always"):
                    return np.asarray(fn(*(xp.asarray(h, device=dev) for h in hosts)))

            t_host, t_dev = _time(on_host, repeats), _time(on_device, repeats)
            measurements.append({"kind": kind, "n": n, "work": amount(n), "host_s": t_host, "device_s": t_dev})
            if t_dev < t_host and crossover is None:
                crossover = amount(n)
            elif t_dev >= t_host:
                crossover = None         # the device must win from here on
            done += 1
        thresholds[kind] = crossover if crossover is not None else 2 * amount(ns[-1])
    _progress(total, total, "done", progress)
    p = path_for(dev)
    p.parent.mkdir(parents=True, exist_ok=True)
    info = dev.provider.device_info()
    p.write_text(json.dumps({"adapter": info.get("name"), "backend": info.get("backend"),
                             "date": time.strftime("%Y-%m-%d %H:%M:%S"), "thresholds": thresholds,
                             "measurements": measurements}, indent=1))
    with _lock:
        _loaded[dev.name] = dict(thresholds)
        _config.bump()
    return {"thresholds": thresholds, "measurements": measurements, "path": str(p)}


_api: Any = None        # the gpuarray namespace, which calibrate() measures with (set by gpuarray/__init__)


def register_api(namespace: Any) -> None:
    """Set the namespace ``calibrate`` times its workloads with (the package registers itself)."""
    global _api
    _api = namespace
