"""Automatic placement: small-array loops stay on the host, a large fused chain goes to the GPU.

    python -m bench.placement [--device wgpu:0] [--out results.json]

Runs with ``config(offload="auto")`` (the default) and reports the time per
small-array operation next to NumPy's, the placement decisions, and the time
of a large fused chain next to NumPy's. Medians of 5 trials.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import numpy as np

import gpuarray as xp
from gpuarray import planner


def small_loop(m: Any, x: Any, steps: int) -> Any:
    for _ in range(steps):
        x = x * 0.999 + 0.001
    return x


def chain8(m: Any, x: Any) -> Any:
    return m.exp(-x * x * 0.5) * m.sin(x) + m.cos(x) * 0.25 - m.tanh(x)


def median_s(fn: Any, trials: int = 5) -> float:
    fn()
    out = []
    for _ in range(trials):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default=None)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--log2n", type=int, default=24)
    p.add_argument("--out", default="")
    a = p.parse_args(argv)
    dev = xp.Device(a.device) if a.device else xp.default_device()
    res: dict[str, Any] = {"device": dev.name, "adapter": dev.provider.device_info().get("name")}
    with xp.config(offload="auto"):
        for n in (16, 1000, 4096):
            host = np.random.default_rng(0).random(n, dtype=np.float32)
            xp.reset_metrics()
            t_np = median_s(lambda host=host: small_loop(np, host, a.steps))
            t_ga = median_s(lambda host=host: np.asarray(small_loop(xp, xp.asarray(host, device=dev), a.steps)))
            m = xp.metrics()
            res[f"small_n{n}"] = {"numpy_us_per_op": t_np / (2 * a.steps) * 1e6,
                                 "gpuarray_us_per_op": t_ga / (2 * a.steps) * 1e6, "ratio": t_ga / t_np,
                                 "dispatches": m["dispatches"], "bytes_uploaded": m["bytes_uploaded"],
                                 "placed": planner.decisions()[-1]["placed"], "why": planner.decisions()[-1]["why"]}
        n = 1 << a.log2n
        host = np.random.default_rng(1).random(n, dtype=np.float32)
        x = xp.asarray(host, device=dev)
        xp.reset_metrics()

        def big() -> None:
            xp.evaluate(chain8(xp, x))
            xp.synchronize(dev)
        t_ga = median_s(big)
        t_np = median_s(lambda: chain8(np, host), 3)
        res["chain8"] = {"n": n, "numpy_ms": t_np * 1e3, "gpuarray_ms": t_ga * 1e3, "speedup": t_np / t_ga,
                         "placed": planner.decisions()[-1]["placed"], "why": planner.decisions()[-1]["why"]}
    text = json.dumps(res, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
