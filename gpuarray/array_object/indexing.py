"""Indexing: ``x[key]`` and ``x[key] = value`` as graph nodes.

Basic indices (integers, slices with steps and negative bounds, None, ``...``)
give views. Integer arrays and boolean masks are handled in
``_indexing_advanced``. ``x[key] = value`` never writes into existing data: it
rebinds ``x`` to a new node that reads ``value`` inside the indexed region and
the old ``x`` elsewhere (a fusable ``setslice``), so arithmetic on ``x`` after
the assignment fuses with it.
"""

from __future__ import annotations

import math
import operator
import weakref
from typing import Any

import numpy as np

from ..compiler import regions
from ..compiler.kernel import FUSABLE_OPS
from ..core import dtypes as _dtypes
from ..core.ops import OPS
from ..graph import views
from ..graph.node import Node, const, leaf, make
from ..graph.shapes import broadcast_shapes, contiguous_strides
from ..graph.views import strided_parts, strided_view
from ..runtime.planner import evaluate_nodes
from ..runtime.residency import element
from .bounds import bounded
from .elementwise import astype_node, finish
from .hooks import UP


def _is_advanced_item(k: Any) -> bool:
    return isinstance(k, (UP.array_type, np.ndarray, list, tuple, bool, np.bool_))


def is_basic(key: Any) -> bool:
    t = type(key)
    if t is int or t is slice:                  # a loop's ``x[i]``, ``x[a:b]`` (not bool: a mask)
        return True
    if not isinstance(key, tuple):              # (a tuple subclass is a tuple index, as in NumPy)
        return not _is_advanced_item(key)
    for k in key:                               # (a loop, not any() over a generator: the stencil's hot path)
        t = type(k)
        if t is not slice and t is not int and k is not None and k is not Ellipsis and _is_advanced_item(k):
            return False
    return True


def _normalize_key(key: Any, ndim: int) -> list[Any]:
    items = list(key) if isinstance(key, tuple) else [key]
    n_ell = consumed = 0
    for k in items:
        if k is None:
            continue
        if k is Ellipsis:
            n_ell += 1
        elif isinstance(k, (slice, int)) or hasattr(k, "__index__"):
            consumed += 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None (`numpy.newaxis`) and integer or boolean "
                f"arrays are valid indices; got {type(k).__name__}"
            )
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed")
    if n_ell:
        i = items.index(Ellipsis)
        items[i:i + 1] = [slice(None)] * (ndim - consumed)
    elif consumed < ndim:
        items += [slice(None)] * (ndim - consumed)
    return items


def basic_index(node: Node, key: Any) -> Node:
    """The view ``node[key]`` for a basic index."""
    base, shape, strides, offset = strided_parts(node)
    return strided_view(base, *basic_place(shape, strides, offset, key))


def basic_place(shape: tuple[int, ...], strides: tuple[int, ...], offset: int,
                key: Any) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(shape, strides, offset) of ``x[key]`` for a basic index, ``x`` lying at (``shape``, ``strides``,
    ``offset``) in a base's C layout; strides as a ``view`` node holds them (0 along axes of one element).

    >>> basic_place((4, 6), (6, 1), 0, (1, slice(None, None, 2)))
    ((3,), (2,), 6)
    """
    new_shape: list[int] = []
    new_strides: list[int] = []
    items = (key,) if type(key) is slice else key
    if type(items) is tuple and len(items) == len(shape):
        at = offset
        for k, stride, size in zip(items, strides, shape):     # one slice a dim (a stencil's views): no walk
            if type(k) is not slice:
                break
            start, stop, step = k.indices(size)
            n = len(range(start, stop, step))
            new_shape.append(n)
            new_strides.append(0 if n == 1 else stride * step)
            if n:
                at += start * stride
        else:
            return tuple(new_shape), tuple(new_strides), int(at)
        new_shape.clear()
        new_strides.clear()
    for axis, start, step, n in index_walk(_normalize_key(key, len(shape)), shape):
        if axis < 0:                                    # None: a new axis of one element
            new_shape.append(1)
            new_strides.append(0)
            continue
        stride = strides[axis]
        if n >= 0:                                      # a slice
            new_shape.append(n)
            new_strides.append(0 if n == 1 else stride * step)
            if n:
                offset += start * stride
        else:                                           # an integer: its axis goes
            offset += start * stride
    return tuple(new_shape), tuple(new_strides), int(offset)


def _is_place(view: Node, place: tuple[tuple[int, ...], tuple[int, ...], int]) -> bool:
    """Whether the ``view`` node lies at ``place`` (``basic_place``'s) of its base: ``strided_view``'s node."""
    shape, strides, offset = place
    return view.shape == shape and view.attrs == (strides, offset)


def index_walk(items: list[Any], shape: tuple[int, ...]) -> list[tuple[int, int, int, int]]:
    """Per item of a normalized basic index over ``shape``: (its axis, start, step, count), with axis -1
    for None and count -1 for an integer (its start: the index, made non-negative); IndexError (NumPy's
    message) for an integer out of bounds. ``basic_index``, ``_region_shape`` and ``write_region`` read it."""
    out: list[tuple[int, int, int, int]] = []
    axis = 0
    for k in items:
        if k is None:
            out.append((-1, 0, 0, 1))
            continue
        size = shape[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(size)
            out.append((axis, start, step, len(range(start, stop, step))))
        else:
            i = operator.index(k)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size}")
            out.append((axis, i % size, 1, -1))
        axis += 1
    return out


def _region_shape(walk: list[tuple[int, int, int, int]]) -> tuple[int, ...]:
    """The shape of ``x[key]`` from its ``index_walk`` (``basic_index``'s, without its view)."""
    return tuple([1 if axis < 0 else n for axis, _s, _st, n in walk if axis < 0 or n >= 0])


def getitem(node: Node, key: Any) -> Node:
    """The node for ``x[key]``."""
    if is_basic(key):
        return basic_index(node, key)
    return UP.advanced_getitem(node, key)


def setitem(node: Node, key: Any, value: Any) -> Node:
    """The node ``x`` is rebound to by ``x[key] = value`` (``value`` cast to ``x.dtype``)."""
    if isinstance(value, UP.array_type):
        v = value._node
        if v.op == "view" and v.data is None and v.inputs[0] is node and is_basic(key) \
                and _is_place(v, basic_place(node.shape, contiguous_strides(node.shape), 0, key)):
            return node             # ``x[key] = x[key]``: Python's last step of ``x[i] *= 2``
    val = value_node(value, node.dtype, node.device)
    if is_basic(key):
        if one_element(key, len(node.shape)):
            if val.shape:
                basic_index(node, key)              # an index out of bounds is NumPy's first complaint
                # one element, addressed by integers: NumPy wants a scalar (or a 0-d array) there
                raise ValueError(f"setting an array element with a sequence: a value of shape {val.shape} "
                                 "cannot be stored in one element")
            point = point_write(node, key if isinstance(key, tuple) else (key,), val)
            if point is not None:
                return finish(point)._node
        walk = index_walk(_normalize_key(key, len(node.shape)), node.shape)
        out = write_region(node, walk, broadcast_value(val, _region_shape(walk)))
        if regions.chain_length(out):
            return out          # a chain of clean writes: bounded by CHAIN_MAX, not by its depth (``finish``)
    else:
        out = UP.advanced_setitem(node, key, val)
    return finish(out)._node


# Writes of one element each (``a[i, i] = 0`` in a Python loop: scikit-learn's ``_fill_diagonal``) are
# gathered into one ``scatter`` of the flattened array: the point list grows with each write instead of a
# chain of ``setslice`` nodes, each of which a kernel evaluates at every element of the array (a chain is
# evaluated every dozen writes, ``bounded``, copying the whole array each time). The point lists grow in
# place (``_Points``); a later write to a point already listed replaces its value (a copy). At most
# POINTS_MAX points go into one scatter; the next write starts another on top of it.
POINTS_MAX = 1 << 14


def _host_scalar(val: Node) -> Any:
    """The value of a one-element node known on the host (a constant or host data), else None."""
    if val.op == "const" and val.attrs:
        return val.attrs[0]
    data = val.data
    if data is not None and data.host is not None and data.host.size == 1:
        return data.host.reshape(())[()]
    return None


class _Points:
    """The growing host buffers behind a chain of point scatters: each scatter's index and value leaves
    are views of their first ``n`` entries, so the next write of a chain appends in place (a view never
    sees entries past its length); ``seen`` holds every position written into them."""

    __slots__ = ("idx", "vals", "used", "seen", "__weakref__")

    def __init__(self, idx: np.ndarray, vals: np.ndarray) -> None:
        n = idx.shape[0]
        self.idx = np.empty(max(16, 2 * n), np.int64)
        self.vals = np.empty(max(16, 2 * n), vals.dtype)
        self.idx[:n], self.vals[:n] = idx, vals
        self.used = n
        self.seen = set(idx.tolist())

    def append(self, pos: int, value: Any) -> None:
        n = self.used
        if n == self.idx.shape[0]:
            self.idx = np.concatenate([self.idx, np.empty(n, np.int64)])
            self.vals = np.concatenate([self.vals, np.empty(n, self.vals.dtype)])
        self.idx[n], self.vals[n] = pos, value
        self.used = n + 1
        self.seen.add(pos)


_points: weakref.WeakKeyDictionary[Node, _Points] = weakref.WeakKeyDictionary()   # index leaf -> buffers


def point_write(node: Node, items: tuple, val: Node) -> Node | None:
    """``node`` with the one element at the integers ``items`` (one per axis) set to ``val`` as a growing
    ``scatter`` of points (see POINTS_MAX), or None where ``val`` is not known on the host. IndexError
    (NumPy's message) for an index out of bounds."""
    v = _host_scalar(val)
    size = math.prod(node.shape)
    if v is None or size == 0:
        return None
    pos = 0
    for axis, (k, n) in enumerate(zip(items, node.shape, strict=True)):
        i = operator.index(k)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
        pos = pos * n + i % n
    value = np.asarray(v, dtype=node.dtype)[()]
    flat = views.reshape(node, (size,))
    pts: _Points | None = None
    lists = _point_lists(flat)
    if lists is not None:
        base, i_node, v_node = lists
        if i_node.shape[0] < POINTS_MAX:
            k = i_node.shape[0]
            pts = _points.get(i_node)
            idx, vals = i_node.data.host, v_node.data.host
            at = np.flatnonzero(idx == pos) if pts is None or pos in pts.seen else np.empty(0, np.intp)
            if at.size:                            # written before: the new value replaces it
                vals = vals.copy()
                vals[int(at[0])] = value
                pts = _Points(idx, vals)
            elif pts is None or pts.used != k:     # not the end of its chain (or not ours): copy
                pts = _Points(idx, vals)
                pts.append(pos, value)
            else:
                pts.append(pos, value)
            flat = base
    if pts is None:
        pts = _Points(np.array([pos], np.int64), np.array([value], node.dtype))
    n = pts.used
    i_leaf = leaf(pts.idx[:n], node.device)
    _points[i_leaf] = pts
    out = make("scatter", (flat, i_leaf, leaf(pts.vals[:n], node.device)), node.dtype, (size,), (0,), node.device)
    return views.reshape(out, node.shape)


def _point_lists(flat: Node) -> tuple[Node, Node, Node] | None:
    """(base, index leaf, value leaf) of ``flat`` where it is a pending scatter of points whose lists are
    on the host (``point_write``'s), else None."""
    if flat.op != "scatter" or flat.data is not None or flat.attrs != (0,) or len(flat.inputs) != 3:
        return None
    base, i_node, v_node = flat.inputs
    if i_node.data is None or v_node.data is None or i_node.data.host is None or v_node.data.host is None \
            or i_node.shape != v_node.shape or len(i_node.shape) != 1 or v_node.dtype != flat.dtype:
        return None
    return base, i_node, v_node


def point_read(node: Node) -> Any:
    """The value of ``node``, a one-element view of a pending point scatter (``point_write``), where the
    host knows it: a point written there, or the element of the scatter's evaluated base (one small read);
    else None. A loop that writes elements and reads them back then needs no evaluation of the array."""
    if node.op != "view" or not node.inputs:
        return None
    base = node.inputs[0]
    flat = base.inputs[0] if base.op == "reshape" and base.inputs else base
    lists = _point_lists(flat) if flat.shape == (math.prod(base.shape),) else None
    if lists is None:
        return None
    src, i_node, v_node = lists
    pos = node.attrs[1]                           # its offset in the base's C order: the flat position
    hits = np.flatnonzero(i_node.data.host == pos)
    if hits.size:
        return v_node.data.host[int(hits[-1])]
    return element(src.data, pos) if src.data is not None else None


def one_element(key: Any, ndim: int) -> bool:
    """Whether a basic index is an integer for every axis: one element, which NumPy reads as a
    scalar (not a view) and writes only from a scalar or a 0-d array."""
    if not isinstance(key, tuple):
        return ndim == 1 and key is not None and key is not Ellipsis and not isinstance(key, slice)
    if len(key) != ndim:
        return False
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice):
            return False
    return True


def broadcast_value(val: Node, shape: tuple[int, ...]) -> Node:
    """``val`` broadcast to the indexed shape; ValueError (as NumPy) when it does not fit."""
    extra = len(val.shape) - len(shape)
    if extra > 0 and all(d == 1 for d in val.shape[:extra]):      # NumPy drops leading 1s of the value
        val = views.reshape(val, val.shape[extra:])
    try:
        ok = len(val.shape) <= len(shape) and broadcast_shapes(val.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"could not broadcast input array from shape {val.shape} into shape {shape}")
    return views.broadcast_to(val, shape)


def write_region(node: Node, walk: list[tuple[int, int, int, int]], val: Node) -> Node:
    """``node`` with the basic-index region of ``walk`` (``index_walk``'s) replaced by ``val`` (region's shape)."""
    shape = node.shape
    starts, steps, counts = [], [], []
    flips = part = False                        # part: the region is not the whole array in order
    for axis, start, step, n in walk:
        if axis >= 0:
            if n < 0:
                n = 1                           # an integer: one element
            elif step < 0 and n > 1:
                flips = True
            starts.append(start)
            steps.append(step)
            counts.append(n)
            part = part or n != shape[axis] or (n != 1 and step != 1 and step != -1)
    if 0 in counts:
        return node
    region = views.reshape(val, tuple(counts))
    if flips:
        # walk negative steps forwards (the value flipped along those axes): the kernel then divides
        # by positive steps only (NVIDIA's compiler gave wrong quotients for negative divisors)
        flip = [d for d, st in enumerate(steps) if st < 0 and counts[d] > 1]
        for d in flip:
            starts[d] += (counts[d] - 1) * steps[d]
            steps[d] = -steps[d]
        region = basic_index(region, tuple(slice(None, None, -1) if d in flip else slice(None)
                                           for d in range(len(counts))))
    if not part:                                # the whole array (reversed axes: the value flipped above)
        return region
    steps = [abs(st) for st in steps]           # a negative step over one element is any step
    return chained(make("setslice", (node, region), node.dtype, shape, (tuple(starts), tuple(steps)), node.device))


def chained(new: Node) -> Node:
    """``new``, a write into a region of an array (``setslice``, ``setstrided``), bounded: a clean write (its
    value reads no pending write but the array's own previous version at the written elements) on top of a
    chain of them is the next write of a ``regions`` kernel (compiler/regions.py), and the chain is
    evaluated every CHAIN_MAX writes; any other by ``bounded``. A write of the region's own elements back
    into it (the second half of Python's ``a[i] *= 2``) is the array unchanged."""
    if new.data is not None or new.op not in regions.WRITES:
        return bounded(new)
    old, value = new.inputs
    if value.op == "view" and value.data is None and value.inputs[0] is old and \
            regions.view_key(value) == regions.region_key(new):
        return old
    if old.data is None and old.op in regions.WRITES and _unreshaped(value) is _unreshaped(old.inputs[1]) \
            and regions.region_key(old) == regions.region_key(new):
        return old                              # the value the write below put there (``t = a[i]; t *= 2; a[i] = t``)
    d = regions.chain_length(old)
    # an array larger than one storage binding keeps the fused form (which splits), bounded as before
    prev = _clean(value, old, new) if regions.fits(new) else None
    if prev is None:
        return bounded(new)
    if d:
        if d >= regions.CHAIN_MAX:
            evaluate_nodes([old])
            d = 0
            prev = ()                           # the previous version is evaluated: an input now
        new.chain = d + 1
        new.depth = old.depth           # CHAIN_MAX bounds a chain, not its depth: reading it costs no evaluation
    else:
        new = bounded(new)
        new.chain = 1
    if prev:
        regions.prevreads[new] = prev
    return new


def _unreshaped(n: Node) -> Node:
    """``n`` under its pending reshapes (which keep the elements' C order)."""
    while n.op == "reshape" and n.data is None:
        n = n.inputs[0]
    return n


_DIRTY = regions.WRITES | {"setpart"}           # pending writes into an array
_ALIGNED = frozenset(OPS) | {"astype"}          # element i of the result reads element i of same-shape inputs
CLEAN_CONE = 64


def _clean(value: Node, old: Node, new: Node) -> tuple[Node, ...] | None:
    """The views of ``old`` (the version written) that a written value reads, when its pending cone is
    small (at most CLEAN_CONE nodes), reads no other pending write into an array and reads ``old`` only
    where that is safe while the write ``new`` stores: at its region element for element, or outside it.
    A ``regions`` kernel then computes the value over its region alone, reading those views from its
    result (compiler/regions.py). None when it is not clean."""
    seen: set[tuple[int, bool]] = set()
    prev: list[Node] = []
    stack = [(value, True)]                     # (node, its element i is the value's element i)
    pending = old.data is None
    key = None
    while stack:
        n, aligned = stack.pop()
        if n.data is not None or (n.serial, aligned) in seen or n.op not in FUSABLE_OPS:
            continue
        if pending and n.op == "view" and n.inputs[0] is old:
            at = regions.view_key(n)
            if key is None:
                key = regions.region_key(new)
            if not (aligned and at == key or regions.disjoint(at, key)):
                return None                     # reads elements of the region that other threads store
            if all(v is not n for v in prev):
                prev.append(n)
            continue
        if n.op in _DIRTY or len(seen) >= CLEAN_CONE:
            return None
        seen.add((n.serial, aligned))
        if n.op == "reshape":
            stack.append((n.inputs[0], aligned))
        else:
            keep = aligned and n.op in _ALIGNED
            stack += [(i, keep and i.shape == n.shape) for i in n.inputs]
    return tuple(prev)


def value_node(value: Any, dtype: np.dtype, device: Any) -> Node:
    """``value`` as a node of ``dtype`` on ``device``: ``same_kind`` casting, Python scalars weak."""
    if isinstance(value, UP.array_type):
        if value.device != device:
            raise ValueError(f"setitem: the value is on {value.device.name}, the array on {device.name}; "
                             "move it with to_device() first")
        if not np.can_cast(value.dtype, dtype, casting="same_kind"):
            raise TypeError(f"Cannot cast array data from dtype('{value.dtype}') to dtype('{dtype}') according "
                            "to the rule 'same_kind'")
        return astype_node(value._node, dtype)
    kind = _dtypes.scalar_kind(value)
    if kind is not None and not isinstance(value, np.generic):
        if kind == "i" and dtype == _dtypes.bool_ or kind == "f" and dtype.kind not in "fc" or \
                kind == "c" and dtype.kind != "c":
            raise TypeError(f"setitem: cannot assign a Python {type(value).__name__} to a {dtype} array")
        if kind == "i" and dtype.kind in "iu":
            _dtypes.weak_result(dtype, value, _dtypes.float64)     # OverflowError when it does not fit
        return const(value, dtype, device)
    if isinstance(value, (np.ndarray, np.generic, list, tuple)):
        try:
            a = np.asarray(value)
        except ValueError as exc:
            raise TypeError(f"setitem: cannot convert the value to an array: {exc}") from exc
        if a.dtype not in _dtypes.ALL_DTYPES:
            raise TypeError(f"setitem: unsupported value dtype {a.dtype}; expected one of {_dtypes.dtype_names()}")
        if not np.can_cast(a.dtype, dtype, casting="same_kind"):
            raise TypeError(f"Cannot cast array data from dtype('{a.dtype}') to dtype('{dtype}') according "
                            "to the rule 'same_kind'")
        host = a.astype(dtype)
        return const(host[()], dtype, device) if host.ndim == 0 else leaf(host, device)
    if isinstance(value, (str, bytes)):
        # NumPy parses a string into the array's dtype ("5" -> 5); ValueError when it is no number
        try:
            host = np.asarray(value, dtype=dtype)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"setitem: cannot store the string {value!r} in a {dtype} array: {exc}") from None
        return const(host[()], dtype, device)
    raise TypeError(f"setitem: cannot assign a {type(value).__name__}; expected a GpuArray, a NumPy array or a "
                    "Python scalar")
