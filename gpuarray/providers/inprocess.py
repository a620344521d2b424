"""The in-process provider: runs kernel plans with NumPy on the host.

It is the fallback where no GPU is present and the oracle the tests compare
the wgpu provider against. Handles are read-only host arrays.

>>> import numpy as np
>>> from gpuarray.graph import leaf, make
>>> from gpuarray.compiler import schedule
>>> a = leaf(np.arange(3.0), "cpu")
>>> k = schedule([make("square", (a,), a.dtype, a.shape)])[0]
>>> run_kernel(k, [a.data.get_host()])[0]
array([0., 1., 4.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._dtypes import ALL_DTYPES
from .._ops import OPS
from ..compiler.kernel import Kernel


def run_kernel(kernel: Kernel, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Evaluate ``kernel`` with NumPy; returns one C-contiguous array per output."""
    vals: list[np.ndarray] = []
    with np.errstate(all="ignore"):
        for ins in kernel.instrs:
            op = ins.op
            if op == "input":
                v = np.asarray(inputs[ins.params[0]]).reshape(ins.shape)
            elif op == "const":
                v = np.asarray(ins.params[0], dtype=ins.dtype)
            elif op == "iota":
                v = np.arange(int(np.prod(ins.shape)), dtype=np.uint64).astype(ins.dtype).reshape(ins.shape)
            elif op == "view":
                strides, offset = ins.params
                src = np.ascontiguousarray(vals[ins.args[0]]).reshape(-1)
                item = src.itemsize
                if 0 in ins.shape:
                    v = np.empty(ins.shape, dtype=src.dtype)
                else:
                    v = as_strided(src[offset:], ins.shape, tuple(s * item for s in strides), writeable=False)
            elif op == "reshape":
                v = np.reshape(vals[ins.args[0]], ins.shape)
            elif op == "astype":
                v = vals[ins.args[0]].astype(ins.dtype)
            else:
                args = [vals[a] for a in ins.args]
                v = np.asarray(OPS[op].host_impl()(*args))
                if v.dtype != ins.dtype:
                    v = v.astype(ins.dtype)
            vals.append(v)
    outs = []
    for o in kernel.outputs:
        v = np.broadcast_to(vals[o], kernel.out_shape)
        out = np.ascontiguousarray(v, dtype=kernel.instrs[o].dtype)
        if out is vals[o] or not out.flags.owndata:
            out = out.copy()
        out.flags.writeable = False
        outs.append(out)
    return outs


class InProcessProvider:
    """Runs kernels with NumPy; memory is host memory."""

    name = "inprocess"
    host_memory = True

    def supports(self, dtype: np.dtype) -> bool:
        return dtype in ALL_DTYPES

    def cannot_run(self, kernel: Kernel) -> str | None:
        return None

    def upload(self, host: np.ndarray) -> Any:
        return host

    def download(self, handle: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        return handle

    def free(self, handle: Any) -> None:
        return None

    def run(self, batch: Sequence[tuple[Kernel, list[Any]]]) -> list[list[Any]]:
        return [run_kernel(k, ins) for k, ins in batch]

    def device_info(self) -> dict[str, Any]:
        return {"name": "host (NumPy)", "provider": self.name, "numpy": np.__version__,
                "float64": True, "int64": True}
