"""Reductions side by side: gpuarray against CuPy and PyTorch (where importable).

    python -m bench.reductions [--side 16384] [--reps 10] [--trials 10] [--sweep] [--device wgpu:0]
                               [--out FILE]

Times ``sum``, ``max``, ``mean`` and ``var`` over all elements, ``axis=0`` and
``axis=1`` of a ``side x side`` float32 array (16384^2 = 2^28 elements, 1 GiB), and
``sum(exp(x) * y)`` (a fused prologue: one pass over 2 GiB). Every figure is the
median of ``trials`` trials, each ``reps`` calls followed by a device synchronisation
(wall clock, so gpuarray's figure includes recording and submitting). With
``GPUARRAY_GPU_TIMING=1`` (or when timestamp queries are available through
``gpuarray.profile``) the GPU time of gpuarray's dispatches is reported too.
``--sweep`` also times sum (all, axis 0, axis 1) over the tunables of
``gpuarray.providers.wgpu_reduce`` (target workgroups, rows per chunk, subgroups,
vec4 loads). Results: a table on stdout and JSON (default
``bench/results/reductions_<date>.json``).
"""

# mypy: disable-error-code="misc"
from __future__ import annotations

import datetime
import itertools
import json
import os
import platform
from collections.abc import Callable
from typing import Any

import numpy as np

import gpuarray as xp
from gpuarray.providers import wgpu_reduce

from ._cli import adapter_info, device, parser
from ._timing import median_ms

OPS = ("sum", "max", "mean", "var")
AXES: tuple[int | None, ...] = (None, 0, 1)


def _op(lib: str, mod: Any, name: str, x: Any, axis: int | None) -> Any:
    if lib == "torch":
        dims: Any = () if axis is None else axis
        if name == "max":
            return mod.amax(x, dim=dims) if axis is not None else mod.amax(x)
        if name == "var":
            return mod.var(x, dim=None if axis is None else axis, correction=0)
        return getattr(mod, name)(x) if axis is None else getattr(mod, name)(x, dim=dims)
    return getattr(mod, name)(x, axis=axis)


class Lib:
    """One library: its module, arrays on the GPU, a way to run and to synchronise."""

    def __init__(self, name: str, mod: Any, device: Any = None) -> None:
        self.name, self.mod, self.device = name, mod, device

    def array(self, host: np.ndarray) -> Any:
        if self.name == "gpuarray":
            a = xp.asarray(host, device=self.device)
            xp.evaluate(a + 0)          # uploads a (its first device use)
            return a
        if self.name == "cupy":
            return self.mod.asarray(host)
        return self.mod.from_numpy(host).cuda()

    def run(self, r: Any) -> Any:
        if self.name == "gpuarray":
            xp.evaluate(r)
        return r

    def sync(self) -> None:
        if self.name == "gpuarray":
            xp.synchronize(self.device)
        elif self.name == "cupy":
            self.mod.cuda.Device().synchronize()
        else:
            self.mod.cuda.synchronize()

    def host(self, r: Any) -> np.ndarray:
        if self.name == "torch":
            return np.asarray(r.cpu().numpy())
        if self.name == "cupy":
            return np.asarray(self.mod.asnumpy(r))
        return np.asarray(r)


def libraries(device: Any) -> list[Lib]:
    libs = [Lib("gpuarray", xp, device)]
    try:
        import cupy
        libs.append(Lib("cupy", cupy))
    except Exception:  # noqa: BLE001 - absent libraries are skipped
        pass
    try:
        import torch
        if torch.cuda.is_available():
            libs.append(Lib("torch", torch))
    except Exception:  # noqa: BLE001
        pass
    return libs


def _gpu_ms(fn: Callable[[], Any], reps: int, sync: Callable[[], Any]) -> float | None:
    """GPU time per call of gpuarray's dispatches, from timestamp queries, if available."""
    try:
        with xp.profile():
            xp.reset_metrics()
            for _ in range(reps):
                fn()
            sync()                  # the benchmarked device (not the default one)
            ns = xp.metrics().get("gpu_time_ns", 0)
    except Exception:  # noqa: BLE001 - no timestamp queries here
        return None
    return ns / reps / 1e6 if ns else None


_REFS: dict[tuple[int, str, int | None], np.ndarray] = {}


def _reference(host: np.ndarray, name: str, axis: int | None) -> np.ndarray:
    """NumPy's result in float64 (computed once per array, op and axis)."""
    key = (id(host), name, axis)
    if key not in _REFS:
        fn = getattr(np, name)
        _REFS[key] = np.asarray(fn(host, axis=axis) if name == "max" else fn(host, axis=axis, dtype=np.float64),
                                dtype=np.float64)
    return _REFS[key]


def _cases(lib: Lib, x: Any, y: Any, nbytes: int) -> list[tuple[str, int | None, Callable[[], Any], int]]:
    cases: list[tuple[str, int | None, Callable[[], Any], int]] = [
        (name, axis, (lambda name=name, axis=axis: lib.run(_op(lib.name, lib.mod, name, x, axis))),
         nbytes * (2 if name == "var" else 1))
        for name, axis in itertools.product(OPS, AXES)]
    cases.append(("sum_exp_x_times_y", None, lambda: lib.run(lib.mod.sum(lib.mod.exp(x) * y)), 2 * nbytes))
    return cases


def _bench_lib(lib: Lib, host: np.ndarray, reps: int, trials: int, check: bool) -> list[dict[str, Any]]:
    side = host.shape[0]
    recs: list[dict[str, Any]] = []
    results: list[tuple[dict[str, Any], np.ndarray]] = []
    x, y = lib.array(host), lib.array(host[::-1].copy())
    for name, axis, fn, nbytes in _cases(lib, x, y, host.nbytes):
        xp.reset_metrics()
        r = fn()
        lib.sync()
        rec: dict[str, Any] = {"library": lib.name, "op": name, "axis": axis, "shape": [side, side],
                               "dtype": "float32"}
        if lib.name == "gpuarray":
            rec["dispatches"] = xp.metrics()["dispatches"]
        if check and name in OPS:
            results.append((rec, lib.host(r).astype(np.float64)))
        del r       # gpuarray hash-conses nodes: a live result would be reused, not recomputed
        ms = median_ms(fn, lib.sync, reps, trials)
        rec.update(ms=ms, GBps=nbytes / ms / 1e6)
        if lib.name == "gpuarray":
            g = _gpu_ms(fn, reps, lib.sync)
            if g is not None:
                rec["gpu_ms"] = g
        recs.append(rec)
        print(_row(rec), flush=True)
    # NumPy's float64 references after every timing: seconds of host work leave the GPU idle, and
    # it runs the next milliseconds at lower clocks (a case timed right after a reference measured
    # up to twice its GPU time)
    for rec, got in results:
        ref = _reference(host, rec["op"], rec["axis"])
        rec["max_rel_err"] = float(np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-3)))
    return recs


def bench(libs: list[Lib], host: np.ndarray, reps: int, trials: int, check: bool) -> list[dict[str, Any]]:
    recs: list[dict[str, Any]] = []
    for lib in libs:
        recs += _bench_lib(lib, host, reps, trials, check)
        if lib.name == "cupy":
            lib.mod.get_default_memory_pool().free_all_blocks()
        elif lib.name == "torch":
            lib.mod.cuda.empty_cache()
    return recs


def sweep(lib: Lib, host: np.ndarray, reps: int, trials: int) -> list[dict[str, Any]]:
    x = lib.array(host)
    recs = []
    saved = {k: getattr(wgpu_reduce, k) for k in ("TARGET_GROUPS", "COL_MIN_ROWS", "USE_SUBGROUPS", "USE_VECTOR")}
    try:
        for tg, rows, sg, vec in itertools.product((512, 1024, 2048, 4096, 8192), (16, 32, 64, 128),
                                                   (True, False), (True, False)):
            wgpu_reduce.TARGET_GROUPS, wgpu_reduce.COL_MIN_ROWS = tg, rows
            wgpu_reduce.USE_SUBGROUPS, wgpu_reduce.USE_VECTOR = sg, vec
            for axis in AXES:
                if rows != 32 and axis != 0:
                    continue            # rows per chunk only matter to the col layout (axis 0)
                ms = median_ms(lambda axis=axis: xp.evaluate(xp.sum(x, axis=axis)), lib.sync, reps, trials)
                rec = {"op": "sum", "axis": axis, "TARGET_GROUPS": tg, "COL_MIN_ROWS": rows, "subgroups": sg,
                       "vec4": vec, "ms": ms, "GBps": host.nbytes / ms / 1e6}
                recs.append(rec)
                print(f"sweep  sum axis={axis!s:4} groups={tg:5} rows={rows:3} sg={sg!s:5} vec4={vec!s:5} "
                      f"{ms:8.3f} ms {rec['GBps']:8.1f} GB/s", flush=True)
    finally:
        for k, v in saved.items():
            setattr(wgpu_reduce, k, v)
    return recs


def _row(r: dict[str, Any]) -> str:
    extra = f" gpu {r['gpu_ms']:.3f} ms" if "gpu_ms" in r else ""
    extra += f" err {r['max_rel_err']:.1e}" if "max_rel_err" in r else ""
    extra += f" dispatches {r['dispatches']}" if "dispatches" in r else ""
    return (f"{r['library']:9} {r['op']:18} axis={r['axis']!s:4} {r['ms']:8.3f} ms {r['GBps']:8.1f} GB/s{extra}")


def table(recs: list[dict[str, Any]]) -> str:
    """ms per library for each (op, axis), and gpuarray's speed relative to CuPy / torch."""
    libs = sorted({r["library"] for r in recs}, key=lambda n: (n != "gpuarray", n))
    keys = sorted({(r["op"], str(r["axis"])) for r in recs})
    by = {(r["library"], r["op"], str(r["axis"])): r["ms"] for r in recs}
    head = f"{'op':18} {'axis':5}" + "".join(f"{n + ' ms':>13}" for n in libs)
    others = [n for n in libs if n != "gpuarray"]
    head += "".join(f"{'vs ' + n:>11}" for n in others)
    lines = [head]
    for op, ax in keys:
        line = f"{op:18} {ax:5}" + "".join(f"{by.get((n, op, ax), float('nan')):13.3f}" for n in libs)
        g = by.get(("gpuarray", op, ax))
        for n in others:
            o = by.get((n, op, ax))
            line += f"{(o / g if g and o else float('nan')):10.2f}x"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = parser(__doc__, reps=10, trials=10)
    p.add_argument("--side", type=int, default=16384)
    p.add_argument("--sweep", action="store_true", help="also time sum over the wgpu_reduce tunables")
    p.add_argument("--no-check", action="store_true", help="skip the float64 NumPy reference check")
    a = p.parse_args(argv)
    dev = device(a)
    host = np.random.default_rng(0).random((a.side, a.side), dtype=np.float32)
    libs = libraries(dev)
    info = adapter_info(dev)
    res: dict[str, Any] = {
        "date": datetime.date.today().isoformat(), "host": platform.node(), "device": str(dev),
        "adapter": info.get("name"), "features": info.get("features"), "side": a.side, "reps": a.reps,
        "trials": a.trials, "libraries": [lib.name for lib in libs],
        "tunables": {k: getattr(wgpu_reduce, k) for k in ("TARGET_GROUPS", "ROW_MIN_ELEMS", "COL_MIN_ROWS",
                                                          "USE_SUBGROUPS", "USE_VECTOR")},
        "gpu_timing_env": os.environ.get("GPUARRAY_GPU_TIMING", ""),
    }
    with xp.config(offload="always"):       # time the device kernels, whatever the size
        res["records"] = bench(libs, host, a.reps, a.trials, not a.no_check)
        print()
        print(table(res["records"]))
        if a.sweep:
            res["sweep"] = sweep(libs[0], host, a.reps, a.trials)
    out = a.out or os.path.join(os.path.dirname(__file__), "results", f"reductions_{res['date']}.json")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
