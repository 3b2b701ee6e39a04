"""The human-readable report, laid out like rustc and Ruff:

    warning[bank-conflict]: 32-way shared-memory bank conflict
      --> transpose.ptx:27:5
       |
    26 |     mad.lo.u32     %r4, %r1, 128, %r3;
    27 |     ld.shared.f32  %f1, [%r4];
       |     ^^^^^^^^^^^^^^^^^^^^^^^^^^ lanes 0-31 all hit bank 0
       |
      ::: transpose.cu:14:9
       |
    14 |         tile[threadIdx.x][k] = in[i];
       |         ----------------------------- CUDA source of this line
       |
       = note: address = tile + 128*%tid.x
       = help: pad the row so consecutive lanes fall in different banks

A pure function of the diagnostics and the source texts the caller read: the report
never opens files. Rich only supplies colour; lines are emitted as segments so tabs in
the source reach the output unexpanded and long lines are never wrapped.
"""
from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style

from ..diagnostics import Diagnostic, Severity
from ..source import SourceFile
from . import hidden_summary, other_instances, shown_path

SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow",
                  Severity.NOTE: "bold cyan"}
GUTTER = "bold blue"
CUDA_STYLE = "blue"

Fragment = tuple[str, str]  # (text, rich style; "" for none)
Line = list[Fragment]


@dataclass(frozen=True)
class Summary:
    """What the closing line reports besides the counts."""

    files: int
    seconds: float | None = None  # None leaves the time out (goldens)
    # diagnostics below the minimum severity shown, per severity (an int: notes)
    hidden: Mapping[Severity, int] | int = 0


class Report:
    """A rich renderable: the diagnostics, then the summary line."""

    def __init__(self, diagnostics: Iterable[Diagnostic],
                 sources: Mapping[str, str | SourceFile] | None = None,
                 summary: Summary | None = None):
        self.diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
        self.sources = _Sources(sources or {})
        self.summary = summary

    def lines(self) -> list[Line]:
        out: list[Line] = []
        for d in self.diagnostics:
            out.extend(diagnostic_lines(d, self.sources))
            out.append([])
        if self.summary is not None:
            out.append(summary_line(self.diagnostics, self.summary))
            hidden = hidden_summary(self.summary.hidden)
            if hidden is not None:
                out.append([(hidden, "")])
        return out

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        styles: dict[str, Style] = {}
        for line in self.lines():
            for text, style in line:
                if style and style not in styles:
                    styles[style] = Style.parse(style)
                yield Segment(text, styles.get(style) if style else None)
            yield Segment.line()


def write(console: Console, diagnostics: Iterable[Diagnostic],
          sources: Mapping[str, str | SourceFile] | None = None,
          summary: Summary | None = None) -> None:
    """Print the report on `console` (colour as the console decides)."""
    console.print(Report(diagnostics, sources, summary), soft_wrap=True, end="")


def render(diagnostics: Iterable[Diagnostic],
           sources: Mapping[str, str | SourceFile] | None = None,
           summary: Summary | None = None) -> str:
    """The report as plain text."""
    console = Console(file=io.StringIO(), width=100, color_system=None)
    write(console, diagnostics, sources, summary)
    return console.file.getvalue()  # type: ignore[attr-defined]


class _Sources:
    """Line lookup over the texts the caller supplied, by path."""

    def __init__(self, texts: Mapping[str, str | SourceFile]):
        self.texts = texts
        self.files: dict[str, SourceFile] = {}

    def line(self, path: str, line: int) -> str | None:
        if path not in self.files:
            text = self.texts.get(path)
            if text is None:
                return None
            self.files[path] = text if isinstance(text, SourceFile) else SourceFile(path, text)
        source = self.files[path]
        return source.line_text(line) if 1 <= line <= len(source.line_starts) else None


def diagnostic_lines(d: Diagnostic, sources: _Sources) -> list[Line]:
    style = SEVERITY_STYLE[d.severity]
    text, base = None, 0  # the line and the 0-based column it starts at
    if d.span is not None:
        text = sources.line(d.file, d.line)
        excerpt = d.details.get("excerpt")
        if text is None and isinstance(excerpt, str):
            text, base = excerpt, d.details.get("excerpt_col", 1) - 1
    cuda_text = _cuda_text(d, sources)
    numbers = [d.line] + ([d.cuda.line] if cuda_text is not None and d.cuda else []) \
        + [r.line for r in d.related]
    width = max(len(str(n)) for n in numbers)
    path = shown_path(d.file)  # `sources` stay keyed by the name as given
    where = f"{path}:{d.line}:{d.column}" if d.span is not None else path
    out: list[Line] = [[(f"{d.severity}[{d.rule}]", style), (f": {d.message}", "bold")],
                       [(" " * max(width, 2) + "--> ", GUTTER), (where, "")]]
    if text is not None:
        context = sources.line(d.file, d.line - 1) if d.line > 1 else None
        above = [r for r in d.related if r.line == d.line - 1]
        out.append(_gutter(width))
        if context is not None and (context.strip() or above):
            out.append(_numbered(width, d.line - 1, context[:SHOWN_CHARS]))
            out += [_gutter(width) + [(" ", "")] + _related_marks(r, context, style)
                    for r in above]
        cut = _cut(text, d.column - base)
        shown = text[cut:cut + SHOWN_CHARS]
        out.append(_numbered(width, d.line, shown))
        out.append(_gutter(width) + [(" ", "")]
                   + _underline(shown, d, "^", style, d.label, shift=base + cut))
        out += _related_lines(d, sources, width, style)
    if d.cuda is not None and d.cuda.line >= 1:
        out += _cuda_lines(d, width, cuda_text)
    notes = [("note", n) for n in d.notes]
    if d.instances:
        notes.append(("note", other_instances(d, SHOWN_INSTANCES)))
    notes += [("help", d.help)] if d.help else []
    if notes and len(out) > 2:
        out.append(_gutter(width))
    pad = " " * (width + 1)
    for kind, note in notes:
        first, *rest = note.splitlines() or [""]
        out.append([(pad, ""), ("= ", GUTTER), (f"{kind}:", "bold"), (f" {first}", "")])
        indent = pad + " " * (len(kind) + 4)
        out.extend([[(indent + more, "")] for more in rest])
    return out


def _related_lines(d: Diagnostic, sources: _Sources, width: int, style: str) -> list[Line]:
    """Each secondary location under the primary one, marked with `-`, as rustc does."""
    out: list[Line] = []
    for r in d.related:
        text = sources.line(d.file, r.line)
        if text is None or r.line == d.line - 1:  # shown with the line above
            continue
        out.append(_gutter(width) + [(" ...", GUTTER)] if abs(r.line - d.line) > 1
                   else _gutter(width))
        out.append(_numbered(width, r.line, text))
        out.append(_gutter(width) + [(" ", "")] + _related_marks(r, text, style))
    return out


def _related_marks(r, text: str, style: str) -> Line:
    end = r.span.end_col if r.span.end_line == r.line else len(text) + 1
    return _marks(text, r.span.col, end, "-", style, r.label)


def _cuda_text(d: Diagnostic, sources: _Sources) -> str | None:
    if d.cuda is None or d.cuda.line < 1:
        return None
    return sources.line(d.cuda.file, d.cuda.line)


def _cuda_lines(d: Diagnostic, width: int, text: str | None) -> list[Line]:
    cuda = d.cuda
    assert cuda is not None
    column = f":{cuda.column}" if cuda.column > 0 else ""
    where = f"{shown_path(cuda.file)}:{cuda.line}{column}"
    out: list[Line] = [_gutter(width), [(" " * max(width, 2) + "::: ", GUTTER), (where, "")]]
    if text is not None:
        out.append(_gutter(width))
        out.append(_numbered(width, cuda.line, text))
        start = cuda.column if cuda.column > 0 else 1
        out.append(_gutter(width) + [(" ", "")] +
                   _marks(text, start, len(text) + 1, "-", CUDA_STYLE, "CUDA source of this line"))
    return out


def _gutter(width: int) -> Line:
    return [(" " * width + " |", GUTTER)]


SHOWN_CHARS = 1000  # of a source line, at most
SHOWN_INSTANCES = 10  # of a group's other instructions, listed by line and column


def _numbered(width: int, number: int, text: str) -> Line:
    return [(f"{number:>{width}} |", GUTTER), (f" {text}", "")]


def _cut(text: str, column: int) -> int:
    """Where the shown part of a long line starts: SHOWN_CHARS around `column` (a line
    of megabytes is shown as a window, not whole)."""
    if len(text) <= SHOWN_CHARS:
        return 0
    return max(0, min(column - 1 - SHOWN_CHARS // 2, len(text) - SHOWN_CHARS))


def _underline(text: str, d: Diagnostic, mark: str, style: str, label: str | None,
               shift: int = 0) -> Line:
    """Marks under the span; `text` is the line from its column `shift` + 1 on."""
    span = d.span
    assert span is not None
    end = span.end_col - shift if span.end_line == span.line else len(text) + 1
    return _marks(text, span.col - shift, min(end, len(text) + 1), mark, style, label)


def _marks(text: str, start: int, end: int, mark: str, style: str,
           label: str | None) -> Line:
    """Marks under 1-based columns [start, end) of `text`, starting at the first
    non-blank column; the prefix keeps the line's tabs so the marks line up."""
    first_code = len(text) - len(text.lstrip()) + 1
    if start < first_code < end:
        start = first_code
    start = max(1, min(start, len(text) + 1))
    prefix = "".join(c if c == "\t" else " " for c in text[: start - 1])
    marks = mark * max(1, end - start)
    return [(prefix, ""), (marks, style)] + ([(f" {label}", style)] if label else [])


def summary_line(diagnostics: list[Diagnostic], summary: Summary) -> Line:
    """`checked 3 files in 0.42s: 1 error, 2 warnings (bank-conflict: 2, parse-error: 1)`."""
    by_severity = Counter(d.severity for d in diagnostics)
    by_rule = Counter(d.rule for d in diagnostics)
    line: Line = [(f"checked {_plural(summary.files, 'file')}", "bold")]
    if summary.seconds is not None:
        line.append((f" in {summary.seconds:.2f}s", ""))
    line.append((": ", ""))
    if diagnostics:
        counts = [_plural(by_severity[s], str(s)) for s in sorted(by_severity, reverse=True)]
        rules = ", ".join(f"{r}: {n}" for r, n in sorted(by_rule.items()))
        line += [(", ".join(counts), "bold"), (f" ({rules})", "")]
    else:
        line.append(("no findings", "bold green"))
    return line


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("s" if n != 1 else "")


__all__ = ["Report", "Summary", "write", "render", "summary_line"]
