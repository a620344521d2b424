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


def finish(node: Node) -> Any:
    """Wrap a node as a GpuArray, evaluating it first when its history grows too long."""
    from ._array import GpuArray
    from .planner import evaluate_nodes

    if node.depth > MAX_DEPTH:
        evaluate_nodes([node])
    return GpuArray(node)


def astype_node(node: Node, dtype: np.dtype) -> Node:
    if node.dtype == dtype:
        return node
    if node.op == "const" and not node.realized:
        with np.errstate(all="ignore"):
            return const(np.asarray(node.attrs[0]).astype(dtype)[()], dtype, node.device)
    return make("astype", (node,), dtype, node.shape)


def _is_array(x: Any) -> bool:
    from ._array import GpuArray
    return isinstance(x, GpuArray)


def common_device(arrays: list[Any], what: str) -> Device:
    dev = arrays[0].device
    for a in arrays[1:]:
        if a.device != dev:
            raise ValueError(f"{what}: arrays are on different devices, {dev.name} and {a.device.name}; "
                             "move one with to_device() first")
    return dev


def _coerce(x: Any, device: Device) -> Any:
    """NumPy arrays and NumPy scalars become arrays on ``device``; Python scalars stay weak."""
    from ._array import GpuArray
    if isinstance(x, GpuArray) or _dtypes.scalar_kind(x) is not None and not isinstance(x, np.generic):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        from .namespace.creation import asarray
        return asarray(x, device=device)
    if isinstance(x, complex):
        raise TypeError("complex scalars are not supported yet; expected bool, int or float")
    raise TypeError(f"unsupported operand type {type(x).__name__}; expected a GpuArray, "
                    "a NumPy array or a Python scalar")


def _check(opdef: OpDef, dtype: np.dtype, position: str = "") -> None:
    if not _dtypes.in_category(dtype, opdef.category):
        words = _dtypes.CATEGORY_WORDS[opdef.category]
        raise TypeError(f"Only {words} dtypes are allowed in {opdef.name}{position}; got {dtype}.")


def _check_scalar(opdef: OpDef, value: Any) -> None:
    kind = _dtypes.scalar_kind(value)
    allowed = {_d.kind for _d in _dtypes.CATEGORIES[opdef.category]}
    # Python ints are allowed with floating-point arrays too (they convert exactly enough)
    ok = {"b": "b" in allowed, "i": bool(allowed & {"i", "u", "f"}), "f": "f" in allowed}[kind or "f"]
    if not ok:
        words = _dtypes.CATEGORY_WORDS[opdef.category]
        raise TypeError(f"Only {words} dtypes are allowed in {opdef.name}; got Python {type(value).__name__}.")


def apply(opdef: OpDef, *args: Any) -> Any:
    """Record ``opdef`` on ``args`` (GpuArrays, NumPy arrays, Python scalars)."""
    if len(args) != opdef.nargs:
        raise TypeError(f"{opdef.name}() takes {opdef.nargs} array argument(s); got {len(args)}")
    arrays = [a for a in args if _is_array(a)]
    if not arrays:
        from ._array import GpuArray
        npa = [a for a in args if isinstance(a, (np.ndarray, np.generic))]
        if not npa:
            raise TypeError(f"{opdef.name}() needs at least one array argument")
        from .namespace.creation import asarray
        args = tuple(asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in args)
        arrays = [a for a in args if isinstance(a, GpuArray)]
    device = common_device(arrays, opdef.name)
    args = tuple(_coerce(a, device) for a in args)
    if opdef.name == "where":
        return _where(args[0], args[1], args[2], device=device)
    arrays = [a for a in args if _is_array(a)]
    for a in arrays:
        _check(opdef, a.dtype)
    for a in args:
        if not _is_array(a):
            _check_scalar(opdef, a)
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
    if opdef.result == "float" and dt.kind != "f":
        dt = device.default_float
    out_dtype = _dtypes.bool_ if opdef.result == "bool" else dt
    shape = broadcast_shapes(*(a.shape for a in arrays))
    nodes = tuple(astype_node(a._node, dt) if _is_array(a) else const(a, dt, device) for a in args)
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
        dt = (device.default_float if "f" in kinds else device.default_int if "i" in kinds else _dtypes.bool_)
    shape = broadcast_shapes(cond.shape, *(v.shape for v in vals))
    nodes = tuple(astype_node(v._node, dt) if _is_array(v) else const(v, dt, device) for v in (x1, x2))
    return finish(make("where", (cond._node,) + nodes, dt, shape, device=device))
