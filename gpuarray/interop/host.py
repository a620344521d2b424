"""Host fallback: a NumPy function or ufunc method that gpuarray cannot run on the device runs on
host copies of its GpuArray arguments, and its array results come back as GpuArrays.

Each fallback is counted in ``metrics()["host_fallbacks"]`` and, by default, warned
about once per function (``gpuarray.config(fallback="warn" | "silent" | "raise")``).
Arguments NumPy writes into (``out=``, ``np.copyto``'s ``dst`` ...) are written back.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..array_object.aliasing import assign
from ..array_object.array import GpuArray
from ..core import config as _config
from ..core import dtypes as _dtypes
from ..core import metrics as _metrics
from ..core.config import HostFallbackError, HostFallbackWarning
from ..graph.node import leaf
from ..namespace.creation import asarray
from ..runtime.devices import Device

_FALLBACK: Any = object()       # an adapter's answer: "I cannot do this one; run it on the host"
_NOVALUE: Any = np._NoValue     # NumPy's marker for keyword arguments that were not given


_namespace: Any = None      # the gpuarray package (the Array API namespace): set by gpuarray/__init__


def register_namespace(namespace: Any) -> None:
    """Set the namespace whose functions adapters look up by name (``_xp``)."""
    global _namespace
    _namespace = namespace


def _xp(name: str) -> Any:
    """The gpuarray namespace function ``name``, or None while gpuarray has none."""
    return getattr(_namespace, name, None)


_warned: set[str] = set()
_warned_lock = threading.Lock()
_GPUARRAY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP_DIRS = (_GPUARRAY_DIR + os.sep, os.path.dirname(os.path.abspath(np.__file__)) + os.sep)


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


def note_fallback(name: str, detail: str = "", reason: str = "") -> None:
    """Account for one host fallback of ``name``: raise, or count (and warn once per ``name``).

    ``detail`` narrows the message, e.g. " for the loop (complex128, complex128) -> complex128"; ``reason``
    replaces it where the device could run the call but the host is chosen (e.g. " runs on the host
    for a few long rows: ...")."""
    what = f"{name}{reason}" if reason else f"{name} has no device implementation in gpuarray{detail}"
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
    GA = GpuArray
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
    GA = GpuArray
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
        GA = GpuArray
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
        back = {}
        for g, host in self.writable:
            assign(g, leaf(np.array(host, copy=True), g.device))
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
               detail: str = "", reason: str = "") -> Any:
    """Run a ufunc method on the host; outputs and ``ufunc.at``'s operand are written back
    (``detail`` / ``reason``: ``note_fallback``'s)."""
    name = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    if not _only_empty((inputs, kwargs)):
        note_fallback(name, detail, reason)
    conv = _ToHost()
    hinputs = [conv(x, writable=method == "at" and i == 0) for i, x in enumerate(inputs)]
    hkwargs = {k: conv(v, writable=k == "out") for k, v in kwargs.items()}
    result = getattr(ufunc, method)(*hinputs, **hkwargs)
    return _to_device(result, device, conv.write_back())
