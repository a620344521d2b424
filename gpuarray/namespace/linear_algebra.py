"""Linear algebra functions of the main namespace: matmul, tensordot, vecdot, matrix_transpose.

``matmul`` is one ``matmul`` node (a breaker with its own tiled kernel). Its
operands are views and elementwise expressions of the inputs, computed inside
the matmul kernel as a fused prologue: ``a.T @ (b * 2)`` reads ``a`` and
``b`` in place. ``tensordot`` is a matmul of permuted and reshaped operands,
``vecdot`` a sum-reduction with the product as its prologue.

>>> import gpuarray as xp
>>> a = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device="cpu")
>>> (a @ a).tolist()
[[7.0, 10.0], [15.0, 22.0]]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.exceptions import AxisError

from ..array_object.array import GpuArray
from ..array_object.bounds import concat_nodes
from ..array_object.elementwise import apply, astype_node, common_device, finish
from ..array_object.hooks import register
from ..core import dtypes as _dtypes
from ..core.ops import OPS
from ..graph import views
from ..graph.node import Node, const, make
from ..graph.shapes import Shape, broadcast_shapes, contiguous_strides
from .creation import asarray
from .manipulation import matrix_transpose
from .matmul_blocks import blocked_matmul
from .reduce_blocks import alone
from .statistical import any as any_
from .statistical import sum as sum_


def _as_arrays(x1: Any, x2: Any, name: str) -> tuple[GpuArray, GpuArray]:
    """Both operands as GpuArrays on one device (NumPy arrays join the other operand's device)."""
    if not isinstance(x1, GpuArray) and not isinstance(x2, GpuArray):
        raise TypeError(f"{name}: expected GpuArrays; got {type(x1).__name__} and {type(x2).__name__}")
    out = []
    dev = (x1 if isinstance(x1, GpuArray) else x2).device
    for x in (x1, x2):
        if isinstance(x, (np.ndarray, np.generic)):
            x = asarray(x, device=dev)
        if not isinstance(x, GpuArray):
            raise TypeError(f"{name}: expected arrays; got {type(x).__name__} (scalars are not allowed)")
        out.append(x)
    common_device(out, name)
    return out[0], out[1]


def matmul_node(a: Node, b: Node, dtype: np.dtype, out_shape: Shape | None = None) -> Node:
    """A ``matmul`` node for ``a`` (..., M, K) times ``b`` (..., K, N); batch dims broadcast.

    ``out_shape`` may drop the unit M or N of a 1-D operand (it has the same layout). Products
    with a vector operand (``N == 1`` or ``M == 1``) are matmul nodes too: the wgpu provider's
    GEMV kernels read the matrix once (``providers/wgpu_matmul_classes.gemv_for``). Bool products are
    computed as counts in uint32 and compared with zero.
    """
    cdt = _dtypes.uint32 if dtype == _dtypes.bool_ else dtype
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = views.broadcast_to(astype_node(a, cdt), batch + a.shape[-2:])
    b = views.broadcast_to(astype_node(b, cdt), batch + b.shape[-2:])
    full = batch + (a.shape[-2], b.shape[-1])
    shape = full if out_shape is None else tuple(out_shape)
    assert math.prod(shape) == math.prod(full)
    if cdt.kind == "c" and not a.device.provider.host_memory:
        if 0 in full or not a.shape[-1]:        # nothing to multiply: zeros (or no elements)
            return views.broadcast_to(const(0, cdt, a.device), shape)
        return views.reshape(_complex_product(a, b, cdt), shape)
    node = (blocked_matmul(a, b, cdt, shape) if not batch else None) or make("matmul", (a, b), cdt, shape, (),
                                                                           a.device)
    if dtype == _dtypes.bool_:
        node = make("not_equal", (node, const(0, cdt, node.device)), _dtypes.bool_, shape)
    return node


# the smallest M, K and N of a complex product whose real operands are computed apart (below)
COMPLEX_APART = 512


def _complex_product(a: Node, b: Node, dtype: np.dtype) -> Node:
    """``a @ b`` of complex ``a`` (..., M, K) and ``b`` (..., K, N) as one real product, for devices
    without a complex matmul kernel (the GPUs: WGSL has no complex type):

        [Ar, Ai] @ [[Br, Bi], [-Bi, Br]] = [Ar Br - Ai Bi, Ar Bi + Ai Br] = [Cr, Ci]   (..., M, 2N)

    four real multiply-adds for each complex one, as complex arithmetic takes, in the real kernels (the
    parts are read through their prologues); the halves joined as ``Cr + i Ci`` by ``setpart`` (no
    arithmetic on them, so infinities and signed zeros come out as each sum gives them)."""
    rdt = _dtypes.real_dtype(dtype)
    ax = len(a.shape) - 1
    ar, ai = make("real", (a,), rdt, a.shape), make("imag", (a,), rdt, a.shape)
    br, bi = make("real", (b,), rdt, b.shape), make("imag", (b,), rdt, b.shape)
    lhs = concat_nodes([ar, ai], ax)
    rhs = concat_nodes([concat_nodes([br, bi], ax), concat_nodes([make("negative", (bi,), rdt, b.shape), br], ax)],
                       ax - 1)
    if min(a.shape[-2], a.shape[-1], b.shape[-1]) >= COMPLEX_APART:
        # a large product computes its real operands first (two copies, kernels of their own): the product
        # then reads them as plain arrays (vec4 loads) instead of through the parts' joins (H200, complex64,
        # ms: 2048^3 3.56 -> 2.67, 4096^3 26.6 -> 16.5; cuBLAS 1.31, 10.2); narrow ones keep the prologue
        # ((2^18 x 64)^H (2^18 x 64) 1.14 against 1.49 apart)
        lhs, rhs = alone(lhs), alone(rhs)
    parts = matmul_node(lhs, rhs, rdt)                  # (..., M, 2N)
    shape = parts.shape[:-1] + (b.shape[-1],)
    strides = contiguous_strides(parts.shape)
    cr = views.strided_view(parts, shape, strides, 0)
    ci = views.strided_view(parts, shape, strides, b.shape[-1])
    return make("setpart", (astype_node(cr, dtype), ci), dtype, shape, (1,))


def matmul(x1: GpuArray, x2: GpuArray, /) -> GpuArray:
    """Matrix product with NumPy's rules: 1-D operands are promoted, batch dimensions broadcast.

    >>> import gpuarray as xp
    >>> v = xp.asarray([1, 2, 3], device="cpu")
    >>> int(xp.matmul(v, v))
    14
    """
    x1, x2 = _as_arrays(x1, x2, "matmul")
    for i, x in enumerate((x1, x2)):
        if x.ndim == 0:
            raise ValueError(f"matmul: input operand {i} does not have enough dimensions "
                             "(0-d arrays are not allowed; use multiply)")
    dt = _dtypes.result_type(x1, x2)
    a = views.reshape(x1._node, (1,) + x1.shape) if x1.ndim == 1 else x1._node
    b = views.reshape(x2._node, x2.shape + (1,)) if x2.ndim == 1 else x2._node
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {b.shape[-2]} is different from {a.shape[-1]}); shapes {x1.shape} and {x2.shape}")
    try:
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: batch dimensions of shapes {x1.shape} and {x2.shape} "
                         "cannot be broadcast together") from None
    shape = batch + ((a.shape[-2],) if x1.ndim > 1 else ()) + ((b.shape[-1],) if x2.ndim > 1 else ())
    return finish(matmul_node(a, b, dt, shape))


def _norm_axes(axes: Sequence[int], ndim: int, name: str) -> list[int]:
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise AxisError(f"tensordot: axis {a} is out of bounds for {name} of dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"tensordot: repeated axis in {name}'s axes {tuple(axes)}")
    return out


def tensordot(x1: GpuArray, x2: GpuArray, /, *,
              axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> GpuArray:
    """Sum of products over ``axes`` (the last N of ``x1`` with the first N of ``x2``, or two axis lists).

    >>> import gpuarray as xp
    >>> a = xp.ones((2, 3, 4), device="cpu")
    >>> xp.tensordot(a, xp.ones((3, 4, 5), device="cpu"), axes=2).shape
    (2, 5)
    """
    x1, x2 = _as_arrays(x1, x2, "tensordot")
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if n < 0:
            raise ValueError(f"tensordot: axes must be a non-negative integer; got {n}")
        if n > x1.ndim or n > x2.ndim:
            raise ValueError(f"tensordot: axes={n} exceeds the dimensions of shapes {x1.shape} and {x2.shape}")
        ax1, ax2 = list(range(x1.ndim - n, x1.ndim)), list(range(n))
    else:
        s1: Any
        s2: Any
        try:
            s1, s2 = axes
        except (TypeError, ValueError):
            raise ValueError("tensordot: axes must be an integer or a pair of axis sequences") from None
        s1 = [s1] if isinstance(s1, (int, np.integer)) else list(s1)
        s2 = [s2] if isinstance(s2, (int, np.integer)) else list(s2)
        if len(s1) != len(s2):
            raise ValueError(f"tensordot: axes lists differ in length: {len(s1)} and {len(s2)}")
        ax1, ax2 = _norm_axes(s1, x1.ndim, "x1"), _norm_axes(s2, x2.ndim, "x2")
    for i, j in zip(ax1, ax2, strict=True):
        if x1.shape[i] != x2.shape[j]:
            raise ValueError(f"tensordot: shape mismatch: axis {i} of x1 has size {x1.shape[i]}, "
                             f"axis {j} of x2 has size {x2.shape[j]}")
    free1 = [i for i in range(x1.ndim) if i not in ax1]
    free2 = [j for j in range(x2.ndim) if j not in ax2]
    k = math.prod(x1.shape[i] for i in ax1)
    m = math.prod(x1.shape[i] for i in free1)
    n_ = math.prod(x2.shape[j] for j in free2)
    a = views.reshape(views.permute(x1._node, tuple(free1 + ax1)), (m, k))
    b = views.reshape(views.permute(x2._node, tuple(ax2 + free2)), (k, n_))
    shape = tuple(x1.shape[i] for i in free1) + tuple(x2.shape[j] for j in free2)
    return finish(matmul_node(a, b, _dtypes.result_type(x1, x2), shape))


def vecdot(x1: GpuArray, x2: GpuArray, /, *, axis: int = -1) -> GpuArray:
    """Dot product of vectors along ``axis`` (counted from the end), other dimensions broadcast.

    ``x1`` is conjugated, as the standard asks: ``sum(conj(x1) * x2)`` (the identity for real dtypes).

    >>> import gpuarray as xp
    >>> float(xp.vecdot(xp.asarray([1.0, 2.0], device="cpu"), xp.asarray([3.0, 4.0], device="cpu")))
    11.0
    >>> complex(xp.vecdot(xp.asarray([1j], device="cpu"), xp.asarray([1j], device="cpu")))
    (1+0j)
    """
    x1, x2 = _as_arrays(x1, x2, "vecdot")
    axis = vector_axis(x1, x2, axis, "vecdot")
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: x1 and x2 must have the same size along axis {axis}; "
                         f"got shapes {x1.shape} and {x2.shape}")
    broadcast_shapes(x1.shape, x2.shape)    # ValueError when the other dimensions do not broadcast
    dt = _dtypes.result_type(x1, x2)
    if dt == _dtypes.bool_:
        return any_(apply(OPS["logical_and"], x1, x2), axis=axis)
    if x1.dtype.kind == "c":
        x1 = apply(OPS["conj"], x1)
    return sum_(apply(OPS["multiply"], x1, x2), axis=axis, dtype=dt)


def vector_axis(x1: GpuArray, x2: GpuArray, axis: int, name: str) -> int:
    """``axis`` as a negative index valid for both operands (the standard counts it from the end).

    A non-negative axis is accepted when both operands have the same rank, where it is unambiguous.
    """
    axis = operator.index(axis)
    nd = min(x1.ndim, x2.ndim)
    if axis >= 0:
        if x1.ndim != x2.ndim:
            raise AxisError(f"{name}: a non-negative axis ({axis}) is ambiguous for arrays of different "
                            f"ranks {x1.shape} and {x2.shape}; pass a negative axis")
        axis -= nd
    if nd == 0 or not -nd <= axis <= -1:
        raise AxisError(f"{name}: axis {axis} is out of bounds for arrays of shapes {x1.shape} and {x2.shape}")
    return axis


def roll_node(node: Node, shift: int, axis: int) -> Node:
    """``node`` rolled by ``shift`` along ``axis``, without copying: a view of a repeated view.

    The axis is moved last, the array is broadcast to ``(..., 2, n)`` and read as
    ``(..., 2n)`` (a ``reshape`` node), and the window ``[n - shift, 2n - shift)``
    of that is the rolled array; the kernel computes the wrapped index.
    """
    nd = len(node.shape)
    n = node.shape[axis]
    if n == 0 or shift % n == 0:
        return node
    s = shift % n
    perm = tuple(i for i in range(nd) if i != axis) + (axis,)
    moved = views.permute(node, perm)
    lead = moved.shape[:-1]
    doubled = views.reshape(views.broadcast_to(views.reshape(moved, lead + (1, n)), lead + (2, n)), lead + (2 * n,))
    window = views.strided_view(doubled, lead + (n,), contiguous_strides(doubled.shape), n - s)
    back = [0] * nd
    for i, p in enumerate(perm):
        back[p] = i
    return views.permute(window, tuple(back))


__all__ = ["matmul", "tensordot", "vecdot", "matrix_transpose"]


register(matmul=matmul)   # x @ y
