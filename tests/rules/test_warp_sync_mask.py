"""`warp-sync-mask`: findings on the samples (line, severity, certainty, message, label,
details), the cases around them (lanes that exit, data-dependent branches, masks from
loaded data, guards, per-lane tile masks, partial warps, an unknown block shape, the
`bar.warp.sync` cases `barrier-divergence` owns), and the docstring examples."""
from __future__ import annotations

import re

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.warp_sync_mask import WarpSyncMask

from ..conftest import ROOT
from ..expectations import lint_sample

RULE = "warp-sync-mask"
SAMPLES = ROOT / "ptx_samples" / RULE
PROLOGUE = """.version 8.0
.target sm_80
.address_size 64

.visible .entry example(.param .u64 buf, .param .u32 n)
{
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [buf];
"""
SHIFT = PROLOGUE.count("\n")


def lint(body: str, launch: str | None = "block=64", rules=frozenset({RULE})):
    """The findings on `body` in the prologue; lines count from the body's first."""
    text = PROLOGUE + body + "\n    ret;\n}\n"
    options = LintOptions(launch=LaunchConfig.parse(launch) if launch else None,
                          enable=rules)
    return [(d.line - SHIFT, d) for d in lint_text(text, "t.ptx", options).diagnostics
            if d.rule in rules]


def sample(name: str):
    """The rule's findings on a sample, one per instruction (before lint groups them)."""
    return [d for d in lint_sample(SAMPLES / name).diagnostics if d.rule == RULE]


def ptx_line(name: str, pattern: str) -> int:
    lines = (SAMPLES / name).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if re.search(pattern, text.split("//")[0]))


# ---- the samples ------------------------------------------------------------------------------
def test_full_mask_shuffle_inside_a_lane_guard_is_definite():
    [d, *copies] = sample("half_warp_shuffle.bad.ptx")
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    assert d.line == ptx_line("half_warp_shuffle.bad.ptx", r"shfl\.sync")
    assert d.message == ("`shfl.sync.bfly.b32` waits for lanes of its member mask that do "
                         "not execute it")
    assert d.label == "lanes 16-31 are in 0xffffffff but run elsewhere"
    assert d.details == {"instruction": "shfl.sync.bfly.b32", "kind": "missing",
                         "mask": "0xffffffff", "lanes": "0xffff0000", "warp": 0}
    assert len(copies) == 3  # the unrolled butterfly: one finding per copy, grouped by lint


def test_ballot_mask_of_another_condition_at_syncwarp():
    [d] = sample("ballot_syncwarp.bad.ptx")
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    assert d.line == ptx_line("ballot_syncwarp.bad.ptx", r"bar\.warp\.sync")
    assert d.message.startswith("`bar.warp.sync` waits for lanes of its member mask")
    assert d.label == "lanes 16-23 are in 0x00ffffff but run elsewhere"
    assert d.details["mask"] == "0x00ffffff" and d.details["lanes"] == "0x00ff0000"
    assert any(n.startswith("the mask is the ballot at line ") for n in d.notes)


def test_activemask_taken_before_the_branch():
    found = sample("activemask_reduce.bad.ptx")
    assert len(found) == 4
    d = found[0]
    assert d.details["lanes"] == "0xaaaaaaaa" and d.details["mask"] == "0xffffffff"
    assert d.label == "lanes 1, 3, ..., 31 are in 0xffffffff but run elsewhere"
    assert any("`__activemask()` at line" in n for n in d.notes)


def test_tile_masks_differ_between_the_lanes_of_a_warp():
    found = sample("tiled_partition.bad.ptx")
    assert len(found) == 3
    d = found[0]
    assert d.details["mask"] == "per-lane" and d.details["lanes"] == "0xff00ff00"
    assert d.label == "lanes 8-15, 24-31 are in their masks but run elsewhere"


def test_coalesced_group_taken_before_the_branch():
    [d] = sample("coalesced_group.bad.ptx")
    assert d.details["lanes"] == "0xffffff00"
    assert d.message.startswith("`shfl.sync.idx.b32` waits")


def test_constant_half_mask_run_by_the_whole_warp():
    found = sample("segment_scan.bad.ptx")
    d = found[0]
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    assert d.message == "`shfl.sync.up.b32` is executed by lanes outside its member mask"
    assert d.label == "lanes 16-31 execute it but are not in 0x0000ffff"
    assert d.details["kind"] == "outside"


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.ok.ptx")))
def test_clean_twins_are_quiet(name):
    assert sample(name) == []


# ---- the cases around them ----------------------------------------------------------------------
HALF = """    mov.u32 %r1, %laneid;
    setp.ge.u32 %p1, %r1, 16;
    @%p1 bra DONE;
    shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
    st.global.u32 [%rd1], %r2;
DONE:"""


def test_lanes_that_only_exit_are_not_waited_for():
    assert lint(HALF) == []


def test_lanes_that_go_on_running_are():
    [(line, d)] = lint(HALF + "\n    st.global.u32 [%rd1], %r1;")
    assert line == 4 and d.details["kind"] == "missing" and d.details["lanes"] == "0xffff0000"


def test_a_data_dependent_branch_is_a_warning_naming_it():
    [(line, d)] = lint("""    mov.u32 %r1, %laneid;
    ld.global.u32 %r3, [%rd1];
    setp.eq.u32 %p1, %r3, %r1;
    @%p1 bra DONE;
    shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
DONE:
    st.global.u32 [%rd1], %r1;""")
    assert line == 5
    assert (d.severity, d.certainty) == (Severity.WARNING, Certainty.POSSIBLE)
    assert d.message == "`shfl.sync.bfly.b32` may be skipped by lanes of its member mask"
    assert d.label == f"the branch at line {SHIFT + 4} may send lanes of 0xffffffff elsewhere"
    assert d.details["condition"] == f"lanes of a warp disagree at line {SHIFT + 4}"
    assert d.notes[0].startswith(f"the branch at line {SHIFT + 4} depends on ")


def test_a_ballot_of_loaded_data_is_not_judged():
    assert lint("""    mov.u32 %r1, %laneid;
    ld.global.u32 %r3, [%rd1];
    setp.eq.u32 %p1, %r3, %r1;
    vote.sync.ballot.b32 %r4, %p1, -1;
    @!%p1 bra DONE;
    shfl.sync.bfly.b32 %r2, %r1, 1, 31, %r4;
DONE:
    st.global.u32 [%rd1], %r1;""") == []


def test_a_lane_guard_sends_lanes_elsewhere():
    [(line, d)] = lint("""    mov.u32 %r1, %laneid;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
    st.global.u32 [%rd1], %r1;""")
    assert line == 3 and d.details["kind"] == "missing" and d.severity is Severity.ERROR


def test_outside_a_constant_mask_and_the_shape_unknown():
    body = """    mov.u32 %r1, %laneid;
    redux.sync.add.u32 %r2, %r1, 0xffff;
    st.global.u32 [%rd1], %r2;"""
    [(_, d)] = lint(body)
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    [(_, d)] = lint(body, launch=None)
    assert (d.severity, d.certainty) == (Severity.WARNING, Certainty.POSSIBLE)
    assert d.message.endswith("may be executed by lanes outside its member mask")
    assert d.notes[0].startswith("block shape unknown")


def test_the_complement_of_a_ballot_names_the_other_lanes():
    """`~__ballot_sync(~0, lane < 8)` passed by the lanes that are not below 8: right."""
    assert lint("""    mov.u32 %r1, %laneid;
    setp.lt.u32 %p1, %r1, 8;
    vote.sync.ballot.b32 %r4, %p1, -1;
    not.b32 %r5, %r4;
    @%p1 bra DONE;
    match.any.sync.b32 %r2, %r1, %r5;
DONE:
    st.global.u32 [%rd1], %r1;""") == []


def test_a_full_mask_in_a_partial_warp():
    """A block of 48 threads: warp 1 has lanes 0-15, all of which run it."""
    assert lint("""    mov.u32 %r1, %laneid;
    shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;
    st.global.u32 [%rd1], %r2;""", launch="block=48") == []


WARP_SYNC = """    mov.u32 %r1, %laneid;
    setp.ge.u32 %p1, %r1, 16;
    @%p1 bra DONE;
    {sync}
DONE:
    st.global.u32 [%rd1], %r1;"""
BOTH = frozenset({RULE, "barrier-divergence"})


def test_a_known_mask_at_bar_warp_sync_is_barrier_divergence_s():
    found = lint(WARP_SYNC.format(sync="bar.warp.sync -1;"), rules=BOTH)
    assert [d.rule for _, d in found] == ["barrier-divergence"]


def test_a_computed_mask_at_bar_warp_sync_is_this_rule_s():
    sync = "activemask.b32 %r4;\n    bar.warp.sync %r4;"
    assert lint(WARP_SYNC.format(sync=sync), rules=BOTH) == []
    before = WARP_SYNC.replace("    setp.ge", "    activemask.b32 %r4;\n    setp.ge")
    found = lint(before.format(sync="bar.warp.sync %r4;"), rules=BOTH)
    assert [(d.rule, d.details["lanes"]) for _, d in found] == [(RULE, "0xffff0000")]


# ---- the docstring ------------------------------------------------------------------------------
def _blocks(section: str) -> str:
    doc = WarpSyncMask.doc()
    body = doc.split(section, 1)[1]
    return re.search(r"```ptx\n(.+?)```", body, re.S).group(1)


def test_docstring_example_is_reported():
    body = _blocks("## Example")
    found = lint("    " + body.replace("\n", "\n    "))
    assert [d.details["kind"] for _, d in found] == ["missing"]
    expected = next(i for i, text in enumerate(body.splitlines(), 1) if "expect:" in text)
    assert found[0][0] == expected


def test_docstring_fix_is_clean():
    assert lint("    " + _blocks("## Use instead").replace("\n", "\n    ")) == []


def test_elect_sync_is_checked_like_the_others():
    [(line, d)] = lint("""    mov.u32 %r1, %laneid;
    elect.sync %r2|%p3, 0xffff;
    st.global.u32 [%rd1], %r2;""")
    assert line == 2 and d.details["instruction"] == "elect.sync"
    assert d.details["kind"] == "outside" and d.details["lanes"] == "0xffff0000"
