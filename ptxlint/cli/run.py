"""The command line's work: one job per file (its text, its configuration), run in
order or in worker processes, then one report for all of them. Results keep the input
order whatever finishes first, so `-j N` prints exactly what `-j 1` prints."""
from __future__ import annotations

import argparse
import errno
import gc
import json
import os
import stat
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from .. import config
from ..diagnostics import Diagnostic, Severity
from ..ir.build import PARSE_ERROR
from ..launch import LaunchConfig
from ..lint import LintOptions
from ..report import CONFIG_ERROR, INTERNAL_ERROR, catalog, internal_error, rule_info
from ..suppress import MAX_CUDA_BYTES
from ..suppress import cuda_path as cuda_path
from ..workers import worker_pool
from . import UsageError

STDIN = "<stdin>"
FAILURES = frozenset({PARSE_ERROR, "launch-config", CONFIG_ERROR, INTERNAL_ERROR})
# the minimum severity shown when neither --severity nor the configuration says: the
# formats people read show warnings and errors (their summary counts the notes hidden),
# the formats tools read keep everything
DEFAULT_MINIMUM = {"text": Severity.WARNING, "gcc": Severity.WARNING,
                   "github": Severity.WARNING, "html": Severity.WARNING,
                   "json": Severity.NOTE, "sarif": Severity.NOTE}
STATISTICS_FORMATS = ("text", "json")


@dataclass
class Job:
    path: str  # as reports show it
    file: str | None  # where to read it; None: `text` is standard input
    text: str | None = None
    options: LintOptions | None = None  # None: `failure` says why it is not analysed
    parse_only: bool = False
    minimum: Severity | None = None  # None: the format's default (`DEFAULT_MINIMUM`)
    failure: Diagnostic | None = None
    kernel_jobs: int = 1  # processes sharing this file's kernels (`lint_text`'s `jobs`)


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic]
    text: str | None = None
    entries: tuple[str, ...] = field(default=())


# ---------------------------------------------------------------- jobs
def make_jobs(args: argparse.Namespace) -> list[Job]:
    overrides = config.Overrides(
        arch=args.arch, enable=_rules(args.enable) or None, disable=_rules(args.disable),
        time_budget=args.time_budget,
        kernels=tuple(args.kernel), launch=launch_from_args(args))
    stdin = sys.stdin.read() if "-" in args.files else None
    # `--stdin-filename`: the name standard input is shown under, in every format,
    # and where its configuration is looked up from (as for a file of that name)
    named = getattr(args, "stdin_filename", None)
    jobs = []
    settings: dict[str, tuple] = {}  # directory -> (options, minimum) or (None, failure)
    for path in expand(args.files, getattr(args, "respect_gitignore", True)):
        shown = (named or STDIN) if path == "-" else path
        job = Job(shown, None if path == "-" else path,
                  stdin if path == "-" else None, parse_only=args.parse_only)
        lookup = named if path == "-" and named else path
        directory = os.getcwd() if lookup == "-" else os.path.dirname(os.path.abspath(lookup))
        if directory not in settings:
            settings[directory] = _settings(lookup, overrides, args.severity)
        options, extra = settings[directory]
        if options is None:
            job.failure = extra
        else:
            job.options, job.minimum = options, extra
        jobs.append(job)
    return jobs


def _settings(path: str, overrides: config.Overrides, severity: str | None) -> tuple:
    """(options, minimum severity or None for the format's default) for files in
    `path`'s directory, or (None, the config-error diagnostic)."""
    try:
        cfg = config.for_file(path)
    except config.ConfigError as exc:
        return None, config_error(exc)
    minimum = Severity[severity.upper()] if severity else cfg.severity
    return config.options(cfg, overrides), minimum


def expand(paths: Iterable[str], respect_gitignore: bool = True) -> Iterator[str]:
    """Files as given; a directory stands for the `.ptx` files under it, special files
    too (a FIFO, a device): they are reported as unreadable, not skipped in silence.
    Under a directory, the files git ignores are left out (`respect_gitignore`); a
    file named on the command line is always linted."""
    for path in paths:
        if path != "-" and os.path.isdir(path):
            found = sorted(str(p) for p in Path(path).rglob("*.ptx")
                           if p.exists() and not p.is_dir())
            ignored = git_ignored(path, found) if respect_gitignore else set()
            yield from (f for f in found if f not in ignored)
        else:
            yield path


def git_ignored(directory: str, files: list[str]) -> set[str]:
    """The `files` (under `directory`) git ignores, as `git check-ignore` says; none
    outside a git work tree, or without git. A file git tracks is not ignored, even if
    a pattern matches it (as git sees it)."""
    if not files:
        return set()
    try:
        done = subprocess.run(
            ["git", "-C", directory, "check-ignore", "--stdin", "-z"],
            input=b"".join(os.fsencode(os.path.relpath(f, directory)) + b"\0" for f in files),
            capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):  # no git, or it hung
        return set()
    if done.returncode not in (0, 1):  # 1: none ignored; 128: not in a work tree
        return set()
    named = {os.path.normpath(os.path.join(directory, os.fsdecode(n)))
             for n in done.stdout.split(b"\0") if n}
    return {f for f in files if os.path.normpath(f) in named}


def launch_from_args(args: argparse.Namespace) -> LaunchConfig | None:
    """The launch options, each already a checked number (`cli._dims` and the others);
    here only what needs them together (1024 threads a block at most)."""
    given = (args.block, args.grid, args.dynamic_smem)
    if all(v is None for v in given) and not args.param and not args.extent:
        return None
    try:
        return LaunchConfig(block=args.block, grid=args.grid, dynamic_smem=args.dynamic_smem,
                            params=dict(args.param), extents=dict(args.extent))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _rules(values: list[str]) -> tuple[str, ...]:
    """Rule ids, old names or fnmatch patterns (`bank-*`), each naming some rule."""
    names = tuple(r.strip() for v in values for r in v.split(",") if r.strip())
    bad = config.unknown_rules(names)
    if bad:
        what = "no rule matches" if config.is_pattern(bad[0]) else "unknown rule"
        raise UsageError(f"{what} '{bad[0]}' (see --list-rules)")
    return names


def config_error(exc: config.ConfigError) -> Diagnostic:
    from ..source import Span  # noqa: PLC0415

    span = Span(0, 0, exc.line, 1, exc.line, 1) if exc.line else None
    return Diagnostic(CONFIG_ERROR, Severity.ERROR, exc.message, str(exc.path), span)


# ---------------------------------------------------------------- the collector
# What a run builds lives until the run ends, or nearly: each file's parsed module until
# its findings are made, the analyses' interned values and the findings to the report.
# The cyclic collector would scan all of it again and again, to free next to nothing:
# the lint makes few reference cycles, the one big one being a parsed module once its
# file is done. On the CUB corpus that scanning was a sixth of the command's time
# (docs/analysis.md, "Cost"). So a run pauses the collector (`gcpause.collector_paused`) and
# collects only when the modules of the files done since the last collection may hold
# enough memory to matter (`COLLECT_AFTER_BYTES` of PTX: a module takes about ten
# times its text).
COLLECT_AFTER_BYTES = 8 << 20
_uncollected_bytes = 0  # PTX linted since the last collection, in this process


def _collect_before(size: int) -> None:
    """Before a file of `size` bytes: collect the modules of the files done, once they
    add up to COLLECT_AFTER_BYTES (with the collector paused only)."""
    global _uncollected_bytes
    if _uncollected_bytes >= COLLECT_AFTER_BYTES and not gc.isenabled():
        gc.collect()
        _uncollected_bytes = 0
    _uncollected_bytes += size


# ---------------------------------------------------------------- running
def lint_job(job: Job) -> FileResult:
    """One file, never raising: failures become diagnostics on it (a MemoryError too),
    so the other files are reported with -j 1 as they are with -j N."""
    if job.failure is not None:
        return FileResult(job.path, [job.failure])
    try:
        text = (job.text if job.file is None else _read(job.file)) or ""
    except Exception as exc:  # noqa: BLE001
        return FileResult(job.path, [cannot_read(job.path, exc)])
    try:
        _collect_before(len(text))
        return _lint(job, text)
    except Exception as exc:  # noqa: BLE001  (reported, never a traceback)
        if os.environ.get("PTXLINT_DEBUG"):
            raise
        return FileResult(job.path, [internal_error(job.path, exc)], text)


SPECIAL_FILES = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                 (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                 (stat.S_ISSOCK, "a socket"))


def _read(path: str) -> str:
    """A regular file's text. Anything else is refused before a byte is read: a FIFO
    blocks until a writer comes, /dev/zero never ends. Opened without blocking (a
    FIFO's open waits for a writer too) and checked on the open file, so nothing can
    swap it in between."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in SPECIAL_FILES if test(mode)), "special")
            raise OSError(errno.EINVAL, f"not a regular file ({kind})")
        f = open(fd, encoding="utf-8", errors="replace", closefd=True)
    except BaseException:
        os.close(fd)
        raise
    with f:
        return f.read()


def cannot_read(path: str, exc: BaseException) -> Diagnostic:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else \
        "out of memory" if isinstance(exc, MemoryError) else f"{type(exc).__name__}: {exc}"
    return Diagnostic(PARSE_ERROR, Severity.ERROR, f"cannot read file: {reason}", path, None)


def _lint(job: Job, text: str) -> FileResult:
    if job.parse_only:
        from ..ir.build import parse_module  # noqa: PLC0415
        from ..rules import unmodelled  # noqa: PLC0415

        parsed = parse_module(text, job.path)
        diagnostics = list(parsed.diagnostics)
        if parsed.ok:
            diagnostics.extend(unmodelled.check(parsed.module))
        module = parsed.module
    else:
        from ..lint import lint_text  # noqa: PLC0415

        report = lint_text(text, job.path, job.options, job.kernel_jobs)
        return FileResult(job.path, report.grouped, text, report.entries)
    entries = tuple(f.name for f in module.entries) if module is not None else ()
    return FileResult(job.path, diagnostics, text, entries)


def run_jobs(jobs: list[Job], workers: int, progress: bool = False) -> list[FileResult]:
    """Files in `workers` processes; one file's kernels, when it is the only one."""
    if len(jobs) == 1:
        jobs[0].kernel_jobs = workers
    workers = min(workers, len(jobs))
    if workers <= 1:
        return _collect(map(lint_job, jobs), jobs, progress)
    # Ctrl-C, SIGTERM (`cli.Terminated`): the pool's workers go at once (`workers.py`)
    with worker_pool(workers) as pool:
        # workers fork here, before any progress thread starts
        futures = [pool.submit(lint_job, job) for job in jobs]
        return _collect((_outcome(f, j) for f, j in zip(futures, jobs)), jobs, progress)


def _outcome(future: Future, job: Job) -> FileResult:
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001  (a worker died or a result did not pickle)
        return FileResult(job.path, [internal_error(job.path, exc)])


def _collect(results: Iterable[FileResult], jobs: list[Job], progress: bool) -> list[FileResult]:
    if not progress:
        return list(results)
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, \
        TimeElapsedColumn  # noqa: PLC0415

    out: list[FileResult] = []
    columns = (TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.description}"))
    with Progress(*columns, console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task(jobs[0].path, total=len(jobs))
        for i, result in enumerate(results):
            out.append(result)
            bar.update(task, advance=1, description=jobs[min(i + 1, len(jobs) - 1)].path)
    return out


# ---------------------------------------------------------------- the report
@dataclass
class Outcome:
    text: str | None  # None: already printed on the terminal
    errors: list[str]
    exit_code: int


def failure(d: Diagnostic) -> bool:
    """A file that could not be checked: always shown, exit status 2."""
    return d.rule in FAILURES and d.severity is Severity.ERROR


def report(args: argparse.Namespace, jobs: list[Job], results: list[FileResult],
           seconds: float) -> Outcome:
    fmt = args.format or _configured_format(jobs) or "text"
    statistics = getattr(args, "statistics", False)
    if statistics and fmt not in STATISTICS_FORMATS:
        raise UsageError(f"--statistics prints text or json, not {fmt}")
    shown: list[Diagnostic] = []
    hidden: Counter = Counter()
    seen = set()
    for job, result in zip(jobs, results):
        minimum = job.minimum if job.minimum is not None else DEFAULT_MINIMUM[fmt]
        for d in result.diagnostics:
            key = (d.rule, d.file, d.line, d.column, d.message)
            if key in seen:  # a broken configuration is reported once, not per file
                continue
            seen.add(key)
            if d.severity >= minimum or failure(d):
                shown.append(d)
            else:
                hidden[d.severity] += 1
    if statistics:
        text = render_statistics(fmt, shown)
    else:
        text = render(fmt, shown, results, len(jobs), seconds, hidden, args)
    code = 2 if any(failure(d) for d in shown) else \
        1 if any(d.severity >= Severity.WARNING for d in shown) else 0
    if code == 1 and getattr(args, "exit_zero", False):
        code = 0
    errors = []
    if args.kernel and not _kernel_matched(args.kernel, results):
        errors.append(f"no kernel matches --kernel {' '.join(args.kernel)}")
        code = 2
    return Outcome(text, errors, code)


def _configured_format(jobs: list[Job]) -> str | None:
    try:
        here = config.for_file(os.getcwd())
    except config.ConfigError:
        here = config.Config()
    if here.format:
        return here.format
    # a file read, or the name standard input was given (`--stdin-filename`)
    first = next((j.file or j.path for j in jobs if j.file or j.path != STDIN), None)
    try:
        return config.for_file(first).format if first else None
    except config.ConfigError:
        return None


def _kernel_matched(patterns: list[str], results: list[FileResult]) -> bool:
    from ..demangle import matches  # noqa: PLC0415

    parsed = [r for r in results if r.entries]
    return not parsed or any(matches(e, k) for r in parsed for e in r.entries
                             for k in patterns)


def render_statistics(fmt: str, shown: list[Diagnostic]) -> str:
    """`--statistics`: per rule and severity, how many findings (and instructions)."""
    counts: Counter = Counter()
    instructions: Counter = Counter()
    for d in shown:
        counts[d.rule, d.severity] += 1
        instructions[d.rule, d.severity] += d.count
    order = sorted(counts, key=lambda k: (-counts[k], k[0], -k[1]))
    if fmt == "json":
        return json.dumps([{"rule": rule, "severity": str(severity), "count": counts[rule, severity],
                            "instructions": instructions[rule, severity]}
                           for rule, severity in order], indent=2) + "\n"
    if not order:
        return "no findings\n"
    width = max(len(rule) for rule, _ in order)
    lines = []
    for rule, severity in order:
        n, on = counts[rule, severity], instructions[rule, severity]
        extra = f"  (on {on} instructions)" if on != n else ""
        lines.append(f"{n:>6}  {rule:<{width}}  {severity!s:<7}{extra}".rstrip())
    return "\n".join(lines) + "\n"


def render(fmt: str, shown: list[Diagnostic], results: list[FileResult], files: int,
           seconds: float, hidden: Counter, args: argparse.Namespace) -> str | None:
    """The report as text, or None when it was printed to the terminal directly."""
    if fmt == "gcc":
        from ..report import gcc  # noqa: PLC0415

        return gcc.render(shown)
    if fmt == "json":
        from ..report import json as json_report  # noqa: PLC0415

        return json_report.render(shown)
    if fmt == "github":
        from ..report import github  # noqa: PLC0415

        return github.render(shown, root=os.getcwd())
    sources: dict[str, str] = {r.path: r.text for r in results if r.text is not None}
    sources.update(cuda_sources(shown, {r.path for r in results}))
    if fmt == "sarif":
        from ..report import links, sarif  # noqa: PLC0415

        return sarif.render(shown, catalog(), root=os.getcwd(), docs_base=links.rules_base(),
                            information_uri=links.homepage(), sources=sources)
    from ..report import text  # noqa: PLC0415

    summary = text.Summary(files, seconds, hidden)
    if fmt == "html":
        from ..report import html, links  # noqa: PLC0415

        return html.render(shown, sources, summary, docs_base=links.rules_base())
    from rich.console import Console  # noqa: PLC0415

    plain = args.no_color or bool(os.environ.get("NO_COLOR"))
    if args.output:
        return text.render(shown, sources, summary)
    console = Console(file=sys.stdout, color_system=None if plain else "auto",
                      highlight=False, emoji=False)
    text.write(console, shown, sources, summary)
    return None


def cuda_sources(diagnostics: Iterable[Diagnostic], skip: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for d in diagnostics:
        if d.cuda is None or d.cuda.file in out or d.cuda.file in skip:
            continue
        found = cuda_path(d.cuda, d.file)
        try:
            if found is not None and found.stat().st_size <= MAX_CUDA_BYTES:
                out[d.cuda.file] = found.read_text(encoding="utf-8", errors="replace")
        except OSError:
            pass
    return out


# ---------------------------------------------------------------- information
def list_rules(fmt: str) -> str:
    rules = catalog()
    if fmt == "json":
        return json.dumps([{"id": r.id, "name": r.name, "severity": str(r.severity),
                            "stage": r.stage, "summary": r.summary, "doc": r.doc_path}
                           for r in rules], indent=2) + "\n"
    width = max(len(r.id) for r in rules)
    return "".join(f"{r.id:<{width}}  {str(r.severity):<7}  {r.stage:<8}  {r.summary}\n"
                   for r in rules)


def explain(rule_id: str) -> str:
    info = rule_info(rule_id)
    if info is None:
        raise UsageError(f"unknown rule '{rule_id}' (see --list-rules)")
    return f"{info.id} ({info.severity}, {info.stage})\n\n{info.doc}\n"


__all__ = ["Job", "FileResult", "make_jobs", "run_jobs", "lint_job", "report", "list_rules",
           "explain", "cuda_path", "cuda_sources", "internal_error", "cannot_read", "Outcome"]
