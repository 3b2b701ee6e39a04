"""Inline suppression, as linters do it (docs/suppression.md):

    ld.shared.f32 %f1, [%r4];   // ptxlint: disable=bank-conflict
    // ptxlint: disable=bank-conflict,uncoalesced-access     (the next line)
    // ptxlint: disable-file=uniform-branch                  (the whole file)

A comment after code covers its own line; a comment alone on its line covers the next
line that is not only a comment. Rule ids may be old names or fnmatch patterns
(`bank-*`). For nvcc output, the same comment in the CUDA source, on the line a
finding's `.loc` names or alone on the line above it, suppresses the finding on every
PTX instruction of that line; the CUDA file is read where the `.file` directive says
(or beside the PTX file, as the reports find it).

A suppression in the PTX file that suppresses nothing is an `unused-suppression` note
(not reported where the rule did not run: disabled, a kernel not selected, a kernel
whose time budget ran out). One in a CUDA file is not: the CUDA file may be compiled
into other PTX files too. The tool's own errors (a parse error, a bad configuration or
launch) are never suppressed.
"""
from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .diagnostics import CudaLocation, Diagnostic, Severity
from .source import SourceFile

UNUSED = "unused-suppression"
NEVER_SUPPRESSED = frozenset({"parse-error", "config-error", "internal-error"})
MAX_CUDA_BYTES = 4 << 20  # a larger CUDA file is neither quoted nor read for suppressions
_COMMENT = re.compile(r"//\s*ptxlint:\s*(disable|disable-file)\s*=\s*"
                      r"([\w*?\[\]!-]+(?:\s*,\s*[\w*?\[\]!-]+)*)")


@dataclass(frozen=True)
class Suppression:
    line: int  # of the comment
    start: int  # offsets of the comment in its text
    end: int
    rules: tuple[str, ...]
    covers: int | None  # the line it suppresses; None: the whole file


def parse(text: str) -> list[Suppression]:
    """The suppression comments of a PTX or CUDA text."""
    if "ptxlint:" not in text:
        return []
    out: list[Suppression] = []
    lines = text.split("\n")
    offset = 0
    for number, line in enumerate(lines, 1):
        m = _COMMENT.search(line)
        if m is not None:
            rules = tuple(r.strip() for r in m.group(2).split(","))
            if m.group(1) == "disable-file":
                covers = None
            elif line[:m.start()].strip():
                covers = number
            else:  # alone on its line: the next line with code
                covers = next((n for n in range(number + 1, len(lines) + 1)
                               if not _comment_only(lines[n - 1])), number + 1)
            out.append(Suppression(number, offset + m.start(), offset + len(line.rstrip()),
                                   rules, covers))
        offset += len(line) + 1
    return out


def _comment_only(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("//")


def _matches(rule: str, pattern: str, canonical: Callable[[str], str]) -> bool:
    return fnmatch.fnmatchcase(canonical(rule), canonical(pattern))


def suppressible(d: Diagnostic) -> bool:
    return d.rule not in NEVER_SUPPRESSED and not (d.rule == "launch-config"
                                                   and d.severity is Severity.ERROR)


def apply(diagnostics: list[Diagnostic], source: SourceFile, *,
          canonical: Callable[[str], str] = lambda r: r,
          known: Callable[[str], bool] = lambda r: True,
          unused_wanted: Callable[[str], bool] = lambda r: True) -> list[Diagnostic]:
    """The diagnostics less those a suppression covers, plus an `unused-suppression`
    note for each PTX suppression that covered none. `canonical` maps old rule names
    to ids, `known` says whether an id exists (an unknown one is named as such), and
    `unused_wanted(rule)` whether an unused suppression of that rule is reported (the
    rule ran everywhere the comment covers)."""
    ptx = parse(source.text)
    cuda: dict[str, list[Suppression]] = {}  # CUDA file -> its suppressions, read once
    used: set[tuple[int, str]] = set()
    kept = []
    for d in diagnostics:
        hit = None
        if suppressible(d):
            hit = _ptx_hit(d, ptx, canonical) or _cuda_hit(d, source.path, canonical, cuda)
        if hit is None:
            kept.append(d)
        elif hit[0] >= 0:
            used.add(hit)
    return kept + list(_unused(ptx, used, source, known, unused_wanted))


def _ptx_hit(d: Diagnostic, found: list[Suppression], canonical) -> tuple[int, str] | None:
    for s in found:
        if s.covers is None or (d.span is not None and s.covers == d.line):
            for rule in s.rules:
                if _matches(d.rule, rule, canonical):
                    return s.line, rule
    return None


def _cuda_hit(d: Diagnostic, ptx_path: str, canonical, found: dict[str, list[Suppression]]
              ) -> tuple[int, str] | None:
    if d.cuda is None or d.cuda.line < 1:
        return None
    if d.cuda.file not in found:
        text = cuda_text(d.cuda, ptx_path)
        found[d.cuda.file] = parse(text) if text is not None else []
    for s in found[d.cuda.file]:
        if s.covers == d.cuda.line and any(_matches(d.rule, r, canonical) for r in s.rules):
            return -1, ""  # not the PTX file's: no unused-suppression bookkeeping
    return None


def _unused(found: list[Suppression], used: set[tuple[int, str]], source: SourceFile,
            known, wanted) -> Iterable[Diagnostic]:
    for s in found:
        for rule in s.rules:
            if (s.line, rule) in used or not wanted(rule):
                continue
            message = f"unused suppression: no `{rule}` finding " + \
                ("in this file" if s.covers is None else f"on line {s.covers}")
            notes = () if known(rule) else (f"no rule is named `{rule}` (see --list-rules)",)
            yield Diagnostic(UNUSED, Severity.NOTE, message, source.path,
                             source.span(s.start, s.end), notes=notes,
                             help="remove it, or the rule's id from it",
                             details={"rule": rule, "line": s.covers})


# ---------------------------------------------------------------- the CUDA file
def cuda_path(cuda: CudaLocation, ptx_path: str) -> Path | None:
    """The CUDA file a `.loc` names: as written, else beside the PTX file (a
    checkout moved since nvcc wrote the absolute path)."""
    named = Path(cuda.file)
    here = Path(ptx_path).parent
    for candidate in (named, here / named, here / named.name):
        try:
            if candidate.is_file():
                return candidate
        except OSError:  # a name too long, a folder we may not search
            continue
    return None


def cuda_text(cuda: CudaLocation, ptx_path: str) -> str | None:
    found = cuda_path(cuda, ptx_path)
    if found is None:
        return None
    try:
        st = found.stat()
    except OSError:
        return None
    if st.st_size > MAX_CUDA_BYTES:
        return None
    return _read(os.fspath(found), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=64)
def _read(path: str, mtime: int, size: int) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


__all__ = ["Suppression", "parse", "apply", "suppressible", "cuda_path", "cuda_text", "UNUSED",
           "MAX_CUDA_BYTES"]
