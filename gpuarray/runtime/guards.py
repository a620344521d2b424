"""Checks of evaluated results deferred to the next evaluation or read.

A kernel that may not produce its result (a linear-algebra kernel that flags non-finite input or no
convergence, after which LAPACK takes the matrix) used to have its flag read at the call: a wait for
the GPU in the middle of the program's recording, the host idle while the device worked and the
device idle while the host recorded what follows. Instead, the caller submits the kernel and
``defer``\\s the check; every evaluation (``planner.evaluate_nodes``) and every read of data to the
host (``residency.element``, ``Data.get_host``, ``Data.take_host``) first runs the checks pending
(``resolve``), oldest first, each once. So no result of such a kernel is ever read or computed with
before its check ran, and a check that finds the flag raised can still replace the kernel's
contents in place (``residency.Data.replace``).

>>> seen = []
>>> defer(lambda: seen.append("checked"))
>>> resolve(); seen
['checked']
"""

from __future__ import annotations

import threading
from collections.abc import Callable

PENDING: list[Callable[[], None]] = []      # checks not run yet (or running), oldest first
_lock = threading.RLock()
_state = threading.local()                  # ``busy``: this thread runs a check (its own reads skip resolve)


def defer(check: Callable[[], None]) -> None:
    """Run ``check`` before the next evaluation or read of data (any thread's)."""
    with _lock:
        PENDING.append(check)


def resolve() -> None:
    """Run the pending checks, oldest first, each once: a check's error propagates to the evaluation or
    read that ran it (the check leaves its results in a state later reads may see). A check stays in
    ``PENDING`` while it runs, so another thread's evaluation or read waits for it; the check's own reads
    (its flag, LAPACK's result) do not run it again."""
    if getattr(_state, "busy", False):
        return
    with _lock:
        _state.busy = True
        try:
            while PENDING:
                check = PENDING[0]
                try:
                    check()
                finally:
                    if PENDING and PENDING[0] is check:
                        PENDING.pop(0)
        finally:
            _state.busy = False
