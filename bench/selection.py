"""Radix selection (percentile / quantile / median over a whole array) and privatized histograms
against CuPy and PyTorch in one process, by wall clock (issue 19's percentile and histogram targets).

    python -m bench.selection [--runs 5] [--libs torch,cupy] [--shift 0] [--out FILE]

Cases: ``percentile`` q = 30 of 10^7 and 2^24 float32 and of 2^24 float64 (normal data),
``nanpercentile`` q = 30 of 2^24 float32 with 1% NaN, ``quantile`` of five q of 2^24 float32,
``median`` of 2^24 float32; ``histogram`` of 2^26 float32 uniform in [-3, 3] into 100 and 4000
bins over that range, ``bincount`` of 2^26 int64 values below 1000. Each row: gpuarray's wall and
GPU milliseconds per call, its dispatches per call, host fallbacks, the result checked against
NumPy, and the peers' wall milliseconds (``bench/_timing.py``). ``selection.ENABLED = False`` runs
the sort path of the quantiles instead (``--sort``), for the before / after comparison.
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

from ._timing import time_peers, write_out
from .primitives import _measure


def _cases(shift: int) -> list[tuple[str, np.ndarray, Callable[[Any], Any], Callable[[str, Any], Any], float]]:
    """(name, data, gpuarray/NumPy function, peer function for (lib, module), relative tolerance)."""
    rng = np.random.default_rng(0)
    n24, n26 = (1 << 24) >> shift, (1 << 26) >> shift
    f32 = rng.standard_normal(n24).astype(np.float32)
    nan32 = f32.copy()
    nan32[rng.integers(0, n24, n24 // 100)] = np.nan
    uni = rng.uniform(-3, 3, n26).astype(np.float32)
    ints = rng.integers(0, 1000, n26)
    qs = np.array([0.05, 0.25, 0.5, 0.75, 0.95])

    def pct(q: float) -> Callable[[str, Any], Any]:
        return lambda lib, mod: (lambda a: mod.quantile(a, q / 100)) if lib == "torch" else \
            (lambda a: mod.percentile(a, q))

    return [
        ("percentile 1e7", f32[:10_000_000 >> shift], lambda g: np.percentile(g, 30.0), pct(30.0), 1e-6),
        ("percentile", f32, lambda g: np.percentile(g, 30.0), pct(30.0), 1e-6),
        ("percentile", f32.astype(np.float64), lambda g: np.percentile(g, 30.0), pct(30.0), 1e-12),
        ("nanpercentile", nan32, lambda g: np.nanpercentile(g, 30.0),
         lambda lib, mod: (lambda a: mod.nanquantile(a, 0.3)) if lib == "torch" else
         (lambda a: mod.nanpercentile(a, 30.0)), 1e-6),
        ("quantile x5", f32, lambda g: np.quantile(g, qs),
         lambda lib, mod: (lambda a: mod.quantile(a, mod.asarray(qs, dtype=a.dtype, device=a.device)))
         if lib == "torch" else (lambda a: mod.quantile(a, mod.asarray(qs))), 1e-6),
        ("median", f32, np.median, lambda lib, mod: mod.median, 1e-6),
        ("histogram 100", uni, lambda g: np.histogram(g, 100, range=(-3.0, 3.0))[0],
         lambda lib, mod: (lambda a: mod.histc(a, 100, -3.0, 3.0)) if lib == "torch" else
         (lambda a: mod.histogram(a, 100, range=(-3.0, 3.0))[0]), 0.0),
        ("histogram 4000", uni, lambda g: np.histogram(g, 4000, range=(-3.0, 3.0))[0],
         lambda lib, mod: (lambda a: mod.histc(a, 4000, -3.0, 3.0)) if lib == "torch" else
         (lambda a: mod.histogram(a, 4000, range=(-3.0, 3.0))[0]), 0.0),
        ("bincount", ints, np.bincount, lambda lib, mod: mod.bincount, 0.0),
    ]


def run(runs: int, libs: list[str], shift: int = 0, sort: bool = False) -> list[dict[str, Any]]:
    import gpuarray as xp
    from gpuarray.namespace import selection
    selection.ENABLED = not sort
    rows: list[dict[str, Any]] = []
    with xp.config(offload="always"):
        for name, x, fn, peer, rtol in _cases(shift):
            want = np.asarray(fn(x))
            if name.startswith("histogram"):        # float32 edge rounding may move a value a bin
                ok = (lambda got, w=want: int(np.abs(got - w).sum()) <= 2)
            else:
                ok = (lambda got, w=want, r=rtol: bool(np.allclose(got, w, rtol=r, atol=0, equal_nan=True)))
            rec = _measure(xp, name, fn, x, ok, runs)
            rec["path"] = "sort" if sort else "select"
            rec.update(time_peers(libs, peer, (x,), runs))
            rows.append(rec)
            print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()),
                  flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--libs", default="torch,cupy")
    ap.add_argument("--shift", type=int, default=0, help="divide the sizes by 2^shift (a quick run)")
    ap.add_argument("--sort", action="store_true", help="the quantiles by the sort (selection off)")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = run(max(3, args.runs), [v for v in args.libs.split(",") if v], args.shift, args.sort)
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1),
              args.out)


if __name__ == "__main__":
    main()
