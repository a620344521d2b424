"""Render one pass of a ``regions`` kernel (``compiler/regions.py``) as WGSL.

A pass is an elementwise kernel over one operand's shape (the array under the chain of writes, or one
write's value over its region) whose thread ``gi`` stores its value at ``OFF + sum(m[d] * S<d>)`` of the
result (``m``: ``gi`` split over the operand's dimensions; ``OFF`` and the ``S<d>`` are run-time
parameters, so every write of one structure shares one shader). An ``rprev`` instruction (the value
reads the array it writes: ``a[i] *= 2``, ``a[i] = a[i - 1] + b[i]``) reads ``out0`` as the passes before
left it (``compiler/regions.py`` says which reads are safe while the pass stores).

>>> import numpy as np
>>> from gpuarray.compiler.kernel import Instr, Kernel, Result
>>> f = np.dtype(np.float32)
>>> k = Kernel([Instr("input", (), f, (2, 3), (0,))], [Result(f, (2, 3))], [0], [Result(f, (2, 3))], (2, 3))
>>> "out0[l" in render_region(k).source
True
"""

from __future__ import annotations

import re

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_STORAGE_TYPE
from .wgsl import Rendered, _Gen, thread_main
from .wgsl_lib import helpers_for
from .wgsl_parts import declare_bindings, input_types, store_value


def render_region(kernel: Kernel) -> Rendered:
    """WGSL for ``kernel`` (one output, any rank) storing each element at its place in the result;
    ``prm`` extras ``OFF`` and ``S0``, ``S1``, ... (the result's strides of the region, in elements)."""
    return _render(kernel, batched=False)


def render_regions_batched(kernel: Kernel) -> Rendered:
    """``render_region``'s shader run for several writes of one structure in one dispatch (their regions
    disjoint: ``providers/wgpu_regions.py`` decides): thread ``gi`` is element ``gi % n`` of write ``gi / n``,
    and ``prm`` is ``[threads, n]`` followed by each write's own ``prm`` block (``render_region``'s words:
    its size, then its slots), so that every ``prm[k]`` of the body reads its write's block.

    >>> import numpy as np
    >>> from gpuarray.compiler.kernel import Instr, Kernel, Result
    >>> f = np.dtype(np.float32)
    >>> k = Kernel([Instr("input", (), f, (4,), (0,))], [Result(f, (4,))], [0], [Result(f, (4,))], (4,))
    >>> "let pb = 2u + p * 3u;" in render_regions_batched(k).source
    True
    """
    return _render(kernel, batched=True)


_PRM = re.compile(r"prm\[(\d+)\]")


def _render(kernel: Kernel, batched: bool) -> Rendered:
    (o,) = kernel.outputs
    dt = kernel.instrs[o].dtype
    g = _Gen(kernel)
    at = "li" if batched else "gi"
    v = g.value(o, ("lin", at))
    m = g.multi(("lin", at), o)
    terms = [g.slot(("extra", "OFF"))] + [f"{m[d]} * {g.slot(('extra', f'S{d}'))}" for d in range(len(m))]
    lin = g.emit(" + ".join(terms), "l")
    body = [*g.lines, f"  out0[{lin}] = {store_value(dt, v)};"]
    if batched:
        block = 1 + len(g.slots)
        body = ["  let n = prm[1];", "  let p = gi / n;", "  let li = gi - p * n;", f"  let pb = 2u + p * {block}u;",
                *[_PRM.sub(lambda k: f"prm[pb + {k.group(1)}u]", line) for line in body]]
    decls = declare_bindings(input_types(kernel), [WGSL_STORAGE_TYPE[dt]], g.wide)
    main = thread_main(body)
    src = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main
    return Rendered(src, sorted(g.slots, key=lambda s: g.slots[s]), g.wide, len(kernel.inputs), 1)
