"""What a wgpu adapter does to float32 arithmetic, measured by one tiny kernel.

WGSL leaves two things to the driver that change results bit for bit:

- subnormal float32 values: NVIDIA's Vulkan driver (580, seen on the H200)
  flushes them to zero in arithmetic (``x * 1.0`` of 2.9e-39 gives 0), as
  CUDA's ``-ftz=true`` does; lavapipe keeps them;
- contraction of ``a * b + c`` into one fused multiply-add (one rounding
  instead of two), which naga's SPIR-V does not forbid;
- whether WGSL's ``fma`` rounds once (NVIDIA) or twice (lavapipe), which
  WGSL leaves open.

``numerics(provider)`` runs the probe once per provider and returns the
findings; ``python -m gpuarray info`` prints them and docs/accuracy.md says
what they mean for results.

Example::

    >>> numerics(provider)                               # doctest: +SKIP
    {'flushes_f32_subnormals': True, 'fuses_multiply_add': True, 'exact_fma': True}

``overrides(provider, source)`` gives the pipeline constants a shader declares:
``ga_exactfma_f32`` turns on the fma-based correction that makes float32
division and sqrt correctly rounded on drivers whose own are not (NVIDIA's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

_SOURCE = """
@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(1)
fn main() {
  out[0] = x[0] * x[1] + f32(prm[0]);   // subnormal * 1 + 0
  out[1] = x[2] * x[3] + x[4];          // rounds a*b first unless fused
  out[2] = fma(x[2], x[3], x[4]);       // WGSL lets fma round twice
}
"""

# x[0] = 2^-130 (subnormal); (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the 2^-24 is lost when the product is
# rounded, kept by a fused multiply-add; adding -(1 + 2^-11) leaves 0 or 2^-24.
_INPUT = np.array([2.0 ** -130, 1.0, 1.0 + 2.0 ** -12, 1.0 + 2.0 ** -12, -(1.0 + 2.0 ** -11)], dtype=np.float32)


def numerics(provider: Any) -> dict[str, bool]:
    """Run the probe on ``provider`` (a WgpuProvider) once; cached on the provider."""
    found = getattr(provider, "_numerics", None)
    if found is not None:
        return dict(found)
    x = provider.upload(_INPUT)
    out = provider.alloc(3 * 4)
    try:
        provider.dispatch(_SOURCE, np.zeros(4, dtype=np.uint32), [x, out], 1)
        provider.flush()
        got = provider.download(out, np.dtype(np.float32), (3,))
    finally:
        provider.free(x)
        provider.free(out)
    found = {"flushes_f32_subnormals": bool(got[0] == 0.0),
             "fuses_multiply_add": bool(got[1] != 0.0),
             "exact_fma": bool(got[2] != 0.0)}
    provider._numerics = found
    return dict(found)


def overrides(provider: Any, source: str) -> dict[str, Any]:
    """``{"constants": ...}`` for the pipeline of ``source`` (empty when it declares none)."""
    if "override ga_exactfma_f32" not in source:
        return {}
    found = getattr(provider, "_numerics", None) or numerics(provider)
    return {"constants": {"ga_exactfma_f32": 1.0 if found["exact_fma"] else 0.0}}
