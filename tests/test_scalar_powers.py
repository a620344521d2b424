"""Powers with a scalar exponent of 2, 0.5 or -1 are what NumPy computes for them: ``square``,
``sqrt`` and ``reciprocal`` (its fast paths), not ``power``. They give different answers at -0.0
and the infinities (``(-0.0) ** 0.5`` is -0.0, ``(-inf) ** 0.5`` is NaN), and a multiply costs far
less than a power (float64 power has no device kernel: ``x ** 2`` of float64 data went to the host).

For floating operands NumPy's ``power`` loops take them in every form (``x ** 2``, ``np.power(x, 2)``);
for complex operands only the ``**`` operator does, with the Python scalars 2, -1 and 0.5.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler.schedule import schedule

from .conftest import assert_same

VALUES = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 3.0, 1e-30, 1e30, np.inf, -np.inf, np.nan]


def _data(dt: str, n: int) -> np.ndarray:
    return np.resize(np.array(VALUES, dtype=dt), n)


@pytest.mark.parametrize("n", [12, 70000])
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("e", [2, 2.0, 0.5, -1, -1.0])
def test_float_scalar_powers(device: xp.Device, dt: str, e: float, n: int) -> None:
    x = _data(dt, n)
    g = xp.asarray(x, device=device)
    with np.errstate(all="ignore"), xp.config(offload="always"):
        assert_same(g ** e, x ** e)
        assert_same(xp.pow(g, e), np.power(x, e))
        assert_same(np.power(g, e), np.power(x, e))


@pytest.mark.parametrize("n", [12, 70000])
@pytest.mark.parametrize("e", [2, -1, 0.5, 2.0, -1.0, 0.5 + 0j])
def test_complex_operator_powers(device: xp.Device, e: complex, n: int) -> None:
    """``**`` with the Python scalars 2, -1 and 0.5 is square, reciprocal and sqrt; with 2.0, -1.0
    or a complex exponent it is ``power`` (compared on finite values and without the signs of
    zeros: complex ``power`` at those is not this test's subject)."""
    x = _data("complex64", n)
    if type(e) is not int and e != 0.5 or type(e) is complex:
        x = np.where(np.isfinite(x), x, 1.0).astype("complex64")
    g = xp.asarray(x, device=device)
    with np.errstate(all="ignore"), xp.config(offload="always"):
        want = x ** e
        fast = (type(e) is int and e in (2, -1)) or (type(e) is float and e == 0.5)
        if fast:
            assert_same(g ** e, want)
        else:
            assert_same(g ** e, want, rtol=2e-6, atol=1e-30, check_signed_zero=False)


def test_graph_rewrite(device: xp.Device) -> None:
    """The nodes are the unary ops (one kernel op, no power), for arrays of every size."""
    g = xp.asarray(np.linspace(-3, 3, 70000, dtype="float32"), device=device)
    assert (g ** 2)._node.op == "square"
    assert xp.pow(g, 0.5)._node.op == "sqrt"
    assert (g ** -1)._node.op == "reciprocal"
    assert (g ** 3)._node.op == "pow"
    assert (g ** xp.asarray(np.full(70000, 2.0, "float32"), device=device))._node.op == "pow"


def test_float64_square_stays_on_the_device(wgpu_device: xp.Device) -> None:
    """StandardScaler's ``(x - mean) ** 2`` in float64 runs on the device: no host fallback."""
    x = np.random.default_rng(0).uniform(-3, 3, (20000, 32))
    g = xp.asarray(x, device=wgpu_device)
    with xp.config(offload="always"):
        got = xp.mean((g - xp.mean(g, axis=0)) ** 2, axis=0)
        assert "pow" not in {ins.op for k in schedule([got._node]) for ins in k.instrs}
        xp.reset_metrics()
        assert_same(got, np.mean((x - np.mean(x, axis=0)) ** 2, axis=0), rtol=1e-12)
        assert xp.metrics()["host_fallbacks"] == 0
