"""Each shortcut taken for speed (issue #25) answers as the computation it replaces."""
from __future__ import annotations

from pathlib import Path

from ptxlint import launches
from ptxlint.analysis import analyze
from ptxlint.ir.build import parse_module
from ptxlint.lint import LintOptions, analysis_params

ROOT = Path(__file__).resolve().parents[2]


def linted_facts(path: Path):
    """The facts of each kernel of `path` as the lint analyses it (the launch in its
    header, the rules' slice)."""
    module = parse_module(path.read_text(), str(path)).module
    plans, _ = launches.plan(module, LintOptions())
    for fn in module.entries:
        plan = plans[id(fn)]
        if plan.error is None:
            yield analyze(fn, plan.launch, module=module, params=analysis_params()).facts
