"""Buffer pools: storage buffers and MAP_READ staging buffers.

A pool hands out buffers by size class and takes them back for reuse. It
counts the bytes it has handed out (``live``) and the bytes it keeps free
(``free_bytes``); both show in ``gpuarray.metrics()`` as
``device_bytes_live`` / ``device_bytes_pooled``.
"""

from __future__ import annotations

from typing import Any

from .. import _metrics

MIN_BYTES = 256
_MIB = 1 << 20


def size_class(nbytes: int, max_bytes: int | None = None) -> int:
    """Round up: powers of two to 1 MiB, then whole MiB steps of 1/8 of the power of two
    (never past ``max_bytes``: a request near the adapter's largest buffer gets its exact size)."""
    n = max(nbytes, MIN_BYTES)
    if n <= _MIB:
        cls = 1 << (n - 1).bit_length()
    else:
        step = max(_MIB, (1 << (n - 1).bit_length()) // 8)
        cls = (n + step - 1) // step * step
    if max_bytes is not None and cls > max_bytes >= n:
        cls = (n + 3) // 4 * 4
    return cls


def _alive(buf: Any) -> bool:
    return getattr(buf, "_internal", True) is not None


class BufferPool:
    """Reuses released buffers of the same size class and usage."""

    def __init__(self, device: Any, usage: int, keep_bytes: int, max_bytes: int | None = None) -> None:
        self.device = device
        self.usage = usage
        self.keep_bytes = keep_bytes
        self.max_bytes = max_bytes
        self.free: dict[int, list[Any]] = {}
        self.free_bytes = 0
        self.live = 0          # bytes handed out by get() and not yet put() back
        self.created = 0
        self.reused = 0
        self.dead = False      # the device is lost: forget everything, hand nothing out
        _metrics.register_gauges(self)

    def gauges(self) -> dict[str, int]:
        return {"device_bytes_live": self.live, "device_bytes_pooled": self.free_bytes}

    def get(self, nbytes: int) -> Any:
        cls = size_class(nbytes, self.max_bytes)
        lst = self.free.get(cls)
        while lst:
            buf = lst.pop()
            self.free_bytes -= cls
            if _alive(buf):
                self.reused += 1
                self.live += cls
                return buf
        buf = self.device.create_buffer(size=cls, usage=self.usage)
        self.created += 1
        self.live += cls
        return buf

    def put(self, buf: Any) -> None:
        """Keep ``buf`` for reuse; evict other size classes (largest first) to stay under the cap."""
        if self.dead:
            return
        cls = buf.size
        self.live -= cls
        if not _alive(buf):
            # a garbage-collected reference cycle can finalize the GPUBuffer before the
            # array that owns it: never pool a released buffer
            return
        if cls > self.keep_bytes:
            buf.destroy()
            return
        while self.free_bytes + cls > self.keep_bytes:
            victim = max((c for c, lst in self.free.items() if lst), default=None)
            if victim is None:
                break
            self.free[victim].pop().destroy()
            self.free_bytes -= victim
        self.free.setdefault(cls, []).append(buf)
        self.free_bytes += cls

    def clear(self) -> int:
        """Destroy every pooled buffer; returns the bytes released."""
        released = self.free_bytes
        for lst in self.free.values():
            for b in lst:
                b.destroy()
        self.free.clear()
        self.free_bytes = 0
        return released

    def abandon(self) -> None:
        """The device is gone: drop every reference and count nothing as held any more."""
        self.dead = True
        self.free.clear()
        self.free_bytes = 0
        self.live = 0
