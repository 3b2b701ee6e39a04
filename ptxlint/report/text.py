"""Human-readable report: the diagnostic, its location, the source line and a caret.
(First cut; the rich, rustc-style renderer replaces it with the full CLI.)"""
from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic


def render(diagnostics: Iterable[Diagnostic], sources: dict[str, object] | None = None) -> str:
    out = []
    for d in sorted(diagnostics, key=Diagnostic.sort_key):
        out.append(f"{d.severity}[{d.rule}]: {d.message}")
        out.append(f"  --> {d.file}:{d.line}:{d.column}")
        excerpt = d.details.get("excerpt")
        if excerpt is None and sources and d.file in sources and d.span:
            excerpt = sources[d.file].line_text(d.line)  # type: ignore[attr-defined]
        if excerpt is not None and d.span:
            gutter = str(d.line)
            # keep tabs in the caret prefix so the caret lines up under the column
            prefix = "".join(c if c == "\t" else " " for c in excerpt[: d.column - 1])
            width = max(1, d.span.end_col - d.span.col) if d.span.end_line == d.line else 1
            out.append(f"{' ' * len(gutter)} |")
            out.append(f"{gutter} | {excerpt}")
            out.append(f"{' ' * len(gutter)} | {prefix}{'^' * width}")
        if d.help:
            out.append(f"  = help: {d.help}")
        out.append("")
    return "\n".join(out) + ("\n" if out else "")
