"""The ``__array_function__`` registry's decorators (``gpuarray/interop/registry.py``).

``register_array`` writes the "this argument must be a GpuArray (of these dtypes, without
``out=``, with these other arguments on the host)" check once for the adapters. Each kind of
check is exercised here on both providers: a call it accepts runs on the device (no host
fallback, refused under ``fallback="raise"``), a call it declines runs on the host as one
counted fallback; both agree with NumPy, special values included.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.interop import registry
from gpuarray.interop.host import _FALLBACK

from .conftest import assert_same

SPECIAL_F = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -2.5, 1.25, 1e300, -1e-300])
SPECIAL_I = np.array([np.iinfo(np.int32).min, -1, 0, 1, np.iinfo(np.int32).max], dtype=np.int32)
BOOLS = np.array([True, False, True])


def _gpu(x: Any, device: xp.Device) -> Any:
    if isinstance(x, (list, tuple)):
        return type(x)(_gpu(v, device) for v in x)
    return xp.asarray(x, device=device) if isinstance(x, np.ndarray) else x


def _compare(got: Any, want: Any, device: xp.Device) -> None:
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want)
        for g, w in zip(got, want):
            _compare(g, w, device)
        return
    assert isinstance(got, xp.GpuArray) and got.device == device
    assert_same(got, np.asarray(want), rtol=1e-12)      # exact but for wgpu's transcendentals (angle)


def _run(device: xp.Device, fn: Any, args: tuple, kwargs: dict, on_device: bool) -> None:
    """``fn`` on GpuArrays agrees with NumPy (its result, or its exception), on the device or as one
    counted host fallback."""
    gargs, gkwargs = [_gpu(a, device) for a in args], {k: _gpu(v, device) for k, v in kwargs.items()}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            want, error = fn(*args, **kwargs), None
        except Exception as exc:  # noqa: BLE001 - the same exception is expected
            want, error = None, exc
        if not on_device:
            with xp.config(fallback="raise"), pytest.raises(xp.HostFallbackError):
                fn(*gargs, **gkwargs)
        xp.reset_metrics()
        with xp.config(fallback="raise" if on_device else "silent"):
            if error is not None:
                with pytest.raises(type(error), match=re.escape(str(error))):
                    fn(*gargs, **gkwargs)
                return
            got = fn(*gargs, **gkwargs)
        assert xp.metrics()["host_fallbacks"] == (0 if on_device else 1)
    _compare(got, want, device)


A = np.arange(6.0).reshape(2, 3)
CASES: list[tuple[str, Any, tuple, dict, bool]] = [
    # host=: the named argument must not be a GpuArray
    ("tile", np.tile, (A, 2), {}, True),
    ("tile reps on device", np.tile, (A, np.array([2, 1])), {}, False),
    ("tile empty", np.tile, (np.zeros((0, 3)), (2, 1)), {}, True),
    ("roll", np.roll, (SPECIAL_F, 3), {}, True),
    ("roll shift on device", np.roll, (SPECIAL_F, np.array(3)), {}, False),
    ("split", np.split, (SPECIAL_F, [2, 5]), {}, True),
    ("split sections on device", np.split, (SPECIAL_F, np.array([2, 5])), {}, False),
    ("array_split empty", np.array_split, (np.zeros(0), 3), {}, True),
    ("partition kth on device", np.partition, (SPECIAL_I, np.array(2)), {}, False),
    # dtypes=
    ("round float", np.round, (SPECIAL_F,), {"decimals": 1}, True),
    ("round negative decimals", np.round, (SPECIAL_F,), {"decimals": -1}, True),
    ("round int", np.round, (SPECIAL_I,), {"decimals": -2}, True),
    ("round 0-d", np.round, (np.array(-2.5),), {}, True),
    ("round complex", np.round, (SPECIAL_F - 1.25j,), {"decimals": 1}, False),
    ("gradient", np.gradient, (SPECIAL_I,), {}, True),
    ("gradient bool", np.gradient, (BOOLS,), {}, False),        # NumPy's TypeError, from the host
    ("repeat bool repeats", np.repeat, (A, np.array([True, False, True])), {"axis": 1}, True),
    ("take bool indices", np.take, (A, np.array([True, False])), {"axis": 0}, True),
    ("concatenate 0-d, axis None", np.concatenate, ([np.array(1.5), np.array(-2.0)],), {"axis": None}, True),
    ("concatenate 0-d", np.concatenate, ([np.array(1.5), np.array(-2.0)],), {}, True),   # NumPy's ValueError
    ("nanstd 0-d", np.nanstd, (np.array(2.5),), {}, False),
    ("polyval 0-d p", np.polyval, (np.array(2.0), SPECIAL_F), {}, False),             # NumPy's TypeError
    ("gradient complex", np.gradient, (np.array([0.5, -2.5, 1.25, 3.0, -0.0]) * (1 - 2j),), {"edge_order": 2}, True),
    ("median", np.median, (SPECIAL_I,), {}, True),
    ("median bool", np.median, (BOOLS,), {}, False),
    ("isposinf", np.isposinf, (SPECIAL_F,), {}, True),
    # real=
    ("real_if_close", np.real_if_close, (SPECIAL_F,), {}, True),
    ("real_if_close complex", np.real_if_close, (SPECIAL_F + 1e-20j,), {}, False),
    ("angle", np.angle, (SPECIAL_F,), {"deg": True}, True),
    ("angle complex", np.angle, (np.array([1j, -1.0 + 0j, -0.0 - 1j]),), {}, False),
    # no_out=
    ("fix", np.fix, (SPECIAL_F,), {}, True),
    ("fix 0-d", np.fix, (np.array(-0.5),), {}, True),
    ("compress", np.compress, (np.array([True, False, True]), A), {"axis": 1}, True),
    # the stackers' own check: a non-empty list or tuple of arrays
    ("vstack dtype", np.vstack, ([SPECIAL_F, SPECIAL_F],), {"dtype": np.float32}, True),
    ("hstack 0-d", np.hstack, ((np.array(-0.0), SPECIAL_F),), {}, True),
    ("hstack 2-d", np.hstack, ([A, A[:, :1]],), {}, True),
    ("dstack", np.dstack, ([A, -A],), {}, True),
    ("dstack one", np.dstack, ([SPECIAL_I],), {}, True),
    ("vstack of an array", np.vstack, (A,), {}, False),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_register_array_checks(device, case):
    _, fn, args, kwargs, on_device = case
    _run(device, fn, args, kwargs, on_device)


def test_register_array_out_given(device):
    """``no_out``: with ``out=`` the call runs on the host and NumPy writes the GpuArray ``out``."""
    g = xp.asarray(SPECIAL_F, device=device)
    for fn in (np.isposinf, np.fix):
        out = xp.zeros(SPECIAL_F.shape, dtype=fn(SPECIAL_F).dtype, device=device)
        xp.reset_metrics()
        with xp.config(fallback="silent"):
            r = fn(g, out=out)
        assert r is out and xp.metrics()["host_fallbacks"] == 1
        assert_same(out, fn(SPECIAL_F))


def test_register_array_argument_on_host(device):
    """``arg``: a NumPy array there (the call reached us through another argument) runs on the host."""
    dst = np.zeros(3, dtype=np.int32)
    xp.reset_metrics()
    with xp.config(fallback="silent"):
        assert np.copyto(dst, xp.asarray(SPECIAL_I[1:4], device=device)) is None
    assert xp.metrics()["host_fallbacks"] == 1
    np.testing.assert_array_equal(dst, SPECIAL_I[1:4])
    with xp.config(fallback="raise"), pytest.raises(xp.HostFallbackError, match="numpy.copyto"):
        np.copyto(dst, xp.asarray(SPECIAL_I[:3], device=device))


def test_names_missing_from_numpy_register_nothing():
    before = (dict(registry.FUNCTIONS), dict(registry.LIKE))

    def impl(*args: Any) -> Any:
        raise AssertionError("never called")

    registry.register("no_such_numpy_function")(impl)
    registry.register_array("no_such_numpy_function", arg="a")(impl)
    registry.register_like("no_such_numpy_function")(impl)
    assert (registry.FUNCTIONS, registry.LIKE) == before


def test_register_array_adapter(device, monkeypatch):
    """The adapter keeps the impl's name and doc, hands it the GpuArray, and declines anything else."""
    monkeypatch.setitem(registry.FUNCTIONS, np.fliplr, registry.FUNCTIONS[np.fliplr])   # restored afterwards
    seen = []

    def _my_fliplr(m: Any, p: dict) -> Any:
        """doc"""
        seen.append(m)
        return m[:, ::-1]

    adapter = registry.register_array(np.fliplr, arg="m")(_my_fliplr)
    assert adapter.__name__ == "_my_fliplr" and adapter.__doc__ == "doc"
    assert adapter({"m": A}) is _FALLBACK and not seen
    g = xp.asarray(A, device=device)
    with xp.config(fallback="raise"):
        assert_same(np.fliplr(g), np.fliplr(A))
    assert seen == [g]


def test_bind_fast_path_matches_signature_bind() -> None:
    """``registry._bind``'s fast path (no inspect.Signature.bind per call) gives what bind gives,
    and NumPy's TypeError where the call does not fit the signature."""
    import inspect

    def slow(f: Any, *a: Any, **k: Any) -> dict:
        b = inspect.signature(f).bind(*a, **k)
        b.apply_defaults()
        return dict(b.arguments)

    calls = [(np.std, (1,), {"axis": 0}), (np.std, (1, 0), {}), (np.std, (1,), {"ddof": 1, "keepdims": True}),
             (np.sum, (1, None, None, None, False), {}), (np.percentile, (1, 50), {"method": "lower"}),
             (np.histogram, (1,), {"bins": 5, "range": (0, 1)})]
    for f, a, k in calls:
        assert registry._bind(f, a, k) == slow(f, *a, **k)
    with pytest.raises(TypeError):
        registry._bind(np.std, (1,), {"axes": 0})                 # unknown keyword
    with pytest.raises(TypeError):
        registry._bind(np.std, (1, 0, None, None, 0, False, 1, 2, 3, 4), {})   # too many
    with pytest.raises(TypeError):
        registry._bind(np.std, (), {})                            # a is required
