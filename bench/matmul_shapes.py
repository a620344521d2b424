"""Matrix products by shape class, gpuarray against PyTorch (cuBLAS, TF32 off) and CuPy in one process.

    python -m bench.matmul_shapes [--device wgpu:0] [--runs 5] [--dtypes float32,float64]
                                  [--classes xtx,gemv,...] [--out FILE]

Shape classes (issue 17's targets): ``xtx`` (2^20 x 64)^T (2^20 x 64), ``xtr`` (2^20 x 64)^T
(2^20,), ``gemv`` (2^20 x 64) @ (64,), ``gemv_t`` (64 x 2^20) @ (2^20,), ``skinny`` (2^20 x 32) @
(32 x 64), ``batched`` 4096 x (64 x 64) @ (64 x 64), ``sq2048``, ``sq4096``, ``sq8192``, and
scikit-learn's multinomial gradient ``G.T @ X`` (X 2^20 x 64, k = 3 classes): ``gtx`` with ``G``
(2^20 x 3) materialized, ``gtx_cone`` with ``G = (softmax(Z) - Y) * sw[:, None]`` fused into the
product's operand (``Z`` the 2^20 x 3 logits, ``Y`` one-hot, ``sw`` sample weights; every library
computes the cone in the timed call); ``xwt`` the logits ``X @ W.T`` (W 3 x 64 stored by rows); ``gram``
and ``gram1024``: ``X.T @ X`` of one array (2^20 x 64, 2^16 x 1024), the same array on both sides (``xtx``
multiplies two copies of it).

``--dtypes`` takes complex64 and complex128 too (values with both parts uniform in [-3, 3]; every class but
the softmax cone): on a GPU gpuarray computes a complex product as one real product of the parts
(``namespace/linear_algebra._complex_product``), cuBLAS by ``cgemm``/``zgemm``.

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
    "gtx": ((1 << 20, 3), (1 << 20, 64), True),
    "gtx_cone": ((1 << 20, 3), (1 << 20, 64), True),
    "xwt": ((1 << 20, 64), (3, 64), False),
    "xct": ((1 << 20, 64), (16, 64), False),      # PCA's transform: X @ components.T (16 components)
    "gram": ((1 << 20, 64), (1 << 20, 64), True),         # X.T @ X of one array (the gram tiles)
    "gram1024": ((1 << 16, 1024), (1 << 16, 1024), True),  # the same with 1024 features (upper tiles)
}
SAME = {"gram", "gram1024"}  # b is a itself: the same array on both sides, in every library
CONES = {"gtx_cone"}         # a is the logits Z of the cone G = (softmax(Z) - Y) * sw[:, None]
B_T = {"xwt", "xct"}         # b is used transposed (a view)


def _ms(fn: Callable[[Any, Any], Any], x: Any, y: Any, sync: Callable[[], Any], runs: int) -> float:
    """Milliseconds per call of ``fn(x, y)`` (``wall_per_call``); the operands are freed afterwards."""
    return 1e3 * wall_per_call(lambda: fn(x, y), sync, runs)


def _product(lib: Any, a: Any, b: Any, trans: bool) -> Any:
    return (a.T if trans else a) @ b


def _cone(lib: Any, z: Any, y1: Any, sw: Any) -> Any:
    """``(softmax(z, axis=1) - y1) * sw[:, None]`` in ``lib`` (numpy, gpuarray, torch or cupy)."""
    if getattr(lib, "__name__", "") == "torch":
        e = lib.exp(z - z.amax(dim=1, keepdim=True))
        return (e / e.sum(dim=1, keepdim=True) - y1) * sw[:, None]
    e = lib.exp(z - lib.max(z, axis=1, keepdims=True))
    return (e / lib.sum(e, axis=1, keepdims=True) - y1) * sw[:, None]


def _maker(lib: Any, name: str, trans: bool, extras: tuple[Any, ...]) -> Callable[[Any, Any], Any]:
    """The timed call of class ``name`` in ``lib``: ``a @ b`` (``a.T`` when ``trans``), or for a cone
    class ``cone(a).T @ b`` with the cone's ``extras`` (``Y``, ``sw``) already on the device."""
    if name in CONES:
        return lambda a, b: _cone(lib, a, *extras).T @ b
    if name in B_T:
        return lambda a, b: a @ b.T
    return lambda a, b: _product(lib, a, b, trans)


def _data(rng: np.random.Generator, shape: tuple[int, ...], dt: str) -> np.ndarray:
    """Uniform in [-3, 3] (both parts of a complex dtype)."""
    x = rng.uniform(-3, 3, shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.uniform(-3, 3, shape)
    return x.astype(dt)


def _error(got: np.ndarray, a: np.ndarray, b: np.ndarray, trans: bool) -> float:
    wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
    a64 = (a.T if trans else a).astype(wide)
    b64 = b.astype(wide)
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
            if name in CONES and np.dtype(dt).kind == "c":
                continue                # softmax is real
            sa, sb, trans = CLASSES[name]
            a = _data(rng, sa, dt)
            b = _data(rng, sb, dt)
            if trans:
                b = a if sb == sa else b
            ex: tuple[np.ndarray, ...] = ()
            if name in CONES:
                ex = (np.eye(sa[1], dtype=dt)[rng.integers(0, sa[1], sa[0])], rng.uniform(0.5, 2, sa[0]).astype(dt))
            ga = xp.asarray(a, device=device)
            gb = ga if name in SAME else xp.asarray(b, device=device)
            gex = tuple(xp.asarray(v, device=device) for v in ex)
            fx = _maker(xp, name, trans, gex)
            xp.synchronize(ga.device)
            rec: dict[str, Any] = {"class": name, "dtype": dt, "a": list(sa), "b": list(sb), "a_transposed": trans}
            got = np.asarray(fx(ga, gb))
            bt = b.T if name in B_T else b
            rec["err"] = _error(got, _cone(np, a.astype(np.float64), *ex) if ex else a, bt, trans)
            del got
            xp.reset_metrics()
            xp.evaluate(fx(ga, gb))
            xp.synchronize(ga.device)
            rec["dispatches"] = xp.metrics()["dispatches"]
            rec["gpuarray_ms"] = _ms(lambda x, y, f=fx: xp.evaluate(f(x, y)), ga, gb,
                                     lambda d=ga.device: xp.synchronize(d), runs)
            del ga, gb, gex, fx
            if torch is not None:
                tex = tuple(torch.from_numpy(v).cuda() for v in ex)
                ta = torch.from_numpy(a).cuda()
                rec["torch_ms"] = _ms(_maker(torch, name, trans, tex), ta,
                                      ta if name in SAME else torch.from_numpy(b).cuda(), torch.cuda.synchronize, runs)
                del ta
            if cp is not None:
                cex = tuple(cp.asarray(v) for v in ex)
                ca = cp.asarray(a)
                rec["cupy_ms"] = _ms(_maker(cp, name, trans, cex), ca, ca if name in SAME else cp.asarray(b),
                                     cp.cuda.Device().synchronize, runs)
                del ca
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
