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

It also keeps each float value's multiplicands (``factors``): the values a compiler could factor out of it.
Shader compilers distribute: lavapipe and the H200 turned ``a * c + b * c`` into ``(a + b) * c``, which
differs where a product is NaN or a signed zero (``0 * inf + 1 * inf`` is NaN, ``(0 + 1) * inf`` is inf;
``0 * -1 + -0 * -1`` is 0, ``(0 + -0) * -1`` is -0) and rounds differently; the renderer hides one
operand of an ``add`` or ``subtract`` whose operands share a multiplicand (``common``). A product's
factors are its operands and theirs, a negation's its operand's, a ``select``'s those both arms share
(a compiler can take the factor out of both).

>>> vn.product("v8", "v3", "v4"); vn.product("v9", "v5", "v6")
>>> sorted(vn.common("v8", "v9"))
['v3']

The terms of sums are kept alike: compilers cancel a term that a sum adds and takes away (``(b + b) - b``
came out ``b`` on lavapipe), so an ``add`` or ``subtract`` of operands that share a term is hidden too.
"""

from __future__ import annotations

import re

import numpy as np

from ..core.dtypes import WGSL_TYPE, real_dtype

_TOKEN = re.compile(r"[A-Za-z_]\w*")
_ARMS = re.compile(r"^select\((\w+), (\w+), ")
# expressions that are their first operand when their two operands are one value
_SAME_ARGS = re.compile(r"^(?:select\((\w+), (\w+), .*\)|ga_(?:maximum|minimum|fmax|fmin)_\w+\((\w+), (\w+)\))$")
_SAFE = re.compile(r"^(prm|in\d+|c[fiu](?:32|64)|ga_\w+|vec[234]|mat\d+x\d+|f32|f64|i32|u32|i64|u64|bool|bitcast|"
                   r"select|abs|min|max|x|y|z|w|u|lu|li|i|f|e|gi|lid)$")


class ValueNumbers:
    """``note`` each emitted ``let name = expr``; ``of(name)`` is its value's number (a name)."""

    __slots__ = ("num", "first", "factors", "terms", "sums")

    def __init__(self) -> None:
        self.num: dict[str, str] = {}           # numbered name -> its number (the first name of that value)
        self.first: dict[str, str] = {}         # canonical expression -> its number
        self.factors: dict[str, frozenset[str]] = {}    # name -> the numbers of its multiplicands
        self.terms: dict[str, frozenset[str]] = {}      # name (a float sum) -> the numbers of its terms
        self.sums: set[str] = set()                      # names of float and complex adds and subtracts

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
        same = _SAME_ARGS.match(expr)
        args = (same.group(1), same.group(2)) if same is not None and same.group(1) else \
            (same.group(3), same.group(4)) if same is not None else None
        if args is not None and self.of(args[0]) == self.of(args[1]):
            num[name] = self.of(args[0])        # select(x, x, c), maximum(x, x) ...: x, as compilers know
        elif ok:
            num[name] = self.first.setdefault(key, name)
        if expr.startswith("select("):
            arms = _ARMS.match(expr)
            if arms is not None:
                both = self.factors_of(arms.group(1)) & self.factors_of(arms.group(2))
                if both:
                    self.factors[name] = both

    def factors_of(self, name: str) -> frozenset[str]:
        """The numbers of the multiplicands a compiler could take out of ``name``'s value."""
        return self.factors.get(name) or self.factors.get(self.of(name), frozenset())

    def product(self, name: str, a: str, b: str) -> None:
        """``name`` is the float product ``a * b``."""
        self.factors[name] = frozenset((self.of(a), self.of(b))) | self.factors_of(a) | self.factors_of(b)

    def same_factors(self, name: str, a: str) -> None:
        """``name`` is ``+a`` or ``-a``."""
        f = self.factors_of(a)
        if f:
            self.factors[name] = f

    def float_op(self, name: str, op: str, args: list[str]) -> None:
        """``name`` is the float or complex ``op`` of ``args``: note the multiplicands of ``multiply``,
        ``square`` (``a * a``), ``positive``, ``negative`` and ``conj``, and the terms of sums."""
        if op in ("multiply", "square"):
            self.product(name, args[0], args[-1])
        elif op in ("positive", "negative", "conj"):        # (complex: each part by itself)
            self.same_factors(name, args[0])
            self.terms[name] = self.terms_of(args[0])         # -c + (c - b) cancels as c - c does
            if op != "negative" and self.is_sum(args[0]):     # conj keeps a sum's real part
                self.sums.add(name)
        elif op in ("add", "subtract"):
            self.terms[name] = self.terms_of(args[0]) | self.terms_of(args[1])
            self.sums.add(name)

    def is_sum(self, name: str) -> bool:
        """Whether ``name``'s value is a float or complex ``add`` or ``subtract`` (the H200's compiler turns
        ``a - (b - c)`` into ``a + (c - b)`` and ``-(b - c)`` into ``c - b``, which differ at b == c: -0 is
        +0 there; Vulkan does not promise signed zeros without ``SignedZeroInfNanPreserve``)."""
        return name in self.sums or self.of(name) in self.sums

    def terms_of(self, name: str) -> frozenset[str]:
        """The numbers of ``name``'s value and of the terms of the sums it is made of."""
        num = self.of(name)
        return self.terms.get(name, frozenset()) | self.terms.get(num, frozenset()) | {num}

    def common(self, a: str, b: str) -> frozenset[str]:
        """Multiplicands ``a`` and ``b`` share (a compiler could factor ``a + b``), or terms (it could cancel
        ``(b + b) - b`` to ``b``: lavapipe did, which is inf, not NaN, at b = inf)."""
        fa = self.factors_of(a)
        both = fa & self.factors_of(b) if fa else fa
        return both or (self.terms_of(a) & self.terms_of(b))

    def shares_factor(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` (a quotient's operands) have a multiplicand in common, either being one of
        the other's: the H200's compiler cancelled ``c`` in ``c / (c * k)`` and ``(x * a) / a`` (not NaN at
        c or a = 0, inf or NaN)."""
        return bool(({self.of(a)} | self.factors_of(a)) & ({self.of(b)} | self.factors_of(b)))

    def of(self, name: str) -> str:
        return self.num.get(name, name)


def opaque(v: str, dt: np.dtype, zero: str) -> str:
    """``v`` of ``dt`` with its bits xored with ``zero`` (a parameter that is 0 at run time): the same value, which
    the compiler cannot use in its algebra. (A ``select(v, v + 1, zero != 0u)`` was undone on the H200:
    ``x - select(x, x + 1, c)`` became ``select(x - x, ...)``, and ``x - x`` was folded to 0 where x is NaN.)

    >>> opaque("v3", np.dtype("float32"), "prm[2]")
    'bitcast<f32>(bitcast<u32>(v3) ^ u32(prm[2]))'
    """
    if dt == np.bool_:
        return f"(({v}) != ({zero} != 0u))"
    t = WGSL_TYPE[dt]
    wide = real_dtype(dt).itemsize == 8
    # a 64-bit zero in both halves: zero-extended, its high bits (a float64's sign and exponent) are known to be
    # v's, and the H200 folded select(L, v, isfinite(v ^ u64(z))) to v for a NaN v computed in the kernel
    z64 = f"((u64({zero}) << 32u) | u64({zero}))"
    if dt.kind in "iu":
        return f"(({v}) ^ {t}({z64 if wide else zero}))"
    bits, z = ("u64", z64) if wide else ("u32", f"u32({zero})")
    if dt.kind == "c":
        return f"bitcast<{t}>(bitcast<vec2<{bits}>>({v}) ^ vec2<{bits}>({z}))"
    return f"bitcast<{t}>(bitcast<{bits}>({v}) ^ {z})"
