"""Linear algebra on the device against PyTorch (cuSOLVER) and CuPy in one process, by wall clock.

    python -m bench.linalg [--cases cholesky,solve,inv,det] [--runs 5] [--libs torch,cupy] [--out FILE] [--old]
                           [--shapes float64:2048x2048,...]

``--old`` times the previous paths (32-column Cholesky with ``gemm_source`` updates, LU panels by
``panel_source``, small stacks through the panel kernels) by switching off the module-level
switches of ``gpuarray/providers/wgpu_linalg_blocked.py``; ``dispatches`` is per call.

Issue 20's targets: ``cholesky`` and ``solve`` (16 right-hand sides) of n = 4096 float32 and
n = 2048 float64 within 3x of PyTorch, batched 4096 x (32 x 32) float32 within 3x; ``qr`` (reduced:
``Q`` and ``R``, of matrices uniform in [-3, 3]) within 5x; ``inv`` and ``det`` are timed too, and
``eigh`` and ``svd`` of stacks of small matrices (``EIGH_SHAPES``: Jacobi on the device), ``eigvalsh`` of
larger ones (``EIGVALSH_SHAPES``: tridiagonal reduction and bisection on the device; symmetric
matrices uniform in [-3, 3]; ``gpu_ms`` from timestamp queries), ``svdvals`` of matrices that are neither
small nor tall and skinny (``SVDVALS_SHAPES``: through the symmetric ``[[0, A], [A^T, 0]]``'s eigenvalues
on the device; uniform in [-3, 3]), ``eigh_large``: ``eigh`` with vectors of larger symmetric matrices
(``EIGH_LARGE_SHAPES``: tridiagonal reduction, divide and conquer and back-transformation on the device),
``svd_large``: ``svd`` (reduced, all three factors) of larger matrices (``SVD_LARGE_SHAPES``: through the
eigenvectors of ``[[0, A], [A^T, 0]]`` on the device, ``linalg/gesdd.py``; uniform in [-3, 3]).
Matrices are ``B B^T / n + I`` for ``B`` uniform in [-3, 3] (symmetric
positive definite, condition number in the tens), right-hand sides uniform in [-3, 3]. Each figure
is the median wall time per call (``_timing.wall_per_call``: half a second of warm-up, then
trials of repeated calls and one synchronize); gpuarray's results are dropped between calls (each
call is evaluated at once: singular and indefinite input raise there, as in NumPy). The relative
residual ``||A x - b|| / (||A|| ||x||)`` (solve) or ``||L L^T - A|| / ||A||`` (cholesky) is checked
in float64 on the host.
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

from ._timing import gpu_ms, time_peers, wall_per_call, write_out

SHAPES = (("float32", (4096, 4096)), ("float64", (2048, 2048)), ("float32", (4096, 32, 32)))
# eigh on the device: stacks of small matrices (Jacobi); larger ones are LAPACK's on the host
EIGH_SHAPES = (("float32", (64, 64)), ("float32", (4096, 32, 32)), ("float64", (1024, 32, 32)),
               ("float32", (65536, 3, 3)))
# eigvalsh of larger matrices on the device (tridiagonal reduction and bisection), the sizes and
# the sizes that calibrate tridiag.MIN_WORK; matrices symmetric, uniform in [-3, 3] (indefinite)
EIGVALSH_SHAPES = (("float32", (4096, 4096)), ("float64", (2048, 2048)), ("float32", (2048, 2048)),
                   ("float32", (1024, 1024)), ("float32", (512, 512)), ("float32", (256, 256)),
                   ("float32", (128, 128)), ("float64", (512, 512)), ("float32", (8, 512, 512)))
# eigh with vectors of larger matrices on the device (tridiagonal reduction, divide and conquer,
# back-transformation): the sizes and the sizes that calibrate syevd.MIN_N; symmetric, indefinite
EIGH_LARGE_SHAPES = (("float32", (4096, 4096)), ("float64", (2048, 2048)), ("float32", (2048, 2048)),
                     ("float32", (1024, 1024)), ("float64", (1024, 1024)), ("float64", (4096, 4096)),
                     ("float32", (768, 768)), ("float32", (512, 512)), ("float64", (512, 512)),
                     ("float32", (256, 256)), ("float32", (4, 512, 512)))
# svdvals of square and not skinny matrices on the device (the sizes that calibrate tridiag.svd_applies)
SVDVALS_SHAPES = (("float32", (4096, 4096)), ("float64", (2048, 2048)), ("float32", (2048, 2048)),
                  ("float32", (4096, 1024)), ("float32", (1024, 1024)), ("float32", (512, 512)),
                  ("float64", (1024, 1024)), ("float32", (8, 256, 256)))

# svd with vectors of larger matrices on the device: the sizes and the sizes that calibrate
# gesdd.MIN_K; uniform in [-3, 3]
SVD_LARGE_SHAPES = (("float32", (4096, 4096)), ("float64", (2048, 2048)), ("float32", (2048, 2048)),
                    ("float32", (4096, 2048)), ("float32", (1024, 1024)), ("float64", (1024, 1024)),
                    ("float32", (512, 512)), ("float32", (4, 512, 512)))


def _spd(dtype: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    n = shape[-1]
    b = rng.uniform(-3, 3, shape)
    a = b @ np.swapaxes(b, -1, -2) / n + np.eye(n)
    return a.astype(dtype)


def _sym(dtype: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    b = rng.uniform(-3, 3, shape)
    return ((b + np.swapaxes(b, -1, -2)) / 2).astype(dtype)


def _gpuarray_fn(xp: Any, case: str) -> Callable[..., Any]:
    return {"cholesky": lambda a, b: xp.linalg.cholesky(a), "solve": lambda a, b: xp.linalg.solve(a, b),
            "inv": lambda a, b: xp.linalg.inv(a), "det": lambda a, b: xp.linalg.det(a),
            "qr": lambda a, b: xp.linalg.qr(a).R, "eigh": lambda a, b: xp.linalg.eigh(a).eigenvectors,
            "eigh_large": lambda a, b: xp.linalg.eigh(a).eigenvectors,
            "eigvalsh": lambda a, b: xp.linalg.eigvalsh(a), "svdvals": lambda a, b: xp.linalg.svdvals(a),
            "svd": lambda a, b: xp.linalg.svd(a, full_matrices=False).U,
            "svd_large": lambda a, b: tuple(xp.linalg.svd(a, full_matrices=False))}[case]


def _peer_fn(case: str) -> Callable[[str, Any], Callable[..., Any]]:
    def fn_for(lib: str, mod: Any) -> Callable[..., Any]:
        la = mod.linalg
        return {"cholesky": lambda a, b: la.cholesky(a), "solve": lambda a, b: la.solve(a, b),
                "inv": lambda a, b: la.inv(a), "det": lambda a, b: la.det(a),
                "qr": lambda a, b: la.qr(a)[1], "eigh": lambda a, b: la.eigh(a)[1],
                "eigh_large": lambda a, b: la.eigh(a)[1],
                "eigvalsh": lambda a, b: la.eigvalsh(a),
                "svdvals": (lambda a, b: la.svdvals(a)) if hasattr(la, "svdvals")
                else (lambda a, b: la.svd(a, compute_uv=False)),
                "svd": lambda a, b: la.svd(a, full_matrices=False)[0],
                "svd_large": lambda a, b: tuple(la.svd(a, full_matrices=False))}[case]
    return fn_for


def _residual(case: str, a: np.ndarray, b: np.ndarray, got: Any) -> float:
    if case == "svd_large":      # max(|A - U S Vh|, |U^T U - I|, |Vh Vh^T - I|) / (||A|| or 1)
        u, s, vh = (np.asarray(g).astype(np.float64) for g in got)
        a64 = a.astype(np.float64)
        back = np.abs(a64 - (u * s[..., None, :]) @ vh).max() / s.max()
        tr = np.swapaxes
        return float(max(back, np.abs(tr(u, -1, -2) @ u - np.eye(u.shape[-1])).max(),
                         np.abs(vh @ tr(vh, -1, -2) - np.eye(vh.shape[-2])).max()))
    a64, g64 = a.astype(np.float64), np.asarray(got).astype(np.float64)
    if case == "cholesky":
        return float(np.linalg.norm(g64 @ np.swapaxes(g64, -1, -2) - a64) / np.linalg.norm(a64))
    if case == "solve":
        return float(np.linalg.norm(a64 @ g64 - b) / (np.linalg.norm(a64) * np.linalg.norm(g64)))
    if case == "inv":
        eye = np.broadcast_to(np.eye(a.shape[-1]), a.shape)
        return float(np.linalg.norm(a64 @ g64 - eye) / np.linalg.norm(eye))
    if case == "svd":            # U's orthogonality (the singular values are checked by the tests)
        return float(np.abs(np.swapaxes(g64, -1, -2) @ g64 - np.eye(g64.shape[-1])).max())
    if case == "eigvalsh":       # max |w - LAPACK's float64 w| / ||A||_2
        want = np.linalg.eigvalsh(a64)
        return float(np.abs(g64 - want).max() / np.abs(want).max())
    if case == "svdvals":        # max |s - LAPACK's float64 s| / ||A||_2
        want = np.linalg.svd(a64, compute_uv=False)
        return float(np.abs(g64 - want).max() / want.max())
    if case in ("eigh", "eigh_large"):      # ||A V - V diag(w)|| / ||A|| with w = diag(V^T A V)
        w = np.einsum("...ji,...jk,...ki->...i", g64, a64, g64)
        return float(np.abs(a64 @ g64 - g64 * w[..., None, :]).max() / np.abs(a64).max())
    if case == "qr":             # R's magnitudes against LAPACK's (the signs follow the reflectors)
        want = np.linalg.qr(a64).R
        return float(np.abs(np.abs(g64) - np.abs(want)).max() / np.abs(want).max())
    want = np.linalg.det(a64)
    return float(np.max(np.abs(g64 - want) / np.maximum(np.abs(want), 1e-300)))


def _evaluated(xp: Any, fn: Callable[..., Any], a: Any, b: Any) -> Any:
    """``fn(a, b)`` evaluated (every factor of a tuple, together)."""
    got = fn(a, b)
    xp.evaluate(*(got if isinstance(got, tuple) else (got,)))
    return got


def run(cases: list[str], runs: int, libs: list[str], only: set[str] | None = None) -> list[dict[str, Any]]:
    import gpuarray as xp
    rng = np.random.default_rng(0)
    rows: list[dict[str, Any]] = []
    from gpuarray.linalg import tridiag
    tridiag.MIN_WORK = 0     # every EIGVALSH_SHAPES matrix on the device: the figures calibrate MIN_WORK
    from gpuarray.linalg import syevd
    syevd.MIN_N = 0          # every EIGH_LARGE_SHAPES matrix on the device: they calibrate MIN_N
    from gpuarray.linalg import gesdd
    gesdd.MIN_K = 2          # every SVD_LARGE_SHAPES matrix on the device: they calibrate MIN_K
    with xp.config(offload="always"):
        for case in cases:
            shapes = {"eigh": EIGH_SHAPES, "svd": EIGH_SHAPES, "eigvalsh": EIGVALSH_SHAPES,
                      "svdvals": SVDVALS_SHAPES, "eigh_large": EIGH_LARGE_SHAPES,
                      "svd_large": SVD_LARGE_SHAPES}.get(case, SHAPES)
            for dtype, shape in shapes:
                if only and f"{dtype}:{'x'.join(map(str, shape))}" not in only:
                    continue
                plain = case in ("qr", "svd", "svdvals", "svd_large")
                a = rng.uniform(-3, 3, shape).astype(dtype) if plain else _spd(dtype, shape, rng)
                if case in ("eigvalsh", "eigh_large"):
                    a = _sym(dtype, shape, rng)
                b = rng.uniform(-3, 3, shape[:-1] + (16,)).astype(dtype)
                ga, gb = xp.asarray(a, device="wgpu:0"), xp.asarray(b, device="wgpu:0")
                fn = _gpuarray_fn(xp, case)
                xp.evaluate(ga * 1, gb * 1)
                xp.reset_metrics()
                got = _evaluated(xp, fn, ga, gb)
                xp.synchronize(ga.device)
                m = xp.metrics()
                rec: dict[str, Any] = {"case": case, "dtype": dtype, "shape": list(shape),
                                       "dispatches": m["dispatches"], "host_fallbacks": m["host_fallbacks"],
                                       "residual": _residual(case, a, b, got)}
                del got             # alive, the timed calls would find it (hash-consing)
                rec["gpuarray_ms"] = 1e3 * wall_per_call(lambda f=fn, x=ga, y=gb: _evaluated(xp, f, x, y),
                                                         lambda d=ga.device: xp.synchronize(d), runs)
                if case in ("eigvalsh", "svdvals", "eigh_large", "svd_large"):
                    rec["gpu_ms"] = gpu_ms(xp, lambda f=fn, x=ga, y=gb: _evaluated(xp, f, x, y), runs)
                host_a, host_b = a.copy(), b.copy()
                t0 = time.perf_counter()
                _gpuarray_fn(np, case)(host_a, host_b)
                rec["numpy_ms"] = 1e3 * (time.perf_counter() - t0)
                rec.update(time_peers(libs, _peer_fn(case), (a, b), runs))
                rows.append(rec)
                print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()),
                      flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="cholesky,solve,inv,det")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--libs", default="torch,cupy")
    ap.add_argument("--out")
    ap.add_argument("--shapes", default="", help="only these of the cases' shapes, e.g. float64:2048x2048")
    ap.add_argument("--old", action="store_true", help="the paths before the blocked ones")
    args = ap.parse_args()
    if args.old:
        from gpuarray.providers import wgpu_linalg_blocked as wb
        wb.BLOCKED_CHOLESKY = wb.BLOCKED_LU_PANEL = wb.SMALL_LU = False
    rows = run(args.cases.split(","), max(3, args.runs), [v for v in args.libs.split(",") if v],
               {v for v in args.shapes.split(",") if v} or None)
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1),
              args.out)


if __name__ == "__main__":
    main()
