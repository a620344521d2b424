"""Command encoders, compute passes, submits and small reads through wgpu-native's C entry points.

A dispatch is three pass commands: set the pipeline, set the bind group (with the parameters'
dynamic offset), dispatch the workgroups. Through wgpu-py each is a method that wraps the C
call in its error-capturing proxy: about twenty Python calls per dispatch, the largest part of
a small cached evaluation's host time after the bind groups are reused. wgpu-native records
pass commands without checking them (errors surface when the pass ends, through wgpu-py's
``end`` and ``finish``), and its compute pass keeps what it binds alive itself (wgpu-py's
``_maybe_keep_alive`` is empty for compute passes), so the C functions are called directly.
Where they cannot be found (another wgpu backend or version) the wgpu-py methods are used.

The same holds one level up: making a command encoder and its compute pass, ending and
submitting them, and reading a few bytes back cost about 300 Python calls through wgpu-py
(descriptor structs, promises, a poller token, proxies; ``float(x.sum())`` paid them all).
``RawPass`` makes, ends, finishes and submits them through the C functions and ``SmallReader``
maps a kept buffer and waits for it by polling the device, each group of C calls inside one
capture of wgpu-py's error handler, so that a validation error raises the ``GPUError`` that
wgpu-py would raise. A pass that writes timestamps (``wgpu_timing``) stays a wgpu-py pass.

>>> PassRecorder(None).direct
False
"""

from __future__ import annotations

import time
from typing import Any

# SmallReader polls without blocking for up to this long before it waits on the device's fence:
# H200, float((x * 2).sum()) of 1000 to 2^24 elements took 164-215 us a call with blocking polls
# (the fence's wake-up) and 125-184 us spinning; longer waits block, to leave the CPU to others
SPIN_READ_S = 0.0005

try:
    from wgpu import GPUError as _GPUError
    from wgpu.backends.wgpu_native._api import error_handler as _EH
    from wgpu.backends.wgpu_native._ffi import ffi as _ffi
    from wgpu.backends.wgpu_native._ffi import lib as _lib
    from wgpu.backends.wgpu_native._helpers import ERROR_TYPES as _ERROR_TYPES

    _SET_PIPELINE: Any = _lib.wgpuComputePassEncoderSetPipeline
    _SET_BIND_GROUP: Any = _lib.wgpuComputePassEncoderSetBindGroup
    _DISPATCH: Any = _lib.wgpuComputePassEncoderDispatchWorkgroups
    _C: Any = _lib           # the encoder, submit and map functions below are looked up on it
    _ENC_DESC: Any = _ffi.new("WGPUCommandEncoderDescriptor *")       # zeroed: no label
    _PASS_DESC: Any = _ffi.new("WGPUComputePassDescriptor *")
    _CB_DESC: Any = _ffi.new("WGPUCommandBufferDescriptor *")
    for _name in ("wgpuDeviceCreateCommandEncoder", "wgpuCommandEncoderBeginComputePass",
                  "wgpuComputePassEncoderEnd", "wgpuCommandEncoderCopyBufferToBuffer",
                  "wgpuCommandEncoderFinish", "wgpuQueueSubmit", "wgpuComputePassEncoderRelease",
                  "wgpuCommandEncoderRelease", "wgpuCommandBufferRelease", "wgpuBufferMapAsync",
                  "wgpuDevicePoll", "wgpuBufferGetConstMappedRange", "wgpuBufferUnmap", "wgpuQueueWriteBuffer"):
        getattr(_lib, _name)

    _CAST: Any = getattr(_ffi, "_backend", _ffi).cast      # ffi.cast less its two Python-level calls
    _U32P: Any = _ffi.typeof("uint32_t *")

    @_ffi.callback("void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)")
    def _on_map(status: int, _message: Any, flag: Any, _user2: Any) -> None:
        _CAST(_U32P, flag)[0] = status
except (ImportError, AttributeError):      # pragma: no cover - another wgpu build
    _ffi = _SET_PIPELINE = _SET_BIND_GROUP = _DISPATCH = _C = None

RAW = _C is not None        # RawPass and SmallReader can be used


class _Slot:
    """An error slot as wgpu-py's ``ErrorSlot`` (its error callback sets ``type`` and ``message``),
    made without a Python ``__init__``."""

    name = "gpuarray"
    type: Any = None
    message: Any = None


def _capture(name: str) -> Any:
    """Begin capturing wgpu-native's errors, as wgpu-py's proxies do around each call (an error
    slot on the handler's per-thread stack, which its error callback fills); returns the slot for
    ``_release``. One Python call (operators on the stack, a slot class without ``__init__``) where
    wgpu-py's capture and release take eight; ``name`` documents the call site."""
    try:
        stack = _EH._per_thread_data.stack
    except AttributeError:                  # the first capture in this thread makes the stack
        stack = _EH._get_proxy_stack()
    slot = _Slot()
    stack += (slot,)
    return slot


def _release(slot: Any) -> None:
    """End the capture of ``slot`` (``_capture``'s): raise the ``GPUError`` it caught, if any."""
    stack = _EH._per_thread_data.stack
    top = stack[-1] if stack else None
    if top is slot:
        del stack[-1]
    else:                                   # never expected: what wgpu-py's release does
        if stack:
            del stack[-1]
        _EH.log_error("gpuarray: wgpu error capture out of sync")
    if slot.message is not None:
        raise _ERROR_TYPES.get(slot.type, _GPUError)(slot.message)


def write_buffer(queue: Any, buffer: Any, offset: int, data: Any, data_offset: int = 0,
                 size: int | None = None) -> None:
    """``queue.write_buffer(buffer, offset, data, data_offset, size)`` through the C entry point, ``data`` a
    C-contiguous NumPy array: wgpu-py's checks and its memoryview of the data cost more than copying a
    small one (H200: a third of a small upload's host time)."""
    if size is None:
        size = data.nbytes - data_offset
    internal = getattr(queue, "_internal", None)
    if not RAW or internal is None:         # another wgpu build, or a test's stand-in queue
        queue.write_buffer(buffer, offset, data, data_offset, size)
        return
    slot = _capture("write_buffer")
    try:
        _C.wgpuQueueWriteBuffer(internal, buffer._internal, offset, _ffi.from_buffer(data) + data_offset, size)
    finally:
        _release(slot)


class RawPass:
    """A command encoder with an open compute pass (``compute=False``: none), made through the C
    entry points; it stands in for both wgpu-py objects of a provider's open pass. ``submit`` ends
    the pass, records ``then(self)`` (``copy_buffer_to_buffer``, wgpu-py's signature), calls
    ``before()`` (the parameter upload), finishes and submits, all in one error capture. Released
    when submitted, or when dropped unsubmitted (a lost device)."""

    __slots__ = ("enc", "cpass")

    def __init__(self, device: Any, compute: bool = True) -> None:
        self.enc = self.cpass = None
        slot = _capture("RawPass")
        try:
            self.enc = _C.wgpuDeviceCreateCommandEncoder(device._internal, _ENC_DESC)
            if compute:
                self.cpass = _C.wgpuCommandEncoderBeginComputePass(self.enc, _PASS_DESC)
        finally:
            _release(slot)

    def copy_buffer_to_buffer(self, src: Any, src_offset: int, dst: Any, dst_offset: int, size: int) -> None:
        """Record a copy after the pass (only inside ``submit``'s ``then``: its capture)."""
        _C.wgpuCommandEncoderCopyBufferToBuffer(self.enc, src._internal, src_offset, dst._internal,
                                                dst_offset, size)

    def submit(self, queue: Any, then: Any = None, before: Any = None) -> None:
        """End the pass, record ``then(self)``, run ``before()``, finish and submit to ``queue`` (a
        wgpu-py ``GPUQueue``); releases the encoder and pass."""
        cb = None
        try:
            slot = _capture("RawPass.finish")
            try:
                if self.cpass is not None:
                    _C.wgpuComputePassEncoderEnd(self.cpass)
                if then is not None:
                    then(self)
                if before is not None:
                    before()
                cb = _C.wgpuCommandEncoderFinish(self.enc, _CB_DESC)
            finally:
                _release(slot)          # before the submit: wgpu-native aborts the process
            slot = _capture("RawPass.submit")       # on an invalid command buffer there
            try:
                _C.wgpuQueueSubmit(queue._internal, 1, [cb])
            finally:
                _release(slot)
        finally:
            if cb is not None:
                _C.wgpuCommandBufferRelease(cb)
            self._release()

    def _release(self) -> None:
        if self.cpass is not None:
            _C.wgpuComputePassEncoderRelease(self.cpass)
            self.cpass = None
        if self.enc is not None:
            _C.wgpuCommandEncoderRelease(self.enc)
            self.enc = None

    def __del__(self) -> None:
        if self.enc is not None and _C is not None:
            self._release()


class SmallReader:
    """Reads of at most ``nbytes`` through one kept MAP_READ buffer that only it maps: ``read``
    maps it (its copy just submitted), polls the device until the mapping is done (with ``spin``
    without blocking for ``SPIN_READ_S``, then blocking), copies and unmaps, through the C entry
    points."""

    __slots__ = ("device", "buffer", "flag", "info", "spin")

    def __init__(self, device: Any, usage: int, nbytes: int, spin: bool = False) -> None:
        self.device, self.spin = device, spin
        self.buffer = device.create_buffer(size=nbytes, usage=usage)
        self.flag = _ffi.new("uint32_t[1]")
        self.info = _ffi.new("WGPUBufferMapCallbackInfo *")
        self.info.mode = _lib.WGPUCallbackMode_AllowProcessEvents
        self.info.callback = _on_map
        self.info.userdata1 = self.flag

    def read(self, nbytes: int) -> bytes:
        """The buffer's first ``nbytes`` (a multiple of 4): ``begin``, then ``finish``."""
        self.begin(nbytes)
        return self.finish(nbytes)

    def begin(self, nbytes: int) -> None:
        """Ask for the mapping of the first ``nbytes`` (the copies into the buffer submitted): ``finish`` waits
        for it."""
        self.flag[0] = 0
        slot = _capture("SmallReader")
        try:
            _C.wgpuBufferMapAsync(self.buffer._internal, _lib.WGPUMapMode_Read, 0, nbytes, self.info[0])
        finally:
            _release(slot)

    def finish(self, nbytes: int) -> bytes:
        """The first ``nbytes`` once ``begin``'s mapping is done (polling the device), then unmapped."""
        flag, raw = self.flag, self.buffer._internal
        slot = _capture("SmallReader")
        try:
            dev, end = self.device._internal, time.perf_counter() + SPIN_READ_S if self.spin else 0.0
            while flag[0] == 0 and self.spin and time.perf_counter() < end:
                _C.wgpuDevicePoll(dev, 0, _ffi.NULL)
            while flag[0] == 0:
                _C.wgpuDevicePoll(dev, 1, _ffi.NULL)
        finally:
            _release(slot)
        if flag[0] != _lib.WGPUMapAsyncStatus_Success:
            raise RuntimeError(f"could not map a buffer for reading (status {flag[0]})")
        try:
            return _ffi.buffer(_C.wgpuBufferGetConstMappedRange(raw, 0, nbytes), nbytes)[:]
        finally:
            _C.wgpuBufferUnmap(raw)


class PassRecorder:
    """Records pipeline, bind group (one dynamic offset) and dispatch commands into ``cpass``
    (a wgpu-py ``GPUComputePassEncoder``); a pipeline already set is not set again."""

    __slots__ = ("cpass", "raw", "offsets", "pipeline", "direct")

    def __init__(self, cpass: Any, offsets: Any = None) -> None:
        """``offsets``: the ``offsets`` of the provider's previous recorder to use again (one pass
        is open at a time, under the provider's lock), or None for a new one."""
        self.cpass = cpass
        self.raw = cpass.cpass if type(cpass) is RawPass else getattr(cpass, "_internal", None)
        self.direct = _SET_PIPELINE is not None and self.raw is not None
        self.offsets: Any = None
        if self.direct:
            self.offsets = offsets if offsets is not None else _ffi.new("uint32_t[1]")
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
