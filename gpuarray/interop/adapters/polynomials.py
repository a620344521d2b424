"""Polynomials on the device: ``polyfit``, ``polyder``, ``polyint``, ``polyadd``, ``polysub``,
``polymul``, ``polydiv``, ``poly``, ``roots`` (``polyval`` is in ``calculus.py``).

- ``polyfit``: NumPy's steps (the Vandermonde matrix, the weights, the column scaling) and its
  least squares by Householder QR on the device: the singular values of ``R`` (one-sided Jacobi on
  a wgpu device) give the rank (one read) and ``full=``'s ``s``; a full-rank fit solves ``R c = Q^T y``
  (LU), a rank-deficient one takes the minimum-norm solution from the eigenvectors of ``R^T R``
  (Jacobi); NumPy's ``RankWarning``, ``cov=`` and errors.
- ``polyder`` / ``polyint`` / ``polyadd`` / ``polysub``: NumPy's operations on the coefficients.
- ``polymul``: leading zeros trimmed (``trim_zeros``, one read), then ``convolve``.
- ``polydiv``: NumPy's long division, one step of device operations per quotient coefficient,
  the remainder's leading near-zeros found with one read.
- ``poly`` of a 1-D sequence of roots: the product of the factors, one shifted difference per root;
  of a square matrix: the same of its eigenvalues (``linalg.hqr.eigvals``: Hessenberg QR on a wgpu
  device up to 64 rows).
- ``roots``: NumPy's companion matrix, built on the device after one read of where the first and
  last nonzero coefficients are, and its ``eigvals``; the trailing zeros' roots appended.
``poly1d`` arguments run on the host.

>>> import numpy as np, gpuarray as xp
>>> x = xp.asarray([0.0, 1.0, 2.0, 3.0], device="cpu")
>>> np.round(np.polyfit(x, 2 * x + 1, 1), 6).tolist(), np.polyder(xp.asarray([3.0, 2.0, 1.0], device="cpu")).tolist()
([2.0, 1.0], [6.0, 2.0])
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ... import linalg
from ...array_object.array import GpuArray
from ...core import dtypes as _dtypes
from ...linalg import hqr as _hqr
from ...linalg import jacobi as _jacobi
from ...linalg import lu as _lu
from ...namespace import manipulation as _m
from ...namespace.creation import arange, eye, zeros
from ...namespace.statistical import sum as xsum
from ...runtime.planner import evaluate_nodes
from ..host import _FALLBACK, _stacklevel
from ..operands import _as_array, _cast, _device, _map_dtype
from ..registry import register

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays
_RankWarning: Any = getattr(np, "exceptions", np).RankWarning


def _on_device(*objs: Any) -> bool:
    """Whether a GpuArray is among ``objs`` and none of them is a ``poly1d`` (those run on the host)."""
    return any(isinstance(o, GpuArray) for o in objs) and not any(isinstance(o, np.poly1d) for o in objs)


def _plus_zero(x: Any, dev: Any) -> GpuArray | None:
    """NumPy's ``asarray(x) + 0.0`` (integers to float64), or None without such a dtype here."""
    a = _as_array(x, dev)
    dt = _map_dtype(np.result_type(a.dtype, 0.0), dev)
    return None if dt is None or dt.kind == "c" else _cast(a, dt)


def _eigh(g: GpuArray) -> tuple[GpuArray, GpuArray]:
    """Eigenvalues (ascending) and eigenvectors of one symmetric matrix: Jacobi on a wgpu device."""
    if _lu.applies(g, g.dtype) and _jacobi.applies(g.shape[-1]):
        got = _jacobi.eigh(g._node, True)
        if got is not None and got[1] is not None:
            return got[0], got[1]
    r = linalg.eigh(g)
    return r.eigenvalues, r.eigenvectors


def lstsq_qr(a: GpuArray, b: GpuArray, rcond: float) -> tuple[GpuArray, GpuArray, int, GpuArray]:
    """``numpy.linalg.lstsq(a, b, rcond)`` of a real 2-D ``a`` through QR on the device: ``(x, residuals,
    rank, s)``; the rank is read back (one read)."""
    m, n = a.shape
    b2 = b[:, None] if b.ndim == 1 else b
    if m >= n:
        q, r = linalg.qr(a)
        qtb = _m.matrix_transpose(q) @ b2
    else:
        r, qtb = a, b2
    if m >= n:                            # R as a buffer of its own: Householder's R is a view of a packed node
        r = _np.add(r, 0.0)
        evaluate_nodes([r._node])
    s = linalg.svdvals(r)
    rank = int(xsum(_np.greater(s, _np.multiply(s[0], rcond)).astype(a.device.default_int)))
    if rank == n:
        x = linalg.solve(r, qtb)
    else:                                 # the minimum-norm solution over the largest singular values
        lam, v = _eigh(_m.matrix_transpose(r) @ r)
        vk = v[:, n - rank:]
        z = _np.divide(_m.matrix_transpose(vk) @ (_m.matrix_transpose(r) @ qtb), lam[n - rank:, None])
        x = vk @ z
    if rank == n and m > n:
        res = _np.subtract(b2, a @ x)
        resids = xsum(_np.multiply(res, res), axis=0)
    else:
        resids = zeros((0,), dtype=a.dtype, device=a.device)
    return (x[:, 0] if b.ndim == 1 else x), resids, rank, s


@register(np.polyfit)
def _polyfit(p: dict) -> Any:
    x, y, deg, rcond, full, w, cov = (p[k] for k in ("x", "y", "deg", "rcond", "full", "w", "cov"))
    if not _on_device(x, y, w):
        return _FALLBACK
    dev = _device(x, y, w)
    order = int(deg) + 1
    xa, ya = _plus_zero(x, dev), _plus_zero(y, dev)
    if xa is None or ya is None:
        return _FALLBACK                  # complex data: NumPy's own way
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if xa.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if xa.size == 0:
        raise TypeError("expected non-empty vector for x")
    if ya.ndim < 1 or ya.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if xa.shape[0] != ya.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = xa.shape[0] * np.finfo(xa.dtype).eps
    lhs = _np.vander(xa, order)
    rhs = ya
    if w is not None:
        wa = _plus_zero(w, dev)
        if wa is None:
            return _FALLBACK
        if wa.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if wa.shape[0] != ya.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = _cast(_np.multiply(lhs, wa[:, None]), lhs.dtype)
        rhs = _cast(_np.multiply(rhs, wa[:, None] if rhs.ndim == 2 else wa), rhs.dtype)
    scale = _np.sqrt(xsum(_np.multiply(lhs, lhs), axis=0))
    lhs = _cast(_np.divide(lhs, scale), lhs.dtype)
    dt = np.result_type(lhs.dtype, rhs.dtype)
    c, resids, rank, s = lstsq_qr(lhs, _cast(rhs, dt), float(rcond))
    c = _np.divide(c, scale[:, None] if c.ndim == 2 else scale)
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", _RankWarning, stacklevel=_stacklevel())
    if full:
        return c, resids, np.int32(rank), s, rcond
    if cov:
        vbase = _cast(_np.divide(linalg.inv(_m.matrix_transpose(lhs) @ lhs), _np.outer(scale, scale)), lhs.dtype)
        if cov == "unscaled":
            fac: Any = 1
        else:
            if xa.shape[0] <= order:
                raise ValueError("the number of data points must exceed order to scale the covariance matrix")
            fac = _np.divide(resids, xa.shape[0] - order)
        return c, _np.multiply(vbase if ya.ndim == 1 else vbase[:, :, None], fac)
    return c


@register(np.polyder)
def _polyder(p: dict) -> Any:
    pc, m = p["p"], int(p["m"])
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    if not _on_device(pc):
        return _FALLBACK
    a = _as_array(pc, _device(pc))
    if a.ndim == 0:
        raise TypeError("len() of unsized object")
    for _ in range(m):
        n = len(a) - 1
        a = _np.multiply(a[:-1], arange(n, 0, -1, dtype=_dtypes.int64, device=a.device))
    return a


@register(np.polyint)
def _polyint(p: dict) -> Any:
    pc, m, k = p["p"], int(p["m"]), p["k"]
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    if not _on_device(pc, k):
        return _FALLBACK
    dev = _device(pc, k)
    ks = _as_array(np.zeros(m, float) if k is None else k, dev)
    ks = _m.reshape(ks, (1,)) if ks.ndim == 0 else ks
    if len(ks) == 1 and m > 1:
        ks = _np.multiply(ks[0], np.ones(m, float))
    if len(ks) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    a = _as_array(pc, dev)
    for i in range(m):
        a = _np.concatenate((_np.true_divide(a, arange(len(a), 0, -1, dtype=_dtypes.int64, device=dev)), ks[i:i + 1]))
    return a


def _padded(a: GpuArray, n: int) -> GpuArray:
    """``a`` with ``n`` leading zeros of its dtype (NumPy's ``concatenate((zeros(n, a.dtype), a))``)."""
    return _np.concatenate((zeros((n,), dtype=a.dtype, device=a.device), a))


def _add_or_sub(p: dict, op: Any) -> Any:
    a1, a2 = p["a1"], p["a2"]
    if not _on_device(a1, a2):
        return _FALLBACK
    dev = _device(a1, a2)
    a1, a2 = (_np.atleast_1d(_as_array(v, dev)) for v in (a1, a2))
    diff = len(a2) - len(a1)
    if diff > 0:
        a1 = _padded(a1, diff)
    elif diff < 0:
        a2 = _padded(a2, -diff)
    return op(a1, a2)


@register(np.polyadd)
def _polyadd(p: dict) -> Any:
    return _add_or_sub(p, _np.add)


@register(np.polysub)
def _polysub(p: dict) -> Any:
    return _add_or_sub(p, _np.subtract)


def _poly_coeffs(a: GpuArray) -> GpuArray:
    """``poly1d(a).coeffs``: 1-D, leading zeros trimmed, ``[0]`` if nothing is left."""
    a = _np.atleast_1d(a)
    if a.ndim > 1:
        raise ValueError("Polynomial must be 1d only.")
    a = _np.trim_zeros(a, trim="f")
    return zeros((1,), dtype=a.dtype, device=a.device) if len(a) == 0 else a


@register(np.polymul)
def _polymul(p: dict) -> Any:
    a1, a2 = p["a1"], p["a2"]
    if not _on_device(a1, a2):
        return _FALLBACK
    dev = _device(a1, a2)
    return _np.convolve(_poly_coeffs(_as_array(a1, dev)), _poly_coeffs(_as_array(a2, dev)))


@register(np.polydiv)
def _polydiv(p: dict) -> Any:
    """NumPy's long division, one step of device operations per quotient coefficient."""
    u, v = p["u"], p["v"]
    if not _on_device(u, v):
        return _FALLBACK
    dev = _device(u, v)
    ua, va = (_plus_zero(_np.atleast_1d(_as_array(x, dev)), dev) for x in (u, v))
    if ua is None or va is None or ua.ndim != 1 or va.ndim != 1:
        return _FALLBACK
    dt = np.result_type(ua.dtype, va.dtype)
    m, n = len(ua) - 1, len(va) - 1
    scale = _np.divide(1.0, va[0])
    r = _cast(ua, dt)
    qs = []
    for k in range(m - n + 1):
        d = _cast(_np.multiply(scale, r[k]), dt)
        qs.append(d)
        r = _m.concat([r[:k], _cast(_np.subtract(r[k:k + n + 1], _np.multiply(d, va)), dt), r[k + n + 1:]])
    q = _m.stack(qs) if qs else zeros((1,), dtype=dt, device=dev)
    near_zero = np.asarray(_np.less_equal(_np.abs(r), 1e-8))          # NumPy's allclose(r[0], 0): one read
    lead = 0
    while lead < len(near_zero) - 1 and near_zero[lead]:
        lead += 1
    return q, r[lead:]


POLY_EVAL_EVERY = 16    # np.poly: factors multiplied in before the coefficients are evaluated (small kernels)


@register(np.poly)
def _poly(p: dict) -> Any:
    """``numpy.poly`` of a 1-D sequence of roots: NumPy's product of the factors ``(x - r)``, one
    shifted difference of the coefficients per root (``c[k] - r c[k - 1]``, as NumPy's ``convolve``
    with ``[1, -r]``), evaluated every ``POLY_EVAL_EVERY`` roots; complex roots that come in conjugate
    pairs give real coefficients (one read, NumPy's sorted comparison). A square matrix's
    characteristic polynomial: the same of its eigenvalues (``linalg.hqr.eigvals``)."""
    z = p["seq_of_zeros"]
    if not isinstance(z, GpuArray):
        return _FALLBACK
    z = _np.atleast_1d(z)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        if z.dtype.kind not in "fc":
            mt = _map_dtype(_dtypes.float64, z.device)
            if mt is None:
                return _FALLBACK
            z = _cast(z, mt)
        z = _hqr.eigvals(z)                 # the characteristic polynomial's roots
    if z.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = np.dtype(np.mintypecode(z.dtype.char))
    mt = _map_dtype(dt, z.device)
    if mt is None:
        return _FALLBACK
    z = _cast(z, mt)
    n = z.shape[0]
    if n == 0:
        return 1.0
    a = _m.concat([_as_array(np.ones(1, mt), z.device), -z[0:1]])
    for k in range(1, n):
        # NumPy's convolve(a, [1, -z[k]]): each output the sum of the products that overlap there (no
        # padding zero multiplies a NaN or infinite root)
        nz = -z[k]
        a = _m.concat([a[:1], a[1:] + a[:-1] * nz, a[-1:] * nz])
        if k % POLY_EVAL_EVERY == 0:
            evaluate_nodes([a._node])
    if mt.kind == "c":
        s = _np.sort_complex(z)
        if bool(_np.all(s == _np.sort_complex(_np.conj(z)))):
            a = _np.real(a)
    return a


@register(np.roots)
def _roots(p: dict) -> Any:
    """``numpy.roots``: NumPy's steps on the device: the leading and trailing zeros found with one
    read (the first and last nonzero positions), the companion matrix (``-p[1:] / p[0]`` above a
    shifted identity) and its ``eigvals``, zeros appended for the trailing zeros. Complex
    coefficients keep the host's way.

    >>> import gpuarray as xp
    >>> np.asarray(np.roots(xp.asarray([1.0, -3.0, 2.0, 0.0], device="cpu"))).tolist()
    [2.0, 1.0, 0.0]
    """
    c = p["p"]
    if not isinstance(c, GpuArray):
        return _FALLBACK
    c = _np.atleast_1d(c)
    if c.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if c.dtype.kind == "c" or c.dtype == _dtypes.bool_:
        return _FALLBACK
    dev = c.device
    f64 = _map_dtype(_dtypes.float64, dev)
    if f64 is None:
        return _FALLBACK
    lo, hi = 0, -1
    if c.shape[0]:
        nz = _np.not_equal(c, 0)
        idx = arange(c.shape[0], dtype=dev.default_int, device=dev)
        ends = _m.stack([_np.min(_np.where(nz, idx, c.shape[0])), _np.max(_np.where(nz, idx, -1))])
        lo, hi = (int(v) for v in np.asarray(ends))                  # the one read
    if hi < 0:
        return zeros((0,), dtype=f64, device=dev)
    trailing = c.shape[0] - hi - 1
    c = c[lo:hi + 1]
    if c.dtype.kind != "f":
        c = _cast(c, f64)
    n = c.shape[0]
    if n > 1:
        top = _m.reshape(_np.divide(_np.negative(c[1:]), c[0]), (1, n - 1))
        a = _m.concat([top, eye(n - 2, n - 1, dtype=c.dtype, device=dev)], axis=0) if n > 2 else top
        r = _hqr.eigvals(a, always_complex=False)   # np.roots: real where every root is (NumPy 2.5 too)
    else:
        r = zeros((0,), dtype=f64, device=dev)
    if trailing:
        r = _m.concat([r, zeros((trailing,), dtype=r.dtype, device=dev)])
    return r
