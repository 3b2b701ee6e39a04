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


def _findings(path, rule: str) -> list:
    found = [d for d in lint_sample(path).diagnostics if d.rule == rule]
    assert found
    return found


def _underlined(path, span) -> str:
    """The text of a one-line span."""
    assert span.end_line == span.line
    return _line(path, span.line)[span.col - 1:span.end_col - 1]


def test_a_memory_finding_underlines_the_address():
    path = SAMPLES / "bank-conflict" / "column.bad.ptx"
    for d in _findings(path, "bank-conflict"):
        line = _line(path, d.line)
        assert _underlined(path, d.span) == line[line.index("["):line.index("]") + 1]


def test_a_race_points_at_both_addresses():
    path = SAMPLES / "shared-memory-race" / "arms.bad.ptx"
    [d] = _findings(path, "shared-memory-race")
    [other] = d.related
    assert (_underlined(path, d.span), _underlined(path, other.span)) == ("[%r4]", "[%r7]")


def test_a_branch_finding_underlines_the_instruction():
    path = SAMPLES / "divergent-bra-uni" / "tid_guard.bad.ptx"
    for d in _findings(path, "divergent-bra-uni"):
        assert _underlined(path, d.span) == _line(path, d.line).split("//")[0].strip()


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
