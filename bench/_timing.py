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


def jit_ms(xp: Any, fn: Callable[..., Any], args: tuple, sync: Callable[[], Any], runs: int) -> float:
    """Wall milliseconds per call (``wall_per_call``) of ``xp.jit(fn)(*args)``: the function compiled
    with ``gpuarray.jit``, whose calls replay its first call's evaluation without recording."""
    jf = xp.jit(fn)
    return 1e3 * wall_per_call(lambda: jf(*args), sync, runs)


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


def gpu_ms(xp: Any, call: Callable[[], Any], runs: int) -> float:
    """gpuarray's GPU milliseconds for ``call()`` (an evaluation): the median over ``max(5, runs)``
    profiled evaluations (timestamp queries), taken right after the wall-clock trials (the GPU is warm)."""
    import numpy as np
    out = []
    for _ in range(max(5, runs)):
        with xp.profile() as prof:
            call()
            xp.synchronize()
        out.append(prof.total_seconds * 1e3)
    return float(np.median(out))


def time_peers(libs: list[str], fn_for: Callable[[str, Any], Callable[..., Any]], arrays: tuple[Any, ...],
               runs: int) -> dict[str, float | str]:
    """Wall milliseconds per call (``wall_per_call``) of the workload on each of ``libs`` (``torch``,
    ``torch_compile``, ``jax``, ``cupy``): ``fn_for(lib, module)`` gives the function of the ``arrays``
    (NumPy arrays, moved to the library's device first). A library that is absent or fails is
    reported as ``<lib>_error``. TF32 is off for PyTorch; JAX runs with 64-bit types when an array
    is 64-bit."""
    out: dict[str, float | str] = {}
    for lib in libs:
        try:
            out[f"{lib}_ms"] = _peer_ms(lib, fn_for, arrays, runs)
        except Exception as e:  # noqa: BLE001 - a library that is absent or fails is reported
            out[f"{lib}_error"] = f"{type(e).__name__}: {str(e)[:160]}"
        _release(lib)
    return out


def _release(lib: str) -> None:
    """Give the device memory that ``lib``'s allocator keeps cached back to the driver, so that the
    libraries timed after it in this process (gpuarray's pool among them) are not short of memory
    (``bench.big_arrays``'s 6 GB arrays took 160-200 ms a call in gpuarray after the peers' timings and
    9-12 ms in a process of its own: a new buffer costs about 70 ms a GiB on the H200)."""
    import gc
    gc.collect()
    try:
        if lib in ("torch", "torch_compile"):
            import torch
            torch.cuda.empty_cache()
        elif lib == "cupy":
            import cupy as cp
            cp.get_default_memory_pool().free_all_blocks()
        elif lib == "jax":
            import jax
            jax.clear_caches()
    except Exception:  # noqa: BLE001, S110 - a library that is absent has nothing to release
        pass


def _peer_ms(lib: str, fn_for: Callable[[str, Any], Callable[..., Any]], arrays: tuple[Any, ...], runs: int) -> float:
    if lib in ("torch", "torch_compile"):
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        targs = tuple(torch.from_numpy(a).cuda() for a in arrays)
        f = fn_for("torch", torch)
        if lib == "torch_compile":
            f = torch.compile(f)
        return 1e3 * wall_per_call(lambda: f(*targs), torch.cuda.synchronize, runs)
    if lib == "jax":
        import jax
        import jax.numpy as jnp
        if any(a.dtype.itemsize == 8 for a in arrays):
            jax.config.update("jax_enable_x64", True)
        jargs = tuple(jax.device_put(a) for a in arrays)
        jf = jax.jit(fn_for("jax", jnp))
        return 1e3 * wall_per_call(lambda: jf(*jargs).block_until_ready(), lambda: None, runs)
    if lib != "cupy":
        raise ValueError(f"unknown library {lib!r}")
    import cupy as cp
    cargs = tuple(cp.asarray(a) for a in arrays)
    cf = fn_for("cupy", cp)
    return 1e3 * wall_per_call(lambda: cf(*cargs), cp.cuda.Device().synchronize, runs)
