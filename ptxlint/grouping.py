"""Each finding once: the findings one CUDA line gives on several PTX instructions
(an unrolled loop, the instances of a template, an inlined helper) are one diagnostic.

Findings group when they agree on the PTX file, the rule, the severity, the
certainty, the CUDA line their `.loc` names and the kind of their message: the
message with its numbers and its quoted names (`tile`, '%r4') left out, so `bytes
0..127 of `tile`` in one unrolled iteration and `bytes 128..255` in the next are one
kind. The first finding of a group in file order stands for it, its message saying
on how many instructions ("(on 4 instructions)"), and keeps every member, as made,
in `Diagnostic.instances`; `Diagnostic.expanded()` gives them back. A finding
without a CUDA line (hand-written PTX) stays alone: there each PTX line is a source
line. Grouping a grouped list changes nothing.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from .diagnostics import Diagnostic

_QUOTED = re.compile(r"`[^`]*`|'[^']*'")
_NUMBER = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d+)?)")


def message_kind(message: str) -> str:
    """The message with what differs between instances of one defect left out."""
    return _NUMBER.sub("#", _QUOTED.sub("`_`", message))


def group_key(d: Diagnostic) -> tuple | None:
    if d.cuda is None or d.cuda.line < 1 or d.span is None:
        return None
    return (d.file, d.rule, d.severity, d.certainty, d.cuda.file, d.cuda.line,
            message_kind(d.message))


def group(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics with each group made one, in file order."""
    found = sorted((d for g in diagnostics for d in g.expanded()), key=Diagnostic.sort_key)
    members: dict[tuple, list[Diagnostic]] = {}
    order: list[Diagnostic | tuple] = []
    for d in found:
        key = group_key(d)
        if key is None:
            order.append(d)
        elif key in members:
            members[key].append(d)
        else:
            members[key] = [d]
            order.append(key)
    return [item if isinstance(item, Diagnostic) else _one(members[item]) for item in order]


def _one(found: list[Diagnostic]) -> Diagnostic:
    first = found[0]
    if len(found) == 1:
        return first
    kernels = len({d.kernel for d in found})
    where = f"{len(found)} instructions" + (f" in {kernels} kernels" if kernels > 1 else "")
    return replace(first, message=f"{first.message} (on {where})", instances=tuple(found))


__all__ = ["group", "group_key", "message_kind"]
