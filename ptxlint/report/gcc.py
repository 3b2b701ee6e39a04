"""`file:line:col: severity: message [rule-id]`, one line per diagnostic: the format
VS Code problem matchers, vim's quickfix (`errorformat=%f:%l:%c: %m`) and Emacs
compile-mode already understand. A diagnostic without a position (an unreadable file)
is `file: severity: message [rule-id]`."""
from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic
from . import shown_path


def line(d: Diagnostic) -> str:
    path = shown_path(d.file)
    where = f"{path}:{d.line}:{d.column}" if d.span is not None else path
    message = " ".join(d.message.split("\n"))
    return f"{where}: {d.severity}: {message} [{d.rule}]"


def render(diagnostics: Iterable[Diagnostic]) -> str:
    return "".join(line(d) + "\n" for d in sorted(diagnostics, key=Diagnostic.sort_key))


__all__ = ["render", "line"]
