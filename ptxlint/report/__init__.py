"""Reporters: pure functions from diagnostics (and the source texts the front end read)
to text. `catalog()` lists every id a diagnostic can carry, the registered rules and
the diagnostics the tool itself emits, for `--list-rules`, `--explain`, SARIF rule
metadata and the LSP's links to rule docs."""
from __future__ import annotations

import inspect
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..demangle import demangle
from ..diagnostics import Diagnostic, Severity

INTERNAL_ERROR = "internal-error"
CONFIG_ERROR = "config-error"
DOCS_DIR = "docs/rules"


def internal_error(path: str, exc: BaseException) -> Diagnostic:
    """The finding a front end reports for a file whose lint raised `exc` (the CLI's
    workers, the language server): where it happened, never a traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    return Diagnostic(INTERNAL_ERROR, Severity.ERROR,
                      f"internal error: {type(exc).__name__}: {exc}", path, None,
                      help="please report this with the file; PTXLINT_DEBUG=1 shows "
                           "the traceback",
                      details={"exception": type(exc).__name__, "where": where})


@dataclass(frozen=True)
class RuleInfo:
    id: str
    name: str  # PascalCase, for SARIF's `name`
    severity: Severity  # the default severity
    stage: str  # "stable", "preview", ... or "built-in"
    summary: str
    doc: str

    @property
    def doc_path(self) -> str:
        """The rule's page relative to the repository root."""
        return f"{DOCS_DIR}/{self.id}.md"


_BUILTIN = {
    "parse-error": (Severity.ERROR, """\
        The file is not valid PTX, or cannot be read.

        ## What it does
        Reports the first problem of each statement the parser rejects (syntax, an
        undeclared register or label, an unbalanced brace) with its line and column.
        The rest of the file is still parsed, but no rule runs on a file that does not
        parse, and the exit status is 2."""),
    "launch-config": (Severity.ERROR, """\
        The launch configuration does not fit the kernel.

        ## What it does
        Reports a `--param`/`--extent` naming a parameter no kernel of the file has, a
        value that does not fit the parameter's type, a buffer size given to a
        parameter that cannot be a pointer, or a malformed `// ptxlint: launch`
        comment. The kernel is not analysed; the exit status is 2.

        A parameter that another kernel of the same file has is only given to the
        kernels that have it: each of the others gets a note (not an error) saying
        which values it was analysed without."""),
    CONFIG_ERROR: (Severity.ERROR, """\
        The configuration file (`[tool.ptxlint]`) is invalid.

        ## What it does
        Reports TOML syntax errors, unknown keys and values of the wrong type in the
        `pyproject.toml` or `ptxlint.toml` that governs a file. The files it governs
        are not analysed; the exit status is 2."""),
    INTERNAL_ERROR: (Severity.ERROR, """\
        ptxlint failed on this file.

        ## What it does
        An unexpected exception in the analyser is reported as a diagnostic on the
        file (the other files are still analysed) and the exit status is 2. Please
        report it with the file; `PTXLINT_DEBUG=1` shows the traceback."""),
    "analysis-incomplete": (Severity.NOTE, """\
        The work on a kernel stopped at its time budget.

        ## What it does
        The budget (`--time-budget`, default 5 s a kernel) covers every phase: the
        pre-passes, the fixpoint, each rule and the re-analyses and emulated replays
        rules ask for. The note names the phase it stopped in. Stopped before the
        fixpoint finished, no finding is reported for the kernel; stopped in a rule, the
        findings already made stay and the note lists the rules that may miss some.
        Raise `--time-budget` (or `time-budget` in the configuration) to check it fully."""),
    "unknown-target": (Severity.NOTE, """\
        The module's `.target` is an architecture ptxlint has no hardware figures for.

        ## What it does
        A newer GPU than this version of ptxlint knows: the shared-memory size and the
        other figures of the default architecture (sm_90, `docs/arch.md`) are used, and
        the findings that depend on them (out-of-bounds on dynamic shared memory) may
        not hold for the real GPU. Give a known architecture with `--arch`."""),
    "unused-suppression": (Severity.NOTE, """\
        A `// ptxlint: disable=RULE` comment that suppresses nothing.

        ## What it does
        Reports each rule of a suppression comment in the PTX file that covered no
        finding of that rule (the code changed, or the rule got more precise), and names
        a rule id that does not exist. Not reported for a rule that did not run (not
        enabled, a kernel left out by `--kernel`, a time budget that ran out), nor for
        suppressions in a CUDA file (`docs/suppression.md`)."""),
    "unmodelled-instruction": (Severity.NOTE, """\
        An instruction whose semantics ptxlint does not model.

        ## What it does
        Its destinations are treated as unknown: the analysis stays sound, but the
        findings that depend on them may be less precise."""),
}


def hidden_summary(hidden: Mapping[Severity, int] | int) -> str | None:
    """`12 notes hidden: --severity note shows them` (an int counts notes)."""
    counts = {Severity.NOTE: hidden} if isinstance(hidden, int) else dict(hidden)
    parts = [f"{n} {s}{'s' if n != 1 else ''}" for s, n in
             sorted(counts.items(), reverse=True) if n]
    if not parts:
        return None
    return " and ".join(parts) + " hidden: --severity note shows them"


def other_instances(d: Diagnostic, limit: int | None = None) -> str:
    """The group's other instructions: `also at 106:22, 111:22; in scale<double>(double*):
    140:9`, a position's own message in parentheses where it differs from the first's;
    past `limit` positions, `and N more`."""
    first, *rest = d.expanded()
    shown = rest if limit is None else rest[:limit]
    parts: list[str] = []
    kernel = first.kernel
    for other in shown:
        where = f"{other.line}:{other.column}"
        if other.message != first.message:
            where += f" ({other.message})"
        if other.kernel != kernel and other.kernel:
            kernel = other.kernel
            parts.append(f"; in {demangle(kernel)}: {where}")
        else:
            parts.append(f", {where}" if parts else where)
    if len(rest) > len(shown):
        parts.append(f", and {len(rest) - len(shown)} more")
    text = "".join(parts)
    return "also " + (text.removeprefix("; ") if text.startswith("; ") else "at " + text)


def path_bytes(path: str) -> bytes:
    """A path's bytes as the file system has them: Python keeps a name's bytes that
    are not UTF-8 as lone surrogates (`os.fsdecode`), which no encoder writes."""
    try:
        return path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no file name made (an editor's URI)
        return path.encode("utf-8", "replace")


def shown_path(path: str) -> str:
    """A path as reports print it: each byte that is not UTF-8 becomes U+FFFD."""
    return path if path.isascii() else path_bytes(path).decode("utf-8", "replace")


def pascal_name(rule_id: str) -> str:
    return "".join(part.capitalize() for part in rule_id.split("-"))


def catalog() -> list[RuleInfo]:
    """Every rule, registered and built in, sorted by id."""
    from ..rules.base import load_rules  # noqa: PLC0415  (imports every rule: not at startup)

    out = {rule_id: RuleInfo(rule_id, cls.__name__, cls.severity, cls.stage,
                             cls.summary(), cls.doc())
           for rule_id, cls in load_rules().items()}
    for rule_id, (severity, doc) in _BUILTIN.items():
        if rule_id not in out:
            text = inspect.cleandoc(doc)
            out[rule_id] = RuleInfo(rule_id, pascal_name(rule_id), severity, "built-in",
                                    text.splitlines()[0], text)
    return [out[k] for k in sorted(out)]


def rule_info(rule_id: str) -> RuleInfo | None:
    """The entry for an id or one of its old names."""
    from ..rules.base import canonical  # noqa: PLC0415

    rules = catalog()  # fills the alias table
    wanted = canonical(rule_id)
    return next((r for r in rules if r.id == wanted), None)


__all__ = ["RuleInfo", "catalog", "rule_info", "pascal_name", "shown_path", "path_bytes",
           "hidden_summary", "other_instances",
           "INTERNAL_ERROR", "CONFIG_ERROR", "DOCS_DIR", "internal_error"]
