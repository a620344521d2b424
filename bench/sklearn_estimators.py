"""scikit-learn estimators with array-API dispatch: gpuarray against NumPy on the host, PyTorch and CuPy.

    SCIPY_ARRAY_API=1 python -m bench.sklearn_estimators [--rows 1048576] [--cols 64] [--runs 3]
                                                         [--libs numpy,gpuarray,torch,cupy] [--out FILE]
                                                         [--dtypes float32,float64]

Issue 17's table: ``PCA(16, svd_solver="covariance_eigh").fit_transform``, ``Ridge(solver="svd").fit``,
``LinearDiscriminantAnalysis().fit(X, y).predict(X)``, ``LogisticRegression(max_iter=50).fit`` (and, by
``--estimators``, issue 20's ``pca_full`` and ``pca_rand``: ``PCA(16)`` with ``svd_solver="full"`` and
``"randomized"``) on float32 data (``--dtypes``: and / or float64; normal features, 4 classes or a
linear target with noise). Wall seconds per call until the returned array is computed on the device
(gpuarray's lazy result is evaluated, then every library synchronizes; nothing is downloaded); the
median of ``--runs`` calls after one warm-up call (which also compiles), each library timed after half
a second of its own warm-up work; NumPy is timed once (seconds per fit). gpuarray's host fallbacks per
fit are reported (``metrics()``), so that a figure that comes from the host is seen as such.
"""

# mypy: disable-error-code="misc"
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

os.environ.setdefault("SCIPY_ARRAY_API", "1")

from ._timing import write_out  # noqa: E402

ESTIMATORS = ("pca_cov", "ridge_svd", "lda", "logreg")


def _work(name: str) -> Callable[[Any, Any, Any], Any]:
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LogisticRegression, Ridge

    return {
        "pca_cov": lambda X, yc, yr: PCA(16, svd_solver="covariance_eigh").fit_transform(X),
        "ridge_svd": lambda X, yc, yr: Ridge(solver="svd").fit(X, yr).coef_,
        "lda": lambda X, yc, yr: LinearDiscriminantAnalysis().fit(X, yc).predict(X),
        "logreg": lambda X, yc, yr: LogisticRegression(max_iter=50).fit(X, yc).coef_,
        "pca_full": lambda X, yc, yr: PCA(16, svd_solver="full").fit_transform(X),
        "pca_rand": lambda X, yc, yr: PCA(16, svd_solver="randomized", random_state=0).fit_transform(X),
    }[name]


def _lib(lib: str) -> tuple[Callable[[np.ndarray], Any], Callable[[Any], None]]:
    """(to the library's device, wait for it)."""
    if lib == "numpy":
        return (lambda a: a), (lambda r: None)
    if lib == "gpuarray":
        import gpuarray as xp
        def done(r: Any) -> None:        # gpuarray is lazy: compute the result, then wait for it
            xp.evaluate(*(a for a in (r if isinstance(r, tuple) else (r,)) if isinstance(a, xp.GpuArray)))
            xp.synchronize()
        return (lambda a: xp.asarray(a, device="wgpu:0")), done
    if lib == "torch":
        import torch
        return (lambda a: torch.from_numpy(a).cuda()), (lambda r: torch.cuda.synchronize())
    import cupy as cp
    return (lambda a: cp.asarray(a)), (lambda r: cp.cuda.Device().synchronize())


def run(rows: int, cols: int, runs: int, libs: list[str], names: list[str],
        dtype: str = "float32") -> list[dict[str, Any]]:
    import sklearn

    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows, cols)).astype(dtype)
    w = rng.standard_normal(cols).astype(dtype)
    yr = (X @ w + 0.1 * rng.standard_normal(rows)).astype(dtype)
    yc = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-1.0, 0.0, 1.0]).astype(np.int64)
    out: list[dict[str, Any]] = []
    for name in names:
        fn = _work(name)
        rec: dict[str, Any] = {"estimator": name, "shape": [rows, cols], "dtype": dtype}
        for lib in libs:
            try:
                to, sync = _lib(lib)
                args = (to(X), to(yc), to(yr))
            except Exception as e:  # noqa: BLE001 - absent libraries are skipped
                rec[f"{lib}_error"] = str(e)[:200]
                continue
            with sklearn.config_context(array_api_dispatch=lib != "numpy"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    fb0 = _fallbacks(lib)
                    t0 = time.perf_counter()
                    sync(fn(*args))
                    first = time.perf_counter() - t0
                    rec[f"{lib}_first_s"] = first
                    n = 1 if lib == "numpy" or first > 5 else runs
                    t_end = time.perf_counter() + 0.5
                    while lib != "numpy" and time.perf_counter() < t_end and first < 0.5:
                        sync(fn(*args))
                    fb1 = _fallbacks(lib)
                    ts = []
                    for _ in range(n):
                        t0 = time.perf_counter()
                        sync(fn(*args))
                        ts.append(time.perf_counter() - t0)
                    rec[f"{lib}_s"] = statistics.median(ts)
                    if lib == "gpuarray":
                        rec["gpuarray_host_fallbacks_per_fit"] = (_fallbacks(lib) - fb1) / n
                        rec["gpuarray_first_fit_fallbacks"] = fb1 - fb0
                except Exception as e:  # noqa: BLE001 - a failing fit is reported, not hidden
                    rec[f"{lib}_error"] = f"{type(e).__name__}: {str(e)[:200]}"
        out.append(rec)
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()), flush=True)
    return out


def _fallbacks(lib: str) -> int:
    if lib != "gpuarray":
        return 0
    import gpuarray as xp
    return int(xp.metrics()["host_fallbacks"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1 << 20)
    ap.add_argument("--cols", type=int, default=64)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--libs", default="numpy,gpuarray,torch,cupy")
    ap.add_argument("--estimators", default=",".join(ESTIMATORS))
    ap.add_argument("--dtypes", default="float32", help="float32, float64 or both (comma-separated)")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = [r for dt in args.dtypes.split(",")
            for r in run(args.rows, args.cols, args.runs, args.libs.split(","), args.estimators.split(","), dt)]
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1),
              args.out)


if __name__ == "__main__":
    main()
