"""Which branch may split a barrier, for `barrier-divergence`.

A barrier X runs in a thread when every branch X is control dependent on (iterated: the
branches deciding whether those branches run, the exit test of a loop around X) goes
X's way. So X is split when one of those branches, or X's own guard, may send threads of
one block different ways: `BlockVariance` says which may (block-level, stronger than the
analysis' per-warp uniformity: `%tid.y < 4` is one value per warp of a 32x8 block but
splits the block); for a barrier with a thread count and for `bar.warp.sync`, which may
send threads of one *warp* different ways. `bar.warp.sync` waits only for the lanes of
its mask that have not exited, so a branch whose lanes that turn away only leave the
kernel, silently (`is_silent`: loads, register arithmetic, branches; no store, barrier
or warp collective on the way out), does not split it: `if (i >= n) return;` before a
`__syncwarp()`, the lanes that leave a warp-strided loop at the kernel's end. A split is certain when the branch is reached
by every thread and evaluating its predicate in every thread of some block of the launch
shows both ways (`truths`). What the skipping threads do next decides how bad it is
(`other_barrier`: another barrier, or only leaving the kernel).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from ..ir.instruction import Instruction
from ..ir.instructions.sync import BarrierCluster, BarWarpSync, CtaBarrier, is_silent
from ..ir.module import Module
from ..ir.operands import Immediate, Register, Symbol
from ..ir.traits import Branch, Call
from .barrier_intervals import control_closure, functions_with, is_cta_barrier
from .block_uniform import BlockVariance, block_variance
from .thread_exprs import expr_builder

if TYPE_CHECKING:
    import numpy as np

    from .thread_eval import ThreadSpace

CHAIN = 8  # steps of the explanation shown
MAX_ROWS = 1024  # block indices (and other certain values) tried for a definite split


def _rows(values: dict) -> int:
    return next(iter(values.values())).shape[0] if values else 1


def _block_text(values: dict, row: int) -> str:
    """` of block 3` (or `(3,1,0)`) for the block indices of assignment `row`."""
    idx = {str(ident[1])[-1]: int(col[row, 0]) for ident, col in values.items()
           if ident[0] == "special" and str(ident[1]).startswith("%ctaid.")}
    if not idx:
        return ""
    if set(idx) == {"x"}:
        return f" of block {idx['x']}"
    return " of block (" + ",".join(str(idx.get(a, 0)) for a in "xyz") + ")"


@dataclass(frozen=True)
class Split:
    """Why barrier X may be split: `where` is the deciding branch (or X itself, for its
    guard), `reg` the register that differs; `skipping` the threads that do not reach X
    when known (a boolean array over the block's threads)."""

    where: Instruction
    reg: Register
    skipping: np.ndarray | None
    loop: bool  # the branch is the exit test of a loop around X


def barrier_sites(facts, module: Module) -> list[tuple[Instruction, str]]:
    """(instruction, kind) for the reachable barriers: `cta` (every thread of the block),
    `count` (the warps of a thread count) or `warp` (`bar.warp.sync`)."""
    out = []
    funcs = None
    reachable = [insn for b, block in enumerate(facts.cfg.blocks)
                 if facts.in_states[b] is not None for insn in block.instructions]
    for insn in reachable:
        if isinstance(insn, CtaBarrier):
            counted = insn.thread_count is not None or not insn.waits
            out.append((insn, "count" if counted else "cta"))
        elif isinstance(insn, BarrierCluster):
            out.append((insn, "cta"))
        elif isinstance(insn, BarWarpSync):
            out.append((insn, "warp"))
        elif isinstance(insn, Call):
            funcs = funcs if funcs is not None else functions_with(module, is_cta_barrier)
            callee = insn.callee
            if isinstance(callee, Symbol) and callee.name in funcs:
                out.append((insn, "cta"))
    return out


def truth_rows(facts, space: ThreadSpace, reg: Register,
               at: Instruction) -> tuple[np.ndarray, dict] | None:
    """Per block index tried (rows) and thread of the block (columns), whether predicate
    `reg` holds at `at`, with the leaves' values per row; None unless that is certain:
    the block shape is known and the predicate is a function of the thread index,
    constants, values the facts pin to one number and `%ctaid` with a known grid (every
    block index occurs)."""
    if not space.exact:
        return None
    import numpy as np  # noqa: PLC0415

    from .thread_eval import Evaluator, Unevaluable  # noqa: PLC0415

    node = expr_builder(facts).at(at).register(reg, at)
    values = _certain_values(facts, node, at)
    if node.opaque or values is None:
        return None
    try:
        v = Evaluator(space, values).eval(node)
    except Unevaluable:
        return None
    if v.sym:
        return None
    return np.broadcast_to(np.asarray(v.conc) != 0, (_rows(values), space.n)), values


def _certain_values(facts, node, at: Instruction) -> dict | None:
    """Each leaf's values as a column of a cartesian product (numpy), or None when a leaf
    may take values that do not occur."""
    import numpy as np  # noqa: PLC0415

    grid = facts.ctx.launch.grid if facts.ctx.launch else None
    state = facts.state_before(at)
    choices = {}
    for leaf in node.leaves:
        si = leaf.si
        if si is None and leaf.ident[0] == "reg" and state is not None:
            v = state.regs.get(leaf.value)
            si = v.si if v is not None and v.region is None else None
        if si is not None and si.is_singleton:
            choices[leaf.ident] = [si.lo]
        elif leaf.ident[0] == "special" and str(leaf.value).startswith("%ctaid.") \
                and grid is not None:
            choices[leaf.ident] = list(range(grid["xyz".index(str(leaf.value)[-1])]))
        else:
            return None
    if not choices:
        return {}
    if np.prod([len(c) for c in choices.values()], dtype=float) > MAX_ROWS:
        return None
    mesh = np.meshgrid(*[np.asarray(c, np.int64) for c in choices.values()], indexing="ij")
    return {ident: m.ravel()[:, None] for ident, m in zip(choices, mesh)}


def _sites(facts, module: Module) -> tuple[list[tuple[Instruction, str]], _IdSet]:
    sites = barrier_sites(facts, module)
    return sites, _IdSet(i for i, kind in sites if kind != "warp")


class BarrierSplits:
    """The barriers of one kernel's final facts and what may split them."""

    def __init__(self, facts, module: Module):
        self.facts = facts
        self.module = module
        self.cfg = facts.cfg
        self.variance: BlockVariance = block_variance(facts)
        # one walk per kernel: several rules (and each grid or rows check) split barriers
        self.sites, self.barriers = facts.derived("barrier_sites", lambda f: _sites(f, module))
        self.blocks: dict[int, str] = {}  # branch -> " of block 3" (the block a split shows)

    @cached_property
    def space(self) -> ThreadSpace:
        from .thread_eval import ThreadSpace  # noqa: PLC0415 -- numpy, only when needed

        return ThreadSpace.of(self.facts)

    def split(self, insn: Instruction, kind: str) -> Split | None:
        """What may split barrier `insn` of `kind` ("cta", "count", or "warp": a
        `bar.warp.sync`, checked like "count" but not split by lanes that only exit)."""
        b = self.cfg.block_of(insn)
        guard = insn.guard
        if guard is not None and self._differs(guard.register, insn, kind):
            return Split(insn, guard.register, self._skipping_guard(insn), False)
        for d in control_closure(self.cfg, b):
            term = self.cfg.blocks[d].terminator
            reg = branch_register(term)
            if reg is None or not self._branch_differs(d, kind) \
                    or kind == "warp" and self.exits_silently(d, b):
                continue
            skipping = self._skipping(d, b) if self._reached_by_all(d) else None
            if kind != "cta" and skipping is not None and not self.splits_warp(skipping):
                continue
            loop = any(d in loop.body and b in loop.body
                       for loop in self.cfg.natural_loops().values())
            return Split(term, reg, skipping, loop)
        return None

    def _differs(self, reg: Register, at: Instruction, kind: str) -> bool:
        if kind != "cta":
            state = self.facts.state_before(at)
            return state is not None and not state[reg.key].is_uniform
        return self.variance.is_varying(reg.key, at)

    def _branch_differs(self, d: int, kind: str) -> bool:
        if kind != "cta":
            return self.facts.branch_is_divergent(d)
        return d in self.variance.divergent

    def exits_silently(self, d: int, b: int) -> bool:
        """Whether the lanes that leave branch d on an edge from which block b cannot be
        reached (without passing d again) only leave the kernel, running nothing another
        lane could wait for (`is_silent`) on the way."""
        away = [s for s in self.cfg.blocks[d].succs if not self.cfg.reaches_avoiding(s, b, d)]
        if not away:
            return False
        seen: set[int] = set()
        todo = list(away)
        while todo:
            x = todo.pop()
            if x in seen:
                continue
            if x == d:
                return False  # back round the loop: not gone
            seen.add(x)
            block = self.cfg.blocks[x]
            if not all(is_silent(i) for i in block.instructions):
                return False
            todo.extend(block.succs)
        return True

    def _reached_by_all(self, d: int) -> bool:
        """Every thread of the block reaches branch d whenever one does (in the first
        iteration of the loops around it)."""
        loops = [loop for loop in self.cfg.natural_loops().values() if d in loop.body]
        return not any(x in self.variance.divergent and not any(x in lp.body for lp in loops)
                       for x in control_closure(self.cfg, d))

    def truths(self, reg: Register, at: Instruction, negated: bool) -> np.ndarray | None:
        """Per thread of the block, whether `reg` holds at `at`, for some block of the
        launch that certainly runs it one way or the other in different threads (else any
        block); None unless that is certain (`truth_rows`)."""
        found = truth_rows(self.facts, self.space, reg, at)
        if found is None:
            return None
        truth, values = found
        truth = ~truth if negated else truth
        split = [k for k, row in enumerate(truth) if row.any() and not row.all()]
        if split and _rows(values) > 1:
            self.blocks[id(at)] = _block_text(values, split[0])
        return truth[split[0] if split else 0]

    def _skipping_guard(self, insn: Instruction) -> np.ndarray | None:
        g = insn.guard
        runs = self.truths(g.register, insn, g.negated) if g is not None else None
        return None if runs is None else ~runs

    def _skipping(self, d: int, b: int) -> np.ndarray | None:
        """Threads leaving branch d on an edge from which block b cannot be reached."""
        term = self.cfg.blocks[d].terminator
        taken = self.truths(term.guard.register, term, term.guard.negated) \
            if term is not None and term.guard is not None else None
        if taken is None or taken.all() or not taken.any():
            return None
        succs = self.cfg.blocks[d].succs
        target = self.cfg.by_label.get(term.targets[0]) if isinstance(term, Branch) \
            and term.targets else self.cfg.exit
        reach = [self.cfg.reaches_avoiding(s, b, d) for s in succs]
        if all(reach) or not any(reach):
            return None
        away_taken = not reach[succs.index(target)] if target in succs else None
        if away_taken is None:
            return None
        return taken if away_taken else ~taken

    def splits_warp(self, skipping: np.ndarray) -> bool:
        import numpy as np  # noqa: PLC0415

        warp = self.space.index("warp")
        for w in np.unique(warp):
            lanes = skipping[warp == w]
            if lanes.any() and not lanes.all():
                return True
        return False

    def other_barrier(self, insn: Instruction, split: Split) -> Instruction | None:
        """A barrier the threads that skip `insn` may reach instead (None: they only
        leave the kernel). Copies of the same CUDA barrier (an unrolled loop) do not
        count: they are the same barrier reached a different number of times."""
        b, i = self.cfg.position(insn)
        same = self._same_barrier(insn, split)
        if split.where is insn:  # a guarded barrier: they go on after it
            first = self._first_barrier(same, self.cfg.blocks[b].instructions[i + 1:])
            if first is not None:
                return first or None
            starts = list(self.cfg.blocks[b].succs)
        else:
            d = self.cfg.block_of(split.where)
            succs = self.cfg.blocks[d].succs
            starts = [x for x in succs if not self.cfg.reaches_avoiding(x, b, d)] or list(succs)
        seen, todo = set(), starts
        while todo:
            x = todo.pop()
            if x in seen or x == b:
                continue
            seen.add(x)
            first = self._first_barrier(same, self.cfg.blocks[x].instructions)
            if first:
                return first
            if first is None:
                todo.extend(self.cfg.blocks[x].succs)
        return None

    def _same_barrier(self, insn: Instruction, split: Split) -> set:
        """What counts as `insn` itself for the threads that skip it: its CUDA line and,
        when they skip it by leaving a loop, the CUDA lines of that loop's barriers
        (nvcc splits a loop into copies; the copies' barriers are the same ones)."""
        lines = {source_line(insn) or id(insn)}
        if split.loop:
            d = self.cfg.block_of(split.where)
            b = self.cfg.block_of(insn)
            loops = [lp for lp in self.cfg.natural_loops().values()
                     if d in lp.body and b in lp.body]
            if loops:
                inner = min(loops, key=lambda lp: len(lp.body))
                lines |= {source_line(y) for x in inner.body
                          for y in self.cfg.blocks[x].instructions
                          if y in self.barriers and source_line(y) is not None}
        return lines

    def _first_barrier(self, same: set, run: list[Instruction]):
        """The first barrier of `run`: False when it counts as the barrier checked (the
        path is fine), None when there is none."""
        for y in run:
            if y in self.barriers:
                return False if (source_line(y) or id(y)) in same else y
        return None

    def origin(self, reg: Register, at: Instruction) -> tuple[str, str]:
        """Where the block-varying `reg` comes from: (source, "`%tid.x` -> ... chain")."""
        steps: list[str] = []
        defs = expr_builder(self.facts).defs
        source = "unknown"
        for _ in range(CHAIN):
            if reg.is_special:
                source = reg.name
                steps.append(f"`{reg.name}`")
                break
            found = defs.get(reg.key, [])
            chosen = [d for d in found if any(u.key != reg.key and self.variance.is_varying(
                u.key, d) for u in d.uses)] if len(found) > 1 else found
            if not chosen:
                source = "control"
                steps.append(f"`{reg.name}` (assigned differently on the ways threads took)")
                break
            d = chosen[0]
            what = " (a loop counter)" if len(found) > 1 else ""
            steps.append(f"`{d.full_opcode} {reg.name}`{what}")
            varying = [u for u in d.uses if u.key != reg.key and self.variance.is_varying(u.key, d)]
            if not varying:
                source = d.full_opcode
                break
            reg, at = varying[0], d
        return source, " -> ".join(reversed(steps))

    def mask(self, insn: Instruction) -> int | None:
        op = insn.operands[0] if insn.operands else None
        if isinstance(op, Immediate) and not op.is_float:
            return int(op.value) & 0xFFFFFFFF
        if isinstance(op, Register):
            state = self.facts.state_before(insn)
            v = state[op.key].singleton() if state is not None else None
            return None if v is None else v & 0xFFFFFFFF
        return None

    def reaching_lanes(self, insn: Instruction) -> tuple[np.ndarray | None, Split | None]:
        """The threads that execute `insn` (None: not known) and the branch that splits
        the warp there, if any."""
        import numpy as np  # noqa: PLC0415

        split = self.split(insn, "warp")
        everyone = np.ones(self.space.n, bool)
        if split is None:
            return everyone, None
        if split.skipping is None or not self._only_culprit(insn, split):
            return None, split
        return ~split.skipping, split

    def _only_culprit(self, insn: Instruction, split: Split) -> bool:
        b = self.cfg.block_of(insn)
        others = [d for d in control_closure(self.cfg, b)
                  if self.facts.branch_is_divergent(d) and not self.exits_silently(d, b)
                  and self.cfg.blocks[d].terminator is not split.where]
        return not others and (split.where is insn or insn.guard is None)


class _IdSet(set):
    """A set of instructions by identity."""

    def __init__(self, items=()):
        super().__init__(id(x) for x in items)

    def __contains__(self, item) -> bool:
        return super().__contains__(id(item))


def branch_register(term: Instruction | None) -> Register | None:
    if term is None:
        return None
    if term.guard is not None:
        return term.guard.register
    index = term.operands[0] if term.operands else None
    return index if isinstance(index, Register) else None


def same_id(a: Instruction, b: Instruction) -> bool | None:
    """Whether two barriers use the same barrier number (None: not known)."""
    ids = [x.barrier_id if isinstance(x, CtaBarrier) else None for x in (a, b)]
    if not all(isinstance(i, Immediate) for i in ids):
        return None
    return ids[0].value == ids[1].value  # type: ignore[union-attr]


def source_line(insn: Instruction) -> tuple | None:
    """The CUDA line an instruction comes from (file, line), when `.loc` says, with the
    line it is inlined at: every `__syncwarp()` is line 110 of sm_30_intrinsics.hpp, told
    apart by its call site."""
    loc = insn.loc
    if loc is None:
        return None
    at = loc.inlined_at
    return (loc.file, loc.line) if at is None else (loc.file, loc.line, at.file, at.line)


__all__ = ["BarrierSplits", "Split", "barrier_sites", "same_id", "source_line", "truth_rows"]
