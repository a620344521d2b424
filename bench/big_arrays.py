"""Arrays past one storage binding (2 GiB on the H200): matrix products by blocks and the reductions,
arg-reductions and masks by blocks, gpuarray against PyTorch and CuPy in one process, by wall clock.

    python -m bench.big_arrays [--runs 5] [--libs torch,cupy] [--scale 1] [--sets f32,f64,f32parts,tall] [--out FILE]

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
        # elementwise results past one binding by blocks of rows (wgpu_split.elementwise_row_blocks)
        "X - mean(X, axis=0)": (lambda p, x: x - _ax(p, "mean", x, 0), []),
        "(X - mean) / std, axis=0": (lambda p, x: (x - _ax(p, "mean", x, 0)) / _ax(p, "std", x, 0), []),
        "softmax over rows": (lambda p, x: _softmax(p, x), []),
        # rows selected by a mask computed from the array (each block gathers its own run of the indices)
        "X[X[:, 0] > 0]": (lambda p, x: x[x[:, 0] > 0], []),
        # a join of a computed part (computed first, then copies)
        "concat([X, X[:1000] * 2])": (lambda p, x: _join(p)([x, x[:1000] * 2]), []),
    }


def _join(p: Any) -> Callable[..., Any]:
    """``concat`` in library ``p`` (PyTorch's ``cat``, CuPy's and NumPy's ``concatenate``)."""
    return p.cat if p.__name__ == "torch" else p.concat if p.__name__ == "gpuarray" else p.concatenate


def _ax(p: Any, fn: str, x: Any, axis: int) -> Any:
    """``fn`` (mean, std: NumPy's ddof=0) of ``x`` along ``axis`` in library ``p``."""
    if p.__name__ == "torch":
        return p.std(x, dim=axis, correction=0) if fn == "std" else getattr(p, fn)(x, dim=axis)
    return getattr(p, fn)(x, axis=axis)


def _softmax(p: Any, x: Any) -> Any:
    kw = {"dim": 1, "keepdim": True} if p.__name__ == "torch" else {"axis": 1, "keepdims": True}
    e = p.exp(x - (p.amax(x, **kw) if p.__name__ == "torch" else p.max(x, **kw)))
    return e / p.sum(e, **kw)


def _other(p: Any, name: str) -> Callable[..., Any]:
    if name == "sum(x)":
        return lambda x: p.sum(x)
    if name == "argmax(x)":
        return lambda x: p.argmax(x)
    return lambda x: x[x > 29.5]


SETS = ("f32", "f64", "f32parts", "tall")      # the data sets below, in order


def run(runs: int, libs: list[str], scale: float = 1.0, sets: tuple[str, ...] = SETS) -> list[dict[str, Any]]:
    try:
        import torch
    except ImportError:
        torch = None

    import gpuarray as xp
    rows_out: list[dict[str, Any]] = []

    def one(rec: dict[str, Any], f: Callable[..., Any], args: tuple[Any, ...], hargs: tuple[np.ndarray, ...],
            peer: Callable[[Any], Callable[..., Any]]) -> None:
        fb0 = xp.metrics()["host_fallbacks"]
        got = np.asarray(f(xp, *args))
        rec["host_fallbacks"] = xp.metrics()["host_fallbacks"] - fb0
        if torch is not None:
            ref = peer(torch)(*(torch.from_numpy(a).cuda().double() for a in hargs)).cpu().numpy()
            torch.cuda.empty_cache()
        else:                                   # no PyTorch (a development machine): NumPy in float64
            ref = np.asarray(peer(np)(*(a.astype(np.float64) for a in hargs)))
        rec["err"] = float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref))))) if ref.size else 0.0
        made = xp.metrics()["device_buffers_created"]
        rec["gpuarray_ms"] = 1e3 * wall_per_call(lambda: xp.evaluate(f(xp, *args)), xp.synchronize, runs)
        # buffers the timed calls (and their warm-up) had to create: none when the pool serves them
        rec["buffers_created"] = xp.metrics()["device_buffers_created"] - made
        rec.update(time_peers(libs, lambda _lib, mod: peer(mod), hargs, runs))
        rows_out.append(rec)
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)

    stages = {"f32": ("float32", int(12e6 * scale)), "f64": ("float64", int(6e6 * scale)),
              "f32parts": ("float32", int(24e6 * scale))}
    for dt, rows in (v for k, v in stages.items() if k in sets):
        h = _data(rows, 64, dt, 0)
        x = xp.asarray(h) * 1                   # device-only: no host copy to fall back on
        xp.evaluate(x)
        rng = np.random.default_rng(1)
        for name, (f, shapes) in _work(rows, 64).items():
            small = [rng.uniform(-1, 1, s).astype(dt) for s in shapes]
            gsmall = [xp.asarray(s) for s in small]
            one({"workload": name, "dtype": dt, "shape": [rows, 64]}, f, (x, *gsmall), (h, *small),
                lambda mod, f=f: (lambda *a: f(mod, *a)))
        if rows == int(24e6 * scale):           # past one buffer: reductions and masks of its parts too
            flat = xp.reshape(x, (-1,))
            for name in ("sum(x)", "argmax(x)", "x[x > 29.5]"):
                one({"workload": name, "dtype": dt, "shape": [h.size]},
                    lambda p, a, name=name: _other(p, name)(a), (flat,), (h.reshape(-1),),
                    lambda mod, name=name: _other(mod, name))
            one({"workload": "sum(X, axis=0)", "dtype": dt, "shape": [rows, 64]}, lambda p, a: p.sum(a, axis=0),
                (x,), (h,), lambda mod: (lambda a: mod.sum(a, axis=0)))
            del flat
        del x, h
    if "tall" not in sets:
        return rows_out
    tall = max(8, int(40000 * scale))
    h = _data(tall, 16385, "float32", 2)
    x = xp.asarray(h) * 1
    xp.evaluate(x)
    rng = np.random.default_rng(3)
    for name, s in (("X @ w", (16385,)), ("X.T @ r", (tall,))):
        v = rng.uniform(-1, 1, s).astype(np.float32)
        fn = (lambda p, a, b: a @ b) if name == "X @ w" else (lambda p, a, b: a.T @ b)
        one({"workload": name, "dtype": "float32", "shape": [tall, 16385]}, fn, (x, xp.asarray(v)), (h, v),
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
    ap.add_argument("--scale", type=float, default=1.0, help="rows times this (a quick check: 0.001)")
    ap.add_argument("--sets", default=",".join(SETS), help=f"data sets to run, of {','.join(SETS)}")
    ap.add_argument("--out")
    args = ap.parse_args()
    sets = tuple(v for v in args.sets.split(",") if v)
    if not set(sets) <= set(SETS):
        ap.error(f"--sets takes some of {', '.join(SETS)}, not {args.sets!r}")
    rows = run(max(3, args.runs), [v for v in args.libs.split(",") if v], args.scale, sets)
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1),
              args.out)


if __name__ == "__main__":
    main()
