"""Row-wise workloads (a reduction over each row read back by every element of the row), gpuarray
against PyTorch eager, ``torch.compile``, JAX ``jit`` and CuPy in one process.

    python -m bench.rowwise [--shapes 4096x8192,16384x1024] [--runs 5] [--libs ...] [--out FILE]

Workloads: ``softmax``, ``log_softmax``, ``logsumexp`` and ``layernorm`` (with weight and bias)
over the last axis of float32 data uniform in [-30, 30], ``std`` along the last axis in float32 and
float64, and ``std_cols`` / ``std_cols64`` along the first axis (column fusion's one walk). Each
figure is the median wall time per call (``_timing.wall_per_call``: half a second of warm-up calls,
then trials of repeated calls and one synchronize); gpuarray's results are dropped between calls.
``gpuarray_jit_ms`` is the same function under ``gpuarray.jit`` (calls replay the first call's
evaluation; ``jit_err``: its largest difference from the plain call's result). gpuarray's dispatches
per call, its GPU time (timestamp queries: the median of several evaluations right after the wall-
clock trials, while the GPU is warm) and its largest error against NumPy in float64 are reported
too.
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

WORKLOADS = ("softmax", "log_softmax", "logsumexp", "layernorm", "std", "std64", "std_cols", "std_cols64")


def _fn(p: Any, name: str) -> Callable[..., Any]:
    """The workload written against the array namespace ``p`` (NumPy, gpuarray, CuPy, jax.numpy)."""
    def softmax(x: Any, w: Any, b: Any) -> Any:
        e = p.exp(x - p.max(x, axis=-1, keepdims=True))
        return e / p.sum(e, axis=-1, keepdims=True)

    def log_softmax(x: Any, w: Any, b: Any) -> Any:
        z = x - p.max(x, axis=-1, keepdims=True)
        return z - p.log(p.sum(p.exp(z), axis=-1, keepdims=True))

    def logsumexp(x: Any, w: Any, b: Any) -> Any:
        m = p.max(x, axis=-1, keepdims=True)
        return p.log(p.sum(p.exp(x - m), axis=-1, keepdims=True)) + m

    def layernorm(x: Any, w: Any, b: Any) -> Any:
        mu = p.mean(x, axis=-1, keepdims=True)
        var = p.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return (x - mu) / p.sqrt(var + 1e-5) * w + b

    def std(x: Any, w: Any, b: Any) -> Any:
        return p.std(x, axis=-1)

    def std_cols(x: Any, w: Any, b: Any) -> Any:
        return p.std(x, axis=0)
    return {"softmax": softmax, "log_softmax": log_softmax, "logsumexp": logsumexp, "layernorm": layernorm,
            "std": std, "std64": std, "std_cols": std_cols, "std_cols64": std_cols}[name]


def _torch_fn(name: str) -> Callable[..., Any]:
    import torch
    import torch.nn.functional as F  # noqa: N812
    return {"softmax": lambda x, w, b: torch.softmax(x, -1), "log_softmax": lambda x, w, b: F.log_softmax(x, -1),
            "logsumexp": lambda x, w, b: torch.logsumexp(x, -1, keepdim=True),
            "layernorm": lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b, 1e-5),
            "std": lambda x, w, b: torch.std(x, -1, correction=0),
            "std64": lambda x, w, b: torch.std(x, -1, correction=0),
            "std_cols": lambda x, w, b: torch.std(x, 0, correction=0),
            "std_cols64": lambda x, w, b: torch.std(x, 0, correction=0)}[name]


def _peer_fn(lib: str, mod: Any, name: str) -> Callable[..., Any]:
    """The workload on a comparison library: PyTorch's own functions, the namespace version elsewhere."""
    return _torch_fn(name) if lib == "torch" else _fn(mod, name)


def run(shapes: list[tuple[int, int]], runs: int, libs: list[str], names: list[str]) -> list[dict[str, Any]]:
    import gpuarray as xp
    rows: list[dict[str, Any]] = []
    rng = np.random.default_rng(0)
    for shape in shapes:
        for name in names:
            dt = "float64" if name.endswith("64") else "float32"
            x = rng.uniform(-30, 30, shape).astype(dt)
            w = rng.uniform(0.5, 1.5, shape[-1]).astype(dt)
            b = rng.uniform(-1, 1, shape[-1]).astype(dt)
            rec: dict[str, Any] = {"workload": name, "shape": list(shape), "dtype": dt}
            gx, gw, gb = (xp.asarray(a, device="wgpu:0") for a in (x, w, b))
            f = _fn(xp, name)
            got = np.asarray(f(gx, gw, gb))
            xp.reset_metrics()
            xp.evaluate(f(gx, gw, gb))
            xp.synchronize()
            rec["dispatches"] = xp.metrics()["dispatches"]
            rec["gpuarray_ms"] = 1e3 * wall_per_call(lambda f=f, a=(gx, gw, gb): xp.evaluate(f(*a)),
                                                     xp.synchronize, runs)
            rec["gpuarray_gpu_ms"] = gpu_ms(xp, lambda f=f, a=(gx, gw, gb): xp.evaluate(f(*a)), runs)
            rec["jit_err"] = float(np.max(np.abs(np.asarray(xp.jit(f)(gx, gw, gb)) - got)))
            rec["gpuarray_jit_ms"] = jit_ms(xp, f, (gx, gw, gb), xp.synchronize, runs)
            # NumPy's reference after the timings: seconds of host-only work lower the GPU's clocks
            want = _fn(np, name)(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64))
            rec["err"] = float(np.max(np.abs(got - want)))
            del gx, gw, gb
            rec.update(time_peers(libs, lambda lib, mod, name=name: _peer_fn(lib, mod, name), (x, w, b), runs))
            rows.append(rec)
            print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="4096x8192,16384x1024")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--libs", default="torch,torch_compile,jax,cupy")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--out")
    args = ap.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    rows = run(shapes, max(3, args.runs), [v for v in args.libs.split(",") if v], args.workloads.split(","))
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1),
              args.out)


if __name__ == "__main__":
    main()
