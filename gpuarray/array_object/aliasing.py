"""Arrays that share memory: NumPy's write-through views on an immutable, lazy graph.

Graph nodes are values and never change, so memory sharing lives one level up, in the
arrays (PyTorch's *functionalization*). Arrays that share memory share one ``Storage``
cell holding the current node of their base array. Each of them knows where it lies in
that base (a ``ViewInfo``: shape, strides and offset in elements of the base's C layout,
optionally the real or imaginary part of a complex base). Then:

- taking a view (``derive``) records the view's place and gives it the node
  ``view(storage.node)``: no copy, and fusion sees an ordinary view;
- writing through any member (``assign``: ``x[k] = v``, ``x += 1``, ``out=``, ``copyto`` ...)
  replaces the storage's node by ``setstrided(old base, new view value)`` (or by the new
  value itself when the member is the base), then gives every live member the node of its
  place in the new base. Nothing is evaluated: the write is one more fusable node.

An array that never had a view taken of it has no storage (``_view is None``) and writes
just rebind it, as before. A storage left with only its base is dropped at the next write.

>>> import gpuarray as xp
>>> a = xp.zeros((2, 3), dtype=xp.int32, device="cpu")
>>> row = a[1]
>>> row += 5
>>> a.tolist()
[[0, 0, 0], [5, 5, 5]]
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

from ..compiler.regions import chain_length
from ..core.dtypes import real_dtype
from ..graph import views
from ..graph.node import Node, make
from ..graph.shapes import Shape, size_of, view_strides
from .elementwise import finish
from .indexing import basic_place, chained

# A source read by views in a loop (``b[i]`` for every row) lists a member per view taken; writes drop the
# dead ones, and so does ``derive`` once the list has grown past twice its live members plus this.
PRUNE_SLACK = 64


class Storage:
    """The memory that a base array and its views share: the base's current node."""

    __slots__ = ("node", "members", "prune_at", "_probe", "__weakref__")

    def __init__(self, node: Node) -> None:
        self.node = node
        self.members: list[weakref.ref] = []
        self.prune_at = PRUNE_SLACK        # members listed before the dead ones are dropped (``derive``)
        self._probe: Node | None = None

    @property
    def probe(self) -> Node:
        """A stand-in for the base that is never evaluated: ``derive`` records views on it to read their
        place in the base off the resulting view node (made on first use: basic indices need none)."""
        probe = self._probe
        if probe is None:
            node = self.node
            probe = self._probe = Node("probe", (), node.dtype, node.shape, (), node.device)
        return probe


class ViewInfo:
    """Where an array lies in its storage's base."""

    __slots__ = ("storage", "shape", "strides", "offset", "part", "base", "writeable", "identity")

    def __init__(self, storage: Storage, shape: Shape, strides: tuple[int, ...], offset: int,
                 part: str | None, base: Any, writeable: bool) -> None:
        self.storage = storage
        self.shape = shape
        self.strides = strides
        self.offset = offset
        self.part = part                  # None, "real" or "imag" (of a complex base)
        self.base = base                  # the base GpuArray (None: this array is the base)
        self.writeable = writeable
        self.identity = base is None and part is None


def adopt(x: Any) -> ViewInfo:
    """``x``'s place in its storage, making ``x`` the base of a new storage if it has none."""
    info = x._view
    if info is None:
        st = Storage(x._node)
        info = x._view = ViewInfo(st, x.shape, view_strides(x.shape), 0, None, None, True)
        st.members.append(weakref.ref(x))
    return info


def _place(node: Node, probe: Node) -> tuple[Shape, tuple[int, ...], int] | None:
    """(shape, strides, offset) of ``node`` in ``probe``'s C layout when it is a view of it."""
    if node is probe:
        return node.shape, view_strides(node.shape), 0
    if node.op == "view" and node.inputs and node.inputs[0] is probe:
        strides, offset = node.attrs
        return node.shape, tuple(strides), offset
    if node.op == "reshape" and node.inputs and node.inputs[0] is probe:
        return node.shape, view_strides(node.shape), 0
    return None


def node_at(base: Node, info: ViewInfo, with_part: bool = True) -> Node:
    """The node of the member described by ``info`` when the base's node is ``base`` (``with_part``
    False: the complex elements, before taking the member's real or imaginary part)."""
    if info.identity:
        return base
    shape, strides, offset = info.shape, info.strides, info.offset
    if offset == 0 and size_of(shape) == size_of(base.shape) and strides == view_strides(shape):
        node = views.reshape(base, shape)           # a reshape of the base: shares a realized buffer
    else:       # (shape and strides as a view node holds them: strided_view's normalization is done)
        node = make("view", (base,), base.dtype, shape, (strides, offset))
    if info.part is not None and with_part:
        node = _part(node, info.part)
    return node


def _part(node: Node, part: str) -> Node:
    return make(part, (node,), real_dtype(node.dtype), node.shape)


def derive(x: Any, fn: Callable[[Node], Node] | None = None, *, writeable: bool = True,
           part: str | None = None) -> Any:
    """The array ``fn(x)``, where ``fn`` is a view function on nodes (a permutation, a reshape ...;
    None: ``x`` itself, as ``x.view()``; basic indices take ``derive_index``): a member of ``x``'s storage
    when ``fn`` gives a view of it (as NumPy does), else a new array of its own (a reshape that
    needs a copy). ``part`` takes the real or imaginary part of a complex array (a view too);
    ``writeable=False`` makes the view read-only (``broadcast_to``, ``diagonal``).

    >>> import gpuarray as xp
    >>> a = xp.arange(4, device="cpu")
    >>> derive(a).base is a
    True
    """
    info = adopt(x)
    st = info.storage
    probe = st.probe
    src = probe if info.identity and info.shape == probe.shape else \
        views.strided_view(probe, info.shape, info.strides, info.offset)     # (x.shape = s reshapes the base)
    place = _place(src if fn is None else fn(src), probe)
    if place is None:                                 # NumPy copies here: a new value
        return finish(x._node if fn is None else fn(x._node))
    return _member(x, info, place, part, writeable)


def derive_index(x: Any, key: Any) -> Any:
    """``x[key]`` for a basic index that is not one element: ``derive(x, lambda n: basic_index(n, key))``
    by index arithmetic on ``x``'s place (``indexing.basic_place``), without recording the view on the
    storage's probe (a node, a hash-consing entry and their collection per view taken).

    >>> import gpuarray as xp
    >>> a = xp.zeros((2, 3), device="cpu")
    >>> row = derive_index(a, 1)
    >>> row.base is a, row.shape
    (True, (3,))
    """
    info = adopt(x)
    return _member(x, info, basic_place(info.shape, info.strides, info.offset, key), None, True)


def derive_permute(x: Any, axes: tuple[int, ...]) -> Any:
    """``x`` with its axes reordered (``x.T``, ``x.mT``, ``permute_dims``): ``derive(x, lambda n:
    views.permute(n, axes))`` by permuting ``x``'s place (its strides are a view node's: 0 along axes of
    one element, which a permutation keeps), without recording the view on the storage's probe.

    >>> import gpuarray as xp
    >>> a = xp.zeros((2, 3), device="cpu")
    >>> t = derive_permute(a, (1, 0))
    >>> t.base is a, t.shape
    (True, (3, 2))
    """
    info = adopt(x)
    shape, strides = info.shape, info.strides
    return _member(x, info, (tuple([shape[a] for a in axes]), tuple([strides[a] for a in axes]), info.offset),
                   None, True)


def derive_reshape(x: Any, shape: Shape) -> Any:
    """``x`` in ``shape`` (sizes agree): ``derive(x, lambda n: views.reshape(n, shape))``, by NumPy's
    no-copy strides for ``x``'s place where they exist (``views.nocopy_strides``), without recording the
    view on the storage's probe; a reshape that needs a copy (and an empty one) takes ``derive``.

    >>> import gpuarray as xp
    >>> a = xp.zeros((2, 3), device="cpu")
    >>> r = derive_reshape(a.T, (3, 2))
    >>> r.base is a, r.shape
    (True, (3, 2))
    """
    info = adopt(x)
    if size_of(shape) > 0:
        if info.strides == view_strides(info.shape):        # C-contiguous in its place: so is the reshape
            return _member(x, info, (shape, view_strides(shape), info.offset), None, True)
        st = views.nocopy_strides(info.shape, info.strides, shape)
        if st is not None:
            strides = tuple([0 if d == 1 else s for d, s in zip(shape, st, strict=True)])
            return _member(x, info, (shape, strides, info.offset), None, True)
    return derive(x, lambda n: views.reshape(n, shape))


def _member(x: Any, info: ViewInfo, place: tuple[Shape, tuple[int, ...], int], part: str | None,
            writeable: bool) -> Any:
    """The new member of ``x``'s storage at ``place`` (shape, strides, offset in the base's C layout)."""
    st = info.storage
    shape, strides, offset = place
    where = ViewInfo(st, shape, tuple(strides), offset, part or info.part,
                     info.base if info.base is not None else x, info.writeable and writeable)
    out = finish(node_at(st.node, where))
    out._view = where
    members = st.members
    members.append(weakref.ref(out))
    if len(members) > st.prune_at:
        st.members = members = [r for r in members if r() is not None]
        st.prune_at = 2 * len(members) + PRUNE_SLACK
    return out


# Writes are read-modify-writes of a node (``x._node`` or a storage's): two threads writing
# disjoint parts of one array (joblib's threads filling the column blocks of scikit-learn's
# pairwise results) would each build on the node before the other's write and one write would be
# lost, where NumPy keeps both. Every write takes this lock from reading the node it builds on to
# storing the result (``GpuArray.__setitem__`` around both; ``assign`` around its own).
WRITE_LOCK = threading.RLock()


def assign(x: Any, node: Node) -> None:
    """Give ``x`` the value ``node`` (of ``x``'s dtype and shape), writing through to every
    array that shares its memory. ValueError for a read-only array, before anything changes."""
    with WRITE_LOCK:
        _assign(x, node)


def _assign(x: Any, node: Node) -> None:
    info = x._view
    if info is None:
        x._node = node
        return
    if not info.writeable:
        raise ValueError("assignment destination is read-only")
    st = info.storage
    if info.identity:
        new = node
    else:
        value = node
        if info.part is not None:
            whole = node_at(st.node, info, with_part=False)
            value = make("setpart", (whole, node), whole.dtype, whole.shape, (0 if info.part == "real" else 1,))
        new = chained(views.write_view(st.node, info.shape, info.strides, info.offset, value))
    chain = chain_length(new)
    if not chain:
        new = finish(new)._node               # evaluated when its history grew too long
    st.node = new
    alive = []
    for ref in st.members:
        m = ref()
        if m is None:
            continue
        alive.append(ref)
        # the member written keeps the value's node, but in a chain of writes its place in the new base: the
        # next write through it then reads the version it writes (``col *= s; col -= 1``)
        m._node = node if m is x and not chain else node_at(new, m._view)
    st.members = alive
    st.prune_at = 2 * len(alive) + PRUNE_SLACK
    if len(alive) == 1 and info.identity and info.writeable:
        x._view = None                        # no view of it is left: a plain array again


def set_shape(x: Any, new: Any) -> None:
    """``x.shape = s`` given ``new = reshape(x, s)``: ``x`` takes that shape in place where that needs
    no copy (NumPy's rule), else AttributeError as NumPy raises; views of ``x`` keep their places
    (they are in the base's C layout)."""
    info = x._view
    if info is None or info.identity:
        if info is not None and new._view is not None:
            info.storage.node = views.reshape(info.storage.node, new.shape)
            info.shape, info.strides = new.shape, view_strides(new.shape)
        x._node = new._node
        return
    if new._view is None:
        raise AttributeError("Incompatible shape for in-place modification. Use `.reshape()` to make a copy "
                             "with the desired shape.")
    info.shape, info.strides, info.offset = new._view.shape, new._view.strides, new._view.offset
    x._node = new._node


def set_writeable(x: Any, flag: bool) -> None:
    """``x.flags.writeable = flag`` (NumPy refuses True on a view of a read-only array)."""
    info = adopt(x)
    if flag and not info.writeable and info.base is not None and not info.base.flags.writeable:
        raise ValueError("cannot set WRITEABLE flag to True of this array")
    info.writeable = bool(flag)


def shares_memory(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` have an element in common (NumPy's ``shares_memory``: exact).

    The two places are laid over one stand-in buffer (never read) and NumPy decides."""
    ia, ib = a._view, b._view
    if ia is None or ib is None or ia.storage is not ib.storage:
        return a is b and a.size > 0
    import numpy as np
    n = 2 * max(size_of(ia.storage.node.shape), 1)
    whole = np.lib.stride_tricks.as_strided(np.empty(1, dtype=np.uint8), (n,), (1,))
    return bool(np.shares_memory(_lay(whole, ia), _lay(whole, ib)))


def may_share_memory(a: Any, b: Any) -> bool:
    """Whether the ranges of the base that ``a`` and ``b`` span overlap (NumPy's ``may_share_memory``)."""
    ia, ib = a._view, b._view
    if ia is None or ib is None or ia.storage is not ib.storage:
        return a is b and a.size > 0
    ra, rb = _span(ia), _span(ib)
    return ra is not None and rb is not None and ra[0] < rb[1] and rb[0] < ra[1]


def _span(info: ViewInfo) -> tuple[int, int] | None:
    """[first, last + 1) in half-elements (real and imaginary parts apart) of the base; None if empty."""
    if 0 in info.shape:
        return None
    lo = hi = 2 * info.offset
    for n, s in zip(info.shape, info.strides, strict=True):
        step = 2 * s * (n - 1)
        lo, hi = (lo + step, hi) if step < 0 else (lo, hi + step)
    if info.part is None:
        return lo, hi + 2
    k = info.part == "imag"
    return lo + k, hi + k + 1


def _lay(whole: Any, info: ViewInfo) -> Any:
    """``info``'s place over ``whole``, two bytes per base element (real part, imaginary part)."""
    import numpy as np
    start = 2 * info.offset + (info.part == "imag")
    shape, strides = tuple(info.shape), tuple(2 * s for s in info.strides)
    if info.part is None:
        shape, strides = shape + (2,), strides + (1,)
    if 0 in shape:
        return np.empty(0, dtype=np.uint8)
    return np.lib.stride_tricks.as_strided(whole[start:], shape, strides)
