"""NumPy protocols on GpuArray: ``__array_ufunc__``, ``__array_function__``, DLPack, ``get()``.

NumPy code that is handed a GpuArray keeps working and keeps its data on the
device where gpuarray can do the work:

- ufunc calls (``np.exp(g)``, ``np.add(g, a, out=..., where=..., dtype=...)``,
  ``np.multiply.outer(g, h)``) map through ``_ops.UFUNC_TO_OP`` onto the op
  table and are recorded lazily, so they fuse like ``xp.exp(g)``. Dtypes follow
  NumPy (``ufunc.resolve_dtypes``, Python scalars weak), not the stricter Array
  API: ``np.exp(int32)`` is float64, ``np.add(bool, bool)`` is a logical or.
  float16, which gpuarray does not have, is computed as float32.
- NumPy functions (``np.transpose``, ``np.where``, ``np.clip``, ``np.zeros_like``,
  ``np.asarray(x, like=g)`` ...) are adapted onto the gpuarray namespace.
- Everything else runs on the host: GpuArray arguments are copied to NumPy,
  the NumPy function runs, and array results come back as GpuArrays on the
  caller's device. Each such host fallback is counted in
  ``metrics()["host_fallbacks"]`` and, by default, warned about once per
  function (``gpuarray.config(fallback="warn" | "silent" | "raise")``).

Device implementations plug in by name: ``register_ufunc_method("add",
"reduce", impl)`` and ``register_function(np.sum, impl)``; the built-in
adapters for reductions (``np.sum``, ``np.add.reduce`` ...) use the gpuarray
function of that name as soon as the namespace has it.

>>> import numpy as np, gpuarray as xp
>>> g = xp.asarray([1, 2, 3], device="cpu")
>>> type(np.exp(g)).__name__, np.exp(g).dtype
('GpuArray', dtype('float64'))
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import _config, _dtypes, _elementwise, _metrics
from ._config import HostFallbackError, HostFallbackWarning
from ._devices import Device, as_device
from ._elementwise import apply, common_device
from ._ops import OPS, UFUNC_TO_OP
from .graph.shapes import broadcast_shapes

_FALLBACK: Any = object()       # an adapter's answer: "I cannot do this one; run it on the host"
_NOVALUE: Any = np._NoValue     # NumPy's marker for keyword arguments that were not given
_SCALARS = (bool, int, float, complex)
def _ga() -> Any:
    """The GpuArray class (bound late: _array.py imports this module)."""
    return _elementwise._array_cls()


def _xp(name: str) -> Any:
    """The gpuarray namespace function ``name``, or None while gpuarray has none."""
    return getattr(importlib.import_module("gpuarray"), name, None)


# ============================================================ host fallback
_warned: set[str] = set()
_warned_lock = threading.Lock()
_SKIP_DIRS = (os.path.dirname(os.path.abspath(__file__)) + os.sep,
              os.path.dirname(os.path.abspath(np.__file__)) + os.sep)


def _stacklevel() -> int:
    """Stack level of the first frame outside gpuarray and NumPy (where the user called NumPy)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_SKIP_DIRS):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def reset_fallback_warnings() -> None:
    """Forget which functions were warned about, so each warns once again."""
    with _warned_lock:
        _warned.clear()


def note_fallback(name: str, detail: str = "") -> None:
    """Account for one host fallback of ``name``: raise, or count (and warn once per ``name``).

    ``detail`` narrows the message, e.g. " for the loop (complex128, complex128) -> complex128"."""
    what = f"{name} has no device implementation in gpuarray{detail}"
    mode = _config.get("fallback")
    if mode == "raise":
        raise HostFallbackError(
            f"{what}; it would run on the host with NumPy, which config(fallback='raise') forbids. "
            "Use config(fallback='warn') or 'silent' to allow it, or convert with .get() / np.asarray() yourself")
    _metrics.add("host_fallbacks")
    if mode == "warn":
        with _warned_lock:
            first = name not in _warned
            _warned.add(name)
        if first:
            warnings.warn(HostFallbackWarning(
                f"{what}; it ran on the host with NumPy (data copied to the host and back). This warning "
                "is shown once per function; gpuarray.config(fallback='silent') hides it, 'raise' makes "
                "it an error"), stacklevel=_stacklevel())


def _first_array(obj: Any) -> Any:
    """The first GpuArray in ``obj`` (searching lists, tuples and dict values), or None."""
    GA = _ga()
    if isinstance(obj, GA):
        return obj
    if isinstance(obj, (list, tuple)):
        for o in obj:
            found = _first_array(o)
            if found is not None:
                return found
    elif isinstance(obj, dict):
        return _first_array(list(obj.values()))
    return None


def _has_array(obj: Any) -> bool:
    return _first_array(obj) is not None


def _only_empty(obj: Any) -> bool:
    """True when ``obj`` holds GpuArrays and all of them are empty (no data moves: dask's meta calls)."""
    GA = _ga()
    if isinstance(obj, GA):
        return obj.size == 0
    if isinstance(obj, (list, tuple)):
        items = [o for o in obj if _has_array(o)]
        return bool(items) and all(_only_empty(o) for o in items)
    if isinstance(obj, dict):
        return _only_empty(list(obj.values()))
    return False


class _ToHost:
    """Replaces GpuArrays by host arrays; writable copies are written back to their GpuArray after the call."""

    def __init__(self) -> None:
        self.writable: list[tuple[Any, np.ndarray]] = []

    def __call__(self, x: Any, writable: bool = False) -> Any:
        GA = _ga()
        if isinstance(x, GA):
            if writable:
                host = np.array(x._host(), copy=True)
                self.writable.append((x, host))
                return host
            return x._host()              # read-only, no copy when the data is on the host already
        if isinstance(x, (list, tuple)) and _has_array(x):
            items = [self(v, writable) for v in x]
            if isinstance(x, list):
                return items
            return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
        return x

    def write_back(self) -> dict[int, Any]:
        """Rebind each written GpuArray to its new host contents; map host copy id -> GpuArray."""
        from .graph.node import leaf
        back = {}
        for g, host in self.writable:
            g._node = leaf(np.array(host, copy=True), g.device)
            back[id(host)] = g
        return back


def _supported(dtype: np.dtype, device: Device) -> bool:
    return dtype in _dtypes.ALL_DTYPES and device.supports(dtype)


def _to_device(r: Any, device: Device, back: dict[int, Any]) -> Any:
    """Array results of a host call as GpuArrays on ``device`` (others, and unsupported dtypes, unchanged)."""
    if id(r) in back:
        return back[id(r)]
    if type(r) is np.ndarray or isinstance(r, np.generic):
        if not _supported(r.dtype, device):
            return r
        from .namespace.creation import asarray
        return asarray(np.asarray(r), device=device)
    if isinstance(r, list):
        return [_to_device(v, device, back) for v in r]
    if isinstance(r, tuple):
        items = [_to_device(v, device, back) for v in r]
        return type(r)(*items) if hasattr(r, "_fields") else tuple(items)
    return r


_SIGNATURES: dict[Any, inspect.Signature | None] = {}


def _signature(func: Any) -> inspect.Signature | None:
    if func not in _SIGNATURES:
        try:
            _SIGNATURES[func] = inspect.signature(func)
        except (TypeError, ValueError):
            _SIGNATURES[func] = None
    return _SIGNATURES[func]


def _func_name(func: Any) -> str:
    module = getattr(func, "__module__", None) or "numpy"
    return f"{module}.{getattr(func, '__name__', repr(func))}"


# NumPy functions that write into an argument (besides ``out``): name -> that parameter.
_MUTATES: dict[str, str] = {
    "copyto": "dst", "put": "a", "place": "arr", "putmask": "a", "fill_diagonal": "a", "put_along_axis": "arr",
}


def _written(func: Any, nargs: int) -> tuple[set[int], set[str]]:
    """Positions and keywords of the arguments ``func`` writes into (``out`` and the mutated operand)."""
    names = {"out", _MUTATES.get(getattr(func, "__name__", ""), "out")}
    sig = _signature(func)
    params = list(sig.parameters) if sig is not None else []
    return {i for i, n in enumerate(params[:nargs]) if n in names}, names


def host_function(func: Callable[..., Any], args: tuple, kwargs: dict, device: Device) -> Any:
    """Run a NumPy function on host copies of its GpuArray arguments; results back on ``device``.
    Calls on empty arrays only (metadata, e.g. dask's ``_meta``) move no data and are not counted."""
    if not _only_empty((args, kwargs)):
        note_fallback(_func_name(func))
    positions, keywords = _written(func, len(args))
    conv = _ToHost()
    hargs = [conv(a, writable=i in positions) for i, a in enumerate(args)]
    hkwargs = {k: conv(v, writable=k in keywords) for k, v in kwargs.items()}
    result = func(*hargs, **hkwargs)
    return _to_device(result, device, conv.write_back())


def host_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict, device: Device,
               detail: str = "") -> Any:
    """Run a ufunc method on the host; outputs and ``ufunc.at``'s operand are written back."""
    name = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    if not _only_empty((inputs, kwargs)):
        note_fallback(name, detail)
    conv = _ToHost()
    hinputs = [conv(x, writable=method == "at" and i == 0) for i, x in enumerate(inputs)]
    hkwargs = {k: conv(v, writable=k == "out") for k, v in kwargs.items()}
    result = getattr(ufunc, method)(*hinputs, **hkwargs)
    return _to_device(result, device, conv.write_back())


# ============================================================ __array_ufunc__
def _map_dtype(dt: np.dtype, device: Device) -> np.dtype | None:
    """The dtype gpuarray computes a NumPy loop dtype in: itself, float32 for float16 (and for
    float64 on a device without it); None when gpuarray has no such dtype (complex, object ...)."""
    if dt in _dtypes.ALL_DTYPES:
        if device.supports(dt):
            return dt
        return _dtypes.float32 if dt.kind == "f" else None
    if dt == np.float16:
        return _dtypes.float32
    return None


def _probe(x: Any) -> Any:
    """A stand-in with the same NumPy dtype semantics: 0-d arrays for arrays, scalars as they are."""
    if isinstance(x, (_ga(), np.ndarray)):
        return np.zeros((), x.dtype)
    return x


def _py_scalar(x: Any, dt: np.dtype) -> Any:
    """A scalar operand converted to ``dt`` as NumPy would, as a Python scalar (a weak uniform)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(x).astype(dt)[()].item()


def _prepare(operands: tuple, dt: np.dtype, device: Device) -> list[Any]:
    """Operands as GpuArrays in compute dtype ``dt``: cast lazily, NumPy arrays uploaded, scalars as uniforms."""
    GA = _ga()
    from .namespace.creation import asarray, full
    out: list[Any] = []
    for x in operands:
        if isinstance(x, GA):
            out.append(x if x.dtype == dt else x.astype(dt))
        elif isinstance(x, np.ndarray) and x.ndim > 0:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(asarray(x.astype(dt), device=device))
        else:                        # a 0-d constant: it reaches kernels as a uniform
            out.append(full((), _py_scalar(x, dt), dtype=dt, device=device))
    return out


def _compute_dtype(loop: np.dtype, category: str) -> np.dtype | None:
    """The dtype an op of ``category`` computes a NumPy loop of dtype ``loop`` in (None: it cannot)."""
    if _dtypes.in_category(loop, category):
        return loop
    if loop == _dtypes.bool_ and _dtypes.in_category(_dtypes.int8, category):
        return _dtypes.int8         # bool loops of numeric ops: add is or, multiply is and ...
    if category == "bool":
        return _dtypes.bool_        # logical ops of numbers: nonzero is True
    return None


# ufuncs that are not one op-table entry but a few of them: name -> (dtype category, impl).
# Each impl gets operands already in one compute dtype and returns one GpuArray per ufunc output.
# divmod is here because an op-table entry has one result and divmod has two (it is floor_divide
# and remainder, two ops of one fused kernel); clip because numpy.clip's ufunc takes optional bounds.
# Every other ufunc is one op-table entry (fmax, heaviside, deg2rad, float_power ...: _ops.py).
COMPOSED: dict[str, tuple[str, Callable[..., tuple]]] = {
    "divmod": ("real numeric", lambda a, b: (apply(OPS["floor_divide"], a, b), apply(OPS["remainder"], a, b))),
    "clip": ("real numeric", lambda x, lo, hi: (
        apply(OPS["minimum"], apply(OPS["maximum"], x, lo), hi),)),
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
        if isinstance(x, (_ga(), np.ndarray, np.generic)):
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


_ALLOWED_KW = {"out", "where", "dtype", "casting", "order", "subok", "signature"}


def _check_kwargs(name: str, kwargs: dict) -> None:
    if kwargs.get("signature") is not None:
        raise TypeError(f"numpy.{name}: the signature= keyword is not supported for GpuArrays; "
                        "use dtype= to choose the computation dtype")
    order = kwargs.get("order")
    if order not in (None, "K", "A", "C"):
        raise ValueError(f"numpy.{name}: order={order!r} is not supported for GpuArrays (they have no "
                         "memory layout; results are always C-ordered); use order='K' or 'C'")


def _device_from(objs: tuple, fallback: Any) -> Device:
    GA = _ga()
    arrays = [x for x in objs if isinstance(x, GA)]
    if not arrays:
        return fallback.device if isinstance(fallback, GA) else as_device(None)
    return common_device(arrays)


def _mask(where: Any, device: Device) -> Any:
    GA = _ga()
    from .namespace.creation import asarray
    m = where if isinstance(where, GA) else asarray(np.asarray(where), device=device)
    return m if m.dtype == _dtypes.bool_ else m.astype(_dtypes.bool_)


def _store(results: list[Any], outs: tuple, where: Any, device: Device, name: str) -> Any:
    """Write results into ``out`` operands (honouring ``where``); return what NumPy would return."""
    GA = _ga()
    from .namespace.manipulation import broadcast_to
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


def _call(ufunc: np.ufunc, inputs: tuple, kwargs: dict, self: Any) -> Any:
    """``ufunc(*inputs, **kwargs)`` recorded lazily on the device when gpuarray has the op."""
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
    # NumPy itself validates operands, dtype=, casting= and out dtypes (and raises its own errors)
    probe_kw = {k: v for k, v in kwargs.items() if k in ("dtype", "casting")}
    probe_kw["out"] = tuple(None if o is None else np.zeros((), o.dtype) for o in outs)
    if "where" in kwargs:
        probe_kw["where"] = _probe(where)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ufunc(*(_probe(x) for x in inputs), **probe_kw)
    impl = _device_ufunc(name)
    loop = _loop_dtypes(ufunc, inputs, kwargs.get("dtype"), kwargs.get("casting")) if impl is not None else None
    if impl is None or loop is None:
        detail = "" if impl is None else " for these operand dtypes"
        return host_ufunc(ufunc, "__call__", inputs, kwargs, device, detail)
    category, fn = impl
    mapped = [_map_dtype(d, device) for d in loop]
    ins = set(mapped[:ufunc.nin])
    first = ins.pop() if len(ins) == 1 else None
    ct = None if first is None else _compute_dtype(first, category)
    if ct is None or any(m is None for m in mapped):
        loop_text = f"({', '.join(map(str, loop[:ufunc.nin]))}) -> {', '.join(map(str, loop[ufunc.nin:]))}"
        return host_ufunc(ufunc, "__call__", inputs, kwargs, device, f" for the loop {loop_text}")
    results = list(fn(*_prepare(inputs, ct, device)))
    for i, want in enumerate(mapped[ufunc.nin:]):
        if results[i].dtype != want:
            results[i] = results[i].astype(want)
    return _store(results, outs, where, device, name)


def _gufunc(ufunc: np.ufunc, inputs: tuple, kwargs: dict, device: Device) -> Any:
    """matmul / vecdot through the namespace function (once it exists), in NumPy's result dtype."""
    fn = _xp(GUFUNCS.get(ufunc.__name__, ""))
    if fn is None or set(kwargs) - {"subok", "order"}:
        return host_ufunc(ufunc, "__call__", inputs, kwargs, device)
    arrays = [x if isinstance(x, (_ga(), np.ndarray)) else np.asarray(x) for x in inputs]
    with np.errstate(all="ignore"):
        want = ufunc(*(np.zeros((1,) * x.ndim, x.dtype) for x in arrays)).dtype
    mw = _map_dtype(want, device)
    if mw is None or mw == _dtypes.bool_:
        return host_ufunc(ufunc, "__call__", inputs, kwargs, device, f" for {want} results")
    return fn(*(a if a.dtype == mw else a.astype(mw) for a in (_as_array(x, device) for x in arrays)))


def _ndim(x: Any) -> int:
    return int(x.ndim) if isinstance(x, (_ga(), np.ndarray)) else 0


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
    ``_interop._FALLBACK`` to let this call run on the host."""
    METHODS[(ufunc_name, method)] = impl


def _namespace_reduction(xp_name: str, accumulate: bool = False) -> Callable[..., Any]:
    """``ufunc.reduce`` / ``accumulate`` through the namespace function ``xp_name`` (once it exists)."""
    def impl(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
        (a,) = inputs
        fn = _xp(xp_name)
        outs = tuple(kwargs.get("out") or ())
        if (fn is None or not isinstance(a, _ga()) or a.size == 0 or set(kwargs) - {"axis", "dtype", "keepdims", "out"}
                or not all(isinstance(o, _ga()) and o.device == a.device for o in outs)):
            return _FALLBACK
        axis, dtype = kwargs.get("axis", 0), kwargs.get("dtype")
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
        r = r if r.dtype == mw else r.astype(mw)
        if outs:
            if outs[0].shape != r.shape:
                raise ValueError(f"output parameter for reduction operation {ufunc.__name__} has the wrong "
                                 f"shape: {outs[0].shape}; expected {r.shape}")
            return _store([r], outs, True, a.device, ufunc.__name__)
        return r
    return impl


for _uf, _xpn in (("add", "sum"), ("multiply", "prod"), ("maximum", "max"), ("minimum", "min"),
                  ("logical_and", "all"), ("logical_or", "any")):
    register_ufunc_method(_uf, "reduce", _namespace_reduction(_xpn))
for _uf, _xpn in (("add", "cumulative_sum"), ("multiply", "cumulative_prod")):
    register_ufunc_method(_uf, "accumulate", _namespace_reduction(_xpn, accumulate=True))


def _operand_ok(x: Any) -> bool:
    """Operands we handle; an ndarray subclass with its own ``__array_ufunc__`` gets its turn first."""
    if isinstance(x, np.ndarray):
        return type(x).__array_ufunc__ is np.ndarray.__array_ufunc__
    return isinstance(x, (_ga(), np.generic, list, tuple) + _SCALARS)


def array_ufunc(self: Any, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """``GpuArray.__array_ufunc__``: NumPy ufuncs on GpuArrays, recorded lazily on their device.

    >>> import numpy as np, gpuarray as xp
    >>> g = xp.asarray([1.0, 4.0], device="cpu")
    >>> np.sqrt(g).tolist(), np.add.outer(g, g).shape
    ([1.0, 2.0], (2, 2))
    """
    checked = inputs[:1] + inputs[2:] if method in ("at", "reduceat") else inputs
    outs = kwargs.get("out") or ()
    if not all(_operand_ok(x) for x in checked) or not all(o is None or isinstance(o, (_ga(), np.ndarray))
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


# ============================================================ __array_function__
# NumPy function -> impl(*args, **kwargs) taking NumPy's arguments; returns a result or _FALLBACK.
FUNCTIONS: dict[Any, Callable[..., Any]] = {}
# Creation functions reached through like= (np.asarray(x, like=g)): impl(like, *args, **kwargs).
LIKE: dict[Any, Callable[..., Any]] = {}


def register_function(numpy_func: Any, impl: Callable[..., Any]) -> None:
    """Plug in a device implementation of a NumPy function. ``impl`` takes NumPy's arguments and
    returns the result, or ``_interop._FALLBACK`` to let this call run on the host."""
    FUNCTIONS[numpy_func] = impl


def _bind(func: Any, args: tuple, kwargs: dict) -> dict[str, Any] | None:
    """NumPy's arguments by parameter name, defaults filled in (None if the signature is unknown)."""
    sig = _signature(func)
    if sig is None:
        return None
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{getattr(func, '__name__', func)}(): {exc}") from None
    bound.apply_defaults()
    return dict(bound.arguments)


def _implements(*names: str, like: bool = False) -> Callable[..., Any]:
    """Register ``impl(p)`` (``p``: the bound arguments) for the NumPy functions ``names``."""
    def deco(impl: Callable[..., Any]) -> Callable[..., Any]:
        for n in names:
            f = getattr(np, n, None)
            if f is None:
                continue
            if like:
                LIKE[f] = _with_like(f, impl)
            else:
                FUNCTIONS[f] = _with_params(f, impl)
        return impl
    return deco


def _with_params(f: Any, impl: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        p = _bind(f, args, kwargs)
        return _FALLBACK if p is None else impl(p)
    return call


def _with_like(f: Any, impl: Callable[..., Any]) -> Callable[..., Any]:
    def call(like: Any, *args: Any, **kwargs: Any) -> Any:
        p = _bind(f, args, kwargs)
        return _FALLBACK if p is None else impl(like, p)
    return call


def _as_array(x: Any, device: Device) -> Any:
    """A GpuArray on ``device`` for any array-like (NumPy's dtypes for Python data)."""
    if isinstance(x, _ga()):
        return x
    from .namespace.creation import asarray
    return asarray(np.asarray(x), device=device)


def _axes(axis: Any, ndim: int, name: str = "axis") -> tuple[int, ...]:
    return tuple(normalize_axis_tuple(axis, ndim, name))


def _given(*values: Any) -> bool:
    return any(v is not None and v is not _NOVALUE for v in values)


def _flag(value: Any) -> bool:
    return False if value is _NOVALUE else bool(value)


def _shape_arg(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)


def _permute(a: Any, axes: Any) -> Any:
    from .namespace.manipulation import permute_dims
    return permute_dims(a, tuple(range(a.ndim))[::-1] if axes is None else tuple(axes))


def _reshape_order(a: Any, shape: tuple[int, ...], order: Any, copy: Any = None) -> Any:
    from .namespace.manipulation import reshape
    if order == "F":
        return _permute(reshape(_permute(a, None), shape[::-1], copy=copy), None)
    if order not in ("C", "A", "K", None):
        raise ValueError(f"reshape: order must be 'C', 'F' or 'A'; got {order!r}")
    return reshape(a, shape, copy=copy)


@_implements("transpose", "permute_dims")
def _transpose(p: dict) -> Any:
    return _permute(p["a"], p["axes"])


@_implements("matrix_transpose")
def _matrix_transpose(p: dict) -> Any:
    return p["x"].mT


@_implements("reshape")
def _reshape(p: dict) -> Any:
    shape = p.get("shape")
    if shape is None or shape is _NOVALUE:
        shape = p.get("newshape")
    if shape is None or shape is _NOVALUE:
        raise TypeError("reshape() missing required argument 'shape' (pos 2)")
    return _reshape_order(p["a"], _shape_arg(shape), p.get("order", "C"), p.get("copy"))


@_implements("ravel")
def _ravel(p: dict) -> Any:
    return _reshape_order(p["a"], (-1,), "F" if p["order"] == "F" else "C")


@_implements("expand_dims")
def _expand_dims(p: dict) -> Any:
    from .namespace.manipulation import reshape
    a, axis = p["a"], p["axis"]
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    ndim = a.ndim + len(axes)
    axes = _axes(axes, ndim)
    rest = iter(a.shape)
    return reshape(a, tuple(1 if i in axes else next(rest) for i in range(ndim)))


@_implements("squeeze")
def _squeeze(p: dict) -> Any:
    from .namespace.manipulation import reshape
    a, axis = p["a"], p["axis"]
    if axis is None:
        return reshape(a, tuple(s for s in a.shape if s != 1))
    if a.ndim == 0:
        _axes(axis, 1)                   # NumPy takes axis 0 or -1 of a 0-d array
        return _ga()(a._node)
    axes = _axes(axis, a.ndim)
    if any(a.shape[i] != 1 for i in axes):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return reshape(a, tuple(s for i, s in enumerate(a.shape) if i not in axes))


@_implements("broadcast_to")
def _broadcast_to(p: dict) -> Any:
    from .namespace.manipulation import broadcast_to
    return broadcast_to(p["array"], _shape_arg(p["shape"]))


@_implements("broadcast_arrays")
def _broadcast_arrays(p: dict) -> Any:
    from .namespace.manipulation import broadcast_arrays
    args = p["args"]
    device = _first_array(args).device
    return tuple(broadcast_arrays(*(_as_array(a, device) for a in args)))


def _flip_axes(m: Any, axis: Any) -> Any:
    from .namespace.manipulation import flip
    return flip(m, axis=axis if axis is None else _axes(axis, m.ndim))


@_implements("flip")
def _flip(p: dict) -> Any:
    return _flip_axes(p["m"], p["axis"])


@_implements("fliplr")
def _fliplr(p: dict) -> Any:
    if p["m"].ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return _flip_axes(p["m"], 1)


@_implements("flipud")
def _flipud(p: dict) -> Any:
    if p["m"].ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return _flip_axes(p["m"], 0)


@_implements("moveaxis")
def _moveaxis(p: dict) -> Any:
    a = p["a"]
    src = _axes(p["source"], a.ndim, "source")
    dst = _axes(p["destination"], a.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _permute(a, order)


@_implements("swapaxes")
def _swapaxes(p: dict) -> Any:
    a = p["a"]
    (i,), (j,) = _axes(p["axis1"], a.ndim, "axis1"), _axes(p["axis2"], a.ndim, "axis2")
    order = list(range(a.ndim))
    order[i], order[j] = order[j], order[i]
    return _permute(a, order)


def _atleast_nd(n: int) -> Callable[..., Any]:
    def impl(p: dict) -> Any:
        from .namespace.manipulation import reshape
        arys = p["arys"]
        device = _first_array(arys).device
        out = []
        for a in arys:
            a = _as_array(a, device)
            s = a.shape
            if a.ndim == 0:
                s = (1,) * n
            elif a.ndim == 1 and n > 1:
                s = (1, s[0], 1)[:n]
            elif a.ndim == 2 and n == 3:
                s = s + (1,)
            out.append(reshape(a, s) if s != a.shape else a)
        return out[0] if len(out) == 1 else tuple(out)
    return impl


for _n in (1, 2, 3):
    _implements(f"atleast_{_n}d")(_atleast_nd(_n))


def _where(condition: Any, *xy: Any) -> Any:
    if not xy and isinstance(condition, _ga()):
        return np.nonzero(condition)  # np.where(c) is np.nonzero(c)
    if len(xy) != 2:
        return _FALLBACK
    x, y = xy
    device = _device_from((condition, x, y), None)
    with np.errstate(all="ignore"):
        dt = np.where(True, _probe(x), _probe(y)).dtype
    mdt = _map_dtype(dt, device)
    if mdt is None:
        return _FALLBACK
    cond = _as_array(condition, device)
    cond = cond if cond.dtype == _dtypes.bool_ else cond.astype(_dtypes.bool_)
    return apply(OPS["where"], cond, *_prepare((x, y), mdt, device))


FUNCTIONS[np.where] = _where         # positional-only in C: no signature binding needed


def _clip_ufunc() -> np.ufunc:
    return importlib.import_module("numpy._core.umath").clip  # the ufunc behind np.clip


@_implements("clip")
def _clip(p: dict) -> Any:
    a, kwargs = p["a"], dict(p.get("kwargs") or {})
    both = [(p["a_min"], p.get("min", _NOVALUE)), (p["a_max"], p.get("max", _NOVALUE))]
    if any(_given(x) and _given(y) for x, y in both):
        return _FALLBACK             # NumPy's own error for passing both spellings
    lo, hi = (x if _given(x) else (y if _given(y) else None) for x, y in both)
    if isinstance(a, _ga()) and a.dtype.kind in "iu":
        info = np.iinfo(a.dtype)         # NumPy clips with out-of-range Python ints instead of raising
        lo, hi = (min(max(v, info.min), info.max) if type(v) is int else v for v in (lo, hi))
    if p.get("out") is not None:
        kwargs["out"] = p["out"] if isinstance(p["out"], tuple) else (p["out"],)
    if lo is None and hi is None:
        return _ga()(a._node) if "out" not in kwargs and not isinstance(a, np.ndarray) else _FALLBACK
    if lo is None:
        return _call(np.minimum, (a, hi), kwargs, None)
    if hi is None:
        return _call(np.maximum, (a, lo), kwargs, None)
    return _call(_clip_ufunc(), (a, lo, hi), kwargs, None)


@_implements("copy")
def _copy(p: dict) -> Any:
    return _ga()(p["a"]._node)       # nodes are immutable: an array sharing the node is a copy


@_implements("astype")
def _astype(p: dict) -> Any:
    from .namespace.data_types import astype
    return astype(p["x"], np.dtype(p["dtype"]), copy=p["copy"], device=p.get("device"))


def _power_of_ten(n: int) -> float:
    """NumPy's ``power_of_ten`` (``numpy/_core/src/multiarray/calculation.c``), bit for bit."""
    if n < 9:
        return (1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)[n]
    ret = 1e9
    for _ in range(n - 9):
        ret *= 10.0
    return ret


@_implements("round", "around")
def _round(p: dict) -> Any:
    """NumPy's ``PyArray_Round``: ``rint(a * 10**d) / 10**d`` (``rint(a / 10**-d) * 10**-d`` for d < 0)
    in ``a``'s float dtype; integers are unchanged for d >= 0 and go through float64 for d < 0."""
    a, out = p["a"], p["out"]
    decimals = int(p["decimals"])
    if not isinstance(a, _ga()) or a.dtype.kind not in "fiu":
        return _FALLBACK
    if a.dtype.kind in "iu" and decimals >= 0:
        r = _ga()(a._node)
    else:
        x = a
        if a.dtype.kind in "iu":
            fdt = _map_dtype(_dtypes.float64, a.device)
            if fdt is None:
                return _FALLBACK
            x = a.astype(fdt)
        if decimals == 0:
            r = apply(OPS["round"], x)
        else:
            f = _power_of_ten(abs(decimals))
            op1, op2 = ("multiply", "divide") if decimals >= 0 else ("divide", "multiply")
            r = apply(OPS[op2], apply(OPS["round"], apply(OPS[op1], x, f)), f)
        if r.dtype != a.dtype:
            r = r.astype(a.dtype)
    return r if out is None else _into_out(r, out, "round")


@_implements("real")
def _real(p: dict) -> Any:
    v = p["val"]
    if not isinstance(v, _ga()):
        return _FALLBACK
    return apply(OPS["real"], v) if v.dtype.kind == "c" else _ga()(v._node)


@_implements("imag")
def _imag(p: dict) -> Any:
    from .namespace.creation import zeros
    v = p["val"]
    if not isinstance(v, _ga()):
        return _FALLBACK
    if v.dtype.kind == "c":
        return apply(OPS["imag"], v)
    return zeros(v.shape, dtype=v.dtype, device=v.device)


@_implements("shape")
def _shape(p: dict) -> tuple[int, ...]:
    return tuple(p["a"].shape)


@_implements("ndim")
def _ndim_fn(p: dict) -> int:
    return int(p["a"].ndim)


@_implements("size")
def _size(p: dict) -> int:
    a, axis = p["a"], p["axis"]
    return int(a.size) if axis is None else int(a.shape[_axes(axis, a.ndim)[0]])


@_implements("iscomplexobj")
def _iscomplexobj(p: dict) -> bool:
    return bool(p["x"].dtype.kind == "c")


@_implements("isrealobj")
def _isrealobj(p: dict) -> bool:
    return bool(p["x"].dtype.kind != "c")


def _plain(x: Any) -> Any:
    return x.dtype if isinstance(x, _ga()) else x


@_implements("result_type")
def _result_type(p: dict) -> np.dtype:
    return np.result_type(*(_plain(x) for x in p["arrays_and_dtypes"]))


@_implements("can_cast")
def _can_cast(p: dict) -> bool:
    return bool(np.can_cast(_plain(p["from_"]), _plain(p["to"]), casting=p["casting"]))


def _like_factory(kind: str) -> Callable[..., Any]:
    def impl(p: dict) -> Any:
        from .namespace.creation import full
        a = p["prototype"] if "prototype" in p else p["a"]
        dt = a.dtype if p["dtype"] is None else np.dtype(p["dtype"])
        dev = a.device if p.get("device") is None else as_device(p["device"])
        if dt.fields is not None:       # as CuPy does; dask then keeps (vals, arg) pairs in a dict
            raise TypeError(f"numpy.{kind}_like: gpuarray has no structured dtypes; got {dt}")
        if not _supported(dt, dev):
            return _FALLBACK
        shape = a.shape if p["shape"] is None else _shape_arg(p["shape"])
        fill = p["fill_value"] if kind == "full" else (1 if kind == "ones" else 0)
        if isinstance(fill, (np.ndarray, _ga())) and fill.ndim > 0:
            from .namespace.manipulation import broadcast_to
            return broadcast_to(_as_array(fill, dev).astype(dt), shape)
        if isinstance(fill, np.ndarray):
            fill = fill.item()
        return full(shape, fill, dtype=dt, device=dev)
    return impl


for _k in ("zeros", "ones", "empty", "full"):
    _implements(f"{_k}_like")(_like_factory(_k))


# ---- reductions, scans, sorting, joining: the namespace function of that name, once gpuarray has it
def _via(xp_name: str, a: Any, probe: Callable[[np.ndarray], Any], cast_input: bool = False,
         **kw: Any) -> Any:
    """Call ``gpuarray.<xp_name>(a, **kw)``; NumPy's result dtype comes from ``probe`` on a tiny array."""
    fn = _xp(xp_name)
    if fn is None or not isinstance(a, _ga()) or a.size == 0:
        return _FALLBACK
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(probe(np.zeros((1,) * a.ndim, a.dtype))).dtype
    mw = _map_dtype(want, a.device)
    if mw is None:
        return _FALLBACK
    if cast_input and a.dtype != mw:
        a = a.astype(mw)
    if "dtype" in kw:
        kw["dtype"] = mw
    r = fn(a, **kw)
    return r if r.dtype == mw else r.astype(mw)


def _axis_arg(axis: Any) -> Any:
    return axis if axis is None or isinstance(axis, (int, np.integer)) else tuple(axis)


def _into_out(r: Any, out: Any, name: str) -> Any:
    """NumPy's ``out=`` of a reduction or scan: same shape, any dtype (cast 'unsafe'); returns ``out``."""
    GA = _ga()
    o = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if not isinstance(o, (GA, np.ndarray)):
        return _FALLBACK              # NumPy raises its own TypeError on the host
    if o.shape != r.shape:
        raise ValueError(f"output parameter for reduction operation {name} has the wrong shape: "
                         f"{o.shape}; expected {r.shape}")
    if isinstance(o, GA):
        if o.device != r.device:
            raise ValueError(f"numpy.{name}: out is on {o.device.name} but the operand is on {r.device.name}; "
                             "move one with to_device() first")
        o._node = (r if r.dtype == o.dtype else r.astype(o.dtype))._node
    else:
        with np.errstate(all="ignore"):
            np.copyto(o, np.asarray(r), casting="unsafe")
    return o


def _where_mask(where: Any, a: Any) -> Any:
    """``where=`` as a bool GpuArray broadcast to ``a``'s shape; None when it does not broadcast (NumPy raises)."""
    from .namespace.manipulation import broadcast_to
    m = _mask(where, a.device)
    try:
        if broadcast_shapes(m.shape, a.shape) != a.shape:
            return None
    except ValueError:
        return None
    return broadcast_to(m, a.shape)


_IDENTITY = {"sum": 0, "prod": 1, "all": True, "any": False}


def _reduction(np_name: str, xp_name: str, cast_input: bool = False) -> None:
    """``numpy.<np_name>`` with NumPy's dtype rules, ``out``, ``where``, ``initial`` and ``ddof``, on the device:
    ``where`` masks the operand with the reduction's identity (``initial`` for max/min) inside the
    reduction's prologue, ``initial`` is combined with the result, ``out`` receives a cast copy."""
    npf = getattr(np, np_name)
    ufunc_name = {"sum": "add", "prod": "multiply", "max": "maximum", "amax": "maximum", "min": "minimum",
                  "amin": "minimum", "all": "logical_and", "any": "logical_or"}.get(np_name, np_name)

    def impl(p: dict) -> Any:
        from .namespace.creation import full
        a, out, where, initial = p["a"], p.get("out"), p.get("where", True), p.get("initial", _NOVALUE)
        fn = _xp(xp_name)
        if fn is None or not isinstance(a, _ga()) or _given(p.get("mean")):
            return _FALLBACK
        axis, keepdims = p["axis"], _flag(p.get("keepdims", False))
        masked = where is not True and where is not _NOVALUE
        probe_kw = {k: p[k] for k in ("dtype", "ddof", "correction") if _given(p.get(k))}
        if _given(initial):
            probe_kw["initial"] = initial
        if masked:
            probe_kw["where"] = np.ones((1,) * a.ndim, bool)
        with np.errstate(all="ignore"), warnings.catch_warnings():   # NumPy checks the arguments, gives the dtype
            warnings.simplefilter("ignore")
            want = np.asarray(npf(np.zeros((1,) * a.ndim, a.dtype), axis=axis, keepdims=keepdims,
                                  **probe_kw)).dtype
        mw = _map_dtype(want, a.device)
        m = _where_mask(where, a) if masked else None
        if mw is None or (masked and m is None):
            return _FALLBACK
        x = a.astype(mw) if cast_input and a.dtype != mw else a
        ax = None if axis is None else tuple(v for v in _axes(axis, max(a.ndim, 1)) if v < a.ndim)  # 0-d: 0, -1
        kw: dict[str, Any] = {"axis": ax, "keepdims": keepdims}
        init = _py_scalar(initial, mw) if _given(initial) else None
        kind = xp_name
        if kind in ("sum", "prod"):
            kw["dtype"] = mw
        if kind in ("all", "any") and x.dtype != _dtypes.bool_:
            x = x.astype(_dtypes.bool_)
        if kind in ("mean", "var", "std") and m is not None:
            r = _masked_moment(x, m, kind, ax, keepdims, p)
        else:
            if m is not None:
                fill = init if kind in ("max", "min") else _IDENTITY[kind]
                x = apply(OPS["where"], m, x, full((), _py_scalar(fill, x.dtype), dtype=x.dtype, device=x.device))
            if kind in ("var", "std"):
                kw["correction"] = p["correction"] if _given(p.get("correction")) else p["ddof"]
            if kind in ("max", "min") and init is not None and 0 in x.shape:
                shape = np.zeros(x.shape, bool).sum(axis=ax, keepdims=keepdims).shape
                r = full(shape, init, dtype=mw, device=x.device)
            else:
                r = fn(x, **kw)
            if init is not None:
                combine = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}[kind]
                r = apply(OPS[combine], r, init)
        r = r if r.dtype == mw else r.astype(mw)
        return r if out is None else _into_out(r, out, ufunc_name)
    _implements(np_name)(impl)


def _masked_moment(x: Any, m: Any, kind: str, axis: Any, keepdims: bool, p: dict) -> Any:
    """mean / var / std of ``x`` over ``axis`` counting only where ``m`` is true (NumPy's ``where=``)."""
    from .namespace.creation import zeros
    from .namespace.manipulation import reshape
    from .namespace.statistical import sum as xsum
    zero = zeros((), dtype=x.dtype, device=x.device)
    count = xsum(m, axis=axis, keepdims=True).astype(x.dtype)
    mean = apply(OPS["divide"], xsum(apply(OPS["where"], m, x, zero), axis=axis, keepdims=True), count)
    shape = mean.shape if keepdims else xsum(m, axis=axis).shape
    if kind == "mean":
        return reshape(mean, shape)
    d = apply(OPS["subtract"], x, mean)
    ss = xsum(apply(OPS["where"], m, apply(OPS["multiply"], d, d), zero), axis=axis, keepdims=keepdims)
    ddof = p["correction"] if _given(p.get("correction")) else p["ddof"]
    dof = apply(OPS["maximum"], apply(OPS["subtract"], reshape(count, shape), ddof), 0)
    var = apply(OPS["divide"], ss, dof)
    return var if kind == "var" else apply(OPS["sqrt"], var)


for _np_name, _xp_name, _cast in (
        ("sum", "sum", False), ("prod", "prod", False), ("max", "max", False), ("amax", "max", False),
        ("min", "min", False), ("amin", "min", False), ("all", "all", False), ("any", "any", False),
        ("mean", "mean", True), ("std", "std", True), ("var", "var", True)):
    _reduction(_np_name, _xp_name, _cast)


def _arg_reduction(np_name: str) -> None:
    npf = getattr(np, np_name)

    def impl(p: dict) -> Any:
        axis, keepdims, out = p["axis"], _flag(p.get("keepdims", False)), p["out"]
        r = _via(np_name, p["a"], lambda z: npf(z, axis=axis, keepdims=keepdims), axis=axis, keepdims=keepdims)
        return r if r is _FALLBACK or out is None else _into_out(r, out, np_name)
    _implements(np_name)(impl)


for _np_name in ("argmax", "argmin"):
    _arg_reduction(_np_name)


def _scan(np_name: str, xp_name: str) -> None:
    npf = getattr(np, np_name)

    def impl(p: dict) -> Any:
        a, axis, dtype, out = p["a"], p["axis"], p["dtype"], p["out"]
        if _xp(xp_name) is None or not isinstance(a, _ga()):
            return _FALLBACK
        if axis is None or a.ndim == 0:
            if a.ndim == 0:
                _axes(axis if axis is not None else 0, 1)         # NumPy takes axis 0 or -1 of a 0-d array
            a, axis = _reshape_order(a, (-1,), "C"), 0
        if a.size == 0:
            return _FALLBACK
        r = _via(xp_name, a, lambda z: npf(z, axis=axis, dtype=dtype), axis=axis, dtype=None)
        return r if r is _FALLBACK or out is None else _into_out(r, out, np_name)
    _implements(np_name)(impl)


_scan("cumsum", "cumulative_sum")
_scan("cumprod", "cumulative_prod")


def _sorting(np_name: str) -> None:
    npf = getattr(np, np_name)

    def impl(p: dict) -> Any:
        a, axis = p["a"], p["axis"]
        if p["order"] is not None or _xp(np_name) is None or not isinstance(a, _ga()):
            return _FALLBACK
        if axis is None:
            a, axis = _reshape_order(a, (-1,), "C"), 0
        return _via(np_name, a, lambda z: npf(z, axis=axis), axis=axis)
    _implements(np_name)(impl)


_sorting("sort")
_sorting("argsort")


def _joining(np_name: str, xp_name: str) -> None:
    npf = getattr(np, np_name)

    def impl(p: dict) -> Any:
        arrays = p["arrays"]
        fn = _xp(xp_name)
        if fn is None or p["out"] is not None or not isinstance(arrays, (list, tuple)) or not arrays:
            return _FALLBACK
        arrays = [x if isinstance(x, (_ga(), np.ndarray)) else np.asarray(x) for x in arrays]
        device = _device_from(tuple(arrays), None)
        with np.errstate(all="ignore"):
            want = npf([np.zeros((1,) * x.ndim, x.dtype) for x in arrays],
                       dtype=p["dtype"], casting=p["casting"]).dtype
        mw = _map_dtype(want, device)
        if mw is None:
            return _FALLBACK
        parts = [_as_array(x, device) for x in arrays]
        return fn([x if x.dtype == mw else x.astype(mw) for x in parts], axis=p["axis"])
    _implements(np_name)(impl)


_joining("concatenate", "concat")
_joining("stack", "stack")


@_implements("dot")
def _dot(p: dict) -> Any:
    a, b = p["a"], p["b"]
    if p["out"] is not None or _ndim(a) not in (1, 2) or _ndim(b) not in (1, 2):
        return _FALLBACK             # np.dot of N-d arrays is not matmul; 0-d is a product
    return _call(np.matmul, (a, b), {}, None)


@_implements("tensordot")
def _tensordot(p: dict) -> Any:
    a, b, axes = p["a"], p["b"], p["axes"]
    fn = _xp("tensordot")
    if fn is None:
        return _FALLBACK
    device = _device_from((a, b), None)
    arrays = [x if isinstance(x, (_ga(), np.ndarray)) else np.asarray(x) for x in (a, b)]
    want = np.result_type(*(x.dtype for x in arrays))
    mw = _map_dtype(want, device)
    if mw is None or mw == _dtypes.bool_:
        return _FALLBACK
    x1, x2 = (g if g.dtype == mw else g.astype(mw) for g in (_as_array(x, device) for x in arrays))
    return fn(x1, x2, axes=axes if isinstance(axes, (int, np.integer)) else tuple(tuple(v) for v in axes))


# ---- like=: creation functions called as np.asarray(x, like=g), np.zeros(3, like=g) ...
def _like_device(like: Any, device: Any) -> Device:
    return like.device if device is None else as_device(device)


@_implements("asarray", "asanyarray", "array", "require", like=True)
def _asarray_like(like: Any, p: dict) -> Any:
    from .namespace.creation import asarray
    from .namespace.manipulation import reshape
    a = p["a"] if "a" in p else p["object"]
    device = p.get("device")
    dev = a.device if isinstance(a, _ga()) and device is None else _like_device(like, device)
    dtype = None if p.get("dtype") is None else np.dtype(p["dtype"])
    r = asarray(a if isinstance(a, _ga()) else np.asarray(a), dtype=dtype, device=dev, copy=p.get("copy"))
    ndmin = p.get("ndmin", 0)
    return reshape(r, (1,) * (ndmin - r.ndim) + r.shape) if r.ndim < ndmin else r


@_implements("ascontiguousarray", "asfortranarray", like=True)
def _ascontiguous_like(like: Any, p: dict) -> Any:
    from .namespace.manipulation import reshape
    r = _asarray_like(like, p)
    return reshape(r, (1,)) if r.ndim == 0 else r         # NumPy: "ndim >= 1"


def _default_float(dtype: Any, device: Device) -> np.dtype:
    if dtype is not None:
        return np.dtype(dtype)
    return _dtypes.float64 if device.supports(_dtypes.float64) else device.default_float


def _filled(kind: str) -> Callable[..., Any]:
    def impl(like: Any, p: dict) -> Any:
        from .namespace.creation import full
        dev = _like_device(like, p.get("device"))
        fill = p["fill_value"] if kind == "full" else (1 if kind == "ones" else 0)
        if kind == "full" and p["dtype"] is None:
            dt = np.asarray(fill).dtype
            dt = _map_dtype(dt, dev) or dt
        else:
            dt = _default_float(p["dtype"], dev)
        if isinstance(fill, np.ndarray) and fill.ndim == 0:
            fill = fill.item()
        if isinstance(fill, (np.ndarray, list, tuple)):
            from .namespace.manipulation import broadcast_to
            return broadcast_to(_as_array(fill, dev).astype(dt), _shape_arg(p["shape"]))
        return full(p["shape"], fill, dtype=dt, device=dev)
    return impl


for _k in ("zeros", "ones", "empty", "full"):
    _implements(_k, like=True)(_filled(_k))


@_implements("arange", like=True)
def _arange_like(like: Any, p: dict) -> Any:
    from .namespace.creation import arange
    start = p["start_or_stop"]
    step = 1 if p["step"] is None else p["step"]
    dtype = None if p["dtype"] is None else np.dtype(p["dtype"])
    return arange(start, p["stop"], step, dtype=dtype, device=_like_device(like, p.get("device")))


@_implements("eye", like=True)
def _eye_like(like: Any, p: dict) -> Any:
    from .namespace.creation import eye
    dev = _like_device(like, p.get("device"))
    return eye(p["N"], p["M"], k=p["k"], dtype=_default_float(p["dtype"], dev), device=dev)


@_implements("identity", like=True)
def _identity_like(like: Any, p: dict) -> Any:
    from .namespace.creation import eye
    dev = like.device
    return eye(p["n"], dtype=_default_float(p["dtype"], dev), device=dev)


def array_function(self: Any, func: Any, types: Any, args: tuple, kwargs: dict) -> Any:
    """``GpuArray.__array_function__``: NumPy functions on GpuArrays.

    Functions gpuarray has run on the device; others run on the host (counted,
    warned once per function, see ``gpuarray.config``) with results brought back.

    >>> import numpy as np, gpuarray as xp
    >>> g = xp.asarray([[1, 2, 3]], device="cpu")
    >>> np.transpose(g).shape, type(np.squeeze(g)).__name__
    ((3, 1), 'GpuArray')
    """
    GA = _ga()
    if not all(issubclass(t, (GA, np.ndarray)) for t in types):
        return NotImplemented
    like = LIKE.get(func)
    if like is not None:
        result = like(self, *args, **kwargs)
    else:
        impl = FUNCTIONS.get(func)
        result = _FALLBACK if impl is None else impl(*args, **kwargs)
    if result is not _FALLBACK:
        return result
    first = _first_array((args, kwargs))
    return host_function(func, args, kwargs, (first if first is not None else self).device)


# ============================================================ conversions: get(), DLPack
KDL_CPU = 1
KDL_WEBGPU = 15


def get(self: Any, stream: Any = None, order: str = "C", out: np.ndarray | None = None,
        blocking: bool = True) -> np.ndarray:
    """A host copy as a NumPy array (CuPy's ``get``); ``out`` receives it in place.

    >>> import gpuarray as xp
    >>> xp.asarray([1, 2], device="cpu").get()
    array([1, 2])
    """
    if stream is not None:
        raise ValueError("get: streams are not supported; pass stream=None")
    host = self._host()
    if out is None:
        return np.array(host, order=order, copy=True)  # type: ignore[call-overload]
    if not isinstance(out, np.ndarray):
        raise TypeError(f"get: out must be a numpy.ndarray; got {type(out).__name__}")
    if out.shape != self.shape:
        raise ValueError(f"get: out has shape {out.shape}; expected {self.shape}")
    if out.dtype != self.dtype:
        raise TypeError(f"get: out has dtype {out.dtype}; expected {self.dtype}")
    np.copyto(out, host)
    return out


def dlpack_device(self: Any) -> tuple[int, int]:
    """``__dlpack_device__``: (kDLCPU, 0) on the cpu device, (kDLWebGPU, N) on wgpu:N."""
    dev = self.device
    return (KDL_CPU, 0) if dev.kind == "cpu" else (KDL_WEBGPU, dev.index)


def dlpack(self: Any, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
           copy: bool | None = None) -> Any:
    """``__dlpack__``: export for ``np.from_dlpack`` and other consumers.

    The cpu device exports its (read-only) host array without a copy. A wgpu
    array can only be exported as a host copy: ``copy=True`` or
    ``dl_device=(1, 0)`` (kDLCPU); no DLPack consumer reads WebGPU buffers.
    """
    kw: dict[str, Any] = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                              ("dl_device", dl_device), ("copy", copy)) if v is not None}
    if self.device.kind != "cpu":
        to_cpu = dl_device is not None and tuple(dl_device) == (KDL_CPU, 0)
        if dl_device is not None and not to_cpu:
            raise BufferError(f"__dlpack__: gpuarray cannot export {self.device.name} memory to DLPack device "
                              f"{tuple(dl_device)}: no DLPack consumer reads WebGPU buffers. Export a host copy "
                              "with dl_device=(1, 0) (kDLCPU) or copy=True, or use .get()")
        if copy is False:
            raise BufferError(f"__dlpack__: an array on {self.device.name} can only be exported as a copy on "
                              "the host; copy=False is impossible (use copy=True or dl_device=(1, 0))")
        if not to_cpu and copy is not True:
            raise BufferError(f"__dlpack__: an array on {self.device.name} cannot be shared through DLPack "
                              "without a copy; ask for a host copy with copy=True or dl_device=(1, 0) "
                              "(np.from_dlpack(x, device='cpu')), or use .get()")
        kw["copy"] = True
        kw["dl_device"] = (KDL_CPU, 0)
    elif max_version is None and copy is not False:
        # a legacy (unversioned) consumer cannot be told the data is read-only: give it a copy
        return np.array(self._host()).__dlpack__(**kw)
    return self._host().__dlpack__(**kw)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """A GpuArray from any DLPack producer (NumPy, PyTorch, another GpuArray ...).

    ``device=None`` keeps host data on the ``cpu`` device (as the Array API asks);
    ``copy=False`` shares memory, which only the ``cpu`` device can do.

    >>> import numpy as np, gpuarray as xp
    >>> xp.from_dlpack(np.arange(3), device="cpu").tolist()
    [0, 1, 2]
    """
    from .graph.node import leaf
    from .namespace.creation import asarray
    GA = _ga()
    if isinstance(x, GA):
        dev = x.device if device is None else as_device(device)
        if copy is False and dev != x.device:
            raise BufferError(f"from_dlpack: copy=False, but moving from {x.device.name} to {dev.name} "
                              "needs a copy")
        return asarray(x, device=dev, copy=copy)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    dev = Device("cpu") if device is None else as_device(device)
    kw: dict[str, Any] = {"device": "cpu"} if copy is not False else {}
    if copy is not None:
        kw["copy"] = copy
    host = np.from_dlpack(x, **kw)
    if not _supported(host.dtype, dev):
        raise TypeError(f"from_dlpack: dtype {host.dtype} is not supported on {dev.name}; "
                        f"expected one of {_dtypes.dtype_names()}")
    if copy is False:
        if dev.kind != "cpu" or not host.flags.c_contiguous:
            what = "a non-contiguous array" if dev.kind == "cpu" else f"moving to {dev.name}"
            raise BufferError(f"from_dlpack: copy=False, but {what} needs a copy")
        return GA(leaf(host.view(), dev))
    return asarray(np.array(host, copy=True), device=dev)


__all__ = [
    "HostFallbackError", "HostFallbackWarning", "array_function", "array_ufunc", "dlpack", "dlpack_device",
    "from_dlpack", "get", "host_function", "host_ufunc", "note_fallback", "register_function",
    "register_ufunc_method", "reset_fallback_warnings",
]
