"""Creation functions against NumPy, on both providers."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp

from .conftest import assert_same, device_numerics, flush_subnormals


def test_asarray_from_python(device):
    assert_same(xp.asarray([1, 2, 3], device=device), np.array([1, 2, 3], dtype=device.default_int))
    assert_same(xp.asarray([1.5, -0.0], device=device), np.array([1.5, -0.0], dtype=device.default_float))
    assert_same(xp.asarray([True, False], device=device), np.array([True, False]))
    assert_same(xp.asarray(3.0, device=device), np.asarray(3.0, dtype=device.default_float))
    assert_same(xp.asarray([[1, 2], [3, 4]], dtype=xp.int8, device=device), np.array([[1, 2], [3, 4]], np.int8))
    assert_same(xp.asarray([], device=device), np.array([], dtype=device.default_float))


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                   "uint64", "float32", "float64"])
def test_asarray_roundtrip_every_dtype(device, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        host = np.array([0.0, -0.0, 1.5, np.nan, np.inf, -np.inf, np.finfo(dt).max, np.finfo(dt).tiny], dt)
    elif dt.kind == "b":
        host = np.array([True, False, True])
    else:
        info = np.iinfo(dt)
        host = np.array([info.min, info.max, 0, 1, info.max // 3], dt)
    g = xp.asarray(host, device=device)
    assert g.dtype == dt
    assert_same(g, host)
    # through a kernel and back
    assert_same(g * 1 if dt.kind != "b" else g & True, host * dt.type(1) if dt.kind != "b" else host)
    assert_same(g[::-1], host[::-1])


def test_asarray_from_gpuarray_and_copy(device):
    a = xp.asarray([1.0, 2.0], device=device)
    assert xp.asarray(a) is a
    b = xp.asarray(a, copy=True)
    assert b is not a and b.tolist() == [1.0, 2.0]
    assert_same(xp.asarray(a, dtype=xp.int32), np.array([1, 2], np.int32))
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(a, dtype=xp.int32, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(np.zeros(3), copy=False, device=device)


def test_asarray_to_other_device(device):
    a = xp.asarray([1.0, 2.0], device="cpu")
    b = xp.asarray(a, device=device)
    assert b.device == device
    assert_same(b * 2, np.array([2.0, 4.0]))
    assert a.to_device(device).device == device


def test_asarray_errors(device):
    with pytest.raises(TypeError, match="complex data"):
        xp.asarray([1 + 2j], dtype=xp.float32, device=device)
    with pytest.raises(TypeError, match="does not support dtype"):
        xp.asarray(np.zeros(2, np.clongdouble), device=device)
    with pytest.raises(TypeError):
        xp.asarray(["a", "b"], device=device)
    with pytest.raises(OverflowError):
        xp.asarray(2**70, device=device)
    with pytest.raises(OverflowError):
        xp.asarray([300], dtype=xp.int8, device=device)
    with pytest.raises(ValueError):
        xp.asarray([[1, 2], [3]], device=device)


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), 4])
def test_zeros_ones_empty(device, fn, shape):
    got = getattr(xp, fn)(shape, device=device)
    want = (np.ones if fn == "ones" else np.zeros)(shape, dtype=device.default_float)
    assert_same(got, want)
    assert_same(getattr(xp, fn)(shape, dtype=xp.int16, device=device), want.astype(np.int16))


def test_full(device):
    assert_same(xp.full((2, 2), 7, device=device), np.full((2, 2), 7, dtype=device.default_int))
    assert_same(xp.full(3, -0.0, device=device), np.full(3, -0.0, dtype=device.default_float))
    assert_same(xp.full(3, float("nan"), dtype=xp.float32, device=device), np.full(3, np.nan, np.float32))
    assert_same(xp.full((2,), True, device=device), np.full((2,), True))
    assert_same(xp.full((2,), 255, dtype=xp.uint8, device=device), np.full((2,), 255, np.uint8))
    with pytest.raises(OverflowError):
        xp.full(2, 300, dtype=xp.int8, device=device)
    with pytest.raises(TypeError):
        xp.full(2, "x", device=device)
    with pytest.raises(ValueError, match="negative dimensions"):
        xp.full((-1,), 0, device=device)


def test_like_functions(device):
    a = xp.asarray(np.arange(6, dtype=np.int16).reshape(2, 3), device=device)
    assert_same(xp.zeros_like(a), np.zeros((2, 3), np.int16))
    assert_same(xp.ones_like(a, dtype=xp.float32), np.ones((2, 3), np.float32))
    assert_same(xp.empty_like(a), np.zeros((2, 3), np.int16))
    assert_same(xp.full_like(a, 9), np.full((2, 3), 9, np.int16))
    assert xp.zeros_like(a).device == device


@pytest.mark.parametrize("args", [(5,), (2, 10), (10, 2, -3), (0,), (3, 3), (-5, 5, 2), (1, 2, 0.25),
                                  (0.0, 1.0, 0.1), (10, 0, -1.5)])
def test_arange(device, args):
    got = xp.arange(*args, device=device)
    is_float = any(isinstance(a, float) for a in args)
    want = np.arange(*args, dtype=device.default_float if is_float else device.default_int)
    if is_float:
        assert_same(got, want, rtol=1e-12, atol=1e-12)
    else:
        assert_same(got, want)
    assert_same(xp.arange(*args, dtype=xp.float32, device=device), np.arange(*args, dtype=np.float32),
                rtol=1e-6, atol=1e-6)


def test_arange_has_numpys_bits(device):
    """Float arange as NumPy fills it (``start``, ``start + step``, then ``start + i * delta`` with ``delta`` the
    difference of the first two, the product rounded): the same bits for Python and float32 bounds, float32 and
    float64 results, and -0.0 as the first element. Before, 579 of 800 such calls differed in some element."""
    rng = np.random.default_rng(3)
    f64 = device.provider.supports(np.dtype(np.float64))
    for _ in range(25):
        a = float(np.round(rng.uniform(-5, 5), 3))
        st = float(np.round(rng.uniform(0.01, 0.7), 4))
        b = a + st * int(rng.integers(1, 300))
        for conv in (float, np.float32):
            for dt in ("float32", "float64") if f64 else ("float32",):
                got = xp.arange(conv(a), conv(b), conv(st), dtype=getattr(xp, dt), device=device)
                np.testing.assert_array_equal(np.asarray(got), np.arange(conv(a), conv(b), conv(st), dtype=dt),
                                              err_msg=f"{conv.__name__} {dt} {a} {b} {st}")
    got = np.asarray(xp.arange(-0.0, 1, 0.5, dtype=xp.float32, device=device))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.arange(-0.0, 1, 0.5, dtype=np.float32)))
    np.testing.assert_array_equal(got, [0, 0.5])


def test_arange_errors(device):
    with pytest.raises(ZeroDivisionError):
        xp.arange(0, 5, 0, device=device)
    with pytest.raises(OverflowError):
        xp.arange(0, 300, dtype=xp.int8, device=device)


@pytest.mark.parametrize("args,kw", [((0, 1, 5), {}), ((-2.5, 7, 11), {}), ((0, 1, 4), {"endpoint": False}),
                                     ((3, 3, 1), {}), ((1, 0, 0), {}), ((0, 10, 101), {})])
def test_linspace(device, args, kw):
    assert_same(xp.linspace(*args, device=device, **kw), np.linspace(*args, **kw), rtol=1e-14, atol=1e-14)
    got32 = xp.linspace(*args, dtype=xp.float32, device=device, **kw)
    assert_same(got32, np.linspace(*args, dtype=np.float32, **kw), rtol=2e-6, atol=2e-6)


def test_linspace_has_numpys_bits(device):
    """linspace computes as NumPy does, so histogram bin edges agree bit for bit: in the dtype of start and
    stop (float64 for Python numbers, float32 for float32 scalars), ``i * step`` rounded before ``+ start``
    (NVIDIA's compiler fused the two into an fma: SciPy's ``cumfreq`` put a value on an edge in the wrong
    bin), then cast to ``dtype``. Before, 3934 of 12000 such calls differed from NumPy in some element."""
    rng = np.random.default_rng(1)
    f64 = device.provider.supports(np.dtype(np.float64))
    for _ in range(12):
        lo, hi = np.sort(rng.uniform(-10, 10, 2))
        n = int(rng.integers(2, 200))
        for conv in (float, np.float32, int):
            for dt in ("float32", "float64", "int32", "complex64"):
                if dt == "float64" and not f64 or conv is not np.float32 and not f64:
                    continue
                for ep in (True, False):
                    got = xp.linspace(conv(lo), conv(hi), n, endpoint=ep, dtype=getattr(xp, dt), device=device)
                    want = np.linspace(conv(lo), conv(hi), n, endpoint=ep, dtype=dt)
                    np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{conv.__name__} {dt} {n} {ep}")
    # subnormal steps (NumPy's gh-5437 path) and an edge at every tenth of [0, 1] in float32
    tiny = np.float32(1e-44)
    want = np.linspace(np.float32(0), tiny, 5, dtype=np.float32)
    if device_numerics(device)["flushes_f32_subnormals"]:      # the H200: all but ``stop`` itself, selected as is
        want = np.concatenate([flush_subnormals(want[:-1]), want[-1:]])
    np.testing.assert_array_equal(np.asarray(xp.linspace(np.float32(0), tiny, 5, dtype=xp.float32, device=device)),
                                  want)
    a, b = np.float32(0.1), np.float32(0.7)
    np.testing.assert_array_equal(np.asarray(xp.linspace(a, b, 13, dtype=xp.float32, device=device)),
                                  np.linspace(a, b, 13, dtype=np.float32))


@pytest.mark.parametrize("args,kw", [((3,), {}), ((2, 4), {}), ((4, 3), {"k": 1}), ((4,), {"k": -2}),
                                     ((0,), {}), ((3,), {"k": 5})])
def test_eye(device, args, kw):
    assert_same(xp.eye(*args, device=device, **kw), np.eye(*args, **kw))
    assert_same(xp.eye(*args, dtype=xp.int8, device=device, **kw), np.eye(*args, dtype=np.int8, **kw))


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_tril_triu(device, k):
    a = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) - 5
    g = xp.asarray(a, device=device)
    assert_same(xp.tril(g, k=k), np.tril(a, k))
    assert_same(xp.triu(g, k=k), np.triu(a, k))
    b = xp.asarray(np.array([[True, False], [True, True]]), device=device)
    assert_same(xp.triu(b), np.triu(np.array([[True, False], [True, True]])))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        xp.tril(xp.asarray([1.0], device=device))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(device, indexing):
    hosts = [np.arange(3, dtype=np.int16), np.arange(2, dtype=np.int16) * 5, np.arange(4, dtype=np.int16)]
    for n in (1, 2, 3):
        got = xp.meshgrid(*(xp.asarray(h, device=device) for h in hosts[:n]), indexing=indexing)
        want = np.meshgrid(*hosts[:n], indexing=indexing)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)
    assert xp.meshgrid() == []
    with pytest.raises(ValueError, match="one-dimensional"):
        xp.meshgrid(xp.zeros((2, 2), device=device))
    with pytest.raises(ValueError, match="indexing"):
        xp.meshgrid(xp.zeros(2, device=device), indexing="yx")


def test_what_scipy_calls(device):
    """Details SciPy's array-API paths rely on (issue 21): integer linspace (rounded towards -inf,
    as NumPy), NumPy scalars in lists keeping their dtype, 0-d arrays as arange bounds, 0-d arrays
    not iterable, and a Python float or int stored into a complex array."""
    for a, b, n, ep, dt in ((-5, 10, 7, True, np.int64), (0, 10, 4, False, np.int32), (3, -4, 5, True, np.int16)):
        assert_same(xp.linspace(a, b, n, dtype=dt, endpoint=ep, device=device),
                    np.linspace(a, b, n, dtype=dt, endpoint=ep))
    assert xp.asarray([np.int32(1), np.int32(2)], device=device).dtype == np.int32
    assert xp.asarray([[np.int16(1)], [np.int16(2)]], device=device).dtype == np.int16
    assert xp.asarray([np.float32(1), 1.0], device=device).dtype == np.asarray([np.float32(1), 1.0]).dtype
    assert xp.asarray([1, 2], device=device).dtype.kind == "i"          # Python ints: the default int
    assert_same(xp.arange(xp.asarray(3, device=device), device=device), np.arange(3))
    assert_same(xp.arange(np.asarray(2.0), 5, device=device), np.arange(np.asarray(2.0), 5))
    assert not np.iterable(xp.asarray(1.0, device=device))
    with pytest.raises(TypeError, match="0-d"):
        iter(xp.asarray(1.0, device=device))
    assert [float(v) for v in xp.asarray([1.0, 2.0], device=device)] == [1.0, 2.0]
    z = xp.zeros(3, dtype=xp.complex128, device=device)
    z[1] = -np.inf
    z[2] = 3
    assert_same(z, np.array([0, -np.inf, 3], np.complex128))
    f = xp.zeros(2, device=device)
    with pytest.raises(TypeError, match="complex"):
        f[0] = 1j


LINSPACE = [((np.float64(0.0), 1.0, 5), {}), ((np.float32(-2), 3.0, 7), {}),
            ((np.array([0.0, 1.0]), np.array([10.0, 1.0]), 4), {}),
            ((np.array([0.0, 1.0]), np.array([10.0, -3.0]), 4), {"axis": 1}), ((np.int32(0), 10, 6), {}),
            ((np.float64(0), 10.0, 6), {"endpoint": False}), ((np.float64(1), 2.0, 1), {}),
            ((np.float64(1), 2.0, 0), {}), ((np.float64(0), 10.0, 4), {"dtype": np.int32}),
            ((np.array([[0.0], [2.0]]), 5.0, 3), {"axis": -1}), ((np.float64(3.0), 3.0, 4), {}),
            ((np.array([1.0, 2.0]), np.array([1.0, 5.0]), 3), {})]


def test_numpy_linspace_retstep_and_errors(device):
    g = xp.asarray(np.float64(-1.0), device=device)
    y, step = np.linspace(g, 1.0, 5, retstep=True)
    np.testing.assert_array_equal(np.asarray(y), np.linspace(-1.0, 1.0, 5))
    assert float(step) == 0.5
    with pytest.raises(ValueError, match="Number of samples, -1, must be non-negative"):
        np.linspace(g, 1.0, -1)


def test_numpy_linspace_with_device_endpoints_reads_nothing(device):
    """NumPy's choice between ``i * step`` and ``i / div * delta`` (any step zero) is made on the device:
    ``np.linspace`` of device endpoints reads nothing back, and a zero step still takes NumPy's formula."""
    a = xp.asarray(np.array([0.0, 2.0, 5.0]), device=device)
    xp.evaluate(a)
    xp.reset_metrics()
    got = np.linspace(a[0], a[1], 7)
    flat = np.linspace(a[2], a[2], 4)          # a zero step
    xp.evaluate(got, flat)
    if not device.provider.host_memory:
        assert xp.metrics()["bytes_downloaded"] == 0
    np.testing.assert_array_equal(np.asarray(got), np.linspace(0.0, 2.0, 7))
    np.testing.assert_array_equal(np.asarray(flat), np.linspace(5.0, 5.0, 4))


LOGSPACE = [((0.0, 3.0, 4), {}), ((np.float32(-2), 2.0, 5), {"base": 2.0}),
            ((np.array([0.0, 1.0]), np.array([2.0, 3.0]), 3), {"axis": 1}), ((0.0, 2.0, 3), {"dtype": np.int32}),
            ((1.0, 2.0, 4), {"endpoint": False, "base": np.e})]


# (function, case, rtol): linspace's samples are NumPy's bit for bit, logspace's go through power
SPACED = [(np.linspace, c, 0.0) for c in LINSPACE] + [(np.logspace, c, 1e-6) for c in LOGSPACE]


@pytest.mark.parametrize("k", range(len(SPACED)), ids=[f"{f.__name__}{i}" for i, (f, _c, _r) in enumerate(SPACED)])
def test_numpy_spaces_with_device_endpoints(device, k):
    """``np.linspace`` / ``np.logspace`` given GpuArray endpoints run NumPy's steps on the device (a zero
    step, integer dtypes, several endpoints along an axis, bases)."""
    fn, ((a, b, n), kw), rtol = SPACED[k]
    g = (lambda v: xp.asarray(np.asarray(v), device=device))
    with xp.config(fallback="raise" if device.kind == "wgpu" else "silent"):
        got = fn(g(a), g(b) if isinstance(b, np.ndarray) else b, n, **kw)
    want = fn(a, b, n, **kw)
    assert isinstance(got, xp.GpuArray) and got.dtype == want.dtype and got.shape == want.shape
    if rtol:
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol)
    else:
        np.testing.assert_array_equal(np.asarray(got), want)
