"""float64 functions on the device (render/wgsl_f64.py) against PyTorch eager, ``torch.compile``,
JAX ``jit`` and CuPy in one process, by wall clock per call.

    python -m bench.float64 [--sizes 16,22,26] [--runs 5] [--libs torch,torch_compile,jax,cupy] [--out FILE]

Each function runs on float64 data that takes its branches (``exp``, ``tanh``, ``expit``: uniform
in [-3, 3] and in [-30, 30]; ``log``: 10^u, u uniform in [-30, 30]; ``log1p``: uniform in
[-0.99, 30]; ``sin``, ``cos``: [-30, 30], ``sin_big``: [-1e6, 1e6] (Payne-Hanek reduction for some);
``chain8``: issue 18's ``exp(-x*x*0.5)*sin(x) + cos(x)*0.25 - tanh(x)`` on [-3, 3] and [-30, 30])
at 2^k elements for each ``--sizes`` k. Figures are medians of wall time per call
(``_timing.wall_per_call``: half a second of warm-up, then trials of repeated calls and one
synchronize; gpuarray's results are dropped between calls); gpuarray's GPU time (timestamp
queries, median of warm evaluations), its host fallbacks and its largest error in ULP against
NumPy (for ``expit``, the op table's stable formula) are reported too. The first published run
(``results/f64_functions_h200_2026-11-22.json``) was this measurement at 2^26 against PyTorch
eager and CuPy only.
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

from ._timing import gpu_ms, time_peers, wall_per_call, write_out

CASES: dict[str, tuple[str, tuple[float, float]]] = {     # name -> (input law, range)
    "exp": ("uniform", (-30.0, 30.0)), "exp_small": ("uniform", (-3.0, 3.0)),
    "log": ("pow10", (-30.0, 30.0)), "log1p": ("uniform", (-0.99, 30.0)),
    "tanh": ("uniform", (-30.0, 30.0)), "tanh_small": ("uniform", (-3.0, 3.0)),
    "expit": ("uniform", (-30.0, 30.0)),
    "sin": ("uniform", (-30.0, 30.0)), "sin_big": ("uniform", (-1e6, 1e6)), "cos": ("uniform", (-30.0, 30.0)),
    "chain8": ("uniform", (-3.0, 3.0)), "chain8_wide": ("uniform", (-30.0, 30.0)),
}


def _chain8(p: Any) -> Callable[[Any], Any]:
    """Issue 18's elementwise chain: ``exp(-x*x*0.5)*sin(x) + cos(x)*0.25 - tanh(x)``."""
    return lambda x: p.exp(-x * x * 0.5) * p.sin(x) + p.cos(x) * 0.25 - p.tanh(x)


def _fn(p: Any, name: str) -> Callable[[Any], Any]:
    """The function on namespace ``p`` (gpuarray, NumPy, jax.numpy, CuPy, torch)."""
    base = name.split("_")[0]
    if base == "expit":
        return lambda x: 1 / (1 + p.exp(-x))
    if base == "chain8":
        return _chain8(p)
    return getattr(p, base)


def _data(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    law, (lo, hi) = CASES[name]
    u = rng.uniform(lo, hi, n)
    return 10.0 ** u if law == "pow10" else u


def _ulps(got: np.ndarray, want: np.ndarray) -> float:
    with np.errstate(all="ignore"):
        e = np.where((got == want) | (np.isnan(got) & np.isnan(want)), 0.0,
                     np.abs(got - want) / np.spacing(np.abs(want)))
    return float(np.max(e)) if e.size else 0.0


def run(sizes: list[int], runs: int, libs: list[str], names: list[str]) -> list[dict[str, Any]]:
    import gpuarray as xp
    from gpuarray.core.ops import OPS
    rng = np.random.default_rng(0)
    rows: list[dict[str, Any]] = []
    with xp.config(offload="always"):        # on the device at every size (the planner keeps small work on the host)
        for k in sizes:
            rows += _size(xp, OPS, k, runs, libs, names, rng)
    return rows


def _size(xp: Any, OPS: Any, k: int, runs: int, libs: list[str], names: list[str],  # noqa: N803
           rng: np.random.Generator) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in names:
        x = _data(name, 1 << k, rng)
        base = name.split("_")[0]
        f = xp.special.expit if base == "expit" else _fn(xp, name)
        g = xp.asarray(x, device="wgpu:0")
        xp.evaluate(g + 0)
        xp.reset_metrics()
        got = np.asarray(f(g))
        want = OPS["expit"].host_impl()(x) if base == "expit" else _fn(np, name)(x)
        # chain8 sums terms of size ~1 to results near 0: its error is counted in ULP of 1, not of the result
        err = float(np.max(np.abs(got - want)) / np.spacing(1.0)) if base == "chain8" else _ulps(got, want)
        rec: dict[str, Any] = {"function": name, "n": 1 << k, "max_ulp": err,
                               "host_fallbacks": xp.metrics()["host_fallbacks"]}
        rec["gpuarray_ms"] = 1e3 * wall_per_call(lambda f=f, g=g: xp.evaluate(f(g)),
                                                 lambda g=g: xp.synchronize(g.device), runs)
        rec["gpuarray_gpu_ms"] = gpu_ms(xp, lambda f=f, g=g: xp.evaluate(f(g)), runs)
        del g
        rec.update(time_peers(libs, lambda lib, mod, name=name: _peer_fn(lib, mod, name), (x,), runs))
        rows.append(rec)
        print(" ".join(f"{key}={val:.4g}" if isinstance(val, float) else f"{key}={val}" for key, val in rec.items()),
              flush=True)
    return rows


def _peer_fn(lib: str, mod: Any, name: str) -> Callable[[Any], Any]:
    """The function on a comparison library (PyTorch's expit is ``torch.sigmoid``)."""
    return mod.sigmoid if lib == "torch" and name.startswith("expit") else _fn(mod, name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="16,22,26", help="log2 of the element counts")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--libs", default="torch,torch_compile,jax,cupy")
    ap.add_argument("--functions", default=",".join(CASES))
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = run([int(v) for v in args.sizes.split(",")], max(3, args.runs), [v for v in args.libs.split(",") if v],
               args.functions.split(","))
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1),
              args.out)


if __name__ == "__main__":
    main()
