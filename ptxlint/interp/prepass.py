"""What the fixpoint knows of a function before it runs, whatever the launch: its CFG,
the loops' counters, the relations' static tables, sync dependence, how each instruction
runs. Built once per function and deadline, and shared by the analyses that ask with the
same pair: a kernel's lint analyses it once, then the rules re-analyse it under other
launches (the out-of-bounds rule's threshold search, whole-row warps), each on the
kernel's deadline.

Everything here is a function of the function alone (the deadline only stops its
construction); its lazily filled caches are too (regions, loop counters, relation
tables), so an analysis finds in them what it would have computed itself. What an
analysis learns (states, memos, the branches it found divergent) stays in its own
`Interpreter`.
"""
from __future__ import annotations

import weakref

from ..cfg import CFG, build_cfg
from ..deadline import Deadline
from ..ir.module import Function
from .divergence import SyncDependence
from .loops import LoopCounters
from .relations import Relations


class Prepass:
    def __init__(self, cfg: CFG, deadline: Deadline):
        self.cfg = cfg
        self.deadline = deadline
        self.sync = SyncDependence(cfg, deadline)
        self.relations = Relations(cfg)
        self.loops = LoopCounters(cfg)
        heads = cfg.loop_heads  # block -> whether an edge from it enters a loop
        self.enters = [any(s in heads and b not in cfg.loop(s).body for s in blk.succs)
                       for b, blk in enumerate(cfg.blocks)]
        # rules_only -> id(insn) -> how it runs (`worklist._plan`)
        self.plans: dict[bool, dict[int, tuple]] = {False: {}, True: {}}
        # (block, loop head) -> the relations its back edge carries (`Interpreter._follow`)
        self.follows: dict[tuple[int, int], tuple] = {}
        self.loop_writes: dict[int, frozenset[str]] = {}  # `Interpreter._keep_invariants`
        self.reg_widths: dict[str, int] | None = None  # `Interpreter._wrapped`


# (id(function), id(deadline)) -> its prepass, while an analysis of it lives: the entry
# holds both, so neither identity can be reused meanwhile
_SHARED: "weakref.WeakValueDictionary[tuple[int, int], Prepass]" = \
    weakref.WeakValueDictionary()


def prepass(function: Function, deadline: Deadline) -> Prepass:
    """`function`'s prepass on `deadline`: the one an analysis still alive made, or a new
    one. (A deadline is one kernel's lint: nothing is shared across lints.)"""
    key = (id(function), id(deadline))
    hit = _SHARED.get(key)
    if hit is None:
        hit = _SHARED[key] = Prepass(build_cfg(function, deadline), deadline)
    return hit


__all__ = ["Prepass", "prepass"]
