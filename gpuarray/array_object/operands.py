"""The nodes an operation reads: operands cast to its compute dtype (``astype_node``), and one value held on the
host taken in as a constant (``operand``).

>>> import numpy as np
>>> from gpuarray.graph.node import const
>>> astype_node(const(2.5, np.dtype("float32"), "cpu"), np.dtype("int32")).attrs[0]
np.int32(2)
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as _dtypes
from ..graph.node import Node, const, make


def astype_node(node: Node, dtype: np.dtype) -> Node:
    """``node`` cast to ``dtype`` (a constant's value converted at once)."""
    if node.dtype == dtype:
        return node
    if node.op == "const" and not node.realized:
        v = np.asarray(node.attrs[0])
        if v.dtype.kind == "c" and dtype.kind != "c":     # complex -> real keeps the real part (bool: nonzero)
            v = v != 0 if dtype == _dtypes.bool_ else v.real
        with np.errstate(all="ignore"):
            return const(v.astype(dtype)[()], dtype, node.device)
    return make("astype", (node,), dtype, node.shape)


def operand(node: Node, dtype: np.dtype) -> Node:
    """``node`` as an operand of ``dtype`` of a recorded operation: one value held on the host only (``asarray`` of
    a scalar, a result computed at once) goes in as a constant, which kernels read as a uniform and a replayed
    plan patches, where as data it would be uploaded, bound and keyed by its place for each new array (SciPy's
    ``xp.asarray(n > 1, device=d) & mask`` in every ``stats`` call: a reads-ahead template could not remake it)."""
    if not node.shape and node.op == "leaf":
        d = node.data
        if d.handle is None and d.host is not None:
            node = const(d.host.reshape(())[()], node.dtype, node.device)
    return astype_node(node, dtype)
