"""Views that were evaluated (their node realized: op "view", no inputs left) used as operands.

scikit-learn's GaussianMixture evaluates ``resp.T`` and then computes ``resp.T @ X``: the product's
blocking test read the view's base through ``inputs[0]`` and raised IndexError (4 failures in
scikit-learn's array-API suite on the cpu device). Every kind of operation takes such operands here,
compared with NumPy on both devices."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp

from .conftest import assert_same

VIEWS: dict[str, Callable[[Any], Any]] = {
    "T": lambda a: a.T,
    "rows": lambda a: a[1:6],
    "cols": lambda a: a[:, ::2],
    "flip": lambda a: a[::-1],
    "reshape": lambda a: a.reshape(4, 21).T.reshape(7, 12),
}

OPS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "matmul": lambda m, v, o: v @ o.T[: v.shape[1]],
    "gram": lambda m, v, o: v.T @ v,
    "matmul_vec": lambda m, v, o: v @ o[0, : v.shape[1]],
    "tensordot": lambda m, v, o: m.tensordot(v, v, axes=([0, 1], [0, 1])),
    "elementwise": lambda m, v, o: m.exp(v * 0.5) - v,
    "sum0": lambda m, v, o: m.sum(v, axis=0),
    "max1": lambda m, v, o: m.max(v, axis=1),
    "take": lambda m, v, o: m.take(v, m.asarray([0, 2, 1], device=v.device), axis=0),
    "getitem": lambda m, v, o: v[1:, ::-1][0],
    "reshape": lambda m, v, o: m.reshape(v, (-1,)) + 1,
    "concat": lambda m, v, o: m.concat([v, v], axis=0),
    "setitem": lambda m, v, o: _set_row(m, v),
    "mask": lambda m, v, o: v[v > 1.0],
    "where": lambda m, v, o: m.where(v > 1.0, v, -v),
    "sort": lambda m, v, o: m.sort(v, axis=0),
    "argmax": lambda m, v, o: m.argmax(v, axis=1),
    "cumsum": lambda m, v, o: m.cumulative_sum(v, axis=1) if m is xp else np.cumsum(v, axis=1),
    "std": lambda m, v, o: m.std(v, axis=0),
    "vecdot": lambda m, v, o: m.vecdot(v, v, axis=0),
    "flip_roll": lambda m, v, o: m.roll(m.flip(v, axis=1), 2, axis=0),
    "stack": lambda m, v, o: m.stack([v, v * 2]),
    "moveaxis": lambda m, v, o: m.moveaxis(m.reshape(v, (1, *v.shape)), 0, -1),
    "diff": lambda m, v, o: m.diff(v, axis=0),
    "clip": lambda m, v, o: m.clip(v, 0.8, 1.5),
    "outer": lambda m, v, o: m.linalg.outer(v[0], v[:, 0]),
    "solve": lambda m, v, o: m.linalg.solve(v.T @ v + 3 * m.eye(v.shape[1], device=v.device), v[0]),
    "nonzero": lambda m, v, o: m.nonzero(v > 1.0)[1],
}


def _set_row(m: Any, v: Any) -> Any:
    c = m.asarray(v, copy=True)
    c[0] = 7.0
    return c


@pytest.mark.parametrize("base", ["computed", "evaluated", "view_of_view"])
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("op", list(OPS))
def test_ops_on_evaluated_views(base: str, view: str, op: str, device: xp.Device) -> None:
    host = np.linspace(-3, 3, 84).reshape(7, 12)
    other = np.cos(np.arange(84.0)).reshape(7, 12)
    a = xp.asarray(host, device=device)
    o = xp.asarray(other, device=device)
    e = xp.exp(a * 0.25)
    want_base = np.exp(host * 0.25)
    if base == "evaluated":                     # the base evaluated first, then the view
        xp.evaluate(e)
    v = VIEWS[view](e)                          # a view of a computed array ...
    xp.evaluate(v)                              # ... evaluated by itself: realized, its inputs dropped
    assert v._node.realized and not v._node.inputs
    wv = VIEWS[view](want_base)
    if base == "view_of_view":                  # a view of that evaluated view, evaluated in turn
        v = v[::-1]
        wv = wv[::-1]
        xp.evaluate(v)
    assert_same(OPS[op](xp, v, o), OPS[op](np, wv, other), rtol=1e-12, atol=1e-12)


def test_an_index_guarded_by_an_evaluated_condition(device: xp.Device) -> None:
    """``take(a, where(c, i, 0))`` with ``c`` evaluated after the ``where`` was recorded: the index bounds
    read the comparison's operands through ``inputs``, which the evaluated ``c`` no longer has (IndexError)."""
    host = np.arange(40.0)
    a = xp.asarray(host, device=device)
    i_host = np.arange(10) * 3 - 7
    i = xp.asarray(i_host, device=device) + 1
    c = i < 5
    idx = xp.where(c, i, 0)
    xp.evaluate(c)
    assert c._node.realized and not c._node.inputs and c._node.op == "less"
    j = i_host + 1
    assert_same(xp.take(a, idx), np.take(host, np.where(j < 5, j, 0)))
