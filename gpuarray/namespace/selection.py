"""Order statistics by radix selection: the values at given ranks of an array's sort order, without
sorting it (``select`` kernels: ``render/wgsl_select.py``, ``providers/wgpu_select.py``).

The keys are the radix sort's order-preserving unsigned images of the values (NaN last, ``-0.0``
just before ``0.0``); the key at a rank is found digit by digit from the top: a histogram of the
top 11 bits of every key (workgroup-memory bins), a one-workgroup kernel that finds the bin
holding the rank and keeps (prefix, rank left) on the device, then histograms of the next bits of
the keys that share each rank's prefix. float32 / int32 with up to two ranks: 3 passes over the
data, 7 dispatches; float64 / int64: 6 passes. int8 / int16 / uint8 / uint16 select in 32 bits.
Used by ``percentile`` / ``quantile`` / ``median`` and their nan variants (``namespace/quantiles.py``)
over a whole array; ``ENABLED`` switches it off (the sort path then runs).

>>> import gpuarray as xp
>>> order_statistics(xp.asarray([3.0, 1.0, float("nan"), 2.0], device="cpu"), [0, 2]).tolist()
[1.0, 3.0, nan]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..array_object.array import GpuArray, expect_array
from ..array_object.elementwise import finish
from ..core import dtypes as _dtypes
from ..graph.node import make
from ..render.wgsl_select import SELECT_DTYPES
from .creation import asarray
from .manipulation import reshape

ENABLED = True          # percentile / quantile / median over a whole array by selection (else a sort)
MAX_RANKS = 64          # ranks of one ``select`` kernel (providers/wgpu_select.py MAX_RANKS)
RANKS_CACHE = 64        # host parameter arrays kept on their device (percentile of one n and q, called again)
_RANKS: dict[tuple[str, tuple[int, ...], bytes, str], GpuArray] = {}
WIDEN: dict[np.dtype, np.dtype] = {_dtypes.int8: _dtypes.int32, _dtypes.int16: _dtypes.int32,
                                   _dtypes.uint8: _dtypes.uint32, _dtypes.uint16: _dtypes.uint32}


def can_select(x: GpuArray, ranks: int) -> bool:
    """Whether ``order_statistics`` runs for ``x`` with ``ranks`` ranks (dtype, size, switch)."""
    dt = WIDEN.get(x.dtype, x.dtype)
    return ENABLED and dt in SELECT_DTYPES and x.device.supports(dt) and 0 < ranks <= MAX_RANKS \
        and 0 < x.size < 2**31


def kept(host: np.ndarray, dev: Any) -> GpuArray:
    """``host`` (a small parameter array: ranks, interpolation weights) on ``dev``, uploaded once for a
    repeated call: the last ``RANKS_CACHE`` kept, keyed by dtype, shape and bytes.

    >>> import numpy as np, gpuarray as xp
    >>> a = kept(np.asarray([1, 2], np.int32), xp.Device("cpu"))
    >>> a is kept(np.asarray([1, 2], np.int32), xp.Device("cpu")), a.tolist()
    (True, [1, 2])
    """
    key = (host.dtype.str, host.shape, host.tobytes(), dev.name)
    r = _RANKS.pop(key, None)
    if r is None or r.device.provider is not dev.provider:
        r = asarray(host, device=dev)
        if len(_RANKS) >= RANKS_CACHE:
            _RANKS.pop(next(iter(_RANKS)))
    _RANKS[key] = r
    return r


def order_statistics(x: GpuArray, ranks: Any) -> GpuArray:
    """The values of ``x`` (flattened) at ``ranks`` (host integers or an integer GpuArray, shape
    ``(R,)``, clamped to ``[0, x.size)``) of its sort order (NaN last, ``-0.0`` before ``0.0``),
    then one more value: NaN where ``x`` holds a NaN, else 0. Shape ``(R + 1,)``, ``x``'s dtype.

    >>> import gpuarray as xp
    >>> order_statistics(xp.asarray([5, 1, 4, 1], device="cpu"), [1, 3]).tolist()
    [1, 5, 0]
    """
    expect_array(x, "order_statistics")
    dev = x.device
    r = ranks if isinstance(ranks, GpuArray) else kept(np.asarray(ranks, dtype=np.int32).reshape(-1), dev)
    if r.ndim != 1 or r.dtype not in _dtypes.INTEGER:
        raise TypeError(f"order_statistics: ranks must be one-dimensional integers; got {r.dtype} {r.shape}")
    if not can_select(x, r.shape[0]):
        raise ValueError(f"order_statistics: no selection for {x.dtype} x {x.size} with {r.shape[0]} ranks "
                         f"(at most {MAX_RANKS}; see can_select)")
    dt = WIDEN.get(x.dtype, x.dtype)
    flat = x if x.ndim == 1 else reshape(x, (-1,))
    flat = flat.astype(dt) if dt != x.dtype else flat
    r = r.astype(_dtypes.int32) if r.dtype != _dtypes.int32 else r
    out = finish(make("select", (flat._node, r._node), dt, (r.shape[0] + 1,), (), dev))
    return out.astype(x.dtype) if dt != x.dtype else out


__all__ = ["ENABLED", "MAX_RANKS", "can_select", "kept", "order_statistics"]
