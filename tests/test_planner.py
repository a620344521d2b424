"""Automatic placement, residency, thresholds, calibration, explain() and profile()."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuarray as xp
import gpuarray.linalg.jacobi as _jacobi
from gpuarray.runtime import calibration as _calibration
from gpuarray.runtime import planner
from gpuarray.runtime.thresholds import CPU_ELEMENTWISE

from .conftest import assert_same


@pytest.fixture
def auto():
    # eager_host=False: these tests look at how the planner places recorded kernels; the eager
    # small-array path that skips recording is tested in tests/test_small_arrays.py
    with xp.config(offload="auto", elementwise_threshold=None, reduction_threshold=None, eager_host=False):
        yield


def _small_chain_on_the_host(device) -> dict:
    """``exp(x) * 2 + 1`` of 100 values: one host kernel, nothing moved, the planner's reason the
    threshold; the metrics."""
    h = np.arange(100, dtype=np.float32) / 10
    x = xp.asarray(h, device=device)
    xp.reset_metrics()
    y = xp.exp(x) * 2 + 1
    assert_same(y, np.exp(h) * 2 + 1, rtol=1e-6)
    m = xp.metrics()
    assert m["bytes_uploaded"] == 0 and m["dispatches"] == 0 and m["host_fallbacks"] == 0
    assert m["host_kernels"] == 1
    assert y.device == device
    assert "below the elementwise threshold" in planner.decisions()[-1]["why"]
    return m


def test_small_work_stays_on_the_host(wgpu_device, auto):
    _small_chain_on_the_host(wgpu_device)


def test_small_work_reading_a_constant_evaluated_on_the_device_stays_on_the_host(wgpu_device, auto):
    # constants are shared nodes: one an earlier evaluation realized on the device (a 0-d array
    # evaluated there) keeps its value on the host too, and later uses of the value get a fresh
    # constant (graph.node.make), so small work reading it needs no download
    from gpuarray.graph import node as graph_node
    with xp.config(offload="always"):
        two = xp.full((), 2.0, dtype=xp.float32, device=wgpu_device)
        xp.evaluate(two)
    assert two._node.data.host is not None and float(two._node.data.host) == 2.0
    c = graph_node.const(2.0, np.dtype(np.float32), wgpu_device)
    assert c.data is None and c is not two._node
    assert _small_chain_on_the_host(wgpu_device)["bytes_downloaded"] == 0


def test_large_work_runs_on_the_device(wgpu_device, auto):
    n = 1 << 17
    x = xp.asarray(np.ones(n, dtype=np.float32), device=wgpu_device)
    xp.reset_metrics()
    s = xp.sum(x * 2)
    assert float(s) == 2 * n
    m = xp.metrics()
    assert m["dispatches"] >= 1 and m["bytes_uploaded"] == 4 * n


def test_resident_input_keeps_small_host_data_on_the_device(wgpu_device, auto):
    n = 1 << 17
    big = xp.asarray(np.ones(n, dtype=np.float32), device=wgpu_device)
    xp.evaluate(big * 1)                      # big is now resident on the device
    small = xp.asarray(np.arange(4, dtype=np.float32), device=wgpu_device)
    xp.reset_metrics()
    r = big[:4] + small                       # tiny, but one input lives on the device
    xp.evaluate(r)
    assert xp.metrics()["dispatches"] == 1
    assert "already on wgpu:0" in planner.decisions()[-1]["why"]
    assert_same(r, np.arange(4, dtype=np.float32) + 1)


def _eigh_then_flip(device, monkeypatch):
    """``eigh`` of one 8 x 8 matrix by LAPACK on the host (the device's Jacobi turned off: a fallback, as
    for a complex matrix), then small work on its vectors."""
    monkeypatch.setattr(_jacobi, "applies", lambda n: False)     # LAPACK's eigh: a host fallback
    a = np.random.default_rng(3).uniform(-3, 3, (8, 8)).astype(np.float32)
    a = a + a.T
    w, v = xp.linalg.eigh(xp.asarray(a, device=device))
    xp.evaluate(w, v)
    r = xp.flip(v, axis=1) * 2.0
    xp.evaluate(r)
    assert_same(r, np.linalg.eigh(a)[1][:, ::-1] * 2, rtol=1e-6, atol=1e-6)
    return v


def test_small_fallback_result_is_uploaded_and_work_after_it_stays_on_the_device(wgpu_device, auto, monkeypatch):
    """A fallback's result of at most FALLBACK_UPLOAD bytes is uploaded at once (no wait), so the
    small work after it runs on the device (rule 4) instead of on the host."""
    v = _eigh_then_flip(wgpu_device, monkeypatch)
    assert v._node.data.on_device(wgpu_device.provider)
    assert planner.decisions()[-1]["placed"] == "device"
    assert "already on wgpu:0" in planner.decisions()[-1]["why"]


def test_larger_fallback_result_stays_on_the_host(wgpu_device, auto, monkeypatch):
    monkeypatch.setattr(planner, "FALLBACK_UPLOAD", 0)
    v = _eigh_then_flip(wgpu_device, monkeypatch)
    assert not v._node.data.on_device(wgpu_device.provider)
    assert planner.decisions()[-1]["placed"] == "host"


def test_repeated_evaluation_of_resident_array_moves_nothing(wgpu_device, auto):
    x = xp.asarray(np.ones(1 << 17, dtype=np.float32), device=wgpu_device)
    y = x * 3
    xp.evaluate(y)
    xp.reset_metrics()
    for _ in range(3):
        xp.evaluate(y)
        xp.evaluate(y + 1)
    m = xp.metrics()
    assert m["bytes_uploaded"] == 0 and m["bytes_downloaded"] == 0


def test_thresholds_from_config_and_environment(wgpu_device, auto, monkeypatch):
    x = xp.asarray(np.ones(100, dtype=np.float32), device=wgpu_device)
    with xp.config(elementwise_threshold=10):
        xp.reset_metrics()
        xp.evaluate(x + 1)
        assert xp.metrics()["dispatches"] == 1
    monkeypatch.setenv("GPUARRAY_ELEMENTWISE_THRESHOLD", "5")
    assert planner.thresholds(wgpu_device)["elementwise"] == 5
    with xp.config(elementwise_threshold=1000):
        assert planner.thresholds(wgpu_device)["elementwise"] == 1000
    with pytest.raises(ValueError, match="non-negative int"):
        xp.config(elementwise_threshold=-1)
    with xp.config(offload="never"):
        xp.reset_metrics()
        xp.evaluate(xp.asarray(np.ones(1 << 17, np.float32), device=wgpu_device) * 2)
        assert xp.metrics()["dispatches"] == 0


def test_calibration_is_written_reloaded_and_overridden(wgpu_device, auto, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUARRAY_CACHE_DIR", str(tmp_path))
    _calibration.forget()
    try:
        res = xp.calibrate(wgpu_device, repeats=1, progress=False,
                           sizes={"elementwise": [256, 4096], "reduction": [256, 4096], "matmul": [16, 32]})
        path = tmp_path / "calibration" / f"{_calibration.adapter_key(wgpu_device)}.json"
        assert res["path"] == str(path) and path.exists()
        stored = json.loads(path.read_text())
        assert set(stored["thresholds"]) == {"elementwise", "reduction", "matmul"}
        assert len(stored["measurements"]) == 6
        _calibration.forget()
        assert _calibration.load(wgpu_device) == stored["thresholds"]
        assert planner.thresholds(wgpu_device)["matmul"] == stored["thresholds"]["matmul"]
        # a later process reads the same file; the environment overrides it
        code = ("import gpuarray as xp; from gpuarray import planner; "
                "print(planner.thresholds(xp.Device('wgpu:0'))['reduction'])")
        env = dict(os.environ, GPUARRAY_CACHE_DIR=str(tmp_path))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        assert out.stdout.strip() == str(stored["thresholds"]["reduction"]), out.stderr
        env["GPUARRAY_REDUCTION_THRESHOLD"] = "7"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        assert out.stdout.strip() == "7", out.stderr
    finally:
        _calibration.forget()


def test_explain_reports_groups_placement_wgsl_and_bytes(wgpu_device, auto):
    n = 1 << 17
    x = xp.asarray(np.ones(n, dtype=np.float32), device=wgpu_device)
    y = xp.sum(xp.exp(x) * 2) + xp.max(x)
    report = xp.explain(y)
    assert [k.kind for k in report.kernels] == ["reduce", "reduce"]     # the add: max's fused epilogue
    assert report.kernels[0].ops == ["exp", "multiply", "reduce"]
    assert "add" in report.kernels[1].ops
    assert report.upload_bytes == 4 * n          # x is uploaded once for both reductions
    assert "fn main" in (report.kernels[0].wgsl or "")
    text = str(report)
    assert "reduction threshold" in text and "bytes up" in text
    assert not y._node.realized                  # explain evaluates nothing
    small = xp.explain(xp.asarray([1.0, 2.0], device=wgpu_device) * 2)
    assert small.kernels[0].placed == "host" and small.kernels[0].wgsl is None
    assert str(xp.explain(x)) == "nothing to do: every array is already evaluated"


def test_profile_counts_kernels(device):
    x = xp.asarray(np.ones(64, dtype=np.float32), device=device)
    with xp.profile() as p:
        for _ in range(3):
            xp.evaluate(x * 2 + 1)
        xp.evaluate(xp.sum(x))
    counts = sorted(len(v) for v in p.records.values())
    assert counts == [1, 3]
    assert "count" in p.table() and p.total_seconds > 0


def test_kernels_too_wide_for_the_adapter_are_cut_not_sent_to_the_host(wgpu_device, monkeypatch):
    """A fused kernel that would bind more storage buffers than the adapter allows evaluates parts of its
    cone first (runtime.cuts) instead of running on the host: a sum of 40 arrays with the WebGPU minimum of 8
    storage buffers, a chain of 30 gathers each reading a sort's result (unique(axis=0)'s row sort)."""
    rng = np.random.default_rng(4)
    host = [rng.standard_normal(500).astype(np.float32) for _ in range(40)]
    arrs = [xp.asarray(h, device=wgpu_device) for h in host]
    monkeypatch.setattr(wgpu_device.provider, "max_storage_buffers", 8)
    xp.reset_metrics()
    total = arrs[0]
    for a in arrs[1:]:
        total = total * 0.5 + a
    want = host[0]
    for h in host[1:]:
        want = want * np.float32(0.5) + h
    np.testing.assert_allclose(np.asarray(total), want, rtol=1e-5)
    assert xp.metrics()["host_fallbacks"] == 0 and xp.metrics()["dispatches"] > 1
    monkeypatch.undo()
    m = (rng.standard_normal((60, 30)) > 0).astype(np.int32)
    xp.reset_metrics()
    got = np.unique(xp.asarray(m, device=wgpu_device), axis=0, return_index=True, return_inverse=True,
                    return_counts=True)
    for g, w in zip(got, np.unique(m, axis=0, return_index=True, return_inverse=True, return_counts=True),
                    strict=True):
        np.testing.assert_array_equal(np.asarray(g), w)
    assert xp.metrics()["host_fallbacks"] == 0
    # one node that reads more inputs than allowed by itself cannot be cut: the host, as before
    monkeypatch.setattr(wgpu_device.provider, "max_storage_buffers", 8)
    xp.reset_metrics()
    with xp.config(fallback="silent"):
        np.testing.assert_array_equal(np.asarray(xp.stack(arrs[:6])), np.stack(host[:6]))


def test_many_outputs_too_wide_together_are_evaluated_in_parts(wgpu_device, monkeypatch):
    """Results of one shape computed in a Python loop and evaluated together fuse sideways into one kernel of
    many outputs; where that kernel binds more storage buffers than the adapter allows, its outputs are
    evaluated a part at a time on the device (planner._first_outputs), not on the host: 37 row ranges read
    together, stacked, and through ``np.apply_along_axis`` (which stacks them), with 24 storage buffers (a
    join of 16 arrays binds 21)."""
    rng = np.random.default_rng(5)
    h = rng.uniform(-3, 3, (37, 29)).astype(np.float32)
    a = xp.asarray(h, device=wgpu_device)
    want = np.ptp(h, axis=1)
    monkeypatch.setattr(wgpu_device.provider, "max_storage_buffers", 24)
    xp.reset_metrics()
    parts = [a[i].max() - a[i].min() for i in range(37)]
    xp.evaluate(*parts)
    np.testing.assert_array_equal([float(p) for p in parts], want)
    np.testing.assert_array_equal(np.asarray(xp.stack([a[i].max() - a[i].min() for i in range(37)])), want)
    got = np.apply_along_axis(lambda r: r.max() - r.min(), 1, a)
    assert isinstance(got, xp.GpuArray)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert xp.metrics()["host_fallbacks"] == 0


def test_storage_buffer_limit_is_bounded_by_the_bind_group():
    """NVIDIA's Vulkan driver reports no per-stage limit (2^32 - 1); a bind group holds at most 1000
    bindings in wgpu, and the planner keeps kernels far below that (SciPy's ``stats.power(batch=1)`` fused a
    thousand p-values into one kernel there: 'Binding index 1000 is greater than the maximum number 1000')."""
    from gpuarray.providers.wgpu_adapter import MAX_KERNEL_BINDINGS, storage_buffer_limit

    huge = {"max-storage-buffers-per-shader-stage": 2**32 - 1, "max-bindings-per-bind-group": 1000}
    assert storage_buffer_limit(huge) == MAX_KERNEL_BINDINGS <= 1000 - 8
    assert storage_buffer_limit({**huge, "max-bindings-per-bind-group": 40}) == 40
    assert storage_buffer_limit({"max-storage-buffers-per-shader-stage": 10}) == 10
    assert storage_buffer_limit({}) == 8            # WebGPU's minimum


def test_many_results_concatenated(device, monkeypatch):
    """Statistics computed one by one and concatenated (``stats.power`` with ``batch=1``, which makes a
    thousand) give NumPy's values on every device, the kernel cut to the adapter's storage-buffer limit, its
    output groups found in one walk: the nodes scheduled grow linearly (13168 for these 300 on lavapipe;
    118917 when each group's evaluation scheduled the whole rest again)."""
    import importlib

    schedule = importlib.import_module("gpuarray.compiler.schedule")     # the package exports a function of that name
    scheduled = [0]
    real = schedule._schedule

    def spy(order, live, held):
        scheduled[0] += len(order)
        return real(order, live, held)

    monkeypatch.setattr(schedule, "_schedule", spy)
    rng = np.random.default_rng(23)
    h = rng.standard_normal((300, 10)).astype(np.float32)
    a = xp.asarray(h, device=device)
    parts = [xp.mean(a[i]) / (xp.std(a[i], correction=1) / np.float32(np.sqrt(10))) for i in range(300)]
    got = xp.concat([xp.reshape(p, (1,)) for p in parts])
    want = h.mean(axis=1) / (h.std(axis=1, ddof=1) / np.float32(np.sqrt(10)))
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=1e-6)
    assert scheduled[0] <= 100 * 300, scheduled
    assert int(xp.sum(got > 1.0)) == int(np.sum(want > 1.0))


def test_heavy_special_functions_run_in_one_kernel_source_wherever_called(device):
    """On a device that compiles shaders, a heavy special function (the incomplete beta / gamma family) is a kernel
    of its own over computed operands: one WGSL source for a plain call, a call inside a reduction, and the
    row-fused t-test's p-values (NVIDIA's compiler takes 12-17 s for each such source and 76 s for ``stdtr``
    fused into a ``sum``; SciPy's ``stats.power(batch=1)`` compiled a new one per context, 160 s on the H200).
    The values still match SciPy's, sideways-fused results of one shape included."""
    import gpuarray.special as sp

    scipy_special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(1)
    hdf, ht, hx = rng.uniform(1, 30, 16), rng.uniform(-5, 5, 16), rng.uniform(0, 1, 16)
    h = rng.standard_normal((16, 10))
    df, t, x, a = (xp.asarray(v, device=device) for v in (hdf, ht, hx, h))
    tt = xp.mean(a, axis=1) / (xp.std(a, axis=1, correction=1) / np.sqrt(10))
    cases = {"plain": sp.stdtr(df, t), "reduce": xp.sum(sp.stdtr(df, t * 2 + 1) * x),
             "ttest": 2 * sp.stdtr(df - 1 + 0 * tt, -xp.abs(tt))}
    if device.kind == "wgpu":
        sources = set()
        for name, r in cases.items():
            heavy = [k for k in xp.explain(r).kernels if "stdtr" in k.ops]
            assert [k.ops for k in heavy] == [["stdtr"]], (name, [k.ops for k in xp.explain(r).kernels])
            sources.add(heavy[0].wgsl)
        assert len(sources) == 1
    hs = scipy_special.stdtr
    ref_t = h.mean(axis=1) / (h.std(axis=1, ddof=1) / np.sqrt(10))
    want = {"plain": hs(hdf, ht), "reduce": np.sum(hs(hdf, ht * 2 + 1) * hx), "ttest": 2 * hs(hdf - 1, -abs(ref_t))}
    for name, r in cases.items():
        np.testing.assert_allclose(np.asarray(r), want[name], rtol=1e-12, atol=1e-15, err_msg=name)
    ps = [2 * sp.stdtr(9.0, -xp.abs(xp.mean(a[i]) / (xp.std(a[i], correction=1) / np.sqrt(10)))) for i in range(9)]
    xp.evaluate(*ps)
    np.testing.assert_allclose([float(p) for p in ps], 2 * hs(9.0, -abs(ref_t[:9])), rtol=1e-12, atol=1e-15)


def test_heavy_function_of_a_reduction_beside_its_epilogue(device):
    """A reduction's epilogue group that also reads a heavy function of the reduction's own value (a t-test's
    statistic and p-value evaluated together, ``scipy.stats.ttest_ind(a, b, axis=1)``) is not fused into the
    reduction: the heavy op's kernel runs after the reduction's, so the epilogue would read it before it exists
    (an AttributeError from the planner before)."""
    import gpuarray.special as sp

    scipy_special = pytest.importorskip("scipy.special")
    h = np.random.default_rng(2).standard_normal((39, 25))
    a = xp.asarray(h, device=device) + 0
    t = xp.sum(a, axis=1) / 5.0
    p = 2 * sp.stdtr(24.0, -xp.abs(t))
    both = t * 0.5 + p
    xp.evaluate(t, both)
    ref_t = h.sum(axis=1) / 5.0
    np.testing.assert_allclose(np.asarray(t), ref_t, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(both), ref_t * 0.5 + 2 * scipy_special.stdtr(24.0, -abs(ref_t)),
                               rtol=1e-12, atol=1e-15)


def test_thresholds_answer_again_until_a_source_changes(wgpu_device, auto, monkeypatch):
    """``thresholds`` keeps its last answer per device (runtime/thresholds.py): a change of the environment, of a
    global or ``with`` setting, or a dropped calibration gives a fresh one; a caller's edit of the dict it got
    changes nothing."""
    monkeypatch.delenv("GPUARRAY_ELEMENTWISE_THRESHOLD", raising=False)
    first = planner.thresholds(wgpu_device)
    first["elementwise"] = -5                       # the caller's copy
    again = planner.thresholds(wgpu_device)
    assert again["elementwise"] != -5 and again == planner.thresholds(wgpu_device)
    monkeypatch.setenv("GPUARRAY_ELEMENTWISE_THRESHOLD", "123")
    assert planner.thresholds(wgpu_device)["elementwise"] == 123
    with xp.config(elementwise_threshold=77):
        assert planner.thresholds(wgpu_device)["elementwise"] == 77
    assert planner.thresholds(wgpu_device)["elementwise"] == 123
    matmul = planner.thresholds(wgpu_device)["matmul"]
    xp.config(matmul_threshold=55)                  # a plain call: process-wide (``auto`` sets the others)
    try:
        assert planner.thresholds(wgpu_device)["matmul"] == 55
    finally:
        xp.config(matmul_threshold=None)
    assert planner.thresholds(wgpu_device)["matmul"] == matmul
    monkeypatch.delenv("GPUARRAY_ELEMENTWISE_THRESHOLD")
    _calibration.forget()
    assert planner.thresholds(wgpu_device)["elementwise"] == again["elementwise"]
    assert planner.thresholds(xp.Device("cpu"))["elementwise"] == CPU_ELEMENTWISE
