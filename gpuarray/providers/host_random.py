"""The ``random`` kernel kind on the host (the in-process provider), and the reference the device
kernel is tested against: Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers:
as easy as 1, 2, 3", SC 2011), the counter-based generator of cuRAND, PyTorch and JAX's ``rbg``.

A ``random`` node of ``n`` elements draws ``nb`` blocks (``n / 4`` rounded up for 32-bit dtypes, ``n / 2``
for 64-bit ones) from counters ``(b, c0, c1, 0)`` under the key ``(k0, k1)``: block ``b`` gives four
32-bit words, and its ``j``-th element is element ``j * nb + b`` of the (flat, C-order) result (so
that a warp's stores are contiguous), those at ``n`` or past it dropped:

- ``bits`` uint32: word ``j``; uint64: words ``2j`` (low) and ``2j + 1`` (high);
- ``uniform`` float32: ``(w >> 8) * 2^-24`` of word ``j``; float64: ``((a >> 5) * 2^26 + (b >> 6))
  * 2^-53`` of words ``a, b = 2j, 2j + 1`` (NumPy's ``random_standard_uniform``); values in ``[0, 1)``;
- ``normal``: the Box-Muller pair of two such uniforms ``u1`` (moved to ``(0, 1]``: ``u + 2^-24`` /
  ``u + 2^-53``) and ``u2``: ``sqrt(-2 log u1) cos(2 pi u2)`` for the pair's first element, ``sin`` for
  its second; float32 pairs are words (0, 1) (elements 0, 1) and (2, 3), float64 one pair a block.

The integers are the same bits on every provider (``bits`` and ``uniform`` results are equal bit
for bit); ``normal`` differs in the last bits where the devices' ``log``/``sin``/``cos`` do.

>>> philox4x32(np.zeros((1, 4), np.uint32), (0, 0))[0].tolist() == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..render.wgsl_random import per_block

M0, M1 = 0xD2511F53, 0xCD9E8D57          # Philox4x32's multipliers
W0, W1 = 0x9E3779B9, 0xBB67AE85          # its key increments (the golden ratio, sqrt(3) - 1)
ROUNDS = 10


def philox4x32(ctr: np.ndarray, key: tuple[int, int], rounds: int = ROUNDS) -> np.ndarray:
    """Philox4x32-``rounds`` of the counters ``ctr`` (``(n, 4)`` uint32) under ``key``: ``(n, 4)`` uint32."""
    c = [np.asarray(ctr[:, i], np.uint32) for i in range(4)]
    k0, k1 = int(key[0]) & 0xFFFFFFFF, int(key[1]) & 0xFFFFFFFF
    m0, m1, s = np.uint64(M0), np.uint64(M1), np.uint64(32)
    for _ in range(rounds):
        p0, p1 = c[0].astype(np.uint64) * m0, c[2].astype(np.uint64) * m1
        c = [(p1 >> s).astype(np.uint32) ^ c[1] ^ np.uint32(k0), p1.astype(np.uint32),
             (p0 >> s).astype(np.uint32) ^ c[3] ^ np.uint32(k1), p0.astype(np.uint32)]
        k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
    return np.stack(c, axis=-1)


def blocks(n: int, dist: str, dtype: np.dtype) -> int:
    """Philox blocks a draw of ``n`` elements takes."""
    return -(-n // per_block(dist, np.dtype(dtype)))


def draw(n: int, dist: str, dtype: np.dtype, key: tuple[int, int], c0: int, c1: int) -> np.ndarray:
    """``n`` elements of ``dist`` in ``dtype`` (see the module docstring)."""
    dt = np.dtype(dtype)
    nb = blocks(n, dist, dt)
    ctr = np.zeros((nb, 4), np.uint32)
    ctr[:, 0] = np.arange(nb, dtype=np.uint32)
    ctr[:, 1], ctr[:, 2] = c0, c1
    w = philox4x32(ctr, key)
    if dist == "bits" and dt.itemsize == 4:
        vals = w
    elif dist == "bits":
        words = w.astype(np.uint64)
        vals = words[:, 0::2] | (words[:, 1::2] << np.uint64(32))
    elif dt == np.float32:
        u = (w >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)
        vals = u if dist == "uniform" else _box_muller(u[:, 0::2] + np.float32(2.0 ** -24), u[:, 1::2], dt)
    else:
        words = w.astype(np.uint64)
        u = ((words[:, 0::2] >> np.uint64(5)) * np.uint64(67108864) + (words[:, 1::2] >> np.uint64(6)))
        u = u.astype(np.float64) * 2.0 ** -53
        vals = u if dist == "uniform" else _box_muller(u[:, 0:1] + 2.0 ** -53, u[:, 1:2], dt)
    return vals.T.reshape(-1)[:n].astype(dt)          # element j * nb + b is block b's j-th


def _box_muller(u1: np.ndarray, u2: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Columns ``(cos, sin)`` of each pair, interleaved: pair ``p`` gives elements ``2p`` and ``2p + 1``."""
    with np.errstate(all="ignore"):
        r = np.sqrt(-2 * np.log(u1))
        t = (2 * math.pi) * u2.astype(dt)
        return np.stack([r * np.cos(t), r * np.sin(t)], axis=-1).astype(dt).reshape(u1.shape[0], 2 * u1.shape[1])


def host_random(kernel: Kernel, operands: list[np.ndarray]) -> list[np.ndarray]:
    """The ``random`` kernel on the host: operands ``k0, k1, c0, c1`` (0-d uint32)."""
    k0, k1, c0, c1 = (int(np.asarray(v)) for v in operands)
    node = kernel.out_nodes[0]
    n = math.prod(node.shape)
    out: Any = draw(n, kernel.attrs[0], node.dtype, (k0, k1), c0, c1) if n else np.zeros(0, node.dtype)
    out = out.reshape(node.shape)
    out.flags.writeable = False
    return [out]
