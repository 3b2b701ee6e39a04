"""Barrier intervals: which instructions two threads of one block may execute at the same
time, between the same two barriers.

A *separator* is an instruction no thread passes before the others reach it: a CTA
barrier (`bar`/`barrier` `.sync`, `.red`, and `.arrive`, which is taken as the other
half of a producer/consumer pair), a cluster barrier, or a call to a function that
executes one. For two threads of one warp `bar.warp.sync` (`__syncwarp`) separates too.
Assuming every thread meets the barriers in the same order (what `barrier-divergence`
checks), thread 1 at A and thread 2 at B are between the same two barriers when

1. a path A -> B crosses no separator (thread 2 ran ahead, also around a loop's back
   edge), or B -> A does; or
2. A and B lie on different arms of a branch that may send threads of one block
   different ways (`BlockVariance`), each reachable from it without a separator.

Branches the whole block takes together never put A and B side by side: `if (blockIdx.x
== 0) A else B` has no race. Sets of accesses are Python ints used as bitsets.
"""
from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Callable, Sequence
from functools import cached_property

from ..cfg import CFG
from ..ir.instruction import Instruction
from ..ir.instructions.sync import BarrierCluster, BarWarpSync, CtaBarrier
from ..ir.module import Module
from ..ir.operands import Symbol
from ..ir.traits import Call


def _callee(insn: Instruction) -> str | None:
    callee = insn.callee if isinstance(insn, Call) else None
    return callee.name if isinstance(callee, Symbol) else None


_FUNCS: "weakref.WeakKeyDictionary[Module, dict]" = weakref.WeakKeyDictionary()


def functions_with(module: Module, direct: Callable[[Instruction], bool]) -> frozenset[str]:
    """Functions that execute an instruction matching `direct`, themselves or through
    the functions they call (computed once per module and test)."""
    per_module = _FUNCS.setdefault(module, {})
    hit = per_module.get(direct)
    if hit is None:
        hit = per_module[direct] = _functions_with(module, direct)
    return hit


def _functions_with(module: Module, direct: Callable[[Instruction], bool]) -> frozenset[str]:
    found = {f.name for f in module.functions if any(direct(i) for i in f.instructions)}
    calls = {f.name: {_callee(i) for i in f.instructions if isinstance(i, Call)} - {None}
             for f in module.functions}
    changed = True
    while changed:
        changed = False
        for name, callees in calls.items():
            if name not in found and callees & found:
                found.add(name)
                changed = True
    return frozenset(found)


CTA_BARRIERS = (CtaBarrier, BarrierCluster)
WARP_BARRIERS = (BarWarpSync, *CTA_BARRIERS)


def is_cta_barrier(insn: Instruction) -> bool:
    return isinstance(insn, CTA_BARRIERS)


def is_warp_barrier(insn: Instruction) -> bool:
    return isinstance(insn, WARP_BARRIERS)


def separator(module: Module, warp: bool) -> Callable[[Instruction], bool]:
    """The separator test for threads of different warps (`warp=False`) or of one warp."""
    direct = is_warp_barrier if warp else is_cta_barrier
    funcs = functions_with(module, direct)
    barriers = WARP_BARRIERS if warp else CTA_BARRIERS
    if not funcs:  # no call separates: one type test per instruction
        return lambda insn: isinstance(insn, barriers)
    return lambda insn: isinstance(insn, barriers) or _callee(insn) in funcs


def control_closure(cfg, block: int) -> list[int]:
    """The branch blocks deciding whether `block` runs, iterated; nearest first."""
    frontier = cfg.post_dominance_frontier
    seen: list[int] = []
    done: set[int] = set()
    tick = cfg.deadline.tick
    todo = deque(sorted(frontier[block], key=lambda b: -cfg.rpo_index[b]))
    while todo:
        tick()
        b = todo.popleft()
        if b in done or len(cfg.blocks[b].succs) < 2:
            continue
        seen.append(b)
        done.add(b)
        todo.extend(sorted(frontier[b] - done, key=lambda b: -cfg.rpo_index[b]))
    return seen


def _bits(x: int):
    """The indices of the set bits of `x`, lowest first."""
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


class Intervals:
    """Separator-free reachability over one CFG."""

    def __init__(self, cfg: CFG, is_sep: Callable[[Instruction], bool] | None):
        """`is_sep` None: nothing separates (plain reachability)."""
        self.cfg = cfg
        self.seps = [[i for i, insn in enumerate(b.instructions) if is_sep(insn)]
                     for b in cfg.blocks] if is_sep is not None else [[] for _ in cfg.blocks]
        self.clean = [not s for s in self.seps]
        self._concurrent: dict[tuple, tuple[list, list[int]]] = {}  # `concurrent`

    @cached_property
    def reach_end(self) -> list[int]:
        """Per block: the blocks whose start is reachable from its end (bitset)."""
        cfg, clean = self.cfg, self.clean
        out = [0] * len(cfg.blocks)
        order = list(reversed(cfg.rpo()))
        tick = cfg.deadline.tick  # blocks x blocks bits: the kernel's deadline bounds it
        changed = True
        while changed:
            changed = False
            for b in order:
                tick()
                acc = 0
                for s in cfg.blocks[b].succs:
                    acc |= 1 << s
                    if clean[s]:
                        acc |= out[s]
                if acc != out[b]:
                    out[b], changed = acc, True
        return out

    def no_separator(self, b: int, lo: int, hi: int) -> bool:
        """No separator at an index in [lo, hi) of block b."""
        return not any(lo <= i < hi for i in self.seps[b])

    def reaches(self, x: Instruction, y: Instruction) -> bool:
        """A path from just after `x` to `y` crosses no separator."""
        bx, i = self.cfg.position(x)
        by, j = self.cfg.position(y)
        if bx == by and i < j and self.no_separator(bx, i + 1, j):
            return True
        if not self.no_separator(bx, i + 1, len(self.cfg.blocks[bx].instructions)):
            return False
        return bool(self.reach_end[bx] >> by & 1) and self.no_separator(by, 0, j)

    def reaching(self, sources: Sequence[Instruction],
                 targets: Sequence[Instruction]) -> list[int]:
        """Per target, the sources (bitset over `sources`) that `reaches` it: one pass over
        the blocks the sources leave, rather than sources x targets questions."""
        cfg = self.cfg
        leaving: dict[int, int] = {}  # per block: the sources that leave it
        inside: dict[int, list[tuple[int, int]]] = {}  # per block: (index, source)
        for k, x in enumerate(sources):
            b, i = cfg.position(x)
            inside.setdefault(b, []).append((i, k))
            if self.no_separator(b, i + 1, len(cfg.blocks[b].instructions)):
                leaving[b] = leaving.get(b, 0) | 1 << k
        into = [0] * len(cfg.blocks)  # per block: the sources that reach its start
        for b, bits in leaving.items():
            for s in _bits(self.reach_end[b]):
                into[s] |= bits
        out = []
        for y in targets:
            b, j = cfg.position(y)
            acc = into[b] if self.no_separator(b, 0, j) else 0
            for i, k in inside.get(b, ()):
                if i < j and self.no_separator(b, i + 1, j):
                    acc |= 1 << k
            out.append(acc)
        return out

    def concurrent(self, points: Sequence[Instruction], branches: Sequence[int]) -> list[int]:
        """Per point, the points (bitset over `points`) another thread may be at while one
        is there (the module docstring); `branches`: the block-varying branches. Asked
        again of the same points (one warp's intervals are often the CTA's), answered
        from a memo."""
        key = (tuple(map(id, points)), tuple(branches))
        hit = self._concurrent.get(key)
        if hit is None:
            hit = self._concurrent[key] = (list(points), self._concurrent_of(points, branches))
        return list(hit[1])

    def _concurrent_of(self, points: Sequence[Instruction],
                       branches: Sequence[int]) -> list[int]:
        cfg = self.cfg
        where = [cfg.position(p) for p in points]
        first, last = self._segments(where)
        start, end = self._forward(first), self._backward(last)
        # per block and segment between separators: the points in it
        segment: dict[tuple[int, int], int] = {}
        seg_of = []
        for k, (b, i) in enumerate(where):
            seg = sum(1 for s in self.seps[b] if s < i)
            segment[(b, seg)] = segment.get((b, seg), 0) | 1 << k
            seg_of.append(seg)
        out = []
        for k, (b, i) in enumerate(where):
            seps = self.seps[b]
            seg = seg_of[k]
            after = 0 if seg < len(seps) else self._from_end(b, start)
            before = 0 if seg > 0 else self._to_start(b, end)
            out.append(segment[(b, seg)] | after | before)
        self._branch_pairs(out, start, first, branches)
        return out

    def _segments(self, where) -> tuple[list[int], list[int]]:
        """Per block: the points before its first separator, and after its last."""
        first = [0] * len(self.cfg.blocks)
        last = [0] * len(self.cfg.blocks)
        for k, (b, i) in enumerate(where):
            seps = self.seps[b]
            if not seps or i < seps[0]:
                first[b] |= 1 << k
            if not seps or i > seps[-1]:
                last[b] |= 1 << k
        return first, last

    def _forward(self, first: list[int]) -> list[int]:
        """Per block: the points reachable from its start."""
        return self._propagate(first, list(reversed(self.cfg.rpo())), "succs")

    def _backward(self, last: list[int]) -> list[int]:
        """Per block: the points from which its end is reachable."""
        return self._propagate(last, self.cfg.rpo(), "preds")

    def _propagate(self, init: list[int], order: list[int], edges: str) -> list[int]:
        """`init` joined, through barrier-free blocks, with what their neighbours along
        `edges` (succs or preds) hold, to a fixed point."""
        out, clean = list(init), self.clean
        tick = self.cfg.deadline.tick
        changed = True
        while changed:
            changed = False
            for b in order:
                tick()
                if not clean[b]:
                    continue
                acc = out[b] | self._gather(b, out, edges)
                if acc != out[b]:
                    out[b], changed = acc, True
        return out

    def _gather(self, b: int, points: list[int], edges: str) -> int:
        acc = 0
        for n in getattr(self.cfg.blocks[b], edges):
            acc |= points[n]
        return acc

    def _from_end(self, b: int, start: list[int]) -> int:
        return self._gather(b, start, "succs")

    def _to_start(self, b: int, end: list[int]) -> int:
        return self._gather(b, end, "preds")

    def _branch_pairs(self, out: list[int], start: list[int], first: list[int],
                      branches: Sequence[int]) -> None:
        """Points on different arms of a block-varying branch run side by side: a point
        on one arm (in `start` of one successor) meets every point of the others.

        A point is on an arm when its block's first segment (`first`) is reached from the
        arm's successor through barrier-free blocks, the same for every point of that
        segment. So what each block's points meet is one forward problem over the CFG
        (`meets[b]`: the other arms of every arm that reaches b) rather than a loop over
        the points of each arm: branches x points was 5.8 million steps on a
        5,000-block kernel."""
        cfg, clean = self.cfg, self.clean
        local = [0] * len(cfg.blocks)
        for d in branches:
            cfg.deadline.check()
            succs = cfg.blocks[d].succs
            arms = [start[s] for s in succs]
            for a, s in enumerate(succs):
                others = 0
                for o, other in enumerate(arms):
                    if o != a:
                        others |= other
                local[s] |= others
        if not any(local):
            return
        order = cfg.rpo()
        # only reachable barrier-free blocks pass a point on (as `_propagate` did)
        passes = [False] * len(cfg.blocks)
        for b in order:
            passes[b] = clean[b]
        meets = list(local)
        tick = cfg.deadline.tick
        changed = True
        while changed:
            changed = False
            for b in order:
                tick()
                acc = meets[b]
                for p in cfg.blocks[b].preds:
                    if passes[p]:
                        acc |= meets[p]
                if acc != meets[b]:
                    meets[b], changed = acc, True
        for b, points in enumerate(first):
            if points and meets[b]:
                for k in _bits(points):
                    out[k] |= meets[b]


def intervals(facts, module: Module, between: str) -> Intervals:
    """The kernel's `Intervals` for threads of different warps (`between="warps"`: CTA
    barriers separate), of one warp (`"lanes"`: warp barriers too) or with no separator
    (`"any"`: plain reachability), made once per facts for every rule that asks."""
    def make(f) -> Intervals:
        if between == "any":
            return Intervals(f.cfg, None)
        made = Intervals(f.cfg, separator(module, warp=between == "lanes"))
        if between == "lanes":  # no warp barrier of its own: the CTA's intervals (and memo)
            cta = intervals(f, module, "warps")
            return cta if cta.seps == made.seps else made
        return made
    return facts.derived(f"intervals {between} {id(module)}", make)


__all__ = ["Intervals", "intervals", "separator", "functions_with", "is_cta_barrier", "is_warp_barrier",
           "control_closure"]
