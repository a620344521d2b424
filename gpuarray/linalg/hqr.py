"""``eigvals`` of (stacks of) square matrices, NumPy's ``numpy.linalg.eigvals``: real float32 /
float64 matrices through one ``linalg_hqr`` node (on a wgpu device: LAPACK's ``dgeev`` path for
eigenvalues only, one thread a matrix, ``providers/wgpu_hqr.py``, at most ``MAX_N`` rows; larger ones
and the in-process provider: LAPACK on the host, the same layout); complex matrices through a
``linalg_eigvals`` node (LAPACK on the host).

``eigvals`` is not part of the Array API ``linalg`` extension, so it is not in ``gpuarray.linalg``'s
namespace; NumPy's ``np.linalg.eigvals`` (``interop/adapters/linalg.py``), ``np.roots`` and
``np.poly`` of a square matrix reach it.

NumPy's rules: integers become float64; float32 input is computed in float64 (as NumPy does: the
device's float64 where it has one) and rounded; the result is real (float32 / float64) where every
imaginary part is zero, complex (complex64 / complex128) otherwise; a matrix that is not finite
raises ``LinAlgError("Array must not contain infs or NaNs")``, one that does not converge
``LinAlgError("Eigenvalues did not converge")``: the three flags of the node are one read.
The order is LAPACK's (the diagonal positions of the quasi-triangular Schur form).

>>> import numpy as np, gpuarray as xp
>>> a = xp.asarray(np.array([[0.0, -1.0], [1.0, 0.0]]), device="cpu")
>>> np.asarray(eigvals(a)).tolist()
[1j, -1j]
"""

from __future__ import annotations

import math

import numpy as np

from ..array_object.array import GpuArray, expect_array
from ..array_object.elementwise import apply, astype_node
from ..core import dtypes as _dtypes
from ..core.ops import OPS
from ..graph import views
from ..graph.node import Node, make
from ..graph.shapes import contiguous_strides
from ..namespace.creation import zeros
from ..namespace.statistical import any as _any
from ..providers.wgpu_hqr import MAX_N
from ..runtime.planner import evaluate_nodes
from .lu import _packed

LinAlgError = np.linalg.LinAlgError
# NumPy 2.5 returns complex eigenvalues for real input always; before, real ones where every
# imaginary part is zero (numpy#30411): the installed NumPy's rule
ALWAYS_COMPLEX = np.lib.NumpyVersion(np.__version__) >= "2.5.0"
FLAGS = 4               # the node's leading flags: not finite, not converged, complex, unfinished

__all__ = ["MAX_N", "eigvals"]


def _check_square(x: GpuArray) -> None:
    """NumPy's ``_assert_stacked_2d`` / ``_assert_stacked_square`` errors."""
    if x.ndim < 2:
        raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be at least two-dimensional")
    if x.shape[-1] != x.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")


def _work_dtype(x: GpuArray) -> np.dtype:
    """The dtype NumPy computes in (float64) where the device has it, else the input's float dtype."""
    if x.device.supports(np.dtype(np.float64)):
        return _dtypes.float64
    return x.dtype if x.dtype.kind == "f" else x.device.default_float


def _complex(dt: np.dtype) -> np.dtype:
    return _dtypes.complex64 if dt in (_dtypes.float32, _dtypes.complex64) else _dtypes.complex128


def _lapack(x: GpuArray, node: Node, rt: np.dtype, always_complex: bool = ALWAYS_COMPLEX) -> GpuArray:
    """LAPACK's eigenvalues on the host (a ``linalg_eigvals`` node, a counted fallback on a wgpu
    device) where the device's iteration budget did not finish a matrix; real where all are real (before
    NumPy 2.5, or with ``always_complex`` False)."""
    w = make("linalg_eigvals", (node,), _complex(node.dtype), node.shape[:-1], (), node.device)
    evaluate_nodes([w])
    got = GpuArray(w)
    if not always_complex and not bool(_any(apply(OPS["not_equal"], apply(OPS["imag"], got), 0.0))):
        return GpuArray(astype_node(apply(OPS["real"], got)._node, rt))
    return GpuArray(astype_node(w, _complex(rt)))


def eigvals(x: GpuArray, /, *, work_dtype: np.dtype | None = None,
            always_complex: bool = ALWAYS_COMPLEX) -> GpuArray:
    """The eigenvalues of each square matrix of ``x`` (``(..., n, n) -> (..., n)``), as NumPy's
    ``linalg.eigvals``. ``work_dtype``: the real dtype to compute in (default: float64 where the
    device has it, NumPy's choice; float32 tests the single-precision kernel). ``always_complex``
    False: real where every imaginary part is zero (NumPy before 2.5; ``np.roots`` in every version),
    told by the flags the call reads anyway."""
    x = expect_array(x, "linalg.eigvals")
    _check_square(x)
    n = x.shape[-1]
    batch = x.shape[:-2]
    if x.dtype.kind == "c":
        if 0 in x.shape:
            return zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
        node = make("linalg_eigvals", (x._node,), x.dtype, x.shape[:-1], (), x.device)
        evaluate_nodes([node])
        return GpuArray(node)
    rt = x.dtype if x.dtype.kind == "f" else _work_dtype(x)       # NumPy's result precision
    if 0 in x.shape:
        return zeros(x.shape[:-1], dtype=_complex(rt) if always_complex else rt, device=x.device)
    work = _work_dtype(x) if work_dtype is None else np.dtype(work_dtype)
    per = 2 * n
    packed = _packed("hqr", (astype_node(x._node, work),), FLAGS + math.prod(batch) * per)
    flags = np.asarray(GpuArray(views.strided_view(packed, (FLAGS,), (1,), 0)))     # the one read
    if flags[0] != 0:
        raise LinAlgError("Array must not contain infs or NaNs")
    if flags[1] != 0:
        raise LinAlgError("Eigenvalues did not converge")
    if flags[3] != 0:
        return _lapack(x, astype_node(x._node, work), rt, always_complex)
    bst = tuple(s * per for s in contiguous_strides(batch))
    wr = GpuArray(views.strided_view(packed, batch + (n,), bst + (1,), FLAGS))
    if flags[2] == 0 and not always_complex:
        return GpuArray(astype_node(wr._node, rt))
    ct = _complex(rt)
    if flags[2] == 0:
        return GpuArray(astype_node(wr._node, ct))
    wi = GpuArray(views.strided_view(packed, batch + (n,), bst + (1,), FLAGS + n))
    re = GpuArray(astype_node(wr._node, ct))
    im = GpuArray(astype_node(wi._node, ct))
    return apply(OPS["add"], re, apply(OPS["multiply"], im, 1j))
