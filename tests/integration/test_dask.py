"""dask.array with GpuArray chunks: the same results as NumPy chunks, and chunks stay GpuArrays on
their device from task to task (registration happens on its own in ``gpuarray.interop.dask``)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp

from .conftest import close, on_device

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

RNG = np.random.default_rng(5)
DATA = RNG.standard_normal((40, 30))
CHUNKS = (10, 15)


@pytest.fixture(autouse=True)
def _sync_scheduler() -> Any:
    with dask.config.set(scheduler="synchronous"):
        yield


def _blocks_on(device: xp.Device) -> Callable[[Any], Any]:
    def check(block: Any) -> Any:
        on_device(block, device)
        return block
    return check


CASES: dict[str, Callable[[Any], Any]] = {
    "identity": lambda d: d,
    "elementwise": lambda d: (d * 2 + 1) ** 2 - d / 3,
    "ufuncs": lambda d: da.exp(d * 0.1) + np.sin(d) - abs(d),
    "sum": lambda d: d.sum(),
    "sum-axis0": lambda d: d.sum(axis=0),
    "mean-axis1": lambda d: d.mean(axis=1),
    "std": lambda d: d.std(),
    "var-axis0-ddof": lambda d: d.var(axis=0, ddof=1),
    "max-axis0": lambda d: d.max(axis=0),
    "min": lambda d: d.min(),
    "prod-axis1": lambda d: (d * 0.1 + 1).prod(axis=1),
    "any-all": lambda d: (d > 2).any(axis=0) & (d > -4).all(axis=0),
    "argmax-axis0": lambda d: d.argmax(axis=0),
    "argmin-axis1": lambda d: d.argmin(axis=1),
    "cumsum-axis0": lambda d: d.cumsum(axis=0),
    "nansum": lambda d: da.nansum(da.where(d > 1, np.nan, d), axis=0),
    "nanmean": lambda d: da.nanmean(da.where(d > 1, np.nan, d), axis=1),
    "nanmax": lambda d: da.nanmax(da.where(d > 1, np.nan, d)),
    "map_blocks": lambda d: d.map_blocks(lambda b: b * 3 + 1, dtype=d.dtype),
    "map_blocks-namespace": lambda d: d.map_blocks(lambda b: b.__array_namespace__().tanh(b), dtype=d.dtype),
    "map_blocks-reduce": lambda d: d.map_blocks(lambda b: b.sum(axis=1, keepdims=True), chunks=(10, 1)),
    "rechunk": lambda d: d.rechunk((20, 30)),
    "rechunk-uneven": lambda d: d.rechunk((7, 11)) + 1,
    "transpose": lambda d: d.T + d.T,
    "matmul": lambda d: d @ d.T,
    "tensordot": lambda d: da.tensordot(d, d, axes=([0], [0])),
    "where": lambda d: da.where(d > 0, d, 0),
    "concatenate": lambda d: da.concatenate([d, d * 2], axis=0),
    "stack": lambda d: da.stack([d, -d], axis=1),
    "slicing": lambda d: d[3:25:2, ::3],
    "fancy-indexing": lambda d: d[[1, 5, 30, 12]],
    "boolean-mask": lambda d: d[d[:, 0] > 0],
    "reshape": lambda d: d.reshape(1200),
    "clip": lambda d: d.clip(-1, 1),
    "astype": lambda d: d.astype(np.float32),
    "ones_like": lambda d: da.ones_like(d) + d,
    "round": lambda d: da.round(d, 2),
    "pad": lambda d: da.pad(d, 2, mode="constant"),
    "pad-edge": lambda d: da.pad(d, ((1, 2), (0, 3)), mode="edge"),
    "diff": lambda d: da.diff(d, axis=0),
    "map_overlap": lambda d: d.map_overlap(lambda b: b * 2, depth=1, boundary="reflect"),
    "coarsen": lambda d: da.coarsen(np.mean, d, {0: 2, 1: 3}),
    "persist-mean": lambda d: d.persist().mean(),
    # dask's own algorithms over chunk functions (once listed as gaps: they ran on the host or raised)
    "percentile": lambda d: da.percentile(d[:, 0], [10, 50, 90]),
    "einsum": lambda d: da.einsum("ij,ij->i", d, d),
    "unique": lambda d: da.unique(da.floor(d[:, 0] * 3)),
    "histogram": lambda d: da.histogram(d[:, 0], bins=10, range=(-3, 3))[0],
    "bincount": lambda d: da.bincount(da.floor(abs(d[:, 0]) * 3).astype(np.int64)),
    "topk": lambda d: da.topk(d[:, 1], 5),
    "linalg-tsqr-r": lambda d: abs(da.linalg.tsqr(d.rechunk((10, 30)))[1]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_dask_array(name: str, device: xp.Device) -> None:
    fn = CASES[name]
    d = da.from_array(xp.asarray(DATA, device=device), chunks=CHUNKS, asarray=False)
    assert isinstance(d._meta, xp.GpuArray)
    got_lazy = fn(d)
    want = fn(da.from_array(DATA, chunks=CHUNKS)).compute()
    xp.reset_metrics()
    got = got_lazy.compute()
    assert xp.metrics()["host_fallbacks"] == 0, xp.metrics()
    on_device(got, device)
    assert got.dtype == np.asarray(want).dtype, f"dtype {got.dtype} != {np.asarray(want).dtype}"
    close(got, want, rtol=1e-10, atol=1e-12)
    if got_lazy.ndim:                                   # every chunk is a GpuArray on the device
        got_lazy.map_blocks(_blocks_on(device), dtype=got_lazy.dtype).compute()


def test_dask_chunks_stay_on_device_between_tasks(wgpu_device: xp.Device) -> None:
    """A pipeline of elementwise ops, a rechunk and a reduction reads nothing back to the host."""
    d = da.from_array(xp.asarray(DATA.astype(np.float32), device=wgpu_device), chunks=CHUNKS, asarray=False)
    pipeline = ((d * 2 + 1).rechunk((20, 10)).map_blocks(_blocks_on(wgpu_device)) ** 2).sum(axis=0)
    xp.evaluate(xp.asarray(DATA.astype(np.float32), device=wgpu_device))
    xp.reset_metrics()
    result = pipeline.compute()
    assert xp.metrics()["bytes_downloaded"] == 0, xp.metrics()
    assert xp.metrics()["host_fallbacks"] == 0, xp.metrics()
    on_device(result, wgpu_device)
    close(result, ((DATA.astype(np.float32) * 2 + 1) ** 2).sum(axis=0), rtol=1e-5)


def test_dask_threaded_scheduler(device: xp.Device) -> None:
    with dask.config.set(scheduler="threads", num_workers=2):
        d = da.from_array(xp.asarray(DATA, device=device), chunks=(5, 5), asarray=False)
        got = (da.exp(d * 0.5) - d).mean(axis=0).compute()
    close(on_device(got, device), (np.exp(DATA * 0.5) - DATA).mean(axis=0), rtol=1e-10)


def test_dask_numpy_chunks_moved_to_the_device(device: xp.Device) -> None:
    """``map_blocks(xp.asarray, device=...)`` turns NumPy chunks into GpuArray chunks."""
    d = da.from_array(DATA, chunks=CHUNKS).map_blocks(xp.asarray, device=device, dtype=DATA.dtype,
                                                      meta=xp.asarray(np.empty((0, 0)), device=device))
    got = (d * d).sum(axis=1).compute()
    close(on_device(got, device), (DATA * DATA).sum(axis=1), rtol=1e-10)


def test_dask_tokenize_reads_no_data(wgpu_device: xp.Device) -> None:
    from dask.base import tokenize
    g = xp.asarray(DATA, device=wgpu_device)
    xp.evaluate(g)
    xp.reset_metrics()
    t1 = tokenize(g)
    assert t1 == tokenize(g) and t1 != tokenize(g + 1)
    g[0, 0] = 5.0                                  # a new value: a new token
    assert tokenize(g) != t1
    assert xp.metrics()["bytes_downloaded"] == 0


def test_dask_is_not_imported_by_gpuarray() -> None:
    code = "import sys, gpuarray; assert 'dask' not in sys.modules, 'gpuarray imported dask'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
