"""NumPy's binary ufuncs called without keywords on a GpuArray and a GpuArray or a Python number take the
operator's hot path (``np.add(x, 2.0)`` as ``x + 2.0``; interop/ufuncs.py ``_OPERATORS``). Here every such ufunc,
over every pair of dtypes and a set of Python scalars (bools, ints at and past the small dtypes' ranges,
floats, NaN, -0.0, complex), in both orders: NumPy's result dtype and values, or NumPy's exception type."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.core.ops import OPS, UFUNC_TO_OP
from gpuarray.interop.ufuncs import _OPERATORS

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float32", "float64", "complex64"]
SCALARS: list[Any] = [True, False, 0, 3, -2, 300, 2**40, -(2**63), 1.5, -0.0, float("nan"), 2j]


def _values(dt: str) -> np.ndarray:
    rng = np.random.default_rng(len(dt))
    if dt == "bool":
        return rng.integers(0, 2, 6).astype(bool)
    if dt[0] in "iu":
        return rng.integers(0, 5, 6).astype(dt)
    v = rng.uniform(-3, 3, 6)
    v[:2] = (0.0, -0.0)
    return (v + (1j * rng.uniform(-3, 3, 6) if dt[0] == "c" else 0)).astype(dt)


def _outcome(uf: np.ufunc, a: Any, b: Any) -> tuple:
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = np.asarray(uf(a, b))
    except Exception as e:                      # noqa: BLE001 - the exception's type is the outcome
        return ("raises", type(e).__name__ if not isinstance(e, TypeError) else "TypeError")
    return ("gives", r.dtype, r)


@pytest.mark.parametrize("name", sorted(_OPERATORS) + ["power"])
def test_binary_ufuncs_as_numpy_on_every_dtype_pair(name: str, device: xp.Device) -> None:
    uf = getattr(np, name)
    if device.kind == "wgpu" and name not in ("subtract", "less", "right_shift"):
        pytest.skip("the same path on wgpu: a sample of ops there (compile time on lavapipe)")
    bad = []
    for dt in DTYPES:
        h = _values(dt)
        g = xp.asarray(h, device=device)
        pairs: list[tuple[Any, Any, Any, Any]] = []
        for s in SCALARS:
            pairs += [(g, s, h, s), (s, g, s, h)]
        for dt2 in DTYPES:
            h2 = _values(dt2)[::-1].copy()
            pairs.append((g, xp.asarray(h2, device=device), h, h2))
        for a, b, ha, hb in pairs:
            got, want = _outcome(uf, a, b), _outcome(uf, ha, hb)
            same = got[:2] == want[:2] and (got[0] == "raises" or got[2].shape == want[2].shape and (
                np.array_equal(got[2], want[2], equal_nan=True) if got[1].kind in "biu" else
                np.allclose(got[2], want[2], rtol=4 * np.finfo(got[1]).eps, atol=0, equal_nan=True)))
            if not same:
                bad.append((dt, type(b).__name__ if not isinstance(b, xp.GpuArray) else str(b.dtype), a is g,
                            got[:2], want[:2]))
    assert not bad, "\n".join(map(str, bad[:12]))


_UNARY_NAMES = sorted(u for u, o in UFUNC_TO_OP.items() if o in OPS and OPS[o].nargs == 1
                      and isinstance(getattr(np, u, None), np.ufunc) and getattr(np, u).nin == 1)


@pytest.mark.parametrize("dt", DTYPES + ["complex128"])
def test_unary_ufuncs_as_numpy_on_every_dtype(dt: str, device: xp.Device) -> None:
    """Unary ufuncs without keywords (``np.exp(x)``) take the op's ``apply`` where NumPy's loop keeps the dtype
    (interop/ufuncs.py ``_by_unary``), the general path elsewhere: every op-table unary ufunc on every dtype,
    NumPy's dtype and values (floats within a few ULP: the float32 library is NumPy's to 1-4 ULP), or its
    exception type; each call twice (the second takes the remembered path)."""
    if device.kind == "wgpu" and dt not in ("int8", "float32"):
        pytest.skip("the same path on wgpu: two dtypes there (compile time on lavapipe)")
    h = _values(dt)
    bad = []
    for name in _UNARY_NAMES:
        uf = getattr(np, name)
        want = _outcome1(uf, h)
        half = want[0] == "gives" and want[1] == np.float16     # functions within a float16 ULP
        for _ in range(2):
            got = _outcome1(uf, xp.asarray(h, device=device))
            ok = got[:2] == want[:2] and (got[0] == "raises" or got[2].shape == want[2].shape and (
                np.array_equal(got[2], want[2], equal_nan=True) if got[1].kind in "biu" else
                np.allclose(got[2], want[2], rtol=2e-3 if half else 64 * np.finfo(got[1]).eps, atol=0,
                            equal_nan=True)))
            if not ok:
                bad.append((name, got[:2], want[:2]))
    assert not bad, "\n".join(map(str, bad[:12]))


def _outcome1(uf: np.ufunc, a: Any) -> tuple:
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = np.asarray(uf(a))
    except Exception as e:                      # noqa: BLE001 - the exception's type is the outcome
        return ("raises", type(e).__name__)
    return ("gives", r.dtype, r)
