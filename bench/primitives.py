"""Sorting, FFTs and gathers on the device against PyTorch, JAX ``jit`` and CuPy in one process, by wall clock.

    python -m bench.primitives [--cases sort,argsort,fft,take,cumsum,mask,bincount,histogram,percentile,
                                argmin_rows,add_at,max_at,min_at,or_reduce,rand,randn,mc_pi] [--runs 5]
                                [--libs torch,jax,cupy]
                                [--shift 0] [--out FILE]

``sort`` / ``argsort``: float32 normal data and int64 over the whole range at 2^24, float64 at
2^22 (a stable argsort: ``torch.argsort(stable=True)``). ``fft``: complex64 transforms of 2^20 and
2^22 points and of 10^6 and 3 x 10^6 points (all mixed-radix Stockham since the twelfth session;
before, radix 2 and Bluestein over power-of-two transforms). The data-dependent functions (issue 19)
at 2^26 float32 uniform in [-3, 3] and [-30, 30]: ``cumsum``, ``mask`` (``x[x > 0.5]``), ``bincount``
(1000 bins), ``histogram`` (100 bins over the data's range), ``percentile`` (q = 30 of 10^7 values)
and ``argmin_rows`` (``argmin(axis=1)`` of 2^20 x 64). ``add_at`` / ``max_at`` / ``min_at``: ``ufunc.at``
of 2^24 float32 values at random positions of a 2^20 target; ``or_reduce``: ``bitwise_or.reduce`` of
2^26 int32 (``_at_case``). ``rand`` / ``randn`` / ``mc_pi``: ``gpuarray.random`` draws of 2^26
float32 and a Monte Carlo estimate of pi (``_rng_case``).
Figures are medians of wall time per call (``_timing.wall_per_call``: half a second of
warm-up, then trials of repeated calls and one synchronize; gpuarray's results are dropped between
calls); gpuarray's GPU time (timestamp queries), the dispatches, bytes read back (host reads: what
the call itself waits for, not its result) and bytes uploaded of one warm call, host fallbacks and
the result checked against NumPy are reported too. ``bincount`` reads its input's (min, max) back
each call, as NumPy's semantics need (the length; negative values raise) and as CuPy and PyTorch
do; ``histogram`` with a range reads nothing back.
``gpuarray_jit_ms``: the same call under ``gpuarray.jit`` (``_timing.jit_ms``: calls replay the
first call's evaluation without recording the graph).
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

from ._timing import gpu_ms, jit_ms, time_peers, wall_per_call, write_out

SORTS = (("float32", 1 << 24), ("int64", 1 << 24), ("float64", 1 << 22))
FFTS = (1 << 20, 1 << 22, 1_000_000, 3_000_000)
DATA_CASES = ("cumsum", "mask", "bincount", "histogram", "percentile", "argmin_rows")
AT_CASES = ("add_at", "max_at", "min_at", "or_reduce")
RNG_CASES = ("rand", "randn", "mc_pi")


def _sort_data(dtype: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if dtype.startswith("float"):
        return rng.standard_normal(n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype)


def _peer_sort(lib: str, mod: Any, arg: bool) -> Callable[[Any], Any]:
    if lib in ("torch", "torch_compile"):
        return (lambda x: mod.argsort(x, stable=True)) if arg else (lambda x: mod.sort(x)[0])
    if arg:
        return (lambda x: mod.argsort(x, stable=True)) if lib == "jax" else mod.argsort
    return mod.sort


def _peer_fft(lib: str, mod: Any) -> Callable[[Any], Any]:
    return mod.fft.fft


def _measure(xp: Any, name: str, fn: Callable[[Any], Any], x: np.ndarray, check: Callable[[np.ndarray], bool],
             runs: int) -> dict[str, Any]:
    g = xp.asarray(x, device="wgpu:0")
    xp.evaluate(g * 1)
    got = fn(g)                     # the first call compiles (and uploads what later calls keep)
    correct = bool(check(np.asarray(got)))
    del got
    xp.synchronize(g.device)
    xp.reset_metrics()
    xp.evaluate(fn(g))              # a warm call's work: dispatches, host reads, uploads
    xp.synchronize(g.device)
    m = xp.metrics()
    rec: dict[str, Any] = {"workload": name, "dtype": str(x.dtype), "n": int(x.size), "dispatches": m["dispatches"],
                           "bytes_read": m["bytes_downloaded"], "bytes_uploaded": m["bytes_uploaded"],
                           "host_fallbacks": m["host_fallbacks"], "correct": correct}
    rec["gpuarray_ms"] = 1e3 * wall_per_call(lambda: xp.evaluate(fn(g)), lambda: xp.synchronize(g.device), runs)
    rec["gpuarray_gpu_ms"] = gpu_ms(xp, lambda: xp.evaluate(fn(g)), runs)
    rec["gpuarray_jit_ms"] = jit_ms(xp, fn, (g,), lambda: xp.synchronize(g.device), runs)
    return rec


def run(cases: list[str], runs: int, libs: list[str], shift: int = 0) -> list[dict[str, Any]]:
    import gpuarray as xp
    rng = np.random.default_rng(0)
    rows: list[dict[str, Any]] = []
    with xp.config(offload="always"):
        for case in cases:
            if case in ("sort", "argsort"):
                arg = case == "argsort"
                for dtype, n in SORTS:
                    x = _sort_data(dtype, n >> shift, rng)
                    want = np.argsort(x, kind="stable") if arg else np.sort(x)
                    rec = _measure(xp, case, xp.argsort if arg else xp.sort, x,
                                   lambda got, want=want: bool(np.array_equal(got, want)), runs)
                    rec.update(time_peers(libs, lambda lib, mod, arg=arg: _peer_sort(lib, mod, arg), (x,), runs))
                    rows.append(rec)
                    _show(rec)
            elif case == "fft":
                for n in FFTS:
                    n >>= shift
                    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
                    want = np.fft.fft(x.astype(np.complex128))
                    scale = float(np.max(np.abs(want)))
                    rec = _measure(xp, case, xp.fft.fft, x,
                                   lambda got, want=want, s=scale: float(np.max(np.abs(got - want))) / s < 2e-6, runs)
                    rec.update(time_peers(libs, _peer_fft, (x,), runs))
                    rows.append(rec)
                    _show(rec)
            elif case == "take":
                n, k = (1 << 26) >> shift, (1 << 24) >> shift
                x = rng.uniform(-30, 30, n).astype(np.float32)
                idx = rng.integers(0, n, k).astype(np.int64)
                gi = xp.asarray(idx, device="wgpu:0")
                want = x[idx]
                rec = _measure(xp, case, lambda g, gi=gi: xp.take(g, gi), x,
                               lambda got, want=want: bool(np.array_equal(got, want)), runs)
                rec["n_indices"] = k
                rec.update(time_peers(libs, lambda lib, mod: (lambda a, i: mod.take(a, i)), (x, idx), runs))
                rows.append(rec)
                _show(rec)
            elif case in DATA_CASES:
                rows.extend(_data_case(xp, case, rng, shift, runs, libs))
            elif case in AT_CASES:
                rows.append(_at_case(xp, case, rng, shift, runs, libs))
                _show(rows[-1])
            elif case in RNG_CASES:
                rows.append(_rng_case(xp, case, shift, runs, libs))
                _show(rows[-1])
            else:
                raise ValueError(f"unknown case {case!r}; expected sort, argsort, fft, take or one of "
                                 f"{', '.join(DATA_CASES + AT_CASES + RNG_CASES)}")
    return rows


def _data_case(xp: Any, case: str, rng: np.random.Generator, shift: int, runs: int,
               libs: list[str]) -> list[dict[str, Any]]:
    """The data-dependent functions of issue 19: the gpuarray call, NumPy's answer and the peers'."""
    n = (1 << 26) >> shift
    rows = []
    for lo, hi in ((-3, 3), (-30, 30)):
        x = rng.uniform(lo, hi, n).astype(np.float32)
        arrays: tuple[Any, ...] = (x,)
        if case == "cumsum":
            fn, want = xp.cumulative_sum, np.cumsum(x, dtype=np.float64)
            total = float(np.abs(x).sum())
            ok = (lambda got, w=want, s=total: float(np.max(np.abs(got - w))) / s < 1e-5)
            peer: Any = lambda lib, mod: (lambda a: mod.cumsum(a, 0)) if lib == "torch" else mod.cumsum
        elif case == "mask":
            fn, want = (lambda g: g[g > 0.5]), x[x > 0.5]
            ok = (lambda got, w=want: bool(np.array_equal(got, w)))
            peer = lambda lib, mod: (lambda a: a[a > 0.5])
        elif case == "bincount":
            xi = ((x - lo) * (999 / (hi - lo))).astype(np.int64)
            arrays = (xi,)
            fn, want = np.bincount, np.bincount(xi)
            ok = (lambda got, w=want: bool(np.array_equal(got, w)))
            peer = lambda lib, mod: mod.bincount
        elif case == "histogram":
            fn, want = (lambda g, r=(lo, hi): np.histogram(g, 100, range=r)[0]), np.histogram(x, 100, range=(lo, hi))[0]
            ok = (lambda got, w=want: int(np.abs(got - w).sum()) <= 2)       # float32 edge rounding
            peer = lambda lib, mod, r=(lo, hi): (lambda a: mod.histc(a, 100, *r)) if lib == "torch" else \
                (lambda a: mod.histogram(a, 100, range=r)[0])
        elif case == "percentile":
            x = x[: 10_000_000 >> shift]              # torch.quantile takes at most 2^24 elements
            arrays = (x,)
            fn, want = (lambda g: np.percentile(g, 30.0)), np.percentile(x, 30.0)
            ok = (lambda got, w=want: abs(float(got) - w) <= 1e-6 * abs(w) + 1e-6)
            peer = lambda lib, mod: (lambda a: mod.quantile(a, 0.3)) if lib == "torch" else \
                (lambda a: mod.percentile(a, 30.0))
        elif case == "argmin_rows":
            x = x.reshape(-1, 64)
            arrays = (x,)
            fn, want = (lambda g: xp.argmin(g, axis=1)), np.argmin(x, axis=1)
            ok = (lambda got, w=want: bool(np.array_equal(got, w)))
            peer = lambda lib, mod: (lambda a: mod.argmin(a, 1)) if lib == "torch" else \
                (lambda a: mod.argmin(a, axis=1))
        rec = _measure(xp, case, fn, arrays[0], ok, runs)
        rec["range"] = f"[{lo}, {hi}]"
        rec.update(time_peers(libs, peer, arrays, runs))
        rows.append(rec)
        _show(rec)
        if case in ("bincount", "argmin_rows", "percentile"):
            break                   # the data's range does not change their branches
    return rows


def _at_case(xp: Any, case: str, rng: np.random.Generator, shift: int, runs: int,
             libs: list[str]) -> dict[str, Any]:
    """``ufunc.at`` into 2^20 float32 targets from 2^24 random positions (about 16 a position: the
    repeated-position paths), a fresh target each call; ``or_reduce``: ``bitwise_or.reduce`` of 2^26
    int32. Peers: ``scatter_reduce_`` / ``index_add_`` (PyTorch), ``ufunc.at`` (CuPy)."""
    if case == "or_reduce":
        x = rng.integers(0, 1 << 30, (1 << 26) >> shift).astype(np.int32)
        w = int(np.bitwise_or.reduce(x))
        rec = _measure(xp, case, lambda g: np.bitwise_or.reduce(g), x, lambda got: int(got) == w, runs)
        rec.update(time_peers([lib for lib in libs if lib == "cupy"],        # PyTorch has no bitwise reduction
                              lambda lib, mod: (lambda a: mod.bitwise_or.reduce(a)), (x,), runs))
        return rec
    m, k = (1 << 20) >> shift, (1 << 24) >> shift
    base = rng.uniform(-3, 3, m).astype(np.float32)
    idx = rng.integers(0, m, k).astype(np.int64)
    vals = rng.uniform(-30, 30, k).astype(np.float32)
    uf = {"add_at": np.add, "max_at": np.maximum, "min_at": np.minimum}[case]
    want = base.copy()
    uf.at(want, idx, vals)
    gb, gi = xp.asarray(base, device="wgpu:0"), xp.asarray(idx, device="wgpu:0")

    def fn(g: Any) -> Any:
        t = gb + 0                  # a fresh target
        uf.at(t, gi, g)
        return t
    ok = (lambda got, w=want: bool(np.allclose(got, w, rtol=1e-5, atol=1e-3)))
    rec = _measure(xp, case, fn, vals, ok, runs)
    rec["n_target"], rec["n_indices"] = m, k
    red = {"add_at": "sum", "max_at": "amax", "min_at": "amin"}[case]

    def peer(lib: str, mod: Any) -> Callable[..., Any]:
        if lib in ("torch", "torch_compile"):
            return lambda v, b, i: b.clone().scatter_reduce_(0, i, v, red)
        return lambda v, b, i: (lambda t: (getattr(mod, uf.__name__).at(t, i, v), t)[1])(b.copy())
    rec.update(time_peers([lib for lib in libs if lib in ("torch", "cupy")], peer, (vals, base, idx), runs))
    return rec


def _rng_case(xp: Any, case: str, shift: int, runs: int, libs: list[str]) -> dict[str, Any]:
    """Draws of 2^26 float32 on the device: ``rand`` (uniform), ``randn`` (normal), ``mc_pi`` (4 times
    the share of 2^26 uniform points of the unit square inside the quarter circle: the draw and
    one fused reduction). Peers: ``torch.rand``/``randn`` (Philox), ``cupy.random`` (its default
    XORWOW), ``jax.random`` (threefry) under ``jit``."""
    n = (1 << 26) >> shift
    gen = xp.random.default_rng(0, device="wgpu:0")
    if case == "rand":
        fn: Any = lambda g: gen.random(n, dtype=xp.float32)
        ok = (lambda got: bool(got.min() >= 0 and got.max() < 1 and abs(float(got.mean()) - 0.5) < 3 / n ** 0.5))
    elif case == "randn":
        fn = lambda g: gen.standard_normal(n, dtype=xp.float32)
        ok = (lambda got: bool(abs(float(got.mean())) < 5 / n ** 0.5 and abs(float(got.std()) - 1) < 5 / n ** 0.5))
    else:
        def fn(g: Any) -> Any:
            u = gen.random((2, n), dtype=xp.float32)
            return xp.mean(xp.astype(u[0] * u[0] + u[1] * u[1] < 1, xp.float32)) * 4
        ok = (lambda got: abs(float(got) - np.pi) < 10 / n ** 0.5)
    rec = _measure(xp, case, fn, np.zeros(4, np.float32), ok, runs)
    rec["n"] = n
    rec["gpuarray_jit_ms"] = None           # jit does not replay a draw: its calls only record

    def peer(lib: str, mod: Any) -> Callable[..., Any]:
        if lib in ("torch", "torch_compile"):
            draw = {"rand": lambda: mod.rand(n, device="cuda"), "randn": lambda: mod.randn(n, device="cuda")}
            if case == "mc_pi":
                return lambda a: ((mod.rand(2, n, device="cuda") ** 2).sum(0) < 1).float().mean() * 4
            return lambda a: draw[case]()
        if lib == "cupy":
            if case == "mc_pi":
                return lambda a: ((mod.random.random((2, n), dtype=mod.float32) ** 2).sum(0) < 1).mean() * 4
            return lambda a: (mod.random.random(n, dtype=mod.float32) if case == "rand"
                              else mod.random.standard_normal(n, dtype=mod.float32))
        import jax
        key = jax.random.PRNGKey(0)
        if case == "mc_pi":
            f = jax.jit(lambda k: ((jax.random.uniform(k, (2, n)) ** 2).sum(0) < 1).mean() * 4)
        else:
            f = jax.jit(lambda k: (jax.random.uniform if case == "rand" else jax.random.normal)(k, (n,)))
        return lambda a: f(key)
    rec.update(time_peers(libs, peer, (np.zeros(4, np.float32),), runs))
    return rec


def _show(rec: dict[str, Any]) -> None:
    print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="sort,argsort,fft,take")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--libs", default="torch,jax,cupy")
    ap.add_argument("--shift", type=int, default=0, help="divide the sizes by 2^shift (a quick run)")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = run(args.cases.split(","), max(3, args.runs), [v for v in args.libs.split(",") if v], args.shift)
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1),
              args.out)


if __name__ == "__main__":
    main()
