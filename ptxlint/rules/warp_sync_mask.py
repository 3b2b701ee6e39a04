"""`warp-sync-mask`: a warp-synchronous instruction whose member mask disagrees with
the lanes that execute it. `threads/member_masks.py` evaluates the lanes and the masks thread by
thread; this module decides and words."""
from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..diagnostics import Certainty, Diagnostic, Severity
from ..ir.instruction import Instruction
from ..ir.instructions.sync import Activemask, BarWarpSync, Vote, VoteSync
from ..ir.operands import Register
from .base import Rule, RuleContext
from .wording import lane_text

if TYPE_CHECKING:
    from ..threads.member_masks import MemberMasks, Runs


class WarpSyncMask(Rule, id="warp-sync-mask", severity=Severity.ERROR):
    """A warp-synchronous instruction whose member mask disagrees with its lanes.

    A `shfl.sync`, `vote.sync`, `match.sync`, `redux.sync`, `elect.sync` or
    `bar.warp.sync` whose member mask leaves out a lane that executes it, or names a lane
    that is still running but does not execute it.

    ## What it does
    Evaluates, lane by lane for each warp of the block, which lanes execute the
    instruction (its guard and every branch deciding it) and the mask each of them
    passes: a constant, an expression of the lane index (what a cooperative-groups
    `thread_block_tile<16>` passes: `0xffff << (%laneid & 16)`), the result of
    `__activemask()` (`activemask.b32`: the lanes that execute *it*) or of
    `__ballot_sync(m, p)` (`vote.sync.ballot.b32`: the lanes that execute it with `p`
    true), and `&`, `|`, `^`, `~` of those. Two defects are reported:

    - a lane executes the instruction but its own bit is not in its mask;
    - the mask names a lane of the warp that does not execute the instruction and has
      not exited: a branch that may split the warp sent it elsewhere. Lanes that only
      leave the kernel on the other side (`if (i >= n) return;`) have exited, and the
      instruction does not wait for them.

    A `bar.warp.sync` whose mask is one known value (`__syncwarp()`,
    `__syncwarp(0xffff)`) is `barrier-divergence`'s, which checks it like the other
    barriers; this rule takes the computed ones (`__syncwarp(__ballot_sync(...))`,
    `__syncwarp(__activemask())`, a tile's mask), so one defect is reported once.

    ## Why is this bad?
    The PTX ISA leaves a `.sync` instruction undefined for a lane that is not in its
    member mask, and makes it wait until every non-exited lane of the mask executes it
    with the same mask: a lane that runs elsewhere leaves the warp hanging (Volta and
    later) or the exchange reading garbage. compute-sanitizer's `synccheck` reports these
    only at run time, on the inputs it is given.

    ## Certainty
    An error (definite) when the defect holds in every execution the launch allows: the
    block shape known, the lanes that run the instruction, its mask and every branch
    that may send lanes of the warp away evaluated thread by thread (a constant
    `0x0000ffff` on a shuffle all 32 lanes run, `__shfl_sync(0xffffffff, ...)` inside
    `if (lane < 16)`). When a branch or guard that depends on loaded data or unknown
    values may send lanes of the mask away, a warning naming it (`condition` in the
    details). With the block shape unknown, each warp is taken to be 32 consecutive
    `%tid.x`: a defect is at most a warning, and such a branch a note. A mask the
    analysis cannot evaluate (a ballot of loaded data, a mask read from memory) is not
    judged.

    ## Example
    ```ptx
    mov.u32             %r1, %laneid;
    setp.lt.u32         %p1, %r1, 16;
    @!%p1 bra           DONE;
    shfl.sync.bfly.b32  %r2, %r1, 1, 31, -1;    // expect: warp-sync-mask kind=missing
    DONE:
    st.global.u32       [%rd1], %r1;            // lanes 16-31 go on running here
    ```

    ## Use instead
    ```ptx
    mov.u32             %r1, %laneid;
    setp.lt.u32         %p1, %r1, 16;
    @!%p1 bra           DONE;
    shfl.sync.bfly.b32  %r2, %r1, 1, 31, 0xffff;    // the lanes that take the branch
    DONE:
    st.global.u32       [%rd1], %r1;
    ```
    In CUDA: pass the mask of the lanes that really get there (`__ballot_sync` of the
    branch's condition before the branch, `__activemask()` or
    `cg::coalesced_threads()` inside it, `cg::tiled_partition` of the group that takes
    the branch), or move the collective to where the whole mask arrives.

    ## Limitations
    - Two lanes that pass different masks are each checked against their own; a lane
      that runs the instruction with another mask than the one naming it is not
      reported (the emulator does not observe it either).
    - A lane sent away by a branch is taken not to come back to the same instruction in
      the same step; copies of the instruction in other branches (the same shuffle
      written twice) are not paired up.
    - A mask computed from `%lanemask_*`, `__match_any_sync` or a loop is not evaluated.
    - Only the kernel is checked, not the device functions it calls.

    ## Samples
    Under `ptx_samples/warp-sync-mask/`, each with its CUDA source and a clean twin:

    - `half_warp_shuffle.bad`: a butterfly with a full mask inside `if (lane < 16)`.
    - `ballot_syncwarp.bad`: `__syncwarp(__ballot_sync(~0, lane < 24))` reached by lanes
      0-15 only.
    - `activemask_reduce.bad`: `__activemask()` taken before the branch that keeps the even
      lanes.
    - `tiled_partition.bad`: a `thread_block_tile<16>` shuffle under
      `tile.thread_rank() < 8` (per-lane masks `0xffff << (lane & 16)`).
    - `coalesced_group.bad`: `cg::coalesced_threads()` taken before the branch.
    - `segment_scan.bad`: a width-16 scan whose mask `0x0000ffff` leaves out the upper
      half-warp, which runs it too.

    ## Suppress
    `--disable warp-sync-mask`, or `disable = ["warp-sync-mask"]` under `[tool.ptxlint]`.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        from ..threads.member_masks import MemberMasks, sync_sites  # noqa: PLC0415
        sites = sync_sites(rc.facts)
        if not sites:
            return
        masks = MemberMasks(rc.facts, rc.module)
        for insn in sites:
            rc.deadline.check()
            if isinstance(insn, BarWarpSync) and masks.splits.mask(insn) is not None:
                continue  # one known mask: barrier-divergence's (see the docstring)
            d = _judge(self, rc, masks, insn)
            if d is not None:
                yield d


def judged(masks: MemberMasks, insn: Instruction) -> bool:
    from ..threads.member_masks import member_mask  # noqa: PLC0415
    """Whether the rule decides `insn` thread by thread (the soundness suite holds the
    emulator's observations there against its findings; elsewhere they are unjudged)."""
    if not masks.space.exact or member_mask(insn) is None:
        return False
    if isinstance(insn, BarWarpSync) and masks.splits.mask(insn) is not None:
        return False
    runs = masks.runs(insn)
    return runs is not None and runs.exact and masks.mask(insn) is not None \
        and not masks.elsewhere(insn).unknown


def _judge(rule: Rule, rc: RuleContext, masks: MemberMasks,
           insn: Instruction) -> Diagnostic | None:
    import numpy as np  # noqa: PLC0415 -- numpy only when a site is judged
    runs, mask = masks.runs(insn), masks.mask(insn)
    if runs is None or mask is None or not runs.any.any():
        return None
    sure = runs.exact and masks.space.exact
    own = (mask >> masks.lane) & 1 == 1
    outside = (runs.all if sure else runs.any) & ~own
    if outside.any():
        return _outside(rule, rc, masks, insn, mask, outside, sure)
    named = masks.warp_or(mask, runs.all if sure else runs.any)
    in_mask = (named >> masks.lane) & 1 == 1
    away = masks.elsewhere(insn)
    missing = in_mask & away.lanes & ~runs.any
    if missing.any():
        return _missing(rule, rc, masks, insn, mask, runs, missing, sure)
    # a branch that could not be evaluated may send any lane away: a mask naming other
    # lanes than the one passing it may wait for nothing
    if away.unknown and (named & ~np.left_shift(1, masks.lane))[runs.any].any():
        return _may_skip(rule, rc, masks, insn, mask, runs, away.unknown)
    return None


# ---- wording ------------------------------------------------------------------------------------
def _outside(rule: Rule, rc: RuleContext, masks: MemberMasks, insn: Instruction,
             mask: np.ndarray, outside: np.ndarray, sure: bool) -> Diagnostic:
    w, lanes = _first_warp(masks, outside)
    shown = _mask_text(masks, mask, outside & (masks.warp == w))
    message = f"`{insn.full_opcode}` is executed by lanes outside its member mask" if sure \
        else f"`{insn.full_opcode}` may be executed by lanes outside its member mask"
    label = f"lanes {lane_text(lanes)}{_of_warp(w)} {'execute' if sure else 'may execute'} " \
            f"it but are not in {shown}"
    return _finding(rule, rc, masks, insn, sure, message, label,
                    "a lane that is not in the member mask makes the instruction undefined",
                    _details(insn, "outside", shown, lanes, w))


def _missing(rule: Rule, rc: RuleContext, masks: MemberMasks, insn: Instruction,
             mask: np.ndarray, runs: Runs, missing: np.ndarray, sure: bool) -> Diagnostic:
    w, lanes = _first_warp(masks, missing)
    shown = _mask_text(masks, mask, runs.any & (masks.warp == w))
    message = f"`{insn.full_opcode}` waits for lanes of its member mask that do not " \
              "execute it" if sure else \
        f"`{insn.full_opcode}` may wait for lanes of its member mask that do not execute it"
    label = f"lanes {lane_text(lanes)}{_of_warp(w)} are in {shown} but run elsewhere"
    return _finding(rule, rc, masks, insn, sure, message, label,
                    "`.sync` instructions wait for every lane of the mask that has not "
                    "exited; these lanes have not", _details(insn, "missing", shown, lanes, w))


def _finding(rule: Rule, rc: RuleContext, masks: MemberMasks, insn: Instruction, sure: bool,
             message: str, label: str, why: str, details: dict) -> Diagnostic:
    """An error when the lanes and masks were evaluated exactly, else a warning saying
    what was not."""
    notes = [_source_note(rc, masks, insn), why]
    if not sure:
        notes.insert(0, _unsure_note(masks))
    return rule.diagnostic(
        rc, insn, message, severity=Severity.ERROR if sure else Severity.WARNING,
        certainty=Certainty.DEFINITE if sure else Certainty.POSSIBLE, label=label,
        notes=[n for n in notes if n], help=_HELP, details=details)


def _may_skip(rule: Rule, rc: RuleContext, masks: MemberMasks, insn: Instruction,
              mask: np.ndarray, runs: Runs, unknown: list[Instruction]) -> Diagnostic:
    w, _ = _first_warp(masks, runs.any)
    shown = _mask_text(masks, mask, runs.any & (masks.warp == w))
    where = unknown[0]
    line = where.span.line if where.span is not None else None
    what = "its guard" if where is insn else f"the branch at line {line}"
    notes = [_source_note(rc, masks, insn)]
    reg = where.guard.register if where.guard is not None else None
    if reg is not None:
        _, chain = masks.splits.origin(reg, where)
        notes.insert(0, f"{what} depends on {chain}")
    if not masks.space.exact:  # the branch may split a warp only in the shape assumed
        notes.insert(0, _unsure_note(masks))
    return rule.diagnostic(
        rc, insn, f"`{insn.full_opcode}` may be skipped by lanes of its member mask",
        severity=Severity.WARNING if masks.space.exact else Severity.NOTE,
        certainty=Certainty.POSSIBLE,
        label=f"{what} may send lanes of {shown} elsewhere", notes=[n for n in notes if n],
        help=_HELP, details={"instruction": insn.full_opcode, "kind": "may-skip",
                             "mask": shown if shown.startswith("0x") else "per-lane",
                             "warp": w, "condition": f"lanes of a warp disagree at line {line}"})


def _details(insn: Instruction, kind: str, mask: str, lanes: list[int], warp: int) -> dict:
    return {"instruction": insn.full_opcode, "kind": kind,
            "mask": mask if mask.startswith("0x") else "per-lane",
            "lanes": f"0x{sum(1 << k for k in lanes):08x}", "warp": warp}


def _first_warp(masks: MemberMasks, sel: np.ndarray) -> tuple[int, list[int]]:
    import numpy as np  # noqa: PLC0415 -- numpy only when a site is judged
    w = int(masks.warp[np.flatnonzero(sel)[0]])
    return w, [int(x) for x in masks.lane[sel & (masks.warp == w)]]


def _of_warp(w: int) -> str:
    return f" of warp {w}" if w else ""


def _mask_text(masks: MemberMasks, mask: np.ndarray, sel: np.ndarray) -> str:
    """The mask the selected lanes pass: one value, or "their masks"."""
    values = mask[sel]
    return f"0x{int(values[0]):08x}" if values.size and (values == values[0]).all() \
        else "their masks"


def _source_note(rc: RuleContext, masks: MemberMasks, insn: Instruction) -> str:
    from ..threads.member_masks import member_mask  # noqa: PLC0415
    op = member_mask(insn)
    if not isinstance(op, Register):
        return ""
    defs = masks.builder.defs.get(op.key, [])
    if len(defs) != 1 or defs[0].span is None:
        return ""
    d = defs[0]
    if isinstance(d, Activemask):
        return (f"the mask is `__activemask()` at line {d.span.line}: the lanes that run "
                "that instruction, not this one")
    if isinstance(d, (Vote, VoteSync)) and "ballot" in d.mods:
        return (f"the mask is the ballot at line {d.span.line}: the lanes that run it with "
                "its predicate true")
    return ""


def _unsure_note(masks: MemberMasks) -> str:
    if not masks.space.exact:
        return "block shape unknown: each warp is taken to be 32 consecutive `%tid.x`"
    return "which lanes run it depends on values the analysis does not know"


_HELP = ("pass the mask of the lanes that really execute it (`__ballot_sync` of the "
         "condition before the branch, `__activemask()` or `cg::coalesced_threads()` "
         "inside it), or move the collective where every lane of the mask arrives")


__all__ = ["WarpSyncMask", "judged"]
