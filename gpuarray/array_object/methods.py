"""The ndarray methods and attributes NumPy code reaches for, on GpuArray.

``GpuArray`` inherits them from :class:`NumPyMethods`. Each method takes
NumPy's signature and follows NumPy's dtype rules (``x.mean()`` of integers is
float64, ``x.sum()`` of int8 is int64) because it *is* the NumPy function:
``x.sum(axis=0)`` runs ``numpy.sum(x, axis=0)``, which ``__array_function__``
sends to its device adapter in ``interop`` (and from there to ``gpuarray.sum``),
so the result is recorded lazily and fuses like everything else. What has no
device implementation runs on the host as a counted fallback, exactly as the
NumPy function would. The reductions' common case (a floating array, ``axis``
None or an int, every other argument its default: ``x.sum()``, ``x.std(axis=0)``)
calls ``gpuarray.<name>`` directly, which gives the same result without NumPy's
dispatch (``_plain``).

Arrays are immutable values here, so the methods that write (``fill``,
``sort``, ``x.real = ...``) rebind the array to a new value, like ``x[k] = v``
does, and ``copy()`` / ``copy.copy`` / ``copy.deepcopy`` are free: the copy
shares the (immutable) graph node.

>>> import gpuarray as xp
>>> x = xp.asarray([[1, 2], [3, 4]], dtype=xp.int8, device="cpu")
>>> x.sum().dtype, x.mean(axis=0).tolist(), x.T.flags.c_contiguous
(dtype('int64'), [2.0, 3.0], True)
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..graph.shapes import contiguous_strides
from .aliasing import assign, derive, set_writeable
from .hooks import UP

_NOVALUE: Any = np._NoValue
_np: Any = np            # NumPy, untyped: its stubs do not know that these functions accept GpuArrays

if TYPE_CHECKING:
    from .array import GpuArray


def _axes_arg(axes: tuple) -> Any:
    """``transpose(*axes)``: no argument / ``None`` / one tuple / the axes as separate ints."""
    if not axes or (len(axes) == 1 and axes[0] is None):
        return None
    if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        return tuple(axes[0])
    return axes


def _plain(a: Any, axis: Any, keepdims: Any, kinds: str = "f") -> bool:
    """Whether a reduction method's call is the common case that gpuarray's own function computes
    as NumPy's would: an array of a real floating dtype (or of ``kinds``), ``axis`` None or a Python
    int (not for a 0-d array: NumPy's ``mean`` raises there, its ``sum`` does not), ``keepdims`` a
    bool, the other arguments their defaults (the caller checks those). The result dtype is then
    the array's, the argument checks are the function's own, and NumPy's dispatch, the adapter's
    argument binding and its dtype probe are skipped (about ninety Python calls of ``x.sum()``, a
    hundred and thirty of ``x.std(axis=0)``)."""
    node = a._node
    return node.dtype.kind in kinds and keepdims.__class__ is bool and (
        axis is None or axis.__class__ is int and node.shape != ())


def _moment(a: Any, name: str, axis: Any, dtype: Any, out: Any, ddof: Any, keepdims: Any, where: Any,
            mean: Any, correction: Any) -> Any:
    """``a.var(...)`` / ``a.std(...)``: gpuarray's own function in the common case (``_plain``, a
    Python number for ``ddof``, the other arguments their defaults), else NumPy's."""
    if dtype is None and out is None and where is True and mean is _NOVALUE and correction is _NOVALUE \
            and (ddof.__class__ is int or ddof.__class__ is float) and _plain(a, axis, keepdims):
        return UP.reductions[name](a, axis=axis, correction=ddof, keepdims=keepdims)
    return getattr(_np, name)(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where,
                              mean=mean, correction=correction)

def format_array(a: Any, fmt: Callable[[np.ndarray], str]) -> str:
    """``fmt`` (``repr`` or ``str``) of ``a``'s values as NumPy formats them, reading back only what shows.

    When NumPy would summarize (more than ``threshold`` elements), only the ``edgeitems`` at each end
    of every long axis are gathered on the device and downloaded, with one placeholder in between so
    that NumPy still prints ``...`` there; the ``shape=`` NumPy then adds is the real shape.
    """
    opts = np.get_printoptions()
    edge, threshold = int(opts["edgeitems"]), opts["threshold"]
    if a.size <= threshold or all(n <= 2 * edge for n in a.shape):
        return fmt(a._host())
    keep = [np.r_[0:edge + 1, n - edge:n] if n > 2 * edge else np.arange(n) for n in a.shape]
    part = a[np.ix_(*keep)]._host()         # edges (and one placeholder per long axis) only
    with np.printoptions(threshold=0):
        text = fmt(part)
    return text.replace(f"shape={part.shape}", f"shape={a.shape}")


class Flags:
    """``x.flags`` as NumPy reports them for the array's place in its memory.

    A GpuArray that is not a view is C-contiguous, aligned, owns its data and is writeable. A
    view (basic indexing, ``.T``, ``reshape`` ...) reports the contiguity of its strides, does not
    own its data, and is read-only where NumPy's is (``broadcast_to``, ``diagonal``) or where
    ``flags.writeable = False`` was set. Indexing works as on NumPy's flags
    (``x.flags["C_CONTIGUOUS"]``, ``x.flags["F"]``).
    """

    __slots__ = ("_a",)
    _KEYS = {"C": "c_contiguous", "CONTIGUOUS": "c_contiguous", "C_CONTIGUOUS": "c_contiguous",
             "F": "f_contiguous", "FORTRAN": "f_contiguous", "F_CONTIGUOUS": "f_contiguous",
             "W": "writeable", "WRITEABLE": "writeable", "O": "owndata", "OWNDATA": "owndata",
             "A": "aligned", "ALIGNED": "aligned", "X": "writebackifcopy", "WRITEBACKIFCOPY": "writebackifcopy",
             "B": "behaved", "BEHAVED": "behaved", "CA": "carray", "CARRAY": "carray",
             "FA": "farray", "FARRAY": "farray", "FNC": "fnc", "FORC": "forc"}

    def __init__(self, array: Any) -> None:
        self._a = array

    def _contiguous(self, fortran: bool) -> bool:
        a = self._a
        shape = a.shape
        if 0 in shape:
            return True
        info = a._view
        if info is None or info.identity:
            return sum(s > 1 for s in shape) <= 1 if fortran else True
        if info.part is not None and a.size > 1:
            return False
        acc = 1
        dims = zip(shape, info.strides, strict=True)
        for n, st in (dims if fortran else reversed(list(dims))):
            if n != 1 and st != acc:
                return False
            acc *= n
        return True

    @property
    def c_contiguous(self) -> bool:
        return self._contiguous(False)

    @property
    def f_contiguous(self) -> bool:
        return self._contiguous(True)

    contiguous = c_contiguous
    fortran = f_contiguous

    @property
    def writeable(self) -> bool:
        info = self._a._view
        return info is None or info.writeable

    @writeable.setter
    def writeable(self, flag: bool) -> None:
        set_writeable(self._a, flag)

    @property
    def owndata(self) -> bool:
        info = self._a._view
        return info is None or info.base is None

    aligned = property(lambda self: True)
    writebackifcopy = property(lambda self: False)

    @property
    def behaved(self) -> bool:
        return self.writeable

    @property
    def carray(self) -> bool:
        return self.c_contiguous and self.writeable

    @property
    def farray(self) -> bool:                      # NumPy: F-contiguous and not C-contiguous
        return self.f_contiguous and not self.c_contiguous and self.writeable

    @property
    def fnc(self) -> bool:
        return self.f_contiguous and not self.c_contiguous

    @property
    def forc(self) -> bool:
        return self.f_contiguous or self.c_contiguous

    def __getitem__(self, key: str) -> bool:
        name = self._KEYS.get(str(key).upper())
        if name is None:
            raise KeyError(f"Unknown flag {key!r}")
        return bool(getattr(self, name))

    def __setitem__(self, key: str, value: bool) -> None:
        if self._KEYS.get(str(key).upper()) != "writeable":
            raise ValueError(f"setting the {key!r} flag is not supported; only WRITEABLE can be set")
        self.writeable = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Flags) and all(self[k] == other[k] for k in ("C", "F", "W", "O"))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "\n".join(f"  {k.upper()} : {self[k]}" for k in
                         ("c_contiguous", "f_contiguous", "owndata", "writeable", "aligned", "writebackifcopy"))


class FlatIter:
    """``x.flat``: ``x``'s elements in C order, as one 1-d sequence (reads are copies, as NumPy's)."""

    __slots__ = ("_a",)

    def __init__(self, array: Any) -> None:
        self._a = array

    @property
    def base(self) -> Any:
        return self._a

    def __len__(self) -> int:
        return int(self._a.size)

    def _flat(self) -> Any:
        return _np.ravel(self._a)

    def __getitem__(self, key: Any) -> Any:
        return self._flat()[key].copy()

    def __setitem__(self, key: Any, value: Any) -> None:
        a = self._a
        flat = self._flat().copy()
        if key is Ellipsis or (isinstance(key, slice) and key == slice(None)):
            v = _np.asarray(value) if not hasattr(value, "__array_namespace__") else value
            if getattr(v, "size", 1) not in (1, a.size):
                raise ValueError(f"x.flat[...] = v: v has {v.size} elements, x has {a.size}; NumPy would repeat "
                                 "v, which gpuarray does not; pass a scalar or x.size values")
            flat[...] = v.reshape(-1) if getattr(v, "ndim", 0) else v
        else:
            flat[key] = value
        a[...] = flat.reshape(a.shape)

    def __iter__(self) -> Any:
        return iter(self._flat())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self._flat(), dtype=dtype)


class NumPyMethods:
    """ndarray-style methods, attributes and protocols, mixed into ``GpuArray``."""

    __slots__ = ()

    if TYPE_CHECKING:  # provided by GpuArray
        _node: Any
        _view: Any
        @property
        def shape(self) -> tuple[int, ...]: ...
        @property
        def dtype(self) -> np.dtype: ...
        @property
        def ndim(self) -> int: ...
        @property
        def size(self) -> int: ...
        def __getitem__(self, key: Any) -> GpuArray: ...
        def __setitem__(self, key: Any, value: Any) -> None: ...
        def _host(self) -> np.ndarray: ...
        def _scalar(self, kind: str) -> Any: ...

    # ---- conversion and shape
    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
               copy: bool = True, *, device: Any = None) -> GpuArray:
        """``dtype``-converted array, with NumPy's ``casting`` check (``'unsafe'`` by default)."""
        dt = np.dtype(dtype)
        if casting != "unsafe" and not _np.can_cast(self.dtype, dt, casting=casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to {dt!r} according to the rule "
                            f"{casting!r}")
        if order not in ("K", "A", "C", "F"):
            raise ValueError(f"astype: order must be one of 'K', 'A', 'C' or 'F'; got {order!r}")
        return UP.astype(self, dt, copy=bool(copy), device=device)  # type: ignore[arg-type]

    def reshape(self, *shape: Any, order: str = "C", copy: bool | None = None) -> GpuArray:
        """``reshape(2, 3)`` or ``reshape((2, 3))``; ``order='F'`` reads and writes in Fortran order."""
        if not shape:
            raise TypeError("reshape() missing required argument 'shape' (pos 1)")
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])           # reshape(()) is a valid request for a 0-d array
        return _np.reshape(self, shape, order=order, copy=copy)

    def ravel(self, order: str = "C") -> GpuArray:
        return _np.ravel(self, order=order)

    def flatten(self, order: str = "C") -> GpuArray:
        """A flat copy (never a view, as in NumPy)."""
        return _np.ravel(self, order=order).copy()

    def copy(self, order: str = "C") -> GpuArray:
        """A copy: a new array sharing the immutable value, so it costs nothing."""
        return UP.array_type(self._node)

    def __copy__(self) -> GpuArray:
        return UP.array_type(self._node)

    def __deepcopy__(self, memo: dict) -> GpuArray:
        return UP.array_type(self._node)

    def view(self, dtype: Any = None, type: Any = None) -> GpuArray:  # noqa: A002 - NumPy's name
        """``x.view()``: a new array sharing ``x``'s memory (writes go both ways), as in NumPy.

        ``x.view(dtype)`` between a complex dtype and the real dtype of its parts (complex128 <->
        float64, complex64 <-> float32: the last axis holds real, imaginary, real, ... as in NumPy)
        gives NumPy's values in a new, read-only array: writing to it raises instead of being lost
        (it does not share ``x``'s memory). Other reinterpretations of the bytes (``x.view(np.int32)``)
        are not supported."""
        if type is not None or (isinstance(dtype, builtins.type) and issubclass(dtype, np.ndarray)):
            raise TypeError("view(type=...): a GpuArray cannot become an ndarray subclass; use np.asarray(x) "
                            "for a host copy")
        if dtype is not None and np.dtype(dtype) != self.dtype:
            return _complex_parts_view(self, np.dtype(dtype))
        return derive(self)

    @property
    def flat(self) -> FlatIter:
        """NumPy's ``x.flat``: the elements in C order; ``x.flat[k]`` reads, ``x.flat[k] = v`` writes."""
        return FlatIter(self)

    @flat.setter
    def flat(self, value: Any) -> None:
        FlatIter(self)[...] = value

    def fill(self, value: Any) -> None:
        """Set every element to ``value`` (cast as NumPy's ``fill`` casts it); rebinds this array."""
        if isinstance(value, UP.array_type):
            if value.size != 1:
                raise ValueError("Input object to FillWithScalar is not a scalar")
            v = UP.reshape(value, ()).astype(self.dtype)
            assign(self, UP.broadcast_to(v, self.shape)._node)
            return
        if isinstance(value, (np.ndarray, np.generic)):
            if value.size != 1:
                raise ValueError("Input object to FillWithScalar is not a scalar")
            value = value.reshape(()).item() if isinstance(value, np.ndarray) else value.item()
        with np.errstate(all="ignore"):
            host = np.array(value, dtype=self.dtype)
        assign(self, UP.full(self.shape, host.item(), dtype=self.dtype, device=self._node.device)._node)

    def item(self, *args: Any) -> Any:
        """A Python scalar: ``item()`` of a size-1 array, ``item(i)`` (flat index), ``item(i, j, ...)``."""
        if len(args) == 1 and isinstance(args[0], tuple):
            args = args[0]
        if not args:
            if self.size != 1:
                raise ValueError("can only convert an array of size 1 to a Python scalar")
            return self._scalar("item").item()          # an element of evaluated data: one small read
        if len(args) == 1:
            i = operator.index(args[0])
            if not -self.size <= i < self.size:
                raise IndexError(f"index {i} is out of bounds for size {self.size}")
            return _np.reshape(self, (-1,))[i]._scalar("item").item()
        if len(args) != self.ndim:
            raise ValueError("incorrect number of indices for array")
        return self[tuple(operator.index(a) for a in args)]._scalar("item").item()

    def tobytes(self, order: str = "C") -> bytes:
        return self._host().tobytes(order=order)  # type: ignore[arg-type]

    def squeeze(self, axis: Any = None) -> GpuArray:
        return _np.squeeze(self, axis=axis)

    def swapaxes(self, axis1: int, axis2: int) -> GpuArray:
        return _np.swapaxes(self, axis1, axis2)

    def transpose(self, *axes: Any) -> GpuArray:
        """``transpose()``, ``transpose((1, 0))`` or ``transpose(1, 0)`` (a view)."""
        return _np.transpose(self, _axes_arg(axes))

    @property
    def flags(self) -> Flags:
        return Flags(self)

    @property
    def base(self) -> GpuArray | None:
        """The array whose memory this view shares (NumPy's ``base``); None for an array that is no view."""
        info = self._view
        return None if info is None else info.base

    @property
    def strides(self) -> tuple[int, ...]:
        """Bytes to step along each axis, as NumPy reports them for this array's place in its memory."""
        info = self._view
        if info is None or info.identity:
            return tuple(s * self.dtype.itemsize for s in contiguous_strides(self.shape))
        item = info.storage.node.dtype.itemsize
        return tuple(s * item for s in info.strides)

    # ---- real and imaginary parts
    @property
    def real(self) -> GpuArray:
        return _np.real(self)

    @real.setter
    def real(self, value: Any) -> None:
        self.real[...] = value

    @property
    def imag(self) -> GpuArray:
        return _np.imag(self)

    @imag.setter
    def imag(self, value: Any) -> None:
        if self.dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        self.imag[...] = value

    def conj(self) -> GpuArray:
        """The complex conjugate; a real array itself (NumPy's method returns the same array then)."""
        return _np.conjugate(self) if self.dtype.kind == "c" else self     # type: ignore[return-value]

    def conjugate(self) -> GpuArray:
        return self.conj()

    # ---- reductions (numpy.<name> and its device adapter)
    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = _NOVALUE, where: Any = True) -> GpuArray:
        if dtype is None and out is None and initial is _NOVALUE and where is True and _plain(self, axis, keepdims):
            return UP.reductions["sum"](self, axis=axis, keepdims=keepdims)
        return _np.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)

    def prod(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
             initial: Any = _NOVALUE, where: Any = True) -> GpuArray:
        if dtype is None and out is None and initial is _NOVALUE and where is True and _plain(self, axis, keepdims):
            return UP.reductions["prod"](self, axis=axis, keepdims=keepdims)
        return _np.prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)

    def mean(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *,
             where: Any = True) -> GpuArray:
        if dtype is None and out is None and where is True and _plain(self, axis, keepdims):
            return UP.reductions["mean"](self, axis=axis, keepdims=keepdims)
        return _np.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)

    def var(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0, keepdims: bool = False,
            *, where: Any = True, mean: Any = _NOVALUE, correction: Any = _NOVALUE) -> GpuArray:
        return _moment(self, "var", axis, dtype, out, ddof, keepdims, where, mean, correction)

    def std(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0, keepdims: bool = False,
            *, where: Any = True, mean: Any = _NOVALUE, correction: Any = _NOVALUE) -> GpuArray:
        return _moment(self, "std", axis, dtype, out, ddof, keepdims, where, mean, correction)

    def max(self, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = _NOVALUE,
            where: Any = True) -> GpuArray:
        if out is None and initial is _NOVALUE and where is True and _plain(self, axis, keepdims, "fiu"):
            return UP.reductions["max"](self, axis=axis, keepdims=keepdims)
        return _np.max(self, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)

    def min(self, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = _NOVALUE,
            where: Any = True) -> GpuArray:
        if out is None and initial is _NOVALUE and where is True and _plain(self, axis, keepdims, "fiu"):
            return UP.reductions["min"](self, axis=axis, keepdims=keepdims)
        return _np.min(self, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)

    def all(self, axis: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = True) -> GpuArray:
        return _np.all(self, axis=axis, out=out, keepdims=keepdims, where=where)

    def any(self, axis: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = True) -> GpuArray:
        return _np.any(self, axis=axis, out=out, keepdims=keepdims, where=where)

    def argmax(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> GpuArray:
        return _np.argmax(self, axis=axis, out=out, keepdims=keepdims)

    def argmin(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> GpuArray:
        return _np.argmin(self, axis=axis, out=out, keepdims=keepdims)

    def cumsum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> GpuArray:
        return _np.cumsum(self, axis=axis, dtype=dtype, out=out)

    def cumprod(self, axis: Any = None, dtype: Any = None, out: Any = None) -> GpuArray:
        return _np.cumprod(self, axis=axis, dtype=dtype, out=out)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
              out: Any = None) -> GpuArray:
        return _np.trace(self, offset=offset, axis1=axis1, axis2=axis2, dtype=dtype, out=out)

    # ---- elementwise and products
    def clip(self, min: Any = None, max: Any = None, out: Any = None, **kwargs: Any) -> GpuArray:  # noqa: A002
        return _np.clip(self, min, max, out=out, **kwargs)

    def round(self, decimals: int = 0, out: Any = None) -> GpuArray:
        return _np.round(self, decimals=decimals, out=out)

    def dot(self, b: Any, out: Any = None) -> GpuArray:
        return _np.dot(self, b, out=out)

    def __divmod__(self, other: Any) -> Any:
        return _np.divmod(self, other)

    def __rdivmod__(self, other: Any) -> Any:
        return _np.divmod(other, self)

    # ---- indexing, searching, sorting
    def nonzero(self) -> tuple[GpuArray, ...]:
        return _np.nonzero(self)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> GpuArray:
        return _np.diagonal(self, offset=offset, axis1=axis1, axis2=axis2)

    def take(self, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> GpuArray:
        return _np.take(self, indices, axis=axis, out=out, mode=mode)

    def repeat(self, repeats: Any, axis: Any = None) -> GpuArray:
        return _np.repeat(self, repeats, axis=axis)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> GpuArray:
        return _np.searchsorted(self, v, side=side, sorter=sorter)

    def argsort(self, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> GpuArray:
        return _np.argsort(self, axis=axis, kind=kind, order=order, stable=stable)

    def sort(self, axis: int = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> None:
        """Sort in place: this array is rebound to its sorted value."""
        assign(self, _np.sort(self, axis=axis, kind=kind, order=order, stable=stable)._node)

    def argpartition(self, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> GpuArray:
        return _np.argpartition(self, kth, axis=axis, kind=kind, order=order)

    def partition(self, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> None:
        """Partition in place: this array is rebound to its partitioned value."""
        assign(self, _np.partition(self, kth, axis=axis, kind=kind, order=order)._node)

    def compress(self, condition: Any, axis: Any = None, out: Any = None) -> GpuArray:
        return _np.compress(condition, self, axis=axis, out=out)

    def choose(self, choices: Any, out: Any = None, mode: str = "raise") -> GpuArray:
        return _np.choose(self, choices, out=out, mode=mode)

    def put(self, indices: Any, values: Any, mode: str = "raise") -> None:
        """``numpy.put``: writes ``values`` at the flat ``indices`` (through to the arrays sharing memory)."""
        _np.put(self, indices, values, mode=mode)

    def tofile(self, fid: Any, sep: str = "", format: str = "%s") -> None:  # noqa: A002 - NumPy's name
        """Writes a host copy (``numpy.ndarray.tofile``)."""
        np.asarray(self).tofile(fid, sep=sep, format=format)

    def __contains__(self, value: Any) -> bool:
        """``value in x``: ``(x == value).any()``, as in NumPy (evaluates now)."""
        return bool(_np.any(_np.equal(self, value)))


__all__ = ["Flags", "NumPyMethods", "format_array"]


def _complex_parts_view(x: NumPyMethods, dtype: np.dtype) -> GpuArray:
    """``x.view(dtype)`` where one of ``x.dtype``, ``dtype`` is complex and the other the dtype of its
    parts: NumPy's values and errors, in a new read-only array (see ``NumPyMethods.view``)."""
    src = x.dtype
    if not ((src.kind == "c" and dtype.kind == "f" and 2 * dtype.itemsize == src.itemsize)
            or (src.kind == "f" and dtype.kind == "c" and 2 * src.itemsize == dtype.itemsize)):
        raise NotImplementedError(
            f"view({dtype}): reinterpreting the bytes of a {src} array is not supported (only between a "
            "complex dtype and the real dtype of its parts); use astype() to convert the values, or "
            "np.asarray(x).view(dtype) on a host copy")
    if x.ndim == 0:
        raise ValueError("Changing the dtype of a 0d array is only supported if the itemsize is unchanged")
    info = x._view
    if (info is not None and x.shape[-1] != 1 and x.size != 0
            and (info.part is not None or info.strides[-1] != 1)):
        raise ValueError("To change to a dtype of a different size, the last axis must be contiguous")
    if src.kind == "c":
        out = _np.stack([_np.real(x), _np.imag(x)], axis=-1).reshape(x.shape[:-1] + (2 * x.shape[-1],))
    else:
        if x.shape[-1] % 2:
            raise ValueError("When changing to a larger dtype, its size must be a divisor of the total size in "
                             "bytes of the last axis of the array.")
        out = _np.zeros_like(x[..., 0::2], dtype=dtype)
        out.real = x[..., 0::2]
        out.imag = x[..., 1::2]
    set_writeable(out, False)
    return out
