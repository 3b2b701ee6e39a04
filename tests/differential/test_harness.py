"""The harness itself: each check fails when the analysis side is made to lie (a
finding dropped, a claim or a bound tampered with, an instruction made unreachable),
and each kind of defect a run shows confirms the matching finding."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import differential.case as case_mod
from differential import run_case
from differential.corpus import sample_cases
from differential.probe import Claim
from differential.static import CostBound
from ptxlint.domains.value import Value
from ptxlint.interp.facts import Facts

SAMPLES = Path(__file__).parents[2] / "ptx_samples"


def one(rel: str):
    [case] = sample_cases(SAMPLES / rel)
    return case


@pytest.mark.parametrize("rel,rule", [
    ("out-of-bounds/missing_guard.bad.ptx", "out-of-bounds"),
    ("misaligned-access/double_from_int.bad.ptx", "misaligned-access"),
    ("divergent-bra-uni/tid_guard.bad.ptx", "divergent-bra-uni"),
    ("uncoalesced-access/strided.bad.ptx", "uncoalesced-access"),
    ("bank-conflict/ways.bad.ptx", "bank-conflict"),
])
def test_a_defect_confirms_its_finding(rel, rule):
    result = run_case(one(rel))
    assert result.sound
    assert any(ok for (r, _site), ok in result.comparison.findings.items() if r == rule)
    assert result.comparison.observed[rule] > 0


@pytest.mark.parametrize("rel,rule", [
    ("out-of-bounds/missing_guard.bad.ptx", "out-of-bounds"),
    ("divergent-bra-uni/tid_guard.bad.ptx", "divergent-bra-uni"),
    ("bank-conflict/ways.bad.ptx", "bank-conflict"),
])
def test_a_dropped_finding_is_a_miss(rel, rule, monkeypatch):
    real = case_mod.lint_kernel

    def without(*args, **kw):
        side = real(*args, **kw)
        side.diagnostics = [d for d in side.diagnostics if d.rule != rule]
        return side

    monkeypatch.setattr(case_mod, "lint_kernel", without)
    result = run_case(one(rel))
    assert {b.kind for b in result.breaches()} == {"missed"}
    assert {b.subject.rule for b in result.breaches()} == {rule}


def test_a_wrong_claim_is_a_gamma_violation(monkeypatch):
    real = case_mod.claims

    def lying(side, every=1):
        found, guards = real(side, every)
        # claim every register read is 7 in every lane
        return {k: [replace(c, value=Value.const(7)) for c in v] for k, v in found.items()}, \
            guards

    monkeypatch.setattr(case_mod, "claims", lying)
    result = run_case(one("out-of-bounds/missing_guard.ok.ptx"))
    assert result.violations and {b.kind for b in result.breaches()} == {"gamma"}
    assert result.probe.checks > 0 and result.probe.values > 0


def test_a_uniform_claim_on_tid_is_a_lane_form_violation(monkeypatch):
    real = case_mod.claims

    def uniform_tid(side, every=1):
        found, guards = real(side, every)
        return {k: [replace(c, value=c.value.with_uniformity(True))
                    if c.what == "%r5" else c for c in v] for k, v in found.items()}, guards

    monkeypatch.setattr(case_mod, "claims", uniform_tid)
    result = run_case(one("out-of-bounds/missing_guard.ok.ptx"))
    assert {v.component for v in result.violations} == {"lane form"}


def test_a_lowered_bound_is_over_bound(monkeypatch):
    from differential import static

    monkeypatch.setattr(case_mod, "cost_bounds",
                        lambda side: {k: CostBound(sectors=b.sectors and 1, ways=b.ways and 1)
                                      for k, b in static.cost_bounds(side).items()})
    result = run_case(one("uncoalesced-access/strided.ok.ptx"))
    assert result.breaches() and {b.kind for b in result.breaches()} == {"over-bound"}


def test_an_executed_unreachable_instruction_is_reported(monkeypatch):
    monkeypatch.setattr(Facts, "is_reachable", lambda self, insn: insn.opcode != "st")
    result = run_case(one("out-of-bounds/missing_guard.ok.ptx"))
    assert [b.kind for b in result.breaches()] == ["unreachable"]


def test_a_divergent_barrier_is_confirmed_by_its_finding():
    """A barrier under a lane-dependent guard: the emulator sees it split, and the
    `barrier-divergence` finding at it is confirmed."""
    from .kernels import Barrier, If, Program, TID_X

    prog = Program((If((TID_X, "lt", 7), False, (Barrier(),)),), (32, 1, 1), (1, 1, 1), 4,
                   True, 256, 256, 256, 8)
    result = run_case(prog.case())
    assert result.sound, result.problems()
    assert result.comparison.observed["barrier-divergence"] >= 1
    assert [ok for (rule, _), ok in result.comparison.findings.items()
            if rule == "barrier-divergence"] == [True]


# Thread 0 skips the first barrier and meets the loop's barrier instead: released a trip
# early, it runs one trip ahead of the other lanes of its warp.
SPLIT_THEN_LOOP = """.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u32 n)
{
	.reg .pred %p<3>;
	.reg .b32 %r<4>;
	ld.param.u32 %r2, [n];
	mov.u32 %r1, %tid.x;
	setp.eq.s32 %p1, %r1, 0;
	@%p1 bra $L1;
	bar.sync 0;
$L1:
	mov.u32 %r3, 0;
$L2:
	setp.ge.s32 %p2, %r3, %r2;
	@%p2 bra $L3;
	bar.sync 0;
	add.s32 %r3, %r3, 1;
	bra.uni $L2;
$L3:
	ret;
}
"""


def test_lane_forms_after_a_split_barrier_are_excused():
    """After a reported barrier the run saw split (undefined behaviour), the loop
    counter the analysis knows warp-uniform differs between lanes of a warp: excused,
    as after a divergent `.uni` branch, not a breach."""
    from differential import Case
    from ptxlint.launch import LaunchConfig

    case = Case("split", SPLIT_THEN_LOOP, "k", (1, 1, 1), (16, 1, 1), {0: 2},
                LaunchConfig(block=(16, 1, 1), grid=(1, 1, 1)), max_steps=100_000)
    result = run_case(case)
    assert result.sound, result.problems()
    lines = SPLIT_THEN_LOOP.splitlines()
    excused = {(b.kind, b.subject.component, lines[b.line - 1].strip())
               for b in result.excused()}
    assert ("gamma", "lane form", "add.s32 %r3, %r3, 1;") in excused
    assert {kind for kind, _, _ in excused} == {"gamma"}
    assert [ok for (rule, _), ok in result.comparison.findings.items()
            if rule == "barrier-divergence"][:1] == [True]


def test_an_unregistered_rule_is_recorded_not_failed(monkeypatch):
    """Observations of a rule that is not registered wait as "no rule yet"."""
    from ptxlint.rules import base

    from .kernels import Barrier, If, Program, TID_X

    monkeypatch.delitem(base.RULES, "barrier-divergence")
    prog = Program((If((TID_X, "lt", 7), False, (Barrier(),)),), (32, 1, 1), (1, 1, 1), 4,
                   True, 256, 256, 256, 8)
    result = run_case(prog.case())
    assert result.sound and {o.kind for o in result.comparison.no_rule} & {
        "divergent-barrier", "barrier-mismatch"}
