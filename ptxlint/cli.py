"""Command line: `ptxlint --parse-only [--format text|json] FILE...` (first cut)."""
from __future__ import annotations

import argparse
import sys

from . import __version__
from .diagnostics import Diagnostic, Severity
from .ir.build import PARSE_ERROR, parse_module
from .report import gcc, json as json_report, text
from .rules import unmodelled

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ptxlint", description="Static analyser for NVIDIA PTX.")
    p.add_argument("files", nargs="+", metavar="FILE", help="PTX files ('-' reads stdin)")
    p.add_argument("--parse-only", action="store_true",
                   help="check syntax only: report parse errors and unmodelled instructions")
    p.add_argument("--format", choices=("text", "gcc", "json"), default="text")
    p.add_argument("--version", action="version", version=f"ptxlint {__version__}")
    return p


def read_input(path: str) -> tuple[str | None, Diagnostic | None]:
    try:
        if path == "-":
            return sys.stdin.read(), None
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(), None
    except OSError as exc:
        return None, Diagnostic(PARSE_ERROR, Severity.ERROR,
                                f"cannot read file: {exc.strerror or exc}", path, None)


def lint_file(path: str) -> tuple[list[Diagnostic], bool, object | None]:
    """Diagnostics for one file, whether it parsed, and its SourceFile."""
    text, failure = read_input(path)
    if failure is not None:
        return [failure], False, None
    result = parse_module(text, "<stdin>" if path == "-" else path)
    diagnostics = list(result.diagnostics)
    if result.ok:
        diagnostics.extend(unmodelled.check(result.module))
    return diagnostics, result.ok, result.source


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not args.parse_only:
        print("ptxlint: only --parse-only is available in this version", file=sys.stderr)
        return EXIT_ERROR
    all_diagnostics: list[Diagnostic] = []
    sources = {}
    ok = True
    for path in args.files:
        diagnostics, parsed, source = lint_file(path)
        ok &= parsed
        all_diagnostics.extend(diagnostics)
        if source is not None:
            sources[source.path] = source
    if args.format == "json":
        sys.stdout.write(json_report.render(all_diagnostics))
    elif args.format == "gcc":
        sys.stdout.write(gcc.render(all_diagnostics))
    else:
        sys.stdout.write(text.render(all_diagnostics, sources))
    return EXIT_OK if ok else EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
