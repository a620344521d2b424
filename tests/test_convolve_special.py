"""``np.convolve`` / ``np.correlate`` with NaN and infinities: each output is NumPy's sum over the elements
that overlap there, so a non-finite value reaches only the outputs it touches (the shifted sums padded the
signal with zeros, and ``0 * nan`` made every output NaN; the FFT path spreads them too, so operands holding
one take the shifted sums). Every mode, both orders of lengths, both sides of ``DIRECT_MAX``, both devices."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.interop.adapters.statistics import DIRECT_MAX

from .conftest import assert_same


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize(("n1", "n2"), [(7, 7), (10, 3), (3, 10), (200, 5), (DIRECT_MAX + 30, DIRECT_MAX + 6)])
@pytest.mark.parametrize("fn", [np.convolve, np.correlate], ids=["convolve", "correlate"])
def test_non_finite_values_stay_local(device: xp.Device, dt: str, n1: int, n2: int, fn: np.ufunc) -> None:
    rng = np.random.default_rng(n1 * 100 + n2)
    a, v = rng.uniform(-3, 3, n1).astype(dt), rng.uniform(-3, 3, n2).astype(dt)
    a[n1 // 2], a[0], v[-1] = np.nan, -np.inf, np.inf
    ga, gv = xp.asarray(a, device=device), xp.asarray(v, device=device)
    for mode in ("full", "same", "valid"):
        with np.errstate(all="ignore"):
            want = fn(a, v, mode=mode)
        with xp.config(offload="always"):
            got = fn(ga, gv, mode=mode)
        assert_same(got, want, rtol=1e-4, atol=1e-4, check_signed_zero=False)


def test_poly_of_a_nan_root(device: xp.Device) -> None:
    r = np.array([1.0, np.nan, 2.0])
    with np.errstate(all="ignore"):
        want = np.poly(r)
    assert_same(np.poly(xp.asarray(r, device=device)), want, check_signed_zero=False)
