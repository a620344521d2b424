"""Statistical and utility reductions: sum, prod, max, min, mean, var, std, all, any;
and the cumulative sum and product.

Each reduction is one ``reduce`` node, each cumulative function one ``scan``
node; the elementwise work feeding it (casts, the ``x - mean`` of ``var``)
runs inside that kernel as its prologue, and the elementwise work consuming a
reduction's result (the division of ``mean`` and ``var``, the ``sqrt`` of
``std``, a ``keepdims`` reshape) as its epilogue (``compiler/schedule.py``):
``mean`` along an axis costs the sum's passes only, ``var`` and ``std`` two
reductions. ``extremes_array`` (not in the Array API) is the minimum and maximum
of a whole array together, one ``extremes`` node: what ``bincount``,
``histogram`` and the bounds checks of device indices read back.

>>> import gpuarray as xp
>>> float(xp.sum(xp.arange(5, dtype=xp.float32, device="cpu") ** 2))
30.0
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np
from numpy.exceptions import AxisError

from ..array_object.array import GpuArray, expect_array
from ..array_object.bounds import concat_nodes
from ..array_object.elementwise import apply, astype_node, finish
from ..array_object.hooks import register
from ..core import dtypes as _dtypes
from ..core.dtypes import STORAGE_NP
from ..core.ops import OPS
from ..graph import views
from ..graph.node import Node, const, make
from ..graph.shapes import view_strides
from ..runtime import eager as _eager
from ..runtime.residency import element, element_known
from .reduce_blocks import alone, blocks_of, combine, past_binding

Axis = int | tuple[int, ...] | None


def _axes(x: GpuArray, axis: Axis, name: str) -> tuple[int, ...]:
    if axis.__class__ is int:           # the common case, without the calls of the general one
        nd = len(x._node.shape)
        m = nd or 1                     # a 0-d array takes 0 and -1
        if -m <= axis < m:              # type: ignore[operator]
            a = axis % m                # type: ignore[operator]
            return (a,) if a < nd else ()
    if axis is None:
        return tuple(range(len(x._node.shape)))
    if not isinstance(axis, (int, np.integer, tuple, list)):
        raise TypeError(f"{name}: axis must be an int or a tuple of ints; got {type(axis).__name__}")
    items = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in items:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"{name}: axis must be an int or a tuple of ints; got {type(a).__name__}")
        if not -builtins.max(x.ndim, 1) <= a < builtins.max(x.ndim, 1):     # a 0-d array takes 0 and -1
            raise AxisError(f"{name}: axis {a} is out of bounds for array of dimension {x.ndim}")
        out.append(int(a) % builtins.max(x.ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: duplicate value in 'axis'")
    return tuple(sorted(a for a in out if a < x.ndim))


def _check(x: Any, name: str) -> GpuArray:
    return expect_array(x, f"{name}")


def _reduce(x: GpuArray, rop: str, axes: tuple[int, ...], dtype: np.dtype, keepdims: bool) -> GpuArray:
    return finish(_reduce_node(x._node, rop, axes, dtype, keepdims))


def _reduce_node(x: Node, rop: str, axes: tuple[int, ...], dtype: np.dtype, keepdims: bool) -> Node:
    """The node of ``rop`` over ``axes`` of the node ``x`` in ``dtype`` (list comprehensions, not
    generators: this runs for every reduction recorded)."""
    shape = x.shape
    out = tuple([s for i, s in enumerate(shape) if i not in axes])
    lim = past_binding(x)
    parts = blocks_of(x, axes, lim, out=math.prod(out) * STORAGE_NP[dtype].itemsize) if lim else None
    if parts is None:
        r = make("reduce", (astype_node(x, dtype),), dtype, out, (rop, axes), x.device)
    else:           # past one binding: by blocks (reduce_blocks.py)
        ax = (0,) if len(axes) == len(shape) else axes        # blocks of the flattened array: their one axis
        parts = [make("reduce", (astype_node(p, dtype),), dtype, tuple([s for i, s in enumerate(p.shape)
                                                                         if i not in ax]), (rop, ax), x.device)
                 for p in parts]
        r = combine(parts, rop, axes, len(shape), out)
    if keepdims:
        r = views.reshape(r, tuple([1 if i in axes else s for i, s in enumerate(shape)]))
    return r


def _sum_dtype(x: GpuArray, dtype: Any, name: str) -> np.dtype:
    if dtype is not None:
        dt = _dtypes.as_dtype(dtype)
        x.device.check_dtype(dt)
        return dt
    dt = x._node.dtype
    if dt.kind in "b" or dt in _dtypes.SIGNED:
        return x.device.default_int
    if dt in _dtypes.UNSIGNED:
        return np.dtype(f"uint{x.device.default_int.itemsize * 8}")
    return dt


def sum(x: GpuArray, /, *, axis: Axis = None, dtype: Any = None, keepdims: bool = False) -> GpuArray:  # noqa: A001
    """Sum over ``axis`` (all axes by default); integers accumulate in the default integer dtype."""
    x = _check(x, "sum")
    return finish(_reduce_node(x._node, "sum", _axes(x, axis, "sum"), _sum_dtype(x, dtype, "sum"), keepdims))


# complex products along one axis of at most this many elements multiply in NumPy's order
IN_ORDER_PROD = 64


def prod(x: GpuArray, /, *, axis: Axis = None, dtype: Any = None, keepdims: bool = False) -> GpuArray:
    """Product over ``axis``; integers accumulate in the default integer dtype."""
    x = _check(x, "prod")
    axes, dt = _axes(x, axis, "prod"), _sum_dtype(x, dtype, "prod")
    if dt.kind == "c" and len(axes) == 1 and 0 < x.shape[axes[0]] <= IN_ORDER_PROD:
        return _prod_in_order(x, axes[0], dt, keepdims)
    return finish(_reduce_node(x._node, "prod", axes, dt, keepdims))


def _prod_in_order(x: GpuArray, axis: int, dt: np.dtype, keepdims: bool) -> GpuArray:
    """``prod`` of complex ``x`` along ``axis`` as NumPy multiplies: ``((1 * x_0) * x_1) * ...`` (one fused
    elementwise chain of views). The reduce kernel's tree regroups the products, which changes NaN,
    infinities and signed zeros: complex multiplication is not associative there (the fuzz found
    ``nan+nanj`` against NumPy's ``inf`` parts)."""
    v = x if x.dtype == dt else x.astype(dt)
    at: list[Any] = [slice(None)] * x.ndim
    p: Any = complex(1, 0)
    # along the last axis NumPy's reduction loop rounds each part's products apart; along another its
    # multiply loop runs, with one fused multiply-add a part where the CPU has one
    mul = OPS["multiply_rounded" if axis == x.ndim - 1 else "multiply"]
    for k in range(x.shape[axis]):
        at[axis] = k
        p = apply(mul, p, v[tuple(at)])
    if keepdims:
        p = finish(views.reshape(p._node, tuple(1 if i == axis else n for i, n in enumerate(x.shape))))
    return p


def _extreme(x: GpuArray, rop: str, axis: Axis, keepdims: bool) -> GpuArray:
    name = "maximum" if rop == "max" else "minimum"
    x = _check(x, rop)
    if x.dtype.kind == "c":
        raise TypeError(f"Only real numeric and boolean dtypes are allowed in {rop}; got {x.dtype}.")
    axes = _axes(x, axis, rop)
    if builtins.any(x.shape[a] == 0 for a in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if x.dtype == _dtypes.bool_:        # as NumPy, CuPy and PyTorch (the standard leaves bools out): any / all
        return _reduce(x, "any" if rop == "max" else "all", axes, _dtypes.bool_, keepdims)
    return _reduce(x, rop, axes, x.dtype, keepdims)


def extremes_array(x: GpuArray) -> GpuArray:
    """``[min(x), max(x)]`` of a non-empty real array as a (2,) array on ``x``'s device, computed in
    one read of ``x`` (one ``extremes`` kernel; NaN propagates as in NumPy's ``min`` / ``max``;
    bools as uint8)."""
    if x.dtype.kind not in "biuf":
        raise TypeError(f"extremes: real numbers only; got {x.dtype}")
    if x.size == 0:
        raise ValueError("extremes: zero-size array has no minimum or maximum")
    xx = x.astype(_dtypes.uint8) if x.dtype == _dtypes.bool_ else x
    return finish(make("extremes", (xx._node,), xx.dtype, (2,), (), x.device))


def max(x: GpuArray, /, *, axis: Axis = None, keepdims: bool = False) -> GpuArray:  # noqa: A001
    """Largest element over ``axis``; NaN propagates, as in NumPy."""
    return _extreme(x, "max", axis, keepdims)


def min(x: GpuArray, /, *, axis: Axis = None, keepdims: bool = False) -> GpuArray:  # noqa: A001
    """Smallest element over ``axis``; NaN propagates, as in NumPy."""
    return _extreme(x, "min", axis, keepdims)


def _float_input(x: Any, name: str) -> GpuArray:
    x = _check(x, name)
    if x.dtype.kind not in "fc":
        raise TypeError(f"Only floating-point dtypes are allowed in {name}; got {x.dtype}.")
    return x


def mean(x: GpuArray, /, *, axis: Axis = None, keepdims: bool = False) -> GpuArray:
    """Arithmetic mean over ``axis`` (NaN for an empty reduction, as NumPy gives)."""
    x = _float_input(x, "mean")
    return _mean(x, _axes(x, axis, "mean"), keepdims)


def _mean(x: GpuArray, axes: tuple[int, ...], keepdims: bool) -> GpuArray:
    """``mean`` of a checked float ``x`` over checked ``axes``."""
    if x.dtype == _dtypes.float16:      # NumPy's: summed and divided in float32, rounded once
        m = _mean(finish(astype_node(x._node, _dtypes.float32)), axes, keepdims)
        return finish(astype_node(m._node, _dtypes.float16))
    n = math.prod([x.shape[a] for a in axes])
    return apply(OPS["divide"], _reduce(x, "sum", axes, x.dtype, keepdims), float(n))


def var(x: GpuArray, /, *, axis: Axis = None, correction: int | float = 0.0,
        keepdims: bool = False) -> GpuArray:
    """Variance over ``axis`` with ``correction`` degrees of freedom removed: the mean of squared
    deviations from the mean (recorded as two reductions; column fusion and long rows compute both in
    one walk over the data, ``compiler/colfuse.moments``).

    For complex ``x`` it is the mean of ``|x - mean(x)|**2``: a real result, as NumPy gives.
    """
    x = _float_input(x, "var")
    axes = _axes(x, axis, "var")
    if x._node.dtype.kind == "c":
        return _var_complex(x, axes, correction, keepdims)
    return finish(_var_real(x._node, axes, correction, keepdims))


def _var_real(x: Node, axes: tuple[int, ...], correction: int | float, keepdims: bool) -> Node:
    """The node of ``var`` of a real floating node ``x`` over checked ``axes``: the graph that
    ``apply`` records for ``sum(d * d) / (n - correction)``, ``d = x - sum(x, keepdims) / n``, built with
    ``make`` directly. Every operand has ``x``'s dtype, and nothing after the first reduction can be
    computed at once on the host (its input is not evaluated), so ``apply``'s checks, promotion and
    eager path have nothing to do (about fifty Python calls per ``std``)."""
    if x.dtype == _dtypes.float16:      # in float32, rounded once (NumPy's float16 steps can overflow)
        return astype_node(_var_real(astype_node(x, _dtypes.float32), axes, correction, keepdims), _dtypes.float16)
    dt, shape, dev = x.dtype, x.shape, x.device
    n = 1
    for a in axes:
        n *= shape[a]
    m = _reduce_node(x, "sum", axes, dt, True)
    m = make("divide", (m, const(float(n), dt, dev)), dt, m.shape, (), dev)
    d = make("subtract", (x, m), dt, shape, (), dev)        # m's shape: x's with ones along axes
    ss = _reduce_node(make("multiply", (d, d), dt, d.shape, (), dev), "sum", axes, dt, keepdims)
    return make("divide", (ss, const(float(builtins.max(n - correction, 0)), dt, dev)), dt, ss.shape, (), dev)


def _var_complex(x: GpuArray, axes: tuple[int, ...], correction: int | float, keepdims: bool) -> GpuArray:
    """``var`` of a complex ``x`` over checked ``axes``: the mean of ``|x - mean(x)|**2``."""
    n = math.prod([x.shape[a] for a in axes])
    d = apply(OPS["subtract"], x, _mean(x, axes, True))
    re, im = apply(OPS["real"], d), apply(OPS["imag"], d)
    sq = apply(OPS["add"], apply(OPS["multiply"], re, re), apply(OPS["multiply"], im, im))
    ss = _reduce(sq, "sum", axes, sq.dtype, keepdims)
    return apply(OPS["divide"], ss, float(builtins.max(n - correction, 0)))


def std(x: GpuArray, /, *, axis: Axis = None, correction: int | float = 0.0,
        keepdims: bool = False) -> GpuArray:
    """Standard deviation: ``sqrt(var(...))``."""
    x = _float_input(x, "std")
    axes = _axes(x, axis, "std")
    if x._node.dtype.kind == "c":
        return apply(OPS["sqrt"], _var_complex(x, axes, correction, keepdims))
    v = _var_real(x._node, axes, correction, keepdims)
    return finish(make("sqrt", (v,), v.dtype, v.shape, (), v.device))


def all(x: GpuArray, /, *, axis: Axis = None, keepdims: bool = False) -> GpuArray:  # noqa: A001
    """True where every element over ``axis`` is non-zero (NaN counts as true)."""
    return _truth(x, "all", axis, keepdims)


def any(x: GpuArray, /, *, axis: Axis = None, keepdims: bool = False) -> GpuArray:  # noqa: A001
    """True where some element over ``axis`` is non-zero."""
    return _truth(x, "any", axis, keepdims)


def _truth(x: GpuArray, rop: str, axis: Axis, keepdims: bool) -> GpuArray:
    """``all`` / ``any``; small data held on the host only is reduced at once there, as small elementwise work is
    (runtime/eager.py: SciPy's ``xp.any(order == 0)`` of a 0-d host value in every moment, read by ``bool``)."""
    x = _check(x, rop)
    axes = _axes(x, axis, rop)
    n = x._node
    d = n.data
    if d is not None and d.handle is None and d.host is not None and d.host.size < _eager.limit_now(n.device):
        host = d.host.reshape(n.shape)
    else:
        host = _known_element(n)
        if host is None:
            return _reduce(x, rop, axes, _dtypes.bool_, keepdims)
    r = np.asarray(host.all(axis=axes, keepdims=keepdims) if rop == "all" else host.any(axis=axes, keepdims=keepdims))
    if not r.flags.c_contiguous:
        r = np.ascontiguousarray(r)
    return _eager.leaf_array(rop, r, r.shape, n.device)        # (a new bool array: wrap's checks hold)


def _known_element(n: Node) -> np.ndarray | None:
    """The value of ``n`` on the host where it is a one-element view of evaluated data whose element is known
    there (a host copy, or read before: ``residency.element_known``) and small work runs at once (``eager``);
    else None. SciPy's ``is_lazy_array(x)``, ``bool(any(reshape(x, -1)[0]))``, asks this of each input several
    times a call: a reduction recorded, scheduled and walked on the host each time before."""
    if n.op != "view" or n.data is not None or math.prod(n.shape) != 1:
        return None
    base = n.inputs[0]
    d = base.data
    at = n.attrs[1]
    if d is None or n.dtype != base.dtype or not element_known(d, at) or not _eager.limit_now(n.device):
        return None
    return np.asarray(element(d, at), dtype=n.dtype).reshape(n.shape)


def _cumulative(x: GpuArray, op: str, axis: int | None, dtype: Any, include_initial: bool,
                name: str) -> GpuArray:
    x = _check(x, name)
    if x.ndim == 0:
        raise ValueError(f"{name}: x must have at least one dimension; got a 0-d array")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis must be given for an array of {x.ndim} dimensions")
        axis = 0
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{name}: axis must be an int or None; got {type(axis).__name__}")
    if not -x.ndim <= axis < x.ndim:
        raise AxisError(f"{name}: axis {axis} is out of bounds for array of dimension {x.ndim}")
    ax = int(axis) % x.ndim
    dt = _sum_dtype(x, dtype, name)
    if dt.kind == "c" and op == "sum" and not x.device.provider.host_memory:
        # no complex scan kernel on the GPUs: the sums of the parts, each a real scan (the same additions)
        xc = finish(astype_node(x._node, dt))
        re, im = (_cumulative(apply(OPS[p], xc), op, ax, _dtypes.real_dtype(dt), include_initial, name)._node
                  for p in ("real", "imag"))
        return finish(make("setpart", (astype_node(re, dt), im), dt, re.shape, (1,)))
    init = bool(include_initial)
    shape = tuple(s + int(init) if d == ax else s for d, s in enumerate(x.shape))
    lim = past_binding(x._node)
    parts = blocks_of(x._node, (ax,), lim, 2) if lim else None
    if parts is not None and ax == 0:       # past one binding, along the first axis: carried blocks
        return finish(_first_axis_scan(parts, op, dt, init, shape))
    if parts is not None:       # past one binding: blocks of rows (reduce_blocks.py), joined
        return finish(combine([make("scan", (astype_node(p, dt),), dt, (p.shape[0], *shape[1:]), (op, ax, init),
                                    x.device) for p in parts], op, (ax,), x.ndim, shape))
    node = astype_node(x._node, dt)
    return finish(make("scan", (node,), dt, shape, (op, ax, init), x.device))


def _first_axis_scan(parts: list[Node], op: str, dt: np.dtype, init: bool, shape: tuple[int, ...]) -> Node:
    """The scan along the first axis of an array past one binding (a 1-D one included) from its blocks of
    rows: each block scanned, then combined with the last row of the blocks before it (its carry: the sum
    or product of everything above), each block's result a kernel of its own (``reduce_blocks.alone``) so
    that the blocks join by copies; with ``include_initial`` an identity row first."""
    dev = parts[0].device
    binop = "add" if op == "sum" else "multiply"
    rest = shape[1:]
    blocks: list[Node] = []
    if init:                    # the identity row, a kernel's output too: every block joins by a copy
        blocks.append(alone(views.broadcast_to(const(0 if op == "sum" else 1, dt, dev), (1, *rest))))
    carry: Node | None = None
    for p in parts:
        sh = (p.shape[0], *rest)
        b = make("scan", (astype_node(p, dt),), dt, sh, (op, 0, False), dev)
        if carry is not None:
            b = make(binop, (b, views.broadcast_to(carry, sh)), dt, sh, (), dev)
        b = alone(b)
        carry = views.compose(b, (1, *rest), view_strides((1, *rest)), (sh[0] - 1) * math.prod(rest))
        blocks.append(b)
    return concat_nodes(blocks, 0)


def cumulative_sum(x: GpuArray, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> GpuArray:
    """Cumulative sum along ``axis`` (optional for 1-D arrays); dtype rules as for ``sum``.

    With ``include_initial`` the result starts with 0 and is one longer along ``axis``.

    >>> import gpuarray as xp
    >>> xp.cumulative_sum(xp.asarray([1, 2, 3], device="cpu"), include_initial=True).tolist()
    [0, 1, 3, 6]
    """
    return _cumulative(x, "sum", axis, dtype, include_initial, "cumulative_sum")


def cumulative_prod(x: GpuArray, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> GpuArray:
    """Cumulative product along ``axis`` (optional for 1-D arrays); dtype rules as for ``prod``.

    With ``include_initial`` the result starts with 1 and is one longer along ``axis``.

    >>> import gpuarray as xp
    >>> xp.cumulative_prod(xp.asarray([1.0, 2.0, 3.0], device="cpu")).tolist()
    [1.0, 2.0, 6.0]
    """
    return _cumulative(x, "prod", axis, dtype, include_initial, "cumulative_prod")


__all__ = ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any", "cumulative_sum", "cumulative_prod"]

# the reduction methods' common case (``x.sum()``, ``x.std(axis=0)``: methods._plain) calls these
register(reductions={"sum": sum, "prod": prod, "mean": mean, "var": var, "std": std, "max": max, "min": min})
