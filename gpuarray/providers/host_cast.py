"""Host casts with one defined result for float -> integer conversions of NaN, +-inf and
values outside the integer range (C leaves them undefined; hardware differs).

The rule is NumPy's result on Linux/x86-64, written out so that every platform (and the
WGSL renderer, ``render/wgsl_cast.py``) gives it. With ``T32(x)`` = ``trunc(x)`` when it
lies in ``[-2**31, 2**31)``, else ``-2**31`` (NaN and +-inf included), and ``T64`` the same
for 64 bits:

=================================  ===============================================
int8, int16, uint8, uint16         the low 8 / 16 bits of ``T32(x)``
int32                              ``T32(x)``
uint32                             the low 32 bits of ``T64(x)``
int64                              ``T64(x)``
uint64                             ``trunc(x)`` for ``2**63 <= x < 2**64``; 0 for
                                   ``x >= 2**64`` and +inf; else ``T64(x)`` as uint64
                                   (NaN, -inf and ``x < -2**63`` give ``2**63``)
=================================  ===============================================

A complex source converts its real part. Every other cast is NumPy's ``astype``.

NumPy itself is not consistent for float -> uint32 on x86: the SIMD body of a contiguous
loop gives ``2**31`` for NaN, -inf and ``x <= -2**31 - 1``, and 0 for ``x >= 2**32``,
while its scalar loop (strided arrays, scalars, the last few elements) gives the low
32 bits of ``T64(x)``; the rule above takes the scalar one.

>>> import numpy as np
>>> cast(np.array([np.nan, np.inf, -np.inf, 3e9, -1.5], np.float64), np.dtype(np.int32)).tolist()
[-2147483648, -2147483648, -2147483648, -2147483648, -1]
>>> cast(np.array([np.nan, 2.0**63, 1e30, -1.0], np.float32), np.dtype(np.uint64)).tolist()
[9223372036854775808, 9223372036854775808, 0, 18446744073709551615]
"""

from __future__ import annotations

import numpy as np

_I32, _I64, _U64 = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint64)


def _trunc_in(x: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Where ``trunc(x)`` lies in ``[lo, hi)`` (``lo``, ``hi``: powers of two; NaN: False),
    compared exactly in ``x``'s own type."""
    f = x.dtype.type
    below = lo - 1
    # trunc(x) >= lo  <=>  x > lo - 1; when lo - 1 is not representable no float lies
    # between lo - 1 and lo, so x >= lo says the same
    low = x > f(below) if int(f(below)) == below else x >= f(lo)
    return low & (x < f(hi))


def _t(x: np.ndarray, bits: int) -> np.ndarray:
    """``T32`` / ``T64``: ``trunc(x)`` in range, else the most negative value."""
    dt = _I32 if bits == 32 else _I64
    with np.errstate(invalid="ignore"):
        r = x.astype(dt)
    np.putmask(r, ~_trunc_in(x, -(1 << (bits - 1)), 1 << (bits - 1)), np.iinfo(dt).min)
    return r


def float_to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x`` (a real float array) converted to the integer ``dtype`` by the rule above."""
    if x.dtype == np.float16:           # exactly, as float32 (whose bounds it can write)
        x = x.astype(np.float32)
    size = dtype.itemsize
    if dtype == _U64:
        r = _t(x, 64).view(_U64)
        big = x >= x.dtype.type(2.0**63)
        if big.any():
            xs = x[big]
            r[big] = np.where(xs < x.dtype.type(2.0**64), xs, 0).astype(_U64)
        return r
    if size == 8:
        return _t(x, 64)
    if dtype.kind == "u" and size == 4:
        return _t(x, 64).astype(dtype)
    r32 = _t(x, 32)
    return r32 if size == 4 else r32.astype(dtype)


def cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x.astype(dtype)``, with float -> integer casts by the rule above."""
    x = np.asarray(x)
    if dtype.kind in "iu" and x.dtype.kind in "fc":
        if x.dtype.kind == "c":
            x = x.real
        return float_to_int(x, dtype)
    return x.astype(dtype)
