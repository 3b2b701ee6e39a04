"""What the analysis established, for the rules to read: the state before every
instruction (recomputed from block entry states, so only those are stored), the
memory accesses with their address values, and which branches are divergent.
Rules run on these final facts, never during iteration."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from itertools import islice

from ..cfg import CFG
from ..domains.lattice import Tri
from ..domains.state import State
from ..domains.value import Value, tri_of
from ..ir.instruction import Instruction
from ..ir.operands import Address, Bracketed, Operand, registers_in
from ..ir.traits import MemoryAccess
from .context import ASSUMED_BUFFER_ALIGN, Ctx
from .divergence import SyncDependence
from .refine import assume
from .transfer.table import address_value, value_of


@dataclass(frozen=True)
class FixpointParams:
    """The fixpoint's knobs (`interp/worklist.py`), kept here beside `Facts`: public, as
    the rules hand them to the re-analyses they ask lint for (`RuleContext.reanalyze`)."""

    join_visits: int = 2  # plain joins at a loop head before widening
    max_visits: int = 64  # a block visited this often goes to top
    narrowing_passes: int = 1
    # seconds of the `Deadline` that `analysis.analyze` makes when its caller gives none
    time_budget: float = 5.0
    # instructions the fixpoint may interpret before it gives up (`WorkExceeded`): a
    # budget for optional re-analyses that gives the same answer on every machine
    max_work: int | None = None
    memoize: bool = True  # replay an instruction whose inputs are those of its last run
    # interpret only what the rules can observe (`relevance.py`); other registers unknown
    rules_only: bool = False


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

    @cached_property
    def width(self) -> int:  # rules ask it per pair of accesses: computed once
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
        self._derived: dict[str, object] = {}  # `derived`
        self._block_accesses: dict[int, list[Access]] = {}  # `block_accesses`

    def derived(self, key: str, make):
        """`make(self)`, made once under `key` for every rule that asks: analyses built
        on these facts (the block variance, the thread expressions, each access's lanes).
        They refer back to the facts, so `release()` drops them when the kernel's lint
        is done: a cycle only the cyclic collector frees, and a lint pauses it."""
        if key not in self._derived:
            self._derived[key] = make(self)
        return self._derived[key]

    def release(self) -> None:
        """Drop what `derived` made (and what the facts it made hold): the kernel's
        memory goes when its lint ends, not at the next collection. Held in a cache
        keyed weakly by the facts, each kernel's states stayed to the end of the run (a
        1M-line module's lint peaked at 2.8 GB)."""
        made, self._derived = list(self._derived.values()), {}
        self._narrowed = {}
        for value in made:
            if isinstance(value, Facts):
                value.release()

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

    def entry_state(self, b: int) -> State:
        """A fresh copy of block `b`'s state at the fixpoint, as the interpreter enters it
        (refined by the edge it came in on)."""
        return self._interp.entry_state(b)

    def step(self, insn: Instruction, state: State) -> None:
        """Interpret `insn` on `state` in place, as the fixpoint did: how the state after an
        instruction is had (`walk`, `state_before`, the per-thread questions)."""
        self._interp.step(insn, state)

    def out_state(self, b: int) -> State | None:
        """Block `b`'s state at its end (at its terminator), None when unreachable."""
        return self._interp.out_states[b]

    def out_edges(self, b: int) -> list[tuple[int, State]]:
        """(successor, state) for each edge out of block `b`, each state refined by the
        branch condition that takes the edge, as the fixpoint refined it."""
        state = self._interp.out_states[b]
        return [] if state is None else list(self._interp.edges(b, state))

    def value_of(self, op: Operand, state: State, bits: int = 64) -> Value:
        """The abstract value of an operand in `state` (a state of these facts)."""
        return value_of(op, state, self.ctx, bits)

    def address_value(self, addr: Address, state: State) -> Value | None:
        """The abstract address an `[...]` operand names in `state`."""
        return address_value(addr, state, self.ctx)

    def walk(self) -> Iterator[tuple[int, Instruction, State]]:
        """(block, instruction, state before it) for every reachable instruction,
        in layout order. The state is shared: copy it to keep it."""
        for b in range(len(self.cfg.blocks)):
            for insn, state in self._walk_block(b):
                yield b, insn, state

    def _walk_block(self, b: int) -> Iterator[tuple[Instruction, State]]:
        """`walk` over block `b` alone (nothing when it is unreachable)."""
        if self.in_states[b] is None:
            return
        check = self._interp.deadline.check
        state = self.entry_state(b)
        for insn in self.cfg.blocks[b].instructions:
            check()  # per instruction: blocks of thousands of them, tens of us each
            yield insn, state
            self.step(insn, state)

    def state_before(self, insn: Instruction) -> State | None:
        self._interp.deadline.check()  # a walk over the block so far: per instruction asked
        b, i = self.cfg.position(insn)
        if self.in_states[b] is None:
            return None
        state = self.entry_state(b)
        for earlier in self.cfg.blocks[b].instructions[:i]:
            self.step(earlier, state)
        return state

    def is_reachable(self, insn: Instruction) -> bool:
        return self.in_states[self.cfg.block_of(insn)] is not None

    @cached_property
    def accesses(self) -> list[Access]:
        """Every memory access of a reachable instruction, in layout order."""
        return [acc for b in range(len(self.cfg.blocks)) for acc in self.block_accesses(b)]

    def access_of(self, insn: Instruction) -> Access | None:
        """`insn`'s entry of `accesses` (None when it has none), replaying its block only:
        a re-analysis is asked about one access."""
        return next((acc for acc in self.block_accesses(self.cfg.block_of(insn))
                     if acc.insn is insn), None)

    def block_accesses(self, b: int) -> list[Access]:
        """The entries of `accesses` in block `b` (made once)."""
        hit = self._block_accesses.get(b)
        if hit is None:
            hit = self._block_accesses[b] = self._make_accesses(b)
        return hit

    def _make_accesses(self, b: int) -> list[Access]:
        out: list[Access] = []
        insns = self.cfg.blocks[b].instructions
        last = next((i for i in range(len(insns) - 1, -1, -1)
                     if isinstance(insns[i], MemoryAccess)), None)
        if last is None:
            return out
        # the walk stops at the block's last access: what follows changes no state here
        for insn, state in islice(self._walk_block(b), last + 1):
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


# what rules read from the fixpoint besides `Facts` (they import nothing else of interp/)
__all__ = ["Access", "Facts", "FixpointParams", "SyncDependence", "ASSUMED_BUFFER_ALIGN",
           "assume"]
