"""Member masks of the warp-synchronous instructions, thread by thread, for
`warp-sync-mask`: which threads of a block execute such an instruction, which lanes its
mask names, and which lanes of the warp are running elsewhere when it executes.

- *Who executes it*: `active_lanes.block_lanes` on the instruction (its guard and every
  branch deciding its block, evaluated thread by thread with the block shape known).
- *The mask*: an immediate or a register the facts pin to one value; an expression of the
  thread indices (`0xffff << (%laneid & 16)`, what a `thread_block_tile<16>` passes);
  `activemask.b32` (the lanes of the warp that execute it) and `vote.sync.ballot.b32`
  (the lanes that execute it and hold the predicate, within its own mask), each
  evaluated where it runs; and `and`/`or`/`xor`/`not` of those. Anything else (a ballot
  of loaded data, a mask from memory) is unknown.
- *Who is elsewhere*: a lane turned away by a branch deciding the instruction that may
  split a warp and whose way out does more than leave the kernel (`BarrierSplits.
  exits_silently`): it reached that branch (evaluated the same way) and its predicate
  sent it away. A lane that only leaves the kernel has exited, and `.sync` instructions
  wait only for lanes that have not.

Everything is over one block of known shape (`ThreadSpace`); a question whose answer
depends on values the evaluator cannot compute gets None, or is not `exact`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..domains.lattice import Tri
from ..domains.value import Value, tri_of
from ..interp.facts import Access, Facts, assume
from ..ir.instruction import Instruction
from ..ir.instructions.move import ShflSync
from ..ir.instructions.sync import (Activemask, BarWarpSync, ElectSync, MatchSync, ReduxSync,
                                    Vote, VoteSync)
from ..ir.module import Module
from ..ir.operands import Immediate, Negated, Operand, Register
from ..ir.traits import Branch
from .active_lanes import block_lanes
from .barrier_intervals import control_closure
from .barrier_split import BarrierSplits
from .thread_eval import Evaluator, ThreadSpace, Unevaluable
from .thread_exprs import expr_builder

FULL = 0xFFFFFFFF
DEPTH = 8  # definitions followed through and/or/xor/not/mov to a ballot or activemask
_BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
_SYNC = (ShflSync, BarWarpSync, ElectSync, VoteSync, MatchSync, ReduxSync, Vote)


def member_mask(insn: Instruction) -> Operand | None:
    """The member-mask operand of a warp-synchronous instruction (None: not one)."""
    if not isinstance(insn, _SYNC):  # most instructions: one test
        return None
    if isinstance(insn, ShflSync):
        return insn.membermask
    if isinstance(insn, BarWarpSync):
        return insn.member_mask
    if isinstance(insn, ElectSync):
        return insn.operands[1] if len(insn.operands) == 2 else None
    if isinstance(insn, (VoteSync, MatchSync, ReduxSync)) or \
            isinstance(insn, Vote) and "sync" in insn.mods:
        return insn.operands[-1] if len(insn.operands) == 3 else None
    return None


@dataclass(frozen=True)
class Runs:
    """The threads of the block that may execute an instruction (`any`), that execute it
    whenever the block runs it (`all`), and whether the two are exactly known."""

    any: np.ndarray
    all: np.ndarray
    exact: bool


@dataclass
class Elsewhere:
    """Lanes certainly running elsewhere when an instruction executes (`lanes`), and the
    branches that may send lanes away but could not be evaluated (`unknown`)."""

    lanes: np.ndarray
    unknown: list[Instruction] = field(default_factory=list)


class MemberMasks:
    """The questions of the module docstring over one kernel's final facts."""

    def __init__(self, facts: Facts, module: Module):
        self.facts = facts
        self.cfg = facts.cfg
        self.splits = BarrierSplits(facts, module)
        self.builder = expr_builder(facts)
        self._runs: dict[int, Runs | None] = {}

    @cached_property
    def space(self) -> ThreadSpace:
        return ThreadSpace.of(self.facts)

    @cached_property
    def lane(self) -> np.ndarray:
        return self.space.index("lane")

    @cached_property
    def warp(self) -> np.ndarray:
        return self.space.index("warp")

    # ---- who executes it ---------------------------------------------------------------------
    def runs(self, insn: Instruction) -> Runs | None:
        if id(insn) not in self._runs:
            self._runs[id(insn)] = self._compute_runs(insn)
        return self._runs[id(insn)]

    def _compute_runs(self, insn: Instruction) -> Runs | None:
        facts = self.facts
        state = self.builder.state(insn)
        if state is None:
            return None
        refined, guard, uniform = state.copy(), Tri.TRUE, True
        if insn.guard is not None:
            key = insn.guard.register.key
            guard = tri_of(state[key])
            guard = guard.negate() if insn.guard.negated else guard
            uniform = state[key].is_uniform
            none = np.zeros(self.space.n, bool)
            if guard is Tri.FALSE or not assume(refined, key, not insn.guard.negated,
                                                facts.ctx.linked):
                return Runs(none, none, True)
        acc = Access(insn, self.cfg.block_of(insn), Value.top(), refined, guard,  # type: ignore[arg-type]
                     uniform)
        lanes = block_lanes(facts, acc, address=False)
        if lanes is None:
            return None
        return Runs(lanes.mask.any(axis=0), lanes.mask.all(axis=0), lanes.exact)

    def _reaches_block(self, b: int) -> Runs | None:
        """The threads that reach block `b`: those running its first instruction, when
        that one has no guard of its own."""
        first = self.cfg.blocks[b].instructions[0] if self.cfg.blocks[b].instructions else None
        return None if first is None or first.guard is not None else self.runs(first)

    # ---- the mask ----------------------------------------------------------------------------------
    def mask(self, insn: Instruction) -> np.ndarray | None:
        """Per thread of the block, the member mask it passes (int64), or None."""
        op = member_mask(insn)
        return None if op is None else self.value(op, insn, 0)

    def value(self, op: Operand, at: Instruction, depth: int) -> np.ndarray | None:
        n = self.space.n
        if isinstance(op, Immediate):
            return None if op.is_float else np.full(n, int(op.value) & FULL, np.int64)
        if not isinstance(op, Register):
            return None
        state = self.builder.state(at)
        v = state[op.key].singleton() if state is not None and not op.is_special else None
        if v is not None:
            return np.full(n, v & FULL, np.int64)
        defs = self.builder.defs.get(op.key, [])
        if len(defs) == 1 and depth < DEPTH and self.builder.dominates(defs[0], at) \
                and defs[0].guard is None:
            found = self._defined(defs[0], depth + 1)
            if found is not None:
                return found
        return self._expression(op, at)

    def _defined(self, d: Instruction, depth: int) -> np.ndarray | None:
        if isinstance(d, Activemask):
            runs = self.runs(d)
            return None if runs is None or not self._sure(runs) else self.warp_bits(runs.all)
        if isinstance(d, (Vote, VoteSync)) and "ballot" in d.mods:
            return self._ballot(d, depth)
        if d.opcode in _BITWISE or d.opcode in ("not", "mov"):
            srcs = [self.value(s, d, depth) for s in d.sources]
            if not srcs or any(s is None for s in srcs):
                return None
            if d.opcode == "not":
                return ~srcs[0] & FULL  # type: ignore[operator]
            if d.opcode == "mov":
                return srcs[0]
            return _BITWISE[d.opcode](srcs[0], srcs[1]) & FULL  # type: ignore[arg-type]
        return None

    def _ballot(self, d: Instruction, depth: int) -> np.ndarray | None:
        """`vote.sync.ballot.b32 d, {!}p, m`: the lanes of the warp that execute it with
        `p` true, within `m` (the emulator's and the ISA's reading)."""
        runs = self.runs(d)
        pred = self._predicate(d.operands[1], d)
        member = self.value(d.operands[2], d, depth) if len(d.operands) > 2 else \
            np.full(self.space.n, FULL, np.int64)
        if runs is None or not self._sure(runs) or pred is None or member is None:
            return None
        return self.warp_bits(runs.all & pred) & member

    def _predicate(self, op: Operand, at: Instruction) -> np.ndarray | None:
        negated = isinstance(op, Negated)
        reg = op.operand if isinstance(op, Negated) else op
        if isinstance(reg, Immediate):
            return np.full(self.space.n, bool(int(reg.value)) != negated)
        if not isinstance(reg, Register):
            return None
        state = self.builder.state(at)
        v = state[reg.key].singleton() if state is not None else None
        if v is not None:
            return np.full(self.space.n, bool(v) != negated)
        got = self._expression(reg, at)
        return None if got is None else (got != 0) != negated

    def _expression(self, reg: Register, at: Instruction) -> np.ndarray | None:
        """The register as an expression of the thread indices and constants."""
        node = self.builder.at(at).register(reg, at)
        if node.opaque:
            return None
        try:
            v = Evaluator(self.space, {}).eval(node)
        except Unevaluable:
            return None
        if v.sym:
            return None
        conc = np.asarray(v.conc, np.int64)
        if conc.ndim == 2 and conc.shape[0] != 1:
            return None
        return np.broadcast_to(conc.reshape(-1) if conc.ndim else conc, (self.space.n,)) & FULL

    def warp_bits(self, sel: np.ndarray) -> np.ndarray:
        """Per thread, the bits of the lanes of its warp that `sel` marks."""
        return self.warp_or(np.left_shift(1, self.lane), sel)

    def warp_or(self, values: np.ndarray, sel: np.ndarray) -> np.ndarray:
        """Per thread, the OR of `values` over the threads of its warp that `sel` marks."""
        per = np.zeros(int(self.warp.max(initial=0)) + 1, np.int64)
        np.bitwise_or.at(per, self.warp[sel], np.asarray(values, np.int64)[sel])
        return per[self.warp]

    def _sure(self, runs: Runs) -> bool:
        return runs.exact and self.space.exact and bool((runs.any == runs.all).all())

    # ---- who is elsewhere --------------------------------------------------------------------------
    def elsewhere(self, insn: Instruction) -> Elsewhere:
        cfg, facts = self.cfg, self.facts
        b = cfg.block_of(insn)
        out = Elsewhere(np.zeros(self.space.n, bool))
        if insn.guard is not None:
            state = self.builder.state(insn)
            if state is not None and not state[insn.guard.register.key].is_uniform:
                # the lanes the guard turns away go on after it: running elsewhere
                runs, here = self.runs(insn), self._reaches_block(b)
                if runs is None or here is None or not self._sure(runs) \
                        or not self._sure(here):
                    out.unknown.append(insn)
                else:
                    out.lanes |= here.all & ~runs.any
        for d in control_closure(cfg, b):
            if not facts.branch_is_divergent(d) or self.splits.exits_silently(d, b):
                continue
            term = cfg.blocks[d].terminator
            away = self._away(d, b)
            at_d = self._reaches_block(d)
            if away is None or at_d is None or not self._sure(at_d):
                out.unknown.append(term)  # type: ignore[arg-type]
                continue
            out.lanes |= away & at_d.all
        return out

    def _away(self, d: int, b: int) -> np.ndarray | None:
        """Per thread, whether branch d would send it where block b is not reached
        without passing d again."""
        term = self.cfg.blocks[d].terminator
        if not isinstance(term, Branch) or term.guard is None or not term.targets:
            return None
        taken = self.splits.truths(term.guard.register, term, term.guard.negated)
        succs = self.cfg.blocks[d].succs
        target = self.cfg.by_label.get(term.targets[0])
        if taken is None or target not in succs:
            return None
        reach = [self.cfg.reaches_avoiding(s, b, d) for s in succs]
        if all(reach) or not any(reach):
            return None
        return taken if not reach[succs.index(target)] else ~taken


def sync_sites(facts: Facts) -> list[Instruction]:
    """The reachable instructions with a member mask, in layout order."""
    return [insn for b, block in enumerate(facts.cfg.blocks) if facts.in_states[b] is not None
            for insn in block.instructions if member_mask(insn) is not None]


__all__ = ["MemberMasks", "Runs", "Elsewhere", "member_mask", "sync_sites", "FULL"]
