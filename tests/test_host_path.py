"""The host side of a repeated evaluation on wgpu: parameters gathered per pass and written once
(``wgpu_pool.ParamArena``), bind groups reused through the parameters' dynamic offset
(``wgpu_bindings``), pass commands recorded through wgpu-native's C entry points
(``wgpu_encode``), and the Python calls a cached evaluation costs (issue 16's budgets)."""

from __future__ import annotations

import contextlib
import cProfile
import gc
import itertools
import pstats
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
import gpuarray.linalg.jacobi as _jacobi
from gpuarray.providers import webgpu, wgpu_memory, wgpu_pool

from .conftest import assert_same, record_creations, run_in_threads


def test_parameters_of_many_dispatches_in_one_pass(wgpu_device: xp.Device, monkeypatch: Any) -> None:
    """Each dispatch of a long open pass reads its own parameters (the arena is written once,
    at the submit), including after the arena fills up and continues in a fresh buffer."""
    monkeypatch.setattr(webgpu, "SUBMIT_DISPATCHES", 10_000)
    prov: Any = wgpu_device.provider
    h = np.linspace(-3, 3, 4096, dtype=np.float32)
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        xp.evaluate(x + 0)
        xp.synchronize(wgpu_device)
        small = wgpu_pool.ParamArena(prov.device, prov.params.usage, prov.params.align, nbytes=1024)
        monkeypatch.setattr(prov, "params", small)
        ys = []
        for i in range(60):             # 60 dispatches: several arena buffers of 1024 bytes
            y = x + float(i)
            xp.evaluate(y)
            ys.append(y)
        assert prov._pass is not None   # one open pass holds them all
        for i, y in enumerate(ys):
            assert_same(y, h + np.float32(i))


class _Queue:
    def __init__(self) -> None:
        self.writes: list[tuple[int, list[int]]] = []

    def write_buffer(self, buf: Any, off: int, data: np.ndarray, doff: int, size: int) -> None:
        self.writes.append((off, data[doff // 4:(doff + size) // 4].tolist()))


class _Device:
    def __init__(self) -> None:
        self.queue = _Queue()

    def create_buffer(self, size: int, usage: Any) -> object:
        return object()


def test_parameter_arena_writes_only_what_changed() -> None:
    """After ``submit_early`` the arena continues where it stopped (the submitted dispatches still
    read theirs); a repeated pass with the same parameters writes nothing, a changed one its range
    (with its padding zeroed: the same bytes whether a dispatch put its words or a replayed program
    put its block)."""
    dev = _Device()
    arena = wgpu_pool.ParamArena(dev, 0, 16, nbytes=1024)
    u = np.uint32

    def one_pass(first: list[int], second: list[int]) -> list[int]:
        keep: list[Any] = []
        _b, o1, _s = arena.put(np.array(first, u), keep)
        arena.upload()
        arena.reset(early=True)         # the submit_early of a long kernel
        _b, o2, _s = arena.put(np.array(second, u), keep)
        arena.upload()
        arena.reset()
        return [o1, o2]

    assert one_pass([1, 2, 3], [4, 5]) == [0, 16]
    assert dev.queue.writes == [(0, [1, 2, 3, 0]), (16, [4, 5, 0, 0])]
    assert one_pass([1, 2, 3], [4, 5]) == [0, 16] and len(dev.queue.writes) == 2
    one_pass([1, 2, 3], [4, 6])
    assert dev.queue.writes[2:] == [(16, [4, 6, 0, 0])]
    one_pass([7], [4, 6])
    assert dev.queue.writes[3:] == [(0, [7, 0, 0, 0])]       # the padding zeroed, as a program's block


def test_repeated_dispatches_reuse_their_bind_groups(wgpu_device: xp.Device) -> None:
    prov: Any = wgpu_device.provider
    x = xp.asarray(np.arange(8192, dtype=np.float32), device=wgpu_device)
    with xp.config(offload="always"):
        for i in range(5):
            xp.evaluate(x * 2 + float(i))
        misses = prov.bindings.misses
        for i in range(40):              # new constants, new parameter offsets, recycled buffers
            y = x * 2 + float(i)               # exact: small integers
            xp.evaluate(y)
            assert_same(y, np.arange(8192, dtype=np.float32) * 2 + np.float32(i))
            del y
        assert prov.bindings.misses - misses <= 2


def _chain8(x: Any) -> Any:
    return xp.exp(-x * x * 0.5) * xp.sin(x) + xp.cos(x) * 0.25 - xp.tanh(x)


def _softmax(m: Any) -> Any:
    e = xp.exp(m - xp.max(m, axis=1, keepdims=True))
    return e / xp.sum(e, axis=1, keepdims=True)


# Python calls (cProfile's count, built-ins included) per cached evaluation on this machine's
# lavapipe, recording included, with a margin of about 10 % for other Python versions and for what
# ran before in the process (a few calls); within issue 16's targets (chain8 250, sum 120, softmax
# 250, std(axis=0) 250, float(x.sum()) 200). Measured on Python 3.11, in this order (evaluation
# plans, replay.py, the recording trimmed, encoders, submits and small reads through wgpu-native's
# C functions, column fusion, then the reduction methods' common case, var and std built with make,
# the replay path's and the scalar read's calls trimmed): x*2+1 91, chain8 202, sum 99, softmax 168,
# std(axis=0) 134, x.std(axis=0) 142, float(sum) 150, float(x.sum()) 152; sixty-fifth session float(sum) 160,
# float(x.sum()) 162 (163 / 165 at its start; the offload setting read once a reading evaluation); sixty-eighth
# session float(sum) 168, float(x.sum()) 170 (163 / 165 before: a small read maps in two steps, ``begin`` and
# ``finish``, which a read started at an upload takes apart, and its copies are one helper for both reads).
BUDGETS: dict[str, tuple[int, Callable[[Any, Any], Any]]] = {
    "x*2+1": (100, lambda v, m: v * 2 + 1),
    "chain8": (222, lambda v, m: _chain8(v)),
    "sum": (110, lambda v, m: xp.sum(v)),
    "softmax": (190, lambda v, m: _softmax(m)),
    "std(axis=0)": (155, lambda v, m: xp.std(m, axis=0)),
    "x.std(axis=0)": (158, lambda v, m: m.std(axis=0)),
    "float(sum)": (174, lambda v, m: float(xp.sum(v))),
    "float(x.sum())": (176, lambda v, m: float(v.sum())),
    # a new scalar every call: the plan replayed with the constant's new words (fifty-first session:
    # 121 and 216 calls; 306 and 432 before, the planner's full path)
    "x*s+1, new s": (135, lambda v, m: v * _fresh() + 1),
    "softmax(m*s), new s": (240, lambda v, m: _softmax(m * _fresh())),
}


_COUNT: Iterator[int] = itertools.count()


def _fresh() -> float:
    """A scalar not used before in this process."""
    return 1.0 + next(_COUNT) / 8192


@pytest.mark.parametrize("case", list(BUDGETS))
def test_python_calls_per_cached_evaluation(wgpu_device: xp.Device, case: str, monkeypatch: Any) -> None:
    from gpuarray.providers import wgpu_encode

    monkeypatch.setattr(wgpu_encode, "SPIN_READ_S", 0.0)     # a read's polls, without its spinning (timing-bound)
    budget, fn = BUDGETS[case]
    rng = np.random.default_rng(0)
    with xp.config(offload="always"):
        v = xp.asarray(rng.uniform(-3, 3, 1 << 16).astype(np.float32), device=wgpu_device)
        m = xp.asarray(rng.uniform(-3, 3, (256, 256)).astype(np.float32), device=wgpu_device)

        def run() -> None:
            r = fn(v, m)
            if isinstance(r, xp.GpuArray):
                xp.evaluate(r)

        for _ in range(5):
            run()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(10):
            run()
        prof.disable()
    calls = pstats.Stats(prof).total_calls / 10      # type: ignore[attr-defined]
    print(f"{case}: {calls:.1f} Python calls per cached evaluation")
    assert calls <= budget, f"{case}: {calls:.0f} Python calls per cached evaluation (budget {budget})"


def test_parameters_rewritten_only_when_they_change(wgpu_device: xp.Device, monkeypatch: Any) -> None:
    """A pass whose parameters equal the last ones written skips the write; any change is written. A
    replayed program's parameters are written once, to their place in the static zone after the arena."""
    prov: Any = wgpu_device.provider
    h = np.linspace(-3, 3, 4096, dtype=np.float32)
    x = xp.asarray(h, device=wgpu_device)
    writes: list[int] = []
    placed: list[int] = []
    queue = prov.device.queue
    real = queue.write_buffer

    def counted(buf: Any, offset: int, *args: Any) -> Any:
        if buf is prov.params.buffer:
            (writes if offset < prov.params._cap else placed).append(offset)
        return real(buf, offset, *args)

    monkeypatch.setattr(queue, "write_buffer", counted)
    with xp.config(offload="always"):
        for c in (2.0, 2.0, 2.0, 3.0, 3.0, 2.0):
            y = xp.maximum(x * c, -1.0)        # no multiply-add for a compiler to contract
            xp.evaluate(y)
            xp.synchronize(wgpu_device)        # one pass per evaluation
            assert_same(y, np.maximum(h * np.float32(c), np.float32(-1)))
    assert len(writes) <= 3, writes            # 2.0 (first), 3.0, 2.0 again
    assert len(placed) <= 2, placed            # the replayed programs of 2.0 and of 3.0, once each


def test_provider_keeps_a_host_visible_upload_allocation(wgpu_device: xp.Device) -> None:
    """The provider keeps one mapped ``MAP_WRITE`` buffer alive for its lifetime (``upload_anchor``): with no
    other host-visible allocation alive, every small ``queue.write_buffer`` made and released a memory block of
    the driver (H200: about 2 ms each, docs/benchmarks.md "Small uploads"). Small uploads next to it stay right."""
    prov: Any = wgpu_device.provider
    anchor = prov.upload_anchor
    assert anchor is not None and anchor.size == webgpu.UPLOAD_ANCHOR_BYTES
    assert anchor.usage & prov.wgpu.BufferUsage.MAP_WRITE and anchor.map_state == "mapped"
    for k in range(5):
        v = np.array([k, -0.0, np.inf, np.nan], np.float32)
        assert_same(xp.asarray(v, device=wgpu_device) * 2, v * 2)
    assert prov.upload_anchor is anchor


def test_alternating_evaluations_upload_no_parameters(wgpu_device: xp.Device, monkeypatch: Any) -> None:
    """Three evaluations read back one after another, over and over (a LogisticRegression iteration's
    loss, gradient and intercept): once each has been replayed, a round uploads no parameters (each
    program's block has its fixed place), and the results stay right."""
    prov: Any = wgpu_device.provider
    h = np.linspace(-3, 3, 4096, dtype=np.float32).reshape(64, 64)
    m = xp.asarray(h, device=wgpu_device)
    writes: list[int] = []
    queue = prov.device.queue
    real = queue.write_buffer

    def counted(buf: Any, offset: int, *args: Any) -> Any:
        if buf is prov.params.buffer or buf is prov.params._sbuf:
            writes.append(offset)
        return real(buf, offset, *args)

    def rounds(n: int) -> None:
        for _ in range(n):
            a = float(xp.sum(xp.exp(m * 0.5)))
            b = np.asarray(xp.sum(m * 2.0, axis=0))
            c = np.asarray(xp.max(m - 1.0, axis=1))
            np.testing.assert_allclose(a, np.sum(np.exp(h * np.float32(0.5)), dtype=np.float64), rtol=1e-5)
            assert_same(b, np.sum(h * np.float32(2), axis=0), rtol=1e-5, atol=1e-3)   # 64 terms of up to 6
            assert_same(c, np.max(h - np.float32(1), axis=1))

    with xp.config(offload="always"):
        rounds(3)                               # recorded, then replayed (the blocks placed)
        monkeypatch.setattr(queue, "write_buffer", counted)
        rounds(3)
    assert writes == [], writes


def test_hash_cons_table_stays_bounded() -> None:
    """Entries of dead nodes are swept (graph/node.py: no weakref callback per node), so a long loop
    of temporary expressions keeps the table within a constant factor of the live nodes."""
    from gpuarray.graph import node as gnode
    x = xp.asarray(np.arange(8, dtype=np.float32), device="cpu")
    keep = x * 2
    for i in range(3 * gnode.SWEEP_SLACK):
        y = x + float(i)            # a new node each time, dead at the next iteration
        del y
    assert len(gnode._table) <= 2 * gnode.SWEEP_SLACK + 64
    assert (x * 2) is not None and (x * 2)._node is keep._node       # live nodes are still shared


def test_direct_pass_errors_raise(wgpu_device: xp.Device) -> None:
    """A submit through wgpu-native's C entry points (``wgpu_encode.RawPass``) raises the
    validation error that wgpu-py would raise, and the provider keeps working after it."""
    import wgpu

    from gpuarray.providers import wgpu_encode
    prov: Any = wgpu_device.provider
    if not wgpu_encode.RAW:
        pytest.skip("this wgpu build has no C entry points")
    bu = wgpu.BufferUsage
    a = prov.device.create_buffer(size=16, usage=bu.COPY_SRC)
    b = prov.device.create_buffer(size=16, usage=bu.COPY_DST)
    x = xp.asarray(np.arange(8, dtype=np.float32), device=wgpu_device)
    from wgpu.backends.wgpu_native._api import error_handler
    depth = len(error_handler._get_proxy_stack())
    with xp.config(offload="always"):
        xp.evaluate(x * 3)                  # an open pass to submit with the bad copy
        with pytest.raises(wgpu.GPUValidationError):
            prov.flush(lambda enc: enc.copy_buffer_to_buffer(a, 0, b, 0, 64))     # past both ends
        assert len(error_handler._get_proxy_stack()) == depth      # every capture was released
        y = x * 2 + 1
        assert_same(y, np.arange(8, dtype=np.float32) * 2 + 1)
        assert float(xp.sum(x)) == 28.0
        with pytest.raises(wgpu.GPUValidationError):                    # no pass open: submitted alone
            prov.flush(lambda enc: enc.copy_buffer_to_buffer(a, 0, b, 0, 64))
        assert len(error_handler._get_proxy_stack()) == depth
        assert float(xp.sum(x * 2)) == 56.0


def test_small_reads_of_every_width(wgpu_device: xp.Device) -> None:
    """Downloads of at most SMALL_READ bytes (one kept mapped buffer) and just above it agree with
    NumPy for 1- to 8-byte dtypes, sizes that are not a multiple of 4 bytes included."""
    from gpuarray.providers.wgpu_memory import SMALL_READ
    for dt in map(np.dtype, (np.bool_, np.int8, np.uint16, np.int32, np.float32, np.int64, np.float64,
                             np.complex64)):
        try:
            wgpu_device.check_dtype(dt)
        except TypeError:
            continue
        for n in (1, 3, SMALL_READ // dt.itemsize, SMALL_READ // dt.itemsize + 1):
            h = (np.arange(n) % 7).astype(dt)
            y = xp.asarray(h, device=wgpu_device)
            with xp.config(offload="always"):
                z = xp.where(y == y, y, y)          # computed on the device, then downloaded
                assert_same(z, h)


def test_host_fallback_downloads_its_small_inputs_together(wgpu_device: xp.Device, monkeypatch: Any) -> None:
    """A host fallback whose inputs are several small device arrays (PCA's ``eigh`` of one 64 x 64 matrix
    reads the gram matrix and the mean, ``C = (X.T @ X - n * m m^T) / (n - 1)`` fused into it) copies them
    into the small read buffer in one submit and waits once (``download_many``), with every storage width
    converted back (int8, bool, complex128 stored as i32, u32, vec2<f64>), equal to NumPy's. (The device's
    Jacobi ``eigh`` is turned off: LAPACK takes the matrix, as it does complex ones.)"""
    monkeypatch.setattr(_jacobi, "applies", lambda n: False)     # LAPACK's eigh: a host fallback
    calls: list[int] = []
    single: list[int] = []
    many = wgpu_memory.WgpuMemory.download_many
    one = wgpu_memory.WgpuMemory.download
    monkeypatch.setattr(wgpu_memory.WgpuMemory, "download_many",
                        lambda self, items: calls.append(len(items)) or many(self, items))
    monkeypatch.setattr(wgpu_memory.WgpuMemory, "download",
                        lambda self, *a: single.append(1) or one(self, *a))
    rng = np.random.default_rng(3)
    hx = rng.standard_normal((500, 8)).astype(np.float32)
    with xp.config(offload="always"):
        x = xp.asarray(hx, device=wgpu_device)
        g, m = x.T @ x, xp.mean(x, axis=0)
        xp.evaluate(g, m)
        c = (g - 500 * xp.reshape(m, (-1, 1)) * xp.reshape(m, (1, -1))) / 499
        w, v = xp.linalg.eigh(c)
        hw, hv = np.linalg.eigh(np.cov(hx.T).astype(np.float32))
        np.testing.assert_allclose(np.asarray(w), hw, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.abs(np.asarray(v)), np.abs(hv), atol=2e-3)
    assert calls == [2] and not single, (calls, single)
    from gpuarray.runtime.residency import hosts_of
    hs = [(np.arange(5) - 2).astype(np.int8), np.array([True, False, True]), np.array([1 + 2j, complex(-0.0, -np.inf)])]
    with xp.config(offload="always"):
        ds = [xp.asarray(h[::-1], device=wgpu_device)[::-1] for h in hs]
        ds = [~(~d) if d.dtype == xp.bool else 0 - (0 - d) for d in ds]      # computed on the device
        xp.evaluate(*ds)
        got = hosts_of([d._node.data for d in ds] + [ds[0]._node.data])
    for gh, h in zip(got, hs + hs[:1], strict=True):
        assert gh.dtype == h.dtype and np.array_equal(gh, h) and not gh.flags.writeable
    assert calls[-1] == 3


# issue 19: percentile / quantile / median over a whole array (radix selection), warm calls.
# Python calls per warm ``percentile(x, 30)`` on this machine's lavapipe (Python 3.11): 1557 before
# (NumPy's result dtype, virtual indices and rank layout computed again each call, every ufunc
# through NumPy's dispatch, aliasing-tracked reshapes of fresh results), 501 after; the budget leaves about 10 %.
PERCENTILE_BUDGET = 550


def _quantile_cases() -> dict[str, Callable[[Any], Any]]:
    return {
        "percentile(x, 30)": lambda g: np.percentile(g, 30),
        "median": lambda g: np.median(g),
        "quantile(x, 5 q)": lambda g: np.quantile(g, [0.05, 0.25, 0.5, 0.75, 0.95]),
        "nanpercentile(x, 30)": lambda g: np.nanpercentile(g, 30),
        "nanquantile(x, 2 q)": lambda g: np.nanquantile(g, [0.1, 0.9]),
        "nanmedian": lambda g: np.nanmedian(g),
        "percentile(m, 30, axis=1)": lambda g: np.percentile(g.reshape((256, 256)), 30, axis=1),
        "quantile(m, 2 q, axis=0)": lambda g: np.quantile(g.reshape((256, 256)), [0.1, 0.9], axis=0),
    }


def test_python_calls_per_warm_percentile(wgpu_device: xp.Device) -> None:
    h = np.random.default_rng(0).standard_normal(1 << 16).astype(np.float32)
    with xp.config(offload="always"):
        g = xp.asarray(h, device=wgpu_device)
        for _ in range(5):
            xp.evaluate(np.percentile(g, 30))
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(10):
            xp.evaluate(np.percentile(g, 30))
        prof.disable()
    calls = pstats.Stats(prof).total_calls / 10      # type: ignore[attr-defined]
    print(f"percentile(x, 30): {calls:.1f} Python calls per warm call")
    assert calls <= PERCENTILE_BUDGET, f"percentile: {calls:.0f} Python calls a warm call (budget {PERCENTILE_BUDGET})"


# nanmedian's warm calls created 4-6 bind groups each time after the 34 test files that one CI worker ran
# before this file (forty-third session; in one process on the development machine, with the buffer pool and
# the bind-group cache emptied first and the collector paused too; with either half of those files before
# it, and alone, none), nanpercentile's 2-3 in two of the fifty-second session's CI runs (not reproduced in one
# process: neither with the pool prefilled, nor with other work between the calls, which makes 8 and 5 for two
# calls and then none, nor with the parameter arena's zone filling up during the calls). What settles: the
# collector runs before the warm-up and is paused while the calls are counted, and the warm-up goes on (up to
# 8 more calls) until a call binds nothing new; then 4 calls must create nothing.
@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("case", list(_quantile_cases()))
def test_warm_quantiles_upload_and_read_nothing(wgpu_device: xp.Device, case: str, monkeypatch: Any) -> None:
    """A warm call uploads nothing (ranks, interpolation weights and gather positions are kept on the
    device; 64-bit constants in kept buffers), creates no buffer or bind group and reads nothing back:
    its result stays lazy until the user reads it, and then equals NumPy's."""
    fn = _quantile_cases()[case]
    h = np.random.default_rng(1).standard_normal(1 << 16).astype(np.float32)
    h[::997] = np.nan if case.startswith("nan") else h[::997]
    prov: Any = wgpu_device.provider
    gc.collect()
    with xp.config(offload="always"), _collector_paused():
        g = xp.asarray(h, device=wgpu_device)
        for _ in range(3):
            xp.evaluate(fn(g))
        xp.synchronize(wgpu_device)
        for _ in range(8):          # until a call binds nothing new (the steady state a warm call means)
            before = prov.bindings.misses
            xp.evaluate(fn(g))
            xp.synchronize(wgpu_device)
            if prov.bindings.misses == before:
                break
        misses = prov.bindings.misses
        made = record_creations(monkeypatch, prov)
        xp.reset_metrics()
        for _ in range(4):
            xp.evaluate(fn(g))
        r = fn(g)
        xp.synchronize(wgpu_device)
        m = xp.metrics()
        monkeypatch.undo()
        assert made == [], made
        assert m["bytes_uploaded"] == 0 and m["bytes_downloaded"] == 0, m
        assert m["host_fallbacks"] == 0 and m["dispatches"] > 0
        assert prov.bindings.misses == misses
        assert not r._node.realized                 # lazy: nothing computed or read for it yet
        got = np.asarray(r)
        assert xp.metrics()["bytes_downloaded"] > 0
    assert_same(got, np.asarray(fn(h)), rtol=1e-6)


def test_warm_calls_bind_nothing_new_after_the_static_zone_fills(wgpu_device: xp.Device, monkeypatch: Any) -> None:
    """In a long process the parameter arena's static zone fills up. A program recorded after that
    still replays in the buffer its recording bound (the arena starts a new buffer at the next pass),
    so three cold calls meet every buffer assignment and warm calls create no bind group (before, its
    replays were placed in a buffer of their own and the first warm call made a bind group a dispatch)."""
    fn = _quantile_cases()["nanmedian"]
    prov: Any = wgpu_device.provider
    h = np.random.default_rng(2).standard_normal(1 << 16).astype(np.float32)
    h[::997] = np.nan
    with xp.config(offload="always"):
        other = xp.asarray(np.linspace(-3, 3, 64, dtype=np.float32), device=wgpu_device)
        xp.evaluate(other * 2.0)                # the arena has a buffer
        arena = prov.params
        arena._zoff = arena._cap + arena.ZONE_BYTES     # its zone full, as after a long process
        for _ in range(3):
            xp.evaluate(xp.exp(other) - 1.0)    # a program replayed now finds no room in the zone
        g = xp.asarray(h, device=wgpu_device)
        for _ in range(3):
            xp.evaluate(fn(g))
        xp.synchronize(wgpu_device)
        made = record_creations(monkeypatch, prov)
        for _ in range(4):
            xp.evaluate(fn(g))
        r = fn(g)
        xp.synchronize(wgpu_device)
        monkeypatch.undo()
        assert made == [], made
    assert_same(np.asarray(r), np.asarray(fn(h)), rtol=1e-6)


@pytest.mark.parametrize("spin_s", [0.0, 1.0])
def test_small_reads_spin_then_block(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch, spin_s: float) -> None:
    """A small read polls without blocking for ``SPIN_READ_S`` (GPU adapters), then waits blocking:
    the value read is right whether the mapping is done while spinning or after."""
    from gpuarray.providers import wgpu_encode

    p = wgpu_device.provider
    if not wgpu_encode.RAW:
        pytest.skip("no wgpu-native C entry points")
    monkeypatch.setattr(wgpu_encode, "SPIN_READ_S", spin_s)
    bu = p.wgpu.BufferUsage
    small = wgpu_encode.SmallReader(p.device, bu.MAP_READ | bu.COPY_DST, wgpu_memory.SMALL_READ, spin=True)
    monkeypatch.setattr(p, "_small", small)
    a = np.arange(1000, dtype=np.float32)
    x = xp.asarray(a, device=wgpu_device)
    for k in range(3):
        assert float((x * (k + 1)).sum()) == float((a * (k + 1)).sum())
        assert int(xp.argmax(x * (k - 1))) == int(np.argmax(a * (k - 1)))


def test_host_kernels_keep_their_scratch_blocks() -> None:
    """The cpu device's fused kernels take their scratch blocks from the ones this thread kept from the
    last run of the same layout (new memory costs a page fault per 4 KiB): a second run makes none, its
    results are new arrays (an earlier result keeps its values), and threads running the same kernel at
    once each use blocks of their own (NumPy's values in every thread)."""
    from gpuarray.providers import inprocess
    made: list[int] = []
    real_empty = np.empty

    def chain(v: Any) -> Any:
        return v * v * 0.5 + v - 1.5

    h = np.random.default_rng(3).uniform(-3, 3, inprocess.MIN_CHUNK * 5 + 7).astype(np.float32)
    want = chain(h)
    x = xp.asarray(h, device="cpu")
    lazy = xp.config(eager_host=False)          # recorded and fused (not computed op by op at once)
    lazy.__enter__()
    try:
        first = np.asarray(chain(x))
        inprocess.np.empty = lambda *a, **k: made.append(1) or real_empty(*a, **k)    # type: ignore[attr-defined]
        second = np.asarray(chain(x))
    finally:
        inprocess.np.empty = real_empty           # type: ignore[attr-defined]
        lazy.__exit__(None, None, None)
    assert len(made) == 1                         # the output alone
    assert_same(first, want)
    assert_same(second, want)

    def work(seed: int) -> None:
        v = np.random.default_rng(seed).uniform(-3, 3, h.size).astype(np.float32)
        with xp.config(eager_host=False):
            for _ in range(20):
                assert_same(chain(xp.asarray(v, device="cpu")), chain(v))
    run_in_threads(work, 4)
