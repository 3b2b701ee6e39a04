"""Re-linting a document after an edit, analysing only the kernels whose text changed.

An editor re-sends a file on every keystroke, and most edits touch one kernel. The
whole file is parsed again (fast), then each entry's findings come from a cache keyed
by the entry's own text and by its *context*: everything in the file outside the
entries (header, globals, `.func` callees, `.file` table) plus the options. A change in
the context re-analyses every entry; a change inside one entry re-analyses that entry.

Cached positions are kept as (segment, offset inside it): the file is cut into
alternating context and entry segments, and an unchanged segment holds the same text
at a new place, so a finding in a callee or in an unchanged kernel moves with its text
when an edit above it adds lines, and so do secondary locations (`related`). Messages,
labels, notes and help that cite a line ("exit branch at line 41") are renumbered the
same way. Results equal `lint_text()` on
the new text, except for line numbers inside `details`, which keep the old ones.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .diagnostics import Diagnostic
from .ir.build import parse_module
from .ir.module import Function, Module
from .lint import LintOptions, finish, lint_module
from .source import SourceFile, Span

# what may contain a brace that is not one: comments and strings
_BRACES = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|[{}]', re.S)


@dataclass(frozen=True)
class _Pos:
    segment: int
    offset: int


@dataclass(frozen=True)
class _Cached:
    diagnostic: Diagnostic
    start: _Pos | None
    end: _Pos | None


@dataclass(frozen=True)
class _Result:
    """One entry's findings, with the segments and text they were found in."""

    findings: list[_Cached]
    segments: list[tuple[int, int, int | None]]
    source: SourceFile


_LINE_REF = re.compile(r"\b(lines?) (\d+)")


class IncrementalLinter:
    """`lint(text)` for successive versions of one document."""

    def __init__(self, path: str):
        self.path = path
        self.cache: dict[tuple, list[_Cached]] = {}
        self.analysed: list[str] = []  # the entries the last call analysed (for tests)

    def lint(self, text: str, options: LintOptions) -> list[Diagnostic]:
        parsed = parse_module(text, self.path)
        if not parsed.ok:
            return sorted(parsed.diagnostics, key=Diagnostic.sort_key)
        module = parsed.module
        segments = _segments(text, module)
        self.analysed = []
        if segments is None:  # braces we cannot match: no reuse
            self.analysed = [f.name for f in module.entries]
            return _finish(list(parsed.diagnostics)
                           + [d for ds in lint_module(module, options) for d in ds],
                           parsed.source, module, options)
        context = (repr(options), tuple(text[s:e] if name is None else name
                                        for s, e, name in segments))
        source = SourceFile(self.path, text)
        cache: dict[tuple, list[_Cached]] = {}
        out = list(parsed.diagnostics)
        for index, fn in _selected(module, options):
            segment = next(i for i, (_, _, name) in enumerate(segments) if name == index)
            s, e, _ = segments[segment]
            key = (context, index, text[s:e])
            result = self.cache.get(key)
            if result is None:
                self.analysed.append(fn.name)
                found = lint_module(module, replace(options, kernels=(_literal(fn.name),)))[index]
                encoded = _encode(found, segments, segment)
                if encoded is None:
                    out.extend(found)
                    continue
                result = _Result(encoded, segments, source)
            cache[key] = result
            out.extend(_decode(c, result, segments, source) for c in result.findings)
        self.cache = cache
        return _finish(out, parsed.source, module, options)


def _selected(module: Module, options: LintOptions):
    for index, fn in enumerate(module.entries):
        if options.selects(fn.name):
            yield index, fn


def _segments(text: str, module: Module) -> list[tuple[int, int, int | None]] | None:
    """[(start, end, entry index or None for context)], covering `text` in order."""
    regions = []
    for index, fn in enumerate(module.entries):
        region = _region(text, fn)
        if region is None:
            return None
        regions.append((*region, index))
    regions.sort()
    out: list[tuple[int, int, int | None]] = []
    at = 0
    for start, end, index in regions:
        if start < at:
            return None
        out.append((at, start, None))
        out.append((start, end, index))
        at = end
    out.append((at, len(text), None))
    return out


def _region(text: str, fn: Function) -> tuple[int, int] | None:
    """From the start of the line naming the entry to its closing brace."""
    if fn.span is None:
        return None
    start = text.rfind("\n", 0, fn.span.start) + 1
    depth = 0
    for m in _BRACES.finditer(text, fn.span.end):
        token = m.group()
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
            if depth == 0:
                return start, m.end()
            if depth < 0:
                return None
    return None


def _encode(found: list[Diagnostic], segments, own: int) -> list[_Cached] | None:
    """Positions as (segment, offset); None when one lies in another entry's text
    (which may change on its own) so the result cannot be reused."""
    out = []
    for d in found:
        if d.span is None:
            out.append(_Cached(d, None, None))
            continue
        start, end = _locate(d.span.start, segments), _locate(d.span.end, segments, end=True)
        related = [_locate(r.span.start, segments) for r in d.related] + \
            [_locate(r.span.end, segments, end=True) for r in d.related]
        for pos in (start, end, *related):
            if segments[pos.segment][2] is not None and pos.segment != own:
                return None
        out.append(_Cached(d, start, end))
    return out


def _locate(offset: int, segments, end: bool = False) -> _Pos:
    for i, (s, e, _) in enumerate(segments):
        if s <= offset < e or (end and offset == e) or i == len(segments) - 1:
            return _Pos(i, offset - s)
    raise AssertionError("segments cover the text")


def _decode(c: _Cached, old: _Result, segments, source: SourceFile) -> Diagnostic:
    d = c.diagnostic
    if old.source.text is source.text or old.segments == segments:
        return d  # nothing moved
    changes: dict = {}
    if c.start is not None and c.end is not None:
        start = segments[c.start.segment][0] + c.start.offset
        end = segments[c.end.segment][0] + c.end.offset
        span = source.span(start, end)
        if span != d.span:
            changes["span"] = Span(*span)

    def renumber(text: str | None) -> str | None:
        if not text or "line" not in text:
            return text
        return _LINE_REF.sub(
            lambda m: f"{m.group(1)} {_new_line(int(m.group(2)), old, segments, source)}", text)

    for name in ("message", "label", "help"):
        value = getattr(d, name)
        if renumber(value) != value:
            changes[name] = renumber(value)
    notes = tuple(renumber(n) for n in d.notes)
    if notes != d.notes:
        changes["notes"] = notes
    if d.related:  # secondary spans move with the entry too (`_encode` kept them in it)
        changes["related"] = tuple(
            replace(r, span=Span(*source.span(*(segments[p.segment][0] + p.offset for p in (
                _locate(r.span.start, old.segments), _locate(r.span.end, old.segments, True))))),
                label=renumber(r.label) or r.label) for r in d.related)
    return replace(d, **changes) if changes else d


def _new_line(line: int, old: _Result, segments, source: SourceFile) -> int:
    """Where old line `line` is now: through its segment, unless that is an entry
    whose text may have changed (then as it was)."""
    if not 1 <= line <= len(old.source.line_starts):
        return line
    pos = _locate(old.source.line_starts[line - 1], old.segments)
    if pos.segment >= len(segments) or old.segments[pos.segment][2] != segments[pos.segment][2]:
        return line
    return source.position(segments[pos.segment][0] + pos.offset)[0]


def _finish(diagnostics: list[Diagnostic], source: SourceFile, module: Module,
            options: LintOptions) -> list[Diagnostic]:
    """As `lint_text` returns them: suppressions applied, names demangled, sorted,
    without repeats (`lint.finish`)."""
    return finish(diagnostics, source, tuple(f.name for f in module.functions), options)


def _literal(name: str) -> str:
    """`name` as an fnmatch pattern matching only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


__all__ = ["IncrementalLinter"]
