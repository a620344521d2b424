"""The LSD radix sort of ``sort`` / ``argsort`` (rows longer than one bitonic block) on wgpu:0,
against NumPy's stable sort: every dtype, special values, lengths around the block, tile and
partition sizes, several rows along each axis, descending, the fused prologue, and the limits.

Shaders compile slowly on lavapipe, so the cases share them: a shader depends on the dtype, the
direction, sort or argsort, and the prologue, not on the shape."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_radix, wgpu_sort

from .conftest import assert_same

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"]


@pytest.fixture(autouse=True)
def _always() -> Iterator[None]:
    with xp.config(offload="always"):
        yield


def _data(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Duplicates (a few distinct values), random bits, and the dtype's special values."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind == "f":
        a = rng.integers(-4, 4, n).astype(dt) * dt.type(0.5)
        a[: n // 2] = rng.standard_normal(n // 2).astype(dt) * dt.type(1e3)
        specials = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(dt).max, np.finfo(dt).tiny,
                             -np.finfo(dt).max, np.finfo(dt).smallest_subnormal], dtype=dt)
    else:
        info = np.iinfo(dt)
        a = rng.integers(max(info.min, -4), min(info.max, 4), n, endpoint=True).astype(dt)
        a[: n // 2] = rng.integers(info.min, info.max, n // 2, endpoint=True, dtype=dt)
        specials = np.array([info.min, info.max, info.min + 1, info.max - 1, 0], dtype=dt)
    pos = rng.choice(n, size=min(n, 40 * len(specials)), replace=False)
    a[pos] = np.resize(specials, pos.size)
    return rng.permutation(a).reshape(shape)


def _ref_argsort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable; descending keeps ties in their original order and puts NaN first."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    return (n - 1) - np.flip(np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)


def _check(g: xp.GpuArray, a: np.ndarray, axis: int, descending: bool, kinds: str = "sa") -> None:
    want = _ref_argsort(a, axis, descending)
    if "a" in kinds:
        assert_same(xp.argsort(g, axis=axis, descending=descending), want)
    if "s" in kinds:       # values taken at the reference permutation: where each -0.0 / NaN went
        assert_same(xp.sort(g, axis=axis, descending=descending), np.take_along_axis(a, want, axis=axis))


def _geometry(dev: xp.Device, dtype: str, kind: str = "argsort") -> tuple[int, int]:
    """(B, T): the bitonic block and the radix tile on this adapter for ``dtype``."""
    p = dev.provider
    dt = np.dtype(dtype)
    b = wgpu_sort.block_for(p, dt)
    kernel = SimpleNamespace(instrs=[SimpleNamespace(dtype=dt)], operands=[0], kind=kind)
    kpt = wgpu_radix.keys_per_thread(p, kernel)
    assert kpt is not None
    return b, 256 * kpt


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype(wgpu_device, dtype):
    """Every dtype's keys and raw values (sort, every other dtype descending) in a row past the block;
    argsort (stable in both directions) for each key width below."""
    b, _t = _geometry(wgpu_device, dtype)
    a = _data(dtype, (b + 1000,), seed=1)
    _check(xp.asarray(a, device=wgpu_device), a, 0, DTYPES.index(dtype) % 2 == 1, kinds="s")


def test_float_specials_descending(wgpu_device):
    """NaN first when descending, -0.0 and 0.0 in their original order, NaN payloads kept by sort."""
    b, _t = _geometry(wgpu_device, "float32")
    a = _data("float32", (3 * b + 5,), seed=2)
    a[::7] = -0.0
    a[3::11] = 0.0
    a[5::13] = np.float32(np.nan)
    a[6::17] = -np.float32(np.nan)
    g = xp.asarray(a, device=wgpu_device)
    _check(g, a, 0, True)
    _check(g, a, 0, False, kinds="a")
    s = np.asarray(xp.sort(g))
    want = np.take_along_axis(a, _ref_argsort(a, 0, False), axis=0)
    np.testing.assert_array_equal(s.view(np.uint32), want.view(np.uint32))     # bit for bit


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lengths_around_block_and_tiles(wgpu_device, dtype, monkeypatch):
    """B - 1 and B (the bitonic block), B + 1, tile multiples +-1, with several tiles per partition."""
    b, t = _geometry(wgpu_device, dtype)
    monkeypatch.setattr(wgpu_radix, "MAX_PARTS", 3)     # several tiles per partition, a short last one
    m = b // t + 2      # tiles in a row past the block
    lengths = [b - 1, b, b + 1, m * t - 1, m * t, m * t + 1, (m + 4) * t + 1]
    a = _data(dtype, (max(lengths),), seed=3)
    g = xp.asarray(a, device=wgpu_device)
    for n in lengths:
        if dtype == "float32":
            _check(g[:n], a[:n], 0, False, kinds="a")
            _check(g[:n], a[:n], 0, True, kinds="a")
        else:       # 64-bit keys, another tile size
            _check(g[:n], a[:n], 0, False, kinds="s")


def test_patterns(wgpu_device):
    """All-equal keys, sorted and reversed input; integer extremes only."""
    b, _t = _geometry(wgpu_device, "float32")
    n = 2 * b + 3
    for a in [np.full(n, 7, dtype=np.float32), np.arange(n, dtype=np.float32),
              np.arange(n, 0, -1, dtype=np.float32), np.repeat(np.arange(n // 8, dtype=np.float32), 8)[::-1]]:
        g = xp.asarray(a, device=wgpu_device)
        _check(g, a, 0, False, kinds="a")
        _check(g, a, 0, True, kinds="a")
    info = np.iinfo(np.int64)
    a = np.resize(np.array([info.max, info.min, 0, -1, info.min + 1, info.max - 1], dtype=np.int64), n)
    _check(xp.asarray(a, device=wgpu_device), a, 0, True, kinds="s")


@pytest.mark.parametrize(("shape", "axis"), [((4, 300000), 1), ((300000, 3), 0), ((3, 70001), -1)])
def test_several_rows(wgpu_device, shape, axis):
    """Rows longer than 65535, along axis 0 (strided rows), 1 and -1."""
    a = _data("float32", shape, seed=4)
    g = xp.asarray(a, device=wgpu_device)
    _check(g, a, axis, False, kinds="a")
    _check(g, a, axis, True, kinds="s")


def test_rows_of_small_ints_many_partitions(wgpu_device, monkeypatch):
    """Many short rows (two tiles each) and the scan with a thread per segment, then a workgroup per segment."""
    b, t = _geometry(wgpu_device, "int16")
    a = _data("int16", (37, b + 3), seed=5)
    g = xp.asarray(a, device=wgpu_device)
    _check(g, a, 1, True, kinds="s")
    _check(g.T, a.T, 0, True, kinds="s")
    monkeypatch.setattr(wgpu_radix, "THREAD_SCAN", 0)
    a = _data("int16", (2, 300 * t + 1), seed=6)     # 301 partitions per row: a scan of two chunks
    _check(xp.asarray(a, device=wgpu_device), a, 1, True, kinds="s")


def test_empty_and_short_rows(wgpu_device):
    for shape, axis in [((0,), 0), ((3, 0), 1), ((0, 5000), 1), ((5000, 0), 0), ((1,), 0), ((5000, 1), 1),
                        ((1, 5000), 0)]:
        a = _data("float32", shape) if 0 not in shape else np.zeros(shape, dtype=np.float32)
        g = xp.asarray(a, device=wgpu_device)
        _check(g, a, axis, False)


def test_fused_prologue_and_dispatches(wgpu_device):
    """The first pass reads through the fused elementwise prologue; 3 dispatches per 8-bit digit."""
    b, _t = _geometry(wgpu_device, "float32")
    a = _data("float32", (2 * b + 9, 3), seed=7)
    g = xp.asarray(a, device=wgpu_device)
    xp.evaluate(g)
    xp.reset_metrics()
    s = xp.sort(g.T * 2.0 - 1.0, axis=1, descending=True)
    xp.evaluate(s)
    assert xp.metrics()["dispatches"] == 12
    with np.errstate(over="ignore"):
        want = a.T * np.float32(2) - np.float32(1)
    assert_same(s, np.take_along_axis(want, _ref_argsort(want, 1, True), axis=1))
    i = xp.argsort(g[::-1, 1] + 1.0)
    assert_same(i, np.argsort(a[::-1, 1] + np.float32(1), kind="stable"))
    for dtype, n in [("int8", 3), ("int16", 6), ("float64", 24)]:
        x = xp.asarray(_data(dtype, (2 * b + 1,)), device=wgpu_device)
        xp.evaluate(x)
        xp.reset_metrics()
        xp.evaluate(xp.sort(x, descending=DTYPES.index(dtype) % 2 == 1))      # the shaders of test_every_dtype
        assert xp.metrics()["dispatches"] == n


def test_unrolled_form(wgpu_device, monkeypatch):
    """The per-key code unrolled (what a GPU adapter runs; lavapipe runs the loops by default)."""
    monkeypatch.setattr(wgpu_radix, "UNROLL", True)
    b, t = _geometry(wgpu_device, "uint16")
    a = _data("uint16", (3, (b // t + 2) * t + 5), seed=8)
    g = xp.asarray(a, device=wgpu_device)
    _check(g, a, 1, True, kinds="a")


def test_without_subgroups(wgpu_device, monkeypatch):
    """The workgroup scans without subgroup operations: turned off, and after a driver rejected them."""
    b, t = _geometry(wgpu_device, "int16")
    a = _data("int16", (2, (b // t + 3) * t + 7), seed=9)
    g = xp.asarray(a, device=wgpu_device)
    monkeypatch.setattr(wgpu_radix, "THREAD_SCAN", 0)
    monkeypatch.setattr(wgpu_radix, "USE_SUBGROUPS", False)
    _check(g, a, 1, False, kinds="a")
    monkeypatch.setattr(wgpu_radix, "USE_SUBGROUPS", True)
    prov = wgpu_device.provider
    if "subgroup" not in prov.features:
        return
    real = prov.pipeline_for

    def rejecting(source: str, background: bool = False):
        if "subgroupInclusiveAdd" in source:
            raise RuntimeError("subgroups are not supported here")
        return real(source, background)

    monkeypatch.setattr(prov, "pipeline_for", rejecting)
    monkeypatch.setattr(prov, "_radix_sg_failed", False, raising=False)
    _check(g, a, 1, True, kinds="a")
    assert prov._radix_sg_failed


def test_limits():
    """Scratch beyond the storage binding limit, and too little workgroup memory for the tiles."""
    dt = np.dtype(np.float32)

    def kernel(kind: str, shape: tuple[int, ...]) -> SimpleNamespace:
        ins = SimpleNamespace(dtype=dt, op="input")
        return SimpleNamespace(instrs=[ins], operands=[0], kind=kind, attrs=(len(shape) - 1, False),
                               out_shape=shape, inputs=[ins])

    prov = SimpleNamespace(limits={"max-compute-workgroup-storage-size": 32768}, max_binding=1 << 20,
                           max_storage_buffers=8)
    assert wgpu_sort.sort_cannot_run(prov, kernel("argsort", (1 << 17,))) is None
    why = wgpu_sort.sort_cannot_run(prov, kernel("argsort", (1 << 19,)))
    assert why is not None and "storage binding limit" in why
    prov.max_binding = 1 << 40
    why = wgpu_sort.sort_cannot_run(prov, kernel("sort", (1 << 31,)))
    assert why is not None and "2**31" in why
    prov.limits = {"max-compute-workgroup-storage-size": 8192}     # no radix tile fits: the bitonic network
    assert wgpu_radix.keys_per_thread(prov, kernel("argsort", (1 << 17,))) is None
    assert wgpu_sort.sort_cannot_run(prov, kernel("argsort", (1 << 17,))) is None


@pytest.mark.parametrize("floor", [0, 4])
def test_multisplit_and_counting_rounds(wgpu_device, monkeypatch, floor):
    """The downsweep's two rankings: the counting rounds in workgroup memory (multisplit off) with
    the subgroup scans, and the subgroup multisplit with histograms for more subgroups than the
    adapter runs (a floor of 4 lanes; the H200's subgroups have 32), or where those do not fit
    (lavapipe's 32 KiB), the counting rounds."""
    prov = wgpu_device.provider
    if floor == 0:
        monkeypatch.setattr(wgpu_radix, "MULTISPLIT", False)
    elif not wgpu_radix.multisplit(prov) or wgpu_radix.subgroup_floor(prov) < floor:
        pytest.skip("no subgroup multisplit on this adapter")
    else:
        monkeypatch.setattr(wgpu_radix, "MULTISPLIT_SG", floor)
    for dtype, kinds in [("float32", "a"), ("int64", "s")]:
        b, t = _geometry(wgpu_device, dtype)
        kernel = SimpleNamespace(instrs=[SimpleNamespace(dtype=np.dtype(dtype))], operands=[0], kind="argsort")
        fits = wgpu_radix.keys_per_thread(prov, kernel, floor) is not None if floor else False
        assert wgpu_radix.plan(prov, kernel, 1, b + 1, 1).ms == (floor if fits else 0)
        monkeypatch.setattr(wgpu_radix, "MAX_PARTS", 5)
        a = _data(dtype, (2, (b // t + 3) * t + 11), seed=10)
        g = xp.asarray(a, device=wgpu_device)
        _check(g, a, 1, False, kinds=kinds)
        _check(g, a, 1, True, kinds=kinds)


@pytest.mark.parametrize("dtype", ["int64", "int32", "float32"])
def test_passes_whose_keys_share_one_digit(wgpu_device, dtype):
    """A pass where every key of a row has the same digit (labels, small integers, a constant row)
    copies the row in order; rows of one array take that path or not each on its own, the rest
    ranked as before: sort and stable argsort in both directions, along both axes."""
    b, t = _geometry(wgpu_device, dtype)
    n = max(b + 1000, 3 * t + 5)            # past the bitonic block, several tiles
    rng = np.random.default_rng(7)
    a = np.empty((4, n), dtype=dtype)
    a[0] = rng.integers(0, 4, n)                    # labels: one digit but the lowest
    a[1] = 3                                        # constant: every pass copies
    a[2] = _data(dtype, (n,), seed=3)               # the whole range: every pass ranks
    a[3] = rng.integers(-2, 2, n)                   # small, both signs: the sign flips the high digits
    g = xp.asarray(a, device=wgpu_device)
    for descending in (False, True):
        _check(g, a, 1, descending)
        _check(xp.asarray(np.ascontiguousarray(a.T), device=wgpu_device), np.ascontiguousarray(a.T), 0, descending)
