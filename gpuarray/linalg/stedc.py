"""Eigenvalues and eigenvectors of a real symmetric tridiagonal matrix by Cuppen's divide and conquer
(LAPACK's ``dstedc``: ``dlaed0`` to ``dlaed4``), its ``O(n^2)`` and ``O(n^3)`` work as array
operations on the matrix's device and its ``O(n)`` bookkeeping on the host, as MAGMA's ``dstedx``.

The matrix (``d``, ``e``, scaled to norm 1) is split in halves, level by level, into leaves of at most
``LEAF`` rows, each with its ends lowered by the coupling ``|e|`` it loses (``T = diag(T1, T2) + |b| w
w^T``); the leaves are a stack of small symmetric matrices for the device's Jacobi kernel
(``linalg.jacobi``). Two solved halves ``Q1 D1 Q1^T`` and ``Q2 D2 Q2^T`` merge as the eigenproblem of
``D + rho z z^T`` (``z`` the last row of ``Q1`` and the first of ``Q2``, read back: one small download
a level): on the host, ``dlaed2``'s deflation (tiny ``z_j``; close poles rotated together); on the
device, for every merge of a level at once, each root of the secular equation ``1/rho + sum z_j^2 /
(d_j - x) = 0`` by bisection in the distance ``tau`` from its nearer pole (geometric while the bracket
spans more than a factor of two, so tiny distances keep their relative accuracy), ``z`` recomputed
from the roots (Gu and Eisenstat: the vectors stay orthogonal however close the roots), the vectors
``z / (d - x)`` normalized, and the merged ``Q = diag(Q1, Q2) G U`` as two products (``G``: the
sorting and the deflation's rotations). Eigenvalues return ascending with the vectors in columns.

>>> import numpy as np, gpuarray as xp
>>> w, z = stedc(np.array([2.0, 2.0]), np.array([1.0]), xp.Device("cpu"))
>>> np.round(w, 6).tolist(), np.round(np.abs(np.asarray(z)), 4).tolist()
([1.0, 3.0], [[0.7071, 0.7071], [0.7071, 0.7071]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..array_object.array import GpuArray
from ..namespace.creation import asarray, zeros
from ..namespace.elementwise import FUNCTIONS as _EW
from ..namespace.indexing import take
from ..namespace.manipulation import concat, matrix_transpose
from ..namespace.statistical import prod
from ..namespace.statistical import sum as _sum
from ..runtime.planner import evaluate_nodes
from . import jacobi

LEAF = 32               # rows of the largest leaf (Jacobi's kernel takes at most 64)
ITERS = {"float32": 36, "float64": 68}      # bisection steps: geometric to a factor 2, then the mantissa
_where, _sqrt = _EW["where"], _EW["sqrt"]


def _levels(n: int) -> list[list[tuple[int, int]]]:
    """Row ranges of the halves at each level, the whole matrix first, leaves (at most ``LEAF`` rows,
    all at one depth) last."""
    levels = [[(0, n)]]
    while max(hi - lo for lo, hi in levels[-1]) > LEAF:
        levels.append([r for lo, hi in levels[-1] for r in ((lo, (lo + hi) // 2), ((lo + hi) // 2, hi))])
    return levels


def _leaves(d: np.ndarray, e: np.ndarray, ranges: list[tuple[int, int]], device: Any) -> dict | None:
    """Eigenvalues (host) and eigenvectors (device) of each leaf, by size a stack for Jacobi."""
    out: dict[tuple[int, int], tuple[np.ndarray, GpuArray]] = {}
    for size in sorted({hi - lo for lo, hi in ranges}):
        group = [(lo, hi) for lo, hi in ranges if hi - lo == size]
        mats = np.zeros((len(group), size, size), d.dtype)
        for i, (lo, hi) in enumerate(group):
            mats[i] = np.diag(d[lo:hi]) + np.diag(e[lo:hi - 1], -1) + np.diag(e[lo:hi - 1], 1)
        got = jacobi.eigh(asarray(mats, device=device)._node, True)
        if got is None or got[1] is None:
            return None
        w = np.asarray(got[0], dtype=d.dtype)
        for i, r in enumerate(group):
            out[r] = (w[i], got[1][i])
    return out


class _Merge:
    """One merge's host side: ``dlaed2``'s deflation of ``D + rho z z^T``."""

    def __init__(self, dd: np.ndarray, z: np.ndarray, rho: float, eps: float) -> None:
        k = dd.size
        self.k = k
        perm = np.argsort(dd, kind="stable")
        ds = dd[perm].astype(np.float64)
        zs = z[perm].astype(np.float64)
        tol = 8 * eps * max(float(np.abs(ds).max()), float(np.abs(zs).max()))
        g: np.ndarray | None = None         # the dense sort-and-rotate matrix, once a rotation is needed
        keep: list[int] = []
        drop: list[int] = []
        small = rho * np.abs(zs) <= tol
        pj = -1
        for j in range(k):
            if small[j]:
                drop.append(j)
                continue
            if pj < 0:
                pj = j
                continue
            s, c = float(zs[pj]), float(zs[j])
            tau = math.hypot(c, s)
            t = float(ds[j] - ds[pj])
            c, s = c / tau, -s / tau
            if abs(t * c * s) <= tol:       # close poles: rotate z_pj into z_j, pj deflates
                if g is None:
                    g = np.zeros((k, k))
                    g[perm, np.arange(k)] = 1.0
                x, y = g[:, pj].copy(), g[:, j].copy()
                g[:, pj], g[:, j] = c * x + s * y, c * y - s * x
                zs[j], zs[pj] = tau, 0.0
                dp = ds[pj] * c * c + ds[j] * s * s
                ds[j] = ds[pj] * s * s + ds[j] * c * c
                ds[pj] = dp
                drop.append(pj)
            else:
                keep.append(pj)
            pj = j
        if pj >= 0:
            keep.append(pj)
        self.perm, self.g, self.keep, self.drop = perm, g, keep, drop
        self.poles, self.z = ds[keep], zs[keep]
        self.dropped = ds[drop]
        self.rho = rho


def _secular(merges: list[_Merge], dt: np.dtype, device: Any) -> tuple[np.ndarray, GpuArray]:
    """The roots of every merge's secular equation (host, ``(merges, K)``, padded) and their
    normalized vectors ``z / (d - x)`` (device, ``(merges, K, K)``)."""
    kmax = max(m.z.size for m in merges)
    cnt = len(merges)
    poles = np.zeros((cnt, kmax))
    z = np.zeros((cnt, kmax))
    lo = np.zeros((cnt, kmax))
    hi = np.ones((cnt, kmax))
    rho = np.ones((cnt, 1))
    last = np.zeros((cnt, kmax), bool)          # each merge's last root: its origin is its lower pole
    for i, m in enumerate(merges):
        kk = m.z.size
        last[i, kk - 1] = True
        top = m.poles[-1] + m.rho * float(np.dot(m.z, m.z))
        poles[i, :kk] = m.poles
        poles[i, kk:] = top + 1.0 + np.arange(kmax - kk)        # beyond every root, with z = 0
        z[i, :kk] = m.z
        lo[i, :kk] = m.poles
        hi[i, :kk] = np.append(m.poles[1:], top)
        rho[i] = m.rho
    valid = np.arange(kmax)[None, :] < np.array([m.z.size for m in merges])[:, None]
    lo[~valid], hi[~valid] = 0.0, 1.0
    def dev(a: np.ndarray) -> GpuArray:
        return asarray(np.ascontiguousarray(a, dtype=a.dtype if a.dtype == bool else dt), device=device)

    pd, z2, rinv = dev(poles[:, None, :]), dev(z[:, None, :] ** 2), dev(1.0 / rho[:, :, None])

    def f(diff: GpuArray, tau: GpuArray) -> GpuArray:      # 1/rho + sum z_j^2 / ((d_j - d_o) - tau)
        return rinv[..., 0] + _sum(z2 / (diff - tau[..., None]), axis=-1)

    def held(x: GpuArray) -> GpuArray:
        # d_j - d_o evaluated on its own: fused, NVIDIA's compiler regroups (d_j - d_o) - tau as d_j - (d_o +
        # tau), which loses tau next to the pole (inf where the distance is 0)
        evaluate_nodes([x._node])
        return x

    # the origin: the pole nearer the root
    dlo, dhi = dev(lo), dev(hi)
    at_mid = f(held(pd - dlo[..., None]), dev((hi - lo) / 2))
    left = dev(last) | (at_mid >= 0)
    origin = _where(left, dlo, dhi)
    diff = held(pd - origin[..., None])             # (merges, root, pole): d_j - d_o
    one = dev(np.ones((cnt, kmax)))
    sgn = _where(left, one, -one)
    span = dev(np.where(last, hi - lo, (hi - lo) / 2))
    eps = float(np.finfo(dt).eps)
    tl = span * (eps ** 3)
    th = span
    for _ in range(ITERS[dt.name]):
        geo = th > tl * 2
        mid_t = _where(geo, _sqrt(tl) * _sqrt(th), (tl + th) / 2)
        below = (sgn * f(diff, sgn * mid_t)) < 0       # the root lies farther from the origin
        tl = _where(below, mid_t, tl)
        th = _where(below, th, mid_t)
    tau = sgn * ((tl + th) / 2)
    roots = np.asarray(origin + tau).astype(np.float64)
    # z from the roots (Gu, Eisenstat): zhat_i^2 = prod_j (d_i - x_j) / prod_{j != i} (d_i - d_j)
    di = pd[:, 0, :, None]                          # (merges, K, 1): d_i
    num = held(matrix_transpose(diff) - tau[:, None, :])     # d_i - x_j = (d_i - d_o(j)) - tau_j
    den = _where(dev(np.eye(kmax, dtype=bool)[None]), 1.0, di - pd)
    ratio = _where(dev(~valid[:, None, :] | ~valid[:, :, None]), 1.0, num / den)
    w = prod(ratio, axis=-1)                        # negative: d_i - x_i < 0 is the one factor below 0
    zsign = dev(np.where(z < 0, -1.0, 1.0))
    zhat = zsign * _sqrt(_where(w < 0, -w, 0.0))
    vec = zhat[:, :, None] / num                    # (merges, K_i, K_j): column j the vector of root j
    vec = _where(dev(valid[:, :, None]), vec, 0.0)
    vec = vec / _sqrt(_sum(vec * vec, axis=1, keepdims=True))
    return roots, vec


def stedc(d: np.ndarray, e: np.ndarray, device: Any) -> tuple[np.ndarray, GpuArray] | None:
    """Eigenvalues (ascending, host) and eigenvectors (columns, ``device``) of the symmetric
    tridiagonal matrix of diagonal ``d`` and subdiagonal ``e`` (float32 or float64), or None where the
    leaves' Jacobi kernel declined (LAPACK then takes the matrix)."""
    dt = d.dtype
    n = d.size
    scale = float(max(np.abs(d).max(initial=0.0), np.abs(e).max(initial=0.0)))
    if scale == 0.0:
        return np.zeros(n, dt), asarray(np.eye(n, dtype=dt), device=device)
    d = (d / scale).astype(dt)
    e = (e / scale).astype(dt)
    levels = _levels(n)
    dm = d.copy()
    for level in levels[:-1]:
        for lo, hi in level:
            mid = (lo + hi) // 2
            dm[mid - 1] -= abs(e[mid - 1])
            dm[mid] -= abs(e[mid - 1])
    solved = _leaves(dm, e, levels[-1], device)
    if solved is None:
        return None
    eps = float(np.finfo(dt).eps) / 2
    for level in reversed(levels[:-1]):
        halves = [((lo, (lo + hi) // 2), ((lo + hi) // 2, hi)) for lo, hi in level]
        rows = np.asarray(concat([concat([solved[a][1][-1, :], solved[b][1][0, :]]) for a, b in halves]),
                          dtype=np.float64)
        merges, at = [], 0
        for (a, b) in halves:
            n1, n2 = a[1] - a[0], b[1] - b[0]
            beta = float(e[a[1] - 1])
            z = rows[at:at + n1 + n2].copy()
            at += n1 + n2
            if beta < 0:
                z[n1:] = -z[n1:]
            dd = np.concatenate([solved[a][0], solved[b][0]]).astype(np.float64)
            merges.append(_Merge(dd, z / math.sqrt(2.0), 2.0 * abs(beta), eps))
        live = [m for m in merges if m.keep]
        roots, vec = _secular(live, dt, device) if live else (None, None)
        li = 0
        for (a, b), m in zip(halves, merges):
            q1, q2 = solved.pop(a)[1], solved.pop(b)[1]
            k = m.k
            cols: list[GpuArray] = []
            vals = [m.dropped]
            if m.keep and vec is not None and roots is not None:
                kk = len(m.keep)
                u = vec[li, :kk, :kk]
                vals.insert(0, roots[li, :kk])
                li += 1
                if m.g is None:
                    src = np.full(k, kk, np.int64)
                    src[m.perm[m.keep]] = np.arange(kk)
                    cols.append(take(concat([u, zeros((1, kk), dtype=dt, device=device)]), asarray(src, device=device),
                                     axis=0))
                else:
                    cols.append(asarray(m.g[:, m.keep].astype(dt), device=device) @ u)
            if m.drop:
                if m.g is not None:
                    gd = m.g[:, m.drop]
                else:
                    gd = np.zeros((k, len(m.drop)))
                    gd[m.perm[m.drop], np.arange(len(m.drop))] = 1.0
                cols.append(asarray(gd.astype(dt), device=device))
            allv = np.concatenate(vals)
            order = np.argsort(allv, kind="stable")
            mm = concat(cols, axis=1) if len(cols) > 1 else cols[0]
            mm = take(mm, asarray(order.astype(np.int64), device=device), axis=1)
            n1 = a[1] - a[0]
            solved[(a[0], b[1])] = (allv[order].astype(dt), concat([q1 @ mm[:n1], q2 @ mm[n1:]], axis=0))
    w, q = solved[(0, n)]
    return (w.astype(np.float64) * scale).astype(dt), q
