"""Automatic placement: small-array loops stay on the host, a large fused chain goes to the GPU.

    python -m bench.placement [--device wgpu:0] [--steps 2000] [--log2n 24] [--out results.json]

Runs with ``config(offload="auto")`` (the default) and reports:

- ``small_n<N>``: a loop of ``x = x * 0.999 + 0.001`` on N float32 elements (N = 1, 16,
  1000, 4096): the time per operation next to NumPy's, timed in turns with it, and the ratio
  (the median of the turns' ratios; target <= 3x), the
  placement of the last operation, and what moved (uploads, dispatches; both should be 0).
  Small operations on host data are computed at once (``eager_host_ops``); the same loop
  with ``config(eager_host=False)`` (recorded lazily, evaluated at the depth bound) is
  reported next to it as ``lazy_us_per_op``;
- ``record_lazy_op``: what ``bench/suite.py``'s recording benchmark measures (64 times
  ``y = y + float(i)`` on 1024 float32 elements, median of trials), under
  ``config(offload="always")`` so that every operation is recorded, not computed;
- ``chain8``: ``exp(-x*x*0.5)*sin(x) + cos(x)*0.25 - tanh(x)`` on 2^log2n elements,
  evaluated and synchronized (after half a second of warm-up, median of at least 20 calls),
  next to NumPy's time.

Medians of 5 trials (``--trials``); a table goes to stdout, the JSON to ``--out``.
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

import numpy as np

import gpuarray as xp
from gpuarray.runtime import planner

from ._cli import adapter_info, device, parser
from ._timing import median_s, paired_s, write_out


def small_loop(m: Any, x: Any, steps: int) -> Any:
    for _ in range(steps):
        x = x * 0.999 + 0.001
    return x


def chain8(m: Any, x: Any) -> Any:
    return m.exp(-x * x * 0.5) * m.sin(x) + m.cos(x) * 0.25 - m.tanh(x)


def small(dev: Any, n: int, steps: int, trials: int) -> dict[str, Any]:
    """The small-array loop on ``n`` elements: gpuarray (eager and lazy) against NumPy."""
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    ops = 2 * steps
    xp.reset_metrics()
    t_np, t_ga = paired_s([lambda: small_loop(np, host, steps),
                           lambda: np.asarray(small_loop(xp, xp.asarray(host, device=dev), steps))], trials)
    m = xp.metrics()
    last = planner.decisions()[-1]
    with xp.config(eager_host=False):
        t_lazy = median_s(lambda: np.asarray(small_loop(xp, xp.asarray(host, device=dev), steps)), trials)
    np_s = statistics.median(t_np)
    return {"n": n, "numpy_us_per_op": np_s / ops * 1e6, "gpuarray_us_per_op": statistics.median(t_ga) / ops * 1e6,
            "ratio": statistics.median(g / c for g, c in zip(t_ga, t_np)),     # of each turn's pair
            "lazy_us_per_op": t_lazy / ops * 1e6, "lazy_ratio": t_lazy / np_s,
            "eager_host_ops": m["eager_host_ops"], "dispatches": m["dispatches"],
            "bytes_uploaded": m["bytes_uploaded"], "placed": last["placed"], "why": last["why"]}


def record_lazy_op(dev: Any, trials: int) -> dict[str, Any]:
    """bench/suite.py's ``bench_recording``, with every operation recorded (offload="always")."""
    with xp.config(offload="always"):
        x = xp.asarray(np.ones(1024, np.float32), device=dev)
        per = []
        for _ in range(max(trials, 20)):
            t0 = time.perf_counter()
            y = x
            for i in range(64):
                y = y + float(i)       # 64 lazy ops: below the depth bound, nothing is evaluated
            per.append((time.perf_counter() - t0) / 64 * 1e6)
        assert not y._node.realized
    return {"us_per_op": statistics.median(per), "target_us": 5.0}


def big_chain(dev: Any, log2n: int, trials: int) -> dict[str, Any]:
    n = 1 << log2n
    host = np.random.default_rng(1).random(n, dtype=np.float32)
    x = xp.asarray(host, device=dev)
    xp.reset_metrics()

    def run() -> None:
        xp.evaluate(chain8(xp, x))
        xp.synchronize(dev)
    t_end = time.perf_counter() + 0.5      # after seconds of host work the GPU clocks are low:
    while time.perf_counter() < t_end:     # half a second of work first
        run()
    t_ga = median_s(run, max(trials, 20))
    t_np = median_s(lambda: chain8(np, host), 3)
    xp.reset_metrics()
    run()                                   # one evaluation: its dispatches
    last = planner.decisions()[-1]
    return {"n": n, "numpy_ms": t_np * 1e3, "gpuarray_ms": t_ga * 1e3, "speedup": t_np / t_ga,
            "dispatches": xp.metrics()["dispatches"], "placed": last["placed"], "why": last["why"]}


def table(res: dict[str, Any]) -> str:
    lines = [f"device {res['device']} ({res['adapter']}), offload=auto, float32",
             f"{'small loop':<12} {'numpy us/op':>12} {'gpuarray':>10} {'ratio':>6} {'lazy':>8} {'ratio':>6} "
             f"{'eager ops':>9} {'disp':>5} {'up B':>5}  placed (why)"]
    for k, r in res.items():
        if k.startswith("small_n"):
            lines.append(f"n={r['n']:<10} {r['numpy_us_per_op']:>12.2f} {r['gpuarray_us_per_op']:>10.2f} "
                         f"{r['ratio']:>5.1f}x {r['lazy_us_per_op']:>8.2f} {r['lazy_ratio']:>5.1f}x "
                         f"{r['eager_host_ops']:>9} {r['dispatches']:>5} {r['bytes_uploaded']:>5}  "
                         f"{r['placed']} ({r['why']})")
    lines.append("(ratio: gpuarray time per op / NumPy's; target <= 3x. lazy: config(eager_host=False))")
    rec = res["record_lazy_op"]
    lines.append(f"recording one lazy op: {rec['us_per_op']:.2f} us (target <= {rec['target_us']} us)")
    c = res["chain8"]
    lines.append(f"chain8 n={c['n']}: numpy {c['numpy_ms']:.2f} ms, gpuarray {c['gpuarray_ms']:.3f} ms "
                 f"({c['speedup']:.1f}x), {c['dispatches']} dispatches, {c['placed']} ({c['why']})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = parser(__doc__, trials=5)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--log2n", type=int, default=24)
    a = p.parse_args(argv)
    dev = device(a)
    res: dict[str, Any] = {"device": dev.name, "adapter": adapter_info(dev).get("name")}
    with xp.config(offload="auto"):
        for n in (1, 16, 1000, 4096):
            res[f"small_n{n}"] = small(dev, n, a.steps, a.trials)
        res["record_lazy_op"] = record_lazy_op(dev, a.trials)
        res["chain8"] = big_chain(dev, a.log2n, a.trials)
    text = json.dumps(res, indent=1)
    print(table(res))
    write_out(text, a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
