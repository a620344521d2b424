"""Correctly rounded float64 values of SciPy's error function family at inputs that reach every branch
of render/wgsl_special.py, for tests/test_special_erf.py: ``tests/data/special_truth.npz``.

    python3 scripts/gen_special_truth.py      # needs mpmath (not a test dependency; about a minute)

SciPy's own float64 ``erfc``, ``erfcx``, ``ndtr``, ``log_ndtr``, ``ndtri`` and ``erfcinv`` are up to 9 ULP
(and ``erfc`` and ``ndtr`` up to x^2 / 2 ULP) from the exact values, so the strict test of the device
kernels compares with these, computed with 50 significant digits. Inputs are float32 values (so the same
table serves float32: the float64 value rounded to float32).
"""

from __future__ import annotations

import pathlib

import mpmath as mp
import numpy as np

mp.mp.dps = 50


def _inputs(name: str) -> np.ndarray:
    rng = np.random.default_rng(sum(map(ord, name)))
    if name in ("ndtri",):
        parts = [rng.uniform(0, 1, 900), 10.0 ** rng.uniform(-37, 0, 400), 1 - 10.0 ** rng.uniform(-7, -0.3, 200),
                 np.array([0.5, 0.25, 0.75, 0.135, 0.865, 1e-30, 1e-10])]
    elif name == "erfinv":
        parts = [rng.uniform(-1, 1, 900), 1 - 10.0 ** rng.uniform(-7, -0.3, 300), 10.0 ** rng.uniform(-30, -0.3, 300),
                 np.array([0.5, -0.5, 0.25, 1e-20])]
    elif name == "erfcinv":
        parts = [rng.uniform(0, 2, 900), 10.0 ** rng.uniform(-37, -0.3, 400), 2 - 10.0 ** rng.uniform(-7, -0.3, 200),
                 np.array([0.5, 1.5, 0.27, 1e-30])]
    else:
        hi = {"erf": 6.5, "erfc": 27.0, "erfcx": 27.0, "ndtr": 38.0, "log_ndtr": 38.0}[name]
        parts = [rng.uniform(-hi, hi, 900), rng.uniform(-3, 3, 500), 10.0 ** rng.uniform(-20, 0, 100),
                 -(10.0 ** rng.uniform(-20, 0, 100)), np.array([0.84375, 1.25, 2.857, 0.25, -0.25, 1.0, -1.0])]
        if name in ("erfcx", "log_ndtr"):
            parts.append(10.0 ** rng.uniform(1, 30, 100))
    return np.unique(np.concatenate(parts).astype(np.float32)).astype(np.float64)


def _truth(name: str, x: float) -> float:
    v = mp.mpf(x)
    if name == "erf":
        r = mp.erf(v)
    elif name == "erfc":
        r = mp.erfc(v)
    elif name == "erfcx":
        r = mp.exp(v * v) * mp.erfc(v)
    elif name == "ndtr":
        r = mp.ncdf(v)
    elif name == "log_ndtr":
        r = mp.log(mp.erfc(-v / mp.sqrt(2)) / 2) if v < 3 else mp.log1p(-mp.erfc(v / mp.sqrt(2)) / 2)
    elif name == "ndtri":
        r = -mp.sqrt(2) * _erfcinv(2 * v)
    elif name == "erfinv":
        r = mp.erfinv(v) if abs(v) < 0.5 else mp.sign(v) * _erfcinv(1 - abs(v))
    else:
        r = _erfcinv(v)
    return float(r)


def _erfcinv(q: mp.mpf) -> mp.mpf:
    if q > 1:
        return -_erfcinv(2 - q)
    if q > 0.5:
        return mp.erfinv(1 - q)
    x0 = mp.sqrt(-mp.log(q * mp.sqrt(mp.pi)))        # then Newton on erfc
    for _ in range(100):
        x1 = x0 + (mp.erfc(x0) - q) * mp.sqrt(mp.pi) / 2 * mp.exp(x0 * x0)
        if abs(x1 - x0) < mp.mpf(10) ** -45 * abs(x1):
            return x1
        x0 = x1
    return x0


def main() -> None:
    out = {}
    for name in ("erf", "erfc", "erfcx", "ndtr", "log_ndtr", "ndtri", "erfinv", "erfcinv"):
        x = _inputs(name)
        out[name] = np.stack([x, np.array([_truth(name, float(v)) for v in x])])
    path = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "special_truth.npz"
    np.savez_compressed(path, **out)
    print(path, {k: v.shape[1] for k, v in out.items()})


if __name__ == "__main__":
    main()
