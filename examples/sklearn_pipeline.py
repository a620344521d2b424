"""scikit-learn on GpuArrays: scale, reduce with PCA, classify with LogisticRegression and
LinearDiscriminantAnalysis, score with array-API metrics. Everything stays on the device.

    python examples/sklearn_pipeline.py [--device wgpu:0]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")    # before SciPy / scikit-learn are imported

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.linear_model import LogisticRegression, Ridge  # noqa: E402
from sklearn.metrics import accuracy_score, pairwise_distances, r2_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import gpuarray as xp  # noqa: E402


def main(device: str | None = None) -> dict[str, float]:
    dev = xp.Device(device) if device else xp.default_device()
    X_np, y_np = make_classification(n_samples=400, n_features=20, n_informative=6, random_state=0)
    dtype = np.float64 if dev.supports(np.dtype("float64")) else np.float32
    X = xp.asarray(X_np.astype(dtype), device=dev)        # data on the device
    y = xp.asarray(y_np, device=dev)

    scores = {}
    with sklearn.config_context(array_api_dispatch=True):
        clf = make_pipeline(StandardScaler(), PCA(n_components=8, svd_solver="full"), LogisticRegression())
        clf.fit(X, y)
        pred = clf.predict(X)                                # a GpuArray on `dev`
        assert isinstance(pred, xp.GpuArray) and pred.device == dev
        assert clf[-1].coef_.device == dev                   # fitted attributes live there too
        scores["logreg_accuracy"] = accuracy_score(y, pred)

        lda = LinearDiscriminantAnalysis().fit(X, y)
        scores["lda_accuracy"] = accuracy_score(y, lda.predict(X))

        target = X @ xp.asarray(np.linspace(-1, 1, 20).astype(dtype), device=dev)
        ridge = Ridge(alpha=1.0, solver="svd").fit(X, target)
        scores["ridge_r2"] = r2_score(target, ridge.predict(X))

        D = pairwise_distances(X[:5], X[:7])                 # (5, 7) GpuArray on `dev`
        assert D.device == dev and D.shape == (5, 7)

    # the same pipeline on NumPy gives the same answer
    ref = make_pipeline(StandardScaler(), PCA(n_components=8, svd_solver="full"), LogisticRegression())
    ref_acc = accuracy_score(y_np, ref.fit(X_np, y_np).predict(X_np))
    assert abs(scores["logreg_accuracy"] - ref_acc) < 0.01, (scores, ref_acc)
    return scores


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cpu or wgpu:N (default: gpuarray's default device)")
    for k, v in main(parser.parse_args().device).items():
        print(f"{k}: {v:.4f}")
