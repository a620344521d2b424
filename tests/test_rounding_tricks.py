"""Functions that round by adding 1.5 2^23 (``ga_rint``: sin, cos, exp and their kin) stay right in
kernels that also compute in 64-bit integers. On the H200 (NVIDIA 580) ``cos`` fused after int64
arithmetic came out wrong (``cos(0.066)`` gave 0.907: SciPy's ``epps_singleton_2samp`` in float32, whose
quantile indices are int64, and ``cos(x) + (i * 3 % 7)`` with ``i`` int64), and so did ``exp``, ``sinh``
and ``cosh`` of ``|x|`` or ``x^2 / 4``: the rounding's sign mask is provably a no-op for a sum known to be
positive, and the compiler folded ``(y + c) - c`` to ``y``. lavapipe computes these right either way;
the test is the drivers' check (docs/reliability.md, "On the H200")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp

_FUNCS = ["sin", "cos", "tan", "exp", "expm1", "tanh", "sinh", "cosh"]
_ARGS: dict[str, Callable[[Any, Any], Any]] = {
    "x": lambda m, x: x,
    "abs(x)": lambda m, x: m.abs(x),
    "x*x/4": lambda m, x: x * x / 4,
}


def _data(dt: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-3, 3, 700), rng.uniform(-30, 30, 700),
                        [0.0, -0.0, 0.066, -0.066, np.pi / 4, 1.5707964, -1.5707964, 20.0, -20.0]]).astype(dt)
    return x, rng.integers(-(2**40), 2**40, x.size)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("fn", _FUNCS)
def test_functions_fused_with_int64_arithmetic(device: xp.Device, dt: str, fn: str) -> None:
    x, i = _data(dt)
    xd, id_ = xp.asarray(x, device=device), xp.asarray(i, device=device)
    rtol = 4e-6 if dt == "float32" else 1e-14
    for name, arg in _ARGS.items():
        with np.errstate(all="ignore"):
            want = getattr(np, fn)(arg(np, x)) + (i * 3 % 7).astype(dt)
            # a compiler may contract x * x into the function's first multiply-add (an fma, which WGSL
            # allows), so the argument is x^2 / 4 unrounded: at x = 17, exp(72.24) then differs from
            # NumPy's exp of the rounded argument by 4e-6 relative, and agrees with the exact one
            exact = (getattr(np, fn)(arg(np, x.astype(np.float64))) + (i * 3 % 7)).astype(dt)
        got = np.asarray(getattr(xp, fn)(arg(xp, xd)) + xp.astype(id_ * 3 % 7, getattr(xp, dt)))
        near_exact = np.isclose(got, exact, rtol=rtol, atol=rtol, equal_nan=True)
        np.testing.assert_allclose(np.where(near_exact, want, got), want, rtol=rtol, atol=rtol, equal_nan=True,
                                   err_msg=f"{fn}({name}) + int64")


def test_cos_of_a_quantile_computed_in_the_kernel(device: xp.Device) -> None:
    # the shape of epps_singleton_2samp's kernel: quantiles taken at int64 indices fused into cos(a * ts).
    # This simplified form passed on the H200 before the fix too (SciPy's own test failed there): it checks
    # the fusion against NumPy, while the int64-arithmetic test above is the one that caught the driver
    a = np.array([-0.35, 2.55, 1.73, 0.73, 0.35, 2.69, 0.46, -0.94, -0.37, 12.07], np.float32)
    t = np.array([0.4, 0.8], np.float32)

    def steps(m: Any, a: Any, t: Any, p: Any) -> Any:
        s = m.sort(a)
        k = m.astype(m.floor(p * 9), m.int64) * 3 % 10
        q = m.take(s, k)
        return m.cos(a * (m.reshape(t, (-1, 1)) / ((q[1:] - q[:1]) / 2)))

    p = np.array([0.25, 0.75], np.float32)
    got = np.asarray(steps(xp, *(xp.asarray(v, device=device) for v in (a, t, p))))
    np.testing.assert_allclose(got, steps(np, a, t, p), rtol=4e-6, atol=4e-6)
