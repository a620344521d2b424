"""The Array API ``linalg`` extension (2024.12).

What runs where:

- ``matmul``, ``tensordot``, ``vecdot``, ``matrix_transpose``: the main
  namespace's functions (a tiled matmul kernel; reductions);
- ``diagonal`` is a view; ``trace``, ``outer``, ``cross``, ``vector_norm``,
  ``matrix_norm`` (except ``'nuc'``/2/-2), ``matrix_power`` are built from
  elementwise ops, reductions and matmul, so they run on the array's device
  and fuse;
- ``cholesky``, ``solve``, ``inv``, ``det`` and ``slogdet`` of real float32 / float64
  matrices on a wgpu device run there: blocked Cholesky and LU with partial pivoting
  (``_linalg_lu``, ``providers/wgpu_linalg.py``), one flag read back for the errors;
- ``qr`` of real float32 / float64 matrices on a wgpu device runs there: blocked Householder QR
  (``_linalg_householder``, ``providers/wgpu_qr.py``); ``eigh`` / ``eigvalsh`` of stacks of small
  symmetric matrices (at most 64 rows) too: cyclic Jacobi (``_linalg_jacobi``), and ``svd``
  (reduced, or square) / ``svdvals`` of stacks of small matrices: one-sided Jacobi;
- ``eigvals`` is NumPy's, not the standard's: ``linalg.hqr.eigvals`` (``np.linalg.eigvals``;
  Hessenberg reduction and Francis QR for real matrices of at most 64 rows on a wgpu device);
- ``eigvalsh`` of larger real matrices: tridiagonal reduction and bisection on the device
  (``_linalg_tridiag``), and through it ``svdvals`` (and ``matrix_rank``, ``matrix_norm``'s 2, -2 and
  'nuc') of larger real matrices, as the eigenvalues of ``[[0, A], [A^T, 0]]``;
- ``eigh`` of real matrices of at least ``syevd.MIN_N`` rows: the same reduction keeping its
  reflectors, divide and conquer for the tridiagonal matrix and the back-transformation on the device
  (``_linalg_syevd``), and through the same pieces on ``[[0, A], [A^T, 0]]`` ``svd`` with vectors
  and ``pinv`` of matrices of at least ``gesdd.MIN_K`` (512) rows and columns (``_linalg_gesdd``);
- the other decompositions (``eigh`` of mid-sized matrices, ``svd`` and ``pinv`` of mid-sized ones; those above on the
  ``cpu`` device or for complex input) are one
  ``linalg_<name>`` node each, with no WGSL yet: they run on the host with LAPACK
  (``providers/host_linalg.py``; on a wgpu device each counts in ``metrics()["host_fallbacks"]``) and their results
  stay on the caller's device. Their operand's elementwise prologue still
  fuses into the kernel that feeds them. They are evaluated when called, so
  a singular matrix raises :class:`LinAlgError` at the call, as in NumPy.
  Tall and skinny ``svd`` and ``qr`` (reduced) and ``svdvals`` keep the long dimension
  on the device (Cholesky-QR2, ``_linalg_tall``; LAPACK on the ``n x n``
  factors only).

Integer and boolean inputs of the decompositions and norms are converted to
the device's default floating-point dtype (NumPy converts them to float64).
Complex inputs are accepted everywhere (the decompositions run on the host
with LAPACK's complex routines); eigenvalues of ``eigh``/``eigvalsh``,
singular values, ``slogdet``'s ``logabsdet`` and every norm are real.

>>> import gpuarray as xp
>>> a = xp.asarray([[2.0, 1.0], [1.0, 3.0]], device="cpu")
>>> round(float(xp.linalg.det(a)), 6)
5.0
>>> xp.linalg.eigh(a).eigenvalues.shape
(2,)
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from ..array_object.aliasing import derive
from ..array_object.array import GpuArray, expect_array
from ..array_object.elementwise import apply, astype_node, finish
from ..core import dtypes as _dtypes
from ..core.ops import OPS
from ..graph import views
from ..graph.node import Node, const
from ..graph.shapes import broadcast_shapes, contiguous_strides
from ..namespace.creation import eye
from ..namespace.diag import diagonal_node
from ..namespace.linear_algebra import _as_arrays, matmul, roll_node, tensordot, vecdot, vector_axis
from ..namespace.manipulation import matrix_transpose
from ..namespace.statistical import _axes
from ..namespace.statistical import max as _max
from ..namespace.statistical import min as _min
from ..namespace.statistical import sum as _sum
from . import gesdd as _linalg_gesdd
from . import householder as _linalg_householder
from . import jacobi as _linalg_jacobi
from . import lu as _linalg_lu
from . import syevd as _linalg_syevd
from . import tall as _linalg_tall
from . import tridiag as _linalg_tridiag
from .lu import _host

LinAlgError = np.linalg.LinAlgError


class EighResult(NamedTuple):
    eigenvalues: GpuArray
    eigenvectors: GpuArray


class QRResult(NamedTuple):
    Q: GpuArray
    R: GpuArray


class SlogdetResult(NamedTuple):
    sign: GpuArray
    logabsdet: GpuArray


class SVDResult(NamedTuple):
    U: GpuArray
    S: GpuArray
    Vh: GpuArray


# ---------------------------------------------------------------- helpers
def _arr(x: Any, name: str) -> GpuArray:
    return expect_array(x, f"linalg.{name}")


def _float_node(x: GpuArray) -> Node:
    """``x``'s node in a floating-point dtype (integers and bools go to the device's default float)."""
    dt = x.dtype if x.dtype.kind in "fc" else x.device.default_float
    return astype_node(x._node, dt)


def _matrices(x: Any, name: str, square: bool = False) -> GpuArray:
    x = _arr(x, name)
    if x.ndim < 2:
        raise LinAlgError(f"linalg.{name}: {x.ndim}-dimensional array given; "
                          "the array must be at least two-dimensional")
    if square and x.shape[-1] != x.shape[-2]:
        raise LinAlgError(f"linalg.{name}: the last 2 dimensions of the array must be square; got {x.shape}")
    return x


def _part(packed: Node, offset: int, shape: tuple[int, ...]) -> GpuArray:
    """A contiguous piece of each batch row of ``packed`` (..., P), seen as ``shape``."""
    batch = packed.shape[:-1]
    strides = contiguous_strides(packed.shape)[:-1] + contiguous_strides(shape)
    return GpuArray(views.strided_view(packed, batch + shape, strides, offset))


def _rtol_node(rtol: Any, x: GpuArray, dt: np.dtype) -> tuple[Node, ...]:
    dt = _dtypes.real_dtype(dt)
    if rtol is None:
        return ()
    if isinstance(rtol, GpuArray):
        if rtol.device != x.device:
            raise ValueError(f"rtol is on {rtol.device.name}, x on {x.device.name}")
        batch = x.shape[:-2]
        try:
            ok = rtol.ndim <= len(batch) and broadcast_shapes(rtol.shape, batch) == batch
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"rtol of shape {rtol.shape} does not broadcast to the stack shape {batch}")
        return (views.broadcast_to(astype_node(rtol._node, dt), batch),)
    if _dtypes.scalar_kind(rtol) in ("i", "f") or isinstance(rtol, (np.floating, np.integer)):
        return (const(float(rtol), dt, x.device),)
    raise TypeError(f"rtol must be a real number or an array; got {type(rtol).__name__}")


def _abs2(x: GpuArray) -> GpuArray:
    """``|x|**2``, real: ``x * x`` for real dtypes, ``real**2 + imag**2`` for complex ones."""
    if x.dtype.kind != "c":
        return apply(OPS["multiply"], x, x)
    re, im = apply(OPS["real"], x), apply(OPS["imag"], x)
    return apply(OPS["add"], apply(OPS["multiply"], re, re), apply(OPS["multiply"], im, im))


def _real_part(a: GpuArray) -> GpuArray:
    return apply(OPS["real"], a) if a.dtype.kind == "c" else a


# ---------------------------------------------------------------- views and device kernels
def diagonal(x: GpuArray, /, *, offset: int = 0) -> GpuArray:
    """The ``offset``-th diagonal of each matrix (last two axes), as a view.

    >>> import gpuarray as xp
    >>> xp.linalg.diagonal(xp.reshape(xp.arange(9, device="cpu"), (3, 3)), offset=1).tolist()
    [1, 5]
    """
    x = _matrices(x, "diagonal")
    offset = operator.index(offset)
    return derive(x, lambda node: diagonal_node(node, offset), writeable=False)


def trace(x: GpuArray, /, *, offset: int = 0, dtype: Any = None) -> GpuArray:
    """Sum of the ``offset``-th diagonal of each matrix (integers sum in the default integer dtype)."""
    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: GpuArray, x2: GpuArray, /) -> GpuArray:
    """Outer product of two vectors: ``x1[:, None] * x2[None, :]``."""
    x1, x2 = _as_arrays(x1, x2, "linalg.outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"linalg.outer: both inputs must be 1-dimensional; got shapes {x1.shape} and {x2.shape}")
    op = OPS["logical_and"] if x1.dtype == x2.dtype == _dtypes.bool_ else OPS["multiply"]
    return apply(op, x1[:, None], x2[None, :])


def cross(x1: GpuArray, x2: GpuArray, /, *, axis: int = -1) -> GpuArray:
    """Cross product of 3-element vectors along ``axis``; other dimensions broadcast.

    Computed as ``roll(a, -1) * roll(b, -2) - roll(a, -2) * roll(b, -1)`` where the rolls are
    views, so it is one elementwise kernel.
    """
    x1, x2 = _as_arrays(x1, x2, "linalg.cross")
    if x1.dtype == _dtypes.bool_ or x2.dtype == _dtypes.bool_:
        raise TypeError("Only numeric dtypes are allowed in linalg.cross; got bool.")
    axis = vector_axis(x1, x2, axis, "linalg.cross")
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"linalg.cross: both inputs must have size 3 along axis {axis}; "
                         f"got shapes {x1.shape} and {x2.shape}")
    shape = broadcast_shapes(x1.shape, x2.shape)
    dt = _dtypes.result_type(x1, x2)
    a = views.broadcast_to(astype_node(x1._node, dt), shape)
    b = views.broadcast_to(astype_node(x2._node, dt), shape)
    ax = axis % len(shape)
    a1, a2 = GpuArray(roll_node(a, -1, ax)), GpuArray(roll_node(a, -2, ax))
    b1, b2 = GpuArray(roll_node(b, -1, ax)), GpuArray(roll_node(b, -2, ax))
    mul, sub = OPS["multiply"], OPS["subtract"]
    return apply(sub, apply(mul, a1, b2), apply(mul, a2, b1))


def vector_norm(x: GpuArray, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: int | float = 2) -> GpuArray:  # noqa: A002 - Array API name
    """Vector p-norm over ``axis`` (all axes by default): ``ord`` in 1, 2, inf, -inf, 0 or any p.

    >>> import gpuarray as xp
    >>> float(xp.linalg.vector_norm(xp.asarray([3.0, 4.0], device="cpu")))
    5.0
    """
    x = _arr(x, "vector_norm")
    xf = GpuArray(_float_node(x))
    axes = _axes(xf, axis, "vector_norm")
    if isinstance(ord, bool) or not isinstance(ord, (int, float, np.integer, np.floating)):
        raise ValueError(f"linalg.vector_norm: ord must be a real number; got {ord!r}")
    ord = float(ord)
    ab = apply(OPS["abs"], xf)
    if ord == 2:
        return apply(OPS["sqrt"], _sum(_abs2(xf), axis=axes, keepdims=keepdims))
    if ord == 1:
        return _sum(ab, axis=axes, keepdims=keepdims)
    if ord == math.inf:
        return _max(ab, axis=axes, keepdims=keepdims)
    if ord == -math.inf:
        return _min(ab, axis=axes, keepdims=keepdims)
    if ord == 0:
        nz = apply(OPS["not_equal"], xf, 0.0)
        return _sum(GpuArray(astype_node(nz._node, ab.dtype)), axis=axes, keepdims=keepdims)
    if math.isnan(ord):
        raise ValueError("linalg.vector_norm: ord must not be NaN")
    s = _sum(apply(OPS["pow"], ab, ord), axis=axes, keepdims=keepdims)
    return apply(OPS["pow"], s, 1.0 / ord)


def matrix_norm(x: GpuArray, /, *, keepdims: bool = False,
                ord: int | float | str | None = "fro") -> GpuArray:  # noqa: A002 - Array API name
    """Matrix norm of each matrix (last two axes): 'fro', 'nuc', 1, -1, 2, -2, inf, -inf.

    'nuc', 2 and -2 need singular values (``svdvals``: on the device for real matrices, except tall
    ones that Cholesky-QR declines and small single matrices of the host's calibration).
    """
    x = _matrices(x, "matrix_norm")
    xf = GpuArray(_float_node(x))
    if ord is None:
        ord = "fro"
    if ord == "fro":
        r = apply(OPS["sqrt"], _sum(_abs2(xf), axis=(-2, -1)))
    elif ord in ("nuc", 2, -2):
        s = svdvals(xf)
        r = _sum(s, axis=-1) if ord == "nuc" else (_max if ord == 2 else _min)(s, axis=-1)
    elif not isinstance(ord, str) and ord in (1, -1, math.inf, -math.inf):
        ab = apply(OPS["abs"], xf)
        sums = _sum(ab, axis=-2 if abs(ord) == 1 else -1)
        r = (_max if ord > 0 else _min)(sums, axis=-1)
    else:
        raise ValueError(f"linalg.matrix_norm: invalid norm order {ord!r}; expected 'fro', 'nuc', "
                         "1, -1, 2, -2, inf or -inf")
    if keepdims:
        r = finish(views.reshape(r._node, r.shape + (1, 1)))
    return r


def matrix_power(x: GpuArray, n: int, /) -> GpuArray:
    """``x`` raised to the integer power ``n`` by repeated squaring (``n < 0`` inverts first)."""
    x = _matrices(x, "matrix_power", square=True)
    n = operator.index(n)
    if n == 0:
        ident = eye(x.shape[-1], dtype=x.dtype, device=x.device)
        return finish(views.broadcast_to(ident._node, x.shape))
    if n < 0:
        x = inv(x)
        n = -n
    result: GpuArray | None = None
    base = x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    assert result is not None
    return result


# ---------------------------------------------------------------- decompositions (host)
def det(x: GpuArray, /) -> GpuArray:
    """Determinant of each square matrix."""
    x = _matrices(x, "det", square=True)
    node = _float_node(x)
    if _linalg_lu.applies(x, node.dtype):
        return _linalg_lu.det(node)
    return GpuArray(_host("det", (node,), node.dtype, x.shape[:-2]))


def slogdet(x: GpuArray, /) -> SlogdetResult:
    """Sign and natural log of the absolute determinant of each square matrix."""
    x = _matrices(x, "slogdet", square=True)
    node = _float_node(x)
    if _linalg_lu.applies(x, node.dtype):
        return SlogdetResult(*_linalg_lu.slogdet(node))
    packed = _host("slogdet", (node,), node.dtype, x.shape[:-2] + (2,))
    return SlogdetResult(_part(packed, 0, ()), _real_part(_part(packed, 1, ())))


def inv(x: GpuArray, /) -> GpuArray:
    """Inverse of each square matrix; raises LinAlgError for a singular one."""
    x = _matrices(x, "inv", square=True)
    node = _float_node(x)
    if _linalg_lu.applies(x, node.dtype):
        return _linalg_lu.inv(node)
    return GpuArray(_host("inv", (node,), node.dtype, x.shape))


def solve(x1: GpuArray, x2: GpuArray, /) -> GpuArray:
    """Solve ``x1 @ x = x2``: ``x2`` is one vector when 1-D, else a stack of matrices (batch broadcast)."""
    x1, x2 = _as_arrays(x1, x2, "linalg.solve")
    x1 = _matrices(x1, "solve", square=True)
    m = x1.shape[-1]
    dt = _dtypes.result_type(x1, x2)
    dt = dt if dt.kind in "fc" else x1.device.default_float
    if x2.ndim == 0:
        raise ValueError("linalg.solve: x2 must have at least one dimension")
    vector = x2.ndim == 1
    if (x2.shape[0] if vector else x2.shape[-2]) != m:
        raise ValueError(f"linalg.solve: x2 of shape {x2.shape} does not match x1 of shape {x1.shape}")
    if vector:
        shape = x1.shape[:-1]
    else:
        try:
            shape = broadcast_shapes(x1.shape[:-2], x2.shape[:-2]) + x2.shape[-2:]
        except ValueError:
            raise ValueError(f"linalg.solve: batch dimensions of {x1.shape} and {x2.shape} do not broadcast") from None
    if _linalg_lu.applies(x1, dt):
        return _linalg_lu.solve(astype_node(x1._node, dt), astype_node(x2._node, dt), vector, shape)
    return GpuArray(_host("solve", (astype_node(x1._node, dt), astype_node(x2._node, dt)), dt, shape, (vector,)))


def cholesky(x: GpuArray, /, *, upper: bool = False) -> GpuArray:
    """Cholesky factor of each symmetric positive-definite matrix (lower, or upper with ``upper=True``)."""
    x = _matrices(x, "cholesky", square=True)
    node = _float_node(x)
    if _linalg_lu.applies(x, node.dtype):
        return _linalg_lu.cholesky(node, bool(upper))
    return GpuArray(_host("cholesky", (node,), node.dtype, x.shape, (bool(upper),)))


def qr(x: GpuArray, /, *, mode: str = "reduced") -> QRResult:
    """QR factorization of each matrix; ``mode`` is 'reduced' or 'complete'."""
    x = _matrices(x, "qr")
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete'; got {mode!r}")
    if mode == "reduced" and _linalg_tall.applies(x, True):
        got = _linalg_tall.qr_tall(x)
        if got is not None:
            return QRResult(*got)
    node = _float_node(x)
    if _linalg_lu.applies(x, node.dtype):
        got = _linalg_householder.qr(node, mode)
        if got is not None:
            return QRResult(*got)
    m, n = x.shape[-2:]
    k = min(m, n) if mode == "reduced" else m
    packed = _host("qr", (node,), node.dtype, x.shape[:-2] + (m * k + k * n,), (mode,))
    return QRResult(_part(packed, 0, (m, k)), _part(packed, m * k, (k, n)))


def eigh(x: GpuArray, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of each symmetric matrix (its lower triangle is used)."""
    x = _matrices(x, "eigh", square=True)
    node = _float_node(x)
    n = x.shape[-1]
    if _linalg_lu.applies(x, node.dtype) and _linalg_jacobi.applies(n) and 0 not in x.shape:
        got = _linalg_jacobi.eigh(node, True)
        if got is not None and got[1] is not None:
            return EighResult(got[0], got[1])
    elif _linalg_lu.applies(x, node.dtype) and _linalg_syevd.applies(x.shape):
        vecs = _linalg_syevd.eigh(node)
        if vecs is not None:
            return EighResult(*vecs)
    # the values and the vectors as arrays of their own (NumPy's are), not views of one packed array: an update
    # of the vectors in place (scikit-learn's svd_flip, ``v *= signs``) is then no write into a region
    packed = views.reshape(_host("eigh", (node,), node.dtype, x.shape[:-2] + (n + 1, n)), x.shape[:-2] + ((n + 1) * n,))
    return EighResult(_real_part(_part(packed, 0, (n,))), _part(packed, n, (n, n)))


def eigvalsh(x: GpuArray, /) -> GpuArray:
    """Eigenvalues (ascending) of each symmetric matrix."""
    x = _matrices(x, "eigvalsh", square=True)
    node = _float_node(x)
    if _linalg_lu.applies(x, node.dtype) and _linalg_jacobi.applies(x.shape[-1]) and 0 not in x.shape:
        got = _linalg_jacobi.eigh(node, False)
        if got is not None:
            return got[0]
    elif _linalg_lu.applies(x, node.dtype) and _linalg_tridiag.applies(x.shape) and 0 not in x.shape:
        vals = _linalg_tridiag.eigvalsh(node)
        if vals is not None:
            return vals
    return GpuArray(_host("eigvalsh", (node,), _dtypes.real_dtype(node.dtype), x.shape[:-1]))


def svd(x: GpuArray, /, *, full_matrices: bool = True) -> SVDResult:
    """Singular value decomposition ``x = U @ diag(S) @ Vh`` of each matrix (tall and skinny
    matrices with the long dimension on the device: ``_linalg_tall``)."""
    x = _matrices(x, "svd")
    if _linalg_tall.applies(x, not full_matrices):
        got = _linalg_tall.svd_tall(x, True)
        if got is None:
            got = _linalg_tall.svd_householder(x, True)
        if isinstance(got, tuple):
            return SVDResult(*got)
    node = _float_node(x)
    m, n = x.shape[-2:]
    if (_linalg_lu.applies(x, node.dtype) and _linalg_jacobi.svd_applies(m, n) and (m == n or not full_matrices)
            and 0 not in x.shape):
        got = _linalg_jacobi.svd(node, True)
        if isinstance(got, tuple):
            return SVDResult(*got)
    elif _linalg_lu.applies(x, node.dtype) and _linalg_gesdd.applies(x.shape):
        big = _linalg_gesdd.svd(GpuArray(node), eigh, bool(full_matrices))
        if big is not None:
            return SVDResult(*big)
    k = min(m, n)
    um, vn = (m, n) if full_matrices else (k, k)
    size = m * um + k + vn * n
    packed = _host("svd", (node,), node.dtype, x.shape[:-2] + (size,), (bool(full_matrices),))
    return SVDResult(_part(packed, 0, (m, um)), _real_part(_part(packed, m * um, (k,))),
                     _part(packed, m * um + k, (vn, n)))


def svdvals(x: GpuArray, /) -> GpuArray:
    """Singular values of each matrix, in descending order."""
    x = _matrices(x, "svdvals")
    if _linalg_tall.applies(x, True):
        got = _linalg_tall.svd_tall(x, False)
        if got is None:
            got = _linalg_tall.svd_householder(x, False)
        if isinstance(got, GpuArray):
            return got
    node = _float_node(x)
    if _linalg_lu.applies(x, node.dtype) and _linalg_jacobi.svd_applies(*x.shape[-2:]) and 0 not in x.shape:
        got = _linalg_jacobi.svd(node, False)
        if isinstance(got, GpuArray):
            return got
    elif _linalg_lu.applies(x, node.dtype) and _linalg_tridiag.svd_applies(x.shape) and 0 not in x.shape:
        got = _linalg_tridiag.svdvals(GpuArray(node))
        if got is not None:
            return got
    return GpuArray(_host("svdvals", (node,), _dtypes.real_dtype(node.dtype), x.shape[:-2] + (min(x.shape[-2:]),)))


def _small_svd(x: GpuArray, node: Node, rtol: Any, vectors: bool = True) -> tuple[Any, ...] | None:
    """``svd`` (``vectors``) or the singular values of real matrices on the device (small ones by
    one-sided Jacobi; larger values through ``linalg.tridiag.svdvals``, larger vectors through
    ``linalg.gesdd``) and the relative cutoff
    (``rtol``, default ``max(M, N) * eps``), for ``pinv`` and ``matrix_rank``; None: the host's way."""
    m, n = x.shape[-2:]
    if not (_linalg_lu.applies(x, node.dtype) and 0 not in x.shape
            and (rtol is None or type(rtol) in (int, float) or isinstance(rtol, (np.integer, np.floating)))):
        return None
    if _linalg_jacobi.svd_applies(m, n):
        got: Any = _linalg_jacobi.svd(node, vectors)
    elif not vectors and _linalg_tridiag.svd_applies(x.shape):
        got = _linalg_tridiag.svdvals(GpuArray(node))
    elif vectors and _linalg_gesdd.applies(x.shape):
        got = _linalg_gesdd.svd(GpuArray(node), eigh)
    else:
        return None
    if got is None:
        return None
    r = max(m, n) * float(np.finfo(node.dtype).eps) if rtol is None else float(rtol)
    return (*got, r) if isinstance(got, tuple) else (got, r)


def pinv(x: GpuArray, /, *, rtol: float | GpuArray | None = None) -> GpuArray:
    """Moore-Penrose pseudo-inverse; singular values at most ``rtol`` times the largest are dropped
    (default ``rtol``: ``max(M, N) * eps``). Real matrices on a wgpu device that Jacobi or
    ``linalg.gesdd`` takes: from their svd there (``V diag(1 / s) U^T``), as NumPy computes it."""
    x = _matrices(x, "pinv")
    node = _float_node(x)
    small = _small_svd(x, node, rtol)
    if small is not None:
        u, s, vh, r = small
        big = apply(OPS["greater"], s, apply(OPS["multiply"], _max(s, axis=-1, keepdims=True), r))
        sinv = apply(OPS["where"], big, apply(OPS["divide"], 1.0, s), 0.0)
        return matmul(apply(OPS["multiply"], matrix_transpose(vh), sinv[..., None, :]), matrix_transpose(u))
    extra = _rtol_node(rtol, x, node.dtype)
    return GpuArray(_host("pinv", (node, *extra), node.dtype, x.shape[:-2] + (x.shape[-1], x.shape[-2])))


def matrix_rank(x: GpuArray, /, *, rtol: float | GpuArray | None = None) -> GpuArray:
    """Number of singular values above ``rtol`` times the largest (default ``max(M, N) * eps``)."""
    x = _matrices(x, "matrix_rank")
    node = _float_node(x)
    small = _small_svd(x, node, rtol, vectors=False)
    if small is not None:
        s, r = small
        big = apply(OPS["greater"], s, apply(OPS["multiply"], _max(s, axis=-1, keepdims=True), r))
        return _sum(GpuArray(astype_node(big._node, x.device.default_int)), axis=-1)
    extra = _rtol_node(rtol, x, node.dtype)
    return GpuArray(_host("matrix_rank", (node, *extra), x.device.default_int, x.shape[:-2]))


__all__ = [
    "LinAlgError", "EighResult", "QRResult", "SlogdetResult", "SVDResult",
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]
