"""`barrier-divergence`: a barrier that some threads of the block (or, for `bar.warp.sync`
and barriers with a thread count, of a warp) skip or reach a different number of times.
`threads/barrier_split.py` finds the branch that may split it; this module words it."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from ..diagnostics import Certainty, Diagnostic, Related, Severity
from ..threads.barrier_split import BarrierSplits, Split, same_id, source_line
from ..threads.grid_barrier import grid_barriers
from ..ir.instruction import Instruction
from ..ir.instructions.sync import BarrierCluster, BarWarpSync, CtaBarrier
from ..ir.traits import Barrier, Call
from . import warp_rows
from .grid_sync import grid_split, in_grid
from .base import Rule, RuleContext
from .wording import lane_text

if TYPE_CHECKING:
    import numpy as np

class BarrierDivergence(Rule, id="barrier-divergence", severity=Severity.ERROR):
    """A CTA barrier that some threads of the block may skip or reach a different number
    of times.

    ## What it does
    Checks every `bar.sync`/`barrier.sync`, `bar.red`/`barrier.red`, `bar.arrive`,
    `barrier.cluster` and `call` of a function that executes one, and `bar.warp.sync`
    (`__syncwarp`). A barrier runs in a thread when every branch it is control dependent
    on goes its way: an `if` around it, the exit test of a loop containing it, an early
    `ret`/`exit` (a guarded `@%p ret` is such a branch). The rule takes the *iterated*
    control dependence of the barrier's block (the branches deciding whether those
    branches run too), plus the barrier's own guard, and asks of each whether it may send
    threads of one block different ways.

    That is a block-level question, stronger than warp-level uniformity: with a 32x8 block
    every warp is one row, so `%tid.y < 4` agrees within each warp yet warps 4-7 go the
    other way. A forward taint analysis over the final CFG answers it:

    - sources: `%tid.*`, `%laneid`, `%warpid`, the lane masks, the clocks (unless the
      launch pins them to one number, e.g. `%tid.y` when `ntid.y = 1`); results that differ
      per thread whatever the inputs: atomics, `.local` loads, warp collectives (`vote`,
      `shfl`, `redux`, `match`, `activemask`, ...), calls, unmodelled instructions;
    - data: a result is block-varying when an operand, an address register or the guard
      is;
    - control: where threads that took different ways at a block-varying branch meet, the
      registers written in between are block-varying (the same sync dependence as for
      warps);
    - a branch is block-varying when its predicate is and the facts do not decide it.

    `bar.red` results and loads from a block-uniform address are uniform: every thread of
    the block gets the same value (for loads, assuming no other thread writes that memory
    meanwhile, which would be a race that `shared-memory-race` reports).

    Grid-wide barriers (cooperative groups' `this_grid().sync()`, which nvcc inlines) are
    recognised by what they do (`threads/grid_barrier.py`): a whole-block barrier, then an
    `atom`/`red` at gpu or system scope on a global word (one thread arrives for its
    block), then a loop spinning on `.acquire`/`.relaxed`/`.volatile` loads of the same
    word. Every block must arrive, so the entry barrier is also checked for branches that
    may send whole *blocks* different ways (the same taint analysis with `%ctaid` and
    `%smid` as sources too): "`barrier.sync 0` may not be reached by every block of the
    grid", an error (`details.skipped_by = "block"`, `grid = true`). A block-level finding
    on that barrier gets a note saying so (`grid = true`), and the barrier that closes the
    grid barrier is not reported again.

    Barriers with a thread count (`bar.sync 1, 64`, `bar.arrive 1, 64`) are meant for some
    warps only, so they are checked for a split *warp* instead (the warp divergence,
    refined by evaluating the predicate in every lane when the block shape is known:
    `%tid.x < 64` keeps warps whole and is fine, `%tid.x < 48` splits warp 1).

    `bar.warp.sync mask` with a known mask: when no branch splits the warp before it, every
    lane of the warp reaches it and every lane must be in the mask; when one branch does
    and the block shape lets the rule evaluate it lane by lane, the lanes that get there
    must be exactly those of the mask. Other cases are left alone, except a full mask
    (`0xffffffff`) under a warp-divergent branch, reported as possible. `bar.warp.sync`
    waits only for the lanes of its mask that have not exited, so lanes that turn away only
    to leave the kernel (running nothing but loads, register arithmetic and branches on
    their way to `ret`/`exit`: `if (i >= n) return;` before a `__syncwarp()`) are not
    missing participants. A lane that is still running (it stores, synchronises, calls, or
    loops back) while the others wait is missing from the mask: an error, `exit_tail.bad`.

    Warp-level uniformity (`%tid.x / 32` with whole-row warps, `__shfl_sync(mask, v, 0)`,
    votes, `redux.sync`; see `divergent-bra-uni`) decides whether a branch splits a warp.
    With the block shape unknown, a `bar.warp.sync` or counted barrier found split only
    because `%tid.x / 32` might differ within a warp is re-checked assuming whole-row warps
    and, when that settles it, reported as a note "... when the block is 2-D or 3-D and
    `%ntid.x` is not a multiple of 32" (`details.condition = "block shape"`).

    Details: `barrier` (the opcode), `branch` (the line of the deciding branch, or of the
    barrier for its own guard), `source` (where the difference comes from: `%tid.x`, an
    opcode such as `atom.shared.add.u32`, `control`, `unknown`), `skipped_by` (`barrier`:
    the skipping threads may reach another barrier; `exit`: they only leave the kernel;
    `block`: whole blocks skip a grid barrier), `grid` (the barrier opens a grid barrier).
    For `bar.warp.sync`: `mask` and `branch`. Only the first copy of each CUDA barrier (by
    `.loc` line, and the line it is inlined at) is reported; copies nvcc made by unrolling
    or splitting a loop count as the same barrier.

    ## Why is this bad?
    A barrier completes when every (non-exited) thread of the block has arrived. A
    thread that skips it leaves the others waiting forever, or arrives at the next
    barrier instead and releases them early: the reads after the barrier then race with
    writes before it. The symptom is a hang or wrong results that change with the
    schedule and the GPU.

    ## Certainty
    An error when the threads that skip the barrier may reach *another* barrier (the two
    pair up, releasing threads early, or, with different barrier numbers, the block
    hangs). A warning when they only leave the kernel: that does not block the barrier on
    current hardware (the PTX ISA: `barrier` waits for the *non-exited* threads, and
    `exit` releases a barrier that only the exiting threads were holding up), but
    `bar.sync` is `.aligned`, which the PTX ISA leaves undefined in code not every thread
    of the block runs, and the CUDA guide allows `__syncthreads()` only where the
    condition is the same in the whole block. `barrier.sync` without `.aligned` is what
    cooperative groups' `this_thread_block().sync()` compiles to; the PTX ISA defines it
    with exited threads, but the CUDA cooperative-groups contract requires every thread of
    the group to take part in a collective (undefined behaviour otherwise), and PTX cannot
    tell hand-written `barrier.sync` from that call: a warning as well (`cg_exit.bad`).

    *Definite* when the block shape is known, the deciding branch is reached by every
    thread of the block, and evaluating its predicate in every thread of some block of the
    launch shows both ways: the predicate must be a function of the thread index,
    constants, values the facts pin to one number, and `%ctaid` when the grid is given.
    The label then names the threads ("threads 232-255 of block 3 skip it"). *Possible*
    otherwise ("may not be reached"). A barrier in a loop whose exit test differs between
    threads is reported as "may be reached a different number of times".

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

    Compute the condition, then synchronise where every thread passes. For a loop, make
    the trip count the same in every thread (walk the data a block-wide tile at a time and
    let threads past the end load a neutral value, `loop_trip.ok`). For a named barrier,
    split by warp (`%tid.x / 32 < 2`), not by lane. For `__syncwarp`, pass the mask of the
    lanes that really arrive.

    ## Limitations
    - Block-level uniformity is a taint analysis: a register computed from `%tid.x` in a
      way that ends up the same in every thread (`%tid.x * 0`, `%tid.x - %tid.x`) still
      counts as varying unless the facts fold it to a constant.
    - A barrier whose number is a register is not checked for threads using different
      numbers; the thread count of a named barrier is not compared with the warps that
      arrive.
    - `mbarrier` waits, `cp.async.wait_group` and cluster-wide barriers across blocks are
      not modelled as barriers here. A grid barrier is recognised only in the
      arrive-then-spin shape above; whether a skipped one hangs depends on whole blocks
      skipping it, so that finding is never definite.
    - `bar.warp.sync` is checked only with a known mask, and under a divergent branch only
      when one branch splits the warp and the block shape is known. A computed mask
      (`__syncwarp(__ballot_sync(...))`, `__activemask()`), and `shfl.sync`, `vote.sync`
      and the other collectives, are `warp-sync-mask`'s: one defect, one rule.
    - A butterfly reduction (`cg::reduce` on floats) is not known to leave one value in
      every lane: a `__syncwarp()` under a branch on its result, with lanes that go on
      running, is reported as possible.
    - Barriers inside a called `.func` are seen at the call; the callee's own branches are
      not.

    ## Samples
    Under `ptx_samples/barrier-divergence/`, each with its CUDA source and a clean twin:

    - `tid_guard.bad`: `if (t < 32) { ...; __syncthreads(); }` followed by another
      `__syncthreads()`: threads 32-127 pair the two barriers up.
    - `loop_trip.bad`: a barrier in a loop whose trip count depends on the thread (a
      warning: the early leavers exit); `loop_trip.ok` walks block-wide tiles.
    - `early_exit.bad`: threads past the end of the array `return` before the barrier (a
      warning, definite with the launch's grid).
    - `row_split.bad`: `%tid.y < 4` in a 32x8 block: warp-uniform, block-divergent; the
      rows that skip the barrier also race with the others (a `shared-memory-race`).
    - `named_barrier.bad`: `bar.sync 1, 64` under `%tid.x < 48`: warp 1 split, the block
      hangs.
    - `warp_mask.bad`: `bar.warp.sync -1` reached by lanes 0-15 only, while lanes 16-31 go
      on to a store.
    - `shuffle_broadcast.bad`: a row sum broadcast per half-warp,
      `__shfl_sync(..., 0, 16)`, then a full-mask `__syncwarp()` under a branch on it; the
      `.ok` twin broadcasts from lane 0 of the warp.
    - `vote_loop.bad`: lanes leave a loop containing `__syncwarp()` at their own sentinel;
      the `.ok` twin decides with `__any_sync` and sums with `__reduce_add_sync`.
    - `exit_tail.bad`: the tail lanes skip the exchange but go on to store; in the `.ok`
      twin they `return` first.
    - `cg_exit.bad`: `early_exit` with cooperative groups: `this_thread_block().sync()`
      (`barrier.sync`, not `.aligned`) after threads past the end returned (a warning).
    - `grid_sync.bad`: blocks past the data `return` before `grid.sync()` in a
      cooperative launch: the other blocks wait for them forever; the twin guards the
      work only.
    - `halving_loop.bad`: a halving reduction whose barrier sits under `t < d / 2`; the
      twin, `for (d = blockDim.x; d > 0; d >>= 1)` with the barrier first in the loop, is
      clean with or without a block shape (issue #22's "barrier-free path": the loop
      runs at least once for every legal block).

    ## Suppress
    `--disable barrier-divergence`, or `disable = ["barrier-divergence"]` under
    `[tool.ptxlint]`; one line: `// ptxlint: disable=barrier-divergence`
    (`docs/suppression.md`).
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        if not any(isinstance(i, (Barrier, BarWarpSync, Call)) for i in rc.facts.function.instructions):
            return
        splits = BarrierSplits(rc.facts, rc.module)
        grid = grid_barriers(rc.facts)
        closing = {id(g.exit): g for g in grid.values() if g.exit is not None}
        # copies of one CUDA barrier (an unrolled loop) make one finding: the first copy
        # that splits, with the other split copies as related locations
        found: dict[tuple, list[list[Diagnostic]]] = {}
        opened: set[int] = set()  # grid barriers whose entry has a finding
        for insn, kind in splits.sites:
            rc.deadline.check()
            key = (kind, source_line(insn) or id(insn))
            if id(insn) in closing and id(closing[id(insn)].entry) in opened:
                continue  # the same grid barrier: one finding, at its entry
            ds = [d for d in _findings(self, rc, splits, insn, kind) if d is not None]
            if ds and kind != "cta" and _rows_agree(self, rc, insn, kind):
                ds = [_conditional(d) for d in ds]
            if kind == "cta" and id(insn) in grid:
                ds = [in_grid(d, grid[id(insn)]) for d in ds] if ds else \
                    grid_split(self, rc, grid[id(insn)])
                if ds:
                    opened.add(id(insn))
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
    if other is None and _aligned(insn):
        return ("the threads that skip it leave the kernel: the barrier waits only for "
                f"threads that have not exited, but `{insn.full_opcode}` is `.aligned`, which "
                "the PTX ISA leaves undefined in code not every thread of the block runs")
    if other is None:
        group = "cluster" if isinstance(insn, BarrierCluster) else "thread_block"
        return ("the threads that skip it leave the kernel: the hardware releases "
                f"`{insn.full_opcode}` without them, but it is the barrier of cooperative "
                f"groups' `this_{group}().sync()`, which CUDA requires every thread of the "
                "group to call (undefined behaviour otherwise)")
    there = f"the threads that skip it may wait at `{_text(other)}` on line {_line(other)}"
    if same_id(insn, other) is False:
        return f"{there} instead, another barrier: neither completes and the block hangs"
    return (f"{there} instead: the two barriers pair up (releasing the others early) or the "
            "block never completes either")


def _aligned(insn: Instruction) -> bool:
    return not isinstance(insn, (CtaBarrier, BarrierCluster)) or insn.is_aligned


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
    if not reaching.any():
        return
    warp = splits.space.index("warp")
    reached = np.zeros(int(warp.max()) + 1, bool)
    reached[warp[reaching]] = True
    # lanes of the mask that skip it, in warps some lane reaches: the first such warp's
    missing = reached[warp] & ~reaching & ((mask >> lane) & 1 == 1)
    if missing.any():
        missing &= warp == warp[missing].min()
        yield _warp_report(rule, rc, splits, insn, mask, missing, culprit, missing=True)


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
