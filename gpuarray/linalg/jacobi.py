"""``eigh`` and ``eigvalsh`` of small real symmetric matrices and stacks of them (float32 / float64, at
most ``wgpu_eigh.MAX_N`` rows) on a wgpu device: the cyclic Jacobi method, one workgroup a matrix, one
dispatch for the stack (``providers/wgpu_eigh.py``; a single matrix with vectors takes the one-sided
method on a shifted copy, ``render/wgsl_jacobi1.py``); ``svd`` (reduced, or square) and ``svdvals``
of small matrices and stacks (at most ``MAX_N`` columns or rows, ``SVD_MAX_ROWS`` the other way) by
the one-sided Jacobi method the same way (``linalg_gesvj``).

One node, ``linalg_syevj`` (attrs ``(vectors,)``), holds per matrix the eigenvalues ascending (then
the eigenvectors, as LAPACK lays them out) and a flag after the last matrix: raised for input that
is not finite or a matrix that did not converge, which LAPACK then decomposes on the host (its
result, NaN included). The node is evaluated and submitted at the call and its flag read before the
next evaluation or read of anything (``runtime/guards.py``), so the device computes while the program
records what follows; where the flag is raised, LAPACK's result in the same layout replaces the
node's contents in place before any of it is read (``residency.Data.replace``; a host fallback in
``metrics()`` and ``planner.decisions()`` as before). Where LAPACK itself raises (NumPy's "Eigenvalues
did not converge" for most matrices with a NaN), that ``LinAlgError`` comes at that next evaluation or
read, once, and the results hold NaN. ``DEFER = False`` (``GPUARRAY_LINALG_DEFER=0``) reads the flag at
the call, where NumPy raises. ``svd``'s node (``linalg_gesvj``) reads its flag at the call: LAPACK raises
``LinAlgError`` for what it flags, and NumPy raises it there.

Eigenvectors and singular vectors are unique up to sign (and within eigenspaces of repeated
eigenvalues); Jacobi's signs are not LAPACK's (nor are cuSOLVER's, which CuPy and PyTorch return): a
single matrix's eigenvectors each have their largest component positive, the stacks' and the singular
vectors' signs are the rotations' own.

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray(np.array([[[2.0, 1.0], [1.0, 2.0]]], np.float32), device="wgpu:0")
>>> w, v = eigh(a._node, True)
>>> np.round(np.asarray(w), 5).tolist()
[[1.0, 3.0]]
"""

from __future__ import annotations

import math
import os

import numpy as np

from ..array_object.array import GpuArray
from ..core import dtypes as _dtypes
from ..graph import views
from ..graph.node import Node
from ..graph.shapes import contiguous_strides
from ..providers.wgpu_eigh import MAX_N
from ..runtime import guards
from .lu import _host, _packed, flagged

DEFER = os.environ.get("GPUARRAY_LINALG_DEFER", "1") != "0"     # the flag read before the next evaluation or read

SVD_MAX_ROWS = 1024     # svd of matrices whose longer side is at most this (and shorter at most MAX_N)


def applies(n: int) -> bool:
    """Whether matrices of ``n`` rows take the Jacobi kernel (the adapter may still decline them)."""
    return 0 < n <= MAX_N


def svd_applies(m: int, n: int) -> bool:
    """Whether ``m x n`` matrices take the one-sided Jacobi svd (the adapter may still decline them)."""
    return 0 < min(m, n) <= MAX_N and max(m, n) <= SVD_MAX_ROWS


def eigh(a: Node, vectors: bool) -> tuple[GpuArray, GpuArray | None] | None:
    """(eigenvalues, eigenvectors or None) of each matrix of ``a``, or None where LAPACK must take it."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    per = (n + 1) * n if vectors else n
    packed = _checked_syevj(a, vectors, math.prod(batch) * per + 1)
    if packed is None:
        return None
    bst = tuple(s * per for s in contiguous_strides(batch))
    w = GpuArray(views.strided_view(packed, batch + (n,), bst + (1,), 0))
    if not vectors:
        return w, None
    return w, GpuArray(views.strided_view(packed, batch + (n, n), bst + (n, 1), n))


def svd(a: Node, vectors: bool) -> tuple[GpuArray, GpuArray, GpuArray] | GpuArray | None:
    """Reduced ``(U, S, Vh)`` (or ``S``) of each small matrix of ``a`` by one-sided Jacobi, or None where
    LAPACK must take it (non-finite input, no convergence, or with vectors a rank-deficient matrix)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    per = m * k + k + k * n if vectors else k
    packed = _packed("gesvj", (a,), math.prod(batch) * per + 1, (bool(vectors),))
    if flagged(packed):             # read now: LAPACK raises for the non-finite input the flag marks, and
        return None                 # NumPy's LinAlgError belongs at the call
    bst = tuple(s * per for s in contiguous_strides(batch))
    if not vectors:
        return GpuArray(views.strided_view(packed, batch + (k,), bst + (1,), 0))
    return (GpuArray(views.strided_view(packed, batch + (m, k), bst + (k, 1), 0)),
            GpuArray(views.strided_view(packed, batch + (k,), bst + (1,), m * k)),
            GpuArray(views.strided_view(packed, batch + (k, n), bst + (n, 1), m * k + k)))


def _checked_syevj(a: Node, vectors: bool, size: int) -> Node | None:
    """The ``linalg_syevj`` node of ``a``, evaluated and submitted now. Its flag is read before the next
    evaluation or read (``guards.defer``); where raised, LAPACK's ``linalg_eigh`` / ``linalg_eigvalsh`` of
    ``a`` (the same layout without the flag) replaces its contents. Without ``DEFER`` the flag is read now,
    and None returned where it is raised (the caller asks LAPACK). (``svd`` reads its flag at the call:
    LAPACK raises ``LinAlgError`` for what it flags.)"""
    attrs = (bool(vectors),)
    if not DEFER:
        packed = _packed("syevj", (a,), size, attrs)
        return None if flagged(packed) else packed
    packed = _packed("syevj", (a,), size, attrs, flag=False)
    a.device.provider.flush()       # the device starts now, while the program records what follows

    def check() -> None:
        if not flagged(packed):
            return
        n = a.shape[-1]
        name = "eigh" if vectors else "eigvalsh"
        try:
            lapack = _host(name, (a,), a.dtype if vectors else _dtypes.real_dtype(a.dtype),
                           a.shape[:-2] + ((n + 1, n) if vectors else (n,)))
        except np.linalg.LinAlgError as exc:       # raised once, here; the results read as NaN from now on
            packed.data.replace(np.full(packed.shape, np.nan, packed.dtype))
            raise np.linalg.LinAlgError(
                f"{exc}: linalg.{name} of a matrix that is not finite, called before this evaluation or read "
                "(gpuarray checks its result here, not at the call; its results hold NaN)") from exc
        values = np.zeros(packed.shape, packed.dtype)
        values[:-1] = np.asarray(GpuArray(lapack)).reshape(-1)
        packed.data.replace(values)

    guards.defer(check)
    return packed
