"""Advanced indexing: integer arrays and boolean masks, mixed with basic indices.

NumPy's rules for the common cases:

- integer arrays (GpuArrays, NumPy arrays, lists) broadcast together to a
  shape ``B``; a boolean mask with ``k`` dimensions stands for the ``k``
  integer arrays of its ``nonzero()``;
- integers, slices, None and ``...`` elsewhere in the key act as basic indices;
- the ``B`` dimensions replace the indexed axes in place when the advanced
  indices (integer scalars included) are next to each other in the key, and
  come first otherwise.

How it is built: the basic part of the key gives a view; the indexed axes of
that view are flattened into one (a reshape) and read with one fusable
``gather`` at the linear index. Index arrays are checked (``IndexError`` when
out of bounds; on a device by their extremes, see ``namespace/indexing.py``);
those on the host are combined on the host. A boolean mask gives
a data-dependent shape: on a GPU device it is compacted there
(``namespace/searching_sorted.compact_node``: only the count is read back),
``x[mask]`` with a mask of ``x``'s shape compacting ``x``'s values directly,
other masks giving their coordinates as index arrays; on the host its
``nonzero()``.

Assignment builds the same plan and writes through it: ``scatter`` (a kernel
kind) for index arrays, and for a mask whose value does not depend on the
position among the selected elements (a scalar, or a value broadcast along
the mask), a lazy ``where`` that never reads the mask back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..array_object.array import GpuArray
from ..array_object.bounds import bounded
from ..array_object.elementwise import apply, finish
from ..array_object.hooks import register
from ..array_object.indexing import basic_index, broadcast_value, index_walk, write_region
from ..core import dtypes as _dtypes
from ..core.ops import OPS
from ..graph import views
from ..graph.node import Node, leaf, make
from ..graph.shapes import broadcast_shapes
from .creation import asarray
from .indexing import check_array_bounds, check_bounds, gather, host_copy, index_dtype
from .searching_sorted import compact_node, coord_nodes


@dataclass
class _Plan:
    items: list[Any]                  # the basic key (normalized): advanced entries replaced
    view: Node                        # node[items]
    arrays: list[tuple[int, int, Any]] = field(default_factory=list)   # (view axis, x axis, np / GpuArray)
    masks: list[tuple[int, Any]] = field(default_factory=list)         # (view axis, bool np / GpuArray)
    adjacent: bool = True


def _classify(k: Any) -> tuple[str, Any]:

    if isinstance(k, GpuArray):
        if k.dtype == _dtypes.bool_:
            return "mask", k
        if k.dtype.kind in "iu":
            return "int", k
        raise IndexError(f"arrays used as indices must be of integer (or boolean) type; got {k.dtype}")
    if isinstance(k, (bool, np.bool_)):
        return "mask", np.asarray(bool(k))
    if isinstance(k, (list, tuple, np.ndarray)):
        try:
            a = np.asarray(k)
        except ValueError as exc:
            raise IndexError(f"an index list must be rectangular: {exc}") from exc
        if a.dtype == np.bool_:
            return "mask", a
        if a.size == 0 and not isinstance(k, np.ndarray):
            a = a.astype(np.intp)
        if a.dtype.kind in "iu":
            return "int", a
        raise IndexError(f"arrays used as indices must be of integer (or boolean) type; got {a.dtype}")
    return "basic", k


def _plan(node: Node, key: Any) -> _Plan:

    ndim = len(node.shape)
    parsed = [_classify(k) for k in (key if isinstance(key, tuple) else (key,))]
    if sum(1 for kind, k in parsed if kind == "basic" and k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 if kind != "mask" else k.ndim for kind, k in parsed
                   if not (kind == "basic" and (k is None or k is Ellipsis)))
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed")
    fill = [("basic", slice(None))] * (ndim - consumed)
    ell = [i for i, (kind, k) in enumerate(parsed) if kind == "basic" and k is Ellipsis]
    parsed = parsed[:ell[0]] + fill + parsed[ell[0] + 1:] if ell else parsed + fill
    items: list[Any] = []
    arrays: list[tuple[int, int, Any]] = []
    masks: list[tuple[int, Any]] = []
    adv_pos: list[int] = []
    vax = xax = 0
    for pos, (kind, k) in enumerate(parsed):
        if kind == "basic":
            items.append(k)
            if k is None:
                vax += 1
                continue
            if not isinstance(k, slice):
                adv_pos.append(pos)            # an integer next to arrays is an advanced index
                xax += 1
                continue
            vax += 1
            xax += 1
        elif kind == "int":
            items.append(slice(None))
            arrays.append((vax, xax, k))
            adv_pos.append(pos)
            vax += 1
            xax += 1
        elif k.ndim == 0:                      # x[True] / x[False]: a new axis of length 1 or 0
            items.append(None)
            flag = bool(k._host() if not isinstance(k, np.ndarray) else k)
            arrays.append((vax, -1, np.zeros(int(flag), dtype=np.intp)))
            adv_pos.append(pos)
            vax += 1
        else:
            items += [slice(None)] * k.ndim
            masks.append((vax, k))
            adv_pos.append(pos)
            vax += k.ndim
            xax += k.ndim
    for k in [a[2] for a in arrays] + [m[1] for m in masks]:
        if not isinstance(k, np.ndarray) and k.device != node.device:
            raise ValueError(f"index: the index array is on {k.device.name}, the array on {node.device.name}")
    view = basic_index(node, tuple(items))
    for v, k in masks:
        for j, d in enumerate(k.shape):
            if view.shape[v + j] != d and d != 0 and math.prod(view.shape) != 0:   # NumPy lets empty ones through
                raise IndexError(f"boolean index did not match indexed array along axis {v + j}; size of axis "
                                 f"is {view.shape[v + j]} but size of corresponding boolean axis is {d}")
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1))
    return _Plan(items, view, arrays, masks, adjacent)


def _on_gpu(k: Any) -> bool:
    """Whether mask ``k`` is a GpuArray on a GPU device (compacted there, not read back)."""
    return not isinstance(k, np.ndarray) and not k.device.provider.host_memory


def _expand_masks(plan: _Plan) -> list[tuple[int, int, Any]]:
    """Masks as the integer arrays of their ``nonzero()``: on a GPU device computed there by stream
    compaction (only the count is read back), else from the host copy."""

    arrays = list(plan.arrays)
    for v, k in plan.masks:
        if _on_gpu(k) and k.ndim == 1:
            arrays.append((v, -1, finish(compact_node(k._node, "flat"))))
        elif _on_gpu(k):
            arrays += [(v + j, -1, finish(c)) for j, c in enumerate(coord_nodes(k._node))]
        else:
            host = k if isinstance(k, np.ndarray) else k._host()
            for j, nz in enumerate(np.nonzero(host)):
                arrays.append((v + j, -1, nz))
    return sorted(arrays, key=lambda a: a[0])


def _linear(plan: _Plan, arrays: list[tuple[int, int, Any]]) -> tuple[Node, int, Node]:
    """(view with the indexed axes flattened into axis ``p``, p, index node of the broadcast shape)."""

    view = plan.view
    axes = [a[0] for a in arrays]
    if not plan.adjacent:
        perm = axes + [d for d in range(len(view.shape)) if d not in axes]
        view = views.permute(view, tuple(perm))
        axes = list(range(len(axes)))
    p, k = axes[0], len(axes)
    sizes = view.shape[p:p + k]
    total = math.prod(sizes)
    try:
        bshape = broadcast_shapes(*(a[2].shape for a in arrays))
    except ValueError as exc:
        shapes = " ".join(str(tuple(a[2].shape)) for a in arrays)
        raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with shapes {shapes}") \
            from exc
    hosts: list[np.ndarray | None] = []
    for (_v, xa, a), n in zip(arrays, sizes, strict=True):
        if isinstance(a, np.ndarray):
            check_bounds(a, n, xa)
            hosts.append(a)
        else:
            check_array_bounds(a, n, xa)        # on the device: its extremes read back (or known)
            hosts.append(host_copy(a))
    flat = views.reshape(view, view.shape[:p] + (total,) + view.shape[p + k:]) if k > 1 else view
    dev = plan.view.device
    if all(h is not None for h in hosts):
        lin = np.zeros(bshape, dtype=np.int64)
        for h, n, stride in zip(hosts, sizes, _strides(sizes), strict=True):
            hh = np.asarray(h, dtype=np.int64)
            lin = lin + np.where(hh < 0, hh + n, hh) * stride
        return flat, p, leaf(lin.astype(index_dtype(total)), dev)
    if k == 1:
        return flat, p, arrays[0][2]._node

    it = _dtypes.int64 if dev.supports(_dtypes.int64) else _dtypes.int32
    acc: Any = None
    for (_v, _xa, a), n, stride in zip(arrays, sizes, _strides(sizes), strict=True):
        g = (asarray(a, device=dev) if isinstance(a, np.ndarray) else a).astype(it)
        g = apply(OPS["where"], apply(OPS["less"], g, 0), apply(OPS["add"], g, n), g)
        g = apply(OPS["minimum"], apply(OPS["maximum"], g, 0), max(n - 1, 0))
        term = apply(OPS["multiply"], g, stride) if stride != 1 else g
        acc = term if acc is None else apply(OPS["add"], acc, term)
    assert isinstance(acc, GpuArray)
    return flat, p, views.broadcast_to(acc._node, bshape)


def _strides(sizes: tuple[int, ...]) -> list[int]:
    out, acc = [], 1
    for s in reversed(sizes):
        out.append(acc)
        acc *= s
    return out[::-1]


def advanced_getitem(node: Node, key: Any) -> Node:
    """The node for ``x[key]`` with integer arrays or boolean masks in ``key``."""
    plan = _plan(node, key)
    if len(plan.masks) == 1 and not plan.arrays and _on_gpu(plan.masks[0][1]) \
            and plan.masks[0][1].shape == plan.view.shape:
        # x[mask] with a mask of x's shape: x's selected values compacted directly
        return compact_node(plan.masks[0][1]._node, "values", plan.view)
    if len(plan.masks) == 1 and not plan.arrays and _on_gpu(plan.masks[0][1]) and plan.masks[0][1].ndim:
        # one mask over k dims: its flat indices gather along those dims merged (not its k coordinates
        # linearized again), so a mask of the leading dims is a gather of rows (also by blocks, past one
        # binding: the indices increase, so each block gathers its own run of them)
        v, mask = plan.masks[0]
        vs, k = plan.view.shape, mask.ndim
        merged = views.reshape(plan.view, vs[:v] + (math.prod(vs[v:v + k]),) + vs[v + k:]) if k > 1 else plan.view
        return gather(merged, compact_node(mask._node, "flat"), v, ordered=True)
    flat, p, idx = _linear(plan, _expand_masks(plan))
    return gather(flat, idx, p)


def advanced_setitem(node: Node, key: Any, val: Node) -> Node:
    """The node for ``x`` after ``x[key] = val`` (``val`` already has ``x``'s dtype)."""

    if key.__class__ is GpuArray and not val.shape:
        m = key._node
        if m.dtype == _dtypes.bool_ and m.shape == node.shape and m.device is node.device and node.shape:
            # a mask of the whole array and one value (scikit-learn's ``array[index_max] = -inf``, every
            # iteration of LogisticRegression): the general path's nodes, without its parsing
            vb = views.reshape(views.broadcast_to(val, (1,)), (1,) * len(node.shape))
            return bounded(make("where", (m, vb, basic_index(node, (slice(None),) * len(node.shape))), node.dtype,
                                node.shape, (), node.device))
    plan = _plan(node, key)
    view = plan.view
    vshape = view.shape
    if len(plan.masks) == 1 and not plan.arrays:
        v, mask = plan.masks[0]
        k = mask.ndim
        rest = vshape[:v] + vshape[v + k:]
        r1 = (vshape[:v] + (1,) + vshape[v + k:]) if plan.adjacent else ((1,) + rest)
        try:
            fits = len(val.shape) <= len(r1) and broadcast_shapes(val.shape, r1) == r1
        except ValueError:
            fits = False
        if fits:          # the value does not depend on the position among the selected elements
            vb = views.reshape(views.broadcast_to(val, r1), vshape[:v] + (1,) * k + vshape[v + k:])
            mnode = mask._node if not isinstance(mask, np.ndarray) else leaf(mask, node.device)
            mb = views.reshape(mnode, (1,) * v + mask.shape + (1,) * (len(vshape) - v - k))
            new_view = bounded(make("where", (mb, vb, view), node.dtype, vshape, (), node.device))
            return write_region(node, index_walk(plan.items, node.shape), new_view)
    arrays = _expand_masks(plan)
    flat, p, idx = _linear(plan, arrays)
    out_shape = flat.shape[:p] + idx.shape + flat.shape[p + 1:]
    vb = broadcast_value(val, out_shape)
    new_flat = make("scatter", (flat, idx, vb), node.dtype, flat.shape, (p,), node.device)
    axes = [a[0] for a in arrays]
    if plan.adjacent:
        new_view = views.reshape(new_flat, vshape)
    else:
        perm = axes + [d for d in range(len(vshape)) if d not in axes]
        permuted = views.reshape(new_flat, tuple(vshape[d] for d in perm))
        inverse = tuple(int(i) for i in np.argsort(perm))
        new_view = views.permute(permuted, inverse)
    return write_region(node, index_walk(plan.items, node.shape), new_view)


register(advanced_getitem=advanced_getitem, advanced_setitem=advanced_setitem)
