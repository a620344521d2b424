"""Size-class pools of wgpu buffers: storage buffers and MAP_READ staging buffers."""

from __future__ import annotations

from typing import Any

MIN_BYTES = 256
_MIB = 1 << 20


def size_class(nbytes: int) -> int:
    """Round up: powers of two to 1 MiB, then whole MiB steps of 1/8 of the power of two."""
    n = max(nbytes, MIN_BYTES)
    if n <= _MIB:
        return 1 << (n - 1).bit_length()
    step = max(_MIB, (1 << (n - 1).bit_length()) // 8)
    return (n + step - 1) // step * step


def _alive(buf: Any) -> bool:
    return getattr(buf, "_internal", True) is not None


class BufferPool:
    """Reuses released buffers of the same size class and usage."""

    def __init__(self, device: Any, usage: int, keep_bytes: int) -> None:
        self.device = device
        self.usage = usage
        self.keep_bytes = keep_bytes
        self.free: dict[int, list[Any]] = {}
        self.free_bytes = 0
        self.created = 0
        self.reused = 0

    def get(self, nbytes: int) -> Any:
        cls = size_class(nbytes)
        lst = self.free.get(cls)
        while lst:
            buf = lst.pop()
            self.free_bytes -= cls
            if _alive(buf):
                self.reused += 1
                return buf
        self.created += 1
        return self.device.create_buffer(size=cls, usage=self.usage)

    def put(self, buf: Any) -> None:
        """Keep ``buf`` for reuse; evict other size classes (largest first) to stay under the cap."""
        if not _alive(buf):
            # a garbage-collected reference cycle can finalize the GPUBuffer before the
            # array that owns it: never pool a released buffer
            return
        cls = buf.size
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

    def clear(self) -> None:
        for lst in self.free.values():
            for b in lst:
                b.destroy()
        self.free.clear()
        self.free_bytes = 0
