"""Elementwise kernels that read an operand transposed run through shared-memory tiles on wgpu
(``render/wgsl_tiled.py``): every result equals NumPy's, at sizes that are not multiples of the
tile, with offsets, negative strides, batches, broadcast operands and several outputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler.schedule import schedule
from gpuarray.render import wgsl_tiled
from gpuarray.render.wgsl_tiled import transposed_views

from .conftest import assert_same

RNG = np.random.default_rng(11)


def _tiled(provider: Any) -> int:
    return sum(1 for k in provider.rendered if "tiled" in str(k[0]))


@pytest.mark.parametrize("shape", [(32, 32), (33, 65), (100, 37), (257, 129), (31, 40)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64, np.uint8])
def test_transposed_operands(wgpu_device: xp.Device, shape: tuple[int, int], dtype: Any) -> None:
    if dtype == np.float64 and not wgpu_device.provider.supports(np.dtype(np.float64)):
        pytest.skip("no float64 on this adapter")
    h = RNG.uniform(-30, 30, shape).astype(dtype)
    sq = RNG.uniform(-3, 3, (shape[0], shape[0])).astype(dtype)
    x, s = xp.asarray(h, device=wgpu_device), xp.asarray(sq, device=wgpu_device)
    with xp.config(offload="always"):
        assert_same(x.T * 2 + 1, h.T * dtype(2) + dtype(1))
        assert_same(s + s.T, sq + sq.T)
        assert_same(s.T - s, sq.T - sq)
        assert_same(s.T > s, sq.T > sq)


def test_views_offsets_negative_strides_and_broadcasts(wgpu_device: xp.Device) -> None:
    h = RNG.uniform(-3, 3, (130, 90)).astype(np.float32)
    row = RNG.uniform(-3, 3, 70).astype(np.float32)
    col = RNG.uniform(-3, 3, (80, 1)).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device)
    r, c = xp.asarray(row, device=wgpu_device), xp.asarray(col, device=wgpu_device)
    with xp.config(offload="always"):
        assert_same(xp.maximum(x[5:75, 3:83].T * r, c), np.maximum(h[5:75, 3:83].T * row, col))   # no fma to contract
        assert_same(x[::-1, ::2].T + 1, h[::-1, ::2].T + np.float32(1))
        assert_same(xp.maximum(x.T[10:50, 7:120], 0.5), np.maximum(h.T[10:50, 7:120], np.float32(0.5)))


def test_several_outputs_and_a_batch(wgpu_device: xp.Device) -> None:
    h = RNG.uniform(-3, 3, (3, 70, 50)).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        t = xp.permute_dims(x, (0, 2, 1))
        a, b = t + 1, t * t
        xp.evaluate(a, b)
        assert_same(a, h.transpose(0, 2, 1) + np.float32(1))
        assert_same(b, h.transpose(0, 2, 1) * h.transpose(0, 2, 1))


def test_tiled_kernel_is_chosen(wgpu_device: xp.Device) -> None:
    x = xp.asarray(np.ones((64, 64), np.float32), device=wgpu_device)
    assert [transposed_views(k) for k in schedule([(x + x.T)._node])] == [(1,)]
    assert [transposed_views(k) for k in schedule([(x + x)._node])] == [()]
    small = xp.asarray(np.ones((16, 64), np.float32), device=wgpu_device)
    assert [transposed_views(k) for k in schedule([(small.T + 1)._node])] == [()]     # under a tile
    with xp.config(offload="always"):
        before = _tiled(wgpu_device.provider)
        xp.evaluate(x + x.T * 3)
        assert _tiled(wgpu_device.provider) == before + 1


def test_big_tiles_where_they_fit(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """One 32-bit transposed operand: 64 x 64 tiles (swizzled columns); float64 or two operands: 32 x 32;
    BIG_TILE = 32 gives the small tiles everywhere (a separate rendering: the tile is in the cache key)."""
    h = RNG.uniform(-3, 3, (200, 130)).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device)
    kernel = schedule([(x.T * 2)._node])[-1]
    views = transposed_views(kernel)
    assert wgsl_tiled.tile_for(kernel, views) == 64
    two = schedule([(x.T * 2 + xp.asarray(h, device=wgpu_device).T)._node])[-1]
    assert wgsl_tiled.tile_for(two, transposed_views(two)) == 32
    with xp.config(offload="always"):
        assert_same(x.T * 2, h.T * np.float32(2))
        monkeypatch.setattr(wgsl_tiled, "BIG_TILE", 32)
        assert wgsl_tiled.tile_for(kernel, views) == 32
        assert_same(x.T * 2, h.T * np.float32(2))


def test_more_tiles_than_one_grid_dimension(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """65535 workgroups per grid dimension: 70000 x 40 transposed needs 4376, 2^21 x 32 needs 65536
    with 32 x 32 tiles (64 x 64 tiles would need 2^28 elements to cross it: too big here)."""
    monkeypatch.setattr(wgsl_tiled, "BIG_TILE", 32)
    h = RNG.uniform(-3, 3, (1 << 21, 32)).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        y = x.T + 1
        got = np.asarray(y)
    assert np.array_equal(got, h.T + np.float32(1))


@pytest.mark.parametrize("shape", [(32, 32), (64, 64), (200, 64), (130, 70)])
def test_writes_through_a_transposed_view_read_elsewhere(wgpu_device: xp.Device, shape: tuple[int, int]) -> None:
    """A transposed view read at other elements than the thread's own (``flip(v)`` of a write ``v += 1``
    through ``v = a.T``, a masked ``copyto`` of ``v``'s flip, ``v.T``) is not read through the tiles, which
    hold only the thread's elements: from 32 x 32 on these came out wrong (the differential fuzz found
    ``np.copyto(v, v[::-1, ::-1], where=m)``)."""
    h = RNG.integers(-9, 9, shape).astype(np.int32)
    mask = RNG.random(shape[::-1]) < 0.5

    def flip_after_add(m: Any, a: Any) -> Any:
        v = a.T
        v += 1
        return v[::-1, ::-1] * 1

    def transpose_after_add(m: Any, a: Any) -> Any:
        v = a.T
        v[...] = v + 1
        return v.T * 1

    def masked_copies(m: Any, a: Any) -> Any:
        v = a.T
        np.copyto(v, v[::-1, ::-1], where=mask)
        np.copyto(v, v[::-1, ::-1], where=mask)
        v *= 2
        return v

    with xp.config(offload="always"):
        for prog in (flip_after_add, transpose_after_add, masked_copies):
            assert_same(prog(xp, xp.asarray(h.copy(), device=wgpu_device)), prog(np, h.copy()))
    x = xp.asarray(h, device=wgpu_device)
    v = x.T
    v += 1
    assert [transposed_views(k) for k in schedule([(v[::-1, ::-1] * 1)._node])] == [()]
