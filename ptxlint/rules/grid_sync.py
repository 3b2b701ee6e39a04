"""`barrier-divergence` on grid-wide barriers (`threads/grid_barrier.py` recognises
them): a finding on the barrier that opens one says that blocks whose threads all skip
it hang the grid, and a barrier no branch splits within a block is still checked for
branches that send whole blocks different ways."""
from __future__ import annotations

from dataclasses import replace

from ..diagnostics import Certainty, Diagnostic, Severity
from ..ir.instruction import Instruction
from ..threads.barrier_split import BarrierSplits
from ..threads.grid_barrier import GridBarrier, GridVariance
from .base import Rule, RuleContext


def _grid_note(g: GridBarrier) -> str:
    return (f"it opens a grid-wide barrier (`this_grid().sync()`): one thread of each block "
            f"arrives on a global counter (line {_line(g.arrive)}) and waits until every "
            f"block has (line {_line(g.wait)}); a block whose threads all skip it never "
            "arrives, and every other block waits forever")


def in_grid(d: Diagnostic, g: GridBarrier) -> Diagnostic:
    """A block-level finding on the entry of a grid barrier: say what else it breaks."""
    return replace(d, notes=(*d.notes, _grid_note(g)), details={**d.details, "grid": True})


def grid_split(rule: Rule, rc: RuleContext, g: GridBarrier) -> list[Diagnostic]:
    """The entry of a grid barrier that no branch splits within a block, but one may
    send whole blocks different ways (`%ctaid`, data loaded per block)."""
    splits = BarrierSplits(rc.facts, rc.module)
    splits.variance = GridVariance(rc.facts)
    split = splits.split(g.entry, "cta")
    if split is None:
        return []
    line = _line(split.where)
    where = "its guard" if split.where is g.entry else f"the branch at line {line}"
    source, chain = splits.origin(split.reg, split.where)
    return [rule.diagnostic(
        rc, g.entry, f"`{_text(g.entry)}` may not be reached by every block of the grid",
        severity=Severity.ERROR, certainty=Certainty.POSSIBLE,
        label=f"{where} may send blocks different ways",
        notes=[f"{where} depends on {chain}", _grid_note(g)],
        help="let every block reach the grid-wide barrier (guard the work, not the "
             "`grid.sync()`)",
        details={"barrier": g.entry.full_opcode, "branch": line, "source": source,
                 "skipped_by": "block", "grid": True})]


def _text(insn: Instruction) -> str:
    return str(insn).rstrip(";")


def _line(insn: Instruction) -> int | None:
    return insn.span.line if insn.span is not None else None


__all__ = ["grid_split", "in_grid"]
