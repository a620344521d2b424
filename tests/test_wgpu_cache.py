"""The first call in a new process (primed cffi types, the on-disk WGSL cache, warm-up),
GPU timestamps into metrics() and profile(), and staged host <-> device transfers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gpuarray as xp
from gpuarray.providers import wgpu_cache, wgpu_pool, wgpu_timing
from gpuarray.render.wgsl import Rendered

from .conftest import assert_same

ROOT = Path(__file__).resolve().parent.parent

# A child process: evaluates the fused 8-op chain and x*2+1 on wgpu:0, prints the results'
# checksums and the metrics as JSON.
CHILD = """
import json, sys
import numpy as np
import gpuarray as xp
h = np.linspace(-3, 3, 4099, dtype=np.float32)
x = xp.asarray(h, device="wgpu:0")
with xp.config(offload="always"):
    y = xp.exp(-x * x * 0.5) * xp.sin(x) + xp.cos(x) * 0.25 - xp.tanh(x)
    z = x * 2 + 1
    got = [np.asarray(y), np.asarray(z)]
want = [np.exp(-h * h * 0.5) * np.sin(h) + np.cos(h) * 0.25 - np.tanh(h), h * 2 + 1]
ok = all(np.allclose(g, w, rtol=1e-5, atol=1e-6) for g, w in zip(got, want))
print(json.dumps({"ok": bool(ok), "metrics": xp.metrics()}))
"""


def _child(cache: Path, **env: str) -> dict[str, Any]:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    full = {**os.environ, "GPUARRAY_CACHE_DIR": str(cache), "PYTHONPATH": path, **env}
    out = subprocess.run([sys.executable, "-c", CHILD], env=full, capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / "kernels").glob("*/*.json"))


def test_kernel_cache_written_then_read_by_a_new_process(tmp_path: Path) -> None:
    first = _child(tmp_path)
    assert first["ok"]
    assert first["metrics"].get("kernel_disk_cache_hits", 0) == 0
    files = _entries(tmp_path)
    assert len(files) >= 2                     # the chain and x*2+1
    doc = json.loads(files[0].read_text())
    assert doc["format"] == wgpu_cache.FORMAT and "fn main" in doc["rendered"]["source"]
    assert (tmp_path / "kernels").is_dir() and list(tmp_path.glob("ffi-types-*.json"))
    second = _child(tmp_path)
    assert second["ok"]
    assert second["metrics"]["kernel_disk_cache_hits"] >= 2
    # the warm-up thread may have compiled the pipelines before the main thread asked
    m = second["metrics"]
    assert m["kernels_compiled"] + m.get("kernels_precompiled", 0) >= 2


def test_corrupt_and_foreign_cache_files_are_ignored(tmp_path: Path) -> None:
    assert _child(tmp_path)["ok"]
    files = _entries(tmp_path)
    files[0].write_text("{ not json")
    for f in files[1:]:
        doc = json.loads(f.read_text())
        doc["key"] = "another kernel"          # a file that is not what its name says
        f.write_text(json.dumps(doc))
    (tmp_path / "ffi-types-0.32.0.json").write_text("[1, 2, {}")
    again = _child(tmp_path)
    assert again["ok"] and again["metrics"].get("kernel_disk_cache_hits", 0) == 0
    # the bad entries were replaced by good ones
    assert all(json.loads(f.read_text())["key"] != "another kernel" for f in _entries(tmp_path))
    assert _child(tmp_path)["metrics"]["kernel_disk_cache_hits"] >= 2


def test_cache_disabled_by_environment(tmp_path: Path) -> None:
    out = _child(tmp_path, GPUARRAY_KERNEL_CACHE="0")
    assert out["ok"] and not (tmp_path / "kernels").exists()
    assert out["metrics"].get("kernel_disk_cache_hits", 0) == 0


def test_rendered_round_trip_and_stale_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUARRAY_CACHE_DIR", str(tmp_path))
    cache = wgpu_cache.KernelCache({"device": "test device", "backend_type": "Vulkan"}, ["shader-f64"])
    r = Rendered("fn main() {}", [("dim", 0, 1), ("c32", 2, 1), ("extra", "N")], {"f64": [3, (4, 1)]}, 2, 1)
    cache.put("k1", r)
    assert cache.get("k1") == r
    assert cache.get("k2") is None
    assert [k for k, _r in cache.recent(5)] == ["k1"]
    cache.put("k3", object())                  # not a Rendered: not stored
    assert len(list(cache.dir.glob("*.json"))) == 1
    v4 = Rendered("fn main() {}", [], {}, 1, 1, vec=4, per_thread=8)    # vec4, grid-stride loop
    cache.put("k4", v4)
    assert cache.get("k4") == v4 and len(list(cache.dir.glob("*.json"))) == 2


def test_old_version_directories_are_pruned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUARRAY_CACHE_DIR", str(tmp_path))
    info = {"device": "test device", "backend_type": "Vulkan"}
    cache = wgpu_cache.KernelCache(info, [])
    for i in range(6):
        d = cache.base / f"{cache.name}-{i:012d}"
        d.mkdir(parents=True)
        os.utime(d, (1000 + i, 1000 + i))
    other = cache.base / "another-adapter-000000000000"
    other.mkdir()
    cache.put("k", Rendered("src", [], {}, 1, 1))
    left = sorted(p.name for p in cache.base.iterdir())
    assert len([n for n in left if n.startswith(cache.name)]) == wgpu_cache.KEEP_VERSIONS
    assert cache.dir.name in left and other.name in left and f"{cache.name}-{5:012d}" in left


def test_entry_key_is_none_for_unstable_text() -> None:
    assert wgpu_cache.entry_key(print, None, ("elementwise", (), 1)) is not None
    assert wgpu_cache.entry_key(print, object(), ("elementwise",)) is None


def test_fast_ffi_types_match_cffi_parser(wgpu_device: xp.Device) -> None:
    from wgpu.backends.wgpu_native._ffi import ffi

    parser = ffi._parser
    checked = 0
    for cdecl in (*wgpu_cache.FFI_TYPES, "WGPUChainedStruct * ", "WGPUDevice const *", "uint32_t[]"):
        try:
            want = parser.parse_type(cdecl)
        except Exception:  # noqa: BLE001 - a name this wgpu version does not declare
            continue
        assert wgpu_cache._model(parser, cdecl) == want, cdecl
        checked += 1
    assert checked >= len(wgpu_cache.FFI_TYPES) - 2
    # forms the fast path does not know are left to cffi
    for cdecl in ("int(*)(int)", "WGPUBuffer **", "uint8_t[4]", "struct WGPUFoo *"):
        assert wgpu_cache._model(parser, cdecl) is None
    assert wgpu_cache.prime_ffi_types(["WGPUBuffer *"]) >= 0
    assert "WGPUBuffer *" in ffi._parsed_types
    assert ffi.typeof("WGPUBuffer *") is ffi._parsed_types["WGPUBuffer *"][0]


def test_pipeline_compiled_once_when_threads_race(wgpu_device: xp.Device) -> None:
    p = wgpu_device.provider
    src = ("@group(0) @binding(0) var<storage, read_write> a: array<u32>;\n"
           "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) "
           f"{{ if (g.x < arrayLength(&a)) {{ a[g.x] = a[g.x] + {np.random.default_rng().integers(1 << 30)}u; }} }}\n")
    xp.reset_metrics()
    got: list[Any] = []
    threads = [threading.Thread(target=lambda bg=bg: got.append(p.pipeline_for(src, background=bg)))
               for bg in (True, False, False)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    m = xp.metrics()
    assert m["kernels_compiled"] + m.get("kernels_precompiled", 0) == 1
    assert all(g is got[0] for g in got)


# ---- GPU timestamps
def test_gpu_times_in_metrics_and_profile(wgpu_device: xp.Device) -> None:
    p = wgpu_device.provider
    h = np.linspace(0, 1, 1 << 16, dtype=np.float32)
    x = xp.asarray(h, device=wgpu_device)
    xp.evaluate(x + 0)
    xp.reset_metrics()
    assert_same(xp.exp(x) * 3, np.exp(h) * np.float32(3), rtol=4e-7)    # timing off: nothing written
    assert xp.metrics().get("gpu_dispatches_timed", 0) == 0
    with xp.profile() as prof:
        for _ in range(2):
            xp.evaluate(xp.exp(x) * 2 + 1)
        s = xp.sum(x)
        xp.evaluate(s, xp.exp(x) * 2 + 1)       # two kernels, one evaluation
    m = xp.metrics()
    text = prof.table()
    counts = sorted(len(v) for v in prof.records.values())
    assert counts == [1, 3]
    if p.timer is None:                        # the adapter has no timestamp queries: wall clock
        assert set(prof.clock.values()) == {"wall"} and "wall clock" in text
        assert m.get("gpu_time_ns", 0) == 0
    else:
        assert set(prof.clock.values()) == {"gpu"} and "GPU time from timestamp queries" in text
        assert m["gpu_dispatches_timed"] >= 4 and m["gpu_time_ns"] > 0
        assert all(sum(v) > 0 for v in prof.records.values())
        assert m["submits"] <= m["evaluations"]  # kernels stay batched: no submit per kernel
        times = wgpu_timing.kernel_times()
        assert any(k.startswith("elementwise:exp") for k in times)
    assert float(s) == pytest.approx(float(h.sum()), rel=1e-5)


def test_profile_falls_back_to_wall_clock_without_timestamps(wgpu_device: xp.Device,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    p = wgpu_device.provider
    monkeypatch.setattr(p, "timer", None)
    x = xp.asarray(np.ones(256, np.float32), device=wgpu_device)
    xp.reset_metrics()
    with xp.profile() as prof:
        xp.evaluate(x * 5)
    assert list(prof.clock.values()) == ["wall"] and "wall clock" in prof.table()
    assert prof.total_seconds > 0 and xp.metrics().get("gpu_time_ns", 0) == 0


def test_gpu_timing_by_environment(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    p = wgpu_device.provider
    if p.timer is None:
        pytest.skip("no timestamp queries on this adapter (the fallback is tested above)")
    monkeypatch.setenv("GPUARRAY_GPU_TIMING", "1")
    h = np.arange(5000, dtype=np.int32)
    x = xp.asarray(h, device=wgpu_device)
    xp.reset_metrics()
    assert_same(x * 7 - 1, h * 7 - 1)          # the download reads the times
    m = xp.metrics()
    assert m["gpu_dispatches_timed"] == m["dispatches"] >= 1


# ---- transfers
SPECIAL = {
    "float32": np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, 3.4e38], np.float32),
    "float64": np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.7e308]),
    "int8": np.array([-128, 127, 0, -1], np.int8), "uint8": np.array([0, 255, 1], np.uint8),
    "int16": np.array([-32768, 32767], np.int16), "uint16": np.array([0, 65535], np.uint16),
    "int32": np.array([-2**31, 2**31 - 1], np.int32), "uint32": np.array([0, 2**32 - 1], np.uint32),
    "int64": np.array([-2**63, 2**63 - 1], np.int64), "uint64": np.array([0, 2**64 - 1], np.uint64),
    "bool": np.array([True, False]), "complex64": np.array([complex(np.nan, -0.0), 1 - 2j], np.complex64),
}


def _values(dtype: str, n: int) -> np.ndarray:
    """``n`` values of ``dtype``: the special ones first, then a pattern."""
    base = SPECIAL[dtype]
    out = np.resize(base, n) if dtype == "bool" else (np.arange(n) % 251).astype(dtype)
    k = min(n, len(base))
    out[:k] = base[:k]
    return out


def _round_trip(device: xp.Device, h: np.ndarray) -> np.ndarray:
    p = device.provider
    handle = p.upload(h)
    try:
        return p.download(handle, h.dtype, h.shape)
    finally:
        p.free(handle)


@pytest.mark.parametrize("dtype", sorted(SPECIAL))
@pytest.mark.parametrize("n", [0, 1, 7, 100003])
def test_round_trip_through_staging(device: xp.Device, dtype: str, n: int,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    # force the staged path in small pieces: several per array, the two buffers alternating
    monkeypatch.setattr(wgpu_pool, "STAGE_BYTES", 64 << 10)
    monkeypatch.setattr(wgpu_pool, "STAGED_MIN", 1024)
    h = _values(dtype, n)
    assert_same(_round_trip(device, h), h)
    monkeypatch.setattr(wgpu_pool, "STAGED_MIN", 1 << 30)     # queue.write_buffer
    assert_same(_round_trip(device, h), h)


def test_round_trip_through_kernels(device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wgpu_pool, "STAGE_BYTES", 256 << 10)
    monkeypatch.setattr(wgpu_pool, "STAGED_MIN", 0)
    h = np.arange(12 * 4099, dtype=np.float32).reshape(12, 4099) - 7
    assert_same(xp.asarray(h, device=device) * 1, h)
    assert_same(xp.asarray(h > 3, device=device) | False, h > 3)
    assert_same(xp.asarray(np.float32(-0.0), device=device) * 1, np.float32(-0.0))
    assert_same(_round_trip(device, h[:, :0]), h[:, :0])


def test_segmented_arrays_round_trip(wgpu_device: xp.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuarray.providers.webgpu import SegmentedHandle

    p = wgpu_device.provider
    mib = 1 << 20
    monkeypatch.setattr(p, "max_binding", mib)
    monkeypatch.setattr(p, "max_buffer", 3 * mib)
    monkeypatch.setattr(wgpu_pool, "STAGE_BYTES", 512 << 10)
    monkeypatch.setattr(wgpu_pool, "STAGED_MIN", 1024)
    n = 2 * mib + 12345                       # 8 MiB of float32: three segments
    h = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    h[[0, 7, n - 1]] = [np.nan, -0.0, np.inf]
    handle = p.upload(h)
    try:
        assert isinstance(handle, SegmentedHandle) and len(handle.parts) == 3
        assert_same(p.download(handle, h.dtype, h.shape), h)
    finally:
        p.free(handle)
    assert_same(xp.asarray(h, device=wgpu_device) * 2 - 1, h * np.float32(2) - np.float32(1))
    assert_same(_round_trip(wgpu_device, h > 0), h > 0)


def test_failed_staged_upload_leaves_no_mapped_buffers(wgpu_device: xp.Device,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    p = wgpu_device.provider
    monkeypatch.setattr(wgpu_pool, "STAGE_BYTES", 64 << 10)
    monkeypatch.setattr(wgpu_pool, "STAGED_MIN", 1024)
    calls = []
    real = wgpu_pool.par_copy

    def flaky(dst: np.ndarray, src: np.ndarray) -> None:
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("injected copy failure")
        real(dst, src)

    monkeypatch.setattr(wgpu_pool, "par_copy", flaky)
    h = np.arange(100000, dtype=np.float32)
    live = p.staging_w.live
    with pytest.raises(RuntimeError, match="injected"):
        p.upload(h)
    assert p.staging_w.live == live
    monkeypatch.setattr(wgpu_pool, "par_copy", real)
    assert_same(xp.asarray(h, device=wgpu_device) + 1, h + 1)


@pytest.mark.parametrize("src_dtype,dst_dtype", [("float32", "float32"), ("uint32", "bool"),
                                                 ("int32", "int8"), ("uint32", "uint16")])
def test_parallel_copy_converts_like_astype(src_dtype: str, dst_dtype: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUARRAY_COPY_THREADS", "4")
    monkeypatch.setattr(wgpu_pool, "PAR_MIN", 1 << 12)
    src = np.random.default_rng(1).integers(0, 1 << 16, 100003).astype(src_dtype)
    src[:3] = [0, 1, 255]
    dst = np.empty(src.size, dtype=dst_dtype)
    wgpu_pool.par_copy(dst, src)
    np.testing.assert_array_equal(dst, src.astype(dst_dtype))
