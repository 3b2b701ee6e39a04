"""What the analysis established, for the rules to read: the state before every
instruction (recomputed from block entry states, so only those are stored), the
memory accesses with their address values, and which branches are divergent.
Rules run on these final facts, never during iteration."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from ..cfg import CFG
from ..domains.lattice import Tri
from ..domains.state import State
from ..domains.value import Value, tri_of
from ..ir.instruction import Instruction
from ..ir.operands import Address, Bracketed, registers_in
from ..ir.traits import MemoryAccess
from .context import Ctx
from .refine import assume
from .transfer import address_value


@dataclass(frozen=True)
class Access:
    """One memory instruction as the warp executes it."""

    insn: MemoryAccess
    block: int
    address: Value  # in the state refined by the instruction's guard
    state: State  # before the instruction, refined by its guard
    guard: Tri  # whether the guard holds (TRUE when unguarded)
    guard_uniform: bool  # every lane agrees on the guard

    @property
    def space(self) -> str:
        return self.insn.space

    @property
    def width(self) -> int:
        return self.insn.access_bytes


class Facts:
    def __init__(self, cfg: CFG, ctx: Ctx, in_states: list[State | None], divergent: set[int],
                 interpreter):
        self.cfg = cfg
        self.ctx = ctx
        self.in_states = in_states
        self.divergent = divergent
        self._interp = interpreter
        self._narrowed: dict[int, tuple] = {}  # id(access) -> (access, `narrowed`)

    @property
    def work(self) -> int:
        """Instructions the fixpoint interpreted (deterministic, unlike seconds)."""
        return self._interp.work

    @property
    def function(self):
        return self.cfg.function

    @property
    def deadline(self):
        """The kernel's time budget (`deadline.py`), for what the rules compute on these
        facts."""
        return self._interp.deadline

    @property
    def sync(self):
        """Each divergent branch's region and merge points (`divergence.py`), as the
        fixpoint found them."""
        return self._interp.sync

    def walk(self) -> Iterator[tuple[int, Instruction, State]]:
        """(block, instruction, state before it) for every reachable instruction,
        in layout order. The state is shared: copy it to keep it."""
        check = self._interp.deadline.check
        for b, block in enumerate(self.cfg.blocks):
            start = self.in_states[b]
            if start is None:
                continue
            state = self._interp._entry_state(b)
            for insn in block.instructions:
                check()  # per instruction: blocks of thousands of them, tens of us each
                yield b, insn, state
                self._interp.step(insn, state)

    def state_before(self, insn: Instruction) -> State | None:
        self._interp.deadline.check()  # a walk over the block so far: per instruction asked
        b, i = self.cfg.position(insn)
        if self.in_states[b] is None:
            return None
        state = self._interp._entry_state(b)
        for earlier in self.cfg.blocks[b].instructions[:i]:
            self._interp.step(earlier, state)
        return state

    def is_reachable(self, insn: Instruction) -> bool:
        return self.in_states[self.cfg.block_of(insn)] is not None

    @cached_property
    def accesses(self) -> list[Access]:
        out = []
        for b, insn, state in self.walk():
            if not isinstance(insn, MemoryAccess):
                continue
            addr = insn.address
            if not isinstance(addr, (Address, Bracketed)):
                continue
            refined, guard, uniform = state, Tri.TRUE, True
            if insn.guard is not None:
                key = insn.guard.register.key
                guard = tri_of(state[key])
                if insn.guard.negated:
                    guard = guard.negate()
                uniform = state[key].is_uniform
                if guard is Tri.FALSE:
                    continue
                refined = state.copy()
                if not assume(refined, key, not insn.guard.negated, self.ctx.linked):
                    continue
            else:
                refined = state.copy()
            value = address_value(addr, refined, self.ctx) if isinstance(addr, Address) else None
            if value is None:
                continue
            out.append(Access(insn, b, value, refined, guard, uniform))
        return out

    def narrowed(self, acc: Access) -> Access | None:
        """`acc` with its address registers narrowed by the relations holding there (an
        address computed before the guard that bounds its index: `relations.py`); None
        when they say no execution gets there. Asked only where the address as computed
        would be out of bounds, which is rare: a small fixed point per access."""
        hit = self._narrowed.get(id(acc))
        if hit is None:
            hit = self._narrowed[id(acc)] = (acc, self._narrow(acc))
        return hit[1]

    def _narrow(self, acc: Access) -> Access | None:
        relations, insn = self.ctx.relations, acc.insn
        keys = [r.key for op in insn.operands if isinstance(op, (Address, Bracketed))
                for r in registers_in(op)]
        if relations is None or not keys:
            return acc
        state = acc.state.copy()
        changed = relations.narrow(state, keys, relations.before(insn), self.ctx)
        if not changed:
            return None if changed is None else acc
        value = address_value(insn.address, state, self.ctx)
        return Access(insn, acc.block, value, state, acc.guard, acc.guard_uniform)

    def branch_is_divergent(self, block: int) -> bool:
        return block in self.divergent
