"""WGSL float -> integer conversions with the host's rule for NaN, +-inf and out-of-range
values (``providers/host_cast.py``: NumPy's results on x86-64).

WGSL's own conversion saturates and maps NaN to 0 (naga clamps). Here every range test is
made on the float's bits as an unsigned integer (the magnitude bits of non-negative floats
order like the floats, +inf above every finite value, NaN above +inf), so nothing depends on
how the device compares subnormals (some flush them to zero); the native conversion is used
only on values whose truncation is in range, where it is exact.

>>> import numpy as np
>>> _bits(np.dtype(np.float32), 2**31 + 1) == 0x4f000001   # the float32 above 2**31
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.dtypes import WGSL_TYPE, real_dtype

_UINT = {4: np.uint32, 8: np.uint64}
_HALF = np.dtype(np.float16)
# dtypes held in wider words than their own (core/dtypes.py), brought back to their values after each
# operation: the small integers wrapped, float16 rounded to the nearest float16 (render/wgsl_lib.py)
SMALL_WRAP = {np.dtype("int8"): "(({x}) << 24u) >> 24u", np.dtype("int16"): "(({x}) << 16u) >> 16u",
              np.dtype("uint8"): "({x}) & 0xffu", np.dtype("uint16"): "({x}) & 0xffffu", _HALF: "ga_half_f32({x})"}


def wrap_small(dt: np.dtype, expr: str) -> str:
    """``expr`` brought back to a value of ``dt`` when ``dt`` lives in a wider word, else unchanged.

    >>> wrap_small(np.dtype("uint8"), "a + b")
    '(a + b) & 0xffu'
    """
    return SMALL_WRAP[dt].replace("{x}", expr) if dt in SMALL_WRAP else expr


def _bits(fdt: np.dtype, value: int) -> int:
    """Bits of the smallest ``fdt`` float not below the positive integer ``value``."""
    f = fdt.type(value)
    if int(f) < value:
        f = np.nextafter(f, fdt.type(np.inf))
    return int(np.array(f, dtype=fdt).view(_UINT[fdt.itemsize]).item())


def _lit(fdt: np.dtype, n: int) -> str:
    """An unsigned literal of ``fdt``'s bits type."""
    return f"{n:#x}u" if fdt.itemsize == 4 else f"{n:#x}lu"


def float_to_int(gen: Any, v: str, src: np.dtype, dst: np.dtype) -> str:
    """The WGSL expression (of type ``WGSL_TYPE[dst]``, before 8/16-bit wrapping) converting the
    float ``v`` of dtype ``src`` to the integer ``dst``; ``gen.emit`` declares the parts."""
    u = "u32" if src.itemsize == 4 else "u64"
    sign = 1 << (src.itemsize * 8 - 1)
    b = gen.emit(f"bitcast<{u}>({v})")
    a = gen.emit(f"{b} & {_lit(src, sign - 1)}")       # the magnitude's bits
    neg = gen.emit(f"{b} > {_lit(src, sign - 1)}")     # the sign bit is set

    def t(bits: int) -> str:
        """T32 / T64: the truncation when it lies in [-2**(bits-1), 2**(bits-1)), else the minimum."""
        half = 1 << (bits - 1)
        # positive: |x| < 2**(bits-1); negative: |x| < 2**(bits-1) + 1 (NaN and inf fail both)
        ok = gen.emit(f"select({a} < {_lit(src, _bits(src, half))}, {a} < {_lit(src, _bits(src, half + 1))}, {neg})")
        low = "bitcast<i32>(0x80000000u)" if bits == 32 else "bitcast<i64>(0x8000000000000000lu)"
        return gen.emit(f"select({low}, i{bits}({v}), {ok})")

    if dst.itemsize < 4:                                  # low bits of T32 (wrapped by the caller)
        r = t(32)
        return r if dst.kind == "i" else f"bitcast<u32>({r})"
    if dst.kind == "i":
        return t(dst.itemsize * 8)
    if dst.itemsize == 4:                                 # uint32: the low 32 bits of T64
        if src.itemsize == 8:
            return f"u32(bitcast<u64>({t(64)}) & 0xfffffffflu)"
        # float32 by integer arithmetic (no shader-int64 needed): the low 32 bits of trunc(|x|)
        # are the 24-bit significand shifted by (exponent - 150); they are 0 from |x| >= 2**56
        # on, which also covers |x| >= 2**63, inf and NaN (T64 gives -2**63 there)
        e = gen.emit(f"({b} >> 23u) & 0xffu")
        m = gen.emit(f"({b} & 0x7fffffu) | 0x800000u")
        mag = gen.emit(f"select(select(0u, {m} >> (150u - {e}), {e} > 126u), "
                       f"select(0u, {m} << ({e} - 150u), {e} < 182u), {e} >= 150u)")
        return f"select({mag}, 0u - {mag}, {neg})"
    # uint64: trunc(x) on [2**63, 2**64), 0 from 2**64 up (+inf too), 2**63 for NaN, else T64
    t64 = t(64)
    top = gen.emit(f"select(u64({v}), 0lu, {a} >= {_lit(src, _bits(src, 1 << 64))})")
    r = gen.emit(f"select(bitcast<u64>({t64}), {top}, !{neg} && {a} >= {_lit(src, _bits(src, 1 << 63))})")
    inf = "0x7f800000u" if src.itemsize == 4 else "0x7ff0000000000000lu"
    return f"select({r}, 0x8000000000000000lu, {a} > {inf})"


def to_bool(v: str, src: np.dtype) -> str:
    """WGSL of ``v`` (of ``src``) cast to bool: nonzero. Floats on their bits (any bit but the sign: NaN and
    subnormals are true): a flushing driver (NVIDIA) compares 1e-40 != 0 as false, and a compiler that takes a
    computed value for finite drops an ``isnan`` test (the H200's did so to ``isfinite`` of a sum).

    >>> to_bool("v1", np.dtype("float32"))
    '((bitcast<u32>(v1) & 0x7fffffffu) != u32(0))'
    """
    if src.kind in "fc":
        u, m = ("u32", "0x7fffffffu") if real_dtype(src).itemsize <= 4 else ("u64", "0x7ffffffffffffffflu")
        if src.kind == "c":
            return f"any((bitcast<vec2<{u}>>({v}) & vec2<{u}>({m})) != vec2<{u}>({u}(0)))"
        return f"((bitcast<{u}>({v}) & {m}) != {u}(0))"
    return f"({v} != {WGSL_TYPE[src]}(0))"


def cast(gen: Any, v: str, src: np.dtype, dst: np.dtype) -> str:
    """The WGSL expression converting ``v`` of dtype ``src`` to ``dst`` as NumPy's ``astype`` does;
    ``gen`` (a ``render.wgsl._Gen``) declares the parts and reads the hidden zero."""
    if src == dst:
        return v
    if dst == _HALF and src == np.float64:
        return f"ga_half_f64({v})"        # rounded once (through float32 it could round twice)
    if src == _HALF:                      # held as float32 (core/dtypes.py)
        return cast(gen, v, np.dtype(np.float32), dst)
    t = WGSL_TYPE[dst]
    if dst == np.bool_:
        return to_bool(v, src)
    if dst.kind == "c":
        # The imaginary part is a +0 read from ``prm`` (a literal would let the compiler fold ``0 * y``, ``x + 0``:
        # signs of zero), the real part behind it too (``z - real(z)`` folded to 0 for NaN: the fuzz found it)
        ft = WGSL_TYPE[real_dtype(dst)]
        zero = f"{ft}(bitcast<f32>({gen.slot(('zero',))}))"
        if src.kind == "c":
            return f"{t}({v})"
        if src == np.bool_:
            return f"{t}(select({ft}(0), {ft}(1), {v}), {zero})"
        return f"{t}({gen.hidden(f'{ft}({v})', real_dtype(dst))}, {zero})"
    if src == np.float32 and dst == np.float64:      # subnormals kept where a driver flushes them
        return f"ga_fromf32_f64({v})"
    if src.kind == "c":          # complex -> real: the real part (NumPy's conversion)
        return cast(gen, f"{v}.x", real_dtype(src), dst)
    if src == np.bool_:
        return f"select({t}(0), {t}(1), {v})"
    if src.kind == "f" and dst.kind in "iu":
        # NaN, +-inf and out-of-range values as on the host (render/wgsl_cast.py), and
        # xor with a 0 the compiler cannot see: otherwise it turns float(int(x)) into
        # trunc(x), which keeps the sign of -0.3 -> -0.0 (NumPy: +0.0; lavapipe did)
        expr = f"({float_to_int(gen, v, src, dst)} ^ {t}({gen.slot(('zero',))}))"
        return wrap_small(dst, expr)
    expr = f"{t}({v})" if WGSL_TYPE[src] != t else v
    if dst.kind in "iu" and dst.itemsize == 8 and src.kind in "iu" and src.itemsize < 8:
        # 32 -> 64-bit integers by shifts, not by the conversion: naga's u64(i32) zero-extends
        # (-3 -> 4294967293), its i64(u32) sign-extends (3653403236 -> -641564060), and on
        # lavapipe (Mesa 22.3) an i64(i32) passed to a function compared wrongly with 0
        # (sign(i64(-4)) was 1): the high word is rebuilt from the low one instead
        low = f"(u64({v if src.kind == 'u' else f'bitcast<u32>({v})'}) << 32u)"
        wide = f"(bitcast<i64>{low} >> 32u)" if src.kind == "i" else f"({low} >> 32u)"
        expr = wide if WGSL_TYPE[dst] == ("i64" if src.kind == "i" else "u64") else f"bitcast<{t}>{wide}"
    return wrap_small(dst, expr)
