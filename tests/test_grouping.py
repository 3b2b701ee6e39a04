"""Each finding once (issue 20, item 2): the findings of one rule, one kind of message and
one CUDA line are one diagnostic with every instruction kept, in every format; the
sample harness checks each member on its own line."""
from __future__ import annotations

import json
import re
import shutil

from ptxlint import grouping
from ptxlint.cli import main
from ptxlint.diagnostics import CudaLocation, Diagnostic, Severity
from ptxlint.lint import LintOptions, lint_text
from ptxlint.source import SourceFile

from .conftest import ROOT
from .expectations import mismatches
from .quiet_kernels import TEMPLATES, keys, test_rules, write_locs  # noqa: F401

RULES = LintOptions(enable=frozenset({"test-load", "test-store"}))


def test_one_cuda_line_is_one_finding_with_every_instruction(test_rules, tmp_path):
    path = write_locs(tmp_path)
    report = lint_text(path.read_text(), str(path), RULES)
    shown = report.grouped
    assert [(d.line, d.rule, d.count) for d in shown] == [
        (9, "test-load", 1), (10, "test-load", 1),  # no .loc yet: each alone
        (12, "test-load", 3),  # CUDA line 3: lines 12, 13 and the other instance's 26
        (15, "test-load", 1), (16, "test-store", 1),  # CUDA line 4: two rules
        (24, "test-load", 1)]  # CUDA line 2
    group = shown[2]
    assert group.message == "load 3 of 'sums(float*, int)' (on 3 instructions in 2 kernels)"
    assert [(d.line, d.kernel, d.message, d.details) for d in group.instances] == [
        (12, "_Z4sumsPfi", "load 3 of 'sums(float*, int)'", {"number": 3}),
        (13, "_Z4sumsPfi", "load 4 of 'sums(float*, int)'", {"number": 4}),
        (26, "_Z4sumsPdi", "load 2 of 'sums(double*, int)'", {"number": 2})]
    # nothing lost, nothing added: expanding the groups gives the findings as made
    assert sorted(keys(shown), key=repr) == sorted(keys(report.diagnostics), key=repr)
    assert len(keys(shown)) == len(report.diagnostics) == 8
    assert grouping.group(shown) == shown  # grouping a grouped list changes nothing


def test_what_makes_a_group():
    src = SourceFile("k.ptx", "a;\nb;\nc;\nd;\n")

    def d(line, rule="r", severity=Severity.WARNING, message="bytes 0..3 of `x`", cuda=7):
        return Diagnostic(rule, severity, message, "k.ptx", src.span(2 * (line - 1), 2 * line - 1),
                          cuda=CudaLocation("k.cu", cuda) if cuda else None)

    assert grouping.message_kind("bytes 0..127 of `tile` (4224 bytes)") == \
        grouping.message_kind("bytes 128..255 of `buf` (64 bytes)")
    assert grouping.message_kind("32-way conflict") != grouping.message_kind("a race")
    same = grouping.group([d(1), d(2, message="bytes 4..7 of `y`")])
    assert [x.count for x in same] == [2] and same[0].message.endswith("(on 2 instructions)")
    for other in (d(2, rule="s"), d(2, severity=Severity.NOTE), d(2, cuda=8),
                  d(2, message="a different kind"), d(2, cuda=None)):
        assert [x.count for x in grouping.group([d(1), other])] == [1, 1], other
    assert [x.count for x in grouping.group([d(1, cuda=None), d(2, cuda=None)])] == [1, 1]


def test_nvcc_template_instances_and_unrolled_loop_in_every_format(capsys, monkeypatch):
    """tests/data/templates.cu line 17, an unrolled column read in two template
    instances: eight 32-way bank conflicts, one finding."""
    monkeypatch.chdir(ROOT)
    launch = ["--block", "32,8", "--grid", "1", "--param", "2=32",
              str(TEMPLATES.relative_to(ROOT))]
    assert main(["--format", "json", *launch]) == 1
    [d] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert (d["rule"], d["count"], d["cuda_line"]) == ("bank-conflict", 8, 17)
    assert d["message"] == "32-way shared-memory bank conflict (on 8 instructions in 2 kernels)"
    assert [(o["kernel"], o["kernel_demangled"]) for o in d["occurrences"]] == \
        [("_Z10column_sumIfEvPT_PKS0_i", "void column_sum<float>(float*, float const*, int)")] * 4 \
        + [("_Z10column_sumIiEvPT_PKS0_i", "void column_sum<int>(int*, int const*, int)")] * 4
    assert all(o["details"]["ways"] == 32 for o in d["occurrences"])
    lines = [o["line"] for o in d["occurrences"]]
    assert lines == sorted(lines) and d["line"] == lines[0]

    assert main(["--format", "sarif", *launch]) == 1
    [r] = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    cuda, *others = r["relatedLocations"]
    assert cuda["message"]["text"] == "CUDA source of this line"
    assert [o["physicalLocation"]["region"]["startLine"] for o in others] == lines[1:]
    assert others[-1]["message"]["text"] == \
        "the same finding in void column_sum<int>(int*, int const*, int)"
    assert r["properties"]["count"] == 8

    assert main(["--format", "gcc", *launch]) == 1
    assert capsys.readouterr().out.count("\n") == 1

    assert main(launch) == 1
    out = capsys.readouterr().out
    assert out.count("warning[bank-conflict]") == 1
    also = re.search(r"= note: also at (.*)\n", out).group(1)
    assert also == (", ".join(f"{n}:{o['column']}" for n, o in zip(lines[1:4], d["occurrences"][1:4]))
                    + "; in void column_sum<int>(int*, int const*, int): "
                    + ", ".join(f"{o['line']}:{o['column']}" for o in d["occurrences"][4:]))


def test_the_sample_harness_checks_each_member(tmp_path):
    """column.bad.ptx's four conflicts are one group; its four expectations are each
    still needed, and a fifth is still missing."""
    sample = ROOT / "ptx_samples" / "bank-conflict" / "column.bad.ptx"
    shutil.copy(sample.with_name("column.bad.cu"), tmp_path)
    assert mismatches(sample) == []
    text = sample.read_text()
    dropped = tmp_path / "column.bad.ptx"
    dropped.write_text(text.replace("\t// expect: bank-conflict ways=32 bank=0", "", 1))
    assert [p.split(":")[0] for p in mismatches(dropped)] == ["+unexpected 101"]
    wrong = tmp_path / "column.bad.ptx"
    wrong.write_text(text.replace("// expect: bank-conflict ways=32 bank=0",
                                  "// expect: bank-conflict ways=16 bank=0", 1))
    found = mismatches(wrong)
    assert len(found) == 2 and found[0].startswith("-missing 101: bank-conflict ways=16")
    assert found[1].startswith("+unexpected 101: bank-conflict")
