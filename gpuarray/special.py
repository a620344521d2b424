"""Special functions for SciPy's array-API dispatch: ``scipy.special.f(x)`` looks for
``xp.special.f`` (``_support_alternative_backends._get_native_func``) before it falls back to
``xp.asarray(f(np.asarray(x)))``, which puts the result on the *default* device instead of ``x``'s.

- ``expit``, ``logit``, ``entr``, ``xlog1py``, ``exp2``, ``exp10`` and ``sinc`` are compositions
  of gpuarray's elementwise functions: they run on ``x``'s device and fuse with their neighbours.
- The other SciPy special functions that SciPy has no generic array-API version of (``erf``,
  ``erfc``, ``gammaln``, ``ndtr``, ``ndtri``, ``psi``, ``i0`` ... see ``HOST``) run SciPy's own
  ufunc on a host copy, and the result comes back to ``x``'s device. Each is a counted host
  fallback (``metrics()["host_fallbacks"]``, warned once per function; ``gpuarray.config(fallback=...)``).
- Functions SciPy already implements with array-API calls (``xlogy``, ``rel_entr``, ``stdtr`` ...)
  are left to SciPy: they are not defined here, so SciPy runs them with gpuarray's functions.

>>> import gpuarray as xp
>>> x = xp.asarray([0.0, 2.0], device="cpu")
>>> [round(v, 4) for v in xp.special.expit(x).tolist()]
[0.5, 0.8808]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import _interop
from ._array import GpuArray
from ._elementwise import scalars_to_device
from .namespace.elementwise import FUNCTIONS as _EW

# SciPy ufuncs without an array-API implementation in SciPy (scipy 1.17): these run on the host.
HOST = frozenset("""
bdtr bdtrc bdtri betainc betaincinv betaln binom boxcox boxcox1p cbrt chdtri cosdg cosm1 cotdg
ellipk ellipkm1 erf erfc erfcx erfinv exp1 expi exprel expn fdtr fdtrc fdtri gamma gammainc
gammaincc gammainccinv gammaincinv gammaln gammasgn gdtr gdtrc huber hyp1f1 inv_boxcox inv_boxcox1p
i0 i0e i1 i1e j0 j1 k0 k0e k1 k1e kl_div log_ndtr loggamma lpmv multigammaln nbdtr nbdtrc nbdtri
ndtr ndtri pdtr pdtrc pdtri poch pseudo_huber polygamma psi radian rgamma sindg spence tandg
y0 y1 yn zeta zetac
""".split())


def _float(x: Any, name: str) -> GpuArray:
    if not isinstance(x, GpuArray):
        raise TypeError(f"special.{name}: expected a GpuArray; got {type(x).__name__}")
    return x if x.dtype.kind == "f" else x.astype(x.device.default_float)


def expit(x: GpuArray, /) -> GpuArray:
    """``1 / (1 + exp(-x))``, on ``x``'s device."""
    x = _float(x, "expit")
    return 1.0 / (1.0 + _EW["exp"](-x))


def logit(x: GpuArray, /) -> GpuArray:
    """``log(x / (1 - x))``, on ``x``'s device."""
    x = _float(x, "logit")
    return _EW["log"](x / (1.0 - x))


def entr(x: GpuArray, /) -> GpuArray:
    """``-x log x`` for ``x > 0``, 0 at 0, ``-inf`` below, on ``x``'s device."""
    x = _float(x, "entr")
    w = _EW["where"]
    r = w(x > 0, -x * _EW["log"](w(x > 0, x, 1.0)), 0.0)
    return w(_EW["isnan"](x), x, w(x < 0, -np.inf, r))


def xlog1py(x: GpuArray, y: GpuArray, /) -> GpuArray:
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN), on the arrays' device."""
    xs = [a for a in (x, y) if isinstance(a, GpuArray)]
    if not xs:
        raise TypeError("special.xlog1py: expected GpuArrays")
    if len(xs) == 2:
        x, y = scalars_to_device(xs, "xlog1py")
    dev_float = xs[0].device.default_float
    x = x.astype(dev_float) if isinstance(x, GpuArray) and x.dtype.kind != "f" else x
    y = y.astype(dev_float) if isinstance(y, GpuArray) and y.dtype.kind != "f" else y
    r = x * _EW["log1p"](y)
    return _EW["where"](_EW["logical_and"](x == 0, _EW["logical_not"](_EW["isnan"](y))), 0.0, r)


def exp2(x: GpuArray, /) -> GpuArray:
    """``2 ** x``, on ``x``'s device."""
    return _EW["pow"](2.0, _float(x, "exp2"))


def exp10(x: GpuArray, /) -> GpuArray:
    """``10 ** x``, on ``x``'s device."""
    return _EW["pow"](10.0, _float(x, "exp10"))


def sinc(x: GpuArray, /) -> GpuArray:
    """``sin(pi x) / (pi x)``, 1 at 0, on ``x``'s device."""
    x = _float(x, "sinc")
    y = np.pi * _EW["where"](x == 0, 1.0e-20, x)
    return _EW["where"](x == 0, 1.0, _EW["sin"](y) / y)


def _host(name: str) -> Callable[..., Any]:
    def fn(*args: Any, **kwargs: Any) -> Any:
        import scipy.special

        def call(*a: Any, **k: Any) -> Any:
            return getattr(scipy.special, name)(*a, **k)
        call.__module__, call.__name__ = "scipy.special", name
        arrays = [a for a in args if isinstance(a, GpuArray)]
        if not arrays:
            raise TypeError(f"special.{name}: expected at least one GpuArray")
        device = scalars_to_device(arrays, name)[0].device
        return _interop.host_function(call, args, kwargs, device)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``scipy.special.{name}`` on a host copy; the result comes back to the arrays' device."
    return fn


def __getattr__(name: str) -> Any:
    if name in HOST:
        fn = _host(name)
        globals()[name] = fn
        return fn
    raise AttributeError(f"module 'gpuarray.special' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | HOST)


__all__ = ["expit", "logit", "entr", "xlog1py", "exp2", "exp10", "sinc", *sorted(HOST)]
