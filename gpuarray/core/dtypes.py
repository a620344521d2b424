"""Dtypes as data: the supported set, their categories and the promotion rules.

Dtypes are plain ``numpy.dtype`` objects. Promotion follows the Array API
table (which NumPy 2 implements for these types) with Python scalars weak.

>>> from gpuarray.core.dtypes import result_type
>>> result_type(np.dtype("int8"), 3)
dtype('int8')
"""

from __future__ import annotations

from typing import Any

import numpy as np

bool_ = np.dtype("bool")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
uint16 = np.dtype("uint16")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")
float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")

ALL_DTYPES: tuple[np.dtype, ...] = (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64, complex64, complex128,
)
SIGNED = (int8, int16, int32, int64)
UNSIGNED = (uint8, uint16, uint32, uint64)
INTEGER = SIGNED + UNSIGNED
FLOATING = (float16, float32, float64)
COMPLEX = (complex64, complex128)
REAL_NUMERIC = INTEGER + FLOATING
NUMERIC = REAL_NUMERIC + COMPLEX

# complex dtype <-> the real dtype of its components
REAL_OF: dict[np.dtype, np.dtype] = {complex64: float32, complex128: float64}
COMPLEX_OF: dict[np.dtype, np.dtype] = {float16: complex64, float32: complex64, float64: complex128}

# Category name (as the Array API and our op table spell it) -> member dtypes.
CATEGORIES: dict[str, tuple[np.dtype, ...]] = {
    "bool": (bool_,),
    "signed integer": SIGNED,
    "unsigned integer": UNSIGNED,
    "integral": INTEGER,
    "integer": INTEGER,
    "integer or boolean": INTEGER + (bool_,),
    "real floating": FLOATING,
    "complex floating": COMPLEX,
    "floating-point": FLOATING + COMPLEX,
    "real numeric": REAL_NUMERIC,
    "numeric": NUMERIC,
    "any": ALL_DTYPES,
}

# What the error message calls each category.
CATEGORY_WORDS: dict[str, str] = {
    "bool": "boolean",
    "integer": "integer",
    "integral": "integer",
    "integer or boolean": "integer or boolean",
    "real floating": "real floating-point",
    "complex floating": "complex floating-point",
    "floating-point": "floating-point",
    "real numeric": "real numeric",
    "numeric": "numeric",
    "signed integer": "signed integer",
    "unsigned integer": "unsigned integer",
    "any": "any",
}


def as_dtype(dtype: Any) -> np.dtype:
    """Normalize a dtype-like (``np.float32``, ``"int8"``, ``float``) to a supported ``np.dtype``.

    >>> as_dtype(float)
    dtype('float64')
    """
    if isinstance(dtype, np.dtype):
        dt = dtype
    else:
        try:
            dt = np.dtype(dtype)
        except TypeError as exc:
            raise TypeError(f"{dtype!r} is not a data type; expected one of {dtype_names()}") from exc
    if dt not in ALL_DTYPES:
        raise TypeError(f"Unsupported dtype: gpuarray does not support dtype {dt}; expected one of {dtype_names()}")
    return dt


def dtype_names() -> str:
    return ", ".join(str(d) for d in ALL_DTYPES)


def in_category(dtype: np.dtype, category: str) -> bool:
    return dtype in CATEGORIES[category]


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f"


def is_complex(dtype: np.dtype) -> bool:
    return dtype.kind == "c"


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of the components of a complex dtype; a real dtype itself.

    >>> real_dtype(complex64)
    dtype('float32')
    """
    return REAL_OF.get(dtype, dtype)


def complex_dtype(dtype: np.dtype, default_float: np.dtype = float64) -> np.dtype:
    """The complex dtype holding ``dtype`` exactly enough: float32 -> complex64, float64 -> complex128;
    integers and bool go to the complex of ``default_float``."""
    if dtype.kind == "c":
        return dtype
    return COMPLEX_OF[dtype if dtype.kind == "f" else default_float]


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """Promote two array dtypes (Array API table, NumPy's rules for mixed kinds)."""
    if a == b:
        return a
    return np.promote_types(a, b)


def scalar_kind(value: Any) -> str | None:
    """'b', 'i', 'f', 'c' for Python bool/int/float/complex (weak scalars), else None."""
    if isinstance(value, (bool, np.bool_)):
        return "b"
    if isinstance(value, int):
        return "i"
    if isinstance(value, float):
        return "f"
    if isinstance(value, complex):
        return "c"
    return None


def weak_result(array_dtype: np.dtype, value: Any, default_float: np.dtype) -> np.dtype:
    """Result dtype of ``array <op> python_scalar`` with the scalar weak.

    Raises OverflowError for an int that does not fit an integer dtype, like NumPy.
    """
    kind = scalar_kind(value)
    if kind == "b":
        return array_dtype
    if kind == "i":
        if array_dtype == bool_:
            return np.dtype("int64") if default_float == float64 else int32
        if array_dtype.kind in "iu":
            info = np.iinfo(array_dtype)
            if not info.min <= value <= info.max:
                raise OverflowError(f"Python integer {value} out of bounds for {array_dtype}")
        return array_dtype
    if kind == "f":
        return array_dtype if array_dtype.kind in "fc" else default_float
    if kind == "c":
        return complex_dtype(array_dtype, default_float)
    raise TypeError(f"unsupported scalar type {type(value).__name__}; expected bool, int, float or complex")


def result_type(*args: Any, default_float: np.dtype = float64) -> np.dtype:
    """Result dtype of mixing arrays/dtypes and weak Python scalars.

    >>> result_type(np.dtype("float32"), 2.0)
    dtype('float32')
    """
    dtypes = [a for a in args if isinstance(a, np.dtype)]
    dtypes += [a.dtype for a in args if hasattr(a, "dtype") and not isinstance(a, np.dtype)]
    scalars = [a for a in args if scalar_kind(a) is not None and not hasattr(a, "dtype")]
    if not dtypes:
        if not scalars:
            raise ValueError("at least one array or dtype is required")
        raise TypeError("result_type needs at least one array or dtype; got only Python scalars")
    out = dtypes[0]
    for d in dtypes[1:]:
        out = promote(out, d)
    for s in scalars:
        out = weak_result(out, s, default_float)
    return out


# How each dtype lives in a WGSL storage buffer and in registers.
# Types WGSL storage cannot hold (bool, 8- and 16-bit ints) are widened to 32 bits; float16 is held as
# float32 (every value a float16 one: each result rounded to float16 where it is made, as NumPy's half
# loops compute in float and round), so it needs no ``shader-f16`` feature.
# Complex numbers are (real, imaginary) pairs: vec2<f32> / vec2<f64>, which is NumPy's
# interleaved layout, so they upload and download without conversion.
STORAGE_NP: dict[np.dtype, np.dtype] = {
    bool_: uint32, int8: int32, int16: int32, uint8: uint32, uint16: uint32,
    int32: int32, uint32: uint32, int64: int64, uint64: uint64, float16: float32, float32: float32, float64: float64,
    complex64: complex64, complex128: complex128,
}
WGSL_TYPE: dict[np.dtype, str] = {
    bool_: "bool", int8: "i32", int16: "i32", int32: "i32", int64: "i64",
    uint8: "u32", uint16: "u32", uint32: "u32", uint64: "u64", float16: "f32", float32: "f32", float64: "f64",
    complex64: "vec2<f32>", complex128: "vec2<f64>",
}
WGSL_STORAGE_TYPE: dict[np.dtype, str] = {d: WGSL_TYPE[d] if d != bool_ else "u32" for d in ALL_DTYPES}
# Suffix of the ``ga_<name>_<suffix>`` WGSL helpers for each dtype (render/wgsl_lib.py).
WGSL_SUFFIX: dict[np.dtype, str] = {d: WGSL_STORAGE_TYPE[d] for d in ALL_DTYPES} | {
    complex64: "c64", complex128: "c128"}
