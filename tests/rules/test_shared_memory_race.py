"""`shared-memory-race`: findings on the samples (line, severity, certainty, labels,
related location, details), the cases around them (double buffers, warp-synchronous
code with and without `bar.warp.sync`, loop back edges, strided loops, atomics, branch
arms, unknown block shapes and addresses), and the docstring examples."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.shared_memory_race import SharedMemoryRace

from ..conftest import ROOT
from ..expectations import expectations, lint_sample

RULE = "shared-memory-race"
SAMPLES = ROOT / "ptx_samples" / RULE
PROLOGUE = """.version 8.0
.target sm_80
.address_size 64

.visible .entry example(.param .u64 buf, .param .u32 n)
{
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<8>;
    .reg .f32 %f<8>;
    .shared .align 4 .b8 tile[4096];
"""
SHIFT = PROLOGUE.count("\n")


def lint(body: str, launch: str | None = "block=64", notes: bool = False):
    """This rule's findings (warning and above unless `notes`) on `body` in the standard
    prologue; lines count from the first line of `body`."""
    text = PROLOGUE + body + "\n    ret;\n}\n"
    options = LintOptions(launch=LaunchConfig.parse(launch) if launch else None,
                          enable=frozenset({RULE}))
    return [(d.line - SHIFT, d) for d in lint_text(text, "t.ptx", options).diagnostics
            if d.rule == RULE and (notes or d.severity >= Severity.WARNING)]


def sample(name: str):
    return [d for d in lint_sample(SAMPLES / name).diagnostics
            if d.rule == RULE and d.severity >= Severity.WARNING]


# ---- the samples ------------------------------------------------------------------------------
def test_neighbour_read_without_a_barrier_is_definite():
    [d] = sample("neighbour.bad.ptx")
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    assert d.message == "shared-memory race on `s`: a write here and a read at line 61 " \
                        "with no barrier between"
    assert d.label == "thread 0 writes bytes 0-3 of `s`"
    [other] = d.related
    assert other.line == 61 and other.label == "thread 255 reads them here"
    assert d.details == {"object": "s", "kinds": "write-read", "other_line": 61,
                         "threads": [0, 255], "byte": 0, "same_warp": False}
    assert d.help == "put `bar.sync 0` (`__syncthreads()`) between the two accesses"


def test_tree_reduction_without_barriers_is_one_finding():
    [d] = sample("tree_sum.bad.ptx")  # every unrolled step is the same CUDA statement
    assert d.certainty is Certainty.POSSIBLE and d.details["kinds"] == "write-read"
    assert d.cuda is not None and d.cuda.line == 14


def test_warp_synchronous_reduction_races_within_the_warp():
    found = sample("warp_sum.bad.ptx")
    assert len(found) == 6  # one per `s[t] += s[t + k]` statement
    for d in found:
        assert d.details["same_warp"] is True
        assert any("since Volta" in n for n in d.notes)
        assert d.help.startswith("put `bar.warp.sync` (`__syncwarp()`)")


def test_double_buffer_without_the_step_barrier():
    [d] = sample("double_buffer.bad.ptx")
    assert d.details["object"] == "buf" and not d.details["same_warp"]


def test_plain_read_racing_with_atomics():
    [d] = sample("atomics.bad.ptx")
    assert d.details["kinds"] == "atomic-read"
    assert d.message.startswith("shared-memory race on `bins`: an atomic here and a read")


def test_branch_arms_of_a_tid_split_run_side_by_side():
    [d] = sample("arms.bad.ptx")
    assert d.details["threads"] == [0, 32]


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.ok.ptx")), ids=lambda p: p.name)
def test_twins_are_clean(path: Path):
    assert sample(path.name) == []


# ---- around the samples -----------------------------------------------------------------------
ADDR = """    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, tile;
    add.u32 %r4, %r3, %r2;
"""


DOUBLE_BUFFER = ADDR + """    ld.param.u32 %r10, [n];
    mov.u32 %r11, 0;
LOOP:
    and.b32 %r12, %r11, 1;
    mul.lo.u32 %r13, %r12, 1024;
    add.u32 %r14, %r4, %r13;
    ld.shared.f32 %f1, [%r14+4];
    add.u32 %r15, %r11, 1;
    and.b32 %r16, %r15, 1;
    mul.lo.u32 %r17, %r16, 1024;
    add.u32 %r18, %r4, %r17;
    st.shared.f32 [%r18], %f1;
    {barrier}
    add.u32 %r11, %r11, 1;
    setp.lt.u32 %p1, %r11, %r10;
    @%p1 bra LOOP;"""


def test_double_buffered_tile_with_a_barrier_per_step_is_clean():
    """Within one step the read buffer (k & 1) and the write buffer ((k + 1) & 1) differ:
    compared for the same k, which the barrier in the loop keeps the same for both."""
    assert lint(DOUBLE_BUFFER.format(barrier="bar.sync 0;"), "block=64 param.n=16") == []


def test_double_buffered_tile_without_it_races_across_steps():
    [(line, d)] = lint(DOUBLE_BUFFER.format(barrier=""), "block=64 param.n=16")
    assert line == 16 and d.details["other_line"] == 11 + SHIFT
    assert d.certainty is Certainty.POSSIBLE  # it needs two steps' parities


WARP_EXCHANGE = ADDR + """    st.shared.f32 [%r4], %f1;
    {sync}
    xor.b32 %r5, %r1, 1;
    shl.b32 %r6, %r5, 2;
    add.u32 %r7, %r3, %r6;
    ld.shared.f32 %f2, [%r7];"""


def test_warp_synchronous_exchange_needs_a_warp_barrier():
    [(_, d)] = lint(WARP_EXCHANGE.format(sync=""))
    assert d.details["same_warp"] and d.certainty is Certainty.DEFINITE
    assert lint(WARP_EXCHANGE.format(sync="bar.warp.sync -1;")) == []
    assert lint(WARP_EXCHANGE.format(sync="bar.sync 0;")) == []


def test_warp_barrier_does_not_order_threads_of_two_warps():
    body = ADDR + """    st.shared.f32 [%r4], %f1;
    bar.warp.sync -1;
    ld.shared.f32 %f2, [%r4+128];"""
    [(_, d)] = lint(body)
    assert d.details["same_warp"] is False and d.details["threads"] == [32, 0]


FLAG = """    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SKIP;
    st.shared.u32 [tile], %r1;
SKIP:
    {sync}
    ld.shared.u32 %r2, [tile];"""


def test_flag_written_by_thread_zero():
    assert lint(FLAG.format(sync="bar.sync 0;")) == []
    [(line, d)] = lint(FLAG.format(sync=""))
    assert line == 4 and d.details["threads"] == [0, 32]
    assert d.label == "thread 0 writes bytes 0-3 of `tile`"


def test_one_writer_is_no_write_write_race():
    assert lint("    mov.u32 %r1, %tid.x;\n    setp.ne.u32 %p1, %r1, 0;\n"
                "    @!%p1 st.shared.u32 [tile], %r1;") == []
    [(_, d)] = lint("    mov.u32 %r1, %tid.x;\n    st.shared.u32 [tile], %r1;")
    assert d.message.startswith("shared-memory race: two threads write the same bytes")


def test_atomics_do_not_race_with_each_other():
    body = """    atom.shared.add.u32 %r1, [tile], 1;
    red.shared.add.u32 [tile], 1;"""
    assert lint(body) == []


def test_strided_loop_writes_distinct_words():
    """`for (i = tid; i < 1024; i += 64) s[i] = ...` without a barrier: no two threads
    ever write the same word, whatever trips they are on."""
    body = """    mov.u32 %r1, %tid.x;
    mov.u32 %r3, tile;
LOOP:
    shl.b32 %r2, %r1, 2;
    add.u32 %r4, %r3, %r2;
    st.shared.u32 [%r4], %r1;
    add.u32 %r1, %r1, 64;
    setp.lt.u32 %p1, %r1, 1024;
    @%p1 bra LOOP;"""
    assert lint(body) == []


BACK_EDGE = ADDR + """    ld.param.u32 %r10, [n];
    mov.u32 %r11, 0;
LOOP:
    ld.shared.f32 %f1, [%r4+4];
    {sync}
    st.shared.f32 [%r4], %f1;
    bar.sync 0;
    add.u32 %r11, %r11, 1;
    setp.lt.u32 %p1, %r11, %r10;
    @%p1 bra LOOP;"""


def test_race_around_the_loop_back_edge():
    """The read of trip k + 1 and the write of trip k are separated by nothing once the
    one barrier of the loop is passed."""
    [(line, d)] = lint(BACK_EDGE.format(sync=""), None)
    assert line == 10 and d.details["other_line"] == 8 + SHIFT
    assert lint(BACK_EDGE.format(sync="bar.sync 0;"), None) == []


TILES = """    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    shl.b32 %r3, %r2, 6;
    shl.b32 %r4, %r1, 2;
    mov.u32 %r5, tile;
    add.u32 %r6, %r5, %r3;
    add.u32 %r7, %r6, %r4;
    ld.param.u32 %r10, [n];
    mov.u32 %r11, 0;
OUTER:
    st.shared.f32 [%r7], %f1;
    bar.sync 0;
    mov.u32 %r12, 0;
INNER:
    shl.b32 %r13, %r12, 2;
    add.u32 %r14, %r6, %r13;
    ld.shared.f32 %f2, [%r14];
    add.f32 %f1, %f1, %f2;
    add.u32 %r12, %r12, 1;
    setp.lt.u32 %p2, %r12, 16;
    @%p2 bra INNER;
    {sync}
    add.u32 %r11, %r11, 1;
    setp.lt.u32 %p1, %r11, %r10;
    @%p1 bra OUTER;"""


def test_nested_loops_over_tiles():
    """A 16x16 tile loaded in an outer loop and read along its rows in an inner one:
    without the barrier after the inner loop, the next tile's store meets this tile's
    reads by the other threads of the row."""
    assert lint(TILES.format(sync="bar.sync 0;"), "block=16,16") == []
    [(line, d)] = lint(TILES.format(sync=""), "block=16,16")
    assert line == 11 and d.details["other_line"] == 17 + SHIFT
    assert d.details["kinds"] == "write-read"


def test_block_uniform_arms_never_run_side_by_side():
    body = ADDR + """    mov.u32 %r5, %ctaid.x;
    setp.ne.u32 %p1, %r5, 0;
    @%p1 bra OTHER;
    st.shared.f32 [%r4], %f1;
    bra.uni JOIN;
OTHER:
    ld.shared.f32 %f2, [%r3];
JOIN:"""
    assert lint(body) == []
    [(_, d)] = lint(body.replace("%ctaid.x", "%tid.x"))  # thread 0 writes what others read
    assert d.details["kinds"] == "write-read" and d.details["threads"][0] == 0


def test_unknown_block_shape_is_possible_and_says_so():
    [(_, d)] = lint(WARP_EXCHANGE.format(sync=""), None)
    assert d.certainty is Certainty.POSSIBLE
    assert any("block shape unknown" in n for n in d.notes)


def test_two_dimensional_kernel_needs_the_block_shape():
    body = """    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    mad.lo.u32 %r3, %r2, 32, %r1;
    shl.b32 %r4, %r3, 2;
    mov.u32 %r5, tile;
    add.u32 %r6, %r5, %r4;
    st.shared.u32 [%r6], %r1;
    ld.shared.u32 %r7, [%r6+4];"""
    [(_, d)] = lint(body, None, notes=True)
    assert d.severity is Severity.NOTE and "`%tid.y`" in d.message
    [(_, d)] = lint(body, "block=32,8")
    assert d.certainty is Certainty.DEFINITE and d.details["threads"] == [32, 31]


def test_data_dependent_address_gets_the_unchecked_note():
    body = """    mov.u32 %r1, %tid.x;
    ld.shared.u32 %r2, [tile];
    shl.b32 %r3, %r2, 2;
    mul.lo.u32 %r4, %r3, %r1;
    mov.u32 %r5, tile;
    add.u32 %r6, %r5, %r4;
    st.shared.u32 [%r6], %r1;"""
    [(_, d)] = lint(body, notes=True)
    assert d.severity is Severity.NOTE and d.details == {"unchecked": 2}


# ---- the docstring examples --------------------------------------------------------------------
def _doc_block(section: str) -> str:
    body = SharedMemoryRace.doc().split(section, 1)[1].split("\n## ", 1)[0]
    return re.search(r"```ptx\n(.+?)```", body, re.S).group(1)


def test_docstring_example_is_reported():
    snippet = _doc_block("## Example")
    want = expectations(snippet)
    got = lint(snippet, "block=32")
    assert [(line, d.rule) for line, d in got] == [(e.line, e.rule) for e in want]
    assert got[0][1].certainty is Certainty.DEFINITE


def test_docstring_fix_is_clean():
    assert lint(_doc_block("## Use instead"), "block=32") == []
