"""Eigenvalues and eigenvectors of a real symmetric tridiagonal matrix by Cuppen's divide and conquer
(LAPACK's ``dstedc``: ``dlaed0`` to ``dlaed4``), its ``O(n^2)`` and ``O(n^3)`` work on the matrix's
device and its ``O(n)`` bookkeeping on the host, as MAGMA's ``dstedx``: one evaluation a level.

The matrix (``d``, ``e``, scaled to norm 1) is split in halves, level by level, into leaves of at most
``LEAF`` rows, each with its ends lowered by the coupling ``|e|`` it loses (``T = diag(T1, T2) + |b| w
w^T``); the leaves are one stack for the device's Jacobi kernel (``linalg.jacobi``; a shorter leaf
padded with a decoupled diagonal ``PAD``). A level's blocks are one ``(blocks, S, S)`` stack, each
half's rows and columns at the front of its slot of ``S / 2``. Two solved halves ``Q1 D1 Q1^T`` and
``Q2 D2 Q2^T`` merge as the eigenproblem of ``D + rho z z^T`` (``z`` the last row of ``Q1`` and the
first of ``Q2``, read back with the level below's eigenvalues: one download a level): on the host,
``dlaed2``'s deflation (tiny ``z_j``; close poles rotated together); on the device, one
``linalg_laed4`` node for every merge of the level (``render/wgsl_laed4.py``: the secular roots by
bisection, ``z`` recomputed from them as Gu and Eisenstat do so that the vectors stay orthogonal, the
normalized vectors ``z / (d - x)`` scattered to their rows as the merge matrix ``M``), the rotations'
product on the rows they mix, and ``Q = diag(Q1, Q2) M`` for the whole level as one batched product.
Columns keep the merge's order (roots, then deflated values) up to the top, sorted there; eigenvalues
return ascending with the vectors in columns.

>>> import numpy as np, gpuarray as xp
>>> w, z = stedc(np.array([2.0, 2.0]), np.array([1.0]), xp.Device("cpu"))
>>> np.round(w, 6).tolist(), np.round(np.abs(np.asarray(z)), 4).tolist()
([1.0, 3.0], [[0.7071, 0.7071], [0.7071, 0.7071]])
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..array_object.array import GpuArray
from ..graph import views
from ..graph.node import make
from ..namespace.creation import asarray
from ..namespace.indexing import take
from ..namespace.linear_algebra import matmul
from ..namespace.manipulation import concat, reshape
from ..runtime.planner import evaluate_nodes
from . import jacobi

LEAF = 32               # rows of the largest leaf (Jacobi's kernel takes at most 64)
PAD = 4.0               # the diagonal that pads a smaller leaf: above every eigenvalue of T / ||T|| (+ coupling)


def _levels(n: int) -> list[list[tuple[int, int]]]:
    """Row ranges of the halves at each level, the whole matrix first, leaves (at most ``LEAF`` rows,
    all at one depth) last."""
    levels = [[(0, n)]]
    while max(hi - lo for lo, hi in levels[-1]) > LEAF:
        levels.append([r for lo, hi in levels[-1] for r in ((lo, (lo + hi) // 2), ((lo + hi) // 2, hi))])
    return levels


def _leaves(d: np.ndarray, e: np.ndarray, ranges: list[tuple[int, int]], slot: int,
            device: Any) -> tuple[_Pending, GpuArray] | None:
    """Eigenvalues (ascending, not read) of each leaf and their eigenvectors as one ``(leaves, slot,
    slot)`` stack (device) by Jacobi: a leaf of fewer rows is padded with a decoupled diagonal above its
    spectrum, whose unit vectors come last."""
    lo = np.array([r[0] for r in ranges])
    size = np.array([r[1] - r[0] for r in ranges])
    j = np.arange(slot)
    inside = j[None, :] < size[:, None]                          # (leaves, slot): rows of the leaf
    at = np.minimum(lo[:, None] + j[None, :], d.size - 1)
    mats = np.zeros((len(ranges), slot, slot), d.dtype)
    mats[:, j, j] = np.where(inside, d[at], PAD)
    off = (j[None, :-1] + 1 < size[:, None]) & inside[:, :-1]    # couplings inside the leaf
    sub = np.where(off, e[np.minimum(at[:, :-1], e.size - 1)], 0) if e.size else 0
    mats[:, j[1:], j[:-1]] = sub
    mats[:, j[:-1], j[1:]] = sub
    got = jacobi.eigh(asarray(mats, device=device)._node, True)
    if got is None or got[1] is None:
        return None
    return _Pending(got[0], [hi - lo for lo, hi in ranges], [np.zeros(0)] * len(ranges)), got[1]


class _Merge:
    """One merge's host side: ``dlaed2``'s deflation of ``D + rho z z^T``: the sorting ``perm``, the live
    poles ``keep`` and deflated ones ``drop`` (sorted positions), and where close poles were rotated
    together, the rotations' product ``r`` on the sorted positions ``touched``."""

    def __init__(self, dd: np.ndarray, z: np.ndarray, rho: float, eps: float) -> None:
        k = dd.size
        self.k = k
        perm = np.argsort(dd, kind="stable")
        ds = dd[perm].astype(np.float64)
        zs = z[perm].astype(np.float64)
        tol = 8 * eps * max(float(np.abs(ds).max()), float(np.abs(zs).max()))
        small = rho * np.abs(zs) <= tol
        live = np.flatnonzero(~small)
        s, c = zs[live[:-1]], zs[live[1:]]
        h = np.hypot(c, s)
        with np.errstate(all="ignore"):
            close = np.abs((ds[live[1:]] - ds[live[:-1]]) * (c / h) * (s / h)) <= tol
        self.touched: np.ndarray | None = None
        self.r: np.ndarray | None = None
        if close.any():
            keep, drop = self._rotate(ds, zs, small, tol)
        else:
            keep, drop = live.tolist(), np.flatnonzero(small).tolist()
        self.perm, self.keep, self.drop = perm, keep, drop
        self.poles, self.z = ds[keep], zs[keep]
        self.dropped = ds[drop]
        self.rho = rho

    def _rotate(self, ds: np.ndarray, zs: np.ndarray, small: np.ndarray, tol: float) -> tuple[list[int], list[int]]:
        """``dlaed2``'s pass over the sorted poles where some close ones rotate (``ds``, ``zs`` updated)."""
        keep: list[int] = []
        drop: list[int] = []
        rots: list[tuple[int, int, float, float]] = []
        pj = -1
        for j in range(ds.size):
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
                rots.append((pj, j, c, s))
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
        if rots:
            touched = np.unique([i for a, b, _, _ in rots for i in (a, b)])
            at = {v: i for i, v in enumerate(touched.tolist())}
            r = np.eye(touched.size)
            for a, b, c, s in rots:
                x, y = r[:, at[a]].copy(), r[:, at[b]].copy()
                r[:, at[a]], r[:, at[b]] = c * x + s * y, c * y - s * x
            self.touched, self.r = touched, r
        return keep, drop


def _merge_data(merges: list[_Merge], n1s: list[int], half: int, dt: np.dtype) -> tuple[np.ndarray, int, list]:
    """The ``linalg_laed4`` operand of a level's ``merges`` (left halves of ``n1s`` columns, merge
    matrices of side ``2 half``), its ``K``, and for each merge with rotations (index, rows of its merge
    matrix the rotations mix, their product)."""
    s = 2 * half
    kmax = max(1, max(len(m.keep) for m in merges))
    data = np.zeros((len(merges), 2 * kmax + 2 + s))
    data[:, 2 * kmax + 2:] = -(s + 1)
    rots = []
    for i, (m, n1) in enumerate(zip(merges, n1s)):
        kk = len(m.keep)
        data[i, :kk] = m.poles
        data[i, kmax:kmax + kk] = m.z
        data[i, 2 * kmax], data[i, 2 * kmax + 1] = m.rho, kk
        code = np.empty(m.k)
        code[m.keep] = np.arange(kk)
        code[m.drop] = -(kk + 1 + np.arange(len(m.drop)))
        r = m.perm
        row = np.where(r < n1, r, half + r - n1)        # the row of M (a half's column) of each sorted pole
        data[i, 2 * kmax + 2 + row] = code
        if m.touched is not None:
            rots.append((i, row[m.touched], m.r))
    return data.astype(dt), kmax, rots


def _rotated(mm: GpuArray, rots: list, dt: np.dtype, device: Any) -> GpuArray:
    """``mm`` (``(merges, S, S)``) with the rows each merge's rotations mix replaced by their product
    with those rows (``dlaed2``'s ``G`` after the sort)."""
    cnt, s = mm.shape[0], mm.shape[-1]
    tmax = max(r.shape[0] for _, _, r in rots)
    flat = reshape(mm, (cnt * s, s))
    rp = np.zeros((len(rots), tmax, tmax))
    gather = np.zeros((len(rots), tmax), np.int64)
    src = np.arange(cnt * s)
    for j, (i, rows, r) in enumerate(rots):
        t = rows.size
        rp[j] = np.eye(tmax)
        rp[j, :t, :t] = r
        gather[j, :t] = i * s + rows
        gather[j, t:] = i * s
        src[i * s + rows] = cnt * s + j * tmax + np.arange(t)
    mixed = matmul(asarray(rp.astype(dt), device=device),
                   reshape(take(flat, asarray(gather.ravel(), device=device), axis=0), (len(rots), tmax, s)))
    both = concat([flat, reshape(mixed, (len(rots) * tmax, s))], axis=0)
    return reshape(take(both, asarray(src, device=device), axis=0), (cnt, s, s))


def _level(q: GpuArray, merges: list[_Merge], n1s: list[int], dt: np.dtype, device: Any) -> tuple[GpuArray, GpuArray]:
    """The merged stack ``(merges, 2 half, 2 half)`` of the halves' stack ``q`` (``(2 merges, half,
    half)``) and the roots ``(merges, K)`` (device, not read)."""
    cnt, half = len(merges), q.shape[-1]
    s = 2 * half
    data, kmax, rots = _merge_data(merges, n1s, half, dt)
    node = make("linalg_laed4", (asarray(data, device=device)._node,), q.dtype, (cnt * s * s + 5 * cnt * kmax,),
                (kmax, s), q._node.device)
    mm = GpuArray(views.strided_view(node, (cnt, s, s), (s * s, s, 1), 0))
    roots = GpuArray(views.strided_view(node, (cnt, kmax), (kmax, 1), cnt * s * s))
    if rots:
        # evaluated on its own: fused into the product's loads, the gathers made that product 4x slower
        mm = _rotated(mm, rots, dt, device)
        evaluate_nodes([mm._node])
    merged = matmul(q, reshape(mm, (2 * cnt, half, s)))
    return reshape(merged, (cnt, s, s)), roots


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
    half = max(hi - lo for lo, hi in levels[-1])
    got = _leaves(dm, e, levels[-1], half, device)
    if got is None:
        return None
    pending, q = got
    rows = [np.arange(hi - lo) for lo, hi in levels[-1]]       # each block's rows in its slot
    eps = float(np.finfo(dt).eps) / 2
    for level in reversed(levels[:-1]):
        # the last row of each left half and the first of each right half (z), read with the values below
        at = np.array([(i * half + r[-1], (i + 1) * half + rows[i + 1][0]) for i, r in
                       list(enumerate(rows))[::2]]).ravel()
        zrows = take(reshape(q, (len(rows) * half, half)), asarray(at, device=device), axis=0)
        vals, zr = _read(pending, zrows)
        assert zr is not None
        merges, n1s = [], []
        for i, (lo, hi) in enumerate(level):
            mid = (lo + hi) // 2
            n1, n2 = vals[2 * i].size, vals[2 * i + 1].size
            z = np.concatenate([zr[2 * i, :n1], zr[2 * i + 1, :n2]])
            if e[mid - 1] < 0:
                z[n1:] = -z[n1:]
            dd = np.concatenate([vals[2 * i], vals[2 * i + 1]])
            merges.append(_Merge(dd, z / math.sqrt(2.0), 2.0 * abs(float(e[mid - 1])), eps))
            n1s.append(n1)
        q, roots = _level(q, merges, n1s, dt, device)
        pending = _Pending(roots, [len(m.keep) for m in merges], [m.dropped for m in merges])
        rows = [np.concatenate([rows[2 * i], half + rows[2 * i + 1]]) for i in range(len(level))]
        half *= 2
    vals, _ = _read(pending, None)
    order = np.argsort(vals[0], kind="stable")
    out = q[0]
    if not np.array_equal(rows[0], np.arange(half)):
        out = take(out, asarray(rows[0], device=device), axis=0)
    if not np.array_equal(order, np.arange(half)):
        out = take(out, asarray(order, device=device), axis=1)
    return (vals[0][order].astype(np.float64) * scale).astype(dt), out


class _Pending(NamedTuple):
    """A level's eigenvalues still on the device: block ``i``'s are ``values[i, :live[i]]`` (roots, or a
    leaf's ascending values), then ``dropped[i]`` (the deflated poles, host)."""
    values: GpuArray
    live: list[int]
    dropped: list[np.ndarray]


def _read(pending: _Pending, zrows: GpuArray | None) -> tuple[list[np.ndarray], np.ndarray | None]:
    """The blocks' eigenvalues in column order (float64) and ``zrows`` (float64), in one download."""
    flat = reshape(pending.values, (-1,))
    both = np.asarray(flat if zrows is None else concat([flat, reshape(zrows, (-1,))]), dtype=np.float64)
    size = math.prod(pending.values.shape)
    r = both[:size].reshape(pending.values.shape)
    vals = [np.concatenate([r[i, :k], dr]) for i, (k, dr) in enumerate(zip(pending.live, pending.dropped))]
    return vals, None if zrows is None else both[size:].reshape(zrows.shape)
