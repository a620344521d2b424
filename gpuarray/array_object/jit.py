"""``gpuarray.jit``: a function whose repeated calls replay one recorded evaluation.

An ordinary call of array code records its graph operation by operation (a few microseconds of
Python each) and the planner then finds the evaluation plan it kept for that structure
(``runtime/replay.py``). A function wrapped in ``jit`` skips the recording too: its first call
with a new signature runs the function as usual, evaluates its results and keeps the plan the
planner ran, with the walk positions of the arguments and results; a later call with arrays of the
same shapes, dtypes and devices (and equal other arguments) runs that plan over the new argument
buffers into fresh results, without calling the function. This is what ``jax.jit`` and
``torch.compile`` do, and their rules apply:

- array arguments are evaluated before the call (the compiled work starts at them);
- arrays the function reads that are not among its arguments (globals, closures) and constants are
  part of what was recorded: a later change to such an array is not seen (pass it as an argument);
- other arguments are compared by value (they must be hashable; an unhashable one, such as a NumPy
  array, makes the call an ordinary one);
- a view of another array passed as an argument (``f(x[i:i + n])``) and indexed again inside the function
  reads the array it is a view of (views of views are taken on their base, as NumPy's): such a call is an
  ordinary one, since a replay would read the first call's window;
- writes into array arguments (``u[1:-1] = ...``, a stencil's step) are replayed as well, as PyTorch's
  functionalization does: the argument's new value is one more result of the recorded evaluation, given
  to the argument (and to the views of it that exist) after each replay; the function may then return
  nothing, or the written argument itself. The written arguments must be whole arrays, not views, and
  no two array arguments may share memory.

A call is an ordinary call, recorded and evaluated as without ``jit``, where replaying could differ
from it: the function read a value while tracing (``float(x.sum())``, ``if x.any():``), wrote into
an argument that is a view or shares memory with another argument, drew random numbers
(``gpuarray.random``: a replay would repeat the first call's draws), returned something other than
new arrays (a tuple, list or dict of them is fine; a view of a written argument is not), or its
evaluation could not be recorded (work placed on the host, the cpu device); and, for that call only,
where the plan is not usable now (the settings changed, the device was lost).

>>> import numpy as np, gpuarray as xp
>>> @xp.jit
... def softmax(x):
...     e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
...     return e / xp.sum(e, axis=-1, keepdims=True)
>>> x = xp.asarray(np.zeros((2, 4), np.float32), device="wgpu:0")
>>> [softmax(x + i).tolist()[0][0] for i in range(3)]    # the second and third replay the first
[0.25, 0.25, 0.25]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Sequence
from typing import Any

from ..core import metrics as _metrics
from ..core.errors import DeviceLostError
from ..graph.node import Node
from ..runtime import planner, replay
from .aliasing import assign
from .array import GpuArray

_ORDINARY = None        # a signature whose calls are ordinary calls
_UNUSABLE: Any = object()   # a replay that did not run (its call is traced again)
_WRITTEN = "written"    # an entry's shape for a function returning nothing or its written argument (outs[0]; -1: None)


class _Entry:
    """What a traced call left: the plan, the walk with the kept nodes, the argument positions,
    the fresh nodes' descriptions and how to rebuild the result."""

    __slots__ = ("plan", "template", "args", "fresh", "outs", "shape", "writes")

    def __init__(self, plan: Any, template: list[Any], args: tuple, fresh: tuple, outs: tuple,
                 shape: Any, writes: tuple = ()) -> None:
        self.plan = plan
        self.template = template        # kept leaves (constants, arrays read from outside) or None
        self.args = args                # ((argument index, walk position), ...)
        self.fresh = fresh              # ((walk position, dtype, shape, device), ...)
        self.outs = outs                # walk position of each result
        self.shape = shape              # None: one array; else (type, keys or length)
        self.writes = writes            # ((argument index, walk position of its new value), ...)

    def run(self, leaves: list[GpuArray]) -> Any:
        if self.writes and not _writable(leaves, [i for i, _p in self.writes]):
            return _UNUSABLE            # traced with whole arrays, called with a view or shared memory
        order = list(self.template)
        for i, p in self.args:
            order[p] = leaves[i]._node
        for p, dt, shape, dev in self.fresh:
            order[p] = Node("leaf", (), dt, shape, (), dev)
        try:
            if not planner.replay_walk(self.plan, order):
                return _UNUSABLE
        except DeviceLostError:
            return _UNUSABLE            # an ordinary call recovers as evaluate_nodes does
        for i, p in self.writes:
            assign(leaves[i], order[p])
        if self.shape is _WRITTEN:
            return None if self.outs[0] < 0 else leaves[self.outs[0]]
        return _rebuild(self.shape, [GpuArray(order[p]) for p in self.outs])


def _rebuild(shape: Any, arrays: list[GpuArray]) -> Any:
    if shape is None:
        return arrays[0]
    kind, keys = shape
    if kind is dict:
        return dict(zip(keys, arrays, strict=True))
    return kind(arrays)


def _results(out: Any) -> tuple[list[GpuArray], Any] | None:
    """(the result arrays, their structure) of a result that is an array or a tuple, list or dict
    of arrays; None for anything else."""
    if isinstance(out, GpuArray):
        return [out], None
    if type(out) in (tuple, list) and out and all(isinstance(a, GpuArray) for a in out):
        return list(out), (type(out), len(out))
    if type(out) is dict and out and all(isinstance(a, GpuArray) for a in out.values()):
        return list(out.values()), (dict, tuple(out))
    return None


def _signature(args: tuple, kwargs: dict) -> tuple[list[GpuArray], tuple | None]:
    """(the array arguments in order, the call's key or None where an argument is not hashable).
    Arrays enter the key by shape, dtype, device and which earlier array argument is the same
    array (a plan reads one buffer for both); other arguments by type and value; tuples and lists
    one level deep."""
    leaves: list[GpuArray] = []
    seen: dict[int, int] = {}
    parts: list[Any] = []

    def add(a: Any) -> Any:
        if isinstance(a, GpuArray):
            n = a._node
            same = seen.setdefault(id(n), len(leaves))
            leaves.append(a)
            return (n.shape, n.dtype, n.device, same)
        return (type(a), a)

    for a in args:
        parts.append(tuple(add(v) for v in a) + (type(a),) if type(a) in (tuple, list) else add(a))
    for k in sorted(kwargs):
        v = kwargs[k]
        parts.append((k, tuple(add(e) for e in v) + (type(v),) if type(v) in (tuple, list) else add(v)))
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:
        return leaves, None
    return leaves, key


def _realize_args(leaves: Sequence[GpuArray]) -> None:
    lazy = [a._node for a in leaves if a._node.data is None]
    if lazy:
        planner.evaluate_nodes(lazy)


class Jitted:
    """The callable ``jit`` returns (see the module docstring); ``clear()`` forgets what it kept."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise TypeError(f"jit: expected a function; got {type(fn).__name__}")
        self._fn = fn
        self._cache: dict[tuple, _Entry | None] = {}
        functools.update_wrapper(self, fn)

    def clear(self) -> None:
        """Forget every recorded signature (the next calls trace again)."""
        self._cache.clear()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, key = _signature(args, kwargs)
        if key is None:
            return self._fn(*args, **kwargs)
        _realize_args(leaves)
        entry = self._cache.get(key, _trace_marker)
        if entry is _trace_marker:
            return self._trace(key, leaves, args, kwargs)
        if entry is _ORDINARY:
            return self._fn(*args, **kwargs)
        out = entry.run(leaves)
        return self._trace(key, leaves, args, kwargs) if out is _UNUSABLE else out

    def _trace(self, key: tuple, leaves: list[GpuArray], args: tuple, kwargs: dict) -> Any:
        before = [a._node for a in leaves]
        evaluations = _metrics.metrics()["evaluations"]
        out = self._fn(*args, **kwargs)
        self._cache[key] = _ORDINARY
        if _metrics.metrics()["evaluations"] != evaluations:
            return out                  # read a value
        written = [i for i, (a, n) in enumerate(zip(leaves, before, strict=True)) if a._node is not n]
        if written and not _writable(leaves, written):
            return out                  # wrote into a view, or into memory another argument shares
        if written and (out is None or any(out is leaves[i] for i in written)):
            arrays: list[GpuArray] = []
            shape: Any = _WRITTEN
            ret = next((i for i in written if out is leaves[i]), -1)
        else:
            found = _results(out)
            if found is None:
                return out              # returned something else
            arrays, shape = found
            ret = -1
        if written and any(a._view is not None and a._view.storage is leaves[i]._view.storage
                           for a in arrays for i in written if leaves[i]._view is not None):
            return out                  # a view of a written argument: a replay's result would not share its memory
        nodes = [a._node for a in arrays]
        wnodes = [leaves[i]._node for i in written]
        if any(n.data is not None for n in nodes + wnodes) or len({id(n) for n in nodes + wnodes}) != \
                len(nodes) + len(wnodes):
            return out                  # a result that is an argument (realized or written), computed, or twice
        live = nodes + wnodes
        replay.capture.on, replay.capture.seen = True, None
        try:
            planner.evaluate_nodes(live)
            seen = replay.capture.seen
        finally:
            replay.capture.on, replay.capture.seen = False, None
        if seen is not None:
            # the nodes views of view arguments were taken on (aliasing.node_at: a view's view reads its base)
            bases = {id(a._view.storage.node) for a in leaves if a._view is not None and not a._view.identity}
            entry = _entry(seen[0], seen[1], before, live, shape, bases)
            if entry is not None:
                k = len(nodes)
                entry.writes = tuple(zip(written, entry.outs[k:], strict=True))
                entry.outs = entry.outs[:k] if shape is not _WRITTEN else (ret,)
                self._cache[key] = entry
        return out


def _writable(leaves: list[GpuArray], written: list[int]) -> bool:
    """Whether a replay can give the ``written`` arguments their new values: each a whole array (not a
    view, nor the real or imaginary part of one), and no array argument sharing memory with another."""
    for i in written:
        info = leaves[i]._view
        if info is not None and not (info.identity and info.writeable):
            return False
    stores = [id(a._view.storage) if a._view is not None else id(a) for a in leaves]
    return len(set(stores)) == len(stores)


_trace_marker: Any = object()


def _entry(plan: Any, order: Sequence[Any], arg_nodes: list[Node], out_nodes: list[Node], shape: Any,
           bases: Collection[int] = ()) -> _Entry | None:
    """The entry for a call whose evaluation ran ``plan`` over ``order``; None where the plan does
    not cover the results, reads a node that is neither an argument nor evaluated already, or reads
    one of ``bases`` (ids of the nodes view arguments are views of) other than as an argument."""
    if any(n.op == "random" for n in order):
        return None                     # a draw: replaying would repeat its numbers
    pos = {id(n): p for p, n in enumerate(order)}
    made = {p for st in plan.steps for p in st.outputs}
    read = {p for st in plan.steps for p in st.inputs} | {c[0] for c in plan.consts}
    read |= {p for group in plan.resident for p in group}
    args = tuple((i, pos[id(n)]) for i, n in enumerate(arg_nodes) if id(n) in pos)
    at_args = {p for _, p in args}
    outs = tuple(pos.get(id(n), -1) for n in out_nodes)
    if any(p not in made for p in outs):
        return None
    template: list[Any] = [None] * len(order)
    for p in read - made - at_args:
        if order[p].data is None and p not in {c[0] for c in plan.consts} or id(order[p]) in bases:
            return None
        template[p] = order[p]
    fresh = tuple((p, order[p].dtype, order[p].shape, order[p].device) for p in sorted(made))
    return _Entry(plan, template, args, fresh, outs, shape)


def jit(fn: Callable[..., Any]) -> Jitted:
    """``fn`` compiled: calls with arrays of the shapes, dtypes and devices of an earlier call replay
    that call's evaluation without recording the graph (see the module docstring).

    >>> import gpuarray as xp
    >>> f = xp.jit(lambda a, b: a * b + 1)
    >>> f(xp.ones(3, device="wgpu:0"), xp.ones(3, device="wgpu:0")).tolist()
    [2.0, 2.0, 2.0]
    """
    return Jitted(fn)
