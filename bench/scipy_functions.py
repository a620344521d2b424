"""The SciPy functions users call most, with SciPy's array-API dispatch: gpuarray against NumPy on
the host, PyTorch and CuPy.

    python -m bench.scipy_functions [--sizes 10000,1000000] [--dtypes float32,float64]
                                    [--libs numpy,gpuarray,torch,cupy] [--cases erf,zscore,...]
                                    [--runs 5] [--warm 0.5] [--device wgpu:0] [--offload auto]
                                    [--keep-host-copies] [--out FILE]

``SCIPY_ARRAY_API=1`` is set (``os.environ.setdefault``) before SciPy is imported. Cases (``CASES``),
each on ``n`` values (``--sizes``) of each dtype (``--dtypes``), on data already on the library's device:

- ``scipy.special``: ``erf``, ``erfc``, ``ndtr``, ``log_ndtr`` (half of x uniform in [-30, 30], half in
  [-3, 3], shuffled), ``ndtri`` (half uniform in (0, 1), half 10^u, u in [-20, -1]: the tail branch),
  ``erfinv`` (half uniform in (-1, 1), half within 10^-6..10^-1 of +-1), ``gammaln``, ``psi`` (uniform
  in (0, 30]), ``i0e``, ``expit`` (as ``erf``), ``logsumexp`` and ``softmax`` along axis 1 of an
  (n/256, 256) array; ``betainc`` (a, b 10^u, u in [-0.3, 2.7], x half uniform in (0, 1), half about the
  mean a / (a + b)), ``stdtr`` (df from 1 to 10^4, t as ``erf``'s x), ``gammainc`` (a 10^u, u in [-1, 4],
  x half uniform in (0, 3 a), half about a). NumPy and gpuarray: ``scipy.special.<name>(x)`` (SciPy dispatches to
  ``gpuarray.special.<name>``); PyTorch: ``torch.special`` (``torch.lgamma``, ``torch.logsumexp``,
  ``torch.softmax``); CuPy: ``cupyx.scipy.special.<name>``.
- ``scipy.stats`` along axis 1 of (n/256, 256) arrays: ``zscore``, ``skew``, ``kurtosis``,
  ``moment3`` (``moment(order=3)``), ``ttest_ind`` and ``pearsonr`` (statistic and p-value). Every
  library goes through SciPy (its array-API dispatch takes PyTorch tensors and CuPy arrays).
- ``scipy.signal`` / ``scipy.fft``: ``fftconvolve1d`` (n values, 127 taps, ``mode="same"``),
  ``fftconvolve2d`` (an image of ~n pixels, 15x15 kernel), ``rfft`` (n reals), ``fft`` (n complex
  values), ``welch`` (``nperseg=1024``). CuPy: ``cupyx.scipy.signal`` / ``cupyx.scipy.fft``; PyTorch:
  ``torch.fft`` for the FFTs, SciPy with tensors for ``fftconvolve`` and ``welch``.
- ``scipy.ndimage``: ``gaussian_filter(sigma=2)``, ``uniform_filter(size=5)`` of an image of ~n
  pixels. CuPy: ``cupyx.scipy.ndimage``; the others: SciPy.

Measured: wall seconds per call (``_timing.wall_per_call``: ``--warm`` seconds of warm-up, then
``--runs`` trials of repeated calls and one synchronize, the median). gpuarray's graph is lazy and
hash-consed, so each timed call evaluates its own result (``gpuarray.evaluate``), which is dropped
before the next call, and the trial ends with ``gpuarray.synchronize``; PyTorch and CuPy synchronize
their device. Also per row: the first call's seconds (compiling included), the largest error against
SciPy on NumPy of the same dtype (``max|got - want| / max(|want|, 1)`` elementwise for special and
stats, relative to ``max|want|`` for signal, fft and ndimage; a NaN or infinity in another place is
``inf``), and for gpuarray the ``metrics()`` counters of one steady call (``host_fallbacks``,
``host_kernels``, ``eager_host_ops``, ``dispatches``, ``bytes_uploaded``, ``bytes_downloaded``: work
done on the host shows as such), the types of the results and the warnings of the first call. A call
that raises is recorded with its error and the run goes on; an absent library is skipped with a note.
gpuarray's inputs are put on the device (``--device``: a kernel's results, without a host copy) before
timing, and stay device-only: gpuarray keeps the host copy a download makes, so before each call the
inputs' host copies are dropped, and results that SciPy or gpuarray computed on the host are uploaded
after it (a pipeline on the device pays both transfers; ``--keep-host-copies`` times without either).
``--offload`` is the planner's setting while timing (``auto``: the user's default; ``always``: every
kernel on the device).

One JSON row per (case, library, dtype, n); ``--out`` writes them with the host, the libraries'
versions and the device's adapter. The table at the end gives ms per call per library, gpuarray's
time over PyTorch's and CuPy's, NumPy's time over gpuarray's (its speedup), its host fallbacks per call,
where its steady call ran (``dev``, ``host`` or ``mixed``) and its error, then the errors in full.
"""

# mypy: disable-error-code="misc"
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

os.environ.setdefault("SCIPY_ARRAY_API", "1")

from ._timing import wall_per_call, write_out  # noqa: E402

LIBS = ("numpy", "gpuarray", "torch", "cupy")

# case -> family: special and stats are compared elementwise, signal/fft/ndimage relative to max|want|
CASES: dict[str, str] = {
    "erf": "special", "erfc": "special", "ndtr": "special", "log_ndtr": "special", "ndtri": "special",
    "erfinv": "special", "gammaln": "special", "psi": "special", "i0e": "special", "expit": "special",
    "logsumexp": "special", "softmax": "special", "betainc": "special", "stdtr": "special", "gammainc": "special",
    "zscore": "stats", "skew": "stats", "kurtosis": "stats", "moment3": "stats", "ttest_ind": "stats",
    "pearsonr": "stats",
    "fftconvolve1d": "signal", "fftconvolve2d": "signal", "rfft": "fft", "fft": "fft", "welch": "signal",
    "gaussian_filter": "ndimage", "uniform_filter": "ndimage",
}
ROW = 256                               # the row length of the 2-D cases: (n / 256, 256)
GPU_COUNTERS = ("host_fallbacks", "host_kernels", "eager_host_ops", "dispatches", "bytes_uploaded",
                "bytes_downloaded")
TORCH_SPECIAL = {"erf": "special.erf", "erfc": "special.erfc", "ndtr": "special.ndtr",
                 "log_ndtr": "special.log_ndtr", "ndtri": "special.ndtri", "erfinv": "special.erfinv",
                 "gammaln": "lgamma", "psi": "special.digamma", "i0e": "special.i0e", "expit": "special.expit",
                 "gammainc": "special.gammainc"}


# ---------------------------------------------------------------------------------------- inputs

def _wide(n: int, rng: np.random.Generator) -> np.ndarray:
    """Half uniform in [-30, 30], half in [-3, 3], shuffled: every branch in every warp."""
    h = n // 2
    return rng.permutation(np.concatenate([rng.uniform(-30.0, 30.0, h), rng.uniform(-3.0, 3.0, n - h)]))


def _rows(n: int) -> int:
    return max(1, n // ROW)


def _side(n: int) -> int:
    return max(16, math.isqrt(n))


def inputs(case: str, n: int, dtype: str, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """The NumPy arrays of ``case`` at size ``n`` and ``dtype`` (complex of that precision for ``fft``)."""
    if case in ("erf", "erfc", "ndtr", "log_ndtr", "i0e", "expit"):
        x = _wide(n, rng)
    elif case == "ndtri":
        h = n // 2
        x = rng.permutation(np.concatenate([rng.uniform(1e-7, 1.0 - 1e-7, h), 10.0 ** rng.uniform(-20.0, -1.0, n - h)]))
    elif case == "erfinv":
        h = n // 2
        edge = rng.choice([-1.0, 1.0], n - h) * (1.0 - 10.0 ** rng.uniform(-6.0, -1.0, n - h))
        x = rng.permutation(np.concatenate([rng.uniform(-1.0, 1.0, h), edge]))
    elif case in ("gammaln", "psi"):
        x = 30.0 - rng.uniform(0.0, 30.0, n)                       # (0, 30]
    elif case in ("logsumexp", "softmax"):
        x = _wide(_rows(n) * ROW, rng).reshape(_rows(n), ROW)
    elif case == "betainc":
        # parameters from 0.5 to 500 (every method of Boost's ibeta_imp), x over (0, 1) and about the mean
        a, b = 10.0 ** rng.uniform(-0.3, 2.7, n), 10.0 ** rng.uniform(-0.3, 2.7, n)
        m = a / (a + b)
        x = np.where(rng.uniform(0, 1, n) < 0.5, rng.uniform(0, 1, n),
                     np.clip(m + rng.standard_normal(n) * np.sqrt(m * (1 - m) / (a + b + 1)), 0, 1))
        return a.astype(dtype), b.astype(dtype), x.astype(dtype)
    elif case == "stdtr":
        # degrees of freedom from 1 to 10^4, t half in [-30, 30], half in [-3, 3]
        return np.floor(10.0 ** rng.uniform(0, 4, n)).astype(dtype), _wide(n, rng).astype(dtype)
    elif case == "gammainc":
        # a from 0.1 to 10^4, x half spread over (0, 3 a), half about a (Temme's series)
        a = 10.0 ** rng.uniform(-1, 4, n)
        x = np.where(rng.uniform(0, 1, n) < 0.5, rng.uniform(0, 3, n) * a,
                     np.abs(a + rng.standard_normal(n) * np.sqrt(a)))
        return a.astype(dtype), x.astype(dtype)
    elif CASES[case] == "stats":
        shape = (_rows(n), ROW)
        a = rng.standard_normal(shape) * 2.0 + 1.0
        if case in ("ttest_ind", "pearsonr"):
            b = 0.5 * a + rng.standard_normal(shape) + 0.1
            return a.astype(dtype), b.astype(dtype)
        return (rng.gamma(2.0, 1.0, shape).astype(dtype),) if case in ("skew", "kurtosis", "moment3") else \
            (a.astype(dtype),)
    elif case == "fftconvolve1d":
        return rng.standard_normal(n).astype(dtype), rng.standard_normal(127).astype(dtype)
    elif case == "fftconvolve2d":
        s = _side(n)
        return rng.standard_normal((s, s)).astype(dtype), rng.standard_normal((15, 15)).astype(dtype)
    elif case == "fft":
        ct = np.complex64 if np.dtype(dtype) == np.float32 else np.complex128
        return ((rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(ct),)
    elif case in ("rfft", "welch"):
        x = rng.standard_normal(n)
    elif CASES[case] == "ndimage":
        s = _side(n)
        x = rng.standard_normal((s, s))
    else:
        raise ValueError(f"unknown case {case!r}")
    return (x.astype(dtype),)


# --------------------------------------------------------------------------------------- the work

def _torch_attr(torch: Any, path: str) -> Callable[..., Any]:
    obj = torch
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def work(case: str, lib: str) -> Callable[..., Any]:
    """The function of ``case``'s arrays (on ``lib``'s device) that ``lib`` runs: SciPy for NumPy and
    gpuarray (and for PyTorch and CuPy where they have no function of their own), else the library's."""
    family = CASES[case]
    if family == "special":
        if lib == "torch":
            import torch
            if case == "logsumexp":
                return lambda x: torch.logsumexp(x, dim=1)
            if case == "softmax":
                return lambda x: torch.softmax(x, dim=1)
            if case not in TORCH_SPECIAL:
                raise NotImplementedError(f"PyTorch has no {case}")
            return _torch_attr(torch, TORCH_SPECIAL[case])
        if lib == "cupy":
            import cupyx.scipy.special as sp
        else:
            import scipy.special as sp
        if case in ("logsumexp", "softmax"):
            f = getattr(sp, case)
            return lambda x: f(x, axis=1)
        return getattr(sp, case)
    if family == "stats":
        import scipy.stats as st
        stats: dict[str, Callable[..., Any]] = {
            "zscore": lambda x: st.zscore(x, axis=1),
            "skew": lambda x: st.skew(x, axis=1),
            "kurtosis": lambda x: st.kurtosis(x, axis=1),
            "moment3": lambda x: st.moment(x, order=3, axis=1),
            "ttest_ind": lambda a, b: st.ttest_ind(a, b, axis=1),
            "pearsonr": lambda a, b: st.pearsonr(a, b, axis=1),
        }
        return stats[case]
    if family == "fft":
        if lib == "torch":
            import torch
            return getattr(torch.fft, case)
        if lib == "cupy":
            import cupyx.scipy.fft as cfft
            return getattr(cfft, case)
        import scipy.fft as sfft
        return getattr(sfft, case)
    if family == "signal":
        if lib == "cupy":
            import cupyx.scipy.signal as sig
        else:
            import scipy.signal as sig
        if case == "welch":
            return lambda x: sig.welch(x, nperseg=min(1024, x.shape[0]))
        return lambda x, k: sig.fftconvolve(x, k, mode="same")
    if lib == "cupy":
        import cupyx.scipy.ndimage as ndi
    else:
        import scipy.ndimage as ndi
    if case == "gaussian_filter":
        return lambda img: ndi.gaussian_filter(img, sigma=2)
    return lambda img: ndi.uniform_filter(img, 5)


def leaves(result: Any) -> Iterator[Any]:
    """The arrays (or scalars) of a result: itself, the items of a tuple, or ``statistic`` and
    ``pvalue`` of a SciPy result object."""
    if isinstance(result, (tuple, list)):
        for r in result:
            yield from leaves(r)
    elif hasattr(result, "statistic") and hasattr(result, "pvalue"):
        yield result.statistic
        yield result.pvalue
    else:
        yield result


# -------------------------------------------------------------------------------------- libraries

@dataclass
class Lib:
    """How to run a case on one library: move NumPy arrays to its device, make a result real (the
    library's own evaluation: gpuarray's lazy graph), wait for its device, bring a result back."""

    name: str
    to: Callable[[np.ndarray], Any]
    force: Callable[[Any], None]
    sync: Callable[[], None]
    to_numpy: Callable[[Any], np.ndarray]
    version: str = ""
    fresh: Callable[[tuple[Any, ...]], None] = lambda args: None     # before each call (gpuarray)
    settle: Callable[[Any], None] = lambda r: None                    # after force (gpuarray)


def library(name: str, device: str = "wgpu:0", device_only: bool = True) -> Lib:
    """``name``'s ``Lib`` (``device``: gpuarray's device); raises ImportError/RuntimeError when absent.

    ``device_only`` (gpuarray on a GPU): before each call the inputs' host copies (which gpuarray
    keeps after a download) are dropped, and results whose data is only on the host are uploaded:
    a call pays the transfers of a pipeline whose data lives on the device (where SciPy or
    gpuarray computes on the host) instead of reusing the first call's download."""
    if name == "numpy":
        return Lib(name, lambda a: a, lambda r: None, lambda: None, np.asarray, np.__version__)
    if name == "gpuarray":
        import gpuarray as xp
        dev = xp.Device(device)

        def to(a: np.ndarray) -> Any:
            # a kernel's result on the device, without a host copy (as data made on the device is):
            # SciPy's np.asarray of it downloads, and the counters show it
            with xp.config(offload="always"):
                g = xp.asarray(a, device=dev) + 0
                xp.evaluate(g)
            return g

        provider = dev.provider
        on_gpu = device_only and not provider.host_memory

        def force(r: Any) -> None:
            arrays = [v for v in leaves(r) if isinstance(v, xp.GpuArray)]
            if arrays:
                xp.evaluate(*arrays)

        def settle(r: Any) -> None:
            if on_gpu:
                for v in leaves(r):
                    if not isinstance(v, xp.GpuArray):
                        continue
                    data = getattr(v._node, "data", None)
                    if data is not None and data.handle is None:
                        data.get_handle(provider)       # computed on the host: the device needs it

        def fresh(args: tuple[Any, ...]) -> None:
            if on_gpu:
                for a in args:
                    data = getattr(a._node, "data", None)
                    if data is not None and data.handle is not None and data.host is not None:
                        data.host = None                # a download's cached copy: the next one pays again

        return Lib(name, to, force, lambda: xp.synchronize(dev), lambda r: np.asarray(r), xp.__version__, fresh,
                   settle)
    if name == "torch":
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("PyTorch has no CUDA device")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        return Lib(name, lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda(), lambda r: None,
                   torch.cuda.synchronize,
                   lambda r: r.detach().cpu().numpy() if isinstance(r, torch.Tensor) else np.asarray(r),
                   torch.__version__)
    if name == "cupy":
        import cupy as cp
        cp.cuda.Device().synchronize()                # raises when there is no CUDA device
        return Lib(name, cp.asarray, lambda r: None, cp.cuda.Device().synchronize,
                   lambda r: cp.asnumpy(r) if isinstance(r, cp.ndarray) else np.asarray(r), cp.__version__)
    raise ValueError(f"unknown library {name!r}; expected one of {LIBS}")


def max_err(got: list[np.ndarray], want: list[np.ndarray], elementwise: bool) -> float:
    """The largest error of ``got`` against ``want`` (see the module's docstring); ``inf`` for NaN or
    infinities in other places or another shape."""
    worst = 0.0
    if len(got) != len(want):
        return math.inf
    for g, w in zip(got, want):
        g = np.asarray(g).astype(np.complex128 if np.iscomplexobj(g) else np.float64)
        w = np.asarray(w).astype(np.complex128 if np.iscomplexobj(w) else np.float64)
        if g.shape != w.shape:
            return math.inf
        fin = np.isfinite(w)
        if np.any(np.isnan(g) != np.isnan(w)) or np.any(np.isinf(g) != np.isinf(w)) or \
                np.any(g[np.isinf(w)] != w[np.isinf(w)]):
            return math.inf
        if not fin.any():
            continue
        d = np.abs(g[fin] - w[fin])
        if elementwise:
            e = float(np.max(d / np.maximum(np.abs(w[fin]), 1.0)))
        else:
            e = float(np.max(d) / max(float(np.max(np.abs(w[fin]))), 1e-300))
        worst = max(worst, e)
    return worst


def _where(v: Any) -> str:
    """Where a gpuarray result's data is: ``GpuArray@device``, ``GpuArray@host`` (a host copy only:
    the host computed it) or the result's type (SciPy gave back something else)."""
    import gpuarray as xp
    if not isinstance(v, xp.GpuArray):
        return type(v).__name__
    data = getattr(v._node, "data", None)
    if data is None:
        return "GpuArray@unevaluated"
    return "GpuArray@device" if getattr(data, "handle", None) is not None else "GpuArray@host"


def _error(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).strip()[:300]}"


# ------------------------------------------------------------------------------------------- run

def run(sizes: list[int], dtypes: list[str], libs: list[str], cases: list[str], runs: int = 5,
        device: str = "wgpu:0", warm_s: float = 0.5, offload: str = "auto",
        skipped: dict[str, str] | None = None, device_only: bool = True) -> list[dict[str, Any]]:
    """One row per (case, library, dtype, n): ``s_per_call`` or ``error``, ``first_s``, ``max_err``
    and, for gpuarray, ``<counter>_per_call`` (``GPU_COUNTERS``); libraries that are absent are left
    out (and named with the reason in ``skipped``)."""
    for c in cases:
        if c not in CASES:
            raise ValueError(f"unknown case {c!r}; expected some of {list(CASES)}")
    present: dict[str, Lib] = {}
    for name in libs:
        try:
            present[name] = library(name, device, device_only)
        except Exception as e:  # noqa: BLE001 - an absent library is skipped with a note
            print(f"note: {name} skipped ({_error(e)})", flush=True)
            if skipped is not None:
                skipped[name] = _error(e)
    rows: list[dict[str, Any]] = []
    for dtype in dtypes:
        for n in sizes:
            for case in cases:
                want = _reference(case, n, dtype)
                for lib in present.values():
                    rec = _measure(case, n, dtype, lib, want, runs, warm_s, offload)
                    rows.append(rec)
                    print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()
                                   if k not in ("warnings", "result_types")), flush=True)
    return rows


def _seed(case: str, n: int, dtype: str) -> int:
    return (list(CASES).index(case) * 1_000_003 + n * 7 + (dtype == "float64")) % (1 << 31)


def _reference(case: str, n: int, dtype: str) -> list[np.ndarray] | str:
    """SciPy's result on NumPy (of the same dtype) or the error it raised."""
    args = inputs(case, n, dtype, np.random.default_rng(_seed(case, n, dtype)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [np.asarray(v) for v in leaves(work(case, "numpy")(*args))]
    except Exception as e:  # noqa: BLE001
        return _error(e)


def _measure(case: str, n: int, dtype: str, lib: Lib, want: list[np.ndarray] | str, runs: int, warm_s: float,
             offload: str) -> dict[str, Any]:
    arrays = inputs(case, n, dtype, np.random.default_rng(_seed(case, n, dtype)))
    rec: dict[str, Any] = {"case": case, "family": CASES[case], "lib": lib.name, "dtype": dtype, "n": n,
                           "shapes": [list(a.shape) for a in arrays]}
    try:
        args = tuple(lib.to(a) for a in arrays)
        fn = work(case, lib.name)
    except Exception as e:  # noqa: BLE001 - a library that cannot take the case is reported
        rec["error"] = _error(e)
        return rec
    gpu = lib.name == "gpuarray"
    with _offload(offload if gpu else None), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            lib.fresh(args)
            t0 = time.perf_counter()
            r = fn(*args)
            lib.force(r)
            if gpu:
                rec["result_types"] = sorted({_where(v) for v in leaves(r)})
            lib.settle(r)
            lib.sync()
            rec["first_s"] = time.perf_counter() - t0
            got = [lib.to_numpy(v) for v in leaves(r)]
            del r                                       # a live result would make the next ones free
            if isinstance(want, list):
                rec["max_err"] = max_err(got, want, CASES[case] in ("special", "stats"))
        except Exception as e:  # noqa: BLE001 - a failing call is reported, not hidden
            rec["error"] = _error(e)
        if gpu:
            rec["warnings"] = sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught})
    if "error" in rec:
        return rec

    def call() -> None:
        lib.fresh(args)
        r = fn(*args)
        lib.force(r)
        lib.settle(r)                                   # the result is dropped on return

    with _offload(offload if gpu else None), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            rec["s_per_call"] = wall_per_call(call, lib.sync, runs, warm_s)
            if gpu:
                import gpuarray as xp
                m0 = xp.metrics()
                call()
                lib.sync()
                m1 = xp.metrics()
                for k in GPU_COUNTERS:
                    rec[f"{k}_per_call"] = m1[k] - m0[k]
        except Exception as e:  # noqa: BLE001
            rec["error"] = _error(e)
    return rec


@contextlib.contextmanager
def _offload(value: str | None) -> Iterator[None]:
    """gpuarray's ``config(offload=value)`` for this thread, or nothing (``None``)."""
    if value is None:
        yield
        return
    import gpuarray as xp
    with xp.config(offload=value):
        yield


# ----------------------------------------------------------------------------------------- report

def _ms(rec: dict[str, Any] | None) -> str:
    if rec is None:
        return "-"
    if "error" in rec:
        return "ERR"
    return f"{1e3 * rec['s_per_call']:.3f}"


def _on(g: dict[str, Any]) -> str:
    """Where gpuarray's steady call ran: ``dev`` (device kernels, results on the device), ``host`` (no
    kernel on the device), ``mixed`` (host kernels, fallbacks or eager host operations, or a result
    that is not on the device too) or ``-`` (no figures)."""
    if "dispatches_per_call" not in g:
        return "-"
    if not g["dispatches_per_call"]:
        return "host"
    host = any(g.get(f"{k}_per_call") for k in ("host_fallbacks", "host_kernels", "eager_host_ops"))
    return "mixed" if host or any(t != "GpuArray@device" for t in g.get("result_types", [])) else "dev"


def table(rows: list[dict[str, Any]]) -> str:
    """Per case, dtype and n: ms per call of each library, gpuarray / torch, gpuarray / cupy, NumPy's
    time over gpuarray's, gpuarray's host fallbacks per call, where it ran (``_on``) and its error;
    then the errors."""
    libs = [lib for lib in LIBS if any(r["lib"] == lib for r in rows)]
    head = ["case", "dtype", "n", *(f"{lib} ms" for lib in libs), "ga/torch", "ga/cupy", "np/ga", "ga fb", "ga on",
            "ga err"]
    lines = []
    by: dict[tuple[str, str, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["case"], r["dtype"], r["n"]), {})[r["lib"]] = r
    for (case, dtype, n), recs in by.items():
        t = {lib: recs[lib]["s_per_call"] for lib in recs if "s_per_call" in recs[lib]}
        ga = t.get("gpuarray")

        def ratio(a: float | None, b: float | None) -> str:
            return f"{a / b:.2f}" if a and b else "-"
        g = recs.get("gpuarray", {})
        err = g.get("max_err")
        lines.append([case, dtype, str(n), *(_ms(recs.get(lib)) for lib in libs),
                      ratio(ga, t.get("torch")), ratio(ga, t.get("cupy")), ratio(t.get("numpy"), ga),
                      str(g["host_fallbacks_per_call"]) if "host_fallbacks_per_call" in g else "-", _on(g),
                      f"{err:.1e}" if isinstance(err, float) else "-"])
    widths = [max(len(x) for x in col) for col in zip(head, *lines)]
    out = ["  ".join(h.rjust(w) if i > 1 else h.ljust(w) for i, (h, w) in enumerate(zip(row, widths)))
           for row in [head, *lines]]
    errs = [f"  {r['case']} {r['lib']} {r['dtype']} n={r['n']}: {' '.join(r['error'].split())[:240]}"
            for r in rows if "error" in r]
    if errs:
        out += ["errors:", *errs]
    return "\n".join(out)


def versions(libs: list[str], device: str) -> dict[str, Any]:
    """Python, platform, the libraries' versions and gpuarray's adapter."""
    out: dict[str, Any] = {"python": sys.version.split()[0], "platform": platform.platform(),
                           "numpy": np.__version__}
    for mod in ("scipy", "sklearn", *(lib for lib in libs if lib not in ("numpy", "gpuarray"))):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001, S112 - absent
            continue
    if "gpuarray" in libs:
        try:
            import gpuarray as xp
            out["gpuarray"] = xp.__version__
            info = xp.Device(device).provider.device_info()
            out["adapter"] = {k: info.get(k) for k in ("name", "backend", "adapter_type", "vendor", "description",
                                                       "float64")}
        except Exception as e:  # noqa: BLE001
            out["adapter"] = _error(e)
    return out


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """The command line (see the module's docstring); returns the rows."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sizes", default="10000,1000000", help="element counts (comma-separated)")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--cases", default=",".join(CASES), help="some of: " + ",".join(CASES))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warm", type=float, default=0.5, help="seconds of warm-up calls per row")
    ap.add_argument("--device", default="wgpu:0", help="gpuarray's device (wgpu:0 or cpu)")
    ap.add_argument("--offload", default="auto", choices=("auto", "always"),
                    help="gpuarray's placement setting while timing")
    ap.add_argument("--keep-host-copies", action="store_true",
                    help="gpuarray: keep the inputs' host copies between calls and results on the host")
    ap.add_argument("--out", help="write the rows as JSON here")
    args = ap.parse_args(argv)
    libs = [v for v in args.libs.split(",") if v]
    skipped: dict[str, str] = {}
    rows = run([int(v) for v in args.sizes.split(",")], args.dtypes.split(","), libs,
               [v for v in args.cases.split(",") if v], args.runs, args.device, args.warm, args.offload, skipped,
               not args.keep_host_copies)
    print(table(rows), flush=True)
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "device": args.device,
                          "offload": args.offload, "device_only": not args.keep_host_copies, "runs": args.runs,
                          "versions": versions(libs, args.device), "skipped": skipped, "rows": rows},
                         indent=1, default=str), args.out)
    return rows


if __name__ == "__main__":
    main()
