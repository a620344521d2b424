"""The fft kernel's first pass computing its operand through the fused elementwise prologue
(``render/wgsl_fft_fused.py``) against the separate prologue pass (``GPUARRAY_FFT_FUSE=0``) and NumPy:
complex expressions with complex constants (complex128's are a 64-bit constant table), real inputs
made complex (``rfft``), reversed views, axes with an inner stride, one- and multi-pass lengths,
Bluestein's lengths."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler import plan_cache
from gpuarray.providers import wgpu_fft
from gpuarray.render.wgsl_fft_fused import fuse
from gpuarray.runtime import replay

TOL = {"complex64": 3e-6, "complex128": 1e-13}


def _rel(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got - want))) / max(float(np.max(np.abs(want))), 1e-30)


def _run(fn, fused: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[np.ndarray, int]:
    monkeypatch.setattr(wgpu_fft, "FUSE_PROLOGUE", fused)
    plan_cache.clear()
    replay.clear()
    with xp.config(offload="always"):
        xp.reset_metrics()
        y = fn()
        xp.evaluate(y)
        return np.asarray(y), xp.metrics()["dispatches"]


@pytest.mark.parametrize("n", [8, 12, 1000, 4096, 1 << 16, 4097])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_fused_prologue_matches(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch, n: int, dtype: str) -> None:
    rng = np.random.default_rng(n)
    rows = 3 if n <= 4097 else 1
    h = (rng.standard_normal((rows, n)) + 1j * rng.standard_normal((rows, n))).astype(dtype)
    r = rng.standard_normal((n, 2)).astype("float32" if dtype == "complex64" else "float64")
    g = xp.asarray(h, device=wgpu_device)
    gr = xp.asarray(r, device=wgpu_device)
    cases = {
        "expr": (lambda: xp.fft.ifft(g[:, ::-1] * (2 - 0.5j) + 1j), np.fft.ifft(h[:, ::-1] * (2 - 0.5j) + 1j)),
        "rfft_axis0": (lambda: xp.fft.rfft(gr * 3.0, axis=0), np.fft.rfft(r * 3.0, axis=0)),
        "fft_real_view": (lambda: xp.fft.fft(gr[:, 1]), np.fft.fft(r[:, 1])),
    }
    for name, (fn, want) in cases.items():
        fused, nf = _run(fn, True, monkeypatch)
        plain, np_ = _run(fn, False, monkeypatch)
        assert fused.dtype == want.dtype, name
        assert _rel(fused, want) <= TOL[dtype], (name, _rel(fused, want))
        assert _rel(fused, plain) <= TOL[dtype], name
        if n != 4097:       # a pass fewer where the operand is computed (not Bluestein's own count)
            assert nf == np_ - 1, (name, nf, np_)


def test_fuse_declines_other_forms() -> None:
    """Shaders of another form are not fused (the provider keeps the separate pass)."""
    assert fuse("", "", 7) is None
    pro = ("@group(0) @binding(0) var<storage, read> prm: array<u32>;\n@compute @workgroup_size(256)\nfn main() {\n"
           "  if (gi >= prm[0]) { return; }\n  let v = in0[prm[k]];\n  out0[gi] = v;\n}\n")
    assert fuse("x\ny\nz\nw\n", pro, 7) is None         # a parameter word that is not a literal
