"""Bind groups kept for reuse (providers/wgpu_bindings.py): a repeated evaluation binds the same
pool buffers again and reuses the bind group; a buffer the pool destroys takes its bind groups
with it; results stay right when a reused buffer holds new data."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np

import gpuarray as xp
from gpuarray.providers.wgpu_bindings import BindGroupCache

from .conftest import assert_same


def assert_within_one_ulp(got: xp.GpuArray, want: np.ndarray, *terms: np.ndarray) -> None:
    """``got`` within one ULP of ``want``, measured at the magnitude of the largest of ``terms`` where that is
    larger: a driver may contract ``a * b + c`` into one fused multiply-add, which rounds once where NumPy
    rounds twice (docs/user-guide.md, "Fused multiply-adds"; NVIDIA's Vulkan driver does). That moves the
    result by at most one ULP of the larger of ``a * b`` and ``c``, which is more ULPs of the result where
    the two cancel."""
    g = np.asarray(got)
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, g.shape, want.dtype, want.shape)
    mag = np.abs(want)
    for t in terms:
        mag = np.maximum(mag, np.abs(np.broadcast_to(t, want.shape)).astype(want.dtype))
    err = np.abs(g.astype(np.float64) - want.astype(np.float64))
    bad = err > np.spacing(mag).astype(np.float64)
    assert not bad.any(), f"{int(bad.sum())} values more than one ULP off, e.g. {g[bad][:4]} for {want[bad][:4]}"


class _Buf:
    """A stand-in for a GPU buffer."""


def test_cache_keys_evicts_and_forgets() -> None:
    made: list[int] = []

    def create() -> int:
        made.append(len(made))
        return made[-1]
    c = BindGroupCache(capacity=2)
    layout, a, b, p = object(), _Buf(), _Buf(), _Buf()
    assert c.get(layout, [(p, 0, 16), (a, 0, 64)], create) == 0
    assert c.get(layout, [(p, 0, 16), (a, 0, 64)], create) == 0          # same ranges: the same group
    assert c.get(layout, [(p, 256, 16), (a, 0, 64)], create) == 1        # another offset: another group
    assert c.get(layout, [(p, 0, 16), (a, 0, 32)], create) == 2          # another size; capacity 2 evicts 0
    assert len(c) == 2 and c.hits == 1 and c.misses == 3
    assert c.get(layout, [(p, 0, 16), (a, 0, 64)], create) == 3          # evicted: made again
    c.get(layout, [(p, 0, 16), (b, 0, 64)], create)
    c.forget(a)                                                          # a is destroyed: its groups go
    assert len(c) == 1 and all(id(a) not in k for k in c.entries)
    assert set(c.by_buffer) == {id(p), id(b)}
    c.forget(p)
    assert len(c) == 0 and not c.by_buffer


def test_cache_evicts_the_least_recently_used() -> None:
    """A hit makes its entry the most recently used: the eviction takes the oldest other one."""
    made: list[int] = []

    def create() -> int:
        made.append(len(made))
        return made[-1]
    c = BindGroupCache(capacity=2)
    layout, a, b, d, p = object(), _Buf(), _Buf(), _Buf(), _Buf()
    assert c.get(layout, [(p, 0, 16), (a, 0, 64)], create) == 0
    assert c.get(layout, [(p, 0, 16), (b, 0, 64)], create) == 1
    assert c.get(layout, [(p, 0, 16), (a, 0, 64)], create) == 0          # a hit: a's group is the newest
    assert c.get(layout, [(p, 0, 16), (d, 0, 64)], create) == 2          # evicts b's, not a's
    assert c.get(layout, [(p, 0, 16), (a, 0, 64)], create) == 0
    assert c.get(layout, [(p, 0, 16), (b, 0, 64)], create) == 3          # b's was evicted: made again
    assert c.hits == 2 and c.misses == 4 and len(c) == 2
    assert set(c.by_buffer) == {id(p), id(a), id(b)}                     # d's group was evicted with d


def test_repeated_evaluation_reuses_bind_groups(wgpu_device: xp.Device) -> None:
    prov: Any = wgpu_device.provider
    h = np.linspace(-2, 2, 4096, dtype=np.float32)
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        for _ in range(3):                       # the pool hands the same output buffer back
            xp.evaluate(x * 3 + 1)
        # arrays of earlier tests that the garbage collector frees between the evaluations below put
        # their buffers on top of the pool's free list (seen in cold full runs on the H200, after a
        # collect too): the reuse must show in one of three rounds, not necessarily the first
        counts = []
        for _round in range(3):
            gc.collect()
            xp.synchronize(wgpu_device)     # small evaluations share a pass (end_evaluation); each below starts one
            hits, misses = prov.bindings.hits, prov.bindings.misses
            for i in range(5):
                y = x * 3 + float(i)                 # a new constant: the plan replayed with its words
                # x * 3 + i: one fused multiply-add where the driver contracts it (the H200), within one ULP
                assert_within_one_ulp(y, h * 3 + np.float32(i), h * 3, np.float32(i))
                del y
            counts.append((prov.bindings.hits - hits, prov.bindings.misses - misses))
            if counts[-1][1] <= 1:
                break
        # no new bind group (misses); the replayed program binds those of its last runs without a
        # lookup while the pool hands it the same buffers, else finds them in the cache (hits)
        assert counts[-1][1] <= 1, f"(hits, misses) of each round: {counts}"
        # new data in reused buffers: each result is computed from its own inputs
        for i in range(4):
            z = xp.asarray(h + i, device=wgpu_device)
            assert_same(xp.sin(z) * 2, np.sin(h + i) * 2, rtol=4e-7, atol=1e-7)
            del z


def test_destroyed_buffers_take_their_bind_groups(wgpu_device: xp.Device) -> None:
    prov: Any = wgpu_device.provider
    h = np.arange(1000, dtype=np.float32)
    with xp.config(offload="always"):
        x = xp.asarray(h, device=wgpu_device)
        for _ in range(2):
            xp.evaluate(x + 1)
        del x                                    # its buffer, and the results', are free in the pool
        xp.synchronize(wgpu_device)
        freed = [b for lst in prov.pool.free.values() for b in lst]
        assert any(id(b) in prov.bindings.by_buffer for b in freed)     # bound by kept bind groups
        prov.release_pooled()                    # destroys every free pool buffer
        bound = [b for _group, (_layout, *bufs) in prov.bindings.entries.values() for b in bufs]
        assert not any(b is f for b in bound for f in freed)
        assert not any(id(f) in prov.bindings.by_buffer for f in freed)
        x = xp.asarray(h, device=wgpu_device)   # new buffers, maybe at the ids of destroyed ones
        assert_same(x + 1, h + 1)
        assert_same(x * 2 - 1, h * 2 - 1)


def test_pool_evicts_the_buffers_released_longest_ago() -> None:
    """Past its cap the pool evicts the buffer released longest ago, whatever its size: an array of two
    parts released after a stale larger buffer keeps both parts (largest-first eviction dropped the
    larger part each time, and a repeated call made it again); ``device_buffers_created`` counts makes."""
    from types import SimpleNamespace

    from gpuarray.providers.wgpu_pool import BufferPool
    made: list[int] = []
    destroyed: list[int] = []

    class Buf(SimpleNamespace):
        def destroy(self) -> None:
            destroyed.append(self.size)

    dev = SimpleNamespace(create_buffer=lambda size, usage: made.append(size) or Buf(size=size))
    pool = BufferPool(dev, 0, keep_bytes=10 << 20, max_bytes=8 << 20)
    before = xp.metrics()["device_buffers_created"]
    stale = pool.get(6 << 20)
    pool.put(stale)                                 # an earlier array's buffer, never asked for again
    for _ in range(3):                              # a repeated call's result: parts of 4 MiB and 2 MiB
        a, b = pool.get(4 << 20), pool.get(2 << 20)
        pool.put(a)
        pool.put(b)
    assert made == [6 << 20, 4 << 20, 2 << 20]      # the parts made once, reused twice
    assert destroyed == [6 << 20]                   # the stale buffer went, not the larger part
    assert pool.free_bytes == 6 << 20 and pool.live == 0
    assert xp.metrics()["device_buffers_created"] - before == 3
