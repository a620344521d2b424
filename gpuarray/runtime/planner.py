"""Where each kernel runs, and running it.

A kernel (one fusion group) is placed as a whole, in this order:

1. its device is the host (the in-process provider): the host;
2. the device's provider cannot run it (an unsupported dtype or op, a kernel
   kind without WGSL, a size past the adapter's limits): the host, counted in
   ``metrics()["host_fallbacks"]``;
3. ``config(offload="always" | "never")``: the device / the host;
4. some input already lives on the device: the device (data stays where it is;
   a shared constant realized there by an earlier evaluation does not count);
5. the work is below the threshold for its kind (elements for elementwise and
   reduction-like kernels, FLOPs for matmul) and every input has a host copy:
   the host, where NumPy is faster than an upload, a dispatch and a download;
6. otherwise the device.

Before rule 4, an evaluation whose result is read at once (``np.asarray(x)``, ``float(x)``) and whose work
is small (every node and every read of its inputs below the elementwise threshold) runs on the host where
every input has a host copy or is read ahead now (``residency.read_ahead``: a device array at most 16 MiB
that small reads of two different parts used, or one at most 1 GiB that they read 1/16 of, is downloaded
whole, once; a part read again does not count): a
Python loop over rows or segments of a device array (``float(x[i].sum())``) then pays one download instead
of a dispatch and a device round trip per row. ``offload="auto"`` only.

Thresholds come from ``config(...)``, else the environment
(``GPUARRAY_ELEMENTWISE_THRESHOLD``, ``GPUARRAY_REDUCTION_THRESHOLD``,
``GPUARRAY_MATMUL_THRESHOLD``), else the calibration stored by
``gpuarray.calibrate()`` for the adapter, else ``thresholds.DEFAULT_THRESHOLDS`` (the cpu device's
elementwise one: ``CPU_ELEMENTWISE``).
A host-run kernel's result keeps its array's device; it is uploaded when a
later device kernel needs it, or at once for a fallback's result of at most
``FALLBACK_UPLOAD`` bytes (rule 4 then keeps the work after it on the device).
Device work before a fallback is evaluated first, on its own, so that it
replays. Every decision is kept in a short log (``decisions()``).

Under ``offload="auto"`` a small elementwise operation whose array operands are
all evaluated and only on the host is not recorded at all: ``_elementwise``
computes it at once with NumPy (``config(eager_host=False)`` turns this off),
asking ``_eager.limit_now`` for the threshold, and logs it (``eager_entry``; why:
``"eager host: small inputs on host"``; counted in ``metrics()["eager_host_ops"]``).
See ``_eager.py``.
"""

from __future__ import annotations

import collections
import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..compiler.kernel import Kernel
from ..compiler.plan_cache import LOOSE
from ..compiler.schedule import kernels_for, prepare
from ..core import config as _config
from ..core import metrics as _metrics
from ..core.errors import DeviceLostError
from ..graph.node import Node
from ..graph.shapes import view_strides
from ..providers.inprocess import run_kernel, run_walk, walk_instrs
from . import guards as _guards
from . import profile as _profile
from . import replay
from . import speculate as _speculate
from .cuts import cuts as _cuts
from .residency import (
    Data,
    device_only,
    element,
    element_known,
    hosts_of,
    prefix,
    read_ahead,
    read_together,
    remember,
    view_part,
)
from .sink import candidate, rewritten
from .thresholds import DEFAULT_THRESHOLDS, thresholds

# Decisions, newest last: dicts, or (op, device, shape) tuples for eagerly computed operations
# (``decisions()`` turns those into dicts: logging one costs a tuple, not a dict, on the hot path).
_log: collections.deque[dict[str, Any] | tuple] = collections.deque(maxlen=256)
_lock = threading.RLock()

_REDUCTION_KINDS = ("reduce", "argreduce", "scan", "sort", "argsort", "searchsorted", "rowfuse", "extremes")


@dataclass(frozen=True)
class Placement:
    """Where a kernel runs (``device``, ``host`` or ``fallback``) and why."""

    where: str
    why: str
    provider: Any = None


def decisions() -> list[dict[str, Any]]:
    """The most recent placement decisions, oldest first."""
    return [e if type(e) is dict else eager_entry(*e) for e in list(_log)]


EAGER_WHY = "eager host: small inputs on host"
def eager_entry(op: str, device: Any, shape: tuple[int, ...]) -> dict[str, Any]:
    """The decision-log entry of an eagerly computed operation (see the module docstring)."""
    return {"kernel": f"eager {op} -> {shape}", "device": device.name, "placed": "host",
            "why": EAGER_WHY, "elements": math.prod(shape)}


def work(kernel: Kernel) -> tuple[str, int]:
    """(threshold kind, amount of work): elements, or FLOPs for matmul."""
    sizes = [math.prod(kernel.instrs[i].shape) for i in kernel.operands]
    if kernel.kind == "rowfuse":        # its reductions' operands, not their one value per row
        sizes = [math.prod(kernel.instrs[kernel.instrs[i].args[0]].shape) for i in kernel.operands]
    if kernel.kind == "matmul" and len(kernel.operands) == 2:
        k = kernel.instrs[kernel.operands[0]].shape[-1] if kernel.instrs[kernel.operands[0]].shape else 1
        return "matmul", 2 * kernel.size * k
    if kernel.kind in _REDUCTION_KINDS:
        return "reduction", max([kernel.size, *sizes])
    return "elementwise", max([kernel.size, *sizes])


def place(kernel: Kernel) -> Placement:
    """Where ``kernel`` runs and why (see the module docstring for the rules)."""
    provider = kernel.device.provider
    if provider.host_memory:
        return Placement("host", "the device is the host", provider)
    why = provider.cannot_run(kernel)
    if why:
        return Placement("fallback", why)
    mode = _config.get("offload")
    if mode == "always":
        return Placement("device", "config(offload='always')", provider)
    if mode == "never":
        return Placement("host", "config(offload='never')")
    # a constant some earlier evaluation realized on the device is shared by every expression using
    # its value (and holds that value on the host too): no sign of where the work lives
    resident = [n for n in kernel.inputs if n.data is not None and n.data.on_device(provider) and n.op != "const"]
    if resident:
        return Placement("device", f"{len(resident)} input(s) already on {kernel.device.name}", provider)
    if any(n.data is None for n in kernel.inputs):     # only seen by explain(): not computed yet
        return Placement("device", "its inputs come from earlier kernels of this evaluation", provider)
    kind, amount = work(kernel)
    limit = thresholds(kernel.device)[kind]
    unit = "FLOPs" if kind == "matmul" else "elements"
    if amount < limit and all(n.data is not None and n.data.host is not None for n in kernel.inputs):
        return Placement("host", _below_why(amount, unit, kind, limit))
    return Placement("device", f"{amount} {unit} is at or above the {kind} threshold {limit}", provider)


def _below_why(amount: int, unit: str, kind: str, limit: int) -> str:
    """The reason of work placed on the host by its threshold (``place``, ``_walk_why``)."""
    return f"{amount} {unit} is below the {kind} threshold {limit}; inputs are on the host"


def bytes_to_move(kernel: Kernel, placement: Placement, seen: set[tuple[int, bool]] | None = None) -> tuple[int, int]:
    """(bytes uploaded, bytes downloaded) that running ``kernel`` there would cause now
    (``seen``: data already counted for earlier kernels of the same evaluation)."""
    up = down = 0
    seen = set() if seen is None else seen
    for n in kernel.inputs:
        d = n.data
        nbytes = math.prod(n.shape) * n.dtype.itemsize
        if d is None or (id(d), placement.where == "device") in seen:
            continue        # produced by an earlier kernel, or moved for one already
        seen.add((id(d), placement.where == "device"))
        if placement.where == "device" and not d.on_device(placement.provider):
            up += nbytes
        elif placement.where != "device" and d.host is None:
            down += nbytes
    return up, down


def _inputs_on_host(kernel: Kernel) -> list[Any]:
    """The kernel's inputs as host arrays, the small ones of one device downloaded together."""
    return [h.reshape(n.shape) for n, h in zip(kernel.inputs, hosts_of([n.data for n in kernel.inputs]),
                                                strict=True)]


# A fallback's result (rule 2: computed on the host for an array of a GPU) of at most this many bytes is
# uploaded at once, with no wait: the small work that follows it (scikit-learn's sign flips and slices of
# a small decomposition's vectors) then stays on the device by rule 4, fused with the rest and in a
# replayable evaluation, instead of running kernel by kernel on the host.
FALLBACK_UPLOAD = 1 << 20

READ_AHEAD_WHY = "read at once: small work whose device inputs were read ahead to the host"


def _read_on_host(order: list[Node]) -> bool:
    """Whether a reading evaluation of the walk ``order`` runs on the host (the module docstring, before
    rule 4); downloads its device inputs where it does (the caller checks ``offload="auto"``)."""
    pending = [n for n in order if n.data is None]
    if not pending or pending[0].device.provider.host_memory:
        return False
    limit = DEFAULT_THRESHOLDS["elementwise"]
    reads: dict[int, int] = {}                  # leaf serial -> elements its consumers here read
    parts: dict[int, list[Any] | None] = {}     # leaf serial -> its views read here (None: all of it)
    for n in pending:
        if math.prod(n.shape) >= limit:
            return False
        for i in n.inputs:
            if i.data is not None:
                view = n.op == "view"
                reads[i.serial] = reads.get(i.serial, 0) + math.prod(n.shape if view else i.shape)
                seen = parts.setdefault(i.serial, [])
                if not view:
                    parts[i.serial] = None
                elif seen is not None:
                    seen.append(view_part(n.shape, n.attrs))
    if sum(reads.values()) >= limit:
        return False
    device_only = [n for n in order if n.data is not None and n.data.host is None]
    if any(n.data.handle is None or n.data.provider is not pending[0].device.provider for n in device_only):
        return False
    ready = [read_ahead(n.data, reads.get(n.serial, 0) * n.dtype.itemsize, _part(parts.get(n.serial)))
             for n in device_only]
    if not all(ready):
        return False
    for n in device_only:
        n.data.get_host()       # one download each, kept as the host copy
    return True


def _walk_on_host(order: list[Node], live: list[Node], held: set[int] | None,
                  undo: list[tuple[Node, tuple, int]]) -> bool:
    """A read on the host (``_read_on_host``) of a graph ``inprocess.walk_instrs`` takes: its nodes computed in
    walk order with NumPy, no kernels scheduled (a row loop's ``float((b[i] * 2 - b[i - 1]).sum())``): the
    values its kernels would give, without their schedule, placement and kernel objects. ``live`` and the
    breakers ``held`` elsewhere are realized; False, with nothing done, where the walk does not apply."""
    walked = walk_instrs(order)
    if walked is None:
        return False
    instrs, leaves = walked
    at = [p for p, n in enumerate(order)        # walk positions = instruction numbers (walk_instrs)
          if n.data is None and (n in live or (held is not None and n.serial in held))]
    outs = [order[p] for p in at]
    values = run_walk(instrs, hosts_of([n.data for n in leaves]), at)
    for node, arr in zip(outs, values, strict=True):
        _realize(node, Data(node.dtype, node.shape, host=arr), undo)
    _metrics.add("evaluations")
    _metrics.add("host_kernels")
    device = outs[0].device
    _log.append({"kernel": f"host walk of {len(instrs)} nodes -> {outs[0].shape}", "device": device.name,
                 "placed": "host", "why": _walk_why(order, leaves, device), "elements": math.prod(outs[0].shape)})
    return True


def _walk_why(order: list[Node], leaves: list[Node], device: Any) -> str:
    """``_walk_on_host``'s reason, as ``place`` gives it for kernels of the same nodes: the read ahead where
    an input is on the device or the work reaches its threshold, else the threshold."""
    provider = device.provider
    for n in leaves:
        if n.op != "const" and n.data.on_device(provider):
            return READ_AHEAD_WHY
    kind = "reduction" if "reduce" in [n.op for n in order if n.data is None] else "elementwise"
    amount = max([math.prod(n.shape) for n in order])
    limit = thresholds(device)[kind]
    if amount >= limit:
        return READ_AHEAD_WHY
    return _below_why(amount, "elements", kind, limit)


def _part(views: list[Any] | None) -> Any:
    """The read-ahead key of a leaf's views read by one evaluation: a single view's own key (as
    ``host_view`` counts it), several as a tuple; None (every read counts) where it is read whole."""
    if not views:
        return None
    return views[0] if len(views) == 1 else tuple(views)


# one-element views of device data an evaluation for a read takes by element reads (GPUARRAY_ELEMENT_READS=0: none)
ELEMENT_READS = int(os.environ.get("GPUARRAY_ELEMENT_READS", "2"))


def _read_elements(order: list[Node], undo: list[tuple[Node, tuple, int]]) -> bool:
    """Under ``offload="auto"`` (the caller checks), a reading evaluation of a few elements (every pending node at
    most 16) that reads device-only data only through at most ``ELEMENT_READS`` one-element views (SciPy's
    ``is_lazy_array(x)``: ``bool(any(reshape(x, -1)[0]))``, several times a ``scipy.stats`` call): each view is
    realized by one element read (``residency.element``, no kernel) and True is returned; the rest then runs
    on the host (``_read_on_host``). H200: 226 us a ``bool(any(x[0]))`` by a kernel and its read before."""
    pending = [n for n in order if n.data is None]
    if not pending or pending[0].device.provider.host_memory or any(math.prod(n.shape) > 16 for n in pending):
        return False
    views: list[Node] = []
    for n in pending:
        for i in n.inputs:
            if i.data is None or i.data.host is not None:
                continue
            if n.op != "view" or math.prod(n.shape) != 1 or i.data.handle is None or n.dtype != i.dtype:
                return False
            views.append(n)
    if not views or sum(not element_known(v.inputs[0].data, v.attrs[1]) for v in views) > ELEMENT_READS:
        return False
    values = [element(v.inputs[0].data, v.attrs[1]) for v in views]
    if any(x is None for x in values):
        return False
    for v, x in zip(views, values, strict=True):
        _realize(v, Data(v.dtype, v.shape, host=np.asarray(x, dtype=v.dtype).reshape(v.shape)), undo)
    return True


def _device_part_first(kernels: list[Kernel]) -> list[Node]:
    """Where device kernels come before a fallback (rule 2) in ``kernels``: the fallback's pending
    inputs, to evaluate first as an evaluation of their own; else empty. A plan (``replay``) is kept
    only for evaluations wholly on the device, so without this the device work before a fallback
    (PCA's covariance before its ``eigh`` on the host) would be placed and enqueued afresh each time."""
    provider = kernels[0].device.provider
    if len(kernels) < 2 or provider.host_memory:
        return []
    for k in kernels[1:]:
        if k.device.provider is provider and provider.cannot_run(k):
            return [n for n in k.inputs if n.data is None]
    return []


def evaluate_nodes(nodes: Sequence[Node], reading: bool = False) -> None:
    """Realize ``nodes``: schedule their unevaluated graph and run the kernels in order.

    Device kernels are recorded into one compute pass per provider and submitted
    once at the end; a kernel that runs on the host first flushes what its
    inputs depend on (downloads flush on their own). ``reading``: the caller reads
    the results back at once (``float(x)``, ``np.asarray(x)``), so the pass is left
    open for the read's copy to join it (one submit instead of two).
    """
    if _guards.PENDING:
        _guards.resolve()           # checks of results evaluated earlier (guards.py), before anything reads them
    for n in nodes:
        if n.data is None:
            break
    else:
        return                      # every node is evaluated already
    with _lock:
        undo: list[tuple[Node, tuple, int]] = []
        try:
            # a read under offload="auto" may run small work on the host: rewritten one-element reads
            # (sink.py), element reads of device data (_read_elements), then the host walk (_read_on_host)
            auto = reading and _config.get("offload") == "auto"
            try:
                _evaluate(nodes, undo, reading, auto, reading)
            except DeviceLostError:
                raise
            except Exception:
                if not _speculate.state.extra:
                    raise
                _speculate.failed()         # the read alone, as without reads computed ahead
                _evaluate(nodes, undo, reading, auto)
            st = _speculate.state       # reads computed ahead (speculate.py) and small results of the
            extra, st.extra = st.extra, []      # evaluation come back with the read
            if extra or auto and len(undo) > 1:
                read_together([n.data for n in nodes], [u[0].data for u in undo] if auto else (),
                              [e.data for e in extra])
                _speculate.watch(extra)
        except DeviceLostError:
            # The device was lost during this evaluation. What it computed there is gone, but
            # these nodes were realized just now and their inputs are still known: put them
            # back and run once more (the lost provider is replaced by a new one). Inputs whose
            # only copy was on the lost device raise DeviceLostError again.
            for node, inputs, depth in reversed(undo):
                node.data, node.inputs, node.depth = None, inputs, depth
            _evaluate(nodes, [])


def after_upload(node: Node) -> None:
    """An array was uploaded (``asarray`` of host data): where that completes the uploads of a read learned to
    follow them (``speculate.uploaded``), evaluate that read, and the reads it brings with it, now and submit,
    so that the device computes them while the program records the operations that lead to the read. Never
    fails the upload: an error counts in ``speculate.errors`` and that read is not started early again."""
    if not _speculate.ENABLED or replay.capture.on:
        return
    st = _speculate.state
    try:
        nodes = _speculate.uploaded(node)
        if not nodes:
            return
        st.busy = True
        evaluate_nodes(nodes)
        provs = list({id(n.device.provider): n.device.provider for n in nodes}.values())
        datas = [n.data for n in nodes if n.data is not None]
        token = None
        start = getattr(provs[0], "start_read", None)
        if len(provs) == 1 and start is not None and all(device_only(d, provs[0]) for d in datas):
            token = start([(d.handle, d.dtype, d.shape) for d in datas])     # their copies in the same submit
        if token is None:
            for prov in provs:
                prov.flush()            # the device starts now
        _speculate.started(datas, token, provs[0])
    except Exception:  # noqa: BLE001 - starting a read early never fails the upload (speculate.errors counts)
        _speculate.failed_ahead()
    finally:
        st.busy = False


def _sunk_reads(nodes: Sequence[Node], undo: list[tuple[Node, tuple, int]]) -> Sequence[Node]:
    """Read each target that ``sink.rewritten`` rewrites from its rewritten graph, on the host (``_read_elements``,
    then ``_walk_on_host``); the targets left to evaluate as they are."""
    rest = []
    for n in nodes:
        s = rewritten(n) if n.data is None else None
        if s is None:
            rest.append(n)
            continue
        _evaluate([s], undo, True, True)
        if s.data is None:
            rest.append(n)
        else:
            _realize(n, s.data, undo)
    return rest


def _replay(plan: replay.EvalPlan, prov: Any, order: list[Node], undo: list[tuple[Node, tuple, int]],
            reading: bool = False) -> None:
    """Run a recorded evaluation plan (``replay.py``) on ``prov`` and log its decisions."""
    _metrics.add_replayed(plan.dispatches)
    _log.extend(plan.logs)
    done = False
    try:
        plan.run(prov, order, undo)
        done = True
    finally:
        if not done:
            prov.flush()
        elif not reading:
            prov.end_evaluation(quiet=True)     # usable() found nothing profiled or timed


def replay_walk(plan: replay.EvalPlan, order: list[Any]) -> bool:
    """Run ``plan`` over ``order``, a walk its caller built (``array_object/jit.py``: the new
    arguments and fresh output nodes at the positions the plan reads and writes, None elsewhere);
    False, with nothing run, where the plan would not do what a fresh evaluation does now."""
    with _lock:
        prov = plan.usable(order)
        if prov is None:
            return False
        _replay(plan, prov, order, [])
        return True


def _realize(node: Node, data: Data, undo: list[tuple[Node, tuple, int]]) -> None:
    undo.append((node, node.inputs, node.depth))
    node.realize(data)


def _aliased(node: Node, undo: list[tuple[Node, tuple, int]]) -> bool:
    """Realize ``node`` without a kernel where it is the leading elements of evaluated data in C
    order (a view at offset 0 with contiguous strides, as ``x[:k]`` or a result packed before a
    flag): its data then shares the base's buffer (``residency.prefix``)."""
    base = node.inputs[0]
    strides, offset = node.attrs
    if base.data is None or offset != 0 or strides != view_strides(node.shape) or 0 in node.shape:
        return False
    data = prefix(base.data, node.shape)
    if data is None:
        return False
    _realize(node, data, undo)
    return True


def _evaluate(nodes: Sequence[Node], undo: list[tuple[Node, tuple, int]], reading: bool = False,
              auto: bool = False, ahead: bool = False) -> None:
    """Realize ``nodes`` (``evaluate_nodes``); ``auto``: a read under ``offload="auto"`` (see there); ``ahead``:
    a read that may compute the reads after it too (``speculate.py``)."""
    if auto and nodes and candidate(nodes[0]):
        nodes = _sunk_reads(nodes, undo)
    live = [n for n in nodes if n.data is None and not (n.op == "view" and _aliased(n, undo))]
    if not live:
        return
    order, held, key = prepare(live)
    if ahead and key is not None and _speculate.ENABLED and not replay.capture.on:
        try:
            extra = _speculate.reading(order, key, live)
        except Exception:  # noqa: BLE001 - computing reads ahead never fails a read (speculate.errors counts)
            extra = _speculate.failed()
        if extra:
            live += extra
            nodes = [*nodes, *extra]
            order, held, key = prepare(live)
    if auto and _read_elements(order, undo):
        _evaluate(nodes, undo, reading, auto)  # its one-element views of device data are on the host now
        return
    host = auto and _read_on_host(order)
    if host and _walk_on_host(order, live, held, undo):
        return
    plan = replay.lookup(key) if not host else None
    prov = plan.usable(order) if plan is not None else None
    if prov is not None:
        _replay(plan, prov, order, undo, reading)       # type: ignore[arg-type]
        if key[0] is LOOSE:             # type: ignore[index]  # offsets beside the structure (plan_cache)
            replay.replayed(key)        # type: ignore[arg-type]
        if replay.capture.on:
            replay.capture.seen = (plan, order)     # type: ignore[assignment]
        return
    kernels = kernels_for(order, live, held, key)
    if not kernels:
        return
    quiet = _profile.quiet()        # nothing profiled or timed: kernels run unwrapped
    # parts of a kernel too wide for the adapter, or the device work before a fallback (so that it
    # replays), first; then schedule again
    first = _cuts(kernels)
    if not first and quiet and key is not None and replay.ENABLED and not host:
        part = _device_part_first(kernels)
        first = [part] if part else []
    if first:
        for group in first:
            evaluate_nodes(group)
        _evaluate(nodes, undo, reading, auto)
        return
    _metrics.add("evaluations")
    used: dict[int, Any] = {}
    done = False
    # a plan only for evaluations on a device (the host's kernels gain nothing from one)
    rec = replay.Recording(order) if quiet and key is not None and replay.ENABLED and not host and \
        not kernels[0].device.provider.host_memory and replay.worth_recording(key) else None
    try:
        for k in kernels:
            p = place(k)
            if host and p.where == "device":
                p = Placement("host", READ_AHEAD_WHY)
            entry = {"kernel": k.summary(), "device": k.device.name,
                     "placed": p.where, "why": p.why, "elements": k.size}
            _log.append(entry)
            if p.where != "device":
                if rec is not None:
                    rec.ok = False
                outs = run_kernel(k, _inputs_on_host(k)) if quiet else \
                    _profile.timed(k, p.where, None, lambda k=k: run_kernel(k, _inputs_on_host(k)))
                _metrics.add("host_kernels")
                if p.where == "fallback":
                    _metrics.add("host_fallbacks")
                for node, arr in zip(k.out_nodes, outs, strict=True):
                    _realize(node, Data(node.dtype, node.shape, host=arr), undo)
                    if p.where == "fallback" and arr.nbytes <= FALLBACK_UPLOAD and \
                            not k.device.provider.host_memory:
                        try:
                            node.data.get_handle(k.device.provider)     # see FALLBACK_UPLOAD
                        except (DeviceLostError, MemoryError):
                            pass        # only a head start: the result stays on the host as before
                continue
            provider = p.provider
            used[id(provider)] = provider
            ins = [n.data.get_handle(provider) for n in k.inputs]
            program = None
            if rec is not None and rec.wants(provider):
                handles, program = provider.record(k, ins)
            else:
                handles = provider.enqueue(k, ins) if quiet else \
                    _profile.timed(k, p.where, provider, lambda k=k, ins=ins, pr=provider: pr.enqueue(k, ins))
            datas = [Data(node.dtype, node.shape, handle=h, provider=provider)
                     for node, h in zip(k.out_nodes, handles, strict=True)]
            remember(k, datas)          # to compute them again if the device is lost (residency.py)
            if rec is not None and rec.ok:
                rec.add(k, program, datas, entry)
            for node, d in zip(k.out_nodes, datas, strict=True):
                _realize(node, d, undo)
        done = True
        if rec is not None and key is not None:
            made = rec.plan()
            if made is not None:
                replay.store(key, made)
                if replay.capture.on:
                    replay.capture.seen = (made, order)
            else:
                replay.forget(key)
    finally:
        for provider in used.values():
            if done:
                if not reading:
                    provider.end_evaluation()   # submits now, or with later evaluations (small work)
            else:
                provider.flush()
