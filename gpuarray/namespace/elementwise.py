"""Elementwise functions, generated from the op table (one function per ``OpDef``).

``FUNCTIONS`` holds those of the ``gpuarray`` namespace, ``SPECIAL`` those of
``gpuarray.special`` (``OpDef.module``); ``OP_FUNCTIONS`` every op's function by op name, the internal
ops' (``OpDef.module == INTERNAL``: in no namespace) included.

>>> import gpuarray as xp
>>> xp.exp(xp.asarray([0.0], device="cpu")).tolist()
[1.0]
"""

from __future__ import annotations

from typing import Any

from ..array_object.elementwise import apply
from ..core.ops import INTERNAL, OPS, OpDef

_NAMES = ("x",) , ("x1", "x2"), ("condition", "x1", "x2")


def _make(opdef: OpDef) -> Any:
    """A real function with the standard's positional-only parameters for ``opdef``."""
    fn: Any
    if opdef.nargs == 1:
        def fn(x: Any, /) -> Any:
            return apply(opdef, x)
    elif opdef.nargs == 2:
        def fn(x1: Any, x2: Any, /) -> Any:  # type: ignore[misc]
            return apply(opdef, x1, x2)
    else:
        def fn(condition: Any, x1: Any, x2: Any, /) -> Any:  # type: ignore[misc]
            return apply(opdef, condition, x1, x2)
    fn.__name__ = fn.__qualname__ = opdef.name
    params = ", ".join(_NAMES[opdef.nargs - 1])
    fn.__doc__ = (f"{opdef.name}({params}, /): elementwise {opdef.name}"
                  f"{' (NumPy: ' + opdef.ufunc + ')' if opdef.ufunc else ''}; "
                  f"operands must be {opdef.category}.")
    fn.__module__ = (__name__ if opdef.module == INTERNAL else
                     "gpuarray" + (f".{opdef.module}" if opdef.module else ""))
    return fn


OP_FUNCTIONS: dict[str, Any] = {name: _make(d) for name, d in OPS.items()}
FUNCTIONS: dict[str, Any] = {name: f for name, f in OP_FUNCTIONS.items() if OPS[name].module == ""}
SPECIAL: dict[str, Any] = {name: f for name, f in OP_FUNCTIONS.items() if OPS[name].module == "special"}


def clip_values(x: Any, lo: Any, hi: Any) -> Any:
    """``x`` clipped to both bounds as NumPy's loops give it at a +-0 tie: ``x`` kept where the bounds are
    scalars (``clip(-0.0, 0.0, 1.0)`` is -0.0; the ``clip_ties`` op), the bound where they are arrays (NumPy's
    SIMD loop takes ``maximum(x, lo)`` and then ``minimum(t, hi)``, the second operand at a tie). The result
    dtype is the operands' promotion (``numpy.clip``'s; ``clip`` casts back to ``x``'s)."""
    if getattr(lo, "ndim", 0) == 0 and getattr(hi, "ndim", 0) == 0:
        return apply(OPS["clip_ties"], x, lo, hi)
    return apply(OPS["minimum"], apply(OPS["maximum"], x, lo), hi)


def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:
    """Clamp ``x`` to [min, max] (NaN propagates, and ``x`` is kept at a +-0 tie, as in NumPy); keeps ``x``'s
    dtype."""
    out = x
    if min is not None and max is not None:
        out = clip_values(x, min, max)
        return out.astype(x.dtype) if out.dtype != x.dtype else out
    if min is not None:
        out = apply(OPS["maximum"], out, min)
    if max is not None:
        out = apply(OPS["minimum"], out, max)
    if out is x:
        return apply(OPS["positive"], x)
    return out.astype(x.dtype) if out.dtype != x.dtype else out


FUNCTIONS["clip"] = clip
