"""Where findings point: a finding about a memory access underlines its address operand
(and so does a related location at another access); other findings the instruction."""
from __future__ import annotations

import pytest

from ptxlint.ir.build import parse_module
from ptxlint.lint import lint_module
from ptxlint.parse.lexer import operand_offsets

from ..conftest import ROOT
from ..expectations import lint_sample, options_for

SAMPLES = ROOT / "ptx_samples"


@pytest.mark.parametrize("statement,operands", [
    ("ld.shared.f32 \t%f5, [%r23];", ["%f5", "[%r23]"]),
    ("@!%p1 st.global.v2.f32 [%rd1+8], {%f1, %f2};", ["[%rd1+8]", "{%f1, %f2}"]),
    ("@%p bra $L1;", ["$L1"]),
    ("call.uni (%r1), f, (%r2, %r3);", ["(%r1)", "f", "(%r2, %r3)"]),
    ("mov.u32 %r1, /* a, b */ %tid.x;", ["%r1", "%tid.x"]),
    ("ret;", []),
])
def test_operand_offsets(statement: str, operands: list[str]):
    text = "\t" + statement + "  // after"
    start, end = 1, 1 + len(statement)
    assert [text[a:b] for a, b in operand_offsets(text, start, end)] == operands


def _line(path, n: int) -> str:
    return path.read_text().splitlines()[n - 1]


def test_a_memory_finding_underlines_the_address():
    path = SAMPLES / "bank-conflict" / "column.bad.ptx"
    found = [d for d in lint_sample(path).diagnostics if d.rule == "bank-conflict"]
    assert found
    for d in found:
        line = _line(path, d.line)
        assert d.span.end_line == d.line
        assert line[d.column - 1:d.span.end_col - 1] == \
            line[line.index("["):line.index("]") + 1]


def test_a_race_points_at_both_addresses():
    path = SAMPLES / "shared-memory-race" / "arms.bad.ptx"
    [d] = [d for d in lint_sample(path).diagnostics if d.rule == "shared-memory-race"]
    here = _line(path, d.line)
    assert here[d.column - 1:d.span.end_col - 1] == "[%r4]"
    [other] = d.related
    there = _line(path, other.span.line)
    assert there[other.span.col - 1:other.span.end_col - 1] == "[%r7]"


def test_a_branch_finding_underlines_the_instruction():
    path = SAMPLES / "divergent-bra-uni" / "tid_guard.bad.ptx"
    found = [d for d in lint_sample(path).diagnostics if d.rule == "divergent-bra-uni"]
    assert found
    for d in found:
        line = _line(path, d.line)
        statement = line.split("//")[0].strip()
        assert line[d.column - 1:d.span.end_col - 1] == statement


def test_without_the_text_the_instruction_is_the_span():
    """A module built without its text (by hand, say): findings fall back to the
    whole instruction."""
    path = SAMPLES / "bank-conflict" / "column.bad.ptx"
    text = path.read_text()
    module = parse_module(text, str(path)).module
    module.source = None
    options = options_for(text)
    found = [d for ds in lint_module(module, options) for d in ds if d.rule == "bank-conflict"]
    assert found
    for d in found:
        line = _line(path, d.line)
        assert d.column == len(line) - len(line.lstrip()) + 1
