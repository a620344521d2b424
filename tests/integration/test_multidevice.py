"""More than one device: every adapter is a device, data moves between them on request only,
mixed-device operations raise an error naming both devices, and a dask.distributed cluster with
one worker per device runs a chunked computation across all of them.

On this machine the devices are ``cpu`` and ``wgpu:0`` (lavapipe); on a host with N GPUs the same
code (``gpuarray.interop.dask.local_cluster()``) starts one worker per GPU."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import gpuarray as xp

from .conftest import close, on_device

PAIRS = [("cpu", "wgpu:0"), ("wgpu:0", "cpu")]


def test_every_adapter_is_a_device() -> None:
    from gpuarray.runtime.devices import wgpu_adapters
    devices = xp.__array_namespace_info__().devices()
    assert devices == [xp.Device("cpu")] + [xp.Device(f"wgpu:{i}") for i in range(len(wgpu_adapters()))]
    assert xp.Device("wgpu:0") in devices
    for d in devices:
        on_device(xp.ones(3, device=d) + 1, d)
        assert xp.__array_namespace_info__().default_dtypes(device=d)["real floating"] == d.default_float


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_asarray_and_to_device_move_data(src: str, dst: str) -> None:
    host = np.arange(12.0).reshape(3, 4)
    a = xp.asarray(host, device=src)
    lazy = xp.exp(a * 0.5) + 1                           # an unevaluated expression moves too
    for moved in (a.to_device(dst), xp.asarray(a, device=dst), lazy.to_device(dst), xp.asarray(lazy, device=dst)):
        on_device(moved, xp.Device(dst))
    close(a.to_device(dst), host)
    close(lazy.to_device(dst), np.exp(host * 0.5) + 1, rtol=1e-12)
    assert a.to_device(src) is a or a.to_device(src).device == a.device
    back = a.to_device(dst).to_device(src)
    on_device(back, xp.Device(src))
    np.testing.assert_array_equal(back.to_numpy(), host)
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(a, device=dst, copy=False)


MIXED: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "multiply-reflected": lambda a, b: b.__rmul__(a),
    "maximum": lambda a, b: xp.maximum(a, b),
    "where": lambda a, b: xp.where(a > 0, a, b),
    "matmul": lambda a, b: a @ b.T,
    "concat": lambda a, b: xp.concat([a, b]),
    "stack": lambda a, b: xp.stack([a, b]),
    "broadcast_arrays": lambda a, b: xp.broadcast_arrays(a, b),
    "numpy-ufunc": lambda a, b: np.add(a, b),
    "numpy-function": lambda a, b: np.concatenate([a, b]),
}


@pytest.mark.parametrize("name", list(MIXED))
@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_mixed_devices_raise_naming_both(name: str, first: str, second: str) -> None:
    a = xp.asarray(np.ones((2, 3)), device=first)
    b = xp.asarray(np.ones((2, 3)), device=second)
    with pytest.raises(ValueError, match="different devices") as info:
        MIXED[name](a, b)
    message = str(info.value)
    assert re.search(r"\bcpu\b", message) and "wgpu:0" in message, message


@pytest.mark.parametrize(("data", "scalar"), PAIRS)
def test_zero_d_arrays_act_as_scalars(data: str, scalar: str) -> None:
    """Libraries write ``xp.where(x > 0, x, xp.asarray(0.0))``: a 0-d array made without device=
    goes with the other operands' device, as PyTorch lets a 0-d CPU tensor meet a CUDA tensor."""
    x = xp.asarray(np.array([-1.0, 2.0]), device=data)
    zero = xp.asarray(0.0, device=scalar)
    for r in (x + zero, xp.where(x > 0, x, zero), xp.maximum(zero, x), xp.broadcast_arrays(x, zero)[1]):
        on_device(r, xp.Device(data))
    assert xp.where(x > 0, x, zero).tolist() == [0.0, 2.0]
    lazy = xp.asarray(3.0, device=scalar) * 2                # a lazy 0-d expression moves too
    assert on_device(x + lazy, xp.Device(data)).tolist() == [5.0, 8.0]


# ---- dask.distributed: one worker per device
def _worker_device() -> str:
    return xp.default_device().name


def _make_block(seed: int, rows: int) -> Any:
    """Runs on a worker: a chunk created on that worker's device (its default device)."""
    return xp.asarray(np.random.default_rng(seed).standard_normal((rows, 16)))


def _on_worker_device(block: Any) -> Any:
    assert isinstance(block, xp.GpuArray), type(block)
    assert block.device == xp.default_device(), f"chunk on {block.device}, worker on {xp.default_device()}"
    return block


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    from gpuarray.interop.dask import local_cluster
    with local_cluster(["cpu", "wgpu:0"]) as cluster, distributed.Client(cluster) as c:
        yield c


def test_one_worker_per_device(client: Any) -> None:
    devices = client.run(_worker_device)
    assert sorted(devices.values()) == ["cpu", "wgpu:0"], devices


def test_distributed_chunked_computation(client: Any) -> None:
    import dask.array as da
    devices = client.run(_worker_device)
    workers = sorted(devices, key=devices.get)            # [cpu worker, wgpu:0 worker]
    n, rows = 6, 32
    futures = [client.submit(_make_block, i, rows, workers=[workers[i % 2]], pure=False) for i in range(n)]
    meta = xp.asarray(np.empty((0, 0)))
    x = da.concatenate([da.from_delayed(f, shape=(rows, 16), dtype=np.float64, meta=meta) for f in futures])
    y = (x * 2.0 + 1.0).map_blocks(_on_worker_device)
    # each chunk was computed on the device of the worker that holds it
    where = client.gather(client.compute([_block_devices(b) for b in y.to_delayed().ravel()]))
    assert {w for w, _ in where} == {"cpu", "wgpu:0"} and all(w == b for w, b in where), where
    # merging chunks of both workers moves data between them; it lands on the receiving worker's device
    merged = y.rechunk((rows * n, 16)).map_blocks(_on_worker_device)
    total = (merged ** 2).sum(axis=0) / (rows * n)
    got = total.compute()
    host = np.concatenate([np.random.default_rng(i).standard_normal((rows, 16)) for i in range(n)]) * 2.0 + 1.0
    close(on_device(got, xp.default_device()), (host ** 2).mean(axis=0), rtol=1e-12)
    assert got.shape == (16,)
    close(y.mean().compute(), host.mean(), rtol=1e-12)


def _block_devices(block: Any) -> Any:
    import dask
    return dask.delayed(lambda b: (_worker_device(), b.device.name))(block)


def test_numpy_chunks_go_to_each_workers_device(client: Any) -> None:
    """``map_blocks(xp.asarray)`` uploads each NumPy chunk on the device of the worker that runs it."""
    import dask.array as da
    host = np.arange(4096.0).reshape(64, 64)
    g = da.from_array(host, chunks=(8, 64)).map_blocks(xp.asarray, meta=xp.asarray(np.empty((0, 0))))
    got = (g - g.mean(axis=0)).std(axis=0).compute()
    close(got, (host - host.mean(axis=0)).std(axis=0), rtol=1e-12)


def test_worker_device_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuarray.interop.dask import ENV_DEVICE, worker_device
    devs = ["wgpu:0", "cpu"]
    assert worker_device(0, devs).name == "wgpu:0" and worker_device(1, devs).name == "cpu"
    assert worker_device("host7-1", devs).name == "cpu"            # dask worker --nworkers N --name host7
    monkeypatch.setenv(ENV_DEVICE, "cpu")
    assert worker_device(0, devs).name == "cpu"
