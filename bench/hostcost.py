"""Host time per evaluation: the Python and wgpu calls between two dispatches.

    python -m bench.hostcost [--device wgpu:0] [--reps 200] [--trials 5] [--out results.json]

The ``jit`` cases are the same functions under ``gpuarray.jit`` (no recording: calls replay the
first call's evaluation). Each workload is evaluated ``reps`` times without synchronizing (the GPU works through the
queue meanwhile) and then once synchronized; ``host_us`` is the time per evaluation before that
synchronization, ``total_us`` including it. The arrays are small (2^20 elements, 1024^2), so the
GPU finishes each kernel long before the host has submitted the next and ``host_us`` is what
recording, scheduling, binding and submitting cost. (On lavapipe the shaders run inside the
submit, on this process's threads: there ``host_us`` includes them.) Medians of ``trials``; a
table goes to stdout, the JSON to ``--out``.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import gpuarray as xp

from . import rowwise
from ._cli import adapter_info, device, parser
from ._timing import write_out


def chain8(x: Any) -> Any:
    return xp.exp(-x * x * 0.5) * xp.sin(x) + xp.cos(x) * 0.25 - xp.tanh(x)


def per_eval(dev: Any, fn: Callable[[], Any], reps: int, trials: int) -> tuple[float, float]:
    """(host us, total us) per evaluation of ``fn()``: medians of ``trials`` runs of ``reps``."""
    def run() -> None:
        r = fn()
        if isinstance(r, xp.GpuArray):
            xp.evaluate(r)

    for _ in range(20):
        run()
    xp.synchronize(dev)
    host, total = [], []
    for _ in range(trials):
        t0 = time.perf_counter()
        for _ in range(reps):
            run()
        t1 = time.perf_counter()
        xp.synchronize(dev)
        t2 = time.perf_counter()
        host.append((t1 - t0) / reps * 1e6)
        total.append((t2 - t0) / reps * 1e6)
    return statistics.median(host), statistics.median(total)


def main(argv: list[str] | None = None) -> int:
    a = parser(__doc__, reps=200, trials=5).parse_args(argv)
    dev = device(a)
    rng = np.random.default_rng(0)
    with xp.config(offload="always"):      # on the device, however small
        v = xp.asarray(rng.random(1 << 20, dtype=np.float32), device=dev)
        m = xp.asarray(rng.random((1024, 1024), dtype=np.float32), device=dev)
        w = xp.asarray(rng.uniform(0.5, 1.5, 1024).astype(np.float32), device=dev)   # layernorm weight, bias
        b = xp.asarray(rng.uniform(-1, 1, 1024).astype(np.float32), device=dev)
        c = xp.asarray((rng.standard_normal(1 << 16) + 1j * rng.standard_normal(1 << 16)).astype(np.complex64),
                       device=dev)
        cases: dict[str, Callable[[], Any]] = {
            "x*2+1 (2^20)": lambda: v * 2 + 1, "chain8 (2^20)": lambda: chain8(v),
            "sum (2^20)": lambda: xp.sum(v), "sum axis=1 (1024^2)": lambda: xp.sum(m, axis=1),
            "mean axis=0 (1024^2)": lambda: xp.mean(m, axis=0), "std axis=0 (1024^2)": lambda: xp.std(m, axis=0),
            "softmax rows (1024^2)": lambda: rowwise._fn(xp, "softmax")(m, w, b),
            "layernorm rows (1024^2)": lambda: rowwise._fn(xp, "layernorm")(m, w, b),
            "float(sum) (2^20)": lambda: float(xp.sum(v)),
            "fft complex64 (2^16)": lambda: xp.fft.fft(c)}
        jit_chain8, jit_sum = xp.jit(chain8), xp.jit(xp.sum)
        jit_std, jit_soft = xp.jit(lambda a: xp.std(a, axis=0)), xp.jit(rowwise._fn(xp, "softmax"))
        jit_ln = xp.jit(rowwise._fn(xp, "layernorm"))
        cases.update({       # the same functions under gpuarray.jit: calls replay the first call's evaluation
            "jit chain8 (2^20)": lambda: jit_chain8(v), "jit sum (2^20)": lambda: jit_sum(v),
            "jit std axis=0 (1024^2)": lambda: jit_std(m), "jit softmax rows (1024^2)": lambda: jit_soft(m, w, b),
            "jit layernorm rows (1024^2)": lambda: jit_ln(m, w, b),
            "jit float(sum) (2^20)": lambda: float(jit_sum(v))})
        res: dict[str, Any] = {"device": dev.name, "adapter": adapter_info(dev).get("name"),
                               "reps": a.reps, "trials": a.trials, "cases": {}}
        for name, fn in cases.items():
            host, total = per_eval(dev, fn, a.reps, a.trials)
            res["cases"][name] = {"host_us": host, "total_us": total}
    print(f"device {res['device']} ({res['adapter']})")
    for name, r in res["cases"].items():
        print(f"{name:28s} host {r['host_us']:8.1f} us/eval   with the final sync {r['total_us']:8.1f}")
    write_out(json.dumps(res, indent=1), a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
