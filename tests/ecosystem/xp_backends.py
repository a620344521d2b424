"""A pytest plugin that adds gpuarray to SciPy's and scikit-learn's array-API backend lists.

SciPy (``SCIPY_ARRAY_API=1``) parametrizes its tests with the ``xp`` fixture of
``scipy/conftest.py``, whose params are fixed when that conftest is imported; this plugin
replaces them (in ``pytest_generate_tests``, before pytest's fixture manager parametrizes)
with the one backend chosen by ``--xp-backend``, and registers ``gpuarray`` with SciPy's
``skip_xp_backends``/``xfail_xp_backends`` logic: ``np_only`` tests skip it, and on a wgpu
device so do ``cpu_only`` ones (as for torch on cuda). Tests that SciPy skips or xfails for
JAX, dask or array-api-strict for a reason that applies to gpuarray too (``output=`` arrays
need a buffer view, no integer ``exp``: ``SAME_AS``) are marked so for gpuarray.
scikit-learn parametrizes with ``sklearn.utils._array_api.yield_namespace_device_dtype_combinations``;
the plugin replaces that generator before the test modules import it, so it yields only the
chosen backend (gpuarray: the chosen device, float64 and float32).

Run (one backend per run, so the counts compare)::

    SCIPY_ARRAY_API=1 PYTHONPATH=/work/main python -m pytest -p tests.ecosystem.xp_backends \\
        --xp-backend=gpuarray --gpuarray-device=cpu -m array_api_backends --pyargs scipy.special
    ... --xp-backend=array_api_strict ...                 # the same selection on array-api-strict
    ... -p tests.ecosystem.xp_backends --xp-backend=gpuarray -k "gpuarray" --pyargs sklearn

The measured counts are in docs/ecosystem.md.
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("SCIPY_ARRAY_API", "1")
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import pytest  # noqa: E402

BACKENDS = ("gpuarray", "array_api_strict", "numpy")
_state: dict[str, Any] = {"backend": "gpuarray", "device": "cpu", "patched": False}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gpuarray ecosystem")
    group.addoption("--xp-backend", default=os.environ.get("XP_BACKEND", "gpuarray"), choices=BACKENDS,
                    help="the one array namespace SciPy's `xp` tests and scikit-learn's namespace-"
                         "parametrized tests run with (default gpuarray)")
    group.addoption("--gpuarray-device", default=os.environ.get("GPUARRAY_ECO_DEVICE", "cpu"),
                    help="gpuarray's default device for the run: cpu (default) or wgpu:0")


def pytest_configure(config: pytest.Config) -> None:
    backend = config.getoption("--xp-backend")
    device = config.getoption("--gpuarray-device")
    _state.update(backend=backend, device=device)
    if backend == "gpuarray":
        # as tests/conftest.py: every kernel runs on its array's device
        os.environ.setdefault("GPUARRAY_OFFLOAD", "always")
        import gpuarray

        gpuarray.set_default_device(device)
    _patch_sklearn(backend, device)


def _patch_sklearn(backend: str, device: str) -> None:
    try:
        import sklearn.utils._array_api as skl_api
    except ImportError:
        return
    original = skl_api.yield_namespace_device_dtype_combinations

    def yield_namespace_device_dtype_combinations(include_numpy_namespaces: bool = True) -> Any:
        if backend == "gpuarray":
            for dtype in ("float64", "float32"):
                yield "gpuarray", device, dtype
            return
        for combo in original(include_numpy_namespaces=include_numpy_namespaces):
            if combo[0] == backend:
                yield combo

    def yield_namespaces(include_numpy_namespaces: bool = True) -> Any:
        yield backend

    skl_api.yield_namespace_device_dtype_combinations = yield_namespace_device_dtype_combinations
    skl_api.yield_namespaces = yield_namespaces


def _scipy_param(backend: str) -> Any:
    if backend == "gpuarray":
        import gpuarray as mod
    elif backend == "array_api_strict":
        import array_api_strict as mod
    else:
        import numpy as mod
    return pytest.param(mod, id=backend, marks=pytest.mark.array_api_backends)


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "xp" not in metafunc.fixturenames:
        return
    defs = getattr(metafunc, "_arg2fixturedefs", {}).get("xp", ())
    for fixturedef in defs:
        module = getattr(fixturedef.func, "__module__", "")
        if not module.startswith("scipy") or getattr(fixturedef, "_gpuarray_patched", False):
            continue
        fixturedef.params = (_scipy_param(_state["backend"]),)
        fixturedef.ids = None
        fixturedef._gpuarray_patched = True
        _register_with_scipy(module)


# Tests that SciPy skips or xfails for another backend for a reason that is gpuarray's too:
# (skip or xfail, that backend, SciPy's reason). NumPy cannot write into JAX's or dask's memory
# through ``output=`` (gpuarray's ``__array__`` hands it a host copy, and scipy.ndimage given a
# GpuArray as ``output=`` raises a TypeError that says so); array-api-strict
# follows the standard where NumPy does not (``exp`` of an integer array raises TypeError, as in
# gpuarray: docs/user-guide.md).
SAME_AS: tuple[tuple[str, str, str], ...] = (
    ("skip", "jax.numpy", "output=array requires buffer view"),
    ("xfail", "dask.array", "numpy round-trip"),
    ("xfail", "array_api_strict", "int->float promotion"),
)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark gpuarray as SciPy marks the backends of ``SAME_AS`` for those reasons."""
    if _state["backend"] != "gpuarray":
        return
    for item in items:
        for kind, like, why in SAME_AS:
            for marker in item.iter_markers(f"{kind}_xp_backends"):
                if marker.args == (like,) and marker.kwargs.get("reason", "") == why:
                    item.add_marker(getattr(pytest.mark, f"{kind}_xp_backends")("gpuarray", reason=why))
                    break


def _register_with_scipy(module_name: str) -> None:
    import sys

    conftest = sys.modules.get(module_name)
    if conftest is None or _state["patched"]:
        return
    _state["patched"] = True
    known = getattr(conftest, "xp_known_backends", None)
    if isinstance(known, set):
        known.add("gpuarray")
    cpu_only = getattr(conftest, "xp_skip_cpu_only_backends", None)
    if isinstance(cpu_only, set) and not str(_state["device"]).startswith("cpu"):
        cpu_only.add("gpuarray")
