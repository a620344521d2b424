"""Where a kernel's scalar constants went: the ``prm`` words and the 64-bit constant arrays holding them.

Scalar constants are run-time parameters of every kernel (``render/wgsl.py``): a 32-bit one is a word
of the ``prm`` array that ``Rendered.meta`` fills, a 64-bit one an element of an array bound as a
read-only buffer (``Rendered.wide_values``, ``providers/wgpu_bindings.wide_buffers``). While a kernel's
enqueue is recorded for replay (``providers/wgpu_replay.Recorder``), ``sink.tags`` is a list and both
note there which words and elements hold which constant (by the identity of the constant
instruction's ``params``, which the constant node's ``attrs`` are). A replayed program can then write
new values of those constants (``word``, ``wide``) instead of being recorded again.

>>> import numpy as np
>>> hex(word((np.float32(1.5),), np.dtype(np.float32)))
'0x3fc00000'
>>> word((np.complex64(2 + 3j),), np.dtype(np.complex64), 1) == word((np.float32(3),), np.dtype(np.float32))
True
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

# a tag: (place, the constant instruction's params, its dtype, part: None, or 0 / 1 for the real /
# imaginary part of a complex constant); place is a word of prm or an element of a 64-bit array


class _Sink(threading.local):
    """``tags``: None, or the list that notes ``(array or buffer, [tag, ...])`` of one enqueue."""
    tags: list[tuple[Any, list[tuple]]] | None = None


sink = _Sink()


def _bits32(dtype: np.dtype) -> np.dtype:
    if dtype == np.bool_ or dtype.kind == "u":
        return np.dtype(np.uint32)
    if dtype.kind == "i":
        return np.dtype(np.int32)
    return np.dtype(np.float32)


# the "dtype" of a tag for a view's offset word (``Rendered.meta``'s ``voffset`` slot): ``params`` are the view
# instruction's (strides, offset); a replay gives a window that moved its new offset (runtime/replay.py)
VOFFSET = "voffset"


def word(params: tuple, dtype: Any, part: int | None = None) -> int:
    """The ``prm`` word of a 32-bit constant (``part`` of a complex64 one), or of a view's offset."""
    if dtype is VOFFSET:
        return int(params[1]) & 0xFFFFFFFF
    c = np.asarray(params[0], dtype=dtype)
    if c.dtype.kind == "c":
        c = c.imag if part else c.real
    return int(c.astype(_bits32(c.dtype)).view(np.uint32)) & 0xFFFFFFFF


def wide(params: tuple, part: int | None = None) -> Any:
    """The element of a 64-bit constant array for a constant (``part`` of a complex128 one)."""
    if part is not None:
        c = complex(params[0])
        return c.imag if part else c.real
    return params[0]


def note(obj: Any, tags: list[tuple]) -> None:
    """Note that ``obj`` (a prm array, or a 64-bit constant buffer) holds the constants ``tags``."""
    lst = sink.tags
    if lst is not None and tags:
        lst.append((obj, tags))
