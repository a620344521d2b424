"""How much code a driver compiles for WGSL lines: helpers inlined at every call (drivers inline WGSL
functions), and the limit past which a fused prologue counts as heavy (rendered once per loop trip by the
reductions and arg-reductions, not once per unrolled copy).

>>> inlined_lines(["let a = x + 1.0;"])
1
>>> heavy(["let a = ga_exp_f32(x);"])
False
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

from .wgsl_lib import HELPER_NAME, definition


@functools.cache
def _inlined(name: str, suffix: str) -> int:
    """Lines of helper ``ga_<name>_<suffix>`` with every helper it calls counted in full at each call."""
    text = definition(name, suffix)
    return text.count("\n") + 1 + sum(_inlined(m.group(1), m.group(2)) for m in HELPER_NAME.finditer(text)
                                       if (m.group(1), m.group(2)) != (name, suffix))


def inlined_lines(lines: Sequence[str]) -> int:
    """How many lines a driver compiles for ``lines`` once it has inlined every helper they call, at
    each call: the measure of a fused prologue's size (``inlined_lines(["ga_sin_f64(x)"])`` is 355)."""
    return len(lines) + sum(_inlined(m.group(1), m.group(2)) for ln in lines for m in HELPER_NAME.finditer(ln))


# A prologue whose WGSL passes this many lines with its helpers inlined is rendered once per loop trip by
# the reductions and arg-reductions (no unrolled copies; a 4-byte vec4 word's four lanes, no 8-byte
# words): drivers inline and compile every copy. SciPy's tanhsinh/nsum fuse float64 log1p/log/cosh cones
# of 4000-5000 such lines into reductions, new ones from one iteration to the next; lavapipe's LLVM took
# 100-170 s for a dozen of them (three copies each) at their first dispatch.
HEAVY_LINES = int(os.environ.get("GPUARRAY_HEAVY_PROLOGUE", "600"))


def heavy(lines: Sequence[str]) -> bool:
    """Whether ``lines`` (a fused prologue) pass ``HEAVY_LINES`` once helpers are inlined."""
    return inlined_lines(lines) > HEAVY_LINES
