"""WGSL for the ``fft`` kernel kind: radix-2 Stockham stages along one axis, and their twiddle table.

The provider runs several stages per dispatch in workgroup memory (``wgsl_fft_block.py``, the same
butterflies with the same table); this one-stage shader is its fallback (``GPUARRAY_FFT_BLOCK=0``, or
an adapter with too little workgroup memory), and the reference that kernel is derived from.
Here a transform of power-of-two length ``n`` along ``axis`` is ``log2(n)``
dispatches of one stage shader (Stockham autosort: each stage reads one
buffer and writes the other, and the last one leaves the result in natural
order, with no bit-reversal pass). Stage ``s`` (``p = 2^s``) gives each
thread one butterfly ``i`` of one transform::

    k = i mod p,  j = 2 (i - k) + k
    u0 = x[i],  u1 = x[i + n/2] * w^(k n / 2p)
    y[j] = u0 + u1,  y[j + p] = u0 - u1

where ``w = exp(-2 pi i / n)`` (``+`` for the inverse). The twiddle factors
come from a table computed on the host in float64 (so they are correctly
rounded, not ``sin``/``cos`` of an inexact angle), with the normalization
factor stored after them; the last stage multiplies by it. The other axes
are a batch: element ``idx`` of transform ``b`` is at
``(b / inner) * n * inner + idx * inner + b mod inner``, so no transposes
are needed. The shader depends only on the dtype; sizes are ``prm`` values.

The operand's fused prologue (padding, slicing, conjugation, casts ...) is
computed first by an elementwise pass (``render.wgsl.render`` of the
operand), unless the operand is a plain input buffer.
"""

from __future__ import annotations

import numpy as np

from ..core.dtypes import WGSL_TYPE, real_dtype
from .wgsl import WORKGROUP


def render_fft_stage(dtype: np.dtype) -> str:
    """One radix-2 Stockham stage for ``dtype`` (complex64 or complex128).

    ``prm``: [butterflies, n/2, p, inner, twiddle stride n/(2p), last stage (0/1)].
    """
    t = WGSL_TYPE[dtype]
    f = WGSL_TYPE[real_dtype(dtype)]
    return f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<{t}>;
@group(0) @binding(2) var<storage, read_write> dst: array<{t}>;
@group(0) @binding(3) var<storage, read> tw: array<{t}>;

@compute @workgroup_size({WORKGROUP})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
  let t = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;
  if (t >= prm[0]) {{ return; }}
  let half = prm[1];
  let p = prm[2];
  let inner = prm[3];
  let i = t % half;
  let b = t / half;
  let base = (b / inner) * (2u * half) * inner + b % inner;
  let k = i & (p - 1u);
  let w = tw[k * prm[4]];
  let u0 = src[base + i * inner];
  let v = src[base + (i + half) * inner];
  let u1 = {t}(v.x * w.x - v.y * w.y, v.x * w.y + v.y * w.x);
  var y0 = u0 + u1;
  var y1 = u0 - u1;
  if (prm[5] != 0u) {{
    let s: {f} = tw[half].x;
    y0 = y0 * s;
    y1 = y1 * s;
  }}
  let j = ((i - k) << 1u) + k;
  dst[base + j * inner] = y0;
  dst[base + (j + p) * inner] = y1;
}}
"""


def twiddles(n: int, inverse: bool, scale: float, dtype: np.dtype) -> np.ndarray:
    """``exp(-+2 pi i j / n)`` for ``j < n / 2``, then ``scale``: the stage shader's table."""
    j = np.arange(n // 2, dtype=np.float64)
    ang = 2.0 * np.pi * j / n
    w = np.cos(ang) + (1j if inverse else -1j) * np.sin(ang)
    return np.concatenate([w, [scale]]).astype(dtype)
