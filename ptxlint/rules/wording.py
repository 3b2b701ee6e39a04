"""Text shared by the warp rules (`uncoalesced-access`, `bank-conflict`) and others:
object names, addresses, lane lists, and the notes that say which lanes were counted,
what was assumed and what was not checked."""
from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.value import Value
from ..interp.facts import Access
from ..threads.warp import ASSUMED_ROWS, WarpPattern
from .base import Rule, RuleContext
from .sites import WarpCase, exact_block, runtime_sources

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
    known = exact_block(rc) is not None
    for acc in accesses[:5]:
        why = ("not computable lane by lane" if known else "not affine in the thread index"
               ) if acc.address.aff.is_top else "needs the block shape to place the lanes"
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


def lane_notes(rc: RuleContext, acc: Access, cases: list[WarpCase], p: WarpPattern,
               varies: bool, exact: bool) -> list[str]:
    """Which lanes were counted and where they go, for a pattern placed lane by lane or
    cut down by a guard; what the count depends on when the cases differ."""
    notes = []
    warp = f"warp {p.warps[0]}" if p.warps else "a warp"
    if acc.address.aff.is_top and p.lanes():
        notes.append(f"lane by lane in {warp}: {offsets_text(p)}")
    if len(p.lanes()) < p.size:
        notes.append(f"only lanes {lane_text(p.lanes())} of {warp} run the access")
    if varies:
        names = cases[0].depends or tuple(f"`{n}`" for n in runtime_sources(rc, acc))
        what = " and ".join(names) or "a value known only at run time"
        their = "their" if len(names) > 1 else "its"
        notes.append(f"the lanes depend on {what}: the worst case over {their} values is "
                     "shown")
    if not exact:
        notes.append("counted over every lane that may run the access: a condition the "
                     "analysis cannot evaluate lane by lane may leave fewer")
    return notes


def offsets_text(p: WarpPattern) -> str:
    """`lanes 0-15 at +0, lanes 16-31 at +256`: runs of lanes at one offset or stepping
    evenly, from the first lane's address."""
    runs: list[list[int]] = []  # [first lane, last lane, first offset, step]
    for lane in p.lanes():
        off = p.offsets[lane]
        if runs:
            first, last, start, step = runs[-1]
            if lane == last + 1 and (last == first or off - p.offsets[last] == step):
                runs[-1] = [first, lane, start, off - p.offsets[last]]
                continue
        runs.append([lane, lane, off, 0])
    parts = []
    for first, last, start, step in runs[:6]:
        who = f"lane {first}" if first == last else f"lanes {first}-{last}"
        where = f"+{start}" if not step or first == last else f"+{start} step {step}"
        parts.append(f"{who} at {where}")
    return ", ".join(parts) + (", ..." if len(runs) > 6 else "") + " bytes"


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


__all__ = ["object_name", "address_text", "lane_text", "unchecked_note", "lane_notes",
           "offsets_text", "assumption_notes"]
