"""`bank-conflict`: lanes of one warp hit the same shared-memory bank at different
addresses, so the access is replayed once per extra word."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.align import Congruence
from ..interp.facts import Access
from ..arch import WARP_SIZE, Arch
from ..threads.warp import GRANULE_BITS, BankConflict as Conflict, WarpPattern, \
    bank_conflict, restrict
from ..ir.instructions.memory import StBulk
from ..ir.instructions.tensor import Ldmatrix, Stmatrix
from .base import Rule, RuleContext
from .sites import WarpCase, exact_block, in_space, runtime_sources, warp_cases
from .wording import (address_text, assumption_notes, lane_notes, lane_text, object_name,
                      unchecked_note)

KINDS = ("load", "store", "atomic", "reduce")


class BankConflict(Rule, id="bank-conflict", severity=Severity.WARNING,
        checks_callees=True):
    """Lanes of one warp hit the same shared-memory bank at different addresses.

    ## What it does
    For every shared-memory load, store and atomic (`ld`/`st`/`atom`/`red` in `.shared`,
    generic ones whose address is traced to a shared variable, vector `.v2`/`.v4` forms,
    `ldmatrix` and `stmatrix`), finds the worst n-way bank conflict: the largest number of
    distinct 4-byte words one bank must deliver in one pass. Shared memory has 32 banks;
    word `w` lives in bank `w % 32`. The rule places the lanes of each warp (block shape
    from the launch or `.reqntid`), computes every lane's byte offset and, for each phase of
    the access, counts the distinct words of each bank:

    - only the lanes that run the access count: its guard and the divergent branches that
      decide it are evaluated thread by thread (`if (idx < 16) s[idx * 6]` in a 64-thread
      block: 16 lanes 6 words apart, in 16 banks, no conflict; a loop counter such as a
      reduction's `s` is tried at every value the analysis allows, with the lanes each
      value lets through);
    - with the block shape known, an address the lane form cannot express (`tid / 16`,
      `tid & 31`, an XOR swizzle, a `min`/`max` clamp, a `selp` between two addresses, an
      index read from an initialised `__constant__` table) is computed lane by lane from its
      definitions (`tile[threadIdx.x / 16 * 8 + i]` in a register-blocked SGEMM: two rows of
      16 lanes, 64 words apart, 2-way);
    - lanes reading the same word share it (a broadcast: `s[0]` read by every lane is fine);
    - 8-byte accesses are served a half-warp (16 lanes) at a time and 16-byte accesses a
      quarter-warp (8 lanes) at a time, so only lanes of the same phase can conflict;
    - `ldmatrix`/`stmatrix` take one 16-byte row address from each of lanes 0-7 (`.x1`),
      0-15 (`.x2`) or 0-31 (`.x4`); each group of 8 rows is one phase.

    Conflicts of 2 ways or more are reported. Details: `ways` (n) and `bank` (the bank of
    the worst conflict). ptxas chooses where a shared variable lives, so bank numbers are
    counted from the start of the variable when every warp's lane 0 sits at the same offset
    modulo 128 bytes, and from lane 0's bank otherwise; a note says which.

    Addresses that are neither affine in the thread index nor, with the block shape known,
    computable lane by lane (data-dependent indices, values the analysis loses; without the
    block shape every non-affine address) are listed in one note per kernel ("bank
    conflicts not checked for 3 shared-memory accesses ..."), never skipped silently and
    never warned about.

    ## Why is this bad?
    Shared memory is split into 32 banks of 4 bytes, each serving one word per cycle.
    When n lanes of a phase need n different words of one bank, the hardware splits the
    request into n conflict-free passes: a 32-way conflict makes a warp's shared-memory
    access 32 times slower. The classic case is a column walk through a
    `float tile[32][32]`: the row stride of 128 bytes is exactly one pass over the 32
    banks, so every element of a column is in the same bank.

    ## Certainty
    A warning. *Definite* when the block shape is known, the lanes that run the access are
    known exactly (each condition that splits a warp was evaluated thread by thread), every
    execution has the conflict and it does not depend on where lane 0 falls within its
    word. *Possible* ("possible 2-way ...") when the block shape was assumed (a note says
    how), the alignment is unknown, or a condition could not be evaluated lane by lane
    (`if (tid < n)` with `n` unknown: counted over every lane that may run the access, a
    note says so); "up to 8-way" when the lanes depend on a runtime value or a loop counter
    (a note names it): the worst case is shown. Without a block shape the conflict is
    counted for every selection of lanes the conditions allow any warp (assuming whole
    warps along `%tid.x`), so the count is an upper bound.

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

    - Pad each row by one word: `float tile[32][33]` puts element `(r, c)` in bank
      `(r + c) % 32`, so a column is spread over all banks (`column.ok`, `ways.ok` with odd
      strides). For 16-byte rows read by `ldmatrix`, pad by 16 bytes (`matrix.ok`: 144-byte
      rows).
    - Or XOR-swizzle the column index (`tile[r][c ^ r]`, `column_swizzled.ok`: checked lane
      by lane).
    - For vector accesses, let the lanes of each phase cover consecutive elements, e.g. store
      a pair as one `float2` (`box_muller.ok`, `vector.ok`).

    ## Limitations
    - Without the block shape, XOR swizzles and other bit arithmetic on `%tid` leave the
      affine domain: such accesses are listed as not checked rather than proven
      conflict-free. Give `block=` in the launch to check them lane by lane.
    - Lane by lane, uniform values with more than 1024 possible values (a kernel parameter
      not given in the launch) stay symbols: exact where they cancel between lanes, but a
      condition on one cannot select lanes, and a product of one with the thread index has
      no lane-by-lane value (the lane form with sampled coefficients is used instead).
    - A divergent loop exit around the access (lanes leaving at different trips) makes the
      selection an upper bound: the finding is then possible, not definite.
    - An initialised `.const` table is assumed to hold its initial values (the host does not
      rewrite it with `cudaMemcpyToSymbol` before the launch).
    - `cp.async` writes into shared memory, `wgmma`/`tcgen05` descriptors and TMA are not
      checked.

    ## Samples
    Under `ptx_samples/bank-conflict/`, each with its CUDA source and a clean twin:

    - `column.bad`: a transpose through an unpadded `float tile[32][32]`, read by column
      (32-way); `column.ok` pads the rows, `column_swizzled.ok` XOR-swizzles the column.
    - `ways.bad`: word strides 2, 4, 8, 16, 32 and a 32-way `atom.shared`.
    - `sgemm_blocked.bad`: a register-blocked SGEMM, `threadIdx.x / (BN/TN)` row mapping:
      2-way scalar reads of a row-major A tile, 2-way `float4` reads of B at a 32-byte lane
      stride; `sgemm_blocked.ok` transposes and pads A and reads B as two `float4` half a
      tile apart.
    - `reduce_interleaved.bad`: a tree reduction with `index = 2*s*tid`: up to 8-way at 256
      threads, the guard `index < blockDim.x` leaving fewer lanes as `s` grows; its
      `tid % (2*s)` twin in the same file has no conflict, each survivor reads its own word;
      `reduce_interleaved.ok`: sequential addressing.
    - `guarded.bad`: 16 lanes 8 words apart: 4-way; `guarded.ok`: 6 words apart, 16 banks.
    - `vector.bad`: `float4`/`float2` reads skipping every other element: 2-way within a
      quarter- or half-warp.
    - `box_muller.bad`: pairs interleaved at `z[2t]`, `z[2t+1]`: 2-way stores.
    - `matrix.bad`: `ldmatrix`/`stmatrix .x4` on 128-byte rows: 8-way.
    - `loop_rows.bad`: a per-thread row of `SEG` words walked in a loop: 2-, 4-, 8- and
      16-way for `SEG` = 2, 4, 8, 16.
    - `generic.bad`: a generic store into shared memory.

    ## Suppress
    `--disable bank-conflict`, or `disable = ["bank-conflict"]` under `[tool.ptxlint]`;
    one line: `// ptxlint: disable=bank-conflict` (`docs/suppression.md`).
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
            _Found(c, q, *_ways(q, acc.width, rc.arch)) for p in c.patterns
            if (q := _only_lanes(p, used)) is not None])]
        if not per_case:
            return None  # no lane runs the access
        found = [f for fs in per_case for f in fs]
        worst = max(found, key=lambda f: (f.hi, f.lo))
        if worst.hi < 2:
            return None
        bank, bank_note = _bank(worst.pattern, worst.conflict, acc, rc.arch)
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
        notes += _phase_notes(acc, used, worst.conflict, rc.arch)
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
            notes=notes, help=_help(acc.width, rc.arch), details={"ways": worst.hi, "bank": bank})


@dataclass(frozen=True)
class _Found:
    case: WarpCase
    pattern: WarpPattern
    lo: int  # ways, best alignment of lane 0 within its word
    hi: int  # ways, worst alignment
    conflict: Conflict  # the worst


_WAYS: dict[tuple, tuple[int, int, Conflict]] = {}


def _ways(p: WarpPattern, width: int, target: Arch) -> tuple[int, int, Conflict]:
    """(fewest, most) ways over the byte offsets lane 0 may have within a word, with
    the target's banks (remembered: the warps and rows of a block share few patterns)."""
    banks, bank_bytes = target.banks, target.bank_bytes
    key = (p.offsets, p.alignment, width, banks, bank_bytes)
    hit = _WAYS.get(key)
    if hit is None:
        if len(_WAYS) > 1 << 14:
            _WAYS.clear()
        worst = bank_conflict(p, width, banks, bank_bytes)
        known = max(0, min(p.alignment.bits, 2))
        best = min(bank_conflict(replace(p, alignment=Congruence(2, r)), width, banks,
                                 bank_bytes).ways
                   for r in range(bank_bytes)
                   if r % (1 << known) == p.alignment.residue % (1 << known))
        hit = _WAYS[key] = (best, worst.ways, worst)
    return hit


def _bank(p: WarpPattern, conflict: Conflict, acc: Access, target: Arch
          ) -> tuple[int | None, str | None]:
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
        residue = p.alignment.residue % target.bank_bytes if p.alignment.bits >= 2 else 0
    fixed = bank_conflict(replace(p, alignment=Congruence(GRANULE_BITS, residue)), acc.width,
                          target.banks, target.bank_bytes)
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


def _phase_notes(acc: Access, used: int | None, conflict: Conflict, target: Arch
                 ) -> list[str]:
    notes = []
    if used is not None:
        notes.append(f"`{acc.insn.opcode}` takes one 16-byte row address from each of "
                     f"lanes 0-{used - 1}")
    per = target.phase_lanes(acc.width)
    if per < target.warp_size:
        part = {16: "a half-warp", 8: "a quarter-warp"}.get(per, f"{per} lanes")
        first = conflict.phase * per
        notes.append(f"{acc.width}-byte accesses are served {part} at a time; the conflict "
                     f"is among lanes {first}-{first + per - 1}")
    return notes


def _help(width: int, target: Arch) -> str:
    if width <= target.bank_bytes:
        return ("pad each row by one 4-byte word (33 floats for a row of 32) or XOR-swizzle "
                "the column index, so that lanes fall in different banks")
    return (f"let the lanes of each phase cover consecutive {width}-byte elements, pad each "
            f"row by {width} bytes, or XOR-swizzle the column index")


__all__ = ["BankConflict", "matrix_lanes"]
