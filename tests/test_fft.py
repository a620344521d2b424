"""The fft extension against NumPy on both providers: transforms (sizes, norms, axes, real and
Hermitian variants, n-dimensional), where they run on wgpu, frequencies and shifts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler import plan_cache
from gpuarray.providers import wgpu_fft
from gpuarray.runtime import replay

from .conftest import assert_same


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 101])
@pytest.mark.parametrize("d", [1.0, 0.1, 3])
def test_fftfreq_rfftfreq(device, n, d):
    assert_same(xp.fft.fftfreq(n, d=d, device=device), np.fft.fftfreq(n, d=d))
    assert_same(xp.fft.rfftfreq(n, d=d, device=device), np.fft.rfftfreq(n, d=d))
    assert_same(xp.fft.fftfreq(n, d=d, dtype=xp.float32, device=device), np.fft.fftfreq(n, d=d).astype(np.float32))
    assert_same(xp.fft.rfftfreq(n, d=d, dtype=xp.float32, device=device),
                np.fft.rfftfreq(n, d=d).astype(np.float32))
    assert xp.fft.fftfreq(n, device=device).device == device


def test_freq_errors(device):
    with pytest.raises(ValueError):
        xp.fft.fftfreq(0, device=device)
    with pytest.raises(TypeError):
        xp.fft.fftfreq(4.0, device=device)
    with pytest.raises(TypeError):
        xp.fft.rfftfreq(4, dtype=xp.int32, device=device)


@pytest.mark.parametrize("shape", [(1,), (5,), (8,), (3, 4), (5, 7), (2, 3, 5), (0, 3)], ids=str)
def test_shifts(device, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    g = xp.asarray(a, device=device)
    assert_same(xp.fft.fftshift(g), np.fft.fftshift(a))
    assert_same(xp.fft.ifftshift(g), np.fft.ifftshift(a))
    for axes in range(-len(shape), len(shape)):
        assert_same(xp.fft.fftshift(g, axes=axes), np.fft.fftshift(a, axes=axes))
        assert_same(xp.fft.ifftshift(g, axes=(axes,)), np.fft.ifftshift(a, axes=(axes,)))
    assert_same(xp.fft.ifftshift(xp.fft.fftshift(g)), a)


def test_shift_of_expression_and_views(device):
    a = np.arange(30, dtype=np.int32).reshape(5, 6)
    g = xp.asarray(a, device=device)
    assert_same(xp.fft.fftshift(g[::-1, 1:] * 2, axes=(0, 1)), np.fft.fftshift(a[::-1, 1:] * 2, axes=(0, 1)))
    assert_same(xp.fft.fftshift(g, axes=1)[1:, ::2], np.fft.fftshift(a, axes=1)[1:, ::2])
    assert_same(xp.sum(xp.fft.ifftshift(g, axes=0), axis=0), np.sum(np.fft.ifftshift(a, axes=0), axis=0))


def test_shift_is_lazy_and_one_kernel(wgpu_device):
    f = xp.fft.fftshift(xp.fft.fftfreq(9, device=wgpu_device) * 2)
    xp.reset_metrics()
    xp.evaluate(f)
    assert xp.metrics()["dispatches"] == 1
    assert_same(f, np.fft.fftshift(np.fft.fftfreq(9) * 2))


# ---------------------------------------------------------------- transforms
SIZES = [1, 2, 8, 1024, 4096, 12, 3, 1000, 4097]    # 4097 = 17 x 241: Bluestein on wgpu (fft_chirp.py)
NORMS = ["backward", "ortho", "forward"]


def _cdata(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _tol(dtype: Any) -> float:
    return 2e-6 if np.dtype(dtype) in (np.complex64, np.float32) else 1e-14


def assert_spectrum(got: Any, want: np.ndarray, dtype: Any) -> None:
    """Same dtype and shape as NumPy; values within a relative error of the largest magnitude."""
    g = np.asarray(got)
    assert g.dtype == want.dtype, f"dtype {g.dtype} != {want.dtype}"
    assert g.shape == want.shape, f"shape {g.shape} != {want.shape}"
    scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-30)
    err = float(np.max(np.abs(g - want))) / scale if want.size else 0.0
    assert err <= _tol(dtype), f"relative error {err:.3g} (allowed {_tol(dtype):.1g})"


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", SIZES)
def test_fft_ifft_against_numpy(device, n, dtype):
    x = _cdata((3, n), dtype, n)
    g = xp.asarray(x, device=device)
    for norm in NORMS:
        f = xp.fft.fft(g, norm=norm)
        assert_spectrum(f, np.fft.fft(x, norm=norm), dtype)
        assert_spectrum(xp.fft.ifft(g, norm=norm), np.fft.ifft(x, norm=norm), dtype)
        assert_spectrum(xp.fft.ifft(f, norm=norm), x, dtype)          # round trip
    assert f.device == device


def _passes(device: Any, n: int, dtype: Any) -> int:
    """Dispatches of a transform of length n on wgpu (without a prologue). Mixed-radix kernel (the
    default, also for powers of two): one pass up to a tile of workgroup memory, else the passes of
    wgsl_fft_mixed.mixed_plan (test_fft_mixed.py checks those). Radix-2 block kernel
    (GPUARRAY_FFT_MIXED_POW2=0): one pass up to a tile, else the fewest passes of at most
    log2(tile / groups) stages, groups keeping 32 contiguous bytes (wgsl_fft_block.block_plan)."""
    from gpuarray.providers import wgpu_fft
    from gpuarray.render.wgsl_fft_mixed import mixed_plan
    s = n.bit_length() - 1
    if not wgpu_fft.BLOCK:
        return s
    size = np.dtype(dtype).itemsize
    limit = min(int(device.provider.limits.get("max-compute-workgroup-storage-size", 16384)), wgpu_fft.TILE_BYTES)
    tile = 1 << ((limit // size).bit_length() - 1)
    groups = max(1, wgpu_fft.MIN_RUN_BYTES // size)
    if wgpu_fft.MIXED and (wgpu_fft.MIXED_POW2 or n & (n - 1)):
        if wgpu_fft.REG:        # the register kernel's tiles and radices (test_fft_mixed.py checks its plans)
            return len(wgpu_fft.pass_plan(device.provider, np.dtype(dtype), n))
        return len(mixed_plan(n, tile, groups))
    if n <= tile:
        return min(s, 1)
    return -(-s // ((tile // groups).bit_length() - 1))


@pytest.mark.parametrize("n", [8, 1024, 12, 17])
def test_fft_metrics_on_wgpu(wgpu_device, n):
    """A length with prime factors up to 13 is a few mixed-radix passes (_passes) in one submit;
    another length is two transforms of a 7-smooth length m >= 2n - 1 (Bluestein), also on the
    device."""
    x = xp.asarray(_cdata((4, n), np.complex64), device=wgpu_device)
    xp.evaluate(x)
    xp.reset_metrics()
    f = xp.fft.fft(x)
    xp.evaluate(f)
    xp.synchronize(f.device)        # small work waits for later evaluations to share a submit
    m = xp.metrics()
    if n & (n - 1) == 0:
        assert m["host_fallbacks"] == 0 and m["dispatches"] == _passes(wgpu_device, n, np.complex64)
        assert m["submits"] == 1
    elif n == 12:
        assert m["host_fallbacks"] == 0 and m["dispatches"] == _passes(wgpu_device, n, np.complex64) == 1
    else:       # chirp and padding read by the first transform's first pass, B by the second's, a final product
        from gpuarray.fft import chirp as fft_chirp
        mm = fft_chirp.inner_length(n, wgpu_device, np.dtype(np.complex64))       # 35 = 5 x 7 for 17
        assert m["host_fallbacks"] == 0 and m["dispatches"] == 2 * _passes(wgpu_device, mm, np.complex64) + 1
    want = np.fft.ifft(np.asarray(x)[:, ::-1] * 2 + 1j)
    for fuse in (True, False):      # the prologue in the first pass's loads, or a pass of its own
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(wgpu_fft, "FUSE_PROLOGUE", fuse)
            plan_cache.clear()      # recorded plans would replay the other form
            replay.clear()
            xp.reset_metrics()
            y = xp.fft.ifft(x[:, ::-1] * 2 + 1j)
            xp.evaluate(y)
            assert xp.metrics()["host_fallbacks"] == 0
            if n != 17:
                assert xp.metrics()["dispatches"] == _passes(wgpu_device, n, np.complex64) + (not fuse)
            assert_spectrum(y, want, np.complex64)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_fft_axes_and_batches(device, dtype, axis):
    x = _cdata((4, 8, 2), dtype, 3)
    g = xp.asarray(x, device=device)
    assert_spectrum(xp.fft.fft(g, axis=axis), np.fft.fft(x, axis=axis), dtype)
    assert_spectrum(xp.fft.ifft(g[:, ::2], axis=axis), np.fft.ifft(x[:, ::2], axis=axis), dtype)


@pytest.mark.parametrize("n", [1, 3, 8, 16, 5])
def test_fft_n_pads_and_truncates(device, n):
    x = _cdata((2, 8), np.complex64, 4)
    g = xp.asarray(x, device=device)
    assert_spectrum(xp.fft.fft(g, n=n), np.fft.fft(x, n=n), np.complex64)
    assert_spectrum(xp.fft.ifft(g, n=n, axis=0), np.fft.ifft(x, n=n, axis=0), np.complex64)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 7, 8, 64, 4096])
def test_real_transforms(device, dtype, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, n)).astype(dtype)
    g = xp.asarray(x, device=device)
    cdt = np.complex64 if dtype == "float32" else np.complex128
    for norm in NORMS:
        r = xp.fft.rfft(g, norm=norm)
        assert_spectrum(r, np.fft.rfft(x, norm=norm), dtype)
        assert_spectrum(xp.fft.irfft(r, n=n, norm=norm), x, dtype)     # round trip with the length given
        assert_spectrum(xp.fft.ihfft(g, norm=norm), np.fft.ihfft(x, norm=norm), dtype)
        h = np.fft.rfft(x).astype(cdt)
        if n > 1:        # the default length 2 (m - 1) is 0 for one term: an error in NumPy and here
            assert_spectrum(xp.fft.irfft(xp.asarray(h, device=device), norm=norm), np.fft.irfft(h, norm=norm),
                            dtype)
        else:
            with pytest.raises(ValueError, match="number of data points"):
                xp.fft.irfft(xp.asarray(h, device=device))
        assert_spectrum(xp.fft.hfft(xp.asarray(h, device=device), n=n, norm=norm), np.fft.hfft(h, n=n, norm=norm),
                        dtype)
    assert xp.fft.rfft(g).dtype == cdt and xp.fft.irfft(xp.fft.rfft(g), n=n).dtype == np.dtype(dtype)


def test_irfft_ignores_imaginary_dc_and_nyquist(device):
    h = np.array([1 + 5j, 2 - 1j, 3 + 2j, 4 + 7j], np.complex128)       # imaginary parts at 0 and n/2
    g = xp.asarray(h, device=device)
    assert_spectrum(xp.fft.irfft(g), np.fft.irfft(h), np.float64)
    assert_spectrum(xp.fft.irfft(g, n=7), np.fft.irfft(h, n=7), np.float64)
    assert_spectrum(xp.fft.hfft(g, n=5), np.fft.hfft(h, n=5), np.float64)


@pytest.mark.parametrize(("s", "axes"), [(None, None), (None, (0,)), (None, (-1, 0)), ((4, 8), (0, 2)),
                                         ((3, 16), None), ((2, 2, 2), None), ((-1, 4), (1, 2))], ids=str)
def test_nd_transforms(device, s, axes):
    x = _cdata((4, 6, 8), np.complex128, 5)
    r = x.real.copy()
    g, gr = xp.asarray(x, device=device), xp.asarray(r, device=device)
    nax = axes
    if s is not None and axes is None:        # the last len(s) axes (NumPy 2 wants them spelled out)
        nax = tuple(range(3 - len(s), 3))
    ns = None if s is None else tuple(x.shape[a] if v == -1 else v for v, a in zip(s, nax, strict=True))
    for norm in NORMS:
        assert_spectrum(xp.fft.fftn(g, s=s, axes=axes, norm=norm), np.fft.fftn(x, s=ns, axes=nax, norm=norm),
                        np.complex128)
        assert_spectrum(xp.fft.ifftn(g, s=s, axes=axes, norm=norm), np.fft.ifftn(x, s=ns, axes=nax, norm=norm),
                        np.complex128)
        assert_spectrum(xp.fft.rfftn(gr, s=s, axes=axes, norm=norm), np.fft.rfftn(r, s=ns, axes=nax, norm=norm),
                        np.complex128)
        h = np.fft.rfftn(r, axes=nax)
        assert_spectrum(xp.fft.irfftn(xp.asarray(h, device=device), s=s, axes=axes, norm=norm),
                        np.fft.irfftn(h, s=ns, axes=nax, norm=norm), np.float64)


def test_nd_round_trip_complex64(device):
    x = _cdata((16, 8), np.complex64, 6)
    g = xp.asarray(x, device=device)
    f = xp.fft.fftn(g)
    assert f.dtype == np.complex64
    assert_spectrum(f, np.fft.fftn(x), np.complex64)
    assert_spectrum(xp.fft.ifftn(f), x, np.complex64)
    r = xp.fft.rfftn(xp.real(g))
    assert_spectrum(xp.fft.irfftn(r, s=(16, 8)), x.real, np.float32)


def test_empty_batches_and_fusion(device):
    x = xp.asarray(np.zeros((0, 8), np.complex64), device=device)
    assert xp.fft.fft(x).shape == (0, 8) and xp.fft.rfft(xp.real(x)).shape == (0, 5)
    a = np.arange(8, dtype=np.float32)
    g = xp.asarray(a, device=device)
    assert_spectrum(xp.fft.fft(g * 2 - 1), np.fft.fft((a * 2 - 1).astype(np.complex64)), np.complex64)
    assert_spectrum(xp.abs(xp.fft.fft(g)) ** 2, np.abs(np.fft.fft(a.astype(np.complex64))) ** 2, np.float32)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_transform_errors(device, name):
    g = xp.asarray(np.ones(8), device=device)
    with pytest.raises(ValueError, match="norm"):
        getattr(xp.fft, name)(g, norm="bogus")
    with pytest.raises(ValueError):
        getattr(xp.fft, name)(g, n=0)
    with pytest.raises(ValueError):
        getattr(xp.fft, name)(xp.asarray(1.0, device=device))
    with pytest.raises(TypeError, match="floating-point"):
        getattr(xp.fft, name)(xp.asarray([1, 2], device=device))
    with pytest.raises(TypeError):
        getattr(xp.fft, name)(np.ones(4))
    if name in ("rfft", "ihfft"):
        with pytest.raises(TypeError, match="real floating-point"):
            getattr(xp.fft, name)(xp.asarray([1j, 2j], device=device))


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_nd_transform_errors(device, name):
    g = xp.asarray(np.ones((4, 4)), device=device)
    with pytest.raises(ValueError):
        getattr(xp.fft, name)(g, s=(4,), axes=(0, 1))
    with pytest.raises(ValueError):
        getattr(xp.fft, name)(g, axes=(0, 0))
    with pytest.raises(ValueError):
        getattr(xp.fft, name)(g, s=(0, 4))


def test_fft_namespace():
    assert set(xp.fft.__all__) == {"fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn",
                                   "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"}
    assert xp.fft is xp.asarray(1.0, device="cpu").__array_namespace__().fft


def test_twiddles_and_chirp_tables_are_made_once(wgpu_device):
    """Repeated transforms of one length reuse the device's twiddle table (static_buffer) and the
    Bluestein tables (fft_chirp), and a repeated evaluation replays its plan with them."""
    from gpuarray.fft import chirp as fft_chirp
    from gpuarray.runtime import devices as _devices
    p = _devices.provider_for(wgpu_device)
    for n in (1024, 1000, 4097):
        x = _cdata((2, n), np.complex64, n)
        got = []
        for _ in range(3):
            g = xp.asarray(x * 1, device=wgpu_device)
            got.append(xp.fft.fft(g))
            xp.evaluate(got[-1])
        tables = len(p._static), len(fft_chirp._tables)
        for f in got:
            assert_spectrum(f, np.fft.fft(x), np.complex64)
        g = xp.asarray(x * 1, device=wgpu_device)
        assert_spectrum(xp.fft.fft(g), np.fft.fft(x), np.complex64)
        assert (len(p._static), len(fft_chirp._tables)) == tables


# ---------------------------------------------------------------- several stages per dispatch (wgpu)
BLOCK_SIZES = [1 << k for k in range(15)] + [1 << 16, 1 << 18]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", BLOCK_SIZES)
def test_fft_block_sizes_on_wgpu(wgpu_device, n, dtype):
    """Every power of two across the block kernel's one-, two- and three-pass boundaries (tile 4096
    complex64 / 2048 complex128 points on 32 KiB), forward and inverse, exact dispatch counts."""
    x = _cdata((3, n) if n <= 1 << 14 else (n,), dtype, n)
    g = xp.asarray(x, device=wgpu_device)
    xp.evaluate(g)
    xp.reset_metrics()
    f = xp.fft.fft(g)
    xp.evaluate(f)
    passes = max(_passes(wgpu_device, n, dtype), 1)        # n == 1: a copy of the input
    assert xp.metrics()["dispatches"] == passes and xp.metrics()["host_fallbacks"] == 0
    assert_spectrum(f, np.fft.fft(x), dtype)
    assert_spectrum(xp.fft.ifft(g, norm="ortho"), np.fft.ifft(x, norm="ortho"), dtype)
    assert_spectrum(xp.fft.ifft(f), x, dtype)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(("shape", "axis"), [((1 << 13, 3), 0), ((2, 1 << 12, 5), 1), ((3, 64, 6), 1),
                                             ((1 << 14, 2), 0), ((2, 1 << 15), 1), ((8, 1 << 13), 0)], ids=str)
def test_fft_block_axes_and_batches_on_wgpu(wgpu_device, dtype, shape, axis):
    """Strided transforms (inner > 1) and batches in one and several passes, with a prologue and
    every norm."""
    x = _cdata(shape, dtype, 7)
    g = xp.asarray(x, device=wgpu_device)
    assert_spectrum(xp.fft.fft(g, axis=axis), np.fft.fft(x, axis=axis), dtype)
    for norm in NORMS:
        assert_spectrum(xp.fft.ifft(g * 2 - 1j, axis=axis, norm=norm), np.fft.ifft(x * 2 - 1j, axis=axis, norm=norm),
                        dtype)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_fft_block_matches_stage_kernel(wgpu_device, dtype, monkeypatch):
    """The block kernel computes the one-stage-per-dispatch kernel's butterflies with its twiddles:
    the same results (GPUARRAY_FFT_BLOCK=0 is the fallback), and the same accuracy."""
    from gpuarray.providers import wgpu_fft
    from gpuarray.runtime import replay
    monkeypatch.setattr(replay, "ENABLED", False)
    x = _cdata((2, 1 << 14), dtype, 9)
    g = xp.asarray(x, device=wgpu_device)
    got = {}
    for block in (True, False):
        monkeypatch.setattr(wgpu_fft, "BLOCK", block)
        xp.reset_metrics()
        got[block] = np.asarray(xp.fft.fft(g, axis=1, norm="ortho"))
        assert xp.metrics()["dispatches"] == _passes(wgpu_device, 1 << 14, dtype)
    assert_spectrum(got[True], got[False], dtype)
    assert_spectrum(got[True], np.fft.fft(x, axis=1, norm="ortho"), dtype)


def test_fft_block_plan():
    from gpuarray.render.wgsl_fft_block import block_plan, tile_elements
    assert tile_elements(32768, 8) == 4096 and tile_elements(32768, 16) == 2048 and tile_elements(49152, 8) == 4096
    assert tile_elements(65536, 8, 32768) == 4096 and tile_elements(2048, 8) == 0
    assert block_plan(1, 4096, 4) == [] and block_plan(4096, 4096, 4) == [12] and block_plan(8192, 4096, 4) == [7, 6]
    assert block_plan(1 << 20, 4096, 4) == [10, 10] and block_plan(1 << 22, 4096, 4) == [8, 7, 7]
    assert block_plan(1 << 26, 4096, 4) == [9, 9, 8] and block_plan(1 << 21, 2048, 2) == [7, 7, 7]
    for s in range(1, 31):
        for tile, groups in ((4096, 4), (2048, 2), (1024, 1), (512, 4)):
            plan = block_plan(1 << s, tile, groups)
            assert sum(plan) == s and max(plan) - min(plan) <= 1
            assert len(plan) == 1 or max(plan) <= (tile // groups).bit_length() - 1


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(("shape", "axis"), [((1 << 17,), 0), ((1 << 16, 3), 0), ((2, 1 << 15), 1)], ids=str)
def test_fft_block_three_passes(wgpu_device, dtype, shape, axis, monkeypatch):
    """Three passes (2^17: 2^6 x 2^6 x 2^5) with 8 KiB tiles (the workgroup-memory kernel's default)."""
    from gpuarray.providers import wgpu_fft
    from gpuarray.runtime import replay
    monkeypatch.setattr(replay, "ENABLED", False)
    monkeypatch.setattr(wgpu_fft, "TILE_BYTES", 8192)
    monkeypatch.setattr(wgpu_fft, "REG", False)         # the workgroup-memory kernel (GPUARRAY_FFT_REG=0)
    x = _cdata(shape, dtype, 11)
    g = xp.asarray(x, device=wgpu_device)
    xp.evaluate(g)
    xp.reset_metrics()
    f = xp.fft.fft(g, axis=axis, norm="ortho")
    xp.evaluate(f)
    assert xp.metrics()["dispatches"] == _passes(wgpu_device, shape[axis], dtype) == (3 if shape[axis] > 1 << 16 else 2)
    assert_spectrum(f, np.fft.fft(x, axis=axis, norm="ortho"), dtype)
    assert_spectrum(xp.fft.ifft(g * 1j, axis=axis), np.fft.ifft(x * 1j, axis=axis), dtype)
