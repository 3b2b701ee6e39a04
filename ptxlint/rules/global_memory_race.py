"""`global-memory-race`: two threads of one launch touch the same bytes of a kernel
buffer, one of them writing, with nothing ordering them. The pairs are found by
`interp/global_races.py` (imported on first use: it needs numpy); this module words the
findings."""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics import Certainty, Diagnostic, Related, Severity
from ..ir.instruction import Instruction
from .base import Rule, RuleContext
from .uncoalesced_access import address_text, object_name

VERB = {"store": "writes", "load": "reads"}
PLURAL = {"store": "write", "load": "read"}


class GlobalMemoryRace(Rule, id="global-memory-race", severity=Severity.ERROR):
    """Two threads of one launch access the same global bytes, one writing, unordered.

    ## What it does
    Finds pairs of `ld`/`st` on the same kernel buffer that two threads of the launch
    may execute unordered: threads of *different blocks* (no barrier orders them; only a
    grid-wide synchronisation would), or threads of one block between the same two
    barriers (as `shared-memory-race` decides for shared memory). Each address is
    evaluated for every thread of a block, the block index `%ctaid` enumerated block by
    block when the launch gives the grid; an address that does not read `%ctaid` is the
    same in every block, so with more than one block the same thread of two blocks
    collides (`out[threadIdx.x] = ...`). Grid-stride loops, `blockIdx`-based indexing
    and a reduction's `out[blockIdx.x]` written by thread 0 only are clean.

    Not races: two atomics (an atomic and a plain access are not judged), two accesses
    that both carry memory-model semantics (`.relaxed`, `.acquire`, `.release`,
    `.volatile`), two writes of a value both threads certainly agree on (a constant, or
    a value computed from the thread index alone when the colliding threads have the
    same index), and a pair with a gpu-scope fence (`__threadfence()`) on a path between
    them (the last-block reduction pattern).

    An error when the race is certain for the launch (grid and block known, the
    addresses functions of the indices alone, every thread runs both accesses);
    otherwise a warning. Without a grid a block-independent address is reported "when
    the grid has more than one block". Addresses the analysis cannot evaluate per
    thread, or relate across blocks, are not checked.

    ## Why is this bad?
    Blocks run in any order, on any multiprocessor, at the same time or one after the
    other: which write lands last, or whether a read sees the other block's write, changes
    from run to run. The PTX memory model makes such a data race undefined.

    ## Example
    ```ptx
    mov.u32         %r1, %tid.x;
    mov.u32         %r2, %ctaid.x;
    mul.wide.u32    %rd2, %r1, 4;
    add.s64         %rd3, %rd1, %rd2;   // out + 4*threadIdx.x in every block
    st.global.u32   [%rd3], %r2;        // expect: global-memory-race
    ```

    ## Use instead
    ```ptx
    mov.u32         %r1, %tid.x;
    mov.u32         %r2, %ctaid.x;
    mad.lo.s32      %r3, %r2, 64, %r1;  // blockIdx.x * 64 + threadIdx.x
    mul.wide.u32    %rd2, %r3, 4;
    add.s64         %rd3, %rd1, %rd2;
    st.global.u32   [%rd3], %r2;
    ```

    ## Suppress
    `--disable global-memory-race`, or `disable = ["global-memory-race"]` under
    `[tool.ptxlint]`.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        from ..interp.global_races import GlobalRaceFinder, participates  # noqa: PLC0415

        accs = [a for a in rc.facts.accesses if participates(a)]
        if not any(a.insn.access_kind == "store" for a in accs):
            return
        finder = GlobalRaceFinder(rc.facts, rc.module, accs)
        for race in finder.races():
            yield _report(self, rc, finder, race)


def _report(rule: Rule, rc: RuleContext, finder, race) -> Diagnostic:
    a, b = finder.accs[race.i], finder.accs[race.j]
    obj = object_name(a.address.region.obj)
    hit = race.hit
    ka, kb = a.insn.access_kind, b.insn.access_kind
    prefix = "" if race.sure else "possible "
    where = "threads of different blocks" if race.cross_block else "threads of one block"
    if race.i == race.j:
        message = f"{prefix}global-memory race on `{obj}`: {where} {PLURAL[ka]} the same " \
                  "bytes"
    else:
        message = f"{prefix}global-memory race on `{obj}`: a {_noun(ka)} here and a " \
                  f"{_noun(kb)} at line {_line(b.insn)} by {where}"
    if not race.grid_known and race.cross_block:
        message += " when the grid has more than one block"
    t1, t2 = _who(finder, hit.t1, hit.b1), _who(finder, hit.t2, hit.b2)
    n = min(a.width, b.width)
    span = f"byte {hit.byte}" if n == 1 else f"bytes {hit.byte}-{hit.byte + n - 1}"
    label = f"{t1} {VERB[ka]} {span} of `{obj}`" + \
        (f" and {t2} {VERB[kb]} them" if race.i == race.j else "")
    related = [Related(rc.span_of(b.insn), f"{t2} {VERB[kb]} them here")] \
        if race.i != race.j and b.insn.span is not None else []
    notes = [f"address here = {address_text(a.address)}"]
    if race.i != race.j:
        notes.append(f"address at line {_line(b.insn)} = {address_text(b.address)}")
    if race.cross_block and hit.b1[1:] == hit.b2[1:] and _free(finder, race):
        notes.append("the address does not depend on the block index: every block "
                     "touches the same bytes")
    if not finder.space.exact:
        notes.append(f"block shape unknown: threads taken as one row of {finder.space.n}")
    severity = Severity.ERROR if race.sure else Severity.WARNING
    if race.cross_block and not race.grid_known and not finder.block_aware:
        # a kernel that never reads `%ctaid`/`%nctaid`, launched without a grid: most
        # likely a single-block kernel, where the finding does not apply
        severity = Severity.NOTE
        notes.append("the kernel never reads `%ctaid` or `%nctaid`: with a grid of one "
                     "block there is no race")
    return rule.diagnostic(
        rc, a.insn, message, severity=severity,
        certainty=Certainty.DEFINITE if race.sure else Certainty.POSSIBLE, label=label,
        notes=notes, related=related, help=_help(race, finder),
        details={"object": obj, "kinds": f"{_kind(ka)}-{_kind(kb)}",
                 "other_line": _line(b.insn), "threads": [hit.t1, hit.t2],
                 "blocks": [list(hit.b1), list(hit.b2)], "byte": hit.byte,
                 "cross_block": race.cross_block})


def _free(finder, race) -> bool:
    return bool(finder._free(finder.finder.evaluated(race.i)))  # noqa: SLF001


def _help(race, finder) -> str:
    if not race.cross_block:
        return "put `bar.sync 0` (`__syncthreads()`) between the two accesses, or use an atomic"
    if _free(finder, race):
        return "index by the thread's global index (`blockIdx.x * blockDim.x + " \
               "threadIdx.x`), or let one block write (`if (blockIdx.x == 0)`)"
    return "give each block its own elements, or combine the blocks' values with an " \
           "atomic"


def _who(finder, t: int, block: tuple[int, int, int]) -> str:
    b = block[0] if block[1:] == (0, 0) else f"({block[0]},{block[1]},{block[2]})"
    return f"{finder.space.name(t)} of block {b}"


def _kind(k: str) -> str:
    return "write" if k == "store" else "read"


def _noun(k: str) -> str:
    return "write" if k == "store" else "read"


def _line(insn: Instruction) -> int | None:
    return insn.span.line if insn.span is not None else None


__all__ = ["GlobalMemoryRace"]
