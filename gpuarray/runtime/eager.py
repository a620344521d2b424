"""Small work on the host, computed at once instead of recorded.

Under ``config(offload="auto")`` the planner runs a kernel on the host when its
inputs are all on the host and it is below the elementwise threshold. Recording
such an operation, scheduling it and running it as a one-op kernel costs ten
times what NumPy takes for it, so ``_elementwise`` does not record it: when every
array operand is evaluated and only on the host, and the result is below the
threshold, it calls the op's host implementation (``OpDef.host_impl()``, what the
in-process provider runs) on the operands converted to the compute dtype, and
returns an evaluated array on the operands' device. Dtypes, values and errors are
those of the lazy path; ``config(eager_host=False)`` turns it off, and it never
applies under ``offload="always"`` or ``"never"``.

Each such operation is logged in ``planner.decisions()`` (why:
``"eager host: small inputs on host"``) and counted in
``metrics()["eager_host_ops"]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import config as _config
from ..core import metrics as _metrics
from ..core.ops import OPS
from ..graph import node as _node_module
from ..graph.node import Node, const
from . import planner
from . import thresholds as _thresholds
from .residency import Data

# numpy.errstate(all="ignore") costs about a microsecond per use; entering the same state
# through NumPy's context variable costs a tenth of that (NumPy 2; errstate elsewhere).
try:
    from numpy._core.umath import _extobj_contextvar, _make_extobj  # type: ignore[attr-defined]

    ignore_errors: Any = _make_extobj(all="ignore")
    set_errors: Any = _extobj_contextvar.set
    reset_errors: Any = _extobj_contextvar.reset
except ImportError:         # pragma: no cover - NumPy 1.x
    set_errors = None

# op name -> (host implementation, whether it is a NumPy ufunc)
HOST_FNS: dict[str, tuple[Any, bool]] = {name: (o.host_impl(), isinstance(o.host_impl(), np.ufunc))
                                         for name, o in OPS.items()}
VALUES: dict[tuple, Any] = {}        # (scalar type, value, dtype) -> the constant's NumPy scalar
_COUNTERS = _metrics._counters       # incremented without the lock: one bytecode-atomic dict update
_log_append = planner._log.append
_next_serial = _node_module._serial.__next__
_cls: Any = None                     # GpuArray (bound by array_object.array)


def scalar_value(value: Any, dt: np.dtype, device: Any) -> Any:
    """A Python scalar converted to ``dt`` as the lazy path's constant holds it (``graph.node.const``)."""
    t = type(value)
    if t is complex or t is float and not (value and value == value):
        return _const_value(value, dt, device)     # equality can't key -0.0, NaN (or parts of complex)
    key = (t, value, dt)
    v = VALUES.get(key)
    if v is None:
        v = _const_value(value, dt, device)
        if len(VALUES) >= 512:
            VALUES.clear()
        VALUES[key] = v
    return v


def _const_value(value: Any, dt: np.dtype, device: Any) -> Any:
    return const(value, dt, device).attrs[0]


_config_local = _config._local.get
# the raw environment value the cache compares (runtime/thresholds.py: os.environ re-encodes on every read)
_env_key: Any = _thresholds.env_key(_thresholds.ENV_THRESHOLDS["elementwise"])
_env_get: Any = _thresholds.env_raw
# the last answer: (device, config context, config generation, raw environment value, limit);
# one entry, as loops over small arrays use one device. Calibrations bump the generation.
_last: tuple = (None, None, -1, None, 0)


def limit_now(device: Any) -> int:
    """The element count below which small host work on ``device`` runs at once now: the
    elementwise threshold (``config``'s, else the environment's, calibration's or default), or 0
    when it does not (offload is not "auto", or ``eager_host`` is off). A repeated question costs
    a few identity tests (device, config context and generation, the raw environment value);
    ``_elementwise``'s fast path makes them itself on the tuple ``state(device)`` returns.

    >>> import gpuarray as xp
    >>> with xp.config(offload="auto", elementwise_threshold=100):
    ...     limit_now(xp.Device("cpu"))
    100
    """
    c = _last
    if c[0] is device and c[1] is _config_local() and c[2] == _config._generation \
            and c[3] is _env_get(_env_key):
        return c[4]
    return _refresh(device)


def state(device: Any) -> tuple | None:
    """``(device, config context, generation, raw environment value, limit)``, the cached answer
    of ``limit_now(device)`` that holds while those are the same; None when it is not cached."""
    limit_now(device)
    c = _last
    return c if c[0] is device else None


def _refresh(device: Any) -> int:
    global _last
    local, gen, raw = _config_local(), _config._generation, _env_get(_env_key)
    on = _config.get("offload") == "auto" and bool(_config.get("eager_host"))
    value = _thresholds.thresholds(device)["elementwise"] if on else 0
    if _env_key is not None:        # else (an os.environ without its raw mapping) never cached
        _last = (device, local, gen, raw, value)
    return value


def allowed(nodes: tuple[Node, ...], device: Any, shape: tuple[int, ...]) -> bool:
    """Would the planner run this op on the host: offload "auto" (and ``eager_host``), every
    operand evaluated and only on the host, the result below the elementwise threshold?"""
    lim = limit_now(device)
    if not lim:
        return False
    for n in nodes:
        d = n.data
        if d is None or d.handle is not None or d.host is None:
            return False
    size = 1
    for s in shape:
        size *= s
    return size < lim


def run(name: str, out_dtype: np.dtype, shape: tuple[int, ...], device: Any, *xs: Any) -> Any:
    """Call op ``name``'s host implementation on ``xs`` (host values of the compute dtype)."""
    fn, is_ufunc = HOST_FNS[name]
    if set_errors is not None:
        token = set_errors(ignore_errors)
        try:
            r = fn(*xs)
        finally:
            reset_errors(token)
    else:                   # pragma: no cover - NumPy 1.x
        with np.errstate(all="ignore"):
            r = fn(*xs)
    same = len(xs) == 1 or not np.ndim(xs[0]) or not np.ndim(xs[1]) or np.shape(xs[0]) == np.shape(xs[1])
    return wrap(name, r, out_dtype, shape, device, is_ufunc and same, xs)


def wrap(name: str, r: Any, out_dtype: np.dtype, shape: tuple[int, ...], device: Any, trusted: bool,
         xs: tuple) -> Any:
    """The host result ``r`` as an evaluated GpuArray on ``device``; logged and counted.

    ``trusted``: ``r`` comes from a ufunc called without ``out`` on C-contiguous operands of
    ``shape`` (and scalars), so a new C-contiguous array of ``shape`` when it is an array at all;
    anything else is normalized as the in-process provider writes its outputs."""
    if not (trusted and type(r) is np.ndarray and (r.dtype is out_dtype or r.dtype == out_dtype)):
        r = host_result(r, out_dtype, shape, xs)
    return leaf_array(name, r, shape, device)


def leaf_array(name: str, r: Any, shape: tuple[int, ...], device: Any) -> Any:
    """A new C-contiguous host array ``r`` of ``shape``, the result of op ``name``, as an
    evaluated GpuArray on ``device``; logged and counted. Nothing writes to ``r`` from now on:
    ``Data.get_host`` marks it read-only when it hands it out (a flag set here would cost 5 %
    of a small operation)."""
    node = _new(Node)           # graph.node.realized_leaf, inlined
    node.op = "leaf"
    node.inputs = node.attrs = ()
    node.dtype = dt = r.dtype
    node.shape = shape
    node.device = device
    node.serial = _next_serial()
    node.data = d = _new(Data)  # Data(dt, shape, r), without the __init__ call
    d.dtype = dt
    d.shape = shape
    d.host = r
    d.handle = d.provider = d.recipe = d.owner = None
    node.depth = node.chain = 0
    node.cone = None
    _log_append((name, device, shape))      # planner.decisions() shows it as planner.eager_entry()
    _COUNTERS["eager_host_ops"] += 1
    out = _new(_cls)
    out._node = node
    out._view = None
    return out


_new = object.__new__


def host_result(r: Any, dtype: np.dtype, shape: tuple[int, ...], xs: tuple) -> np.ndarray:
    """``r`` as the in-process provider writes an output: C-contiguous, of the result dtype and
    shape, owning its memory (never an operand's)."""
    if not shape and isinstance(r, np.generic):     # a ufunc of 0-d operands gives a NumPy scalar
        return np.array(r, dtype=dtype)
    v = np.asarray(r)
    if v.dtype != dtype:
        v = v.astype(dtype)
    out = np.ascontiguousarray(np.broadcast_to(v, shape), dtype=dtype)
    if not out.flags.owndata or any(np.may_share_memory(out, x) for x in xs):
        out = out.copy()
    return out
