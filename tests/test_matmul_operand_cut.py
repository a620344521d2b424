"""Matmul operands computed by a kernel of their own (``compiler/schedule._reused_operands``).

A small operand whose cone does real work (a gather, a write into a view, several operations) and
whose product has a long other side is computed once before the product instead of in its prologue,
where every tile of the long side would compute it again. Cheap cones and short products stay fused.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler.schedule import REUSE_SIDE


def _flip_signs(w: Any, dev: Any) -> Any:
    """scikit-learn's ``svd_flip`` on rows: each row times the sign of its largest entry (a gather)."""
    n, k = w.shape
    idx = xp.argmax(xp.abs(w), axis=1) + xp.arange(n, device=dev) * k
    return w * xp.sign(xp.take(xp.reshape(w, (-1,)), idx))[:, None]


def _flip_signs_np(w: np.ndarray) -> np.ndarray:
    return w * np.sign(w[np.arange(w.shape[0]), np.abs(w).argmax(1)])[:, None]


def _kernels(fn: Any) -> tuple[Any, list[str]]:
    """(``fn()`` evaluated, the names of the kernels that ran)."""
    with xp.profile() as p:
        r = fn()
        xp.evaluate(r)
    return r, [key[0] for key in p.records]


def _data(rows: int, dt: str = "float32") -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(rows)
    return rng.uniform(-3, 3, (rows, 64)).astype(dt), rng.uniform(-30, 30, (16, 64)).astype(dt)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("rows", [8192, 70000])
def test_reused_operand_is_computed_once(device: xp.Device, dt: str, rows: int) -> None:
    """``X @ flip(W).T - 1`` with 8192 and 70000 rows (past 65535 workgroups of rows): the flipped
    components are one elementwise kernel, the product reads them as a plain input."""
    x, w = _data(rows, dt)
    gx, gw = xp.asarray(x, device=device), xp.asarray(w, device=device)
    r, names = _kernels(lambda: gx @ _flip_signs(gw, device).T - 1.0)
    want = x @ _flip_signs_np(w).T - 1.0
    np.testing.assert_allclose(np.asarray(r), want, rtol=1e-4 if dt == "float32" else 1e-12, atol=1e-3)
    product = [n for n in names if n.startswith("matmul")]
    assert len(product) == 1 and "gather" not in product[0], names
    assert any(n.startswith("elementwise") and "gather" in n for n in names), names


def test_new_values_replay(device: xp.Device) -> None:
    """The same graph again with other components (a replayed plan) and with the components
    themselves wanted too: every result is the new one."""
    x, w = _data(8192)
    gx = xp.asarray(x, device=device)
    for seed in range(3):
        w2 = (w * (seed + 1) - seed).astype("float32")
        gw = xp.asarray(w2, device=device)
        c = _flip_signs(gw, device)
        r = gx @ c.T
        xp.evaluate(r, c)
        np.testing.assert_allclose(np.asarray(c), _flip_signs_np(w2), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(r), x @ _flip_signs_np(w2).T, rtol=1e-4, atol=1e-2)


def test_cheap_or_short_stays_fused(device: xp.Device) -> None:
    """A cone of one multiply, and a product of fewer rows than ``REUSE_SIDE``, keep their prologue."""
    x, w = _data(8192)
    gx, gw = xp.asarray(x, device=device), xp.asarray(w, device=device)
    r, names = _kernels(lambda: gx @ (gw * 2.0).T)
    np.testing.assert_allclose(np.asarray(r), x @ (w * 2).T, rtol=1e-4, atol=1e-2)
    assert [n for n in names if n.startswith("matmul")][0].startswith("matmul:multiply"), names
    assert not any(n.startswith("elementwise") for n in names), names
    short = REUSE_SIDE // 2
    r, names = _kernels(lambda: gx[:short] @ _flip_signs(gw, device).T)
    np.testing.assert_allclose(np.asarray(r), x[:short] @ _flip_signs_np(w).T, rtol=1e-4, atol=1e-2)
    assert any(n.startswith("matmul") and "gather" in n for n in names), names


def test_empty_and_left_operand(device: xp.Device) -> None:
    """The left operand is cut the same way when the right side is long (``flip(W) @ X.T``), and a
    product with no rows still has the right shape."""
    x, w = _data(8192)
    gx, gw = xp.asarray(x, device=device), xp.asarray(w, device=device)
    r, names = _kernels(lambda: _flip_signs(gw, device) @ gx.T)
    np.testing.assert_allclose(np.asarray(r), _flip_signs_np(w) @ x.T, rtol=1e-4, atol=1e-2)
    assert not any(n.startswith("matmul") and "gather" in n for n in names), names
    e = gx[:0] @ _flip_signs(gw, device).T
    assert e.shape == (0, 16) and np.asarray(e).shape == (0, 16)
