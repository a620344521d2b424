"""dask.array with GpuArray chunks: elementwise work, reductions, map_blocks and rechunk run on
the device, chunk by chunk, and give the same answer as NumPy chunks.

    python examples/dask_chunks.py [--device wgpu:0]
"""

from __future__ import annotations

import argparse

import dask
import dask.array as da
import numpy as np

import gpuarray as xp


def standardize(block):  # noqa: ANN001, ANN201 - a map_blocks function: GpuArray in, GpuArray out
    ns = block.__array_namespace__()                  # gpuarray, for GpuArray chunks
    return (block - ns.mean(block, axis=0)) / ns.std(block, axis=0)


def main(device: str | None = None) -> dict[str, float]:
    dev = xp.Device(device) if device else xp.default_device()
    host = np.random.default_rng(0).standard_normal((2048, 256)).astype(np.float32)
    g = xp.asarray(host, device=dev)

    d = da.from_array(g, chunks=(512, 128), asarray=False)    # GpuArray chunks (slices of g)
    print(d)                                                  # ... chunktype=gpuarray.GpuArray
    y = da.exp(d * 0.5) - d ** 2                              # elementwise, fused per chunk
    col_mean = y.mean(axis=0)                                 # tree reduction over chunks
    z = y.rechunk((2048, 64)).map_blocks(standardize, dtype=np.float32)
    total = z.sum()

    with dask.config.set(scheduler="threads"):
        col_mean_v, total_v = dask.compute(col_mean, total)
    assert isinstance(col_mean_v, xp.GpuArray) and col_mean_v.device == dev

    ref = np.exp(host * 0.5) - host ** 2
    err = float(np.max(np.abs(np.asarray(col_mean_v) - ref.mean(axis=0))))
    assert err < 1e-4, err
    assert abs(float(total_v)) < 1.0                          # standardized columns sum to ~0
    return {"max_error_column_mean": err, "sum_standardized": float(total_v)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cpu or wgpu:N (default: gpuarray's default device)")
    for k, v in main(parser.parse_args().device).items():
        print(f"{k}: {v:.3e}")
