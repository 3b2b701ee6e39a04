"""The soundness suite for `uninitialized-read` and `global-memory-race`: the emulator's
hazard events confirm the findings of the samples, a dropped finding is a miss, and an
event the rule's scope leaves out (bytes a write may have covered, a load it does not
judge) is unjudged, not missed."""
from __future__ import annotations

from pathlib import Path

import pytest

import differential.case as case_mod
from differential import run_case
from differential.case import Case
from differential.corpus import sample_cases
from ptxlint.launch import LaunchConfig

SAMPLES = Path(__file__).parents[2] / "ptx_samples"
UNINIT = "uninitialized-read"
RACE = "global-memory-race"


def one(rel: str):
    [case] = sample_cases(SAMPLES / rel)
    return case


@pytest.mark.parametrize("rel,rule", [
    (f"{UNINIT}/never_written.bad.ptx", UNINIT),
    (f"{UNINIT}/predicated.bad.ptx", UNINIT),
    (f"{UNINIT}/one_branch.bad.ptx", UNINIT),
    (f"{UNINIT}/accumulator.bad.ptx", UNINIT),
    (f"{UNINIT}/partial_tile.bad.ptx", UNINIT),
    (f"{UNINIT}/local_window.bad.ptx", UNINIT),
    (f"{RACE}/block_sum.bad.ptx", RACE),
    (f"{RACE}/grid_stride.bad.ptx", RACE),
    (f"{RACE}/single_slot.bad.ptx", RACE),
])
def test_a_hazard_confirms_its_finding(rel, rule):
    result = run_case(one(rel))
    assert result.sound, result.problems()
    assert any(ok for (r, _site), ok in result.comparison.findings.items() if r == rule)
    assert result.comparison.observed[rule] > 0


@pytest.mark.parametrize("rel,rule", [
    (f"{UNINIT}/partial_tile.bad.ptx", UNINIT),
    (f"{UNINIT}/predicated.bad.ptx", UNINIT),
    (f"{RACE}/grid_stride.bad.ptx", RACE),
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


NEIGHBOUR = """.version 8.0
.target sm_80
.address_size 64

.visible .entry neighbour(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b8 s[256];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, s;
    add.s32 %r4, %r3, %r2;
    ld.shared.u32 %r5, [%r4+4];
    st.shared.u32 [%r4], %r1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd3, %rd2, %rd3;
    st.global.u32 [%rd3], %r5;
    ret;
}
"""


def test_a_byte_written_later_in_the_interval_is_unjudged():
    """Thread t reads s[t + 1], which thread t + 1 writes in the same barrier interval:
    the run reads it before the write, but that is a race (`shared-memory-race`), not
    bytes nothing can have written; the rule makes no claim there and the suite counts
    the event as unjudged."""
    launch = LaunchConfig.parse("block=64")
    case = Case("neighbour", NEIGHBOUR, "neighbour", (1, 1, 1), (64, 1, 1),
                {"out": __import__("numpy").zeros(64, "uint32")}, launch)
    result = run_case(case)
    assert result.sound, result.problems()
    assert not any(r == UNINIT for (r, _site) in result.comparison.findings)
    assert result.comparison.observed[UNINIT] == 1
    assert [o.kind for o in result.comparison.unjudged if o.rule == UNINIT] == \
        ["uninitialized-shared"]
