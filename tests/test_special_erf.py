"""SciPy's error function family on the device (render/wgsl_special.py): ``erf``, ``erfc``, ``erfcx``, ``ndtr``,
``log_ndtr``, ``ndtri``, ``erfinv``, ``erfcinv``.

tests/test_special_ops.py and tests/test_elementwise.py compare them with SciPy on wide samples. SciPy's own
float64 values are several ULP from the exact ones here (up to 9 for ``erfc`` and ``erfcx`` below 3, and
x^2 / 2 for ``erfc`` and ``ndtr``, whose exp(-x^2) takes x^2 rounded: 450 ULP at x = 26), so the strict test
is against correctly rounded values computed with mpmath (tests/data/special_truth.npz,
scripts/gen_special_truth.py): float64 within ``F64_ULPS``, float32 within ``F32_ULPS`` of the exact value.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import gpuarray as xp

from .conftest import device_numerics

special = pytest.importorskip("scipy.special")

TRUTH = np.load(pathlib.Path(__file__).parent / "data" / "special_truth.npz")
NAMES = ("erf", "erfc", "erfcx", "ndtr", "log_ndtr", "ndtri", "erfinv", "erfcinv")
F64_ULPS = 3.5        # measured on lavapipe: see docs/accuracy.md
F32_ULPS = 4.0


def _ulps(got: np.ndarray, exact: np.ndarray, dt: np.dtype) -> np.ndarray:
    """|got - exact| in ULP of the exact value rounded to ``dt`` (subnormal results in the subnormal ULP)."""
    with np.errstate(all="ignore"):
        spacing = np.spacing(np.abs(exact.astype(dt))).astype(np.longdouble)
        return np.asarray(np.abs(got.astype(np.longdouble) - exact.astype(np.longdouble)) / spacing, np.float64)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_error_function_family_against_exact_values(name: str, dt: str, device: xp.Device) -> None:
    if device.kind != "wgpu":
        pytest.skip("the cpu device computes SciPy's ufunc itself (tests/test_special_ops.py)")
    dtype = np.dtype(dt)
    if not device.supports(dtype):
        pytest.skip(f"{dt} is not supported on {device}")
    x, exact = TRUTH[name]
    with xp.config(offload="always"):
        got = np.asarray(getattr(xp.special, name)(xp.asarray(x.astype(dtype), device=device)))
    with np.errstate(over="ignore"):
        rounded = exact.astype(dtype)
    over = np.isinf(rounded)
    np.testing.assert_array_equal(got[over], rounded[over], err_msg=f"{name}: overflow to infinity")
    fin = np.isfinite(rounded) & (np.abs(rounded) >= np.finfo(dtype).tiny)
    if dtype == np.float32 and device_numerics(device)["flushes_f32_subnormals"]:
        fin &= np.abs(x) >= np.finfo(np.float32).tiny
    err = _ulps(got[fin], exact[fin], dtype)
    i = int(np.argmax(err))
    bound = F64_ULPS if dtype == np.float64 else F32_ULPS
    assert err[i] <= bound, f"{name}({x[fin][i]!r}) = {got[fin][i]!r}, exact {exact[fin][i]!r}: {err[i]:.2f} ULP"


SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, 1e-30, -1e-30, 1e30, -1e30,
                     40.0, -40.0])


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_special_values_as_scipy(name: str, dt: str, device: xp.Device) -> None:
    """NaN, infinities, zeros (with their signs) and the domain's ends exactly as SciPy's."""
    dtype = np.dtype(dt)
    if not device.supports(dtype):
        pytest.skip(f"{dt} is not supported on {device}")
    x = SPECIALS.astype(dtype)
    with xp.config(offload="always"):
        got = np.asarray(getattr(xp.special, name)(xp.asarray(x, device=device)))
    with np.errstate(all="ignore"):
        want = np.asarray(getattr(special, name)(x.astype(np.float64))).astype(dtype)
    exact = ~np.isfinite(want) | (want == 0) | (np.abs(want) == 1) | (np.abs(want) == 2)
    np.testing.assert_array_equal(got[exact], want[exact], err_msg=f"{name}: special values")
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]), err_msg=f"{name}: signs of zeros")
    np.testing.assert_allclose(got[~exact], want[~exact], rtol=4 * float(np.finfo(dtype).eps))


def test_fused_with_neighbours_and_no_host_fallback(device: xp.Device) -> None:
    """ndtr(erfinv(y) * sqrt 2) is y (for |y| < 1): the chain is one kernel on wgpu, nothing on the host."""
    y = np.linspace(-0.999, 0.999, 4001, dtype=np.float32)
    g = xp.asarray(y, device=device)
    xp.reset_metrics()
    with xp.config(fallback="raise", offload="always"):
        r = 2 * xp.special.ndtr(xp.special.erfinv(g) * np.float32(np.sqrt(2))) - 1 + xp.special.erfc(g) * 0
        xp.evaluate(r)
    m = xp.metrics()
    assert m["host_fallbacks"] == 0
    if device.kind == "wgpu":
        assert m["dispatches"] == 1
    np.testing.assert_allclose(np.asarray(r), y, atol=3e-7)
