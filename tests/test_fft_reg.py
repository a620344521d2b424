"""The register kernel of the mixed-radix passes (render/wgsl_fft_reg.py, GPUARRAY_FFT_REG, the
default) against NumPy and against the workgroup-memory kernel (render/wgsl_fft_mixed.py,
GPUARRAY_FFT_REG=0) on wgpu: radices up to 16 (and 32), two- and three-stage passes, one-stage passes
that scatter, tail groups, strided axes, both precisions, every norm; its plans and dispatch counts."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_fft
from gpuarray.render.wgsl_fft_mixed import mixed_plan
from gpuarray.render.wgsl_fft_reg import render_fft_reg
from gpuarray.runtime import devices as _devices
from gpuarray.runtime import replay

TOL = {"complex64": 2e-6, "complex128": 1e-14}
NORMS = ["backward", "ortho", "forward"]


@pytest.fixture(autouse=True)
def _defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """The register kernel with its default settings, whatever the environment says."""
    for name, value in (("REG", True), ("MAX_RADIX", 16), ("REG_TILE_BYTES", 32768), ("TILE_BYTES", 8192),
                        ("MIN_RUN_BYTES", 32)):
        monkeypatch.setattr(wgpu_fft, name, value)


def _cdata(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _rel(got: Any, want: np.ndarray) -> float:
    g = np.asarray(got)
    assert g.dtype == want.dtype and g.shape == want.shape
    return float(np.max(np.abs(g - want))) / max(float(np.max(np.abs(want))), 1e-30)


def _dispatches(f: Any) -> int:
    xp.reset_metrics()
    xp.evaluate(f)
    assert xp.metrics()["host_fallbacks"] == 0
    return int(xp.metrics()["dispatches"])


def test_register_plans():
    """Powers of two as radices of at most 16 (32), balanced; 32 KiB complex64 tiles (4096 points,
    4 groups of 32 bytes): 2^16 and 2^20 in two passes, 2^22 and 2^24 in three."""
    assert mixed_plan(1 << 20, 4096, 4, 16) == [(16, 8, 8)] * 2
    assert mixed_plan(1 << 22, 4096, 4, 16) == [(16, 16), (16, 8), (16, 8)]
    assert mixed_plan(1 << 24, 4096, 4, 16) == [(16, 16)] * 3
    assert mixed_plan(1 << 16, 4096, 4, 16) == [(16, 16)] * 2
    assert mixed_plan(1 << 20, 1024, 4, 8) == [(8, 4, 4), (8, 4, 4), (8, 8)]        # the 8 KiB default before
    assert mixed_plan(1024, 4096, 4, 32) == [(32, 32)] and mixed_plan(10 ** 6, 4096, 4, 16) == [(10, 10, 10)] * 2
    # 48 KiB of workgroup memory (NVIDIA's Vulkan drivers): 32 KiB tiles where they save a pass, else 8 KiB
    h200 = SimpleNamespace(limits={"max-compute-workgroup-storage-size": 49152})
    c64 = np.dtype(np.complex64)
    tiles = {e: (wgpu_fft.pass_tile(h200, c64, 1 << e), len(wgpu_fft.pass_plan(h200, c64, 1 << e)))
             for e in (10, 12, 16, 20, 22, 24)}
    assert tiles == {10: (1024, 1), 12: (4096, 1), 16: (1024, 2), 20: (4096, 2), 22: (1024, 3), 24: (1024, 3)}
    for n in [2, 12, 1000, 3 ** 7, 1 << 13, 11 * 13 * 64, 10 ** 6, 3 * 10 ** 6, 1 << 20, 1 << 22, 1 << 24, 1 << 27]:
        for tile, groups, big in ((4096, 4, 16), (2048, 2, 16), (4096, 4, 32), (1024, 4, 8)):
            plan = mixed_plan(n, tile, groups, big)
            assert math.prod(math.prod(p) for p in plan) == n
            odd = (3, 5, 7, 11, 13)
            assert all(r <= max(big, 13) and (r & (r - 1) == 0 or r in odd or r in (6, 10, 14) and r <= big)
                       for p in plan for r in p)
            assert len(plan) == 1 and n <= tile or all(math.prod(p) <= tile // groups for p in plan)
            for p in plan:              # powers of two: the fewest radices <= big, within a factor 2 of each other
                pw = [r for r in p if r & (r - 1) == 0]
                e = sum(r.bit_length() - 1 for r in pw)
                assert len(pw) == -(-e // (big.bit_length() - 1)) and (not pw or max(pw) <= 2 * min(pw))


def test_register_source():
    """A first pass of three stages is two exchanges through workgroup memory: 4 barriers with the
    group indices' (a later pass of two stages: 3 with the group table's; the workgroup-memory
    kernel: 2 per stage and 2 more); a one-stage pass whose load and store orders differ scatters."""
    c64 = np.dtype(np.complex64)
    src, threads = render_fft_reg(c64, (16, 8, 8), 4, False, True, False, False, True)
    assert threads == 256 and src.count("workgroupBarrier()") == 4 and "src[min(" in src and "dst[ob +" in src
    src, _ = render_fft_reg(c64, (16, 16), 4, True, False, True, False, False)
    assert src.count("workgroupBarrier()") == 3 and "* sc;" in src
    src, _ = render_fft_reg(np.dtype(np.complex128), (13,), 3, False, True, False, False, True)
    assert "f64" in src and "dst[gout[gl] + m * mstride]" in src


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(("shape", "axis"), [((2, 1 << 15), 1), ((3, 1000), 1), ((2100, 2), 0), ((6, 35, 3), 1),
                                             ((5, 4096), 1), ((1 << 12, 3), 0), ((2, 3 * 5 ** 5), 1)], ids=str)
def test_register_matches_workgroup_kernel(wgpu_device, dtype, shape, axis, monkeypatch):
    """Both kernels match NumPy (forward, inverse, every norm, with a prologue) and each other."""
    monkeypatch.setattr(replay, "ENABLED", False)
    x = _cdata(shape, dtype, 3)
    g = xp.asarray(x, device=wgpu_device)
    got = {}
    with xp.config(offload="always"):
        for reg in (True, False):
            monkeypatch.setattr(wgpu_fft, "REG", reg)
            got[reg] = np.asarray(xp.fft.fft(g, axis=axis))
            assert _rel(got[reg], np.fft.fft(x, axis=axis)) <= TOL[dtype]
            for norm in NORMS:
                want = np.fft.ifft(x * 2 - 1j, axis=axis, norm=norm)
                assert _rel(xp.fft.ifft(g * 2 - 1j, axis=axis, norm=norm), want) <= TOL[dtype]
    assert _rel(got[True], got[False]) <= TOL[dtype]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_one_stage_passes(wgpu_device, dtype, monkeypatch):
    """512-point tiles of 4 groups (passes of at most 128 points): 13^3 is three one-stage
    passes, the first loading group-major and storing element-major (through workgroup memory);
    1024 and 16 x 13 x 11 in two passes of two or three stages."""
    monkeypatch.setattr(replay, "ENABLED", False)
    size = np.dtype(dtype).itemsize
    monkeypatch.setattr(wgpu_fft, "REG_TILE_BYTES", 512 * size)
    monkeypatch.setattr(wgpu_fft, "MIN_RUN_BYTES", 4 * size)
    p = _devices.provider_for(wgpu_device)
    with xp.config(offload="always"):
        for n, shape, axis in ((2197, (3, 2197), 1), (2197, (2197, 2), 0), (1024, (3, 1024), 1), (2288, (2, 2288), 1)):
            plan = wgpu_fft.pass_plan(p, np.dtype(dtype), n)
            assert len(plan) >= 2 and (n != 2197 or plan == [(13,)] * 3)
            x = _cdata(shape, dtype, n)
            g = xp.asarray(x, device=wgpu_device)
            xp.evaluate(g)
            f = xp.fft.fft(g, axis=axis, norm="ortho")
            assert _dispatches(f) == len(plan)
            assert _rel(f, np.fft.fft(x, axis=axis, norm="ortho")) <= TOL[dtype]
            assert _rel(xp.fft.ifft(g, axis=axis), np.fft.ifft(x, axis=axis)) <= TOL[dtype]


def test_two_passes_of_1024(wgpu_device, monkeypatch):
    """2^20 as two passes of 1024 points (16 x 8 x 8: three stages, two exchanges), two groups per
    workgroup on lavapipe (16-byte runs), four where 34 KiB of workgroup memory fit (the H200)."""
    monkeypatch.setattr(wgpu_fft, "MIN_RUN_BYTES", 16)
    p = _devices.provider_for(wgpu_device)
    assert wgpu_fft.pass_plan(p, np.dtype(np.complex64), 1 << 20) == [(16, 8, 8)] * 2
    x = _cdata((1 << 20,), np.complex64, 20)
    g = xp.asarray(x, device=wgpu_device)
    xp.evaluate(g)
    f = xp.fft.fft(g)
    assert _dispatches(f) == 2
    assert _rel(f, np.fft.fft(x)) <= 2e-6
    assert _rel(xp.fft.ifft(f), x) <= 2e-6


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_radix_32(wgpu_device, dtype, monkeypatch):
    """GPUARRAY_FFT_MAX_RADIX=32: radix-32 butterflies (1024 = 32 x 32), still matching NumPy."""
    monkeypatch.setattr(replay, "ENABLED", False)
    monkeypatch.setattr(wgpu_fft, "MAX_RADIX", 32)
    p = _devices.provider_for(wgpu_device)
    assert wgpu_fft.pass_plan(p, np.dtype(dtype), 1024) == [(32, 32)]
    x = _cdata((3, 1024), dtype, 32)
    with xp.config(offload="always"):
        f = xp.fft.fft(xp.asarray(x, device=wgpu_device), norm="forward")
        assert _rel(f, np.fft.fft(x, norm="forward")) <= TOL[dtype]


@pytest.mark.parametrize(("dtype", "radices", "g"), [("complex64", (16, 8, 8), 4), ("complex128", (16, 8, 8), 2),
                                                     ("complex64", (8, 5, 5, 5), 4)], ids=str)
def test_large_tile_sources_validate(wgpu_device, dtype, radices, g):
    """The passes of 34 KiB of workgroup memory that a 48 KiB adapter runs (2^20 in two passes, 10^6 in
    two) are valid WGSL (lavapipe's 32 KiB cannot run them: the shader module only)."""
    p = _devices.provider_for(wgpu_device)
    for first in (True, False):
        src, _ = render_fft_reg(np.dtype(dtype), radices, g, False, first, not first, False, first)
        assert p.device.create_shader_module(code=src) is not None
