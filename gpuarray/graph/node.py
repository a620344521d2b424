"""Graph nodes: immutable, hash-consed records of one operation.

A node is (op, inputs, dtype, shape, attrs). Identical requests return the
same node, so common subexpressions are shared. Once a node is evaluated it
holds its data (``node.data``) and drops its inputs, so a long chain of
evaluated nodes does not keep its history alive.

>>> import numpy as np
>>> a = leaf(np.arange(3.0), device="cpu")
>>> make("add", (a, a), a.dtype, a.shape) is make("add", (a, a), a.dtype, a.shape)
True
"""

from __future__ import annotations

import itertools
import struct
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..core.ops import OPS
from .shapes import Shape

_serial = itertools.count(1)
_next_serial = _serial.__next__
_new_node = object.__new__
# key -> weak reference to the live node: a WeakValueDictionary without its Python-level get,
# set and KeyedRef (a third of the cost of recording an operation). A dead node's callback
# removes its entry, unless a newer node took the key meanwhile.
_table: dict[tuple, weakref.ref] = {}
_lock = threading.Lock()
# Entries of dead nodes stay until a sweep (no weakref callback: a callback cost every dying node four
# calls); a sweep runs once the table has grown by SWEEP_SLACK entries past twice the live ones found
# by the last sweep, so the table stays within a constant factor of the live nodes.
SWEEP_SLACK = 4096
_sweep_at = SWEEP_SLACK
_inserts = 0            # entries added since the table was empty (approximately len(_table))


def _sweep() -> None:
    """Drop the entries of dead nodes (``_lock`` held)."""
    global _sweep_at
    dead = [k for k, r in _table.items() if r() is None]
    for k in dead:
        del _table[k]
    _sweep_at = 2 * len(_table) + SWEEP_SLACK

# Depth of unevaluated history after which a node is evaluated eagerly, so that
# graphs built in long loops stay bounded in memory and shader size.
MAX_DEPTH = 96


class Node:
    """One operation in the expression graph (or a leaf holding data)."""

    __slots__ = ("op", "inputs", "dtype", "shape", "attrs", "device", "serial",
                 "data", "depth", "skey", "chain", "cone", "__weakref__")

    op: str
    inputs: tuple[Node, ...]
    dtype: np.dtype
    shape: Shape
    attrs: tuple
    device: Any
    serial: int
    data: Any            # a residency.Data once realized, else None
    depth: int
    skey: tuple | None   # structure without the inputs (and a constant's value): compiler/plan_cache.py
    chain: int           # a pending clean write into a region: its chain's length so far (compiler/regions.py)
    cone: tuple | None   # a pending index instruction's fused cone as counted (array_object/bounds.py ``_kept``)

    def __init__(self, op: str, inputs: tuple[Node, ...], dtype: np.dtype, shape: Shape,
                 attrs: tuple, device: Any) -> None:
        self.op = op
        self.inputs = inputs
        self.dtype = dtype
        self.shape = shape
        self.attrs = attrs
        self.device = device
        self.serial = next(_serial)
        self.data = None
        self.skey = None
        self.chain = 0
        self.cone = None
        depth = 0
        for i in inputs:
            if i.depth > depth:
                depth = i.depth
        self.depth = depth + 1

    @property
    def realized(self) -> bool:
        return self.data is not None

    def realize(self, data: Any) -> None:
        """Attach evaluated data and forget the inputs. A constant keeps its value as the host copy too:
        evaluated on a device, it would otherwise count as device-only data that a later small
        evaluation reading it must download (and the planner's reason would depend on which earlier
        evaluation happened to realize the shared constant)."""
        if self.op == "const" and self.attrs and getattr(data, "host", 0) is None:
            value = np.array(self.attrs[0], dtype=self.dtype)
            value.flags.writeable = False
            data.host = value
        self.data = data
        self.inputs = ()
        self.depth = 0
        self.cone = None

    def __repr__(self) -> str:
        state = "realized" if self.realized else f"{len(self.inputs)} inputs"
        return f"Node#{self.serial}({self.op}, {self.dtype}, {self.shape}, {state})"


def post_order(roots: Iterable[Node], expand: Callable[[Node], bool]) -> list[Node]:
    """Every node reachable from ``roots`` once, each after its inputs (an iterative depth-first walk, inputs in
    order, so that a cone of one structure gives one order); a node for which ``expand`` is False is listed
    without its inputs."""
    order: list[Node] = []
    seen: set[int] = set()
    for root in roots:
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            n, done = stack.pop()
            if done:
                order.append(n)
                continue
            if n.serial in seen:
                continue
            seen.add(n.serial)
            stack.append((n, True))
            if expand(n):
                stack.extend([(i, False) for i in reversed(n.inputs) if i.serial not in seen])
    return order


def redepth(node: Node) -> int:
    """``node``'s depth of unevaluated history counted again (and that of every pending node under it):
    a node keeps the depth it was made with, and evaluations of nodes under it since then (an index
    instruction's bound, a read) leave it too deep, so that ``MAX_DEPTH`` would evaluate it for history
    that is evaluated already. A chained write into a region keeps the depth of the write under it
    (array_object/indexing.py ``chained``)."""
    depths_again(post_order([node], _pending))
    return node.depth


def depths_again(nodes: Iterable[Node]) -> None:
    """The depth of each pending node of ``nodes`` (in an order of inputs first) counted again from its inputs'
    (``redepth``'s step; ``array_object/bounds.py`` gives it the nodes its own walk met)."""
    for n in nodes:
        if n.data is not None:
            continue
        if n.chain > 1:
            n.depth = n.inputs[0].depth
        else:
            d = 0
            for i in n.inputs:
                if i.depth > d:
                    d = i.depth
            n.depth = d + 1


def _pending(n: Node) -> bool:
    return n.data is None


_PLAIN = frozenset({str, int, bool, type(None)})     # attrs that are their own key


def attr_key(value: Any) -> Any:
    """Hashable key for attrs; floats by their bits so -0.0, 0.0 and NaN stay apart.

    >>> attr_key((0.0,)) != attr_key((-0.0,))
    True
    """
    if value.__class__ is tuple:        # most attrs: strings, ints and tuples of them, as they are
        for v in value:
            c = v.__class__
            if c in _PLAIN:
                continue
            if c is tuple:
                for w in v:
                    if w.__class__ not in _PLAIN:
                        break
                else:
                    continue
            return tuple(attr_key(v) for v in value)
        return value
    if isinstance(value, float):
        return ("f", struct.pack("<d", value))
    if isinstance(value, np.generic):
        return (value.dtype.str, value.tobytes())
    return value


def make(op: str, inputs: tuple[Node, ...], dtype: np.dtype, shape: Shape,
         attrs: tuple = (), device: Any = None) -> Node:
    """Return the node for this operation, reusing an identical live one."""
    if device is None:
        device = inputs[0].device
    if op not in OPS and op not in HALF_NATIVE:
        half = dtype.char == "e"            # _has_half, inlined: this runs for every reduction, view ...
        for i in inputs:
            if i.dtype.char == "e":
                half = True
                break
        if half:
            return _in_float32(op, inputs, dtype, shape, attrs, device)
    if op in _SCALAR_FORMS and inputs[1].op == "const" and dtype.kind == "f" and inputs[0].dtype == dtype \
            and inputs[0].shape == shape:
        unary = _SCALAR_FORMS[op].get(inputs[1].attrs[0].item())
        if unary is not None:           # NumPy's fast path for this scalar (OpDef.scalar_forms)
            return make(unary, (inputs[0],), dtype, shape, (), device)
    # slices and attributes rather than len(), a comprehension and getattr(): this runs for every
    # operation recorded
    if inputs[2:]:
        serials: tuple[int, ...] = tuple([i.serial for i in inputs])
    elif inputs[1:]:
        serials = (inputs[0].serial, inputs[1].serial)
    elif inputs:
        serials = (inputs[0].serial,)
    else:
        serials = ()
    try:
        dname = device.name
    except AttributeError:
        dname = device
    # devices by name (equal devices have equal names; hashing a Device calls Python code); reshaped_leaf looks
    # up a reshape's entry by this key
    key = (op, serials, dtype, shape, attr_key(attrs) if attrs else (), dname)
    with _lock:
        ref = _table.get(key)
        node = ref() if ref is not None else None
        # a constant some evaluation realized (an array of its own that was evaluated) is data now: a
        # kernel would read it as an input instead of a uniform (another kernel, no vec form), so the
        # constants handed out are fresh ones
        if node is None or (op == "const" and node.data is not None):
            node = _new_node(Node)          # Node.__init__ inlined: this runs for every new node
            node.op = op
            node.inputs = inputs
            node.dtype = dtype
            node.shape = shape
            node.attrs = attrs
            node.device = device
            node.serial = _next_serial()
            node.data = node.cone = None
            node.chain = 0
            depth = 0
            for i in inputs:
                if i.depth > depth:
                    depth = i.depth
            node.depth = depth + 1
            node.skey = key[:1] + key[2:] if op != "const" else (op, dtype, key[5])
            if ref is None:
                global _inserts
                _inserts += 1
                if _inserts >= _sweep_at:
                    _sweep()
                    _inserts = len(_table)
            _table[key] = weakref.ref(node)
    return node


_HALF, _SINGLE = np.dtype(np.float16), np.dtype(np.float32)


# ops that take float16 as it is held (float32 words of float16 values, core/dtypes.py): the elementwise
# table's ops (each result rounded to float16 in its kernel), casts, and the ops that only move values
HALF_NATIVE = frozenset({"const", "view", "reshape", "astype", "concat", "gather", "setslice", "setstrided",
                         "setpart"})


def _in_float32(op: str, inputs: tuple[Node, ...], dtype: np.dtype, shape: Shape, attrs: tuple,
                device: Any) -> Node:
    """Any other op with a float16 operand or result computed in float32, its result cast back: NumPy's
    half loops accumulate in float and round once (``sum``, ``matmul``), and moving or comparing float16
    values in float32 is exact, so kernels never see float16."""
    ins = tuple(make("astype", (i,), _SINGLE, i.shape, (), device) if i.dtype == _HALF else i for i in inputs)
    if dtype != _HALF:
        return make(op, ins, dtype, shape, attrs, device)
    return make("astype", (make(op, ins, _SINGLE, shape, attrs, device),), _HALF, shape, (), device)


_SCALAR_FORMS = {name: d.scalar_forms for name, d in OPS.items() if d.scalar_forms}
_recent_consts: dict[tuple, Node] = {}     # strong refs to recently used constants (bounded)


def const(value: Any, dtype: np.dtype, device: Any) -> Node:
    """A 0-d constant; its value reaches kernels as a uniform, never as a literal."""
    t = type(value)
    dkey = getattr(device, "name", device)
    if t is float:
        # floats by value, except the ones equality cannot tell apart: 0.0 / -0.0, and NaN
        ckey: tuple | None = ((float, value, dtype, dkey) if value and value == value
                              else (float, struct.pack("<d", value), dtype, dkey))
    else:
        ckey = (t, value, dtype, dkey) if t is int or t is bool else None
    if ckey is not None:
        node = _recent_consts.get(ckey)
        if node is not None and node.data is None:     # (a realized one: as in make)
            return node
    v = np.asarray(value, dtype=dtype)[()]
    node = make("const", (), dtype, (), (v,), device)
    if ckey is not None:
        if len(_recent_consts) >= 512:
            _recent_consts.clear()
        _recent_consts[ckey] = node
    return node


def _no_storage(host: np.ndarray, device: Any) -> Any:
    raise RuntimeError("graph.node.leaf needs the runtime's storage (runtime.residency registers it when "
                       "imported; import gpuarray first)")


_host_data: Any = _no_storage       # residency.Data.from_host, registered by runtime.residency


def register_storage(from_host: Any) -> None:
    """Set how a leaf's host array becomes data (``runtime.residency`` registers ``Data.from_host``:
    the runtime sits above the graph)."""
    global _host_data
    _host_data = from_host


def leaf(host: np.ndarray, device: Any) -> Node:
    """A node holding data that starts on the host."""
    node = Node("leaf", (), host.dtype, tuple(host.shape), (), device)
    node.realize(_host_data(host, device))
    return node


def realized_leaf(data: Any, dtype: np.dtype, shape: Shape, device: Any) -> Node:
    node = Node("leaf", (), dtype, shape, (), device)
    node.realize(data)
    return node


def reshaped_leaf(node: Node, shape: Shape) -> Node:
    """Evaluated ``node``'s data seen in ``shape`` (a leaf sharing it): the same leaf while it lives, so that
    operations recorded on a reshape of evaluated data (``X @ w`` of a vector ``w`` reads it as a column) are
    hash-consed as any others (``runtime/speculate.py`` makes them ahead of the program); the reshape node
    itself, realized on the data, where one was made before ``node`` was evaluated and is alive.

    >>> a = leaf(np.zeros(4, np.float32), None)
    >>> reshaped_leaf(a, (4, 1)) is reshaped_leaf(a, (4, 1))
    True
    """
    data = node.data
    made = ("reshape", (node.serial,), node.dtype, shape, (), getattr(node.device, "name", node.device))   # make's key
    ref = _table.get(made)          # a reshape recorded before the node was evaluated: that node, evaluated
    out = ref() if ref is not None else None        # now as a leaf on the same data (no kernel copies it)
    if out is not None:
        if out.data is None:
            out.realize(data)
        return out
    key = (id(data), shape)         # (the leaf holds the data: its id is not reused while it lives)
    with _lock:
        out = _reshaped.get(key)
        if out is not None and out.data is data:
            return out
        out = _reshaped[key] = Node("leaf", (), node.dtype, shape, (), node.device)
        out.realize(data)
    return out


_reshaped: weakref.WeakValueDictionary[tuple[int, Shape], Node] = weakref.WeakValueDictionary()
