"""Special functions for SciPy's array-API dispatch: ``scipy.special.f(x)`` looks for
``xp.special.f`` (``_support_alternative_backends._get_native_func``) before it falls back to
``xp.asarray(f(np.asarray(x)))``, which puts the result on the *default* device instead of ``x``'s.

- ``expit``, ``logit``, ``entr``, ``xlog1py``, ``exp2``, ``exp10``, ``sinc``, the error function family
  (``erf``, ``erfc``, ``erfcx``, ``erfinv``, ``erfcinv``, ``ndtr``, ``log_ndtr``, ``ndtri``), ``gammaln``,
  ``psi``, the modified Bessel functions ``i0``, ``i0e``, ``i1``, ``i1e``, the incomplete beta function
  ``betainc``, ``betaincc``, Student's t distribution ``stdtr`` (what ``scipy.stats.ttest_ind`` and
  ``pearsonr`` call), the incomplete gamma function ``gammainc``, ``gammaincc`` and the chi-square
  distribution ``chdtr``, ``chdtrc`` (render/wgsl_incomplete.py) are entries of the op table
  (``core/ops.py``): they run on ``x``'s device, one kernel op each, float32 and float64, and fuse with their
  neighbours. Integer operands compute in the device's default float. (The float32 versions of the
  incomplete beta and gamma functions compute in float64: on an adapter without it they run on the host.)
- ``cbrt`` is NumPy's ``cbrt`` entry (``OPS["cbrt"]``, render/wgsl_bits.py: within 1 ULP of the exact cube
  root) with SciPy's loops, float32 and float64: other real dtypes (integers, bool) compute in the device's
  default float (float64, as SciPy gives, where the device has it).
- The other SciPy special functions that SciPy has no generic array-API version of (``j0``, ``zeta``,
  ``stdtrit`` ... see ``HOST``) run SciPy's own ufunc on a host copy, and the result comes back to ``x``'s
  device. Each is a counted host fallback (``metrics()["host_fallbacks"]``, warned once per function;
  ``gpuarray.config(fallback=...)``).
- Functions SciPy already implements with array-API calls (``xlogy``, ``rel_entr`` ...) are left
  to SciPy: they are not defined here, so SciPy runs them with gpuarray's functions. Not so ``chdtr``,
  ``chdtrc``, ``betaincc``, ``stdtr`` (device entries with SciPy's ufuncs' values, special values included)
  and ``stdtrit`` (host): SciPy's generic versions differ from its ufuncs out of domain (``chdtrc(v, x < 0)``
  is 1, not NaN; its generic ``stdtr`` squares integer ``t`` without promoting, which overflows: scipy#20972).

>>> import gpuarray as xp
>>> x = xp.asarray([0.0, 2.0], device="cpu")
>>> [round(v, 4) for v in xp.special.expit(x).tolist()]
[0.5, 0.8808]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import interop as _interop
from .array_object.array import GpuArray
from .array_object.elementwise import apply, scalars_to_device
from .core.ops import OPS
from .namespace.elementwise import SPECIAL

# SciPy ufuncs without an array-API implementation in SciPy (scipy 1.17): these run on the host.
HOST = frozenset("""
bdtr bdtrc bdtri betaincinv betaln binom boxcox boxcox1p chdtri cosdg cosm1
cotdg ellipk ellipkm1 exp1 expi exprel expn fdtr fdtrc fdtri gamma gammainccinv gammaincinv
gammasgn gdtr gdtrc huber hyp1f1 inv_boxcox inv_boxcox1p j0 j1 k0 k0e k1 k1e kl_div loggamma lpmv multigammaln
nbdtr nbdtrc nbdtri pdtr pdtrc pdtri poch pseudo_huber polygamma radian rgamma sindg spence stdtrit
tandg y0 y1 yn zeta zetac
""".split())


# expit, logit, entr, exp2, exp10, sinc, xlog1py, erf ... i1e: op-table entries (``core/ops.py``, module "special")
globals().update(SPECIAL)


def cbrt(x: Any, /) -> Any:
    """``scipy.special.cbrt(x)``: the cube root on ``x``'s device (NumPy's ``cbrt`` entry, ``OPS["cbrt"]``);
    float32 stays float32, other real dtypes compute in the device's default float (SciPy: float64)."""
    if isinstance(x, GpuArray) and x.dtype.kind in "biu":
        x = x.astype(x.device.default_float)
    elif isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "biu":
        x = np.asarray(x, np.float64)
    return apply(OPS["cbrt"], x)


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


__all__ = [*SPECIAL, "cbrt", *sorted(HOST)]
