"""Chains of writes into regions (``a[i] = v`` in a Python loop) run as one ``regions`` kernel
(``compiler/regions.py``): the array under the chain copied once, each value computed over its own region
and stored there in order. Results against NumPy on both providers: rows, columns, strided and reversed
regions, overlapping writes, values read from the array itself, versions of the array read in the middle
of a chain, dtypes, and the evaluation and dispatch counts."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler import regions
from gpuarray.compiler.schedule import schedule


def _pair(device: xp.Device, base: np.ndarray) -> tuple[xp.GpuArray, np.ndarray]:
    return xp.asarray(base, device=device), base.copy()


def _kinds(a: xp.GpuArray) -> list[str]:
    return [k.kind for k in schedule([a._node])]


def test_row_loop_is_one_regions_kernel(device: xp.Device) -> None:
    rng = np.random.default_rng(0)
    src = rng.uniform(-3, 3, (40, 33)).astype(np.float32)
    b = xp.asarray(src, device=device)
    a, n = _pair(device, np.zeros((40, 33), np.float32))
    before = xp.metrics()["evaluations"]
    for i in range(40):
        a[i] = b[i] * 2 - 1
        n[i] = src[i] * 2 - 1
    assert xp.metrics()["evaluations"] == before           # nothing evaluated while recording
    assert _kinds(a) == ["regions"]
    assert regions.chain_length(a._node) == 40
    d0 = xp.metrics()["dispatches"]
    assert np.array_equal(np.asarray(a), n)
    if device.name.startswith("wgpu"):
        assert xp.metrics()["dispatches"] - d0 == 2        # the copy, then the 40 writes (disjoint rows) at once


def test_short_chains_stay_fused(device: xp.Device) -> None:
    a, n = _pair(device, np.zeros((6, 5), np.float32))
    for i in range(regions.REGIONS_MIN - 1):
        a[i % 6, 1:] = i
        n[i % 6, 1:] = i
    assert _kinds(a) == ["elementwise"]
    assert np.array_equal(np.asarray(a), n)


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "uint8", "bool", "complex64"])
def test_regions_of_every_kind(device: xp.Device, dt: str) -> None:
    """Columns, strided and reversed regions, 3-d blocks, overlapping writes (the later wins), scalars,
    host arrays, device arrays and broadcast values."""
    if not device.supports(dt):
        pytest.skip(f"no {dt} on this device")
    rng = np.random.default_rng(1)
    base = (rng.uniform(-30, 30, (9, 10, 7))).astype(dt)
    a, n = _pair(device, base)
    other = (rng.uniform(-3, 3, (9, 10, 7)) * 5).astype(dt)
    o = xp.asarray(other, device=device)
    keys = [np.s_[1], np.s_[:, 3], np.s_[::2, 1:9:3, -1], np.s_[::-2, 4], np.s_[2:7, ::-3, 1:6],
            np.s_[..., 0], np.s_[-1, -1], np.s_[3:5], np.s_[0, :, ::-1], np.s_[4:8, 2:9, 2:4], np.s_[8, 9],
            np.s_[1:3, :, 5]]
    for k, key in enumerate(keys):
        region = n[key].shape
        if k % 3 == 0:
            v_np = other[key]
            v = o[key]
        elif k % 3 == 1:
            v_np = np.asarray(k * 3 if dt == "uint8" else (k - 5) * 3, dtype=dt)
            v = v_np[()]
        else:
            lo = 0 if dt == "uint8" else -9
            v_np = (rng.uniform(lo, 9, region[-1:]) if region else rng.uniform(lo, 9, ())).astype(dt)
            v = v_np
        a[key] = v
        n[key] = v_np
    assert regions.chain_length(a._node) >= regions.REGIONS_MIN
    fallbacks = xp.metrics()["host_fallbacks"]
    assert np.array_equal(np.asarray(a), n)
    assert xp.metrics()["host_fallbacks"] == fallbacks        # on the device where the device has the dtype


def test_values_reading_the_array(device: xp.Device) -> None:
    """A value that reads the array being written (a recurrence) is not a clean write: it sees every
    write before it, as in NumPy."""
    a, n = _pair(device, np.arange(30, dtype=np.float32).reshape(10, 3))
    for i in range(1, 10):
        a[i] = a[i - 1] * 2 + 1
        n[i] = n[i - 1] * 2 + 1
    a[0] = a[9] - 3
    n[0] = n[9] - 3
    assert np.array_equal(np.asarray(a), n)


def test_versions_read_in_the_middle(device: xp.Device) -> None:
    """An expression over the array taken in the middle of a chain, and a view of a row, see what NumPy's
    would; the chain is cut there (that version is computed once, both read it)."""
    a, n = _pair(device, np.zeros((20, 4), np.float32))
    row = a[5]
    for i in range(12):
        a[i] = i + 1
        n[i] = i + 1
    mid = a.sum(axis=1) * 1.0
    mid_n = n.sum(axis=1)
    for i in range(8, 20):
        a[i] = -i
        n[i] = -i
    total = xp.sum(a)
    assert np.array_equal(np.asarray(mid), mid_n)
    assert float(total) == float(n.sum())
    assert np.array_equal(np.asarray(row), n[5])
    assert np.array_equal(np.asarray(a), n)


def test_two_arrays_written_in_one_loop(device: xp.Device) -> None:
    a, na = _pair(device, np.zeros((16, 8), np.float32))
    c, nc = _pair(device, np.ones((8, 16), np.float32))
    for i in range(16):
        a[i] = i
        na[i] = i
        c[:, i] = a[i] * 3         # reads the chain of a: not clean, but correct
        nc[:, i] = na[i] * 3
    got = xp.stack([a, c.T])
    assert np.array_equal(np.asarray(got), np.stack([na, nc.T]))


def test_chain_is_evaluated_every_chain_max_writes(device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regions, "CHAIN_MAX", 16)
    a, n = _pair(device, np.zeros((50, 3), np.float32))
    before = xp.metrics()["evaluations"]
    for i in range(50):
        a[i] = i
        n[i] = i
    assert xp.metrics()["evaluations"] - before == 3       # at writes 17, 33 and 49
    assert regions.chain_length(a._node) == 2
    assert np.array_equal(np.asarray(a), n)


def test_repeated_loops_replay_with_new_values(device: xp.Device) -> None:
    """The same loop twice (one structure: the plan is reused) over new data gives the new values."""
    rng = np.random.default_rng(2)
    for trial in range(3):
        src = rng.uniform(-3, 3, (12, 5)).astype(np.float32)
        b = xp.asarray(src, device=device)
        a = xp.zeros((12, 5), dtype=xp.float32, device=device)
        for i in range(12):
            a[i] = b[11 - i] + trial
        assert np.array_equal(np.asarray(a), src[::-1] + trial)


def test_large_dimensions(device: xp.Device) -> None:
    """Regions along an axis longer than 65535 (the workgroup-count limit in one dimension)."""
    a, n = _pair(device, np.zeros((3, 70000), np.float32))
    for i in range(9):
        a[i % 3, i::9] = i + 0.5
        n[i % 3, i::9] = i + 0.5
    a[:, 69999] = -1
    n[:, 69999] = -1
    assert np.array_equal(np.asarray(a), n)


def test_empty_and_zero_size(device: xp.Device) -> None:
    a, n = _pair(device, np.zeros((0, 4), np.float32))
    for i in range(10):
        a[:, i % 4] = i
        n[:, i % 4] = i
    assert np.asarray(a).shape == (0, 4)
    b, m = _pair(device, np.zeros((10, 4), np.float32))
    for i in range(10):
        b[i, 2:2] = 5
        b[i, :1] = i
        m[i, :1] = i
    assert np.array_equal(np.asarray(b), m)


def test_writes_through_views(device: xp.Device) -> None:
    """Writes through views of an array (``setstrided``: a row view, a column view, a transposed view, a
    strided view of a reshaped array) are writes of a chain too."""
    a, n = _pair(device, np.zeros((12, 10), np.float32))
    src = np.arange(120, dtype=np.float32).reshape(12, 10)
    b = xp.asarray(src, device=device)
    t, tn = a.T, n.T
    for i in range(10):
        row = a[i]
        row[...] = b[i] + 1
        n[i] = src[i] + 1
        col = t[i]                  # column i of a
        col[...] = -i
        tn[i] = -i
    assert a._view is not None and regions.chain_length(a._view.storage.node) == 20
    assert np.array_equal(np.asarray(a), n)
    for i in range(10):
        col = t[i]
        col[::3] = i * 10           # the value reads the column it replaces: not clean, evaluated as before
        tn[i][::3] = i * 10
    flat = a.reshape(-1)            # a view of a's memory
    flat[5::17] = 99
    n.reshape(-1)[5::17] = 99
    assert np.array_equal(np.asarray(a), n)
    assert np.array_equal(np.asarray(t), tn)


@pytest.mark.parametrize("step", [3, 5, 15, 17, 51, 255, 257, 7])
def test_strided_write_leaves_the_element_before_its_start(device: xp.Device, step: int) -> None:
    """``a[s::step] = v`` changes nothing before ``s``: on the NVIDIA driver a signed remainder of a negative
    offset came out as the unsigned one's, and every step dividing 2^32 - 1 also wrote ``a[s - 1]``."""
    n = 3 * step + 4
    for start in (1, 2, step - 1, step + 1):
        a, m = _pair(device, np.arange(n, dtype=np.float32))
        a[start::step] = -1
        m[start::step] = -1
        b, k = _pair(device, np.arange(2 * n, dtype=np.int32).reshape(2, n))
        b[:, start::step] = -7
        k[:, start::step] = -7
        assert np.array_equal(np.asarray(a), m) and np.array_equal(np.asarray(b), k), (step, start)


def test_disjoint_agrees_with_numpy_on_random_places() -> None:
    """``regions.disjoint`` (its shortcut for places that hold every element of their extent: flips and
    transposes of the region written, no NumPy call) against ``np.shares_memory`` on random strided places
    of one buffer, dense and not, overlapping and not, with negative strides and empty ones."""
    rng = np.random.default_rng(7)
    buf = np.empty(4096, np.uint8)
    seen = {True: 0, False: 0}
    for _ in range(3000):
        places, arrays = [], []
        for _ in range(2):
            nd = int(rng.integers(1, 4))
            shape = tuple(int(d) for d in rng.integers(0, 6, nd))
            if rng.random() < 0.5:          # dense: a permutation and flips of C strides
                st = list(np.cumprod((1,) + shape[:0:-1])[::-1])
                perm = rng.permutation(nd)
                shape, st = tuple(shape[i] for i in perm), [int(st[i]) for i in perm]
            else:
                st = [int(s) for s in rng.integers(1, 12, nd)]
            st = [-s if rng.random() < 0.3 else s for s in st]
            lo = sum((d - 1) * s for d, s in zip(shape, st) if s < 0 and d > 0)
            off = int(rng.integers(-lo, 40 - lo))
            places.append(regions.place(off, shape, tuple(st)))
            arrays.append(np.lib.stride_tricks.as_strided(buf[off:], shape, tuple(st)))
        want = not np.shares_memory(arrays[0], arrays[1])
        assert regions.disjoint(places[0], places[1]) == want, places
        seen[want] += 1
    assert min(seen.values()) > 300


def test_disjoint_of_shifted_lattices_is_exact() -> None:
    """Two places of one lattice shifted (a stencil's views against the region it writes: equal sizes and
    strides, some flipped) are decided by arithmetic (``regions._same_lattice``), exactly as
    ``np.shares_memory`` with unbounded effort, including strided lattices that interleave without meeting."""
    rng = np.random.default_rng(11)
    buf = np.empty(8192, np.uint8)
    seen = {True: 0, False: 0}
    used = 0
    for _ in range(3000):
        nd = int(rng.integers(1, 4))
        shape = tuple(int(d) for d in rng.integers(1, 7, nd))
        st, size = [], 1
        for d in reversed(shape):                   # C strides of a base with gaps between rows
            size *= int(rng.integers(1, 3))
            st.insert(0, size)
            size *= d
        st = [s * int(rng.choice([1, 2, 3])) if i == len(st) - 1 else s for i, s in enumerate(st)]
        places, arrays = [], []
        for _ in range(2):
            sgn = [-s if rng.random() < 0.3 else s for s in st]
            lo = sum((d - 1) * s for d, s in zip(shape, sgn) if s < 0)
            off = int(rng.integers(-lo, 200 - lo))
            places.append(regions.place(off, shape, tuple(sgn)))
            arrays.append(np.lib.stride_tricks.as_strided(buf[off:], shape, tuple(sgn)))
        used += regions._same_lattice(*places) is not None
        want = not np.shares_memory(arrays[0], arrays[1], max_work=None)
        assert regions.disjoint(places[0], places[1]) == want, places
        seen[want] += 1
    assert min(seen.values()) > 300 and used > 2000
