"""Matching what one run showed against what the analysis claimed.

Events map to the rule that must have reported them at the same instruction
(`EVENT_RULES`); a rule id that is not registered (being written elsewhere) turns the
observation into "no rule yet" instead of a failure. Memory costs are compared with
the static worst case of the access (`static.cost_bounds`), finding or not: observed
sectors per request and bank ways must not exceed it.

A defect observed where the rule, by its documented scope, makes no claim
(`static.abstentions`: an address into no known object, a narrow access of unknown
alignment) is *unjudged*: reported, but not a miss.

A finding is *confirmed* when the run shows the defect it describes at its instruction:
an event of its kind, or for the coverage rules a request at least as costly as the
rule's threshold (uncoalesced: twice the ideal sectors for the request's lanes; bank
conflict: two ways or more).
"""
from __future__ import annotations

import bisect

from collections import Counter
from dataclasses import dataclass, field

from ptxlint.arch import SECTOR_BYTES
from ptxlint.diagnostics import Diagnostic, Severity
from ptxlint.emulate.observe import Observations
from ptxlint.ir.operands import Immediate
from ptxlint.rules.base import RULES, load_rules
from .static import CostBound

# emulator event kind -> the rule that must report it at that instruction
EVENT_RULES = {
    "out-of-bounds": "out-of-bounds",
    "misaligned": "misaligned-access",
    "divergent-uniform": "divergent-bra-uni",
    "divergent-barrier": "barrier-divergence",
    "barrier-mismatch": "barrier-divergence",
    "barrier-deadlock": "barrier-divergence",
    "warp-barrier": "barrier-divergence",
    "warp-sync": "warp-sync-mask",
    "uninitialized-register": "uninitialized-read",
    "uninitialized-shared": "uninitialized-read",
    "uninitialized-local": "uninitialized-read",
    "global-race": "global-memory-race",
}
# event kinds judged event by event (`judges` in `compare`): whether the rule makes a
# claim depends on the event's bytes, not only on the instruction
BY_EVENT = frozenset({"uninitialized-shared", "uninitialized-local"})
COVERAGE_RULES = ("uncoalesced-access", "bank-conflict")
UNCOALESCED_RATIO = 2  # the rule's default `uncoalesced_ratio`


@dataclass(frozen=True)
class Site:
    """One instruction: where findings and observations meet."""

    line: int | None
    column: int | None
    text: str

    def __str__(self) -> str:
        return f"line {self.line}: `{self.text}`"


@dataclass
class Observation:
    rule: str  # the rule that must cover it
    kind: str  # the event kind, or "sectors" / "ways"
    site: Site
    detail: str = ""
    data: dict = field(default_factory=dict)  # the event's details, or the worst request

    def __str__(self) -> str:
        return f"{self.site}: {self.kind} ({self.detail}) needs a {self.rule} finding"


@dataclass
class Comparison:
    """One run against one lint: the findings (confirmed or not) and every breach."""

    findings: dict[tuple[str, Site], bool] = field(default_factory=dict)  # -> confirmed
    notes: set[tuple[str, Site]] = field(default_factory=set)  # findings of severity note
    observed: Counter = field(default_factory=Counter)  # rule -> dynamic defects seen
    missed: list[Observation] = field(default_factory=list)  # no finding: unsound
    unjudged: list[Observation] = field(default_factory=list)  # the rule abstains there
    no_rule: list[Observation] = field(default_factory=list)  # rule not registered yet
    unmapped: Counter = field(default_factory=Counter)  # event kinds no rule covers
    over_bound: list[Observation] = field(default_factory=list)  # cost above the claim
    unreachable: list[Site] = field(default_factory=list)  # executed, "unreachable"
    copies: dict[tuple[str, Site], tuple[str, Site]] = field(default_factory=dict)
    executed: int = 0  # kernel instructions the run executed (each checked reachable)
    bounds_checked: int = 0  # observed accesses compared with a static worst case


# Rules whose related locations are part of the reported defect (a barrier's unrolled
# copies, the barrier where the threads that skip it wait, the other instructions of a
# blocked access reported once): a defect observed there is covered by the finding.
COVERS_RELATED = frozenset({"barrier-divergence", "uncoalesced-access"})


def site_of(insn) -> Site:
    span = insn.span
    return Site(span.line if span else None, span.col if span else None, str(insn))


def _ideal(lanes: int, width: int) -> int:
    return max(1, -(-lanes * width // SECTOR_BYTES))


def is_finding(d: Diagnostic) -> bool:
    """A claim of a defect at an instruction, whatever its severity (a "may be out of
    bounds" note covers an overflow too), by a rule that reports defects (not a
    note-only rule such as `uniform-branch`); not the per-kernel "not checked" summary
    notes of the coverage rules."""
    cls = RULES.get(d.rule)
    return d.span is not None and cls is not None and cls.severity >= Severity.WARNING \
        and "unchecked" not in d.details


def compare(diagnostics: list[Diagnostic], obs: Observations, program,
            bounds: dict[int, CostBound], abstain: dict[str, set[int]], executed: set[int],
            reachable, threads_per_block: int, judges: dict | None = None) -> Comparison:
    """`program`: the emulator's `Program` (pc -> instruction); `bounds` and `abstain`
    by instruction identity; `reachable(insn)` the analysis's reachability; `judges`:
    event kind -> `f(event, insn)`, whether the rule makes a claim about that event
    (the kinds of `BY_EVENT`: the rule abstains on the others)."""
    load_rules()
    out = Comparison()
    site = _sites(program)
    for d in diagnostics:
        if is_finding(d):
            key = site(d.span)
            out.findings[(d.rule, key)] = False
            if d.rule in COVERS_RELATED:
                for r in d.related:
                    out.copies[(d.rule, site(r.span))] = (d.rule, key)
            if d.severity < Severity.WARNING:
                out.notes.add((d.rule, key))
    sites = {}
    for pc in sorted(executed):
        insn = program.instructions[pc]
        if insn is not None:
            out.executed += 1
            sites[pc] = site_of(insn)
            if not reachable(insn):
                out.unreachable.append(sites[pc])
    _events(out, obs, program, abstain, judges or {})
    _costs(out, obs, program, bounds, threads_per_block, abstain)
    return out


def _sites(program):
    """span -> the site of the instruction whose text contains it (a finding about an
    access points at its address operand, an observation at the instruction)."""
    spans = sorted((i.span.start, i.span.end, i.span.line, i.span.col)
                   for i in program.instructions if i is not None and i.span is not None)
    starts = [s[0] for s in spans]

    def site(span) -> Site:
        k = bisect.bisect_right(starts, span.start) - 1
        if k >= 0 and spans[k][0] <= span.start < max(spans[k][1], spans[k][0] + 1):
            return Site(spans[k][2], spans[k][3], "")
        return Site(span.line, span.col, "")
    return site


def _flag(out: Comparison, rule: str, site: Site, kind: str, detail: str,
          abstains: bool = False, data: dict | None = None) -> None:
    """A dynamic defect for `rule` at `site`: confirm the finding, or record the miss."""
    out.observed[rule] += 1
    key = (rule, Site(site.line, site.column, ""))
    key = out.copies.get(key, key)
    ob = Observation(rule, kind, site, detail, dict(data or {}))
    if key in out.findings:
        out.findings[key] = True
    elif rule not in RULES:
        out.no_rule.append(ob)
    elif abstains:
        out.unjudged.append(ob)
    else:
        out.missed.append(ob)


def _owner(kind: str, insn) -> str | None:
    """The rule that must report an event of `kind` at `insn`: a `bar.warp.sync` is
    `barrier-divergence`'s when its mask is an immediate (`__syncwarp()`), else
    `warp-sync-mask`'s (`__syncwarp(ballot)`; the rules' docstrings split it so)."""
    if kind == "warp-barrier" and not isinstance(getattr(insn, "member_mask", None),
                                                 Immediate):
        return "warp-sync-mask"
    return EVENT_RULES.get(kind)


def _events(out: Comparison, obs: Observations, program, abstain: dict[str, set[int]],
            judges: dict) -> None:
    seen = set()
    events = obs.events
    for ev in events:
        if (ev.kind, ev.pc) in seen:
            continue
        seen.add((ev.kind, ev.pc))
        insn = program.instructions[ev.pc] if ev.pc is not None else None
        rule = _owner(ev.kind, insn)
        if rule is None or insn is None:
            out.unmapped[ev.kind] += obs.event_counts[(ev.kind, ev.pc)]
            continue
        abstains = id(insn) in abstain.get(rule, ())
        if ev.kind in BY_EVENT:  # the first event the rule makes a claim about
            judge = judges.get(ev.kind)
            claimed = [e for e in events if (e.kind, e.pc) == (ev.kind, ev.pc)
                       and judge is not None and judge(e, insn)]
            abstains = abstains or not claimed
            ev = claimed[0] if claimed else ev
        lanes = ev.details.get("lanes")
        detail = f"{obs.event_counts[(ev.kind, ev.pc)]} warp(s), e.g. block " \
                 f"{ev.details.get('block')} warp {ev.details.get('warp')} lanes {lanes}"
        other = ev.details.get("other_pc")
        if other is not None and 0 <= other < len(program.instructions):
            # a race: the finding may sit on either access
            first = program.instructions[other]
            if first is not None:
                abstains = abstains or id(first) in abstain.get(rule, ())
                key = (rule, Site(site_of(first).line, site_of(first).column, ""))
                if key in out.findings and (rule, Site(site_of(insn).line,
                                                       site_of(insn).column, "")) \
                        not in out.findings:
                    _flag(out, rule, site_of(first), ev.kind, detail, abstains, ev.details)
                    continue
        _flag(out, rule, site_of(insn), ev.kind, detail, abstains, ev.details)


def _costs(out: Comparison, obs: Observations, program, bounds: dict[int, CostBound],
           tpb: int, abstain: dict[str, set[int]] | None = None) -> None:
    """Observed costs against the static worst case; where the analysis placed no
    lanes (no bound: the rule's "not checked" note), or the rule judges the instruction
    only with others (`abstain`), a costly request is unjudged."""
    skip = (abstain or {}).get("uncoalesced-access", set())
    for stats in obs.accesses.values():
        insn = program.instructions[stats.pc]
        if insn is None:
            continue
        site = site_of(insn)
        bound = bounds.get(id(insn), CostBound())
        out.bounds_checked += (bound.sectors is not None and bool(stats.sectors)) or \
            (bound.ways is not None and bool(stats.ways))
        if stats.sectors:
            worst = stats.worst_sectors or {}
            if bound.sectors is not None and stats.max_sectors > bound.sectors:
                out.over_bound.append(Observation(
                    "uncoalesced-access", "sectors", site,
                    f"{stats.max_sectors} sectors per request observed, static worst case "
                    f"{bound.sectors}; {worst}", {**worst, "width": stats.width}))
            # the rule's ideal counts the lanes the warp has, active or not
            lanes = max(1, min(32, tpb - 32 * worst.get("warp", 0)))
            if worst.get("value", 0) >= UNCOALESCED_RATIO * _ideal(lanes, stats.width):
                _flag(out, "uncoalesced-access", site, "sectors",
                      f"{worst.get('value')} sectors for {lanes} lanes of {stats.width} bytes",
                      bound.sectors is None or id(insn) in skip,
                      {**worst, "width": stats.width})
        if stats.ways:
            if bound.ways is not None and stats.max_ways > bound.ways:
                out.over_bound.append(Observation(
                    "bank-conflict", "ways", site,
                    f"{stats.max_ways}-way conflict observed, static worst case {bound.ways}; "
                    f"{stats.worst_ways}", {**(stats.worst_ways or {}), "width": stats.width}))
            if stats.max_ways >= 2:
                _flag(out, "bank-conflict", site, "ways", f"{stats.max_ways}-way conflict",
                      bound.ways is None, {**(stats.worst_ways or {}), "width": stats.width})


__all__ = ["compare", "Comparison", "Observation", "Site", "EVENT_RULES", "COVERAGE_RULES"]
