"""`ptxlint --parse-only`: exit status and report shapes."""
from __future__ import annotations

import io
import json
import re
import subprocess
import sys

from ptxlint.cli import main

from .conftest import ROOT

GOOD = ROOT / "ptx_samples" / "cuda" / "vector_add.ptx"
BAD = """.version 9.0
.target sm_90
.address_size 64
.visible .entry k()
{
\t.reg .b32 %r<2>;
\tmov.u32 %r1, %r5;
\tret;
}
"""


def test_clean_file_exits_zero(capsys):
    assert main(["--parse-only", str(GOOD)]) == 0
    assert "error" not in capsys.readouterr().out


def test_parse_error_exits_two_and_reports_position(tmp_path, capsys):
    bad = tmp_path / "bad.ptx"
    bad.write_text(BAD)
    assert main(["--parse-only", "--format", "json", str(bad)]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["version"] == 1
    [d] = doc["diagnostics"]
    assert (d["line"], d["column"], d["rule"], d["severity"]) == (7, 15, "parse-error", "error")
    assert set(d) >= {"file", "line", "column", "severity", "rule", "kernel", "message", "details"}
    assert d["kernel"] == "k" and d["file"] == str(bad)


def test_gcc_format(tmp_path, capsys):
    bad = tmp_path / "bad.ptx"
    bad.write_text(BAD)
    main(["--parse-only", "--format", "gcc", str(bad)])
    assert capsys.readouterr().out == (
        f"{bad}:7:15: error: register '%r5' is not declared [parse-error]\n")


def test_text_format_shows_line_and_caret(tmp_path, capsys):
    bad = tmp_path / "bad.ptx"
    bad.write_text(BAD)
    main(["--parse-only", str(bad)])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "error[parse-error]: register '%r5' is not declared"
    assert out[1] == f"  --> {bad}:7:15"
    assert out[2] == "  |"
    assert out[3] == "6 | \t.reg .b32 %r<2>;"  # the line before, for context
    assert out[4] == "7 | \tmov.u32 %r1, %r5;"
    assert out[5] == "  | \t             ^^^"


def test_unreadable_file_exits_two(tmp_path, capsys):
    assert main(["--parse-only", str(tmp_path / "missing.ptx")]) == 2
    assert "cannot read file" in capsys.readouterr().out


def test_stdin_and_console_script():
    proc = subprocess.run([sys.executable, "-m", "ptxlint", "--parse-only", "-"],
                          input=BAD, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "--> <stdin>:7:15" in proc.stdout
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------- the full command line
import os  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from ptxlint import arch as arch_mod  # noqa: E402
from ptxlint.cli import _progress_wanted, build_parser  # noqa: E402
from ptxlint.diagnostics import Diagnostic, Severity  # noqa: E402
from ptxlint.rules.base import RULES, Rule, RuleContext  # noqa: E402

CLEAN = ROOT / "ptx_samples" / "syntax" / "control_flow.ptx"
KERNEL = """.version 9.0
.target sm_80
.address_size 64
.visible .entry k(.param .u32 n)
{
\t.reg .b32 %r<3>;
\tld.param.u32 %r1, [n];
\tmov.u32 %r2, %tid.x;
\tret;
}
"""


class _FirstInstruction(Rule):
    """Test rule: a finding on each kernel's first instruction.

    ## Why is this bad?
    It is not; the command-line tests need a finding whose wording never changes.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        first = rc.function.instructions[0]
        yield self.diagnostic(rc, first, f"first instruction of '{rc.function.name}'",
                              help="nothing to do")


class _Warn(_FirstInstruction):
    __doc__ = _FirstInstruction.__doc__
    id, severity = "test-warn", Severity.WARNING


class _Note(_FirstInstruction):
    __doc__ = _FirstInstruction.__doc__
    id, severity = "test-note", Severity.NOTE


@pytest.fixture
def fake_rules(monkeypatch):
    """Two registered rules for the duration of a test (forked -j workers inherit them)."""
    monkeypatch.setitem(RULES, "test-warn", _Warn)
    monkeypatch.setitem(RULES, "test-note", _Note)


@pytest.fixture
def kernel_file(tmp_path) -> Path:
    path = tmp_path / "k.ptx"
    path.write_text(KERNEL)
    return path


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_exit_status_follows_the_worst_finding(fake_rules, kernel_file, capsys):
    assert run(capsys, "--enable", "test-note", kernel_file)[0] == 0
    code, out, _ = run(capsys, "--enable", "test-warn,test-note", kernel_file)
    assert code == 1
    assert "warning[test-warn]: first instruction of 'k'" in out
    # the text report shows warnings and errors; the notes are counted in one line
    assert "note[test-note]" not in out
    *_, summary, hidden = out.rstrip().splitlines()
    assert summary.startswith("checked 1 file in ")
    assert hidden == "1 note hidden: --severity note shows them"
    code, out, _ = run(capsys, "--enable", "test-warn,test-note", "--severity", "note",
                       kernel_file)
    assert code == 1
    assert "warning[test-warn]: first instruction of 'k'" in out and "note[test-note]" in out
    assert out.rstrip().splitlines()[-1].startswith("checked 1 file in ")


def test_usage_errors_exit_two_without_traceback(kernel_file, capsys):
    for args in (["--no-such-option", kernel_file], [], ["--enable", "no-such-rule", kernel_file],
                 ["--block", "0", kernel_file], ["--block", "64,64", kernel_file],
                 ["--param", "n", kernel_file], ["--extent", "0=1.5", kernel_file],
                 ["--time-budget", "-1", kernel_file], ["-j", "-1", kernel_file],
                 ["--explain", "no-such-rule"]):
        code, _, err = run(capsys, *args)
        assert code == 2, args
        assert "Traceback" not in err and err.strip(), args


def test_list_rules_and_explain(fake_rules, capsys):
    code, out, _ = run(capsys, "--list-rules")
    assert code == 0
    ids = [line.split()[0] for line in out.splitlines()]
    assert {"parse-error", "test-warn", "unmodelled-instruction"} <= set(ids)
    assert ids == sorted(ids)
    code, out, _ = run(capsys, "--list-rules", "--format", "json")
    assert any(r["id"] == "test-warn" and r["severity"] == "warning" for r in json.loads(out))
    code, out, _ = run(capsys, "--explain", "test-warn")
    assert code == 0
    assert out.startswith("test-warn (warning, stable)\n\nTest rule: a finding")
    assert "## Why is this bad?" in out


def test_severity_hides_lower_findings(fake_rules, kernel_file, capsys):
    code, out, _ = run(capsys, "--enable", "test-warn,test-note", "--severity", "error",
                       kernel_file)
    assert code == 0
    assert "test-warn" not in out
    assert out.endswith("\n1 warning and 1 note hidden: --severity note shows them\n")
    code, out, _ = run(capsys, "--enable", "test-warn,test-note", "--severity", "warning",
                       "--format", "gcc", kernel_file)
    assert code == 1
    # the instruction is a load: the finding points at its address, `[n]`
    assert out == f"{kernel_file}:7:20: warning: first instruction of 'k' [test-warn]\n"


def test_enable_and_disable(fake_rules, kernel_file, capsys):
    code, out, _ = run(capsys, "--enable", "test-warn", "--format", "json", kernel_file)
    assert [d["rule"] for d in json.loads(out)["diagnostics"]] == ["test-warn"]
    code, out, _ = run(capsys, "--enable", "test-warn", "--disable", "test-warn",
                       "--format", "json", kernel_file)
    assert code == 0 and json.loads(out)["diagnostics"] == []


def test_output_file(fake_rules, kernel_file, tmp_path, capsys):
    report = tmp_path / "report.sarif"
    code, out, _ = run(capsys, "--enable", "test-warn", "--format", "sarif", "--output", report,
                       kernel_file)
    assert code == 1 and out == ""
    doc = json.loads(report.read_text())
    [result] = doc["runs"][0]["results"]
    assert result["ruleId"] == "test-warn" and result["level"] == "warning"
    code, _, err = run(capsys, "--output", tmp_path / "no" / "dir" / "x.txt", kernel_file)
    assert code == 2 and "cannot write" in err


def test_text_output_file_has_no_colour(fake_rules, kernel_file, tmp_path, capsys):
    report = tmp_path / "report.txt"
    run(capsys, "--enable", "test-warn", "--output", report, kernel_file)
    text = report.read_text()
    assert "warning[test-warn]" in text and "\x1b[" not in text


SAMPLES = [ROOT / "ptx_samples" / "cuda" / n for n in
           ("vector_add.ptx", "transpose.ptx", "reduce.ptx", "histogram.ptx")]


def test_parallel_jobs_give_the_same_report(tmp_path, capsys):
    bad = tmp_path / "bad.ptx"
    bad.write_text(BAD)
    files = [*SAMPLES, bad, tmp_path / "missing.ptx", CLEAN]
    serial = run(capsys, "--format", "json", "-j", "1", *files)
    parallel = run(capsys, "--format", "json", "-j", "2", *files)
    assert serial == parallel
    assert serial[0] == 2
    reported = [d["file"] for d in json.loads(serial[1])["diagnostics"]]
    assert str(bad) in reported


def test_per_file_errors_do_not_stop_the_run(tmp_path, capsys, monkeypatch):
    import ptxlint.lint

    def boom(text, path, options, jobs=1):
        if path.endswith("boom.ptx"):
            raise RuntimeError("kaput")
        return real(text, path, options, jobs)

    real = ptxlint.lint.lint_text
    monkeypatch.setattr(ptxlint.lint, "lint_text", boom)
    (tmp_path / "boom.ptx").write_text(KERNEL)
    code, out, err = run(capsys, "--format", "gcc", tmp_path / "boom.ptx", CLEAN)
    assert code == 2 and "Traceback" not in err
    assert out == (f"{tmp_path / 'boom.ptx'}: error: internal error: RuntimeError: kaput "
                   "[internal-error]\n")


def test_directories_expand_to_their_ptx_files(tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.ptx").write_text(KERNEL)
    (tmp_path / "b.ptx").write_text(KERNEL)
    (tmp_path / "notes.txt").write_text("not ptx")
    code, out, _ = run(capsys, "--parse-only", tmp_path)
    assert code == 0 and "checked 2 files" in out


def test_stdin_json(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(BAD))
    code, out, _ = run(capsys, "--format", "json", "-")
    assert code == 2
    [d] = json.loads(out)["diagnostics"]
    assert d["file"] == "<stdin>" and d["line"] == 7


def test_launch_options_reach_the_analysis(kernel_file, capsys):
    code, out, _ = run(capsys, "--format", "gcc", "--block", "128", "--grid", "4,2",
                       "--param", "n=64", "--param", "0=64", kernel_file)
    assert code == 2 and "[launch-config]" in out and "given twice" in out
    code, out, _ = run(capsys, "--format", "gcc", "--param", "m=1", kernel_file)
    assert code == 2 and "no parameter named 'm'" in out
    code, out, _ = run(capsys, "--format", "gcc", "--block", "128", "--grid", "8",
                       "--dynamic-smem", "0", "--param", "0=64", kernel_file)
    assert (code, out) == (0, "")


def test_kernel_selection(kernel_file, capsys):
    assert run(capsys, "--kernel", "k", kernel_file)[0] == 0
    code, _, err = run(capsys, "--kernel", "nope*", kernel_file)
    assert code == 2 and "no kernel matches --kernel nope*" in err


# ---------------------------------------------------------------- configuration files
def test_config_discovery_and_command_line_override(fake_rules, tmp_path, capsys):
    project = tmp_path / "proj"
    (project / "kernels" / "deep").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.ptxlint]\nenable = ["test-warn", "test-note"]\n'
        'disable = ["test-note"]\nformat = "gcc"\n')
    ptx = project / "kernels" / "deep" / "k.ptx"
    ptx.write_text(KERNEL)
    code, out, _ = run(capsys, ptx)
    assert code == 1 and out == f"{ptx}:7:20: warning: first instruction of 'k' [test-warn]\n"
    # the command line wins: format, and --enable re-enables what the file disables
    code, out, _ = run(capsys, "--format", "json", "--enable", "test-note", ptx)
    assert code == 0 and [d["rule"] for d in json.loads(out)["diagnostics"]] == ["test-note"]
    # a nearer ptxlint.toml takes over
    (project / "kernels" / "ptxlint.toml").write_text('disable = ["test-warn"]\nformat = "json"\n')
    code, out, _ = run(capsys, ptx)
    rules = {d["rule"] for d in json.loads(out)["diagnostics"]}
    assert code == 0 and "test-note" in rules and "test-warn" not in rules


def test_config_launch_tables(tmp_path, capsys):
    (tmp_path / "ptxlint.toml").write_text(
        '[tool.ptxlint]\nformat = "gcc"\n\n[[tool.ptxlint.launch]]\nkernel = "k*"\n'
        'block = [64]\nparams = { nope = 3 }\n')
    ptx = tmp_path / "k.ptx"
    ptx.write_text(KERNEL)
    code, out, _ = run(capsys, ptx)
    assert code == 2 and "no parameter named 'nope'" in out


def test_broken_config_is_reported_once(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.ptxlint]\nseverity = 'loud'\n")
    for name in ("a.ptx", "b.ptx"):
        (tmp_path / name).write_text(KERNEL)
    code, out, _ = run(capsys, "--format", "gcc", tmp_path / "a.ptx", tmp_path / "b.ptx")
    assert code == 2
    assert out == (f"{(tmp_path / 'pyproject.toml').resolve()}: error: [tool.ptxlint]: "
                   "'severity' must be one of note, warning, error, not 'loud' [config-error]\n")
    (tmp_path / "pyproject.toml").write_text("[tool.ptxlint\n")
    code, out, _ = run(capsys, "--format", "gcc", tmp_path / "a.ptx")
    assert code == 2 and ":1:1: error: invalid TOML" in out


# ---------------------------------------------------------------- terminal behaviour
def test_progress_bar_only_on_a_terminal(monkeypatch):
    args = build_parser().parse_args(["a.ptx"])

    class Tty:
        def __init__(self, tty: bool):
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    monkeypatch.setattr("sys.stderr", Tty(True))
    monkeypatch.setattr("sys.stdout", Tty(True))
    assert _progress_wanted(args, 10)
    assert not _progress_wanted(args, 2)  # a few files: no bar
    monkeypatch.setattr("sys.stdout", Tty(False))  # the report is piped
    assert not _progress_wanted(args, 10)
    args.output = "report.txt"
    assert _progress_wanted(args, 10)
    monkeypatch.setattr("sys.stderr", Tty(False))
    assert not _progress_wanted(args, 10)


def test_piped_run_prints_no_progress_and_no_colour(tmp_path):
    files = [str(p) for p in SAMPLES] + [str(CLEAN)]
    env = dict(os.environ, FORCE_COLOR="1")
    env.pop("NO_COLOR", None)
    proc = subprocess.run([sys.executable, "-m", "ptxlint", "--parse-only", *files],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "\x1b[" in proc.stdout  # FORCE_COLOR asks for it even through a pipe
    for extra_env, flag in (({"NO_COLOR": "1"}, []), ({}, ["--no-color"])):
        proc = subprocess.run([sys.executable, "-m", "ptxlint", *flag, "--parse-only", *files],
                              capture_output=True, text=True, env={**env, **extra_env}, cwd=ROOT)
        assert "\x1b[" not in proc.stdout and proc.stderr == ""


def test_version_and_lsp_subcommand(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("ptxlint ")
    pytest.importorskip("pygls", reason="the language server needs pygls")
    assert main(["lsp", "--version"]) == 0


# ---------------------------------------------------------------- the CUDA source of a finding
COLUMN_BAD = ROOT / "ptx_samples" / "bank-conflict" / "column.bad.ptx"
COLUMN_LAUNCH = ("--block", "32,8", "--grid", "32,32", "--param", "2=1024", "--param", "3=1024")
COLUMN_CUDA_LINE = " 18 |         out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];"


def address_column(path: Path, line: int) -> int:
    """The 1-based column of the address operand (`[%rd6]`) on `path`'s line."""
    return path.read_text().splitlines()[line - 1].index("[") + 1


def test_text_report_quotes_the_cuda_line_beside_the_ptx(tmp_path, capsys, monkeypatch):
    # `.file 1 "column.bad.cu"` is relative to the PTX file's folder, not to the cwd
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, *COLUMN_LAUNCH, COLUMN_BAD)
    assert code == 1
    cuda = COLUMN_BAD.with_name("column.bad.cu")
    # the four loads of one CUDA line are one finding, quoting that line once
    assert out.count(f"   ::: {cuda}:18:9\n{'':4}|\n{COLUMN_CUDA_LINE}\n") == 1
    assert out.count(f"--> {COLUMN_BAD}:") == 1
    assert f"--> {COLUMN_BAD}:101:22\n" in out
    assert "warning[bank-conflict]: 32-way shared-memory bank conflict (on 4 instructions)\n" \
        in out
    assert "    = note: also at 106:22, 111:22, 114:22\n" in out


def test_a_moved_checkout_finds_the_cuda_file_by_name(tmp_path, capsys):
    # nvcc wrote an absolute path that no longer exists: the file of that name beside
    # the PTX is quoted, under the name the PTX gives
    ptx = tmp_path / "column.bad.ptx"
    ptx.write_text(COLUMN_BAD.read_text().replace(
        '.file\t1 "column.bad.cu"', '.file\t1 "/old/checkout/column.bad.cu"'))
    assert "/old/checkout/column.bad.cu" in ptx.read_text()
    (tmp_path / "column.bad.cu").write_text(COLUMN_BAD.with_name("column.bad.cu").read_text())
    code, out, _ = run(capsys, *COLUMN_LAUNCH, ptx)
    assert code == 1
    assert out.count(f"   ::: /old/checkout/column.bad.cu:18:9\n{'':4}|\n{COLUMN_CUDA_LINE}\n") \
        == 1  # one finding on four instructions
    # gone altogether: the location is still given, without a source line
    (tmp_path / "column.bad.cu").unlink()
    code, out, _ = run(capsys, *COLUMN_LAUNCH, ptx)
    assert code == 1
    assert out.count("::: /old/checkout/column.bad.cu:18:9\n") == 1
    assert "tile[threadIdx.x][threadIdx.y + j]" not in out


# ---------------------------------------------------------------- --arch
class _ArchProbe(_FirstInstruction):
    __doc__ = _FirstInstruction.__doc__
    id, severity = "test-arch", Severity.NOTE

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        mov = rc.function.instructions[1]  # `mov.u32 %r2, %tid.x;` at 8:2, not an access
        yield self.diagnostic(rc, mov, f"{rc.arch.name}: "
                              f"{rc.arch.max_shared_per_block // 1024} KiB")


def test_arch_option_reaches_the_rules(monkeypatch, kernel_file, capsys):
    """Which architecture the rules are given: the `.target` (sm_80 in KERNEL), the
    configuration's `arch`, and `--arch` over both (the shared memory a block may use
    is the per-architecture figure of docs/arch.md)."""
    monkeypatch.setitem(RULES, "test-arch", _ArchProbe)

    def probe(*args) -> tuple[int, list[str]]:
        code, out, _ = run(capsys, "--enable", "test-arch", "--format", "json", *args,
                           kernel_file)
        return code, [(d["line"], d["column"], d["message"])
                      for d in json.loads(out)["diagnostics"]]

    assert probe() == (0, [(8, 2, "sm_80: 163 KiB")])
    assert probe("--arch", "sm_75") == (0, [(8, 2, "sm_75: 64 KiB")])
    assert probe("--arch", "sm_90a") == (0, [(8, 2, "sm_90: 227 KiB")])  # feature suffix
    assert probe("--arch", "compute_86") == (0, [(8, 2, "sm_86: 99 KiB")])
    (kernel_file.parent / "ptxlint.toml").write_text('arch = "sm_120"\n')
    assert probe() == (0, [(8, 2, "sm_120: 99 KiB")])
    assert probe("--arch", "sm_100") == (0, [(8, 2, "sm_100: 227 KiB")])


def test_unknown_arch_is_a_usage_error(kernel_file, capsys):
    code, out, err = run(capsys, "--format", "gcc", "--arch", "sm_99", kernel_file)
    assert code == 2 and out == ""
    assert "argument --arch: unknown architecture 'sm_99'" in err
    assert "internal-error" not in err


def test_unknown_arch_in_the_config_is_a_config_error(kernel_file, capsys, tmp_path):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(Path(kernel_file).read_text())
    (tmp_path / "ptxlint.toml").write_text('[tool.ptxlint]\narch = "sm_99"\n')
    code, out, _ = run(capsys, "--format", "gcc", str(ptx))
    assert code == 2
    assert out == (f"{tmp_path / 'ptxlint.toml'}: error: arch: unknown architecture 'sm_99' "
                   f"(known: {', '.join(arch_mod.known())}) [config-error]\n")


def test_an_unknown_target_falls_back_with_a_note(capsys, tmp_path):
    """A `.target` newer than ptxlint knows: the default figures, said once per file."""
    text = (ROOT / "ptx_samples" / "cuda" / "vector_add.ptx").read_text()
    ptx = tmp_path / "new.ptx"
    ptx.write_text(re.sub(r"\.target sm_\d+", ".target sm_99", text))
    code, out, _ = run(capsys, "--format", "json", str(ptx))
    notes = [d for d in json.loads(out)["diagnostics"] if d["rule"] == "unknown-target"]
    assert code == 0
    assert [(n["severity"], n["details"]) for n in notes] == \
        [("note", {"target": "sm_99", "assumed": "sm_90"})]


# ---------------------------------------------------------------- --extent
MISSING_GUARD = ROOT / "ptx_samples" / "out-of-bounds" / "missing_guard.bad.ptx"
SCALE_LAUNCH = ("--block", "256", "--grid", "4", "--param", "2=1000")  # 1,024 threads, n=1000


def test_extent_sets_the_buffer_size(capsys):
    """`scale(out, in, n)` reads in[i] and writes out[i] for each of 1,024 threads with
    no `i < n` guard: 4,096 bytes are touched; a 4,000-byte buffer overflows."""
    def findings(*extents) -> tuple[int, list]:
        code, out, _ = run(capsys, "--format", "json", *SCALE_LAUNCH, *extents, MISSING_GUARD)
        return code, [(d["rule"], d["severity"], d["line"], d["column"], d["details"])
                      for d in json.loads(out)["diagnostics"]]

    def oob(line: int, obj: str, size: int) -> tuple:
        return ("out-of-bounds", "error", line, address_column(MISSING_GUARD, line),
                {"object": obj, "size": size, "first_bad_byte": size, "last_byte": 4095,
                 "definite": True})

    assert findings("--extent", "0=4000", "--extent", "1=4000") == (
        1, [oob(50, "scale_param_0", 4000), oob(53, "scale_param_1", 4000)])
    assert findings("--extent", "0=4096", "--extent", "1=4096") == (0, [])
    # by name, and only the short buffer
    assert findings("--extent", "scale_param_0=2000", "--extent", "1=0x1000") == (
        1, [oob(50, "scale_param_0", 2000)])
    # (the sample's launch comment gives buffer.0=4000: the command line overrides it)
    code, out, _ = run(capsys, "--format", "gcc", *SCALE_LAUNCH, "--extent", "1=4000",
                       "--extent", "0=4096", MISSING_GUARD)
    assert code == 1 and out == (
        f"{MISSING_GUARD}:53:{address_column(MISSING_GUARD, 53)}: error: out-of-bounds store: "
        "bytes 4000..4095 of `scale_param_1` (4000 bytes); block (3, 0, 0) thread (232, 0, 0) "
        "reaches byte 4000 in an emulated run of this launch [out-of-bounds]\n")


def test_extent_of_an_unknown_parameter_is_a_launch_config_error(capsys):
    code, out, _ = run(capsys, "--format", "gcc", *SCALE_LAUNCH, "--extent", "nope=4",
                       MISSING_GUARD)
    assert code == 2
    assert "[launch-config]" in out and "no parameter named 'nope'" in out


# ---------------------------------------------------------------- the progress bar drawn
class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_progress_bar_draws_and_leaves_the_report_alone(jobs, tmp_path, capsys, monkeypatch):
    for name in ("TERM", "TTY_INTERACTIVE", "TTY_COMPATIBLE", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    bad = tmp_path / "bad.ptx"
    bad.write_text(BAD)
    files = [*SAMPLES, bad, tmp_path / "missing.ptx", CLEAN]

    def report(stderr: io.StringIO, fmt: str) -> tuple[int, str, str]:
        monkeypatch.setattr("sys.stderr", stderr)
        out = tmp_path / f"report.{fmt}"
        code = main(["--format", fmt, "-j", jobs, "--output", str(out), *map(str, files)])
        assert capsys.readouterr().out == ""
        return code, out.read_text(), stderr.getvalue()

    for fmt in ("json", "gcc"):
        drawn = report(_Terminal(), fmt)
        plain = report(io.StringIO(), fmt)
        assert drawn[:2] == plain[:2]  # exit status and report
        assert drawn[0] == 2 and str(bad) in drawn[1]
        assert plain[2] == ""
        bar = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn[2])
        assert "checking" in bar and f"{len(files)}/{len(files)}" in bar
        assert drawn[2].endswith("\x1b[2K")  # transient: the bar is erased at the end


# ---------------------------------------------------------------- the command's process
import gc  # noqa: E402

from ptxlint.cli import run as cli_run  # noqa: E402
from ptxlint.gcpause import collector_paused  # noqa: E402


def test_command_exits_with_its_status_and_the_whole_report(tmp_path, capsys):
    """`ptxlint` leaves without tearing the interpreter down (`console_main`): the
    report must still be whole, on a pipe and in an --output file, and the status
    the one `main` returns."""
    bad = ROOT / "ptx_samples" / "bank-conflict" / "column.bad.ptx"
    code, expected, _ = run(capsys, "--format", "json", bad, *SAMPLES)
    assert code == 1 and json.loads(expected)["diagnostics"]
    proc = subprocess.run([sys.executable, "-m", "ptxlint", "--format", "json", str(bad),
                           *map(str, SAMPLES)], capture_output=True, text=True, cwd=ROOT)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, expected, "")
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "ptxlint", "--format", "json", "-o",
                           str(out), str(bad), *map(str, SAMPLES)], capture_output=True,
                          text=True, cwd=ROOT)
    assert (proc.returncode, proc.stdout, out.read_text()) == (1, "", expected)


@pytest.mark.slow
def test_a_run_stops_the_collector_and_collects_between_large_files(monkeypatch, capsys):
    """The collector is off for a run, but the modules of files done are collected
    once they add up to COLLECT_AFTER_BYTES of PTX; afterwards it is as it was."""
    collections = []

    def seen(phase, info):
        if phase == "start" and not gc.isenabled():  # asked for by the run
            collections.append(info["generation"])

    size = SAMPLES[0].stat().st_size
    monkeypatch.setattr(cli_run, "COLLECT_AFTER_BYTES", 2 * size)
    monkeypatch.setattr(cli_run, "_uncollected_bytes", 0)
    gc.callbacks.append(seen)
    try:
        assert gc.isenabled()
        main(["--parse-only", *[str(SAMPLES[0])] * 5])
    finally:
        gc.callbacks.remove(seen)
    capsys.readouterr()
    # files 1 and 2 add up to the limit: collected before file 3, and again before 5
    assert collections == [2, 2]
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


# ---------------------------------------------------------------- --stdin-filename
def test_stdin_filename_is_shown_in_every_format(capsys, monkeypatch, tmp_path):
    """The name replaces `<stdin>` wherever a path is shown: text, gcc, json, github,
    and SARIF's URI (relative to the working directory, never `%3Cstdin%3E`)."""
    monkeypatch.chdir(tmp_path)
    name = "kernels/gen/k.ptx"
    for fmt in ("gcc", "json", "sarif", "github", "text"):
        monkeypatch.setattr("sys.stdin", io.StringIO(BAD))
        code, out, _ = run(capsys, "--format", fmt, "--stdin-filename", name, "-")
        assert code == 2, fmt
        assert "<stdin>" not in out and "%3Cstdin%3E" not in out, fmt
        assert name in out, fmt
    monkeypatch.setattr("sys.stdin", io.StringIO(BAD))
    code, out, _ = run(capsys, "--format", "sarif", "--stdin-filename", name, "-")
    [result] = json.loads(out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": name, "uriBaseId": "%SRCROOT%"}


def test_stdin_filename_alone_reads_standard_input(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(BAD))
    code, out, _ = run(capsys, "--format", "gcc", "--stdin-filename", "a/b.ptx")
    assert code == 2 and out.startswith("a/b.ptx:7:15: error:")


def test_stdin_filename_needs_standard_input_among_the_files(kernel_file, capsys):
    code, _, err = run(capsys, "--stdin-filename", "a.ptx", kernel_file)
    assert code == 2 and "give '-' among the files" in err
    code, _, err = run(capsys, "--stdin-filename", "", "-")
    assert code == 2 and "--stdin-filename needs the name of a file" in err


def test_stdin_filename_finds_its_configuration(fake_rules, tmp_path, capsys, monkeypatch):
    """The configuration is the one governing the named path, not the working
    directory's; the CUDA file a `.loc` names is looked for beside it too."""
    project = tmp_path / "proj"
    (project / "kernels").mkdir(parents=True)
    (project / "ptxlint.toml").write_text('enable = ["test-warn"]\nformat = "gcc"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr("sys.stdin", io.StringIO(KERNEL))
    name = str(project / "kernels" / "k.ptx")  # does not exist: only its directory counts
    code, out, _ = run(capsys, "--stdin-filename", name, "-")
    assert code == 1 and out == f"{name}:7:20: warning: first instruction of 'k' [test-warn]\n"


# ---------------------------------------------------------------- --format github / html
def test_github_format_from_the_command_line(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run(capsys, "--format", "github", "--block", "32,8", "--grid", "32,32",
                       "--param", "2=1024", "--param", "3=1024",
                       "ptx_samples/bank-conflict/column.bad.ptx")
    lines = out.splitlines()
    assert code == 1 and len(lines) == 1  # four loads of one CUDA line: one annotation
    for line in lines:
        assert line.startswith("::warning file=ptx_samples/bank-conflict/column.bad.ptx,"
                               "line=101,")
        assert (",title=ptxlint (bank-conflict)::32-way shared-memory bank conflict "
                "(on 4 instructions)%0A") in line
        assert "%0Aalso at 106:22, 111:22, 114:22%0A" in line
        assert "CUDA source: ptx_samples/bank-conflict/column.bad.cu:18" in line


def test_html_format_from_the_command_line(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    out_file = tmp_path / "report.html"
    code, out, _ = run(capsys, "--format", "html", "-o", out_file, "--block", "32,8",
                       "--grid", "32,32", "--param", "2=1024", "--param", "3=1024",
                       "ptx_samples/bank-conflict/column.bad.ptx")
    page = out_file.read_text()
    assert code == 1 and out == ""
    assert page.startswith("<!DOCTYPE html>") and page.count('<svg class="warp bank-conflict"') == 1
    assert "also at 106:22, 111:22, 114:22" in page
    assert "out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];" in page
