"""A differential fuzzer: random expression programs, gpuarray against NumPy, on both devices.

A program starts from one to three input arrays (shapes that broadcast against each
other, one axis sometimes at or past the 65535 workgroup limit, any real dtype, values that
include 0, -0.0, +-inf, NaN and the integer extremes)
and applies a sequence of steps: every elementwise op in ``gpuarray.core.ops.OPS`` (on arrays
and on Python scalars, as functions and as operators), ``astype``, basic indexing and
views, reductions, ``__setitem__`` and evaluations at random points (which move the
fusion boundaries). Every value is then evaluated together and compared with NumPy.

How results are compared: integers and booleans exactly; floats within a tolerance that
the program itself earns. NumPy runs the program three times: once plainly (the
reference) and twice with every floating result (and every operand of a reduction)
multiplied by ``1 + 8 eps u`` with random ``u`` in [-1, 1], i.e. with errors larger
than the 4 ULP that each gpuarray op is allowed. Where those runs disagree with the
reference (cancellation, a comparison or a cast that flips, an overflow threshold) the
comparison allows four times their spread; elsewhere 8 ULP of the reference, NaN where
NumPy has NaN, and the sign of zero.

Where gpuarray follows the Array API rather than NumPy, the step is skipped: an op on a
dtype outside its category (``add`` on booleans), an integer power with a negative
exponent array (NumPy raises; gpuarray truncates), a float -> integer cast of NaN, inf or
out-of-range values (undefined in C and NumPy), shift counts outside [0, bits), signbit and
copysign of a NaN (its sign is not specified), sums and products whose partial results can
overflow or underflow (the order of the terms decides). When NumPy raises, gpuarray must
raise the same (builtin) exception type.

CI runs ``EXAMPLES`` programs per device (derandomized). For a longer run:

    GPUARRAY_FUZZ_EXAMPLES=2000 python -m pytest -q tests/test_fuzz.py

(random seeds then; ``GPUARRAY_FUZZ_SEED`` fixes them). docs/reliability.md records runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import gpuarray as xp  # noqa: E402
from gpuarray.core.dtypes import CATEGORIES  # noqa: E402
from gpuarray.core.ops import OPS  # noqa: E402

from .conftest import DEVICES, zero_tie_first  # noqa: E402

LONG = "GPUARRAY_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("GPUARRAY_FUZZ_EXAMPLES", "60"))

DTYPES = [np.dtype(t) for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                "uint64", "float32", "float64")]
# Ops that do not take real arguments only: complex parts are other work's subject. ldexp takes a float and
# an integer exponent (NumPy: no loop for two floats, a float16 one for two small integers):
# tests/test_ufuncs_more.py.
SKIP_OPS = frozenset({"conj", "real", "imag", "ldexp"})
# gpuarray.special's ops (expit ...) have no NumPy function to compare with: tests/test_special_ops.py; the
# internal frexp_exponent (half of numpy.frexp) is in no namespace: tests/test_ufuncs_more.py.
FUZZ_OPS = sorted(n for n in OPS if n not in SKIP_OPS and not OPS[n].module)
UNARY = [n for n in FUZZ_OPS if OPS[n].nargs == 1]
BINARY = [n for n in FUZZ_OPS if OPS[n].nargs == 2]
# NumPy's function for each op (the op table's ufunc, except where the Array API name differs in kind)
NP_FUNC: dict[str, Callable[..., Any]] = {n: getattr(np, OPS[n].ufunc) for n in FUZZ_OPS if OPS[n].ufunc}
NP_FUNC.update(round=np.round, where=np.where, fmax=zero_tie_first(np.fmax), fmin=zero_tie_first(np.fmin))
OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "subtract": lambda a, b: a - b, "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b, "floor_divide": lambda a, b: a // b, "remainder": lambda a, b: a % b,
    "pow": lambda a, b: a ** b, "bitwise_and": lambda a, b: a & b, "bitwise_or": lambda a, b: a | b,
    "bitwise_xor": lambda a, b: a ^ b, "bitwise_left_shift": lambda a, b: a << b,
    "bitwise_right_shift": lambda a, b: a >> b, "less": lambda a, b: a < b, "greater_equal": lambda a, b: a >= b,
    "equal": lambda a, b: a == b, "not_equal": lambda a, b: a != b,
}
REDUCTIONS = ("sum", "prod", "max", "min", "mean", "var", "std", "any", "all")


# ---------------------------------------------------------------- programs

@dataclass(frozen=True)
class Input:
    shape: tuple[int, ...]
    dtype: str
    seed: int
    mode: str           # "small", "wide" or "special"


@dataclass
class Program:
    inputs: list[Input]
    steps: list[tuple]
    device: str = ""

    def __repr__(self) -> str:
        lines = [f"Program on {self.device}:"] + [f"  in{k} = {i}" for k, i in enumerate(self.inputs)]
        lines += [f"  {s}" for s in self.steps]
        return "\n".join(lines)


# Sizes at the workgroup-count limit (65535 per dispatch dimension) and just past it: now and then
# one axis of a program's shape takes one of them (the other axes then have at most 2 elements).
LIMIT_SIZES = (65535, 65536, 70000)


def _shapes(draw: Any) -> list[tuple[int, ...]]:
    nd = draw(st.integers(0, 3))
    base = tuple(draw(st.sampled_from([1, 2, 3, 4, 5, 7])) for _ in range(nd))
    if nd and draw(st.integers(0, 7)) == 0:
        ax = draw(st.integers(0, nd - 1))
        big = draw(st.sampled_from(LIMIT_SIZES))
        base = tuple(big if d == ax else min(s, 2) for d, s in enumerate(base))
    if nd and draw(st.integers(0, 15)) == 0:
        base = base[:-1] + (0,)                              # an empty array now and then
    out = []
    for _ in range(draw(st.integers(1, 3))):
        drop = draw(st.integers(0, nd))
        shp = list(base[drop:])
        for d in range(len(shp)):
            if draw(st.integers(0, 3)) == 0:
                shp[d] = 1                                   # broadcast along this axis
        out.append(tuple(shp))
    return out


@st.composite
def programs(draw: Any) -> Program:
    shapes = _shapes(draw)
    inputs = [Input(s, draw(st.sampled_from([d.name for d in DTYPES])), draw(st.integers(0, 2**31 - 1)),
                    draw(st.sampled_from(["small", "small", "wide", "special"]))) for s in shapes]
    ix = st.integers(0, 63)
    scalar = st.one_of(st.booleans(), st.integers(-6, 6), st.integers(-2**40, 2**40),
                       st.floats(allow_nan=True, allow_infinity=True, width=32),
                       st.sampled_from([0.5, -0.0, 2.0, 1e-3, 3.5, -7.25, 1e30]))
    key = st.lists(st.one_of(st.tuples(st.just("int"), st.integers(-8, 8)),
                             st.tuples(st.just("slice"), st.integers(-6, 6) | st.none(), st.integers(-6, 6) | st.none(),
                                       st.sampled_from([None, 1, 2, -1, -2, 3])),
                             st.just(("none",)), st.just(("ellipsis",))), max_size=3)
    step = st.one_of(
        st.tuples(st.just("unary"), st.sampled_from(UNARY), ix),
        st.tuples(st.just("binary"), st.sampled_from(BINARY), ix, ix, st.booleans()),
        st.tuples(st.just("scalar"), st.sampled_from(BINARY), ix, scalar, st.booleans(), st.booleans()),
        st.tuples(st.just("where"), ix, ix, ix),
        st.tuples(st.just("astype"), ix, st.sampled_from([d.name for d in DTYPES])),
        st.tuples(st.just("index"), ix, key),
        st.tuples(st.just("view"), ix, st.sampled_from(["T", "flip", "expand", "squeeze", "broadcast", "ravel",
                                                        "permute", "reshape2"]), st.integers(0, 5)),
        st.tuples(st.just("reduce"), ix, st.sampled_from(REDUCTIONS), st.integers(-1, 7), st.booleans()),
        st.tuples(st.just("setitem"), ix, key, ix, st.booleans()),
        st.tuples(st.just("eval"), st.lists(ix, max_size=3)),
    )
    steps = draw(st.lists(step, min_size=1, max_size=10))
    return Program(inputs, steps)


def make_input(spec: Input) -> np.ndarray:
    rng = np.random.default_rng(spec.seed)
    dt = np.dtype(spec.dtype)
    shape = spec.shape
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if spec.mode == "small":
            lo = max(info.min, -6)
            return rng.integers(lo, 7, shape, endpoint=False).astype(dt)
        if spec.mode == "wide":
            return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
        special = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1] + ([-1, -2] if dt.kind == "i" else
                                                                                    [2, 3]), dtype=dt)
        return rng.choice(special, shape) if np.prod(shape) else np.zeros(shape, dt)
    if spec.mode == "small":
        return (rng.standard_normal(shape) * 2).astype(dt)
    if spec.mode == "wide":
        return (rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 9, shape)).astype(dt)
    fi = np.finfo(dt)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, fi.max, -fi.max, fi.tiny,
                        fi.smallest_subnormal, -fi.smallest_subnormal, 3.0, -2.5, 1e-3], dtype=dt)
    return rng.choice(special, shape) if np.prod(shape) else np.zeros(shape, dt)


# ---------------------------------------------------------------- running a program

class Skip(Exception):
    """This step is outside what gpuarray promises to match (see the module docstring)."""


@dataclass
class Runs:
    """The gpuarray values and NumPy's: the reference and the perturbed runs."""

    ga: list[Any] = field(default_factory=list)
    ref: list[np.ndarray] = field(default_factory=list)
    pert: list[list[np.ndarray]] = field(default_factory=list)


N_PERT = 2


def _perturb(v: Any, rng: np.random.Generator) -> Any:
    v = np.asarray(v)
    if v.dtype.kind != "f" or v.size == 0:
        return v
    eps = float(np.finfo(v.dtype).eps)
    with np.errstate(all="ignore"):
        return (v * (1.0 + 8 * eps * rng.uniform(-1.0, 1.0, v.shape))).astype(v.dtype)


def _index_key(spec: list[tuple], shape: tuple[int, ...]) -> tuple:
    key: list[Any] = []
    for item in spec:
        if item[0] == "int":
            key.append(item[1])
        elif item[0] == "slice":
            key.append(slice(item[1], item[2], item[3]))
        elif item[0] == "none":
            key.append(None)
        else:
            if any(k is Ellipsis for k in key):
                continue
            key.append(Ellipsis)
    return tuple(key)


def _category_ok(name: str, dtypes: list[np.dtype]) -> bool:
    members = CATEGORIES[OPS[name].category]
    return all(d in members for d in dtypes)


def _scalar_for(op: str, dt: np.dtype, value: Any) -> Any:
    """A Python scalar of a kind that the Array API allows with this array dtype."""
    if dt == np.bool_:
        return bool(value) if not isinstance(value, float) or value == value else True
    if dt.kind in "iu":
        if isinstance(value, float):
            if OPS[op].category in ("real floating", "floating-point") or OPS[op].result == "float":
                return value
            return int(value) if np.isfinite(value) and abs(value) < 2**40 else 3
        return int(value)
    return value if not isinstance(value, bool) else float(value)


def _order_check(fn: str, axis: Any, dt: np.dtype) -> Callable[..., None] | None:
    """Sums and products whose partial results can overflow or underflow: the result depends
    on the order of the terms (prod(3, tiny, max) is 12 left to right and inf as (3 * max) * tiny);
    gpuarray reduces in a tree, NumPy pairwise or left to right."""
    if fn not in ("sum", "prod", "mean", "var", "std"):
        return None
    fi = np.finfo(dt)

    def check(ra: list, *pa: list) -> None:
        for args in (ra, *pa):
            a = np.abs(np.asarray(args[0], dtype=np.float64))
            a = np.where(np.isfinite(a), a, 0.0)
            with np.errstate(all="ignore"):
                if fn == "prod":
                    lg = np.log2(a)
                    big = np.sum(np.where(lg > 0, lg, 0.0), axis=axis)
                    small = np.sum(np.where((lg < 0) & np.isfinite(lg), lg, 0.0), axis=axis)
                    if np.any(big >= np.log2(float(fi.max))) or np.any(small <= np.log2(float(fi.tiny))):
                        raise Skip
                elif np.any(np.sum(a, axis=axis) > float(fi.max) / 4) or (
                        fn in ("var", "std") and np.any(np.sum(a * a, axis=axis) > float(fi.max) / 4)):
                    raise Skip
    return check


def _nan_sign_check(k: int) -> Callable[..., None]:
    """The sign bit of a NaN is not specified: x86 makes negative NaNs (0/0 is -nan in NumPy),
    GPUs positive ones. signbit(nan) and copysign(x, nan) depend on it."""
    def check(ra: list, *pa: list) -> None:
        for args in (ra, *pa):
            c = np.asarray(args[k])
            if c.dtype.kind == "f" and np.any(np.isnan(c)):
                raise Skip
    return check


def _shift_check(dt: np.dtype, k: int) -> Callable[..., None]:
    """Shift counts below 0 or at least the bit width are undefined in C; NumPy's results
    there are an implementation detail, gpuarray's are 0 (-1 for negative >>)."""
    bits = dt.itemsize * 8

    def check(ra: list, *pa: list) -> None:
        for args in (ra, *pa):
            c = np.asarray(args[k])
            if c.dtype.kind in "iu" and np.any((c < 0) | (c >= bits)):
                raise Skip
    return check


def step(prog: Program, runs: Runs, s: tuple, device: xp.Device, rngs: list[np.random.Generator]) -> None:
    """Apply one step to every run; appends one value (or none when the step is skipped)."""
    kind = s[0]
    n = len(runs.ref)

    def pick(i: int) -> int:
        return i % n

    def apply_all(np_fn: Callable[..., Any], ga_fn: Callable[..., Any], args: list[int],
                  check: Callable[..., None] | None = None, perturb_in: bool = False) -> None:
        ref_args = [runs.ref[a] for a in args]
        pert_args = [[p[a] for a in args] for p in runs.pert]
        if perturb_in:
            pert_args = [[_perturb(v, r) for v in pa] for pa, r in zip(pert_args, rngs)]
        try:
            with np.errstate(all="ignore"):
                if check is not None:
                    check(ref_args, *pert_args)
                want = np_fn(*ref_args)
                perts = [np_fn(*pa) for pa in pert_args]
        except Skip:
            return
        except Exception as exc:  # noqa: BLE001 - NumPy refused: gpuarray must refuse alike
            base = next(t for t in type(exc).__mro__ if t.__module__ == "builtins")
            try:
                ga_fn(*[runs.ga[a] for a in args])
            except base:
                return
            except Exception as gexc:  # noqa: BLE001
                raise AssertionError(f"{s}: NumPy raised {type(exc).__name__}({exc}); gpuarray raised "
                                     f"{type(gexc).__name__}({gexc})") from gexc
            raise AssertionError(f"{s}: NumPy raised {type(exc).__name__}({exc}); gpuarray did not") from exc
        got = ga_fn(*[runs.ga[a] for a in args])
        want = np.asarray(want)
        assert isinstance(got, xp.GpuArray), f"{s}: gpuarray returned {type(got).__name__}"
        assert got.dtype == want.dtype, f"{s}: dtype {got.dtype}, NumPy {want.dtype}"
        assert got.shape == want.shape, f"{s}: shape {got.shape}, NumPy {want.shape}"
        runs.ga.append(got)
        runs.ref.append(want)
        for p, r, v in zip(runs.pert, rngs, perts):
            p.append(_perturb(v, r))

    if kind == "unary":
        _, name, i = s
        i = pick(i)
        if not _category_ok(name, [runs.ref[i].dtype]):
            return
        apply_all(NP_FUNC[name], getattr(xp, name), [i], _nan_sign_check(0) if name == "signbit" else None)
    elif kind == "binary":
        _, name, i, j, use_op = s
        i, j = pick(i), pick(j)
        if not _category_ok(name, [runs.ref[i].dtype, runs.ref[j].dtype]):
            return
        check = None
        if name == "pow" and np.result_type(runs.ref[i], runs.ref[j]).kind in "iu":
            def check(ra: list, *pa: list) -> None:      # NumPy raises for negative integer exponents
                for args in (ra, *pa):
                    if np.any(np.asarray(args[1]) < 0):
                        raise Skip
        if name in ("bitwise_left_shift", "bitwise_right_shift"):
            check = _shift_check(np.result_type(runs.ref[i], runs.ref[j]), 1)
        if name == "copysign":
            check = _nan_sign_check(1)
        fn = OPERATORS[name] if use_op and name in OPERATORS else None
        apply_all(fn or NP_FUNC[name], fn or getattr(xp, name), [i, j], check)
    elif kind == "scalar":
        _, name, i, value, reflected, use_op = s
        i = pick(i)
        dt = runs.ref[i].dtype
        if not _category_ok(name, [dt]):
            return
        v = _scalar_for(name, dt, value)
        fn = OPERATORS[name] if use_op and name in OPERATORS else None
        npf = fn or NP_FUNC[name]
        gaf = fn or getattr(xp, name)
        check = None
        if name == "pow" and reflected:
            def check(ra: list, *pa: list) -> None:      # NumPy raises for negative integer exponents
                for args in (ra, *pa):
                    if args[0].dtype.kind in "iu" and type(v) is not float and np.any(args[0] < 0):
                        raise Skip
        if name in ("bitwise_left_shift", "bitwise_right_shift"):
            if not reflected:
                bits = dt.itemsize * 8
                if type(v) is int and not 0 <= v < bits:
                    return
            else:
                check = _shift_check(dt, 0)
        if name == "pow" and not reflected and type(v) is int and v < 0 and dt.kind in "iu":
            return      # NumPy raises; gpuarray gives the truncated power (documented deviation)
        if name == "copysign":
            if not reflected and isinstance(v, float) and v != v:
                return
            check = _nan_sign_check(0) if reflected else None
        if reflected:
            apply_all(lambda a: npf(v, a), lambda a: gaf(v, a), [i], check)
        else:
            apply_all(lambda a: npf(a, v), lambda a: gaf(a, v), [i])
    elif kind == "where":
        _, c, i, j = s
        c, i, j = pick(c), pick(i), pick(j)
        if runs.ref[c].dtype != np.bool_:
            bools = [k for k, v in enumerate(runs.ref) if v.dtype == np.bool_]
            if not bools:
                return
            c = bools[c % len(bools)]
        apply_all(np.where, xp.where, [c, i, j])
    elif kind == "astype":
        _, i, dtname = s
        i = pick(i)
        dt = np.dtype(dtname)
        src = runs.ref[i].dtype
        check = None
        if src.kind == "f" and dt.kind in "iub":
            if dt.kind == "b":
                return      # float -> bool is fine, but -0.0 / NaN corner cases are covered by ops
            info = np.iinfo(dt)

            def check(ra: list, *pa: list) -> None:     # float -> int of NaN / inf / out of range: undefined
                for args in (ra, *pa):
                    v = np.asarray(args[0], dtype=np.float64)
                    if not np.all(np.isfinite(v)) or np.any(v <= info.min - 1.0) or np.any(v >= info.max + 1.0):
                        raise Skip
        apply_all(lambda a: a.astype(dt), lambda a: xp.astype(a, dt), [i], check)
    elif kind == "index":
        _, i, spec = s
        i = pick(i)
        k = _index_key(spec, runs.ref[i].shape)
        apply_all(lambda a: np.asarray(a)[k], lambda a: a[k], [i])
    elif kind == "view":
        _, i, what, p = s
        i = pick(i)
        nd = runs.ref[i].ndim
        if what == "T":
            if nd != 2:
                return
            apply_all(lambda a: a.T, lambda a: a.T, [i])
        elif what == "flip":
            ax = None if nd == 0 or p == 5 else p % nd
            apply_all(lambda a: np.flip(a, axis=ax), lambda a: xp.flip(a, axis=ax), [i])
        elif what == "expand":
            ax = p % (nd + 1)
            apply_all(lambda a: np.expand_dims(a, ax), lambda a: xp.expand_dims(a, axis=ax), [i])
        elif what == "squeeze":
            apply_all(np.squeeze, lambda a: xp.squeeze(a, axis=tuple(d for d, m in enumerate(a.shape) if m == 1)),
                      [i])
        elif what == "broadcast":
            shape = (p % 3 + 1,) + runs.ref[i].shape
            apply_all(lambda a: np.broadcast_to(a, shape), lambda a: xp.broadcast_to(a, shape), [i])
        elif what == "ravel":
            apply_all(lambda a: np.reshape(a, (-1,)), lambda a: xp.reshape(a, (-1,)), [i])
        elif what == "permute":
            perm = tuple(np.random.default_rng(p).permutation(nd))
            apply_all(lambda a: np.transpose(a, perm), lambda a: xp.permute_dims(a, perm), [i])
        else:
            size = runs.ref[i].size
            if size % 2:
                return
            apply_all(lambda a: np.reshape(a, (2, -1)), lambda a: xp.reshape(a, (2, -1)), [i])
    elif kind == "reduce":
        _, i, fn, ax, keep = s
        i = pick(i)
        a0 = runs.ref[i]
        if fn in ("mean", "var", "std") and a0.dtype.kind != "f":
            return          # the Array API defines these for floating-point arrays only
        if fn in ("sum", "prod", "max", "min") and a0.dtype == np.bool_:
            return          # numeric only in the Array API
        nd = a0.ndim
        axis: Any = None if ax < 0 or nd == 0 else (ax % nd if ax < 4 else tuple(range(nd))[: ax - 3])
        npf = getattr(np, fn)
        gaf = getattr(xp, fn)
        dt: Any = None
        if fn in ("sum", "prod") and a0.dtype.kind in "iu":
            # NumPy sums small ints in the platform int; the Array API in the default int of the kind
            dt = np.dtype("uint64") if a0.dtype.kind == "u" else np.dtype("int64")
            apply_all(lambda a: npf(a, axis=axis, keepdims=keep, dtype=dt),
                      lambda a: gaf(a, axis=axis, keepdims=keep), [i], perturb_in=True)
            return
        check = _order_check(fn, axis, a0.dtype) if a0.dtype.kind == "f" else None
        apply_all(lambda a: npf(a, axis=axis, keepdims=keep), lambda a: gaf(a, axis=axis, keepdims=keep), [i],
                  check, perturb_in=True)
    elif kind == "setitem":
        _, i, spec, j, scalar = s
        i, j = pick(i), pick(j)
        k = _index_key(spec, runs.ref[i].shape)
        dst, src = runs.ref[i].dtype, runs.ref[j].dtype
        if src != dst and not np.can_cast(src, dst, casting="same_kind"):
            return
        if src.kind == "f" and dst.kind != "f" or (src.kind in "iu" and dst.kind in "iu" and src != dst):
            return

        one = len(k) == runs.ref[i].ndim and all(isinstance(x, int) for x in k)
        if one and dst == np.bool_ and not scalar and runs.ref[j].ndim:
            return          # NumPy stores a 1-element array into one bool element (other dtypes: ValueError)

        def np_set(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            out = np.array(a, copy=True)     # a copy: the program's other steps read the old value
            out[k] = b.reshape(-1)[0] if scalar and b.size else b
            return out

        def ga_set(a: Any, b: Any) -> Any:
            out = a.copy()
            out[k] = b.reshape((-1,))[0] if scalar and b.size else b
            return out

        apply_all(np_set, ga_set, [i, j])
    elif kind == "eval":
        _, idx = s
        chosen = [runs.ga[pick(i)] for i in idx]
        if chosen:
            xp.evaluate(*chosen)
    else:  # pragma: no cover
        raise ValueError(kind)


def compare(got: np.ndarray, want: np.ndarray, perts: list[np.ndarray], what: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, f"{what}: {got.dtype}{got.shape} vs " \
                                                              f"{want.dtype}{want.shape}"
    if want.size == 0:
        return
    if want.dtype.kind != "f":
        unstable = np.zeros(want.shape, bool)
        for p in perts:
            unstable |= p != want
        bad = (got != want) & ~unstable
    else:
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        tol = np.zeros(want.shape)
        unstable = np.zeros(want.shape, bool)
        for p in perts:
            q = p.astype(np.float64)
            unstable |= (np.isnan(q) != np.isnan(w)) | (np.isinf(q) != np.isinf(w)) | (np.isinf(q) & (q != w))
            with np.errstate(invalid="ignore"):
                d = np.abs(q - w)
            tol = np.maximum(tol, np.where(np.isfinite(d), d, 0.0))
        with np.errstate(all="ignore"):
            ulp = np.spacing(np.abs(want)).astype(np.float64)
        ulp = np.where(np.isfinite(ulp), ulp, 0.0)
        with np.errstate(invalid="ignore"):
            close = np.abs(g - w) <= 4 * tol + 8 * ulp
        same_special = (np.isnan(g) & np.isnan(w)) | (g == w)
        ok = unstable | same_special | close
        zero = (w == 0) & (g == 0) & ~unstable
        for p in perts:
            zero &= np.signbit(p) == np.signbit(want)
        ok &= ~zero | (np.signbit(got) == np.signbit(want))
        bad = ~ok
    if np.any(bad):
        idx = tuple(np.argwhere(bad)[0])
        raise AssertionError(f"{what}: {int(np.sum(bad))} of {want.size} elements differ; first at {idx}: "
                             f"gpuarray {got[idx]!r}, NumPy {want[idx]!r} (perturbed: {[p[idx] for p in perts]})")


def run_program(prog: Program, dev: str) -> None:
    device = xp.Device(dev)
    prog.device = dev
    runs = Runs(pert=[[] for _ in range(N_PERT)])
    for spec in prog.inputs:
        host = make_input(spec)
        if not device.supports(host.dtype):
            continue
        runs.ga.append(xp.asarray(host, device=device))
        runs.ref.append(host)
        for p in runs.pert:
            p.append(host)
    if not runs.ref:
        return
    rngs = [np.random.default_rng(1000 + k) for k in range(N_PERT)]
    for s in prog.steps:
        step(prog, runs, s, device, rngs)
    xp.evaluate(*runs.ga)
    for k, (g, w) in enumerate(zip(runs.ga, runs.ref)):
        compare(np.asarray(g), w, [p[k] for p in runs.pert], f"value {k}")


# ---------------------------------------------------------------- the tests

_count: dict[str, int] = {}


def _settings() -> Any:
    return settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not LONG,
                    suppress_health_check=list(HealthCheck), print_blob=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # NumPy's "Mean of empty slice" and the like
@pytest.mark.parametrize("dev", DEVICES)
def test_fuzz_programs(dev: str) -> None:
    xp.Device(dev).provider  # noqa: B018 - start the provider outside the timed examples
    t0 = time.time()
    _count[dev] = 0

    @_settings()
    @given(programs())
    def check(prog: Program) -> None:
        _count[dev] += 1
        with xp.config(offload="always"):
            run_program(prog, dev)

    if LONG and os.environ.get("GPUARRAY_FUZZ_SEED"):
        check = seed(int(os.environ["GPUARRAY_FUZZ_SEED"]))(check)
    check()
    if LONG:
        print(f"\n{dev}: {_count[dev]} programs in {time.time() - t0:.1f} s")


def test_known_program_examples() -> None:
    """A few fixed programs, so that the fuzzer's own machinery is checked on every run."""
    prog = Program([Input((3, 4), "float32", 1, "special"), Input((4,), "int16", 2, "wide")],
                   [("binary", "add", 0, 1, True), ("unary", "exp", 2, ), ("reduce", 3, "max", 0, False),
                    ("index", 2, [("slice", None, None, -1)]), ("scalar", "remainder", 1, 7, True, True),
                    ("astype", 0, "int32"), ("eval", [2]), ("setitem", 2, [("int", 1)], 0, True)])
    for dev in DEVICES:
        run_program(prog, dev)
    with pytest.raises(AssertionError, match="differ"):
        compare(np.array([1.0, 2.0], np.float32), np.array([1.0, 2.5], np.float32),
                [np.array([1.0, 2.5], np.float32)], "self-test")
