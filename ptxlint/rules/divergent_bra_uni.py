"""`divergent-bra-uni` (error) and `uniform-branch` (note, preview): whether the warp
really agrees where `.uni` says it does.

`bra.uni`, `brx.idx.uni`, `call.uni` (and `ret.uni`) promise that every active lane
of the warp has the same guard predicate and the same target (branch index, callee).
ptxas takes the promise as given and inserts no reconvergence point (no `BSSY`/`BSYNC`
pair), so when the lanes disagree the warp is not split correctly: lanes run the wrong
path or never meet again. The rule checks the promise against the analysis
(`Value.is_uniform` in the state before the instruction) and explains a broken one with
a def-use chain built by `uni_chain.Provenance`. With an exact block shape the lanes
that disagree are named (the lane form, or the predicate evaluated thread by thread);
with the shape unknown, an operand uniform whenever warps are whole rows is a note
with that condition (`warp_rows`).
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.lattice import Tri
from ..domains.state import State
from ..domains.strided import StridedInterval as SI
from ..domains.value import Value
from ..threads.barrier_intervals import control_closure
from ..threads.barrier_split import truth_rows
from ..threads.warp import lanes, warp_count
from ..ir.instruction import Instruction
from ..ir.operands import Register
from ..ir.traits import Branch, Call, Terminator
from . import warp_rows
from .base import Rule, RuleContext
from .uni_chain import (Chain, Provenance, Step, claims_uniform, guard_text, line_of,
                        operands_to_check)

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


def _uniform_in_rows(rc: RuleContext, insn: Instruction, reg: Register) -> bool:
    """With the block shape unknown: whether `reg` is warp-uniform before `insn` when
    each warp is 32 consecutive `%tid.x` of one row (`warp_rows.rows_facts`)."""
    if warp_rows.shape_known(rc):
        return False
    rows = warp_rows.rows_facts(rc)
    state = rows.state_before(insn) if rows is not None else None
    return state is not None and state[reg.key].is_uniform


def thread_verdict(rc: RuleContext, insn: Instruction, reg: Register) -> bool | str | None:
    """With an exact block shape, predicate `reg` evaluated thread by thread from its
    definitions (`barrier_split.truth_rows`: `%tid.x / 16 >= 3`, which no lane form
    describes), for every block index it may depend on: True when every warp agrees, a
    label naming lanes of one warp that disagree, None when not known. Lanes are named
    only where every thread reaches the branch (no divergent branch decides whether it
    runs): a lane that never gets there does not take part."""
    if not warp_rows.shape_known(rc):
        return None
    from ..threads.thread_eval import ThreadSpace  # noqa: PLC0415 -- numpy, when needed

    space = ThreadSpace.of(rc.facts)
    found = truth_rows(rc.facts, space, reg, insn)
    if found is None:
        return None
    warp = space.index("warp")
    for row in found[0]:
        for w in range(int(warp.max()) + 1):
            vals = [int(v) for v in row[warp == w]]
            if len(set(vals)) > 1:
                return describe_lanes(vals, reg, True, w) if _reached_by_all(rc, insn) \
                    else None
    return True


def _reached_by_all(rc: RuleContext, insn: Instruction) -> bool:
    cfg = rc.facts.cfg
    return not any(rc.facts.branch_is_divergent(d)
                   for d in control_closure(cfg, cfg.block_of(insn)))


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
    def-use chain that makes them lane-dependent, from its origin to the branch: from
    `%tid.x` (or `%laneid`, a `.local` load, an atomic) through each instruction, or from a
    register assigned differently on the arms of a divergent branch or live out of a loop
    whose lanes exit at different iterations.

    Origins (`details.source`):

    | source | meaning |
    |---|---|
    | `%tid.x`, `%laneid`, ... | a special register that differs between lanes |
    | `control` | a register assigned differently on the arms of a divergent branch ("`%r2` is assigned under the divergent branch at line N"), or live out of a loop whose lanes leave at different iterations; a note then says why that branch diverges |
    | an opcode (`ld.local.u32`, `atom.global.add.u32`, ...) | an instruction that gives each lane its own value although it reads only uniform registers (a per-thread `.local` load, an atomic, an unmodelled instruction) |
    | `unknown` | a register read before any assignment, or one the analysis could not prove uniform |

    Other details: `predicate` (the register lanes may disagree on: the guard, or the
    `brx.idx` index / callee register), `operand` (`guard`, `index` or `target`) and
    `chain` (the line numbers of the chain's steps, ending with the `.uni` instruction).

    An unguarded `bra.uni` is never reported, even inside divergent code: every active lane
    jumps to the one label. Only the instruction's own guard and target matter, not whether
    the code around it is divergent.

    ### What counts as warp-uniform
    Besides values every thread shares (kernel parameters, `%ctaid`, constants), the
    analysis knows these warp-level facts:

    | value | one value per warp when |
    |---|---|
    | `%tid.x / 32` (`shr` by 5 or more, `div` by a multiple of 32, `/ warpSize`, `& -32`, `bfe` from bit 5, and any such quotient of a lane-affine value that stays within one block of the divisor in every warp) | each warp is 32 consecutive `%tid.x` of one row: the launch's or `.reqntid`'s `ntid.x` is a multiple of 32, or the block is one-dimensional; with an exact block shape it is decided warp by warp (`(%tid.x + 16*%tid.y) / 32` in a 16x16 block) |
    | `%tid.y`, `%tid.z` | the same: the lane form makes them uniform values |
    | `WARP_SZ` | always: 32 |
    | `shfl.sync.idx d, a, b, c, mask` | `b` and `mask` are warp-uniform and `c` has no sub-segments (`c[12:8] = 0`: `__shfl_sync(mask, v, lane)` with the default width): every lane reads lane `b` |
    | `vote.sync.all/any/uni`, `vote.sync.ballot`, `redux.sync`, `match.all.sync`, `activemask`, `elect.sync`'s leader | the mask is warp-uniform: one answer to the lanes executing it |

    They are warp facts only: a `vote` or a warp index still differs between the warps of a
    block, which `barrier-divergence` checks for `bar.sync`.

    ### Unknown block shape
    `.maxntid` bounds the thread count, not `ntid.x` (a 16x16 block is a legal launch of
    `__launch_bounds__(256)`), so without the launch's block or `.reqntid` the analysis
    cannot prove `%tid.x / 32` warp-uniform: a 48x2 block's warp 1 holds `%tid.x` 32-47 of
    row 0 and 0-15 of row 1. An error there would be wrong for every one-dimensional
    launch, and silence would hide the 2-D ones. So the rule re-analyses the kernel once
    assuming whole-row warps (`ntid.x` a multiple of 32 or a one-dimensional block; nothing
    else assumed): a `.uni` whose operand is warp-uniform under that assumption is a note
    "... when the block is 2-D or 3-D and `%ntid.x` is not a multiple of 32", with
    `details.condition = "block shape"` and a help to give the block shape (`--block
    X,Y,Z`, or `.reqntid`), which gives an exact answer (nothing, or a definite error
    naming the lanes).

    ## Why is this bad?
    `.uni` is a promise, not a hint. On Volta and later GPUs ptxas brackets a branch that
    may diverge with a reconvergence barrier (`BSSY` before it, `BSYNC` where the lanes
    meet); `.uni` tells it none is needed, and it also lets ptxas treat values computed
    after the join as warp-uniform. With ptxas 13.0 for `sm_80`, a `@%p1 bra.uni` over a
    loop, on `%p1 = %tid.x > 15`, lost its `BSSY`/`BSYNC` pair, and a `shfl.sync.bfly` after
    the join was folded away as if every lane held the same value. When lanes really
    disagree the warp is not re-joined: code after the join runs with part of the warp,
    `shfl.sync`/`bar.sync` with a full mask can hang or return garbage, and the outcome
    changes with compiler version and schedule, so the bug may only show on another GPU.

    ## Certainty
    An error. *Definite* when the launch's block shape lets ptxlint evaluate the operand in
    every lane and some warp disagrees (the label names the lanes); otherwise *possible*
    ("lanes of one warp may disagree on `%p1`"). When every warp of the given block shape
    agrees (`%tid.y < 4` with 32-wide rows) nothing is reported. A predicate the lane form
    cannot describe (`%tid.x / 16 >= 3`) is evaluated thread by thread from its
    definitions: "`consumer` holds in lanes 16-31 of warp 1 but not in lanes 0-15". With
    the block shape unknown, see above: a note with its condition.

    ## Example
    ```ptx
    mov.u32         %r1, %tid.x;
    setp.ge.u32     %p1, %r1, 16;
    @%p1 bra.uni    SKIP;           // expect: divergent-bra-uni predicate=%p1 source=%tid.x
    add.u32         %r2, %r1, 1;
    SKIP:
    ret;
    ```

    Divergence from control is reported too:

    ```ptx
    setp.lt.u32     %p1, %r1, 16;   // %r1 = %tid.x
    @%p1 bra        THEN;
    mov.u32         %r2, 2;
    bra.uni         JOIN;           // fine: no guard
    THEN:
    mov.u32         %r2, 1;
    JOIN:
    setp.ne.s32     %p2, %r2, 1;
    @%p2 bra.uni    DONE;           // error: `%r2` is assigned under the divergent branch
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

    Drop `.uni` and let ptxas handle the divergence, or make the operand warp-uniform
    (compute it from `%ctaid`, kernel parameters or values every lane shares, or agree on it
    first with `vote.sync.all`/`vote.sync.any`).

    ## Limitations
    - The lane-by-lane evaluation needs an exact block shape (the launch or `.reqntid`) and
      a predicate the thread expressions can evaluate: a chain through a load, a merge or
      a float is reported as possible.
    - A butterfly reduction (`shfl.sync.bfly` by 16, 8, 4, 2, 1 and a commutative
      operation: `cg::reduce` on floats) leaves the same value in every lane, but only the
      broadcast (`shfl.sync.idx`) and the warp collectives are known to be warp-uniform.
    - A register assigned in a divergent region is treated as lane-dependent where the
      lanes meet even when every path assigns the same (non-constant) value.
    - Inside a loop whose lanes leave at different iterations, registers the loop assigns
      are treated as lane-dependent at the loop head, although the lanes still in the loop
      agree on them: a `@%p bra.uni` on `i == 3` inside `for (i = 0; i < (tid & 7); ++i)`
      is reported (as possible) though it is correct.

    ## Samples
    Under `ptx_samples/divergent-bra-uni/`, each with a clean twin:

    - `tid_guard.bad`: `@%p1 bra.uni` on `%tid.x > 15`.
    - `arm_value.bad`: a register assigned differently on the arms of a divergent branch.
    - `loop_exit.bad`: a register live out of a loop whose lanes leave at different trips.
    - `jump_table.bad`: a `brx.idx.uni` index that differs between lanes.
    - `warp_role.bad`: a warp-specialised copy skipped by an inline-PTX `bra.uni` on
      `threadIdx.x / 16 >= 3`: warp 1 splits; `warp_role.ok` uses `threadIdx.x / 32 >= 2`
      in a 128-thread block (clean; a note without the launch).

    ## Suppress
    Run with `--disable divergent-bra-uni`, or add it to `disable = [...]` under
    `[tool.ptxlint]` in `pyproject.toml`; one line: `// ptxlint: disable=divergent-bra-uni`.
    Prefer fixing the PTX: a wrong `.uni` is a miscompile waiting for the next compiler.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        provenance: Provenance | None = None
        for insn in rc.facts.function.instructions:
            if not claims_uniform(insn) or not operands_to_check(insn):
                continue
            state = rc.facts.state_before(insn)
            found = _first_varying(insn, state, rc.block) if state is not None else None
            if found is None:
                continue
            reg, label = found
            if label is None and _is_pred(insn, reg):
                verdict = thread_verdict(rc, insn, reg)
                if verdict is True:
                    continue  # every warp agrees: the lane form only could not say so
                label = verdict
            provenance = provenance or Provenance(rc.facts)
            yield self.report(rc, insn, reg, label, provenance.explain(reg, insn),
                              rows_only=label is None and _uniform_in_rows(rc, insn, reg))

    def report(self, rc: RuleContext, insn: Instruction, reg: Register, label: str | None,
               chain: Chain, rows_only: bool = False) -> Diagnostic:
        """The finding; `rows_only`: the lanes agree whenever each warp is 32 consecutive
        `%tid.x` of one row (`warp_rows`), a note with that condition."""
        uni = _uni_text(insn)
        chain.then(Step(uni, line_of(insn)))
        what = _WHAT.get(chain.source, f"`{chain.source}`")
        certainty = Certainty.DEFINITE if label else Certainty.POSSIBLE
        kind = _operand_kind(insn, reg)
        plain = f"{guard_text(insn)}{insn.opcode}"
        act = "call" if isinstance(insn, Call) else \
            "return" if isinstance(insn, Terminator) else "branch"
        when = f" {warp_rows.CONDITION}" if rows_only else ""
        notes = [*chain.notes,
                 f"`.uni` tells ptxas the whole warp takes this {act} together: it inserts "
                 f"no reconvergence point, so lanes that disagree may never rejoin"]
        details = {"predicate": reg.name, "operand": kind, "source": chain.source,
                   "chain": chain.lines}
        if rows_only:
            notes.insert(0, warp_rows.NOTE)
            details["condition"] = "block shape"
        return self.diagnostic(
            rc, insn, f"{uni} depends on {what}{when}: {chain.render()}",
            severity=Severity.NOTE if rows_only else None, certainty=certainty,
            label=label or f"lanes of one warp may disagree on `{reg.name}`"
            + (" in such blocks" if rows_only else ""),
            notes=notes,
            help=warp_rows.HELP if rows_only else
            f"drop `.uni` (`{plain}`) or compute the {kind} from warp-uniform values",
            details=details)


class UniformBranch(Rule, id="uniform-branch", severity=Severity.NOTE):
    """A guarded `bra` whose predicate is the same in every lane: it could be `bra.uni`.

    ## What it does
    Notes each `@%p bra` (without `.uni`) whose predicate the analysis proves
    warp-uniform: computed only from kernel parameters, `%ctaid`, `%ntid`, constants
    and other values every lane shares. `details.predicate` names the predicate register.

    ## Why is this bad?
    It is not wrong, only unannotated. A branch that may diverge makes ptxas bracket it
    with a reconvergence point (`BSSY`/`BSYNC` on Volta and later) and limits code motion
    across it; `.uni` says none is needed. ptxas proves most such predicates uniform on its
    own (it did for every `%ctaid` and parameter test we compiled), so this matters mainly
    for hand-written or generated PTX, where the `.uni` also documents intent.

    ## Certainty
    A note, and a preview rule: shown with `--severity note` (or `--format json`/`sarif`).

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

    Only when the predicate really is the same in every lane for every launch: a wrong
    `.uni` is an error (`divergent-bra-uni`).

    ## Samples
    - `ptx_samples/uniform-branch/param_loop.bad`: a loop over a kernel parameter, tested
      with plain `bra`; `param_loop.ok` writes `bra.uni`.

    ## Suppress
    Run with `--disable uniform-branch`, or add it to `disable = [...]` under
    `[tool.ptxlint]` in `pyproject.toml`.
    """

    stage = "preview"

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        for insn in rc.facts.function.instructions:
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
