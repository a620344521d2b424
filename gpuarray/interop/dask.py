"""dask integration: ``GpuArray`` chunks in ``dask.array``, one ``dask.distributed`` worker per device.

Importing gpuarray does not import dask. :func:`register` runs on its own the
first time dask tokenizes a ``GpuArray`` (``da.from_array(g)``, ``map_blocks``
arguments: ``GpuArray.__dask_tokenize__``), and on every worker that
:class:`DevicePlugin` sets up. Call it yourself before mixing ``GpuArray``
and dask arrays in one operator (``g + d``). It registers:

- ``GpuArray`` as a dask chunk type (``da.register_chunk_type``), so dask
  arrays take precedence over it in binary operators;
- a local-scheduler callback, and :class:`DevicePlugin` on distributed workers, that compute each
  task's GpuArray results when the task ends (:func:`evaluate_result`), so work streams through
  the chunks instead of being recorded until the final result is read;
- dask's array dispatchers (``concatenate``, ``take``, ``tensordot``,
  ``einsum``, ``percentile``, ``numel``, ``nannumel``, ``to_numpy``) and
  ``sizeof``, so chunks stay ``GpuArray``s on their device between tasks;
- with dask.distributed installed, a serializer that sends a chunk as its host
  bytes and rebuilds it on the *receiving* process's default device (as CuPy
  arrays arrive on the current CUDA device). With :class:`DevicePlugin` that is
  the worker's own device, so a chunk moved between workers lands on the
  device of the worker that needs it.

One worker per device::

    from gpuarray.interop.dask import local_cluster
    from dask.distributed import Client
    import dask.array as da, gpuarray as xp, numpy as np

    with local_cluster() as cluster, Client(cluster) as client:  # one worker per GPU of this host
        x = da.from_array(np.random.rand(8192, 1024).astype(np.float32), chunks=(1024, 1024))
        g = x.map_blocks(xp.asarray)               # each chunk uploaded on its worker's device
        total = (g * 2 + 1).sum(axis=0).compute()

Across hosts, start the workers with ``dask worker SCHEDULER --nworkers N --name
HOST --preload gpuarray.interop.dask``: worker ``HOST-i`` takes the i-th GPU of its
host, or the device named by its ``GPUARRAY_DEVICE`` environment variable.
"""

from __future__ import annotations

import math
import os
import re
import threading
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..array_object.array import GpuArray
from ..namespace.creation import asarray, full
from ..runtime.devices import Device, all_devices, as_device, default_device, set_default_device, wgpu_adapters
from ..runtime.planner import evaluate_nodes

ENV_DEVICE = "GPUARRAY_DEVICE"

_lock = threading.Lock()
_PROCESS = uuid.uuid4().hex      # node serial numbers count per process: tokens from two processes must differ
_registered = False


def token(x: GpuArray) -> tuple:
    """dask's token for ``x``: its graph node's serial number (in this process), shape, dtype and device;
    no data is read. An array's node changes whenever its value does (arrays are immutable values), so
    the token does too."""
    register()
    return ("gpuarray.GpuArray", _PROCESS, x._node.serial, x.shape, x.dtype.str, x.device.name)


def register() -> None:
    """Register ``GpuArray`` with dask (and dask.distributed when installed); idempotent."""
    global _registered
    if _registered:
        return
    with _lock:
        if _registered:
            return
        import dask.array as da
        from dask.array import dispatch
        from dask.sizeof import sizeof

        da.register_chunk_type(GpuArray)
        dispatch.concatenate_lookup.register(GpuArray, _concatenate)
        dispatch.take_lookup.register(GpuArray, np.take)                  # gpuarray's numpy.take: a gather
        dispatch.tensordot_lookup.register(GpuArray, np.tensordot)
        dispatch.einsum_lookup.register(GpuArray, _einsum)
        dispatch.numel_lookup.register(GpuArray, _numel)
        dispatch.nannumel_lookup.register(GpuArray, _nannumel)
        dispatch.to_numpy_dispatch.register(GpuArray, lambda x, **kwargs: x.to_numpy())
        try:
            from dask.array.backends import percentile
            dispatch.percentile_lookup.register(GpuArray, percentile)    # numpy.percentile (host)
        except ImportError:  # pragma: no cover - older dask
            pass
        sizeof.register(GpuArray, lambda x: int(x.nbytes))
        from dask.callbacks import Callback
        Callback(posttask=_posttask).register()        # local schedulers: each task's result is computed
        _register_distributed()
        _registered = True


def _pending(value: Any) -> Iterator[GpuArray]:
    """The GpuArrays in a task result (also inside tuples, lists and dicts) that still need computing.
    A view of computed data is left alone: evaluating it would only copy it."""
    if isinstance(value, GpuArray):
        node = value._node
        if not node.realized and not (node.op == "view" and node.inputs[0].realized):
            yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _pending(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _pending(v)


def evaluate_result(value: Any) -> None:
    """Compute the GpuArrays of a task's result now, on their device (one submit).

    gpuarray is lazy, so without this a dask task would only record work, and all of it would run
    (fused into one huge evaluation) when the final result is read: no streaming through chunks,
    and every input kept alive until then. Within a task, operations still fuse."""
    pending = list(_pending(value))
    if pending:
        evaluate_nodes([a._node for a in pending])


def _posttask(key: Any, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
    evaluate_result(result)


def _concatenate(arrays: Sequence[Any], axis: int = 0) -> Any:
    return np.concatenate(list(arrays), axis=axis)     # gpuarray's numpy.concatenate: on the device


def _einsum(*args: Any, **kwargs: Any) -> Any:
    kwargs.pop("casting", None)
    kwargs.pop("order", None)
    return np.einsum(*args, **kwargs)


def _numel(x: GpuArray, **kwargs: Any) -> Any:
    """Element count of a chunk per output position, as a GpuArray on its device (dask's ``mean``)."""
    keepdims = kwargs.get("keepdims", False)
    axis = kwargs.get("axis")
    dtype = np.dtype(kwargs.get("dtype") or np.float64)
    if not x.device.supports(dtype):
        dtype = x.device.default_float
    axes = range(x.ndim) if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    axes = [a % x.ndim for a in axes] if x.ndim else []
    n = math.prod(x.shape[a] for a in axes)
    if axis is None and not keepdims:
        return full((), n, dtype=dtype, device=x.device)
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape)) if keepdims else \
        tuple(s for i, s in enumerate(x.shape) if i not in axes)
    return full(shape, n, dtype=dtype, device=x.device)


def _nannumel(x: GpuArray, **kwargs: Any) -> Any:
    return np.sum(~np.isnan(x), **kwargs)


# ============================================================ dask.distributed
def _register_distributed() -> None:
    try:
        from distributed.protocol import dask_deserialize, dask_serialize
    except ImportError:
        return

    @dask_serialize.register(GpuArray)
    def _serialize(x: GpuArray) -> tuple[dict, list]:
        host = x.to_numpy()                       # a fresh C-contiguous copy (ascontiguousarray would make 0-d 1-d)
        return {"dtype": host.dtype.str, "shape": x.shape, "device": x.device.name}, [host.reshape(-1).data]

    @dask_deserialize.register(GpuArray)
    def _deserialize(header: dict, frames: list) -> GpuArray:
        host = np.frombuffer(frames[0], dtype=np.dtype(header["dtype"])).reshape(tuple(header["shape"]))
        return asarray(host, device=default_device())


def gpu_devices() -> list[Device]:
    """The GPUs of this host as devices (``wgpu:i`` for each discrete or integrated adapter);
    the default device alone when there is none."""
    from ..providers.webgpu import is_real_gpu  # deferred: the wgpu provider loads with the first GPU use
    gpus = [Device(f"wgpu:{i}") for i, a in enumerate(wgpu_adapters()) if is_real_gpu(a)]
    return gpus or [default_device()]


def worker_device(name: Any, devices: Sequence[Device | str] | None = None) -> Device:
    """The device for the worker called ``name``: ``$GPUARRAY_DEVICE`` if set, else entry ``i`` of
    ``devices`` (default: this host's GPUs) where ``i`` is the worker's index: its name when that is
    an integer (``LocalCluster``), or the ``-i`` suffix of ``dask worker --nworkers N --name HOST``."""
    forced = os.environ.get(ENV_DEVICE, "").strip()
    if forced:
        return as_device(forced)
    devs = [as_device(d) for d in (devices if devices is not None else gpu_devices())]
    if not devs:
        raise ValueError("worker_device: no devices to choose from")
    text = str(name)
    m = re.fullmatch(r"(?:.*-)?(\d+)", text)
    index = int(m.group(1)) if m else sum(map(ord, text))
    return devs[index % len(devs)]


try:
    from distributed import WorkerPlugin as _PluginBase
except ImportError:  # pragma: no cover - dask.distributed is optional
    _PluginBase = object  # type: ignore[assignment,misc]


class DevicePlugin(_PluginBase):  # type: ignore[misc,valid-type]
    """A dask.distributed worker plugin: pins each worker to one device (``set_default_device``), so
    the chunks it creates (``xp.asarray(block)``) and receives live there. See :func:`worker_device`."""

    name = "gpuarray-device"

    def __init__(self, devices: Sequence[Device | str] | None = None) -> None:
        self.devices = None if devices is None else [as_device(d).name for d in devices]
        self._worker: Any = None

    def setup(self, worker: Any) -> None:
        register()
        dev = worker_device(worker.name, self.devices)
        set_default_device(dev)
        dev.provider  # noqa: B018 - start it now: a device that cannot start fails the worker early
        self._worker = worker

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        """A task that finished computes its GpuArray result now (see :func:`evaluate_result`)."""
        if start == "executing" and finish == "memory" and self._worker is not None:
            try:
                value = self._worker.data[key]
            except KeyError:
                return
            evaluate_result(value)

    def __getstate__(self) -> dict:
        return {"devices": self.devices, "_worker": None}


def local_cluster(devices: Sequence[Device | str] | None = None, **kwargs: Any) -> Any:
    """A ``dask.distributed.LocalCluster`` with one single-threaded worker process per device
    (default: one per GPU of this host, :func:`gpu_devices`), each pinned by :class:`DevicePlugin`."""
    from distributed import LocalCluster
    devs = [as_device(d) for d in (devices if devices is not None else gpu_devices())]
    for d in devs:
        if d not in all_devices():
            raise ValueError(f"local_cluster: device {d.name} does not exist here; devices: "
                             f"{[x.name for x in all_devices()]}")
    kwargs.setdefault("threads_per_worker", 1)
    kwargs.setdefault("processes", True)
    kwargs.setdefault("dashboard_address", ":0")        # any free port: several clusters may run at once
    return LocalCluster(n_workers=len(devs), plugins={DevicePlugin(devs)}, **kwargs)


def dask_setup(worker: Any) -> None:
    """``dask worker --preload gpuarray.interop.dask``: pin this worker to its device (see :func:`worker_device`)."""
    DevicePlugin().setup(worker)


__all__ = ["register", "token", "evaluate_result", "DevicePlugin", "local_cluster", "gpu_devices", "worker_device",
           "ENV_DEVICE"]
