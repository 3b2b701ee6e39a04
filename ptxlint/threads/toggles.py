"""Registers a loop flips between two values (`pin = 1 - pin; pout = 1 - pout`): the
joint values of block-uniform loop-carried registers, for `thread_exprs`.

A *toggle* is a register with exactly two definitions, both unguarded:

- an *init* setting a constant c (`mov r, 1`, or `mov` of a register that is itself a
  constant);
- a *step* applying an involution f with a constant (`sub r, C, r`: f(x) = C - x;
  `xor r, r, C`; `not r, r`), so f(f(x)) = x.

After the last run of the init, r is c when the step has run an even number of times
since, f(c) when odd. Toggles whose inits share one block I and whose steps share one
other block S form a *group*: every visit of I sets all of them, every visit of S flips
all of them, so at any point that I dominates and that lies in neither I nor S between
two of the group's definitions, one parity P in {0, 1} (the visits of S since the last
visit of I, mod 2) gives every member: r = c + (f(c) - c) * P. The parity is one leaf
shared by the group (a `count` leaf, its identity that of the first member, whose
definitions sit in I and S like the others'), so a read of `buf[pin]` and a write of
`buf[pout]` in the same trip are compared for the same P: `pin + pout == 1` holds.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..domains.strided import StridedInterval as SI
from ..ir.instruction import Instruction
from ..ir.operands import Immediate, Register
from ..ir.types import Kind

if TYPE_CHECKING:
    from .thread_exprs import ExprBuilder

MAX_DEPTH = 4  # `mov` links followed to find a constant


@dataclass(frozen=True)
class Toggle:
    key: str
    init: Instruction
    step: Instruction
    first: int  # the value the init sets
    second: int  # f(first), wrapped to the register's width
    bits: int


@dataclass(frozen=True)
class Group:
    """Toggles initialised in one block and stepped in another: `leaf_key` names the
    parity leaf (the first member's register)."""

    members: tuple[Toggle, ...]

    @property
    def leaf_key(self) -> str:
        return self.members[0].key

    def defs(self) -> list[Instruction]:
        return [d for m in self.members for d in (m.init, m.step)]


def toggle_groups(builder: ExprBuilder) -> dict[str, Group]:
    """Register key -> its group, for every toggle of the kernel (computed once)."""
    hit = getattr(builder, "_toggle_groups", None)
    if hit is None:
        found: dict[tuple[int, int], list[Toggle]] = {}
        pairs = [(key, defs) for key, defs in builder.defs.items() if len(defs) == 2]
        for key, defs in sorted(pairs):  # a toggle has two definitions
            t = _toggle(builder, key, defs)
            if t is not None:
                where = (builder.cfg.block_of(t.init), builder.cfg.block_of(t.step))
                if where[0] != where[1]:
                    found.setdefault(where, []).append(t)
        hit = {}
        for members in found.values():
            group = Group(tuple(members))
            for m in members:
                hit[m.key] = group
        builder._toggle_groups = hit  # type: ignore[attr-defined]
    return hit


def parity_holds(builder: ExprBuilder, group: Group, anchor: Instruction) -> bool:
    """Whether one parity gives every member at `anchor`: the init block dominates it,
    and it does not sit between two of the group's definitions in one block."""
    cfg = builder.cfg
    ib, ipos = cfg.position(group.members[0].init)
    ab, apos = cfg.position(anchor)
    if ab != ib and not cfg.dominates(ib, ab):
        return False
    here = [cfg.position(d)[1] for d in group.defs() if cfg.block_of(d) == ab]
    if ab == ib and apos <= max(here):
        return False  # before the inits of this visit: the value of an earlier one
    return not here or apos <= min(here) or apos > max(here)


def parity_si() -> SI:
    return SI.range(0, 1)


def _toggle(builder: ExprBuilder, key: str, defs: list[Instruction]) -> Toggle | None:
    if len(defs) != 2 or any(d.guard is not None for d in defs):
        return None
    for step, init in (defs, defs[::-1]):
        f = _involution(builder, step, key)
        c = _constant_mov(builder, init, 0)
        if f is None or c is None:
            continue
        bits = f[2]
        mask = (1 << bits) - 1
        first = c & mask
        second = ((f[1] - first) if f[0] == "sub" else (first ^ f[1])) & mask
        return Toggle(key, init, step, first, second, bits)
    return None


def _involution(builder: ExprBuilder, insn: Instruction, key: str
                ) -> tuple[str, int, int] | None:
    """("sub", C, bits) for `sub r, C, r`, ("xor", C, bits) for `xor r, r, C` / `not r, r`."""
    t = getattr(insn, "type", None)
    if t is None or t.kind is Kind.FLOAT or "cc" in insn.mods:
        return None
    srcs = insn.sources
    mine = [isinstance(s, Register) and s.key == key for s in srcs]
    if insn.opcode == "not" and mine == [True]:
        return "xor", -1, t.bits
    if insn.opcode == "sub" and mine == [False, True]:
        c = _constant(builder, srcs[0], insn, 0)
        return None if c is None else ("sub", c, t.bits)
    if insn.opcode == "xor" and sorted(mine) == [False, True]:
        c = _constant(builder, srcs[mine.index(False)], insn, 0)
        return None if c is None else ("xor", c, t.bits)
    return None


def _constant_mov(builder: ExprBuilder, insn: Instruction, depth: int) -> int | None:
    if insn.opcode != "mov" or len(insn.sources) != 1:
        return None
    t = getattr(insn, "type", None)
    if t is None or t.kind is Kind.FLOAT:
        return None
    return _constant(builder, insn.sources[0], insn, depth)


def _constant(builder: ExprBuilder, op, at: Instruction, depth: int) -> int | None:
    """An integer immediate, or a register whose only definition (dominating `at`) is a
    `mov` of one."""
    if isinstance(op, Immediate):
        return None if op.is_float else int(op.value)
    if not isinstance(op, Register) or op.is_special or depth >= MAX_DEPTH:
        return None
    defs = builder.defs.get(op.key, [])
    if len(defs) != 1 or defs[0].guard is not None or not builder.dominates(defs[0], at):
        return None
    return _constant_mov(builder, defs[0], depth + 1)


__all__ = ["Toggle", "Group", "toggle_groups", "parity_holds", "parity_si"]
