"""The command line, quiet by default (issue 20, items 2 and 4): the minimum severity per
format, the hidden notes counted, `--exit-zero`, `--statistics`, `--select`/`--ignore`
with patterns, files git ignores; and the README's examples as they really run."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from ptxlint.cli import main

from .conftest import ROOT
from .quiet_kernels import LOCS, test_rules  # noqa: F401


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def locs(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(LOCS)
    return path


# test-load: 7 warnings, 5 once grouped (CUDA line 3's three loads are one); test-store:
# 1 note
RULES = ("--enable", "test-load,test-store")


@pytest.mark.parametrize("fmt, notes_shown", [
    ("text", False), ("gcc", False), ("github", False), ("json", True), ("sarif", True)])
def test_default_minimum_severity_per_format(test_rules, locs, capsys, fmt, notes_shown):
    code, out, _ = run(capsys, *RULES, "--format", fmt, locs)
    assert code == 1 and "load 1 of 'sums(float*, int)'" in out
    assert ("a store" in out) is notes_shown
    code, out, _ = run(capsys, *RULES, "--format", fmt, "--severity", "note", locs)
    assert "a store" in out  # --severity note shows them in every format
    code, out, _ = run(capsys, *RULES, "--format", fmt, "--severity", "error", locs)
    assert code == 0 and "load 1 of" not in out


def test_the_configured_severity_applies_to_every_format(test_rules, locs, capsys):
    (locs.parent / "ptxlint.toml").write_text('severity = "note"\n')
    assert "note[test-store]: a store" in run(capsys, *RULES, locs)[1]
    (locs.parent / "ptxlint.toml").write_text('severity = "warning"\n')
    doc = json.loads(run(capsys, *RULES, "--format", "json", locs)[1])
    assert {d["severity"] for d in doc["diagnostics"]} == {"warning"}


def test_hidden_notes_are_counted_in_one_line(test_rules, locs, capsys):
    code, out, _ = run(capsys, *RULES, locs)
    *_, summary, hidden = out.rstrip("\n").split("\n")
    assert re.fullmatch(r"checked 1 file in \d+\.\d\ds: 5 warnings \(test-load: 5\)", summary)
    assert hidden == "1 note hidden: --severity note shows them"
    code, out, _ = run(capsys, *RULES, "--severity", "error", locs)
    assert out.endswith("\n5 warnings and 1 note hidden: --severity note shows them\n")


def test_exit_zero(test_rules, locs, capsys):
    assert run(capsys, *RULES, "--exit-zero", locs)[0] == 0
    bad = locs.with_name("bad.ptx")
    bad.write_text(".version 9.0\n.target sm_80\n.address_size 64\n.visible .entry k(\n")
    assert run(capsys, "--exit-zero", bad)[0] == 2  # a file not checked still says so


def test_statistics(test_rules, locs, capsys):
    code, out, _ = run(capsys, *RULES, "--statistics", "--severity", "note", locs)
    assert code == 1
    assert out == ("     5  test-load   warning  (on 7 instructions)\n"
                   "     1  test-store  note\n")
    code, out, _ = run(capsys, *RULES, "--statistics", "--format", "json", locs)
    assert json.loads(out) == [
        {"rule": "test-load", "severity": "warning", "count": 5, "instructions": 7},
        {"rule": "test-store", "severity": "note", "count": 1, "instructions": 1}]
    code, out, err = run(capsys, *RULES, "--statistics", "--format", "sarif", locs)
    assert code == 2 and "--statistics prints text or json, not sarif" in err
    assert run(capsys, "--enable", "test-store", "--statistics", locs)[1] == "no findings\n"


def test_select_and_ignore_take_patterns(test_rules, locs, capsys):
    def rules(*args) -> set[str]:
        code, out, _ = run(capsys, *args, "--format", "json", locs)
        return {d["rule"] for d in json.loads(out)["diagnostics"]}

    assert rules("--select", "test-*") == {"test-load", "test-store"}
    assert rules("--select", "test-*", "--ignore", "test-s*") == {"test-load"}
    assert rules("--enable", "test-load", "--disable", "test-lo?d") == set()
    # a configured pattern, re-enabled by name on the command line
    (locs.parent / "ptxlint.toml").write_text('enable = ["test-*"]\ndisable = ["test-*"]\n')
    assert rules() == set()
    assert rules("--enable", "test-store") == {"test-store"}
    code, _, err = run(capsys, "--select", "nothing-*", locs)
    assert code == 2 and "no rule matches 'nothing-*'" in err
    code, _, err = run(capsys, "--ignore", "bank-conflcit", locs)
    assert code == 2 and "unknown rule 'bank-conflcit'" in err


# ---------------------------------------------------------------- git-ignored files
def git(directory, *args) -> None:
    subprocess.run(["git", "-C", str(directory), *args], check=True, capture_output=True)


@pytest.fixture
def tree(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    (tmp_path / "build").mkdir()
    (tmp_path / "src").mkdir()
    for name in ("src/a.ptx", "build/b.ptx", "src/c.ptx"):
        (tmp_path / name).write_text(LOCS)
    (tmp_path / ".gitignore").write_text("build/\nc.ptx\n")
    return tmp_path


def files_of(capsys, tmp, *args) -> list[str]:
    """The files a run reads: each gets a parse error, so each is reported."""
    broken = "\t.reg .b32 %r<2>;\n\tmov.u32 %r1, %r9;\n"
    for path in tmp.rglob("*.ptx"):
        path.write_text(LOCS.replace("\t.reg .b32 %r<5>;\n", broken, 1))
    code, out, _ = run(capsys, "--parse-only", "--format", "json", *args)
    return sorted({d["file"].removeprefix(str(tmp) + "/")
                   for d in json.loads(out)["diagnostics"]})


def test_git_ignored_files_are_skipped_in_directories(tree, capsys):
    git(tree, "init", "-q")
    assert files_of(capsys, tree, tree) == ["src/a.ptx"]
    assert files_of(capsys, tree, "--no-respect-gitignore", tree) == \
        ["build/b.ptx", "src/a.ptx", "src/c.ptx"]
    # a file named on the command line is linted all the same
    assert files_of(capsys, tree, tree / "build" / "b.ptx") == ["build/b.ptx"]
    # a tracked file is not ignored, as git sees it
    git(tree, "add", "-f", "src/c.ptx")
    assert files_of(capsys, tree, tree / "src") == ["src/a.ptx", "src/c.ptx"]


def test_outside_a_work_tree_nothing_is_skipped(tree, capsys):
    assert files_of(capsys, tree, tree) == ["build/b.ptx", "src/a.ptx", "src/c.ptx"]


# ---------------------------------------------------------------- the README, as it runs
def readme_consoles() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text()
    return [(m.group(1), m.group(2)) for m in
            re.finditer(r"```console\n\$ ptxlint ([^\n]*)\n(.*?)```", text, re.S)]


def test_the_readme_examples_are_real(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    examples = readme_consoles()
    assert len(examples) == 2
    for args, shown in examples:
        code, out, _ = run(capsys, *args.split())
        time = r"\d+\.\d\ds"
        assert re.sub(time, "T", out) == re.sub(time, "T", shown), args
    first = (ROOT / "README.md").read_text().split("```sh\n", 1)[1].split("\n", 1)[0]
    assert first.endswith(" && " + "ptxlint " + examples[0][0])  # the first command's
