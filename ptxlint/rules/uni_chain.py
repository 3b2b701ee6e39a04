"""Why a register read by a `.uni` instruction may differ between lanes: a def-use chain
(`Provenance`) from the operand back through each reaching definition whose result
differs between lanes, to a special register (`%tid.x`), a per-lane load or atomic, or
a merge of lanes that took different paths (a divergent branch's arms, or the exit of a
loop whose lanes leave at different iterations). `divergent-bra-uni` words it.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

from ..domains.state import State
from ..interp.facts import Facts, SyncDependence
from ..ir.instruction import Instruction
from ..ir.operands import Register
from ..ir.traits import Branch, Call, MemoryAccess, Terminator

MAX_DEPTH = 24  # chain steps followed before giving up ("...")
SHOWN = 7  # chain steps a message shows; longer chains keep both ends
PER_THREAD = ("local", "param")  # one address, a different location in every lane
RANK = {"control": 1, "unknown": 2}  # which explanation to prefer; origins rank 0


# ---- the chain ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    text: str  # "`%tid.x`", "`mov.u32 %r1`", "`%r2` is assigned under ..."
    line: int | None


@dataclass
class Chain:
    """Why a register differs between lanes, from its origin to the use."""

    source: str  # "%tid.x", "control", "ld.local.u32", "unknown"
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def copy(self) -> "Chain":
        return Chain(self.source, list(self.steps), list(self.notes))

    def then(self, step: Step) -> "Chain":
        self.steps.append(step)
        return self

    @property
    def lines(self) -> list[int]:
        return [s.line for s in self.steps if s.line is not None]

    def render(self) -> str:
        texts = [s.text for s in self.steps]
        if len(texts) > SHOWN:
            texts = texts[:2] + ["..."] + texts[-(SHOWN - 3):]
        return " -> ".join(texts)


def line_of(insn: Instruction) -> int | None:
    return insn.span.line if insn.span is not None else None


def guard_text(insn: Instruction) -> str:
    return f"{insn.guard} " if insn.guard is not None else ""


def def_step(insn: Instruction, reg: Register) -> Step:
    return Step(f"`{guard_text(insn)}{insn.full_opcode} {reg.name}`", line_of(insn))


class Provenance:
    """Def-use search over one function's final facts (see the module docstring)."""

    def __init__(self, facts: Facts):
        self.facts = facts
        self.cfg = facts.cfg

    @cached_property
    def sync(self) -> SyncDependence:
        return self.facts.sync  # the fixpoint's: the divergent branches' regions are known

    def state_after(self, insn: Instruction) -> State | None:
        before = self.facts.state_before(insn)
        if before is None:
            return None
        after = before.copy()
        self.facts.step(insn, after)
        return after

    # -- reaching definitions ---------------------------------------------------------------
    def _last_def(self, block: int, key: str, end: int | None = None) -> Instruction | None:
        for insn in reversed(self.cfg.blocks[block].instructions[:end]):
            if any(r.key == key for r in insn.defs):
                return insn
        return None

    def reaching(self, key: str, at: Instruction) -> tuple[list[Instruction], list[int], bool]:
        """(definitions of `key` that reach `at`, merge blocks crossed on the way back
        where divergence made `key` varying (nearest first), whether the entry is
        reached with no definition: an uninitialised or incoming register)."""
        b, i = self.cfg.position(at)
        local = self._last_def(b, key, i)
        if local is not None:
            return [local], [], False
        defs: list[Instruction] = []
        merges: list[int] = []
        entry, crossed, todo = False, set(), deque([b])
        tick = self.facts.deadline.tick
        while todo:
            tick()
            x = todo.popleft()
            if x in crossed:
                continue
            crossed.add(x)
            if key in self.sync.tainted(x, self.facts.divergent):
                merges.append(x)
            entry |= x == self.cfg.entry
            for p in self.cfg.blocks[x].preds:
                if self.facts.in_states[p] is None:
                    continue
                d = self._last_def(p, key)
                if d is None:
                    todo.append(p)
                elif d not in defs:
                    defs.append(d)
        defs.sort(key=lambda d: line_of(d) or 0)
        return defs, merges, entry

    # -- explanations -----------------------------------------------------------------------
    def explain(self, reg: Register, at: Instruction, depth: int = 0) -> Chain:
        """Why `reg`, read by `at`, may differ between lanes; the chain ends before `at`.
        Memoised per (register, reader); a cycle back to a pending question is "unknown"."""
        key = (reg.key, id(at))
        if key not in self._memo:
            self._memo[key] = Chain("unknown", [Step("...", None)])  # pending: a cycle
            self._memo[key] = self._explain(reg, at, depth)
        return self._memo[key].copy()

    @cached_property
    def _memo(self) -> dict[tuple[str, int], Chain]:
        return {}

    def _explain(self, reg: Register, at: Instruction, depth: int) -> Chain:
        if reg.is_special:
            return Chain(reg.name, [Step(f"`{reg.name}`", None)])
        if depth > MAX_DEPTH:
            return Chain("unknown", [Step("...", None)])
        defs, merges, entry = self.reaching(reg.key, at)
        if merges:
            return self.control(reg, merges[0], depth)
        for d in defs:
            after = self.state_after(d)
            if after is not None and not after[reg.key].is_uniform:
                return self.through(d, reg, depth)
        what = "is read before any assignment" if entry else \
            "is not provably warp-uniform (the analysis lost track of it)"
        return Chain("unknown", [Step(f"`{reg.name}` {what}", None)])

    def through(self, d: Instruction, reg: Register, depth: int) -> Chain:
        """`d` wrote a varying `reg`: follow the operand of `d` that made it so,
        preferring one that leads to a lane-dependent origin over control or unknown."""
        before = self.facts.state_before(d)
        step = def_step(d, reg)
        if before is None:
            return Chain("unknown", [step])
        varying = [r for r in d.uses if not before[r.key].is_uniform]
        if d.guard is not None:  # a guarded write keeps the old value in lanes it skips
            varying += [r for r in d.defs if r.key == reg.key and not before[r.key].is_uniform]
        if not varying:
            return self.origin(d, step)
        chains = [self.explain(r, d, depth + 1) for r in dict.fromkeys(varying)]
        best = min(chains, key=lambda c: RANK.get(c.source, 0))
        return best.then(step)

    @staticmethod
    def origin(d: Instruction, step: Step) -> Chain:
        """`d` reads only uniform registers yet gives each lane its own value."""
        if isinstance(d, MemoryAccess) and d.space in PER_THREAD:
            why = f"each lane reads its own `.{d.space}` copy"
        else:
            why = f"`{d.opcode}` may give each lane its own result"
        return Chain(d.full_opcode, [step], [f"{step.text} at line {step.line}: {why}"])

    def control(self, reg: Register, merge: int, depth: int) -> Chain:
        """`reg` is varying at `merge` because lanes arrive there from a divergent branch
        having taken different paths."""
        branch = self._culprit(reg.key, merge)
        term = self.cfg.blocks[branch].terminator
        line = line_of(term) if term is not None else None
        loop = self._exited_loop(branch, merge)
        if loop:
            text = (f"`{reg.name}` is live out of a loop whose lanes leave at different "
                    f"iterations (exit branch at line {line})")
        else:
            text = f"`{reg.name}` is assigned under the divergent branch at line {line}"
        chain = Chain("control", [Step(text, line)])
        if term is not None and depth <= MAX_DEPTH:
            why = self.branch_cause(term, depth + 1)
            if why is not None:
                chain.notes.append(f"the branch at line {line} diverges: "
                                   f"{why.render()} -> `{guard_text(term)}{term.full_opcode}`")
        return chain

    def _culprit(self, key: str, merge: int) -> int:
        """The divergent branch (the innermost, latest in reverse postorder) whose
        region defines `key` and whose lanes meet at `merge`."""
        found = [b for b in self.sync.branches_at(merge, self.facts.divergent)
                 if self.sync.defines(b, key)]
        return max(found, key=lambda b: self.cfg.rpo_index[b])

    def _exited_loop(self, branch: int, merge: int) -> bool:
        return any(branch in loop.body and merge not in loop.body
                   for loop in self.cfg.natural_loops().values())

    def branch_cause(self, term: Instruction, depth: int) -> Chain | None:
        """Why a divergent branch diverges: its guard, else its `brx.idx` index."""
        state = self.facts.state_before(term)
        if state is None:
            return None
        for reg in operands_to_check(term):
            if not state[reg.key].is_uniform:
                return self.explain(reg, term, depth)
        return None


def operands_to_check(insn: Instruction) -> list[Register]:
    """The registers `.uni` promises are uniform: the guard, then a `brx.idx` index or
    an indirect callee."""
    regs = [insn.guard.register] if insn.guard is not None else []
    if isinstance(insn, Call):
        callee = insn.callee
        regs += [callee] if isinstance(callee, Register) else []
    elif isinstance(insn, Branch) and insn.operands and insn.opcode != "bra":
        index = insn.operands[0]
        regs += [index] if isinstance(index, Register) else []
    return regs


def claims_uniform(insn: Instruction) -> bool:
    return isinstance(insn, (Branch, Call, Terminator)) and "uni" in insn.mods


__all__ = ["Chain", "Provenance", "Step", "claims_uniform", "def_step", "guard_text",
           "line_of", "operands_to_check"]
