"""`lint_text(..., jobs=N)`: a file's kernels shared among forked workers give exactly the
report one process gives (same findings, same order, same kernel list)."""
from __future__ import annotations

import json
import multiprocessing

import pytest

import ptxlint.lint
from ptxlint.cli import main
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, _shares, lint_text
from ptxlint.parse.lexer import blank_comments

from .conftest import ROOT

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="kernel-parallel lint forks workers (POSIX only)")

MULTI_KERNEL = sorted(p for p in (ROOT / "ptx_samples").rglob("*.ptx")
                      if p.read_text().count(".entry") >= 2)

# two kernels calling one device function, each with a finding, and a third one
SHARED_CALLEE = """.version 9.0
.target sm_90
.address_size 64
.shared .align 4 .b8 tile[128];
.func (.reg .b32 out) load_at(.reg .b32 i)
{
\t.reg .b32 %r<3>;
\tmov.u32 %r1, tile;
\tshl.b32 %r2, i, 2;
\tadd.u32 %r1, %r1, %r2;
\tld.shared.u32 out, [%r1];
\tret;
}
.visible .entry first(.param .u64 p)
{
\t.reg .b32 %r<4>;
\tmov.u32 %r1, %tid.x;
\tcall.uni (%r2), load_at, (%r1);
\tret;
}
.visible .entry second(.param .u64 p)
{
\t.reg .b32 %r<4>;
\tmov.u32 %r1, %tid.x;
\tadd.u32 %r1, %r1, 1;
\tcall.uni (%r2), load_at, (%r1);
\tret;
}
.visible .entry third()
{
\tret;
}
"""


@pytest.fixture
def always_parallel(monkeypatch):
    monkeypatch.setattr(ptxlint.lint, "PARALLEL_MIN_LINES", 0)


def _report(text: str, path: str, options: LintOptions, jobs: int):
    report = lint_text(text, path, options, jobs)
    return [d.to_json() for d in report.diagnostics], report.entries


@pytest.mark.parametrize("path", MULTI_KERNEL, ids=lambda p: p.name)
def test_samples_give_the_same_report(always_parallel, path):
    text = path.read_text()
    options = LintOptions(launch=LaunchConfig.parse("block=32"))
    serial = _report(text, str(path), options, 1)
    assert serial[1]
    for jobs in (2, 3):
        assert _report(text, str(path), options, jobs) == serial


def test_shared_device_function_is_checked_from_every_kernel(always_parallel):
    options = LintOptions(launch=LaunchConfig.parse("block=32"))
    serial = _report(SHARED_CALLEE, "t.ptx", options, 1)
    assert serial == _report(SHARED_CALLEE, "t.ptx", options, 2)
    assert serial[1] == ("first", "second", "third")
    # the callee's load is out of bounds for thread 31 of `second` (index 32)
    assert [(d["rule"], d["line"], d["kernel"]) for d in serial[0]
            if d["rule"] == "out-of-bounds"] == [("out-of-bounds", 11, "second")]


def test_syntax_error_in_one_kernel_reports_the_whole_parse(always_parallel):
    text = SHARED_CALLEE.replace("add.u32 %r1, %r1, 1;", "add.u32 %r1, %r1 1;")
    serial = _report(text, "t.ptx", LintOptions(), 1)
    assert serial == _report(text, "t.ptx", LintOptions(), 2)
    assert [(d["rule"], d["line"]) for d in serial[0]] == [("parse-error", 25)]


def test_shares_split_kernel_bodies_only(always_parallel):
    code = blank_comments(SHARED_CALLEE)
    shares = _shares(code, 2)
    bodies = sorted(b for share in shares for b in share)
    assert len(shares) == 2 and len(bodies) == 3  # three kernels; the .func is everyone's
    assert all(".entry" in code[code.rfind("}", 0, start):start] for start, _ in bodies)
    callee = code.index("{")
    assert callee not in {start for start, _ in bodies}


def test_small_file_stays_in_one_process():
    shares = _shares(blank_comments(SHARED_CALLEE), 4)
    assert len(shares) == 1


def test_cli_single_file_with_jobs(always_parallel, capsys):
    path = str(ROOT / "ptx_samples" / "cuda" / "reduce.ptx")
    codes, outs = [], []
    for jobs in ("1", "2"):
        codes.append(main(["--format", "json", "--block", "256", "-j", jobs, path]))
        outs.append(json.loads(capsys.readouterr().out)["diagnostics"])
    assert codes[0] == codes[1] and outs[0] == outs[1]
