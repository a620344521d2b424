"""Writes of one element each (``a[i, j] = v`` in a Python loop) are gathered into one growing ``scatter``
(``array_object.indexing.point_write``): results against NumPy on both providers, repeated points, views,
special values, dtypes, several scatters on top of each other, and one evaluation for a whole loop."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.array_object import indexing


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "bool", "complex64"])
def test_point_loop_matches_numpy(device: xp.Device, dt: str) -> None:
    if dt == "float64" and not device.supports("float64"):
        pytest.skip("no float64 on this device")
    rng = np.random.default_rng(3)
    base = (rng.uniform(-3, 3, (6, 7, 5)) * 10).astype(dt)
    a, n = xp.asarray(base, device=device), base.copy()
    picks = [(i % 6, (i * 3) % 7, (i * 7) % 5) for i in range(40)] + [(-1, -1, -1), (0, 0, 0), (5, 6, 4)]
    for k, (i, j, m) in enumerate(picks):
        v = bool(k % 2) if dt == "bool" else (k - 20) * 1.5 if dt != "int32" else k - 20
        a[i, j, m] = v
        n[i, j, m] = v
    assert np.array_equal(np.asarray(a), n)


def test_special_values_and_value_kinds(device: xp.Device) -> None:
    a = xp.zeros((4, 4), dtype=xp.float32, device=device)
    n = np.zeros((4, 4), np.float32)
    values = [np.nan, -0.0, np.inf, -np.inf, np.float32(2.5), xp.asarray(7.0, dtype=xp.float32, device=device),
              np.asarray(-4.0, dtype=np.float32)]
    for k, v in enumerate(values):
        a[k % 4, (k * 3) % 4] = v
        n[k % 4, (k * 3) % 4] = np.asarray(v)
    got = np.asarray(a)
    assert np.array_equal(got, n, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(n))
    c = xp.zeros(5, dtype=xp.complex64, device=device)
    c[2] = -np.inf
    c[3] = 1 + 2j
    assert np.array_equal(np.asarray(c), np.array([0, 0, -np.inf, 1 + 2j, 0], np.complex64))


def test_device_values_and_views(device: xp.Device) -> None:
    """A value computed on the device takes the slice path; views of the array see every write, and
    writes through a view mix with point writes on the base."""
    base = np.arange(30, dtype=np.float32).reshape(5, 6)
    a, n = xp.asarray(base, device=device), base.copy()
    row, col = a[2], a[:, 4]
    a[2, 1] = -1
    n[2, 1] = -1
    a[0, 0] = xp.sum(a[1]) * 2              # computed: not known on the host
    n[0, 0] = n[1].sum() * 2
    row[3] = 99
    n[2, 3] = 99
    a[2, 3] = 98
    n[2, 3] = 98
    col[1] = -7
    n[1, 4] = -7
    assert np.array_equal(np.asarray(a), n)
    assert np.array_equal(np.asarray(row), n[2]) and np.array_equal(np.asarray(col), n[:, 4])


def test_many_points_stack_scatters(device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexing, "POINTS_MAX", 8)
    a = xp.asarray(np.zeros((10, 10), np.float64 if device.supports("float64") else np.float32), device=device)
    n = np.zeros(a.shape, a.dtype)
    for i in range(30):
        a[i % 10, (i * 7) % 10] = i + 1
        n[i % 10, (i * 7) % 10] = i + 1
    assert np.array_equal(np.asarray(a), n)


def test_a_diagonal_loop_is_one_evaluation(device: xp.Device) -> None:
    """scikit-learn's ``_fill_diagonal``: 300 writes, one evaluation at the read (a chain of slice writes
    was evaluated every dozen writes, each time over the whole array)."""
    x = np.random.default_rng(5).uniform(-3, 3, (300, 300)).astype(np.float32)
    a = xp.asarray(x, device=device) * 2
    xp.evaluate(a)
    xp.reset_metrics()
    for i in range(300):
        a[i, i] = 0
    got = np.asarray(a)
    want = x * 2
    np.fill_diagonal(want, 0)
    assert np.array_equal(got, want)
    assert xp.metrics()["evaluations"] <= 1


def test_errors(device: xp.Device) -> None:
    a = xp.zeros((3, 3), dtype=xp.float32, device=device)
    a[0, 0] = 1
    with pytest.raises(IndexError, match="out of bounds"):
        a[3, 0] = 2
    with pytest.raises(ValueError, match="read-only"):
        xp.broadcast_to(a[0], (3, 3))[1, 1] = 5
    assert np.asarray(a).tolist() == [[1, 0, 0], [0, 0, 0], [0, 0, 0]]


def test_chains_that_branch(device: xp.Device) -> None:
    """Two arrays holding the same written state (a copy shares the node: values never change) each go
    on writing: the point buffers are appended in place only at the end of their chain, so neither sees
    the other's points."""
    a = xp.zeros((4, 4), dtype=xp.int32, device=device)
    n = np.zeros((4, 4), np.int32)
    a[0, 0] = 1
    n[0, 0] = 1
    c = xp.asarray(a, copy=True)
    m = n.copy()
    a[1, 1] = 2
    n[1, 1] = 2
    c[1, 1] = 3
    m[1, 1] = 3
    c[2, 2] = 4
    m[2, 2] = 4
    a[2, 3] = 5
    n[2, 3] = 5
    a[0, 0] = 6
    n[0, 0] = 6
    assert np.array_equal(np.asarray(a), n) and np.array_equal(np.asarray(c), m)


def test_reading_written_points_needs_no_evaluation(device: xp.Device) -> None:
    """``a[i] = f(a[i - 1])`` in a loop: an element written is read from the point list, one not written
    from the evaluated array underneath (one small read); neither evaluates the array."""
    base = np.linspace(-3, 3, 5000).astype(np.float32)
    a = xp.asarray(base, device=device) * 2
    xp.evaluate(a)
    n = base * 2
    xp.reset_metrics()
    for i in range(1, 200):
        a[i] = float(a[i - 1]) * 0.5 + float(a[i + 1000])
        n[i] = np.float32(float(n[i - 1]) * 0.5 + float(n[i + 1000]))
    assert xp.metrics()["evaluations"] == 0
    m = xp.zeros((3, 4), dtype=xp.int32, device=device)
    m[1, 2] = 7
    m[1, 2] = 9
    assert int(m[1, 2]) == 9 and int(m[2, 3]) == 0 and int(m[-2, -2]) == 9
    assert np.array_equal(np.asarray(a), n)
