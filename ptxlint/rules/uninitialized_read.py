"""`uninitialized-read`: a register, shared-memory or local-memory value read before
anything wrote it. The analyses live in `threads/definedness.py` (registers) and
`threads/uninit_memory.py` (memory); this module words the findings."""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics import Certainty, Diagnostic, Related, Severity
from ..threads.definedness import Definedness, UndefinedUse
from ..ir.instruction import Instruction
from .base import Rule, RuleContext
from .wording import address_text, object_name

MAX_PATH = 3  # branches named on the way to a register read


class UninitializedRead(Rule, id="uninitialized-read", severity=Severity.ERROR,
                        checks_callees=True):
    """A register, shared-memory or local-memory value is read before anything wrote it.

    ## What it does
    A value read before anything wrote it, in three places:

    | Where | What is reported |
    |---|---|
    | registers | a register read on a path from the function's entry where it was never written: never written at all, written only under a predicate (`@%p mov`) and read without it, written on one branch only |
    | shared memory | an `ld.shared` of bytes no thread of the block can have written before it (shared memory is never initialised by the host); needs the block shape |
    | local memory | an `ld.local` of bytes of the function's own stack frame (`__local_depot`) no write on a path to it covers |

    Registers: a forward dataflow over the CFG, per thread. For every register the state
    holds whether some path writes it, and under which *condition* it certainly holds a
    value: always, or when one of a set of predicate literals holds (`@%p mov %r1` makes
    `%r1` defined when `%p`; a later `@!%p mov %r1` makes it always defined). A read under
    the same condition is fine, whether the condition comes from the read's guard or from a
    branch on the way (`if (c) x = ...; if (c) use(x)`). Predicates are compared by the
    *comparison they compute*, not by register: nvcc recomputes a guard (`setp.ge.s32 %p42,
    %r153, %r16` to load item 0 of a partial tile, `setp.ge.u32 %p54, %r153, %r16` to use
    it), so both sides of a comparison are brought to a linear form over registers with one
    definition and the operator to `<`/`==` with a polarity. A signed and an unsigned
    comparison of the same forms count as one when an operand of each is known
    non-negative (they differ only for a negative element count, which is assumed not to
    happen).

    What is a *read*: every register an instruction uses (its guard, sources, address
    bases, vector elements, call arguments), except

    - copies (`mov` of a register, `{..}` packing and unpacking) and selects (`selp`): the
      destination takes the definedness of its source, or of the arm the predicate picks,
      so an undefined value moved into a `selp` arm that is never selected is never read,
      and the finding is at the first real use of a copy;
    - stored values: `st` copies a value to memory without looking at it (CUB stores every
      slot of a partial tile to shared memory and reads back only the valid ones); the
      value is a read only when nothing in the function ever writes the register.

    Vector registers (`.reg .v4 .f32 %v`) are tracked element by element (`%v.x`).
    Parameters, special registers and `.reg` declarations with an initialiser are defined
    at the entry; a call defines the registers it returns, and a called function starts
    with its `.reg` parameters defined. After a read the register counts as defined on that
    path, so a register missing on one path is one finding, not one per use.

    Shared memory: for each `ld` of a `.shared` object (also through a generic address the
    analysis resolves to one), the writes that can come before it for some thread are those
    a path leads from to the load (an earlier barrier interval, an earlier trip of a loop)
    and those another thread may run side by side with it (as for `shared-memory-race`).
    Each is evaluated for every thread of the block (guards narrow the threads, small
    uniform leaves are enumerated) and their union over-approximates the bytes written. A
    byte the load may read outside that union is reported, with the threads that read it.
    An object written by something the analysis cannot evaluate (`cp.async`, bulk or tensor
    copies, `mbarrier` updates, matrix stores, an address it cannot follow per thread, a
    generic pointer it cannot place, a call) is not judged, and neither is any shared load
    when the block shape is unknown. Bytes outside the object are left to `out-of-bounds`.

    Local memory: per thread, so the abstract values suffice: the bytes of the object each
    `st.local` reaching the load may cover (its offset set, up to 4096 values), against the
    bytes the load may read. A call, or a write the analysis cannot place, leaves the
    function's local memory unjudged; a local object that is not the function's own (a
    caller's array reached through a pointer argument) is never judged.

    Details: `kind` (`register`, `shared`, `local`); for registers `register` (several
    joined by commas); for memory `object` and `bytes` (`512-1023`, runs joined by commas),
    and for shared memory `threads` (how many threads read such a byte).

    ## Why is this bad?
    ptxas accepts all of these silently and the value read is whatever the hardware
    register or memory held: garbage that changes from run to run and from GPU to GPU.

    ## Certainty
    An error when every execution that runs the read reads an undefined value: the
    register is written on no path to the read; every byte of every thread's local read is
    unwritten; the shared load runs in every thread the constraints select (no condition
    the analysis cannot evaluate per thread) with no enumerated leaf. Otherwise a warning.

    ## Example
    ```ptx
    setp.lt.u32     %p1, %r1, 32;
    @%p1 mov.u32    %r2, 1;
    add.s32         %r3, %r2, %r1;      // expect: uninitialized-read
    ```

    ## Use instead
    ```ptx
    setp.lt.u32     %p1, %r1, 32;
    selp.u32        %r2, 1, 0, %p1;     // every thread gets a value
    add.s32         %r3, %r2, %r1;
    ```

    Give the register a value on every path (initialise the accumulator, use the value
    only under the condition that set it, or `selp` a default). For shared memory, write
    every byte of the tile before the barrier that precedes the read, or read only what was
    written; for local arrays, fill the array before the indexed read.

    ## Limitations
    - Path-insensitive beyond predicate literals: a register written when a loop runs at
      least once and read after it is "may" unless the facts show the loop always runs
      (CUB's tiles are fine: the comparisons are matched); a correlation through memory or
      arithmetic (`if (n > 0) x = ...; ... if (n >= 1) use(x)`) is not seen.
    - Two comparisons count as one only through linear forms of registers with a single
      definition; signed and unsigned forms are merged under the non-negative assumption
      above.
    - Shared memory: the barrier intervals assume every thread meets the barriers in the
      same order (what `barrier-divergence` checks): with divergent barriers a write on the
      other side of a mismatched barrier is not seen as preceding the read
      (`barrier-divergence/loop_trip.bad`). Atomics are writes but not judged as reads.
      Objects written remotely by other blocks of a cluster (`st.shared::cluster`) are not
      modelled.
    - The memory parts run on the kernel; in a called function only registers and its own
      local frame are checked.

    ## Samples
    Under `ptx_samples/uninitialized-read/`, each with a clean twin:

    - `never_written.bad` (hand-written): a register no instruction writes, a misspelt
      register (an error).
    - `predicated.bad` (hand-written): written only under `@%p1`, read unguarded; the twin
      reads under the predicate, through a `selp` on it, a vector register element by
      element, and a value overwritten by every thread.
    - `one_branch.bad` (hand-written): written on one branch only; the twin writes both,
      and reads a one-branch value behind a second test of the same comparison.
    - `accumulator.bad` (nvcc, no warning from it): `float acc; for (...) acc += ...`: the
      first addition reads garbage.
    - `partial_tile.bad`: 128 of 256 tile words written before the barrier, all 256 read.
    - `local_window.bad`: 7 of 8 elements of a local array written, an element picked by a
      loaded index.

    ## Suppress
    `--disable uninitialized-read`, or `disable = ["uninitialized-read"]` under
    `[tool.ptxlint]`; one line: `// ptxlint: disable=uninitialized-read`.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        facts = rc.facts
        engine = Definedness(facts.cfg, lambda b: facts.in_states[b] is not None,
                             rc.deadline, facts)
        by_insn: dict[int, list[UndefinedUse]] = {}
        for use in engine.undefined_uses():
            by_insn.setdefault(id(use.insn), []).append(use)
        for uses in by_insn.values():
            yield _register(self, rc, engine, uses)
        from ..threads.uninit_memory import local_reads, shared_reads  # noqa: PLC0415 -- numpy

        for v in local_reads(facts, rc.module):
            if v.bytes_:
                yield _memory(self, rc, v, "local")
        if rc.entry is None:
            for v in shared_reads(facts, rc.module):
                if v.bytes_:
                    yield _memory(self, rc, v, "shared")


# ---- registers ----------------------------------------------------------------------------------
def _register(rule: Rule, rc: RuleContext, engine: Definedness,
              uses: list[UndefinedUse]) -> Diagnostic:
    insn = uses[0].insn
    sure = all(u.never for u in uses)
    names = ", ".join(f"`{_name(u.key)}`" for u in uses)
    if sure:
        message = f"{names} {'is' if len(uses) == 1 else 'are'} read but never written " \
                  "before this"
    else:
        message = f"{names} may be read before {'it is' if len(uses) == 1 else 'they are'} " \
                  "written"
    first = uses[0]
    writes = engine.writes_of(first.key)
    notes: list[str] = []
    related: list[Related] = []
    if not writes:
        label = f"`{_name(first.key)}` is written nowhere in `{rc.function.name}`"
    elif first.never:
        label = f"no path to here writes `{_name(first.key)}`"
    else:
        path = engine.witness(first)[-MAX_PATH:]
        steps = [f"line {_line(b)} {'taken' if taken else 'not taken'}" for b, taken in path]
        label = f"`{_name(first.key)}` has no value on the path " + \
            (f"with the branch at {', '.join(steps)}" if steps else "from the entry")
        guarded = [w for w in writes if w.guard is not None]
        if guarded and len(guarded) == len(writes):
            w = guarded[0]
            notes.append(f"written only under `{w.guard}` (line {_line(w)}), read here "
                         + (f"under `{insn.guard}`" if insn.guard is not None else
                            "unguarded"))
        for w in writes[:2]:
            if w.span is not None:
                related.append(Related(rc.span_of(w), f"`{_name(first.key)}` written here"))
    return rule.diagnostic(
        rc, insn, message, severity=Severity.ERROR if sure else Severity.WARNING,
        certainty=Certainty.DEFINITE if sure else Certainty.POSSIBLE, label=label,
        notes=notes, related=related,
        help="give the register a value on every path before this read (or read it "
             "only under the condition that wrote it)",
        details={"kind": "register", "register": ",".join(_name(u.key) for u in uses)})


def _name(key: str) -> str:
    return key.split("@", 1)[0]


# ---- memory -------------------------------------------------------------------------------------
def _memory(rule: Rule, rc: RuleContext, v, space: str) -> Diagnostic:
    obj = object_name(v.obj or "?")
    span = byte_ranges(v.bytes_)
    if space == "shared":
        what = "shared memory"
        who = f"thread {v.thread} reads" if v.threads <= 1 else \
            f"threads {byte_ranges(v.readers or [])} read"
        label = f"{who} {_bytes(v.bytes_)} of `{obj}`, which no thread of the block has " \
                "written"
        help = "write every byte of the tile before the barrier that precedes this read, " \
               "or read only the part that was written"
    else:
        what = "local memory"
        label = f"no write on a path to here covers {_bytes(v.bytes_)} of `{obj}`"
        help = "initialise the local array before reading it"
    prefix = "" if v.sure else "may "
    message = f"{what} {prefix}read before it is written: {_bytes(v.bytes_)} of `{obj}`"
    notes = [f"address = {address_text(v.acc.address)}"]
    if v.written is not None and v.written.any():
        notes.append(f"the writes that can come first cover {_bytes(_true(v.written))} of "
                     f"`{obj}`")
    elif v.written is not None:
        notes.append(f"nothing writes `{obj}` before this")
    return rule.diagnostic(
        rc, v.acc.insn, message, severity=Severity.ERROR if v.sure else Severity.WARNING,
        certainty=Certainty.DEFINITE if v.sure else Certainty.POSSIBLE, label=label,
        notes=notes, help=help,
        details={"kind": space, "object": obj, "bytes": span,
                 **({"threads": v.threads} if space == "shared" else {})})


def _true(mask) -> list[int]:
    return [int(i) for i in mask.nonzero()[0]]


def byte_ranges(values: list[int], limit: int = 4) -> str:
    """`0-3, 8-11` for [0, 1, 2, 3, 8, 9, 10, 11] (the first `limit` runs)."""
    runs: list[list[int]] = []
    for b in sorted(values):
        if runs and b == runs[-1][1] + 1:
            runs[-1][1] = b
        else:
            runs.append([b, b])
    text = [f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in runs[:limit]]
    return ", ".join(text) + (f" and {len(runs) - limit} more ranges" if len(runs) > limit
                              else "")


def _bytes(values: list[int]) -> str:
    text = byte_ranges(values)
    return f"byte {text}" if len(values) == 1 else f"bytes {text}"


def _line(insn: Instruction) -> int | None:
    return insn.span.line if insn.span is not None else None


__all__ = ["UninitializedRead", "byte_ranges"]
