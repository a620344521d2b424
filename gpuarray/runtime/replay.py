"""Evaluation plans: a repeated evaluation replays what the first one recorded.

A training step, a solver iteration or a benchmark loop evaluates graphs of one structure over and
over. ``compiler/plan_cache.py`` already skips the scheduling of such a graph; this module skips the
rest of the host work. When every kernel of an evaluation ran on one wgpu device and each kernel's
enqueue could be recorded (``providers/wgpu_replay.py``), the planner keeps an ``EvalPlan`` under the
graph's structural key: per kernel, the walk positions of its inputs and outputs, its ``Program``
(allocations, parameter words, pipelines, bindings, workgroup counts), the fields of its recipe
(``residency.Recipe``, for recovery after a lost device) and its decision-log entry. A later
evaluation with the same key runs the programs over the new input buffers, realizes the output nodes
and logs the same decisions, without placing, instantiating, rendering or laying out anything.

A plan is used only where it would do what a fresh evaluation does:

- the same constant nodes, by serial (constants are hash-consed by value, so the same values), or
  constants whose every place in the programs is known (``providers/wgpu_replay.ConstUses``): their
  new values are written there (new words of the parameter block, new 64-bit constant buffers) and
  into the recipes; a new value of any other constant takes the full path and records the plan again;
- views of evaluated data at the places recorded (``compiler/plan_cache.py`` keys them without their
  offsets), or in elementwise, reduction and row-fused kernels only (``VIEW_KINDS``), whose offsets are tagged words
  (``const_tags.VOFFSET``):
  those take their new offsets as constants take new values, and such a plan is stored under the
  structure alone, for every offset;
- the same settings (``_config.token``: offload, thresholds, fast math) and the same live provider
  with the same capabilities (tests change these on a live provider);
- under ``offload="auto"``, each kernel that planner rule 4 may have placed on the device (every
  input evaluated before the evaluation, some of them on the device then) has one of those inputs on
  the device now; inputs uploaded for a kernel during the recording are not such inputs (the weights
  that a solver sends up from the host at each step);
- nothing profiled or timed (``_profile.quiet``).

Otherwise the planner evaluates as usual and records the plan again. The providers' tuning constants
(``wgpu_reduce.USE_SUBGROUPS``, tile sizes, ...) are fixed for a process; code that changes one at run
time (tests do) calls ``clear()`` after it.

>>> import numpy as np, gpuarray as xp
>>> v = xp.asarray(np.arange(4, dtype=np.float32), device="wgpu:0")
>>> with xp.config(offload="always"):
...     got = [(v * 2 + 1).tolist() for _ in range(3)]      # the second and third replay the first
>>> got[2]
[1.0, 3.0, 5.0, 7.0]
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any

from ..compiler.kernel import Instr
from ..compiler.plan_cache import loose_structure, loose_view
from ..core import config as _config
from . import profile as _profile
from .devices import _providers
from .residency import DeviceData, Recipe

CAPACITY = 256          # plans kept; the table is emptied when it is full
# A structure whose views of evaluated data moved (``compiler/plan_cache.py``: their offsets are beside the
# structure in the key) is recorded for at most this many offsets in a row without one of its plans
# replayed: a sliding window (``x[i:i + 256] * w`` over ``i``) meets each offset once, and recording a plan
# nobody replays cost about 100 Python calls an evaluation (419 against 319 on the development machine)
# and emptied the table of every other plan each CAPACITY windows. Alternating offsets (red-black
# sweeps) replay theirs.
LOOSE_RECORDS = 8
# the kernels whose views' offsets reach their dispatches only as tagged words (``Rendered.meta``'s ``voffset``
# slots): a replay patches those; any other kernel keeps the offsets it was recorded with
VIEW_KINDS = frozenset({"elementwise", "reduce", "rowfuse"})
ENABLED = True          # False: every evaluation takes the full path (tests compare the two)


class _Step:
    __slots__ = ("inputs", "outputs", "program", "kind", "fields", "specs", "log", "consts", "cinstrs")

    def __init__(self, inputs: list[int], outputs: list[int], program: Any, recipe: Recipe, log: dict,
                 consts: tuple = (), cinstrs: tuple = ()) -> None:
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.program = program
        self.kind = recipe.kind
        self.fields = recipe.fields
        self.specs = recipe.specs
        self.log = log
        self.consts = consts            # ((the program's constant, walk position, its params as recorded), ...)
        self.cinstrs = cinstrs          # ((instruction, walk position) of each constant and moving view)

    def fields_for(self, order: Sequence[Any]) -> dict:
        """The recipe's fields with the constants and views' places of the walk ``order`` (new values replayed)."""
        fields = dict(self.fields)
        instrs = list(fields["instrs"])
        for i, p in self.cinstrs:
            c = instrs[i]
            n = order[p]
            if n is not None:
                instrs[i] = Instr(c.op, c.args, c.dtype, c.shape, n.attrs)
        fields["instrs"] = instrs
        return fields


class EvalPlan:
    """The recorded kernels of one evaluation (see the module docstring)."""

    __slots__ = ("provider", "name", "state", "token", "consts", "resident", "steps", "logs", "dispatches",
                 "patchable", "moving")

    def __init__(self, provider: Any, name: str, token: tuple, consts: tuple, resident: tuple,
                 steps: list[_Step], patchable: frozenset[int] = frozenset(), moving: tuple = ()) -> None:
        self.provider = weakref.ref(provider)       # a plan keeps neither its provider nor any data alive
        self.name = name
        self.state = provider.capabilities()
        self.token = token
        self.consts = consts            # ((walk position, the constant node's serial, its value), ...)
        self.resident = resident        # groups of walk positions: one input of each on the device
        self.steps = steps
        self.logs = [s.log for s in steps]
        self.dispatches = sum(s.program.dispatches for s in steps)
        self.patchable = patchable      # walk positions of the constants (and views) a replay may give new values
        # walk positions of the views keyed without their offsets (a plan patching all of them is stored
        # under the structure alone, ``store``; else under the key with the offsets, which fixes them)
        self.moving = moving

    def usable(self, order: Sequence[Any]) -> Any:
        """The provider to run this plan on for the walk ``order``, where that does what a fresh
        evaluation would; else None."""
        prov: Any = self.provider()
        if prov is None or prov.lost is not None or _providers.get(self.name) is not prov:
            return None
        tok = _config.token()
        if tok[0] is not self.token[0] or tok[1] != self.token[1] or not _profile.quiet():
            return None
        for p, c, key in self.consts:
            n = order[p]
            # the same node, or one of the same value made anew (graph.node's cache of recent constants
            # forgets them after 512: a plan was re-recorded then, at random for a test)
            # (a constant whose places are all known takes its new value without its key computed)
            if n.serial != c and not (n.op == "const" and (p in self.patchable or _const_key(n) == key)):
                return None
        for group in self.resident:
            for p in group:
                d = order[p].data
                if d.handle is not None and d.provider is prov:
                    break
            else:
                return None
        return prov if prov.capabilities() == self.state else None

    def run(self, prov: Any, order: Sequence[Any], undo: list[tuple]) -> None:
        """Run the kernels on ``prov`` (``usable``'s answer) for the walk ``order`` and realize their
        output nodes (recorded in ``undo`` as the planner's ``_realize`` does)."""
        for st in self.steps:
            ins: list[Any] = []
            nodes: list[Any] = []
            for p in st.inputs:
                node = order[p]
                nodes += (node,)
                d = node.data
                ins += (d.handle if d.provider is prov and d.handle is not None else d.get_handle(prov),)
            new: dict[int, tuple] | None = None
            for c, p, params in st.consts:
                n = order[p]
                if n is None:               # (a jit's walk: the places it traced)
                    continue
                a = n.attrs
                # another constant node: its value, maybe new; a view's place (a new tuple each time)
                if a is not params and not (n.op == "view" and a == params):
                    if new is None:
                        new = {}
                    new[c] = a
            outs = prov.replay(st.program, ins, new) if new else prov.replay(st.program, ins)
            datas: list[DeviceData] = []
            i = 0
            for p in st.outputs:
                node = order[p]
                d = DeviceData(node.dtype, node.shape, None, outs[i], prov)
                datas += (d,)
                undo += ((node, node.inputs, node.depth),)
                node.data, node.inputs, node.depth, node.cone = d, (), 0, None   # node.realize(d), without the call
                i += 1
            recipe = Recipe.again(st.kind, st.fields_for(order) if new else st.fields, st.specs, nodes, datas)
            for d in datas:
                d.recipe = recipe


_plans: dict[tuple, EvalPlan] = {}


def _const_key(node: Any) -> tuple:
    """A constant node's value as a key: its dtype and bytes (NaN payloads and -0.0 told apart)."""
    return node.dtype, node.attrs[0].tobytes()


class _Capture(threading.local):
    """``array_object/jit.py``'s view of the planner: while ``on``, the planner leaves the plan it
    ran or recorded and its walk in ``seen`` (this thread's evaluations only)."""
    on = False
    seen: tuple[EvalPlan, Sequence[Any]] | None = None


capture = _Capture()


_unreplayed: dict[tuple, int] = {}      # a loose key's structure -> plans recorded since one was replayed
_skipped: dict[int, bool] = {}          # hashes of the loose keys evaluated without recording a plan


def lookup(key: tuple | None) -> EvalPlan | None:
    """The plan stored for ``key``, or for its structure where the plan gives moved views their places."""
    if key is None or not ENABLED:
        return None
    plan = _plans.get(key)
    if plan is None:
        s = loose_structure(key)
        if s is not None:
            plan = _plans.get(s)
    return plan


def worth_recording(key: tuple) -> bool:
    """False for a structure recorded for ``LOOSE_RECORDS`` offsets in a row, none replayed, unless these
    offsets were seen before (the loop settled on a few: they are recorded and replayed again)."""
    s = loose_structure(key)
    if s is None or _unreplayed.get(s, 0) < LOOSE_RECORDS:
        return True
    h = hash(key)           # (a hash, not the key: a collision only records a plan)
    if h in _skipped:
        return True
    if len(_skipped) >= 16 * CAPACITY:
        _skipped.clear()
    _skipped[h] = True
    return False


def replayed(key: tuple) -> None:
    """Note that ``key``'s plan ran (a structure whose offsets repeat is worth recording)."""
    s = loose_structure(key)
    if s is not None and s in _unreplayed:
        del _unreplayed[s]


def store(key: tuple, plan: EvalPlan) -> None:
    if not ENABLED:
        return
    if len(_plans) >= CAPACITY:
        _plans.clear()
    s = loose_structure(key)
    if s is not None and all(p in plan.patchable for p in plan.moving):
        _plans[s] = plan            # every moved view's offset is a word it patches: any offsets
    else:
        _plans[key] = plan
    if s is not None:
        if len(_unreplayed) >= CAPACITY:
            _unreplayed.clear()
        _unreplayed[s] = _unreplayed.get(s, 0) + 1


def forget(key: tuple | None) -> None:
    """Drop the plan for ``key`` (its evaluation could not be recorded this time)."""
    if key is not None:
        _plans.pop(key, None)
        s = loose_structure(key)
        if s is not None:
            _plans.pop(s, None)


def clear() -> None:
    """Forget every plan."""
    _plans.clear()
    _unreplayed.clear()
    _skipped.clear()


class Recording:
    """Collects the steps of an evaluation as the planner runs it (``add``), then the plan (``plan``)."""

    __slots__ = ("order", "pos", "steps", "provider", "ok", "resident", "leaves", "consts", "held", "cpos",
                 "patched", "fixed", "vpos")

    def __init__(self, order: Sequence[Any]) -> None:
        self.order = order
        self.pos = {id(n): p for p, n in enumerate(order)}
        self.leaves = {p for p, n in enumerate(order) if n.data is not None}    # evaluated before
        # the constants, taken before the evaluation realizes any (a 0-d constant may be a target)
        self.consts = tuple((p, n.serial, _const_key(n)) for p, n in enumerate(order)
                            if n.op == "const" and n.data is None)
        self.steps: list[_Step] = []
        self.provider: Any = None
        self.ok = True
        # per kernel placed by residency: the positions of its inputs on the device before the evaluation
        self.resident: set[tuple[int, ...]] = set()
        # the leaves on a device before the evaluation (a kernel's get_handle uploads the others)
        self.held = {p: order[p].data.provider for p in self.leaves if order[p].data.handle is not None}
        # the constants by their params (the nodes' attrs; two sharing one are not told apart: fixed)
        self.cpos: dict[int, int] = {}
        self.fixed: set[int] = set()        # walk positions of constants a replay keeps as recorded
        for p, _s, _k in self.consts:
            a = id(order[p].attrs)
            if a in self.cpos:
                self.fixed.update((p, self.cpos[a]))
            self.cpos[a] = p
        self.patched: set[int] = set()      # walk positions of constants whose every place is known
        # the views of evaluated data (keyed without their offsets: compiler/plan_cache.py) by their params
        self.vpos: dict[int, int] = {}
        for p, n in enumerate(order):
            if loose_view(n):
                q = self.vpos.setdefault(id(n.attrs), p)
                if q != p:                  # two sharing one attrs tuple: not told apart
                    self.fixed.update((p, q))

    def wants(self, provider: Any) -> bool:
        """Whether a kernel on ``provider`` can be recorded (one wgpu provider per evaluation)."""
        if not self.ok or not hasattr(provider, "record"):
            self.ok = False
        elif self.provider is None:
            self.provider = provider
        elif provider is not self.provider:
            self.ok = False
        return self.ok

    def add(self, kernel: Any, program: Any, datas: list[Any], log: dict) -> None:
        pos = self.pos
        if program is None or not datas or datas[0].recipe is None or \
                any(id(n) not in pos for n in kernel.inputs) or any(id(n) not in pos for n in kernel.out_nodes):
            self.ok = False
            return
        if _config.get("offload") != "always":       # placed by residency (planner rule 4)?
            ins = [pos[id(n)] for n in kernel.inputs]
            if all(p in self.leaves for p in ins):      # (an input computed on the device here: rule 4 again)
                group = tuple(p for p in ins if self.held.get(p) is self.provider)
                if group:
                    self.resident.add(group)
        self.steps.append(_Step([pos[id(n)] for n in kernel.inputs], [pos[id(n)] for n in kernel.out_nodes],
                                program, datas[0].recipe, log, *self._constants(kernel, program)))

    def _constants(self, kernel: Any, program: Any) -> tuple[tuple, tuple]:
        """``_Step``'s ``consts`` and ``cinstrs`` of ``kernel`` recorded as ``program``; the constants
        whose places in it are not all known (``providers/wgpu_replay.ConstUses``) become fixed."""
        uses = program.consts
        cpos, vpos = self.cpos, self.vpos
        # a view's offset is patched only in VIEW_KINDS kernels, whose renderers put it in tagged words
        # (``Rendered.meta``); other kernels may compute with it elsewhere
        views_ok = kernel.kind in VIEW_KINDS
        consts = []
        for c, params in enumerate(uses.params):
            p = cpos.get(id(params))
            view = p is None
            if view:
                p = vpos.get(id(params))
            if p is None:                   # neither a constant nor a view of the walk: no new values for any
                self.fixed.update(cpos.values())
                self.fixed.update(vpos.values())
                continue
            (self.fixed if c in uses.unsafe or view and not views_ok else self.patched).add(p)
            consts.append((c, p, params))
        cinstrs = []
        tagged = {id(params) for params in uses.params}
        for i, ins in enumerate(kernel.instrs):
            if ins.op == "const":
                p = cpos.get(id(ins.params))
                if p is None or id(ins.params) not in tagged:      # its value went we do not know where
                    self.fixed.update(cpos.values() if p is None else (p,))
                else:
                    cinstrs.append((i, p))
            elif ins.op == "view":
                p = vpos.get(id(ins.params))
                if p is not None:
                    if id(ins.params) not in tagged or not views_ok:
                        self.fixed.add(p)
                    else:
                        cinstrs.append((i, p))
        return tuple(consts), tuple(cinstrs)

    def plan(self) -> EvalPlan | None:
        if not self.ok or not self.steps:
            return None
        return EvalPlan(self.provider, self.provider.device_name, _config.token(), self.consts,
                        tuple(sorted(self.resident)), self.steps, frozenset(self.patched - self.fixed),
                        tuple(sorted(self.vpos.values())))

