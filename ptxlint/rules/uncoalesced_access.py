"""`uncoalesced-access`: a global access whose warp request touches far more 32-byte
sectors than its bytes need.

The warp patterns come from `sites.py` (lanes placed by the lane form or lane by lane,
only those that run the access). The text helpers below the rule (`address_text`,
`lane_text`, notes) are shared with `bank_conflict`.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from ..diagnostics import Certainty, Diagnostic, Related, Severity
from ..domains.strided import StridedInterval as SI
from ..interp.facts import Access
from ..arch import WARP_SIZE
from ..threads.warp import WarpPattern, sector_range
from ..ir.instructions.memory import StBulk
from ..launch import param_value
from .base import Rule, RuleContext
from .requests import RequestGroup, request_groups
from .sites import (WarpCase, coefficient_samples, exact_block, in_space, lane_stride,
                    runtime_sources, warp_cases)
from .wording import (address_text, assumption_notes, lane_notes, lane_text, object_name,
                      offsets_text, unchecked_note)

KINDS = ("load", "store", "atomic", "reduce")
_VERB = {"load": "reads", "store": "writes", "atomic": "updates", "reduce": "updates"}
HELP = ("make consecutive lanes access consecutive addresses: swap the roles of the indices, "
        "transpose through shared memory, or keep each field in its own array "
        "(structure of arrays)")


class UncoalescedAccess(Rule, id="uncoalesced-access", severity=Severity.WARNING,
        checks_callees=True):
    """A warp's global memory request touches many more 32-byte sectors than it needs.

    ## What it does
    For every global load, store, atomic and reduction (`ld`, `st`, `atom` and `red` in
    the `.global` space, and generic ones whose address the analysis traces to a global
    buffer: a kernel pointer parameter used without `cvta.to.global`), places the 32 lanes
    of a warp (from the launch's block shape, or `.reqntid`), computes every lane's byte
    offset from lane 0 and counts the distinct 32-byte sectors they touch. Only the lanes
    that run the access count: its guard and the divergent branches deciding it are
    evaluated thread by thread. With the block shape known, an address the lane form cannot
    express (`threadIdx.x / 16`, `tid & 31`, a `selp` between two addresses) is computed
    lane by lane. The ideal is `ceil(lanes * width / 32)` for the lanes the warp has: 4
    sectors for 32 lanes of `f32`, 8 for `f64` or `.v2.f32`, 16 for `.v4.f32`. A finding
    reports when

        sectors_per_request >= uncoalesced_ratio * ideal_sectors_per_request

    Details (JSON, SARIF, sample expectations):

    | key | meaning |
    |---|---|
    | `sectors_per_request` | sectors one warp request touches (the worst warp, the worst alignment the analysis allows) |
    | `ideal_sectors_per_request` | `ceil(lanes * width / 32)` |
    | `stride_bytes` | the byte step between consecutive lanes when the lanes form one arithmetic run, else `None` |
    | `parameter` | only for a stride that depends on a kernel parameter: its name |
    | `instructions` | only for a group of accesses judged or reported together (below): how many |

    Accesses served together: loads (or stores) of one basic block through the same
    address register at different constant offsets, with the same width and guard, are read
    by the same lanes and judged as a group:

    - two or four pieces tiling 8 or 16 bytes per lane, what one `.v2`/`.v4` access could
      read (a 16-byte `{double re, im}` that nvcc reads as `[%rd4]` and `[%rd4+8]` because
      it cannot prove 16-byte alignment), are judged as that one access: the pair reads
      every byte of the warp's 512 bytes, so it is not reported although each half alone
      touches twice the sectors its bytes need (`halves.ok`); a pair that still skips bytes
      is reported once, on the first half (`halves.bad`: 32 sectors for 16);
    - a longer run per lane read in several instructions (CUB's direct blocked load of N
      items per thread, unrolled) is one pattern, reported once on its first slow
      instruction with the others as related locations and `instructions` = N
      (`blocked.bad`: 8 ints per thread, 32 sectors per request for 4; `blocked.ok`: the
      warp-striped load);
    - anything else (the fields of a 12-byte record, which no single access reads) is
      judged access by access.

    Runtime strides: when the lane stride depends on a scalar kernel parameter the launch
    does not give, the finding says for which values the access is slow ("lanes step by
    4*`width` bytes: 32 sectors per request when `width` >= 8; ..."), with notes on the
    threshold and on giving the value. Give it (`--param width=1`, or `param.width=1` in a
    `// ptxlint: launch` line) and the count becomes exact. If the stride cannot be tied to
    one parameter the message gives it in bytes ("for a stride of 32 bytes or more") and a
    note says what it depends on.

    Uniform addresses (every lane at the same address) touch one sector and are never
    reported. Unknown patterns (an address that is neither affine in the thread index nor,
    with the block shape known, computable lane by lane: a gather through loaded indices,
    arithmetic the analysis loses; without the block shape every non-affine address,
    `%tid.x / 32` included) are never skipped silently: one note per kernel lists them
    ("coalescing not checked for 6 global accesses whose lane addresses are unknown") with
    their lines.

    ## Why is this bad?
    Global memory is served in 32-byte sectors of 128-byte cache lines. A warp request is
    split into as many sector transfers as distinct sectors its lanes touch. When lane i
    reads word i the 32 lanes share 4 sectors and every fetched byte is used; when lane i
    reads element `32*i` each lane pulls its own sector and 7/8 of the traffic is wasted,
    cutting effective bandwidth by up to 8x for 4-byte accesses (`docs/arch.md` gives the
    sources). Caches hide part of this when the neighbouring elements are read soon after,
    but the request still costs the extra sector transfers from L2.

    ## Certainty
    A warning. *Definite* when the block shape is known, the lanes that run the access are
    known exactly and even the best alignment of lane 0 reaches the threshold in every
    execution. *Possible* when the block shape was assumed (a note says: "assuming ntid.x
    is a multiple of 32, so each warp is 32 consecutive %tid.x of one row"), when the count
    depends on an unknown alignment ("up to 9 sectors"), on a runtime value, or on a
    condition the analysis cannot evaluate lane by lane (`if (i < n)` with `n` unknown: the
    count is for every lane that may run it, a note says so). A kernel pointer parameter is
    assumed 256-byte aligned (what `cudaMalloc` returns); a note appears when the count
    depends on it.

    ## Example
    ```ptx
    mul.wide.u32    %rd3, %r1, 128;      // %r1 = %tid.x: one 32-float row per lane
    add.s64         %rd4, %rd2, %rd3;
    ld.global.f32   %f1, [%rd4];         // lanes step by 128 bytes: 32 sectors, ideal 4
    ```

    ## Use instead
    ```ptx
    mul.wide.u32    %rd3, %r1, 4;        // lane i reads word i: 4 sectors
    add.s64         %rd4, %rd2, %rd3;
    ld.global.f32   %f1, [%rd4];
    ```

    Make consecutive lanes access consecutive addresses:

    - swap the roles of the indices, so `threadIdx.x` moves along the contiguous dimension;
    - go through shared memory: load a tile row-wise, `__syncthreads()`, read it
      column-wise from shared memory (`transpose.ok`; pad the tile to avoid bank
      conflicts, `bank-conflict`);
    - store each field of a structure in its own array (`aos.ok`).

    ## Options
    `uncoalesced-ratio` under `[tool.ptxlint]` (`uncoalesced_ratio` for the pre-launch
    hook; default 2): the threshold above. Raise it (e.g. 4) to report only worse patterns.

    ## Limitations
    - Without a block shape the analysis assumes whole warps along `%tid.x`; without the
      grid or parameter values, 32-bit index arithmetic (`mad.lo.s32` of `%ctaid.x` and
      `%ntid.x`, or of `%tid.x` and an `int` parameter) may wrap, and the analysis then
      drops the lane form: those accesses land in the "not checked" note. Give the launch
      (`block=`, `grid=`, `param.NAME=`) to check them.
    - Inactive lanes lower the real count only where the analysis can evaluate the
      condition lane by lane (a bound it knows, a warp or lane index); an unknown bound
      (`if (i < n)`, `n` not given) leaves every lane counted, as a possible finding.
    - Groups are formed by one address register at constant offsets; the same element read
      through two registers (recomputed addresses) is judged access by access.
    - Lane by lane, an index read from an initialised `.const` table is taken from the
      initialiser: the host is assumed not to rewrite the table before the launch.
    - `cp.async`, bulk copies and TMA are not checked.

    ## Samples
    Under `ptx_samples/uncoalesced-access/`, each with a clean twin:

    - `transpose.bad`: the naive transpose, `out[x * height + (y + j)] = in[(y + j) * width
      + x]`: reads a row of `in` coalesced but writes a column of `out`.
    - `strided.bad`: 2, 8 and 32-element strides, `atom.global`.
    - `vector.bad`: `.v4`, `.v2`, `f64` at twice their width.
    - `aos.bad`: two fields of a 32-byte structure.
    - `generic.bad`: generic `ld`, `red.global`.
    - `param_stride.bad` / `param_given.bad`: a runtime stride, unknown and given.
    - `halves.bad`, `blocked.bad`: accesses served together (above).
    - `loop_sgemm.bad`: a naive SGEMM with the row taken from `threadIdx.x`: lanes read
      `A[row*K + i]` 256 bytes apart on every trip (unrolled by 4: one finding for the 4).
    - `loop_layernorm.bad`: a layer norm with one thread per row: per-thread pointers a row
      (256 bytes) apart on every trip.
    - `../bank-conflict/sgemm_blocked.bad`: a register-blocked SGEMM writing two `float4`
      per row at a 32-byte lane stride: a blocked store, reported once per row.

    ## Suppress
    `--disable uncoalesced-access`, or `disable = ["uncoalesced-access"]` under
    `[tool.ptxlint]`; one line: `// ptxlint: disable=uncoalesced-access`. Raise the
    threshold with the `uncoalesced-ratio` option.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        ratio = float(rc.options.get("uncoalesced_ratio", 2.0))
        unchecked, placed = [], []
        for acc in rc.facts.accesses:
            rc.deadline.check()
            if acc.insn.access_kind in KINDS and acc.width > 0 and in_space(acc, "global") \
                    and not isinstance(acc.insn, StBulk):
                cases = warp_cases(rc, acc)
                if cases:
                    placed.append((acc, cases))
                elif not acc.address.is_uniform:  # uniform: one sector, nothing to say
                    unchecked.append(acc)
        found = {id(acc.insn): cases for acc, cases in placed}
        for group in request_groups(rc, [acc for acc, _ in placed]):
            rc.deadline.check()
            yield from self._group(rc, group, found, ratio)
        yield from unchecked_note(self, rc, unchecked, "coalescing", "global")

    def _group(self, rc: RuleContext, group: RequestGroup, found: dict,
               ratio: float) -> Iterator[Diagnostic]:
        """An element is judged as one access of its span; a blocked access is reported
        once, on its first instruction that is slow; the rest one by one."""
        if group.element:
            low = group.lowest
            cases = warp_cases(rc, low, width=group.span)
            d = self._check(rc, low, cases, ratio, width=group.span) if cases else None
            if d is not None:
                yield _as_group(rc, d, group, low,
                                f"one {group.span}-byte element per lane, read in "
                                f"{len(group.members)} instructions and judged as one access")
            return
        slow = [d for acc in group.members
                if (d := self._check(rc, acc, found[id(acc.insn)], ratio)) is not None]
        if group.blocked and slow:
            first = next(a for a in group.members if rc.span_of(a.insn) == slow[0].span)
            yield _as_group(rc, slow[0], group, first,
                            f"a blocked access: each lane reads {group.span} consecutive "
                            f"bytes in {len(group.members)} instructions, each as slow")
            return
        yield from slow

    def _check(self, rc: RuleContext, acc: Access, cases: list[WarpCase],
               ratio: float, width: int | None = None) -> Diagnostic | None:
        width = acc.width if width is None else width
        costs = [k for k in (_cost(c, width, rc.arch.sector_bytes) for c in cases)
                 if k is not None]
        if not costs:
            return None  # no lane runs the access
        worst = max(costs, key=lambda k: k.smax / k.ideal)
        if worst.smax < ratio * worst.ideal:
            return None
        notes = [f"address = {address_text(acc.address)}"]
        notes += assumption_notes(rc, acc, cases[0])
        notes += _alignment_note(rc, acc, worst.smax)
        if cases[0].unknown:
            return self._parametric(rc, acc, cases, costs, ratio, notes)
        varies = len({(k.smax, k.ideal) for k in costs}) > 1
        exact = all(c.exact for c in cases)
        sure = exact_block(rc) is not None and exact and \
            all(k.smin >= ratio * k.ideal for k in costs)
        stride = worst.stride
        lead = f"lanes step by {stride} bytes" if stride is not None \
            else f"the warp's {worst.lanes} lanes are scattered"
        count = (f"{worst.smax}" if worst.smin == worst.smax and not varies else
                 f"{worst.smin} to {worst.smax}" if sure else f"up to {worst.smax}")
        if worst.smin < worst.smax and not sure:
            notes.append(f"{worst.smin} sectors when lane 0's address is aligned to a "
                         f"sector; its alignment is not known")
        notes += lane_notes(rc, acc, cases, worst.pattern, varies, exact)
        running = worst.pattern.lanes()
        label = (f"lane i {_VERB[acc.insn.access_kind]} lane 0's address + {stride}*i"
                 if stride is not None and running[0] == 0 else
                 f"lanes {lane_text(running)} step by {stride} bytes" if stride is not None
                 else f"{worst.lanes} lanes touch {worst.smax} different sectors")
        return self.diagnostic(
            rc, acc.insn, f"{lead}: {count} sectors per request, ideal {worst.ideal}",
            certainty=Certainty.DEFINITE if sure else Certainty.POSSIBLE, label=label,
            notes=notes, help=HELP,
            details={"sectors_per_request": worst.smax,
                     "ideal_sectors_per_request": worst.ideal, "stride_bytes": stride})

    def _parametric(self, rc: RuleContext, acc: Access, cases: list[WarpCase],
                    costs: list[_Cost], ratio: float, notes: list[str]) -> Diagnostic:
        """The lane stride depends on a runtime value: say for which values it is slow."""
        ideal = max(k.ideal for k in costs)
        worst = max(k.smax for k in costs)
        names = runtime_sources(rc, acc)
        unknown = cases[0].unknown
        index = next(iter(unknown)) if len(unknown) == 1 else None
        block = exact_block(rc)
        if index == "laneid" or (index == "tid.x" and (block is None or block[0] >= WARP_SIZE)):
            by_c = sorted(((c.values[index], k.smax) for c, k in zip(cases, costs)),
                          key=lambda t: (abs(t[0]), t[0]))
            lead, text, extra = _conditions(by_c, unknown[index], names, rc, ratio, ideal)
            notes += extra
        else:
            lead = "the lanes' addresses depend on " + _names_text(names)
            text = f"up to {worst} sectors per request"
        named = [n for n in names if not n.startswith("%")]
        if named:
            notes.append(f"give `{named[0]}` in the launch (param.{named[0]}=V) for an "
                         "exact count")
        sure = block is not None and all(k.smin >= ratio * k.ideal for k in costs)
        return self.diagnostic(
            rc, acc.insn, f"{lead}: {text}; ideal {ideal}",
            certainty=Certainty.DEFINITE if sure else Certainty.POSSIBLE,
            label="the stride between lanes is only known at run time", notes=notes,
            help=HELP, details={"sectors_per_request": worst, "ideal_sectors_per_request":
                                ideal, "stride_bytes": None,
                                "parameter": named[0] if named else None})


# ---- cost of one case -----------------------------------------------------------------------
@dataclass(frozen=True)
class _Cost:
    smin: int  # sectors, best alignment
    smax: int  # sectors, worst alignment
    ideal: int  # for the lanes the warp has, running the access or not
    lanes: int  # that run it
    stride: int | None
    pattern: WarpPattern


def _cost(case: WarpCase, width: int, sector: int) -> _Cost | None:
    """The worst warp of a case (None: no lane runs the access), in the target's
    `sector`-byte sectors."""
    out = None
    for p in case.patterns:
        lo, hi = _sectors(p, width, sector)
        ideal = max(1, -(-p.size * width // sector))
        k = _Cost(lo, hi, ideal, len(p.lanes()), lane_stride(p), p)
        if out is None or k.smax * out.ideal > out.smax * k.ideal:
            out = k
    return out


_SECTORS: dict[tuple, tuple[int, int]] = {}


def _sectors(p: WarpPattern, width: int, sector: int) -> tuple[int, int]:
    """`sector_range`, remembered: a block's warps and rows share few patterns."""
    key = (p.offsets, p.alignment, width, sector)
    hit = _SECTORS.get(key)
    if hit is None:
        if len(_SECTORS) > 1 << 14:
            _SECTORS.clear()
        hit = _SECTORS[key] = sector_range(p, sector, access_bytes=width)
    return hit


def _as_group(rc: RuleContext, d: Diagnostic, group: RequestGroup, at: Access,
              what: str) -> Diagnostic:
    """`d` as the one finding of a group: at its first instruction, the others related."""
    others = [a for a in group.members if a is not at]
    lines = ", ".join(str(a.insn.span.line) for a in others if a.insn.span is not None)
    notes = list(d.notes) + [f"{what} (with line{'s' if len(others) > 1 else ''} {lines})"]
    related = [Related(span, "read with the others") for a in others
               if (span := rc.span_of(a.insn)) is not None]
    return replace(d, span=rc.span_of(at.insn), notes=tuple(notes), related=tuple(related),
                   details={**d.details, "instructions": len(group.members)})


def _alignment_note(rc: RuleContext, acc: Access, smax: int) -> list[str]:
    """The cudaMalloc alignment assumed for a pointer parameter, when it matters: the
    count differs if the buffer is only aligned to the access size (what PTX requires)."""
    region = acc.address.region
    p = rc.kernel.param(region.obj) if region is not None and region.obj else None
    if p is None or p.ptr_align:
        return []
    natural = 1 << max(0, (acc.width & -acc.width).bit_length() - 1)
    cases = warp_cases(rc, acc, align=natural)
    if cases and max(_cost(c, acc.width, rc.arch.sector_bytes).smax for c in cases) != smax:
        return ["pointer alignment unknown: assuming the 256-byte alignment of cudaMalloc"]
    return []


def _threshold(by_c: Sequence[tuple[int, int]], ok) -> int | None:
    """The smallest |c| from which every sampled coefficient satisfies `ok`."""
    found = None
    for c, s in reversed(by_c):  # from the largest |c| down
        if not ok(s):
            break
        found = abs(c)
    return found


def _conditions(by_c: Sequence[tuple[int, int]], coeff: SI, names: list[str],
                rc: RuleContext, ratio: float, ideal: int) -> tuple[str, str, list[str]]:
    """Lead, counts and notes for a lane stride `c` known only as a set: the worst count
    and the smallest |c| from which it holds, the best non-zero stride, and from where
    the warning applies. `by_c` is (c, sectors) sorted by |c|."""
    worst = max(s for _, s in by_c)
    k = _scale(coeff, names, rc)
    name = names[0] if k else None
    negative = bool(by_c) and min(c for c, _ in by_c) < 0
    var = f"|`{name}`|" if negative else f"`{name}`"

    def at_least(c: int) -> str:
        return f"when {var} >= {c // k}" if k else f"for a stride of {c} bytes or more"

    def exactly(c: int) -> str:
        return f"when `{name}` == {c // k}" if k else f"for a stride of {c} bytes"

    lead = (f"lanes step by {k}*`{name}` bytes" if k
            else f"lanes step by a runtime stride ({coeff} bytes)")
    sat = _threshold(by_c, lambda s: s >= worst)
    best_c, best = min(((c, s) for c, s in by_c if c != 0), default=by_c[0],
                       key=lambda t: (t[1], abs(t[0])))
    text = f"{worst} sectors per request" + (f" {at_least(sat)}" if sat else "")
    text += f"; {best} {exactly(best_c)}"
    notes = []
    warn = _threshold(by_c, lambda s: s >= ratio * ideal)
    if warn is not None and warn != sat:
        notes.append(f"{ratio:g} times the ideal or more {at_least(warn)}")
    if not name:
        notes.append("the stride depends on " + _names_text(names))
    return lead, text, notes


def _scale(coeff: SI, names: list[str], rc: RuleContext) -> int | None:
    """k when the coefficient set is k times the named parameter's value set."""
    if len(names) != 1 or names[0].startswith("%") or names[0] == "a runtime value":
        return None
    p = rc.kernel.param(names[0])
    if p is None:
        return None
    values = param_value(p, rc.facts.ctx.launch, rc.module).si
    if values.hi is None or coeff.hi is None or not values.hi or coeff.hi % values.hi:
        return None
    k = coeff.hi // values.hi
    return k if k > 0 and values.lo is not None and coeff.lo == k * values.lo else None


def _names_text(names: list[str]) -> str:
    if not names or names == ["a runtime value"]:
        return "a runtime value"
    return " and ".join(f"`{n}`" for n in names)


__all__ = ["UncoalescedAccess", "WarpCase", "warp_cases", "in_space", "exact_block",
           "coefficient_samples", "lane_stride", "runtime_sources", "object_name",
           "address_text", "lane_text", "assumption_notes", "unchecked_note", "lane_notes",
           "offsets_text", "WARP_SIZE"]
