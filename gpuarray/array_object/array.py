"""GpuArray: a lazy NumPy-style array. Operators come from the op table.

>>> import gpuarray as xp
>>> a = xp.asarray([1.0, 2.0, 3.0], device="cpu")
>>> (a * 2 + 1).tolist()
[3.0, 5.0, 7.0]
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ..core.ops import OPS
from ..graph.node import Node, realized_leaf
from ..runtime.devices import Device
from ..runtime.planner import evaluate_nodes
from ..runtime.residency import Data, element, host_view, read_ahead_pending, view_part
from .aliasing import WRITE_LOCK, assign, derive_index, derive_permute, set_shape
from .elementwise import binary_method, bind_array_type, finish, unary
from .hooks import UP, register
from .indexing import basic_index, getitem, is_basic, one_element, point_read, setitem
from .methods import NumPyMethods, format_array

if TYPE_CHECKING:
    _Operand: TypeAlias = "GpuArray | bool | int | float | complex | np.ndarray | np.generic"


# NumPy code that converts an array with np.asarray in order to write its results into it. NumPy
# gets a host copy of a GpuArray, never its memory, so such a write would be lost without a word:
# (module, function) of the caller of __array__ -> what is not supported.
_OUTPUT_TARGETS: dict[tuple[str, str], str] = {
    ("scipy.ndimage._ni_support", "_get_output"):
        "scipy.ndimage cannot write its result into a GpuArray passed as output=: NumPy works on a host "
        "copy of the array, not on its memory, so the array would not be filled. Use the return value "
        "instead (y = ndimage.<function>(x, ...)), as with JAX and dask arrays",
}


# Callers of __bool__ that only test whether it raises and discard the value: (module suffix, function).
# array-api-compat's ``is_lazy_array(x)`` (vendored by SciPy and scikit-learn) asks an unknown array
# library ``bool(any(reshape(x, -1)[0]))`` and answers "not lazy" when that returns at all; SciPy asks
# it of pending results several times a ``scipy.stats`` call, each an evaluation and a wait for the GPU.
# A GpuArray's bool() always succeeds (its answer would be False either way), so the probe gets its
# answer without the array being computed.
_VALUE_UNUSED: tuple[tuple[str, str], ...] = (
    ("array_api_compat.common._helpers", "is_lazy_array"),
)


def _value_unused(caller: Any) -> bool:
    """Whether ``caller`` (the frame that called ``__bool__``) discards the value (``_VALUE_UNUSED``)."""
    name = caller.f_code.co_name
    for suffix, function in _VALUE_UNUSED:
        if name == function and caller.f_globals.get("__name__", "").endswith(suffix):
            return True
    return False


# np.asarray of device-only data of at least this many bytes hands the caller the downloaded array itself
# (not kept as the data's host copy; a later read downloads again); smaller ones keep the host copy.
HANDOVER_BYTES = 1 << 20


def _refuse_output_target(caller: Any) -> None:
    """TypeError when ``caller`` (the frame that called ``__array__``) converts the array only to
    write into it (``_OUTPUT_TARGETS``)."""
    what = _OUTPUT_TARGETS.get((caller.f_globals.get("__name__", ""), caller.f_code.co_name))
    if what is not None:
        raise TypeError(what)


class GpuArray(NumPyMethods):
    """An n-dimensional array whose operations are recorded lazily and run fused.

    The ndarray methods (``sum``, ``mean``, ``astype``, ``reshape``, ``flags`` ...) come from
    ``_methods.NumPyMethods``."""

    __slots__ = ("_node", "_view", "__weakref__")

    if TYPE_CHECKING:  # the operators are installed from the op table by _install(); declared for type checkers
        def __add__(self, other: _Operand, /) -> GpuArray: ...
        def __radd__(self, other: _Operand, /) -> GpuArray: ...
        def __iadd__(self, other: _Operand, /) -> GpuArray: ...
        def __sub__(self, other: _Operand, /) -> GpuArray: ...
        def __rsub__(self, other: _Operand, /) -> GpuArray: ...
        def __isub__(self, other: _Operand, /) -> GpuArray: ...
        def __mul__(self, other: _Operand, /) -> GpuArray: ...
        def __rmul__(self, other: _Operand, /) -> GpuArray: ...
        def __imul__(self, other: _Operand, /) -> GpuArray: ...
        def __truediv__(self, other: _Operand, /) -> GpuArray: ...
        def __rtruediv__(self, other: _Operand, /) -> GpuArray: ...
        def __itruediv__(self, other: _Operand, /) -> GpuArray: ...
        def __floordiv__(self, other: _Operand, /) -> GpuArray: ...
        def __rfloordiv__(self, other: _Operand, /) -> GpuArray: ...
        def __ifloordiv__(self, other: _Operand, /) -> GpuArray: ...
        def __mod__(self, other: _Operand, /) -> GpuArray: ...
        def __rmod__(self, other: _Operand, /) -> GpuArray: ...
        def __imod__(self, other: _Operand, /) -> GpuArray: ...
        def __pow__(self, other: _Operand, /) -> GpuArray: ...
        def __rpow__(self, other: _Operand, /) -> GpuArray: ...
        def __ipow__(self, other: _Operand, /) -> GpuArray: ...
        def __and__(self, other: _Operand, /) -> GpuArray: ...
        def __rand__(self, other: _Operand, /) -> GpuArray: ...
        def __iand__(self, other: _Operand, /) -> GpuArray: ...
        def __or__(self, other: _Operand, /) -> GpuArray: ...
        def __ror__(self, other: _Operand, /) -> GpuArray: ...
        def __ior__(self, other: _Operand, /) -> GpuArray: ...
        def __xor__(self, other: _Operand, /) -> GpuArray: ...
        def __rxor__(self, other: _Operand, /) -> GpuArray: ...
        def __ixor__(self, other: _Operand, /) -> GpuArray: ...
        def __lshift__(self, other: _Operand, /) -> GpuArray: ...
        def __rlshift__(self, other: _Operand, /) -> GpuArray: ...
        def __ilshift__(self, other: _Operand, /) -> GpuArray: ...
        def __rshift__(self, other: _Operand, /) -> GpuArray: ...
        def __rrshift__(self, other: _Operand, /) -> GpuArray: ...
        def __irshift__(self, other: _Operand, /) -> GpuArray: ...
        def __eq__(self, other: _Operand, /) -> GpuArray: ...  # type: ignore[override]
        def __ne__(self, other: _Operand, /) -> GpuArray: ...  # type: ignore[override]
        def __lt__(self, other: _Operand, /) -> GpuArray: ...  # type: ignore[override]
        def __le__(self, other: _Operand, /) -> GpuArray: ...  # type: ignore[override]
        def __gt__(self, other: _Operand, /) -> GpuArray: ...  # type: ignore[override]
        def __ge__(self, other: _Operand, /) -> GpuArray: ...  # type: ignore[override]
        def __neg__(self) -> GpuArray: ...
        def __pos__(self) -> GpuArray: ...
        def __abs__(self) -> GpuArray: ...
        def __invert__(self) -> GpuArray: ...

    __array_priority__ = 100.0

    def __init__(self, node: Node) -> None:
        if not isinstance(node, Node):
            raise TypeError("GpuArray is created with gpuarray.asarray(...), not directly")
        self._node = node
        self._view = None     # an _aliasing.ViewInfo once it shares memory with another array

    # ---- attributes
    @property
    def shape(self) -> tuple[int, ...]:
        return self._node.shape

    @shape.setter
    def shape(self, shape: Any) -> None:
        """``x.shape = s``: an in-place reshape, allowed where NumPy allows it (no copy needed)."""
        items = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        set_shape(self, UP.reshape(self, items))

    @property
    def dtype(self) -> np.dtype:
        return self._node.dtype

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    @property
    def size(self) -> int:
        return math.prod(self._node.shape)

    @property
    def device(self) -> Device:
        return self._node.device

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def T(self) -> GpuArray:
        return derive_permute(self, tuple(range(self.ndim))[::-1])

    @property
    def mT(self) -> GpuArray:
        if self.ndim < 2:
            raise ValueError(f"mT requires an array with at least 2 dimensions; got {self.ndim}")
        return derive_permute(self, (*range(self.ndim - 2), self.ndim - 1, self.ndim - 2))

    # ---- materialization
    def _host(self) -> np.ndarray:
        node = self._node
        if node.data is None:
            if node.op == "view":
                base = node.inputs[0]
                # (not a node without inputs, such as a hash-consed constant that every expression with that
                # value shares: evaluated, it would be read as an array by all of them)
                if base.data is None and base.inputs and \
                        read_ahead_pending(base, node.dtype.itemsize * math.prod(node.shape),
                                           view_part(node.shape, node.attrs)):
                    evaluate_nodes([base])          # its views are read one after another: compute it once
                if base.data is not None:           # a view of evaluated data
                    strides, offset = node.attrs
                    host = host_view(base.data, node.shape, strides, offset)
                    if host is not None:
                        return host
            evaluate_nodes([node], reading=True)
        return node.data.get_host().reshape(node.shape)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy is False:
            raise ValueError("a GpuArray cannot be exposed to NumPy without a copy; use copy=None or True")
        _refuse_output_target(sys._getframe(1))
        node = self._node
        if node.data is None and node.op != "view":     # (views: _host's read-ahead rules)
            evaluate_nodes([node], reading=True)
        data = node.data
        if data is not None and data.host is None and data.handle is not None and data.nbytes >= HANDOVER_BYTES \
                and (dtype is None or np.dtype(dtype) == data.dtype) and data.shape == node.shape:
            return data.take_host()         # downloaded into a new array that is the caller's: no second copy
        return np.array(self._host(), dtype=dtype, copy=True)

    def to_numpy(self) -> np.ndarray:
        """A host copy as a NumPy array."""
        return self.__array__()

    def tolist(self) -> Any:
        return self._host().tolist()

    def _scalar(self, kind: str) -> Any:
        """The one element as a NumPy scalar, for ``float(x)``, ``bool(x)`` ... (attributes and
        operators rather than calls: reading a scalar back is a hot path)."""
        node = self._node
        if kind in ("float", "int") and node.dtype.kind == "c":
            raise TypeError(f"can't convert a complex array to Python {kind}; use real(x) or abs(x) first")
        size = 1
        for s in node.shape:
            size *= s
        if size != 1 or (node.shape and kind == "index"):
            if kind == "bool":
                raise ValueError("The truth value of an array with more than one element is ambiguous. "
                                 "Use a.any() or a.all()")
            raise TypeError(f"only {'integer scalar' if kind == 'index' else 'size-1'} arrays can be "
                            f"converted to Python {kind}s")
        if node.data is None:
            if node.op == "view":
                if node.inputs[0].data is not None:                         # x[i] of evaluated x
                    value = element(node.inputs[0].data, node.attrs[1])     # one small read
                else:
                    value = point_read(node)        # x[i] of x with elements written (indexing.point_write)
                if value is not None:
                    return value
            evaluate_nodes([node], reading=True)
        return node.data.get_host().flat[0]        # its data may have another shape of one element

    def __bool__(self) -> bool:
        node = self._node
        if node.data is None and node.shape == () and _value_unused(sys._getframe(1)):
            return False            # array-api-compat's laziness probe: the value is not used (_VALUE_UNUSED)
        return bool(self._scalar("bool"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer arrays can be used as an index; got {self.dtype}")
        return int(self._scalar("index"))

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Any:
        if self.ndim == 0:       # at the call, as NumPy (np.iterable of a 0-d array is False)
            raise TypeError("iteration over a 0-d array")
        if self.ndim == 1:
            return self._elements()
        return (self[i] for i in range(self.shape[0]))

    def _elements(self) -> Any:
        """The 0-d elements of a 1-D array, read to the host once, not one evaluation each
        (``max(x)`` compares element by element: SciPy's ``minimum_phase`` over 2^19 of them). NumPy
        yields scalars, not views, so nothing writes through them; an array written to during the
        loop is read again, so each element is its value when it is reached, as in NumPy."""
        node: Node | None = None
        host = np.empty(0)
        device = self._node.device
        for i in range(self.shape[0]):
            if self._node is not node:
                node = self._node
                host = self._host()
            value = np.array(host[i])
            yield GpuArray(realized_leaf(Data(value.dtype, (), host=value), value.dtype, (), device))

    def __repr__(self) -> str:
        text = format_array(self, repr)    # NumPy's own formatting, e.g. "array([1, 2], dtype=int32)"
        body = text[len("array("):-1].replace("\n", "\n" + " " * (len("GpuArray(") - len("array(")))
        if self.ndim == 0:      # NumPy would give a scalar here: its full precision (0.30000000000000004)
            value = self._host()[()]
            body = str(value) + body[body.index(", dtype="):] if ", dtype=" in body else str(value)
        return f"GpuArray({body}, device='{self.device.name}')"

    def __str__(self) -> str:
        return format_array(self, str)

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self._host()[()], spec)
        if spec:
            raise TypeError("unsupported format string passed to GpuArray.__format__")
        return str(self)

    def __reduce__(self) -> tuple:
        """Pickle through the host: dtype, shape, values, device (``copy.copy`` / ``deepcopy`` share the value)."""
        return (_rebuild, (self.to_numpy(), self.device.name))

    def __hash__(self) -> None:  # type: ignore[override]
        raise TypeError("unhashable type: 'GpuArray'")

    # ---- indexing and views
    def __getitem__(self, key: Any) -> GpuArray:
        """Basic indices give views that share memory with this array (as in NumPy), integer
        and boolean array indices give copies; an integer for every axis gives a 0-d copy (NumPy
        gives a scalar there)."""
        if is_basic(key):
            if not one_element(key, self.ndim):
                return derive_index(self, key)
            return GpuArray(basic_index(self._node, key))
        return GpuArray(getitem(self._node, key))

    def __setitem__(self, key: Any, value: Any) -> None:
        """Writes ``value`` into this array and every array that shares memory with it (one write
        at a time: ``_aliasing.WRITE_LOCK``, so that threads writing disjoint parts keep every write)."""
        with WRITE_LOCK:
            new = setitem(self._node, key, value)
            if new is not self._node:
                assign(self, new)

    def to_device(self, device: Any, /, *, stream: Any = None) -> GpuArray:
        if stream is not None:
            raise ValueError("stream is not supported; pass stream=None")
        return UP.asarray(self, device=device)

    # ---- NumPy protocols and conversions: set by gpuarray.interop (``interop.install``) on import
    __array_ufunc__: Callable[..., Any]
    __array_function__: Callable[..., Any]
    __dlpack__: Callable[..., Any]
    __dlpack_device__: Callable[..., Any]
    get: Callable[..., Any]

    def __array_namespace__(self, *, api_version: str | None = None) -> Any:
        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"unsupported Array API version {api_version!r}; expected '2024.12'")
        return UP.package

    def __dask_tokenize__(self) -> Any:
        """dask's token, without reading data; registers GpuArray with dask on first use (``_dask``)."""
        return UP.dask_token(self)

    # ---- matrix product (gpuarray.matmul)
    def _matmul_operand(self, other: Any) -> GpuArray | None:
        if isinstance(other, np.ndarray):
            return UP.asarray(other, device=self.device)
        return other if isinstance(other, GpuArray) else None

    def __matmul__(self, other: Any) -> Any:
        o = self._matmul_operand(other)
        return NotImplemented if o is None else UP.matmul(self, o)

    def __rmatmul__(self, other: Any) -> Any:
        o = self._matmul_operand(other)
        return NotImplemented if o is None else UP.matmul(o, self)

    def __imatmul__(self, other: Any) -> Any:
        o = self._matmul_operand(other)
        return NotImplemented if o is None else self._inplace(UP.matmul(self, o), "matmul")

    # ---- in-place helper used by generated __i*__ methods
    def _inplace(self, result: GpuArray, name: str) -> GpuArray:
        if result.shape != self.shape:
            raise ValueError(f"non-broadcastable output operand with shape {self.shape} doesn't match "
                             f"the broadcast shape {result.shape} in {name}")
        if result.dtype != self.dtype:
            if not np.can_cast(result.dtype, self.dtype, casting="same_kind"):
                raise TypeError(f"Cannot cast {name} output from dtype {result.dtype} to {self.dtype} "
                                "with casting rule 'same_kind'")
            result = result.astype(self.dtype)
        assign(self, result._node)
        return self


def expect_array(x: Any, where: str) -> GpuArray:
    """``x`` itself if it is a GpuArray, else a TypeError naming ``where`` (the function).

    >>> expect_array(3, "diff")
    Traceback (most recent call last):
    TypeError: diff: expected a GpuArray; got int
    """
    if not isinstance(x, GpuArray):
        raise TypeError(f"{where + ': ' if where else ''}expected a GpuArray; got {type(x).__name__}")
    return x


def _rebuild(host: np.ndarray, device: str) -> GpuArray:
    return UP.asarray(host, device=device)


def _inplace(name: str) -> Any:
    forward = binary_method(name, False)

    def method(self: GpuArray, other: Any) -> Any:
        r = forward(self, other)
        return r if r is NotImplemented else self._inplace(r, name)
    return method


def _unary(name: str) -> Any:
    opdef = OPS[name]

    def method(self: GpuArray) -> Any:
        return unary(opdef, self)
    return method


def _install() -> None:
    for name, opdef in OPS.items():
        for d in opdef.dunders:
            for attr, fn in ((f"__{d}__", binary_method(name, False)),
                             (f"__r{d}__", binary_method(name, True)),
                             (f"__i{d}__", _inplace(name))):
                if d in ("eq", "ne", "lt", "le", "gt", "ge") and attr != f"__{d}__":
                    continue
                fn.__name__ = attr
                fn.__doc__ = f"``{attr}``: {opdef.name} (elementwise)."
                setattr(GpuArray, attr, fn)
        if opdef.unary_dunder:
            fn = _unary(name)
            fn.__name__ = f"__{opdef.unary_dunder}__"
            setattr(GpuArray, fn.__name__, fn)


_install()
bind_array_type(GpuArray)   # elementwise and eager test types against it on their hot paths
register(array_type=GpuArray)
__all__ = ["GpuArray", "finish"]
