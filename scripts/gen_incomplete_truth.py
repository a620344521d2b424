"""Correctly rounded float64 values of ``betainc``, ``betaincc``, ``stdtr``, ``gammainc`` and ``gammaincc`` at
inputs that reach every branch of render/wgsl_incomplete.py, for tests/test_special_incomplete.py:
``tests/data/incomplete_truth.npz``.

    python3 scripts/gen_incomplete_truth.py      # needs mpmath (not a test dependency; a few minutes)

SciPy's own float64 ``betainc``, ``betaincc`` and ``stdtr`` are up to about 20 (a + b) ULP from the exact values
(and ``stdtr(1, t)`` up to 1.4e7 ULP for small t), its ``gammainc`` and ``gammaincc`` up to thousands of ULP in
the tails (and 148 at gammaincc(0.514, 1.028)), so the strict test of the device kernels compares with these,
computed with 60 significant digits. Inputs are float32 values (so that the same table serves float32: the
float64 value rounded to float32).
"""

from __future__ import annotations

import pathlib

import mpmath as mp
import numpy as np

mp.mp.dps = 60


def _betainc(a: float, b: float, x: float, comp: bool) -> float:
    a_, b_, x_ = mp.mpf(a), mp.mpf(b), mp.mpf(x)
    if comp:
        return float(mp.betainc(b_, a_, 0, 1 - x_, regularized=True))
    return float(mp.betainc(a_, b_, 0, x_, regularized=True))


def _stdtr(df: float, t: float) -> float:
    df_, t_ = mp.mpf(df), mp.mpf(t)
    p = mp.betainc(df_ / 2, mp.mpf(0.5), 0, df_ / (df_ + t_ * t_), regularized=True) / 2
    return float(1 - p if t > 0 else p)


def _gammainc(a: float, x: float, comp: bool) -> float:
    a_, x_ = mp.mpf(a), mp.mpf(x)
    return float(mp.gammainc(a_, x_, mp.inf, regularized=True) if comp else mp.gammainc(a_, 0, x_, regularized=True))


def _f32(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, np.float64).astype(np.float32).astype(np.float64)


def _beta_inputs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    par = [rng.uniform(0, 5, n), 10 ** rng.uniform(-4, 4, n), rng.integers(1, 60, n).astype(float),
           10 ** rng.uniform(2, 4, n), rng.uniform(0, 1, n)]
    a = np.concatenate(par)
    b = rng.permutation(np.concatenate(par))
    x = np.concatenate([rng.uniform(0, 1, 2 * n), 10 ** rng.uniform(-20, 0, n), 1 - 10 ** rng.uniform(-7, -0.3, n),
                        rng.uniform(0, 1, n)])
    m = a / (a + b)
    # the large parameters (fourth block) about the mean: the continued fraction's hard region
    near = (np.arange(a.size) >= 3 * n) & (np.arange(a.size) < 4 * n)
    x = np.where(near, np.clip(m + rng.normal(0, 1, a.size) * np.sqrt(m * (1 - m) / (a + b + 1)), 1e-6, 1 - 1e-6), x)
    a, b, x = _f32(a), _f32(b), _f32(x)
    ok = (a > 0) & (b > 0) & (x > 0) & (x < 1)
    return a[ok], b[ok], x[ok]


def main() -> None:
    rng = np.random.default_rng(2024)
    out: dict[str, np.ndarray] = {}
    for name, comp in (("betainc", False), ("betaincc", True)):
        a, b, x = _beta_inputs(rng, 120)
        out[name] = np.array([(ai, bi, xi, _betainc(ai, bi, xi, comp)) for ai, bi, xi in zip(a, b, x)])
        print(name, len(a))
    df = np.concatenate([10 ** rng.uniform(-1, 6, 300), rng.integers(1, 60, 100).astype(float), np.full(40, 1.0),
                         rng.uniform(0.5, 10, 100)])
    t = np.concatenate([rng.uniform(-50, 50, 240), rng.uniform(-3, 3, 160), rng.choice([-1.0, 1.0], 140)
                        * 10 ** rng.uniform(-8, 1, 140)])
    df, t = _f32(df), _f32(rng.permutation(t))
    out["stdtr"] = np.array([(d, ti, 0.0, _stdtr(d, ti)) for d, ti in zip(df, t)])
    print("stdtr", len(df))
    for name, comp in (("gammainc", False), ("gammaincc", True)):
        n = 120
        a = np.concatenate([rng.uniform(0, 5, n), 10 ** rng.uniform(-4, 4, n), rng.uniform(15, 300, n),
                            10 ** rng.uniform(2, 5, n)])
        x = rng.permutation(np.concatenate([rng.uniform(0, 10, n), 10 ** rng.uniform(-6, 4, n),
                                            rng.uniform(0, 400, n), rng.uniform(0, 1, n)]))
        near = rng.uniform(0, 1, a.size) < 0.5         # about a (the asymptotic series' region)
        x = np.where(near, np.abs(a + rng.normal(0, 1, a.size) * np.sqrt(a) * 3), x)
        a, x = _f32(a), _f32(x)
        ok = (a > 0) & (x > 0)
        out[name] = np.array([(ai, xi, 0.0, _gammainc(ai, xi, comp)) for ai, xi in zip(a[ok], x[ok])])
        print(name, int(ok.sum()))
    path = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "incomplete_truth.npz"
    np.savez_compressed(path, **out)
    print("wrote", path)


if __name__ == "__main__":
    main()
