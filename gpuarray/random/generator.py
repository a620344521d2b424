"""Random numbers drawn on the device: ``gpuarray.random.default_rng(seed, device=...)``.

A ``Generator`` is NumPy's ``numpy.random.Generator`` for GpuArrays, drawing from Philox4x32-10
(the counter-based generator of cuRAND and PyTorch): every draw is one ``random`` node (one kernel,
a Philox block a thread; ``providers/host_random.py`` has the layout and the host version) under
the generator's key, at a counter that is new for each draw, so draws are reproducible from the
seed, independent of each other and of the device: the ``cpu`` and GPU devices give the same
``random``, ``integers``, ``permutation`` and ``choice`` values bit for bit (normal draws within
rounding of their ``log``/``sin``/``cos``). The streams are not NumPy's (a different generator);
the distributions are:

- ``random`` / ``uniform``: 24 (float32) or 53 (float64) random bits, NumPy's ``[0, 1)`` mapping;
- ``standard_normal`` / ``normal``: Box-Muller pairs (NumPy uses a ziggurat); ``exponential``:
  ``-log1p(-u)`` (inversion);
- ``integers``: ``floor(u * r / 2^64)`` of 64 random bits ``u`` for a range of ``r`` values, the
  products in 64-bit integer arithmetic: each value's probability is within ``2^-64 r`` of ``1 / r``
  (NumPy's Lemire rejection is exact; PyTorch's modulo is biased by up to ``r / 2^64`` too);
- ``permutation`` / ``shuffle``: a stable ``argsort`` of 64 random bits per element; ``choice``:
  ``integers`` (with replacement), a permutation's head (without), ``searchsorted`` in the
  cumulative ``p`` (with ``p``), the largest ``log(u) / p`` keys (without replacement, with ``p``:
  Efraimidis and Spirakis' weighted sampling, the distribution of NumPy's successive draws).

Values are lazy arrays like any other: ``rng.random(n) * 2 - 1`` is one ``random`` kernel and one
fused elementwise kernel, and nothing reaches the host. ``gpuarray.jit`` does not replay a
function that draws (its calls are ordinary calls: a replay would repeat the first call's numbers).

>>> import gpuarray as xp
>>> rng = xp.random.default_rng(42, device="cpu")
>>> u = rng.random(4)
>>> u.dtype, bool(((u >= 0) & (u < 1)).all()), rng.random(4).tolist() != u.tolist()
(dtype('float64'), True, True)
>>> xp.random.default_rng(42, device="cpu").random(4).tolist() == u.tolist()
True
"""

from __future__ import annotations

import math
import operator
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..array_object.aliasing import assign
from ..array_object.array import GpuArray
from ..array_object.elementwise import apply, finish
from ..core import dtypes as _dtypes
from ..core.ops import OPS
from ..graph.node import const, make
from ..namespace.creation import asarray, full
from ..namespace.indexing import take
from ..namespace.manipulation import reshape, stack
from ..namespace.searching_sorted import searchsorted
from ..namespace.sorting import argsort
from ..namespace.statistical import cumulative_sum
from ..namespace.statistical import min as _min
from ..namespace.statistical import sum as _sum
from ..runtime.devices import Device, as_device

Size = int | Sequence[int] | None


def _shape(size: Size) -> tuple[int, ...]:
    """``size`` as a shape (None: a 0-d draw); NumPy's ValueError for negative dimensions."""
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        size = (size,)
    shape = tuple(operator.index(s) for s in size)
    if any(s < 0 for s in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


def _w(op: str, *args: Any) -> GpuArray:
    return apply(OPS[op], *args)


class Generator:
    """Draws GpuArrays on ``device`` from Philox4x32-10 keyed by ``seed`` (anything
    ``numpy.random.SeedSequence`` takes; None: fresh entropy). See the module docstring.

    >>> import gpuarray as xp
    >>> xp.random.Generator(0, device="cpu").integers(10, 20, size=3).dtype
    dtype('int64')
    """

    def __init__(self, seed: Any = None, *, device: Any = None) -> None:
        self.device: Device = as_device(device)
        self.seed_seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        k = self.seed_seq.generate_state(2, np.uint32)
        self._key = (int(k[0]), int(k[1]))
        self._draws = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Generator(Philox4x32-10, device={self.device.name!r})"

    # ------------------------------------------------------------ the one kernel
    def _draw(self, dist: str, dtype: np.dtype, shape: tuple[int, ...]) -> GpuArray:
        """One ``random`` node: ``dist`` (``bits``, ``uniform``, ``normal``) in ``dtype``, a new counter."""
        with self._lock:
            n = self._draws
            self._draws += 1
        dev = self.device
        u32 = _dtypes.uint32
        ins = tuple(const(v, u32, dev) for v in (*self._key, n & 0xFFFFFFFF, (n >> 32) & 0xFFFFFFFF))
        return finish(make("random", ins, dtype, shape, (dist,), dev))

    def _float(self, dtype: Any, name: str) -> np.dtype:
        dt = self.device.default_float if dtype is None else _dtypes.as_dtype(dtype)
        if dt not in (_dtypes.float32, _dtypes.float64):
            raise TypeError(f"Unsupported dtype {dt} for {name}: float32 or float64")
        self.device.check_dtype(dt)
        return dt

    def _bits64(self, shape: tuple[int, ...]) -> GpuArray:
        if not self.device.supports(_dtypes.uint64):
            raise TypeError(f"{self.device.name} has no 64-bit integers: integers, permutation and choice need them")
        return self._draw("bits", _dtypes.uint64, shape)

    # ------------------------------------------------------------ floats
    def random(self, size: Size = None, dtype: Any = None) -> GpuArray:
        """Uniform floats in ``[0, 1)`` (``dtype`` float32 or float64; default: the device's float)."""
        return self._draw("uniform", self._float(dtype, "random"), _shape(size))

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Size = None, *, dtype: Any = None) -> GpuArray:
        """Uniform floats in ``[low, high)``: ``low + (high - low) * random()`` (``low``/``high`` scalars or
        arrays broadcast to ``size``)."""
        dt = self._float(dtype, "uniform")
        shape = _shape(size) if size is not None else np.broadcast_shapes(np.shape(low), np.shape(high))
        u = self._draw("uniform", dt, shape)
        if not (isinstance(low, GpuArray) or isinstance(high, GpuArray)) and (low, high) == (0.0, 1.0):
            return u
        span = _w("subtract", high, low) if isinstance(low, GpuArray) or isinstance(high, GpuArray) else high - low
        return _w("add", low, _w("multiply", span, u))

    def standard_normal(self, size: Size = None, dtype: Any = None) -> GpuArray:
        """Standard normal floats (Box-Muller)."""
        return self._draw("normal", self._float(dtype, "standard_normal"), _shape(size))

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Size = None, *, dtype: Any = None) -> GpuArray:
        """Normal floats ``loc + scale * standard_normal()``; ValueError for a negative ``scale``
        (one read where ``scale`` is an array)."""
        _nonnegative(scale, "scale")
        dt = self._float(dtype, "normal")
        shape = _shape(size) if size is not None else np.broadcast_shapes(np.shape(loc), np.shape(scale))
        z = self._draw("normal", dt, shape)
        if not (isinstance(loc, GpuArray) or isinstance(scale, GpuArray)) and (loc, scale) == (0.0, 1.0):
            return z
        return _w("add", loc, _w("multiply", scale, z))

    def exponential(self, scale: Any = 1.0, size: Size = None, *, dtype: Any = None) -> GpuArray:
        """Exponential floats of mean ``scale``: ``-log1p(-u) * scale``."""
        _nonnegative(scale, "scale")
        dt = self._float(dtype, "exponential")
        shape = _shape(size) if size is not None else np.shape(scale)
        e = _w("negative", _w("log1p", _w("negative", self._draw("uniform", dt, shape))))
        return _w("multiply", e, scale) if not (isinstance(scale, float) and scale == 1.0) else e

    # ------------------------------------------------------------ integers
    def integers(self, low: int, high: int | None = None, size: Size = None, dtype: Any = np.int64,
                 endpoint: bool = False) -> GpuArray:
        """Integers in ``[low, high)`` (``[low, high]`` with ``endpoint``; ``[0, low)`` without ``high``)
        of ``dtype`` (integers or bool), NumPy's errors for empty or out-of-range bounds."""
        if high is None:
            low, high = 0, low
        if isinstance(low, GpuArray) or isinstance(high, GpuArray):
            raise TypeError("integers: low and high must be Python or NumPy integers here (array bounds "
                            "are not supported on the device)")
        lo, hi = operator.index(low), operator.index(high)
        dt = _dtypes.as_dtype(dtype)
        if dt.kind not in "iub":
            raise TypeError(f"Unsupported dtype {dt} for integers")
        top = hi if endpoint else hi - 1
        info = (0, 1) if dt.kind == "b" else (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
        if lo < info[0]:
            raise ValueError(f"low is out of bounds for {dt}")
        if top > info[1]:
            raise ValueError(f"high is out of bounds for {dt}")
        if lo > top:
            raise ValueError("low > high" if endpoint else "low >= high")
        self.device.check_dtype(dt)
        r = top - lo + 1                                   # values in the range: 1 .. 2^64
        off = _scaled(self._bits64(_shape(size)), r)
        wide = _dtypes.int64 if lo < 0 or dt.kind == "i" else _dtypes.uint64
        v = off.astype(wide) if lo == 0 else _w("add", off.astype(wide), lo)
        return v if v.dtype == dt else v.astype(dt)

    def permutation(self, x: Any, axis: int = 0) -> GpuArray:
        """A random permutation of ``range(x)`` (an int) or of ``x`` along ``axis`` (a copy)."""
        if isinstance(x, (int, np.integer)):
            return self._order(operator.index(x))
        a = x if isinstance(x, GpuArray) else asarray(np.asarray(x), device=self.device)
        if a.ndim == 0:
            raise np.exceptions.AxisError("x must be an integer or at least 1-dimensional")
        ax = operator.index(axis) % a.ndim
        return take(a, self._order(a.shape[ax]), axis=ax)

    def shuffle(self, x: GpuArray, axis: int = 0) -> None:
        """Shuffle the GpuArray ``x`` in place along ``axis`` (views of it see the new order)."""
        if not isinstance(x, GpuArray):
            raise TypeError("shuffle: x must be a GpuArray (NumPy arrays: numpy.random)")
        if x.ndim == 0:
            raise TypeError("shuffle: x must be at least 1-dimensional")
        ax = operator.index(axis) % x.ndim
        assign(x, take(x, self._order(x.shape[ax]), axis=ax)._node)

    def _order(self, n: int) -> GpuArray:
        if n < 0:
            raise ValueError("negative dimensions are not allowed")
        return argsort(self._bits64((n,)), stable=True)

    def choice(self, a: Any, size: Size = None, replace: bool = True, p: Any = None, axis: int = 0,
               shuffle: bool = True) -> GpuArray:
        """Samples of ``a`` (an int: ``range(a)``) along ``axis``, NumPy's ``choice``."""
        pop = None if isinstance(a, (int, np.integer)) else (
            a if isinstance(a, GpuArray) else asarray(np.asarray(a), device=self.device))
        if pop is not None and pop.ndim == 0:
            raise ValueError("a must be a sequence or an integer, not a 0-d array")
        n = operator.index(a) if pop is None else pop.shape[operator.index(axis) % pop.ndim]
        shape = _shape(size)
        k = math.prod(shape)
        if n <= 0 and k > 0:
            raise ValueError("a cannot be empty unless no samples are taken")
        w = None
        if p is not None:
            w = p if isinstance(p, GpuArray) else asarray(np.asarray(p, dtype=np.float64), device=self.device)
            w = w.astype(self.device.default_float) if w.dtype.kind != "f" else w
            if w.ndim != 1 or w.shape[0] != n:
                raise ValueError("p must be 1-dimensional and of the same size as a")
            lo, total, nonzero = (float(v) for v in np.asarray(_st_checks(w)))        # the one read
            if lo < 0 or not math.isfinite(total):
                raise ValueError("probabilities are not non-negative")
            if abs(total - 1.0) > math.sqrt(np.finfo(w.dtype).eps):
                raise ValueError("probabilities do not sum to 1")
            if not replace and nonzero < k:
                raise ValueError("Fewer non-zero entries in p than size")
        if not replace and k > n:
            raise ValueError("Cannot take a larger sample than population when replace is False")
        if replace:
            if w is None:
                idx = self.integers(0, n, size=shape) if k else full(shape, 0, dtype=_dtypes.int64, device=self.device)
            else:
                cdf = cumulative_sum(w)
                u = _w("multiply", self._draw("uniform", w.dtype, shape), cdf[-1])
                idx = _w("minimum", searchsorted(cdf, reshape(u, (-1,)), side="right").astype(_dtypes.int64), n - 1)
                idx = reshape(idx, shape)
        else:
            if w is None:
                order = self._order(n)
            else:                       # the k largest log(u) / p: weighted sampling without replacement
                keys = _w("divide", _w("log", self._draw("uniform", w.dtype, (n,))), w)
                order = argsort(keys, descending=True, stable=True)
            head = order[:k]
            if not shuffle and k:
                head = take(head, argsort(head, stable=True))
            idx = reshape(head, shape)
        if pop is None:
            return idx
        ax = operator.index(axis) % pop.ndim
        flat = take(pop, reshape(idx, (-1,)), axis=ax)
        return reshape(flat, pop.shape[:ax] + shape + pop.shape[ax + 1:])


def _st_checks(w: GpuArray) -> GpuArray:
    """``[min(w), sum(w), count_nonzero(w)]`` as one array (one read)."""
    return stack([_min(w), _sum(w), _sum(_w("not_equal", w, 0).astype(w.dtype))])


def _nonnegative(scale: Any, name: str) -> None:
    """NumPy's ValueError for a negative ``scale`` (one read where it is an array)."""
    if isinstance(scale, GpuArray):
        if bool(np.asarray(_w("less", scale, 0)).any()):
            raise ValueError(f"{name} < 0")
    elif np.any(np.asarray(scale) < 0):
        raise ValueError(f"{name} < 0")


def _scaled(u: GpuArray, r: int) -> GpuArray:
    """``floor(u * r / 2^64)`` of uint64 ``u`` for ``1 <= r <= 2^64``, exactly, in 64-bit arithmetic:
    ``u = uh 2^32 + ul``, ``r = rh 2^32 + rl`` (32-bit halves), the four partial products summed with
    their carries."""
    if r == 1 << 64:
        return u
    m, s = 0xFFFFFFFF, 32
    uh, ul = _w("bitwise_right_shift", u, s), _w("bitwise_and", u, m)
    rh, rl = r >> 32, r & m
    ll = _w("bitwise_right_shift", _w("multiply", ul, rl), s) if rl else None
    hl = _w("multiply", uh, rl) if rl else None
    lh = _w("multiply", ul, rh) if rh else None
    mid = [t for t in (ll, None if hl is None else _w("bitwise_and", hl, m),
                       None if lh is None else _w("bitwise_and", lh, m)) if t is not None]
    carry = _w("bitwise_right_shift", _sum_all(mid), s) if mid else None
    terms = [_w("multiply", uh, rh) if rh else None,
             None if hl is None else _w("bitwise_right_shift", hl, s),
             None if lh is None else _w("bitwise_right_shift", lh, s), carry]
    return _sum_all([t for t in terms if t is not None])


def _sum_all(terms: list[GpuArray]) -> GpuArray:
    out = terms[0]
    for t in terms[1:]:
        out = _w("add", out, t)
    return out


def default_rng(seed: Any = None, *, device: Any = None) -> Generator:
    """A ``Generator`` on ``device`` (the default device if None), as ``numpy.random.default_rng``.

    >>> import gpuarray as xp
    >>> xp.random.default_rng(1, device="cpu").standard_normal(3).shape
    (3,)
    """
    if isinstance(seed, Generator):
        return seed
    return Generator(seed, device=device)


__all__ = ["Generator", "default_rng"]
