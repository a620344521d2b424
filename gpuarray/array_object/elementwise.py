"""Applying an op-table entry to arrays and scalars: checks, promotion, broadcasting.

``apply`` records one graph node, or, for small work that the planner would run on
the host anyway, computes it at once (``_eager.py``: under ``offload="auto"``, with
every array operand evaluated and only on the host and a result below the
elementwise threshold).

The common signatures (array with array of the same device, array with a Python
scalar, one array) take a short path (``binary``, ``unary``; the operators call
them directly) whose dtype resolution is cached per (op, dtypes or scalar type,
device); a miss runs the full checks of ``_apply`` once and fills the cache.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import config as _config
from ..core import dtypes as _dtypes
from ..core.ops import OPS, OpDef
from ..graph.node import MAX_DEPTH, Node, const, make, redepth
from ..graph.shapes import broadcast_pair, broadcast_shapes
from ..graph.views import strided_view
from ..runtime import eager as _eager
from ..runtime.devices import Device, default_device
from ..runtime.planner import evaluate_nodes
from .hooks import UP
from .operands import astype_node, operand

_cls: Any = None      # GpuArray, bound by ``array`` when it is imported (it imports this module)


def bind_array_type(cls: type) -> None:
    """Bind the array type that results are wrapped in (called once by ``array_object.array``)."""
    global _cls
    _cls = _eager._cls = cls


def finish(node: Node) -> Any:
    """Wrap a node as a GpuArray, evaluating it first when its history grows too long."""
    if node.depth > MAX_DEPTH and redepth(node) > MAX_DEPTH:
        evaluate_nodes([node])
    out = _new(_cls)      # GpuArray(node) without its argument check
    out._node = node
    out._view = None
    return out


_new = object.__new__


def _is_array(x: Any) -> bool:
    return isinstance(x, _cls)


def common_device(arrays: list[Any], what: str = "") -> Device:
    """The device of ``arrays``; ValueError naming both devices (and ``what``) if they differ."""
    dev = arrays[0].device
    for a in arrays[1:]:
        if a.device != dev:
            raise ValueError(f"{what + ': ' if what else ''}arrays are on different devices, {dev.name} and "
                             f"{a.device.name}; move one with to_device() first")
    return dev


def scalars_to_device(arrays: list[Any], what: str) -> list[Any]:
    """``arrays`` with their 0-d members moved to the device of the others (0-d arrays act as scalars).

    Libraries write ``xp.where(x > 0, x, xp.asarray(0.0))``: the 0-d array lands on the default
    device wherever ``x`` lives. As PyTorch lets 0-d CPU tensors meet CUDA tensors, a 0-d array
    follows the device of the arrays with dimensions; among 0-d arrays only, one on a
    non-default device wins. Arrays with dimensions on two devices still raise ``ValueError``."""
    devs = {a.device for a in arrays}
    if len(devs) == 1:
        return arrays
    shaped = [a for a in arrays if a.ndim]
    if shaped:
        dev = common_device(shaped, what)
    else:
        dev = next((a.device for a in arrays if a.device != default_device()), arrays[0].device)
    return [a if a.device == dev else _scalar_to(a, dev) for a in arrays]


def _scalar_to(a: Any, dev: Device) -> Any:
    node = a._node
    if node.op == "const" and not node.realized:            # a lazy constant is rebuilt there, no transfer
        return (_cls)(const(node.attrs[0], node.dtype, dev))
    return a.to_device(dev)


def _coerce(x: Any, device: Device) -> Any:
    """NumPy arrays and NumPy scalars become arrays on ``device``; Python scalars stay weak."""
    if type(x) in _PY_SCALARS or isinstance(x, _cls) or (
            _dtypes.scalar_kind(x) is not None and not isinstance(x, np.generic)):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return UP.asarray(x, device=device)
    raise TypeError(f"unsupported operand type {type(x).__name__}; expected a GpuArray, "
                    "a NumPy array or a Python scalar")


_PY_SCALARS = (float, int, bool, complex)


def _check(opdef: OpDef, dtype: np.dtype, position: str = "") -> None:
    if not _dtypes.in_category(dtype, opdef.category):
        words = _dtypes.CATEGORY_WORDS[opdef.category]
        raise TypeError(f"Only {words} dtypes are allowed in {opdef.name}{position}; got {dtype}.")


_SCALAR_OK: set[tuple[str, type]] = set()


def _check_scalar(opdef: OpDef, value: Any) -> None:
    if (opdef.name, type(value)) in _SCALAR_OK:
        return
    kind = _dtypes.scalar_kind(value)
    allowed = {_d.kind for _d in _dtypes.CATEGORIES[opdef.category]}
    # Python ints are allowed with floating-point arrays too (they convert exactly enough)
    ok = {"b": "b" in allowed, "i": bool(allowed & {"i", "u", "f", "c"}), "f": bool(allowed & {"f", "c"}),
          "c": "c" in allowed}[kind or "f"]
    if not ok:
        words = _dtypes.CATEGORY_WORDS[opdef.category]
        raise TypeError(f"Only {words} dtypes are allowed in {opdef.name}; got Python {type(value).__name__}.")
    if type(value) in _PY_SCALARS:
        _SCALAR_OK.add((opdef.name, type(value)))


def apply(opdef: OpDef, *args: Any) -> Any:
    """Record ``opdef`` on ``args`` (GpuArrays, NumPy arrays, Python scalars), or compute it at once
    when it is small work on the host (see the module docstring)."""
    cls = _cls
    n = len(args)
    if n == 2:
        a, b = args
        if type(a) is cls:
            r = _binary(opdef, False)(a, b)
            return r if r is not NotImplemented else _apply(opdef, args, None)
        if type(b) is cls:
            r = _binary(opdef, True)(b, a)
            return r if r is not NotImplemented else _apply(opdef, args, None)
    elif n == 1 and type(args[0]) is cls:
        return unary(opdef, args[0])
    return _apply(opdef, args, None)


_PY_SCALAR_TYPES = frozenset((float, int, bool, complex))
_OPERAND_TYPES = (bool, int, float, complex, np.ndarray, np.generic)     # and GpuArray
# (op name, operand dtypes or Python scalar type, device name) -> (compute dtype, result dtype);
# filled by _apply once every check passed for that signature.
_SIG: dict[tuple, tuple[np.dtype, np.dtype]] = {}
_INT_BOUNDS: dict[np.dtype, tuple[int, int]] = {d: (int(np.iinfo(d).min), int(np.iinfo(d).max))
                                               for d in _dtypes.INTEGER}
_limit_now = _eager.limit_now
_config_local = _eager._config_local
_env_get, _env_key = _eager._env_get, _eager._env_key
_set_errors = _eager.set_errors
_reset_errors: Any = getattr(_eager, "reset_errors", None)
_ignore_errors: Any = getattr(_eager, "ignore_errors", None)
_wrap = _eager.wrap
_leaf_array = _eager.leaf_array
_ndarray = np.ndarray
_VALUES = _eager.VALUES
_BINARY: dict[tuple[str, bool], Callable[[Any, Any], Any]] = {}


def unary(opdef: OpDef, x: Any) -> Any:
    """``opdef(x)`` for a GpuArray ``x``."""
    na = x._node
    device = na.device
    key = (opdef.name, na.dtype, device.name)
    hit = _SIG.get(key)
    if hit is None:
        return _apply(opdef, (x,), key)
    dt, out_dtype = hit
    d = na.data
    if d is not None and d.handle is None:
        if d.host is not None and d.host.size < _limit_now(device):
            h = d.host
            if h.shape != na.shape:          # a reshape shares its Data (of another shape)
                h = h.reshape(na.shape)
            return _eager.run(opdef.name, out_dtype, na.shape, device, h if na.dtype is dt else h.astype(dt))
    y = na if na.dtype is dt else astype_node(na, dt)
    return finish(make(opdef.name, (y,), out_dtype, na.shape, device=device))


def _binary(opdef: OpDef, reflected: bool) -> Callable[[Any, Any], Any]:
    """``f(x, other)`` computing ``opdef(x, other)`` for a GpuArray ``x`` (``reflected``:
    ``opdef(other, x)``), or NotImplemented for an operand type it does not take.

    The hot path of every operator (``_array`` installs these as the dunder methods): an array
    with a Python scalar or with an array on the same device, of a signature seen before.
    Anything else goes through ``_apply``."""
    f = _BINARY.get((opdef.name, reflected))
    if f is not None:
        return f
    name = opdef.name
    fn, trusted = _eager.HOST_FNS[name]
    # The signature of the last eager call that handed a Python scalar to the ufunc as it is:
    # (scalar type, array dtype, device, result dtype, int range (None for floats),
    # _eager.state). NumPy converts a Python scalar weakly, to the array's dtype, as ``const``
    # does, and converts it faster than it takes a NumPy scalar; a repeat of that call needs no
    # signature lookup.
    fast: tuple = (None, None, None, None, None, None, None)

    def binary(x: Any, other: Any) -> Any:
        # the repeat of the last eager call with a Python scalar, in a frame of few locals
        na = x._node
        f = fast
        if f[0] is type(other) and f[1] is na.dtype and f[2] is na.device:
            s = f[6]        # _eager.limit_now's answer, valid while its inputs are the same
            if s[1] is _config_local() and s[2] == _config._generation and s[3] is _env_get(_env_key):
                d = na.data
                if d is not None and d.handle is None and (f[4] is None or f[4] <= other <= f[5]):
                    ha = d.host
                    if ha is not None and ha.size < s[4]:
                        if d.shape is not na.shape and ha.shape != na.shape:    # a reshape shares its Data
                            ha = ha.reshape(na.shape)
                        token = _set_errors(_ignore_errors)
                        try:
                            r = fn(other, ha) if reflected else fn(ha, other)
                        finally:
                            _reset_errors(token)
                        if type(r) is not _ndarray or r.dtype is not f[3]:    # a 0-d result is a NumPy scalar
                            return _wrap(name, r, f[3], na.shape, f[2], False, (ha,))
                        return _leaf_array(name, r, na.shape, f[2])
        return general(x, other)

    def _host_operand(x: Any, other: np.ndarray, key: tuple) -> Any:
        """``x`` op ``other`` (a NumPy array) computed at once where the signature ``key`` is known, ``x`` is
        evaluated on the host only and the result is below the eager threshold (``_eager.allowed``), else
        None."""
        na = x._node
        hit = _SIG.get(key)
        if hit is None:
            return None
        try:
            shape = broadcast_pair(na.shape, other.shape)
        except ValueError:
            return None             # _apply raises NumPy's error
        if not _eager.allowed((na,), na.device, shape):
            return None
        dt = hit[0]
        ha = _host_of(na, dt)
        hb = other if other.dtype == dt else other.astype(dt)
        return _eager.run(name, hit[1], shape, na.device, *((hb, ha) if reflected else (ha, hb)))

    def general(x: Any, other: Any) -> Any:
        nonlocal fast
        na = x._node
        t = type(other)
        device = na.device
        if t is _cls:
            nb = other._node
            if nb.device is not device:
                return _apply(opdef, (other, x) if reflected else (x, other), None)
            key: tuple = (name, na.dtype, nb.dtype, device.name)
        elif t in _PY_SCALAR_TYPES:
            nb = None
            key = (name, na.dtype, t, device.name)
            if t is int and na.dtype.kind in "iu":
                lo, hi = _INT_BOUNDS[na.dtype]
                if not lo <= other <= hi:           # out of the dtype's range: NumPy's rules (_apply)
                    return _apply(opdef, (other, x) if reflected else (x, other), None)
        elif t is _ndarray and other.ndim and other.dtype.kind in "biufc":
            # a NumPy array (a window, weights) with small host-only x: at once, no upload; its signature
            # is that of two arrays of these dtypes (cached by _apply under that key)
            key = (name, na.dtype, other.dtype, device.name)
            now = _host_operand(x, other, key)
            return now if now is not None else _apply(opdef, (other, x) if reflected else (x, other), key)
        elif isinstance(other, _OPERAND_TYPES) or isinstance(other, _cls):
            return _apply(opdef, (other, x) if reflected else (x, other), None)
        elif isinstance(other, (list, tuple)) and (seq := _numeric_array(other)) is not None:
            # a nested sequence of numbers is an array, as NumPy takes it (g == [1, 3], g + [1, 2],
            # a[idx] += [10, 20]; the Array API leaves operands other than arrays and scalars open)
            return _apply(opdef, (seq, x) if reflected else (x, seq), None)
        elif name in ("equal", "not_equal") and _incomparable(other):
            # NumPy compares with None, strings and plain objects elementwise: no element is equal
            return finish(strided_view(const(name == "not_equal", _dtypes.bool_, device), na.shape,
                                       (0,) * len(na.shape), 0))
        else:
            return NotImplemented
        hit = _SIG.get(key)
        if hit is None:
            return _apply(opdef, (other, x) if reflected else (x, other), key)
        dt, out_dtype = hit
        shape = na.shape
        if nb is not None and nb.shape != shape:
            shape = broadcast_pair(shape, nb.shape)
        lim = _limit_now(device)
        if lim:
            d = na.data
            if d is not None and d.handle is None and d.host is not None:
                ha = d.host
                size = ha.size
                if ha.shape != na.shape:          # a reshape shares its Data (of another shape)
                    ha = ha.reshape(na.shape)
                if nb is None:
                    hb: Any = _VALUES.get((t, other, dt)) if t is int or t is bool or (
                        t is float and other and other == other) else None
                    if hb is None:
                        hb = _eager.scalar_value(other, dt, device)
                else:
                    d = nb.data
                    if d is None or d.handle is not None or d.host is None:
                        size = -1
                    else:
                        hb = d.host
                        if hb.shape != nb.shape:
                            hb = hb.reshape(nb.shape)
                        if nb.dtype is not dt:
                            hb = hb.astype(dt)
                        if shape is not na.shape:
                            size = _size(shape)
                if 0 <= size < lim:
                    if na.dtype is not dt:
                        ha = ha.astype(dt)
                    elif nb is None and trusted and _set_errors is not None and (
                            t is float and dt.kind in "fc" or t is int and dt.kind in "iu"):
                        st = _eager.state(device)
                        if st is not None:
                            fast = (t, dt, device, out_dtype, *(_INT_BOUNDS[dt] if t is int else (None, None)), st)
                    if reflected:
                        ha, hb = hb, ha
                    if _set_errors is None or nb is not None and shape is not na.shape:
                        return _eager.run(name, out_dtype, shape, device, ha, hb)
                    token = _set_errors(_ignore_errors)
                    try:
                        r = fn(ha, hb)
                    finally:
                        _reset_errors(token)
                    return _wrap(name, r, out_dtype, shape, device, trusted, (ha, hb))
        # (operand's test written out for the common case: an array operand, or a 0-d one that is not host data)
        y = na if na.dtype is dt and (na.shape or na.op != "leaf") else operand(na, dt)
        if nb is not None:
            z = nb if nb.dtype is dt and (nb.shape or nb.op != "leaf") else operand(nb, dt)
        else:
            z = const(other, dt, device)
        return finish(make(name, (z, y) if reflected else (y, z), out_dtype, shape, device=device))

    _BINARY[(name, reflected)] = binary
    return binary


def _numeric_array(other: Any) -> np.ndarray | None:
    """``other`` (a list or tuple) as a NumPy array when it holds numbers only, else None."""
    try:
        a = np.asarray(other)
    except (ValueError, TypeError):
        return None
    return a if a.dtype.kind in "biufc" else None


def _incomparable(other: Any) -> bool:
    """Whether ``x == other`` is elementwise False in NumPy because ``other`` is no array or number:
    None, a string, an object without its own comparison that no array protocol claims."""
    if other is None or isinstance(other, (str, bytes)):
        return True
    t = type(other)
    return t.__eq__ is object.__eq__ and not any(
        hasattr(other, a) for a in ("__array_ufunc__", "__array_function__", "__array__", "__array_priority__"))


def binary_method(name: str, reflected: bool) -> Callable[[Any, Any], Any]:
    """The ``__<op>__`` (or reflected ``__r<op>__``) method of op-table entry ``name``."""
    opdef = OPS[name]
    f = _binary(opdef, reflected)
    forms = opdef.operator_forms
    if not forms or reflected:
        return f

    def operator(x: Any, other: Any) -> Any:
        # a complex array with one of the Python scalars of OpDef.operator_forms: NumPy's fast path
        t = type(other)
        if (t is int or t is float) and x._node.dtype.kind == "c":
            u = forms.get((t, other))
            if u is not None:
                return unary(OPS[u], x)
        return f(x, other)
    return operator


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _apply(opdef: OpDef, args: tuple, key: tuple | None) -> Any:
    """The full path: any operands; checks, promotion, broadcasting (``key``: the signature to cache)."""
    if len(args) != opdef.nargs:
        raise TypeError(f"{opdef.name}() takes {opdef.nargs} array argument(s); got {len(args)}")
    cls = _cls
    arrays = [a for a in args if isinstance(a, cls)]
    if not arrays:
        npa = [a for a in args if isinstance(a, (np.ndarray, np.generic))]
        if not npa:
            raise TypeError(f"{opdef.name}() needs at least one array argument")
        args = tuple(UP.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in args)
        arrays = [a for a in args if isinstance(a, cls)]
    if len(arrays) > 1 and any(a._node.device != arrays[0]._node.device for a in arrays):
        moved = dict(zip(map(id, arrays), scalars_to_device(arrays, opdef.name)))
        args = tuple(moved.get(id(a), a) for a in args)
        arrays = [a for a in args if isinstance(a, cls)]
    device = arrays[0]._node.device
    if len(arrays) != len(args) and any(type(a) not in _PY_SCALARS and not isinstance(a, cls) for a in args):
        args = tuple(_coerce(a, device) for a in args)
        arrays = [a for a in args if isinstance(a, cls)]
    if opdef.name == "where":
        return _where(args[0], args[1], args[2], device=device)
    members = _dtypes.CATEGORIES[opdef.category]
    if opdef.name in _BOOL_ARITHMETIC and any(a._node.dtype == _dtypes.bool_ for a in arrays):
        args, members = _numpy_bool_operands(opdef, args, members, device)
        arrays = [a for a in args if isinstance(a, cls)]
    for a in arrays:
        if a._node.dtype not in members:
            _check(opdef, a._node.dtype)
    if len(arrays) != len(args):
        for a in args:
            if not isinstance(a, cls) and not (type(a) is bool and _dtypes.bool_ in members):
                _check_scalar(opdef, a)
    first = arrays[0]._node.dtype
    if len(arrays) == len(args) and all(a._node.dtype == first for a in arrays):
        dt = first
    elif len(args) == 2 and len(arrays) == 1 and type(args[0] if arrays[0] is args[1] else args[1]) is float:
        dt = first if first.kind in "fc" else device.default_float     # array with a weak Python float
    else:
        try:
            dt = _dtypes.result_type(*args, default_float=device.default_float)
        except OverflowError:
            # NumPy 2 defines these for an int scalar outside the array's range: true division
            # converts to float, and comparisons compare mathematically
            if opdef.result in ("float", "double"):
                dt = device.default_float
            elif opdef.result == "bool" and opdef.nargs == 2:
                return _compare_out_of_range(opdef, args, device)
            else:
                raise
    if opdef.result == "first":
        dt = _first_float(opdef, args, device)
    if dt not in members and len(arrays) > 1:
        # e.g. int64 & uint64: NumPy promotes to float64, which bitwise ops do not take
        raise TypeError(f"{opdef.name} is not supported for the input types: "
                        f"{', '.join(str(a.dtype) for a in arrays)} promote to {dt}")
    if opdef.result == "float" and dt.kind not in "fc":
        dt = device.default_float
    elif opdef.result == "double":
        dt = _widest(dt, device)
    if dt.kind == "c" and dt != first:
        device.check_dtype(dt)        # a complex scalar made the operation complex
    out_dtype = (_dtypes.bool_ if opdef.result == "bool" else
                 _dtypes.real_dtype(dt) if opdef.result == "real" else
                 _FIXED_RESULT.get(opdef.result, dt))
    shape = arrays[0]._node.shape
    if any(a._node.shape != shape for a in arrays):
        shape = broadcast_shapes(*(a._node.shape for a in arrays))
    if key is not None:
        if len(_SIG) >= 4096:
            _SIG.clear()
        _SIG[key] = (dt, out_dtype)
    if len(args) <= 2 and all(a._node.device is device for a in arrays) and \
            _eager.allowed(tuple(a._node for a in arrays), device, shape):
        xs = tuple(_host_of(a._node, dt) if isinstance(a, cls) else _eager.scalar_value(a, dt, device) for a in args)
        return _eager.run(opdef.name, out_dtype, shape, device, *xs)
    nodes = tuple(operand(a._node, dt) if isinstance(a, cls) else const(a, dt, device) for a in args)
    return finish(make(opdef.name, nodes, out_dtype, shape, device=device))


# NumPy's arithmetic on bool arrays, which the Array API leaves out: bool + bool is logical or and
# bool * bool logical and (the op table's "b" kernels: || and &&); bool - bool raises as in NumPy; a bool
# array with a number converts to that number's type (the other array's dtype; a Python int, float or
# complex: the device's default int, float or complex, as NumPy's int64, float64, complex128).
# (not ``**``: NumPy's operator squares a bool array into int8 for ``b ** 2``, where ``np.power`` gives int64)
_BOOL_ARITHMETIC = frozenset(("add", "subtract", "multiply", "divide", "floor_divide", "remainder",
                              "maximum", "minimum", "less", "less_equal", "greater", "greater_equal"))
_BOOL_ORDER = frozenset(("less", "less_equal", "greater", "greater_equal"))     # bool with bool: False < True
_BOOL_CLOSED = frozenset(("add", "multiply"))


def _numpy_bool_operands(opdef: OpDef, args: tuple, members: Any, device: Device) -> tuple[tuple, Any]:
    """``args`` with bool arrays converted as NumPy converts them for ``opdef`` (see above), and the
    dtypes ``opdef`` then accepts."""
    cls = _cls
    others = [a for a in args if not (type(a) is bool or isinstance(a, cls) and a._node.dtype == _dtypes.bool_)]
    if not others:
        if opdef.name in _BOOL_CLOSED:
            return args, (*members, _dtypes.bool_)
        if opdef.name == "subtract":
            raise TypeError("numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, "
                            "the `^` operator, or the logical_xor function instead.")
        if opdef.name in _BOOL_ORDER:       # compared as 0 and 1
            return tuple(_bool_as(a, _dtypes.uint8, device) if isinstance(a, cls) else int(a) for a in args), \
                members
        return args, members
    arrays = [a for a in others if isinstance(a, cls)]
    if arrays:
        target = arrays[0]._node.dtype
    else:
        kind = _dtypes.scalar_kind(others[0])
        target = {"i": device.default_int, "f": device.default_float, "c": device.default_complex}.get(
            kind or "", device.default_float)
    if target not in members:
        return args, members
    return tuple(_bool_as(a, target, device) if isinstance(a, cls) and a._node.dtype == _dtypes.bool_ else
                 a for a in args), members


def _bool_as(a: Any, target: np.dtype, device: Device) -> Any:
    """The bool array ``a`` as ``target``: converted on the host at once where ``a`` is small host
    data (so that the operation after it stays on the eager path, ``_eager.py``), else a cast node."""
    na = a._node
    d = na.data
    if d is not None and d.handle is None and d.host is not None and d.host.size < _limit_now(device):
        h = d.host if d.host.shape == na.shape else d.host.reshape(na.shape)
        return _leaf_array("astype", np.ascontiguousarray(h, dtype=target), na.shape, device)
    return (_cls)(astype_node(na, target))


# OpDef.result values that name the result dtype (bitwise_count's uint8, frexp_exponent's int32)
_FIXED_RESULT: dict[str, np.dtype] = {"uint8": _dtypes.uint8, "int32": _dtypes.int32}


def _first_float(opdef: OpDef, args: tuple, device: Device) -> np.dtype:
    """The compute dtype of an op with ``result="first"`` (ldexp): the first operand's float dtype (the
    default float for an integer one); the other operands must be integers (bool included) other than
    uint64, as NumPy's loops (``fi->f``, ``fl->f``, ...) take; TypeError as NumPy's otherwise."""
    for a in args[1:]:
        dt = a._node.dtype if isinstance(a, _cls) else None
        kind = dt.kind if dt is not None else _dtypes.scalar_kind(a)
        if kind not in ("b", "i", "u") or dt == _dtypes.uint64:
            got = dt if dt is not None else f"Python {type(a).__name__}"
            raise TypeError(f"ufunc '{opdef.name}' not supported for the input types: its exponent must be an "
                            f"integer (not uint64); got {got}")
    first = args[0]._node.dtype if isinstance(args[0], _cls) else None
    return first if first is not None and first.kind == "f" else device.default_float


def _widest(dt: np.dtype, device: Device) -> np.dtype:
    """The widest float (complex for complex ``dt``) that ``device`` has: float64 / complex128, else the 32-bit one."""
    if dt.kind == "c":
        return _dtypes.complex128 if device.supports(_dtypes.complex128) else _dtypes.complex64
    return _dtypes.float64 if device.supports(_dtypes.float64) else _dtypes.float32


def _host_of(node: Node, dt: np.dtype) -> np.ndarray:
    """An evaluated node's host copy, converted to the compute dtype as an ``astype`` node would be."""
    h = node.data.host.reshape(node.shape)
    return h if node.dtype == dt else h.astype(dt)


_SWAP = {"less": "greater", "less_equal": "greater_equal", "greater": "less", "greater_equal": "less_equal",
         "equal": "equal", "not_equal": "not_equal"}


def _compare_out_of_range(opdef: OpDef, args: tuple, device: Device) -> Any:
    """``array <cmp> int`` with the int outside the array dtype's range: a constant result."""
    arr, s, name = (args[0], args[1], opdef.name) if _is_array(args[0]) else (args[1], args[0], _SWAP[opdef.name])
    above = s > 0          # the scalar lies above every value of the dtype (else below)
    value = {"equal": False, "not_equal": True, "less": above, "less_equal": above,
             "greater": not above, "greater_equal": not above}[name]
    shape = arr.shape
    if _eager.allowed((arr._node,), device, shape):
        return _eager.wrap(opdef.name, np.full(shape, value), _dtypes.bool_, shape, device, True, ())
    c = const(value, _dtypes.bool_, device)
    return finish(strided_view(c, shape, (0,) * len(shape), 0) if shape else c)


def _where(cond: Any, x1: Any, x2: Any, device: Device) -> Any:
    if not _is_array(cond):
        raise TypeError("where: condition must be an array")
    if cond.dtype != _dtypes.bool_:
        raise TypeError(f"where: condition must have a boolean dtype; got {cond.dtype}")
    vals = [v for v in (x1, x2) if _is_array(v)]
    if vals:
        dt = _dtypes.result_type(*(x1, x2), default_float=device.default_float)
    else:
        kinds = {_dtypes.scalar_kind(x1), _dtypes.scalar_kind(x2)}
        dt = (device.default_complex if "c" in kinds else device.default_float if "f" in kinds
              else device.default_int if "i" in kinds else _dtypes.bool_)
    shape = broadcast_shapes(cond.shape, *(v.shape for v in vals))
    nodes = tuple(operand(v._node, dt) if _is_array(v) else const(v, dt, device) for v in (x1, x2))
    return finish(make("where", (operand(cond._node, cond.dtype),) + nodes, dt, shape, device=device))
