"""The cost of the float32 math library (render/wgsl_f32.py): nested f(f(f(f(x)))) and chain8.

    python -m bench.mathlib [--device wgpu:0] [--log2n 22] [--reps 5] [--trials 5] [--fast-math]
                            [--only CASE,CASE] [--out rows.json]

One fused kernel per case, evaluated ``reps`` times and the device synchronised; the table gives
the median and the fastest of ``trials`` such runs (wall ms per evaluation, after a warm-up that
also compiles the kernel), and the median and smallest process CPU time. Four nested calls make a kernel whose
time is the function's arithmetic rather than memory traffic; ``x*2+1`` is the memory-bound floor.
Inputs are uniform on [0, 1) (as in bench/chain8.py) and, for the ``wide`` rows, on [-20, 20),
which sends every trig quadrant and both tanh branches through each warp. ``max err`` is the
largest error against NumPy in float64 (relative to max(|ref|, 1)) on the first 2^16 elements,
a check that the timed kernel computes the right thing.

On a GPU the wall times are the figures (the lead runs ``--log2n 28`` on the H200). On lavapipe
(CPU Vulkan) the shaders run on this process's threads: ``cpu ms`` is the work done, steady when
other processes load the machine (``min cpu`` the steadiest, for comparing two versions; still +-10%
on a shared machine), and it counts every instruction of both sides of a branch (a SIMD CPU executes
both), so rare branches (Payne-Hanek, overflow) count there and not on a GPU.
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import gpuarray as xp

from ._cli import adapter_info, device, parser
from ._timing import write_out


def trial_ms(fn: Callable[[], Any], sync: Callable[[], Any], reps: int,
             trials: int) -> list[tuple[float, float]]:
    """(wall, process CPU) milliseconds per call of ``fn`` in each of ``trials`` trials of ``reps`` calls and
    one ``sync``, after a warm-up call (which compiles the kernel). lavapipe runs its shaders on threads of
    this process, so there the CPU time is the work done, whatever else the machine runs."""
    fn()
    sync()
    out = []
    for _ in range(trials):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(reps):
            fn()
        sync()
        out.append(((time.perf_counter() - t0) / reps * 1e3, (time.process_time() - c0) / reps * 1e3))
    return out


def _chain(m: Any, x: Any) -> Any:
    return m.exp(-x * x * 0.5) * m.sin(x) + m.cos(x) * 0.25 - m.tanh(x)


def _nest(f: str, neg: bool = False) -> Callable[[Any, Any], Any]:
    def g(m: Any, x: Any) -> Any:
        fn = getattr(m, f)
        for _ in range(4):
            x = fn(-x if neg else x)
        return x
    return g


# name -> (input range, function of (module, x)); exp nested on -x, so that it stays finite
CASES: dict[str, tuple[str, Callable[[Any, Any], Any]]] = {
    "x*2+1": ("[0,1)", lambda m, x: x * 2 + 1),
    "exp^4(-)": ("[0,1)", _nest("exp", neg=True)),
    "sin^4": ("[0,1)", _nest("sin")),
    "cos^4": ("[0,1)", _nest("cos")),
    "tanh^4": ("[0,1)", _nest("tanh")),
    "chain8": ("[0,1)", _chain),
    "exp^4(-) wide": ("[-20,20)", _nest("exp", neg=True)),
    "sin^4 wide": ("[-20,20)", _nest("sin")),
    "cos^4 wide": ("[-20,20)", _nest("cos")),
    "tanh^4 wide": ("[-20,20)", _nest("tanh")),
}


def _ref_err(fn: Callable[[Any, Any], Any], got: np.ndarray, host: np.ndarray) -> float:
    with np.errstate(all="ignore"):
        want = fn(np, host.astype(np.float64))
        err = np.abs(got.astype(np.float64) - want) / np.maximum(np.abs(want), 1.0)
    return float(np.nanmax(err)) if err.size else 0.0


def run(device: Any, log2n: int, reps: int, trials: int, fast_math: bool = False,
        only: list[str] | None = None) -> list[dict[str, Any]]:
    """Time every case of ``CASES`` (or those named in ``only``) on ``device``; one row per case."""
    n = 1 << log2n
    rng = np.random.default_rng(0)
    hosts = {"[0,1)": rng.random(n, dtype=np.float32),
             "[-20,20)": (rng.random(n, dtype=np.float32) * 40 - 20).astype(np.float32)}
    arrays = {k: xp.asarray(v, device=device) for k, v in hosts.items()}
    for a in arrays.values():
        xp.evaluate(a)
    rows = []
    for name, (rng_name, fn) in CASES.items():
        if only and name not in only:
            continue
        x = arrays[rng_name]

        def once(fn: Callable[[Any, Any], Any] = fn, x: Any = x) -> None:
            xp.evaluate(fn(xp, x))
        # offload "always": the kernels (and the check on a slice) run on the device whatever their size
        with xp.config(fast_math=fast_math, offload="always"):
            times = trial_ms(once, lambda: xp.synchronize(device), reps, trials)
            m = 1 << min(16, log2n)
            got = np.asarray(fn(xp, x[:m]))
        ms = statistics.median(t[0] for t in times)
        rows.append({"case": name, "ms": ms, "min_ms": min(t[0] for t in times),
                     "cpu_ms": statistics.median(t[1] for t in times), "min_cpu_ms": min(t[1] for t in times),
                     "ns_per_elem": ms * 1e6 / n,
                     "max_err": _ref_err(fn, got, hosts[rng_name][:m])})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a text table."""
    out = [f"{'case':<16} {'median ms':>10} {'min ms':>9} {'ns/elem':>9} {'cpu ms':>9} {'min cpu':>9} {'max err':>9}"]
    for r in rows:
        out.append(f"{r['case']:<16} {r['ms']:>10.3f} {r['min_ms']:>9.3f} {r['ns_per_elem']:>9.3f} "
                   f"{r['cpu_ms']:>9.3f} {r['min_cpu_ms']:>9.3f} {r['max_err']:>9.2e}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = parser(__doc__, reps=5, trials=5)
    p.add_argument("--log2n", type=int, default=22)
    p.add_argument("--fast-math", action="store_true", help="time config(fast_math=True) (WGSL built-ins)")
    p.add_argument("--only", default="", help="comma-separated case names")
    a = p.parse_args(argv)
    dev = device(a)
    info = adapter_info(dev)
    rows = run(dev, a.log2n, a.reps, a.trials, a.fast_math, [s for s in a.only.split(",") if s] or None)
    print(f"device {dev} ({info.get('name', '')}), n = 2^{a.log2n}, float32, "
          f"{'fast_math' if a.fast_math else 'accurate'}; median of {a.trials} x {a.reps} evaluations")
    print(table(rows))
    write_out(json.dumps({"host": platform.node(), "device": str(dev), "adapter": info.get("name"),
                          "log2n": a.log2n, "fast_math": a.fast_math, "rows": rows}, indent=2), a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
