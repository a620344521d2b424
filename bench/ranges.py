"""Fused float32 chains on inputs that take every branch of the accurate functions, gpuarray against
PyTorch eager, ``torch.compile``, JAX ``jit`` and CuPy in one process, by wall clock per call.

    python -m bench.ranges [--sizes 26,28] [--runs 5] [--libs torch,torch_compile,jax,cupy] [--out FILE]

Workloads: chain8 (``exp(-x*x/2) * sin(x) + cos(x) / 4 - tanh(x)``) and GELU in its tanh form
(``x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))``), each on x uniform in [-3, 3] and in
[-30, 30] (where ``tanh`` leaves its polynomial and ``sin``/``cos`` reduce larger arguments),
at 2^k elements for each ``--sizes`` k. Figures: medians of wall time per call
(``_timing.wall_per_call``: half a second of warm-up, then trials of repeated calls and one
synchronize; gpuarray's results are dropped between calls), gpuarray's GPU time (timestamp
queries, median of warm evaluations) and its largest error against NumPy in float64, relative to
max(1, |value|).
``gpuarray_jit_ms``: the same call under ``gpuarray.jit`` (``_timing.jit_ms``: calls replay the
first call's evaluation without recording the graph).
"""

# mypy: disable-error-code="misc"
from __future__ import annotations

import argparse
import json
import math
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ._timing import gpu_ms, jit_ms, time_peers, wall_per_call, write_out

RANGES = {"3": 3.0, "30": 30.0}
_C = math.sqrt(2 / math.pi)


def _fn(p: Any, name: str) -> Callable[[Any], Any]:
    if name == "chain8":
        return lambda x: p.exp(-x * x * 0.5) * p.sin(x) + p.cos(x) * 0.25 - p.tanh(x)
    return lambda x: 0.5 * x * (1 + p.tanh(_C * (x + 0.044715 * (x * x * x))))


def run(sizes: list[int], runs: int, libs: list[str]) -> list[dict[str, Any]]:
    import gpuarray as xp
    rows: list[dict[str, Any]] = []
    rng = np.random.default_rng(0)
    for k in sizes:
        for rname, r in RANGES.items():
            x = rng.uniform(-r, r, 1 << k).astype(np.float32)
            gx = xp.asarray(x, device="wgpu:0")
            for name in ("chain8", "gelu"):
                rec: dict[str, Any] = {"workload": name, "range": f"[-{rname}, {rname}]", "n": 1 << k}
                f = _fn(xp, name)
                sl = slice(0, 1 << 20)
                want = _fn(np, name)(x[sl].astype(np.float64))
                got = np.asarray(f(gx))[sl]
                rec["err"] = float(np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want))))
                rec["gpuarray_ms"] = 1e3 * wall_per_call(lambda f=f, a=gx: xp.evaluate(f(a)), xp.synchronize, runs)
                rec["gpuarray_gpu_ms"] = gpu_ms(xp, lambda f=f, a=gx: xp.evaluate(f(a)), runs)
                rec["gpuarray_jit_ms"] = jit_ms(xp, f, (gx,), xp.synchronize, runs)
                rec.update(time_peers(libs, lambda _lib, mod, name=name: _fn(mod, name), (x,), runs))
                rows.append(rec)
                print(" ".join(f"{k2}={v:.4g}" if isinstance(v, float) else f"{k2}={v}" for k2, v in rec.items()),
                      flush=True)
            del gx
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="26,28")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--libs", default="torch,torch_compile,jax,cupy")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = run([int(s) for s in args.sizes.split(",")], max(3, args.runs), [v for v in args.libs.split(",") if v])
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1),
              args.out)


if __name__ == "__main__":
    main()
