"""Applying an op-table entry to arrays and scalars: checks, promotion, broadcasting."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtypes
from ._devices import Device
from ._ops import OpDef
from .graph.node import MAX_DEPTH, Node, const, make
from .graph.shapes import broadcast_shapes
from .graph.views import strided_view

_cls: Any = None      # GpuArray, bound on first use (``_array`` imports this module)


def _array_cls() -> Any:
    global _cls
    if _cls is None:
        from ._array import GpuArray
        _cls = GpuArray
    return _cls


def finish(node: Node) -> Any:
    """Wrap a node as a GpuArray, evaluating it first when its history grows too long."""
    if node.depth > MAX_DEPTH:
        from .planner import evaluate_nodes
        evaluate_nodes([node])
    return (_cls or _array_cls())(node)


def astype_node(node: Node, dtype: np.dtype) -> Node:
    if node.dtype == dtype:
        return node
    if node.op == "const" and not node.realized:
        v = np.asarray(node.attrs[0])
        if v.dtype.kind == "c" and dtype.kind != "c":     # complex -> real keeps the real part (bool: nonzero)
            v = v != 0 if dtype == _dtypes.bool_ else v.real
        with np.errstate(all="ignore"):
            return const(v.astype(dtype)[()], dtype, node.device)
    return make("astype", (node,), dtype, node.shape)


def _is_array(x: Any) -> bool:
    return isinstance(x, _cls or _array_cls())


def common_device(arrays: list[Any], what: str) -> Device:
    dev = arrays[0].device
    for a in arrays[1:]:
        if a.device != dev:
            raise ValueError(f"{what}: arrays are on different devices, {dev.name} and {a.device.name}; "
                             "move one with to_device() first")
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
        from ._devices import default_device
        dev = next((a.device for a in arrays if a.device != default_device()), arrays[0].device)
    return [a if a.device == dev else _scalar_to(a, dev) for a in arrays]


def _scalar_to(a: Any, dev: Device) -> Any:
    node = a._node
    if node.op == "const" and not node.realized:            # a lazy constant is rebuilt there, no transfer
        return (_cls or _array_cls())(const(node.attrs[0], node.dtype, dev))
    return a.to_device(dev)


def _coerce(x: Any, device: Device) -> Any:
    """NumPy arrays and NumPy scalars become arrays on ``device``; Python scalars stay weak."""
    if type(x) in _PY_SCALARS or isinstance(x, _cls or _array_cls()) or (
            _dtypes.scalar_kind(x) is not None and not isinstance(x, np.generic)):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        from .namespace.creation import asarray
        return asarray(x, device=device)
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
    """Record ``opdef`` on ``args`` (GpuArrays, NumPy arrays, Python scalars)."""
    if len(args) != opdef.nargs:
        raise TypeError(f"{opdef.name}() takes {opdef.nargs} array argument(s); got {len(args)}")
    cls = _cls or _array_cls()
    arrays = [a for a in args if isinstance(a, cls)]
    if not arrays:
        npa = [a for a in args if isinstance(a, (np.ndarray, np.generic))]
        if not npa:
            raise TypeError(f"{opdef.name}() needs at least one array argument")
        from .namespace.creation import asarray
        args = tuple(asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in args)
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
    for a in arrays:
        if a._node.dtype not in members:
            _check(opdef, a._node.dtype)
    if len(arrays) != len(args):
        for a in args:
            if not isinstance(a, cls):
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
            if opdef.result == "float":
                dt = device.default_float
            elif opdef.result == "bool" and opdef.nargs == 2:
                return _compare_out_of_range(opdef, args, device)
            else:
                raise
    if dt not in members and len(arrays) > 1:
        # e.g. int64 & uint64: NumPy promotes to float64, which bitwise ops do not take
        raise TypeError(f"{opdef.name} is not supported for the input types: "
                        f"{', '.join(str(a.dtype) for a in arrays)} promote to {dt}")
    if opdef.result == "float" and dt.kind not in "fc":
        dt = device.default_float
    if dt.kind == "c" and dt != first:
        device.check_dtype(dt)        # a complex scalar made the operation complex
    out_dtype = (_dtypes.bool_ if opdef.result == "bool" else
                 _dtypes.real_dtype(dt) if opdef.result == "real" else dt)
    shape = arrays[0]._node.shape
    if any(a._node.shape != shape for a in arrays):
        shape = broadcast_shapes(*(a._node.shape for a in arrays))
    nodes = tuple(astype_node(a._node, dt) if isinstance(a, cls) else const(a, dt, device) for a in args)
    return finish(make(opdef.name, nodes, out_dtype, shape, device=device))


_SWAP = {"less": "greater", "less_equal": "greater_equal", "greater": "less", "greater_equal": "less_equal",
         "equal": "equal", "not_equal": "not_equal"}


def _compare_out_of_range(opdef: OpDef, args: tuple, device: Device) -> Any:
    """``array <cmp> int`` with the int outside the array dtype's range: a constant result."""
    arr, s, name = (args[0], args[1], opdef.name) if _is_array(args[0]) else (args[1], args[0], _SWAP[opdef.name])
    above = s > 0          # the scalar lies above every value of the dtype (else below)
    value = {"equal": False, "not_equal": True, "less": above, "less_equal": above,
             "greater": not above, "greater_equal": not above}[name]
    c = const(value, _dtypes.bool_, device)
    shape = arr.shape
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
    nodes = tuple(astype_node(v._node, dt) if _is_array(v) else const(v, dt, device) for v in (x1, x2))
    return finish(make("where", (cond._node,) + nodes, dt, shape, device=device))
