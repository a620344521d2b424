"""The benchmark suite: gpuarray against NumPy and, where importable, CuPy, PyTorch and JAX.

    python -m gpuarray bench [--quick] [--only NAME,...] [--out DIR]

Workloads (PERFORMANCE.md): a single elementwise op, the 8-op chain, full and
axis reductions (sum, mean, max, var), a reduction with a fused prologue,
matmul, host<->device transfers, the cost of recording a lazy op, small
arrays, and the first call of a fused kernel in a new process. Every figure
is the median of several trials, each averaging ``reps`` calls followed by a
synchronization; results go to ``DIR/bench.json`` with the device, sizes and
dtypes, and a plot to ``DIR/bench.png``.
"""

# mypy: disable-error-code="misc"
# (lambdas with default arguments bind loop variables; mypy cannot infer their types)
from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import gpuarray as xp

from ._cli import device, parser
from ._timing import median_ms

Record = dict[str, Any]


class Libs:
    """The libraries importable here, each with array creation, a sync and a namespace."""

    def __init__(self, device: Any) -> None:
        self.device = device
        self.available: dict[str, Any] = {"gpuarray": xp, "numpy": np}
        for name in ("cupy", "torch", "jax"):
            try:
                mod = __import__(name)
                if name == "torch" and not mod.cuda.is_available():
                    continue
                if name == "jax":
                    import jax.numpy as jnp
                    mod = jnp
                self.available[name] = mod
            except Exception:  # noqa: BLE001 - absent libraries are skipped
                pass

    def array(self, lib: str, host: np.ndarray) -> Any:
        if lib == "gpuarray":
            a = xp.asarray(host, device=self.device)
            xp.evaluate(a + 0)          # make it resident
            return a
        if lib == "cupy":
            return self.available["cupy"].asarray(host)
        if lib == "torch":
            return self.available["torch"].from_numpy(host.copy()).cuda()
        if lib == "jax":
            import jax
            return jax.device_put(host)
        return host

    def sync(self, lib: str) -> Callable[[], Any]:
        if lib == "gpuarray":
            return lambda: xp.synchronize(self.device)
        if lib == "cupy":
            return self.available["cupy"].cuda.Device().synchronize
        if lib == "torch":
            return self.available["torch"].cuda.synchronize
        return lambda: None

    def run(self, lib: str, result: Any) -> Any:
        """Force evaluation (gpuarray is lazy; JAX is async)."""
        if lib == "gpuarray":
            xp.evaluate(*result) if isinstance(result, tuple) else xp.evaluate(result)
        elif lib == "jax":
            for r in result if isinstance(result, tuple) else (result,):
                r.block_until_ready()
        return result

    def ns(self, lib: str) -> Any:
        return self.available[lib]


def chain8(m: Any, x: Any) -> Any:
    return m.exp(-x * x * 0.5) * m.sin(x) + m.cos(x) * 0.25 - m.tanh(x)


def _fn(m: Any, name: str) -> Any:
    if name == "max" and hasattr(m, "amax") and not hasattr(m, "max"):
        return m.amax
    return getattr(m, name)


def bench_elementwise(libs: Libs, sizes: list[int], reps: int, trials: int) -> list[Record]:
    recs = []
    for n in sizes:
        host = np.random.default_rng(0).random(n, dtype=np.float32)
        for lib in libs.available:
            if lib == "numpy" and n > (1 << 26):
                continue
            m, x = libs.ns(lib), libs.array(lib, host)
            for work, f, nbytes in (("axpb", lambda m=m, x=x: x * 2.0 + 1.0, 8 * n),
                                    ("chain8", lambda m=m, x=x: chain8(m, x), 8 * n)):
                ms = median_ms(lambda f=f, lib=lib: libs.run(lib, f()), libs.sync(lib), reps, trials)
                recs.append({"workload": work, "library": lib, "n": n, "dtype": "float32", "ms": ms,
                             "GBps": nbytes / ms / 1e6})
    return recs


def bench_reductions(libs: Libs, sizes: list[int], reps: int, trials: int) -> list[Record]:
    recs = []
    for n in sizes:
        side = int(np.sqrt(n))
        host = np.random.default_rng(1).random(side * side, dtype=np.float32)
        for lib in libs.available:
            if lib == "numpy" and n > (1 << 26):
                continue
            m, x = libs.ns(lib), libs.array(lib, host)
            x2 = x.reshape(side, side)
            y = libs.array(lib, host[::-1].copy())
            cases: list[tuple[str, Callable[[], Any]]] = [
                ("sum", lambda m=m, x=x: m.sum(x)), ("mean", lambda m=m, x=x: m.mean(x)),
                ("max", lambda m=m, x=x: _fn(m, "max")(x)), ("var", lambda m=m, x=x: m.var(x)),
                ("sum_axis0", lambda m=m, x2=x2: m.sum(x2, axis=0)),
                ("sum_axis1", lambda m=m, x2=x2: m.sum(x2, axis=1)),
                ("sum_exp_x_times_y", lambda m=m, x=x, y=y: m.sum(m.exp(x) * y)),
            ]
            for work, f in cases:
                ms = median_ms(lambda f=f, lib=lib: libs.run(lib, f()), libs.sync(lib), reps, trials)
                nbytes = (8 if work == "sum_exp_x_times_y" else 4) * side * side
                recs.append({"workload": work, "library": lib, "n": side * side, "dtype": "float32", "ms": ms,
                             "GBps": nbytes / ms / 1e6})
    return recs


def bench_matmul(libs: Libs, sizes: list[int], reps: int, trials: int) -> list[Record]:
    recs = []
    for n in sizes:
        rng = np.random.default_rng(2)
        a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
        for lib in libs.available:
            m = libs.ns(lib)
            if not hasattr(m, "matmul") or (lib == "numpy" and n > 4096):
                continue
            if lib == "torch":
                m.backends.cuda.matmul.allow_tf32 = False
            ga, gb = libs.array(lib, a), libs.array(lib, b)
            ms = median_ms(lambda m=m, ga=ga, gb=gb, lib=lib: libs.run(lib, m.matmul(ga, gb)), libs.sync(lib),
                           max(1, reps // 4), trials)
            recs.append({"workload": "matmul", "library": lib, "n": n, "dtype": "float32", "ms": ms,
                         "TFLOPs": 2 * n**3 / ms / 1e9})
    return recs


def bench_transfers(libs: Libs, nbytes: int, trials: int) -> list[Record]:
    recs: list[Record] = []
    if libs.device.kind == "cpu":
        return recs
    host = np.random.default_rng(3).random(nbytes // 4, dtype=np.float32)
    up, down = [], []
    for _ in range(trials):
        a = xp.asarray(host, device=libs.device)
        t0 = time.perf_counter()
        xp.evaluate(a + 0)            # the upload happens at the first kernel
        xp.synchronize(libs.device)
        up.append(time.perf_counter() - t0)
        b = a * 1.0
        xp.evaluate(b)
        xp.synchronize(libs.device)
        t0 = time.perf_counter()
        np.asarray(b)
        down.append(time.perf_counter() - t0)
    recs.append({"workload": "h2d_plus_one_pass", "library": "gpuarray", "n": nbytes, "dtype": "float32",
                 "GBps": nbytes / statistics.median(up) / 1e9})
    recs.append({"workload": "d2h", "library": "gpuarray", "n": nbytes, "dtype": "float32",
                 "GBps": nbytes / statistics.median(down) / 1e9})
    if "cupy" in libs.available:
        cp = libs.ns("cupy")
        t0 = time.perf_counter()
        d = cp.asarray(host)
        cp.cuda.Device().synchronize()
        dt = time.perf_counter() - t0
        recs.append({"workload": "h2d", "library": "cupy", "n": nbytes, "GBps": nbytes / dt / 1e9})
        t0 = time.perf_counter()
        cp.asnumpy(d)
        dt = time.perf_counter() - t0
        recs.append({"workload": "d2h", "library": "cupy", "n": nbytes, "GBps": nbytes / dt / 1e9})
    return recs


def bench_recording(libs: Libs, trials: int) -> list[Record]:
    x = libs.array("gpuarray", np.ones(1024, np.float32))
    per = []
    with xp.config(offload="always"):      # recorded lazily, never the eager small-array path
        for _ in range(trials):
            t0 = time.perf_counter()
            y = x
            for i in range(64):
                y = y + float(i)       # 64 lazy ops: below the depth bound, nothing is evaluated
            per.append((time.perf_counter() - t0) / 64 * 1e6)
    return [{"workload": "record_lazy_op", "library": "gpuarray", "us_per_op": statistics.median(per)}]


def bench_small(libs: Libs, reps: int, trials: int) -> list[Record]:
    recs = []
    for n in (1, 16, 256, 4096):
        host = np.random.default_rng(4).random(n, dtype=np.float32)
        for lib in libs.available:
            x = libs.array(lib, host)
            ms = median_ms(lambda x=x, lib=lib: libs.run(lib, x * 2.0 + 1.0), libs.sync(lib), reps, trials)
            recs.append({"workload": "small_axpb", "library": lib, "n": n, "dtype": "float32",
                         "us_per_op": ms * 1e3 / 2})
    return recs


_FIRST_CALL = """
import time, numpy as np, gpuarray as xp
t0 = time.perf_counter()
x = xp.asarray(np.ones(4096, np.float32), device={dev!r})
y = xp.exp(-x * x * 0.5) * xp.sin(x) + xp.cos(x) * 0.25 - xp.tanh(x)
xp.evaluate(y); xp.synchronize({dev!r})
first = time.perf_counter() - t0
t0 = time.perf_counter()
xp.evaluate(xp.exp(-x * x * 0.25) * xp.sin(x) + xp.cos(x) * 0.5 - xp.tanh(x)); xp.synchronize({dev!r})
print(first * 1e3, (time.perf_counter() - t0) * 1e3)
"""


def bench_first_call(libs: Libs) -> list[Record]:
    code = _FIRST_CALL.format(dev=libs.device.name)
    recs: list[Record] = []
    for attempt in ("first_process", "second_process"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                             env=dict(os.environ))
        if out.returncode != 0:
            recs.append({"workload": "first_call", "attempt": attempt, "error": out.stderr[-300:]})
            continue
        first, cached = (float(v) for v in out.stdout.split()[-2:])
        recs.append({"workload": "first_call", "library": "gpuarray", "attempt": attempt,
                     "first_ms": first, "cached_ms": cached})
    return recs


def plot(recs: list[Record], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("axpb", "GBps"), ("chain8", "GBps"), ("sum", "GBps"), ("sum_exp_x_times_y", "GBps"),
              ("matmul", "TFLOPs")]
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.5))
    for ax, (work, metric) in zip(axes, panels, strict=True):
        for lib in sorted({r["library"] for r in recs if r.get("workload") == work}):
            pts = sorted((r["n"], r[metric]) for r in recs if r.get("workload") == work and r["library"] == lib)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=lib)
        ax.set_xscale("log", base=2)
        ax.set_title(work)
        ax.set_xlabel("elements" if work != "matmul" else "n (n x n)")
        ax.set_ylabel(metric)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    p = parser(out="bench/results", prog="python -m gpuarray bench")
    p.add_argument("--quick", action="store_true", help="small sizes and few repetitions")
    p.add_argument("--only", default="", help="comma-separated workloads: elementwise,reductions,matmul,"
                   "transfers,recording,small,first_call")
    a = p.parse_args(argv)
    dev = device(a)
    libs = Libs(dev)
    big = dev.kind == "wgpu" and dev.provider.device_info().get("adapter_type") != "CPU"
    if a.quick:
        sizes, red_sizes, mm_sizes, reps, trials, xfer = [1 << 12, 1 << 16, 1 << 20], [1 << 16, 1 << 20], \
            [128, 256], 3, 3, 1 << 24
    elif big:
        sizes, red_sizes, mm_sizes, reps, trials, xfer = [1 << k for k in (16, 20, 24, 26, 28)], \
            [1 << 20, 1 << 24, 1 << 28], [1024, 2048, 4096, 8192], 20, 5, 1 << 30
    else:
        sizes, red_sizes, mm_sizes, reps, trials, xfer = [1 << k for k in (12, 16, 20, 22)], \
            [1 << 16, 1 << 20, 1 << 22], [256, 512], 5, 3, 1 << 26
    only = set(filter(None, a.only.split(",")))
    want = (lambda name: not only or name in only)
    recs: list[Record] = []
    steps: list[tuple[str, Callable[[], list[Record]]]] = [
        ("elementwise", lambda: bench_elementwise(libs, sizes, reps, trials)),
        ("reductions", lambda: bench_reductions(libs, red_sizes, reps, trials)),
        ("matmul", lambda: bench_matmul(libs, mm_sizes, reps, trials)),
        ("transfers", lambda: bench_transfers(libs, xfer, trials)),
        ("recording", lambda: bench_recording(libs, trials)),
        ("small", lambda: bench_small(libs, reps * 10, trials)),
        ("first_call", lambda: bench_first_call(libs)),
    ]
    for name, step in steps:
        if want(name):
            t0 = time.perf_counter()
            got = step()
            recs += got
            print(f"{name}: {len(got)} figures in {time.perf_counter() - t0:.1f} s", flush=True)
    info = dev.provider.device_info()
    result = {"date": time.strftime("%Y-%m-%d"), "host": platform.node(), "device": dev.name,
              "adapter": info.get("name"), "provider": info.get("provider"), "quick": a.quick,
              "libraries": sorted(libs.available), "records": recs}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "bench.json"), "w") as f:
        json.dump(result, f, indent=1)
    try:
        plot(recs, os.path.join(a.out, "bench.png"))
    except ImportError:
        print("matplotlib is not installed: no plot (pip install gpuarray-wgpu[bench])")
    print(summary(recs))
    return 0


def summary(recs: list[Record]) -> str:
    lines = [f"{'workload':<20} {'library':<9} {'n':>11}  figure"]
    for r in recs:
        fig = ", ".join(f"{k}={r[k]:.4g}" for k in ("ms", "GBps", "TFLOPs", "us_per_op", "first_ms", "cached_ms")
                        if k in r)
        lines.append(f"{r.get('workload', ''):<20} {r.get('library', ''):<9} {r.get('n', ''):>11}  {fig}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
