"""`file:line:col: severity: message [rule-id]`, one per line (gcc/clang style)."""
from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic


def render(diagnostics: Iterable[Diagnostic]) -> str:
    return "".join(f"{d.file}:{d.line}:{d.column}: {d.severity}: {d.message} [{d.rule}]\n"
                   for d in sorted(diagnostics, key=Diagnostic.sort_key))
