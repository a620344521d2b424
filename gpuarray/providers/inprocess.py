"""The in-process provider: runs kernel plans with NumPy on the host.

It is the fallback where no GPU is present and the oracle the tests compare
the wgpu provider against. Handles are read-only host arrays.

>>> import numpy as np
>>> from gpuarray.graph import leaf, make
>>> from gpuarray.compiler import schedule
>>> a = leaf(np.arange(3.0), "cpu")
>>> k = schedule([make("square", (a,), a.dtype, a.shape)])[0]
>>> run_kernel(k, [a.data.get_host()])[0]
array([0., 1., 4.])
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..compiler import regions
from ..compiler.kernel import INDEX_OPS, Instr, Kernel
from ..core.dtypes import ALL_DTYPES
from ..core.ops import OPS, folded
from ..graph.node import Node
from .host_cast import cast
from .host_index import host_index, host_scatter, strided
from .host_linalg import LINALG_HOST_KINDS
from .host_random import host_random
from .host_select import host_select
from .host_sort import HOST_SORT_KINDS

# Elements per block of a fused kernel: its scratch (one block per instruction) stays near
# SCRATCH_BYTES, and blocks are never shorter than MIN_CHUNK (each block costs a few Python calls per
# instruction, taken under the GIL while the other threads' NumPy loops run). 4 MiB, not a core's L2 (1
# MiB before): on the 2-core development machine (1 MiB L2 a core, 32 MiB L3), chain8 of 2^22 float32 with
# two threads took 12-17.5 ms with 1 MiB, 8.4-9.3 with 4, 8.2-8.3 with 8, 11.7 with 16 (NumPy 22.4); 2^24
# 51-68 -> 32-34 (112); x * 2 + 1 of 2^22 0.87 -> 0.75
SCRATCH_BYTES = 1 << 22
MIN_CHUNK = 1 << 14
CHUNK = MIN_CHUNK       # kernels larger than this take the blocked path (run_kernel)
# Scratch blocks are kept per thread for the next kernel of the same block layout (the SCRATCH_KEPT
# layouts used last): fresh memory costs a page fault per 4 KiB at its first write, which on the
# development machine (a VM) made chain8 of 2^16 float32 take 1.15 ms against NumPy's 0.27 (0.32 ms
# once the blocks are kept; the output is new memory every call, as NumPy's is).
SCRATCH_KEPT = 8
_local = threading.local()
# Fused kernels of PARALLEL_MIN elements or more are split over THREADS threads (the caller and a pool;
# NumPy's loops release the GIL): GPUARRAY_CPU_THREADS, default the cores this process may run on, up to 8;
# 1: none.
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
THREADS = max(1, int(os.environ.get("GPUARRAY_CPU_THREADS", "0") or 0) or min(_CORES, 8))
PARALLEL_MIN = 1 << 20
_workers: ThreadPoolExecutor | None = None
_workers_pid = 0


def _pool() -> ThreadPoolExecutor:
    """The worker threads of fused host kernels (``THREADS - 1``; the calling thread is the other); a new
    pool in a forked child, whose copy of the parent's has no threads."""
    global _workers, _workers_pid
    if _workers is None or _workers_pid != os.getpid():
        _workers = ThreadPoolExecutor(max_workers=THREADS - 1, thread_name_prefix="gpuarray-host")
        _workers_pid = os.getpid()
    return _workers


def _parts(n: int, chunk: int) -> list[tuple[int, int]]:
    """Element ranges of ``n`` for the threads: one range below ``PARALLEL_MIN`` elements (or with one
    thread), else ``THREADS`` ranges of whole blocks (of ``chunk``, or of ``n / THREADS``
    where that is less: a kernel of one operation is one block)."""
    if THREADS < 2 or n < PARALLEL_MIN:
        return [(0, n)]
    per = -(-n // THREADS)
    if per > chunk:
        per = -(-per // chunk) * chunk
    per = -(-per // 64) * 64            # whole cache lines for every dtype
    return [(lo, min(n, lo + per)) for lo in range(0, n, per)]


def _scratch(specs: tuple[tuple[np.dtype, int], ...]) -> list[np.ndarray]:
    """Blocks of ``(dtype, elements)`` for one kernel run: those this thread kept, else new ones."""
    kept = getattr(_local, "scratch", None)
    if kept is None:
        kept = _local.scratch = {}
    got = kept.pop(specs, None)
    return got if got is not None else [np.empty(n, dtype=dt) for dt, n in specs]


def _keep(specs: tuple[tuple[np.dtype, int], ...], blocks: list[np.ndarray]) -> None:
    """Keep ``blocks`` for the next run of the same layout in this thread (most recent last)."""
    kept = _local.scratch
    kept[specs] = blocks
    while len(kept) > SCRATCH_KEPT:
        del kept[next(iter(kept))]


def _chunkable(kernel: Kernel) -> bool:
    """Elementwise over equal shapes (scalars aside): evaluable block by block on flat arrays."""
    for ins in kernel.instrs:
        if ins.op in ("view", "reshape", "iota") or ins.op in INDEX_OPS:
            return False
        if ins.op not in ("input", "const") and ins.shape != kernel.out_shape:
            return False
        for a in ins.args:
            arg = kernel.instrs[a]
            if arg.op != "const" and arg.shape != kernel.out_shape:
                return False
    return True


def _apply(op: str, fn: Any, ins: Any, args: list[Any], out: np.ndarray) -> None:
    """One instruction over ``args`` into ``out``."""
    if op == "astype":
        src = args[0]
        if ins.dtype.kind in "iu" and src.dtype.kind in "fc":
            src = cast(src, ins.dtype)      # float -> int: host_cast.py's rule
        np.copyto(out, src, casting="unsafe")
    elif isinstance(fn, np.ufunc):
        fn(*args, out=out, casting="unsafe")
    else:
        np.copyto(out, fn(*args), casting="unsafe")


def _run_chunked(kernel: Kernel, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Fused evaluation on the host: each block runs the whole kernel in cache-sized scratch, and an
    output instruction writes its block straight into the output. A kernel of one operation (``x + y``,
    ``exp(x)``) runs as one NumPy call over the whole arrays (over each thread's part: ``_parts``)."""
    n = kernel.size
    flat = [np.asarray(a).reshape(-1) for a in inputs]
    outs = [np.empty(n, dtype=kernel.instrs[o].dtype) for o in kernel.outputs]
    consts: dict[int, np.ndarray] = {}
    computed = []
    for i, ins in enumerate(kernel.instrs):
        if ins.op == "const":
            consts[i] = np.asarray(ins.params[0], dtype=ins.dtype)
        elif ins.op != "input":
            computed.append(i)
    out_of = {o: j for j, o in enumerate(kernel.outputs)}
    # scratch only for instructions that are not outputs (an output's block is its slice of the output)
    item = sum(kernel.instrs[i].dtype.itemsize for i in computed if i not in out_of)
    chunk = n if len(computed) <= 1 else max(MIN_CHUNK, SCRATCH_BYTES // max(item, 1))
    parts = _parts(n, chunk)
    chunk = max(1, min(chunk, parts[0][1]))
    held = [i for i in computed if i not in out_of]
    specs = tuple((kernel.instrs[i].dtype, min(chunk, n)) for i in held)
    funcs = [OPS[ins.op].host_impl() if ins.op in OPS else None for ins in kernel.instrs]

    def blocks_of(lo: int, hi: int, scratch: dict[int, np.ndarray]) -> None:
        """Evaluate elements ``lo .. hi`` block by block into ``scratch`` and the outputs."""
        with np.errstate(all="ignore"):
            for start in range(lo, hi, chunk):
                stop = min(hi, start + chunk)
                m = stop - start
                vals: list[Any] = []
                for i, ins in enumerate(kernel.instrs):
                    op = ins.op
                    if op == "input":
                        v = flat[ins.params[0]][start:stop]
                    elif op == "const":
                        v = consts[i]
                    else:
                        j = out_of.get(i)
                        v = outs[j][start:stop] if j is not None else scratch[i][:m]
                        _apply(op, funcs[i], ins, [vals[a] for a in ins.args], v)
                    vals.append(v)

    def part(lo: int, hi: int) -> None:
        blocks = _scratch(specs)        # this thread's
        blocks_of(lo, hi, dict(zip(held, blocks, strict=True)))
        _keep(specs, blocks)

    # the other threads take the later parts (each with its own scratch); the first errors raise
    futures = [_pool().submit(part, lo, hi) for lo, hi in parts[1:]]
    try:
        part(*parts[0])
    finally:
        errors = [f.exception() for f in futures]
    for e in errors:
        if e is not None:
            raise e
    result = []
    for j, o in enumerate(kernel.outputs):
        if n == 0 or kernel.instrs[o].op in ("input", "const"):
            src = inputs[kernel.instrs[o].params[0]] if kernel.instrs[o].op == "input" else consts[o]
            outs[j] = np.array(np.broadcast_to(src, kernel.out_shape), dtype=kernel.instrs[o].dtype).reshape(-1)
        out = outs[j].reshape(kernel.out_shape)
        out.flags.writeable = False
        result.append(out)
    return result


# ``reduce`` combines: those taking the result dtype (accumulating in it), then the others
_REDUCE_DTYPED: dict[str, Any] = {"sum": np.sum, "prod": np.prod}
_REDUCE_FNS: dict[str, Any] = {"max": np.max, "min": np.min, "any": np.any, "all": np.all, "and": np.bitwise_and.reduce,
                               "or": np.bitwise_or.reduce, "xor": np.bitwise_xor.reduce}


def _reduce_axes(rop: str, x: np.ndarray, axes: Any, dt: np.dtype) -> np.ndarray:
    if rop in _REDUCE_DTYPED:
        return np.asarray(_REDUCE_DTYPED[rop](x, axis=axes, dtype=dt), dtype=dt)
    return np.asarray(_REDUCE_FNS[rop](x, axis=axes), dtype=dt)


def _reduce_last(rop: str, x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """``rop`` over the last axis (a ``rowfuse`` kernel's ``rowreduce``)."""
    return _reduce_axes(rop, x, x.ndim - 1, dt)


def _host_reduce(kernel: Kernel, operands: list[np.ndarray]) -> list[np.ndarray]:
    rop, axes = kernel.attrs
    dt = kernel.out_nodes[0].dtype
    return [_reduce_axes(rop, operands[0], axes, dt).reshape(kernel.out_shape)]


def _host_matmul(kernel: Kernel, operands: list[np.ndarray]) -> list[np.ndarray]:
    dt = kernel.out_nodes[0].dtype
    r = np.matmul(operands[0], operands[1])
    return [r.astype(dt, copy=False).reshape(kernel.out_shape)]


# Kernel kinds other than elementwise: NumPy on the operands (computed by the prologue).
HOST_KINDS: dict[str, Any] = {"reduce": _host_reduce, "matmul": _host_matmul}
HOST_KINDS.update(LINALG_HOST_KINDS)


def _host_scan(kernel: Kernel, operands: list[np.ndarray]) -> list[np.ndarray]:
    op, axis, init = kernel.attrs[:3]
    dt = kernel.out_nodes[0].dtype
    name = folded(op)
    if name is not None:                # ufunc.accumulate of a table op, in order (a fold)
        fn = getattr(np, str(OPS[name].ufunc)).accumulate
    else:
        fn = {"sum": np.cumsum, "prod": np.cumprod, "max": np.maximum.accumulate,
              "min": np.minimum.accumulate}[op]
    r = fn(operands[0], axis=axis, dtype=dt)
    if init:
        first = np.full(r.shape[:axis] + (1,) + r.shape[axis + 1:], 0 if op == "sum" else 1, dtype=dt)
        r = np.concatenate([first, r], axis=axis)
    return [np.asarray(r, dtype=dt).reshape(kernel.out_shape)]


def _host_compact(kernel: Kernel, operands: list[np.ndarray]) -> list[np.ndarray]:
    """Stream compaction (``render/wgsl_compact.py``): ``count`` gives the non-zero flags per chunk
    (``G`` chunks of ``ceil(n / G)``), the other modes what ``nonzero`` / ``x[mask]`` give; the
    chunk offsets (operand 1) are the device's business."""
    mode = kernel.attrs[0]
    dt = kernel.out_nodes[0].dtype
    flags = operands[0]
    if mode == "count":
        g = kernel.out_shape[0]
        ch = -(-flags.size // g) if g else 0
        padded = np.zeros(g * ch, dtype=np.uint32)
        padded[:flags.size] = flags.reshape(-1) != 0
        return [padded.reshape(g, ch).sum(axis=1, dtype=np.uint32)]
    if mode == "values":
        return [np.asarray(operands[2][flags != 0], dtype=dt)]
    if mode == "flat":
        return [np.flatnonzero(flags).astype(dt)]
    return [np.array(np.nonzero(flags), dtype=dt).reshape(kernel.out_shape)]


def _host_argreduce(kernel: Kernel, operands: list[np.ndarray]) -> list[np.ndarray]:
    op, axes = kernel.attrs[:2]
    x = operands[0]
    length = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    moved = np.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim))).reshape(kernel.out_shape + (length,))
    r = (np.argmax if op == "max" else np.argmin)(moved, axis=-1)
    return [np.asarray(r, dtype=kernel.out_nodes[0].dtype).reshape(kernel.out_shape)]


def _host_fft(kernel: Kernel, operands: list[np.ndarray]) -> list[np.ndarray]:
    axis, inverse, norm = kernel.attrs
    r = (np.fft.ifft if inverse else np.fft.fft)(operands[0], axis=axis, norm=norm)
    return [np.asarray(r, dtype=kernel.out_nodes[0].dtype)]


HOST_KINDS["fft"] = _host_fft                # one-dimensional complex transforms (gpuarray.fft)
HOST_KINDS["scan"] = _host_scan              # cumulative_sum / cumulative_prod, maximum.accumulate ...
HOST_KINDS["compact"] = _host_compact        # nonzero, x[mask] (namespace/searching_sorted.py)
HOST_KINDS["argreduce"] = _host_argreduce    # argmax / argmin
HOST_KINDS["scatter"] = host_scatter


_SCATTER_UFUNC = {"max": np.maximum, "min": np.minimum, "fmax": np.fmax, "fmin": np.fmin,
                  "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _host_scatter_add(kernel: Kernel, operands: list[np.ndarray]) -> list[np.ndarray]:
    """``base`` with ``val[i]`` added at ``idx[i]`` for the indices in ``[0, B)`` (``np.add.at``; a
    kernel whose attrs end with another combine: ``np.maximum.at`` ..., in the indices' order)."""
    base, idx, val = operands
    dt = kernel.out_nodes[0].dtype
    out = np.array(np.broadcast_to(base, kernel.out_shape), dtype=dt)
    idx = np.asarray(idx).reshape(-1)
    val = np.broadcast_to(np.asarray(val, dtype=dt), idx.shape)
    keep = (idx >= 0) & (idx < out.size)
    op = kernel.attrs[-1] if kernel.attrs else "add"
    with np.errstate(invalid="ignore"):
        _SCATTER_UFUNC.get(op, np.add).at(out, idx[keep], val[keep])
    return [out]


HOST_KINDS["scatter_add"] = _host_scatter_add     # bincount / histogram / add.at (namespace/counting.py)


def _host_extremes(kernel: Kernel, operands: list[np.ndarray]) -> list[np.ndarray]:
    """``[min(x), max(x)]`` (NaN propagates, as NumPy's ``min`` / ``max``; ``x`` not empty)."""
    x = operands[0]
    return [np.array([np.min(x), np.max(x)], dtype=kernel.out_nodes[0].dtype)]


HOST_KINDS["extremes"] = _host_extremes           # bincount / histogram / add.at's one read of the extremes
HOST_KINDS.update(HOST_SORT_KINDS)      # sort / argsort / searchsorted
HOST_KINDS["select"] = host_select     # order statistics: percentile / quantile by selection
HOST_KINDS["random"] = host_random     # Philox draws (gpuarray.random)


def run_kernel(kernel: Kernel, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Evaluate ``kernel`` with NumPy; returns one C-contiguous array per output."""
    if kernel.kind == "rowfuse":          # whole arrays, its ``rowreduce`` instructions included
        return _outputs(kernel, _evaluate(kernel, inputs, free=True))
    if kernel.kind == "regions":        # chains of writes into regions (compiler/regions.py)
        return _host_regions(kernel, inputs)
    if kernel.kind != "elementwise":
        base = kernel.prologue_part()
        vals = _evaluate(base, inputs)
        with np.errstate(all="ignore"):
            results = HOST_KINDS[kernel.kind](base, [vals[i] for i in kernel.operands])
        if kernel.result_index is not None:
            # the fused epilogue: the breaker's value is the ``result`` instruction, the outputs
            # are computed from it elementwise like any elementwise kernel's
            vals.append(np.asarray(results[0]).reshape(kernel.instrs[len(vals)].shape))
            vals = _evaluate(kernel, inputs, vals)
            return _outputs(kernel, vals, [n.shape for n in kernel.out_nodes])   # the result keeps its shape
        outs = []
        for r in results:
            out = np.array(r, copy=True, order="C")
            out.flags.writeable = False
            outs.append(out)
        return outs
    if kernel.size > CHUNK and _chunkable(kernel):
        return _run_chunked(kernel, inputs)
    return _outputs(kernel, _evaluate(kernel, inputs, free=True))


def _outputs(kernel: Kernel, vals: list[np.ndarray], shapes: list[tuple[int, ...]] | None = None) -> list[np.ndarray]:
    """The outputs of ``kernel`` from the values of its instructions: read-only C-contiguous copies
    (of ``shapes``, default: all ``kernel.out_shape``)."""
    return [_owned(vals[o], kernel.out_shape if shapes is None else shapes[j], kernel.instrs[o].dtype)
            for j, o in enumerate(kernel.outputs)]


def _owned(value: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """``value`` broadcast to ``shape`` as a read-only C-contiguous array of ``dtype`` that owns its data."""
    v = np.broadcast_to(value, shape) if value.shape != shape else value
    out = np.ascontiguousarray(v, dtype=dtype)
    if out is value or not out.flags.owndata:
        out = out.copy()
    out.flags.writeable = False
    return out


# What a walk of small graph nodes evaluates without kernels (``walk_instrs``): elementwise table ops, views,
# reshapes, casts, constants, and reductions of these ``rop``s
WALKED_OPS = frozenset(OPS) | {"view", "reshape", "astype", "const"}
WALKED_ROPS = frozenset(_REDUCE_DTYPED) | frozenset(_REDUCE_FNS)      # every combine _reduce_axes computes


def walk_instrs(order: Sequence[Node]) -> tuple[list[Instr], list[Node]] | None:
    """The instructions of a topological walk of nodes (evaluated ones read as inputs) and those inputs;
    None where a node is not one ``run_walk`` evaluates (``WALKED_OPS``, ``reduce`` of ``WALKED_ROPS``).

    >>> from gpuarray.graph import leaf, make
    >>> a = leaf(np.arange(3.0), "cpu")
    >>> s = make("square", (a,), a.dtype, a.shape)
    >>> instrs, leaves = walk_instrs([a, s])
    >>> run_walk(instrs, [a.data.get_host()], [1])[0]
    array([0., 1., 4.])
    """
    index: dict[int, int] = {}
    instrs: list[Instr] = []
    leaves: list[Node] = []
    for n in order:
        index[n.serial] = len(instrs)
        if n.data is not None:
            instrs.append(Instr("input", (), n.dtype, n.shape, (len(leaves),)))
            leaves.append(n)
            continue
        op = n.op
        if op not in WALKED_OPS and (op != "reduce" or n.attrs[0] not in WALKED_ROPS):
            return None
        instrs.append(Instr(op, tuple([index[i.serial] for i in n.inputs]), n.dtype, n.shape, n.attrs))
    return instrs, leaves


def run_walk(instrs: list[Instr], inputs: Sequence[np.ndarray], outs: Sequence[int]) -> list[np.ndarray]:
    """The values of instructions ``outs`` of ``walk_instrs``'s list, each whole with NumPy in order, as
    read-only C-contiguous arrays (what ``run_kernel`` gives for the same nodes in kernels)."""
    vals = _values(instrs, inputs, [], None)
    return [_owned(vals[o], instrs[o].shape, instrs[o].dtype) for o in outs]


def _host_regions(kernel: Kernel, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """A ``regions`` kernel: a copy of the array under the chain, then each write's value computed over its
    region after the writes before it (``rprev`` reads the result as they left it) and stored there."""
    instrs = kernel.instrs
    (cone, _ks), *rest = kernel.memoized(("regions_parts",), lambda: regions.parts(kernel))
    vals: dict[int, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for i in cone:
            vals[i] = _value(instrs[i], vals, instrs, inputs, None)
        out = np.array(np.broadcast_to(vals[cone[-1]], kernel.out_shape), dtype=kernel.out_nodes[0].dtype,
                       copy=True)
        flat = out.reshape(-1)
        now = out.view()
        now.flags.writeable = False
        for (cone, _ks), (offset, strides) in zip(rest, kernel.attrs, strict=True):
            shape = instrs[cone[-1]].shape
            if 0 in shape:
                continue
            vals = {}
            for i in cone:
                vals[i] = _value(instrs[i], vals, instrs, inputs, now)
            strided(flat, offset, shape, strides)[...] = vals[cone[-1]]
    out.flags.writeable = False
    return [out]


def _evaluate(kernel: Kernel, inputs: Sequence[np.ndarray], vals: list[np.ndarray] | None = None,
              free: bool = False) -> list[np.ndarray]:
    """Every instruction of ``kernel`` as a whole array (after the first ``len(vals)``, given). ``free``:
    values are dropped after their last reader, outputs excepted (a fused chain of ``k`` writes into an
    array held ``k`` copies of it at once)."""
    last = kernel.memoized(("host_last_use",), lambda: _last_use(kernel)) if free else None
    return _values(kernel.instrs, inputs, [] if vals is None else vals, last)


def _values(instrs: list[Instr], inputs: Sequence[np.ndarray], vals: list[np.ndarray],
            last: list[int] | None) -> list[np.ndarray]:
    """``vals`` extended by the values of ``instrs`` after its first ``len(vals)``, each whole with NumPy in
    order; with ``last`` (``_last_use``), each value dropped after its last reader."""
    with np.errstate(all="ignore"):
        for n in range(len(vals), len(instrs)):
            ins = instrs[n]
            vals.append(_value(ins, vals, instrs, inputs, None))
            if last is not None:
                for a in ins.args:
                    if last[a] == n:
                        vals[a] = None      # type: ignore[call-overload]
    return vals


def _last_use(kernel: Kernel) -> list[int]:
    """Per instruction, the last instruction reading it (outputs: past the end)."""
    last = list(range(len(kernel.instrs)))
    for n, ins in enumerate(kernel.instrs):
        for a in ins.args:
            last[a] = n
    for o in kernel.outputs:
        last[o] = len(kernel.instrs)
    return last


def _value(ins: Instr, vals: Any, instrs: list[Instr], inputs: Sequence[np.ndarray],
           now: np.ndarray | None) -> np.ndarray:
    """One instruction's value as a whole array from those of its arguments (``vals[a]``; ``instrs[a]``
    their instructions); ``rprev`` reads ``now`` (a ``regions`` pass's result as the passes before it left
    it)."""
    op = ins.op
    if op == "input":
        return np.asarray(inputs[ins.params[0]]).reshape(ins.shape)
    if op == "const":
        return np.asarray(ins.params[0], dtype=ins.dtype)
    if op == "rprev":
        assert now is not None, "rprev is read in a regions pass only"
        return now.reshape(ins.shape)
    if op == "iota":
        return np.arange(int(np.prod(ins.shape)), dtype=np.uint64).astype(ins.dtype).reshape(ins.shape)
    if op == "view":
        strides, offset = ins.params
        return strided(np.ascontiguousarray(vals[ins.args[0]]).reshape(-1), offset, ins.shape, strides)
    if op == "reshape":
        return np.reshape(vals[ins.args[0]], ins.shape)
    if op == "astype":
        return cast(vals[ins.args[0]], ins.dtype)       # float -> int: host_cast.py's rule
    if op in INDEX_OPS:
        return host_index(ins, [np.broadcast_to(vals[a], instrs[a].shape) for a in ins.args])
    if op == "reduce":                  # walk_instrs' reductions (in kernels: their own kind, _host_reduce)
        rop, axes = ins.params
        x = np.broadcast_to(vals[ins.args[0]], instrs[ins.args[0]].shape)
        return _reduce_axes(rop, x, axes, ins.dtype).reshape(ins.shape)
    if op == "rowreduce":
        x = np.broadcast_to(vals[ins.args[0]], instrs[ins.args[0]].shape)
        return _reduce_last(ins.params[0], x, ins.dtype) if len(ins.params) == 1 else \
            _reduce_axes(ins.params[0], x, ins.params[1], ins.dtype)     # (rop, 0): colfuse.py
    v = np.asarray(OPS[op].host_impl()(*[vals[a] for a in ins.args]))
    return v.astype(ins.dtype) if v.dtype != ins.dtype else v


class InProcessProvider:
    """Runs kernels with NumPy; memory is host memory."""

    name = "inprocess"
    host_memory = True

    def supports(self, dtype: np.dtype) -> bool:
        return dtype in ALL_DTYPES

    def cannot_run(self, kernel: Kernel) -> str | None:
        return None

    def upload(self, host: np.ndarray) -> Any:
        return host

    def download(self, handle: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        return handle

    def free(self, handle: Any) -> None:
        return None

    def flush(self) -> None:
        return None

    def end_evaluation(self, quiet: bool = False) -> None:
        return None

    def synchronize(self) -> None:
        return None

    def run(self, batch: Sequence[tuple[Kernel, list[Any]]]) -> list[list[Any]]:
        return [run_kernel(k, ins) for k, ins in batch]

    def device_info(self) -> dict[str, Any]:
        return {"name": "host (NumPy)", "provider": self.name, "numpy": np.__version__,
                "float64": True, "int64": True}
