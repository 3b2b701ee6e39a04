"""Inline suppression (issue 20, item 4): `// ptxlint: disable=` on the line, on the line
before, for the file, in the CUDA line a `.loc` names; unused suppressions as notes;
the language server's quick fixes."""
from __future__ import annotations

import json

import pytest

from ptxlint import suppress
from ptxlint.cli import main
from ptxlint.lint import LintOptions, lint_text

from .quiet_kernels import LOCS, SUMS_CU, keys, test_rules, write_locs  # noqa: F401

RULES = LintOptions(enable=frozenset({"test-load", "test-store", "unused-suppression"}))


def lines_of(text: str, options: LintOptions = RULES, path: str = "k.ptx") -> list[tuple]:
    return [(line, rule) for line, rule, _ in keys(lint_text(text, path, options).grouped)]


def edit(text: str, line: int, comment: str) -> str:
    """`comment` appended to 1-based `line`."""
    rows = text.split("\n")
    rows[line - 1] += comment
    return "\n".join(rows)


def insert(text: str, before: int, row: str) -> str:
    rows = text.split("\n")
    rows.insert(before - 1, row)
    return "\n".join(rows)


def test_parse_covers_the_line_or_the_next_code_line():
    text = ("a; // ptxlint: disable=bank-conflict\n"
            "// ptxlint: disable=out-of-bounds, bank-*\n"
            "// another comment\n"
            "\n"
            "b;\n"
            "   // ptxlint: disable-file=uniform-branch\n")
    found = suppress.parse(text)
    assert [(s.line, s.rules, s.covers) for s in found] == [
        (1, ("bank-conflict",), 1), (2, ("out-of-bounds", "bank-*"), 5),
        (6, ("uniform-branch",), None)]
    assert text[found[0].start:found[0].end] == "// ptxlint: disable=bank-conflict"
    assert suppress.parse("a; // ptxlint: launch block=32\n") == []


def test_same_line_line_before_and_file(test_rules):
    plain = lines_of(LOCS)
    assert (12, "test-load") in plain and (13, "test-load") in plain
    same = edit(LOCS, 12, "  // ptxlint: disable=test-load")
    assert [k for k in lines_of(same) if k[0] in (12, 13)] == [(13, "test-load")]
    before = insert(LOCS, 12, "\t// ptxlint: disable=test-load")  # 12 -> 13
    assert [k for k in lines_of(before) if k[0] in (13, 14)] == [(14, "test-load")]
    whole = insert(LOCS, 4, "// ptxlint: disable-file=test-*")
    assert lines_of(whole) == []
    # an old name or another rule's id: nothing suppressed, and the comment is unused
    other = edit(LOCS, 12, "  // ptxlint: disable=test-store")
    assert (12, "test-load") in lines_of(other)


def test_a_cuda_line_suppression_covers_its_instructions(test_rules, tmp_path):
    """nvcc output: `// ptxlint: disable=` at the end of CUDA line 3 removes the loads
    it gives in both kernels (PTX lines 12, 13 and 26); a comment alone on the line
    above CUDA line 4 removes its load but not its store (another rule)."""
    cuda = SUMS_CU.split("\n")
    cuda[2] += "  // ptxlint: disable=test-load"
    path = write_locs(tmp_path, cuda="\n".join(cuda))
    found = lines_of(path.read_text(), path=str(path))
    assert [k for k in found if k[0] in (12, 13, 26)] == []
    assert (15, "test-load") in found
    cuda.insert(3, "    // ptxlint: disable=test-load")  # above line 4: shifts 4 -> 5
    (tmp_path / "sums.cu").write_text("\n".join(cuda))
    moved = LOCS.replace(".loc 1 4 5", ".loc 1 5 5")
    path.write_text(moved)
    found = lines_of(moved, path=str(path))
    assert (15, "test-load") not in found and (16, "test-store") in found
    # no CUDA file beside the PTX file: nothing to read, nothing suppressed
    (tmp_path / "sums.cu").unlink()
    assert (12, "test-load") in lines_of(LOCS, path=str(path))


def test_unused_suppressions_are_notes(test_rules):
    text = edit(LOCS, 16, "  // ptxlint: disable=test-load,test-stre")
    found = lint_text(text, "k.ptx", RULES).grouped
    unused = [(d.line, d.column, d.severity.name, d.message, d.details, d.notes)
              for d in found if d.rule == "unused-suppression"]
    column = text.split("\n")[15].index("//") + 1
    assert unused == [
        (16, column, "NOTE", "unused suppression: no `test-load` finding on line 16",
         {"rule": "test-load", "line": 16}, ()),
        (16, column, "NOTE", "unused suppression: no `test-stre` finding on line 16",
         {"rule": "test-stre", "line": 16}, ("no rule is named `test-stre` (see --list-rules)",))]
    used = edit(LOCS, 16, "  // ptxlint: disable=test-store")
    assert not [d for d in lint_text(used, "k.ptx", RULES).grouped
                if d.rule == "unused-suppression"]
    # a pattern that names rules but covers nothing here: unused, but not unknown
    glob = edit(LOCS, 17, "  // ptxlint: disable=test-*")
    [d] = [d for d in lint_text(glob, "k.ptx", RULES).grouped if d.rule == "unused-suppression"]
    assert (d.line, d.message, d.notes) == \
        (17, "unused suppression: no `test-*` finding on line 17", ())


def test_unused_is_not_said_of_a_rule_that_did_not_run(test_rules):
    text = edit(LOCS, 16, "  // ptxlint: disable=test-store")

    def unused(options: LintOptions) -> list:
        return [d for d in lint_text(text, "k.ptx", options).grouped
                if d.rule == "unused-suppression"]

    assert unused(LintOptions(enable=frozenset({"test-load"}))) == []  # not enabled
    assert unused(LintOptions(enable=RULES.enable, kernels=("_Z4sumsPdi",))) == []
    off = LintOptions(enable=frozenset({"test-load"}), disable=frozenset({"test-store"}))
    assert unused(off) == []
    assert unused(LintOptions(enable=frozenset({"test-load", "test-store"}))) == []  # note off


def test_the_tools_own_errors_are_not_suppressed():
    text = ".version 9.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n" \
           "\tmov.u32 %r1, %r5;  // ptxlint: disable=parse-error\n\tret;\n}\n"
    assert [d.rule for d in lint_text(text, "k.ptx").diagnostics] == ["parse-error"]
    launch = ".version 9.0\n.target sm_80\n.address_size 64\n" \
             "// ptxlint: disable-file=launch-config\n" \
             ".visible .entry k(.param .u32 n)\n{\n\tret;\n}\n"
    from ptxlint.launch import LaunchConfig

    found = lint_text(launch, "k.ptx", LintOptions(launch=LaunchConfig(params={"m": 1})))
    assert [d.rule for d in found.diagnostics if d.severity.name == "ERROR"] == ["launch-config"]


def test_command_line_exit_status_follows_what_is_left(test_rules, tmp_path, capsys):
    path = tmp_path / "k.ptx"
    path.write_text(LOCS)
    args = ["--enable", "test-load", "--format", "json", str(path)]
    assert main(args) == 1
    assert len(json.loads(capsys.readouterr().out)["diagnostics"]) == 5
    path.write_text(insert(LOCS, 4, "// ptxlint: disable-file=test-load"))
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["diagnostics"] == []


# ---------------------------------------------------------------- the language server
def test_the_language_server_honours_suppressions(test_rules, tmp_path):
    pytest.importorskip("pygls")
    from ptxlint.lsp import Analyzer

    path = write_locs(tmp_path)
    analyzer = Analyzer()
    analyzer.configure({"enable": ["test-load", "test-store"]})
    found = analyzer.diagnostics(path.as_uri(), str(path), LOCS)
    assert (12, 3) in [(d.line, d.count) for d in found]
    quiet = edit(LOCS, 12, "  // ptxlint: disable=test-load")
    found = analyzer.diagnostics(path.as_uri(), str(path), quiet)
    assert (12, "test-load") not in [(d.line, d.rule) for d in found]
    assert (13, 2) in [(d.line, d.count) for d in found]  # 13 and 26 still


def test_quick_fix_on_the_cuda_line(test_rules, tmp_path):
    pytest.importorskip("pygls")
    from lsprotocol import types as lsp

    from ptxlint.lsp import Analyzer, code_actions

    path = write_locs(tmp_path)
    analyzer = Analyzer()
    analyzer.configure({"enable": ["test-load"]})
    published = analyzer.publishable(path.as_uri(), str(path), LOCS, 1)
    [group] = [d for d in published.diagnostics if d.range.start.line == 11]
    actions = code_actions(path.as_uri(), LOCS.split("\n"), [group])
    titles = [a.title for a in actions]
    assert titles == ["Open the documentation of test-load", "Suppress test-load on this line",
                      "Suppress test-load on its CUDA line (sums.cu:3)"]
    cuda_uri = (tmp_path / "sums.cu").resolve().as_uri()
    [edit_] = actions[2].edit.changes[cuda_uri]
    end = len(SUMS_CU.split("\n")[2])
    assert edit_.range.start == lsp.Position(line=2, character=end)
    assert edit_.new_text == "  // ptxlint: disable=test-load"
    # applied, the group is gone from every kernel
    cuda = SUMS_CU.split("\n")
    cuda[2] += edit_.new_text
    (tmp_path / "sums.cu").write_text("\n".join(cuda))
    published = analyzer.publishable(path.as_uri(), str(path), LOCS, 2)
    assert 11 not in [d.range.start.line for d in published.diagnostics]
