"""Where an array's data lives: on the host, on a device, or both.

Data is immutable once written, so a host copy and a device copy can both be
kept; a transfer happens only when a consumer needs the data where it is not,
and each transfer is counted in ``metrics()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _metrics
from ._errors import DeviceLostError


class Data:
    """The realized contents of one node: a host array and/or a device handle."""

    __slots__ = ("host", "handle", "provider", "dtype", "shape", "__weakref__")

    def __init__(self, dtype: np.dtype, shape: tuple[int, ...], host: np.ndarray | None = None,
                 handle: Any = None, provider: Any = None) -> None:
        self.dtype = dtype
        self.shape = shape
        self.host = host
        self.handle = handle
        self.provider = provider

    @classmethod
    def from_host(cls, host: np.ndarray, device: Any = None) -> Data:
        host = np.ascontiguousarray(host).view()   # a view: the caller's flags stay as they were
        host.flags.writeable = False
        return cls(host.dtype, tuple(host.shape), host=host)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def on_device(self, provider: Any) -> bool:
        return self.handle is not None and self.provider is provider

    def get_host(self) -> np.ndarray:
        """The data as a read-only C-contiguous host array (downloads once if needed)."""
        if self.host is None:
            if getattr(self.provider, "lost", None) is not None:
                raise self.lost_error()
            try:
                host = self.provider.download(self.handle, self.dtype, self.shape)
            except DeviceLostError as exc:
                raise self.lost_error() from exc
            _metrics.add("bytes_downloaded", host.nbytes)
            host.flags.writeable = False
            self.host = host
        return self.host

    def get_handle(self, provider: Any) -> Any:
        """The data as a handle of ``provider`` (uploads once if needed)."""
        if provider.host_memory:
            return self.get_host()
        if self.handle is not None and self.provider is provider:
            return self.handle
        host = self.get_host()
        if self.handle is not None:
            self.release()
        self.handle = provider.upload(host)
        self.provider = provider
        _metrics.add("bytes_uploaded", host.nbytes)
        return self.handle

    def lost_error(self) -> DeviceLostError:
        """The error for reading data whose only copy was on a device that was lost."""
        p = self.provider
        name = getattr(p, "device_name", getattr(p, "name", "a device"))
        return DeviceLostError(
            f"this {self.dtype} array of shape {self.shape} was computed on {name}, which was lost "
            f"({p.lost}), and it had no host copy: its contents are gone. Evaluated arrays keep "
            "their data, not the expression that computed them, so it cannot be recomputed; "
            "compute it again from its inputs", device=name, reason=str(p.lost))

    def release(self) -> None:
        if self.handle is not None and self.provider is not None:
            try:
                self.provider.free(self.handle)
            except Exception:  # noqa: BLE001 - freeing during interpreter shutdown
                pass
        self.handle = None

    def __del__(self) -> None:
        self.release()
