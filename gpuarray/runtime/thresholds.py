"""Placement thresholds: the element (or FLOP) counts below which the planner keeps work on the host.

The defaults (``DEFAULT_THRESHOLDS``; ``CPU_ELEMENTWISE`` for the cpu device), a device's calibration
(``runtime/calibration.py``), the environment (``ENV_THRESHOLDS``) and ``config``, in increasing priority.

>>> import gpuarray as xp
>>> with xp.config(elementwise_threshold=100):
...     thresholds(xp.Device("cpu"))["elementwise"]
100
"""

from __future__ import annotations

import os
from typing import Any

from ..core import config as _config
from . import calibration as _calibration

DEFAULT_THRESHOLDS: dict[str, int] = {"elementwise": 1 << 16, "reduction": 1 << 16, "matmul": 1 << 22}
# The cpu device's elementwise threshold (no GPU to offload to: it sets how large an operation on
# evaluated host arrays is computed at once with NumPy, unfused): on the 2-core development machine,
# wall ms lazy (fused, blocked) -> at once, float32, NumPy in brackets: x + y 2^16 0.044 -> 0.011 (0.005),
# 2^20 0.197 -> 0.157 (0.106); chain8 2^16 0.306 -> 0.204 (0.176), 2^20 3.75 -> 3.22 (2.85); from 2^21 the
# fused kernel wins for memory-bound chains (x * 2 + 1: 0.569 against 0.611), so below 2^21.
CPU_ELEMENTWISE = 1 << 21
ENV_THRESHOLDS: dict[str, str] = {
    "elementwise": "GPUARRAY_ELEMENTWISE_THRESHOLD", "reduction": "GPUARRAY_REDUCTION_THRESHOLD",
    "matmul": "GPUARRAY_MATMUL_THRESHOLD",
}


def _base_thresholds(device: Any) -> dict[str, int]:
    """The thresholds for ``device`` from the defaults, its calibration and the environment."""
    out = dict(DEFAULT_THRESHOLDS)
    if getattr(device, "kind", None) == "cpu":
        out["elementwise"] = CPU_ELEMENTWISE
    out.update(_calibration.load(device))
    for kind, var in ENV_THRESHOLDS.items():
        if os.environ.get(var, "").strip():
            out[kind] = int(os.environ[var])
    return out


# os.environ re-encodes keys and values on every read (~0.7 us): the caches of ``thresholds`` and of
# ``runtime.eager.limit_now`` compare the raw values, ``env_raw(env_key(name))`` (None where this os.environ
# has no raw mapping: then nothing is cached)
_ENV_RAW: Any = getattr(os.environ, "_data", None)
_RAW_OK = _ENV_RAW is not None and hasattr(os.environ, "encodekey")
env_raw: Any = _ENV_RAW.get if _RAW_OK else (lambda key: None)


def env_key(name: str) -> Any:
    """The raw mapping's key of environment variable ``name`` for ``env_raw``; None where there is none."""
    return os.environ.encodekey(name) if _RAW_OK else None      # type: ignore[attr-defined]


_ENV_KEYS: tuple | None = tuple([env_key(v) for v in ENV_THRESHOLDS.values()]) if _RAW_OK else None
# the last answer: (device, config context, config generation, raw environment values, thresholds); loading or
# dropping a calibration bumps the generation
_last_thresholds: tuple = (None, None, -1, None, {})


def thresholds(device: Any) -> dict[str, int]:
    """The effective thresholds for ``device``, with their source applied in priority order (a repeated
    question for one device, with the same settings and environment, is answered from the last one)."""
    global _last_thresholds
    c = _last_thresholds
    raw = tuple([env_raw(k) for k in _ENV_KEYS]) if _ENV_KEYS is not None else None
    local, generation = _config.token()
    if c[0] is device and c[1] is local and c[2] == generation and raw is not None and c[3] == raw:
        return dict(c[4])
    out = _base_thresholds(device)
    for kind in ENV_THRESHOLDS:
        explicit = _config.get(f"{kind}_threshold")
        if explicit is not None:
            out[kind] = int(explicit)
    _last_thresholds = (device, *_config.token(), raw, dict(out))      # (loading a calibration bumps it)
    return out
