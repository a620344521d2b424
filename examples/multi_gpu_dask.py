"""One dask.distributed worker per GPU: a chunked computation spread over every GPU of this host,
timed against one GPU. Each worker is pinned to its device; chunks are created, computed and
combined there, and a chunk sent between workers lands on the receiving worker's device.

    python examples/multi_gpu_dask.py                        # one worker per GPU of this host
    python examples/multi_gpu_dask.py --devices cpu wgpu:0   # or any list of devices
    python examples/multi_gpu_dask.py --rows 4194304 --chunk-rows 262144   # 4 GiB of float32, 16 chunks
"""

from __future__ import annotations

import argparse
import time

import dask.array as da
import numpy as np
from dask.distributed import Client, wait

import gpuarray as xp
from gpuarray.interop.dask import gpu_devices, local_cluster


def make_data(rows: int, cols: int, chunk_rows: int):  # noqa: ANN201 - a dask array
    """Random chunks, uploaded on the device of the worker that makes each one."""
    x = da.random.default_rng(0).standard_normal((rows, cols), chunks=(chunk_rows, cols), dtype=np.float32)
    return x.map_blocks(xp.asarray, meta=xp.asarray(np.empty((0, 0), np.float32)))


def reduce_columns(g):  # noqa: ANN001, ANN201 - a dask array of GpuArray chunks
    """A fused elementwise chain per chunk, then a tree reduction over the chunks."""
    y = da.exp(g * 0.01) * da.sin(g) + da.cos(g) * 0.25 - da.tanh(g)
    return (y * y).mean(axis=0)


def run(devices: list[str], rows: int, cols: int, chunk_rows: int) -> float:
    with local_cluster(devices) as cluster, Client(cluster) as client:
        print("workers:", client.run(lambda: xp.default_device().name))
        g = make_data(rows, cols, chunk_rows).persist()      # make and upload the data first:
        wait(g)                                               # the timing covers the compute only
        reduce_columns(g).compute()                           # warm-up: compile the kernels
        t = time.perf_counter()
        value = reduce_columns(g).compute()
        seconds = time.perf_counter() - t
        assert value.shape == (cols,) and bool(xp.all(xp.isfinite(value)))
        return seconds


def main(devices: list[str] | None = None, rows: int = 1 << 16, cols: int = 256, chunk_rows: int = 1 << 13):
    devs = devices or [d.name for d in gpu_devices()]
    timings = {f"{len(devs)} device(s)": run(devs, rows, cols, chunk_rows)}
    if len(devs) > 1:
        timings["1 device"] = run(devs[:1], rows, cols, chunk_rows)
    return timings


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", nargs="*", default=None, help="devices, one worker each (default: all GPUs)")
    parser.add_argument("--rows", type=int, default=1 << 16)
    parser.add_argument("--cols", type=int, default=256)
    parser.add_argument("--chunk-rows", type=int, default=1 << 13)
    args = parser.parse_args()
    for k, v in main(args.devices, rows=args.rows, cols=args.cols, chunk_rows=args.chunk_rows).items():
        print(f"{k}: {v:.3f} s")
