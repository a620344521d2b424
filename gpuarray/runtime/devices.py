"""Devices, provider selection and per-device dtype support.

``cpu`` is the in-process provider (NumPy on the host). ``wgpu:N`` is the
N-th wgpu adapter, best first. The default device: ``GPUARRAY_PROVIDER``
(``wgpu`` or ``inprocess``) forces one, and a forced provider that cannot
start is an error; otherwise a real GPU adapter is chosen if there is one,
and the host if there is only a CPU adapter (lavapipe) or none.

>>> Device("cpu") is Device("cpu"), Device("wgpu") is Device("wgpu:0")
(True, True)
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from ..core import dtypes as _dtypes
from ..providers.inprocess import InProcessProvider

_lock = threading.RLock()
_providers: dict[str, Any] = {}
_default: Device | None = None
_choice_reason = ""
_interned: dict[str, Device] = {}      # spec -> the one Device of that name


class Device:
    """A place where arrays live and kernels run: ``Device("cpu")`` or ``Device("wgpu:0")``."""

    __slots__ = ("kind", "index", "name", "_hash")
    kind: str
    index: int
    name: str
    _hash: int

    def __new__(cls, spec: str = "cpu") -> Device:
        # one object per device (interned by spec and by name): the hot paths compare devices with
        # ``is``, and ``asarray(x, device="wgpu:0")`` made a new Device each call, so operations
        # mixing two such arrays missed every cached signature (8.5 us a broadcast subtraction
        # recorded, 2.7 with one Device object)
        d = _interned.get(spec)
        if d is not None:
            return d
        if not isinstance(spec, str):
            raise TypeError(f"device spec must be a str such as 'cpu' or 'wgpu:0'; got {type(spec).__name__}")
        kind, _, idx = spec.partition(":")
        if kind not in ("cpu", "wgpu") or (idx and not idx.isdigit()):
            raise ValueError(f"unknown device {spec!r}; expected 'cpu' or 'wgpu[:N]'")
        index = int(idx) if idx else 0
        name = "cpu" if kind == "cpu" else f"wgpu:{index}"
        with _lock:
            d = _interned.get(name)
            if d is None:
                d = object.__new__(cls)
                d.kind = kind
                d.index = index
                d.name = name
                d._hash = hash((kind, index))
                _interned[name] = d
            _interned[spec] = d
        return d

    def __repr__(self) -> str:
        return f"Device('{self.name}')"

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Device) and other.name == self.name)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple:
        return (Device, (self.name,))

    @property
    def provider(self) -> Any:
        return provider_for(self)

    def binding_bytes(self) -> int | None:
        """The most bytes of one array a kernel binds on this device (None: no such limit, the host).
        Read for every reduction or sort of more than 2^16 elements recorded: the started provider first."""
        p = _providers.get(self.name)
        return getattr(p if p is not None else self.provider, "max_binding", None)

    def segment_elems(self, node: Any) -> int | None:
        """Elements per part of the array ``node`` where this device stores it in several buffers (past
        its largest buffer), else None (``providers/wgpu_split.segment_of``)."""
        p = self.provider
        of = getattr(p, "segment_of", None)
        return None if of is None else of(node)

    def supports(self, dtype: np.dtype) -> bool:
        return bool(self.provider.supports(dtype))

    @property
    def default_float(self) -> np.dtype:
        return _dtypes.float64 if self.supports(_dtypes.float64) else _dtypes.float32

    @property
    def default_complex(self) -> np.dtype:
        return _dtypes.complex128 if self.supports(_dtypes.float64) else _dtypes.complex64

    @property
    def default_int(self) -> np.dtype:
        return _dtypes.int64 if self.supports(_dtypes.int64) else _dtypes.int32

    def check_dtype(self, dtype: np.dtype) -> None:
        if not self.supports(dtype):
            raise TypeError(
                f"{dtype} is not supported on device {self.name} (the adapter lacks "
                f"{'shader-f64' if dtype.kind in 'fc' else 'shader-int64'}); use float32 / complex64 / int32 there"
            )


CPU = Device("cpu")


def provider_for(device: Device) -> Any:
    """The device's provider, started on first use (and started again after its device was lost)."""
    p = _providers.get(device.name)
    if p is not None and getattr(p, "lost", None) is None:
        return p
    with _lock:
        p = _providers.get(device.name)
        if p is None or getattr(p, "lost", None) is not None:
            if device.kind == "cpu":
                p = InProcessProvider()
            else:
                from ..providers.webgpu import WgpuProvider  # deferred: the wgpu provider loads with the first GPU use
                found = wgpu_adapters()
                if device.index >= len(found):
                    raise RuntimeError(
                        f"device {device.name} does not exist: {len(found)} wgpu adapter(s) found"
                    )
                p = WgpuProvider(found[device.index], device_name=device.name)
            _providers[device.name] = p
        return p


_adapters: list[Any] | None = None


def wgpu_adapters() -> list[Any]:
    """wgpu adapters on native APIs (Vulkan, Metal, D3D12), best first; [] if wgpu is unusable."""
    global _adapters
    with _lock:
        if _adapters is None:
            try:
                import wgpu  # noqa: F401
                from wgpu.backends.wgpu_native import extras

                from ..providers.webgpu import adapters  # deferred: the wgpu provider loads with the first GPU use
                try:
                    extras.set_instance_extras(backends=["Vulkan", "Metal", "DX12"])
                except Exception:  # noqa: BLE001 - the instance exists already
                    pass
                _adapters = [a for a in adapters() if str(a.info.get("backend_type")) != "OpenGL"]
            except ImportError:
                _adapters = []
        return _adapters


def _choose() -> tuple[Device, str]:
    forced = os.environ.get("GPUARRAY_PROVIDER", "").strip().lower()
    if forced in ("inprocess", "cpu", "host"):
        return CPU, "GPUARRAY_PROVIDER forces the in-process provider"
    if forced == "wgpu":
        found = wgpu_adapters()
        if not found:
            raise RuntimeError("GPUARRAY_PROVIDER=wgpu, but no wgpu adapter could be found "
                               "(is a Vulkan driver installed? Debian: mesa-vulkan-drivers)")
        dev = Device("wgpu:0")
        provider_for(dev)   # must start, or raise
        return dev, f"GPUARRAY_PROVIDER forces wgpu; best adapter is {found[0].info.get('device')}"
    if forced:
        raise ValueError(f"GPUARRAY_PROVIDER={forced!r}; expected 'wgpu' or 'inprocess'")
    from ..providers.webgpu import is_real_gpu  # deferred: the wgpu provider loads with the first GPU use
    found = wgpu_adapters()
    if found and is_real_gpu(found[0]):
        return Device("wgpu:0"), (f"real GPU adapter {found[0].info.get('device')} "
                                  f"({found[0].info.get('adapter_type')})")
    if found:
        return CPU, (f"only a CPU adapter ({found[0].info.get('device')}), which is slower than NumPy; "
                     "set GPUARRAY_PROVIDER=wgpu to use it")
    return CPU, "no wgpu adapter found"


def default_device() -> Device:
    """The device new arrays go to when none is given."""
    global _default, _choice_reason
    with _lock:
        if _default is None:
            _default, _choice_reason = _choose()
        return _default


def choice_reason() -> str:
    default_device()
    return _choice_reason


def set_default_device(device: Device | str | None) -> None:
    """Make ``device`` the default (``None`` re-runs the automatic choice)."""
    global _default, _choice_reason
    with _lock:
        if device is None:
            _default = None
            return
        _default = as_device(device)
        _choice_reason = "set by set_default_device"


def as_device(device: Any) -> Device:
    """Normalize a device argument (``None`` is the default device)."""
    if device is None:
        return default_device()
    if isinstance(device, Device):
        return device
    if isinstance(device, str):
        return Device(device)
    raise TypeError(f"device must be a gpuarray Device or a string like 'cpu' or 'wgpu:0'; "
                    f"got {type(device).__name__}")


def all_devices() -> list[Device]:
    return [CPU] + [Device(f"wgpu:{i}") for i in range(len(wgpu_adapters()))]
