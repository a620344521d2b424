"""Integration tests against scikit-learn, SciPy, dask and xarray (the ``interop`` extra).

SciPy and scikit-learn read ``SCIPY_ARRAY_API`` once, when SciPy is first imported, so it is
set here (and in ``tests/conftest.py``) before any test module imports them. The ``device``
fixture (``cpu`` and ``wgpu:0``) comes from ``tests/conftest.py``."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("SCIPY_ARRAY_API", "1")

if "scipy" in sys.modules and os.environ.get("SCIPY_ARRAY_API") != "1":  # pragma: no cover
    raise RuntimeError("SciPy was imported before SCIPY_ARRAY_API=1 was set; run pytest with SCIPY_ARRAY_API=1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import gpuarray as xp  # noqa: E402


def on_device(x: object, device: xp.Device) -> xp.GpuArray:
    """``x`` is a GpuArray on ``device``."""
    assert isinstance(x, xp.GpuArray), f"expected a GpuArray; got {type(x).__name__}"
    assert x.device == device, f"expected an array on {device.name}; got {x.device.name}"
    return x


def close(got: object, want: object, rtol: float = 1e-5, atol: float = 1e-7) -> None:
    """Same shape and values (within tolerance) as NumPy's result."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, f"shape {g.shape} != {w.shape}"
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


@pytest.fixture
def no_f64(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> xp.Device:
    """wgpu:0 as an adapter without ``shader-f64`` (float32 is its only float dtype)."""
    monkeypatch.setattr(wgpu_device.provider, "f64", False)
    return wgpu_device
