"""What the array object calls in the layers above it, registered by those layers on import.

``x @ y`` is the namespace's ``matmul``, ``x.to_device(d)`` its ``asarray``, ``x[mask]`` the
gathers of advanced indexing, ``x.__array_namespace__()`` the package itself. The array object
sits below them (they all build GpuArrays), so it does not import them: each of those modules
registers what it provides here when it is imported (``register(matmul=matmul)``), the way
NumPy's ``__array_function__`` dispatch and tinygrad's ``Device`` registry reach up. ``import
gpuarray`` imports every layer, so every hook is set before a user holds an array.

>>> from gpuarray.array_object.hooks import UP
>>> UP.matmul.__name__
'matmul'
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any


class UpperLayers:
    """The registered functions (attributes set by ``register``)."""

    array_type: type[Any]                   # GpuArray (array_object.array)
    asarray: Callable[..., Any]             # namespace.creation
    full: Callable[..., Any]
    reshape: Callable[..., Any]             # namespace.manipulation
    broadcast_to: Callable[..., Any]
    astype: Callable[..., Any]              # namespace.data_types
    matmul: Callable[..., Any]              # namespace.linear_algebra
    reductions: dict[str, Callable[..., Any]]   # namespace.statistical: x.sum(), x.std(axis=0) ...
    advanced_getitem: Callable[..., Any]    # namespace.indexing_advanced
    advanced_setitem: Callable[..., Any]
    dask_token: Callable[[Any], Any]        # interop.dask
    package: ModuleType                     # gpuarray (the Array API namespace)

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"gpuarray: {name!r} is registered by a layer above the array object when it "
                           "is imported; import gpuarray (not only gpuarray.array_object) first")


UP = UpperLayers()


def register(**hooks: Any) -> None:
    """Set hooks by name (each name one of ``UpperLayers``' annotations)."""
    for name, fn in hooks.items():
        if name not in UpperLayers.__annotations__:
            raise TypeError(f"register: unknown hook {name!r}; expected one of "
                            f"{', '.join(UpperLayers.__annotations__)}")
        setattr(UP, name, fn)
