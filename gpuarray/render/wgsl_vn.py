"""Value numbers of a kernel's SSA values: which ``let`` names hold the same value.

Shader compilers merge equal expressions and then fold ``x - x`` to 0, ``x / x`` to 1 (wrong at inf and
NaN); the renderer writes such operations specially (``render/wgsl.py``), so it must know when two names
are equal although they were emitted apart (``real`` of two views of one broadcast constant: ``let v3 =
v2.x;`` and ``let v6 = v2.x;``). A name gets the number of the first name whose expression, with names
replaced by their numbers, reads the same; only expressions of numbered names, parameters, inputs (read-only
bindings: the same index reads the same value), literals, casts, swizzles and the pure ``ga_`` helpers are
numbered, anything else (workgroup memory, outputs, atomics, loop variables) stays its own.

>>> vn = ValueNumbers()
>>> vn.note("v2", "vec2<f32>(bitcast<f32>(prm[3]), bitcast<f32>(prm[4]))")
>>> vn.note("v3", "v2.x"); vn.note("v6", "v2.x"); vn.note("v7", "out0[gi]")
>>> vn.of("v6"), vn.of("v7")
('v3', 'v7')
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[A-Za-z_]\w*")
_SAFE = re.compile(r"^(prm|in\d+|c[fiu](?:32|64)|ga_\w+|vec[234]|mat\d+x\d+|f32|f64|i32|u32|i64|u64|bool|bitcast|"
                   r"select|abs|min|max|x|y|z|w|u|lu|li|i|f|e|gi|lid)$")


class ValueNumbers:
    """``note`` each emitted ``let name = expr``; ``of(name)`` is its value's number (a name)."""

    __slots__ = ("num", "first")

    def __init__(self) -> None:
        self.num: dict[str, str] = {}           # numbered name -> its number (the first name of that value)
        self.first: dict[str, str] = {}         # canonical expression -> its number

    def note(self, name: str, expr: str) -> None:
        num = self.num
        ok = True

        def sub(m: re.Match) -> str:
            nonlocal ok
            t = m.group(0)
            n = num.get(t)
            if n is not None:
                return "#" + n
            if not _SAFE.match(t):
                ok = False
            return t

        key = _TOKEN.sub(sub, expr)
        if ok:
            num[name] = self.first.setdefault(key, name)

    def of(self, name: str) -> str:
        return self.num.get(name, name)
