"""`bank-conflict`: lanes of one warp hit the same shared-memory bank at different
addresses, so the access is replayed once per extra word."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.align import Congruence
from ..interp.facts import Access
from ..interp.warp import GRANULE_BITS, WARP_SIZE, BankConflict as Conflict, WarpPattern, \
    bank_conflict, restrict
from ..ir.instructions.memory import StBulk
from ..ir.instructions.tensor import Ldmatrix, Stmatrix
from .base import Rule, RuleContext
from .sites import WarpCase, exact_block, in_space, runtime_sources, warp_cases
from .wording import (address_text, assumption_notes, lane_notes, lane_text, object_name,
                      unchecked_note)

KINDS = ("load", "store", "atomic", "reduce")
BANK_BYTES = 4


class BankConflict(Rule, id="bank-conflict", severity=Severity.WARNING,
        checks_callees=True):
    """Lanes of one warp hit the same shared-memory bank at different addresses.

    ## What it does
    For every shared-memory load, store and atomic (vector `.v2`/`.v4` forms and
    `ldmatrix`/`stmatrix` included), finds the worst n-way bank conflict: the largest
    number of distinct 4-byte words one bank must deliver in one pass. Lanes reading the
    same word share it (a broadcast); 8-byte accesses are served a half-warp at a time
    and 16-byte accesses a quarter-warp at a time, so only lanes of the same phase can
    conflict. Only the lanes that run the access count (its guard and the divergent
    branches deciding it, evaluated thread by thread); with the block shape known, an
    address with no lane form (`tid / 16`, `tid & 31`, an XOR swizzle) is computed lane
    by lane. Conflicts of two ways or more are reported.

    ## Why is this bad?
    Shared memory is split into 32 banks of 4 bytes, each serving one word per cycle.
    An n-way conflict serialises the access into n passes: a column walk through a
    `float tile[32][32]` makes all 32 lanes wait on one bank, 32 times slower than a
    row walk.

    ## Example
    ```ptx
    mul.lo.s32      %r3, %r1, 128;       // %r1 = %tid.x: a 32-float row per lane
    mov.u32         %r4, tile;
    add.s32         %r5, %r4, %r3;
    ld.shared.f32   %f1, [%r5];          // 32-way: every lane's word is in bank 0
    ```

    ## Use instead
    ```ptx
    mul.lo.s32      %r3, %r1, 132;       // rows padded to 33 floats: lane i in bank i
    mov.u32         %r4, tile;
    add.s32         %r5, %r4, %r3;
    ld.shared.f32   %f1, [%r5];
    ```

    ## Suppress
    `--disable bank-conflict`, or `disable = ["bank-conflict"]` under `[tool.ptxlint]`.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        unchecked = []
        for acc in rc.facts.accesses:
            rc.deadline.check()
            # st.bulk fills a whole region per thread: not a lane-wise bank access
            if acc.insn.access_kind in KINDS and acc.width > 0 and in_space(acc, "shared") \
                    and not isinstance(acc.insn, StBulk):
                cases = warp_cases(rc, acc)
                if not cases:
                    if not acc.address.is_uniform:  # uniform: one word, a broadcast
                        unchecked.append(acc)
                    continue
                found = self._check(rc, acc, cases)
                if found is not None:
                    yield found
        yield from unchecked_note(self, rc, unchecked, "bank conflicts", "shared-memory")

    def _check(self, rc: RuleContext, acc: Access, cases: list[WarpCase]) -> Diagnostic | None:
        used = matrix_lanes(acc)
        per_case = [fs for c in cases if (fs := [
            _Found(c, q, *_ways(q, acc.width)) for p in c.patterns
            if (q := _only_lanes(p, used)) is not None])]
        if not per_case:
            return None  # no lane runs the access
        found = [f for fs in per_case for f in fs]
        worst = max(found, key=lambda f: (f.hi, f.lo))
        if worst.hi < 2:
            return None
        bank, bank_note = _bank(worst.pattern, worst.conflict, acc)
        if cases[0].unknown:  # sampled coefficients: any difference is a runtime one
            varies = len({f.hi for f in found}) > 1 and len(cases) > 1
            least = worst.lo
        else:  # each case is an execution: its worst warp is its conflict
            varies = len({max(f.hi for f in fs) for fs in per_case}) > 1
            least = min(max(f.lo for f in fs) for fs in per_case)
        exact = all(c.exact for c in cases)
        sure = exact_block(rc) is not None and exact and not varies and least >= 2
        prefix = "" if sure else "up to " if varies else "possible "
        lanes = lane_text(worst.conflict.lanes)
        notes = [f"address = {address_text(acc.address)}"]
        notes += _phase_notes(acc, used, worst.conflict)
        notes += assumption_notes(rc, acc, worst.case)
        if worst.lo < worst.hi and not varies:
            notes.append(f"{worst.lo}-way when lane 0's address is word-aligned; its "
                         "alignment is not known")
        if varies and cases[0].unknown:
            names = runtime_sources(rc, acc)
            what = " and ".join(f"`{n}`" for n in names) or "a runtime value"
            notes.append(f"the stride between lanes depends on {what}")
        notes += lane_notes(rc, acc, cases, worst.pattern, varies and not cases[0].unknown,
                            exact)
        if bank_note:
            notes.append(bank_note)
        return self.diagnostic(
            rc, acc.insn, f"{prefix}{worst.hi}-way shared-memory bank conflict",
            certainty=Certainty.DEFINITE if sure else Certainty.POSSIBLE,
            label=f"lanes {lanes} all hit bank {bank}" if bank is not None
            else f"lanes {lanes} all hit one bank",
            notes=notes, help=_help(acc.width), details={"ways": worst.hi, "bank": bank})


@dataclass(frozen=True)
class _Found:
    case: WarpCase
    pattern: WarpPattern
    lo: int  # ways, best alignment of lane 0 within its word
    hi: int  # ways, worst alignment
    conflict: Conflict  # the worst


_WAYS: dict[tuple, tuple[int, int, Conflict]] = {}


def _ways(p: WarpPattern, width: int) -> tuple[int, int, Conflict]:
    """(fewest, most) ways over the byte offsets lane 0 may have within a word
    (remembered: the warps and rows of a block share few patterns)."""
    key = (p.offsets, p.alignment, width)
    hit = _WAYS.get(key)
    if hit is None:
        if len(_WAYS) > 1 << 14:
            _WAYS.clear()
        worst = bank_conflict(p, width)
        known = max(0, min(p.alignment.bits, 2))
        best = min(bank_conflict(replace(p, alignment=Congruence(2, r)), width).ways
                   for r in range(BANK_BYTES)
                   if r % (1 << known) == p.alignment.residue % (1 << known))
        hit = _WAYS[key] = (best, worst.ways, worst)
    return hit


def _bank(p: WarpPattern, conflict: Conflict, acc: Access) -> tuple[int | None, str | None]:
    """The bank number, and how it is counted when the placement of the object in shared
    memory is not known (ptxas chooses it)."""
    if conflict.bank is not None:
        return conflict.bank, None
    region = acc.address.region
    base = p.uniform_base  # lane 0's offset into the object, over the warps shown
    granule = 1 << GRANULE_BITS
    if region is not None and region.obj is not None and base.lo is not None and (
            base.is_singleton or base.stride % granule == 0):
        origin = f"banks counted from the start of `{object_name(region.obj)}` (bank 0)"
        residue = base.lo % granule
    else:
        origin = "banks counted from the bank of lane 0's word"
        residue = p.alignment.residue % BANK_BYTES if p.alignment.bits >= 2 else 0
    fixed = bank_conflict(replace(p, alignment=Congruence(GRANULE_BITS, residue)), acc.width)
    return fixed.bank, origin


def matrix_lanes(acc: Access) -> int | None:
    """Lanes whose addresses `ldmatrix`/`stmatrix` use: one 16-byte row each, 8 rows per
    8x8 matrix (16 for the m16 shapes), times .x1/.x2/.x4."""
    insn = acc.insn
    if not isinstance(insn, (Ldmatrix, Stmatrix)):
        return None
    count = next((int(m[1:]) for m in insn.mods if m in ("x1", "x2", "x4")), 1)
    rows = 16 if any(m.startswith("m16") for m in insn.mods) else 8
    return min(WARP_SIZE, rows * count)


def _only_lanes(p: WarpPattern, used: int | None) -> WarpPattern | None:
    if used is None or used >= WARP_SIZE:
        return p
    return restrict(p, [i < used for i in range(WARP_SIZE)])


def _phase_notes(acc: Access, used: int | None, conflict: Conflict) -> list[str]:
    notes = []
    if used is not None:
        notes.append(f"`{acc.insn.opcode}` takes one 16-byte row address from each of "
                     f"lanes 0-{used - 1}")
    per = WARP_SIZE // min(WARP_SIZE, max(1, -(-acc.width // BANK_BYTES)))
    if per < WARP_SIZE:
        part = {16: "a half-warp", 8: "a quarter-warp"}.get(per, f"{per} lanes")
        first = conflict.phase * per
        notes.append(f"{acc.width}-byte accesses are served {part} at a time; the conflict "
                     f"is among lanes {first}-{first + per - 1}")
    return notes


def _help(width: int) -> str:
    if width <= BANK_BYTES:
        return ("pad each row by one 4-byte word (33 floats for a row of 32) or XOR-swizzle "
                "the column index, so that lanes fall in different banks")
    return (f"let the lanes of each phase cover consecutive {width}-byte elements, pad each "
            f"row by {width} bytes, or XOR-swizzle the column index")


__all__ = ["BankConflict", "matrix_lanes"]
