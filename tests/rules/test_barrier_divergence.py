"""`barrier-divergence`: findings on the samples (line, severity, certainty, label,
details), the cases around them (early returns, loops with uniform and varying trip
counts, nested loops, block-uniform and warp-uniform conditions, named barriers,
`bar.warp.sync` masks), and the docstring examples."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.barrier_divergence import BarrierDivergence

from ..conftest import ROOT
from ..expectations import expectations, lint_sample

RULE = "barrier-divergence"
SAMPLES = ROOT / "ptx_samples" / RULE
PROLOGUE = """.version 8.0
.target sm_80
.address_size 64

.func sync_all()
{
    bar.sync 0;
    ret;
}

.visible .entry example(.param .u64 buf, .param .u32 n)
{
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<8>;
    .reg .f32 %f<8>;
    .shared .align 4 .b8 s[1024];
"""


SHIFT = PROLOGUE.count("\n")  # lines before the body (details name absolute lines)


def lint(body: str, launch: str | None = "block=64"):
    """This rule's findings on `body` in the standard prologue; lines count from the
    first line of `body`."""
    text = PROLOGUE + body + "\n}\n"
    options = LintOptions(launch=LaunchConfig.parse(launch) if launch else None,
                          enable=frozenset({RULE}))
    return [(d.line - SHIFT, d) for d in lint_text(text, "t.ptx", options).diagnostics
            if d.rule == RULE]


def sample(name: str):
    return [d for d in lint_sample(SAMPLES / name).diagnostics if d.rule == RULE]


# ---- the samples ------------------------------------------------------------------------------
def test_barrier_inside_a_tid_guard_is_definite():
    [d] = sample("tid_guard.bad.ptx")
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    assert d.message == "`bar.sync 0` is not reached by every thread of the block"
    assert d.label == "threads 32-127 skip it"
    assert d.details["source"] == "%tid.x" and d.details["skipped_by"] == "barrier"
    assert any("may wait at `bar.sync 0`" in n for n in d.notes)
    assert d.cuda is not None and d.cuda.line == 12


def test_varying_trip_count_is_one_finding_per_cuda_barrier():
    found = sample("loop_trip.bad.ptx")
    assert [d.cuda.line for d in found] == [12, 14]  # nvcc made several copies of each
    for d in found:
        assert (d.severity, d.certainty) == (Severity.WARNING, Certainty.POSSIBLE)
        assert d.message.endswith("may be reached a different number of times by the "
                                  "threads of the block")
        assert d.details["skipped_by"] == "exit"


def test_early_return_names_the_block_of_the_launch_that_splits():
    [d] = sample("early_exit.bad.ptx")
    assert (d.severity, d.certainty) == (Severity.WARNING, Certainty.DEFINITE)
    assert d.label == "threads 232-255 of block 3 skip it"  # n = 1000, grid = 4 x 256
    assert any("`.aligned`" in n for n in d.notes)


def test_warp_uniform_row_test_splits_the_block():
    [d] = sample("row_split.bad.ptx")
    assert d.certainty is Certainty.DEFINITE
    assert d.label == "128 of the 256 threads (e.g. thread (0,4,0)) skip it"
    assert d.details["source"] == "%tid.y"


def test_named_barrier_splitting_a_warp_hangs():
    [d] = sample("named_barrier.bad.ptx")
    assert d.message == "`bar.sync 1, 64` is reached by only some threads of a warp"
    assert d.label == "lanes 16-31 of warp 1 skip it"
    assert any("another barrier: neither completes" in n for n in d.notes)


def test_warp_sync_mask_with_lanes_that_never_come():
    [d] = sample("warp_mask.bad.ptx")
    assert d.message == "lanes of the member mask never reach `bar.warp.sync -1`"
    assert d.label == "lanes 16-31 are in the mask but skip it"
    assert d.details["mask"] == "0xffffffff" and d.certainty is Certainty.DEFINITE


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.ok.ptx")), ids=lambda p: p.name)
def test_twins_are_clean(path: Path):
    assert sample(path.name) == []


# ---- around the samples -----------------------------------------------------------------------
EARLY_RETURN = """    mov.u32 %r1, %tid.x;
    ld.param.u32 %r2, [n];
    setp.ge.u32 %p1, %r1, %r2;
    @%p1 ret;
    {barrier};"""


def test_early_return_before_an_aligned_barrier_is_a_warning():
    [(line, d)] = lint(EARLY_RETURN.format(barrier="bar.sync 0"))
    assert line == 5 and d.severity is Severity.WARNING
    assert d.certainty is Certainty.POSSIBLE and d.details["branch"] == 4 + SHIFT
    assert d.details["skipped_by"] == "exit"


def test_early_return_before_an_unaligned_barrier_is_a_warning():
    """`barrier.sync` without `.aligned` (cooperative groups' `this_thread_block().sync()`)
    is released without the exited threads, but CUDA requires every thread of the group
    to call it: a warning that says so (issue #22)."""
    [(line, d)] = lint(EARLY_RETURN.format(barrier="barrier.sync 0"))
    assert line == 5 and d.severity is Severity.WARNING
    assert d.certainty is Certainty.POSSIBLE and d.details["skipped_by"] == "exit"
    assert any("this_thread_block().sync()" in n for n in d.notes)
    assert not any("is `.aligned`" in n for n in d.notes)


def test_cooperative_groups_sync_after_an_early_return():
    [d] = sample("cg_exit.bad.ptx")
    assert d.rule == "barrier-divergence" and d.certainty is Certainty.DEFINITE
    assert d.details["barrier"] == "barrier.sync" and d.details["skipped_by"] == "exit"
    assert d.label == "threads 232-255 of block 3 skip it"


def test_halving_loop_from_the_block_size_has_no_barrier_free_path():
    """`for (d = blockDim.x; d > 0; d >>= 1) { __syncthreads(); ... }` runs at least once
    for every legal block (blockDim.x >= 1): clean with and without a block shape, for
    this rule and for the races it would open (issue #22, kept as a regression)."""
    text = (SAMPLES / "halving_loop.ok.ptx").read_text()
    for launch in (None, "block=256 grid=4 smem=1024", "block=96 grid=2 smem=384"):
        options = LintOptions(launch=LaunchConfig.parse(launch) if launch else None,
                              enable=frozenset({"barrier-divergence", "shared-memory-race"}))
        assert [d for d in lint_text(text, "t.ptx", options).diagnostics
                if d.severity >= Severity.WARNING] == [], launch


def test_grid_sync_skipped_by_whole_blocks():
    """Blocks past the data return before `grid.sync()`: recognised from the arrival on
    a global counter and the spin on it, reported once, at the barrier that opens it."""
    [d] = sample("grid_sync.bad.ptx")
    assert d.message == "`barrier.sync 0` may not be reached by every block of the grid"
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.POSSIBLE)
    assert d.details["skipped_by"] == "block" and d.details["grid"] is True
    assert d.details["source"] == "%ctaid.x"
    assert any("grid-wide barrier" in n for n in d.notes)


def test_grid_sync_after_threads_return_is_one_finding_with_the_grid_note():
    """Threads (not whole blocks) return before `grid.sync()`: the block-level finding on
    the barrier that opens the grid barrier, with a note that blocks whose threads all
    return hang the grid; the barrier that closes it is not reported again."""
    text = (SAMPLES / "grid_sync.bad.ptx").read_text()
    assert "mov.u32 \t%r1, %ctaid.x;" in text
    text = re.sub(r"// expect:.*", "", text.replace("mov.u32 \t%r1, %ctaid.x;",
                                                     "mov.u32 \t%r1, %tid.x;"))
    options = LintOptions(launch=LaunchConfig.parse("block=256 grid=16"),
                          enable=frozenset({"barrier-divergence"}))
    [d] = [d for d in lint_text(text, "t.ptx", options).diagnostics
           if d.rule == "barrier-divergence"]
    assert d.details["skipped_by"] == "exit" and d.details["grid"] is True
    assert d.message.endswith("reached by every thread of the block")
    assert any("grid-wide barrier" in n for n in d.notes)


def test_early_return_that_no_thread_takes_is_fine():
    assert lint(EARLY_RETURN.format(barrier="bar.sync 0"), "block=64 param.n=64") == []


def test_early_return_with_a_known_bound_is_definite():
    [(_, d)] = lint(EARLY_RETURN.format(barrier="bar.sync 0"), "block=64 param.n=40")
    assert d.certainty is Certainty.DEFINITE and d.label == "threads 40-63 skip it"


UNIFORM_LOOP = """    ld.param.u32 %r2, [n];
    mov.u32 %r3, 0;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra DONE;
LOOP:
    bar.sync 0;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, %r2;
    @%p2 bra LOOP;
DONE:
    ret;"""


def test_barrier_in_a_loop_with_a_uniform_trip_count_is_fine():
    assert lint(UNIFORM_LOOP, None) == []


def test_barrier_in_a_loop_with_a_varying_trip_count():
    body = UNIFORM_LOOP.replace("ld.param.u32 %r2, [n];", "mov.u32 %r2, %tid.x;")
    [(line, d)] = lint(body)
    assert line == 6 and "different number of times" in d.message
    assert d.details["source"] == "%tid.x"


NESTED = """    ld.param.u32 %r2, [n];
    mov.u32 %r4, %tid.x;
    mov.u32 %r3, 0;
OUTER:
    mov.u32 %r5, 0;
INNER:
    bar.sync 0;
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p2, %r5, {inner};
    @%p2 bra INNER;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p1, %r3, {outer};
    @%p1 bra OUTER;
    ret;"""


@pytest.mark.parametrize("outer,inner,found", [
    ("%r2", "4", False), ("%r2", "%r2", False),  # both trip counts uniform
    ("%r2", "%r4", True), ("%r4", "4", True),   # the inner, or the outer, varies
])
def test_nested_loops(outer, inner, found):
    assert bool(lint(NESTED.format(outer=outer, inner=inner))) is found


def test_block_uniform_condition_is_fine():
    body = """    mov.u32 %r1, %ctaid.x;
    setp.ge.u32 %p1, %r1, 4;
    @%p1 bra SKIP;
    bar.sync 0;
SKIP:
    bar.sync 0;"""
    assert lint(body) == []


def test_tid_y_is_constant_in_a_flat_block():
    body = """    mov.u32 %r1, %tid.y;
    setp.ge.u32 %p1, %r1, 1;
    @%p1 bra SKIP;
    bar.sync 0;
SKIP:
    ret;"""
    assert lint(body, "block=64") == []
    [(_, d)] = lint(body, "block=32,2")
    assert d.certainty is Certainty.DEFINITE and d.details["source"] == "%tid.y"


def test_bar_red_and_values_read_by_the_whole_block_are_uniform():
    """`while (__syncthreads_or(...))` and a flag thread 0 wrote before a barrier."""
    body = """    mov.u32 %r1, %tid.x;
LOOP:
    setp.lt.u32 %p1, %r1, 8;
    bar.red.or.pred %p2, 0, %p1;
    ld.shared.u32 %r2, [s];
    setp.ne.u32 %p3, %r2, 0;
    @%p3 bra DONE;
    @%p2 bra LOOP;
DONE:
    ret;"""
    assert lint(body) == []


def test_a_vote_is_warp_uniform_but_not_block_uniform():
    body = """    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 8;
    vote.sync.any.pred %p2, %p1, -1;
    @%p2 bra SKIP;
    bar.sync 0;
SKIP:
    ret;"""
    [(_, d)] = lint(body)
    assert d.certainty is Certainty.POSSIBLE
    assert "`vote.sync.any.pred %p2`" in d.notes[0]  # the chain goes through the vote


def test_calling_a_function_that_synchronises_counts_as_a_barrier():
    body = """    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 8;
    @%p1 bra SKIP;
    call sync_all, ();
SKIP:
    ret;"""
    [(line, d)] = lint(body)
    assert line == 4 and d.message.startswith("`call sync_all")


def test_guarded_barrier():
    body = """    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 8;
    @%p1 bar.sync 0;
    bar.sync 0;"""
    [(line, d)] = lint(body)
    assert line == 3 and d.label == "threads 8-63 skip it"
    assert d.details["branch"] == 3 + SHIFT and d.details["skipped_by"] == "barrier"


def test_named_barrier_for_whole_warps_is_fine():
    body = """    mov.u32 %r1, %tid.x;
    shr.u32 %r2, %r1, 5;
    setp.ge.u32 %p1, %r2, 1;
    @%p1 bra SKIP;
    bar.sync 1, 32;
SKIP:
    ret;"""
    assert lint(body) == []  # warp 0 only: `%tid.x / 32` is not affine, the lanes tell


def test_warp_sync_outside_its_mask():
    body = """    bar.warp.sync 0x0000ffff;"""
    [(_, d)] = lint(body, "block=32")
    assert d.message == "`bar.warp.sync 0x0000ffff` is executed by lanes outside its member mask"
    assert d.label == "lanes 16-31 execute it but are not in 0x0000ffff"
    assert lint("    bar.warp.sync -1;", "block=32") == []


# ---- the docstring examples --------------------------------------------------------------------
def _doc_block(section: str) -> str:
    body = BarrierDivergence.doc().split(section, 1)[1].split("\n## ", 1)[0]
    return re.search(r"```ptx\n(.+?)```", body, re.S).group(1)


def test_docstring_example_is_reported():
    snippet = _doc_block("## Example")
    want = expectations(snippet)
    got = lint(snippet)
    assert [(line, d.rule) for line, d in got] == [(e.line, e.rule) for e in want]


def test_docstring_fix_is_clean():
    assert lint(_doc_block("## Use instead")) == []
