"""``__array_namespace_info__``: capabilities, devices, dtypes and default dtypes per device."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.runtime import devices as _devices

CANONICAL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64", "complex64", "complex128"]


def test_exported():
    assert "__array_namespace_info__" in xp.__all__
    info = xp.__array_namespace_info__()
    for name in ("capabilities", "default_device", "devices", "dtypes", "default_dtypes"):
        assert callable(getattr(info, name))


def test_capabilities(device):
    caps = xp.__array_namespace_info__().capabilities()
    assert caps["boolean indexing"] is True           # x[mask], x[mask] = v
    assert caps["data-dependent shapes"] is True      # unique_*, nonzero, repeat with an array
    n = caps["max dimensions"]
    assert isinstance(n, int) and n > 0
    a = xp.ones((1,) * (n - 1) + (2,), device=device)
    assert np.asarray(a + 1).shape == a.shape
    # A graph may have more dimensions, but its values cannot be computed or read back.
    with pytest.raises(ValueError, match="dimension"):
        np.asarray(xp.ones((1,) * (n + 1), device=device) + 1)


def test_devices():
    info = xp.__array_namespace_info__()
    devs = info.devices()
    assert isinstance(devs, list) and devs == xp.all_devices()
    assert xp.Device("cpu") in devs and xp.Device("wgpu:0") in devs
    assert info.default_device() == xp.default_device()
    assert info.default_device() in devs
    for d in devs:
        assert xp.empty(1, device=d).device == d


def test_device_objects_are_interned():
    # one object per device, whatever the spelling: hot paths compare devices by identity
    assert xp.Device("wgpu:0") is xp.Device("wgpu") is xp.Device("wgpu:0")
    assert xp.Device("cpu") is xp.CPU
    assert pickle.loads(pickle.dumps(xp.Device("wgpu:0"))) is xp.Device("wgpu:0")
    assert copy.deepcopy(xp.CPU) is xp.CPU
    for bad in ("gpu", "wgpu:x", "wgpu:-1", "cpu:a"):
        with pytest.raises(ValueError, match="unknown device"):
            xp.Device(bad)
    with pytest.raises(TypeError, match="device spec must be a str"):
        xp.Device(0)


def test_arrays_made_with_a_device_string_share_signatures(device):
    # two arrays each given the device by its name: a broadcast operation between them takes the
    # cached-signature path (elementwise._SIG), not the full one, and is still correct
    from gpuarray.array_object import elementwise as _ew
    m = xp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4), device=device.name)
    v = xp.asarray(np.arange(3, dtype=np.float32).reshape(3, 1), device=device.name)
    assert m.device is v.device
    np.testing.assert_array_equal(np.asarray(m - v), np.arange(12, dtype=np.float32).reshape(3, 4)
                                  - np.arange(3, dtype=np.float32).reshape(3, 1))
    assert ("subtract", m.dtype, v.dtype, device.name) in _ew._SIG


def test_default_device_follows_setting(device, monkeypatch):
    monkeypatch.setattr(_devices, "_default", device)
    info = xp.__array_namespace_info__()
    assert info.default_device() == device
    assert info.dtypes() == info.dtypes(device=device)
    assert info.default_dtypes() == info.default_dtypes(device=device)


def test_dtypes_all(device):
    out = xp.__array_namespace_info__().dtypes(device=device)
    assert list(out) == [n for n in CANONICAL if device.supports(np.dtype(n))]
    for name, dt in out.items():
        assert dt == np.dtype(name) and getattr(xp, name) == dt
        assert xp.empty(1, dtype=dt, device=device).dtype == dt


@pytest.mark.parametrize(("kind", "names"), [
    ("bool", ["bool"]),
    ("signed integer", ["int8", "int16", "int32", "int64"]),
    ("unsigned integer", ["uint8", "uint16", "uint32", "uint64"]),
    ("integral", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]),
    ("real floating", ["float32", "float64"]),
    ("complex floating", ["complex64", "complex128"]),
    ("numeric", CANONICAL[1:]),
    (("bool", "real floating"), ["bool", "float32", "float64"]),
    (("signed integer", "unsigned integer"), CANONICAL[1:9]),
    (("complex floating", "integral", "bool"), CANONICAL[:9] + ["complex64", "complex128"]),
    (("real floating", "complex floating"), ["float32", "float64", "complex64", "complex128"]),
])
def test_dtypes_kind(device, kind, names):
    out = xp.__array_namespace_info__().dtypes(device=device, kind=kind)
    assert list(out) == [n for n in names if device.supports(np.dtype(n))]
    for dt in out.values():
        assert xp.isdtype(dt, kind)


def test_dtypes_bad_kind():
    info = xp.__array_namespace_info__()
    with pytest.raises(ValueError, match="unknown kind 'float'"):
        info.dtypes(kind="float")
    with pytest.raises(ValueError, match="unknown kind"):
        info.dtypes(kind=("bool", "integer"))
    with pytest.raises(TypeError, match="kind must be"):
        info.dtypes(kind=np.float32)


def test_device_by_name(device):
    info = xp.__array_namespace_info__()
    assert info.dtypes(device=device.name) == info.dtypes(device=device)
    assert info.default_dtypes(device=device.name) == info.default_dtypes(device=device)


def test_default_dtypes(device):
    out = xp.__array_namespace_info__().default_dtypes(device=device)
    assert set(out) == {"real floating", "complex floating", "integral", "indexing"}
    assert out["real floating"] == device.default_float
    assert out["complex floating"] == device.default_complex == {
        xp.float32: xp.complex64, xp.float64: xp.complex128}[device.default_float]
    assert out["integral"] == out["indexing"] == device.default_int
    supported = xp.__array_namespace_info__().dtypes(device=device)
    assert all(dt in supported.values() for dt in out.values())
    assert xp.asarray(1.5, device=device).dtype == out["real floating"]
    assert xp.asarray(1, device=device).dtype == out["integral"]
    assert xp.asarray(1.5j, device=device).dtype == out["complex floating"]


def test_wgpu_without_64_bit_features(wgpu_device, monkeypatch):
    """An adapter without shader-f64 / shader-int64 lists no 64-bit dtypes (nor complex128) and 32-bit
    defaults."""
    provider = wgpu_device.provider
    monkeypatch.setattr(provider, "f64", False)
    monkeypatch.setattr(provider, "i64", False)
    info = xp.__array_namespace_info__()
    out = info.dtypes(device=wgpu_device)
    assert "float64" not in out and "int64" not in out and "uint64" not in out and "complex128" not in out
    assert list(out) == ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32", "complex64"]
    assert info.dtypes(device=wgpu_device, kind="real floating") == {"float32": xp.float32}
    assert info.dtypes(device=wgpu_device, kind="complex floating") == {"complex64": xp.complex64}
    assert info.default_dtypes(device=wgpu_device) == {
        "real floating": xp.float32, "complex floating": xp.complex64, "integral": xp.int32, "indexing": xp.int32,
    }
    with pytest.raises(TypeError, match="shader-f64"):
        xp.asarray([1j], dtype=xp.complex128, device=wgpu_device)
    assert xp.asarray([1j], device=wgpu_device).dtype == xp.complex64
    # The host keeps every dtype.
    assert "float64" in info.dtypes(device="cpu")


def test_wgpu_without_f64_only(wgpu_device, monkeypatch):
    monkeypatch.setattr(wgpu_device.provider, "f64", False)
    info = xp.__array_namespace_info__()
    assert "float64" not in info.dtypes(device=wgpu_device)
    assert "complex128" not in info.dtypes(device=wgpu_device)
    assert "int64" in info.dtypes(device=wgpu_device)
    assert info.default_dtypes(device=wgpu_device)["real floating"] == xp.float32
    assert info.default_dtypes(device=wgpu_device)["integral"] == xp.int64
