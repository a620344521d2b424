"""Lost device data computed again: when a device is lost (driver reset, removed adapter), data
whose only copy was on it is recomputed on the device's new provider from the kernel that made it
(``residency.Recipe``), after its lost inputs, recursively. Registers itself with ``residency``
(which sits below the planner) when imported.
"""

from __future__ import annotations

from typing import Any

from ..graph.node import Node
from ..providers.inprocess import run_kernel
from . import planner, residency
from .residency import Data


def recover(data: Data) -> None:
    """Compute ``data`` (whose only copy was on a lost device) again on its device's new provider,
    after the lost data of its inputs, recursively (an explicit stack: chains of any length).
    Raises ``DeviceLostError`` naming ``data`` when something it needs cannot be recovered."""
    with planner._lock:         # one evaluation at a time, recomputations included
        order: list[tuple[Data, list[Any]]] = []      # inputs first
        stack: list[tuple[Data, bool]] = [(data, False)]
        seen: set[int] = set()
        inputs_of: dict[int, list[Any]] = {}
        while stack:
            d, expanded = stack.pop()
            if expanded:
                order.append((d, inputs_of[id(d)]))
                continue
            if id(d) in seen or not d.lost:
                continue
            seen.add(id(d))
            if d.recipe is None and _realias(d):
                continue
            nodes = d.recipe.input_nodes() if d.recipe is not None else None
            if not isinstance(nodes, list):
                why = nodes or ("the array whose leading elements it holds no longer exists" if d.owner is not None
                                else "it was not computed by a kernel that can run again")
                if d is not data:
                    why = (f"it was computed from a {d.dtype} array of shape {d.shape} whose only copy was "
                           f"lost too, and that one cannot be recovered: {why}")
                raise data.lost_error(why)
            inputs_of[id(d)] = nodes
            stack.append((d, True))
            stack.extend((n.data, False) for n in nodes if n.data is not None and n.data.lost)
        for d, nodes in order:
            if d.lost:
                _rerun(d, nodes)


def _realias(data: Data) -> bool:
    """Make ``data``, the leading elements of another array's buffer (``residency.prefix``), again
    from that array, recovered first; False where it is not such data or that array is gone."""
    base = data.owner.base() if data.owner is not None else None
    if base is None or base is data:
        return False
    if base.lost:
        recover(base)
    again = residency.prefix(base, data.shape)
    if again is None:
        return False
    data.host, data.handle, data.provider, data.owner = again.host, again.handle, again.provider, again.owner
    return True


def _rerun(data: Data, nodes: list[Any]) -> None:
    """Run ``data``'s kernel again on its device's current provider; every output of it that
    was lost gets the new result."""

    recipe = data.recipe
    assert recipe is not None
    unevaluated = [n for n in nodes if n.data is None]     # put back by a failed evaluation
    if unevaluated:
        planner.evaluate_nodes(unevaluated)
    device = recipe.fields["device"]
    kernel = recipe.kernel(nodes, [Node("leaf", (), dt, shape, (), device) for dt, shape in recipe.specs])
    provider = kernel.device.provider       # a new one: the lost provider was replaced
    why = provider.cannot_run(kernel)
    planner._log.append({"kernel": kernel.summary(), "device": kernel.device.name,
                         "placed": "fallback" if why else "device",
                         "why": f"recomputed: {kernel.device.name} was lost", "elements": kernel.size})
    if why:
        outs: list[Any] = run_kernel(kernel, [n.data.get_host().reshape(n.shape) for n in nodes])
    else:
        outs = provider.run([(kernel, [n.data.get_handle(provider) for n in nodes])])[0]
    for ref, out in zip(recipe.outputs, outs, strict=True):
        d = ref()
        if d is None or not d.lost:
            if not why:
                provider.free(out)
        elif why:
            d.host, d.handle, d.provider, d.owner = out, None, None, None
        else:       # the old handle (and its sharing with prefix views) belonged to the lost provider
            d.handle, d.provider, d.owner = out, provider, None


residency.register_recovery(recover)
