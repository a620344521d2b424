"""``cholesky``, ``solve``, ``inv``, ``det`` and ``slogdet`` of real float32 / float64 matrices on a
wgpu device: blocked Cholesky and LU with partial pivoting, every panel and update a dispatch of
one evaluation (``providers/wgpu_linalg.py``), nothing of the matrix on the host.

Each call is one node, ``linalg_potrf`` (the factors) or ``linalg_lu`` (attrs ``(mode,)``: the
solution of ``solve``, the inverse, ``det``, or ``slogdet``'s pairs), packed flat with an error
flag after ``solve``'s, ``inv``'s and ``cholesky``'s result: the flag is read back once (one small
read) and raises :class:`numpy.linalg.LinAlgError` as NumPy does ("Matrix is not positive
definite", "Singular matrix": an exactly zero pivot). ``det`` of a singular matrix is 0 and
``slogdet`` (0, -inf), without an error. Batch dimensions of ``solve`` broadcast before the node.
Complex matrices, the in-process provider and adapters without the dtype keep the LAPACK nodes
of ``gpuarray.linalg``; empty stacks are made directly.

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray(np.array([[4.0, 2.0], [2.0, 3.0]], np.float32), device="wgpu:0")
>>> applies(a, a.dtype)
True
>>> np.asarray(cholesky(a._node, False)).astype(np.float64).round(3).tolist()
[[2.0, 0.0], [1.0, 1.414]]
"""

from __future__ import annotations

import math

import numpy as np

from ..array_object.array import GpuArray
from ..core import dtypes as _dtypes
from ..graph import views
from ..graph.node import Node, make
from ..graph.shapes import contiguous_strides
from ..namespace.creation import ones, zeros
from ..runtime.planner import evaluate_nodes

LinAlgError = np.linalg.LinAlgError


def applies(x: GpuArray, dtype: np.dtype) -> bool:
    """Whether the device path takes a real matrix of working ``dtype`` on ``x``'s device."""
    return (x.device.kind == "wgpu" and dtype in (_dtypes.float32, _dtypes.float64)
            and x.device.supports(np.dtype(dtype)))


def _packed(kind: str, inputs: tuple[Node, ...], size: int, attrs: tuple = (), flag: bool = True) -> Node:
    """The flat ``linalg_<kind>`` node of ``size`` elements, evaluated now (``flag``: its last
    element is read next, and that read's copy joins this evaluation's submission)."""
    node = make(f"linalg_{kind}", inputs, inputs[0].dtype, (size,), attrs, inputs[0].device)
    evaluate_nodes([node], reading=flag)
    return node


def _host(kind: str, inputs: tuple[Node, ...], dtype: np.dtype, shape: tuple[int, ...],
          attrs: tuple = ()) -> Node:
    """A ``linalg_<kind>`` node, evaluated now (errors surface at the call, like NumPy)."""
    node = make(f"linalg_{kind}", inputs, dtype, tuple(shape), attrs, inputs[0].device)
    evaluate_nodes([node])
    return node


def _matrices(packed: Node, shape: tuple[int, ...]) -> GpuArray:
    """The leading ``prod(shape)`` elements of ``packed`` as an array of ``shape`` (evaluated, it
    shares ``packed``'s buffer: ``runtime.planner``'s prefix views, no copy)."""
    return GpuArray(views.strided_view(packed, shape, contiguous_strides(shape), 0))


def _flag(packed: Node) -> float:
    """The flag after the result of ``packed`` (one small read of the evaluated buffer:
    ``GpuArray._scalar``)."""
    return float(GpuArray(views.strided_view(packed, (), (), packed.shape[0] - 1)))


def flagged(packed: Node) -> bool:
    """Whether the flag after the result of ``packed`` is set."""
    return _flag(packed) != 0.0


def _check(packed: Node, message: str) -> None:
    """Raise LinAlgError(``message``) where the flag after the result is set."""
    if flagged(packed):
        raise LinAlgError(message)


# devices whose LU panels over several workgroups once gave up waiting (providers/wgpu_lu_mw.py)
_SINGLE: set[str] = set()
FLAGGED_DET = 256       # det and slogdet of matrices this large read a flag (wgpu_lu_mw.MIN_ROWS)


def _lu(inputs: tuple[Node, ...], size: int, mode: str, singular: bool = True) -> Node:
    """The ``linalg_lu`` node of ``mode`` (its flag last, read once: "Singular matrix" where set and
    ``singular``), factored again with one workgroup a panel where the panels over several workgroups
    gave up waiting for each other (flag 2: the adapter did not run them at once), and on that device
    from then on."""
    dev = str(inputs[0].device)
    packed = _packed("lu", inputs, size, (mode,) if dev not in _SINGLE else (mode, "single"))
    flag = _flag(packed)
    if flag == 2.0 and dev not in _SINGLE:
        _SINGLE.add(dev)
        packed = _packed("lu", inputs, size, (mode, "single"))
        flag = _flag(packed)
    if singular and flag != 0.0:
        raise LinAlgError("Singular matrix")
    return packed


def _det_node(a: Node, size: int, mode: str) -> Node:
    """``det``'s or ``slogdet``'s node of ``size`` values: matrices of at least ``FLAGGED_DET`` rows
    get a flag after them, read once, so that their panels may run over several workgroups (a small
    read beside their factorization); smaller ones are not read back here."""
    if a.shape[-1] >= FLAGGED_DET:
        return _lu((a,), size + 1, mode, singular=False)
    return _packed("lu", (a,), size, (mode,), flag=False)


def cholesky(a: Node, upper: bool) -> GpuArray:
    """Lower Cholesky factor of each matrix of ``a`` (``upper``: its transpose)."""
    shape = a.shape
    if 0 in shape:
        return zeros(shape, dtype=a.dtype, device=a.device)
    packed = _packed("potrf", (a,), math.prod(shape) + 1)
    _check(packed, "Matrix is not positive definite")
    low = _matrices(packed, shape)
    return GpuArray(views.strided_view(packed, shape, _transposed(shape), 0)) if upper else low


def _transposed(shape: tuple[int, ...]) -> tuple[int, ...]:
    st = contiguous_strides(shape)
    return tuple(st[:-2]) + (st[-1], st[-2])


def solve(a: Node, b: Node, vector: bool, shape: tuple[int, ...]) -> GpuArray:
    """``a^-1 b`` for each matrix of ``a`` (``vector``: ``b`` is one vector; ``shape``: the result's)."""
    n = a.shape[-1]
    batch = shape[:-1] if vector else shape[:-2]
    nrhs = 1 if vector else shape[-1]
    if 0 in shape:
        return zeros(shape, dtype=a.dtype, device=a.device)
    a = views.broadcast_to(a, batch + (n, n))
    b = views.broadcast_to(views.reshape(b, (n, 1)) if vector else b, batch + (n, nrhs))
    packed = _lu((a, b), math.prod(shape) + 1, "solve")
    return _matrices(packed, shape)


def inv(a: Node) -> GpuArray:
    """The inverse of each matrix of ``a``."""
    if 0 in a.shape:
        return zeros(a.shape, dtype=a.dtype, device=a.device)
    packed = _lu((a,), math.prod(a.shape) + 1, "inv")
    return _matrices(packed, a.shape)


def det(a: Node) -> GpuArray:
    """The determinant of each matrix of ``a`` (0 for a singular one)."""
    batch = a.shape[:-2]
    if 0 in a.shape:
        return ones(batch, dtype=a.dtype, device=a.device)
    return _matrices(_det_node(a, math.prod(batch), "det"), batch)


def slogdet(a: Node) -> tuple[GpuArray, GpuArray]:
    """(sign, log |det|) of each matrix of ``a``; (0, -inf) for a singular one."""
    batch = a.shape[:-2]
    if 0 in a.shape:
        return ones(batch, dtype=a.dtype, device=a.device), zeros(batch, dtype=a.dtype, device=a.device)
    packed = _det_node(a, 2 * math.prod(batch), "slogdet")
    st = tuple(2 * s for s in contiguous_strides(batch))
    return (GpuArray(views.strided_view(packed, batch, st, 0)),
            GpuArray(views.strided_view(packed, batch, st, 1)))
