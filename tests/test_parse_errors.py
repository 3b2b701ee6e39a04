"""Malformed PTX: one diagnostic per defect, at the right line and column, and
parsing goes on to report later defects."""
from __future__ import annotations

import pytest

from ptxlint.ir.build import parse_module

HEAD = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
BODY_LINE = 6  # first line after HEAD


def body(*lines: str) -> str:
    return HEAD + "".join(l + "\n" for l in lines) + "}\n"


CASES = [
    # (source, line, column, message fragment)
    pytest.param(body("\t.reg .b32 %r<3>;", "\tmov.u32 %r1, %tid.x", "\tret;"),
                 BODY_LINE + 1, 21, "expected ';'", id="missing-semicolon"),
    pytest.param(body("\t.reg .b32 %r<3>;", "\tadd.s32 %r1, %r2, %r7;", "\tret;"),
                 BODY_LINE + 1, 20, "register '%r7' is not declared", id="undeclared-register"),
    pytest.param(body("\t.reg .pred %p<2>;", "\t@%p1 bra $L__nowhere;", "\tret;"),
                 BODY_LINE + 1, 11, "label '$L__nowhere' is used but never defined",
                 id="undefined-label"),
    pytest.param(body("\t.reg .b32 %r<3>;", "\tfrobnicate.u32 %r1, %r2;", "\tret;"),
                 BODY_LINE + 1, 2, "unknown instruction 'frobnicate.u32'", id="unknown-opcode"),
    pytest.param(body("\t.reg .b32 %r<3>;", "\tadd.s32.glbal %r1, %r1, %r2;", "\tret;"),
                 BODY_LINE + 1, 2, "does not take the modifier '.glbal'", id="unknown-modifier"),
    pytest.param(body("\t.reg .b32 %r<3>;", "\tadd.s32 %r1, %r2;", "\tret;"),
                 BODY_LINE + 1, 2, "'add' takes 3 operands, found 2", id="arity"),
    pytest.param(body("\t.reg .b32 %r<3>;", "\tmov.u32 %r1, [%r2;", "\tret;"),
                 BODY_LINE + 1, 19, "expected", id="bad-operand"),
    pytest.param(body("\t.reg .b32 %r<3>;", "\tatom.global.and.u32 %r1, [p], 1;", "\tret;"),
                 BODY_LINE + 1, 2, "'atom.and' takes .b32 or .b64, not .u32",
                 id="atomic-op-type"),
    pytest.param(body("\t.reg .b32 %r<3>;", "\tred.shared.dec.s32 [p], 1;", "\tret;"),
                 BODY_LINE + 1, 2, "'red.dec' takes .u32, not .s32", id="reduction-op-type"),
    pytest.param(body("\t.reg .b32 %r<3>;", "\t.frob .b32 %x;", "\tret;"),
                 BODY_LINE + 1, 2, "unknown qualifier '.frob'", id="unknown-directive"),
    pytest.param(HEAD + "\t.reg .b32 %r<3>;\n\tret;\n", 5, 1, "unclosed '{'", id="unclosed-brace"),
    pytest.param(body("\tret;") + "}\n", BODY_LINE + 2, 1, "unmatched '}'", id="stray-brace"),
    pytest.param(body("\t.reg .b32 %r<3>;", "\tmov.u32 %r1, 12#;", "\tret;"),
                 BODY_LINE + 1, 17, "unexpected character '#'", id="bad-character"),
    pytest.param(body('\t.pragma "nounroll;', "\tret;"), BODY_LINE, 10, "unterminated string",
                 id="unterminated-string"),
    pytest.param(body("\t.reg .b32 %r<3>;", "\tld.global.u32 %r1, [sym];", "\tret;"),
                 BODY_LINE + 1, 22, "'sym' is not declared", id="undeclared-symbol"),
    pytest.param(body("\t.reg .b32 %r<3>;", "$L1:", "$L1:", "\tret;"),
                 BODY_LINE + 2, 1, "label '$L1' is defined twice", id="duplicate-label"),
]


@pytest.mark.parametrize("source, line, column, fragment", CASES)
def test_error_position(source: str, line: int, column: int, fragment: str):
    result = parse_module(source, "bad.ptx")
    errors = [d for d in result.diagnostics if d.severity.name == "ERROR"]
    assert errors, "expected a parse error"
    hits = [d for d in errors if fragment in d.message]
    assert hits, [f"{d.line}:{d.column} {d.message}" for d in errors]
    d = hits[0]
    assert (d.line, d.column) == (line, column), f"{d.line}:{d.column} {d.message}"
    assert d.rule == "parse-error" and d.file == "bad.ptx"
    assert d.details["excerpt"] == source.splitlines()[line - 1]


def test_recovers_and_reports_every_error():
    src = body("\t.reg .b32 %r<3>;", "\tmov.u32 %r1, %r9;", "\tadd.s32 %r1 %r2;",
               "\tsub.s32 %r1, %r1, %r8;", "\tret;")
    result = parse_module(src, "bad.ptx")
    lines = sorted(d.line for d in result.diagnostics)
    assert lines == [BODY_LINE + 1, BODY_LINE + 2, BODY_LINE + 3]
    # the good statements around them are still in the IR
    fn = result.module.functions[0]
    assert [i.opcode for i in fn.instructions] == ["ret"]


def test_missing_semicolon_keeps_both_statements():
    src = body("\t.reg .b32 %r<3>;", "\tmov.u32 %r1, %tid.x", "\tadd.s32 %r2, %r1, 1;", "\tret;")
    result = parse_module(src, "bad.ptx")
    assert [d.message for d in result.diagnostics] == ["expected ';' at end of statement"]
    ops = [i.opcode for i in result.module.functions[0].instructions]
    assert ops == ["mov", "add", "ret"]


@pytest.mark.parametrize("depth", [8, 40])
def test_deeply_nested_constant_expressions(depth: int):
    """Eleven precedence levels and no packrat memoisation: parentheses nested 40 deep
    still parse (backtracking through the levels would never finish), and an error
    after them is still found where it is."""
    nested = "(" * depth + "1+2" + ")" * depth
    good = parse_module(body("\t.reg .b32 %r<3>;", f"\tmov.u32 %r1, {nested}*4;", "\tret;"),
                        "deep.ptx")
    assert good.diagnostics == []
    [mov, _] = good.module.functions[0].instructions
    assert mov.operands[1].value == 12
    bad = parse_module(body("\t.reg .b32 %r<3>;", f"\tmov.u32 %r1, {nested} 7;", "\tret;"),
                       "deep.ptx")
    [d] = bad.diagnostics
    assert (d.line, d.column) == (BODY_LINE + 1, 15 + len(nested) + 1)


def test_a_lone_percent_is_not_a_register_shape():
    """Statements are parsed once per shape (token kinds); `%` alone is an operator, so
    a statement with one must not share a shape, and its error, with a register's."""
    odd = parse_module(body("\t.reg .b32 %r<3>;", "\tmov.u32 %r1, % ret;"), "odd.ptx")
    assert [(d.line, d.column) for d in odd.diagnostics] == [(BODY_LINE + 1, 15)]
    src = body("\t.reg .b32 %r<3>;", "\tmov.u32 %r1, %tid.x", "\tret;")
    [d] = parse_module(src, "bad.ptx").diagnostics
    assert (d.line, d.column, d.message) == (BODY_LINE + 1, 21, "expected ';' at end of statement")
