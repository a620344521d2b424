"""Index instructions and repeated reads at shifted indices (gpuarray/array_object/indexing.py ``bounded``): a
stencil step reads the previous step at several shifts, so fusing steps would compute each value
once per shift (3^k work for k fused heat steps). Steps are evaluated instead, and the results are
NumPy's."""

from __future__ import annotations

import numpy as np

import gpuarray as xp
from gpuarray.array_object import indexing as _indexing

from .conftest import assert_same


def _heat(mod: object, u: object, steps: int) -> object:
    for _ in range(steps):
        u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])      # type: ignore[index, operator]
    return u


def test_heat_stencil_matches_numpy_without_duplicated_work(device: xp.Device) -> None:
    h = np.sin(np.linspace(0, 3, 3001)).astype(np.float32)
    want = _heat(np, h.copy(), 40)
    u = xp.asarray(h, device=device)
    got = _heat(xp, u, 40)
    node = got._node                                                     # type: ignore[attr-defined]
    pairs, distinct = _indexing._fused_size(node, _indexing.FUSE_LIMIT)
    assert pairs <= _indexing.DUP_RATIO * distinct + _indexing.DUP_SLACK
    assert_same(got, want, rtol=1e-5, atol=1e-6)     # GPUs may contract a + 0.1 * d into an fma


def test_fused_size_counts_each_index_path_once() -> None:
    """A node read at the same index twice costs once; read through two views, twice."""
    x = xp.asarray(np.arange(10, dtype=np.float32), device="cpu")
    e = xp.exp(x * 2)
    same = e * e + e
    pairs, distinct = _indexing._fused_size(same._node, 256)
    assert pairs == distinct
    shifted = e[1:] + e[:-1]
    pairs2, distinct2 = _indexing._fused_size(shifted._node, 256)
    assert pairs2 > distinct2
