"""The parser on hostile input: constant expressions of any shape parse in linear time
with every pyparsing version the project allows, a file's parse errors and their
excerpts are bounded, deep nesting is reported where it happens, and a file that ptxas
would reject for its header (.version, .target) or an unterminated `.section` is an
error with a line and column."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxlint.ir.build import EXCERPT_CHARS, MAX_PARSE_ERRORS, parse_module
from ptxlint.ir.operands import Immediate
from ptxlint.lint import lint_text

HEAD = ".version 9.0\n.target sm_90\n.address_size 64\n"


def kernel(*lines: str) -> str:
    return (HEAD + ".visible .entry k()\n{\n\t.reg .b32 %r<4>;\n"
            + "".join(f"\t{line}\n" for line in lines) + "\tret;\n}\n")


# ---- constant expressions ----------------------------------------------------------------
BINARY = ["*", "/", "%", "+", "-", "<<", ">>", "&", "^", "|"]


@st.composite
def expressions(draw, depth: int = 0) -> tuple[str, int]:
    """(PTX text, value) of an integer constant expression; values stay small and
    divisors non-zero, so the value is the one PTX and Python agree on."""
    if depth >= 6 or draw(st.booleans()):
        n = draw(st.integers(0, 20))
        return str(n), n
    kind = draw(st.sampled_from(["paren", "unary", "binary"]))
    text, value = draw(expressions(depth + 1))
    if kind == "paren":
        return f"({text})", value
    if kind == "unary":
        return f"~({text})", ~value
    op = draw(st.sampled_from(BINARY))
    right_text, right = draw(expressions(depth + 1))
    if op in ("/", "%") and right <= 0 or op in ("<<", ">>") and not 0 <= right < 8:
        return f"({text}) + ({right_text})", value + right
    py = {"/": "//"}.get(op, op)
    return f"({text}) {op} ({right_text})", eval(f"({value}) {py} ({right})")  # noqa: S307


@settings(max_examples=150, deadline=None)
@given(expressions())
def test_constant_expressions_parse_to_their_value(expr):
    text, value = expr
    # (`0 +` first: a lone parenthesised operand reads as an argument list)
    result = parse_module(kernel(f"mov.u32 %r1, 0 + {text};"), "e.ptx")
    assert not result.diagnostics, result.diagnostics
    mov = result.module.entries[0].body[-2]
    assert mov.operands[1] == Immediate(value, mov.operands[1].text)


# Shapes that sent pyparsing 3.1-3.3.2 (the old grammar's `infix_notation`) into
# exponential time and unbounded memory; in a child process with a time limit, so a
# regression fails instead of hanging the suite.
SLOW_SHAPES = [
    "mov.u32 %r1, (1+2)*4;",
    "mov.u32 %r1, ((((((1+2)*3)-4)<<1)|7)&255)^3;",
    "mov.u32 %r1, " + "(" * 30 + "1" + "+1)" * 30 + ";",
    "mov.u32 %r1, " + " + ".join(f"({i}*{i})" for i in range(200)) + ";",
]


def test_nested_expressions_parse_quickly_in_a_child_process():
    script = textwrap.dedent(f"""
        from ptxlint.ir.build import parse_module
        for line in {SLOW_SHAPES!r}:
            r = parse_module({HEAD!r} + ".visible .entry k()\\n{{\\n.reg .b32 %r<4>;\\n"
                             + line + "\\nret;\\n}}\\n", "e.ptx")
            assert not r.diagnostics, r.diagnostics
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


def test_nesting_too_deep_is_reported_where_it_happens():
    line = "mov.u32 %r1, " + "(" * 3000 + "1" + ")" * 3000 + ";"
    result = parse_module(kernel(line), "deep.ptx")
    (d,) = result.diagnostics
    assert (d.line, d.column) == (7, 1 + len("mov.u32 %r1, ") + 3000)
    assert d.message == "brackets nested 3000 deep: too deep to parse"


# ---- bounded errors -------------------------------------------------------------------------
def test_a_long_line_of_errors_gives_bounded_diagnostics_and_excerpts():
    line = "mov.u32 %r1, ); " * 20_000  # 320 kB on one line, one error per statement
    report = lint_text(kernel(line), "long.ptx")
    errors = report.diagnostics
    assert len(errors) == MAX_PARSE_ERRORS + 1
    assert all(d.rule == "parse-error" and d.line == 7 for d in errors)
    assert errors[1].column == 1 + 1 + len("mov.u32 %r1, ); ") + len("mov.u32 %r1, ")
    assert errors[1].message == "expected an operand, found ')'" or \
        errors[1].message == "expected operand, found ')'"
    assert all(len(d.details["excerpt"]) <= EXCERPT_CHARS for d in errors[:-1])
    # the excerpt is cut around the error's column: it shows the token
    for d in errors[:-1]:
        start = d.details.get("excerpt_col", 1)
        assert d.details["excerpt"][d.column - start] == ")"
    last = errors[-1]
    assert last.message == f"{20_000 - MAX_PARSE_ERRORS} more parse errors not shown " \
                           f"(the first {MAX_PARSE_ERRORS} are)"
    assert last.details == {"hidden": 20_000 - MAX_PARSE_ERRORS}


def test_the_text_report_shows_a_window_of_a_long_line():
    from ptxlint.report import text

    line = "mov.u32 %r1, ); " * 20_000
    report = lint_text(kernel(line), "long.ptx")
    out = text.render(report.diagnostics[:1], {"long.ptx": report.source})
    assert max(map(len, out.splitlines())) < 1100
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("7 |"))
    shown, marks = lines[at:at + 2]
    assert shown.startswith("7 | \tmov.u32 %r1, )") and marks.index("^") == shown.index(")")


def test_a_huge_token_is_quoted_short():
    result = parse_module(kernel("mov.u32 %r1, %r2 " + "x" * 100_000 + ";"), "tok.ptx")
    (d,) = result.diagnostics
    assert len(d.message) < 120 and d.message.endswith("...'")


# ---- what ptxas rejects -------------------------------------------------------------------
@pytest.mark.parametrize("text, line, column, message", [
    ("", 1, 1, "missing .version and .target directives at the start of the file"),
    ("// only a comment\n", 1, 1,
     "missing .version and .target directives at the start of the file"),
    (".target sm_80\n.address_size 64\n", 1, 1,
     "missing .version directive at the start of the file"),
    (".version 8.0\n.address_size 64\n", 1, 1,
     "missing .target directive at the start of the file"),
    (".version 99.9\n.target sm_80\n", 1, 10,
     "unsupported .version 99.9 (PTX ISA 1.0 to 9.x is known)"),
    (".version 8.0\n.target potato\n", 2, 9, "unknown .target 'potato' "
     "(expected sm_XX, compute_XX or a target option such as debug)"),
    (HEAD + ".section .debug_info\n{\n.b32 1\n", 4, 1,
     "unterminated '.section': expected '}' before end of file"),
])
def test_a_module_ptxas_rejects_is_a_parse_error(text, line, column, message):
    result = parse_module(text, "m.ptx")
    assert [(d.rule, d.line, d.column, d.message) for d in result.diagnostics] == [
        ("parse-error", line, column, message)]


@pytest.mark.parametrize("header", [
    ".version 9.5\n.target sm_100a\n", ".version 7.8\n.target sm_90a, texmode_independent\n",
    ".version 8.0\n.target sm_80, debug\n", ".version 9.0\n.target compute_90\n"])
def test_headers_ptxas_accepts_or_newer_minor_versions_are_not_errors(header):
    assert parse_module(header + ".address_size 64\n", "m.ptx").diagnostics == []


def test_an_unknown_architecture_note_points_at_the_target():
    report = lint_text(".version 8.0\n.target sm_999\n.address_size 64\n"
                       ".visible .entry k()\n{\n\tret;\n}\n", "t.ptx")
    (note,) = report.diagnostics
    assert (note.rule, note.line, note.column) == ("unknown-target", 2, 9)
