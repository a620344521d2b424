"""``eigh`` with eigenvectors of real symmetric matrices (float32 / float64) too large for Jacobi, on a
wgpu device (LAPACK's ``dsyevd`` as MAGMA splits it): Householder reduction to tridiagonal form
keeping its reflectors (``linalg.tridiag.reduce``), the tridiagonal matrix's eigenvalues and vectors by
divide and conquer (``linalg.stedc``: its merges on the device, ``O(n)`` bookkeeping on the host), and
the vectors carried back through the reflectors (``linalg.tridiag.back_transform``: block reflectors as
matrix products). Only ``d`` and ``e`` (``2 n`` values a matrix) and, a divide-and-conquer level at a
time, its eigenvalues and ``z`` rows reach the host. Eigenvectors are unique up to sign (and within
eigenspaces of repeated eigenvalues); these are not LAPACK's signs.

Matrices of fewer than ``MIN_N`` rows stay with LAPACK on the host, which is faster there (H200:
docs/benchmarks.md); input the reduction flags (not finite, columns LAPACK would rescale) too.

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray(np.diag(np.arange(3.0, dtype=np.float32)), device="wgpu:0")
>>> w, v = eigh(a._node)
>>> np.round(np.asarray(w), 5).tolist(), np.round(np.abs(np.asarray(v)), 5).tolist()
([0.0, 1.0, 2.0], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..array_object.array import GpuArray
from ..graph.node import Node
from ..namespace.creation import asarray
from ..namespace.manipulation import reshape, stack
from . import stedc, tridiag

MIN_N = 1024            # below, LAPACK on the host is faster for one matrix (H200: docs/benchmarks.md)
MIN_STACKED = 4         # ... and from MIN_N / 2 rows for stacks of this many (4 x 512 x 512: 1.5x the host)


def applies(shape: tuple[int, ...]) -> bool:
    """Whether ``eigh`` of a stack of ``shape`` takes the device path (the adapter may still decline).

    >>> applies((1024, 1024)), applies((768, 768)), applies((4, 512, 512))
    (True, False, True)
    """
    n = shape[-1]
    if 0 in shape or n < 2:
        return False
    return n >= MIN_N or (n >= MIN_N // 2 and math.prod(shape[:-2]) >= MIN_STACKED)


def tridiagonal_eigen(red: tridiag.Reduced, device: Any) -> tuple[np.ndarray, GpuArray] | None:
    """The eigenvalues (ascending, host: ``(..., n)``) and eigenvectors (columns, ``device``: ``(..., n,
    n)``) of each tridiagonal matrix of ``red`` by divide and conquer, a matrix at a time (``d`` and
    ``e`` of all of them in one read), or None where the leaves' kernel declined one."""
    batch, n = red.d.shape[:-1], red.d.shape[-1]
    count = math.prod(batch)
    de = np.asarray(red.de).reshape(count, 2 * n - 1)
    ws, zs = [], []
    for i in range(count):
        got = stedc.stedc(de[i, :n], de[i, n:], device)
        if got is None:
            return None
        ws.append(got[0])
        zs.append(got[1])
    return np.stack(ws).reshape(batch + (n,)), zs[0] if not batch else reshape(stack(zs), batch + (n, n))


def eigh(a: Node) -> tuple[GpuArray, GpuArray] | None:
    """(eigenvalues ascending, eigenvectors in columns) of each symmetric matrix of ``a`` (its lower
    triangle), or None where LAPACK must take them."""
    red = tridiag.reduce(a)
    got = None if red is None else tridiagonal_eigen(red, a.device)
    if red is None or got is None:
        return None
    w, z = got
    return asarray(w, device=a.device), tridiag.back_transform(red, z)
