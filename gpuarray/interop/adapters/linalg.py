"""Products, ``numpy.linalg`` and ``numpy.fft`` through ``gpuarray.linalg`` / ``gpuarray.fft``."""

from __future__ import annotations

import builtins
import string
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ... import fft, linalg
from ...array_object.array import GpuArray
from ...core import dtypes as _dtypes
from ...linalg import hqr as _hqr
from ...namespace import manipulation as _m
from ...namespace.statistical import sum as xsum
from ..host import _FALLBACK, _NOVALUE, _xp
from ..operands import (
    _as_array,
    _cast,
    _device,
    _device_from,
    _int_index,
    _map_dtype,
    _ndim,
    _np_array,
    _probe_dtype,
    _w,
)
from ..registry import register, register_array
from ..ufuncs import _call

_np: Any = np     # NumPy, untyped: its stubs do not know that its functions accept GpuArrays


@register("dot")
def _dot(p: dict) -> Any:
    a, b = p["a"], p["b"]
    if p["out"] is not None or _ndim(a) not in (1, 2) or _ndim(b) not in (1, 2):
        return _FALLBACK             # np.dot of N-d arrays is not matmul; 0-d is a product
    return _call(np.matmul, (a, b), {}, None)


@register("tensordot")
def _tensordot(p: dict) -> Any:
    a, b, axes = p["a"], p["b"], p["axes"]
    fn = _xp("tensordot")
    if fn is None:
        return _FALLBACK
    device = _device_from((a, b), None)
    arrays = [x if isinstance(x, (GpuArray, np.ndarray)) else np.asarray(x) for x in (a, b)]
    want = np.result_type(*(x.dtype for x in arrays))
    mw = _map_dtype(want, device)
    if mw is None or mw == _dtypes.bool_:
        return _FALLBACK
    x1, x2 = (g if g.dtype == mw else g.astype(mw) for g in (_as_array(x, device) for x in arrays))
    return fn(x1, x2, axes=axes if isinstance(axes, (int, np.integer)) else tuple(tuple(v) for v in axes))


@register(np.outer)
def _outer(p: dict) -> Any:
    a, b, out = p["a"], p["b"], p["out"]
    dev = _device(a, b, out)
    a = _m.reshape(_as_array(a, dev), (-1, 1))
    b = _m.reshape(_as_array(b, dev), (1, -1))
    return _np.multiply(a, b) if out is None else _np.multiply(a, b, out=out)


@register(np.inner)
def _inner(p: dict) -> Any:
    a, b = p["a"], p["b"]
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _np.multiply(a, b)
    if _probe_dtype(np.inner, _np_array(a), _np_array(b)) == _dtypes.bool_:
        return _FALLBACK
    if np.shape(a)[-1] != np.shape(b)[-1]:
        raise ValueError("shapes not aligned: last dimensions differ")
    return _np.tensordot(a, b, axes=([-1], [-1]))


@register(np.vdot)
def _vdot(p: dict) -> Any:
    a, b = p["a"], p["b"]
    dev = _device(a, b)
    a, b = (_m.reshape(_as_array(x, dev), (-1,)) for x in (a, b))
    if a.shape != b.shape:
        raise ValueError("cannot reshape array: vdot needs inputs of the same size")
    if a.dtype.kind == "c":         # NumPy conjugates the first argument
        a = _np.conjugate(a)
    return _np.dot(a, b)


@register(np.kron)
def _kron(p: dict) -> Any:
    dev = _device(p["a"], p["b"])
    a, b = _as_array(p["a"], dev), _as_array(p["b"], dev)
    if a.ndim == 0 or b.ndim == 0:
        return _np.multiply(a, b)
    nd = builtins.max(a.ndim, b.ndim)
    as_ = (1,) * (nd - a.ndim) + a.shape
    bs = (1,) * (nd - b.ndim) + b.shape
    a2 = _m.reshape(a, tuple(v for s in as_ for v in (s, 1)))
    b2 = _m.reshape(b, tuple(v for s in bs for v in (1, s)))
    return _m.reshape(_np.multiply(a2, b2), tuple(x * y for x, y in zip(as_, bs)))


@register(np.cross)
def _cross(p: dict) -> Any:
    a, b = p["a"], p["b"]
    if p["axis"] is not None or (p["axisa"], p["axisb"], p["axisc"]) != (-1, -1, -1):
        return _FALLBACK
    dev = _device(a, b)
    a, b = _as_array(a, dev), _as_array(b, dev)
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != 3 or b.shape[-1] != 3:
        return _FALLBACK
    dt = _map_dtype(np.result_type(a.dtype, b.dtype), dev)
    if dt is None or dt == _dtypes.bool_:
        return _FALLBACK
    a, b = _m.broadcast_arrays(_cast(a, dt), _cast(b, dt))
    return linalg.cross(a, b)


@register(np.einsum)
def _einsum(p: dict) -> Any:
    """``einsum`` as broadcasting products and one sum: each operand is permuted and reshaped onto
    the letters of the expression, multiplied (fused) and summed over the letters not in the output."""
    operands, kwargs, target = p["operands"], p.get("kwargs") or {}, p["out"]
    if set(kwargs) - {"order", "casting", "dtype"} or not operands or not isinstance(operands[0], str) or \
            (target is not None and not isinstance(target, GpuArray)):
        return _FALLBACK
    casting = {k: kwargs[k] for k in ("dtype", "casting") if k in kwargs}
    subs, arrays = operands[0].replace(" ", ""), list(operands[1:])
    dev = _device(arrays)
    arrays = [_as_array(x, dev) for x in arrays]
    if "->" in subs:
        ins, out = subs.split("->")
    else:
        ins, out = subs, None
    terms = ins.split(",")
    if len(terms) != len(arrays):
        return _FALLBACK              # NumPy's own error
    letters = set(string.ascii_letters)
    free = [c for c in string.ascii_letters if c not in subs]
    nell = builtins.max([x.ndim - len(t.replace("...", "")) for t, x in zip(terms, arrays) if "..." in t] or [0])
    ell = "".join(free[:nell])
    expanded = []
    for t, x in zip(terms, arrays):
        if "..." in t:
            k = x.ndim - len(t.replace("...", ""))
            t = t.replace("...", ell[nell - k:] if k else "")
        if len(t) != x.ndim or not set(t) <= letters:
            return _FALLBACK          # wrong ranks: NumPy's error
        expanded.append(t)
    if out is None:
        counts: dict[str, int] = {}
        for t in expanded:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c in counts if counts[c] == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
        if len(set(out)) != len(out) or not set(out) <= set("".join(expanded)):
            return _FALLBACK
    dt = _map_dtype(_probe_dtype(lambda *z: np.einsum(subs, *z, **casting), *arrays), dev)   # NumPy's TypeError
    if dt is None or dt == _dtypes.bool_:
        return _FALLBACK
    for k, (t, x) in enumerate(zip(expanded, arrays)):
        expanded[k], arrays[k] = _einsum_diagonals(t, x, "single operand" if len(arrays) == 1 else f"operand {k}")
    order = list(out) + sorted(set("".join(expanded)) - set(out))
    sizes: dict[str, int] = {}
    product = None
    for t, x in zip(expanded, arrays):
        for c, s in zip(t, x.shape):
            if sizes.get(c, s) != s and 1 not in (s, sizes.get(c, s)):
                raise ValueError(f"operands could not be broadcast together: dimension {c!r} has sizes "
                                 f"{sizes[c]} and {s}")
            sizes[c] = builtins.max(sizes.get(c, s), s) if s != 1 else sizes.get(c, s)
        present = [c for c in order if c in t]
        y = _m.permute_dims(_cast(x, dt), tuple(t.index(c) for c in present))
        y = _m.reshape(y, tuple(x.shape[t.index(c)] if c in t else 1 for c in order))
        product = y if product is None else _w("multiply", product, y)
    assert product is not None
    full_shape = tuple(sizes[c] for c in order)
    if product.shape != full_shape:
        product = _m.broadcast_to(product, full_shape)
    r = product if len(order) == len(out) else xsum(product, axis=tuple(range(len(out), len(order))), dtype=dt)
    if target is None:
        return r
    if target.shape != r.shape:
        raise ValueError(f"einsum: out= has shape {target.shape}, the result has shape {r.shape}")
    _np.copyto(target, r, casting=kwargs.get("casting", "safe"))
    return target


def _einsum_diagonals(t: str, x: GpuArray, which: str) -> tuple[str, GpuArray]:
    """A letter repeated in one operand's subscripts (``"ii->i"``, ``"iij,j"``) takes that operand's
    diagonal over those axes, a strided view: ``(t, x)`` with each letter once."""
    while len(set(t)) != len(t):
        c = next(c for c in t if t.count(c) > 1)
        i = t.index(c)
        j = t.index(c, i + 1)
        if x.shape[i] != x.shape[j]:
            raise ValueError(f"dimensions in {which} for collapsing index '{c}' don't match "
                             f"({x.shape[i]} != {x.shape[j]})")
        rest = tuple(a for a in range(x.ndim) if a not in (i, j))
        x = linalg.diagonal(_m.permute_dims(x, rest + (i, j)))
        t = "".join(t[a] for a in rest) + c
    return t, x


@register(np.einsum_path)
def _einsum_path(p: dict) -> Any:
    """Only shapes matter: NumPy plans on zero-strided stand-ins, so no data moves."""
    ops = [np.broadcast_to(np.zeros((), x.dtype), x.shape) if isinstance(x, GpuArray) else x
           for x in p["operands"]]
    return np.einsum_path(*ops, optimize=p["optimize"], einsum_call=p["einsum_call"])


# ============================================================ numpy.linalg
def _linalg_float(x: GpuArray) -> np.dtype | None:
    """NumPy linalg's dtype for ``x``: floating and complex dtypes keep theirs, the rest become float64 (as
    the device has it)."""
    return _map_dtype(x.dtype if x.dtype.kind in "fc" else _dtypes.float64, x.device)


def _linalg(np_func: Any, xp_name: str, arg: str = "a", extra: Callable[[dict], dict | None] | None = None) -> None:
    xp_func = getattr(linalg, xp_name)

    @register_array(np_func, arg=arg)
    def impl(x: GpuArray, p: dict) -> Any:
        dt = _linalg_float(x)
        kw = {} if extra is None else extra(p)
        if dt is None or kw is None:
            return _FALLBACK
        return xp_func(_cast(x, dt), **kw)


def _no_uplo(p: dict) -> dict | None:
    return {} if p.get("UPLO", "L") in ("L", "l") else None


_linalg(np.linalg.det, "det")
_linalg(np.linalg.slogdet, "slogdet")
_linalg(np.linalg.inv, "inv")
_linalg(np.linalg.cholesky, "cholesky", extra=lambda p: {"upper": bool(p["upper"])})
_linalg(np.linalg.eigh, "eigh", extra=_no_uplo)
_linalg(np.linalg.eigvalsh, "eigvalsh", extra=_no_uplo)
_linalg(np.linalg.svdvals, "svdvals", arg="x")


@register_array(np.linalg.eigvals, arg="a")
def _eigvals(x: GpuArray, p: dict) -> Any:
    """``linalg.hqr.eigvals``: Hessenberg reduction and Francis QR on a wgpu device (real matrices
    of at most 64 rows; larger and complex ones: LAPACK there), NumPy's dtypes and errors."""
    dt = x.dtype if x.dtype.kind in "fc" else _linalg_float(x)
    if dt is None:
        return _FALLBACK
    return _hqr.eigvals(_cast(x, dt))
@register_array(np.linalg.qr, arg="a")
def _qr(x: GpuArray, p: dict) -> Any:
    """``mode="r"``: the reduced ``R`` alone (``linalg.qr``'s; Householder QR on a wgpu device)."""
    dt = _linalg_float(x)
    if dt is None or p["mode"] not in ("reduced", "complete", "r"):
        return _FALLBACK
    got = linalg.qr(_cast(x, dt), mode="reduced" if p["mode"] == "r" else p["mode"])
    return got.R if p["mode"] == "r" else got
_linalg(np.linalg.svd, "svd", extra=lambda p: None if p["hermitian"] or not p["compute_uv"]
        else {"full_matrices": bool(p["full_matrices"])})
_linalg(np.linalg.pinv, "pinv", extra=lambda p: None if p["hermitian"] or isinstance(p["rcond"], GpuArray) else
        {"rtol": p["rcond"] if p["rcond"] is not None else (None if p["rtol"] is _NOVALUE else p["rtol"])})
_linalg(np.linalg.matrix_rank, "matrix_rank", arg="A", extra=lambda p: None if p["tol"] is not None or
        p["hermitian"] or p["A"].ndim < 2 else {"rtol": p["rtol"]})


@register(np.linalg.lstsq)
def _lstsq(p: dict) -> Any:
    """``(x, residuals, rank, s)`` as NumPy's (an SVD solution, LAPACK's ``gelsd``) from
    the reduced ``linalg.svd`` (on the device for tall and skinny ``a`` and small ones): real 2-D ``a``, 1-D
    or 2-D ``b``.

    >>> import gpuarray as xp
    >>> a = xp.asarray(np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]), device="cpu")
    >>> x, res, rank, s = np.linalg.lstsq(a, xp.asarray(np.array([1.0, 4.0, 3.0]), device="cpu"))
    >>> x.tolist(), res.tolist(), int(rank)
    ([1.0, 2.0], [9.0], 2)
    """
    dev = _device(p["a"], p["b"])
    a, b = _as_array(p["a"], dev), _as_array(p["b"], dev)
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0] or 0 in a.shape or 0 in b.shape:
        return _FALLBACK             # NumPy's errors and empty cases
    dt = _map_dtype(np.result_type(*(x.dtype if x.dtype.kind in "fc" else _dtypes.float64 for x in (a, b))), dev)
    if dt is None or dt.kind != "f":
        return _FALLBACK
    a, b = _cast(a, dt), _cast(b, dt)
    m, n = a.shape
    rcond = p["rcond"]
    eps = float(np.finfo(dt).eps)
    rcond = eps * max(m, n) if rcond is None else eps if rcond < 0 else float(rcond)
    u, s, vh = linalg.svd(a, full_matrices=False)      # the solution does not depend on the vectors' signs
    big = s > s[0] * rcond
    rank = int(xsum(big.astype(dev.default_int)))
    b2 = b[:, None] if b.ndim == 1 else b
    sinv = _xp("where")(big, 1.0 / s, 0.0)
    x = _m.matrix_transpose(vh) @ (sinv[:, None] * (_m.matrix_transpose(u) @ b2))
    if rank == n and m > n:
        r = b2 - a @ x
        resids = xsum(r * r, axis=0)
    else:
        resids = _xp("zeros")((0,), dtype=dt, device=dev)
    return (x[:, 0] if b.ndim == 1 else x), resids, np.int32(rank), s


@register(np.linalg.solve)
def _solve(p: dict) -> Any:
    dev = _device(p["a"], p["b"])
    a, b = _as_array(p["a"], dev), _as_array(p["b"], dev)
    dt = _map_dtype(np.result_type(*(x.dtype if x.dtype.kind in "fc" else _dtypes.float64 for x in (a, b))), dev)
    if dt is None or dt.kind != "f":
        return _FALLBACK
    return linalg.solve(_cast(a, dt), _cast(b, dt))


@register_array(np.linalg.matrix_power, arg="a")
def _matrix_power(a: GpuArray, p: dict) -> Any:
    if a.dtype == _dtypes.bool_:
        return _FALLBACK
    n = _int_index(p["n"])
    if n < 0:
        dt = _linalg_float(a)
        if dt is None:
            return _FALLBACK
        a = _cast(a, dt)
    return linalg.matrix_power(a, n)


@register(np.linalg.multi_dot)
def _multi_dot(p: dict) -> Any:
    arrays, out = p["arrays"], p["out"]
    if out is not None or len(arrays) < 2:
        return _FALLBACK
    dev = _device(arrays)
    arrs = [_as_array(a, dev) for a in arrays]
    if arrs[0].ndim not in (1, 2) or arrs[-1].ndim not in (1, 2) or any(a.ndim != 2 for a in arrs[1:-1]):
        raise np.linalg.LinAlgError("multi_dot: the first and last arrays must be 1-D or 2-D, the others 2-D")
    r = arrs[0]
    for a in arrs[1:]:
        r = _np.matmul(r, a)
    return r


def _norm_float(x: GpuArray) -> GpuArray | None:
    dt = _linalg_float(x)
    return None if dt is None else _cast(x, dt)


@register_array(np.linalg.norm)
def _norm(x: GpuArray, p: dict) -> Any:
    ord_, axis, keepdims = p["ord"], p["axis"], bool(p["keepdims"])
    xf = _norm_float(x)
    if xf is None:
        return _FALLBACK
    if axis is None:
        if ord_ is None:
            r = linalg.vector_norm(xf, axis=None, keepdims=keepdims)
            return r
        if x.ndim == 1:
            axis = (0,)
        elif x.ndim == 2:
            axis = (0, 1)
        else:
            raise ValueError("Improper number of dimensions to norm.")
    axes = normalize_axis_tuple(axis, x.ndim)
    if len(axes) == 1:
        if isinstance(ord_, str):
            raise ValueError(f"Invalid norm order '{ord_}' for vectors")
        return linalg.vector_norm(xf, axis=axes[0], keepdims=keepdims, ord=2 if ord_ is None else ord_)
    if len(axes) == 2:
        if ord_ not in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
            raise ValueError("Invalid norm order for matrices.")
        moved = _m.moveaxis(xf, axes, (-2, -1))
        r = linalg.matrix_norm(moved, ord="fro" if ord_ is None else ord_)
        if keepdims:
            r = _m.reshape(r, tuple(1 if i in axes else s for i, s in enumerate(x.shape)))
        return r
    raise ValueError("Improper number of dimensions to norm.")


@register_array(np.linalg.vector_norm)
def _vector_norm(x: GpuArray, p: dict) -> Any:
    xf = _norm_float(x)
    axis = p["axis"]
    return _FALLBACK if xf is None else linalg.vector_norm(
        xf, axis=axis if axis is None or np.ndim(axis) == 0 else tuple(axis), keepdims=bool(p["keepdims"]),
        ord=p["ord"])


@register_array(np.linalg.matrix_norm)
def _matrix_norm(x: GpuArray, p: dict) -> Any:
    xf = _norm_float(x)
    return _FALLBACK if xf is None else linalg.matrix_norm(xf, keepdims=bool(p["keepdims"]), ord=p["ord"])


@register_array(np.linalg.trace)
def _linalg_trace(x: GpuArray, p: dict) -> Any:
    return _np.trace(x, offset=p["offset"], axis1=-2, axis2=-1, dtype=p["dtype"])


@register_array(np.linalg.diagonal)
def _linalg_diagonal(x: GpuArray, p: dict) -> Any:
    return linalg.diagonal(x, offset=_int_index(p["offset"]))


@register(np.linalg.outer)
def _linalg_outer(p: dict) -> Any:
    if np.ndim(p["x1"]) != 1 or np.ndim(p["x2"]) != 1:
        raise ValueError("Input arrays must be one-dimensional")
    return _np.outer(p["x1"], p["x2"])


@register(np.linalg.cross)
def _linalg_cross(p: dict) -> Any:
    dev = _device(p["x1"], p["x2"])
    x1, x2 = _as_array(p["x1"], dev), _as_array(p["x2"], dev)
    ax = _int_index(p["axis"])
    if x1.ndim == 0 or x2.ndim == 0 or x1.shape[ax] != 3 or x2.shape[ax] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors")
    dt = _map_dtype(np.result_type(x1.dtype, x2.dtype), dev)
    if dt is None or dt == _dtypes.bool_:
        return _FALLBACK
    return linalg.cross(_cast(x1, dt), _cast(x2, dt), axis=ax)


@register(np.linalg.matmul)
def _linalg_matmul(p: dict) -> Any:
    return _np.matmul(p["x1"], p["x2"])


@register(np.linalg.vecdot)
def _linalg_vecdot(p: dict) -> Any:
    return _np.vecdot(p["x1"], p["x2"], axis=p["axis"])


@register(np.linalg.tensordot)
def _linalg_tensordot(p: dict) -> Any:
    return _np.tensordot(p["x1"], p["x2"], axes=p["axes"])


@register_array(np.linalg.matrix_transpose)
def _linalg_matrix_transpose(x: GpuArray, p: dict) -> Any:
    if x.ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return x.mT


# ============================================================ numpy.fft
def _shift(np_func: Any, xp_func: Any) -> None:
    @register_array(np_func)
    def impl(x: GpuArray, p: dict) -> Any:
        axes = p["axes"]
        return xp_func(x, axes=axes if axes is None or np.ndim(axes) == 0 else tuple(axes))


_shift(np.fft.fftshift, fft.fftshift)
_shift(np.fft.ifftshift, fft.ifftshift)


def _fft_input(a: GpuArray, real_only: bool) -> GpuArray | None:
    """NumPy's input conversion: integers and booleans become float64 (as the device has it)."""
    if a.dtype.kind == "c":
        return None if real_only else a
    if a.dtype.kind == "f":
        return a
    dt = _map_dtype(_dtypes.float64, a.device)
    return None if dt is None else a.astype(dt)


def _transform(np_func: Any, xp_func: Any, nd: bool, real_only: bool = False, two: bool = False) -> None:
    """``numpy.fft.<name>`` through ``gpuarray.fft.<name>`` (``norm=None`` is ``"backward"``)."""
    @register_array(np_func, arg="a", no_out=True)
    def impl(a: GpuArray, p: dict) -> Any:
        x = _fft_input(a, real_only)
        if x is None:
            return _FALLBACK              # NumPy's own error (complex input of rfft / ihfft)
        norm = "backward" if p["norm"] is None else p["norm"]
        if not nd:
            return xp_func(x, n=p["n"], axis=_int_index(p["axis"]), norm=norm)
        s, axes = p["s"], p["axes"]
        if s is not None and axes is None and not two:
            return _FALLBACK              # deprecated in NumPy 2.0 (a warning, then its own rules)
        return xp_func(x, s=None if s is None else tuple(s), axes=None if axes is None else tuple(axes), norm=norm)


for _name, _nd, _real in (("fft", False, False), ("ifft", False, False), ("rfft", False, True),
                          ("irfft", False, False), ("hfft", False, False), ("ihfft", False, True),
                          ("fftn", True, False), ("ifftn", True, False), ("rfftn", True, True),
                          ("irfftn", True, False)):
    _transform(getattr(np.fft, _name), getattr(fft, _name), _nd, _real)
for _name, _real in (("fft2", False), ("ifft2", False), ("rfft2", True), ("irfft2", False)):
    _transform(getattr(np.fft, _name), getattr(fft, _name[:-1] + "n"), True, _real, two=True)
