"""Timing helpers shared by the benchmarks: medians of wall-clock trials and CUDA-event timing of
CuPy and PyTorch (the comparison libraries on the H200)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def median_s(fn: Callable[[], Any], trials: int = 5) -> float:
    """Median wall seconds of one call of ``fn`` over ``trials`` calls, after one warm-up call."""
    fn()
    out = []
    for _ in range(trials):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def paired_s(fns: list[Callable[[], Any]], trials: int = 5) -> list[list[float]]:
    """Wall seconds of ``trials`` calls of each of ``fns``, timed in turns (a, b, a, b, ...) after one
    warm-up call each, so that a drift of the host's speed falls on all of them alike: ``out[i][t]``
    is function i's time in turn t (ratios of one turn compare like with like)."""
    for fn in fns:
        fn()
    out: list[list[float]] = [[] for _ in fns]
    for _ in range(trials):
        for fn, times in zip(fns, out):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return out


def wall_per_call(fn: Callable[[], Any], sync: Callable[[], Any], runs: int, warm_s: float = 0.5) -> float:
    """Median seconds per call of ``fn``: ``warm_s`` seconds of warm-up calls (the GPU lowers its
    clocks while the host works alone), then ``runs`` trials of ``reps`` calls and one ``sync``."""
    t_end = time.perf_counter() + warm_s
    n = 0
    while time.perf_counter() < t_end or n < 2:
        fn()
        sync()
        n += 1
    t0 = time.perf_counter()
    fn()
    sync()
    reps = max(2, min(200, int(0.1 / max(time.perf_counter() - t0, 1e-6))))
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        out.append((time.perf_counter() - t0) / reps)
    return statistics.median(out)


def median_ms(fn: Callable[[], Any], sync: Callable[[], Any], reps: int, trials: int) -> float:
    """Median milliseconds per call of ``fn``: ``trials`` times ``reps`` calls and one ``sync``, after a warm-up."""
    fn()
    sync()
    out = []
    for _ in range(trials):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        out.append((time.perf_counter() - t0) / reps * 1e3)
    return statistics.median(out)


def median_of(fn: Callable[[], float], trials: int = 5) -> float:
    """Median of what ``fn`` returns (a time it measured itself) over ``trials`` calls."""
    return statistics.median(fn() for _ in range(trials))


def cuda_events(lib: str) -> tuple[Callable[[], Any], Callable[[], Any], Callable[[Any, Any], float]]:
    """``(new event, device sync, elapsed ms between two events)`` of ``lib``: ``"cupy"`` or ``"torch"``."""
    if lib == "cupy":
        import cupy as cp
        return cp.cuda.Event, cp.cuda.Device().synchronize, lambda s, e: float(cp.cuda.get_elapsed_time(s, e))
    import torch
    return (lambda: torch.cuda.Event(enable_timing=True)), torch.cuda.synchronize, lambda s, e: float(s.elapsed_time(e))


def event_ms(lib: str, fn: Callable[[], Any], reps: int, warm: bool = True) -> float:
    """Milliseconds per call of ``fn`` over ``reps`` calls between two CUDA events of ``lib``
    (``warm``: one call and a device sync first)."""
    event, sync, elapsed = cuda_events(lib)
    if warm:
        fn()
        sync()
    s, e = event(), event()
    s.record()
    for _ in range(reps):
        fn()
    e.record()
    e.synchronize()
    return elapsed(s, e) / reps


def write_out(text: str, path: str | None) -> None:
    """Write a benchmark's JSON ``text`` to ``path`` when one was given."""
    if path:
        with open(path, "w") as f:
            f.write(text)
