"""`shared-memory-race`: two threads of one block touch the same shared-memory bytes, at
least one of them writing, between the same two barriers. The pairs are found by
`threads/races.py` (imported on first use: it needs numpy); this module picks the
accesses and words the findings."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from ..diagnostics import Certainty, Diagnostic, Related, Severity
from ..domains.lattice import Tri
from ..interp.facts import Access
from ..ir.instruction import Instruction
from ..ir.instructions.atomic import Atom, Red
from ..ir.instructions.memory import Ld, St
from .base import Rule, RuleContext
from .design import Design, design
from .sites import in_space
from .wording import address_text, object_name

if TYPE_CHECKING:
    from ..threads.races import Race, RaceFinder

ACCESS_CLASSES = (Ld, St, Atom, Red)


class SharedMemoryRace(Rule, id="shared-memory-race", severity=Severity.ERROR):
    """Two threads of a block access the same shared-memory bytes, one of them writing,
    with no barrier between.

    ## What it does
    Finds two accesses to the same `.shared` variable (`ld`, `st`, `atom`, `red`, generic
    ones the analysis traces to a shared variable), at least one of them a write, that two
    threads of one block may execute between the same two barriers and that touch a common
    byte. Two atomics never race, nor two accesses that both carry explicit memory-model
    semantics (`.relaxed`, `.acquire`, `.release`: intentional synchronisation).

    The check runs in four steps, cheapest first:

    1. Same object, one write, offsets that meet: the offset ranges the final facts give
       the two addresses must overlap.
    2. Barrier intervals: assuming every thread meets the barriers in the same order (what
       `barrier-divergence` checks), thread 1 at A and thread 2 at B are between the same
       two barriers when a path from A to B, or from B to A, crosses no barrier (also
       around a loop's back edge: thread 2 may be one trip ahead), or when A and B sit on
       different arms of a branch that splits the block (`if (tid < 32) A else B`).
       Branches the whole block takes together never put two accesses side by side. For
       two threads of *different warps* only a CTA barrier separates them
       (`bar`/`barrier`, `barrier.cluster`, a call of a function executing one); for two
       threads of *one warp* `bar.warp.sync` does too.
    3. Thread by thread: each address is followed back through its definitions to an
       expression of the thread index, constants, the object's symbol and *uniform leaves*
       (values every thread of the block agrees on), then evaluated for every thread of the
       block. The registers the facts narrowed at the access (the guards of the branches
       it depends on, its own guard, what they compare) say which threads get there:
       `tid < 256 - step` leaves out thread 255. Small uniform leaves (a buffer parity
       `k & 1`, a loop counter with few values) are enumerated; when both accesses read the
       same leaf and no definition of it can run between them, the two sides are compared
       for the same value, so `buf[k & 1]` and `buf[(k + 1) & 1]` never meet within one
       step. A loop counter `r = init; r += C` is `init + C*k`, k bounded by the trips of
       its loop. Block-uniform registers a loop flips with an involution of a constant
       (`pin = 1 - pin; pout = 1 - pout`, `p ^= 1`), set from constants in one block and
       flipped in one other block, share one parity P: each is `c + (f(c) - c) * P`, so
       `buf[pout]` and `buf[pin]` are compared for the same P and, started at 0 and 1,
       never meet within a step (`toggle_buffer.ok`). Other uniform leaves stay symbols
       that cancel when shared (`s + 4*tid` vs `s + 4*tid + 4`).
    4. Conditions on loaded data: when a register deciding whether a thread gets to an
       access holds a word loaded from memory the kernel never writes (no store, atomic
       or reduction to that object, no call), at an address of the thread index and of
       values fixed for the block (`keys + 1024*%ctaid.x + 4*t`), two threads loading
       the same address hold the same value. The value sets the facts give that word at
       the two accesses (also from a comparison known there, `row[t] > 0` false) must
       meet for both threads to get there: thread t writing `s[t + 1]` under
       `row[t] > 0` and thread t + 1 writing it under `row[t] <= 0` never collide
       (`run_marks.ok`). nvcc's `prev = t > 0 ? row[t - 1] : 0` (the load on one arm, a
       default before the branch) holds the word in the threads that took the load.

    Two stores that write the same value are a *benign* write-write race (`converged =
    1` stored by every thread that sees convergence): reported as a note, "(benign: all
    writers store 1)", with `benign` in the details. The value is proven equal from the
    stored operands alone: one constant (the same immediate, registers the facts pin to
    one number, the same `mov` of a constant), or the same expression of block-uniform
    values no definition changes between the two stores; both plain scalar `st` of one
    width (PTX aligns a store to its width, so overlapping stores write the same bytes).
    A statement with any other race (a read, a different value) is reported as before.

    The finding sits on the write; the other access gets a secondary label (`related` in
    the JSON report, `relatedLocations` in SARIF). One finding per written CUDA statement
    (the copies of an unrolled loop are one; without `.loc`, one per PTX store): the pair
    shown is the definite one if any, else the one where most threads meet another,
    preferring threads of two warps (then only `__syncthreads()` fixes it). Details:
    `object`, `kinds` (`write-read`, `write-write`, `atomic-read`, ...), `other_line`,
    `threads` (the two linear thread ids), `byte` (the first common byte offset in the
    object) and `same_warp`.

    Threads of one warp race too. Since Volta the lanes of a warp are scheduled
    independently: lane t may read `s[t + 16]` before lane t + 16 has written it, whatever
    the code looked like when warps ran in lockstep. `volatile` makes each access happen
    but orders nothing, so the classic unrolled last-warp reduction through a `volatile`
    pointer is reported (`warp_sum.bad`); `__syncwarp()` between the write and the read
    fixes it (`warp_sum.ok`). Warp collectives (`shfl.sync`, `vote.sync`) wait for their
    lanes but do not order memory, so they do not separate accesses.

    Not checked: accesses whose address is not a known function of the thread index (an
    index loaded from memory, a scatter by computed rank), and pairs whose addresses differ
    by a value the analysis does not know (a loop counter it cannot bound, read by one
    access only). They are counted in one note per kernel ("races not checked for N
    shared-memory accesses ..."), never reported as races.

    Block shape: with the launch's block shape (or `.reqntid`) every thread is evaluated.
    Without it, a kernel that reads only `%tid.x` is taken as one row of as many threads as
    `.maxntid` or the hardware allows (a note says so, and findings are possible at most); a
    kernel that also reads `%tid.y` or `%tid.z` is not checked (one row is no model of a
    32x8 tile), and the note says why.

    The block a kernel is written for: without a block shape, a race found in the row of up
    to 1024 threads may need more threads than the kernel is evidently written for. The
    design: the largest block for which every shared access indexed by `%tid.x` alone stays
    in bounds (`__shared__ float s[256]` written at `s[threadIdx.x]`: 256 threads), or one
    thread per block for a kernel that reads no thread index at all. For each written
    statement the rule finds the fewest threads a row-shaped block needs for one of its
    races (by bisection); when that is more than the design, the finding is a note that
    states it: "possible shared-memory race on `s` when the block has more than 256
    threads", with `min_threads` in its details and a note saying where the design comes
    from. A race within the design stays a warning, and with a block shape given nothing
    changes: the race holds or not for that launch (`block_design`).

    ## Why is this bad?
    Without a barrier the order of the two accesses is up to the scheduler: the read sees
    the old value, the new one, or (for wide accesses) a mix, and the result changes from
    run to run and between GPUs. The PTX memory model makes a data race between weak
    accesses undefined. The classic cases: a tile read before every thread has written it,
    a reduction step reading a slot the previous step is still updating, a double buffer
    whose step barrier was removed.

    ## Certainty
    An error when the race is definite, a warning when it is possible: both are reported
    only with two concrete threads and bytes (what the analysis cannot pin down goes to the
    note above instead), but a possible race rests on values the analysis could not
    follow, and a warning never stops a launch at the pre-launch check. *Definite* when the
    block shape is known, both addresses are functions of the thread index and constants
    only, both accesses run in every thread that reaches them by the thread index alone (no
    condition on other values), and nothing separates them (the same instruction, or one
    block with no barrier between). *Possible* otherwise, still with two concrete threads
    and bytes: e.g. a race inside a loop, or one that needs a buffer parity. A note when
    the race needs a bigger block than the kernel is written for, or when every writer
    stores the same value (still a data race in the PTX memory model, harmless on
    current hardware).

    ## Example
    ```ptx
    mov.u32         %r1, %tid.x;
    shl.b32         %r2, %r1, 2;
    mov.u32         %r3, tile;
    add.u32         %r4, %r3, %r2;
    st.shared.u32   [%r4], %r1;         // expect: shared-memory-race
    ld.shared.u32   %r5, [%r4+4];       // thread 0 reads what thread 1 writes
    ```

    ## Use instead
    ```ptx
    mov.u32         %r1, %tid.x;
    shl.b32         %r2, %r1, 2;
    mov.u32         %r3, tile;
    add.u32         %r4, %r3, %r2;
    st.shared.u32   [%r4], %r1;
    bar.sync        0;                  // every write is done before any read
    ld.shared.u32   %r5, [%r4+4];
    ```

    Put a barrier between the write and the read: `__syncthreads()` (`bar.sync 0`) when the
    two threads may be in different warps, `__syncwarp()` (`bar.warp.sync`) when they are
    always in one warp. With a double buffer, one barrier per step suffices (a step reads
    one buffer and writes the other).

    ## Limitations
    - `bar.arrive` and barriers with a thread count are taken as separating every thread
      (they do only for the warps that take part); `mbarrier` phases, `cp.async` and
      `cp.async.bulk` (TMA) copies into shared memory, `ldmatrix`/`stmatrix`, `st.async`
      and accesses inside called functions are not checked.
    - A barrier separates only if barriers are not divergent (`barrier-divergence`).
    - A thread-varying loop counter is followed only in the form `r = init; r += C`; other
      recurrences are not a known function of the thread index.
    - Uniform values are assumed to be the same in every thread of the block when they come
      from a block-uniform address; values read from racy memory break that assumption.
    - A loaded word is taken as unchanged when the kernel writes no *other* access to its
      object: two pointer parameters are assumed not to alias (as `global-memory-race`
      compares only accesses of one buffer), and no other kernel or the host writes the
      buffer during the launch.
    - The per-thread evaluation is bounded (assignments of enumerated values, 4000
      candidate pairs per kernel); pairs beyond the bounds are counted in the note.

    ## Samples
    Under `ptx_samples/shared-memory-race/`, each with a clean twin:

    - `neighbour.bad`: `out[i] = s[t] + s[(t + 1) % 256]` right after `s[t] = in[i]`:
      thread t + 1 may not have written `s[t + 1]` yet.
    - `tree_sum.bad`: a tree reduction without the barrier per step.
    - `warp_sum.bad`: a warp-synchronous `volatile` reduction without `__syncwarp`.
    - `double_buffer.bad`: a stencil with two buffers and no barrier per step; its twin,
      with the barrier, is clean: within a step the two buffers never meet.
    - `atomics.bad`: a plain read of histogram bins that atomics are still updating.
    - `arms.bad`: one warp writes what the other reads on the other arm of a `%tid.x`
      branch; the twin splits by `%ctaid`, so the arms never run side by side.
    - `block_design.bad` (no block shape given): `shift_left` reads its neighbour's element
      before the barrier, a race for any block of two threads or more; races that would
      need a bigger block than a kernel is written for are notes.
    - `flag.bad`: threads record their own index in one shared word (a race), and, in a
      second kernel, all store 1 (a benign note); the twin uses `atomicMax` and
      `__syncthreads_or`.
    - `toggle_buffer.bad`: a double buffer whose `pin` and `pout` both start at 0; the
      twin starts them at 0 and 1 and flips both after the step barrier.
    - `run_marks.bad`: writes to `s[t + 1]` under `row[t] > 0` and to `s[t]` under
      `row[t - 1] >= 0`, which overlap; the twin's `<= 0` excludes the other writer.

    `pricing_kernels/kernels/flawed/lattice_no_barrier.cu` is the lattice step of the
    binomial pricer with its barrier removed.

    ## Suppress
    `--disable shared-memory-race`, or `disable = ["shared-memory-race"]` under
    `[tool.ptxlint]`; one line: `// ptxlint: disable=shared-memory-race`.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        accs = [a for a in rc.facts.accesses if _participates(a)]
        if not any(a.insn.access_kind != "load" for a in accs):
            return
        from ..threads.races import RaceFinder  # noqa: PLC0415 -- numpy, only when needed

        finder = RaceFinder(rc.facts, rc.module, accs)
        evident = None
        for race in finder.races():
            race, value = _harmful(finder, race)
            n = None
            if not finder.space.exact:
                evident = evident or [design(rc)]
                race, n = _beyond_design(finder, race, evident[0])
            if n is None:
                d = _report(self, rc, finder, race)
            else:
                more = "more than 1 thread" if n == 2 else f"more than {n - 1} threads"
                d = _report(self, rc, finder, race, f"when the block has {more}")
                d = replace(d, severity=Severity.NOTE, certainty=Certainty.POSSIBLE,
                            notes=(*d.notes, evident[0].reason),
                            details={**d.details, "min_threads": n})
            yield d if value is None else _benign(d, value)
        if finder.unchecked:
            yield _note(self, rc, finder)


def _participates(acc: Access) -> bool:
    return isinstance(acc.insn, ACCESS_CLASSES) and acc.width > 0 \
        and in_space(acc, "shared") and acc.guard is not Tri.FALSE


VERB = {"write": "writes", "read": "reads", "atomic": "updates"}
PLURAL = {"write": "write", "read": "read", "atomic": "update"}


def _kind(acc: Access) -> str:
    kind = acc.insn.access_kind
    return "atomic" if kind in ("atomic", "reduce") else "write" if kind == "store" \
        else "read"


def _report(rule: Rule, rc: RuleContext, finder: RaceFinder, r: Race,
            condition: str | None = None) -> Diagnostic:
    a, b = finder.accs[r.i], finder.accs[r.j]
    region = a.address.region
    obj = object_name(region.obj if region is not None and region.obj else "?")
    hit = r.hit
    ka, kb = _kind(a), _kind(b)
    t1, t2 = finder.space.name(hit.t1), finder.space.name(hit.t2)
    prefix = "" if r.sure else "possible "
    when = f" {condition}" if condition else ""
    if r.i == r.j:
        message = f"{prefix}shared-memory race{when}: two threads {PLURAL[ka]} the same " \
                  f"bytes of `{obj}` with no barrier between"
    else:
        message = f"{prefix}shared-memory race on `{obj}`{when}: {_a(ka)} here and " \
                  f"{_a(kb)} at line {_line(b.insn)} with no barrier between"
    label = f"{t1} {VERB[ka]} {_bytes(hit, a, b, obj)}" + \
        (f" while {t2} {VERB[kb]} them" if r.i == r.j else "")
    related = [Related(rc.span_of(b.insn), f"{t2} {VERB[kb]} them here")] \
        if r.i != r.j and b.insn.span is not None else []
    return rule.diagnostic(
        rc, a.insn, message, severity=Severity.ERROR if r.sure else Severity.WARNING,
        certainty=Certainty.DEFINITE if r.sure else Certainty.POSSIBLE, label=label,
        notes=_notes(finder, r, a, b), related=related, help=_help(r),
        details={"object": obj, "kinds": f"{ka}-{kb}", "other_line": _line(b.insn),
                 "threads": [hit.t1, hit.t2], "byte": hit.byte if hit.exact else None,
                 "same_warp": _same_warp(r)})


def _harmful(finder: RaceFinder, r: Race) -> tuple[Race, str | None]:
    """The race to report for the statement of `r`: one whose writers may store
    different values if any (with None), else `r` with the value every writer stores."""
    from ..threads.stored_values import same_stored_value  # noqa: PLC0415

    group = finder.group_of(r)
    harmful = [x for x in group if same_stored_value(finder, x) is None]
    if harmful:
        return (r if r in harmful else
                max(harmful, key=lambda x: (x.sure, x.hit.threads))), None
    return r, same_stored_value(finder, r)


def _benign(d: Diagnostic, value: str) -> Diagnostic:
    """A write-write race whose writers all store one value: a note."""
    return replace(d, severity=Severity.NOTE, message=f"{d.message} (benign: all writers "
                   f"store {value})", details={**d.details, "benign": value},
                   help="benign in practice, but still a data race in the PTX memory "
                        "model: let one thread store it, or use `atom.exch`/`st.relaxed`")


def _beyond_design(finder: RaceFinder, r: Race, evident: Design | None
                   ) -> tuple[Race, int | None]:
    """With the shape unknown (no launch the user gave has it): of the races found for
    the statement of `r`, the one needing the fewest threads, and that block size when
    it is more than the kernel is evidently written for (else None: a race within the
    design stays as found)."""
    if evident is None:
        return r, None
    n, best = min(((finder.smallest_block(x), x) for x in finder.group_of(r)),
                  key=lambda t: t[0])
    return best, (n if n > evident.threads else None)


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _bytes(hit, a: Access, b: Access, obj: str) -> str:
    if not hit.exact:
        return f"the same bytes of `{obj}`"
    n = min(a.width, b.width)
    return (f"byte {hit.byte}" if n == 1 else f"bytes {hit.byte}-{hit.byte + n - 1}") + \
        f" of `{obj}`"


def _notes(finder: RaceFinder, r: Race, a: Access, b: Access) -> list[str]:
    t1, t2 = finder.space.name(r.hit.t1), finder.space.name(r.hit.t2)
    notes = [f"address here = {address_text(a.address)}"]
    if r.i != r.j:
        notes.append(f"address at line {_line(b.insn)} = {address_text(b.address)}")
    if _same_warp(r):
        notes.append(f"{t1} and {t2} are in one warp: since Volta its lanes run "
                     "independently, so only `bar.warp.sync` (`__syncwarp()`) orders them")
    if not finder.space.exact:
        notes.append(f"block shape unknown: threads taken as one row of {finder.space.n} "
                     "(`tid.y = tid.z = 0`); give the launch's block shape")
    return notes


def _same_warp(r: Race) -> bool:
    return r.same_warp and r.hit.t1 // 32 == r.hit.t2 // 32


def _note(rule: Rule, rc: RuleContext, finder: RaceFinder) -> Diagnostic:
    shown = sorted(finder.unchecked, key=lambda k: _line(finder.accs[k].insn) or 0)
    notes = [f"line {_line(finder.accs[k].insn)}: address = "
             f"{address_text(finder.accs[k].address)}" for k in shown[:5]]
    if len(shown) > 5:
        notes.append(f"and {len(shown) - 5} more")
    d = rule.diagnostic(
        rc, finder.accs[min(finder.unchecked)].insn,
        f"races not checked for {len(finder.unchecked)} shared-memory accesses {finder.why}",
        certainty=Certainty.POSSIBLE, notes=notes,
        help="give the launch configuration (block shape, scalar parameters) so the "
             "analysis can follow the index arithmetic",
        details={"unchecked": len(finder.unchecked)})
    return replace(d, severity=Severity.NOTE)


def _help(r: Race) -> str:
    if _same_warp(r):
        return ("put `bar.warp.sync` (`__syncwarp()`) between the two accesses, or "
                "`bar.sync 0` (`__syncthreads()`) when the threads may be in different warps")
    return "put `bar.sync 0` (`__syncthreads()`) between the two accesses"


def _line(insn: Instruction) -> int | None:
    return insn.span.line if insn.span is not None else None


__all__ = ["SharedMemoryRace"]
