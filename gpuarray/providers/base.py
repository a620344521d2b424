"""The provider interface: memory, kernels, capabilities.

A provider that cannot run a kernel says why (``cannot_run``), and the
planner runs that kernel on the host instead (RunMat: missing features
return an error so callers can fall back).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ..compiler.kernel import Kernel


class Provider(Protocol):
    name: str
    host_memory: bool          # True when handles are host arrays (no transfers)

    def supports(self, dtype: np.dtype) -> bool: ...
    def cannot_run(self, kernel: Kernel) -> str | None: ...
    def upload(self, host: np.ndarray) -> Any: ...
    def download(self, handle: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray: ...
    def free(self, handle: Any) -> None: ...
    def run(self, batch: Sequence[tuple[Kernel, list[Any]]]) -> list[list[Any]]: ...
    def flush(self) -> None: ...
    def end_evaluation(self, quiet: bool = False) -> None: ...     # quiet: nothing profiled or timed
    def synchronize(self) -> None: ...
    def device_info(self) -> dict[str, Any]: ...
