"""``linalg_laed4`` on the wgpu provider: every merge of one divide-and-conquer level (``linalg/stedc.py``)
in one pass of five dispatches: the operand's load, the secular roots (a workgroup a root), ``zhat``
(a workgroup a pole), the vectors' norms (a workgroup a root) and the merge matrices (a thread an
element), ``render/wgsl_laed4.py``. The node's attrs are ``(K, S)``: the most live poles of a merge and
the side of its merge matrix; its operand is ``(merges, 2 K + 2 + S)``.

>>> _wg(40), _wg(3000)
(64, 256)
"""

from __future__ import annotations

from typing import Any

from ..compiler.kernel import Kernel
from ..core.dtypes import STORAGE_NP
from ..render.wgsl_laed4 import ITERS, fill_source, norm_source, roots_source, zhat_source
from .wgpu_linalg_blocked import _cdiv, _pad4, _u32, binding_overflow

_WGSL = {"float32": "f32", "float64": "f64"}


def _wg(k: int) -> int:
    """Threads of a workgroup that reduces over ``k`` poles: a power of two from 64 to 256."""
    return min(256, max(64, 1 << max(0, (k - 1).bit_length())))


def laed4_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    """Why the device cannot run this ``linalg_laed4`` kernel (None: it can)."""
    dt = kernel.out_nodes[0].dtype
    if dt.name not in _WGSL:
        return f"no WGSL secular equation for {dt}; it runs on the host"
    item = STORAGE_NP[dt].itemsize
    cnt, w = kernel.instrs[kernel.operands[0]].shape
    return binding_overflow(provider, "secular equation", [("data", cnt * w * item), ("result", kernel.size * item)])


def enqueue_laed4(provider: Any, kernel: Kernel, in_handles: list[Any], load: Any) -> list[Any]:
    """``linalg_laed4`` of ``kernel`` (``load(work, **extras)`` copies the operand into ``work``)."""
    dt = kernel.out_nodes[0].dtype
    t = _WGSL[dt.name]
    item = STORAGE_NP[dt].itemsize
    k, s = kernel.attrs
    cnt, w = kernel.instrs[kernel.operands[0]].shape
    out = provider.alloc(_pad4(kernel.size) * item)
    data = provider.alloc(_pad4(cnt * w) * item)
    try:
        load(data, N=cnt * w, R=cnt, C=w, BS=cnt * w, LD=w, COFF=0, LOWER=0, FLAG=0xFFFFFFFF)
        prm = _u32(cnt, k, s, w, cnt * s * s)
        wg = _wg(k)
        provider.dispatch(roots_source(t, wg, ITERS[dt.name]), prm, [data, out], cnt * k)
        provider.dispatch(zhat_source(t, wg), prm, [data, out], cnt * k)
        provider.dispatch(norm_source(t, wg), prm, [data, out], cnt * k)
        provider.dispatch(fill_source(t), prm, [data, out], _cdiv(cnt * s * s, 256))
        return [out]
    finally:
        provider.free(data)
