"""Column fusion (``compiler/colfuse.py``): reductions over the first axis and the elementwise work
that reads them back run as one kernel on wgpu, with NumPy's results on both devices."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.compiler import colfuse, plan_cache
from gpuarray.compiler.schedule import schedule
from gpuarray.render.wgsl_colfuse import render_colfuse
from gpuarray.runtime import replay

from .conftest import assert_same


def std(p: Any, x: Any) -> Any:
    return p.std(x, axis=0)


def var(p: Any, x: Any) -> Any:
    return p.var(x, axis=0, correction=1) if p is xp else np.var(x, axis=0, ddof=1)


def center(p: Any, x: Any) -> Any:
    return x - p.mean(x, axis=0)


def standardize(p: Any, x: Any) -> Any:
    """scikit-learn's StandardScaler: (x - mean) / std, columns of zero spread kept at 1."""
    s = p.std(x, axis=0)
    return (x - p.mean(x, axis=0)) / p.where(s == 0, 1.0, s)


def share(p: Any, x: Any) -> Any:
    return x / p.sum(x, axis=0)


def std_keep(p: Any, x: Any) -> Any:
    return p.std(x, axis=0, keepdims=True)


def center_keep(p: Any, x: Any) -> Any:
    return x - p.mean(x, axis=0, keepdims=True)


def spread(p: Any, x: Any) -> Any:
    return p.max(x, axis=0) - p.min(x, axis=0)


WORKLOADS: dict[str, Callable[[Any, Any], Any]] = {
    "std": std, "var": var, "center": center, "standardize": standardize, "share": share,
    "std_keep": std_keep, "center_keep": center_keep, "spread": spread}
SHAPES = [(256, 256), (3, 1000), (4097, 33), (1, 5), (70000, 3), (40, 6, 7), (2, 3, 130)]


def _x(shape: tuple[int, ...], dt: str = "float32", seed: int = 0) -> np.ndarray:
    # positive, away from 0: the column sums that ``share`` divides by are not cancellations
    return np.random.default_rng(seed).uniform(0.5, 3.0, shape).astype(dt)


def _check(got: Any, want: np.ndarray, dt: str) -> None:
    tol = 1e-4 if dt == "float32" else 1e-11
    fin = np.isfinite(want)
    scale = float(np.max(np.abs(want[fin]), initial=0.0)) if fin.any() else 0.0
    assert_same(got, want, rtol=tol, atol=tol * max(1.0, scale), check_signed_zero=False)


def _dispatches(fn: Callable[[], Any]) -> tuple[Any, int]:
    with xp.config(offload="always"):
        xp.reset_metrics()
        r = fn()
        xp.evaluate(r)
        return r, xp.metrics()["dispatches"]


def moments_setting(monkeypatch: pytest.MonkeyPatch, device: xp.Device, on: bool) -> None:
    """``colfuse.MOMENTS`` set to ``on`` with nothing planned, replayed or rendered under the other
    setting kept (the rendered shaders are cached by kernel signature, which does not name it)."""
    monkeypatch.setattr(colfuse, "MOMENTS", on)
    plan_cache.clear()
    replay.clear()
    prov = getattr(device, "provider", None)
    if hasattr(prov, "rendered"):
        prov.rendered.clear()
        monkeypatch.setattr(prov, "kcache", None)


def _fused(shape: tuple[int, ...], dt: str = "float32") -> bool:
    rows, cols = shape[0], int(np.prod(shape[1:]))
    w = colfuse.tile_width(cols, np.dtype(dt).itemsize)
    return rows <= colfuse.SHORT_COL or -(-cols // w) >= colfuse.MIN_TILES


@pytest.mark.filterwarnings("ignore:Degrees of freedom")
@pytest.mark.parametrize("name", list(WORKLOADS))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_numpy(device: xp.Device, name: str, shape: tuple[int, ...]) -> None:
    fn = WORKLOADS[name]
    for dt in ("float32", "float64"):
        if not device.supports(np.dtype(dt)):
            continue
        x = _x(shape, dt, seed=len(shape))
        with xp.config(offload="always"), np.errstate(all="ignore"):
            got = fn(xp, xp.asarray(x, device=device))
            _check(got, fn(np, x), dt)


@pytest.mark.parametrize("shape", [(256, 256), (4096, 1024), (3, 1000), (2, 3, 130), (70000, 3), (4097, 33)],
                         ids=str)
def test_dispatches_on_wgpu(wgpu_device: xp.Device, shape: tuple[int, ...]) -> None:
    """``std``, ``var`` and standardising are one dispatch where columns fuse (one pass: the
    reductions' kernels and their partial passes are gone); long columns with few tiles keep the
    reduction kernels, which split them over many workgroups."""
    x = _x(shape, seed=1)
    for name in ("std", "var", "standardize", "center", "share", "std_keep"):
        fn = WORKLOADS[name]
        got, n = _dispatches(lambda fn=fn: fn(xp, xp.asarray(x, device=wgpu_device)))
        _check(got, fn(np, x), "float32")
        if _fused(shape):
            assert n == 1, (name, shape, n)
        else:
            assert n > 1, (name, shape, n)


def test_kernel_structure(wgpu_device: xp.Device) -> None:
    """One column-fused ``rowfuse`` kernel: reductions in dependency order, ``var`` about ``mean``
    computed in the same walk (``moments``; one walk after ``mean`` without it); independent reductions
    share a walk."""
    x = xp.asarray(_x((64, 48)), device=wgpu_device)
    (k,) = schedule([xp.std(x, axis=0)._node])
    assert (k.kind, k.attrs, k.out_shape) == ("rowfuse", (0,), (48,))
    assert [k.instrs[q].params for q in k.operands] == [("sum", 0), ("sum", 0)]
    assert colfuse.levels(k, merged=False) == [[0], [1]]
    assert colfuse.levels(k) == [[0, 1]] and list(colfuse.moments(k)) == [1]
    src = render_colfuse(k).source
    assert src.count("for (var cf_t") == 1 and src.count("workgroupBarrier") == 1
    del k
    (k,) = schedule([spread(xp, x)._node])
    assert colfuse.levels(k) == [[0, 1]]
    assert render_colfuse(k).source.count("workgroupBarrier") == 1
    del k
    (k,) = schedule([standardize(xp, x)._node])
    assert k.out_shape == (64, 48) and len(k.operands) == 2


def test_special_values(device: xp.Device) -> None:
    x = _x((300, 40))
    x[0, 3] = np.nan
    x[5, 5] = np.inf
    x[:, 7] = -np.inf
    x[3, 8] = -np.inf
    x[10, 8] = np.inf
    x[:, 9] = 0.0
    for dt in ("float32", "float64"):
        if not device.supports(np.dtype(dt)):
            continue
        xd = x.astype(dt)
        with np.errstate(all="ignore"), xp.config(offload="always"):
            for name in ("std", "var", "center", "standardize", "share", "spread", "std_keep"):
                fn = WORKLOADS[name]
                _check(fn(xp, xp.asarray(xd, device=device)), fn(np, xd), dt)


def test_tile_edges(device: xp.Device) -> None:
    """Column counts that leave a tile partly empty and row counts that leave a trip partly empty,
    for every tile width."""
    for shape in [(33, 70), (129, 9), (1000, 1), (7, 2049), (513, 4, 3)]:
        for dt in ("float32", "float64"):
            if not device.supports(np.dtype(dt)):
                continue
            x = _x(shape, dt, seed=shape[0])
            with xp.config(offload="always"):
                for name in ("std", "center_keep"):
                    fn = WORKLOADS[name]
                    _check(fn(xp, xp.asarray(x, device=device)), fn(np, x), dt)


def test_tile_width() -> None:
    assert colfuse.tile_width(8192, 8) == 16 and colfuse.tile_width(8192, 4) == 16
    assert colfuse.tile_width(1 << 16, 4) == 64
    assert colfuse.tile_width(1024, 4) == 8 and colfuse.tile_width(1024, 8) == 4
    assert colfuse.tile_width(3, 4) == 4 and colfuse.tile_width(1, 8) == 1


def test_what_is_not_fused(wgpu_device: xp.Device) -> None:
    """A reduction held by the user, read by another kernel, or read through a view that moves
    columns keeps its own kernel; results are NumPy's."""
    x = _x((200, 60))
    g = xp.asarray(x, device=wgpu_device)
    with xp.config(offload="always"):
        m = xp.mean(g, axis=0)                   # held by the user: computed again when read
        _check(g - m, x - x.mean(axis=0), "float32")
        _check(m, x.mean(axis=0), "float32")
        assert [k.kind for k in schedule([(g - m)._node])] == ["elementwise"]     # m is an input now
        del m
        flipped = g - xp.flip(xp.mean(g, axis=0), axis=0)       # columns moved
        _check(flipped, x - np.flip(x.mean(axis=0), axis=0), "float32")
        assert "rowfuse" not in [k.kind for k in schedule([(g - xp.flip(xp.mean(g, axis=0), axis=0))._node])]
        c = center(xp, g)
        z = xp.sum(c, axis=1)                    # c read by another kernel too
        xp.evaluate(c, z)
        _check(c, center(np, x), "float32")
        _check(z, center(np, x).sum(axis=1), "float32")
        s = xp.sum(g, axis=(0, 1))               # not a reduction over the first axis only
        _check(g / s, x / x.sum(), "float32")
        mu = xp.mean(g, axis=0)
        both = xp.std(g, axis=0), g - mu         # groups of two shapes read one mean
        xp.evaluate(*both)
        _check(both[0], x.std(axis=0), "float32")
        _check(both[1], x - x.mean(axis=0), "float32")


def test_user_held_reduction_is_not_absorbed(wgpu_device: xp.Device) -> None:
    """std with its mean held by the user: the mean is written once, the rest still right."""
    x = _x((256, 64), "float64" if wgpu_device.supports(np.dtype("float64")) else "float32")
    g = xp.asarray(x, device=wgpu_device)
    with xp.config(offload="always"):
        mu = xp.mean(g, axis=0)
        z = (g - mu) / xp.std(g, axis=0)
        _check(z, (x - x.mean(axis=0)) / x.std(axis=0), str(x.dtype))
        _check(mu, x.mean(axis=0), str(x.dtype))


def test_integer_and_boolean_columns(device: xp.Device) -> None:
    a = np.random.default_rng(3).integers(-50, 50, (300, 17)).astype(np.int32)
    g = xp.asarray(a, device=device)
    with xp.config(offload="always"):
        assert_same(g - xp.min(g, axis=0), a - a.min(axis=0))
        assert_same(xp.where(xp.any(g > 45, axis=0), g, -g), np.where(np.any(a > 45, axis=0), a, -a))
        assert_same(xp.max(g, axis=0) - xp.min(g, axis=0), a.max(axis=0) - a.min(axis=0))
        assert_same(g * xp.sum(g, axis=0, dtype=xp.int32), a * a.sum(axis=0, dtype=np.int32))


def test_placed_on_the_host(wgpu_device: xp.Device) -> None:
    """A column-fused kernel placed on the host (offload='never') is evaluated by NumPy there."""
    x = _x((20, 30))
    with xp.config(offload="never"):
        for name in ("std", "standardize", "share"):
            fn = WORKLOADS[name]
            _check(fn(xp, xp.asarray(x, device=wgpu_device)), fn(np, x), "float32")


def test_repeated_evaluation_replays(wgpu_device: xp.Device) -> None:
    """A cached ``std(axis=0)`` (plan cache and replayed program) gives new data's results."""
    for seed in range(3):
        x = _x((256, 256), seed=seed)
        got, n = _dispatches(lambda x=x: xp.std(xp.asarray(x, device=wgpu_device), axis=0))
        assert n == 1
        _check(got, x.std(axis=0), "float32")


def test_many_rows_fused(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """Columns of more rows than one dispatch dimension holds (70000), fused here by lowering
    MIN_TILES (a GPU leaves them to the reduction kernels): every trip and tail right."""
    monkeypatch.setattr(colfuse, "MIN_TILES", 1)
    plan_cache.clear()          # its templates hold the unfused plans
    try:
        for dt in ("float32", "float64"):
            if not wgpu_device.supports(np.dtype(dt)):
                continue
            x = _x((70000, 3), dt, seed=7)
            for name in ("std", "standardize"):
                fn = WORKLOADS[name]
                got, n = _dispatches(lambda fn=fn, x=x: fn(xp, xp.asarray(x, device=wgpu_device)))
                assert n == 1
                _check(got, fn(np, x), dt)
    finally:
        plan_cache.clear()


def test_large_operands_fuse_where_it_pays(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``MAX_BYTES`` (lowered here to 64 KiB): column-shaped targets stay one kernel where there are
    ``TARGET_TILES`` column tiles (4096 float32 columns), or a quarter of that (1024 columns) where one walk
    computes them (``std`` with ``moments``, ``max - min``), and are split where there are fewer (512);
    centring and ``x / sum`` are separate kernels; standardising is one kernel up to twice ``MAX_BYTES``
    (two levels of reductions saved) and separate past it. NumPy's values either way."""
    monkeypatch.setattr(colfuse, "MAX_BYTES", 1 << 16)
    plan_cache.clear()          # its templates hold the plans made under the default
    try:
        cases = [((8, 4096), "std", True), ((32, 1024), "std", True), ((64, 512), "std", False),
                 ((32, 1024), "spread", True), ((64, 512), "spread", False), ((8, 4096), "center", False),
                 ((8, 4096), "share", False), ((6, 4096), "standardize", True),
                 ((16, 4096), "standardize", False), ((2, 4096), "center", True)]   # 32 KiB: below
        for shape, name, fused in cases:
            x = _x(shape, seed=3)
            fn = WORKLOADS[name]
            got, n = _dispatches(lambda fn=fn, x=x: fn(xp, xp.asarray(x, device=wgpu_device)))
            assert (n == 1) == fused, (shape, name, n)
            _check(got, fn(np, x), "float32")
    finally:
        plan_cache.clear()


MOMENT_FORMS: dict[str, Callable[[Any, Any], Any]] = {
    "std": std, "var": var,
    "square": lambda p, x: p.mean((x - p.mean(x, axis=0, keepdims=True)) ** 2, axis=0),
    "reversed": lambda p, x: p.sum((p.mean(x, axis=0) - x) * (p.mean(x, axis=0) - x), axis=0) * 0.5,
    "expression": lambda p, x: p.std(p.abs(x) * 2 - 1, axis=0),
    "about another mean": lambda p, x: p.sum((x - p.mean(x[::-1] * 3, axis=0)) ** 2, axis=0) / 3,
    "about the std": lambda p, x: p.sum((x - p.std(x, axis=0)) ** 2, axis=0) + 1,    # its std's var only
    "two in one walk": lambda p, x: p.std(x, axis=0) + p.var(x * 2, axis=0),
    "about the extremes": lambda p, x: p.sum((x - p.max(x, axis=0, keepdims=True)) ** 2, axis=0) + p.sqrt(
        p.sum((x - p.min(x, axis=0, keepdims=True)) ** 2, axis=0))}
# per form: (moments in one walk, walks without them)
MOMENT_COUNTS = {"about the std": (1, 3), "two in one walk": (2, 2), "about the extremes": (2, 2)}
# (column fusion takes elementwise targets: a bare ``sum`` keeps its reduction kernels)


@pytest.mark.filterwarnings("ignore:Degrees of freedom")
@pytest.mark.parametrize("shape", [(256, 256), (1, 70), (5, 300), (129, 9), (1031, 40), (300, 4, 3)], ids=str)
def test_moments_in_one_walk(device: xp.Device, monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...]) -> None:
    """Sums of squared deviations from a column value (``var``, ``std``, written as ``**2``, as a product,
    reversed, of an expression, about another array's mean) are computed in the first walk (Welford's
    method, shifted by the column's first value): NumPy's results to float32 rounding for data whose
    mean is 10^4 standard deviations from 0, constant columns, NaN and infinities, rows that leave the
    last trip partly empty; the same as the two walks without it."""
    seen: set[str] = set()
    rng = np.random.default_rng(shape[0])
    base = rng.uniform(-3, 3, shape) + 1e4 * (rng.uniform(size=shape[1:]) > 0.5)
    base[:, 0] = 0.1                            # constant column
    if shape[0] > 2:
        base[1, 1] = np.nan
        base[2, 2 % base.shape[1]] = np.inf
    for dt in ("float32", "float64"):
        if not device.supports(np.dtype(dt)):
            continue
        x = base.astype(dt)
        for name, fn in MOMENT_FORMS.items():
            want = fn(np, x.astype(np.float64)).astype(dt)
            results = []
            for on in (True, False):
                moments_setting(monkeypatch, device, on)
                with np.errstate(all="ignore"), xp.config(offload="always"):
                    g = xp.asarray(x, device=device)
                    got = fn(xp, g)
                    if device.kind != "cpu" and x.size > 256:
                        ks = schedule([got._node])
                        if len(ks) == 1 and ks[0].kind == "rowfuse":
                            k = ks[0]
                            moms, walks = MOMENT_COUNTS.get(name, (1, 2))
                            assert len(colfuse.moments(k)) == moms * on, name
                            assert len(colfuse.levels(k)) == walks - on, name
                            seen.add(name)
                    results.append(np.asarray(got))
            for r in results:
                _check(r, want, dt)
    if device.kind != "cpu" and _fused(shape) and base.size > 256:
        assert seen == set(MOMENT_FORMS), seen
    plan_cache.clear()
