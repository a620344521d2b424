"""``__array_function__`` adapters: NumPy functions that run on the device through the namespace, by NumPy area.

Each adapter takes NumPy's signature and gives NumPy's result dtypes and
errors; the work is recorded lazily with gpuarray's functions and ufuncs, so
it fuses like anything else. An adapter registers itself with the decorators of
``registry`` (``register``, ``register_array`` for the common "this argument
must be a GpuArray" case, ``register_like``); one that meets arguments it does
not cover returns ``_FALLBACK``, and that call runs on the host as a counted
fallback. ``numpy.pad``, ``numpy.take`` and the ``nan*`` reductions are in
``namespace/numpy_compat.py``.

Importing this package registers every adapter; ``gpuarray/__init__`` does so
once ``GpuArray`` exists.

>>> import numpy as np, gpuarray as xp
>>> g = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device="cpu")
>>> type(np.trace(g)).__name__, float(np.trace(g)), np.allclose(g, g + 1e-9)
('GpuArray', 5.0, True)
"""

from . import (
    calculus,
    counting,
    creation,
    elementwise,
    folds,
    functional,
    histograms,
    indexing,
    inplace_more,
    joining,
    linalg,
    linalg_composed,
    polynomials,
    queries,
    reductions,
    segmented,
    shape,
    sorting,
    statistics,
    ufunc_methods,
)

__all__ = ["calculus", "counting", "creation", "elementwise", "functional", "histograms", "indexing", "joining",
           "linalg", "linalg_composed", "polynomials", "queries", "reductions", "shape", "sorting", "statistics",
           "inplace_more", "segmented", "ufunc_methods", "folds"]
