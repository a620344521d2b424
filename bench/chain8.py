"""The fused 8-op chain through the public API, side by side with NumPy and,
where importable, CuPy (eager and fuse), PyTorch (eager and compile) and JAX (jit).

    python -m bench.chain8 [--log2n 28] [--reps 20] [--out results.json]

gpuarray is timed by wall clock over ``reps`` evaluations followed by one
read-back (which waits for the queue), so the figure includes submit and
Python overhead; the others are timed with CUDA events (device time) or,
for JAX, by wall clock after ``block_until_ready``. Medians of 5 trials. With
``GPUARRAY_GPU_TIMING=1`` gpuarray's device time per evaluation (timestamp
queries) is reported too (``gpuarray_gpu_ms``, ``gpuarray_fast_math_gpu_ms``),
the counterpart of the CUDA-event figures. NumPy is timed after every GPU
figure: seconds of idle GPU lower its clocks for the next milliseconds.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import gpuarray as xp

from ._cli import adapter_info
from ._timing import event_ms, median_of, write_out


def chain(m: Any, x: Any) -> Any:
    return m.exp(-x * x * 0.5) * m.sin(x) + m.cos(x) * 0.25 - m.tanh(x)


PARTS: dict[str, Callable[[Any], Any]] = {
    "x*2+1": lambda x: x * 2 + 1, "exp(x)": xp.exp, "sin(x)": xp.sin, "cos(x)": xp.cos, "tanh(x)": xp.tanh,
    "exp(-x*x*0.5)": lambda x: xp.exp(-x * x * 0.5),
    # four nested calls: the arithmetic cost of each function, beyond the memory traffic
    "sin^4": lambda x: xp.sin(xp.sin(xp.sin(xp.sin(x)))), "cos^4": lambda x: xp.cos(xp.cos(xp.cos(xp.cos(x)))),
    "exp^4(-)": lambda x: xp.exp(-xp.exp(-xp.exp(-xp.exp(-x)))),
    "tanh^4": lambda x: xp.tanh(xp.tanh(xp.tanh(xp.tanh(x)))),
}


def time_gpuarray(x: Any, reps: int, fn: Callable[[Any, Any], Any] = chain) -> tuple[float, float | None]:
    """(wall ms, device ms) per evaluation: ``reps`` evaluations then one wait, medians of
    trials; the device time from timestamp queries (``GPUARRAY_GPU_TIMING=1``), else None."""
    def once() -> tuple[float, float]:
        xp.reset_metrics()
        t0 = time.perf_counter()
        for _ in range(reps):
            xp.evaluate(fn(xp, x))
        float(x[:1][0] + 0)        # waits for the queue (maps a staging buffer)
        return (time.perf_counter() - t0) / reps * 1e3, xp.metrics().get("gpu_time_ns", 0) / reps / 1e6
    once()
    trials = [once() for _ in range(5)]
    gpu = statistics.median(g for _w, g in trials)
    return statistics.median(w for w, _g in trials), gpu or None


def time_numpy(n: int) -> float:
    h = np.random.default_rng(0).random(n, dtype=np.float32)

    def once() -> float:
        t0 = time.perf_counter()
        chain(np, h)
        return (time.perf_counter() - t0) * 1e3
    return median_of(once, 3)


def others(n: int, reps: int) -> dict[str, float | str]:
    out: dict[str, float | str] = {}
    try:
        import cupy as cp

        def ctime(f: Callable[[], Any]) -> float:
            return event_ms("cupy", f, reps)
        cx = cp.random.rand(n, dtype=cp.float32)
        out["cupy_eager_ms"] = median_of(lambda: ctime(lambda: chain(cp, cx)))
        def chain_cp(x: Any) -> Any:
            return cp.exp(-x * x * 0.5) * cp.sin(x) + cp.cos(x) * 0.25 - cp.tanh(x)
        fused = cp.fuse()(chain_cp)
        out["cupy_fuse_ms"] = median_of(lambda: ctime(lambda: fused(cx)))
        cx = None
        cp.get_default_memory_pool().free_all_blocks()
    except Exception as exc:  # noqa: BLE001 - a missing library is reported, not fatal
        out["cupy_error"] = repr(exc)[:200]
    try:
        import torch

        def ttime(f: Callable[[], Any]) -> float:
            return event_ms("torch", f, reps)
        tx = torch.rand(n, device="cuda")
        out["torch_eager_ms"] = median_of(lambda: ttime(lambda: chain(torch, tx)))
        cf = torch.compile(lambda x: chain(torch, x))
        out["torch_compile_ms"] = median_of(lambda: ttime(lambda: cf(tx)))
        tx = None
        torch.cuda.empty_cache()
    except Exception as exc:  # noqa: BLE001
        out["torch_error"] = repr(exc)[:200]
    try:
        import jax
        import jax.numpy as jnp
        jx = jax.random.uniform(jax.random.PRNGKey(0), (n,), dtype=jnp.float32)
        jf = jax.jit(lambda x: chain(jnp, x))
        jf(jx).block_until_ready()

        def jtime() -> float:
            t0 = time.perf_counter()
            for _ in range(reps):
                r = jf(jx)
            r.block_until_ready()
            return (time.perf_counter() - t0) / reps * 1e3
        out["jax_jit_ms"] = median_of(jtime)
        jx = None
    except Exception as exc:  # noqa: BLE001
        out["jax_error"] = repr(exc)[:200]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--log2n", type=int, default=28)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--numpy-log2n", type=int, default=26)
    p.add_argument("--out", default="")
    p.add_argument("--parts", action="store_true", help="also time each function of the chain alone")
    a = p.parse_args(argv)
    n = 1 << a.log2n
    dev = xp.default_device()
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    x = xp.asarray(host, device=dev)
    xp.evaluate(x)
    # correctness first, on a slice
    got = np.asarray(chain(xp, x[: 1 << 20]))
    ok = bool(np.allclose(got, chain(np, host[: 1 << 20]), rtol=1e-4, atol=1e-5))
    xp.reset_metrics()
    xp.evaluate(chain(xp, x))
    dispatches = xp.metrics()["dispatches"]
    res: dict[str, Any] = {
        "workload": "chain8 exp(-x*x*0.5)*sin(x)+cos(x)*0.25-tanh(x)", "dtype": "float32",
        "n": n, "device": dev.name, "adapter": adapter_info(dev).get("name"),
        "host": platform.node(), "correct": ok, "dispatches_per_eval": dispatches,
    }
    res["gpuarray_ms"], res["gpuarray_gpu_ms"] = time_gpuarray(x, a.reps)
    with xp.config(fast_math=True):   # WGSL built-ins (config(fast_math=True)): time and error
        res["gpuarray_fast_math_ms"], res["gpuarray_fast_math_gpu_ms"] = time_gpuarray(x, a.reps)
        fast = np.asarray(chain(xp, x[: 1 << 20]))
    with np.errstate(all="ignore"):
        res["fast_math_max_abs_error"] = float(np.max(np.abs(fast - chain(np, host[: 1 << 20]))))
    if a.parts:      # where the chain's time goes: each part alone, one kernel each
        res["parts_ms"] = {name: time_gpuarray(x, a.reps, lambda _m, v, f=f: f(v))[0] for name, f in PARTS.items()}
    del x
    # NumPy after the GPU timings: seconds of host work leave the GPU idle, and it then runs the
    # next milliseconds at lower clocks (the fast-math figure measured right after NumPy's came
    # out at 1.9-3.1 ms instead of 0.85)
    res["numpy_ms_at_numpy_n"], res["numpy_n"] = time_numpy(1 << a.numpy_log2n), 1 << a.numpy_log2n
    res.update(others(n, a.reps))
    res["gpuarray_GBps"] = 2 * n * 4 / res["gpuarray_ms"] / 1e6
    text = json.dumps(res, indent=2)
    print(text)
    write_out(text, a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
