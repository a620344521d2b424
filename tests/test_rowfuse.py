"""Row fusion (``compiler/rowfuse.py``): reductions over the last axis and the elementwise work that
reads them back run as one ``rowfuse`` kernel on wgpu, with NumPy's results on both devices."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler import plan_cache, rowfuse
from gpuarray.compiler.schedule import schedule
from gpuarray.runtime import replay

from .conftest import assert_same


def softmax(p: Any, x: Any) -> Any:
    e = p.exp(x - p.max(x, axis=-1, keepdims=True))
    return e / p.sum(e, axis=-1, keepdims=True)


def log_softmax(p: Any, x: Any) -> Any:
    z = x - p.max(x, axis=-1, keepdims=True)
    return z - p.log(p.sum(p.exp(z), axis=-1, keepdims=True))


def logsumexp(p: Any, x: Any) -> Any:
    m = p.max(x, axis=-1)
    return p.log(p.sum(p.exp(x - m[..., None]), axis=-1)) + m


def layernorm(p: Any, x: Any) -> Any:
    mu = p.mean(x, axis=-1, keepdims=True)
    var = p.mean((x - mu) ** 2, axis=-1, keepdims=True)
    w = p.linspace(0.5, 1.5, x.shape[-1], dtype=x.dtype) if p is np else p.linspace(
        0.5, 1.5, x.shape[-1], dtype=x.dtype, device=x.device)
    return (x - mu) / p.sqrt(var + 1e-5) * w + 0.25


def standardize(p: Any, x: Any) -> Any:
    return (x - p.mean(x, axis=-1, keepdims=True)) / (p.std(x, axis=-1, keepdims=True) + 1e-3)


def cosine(p: Any, x: Any) -> Any:
    return x / p.sqrt(p.sum(x * x, axis=-1, keepdims=True))


def share(p: Any, x: Any) -> Any:
    return x / p.sum(x, axis=-1, keepdims=True)


def std(p: Any, x: Any) -> Any:
    return p.std(x, axis=-1)


WORKLOADS: dict[str, Callable[[Any, Any], Any]] = {
    "softmax": softmax, "log_softmax": log_softmax, "logsumexp": logsumexp, "layernorm": layernorm,
    "standardize": standardize, "cosine": cosine, "share": share, "std": std}


def _x(shape: tuple[int, ...], dt: str = "float32", scale: float = 30.0, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-scale, scale, shape).astype(dt)


def _check(got: Any, want: np.ndarray, dt: str) -> None:
    tol = 2e-5 if dt == "float32" else 1e-12
    assert_same(got, want, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(want), initial=0))),
                check_signed_zero=False)


def dispatched_sources(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The WGSL of every ``WgpuProvider.dispatch`` from now on (in order), for the test's duration."""
    from gpuarray.providers import webgpu
    seen: list[str] = []
    orig = webgpu.WgpuProvider.dispatch

    def spy(self: Any, src: str, *a: Any, **k: Any) -> Any:
        seen.append(src)
        return orig(self, src, *a, **k)
    monkeypatch.setattr(webgpu.WgpuProvider, "dispatch", spy)
    return seen


def _dispatches(fn: Callable[[], Any]) -> tuple[Any, int]:
    with xp.config(offload="always"):
        xp.reset_metrics()
        r = fn()
        xp.evaluate(r)
        return r, xp.metrics()["dispatches"]


@pytest.mark.parametrize("name", list(WORKLOADS))
@pytest.mark.parametrize("shape", [(40, 300), (3, 5, 70), (1000,), (2, 1), (3, 1024), (2, 8192), (2, 8193),
                                   (300, 7), (5, 3, 32), (2, 33)], ids=str)     # short rows: a thread each
def test_matches_numpy(device: xp.Device, name: str, shape: tuple[int, ...]) -> None:
    fn = WORKLOADS[name]
    for dt in ("float32", "float64"):
        if not device.supports(np.dtype(dt)):
            continue
        x = _x(shape, dt)
        with xp.config(offload="always"):
            got = fn(xp, xp.asarray(x, device=device))
            _check(got, fn(np, x), dt)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_one_kernel_on_wgpu(wgpu_device: xp.Device, name: str) -> None:
    """Each workload is one dispatch over 64 x 500 float32 (the reduction's kernels are gone)."""
    x = _x((64, 500))
    fn = WORKLOADS[name]
    got, n = _dispatches(lambda: fn(xp, xp.asarray(x, device=wgpu_device)))
    assert n == 1
    _check(got, fn(np, x), "float32")


def test_kernel_structure(wgpu_device: xp.Device) -> None:
    x = xp.asarray(_x((8, 16)), device=wgpu_device)
    (k,) = schedule([softmax(xp, x)._node])
    assert k.kind == "rowfuse"
    assert [k.instrs[q].params[0] for q in k.operands] == ["max", "sum"]
    del k               # it holds the softmax's graph, whose max is also logsumexp's (hash-consed)
    (k,) = schedule([logsumexp(xp, x)._node])
    assert k.kind == "rowfuse" and k.out_shape == (8,)


@pytest.mark.parametrize("length", [40, 9])        # a workgroup per row, a thread per row
def test_special_values(device: xp.Device, length: int) -> None:
    x = _x((6, length))
    x[0, 3] = np.nan
    x[1, 5] = np.inf
    x[2, :] = -np.inf
    x[3, 7] = -0.0
    x[4, :] = 0.0
    with np.errstate(all="ignore"):
        for name in ("softmax", "logsumexp", "cosine", "std"):
            fn = WORKLOADS[name]
            with xp.config(offload="always"):
                got = fn(xp, xp.asarray(x, device=device))
                _check(got, fn(np, x), "float32")


def test_long_rows_and_many_rows(wgpu_device: xp.Device) -> None:
    """Rows longer than a workgroup, more rows than one dispatch dimension holds, and rows past
    MAX_ROW (not fused, still right)."""
    for shape in [(3, 4000), (3, 4099), (70000, 3), (64, rowfuse.MAX_ROW), (64, rowfuse.MAX_ROW + 1)]:
        x = _x(shape, scale=3.0, seed=shape[0])
        got, n = _dispatches(lambda x=x: softmax(xp, xp.asarray(x, device=wgpu_device)))
        _check(got, softmax(np, x), "float32")
        rows, length = shape
        fused = length <= rowfuse.MAX_ROW and (rows >= rowfuse.MIN_ROWS or length <= rowfuse.SHORT_ROW)
        assert (n == 1) == fused, (shape, n)


def test_what_is_not_fused(wgpu_device: xp.Device) -> None:
    """A reduction read elsewhere, along another axis, or through a view that moves rows keeps its
    own kernel; a reduction the user holds is computed again when it is read; results are NumPy's."""
    x = _x((50, 60))
    g = xp.asarray(x, device=wgpu_device)
    with xp.config(offload="always"):
        m = xp.max(g, axis=-1, keepdims=True)           # held by the user: computed again when read
        _check(g - m, x - x.max(axis=-1, keepdims=True), "float32")
        _check(m, x.max(axis=-1, keepdims=True), "float32")
        assert [k.kind for k in schedule([(g - m)._node])] == ["elementwise"]     # m is an input now
        del m
        s0 = xp.sum(g, axis=0, keepdims=True)           # axis 0: not a row reduction
        _check(g / s0, x / x.sum(axis=0, keepdims=True), "float32")
        flipped = g - xp.flip(xp.max(g, axis=-1, keepdims=True), axis=0)     # rows moved
        _check(flipped, x - np.flip(x.max(axis=-1, keepdims=True), axis=0), "float32")
        y = softmax(xp, g)
        z = xp.sum(y, axis=0)                           # y read by another kernel too
        xp.evaluate(y, z)
        _check(y, softmax(np, x), "float32")
        _check(z, softmax(np, x).sum(axis=0), "float32")


def test_integer_and_boolean_rows(device: xp.Device) -> None:
    a = np.random.default_rng(3).integers(-50, 50, (30, 17)).astype(np.int32)
    g = xp.asarray(a, device=device)
    with xp.config(offload="always"):
        assert_same(g - xp.min(g, axis=-1, keepdims=True), a - a.min(axis=-1, keepdims=True))
        assert_same(xp.where(xp.any(g > 45, axis=-1, keepdims=True), g, -g),
                    np.where(np.any(a > 45, axis=-1, keepdims=True), a, -a))
        assert_same(g * xp.sum(g, axis=-1, keepdims=True, dtype=xp.int32),
                    a * a.sum(axis=-1, keepdims=True, dtype=np.int32))


def test_placed_on_the_host(wgpu_device: xp.Device) -> None:
    """A rowfuse kernel placed on the host (offload='never') is evaluated by NumPy there."""
    x = _x((20, 30))
    with xp.config(offload="never"):
        for name in ("softmax", "logsumexp", "layernorm"):
            fn = WORKLOADS[name]
            _check(fn(xp, xp.asarray(x, device=wgpu_device)), fn(np, x), "float32")


def test_placement_counts_the_rows(wgpu_device: xp.Device) -> None:
    """Under offload='auto' a rowfuse kernel with one value per row is placed by the size of the
    rows it reads (90000 elements here), not by its 300 outputs."""
    x = _x((300, 300))
    with xp.config(offload="auto"):
        xp.reset_metrics()
        got = logsumexp(xp, xp.asarray(x, device=wgpu_device))
        xp.evaluate(got)
        assert xp.metrics()["dispatches"] == 1
    _check(got, logsumexp(np, x), "float32")


def test_subgroup_combine_and_without(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workgroup combines each row's partial results by subgroup shuffles (where the adapter
    has them) or by a shared-memory tree: the same results, rows of every length class (shorter
    than a workgroup, not a multiple of the four-element trip, several trips)."""
    from gpuarray.providers import wgpu_reduce  # (the switch rowfuse and reduce kernels share)
    for flag in (True, False):
        monkeypatch.setattr(wgpu_reduce, "USE_SUBGROUPS", flag)
        for shape in ((70, 100), (70, 1000), (65, 3001)):
            x = _x(shape)
            for name in ("softmax", "layernorm", "std", "logsumexp"):
                fn = WORKLOADS[name]
                with xp.config(offload="always"):
                    _check(fn(xp, xp.asarray(x, device=wgpu_device)), fn(np, x), "float32")


def test_cached_rows_with_generated_names(device: xp.Device) -> None:
    """The cached variant's element names do not collide with the generator's (dask's mean and var
    of float64 rows gave ``let c2`` twice: a shader that did not compile)."""
    x = np.random.default_rng(3).standard_normal((64, 700))
    g = xp.asarray(x, device=device)
    with xp.config(offload="always"):
        got = xp.var(g, axis=1, correction=1), xp.mean(g, axis=-1, keepdims=True) - g
    np.testing.assert_allclose(np.asarray(got[0]), np.var(x, axis=1, ddof=1), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(got[1]), np.mean(x, axis=-1, keepdims=True) - x, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("length", [33, 64, 513, 1024, 2047])
def test_rows_sharing_a_workgroup(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch, length: int) -> None:
    """Short rows take ``G`` threads each, ``256 / G`` rows a workgroup (``row_layout``): every row
    count (a last workgroup with rows past the end), with and without subgroups, per-element and
    per-row outputs, integer and boolean reductions."""
    from gpuarray.providers import wgpu_reduce, wgpu_rowfuse
    assert wgpu_rowfuse.row_layout(length)[1] < 256
    a = np.random.default_rng(length).integers(-50, 50, (9, length)).astype(np.int32)
    for flag in (True, False):
        monkeypatch.setattr(wgpu_reduce, "USE_SUBGROUPS", flag)
        for rows in (1, 5, 9):
            x = _x((rows, length), scale=3.0, seed=rows)
            for name in ("softmax", "layernorm", "logsumexp", "std"):
                fn = WORKLOADS[name]
                got, n = _dispatches(lambda fn=fn, x=x: fn(xp, xp.asarray(x, device=wgpu_device)))
                assert n == 1, (name, rows, length)
                _check(got, fn(np, x), "float32")
            g = xp.asarray(a[:rows], device=wgpu_device)
            with xp.config(offload="always"):
                assert_same(g - xp.min(g, axis=-1, keepdims=True), a[:rows] - a[:rows].min(axis=-1, keepdims=True))
                assert_same(xp.where(xp.any(g > 45, axis=-1, keepdims=True), g, -g),
                            np.where(np.any(a[:rows] > 45, axis=-1, keepdims=True), a[:rows], -a[:rows]))


def test_shared_workgroups_past_the_grid_limit(wgpu_device: xp.Device) -> None:
    """More than 65535 workgroups of 8 rows each (a 2-D grid) and a partial last workgroup."""
    x = _x((8 * 65536 + 3, 33), scale=3.0, seed=7)
    got, n = _dispatches(lambda: softmax(xp, xp.asarray(x, device=wgpu_device)))
    assert n == 1
    _check(got, softmax(np, x), "float32")


@pytest.mark.parametrize("length", [8193, 16384, 20000])
def test_wide_workgroups(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch, length: int) -> None:
    """Long rows take a workgroup of up to 1024 threads (``row_layout``'s ``WIDE``) where the adapter
    allows it: with and without subgroups, per-element and per-row outputs."""
    from gpuarray.providers import wgpu_reduce, wgpu_rowfuse
    k, grp = wgpu_rowfuse.row_layout(length, 1024)
    assert grp > 256 and k > 0
    for flag in (True, False):
        monkeypatch.setattr(wgpu_reduce, "USE_SUBGROUPS", flag)
        x = _x((65, length), scale=3.0, seed=length)
        for name in ("softmax", "layernorm", "logsumexp"):
            fn = WORKLOADS[name]
            got, n = _dispatches(lambda fn=fn, x=x: fn(xp, xp.asarray(x, device=wgpu_device)))
            assert n == 1, name
            _check(got, fn(np, x), "float32")


@pytest.mark.parametrize("length", [4096, 8192])
def test_vec4_words(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch, length: int) -> None:
    """Rows of exactly K x 256 elements read and write float32 of the row's shape as vec4 words
    (``exact`` 2): with and without subgroups, per-element and per-row outputs, a row of weights (and
    biases) broadcast over the rows, 1-D or (1, L), read as vec4 words too (also inside a reduction),
    an input also read through a view (then element by element), float64 rows (not vec4), NaN and
    infinities; the same results as the element form."""
    from gpuarray.providers import wgpu_reduce
    seen = dispatched_sources(monkeypatch)
    x = _x((65, length), scale=3.0, seed=length)
    x[3, 7] = np.nan
    x[5, :] = -np.inf
    x[6, 9] = np.inf
    w = _x((length,), scale=1.0, seed=1)
    b = _x((length,), scale=1.0, seed=2)

    def dev(p: Any, v: np.ndarray) -> Any:
        return v if p is np else p.asarray(v, device=wgpu_device)

    def layer(p: Any, a: Any, g: Any, h: Any) -> Any:
        mu = p.mean(a, axis=-1, keepdims=True)
        return (a - mu) / p.sqrt(p.mean((a - mu) ** 2, axis=-1, keepdims=True) + 1e-5) * g + h
    cases = {"softmax": lambda p, a: softmax(p, a), "logsumexp": lambda p, a: logsumexp(p, a),
             "weighted": lambda p, a: (a - p.mean(a, axis=-1, keepdims=True)) * w if p is np else
             (a - p.mean(a, axis=-1, keepdims=True)) * p.asarray(w, device=wgpu_device),
             "flipped": lambda p, a: a - p.max(p.flip(a, axis=-1), axis=-1, keepdims=True),
             "layernorm": lambda p, a: layer(p, a, p.reshape(dev(p, w), (1, length)), dev(p, b)),
             "wsum": lambda p, a: a * dev(p, w) / p.sum(p.abs(a * dev(p, w)), axis=-1, keepdims=True)}
    vec4_bindings = {"softmax": 2, "weighted": 3, "layernorm": 4, "wsum": 4}     # wsum: w uploaded twice
    with np.errstate(all="ignore"):
        for flag in (True, False):
            monkeypatch.setattr(wgpu_reduce, "USE_SUBGROUPS", flag)
            # a plan or an evaluation recorded under the other setting would be replayed, its
            # dispatches not through ``dispatch``: nothing seen
            plan_cache.clear()
            replay.clear()
            for name, fn in cases.items():
                seen.clear()
                got, n = _dispatches(lambda fn=fn: fn(xp, xp.asarray(x, device=wgpu_device)))
                assert n == 1, name
                _check(got, fn(np, x), "float32")
                if name in vec4_bindings:
                    assert seen, (name, "no dispatch seen")
                    assert seen[-1].count("array<vec4<f32>>") == vec4_bindings[name], name
        y = x.astype(np.float64)
        got, n = _dispatches(lambda: softmax(xp, xp.asarray(y, device=wgpu_device)))
        _check(got, softmax(np, y), "float64")


@pytest.mark.parametrize("dev", ["cpu", "wgpu:0"])
def test_a_target_derived_from_an_absorbed_reduction(dev: str) -> None:
    """A value computed from a row reduction that is itself a target of the evaluation (``r`` in
    ``xp.evaluate(x & r, r)`` with ``r = any(x, keepdims=True)``; ``m`` of a centring) keeps the reduction
    out of the fused kernel: its own kernel read the reduction, never written (an AttributeError; found
    by a 2500-example fuzz run)."""
    h = np.array([[True, False, True], [False, False, False]])
    f = np.random.default_rng(4).uniform(-3, 3, (5, 300)).astype(np.float32)
    with xp.config(offload="always"):
        x = xp.asarray(h, device=dev)
        r = xp.any(x, axis=1, keepdims=True)
        y = xp.bitwise_and(x, r)
        xp.evaluate(y, r)
        np.testing.assert_array_equal(np.asarray(y), h & h.any(axis=1, keepdims=True))
        np.testing.assert_array_equal(np.asarray(r), h.any(axis=1, keepdims=True))
        a = xp.asarray(f, device=dev)
        m = xp.mean(a, axis=1, keepdims=True) * 2
        c = a - m
        xp.evaluate(c, m)
        assert_same(m, f.mean(axis=1, keepdims=True) * 2, rtol=1e-5, atol=1e-6)   # sums in another order
        assert_same(c, f - f.mean(axis=1, keepdims=True) * 2, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(7, 5), (64, 33), (300, 3), (3, 300)])
@pytest.mark.parametrize("first", [True, False])
def test_a_reduction_of_an_absorbed_reduction(device: xp.Device, shape: tuple[int, int], first: bool) -> None:
    """A reduction of a reduction that a row or column kernel would absorb (``t + b + s`` with ``s =
    sum(b, axis=0)`` and ``t = sum(s)``) keeps the first out of the fused kernel: ``t``'s kernel, a leaf
    of the fused cone, read ``s``, never written (an AttributeError; found by a guard fuzz of
    ``where(isinf(e), ..., e)``)."""
    h = np.random.default_rng(5).uniform(-3, 3, shape).astype(np.float32)
    ax, other = (0, 1) if first else (1, 0)
    hs = h.sum(axis=ax, keepdims=True)
    with xp.config(offload="always"):
        b = xp.asarray(h, device=device)
        s = xp.sum(b, axis=ax, keepdims=True)
        t = xp.max(s, axis=other, keepdims=True)
        assert_same(t + b + s, hs.max(axis=other, keepdims=True) + h + hs, rtol=1e-5, atol=1e-4)  # sums' order
        s = xp.sum(b, axis=ax, keepdims=True)
        got = xp.where(xp.isinf(e := xp.sum(s, axis=other, keepdims=True) - (b + s)), -b, e)
        assert_same(got, hs.sum(axis=other, keepdims=True) - (h + hs), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dt", ["int32", "float32"])
def test_rows_of_one_element_and_a_value_per_row_are_different_kernels(device: xp.Device, dt: str) -> None:
    """A row kernel over rows of one element (``(33, 1)``: its outputs have the rows' shape, a value per
    element) and one writing a value per row of ``(300, 3)`` had one signature, so the second ran the
    first's shader and wrote each row's value over three elements (found by a scheduling fuzz, int32
    ``max`` and ``sum`` evaluated together; through the kernel cache on disk also in a later process)."""
    rng = np.random.default_rng(6)
    with xp.config(offload="always"):
        for shape in [(33, 1), (300, 3), (33, 1)]:
            ha, hb = (rng.integers(-3, 4, shape).astype(dt) for _ in range(2))
            a, b = xp.asarray(ha, device=device), xp.asarray(hb, device=device)
            m, s = xp.max(a, axis=1, keepdims=True), xp.sum(b, axis=1, keepdims=True)
            xp.evaluate(m, s)
            np.testing.assert_array_equal(np.asarray(m), ha.max(axis=1, keepdims=True))
            np.testing.assert_array_equal(np.asarray(s), hb.sum(axis=1, keepdims=True))


@pytest.mark.parametrize("length", [33000, 65536])
def test_long_rows_moments_in_one_walk(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch, length: int) -> None:
    """Rows too long to keep in registers are walked once per reduction, except a sum of squared
    deviations from the row's mean (``var``, ``std``, standardising), computed in the mean's walk
    (Welford's method shifted by the row's first element, the threads merged by a tree): one kernel,
    NumPy's results for rows whose mean is 10^3 standard deviations from 0, a constant row, NaN and
    infinities, rows that leave the last trip partly empty; the same with two walks."""
    from .test_colfuse import moments_setting
    seen = dispatched_sources(monkeypatch)
    rng = np.random.default_rng(length)
    base = rng.uniform(-3, 3, (64, length)) + 1e3
    base[0] = 0.1
    base[1, 5] = np.nan
    base[2, 7] = np.inf
    forms = {"std": lambda p, a: p.std(a, axis=1),
             "var": lambda p, a: p.var(a, axis=-1, keepdims=True) + 1,
             "standardize": lambda p, a: (a - p.mean(a, axis=1, keepdims=True)) / p.std(a, axis=1, keepdims=True),
             "two in one walk": lambda p, a: p.std(a, axis=1) + p.var(a * 2, axis=1)}
    for dt in ("float32", "float64"):
        if not wgpu_device.supports(np.dtype(dt)):
            continue
        x = base.astype(dt)
        for name, fn in forms.items():
            with np.errstate(all="ignore"):
                want = fn(np, x.astype(np.float64))
            for on in (True, False):
                moments_setting(monkeypatch, wgpu_device, on)
                seen.clear()
                with np.errstate(all="ignore"):
                    got, n = _dispatches(lambda fn=fn, x=x: fn(xp, xp.asarray(x, device=wgpu_device)))
                if n == 1:
                    assert ("cw_q" in seen[-1]) == on, (name, dt)
                else:
                    assert dt == "float64", (name, dt, n)
                g = np.asarray(got).astype(np.float64)
                assert np.array_equal(np.isnan(g[1:]), np.isnan(want[1:])), (name, dt)
                fin = np.isfinite(want[1:])
                scale = np.max(np.abs(want[1:][fin]))
                tol = 2e-4 if dt == "float32" else 1e-11
                np.testing.assert_allclose(g[1:][fin], want[1:][fin], rtol=tol, atol=tol * scale)
    moments_setting(monkeypatch, wgpu_device, True)
