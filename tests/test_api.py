"""The array object's attributes and conversions, metrics, devices, CLI, errors."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import gpuarray as xp

from .conftest import assert_same


def test_attributes(device):
    a = xp.asarray(np.zeros((2, 3, 4), np.float32), device=device)
    assert a.shape == (2, 3, 4) and a.ndim == 3 and a.size == 24
    assert a.dtype == np.float32 and isinstance(a.dtype, np.dtype)
    assert a.device == device and a.nbytes == 96 and a.itemsize == 4
    assert a.T.shape == (4, 3, 2) and a.mT.shape == (2, 4, 3)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        _ = xp.asarray([1.0], device=device).mT


def test_scalar_conversions(device):
    a = xp.asarray([[2.5]], device=device)
    assert float(a) == 2.5 and int(a) == 2 and bool(a) and a.item() == 2.5 and complex(a) == 2.5
    assert a.tolist() == [[2.5]]
    i = xp.asarray(3, device=device)
    assert [10, 20, 30, 40][i] == 40
    with pytest.raises(TypeError):
        [1, 2][xp.asarray(1.0, device=device)]
    with pytest.raises(ValueError, match="ambiguous"):
        bool(xp.asarray([1, 2], device=device))
    with pytest.raises(TypeError):
        float(xp.asarray([1.0, 2.0], device=device))
    with pytest.raises(ValueError, match="size 1"):
        xp.asarray([1, 2], device=device).item()


def test_scalar_reads_of_computed_and_reshaped_arrays(device):
    """``float`` / ``int`` / ``bool`` / ``complex`` / ``operator.index`` of size-1 arrays that are
    computed (evaluated by the read), reshaped (their data of another shape) or views, with NumPy's
    values, special values and errors."""
    import operator
    h = np.array([[np.nan, -0.0, 3.75, -np.inf]], np.float32)
    g = xp.asarray(h, device=device)
    with xp.config(offload="always"):
        for _ in range(3):                                  # a replayed evaluation reads the new values
            s = xp.sum(g[:, 2:3] * 2)
            assert float(s) == 7.5 and int(s) == 7 and bool(s) and complex(s) == 7.5
        assert np.isnan(float(g[0, 0] + 1)) and float(g[0, 3] * 2) == -np.inf
        z = float(g[0, 1] * 1)
        assert z == 0.0 and np.signbit(z)                   # the sign of zero survives
        assert not bool(g[0, 1] * 1)
        r = xp.reshape(g[:, 2:3] + 0, (1, 1, 1))            # computed, then seen in another shape
        assert float(xp.reshape(r, ())) == 3.75 and float(r) == 3.75
        i = xp.asarray(np.array([[5]], np.int32), device=device) + 2
        assert operator.index(xp.reshape(i, ())) == 7 and int(i) == 7
        with pytest.raises(TypeError, match="integer scalar"):
            operator.index(i)                               # 2-d: not an index, as in NumPy
        with pytest.raises(TypeError, match="size-1"):
            float(g * 2)
        with pytest.raises(ValueError, match="ambiguous"):
            bool(g > 0)
        b = xp.asarray(np.array([True]), device=device) & True
        assert bool(b) is True and int(b) == 1


def test_array_protocol(device):
    a = xp.asarray([1, 2, 3], dtype=xp.int16, device=device)
    h = np.asarray(a)
    assert h.dtype == np.int16 and h.tolist() == [1, 2, 3]
    h[0] = 9                         # a writable copy
    assert a.tolist() == [1, 2, 3]
    assert np.asarray(a, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="copy"):
        a.__array__(copy=False)
    assert a.to_numpy().tolist() == [1, 2, 3]


def test_repr_str_format(device):
    a = xp.asarray([1.0, 2.5], device=device)
    assert repr(a) == f"GpuArray([1. , 2.5], device='{device.name}')"
    b = xp.asarray([1, 2], dtype=xp.int8, device=device)
    assert repr(b) == f"GpuArray([1, 2], dtype=int8, device='{device.name}')"
    assert str(b) == "[1 2]"
    assert f"{xp.asarray(1.25, device=device):.1f}" == "1.2"
    m = xp.asarray(np.arange(4).reshape(2, 2), device=device)
    assert repr(m).splitlines()[1].startswith("          [2, 3]")


def test_pickle_and_copy(device):
    a = xp.asarray(np.arange(6, dtype=np.uint16).reshape(2, 3), device=device) * 2
    for b in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert b.device == device and b.dtype == np.uint16
        assert_same(b, np.arange(6, dtype=np.uint16).reshape(2, 3) * 2)


def test_namespace(device):
    a = xp.asarray([1.0], device=device)
    assert a.__array_namespace__() is xp
    assert a.__array_namespace__(api_version="2024.12") is xp
    with pytest.raises(ValueError):
        a.__array_namespace__(api_version="1999.01")
    assert xp.__array_api_version__ == "2024.12"


def test_metrics_keys_and_reset():
    m = xp.metrics()
    for k in ("kernels_compiled", "pipeline_cache_hits", "dispatches", "bytes_uploaded", "bytes_downloaded",
              "host_fallbacks"):
        assert k in m
    xp.evaluate(xp.asarray([1.0], device="cpu") + 1)
    xp.reset_metrics()
    # the device_bytes_* gauges measure what is held now; reset_metrics() leaves them alone
    assert all(v == 0 for k, v in xp.metrics().items() if not k.startswith("device_bytes_"))


def test_mixed_devices_error(wgpu_device):
    a = xp.asarray([1.0], device="cpu")
    b = xp.asarray([1.0], device=wgpu_device)
    with pytest.raises(ValueError, match="different devices, cpu and wgpu:0"):
        a + b


def test_operand_errors(device):
    a = xp.asarray([1.0, 2.0], device=device)
    with pytest.raises(ValueError, match="could not be broadcast"):
        a + xp.asarray([1.0, 2.0, 3.0], device=device)
    with pytest.raises(TypeError, match="Only floating-point dtypes are allowed in exp; got int32"):
        xp.exp(xp.asarray([1], dtype=xp.int32, device=device))
    with pytest.raises(TypeError, match="Only integer or boolean dtypes are allowed in bitwise_and"):
        xp.bitwise_and(a, a)
    with pytest.raises(TypeError):
        a + "x"
    assert (a + [1, 2]).tolist() == [2.0, 4.0]       # a sequence of numbers is an array, as in NumPy
    assert ((3, 4) * a).tolist() == [3.0, 8.0]
    with pytest.raises(TypeError):
        a + [1, "x"]
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        xp.add(a)
    with pytest.raises(TypeError, match="does not support dtype"):
        xp.zeros(3, dtype="datetime64[s]", device=device)
    with pytest.raises(TypeError, match="not a data type"):
        xp.zeros(3, dtype="nonsense", device=device)


def test_inplace_ops(device):
    a = xp.asarray([1, 2, 3], dtype=xp.int32, device=device)
    before = a._node
    a += 1
    a *= 2
    assert a.tolist() == [4, 6, 8] and a._node is not before
    with pytest.raises(TypeError, match="same_kind"):
        a += 1.5
    with pytest.raises(ValueError, match="non-broadcastable output"):
        a += xp.ones((2, 3), dtype=xp.int32, device=device)
    assert a.tolist() == [4, 6, 8]


def test_failed_evaluation_leaves_inputs_intact(wgpu_device, monkeypatch):
    x = xp.asarray(np.arange(5, dtype=np.float32), device=wgpu_device)
    y = x * 2
    provider = wgpu_device.provider

    def boom(kernel, handles):
        raise RuntimeError("injected failure")
    monkeypatch.setattr(provider, "enqueue", boom)
    with pytest.raises(RuntimeError, match="injected"):
        xp.evaluate(y + 1)
    monkeypatch.undo()
    assert_same(x, np.arange(5, dtype=np.float32))
    assert_same(y + 1, np.arange(5, dtype=np.float32) * 2 + 1)


def test_device_without_float64(wgpu_device, monkeypatch):
    provider = wgpu_device.provider
    monkeypatch.setattr(provider, "f64", False)
    monkeypatch.setattr(provider, "i64", False)
    assert wgpu_device.default_float == np.float32 and wgpu_device.default_int == np.int32
    assert xp.asarray([1.5], device=wgpu_device).dtype == np.float32
    assert xp.asarray([1], device=wgpu_device).dtype == np.int32
    with pytest.raises(TypeError, match="float64 is not supported on device wgpu:0"):
        xp.zeros(3, dtype=xp.float64, device=wgpu_device)
    with pytest.raises(TypeError, match="int64 is not supported"):
        xp.asarray(np.arange(3), device=wgpu_device)
    assert_same(xp.asarray([1], device=wgpu_device) / 2, np.array([0.5], np.float32))


def test_float64_transcendental_runs_on_host_and_is_counted(wgpu_device, monkeypatch):
    # every float64 transcendental runs on the device now (render/wgsl_f64*.py); an op marked host-only,
    # as they were on adapters before, still runs on the host and is counted
    monkeypatch.setattr(wgpu_device.provider, "host_only_f64", {"asin"})
    x = xp.asarray([0.5, 1.0], dtype=xp.float64, device=wgpu_device)
    xp.reset_metrics()
    y = xp.asin(x)
    assert_same(y, np.arcsin(np.array([0.5, 1.0])))
    assert xp.metrics()["host_fallbacks"] == 1
    assert y.device == wgpu_device
    assert_same(y + 1, np.arcsin(np.array([0.5, 1.0])) + 1)   # the result goes back to the device


def _run(args, env=None):
    e = dict(os.environ, XDG_RUNTIME_DIR="/tmp", **(env or {}))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=e, timeout=300)


def test_provider_selection_from_environment():
    code = "import gpuarray as xp; d = xp.default_device(); print(d.name)"
    assert _run(["-c", code], {"GPUARRAY_PROVIDER": "inprocess"}).stdout.strip() == "cpu"
    assert _run(["-c", code], {"GPUARRAY_PROVIDER": "wgpu"}).stdout.strip() == "wgpu:0"
    bad = _run(["-c", code], {"GPUARRAY_PROVIDER": "cuda"})
    assert bad.returncode != 0 and "expected 'wgpu' or 'inprocess'" in bad.stderr


def test_cli_info_and_demo():
    info = _run(["-m", "gpuarray", "info"])
    assert info.returncode == 0, info.stderr
    assert "provider in use:" in info.stdout and "wgpu:0" in info.stdout
    demo = _run(["-m", "gpuarray", "demo", "--size", "20000", "--repeat", "2"], {"GPUARRAY_PROVIDER": "wgpu"})
    assert demo.returncode == 0, demo.stderr
    assert "fused into 1 kernel(s)" in demo.stdout and "OK" in demo.stdout
