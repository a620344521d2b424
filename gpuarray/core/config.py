"""Runtime settings: ``gpuarray.config(...)``, as a call or as a context manager.

``fallback`` says what happens when a NumPy function or ufunc method called on
a GpuArray has no device implementation and runs on the host instead:

- ``"warn"`` (default): run on the host; a ``HostFallbackWarning`` naming the
  function is shown once per function;
- ``"silent"``: run on the host without a warning;
- ``"raise"``: raise ``HostFallbackError`` (a ``TypeError``).

Every host fallback is counted in ``metrics()["host_fallbacks"]``.

Placement (the planner, ``planner.py``):

- ``offload``: ``"auto"`` (default: small work whose data is on the host stays
  there, see the thresholds), ``"always"`` (every kernel runs on its array's
  device), ``"never"`` (every kernel runs on the host);
- ``elementwise_threshold``, ``reduction_threshold`` (elements) and
  ``matmul_threshold`` (FLOPs): below these, a kernel whose inputs all have a
  host copy runs on the host. ``None`` (default) means: the environment
  (``GPUARRAY_ELEMENTWISE_THRESHOLD`` ...), else the calibration file written
  by ``gpuarray.calibrate()``, else the built-in defaults;
- ``eager_host``: ``True`` (default) computes an elementwise operation at once
  with NumPy, without recording it, when ``offload`` is ``"auto"``, every
  array operand is evaluated and only on the host, and the result is below the
  elementwise threshold (the planner would run it on the host anyway; see
  ``metrics()["eager_host_ops"]``). ``False`` records it lazily like any other
  operation, so that it fuses and ``explain()`` shows it as a kernel;
- ``fast_math``: ``False`` (default). ``True`` (or ``GPUARRAY_FAST_MATH=1``) lets
  elementwise float32 kernels that run on a GPU while it is on use WGSL's built-in
  ``exp``/``log``/``sin``/``cos``/``tan``/``tanh``/... and plain division: much less
  arithmetic, but only as accurate as the driver's built-ins (docs/user-guide.md);
  NaN and infinities are still handled as NumPy does. Host kernels are unaffected.

A plain call changes the process-wide setting; ``with config(...):`` changes it
for the current thread (context) only and restores the previous value on exit.
Other threads never see a ``with`` block's values, not even for a moment: the call
recognizes that it is the expression of a ``with`` statement (the caller's next
bytecode instruction enters the block) and leaves the process-wide settings alone.
An object made by a plain call and entered later (``c = config(...)``, then
``with c:``) did change them at the call; entering moves the change to the context.

>>> import gpuarray as xp
>>> with xp.config(fallback="raise"):
...     xp.config().fallback
'raise'
"""

from __future__ import annotations

import contextvars
import dis
import os
import sys
import threading
from typing import Any

_OPTIONS: dict[str, tuple[Any, ...] | type] = {
    "fallback": ("warn", "silent", "raise"),
    "offload": ("auto", "always", "never"),
    "elementwise_threshold": int, "reduction_threshold": int, "matmul_threshold": int,
    "eager_host": (True, False),
    "fast_math": (False, True),
}
_global: dict[str, Any] = {"fallback": "warn", "offload": "auto", "elementwise_threshold": None,
                           "reduction_threshold": None, "matmul_threshold": None, "eager_host": True,
                           "fast_math": os.environ.get("GPUARRAY_FAST_MATH", "").strip() in ("1", "true", "yes")}
if os.environ.get("GPUARRAY_OFFLOAD", "").strip():
    _global["offload"] = os.environ["GPUARRAY_OFFLOAD"].strip().lower()
    if _global["offload"] not in _OPTIONS["offload"]:   # type: ignore[operator]
        raise ValueError(f"GPUARRAY_OFFLOAD={_global['offload']!r}; expected one of {_OPTIONS['offload']}")
_lock = threading.Lock()
_local: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("gpuarray_config", default=None)
# bumped on every change of the process-wide settings and of loaded calibrations. Context
# dicts are never mutated (each ``with`` sets a new one), so the same context dict and
# generation mean the same settings (``_eager.limit_now`` caches on that).
_generation = 0


class HostFallbackWarning(UserWarning):
    """A NumPy function ran on the host because gpuarray has no device implementation of it."""


class HostFallbackError(TypeError):
    """Raised under ``config(fallback="raise")`` instead of running a function on the host."""


def get(name: str) -> Any:
    """The effective value of one setting (the thread's ``with`` override, else the global one)."""
    local = _local.get()
    if local is not None and name in local:
        return local[name]
    with _lock:
        return _global[name]


def token() -> tuple[Any, int]:
    """(the thread's ``with`` settings or None, the generation): equal tokens (the first by
    identity: context dicts are never mutated) mean equal settings."""
    return _local.get(), _generation


def _changed() -> None:
    """Call with ``_lock`` held after changing ``_global``."""
    global _generation
    _generation += 1


def bump() -> None:
    """Say that something the settings derive from changed (a calibration was loaded or dropped)."""
    with _lock:
        _changed()


def _validate(settings: dict[str, Any]) -> dict[str, Any]:
    for key, value in settings.items():
        if key not in _OPTIONS:
            raise TypeError(f"config: unknown setting {key!r}; expected one of {sorted(_OPTIONS)}")
        allowed = _OPTIONS[key]
        if isinstance(allowed, tuple):
            if value not in allowed:
                raise ValueError(f"config: {key}={value!r} is not valid; expected one of {allowed}")
        elif value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise ValueError(f"config: {key}={value!r} is not valid; expected a non-negative int or None")
    return dict(settings)


# Instructions that follow the call of a ``with`` statement's expression: BEFORE_WITH
# (Python 3.11-3.13), SETUP_WITH (3.8-3.10), the async forms, and COPY + LOAD_SPECIAL (3.14).
_WITH_OPS = frozenset({"BEFORE_WITH", "SETUP_WITH", "BEFORE_ASYNC_WITH", "SETUP_ASYNC_WITH"})
_SKIP_OPS = frozenset({"CACHE", "EXTENDED_ARG", "NOP"})
_with_calls: dict[tuple[Any, int], bool] = {}       # (code, offset of the call) -> enters a with


def _in_with_statement(frame: Any) -> bool:
    """Whether the call being executed in ``frame`` is the expression of a ``with`` statement:
    the instruction after it enters the block. Unknown (no frame, other interpreters): False."""
    if frame is None:
        return False
    key = (frame.f_code, frame.f_lasti)
    hit = _with_calls.get(key)
    if hit is None:
        hit = False
        after = False
        names: list[str] = []
        for ins in dis.get_instructions(frame.f_code):
            if after and ins.opname not in _SKIP_OPS:
                names.append(ins.opname)
                if len(names) == 2:
                    break
            elif ins.offset == frame.f_lasti:
                after = True
        hit = bool(names) and (names[0] in _WITH_OPS or names[:2] == ["COPY", "LOAD_SPECIAL"])
        if len(_with_calls) > 4096:
            _with_calls.clear()
        _with_calls[key] = hit
    return hit


class config:  # noqa: N801 - used like a function
    """Read or change settings. ``config()`` shows them; ``config(fallback="raise")`` sets one.

    Used as ``with config(...):`` the change applies to the current thread only
    and the previous value comes back when the block ends.

    >>> import gpuarray as xp
    >>> old = xp.config().fallback
    >>> with xp.config(fallback="silent"):
    ...     xp.config().fallback
    'silent'
    >>> xp.config().fallback == old
    True
    """

    def __init__(self, **settings: Any) -> None:
        self._settings = _validate(settings)
        self._previous: dict[str, Any] = {}
        self._token: contextvars.Token[dict[str, Any] | None] | None = None
        if not self._settings or _in_with_statement(sys._getframe(1)):
            return          # ``with config(...):`` sets the context in __enter__, nothing global
        with _lock:
            self._previous = {k: _global[k] for k in self._settings}
            _global.update(self._settings)
            _changed()

    def __getattr__(self, name: str) -> Any:
        if name in _OPTIONS:
            return get(name)
        raise AttributeError(f"config has no setting {name!r}; expected one of {sorted(_OPTIONS)}")

    def __enter__(self) -> config:
        if self._previous:
            # Made by a plain call and entered later: undo the process-wide change the call
            # made and apply it to this context instead.
            with _lock:
                for k, v in self._previous.items():
                    if _global[k] == self._settings[k]:
                        _global[k] = v
                _changed()
            self._previous = {}
        merged = dict(_local.get() or {})
        merged.update(self._settings)
        self._token = _local.set(merged)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._token is not None:
            _local.reset(self._token)
            self._token = None

    def __repr__(self) -> str:
        return "config(" + ", ".join(f"{k}={get(k)!r}" for k in _OPTIONS) + ")"
