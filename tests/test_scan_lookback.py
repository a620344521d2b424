"""The single-pass scan (decoupled look-back, ``providers/wgpu_scan_lookback.py``) against NumPy on both
providers (on ``cpu`` the same calls check the reference): every op and dtype, lengths around the tile
size, NaN / inf / -0.0 carried across tiles, include_initial, few rows along the last axis, fused
prologues, the fallback that computes a waited-on tile itself, and more than 65535 tiles."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_scan, wgpu_scan_lookback
from gpuarray.render.wgsl_scan_lookback import default_items

from .conftest import assert_same

INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
DTYPES = ["bool", *INTS, "float32", "float64"]


@pytest.fixture(autouse=True)
def _lookback(monkeypatch):
    monkeypatch.setattr(wgpu_scan, "STRATEGY", "lookback")


def _tile(op: str, dtype: str) -> int:
    """Elements per tile of the scan of ``op`` with result ``dtype`` on wgpu:0."""
    prov = xp.Device("wgpu:0").provider
    return wgpu_scan_lookback.workgroup_size(prov) * wgpu_scan_lookback.items(op, np.dtype(dtype))


def _lengths(op: str, dtype: str) -> list[int]:
    t = _tile(op, dtype)
    return [0, 1, 3, 4, 5, t - 1, t, t + 1, 5 * t + 3, 5 * t + 4]


def _values(dtype: str, n: int, seed: int, lo: int = -3, hi: int = 3) -> np.ndarray:
    """Values whose sums and products in any grouping are exact (small integers, signs)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind == "u":
        return rng.integers(0, hi + 1, n).astype(dt)
    return rng.integers(lo, hi + 1, n).astype(dt)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_and_prod(device, dtype):
    for n in sorted(set(_lengths("sum", dtype) + _lengths("sum", "int64"))):
        a = _values(dtype, n, n)
        g = xp.asarray(a, device=device)
        for init in (False, True):
            assert_same(xp.cumulative_sum(g, include_initial=init),
                        np.cumulative_sum(a, include_initial=init, dtype=xp.cumulative_sum(g).dtype))
        if dtype != "bool":         # in the dtype itself: narrow integers wrap as NumPy's
            with np.errstate(over="ignore"):
                assert_same(xp.cumulative_sum(g, dtype=dtype), np.cumulative_sum(a, dtype=dtype))
        if np.dtype(dtype).kind in "iu":     # the whole range: wrapping across tiles
            info = np.iinfo(dtype)
            w = np.random.default_rng(n).integers(info.min, info.max, n, dtype=dtype, endpoint=True)
            with np.errstate(over="ignore"):
                assert_same(xp.cumulative_sum(xp.asarray(w, device=device), dtype=dtype),
                            np.cumulative_sum(w, dtype=dtype))
    for n in _lengths("prod", dtype):
        # mostly +-1: a product that stays in range; a few 0s and 2s
        rng = np.random.default_rng(n)
        a = np.where(rng.random(n) < 0.5, -1, 1) * np.where(rng.random(n) < 0.001, 0, 1)
        a = (a * np.where(rng.random(n) < 0.002, 2, 1)).astype(dtype) if dtype[0] != "u" else \
            np.where(rng.random(n) < 0.999, 1, 3).astype(dtype)
        if dtype == "bool":
            a = np.random.default_rng(n).random(n) < 0.9999
        g = xp.asarray(a, device=device)
        with np.errstate(over="ignore"):
            assert_same(xp.cumulative_prod(g, dtype=dtype, include_initial=n % 2 == 1),
                        np.cumulative_prod(a, dtype=dtype, include_initial=n % 2 == 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_min_logical_accumulate(device, dtype):
    for n in _lengths("max", dtype):
        rng = np.random.default_rng(n + 1)
        if dtype == "bool":
            a = rng.random(n) < 0.999
            b = rng.random(n) < 0.001
            g, h = xp.asarray(a, device=device), xp.asarray(b, device=device)
            assert_same(np.logical_and.accumulate(g), np.logical_and.accumulate(a))
            assert_same(np.logical_or.accumulate(h), np.logical_or.accumulate(b))
            assert_same(np.maximum.accumulate(h), np.maximum.accumulate(b))
            continue
        dt = np.dtype(dtype)
        if dt.kind == "f":      # ties of -0.0 and 0.0 (NumPy keeps the later one), NaN late
            a = rng.standard_normal(n).astype(dt)
            a[rng.random(n) < 0.3] = 0.0
            a[rng.random(n) < 0.3] = -0.0
            if n > 10:
                a[n - n // 5] = np.nan
        else:
            info = np.iinfo(dt)
            a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        g = xp.asarray(a, device=device)
        assert_same(np.maximum.accumulate(g), np.maximum.accumulate(a))
        assert_same(np.minimum.accumulate(g), np.minimum.accumulate(a))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values_across_tiles(device, dtype):
    t = _tile("prod", dtype)
    n = 4 * t + 7
    a = np.ones(n, dtype)
    a[: t + 5] = -0.0                    # a -0.0 prefix longer than a tile: the carry stays -0.0
    a[2 * t + 1] = np.inf
    a[3 * t + 3] = -np.inf
    a[4 * t] = np.nan
    g = xp.asarray(a, device=device)
    with np.errstate(invalid="ignore"):
        assert_same(xp.cumulative_sum(g), np.cumulative_sum(a))
        assert_same(xp.cumulative_sum(g, include_initial=True), np.cumulative_sum(a, include_initial=True))
        assert_same(xp.cumulative_prod(g), np.cumulative_prod(a))
        assert_same(np.maximum.accumulate(g), np.maximum.accumulate(a))
        assert_same(np.minimum.accumulate(g), np.minimum.accumulate(a))
    # a 0 early, then factors whose product overflows: NumPy's running product stays 0 (then NaN at inf)
    big = np.finfo(dtype).max / 4
    b = np.full(n, 2.0, dtype)
    b[::3] = big
    b[1::7] = -1.0
    b[: t // 2] = 1.0
    b[t // 2] = 0.0
    b[3 * t] = -np.inf
    gb = xp.asarray(b, device=device)
    with np.errstate(over="ignore", invalid="ignore"):
        assert_same(xp.cumulative_prod(gb), np.cumulative_prod(b))
        assert_same(xp.cumulative_prod(gb[t:]), np.cumulative_prod(b[t:]))


@pytest.mark.parametrize("rows", [1, 2, 5, 300])
def test_few_rows_last_axis_and_prologues(device, rows):
    t = _tile("sum", "float32")
    rng = np.random.default_rng(rows)
    a = rng.integers(-3, 4, (rows, 3 * t + 11)).astype(np.float32)
    g = xp.asarray(a, device=device)
    for init in (False, True):
        assert_same(xp.cumulative_sum(g, axis=-1, include_initial=init),
                    np.cumulative_sum(a, axis=-1, include_initial=init))
    # fused prologues: elementwise work, a strided view, a transposed operand
    assert_same(xp.cumulative_sum(g * 2.0 - 1.0, axis=1), np.cumulative_sum(a * 2 - 1, axis=1))
    assert_same(xp.cumulative_sum(g[:, ::2], axis=1), np.cumulative_sum(a[:, ::2], axis=1))
    at = np.ascontiguousarray(a.T)
    assert_same(xp.cumulative_sum(xp.asarray(at, device=device).T, axis=1), np.cumulative_sum(a, axis=1))
    assert_same(np.maximum.accumulate(xp.abs(g - 1.0), axis=1), np.maximum.accumulate(np.abs(a - 1), axis=1))
    e = rng.standard_normal((rows, 2 * t + 3)).astype(np.float32)
    got = xp.cumulative_sum(xp.exp(xp.asarray(e, device=device) * 0.5), axis=1)
    np.testing.assert_allclose(np.asarray(got), np.cumulative_sum(np.exp(e * np.float32(0.5)), axis=1), rtol=1e-5)


@pytest.mark.parametrize("vectorize", [True, False])
@pytest.mark.parametrize("subgroups", [True, False])
def test_workgroup_scan_with_and_without_subgroups(wgpu_device, monkeypatch, subgroups, vectorize):
    # the subgroup scan and look-back or the workgroup-memory ones; vec4 loads and stores or scalar ones;
    # a run of -0.0 longer than a tile stays -0.0 (subgroupInclusiveAdd may start from +0.0)
    monkeypatch.setattr(wgpu_scan_lookback, "USE_SUBGROUPS", subgroups)
    monkeypatch.setattr(wgpu_scan_lookback, "VECTORIZE", vectorize)
    for dtype in ("float32", "int32", "uint8", "bool"):
        a = _values(dtype, 3 * _tile("sum", dtype) + 5, 11)
        g = xp.asarray(a, device=wgpu_device)
        assert_same(np.maximum.accumulate(g), np.maximum.accumulate(a))
        if dtype != "bool":
            with np.errstate(over="ignore"):
                assert_same(xp.cumulative_sum(g, dtype=dtype), np.cumulative_sum(a, dtype=dtype))
    z = np.full(2 * _tile("sum", "float32") + 1, -0.0, np.float32)
    z[-3] = 0.0
    assert_same(xp.cumulative_sum(xp.asarray(z, device=wgpu_device)), np.cumulative_sum(z))


@pytest.mark.parametrize("window", [1, 256])
def test_fallback_window_and_dispatches(wgpu_device, monkeypatch, window):
    # a workgroup that finds no status computes the tile itself at once (SPIN 1): results unchanged;
    # the look-back reads one tile at a time, or 256
    monkeypatch.setattr(wgpu_scan_lookback, "SPIN", {"GPU": 1, "CPU": 1})
    monkeypatch.setattr(wgpu_scan_lookback, "WINDOW", {"GPU": window, "CPU": window})
    monkeypatch.setattr(wgpu_scan_lookback, "PER_THREAD", 1)
    a = _values("int32", 300_000, 5)
    g = xp.asarray(a, device=wgpu_device)
    xp.evaluate(g)
    xp.reset_metrics()
    r = xp.cumulative_sum(g, dtype=xp.int32)
    xp.evaluate(r)
    assert xp.metrics()["dispatches"] == 2      # the clear of the status words, the scan
    assert_same(r, np.cumulative_sum(a, dtype=np.int32))
    f = _values("float64", 100_001, 6)
    assert_same(xp.cumulative_prod(xp.asarray(np.sign(f) + (f == 0), device=wgpu_device)),
                np.cumulative_prod(np.sign(f) + (f == 0)))


def test_more_than_65535_tiles(wgpu_device, monkeypatch):
    # tiles of 256: 65537 workgroups, a 2-D dispatch; tile ids still follow the atomic counter
    monkeypatch.setattr(wgpu_scan_lookback, "PER_THREAD", 1)
    n = 65537 * 256 - 100
    a = np.random.default_rng(9).integers(-1, 2, n).astype(np.float32)
    got = np.asarray(xp.cumulative_sum(xp.asarray(a, device=wgpu_device)))
    np.testing.assert_array_equal(got, np.cumulative_sum(a))


def _lookback_sources(dev: xp.Device) -> list[str]:
    """The look-back shaders the provider of ``dev`` has rendered so far."""
    return [r.source for k, r in dev.provider.rendered.items() if "render_lookback" in str(k[0])]


def _wide_and_other_ops(dev: xp.Device, rng: np.random.Generator, n: int) -> None:
    """int64 sums, float64 products with zeros and signs, float32 running maxima: ``n`` elements."""
    i64 = rng.integers(-(1 << 40), 1 << 40, n)
    assert_same(xp.cumulative_sum(xp.asarray(i64, device=dev)), np.cumulative_sum(i64))
    f = np.where(rng.random(n) < 0.5, -1.0, 1.0) * np.where(rng.random(n) < 0.01, 0.0, 1.0)
    assert_same(xp.cumulative_prod(xp.asarray(f, device=dev)), np.cumulative_prod(f))
    m = rng.standard_normal(n).astype(np.float32)
    assert_same(np.maximum.accumulate(xp.asarray(m, device=dev)), np.maximum.accumulate(m))


@pytest.mark.parametrize(("items", "wg"), [(16, 256), (4, 128), (3, 64), (8, 512), (1, 1024)])
def test_items_and_workgroup_sizes(wgpu_device, monkeypatch, items, wg):
    # the tile's shape as GPUARRAY_SCAN_ITEMS / GPUARRAY_SCAN_WG set it: vec4 loads and stores where
    # the items are a multiple of 4 and the rows 16-byte aligned, scalar ones otherwise; subgroups
    # where the workgroup is a multiple of lavapipe's largest subgroup (128), the workgroup scan below
    monkeypatch.setattr(wgpu_scan_lookback, "PER_THREAD", items)
    monkeypatch.setattr(wgpu_scan_lookback, "WG", wg)
    t = items * wg
    rng = np.random.default_rng(items)
    for n in (0, 1, 3, 4, 5, t - 1, t, t + 1, 3 * t + 2, 4 * t + 4):
        a = rng.integers(-3, 4, n).astype(np.float32)
        g = xp.asarray(a, device=wgpu_device)
        assert_same(xp.cumulative_sum(g), np.cumulative_sum(a))
        assert_same(xp.cumulative_sum(g, include_initial=True), np.cumulative_sum(a, include_initial=True))
        i8 = rng.integers(-128, 128, n).astype(np.int8)
        with np.errstate(over="ignore"):
            assert_same(xp.cumulative_sum(xp.asarray(i8, device=wgpu_device), dtype=np.int8),
                        np.cumulative_sum(i8, dtype=np.int8))
        _wide_and_other_ops(wgpu_device, rng, n)
    # rows: aligned (length a multiple of 4: vec4) and not
    for shape in ((5, t + 4), (3, 2 * t + 3), (64, 37)):
        a = rng.integers(-3, 4, shape).astype(np.int32)
        g = xp.asarray(a, device=wgpu_device)
        assert_same(xp.cumulative_sum(g, axis=1, dtype=np.int32), np.cumulative_sum(a, axis=1, dtype=np.int32))
        assert_same(xp.cumulative_sum(g, axis=1, include_initial=True),
                    np.cumulative_sum(a, axis=1, include_initial=True))
    assert not getattr(wgpu_device.provider, "_lookback_sg_failed", False)    # the subgroup shader compiled


def test_vectorized_and_subgroup_shaders(wgpu_device, monkeypatch):
    # a plain float32 row: vec4 loads (``iv0``) and stores, the subgroup scan and look-back; a strided
    # view of it: scalar loads (the prologue reads the input elsewhere), vec4 stores
    monkeypatch.setattr(wgpu_device.provider, "rendered", {})     # this test's shaders only
    n = 3 * _tile("sum", "float32") + 6
    a = np.random.default_rng(3).random(n).astype(np.float32)
    g = xp.asarray(a, device=wgpu_device)
    before = set(_lookback_sources(wgpu_device))
    np.testing.assert_allclose(np.asarray(xp.cumulative_sum(g)), np.cumsum(a.astype(np.float64)),
                               rtol=1e-5, atol=1e-5)
    new = [s for s in _lookback_sources(wgpu_device) if s not in before]
    assert len(new) == 1 and "iv0: array<vec4<f32>>" in new[0] and "out0: array<vec4<f32>>" in new[0]
    assert "subgroupInclusiveAdd" in new[0] and "subgroupMin" in new[0]
    assert "let sb = " in new[0]                  # striped: 16-byte runs strided by the subgroup
    before = set(_lookback_sources(wgpu_device))
    np.testing.assert_allclose(np.asarray(xp.cumulative_sum(g[::2])), np.cumsum(a[::2].astype(np.float64)),
                               rtol=1e-5, atol=1e-5)
    new = [s for s in _lookback_sources(wgpu_device) if s not in before]
    assert len(new) == 1 and "iv0" not in new[0] and "out0: array<vec4<f32>>" in new[0]
    assert not getattr(wgpu_device.provider, "_lookback_sg_failed", False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_sums_against_float64(device, dtype):
    # 2^20 + 7 values in [0, 1): NumPy's running sum in the dtype (float32: it drifts by ~1e-5 of
    # the sum); the tiles' tree order on wgpu against the float64 sum, within the scan tests'
    # tolerance (float32: 1e-5)
    a = np.random.default_rng(7).random((1 << 20) + 7).astype(dtype)
    got = np.asarray(xp.cumulative_sum(xp.asarray(a, device=device)))
    np.testing.assert_allclose(got, np.cumsum(a), rtol=1e-4 if dtype == "float32" else 1e-12)
    if device.kind == "wgpu":
        tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}
        np.testing.assert_allclose(got, np.cumsum(a.astype(np.float64)), **tol)


def test_tile_shape_settings_checked(wgpu_device, monkeypatch):
    # the environment variables (read at each scan) and the module's settings; bad ones raise
    n = 5000
    g = xp.asarray(np.arange(n, dtype=np.float32), device=wgpu_device)
    monkeypatch.setenv("GPUARRAY_SCAN_ITEMS", "4")
    monkeypatch.setenv("GPUARRAY_SCAN_WG", "64")
    assert _tile("sum", "float32") == 256 and _tile("prod", "float64") == 256
    assert default_items("sum", np.dtype("float32")) == 16
    assert_same(xp.cumulative_sum(g), np.cumulative_sum(np.arange(n, dtype=np.float32)))
    monkeypatch.setenv("GPUARRAY_SCAN_ITEMS", "sixteen")
    with pytest.raises(ValueError, match="GPUARRAY_SCAN_ITEMS='sixteen': expected a positive integer"):
        xp.evaluate(xp.cumulative_sum(g + 1.0))
    monkeypatch.delenv("GPUARRAY_SCAN_ITEMS")
    monkeypatch.setenv("GPUARRAY_SCAN_WG", "0")
    with pytest.raises(ValueError, match="GPUARRAY_SCAN_WG='0'"):
        xp.evaluate(xp.cumulative_sum(g + 2.0))
    monkeypatch.delenv("GPUARRAY_SCAN_WG")
    monkeypatch.setattr(wgpu_scan_lookback, "WG", 96)
    with pytest.raises(ValueError, match="WG = 96: expected a power of two"):
        xp.evaluate(xp.cumulative_sum(g + 3.0))
    monkeypatch.setattr(wgpu_scan_lookback, "WG", 256)
    monkeypatch.setattr(wgpu_scan_lookback, "PER_THREAD", 65)
    with pytest.raises(ValueError, match="PER_THREAD = 65: expected 1 to 64"):
        xp.evaluate(xp.cumulative_sum(g + 4.0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_long_row_every_dtype(device, dtype):
    # 2^20 + 7 elements (a row length that is not a multiple of 4: vec4 loads and stores with a
    # scalar last tile), include_initial (scalar stores), and 4 aligned rows
    n = (1 << 20) + 7
    a = _values(dtype, n, 13)
    g = xp.asarray(a, device=device)
    for init in (False, True):
        assert_same(xp.cumulative_sum(g, include_initial=init),
                    np.cumulative_sum(a, include_initial=init, dtype=xp.cumulative_sum(g).dtype))
    assert_same(np.maximum.accumulate(g), np.maximum.accumulate(a))
    b = a[: 4 * 65540].reshape(4, -1)
    assert_same(np.minimum.accumulate(xp.asarray(b, device=device), axis=1), np.minimum.accumulate(b, axis=1))


@pytest.mark.parametrize("wide", ["1", "0"])
def test_wide_registers_64_bit(wgpu_device, monkeypatch, wide):
    # GPUARRAY_SCAN_WIDE_REG: on (the default), 64-bit rows by vec2 loads and stores and the subgroup
    # scan and look-back of wider states by their 32-bit parts (lb_up / lb_down / lb_bc0); off, scalar
    # loads and stores and the workgroup-memory scan. The same results either way, against NumPy.
    monkeypatch.setenv("GPUARRAY_SCAN_WIDE_REG", wide)
    monkeypatch.setattr(wgpu_device.provider, "rendered", {})     # this test's shaders only
    t = _tile("sum", "float64")
    rng = np.random.default_rng(17)
    for n in (1, 5, t - 1, t, t + 2, 3 * t + 3, 3 * t + 4):
        for dtype in ("float64", "int64", "uint64"):
            a = _values(dtype, n, n)
            g = xp.asarray(a, device=wgpu_device)
            for init in (False, True):
                assert_same(xp.cumulative_sum(g, include_initial=init), np.cumulative_sum(a, include_initial=init))
            assert_same(np.maximum.accumulate(g), np.maximum.accumulate(a))
            assert_same(np.minimum.accumulate(g), np.minimum.accumulate(a))
            p = np.where(rng.random(n) < 0.5, 1, 2 if dtype[0] == "u" else -1).astype(dtype)
            with np.errstate(over="ignore"):
                assert_same(xp.cumulative_prod(xp.asarray(p, device=wgpu_device), include_initial=n % 2 == 1),
                            np.cumulative_prod(p, include_initial=n % 2 == 1))
        info = np.iinfo(np.int64)     # wrapping across tiles; int32 rows summed in int64 (vec4 in, vec2 out)
        w = rng.integers(info.min, info.max, n, dtype=np.int64, endpoint=True)
        with np.errstate(over="ignore"):
            assert_same(xp.cumulative_sum(xp.asarray(w, device=wgpu_device)), np.cumulative_sum(w))
        i = rng.integers(-(1 << 31), 1 << 31, n).astype(np.int32)
        assert_same(xp.cumulative_sum(xp.asarray(i, device=wgpu_device)), np.cumulative_sum(i))
    # float64 special values and float products (the (product, flags) pair) across tiles
    f = rng.integers(-3, 4, 4 * t + 8).astype(np.float64)     # exact sums in any order
    f[: t + 3] = -0.0
    f[2 * t + 1], f[3 * t], f[3 * t + 9] = np.inf, np.nan, 0.0
    q = np.where(rng.random(f.size) < 0.5, -1.0, 1.0) * np.where(rng.random(f.size) < 0.01, 0.5, 1.0)
    q[t + 7], q[2 * t + 5], q[3 * t + 1] = np.inf, 0.0, np.nan
    gf = xp.asarray(f, device=wgpu_device)
    with np.errstate(invalid="ignore", over="ignore"):
        assert_same(xp.cumulative_sum(gf), np.cumulative_sum(f))
        assert_same(np.maximum.accumulate(gf), np.maximum.accumulate(f))
        assert_same(xp.cumulative_prod(xp.asarray(q, device=wgpu_device)), np.cumulative_prod(q))
        f32 = np.sign(f[: t + 5]).astype(np.float32)
        assert_same(xp.cumulative_prod(xp.asarray(f32, device=wgpu_device)), np.cumulative_prod(f32))
    # rows (aligned: vec2; not), prologues: elementwise with a float64 and an int32 input (both by vec2),
    # a strided view (scalar loads), a float32 op with a four-lane helper (scalar loads)
    for shape in ((3, 2 * t + 4), (2, t + 3), (64, 37)):
        a = rng.integers(-3, 4, shape).astype(np.float64)
        b = rng.integers(-3, 4, shape).astype(np.int32)
        g, h = xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device)
        for init in (False, True):
            assert_same(xp.cumulative_sum(g, axis=1, include_initial=init),
                        np.cumulative_sum(a, axis=1, include_initial=init))
        assert_same(xp.cumulative_sum(g * 2.0 - h, axis=1), np.cumulative_sum(a * 2.0 - b, axis=1))
        assert_same(xp.cumulative_sum(g[:, ::2], axis=1), np.cumulative_sum(a[:, ::2], axis=1))
        np.testing.assert_allclose(np.asarray(xp.cumulative_sum(xp.tanh(g.astype(xp.float32)), axis=1)),
                                   np.cumulative_sum(np.tanh(a.astype(np.float32)).astype(np.float64), axis=1),
                                   rtol=1e-5, atol=1e-4)
    srcs = _lookback_sources(wgpu_device)
    vec2 = [s for s in srcs if "iv0: array<vec2<f64>>" in s and "out0: array<vec2<f64>>" in s]
    mixed = [s for s in srcs if "iv1: array<vec2<i32>>" in s or "iv0: array<vec2<i32>>" in s]
    shuffled = [s for s in srcs if "fn lb_up(s: f64" in s and "subgroupMin" in s]
    pairs = [s for s in srcs if "fn lb_up(s: SP" in s]
    for found in (vec2, mixed, shuffled, pairs):
        assert bool(found) == (wide == "1")
    if wide == "0":
        assert not any("vec2<" in s and "iv0" in s for s in srcs)
    assert not getattr(wgpu_device.provider, "_lookback_sg_wide_failed", False)


def test_wide_registers_fallback_and_setting(wgpu_device, monkeypatch):
    # the subgroup look-back's fallback with a 64-bit state (SPIN 1: a missing status is computed from
    # the input at once); the module setting over the environment; a bad value raises
    monkeypatch.setattr(wgpu_scan_lookback, "SPIN", {"GPU": 1, "CPU": 1})
    monkeypatch.setattr(wgpu_scan_lookback, "PER_THREAD", 4)
    a = _values("int64", 200_003, 8)
    g = xp.asarray(a, device=wgpu_device)
    assert_same(xp.cumulative_sum(g), np.cumulative_sum(a))
    f = _values("float64", 100_004, 9)
    assert_same(xp.cumulative_sum(xp.asarray(f, device=wgpu_device)), np.cumulative_sum(f))
    monkeypatch.setenv("GPUARRAY_SCAN_WIDE_REG", "0")
    monkeypatch.setattr(wgpu_scan_lookback, "WIDE_REG", True)
    assert wgpu_scan_lookback.wide_registers()
    monkeypatch.setattr(wgpu_scan_lookback, "WIDE_REG", None)
    assert not wgpu_scan_lookback.wide_registers()
    monkeypatch.setenv("GPUARRAY_SCAN_WIDE_REG", "yes")
    with pytest.raises(ValueError, match="GPUARRAY_SCAN_WIDE_REG='yes': expected 0 or 1"):
        xp.evaluate(xp.cumulative_sum(g + 1))


@pytest.mark.parametrize("striped", [True, False])
@pytest.mark.parametrize("items", [16, 8, 6])
def test_striped_and_blocked_orders(wgpu_device, monkeypatch, striped, items):
    # a thread's elements in 16-byte runs strided by the subgroup (6 items: whole runs of 64-bit values
    # only, 32-bit ones blocked) or consecutive: the same scans, -0.0 and NaN carried across runs, subgroups and tiles
    monkeypatch.setattr(wgpu_scan_lookback, "STRIPED", striped)
    monkeypatch.setattr(wgpu_scan_lookback, "PER_THREAD", items)
    monkeypatch.setattr(wgpu_device.provider, "rendered", {})
    t = items * wgpu_scan_lookback.workgroup_size(wgpu_device.provider)
    rng = np.random.default_rng(items)
    for n in (5, t - 3, 3 * t + 4, 3 * t + 7):
        a = rng.integers(-3, 4, n).astype(np.float32)
        g = xp.asarray(a, device=wgpu_device)
        assert_same(xp.cumulative_sum(g), np.cumulative_sum(a))
        assert_same(xp.cumulative_sum(g, include_initial=True), np.cumulative_sum(a, include_initial=True))
        z = np.full(n, -0.0, np.float32)
        assert_same(xp.cumulative_sum(xp.asarray(z, device=wgpu_device)), np.cumulative_sum(z))
        w = a.copy()
        w[min(n - 1, 37)] = np.nan
        assert_same(xp.cumulative_sum(xp.asarray(w, device=wgpu_device)), np.cumulative_sum(w))
        _wide_and_other_ops(wgpu_device, rng, n)
        i32 = rng.integers(-3, 4, (3, n)).astype(np.int32)
        assert_same(xp.cumulative_sum(xp.asarray(i32, device=wgpu_device), axis=1, dtype=np.int32),
                    np.cumulative_sum(i32, axis=1, dtype=np.int32))
    srcs = _lookback_sources(wgpu_device)
    sg = "subgroup" in wgpu_device.provider.features
    assert any("let sb = " in src for src in srcs) == (striped and sg)
    sums = [src for src in srcs if "in0: array<f32>" in src and "subgroupInclusiveAdd" in src]
    assert sums and all(("let sb = " in src) == (striped and sg and items != 6) for src in sums)
    assert not any("let sb = " in src for src in srcs if "lb_comb(a: f32, b: f32) -> f32 { return select(" in src)
