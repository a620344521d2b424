"""Errors that name a device fault: out of device memory, and a lost device.

>>> import gpuarray as xp
>>> issubclass(xp.OutOfMemoryError, MemoryError), issubclass(xp.DeviceLostError, RuntimeError)
(True, True)
"""

from __future__ import annotations


class OutOfMemoryError(MemoryError):
    """A device allocation failed, even after the pooled buffers were released and it was retried.

    ``requested`` is the number of bytes asked for, ``device`` the device's name,
    ``live`` and ``pooled`` the bytes the provider held when it gave up.
    """

    def __init__(self, message: str, *, requested: int = 0, device: str = "", live: int = 0,
                 pooled: int = 0) -> None:
        super().__init__(message)
        self.requested = requested
        self.device = device
        self.live = live
        self.pooled = pooled


class DeviceLostError(RuntimeError):
    """The device went away (driver reset, ``device.destroy()``, a crashed shader).

    The next use of the device starts a new one. Arrays that also have a host copy
    survive; an array whose only copy was on the lost device is computed again on the
    new one from the arrays it was computed from, if they still exist (their own lost
    data first); otherwise it raises this error, naming its dtype and shape, when it is
    read. ``device`` is the device's name and ``reason`` what wgpu said.
    """

    def __init__(self, message: str, *, device: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.device = device
        self.reason = reason


def _fmt_bytes(n: int) -> str:
    """``1536`` -> ``'1.5 KiB'``; exact byte counts stay in the message next to this."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover
