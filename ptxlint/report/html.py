"""The HTML report: one self-contained page (styles and drawings inline; no script,
no font, no image or style sheet fetched), listing every finding with the PTX lines
it is on, the CUDA line it came from when the caller read that file, its notes and
fix, and for `bank-conflict` and `uncoalesced-access` a drawing of the warp's
request (`warp_svg`). A pure function of the diagnostics and the source texts, as the
text report is; the only links are to the rules' pages."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from html import escape

from .. import __version__
from ..demangle import demangle
from ..diagnostics import Diagnostic, Severity
from . import hidden_summary, links, other_instances, shown_path, warp_svg
from .text import Summary

CONTEXT_BEFORE, CONTEXT_AFTER = 2, 1
MAX_LINE = 240  # characters of a source line shown

STYLE = """
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #59636e;
  --box: #f6f8fa; --edge: #d1d9e0; --error: #cf222e; --warning: #9a6700; --note: #0969da;
  --hit: #fb8f44; --worst: #cf222e; --ok: #1a7f37; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117;
  --muted: #9198a1; --box: #151b23; --edge: #3d444d; } }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); margin: 0 auto; max-width: 1000px; padding: 16px 24px; }
h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 17px; margin: 0 0 4px; }
code, pre, .src { font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, monospace; }
.summary, .where, figcaption { color: var(--muted); }
.counts span { display: inline-block; margin-right: 12px; }
section.finding { border: 1px solid var(--edge); border-left-width: 4px; border-radius: 6px;
  padding: 10px 14px; margin: 14px 0; }
section.error { border-left-color: var(--error); }
section.warning { border-left-color: var(--warning); }
section.note { border-left-color: var(--note); }
.sev { font-weight: 600; text-transform: lowercase; }
.error .sev { color: var(--error); } .warning .sev { color: var(--warning); }
.note .sev { color: var(--note); }
a.rule { font-family: ui-monospace, monospace; }
div.scroll { overflow-x: auto; }
table.src { border-collapse: collapse; background: var(--box); width: 100%; margin: 6px 0;
  border-radius: 4px; }
table.src td { padding: 0 8px; white-space: pre; vertical-align: top; tab-size: 8; }
table.src td.n { color: var(--muted); text-align: right; width: 1%; user-select: none; }
table.src tr.at td { background: rgba(251, 143, 68, .18); }
mark { background: rgba(251, 143, 68, .55); color: inherit; border-radius: 2px; }
.label { font-weight: 600; } ul.notes { margin: 4px 0; padding-left: 20px; }
.help { color: var(--ok); }
figure.warp-figure { margin: 10px 0; overflow-x: auto; }
svg.warp text { font: 10px ui-monospace, monospace; fill: var(--fg); }
svg.warp text.row-title { font: 12px system-ui, sans-serif; fill: var(--muted); }
svg.warp rect { fill: var(--box); stroke: var(--edge); }
svg.warp rect.hit { fill: var(--hit); stroke: var(--hit); }
svg.warp rect.worst { fill: var(--worst); stroke: var(--worst); }
svg.warp rect.bank.worst + text { fill: #fff; }
svg.warp rect.word { fill: var(--edge); }
svg.warp rect.word.worst { fill: var(--worst); stroke: var(--worst); opacity: .75; }
svg.warp rect.sector.ideal { fill: var(--ok); stroke: var(--ok); }
svg.warp rect.line { fill: none; stroke: var(--muted); stroke-dasharray: 3 2; }
svg.warp path.link { stroke: var(--hit); stroke-width: 1; fill: none; opacity: .7; }
svg.warp path.phase { stroke: var(--muted); fill: none; }
"""


def render(diagnostics: Iterable[Diagnostic], sources: Mapping[str, str] | None = None,
           summary: Summary | None = None, *, docs_base: str | None = None) -> str:
    found = sorted(diagnostics, key=Diagnostic.sort_key)
    sources = sources or {}
    base = docs_base or links.rules_base({})
    body = [_header(found, summary)]
    body += [_finding(i, d, sources, base) for i, d in enumerate(found, 1)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>ptxlint report</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def _header(found: list[Diagnostic], summary: Summary | None) -> str:
    by_severity = Counter(d.severity for d in found)
    by_rule = Counter(d.rule for d in found)
    files = summary.files if summary else len({d.file for d in found})
    counts = ", ".join(f"{by_severity[s]} {s}{'s' if by_severity[s] != 1 else ''}"
                       for s in (Severity.ERROR, Severity.WARNING, Severity.NOTE)
                       if by_severity[s]) or "no findings"
    hidden = hidden_summary(summary.hidden) if summary else None
    extra = f" ({hidden})" if hidden else ""
    rules = "".join(f"<span><code>{escape(r)}</code>: {n}</span>"
                    for r, n in sorted(by_rule.items()))
    return (f"<header><h1>ptxlint report</h1><p class=\"summary\">ptxlint {escape(__version__)}"
            f" checked {files} file{'s' if files != 1 else ''}: {escape(counts)}{escape(extra)}"
            f"</p><p class=\"counts\">{rules}</p></header>")


def _finding(number: int, d: Diagnostic, sources: Mapping[str, str], base: str) -> str:
    where = shown_path(d.file) + (f":{d.line}:{d.column}" if d.span is not None else "")
    facts = [f"<code>{escape(where)}</code>"]
    if d.kernel:
        facts.append(f"kernel <code>{escape(demangle(d.kernel))}</code>")
    facts.append(str(d.certainty))
    parts = [f"<section class=\"finding {d.severity}\" id=\"finding-{number}\" "
             f"data-rule=\"{escape(d.rule)}\">",
             f"<h2><span class=\"sev\">{d.severity}</span> "
             f"<a class=\"rule\" href=\"{escape(links.rule_url(d.rule, base))}\">"
             f"{escape(d.rule)}</a> {escape(d.message)}</h2>",
             f"<p class=\"where\">{' &middot; '.join(facts)}</p>"]
    text = sources.get(d.file)
    instruction = ""
    if d.span is not None and text is not None:
        lines = text.split("\n")
        instruction = lines[d.span.line - 1] if d.span.line <= len(lines) else ""
        parts.append(_excerpt(lines, d.span.line, max(d.span.line, d.span.end_line),
                              (d.span.col, d.span.end_col) if d.span.line == d.span.end_line
                              else None, "ptx"))
    if d.label:
        parts.append(f"<p class=\"label\">{escape(d.label)}</p>")
    if d.instances:
        parts.append(f"<p class=\"where\">{escape(other_instances(d))}</p>")
    if d.cuda is not None and d.cuda.line >= 1:
        cuda = sources.get(d.cuda.file)
        parts.append(f"<p class=\"where\">CUDA source: <code>{escape(shown_path(d.cuda.file))}"
                     f":{d.cuda.line}</code></p>")
        if cuda is not None:
            parts.append(_excerpt(cuda.split("\n"), d.cuda.line, d.cuda.line, None, "cuda"))
    parts.append(warp_svg.drawing(d.rule, d.details, instruction))
    if d.notes:
        parts.append("<ul class=\"notes\">" + "".join(f"<li>note: {escape(n)}</li>"
                                                     for n in d.notes) + "</ul>")
    if d.help:
        parts.append(f"<p class=\"help\">help: {escape(d.help)}</p>")
    parts.append("</section>")
    return "".join(p for p in parts if p)


def _excerpt(lines: list[str], first: int, last: int, columns: tuple[int, int] | None,
             kind: str) -> str:
    """Lines `first`..`last` (1-based) with some context, those marked; on a one-line
    span, its columns (1-based, end exclusive) highlighted."""
    rows = []
    for n in range(max(1, first - CONTEXT_BEFORE), min(len(lines), last + CONTEXT_AFTER) + 1):
        line = lines[n - 1].rstrip("\r")
        if columns is not None and n == first:
            start, end = max(columns[0] - 1, 0), max(columns[1] - 1, columns[0])
            cell = (escape(_cut(line[:start])) + "<mark>" + escape(line[start:end])
                    + "</mark>" + escape(_cut(line[end:])))
        else:
            cell = escape(_cut(line))
        at = " class=\"at\"" if first <= n <= last else ""
        rows.append(f"<tr{at}><td class=\"n\">{n}</td><td>{cell}</td></tr>")
    return f"<div class=\"scroll\"><table class=\"src {kind}\">{''.join(rows)}</table></div>"


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LINE else text[:MAX_LINE] + " ..."


__all__ = ["render"]
