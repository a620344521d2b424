"""The single-pass look-back scan against the chunked three-dispatch scan, and its tunables, by wall clock
and GPU time (issue 19: ``cumulative_sum`` of 2^26 float32 within 1.2x of PyTorch's 0.21 ms on the H200).

    python -m bench.scan_lookback [--runs 5] [--shift 0] [--variants base,chunked,pt8,...] [--out FILE]
    GPUARRAY_SCAN_ITEMS=8 GPUARRAY_SCAN_WG=512 python -m bench.scan_lookback --variants base,lookback
    GPUARRAY_SCAN_WIDE_REG=0 python -m bench.scan_lookback --variants base   # 64-bit path off

Variants: ``base`` (as chosen: the look-back on a GPU adapter), ``chunked`` (``STRATEGY="parallel"``),
``lookback`` (forced, on any adapter), and forced with ``nowide`` (``WIDE_REG`` off: 64-bit rows by
scalar loads and stores, states wider than 32 bits scanned in workgroup memory), ``novec`` (scalar
loads and stores), ``blocked`` (``STRIPED`` off: each thread's elements consecutive), ``nosg`` (no
subgroups: the workgroup-memory scan and the workgroup look-back),
``window32`` / ``window1`` (tiles that workgroup look-back reads at once, with ``nosg``), ``pt4`` /
``pt8`` / ``pt32`` (elements per thread) and ``wg128`` / ``wg512`` / ``wg1024`` (threads per
workgroup); the environment variables set the tile shape of ``base`` and ``lookback`` (and of the
variants that do not set it). Workloads: cumulative_sum of float32, int32, float64 and int64,
cumulative_prod of float32 and float64, maximum.accumulate of float32, and cumulative_sum along the
last axis of 4 rows, each 2^26 >> shift elements (64-bit: 2^25, the same bytes). Each variant runs
every workload, checks it against NumPy, and prints ms per call (wall median; GPU from timestamp
queries) and dispatches per call.
"""

# mypy: disable-error-code="misc"
from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from ._timing import write_out
from .primitives import _measure

_LB = {"STRATEGY": "lookback"}      # the look-back on any adapter (auto takes it on GPU adapters only)
_NOSG = {**_LB, "USE_SUBGROUPS": False}
VARIANTS: dict[str, dict[str, Any]] = {
    "base": {}, "chunked": {"STRATEGY": "parallel"}, "lookback": _LB,
    "nowide": {**_LB, "WIDE_REG": False}, "novec": {**_LB, "VECTORIZE": False}, "nosg": _NOSG,
    "blocked": {**_LB, "STRIPED": False},
    "window32": {**_NOSG, "WINDOW": {"GPU": 32, "CPU": 32}}, "window1": {**_NOSG, "WINDOW": {"GPU": 1, "CPU": 1}},
    "pt4": {**_LB, "PER_THREAD": 4}, "pt8": {**_LB, "PER_THREAD": 8}, "pt32": {**_LB, "PER_THREAD": 32},
    "wg128": {**_LB, "WG": 128}, "wg512": {**_LB, "WG": 512}, "wg1024": {**_LB, "WG": 1024},
}


def _workloads(xp: Any, n: int, rng: np.random.Generator) -> list[tuple[str, np.ndarray, Callable, Callable]]:
    """(name, data, gpuarray call, NumPy reference) of each workload."""
    f = rng.integers(-3, 4, n).astype(np.float32)        # exact partial sums in any order
    return [
        ("cumsum float32", f, xp.cumulative_sum, np.cumsum),
        ("cumsum int32", f.astype(np.int32), lambda g: xp.cumulative_sum(g, dtype=xp.int32),
         lambda a: np.cumsum(a, dtype=np.int32)),
        ("cumsum float64", f[: n // 2].astype(np.float64), xp.cumulative_sum, np.cumsum),
        ("cumsum int64", f[: n // 2].astype(np.int64), xp.cumulative_sum, np.cumsum),
        ("cumprod float32", np.sign(f) + (f == 0), xp.cumulative_prod, np.cumprod),
        ("cumprod float64", (np.sign(f) + (f == 0))[: n // 2].astype(np.float64), xp.cumulative_prod, np.cumprod),
        ("maximum.accumulate float32", f, np.maximum.accumulate, np.maximum.accumulate),
        ("cumsum 4 rows float32", f.reshape(4, -1), lambda g: xp.cumulative_sum(g, axis=1),
         lambda a: np.cumsum(a, axis=1)),
    ]


def run(variants: list[str], runs: int, shift: int) -> list[dict[str, Any]]:
    import gpuarray as xp
    from gpuarray.providers import wgpu_scan, wgpu_scan_lookback
    from gpuarray.runtime import replay

    rows: list[dict[str, Any]] = []
    n = (1 << 26) >> shift
    work = _workloads(xp, n, np.random.default_rng(0))
    with xp.config(offload="always"):
        for v in variants:
            saved = {k: getattr(wgpu_scan if k == "STRATEGY" else wgpu_scan_lookback, k) for k in VARIANTS[v]}
            for k, val in VARIANTS[v].items():
                setattr(wgpu_scan if k == "STRATEGY" else wgpu_scan_lookback, k, val)
            replay.clear()          # recorded programs keep the settings they were recorded under
            try:
                for name, a, fn, ref in work:
                    rec = {"variant": v, **_measure(xp, name, fn, a, lambda got, a=a, ref=ref: bool(
                        np.array_equal(got, ref(a))), runs)}
                    rows.append(rec)
                    print(" ".join(f"{k}={val:.4g}" if isinstance(val, float) else f"{k}={val}"
                                   for k, val in rec.items()), flush=True)
            finally:
                for k, val in saved.items():
                    setattr(wgpu_scan if k == "STRATEGY" else wgpu_scan_lookback, k, val)
                replay.clear()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--shift", type=int, default=0, help="sizes >> shift (a quick run on a CPU adapter)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rows = run(args.variants.split(","), args.runs, args.shift)
    write_out(json.dumps(rows, indent=1), args.out)


if __name__ == "__main__":
    main()
