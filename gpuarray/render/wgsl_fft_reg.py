"""WGSL for the ``fft`` kernel kind: mixed-radix Stockham passes that load and store from registers.

The passes of ``wgsl_fft_mixed.py`` (same groups, same plan, same twiddle table, same butterflies)
with fewer trips through workgroup memory. There a pass gathers its groups into workgroup memory,
runs each stage from it and back (``S`` stages: ``S + 1`` writes, ``S + 1`` reads, ``2 S + 2``
barriers) and scatters them. Here the first stage's butterflies read their inputs straight from
``src`` into registers and the last stage's write their outputs straight to ``dst`` (scaled in the
last pass), so a pass of two stages is one exchange through workgroup memory (one write, one read,
two barriers) and a pass of three two. Powers of two are split into radices of up to 16
(``mixed_plan(..., max_pow2=16)``: 2^7 = 16 x 8, 2^8 = 16 x 16, 2^10 = 16 x 8 x 8), so each stage
does more work in registers per barrier.

Which thread runs which butterfly in the first and last stages keeps global accesses coalesced:
group-major (``gl = b mod G``, ``i = b / G``: consecutive threads take the same element of
consecutive groups, adjacent in memory for every pass after the first and for strided axes) or
element-major (``gl = b / (Rb / R)``, ``i = b mod (Rb / R)``: consecutive elements of one group,
where those are adjacent: the first pass's stores and a one-pass transform's loads on a
contiguous axis). A stage-1 butterfly ``i`` of group ``gl`` reads local elements
``i + r Rb / R``, at ``gin[gl] + (i + r Rb / R) nrb inner``; a last-stage butterfly writes local
element ``i + r Rb / R`` (there ``p = Rb / R`` and ``k = i``) at ``gout[gl] + m Ns inner``. A
one-stage pass whose load and store orders differ stores to workgroup memory and scatters as
``wgsl_fft_mixed.py`` does.

>>> src, threads = render_fft_reg(np.dtype("complex64"), (16, 8, 8), 4, False, True, False, False, True)
>>> threads, src.count("workgroupBarrier()")
(256, 4)
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..core.dtypes import WGSL_TYPE, real_dtype
from .wgsl_fft_mixed import MAX_THREADS, _Dft, pass_head


def _stage(t: str, f: str, s: int, radix: int, pl: int, rb: int, g: int, threads: int, group: int,
           load: str, store: str, order: str, sc: bool) -> str:
    """One stage of every group of the workgroup: ``load`` from ``"sh"`` (workgroup memory) or
    ``"src"``, ``store`` to ``"sh"`` or ``"dst"``; ``order`` ``"g"`` (group-major) or ``"e"``
    (element-major); twiddles: the pass's local table when ``pl > 1``, the group's factors (``sa``
    from column ``group``) when ``group >= 0``; ``sc``: multiply by the normalization on store."""
    flies = g * rb // radix
    per = rb // radix                   # butterflies of one group
    count = -(-flies // threads)
    local = pl > 1
    decl = [f"  var o{c}: u32; var gq{c}: u32;" + "".join(f" var y{c}_{r}: {t};" for r in range(radix))
            for c in range(count)]
    body = []
    for c in range(count):
        d = _Dft(t, f, s)
        xs = []
        for r in range(radix):
            a = f"i + {r * per}u"
            if load == "sh":
                x = d.let(f"sh[sx(({a}) * Gu + gl)]")
            else:
                x = d.let(f"src[min(ib + ({a}) * rstride, lastel)]")
            if r and (local or group >= 0):
                w = d.let(f"tw[tb + {r - 1}u]") if local else ""
                if group >= 0:
                    v = d.let(f"sa[ta + {r - 1}u]")
                    w = d.let(f"{t}({v}.x * {w}.x - {v}.y * {w}.y, {v}.x * {w}.y + {v}.y * {w}.x)") if local else v
                x = d.let(f"{t}({x}.x * {w}.x - {x}.y * {w}.y, {x}.x * {w}.y + {x}.y * {w}.x)")
            xs.append(x)
        ys = d.dft(xs)
        guard = f"if (bq < {flies}u) " if flies % threads and c == count - 1 else ""
        split = ["let gl = bq % Gu;", "let i = bq / Gu;"] if order == "g" else \
                [f"let gl = bq / {per}u;", f"let i = bq % {per}u;"]
        tws = [f"let tb = offb + {pl - 1}u + kl * {radix - 1}u;"] if local else []
        tws += [f"let ta = gl * CAu + {group}u;"] if group >= 0 else []
        ld = ["let ib = gin[gl];"] if load == "src" else []
        inner = [*split, f"let kl = i % {pl}u;", *ld, *tws, f"gq{c} = gl;",
                 f"o{c} = ((i - kl) * {radix}u + kl)" + (" * Gu + gl;" if store == "sh" else ";"), *d.lines,
                 *(f"y{c}_{r} = {y};" for r, y in enumerate(ys))]
        body.append(f"  {{\n    let bq = lid + {c * threads}u;\n    {guard}{{\n"
                    + "".join(f"      {ln}\n" for ln in inner) + "    }\n  }")
    stores = []
    for c in range(count):
        if store == "sh":
            st = "".join(f" sh[sx(o{c} + {r * pl * g}u)] = y{c}_{r};" for r in range(radix))
            inside = st
        else:
            mul = " * sc" if sc else ""
            st = "".join(f" dst[ob + (o{c} + {r * pl}u) * mstride] = y{c}_{r}{mul};" for r in range(radix))
            inside = f" let ob = gout[gq{c}]; if (gin[gq{c}] != 0xffffffffu) {{{st} }}"
        guard = f"if (lid + {c * threads}u < {flies}u) " if flies % threads and c == count - 1 else ""
        stores.append(f"  {guard}{{{inside} }}")
    pre = ["  workgroupBarrier();"] if load == "sh" and store == "sh" else []
    post = ["  workgroupBarrier();"] if store == "sh" else []
    return "\n".join(["  {", *decl, *body, *pre, *stores, *post, "  }"])


@functools.lru_cache(maxsize=256)
def render_fft_reg(dtype: np.dtype, radices: tuple[int, ...], g: int, inverse: bool, first: bool,
                   last: bool, load_em: bool, store_em: bool) -> tuple[str, int]:
    """One pass (``radices``, ``g`` groups per workgroup) for ``dtype``: (WGSL source, threads).
    Parameters and ``prm`` as ``wgsl_fft_mixed.render_fft_mixed``'s (the same table, the same
    workgroup memory at most)."""
    t = WGSL_TYPE[dtype]
    f = WGSL_TYPE[real_dtype(dtype)]
    rb = math.prod(radices)
    e = g * rb
    ca = sum(r - 1 for r in radices)
    threads = min(MAX_THREADS, -(-max(e // r for r in radices) // 32) * 32)
    s = 1 if inverse else -1
    lo, so = ("e" if load_em else "g"), ("e" if store_em else "g")
    one = len(radices) == 1
    direct_store = not one or lo == so
    stages, pl, col = [], 1, 0
    for q, radix in enumerate(radices):
        load = "src" if q == 0 else "sh"
        store = "dst" if q == len(radices) - 1 and direct_store else "sh"
        order = lo if q == 0 else so if store == "dst" else "g"
        stages.append(_stage(t, f, s, radix, pl, rb, g, threads, -1 if first else col, load, store, order,
                             last and store == "dst"))
        pl *= radix
        col += radix - 1
    ssplit = "gl = e / RBu; m = e % RBu;" if store_em else "gl = e % Gu; m = e / Gu;"
    val = "sh[sx(m * Gu + gl)] * sc" if last else "sh[sx(m * Gu + gl)]"
    scatter = "" if direct_store else f"""  for (var e = lid; e < Eu; e += {threads}u) {{
    var gl: u32; var m: u32;
    {ssplit}
    if (gin[gl] != 0xffffffffu) {{ dst[gout[gl] + m * mstride] = {val}; }}
  }}
"""
    scale = f"\n  let sc: {f} = tw[prm[6]].x;" if last else ""
    sa_decl = "" if first else f"var<workgroup> sa: array<{t}, {g * ca}>;\n"
    sa_load = "" if first else f"""  for (var e = lid; e < {g * ca}u; e += {threads}u) {{
    let gl = e / CAu;
    sa[e] = tw[offa + kps[gl] * CAu + e - gl * CAu];
  }}
  workgroupBarrier();
"""
    lastel = "  let lastel = arrayLength(&src) - 1u;      // a tail group's loads (never stored) stay in bounds\n"
    src = pass_head(t, e, g, threads, sa_decl, scale, lastel) + f"""{sa_load}{chr(10).join(stages)}
{scatter}}}
"""
    return (src.replace("RBu", f"{rb}u").replace("CAu", f"{ca}u").replace("Gu", f"{g}u").replace("Eu", f"{e}u"),
            threads)
