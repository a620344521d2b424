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
from collections.abc import Callable, Sequence
from typing import Any

from ..compiler.plan_cache import LOOSE
from ..graph.node import Node, attr_key, make, reshaped_leaf
from .residency import READ_WITH, WATCHED, Ahead

ENABLED = os.environ.get("GPUARRAY_SPECULATE", "1") != "0"
DEPTH = 2               # reads computed ahead of one read
MAX_BYTES = 16384       # a speculated result at most this large (it comes back with the read)
MAX_NODES = 160         # a follower's walk at most this long
MISSES = 3              # a follower evaluated for real this often after being speculated is not speculated again
CAPACITY = 256          # followers kept; the table is emptied when it is full
MAX_UPLOADS = 8         # uploads counted after a read (a read after more is not started at an upload)
MIN_ELEMENTS = 1 << 18  # a read started at an upload reads or computes an array at least this large (smaller
# work gains nothing from running beside the host's, and under offload="auto" its reads run on the host)
_IMPURE = frozenset({"random"})
_BLOCKED: Any = object()        # a key whose follower is not speculated (itself, too large, missed)
errors = 0                      # errors while computing reads ahead (each read then ran alone: ``failed``)


class Template:
    """A follower's walk over the walks of the reads before it (see the module docstring)."""

    __slots__ = ("key", "steps", "targets", "misses", "others")

    def __init__(self, key: tuple, steps: list[tuple], targets: tuple[int, ...]) -> None:
        self.key = key              # the follower's structural key
        self.steps = steps          # per walk position: (0, back, pos) | (1, op, ins, dtype, shape, attrs, device)
        self.targets = targets      # | (2, weakref to data that must be that object) | (3, upload index, shape:
        # None for the upload itself, else its data in that shape: ``graph.node.reshaped_leaf``)
        self.misses = 0             # evaluated for real right after it was speculated
        self.others = 0             # times another read came after the one it follows

    def made(self, ctx: Sequence[Sequence[Node]], leaves: Sequence[Node] = ()) -> list[Node] | None:
        """The follower's walk over ``ctx`` (the walks before it, most recent first) and ``leaves`` (the
        arrays uploaded since the read before it: an upload template's); None where a step names a walk
        not in ``ctx`` or data that is gone."""
        out: list[Node] = []
        for st in self.steps:
            kind = st[0]
            if kind == 1:
                out.append(make(st[1], tuple([out[i] for i in st[2]]), st[3], st[4], st[5], st[6]))
            elif kind == 0:
                if st[1] >= len(ctx):
                    return None
                out.append(ctx[st[1]][st[2]])
            elif kind == 3:
                out.append(leaves[st[1]] if st[2] is None else reshaped_leaf(leaves[st[1]], st[2]))
            else:
                n = st[1]()
                if n is None or n.data is None:
                    return None
                out.append(n)
        return out


def _walk_steps(order: Sequence[Node], live: Sequence[Node],
                leaf: Callable[[Node], tuple | None]) -> tuple[list[tuple], tuple[int, ...]] | None:
    """The steps of the walk ``order`` (targets ``live``) and the targets' positions: each node computed here by
    its op, attributes and its inputs' positions, each other by ``leaf(node)`` (None: it cannot be named); None
    where the walk is too long, draws random numbers, names a node it cannot, or has large results."""
    if len(order) > MAX_NODES:
        return None
    pos: dict[int, int] = {}
    steps: list[tuple] = []
    for p, n in enumerate(order):
        pos[n.serial] = p
        if n.op in _IMPURE:
            return None
        if n.data is None and n.inputs:
            steps.append((1, n.op, tuple([pos[i.serial] for i in n.inputs]), n.dtype, n.shape, n.attrs, n.device))
            continue
        step = leaf(n)
        if step is None:
            return None
        steps.append(step)
    if any(math.prod(t.shape) * t.dtype.itemsize > MAX_BYTES for t in live):
        return None
    return steps, tuple([pos[t.serial] for t in live])


def _remade(n: Node) -> tuple | None:
    """The step of a node the walk does not compute and no walk before names: evaluated data as that object, a
    constant made again; None for a node made outside ``graph.node.make`` (not made again by it)."""
    if n.data is not None:
        return (2, weakref.ref(n))
    return None if n.skey is None else (1, n.op, (), n.dtype, n.shape, n.attrs, n.device)


def learn(order: Sequence[Node], live: Sequence[Node], key: tuple, before: Sequence[Sequence[int]]) -> Template | None:
    """The template of the read walked into ``order`` (targets ``live``, key ``key``) over the walks before it
    (``before``, most recent first: each node's serial, negated where that walk's evaluation did not compute
    the node: evaluated before it, or a constant); None where it is not worth speculating: it reads nothing
    that the reads before it computed (a later call's read of the same inputs: computing it ahead would only
    repeat the last one)."""
    maps = [{abs(s): (p, s > 0) for p, s in enumerate(serials)} for serials in before]
    anchored = False

    def leaf(n: Node) -> tuple | None:
        nonlocal anchored
        step = None
        for back, m in enumerate(maps):
            found = m.get(n.serial)
            if found is not None:
                step = step or (0, back, found[0])          # at its place in the most recent walk, computed
                anchored = anchored or found[1]             # by any of them
        return step if step is not None else _remade(n)

    got = _walk_steps(order, live, leaf)
    return None if got is None or not anchored else Template(key, *got)


class UploadTemplate(Template):
    """A read's walk over the arrays uploaded since the read before it (``learn_uploads``): ``needs`` uploads,
    ``sig`` the dtype, shape and device each of them must have; ``form`` the walk with constants by value (a
    template is used once the read after the same read had the same form twice: ``confirmed``)."""

    __slots__ = ("needs", "sig", "form", "confirmed", "tries")

    def __init__(self, key: tuple, steps: list[tuple], targets: tuple[int, ...], sig: tuple[tuple, ...]) -> None:
        super().__init__(key, steps, targets)
        self.sig = sig
        self.needs = len(sig)
        self.form = tuple([(st[1], st[2], st[3], st[4], attr_key(st[5])) if st[0] == 1 else
                           (2, id(st[1]())) if st[0] == 2 else st for st in steps])
        self.confirmed = False
        self.tries = 1


def learn_uploads(order: Sequence[Node], live: Sequence[Node], key: tuple,
                  uploads: Sequence[Node]) -> UploadTemplate | None:
    """The template of the read walked into ``order`` (targets ``live``, key ``key``) over the arrays uploaded
    since the read before it (``uploads``, in order): each of those a step naming its place there, other data a
    step naming that object, constants and computations made again; None where the read reads none of the
    uploads (nothing new to start early), is too long, draws random numbers, has large results or touches
    no array of ``MIN_ELEMENTS`` (too little work to run beside the host's)."""
    where = {id(u): i for i, u in enumerate(uploads)}
    shared = {id(u.data): i for i, u in enumerate(uploads)}     # (their reshapes share their data)
    used = -1

    def leaf(n: Node) -> tuple | None:
        nonlocal used
        i = where.get(id(n))
        if i is None and n.data is not None and n.op == "leaf":
            i = shared.get(id(n.data))
        if i is None:
            return _remade(n)
        used = max(used, i)
        return (3, i, None if n is uploads[i] else n.shape)

    got = _walk_steps(order, live, leaf)
    if got is None or used < 0 or max(math.prod(n.shape) for n in order) < MIN_ELEMENTS:
        return None
    return UploadTemplate(key, *got, tuple([(u.dtype, u.shape, u.device) for u in uploads[:used + 1]]))


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
        self.uploads: list[Node] | None = []               # arrays uploaded since the last read (None: too many)
        self.ahead: tuple[UploadTemplate, list[Any]] | None = None   # a read started at an upload: its template
        # and the data of its targets and its followers' (``started``)
        self.busy = False                                  # starting a read at an upload now


state = _State()
_followers: dict[tuple, Any] = {}
_after_uploads: dict[tuple, Any] = {}       # a read's key -> the read after it, over the uploads between them


def _count_misses(st: _State, key: tuple | None) -> None:
    """Followers computed ahead at the last read that were evaluated for real (``key``) or not read since
    count a miss; a read started at an upload and not read since counts one too."""
    if st.watched:
        for w, n in st.watched:
            d = n.data
            if w.key == key or d is not None and id(d) in WATCHED:
                w.misses += 1       # evaluated for real, or computed ahead and not read (at MISSES: no more)
        WATCHED.clear()
        st.watched = []
    if st.ahead is not None:
        t, datas = st.ahead
        if any(id(d) in READ_WITH for d in datas):
            t.misses += 1
            for d in datas:             # (this thread's: another thread's started read stays)
                READ_WITH.pop(id(d), None)
        st.ahead = None


def reading(order: Sequence[Node], key: tuple, live: Sequence[Node]) -> list[Node]:
    """Note a reading evaluation of ``live`` (walk ``order``, key ``key``): count a miss, learn it as the
    follower of the read before (and as the read that follows the uploads since), and return the followers'
    pending results to evaluate with it (also left in ``state.extra``)."""
    if key[0] is LOOSE:
        key = key[1]                # a window moved along data: the structure without the views' offsets
    st = state
    if st.watched or st.ahead is not None:
        _count_misses(st, key)
    uploads, st.uploads = st.uploads, []
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
        if uploads:
            _learn_uploads(kp, order, live, key, uploads)
    recent = [(key, serials), *recent[:1]]
    t = _followers.get(key)
    if t is None or t is _BLOCKED:      # (the common case without a call)
        st.recent, st.kept, st.extra, st.watched = recent, [], [], []
        return []
    extra, kept, watched, recent = _chain([order], recent, key, live)
    st.recent = recent[:2]
    st.kept, st.extra, st.watched = kept, extra, watched
    return extra


def _learn_uploads(kp: tuple, order: Sequence[Node], live: Sequence[Node], key: tuple, uploads: list[Node]) -> None:
    """Learn the read after the read of key ``kp`` over the uploads between them, or confirm it: a template
    is used once two such reads had the same form (the same operations and constants), and one whose form
    changed ``MISSES`` times (a constant new each iteration) is not learned again."""
    cur = _after_uploads.get(kp)
    if cur is _BLOCKED or cur is not None and cur.confirmed:
        return
    if len(_after_uploads) >= CAPACITY:
        _after_uploads.clear()
    u = learn_uploads(order, live, key, uploads)
    if u is None:
        _after_uploads[kp] = _BLOCKED
    elif cur is not None and cur.form == u.form:
        u.confirmed = True
        _after_uploads[kp] = u
    elif cur is not None and cur.tries >= MISSES:
        _after_uploads[kp] = _BLOCKED
    else:
        u.tries = cur.tries + 1 if cur is not None else 1
        _after_uploads[kp] = u


def _chain(walks: list[Sequence[Node]], recent: list[tuple[tuple, list[int]]], key: tuple,
           live: Sequence[Node]) -> tuple[list[Node], list[Node], list[tuple[Template, Node]], list]:
    """The followers of the read of key ``key`` (walks ``walks``, targets ``live``) made up to ``DEPTH`` reads
    ahead: their pending results, the nodes made, the (template, result) pairs to watch, and ``recent`` with
    their keys in front."""
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
        new = False
        for p in t.targets:
            n = walk[p]
            if n.data is None and n not in extra and n not in live:
                extra.append(n)
                watched.append((t, n))
                new = True
        if new:             # a follower that is this read again (the same inputs: the same nodes) or results
            kept += walk    # computed already is not kept: it would answer later reads without computing them
        t = _followers.get(t.key)
    return extra, kept, watched, recent


def uploaded(node: Node) -> list[Node]:
    """Note an upload (``asarray`` of host data to a GPU device). Where it is the last of the uploads that the
    read learned to follow the last read needs (``learn_uploads``: their number, dtypes, shapes and devices),
    make that read's walk over them, and its followers', and return their targets: the caller
    (``planner.after_upload``) evaluates them now, so that the device computes while the program records the
    operations that lead to the read (which then finds them computed: ``started``)."""
    st = state
    ups = st.uploads
    if ups is None or st.busy or getattr(node.device.provider, "host_memory", True):
        return []
    ups.append(node)
    if len(ups) > MAX_UPLOADS:
        st.uploads = None           # no read follows these uploads soon: stop counting until one does
        return []
    if not st.recent:
        return []
    kp = st.recent[0][0]
    t = _after_uploads.get(kp)
    if t is None or t is _BLOCKED or not t.confirmed or t.needs != len(ups) or t.misses >= MISSES:
        return []
    for u, sig in zip(ups, t.sig, strict=True):
        if u.dtype != sig[0] or u.shape != sig[1] or u.device != sig[2]:
            return []
    _count_misses(st, t.key)
    st.ahead = (t, [])              # (``failed_ahead`` stops it after an error from here on)
    walk = t.made((), ups)
    if walk is None:                # data it reads is gone (a new fit's labels): learn it again at the read
        del _after_uploads[kp]
        st.ahead = None
        return []
    targets = [walk[p] for p in t.targets]
    recent = [(t.key, _marks(walk)), *st.recent[:1]]
    try:
        extra, kept, watched, recent = _chain([walk], recent, t.key, targets)
    except Exception:  # noqa: BLE001 - a follower that cannot be made (it is not made again): the read alone
        global errors
        errors += 1
        extra, kept, watched = [], [], []
    st.recent = recent[:2]
    st.kept, st.watched, st.uploads = walk + kept, watched, []
    return [*targets, *extra]


def started(datas: list[Any], token: Any, provider: Any) -> None:
    """After ``uploaded``'s targets were evaluated (their data ``datas``; ``token``: the provider's read of them
    submitted with them, or None): a read of any of them brings all to the host at once (``residency.Ahead``),
    and one not read before the next read or upload counts a miss."""
    st = state
    if st.ahead is None:
        return
    st.ahead = (st.ahead[0], datas)
    group = Ahead(datas, token, provider)
    for d in datas:
        READ_WITH[id(d)] = group
    for _t, n in st.watched:
        if n.data is not None:
            WATCHED.add(id(n.data))


def failed_ahead() -> None:
    """After an error while starting a read at an upload (counted in ``errors``): that read is not started at
    uploads again."""
    global errors
    errors += 1
    st = state
    if st.ahead is not None:
        st.ahead[0].misses = MISSES
        for d in st.ahead[1]:
            READ_WITH.pop(id(d), None)
    st.kept, st.watched, st.ahead = [], [], None


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
    _after_uploads.clear()
    WATCHED.clear()
    READ_WITH.clear()
    st = state
    st.recent, st.kept, st.extra, st.watched = [], [], [], []
    st.uploads, st.ahead, st.busy = [], None, False
