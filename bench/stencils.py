"""Stencils written as NumPy code, step after step in a Python loop: gpuarray (wgpu:0, or the cpu device
with ``--device cpu``; ``gpuarray_jit``: the same step function under ``gpuarray.jit``) against NumPy on the host,
PyTorch eager and CuPy in one process, wall ms per whole loop.

    python -m bench.stencils [--runs 5] [--cases heat,jacobi,life] [--device wgpu:0] [--out FILE]

Cases (the same Python code runs on every library's arrays; float32 values uniform in [-3, 3]):

- ``heat``: 1-D explicit heat steps written into a view, ``u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1]
  + u[:-2])``, 200 steps of 2^16, 2^20 and 2^22 points;
- ``jacobi``: 2-D Jacobi steps into the interior, ``u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] +
  u[1:-1, :-2] + u[1:-1, 2:])``, 100 steps of 1024 x 1024 and 2048 x 4096 (Gauss-Seidel-free: NumPy
  computes the right side before it writes);
- ``life``: Conway's Game of Life on a torus, the eight neighbours by ``roll``, 50 steps of 1024 x 1024 and
  2048 x 4096 booleans (30 % alive).

Each step reads the previous one at shifted indices: fused steps would compute the previous step once per
shift (gpuarray evaluates what a step reads more than once: ``array_object/bounds.py``, ``bounded``). Each
loop ends with a synchronization; the figure is the median of ``--runs`` loops after one warm-up loop, each
from a fresh copy of the start. gpuarray's result is checked against NumPy's.
"""

# mypy: disable-error-code="misc"
from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from ._timing import median_s, write_out


def heat_step(lib: Any, u: Any) -> Any:
    u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


def jacobi_step(lib: Any, u: Any) -> Any:
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def life_step(lib: Any, x: Any) -> Any:
    xi = lib.small(x)
    n = sum(lib.roll(lib.roll(xi, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1) if i or j)
    return (n == 3) | (x & (n == 2))


def _loop(step: Callable[[Any, Any], Any]) -> Callable[[Any, Any, int], Any]:
    def loop(lib: Any, u: Any, steps: int) -> Any:
        one = lib.wrap(lambda v: step(lib, v)) if lib is not None and hasattr(lib, "wrap") else \
            (lambda v: step(lib, v))
        for _ in range(steps):
            u = one(u)
        return u
    loop.__name__ = step.__name__.replace("_step", "")
    return loop


heat, jacobi, life = _loop(heat_step), _loop(jacobi_step), _loop(life_step)


def _start(case: str, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(0)
    if case == "life":
        return rng.random(shape) < 0.3
    return rng.uniform(-3, 3, shape).astype(np.float32)


# case -> (loop, steps, shapes)
CASES: dict[str, tuple[Callable[[Any, Any, int], Any], int, tuple[tuple[int, ...], ...]]] = {
    "heat": (heat, 200, ((1 << 16,), (1 << 20,), (1 << 22,))),
    "jacobi": (jacobi, 100, ((1024, 1024), (2048, 4096))),
    "life": (life, 50, ((1024, 1024), (2048, 4096))),
}


class _Lib:
    """What the loops need of one library: ``roll(x, shift, axis)``, ``small(x)`` (booleans as int8),
    ``put(host)``, ``sync(x)``, ``get(x)`` (to NumPy) and ``wrap(step)`` (the step function a loop calls:
    itself, or ``gpuarray.jit`` of it)."""

    def __init__(self, roll: Callable, small: Callable, put: Callable, sync: Callable, get: Callable,
                 wrap: Callable = lambda f: f) -> None:
        self.roll, self.small, self.put, self.sync, self.get, self.wrap = roll, small, put, sync, get, wrap


def _libraries(device: str) -> dict[str, _Lib]:
    import gpuarray as xp
    def sync(x: Any) -> None:           # computed and finished on the device (evaluate alone may leave it queued)
        xp.evaluate(x)
        xp.synchronize(x.device)

    libs = {
        "gpuarray": _Lib(lambda x, s, a: xp.roll(x, s, axis=a), lambda x: xp.astype(x, xp.int8),
                         lambda h: xp.asarray(h, device=device), sync, np.asarray),
        # the same steps under gpuarray.jit (writes into the argument replayed): one jitted step per loop
        "gpuarray_jit": _Lib(lambda x, s, a: xp.roll(x, s, axis=a), lambda x: xp.astype(x, xp.int8),
                             lambda h: xp.asarray(h, device=device), sync, np.asarray, xp.jit),
        "numpy": _Lib(lambda x, s, a: np.roll(x, s, axis=a), lambda x: x.astype(np.int8), np.copy,
                      lambda x: None, np.asarray)}
    try:
        import torch
        if torch.cuda.is_available():
            libs["torch"] = _Lib(lambda x, s, a: torch.roll(x, s, a), lambda x: x.to(torch.int8),
                                 lambda h: torch.from_numpy(h.copy()).cuda(), lambda x: torch.cuda.synchronize(),
                                 lambda x: x.cpu().numpy())
    except ImportError:
        pass
    try:
        import cupy as cp
        libs["cupy"] = _Lib(lambda x, s, a: cp.roll(x, s, axis=a), lambda x: x.astype(cp.int8), cp.asarray,
                            lambda x: cp.cuda.Device().synchronize(), cp.asnumpy)
    except ImportError:
        pass
    return libs


def _one(case: str, shape: tuple[int, ...], runs: int, libs: dict[str, _Lib]) -> dict[str, Any]:
    loop, steps, _ = CASES[case]
    src = _start(case, shape)
    want = loop(libs["numpy"], src.copy(), steps)
    r: dict[str, Any] = {}
    for name, lib in libs.items():
        def once(lib: _Lib = lib) -> Any:
            out = loop(lib, lib.put(src), steps)
            lib.sync(out)
            return out
        if name.startswith("gpuarray"):
            import gpuarray as xp
            xp.reset_metrics()
            got = lib.get(once())
            m = xp.metrics()
            r[f"{name}_per_loop"] = {k: m[k] for k in ("evaluations", "dispatches", "submits", "host_fallbacks")}
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        r[name] = 1e3 * median_s(once, runs)
    return r


def run(runs: int, cases: list[str], device: str, path: str | None = None) -> dict[str, dict[str, Any]]:
    """Every case at every shape; with ``path``, the results so far are written there after each."""
    libs = _libraries(device)
    out: dict[str, dict[str, Any]] = {}
    for case in cases:
        for shape in CASES[case][2]:
            r = _one(case, shape, runs, libs)
            out.setdefault(case, {})["x".join(map(str, shape))] = r
            print(case, shape, {k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()}, flush=True)
            write_out(json.dumps(out, indent=1), path)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--device", default="wgpu:0")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    run(args.runs, args.cases.split(","), args.device, args.out)


if __name__ == "__main__":
    main()
