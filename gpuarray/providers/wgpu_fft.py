"""The ``fft`` kernel kind on the wgpu provider: power-of-two lengths along one axis.

One prologue pass (skipped when the operand is a plain input buffer), then
``log2(n)`` Stockham stages (``render/wgsl_fft.py``), all recorded into the
open compute pass; the twiddle table of each (length, direction, scale, dtype) is
made once and kept on the device (``static_buffer``). Other lengths reach this kernel as
Bluestein's two power-of-two transforms (``gpuarray/fft_chirp.py``); a length that is not a power
of two here (the host's own ``fft`` kernels) runs on the host (``fft_cannot_run``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._dtypes import STORAGE_NP
from ..compiler.kernel import Kernel
from ..render.wgsl import WORKGROUP
from ..render.wgsl_fft import render_fft_stage, twiddles


def fft_scale(n: int, inverse: bool, norm: str) -> float:
    """The factor a transform of length ``n`` is multiplied by, for ``norm`` and direction."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm == "backward") == inverse:
        return 1.0 / n
    return 1.0


def fft_cannot_run(provider: Any, kernel: Kernel) -> str | None:
    axis = kernel.attrs[0]
    n = kernel.out_shape[axis]
    if n & (n - 1):
        return (f"fft of length {n}: the WGSL kernel handles power-of-two lengths only "
                "(other lengths run on the host)")
    return None


def _operand_kernel(kernel: Kernel) -> Kernel:
    """An elementwise kernel computing the fft's operand (its fused prologue)."""
    return Kernel(kernel.instrs, kernel.inputs, [kernel.operands[0]], kernel.out_nodes, kernel.out_shape,
                  kernel.device)


def enqueue_fft(provider: Any, kernel: Kernel, in_handles: list[Any]) -> list[Any]:
    axis, inverse, norm = kernel.attrs
    dt = kernel.out_nodes[0].dtype
    shape = kernel.out_shape
    n = shape[axis]
    total = kernel.size
    nbytes = total * STORAGE_NP[dt].itemsize
    out = provider.alloc(nbytes)
    if total == 0:
        return [out]
    stages = n.bit_length() - 1
    temps = []
    src_ins = kernel.instrs[kernel.operands[0]]
    if src_ins.op == "input" and stages > 0:
        cur = in_handles[src_ins.params[0]]
    else:
        ek = _operand_kernel(kernel)
        r = provider.rendered_for(ek)
        wide = [provider.data_buffer(v) for _t, v in sorted(r.wide_values(ek).items())]
        cur = out if stages == 0 else provider.alloc(nbytes)
        if cur is not out:
            temps.append(cur)
        provider.dispatch(r.source, r.meta(ek), [*in_handles, cur, *wide], -(-total // WORKGROUP))
    if stages == 0:                  # n == 1: the transform is the identity (every norm scales by 1)
        return [out]
    scale = fft_scale(n, inverse, norm)
    tw = provider.static_buffer(("fft twiddles", n, inverse, scale, dt.str), lambda: twiddles(n, inverse, scale, dt))
    tmp = provider.alloc(nbytes) if stages > 1 else None
    if tmp is not None:
        temps.append(tmp)
    inner = math.prod(shape[axis + 1:])
    half = n // 2
    butterflies = total // 2
    source = render_fft_stage(dt)
    for s in range(stages):
        p = 1 << s
        dst = out if (stages - 1 - s) % 2 == 0 else tmp
        prm = [butterflies, half, p, inner, half // p, int(s == stages - 1)]
        provider.dispatch(source, np.array(prm, dtype=np.uint32), [cur, dst, tw], -(-butterflies // WORKGROUP))
        cur = dst
    for h in temps:
        provider.free(h)
    return [out]
