"""Every test that takes ``device`` runs on both providers: the in-process
provider (``cpu``) and the wgpu provider (``wgpu:0``; lavapipe in CI).
The wgpu provider never skips: if it cannot start, its tests fail."""

from __future__ import annotations

import contextlib
import importlib
import os
from typing import Any

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
# SciPy reads this once, at its first import; tests/integration needs it (scikit-learn, SciPy).
os.environ.setdefault("SCIPY_ARRAY_API", "1")
# Provider tests check what each device computes, so every kernel runs on its array's
# device; tests/test_planner.py turns automatic placement on where it tests it.
os.environ.setdefault("GPUARRAY_OFFLOAD", "always")
# A run starts from an empty shader cache, as CI does: results do not depend on what earlier runs
# (or benchmarks) left in the user's cache, nor on compiling them at start-up
# (tests/test_wgpu_cache.py tests the cache and its warm-up in directories of its own).
if "GPUARRAY_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["GPUARRAY_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpuarray-test-cache-")
    atexit.register(shutil.rmtree, os.environ["GPUARRAY_CACHE_DIR"], ignore_errors=True)

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import gpuarray as xp  # noqa: E402
from gpuarray.compiler import plan_cache  # noqa: E402

DEVICES = ["cpu", "wgpu:0"]


def _start(name: str) -> xp.Device:
    dev = xp.Device(name)
    if dev.kind == "wgpu":
        try:
            dev.provider  # noqa: B018 - starts the provider
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"the wgpu provider could not start ({type(exc).__name__}: {exc}); "
                        "install a Vulkan driver (Debian: mesa-vulkan-drivers)", pytrace=False)
    return dev


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that take ``wgpu_device`` get the ``wgpu`` marker, so that ``-k wgpu`` (the GPU suite)
    selects them as it selects the ``[wgpu:0]`` ids of ``device`` tests."""
    for item in items:
        if "wgpu_device" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.wgpu)


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> xp.Device:
    return _start(request.param)


@pytest.fixture
def wgpu_device() -> xp.Device:
    return _start("wgpu:0")


def run_in_threads(work: Any, count: int) -> None:
    """``work(i)`` for ``i`` in ``range(count)``, each in a thread of its own, at once; the first error any raised
    is raised here (an assertion in a thread would otherwise only print)."""
    import threading
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            work(i)
        except BaseException as exc:  # noqa: BLE001 - raised by the calling thread
            errors.append(exc)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def component_mismatch(g: np.ndarray, w: np.ndarray, signed_zero: bool = True) -> np.ndarray:
    """Where ``g`` and ``w`` differ in NaN positions, infinities or (``signed_zero``) the sign of a
    zero, per component of complex values."""
    bad = np.zeros(np.shape(g), dtype=bool)
    for part in (np.real, np.imag) if w.dtype.kind == "c" else (np.real,):
        a, b = part(g), part(w)
        bad |= np.isnan(a) != np.isnan(b)
        bad |= (np.isinf(a) | np.isinf(b)) & (a != b)
        if signed_zero:
            bad |= (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
    return bad


def assert_same(got: xp.GpuArray | np.ndarray, want: np.ndarray, rtol: float = 0.0, atol: float = 0.0,
                check_signed_zero: bool = True) -> None:
    """Same dtype, shape, NaN positions and values (within tolerance) as NumPy."""
    g = np.asarray(got)
    w = np.asarray(want)
    assert g.dtype == w.dtype, f"dtype {g.dtype} != {w.dtype}"
    assert g.shape == w.shape, f"shape {g.shape} != {w.shape}"
    if w.dtype.kind == "c":          # NaN and signed zeros per component; tolerance on the complex plane
        for part in (np.real, np.imag):
            np.testing.assert_array_equal(np.isnan(part(g)), np.isnan(part(w)), err_msg="NaN positions differ")
            if check_signed_zero:
                zero = (part(w) == 0) & (part(g) == 0)
                np.testing.assert_array_equal(np.signbit(part(g)[zero]), np.signbit(part(w)[zero]),
                                              err_msg="sign of zero differs")
        fin = np.isfinite(w)
        np.testing.assert_array_equal(g[~fin & ~np.isnan(w)], w[~fin & ~np.isnan(w)])
        np.testing.assert_allclose(g[fin], w[fin], rtol=rtol, atol=atol)
    elif w.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg="NaN positions differ")
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        if check_signed_zero:
            zero = (w == 0) & (g == 0)
            np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(w[zero]), err_msg="sign of zero differs")
    else:
        np.testing.assert_array_equal(g, w)


def device_numerics(device: xp.Device) -> dict[str, bool]:
    """What ``device`` does to float32 arithmetic (providers/wgpu_probe.py); the host does neither."""
    if device.kind != "wgpu":
        return {"flushes_f32_subnormals": False, "fuses_multiply_add": False}
    from gpuarray.providers.wgpu_probe import numerics
    return numerics(device.provider)


def flush_subnormals(a: object) -> object:
    """``a`` with float32 / complex64 subnormal components replaced by zeros of the same sign;
    anything else (Python scalars, other dtypes) unchanged."""
    if not isinstance(a, np.ndarray | np.generic) or a.dtype not in (np.float32, np.complex64):
        return a
    if a.dtype == np.complex64:
        out = np.array(a, copy=True)
        out.real = flush_subnormals(a.real)
        out.imag = flush_subnormals(a.imag)
        return out
    tiny = np.finfo(np.float32).tiny
    return np.where((a != 0) & (np.abs(a) < tiny), np.copysign(np.float32(0), a), a).astype(np.float32)


# SciPy's float64 error function family is itself several ULP from the exact values (its exp(-x^2) takes
# x^2 rounded: up to 9 ULP below x = 3 and 0.7 x^2 above for erfc and erfcx, 1.3 x^2 for ndtr and
# log_ndtr, whose x / sqrt 2 rounds too: 1595 ULP at x = -35.4; ndtri and erfcinv up to 5 ULP; the device
# kernels are within 3 ULP of the exact values: tests/test_special_erf.py). Comparisons with SciPy in
# float64 measure the error in ULP of this magnitude, so that 4 of them allow 12 + x^2 (12 + 2 x^2; 12 for
# the inverses) ULP of the result; float32 ones (SciPy's float64 value rounded) keep 4 ULP of the result.
_SCIPY_F64_SLACK = {"erfc": 1, "erfcx": 1, "ndtr": 2, "log_ndtr": 2, "ndtri": 0, "erfinv": 0, "erfcinv": 0}


def scipy_f64_scale(name: str, x: np.ndarray) -> np.ndarray | None:
    """For ``name`` of ``_SCIPY_F64_SLACK`` and ``x`` that computes in float64 (float64 or integers): the
    magnitude an error is measured in ULP of (the result's, times 3 + x^2 / 4, 3 + x^2 / 2, or 3); None
    otherwise."""
    if name not in _SCIPY_F64_SLACK or np.asarray(x).dtype == np.float32:     # integers compute in float64
        return None
    import scipy.special

    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        v = np.abs(np.asarray(getattr(scipy.special, name)(x), np.float64))
        big = np.finfo(np.float64).max
        return np.nan_to_num(v * (3.0 + _SCIPY_F64_SLACK[name] * x ** 2 / 4), nan=0.0, posinf=big)


def incomplete_f64_scale(name: str, want: np.ndarray, *args: np.ndarray) -> np.ndarray:
    """For float64 betainc, betaincc, stdtr, gammainc, gammaincc, chdtr, chdtrc: the magnitude that errors
    against SciPy are measured in (4 ULP of it: K ULP of the result ``want``; tests/test_special_ops.py
    _incomplete_scale says why)."""
    import scipy.special

    v = [np.abs(np.asarray(a, np.float64)) for a in args]
    with np.errstate(all="ignore"):
        if name in ("gammainc", "gammaincc", "chdtr", "chdtrc"):
            a, x = (v[0] / 2, v[1] / 2) if name.startswith("chdtr") else (v[0], v[1])
            k = 512 + 4 * (np.abs(a * np.log(x)) + x + np.abs(scipy.special.gammaln(a)))
        elif name == "stdtr":
            # df / 2 + 1/2; for df = inf ndtr(t): t^2 / 2 (the rounding of t / sqrt 2, as erfc's in ndtr)
            k = 24 + 24 * np.where(np.isinf(v[0]), v[1] ** 2 / 2, v[0] / 2 + 0.5)
        else:
            k = 24 + 24 * (v[0] + v[1])
        return np.maximum(np.nan_to_num(np.abs(want) * k / 4, nan=0.0, posinf=0.0), 1e-280)


@pytest.fixture(autouse=True)
def _fresh_signature_cache() -> object:
    """Some tests make a device drop float64 (monkeypatching ``provider.f64``), which no real device
    does at run time; the dtype-resolution cache of ``_elementwise`` must not carry their answers
    into the next test, nor the schedule cache's templates (which keep answers such as
    ``cannot_run``), nor the evaluation plans (``replay.py``: they repeat what the provider's
    enqueue did under the tuning settings of their test, which tests monkeypatch:
    ``wgpu_reduce.USE_SUBGROUPS``, matmul tiles, ...; a program does not look at them again)."""
    from gpuarray.runtime import guards, replay
    replay.clear()
    yield
    with contextlib.suppress(Exception):     # a test's deferred checks (runtime/guards.py) run within it,
        guards.resolve()                     # not at the next test's first read (its metrics, its errors)
    guards.PENDING.clear()
    from gpuarray.array_object import elementwise as _elementwise
    from gpuarray.compiler import plan_cache
    _elementwise._SIG.clear()
    plan_cache.clear()
    replay.clear()
    _drop_method_residue()


def _drop_method_residue() -> None:
    """Remove the bound methods that ``monkeypatch.setattr(provider, "dispatch", ...)`` leaves on a shared
    provider: its undo sets the instance attribute to the method it read (``getattr``), which then
    shadows the class's for the rest of the process, so a later test's spy on ``WgpuProvider.dispatch``
    saw nothing (``test_rowfuse::test_vec4_words`` in the H200's eight-worker suite)."""
    from gpuarray.runtime import devices as _devices
    for p in list(_devices._providers.values()):
        own = getattr(p, "__dict__", {})
        for name in [n for n, v in own.items() if getattr(v, "__self__", None) is p
                     and getattr(v, "__func__", None) is getattr(type(p), n, None)]:
            del own[name]


def cbrt_near_exact(x: Any) -> np.ndarray:
    """NumPy's cbrt, its float64 results from the extended-precision cube root where the platform has one:
    NumPy's own float64 cbrt is up to 2.3 ULP off the exact value on some CPUs (NumPy 2.4.6 on an AMD EPYC
    without AVX-512: 1.8951080333042598 for 6.806156292241287, whose cube root rounds to ...594), while
    gpuarray's is within 1 ULP of it (render/wgsl_bits.py)."""
    r = np.cbrt(x)
    if r.dtype == np.float64 and np.finfo(np.longdouble).nmant > 52:
        with np.errstate(invalid="ignore"):
            return np.asarray(np.cbrt(np.asarray(x, dtype=np.longdouble)).astype(np.float64))
    return np.asarray(r)


def zero_tie_first(fn: Any) -> Any:
    """NumPy's ``fmax`` / ``fmin`` with a tie of zeros giving the first operand, as gpuarray does:
    NumPy's own loops give either zero there (its SIMD loops the second, its scalar loop sometimes the first)."""
    def oracle(a: Any, b: Any) -> np.ndarray:
        r = np.asarray(fn(a, b))
        tie = (np.asarray(a) == 0) & (np.asarray(b) == 0)
        return np.where(tie, a, r).astype(r.dtype) if r.dtype.kind == "f" else r
    return oracle


def record_creations(monkeypatch: Any, provider: Any) -> list[str]:
    """Patch ``provider``'s wgpu device so that every buffer and bind group it creates from now on
    is recorded (by method name) in the returned list; ``monkeypatch.undo()`` / ``delattr`` ends it."""
    made: list[str] = []
    for name in ("create_buffer", "create_buffer_with_data", "create_bind_group"):
        real = getattr(provider.device, name)
        monkeypatch.setattr(provider.device, name, lambda *a, _n=name, _f=real, **k: made.append(_n) or _f(*a, **k))
    return made


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts fresh schedules (``compiler/plan_cache.py``'s misses), the template table emptied first."""
    sched_mod = importlib.import_module("gpuarray.compiler.schedule")   # the module (the package exports a function)
    calls = [0]
    real = sched_mod._schedule

    def count(*a: Any) -> Any:
        calls[0] += 1
        return real(*a)
    monkeypatch.setattr(sched_mod, "_schedule", count)
    plan_cache.clear()
    return calls
