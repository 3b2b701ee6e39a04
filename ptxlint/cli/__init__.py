"""Command line: `ptxlint [OPTIONS] FILE...` (`-` reads standard input), and
`ptxlint lsp` for the language server.

Exit status: 0 when nothing at warning or above is shown (or `--exit-zero`), 1 when
something is, 2 for a usage error or a file that cannot be read, parsed, configured or
analysed (those are still reported, as `parse-error`, `config-error`, `launch-config`
or `internal-error` errors; one file's failure never stops the others).
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import os
import signal
import stat
import sys
import tempfile
import threading
import time

from .. import __version__
from ..diagnostics import Severity
from ..workers import children, end_children

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
SEVERITIES = {str(s): s for s in Severity}
PROGRESS_MIN_FILES = 4


class _Version(argparse.Action):
    """--version: the version, with nothing else imported (it must answer at once)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"ptxlint {__version__}")
        parser.exit()


class UsageError(Exception):
    """A bad option or value: reported on stderr, exit status 2."""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread like KeyboardInterrupt for SIGINT: not an
    Exception, so no per-file handler turns it into a diagnostic and goes on."""


def _arch(name: str) -> str:
    """An architecture ptxlint has figures for (`arch.get`), else a usage error."""
    from ..arch import get  # noqa: PLC0415

    try:
        get(name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name


# ---------------------------------------------------------------- option values
# Every number is checked here, so a bad one is a usage error naming the option and
# the value before any file is read. Whole numbers are decimal or 0x hex; `config.dims`
# says where `x` separates dimensions.
def _checked(read: str, text: str, ok=None, wanted: str = ""):
    """`config.<read>(text)`, and `ok(value)` when given, else ArgumentTypeError."""
    from .. import config  # noqa: PLC0415  (the analysis: not needed for --version)

    try:
        value = getattr(config, read)(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if ok is not None and not ok(value):
        raise argparse.ArgumentTypeError(f"expected {wanted}, got '{text}'")
    return value


def _seconds(text: str) -> float:
    return _checked("finite", text, lambda v: v > 0, "a finite number of seconds above 0")


def _bytes(text: str) -> int:
    return _checked("whole", text, lambda v: v >= 0, "a byte count of 0 or more")


def _dims(text: str) -> tuple[int, int, int]:
    return _checked("dims", text)


def _jobs(text: str) -> int:
    return _checked("whole", text, lambda v: v >= 0, "0 (one per CPU) or more")


def _pair(text: str, read: str, ok=None, wanted: str = "") -> tuple:
    """NAME_OR_INDEX=VALUE -> (name or index, value)."""
    from ..config import param_key  # noqa: PLC0415

    key, eq, value = (part.strip() for part in text.partition("="))
    if not eq or not key or not value:
        raise argparse.ArgumentTypeError(f"expected NAME_OR_INDEX=VALUE, got '{text}'")
    try:
        return param_key(key), _checked(read, value, ok, wanted)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{key}: {exc}") from None


def _param(text: str) -> tuple:
    return _pair(text, "number")


def _extent(text: str) -> tuple:
    return _pair(text, "whole", lambda v: v >= 0, "a byte count of 0 or more")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ptxlint", description="Static analyser for NVIDIA PTX.",
        epilog="'ptxlint lsp' starts the language server (stdio). Settings also come from "
               "[tool.ptxlint] in pyproject.toml or ptxlint.toml; options override them.")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="PTX files or directories ('-' reads standard input)")
    p.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                   help="lint the .ptx files git ignores too, in the directories given "
                        "(by default they are skipped, as `git check-ignore` says)")
    p.add_argument("--stdin-filename", metavar="PATH",
                   help="the name of the file read from standard input: shown wherever a "
                        "path is, and where its configuration is looked up from (with no "
                        "FILE, standard input is read)")
    a = p.add_argument_group("analysis")
    a.add_argument("--arch", metavar="sm_XX", type=_arch,
                   help="target architecture (default: .target)")
    a.add_argument("--kernel", action="append", default=[], metavar="NAME",
                   help="analyse only this entry: its PTX name, its demangled name (with "
                        "or without the parameter list) or an fnmatch pattern of either "
                        "(repeatable)")
    a.add_argument("--enable", "--select", action="append", default=[], metavar="RULE",
                   help="run only these rules: ids or fnmatch patterns like 'bank-*' "
                        "(repeatable, or comma-separated)")
    a.add_argument("--disable", "--ignore", action="append", default=[], metavar="RULE",
                   help="do not run these rules (ids or patterns; repeatable, or "
                        "comma-separated)")
    a.add_argument("--time-budget", type=_seconds, metavar="SECONDS",
                   help="analysis time per kernel before giving up on it: a finite "
                        "number above 0 (default 5)")
    a.add_argument("--parse-only", action="store_true",
                   help="check syntax only: report parse errors and unmodelled instructions")
    launch = p.add_argument_group(
        "launch configuration (for every kernel analysed; over the file's own "
        "'// ptxlint: launch' comment)")
    launch.add_argument("--block", type=_dims, metavar="X[,Y[,Z]]",
                        help="block shape: 1 to 3 positive numbers, decimal or 0x hex "
                             "(32,8 or 0x20,8); 32x8 is short for 32,8 (x separates "
                             "decimal numbers only)")
    launch.add_argument("--grid", type=_dims, metavar="X[,Y[,Z]]",
                        help="grid shape, written as --block")
    launch.add_argument("--dynamic-smem", type=_bytes, metavar="BYTES",
                        help="dynamic shared memory: a whole number, decimal or 0x hex")
    launch.add_argument("--param", type=_param, action="append", default=[],
                        metavar="NAME_OR_INDEX=VALUE",
                        help="a parameter's value (repeatable), by 0-based index or by "
                             "name where the PTX names it (hand-written PTX, nvcc -G), given "
                             "to the kernels that have it: a whole number (decimal or 0x "
                             "hex) or a float (inf and nan too)")
    launch.add_argument("--extent", type=_extent, action="append", default=[],
                        metavar="NAME_OR_INDEX=BYTES",
                        help="size of the buffer a pointer parameter points to, decimal "
                             "or 0x hex (repeatable)")
    out = p.add_argument_group("output")
    out.add_argument("--format", choices=("text", "gcc", "json", "sarif", "github", "html"),
                     help="report format (default text): github prints GitHub Actions "
                          "workflow commands (annotations), html one self-contained page")
    out.add_argument("--output", "-o", metavar="FILE",
                     help="write the report to FILE (replaced only once the whole report "
                          "is written; never one of the input files)")
    out.add_argument("--severity", choices=tuple(SEVERITIES),
                     help="minimum severity shown (default: warning for text, gcc, github "
                          "and html, whose summary counts the notes hidden; note for json "
                          "and sarif)")
    out.add_argument("--statistics", action="store_true",
                     help="print how many findings each rule made instead of the findings "
                          "(text or json)")
    out.add_argument("--exit-zero", action="store_true",
                     help="exit with 0 even when findings are shown (2 still reports a "
                          "file that could not be checked)")
    out.add_argument("--no-color", action="store_true", help="no colour (also: NO_COLOR=1)")
    out.add_argument("-j", "--jobs", type=_jobs, default=1, metavar="N",
                     help="analyse N files (or one file's kernels) in parallel processes "
                          "(0: one per CPU; never more than one per CPU)")
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
    restore, spare = _terminate_on_sigterm(), children()
    try:
        args = parser.parse_args(argv)
        return _run(parser, args)
    except SystemExit as exc:  # argparse: usage errors, --help, --version
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    except UsageError as exc:
        print(f"ptxlint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except (KeyboardInterrupt, Terminated) as exc:
        end_children(spare)
        sigterm = isinstance(exc, Terminated)
        print(f"ptxlint: {'terminated' if sigterm else 'interrupted'}", file=sys.stderr)
        return 128 + (signal.SIGTERM if sigterm else signal.SIGINT)
    except BrokenPipeError:  # `ptxlint ... | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001  (never a traceback)
        if os.environ.get("PTXLINT_DEBUG"):
            raise
        print(f"ptxlint: internal error: {type(exc).__name__}: {exc} "
              "(PTXLINT_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_ERROR
    finally:
        restore()


def _terminate_on_sigterm():
    """SIGTERM raises `Terminated` in the main thread until the returned function puts
    the old handler back. By default SIGTERM ends this process at once and its worker
    processes, blocked on a queue nobody will write, never end."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # only the main thread may set handlers

    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second one is not delayed
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    return lambda: signal.signal(signal.SIGTERM, previous)


def console_main() -> None:
    """The `ptxlint` command (and `python -m ptxlint`): `main`, then, for a lint, exit
    without tearing the interpreter down. Everything a run built is still alive then;
    freeing it object by object, and the collection the interpreter makes on the way
    out, took longer than the report (0.4-0.8 s on the CUB corpus). The output is
    flushed first; files the run wrote are closed already, its worker processes
    joined."""
    argv = sys.argv[1:]
    ends_here = argv[:1] not in (["lsp"], ["run"])
    if ends_here:
        # Nothing the run makes outlives it, so the collector stays off to the end: turned
        # back on after the run, its first collection scanned every object the run made
        # (0.15-0.3 s on the CUB corpus) to free memory `os._exit` frees anyway. A run of
        # many files still collects between them (`run.COLLECT_AFTER_BYTES`).
        gc.disable()
    code = main(argv)
    if not ends_here:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # `ptxlint ... | head`
        code = code or EXIT_ERROR
    os._exit(code)


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from ..gcpause import collector_paused  # noqa: PLC0415
    from . import run  # noqa: PLC0415  (the analysis: not needed for --version)

    if args.list_rules:
        print(run.list_rules(args.format or "text"), end="")
        return EXIT_OK
    if args.explain:
        print(run.explain(args.explain), end="")
        return EXIT_OK
    if args.stdin_filename is not None:
        if not args.stdin_filename.strip() or args.stdin_filename == "-":
            parser.error("--stdin-filename needs the name of a file")
        if not args.files:
            args.files = ["-"]
        elif "-" not in args.files:
            parser.error("--stdin-filename names standard input: give '-' among the files "
                         "(or no file at all)")
    if not args.files:
        parser.error("no files given (use '-' to read standard input)")
    cpus = os.cpu_count() or 1
    workers = min(args.jobs or cpus, cpus)  # more processes than CPUs only cost memory
    started = time.perf_counter()
    with collector_paused():  # for the whole run (`run.COLLECT_AFTER_BYTES`)
        jobs = run.make_jobs(args)
        if args.output:
            _refuse_input_as_output(args.output, jobs)
        results = run.run_jobs(jobs, workers, progress=_progress_wanted(args, len(jobs)))
        outcome = run.report(args, jobs, results, time.perf_counter() - started)
    if outcome.text is not None:
        if args.output:
            write_atomically(args.output, outcome.text)
        else:
            _print(outcome.text)
    for message in outcome.errors:
        print(f"ptxlint: error: {message}", file=sys.stderr)
    return outcome.exit_code


def _refuse_input_as_output(output: str, jobs) -> None:
    """The report would replace a file it reports on."""
    for job in jobs:
        try:
            same = job.file is not None and os.path.samefile(output, job.file)
        except (OSError, ValueError):  # either does not exist: not the same file
            continue
        if same:
            raise UsageError(f"--output {output} is one of the input files")


def _print(text: str) -> None:
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:  # a character the terminal's encoding lacks
        encoding = sys.stdout.encoding or "utf-8"
        sys.stdout.write(text.encode(encoding, "replace").decode(encoding))


def write_atomically(path: str, text: str) -> None:
    """The whole report to a temporary file beside `path`, then renamed over it: a run
    that fails leaves the old file whole, never truncated or half written. A path that
    is not a regular file (`/dev/stdout`, a FIFO) is written in place instead: renaming
    over it would replace the device."""
    data = text.encode("utf-8", "replace")  # a lone surrogate becomes '?', never an error
    target = os.path.realpath(path)  # through a symlink: the link stays, its file changes
    try:
        try:
            mode = os.stat(target).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            with open(target, "wb") as f:
                f.write(data)
            return
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(target),
                                         prefix=f".{os.path.basename(target)}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            # mkstemp makes it 0600: keep the old file's mode, or the usual new one's
            os.chmod(temporary, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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
