"""`divergent-bra-uni` (error) and `uniform-branch` (note, preview): whether the warp
really agrees where `.uni` says it does.

`bra.uni`, `brx.idx.uni`, `call.uni` (and `ret.uni`) promise that every active lane
of the warp has the same guard predicate and the same target (branch index, callee).
ptxas takes the promise as given and inserts no reconvergence point (no `BSSY`/`BSYNC`
pair), so when the lanes disagree the warp is not split correctly: lanes run the wrong
path or never meet again. The rule checks the promise against the analysis
(`Value.is_uniform` in the state before the instruction) and explains a broken one with
a def-use chain built by `Provenance`: backwards from the operand, through each
reaching definition whose result differs between lanes, to a special register
(`%tid.x`), a per-lane load or atomic, or a merge of lanes that took different paths
(a divergent branch's arms, or the exit of a loop whose lanes leave at different
iterations).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.lattice import Tri
from ..domains.state import State
from ..domains.strided import StridedInterval as SI
from ..domains.value import Value
from ..interp.divergence import SyncDependence
from ..interp.facts import Facts
from ..interp.warp import lanes, warp_count
from ..ir.instruction import Instruction
from ..ir.operands import Register
from ..ir.traits import Branch, Call, MemoryAccess, Terminator
from .base import Rule, RuleContext

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
        self.facts._interp.step(insn, after)  # noqa: SLF001 -- Facts has no state_after
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


# ---- lanes of one warp ----------------------------------------------------------------------
def lane_values(value: Value, block: tuple[int, int, int], warp: int) -> list[int | None]:
    """Each existing lane's value of a lane-affine `value` (None: not one number)."""
    if value.aff.is_top or value.region is not None:
        return []
    out = []
    for lane, tid in enumerate(lanes(block, warp)):
        if tid is not None:
            out.append(value.aff.evaluate(tid, lane).singleton())
    return out


def lane_truths(state: State, key: str, block: tuple[int, int, int],
                warp: int) -> list[bool | None]:
    """Each lane's truth of predicate `key` from its recorded comparison, when both
    sides are lane-affine with known numbers."""
    cond = state.conds.get(key)
    if cond is None or cond.combine is not None or cond.is_float:
        return []
    sides = [lane_values(Value.const(x) if isinstance(x, int) else state[x], block, warp)
             for x in (cond.a, cond.b)]
    if not all(sides):
        return []
    out = []
    for x, y in zip(*sides):
        tri = Tri.MAYBE if x is None or y is None else \
            SI.const(x).cmp(cond.op, SI.const(y), cond.width, cond.signed)
        out.append(None if tri is Tri.MAYBE else (tri is Tri.TRUE) != cond.negated)
    return out


def lane_verdict(state: State, reg: Register, is_pred: bool,
                 block: tuple[int, int, int] | None) -> bool | str | None:
    """Evaluate `reg` in every lane of every warp of a known block: True when each warp
    agrees (the affine domain calls `%tid.y < 4` varying although a 32-wide row is one
    warp), a label naming lanes of one warp that disagree, None when unknown."""
    if block is None:
        return None
    known = True
    for warp in range(warp_count(block)):
        vals: list = lane_truths(state, reg.key, block, warp) if is_pred else \
            lane_values(state[reg.key], block, warp)
        if not vals or None in vals:
            known = False
        elif len(set(vals)) > 1:
            return describe_lanes(vals, reg, is_pred, warp)
    return True if known else None


def describe_lanes(vals: list, reg: Register, is_pred: bool, warp: int) -> str:
    where = f" of warp {warp}" if warp else ""
    if is_pred:
        on, off = (_ranges([i for i, v in enumerate(vals) if v == want]) for want in (1, 0))
        return f"`{reg.name}` holds in lanes {on}{where} but not in lanes {off}"
    other = next(i for i, v in enumerate(vals) if v != vals[0])
    return (f"lane 0{where} has `{reg.name}` = {vals[0]}, "
            f"lane {other} has `{reg.name}` = {vals[other]}")


def _ranges(indices: list[int]) -> str:
    """[0, 1, 2, 5] -> "0-2, 5"."""
    runs = [[i, i] for n, i in enumerate(indices) if n == 0 or indices[n - 1] != i - 1]
    for run in runs:
        while run[1] + 1 in indices:
            run[1] += 1
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


# ---- the rules ------------------------------------------------------------------------------
def _is_pred(insn: Instruction, reg: Register) -> bool:
    return insn.guard is not None and reg == insn.guard.register


def _operand_kind(insn: Instruction, reg: Register) -> str:
    if _is_pred(insn, reg):
        return "guard"
    return "target" if isinstance(insn, Call) else "index"


def _uni_text(insn: Instruction) -> str:
    head = f"{guard_text(insn)}{insn.full_opcode}"
    regs = [r for r in operands_to_check(insn) if not _is_pred(insn, r)]
    return f"`{head}{''.join(' ' + r.name for r in regs)}`"


def _first_varying(insn: Instruction, state: State,
                   block: tuple[int, int, int] | None) -> tuple[Register, str | None] | None:
    """The first operand `.uni` covers that lanes may disagree on, with a label naming
    lanes that do when the block shape shows it."""
    for reg in operands_to_check(insn):
        if state[reg.key].is_uniform:
            continue
        verdict = lane_verdict(state, reg, _is_pred(insn, reg), block)
        if verdict is not True:
            return reg, verdict or None
    return None


_WHAT = {"control": "divergent control", "unknown": "a value not provably warp-uniform"}


class DivergentBraUni(Rule, id="divergent-bra-uni", severity=Severity.ERROR,
        checks_callees=True):
    """A `.uni` branch or call whose guard, index or target may differ between lanes.

    ## What it does
    Checks every `bra.uni`, `brx.idx.uni`, `call.uni` and `ret.uni` against the
    analysis: its guard predicate, its `brx.idx` index and its indirect callee must be
    the same in every active lane of the warp. When they may not be, it reports the
    def-use chain that makes them lane-dependent: from `%tid.x` (or `%laneid`, a
    `.local` load, an atomic) through each instruction, or from a register assigned
    differently on the arms of a divergent branch or live out of a loop whose lanes
    exit at different iterations.

    ## Why is this bad?
    `.uni` is a promise, not a hint: ptxas takes it as given and emits no reconvergence
    point (no `BSSY`/`BSYNC` pair) for the branch. When lanes disagree the warp is not
    split correctly: lanes run a path they should skip, or never rejoin, and code that
    relies on a converged warp after the join (`bar.sync`, `shfl.sync` with a full mask)
    hangs or reads garbage. The result depends on the compiler version and the schedule,
    so the bug may only show on another GPU.

    ## Example
    ```ptx
    mov.u32         %r1, %tid.x;
    setp.ge.u32     %p1, %r1, 16;
    @%p1 bra.uni    SKIP;           // expect: divergent-bra-uni predicate=%p1 source=%tid.x
    add.u32         %r2, %r1, 1;
    SKIP:
    ret;
    ```

    ## Use instead
    ```ptx
    mov.u32         %r1, %tid.x;
    setp.ge.u32     %p1, %r1, 16;
    @%p1 bra        SKIP;           // plain bra: ptxas inserts the reconvergence point
    add.u32         %r2, %r1, 1;
    SKIP:
    ret;
    ```

    ## Suppress
    Run with `--disable divergent-bra-uni`, or add it to `disable = [...]` under
    `[tool.ptxlint]` in `pyproject.toml`. Prefer fixing the PTX: a wrong `.uni` is a
    miscompile waiting to happen.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        provenance: Provenance | None = None
        for insn in rc.function.instructions:
            if not claims_uniform(insn) or not operands_to_check(insn):
                continue
            state = rc.facts.state_before(insn)
            found = _first_varying(insn, state, rc.block) if state is not None else None
            if found is None:
                continue
            reg, label = found
            provenance = provenance or Provenance(rc.facts)
            yield self.report(rc, insn, reg, label, provenance.explain(reg, insn))

    def report(self, rc: RuleContext, insn: Instruction, reg: Register, label: str | None,
               chain: Chain) -> Diagnostic:
        uni = _uni_text(insn)
        chain.then(Step(uni, line_of(insn)))
        what = _WHAT.get(chain.source, f"`{chain.source}`")
        certainty = Certainty.DEFINITE if label else Certainty.POSSIBLE
        kind = _operand_kind(insn, reg)
        plain = f"{guard_text(insn)}{insn.opcode}"
        act = "call" if isinstance(insn, Call) else \
            "return" if isinstance(insn, Terminator) else "branch"
        return self.diagnostic(
            rc, insn, f"{uni} depends on {what}: {chain.render()}",
            certainty=certainty,
            label=label or f"lanes of one warp may disagree on `{reg.name}`",
            notes=[*chain.notes,
                   f"`.uni` tells ptxas the whole warp takes this {act} together: it inserts "
                   f"no reconvergence point, so lanes that disagree may never rejoin"],
            help=f"drop `.uni` (`{plain}`) or compute the {kind} from warp-uniform values",
            details={"predicate": reg.name, "operand": kind, "source": chain.source,
                     "chain": chain.lines})


class UniformBranch(Rule, id="uniform-branch", severity=Severity.NOTE):
    """A guarded `bra` whose predicate is the same in every lane: it could be `bra.uni`.

    ## What it does
    Notes each `@%p bra` (without `.uni`) whose predicate the analysis proves
    warp-uniform: computed only from kernel parameters, `%ctaid`, `%ntid`, constants
    and other values every lane shares.

    ## Why is this bad?
    It is not wrong, only unannotated. A divergent branch makes ptxas bracket it with a
    reconvergence point (`BSSY`/`BSYNC`) and forbids some code motion across it; `.uni`
    says none is needed. ptxas proves uniformity itself in most compiled code, so this
    matters mainly for hand-written or generated PTX. The rule is in preview and only
    ever a note.

    ## Example
    ```ptx
    mov.u32         %r1, %ctaid.x;
    setp.ge.u32     %p1, %r1, 16;
    @%p1 bra        SKIP;           // expect: uniform-branch predicate=%p1
    add.u32         %r2, %r1, 1;
    SKIP:
    ret;
    ```

    ## Use instead
    ```ptx
    mov.u32         %r1, %ctaid.x;
    setp.ge.u32     %p1, %r1, 16;
    @%p1 bra.uni    SKIP;           // every lane of the block agrees on %p1
    add.u32         %r2, %r1, 1;
    SKIP:
    ret;
    ```

    ## Suppress
    Run with `--disable uniform-branch`, or add it to `disable = [...]` under
    `[tool.ptxlint]` in `pyproject.toml`.
    """

    stage = "preview"

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        for insn in rc.function.instructions:
            if not isinstance(insn, Branch) or insn.opcode != "bra" or insn.is_uniform \
                    or insn.guard is None:
                continue
            state = rc.facts.state_before(insn)  # one pass over the branch's block
            if state is None or not state[insn.guard.register.key].is_uniform:
                continue
            reg = insn.guard.register
            target = insn.targets[0] if insn.targets else ""
            yield self.diagnostic(
                rc, insn, f"`{insn.guard} bra` is warp-uniform and could be `bra.uni`",
                label=f"every lane of a warp has the same `{reg.name}`",
                help=f"write `{insn.guard} bra.uni {target}`",
                details={"predicate": reg.name})
