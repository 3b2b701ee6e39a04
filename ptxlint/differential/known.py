"""Known defects the soundness suite found, each pinned by a strict xfail reproducer in
`tests/differential/test_reproducers.py`, and a classifier that recognises its
breaches in other runs.

The corpus and random tests fail on any breach no classifier claims; a case whose only
breaches are known ones is an xfail naming them, and the report attributes them. When a
defect is fixed its reproducer XPASSes (strict), which is the signal to delete its
entry here.

Classifiers are narrow on purpose: a breach is attributed to a defect only when its
shape shows the mechanism (a defect observed inside a called function).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

from ..ir.build import parse_module
from .case import Breach, Result
from .match import Observation


@dataclass(frozen=True)
class Defect:
    key: str
    where: str  # "analysis" or "emulator"
    reason: str
    matches: Callable[[Breach, list[Breach], str], bool]  # (breach, all of them, the PTX)


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
