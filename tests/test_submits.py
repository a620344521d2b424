"""When evaluations are submitted on wgpu (``WgpuProvider.end_evaluation``): small ones share a
submit with later ones until something needs their results; large ones are submitted at once;
buffers freed while a pass is open serve later dispatches of that pass but never uploads."""

from __future__ import annotations

from typing import Any

import numpy as np

import gpuarray as xp
from gpuarray.providers import webgpu

from .conftest import assert_same


def test_small_evaluations_share_a_submit(wgpu_device: xp.Device) -> None:
    x = xp.asarray(np.linspace(-3, 3, 5000, dtype=np.float32), device=wgpu_device)
    with xp.config(offload="always"):
        xp.evaluate(x + 0)
        xp.synchronize(wgpu_device)
        xp.reset_metrics()
        ys = [x + float(i) for i in range(1, 6)]       # one rounding each (no multiply-add to contract)
        for y in ys:
            xp.evaluate(y)
        assert xp.metrics()["submits"] == 0 and xp.metrics()["dispatches"] == 5
        assert_same(ys[3], np.linspace(-3, 3, 5000, dtype=np.float32) + np.float32(4))
        assert xp.metrics()["submits"] == 1           # the read submitted the pass first
        xp.reset_metrics()
        for i in range(webgpu.SUBMIT_DISPATCHES + 1):
            xp.evaluate(x - float(i))
        assert xp.metrics()["submits"] == 1           # the pass filled up


def test_large_evaluations_submit_at_once(wgpu_device: xp.Device, monkeypatch: Any) -> None:
    monkeypatch.setattr(webgpu, "SUBMIT_BYTES", 1 << 16)
    x = xp.asarray(np.ones(20000, dtype=np.float32), device=wgpu_device)
    with xp.config(offload="always"):
        xp.evaluate(x + 0)
        xp.reset_metrics()
        xp.evaluate(x * 2.0)
        assert xp.metrics()["submits"] == 1


def test_freed_buffers_are_reused_in_the_pass_but_not_by_uploads(wgpu_device: xp.Device) -> None:
    """A dropped result's buffer is written by a later dispatch of the same open pass (which runs
    after the dispatches that read it); an upload, which the queue writes before the pass runs,
    gets another buffer, so the pending dispatches still read what they should."""
    prov: Any = wgpu_device.provider
    h = np.linspace(-3, 3, 5000, dtype=np.float32)
    x = xp.asarray(h, device=wgpu_device)
    with xp.config(offload="always"):
        xp.evaluate(x + 0)
        xp.synchronize(wgpu_device)
        a = x * 2.0
        xp.evaluate(a)
        b = a + 1.0                 # reads a's buffer in the open pass
        xp.evaluate(b)
        buf = a._node.data.handle.buffer
        del a
        assert buf in prov._deferred
        u = xp.asarray(h * 5, device=wgpu_device)
        c = u - 4.0                 # uploads u (never into a buffer of the open pass); c takes buf
        xp.evaluate(c)
        assert u._node.data.handle.buffer is not buf
        assert c._node.data.handle.buffer is buf
        assert_same(b, h * np.float32(2) + np.float32(1))
        assert_same(c, h * np.float32(5) - np.float32(4))
        assert_same(u, h * 5)
