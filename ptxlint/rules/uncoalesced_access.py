"""`uncoalesced-access`: a global access whose warp request touches far more 32-byte
sectors than its bytes need.

The helpers below the rule (`WarpCase`, `warp_cases`, `runtime_sources`, the text
formatting) are shared with `bank_conflict`: both rules look at one warp's pattern of a
memory instruction, computed by `interp/warp.py`.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import product

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.affine import Affine
from ..domains.strided import StridedInterval as SI
from ..domains.value import Value
from ..interp.facts import Access
from ..interp.warp import (ASSUMED_ROWS, SECTOR_BYTES, WARP_SIZE, WarpPattern, sector_range,
                           warp_patterns)
from ..ir.instructions.memory import StBulk
from ..ir.operands import Register, Symbol
from ..launch import param_value
from .base import Rule, RuleContext

KINDS = ("load", "store", "atomic", "reduce")
_VERB = {"load": "reads", "store": "writes", "atomic": "updates", "reduce": "updates"}
HELP = ("make consecutive lanes access consecutive addresses: swap the roles of the indices, "
        "transpose through shared memory, or keep each field in its own array "
        "(structure of arrays)")


class UncoalescedAccess(Rule, id="uncoalesced-access", severity=Severity.WARNING,
        checks_callees=True):
    """A warp's global memory request touches many more 32-byte sectors than it needs.

    ## What it does
    For every global load, store, atomic and reduction (also generic ones whose address
    is known to be global), computes how many 32-byte sectors the 32 lanes of one warp
    touch and compares it with the ideal, `ceil(32 * width / 32)`: 4 sectors for 4-byte
    lanes, 16 for `float4`. It reports when the ratio reaches 2 (option
    `uncoalesced_ratio`). A lane stride that depends on a kernel parameter is reported
    with the values for which the access is slow; a launch that gives the parameter's
    value makes the count exact.

    ## Why is this bad?
    Global memory moves whole 32-byte sectors. When consecutive lanes are far apart,
    each lane pulls in its own sector and most of each transfer is thrown away: a
    128-byte stride moves 32 sectors (1024 bytes) to deliver 128.

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

    ## Suppress
    `--disable uncoalesced-access`, or `disable = ["uncoalesced-access"]` under
    `[tool.ptxlint]`; raise the threshold with the `uncoalesced_ratio` option.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        ratio = float(rc.options.get("uncoalesced_ratio", 2.0))
        unchecked = []
        for acc in rc.facts.accesses:
            rc.deadline.check()
            if acc.insn.access_kind in KINDS and acc.width > 0 and in_space(acc, "global") \
                    and not isinstance(acc.insn, StBulk):
                cases = warp_cases(rc, acc)
                if not cases:
                    if not acc.address.is_uniform:  # uniform: one sector, nothing to say
                        unchecked.append(acc)
                    continue
                found = self._check(rc, acc, cases, ratio)
                if found is not None:
                    yield found
        yield from unchecked_note(self, rc, unchecked, "coalescing", "global")

    def _check(self, rc: RuleContext, acc: Access, cases: list[WarpCase],
               ratio: float) -> Diagnostic | None:
        costs = [_cost(c, acc.width) for c in cases]
        worst = max(costs, key=lambda k: k.smax / k.ideal)
        if worst.smax < ratio * worst.ideal:
            return None
        notes = [f"address = {address_text(acc.address)}"]
        notes += assumption_notes(rc, acc, cases[0])
        notes += _alignment_note(rc, acc, worst.smax)
        if cases[0].unknown:
            return self._parametric(rc, acc, cases, costs, ratio, notes)
        sure = exact_block(rc) is not None and worst.smin >= ratio * worst.ideal
        stride = worst.stride
        lead = f"lanes step by {stride} bytes" if stride is not None \
            else f"the warp's {worst.lanes} lanes are scattered"
        count = (f"{worst.smax}" if worst.smin == worst.smax else
                 f"{worst.smin} to {worst.smax}" if sure else f"up to {worst.smax}")
        if worst.smin < worst.smax and not sure:
            notes.append(f"{worst.smin} sectors when lane 0's address is aligned to a "
                         f"sector; its alignment is not known")
        label = (f"lane i {_VERB[acc.insn.access_kind]} lane 0's address + {stride}*i"
                 if stride is not None else
                 f"{worst.lanes} lanes touch {worst.smax} different sectors")
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
    ideal: int
    lanes: int
    stride: int | None
    pattern: WarpPattern


def _cost(case: WarpCase, width: int) -> _Cost:
    out = None
    for p in case.patterns:
        lanes = len(p.lanes())
        lo, hi = sector_range(p)
        ideal = max(1, -(-lanes * width // SECTOR_BYTES))
        k = _Cost(lo, hi, ideal, lanes, lane_stride(p), p)
        if out is None or k.smax * out.ideal > out.smax * k.ideal:
            out = k
    assert out is not None
    return out


def _alignment_note(rc: RuleContext, acc: Access, smax: int) -> list[str]:
    """The cudaMalloc alignment assumed for a pointer parameter, when it matters: the
    count differs if the buffer is only aligned to the access size (what PTX requires)."""
    region = acc.address.region
    p = rc.kernel.param(region.obj) if region is not None and region.obj else None
    if p is None or p.ptr_align:
        return []
    natural = 1 << max(0, (acc.width & -acc.width).bit_length() - 1)
    cases = warp_cases(rc, acc, align=natural)
    if cases and max(_cost(c, acc.width).smax for c in cases) != smax:
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


# ---- shared with bank_conflict: the warp patterns of an access --------------------------------
@dataclass(frozen=True)
class WarpCase:
    """The warp patterns of an access for one choice of its unknown (uniform but not
    constant) lane coefficients; `values` is that choice, `unknown` the original sets."""

    values: dict[str, int]
    unknown: dict[str, SI]
    patterns: tuple[WarpPattern, ...]


def in_space(acc: Access, space: str) -> bool:
    """The access goes to `space`: by its state space, or generic with a known region."""
    if acc.space == space:
        return True
    region = acc.address.region
    return acc.space == "generic" and region is not None and region.space == space


def exact_block(rc: RuleContext) -> tuple[int, int, int] | None:
    """The block shape when the launch or `.reqntid` fixes it."""
    return rc.facts.ctx.launch.block_or_limits(rc.kernel).shape


def warp_cases(rc: RuleContext, acc: Access, width: int | None = None,
               align: int | None = None) -> list[WarpCase]:
    """One case when every lane coefficient is known; else one per sampled choice of
    the unknown ones (see `coefficient_samples`); empty when the address has no form.
    `align` overrides the alignment known for the object the address points into."""
    address, width = acc.address, acc.width if width is None else width
    aff = address.aff
    if aff.is_top or aff.is_bottom:
        return []
    region = address.region
    if align is None:
        align = rc.facts.ctx.object_align(region.obj if region is not None else None)
    block, bounds = exact_block(rc), rc.facts.ctx.bounds
    unknown = {n: c for n, c in aff.coeffs if not c.is_singleton}
    choices = list(product(*(coefficient_samples(c) for c in unknown.values())))[:256]
    out = []
    for choice in choices:
        values = dict(zip(unknown, choice))
        coeffs = tuple((n, SI.const(values[n]) if n in values else c) for n, c in aff.coeffs)
        value = Value(address.si, Affine(aff.base, coeffs), address.cong, region)
        patterns = warp_patterns(value, width, block, bounds, align)
        if patterns:
            out.append(WarpCase(values, unknown, patterns))
    return out


def coefficient_samples(c: SI, cap: int = 48) -> list[int]:
    """Values of a coefficient set that decide a warp's cost: every element of a small
    set, else the elements within 160 bytes of 0 (40 steps at most; past that, lanes of
    one request no longer share sectors or banks) and both ends."""
    if c.is_singleton:
        return [c.lo]  # type: ignore[list-item]
    size = c.size()
    if size is not None and size <= cap:
        return sorted(c.gamma())
    near = min(160, 40 * c.stride)
    middle = c.meet(SI.range(-near, near))
    picks = set() if middle.is_bottom else set(middle.gamma())
    picks.update(x for x in (c.lo, c.hi) if x is not None)
    return sorted(picks)


def lane_stride(p: WarpPattern) -> int | None:
    """The byte step between consecutive lanes when the pattern is one arithmetic run."""
    offs = [o for o in p.offsets if o is not None]
    if len(offs) < 2:
        return None
    step = offs[1] - offs[0]
    return step if all(b - a == step for a, b in zip(offs, offs[1:])) else None


def runtime_sources(rc: RuleContext, acc: Access) -> list[str]:
    """Scalar kernel parameters without a launch value, and launch-dependent special
    registers (`%ntid.x`, `%nctaid.x`), that the address is computed from."""
    base = acc.insn.address.base if acc.insn.address is not None else None
    if not isinstance(base, Register):
        return []
    defs: dict[str, list] = {}
    for insn in rc.function.instructions:
        for d in insn.defs:
            defs.setdefault(d.key, []).append(insn)
    launch, found, seen, todo = rc.facts.ctx.launch, [], set(), [base.key]
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        for insn in defs.get(key, ()):
            name = _param_read(insn)
            if name is not None:
                p = rc.kernel.param(name)
                if p is not None and name not in launch.params and not p.dims and \
                        param_value(p, launch, rc.module).region is None and name not in found:
                    found.append(name)
                continue
            for r in insn.uses:
                if r.is_special and re.match(r"%n(tid|ctaid)\.", r.name):
                    if (exact_block(rc) is None or r.name.startswith("%nctaid")) and \
                            r.name not in found:
                        found.append(r.name)
                elif not r.is_special:
                    todo.append(r.key)
    return found


def _param_read(insn) -> str | None:
    addr = getattr(insn, "address", None)
    if insn.opcode in ("ld", "ldu") and getattr(insn, "space", None) == "param" and \
            addr is not None and isinstance(getattr(addr, "base", None), Symbol):
        return addr.base.name
    return None


# ---- shared with bank_conflict: text ---------------------------------------------------------
_LOCAL_STATIC = re.compile(r"_ZZ.*E(\d+)(\w+)$")


def object_name(obj: str) -> str:
    """`_ZZ15transpose_tiledE4tile` -> `tile` (nvcc's name for a function-local static)."""
    m = _LOCAL_STATIC.match(obj)
    return m.group(2)[: int(m.group(1))] if m and len(m.group(2)) >= int(m.group(1)) else obj


def address_text(v: Value) -> str:
    """`tile + 128*%tid.x`, `in + 4*%tid.x + a warp-uniform offset`."""
    parts = []
    if v.region is not None and v.region.obj is not None:
        parts.append(object_name(v.region.obj))
    if v.aff.is_top:
        return " + ".join(parts + ["a different offset in each lane"])
    base = v.aff.base.singleton()
    terms = [f"{c.singleton() if c.is_singleton else f'({c})'}*%{n}" for n, c in v.aff.coeffs]
    terms = [t[2:] if t.startswith("1*") else t for t in terms]
    if base is None:
        tail = ["a warp-uniform offset"]
    else:
        tail = [str(base)] if base or not (parts or terms) else []
    return " + ".join(parts + terms + tail)


def lane_text(lanes: Sequence[int]) -> str:
    """`0-31`, `0, 2, ..., 30`, `0-3, 8-11`."""
    ls = sorted(lanes)
    if len(ls) > 3:
        step = ls[1] - ls[0]
        if step > 1 and all(b - a == step for a, b in zip(ls, ls[1:])):
            return f"{ls[0]}, {ls[1]}, ..., {ls[-1]}"
    runs: list[list[int]] = []
    for lane in ls:
        if runs and lane == runs[-1][-1] + 1:
            runs[-1].append(lane)
        else:
            runs.append([lane])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def unchecked_note(rule: Rule, rc: RuleContext, accesses: list[Access], what: str,
                   space: str) -> Iterator[Diagnostic]:
    """One note per kernel for the accesses whose warp pattern is unknown (not affine in
    the thread index, or lanes that cannot be placed without the block shape): never
    skipped silently, but not one note per access either."""
    if not accesses:
        return
    n = len(accesses)
    plural = "es" if n > 1 else ""
    notes = []
    for acc in accesses[:5]:
        why = "not affine in the thread index" if acc.address.aff.is_top \
            else "needs the block shape to place the lanes"
        notes.append(f"line {acc.insn.span.line if acc.insn.span else '?'}: address = "
                     f"{address_text(acc.address)} ({why})")
    if n > 5:
        notes.append(f"and {n - 5} more")
    d = rule.diagnostic(
        rc, accesses[0].insn, f"{what} not checked for {n} {space} access{plural} whose "
        "lane addresses are unknown", certainty=Certainty.POSSIBLE, notes=notes,
        help="give the block shape and the kernel's scalar parameters in the launch "
             "configuration so the analysis can follow the index arithmetic",
        details={"unchecked": n})
    # Rule.diagnostic reads `severity or self.severity`, and NOTE is 0
    yield replace(d, severity=Severity.NOTE)


def assumption_notes(rc: RuleContext, acc: Access, case: WarpCase) -> list[str]:
    """What the pattern assumed about the block shape."""
    notes = []
    assumed = {p.assumed for p in case.patterns if p.assumed}
    if ASSUMED_ROWS in assumed:
        notes.append("block shape unknown: assuming ntid.x is a multiple of 32, so each warp "
                     "is 32 consecutive %tid.x of one row")
    elif assumed:
        notes.append("block shape unknown: assuming full warps")
    return notes


__all__ = ["UncoalescedAccess", "WarpCase", "warp_cases", "in_space", "exact_block",
           "coefficient_samples", "lane_stride", "runtime_sources", "object_name",
           "address_text", "lane_text", "assumption_notes", "unchecked_note", "WARP_SIZE"]
