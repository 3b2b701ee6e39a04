"""GitHub Actions workflow commands, one line per diagnostic, which the runner turns
into annotations on the pull request and the run's summary:

    ::warning file=k.ptx,line=27,endLine=27,col=5,endColumn=30,title=ptxlint (rule)::...

with the rule's id in the title. The runner knows `error`, `warning` and `notice` only: a note is a `notice` (a problem
matcher over the gcc format drops notes). A property value escapes `%`, CR, LF, `:`
and `,`; the message escapes `%`, CR and LF (the runner's `ActionCommand` unescapes
exactly those), so the label, notes, help and CUDA line follow the message on lines of
their own. `col`/`endColumn` are sent only for a one-line span (the runner ignores
them otherwise); `endColumn` is inclusive, where ptxlint's end column is exclusive.
"""
from __future__ import annotations

import os
from collections.abc import Iterable

from ..diagnostics import Diagnostic, Severity
from . import other_instances, shown_path

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def line(d: Diagnostic, root: str | None = None) -> str:
    props = [("file", _path(d.file, root))]
    if d.span is not None and d.line >= 1:
        span = d.span
        end_line = max(span.line, span.end_line)
        props += [("line", str(span.line)), ("endLine", str(end_line))]
        if end_line == span.line:
            col = max(1, span.col)
            props += [("col", str(col)), ("endColumn", str(max(col, span.end_col - 1)))]
    props.append(("title", f"ptxlint ({d.rule})"))
    fields = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{COMMAND[d.severity]} {fields}::{escape_data(message(d, root))}"


def message(d: Diagnostic, root: str | None = None) -> str:
    """The message, then what the text report shows under it, a line each."""
    out = [d.message]
    if d.label:
        out.append(d.label)
    out += [f"line {r.line}: {r.label}" for r in d.related]
    if d.instances:
        out.append(other_instances(d))
    out += [f"note: {n}" for n in d.notes]
    if d.help:
        out.append(f"help: {d.help}")
    if d.cuda is not None and d.cuda.line >= 1:
        out.append(f"CUDA source: {_path(d.cuda.file, root)}:{d.cuda.line}")
    return "\n".join(out)


def _path(path: str, root: str | None) -> str:
    """Relative to `root` (the workspace GitHub resolves annotation paths against) when
    the file lies under it; as given otherwise."""
    shown = shown_path(path)
    if root is None or not os.path.isabs(path):
        return shown
    relative = os.path.relpath(os.path.normpath(path), root)
    above = relative == os.pardir or relative.startswith(os.pardir + os.sep)
    return shown if above else shown_path(relative)


def render(diagnostics: Iterable[Diagnostic], *, root: str | None = None) -> str:
    return "".join(line(d, root) + "\n" for d in sorted(diagnostics, key=Diagnostic.sort_key))


__all__ = ["render", "line", "message", "escape_data", "escape_property", "COMMAND"]
