"""A differential fuzz of the paths for arrays past one storage binding and past one buffer (windows, blocks of
rows, parts of whole rows, products and gathers by blocks), with the wgpu provider's limits lowered to 1 MiB a
binding and 3 MiB a buffer and the H200's 256-byte offset alignment: random shapes (rows of 7 to 1001 elements,
1.6 to 4.7 MiB), dtypes and workloads, every result against NumPy. A workload may still run on the host (the
planner says why); it may never give another result or fail."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers.webgpu import WgpuProvider

from .conftest import assert_same

MIB = 1 << 20
WORKLOADS = ["center0", "divrow", "softmax", "strided", "flip_mu", "col", "where", "sum1", "max1", "argmax0",
             "argmax_flat", "mask", "gram", "mv", "tr", "slice_mu", "take_rows", "concat0", "rowmask", "column"]


@pytest.fixture
def small_limits(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> Iterator[WgpuProvider]:
    p = wgpu_device.provider
    monkeypatch.setattr(p, "max_binding", 1 * MIB)
    monkeypatch.setattr(p, "max_buffer", 3 * MIB)
    monkeypatch.setattr(p.pool, "max_bytes", 3 * MIB)
    monkeypatch.setattr(p, "offset_align", 256)
    yield p


def _data(rng: np.random.Generator, shape: tuple[int, ...], dt: str) -> np.ndarray:
    if dt == "bool":
        return rng.uniform(-1, 1, shape) > 0.3
    if dt.startswith("int"):
        return rng.integers(-50, 50, shape).astype(dt)
    a = rng.uniform(-3, 3, shape)
    return (a + 1j * rng.uniform(-3, 3, shape)).astype(dt) if dt.startswith("complex") else a.astype(dt)


def _work(name: str, m: Any, v: Any, c: Any, idx: Any, at: int, lib: Any) -> Any:
    kind = m.dtype.kind
    if name == "center0":
        return m - lib.mean(m, axis=0) if kind in "fc" else m + 1
    if name == "divrow":
        return m / (lib.sum(lib.abs(m), axis=1, keepdims=True) + 1) if kind in "fc" else m * 2
    if name == "softmax" and kind == "f":
        e = lib.exp(m - lib.max(m, axis=1, keepdims=True))
        return e / lib.sum(e, axis=1, keepdims=True)
    if name == "strided":
        return m[:, ::3] * 2 if kind != "b" else m[:, ::3]
    if name == "flip_mu":
        return m[::-1] + v if kind != "b" else m[::-1]
    if name == "col":
        return m * c if kind != "b" else m
    if name == "where" and kind in "fi":
        return lib.where(m > 0, m, v)
    if name == "sum1":
        return lib.sum(m * 2 if kind != "b" else m, axis=1)
    if name == "max1" and kind in "fi":
        return lib.max(m, axis=1)
    if name == "argmax0" and kind in "fi":
        return lib.argmax(m, axis=0)
    if name == "argmax_flat" and kind in "fi":
        return lib.argmax(lib.reshape(m, (-1,)))
    if name == "mask" and kind in "fi":
        return m[m > 0.9]
    if name == "gram" and kind in "fi":
        return m.T @ m
    if name == "mv" and kind in "fi":
        return m @ v
    if name == "tr" and kind in "fi":
        return m.T @ lib.ones_like(m[:, 0])
    if name == "slice_mu":
        return (m - v)[at:at + 3] if kind != "b" else m[at:at + 3]
    if name == "take_rows":
        return m[idx]
    if name == "concat0":
        return lib.concat([m, m[::-1][:7] if kind == "b" else m[:7] * 2])
    if name == "rowmask" and kind in "fi":
        return m[m[:, 0] > 0]
    if name == "column":
        return m[:, 3] if kind == "b" else m[:, 3] * 2
    return lib.sum(m, axis=0)


@pytest.mark.parametrize("seed", range(4))
def test_paths_past_one_binding_against_numpy(small_limits: WgpuProvider, wgpu_device: xp.Device,
                                             seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    for _ in range(16):
        dt = str(rng.choice(["float32", "float64", "int32", "bool", "complex64"]))
        item = 8 if dt in ("float64", "complex64") else 4
        cols = int(rng.choice([7, 16, 64, 100, 333, 1001]))
        rows = max(4, int(MIB * float(rng.choice([1.6, 2.6, 3.4, 4.7]))) // item // cols)
        hm = _data(rng, (rows, cols), dt)
        hv = _data(rng, (cols,), dt if dt != "bool" else "float32")
        hc = _data(rng, (rows, 1), dt if dt != "bool" else "float32")
        idx = rng.integers(-rows, rows, 37)
        at = int(rng.integers(0, rows - 3))
        name = str(rng.choice(WORKLOADS))
        gm, gv, gc = (xp.asarray(a, device=wgpu_device) for a in (hm, hv, hc))
        gi = xp.asarray(idx, device=wgpu_device)
        with xp.config(offload="always"), np.errstate(all="ignore"):
            got = np.asarray(_work(name, gm, gv, gc, gi, at, xp))
            want = np.asarray(_work(name, hm, hv, hc, idx, at, np))
        what = f"{name} {dt} {hm.shape}"
        assert got.shape == want.shape, what
        if got.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want, err_msg=what)
        else:
            tol = 1e-4 if dt in ("float32", "complex64") else 1e-10
            scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=what)


# one write each: (key, value or None for ``x[key] * 2 + 1``); on the device however the region lies
ONE_WRITES = [(5, 7), (slice(100, 900), 1), ((slice(None, None, 7), slice(1, None, 3)), -1), ((slice(None), 3), None),
              ((slice(2282, 3096, 4), 155), None), (-1, 2), ((slice(3, 4), slice(None)), 0),
              ((slice(3080, 2164, -5), slice(None, None, 2)), -3), ((slice(None, None, -1), 4), 5)]


@pytest.mark.parametrize("dt", ["float32", "int64", "complex64"])
def test_writes_through_views_past_one_binding(small_limits: WgpuProvider, wgpu_device: xp.Device, dt: str) -> None:
    """A write through a view of an array past one binding (``x[5] = 7``, ``m[::7, 1::3] = -1``, ``m[:, 3] *= 2``)
    runs by blocks of rows, each writing the region's rows that fall in it (``wgpu_split._setslice_rows``): no
    host fallback (a download and an upload of the whole array before), NumPy's values; also in parts, and in
    sequences of writes (a value read from an earlier write's result may take the host: never another value)."""
    rng = np.random.default_rng(7)
    h = (rng.uniform(-3, 3, (3700, 216)) * 10).astype(dt)        # 3.2 / 6.4 MB: past a binding and a buffer
    for key, val in ONE_WRITES:
        g, hh = xp.asarray(h, device=wgpu_device), h.copy()
        xp.reset_metrics()
        with xp.config(offload="always"):
            if val is None:
                g[key] = g[key] * 2 + 1
                hh[key] = hh[key] * 2 + 1
            else:
                g[key] = val
                hh[key] = val
            got = np.asarray(g)
        assert xp.metrics()["host_fallbacks"] == 0, key
        np.testing.assert_array_equal(got, hh, err_msg=str(key))
    g, hh = xp.asarray(h, device=wgpu_device), h.copy()
    with xp.config(offload="always"):
        for _ in range(12):
            a = int(rng.integers(0, 3700))
            key = rng.choice([0, 1, 2])
            k = (slice(a, None, int(rng.integers(1, 9))), int(rng.integers(0, 216))) if key == 0 else \
                slice(a, a + int(rng.integers(0, 400))) if key == 1 else (slice(None, a, -3), slice(None, None, 5))
            if rng.uniform() < 0.5:
                g[k] = g[k] * 2 + 1
                hh[k] = hh[k] * 2 + 1
            else:
                g[k] = 3
                hh[k] = 3
        np.testing.assert_array_equal(np.asarray(g), hh)


def test_views_of_computed_rows_read_at_the_arrays_positions(small_limits: WgpuProvider,
                                                            wgpu_device: xp.Device) -> None:
    """Elementwise work past one binding that also reads its own computed work through a view of another shape
    (``(X - v) + (X - v)[0]``: row 0 broadcast over every row) must read that work at the whole array's
    positions, not the block's: before the forty-sixth session each block of rows added its own first row,
    silently; such a kernel now runs whole (here: on the host), NumPy's values."""
    rng = np.random.default_rng(3)
    for rows, cols in [(3000, 200), (5000, 64)]:
        h = rng.uniform(-3, 3, (rows, cols)).astype(np.float32)
        hv = rng.uniform(-3, 3, (cols,)).astype(np.float32)
        g, gv = xp.asarray(h, device=wgpu_device), xp.asarray(hv, device=wgpu_device)
        with xp.config(offload="always"):
            got = np.asarray((g - gv) + (g - gv)[0])
            got2 = np.asarray((g * gv) * xp.reshape((g * gv)[:, 1], (-1, 1)))
        np.testing.assert_allclose(got, (h - hv) + (h - hv)[0], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got2, (h * hv) * (h * hv)[:, 1:2], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(3000, 200), (40, 75, 100), (2500, 301)])
def test_nonzero_of_masks_past_one_binding(small_limits: WgpuProvider, wgpu_device: xp.Device,
                                          shape: tuple[int, ...]) -> None:
    """``nonzero`` / ``argwhere`` of an N-D mask past one binding: the flat indices by blocks, then each
    dimension's coordinate ``(flat // stride) % dim`` on the device (the host before); none, few and every
    element non-zero (then the coordinates themselves are past one binding)."""
    rng = np.random.default_rng(len(shape))
    h = rng.uniform(-3, 3, shape).astype(np.float32)
    g = xp.asarray(h, device=wgpu_device)
    for t in (10.0, 2.9, -10.0):
        xp.reset_metrics()
        with xp.config(offload="always"):
            got = [np.asarray(a) for a in xp.nonzero(g > t)]
            got_w = np.asarray(np.argwhere(g > t))       # through __array_function__
        assert xp.metrics()["host_fallbacks"] == 0, t
        for a, b in zip(got, np.nonzero(h > t), strict=True):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(got_w, np.argwhere(h > t))


@pytest.mark.parametrize("rows", [2400, 3000])          # 2.9 MB: one buffer past one binding; 3.6 MB: two parts
def test_joins_and_products_of_arrays_past_one_binding(small_limits: WgpuProvider, wgpu_device: xp.Device,
                                                       rows: int) -> None:
    """``concat`` along the first axis of parts that are computed (``x + 1``), views or whole arrays, stored in
    one buffer or in parts, joins them by copies after computing the parts (a part computed inside the join
    took the host); ``x @ x[:k].T`` computes its small operand first and splits the product by rows of ``x``
    (both operands read the whole array before: the host). NumPy's values, no host fallback. (A view whose
    rows cross from one part to the next where no aligned block can start (``a[::-1][:500]`` of the 3000 rows,
    ``a[1000:].ravel()``), still takes the host.)"""
    rng = np.random.default_rng(rows)
    h = rng.uniform(-3, 3, (rows, 300)).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device) * 1              # device-only: no host copy to fall back on
    xp.evaluate(x)
    cases = [(lambda p, a: p.concat([a, a + 1]), 0), (lambda p, a: p.concat([a[::-1][:400] * 2, a, a[7:9]]), 0),
             (lambda p, a: p.concat([a[:1024], a[1024:] - 1], axis=None), 0),
             (lambda p, a: a @ a[:300].T, 1e-4), (lambda p, a: a[:200] @ a.T, 1e-4)]
    for n, (fn, tol) in enumerate(cases):
        xp.reset_metrics()
        with xp.config(offload="always"):
            got = np.asarray(fn(xp, x))
        assert xp.metrics()["host_fallbacks"] == 0, n
        want = fn(np, h) if n < 2 else np.concatenate([h[:1024].ravel(), (h[1024:] - 1).ravel()]) if n == 2 \
            else fn(np, h.astype(np.float64)).astype(np.float32)
        assert_same(got, want, rtol=tol, atol=tol * 30)


@pytest.mark.parametrize("shape", [(3000, 300), (2400, 300), (1500, 200, 3), (200, 50, 80)])
def test_masks_of_leading_dims_past_one_binding(small_limits: WgpuProvider, wgpu_device: xp.Device,
                                                shape: tuple[int, ...]) -> None:
    """``x[mask]`` with a mask of the leading dims of an array past one binding (in one buffer or in parts;
    uploaded as it is indexed, or computed on the device) gathers by blocks of rows, each block its own run
    of the mask's increasing indices (the result past one binding too: each block's gather wrote the whole
    result before, and took the host; a reshape sharing the array's upload cut its blocks at its own rows,
    across the upload's parts). No host fallback; NumPy's values for no, few, most and all rows."""
    rng = np.random.default_rng(sum(shape))
    h = rng.uniform(-3, 3, shape).astype(np.float32)
    lead = shape[:-1] if len(shape) == 3 else shape[:1]
    for frac in (0.0, 0.05, 0.7, 1.0):
        m = rng.uniform(0, 1, lead) < frac
        for device_only in (False, True):
            x = xp.asarray(h, device=wgpu_device)
            if device_only:
                x = x * 1
                xp.evaluate(x)
            xp.reset_metrics()
            with xp.config(offload="always"):
                got = np.asarray(x[xp.asarray(m, device=wgpu_device)])
            assert xp.metrics()["host_fallbacks"] == 0, (frac, device_only)
            np.testing.assert_array_equal(got, h[m], err_msg=str((frac, device_only)))
    # a mask computed from a column of the array itself (evaluated first: its kernels read it, not the array)
    x = xp.asarray(h, device=wgpu_device)
    col = (slice(None),) * (len(shape) - 1) + (0,)
    xp.reset_metrics()
    with xp.config(offload="always"):
        got = np.asarray(x[x[col] > 0.5])
    assert xp.metrics()["host_fallbacks"] == 0
    np.testing.assert_array_equal(got, h[h[col] > 0.5])


@pytest.mark.parametrize("n", [700_000, 900_000])          # 2.8 MB: past one binding; 3.6 MB: two parts
@pytest.mark.parametrize("dt", ["float32", "int32"])
def test_searchsorted_in_arrays_past_one_binding(small_limits: WgpuProvider, wgpu_device: xp.Device, n: int,
                                                 dt: str) -> None:
    """``searchsorted`` into a sorted array past one binding sums the value's index in each block of the
    array (each a kernel binding its block; the host before): NumPy's indices on both sides, with ties,
    values outside the range and, in float32, NaN in the array and among the values."""
    rng = np.random.default_rng(n)
    h = np.sort(rng.integers(-1000, 1000, n)).astype(dt)
    v = np.concatenate([rng.integers(-1100, 1100, 3000).astype(dt), h[::997]])
    if dt == "float32":
        h[-50:] = np.nan
        v = np.concatenate([v, np.array([np.nan, -np.inf, np.inf, -0.0], dtype=dt)])
    x = xp.asarray(h, device=wgpu_device) * 1
    xp.evaluate(x)
    for side in ("left", "right"):
        xp.reset_metrics()
        with xp.config(offload="always"):
            got = np.asarray(xp.searchsorted(x, xp.asarray(v, device=wgpu_device), side=side))
        assert xp.metrics()["host_fallbacks"] == 0, side
        np.testing.assert_array_equal(got, np.searchsorted(h, v, side=side), err_msg=side)


def test_a_range_across_two_parts_is_an_error() -> None:
    """A range of an array stored in parts that was planned in one part but crosses into the next raises
    (an internal error) rather than binding the part's buffer past its elements (stale pooled bytes)."""
    from gpuarray.providers.wgpu_split import GpuHandle, SegmentedHandle, _sub_range
    h = SegmentedHandle([GpuHandle("a", 1024 * 4), GpuHandle("b", 500 * 4)], 1024, 4, 1524 * 4)
    assert _sub_range(h, 1000, 24, 4) == ("a", 4000, 96)
    assert _sub_range(h, 1024, 500, 4) == ("b", 0, 2000)
    with pytest.raises(RuntimeError, match="cross from part 0 into the next"):
        _sub_range(h, 1000, 25, 4)
