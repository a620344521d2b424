"""Where an array's data lives: on the host, on a device, or both.

Data is immutable once written, so a host copy and a device copy can both be
kept; a transfer happens only when a consumer needs the data where it is not,
and each transfer is counted in ``metrics()``.

Data computed by a device kernel keeps a ``Recipe``: the kernel's structure and
weak references to the arrays it read. When the device is lost and the data had
no host copy, reading it runs the kernel again on the device's new provider,
provided those arrays still exist (their own lost data is recomputed first, in
the same way); otherwise it raises ``DeviceLostError`` (docs/reliability.md).
"""

from __future__ import annotations

import math
import os
import weakref
from collections.abc import Sequence
from typing import Any, TypeGuard

import numpy as np

from ..core import metrics as _metrics
from ..core.dtypes import STORAGE_NP
from ..core.errors import DeviceLostError
from ..graph import node as _graph
from . import guards as _guards

# ids of data computed ahead of its read (runtime/speculate.py) and not read since: ``get_host`` removes them
WATCHED: set[int] = set()
# id of data of a read started at an upload (runtime/speculate.py) -> that read's ``Ahead``: a read of one
# downloads them all (its mapping asked for at the start, else ``read_together``) and takes the group out
READ_WITH: dict[int, Ahead] = {}


class Ahead:
    """The data of a read started at an upload and of its followers (``datas``), with the provider's token of
    their copies submitted at the start (``provider.start_read``; None: read them together when read)."""

    __slots__ = ("datas", "token", "provider")

    def __init__(self, datas: list[Data], token: Any, provider: Any) -> None:
        self.datas, self.token, self.provider = datas, token, provider

    def take(self, first: Data) -> None:
        """Bring every one of the data to the host (``first``, being read, among them); out of ``READ_WITH``."""
        for d in self.datas:
            READ_WITH.pop(id(d), None)
        hosts = None
        if self.token is not None and not first.lost:
            try:
                hosts = self.provider.finish_read(self.token)
            except Exception:  # noqa: BLE001 - the caller's read then downloads as any other
                hosts = None
        if hosts is None:
            read_together([first], (), [d for d in self.datas if d is not first])
            return
        for d, host in zip(self.datas, hosts, strict=True):
            if d.host is None:
                d.took(host)


class Data:
    """The realized contents of one node: a host array and/or a device handle."""

    __slots__ = ("host", "handle", "provider", "dtype", "shape", "recipe", "owner", "__weakref__")

    def __init__(self, dtype: np.dtype, shape: tuple[int, ...], host: np.ndarray | None = None,
                 handle: Any = None, provider: Any = None) -> None:
        self.dtype = dtype
        self.shape = shape
        self.host = host
        self.handle = handle
        self.provider = provider
        self.recipe: Recipe | None = None     # how a device kernel computed it (see Recipe)
        self.owner: Shared | None = None      # set where the buffer is shared with aliases (prefix)
        if handle is not None and type(self) is Data:
            self.__class__ = DeviceData

    @classmethod
    def from_host(cls, host: np.ndarray, device: Any = None) -> Data:
        host = np.ascontiguousarray(host).view()   # a view: the caller's flags stay as they were
        host.flags.writeable = False
        return cls(host.dtype, tuple(host.shape), host=host)

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    def take_host(self) -> np.ndarray:
        """A new, writable host array of the data, downloaded now and not kept: the caller owns it
        (``np.asarray`` of a large device array: one copy instead of a download and a copy of it).
        The device copy, and its recipe for a lost device, stay; a host copy already kept is copied."""
        if _guards.PENDING:
            _guards.resolve()
        if self.host is not None or self.handle is None or getattr(self.provider, "lost", None) is not None \
                or READ_WITH and id(self) in READ_WITH:
            return np.array(self.get_host())
        host = self.provider.download(self.handle, self.dtype, self.shape)
        _metrics.add("bytes_downloaded", host.nbytes)
        if not host.flags.writeable:
            host = np.array(host)
        return host.reshape(self.shape)

    def on_device(self, provider: Any) -> bool:
        return self.handle is not None and self.provider is provider

    @property
    def lost(self) -> bool:
        """Whether the only copy was on a device that was lost."""
        return self.host is None and getattr(self.provider, "lost", None) is not None

    def get_host(self) -> np.ndarray:
        """The data as a read-only C-contiguous host array (downloads once if needed)."""
        if _guards.PENDING:
            _guards.resolve()       # (a deferred check may replace this data's contents)
        if WATCHED:
            WATCHED.discard(id(self))       # read (runtime/speculate.py: a result computed ahead was used)
        if READ_WITH and self.host is None:
            group = READ_WITH.get(id(self))
            if group is not None:
                group.take(self)
        if self.host is None:
            if getattr(self.provider, "lost", None) is not None:        # self.lost, without the call
                recover(self)
                if self.host is not None:
                    return self.host
            try:
                host = self.provider.download(self.handle, self.dtype, self.shape)
            except DeviceLostError:
                if not self.lost:
                    raise
                recover(self)           # lost during the download: compute it again there
                if self.host is not None:
                    return self.host
                host = self.provider.download(self.handle, self.dtype, self.shape)
            self.took(host)
        h = self.host
        assert h is not None
        if h.flags.writeable:           # results computed at once (runtime.eager.leaf_array) are new arrays
            h.flags.writeable = False   # only gpuarray holds; read-only from where they are handed out
        return h

    def took(self, host: np.ndarray) -> None:
        """Keep ``host``, just downloaded from the device, as this data's read-only host copy (of its shape)."""
        _metrics.add("bytes_downloaded", host.nbytes)
        if host.shape != self.shape:    # providers may download flat: host copies have the shape
            host = host.reshape(self.shape)
        host.flags.writeable = False
        self.host = host
        self.recipe = None          # a host copy survives a lost device: nothing to recompute

    def get_handle(self, provider: Any) -> Any:
        """The data as a handle of ``provider`` (uploads once if needed)."""
        if provider.host_memory:
            return self.get_host()
        if self.handle is not None and self.provider is provider:
            return self.handle
        if self.lost:
            recover(self)               # computed again on the device's new provider
            if self.handle is not None and self.provider is provider:
                return self.handle
        host = self.get_host()
        if self.handle is not None:
            self.release()
        self.handle = provider.upload(host)
        self.provider = provider
        if type(self) is Data:
            self.__class__ = DeviceData     # it holds a device buffer now: free it with the data
        _metrics.add("bytes_uploaded", host.nbytes)
        return self.handle

    def lost_error(self, why: str = "") -> DeviceLostError:
        """The error for reading data whose only copy was on a device that was lost."""
        p = self.provider
        name = getattr(p, "device_name", getattr(p, "name", "a device"))
        return DeviceLostError(
            f"this {self.dtype} array of shape {self.shape} was computed on {name}, which was lost "
            f"({p.lost}), and it had no host copy: it cannot be recovered, because "
            f"{why or 'it was not computed by a kernel that can run again'}. Keep a host copy "
            "(np.asarray) of device arrays whose inputs you do not keep", device=name, reason=str(p.lost))

    def replace(self, host: np.ndarray) -> None:
        """Make ``host`` these contents, in place (every node and view holding this data sees them): the device
        buffer is freed (uploaded again where a kernel reads it), the recipe and elements read are forgotten.
        A deferred check whose kernel flagged its result puts the host's result in its place (``guards``)."""
        host = np.ascontiguousarray(host, dtype=self.dtype).reshape(self.shape)
        host.flags.writeable = False
        self.release()
        self.host = host
        self.recipe = None
        _ELEMENTS.pop(self, None)

    def release(self) -> None:
        if self.owner is not None:      # a shared buffer: freed by its owner when the last user goes
            self.owner = None
        elif self.handle is not None and self.provider is not None:
            try:
                self.provider.free(self.handle)
            except Exception:  # noqa: BLE001 - freeing during interpreter shutdown
                pass
        self.handle = None


class DeviceData(Data):
    """Data that holds (or held) a device buffer, which it frees when it goes away.

    Host-only data is a plain ``Data``, without a finalizer: most small arrays never reach a
    device, and a Python ``__del__`` costs every one of them a call when it dies. ``Data``
    becomes a ``DeviceData`` (same layout) when it gets a device handle."""

    __slots__ = ()

    def __del__(self) -> None:
        if self.handle is not None and self.provider is not None and self.owner is None:
            try:
                self.provider.free(self.handle)
            except Exception:  # noqa: BLE001 - freeing during interpreter shutdown
                pass


class Shared:
    """A device buffer that several ``Data`` read (``prefix``: a view's data on its base's buffer),
    freed when the last of them goes; ``base`` (a weak reference) is the data it was made for, from
    which a lost device's recovery makes the others again (``runtime.recovery``)."""

    __slots__ = ("handle", "provider", "base")

    def __init__(self, handle: Any, provider: Any, base: Data) -> None:
        self.handle = handle
        self.provider = provider
        self.base = weakref.ref(base)

    def __del__(self) -> None:
        try:
            self.provider.free(self.handle)
        except Exception:  # noqa: BLE001 - freeing during interpreter shutdown
            pass


def hosts_of(datas: Sequence[Data]) -> list[np.ndarray]:
    """``get_host()`` of each of ``datas``, those that are small and on one device downloaded together
    (the provider's ``download_many``: one copy each and one wait, where one download each waits once
    each: a host fallback's inputs).

    >>> import gpuarray as xp
    >>> a, b = xp.arange(3.0), xp.ones(2)
    >>> _ = xp.evaluate(a, b)
    >>> [h.tolist() for h in hosts_of([a._node.data, b._node.data])]
    [[0.0, 1.0, 2.0], [1.0, 1.0]]
    """
    todo = [d for d in datas if d.host is None and d.handle is not None and
            getattr(d.provider, "lost", None) is None and hasattr(d.provider, "download_many")]
    if len({id(d.provider) for d in todo}) == 1 and len({id(d) for d in todo}) > 1:
        unique = list({id(d): d for d in todo}.values())
        try:
            hosts = unique[0].provider.download_many([(d.handle, d.dtype, d.shape) for d in unique])
        except DeviceLostError:
            hosts = None            # each one's get_host below recovers it (computed again) or raises
        for d, host in zip(unique, hosts or (), strict=False):
            d.took(host)
    return [d.get_host() for d in datas]


def prefix(data: Data, shape: tuple[int, ...]) -> Data | None:
    """The first ``prod(shape)`` elements of ``data`` as data of ``shape``, without a copy: a view of
    its host array and/or a handle on its device buffer (which both then share), or None where the
    provider cannot alias (arrays in several buffers) or the data was lost.

    >>> d = Data.from_host(np.arange(6.0))
    >>> prefix(d, (2, 2)).get_host().tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """
    size = math.prod(shape)
    host = data.host.reshape(-1)[:size].reshape(shape) if data.host is not None else None
    handle = None
    if data.handle is not None and not data.lost:
        alias = getattr(data.provider, "alias", None)       # (handles may be padded: the storage size)
        handle = alias(data.handle, STORAGE_NP[data.dtype].itemsize * size) if alias is not None else None
    if handle is None:
        return Data(data.dtype, shape, host=host) if host is not None else None
    out = Data(data.dtype, shape, host=host, handle=handle, provider=data.provider)
    if data.owner is None:
        data.owner = Shared(data.handle, data.provider, data)
    out.owner = data.owner
    return out


def element(data: Data, index: int) -> Any:
    """Element ``index`` (flat, C order) of ``data`` as a NumPy scalar, read from the host copy or
    by one small read of the device buffer; None where the provider cannot read one element.

    >>> float(element(Data.from_host(np.arange(6.0)), 4))
    4.0
    """
    if _guards.PENDING:
        _guards.resolve()
    if data.host is not None:
        return data.host.reshape(-1)[index]
    if data.handle is None or data.lost:
        return None
    seen = _ELEMENTS.get(data)
    if seen is not None and index in seen:
        return seen[index]
    read = getattr(data.provider, "read_element", None)
    value = read(data.handle, index, data.dtype) if read is not None else None
    if value is not None:
        _metrics.add("bytes_downloaded", data.dtype.itemsize)
        if seen is None:
            _ELEMENTS[data] = seen = {}
        if len(seen) < _ELEMENTS_KEPT:
            seen[index] = value
    return value


def element_known(data: Data, index: int) -> bool:
    """Whether ``element(data, index)`` needs no device read (a host copy, or an element read before)."""
    if data.host is not None:
        return True
    seen = _ELEMENTS.get(data)
    return seen is not None and index in seen


def some_element_known(data: Data) -> bool:
    """Whether any element of ``data`` is known on the host (a host copy, or an element read before)."""
    return data.host is not None or bool(_ELEMENTS.get(data))


# Elements of device-only data read once (``element``), kept while the data lives: data never changes, and
# SciPy's ``is_lazy_array(x)`` reads ``x[0]`` several times a ``scipy.stats`` call (a round trip each before).
_ELEMENTS: weakref.WeakKeyDictionary[Data, dict[int, Any]] = weakref.WeakKeyDictionary()
_ELEMENTS_KEPT = int(os.environ.get("GPUARRAY_ELEMENTS_KEPT", "8"))     # per data (0: none)

# Small device-only results of a reading evaluation downloaded with what it reads (``read_together``)
COMPANION_ELEMENTS = 16
COMPANIONS = int(os.environ.get("GPUARRAY_READ_COMPANIONS", "4"))      # at most this many a read (0: none)
_TARGET_BYTES = 4096


def exact_buffer(d: Data) -> bool:
    """Whether ``d``'s device buffer holds exactly its elements (not a linear-algebra result packed before
    its flag), so that a download of the buffer is its value."""
    return getattr(d.handle, "nbytes", None) == STORAGE_NP[d.dtype].itemsize * math.prod(d.shape)


def device_only(d: Data | None, prov: Any) -> TypeGuard[Data]:
    """``d`` is data only on ``prov``'s device, in a buffer of its own size (``read_together``)."""
    return d is not None and d.host is None and d.handle is not None and d.provider is prov and not d.lost \
        and exact_buffer(d)


def read_together(targets: Sequence[Data | None], realized: Sequence[Data | None],
                  also: Sequence[Data | None] = ()) -> None:
    """Download the small device-only ``targets`` of a reading evaluation (``float(m)``, ``bool(...)``) with
    the device-only results ``also`` (the reads ``speculate.py`` computed ahead) and up to ``COMPANIONS``
    other small device-only results of the same evaluation (``realized``; at most ``COMPANION_ELEMENTS``
    elements each) in one mapping (``download_many``), so that a later small read that needs those (SciPy's
    ``mean``, reduced on the way to the ``is_lazy_array`` check it reads, then read through ``x - mean``
    again: ``runtime/sink.py``) takes no round trip of its own. Nothing happens where a target is not such
    data, nothing goes with it, or the provider cannot read them together (the caller's read then downloads
    the targets as before).

    >>> read_together([Data.from_host(np.zeros(1))], [])        # host data: nothing to download
    """
    if not targets or not (also or COMPANIONS):
        return
    first = targets[0]
    prov = first.provider if first is not None else None
    many = getattr(prov, "download_many", None)
    if many is None:
        return
    if not all(device_only(d, prov) and d.nbytes <= _TARGET_BYTES for d in targets):
        return
    ids = {id(d) for d in targets}
    extra: list[Data] = []
    for d in also:
        if id(d) not in ids and device_only(d, prov):
            ids.add(id(d))
            extra.append(d)
    n = len(extra)
    for d in realized:
        if len(extra) - n >= COMPANIONS:
            break
        if d is None or not 0 < math.prod(d.shape) <= COMPANION_ELEMENTS or id(d) in ids or not device_only(d, prov):
            continue
        ids.add(id(d))
        extra.append(d)
    if not extra:
        return
    both = [*targets, *extra]
    got = many([(d.handle, d.dtype, d.shape) for d in both])        # type: ignore[union-attr]
    if got is None:
        return
    for d, host in zip(both, got, strict=True):
        d.took(host)                                                # type: ignore[union-attr]


# Read-ahead for views of device data read to the host one after another (a Python loop over rows or
# segments: each slice was a copy kernel and a device round trip before): the base is
# downloaded whole, once, on its second read of another part if it is at most READ_AHEAD_SMALL bytes, or once
# the distinct parts read from it add up to 1/16 of it if it is at most READ_AHEAD_MAX; later reads slice that
# host copy. A part read again does not count: SciPy's ``is_lazy_array(x)`` reads ``x[0]`` on every call, which
# is no loop, and downloading all of ``x`` for it cost more than the reads (``zscore`` of 4 MB).
READ_AHEAD_SMALL = 16 << 20
READ_AHEAD_MAX = 1 << 30
_PARTS_KEPT = 64                # distinct parts remembered per base (beyond them every read counts)
_VIEW_READS: weakref.WeakKeyDictionary[Data, tuple[int, int, set[Any]]] = weakref.WeakKeyDictionary()
_PENDING_READS: weakref.WeakKeyDictionary[Any, tuple[int, int, set[Any]]] = weakref.WeakKeyDictionary()


def read_ahead(data: Data, nbytes: int, part: Any = None) -> bool:
    """Count a read of ``nbytes`` from device-only ``data`` (a view of it, or a small kernel's read of it;
    ``part``: a hashable key of what was read, None for a read that always counts); True where the read-ahead
    rule above says to download it whole now (``get_host`` does), else False. Never for data larger than
    ``READ_AHEAD_MAX``, lost, or in a buffer larger than its data (linear algebra packs a flag after its
    results).

    >>> read_ahead(Data.from_host(np.arange(6.0)), 8)       # a host copy exists: nothing to read ahead
    False
    """
    if data.host is not None or data.handle is None or data.nbytes > READ_AHEAD_MAX or data.lost:
        return False
    if not exact_buffer(data):
        return False
    return _counted(_VIEW_READS, data, data.nbytes, nbytes, part)


def read_ahead_pending(base: Any, nbytes: int, part: Any = None) -> bool:
    """Count a read of ``nbytes`` (``part``: as ``read_ahead``'s) through a view of the unevaluated node
    ``base``; True where the read-ahead rule says to evaluate ``base`` whole now (its views were each a kernel
    that computed their part of it again: SciPy's ``welch`` slices a padded signal, ``np.pad``'s result,
    segment by segment), after which its views read its data (``host_view``).

    >>> from gpuarray.graph.node import Node
    >>> n = Node("add", (), np.dtype("float32"), (1000,), None, None)
    >>> [read_ahead_pending(n, 100, ("row", 0)) for _ in range(3)]     # one part again and again
    [False, False, False]
    >>> read_ahead_pending(n, 100, ("row", 1))                         # another part
    True
    """
    total = math.prod(base.shape) * base.dtype.itemsize
    return total <= READ_AHEAD_MAX and _counted(_PENDING_READS, base, total, nbytes, part)


def _counted(table: weakref.WeakKeyDictionary, key: Any, total: int, nbytes: int, part: Any) -> bool:
    count, read, parts = table.get(key, (0, 0, set()))
    if part is not None and part in parts:
        return False
    if part is not None and len(parts) < _PARTS_KEPT:
        parts.add(part)
    count, read = count + 1, read + nbytes
    table[key] = (count, read, parts)
    return (count >= 2 and total <= READ_AHEAD_SMALL) or 16 * read >= total


def view_part(shape: tuple[int, ...], attrs: Any) -> tuple:
    """The read-ahead key of a view (``read_ahead``'s ``part``): its node's shape and attrs (strides,
    offset), the same whichever path reads it (``host_view``, the planner's small reads, ``GpuArray``'s
    reads of views of unevaluated bases)."""
    return shape, attrs


def host_view(data: Data, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> np.ndarray | None:
    """The strided view (``shape``, ``strides`` and ``offset`` in elements of ``data``'s C order) of
    ``data`` as a read-only host array, from its host copy, which this makes by one download under the
    read-ahead rule above; None where the view should be read through the device (a copy kernel).

    >>> d = Data.from_host(np.arange(6.0))
    >>> host_view(d, (2,), (2,), 1).tolist()
    [1.0, 3.0]
    """
    part = view_part(shape, (strides, offset))
    if data.host is None and not read_ahead(data, math.prod(shape) * data.dtype.itemsize, part):
        return None
    flat = data.get_host().reshape(-1)
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:], shape, tuple(st * item for st in strides),
                                           writeable=False)


class Recipe:
    """How one device kernel computed its outputs, kept with their data so that it can run again
    on a new provider after the device was lost.

    It holds the kernel's instructions (not its nodes) and *weak* references to the arrays it
    read and to the ``Data`` it wrote: keeping it costs no memory beyond the instructions, and
    an input that was freed makes its outputs unrecoverable rather than being kept alive.
    """

    __slots__ = ("kind", "fields", "inputs", "outputs", "specs")

    def __init__(self, kernel: Any, outputs: list[Data]) -> None:
        self.kind = type(kernel)
        self.fields = dict(kernel.__dict__)      # the kernel less its nodes (copy.copy is 2x slower)
        self.fields["inputs"] = self.fields["out_nodes"] = None
        self.inputs = [weakref.ref(n) for n in kernel.inputs]
        self.outputs = [weakref.ref(d) for d in outputs]
        self.specs = [(n.dtype, n.shape) for n in kernel.out_nodes]

    @classmethod
    def again(cls, kind: type, fields: dict, specs: list, inputs: list[Any], outputs: Sequence[Data]) -> Recipe:
        """The recipe of a kernel with ``fields`` (another recipe's) run again over ``inputs`` into
        ``outputs`` (a replayed evaluation plan, ``replay.py``)."""
        r = cls.__new__(cls)
        r.kind, r.fields, r.specs = kind, fields, specs
        ins: list[weakref.ref] = []     # loops, not comprehensions: this runs for every replayed kernel
        for n in inputs:
            ins += (weakref.ref(n),)
        outs: list[weakref.ref] = []
        for d in outputs:
            outs += (weakref.ref(d),)
        r.inputs, r.outputs = ins, outs
        return r

    def kernel(self, inputs: list[Any], out_nodes: list[Any]) -> Any:
        """The kernel again, reading ``inputs`` and writing ``out_nodes``."""
        k = object.__new__(self.kind)
        k.__dict__.update(self.fields, inputs=inputs, out_nodes=out_nodes)
        return k

    def input_nodes(self) -> list[Any] | str:
        """The input nodes, or why they are not all there any more."""
        nodes = [ref() for ref in self.inputs]
        gone = [i for i, n in enumerate(nodes) if n is None]
        if not gone:
            return nodes
        ins = {i.params[0]: i for i in self.fields["instrs"] if i.op == "input"}
        what = ", ".join(f"{ins[k].dtype} {tuple(ins[k].shape)}" for k in gone if k in ins)
        if len(nodes) == 1:
            return f"the array it was computed from ({what}) no longer exists"
        return f"{len(gone)} of the {len(nodes)} arrays it was computed from ({what}) no longer exist"


def remember(kernel: Any, outputs: list[Data]) -> None:
    """Attach the recipe of ``kernel`` (just run on a device) to the data it wrote."""
    recipe = Recipe(kernel, outputs)
    for d in outputs:
        d.recipe = recipe


def _not_registered(data: Data) -> None:
    raise RuntimeError("runtime.residency: recomputing lost data needs runtime.recovery, which registers "
                       "itself when imported (import gpuarray first)")


recover: Any = _not_registered     # set by runtime.recovery (it runs kernels through the planner)


def register_recovery(fn: Any) -> None:
    """Set the function that computes lost data again (``runtime.recovery.recover``)."""
    global recover
    recover = fn


_graph.register_storage(Data.from_host)
