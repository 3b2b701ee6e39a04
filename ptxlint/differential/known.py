"""Known defects the soundness suite found, each pinned by a strict xfail reproducer in
`tests/differential/test_reproducers.py`, and a classifier that recognises its
breaches in other runs.

The corpus and random tests fail on any breach no classifier claims; a case whose only
breaches are known ones is an xfail naming them, and the report attributes them. When a
defect is fixed its reproducer XPASSes (strict), which is the signal to delete its
entry here.

Classifiers are narrow on purpose: a breach is attributed to a defect only when its
shape shows the mechanism (a predicate that guarded an earlier branch, or a register
its setp compared, claimed uniform while the lanes disagree; a value that satisfies its
claim modulo 2^32 but not 2^64; a shared request whose bytes cross 2^32), or when it is
a consequence of such a breach (at the same instruction, or a lane-form violation of a
value computed from the wrongly uniform one).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable

from ..ir.build import parse_module
from .case import Breach, Result
from .gamma import cong_contains, si_contains
from .match import Observation
from .probe import Violation


@dataclass(frozen=True)
class Defect:
    key: str
    where: str  # "analysis" or "emulator"
    reason: str
    matches: Callable[[Breach, list[Breach], str], bool]  # (breach, all of them, the PTX)


@functools.lru_cache(maxsize=64)
def _dataflow(ptx: str) -> tuple[dict[str, int], dict[str, set[str]], dict[str, set[str]]]:
    """For the kernel: the first line of a guarded branch per predicate, the sources of
    each setp's predicate, and each register's (transitive) sources."""
    module = parse_module(ptx, "<known>").module
    branch: dict[str, int] = {}
    compared: dict[str, set[str]] = {}
    sources: dict[str, set[str]] = {}
    for fn in module.entries:
        for insn in fn.instructions:
            line = insn.span.line if insn.span else 0
            if insn.opcode == "bra" and insn.guard is not None:
                name = insn.guard.register.name
                branch[name] = min(branch.get(name, line), line)
            for d in insn.defs:
                sources.setdefault(d.name, set()).update(
                    r.name for r in insn.uses if not r.is_special)
                if insn.opcode == "setp":
                    compared.setdefault(d.name, set()).update(
                        r.name for r in insn.uses if not r.is_special)
    closure: dict[str, set[str]] = {}
    for reg in sources:
        seen, todo = set(), [reg]
        while todo:
            for r in sources.get(todo.pop(), ()):
                if r not in seen:
                    seen.add(r)
                    todo.append(r)
        closure[reg] = seen
    return branch, compared, closure


def _register(v: Violation) -> str | None:
    m = re.search(r"%[\w.]+", v.what)
    return m.group(0) if m else None


def _reconverged_root(v: Violation, ptx: str) -> bool:
    """A value claimed uniform whose lanes disagree, that decided (or was compared for)
    a guarded branch above: refined on both edges, joined as uniform."""
    if v.component != "lane form" or not v.claim.is_uniform:
        return False
    branch, compared, _ = _dataflow(ptx)
    reg = _register(v)
    preds = [p for p, first in branch.items() if first < (v.line or 0) and
             (p == reg or reg in compared.get(p, ()))]
    return bool(preds)


def _reconverged_predicate(b: Breach, all_: list[Breach], ptx: str) -> bool:
    """The root violations, and lane-form violations of values computed from a root
    (their uniform claims inherit the error)."""
    v = b.subject
    roots = [o.subject for o in all_ if o.kind == "gamma" and isinstance(o.subject, Violation)
             and _reconverged_root(o.subject, ptx)]
    if not roots:
        return False
    if b.kind == "gamma" and isinstance(v, Violation):
        if _reconverged_root(v, ptx):
            return True
        _, _, closure = _dataflow(ptx)
        reg = _register(v)
        return v.component == "lane form" and any(
            _register(r) in closure.get(reg, ()) for r in roots)
    if isinstance(v, Observation) and (
            (b.kind == "missed" and v.rule in ("divergent-bra-uni", "bank-conflict",
                                               "uncoalesced-access")) or b.kind == "over-bound"):
        return any(o.line == b.line and o.kind == "gamma" and
                   _reconverged_predicate(o, all_, ptx) for o in all_)
    return False


def _wrapped_shared_offset(b: Breach, all_: list[Breach], ptx: str) -> bool:
    v = b.subject
    if b.kind == "gamma" and isinstance(v, Violation):
        r = v.claim.region
        return (v.width == 64 and r is not None and r.space == "shared" and
                v.component != "unreachable" and bool(v.examples) and
                all(si_contains(v.claim.si, off, 32) and cong_contains(v.claim.cong, off, 32)
                    for *_, off in v.examples))
    if b.kind == "missed" and isinstance(v, Observation) and v.rule == "out-of-bounds":
        return any(_wrapped_shared_offset(o, [], ptx) and o.line == b.line for o in all_)
    return False


@functools.lru_cache(maxsize=64)
def _callee_lines(ptx: str) -> frozenset[int]:
    """Lines of the instructions of the module's `.func` bodies."""
    module = parse_module(ptx, "<known>").module
    return frozenset(i.span.line for fn in module.functions if not fn.is_entry
                     for i in fn.instructions if i.span is not None)


def _in_callee(b: Breach, all_: list[Breach], ptx: str) -> bool:
    o = b.subject
    return b.kind == "missed" and isinstance(o, Observation) and \
        o.site.line in _callee_lines(ptx)


DEFECTS = (
    Defect("reconverged-predicate", "analysis",
           "analysis unsoundness: a branch predicate (or a register its setp compares), "
           "refined on both edges of its own divergent branch, is warp-uniform where the "
           "lanes reconverge, so a later `@%p bra.uni` on it is not reported "
           "(divergent-bra-uni) and `uniform-branch` suggests `.uni` for `@%p bra`",
           _reconverged_predicate),
    Defect("zero-extended-shared-offset", "analysis",
           "analysis unsoundness: `cvt.u64.u32` of a 32-bit shared address whose offset "
           "may be negative keeps the offset, although the 32-bit address wrapped (the "
           "object may sit at shared address 0), so a later 64-bit generic access is "
           "claimed in bounds", _wrapped_shared_offset),
    Defect("callee-not-checked", "rules",
           "rules read only the kernel's own facts: a load or store inside a called `.func` "
           "is never checked, so its out-of-bounds (or misaligned, conflicting) access is "
           "not reported", _in_callee),
)


def classify(result: Result) -> tuple[list[Breach], dict[str, Defect]]:
    """(breaches no known defect explains, the known defects seen)."""
    breaches = result.breaches()
    context = result.contradictions()  # roots may sit among the excused ones
    unknown, seen = [], {}
    for b in breaches:
        hit = next((d for d in DEFECTS if d.matches(b, context, result.case.ptx)), None)
        if hit is None:
            unknown.append(b)
        else:
            seen[hit.key] = hit
    return unknown, seen


def reason(seen: dict[str, Defect]) -> str:
    return "known defects (see tests/differential/test_reproducers.py): " + \
        ", ".join(f"{k} ({d.where})" for k, d in sorted(seen.items()))


__all__ = ["DEFECTS", "Defect", "classify", "reason"]
