"""`shared-memory-race`: two threads of one block touch the same shared-memory bytes, at
least one of them writing, between the same two barriers. The pairs are found by
`interp/races.py` (imported on first use: it needs numpy); this module picks the
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
from .out_of_bounds import Design, design
from .uncoalesced_access import address_text, in_space, object_name

if TYPE_CHECKING:
    from ..interp.races import Race, RaceFinder

ACCESS_CLASSES = (Ld, St, Atom, Red)


class SharedMemoryRace(Rule, id="shared-memory-race", severity=Severity.ERROR):
    """Two threads of a block access the same shared-memory bytes, one of them writing,
    with no barrier between.

    ## What it does
    Finds pairs of `ld`/`st`/`atom`/`red` on the same `.shared` object that two threads
    of one block may execute between the same two barriers: a path from one to the other
    (also around a loop's back edge) crosses no `bar.sync`/`barrier.sync`, or they sit on
    the two arms of a branch that splits the block. Each address is then evaluated for
    every thread of the block, with the guards and branch conditions the analysis knows
    at the access deciding which threads get there, and the two byte sets are compared
    across different threads. Two atomics never race, nor two accesses with explicit
    memory-model semantics (`.relaxed`, `.acquire`, `.release`).

    Threads of one warp race too: since Volta a warp's lanes run independently, so
    warp-synchronous code needs `bar.warp.sync` (`__syncwarp()`) between the write and
    the read; `.volatile` does not order them. Only `bar.warp.sync` separates two threads
    of a warp, only a CTA barrier two threads of different warps.

    The finding names both instructions (the second with a secondary label), two
    threads and the bytes, one finding per written statement. It is a definite error
    when the block shape is known, the addresses are functions of the thread index
    alone, the two threads certainly execute them and nothing separates them; otherwise
    it is a possible race and a warning (a loop counter's value, a condition the analysis
    cannot evaluate per thread), so that an imprecise verdict never stops a launch at
    the pre-launch check. Without a
    block shape a kernel indexed by `%tid.x` alone is taken as one row of as many threads
    as the bounds allow; one indexed by `%tid.y`/`%tid.z` is not checked. There, a race
    that needs a bigger block than the kernel is evidently written for (its
    `%tid.x`-indexed shared arrays stay in bounds up to that size; one thread per block
    when it reads no thread index) is a note stating the block size. Addresses the
    analysis cannot follow (an index loaded from memory) or relate (they differ by an
    unknown value) are not checked either; a note counts them.

    ## Why is this bad?
    Without a barrier the order of the two accesses is up to the scheduler: a read may
    see the value before or after the write, or a mix of both, and the result changes
    from run to run and from GPU to GPU. The PTX memory model makes such a data race
    undefined.

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

    ## Suppress
    `--disable shared-memory-race`, or `disable = ["shared-memory-race"]` under
    `[tool.ptxlint]`.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        accs = [a for a in rc.facts.accesses if _participates(a)]
        if not any(a.insn.access_kind != "load" for a in accs):
            return
        from ..interp.races import RaceFinder  # noqa: PLC0415 -- numpy, only when needed

        finder = RaceFinder(rc.facts, rc.module, accs)
        evident = None
        for race in finder.races():
            n = None
            if not finder.space.exact:
                evident = evident or [design(rc)]
                race, n = _beyond_design(finder, race, evident[0])
            if n is None:
                yield _report(self, rc, finder, race)
                continue
            more = "more than 1 thread" if n == 2 else f"more than {n - 1} threads"
            d = _report(self, rc, finder, race, f"when the block has {more}")
            yield replace(d, severity=Severity.NOTE, certainty=Certainty.POSSIBLE,
                          notes=(*d.notes, evident[0].reason),
                          details={**d.details, "min_threads": n})
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
