"""float32 matmul on gpuarray's wgpu provider: every tile configuration and the autotuned choice,
side by side with CuPy and PyTorch (cuBLAS, TF32 off) when they are importable.

    python -m bench.matmul [--sizes 1024,2048,4096,8192] [--runs 5] [--device wgpu:0]
                           [--configs NAME,...] [--autotune auto|on|off] [--keep-cache] [--out FILE]
                           [--epilogue]

For each size ``n`` (an ``n x n`` by ``n x n`` product) and each configuration:

- ``api``: ``xp.matmul(a, b)`` evaluated ``reps`` times on resident arrays, then
  ``xp.synchronize``: wall time per product, recording and submit included;
- ``device``: the kernel alone, ``reps`` dispatches in one command buffer, then a
  wait (``wgpu_autotune.time_trial``): device time plus one submit's latency,
  spread over ``reps``;
- ``err``: largest error of two rows at each end of the result against NumPy in
  float64, relative to ``|a| @ |b|``.

``--epilogue`` times ``relu(a @ b + bias)`` instead: fused (one matmul dispatch with
the bias and ``maximum`` at the store) against the same computation in two
kernels (the product evaluated first, then the elementwise kernel re-reading it),
with gpuarray's dispatch count and GPU time (timestamp queries), and PyTorch's
``relu(a @ b + bias)`` when importable.

Figures are medians of ``--runs`` runs (>= 5). ``auto`` is the configuration
gpuarray picks by itself: the autotuner runs on the first product of each size
class, from an empty cache directory unless ``--keep-cache`` (its first call,
tuning included, is reported as ``first_call_s``). CuPy and PyTorch are timed with
CUDA events. The table is printed; JSON goes to ``bench/results/matmul_<date>.json``.
"""

# mypy: disable-error-code="misc"
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ._timing import cuda_events, event_ms

Record = dict[str, Any]


def _reps(seconds_each: float, target: float = 0.1) -> int:
    return max(1, min(50, int(target / max(seconds_each, 1e-6))))


def _error(rows: dict[int, np.ndarray], a: np.ndarray, b: np.ndarray) -> float:
    worst = 0.0
    for i, got in rows.items():
        want = a[i].astype(np.float64) @ b.astype(np.float64)
        scale = np.abs(a[i]).astype(np.float64) @ np.abs(b).astype(np.float64) + 1e-30
        worst = max(worst, float(np.max(np.abs(got - want) / scale)))
    return worst


def time_api(xp: Any, dev: Any, ga: Any, gb: Any, runs: int) -> float:
    """Median seconds per evaluated product. No result is kept alive between products: graph
    nodes are hash-consed, so building ``matmul(ga, gb)`` while an evaluated one exists would
    return it without computing anything."""
    def once() -> None:
        xp.evaluate(xp.matmul(ga, gb))
    return _per_call(xp, dev, once, runs)[0]


def _per_call(xp: Any, dev: Any, fn: Callable[[], None], runs: int) -> tuple[float, int]:
    """(median seconds per call of ``fn`` over ``runs`` trials of ``reps`` calls and one
    synchronize, ``reps``); ``reps`` is chosen from the time of a first call."""
    t0 = time.perf_counter()
    fn()
    xp.synchronize(dev)
    reps = _reps(time.perf_counter() - t0)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        xp.synchronize(dev)
        times.append((time.perf_counter() - t0) / reps)
    return statistics.median(times), reps


def time_device(provider: Any, cfg: Any, n: int, handles: list[Any], runs: int) -> float:
    """Median seconds per dispatch of the configuration's kernel on plain ``n x n`` operands."""
    from gpuarray.providers import wgpu_autotune, wgpu_matmul

    kernel = wgpu_matmul.synthetic_kernel(n, n, n)
    r, prm, groups = wgpu_matmul.plan(kernel, cfg, n, n, 1)
    trial = wgpu_autotune.Trial(r.source, prm, handles, groups)
    return statistics.median(wgpu_autotune.time_trial(provider, trial, target_s=0.05) for _ in range(runs))


def time_cuda(lib: str, a: np.ndarray, b: np.ndarray, runs: int) -> float | None:
    """Median seconds per product with CUDA events, or None when the library is not usable."""
    try:
        if lib == "cupy":
            import cupy as cp
            ga, gb = cp.asarray(a), cp.asarray(b)
            mm: Callable[[], Any] = lambda: cp.matmul(ga, gb)  # noqa: E731
        else:
            import torch
            if not torch.cuda.is_available():
                return None
            torch.backends.cuda.matmul.allow_tf32 = False
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            mm = lambda: torch.matmul(ta, tb)  # noqa: E731
        sync = cuda_events(lib)[1]
    except Exception:  # noqa: BLE001 - absent or broken libraries are skipped
        return None
    mm()
    sync()
    t0 = time.perf_counter()
    mm()
    sync()
    reps = _reps(time.perf_counter() - t0)
    return statistics.median(event_ms(lib, mm, reps, warm=False) / 1e3 for _ in range(runs))


def _timed(xp: Any, dev: Any, fn: Callable[[], None], runs: int) -> tuple[float, int, float | None]:
    """(median seconds per call of ``fn`` with a synchronize, dispatches per call, GPU ms per call
    from timestamp queries or None)."""
    fn()
    xp.synchronize(dev)
    xp.reset_metrics()
    fn()
    xp.synchronize(dev)
    dispatches = xp.metrics()["dispatches"]
    seconds, reps = _per_call(xp, dev, fn, runs)
    gpu: float | None = None
    try:
        with xp.profile():
            xp.reset_metrics()
            for _ in range(reps):
                fn()
            xp.synchronize(dev)
            ns = xp.metrics().get("gpu_time_ns", 0)
        gpu = ns / reps / 1e6 if ns else None
    except Exception:  # noqa: BLE001 - no timestamp queries here
        gpu = None
    return seconds, dispatches, gpu


def bench_epilogue(xp: Any, dev: Any, n: int, runs: int) -> list[Record]:
    """``relu(a @ b + bias)`` (``n x n``, float32): fused, in two kernels, and PyTorch's."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    bias = rng.standard_normal(n, dtype=np.float32)
    ga, gb, gbias = (xp.asarray(v, device=dev) for v in (a, b, bias))
    xp.evaluate(ga + 0, gb + 0, gbias + 0)

    def fused() -> None:
        xp.evaluate(xp.maximum(xp.matmul(ga, gb) + gbias, 0.0))

    def unfused() -> None:       # the product evaluated on its own first: two kernels
        c = xp.matmul(ga, gb)
        xp.evaluate(c)
        xp.evaluate(xp.maximum(c + gbias, 0.0))

    r = xp.maximum(xp.matmul(ga, gb) + gbias, 0.0)
    rows = {0: np.asarray(r[0]), n - 1: np.asarray(r[-1])}
    del r
    err = 0.0
    for i, got in rows.items():
        want = np.maximum(a[i].astype(np.float64) @ b.astype(np.float64) + bias, 0)
        scale = np.abs(a[i]).astype(np.float64) @ np.abs(b).astype(np.float64) + np.abs(bias) + 1e-30
        err = max(err, float(np.max(np.abs(got - want) / scale)))
    flop = 2.0 * n**3
    recs: list[Record] = []
    for label, fn in (("fused", fused), ("two kernels", unfused)):
        sec, disp, gpu = _timed(xp, dev, fn, runs)
        recs.append({"n": n, "library": "gpuarray", "case": f"relu(a@b+bias) {label}", "api_ms": sec * 1e3,
                     "gpu_ms": gpu, "dispatches": disp, "TFLOPs_api": flop / sec / 1e12, "max_rel_err": err})
        print(_epi_row(recs[-1]), flush=True)
    try:
        import torch
        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False
            ta, tb, tbias = (torch.from_numpy(v).cuda() for v in (a, b, bias))
            mm: Callable[[], Any] = lambda: torch.relu(ta @ tb + tbias)  # noqa: E731
            mm()
            sync = cuda_events("torch")[1]
            sync()
            ms = statistics.median(event_ms("torch", mm, 10, warm=False) for _ in range(runs))
            recs.append({"n": n, "library": "torch", "case": "relu(a@b+bias)", "gpu_ms": ms,
                         "TFLOPs_api": flop / ms / 1e9})
            print(_epi_row(recs[-1]), flush=True)
    except Exception:  # noqa: BLE001 - absent or broken libraries are skipped
        pass
    return recs


def _epi_row(r: Record) -> str:
    api = f"{r['api_ms']:9.3f}" if "api_ms" in r else " " * 9
    gpu = f"{r['gpu_ms']:9.3f}" if r.get("gpu_ms") is not None else " " * 9
    disp = f"{r['dispatches']:3d}" if "dispatches" in r else "   "
    err = f"{r['max_rel_err']:.1e}" if "max_rel_err" in r else ""
    return f"{r['n']:6d}  {r['library']:9s} {r['case']:28s} {api} {gpu}  {disp} {r['TFLOPs_api']:8.2f}  {err}"


def main_epilogue(sizes: list[int], device: str, runs: int, out_path: str) -> int:
    import gpuarray as xp

    dev = xp.Device(device)
    print("     n  library   case                           api ms    gpu ms  dsp    TF/s  max rel err")
    recs = [r for n in sizes for r in bench_epilogue(xp, dev, n, runs)]
    out = Path(out_path or f"bench/results/matmul_epilogue_{time.strftime('%Y-%m-%d')}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M:%S"), "host": platform.node(),
                               "device": dev.provider.device_info().get("name"), "records": recs}, indent=1))
    print(f"\nwritten to {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1024,2048,4096,8192")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--device", default="wgpu:0")
    p.add_argument("--configs", default="", help="comma-separated configuration names (default: every candidate)")
    p.add_argument("--autotune", default="", choices=["", "auto", "on", "off"])
    p.add_argument("--keep-cache", action="store_true", help="reuse stored autotuning choices")
    p.add_argument("--out", default="")
    p.add_argument("--epilogue", action="store_true", help="time relu(a @ b + bias): fused against two kernels")
    args = p.parse_args(argv)
    runs = max(5, args.runs)
    if args.epilogue:
        os.environ.setdefault("GPUARRAY_OFFLOAD", "always")
        return main_epilogue([int(s) for s in args.sizes.split(",") if s], args.device, runs, args.out)
    if args.autotune:
        os.environ["GPUARRAY_MATMUL_AUTOTUNE"] = args.autotune
    if not args.keep_cache:
        os.environ["GPUARRAY_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpuarray-bench-")
    os.environ.setdefault("GPUARRAY_OFFLOAD", "always")

    import gpuarray as xp
    from gpuarray.providers import wgpu_autotune, wgpu_matmul

    dev = xp.Device(args.device)
    provider = dev.provider
    names = [s for s in args.configs.split(",") if s] or list(dict.fromkeys(
        wgpu_matmul.config_name(c) for c in [*wgpu_matmul.TUNE_LARGE, *wgpu_matmul.TUNE_MEDIUM]))
    configs = [wgpu_matmul.parse_config(s) for s in names]
    recs: list[Record] = []
    tuned: dict[str, Any] = {}
    for n in [int(s) for s in args.sizes.split(",") if s]:
        rng = np.random.default_rng(n)
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        ga, gb = xp.asarray(a, device=dev), xp.asarray(b, device=dev)
        xp.evaluate(ga + 0, gb + 0)
        xp.synchronize(dev)
        flop = 2.0 * n**3
        # the autotuned choice: the first product of the size class tunes (compilation included)
        t0 = time.perf_counter()
        xp.evaluate(xp.matmul(ga, gb))
        xp.synchronize(dev)
        first = time.perf_counter() - t0
        chosen = wgpu_matmul.select(provider, n, n, n, 1, np.dtype(np.float32))
        key = f"matmul:f32:{wgpu_matmul.size_class(n, n, 1)}"
        tuned[str(n)] = {"config": wgpu_matmul.config_name(chosen), "first_call_s": first,
                         "tuned": wgpu_autotune.lookup(provider, key) is not None}
        handles = [provider.alloc(n * n * 4) for _ in range(3)]
        try:
            for label, cfg in [("auto", chosen), *((wgpu_matmul.config_name(c), c) for c in configs)]:
                if not wgpu_matmul.fits(provider, cfg):
                    continue
                with wgpu_matmul.use_config(cfg):
                    api = time_api(xp, dev, ga, gb, runs)
                    c = xp.matmul(ga, gb)
                    rows = {0: np.asarray(c[0]), 1: np.asarray(c[1]), n - 2: np.asarray(c[-2]),
                            n - 1: np.asarray(c[-1])}
                    del c
                dev_s = time_device(provider, cfg, n, handles, runs)
                recs.append({"n": n, "library": "gpuarray", "config": label,
                             "resolved": wgpu_matmul.config_name(cfg), "api_ms": api * 1e3, "device_ms": dev_s * 1e3,
                             "TFLOPs_api": flop / api / 1e12, "TFLOPs_device": flop / dev_s / 1e12,
                             "max_rel_err": _error(rows, a, b)})
                print(_row(recs[-1]), flush=True)
        finally:
            for h in handles:
                provider.free(h)
        for lib in ("cupy", "torch"):
            s = time_cuda(lib, a, b, runs)
            if s is not None:
                recs.append({"n": n, "library": lib, "config": "cuBLAS", "device_ms": s * 1e3,
                             "TFLOPs_device": flop / s / 1e12})
                print(_row(recs[-1]), flush=True)
        del ga, gb
    out = Path(args.out or f"bench/results/matmul_{time.strftime('%Y-%m-%d')}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    info = provider.device_info()
    out.write_text(json.dumps({
        "date": time.strftime("%Y-%m-%d %H:%M:%S"), "device": {k: info.get(k) for k in ("name", "backend",
                                                                                          "adapter_type", "vendor")},
        "host": platform.node(), "dtype": "float32", "runs": runs, "autotune": tuned, "records": recs}, indent=1))
    print()
    print(summary(recs, tuned))
    print(f"\nwritten to {out}")
    return 0


def _row(r: Record) -> str:
    api = f"{r['TFLOPs_api']:8.2f}" if "TFLOPs_api" in r else " " * 8
    err = f"{r['max_rel_err']:.1e}" if "max_rel_err" in r else ""
    name = r["config"] if r["config"] != "auto" else f"auto={r['resolved']}"
    return f"{r['n']:6d}  {r['library']:9s} {name:24s} {api}  {r['TFLOPs_device']:8.2f}  {err}"


def summary(recs: list[Record], tuned: dict[str, Any]) -> str:
    """The table (TFLOP/s) and each size's best gpuarray figure as a share of cuBLAS."""
    lines = ["     n  library   config                   api TF/s  dev TF/s  max rel err", *map(_row, recs), ""]
    for n in sorted({r["n"] for r in recs}):
        ours = [r["TFLOPs_device"] for r in recs if r["n"] == n and r["library"] == "gpuarray"]
        auto = [r["TFLOPs_device"] for r in recs if r["n"] == n and r["config"] == "auto"]
        ref = [r["TFLOPs_device"] for r in recs if r["n"] == n and r["library"] != "gpuarray"]
        line = f"n={n}: best {max(ours, default=0):.2f}, auto {max(auto, default=0):.2f} TFLOP/s"
        if ref:
            line += f" ({100 * max(auto, default=0) / max(ref):.0f}% of cuBLAS {max(ref):.2f})"
        t = tuned.get(str(n), {})
        line += f"; auto picked {t.get('config')} (first call {t.get('first_call_s', 0):.2f} s)"
        lines.append(line)
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
