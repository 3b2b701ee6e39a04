"""The lint's slice (`interp/relevance.py`): what it leaves out, and that leaving it out
changes no finding."""
from __future__ import annotations

from pathlib import Path

import pytest

from ptxlint import lint
from ptxlint.analysis import analyze
from ptxlint.interp.relevance import sliced_out
from ptxlint.interp.facts import FixpointParams
from ptxlint.ir.build import parse_module
from ptxlint.launch import LaunchConfig

from ..conftest import sample_files
from ..expectations import options_for

HEAD = ".version 9.0\n.target sm_90\n.address_size 64\n"
KERNEL = HEAD + """.visible .entry k(.param .u64 buf, .param .u32 n)
{
\t.reg .pred %p<4>;
\t.reg .b32 %r<16>;
\t.reg .f32 %f<8>;
\t.reg .b64 %rd<8>;
\tld.param.u64 %rd1, [buf];
\tcvta.to.global.u64 %rd2, %rd1;
\tld.param.u32 %r1, [n];
\tmov.u32 %r2, %tid.x;
\tsetp.ge.u32 %p1, %r2, %r1;
\t@%p1 bra $L_done;
\tmul.wide.u32 %rd3, %r2, 4;
\tadd.s64 %rd4, %rd2, %rd3;
\tld.global.f32 %f1, [%rd4];
\tmul.f32 %f2, %f1, 0f40000000;
\tadd.s32 %r3, %r2, 7;
\tshl.b32 %r4, %r3, 1;
\tcvt.rn.f32.u32 %f3, %r4;
\tadd.f32 %f4, %f2, %f3;
\tst.global.f32 [%rd4], %f4;
$L_done:
\tret;
}
"""


def _function(text: str = KERNEL):
    result = parse_module(text, "k.ptx")
    assert result.diagnostics == []
    return result.module.functions[0]


def test_values_only_stored_are_sliced_out():
    fn = _function()
    out = {str(i) for i in fn.instructions if id(i) in sliced_out(fn)}
    # the stored value and everything computed only for it; the load itself stays
    # (its address is read by the rules) but its result is not needed
    assert out == {"ld.global.f32 %f1, [%rd4];", "mul.f32 %f2, %f1, 0f40000000;",
                   "add.s32 %r3, %r2, 7;", "shl.b32 %r4, %r3, 1;",
                   "cvt.rn.f32.u32 %f3, %r4;", "add.f32 %f4, %f2, %f3;"}


def test_sliced_registers_are_unknown_and_the_rest_exact():
    fn = _function()
    launch = LaunchConfig(block=(128, 1, 1), params={"n": 100}, extents={"buf": 400})
    full = analyze(fn, launch, params=FixpointParams())
    sliced = analyze(fn, launch, params=FixpointParams(rules_only=True))
    store = fn.instructions[-2]
    before_full = full.facts.state_before(store)
    before_sliced = sliced.facts.state_before(store)
    assert before_full["%r4"].si.lo == 14 and before_sliced["%r4"].is_top
    for key in ("%rd4", "%r2", "%p1"):
        assert before_sliced[key] == before_full[key]
    [a_full] = full.facts.accesses[-1:]
    [a_sliced] = sliced.facts.accesses[-1:]
    assert a_sliced.address == a_full.address


def test_carry_chain_is_kept_for_an_address():
    text = HEAD + """.visible .entry k(.param .u64 buf)
{
\t.reg .b32 %r<8>;
\t.reg .b64 %rd<8>;
\tld.param.u64 %rd1, [buf];
\tmov.u32 %r1, %tid.x;
\tadd.cc.u32 %r2, %r1, 4;
\taddc.u32 %r3, 0, 0;
\tmov.b64 %rd2, {%r2, %r3};
\tadd.s64 %rd3, %rd1, %rd2;
\tst.global.u32 [%rd3], %r1;
\tret;
}
"""
    fn = _function(text)
    assert sliced_out(fn) == frozenset()


def test_operand_keys_match_the_operand_accessors():
    for path in sample_files():
        result = parse_module(path.read_text(), str(path))
        for fn in result.module.functions:
            for insn in fn.instructions:
                assert insn.def_keys == tuple(r.key for r in insn.defs), (path, str(insn))
                assert insn.use_keys == tuple(r.key for r in insn.uses), (path, str(insn))


def _diagnostics(path: Path, monkeypatch, rules_only: bool) -> list[tuple]:
    monkeypatch.setattr(lint, "analysis_params", lambda budget: FixpointParams(
        time_budget=budget, rules_only=rules_only))
    text = path.read_text()
    report = lint.lint_text(text, str(path), options_for(text))
    return [(d.rule, d.line, d.column, d.severity, d.message, d.details)
            for d in report.diagnostics]


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in sample_files() if "syntax" not in p.parts],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_slice_changes_no_finding(path: Path, monkeypatch):
    assert _diagnostics(path, monkeypatch, True) == _diagnostics(path, monkeypatch, False)
