"""argmax / argmin over the leading axes (``argmax(x, axis=0)``) take a thread per output and chunk of rows
on the wgpu provider (``wgpu_argreduce._enqueue_cols``; four outputs a thread as ``vec4`` words where the
operand allows, ``_enqueue_cols4``); and a chunk thread of a flat or later-axis walk
loads several elements before comparing them (``wgsl_argreduce._unrolled_walk``), as ``vec4`` words where the
reduced axes are the last ones and the prologue reads its inputs at their flat index
(``wgsl_argreduce._vec_walk``: rows of any length, their unaligned heads and tails by lanes of their own).
NumPy's indices on both providers: the first occurrence of ties, the first NaN, a fused prologue, one chunk and
many."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.render import wgsl_argreduce


@pytest.mark.parametrize("shape", [(300, 7000), (70000, 300), (5, 3000), (2, 700), (64, 257), (40, 30, 500),
                                   (20000, 64), (3000, 33)])
@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "bool"])
def test_argmax_over_the_first_axis(device: xp.Device, shape: tuple[int, ...], dt: str) -> None:
    if dt == "float64" and not device.supports("float64"):
        pytest.skip("no float64 on this adapter")
    rng = np.random.default_rng(sum(shape))
    h = (rng.uniform(-3, 3, shape) > 2) if dt == "bool" else rng.integers(-4, 4, shape).astype(dt)
    if dt.startswith("float"):
        h.reshape(-1)[rng.integers(0, h.size, 40)] = np.nan
    x = xp.asarray(h, device=device)
    with xp.config(offload="always"):
        for op in ("argmax", "argmin"):
            np.testing.assert_array_equal(np.asarray(getattr(xp, op)(x, axis=0)), getattr(np, op)(h, axis=0))
        if dt != "bool":
            np.testing.assert_array_equal(np.asarray(xp.argmax(x * 2 - 1, axis=0)), np.argmax(h * 2 - 1, axis=0))
            mu = rng.integers(-2, 2, shape[1:]).astype(dt)       # a value per output, hoisted out of the walk
            np.testing.assert_array_equal(np.asarray(xp.argmin(x * mu, axis=0)), np.argmin(h * mu, axis=0))


@pytest.mark.parametrize("n", [1, 3, 1000, 70001, 1 << 20])
def test_flat_argmax_ties_and_nans(device: xp.Device, n: int) -> None:
    rng = np.random.default_rng(n)
    h = rng.integers(-5, 5, n).astype(np.float32)
    x = xp.asarray(h, device=device)
    with xp.config(offload="always"):
        assert int(xp.argmax(x)) == np.argmax(h) and int(xp.argmin(x)) == np.argmin(h)
        if n > 3:
            h[[n // 3, n // 2]] = np.nan
            x = xp.asarray(h, device=device)
            assert int(xp.argmax(x)) == n // 3 == int(xp.argmin(xp.exp(x)))


@pytest.mark.parametrize("shape", [(1, 13), (3, 70001), (7, 1001), (2, 3, 5001), (3000, 17), (33, 4097), (4, 9),
                                   (5, 1 << 16)])
@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "uint8"])
def test_vec4_walk_over_the_last_axis(device: xp.Device, shape: tuple[int, ...], dt: str) -> None:
    """Rows that start anywhere in a ``vec4`` word (their heads and tails read element by element), a NaN or a
    tie in the head, the tail and across words, a prologue with a value broadcast along the row."""
    if dt == "float64" and not device.supports("float64"):
        pytest.skip("no float64 on this adapter")
    rng = np.random.default_rng(sum(shape))
    h = rng.integers(0, 6, shape).astype(dt)
    rows = h.reshape(-1, shape[-1])
    rows[:, -1] = 5                                  # a tie in the tail with an earlier maximum
    rows[:, min(2, shape[-1] - 1)] = 5
    if dt.startswith("float"):
        rows[::2, -2] = np.nan                       # the first NaN in the tail
        rows[1::3, 1] = np.nan                       # ... or in the head, before the later NaN
    col = rng.integers(1, 3, shape[:-1] + (1,)).astype(dt)
    x, c = xp.asarray(h, device=device), xp.asarray(col, device=device)
    with xp.config(offload="always"):
        for op in ("argmax", "argmin"):
            np.testing.assert_array_equal(np.asarray(getattr(xp, op)(x, axis=-1)), getattr(np, op)(h, axis=-1))
            assert int(getattr(xp, op)(x)) == getattr(np, op)(h)
        if dt != "uint8":
            np.testing.assert_array_equal(np.asarray(xp.argmin(x * c - 3, axis=-1)), np.argmin(h * col - 3, axis=-1))


@pytest.mark.parametrize("shape", [(5, 1), (33, 1), (2, 3, 1), (300, 1), (9, 2), (1, 1), (4097, 1)])
@pytest.mark.parametrize("dt", ["float32", "int32", "float64"])
def test_rows_shorter_than_a_word(device: xp.Device, shape: tuple[int, ...], dt: str) -> None:
    """Rows of one or two elements inside one ``vec4`` word (``[1, 2)``: no whole word, and the tail's start
    past the row's end): the tail's length wrapped around and its lanes read the next rows (argmax of a
    ``(33, 1)`` array along its last axis gave 6, 5, 11 ... for 0; found by a scheduling fuzz)."""
    if dt == "float64" and not device.supports("float64"):
        pytest.skip("no float64 on this adapter")
    h = np.random.default_rng(sum(shape)).integers(-3, 4, shape).astype(dt)
    x = xp.asarray(h, device=device)
    with xp.config(offload="always"):
        for op in ("argmax", "argmin", "max", "sum"):
            for kd in (False, True):
                np.testing.assert_array_equal(np.asarray(getattr(xp, op)(x, axis=-1, keepdims=kd)),
                                              getattr(np, op)(h, axis=-1, keepdims=kd))


def test_vec4_walk_is_taken_where_it_applies(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain inputs and elementwise work of them (a mask too) read as ``vec4`` words along the last axes and, four
    outputs a thread, along the first; a view does not."""
    prov = wgpu_device.provider
    sources: list[str] = []
    real = prov.dispatch

    def spy(src: str, *a: object, **k: object) -> object:
        sources.append(src)
        return real(src, *a, **k)

    h = np.random.default_rng(3).standard_normal((64, 1000)).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device)
    monkeypatch.setattr(prov, "dispatch", spy)
    cases = [(lambda a: xp.argmax(a, axis=1), True), (lambda a: xp.argmin(a * 2 + 1), True),
             (lambda a: xp.argmax(a, axis=0), True), (lambda a: xp.argmax(a[:, ::2], axis=1), False),
             (lambda a: xp.argmax(a > 0, axis=1), True), (lambda a: xp.argmax(a[:, :999], axis=0), False)]
    with xp.config(offload="always"):
        for fn, vec in cases:
            sources.clear()
            xp.evaluate(fn(x))
            assert any("array<vec4<f32>>" in src for src in sources) == vec
    monkeypatch.setattr(wgsl_argreduce, "VEC", False)
    with xp.config(offload="always"):
        sources.clear()
        np.testing.assert_array_equal(np.asarray(xp.argmax(x * 3, axis=1)), np.argmax(h * 3, axis=1))
        assert not any("array<vec4<f32>>" in src for src in sources)


@pytest.mark.parametrize("shape,axis", [((4000, 300), 1), ((2000, 1001), 1), ((1100, 8192), -1), ((1030, 9), 1),
                                        ((40, 500, 30), 1), ((3, 1000, 777), 2)])
@pytest.mark.parametrize("dt", ["float32", "int32", "float64", "bool"])
def test_many_rows_share_a_workgroup(device: xp.Device, shape: tuple[int, ...], axis: int, dt: str) -> None:
    """At least 1024 rows of up to 8192 elements: a few threads a row (``wgpu_argreduce._enqueue_seg``), with
    ``vec4`` words where the prologue allows, element by element through a view or a middle axis."""
    if dt == "float64" and not device.supports("float64"):
        pytest.skip("no float64 on this adapter")
    rng = np.random.default_rng(sum(shape))
    h = (rng.uniform(-3, 3, shape) > 2.5) if dt == "bool" else rng.integers(-20, 20, shape).astype(dt)
    if dt.startswith("float"):
        h.reshape(-1)[rng.integers(0, h.size, 50)] = np.nan
    x = xp.asarray(h, device=device)
    with xp.config(offload="always"):
        for op in ("argmax", "argmin"):
            np.testing.assert_array_equal(np.asarray(getattr(xp, op)(x, axis=axis)), getattr(np, op)(h, axis=axis))
        if dt != "bool":
            np.testing.assert_array_equal(np.asarray(xp.argmax(x * 3 - 1, axis=axis)), np.argmax(h * 3 - 1, axis=axis))
            np.testing.assert_array_equal(np.asarray(xp.argmin(x[..., ::2], axis=axis)),
                                          np.argmin(h[..., ::2], axis=axis))


@pytest.mark.parametrize("n", [1, 5, 4099, 1 << 20])
def test_first_true_of_a_mask(device: xp.Device, n: int) -> None:
    """``argmax(x > t)``, NumPy's idiom for the first element past a threshold: the first True wherever it is
    (an unaligned head or tail, a later word, a later chunk), 0 where there is none."""
    x = np.zeros(n, np.float32)
    g = xp.asarray(x, device=device)
    with xp.config(offload="always"):
        assert int(xp.argmax(g > 0)) == 0
        for at in sorted({a for a in (0, 1, 2, n // 2, n - 2, n - 1) if 0 <= a < n}):
            h = x.copy()
            h[at:] = 1.0
            assert int(xp.argmax(xp.asarray(h, device=device) > 0.5)) == at
            assert int(xp.argmin(xp.asarray(h, device=device) < 0.5)) == at
