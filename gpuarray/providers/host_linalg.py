"""Host implementations (NumPy / LAPACK) of the ``linalg_*`` kernel kinds.

Each decomposition in ``gpuarray.linalg`` is one breaker node of kind
``linalg_<name>``. Those without WGSL run here on a wgpu device as a host fallback (counted in
``metrics()["host_fallbacks"]``) and the result stays with the array's device. ``linalg_potrf``
``linalg_lu``, ``linalg_geqrf``, ``linalg_syevj``, ``linalg_syevb``, ``linalg_laed4`` and ``linalg_hqr``
(Cholesky, LU, Householder QR, Jacobi eigh, tridiagonal eigvalsh, divide-and-conquer merges and
Hessenberg-QR eigvals on the device: ``providers/wgpu_linalg.py``, ``wgpu_qr.py``, ``wgpu_eigh.py``,
``wgpu_sytrd.py``, ``wgpu_laed4.py``, ``wgpu_hqr.py``) have WGSL; their host versions here (the same
packed layout: the result, then an error flag where there is one) serve fallbacks and the cpu device.
Functions with several results return them packed along the last axis; the
namespace hands out views of the packed array.

Each entry is ``fn(kernel, operands) -> [array]`` like ``HOST_KINDS`` in
``inprocess.py``; the result is cast to the node's dtype and shape there.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..render.wgsl_laed4 import ITERS


def _pack(parts: list[np.ndarray], nbatch: int) -> np.ndarray:
    """Concatenate each part's trailing (matrix) dimensions, flattened, along one last axis."""
    batch = parts[0].shape[:nbatch]
    return np.concatenate([np.reshape(p, batch + (math.prod(p.shape[nbatch:]),)) for p in parts], axis=-1)


def _det(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    return [np.linalg.det(ops[0])]


def _slogdet(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    sign, logabs = np.linalg.slogdet(ops[0])
    return [np.stack([sign, logabs], axis=-1)]


def _inv(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    return [np.linalg.inv(ops[0])]


def _solve(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    (vector,) = k.attrs
    a, b = ops
    if vector:                    # b is one vector for every matrix of the stack
        return [np.linalg.solve(a, b[..., None])[..., 0]]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    return [np.linalg.solve(a, b)]


def _cholesky(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    (upper,) = k.attrs
    return [np.linalg.cholesky(ops[0], upper=upper)]


def _qr(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    (mode,) = k.attrs
    q, r = np.linalg.qr(ops[0], mode=mode)
    return [_pack([q, r], ops[0].ndim - 2)]


def _eigh(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    w, v = np.linalg.eigh(ops[0])
    return [np.concatenate([w[..., None, :], v], axis=-2)]


def _eigvalsh(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    return [np.linalg.eigvalsh(ops[0])]


def _svd(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    (full,) = k.attrs
    u, s, vh = np.linalg.svd(ops[0], full_matrices=full)
    return [_pack([u, s, vh], ops[0].ndim - 2)]


def _svdvals(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    return [np.linalg.svd(ops[0], compute_uv=False)]


def _rtol(ops: list[np.ndarray]) -> Any:
    return ops[1] if len(ops) > 1 else None


def _pinv(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    x = ops[0]
    if 0 in x.shape[-2:]:
        return [np.zeros(x.shape[:-2] + (x.shape[-1], x.shape[-2]), x.dtype)]
    return [np.linalg.pinv(x, rtol=_rtol(ops))]


def _matrix_rank(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    x = ops[0]
    if 0 in x.shape[-2:]:
        return [np.zeros(x.shape[:-2], np.int64)]
    return [np.linalg.matrix_rank(x, rtol=_rtol(ops))]


def _flagged(fn: Callable[[], np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
    """``fn()`` flattened with a 0 flag after it, or NaN and a 1 flag where it raises LinAlgError."""
    try:
        got, flag = np.asarray(fn()).ravel(), 0.0
    except np.linalg.LinAlgError:
        got, flag = np.full(math.prod(shape), np.nan), 1.0
    return np.concatenate([got, [flag]])


def _potrf(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    """``linalg_potrf`` (the device kind's layout): the lower factors, then the error flag."""
    return [_flagged(lambda: np.linalg.cholesky(ops[0]), ops[0].shape)]


def _lu(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    """``linalg_lu`` (the device kind's layout): ``solve`` / ``inv`` with the error flag after the
    result, ``det``, or ``slogdet`` as (sign, logabsdet) pairs."""
    (mode,) = k.attrs
    a = ops[0]
    if mode == "solve":
        return [_flagged(lambda: np.linalg.solve(a, ops[1]), ops[1].shape)]
    if mode == "inv":
        return [_flagged(lambda: np.linalg.inv(a), a.shape)]
    if mode == "det":
        return [np.linalg.det(a)]
    sign, logabs = np.linalg.slogdet(a)
    return [np.stack([sign, logabs], axis=-1)]


def _geqrf(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    """``linalg_geqrf`` (the device kind's layout): ``[Q | R]`` per matrix, then a 0 flag."""
    (mode,) = k.attrs
    q, r = np.linalg.qr(ops[0], mode=mode)
    return [np.concatenate([_pack([q, r], ops[0].ndim - 2).ravel(), [0.0]])]


def _syevj(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    """``linalg_syevj`` (the device kind's layout): eigenvalues (then vectors) per matrix, a 0 flag."""
    (vectors,) = k.attrs
    if vectors:
        w, v = np.linalg.eigh(ops[0])
        got = np.concatenate([w[..., None, :], v], axis=-2)
    else:
        got = np.linalg.eigvalsh(ops[0])
    return [np.concatenate([got.ravel(), [0.0]])]


def _sytd2(a: np.ndarray) -> tuple[np.ndarray, bool]:
    """``[d | e | tau | V]`` of each symmetric matrix of ``a`` (its lower triangle; LAPACK's ``dsytd2``
    with ``uplo = 'L'``: ``A = Q T Q^T``, ``Q = H_0 ... H_{n-2}``, ``H_k = I - tau_k v v^T``, ``v`` in
    column ``k`` of ``V`` from its 1 at row ``k + 1``; zero where ``tau_k = 0``), and whether a value
    that is not finite or a reflector that ``dlarfg`` would rescale was met (the device's flag)."""
    n = a.shape[-1]
    w = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    d, e, tau = (np.zeros(a.shape[:-1], a.dtype) for _ in range(3))
    v = np.zeros(a.shape, a.dtype)
    info = np.finfo(a.dtype)
    bad = not np.isfinite(a).all()
    with np.errstate(all="ignore"):
        for k in range(n - 1):
            x = w[..., k + 1:, k]
            al = x[..., 0]
            xn = np.linalg.norm(x[..., 1:], axis=-1)
            live = xn > 0
            h = np.hypot(al, xn)
            beta = np.where(live, np.where(al >= 0, -h, h), al)
            t = np.where(live, (beta - al) / np.where(live, beta, 1), 0)
            vk = x / np.where(live, al - beta, 1)[..., None]
            vk[..., 0] = 1
            vk *= live[..., None]
            bad = bad or bool(np.any((beta != 0) & (np.abs(beta) < info.tiny / info.eps)))
            d[..., k], e[..., k], tau[..., k], v[..., k + 1:, k] = w[..., k, k], beta, t, vk
            s = w[..., k + 1:, k + 1:]
            p = t[..., None] * np.einsum("...ij,...j->...i", s, vk)
            q = p - (t / 2 * np.einsum("...i,...i->...", p, vk))[..., None] * vk
            s -= vk[..., :, None] * q[..., None, :] + q[..., :, None] * vk[..., None, :]
        d[..., n - 1] = w[..., n - 1, n - 1]
    bad = bad or not (np.isfinite(d).all() and np.isfinite(e).all())
    return np.concatenate([d, e, tau, v.reshape(a.shape[:-2] + (n * n,))], axis=-1), bad


def _syevb(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    """``linalg_syevb`` (the device kind's layout): eigenvalues (attrs ``(False,)``) or the tridiagonal
    reduction ``[d | e | tau | V]`` (``(True,)``) per matrix, then the flag."""
    (reduced,) = k.attrs
    if not reduced:
        return [np.concatenate([np.linalg.eigvalsh(ops[0]).ravel(), [0.0]])]
    got, bad = _sytd2(ops[0])
    return [np.concatenate([got.ravel(), [float(bad)]])]


def _secular(d: np.ndarray, z: np.ndarray, rho: Any, iters: int) -> tuple[np.ndarray, ...]:
    """One merge of ``linalg_laed4`` as the device computes it (``render/wgsl_laed4.py``), in ``d``'s
    dtype: (roots, tau, origin, zhat, vectors normalized in columns)."""
    kk = d.size
    ar = np.arange(kk)
    one = d.dtype.type(1)

    def f(diff: np.ndarray, tau: np.ndarray) -> np.ndarray:
        return one / rho + np.sum(z * z / (diff - tau[:, None]), axis=1)

    last = ar == kk - 1
    lo = d
    hi = np.append(d[1:], d[-1] + rho * np.sum(z * z))
    left = last | (f(d[None, :] - lo[:, None], (hi - lo) / 2) >= 0)
    org = np.where(left, ar, np.minimum(ar + 1, kk - 1))
    dor = d[org]
    diff = d[None, :] - dor[:, None]
    sg = np.where(left, one, -one)
    span = np.where(last, hi - lo, (hi - lo) / 2)
    eps = np.finfo(d.dtype).eps
    tl, th = span * (eps * eps * eps), span
    for _ in range(iters):
        mid = np.where(th > tl * 2, np.sqrt(tl) * np.sqrt(th), (tl + th) / 2)
        below = sg * f(diff, sg * mid) < 0
        tl, th = np.where(below, mid, tl), np.where(below, th, mid)
    tau = sg * ((tl + th) / 2)
    num = (d[:, None] - dor[None, :]) - tau[None, :]        # (i, j): d_i - x_j
    den = np.where(np.eye(kk, dtype=bool), one, d[:, None] - d[None, :])
    p = np.prod(num / den, axis=1)
    zhat = np.where(z < 0, -one, one) * np.sqrt(np.maximum(-p, 0))
    vec = zhat[:, None] / num
    norm = np.sqrt(np.sum(vec * vec, axis=0))
    return dor + tau, tau, org, zhat, norm, vec / norm


def _laed4(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    """``linalg_laed4`` (the device kind's layout, ``render/wgsl_laed4.py``): the merge matrices, then
    roots, ``tau``, origins, ``zhat`` and norms."""
    kmax, s = k.attrs
    data = ops[0]
    cnt = data.shape[0]
    m = np.zeros((cnt, s, s), data.dtype)
    aux = np.zeros((5, cnt, kmax), data.dtype)
    aux[2] = np.arange(kmax)
    for b in range(cnt):
        row = data[b]
        kk = int(row[2 * kmax + 1])
        src = row[2 * kmax + 2:].astype(np.int64)
        if kk:
            with np.errstate(all="ignore"):
                got = _secular(row[:kk], row[kmax:kmax + kk], row[2 * kmax], ITERS[data.dtype.name])
            for i, part in enumerate(got[:5]):
                aux[i, b, :kk] = part
            rows = src >= 0
            m[b, rows, :kk] = got[5][src[rows]]
        unit = (src < 0) & (-src - 1 < s)
        m[b, unit, -src[unit] - 1] = 1.0
    return [np.concatenate([m.ravel(), aux.ravel()])]


def _gesvj(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    """``linalg_gesvj`` (the device kind's layout): reduced ``[U | S | Vh]`` or ``S``, a 0 flag."""
    (vectors,) = k.attrs
    a = ops[0]
    if vectors:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        got = _pack([u, s, vh], a.ndim - 2)
    else:
        got = np.linalg.svd(a, compute_uv=False)
    return [np.concatenate([np.ravel(got), [0.0]])]


def _hqr(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    """``linalg_hqr`` (the device kind's layout): flags (not finite, not converged, complex, 0), then per
    matrix the real parts and the imaginary parts of its eigenvalues (LAPACK's ``geev``)."""
    a = ops[0]
    n = a.shape[-1]
    flags = np.zeros(4)
    w = np.zeros(a.shape[:-1], np.complex128)
    if not np.isfinite(a).all():
        flags[0] = 1.0
    else:
        try:
            w = np.linalg.eigvals(a).astype(np.complex128)
        except np.linalg.LinAlgError:
            flags[1] = 1.0
    flags[2] = float(np.any(w.imag != 0))
    parts = np.concatenate([w.real, w.imag], axis=-1).reshape(-1, 2 * n)
    return [np.concatenate([flags, parts.ravel()])]


def _eigvals(k: Kernel, ops: list[np.ndarray]) -> list[np.ndarray]:
    return [np.linalg.eigvals(ops[0])]


def _wrap(fn: Callable[[Kernel, list[np.ndarray]], list[np.ndarray]]) -> Any:
    def run(kernel: Kernel, operands: list[np.ndarray]) -> list[np.ndarray]:
        dt = kernel.out_nodes[0].dtype
        return [np.asarray(r).astype(dt, copy=False).reshape(kernel.out_shape) for r in fn(kernel, operands)]
    run.__name__ = fn.__name__
    return run


LINALG_HOST_KINDS: dict[str, Any] = {
    f"linalg_{name}": _wrap(fn) for name, fn in {
        "det": _det, "slogdet": _slogdet, "inv": _inv, "solve": _solve, "cholesky": _cholesky,
        "qr": _qr, "eigh": _eigh, "eigvalsh": _eigvalsh, "svd": _svd, "svdvals": _svdvals,
        "pinv": _pinv, "matrix_rank": _matrix_rank, "potrf": _potrf, "lu": _lu, "geqrf": _geqrf,
        "syevj": _syevj, "syevb": _syevb, "gesvj": _gesvj, "hqr": _hqr, "eigvals": _eigvals,
        "laed4": _laed4,
    }.items()
}
