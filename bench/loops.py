"""Slices of an array written in a Python loop: gpuarray (wgpu:0) against NumPy on the host, PyTorch eager
and CuPy in one process, wall ms per whole loop.

    python -m bench.loops [--runs 5] [--cases fill,fillcol,imul,recur,colview,rowread] [--out FILE]

Cases (the same Python code runs on every library's arrays; ``b`` holds uniform values in [-3, 3]):

- ``fill``: ``a[i] = b[i] * 2`` into a fresh zero array, row by row;
- ``fillcol``: ``a[:, i] = b[i] + 1`` into a fresh zero array of the transposed shape, column by column;
- ``imul``: ``a[i] *= 2`` on a copy of ``b``, row by row (the value reads the row it replaces);
- ``recur``: ``a[i] = a[i - 1] * 0.5 + b[i]`` on a copy of ``b`` (each row reads the row written before it);
- ``colview``: ``c = a[:, j]; c *= 0.5; c += 1`` on a copy of ``b`` (writes through column views);
- ``rowread``: ``a[i] = float((b[i] * 2 - b[i - 1]).sum())`` into a fresh zero array: a value read back for
  each row (SciPy's per-segment loops; gpuarray schedules and replays one plan for every row's offset).

Each loop ends with a synchronization (gpuarray: ``evaluate``); the figure is the median of ``--runs`` loops
after one warm-up loop, each on fresh arrays (nothing is reused between timed loops). gpuarray's results are
checked against NumPy's. Shapes (rows x row length): 1024 x 256, 4096 x 256, 4096 x 1024, 16384 x 64.
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


def fill(a: Any, b: Any) -> None:
    for i in range(b.shape[0]):
        a[i] = b[i] * 2


def fillcol(a: Any, b: Any) -> None:
    for i in range(b.shape[0]):
        a[:, i] = b[i] + 1


def imul(a: Any, b: Any) -> None:
    for i in range(a.shape[0]):
        a[i] *= 2


def recur(a: Any, b: Any) -> None:
    for i in range(1, a.shape[0]):
        a[i] = a[i - 1] * 0.5 + b[i]


def colview(a: Any, b: Any) -> None:
    for j in range(a.shape[1]):
        c = a[:, j]
        c *= 0.5
        c += 1


def rowread(a: Any, b: Any) -> None:
    for i in range(1, b.shape[0]):
        a[i] = float((b[i] * 2 - b[i - 1]).sum())


# case -> (loop, the array it writes: "zeros" of b's shape, "zerosT" of the transposed shape, or "copy" of b)
CASES: dict[str, tuple[Callable[[Any, Any], None], str]] = {
    "fill": (fill, "zeros"), "fillcol": (fillcol, "zerosT"), "imul": (imul, "copy"), "recur": (recur, "copy"),
    "colview": (colview, "copy"), "rowread": (rowread, "zeros")}


def _median_ms(f: Callable[[], Any], runs: int) -> float:
    return 1e3 * median_s(f, runs)


def _libraries(src: np.ndarray) -> dict[str, tuple[Any, Callable[[str], Any], Callable[[Any], Any]]]:
    """name -> (b on its device, the array written for a start kind, synchronize(a))."""
    import gpuarray as xp
    n, w = src.shape
    g = xp.asarray(src, device="wgpu:0")
    xp.evaluate(g)

    def gstart(kind: str) -> Any:
        if kind == "copy":
            return xp.asarray(g, copy=True)
        return xp.zeros((n, w) if kind == "zeros" else (w, n), dtype=xp.float32, device="wgpu:0")
    libs: dict[str, tuple[Any, Callable[[str], Any], Callable[[Any], Any]]] = {
        "gpuarray": (g, gstart, xp.evaluate),
        "numpy": (src, lambda k: src.copy() if k == "copy" else np.zeros((n, w) if k == "zeros" else (w, n),
                                                                         np.float32), lambda a: None)}
    try:
        import torch
        if torch.cuda.is_available():
            t = torch.from_numpy(src).cuda()
            libs["torch"] = (t, lambda k: t.clone() if k == "copy" else torch.zeros(
                (n, w) if k == "zeros" else (w, n), device="cuda"), lambda a: torch.cuda.synchronize())
    except ImportError:
        pass
    try:
        import cupy as cp
        c = cp.asarray(src)
        libs["cupy"] = (c, lambda k: c.copy() if k == "copy" else cp.zeros((n, w) if k == "zeros" else (w, n),
                                                                           cp.float32),
                        lambda a: cp.cuda.Device().synchronize())
    except ImportError:
        pass
    return libs


def _one(case: str, n: int, w: int, runs: int) -> dict[str, float]:
    loop, kind = CASES[case]
    src = np.random.default_rng(0).uniform(-3, 3, (n, w)).astype(np.float32)
    r: dict[str, float] = {}
    for name, (b, start, sync) in _libraries(src).items():
        def once(b: Any = b, start: Callable[[str], Any] = start, sync: Callable[[Any], Any] = sync) -> Any:
            a = start(kind)
            loop(a, b)
            sync(a)
            return a
        if name == "gpuarray":
            ref = start_np = src.copy() if kind == "copy" else np.zeros((n, w) if kind == "zeros" else (w, n),
                                                                         np.float32)
            loop(start_np, src)
            np.testing.assert_allclose(np.asarray(once()), ref, rtol=1e-5, atol=1e-5)
        r[name] = _median_ms(once, runs)
    return r


def run(runs: int, cases: list[str], path: str | None = None) -> dict[str, dict[str, dict[str, float]]]:
    """Every case at every shape; with ``path``, the results so far are written there after each (a run
    stopped by a time limit keeps what it measured)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for case in cases:
        for n, w in SHAPES:
            r = _one(case, n, w, runs)
            out.setdefault(case, {})[f"{n}x{w}"] = r
            print(case, n, w, {k: round(v, 2) for k, v in r.items()}, flush=True)
            if path:
                with open(path, "w") as f:
                    json.dump(out, f, indent=1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--shapes", default=None, help="rows x length pairs, e.g. 1024x256,4096x256")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    global SHAPES
    if args.shapes:
        SHAPES = tuple(tuple(int(v) for v in s.split("x")) for s in args.shapes.split(","))   # type: ignore
    run(args.runs, args.cases.split(","), args.out)


if __name__ == "__main__":
    main()
