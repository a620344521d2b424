"""``__array_function__``: the registry of NumPy function adapters and the decorators that fill it.

An adapter takes NumPy's arguments bound by name (``p``, defaults filled in) and
returns the result, or ``_FALLBACK`` when it does not cover these arguments; that
call then runs on the host (``host.host_function``). The adapters themselves are in
``adapters/``; they import this module, never the other way round.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection
from typing import Any

import numpy as np

from ..array_object.array import GpuArray
from .host import _FALLBACK, _first_array, _signature, host_function

# NumPy function -> impl(*args, **kwargs) taking NumPy's arguments; returns a result or _FALLBACK.
FUNCTIONS: dict[Any, Callable[..., Any]] = {}
# Creation functions reached through like= (np.asarray(x, like=g)): impl(like, *args, **kwargs).
LIKE: dict[Any, Callable[..., Any]] = {}
# NumPy functions whose purpose is host output (printing, saving): they run on a host copy and are not fallbacks.
HOST_BY_DESIGN: set[Any] = set()

Impl = Callable[[dict], Any]


def register_function(numpy_func: Any, impl: Callable[..., Any]) -> None:
    """Plug in a device implementation of a NumPy function. ``impl`` takes NumPy's arguments and
    returns the result, or ``_FALLBACK`` to let this call run on the host."""
    FUNCTIONS[numpy_func] = impl


# func -> (positional names, keyword names, defaults, required names), or None: what _bind's fast
# path needs (inspect's Signature.bind costs about fifty Python calls per NumPy call)
_FAST: dict[Any, tuple | None] = {}


def _fast_params(func: Any) -> tuple | None:
    if func not in _FAST:
        sig = _signature(func)
        params = list(sig.parameters.values()) if sig is not None else []
        kinds = inspect.Parameter
        if sig is None or any(q.kind in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD) for q in params):
            _FAST[func] = None
        else:
            positional = tuple(q.name for q in params if q.kind in (kinds.POSITIONAL_ONLY,
                                                                     kinds.POSITIONAL_OR_KEYWORD))
            keywords = frozenset(q.name for q in params if q.kind != kinds.POSITIONAL_ONLY)
            defaults = {q.name: q.default for q in params if q.default is not q.empty}
            required = frozenset(q.name for q in params if q.default is q.empty)
            _FAST[func] = (positional, keywords, defaults, required)
    return _FAST[func]


def _bind(func: Any, args: tuple, kwargs: dict) -> dict[str, Any] | None:
    """NumPy's arguments by parameter name, defaults filled in (None if the signature is unknown)."""
    fast = _fast_params(func)
    if fast is not None:
        positional, keywords, defaults, required = fast
        if len(args) <= len(positional) and keywords.issuperset(kwargs) and \
                kwargs.keys().isdisjoint(positional[:len(args)]):
            params = dict(defaults)
            params.update(zip(positional, args))
            params.update(kwargs)
            if params.keys() >= required:
                return params
    sig = _signature(func)
    if sig is None:
        return None
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{getattr(func, '__name__', func)}(): {exc}") from None
    bound.apply_defaults()
    return dict(bound.arguments)


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


def _numpy_functions(funcs: tuple[Any, ...]) -> list[Any]:
    """The NumPy functions ``funcs``; a name stands for ``numpy.<name>`` and is skipped where NumPy has none."""
    found = (getattr(np, f, None) if isinstance(f, str) else f for f in funcs)
    return [f for f in found if f is not None]


def register(*funcs: Any) -> Callable[[Impl], Impl]:
    """Register ``impl(p)`` (``p``: NumPy's bound arguments) for the NumPy functions ``funcs``."""
    def deco(impl: Impl) -> Impl:
        for f in _numpy_functions(funcs):
            FUNCTIONS[f] = _with_params(f, impl)
        return impl
    return deco


def register_array(*funcs: Any, arg: str = "x", real: bool = False, dtypes: Collection[np.dtype] | None = None,
                   no_out: bool = False, host: tuple[str, ...] = ()) -> Callable[[Callable[[Any, dict], Any]], Impl]:
    """Register ``impl(a, p)`` for ``funcs`` whose argument ``arg`` must be a GpuArray (``a``) of a real dtype
    (with ``real``) or one of ``dtypes``, with ``out=None`` (with ``no_out``) and no GpuArray among the
    arguments named in ``host``: other calls return ``_FALLBACK`` (they run on the host)."""
    def deco(impl: Callable[[Any, dict], Any]) -> Impl:
        def adapter(p: dict) -> Any:
            a, GA = p[arg], GpuArray
            if (not isinstance(a, GA) or (real and a.dtype.kind == "c") or (dtypes is not None and a.dtype not in
                    dtypes) or (no_out and p["out"] is not None) or any(isinstance(p[k], GA) for k in host)):
                return _FALLBACK
            return impl(a, p)
        adapter.__name__ = adapter.__qualname__ = impl.__name__
        adapter.__doc__ = impl.__doc__
        return register(*funcs)(adapter)
    return deco


def register_like(*funcs: Any) -> Callable[[Callable[[Any, dict], Any]], Callable[[Any, dict], Any]]:
    """Register ``impl(like, p)`` for the creation functions ``funcs`` called with ``like=`` a GpuArray."""
    def deco(impl: Callable[[Any, dict], Any]) -> Callable[[Any, dict], Any]:
        for f in _numpy_functions(funcs):
            LIKE[f] = _with_like(f, impl)
        return impl
    return deco


def array_function(self: Any, func: Any, types: Any, args: tuple, kwargs: dict) -> Any:
    """``GpuArray.__array_function__``: NumPy functions on GpuArrays.

    Functions gpuarray has run on the device; others run on the host (counted,
    warned once per function, see ``gpuarray.config``) with results brought back.

    >>> import numpy as np, gpuarray as xp
    >>> g = xp.asarray([[1, 2, 3]], device="cpu")
    >>> np.transpose(g).shape, type(np.squeeze(g)).__name__
    ((3, 1), 'GpuArray')
    """
    GA = GpuArray
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
