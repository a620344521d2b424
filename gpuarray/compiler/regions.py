"""Chains of writes into regions, evaluated in place.

``x[i] = v`` in a Python loop (rows filled one by one, a Jacobi step's boundary rows, a solver's
columns) records a chain of ``setslice`` nodes (``setstrided`` for writes through a view), each the
array before it with one region replaced.
Fused into one elementwise kernel, a chain of ``k`` writes tests every element of the array against
every region and computes every value at every element: ``k`` times the array's work (and ``bounded``
evaluated such chains every few dozen writes, each time over the whole array: writing the rows of an
``n``-row array cost ``n^2 / 30`` row's worth of work, 4.8 s for 4000 rows of 256 on the host against
NumPy's 7 ms).

A chain of at least REGIONS_MIN writes runs instead as one ``regions`` kernel: the array under the
chain is copied once into the result, then each value is computed over its own region only and stored
there, in order (later writes win, as in NumPy). The chain's members below its top are never
materialised: nothing but the next write reads them (``region_chains`` stops at a member that anything
else reads). Correctness does not depend on how values were recorded; the writes that
``array_object/indexing.py`` records as *clean* (values that read no pending write: they never inline
a chain) are the ones a chain takes, and their chain lengths live on them (``Node.chain``), so that the
recorder evaluates a chain every CHAIN_MAX writes instead of every few dozen.

A clean write's value may read the version of the array it writes (``prevreads``: views of it), where
each read is safe while other threads of its pass store: at the write's own region element for element
(``a[i] *= 2``, ``row += 1``, ``a[:, j] = a[:, j] * s``: each element of the value reads the element it
replaces, through same-shape elementwise operations and reshapes only), or outside the region (a
recurrence: ``a[i] = a[i - 1] * 0.5 + b[i]``, a Gauss-Seidel sweep's neighbour rows). A pass reads that
version from the result itself (an ``rprev`` instruction: the passes before it left it there), so the
chain's members are never materialised either.

>>> import numpy as np, gpuarray as xp
>>> a = xp.zeros((64, 3), dtype=xp.float32)
>>> for i in range(64):
...     a[i] = i
>>> float(a[63, 2]), xp.metrics()["evaluations"] >= 0
(63.0, True)
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from ..graph.node import Node, post_order
from ..graph.shapes import contiguous_strides
from .kernel import FUSABLE_OPS, Instr, Kernel, Result

WRITES = frozenset({"setslice", "setstrided"})     # a write into a region: (old, value) -> new
REGIONS_MIN = 8          # writes in a chain before it runs as a ``regions`` kernel (fewer: one fused kernel)
CHAIN_MAX = 4096         # pending clean writes on one array before the recorder evaluates them
DISJOINT_WORK = 4096     # NumPy's effort deciding that a read of the previous version misses the region

# clean writes whose value reads the previous version (safely: see above) -> those views of it
prevreads: weakref.WeakKeyDictionary[Node, tuple[Node, ...]] = weakref.WeakKeyDictionary()


Place = tuple[int, tuple[tuple[int, int], ...]]     # (offset, ((size, stride), ...)): see ``place``


def place(offset: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> Place:
    """A strided place as (offset, ((size, stride), ...)) in an array's C layout, axes of one element
    dropped: two places with one key hold the same elements in the same order."""
    return offset, tuple([(d, s) for d, s in zip(shape, strides) if d != 1])


def region_key(write: Node) -> Place:
    """A write's region as a ``place``."""
    offset, strides = _span(write)
    return place(offset, write.inputs[1].shape, strides)


def view_key(view: Node) -> Place:
    """A ``view`` node's place in its input."""
    strides, offset = view.attrs
    return place(offset, view.shape, strides)


def extent(where: Place) -> tuple[int, int]:
    """The first and last element a place touches (``lo > hi`` never: an empty place is (offset, offset))."""
    offset, dims = where
    lo = hi = offset
    for d, st in dims:
        lo, hi = (lo + (d - 1) * st, hi) if st < 0 else (lo, hi + (d - 1) * st)
    return lo, hi


def dense(where: Place) -> bool:
    """Whether a place holds every element between its first and last, in any order.

    >>> dense((63, ((64, -1), (64, 64)))), dense((0, ((4, 8),)))
    (True, False)
    """
    size = 1
    for d, st in sorted(where[1], key=lambda ds: abs(ds[1])):
        if abs(st) != size:
            return False
        size *= d
    return True


def disjoint(a: Place, b: Place) -> bool:
    """Whether two places (``region_key`` form) have no element in common (False where that is too
    hard to decide: NumPy's ``shares_memory`` with a bounded effort).

    >>> disjoint((0, ((4, 1),)), (4, ((4, 1),))), disjoint((0, ((4, 8),)), (1, ((4, 8),)))
    (True, True)
    >>> disjoint((0, ((4, 8),)), (16, ((2, 1),)))
    False
    """
    if any(d == 0 for d, _s in a[1] + b[1]):
        return True
    (lo_a, hi_a), (lo_b, hi_b) = extent(a), extent(b)
    if hi_a < lo_b or hi_b < lo_a:
        return True
    # a place that holds every element of its extent shares one with any place inside that extent, and two
    # such places whose extents meet share one (a flipped or transposed view of the region written: no
    # NumPy call, which costs tens of microseconds)
    if dense(a) and (dense(b) or lo_a <= lo_b and hi_b <= hi_a) or dense(b) and lo_b <= lo_a and hi_a <= hi_b:
        return False
    same = _same_lattice(a, b)
    if same is not None:                    # shifted copies of one lattice (a stencil's views): exact
        return not _meets(same[0], same[1])
    lo = min(lo_a, lo_b)
    whole = np.lib.stride_tricks.as_strided(np.empty(1, np.uint8), (max(hi_a, hi_b) - lo + 1,), (1,))
    places = []
    for offset, dims in (a, b):
        places.append(np.lib.stride_tricks.as_strided(
            whole[offset - lo:], tuple(d for d, _s in dims), tuple(s for _d, s in dims)))
    try:
        # (NumPy's stubs list only its -1 and 0; a positive bound is documented and what is meant here)
        return not np.shares_memory(places[0], places[1], max_work=DISJOINT_WORK)  # type: ignore[arg-type]
    except np.exceptions.TooHardError:
        return False


def _same_lattice(a: Place, b: Place) -> tuple[int, list[tuple[int, int]]] | None:
    """(b's first element minus a's, their dims by decreasing stride) where ``a`` and ``b`` hold the same
    lattice of elements shifted (equal sizes and strides once negative strides are walked forwards) and
    each stride exceeds the extent of the dims under it (no element reached twice); else None."""
    (off_a, dims_a), (off_b, dims_b) = a, b
    for d, st in dims_a:
        if st < 0:
            off_a += (d - 1) * st
    for d, st in dims_b:
        if st < 0:
            off_b += (d - 1) * st
    da = sorted([(abs(st), d) for d, st in dims_a], reverse=True)
    if da != sorted([(abs(st), d) for d, st in dims_b], reverse=True):
        return None
    under = 0
    for st, d in reversed(da):
        if st <= under:
            return None
        under += (d - 1) * st
    return off_b - off_a, [(d, st) for st, d in da]


def _meets(delta: int, dims: list[tuple[int, int]]) -> bool:
    """Whether ``delta`` is a sum of ``k * stride`` with ``|k| < size`` over ``dims`` (decreasing strides,
    each larger than the extent under it): then the two shifted lattices share an element. Each dim's
    ``k`` is the floor of ``delta / stride`` or the next integer, since the dims under it reach less than
    one stride."""
    if not dims:
        return delta == 0
    (d, st), rest = dims[0], dims[1:]
    under = sum((n - 1) * s for n, s in rest)
    k0 = delta // st
    for k in (k0, k0 + 1):
        r = delta - k * st
        if abs(k) < d and abs(r) <= under and _meets(r, rest):
            return True
    return False


def chain_length(node: Node) -> int:
    """Pending clean writes under and including ``node`` (0 when ``node`` is not one)."""
    if node.data is not None or node.op not in WRITES:
        return 0
    return node.chain


def region_chains(order: list[Node], live: list[Node],
                  stop: set[int]) -> dict[int, tuple[Node, list[Node], frozenset[int]]]:
    """The chains in the walk ``order`` to run as ``regions`` kernels: top's serial -> (the array under
    the chain, its writes bottom first, the serials of the members that the next write's value reads
    from the result: ``rprev``). A top is a pending clean write that is a target, or that something
    other than the next write of its chain (its base and its ``prevreads``) reads; its chain goes down
    through clean writes that only the write above reads, past none in ``stop`` (computed by kernels of
    their own)."""
    if not any(n.chain and n.data is None and n.op in WRITES for n in order):
        return {}
    reads: dict[int, int] = {}
    as_base: dict[int, int] = {}
    for n in order:
        if n.data is not None:
            continue
        for j, i in enumerate(n.inputs):
            reads[i.serial] = reads.get(i.serial, 0) + 1
            if j == 0 and n.op in WRITES and n.chain:
                as_base[i.serial] = as_base.get(i.serial, 0) + 1
    targets = {t.serial for t in live}
    own: dict[int, int] = {}                        # a write's base -> reads of it by its prevreads
    if prevreads:
        for n in order:
            if n.data is None and n.op in WRITES and n in prevreads:
                got = _own_reads(n, reads, targets)
                if got:
                    under = n.inputs[0].serial
                    own[under] = own.get(under, 0) + got
    out: dict[int, tuple[Node, list[Node], frozenset[int]]] = {}
    for n in order:
        if n.data is not None or n.op not in WRITES or not n.chain or n.serial in stop:
            continue
        s = n.serial
        if s not in targets and _internal(n, reads, as_base, own):
            continue                # the next clean write's base only: inside a chain
        chain = [n]
        b = n.inputs[0]
        while b.data is None and b.op in WRITES and b.chain and b.serial not in targets \
                and b.serial not in stop and _internal(b, reads, as_base, own):
            chain.append(b)
            b = b.inputs[0]
        if len(chain) >= REGIONS_MIN and fits(n):
            chain.reverse()
            out[s] = (b, chain, frozenset(w.inputs[0].serial for w in chain[1:] if w.inputs[0].serial in own))
    return out


def _internal(n: Node, reads: dict[int, int], as_base: dict[int, int], own: dict[int, int]) -> bool:
    """Whether the pending write ``n`` is read only by one clean write above it: as its base, and through
    that write's ``prevreads`` (``own``: how many)."""
    s = n.serial
    return as_base.get(s, 0) == 1 and reads.get(s, 0) == 1 + own.get(s, 0)


def _pending_fusable(n: Node) -> bool:
    return n.data is None and n.op in FUSABLE_OPS


def _own_reads(w: Node, reads: dict[int, int], targets: set[int]) -> int:
    """How many ``prevreads`` views ``w``'s value has where nothing outside that value reads them or what
    is computed from them (its pass then reads them from the result); 0 otherwise."""
    views = {v.serial for v in prevreads.get(w, ())}
    value = w.inputs[1]
    post = [n for n in post_order([value], lambda n: n.serial not in views and _pending_fusable(n))
            if _pending_fusable(n)]
    cone = {n.serial: n for n in post}
    if not views <= cone.keys():
        return 0
    inner: dict[int, int] = {value.serial: 1}           # reads from inside the value's cone (and by ``w``)
    for n in cone.values():
        if n.serial not in views:
            for i in n.inputs:
                inner[i.serial] = inner.get(i.serial, 0) + 1
    dep: set[int] = set()
    for n in post:                                       # inputs before their readers
        if n.serial in views or any(i.serial in dep for i in n.inputs):
            s = n.serial
            if s in targets or reads.get(s, 0) != inner.get(s, 0):
                return 0
            dep.add(s)
    return len(views)


def fits(node: Node) -> bool:
    """Whether ``node``'s array fits one storage binding of its device (a regions kernel writes it
    through one; a larger array keeps the fused form, which splits)."""
    limit = getattr(getattr(node.device, "provider", None), "max_binding", None)
    return limit is None or math.prod(node.shape) * node.dtype.itemsize <= limit


def spans(chain: list[Node]) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """Each write's region as (offset, strides) in elements of the array's C layout (one stride per axis
    of its value), in order: a ``regions`` kernel's attrs."""
    return tuple([_span(w) for w in chain])


def _span(w: Node) -> tuple[int, tuple[int, ...]]:
    if w.op == "setstrided":                # ((offset,), strides)
        (offset,), strides = w.attrs
        return offset, tuple(strides)
    starts, steps = w.attrs                 # setslice
    c = contiguous_strides(w.shape)
    offset = 0
    out = []
    for s, k, c_ in zip(starts, steps, c):
        offset += s * c_
        out.append(k * c_)
    return offset, tuple(out)


def parts(kernel: Kernel) -> list[tuple[list[int], list[int]]]:
    """Per operand of a ``regions`` kernel: (its cone's instructions, arguments first in a depth-first order
    from the operand, which is last; the inputs they read, in the order they are first read). The order
    depends on the cone's structure only, so that writes of one structure give one shader whatever
    instructions they share with the writes before them (constants, views)."""
    instrs = kernel.instrs
    out = []
    for root in kernel.operands:
        cone: list[int] = []
        seen: set[int] = set()
        stack: list[tuple[int, bool]] = [(root, False)]
        while stack:
            i, done = stack.pop()
            if done:
                cone.append(i)
                continue
            if i in seen:
                continue
            seen.add(i)
            stack.append((i, True))
            stack += [(a, False) for a in reversed(instrs[i].args)]
        ks: list[int] = []
        for i in cone:
            if instrs[i].op == "input" and instrs[i].params[0] not in ks:
                ks.append(instrs[i].params[0])
        out.append((cone, ks))
    return out


def part_kernel(kernel: Kernel, cone: list[int], ks: list[int]) -> Kernel:
    """The elementwise kernel computing the operand at the end of ``cone`` (``parts``)."""
    remap = {old: new for new, old in enumerate(cone)}
    kmap = {k: n for n, k in enumerate(ks)}
    instrs = []
    for old in cone:
        x = kernel.instrs[old]
        if x.op == "input":
            instrs.append(Instr("input", (), x.dtype, x.shape, (kmap[x.params[0]],)))
        else:
            instrs.append(Instr(x.op, tuple(remap[a] for a in x.args), x.dtype, x.shape, x.params))
    root = instrs[-1]
    return Kernel(instrs, [kernel.inputs[k] for k in ks], [len(instrs) - 1], [Result(root.dtype, root.shape)],
                  root.shape, kernel.device)
