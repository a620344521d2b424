"""An ``fft`` kernel's first pass with its prologue folded into the loads (``wgsl_fft_reg`` passes).

An ``fft`` node whose operand is not a plain buffer (Bluestein's chirp product and zero padding, the
product with the transformed filter, an ``rfft``'s real input made complex, any fused elementwise
cone) used to cost one elementwise pass that wrote the operand before the transform's first pass
read it. Here the elementwise kernel the provider renders for that operand (``render/wgsl.render``:
one element a thread, ``gi``) becomes a function ``ga_src(gi)`` and the first pass calls it where it
loaded ``src[...]``: the operand is computed in registers, never stored. The function's parameter
words follow the pass's in the one ``prm`` array (every ``prm[k]`` of it becomes ``prm[P + k]``),
its inputs and 64-bit constant tables are bound after the pass's ``dst`` and ``tw`` (the pass's
``src`` binding goes). ``fuse`` returns None where the two shaders do not have the expected form;
the provider then keeps the separate pass.

>>> fuse("@group(0) @binding(0) var<storage, read> prm: array<u32>;", "", 7) is None
True
"""

from __future__ import annotations

import functools
import re

_BINDING = re.compile(r"@group\(0\) @binding\((\d+)\) var<storage, ([a-z_]+)> (\w+): (array<[^;]+>);")
_HEAD = "  if (gi >= prm[0]) { return; }"


@functools.lru_cache(maxsize=64)
def fuse(pass_src: str, prologue_src: str, words: int) -> str | None:
    """The first pass ``pass_src`` (``wgsl_fft_reg``: loads ``src[min(...)]``) reading its operand
    through ``prologue_src``'s body (an elementwise kernel storing ``out0[gi]``), whose ``prm``
    words start at ``words``. None where either shader is not of that form (cached: the provider
    asks at every call, with the same rendered strings)."""
    pre, sep, main = prologue_src.partition("@compute")
    if not sep or _HEAD not in main:
        return None
    body = main.split(_HEAD, 1)[1].rstrip().rstrip("}").rstrip().split("\n")
    last = body[-1].strip()
    if not (last.startswith("out0[gi] = ") and last.endswith(";")) or "out0" in "\n".join(body[:-1]):
        return None
    text = "\n".join(body[:-1])
    if re.search(r"prm\[(?!\d+\])", text):          # only literal parameter words can move
        return None
    ins, wide = [], []
    for m in _BINDING.finditer(pre):
        name = m.group(3)
        if name.startswith("in"):
            ins.append((name, m.group(4)))
        elif name not in ("prm", "out0"):
            wide.append((name, m.group(4)))
    ret = "vec2<f64>" if "array<vec2<f64>>" in pass_src.split("\n", 3)[1] else "vec2<f32>"
    fn_body = re.sub(r"prm\[(\d+)\]", lambda k: f"prm[{words + int(k.group(1))}u]", text)
    for name, _t in ins + wide:
        fn_body = re.sub(rf"\b{name}\[", f"p{name}[", fn_body)
    helpers = _BINDING.sub("", pre).strip()
    for name, _t in wide:
        helpers = re.sub(rf"\b{name}\[", f"p{name}[", helpers)
    fn = f"fn ga_src(gi: u32) -> {ret} {{\n{fn_body}\n  return {last[len('out0[gi] = '):-1]};\n}}"
    lines = pass_src.split("\n")
    if not (lines[1].startswith("@group(0) @binding(1) var<storage, read> src:")
            and lines[2].startswith("@group(0) @binding(2) var<storage, read_write> dst:")
            and lines[3].startswith("@group(0) @binding(3) var<storage, read> tw:")):
        return None
    decl = [lines[0], lines[2].replace("@binding(2)", "@binding(1)"), lines[3].replace("@binding(3)", "@binding(2)")]
    decl += [f"@group(0) @binding({3 + j}) var<storage, read> p{name}: {t};" for j, (name, t) in enumerate(ins + wide)]
    rest = "\n".join(lines[4:])
    rest, n_loads = re.subn(r"\bsrc\[min\(([^\]\[]*)\)\]", r"ga_src(min(\1))", rest)
    rest = rest.replace("let lastel = arrayLength(&src) - 1u;", f"let lastel = prm[{words}u] - 1u;")
    if n_loads == 0 or re.search(r"\bsrc\b", rest):
        return None
    return "\n".join([*decl, rest, helpers, fn]) + "\n"
