"""Reads that follow reads: the next small reads of a loop computed with the read before them.

A loop body that reads several results one after another, each recorded only after the read before it
returned, pays a device round trip (an evaluation, a submit, a wait) for each. scikit-learn's
``LinearModelLoss.loss_gradient``, called by SciPy's L-BFGS at every iteration, reads ``float(loss)``;
then records ``G /= n`` and ``G.T @ X`` and reads that; then records ``sum(G, axis=0)`` and reads it:
three round trips an iteration, where ``G`` and everything the two later reads need exist (pending, or
computed by the first read) when the first one is evaluated.

So each reading evaluation is remembered by its structural key (``compiler/plan_cache.py``), and the
reading evaluation that came right after one with key K is learned as a template over K's walk: its
walk with each leaf named by its position in the walk of one of the two reads before it (or a constant
made again, or data that must be the same object), each other node by its op, attributes and the
template positions of its inputs. When a read of key K is evaluated again, its follower's template is
made over this walk (``graph.node.make``: hash-consed, so nodes the program made already are those
nodes), and the follower's follower over that, up to ``DEPTH`` reads ahead; their results join the
read's evaluation and come back in the same mapping (``residency.read_together``), and the nodes made
are kept alive until the next read. When the program then records those operations, ``make`` returns
the nodes made here, already computed and on the host: the reads cost no round trip.

Nodes are immutable values of their op and inputs, so a speculated result that the program does not
ask for is wasted work, never a wrong one. A follower evaluated for real right after it was speculated
(the program's operations differed: another constant, another input) counts a miss; after ``MISSES`` it
is not speculated again. Only followers whose results are small (``MAX_BYTES``), whose walks are small
(``MAX_NODES``) and that draw no random numbers are learned; ``GPUARRAY_SPECULATE=0`` turns it off.

>>> import numpy as np, gpuarray as xp
>>> x = xp.asarray(np.arange(6.0))
>>> [float(xp.sum(x * k)) for k in (1.0, 2.0)]
[15.0, 30.0]
"""

from __future__ import annotations

import math
import os
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from ..compiler.plan_cache import LOOSE
from ..graph.node import Node, make
from .residency import WATCHED

ENABLED = os.environ.get("GPUARRAY_SPECULATE", "1") != "0"
DEPTH = 2               # reads computed ahead of one read
MAX_BYTES = 16384       # a speculated result at most this large (it comes back with the read)
MAX_NODES = 160         # a follower's walk at most this long
MISSES = 3              # a follower evaluated for real this often after being speculated is not speculated again
CAPACITY = 256          # followers kept; the table is emptied when it is full
_IMPURE = frozenset({"random"})
_BLOCKED: Any = object()        # a key whose follower is not speculated (itself, too large, missed)
errors = 0                      # errors while computing reads ahead (each read then ran alone: ``failed``)


class Template:
    """A follower's walk over the walks of the reads before it (see the module docstring)."""

    __slots__ = ("key", "steps", "targets", "misses", "others")

    def __init__(self, key: tuple, steps: list[tuple], targets: tuple[int, ...]) -> None:
        self.key = key              # the follower's structural key
        self.steps = steps          # per walk position: (0, back, pos) | (1, op, ins, dtype, shape, attrs, device)
        self.targets = targets      # | (2, weakref to data that must be that object)
        self.misses = 0             # evaluated for real right after it was speculated
        self.others = 0             # times another read came after the one it follows

    def made(self, ctx: Sequence[Sequence[Node]]) -> list[Node] | None:
        """The follower's walk over ``ctx`` (the walks before it, most recent first); None where a step
        names a walk not in ``ctx`` or data that is gone."""
        out: list[Node] = []
        for st in self.steps:
            kind = st[0]
            if kind == 1:
                out.append(make(st[1], tuple([out[i] for i in st[2]]), st[3], st[4], st[5], st[6]))
            elif kind == 0:
                if st[1] >= len(ctx):
                    return None
                out.append(ctx[st[1]][st[2]])
            else:
                n = st[1]()
                if n is None or n.data is None:
                    return None
                out.append(n)
        return out


def learn(order: Sequence[Node], live: Sequence[Node], key: tuple, before: Sequence[Sequence[int]]) -> Template | None:
    """The template of the read walked into ``order`` (targets ``live``, key ``key``) over the walks before it
    (``before``, most recent first: each node's serial, negated where that walk's evaluation did not compute
    the node: evaluated before it, or a constant); None where it is not worth speculating: it reads nothing
    that the reads before it computed (a later call's read of the same inputs: computing it ahead would only
    repeat the last one)."""
    if len(order) > MAX_NODES:
        return None
    maps = [{abs(s): (p, s > 0) for p, s in enumerate(serials)} for serials in before]
    pos: dict[int, int] = {}
    steps: list[tuple] = []
    anchored = False
    for p, n in enumerate(order):
        pos[n.serial] = p
        if n.op in _IMPURE:
            return None
        if n.data is None and n.inputs:
            steps.append((1, n.op, tuple([pos[i.serial] for i in n.inputs]), n.dtype, n.shape, n.attrs, n.device))
            continue
        step = None
        for back, m in enumerate(maps):
            found = m.get(n.serial)
            if found is not None:
                step = step or (0, back, found[0])          # at its place in the most recent walk, computed
                anchored = anchored or found[1]             # by any of them
        if step is not None:
            steps.append(step)
        else:
            if n.data is not None:
                steps.append((2, weakref.ref(n)))
            elif n.skey is None:
                return None             # (made outside graph.node.make: not made again by it)
            else:
                steps.append((1, n.op, (), n.dtype, n.shape, n.attrs, n.device))
    if not anchored or any(math.prod(t.shape) * t.dtype.itemsize > MAX_BYTES for t in live):
        return None
    return Template(key, steps, tuple([pos[t.serial] for t in live]))


def _marks(walk: Sequence[Node]) -> list[int]:
    """Each node's serial, negated where the walk's evaluation does not compute it (evaluated before, or a
    constant): ``learn``'s ``before`` (operators, not calls: this runs for every read)."""
    out: list[int] = []
    for n in walk:
        out += (n.serial if n.inputs and n.data is None else -n.serial,)
    return out


class _State(threading.local):
    """This thread's reads."""

    def __init__(self) -> None:
        self.recent: list[tuple[tuple, list[int]]] = []   # (key, walk serials: learn's ``before``), last reads
        self.watched: list[tuple[Template, Node]] = []     # followers computed ahead at the last read, results
        self.kept: list[Node] = []                         # their walks, alive until the next read
        self.extra: list[Node] = []                        # the targets added to the read being evaluated


state = _State()
_followers: dict[tuple, Any] = {}


def reading(order: Sequence[Node], key: tuple, live: Sequence[Node]) -> list[Node]:
    """Note a reading evaluation of ``live`` (walk ``order``, key ``key``): count a miss, learn it as the
    follower of the read before, and return the followers' pending results to evaluate with it (also left
    in ``state.extra``)."""
    if key[0] is LOOSE:
        key = key[1]                # a window moved along data: the structure without the views' offsets
    st = state
    if st.watched:
        for w, n in st.watched:
            d = n.data
            if w.key == key or d is not None and id(d) in WATCHED:
                w.misses += 1       # evaluated for real, or computed ahead and not read (at MISSES: no more)
        WATCHED.clear()
        st.watched = []
    serials = _marks(order)
    if serials[4 * MAX_NODES:]:             # too long a walk to learn over or from
        st.recent, st.kept, st.extra = [], [], []
        return []
    recent = st.recent
    if recent:
        kp = recent[0][0]
        t = _followers.get(kp)
        if t is None:
            if len(_followers) >= CAPACITY:
                _followers.clear()
            t = learn(order, live, key, [r[1] for r in recent]) if kp != key else None
            _followers[kp] = _BLOCKED if t is None else t
        elif t is not _BLOCKED and t.key != key:
            t.others += 1
            if t.others >= MISSES:          # the loop changed: learn its follower again
                del _followers[kp]
    walks: list[Sequence[Node]] = [order]
    recent = [(key, serials), *recent[:1]]
    extra: list[Node] = []
    kept: list[Node] = []
    watched: list[tuple[Template, Node]] = []
    t = _followers.get(key)
    while t is not None and t is not _BLOCKED and t.misses < MISSES and len(walks) <= DEPTH:
        try:
            walk = t.made(walks)
        except BaseException:
            t.misses = MISSES       # (``failed`` then counts the error)
            raise
        if walk is None:
            break
        walks.insert(0, walk)
        recent.insert(0, (t.key, _marks(walk)))
        kept += walk
        for p in t.targets:
            n = walk[p]
            if n.data is None and n not in extra and n not in live:
                extra.append(n)
                watched.append((t, n))
        t = _followers.get(t.key)
    st.recent = recent[:2]
    st.kept, st.extra, st.watched = kept, extra, watched
    return extra


def watch(extra: Sequence[Node]) -> None:
    """Watch for reads of the results computed ahead (``extra``, evaluated now): the next read counts those
    not read since as misses."""
    for n in extra:
        if n.data is not None:
            WATCHED.add(id(n.data))


def failed() -> list[Node]:
    """After an error while computing reads ahead (counted in ``errors``): nothing is computed ahead with this
    read, and what was speculated at it is not speculated again; returns the (empty) list of extra targets."""
    global errors
    errors += 1
    st = state
    for t, _n in st.watched:
        t.misses = MISSES
    st.kept, st.extra, st.watched = [], [], []
    return []


def clear() -> None:
    """Forget every follower and this thread's reads (tests)."""
    _followers.clear()
    WATCHED.clear()
    st = state
    st.recent, st.kept, st.extra, st.watched = [], [], [], []
