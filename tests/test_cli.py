"""`ptxlint --parse-only`: exit status and report shapes."""
from __future__ import annotations

import json
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
    assert out[3] == "7 | \tmov.u32 %r1, %r5;"
    assert out[4] == "  | \t             ^^^"


def test_unreadable_file_exits_two(tmp_path, capsys):
    assert main(["--parse-only", str(tmp_path / "missing.ptx")]) == 2
    assert "cannot read file" in capsys.readouterr().out


def test_stdin_and_console_script():
    proc = subprocess.run([sys.executable, "-m", "ptxlint", "--parse-only", "-"],
                          input=BAD, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "--> <stdin>:7:15" in proc.stdout
    assert "Traceback" not in proc.stderr
