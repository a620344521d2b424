"""Where gpuarray keeps per-user caches (calibration, autotuning, compiled kernels), and the
file-name-safe identity of an adapter that names their files.

The cache directory is ``GPUARRAY_CACHE_DIR``, else ``$XDG_CACHE_HOME/gpuarray``, else
``~/.cache/gpuarray``.

>>> file_safe("NVIDIA H200 / Vulkan")
'NVIDIA_H200_Vulkan'
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any


def cache_dir() -> Path:
    """Where gpuarray keeps per-user caches (calibration, compiled kernels)."""
    if os.environ.get("GPUARRAY_CACHE_DIR"):
        return Path(os.environ["GPUARRAY_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpuarray"


def file_safe(raw: str) -> str:
    """``raw`` with every run of characters unsafe in a file name replaced by ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", raw).strip("_")


def adapter_key(device: Any) -> str:
    """A file-name-safe identity of the device's adapter and driver."""
    if device.kind == "cpu":
        return "host"
    info = device.provider.device_info()
    raw = f"{info.get('name')}-{info.get('backend')}-{info.get('description')}"
    return file_safe(raw)[:120]
