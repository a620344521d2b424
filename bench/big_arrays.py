"""Arrays past one storage binding (2 GiB on the H200): matrix products by blocks and the reductions,
arg-reductions and masks by blocks, gpuarray against PyTorch and CuPy in one process, by wall clock.

    python -m bench.big_arrays [--runs 5] [--libs torch,cupy] [--out FILE]

Data: ``X`` of 12 x 10^6 x 64 float32 (3.07 GB), 6 x 10^6 x 64 float64 (3.07 GB) and 24 x 10^6 x 64
float32 (6.1 GB: past one 4 GiB buffer, stored in two), uniform in [-3, 3] for the first half of the
rows and [-30, 30] for the rest; a 40000 x 16385 float32 matrix (2.6 GB);
device-only arrays (no host copy). Each result is checked against PyTorch in float64 on the same GPU
(largest error relative to the largest magnitude of the result); ``host_fallbacks`` is gpuarray's count
per call (0: all on the device). Wall figures are ``_timing.wall_per_call`` medians (half a second of
warm-up, results dropped between calls).
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

from ._timing import time_peers, wall_per_call, write_out


def _data(rows: int, cols: int, dt: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    h = rows // 2
    return np.concatenate([rng.uniform(-3, 3, (h, cols)), rng.uniform(-30, 30, (rows - h, cols))]).astype(dt)


# name -> (function of (module, X, small operands...), the small operands' shapes from X's)
def _work(rows: int, cols: int) -> dict[str, tuple[Callable[..., Any], list[tuple[int, ...]]]]:
    return {
        "X @ w": (lambda p, x, w: x @ w, [(cols,)]),
        "X @ W (W: cols x 16)": (lambda p, x, w: x @ w, [(cols, 16)]),
        "X.T @ r": (lambda p, x, r: x.T @ r, [(rows,)]),
        "X.T @ X": (lambda p, x: x.T @ x, []),
        "(X - mu).T @ (X - mu)": (lambda p, x, mu: (x - mu).T @ (x - mu), [(cols,)]),
    }


def _other(p: Any, name: str) -> Callable[..., Any]:
    if name == "sum(x)":
        return lambda x: p.sum(x)
    if name == "argmax(x)":
        return lambda x: p.argmax(x)
    return lambda x: x[x > 29.5]


def run(runs: int, libs: list[str]) -> list[dict[str, Any]]:
    import torch

    import gpuarray as xp
    rows_out: list[dict[str, Any]] = []

    def one(rec: dict[str, Any], f: Callable[..., Any], args: tuple[Any, ...], hargs: tuple[np.ndarray, ...],
            peer: Callable[[Any], Callable[..., Any]]) -> None:
        fb0 = xp.metrics()["host_fallbacks"]
        got = np.asarray(f(xp, *args))
        rec["host_fallbacks"] = xp.metrics()["host_fallbacks"] - fb0
        ref = peer(torch)(*(torch.from_numpy(a).cuda().double() for a in hargs)).cpu().numpy()
        rec["err"] = float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref))))) if ref.size else 0.0
        torch.cuda.empty_cache()
        rec["gpuarray_ms"] = 1e3 * wall_per_call(lambda: xp.evaluate(f(xp, *args)), xp.synchronize, runs)
        rec.update(time_peers(libs, lambda _lib, mod: peer(mod), hargs, runs))
        rows_out.append(rec)
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)

    for dt, rows in (("float32", 12_000_000), ("float64", 6_000_000), ("float32", 24_000_000)):
        h = _data(rows, 64, dt, 0)
        x = xp.asarray(h) * 1                   # device-only: no host copy to fall back on
        xp.evaluate(x)
        rng = np.random.default_rng(1)
        for name, (f, shapes) in _work(rows, 64).items():
            small = [rng.uniform(-1, 1, s).astype(dt) for s in shapes]
            gsmall = [xp.asarray(s) for s in small]
            one({"workload": name, "dtype": dt, "shape": [rows, 64]}, f, (x, *gsmall), (h, *small),
                lambda mod, f=f: (lambda *a: f(mod, *a)))
        if rows == 24_000_000:                  # past one buffer: reductions and masks of its parts too
            flat = xp.reshape(x, (-1,))
            for name in ("sum(x)", "argmax(x)", "x[x > 29.5]"):
                one({"workload": name, "dtype": dt, "shape": [h.size]},
                    lambda p, a, name=name: _other(p, name)(a), (flat,), (h.reshape(-1),),
                    lambda mod, name=name: _other(mod, name))
            one({"workload": "sum(X, axis=0)", "dtype": dt, "shape": [rows, 64]}, lambda p, a: p.sum(a, axis=0),
                (x,), (h,), lambda mod: (lambda a: mod.sum(a, axis=0)))
            del flat
        del x, h
    h = _data(40000, 16385, "float32", 2)
    x = xp.asarray(h) * 1
    xp.evaluate(x)
    rng = np.random.default_rng(3)
    for name, s in (("X @ w", (16385,)), ("X.T @ r", (40000,))):
        v = rng.uniform(-1, 1, s).astype(np.float32)
        fn = (lambda p, a, b: a @ b) if name == "X @ w" else (lambda p, a, b: a.T @ b)
        one({"workload": name, "dtype": "float32", "shape": [40000, 16385]}, fn, (x, xp.asarray(v)), (h, v),
            lambda mod, fn=fn: (lambda *a: fn(mod, *a)))
    flat = xp.reshape(x, (-1,))
    hf = h.reshape(-1)
    for name in ("sum(x)", "argmax(x)", "x[x > 29.5]"):
        one({"workload": name, "dtype": "float32", "shape": [hf.size]}, lambda p, a, name=name: _other(p, name)(a),
            (flat,), (hf,), lambda mod, name=name: _other(mod, name))
    return rows_out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--libs", default="torch,cupy")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = run(max(3, args.runs), [v for v in args.libs.split(",") if v])
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1),
              args.out)


if __name__ == "__main__":
    main()
