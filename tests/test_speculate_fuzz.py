"""Random loops of reads with reads computed ahead (runtime/speculate.py) against NumPy.

Each program is a loop body of three to five reads (``float`` of a reduction, or a small array to NumPy)
over a long-lived matrix, weights uploaded anew each iteration, the pending arrays the body made before
(reads of them are what gets computed ahead), constants that stay or change each iteration, and in-place
updates; every value read in every iteration must be NumPy's, whatever was computed ahead, and the body
must not take more evaluations than without computing ahead."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.runtime import speculate

from .conftest import DEVICES


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    speculate.clear()
    yield
    speculate.clear()


_UNARY: list[Callable[[Any, Any], Any]] = [
    lambda m, a: m.exp(a * 0.25), lambda m, a: m.tanh(a), lambda m, a: m.abs(a) + 1,
    lambda m, a: a * a, lambda m, a: m.where(a > 0, a, a * 0.5), lambda m, a: m.log1p(m.abs(a)),
]


def _program(seed: int) -> Callable[[Any, Any, Any, int], list[Any]]:
    """A loop body ``body(mod, X, w, k)`` returning the values it read (``mod`` is NumPy or gpuarray)."""
    rng = np.random.default_rng(seed)
    reads = []
    for _ in range(int(rng.integers(3, 6))):
        reads.append((int(rng.integers(0, 6)), int(rng.integers(0, len(_UNARY))), float(rng.uniform(-2, 2)),
                      bool(rng.random() < 0.3), int(rng.integers(0, 3))))

    def body(mod: Any, X: Any, w: Any, k: int) -> list[Any]:
        raw = X @ w                                 # (n, c), new each iteration
        live = [raw]                                # pending arrays of this iteration
        out: list[Any] = []
        for kind, u, c, varies, src in reads:
            c = c + 0.1 * k if varies else c        # a constant that changes each iteration
            a = live[src % len(live)]
            b = _UNARY[u](mod, a) * c
            if kind == 0:
                out.append(float(mod.sum(b) / b.shape[0]))
            elif kind == 1:
                out.append(np.asarray(X.T @ b))     # (d, c): the gradient's shape
            elif kind == 2:
                out.append(np.asarray(mod.sum(b, axis=0)))
            elif kind == 3:
                out.append(float(mod.max(b)))
            elif kind == 4:
                b = b - mod.mean(b, axis=0)         # centred: reads what the reads before computed
                out.append(np.asarray(mod.sum(b * b, axis=0)))
            else:
                b /= 3.0                            # an in-place update of a pending array
                out.append(float(mod.sum(b)))
            live.append(b)
        return out
    return body


SEEDS = int(os.environ.get("GPUARRAY_FUZZ_SEEDS", "24"))


def _close(got: list[Any], want: list[Any]) -> None:
    for g, v in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(v, np.float64), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("starts", [False, True], ids=["reads", "uploads"])
@pytest.mark.parametrize("dev", DEVICES)
def test_random_read_loops(dev: str, starts: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``starts``: reads are also started at the weights' upload (``MIN_ELEMENTS`` lowered to these sizes)."""
    ahead: list[int] = []
    started: list[int] = []
    reading, uploaded = speculate.reading, speculate.uploaded

    def counted(order: Any, key: Any, live: Any) -> Any:
        extra = reading(order, key, live)
        ahead.append(len(extra))
        return extra

    def counted_starts(node: Any) -> Any:
        nodes = uploaded(node)
        started.append(len(nodes))
        return nodes
    monkeypatch.setattr(speculate, "reading", counted)
    monkeypatch.setattr(speculate, "uploaded", counted_starts)
    monkeypatch.setattr(speculate, "MIN_ELEMENTS", 0 if starts else speculate.MIN_ELEMENTS)
    errors = speculate.errors
    rng = np.random.default_rng(11)
    n, d, c = 600, 6, 3
    hX = rng.uniform(-1, 1, (n, d)).astype(np.float32)
    device = xp.Device(dev)
    X = xp.asarray(hX, device=device)
    with xp.config(offload="always"):
        for seed in range(SEEDS if dev == "cpu" else SEEDS // 2):
            body = _program(seed)
            counts = {}
            for mode in (True, False):
                speculate.ENABLED = mode
                speculate.clear()
                try:
                    total = 0
                    for k in range(6):
                        hw = rng.uniform(-0.5, 0.5, (d, c)).astype(np.float32)
                        xp.reset_metrics()
                        got = body(xp, X, xp.asarray(hw, device=device), k)
                        total += xp.metrics()["evaluations"]
                        _close(got, body(np, hX.astype(np.float64), hw.astype(np.float64), k))
                    counts[mode] = total
                finally:
                    speculate.ENABLED = True
            assert counts[True] <= counts[False], (seed, counts)
    print("reads computed ahead", sum(ahead), "of", len(ahead), "reads;", sum(map(bool, started)), "started at uploads")
    assert sum(ahead) >= 10, "few programs computed a read ahead"
    assert bool(sum(started)) == (starts and dev != "cpu"), "reads started at uploads where none should be, or none"
    assert speculate.errors == errors, "an error while computing reads ahead"
