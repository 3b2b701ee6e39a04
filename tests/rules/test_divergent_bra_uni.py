"""`divergent-bra-uni` and `uniform-branch`: findings on the samples (line, severity,
certainty, message, details), the cases around them, and the docstring examples."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.divergent_bra_uni import DivergentBraUni, UniformBranch

from ..conftest import ROOT
from ..expectations import expectations, lint_sample

SAMPLES = ROOT / "ptx_samples" / "divergent-bra-uni"
IDS = frozenset({"divergent-bra-uni", "uniform-branch"})
PROLOGUE = """.version 8.0
.target sm_80
.address_size 64

.func callee(.param .b32 x)
{
    ret;
}

.visible .entry example(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .local .align 4 .b8 buf[16];
"""


def lint(body: str, launch: str = "block=32", rules=IDS):
    """Findings of `rules` on `body` wrapped in the standard kernel prologue; lines are
    counted from the first line of `body`."""
    text = PROLOGUE + body + "\n}\n"
    report = lint_text(text, "t.ptx", LintOptions(launch=LaunchConfig.parse(launch)
                                                  if launch else None,
                                                  enable=frozenset(rules)))
    shift = PROLOGUE.count("\n")
    return [(d.line - shift, d) for d in report.diagnostics if d.rule in rules]


def sample(name: str):
    """The sample's divergent-bra-uni findings."""
    return [d for d in lint_sample(SAMPLES / name).diagnostics if d.rule == "divergent-bra-uni"]


# ---- the samples ------------------------------------------------------------------------------
def test_tid_guard_is_definite_and_names_the_lanes():
    [d] = sample("tid_guard.bad.ptx")
    assert (d.line, d.severity, d.certainty) == (24, Severity.ERROR, Certainty.DEFINITE)
    assert d.message == ("`@%p1 bra.uni` depends on `%tid.x`: `%tid.x` -> `mov.u32 %r1` -> "
                         "`setp.gt.u32 %p1` -> `@%p1 bra.uni`")
    assert d.label == "`%p1` holds in lanes 16-31 but not in lanes 0-15"
    assert d.details == {"predicate": "%p1", "operand": "guard", "source": "%tid.x",
                         "chain": [22, 23, 24]}
    assert d.help == "drop `.uni` (`@%p1 bra`) or compute the guard from warp-uniform values"
    assert any("no reconvergence point" in n for n in d.notes)


def test_value_set_on_two_arms_is_control_divergence():
    [d] = sample("arm_value.bad.ptx")
    assert (d.line, d.certainty) == (34, Certainty.POSSIBLE)
    assert d.message == ("`@%p2 bra.uni` depends on divergent control: `%r2` is assigned "
                         "under the divergent branch at line 27 -> `setp.ne.s32 %p2` -> "
                         "`@%p2 bra.uni`")
    assert d.details == {"predicate": "%p2", "operand": "guard", "source": "control",
                         "chain": [27, 33, 34]}
    assert "the branch at line 27 diverges: `%tid.x` -> `mov.u32 %r1` -> " \
           "`setp.lt.u32 %p1` -> `@%p1 bra`" in d.notes
    assert d.label == "lanes of one warp may disagree on `%p2`"


def test_counter_live_out_of_a_lane_dependent_loop():
    [d] = sample("loop_exit.bad.ptx")
    assert d.line == 43
    assert "`%r6` is live out of a loop whose lanes leave at different iterations " \
           "(exit branch at line 41)" in d.message
    assert d.details["source"] == "control" and d.details["chain"] == [41, 42, 43]
    # why the loop exit diverges: the trip count, not the counter itself
    assert any(n.startswith("the branch at line 41 diverges: `%tid.x` -> `mov.u32 %r1` -> "
                            "`and.b32 %r2` -> `add.s32 %r3`") for n in d.notes)


def test_jump_table_index():
    [d] = sample("jump_table.bad.ptx")
    assert d.line == 32
    assert d.message.startswith("`brx.idx.uni %r2` depends on `%tid.x`: ")
    assert d.details == {"predicate": "%r2", "operand": "index", "source": "%tid.x",
                         "chain": [28, 29, 32]}
    assert d.help.startswith("drop `.uni` (`brx.idx`)")


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.ok.ptx")), ids=lambda p: p.name)
def test_twins_are_clean(path: Path):
    assert sample(path.name) == []


# ---- around the samples -----------------------------------------------------------------------
TID_Y = """    mov.u32 %r1, %tid.y;
    setp.lt.u32 %p1, %r1, {k};
    @%p1 bra.uni L;
    add.u32 %r2, %r1, 1;
L:
    ret;"""


def test_tid_y_is_uniform_when_rows_are_whole_warps():
    assert lint(TID_Y.format(k=4), "block=32,8") == []
    assert lint(TID_Y.format(k=4), "block=16,16") == []  # warps hold rows 2w, 2w+1


def test_tid_y_splitting_a_warp_is_definite():
    [(line, d)] = lint(TID_Y.format(k=1), "block=16,16")
    assert (line, d.certainty) == (3, Certainty.DEFINITE)
    assert d.label == "`%p1` holds in lanes 0-15 but not in lanes 16-31"


def test_unknown_block_shape_is_possible():
    [(_, d)] = lint(TID_Y.format(k=4), launch="")
    assert d.certainty is Certainty.POSSIBLE and d.details["source"] == "%tid.y"


def test_unguarded_bra_uni_in_divergent_code_is_fine():
    body = """    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 bra T;
    mov.u32 %r2, 2;
    bra.uni J;
T:
    mov.u32 %r2, 1;
J:
    ret;"""
    assert [d.rule for _, d in lint(body)] == []


def test_guard_refined_to_one_lane_is_uniform():
    body = """    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra L;
    setp.eq.u32 %p2, %r1, 0;
    @%p2 bra.uni L;
    add.u32 %r3, %r1, 1;
L:
    ret;"""
    assert [d.rule for _, d in lint(body)] == []


def test_guarded_assignment_continues_through_its_guard():
    body = """    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 4;
    mov.u32 %r2, 0;
    @%p1 mov.u32 %r2, 1;
    setp.eq.u32 %p2, %r2, 1;
    @%p2 bra.uni L;
    add.u32 %r3, %r1, 1;
L:
    ret;"""
    [(line, d)] = lint(body)
    assert line == 6
    assert "`setp.lt.u32 %p1` -> `@%p1 mov.u32 %r2` -> `setp.eq.u32 %p2`" in d.message
    assert d.details["source"] == "%tid.x"


def test_local_load_is_an_origin():
    body = """    mov.u32 %r1, %ctaid.x;
    st.local.u32 [buf], %r1;
    ld.local.u32 %r2, [buf];
    setp.eq.u32 %p2, %r2, 1;
    @%p2 bra.uni L;
    add.u32 %r3, %r1, 1;
L:
    ret;"""
    [(line, d)] = lint(body)
    assert (line, d.details["source"]) == (5, "ld.local.u32")
    assert d.message == ("`@%p2 bra.uni` depends on `ld.local.u32`: `ld.local.u32 %r2` -> "
                         "`setp.eq.u32 %p2` -> `@%p2 bra.uni`")
    assert any("each lane reads its own `.local` copy" in n for n in d.notes)


def test_call_uni_under_an_atomic_result():
    body = """    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    atom.global.add.u32 %r2, [%rd2], 1;
    setp.eq.u32 %p2, %r2, 0;
    @%p2 call.uni callee, (%r2);
    ret;"""
    [(line, d)] = lint(body)
    assert line == 5 and d.details["source"] == "atom.global.add.u32"
    assert d.message.startswith("`@%p2 call.uni` depends on `atom.global.add.u32`")
    assert any("takes this call together" in n for n in d.notes)


def test_uninitialised_register_is_unknown():
    body = """    setp.eq.u32 %p2, %r9, 1;
    @%p2 bra.uni L;
    add.u32 %r3, %r9, 1;
L:
    ret;"""
    [(_, d)] = lint(body)
    assert d.details["source"] == "unknown"
    assert "`%r9` is read before any assignment" in d.message


def test_ret_uni_under_a_lane_predicate():
    body = """    mov.u32 %r1, %laneid;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 ret.uni;
    ret;"""
    [(line, d)] = lint(body)
    assert line == 3 and d.details["source"] == "%laneid"
    assert d.certainty is Certainty.DEFINITE
    assert d.label == "`%p1` holds in lanes 0 but not in lanes 1-31"


def test_counter_inside_a_lane_dependent_loop_is_uniform():
    body = """    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 7;
    mov.u32 %r3, 0;
LOOP:
    setp.ne.u32 %p2, %r3, 3;
    @%p2 bra.uni SKIP;
    add.u32 %r4, %r4, 1;
SKIP:
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p1, %r3, %r2;
    @%p1 bra LOOP;
    ret;"""
    assert lint(body) == []


# ---- uniform-branch ---------------------------------------------------------------------------
def test_uniform_plain_branch_gets_a_note_only():
    body = """    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    setp.lt.u32 %p1, %r1, 8;
    @%p1 bra L;
    setp.lt.u32 %p2, %r2, 8;
    @%p2 bra L;
    add.u32 %r3, %r1, 1;
L:
    ret;"""
    found = lint(body)
    assert [(line, d.rule, d.severity) for line, d in found] == \
        [(4, "uniform-branch", Severity.NOTE)]
    d = found[0][1]
    assert d.message == "`@%p1 bra` is warp-uniform and could be `bra.uni`"
    assert d.details == {"predicate": "%p1"} and d.help == "write `@%p1 bra.uni L`"
    assert UniformBranch.stage == "preview"


# ---- the docstrings' examples -----------------------------------------------------------------
def _block(rule, section: str) -> str:
    body = rule.doc().split(f"## {section}", 1)[1]
    return re.search(r"```ptx\n(.*?)```", body, re.S).group(1)


@pytest.mark.parametrize("rule", [DivergentBraUni, UniformBranch], ids=lambda r: r.id)
def test_docstring_example_is_reported(rule):
    snippet = _block(rule, "Example")
    want = expectations(snippet)
    got = [(line, d) for line, d in lint(snippet) if d.rule == rule.id]
    assert want and len(got) == len(want)
    for e in want:
        assert any(line == e.line and all(str(d.details.get(k)) == v for k, v in e.details)
                   for line, d in got), f"missing {e}"


@pytest.mark.parametrize("rule", [DivergentBraUni, UniformBranch], ids=lambda r: r.id)
def test_docstring_fix_is_clean(rule):
    assert lint(_block(rule, "Use instead")) == []
