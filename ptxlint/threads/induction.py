"""Loop counters `r = init; ...; r += C`: how many increments may have run, for the
per-thread expressions of `thread_exprs` (`init + C*k`).

The facts often lose a counter's range once a loop is widened (`%r69` in `{1, 5, ...,
2^31}`); another counter of the same loop may still be bounded (`%r68` in `{4..32 step
4}` counting down to 0). A counter whose increment runs once per trip takes a new value
each trip, all in the range the facts give it there, so the loop runs at most
(hi - lo) / |C| + 1 trips, which bounds every counter of the loop.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..domains.strided import StridedInterval as SI
from ..ir.instruction import Instruction
from ..ir.operands import Immediate, Register

if TYPE_CHECKING:
    from .thread_exprs import ExprBuilder


def trip_range(builder: ExprBuilder, reg: Register, step: Instruction, inits: list[Instruction],
               at: Instruction, c: int) -> SI | None:
    """Completed increments k of `r = init + c*k` at `at`: at most (hi - lo) / |c| when r's
    values there lie below hi and init's above lo (c > 0; mirrored for c < 0), and at most
    one more than the trips of the loop around `step` that a counter bounds (`loop_trips`)
    when every init runs once per entry to that loop."""
    bounds = []
    v = _si(builder.state(at), reg.key)
    first = _initial_range(builder, reg, inits)
    if v is not None and first is not None and c:
        far, near = (v.hi, first.lo) if c > 0 else (v.lo, first.hi)
        if far is not None and near is not None:
            bounds.append((far - near) // c)
    sb = builder.cfg.block_of(step)
    loops = [lp for lp in builder.cfg.natural_loops().values() if sb in lp.body]
    inner = min(loops, key=lambda lp: len(lp.body)) if loops else None
    if inner is not None and all(builder.cfg.block_of(d) not in inner.body and all(
            builder.cfg.block_of(d) in lp.body for lp in loops if lp is not inner)
            for d in inits):
        trips = loop_trips(builder, sb)
        if trips is not None:  # n complete trips, and `step` perhaps in the one after
            bounds.append(trips if _before_step(builder, at, step, inner) else trips + 1)
    return SI.range(0, max(0, min(bounds))) if bounds else None


def loop_trips(builder: ExprBuilder, block: int) -> int | None:
    """How many times the innermost loop around `block` may take a back edge (so complete
    a trip) per entry: a counter `r = r + C` incremented once per trip (its block
    dominates every latch, nothing redefines it in the loop) holds a new value on each
    back edge, all in the range the refined facts give it on the back edges."""
    loops = [lp for lp in builder.cfg.natural_loops().values() if block in lp.body]
    if not loops:
        return None
    loop = min(loops, key=lambda lp: len(lp.body))
    if loop.head not in builder.trips:
        builder.trips[loop.head] = _loop_trips(builder, loop)
    return builder.trips[loop.head]


def _loop_trips(builder: ExprBuilder, loop) -> int | None:
    best = None
    for b in loop.body:
        if not all(builder.cfg.dominates(b, latch) for latch in loop.latches):
            continue
        for insn in builder.cfg.blocks[b].instructions:
            for reg in insn.defs:
                c = self_increment(insn, reg)
                if c is None or any(d is not insn and builder.cfg.block_of(d) in loop.body
                                    for d in builder.defs.get(reg.key, [])):
                    continue
                v = _on_back_edges(builder, loop, reg.key)
                if v is not None and v.lo is not None and v.hi is not None:
                    n = (v.hi - v.lo) // abs(c) + 1
                    best = n if best is None else min(best, n)
    return best


def _on_back_edges(builder: ExprBuilder, loop, key: str) -> SI | None:
    """The values register `key` may hold on the loop's back edges (the edge states the
    fixpoint refined by the latches' branch conditions); bottom when none is taken."""
    facts = builder.facts
    out = SI.bottom()
    for latch in loop.latches:
        for succ, edge in facts.out_edges(latch):
            if succ == loop.head:
                v = _si(edge, key)
                if v is None:
                    return None
                out = out.join(v)
    return out


def self_increment(insn: Instruction, reg: Register) -> int | None:
    """C when `insn` is `add r, r, C` / `add r, C, r` / `sub r, r, C` (no guard)."""
    if insn.guard is not None or insn.opcode not in ("add", "sub") or "cc" in insn.mods:
        return None
    srcs = insn.sources
    if len(srcs) != 2:
        return None
    a, b = srcs
    if isinstance(a, Register) and a.key == reg.key and isinstance(b, Immediate) \
            and not b.is_float:
        return int(b.value) if insn.opcode == "add" else -int(b.value)
    if insn.opcode == "add" and isinstance(b, Register) and b.key == reg.key \
            and isinstance(a, Immediate) and not a.is_float:
        return int(a.value)
    return None


def _before_step(builder: ExprBuilder, at: Instruction, step: Instruction, loop) -> bool:
    """`at` runs before `step` in every trip of `loop`: the increments done when a thread
    is at `at` are those of the trips it completed."""
    (ba, i), (bs, j) = builder.cfg.position(at), builder.cfg.position(step)
    if ba not in loop.body:
        return False
    if ba == bs:
        return i < j
    return bs != loop.head and builder.cfg.dominates(ba, bs)


def _initial_range(builder: ExprBuilder, reg: Register, inits: list[Instruction]) -> SI | None:
    """The values `reg` may hold just after any of its initial definitions."""
    out = None
    for d in inits:
        b, i = builder.cfg.position(d)
        block = builder.cfg.blocks[b].instructions
        if i + 1 < len(block):
            v = _si(builder.state(block[i + 1]), reg.key)
        else:
            state = builder.state(d)
            if state is None:
                continue
            after = state.copy()
            builder.facts.step(d, after)
            v = _si(after, reg.key)
        if v is None:
            return None
        out = v if out is None else out.join(v)
    return out


def _si(state, key: str) -> SI | None:
    v = state.regs.get(key) if state is not None else None
    return v.si if v is not None and v.region is None else None


__all__ = ["trip_range", "loop_trips", "self_increment"]
