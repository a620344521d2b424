"""Products whose output exceeds one storage binding (128 MiB on lavapipe, 2 GiB on the H200) run on the
device by blocks of rows, each writing its byte range of the output (``wgpu_matmul.row_blocks``); before
they ran on the host. Results against NumPy on both providers."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_matmul
from gpuarray.runtime import devices, planner


def _over_binding(device: xp.Device, m: int, n: int, dt: str) -> bool:
    limit = getattr(devices.provider_for(device), "max_binding", None)
    return limit is not None and m * n * np.dtype(dt).itemsize > limit


@pytest.mark.parametrize("dt,m,k,n", [("float32", 6001, 7, 6100), ("float64", 4500, 9, 4100),
                                      ("int32", 6000, 5, 6000)])
def test_outputs_past_one_binding(device: xp.Device, dt: str, m: int, k: int, n: int) -> None:
    rng = np.random.default_rng(m)
    if dt == "int32":
        a, b = rng.integers(-30, 30, (m, k), dtype=np.int32), rng.integers(-3, 3, (k, n), dtype=np.int32)
    else:
        a = np.concatenate([rng.uniform(-3, 3, (m // 2, k)), rng.uniform(-30, 30, (m - m // 2, k))]).astype(dt)
        b = rng.uniform(-3, 3, (k, n)).astype(dt)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    with xp.config(offload="always"):
        got = ga @ gb
        xp.evaluate(got)
        placed = planner.decisions()[-1]["placed"]
        total = float(xp.sum(got.astype(xp.float64) if device.supports("float64") else got))
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = {"float32": 2e-6, "float64": 1e-14, "int32": 0.0}[dt]
    np.testing.assert_allclose(np.asarray(got), want.astype(dt), rtol=tol * 8, atol=tol * np.abs(want).max())
    assert total == pytest.approx(want.sum(), rel=1e-4, abs=1e-3 * np.abs(want).sum() / want.size)
    if device.name != "cpu" and _over_binding(device, m, n, dt):
        assert placed == "device"


def test_gram_of_rows_past_one_binding(device: xp.Device) -> None:
    x = np.random.default_rng(2).uniform(-3, 3, (6000, 16)).astype(np.float32)
    g = xp.asarray(x, device=device)
    with xp.config(offload="always"):
        got = np.asarray(g @ g.T)
    want = x.astype(np.float64) @ x.T
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=2e-5, atol=2e-6 * np.abs(want).max())


def test_blocks_and_what_follows(wgpu_device: xp.Device) -> None:
    """The rows per block fit one binding at aligned offsets; elementwise work after such a product runs
    on the device too (split into chunks); a small output is not split."""
    prov = devices.provider_for(wgpu_device)
    h = np.random.default_rng(4).uniform(-3, 3, (6000, 8)).astype(np.float32)
    x = xp.asarray(h, device=wgpu_device)
    rows = wgpu_matmul.row_blocks(prov, _kernel_of(x @ x.T))
    assert (rows is not None) == _over_binding(wgpu_device, 6000, 6000, "float32")
    if rows is not None:
        assert rows % 64 == 0 and rows * 6000 * 4 <= prov.max_binding
    assert wgpu_matmul.row_blocks(prov, _kernel_of(x[:100] @ x[:100].T)) is None
    with xp.config(offload="always"):
        n0 = len(planner.decisions())
        got = np.asarray(x @ x.T * 2.0 + 1.0)
        assert all(d["placed"] == "device" for d in planner.decisions()[n0:])
    want = (h.astype(np.float64) @ h.T) * 2.0 + 1.0
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=2e-5, atol=2e-6 * np.abs(want).max())


def _kernel_of(arr: xp.GpuArray):      # noqa: ANN202
    from gpuarray.compiler.schedule import schedule
    return [k for k in schedule([arr._node]) if k.kind == "matmul"][0]
