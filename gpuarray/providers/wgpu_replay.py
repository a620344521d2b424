"""Programs: the commands one kernel's ``enqueue`` recorded, replayed without the enqueue.

Enqueueing a kernel works out its layout, renders or looks up its shader, fills its parameters and
binds its buffers: tens of Python calls per kernel. For a kernel of the same structure and shapes
(``replay.py`` decides that, by the graph's structural key) all of that comes out the same except the
buffers and the values of scalar constants, whose places the recording notes (``ConstUses``, from
``render/const_tags.py``) so that a replay can write new ones there. So while the planner enqueues a kernel it may
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

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..render import const_tags
from .wgpu_split import GpuHandle

# step kinds
ALLOC, FREE, DATA, DISPATCH, SUBMIT = 0, 1, 2, 3, 4
# buffer references of a dispatch: (kind, index, offset, size); size None binds the whole buffer
IN, OWN, RAW, STATIC = 0, 1, 2, 3


class Recorder:
    """Collects what one ``enqueue`` does (the provider calls these while ``provider._recorder`` is set)."""

    __slots__ = ("inputs", "allocs", "datas", "statics", "steps", "ok", "tags", "matched", "consts", "dispatches")

    def __init__(self, inputs: Sequence[Any]) -> None:
        self.inputs = list(inputs)
        self.allocs: list[GpuHandle] = []
        self.datas: list[Any] = []
        self.statics: list[Any] = []        # provider.static_buffer's buffers (kept by the provider)
        self.steps: list[tuple] = []
        self.ok = all(type(h) is GpuHandle for h in inputs) and \
            len({id(h.buffer) for h in inputs}) == len(inputs)     # one buffer per input
        self.tags: list[tuple[Any, list[tuple]]] = []   # const_tags.sink.tags during the enqueue
        self.matched: set[int] = set()      # the tags' entries found in a dispatch (by position)
        self.consts = ConstUses()
        self.dispatches = 0                 # dispatch steps so far

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
        if self.tags:
            self._places(prm, refs)
        words = prm if prm.dtype == np.uint32 else np.ascontiguousarray(prm).view(np.uint32)
        self.steps.append((DISPATCH, pipeline, layout, np.array(words, copy=True).ravel(), tuple(refs),
                           gx, gy, nbytes))
        self.dispatches += 1

    def _places(self, prm: np.ndarray, refs: list[tuple]) -> None:
        """Note where this dispatch (the next) holds constants: words of ``prm``, 64-bit arrays."""
        d = self.dispatches
        for e, (obj, tags) in enumerate(self.tags):
            if obj is prm:
                self.matched.add(e)
                for w, params, dtype, part in tags:
                    self.consts.words.append((d, w, self.consts.index(params), dtype, part))
                continue
            for k, r in enumerate(refs):
                if r[0] == STATIC and r[1] is obj:
                    self.matched.add(e)
                    arr = np.dtype(np.float64) if tags[0][3] is not None else tags[0][2]
                    self.consts.wides.append((d, k, arr, [(self.consts.index(params), part)
                                                          for _j, params, _dt, part in tags]))

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
        for e, (_obj, tags) in enumerate(self.tags):
            if e not in self.matched:       # went elsewhere than a dispatch's prm or bindings
                self.consts.unsafe.update(self.consts.index(t[1]) for t in tags)
        return Program(self.steps, tuple(ids), self.consts)


class ConstUses:
    """Where a program's dispatches hold the kernel's scalar constants (``render/const_tags.py``), so
    that a replay can give them new values: ``params`` of each constant (its instruction's, as
    recorded); ``words``: (dispatch, word of its prm, constant, dtype, part); ``wides``: (dispatch,
    binding among its buffers, the array's dtype, [(constant, part) of each element]); ``unsafe``: the
    constants that went somewhere else too (those programs replay only with the recorded values)."""

    __slots__ = ("params", "words", "wides", "unsafe")

    def __init__(self) -> None:
        self.params: list[tuple] = []
        self.words: list[tuple[int, int, int, np.dtype, int | None]] = []
        self.wides: list[tuple[int, int, np.dtype, list[tuple[int, int | None]]]] = []
        self.unsafe: set[int] = set()

    def index(self, params: tuple) -> int:
        for i, p in enumerate(self.params):
            if p is params:
                return i
        self.params.append(params)
        return len(self.params) - 1


class Program:
    """What one kernel's enqueue did, to do again over new input buffers (``run``).

    Its dispatches' parameter words are one block (``_block``), written once to a place of its own
    (``ParamArena.static``; the pass's arena for blocks too large for one), each dispatch's at a fixed
    distance from the block's start; and while a run binds the
    same buffers as one of the last ``SLOTS`` runs (inputs, allocations from the pool, the parameter
    buffer: the pool hands a program's buffers back in reverse order, so that runs alternate between
    two assignments), each dispatch binds the bind group it bound then, without building the bound
    ranges or looking them up in the bind-group cache: a long chain of dispatches (the linear
    algebra's) costs the three pass commands a dispatch."""

    __slots__ = ("steps", "outs", "dispatches", "consts", "_layout", "_slots", "_static", "_seen")

    SLOTS = 2
    SEEN = 64           # 64-bit constant arrays remembered by value (``_patched``)

    def __init__(self, steps: list[tuple], outs: tuple[int, ...], consts: ConstUses | None = None) -> None:
        self.steps = tuple(steps)
        self.outs = outs
        self.consts = consts or ConstUses()
        self.dispatches = sum(1 for s in steps if s[0] == DISPATCH)
        self._layout: tuple[int, np.ndarray, list[tuple[int, int]]] | None = None
        # the last runs that finished, newest first: (input buffers, arena buffer, allocated buffers,
        # the bind group of each dispatch, None where it bound a buffer made for that run)
        self._slots: list[tuple[list[Any], Any, list[Any], list[Any]]] = []
        # the block's fixed place (``ParamArena.static``): (the arena, weakly; its buffer; the offset)
        self._static: tuple[Any, Any, int] | None = None
        self._seen: set[tuple] = set()

    def _block(self, align: int) -> tuple[int, np.ndarray, list[tuple[int, int]]]:
        """(``align``, every dispatch's words at multiples of ``align`` bytes, (offset, size) of each)."""
        at: list[tuple[int, int]] = []
        words: list[np.ndarray] = []
        off = 0
        for s in self.steps:
            if s[0] == DISPATCH:
                size = s[3].nbytes or 4
                at.append((off, size))
                words.append(s[3])
                off += -(-size // align) * align
        block = np.zeros(max(off, align) // 4, dtype=np.uint32)
        for (o, _size), w in zip(at, words, strict=True):
            block[o // 4:o // 4 + w.size] = w
        self._layout = (align, block, at)
        return self._layout

    def _patched(self, provider: Any, block: np.ndarray, at: list[tuple[int, int]],
                 new: dict[int, tuple]) -> tuple[Any, int, dict[tuple[int, int], Any]]:
        """The parameter block with the constants ``new`` (constant -> its new params) in place of the
        recorded ones, put into the pass's arena: (buffer, offset, the ranges holding the 64-bit
        constant arrays with new values, by dispatch and binding). Such an array of values met before
        (``_seen``: a loop over a few values) is the provider's buffer kept for them (``static_buffer``,
        made at the second meeting), else it goes into the arena too, with the parameters' one upload a
        submit (a ``static_buffer`` of each new value would create a buffer and a bind group a call; the
        arena's range makes a bind group only where its offset is new)."""
        arena, keep = provider.params, provider._keep
        seen = self._seen
        block = block.copy()
        for d, w, c, dtype, part in self.consts.words:
            p = new.get(c)
            if p is not None:
                block[at[d][0] // 4 + w] = const_tags.word(p, dtype, part)
        pbuf, base, _size = arena.put(block, keep)
        wides: dict[tuple[int, int], Any] = {}
        params = self.consts.params
        for d, k, dtype, elems in self.consts.wides:
            if any(c in new for c, _part in elems):
                v = np.array([const_tags.wide(new.get(c, params[c]), part) for c, part in elems], dtype=dtype)
                key = ("wide", v.dtype.str, v.tobytes())
                if key in seen:
                    wides[(d, k)] = provider.static_buffer(key, lambda v=v: v)
                else:
                    if len(seen) >= self.SEEN:
                        seen.clear()
                    seen.add(key)
                    wides[(d, k)] = arena.put(v.view(np.uint32), keep)
        return pbuf, base, wides

    def run(self, provider: Any, ins: Sequence[Any], new: dict[int, tuple] | None = None) -> list[Any]:
        """Record the program into ``provider``'s open pass reading ``ins`` (with the constants
        ``new``: constant -> its params, where they differ from the recorded ones); returns the
        output handles. The caller holds the provider's lock and guard."""
        own: list[Any] = []
        raw: list[Any] = []
        pbuf = None
        base = 0
        at: list[tuple[int, int]] = []
        live: list[Any] = []                # the slots whose buffers this run has bound so far
        ibufs: list[Any] = []
        wides: dict[tuple[int, int], Any] = {}
        if self.dispatches:
            if provider._pass is None:
                provider._begin()
            arena = provider.params
            lay = self._layout
            if lay is None or lay[0] != arena.align:
                lay = self._block(arena.align)
                self._static = None
            at = lay[2]
            st = self._static
            if new:                             # new constants: this run's own words
                pbuf, base, wides = self._patched(provider, lay[1], at, new)
            else:
                if st is None or st[0]() is not arena:
                    placed = arena.static(lay[1])
                    st = self._static = None if placed is None else (weakref.ref(arena), *placed)
                if st is not None:                  # written once, at the first replay
                    pbuf, base = st[1], st[2]
                else:
                    pbuf, base, _size = arena.put(lay[1], provider._keep)
            for h in ins:
                ibufs += (h.buffer,)
            for slot in self._slots:
                if slot[1] is pbuf and slot[0] == ibufs:    # list ==: identity first, then __eq__ (identity)
                    live += (slot,)
        bufs: list[Any] = []                # this run's allocated buffers
        binds: list[Any] = [None] * self.dispatches
        d = 0
        for s in self.steps:
            kind = s[0]
            if kind == DISPATCH:
                _, pipeline, layout, words, refs, gx, gy, nbytes = s
                bind = live[0][3][d] if live else None
                if bind is None or wides:
                    bound: list[Any] = [(pbuf, 0, at[d][1])]
                    whole = False
                    k = 0
                    for r, i, off, size in refs:
                        if r == IN:
                            bound += ((ins[i].buffer, off, size),)
                        elif r == OWN:
                            bound += ((own[i].buffer, off, size),)
                        elif r == STATIC:
                            bound += (wides.get((d, k)) or (i, off, size),)
                        else:
                            bound += ((raw[i], off, size) if size is not None else raw[i],)
                            whole = True
                        k += 1
                    bind = provider.group_for(layout, bound, not whole)     # whole: a new buffer each run
                    if not whole and not wides:     # (new 64-bit constants: not this slot's bind group)
                        binds[d] = bind
                else:
                    binds[d] = bind
                if provider._pass is None:      # after a submit step
                    provider._begin()
                provider._pass_dispatches += 1
                provider._pass_bytes += nbytes
                provider._rec.dispatch(pipeline, bind, base + at[d][0], gx, gy)
                d += 1
            elif kind == ALLOC:
                h = provider.alloc_class(s[3], s[1], s[2])
                j = len(bufs)
                own += (h,)
                bufs += (h.buffer,)
                if live:
                    keep: list[Any] = []
                    for slot in live:
                        if j < len(slot[2]) and slot[2][j] is h.buffer:
                            keep += (slot,)
                    live = keep
            elif kind == FREE:
                provider._free(own[s[1]])        # the lock is held: no queueing
            elif kind == SUBMIT:
                provider.submit_early(0)         # where the enqueue submitted (submit_early)
            else:
                raw += (provider.data_buffer(s[1]),)
        if self.dispatches and not live:        # a new assignment of buffers: kept, the oldest dropped
            self._slots = [(ibufs, pbuf, bufs, binds), *self._slots[:self.SLOTS - 1]]
        return [own[j] for j in self.outs]
