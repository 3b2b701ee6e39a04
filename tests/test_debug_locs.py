"""`.loc` lines: the position each instruction carries, whichever way the line is
spelled (nvcc's spelling is read directly, the others through the grammar), and a
precise error for a malformed one."""
from __future__ import annotations

import pytest

from ptxlint.ir.build import parse_module
from ptxlint.ir.instruction import DebugLoc

HEAD = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"


def loc_of(line: str):
    r = parse_module(HEAD + line + "\n\tret;\n}\n", "t.ptx")
    return r.module.functions[0].instructions[0].loc, r.diagnostics


@pytest.mark.parametrize("line, expected", [
    ("\t.loc\t1 73 0", DebugLoc(1, 73, 0)),
    ("\t.loc\t2 105", DebugLoc(2, 105, 0)),
    ("\t.loc\t3 140 5, function_name $L__info_string0, inlined_at 2 112 5",
     DebugLoc(3, 140, 5, DebugLoc(2, 112, 5), "$L__info_string0")),
    ("  .loc  12  34  56 ,  function_name  a_b ,  inlined_at  1  2  3",
     DebugLoc(12, 34, 56, DebugLoc(1, 2, 3), "a_b")),
    ("\t.loc 1 010 0", DebugLoc(1, 8, 0)),  # a leading 0 is octal
    ("\t.loc 0x1 2 3", DebugLoc(1, 2, 3)),
    ("\t.loc 1 2 3, inlined_at 4 5 6", DebugLoc(1, 2, 3, DebugLoc(4, 5, 6))),
    ("\t.loc 1 2 3, function_name f+4, inlined_at 7 8 9",
     DebugLoc(1, 2, 3, DebugLoc(7, 8, 9), "f")),
    ("\t.loc 1 2 3 // where", DebugLoc(1, 2, 3)),
], ids=["nvcc", "no-column", "inlined", "spaces", "octal", "hex", "inlined-only",
        "function-offset", "comment"])
def test_loc_line(line: str, expected: DebugLoc):
    loc, diagnostics = loc_of(line)
    assert diagnostics == []
    assert loc == expected


def test_repeated_loc_lines_share_one_position():
    r = parse_module(HEAD + "\t.loc 1 2 3\n\tret;\n\t.loc 1 2 3\n\tret;\n}\n", "t.ptx")
    first, second = r.module.functions[0].instructions
    assert first.loc == DebugLoc(1, 2, 3) and second.loc is first.loc


@pytest.mark.parametrize("line, column, fragment", [
    ("\t.loc 1 x", 9, "expected integer, found 'x'"),
    ("\t.loc 1 2 3 4", 13, "unexpected token, found '4'"),
    ("\t.loc 1", 8, "expected integer after '1'"),  # just past the '1'
])
def test_malformed_loc_line(line: str, column: int, fragment: str):
    loc, diagnostics = loc_of(line)
    assert loc is None
    assert [(d.line, d.column) for d in diagnostics] == [(6, column)]
    assert fragment in diagnostics[0].message
