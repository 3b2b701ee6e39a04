"""Kernels and a test rule shared by the quiet-by-default tests (grouping, suppression,
launches, the command line's defaults): a rule whose findings never change wording, and
hand-written PTX whose `.loc` lines say which CUDA line each load comes from."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ptxlint.diagnostics import Diagnostic, Severity
from ptxlint.rules.base import RULES, Rule, RuleContext

from .conftest import ROOT

DATA = ROOT / "tests" / "data"
TEMPLATES = DATA / "templates.ptx"  # nvcc -lineinfo: two instances of one template
TEMPLATES_DEBUG = DATA / "templates_debug.ptx"  # nvcc -G: the same, with DWARF


class _EachLoad(Rule):
    """Test rule: a finding on every `ld`, numbered in the kernel.

    ## Why is this bad?
    It is not; the tests need findings on chosen lines whose wording never changes.
    """

    id, severity = "test-load", Severity.WARNING

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        loads = [i for i in rc.function.instructions if i.opcode == "ld"]
        for number, insn in enumerate(loads, 1):
            yield self.diagnostic(rc, insn, f"load {number} of '{rc.function.name}'",
                                  details={"number": number})


class _EachStore(_EachLoad):
    __doc__ = _EachLoad.__doc__
    id, severity = "test-store", Severity.NOTE

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        for insn in rc.function.instructions:
            if insn.opcode == "st":
                yield self.diagnostic(rc, insn, "a store")


@pytest.fixture
def test_rules(monkeypatch):
    monkeypatch.setitem(RULES, "test-load", _EachLoad)
    monkeypatch.setitem(RULES, "test-store", _EachStore)


# Two kernels, a template's two instances: CUDA line 3 gives the loads on PTX lines 12
# and 13 of `_Z4sumsPfi` and line 26 of `_Z4sumsPdi`; CUDA line 4 the load on PTX line
# 15 and the store on line 16; CUDA line 2 the parameter load on line 24.
LOCS = """.version 9.0
.target sm_80
.address_size 64
.visible .entry _Z4sumsPfi(.param .u64 out, .param .u32 n)
{
\t.reg .b32 %r<5>;
\t.reg .b64 %rd<3>;
\t.reg .f32 %f<4>;
\tld.param.u64 %rd1, [out];
\tld.param.u32 %r1, [n];
\t.loc 1 3 5
\tld.global.f32 %f1, [%rd1];
\tld.global.f32 %f2, [%rd1+4];
\t.loc 1 4 5
\tld.global.f32 %f3, [%rd1+8];
\tst.global.f32 [%rd1], %f3;
\tret;
}
.visible .entry _Z4sumsPdi(.param .u64 out2)
{
\t.reg .b64 %rd<3>;
\t.reg .f64 %fd<2>;
\t.loc 1 2 21
\tld.param.u64 %rd1, [out2];
\t.loc 1 3 5
\tld.global.f64 %fd1, [%rd1];
\tret;
}
\t.file 1 "sums.cu"
"""
SUMS_CU = """template <typename T>
__global__ void sums(T* out, int n) {
    T a = out[0] + out[1];
    T b = out[2];
    out[0] = b;
}
"""


def write_locs(directory: Path, ptx: str = LOCS, cuda: str | None = SUMS_CU) -> Path:
    path = directory / "sums.ptx"
    path.write_text(ptx)
    if cuda is not None:
        (directory / "sums.cu").write_text(cuda)
    return path


def keys(diagnostics) -> list[tuple]:
    """(line, rule, details) of each finding, every member of a group on its own."""
    return [(d.line, d.rule, d.details) for g in diagnostics for d in g.expanded()]
