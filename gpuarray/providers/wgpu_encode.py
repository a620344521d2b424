"""Recording dispatches into an open compute pass through wgpu-native's C entry points.

A dispatch is three pass commands: set the pipeline, set the bind group (with the parameters'
dynamic offset), dispatch the workgroups. Through wgpu-py each is a method that wraps the C
call in its error-capturing proxy: about twenty Python calls per dispatch, the largest part of
a small cached evaluation's host time after the bind groups are reused. wgpu-native records
pass commands without checking them (errors surface when the pass ends, through wgpu-py's
``end`` and ``finish``), and its compute pass keeps what it binds alive itself (wgpu-py's
``_maybe_keep_alive`` is empty for compute passes), so the C functions are called directly.
Where they cannot be found (another wgpu backend or version) the wgpu-py methods are used.

>>> PassRecorder(None).direct
False
"""

from __future__ import annotations

from typing import Any

try:
    from wgpu.backends.wgpu_native._ffi import ffi as _ffi
    from wgpu.backends.wgpu_native._ffi import lib as _lib

    _SET_PIPELINE: Any = _lib.wgpuComputePassEncoderSetPipeline
    _SET_BIND_GROUP: Any = _lib.wgpuComputePassEncoderSetBindGroup
    _DISPATCH: Any = _lib.wgpuComputePassEncoderDispatchWorkgroups
except (ImportError, AttributeError):      # pragma: no cover - another wgpu build
    _ffi = _SET_PIPELINE = _SET_BIND_GROUP = _DISPATCH = None


class PassRecorder:
    """Records pipeline, bind group (one dynamic offset) and dispatch commands into ``cpass``
    (a wgpu-py ``GPUComputePassEncoder``); a pipeline already set is not set again."""

    __slots__ = ("cpass", "raw", "offsets", "pipeline", "direct")

    def __init__(self, cpass: Any) -> None:
        self.cpass = cpass
        self.raw = getattr(cpass, "_internal", None)
        self.direct = _SET_PIPELINE is not None and self.raw is not None
        self.offsets: Any = _ffi.new("uint32_t[1]") if self.direct else None
        self.pipeline: Any = None

    def dispatch(self, pipeline: Any, bind: Any, offset: int, gx: int, gy: int) -> None:
        """Bind ``pipeline`` and ``bind`` (parameters at dynamic ``offset``), dispatch ``gx`` x ``gy``."""
        if self.direct:
            if pipeline is not self.pipeline:
                _SET_PIPELINE(self.raw, pipeline._internal)
                self.pipeline = pipeline
            self.offsets[0] = offset
            _SET_BIND_GROUP(self.raw, 0, bind._internal, 1, self.offsets)
            _DISPATCH(self.raw, gx, gy, 1)
            return
        if pipeline is not self.pipeline:
            self.cpass.set_pipeline(pipeline)
            self.pipeline = pipeline
        self.cpass.set_bind_group(0, bind, [offset])
        self.cpass.dispatch_workgroups(gx, gy, 1)
