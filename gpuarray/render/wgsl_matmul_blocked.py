"""Render a float32 or float64 ``matmul`` kernel as a register-blocked WGSL shader (vec4 shared tiles).

The generic tiled kernel (``wgsl_matmul.py``) reads one scalar of each operand
from shared memory per multiply-add. This one is built for large float32
products:

- one workgroup computes a ``BM x BN`` output tile with ``(BM / TM) * (BN / TN)``
  threads; each thread keeps ``TM x TN`` accumulators (``TM, TN`` in {4, 8}) as
  ``vec4<f32>`` registers and updates them with outer products of registers;
- both shared tiles are stored ``k``-major as ``vec4<f32>`` (``As[k][m]``:
  the A tile transposed; ``Bs[k][n]``), so per ``k`` a thread reads ``TM / 4 +
  TN / 4`` vec4 words for ``TM * TN`` multiply-adds. A thread's rows are
  ``h * BM / (TM / 4) + 4 * ty + i`` (and likewise its columns), so a warp
  reads neighbouring words;
- the ``K`` loop is double buffered (``nbuf = 2``): the next tile is loaded from
  global memory into registers while the current one is multiplied, then
  stored into the other shared buffer; one barrier per tile. The loop body is
  written out once per buffer so that every shared-memory index is a constant
  plus the thread's position, and the ``BK`` steps are unrolled;
- operand loads have three modes, chosen per operand at dispatch time
  (``modes``; they are part of the pipeline key):

  ``vk``  the operand is a plain float32 buffer (or a strided view of one) that
          is contiguous along ``K``: one ``vec4`` load gives 4 ``k`` values of
          one row, stored as 4 scalars into the transposed tile;
  ``vo``  contiguous along the other dimension (``M`` for a transposed A, ``N``
          for a row-major B): one ``vec4`` load gives 4 rows or columns,
          stored as one ``vec4``;
  ``s``   anything else (a fused prologue, an odd stride or size): 4 scalars
          evaluated through the prologue at their indices, like the generic
          kernel, stored as one ``vec4``.

  The vector modes need offsets, strides and the vector dimension's length to
  be multiples of 4; their strides come from ``prm`` extras (``a_off``,
  ``a_st``, ``a_b<d>`` ..., in units of 4 elements).

Bounds: rows and columns past ``M`` / ``N`` are clamped to the last valid
ones (they only feed outputs that are not stored); ``k`` past ``K`` reads
zeros on both sides, so any ``M``, ``N``, ``K`` works. ``vec_out`` stores
``vec4`` results when ``N`` is a multiple of 4. A fused epilogue
(``Kernel.result_index``) is evaluated per element at its (batch, row,
column) coordinates before the store (``vec4`` stores where every output is
float32).

float64 kernels are the same with ``f64`` registers and ``vec4<f64>`` shared tiles and loads
(twice the shared memory; ``vec4`` means 32 bytes there, and the vector modes' conditions are in
elements, so they carry over).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..compiler.kernel import Kernel
from ..core.dtypes import WGSL_TYPE
from .wgsl import Rendered, _Gen
from .wgsl_lib import helpers_for
from .wgsl_matmul import epilogue_lines, epilogue_multi, tile_grid, touch_unused, triangle_row
from .wgsl_parts import declare_bindings, epilogue_values, input_types, output_types

MODES = ("vk", "vo", "s")
QUAD_STORES = os.environ.get("GPUARRAY_MM_QUAD", "1") != "0"
BLOCKED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@dataclass(frozen=True)
class BlockTiles:
    """Register-blocked tiles: workgroup tile ``bm x bn``, K step ``bk``, ``tm x tn`` outputs per thread,
    ``nbuf`` shared buffers (2: double buffering).

    ``wx`` arranges each warp's 32 threads as ``wx x (32 / wx)`` in the thread grid (8: 8 x 4, as
    CUTLASS does, so a warp's vec4 shared reads touch 4 A words and 8 B words); 0 lays threads
    out row by row (a 16-wide grid puts 2 rows and 16 columns in a warp).

    ``gram``: a product ``X^T X`` whose output is one tile (``M = N <= bm``, both operands read from
    the same data): only the ``4 x 4`` blocks on and above the diagonal are computed, by one thread
    each, from one shared tile, and each block off the diagonal is also stored transposed below it
    (half the multiply-adds and half the shared tile of the full tile).

    ``upper``: a product ``X^T X`` of several tiles (``M = N``, the same data on both sides): only the
    tiles on and above the diagonal are computed (``tile_grid(upper=True)``), and each off the
    diagonal is also stored transposed below it.
    """

    bm: int = 128
    bn: int = 128
    bk: int = 8
    tm: int = 8
    tn: int = 8
    nbuf: int = 2
    wx: int = 8
    gram: bool = False
    upper: bool = False

    @property
    def threads(self) -> int:
        if self.gram:                     # the blocks on and above the diagonal
            side = self.bm // self.tm
            return side * (side + 1) // 2
        return (self.bm // self.tm) * (self.bn // self.tn)

    @property
    def smem_bytes(self) -> int:
        """Shared memory of a float32 kernel (float64: twice as much)."""
        return self.nbuf * self.bk * (self.bm + (0 if self.gram else self.bn)) * 4

    @property
    def name(self) -> str:
        lanes = "" if self.wx == 8 else "_r" if self.wx == 0 else f"_w{self.wx}"
        sym = ("_g" if self.gram else "") + ("_u" if self.upper else "")
        return f"b{self.bm}x{self.bn}x{self.bk}_{self.tm}x{self.tn}_{self.nbuf}{lanes}{sym}"

    def check(self) -> None:
        def pow2(v: int) -> bool:
            return v > 0 and v & (v - 1) == 0
        if self.upper and (self.gram or self.bm != self.bn):
            raise ValueError(f"upper tiles {self.bm}x{self.bn}: expected a square tile, not gram")
        # (8 x 8 per thread rendered right but was no faster on the H200: float64 0.59-0.66 ms of GPU time
        # for (2^20 x 64)^T (2^20 x 64) against 0.61-0.62 with 4 x 4, float32 0.34-0.44 against 0.24-0.29)
        if self.gram and (self.bm != self.bn or self.tm != 4 or self.tn != 4 or self.wx):
            raise ValueError(f"gram tiles {self.bm}x{self.bn}, {self.tm}x{self.tn} per thread, warp layout "
                             f"{self.wx}: expected a square tile, 4x4 per thread, rows in order (wx 0)")
        if self.tm not in (4, 8, 16) or self.tn not in (4, 8, 16) or self.tm * self.tn > 128:
            raise ValueError(f"per-thread tile {self.tm}x{self.tn}: each must be 4, 8 or 16, "
                             "at most 128 outputs a thread")
        if not all(pow2(v) for v in (self.bm, self.bn, self.bk)) or self.bk < 4:
            raise ValueError(f"tile {self.bm}x{self.bn}x{self.bk}: sizes must be powers of two, bk >= 4")
        if self.bm % self.tm or self.bn % self.tn:
            raise ValueError(f"tile {self.bm}x{self.bn} is not a multiple of the per-thread {self.tm}x{self.tn}")
        if not 32 <= self.threads <= 1024:
            raise ValueError(f"{self.threads} threads per workgroup; expected 32..1024")
        tx, ty = self.bn // self.tn, self.bm // self.tm
        if self.wx and (self.wx not in (1, 2, 4, 8, 16, 32) or tx % self.wx or ty % (32 // self.wx)
                        or self.threads % 32):
            raise ValueError(f"warp layout {self.wx}x{32 // max(self.wx, 1)} does not tile the {tx}x{ty} threads")
        if self.nbuf not in (1, 2):
            raise ValueError("nbuf must be 1 or 2")


class _Operand:
    """Load code for one operand into the k-major vec4 shared tile ``S[k][o]``."""

    def __init__(self, g: _Gen, t: BlockTiles, which: str, op_i: int, mode: str, batch: list[str]) -> None:
        self.g, self.t, self.which, self.op_i, self.mode, self.batch = g, t, which, op_i, mode, batch
        self.T = WGSL_TYPE[g.k.result_dtype]               # f32 or f64
        self.bo = t.bm if which == "a" else t.bn           # tile length along the outer dimension
        self.S = "As" if which == "a" else "Bs"
        self.O = "M" if which == "a" else "N"
        self.o0 = "m0" if which == "a" else "n0"
        self.groups = t.bk * self.bo // 4                 # vec4 groups per tile
        self.nl = -(-self.groups // t.threads)            # groups per thread
        self.partial = self.groups % t.threads != 0
        # vk tiles stored as vec4 words: each thread loads the same 4 k values of 4 consecutive rows and
        # stores their 4 x 4 transpose (``quad``); otherwise 4 scalar stores a load, which 8 threads of
        # a warp make into one bank (8-way conflicts, on the path between the K loop's two barriers)
        self.quad = (QUAD_STORES and mode == "vk" and self.nl % 4 == 0 and not self.partial
                     and (self.bo // 4) % 8 == 0 and t.threads % 8 == 0)
        self.buf = ""                                      # the vec4 binding read by the vector modes
        if mode != "s":
            ins = g.ins[op_i]
            src = ins.args[0] if ins.op == "view" else op_i
            self.buf = f"in{g.ins[src].params[0]}"

    def _guard(self, lines: list[str], li: int) -> list[str]:
        if self.partial and (li + 1) * self.t.threads > self.groups:
            return [f"if (lid < {self.groups - li * self.t.threads}u) {{", *["  " + x for x in lines], "}"]
        return lines

    def reg(self, li: int) -> str:
        return f"r{self.which}{li}"

    def hoisted(self) -> list[str]:
        """Per-thread constants of the K loop (clamped rows / columns and base indices)."""
        t, w = self.t, self.which
        out: list[str] = []
        if self.mode == "s":
            return out
        boff = [f"{self.g.slot(('extra', f'{w}_off'))}"]
        boff += [f"{b} * {self.g.slot(('extra', f'{w}_b{d}'))}" for d, b in enumerate(self.batch)]
        out.append(f"let {w}_base = {' + '.join(boff)};")
        out.append(f"let {w}_st = {self.g.slot(('extra', f'{w}_st'))};")
        for li in range(self.nl):
            gi = f"({li * t.threads}u + lid)"
            if self.mode == "vo":
                out.append(f"let {w}_kr{li} = {gi} / {self.bo // 4}u;")
                o = f"{self.o0} + 4u * ({gi} % {self.bo // 4}u)"
                out.append(f"let {w}_x{li} = {w}_base + min({o}, {self.O} - 4u) / 4u;")
            elif self.quad:     # register li = 4 q + i: row 4 j + i of quad slot q, k values kc .. kc + 3
                q, i = divmod(li, 4)
                if i == 0:      # in a group of 8 threads consecutive row quads, so their stores take no bank twice
                    sq = f"({q * t.threads}u + lid)"
                    out.append(f"let {w}_kc{li} = 4u * (({sq} / 8u) % {t.bk // 4}u);")
                    out.append(f"let {w}_j{q} = {sq} % 8u + 8u * ({sq} / {2 * t.bk}u);")
                else:
                    out.append(f"let {w}_kc{li} = {w}_kc{4 * q};")
                out.append(f"let {w}_x{li} = {w}_base + min({self.o0} + 4u * {w}_j{q} + {i}u, {self.O} - 1u) * {w}_st;")
            else:    # vk: the group is 4 k values of one row
                out.append(f"let {w}_kc{li} = 4u * ({gi} % {t.bk // 4}u);")
                out.append(f"let {w}_r{li} = {gi} / {t.bk // 4}u;")
                out.append(f"let {w}_x{li} = {w}_base + min({self.o0} + {w}_r{li}, {self.O} - 1u) * {w}_st;")
        return out

    def load(self, k0: str) -> list[str]:
        """Global loads of the tile starting at ``k0`` into the registers ``r<which><l>``."""
        w = self.which
        out = ["{", f"  let k0 = {k0};"]
        for li in range(self.nl):
            r = self.reg(li)
            body: list[str]
            if self.mode == "vo":
                body = [f"let kq = k0 + {w}_kr{li};",
                        f"let v = {self.buf}[{w}_x{li} + min(kq, K - 1u) * {w}_st];",
                        f"{r} = select(vec4<{self.T}>(0.0), v, kq < K);"]
            elif self.mode == "vk":
                body = [f"let kq = k0 + {w}_kc{li};",
                        f"let v = {self.buf}[{w}_x{li} + min(kq, K - 4u) / 4u];",
                        f"{r} = select(vec4<{self.T}>(0.0), v, kq < K);"]
            else:
                body = self._scalar_load(li, r)
            out += ["  " + x for x in self._guard(["{", *["  " + x for x in body], "}"], li)]
        return out + ["}"]

    def _scalar_load(self, li: int, r: str) -> list[str]:
        """Four elements through the fused prologue (zero outside the matrix)."""
        t, g = self.t, self.g
        gi = f"({li * t.threads}u + lid)"
        out = [f"let kq = k0 + {gi} / {self.bo // 4}u;",
               f"let oq = {self.o0} + 4u * ({gi} % {self.bo // 4}u);",
               f"{r} = vec4<{self.T}>(0.0);"]
        for e in range(4):
            g.memo = {}
            g.lines = []
            row, col = ("oe", "kq") if self.which == "a" else ("kq", "oe")
            v = g.value(self.op_i, ("multi", (*self.batch, row, col)))
            out += [f"if (oq + {e}u < {self.O} && kq < K) {{",
                    f"  let oe = oq + {e}u;",
                    *["  " + x.strip() for x in g.lines],
                    f"  {r}[{e}] = {v};",
                    "}"]
        return out

    def store(self, buf: int) -> list[str]:
        """Stores of the registers into shared buffer ``buf``."""
        t, w = self.t, self.which
        base = buf * t.bk * self.bo // 4
        out: list[str] = []
        if self.quad:
            for q in range(self.nl // 4):
                regs = [self.reg(4 * q + i) for i in range(4)]
                out += [f"{self.S}[{base}u + ({w}_kc{4 * q} + {i}u) * {self.bo // 4}u + {w}_j{q}] = "
                        f"vec4<{self.T}>({', '.join(f'{r}[{i}]' for r in regs)});" for i in range(4)]
            return out
        for li in range(self.nl):
            r = self.reg(li)
            if self.mode == "vk":
                lines = [f"{self.S}[{base}u + ({w}_kc{li} + {i}u) * {self.bo // 4}u + {w}_r{li} / 4u][{w}_r{li} & 3u]"
                         f" = {r}[{i}];" for i in range(4)]
            else:
                lines = [f"{self.S}[{base + li * t.threads}u + lid] = {r};"]
            out += self._guard(lines, li)
        return out


def _thread_position(t: BlockTiles, TX: int, TY: int) -> list[str]:   # noqa: N803
    """``tx``, ``ty``: the thread's column and row in the thread grid (masked, so that the compiler
    knows their range and can drop naga's clamps of the shared-memory indices)."""
    if not t.wx:
        return [f"let tx = lid % {TX}u;", f"let ty = (lid / {TX}u) % {TY}u;"]
    wy, nwx = 32 // t.wx, TX // t.wx
    return ["let lane = lid % 32u;", "let warp = lid / 32u;",
            f"let tx = ((warp % {nwx}u) * {t.wx}u + lane % {t.wx}u) % {TX}u;",
            f"let ty = ((warp / {nwx}u) * {wy}u + lane / {t.wx}u) % {TY}u;"]


def _gram_position(side: int) -> list[str]:
    """``ty <= tx``: thread ``lid``'s block of the ``side x side`` blocks on and above the diagonal, row
    by row (masked, as ``_thread_position``'s)."""
    return ["var rest = lid;", *triangle_row("ty", "rest", f"{side}u"),
            f"ty = ty % {side}u;", f"let tx = (ty + rest) % {side}u;"]


def render_matmul_blocked(kernel: Kernel, t: BlockTiles, modes: tuple[str, str] = ("s", "s"),
                          vec_out: bool = False, split: bool = False) -> Rendered:
    """WGSL for a float32 ``matmul`` kernel; ``prm`` extras: GM, GN (tiles), NG (workgroups), and for
    each operand in a vector mode ``<x>_off``, ``<x>_st`` and ``<x>_b<d>`` (in vec4 units).

    With ``split``, the first pass of a split-K product (``wgsl_matmul.tile_grid``): partial sums
    to one float32 output, no epilogue (extras GT, KC, TS)."""
    t.check()
    if any(m not in MODES for m in modes):
        raise ValueError(f"operand modes {modes}; expected {MODES}")
    ai, bi = kernel.operands
    a = kernel.instrs[ai]
    if kernel.result_dtype not in BLOCKED_DTYPES:
        raise ValueError(f"the register-blocked matmul kernel is float32 and float64 only; got {kernel.result_dtype}")
    T = WGSL_TYPE[kernel.result_dtype]      # noqa: N806
    nb = len(a.shape) - 2
    g = _Gen(kernel)
    TX, TY = t.bn // t.tn, t.bm // t.tm
    HM, HN = t.tm // 4, t.tn // 4
    head, batch = tile_grid(g, nb, t.bm, t.bn, split, t.upper)
    head += [*(_gram_position(TY) if t.gram else _thread_position(t, TX, TY)),
             f"let nt = (K - klo + {t.bk - 1}u) / {t.bk}u;"]
    ops = [_Operand(g, t, "a", ai, modes[0], batch)]
    if not t.gram:                      # gram: B's tile is A's (the same data, the same one tile)
        ops.append(_Operand(g, t, "b", bi, modes[1], batch))
    for o in ops:
        head += o.hoisted()
        head += [f"var {o.reg(li)}: vec4<{T}>;" for li in range(o.nl)]
    acc = [[[f"c{h}_{i}_{h2}" for h2 in range(HN)] for i in range(4)] for h in range(HM)]
    head += [f"var {acc[h][i][h2]} = vec4<{T}>(0.0);" for h in range(HM) for i in range(4) for h2 in range(HN)]

    def compute(buf: int) -> list[str]:
        sa, sb = buf * t.bk * t.bm // 4, buf * t.bk * t.bn // 4
        out = []
        for kk in range(t.bk):
            out.append("{")
            out += [f"  let fa{h} = As[{sa + kk * t.bm // 4 + h * TY}u + ty];" for h in range(HM)]
            if t.gram:
                out += [f"  let fb{h} = As[{sa + kk * t.bm // 4 + h * TX}u + tx];" for h in range(HN)]
            else:
                out += [f"  let fb{h} = Bs[{sb + kk * t.bn // 4 + h * TX}u + tx];" for h in range(HN)]
            for h in range(HM):
                for i in range(4):
                    for h2 in range(HN):
                        c = acc[h][i][h2]
                        out.append(f"  {c} = fma(vec4<{T}>(fa{h}[{i}]), fb{h2}, {c});")
            out.append("}")
        return out

    def load_all(k0: str) -> list[str]:
        return [x for o in ops for x in o.load(k0)]

    def store_all(buf: int) -> list[str]:
        return [x for o in ops for x in o.store(buf)]

    def step(buf: int) -> list[str]:
        nxt = (buf + 1) % t.nbuf
        lines = ["{", "if (t >= nt) { break; }",
                 "let more = t + 1u < nt;",
                 "if (more) {", *["  " + x for x in load_all(f"klo + (t + 1u) * {t.bk}u")], "}",
                 *compute(buf)]
        if t.nbuf == 1:
            lines.append("workgroupBarrier();")
        lines += ["if (more) {", *["  " + x for x in store_all(nxt)], "}",
                  "workgroupBarrier();",
                  "t = t + 1u;", "}"]
        return lines

    body = [*head,
            "if (nt > 0u) {", *["  " + x for x in load_all("klo") + store_all(0)], "}",
            "workgroupBarrier();",
            "var t = 0u;",
            "loop {", *["  " + x for b in range(t.nbuf) for x in step(b)], "}"]
    body.append("let obase = bat * M * N" + (f" + sp * {g.slot(('extra', 'TS'))};" if split else ";"))
    for h in range(HM):
        for i in range(4):
            body.append(f"let om{h}_{i} = m0 + {h * TY * 4 + i}u + 4u * ty;")
    for h2 in range(HN):
        body.append(f"let on{h2} = n0 + {h2 * TX * 4}u + 4u * tx;")
    out_types = [T] if split else output_types(kernel)
    epi = kernel.result_index is not None and not split
    vec_out = vec_out and all(ot == T for ot in out_types)
    def store(m: str, n: str, c: str) -> list[str]:
        if epi:
            return _epilogue_store(g, kernel, batch, nb, m, n, c, vec_out)
        if vec_out:
            return [f"if ({m} < M && {n} < N) {{ out0[(obase + {m} * N + {n}) / 4u] = {c}; }}"]
        return [f"if ({m} < M && {n} + {j}u < N) {{ out0[obase + {m} * N + {n} + {j}u] = {c}[{j}]; }}"
                for j in range(4)]

    for h in range(HM):
        for i in range(4):
            for h2 in range(HN):
                body += store(f"om{h}_{i}", f"on{h2}", acc[h][i][h2])
    def mirror(h: int, h2: int) -> list[str]:
        """The 4 x 4 block (h, h2) of this thread stored transposed."""
        out = []
        for j in range(4):
            col = ", ".join(f"{acc[h][i][h2]}[{j}]" for i in range(4))
            out += [f"let omu{h}_{h2}_{j} = on{h2} + {j}u;", f"let cu{h}_{h2}_{j} = vec4<{T}>({col});",
                    *store(f"omu{h}_{h2}_{j}", f"om{h}_0", f"cu{h}_{h2}_{j}")]
        return out

    if t.upper:                         # the tile below the diagonal: this one transposed
        body += ["if (tcol != trow) {", *["  " + x for h in range(HM) for h2 in range(HN) for x in mirror(h, h2)], "}"]
    if t.gram:                          # the blocks below the diagonal: these transposed
        for h in range(HM):
            for h2 in range(HN):
                lines = mirror(h, h2)
                if h == h2:             # row group h TY + ty against column group h TX + tx (TX == TY)
                    lines = ["if (tx != ty) {", *["  " + x for x in lines], "}"]
                body += ["{", *["  " + x for x in lines], "}"]
    types = input_types(kernel)
    for o in ops:
        if o.mode != "s":
            types[int(o.buf[2:])] = f"vec4<{T}>"
    decls = declare_bindings(types, [f"vec4<{ot}>" if vec_out else ot for ot in out_types], g.wide)
    decls.append(f"var<workgroup> As: array<vec4<{T}>, {t.nbuf * t.bk * t.bm // 4}>;")
    if not t.gram:
        decls.append(f"var<workgroup> Bs: array<vec4<{T}>, {t.nbuf * t.bk * t.bn // 4}>;")
    if split:
        body = touch_unused(decls, body) + body
    main = "\n".join([
        f"@compute @workgroup_size({t.threads})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        *["  " + x for x in body],
        "}",
    ])
    source = "\n".join(decls) + "\n\n" + helpers_for(main) + "\n\n" + main + "\n"
    return Rendered(source, sorted(g.slots, key=lambda sp: g.slots[sp]), g.wide, len(kernel.inputs),
                    len(out_types))


def _epilogue_store(g: _Gen, kernel: Kernel, batch: list[str], nb: int, m: str, n: str, c: str,
                    vec_out: bool) -> list[str]:
    """The fused epilogue of the 4 outputs in columns ``n .. n+3`` of row ``m`` (accumulators ``c``):
    evaluated per element; stored as one ``vec4`` per output with ``vec_out`` (float32 outputs)."""
    if not vec_out:
        out = []
        for j in range(4):
            out += [f"if ({m} < M && {n} + {j}u < N) {{", f"  let eo = obase + {m} * N + {n} + {j}u;",
                    f"  let en = {n} + {j}u;", *epilogue_lines(g, f"{c}[{j}]", "eo", (*batch, m, "en"), nb, 2), "}"]
        return out
    lanes: list[list[str]] = []
    lines = [f"if ({m} < M && {n} < N) {{", f"  let eb = obase + {m} * N + {n};"]
    for j in range(4):
        lines += [f"  let eo{j} = eb + {j}u;", f"  let en{j} = {n} + {j}u;"]
        el, vals = epilogue_values(g, f"{c}[{j}]", f"eo{j}", epilogue_multi(g, (*batch, m, f"en{j}"), nb))
        lines += ["  " + ln for ln in el]
        lanes.append(vals)
    for k in range(len(kernel.outputs)):
        vt = f"vec4<{WGSL_TYPE[kernel.result_dtype]}>"
        lines.append(f"  out{k}[eb / 4u] = {vt}({', '.join(lanes[j][k] for j in range(4))});")
    return lines + ["}"]
