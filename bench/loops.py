"""Slices of an array written in a Python loop (``a[i] = b[i] * 2``, ``a[:, i] = b[i] + 1``): gpuarray
(wgpu:0) against NumPy on the host, PyTorch eager and CuPy in one process, wall ms per whole loop.

    python -m bench.loops [--runs 5] [--out FILE]

Each library fills a fresh zero array row by row (and a transposed one column by column) from a device
array of the same data, then synchronizes (gpuarray: ``evaluate``); the figure is the median of ``--runs``
loops after one warm-up loop. gpuarray's results are checked against NumPy. Shapes (rows x row length):
1024 x 256, 4096 x 256, 4096 x 1024, 16384 x 64.
"""

# mypy: disable-error-code="misc"
from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from ._timing import median_s

SHAPES = ((1024, 256), (4096, 256), (4096, 1024), (16384, 64))


def _median_ms(f: Callable[[], Any], runs: int) -> float:
    return 1e3 * median_s(f, runs)


def run(runs: int) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for n, w in SHAPES:
        r = _one(n, w, runs)
        out[f"{n}x{w}"] = r
        print(n, w, {k: round(v, 2) for k, v in r.items()}, flush=True)
    return out


def _one(n: int, w: int, runs: int) -> dict[str, float]:
    import gpuarray as xp
    src = np.random.default_rng(0).uniform(-3, 3, (n, w)).astype(np.float32)
    g = xp.asarray(src, device="wgpu:0")
    xp.evaluate(g)

    def rows() -> Any:
        a = xp.zeros((n, w), dtype=xp.float32, device="wgpu:0")
        for i in range(n):
            a[i] = g[i] * 2
        xp.evaluate(a)
        return a

    def cols() -> Any:
        a = xp.zeros((w, n), dtype=xp.float32, device="wgpu:0")
        for i in range(n):
            a[:, i] = g[i] + 1
        xp.evaluate(a)
        return a

    def host() -> None:
        a = np.zeros((n, w), np.float32)
        for i in range(n):
            a[i] = src[i] * 2

    assert np.array_equal(np.asarray(rows()), src * 2) and np.array_equal(np.asarray(cols()), (src + 1).T)
    r = {"gpuarray": _median_ms(rows, runs), "gpuarray_col": _median_ms(cols, runs), "numpy": _median_ms(host, runs)}
    r.update(_peers(src, runs))
    return r


def _peers(src: np.ndarray, runs: int) -> dict[str, float]:
    n, w = src.shape
    r: dict[str, float] = {}
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        t = torch.from_numpy(src).cuda()

        def trows() -> None:
            a = torch.zeros((n, w), device="cuda")
            for i in range(n):
                a[i] = t[i] * 2
            torch.cuda.synchronize()

        def tcols() -> None:
            a = torch.zeros((w, n), device="cuda")
            for i in range(n):
                a[:, i] = t[i] + 1
            torch.cuda.synchronize()
        r["torch"], r["torch_col"] = _median_ms(trows, runs), _median_ms(tcols, runs)
    try:
        import cupy as cp
    except ImportError:
        return r
    c = cp.asarray(src)

    def crows() -> None:
        a = cp.zeros((n, w), cp.float32)
        for i in range(n):
            a[i] = c[i] * 2
        cp.cuda.Device().synchronize()
    r["cupy"] = _median_ms(crows, runs)
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    res = run(args.runs)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
