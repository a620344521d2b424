"""Views of evaluated data in the schedule cache (compiler/plan_cache.py): a view's offset is not part of
the structure, so ``x[i:i + n] * w`` in a loop over ``i`` schedules once; each evaluation still reads its own
places (the template's view instructions take the new graph's), evaluation plans stay per offset, and a
graph that writes into a region keeps its views' offsets in the key (``regions`` compares places)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp


def test_sliding_windows_schedule_once_and_read_their_own_places(device: xp.Device, counted: list[int]) -> None:
    """Elementwise, reductions and row fusion over windows at random offsets (0 among them: fusion tests it),
    1-D, 2-D and reversed: each result as NumPy's, one schedule per structure and offset-zero class."""
    rng = np.random.default_rng(5)
    h = rng.uniform(-3, 3, 5000).astype(np.float32)
    hw = rng.uniform(0, 1, 256).astype(np.float32)
    hm = rng.uniform(-3, 3, (300, 40)).astype(np.float32)
    x, w, m = (xp.asarray(v, device=device) for v in (h, hw, hm))
    xr, hr = x[::-1], h[::-1]
    offsets = [0, *rng.integers(1, 4000, 23).tolist()]
    with xp.config(offload="always"):
        for i in offsets:
            j = (i * 7) % 4000
            # a multiply-add: a GPU compiler may contract it into an fma (WGSL allows it; the H200's does)
            np.testing.assert_allclose(np.asarray(x[i:i + 256] * w + x[j:j + 256]), h[i:i + 256] * hw + h[j:j + 256],
                                       rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(float(xp.sum(x[i:i + 256] * w)), float(np.sum(h[i:i + 256] * hw)), rtol=1e-5)
            np.testing.assert_array_equal(np.asarray(xr[i:i + 256] - 1), hr[i:i + 256] - 1)
            r, c = i % 250, i % 30
            win, hwin = m[r:r + 50, c:c + 10], hm[r:r + 50, c:c + 10]
            got = np.asarray(win - xp.mean(win, axis=1, keepdims=True) / xp.std(win, axis=1, keepdims=True))
            want = hwin - hwin.mean(axis=1, keepdims=True) / hwin.std(axis=1, keepdims=True)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # four structures (the first line's two reads and the window at offset 0 or not: at most 4 classes each)
    assert counted[0] <= 4 * 4, counted[0]


def test_offsets_alternating_in_a_loop_replay_their_own_plans(device: xp.Device) -> None:
    """Red-black style: two offsets of one structure in turn, many rounds (evaluation plans per offset)."""
    rng = np.random.default_rng(6)
    h = rng.uniform(-3, 3, 4097).astype(np.float32)
    x = xp.asarray(h, device=device)
    with xp.config(offload="always"):
        for k in range(12):
            o = 1 + k % 2
            got = np.asarray(x[o::2] * 0.5 + x[o - 1:4096:2][: len(h[o::2])])
            want = h[o::2] * np.float32(0.5) + h[o - 1:4096:2][: len(h[o::2])]
            np.testing.assert_array_equal(got, want)


def test_region_writes_keep_the_offsets_in_the_key(device: xp.Device, counted: list[int]) -> None:
    """A Jacobi-like update written into a window of a copy, the windows moving each step: as NumPy's."""
    rng = np.random.default_rng(7)
    h = rng.uniform(-3, 3, 600).astype(np.float32)
    with xp.config(offload="always"):
        for i in (0, 5, 17, 5, 0, 250):
            u, hu = xp.asarray(h, device=device), h.copy()
            u[i + 1:i + 99] = (u[i:i + 98] + u[i + 2:i + 100]) * 0.5
            hu[i + 1:i + 99] = (hu[i:i + 98] + hu[i + 2:i + 100]) * np.float32(0.5)
            u[i + 2:i + 50] = u[i + 1:i + 49] - u[i + 3:i + 51]
            hu[i + 2:i + 50] = hu[i + 1:i + 49] - hu[i + 3:i + 51]
            np.testing.assert_array_equal(np.asarray(u), hu)


def test_python_calls_of_a_sliding_window_loop(device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host work of a window at a new offset is the cached path's, not a fresh schedule's (cProfile, the
    development machine: 331 Python calls a window on the cpu device and 616 on wgpu with the offset in the
    key; 189 and 419 without, as many as at one offset on the cpu device; 235 on wgpu with one plan replayed
    at every offset, 191-209 at one offset). A read's spinning polls are left out: their count follows the
    GPU's timing (the H200 beside another suite: 334 a window with them, 227 here)."""
    import cProfile
    import pstats

    if device.kind != "cpu":
        from gpuarray.providers import wgpu_encode

        monkeypatch.setattr(wgpu_encode, "SPIN_READ_S", 0.0)

    rng = np.random.default_rng(8)
    x = xp.asarray(rng.uniform(-3, 3, 1 << 14).astype(np.float32), device=device)
    w = xp.asarray(rng.uniform(0, 1, 256).astype(np.float32), device=device)
    with xp.config(offload="always"):
        for i in range(5):
            np.asarray(x[i:i + 256] * w)
        pr = cProfile.Profile()
        pr.enable()
        for i in range(5, 25):
            np.asarray(x[i * 3:i * 3 + 256] * w)
        pr.disable()
    calls = pstats.Stats(pr).total_calls / 20           # type: ignore[attr-defined]
    assert not any("_schedule" in f[2] for f in pstats.Stats(pr).stats), "scheduled afresh"  # type: ignore[attr-defined]
    assert calls <= (250 if device.kind == "cpu" else 300), calls


def _count_plans(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """(plans recorded, plans replayed), counted from now on."""
    from gpuarray.runtime import planner, replay

    recorded, replays = [0], [0]
    real_rec, real_replay = replay.Recording, planner._replay

    def rec(*a: Any) -> Any:
        recorded[0] += 1
        return real_rec(*a)

    def rep(*a: Any, **k: Any) -> Any:
        replays[0] += 1
        return real_replay(*a, **k)
    monkeypatch.setattr(replay, "Recording", rec)
    monkeypatch.setattr(planner, "_replay", rep)
    replay.clear()
    return recorded, replays


def test_elementwise_and_reduction_windows_replay_one_plan_at_every_offset(wgpu_device: xp.Device,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Elementwise, reduction and row- or column-fused kernels' view offsets are words of their parameters, tagged
    (``const_tags.VOFFSET``): one plan each, recorded once, replays at every offset with the new places (a
    row loop, a window crossing 65535 elements included), and the results are NumPy's."""
    recorded, replays = _count_plans(monkeypatch)
    rng = np.random.default_rng(9)
    h = rng.uniform(-3, 3, 1 << 17).astype(np.float32)
    hw = rng.uniform(0, 1, 64).astype(np.float32)
    hm = rng.uniform(-3, 3, (400, 64)).astype(np.float32)
    x, w, m = (xp.asarray(v, device=wgpu_device) for v in (h, hw, hm))
    with xp.config(offload="always"):
        for i in range(1, 41):
            j = (i * 37) % 3000
            got = np.asarray(x[i * 5:i * 5 + 64] * w - x[j:j + 64] * 0.5)
            np.testing.assert_allclose(got, h[i * 5:i * 5 + 64] * hw - h[j:j + 64] * np.float32(0.5),
                                       rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(np.asarray(xp.sum(m[i * 5:i * 5 + 64] * 2, axis=0)),
                                       np.sum(hm[i * 5:i * 5 + 64] * 2, axis=0), rtol=1e-5, atol=1e-4)
            assert float(xp.max(m[i] - m[i + 1])) == float(np.max(hm[i] - hm[i + 1]))
            np.testing.assert_allclose(float(xp.sum(x[i * 99:i * 99 + 70000])),
                                       np.sum(h[i * 99:i * 99 + 70000], dtype=np.float64), rtol=1e-4)
            win, hwin = m[i * 5:i * 5 + 64, i % 8:i % 8 + 48], hm[i * 5:i * 5 + 64, i % 8:i % 8 + 48]
            e = xp.exp(win - xp.max(win, axis=1, keepdims=True))      # row-fused (softmax)
            he = np.exp(hwin - hwin.max(axis=1, keepdims=True))
            np.testing.assert_allclose(np.asarray(e / xp.sum(e, axis=1, keepdims=True)),
                                       he / he.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(np.asarray(xp.var(win, axis=0) + xp.mean(win, axis=0)),   # column-fused
                                       hwin.var(axis=0) + hwin.mean(axis=0), rtol=1e-4, atol=1e-5)
    assert recorded[0] <= 6 and replays[0] >= 6 * 40 - 6, (recorded, replays)


def test_a_window_of_other_kernels_stops_recording_until_its_offsets_repeat(wgpu_device: xp.Device,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A product of a moving window (a matmul lays its operands out from their views: plans per offset): at
    most ``replay.LOOSE_RECORDS`` plans recorded in a row with none replayed; an offset seen again is recorded
    and then replayed (a loop that settles)."""
    from gpuarray.runtime import replay

    recorded, replays = _count_plans(monkeypatch)
    rng = np.random.default_rng(10)
    h = rng.uniform(-3, 3, (1 << 10, 64)).astype(np.float32)
    hw = rng.uniform(-1, 1, (64, 16)).astype(np.float32)
    x, w = xp.asarray(h, device=wgpu_device), xp.asarray(hw, device=wgpu_device)
    with xp.config(offload="always"):
        for i in range(1, 41):
            got = np.asarray(x[i * 5:i * 5 + 64] @ w)
            np.testing.assert_allclose(got, h[i * 5:i * 5 + 64] @ hw, rtol=1e-4, atol=1e-4)
        assert recorded[0] == replay.LOOSE_RECORDS and replays[0] == 0, (recorded, replays)
        for _ in range(6):
            np.testing.assert_allclose(np.asarray(x[7:71] @ w), h[7:71] @ hw, rtol=1e-4, atol=1e-4)
    assert recorded[0] == replay.LOOSE_RECORDS + 1 and replays[0] == 4, (recorded, replays)
