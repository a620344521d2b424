"""Bind groups kept for reuse: a repeated evaluation binds the same buffers again.

Creating a bind group costs tens of microseconds of Python (wgpu-py builds its descriptor
structs), as much as the rest of a small dispatch. A repeated evaluation gets the same
buffers back from the pool (and the same offsets of the parameter arena, which is reset at
each submit), so its bind groups are the ones made the last time: they are kept by
``(layout, (buffer, offset, size) of each binding)``, most recently used last, up to
``capacity``.

An entry holds its buffers, so their ids cannot be reused while it lives. Buffers are only
destroyed by the buffer pool (``wgpu_pool.BufferPool``), which calls ``forget(buffer)`` first:
every entry that binds it is dropped. Dispatches that bind a buffer from outside the pool
(``provider.data_buffer``: new each time) are not kept; a kernel's 64-bit constants are bound
from buffers kept by value (``wide_buffers``, in the provider's ``KeptBuffers``), so that its bind
groups are kept too: every kernel kind binds them so, and a warm call makes no buffer for them.

>>> cache = BindGroupCache(capacity=2)
>>> len(cache)
0
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..render import const_tags

_BINDING = re.compile(r"@group\(0\)\s*@binding\((\d+)\)\s*var<(\w+)(?:\s*,\s*(\w+))?>")


def bindings_of(source: str) -> list[tuple[int, str]]:
    """(binding, WebGPU buffer binding type) of each group-0 buffer WGSL ``source`` declares.

    >>> bindings_of("@group(0) @binding(0) var<storage, read> prm: array<u32>;"
    ...             "@group(0) @binding(1) var<storage, read_write> out: array<f32>;")
    [(0, 'read-only-storage'), (1, 'storage')]
    """
    found = []
    for m in _BINDING.finditer(source):
        space, access = m.group(2), m.group(3) or "read"
        kind = "uniform" if space == "uniform" else "storage" if access == "read_write" else "read-only-storage"
        found.append((int(m.group(1)), kind))
    return sorted(found)


def bind_layout(device: Any, source: str) -> Any:
    """The bind-group layout of ``source``'s group 0, binding 0 (the parameters) with a dynamic
    offset: a dispatch's parameters sit at a new offset of the parameter arena each time, and
    with the offset given at ``set_bind_group`` a repeated dispatch binds the same bind group."""
    entries = [{"binding": b, "visibility": 4,      # wgpu.ShaderStage.COMPUTE
                "buffer": {"type": kind, "has_dynamic_offset": b == 0}} for b, kind in bindings_of(source)]
    return device.create_bind_group_layout(entries=entries)


class BindGroupCache:
    """Bind groups by layout and bound ranges; ``forget(buffer)`` before a buffer is destroyed."""

    def __init__(self, capacity: int = 512) -> None:
        self.capacity = capacity
        # a dict keeps insertion order: a hit is taken out and put back last (operators, not the
        # calls of OrderedDict.move_to_end and dict.get: this runs for every dispatch)
        self.entries: dict[tuple, tuple[Any, tuple]] = {}
        self.by_buffer: dict[int, set[tuple]] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, layout: Any, ranges: list[tuple[Any, int, int]], create: Callable[[], Any]) -> Any:
        """The bind group of ``layout`` over ``ranges`` (buffer, offset, size), made by ``create()``
        on a miss."""
        key = (layout, *ranges)      # buffers and layouts hash by identity (no Python __hash__)
        entries = self.entries
        try:
            hit = entries[key]
        except KeyError:
            pass
        else:
            del entries[key]            # most recently used last
            entries[key] = hit
            self.hits += 1
            return hit[0]
        group = create()
        self.misses += 1
        buffers = tuple(b for b, _o, _s in ranges)
        self.entries[key] = (group, (layout, *buffers))
        for b in buffers:
            self.by_buffer.setdefault(id(b), set()).add(key)
        if len(self.entries) > self.capacity:
            self._drop(next(iter(self.entries)))
        return group

    def forget(self, buffer: Any) -> None:
        """Drop every bind group that binds ``buffer`` (it is about to be destroyed)."""
        for key in self.by_buffer.pop(id(buffer), ()):
            self._drop(key)

    def clear(self) -> None:
        self.entries.clear()
        self.by_buffer.clear()

    def _drop(self, key: tuple) -> None:
        entry = self.entries.pop(key, None)
        if entry is None:
            return
        for b in entry[1][1:]:
            keys = self.by_buffer.get(id(b))
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self.by_buffer[id(b)]


class KeptBuffers:
    """Read-only buffers made once per key (``make(values)``) and kept, the least recently used
    dropped first, in two tables of their own capacity: a kernel's 64-bit constants (keys that begin
    with ``"wide"``: one entry per distinct value, ``wide_capacity``) and the rest (FFT twiddles,
    ``capacity``), so that a loop over ever new constants cannot push a twiddle table out.

    >>> from types import SimpleNamespace
    >>> kept = KeptBuffers(lambda v: SimpleNamespace(size=len(v)), capacity=1, wide_capacity=2)
    >>> for key in [("twiddles", 8), ("wide", 1), ("wide", 2), ("wide", 1), ("wide", 3)]:
    ...     _ = kept.get(key, lambda: b"abcd")
    >>> sorted(kept.tables[0]), sorted(kept.tables[1])
    ([('twiddles', 8)], [('wide', 1), ('wide', 3)])
    """

    def __init__(self, make: Callable[[Any], Any], capacity: int = 32, wide_capacity: int = 256) -> None:
        self.make = make
        self.capacity = (capacity, wide_capacity)
        self.tables: tuple[dict[tuple, tuple[Any, int, int]], ...] = ({}, {})     # oldest first

    def __len__(self) -> int:
        return len(self.tables[0]) + len(self.tables[1])

    def clear(self) -> None:
        for table in self.tables:
            table.clear()

    def get(self, key: tuple, values: Callable[[], Any]) -> tuple[Any, int, int]:
        """The buffer of ``key`` as a ``(buffer, 0, size)`` range, made from ``values()`` on a miss."""
        wide = key[0] == "wide"
        table = self.tables[wide]
        hit = table.pop(key, None)
        if hit is None:
            buf = self.make(values())
            hit = (buf, 0, int(buf.size))
            if len(table) >= self.capacity[wide]:
                del table[next(iter(table))]
        table[key] = hit                    # most recently used last
        return hit


def wide_buffers(provider: Any, r: Any, kernel: Any) -> list[Any]:
    """The 64-bit constants of the rendered kernel ``r`` (``r.wide_values(kernel)``) as read-only
    buffers kept by value (``provider.static_buffer``): a repeated dispatch creates no buffer, and
    its bind group comes from the cache (``provider.data_buffer``'s would be new each time)."""
    if not r.wide:
        return []
    tags: list[list[tuple]] | None = [] if const_tags.sink.tags is not None else None   # recorded for replay
    out = [provider.static_buffer(("wide", v.dtype.str, v.tobytes()), lambda v=v: v)
           for v in r.wide_values(kernel, tags).values()]
    if tags is not None:
        for hit, tl in zip(out, tags, strict=True):
            const_tags.note(hit[0], tl)
    return out
