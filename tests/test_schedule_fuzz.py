"""A fuzzer of the scheduler: random programs whose values share operands, gpuarray against NumPy on both devices.

Each program starts from two arrays (a shape from a list that includes rows of one element and, now and
then, an axis past the 65535 workgroup limit; one dtype, or in a third of the programs a second input of
another) and applies three to twelve steps, each taking earlier values at random: elementwise ops and
``where``, reductions along either axis and of both (``keepdims``, so they broadcast back), reductions of
reductions, ``argmax``/``argmin``, cumulative sums, transposes, reshapes, flips, offset and strided views,
``concat``, ``matmul``, copies written through row and column views, and a heavy special function
(``stdtr``, a kernel of its own on wgpu). Some values are evaluated by
themselves midway; one to three are evaluated together at the end (``xp.evaluate(*targets)``), so fusion
meets shared reductions, absorbed reductions read elsewhere and kernels of several outputs.

The data are small integers (special values in a fifth of the float programs), so every result is exact in
any order of summation: gpuarray must give NumPy's values bit for bit (NaN where NumPy has NaN). Its first
runs (fifty-sixth session, ``probes/fuzz/dagfuzz.py``) found three scheduler bugs on wgpu, each with a test of
its own (docs/reliability.md). CI runs ``PROGRAMS`` programs a device; for more:

    GPUARRAY_SCHEDULE_FUZZ=2000 python -m pytest -q tests/test_schedule_fuzz.py
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp

PROGRAMS = int(os.environ.get("GPUARRAY_SCHEDULE_FUZZ", "200"))
SHAPES = [(7, 5), (64, 33), (3, 300), (300, 3), (1, 9), (130, 64), (33, 1)] * 8 + [(70000, 2), (2, 70000)]
DTYPES = ["float32", "float64", "int32", "float32", "int64", "uint8", "complex64"]
SECOND = ["int8", "int32", "float32", "float64", "int64", "uint8", "int16"]
UNORDERED = {"max0", "max1", "min1", "where", "argmax1", "argmin0", "clip", "cast", "heavy"}    # not for complex
Shape = tuple[int, int]
# dtype, input shape, steps (kind, operand, operand), targets, evaluated midway
Program = tuple[str, Shape, list[tuple[str, int, int]], list[int], list[bool]]


def _out_shape(k: str, a: Shape, b: Shape) -> Shape | None:
    """The shape step ``k`` gives operands of shapes ``a`` and ``b``; None where it does not apply."""
    if k in ("add", "sub", "mul", "where", "heavy"):
        try:
            out = np.broadcast_shapes(a, b)
        except ValueError:
            return None
        return out if math.prod(out) <= 1 << 20 else None     # type: ignore[return-value]
    if k == "mm":
        return (a[0], b[0]) if a[1] == b[1] <= 40 and a[0] * b[0] <= 1 << 20 else None
    if k == "cat0":
        return (a[0] + b[0], a[1]) if a[1] == b[1] else None
    if k in ("off0", "off1"):
        ax = int(k[-1])
        return None if a[ax] < 2 else ((a[0] - 1, a[1]) if ax == 0 else (a[0], a[1] - 1))
    return {"sum0": (1, a[1]), "max0": (1, a[1]), "argmin0": (1, a[1]), "sum1": (a[0], 1), "max1": (a[0], 1),
            "min1": (a[0], 1), "argmax1": (a[0], 1), "sumall": (1, 1), "T": a[::-1], "reshapeT": a[::-1],
            "slice": (len(range(0, a[0], 2)), a[1])}.get(k, a)


def program(seed: int) -> Program:
    """(dtype, input shape, steps (kind, operand, operand), targets, evaluated midway) of program ``seed``."""
    r = random.Random(seed)
    dt, shape = r.choice(DTYPES), r.choice(SHAPES)
    shapes: list[Shape] = [shape, shape]
    steps: list[tuple[str, int, int]] = []
    for _ in range(r.randint(3, 12)):
        i, j = r.randrange(len(shapes)), r.randrange(len(shapes))
        k = r.choice([*STEPS])
        if dt.startswith("complex") and k in UNORDERED:
            k = "add"
        out = _out_shape(k, shapes[i], shapes[j])
        if out is not None:
            steps.append((k, i, j))
            shapes.append(out)
    targets = sorted(r.sample(range(2, len(shapes)), min(len(shapes) - 2, r.randint(1, 3))))
    return dt, shape, steps, targets, [r.random() < 0.1 for _ in shapes]


def _copy(m: Any, a: Any) -> Any:
    return xp.asarray(a, copy=True) if m is xp else a.copy()


def _set_rows(m: Any, a: Any, b: Any) -> Any:
    v = _copy(m, a)
    v[::2] = 5
    return v


def _add_col(m: Any, a: Any, b: Any) -> Any:
    v = _copy(m, a)
    col = v[:, :1]
    col += b[:, :1] if b.shape[0] == a.shape[0] and np.result_type(a.dtype, b.dtype) == a.dtype else 1
    return v


def _heavy(m: Any, a: Any, b: Any) -> Any:
    """``a`` where ``stdtr(1, a)`` is a number, else ``b``: a heavy special function (a kernel of its own on a
    device that compiles shaders, ``compiler/schedule.HEAVY_OPS``) between its operand and later steps, exact."""
    if m is xp:
        import gpuarray.special as sp
        return xp.where(sp.stdtr(1.0, a) < 2, a, b)
    from scipy import special
    return np.where(special.stdtr(1.0, a) < 2, a, b)


def _arg(m: Any, name: str, a: Any, axis: int) -> Any:
    r = getattr(m, name)(a, axis=axis, keepdims=True)
    return xp.astype(r, a.dtype) if m is xp else r.astype(a.dtype)


STEPS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "neg": lambda m, a, b: -a, "abs": lambda m, a, b: m.abs(a), "where": lambda m, a, b: m.where(a > b, a, b),
    "clip": lambda m, a, b: m.clip(a, 0 if a.dtype.kind == "u" else -2, 2),
    "cast": lambda m, a, b: (xp.astype(xp.astype(a, xp.float64), a.dtype) if m is xp
                             else a.astype("float64").astype(a.dtype)),
    "sum0": lambda m, a, b: m.sum(a, axis=0, keepdims=True), "sum1": lambda m, a, b: m.sum(a, axis=1, keepdims=True),
    "max0": lambda m, a, b: m.max(a, axis=0, keepdims=True), "max1": lambda m, a, b: m.max(a, axis=1, keepdims=True),
    "min1": lambda m, a, b: m.min(a, axis=1, keepdims=True),
    "sumall": lambda m, a, b: m.sum(a, axis=(0, 1), keepdims=True),
    "argmax1": lambda m, a, b: _arg(m, "argmax", a, 1), "argmin0": lambda m, a, b: _arg(m, "argmin", a, 0),
    "cumsum0": lambda m, a, b: (xp.cumulative_sum(a, axis=0) if m is xp
                                else np.cumsum(a, axis=0, dtype=a.dtype if a.dtype.kind in "fc" else None)),
    "cumsum1": lambda m, a, b: (xp.cumulative_sum(a, axis=1) if m is xp
                                else np.cumsum(a, axis=1, dtype=a.dtype if a.dtype.kind in "fc" else None)),
    "T": lambda m, a, b: a.T, "reshapeT": lambda m, a, b: m.reshape(a, a.shape[::-1]),
    "flip0": lambda m, a, b: m.flip(a, axis=0), "slice": lambda m, a, b: a[::2],
    "off0": lambda m, a, b: a[1:], "off1": lambda m, a, b: a[:, 1:],
    "cat0": lambda m, a, b: xp.concat([a, b], axis=0) if m is xp else np.concatenate([a, b], axis=0),
    "mm": lambda m, a, b: a @ b.T, "setrows": _set_rows, "addcol": _add_col, "heavy": _heavy,
}


def run(m: Any, prog: Program, inputs: list[Any]) -> list[np.ndarray]:
    """Program ``prog`` on ``inputs`` with namespace ``m`` (NumPy or gpuarray): its targets, as NumPy arrays."""
    _dt, _shape, steps, targets, midway = prog
    vals = list(inputs)
    for n, (k, i, j) in enumerate(steps):
        v = STEPS[k](m, vals[i], vals[j])
        if m is xp and midway[n + 2]:
            xp.evaluate(v)
        vals.append(v)
    outs = [vals[t] for t in targets]
    if m is xp and outs:
        xp.evaluate(*outs)
    return [np.asarray(o) for o in outs]


def inputs(seed: int, prog: Program) -> list[np.ndarray]:
    dt, shape, *_ = prog
    r = np.random.default_rng(seed)
    hs = [r.integers(-3, 4, shape).astype(dt) for _ in range(2)]
    if dt.startswith("complex"):
        hs = [(h + 1j * r.integers(-3, 4, shape)).astype(dt) for h in hs]
    elif seed % 3 == 1:
        hs[1] = r.integers(0 if dt == "uint8" else -3, 4, shape).astype(SECOND[seed % 7])
    if dt.startswith("float") and seed % 5 == 0:
        for h in hs:
            if h.dtype.kind == "f":
                h.reshape(-1)[r.integers(0, h.size, max(1, h.size // 10))] = r.choice([np.nan, np.inf, -np.inf, -0.0])
    return hs


@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_programs_match_numpy(device: xp.Device, seed: int) -> None:
    prog = program(seed)
    hs, steps = inputs(seed, prog), prog[2]
    with np.errstate(all="ignore"):
        want = run(np, prog, [h.copy() for h in hs])
    with xp.config(offload="always"):
        got = run(xp, prog, [xp.asarray(h, device=device) for h in hs])
    inexact = hs[0].dtype.kind == "c" and any(k == "abs" for k, _i, _j in steps)      # hypot rounds
    for t, g, w in zip(prog[3], got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype, (t, g.dtype, g.shape, w.dtype, w.shape, steps)
        if inexact:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=str((t, steps)))
        else:
            np.testing.assert_array_equal(g, w, err_msg=str((t, steps)))
