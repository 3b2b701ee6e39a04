"""Launch values as users write them (issue 20, item 3): CUDA parameter names where the
PTX keeps them (hand-written PTX, `nvcc -G` DWARF), a parameter given only to the
kernels that have it (a note for the others), and the file's own `// ptxlint: launch`
comment under the configuration and the command line."""
from __future__ import annotations

import json
import re

import pytest

from ptxlint import launches
from ptxlint.cli import main
from ptxlint.debuginfo import parameter_names
from ptxlint.diagnostics import Severity
from ptxlint.ir.build import parse_module
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text

from .conftest import ROOT
from .quiet_kernels import TEMPLATES, TEMPLATES_DEBUG

DEBUG = ROOT / "ptx_samples" / "cuda" / "debug_build.ptx"
COLUMN = ROOT / "ptx_samples" / "bank-conflict" / "column.bad.ptx"
TWO = """.version 9.0
.target sm_80
.address_size 64
.visible .entry scale(.param .u64 data, .param .u32 n)
{
\tret;
}
.visible .entry fill(.param .u64 data, .param .f32 value)
{
\tret;
}
"""


def module(path):
    return parse_module(path.read_text(), str(path)).module


def plans(text: str, options: LintOptions, path: str = "k.ptx"):
    m = parse_module(text, path).module
    found, errors = launches.plan(m, options)
    return {fn.name: found[id(fn)] for fn in m.entries}, errors


# ---------------------------------------------------------------- names from -G DWARF
def test_dwarf_parameter_names():
    assert parameter_names(module(DEBUG).sections) == {
        "_Z8scale_byii": ("x", "k"), "debug_saxpy": ("a", "x", "y", "n")}
    assert parameter_names(module(TEMPLATES_DEBUG).sections) == {
        "_Z10column_sumIfEvPT_PKS0_i": ("out", "in", "n"),
        "_Z10column_sumIiEvPT_PKS0_i": ("out", "in", "n")}
    # strp names through .debug_str labels (label+imm too); no parameters there
    syntax = module(ROOT / "ptx_samples" / "syntax" / "debug_info.ptx")
    assert parameter_names(syntax.sections) == {"_Z6squarei": (), "_Z5twicei": ()}
    # -lineinfo output has no DWARF; a damaged section gives nothing, never an error
    assert parameter_names(module(TEMPLATES).sections) == {}
    broken = [s.replace(".b8 46", ".b8 255", 1) if ".debug_abbrev" in s else s
              for s in module(DEBUG).sections]
    assert parameter_names(broken[:1] + [s[: len(s) // 2] + "}" for s in broken[1:]]) == {}


def test_cuda_names_on_the_command_line(capsys):
    """`--param n=...` on `-G` output: the CUDA name is the fourth PTX parameter."""
    found, _ = plans(DEBUG.read_text(), LintOptions(launch=LaunchConfig(params={"n": 1000},
                                                                       extents={"y": 4000})))
    plan = found["debug_saxpy"]
    assert plan.error is None and plan.launch.params == {"debug_saxpy_param_3": 1000}
    assert plan.launch.extents == {"debug_saxpy_param_2": 4000}
    assert main(["--block", "256", "--grid", "4", "--param", "n=1000", str(DEBUG)]) == 0
    assert "launch-config" not in capsys.readouterr().out
    # a name the kernel has under no spelling: an error listing both names of each
    assert main(["--param", "width=3", "--format", "gcc", str(DEBUG)]) == 2
    assert "(parameters: debug_saxpy_param_0 (a), debug_saxpy_param_1 (x), " \
        "debug_saxpy_param_2 (y), debug_saxpy_param_3 (n)) [launch-config]" in \
        capsys.readouterr().out


def test_nvcc_names_without_debug_info_say_what_to_give(capsys):
    assert main(["--param", "width=1024", "--format", "gcc", str(COLUMN)]) == 2
    out = capsys.readouterr().out
    assert out.count("[launch-config]") == 1
    assert "'transpose_unpadded' has no parameter named 'width' (parameters: " \
        "transpose_unpadded_param_0, transpose_unpadded_param_1, transpose_unpadded_param_2, " \
        "transpose_unpadded_param_3); nvcc keeps CUDA parameter names only in -G builds: " \
        "give the 0-based index" in out


# ---------------------------------------------------------------- several kernels
def test_a_parameter_goes_to_the_kernels_that_have_it(tmp_path, capsys):
    found, _ = plans(TWO, LintOptions(launch=LaunchConfig(params={"n": 5, "value": 1.5})))
    assert found["scale"].launch.params == {"n": 5} and found["scale"].skipped == ["value"]
    assert found["fill"].launch.params == {"value": 1.5} and found["fill"].skipped == ["n"]
    path = tmp_path / "two.ptx"
    path.write_text(TWO)
    assert main(["--param", "n=5", "--format", "json", str(path)]) == 0  # no exit 2
    [note] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert (note["rule"], note["severity"], note["kernel"], note["line"], note["details"]) == \
        ("launch-config", "note", "fill", 8, {"skipped": ["n"]})
    assert note["message"] == "launch value for `n` not applied to 'fill': it has no such " \
                              "parameter (another kernel of the file has)"
    # the text report hides the note, and says so
    assert main(["--param", "n=5", str(path)]) == 0
    assert capsys.readouterr().out.endswith("\n1 note hidden: --severity note shows them\n")
    # by index: `fill` has no third parameter either
    found, _ = plans(TWO + TWO.split("\n", 3)[3].replace("scale", "three").replace(
        ".param .u32 n)", ".param .u32 n, .param .u32 m)"), LintOptions(
            launch=LaunchConfig(params={2: 9})))
    assert found["three"].launch.params == {"m": 9}
    assert found["scale"].skipped == ["2"] and found["fill"].skipped == ["2"]


def test_a_parameter_no_kernel_has_is_an_error(tmp_path, capsys):
    path = tmp_path / "two.ptx"
    path.write_text(TWO)
    assert main(["--param", "count=5", "--format", "json", str(path)]) == 2
    found = json.loads(capsys.readouterr().out)["diagnostics"]
    assert [(d["rule"], d["severity"], d["kernel"]) for d in found] == [
        ("launch-config", "error", "scale"), ("launch-config", "error", "fill")]
    assert main(["--param", "count=5", "--kernel", "fill", str(path)]) == 2
    # given twice in one source, under two spellings: still an error
    found, _ = plans(TWO, LintOptions(launch=LaunchConfig(params={"n": 1, 1: 2})))
    assert "given twice" in found["scale"].error


# ---------------------------------------------------------------- the launch comment
def test_the_launch_comment_is_read(capsys):
    """column.bad.ptx's comment gives the launch of the README's command: the same
    report with no option at all."""
    assert main(["--format", "json", str(COLUMN)]) == 1
    bare = json.loads(capsys.readouterr().out)["diagnostics"]
    assert main(["--format", "json", "--block", "32,8", "--grid", "32,32", "--param", "2=1024",
                 "--param", "3=1024", str(COLUMN)]) == 1
    assert json.loads(capsys.readouterr().out)["diagnostics"] == bare
    assert [(d["rule"], d["certainty"], d["count"]) for d in bare] == \
        [("bank-conflict", "definite", 4)]


def test_configuration_and_command_line_take_precedence():
    text = "// ptxlint: launch block=32,8 grid=32,32 param.2=1024 param.3=1024 smem=0\n" + \
        COLUMN.read_text().split("\n", 1)[1]
    name = "transpose_unpadded"
    found, _ = plans(text, LintOptions())
    assert found[name].launch == LaunchConfig(
        block=(32, 8, 1), grid=(32, 32, 1), dynamic_smem=0,
        params={f"{name}_param_2": 1024, f"{name}_param_3": 1024})
    # the configuration's table and the command line, merged as config.options does,
    # over the comment: field by field, parameter by parameter
    given = LaunchConfig(block=(64, 4), params={f"{name}_param_3": 7}, extents={0: 4096})
    found, _ = plans(text, LintOptions(launches={"transpose_*": given}))
    assert found[name].launch == LaunchConfig(
        block=(64, 4, 1), grid=(32, 32, 1), dynamic_smem=0,
        params={f"{name}_param_2": 1024, f"{name}_param_3": 7},
        extents={f"{name}_param_0": 4096})
    # the API's (and the hook's) one launch: the comment is not read
    found, _ = plans(text, LintOptions(launch=LaunchConfig(block=(64,))))
    assert found[name].launch == LaunchConfig(block=(64, 1, 1))


def test_kernel_patterns_and_malformed_comments():
    text = TWO.replace(".address_size 64\n", ".address_size 64\n"
                       "// ptxlint: launch kernel=fill block=64 param.value=2.5\n"
                       "// ptxlint: launch block=128\n"
                       "// ptxlint: launch blok=1\n")
    found, errors = plans(text, LintOptions())
    assert found["fill"].launch == LaunchConfig(block=(64, 1, 1), params={"value": 2.5})
    assert found["scale"].launch == LaunchConfig(block=(128, 1, 1))
    [error] = errors
    assert (error.rule, error.severity, error.line, error.column) == \
        ("launch-config", Severity.ERROR, 6, 1)
    assert error.message.startswith("invalid launch comment: unknown launch setting 'blok'")
    report = lint_text(text, "k.ptx")
    assert [(d.rule, d.line) for d in report.diagnostics if d.severity is Severity.ERROR] == \
        [("launch-config", 6)]


def test_the_language_server_reads_the_launch_comment(tmp_path):
    pytest.importorskip("pygls")
    from ptxlint.lsp import Analyzer

    text = COLUMN.read_text()
    path = tmp_path / "column.bad.ptx"
    found = Analyzer().diagnostics(path.as_uri(), str(path), text)
    [conflict] = [d for d in found if d.rule == "bank-conflict"]
    assert conflict.message == "32-way shared-memory bank conflict (on 4 instructions)"
    blank = re.sub(r"(?m)^// ptxlint: launch .*$", "//", text)
    found = Analyzer().diagnostics(path.as_uri(), str(path), blank)
    assert [d.message.startswith("possible 32-way") for d in found
            if d.rule == "bank-conflict"] == [True]
