"""The register-blocked float32 matmul kernel, its operand load modes, and the matmul autotuner."""

from __future__ import annotations

import json

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler import schedule
from gpuarray.providers import wgpu_autotune, wgpu_matmul
from gpuarray.render.wgsl_matmul import Tiles
from gpuarray.render.wgsl_matmul_blocked import BlockTiles

from .conftest import assert_same

F32 = np.dtype(np.float32)
BLOCKED = [c for c in wgpu_matmul.CANDIDATES.values() if isinstance(c, BlockTiles)] + [
    BlockTiles(64, 64, 8, 4, 4, 2, 4), BlockTiles(32, 64, 4, 4, 8, 1, 0),
    # 16-wide per-thread tiles within lavapipe's 32 KiB of workgroup memory (BLOCK_LARGE16 needs 48)
    BlockTiles(128, 256, 8, 8, 16, 1), BlockTiles(256, 128, 8, 16, 8, 2), BlockTiles(64, 128, 16, 4, 16, 1, 0),
    # A's vk tiles stored as transposed 4 x 4 quads (wgsl_matmul_blocked ``quad``): one and two quads a thread
    BlockTiles(32, 64, 32, 4, 8, 1, 0), BlockTiles(64, 64, 32, 8, 8, 1)]


def _rand(shape, seed):
    return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(np.float32)


def _check(got, a, b):
    """float32 result against a float64 reference, within the rounding bound of a k-term dot product."""
    got = np.asarray(got)
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    want = np.matmul(a64, b64)
    assert got.dtype == F32 and got.shape == want.shape
    k = a64.shape[-1]
    bound = 2 * max(k, 1) * np.finfo(np.float32).eps * np.matmul(np.abs(a64), np.abs(b64)) + 1e-30
    assert np.all(np.abs(got - want) <= bound), float(np.max(np.abs(got - want) - bound))


def _kernel(r):
    return schedule([r._node])[0]


# Cases that cover every load mode, both output modes, batching and bounds; shapes are
# not multiples of any tile. Each entry: (a shape, b shape, how b is passed).
CASES = [
    ((130, 68), (68, 72), "plain"),        # A vk, B vo, vec4 output
    ((67, 33), (33, 65), "plain"),         # K and N odd: scalar loads, scalar output
    ((70, 36), (66, 36), "transposed"),    # a @ b.T: B vk
]


@pytest.mark.parametrize("cfg", BLOCKED, ids=lambda c: c.name)
def test_each_blocked_config(wgpu_device, cfg):
    # the scalar-load shader of the big configurations takes lavapipe long to compile; the
    # scalar loads of BLOCK_LARGE are tested in test_special_values
    cases = CASES if cfg.bk * cfg.tm * cfg.tn <= 256 else [c for c in CASES if c[0] != (67, 33)]
    with wgpu_matmul.use_config(cfg):
        for sa, sb, how in cases:
            a, b = _rand(sa, 1), _rand(sb, 2)
            ga, gb = xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device)
            if how == "transposed":
                _check(ga @ gb.T, a, b.T)
            else:
                _check(ga @ gb, a, b)


def test_shapes_and_views(wgpu_device):
    """Batches, broadcasting, 1xN, Nx1, K = 0, transposed and sliced views, prologues."""
    dev = wgpu_device
    with wgpu_matmul.use_config(wgpu_matmul.BLOCK_MEDIUM):
        for sa, sb in [((3, 70, 20), (3, 20, 68)), ((2, 1, 65, 12), (3, 12, 66)), ((1, 40), (40, 100)),
                       ((100, 40), (40, 1)), ((1, 33), (33, 1)), ((70, 0), (0, 68)), ((64, 64), (64, 64))]:
            a, b = _rand(sa, 3), _rand(sb, 4)
            _check(xp.asarray(a, device=dev) @ xp.asarray(b, device=dev), a, b)
        a, b = _rand((80, 100), 5), _rand((96, 132), 6)
        ga, gb = xp.asarray(a, device=dev), xp.asarray(b, device=dev)
        _check(ga.T @ gb[:80], a.T, b[:80])                         # A vo
        _check(ga[:, :64] @ gb[:64, 4:132], a[:, :64], b[:64, 4:132])   # strided, offset views (vector)
        _check(ga[:, 1:65] @ gb[1:65, ::2], a[:, 1:65], b[1:65, ::2])   # odd offset, stride 2: scalar
        _check(ga[::-1, :96] @ gb, a[::-1, :96], b)                 # negative stride: scalar
        _check(ga @ ga.T, a, a.T)                                   # one buffer, two vec4 modes
        _check((ga * 2).T @ ga[:, :96], (a * 2).T, a[:, :96])      # the prologue reads it too
        _check(xp.exp(ga[:, :96] * 0.1) @ gb[:, :70], np.exp(a[:, :96] * np.float32(0.1)), b[:, :70])


def test_operand_modes(wgpu_device):
    dev = wgpu_device
    a = xp.asarray(_rand((80, 100), 1), device=dev)
    b = xp.asarray(_rand((100, 68), 2), device=dev)
    modes = wgpu_matmul.operand_modes
    assert modes(_kernel(a @ b))[0] == ("vk", "vo")
    assert modes(_kernel(a.T @ a[:, :80].T))[0] == ("vo", "vk")
    assert modes(_kernel(a[:, 1:] @ b[1:]))[0] == ("s", "vo")       # offset 1: not 16-byte aligned
    assert modes(_kernel((a * 2) @ b))[0] == ("s", "vo")
    assert modes(_kernel((a * 2) @ a.T))[0] == ("s", "s")           # a is also read as scalars
    assert modes(_kernel(a @ a.T))[0] == ("vk", "vk")
    extras = modes(_kernel(a[:, :64] @ b[:64, 4:]))[1]
    assert extras == {"a_off": 0, "a_st": 25, "b_off": 1, "b_st": 17}
    ai = xp.asarray(np.ones((8, 8), np.int32), device=dev)
    assert modes(_kernel(ai @ ai))[0] == ("s", "s")


@pytest.mark.parametrize("shapes", [((70, 37), (37, 66)), ((68, 36), (36, 64))], ids=["scalar", "vector"])
def test_special_values(wgpu_device, shapes):
    """nan and inf inside the matrices and in the last partial K tile; rows and columns past the
    edge of the last tile never leak into stored results."""
    rng = np.random.default_rng(7)
    (m, k), (_, n) = shapes
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    a[3, 5], a[10, k - 1], a[m - 1, 0] = np.nan, np.inf, -np.inf
    b[2, n - 1], b[k - 1, 7] = np.nan, -np.inf
    with np.errstate(invalid="ignore"):
        want = a @ b
    for cfg in (wgpu_matmul.BLOCK_MEDIUM, wgpu_matmul.BLOCK_LARGE):
        with wgpu_matmul.use_config(cfg):
            got = xp.asarray(a, device=wgpu_device) @ xp.asarray(b, device=wgpu_device)
        assert_same(got, want, rtol=1e-4, atol=1e-4, check_signed_zero=False)


@pytest.mark.parametrize("cfg", [wgpu_matmul.BLOCK_MEDIUM, wgpu_matmul.BLOCK_WIDE, BlockTiles(32, 64, 4, 4, 8, 1, 0),
                                 wgpu_matmul.F64_MEDIUM, wgpu_matmul.F64_SPLIT, wgpu_matmul.F64_LARGE],
                         ids=lambda c: c.name)
def test_blocked_float64(wgpu_device, cfg):
    """The register-blocked kernel in float64: vector and scalar loads, epilogue, float64 accuracy."""
    if not wgpu_device.provider.supports(np.dtype("float64")):
        pytest.skip("no shader-f64")
    if not wgpu_matmul.fits(wgpu_device.provider, cfg, 8):
        pytest.skip("tiles too large for this adapter in float64")
    rng = np.random.default_rng(3)
    dev = wgpu_device
    for sa, sb, how in CASES:
        a, b = rng.uniform(-3, 3, sa), rng.uniform(-3, 3, sb)
        ga, gb = xp.asarray(a, device=dev), xp.asarray(b, device=dev)
        with wgpu_matmul.use_config(cfg):
            got = xp.tanh(ga @ (gb.T if how == "transposed" else gb) * 0.1)
        want = np.tanh(a @ (b.T if how == "transposed" else b) * 0.1)
        assert_same(got, want, rtol=1e-13, atol=1e-13)
    f64, sel, p = np.dtype("float64"), wgpu_matmul.select, dev.provider
    medium = wgpu_matmul.F64_MEDIUM if wgpu_matmul.fits(p, wgpu_matmul.F64_MEDIUM, 8) else wgpu_matmul.BLOCK_MEDIUM
    large = wgpu_matmul.F64_LARGE if wgpu_matmul.fits(p, wgpu_matmul.F64_LARGE, 8) else medium
    assert sel(p, 300, 300, 300, 1, f64) == medium
    split = wgpu_matmul.F64_SPLIT if wgpu_matmul.fits(p, wgpu_matmul.F64_SPLIT, 8) else wgpu_matmul.BLOCK_MEDIUM
    assert sel(p, 64, 64, 1 << 20, 1, f64) == split                       # X.T @ X: one tile, K split
    assert sel(p, 1 << 20, 64, 32, 1, f64) == medium                      # short K
    assert sel(p, 64, 64, 64, 4096, f64) == medium                        # batches of short K
    assert sel(p, 2048, 2048, 2048, 1, f64) == large


def test_other_dtypes_keep_the_generic_kernel(wgpu_device):
    for dt in ("int32", "int16", "uint8"):
        a = (np.arange(70 * 9) % 7 - 3).reshape(70, 9).astype(dt)
        b = (np.arange(9 * 66) % 5 - 2).reshape(9, 66).astype(dt)
        with wgpu_matmul.use_config(wgpu_matmul.BLOCK_LARGE):
            got = xp.asarray(a, device=wgpu_device) @ xp.asarray(b, device=wgpu_device)
        assert_same(got, a @ b)
    assert wgpu_matmul.select(wgpu_device.provider, 200, 200, 200, 1, np.dtype("int32")) == wgpu_matmul.GENERAL


def test_selection_rules(wgpu_device, monkeypatch):
    monkeypatch.setenv(wgpu_autotune.ENV, "off")
    p = wgpu_device.provider
    sel = wgpu_matmul.select
    large16 = wgpu_matmul.fits(p, wgpu_matmul.BLOCK_LARGE16)     # 48 KiB of workgroup memory
    large = wgpu_matmul.BLOCK_LARGE16 if large16 else wgpu_matmul.BLOCK_LARGE
    assert sel(p, 4096, 4096, 4096, 1, F32) == large
    assert sel(p, 2048, 2048, 2048, 1, F32) == large                        # 128 workgroups of 128 x 256
    if large16:                                                             # untuned from LARGE16_K on
        monkeypatch.setenv(wgpu_autotune.ENV, "on")
        monkeypatch.setattr(wgpu_matmul, "tune", lambda *a: pytest.fail("tuned"))
        assert sel(p, 8192, 8192, 8192, 1, F32) == wgpu_matmul.BLOCK_LARGE16
        monkeypatch.setenv(wgpu_autotune.ENV, "off")
    assert sel(p, 2048, 1024, 256, 1, F32) == wgpu_matmul.BLOCK_WIDE
    assert sel(p, 2048, 1024, 64, 1, F32) == wgpu_matmul.BLOCK_MEDIUM       # short K: small tiles
    assert sel(p, 300, 300, 64, 64, F32) == wgpu_matmul.BLOCK_MEDIUM
    assert sel(p, 300, 300, 300, 1, F32) == wgpu_matmul.BLOCK_MEDIUM
    assert sel(p, 300, 300, 300, 64, F32) == large                          # batches fill the GPU
    assert sel(p, 40, 300, 300, 1, F32) == wgpu_matmul.choose_tiles(40, 300, 300, F32)
    assert sel(p, 300, 1, 300, 1, F32) == wgpu_matmul.MATVEC
    with wgpu_matmul.use_config("g64x64x16_4x4"):
        assert sel(p, 4096, 4096, 4096, 1, F32) == Tiles(64, 64, 16, 4, 4)
    monkeypatch.setenv(wgpu_matmul.CONFIG_ENV, "b64x128x8_4x8_2")
    assert sel(p, 4096, 4096, 4096, 1, F32) == wgpu_matmul.BLOCK_WIDE


def test_config_names_and_checks():
    for cfg in wgpu_matmul.CANDIDATES.values():
        assert wgpu_matmul.parse_config(wgpu_matmul.config_name(cfg)) == cfg
    assert wgpu_matmul.parse_config("g16x48x8_2x3_c") == Tiles(16, 48, 8, 2, 3, False)
    assert wgpu_matmul.parse_config("b128x128x8_8x8_2_r") == BlockTiles(128, 128, 8, 8, 8, 2, 0)
    assert wgpu_matmul.parse_config("b64x64x8_4x4_1_w4") == BlockTiles(64, 64, 8, 4, 4, 1, 4)
    assert wgpu_matmul.parse_config("b128x256x32_8x16_1") == wgpu_matmul.BLOCK_LARGE16
    for bad in ("x", "b128x128_8x8_2", "b128x128x8_6x8_2", "b96x128x8_8x8_2", "q1x1x1_1x1", "b64x64x8_4x4_2_w3",
                "b64x64x8_4x4_2_q", "b32x32x8_8x8_2", "b256x256x8_16x16_1", "b128x128x8_32x4_1"):
        with pytest.raises(ValueError):
            wgpu_matmul.parse_config(bad)
    with pytest.raises(ValueError):
        BlockTiles(128, 128, 8, 8, 8, 3).check()
    with pytest.raises(ValueError):
        BlockTiles(256, 256, 8, 4, 4).check()       # 4096 threads
    assert BlockTiles(128, 128, 16, 8, 8, 2).smem_bytes == 32768


# ---- autotuning

@pytest.fixture
def tuning(tmp_path, monkeypatch, wgpu_device):
    """Autotuning on (lavapipe included) into a fresh cache directory, with a tiny tuning problem."""
    monkeypatch.setenv("GPUARRAY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(wgpu_autotune.ENV, "on")
    monkeypatch.setattr(wgpu_matmul, "TUNE_MIN_FLOPS", 2 * 64**3)
    monkeypatch.setattr(wgpu_matmul, "SHORT_K", 0)
    monkeypatch.setattr(wgpu_matmul, "size_class", lambda m, n, batch: 128)
    monkeypatch.setattr(wgpu_matmul, "TUNE_MEDIUM", [wgpu_matmul.BLOCK_MEDIUM, wgpu_matmul.GENERAL])
    wgpu_autotune.forget()
    yield wgpu_device
    wgpu_autotune.forget()


def test_autotune_writes_and_reloads(tuning, monkeypatch):
    dev = tuning
    a, b = _rand((96, 80), 1), _rand((80, 72), 2)
    _check(xp.asarray(a, device=dev) @ xp.asarray(b, device=dev), a, b)     # tunes first
    path = wgpu_autotune.path_for(dev.provider)
    data = json.loads(path.read_text())
    entry = data["choices"]["matmul:f32:128"]
    assert data["version"] == wgpu_autotune.VERSION
    assert set(entry["ms"]) == {wgpu_matmul.config_name(wgpu_matmul.BLOCK_MEDIUM), "g64x64x16_4x4"}
    assert entry["best"] in entry["ms"] and all(v > 0 for v in entry["ms"].values())
    best = wgpu_matmul.CANDIDATES[entry["best"]]
    # a new process (here: a forgotten memory cache) reuses the stored choice without timing
    wgpu_autotune.forget()
    monkeypatch.setattr(wgpu_matmul, "tune", lambda *a: pytest.fail("tuned again"))
    assert wgpu_matmul.select(dev.provider, 96, 72, 80, 1, F32) == best
    _check(xp.asarray(a, device=dev) @ xp.asarray(b, device=dev), a, b)
    # choices of another kernel version are ignored; "off" ignores stored choices
    data["version"] = -1
    path.write_text(json.dumps(data))
    wgpu_autotune.forget()
    assert wgpu_autotune.lookup(dev.provider, "matmul:f32:128") is None
    monkeypatch.setenv(wgpu_autotune.ENV, "off")
    assert wgpu_autotune.lookup(dev.provider, "matmul:f32:128") is None
    assert wgpu_matmul.select(dev.provider, 96, 72, 80, 1, F32) == wgpu_matmul.BLOCK_MEDIUM


def test_autotune_budget_and_modes(tuning, monkeypatch):
    p = tuning.provider
    kernel = wgpu_matmul.synthetic_kernel(64, 64, 64)
    handles = [p.alloc(64 * 64 * 4) for _ in range(3)]

    def trial(cfg):
        def make():
            r, prm, groups = wgpu_matmul.plan(kernel, cfg, 64, 64, 1)
            return wgpu_autotune.Trial(r.source, prm, handles, groups)
        return make

    trials = {"first": trial(wgpu_matmul.BLOCK_MEDIUM), "second": trial(wgpu_matmul.GENERAL)}
    assert wgpu_autotune.tune(p, "k", trials, budget_s=0.0, persist=False) == "first"
    assert wgpu_autotune.lookup(p, "k") == "first"
    assert not wgpu_autotune.path_for(p).exists()
    # a candidate the driver rejects is skipped and recorded; when none works nothing is chosen
    broken = wgpu_autotune.Trial("this is not WGSL", np.zeros(4, np.uint32), handles, 1)
    trials = {"broken": lambda: broken, "second": trial(wgpu_matmul.GENERAL)}
    assert wgpu_autotune.tune(p, "k2", trials) == "second"
    entry = json.loads(wgpu_autotune.path_for(p).read_text())["choices"]["k2"]
    assert entry["best"] == "second" and "broken" in entry["failed"] and list(entry["ms"]) == ["second"]
    assert wgpu_autotune.tune(p, "k3", {"broken": lambda: broken}) is None
    assert wgpu_autotune.lookup(p, "k3") == ""           # not tried again in this process
    wgpu_autotune.forget()
    assert wgpu_autotune.lookup(p, "k3") is None and wgpu_autotune.lookup(p, "k2") == "second"
    for h in handles:
        p.free(h)
    monkeypatch.setenv(wgpu_autotune.ENV, "auto")
    cpu = str(p.adapter.info.get("adapter_type")) == "CPU"
    assert wgpu_autotune.enabled(p) == (not cpu)   # "auto": a GPU tunes, a CPU adapter (lavapipe) does not
    monkeypatch.setenv(wgpu_autotune.ENV, "sometimes")
    with pytest.raises(ValueError, match=wgpu_autotune.ENV):
        wgpu_autotune.mode()


def test_thin_products_take_row_tiles() -> None:
    """Products with many rows and at most 4 columns (X @ W of a few classes) take the THIN
    tiles of the generic kernel (a row per thread: H200 (2^20 x 64) @ (64 x 3) 0.72 -> 0.25 ms of GPU
    time), with prologues, odd K and M not a multiple of the tile, against NumPy."""
    import gpuarray as xp
    from gpuarray.providers import wgpu_matmul as wm

    assert wm.choose_tiles(1 << 20, 3, 64, np.dtype(np.float32)) is wm.THIN
    assert wm.choose_tiles(1000, 3, 64, np.dtype(np.float32)) is wm.SMALL
    rng = np.random.default_rng(3)
    for m, k, n in ((5000, 64, 3), (70_001, 33, 2), (2048, 7, 4), (4097, 130, 4)):
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        with xp.config(offload="always"):
            ga, gb = xp.asarray(a, device="wgpu:0"), xp.asarray(b, device="wgpu:0")
            got = np.asarray((ga * 2) @ gb + 1)
        want = 2 * a.astype(np.float64) @ b + 1
        assert np.max(np.abs(got - want)) <= 1e-5 * np.max(np.abs(a) @ np.abs(b)) * 2 + 1e-6
