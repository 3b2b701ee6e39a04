"""Inline expectations in PTX samples (the one harness every rule sample goes through).

    // ptxlint: launch block=32,8 grid=64 param.n=1024 buffer.in=4096   (header, optional)
    // ptxlint: arch=sm_80                                               (header, optional)
    ld.shared.f32 %f1, [%r4];     // expect: bank-conflict ways=32
    // expect^: misaligned-access                                        (the line above)

An expectation is (line, rule, {key: value}); a diagnostic matches when its line and
rule agree and each listed key equals `str(details[key])`. Every expectation must be
met, and every diagnostic at warning or above must be expected. The report is taken as
the command line shows it (`LintReport.grouped`) and each group expanded into its
members, so grouping neither hides a finding nor merges two expectations into one.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ptxlint.diagnostics import Diagnostic, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, LintReport, lint_text

_EXPECT = re.compile(r"//\s*expect(\^?):\s*(.*)$")
_HEADER = re.compile(r"//\s*ptxlint:\s*(\w+)[ =]?(.*)$")


@dataclass(frozen=True)
class Expectation:
    line: int
    rule: str
    details: tuple[tuple[str, str], ...] = ()

    def matches(self, d: Diagnostic) -> bool:
        return d.line == self.line and d.rule == self.rule and all(
            str(d.details.get(k)) == v for k, v in self.details)

    def __str__(self) -> str:
        extra = "".join(f" {k}={v}" for k, v in self.details)
        return f"{self.line}: {self.rule}{extra}"


def expectations(text: str) -> list[Expectation]:
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        m = _EXPECT.search(line)
        if not m:
            continue
        target = number - 1 if m.group(1) else number
        for item in m.group(2).split(","):
            words = item.split()
            if not words:
                continue
            pairs = tuple(tuple(w.split("=", 1)) for w in words[1:] if "=" in w)
            out.append(Expectation(target, words[0], pairs))  # type: ignore[arg-type]
    return out


def options_for(text: str) -> LintOptions:
    opts = LintOptions()
    for line in text.splitlines()[:40]:
        m = _HEADER.search(line)
        if not m:
            continue
        key, rest = m.group(1), m.group(2).strip()
        if key == "launch":
            opts.launch = LaunchConfig.parse(rest)
        elif key == "arch":
            opts.arch = rest
    return opts


def lint_sample(path: Path) -> LintReport:
    text = path.read_text()
    return lint_text(text, str(path), options_for(text))


def mismatches(path: Path) -> list[str]:
    """'-missing' and '+unexpected' lines; empty when the sample is as annotated."""
    text = path.read_text()
    report = lint_sample(path)
    want = expectations(text)
    # each finding as the rule made it: a grouped diagnostic (one CUDA line on several
    # instructions) is checked member by member, at each member's own line and details
    found = [d for shown in report.grouped for d in shown.expanded()]
    got = [d for d in found if d.severity >= Severity.WARNING or
           any(e.rule == d.rule and e.line == d.line for e in want)]
    problems = []
    unmatched = list(got)
    for e in want:
        hit = next((d for d in unmatched if e.matches(d)), None)
        if hit is None:
            near = [f"{d.rule} {d.details}" for d in got if d.line == e.line]
            problems.append(f"-missing {e}" + (f" (found: {near})" if near else ""))
        else:
            unmatched.remove(hit)
    for d in unmatched:
        problems.append(f"+unexpected {d.line}: {d.rule} {d.details} {d.message}")
    return problems


__all__ = ["expectations", "options_for", "lint_sample", "mismatches", "Counter"]
