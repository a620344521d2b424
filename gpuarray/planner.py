"""Where each kernel runs, and running it.

Today's rule: a kernel runs on the provider of its device, unless that
provider cannot run it (an unsupported dtype or op on that adapter, a size
past its limits); then it runs on the host with NumPy, the fallback is
counted in ``metrics()["host_fallbacks"]``, and its result stays with the
array's device (uploaded when a later kernel needs it there).
Every decision is kept in a short log (``decisions()``).
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Sequence
from typing import Any

from . import _metrics
from .compiler.kernel import Kernel
from .compiler.schedule import schedule
from .graph.node import Node
from .providers.inprocess import run_kernel
from .residency import Data

_log: collections.deque[dict[str, Any]] = collections.deque(maxlen=256)
_lock = threading.RLock()


def decisions() -> list[dict[str, Any]]:
    """The most recent placement decisions, oldest first."""
    return list(_log)


def place(kernel: Kernel) -> tuple[Any, str]:
    """(provider, reason) for ``kernel``."""
    provider = kernel.device.provider
    if provider.host_memory:
        return provider, "device is the host"
    why = provider.cannot_run(kernel)
    if why:
        return None, why
    return provider, f"runs on {kernel.device.name}"


def _inputs_on_host(kernel: Kernel) -> list[Any]:
    return [n.data.get_host().reshape(n.shape) for n in kernel.inputs]


def evaluate_nodes(nodes: Sequence[Node]) -> None:
    """Realize ``nodes``: schedule their unevaluated graph and run the kernels in order.

    Device kernels are recorded into one compute pass per provider and submitted
    once at the end; a kernel that runs on the host first flushes what its
    inputs depend on (downloads flush on their own).
    """
    if all(n.realized for n in nodes):
        return
    with _lock:
        kernels = schedule([n for n in nodes if not n.realized])
        if not kernels:
            return
        _metrics.add("evaluations")
        used: dict[int, Any] = {}
        try:
            for k in kernels:
                provider, why = place(k)
                _log.append({"kernel": k.describe().splitlines()[0], "device": k.device.name,
                             "placed": "host" if provider is None or provider.host_memory else provider.name,
                             "why": why, "elements": k.size})
                if provider is None or provider.host_memory:
                    outs = run_kernel(k, _inputs_on_host(k))
                    _metrics.add("host_kernels")
                    if provider is None:
                        _metrics.add("host_fallbacks")
                    for node, arr in zip(k.out_nodes, outs, strict=True):
                        node.realize(Data(node.dtype, node.shape, host=arr))
                    continue
                used[id(provider)] = provider
                handles = provider.enqueue(k, [n.data.get_handle(provider) for n in k.inputs])
                for node, h in zip(k.out_nodes, handles, strict=True):
                    node.realize(Data(node.dtype, node.shape, handle=h, provider=provider))
        finally:
            for provider in used.values():
                provider.flush()
