"""`barrier-divergence`: a barrier that some threads of the block (or, for `bar.warp.sync`
and barriers with a thread count, of a warp) skip or reach a different number of times.
`interp/barrier_split.py` finds the branch that may split it; this module words it."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from ..diagnostics import Certainty, Diagnostic, Related, Severity
from ..interp.barrier_split import BarrierSplits, Split, same_id, source_line
from ..ir.instruction import Instruction
from ..ir.instructions.sync import BarrierCluster, BarWarpSync, CtaBarrier
from ..ir.traits import Barrier, Call
from . import warp_rows
from .base import Rule, RuleContext
from .uncoalesced_access import lane_text

if TYPE_CHECKING:
    import numpy as np

class BarrierDivergence(Rule, id="barrier-divergence", severity=Severity.ERROR):
    """A CTA barrier that some threads of the block may skip or reach a different number
    of times.

    ## What it does
    Checks every `bar.sync`/`barrier.sync`, `bar.red`/`barrier.red`, cluster barrier and
    call of a function that executes one: each branch deciding whether the barrier runs
    (an `if` around it, the exit test of a loop containing it, an early `ret`/`exit`)
    must send every thread of the block the same way. The condition is checked for the
    whole block, not only the warp: `%tid.y < 4` agrees within each warp of a 32x8 block
    but splits the block. A barrier with a thread count (`bar.sync 1, 64`,
    `bar.arrive 1, 64`) is meant for some warps only, so it is checked for warps that
    split. `bar.warp.sync` is checked against its member mask: the lanes that execute it
    must all be in the mask, and every lane of the mask that has not left the kernel must
    reach it (lanes that only exit, as after `if (i >= n) return;`, are not waited for).
    With the block shape unknown, a warp found split only because `%tid.x / 32` may differ
    within a warp (a 2-D block whose `ntid.x` is not a multiple of 32) is a note.

    It is an error when the threads that skip the barrier may wait at another one (the
    two barriers pair up, or the block deadlocks), and a warning when they only leave the
    kernel: the barrier then waits for the threads that have not exited, but `bar.sync`
    is `.aligned`, which the PTX ISA leaves undefined in code not every thread runs
    (`barrier.sync` without `.aligned` is allowed there and not reported). The finding
    is definite when the launch's block shape shows threads going both ways.

    ## Why is this bad?
    A barrier completes when every (non-exited) thread of the block has arrived. A
    thread that skips it leaves the others waiting forever, or arrives at the next
    barrier instead and releases them early: the reads after the barrier then race with
    writes before it. The symptom is a hang or wrong results that change with the
    schedule.

    ## Example
    ```ptx
    mov.u32         %r1, %tid.x;
    setp.ge.u32     %p1, %r1, 32;
    @%p1 bra        SKIP;
    bar.sync        0;                  // expect: barrier-divergence
    SKIP:
    bar.sync        0;
    ```

    ## Use instead
    ```ptx
    mov.u32         %r1, %tid.x;
    setp.ge.u32     %p1, %r1, 32;
    @%p1 bra        SKIP;
    add.u32         %r2, %r1, 1;        // only the work is conditional
    SKIP:
    bar.sync        0;                  // every thread of the block arrives
    ```

    ## Suppress
    `--disable barrier-divergence`, or `disable = ["barrier-divergence"]` under
    `[tool.ptxlint]`.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        if not any(isinstance(i, (Barrier, BarWarpSync, Call)) for i in rc.function.instructions):
            return
        splits = BarrierSplits(rc.facts, rc.module)
        # copies of one CUDA barrier (an unrolled loop) make one finding: the first copy
        # that splits, with the other split copies as related locations
        found: dict[tuple, list[list[Diagnostic]]] = {}
        for insn, kind in splits.sites:
            rc.deadline.check()
            key = (kind, source_line(insn) or id(insn))
            ds = [d for d in _findings(self, rc, splits, insn, kind) if d is not None]
            if ds and kind != "cta" and _rows_agree(self, rc, insn, kind):
                ds = [_conditional(d) for d in ds]
            if ds:
                found.setdefault(key, []).append(ds)
        for first, *copies in found.values():
            head, *rest = first
            if copies:
                head = replace(head, related=head.related + tuple(
                    Related(ds[0].span, "the same barrier, unrolled: split here too")
                    for ds in copies))
            yield head
            yield from rest


def _findings(rule: Rule, rc: RuleContext, splits: BarrierSplits, insn: Instruction,
              kind: str) -> list[Diagnostic | None]:
    if kind == "warp":
        return list(_warp_sync(rule, rc, splits, insn))
    split = splits.split(insn, kind)
    return [_report(rule, rc, splits, insn, kind, split)] if split else []


def _rows_agree(rule: Rule, rc: RuleContext, insn: Instruction, kind: str) -> bool:
    """With the block shape unknown: whether a warp-level finding goes away when each
    warp is 32 consecutive `%tid.x` of one row (`warp_rows.rows_facts`)."""
    if warp_rows.shape_known(rc):
        return False
    rows = warp_rows.rows_facts(rc)
    if rows is None:
        return False
    return not any(_findings(rule, rc, BarrierSplits(rows, rc.module), insn, kind))


def _conditional(d: Diagnostic) -> Diagnostic:
    """A finding that only blocks whose warps are not whole rows show: a note."""
    return replace(d, severity=Severity.NOTE, certainty=Certainty.POSSIBLE,
                   message=f"{d.message} {warp_rows.CONDITION}",
                   notes=(warp_rows.NOTE, *d.notes), help=warp_rows.HELP,
                   details={**d.details, "condition": "block shape"})


def _report(rule: Rule, rc: RuleContext, splits: BarrierSplits, insn: Instruction, kind: str,
            split: Split) -> Diagnostic | None:
    other = splits.other_barrier(insn, split)
    aligned = not isinstance(insn, (CtaBarrier, BarrierCluster)) or insn.is_aligned
    if other is None and not aligned:
        return None  # barrier.sync waits only for the threads that have not exited
    sure = split.skipping is not None and bool(split.skipping.any())
    line = _line(split.where)
    where = "its guard" if split.where is insn else f"the branch at line {line}"
    what = "threads of a warp" if kind == "count" else "threads of the block"
    label = f"{_who(splits, split.skipping, kind)}{splits.blocks.get(id(split.where), '')} " \
            "skip it" if sure else f"{where} may send {what} different ways"
    source, chain = splits.origin(split.reg, split.where)
    return rule.diagnostic(
        rc, insn, _message(insn, kind, split, sure),
        severity=Severity.ERROR if other is not None else Severity.WARNING,
        certainty=Certainty.DEFINITE if sure else Certainty.POSSIBLE, label=label,
        notes=[f"{where} depends on {chain}", _next_barrier(insn, other)], help=_HELP[kind],
        related=() if other is None or other.span is None else
        (Related(other.span, "the threads that skip it wait here"),),
        details={"barrier": insn.full_opcode, "branch": line, "source": source,
                 "skipped_by": "barrier" if other is not None else "exit"})


def _message(insn: Instruction, kind: str, split: Split, sure: bool) -> str:
    text = f"`{_text(insn)}`"
    if kind == "count":
        return f"{text} {'is' if sure else 'may be'} reached by only some threads of a warp"
    if split.loop:
        return f"{text} may be reached a different number of times by the threads of the block"
    return f"{text} {'is not' if sure else 'may not be'} reached by every thread of the block"


def _next_barrier(insn: Instruction, other: Instruction | None) -> str:
    """What the threads that skip `insn` do next, and what that does."""
    if other is None:
        return ("the threads that skip it leave the kernel: the barrier waits only for "
                f"threads that have not exited, but `{insn.full_opcode}` is `.aligned`, which "
                "the PTX ISA leaves undefined in code not every thread of the block runs")
    there = f"the threads that skip it may wait at `{_text(other)}` on line {_line(other)}"
    if same_id(insn, other) is False:
        return f"{there} instead, another barrier: neither completes and the block hangs"
    return (f"{there} instead: the two barriers pair up (releasing the others early) or the "
            "block never completes either")


def _who(splits: BarrierSplits, skipping: np.ndarray | None, kind: str) -> str:
    import numpy as np  # noqa: PLC0415

    assert skipping is not None
    idx = np.flatnonzero(skipping)
    if kind == "count":
        warp = splits.space.index("warp")
        w = next(int(w) for w in np.unique(warp[idx])
                 if not skipping[warp == w].all())
        lanes = [int(t) % 32 for t in idx if warp[t] == w]
        return f"lanes {lane_text(lanes)} of warp {w}"
    if splits.space.dims[1:] == (1, 1):
        return f"threads {lane_text([int(t) for t in idx])}"
    space = splits.space
    return f"{idx.size} of the {space.n} threads (e.g. {space.name(int(idx[0]))})"


def _warp_sync(rule: Rule, rc: RuleContext, splits: BarrierSplits,
               insn: Instruction) -> Iterator[Diagnostic]:
    import numpy as np  # noqa: PLC0415

    mask = splits.mask(insn)
    if mask is None:
        return
    reaching, culprit = splits.reaching_lanes(insn)
    lane = splits.space.index("lane")
    if reaching is None:
        if culprit is not None and mask == 0xFFFFFFFF:
            yield _warp_report(rule, rc, splits, insn, mask, None, culprit)
        return
    outside = reaching & ((mask >> lane) & 1 == 0)
    if outside.any():
        yield _warp_report(rule, rc, splits, insn, mask, outside, culprit)
        return
    warp = splits.space.index("warp")
    for w in np.unique(warp[reaching]):
        mine = warp == w
        missing = mine & ~reaching & ((mask >> lane) & 1 == 1)
        if missing.any():
            yield _warp_report(rule, rc, splits, insn, mask, missing, culprit, missing=True)
            return


def _warp_report(rule: Rule, rc: RuleContext, splits: BarrierSplits, insn: Instruction,
                 mask: int, lanes: np.ndarray | None, split: Split | None,
                 missing: bool = False) -> Diagnostic:
    import numpy as np  # noqa: PLC0415

    text = f"`{_text(insn)}`"
    sure = lanes is not None and splits.space.exact
    if lanes is None:
        message = f"{text} may be skipped by lanes of its mask"
        label = "lanes of one warp may take different ways before it"
    else:
        idx = np.flatnonzero(lanes)
        w = int(splits.space.index("warp")[idx[0]])
        these = [int(t) % 32 for t in idx if int(t) // 32 == w]
        where = f" of warp {w}" if w else ""
        if missing:
            message = f"lanes of the member mask never reach {text}"
            label = f"lanes {lane_text(these)}{where} are in the mask but skip it"
        else:
            message = f"{text} is executed by lanes outside its member mask"
            label = f"lanes {lane_text(these)}{where} execute it but are not in 0x{mask:08x}"
    notes = ["`bar.warp.sync` waits for every lane of its mask, and is undefined for a "
             "lane that is not in it"]
    if split is not None:
        source, chain = splits.origin(split.reg, split.where)
        notes.insert(0, f"the branch at line {_line(split.where)} depends on {chain}")
    return rule.diagnostic(
        rc, insn, message, certainty=Certainty.DEFINITE if sure else Certainty.POSSIBLE,
        label=label, notes=notes, help=_HELP["warp"],
        details={"barrier": insn.full_opcode, "mask": f"0x{mask:08x}",
                 "branch": _line(split.where) if split is not None else None})


_HELP = {
    "cta": "compute the condition first and put the barrier where every thread of the block "
           "passes (for `__syncthreads()` in a loop: make the trip count the same in every "
           "thread)",
    "count": "let whole warps take the branch (a condition on the warp index, not the lane)",
    "warp": "pass `__syncwarp` the mask of the lanes that really reach it (`__activemask()` "
            "before the branch), or move it where the whole mask arrives",
}


def _text(insn: Instruction) -> str:
    return str(insn).rstrip(";")


def _line(insn: Instruction) -> int | None:
    return insn.span.line if insn.span is not None else None


__all__ = ["BarrierDivergence"]
