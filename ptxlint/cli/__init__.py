"""Command line: `ptxlint [OPTIONS] FILE...` (`-` reads standard input), and
`ptxlint lsp` for the language server.

Exit status: 0 when nothing at warning or above is shown, 1 when something is, 2 for
a usage error or a file that cannot be read, parsed, configured or analysed (those are
still reported, as `parse-error`, `config-error`, `launch-config` or `internal-error`
diagnostics; one file's failure never stops the others).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from .. import __version__
from ..diagnostics import Severity

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
SEVERITIES = {str(s): s for s in Severity}
PROGRESS_MIN_FILES = 4


class _Version(argparse.Action):
    """--version: the version and whether the hot modules run compiled (`_native`)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        from .. import _native  # noqa: PLC0415

        print(f"ptxlint {__version__} ({_native.describe()})")
        parser.exit()


class UsageError(Exception):
    """A bad option or value: reported on stderr, exit status 2."""


def _arch(name: str) -> str:
    """An architecture ptxlint has figures for (`arch.get`), else a usage error."""
    from ..arch import get  # noqa: PLC0415

    try:
        get(name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ptxlint", description="Static analyser for NVIDIA PTX.",
        epilog="'ptxlint lsp' starts the language server (stdio). Settings also come from "
               "[tool.ptxlint] in pyproject.toml or ptxlint.toml; options override them.")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="PTX files or directories ('-' reads standard input)")
    a = p.add_argument_group("analysis")
    a.add_argument("--arch", metavar="sm_XX", type=_arch,
                   help="target architecture (default: .target)")
    a.add_argument("--kernel", action="append", default=[], metavar="NAME",
                   help="analyse only this entry (a name or fnmatch pattern; repeatable)")
    a.add_argument("--enable", action="append", default=[], metavar="RULE",
                   help="run only these rules (repeatable, or comma-separated)")
    a.add_argument("--disable", action="append", default=[], metavar="RULE",
                   help="do not run this rule (repeatable, or comma-separated)")
    a.add_argument("--time-budget", type=float, metavar="SECONDS",
                   help="analysis time per kernel before giving up on it (default 5)")
    a.add_argument("--parse-only", action="store_true",
                   help="check syntax only: report parse errors and unmodelled instructions")
    launch = p.add_argument_group("launch configuration (for every kernel analysed)")
    launch.add_argument("--block", metavar="X[,Y[,Z]]", help="block shape")
    launch.add_argument("--grid", metavar="X[,Y[,Z]]", help="grid shape")
    launch.add_argument("--dynamic-smem", metavar="BYTES", help="dynamic shared memory")
    launch.add_argument("--param", action="append", default=[], metavar="NAME_OR_INDEX=VALUE",
                        help="a parameter's value (index 0-based; repeatable)")
    launch.add_argument("--extent", action="append", default=[], metavar="NAME_OR_INDEX=BYTES",
                        help="size of the buffer a pointer parameter points to (repeatable)")
    out = p.add_argument_group("output")
    out.add_argument("--format", choices=("text", "gcc", "json", "sarif"),
                     help="report format (default text)")
    out.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE")
    out.add_argument("--severity", choices=tuple(SEVERITIES),
                     help="minimum severity shown (default note)")
    out.add_argument("--no-color", action="store_true", help="no colour (also: NO_COLOR=1)")
    out.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                     help="analyse N files (or one file's kernels) in parallel processes "
                          "(0: one per CPU)")
    info = p.add_argument_group("information")
    info.add_argument("--version", action=_Version, help="show the version and exit")
    info.add_argument("--list-rules", action="store_true", help="list the rules and exit")
    info.add_argument("--explain", metavar="RULE", help="print a rule's documentation and exit")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["run"]:  # run a kernel on the emulator
        from .run_kernel import main as run_main  # noqa: PLC0415
        return run_main(argv[1:])
    if argv[:1] == ["lsp"]:
        from ..lsp import main as lsp_main  # noqa: PLC0415

        return lsp_main(argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return _run(parser, args)
    except SystemExit as exc:  # argparse: usage errors, --help, --version
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    except UsageError as exc:
        print(f"ptxlint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("ptxlint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `ptxlint ... | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001  (never a traceback)
        if os.environ.get("PTXLINT_DEBUG"):
            raise
        print(f"ptxlint: internal error: {type(exc).__name__}: {exc} "
              "(PTXLINT_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_ERROR


def console_main() -> None:
    """The `ptxlint` command (and `python -m ptxlint`): `main`, then, for a lint, exit
    without tearing the interpreter down. Everything a run built is still alive then;
    freeing it object by object, and the collection the interpreter makes on the way
    out, took longer than the report (0.4-0.8 s on the CUB corpus). The output is
    flushed first; files the run wrote are closed already, its worker processes
    joined."""
    argv = sys.argv[1:]
    code = main(argv)
    if argv[:1] in (["lsp"], ["run"]):
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # `ptxlint ... | head`
        code = code or EXIT_ERROR
    os._exit(code)


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from ..lint import collector_paused  # noqa: PLC0415
    from . import run  # noqa: PLC0415  (the analysis: not needed for --version)

    if args.list_rules:
        print(run.list_rules(args.format or "text"), end="")
        return EXIT_OK
    if args.explain:
        print(run.explain(args.explain), end="")
        return EXIT_OK
    if not args.files:
        parser.error("no files given (use '-' to read standard input)")
    if args.jobs < 0:
        parser.error("-j must be 0 (one per CPU) or more")
    started = time.perf_counter()
    with collector_paused():  # for the whole run (`run.COLLECT_AFTER_BYTES`)
        jobs = run.make_jobs(args)
        results = run.run_jobs(jobs, args.jobs or os.cpu_count() or 1,
                               progress=_progress_wanted(args, len(jobs)))
        outcome = run.report(args, jobs, results, time.perf_counter() - started)
    if outcome.text is not None:
        if args.output:
            _write_file(args.output, outcome.text)
        else:
            sys.stdout.write(outcome.text)
    for message in outcome.errors:
        print(f"ptxlint: error: {message}", file=sys.stderr)
    return outcome.exit_code


def _write_file(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _progress_wanted(args: argparse.Namespace, files: int) -> bool:
    """On a terminal only: not when the report (or stderr) is piped."""
    if files < PROGRESS_MIN_FILES or not _isatty(sys.stderr):
        return False
    return bool(args.output) or _isatty(sys.stdout)


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
