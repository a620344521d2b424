"""``__array_ufunc__``: NumPy ufuncs on GpuArrays, recorded lazily on their device.

Ufunc calls (``np.exp(g)``, ``np.add(g, a, out=..., where=..., dtype=...)``,
``np.multiply.outer(g, h)``) map through ``_ops.UFUNC_TO_OP`` onto the op table,
so they fuse like ``xp.exp(g)``. Dtypes follow NumPy (``ufunc.resolve_dtypes``,
Python scalars weak), not the stricter Array API: ``np.exp(int32)`` is float64,
``np.add(bool, bool)`` is a logical or; float16 loops give float16, each result rounded
(core/dtypes.py). Other ufunc methods (``reduce``, ``accumulate`` ...) plug in
with ``register_ufunc_method``; what has no device implementation runs on the host.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..array_object.array import GpuArray
from ..array_object.elementwise import apply, astype_node, binary_method, finish
from ..core import dtypes as _dtypes
from ..core.ops import OPS, UFUNC_TO_OP
from ..graph.node import make
from ..graph.shapes import broadcast_shapes
from ..namespace.elementwise import clip_values
from ..namespace.manipulation import broadcast_to, reshape
from ..runtime.devices import Device
from .complex_order import ORDERING, complex_extreme, ordered
from .host import _FALLBACK, _xp, host_ufunc
from .operands import _as_array, _device_from, _map_dtype, _mask, _ndim, _prepare, _probe

_SCALARS = (bool, int, float, complex)


def _compute_dtype(loop: np.dtype, category: str) -> np.dtype | None:
    """The dtype an op of ``category`` computes a NumPy loop of dtype ``loop`` in (None: it cannot)."""
    if _dtypes.in_category(loop, category):
        return loop
    if loop == _dtypes.bool_ and _dtypes.in_category(_dtypes.int8, category):
        return _dtypes.int8         # bool loops of numeric ops: add is or, multiply is and ...
    if category == "bool":
        return _dtypes.bool_        # logical ops of numbers: nonzero is True
    return None


def _modf(x: GpuArray) -> tuple[GpuArray, GpuArray]:
    """(fractional part, integral part), each with the sign of ``x``; +-inf has the fraction +-0."""
    whole = apply(OPS["trunc"], x)
    frac = apply(OPS["where"], apply(OPS["isinf"], x), 0.0, apply(OPS["subtract"], x, whole))
    return apply(OPS["copysign"], frac, x), whole


def _logaddexp2(x: GpuArray, y: GpuArray) -> tuple[GpuArray]:
    """NumPy's ``npy_logaddexp2``: ``x + 1`` where ``x == y`` (equal infinities), else the larger plus
    ``log2(1 + 2^-|x - y|)`` by ``log1p``; NaN where ``x - y`` is."""
    d = apply(OPS["subtract"], x, y)
    def side(big: GpuArray, t: GpuArray) -> GpuArray:
        tail = apply(OPS["log1p"], apply(OPS["exp2"], t))
        return apply(OPS["add"], big, apply(OPS["multiply"], tail, 1.4426950408889634))   # log2(e)
    rest = apply(OPS["where"], apply(OPS["less_equal"], d, 0), side(y, d), d)
    r = apply(OPS["where"], apply(OPS["greater"], d, 0), side(x, apply(OPS["negative"], d)), rest)
    return (apply(OPS["where"], apply(OPS["equal"], x, y), apply(OPS["add"], x, 1), r),)


def _frexp(x: GpuArray) -> tuple[GpuArray, GpuArray]:
    """(mantissa, exponent): the exponent on the bits (``frexp_exponent``: 0 for 0, +-inf and NaN), the
    mantissa ``ldexp(x, -exponent)``, exact (x itself where the exponent is 0); one fused kernel."""
    e = apply(OPS["frexp_exponent"], x)
    return apply(OPS["ldexp"], x, apply(OPS["negative"], e)), e


# ufuncs that are not one op-table entry but a few of them: name -> (dtype category, impl).
# Each impl gets operands already in one compute dtype and returns one GpuArray per ufunc output.
# divmod is here because an op-table entry has one result and divmod has two (it is floor_divide
# and remainder, two ops of one fused kernel), frexp likewise; clip because numpy.clip's ufunc takes
# optional bounds.
# Every other ufunc is one op-table entry (fmax, heaviside, deg2rad, float_power ...: _ops.py).
COMPOSED: dict[str, tuple[str, Callable[..., tuple]]] = {
    "divmod": ("real numeric", lambda a, b: (apply(OPS["floor_divide"], a, b), apply(OPS["remainder"], a, b))),
    "clip": ("real numeric", lambda x, lo, hi: (clip_values(x, lo, hi),)),
    "modf": ("real floating", _modf),
    "logaddexp2": ("real floating", _logaddexp2),
    "frexp": ("real floating", _frexp),
}

# ufuncs computed exactly by another op-table entry once NumPy has chosen the loop dtypes
# (numpy.radians is another ufunc object than numpy.deg2rad, with the same loops).
ALIASES: dict[str, str] = {"fabs": "abs", "radians": "deg2rad", "degrees": "rad2deg"}


def _device_ufunc(name: str) -> tuple[str, Callable[..., tuple]] | None:
    op = UFUNC_TO_OP.get(name) or ALIASES.get(name)
    if op is not None and op in OPS:
        opdef = OPS[op]
        return opdef.category, lambda *a: (apply(opdef, *a),)
    return COMPOSED.get(name)


def _loop_dtypes(ufunc: np.ufunc, inputs: tuple, dtype: Any, casting: Any) -> tuple[np.dtype, ...] | None:
    """NumPy's loop dtypes (inputs, then outputs) for these operands, Python scalars weak."""
    spec: list[Any] = []
    for x in inputs:
        if isinstance(x, (GpuArray, np.ndarray, np.generic)):
            spec.append(x.dtype)
        elif isinstance(x, bool):
            spec.append(np.dtype(bool))
        else:
            spec.append(type(x))
    spec += [None] * ufunc.nout
    kw: dict[str, Any] = {} if casting is None else {"casting": casting}
    if dtype is not None:
        kw["signature"] = (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout
    try:
        return tuple(ufunc.resolve_dtypes(tuple(spec), **kw))
    except (TypeError, ValueError):
        return None


def _check_kwargs(name: str, kwargs: dict) -> None:
    if kwargs.get("signature") is not None:
        raise TypeError(f"numpy.{name}: the signature= keyword is not supported for GpuArrays; "
                        "use dtype= to choose the computation dtype")
    order = kwargs.get("order")
    if order not in (None, "K", "A", "C"):
        raise ValueError(f"numpy.{name}: order={order!r} is not supported for GpuArrays (they have no "
                         "memory layout; results are always C-ordered); use order='K' or 'C'")



def _store(results: list[Any], outs: tuple, where: Any, device: Device, name: str) -> Any:
    """Write results into ``out`` operands (honouring ``where``); return what NumPy would return."""
    GA = GpuArray
    final: list[Any] = []
    for r, o in zip(results, outs):
        if o is None:
            final.append(r)           # where=False positions are unspecified, as in NumPy
            continue
        if r.shape != o.shape:
            try:
                ok = broadcast_shapes(r.shape, o.shape) == o.shape
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(f"non-broadcastable output operand with shape {o.shape} doesn't match "
                                 f"the broadcast shape {r.shape}")
            r = broadcast_to(r, o.shape)
        if isinstance(o, GA):
            if o.device != device:
                raise ValueError(f"numpy.{name}: out is on {o.device.name} but the operands are on "
                                 f"{device.name}; move one with to_device() first")
            if r.dtype != o.dtype:
                r = r.astype(o.dtype)
            if where is not True:
                r = o if where is False else apply(OPS["where"], _mask(where, device), r, o)
            o._inplace(r, name)
        else:
            with np.errstate(all="ignore"):
                np.copyto(o, np.asarray(r), casting="unsafe",
                          where=True if where is True else np.asarray(where))
        final.append(o)
    return final[0] if len(final) == 1 else tuple(final)


# gufuncs with a namespace function of the same meaning (used once the namespace has it)
GUFUNCS: dict[str, str] = {"matmul": "matmul", "vecdot": "vecdot"}


def _matvec(a: GpuArray, v: GpuArray) -> GpuArray:
    """``numpy.matvec``: ``a @ v`` over the last axes, as a one-column product."""
    return _xp("matmul")(a, v[..., None])[..., 0]


def _vecmat(v: GpuArray, a: GpuArray) -> GpuArray:
    """``numpy.vecmat``: ``conj(v) @ a`` over the last axes, as a one-row product."""
    if v.dtype.kind == "c":
        v = _xp("conj")(v)
    return _xp("matmul")(v[..., None, :], a)[..., 0, :]


# gufuncs with no namespace function of their own
LOCAL_GUFUNCS: dict[str, Callable[..., Any]] = {"matvec": _matvec, "vecmat": _vecmat}


def gufunc_impl(name: str) -> Callable[..., Any] | None:
    """The device implementation of the gufunc ``name`` (``matmul``, ``vecdot``, ``matvec``, ``vecmat``)."""
    return LOCAL_GUFUNCS.get(name) or _xp(GUFUNCS.get(name, ""))


_MISS: Any = object()
# (ufunc, operand kinds, dtype=, casting=, out dtypes, where's kind) -> NumPy's loop dtypes (None: no loop), for
# calls NumPy validated before: the probe call (a ufunc on 0-d stand-ins under errstate and catch_warnings) and
# resolve_dtypes cost about 12 us a call, more than a recorded operation
_VALIDATED: dict[tuple, tuple[np.dtype, ...] | None] = {}
_VALIDATED_MAX = 4096


def _kind(x: Any) -> Any:
    """What of an operand decides NumPy's checks and loop: an array's dtype; a Python int's value (NumPy
    raises OverflowError for one outside a small integer dtype's range); another scalar's type."""
    if isinstance(x, (GpuArray, np.ndarray, np.generic)):
        return x.dtype
    return (int, x) if type(x) is int else type(x)


# Binary ufuncs with an operator (``np.add(x, 2.0)`` is ``x + 2.0``): an operator's hot path records the operation
# in about a dozen Python calls, this module's general path in over a hundred. Wherever the operator gives a result
# it is NumPy's ufunc result (same dtype and values: tests/test_ufunc_operators.py over every dtype pair and Python
# scalar); where it refuses what NumPy allows (bool arithmetic, complex ordering, which the Array API leaves out),
# the general path runs. ``power`` is not among them: NumPy raises for an integer to a negative integer power.
_OPERATORS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]] = {
    u: (binary_method(o, False), binary_method(o, True)) for u, o in UFUNC_TO_OP.items()
    if o in OPS and OPS[o].dunders and o != "pow" and isinstance(getattr(np, u, None), np.ufunc)
    and getattr(np, u).signature is None}
_PY_NUMBERS = (int, float, complex)


def _by_operator(ufunc: np.ufunc, inputs: tuple) -> Any:
    """``ufunc(a, b)`` (no keywords) by the operator's hot path: a GpuArray with a GpuArray or a Python number;
    NotImplemented where the operator does not give NumPy's answer."""
    pair = _OPERATORS.get(ufunc.__name__)
    if pair is None:
        return NotImplemented
    a, b = inputs
    ta, tb = type(a), type(b)
    if ta is GpuArray and (tb is GpuArray or tb in _PY_NUMBERS):
        fn, x, other = pair[0], a, b
    elif tb is GpuArray and ta in _PY_NUMBERS:
        fn, x, other = pair[1], b, a
    else:
        return NotImplemented
    try:
        return fn(x, other)
    except (TypeError, ValueError, OverflowError):
        return NotImplemented           # NumPy's rules, or its error, on the general path


# (ufunc, dtype, device) -> the op a unary ufunc without keywords is on a GpuArray of that dtype, where NumPy's
# loop keeps the dtype (np.exp(float32), np.negative(int8)); None: the general path
_UNARY: dict[tuple, Any] = {}


def _by_unary(ufunc: np.ufunc, x: GpuArray) -> Any:
    """``ufunc(x)`` as the op's ``apply`` (about 25 Python calls against 90), where the general path would do just
    that: an op-table ufunc whose NumPy loop for ``x``'s dtype is (dtype) -> (dtype), computed in that dtype on
    ``x``'s device; NotImplemented otherwise (tests/test_ufunc_operators.py checks every unary ufunc and dtype)."""
    key = (ufunc, x.dtype, x.device)
    opdef = _UNARY.get(key, _MISS)
    if opdef is not _MISS:
        return NotImplemented if opdef is None else apply(opdef, x)
    op = UFUNC_TO_OP.get(ufunc.__name__) or ALIASES.get(ufunc.__name__)
    opdef, dt = OPS.get(op or ""), x.dtype
    if (opdef is None or ufunc.nin != 1 or ufunc.nout != 1 or _loop_dtypes(ufunc, (x,), None, None) != (dt, dt)
            or _map_dtype(dt, x.device) != dt or _compute_dtype(dt, opdef.category) != dt):
        _UNARY[key] = None
        return NotImplemented
    try:
        r = apply(opdef, x)
    except (TypeError, ValueError):
        r = None
    _UNARY[key] = opdef if r is not None and r.dtype == dt else None
    return r if _UNARY[key] is not None else NotImplemented


def _call(ufunc: np.ufunc, inputs: tuple, kwargs: dict, self: Any) -> Any:
    """``ufunc(*inputs, **kwargs)`` recorded lazily on the device when gpuarray has the op."""
    if not kwargs and len(inputs) <= 2:
        r = _by_operator(ufunc, inputs) if len(inputs) == 2 else (
            _by_unary(ufunc, inputs[0]) if type(inputs[0]) is GpuArray else NotImplemented)
        if r is not NotImplemented:
            return r
    name = ufunc.__name__
    inputs = tuple(np.asarray(x) if isinstance(x, (list, tuple)) else x for x in inputs)
    _check_kwargs(name, kwargs)
    outs = tuple(kwargs.get("out") or (None,) * ufunc.nout)
    where = kwargs.get("where", True)
    if isinstance(where, (list, tuple)):
        where = kwargs["where"] = np.asarray(where)
    device = _device_from(inputs + outs + (where,), self)
    if ufunc.signature is not None:
        return _gufunc(ufunc, inputs, kwargs, device)
    impl = _device_ufunc(name)
    key: tuple | None = (ufunc, tuple(_kind(x) for x in inputs), kwargs.get("dtype"), kwargs.get("casting"),
                         tuple(None if o is None else o.dtype for o in outs),
                         _kind(where) if "where" in kwargs else _MISS)
    try:
        loop = _VALIDATED.get(key, _MISS)       # type: ignore[arg-type]
    except TypeError:                           # an unhashable dtype= or casting=: NumPy's errors below
        key, loop = None, _MISS
    if loop is _MISS:
        # NumPy itself validates operands, dtype=, casting= and out dtypes (and raises its own errors)
        probe_kw = {k: v for k, v in kwargs.items() if k in ("dtype", "casting")}
        probe_kw["out"] = tuple(None if o is None else np.zeros((), o.dtype) for o in outs)
        if "where" in kwargs:
            probe_kw["where"] = _probe(where)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ufunc(*(_probe(x) for x in inputs), **probe_kw)
        loop = _loop_dtypes(ufunc, inputs, kwargs.get("dtype"), kwargs.get("casting")) if impl is not None else None
        if key is not None:
            if len(_VALIDATED) >= _VALIDATED_MAX:
                _VALIDATED.clear()
            _VALIDATED[key] = loop
    if impl is None or loop is None:
        detail = "" if impl is None else " for these operand dtypes"
        return host_ufunc(ufunc, "__call__", inputs, kwargs, device, detail)
    category, fn = impl
    if name in _COMPARISONS and _int_out_of_range(inputs) and "out" not in kwargs and "where" not in kwargs:
        return fn(*inputs)[0]   # NumPy 2 compares such an int exactly: the operators' path does (a constant)
    mapped = [_map_dtype(d, device) for d in loop]
    opdef = OPS.get(UFUNC_TO_OP.get(name, ""))
    if opdef is not None and opdef.result == "first" and all(m is not None for m in mapped):
        # ldexp: operands of two dtypes (float, int); each goes in its loop dtype, the op converts the exponent
        results = [fn(*(_prepare((x,), m, device)[0] for x, m in zip(inputs, mapped) if m is not None))[0]]
        if results[0].dtype != mapped[-1]:
            results[0] = results[0].astype(mapped[-1])
        return _store(results, outs, where, device, name)
    ins = set(mapped[:ufunc.nin])
    first = ins.pop() if len(ins) == 1 else None
    ct = None if first is None else _compute_dtype(first, category)
    if name in ORDERING and first is not None and first.kind == "c" and ufunc.nin == 2 and \
            all(m is not None for m in mapped) and "where" not in kwargs:     # NumPy's order of complex values
        a, b = _prepare(inputs, first, device)
        results = [ordered(name, a, b)]
        if results[0].dtype != mapped[-1]:
            results[0] = results[0].astype(mapped[-1])
        return _store(results, outs, where, device, name)
    if ct is None or any(m is None for m in mapped):
        loop_text = f"({', '.join(map(str, loop[:ufunc.nin]))}) -> {', '.join(map(str, loop[ufunc.nin:]))}"
        return host_ufunc(ufunc, "__call__", inputs, kwargs, device, f" for the loop {loop_text}")
    results = list(fn(*_prepare(inputs, ct, device)))
    for i, want in enumerate(mapped[ufunc.nin:]):
        if results[i].dtype != want:
            results[i] = results[i].astype(want)
    return _store(results, outs, where, device, name)


_COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})


def _int_out_of_range(inputs: tuple) -> bool:
    """An integer GpuArray with a Python int outside its dtype's range (``np.less(uint8_array, -1)``)."""
    if len(inputs) != 2:
        return False
    for x, s in (inputs, inputs[::-1]):
        if isinstance(x, GpuArray) and x.dtype.kind in "iu" and type(s) is int:
            info = np.iinfo(x.dtype)
            return not info.min <= s <= info.max
    return False


def _gufunc(ufunc: np.ufunc, inputs: tuple, kwargs: dict, device: Device) -> Any:
    """matmul / vecdot / matvec / vecmat on the device (``gufunc_impl``), in NumPy's result dtype."""
    fn = gufunc_impl(ufunc.__name__)
    if fn is None or set(kwargs) - {"subok", "order"}:
        return host_ufunc(ufunc, "__call__", inputs, kwargs, device)
    arrays = [x if isinstance(x, (GpuArray, np.ndarray)) else np.asarray(x) for x in inputs]
    with np.errstate(all="ignore"):
        want = ufunc(*(np.zeros((1,) * x.ndim, x.dtype) for x in arrays)).dtype
    mw = _map_dtype(want, device)
    if mw is None or mw == _dtypes.bool_:
        return host_ufunc(ufunc, "__call__", inputs, kwargs, device, f" for {want} results")
    return fn(*(a if a.dtype == mw else a.astype(mw) for a in (_as_array(x, device) for x in arrays)))



def _outer(ufunc: np.ufunc, inputs: tuple, kwargs: dict, self: Any) -> Any:
    """``ufunc.outer(a, b)`` as ``ufunc(a[..., None, ...], b)``: a broadcasting view, no copy."""
    if ufunc.nin != 2 or ufunc.signature is not None:
        raise ValueError("outer product only supported for binary functions")
    a, b = (np.asarray(x) if isinstance(x, (list, tuple)) else x for x in inputs)
    if _ndim(b) and _ndim(a):
        a = a.reshape(tuple(a.shape) + (1,) * _ndim(b))
    return _call(ufunc, (a, b), kwargs, self)


# (ufunc name, method) -> device implementation(ufunc, inputs, kwargs) returning a result or _FALLBACK
METHODS: dict[tuple[str, str], Callable[..., Any]] = {}


def register_ufunc_method(ufunc_name: str, method: str, impl: Callable[..., Any]) -> None:
    """Plug in a device implementation of ``numpy.<ufunc_name>.<method>`` (``reduce``, ``accumulate``,
    ``reduceat``, ``at``). ``impl(ufunc, inputs, kwargs)`` returns the result, or
    ``interop.host._FALLBACK`` to let this call run on the host."""
    METHODS[(ufunc_name, method)] = impl


def _namespace_reduction(xp_name: str, accumulate: bool = False) -> Callable[..., Any]:
    """``ufunc.reduce`` / ``accumulate`` through the namespace function ``xp_name`` (once it exists)."""
    def impl(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
        (a,) = inputs
        fn = _xp(xp_name)
        outs = tuple(kwargs.get("out") or ())
        if (fn is None or not isinstance(a, GpuArray) or a.size == 0
                or set(kwargs) - {"axis", "dtype", "keepdims", "out"}
                or not all(isinstance(o, GpuArray) and o.device == a.device for o in outs)):
            return _FALLBACK
        axis, dtype = kwargs.get("axis", 0), kwargs.get("dtype")
        if xp_name in ("max", "min") and a.dtype.kind == "c" and dtype is None:     # NumPy's complex order
            ufunc.reduce(np.zeros((1,) * a.ndim, a.dtype), axis=axis)         # (NumPy's checks of axis)
            r = complex_extreme(a, xp_name, axis, bool(kwargs.get("keepdims", False)))
            return _into_out(r, outs, ufunc, "reduction")
        method: Any = ufunc.accumulate if accumulate else ufunc.reduce
        extra = {} if accumulate else {"keepdims": bool(kwargs.get("keepdims", False))}
        want = method(np.zeros((1,) * a.ndim, a.dtype), axis=axis, dtype=dtype, **extra).dtype
        mw = _map_dtype(want, a.device)
        if mw is None:
            return _FALLBACK
        kw: dict[str, Any] = {"axis": axis, **extra}
        if xp_name in ("sum", "prod", "cumulative_sum", "cumulative_prod"):
            kw["dtype"] = mw
        r = fn(a, **kw)
        return _into_out(r if r.dtype == mw else r.astype(mw), outs, ufunc, "reduction")
    return impl


def _into_out(r: Any, outs: tuple, ufunc: np.ufunc, what: str) -> Any:
    """``r``, or ``r`` stored into the ``out=`` array (NumPy's ValueError when the shapes differ)."""
    if not outs:
        return r
    if outs[0].shape != r.shape:
        raise ValueError(f"output parameter for {what} operation {ufunc.__name__} has the wrong "
                         f"shape: {outs[0].shape}; expected {r.shape}")
    return _store([r], outs, True, r.device, ufunc.__name__)


for _uf, _xpn in (("add", "sum"), ("multiply", "prod"), ("maximum", "max"), ("minimum", "min"),
                  ("logical_and", "all"), ("logical_or", "any")):
    register_ufunc_method(_uf, "reduce", _namespace_reduction(_xpn))
for _uf, _xpn in (("add", "cumulative_sum"), ("multiply", "cumulative_prod")):
    register_ufunc_method(_uf, "accumulate", _namespace_reduction(_xpn, accumulate=True))


def scan_dtype(ufunc: np.ufunc, want: np.dtype, device: Any) -> np.dtype | None:
    """The dtype a scan computes NumPy's loop dtype ``want`` in (``_map_dtype``; a float16 scan adds in
    float32 and rounds each sum once, as PyTorch's, where NumPy rounds every step), or None (complex, or no
    such dtype: the host)."""
    mw = _map_dtype(want, device)
    return None if mw is None or mw.kind == "c" else mw


def scan_accumulate(op: str, loop_dtype: Callable[..., np.dtype | None] = scan_dtype) -> Callable[..., Any]:
    """``ufunc.accumulate`` as a ``scan`` node with combine ``op`` (``max`` / ``min``; on the bools of
    ``logical_or`` / ``logical_and``; a fold, ``core.ops.folded``), in the dtype ``loop_dtype(ufunc, want,
    device)`` gives for NumPy's loop dtype ``want`` (None: the host); NaN propagates as in NumPy."""
    def impl(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
        (a,) = inputs
        outs = tuple(kwargs.get("out") or ())
        if (not isinstance(a, GpuArray) or a.ndim == 0 or set(kwargs) - {"axis", "dtype", "out"}
                or not all(isinstance(o, GpuArray) and o.device == a.device for o in outs)):
            return _FALLBACK
        axis = kwargs.get("axis", 0)
        want = ufunc.accumulate(np.zeros((1,) * a.ndim, a.dtype), axis=axis, dtype=kwargs.get("dtype")).dtype
        mw = loop_dtype(ufunc, np.dtype(want), a.device)
        if mw is None:
            return _FALLBACK
        ax = int(axis) % a.ndim        # NumPy checked it above (AxisError)
        r = finish(make("scan", (astype_node(a._node, mw),), mw, a.shape, (op, ax, False), a.device))
        return _into_out(r, outs, ufunc, "accumulate")
    return impl


for _uf, _op in (("maximum", "max"), ("minimum", "min"), ("logical_or", "max"), ("logical_and", "min")):
    register_ufunc_method(_uf, "accumulate", scan_accumulate(_op))


def _log_sum_reduce(exp_op: str, log_op: str) -> Callable[..., Any]:
    """``logaddexp.reduce`` (``exp``, ``log``) / ``logaddexp2.reduce`` (``exp2``, ``log2``) as
    ``m + log(sum(exp(x - m)))`` with ``m`` the largest finite-or-not value (0 where it is not finite:
    +-inf and NaN come out as NumPy's), one fused row reduction instead of NumPy's chain of pairs."""
    def impl(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
        (a,) = inputs
        outs = tuple(kwargs.get("out") or ())
        if (not isinstance(a, GpuArray) or a.size == 0 or set(kwargs) - {"axis", "dtype", "keepdims", "out"}
                or not all(isinstance(o, GpuArray) and o.device == a.device for o in outs)):
            return _FALLBACK
        axis, keepdims = kwargs.get("axis", 0), bool(kwargs.get("keepdims", False))
        want = ufunc.reduce(np.zeros((1,) * a.ndim, a.dtype), axis=axis, dtype=kwargs.get("dtype")).dtype
        mw = _map_dtype(want, a.device)
        if mw is None or mw.kind != "f":
            return _FALLBACK
        axes = normalize_axis_tuple(tuple(range(a.ndim)) if axis is None else axis, a.ndim)
        x = a if a.dtype == mw else a.astype(mw)
        m = _xp("max")(x, axis=axes, keepdims=True)
        m = apply(OPS["where"], apply(OPS["isfinite"], m), m, 0.0)
        s = _xp("sum")(apply(OPS[exp_op], apply(OPS["subtract"], x, m)), axis=axes, keepdims=True)
        r = apply(OPS["add"], m, apply(OPS[log_op], s))
        if not keepdims:
            r = reshape(r, tuple(n for i, n in enumerate(a.shape) if i not in axes))
        return _into_out(r, outs, ufunc, "reduction")
    return impl


register_ufunc_method("logaddexp", "reduce", _log_sum_reduce("exp", "log"))
register_ufunc_method("logaddexp2", "reduce", _log_sum_reduce("exp2", "log2"))


def _operand_ok(x: Any) -> bool:
    """Operands we handle; an ndarray subclass with its own ``__array_ufunc__`` gets its turn first."""
    if isinstance(x, np.ndarray):
        return type(x).__array_ufunc__ is np.ndarray.__array_ufunc__
    return isinstance(x, (GpuArray, np.generic, list, tuple) + _SCALARS)


def array_ufunc(self: Any, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """``GpuArray.__array_ufunc__``: NumPy ufuncs on GpuArrays, recorded lazily on their device.

    >>> import numpy as np, gpuarray as xp
    >>> g = xp.asarray([1.0, 4.0], device="cpu")
    >>> np.sqrt(g).tolist(), np.add.outer(g, g).shape
    ([1.0, 2.0], (2, 2))
    """
    checked = inputs[:1] + inputs[2:] if method in ("at", "reduceat") else inputs
    outs = kwargs.get("out") or ()
    if not all(_operand_ok(x) for x in checked) or not all(o is None or isinstance(o, (GpuArray, np.ndarray))
                                                          for o in outs):
        return NotImplemented
    if method == "__call__":
        return _call(ufunc, inputs, kwargs, self)
    if method == "outer":
        return _outer(ufunc, inputs, kwargs, self)
    device = _device_from(tuple(inputs) + tuple(outs), self)
    impl = METHODS.get((ufunc.__name__, method))
    if impl is not None:
        result = impl(ufunc, inputs, kwargs)
        if result is not _FALLBACK:
            return result
    return host_ufunc(ufunc, method, inputs, kwargs, device)
