"""Matrix products by shape class, gpuarray against PyTorch (cuBLAS, TF32 off) and CuPy in one process.

    python -m bench.matmul_shapes [--device wgpu:0] [--runs 5] [--dtypes float32,float64]
                                  [--classes xtx,gemv,...] [--out FILE]

Shape classes (issue 17's targets): ``xtx`` (2^20 x 64)^T (2^20 x 64), ``xtr`` (2^20 x 64)^T
(2^20,), ``gemv`` (2^20 x 64) @ (64,), ``gemv_t`` (64 x 2^20) @ (2^20,), ``skinny`` (2^20 x 32) @
(32 x 64), ``batched`` 4096 x (64 x 64) @ (64 x 64), ``sq2048``, ``sq4096``, ``sq8192``.

Each figure is the median over ``--runs`` trials of the **wall time per call**: ``reps`` calls and
one device synchronize, after half a second of warm-up calls of the same library (the GPU lowers
its clocks while the host works alone). gpuarray's result is dropped after each call (the graph is
hash-consed: a live result would be returned without computing). Operands are uniform in [-3, 3];
``err`` is gpuarray's largest error against NumPy in float64 relative to ``|a| @ |b|``, on rows
sampled from both ends. ``vs_torch`` is PyTorch's time over gpuarray's (1.0: as fast as cuBLAS).
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

from ._timing import wall_per_call, write_out

CLASSES: dict[str, tuple[tuple[int, ...], tuple[int, ...], bool]] = {
    # name: (a's shape as stored, b's shape, whether a is used transposed)
    "xtx": ((1 << 20, 64), (1 << 20, 64), True),
    "xtr": ((1 << 20, 64), (1 << 20,), True),
    "gemv": ((1 << 20, 64), (64,), False),
    "gemv_t": ((64, 1 << 20), (1 << 20,), False),
    "skinny": ((1 << 20, 32), (32, 64), False),
    "batched": ((4096, 64, 64), (4096, 64, 64), False),
    "sq2048": ((2048, 2048), (2048, 2048), False),
    "sq4096": ((4096, 4096), (4096, 4096), False),
    "sq8192": ((8192, 8192), (8192, 8192), False),
}


def _ms(fn: Callable[[Any, Any], Any], x: Any, y: Any, sync: Callable[[], Any], runs: int) -> float:
    """Milliseconds per call of ``fn(x, y)`` (``wall_per_call``); the operands are freed afterwards."""
    return 1e3 * wall_per_call(lambda: fn(x, y), sync, runs)


def _product(lib: Any, a: Any, b: Any, trans: bool) -> Any:
    return (a.T if trans else a) @ b


def _error(got: np.ndarray, a: np.ndarray, b: np.ndarray, trans: bool) -> float:
    a64 = (a.T if trans else a).astype(np.float64)
    b64 = b.astype(np.float64)
    if a64.ndim == 3:
        a64, b64, got = a64[:4], b64[:4], got[:4]
    rows = sorted({0, 1, a64.shape[-2] - 2, a64.shape[-2] - 1} & set(range(a64.shape[-2])))
    want = a64[..., rows, :] @ b64 if b64.ndim > 1 else a64[rows] @ b64
    scale = np.abs(a64[..., rows, :]) @ np.abs(b64) + 1e-30
    g = got[..., rows, :] if b64.ndim > 1 else got[rows]
    return float(np.max(np.abs(g - want) / scale))


def run(device: str, runs: int, dtypes: list[str], classes: list[str]) -> list[dict[str, Any]]:
    import gpuarray as xp

    torch: Any = None
    cp: Any = None
    try:
        import torch as _torch
        if _torch.cuda.is_available():
            torch = _torch
            torch.backends.cuda.matmul.allow_tf32 = False
    except ImportError:
        pass
    try:
        import cupy as _cp
        cp = _cp
    except ImportError:
        pass
    rows: list[dict[str, Any]] = []
    rng = np.random.default_rng(0)
    for dt in dtypes:
        for name in classes:
            sa, sb, trans = CLASSES[name]
            a = rng.uniform(-3, 3, sa).astype(dt)
            b = rng.uniform(-3, 3, sb).astype(dt)
            if trans:
                b = a if sb == sa else b
            ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
            xp.synchronize(ga.device)
            rec: dict[str, Any] = {"class": name, "dtype": dt, "a": list(sa), "b": list(sb), "a_transposed": trans}
            got = np.asarray(_product(xp, ga, gb, trans))
            rec["err"] = _error(got, a, b, trans)
            del got
            xp.reset_metrics()
            xp.evaluate(_product(xp, ga, gb, trans))
            xp.synchronize(ga.device)
            rec["dispatches"] = xp.metrics()["dispatches"]
            rec["gpuarray_ms"] = _ms(lambda x, y, t=trans: xp.evaluate(_product(xp, x, y, t)), ga, gb,
                                     lambda d=ga.device: xp.synchronize(d), runs)
            del ga, gb
            if torch is not None:
                rec["torch_ms"] = _ms(lambda x, y, t=trans: _product(torch, x, y, t), torch.from_numpy(a).cuda(),
                                      torch.from_numpy(b).cuda(), torch.cuda.synchronize, runs)
            if cp is not None:
                rec["cupy_ms"] = _ms(lambda x, y, t=trans: _product(cp, x, y, t), cp.asarray(a), cp.asarray(b),
                                     cp.cuda.Device().synchronize, runs)
            if "torch_ms" in rec:
                rec["vs_torch"] = rec["torch_ms"] / rec["gpuarray_ms"]
            rows.append(rec)
            print(f"{name:8s} {dt:8s} gpuarray {rec['gpuarray_ms']:9.3f} ms ({rec['dispatches']} disp)  "
                  f"torch {rec.get('torch_ms', float('nan')):9.3f}  cupy {rec.get('cupy_ms', float('nan')):9.3f}  "
                  f"vs_torch {rec.get('vs_torch', float('nan')):5.2f}  err {rec['err']:.1e}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="wgpu:0")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--classes", default=",".join(CLASSES))
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = run(args.device, max(args.runs, 3), args.dtypes.split(","), args.classes.split(","))
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1),
              args.out)


if __name__ == "__main__":
    main()
