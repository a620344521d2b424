"""Programs: the commands one kernel's ``enqueue`` recorded, replayed without the enqueue.

Enqueueing a kernel works out its layout, renders or looks up its shader, fills its parameters and
binds its buffers: tens of Python calls per kernel. For a kernel of the same structure, shapes and
constants (``replay.py`` decides that, by the graph's structural key and the constant nodes' identity)
all of that comes out the same except the buffers. So while the planner enqueues a kernel it may
record it (``Recorder``: the provider's ``alloc``, ``free``, ``data_buffer`` and ``dispatch`` report to
it), and a later evaluation runs the ``Program`` with new input buffers: the same allocations from
the pool, the same parameter words, pipelines and workgroup counts, bind groups over the new
buffers (from the bind-group cache when the pool hands out the same buffers again).

A submit from inside the enqueue (``provider.submit_early``, long chains of dispatches) is a step of
the program too. A kernel whose enqueue does anything else (uploads, downloads or other submits,
binds a buffer that is neither an input nor one it allocated, runs over segmented arrays) is not
recorded: ``Recorder.ok`` is then False and that evaluation is never replayed.

>>> import numpy as np, gpuarray as xp
>>> x = xp.asarray(np.ones(8, np.float32), device="wgpu:0")
>>> with xp.config(offload="always"):
...     for _ in range(3):
...         y = x * 2 + 1; xp.evaluate(y)
>>> y.tolist()[:2]
[3.0, 3.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .wgpu_split import GpuHandle

# step kinds
ALLOC, FREE, DATA, DISPATCH, SUBMIT = 0, 1, 2, 3, 4
# buffer references of a dispatch: (kind, index, offset, size); size None binds the whole buffer
IN, OWN, RAW, STATIC = 0, 1, 2, 3


class Recorder:
    """Collects what one ``enqueue`` does (the provider calls these while ``provider._recorder`` is set)."""

    __slots__ = ("inputs", "allocs", "datas", "statics", "steps", "ok")

    def __init__(self, inputs: Sequence[Any]) -> None:
        self.inputs = list(inputs)
        self.allocs: list[GpuHandle] = []
        self.datas: list[Any] = []
        self.statics: list[Any] = []        # provider.static_buffer's buffers (kept by the provider)
        self.steps: list[tuple] = []
        self.ok = all(type(h) is GpuHandle for h in inputs) and \
            len({id(h.buffer) for h in inputs}) == len(inputs)     # one buffer per input

    def alloc(self, handle: Any, nbytes: int, reuse: bool, cls: int) -> None:
        self.allocs.append(handle)
        self.steps.append((ALLOC, nbytes, reuse, cls))

    def free(self, handle: Any) -> None:
        for j, h in enumerate(self.allocs):
            if h is handle:
                self.steps.append((FREE, j))
                return
        # the garbage collector freed something else meanwhile: not part of this kernel

    def data(self, values: np.ndarray, buffer: Any) -> None:
        self.datas.append(buffer)
        self.steps.append((DATA, np.array(values, copy=True)))

    def static(self, buffer: Any) -> None:
        self.statics.append(buffer)

    def submit(self) -> None:
        self.steps.append((SUBMIT,))

    def dispatch(self, pipeline: Any, layout: Any, prm: np.ndarray, buffers: Sequence[Any], gx: int,
                 gy: int, nbytes: int) -> None:
        if not self.ok:
            return
        refs: list[tuple] = []
        for b in buffers:
            if isinstance(b, GpuHandle):
                ref = self._ref(b.buffer, 0, max(b.nbytes, 16))
            elif isinstance(b, tuple):
                ref = self._ref(*b)
            else:
                ref = self._ref(b, 0, None)
            if ref is None:
                self.ok = False
                return
            refs.append(ref)
        words = prm if prm.dtype == np.uint32 else np.ascontiguousarray(prm).view(np.uint32)
        self.steps.append((DISPATCH, pipeline, layout, np.array(words, copy=True).ravel(), tuple(refs),
                           gx, gy, nbytes))

    def _ref(self, buffer: Any, offset: int, size: int | None) -> tuple | None:
        for i, h in enumerate(self.inputs):
            if h.buffer is buffer:
                return (IN, i, offset, size)
        for j, h in enumerate(self.allocs):
            if h.buffer is buffer:
                return (OWN, j, offset, size)
        for j, b in enumerate(self.datas):
            if b is buffer:
                return (RAW, j, offset, size)
        for b in self.statics:
            if b is buffer:
                return (STATIC, b, offset, size)     # the buffer itself: it outlives the program
        return None

    def program(self, outs: Sequence[Any]) -> Program | None:
        """The recorded program returning ``outs`` (handles it allocated), or None if not replayable."""
        if not self.ok:
            return None
        ids = []
        for o in outs:
            j = next((j for j, h in enumerate(self.allocs) if h is o), None)
            if j is None:
                return None
            ids.append(j)
        return Program(self.steps, tuple(ids))


class Program:
    """What one kernel's enqueue did, to do again over new input buffers (``run``)."""

    __slots__ = ("steps", "outs", "dispatches")

    def __init__(self, steps: list[tuple], outs: tuple[int, ...]) -> None:
        self.steps = tuple(steps)
        self.outs = outs
        self.dispatches = sum(1 for s in steps if s[0] == DISPATCH)

    def run(self, provider: Any, ins: Sequence[Any]) -> list[Any]:
        """Record the program into ``provider``'s open pass reading ``ins``; returns the output
        handles. The caller holds the provider's lock and guard."""
        own: list[Any] = []
        raw: list[Any] = []
        for s in self.steps:
            kind = s[0]
            if kind == DISPATCH:
                _, pipeline, layout, words, refs, gx, gy, nbytes = s
                bound: list[Any] = []
                whole = False
                for r, i, off, size in refs:
                    if r == IN:
                        bound += ((ins[i].buffer, off, size),)
                    elif r == OWN:
                        bound += ((own[i].buffer, off, size),)
                    elif r == STATIC:
                        bound += ((i, off, size),)
                    else:
                        bound += ((raw[i], off, size) if size is not None else raw[i],)
                        whole = True
                bind, poff = provider.bind(layout, words, bound, nbytes, not whole)
                provider._rec.dispatch(pipeline, bind, poff, gx, gy)
            elif kind == ALLOC:
                own += (provider.alloc_class(s[3], s[1], s[2]),)
            elif kind == FREE:
                provider._free(own[s[1]])        # the lock is held: no queueing
            elif kind == SUBMIT:
                provider.submit_early(0)         # where the enqueue submitted (submit_early)
            else:
                raw += (provider.data_buffer(s[1]),)
        return [own[j] for j in self.outs]
