"""`uninitialized-read`: a register, shared-memory or local-memory value read before
anything wrote it. The analyses live in `interp/definedness.py` (registers) and
`interp/uninit_memory.py` (memory); this module words the findings."""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics import Certainty, Diagnostic, Related, Severity
from ..interp.definedness import Definedness, UndefinedUse
from ..ir.instruction import Instruction
from .base import Rule, RuleContext
from .uncoalesced_access import address_text, object_name

MAX_PATH = 3  # branches named on the way to a register read


class UninitializedRead(Rule, id="uninitialized-read", severity=Severity.ERROR,
                        checks_callees=True):
    """A register, shared-memory or local-memory value is read before anything wrote it.

    ## What it does
    **Registers.** Follows every path from the function's entry and reports a register
    read on a path where it was never written: never written at all, written only under
    a predicate (`@%p mov`) and read without it, written on one branch only. A read under
    the predicate that guarded the write is fine, also when nvcc recomputes the
    predicate (`setp` of the same comparison), and so is a read on a branch taken only
    when the write happened (`if (c) x = ...; if (c) use(x)`). Copies (`mov` of a
    register, `{..}` packing) and `selp` only pass the value on: the read that counts is
    the first use of the copy, and `selp` reads only the arm it selects. Storing a value
    is not a use (CUB stores the unloaded slots of a partial tile and never reads them
    back) unless the register is written nowhere. Parameters, special registers and
    `.reg` declarations with an initialiser are defined; a call defines the registers
    it returns. One finding per register and path: after a read the register counts as
    defined.

    **Shared memory** (needs the block shape): a `ld.shared` of bytes that no thread of
    the block can have written before it (in an earlier barrier interval, an earlier
    trip of a loop, or side by side in the same interval), each write evaluated for
    every thread as the race rule does. Shared memory is never initialised by the host.
    An object some instruction writes in a way the analysis cannot evaluate (`cp.async`,
    a matrix store, a generic pointer, a call) is not judged.

    **Local memory**: a `ld.local` of bytes of the stack frame (`__local_depot`) that
    no write on a path to it covers.

    An error when every execution that runs the read reads an undefined value (the
    register is written on no path; every thread's bytes are unwritten); otherwise a
    warning.

    ## Why is this bad?
    ptxas accepts all of these silently and the value read is whatever the hardware
    register or memory held: garbage that changes from run to run and from GPU to GPU.

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

    ## Suppress
    `--disable uninitialized-read`, or `disable = ["uninitialized-read"]` under
    `[tool.ptxlint]`.
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
        from ..interp.uninit_memory import local_reads, shared_reads  # noqa: PLC0415 -- numpy

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
