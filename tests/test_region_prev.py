"""Writes in Python loops whose values read the array they write (``a[i] *= 2``, ``col += v`` through a
view, recurrences ``a[i] = a[i - 1] * c + b[i]``): a chain of them is one ``regions`` kernel whose passes read
the array from the result as the passes before left it (``compiler/regions.py``, ``rprev``). Reads that would
race with the pass's own stores (the region read shifted or reversed) are not taken into a chain and stay
right. Results against NumPy on both providers, with the evaluation and dispatch counts."""

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


def _wgpu(device: xp.Device) -> bool:
    return device.name.startswith("wgpu")


def test_in_place_row_updates_are_one_kernel(device: xp.Device) -> None:
    rng = np.random.default_rng(0)
    a, n = _pair(device, rng.uniform(-30, 30, (40, 33)).astype(np.float32))
    before = xp.metrics()["evaluations"]
    for i in range(40):
        a[i] *= 2
        a[i] += i
        n[i] *= 2
        n[i] += i
    assert xp.metrics()["evaluations"] == before            # nothing evaluated while recording
    assert regions.chain_length(a._node) == 80              # a[i] = (a[i] *= 2) wrote nothing new
    assert _kinds(a) == ["regions"]
    d0, f0 = xp.metrics()["dispatches"], xp.metrics()["host_fallbacks"]
    assert np.array_equal(np.asarray(a), n)
    if _wgpu(device):
        # the copy, then one pass a write: a row's two updates (two shaders, one region) cannot share one
        assert xp.metrics()["dispatches"] - d0 == 81
        assert xp.metrics()["host_fallbacks"] == f0


def test_column_views_updated_in_place(device: xp.Device) -> None:
    rng = np.random.default_rng(1)
    a, n = _pair(device, rng.uniform(-3, 3, (17, 24)).astype(np.float32))
    s = rng.uniform(-3, 3, 24).astype(np.float32)
    for j in range(24):
        col = a[:, j]
        col *= s[j]
        col -= 1
        n[:, j] *= s[j]
        n[:, j] -= 1
    assert _kinds(a) == ["regions"]
    assert np.array_equal(np.asarray(a), n)


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "uint8", "bool", "complex64"])
def test_updates_of_every_dtype(device: xp.Device, dt: str) -> None:
    """Row and strided-column updates that read the element they replace, of every dtype."""
    if not device.supports(dt):
        pytest.skip(f"no {dt} on this device")
    rng = np.random.default_rng(2)
    base = (rng.uniform(-30, 30, (12, 9)) if dt != "uint8" else rng.uniform(0, 250, (12, 9))).astype(dt)
    a, n = _pair(device, base)
    for i in range(12):
        if dt == "bool":
            a[i] ^= i % 2 == 0
            n[i] ^= i % 2 == 0
        else:
            a[i] = a[i] * 3 + 1
            n[i] = n[i] * 3 + 1
    for j in range(0, 9, 2):
        col = a[::2, j]
        if dt == "bool":
            col |= j % 4 == 0
            n[::2, j] |= j % 4 == 0
        else:
            col -= 2
            n[::2, j] -= 2
    assert _kinds(a) == ["regions"]
    got = np.asarray(a)
    assert got.dtype == n.dtype
    if dt in ("float32", "float64", "complex64"):
        np.testing.assert_allclose(got, n, rtol=1e-6)
    else:
        assert np.array_equal(got, n)


def test_recurrence_over_rows(device: xp.Device) -> None:
    """Each row reads the row written just before it: one kernel, passes in order."""
    rng = np.random.default_rng(3)
    bh = rng.uniform(-3, 3, (64, 40)).astype(np.float32)
    b = xp.asarray(bh, device=device)
    a, n = _pair(device, np.zeros((64, 40), np.float32))
    a[0] = b[0]
    n[0] = bh[0]
    before = xp.metrics()["evaluations"]
    for i in range(1, 64):
        a[i] = a[i - 1] * 0.5 + b[i]
        n[i] = n[i - 1] * 0.5 + bh[i]
    assert xp.metrics()["evaluations"] == before
    assert _kinds(a) == ["regions"]
    np.testing.assert_allclose(np.asarray(a), n, rtol=1e-5, atol=1e-6)


def test_running_sum_over_columns_and_copies(device: xp.Device) -> None:
    """Columns reading their own elements and the column before (interleaved in memory, disjoint), plain
    copies of another region (``a[i] = a[i - 1]``: a value that is a view of the array)."""
    rng = np.random.default_rng(4)
    a, n = _pair(device, rng.integers(-1000, 1000, (30, 20)).astype(np.int32))
    for j in range(1, 20):
        a[:, j] = a[:, j] + a[:, j - 1]
        n[:, j] = n[:, j] + n[:, j - 1]
    for i in range(1, 30, 3):
        a[i] = a[i - 1]
        n[i] = n[i - 1]
    assert _kinds(a) == ["regions"]
    assert np.array_equal(np.asarray(a), n)


@pytest.mark.parametrize("case", ["shifted", "reversed", "transposed"])
def test_reads_that_would_race_stay_right(device: xp.Device, case: str) -> None:
    """A value reading its own region at other elements (shifted, reversed, transposed) is computed
    before the write in NumPy; it is not a clean write here and its result is NumPy's."""
    rng = np.random.default_rng(5)
    a, n = _pair(device, rng.uniform(-3, 3, (10, 10)).astype(np.float32))
    for i in range(10):
        if case == "shifted":
            a[i, 1:] = a[i, :-1] * 2
            n[i, 1:] = n[i, :-1] * 2
        elif case == "reversed":
            a[i] = a[i, ::-1] + 1
            n[i] = n[i, ::-1] + 1
        else:
            a[i:, i] = a[i, i:] - 1
            n[i:, i] = n[i, i:] - 1
    assert np.array_equal(np.asarray(a), n)


def test_overlapping_updates_in_order(device: xp.Device) -> None:
    """Each write's region overlaps the one before: every pass reads what the previous one stored."""
    a, n = _pair(device, np.ones((20, 6), np.float32))
    for i in range(18):
        a[i:i + 3] *= 2
        a[i:i + 3, 1::2] += 1
        n[i:i + 3] *= 2
        n[i:i + 3, 1::2] += 1
    assert _kinds(a) == ["regions"]
    assert np.array_equal(np.asarray(a), n)


def test_a_version_read_elsewhere_is_kept(device: xp.Device) -> None:
    """A read of the array between two writes (``s`` below) keeps that version: the chain is cut there."""
    rng = np.random.default_rng(6)
    a, n = _pair(device, rng.uniform(-3, 3, (24, 8)).astype(np.float32))
    kept, kept_np = [], []
    for i in range(24):
        if i % 5 == 0:
            kept.append(a[i] * 3)
            kept_np.append(n[i] * 3)
        a[i] *= 2
        n[i] *= 2
    total = a.sum()
    got = [np.asarray(k) for k in kept]
    for g, k in zip(got, kept_np, strict=True):
        assert np.array_equal(g, k)
    assert np.array_equal(np.asarray(a), n)
    np.testing.assert_allclose(float(total), float(n.sum()), rtol=1e-5)


def test_chain_max_with_reads_of_the_array(device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regions, "CHAIN_MAX", 16)
    a, n = _pair(device, np.arange(60 * 5, dtype=np.int64).reshape(60, 5))
    before = xp.metrics()["evaluations"]
    for i in range(1, 60):
        a[i] += a[i - 1]
        n[i] += n[i - 1]
    assert xp.metrics()["evaluations"] - before == 3        # at 16, 32 and 48 pending writes
    assert np.array_equal(np.asarray(a), n)


def test_rows_past_the_workgroup_limit(device: xp.Device) -> None:
    rng = np.random.default_rng(7)
    a, n = _pair(device, rng.uniform(-3, 3, (9, 70001)).astype(np.float32))
    for i in range(1, 9):
        a[i] += a[i - 1]
        n[i] += n[i - 1]
    assert _kinds(a) == ["regions"]
    np.testing.assert_allclose(np.asarray(a), n, rtol=1e-5, atol=1e-5)


def test_writing_a_region_back_is_no_write(device: xp.Device) -> None:
    a, n = _pair(device, np.arange(12.0).reshape(4, 3))
    node = a._node
    a[1] = a[1]
    a[:, 2] = a[:, 2]
    assert a._node is node
    t = a[2]
    t *= 2
    after = a._node
    a[2] = t                                      # Python's second half of ``a[2] *= 2``
    assert a._node is after
    n[2] *= 2
    assert np.array_equal(np.asarray(a), n)


def test_special_values_pass_through(device: xp.Device) -> None:
    base = np.array([[np.nan, -0.0, np.inf], [-np.inf, 1.0, -1.0]] * 5, np.float32)
    a, n = _pair(device, base)
    for i in range(10):
        a[i] *= -1
        n[i] *= -1
    got = np.asarray(a)
    assert np.array_equal(got, n, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(n))


def test_a_source_read_by_views_in_a_loop_lists_only_live_members(device: xp.Device) -> None:
    """``b[i]`` for every row lists a member of ``b``'s storage per view; dead ones are dropped as the
    list grows (a source never written kept one per view taken before)."""
    rows = 1000                                 # (3000 took 45 s of CI on lavapipe; 1000 are five times the bound)
    b = xp.asarray(np.arange(rows * 4.0).reshape(rows, 4), device=device)
    a = xp.zeros((rows, 4), device=device)
    keep = b[5]
    for i in range(rows):
        a[i] = b[i] * 2
    members = b._view.storage.members
    assert len(members) < 200
    assert any(r() is keep for r in members)
    assert np.array_equal(np.asarray(a), np.arange(rows * 4.0).reshape(rows, 4) * 2)
    assert np.array_equal(np.asarray(keep), [20.0, 21.0, 22.0, 23.0])


def test_gauss_seidel_sweep(device: xp.Device) -> None:
    """Each interior row from the row above (already updated) and the row below (not yet): NumPy's order."""
    rng = np.random.default_rng(8)
    a, n = _pair(device, rng.uniform(-3, 3, (32, 20)).astype(np.float64))
    for _sweep in range(2):
        for i in range(1, 31):
            a[i, 1:-1] = (a[i - 1, 1:-1] + a[i + 1, 1:-1] + a[i, :-2] * 0 + a[i, 1:-1]) / 3
            n[i, 1:-1] = (n[i - 1, 1:-1] + n[i + 1, 1:-1] + n[i, :-2] * 0 + n[i, 1:-1]) / 3
    np.testing.assert_allclose(np.asarray(a), n, rtol=1e-12)


def test_gauss_seidel_without_the_shifted_read_is_one_kernel(device: xp.Device) -> None:
    rng = np.random.default_rng(9)
    a, n = _pair(device, rng.uniform(-3, 3, (32, 20)).astype(np.float32))
    for i in range(1, 31):
        a[i] = (a[i - 1] + a[i + 1] + a[i]) / 3
        n[i] = (n[i - 1] + n[i + 1] + n[i]) / 3
    assert _kinds(a) == ["regions"]
    np.testing.assert_allclose(np.asarray(a), n, rtol=1e-5, atol=1e-6)


def test_real_and_imaginary_parts_updated_in_a_loop(device: xp.Device) -> None:
    if not device.supports("complex64"):
        pytest.skip("no complex64 on this device")
    rng = np.random.default_rng(10)
    base = (rng.uniform(-3, 3, (12, 5)) + 1j * rng.uniform(-3, 3, (12, 5))).astype(np.complex64)
    a, n = _pair(device, base)
    re, im = a.real, a.imag
    for i in range(12):
        re[i] *= 2
        im[i] += i
        n.real[i] *= 2
        n.imag[i] += i
    assert np.array_equal(np.asarray(a), n)


def test_transposed_view_rows(device: xp.Device) -> None:
    """Rows of a transposed view are columns of the base: strided writes reading their own elements."""
    rng = np.random.default_rng(11)
    a, n = _pair(device, rng.integers(-50, 50, (6, 4, 9)).astype(np.int32))
    t = a.transpose(2, 0, 1)
    for k in range(9):
        t[k] += k
        t[k, 1:] -= t[k, :-1] * 0 + 1
    nt = n.transpose(2, 0, 1)
    for k in range(9):
        nt[k] += k
        nt[k, 1:] -= nt[k, :-1] * 0 + 1
    assert np.array_equal(np.asarray(a), n)


def test_array_past_one_binding_keeps_the_bounded_form(device: xp.Device) -> None:
    """An array larger than one storage binding is not written by a regions kernel (it is bound whole):
    its writes stay fused and bounded (before, a chain of up to CHAIN_MAX of them became one fused kernel,
    which on the host held a copy of the array per write)."""
    limit = getattr(getattr(device, "provider", None), "max_binding", None)
    if limit is None or limit > (1 << 28):
        pytest.skip("a device whose storage bindings are small enough to exceed here")
    rows = limit // (8192 * 4) + 8
    a = xp.zeros((rows, 8192), dtype=xp.float32, device=device)
    for i in range(40):
        a[i] = i
        a[rows - 1 - i, ::2] = -i
    assert regions.chain_length(a._node) == 0
    assert float(a[39, 5]) == 39.0 and float(a[rows - 40, 2]) == -39.0 and float(a[rows - 40, 3]) == 0.0
    assert float(a[40, 0]) == 0.0


@pytest.mark.parametrize("case", ["rows", "reversed_rows", "blocks", "overlapping", "columns", "recurrence",
                                  "two_sources", "columns_twice", "strided_columns", "overlapping_columns"])
def test_writes_of_one_shader_share_a_dispatch(device: xp.Device, case: str) -> None:
    """Consecutive writes of one shader over one set of buffers whose regions do not overlap run as one
    dispatch on wgpu (``providers/wgpu_regions._Batch``); the others one by one, in order."""
    rng = np.random.default_rng(12)
    src = rng.uniform(-3, 3, (48, 16)).astype(np.float32)
    b = xp.asarray(src, device=device)
    other = xp.asarray(src[::-1].copy(), device=device)
    a, n = _pair(device, rng.uniform(-3, 3, (48, 16)).astype(np.float32))
    # rows and blocks: the first write reads the evaluated array (an input), the others the result so far
    expected = {"rows": 3, "reversed_rows": 2, "blocks": 3, "overlapping": 1 + 46, "columns": 2,
                "recurrence": 48, "two_sources": 1 + 48, "columns_twice": 3, "strided_columns": 2,
                "overlapping_columns": 1 + 9}[case]
    if case == "rows":
        for i in range(48):
            a[i] *= 1.5
            n[i] *= np.float32(1.5)
    elif case == "reversed_rows":
        for i in range(47, -1, -1):
            a[i] = b[i] + i
            n[i] = src[i] + np.float32(i)
    elif case == "blocks":
        for i in range(0, 48, 4):
            a[i:i + 4, 2:] = b[i:i + 4, 2:] * a[i:i + 4, 2:]
            n[i:i + 4, 2:] = src[i:i + 4, 2:] * n[i:i + 4, 2:]
    elif case == "overlapping":
        for i in range(46):
            a[i:i + 3] += 1
            n[i:i + 3] += 1
    elif case == "columns":
        for j in range(16):
            a[:, j] = b[:, j] - 2
            n[:, j] = src[:, j] - 2
    elif case == "recurrence":
        for i in range(1, 48):
            a[i] = a[i - 1] * 0.5 + b[i]
            n[i] = n[i - 1] * np.float32(0.5) + src[i]
    elif case == "columns_twice":         # the second round meets the first: a new run
        for j in list(range(16)) * 2:
            a[:, j] = b[:, j] - j
            n[:, j] = src[:, j] - np.float32(j)
    elif case == "strided_columns":       # even rows of a column, then its odd rows: other elements
        for j in range(16):
            a[j % 2::2, j // 2] = b[j % 2::2, j // 2] * 3
            n[j % 2::2, j // 2] = src[j % 2::2, j // 2] * 3
    elif case == "overlapping_columns":   # rows 12-23 of a column written twice: the second write ends a run
        for j in range(8):
            a[0:24, j] = b[0:24, j] * 3
            a[12:36, j] = b[12:36, j] * 5
            n[0:24, j] = src[0:24, j] * 3
            n[12:36, j] = src[12:36, j] * 5
    else:
        for i in range(48):
            a[i] = (b if i % 2 else other)[i] * 2
            n[i] = (src if i % 2 else src[::-1])[i] * 2
    d0 = xp.metrics()["dispatches"]
    got = np.asarray(a)
    if _wgpu(device):
        assert xp.metrics()["dispatches"] - d0 == expected
    np.testing.assert_allclose(got, n, rtol=1e-6, atol=1e-6)
