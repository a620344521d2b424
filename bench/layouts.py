"""Elementwise work that reads an operand transposed (``x + x.T``), gpuarray against PyTorch eager,
``torch.compile``, JAX ``jit`` and CuPy in one process.

    python -m bench.layouts [--runs 5] [--libs torch,torch_compile,jax,cupy] [--out FILE]

Workloads (data uniform in [-3, 3]): ``x + x.T`` of 8192^2 float32, ``x.T * 2 + 1`` of 4096 x
16384 float32 (not square), ``(x + x.T) / 2`` of 4096^2 float64 (symmetrizing a covariance), and a
batched ``x.mT + 1`` of 64 x 512 x 1024 float32. Each figure is the median wall time per call
(``_timing.wall_per_call``: half a second of warm-up, then trials of repeated calls and one
synchronize); gpuarray's results are dropped between calls. gpuarray's GPU time (timestamp
queries, median of warm evaluations) and its largest error against NumPy are reported too.
``gpuarray_jit_ms``: the same call under ``gpuarray.jit`` (``_timing.jit_ms``: calls replay the
first call's evaluation without recording the graph).
"""

# mypy: disable-error-code="misc"
from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ._timing import gpu_ms, jit_ms, time_peers, wall_per_call, write_out

# name -> (shape, dtype, function of one array; ``.mT`` is the transpose on every library)
WORKLOADS: dict[str, tuple[tuple[int, ...], str, Callable[[Any], Any]]] = {
    "x+x.T": ((8192, 8192), "float32", lambda x: x + x.mT),
    "x.T*2+1": ((4096, 16384), "float32", lambda x: x.mT * 2 + 1),
    "sym64": ((4096, 4096), "float64", lambda x: (x + x.mT) * 0.5),
    "batched": ((64, 512, 1024), "float32", lambda x: x.mT + 1),
}


def run(runs: int, libs: list[str], names: list[str]) -> list[dict[str, Any]]:
    import gpuarray as xp
    rows: list[dict[str, Any]] = []
    rng = np.random.default_rng(0)
    for name in names:
        shape, dt, fn = WORKLOADS[name]
        x = rng.uniform(-3, 3, shape).astype(dt)
        rec: dict[str, Any] = {"workload": name, "shape": list(shape), "dtype": dt}
        gx = xp.asarray(x, device="wgpu:0")
        rec["err"] = float(np.max(np.abs(np.asarray(fn(gx)) - fn(x))))
        xp.reset_metrics()
        xp.evaluate(fn(gx))
        xp.synchronize()
        rec["dispatches"] = xp.metrics()["dispatches"]
        rec["gpuarray_ms"] = 1e3 * wall_per_call(lambda f=fn, a=gx: xp.evaluate(f(a)), xp.synchronize, runs)
        rec["gpuarray_gpu_ms"] = gpu_ms(xp, lambda f=fn, a=gx: xp.evaluate(f(a)), runs)
        rec["gpuarray_jit_ms"] = jit_ms(xp, fn, (gx,), xp.synchronize, runs)
        del gx
        rec.update(time_peers(libs, lambda _lib, _mod, f=fn: f, (x,), runs))
        rows.append(rec)
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--libs", default="torch,torch_compile,jax,cupy")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = run(max(3, args.runs), [v for v in args.libs.split(",") if v], args.workloads.split(","))
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1),
              args.out)


if __name__ == "__main__":
    main()
