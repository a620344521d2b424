"""Views and basic indexing: index arithmetic in the kernel, no host copies."""

from __future__ import annotations

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.runtime import devices as _devices

from .conftest import assert_same

A = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)

KEYS = [
    0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0), (0, None, slice(1, 3)),
    slice(None, None, -1), (slice(None), slice(None, None, 2)), (1, slice(None, None, -2), slice(3, 0, -1)),
    (Ellipsis,), (Ellipsis, None), (slice(5, 10),), (slice(None), slice(2, 2)), (-2, -3, -4), (),
    (slice(None, None, 3), Ellipsis, slice(-1, None)),
]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_basic_indexing_matches_numpy(device, key):
    g = xp.asarray(A, device=device)
    assert_same(g[key], A[key])


def test_view_of_view_composes(device):
    g = xp.asarray(A, device=device)
    v = g[:, ::-1][1][::2, 1:]
    assert v._node.op == "view" and v._node.inputs[0] is g._node
    assert_same(v, A[:, ::-1][1][::2, 1:])


def test_views_evaluate_on_device_without_host_copies(wgpu_device):
    g = xp.asarray(A.astype(np.float32), device=wgpu_device)
    xp.evaluate(g + 0)
    xp.reset_metrics()
    y = xp.exp(g[:, ::-1].mT * 0.1) + g[0, 0, 0]
    xp.evaluate(y)
    m = xp.metrics()
    assert m["bytes_downloaded"] == 0 and m["bytes_uploaded"] == 0
    assert m["dispatches"] == 1
    want = np.exp(np.swapaxes(A[:, ::-1], -1, -2).astype(np.float32) * np.float32(0.1)) + np.float32(0)
    assert_same(y, want, rtol=2e-6)


def test_index_errors(device):
    g = xp.asarray(A, device=device)
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 3"):
        g[0, 3]
    with pytest.raises(IndexError, match="too many indices"):
        g[0, 0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        g[..., ...]
    with pytest.raises(IndexError):
        g["a"]


@pytest.mark.parametrize("shape", [(24,), (4, 6), (2, 3, 4), (-1, 2), (3, -1, 2), (1, 24, 1)])
def test_reshape(device, shape):
    g = xp.asarray(A, device=device)
    assert_same(xp.reshape(g, shape), A.reshape(shape))
    assert_same(g.reshape(*shape), A.reshape(shape))


def test_reshape_of_strided_views(device):
    g = xp.asarray(A, device=device)
    assert_same(g.mT.reshape(-1), np.swapaxes(A, -1, -2).reshape(-1))
    assert_same(g[:, ::2].reshape(2, 8), A[:, ::2].reshape(2, 8))
    assert_same(g[:, 1:].reshape(4, 4), A[:, 1:].reshape(4, 4))
    assert_same((g * 2).T.reshape(6, 4) + 1, (A * 2).T.reshape(6, 4) + 1)


def test_reshape_errors(device):
    g = xp.asarray(A, device=device)
    with pytest.raises(ValueError, match="cannot reshape array of size 24 into shape"):
        xp.reshape(g, (5, 5))
    with pytest.raises(ValueError, match="only specify one unknown dimension"):
        xp.reshape(g, (-1, -1))


def test_permute_transpose(device):
    g = xp.asarray(A, device=device)
    assert_same(xp.permute_dims(g, (2, 0, 1)), np.transpose(A, (2, 0, 1)))
    assert_same(g.T, A.T)
    assert_same(g.mT, np.swapaxes(A, -1, -2))
    assert_same(xp.matrix_transpose(g), np.swapaxes(A, -1, -2))
    with pytest.raises(ValueError, match="not a permutation"):
        xp.permute_dims(g, (0, 0, 1))


def test_broadcast_expand_squeeze_flip(device):
    g = xp.asarray(A[0], device=device)
    assert_same(xp.broadcast_to(g[:, :1], (2, 3, 4)), np.broadcast_to(A[0][:, :1], (2, 3, 4)))
    assert_same(xp.expand_dims(g, axis=1), np.expand_dims(A[0], 1))
    assert_same(xp.squeeze(xp.expand_dims(g, axis=-1), axis=-1), A[0])
    assert_same(xp.flip(g), np.flip(A[0]))
    assert_same(xp.flip(g, axis=1), np.flip(A[0], 1))
    a, b = xp.broadcast_arrays(g, xp.asarray(np.arange(4, dtype=np.int32), device=device))
    assert a.shape == b.shape == (3, 4)
    with pytest.raises(ValueError, match="cannot broadcast"):
        xp.broadcast_to(g, (4, 4))
    with pytest.raises(ValueError, match="squeeze"):
        xp.squeeze(g, axis=0)


def test_iteration_and_len(device):
    g = xp.asarray(A[0], device=device)
    assert len(g) == 3
    rows = [r.tolist() for r in g]
    assert rows == A[0].tolist()
    with pytest.raises(TypeError):
        len(xp.asarray(1.0, device=device))


def test_views_of_empty_and_0d(device):
    e = xp.asarray(np.zeros((0, 3), np.float32), device=device)
    assert_same(e[:, 1:], np.zeros((0, 2), np.float32))
    assert_same(e.T + 1, np.zeros((3, 0), np.float32))
    s = xp.asarray(np.float32(5), device=device)
    assert_same(s[None], np.array([5], np.float32))
    assert_same(s[...], np.float32(5)[...])


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int64, np.uint16, np.float32, np.float64, np.complex64])
def test_prefix_views_of_evaluated_data_share_its_buffer(device, dtype):
    """x[:k] (and reshapes of it) of evaluated x: no kernel, the same values, and the buffer
    freed only once the base and every prefix are gone."""
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    host = (np.arange(-30, 30) * 7).astype(dtype).reshape(6, 10)
    base = xp.asarray(host, device=device) + xp.asarray(np.zeros(1, dtype), device=device)
    xp.evaluate(base)
    xp.reset_metrics()
    first = base[:4]
    rows = base.reshape(-1)[:15].reshape(3, 5)
    xp.evaluate(first, rows)
    assert xp.metrics()["evaluations"] == 0 and xp.metrics()["dispatches"] == 0
    del base
    for _ in range(3):          # new results may take freed buffers: the prefixes' must stay
        xp.evaluate(xp.asarray(np.ones((6, 10), dtype), device=device) * xp.asarray(np.zeros(1, dtype), device=device))
    assert_same(first, host[:4])
    assert_same(rows, host.reshape(-1)[:15].reshape(3, 5))
    assert_same(first * 1 + rows.reshape(-1)[:1], host[:4] * 1 + host.reshape(-1)[:1])


def test_prefix_view_memory_returns_with_the_last_user(wgpu_device):
    prov = _devices.provider_for(wgpu_device)
    live0 = prov.memory()["live"]
    base = xp.asarray(np.arange(1 << 20, dtype=np.float32), device=wgpu_device) * 2
    xp.evaluate(base)
    held = prov.memory()["live"] - live0
    assert held >= 4 << 20
    head = base[: 1 << 10]
    xp.evaluate(head)
    del base
    assert prov.memory()["live"] - live0 == held      # the prefix keeps the whole buffer
    assert float(head[1023]) == 2046.0
    del head
    assert prov.memory()["live"] - live0 < held


def test_prefix_views_not_at_the_start_or_strided_still_copy(device):
    g = xp.asarray(np.arange(12.0), device=device) * 1
    xp.evaluate(g)
    xp.reset_metrics()
    a, b = g[1:5], g[::2]
    xp.evaluate(a, b)
    assert xp.metrics()["evaluations"] >= 1
    assert_same(a, np.arange(12.0)[1:5])
    assert_same(b, np.arange(12.0)[::2])


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.float32, np.float64,
                                   np.complex64])
def test_scalar_of_an_element_of_evaluated_data_is_one_read(device, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    host = np.array([0, -1, 2**7 - 1, -(2**7), 3, 1, 0, 5], dtype=np.int64).astype(dtype)
    if np.dtype(dtype).kind == "f":
        host = np.array([np.nan, -0.0, np.inf, -np.inf, 1.5, -2.25, 0.0, 7.0], dtype=dtype)
    g0 = xp.asarray(host, device=device)
    # computed: the data is on the device only
    g = xp.logical_not(xp.logical_not(g0)) if dtype is np.bool_ else xp.negative(xp.negative(g0))
    m = g.reshape(2, 4) * 1 if dtype is not np.bool_ else xp.asarray(host.reshape(2, 4), device=device)
    xp.evaluate(g, m)
    xp.reset_metrics()
    conv = complex if np.dtype(dtype).kind == "c" else float
    for i in range(8):
        want, got = conv(host[i]), conv(g[i])
        assert (want == got or (want != want and got != got)) and np.signbit(np.real(want)) == np.signbit(np.real(got))
        assert conv(m[i // 4, i % 4]) == want or want != want
    for i in (0, 5, -1):
        got, want = g.item(i), host[i].item()
        assert type(got) is type(want) and (got == want or want != want)
        assert m.item(i // 4 % 2, i % 4) == host[i].item() or want != want
    assert bool(g[-1]) == bool(host[-1]) and xp.metrics()["evaluations"] == 0


def test_views_read_one_after_another_download_their_base_once(wgpu_device, monkeypatch):
    """A loop that reads slices of device data to the host (SciPy's welch over its segments) downloads the
    base whole on the second read (runtime/residency.py host_view) and slices that copy afterwards."""
    a = np.arange(4096, dtype=np.float32).reshape(64, 64)
    g = xp.asarray(a, device=wgpu_device) * 2
    xp.evaluate(g)
    xp.reset_metrics()
    np.testing.assert_array_equal(np.asarray(g[3]), a[3] * 2)          # the first: one copy kernel
    assert xp.metrics()["dispatches"] == 1
    np.testing.assert_array_equal(np.asarray(g[::-3, 5]), a[::-3, 5] * 2)   # the second: the base, once
    assert xp.metrics()["bytes_downloaded"] == 64 * 4 + a.nbytes
    xp.reset_metrics()
    for key in [(7,), (slice(None), 9), (slice(60, 2, -7), slice(1, None, 2))]:
        np.testing.assert_array_equal(np.asarray(g[key]), a[key] * 2)
    np.testing.assert_array_equal(np.asarray(g.T[2:5]), (a * 2).T[2:5])
    assert [r.tolist() for r in g][10] == (a[10] * 2).tolist()
    assert xp.metrics()["dispatches"] == 0 and xp.metrics()["bytes_downloaded"] == 0
    # a larger base waits until the views read add up to 1/16 of it
    from gpuarray.runtime import residency
    monkeypatch.setattr(residency, "READ_AHEAD_SMALL", 1024)
    h = xp.asarray(a, device=wgpu_device) + 1
    xp.evaluate(h)
    xp.reset_metrics()
    for i in range(1, 5):       # (h[0] would be a prefix view: no kernel)
        np.asarray(h[i])
    assert xp.metrics()["dispatches"] == 3 and xp.metrics()["bytes_downloaded"] == 3 * 256 + a.nbytes
    np.testing.assert_array_equal(np.asarray(h[40:42]), a[40:42] + 1)
    assert xp.metrics()["dispatches"] == 3


def test_one_part_read_again_and_again_does_not_download_the_base(wgpu_device):
    """SciPy's ``is_lazy_array(x)`` reads ``bool(any(reshape(x, -1)[0]))`` on every call: the same part, no loop
    over parts, so the base is not read ahead (4 MB downloaded per ``scipy.stats.zscore`` call before), and the
    element is read without a kernel, once (data never changes). A row read by ``np.asarray`` and again by a
    small computation is one part (the two paths count a view by the same key); a second, other row reads the
    base ahead."""
    a = np.random.default_rng(3).standard_normal((64, 256)).astype(np.float32)
    g = xp.asarray(a, device=wgpu_device) * 1
    xp.evaluate(g)
    xp.reset_metrics()
    with xp.config(offload="auto"):
        for _ in range(4):
            assert bool(xp.any(xp.reshape(g, (-1,))[0])) == bool(a.reshape(-1)[0] != 0)
        # one element read, kept for the data's life (residency.element), and `any` on the host each time
        # (runtime/planner.py _read_elements), no kernel
        assert xp.metrics()["bytes_downloaded"] == 4 and xp.metrics()["dispatches"] == 0
        assert float(g[0, 0]) == a[0, 0] and float(g[0, 1]) == a[0, 1]          # another element: one more read
        assert xp.metrics()["bytes_downloaded"] == 8
        xp.reset_metrics()
        np.testing.assert_array_equal(np.asarray(g[3]), a[3])        # a first row: that row (a copy kernel)
        assert float(g[3].sum()) == pytest.approx(float(a[3].sum()), rel=1e-5, abs=1e-4)    # the same row again
        assert xp.metrics()["bytes_downloaded"] < a.nbytes // 4
        np.testing.assert_array_equal(np.asarray(g[9]), a[9])        # another row: the base, once
        assert xp.metrics()["bytes_downloaded"] >= a.nbytes
        xp.reset_metrics()
        np.testing.assert_array_equal(np.asarray(g[11]), a[11])
        assert xp.metrics()["bytes_downloaded"] == 0


def test_small_reads_of_device_data_run_on_the_host_after_read_ahead(wgpu_device):
    """A Python loop of small computations on rows of device data, each read at once (``float(x[i].sum())``,
    ``np.asarray(x[i] * 2 + 1)``): from the second read the base is downloaded once and the rest run on the host
    (runtime/planner.py, before rule 4); results as NumPy's, and a write to the base afterwards is seen."""
    a = np.random.default_rng(1).standard_normal((300, 64)).astype(np.float32)
    g = xp.asarray(a, device=wgpu_device) * 1
    xp.evaluate(g)
    xp.reset_metrics()
    with xp.config(offload="auto"):             # (the tests run with offload="always": tests/conftest.py)
        for i in range(300):
            assert float(g[i].sum()) == pytest.approx(float(a[i].sum()), rel=1e-5, abs=1e-5)
            np.testing.assert_allclose(np.asarray(g[i] * 2 + 1), a[i] * 2 + 1, rtol=1e-6)
        m = xp.metrics()
        assert m["dispatches"] <= 2 and m["bytes_downloaded"] <= a.nbytes + 2 * 64 * 4
        assert planner_decisions_say("read at once")
        g[5] = -1.0                 # a new version of the base: its rows read the write
        assert float(g[5].sum()) == -64.0
        np.testing.assert_array_equal(np.asarray(g[5] * 2), np.full(64, -2.0, np.float32))
    # offload="always" keeps them on the device; large work stays there too
    xp.reset_metrics()
    float(g[7].sum())
    assert xp.metrics()["dispatches"] == 1
    big = xp.asarray(np.ones(1 << 17, np.float32), device=wgpu_device) * 3
    xp.evaluate(big)
    xp.reset_metrics()
    with xp.config(offload="auto"):
        for _ in range(3):
            assert float((big + 1).sum()) == 4.0 * (1 << 17)
    m = xp.metrics()
    assert m["host_kernels"] == 0 and m["dispatches"] >= 3 and m["bytes_downloaded"] <= 64


def test_views_of_an_unevaluated_base_read_one_after_another_compute_it_once(wgpu_device):
    """Slices of a pending expression (``np.pad``'s result, as SciPy's welch takes segments of) were each a
    kernel that computed their part again: from the second read the base is evaluated once, then read ahead."""
    a = np.random.default_rng(2).standard_normal(20000).astype(np.float32)
    g = xp.asarray(a, device=wgpu_device) * 1
    xp.evaluate(g)
    p = xp.asarray(np.pad(g, (100, 100)))           # pending
    want = np.pad(a, (100, 100))
    xp.reset_metrics()
    for k in range(0, 20000, 100):
        np.testing.assert_array_equal(np.asarray(p[k:k + 256]), want[k:k + 256])
    m = xp.metrics()
    assert m["dispatches"] <= 3 and m["bytes_downloaded"] <= want.nbytes + 2 * 256 * 4


def planner_decisions_say(text: str) -> bool:
    from gpuarray.runtime.planner import decisions
    return any(text in d["why"] for d in decisions())


def test_views_of_a_constant_leave_the_shared_constant_alone(wgpu_device):
    """Reading views of ``full(...)`` again and again must not evaluate its constant on its own: the constant
    node is hash-consed, shared by every expression with that value, which would then read it as an array
    (a vec4 kernel lost its form and its pipeline in a later test when this happened)."""
    from gpuarray.compiler import schedule
    from gpuarray.render.wgsl import render
    v = 3.2578125             # a value no other test uses: one evaluated elsewhere is an input everywhere
    f = xp.full((4096,), v, dtype=xp.float32, device=wgpu_device)
    for k in range(4):
        np.testing.assert_array_equal(np.asarray(f[k * 10:k * 10 + 10]), np.full(10, v, np.float32))
        np.testing.assert_array_equal(np.asarray(f), np.full(4096, v, np.float32))     # a view of the constant
    x = xp.asarray(np.arange(64, dtype=np.float32), device=wgpu_device)
    y = x * v + 1.0078125     # (1.0 may be evaluated by another test in this process)
    kernel = schedule([y._node])[-1]
    assert len(kernel.inputs) == 1 and render(kernel, 4).vec == 4


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.complex64])
def test_small_work_on_one_element_views_reads_the_elements(wgpu_device, dtype):
    """Under ``offload="auto"`` a read of small work on at most two one-element views of device data
    (``bool(any(x[0]))``, ``float(x[1, 2] * 2 + x[3, 4])``) reads those elements (``residency.element``) and
    computes the rest on the host: no kernel, NumPy's values; ``offload="always"`` keeps the kernel."""
    if dtype == np.complex64 and not getattr(wgpu_device.provider, "complex_ok", True):
        pytest.skip("no complex64 here")
    a = (np.arange(40).reshape(5, 8) - 7).astype(dtype)
    g = xp.asarray(a, device=wgpu_device) * (1 if dtype != np.bool_ else True)
    xp.evaluate(g)
    g._node.data.host = None
    with xp.config(offload="auto"):
        xp.reset_metrics()
        assert bool(xp.any(xp.reshape(g, (-1,))[0])) == bool(np.any(a.reshape(-1)[0]))
        if dtype != np.bool_:
            got = complex(g[1, 2] * 2 + g[3, 4]) if dtype == np.complex64 else float(g[1, 2] * 2 + g[3, 4])
            assert got == (a[1, 2] * 2 + a[3, 4]).item()
        m = xp.metrics()
        assert m["dispatches"] == 0 and m["host_kernels"] >= 1
        if dtype != np.bool_:
            xp.reset_metrics()
            # three views: not this path (here the read-ahead downloads the small base instead)
            assert float(xp.real(g[0, 0] + g[1, 1] + g[2, 2])) == float(np.real(a[0, 0] + a[1, 1] + a[2, 2]))
    with xp.config(offload="always"):
        xp.reset_metrics()
        assert bool(xp.any(xp.reshape(g, (-1,))[0])) == bool(np.any(a.reshape(-1)[0]))
        assert xp.metrics()["dispatches"] >= 1
