"""WGSL for the ``fft`` kernel kind: mixed-radix Stockham passes (radices 2, 3, 4, 5, 7, 8, 11, 13).

A length ``n`` whose prime factors are all at most 13 (``smooth``) is the product of radices
``R_1 .. R_S`` (the powers of two as 8s, then a 4 or a 2: fewer stages and twiddle products than
radix 2). Stockham stage ``s`` (``p = R_1 .. R_{s-1}``, radix ``R``) gives each ``i < n / R`` one
butterfly: ``k = i mod p``; inputs ``x_r = src[i + r n / R]`` times the twiddle ``w_{pR}^{r k}``
(``w_m = exp(-+2 pi i / m)``); a length-``R`` DFT; outputs ``dst[(i - k) R + k + r p]`` (``r < R``),
so the last stage leaves natural order. Consecutive stages ``s0 ..`` with radices of product ``Rb``
(``Ns`` the ``p`` they start from) split into independent groups ``j < n / Rb`` (``b = j / Ns``,
``k' = j mod Ns``): the group's element ``r`` is at ``j + r n / Rb`` before them and element ``m`` at
``b Ns Rb + k' + Ns m`` after them, and in between its butterflies are those of a local Stockham
transform of length ``Rb`` whose stage ``l`` (local ``p_l``, ``k_l``) uses the global twiddle
``w_{Ns p_l R}^{r (k' + Ns k_l)}``. One dispatch of ``render_fft_mixed`` (a *pass*) does this for
``G = tile // Rb`` groups per workgroup in workgroup memory (laid out ``index * G + group``): a
gather, one barrier-separated round per stage (butterflies into registers, barrier, stores,
barrier), a scatter; the last pass multiplies by the normalization factor as it stores.

``mixed_plan`` splits the radices into passes: one when ``n <= tile``, otherwise the fewest passes
whose products stay within ``tile // min_groups`` (so every access moves runs of at least
``min_groups`` contiguous elements), primes packed largest first into the emptiest pass. With
8 KiB tiles (1024 complex64 / 512 complex128 points, 4 / 2 groups) 10^6 = 100 x 100 x 100 and
3 x 10^6 = 150 x 200 x 100 are three passes, 2^22 = 2^8 x 2^7 x 2^7 three (radix 8 butterflies),
a batch of 1000-point rows one. Each pass moves ``2 n`` elements through global memory plus its
twiddles.

By default the provider runs these passes as ``wgsl_fft_reg.py`` renders them (the same groups,
plan and table, loaded and stored from registers, powers of two as radices of up to 16, 2s paired
with odd primes as radices ``2 p`` where that saves a stage); this module's kernel is
``GPUARRAY_FFT_REG=0``.

The twiddles come from one table per (length, plan, direction, scale, dtype) computed on the host
in float64 from exact angles (``(r k) mod m`` over ``m``): ``w_{Ns p_l R}^{r (k' + Ns k_l)}`` is the
product of the group's factor ``w_{Ns p_l R}^{r k'}`` (per pass after the first: ``Ns`` rows of
``sum (R - 1)`` entries, copied into workgroup memory per group) and the pass's local
``w_{p_l R}^{r k_l}`` (``Rb - 1`` entries, read through the cache), so a pass reads about
``n / Rb * sum (R - 1)`` twiddles (0.11 n for 100-point groups) rather than ``n``; the
normalization factor is the table's last entry. The butterflies' own constants (``cos``/``sin`` of
``2 pi m / R``) are correctly rounded literals. Workgroup memory skips one slot in 16 (``sx``) so
that the early stages' strided stores (stride ``R G``) spread over the banks.
Batches are as in ``wgsl_fft.py``: element ``idx`` of transform ``bt`` is at
``(bt / inner) n inner + idx inner + bt mod inner``. Accuracy: a few ``eps log2(n)`` relative to
the largest magnitude (lavapipe: 2.4e-7 complex64 and 1.2e-15 complex128 at 3 x 10^6 against
NumPy in float64; ``tests/test_fft_mixed.py``). Not yet measured on the H200.

>>> src, threads = render_fft_mixed(np.dtype("complex64"), (8, 5), 25, False, True, True, True, True)
>>> mixed_plan(1000, 1024, 4), threads
([(8, 5, 5, 5)], 224)
"""

from __future__ import annotations

import functools
import math
import os
import struct

import numpy as np

from ..core.dtypes import WGSL_TYPE, real_dtype
from .wgsl_f64_trig import _c as _f64_const

PRIMES = (2, 3, 5, 7, 11, 13)
# GPUARRAY_FFT_PAIR=0: 2s stay powers of two instead of going with odd primes as radices 2 p (``_radices``)
PAIR = os.environ.get("GPUARRAY_FFT_PAIR", "1") != "0"
MAX_THREADS = 256


def smooth(n: int) -> bool:
    """Whether every prime factor of ``n`` (>= 1) is at most 13.

    >>> smooth(3 * 10**6), smooth(1_000_003)
    (True, False)
    """
    for p in PRIMES:
        while n % p == 0:
            n //= p
    return n == 1


def next_smooth(k: int) -> int:
    """The smallest ``2^a 3^b 5^c 7^d >= k`` (a length of few mixed-radix passes).

    >>> next_smooth(2 * 4097 - 1), next_smooth(2_000_005)
    (8232, 2000376)
    """
    best = 1 << max(0, k - 1).bit_length()
    p7 = 1
    while p7 < best:
        p5 = p7
        while p5 < best:
            p3 = p5
            while p3 < best:
                m = p3 << max(0, -(-k // p3) - 1).bit_length()
                best = min(best, m)
                p3 *= 3
            p5 *= 5
        p7 *= 7
    return best


def _primes(n: int) -> list[int]:
    out = []
    for p in PRIMES:
        while n % p == 0:
            out.append(p)
            n //= p
    return out


def _radices(primes: list[int], max_pow2: int = 8) -> tuple[int, ...]:
    """One pass's primes as radices: the 2s as the fewest powers of two of at most ``max_pow2``,
    balanced (``max_pow2 = 8``: 8s then a 4 or a 2, two 4s for 8 x 2; 16: 2^7 as 16 x 8), odd primes
    as themselves, largest first; where that saves stages, 2s go with odd primes ``p`` as radices
    ``2 p`` of at most ``max_pow2`` (1000 = (10, 10, 10) in three stages, not (8, 5, 5, 5) in four:
    a stage is a trip through workgroup memory; H200, complex128 4096 x 1000: 0.075 -> 0.071 ms).

    >>> _radices([2, 2, 2, 5, 5, 5], 16), _radices([2] * 7 + [5], 16), _radices([2, 3, 3], 16)
    ((10, 10, 10), (16, 8, 5), (6, 3))
    """
    e = primes.count(2)
    cap = max(1, max_pow2.bit_length() - 1)
    odd = sorted((p for p in primes if p != 2), reverse=True)
    pairable = [i for i, p in enumerate(odd) if 2 * p <= max_pow2] if PAIR else []

    def stages(j: int) -> int:
        return -(-(e - j) // cap) + len(odd)
    j = min(range(min(e, len(pairable)) + 1), key=lambda j: (stages(j), j))
    for i in pairable[len(pairable) - j:]:      # the smallest odd primes take the 2s
        odd[i] *= 2
    e -= j
    f = -(-e // cap)
    pow2 = [1 << (e // f + (i < e % f)) for i in range(f)] if e else []
    return tuple(sorted(pow2 + odd, reverse=True))


def mixed_plan(n: int, tile: int, min_groups: int, max_pow2: int = 8) -> list[tuple[int, ...]]:
    """The radices of each pass for a smooth ``n`` (``[]`` for ``n == 1``): one pass when
    ``n <= tile``, else the fewest passes of products at most ``tile // min_groups``; powers of two
    as radices of at most ``max_pow2`` (``_radices``)."""
    return list(_plan(n, tile, min_groups, max_pow2))


@functools.lru_cache(maxsize=1024)
def _plan(n: int, tile: int, min_groups: int, max_pow2: int) -> tuple[tuple[int, ...], ...]:
    primes = _primes(n)
    if not primes:
        return ()
    if n <= tile:
        return (_radices(primes, max_pow2),)
    cap = max(max(primes), tile // max(1, min_groups))
    for k in range(max(2, math.ceil(math.log(n) / math.log(cap))), len(primes) + 1):
        bins: list[list[int]] = [[] for _ in range(k)]
        prods = [1] * k
        for p in sorted(primes, reverse=True):
            fits = [b for b in range(k) if prods[b] * p <= cap]
            if not fits:
                break
            b = min(fits, key=lambda i: prods[i])
            bins[b].append(p)
            prods[b] *= p
        else:
            return tuple(_radices(b, max_pow2) for b in sorted(bins, key=lambda b: -math.prod(b)))
    raise ValueError(f"no mixed-radix plan for {n} with tile {tile}")


def table_offsets(plan: list[tuple[int, ...]]) -> tuple[list[tuple[int, int]], int]:
    """Where each pass's twiddles start in ``mixed_twiddles``'s table: ([(group part, local part)],
    the normalization factor's index)."""
    offs, at, ns = [], 0, 1
    for rads in plan:
        offa = at
        at += ns * sum(r - 1 for r in rads) if ns > 1 else 0
        offs.append((offa, at))
        at += math.prod(rads) - 1
        ns *= math.prod(rads)
    return offs, at


def mixed_twiddles(n: int, plan: list[tuple[int, ...]], inverse: bool, scale: float,
                   dtype: np.dtype) -> np.ndarray:
    """The passes' twiddles in ``dtype``, then ``scale``. A pass from ``Ns`` (> 1) first keeps, for each
    ``k' < Ns``, ``w_{Ns pl R}^{r k'}`` of its stages (``pl``: the local ``p``) and ``r = 1 .. R - 1``;
    every pass then keeps ``w_{pl R}^{r kl}`` at ``pl - 1 + kl (R - 1) + r - 1`` (``kl < pl``). Angles
    exact: ``(r k) mod m`` over ``m``, in float64."""
    sign = 1.0 if inverse else -1.0

    def w(num: np.ndarray, den: int) -> np.ndarray:
        ang = 2.0 * np.pi * (num % den).astype(np.float64) / den
        return np.cos(ang) + 1j * sign * np.sin(ang)

    parts, ns = [], 1
    for rads in plan:
        if ns > 1:
            kp = np.arange(ns, dtype=np.int64)[:, None]
            cols, pl = [], 1
            for radix in rads:
                cols.append(w(kp * np.arange(1, radix, dtype=np.int64)[None, :], ns * pl * radix))
                pl *= radix
            parts.append(np.concatenate(cols, axis=1).ravel())
        pl = 1
        for radix in rads:
            kl = np.arange(pl, dtype=np.int64)[:, None]
            parts.append(w(kl * np.arange(1, radix, dtype=np.int64)[None, :], pl * radix).ravel())
            pl *= radix
        ns *= pl
    assert ns == n
    return np.concatenate([*parts, [scale]]).astype(dtype)


def _const(v: float, f: str) -> str:
    if f == "f64":
        return _f64_const(v)
    return f"bitcast<f32>({struct.unpack('<I', struct.pack('<f', v))[0]:#010x}u)"


class _Dft:
    """Statements computing a length-``R`` DFT (sign ``s``) of named values into named values."""

    def __init__(self, t: str, f: str, s: int) -> None:
        self.t, self.f, self.s, self.count = t, f, s, 0
        self.lines: list[str] = []

    def let(self, expr: str) -> str:
        self.count += 1
        name = f"d{self.count}"
        self.lines.append(f"let {name} = {expr};")
        return name

    def rot(self, v: str, k: int, radix: int) -> str:
        """``v`` times ``exp(s 2 pi i k / radix)`` for ``8 k`` a multiple of ``radix``, else a product."""
        t, s = self.t, self.s
        if k == 0:
            return v
        if (8 * k) % radix == 0:
            e = 8 * k // radix
            h = _const(math.sqrt(0.5), self.f)
            if e == 2:
                return self.let(f"{t}({v}.y, -{v}.x)" if s < 0 else f"{t}(-{v}.y, {v}.x)")
            if e == 1:
                return self.let(f"{t}({v}.x {'+' if s < 0 else '-'} {v}.y, {v}.y {'-' if s < 0 else '+'} {v}.x) * {h}")
            if e == 3:
                return self.let(f"{t}(-{v}.x {'+' if s < 0 else '-'} {v}.y, {'-' if s < 0 else ''}{v}.x - {v}.y) * {h}")
        a = 2.0 * math.pi * k / radix
        c, sn = _const(math.cos(a), self.f), _const(s * math.sin(a), self.f)
        return self.let(f"{t}({v}.x * {c} - {v}.y * {sn}, {v}.x * {sn} + {v}.y * {c})")

    def dft(self, xs: list[str]) -> list[str]:
        radix = len(xs)
        if radix == 1:
            return xs
        if radix % 2 == 0:
            ev, od = self.dft(xs[0::2]), self.dft(xs[1::2])
            out = [""] * radix
            for k in range(radix // 2):
                w = self.rot(od[k], k, radix)
                out[k] = self.let(f"{ev[k]} + {w}")
                out[k + radix // 2] = self.let(f"{ev[k]} - {w}")
            return out
        t, f, h = self.t, self.f, (radix - 1) // 2
        a = [self.let(f"{xs[m]} + {xs[radix - m]}") for m in range(1, h + 1)]
        b = [self.let(f"{xs[m]} - {xs[radix - m]}") for m in range(1, h + 1)]
        out = [self.let(" + ".join([xs[0], *a]))] + [""] * (radix - 1)
        for k in range(1, h + 1):
            ang = [2.0 * math.pi * ((m * k) % radix) / radix for m in range(1, h + 1)]
            tk = self.let(" + ".join([xs[0]] + [f"{a[m]} * {_const(math.cos(g), f)}" for m, g in enumerate(ang)]))
            uk = self.let(" + ".join(f"{b[m]} * {_const(self.s * math.sin(g), f)}" for m, g in enumerate(ang)))
            iu = self.let(f"{t}(-{uk}.y, {uk}.x)")
            out[k] = self.let(f"{tk} + {iu}")
            out[radix - k] = self.let(f"{tk} - {iu}")
        return out


def _stage(t: str, f: str, s: int, radix: int, pl: int, rb: int, g: int, threads: int,
           local: bool, group: int) -> str:
    """One local stage (radix ``radix``, local ``p = pl``) of every group: butterflies into
    registers, barrier, stores, barrier. Twiddles: ``local``, the pass's table ``w_{pl R}^{r kl}``
    (global, at ``offb``); ``group >= 0``, the group's ``w_{Ns pl R}^{r k'}`` (in ``sa`` from
    column ``group``); their product where both."""
    flies = g * rb // radix
    count = -(-flies // threads)
    decl = [f"  var o{c}: u32;" + "".join(f" var y{c}_{r}: {t};" for r in range(radix)) for c in range(count)]
    body = []
    for c in range(count):
        d = _Dft(t, f, s)
        xs = []
        for r in range(radix):
            x = d.let(f"sh[sx((i + {r * (rb // radix)}u) * Gu + gl)]")
            if r and (local or group >= 0):
                w = d.let(f"tw[tb + {r - 1}u]") if local else ""
                if group >= 0:
                    v = d.let(f"sa[ta + {r - 1}u]")
                    w = d.let(f"{t}({v}.x * {w}.x - {v}.y * {w}.y, {v}.x * {w}.y + {v}.y * {w}.x)") if local else v
                x = d.let(f"{t}({x}.x * {w}.x - {x}.y * {w}.y, {x}.x * {w}.y + {x}.y * {w}.x)")
            xs.append(x)
        ys = d.dft(xs)
        guard = f"if (bq < {flies}u) " if flies % threads and c == count - 1 else ""
        tws = [f"let tb = offb + {pl - 1}u + kl * {radix - 1}u;"] if local else []
        tws += [f"let ta = gl * CAu + {group}u;"] if group >= 0 else []
        inner = ["let gl = bq % Gu;", "let i = bq / Gu;", f"let kl = i % {pl}u;", *tws,
                 f"o{c} = ((i - kl) * {radix}u + kl) * Gu + gl;", *d.lines,
                 *(f"y{c}_{r} = {y};" for r, y in enumerate(ys))]
        body.append(f"  {{\n    let bq = lid + {c * threads}u;\n    {guard}{{\n"
                    + "".join(f"      {ln}\n" for ln in inner) + "    }\n  }")
    stores = []
    for c in range(count):
        st = "".join(f" sh[sx(o{c} + {r * pl * g}u)] = y{c}_{r};" for r in range(radix))
        guard = f"if (lid + {c * threads}u < {flies}u) " if flies % threads and c == count - 1 else ""
        stores.append(f"  {guard}{{{st} }}")
    return "\n".join(["  {", *decl, *body, "  workgroupBarrier();", *stores, "  workgroupBarrier();", "  }"])


def workgroup_bytes(dtype: np.dtype, radices: tuple[int, ...], g: int, first: bool) -> int:
    """Workgroup memory of ``render_fft_mixed``'s pass: the elements, each group's twiddles (after the
    first pass) and three words per group."""
    size = np.dtype(dtype).itemsize
    return size * (_padded(g * math.prod(radices)) + (0 if first else g * sum(r - 1 for r in radices))) + 12 * g


def _padded(e: int) -> int:
    """Slots for ``e`` elements with one skipped every 16 (the shader's ``sx``)."""
    return e + (e - 1) // 16 if e else 0


@functools.lru_cache(maxsize=256)
def render_fft_mixed(dtype: np.dtype, radices: tuple[int, ...], g: int, inverse: bool, first: bool,
                     last: bool, load_em: bool, store_em: bool) -> tuple[str, int]:
    """One pass (``radices``, ``g`` groups per workgroup) for ``dtype``: (WGSL source, threads).

    ``prm``: [groups (total / Rb), n / Rb, inner, Ns]. ``first``: ``Ns == 1`` (the first stage needs
    no twiddles); ``last``: multiply by the table's final entry (the normalization); ``load_em`` /
    ``store_em``: consecutive threads move consecutive elements of one group (where those are adjacent
    in memory) rather than one element of consecutive groups.
    """
    t = WGSL_TYPE[dtype]
    f = WGSL_TYPE[real_dtype(dtype)]
    rb = math.prod(radices)
    e = g * rb
    ca = sum(r - 1 for r in radices)
    threads = min(MAX_THREADS, -(-max(e // r for r in radices) // 32) * 32)
    s = 1 if inverse else -1
    stages, pl, col = [], 1, 0
    for radix in radices:
        stages.append(_stage(t, f, s, radix, pl, rb, g, threads, pl > 1, -1 if first else col))
        pl *= radix
        col += radix - 1
    lsplit = "gl = e / RBu; r = e % RBu;" if load_em else "gl = e % Gu; r = e / Gu;"
    ssplit = "gl = e / RBu; m = e % RBu;" if store_em else "gl = e % Gu; m = e / Gu;"
    scale = f"\n  let sc: {f} = tw[prm[6]].x;" if last else ""
    val = "sh[sx(m * Gu + gl)] * sc" if last else "sh[sx(m * Gu + gl)]"
    sa_decl = "" if first else f"var<workgroup> sa: array<{t}, {g * ca}>;\n"
    sa_load = "" if first else f"""  for (var e = lid; e < {g * ca}u; e += {threads}u) {{
    let gl = e / CAu;
    sa[e] = tw[offa + kps[gl] * CAu + e - gl * CAu];
  }}
"""
    src = pass_head(t, e, g, threads, sa_decl, scale) + f"""{sa_load}  for (var e = lid; e < Eu; e += {threads}u) {{
    var gl: u32; var r: u32;
    {lsplit}
    let ib = gin[gl];
    if (ib != 0xffffffffu) {{ sh[sx(r * Gu + gl)] = src[ib + r * rstride]; }}
  }}
  workgroupBarrier();
{chr(10).join(stages)}
  for (var e = lid; e < Eu; e += {threads}u) {{
    var gl: u32; var m: u32;
    {ssplit}
    if (gin[gl] != 0xffffffffu) {{ dst[gout[gl] + m * mstride] = {val}; }}
  }}
}}
"""
    return (src.replace("RBu", f"{rb}u").replace("CAu", f"{ca}u").replace("Gu", f"{g}u").replace("Eu", f"{e}u"),
            threads)

def pass_head(t: str, e: int, g: int, threads: int, sa_decl: str, scale: str, extra: str = "") -> str:
    """The start of a pass's shader, shared by this module's and ``wgsl_fft_reg``'s kernels: the
    bindings, the workgroup memory (``e`` elements, ``g`` groups' input and output bases and ``k'``),
    the ``prm`` words and each group's bases computed once into workgroup memory (``extra``: more
    ``let`` lines before them). ``RBu``, ``Gu``, ``Eu``, ``CAu`` are replaced by the caller."""
    return f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<{t}>;
@group(0) @binding(2) var<storage, read_write> dst: array<{t}>;
@group(0) @binding(3) var<storage, read> tw: array<{t}>;

var<workgroup> sh: array<{t}, {_padded(e)}>;
var<workgroup> gin: array<u32, {g}>;
var<workgroup> gout: array<u32, {g}>;
var<workgroup> kps: array<u32, {g}>;
{sa_decl}
// the workgroup-memory slot of element a: one slot skipped every 16, so that the strided stores of
// the early stages (a stride of R G elements) fall in different banks
fn sx(a: u32) -> u32 {{ return a + (a >> 4u); }}

@compute @workgroup_size({threads})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
  let groups = prm[0];
  let nrb = prm[1];
  let inner = prm[2];
  let ns = prm[3];
  let offa = prm[4];
  let offb = prm[5];
  let rstride = nrb * inner;
  let mstride = ns * inner;
{extra}  let g0 = (wid.y * nwg.x + wid.x) * Gu;{scale}
  for (var gl = lid; gl < Gu; gl += {threads}u) {{
    let g = g0 + gl;
    var ib = 0xffffffffu;
    var ob = 0u;
    var kp = 0u;
    if (g < groups) {{
      var q = g;
      var lo = 0u;
      if (inner != 1u) {{ q = g / inner; lo = g - q * inner; }}
      let bt = q / nrb;
      let j = q - bt * nrb;
      let base = bt * nrb * RBu * inner + lo;
      let b = j / ns;
      kp = j - b * ns;
      ib = base + j * inner;
      ob = base + (b * ns * RBu + kp) * inner;
    }}
    gin[gl] = ib;
    gout[gl] = ob;
    kps[gl] = kp;
  }}
  workgroupBarrier();
"""
