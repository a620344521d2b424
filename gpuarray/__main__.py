"""Command line: ``python -m gpuarray demo | info | bench``.

- ``demo``: the device found, a fused 8-op expression evaluated there,
  checked against NumPy, and its time next to NumPy's.
- ``info``: the provider in use and why, every adapter with its features and limits.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import numpy as np

import gpuarray as xp
from gpuarray.providers.wgpu_probe import builtin_checks, fallbacks, numerics
from gpuarray.runtime.devices import choice_reason, provider_for, wgpu_adapters


def _chain(xp: Any, x: Any) -> Any:
    return xp.exp(-x * x * 0.5) * xp.sin(x) + xp.cos(x) * 0.25 - xp.tanh(x)


def _median_time(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def demo(args: argparse.Namespace) -> int:

    dev = xp.default_device()
    info = dev.provider.device_info()
    print(f"device: {dev.name} - {info.get('name')} ({info.get('provider')})")
    print(f"why:    {choice_reason()}")
    n = args.size
    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    x = xp.asarray(host, device=dev)
    xp.evaluate(x)
    xp.reset_metrics()
    y = _chain(xp, x)
    xp.evaluate(y)
    m = xp.metrics()
    got = np.asarray(y)
    want = _chain(np, host)
    err = float(np.max(np.abs(got - want)))
    ok = bool(np.allclose(got, want, rtol=1e-4, atol=1e-5))
    print("expression: exp(-x*x*0.5)*sin(x) + cos(x)*0.25 - tanh(x)   (8 ops), "
          f"float32, {n:,} elements")
    print(f"fused into {m['dispatches'] or m['host_kernels']} kernel(s); "
          f"max abs error vs NumPy {err:.2e}: {'OK' if ok else 'MISMATCH'}")

    def run_gpuarray() -> None:
        xp.evaluate(_chain(xp, x))
        if dev.kind == "wgpu":   # wait for the GPU: read one element back
            float(_chain(xp, x[:1])[0])

    run_gpuarray()
    t_ga = _median_time(run_gpuarray, args.repeat)
    t_np = _median_time(lambda: _chain(np, host), args.repeat)
    print(f"time (median of {args.repeat}): gpuarray {t_ga * 1e3:.2f} ms, NumPy {t_np * 1e3:.2f} ms, "
          f"ratio {t_np / t_ga:.2f}x")
    return 0 if ok else 1


def info(args: argparse.Namespace) -> int:

    dev = xp.default_device()
    report: dict[str, Any] = {"default_device": dev.name, "why": choice_reason(), "adapters": []}
    for i, a in enumerate(wgpu_adapters()):
        entry = {**{k: str(v) for k, v in dict(a.info).items()}, "id": f"wgpu:{i}",
                 "features": sorted(a.features),
                 "limits": {k: a.limits[k] for k in sorted(a.limits) if "storage" in k or "buffer" in k
                            or "workgroup" in k}}
        try:
            p = provider_for(xp.Device(f"wgpu:{i}"))
            entry["float64_on_host"] = sorted(p.host_only_f64)
            entry["complex128_on_host"] = sorted(p.host_only_c128)
            found, checks = numerics(p), builtin_checks(p)
            entry["numerics"] = found
            entry["builtins"] = checks         # which WGSL built-ins give the exact answer (wgpu_probe.py)
            entry["fallbacks"] = fallbacks(checks, found)
        except Exception as exc:  # noqa: BLE001 - report, do not fail
            entry["error"] = f"{type(exc).__name__}: {exc}"
        report["adapters"].append(entry)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"provider in use: {dev.name} ({dev.provider.name})")
    print(f"why: {report['why']}")
    if not report["adapters"]:
        print("wgpu adapters: none (install a Vulkan driver, e.g. Debian's mesa-vulkan-drivers)")
    for a in report["adapters"]:
        print(f"- {a['id']}: {a.get('device')} [{a.get('adapter_type')}, {a.get('backend_type')}]"
              f" {a.get('description', '')}")
        print(f"    features: {', '.join(a['features'])}")
        print("    limits: " + ", ".join(f"{k}={v}" for k, v in a["limits"].items()))
        if a.get("float64_on_host"):
            print(f"    float64 ops that run on the host: {', '.join(a['float64_on_host'])}")
        if a.get("complex128_on_host"):
            print(f"    complex128 ops that run on the host: {', '.join(a['complex128_on_host'])}")
        if a.get("numerics"):
            print("    float32 arithmetic: " + ", ".join(f"{k}={v}" for k, v in a["numerics"].items()))
        for sfx, checks in a.get("builtins", {}).items():
            dtype = {"f32": "float32", "f64": "float64"}[sfx]
            exact = [k for k, v in checks.items() if v]
            print(f"    {dtype} WGSL built-ins exact: {', '.join(exact) or 'none'}")
            for k, why in a["fallbacks"][sfx].items():
                print(f"      {k}: not exact; instead: {why}")
        if a.get("builtins"):
            print("    rounding ops: float64 round/trunc/floor/ceil always exact helpers on the bits, float32 the "
                  "built-in where exact")
        if a.get("error"):
            print(f"    could not start: {a['error']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuarray")
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="a fused expression on the best device, checked and timed")
    d.add_argument("--size", type=int, default=1 << 22)
    d.add_argument("--repeat", type=int, default=7)
    i = sub.add_parser("info", help="provider, adapters, features and limits")
    i.add_argument("--json", action="store_true")
    sub.add_parser("bench", help="the benchmark suite (bench/suite.py); --help there", add_help=False)
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:
        return bench(argv[1:])
    args = parser.parse_args(argv)
    return {"demo": demo, "info": info}[args.cmd](args)


def bench(argv: list[str]) -> int:
    """Run bench/suite.py from a source checkout."""
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not os.path.exists(os.path.join(root, "bench", "suite.py")):
        print("the benchmark suite lives in the source checkout (bench/suite.py)", file=sys.stderr)
        return 2
    sys.path.insert(0, root)
    from bench.suite import main as suite_main
    return int(suite_main(argv))


if __name__ == "__main__":
    sys.exit(main())
