"""`uninitialized-read`: findings on the samples (line, severity, certainty, labels,
details), the register cases around them (predicates, recomputed comparisons, copies and
selects, vector elements, stores, calls), shared and local memory, what is left
unjudged, and the docstring examples."""
from __future__ import annotations

import re

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.uninitialized_read import UninitializedRead, byte_ranges

from ..conftest import ROOT
from ..expectations import expectations, lint_sample

RULE = "uninitialized-read"
SAMPLES = ROOT / "ptx_samples" / RULE
PROLOGUE = """.version 8.0
.target sm_80
.address_size 64

.visible .entry example(.param .u64 buf, .param .u32 n)
{
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<8>;
    .reg .f32 %f<16>;
    .reg .v4 .f32 %v;
    .shared .align 4 .b8 tile[1024];
    .local .align 4 .b8 depot[32];
"""
SHIFT = PROLOGUE.count("\n")


def lint(body: str, launch: str | None = "block=256", notes: bool = False, extra: str = ""):
    """This rule's findings on `body` in the standard prologue; lines count from the
    first line of `body`."""
    text = extra + PROLOGUE + body.lstrip("\n") + "\n    ret;\n}\n"
    options = LintOptions(launch=LaunchConfig.parse(launch) if launch else None,
                          enable=frozenset({RULE}))
    shift = SHIFT + extra.count("\n")
    return [(d.line - shift, d) for d in lint_text(text, "t.ptx", options).diagnostics
            if d.rule == RULE and (notes or d.severity >= Severity.WARNING)]


def sample(name: str):
    return [d for d in lint_sample(SAMPLES / name).diagnostics
            if d.rule == RULE and d.severity >= Severity.WARNING]


# ---- the samples ------------------------------------------------------------------------------
def test_a_register_nothing_writes_is_a_definite_error():
    [d] = sample("never_written.bad.ptx")
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    assert d.message == "`%f4` is read but never written before this"
    assert d.label == "`%f4` is written nowhere in `triple`"


def test_a_predicated_write_read_unguarded_is_possible():
    [d] = sample("predicated.bad.ptx")
    assert (d.severity, d.certainty) == (Severity.WARNING, Certainty.POSSIBLE)
    assert d.details == {"kind": "register", "register": "%f1"}
    assert any("written only under `@%p1`" in n for n in d.notes)
    assert [r.line for r in d.related] == [33]


def test_a_value_set_on_one_branch_names_the_path():
    [d] = sample("one_branch.bad.ptx")
    assert d.label == "`%f2` has no value on the path with the branch at line 33 taken"


def test_partial_tile_names_the_threads_and_bytes():
    [d] = sample("partial_tile.bad.ptx")
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    assert d.message == "shared memory read before it is written: bytes 512-1023 of `tile`"
    assert d.label == ("threads 128-255 read bytes 512-1023 of `tile`, which no thread of "
                       "the block has written")
    assert "the writes that can come first cover bytes 0-511 of `tile`" in d.notes


def test_local_window_reads_the_unfilled_element():
    [d] = sample("local_window.bad.ptx")
    assert d.details["kind"] == "local" and d.details["bytes"] == "28-31"
    assert d.severity is Severity.WARNING  # only the reads of w[7] are unwritten


def test_accumulator_without_a_start_value():
    [d] = sample("accumulator.bad.ptx")
    assert d.details == {"kind": "register", "register": "%f21"}


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.ok.ptx")))
def test_clean_twins_are_clean(name):
    assert sample(name) == []


# ---- registers ---------------------------------------------------------------------------------
def test_read_under_the_same_predicate_is_fine():
    body = """
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 mov.u32 %r2, 1;
    @%p1 add.s32 %r3, %r2, %r1;
    @!%p1 mov.u32 %r2, 2;
    add.s32 %r4, %r2, %r1;          // written under %p1 and under !%p1: always
"""
    assert lint(body) == []


def test_a_recomputed_comparison_is_the_same_condition():
    body = """
    mov.u32 %r1, %tid.x;
    ld.param.u32 %r9, [n];
    setp.ge.s32 %p1, %r1, %r9;
    @%p1 bra SKIP;
    mov.u32 %r2, 7;
SKIP:
    add.s32 %r5, %r1, 11;
    add.s32 %r6, %r5, -11;          // %r1 again, by another way
    setp.ge.u32 %p2, %r6, %r9;      // unsigned this time: %r1 is known non-negative
    @%p2 bra DONE;
    add.s32 %r3, %r2, 1;
DONE:
"""
    assert lint(body) == []


def test_a_different_comparison_does_not_excuse_the_read():
    body = """
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 mov.u32 %r2, 1;
    setp.lt.u32 %p2, %r1, 64;
    @%p2 add.s32 %r3, %r2, %r1;     // expect: uninitialized-read
"""
    [(line, d)] = lint(body)
    assert line == 5 and d.certainty is Certainty.POSSIBLE


def test_copies_and_selects_pass_definedness_on():
    body = """
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 mov.u32 %r2, 1;
    mov.u32 %r3, %r2;               // a copy reads nothing
    selp.u32 %r4, %r3, 5, %p1;      // the undefined arm is never selected
    add.s32 %r5, %r4, 1;
    mov.u32 %r6, %r9;               // a copy of a register nothing writes ...
    add.s32 %r7, %r6, 1;            // ... is reported where it is used
"""
    [(line, d)] = lint(body)
    assert line == 8 and d.details["register"] == "%r6"
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)


def test_vector_register_elements_are_separate():
    body = """
    mov.f32 %v.x, 0f3F800000;
    mov.f32 %v.y, 0f40000000;
    add.f32 %f1, %v.x, %v.y;        // written elements: fine
    add.f32 %f2, %v.z, %f1;
"""
    [(line, d)] = lint(body)
    assert line == 4 and d.details["register"] == "%v.z"


def test_a_later_full_write_kills_the_partial_one():
    body = """
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 mov.u32 %r2, 1;
    mov.u32 %r2, 3;
    add.s32 %r3, %r2, %r1;
"""
    assert lint(body) == []


def test_one_finding_per_path_not_per_read():
    body = """
    mov.u32 %r1, %tid.x;
    add.s32 %r3, %r9, 1;
    add.s32 %r4, %r9, 2;
"""
    assert [line for line, _ in lint(body)] == [2]


def test_storing_a_maybe_undefined_value_is_not_a_read():
    body = """
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 mov.u32 %r2, 1;
    mov.u32 %r3, tile;
    st.shared.u32 [%r3], %r2;       // copied to memory: not a use
    st.shared.u32 [%r3+4], %r9;     // but a register nothing writes is
"""
    [(line, d)] = lint(body)
    assert line == 6 and d.details["register"] == "%r9"


def test_a_loop_carried_value_read_on_the_first_trip():
    body = """
    mov.u32 %r1, 0;
LOOP:
    add.f32 %f2, %f1, 0f3F800000;   // %f1 is set at the end of the trip
    mov.f32 %f1, %f2;
    add.s32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, 8;
    @%p1 bra LOOP;
"""
    [(line, d)] = lint(body)
    assert line == 3 and d.certainty is Certainty.POSSIBLE


def test_parameters_initialisers_and_call_results_are_defined():
    extra = """.version 8.0
.target sm_80
.address_size 64
.func (.reg .b32 %ret) twice(.reg .b32 %x)
{
    add.s32 %ret, %x, %x;
    ret;
}
"""
    text = extra + """
.visible .entry example(.param .u64 buf)
{
    .reg .b32 %r<8>;
    .reg .b32 %k = 5;
    mov.u32 %r1, %tid.x;
    call (%r2), twice, (%r1);
    add.s32 %r3, %r2, %k;
    ret;
}
"""
    options = LintOptions(launch=LaunchConfig.parse("block=32"), enable=frozenset({RULE}))
    found = [d for d in lint_text(text, "t.ptx", options).diagnostics if d.rule == RULE]
    assert found == []


def test_a_callee_reading_its_return_register_before_writing_it():
    text = """.version 8.0
.target sm_80
.address_size 64
.func (.reg .b32 %ret) bump(.reg .b32 %x)
{
    add.s32 %ret, %ret, %x;
    ret;
}
.visible .entry example(.param .u64 buf)
{
    .reg .b32 %r<8>;
    mov.u32 %r1, %tid.x;
    call (%r2), bump, (%r1);
    ret;
}
"""
    options = LintOptions(launch=LaunchConfig.parse("block=32"), enable=frozenset({RULE}))
    [d] = [d for d in lint_text(text, "t.ptx", options).diagnostics if d.rule == RULE]
    assert d.line == 6 and d.details["register"] == "%ret"


# ---- shared memory ---------------------------------------------------------------------------
TILE = """
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, tile;
    add.s32 %r4, %r3, %r2;
"""


def test_a_tile_written_before_the_barrier_is_clean():
    assert lint(TILE + """
    st.shared.u32 [%r4], %r1;
    bar.sync 0;
    ld.shared.u32 %r5, [%r4];
""") == []


def test_a_neighbour_written_later_in_the_same_interval_is_not_reported():
    # thread t + 1 may write tile[t + 1] before thread t reads it: a race, not a read
    # of bytes nothing wrote
    assert lint(TILE + """
    st.shared.u32 [%r4], %r1;
    ld.shared.u32 %r5, [%r4+4];
""") == []


def test_without_a_block_shape_shared_memory_is_not_judged():
    assert lint(TILE + """
    bar.sync 0;
    ld.shared.u32 %r5, [%r4];
""", None) == []


def test_an_object_cp_async_writes_is_not_judged():
    assert lint(TILE + """
    ld.param.u64 %rd1, [buf];
    cp.async.ca.shared.global [%r4], [%rd1], 4;
    cp.async.wait_all;
    bar.sync 0;
    ld.shared.u32 %r5, [%r4];
""") == []


def test_bytes_outside_the_object_are_left_to_out_of_bounds():
    assert lint(TILE + """
    st.shared.u32 [%r4], %r1;
    bar.sync 0;
    ld.shared.u32 %r5, [%r4+1024];
""") == []


# ---- local memory ----------------------------------------------------------------------------
def test_local_bytes_no_path_writes():
    [(line, d)] = lint("""
    mov.u32 %r1, %tid.x;
    st.local.u32 [depot], %r1;
    ld.local.u32 %r2, [depot+4];
""")
    assert line == 3 and d.details == {"kind": "local", "object": "depot", "bytes": "4-7"}
    assert d.certainty is Certainty.DEFINITE


def test_local_written_on_every_path_is_clean():
    assert lint("""
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 4;
    @%p1 bra A;
    st.local.u32 [depot], %r1;
    bra.uni B;
A:
    st.local.u32 [depot], 0;
B:
    ld.local.u32 %r2, [depot];
""") == []


def test_byte_ranges():
    assert byte_ranges([0, 1, 2, 3, 8, 9, 10, 11]) == "0-3, 8-11"
    assert byte_ranges([5]) == "5"


# ---- the docstring examples --------------------------------------------------------------------
def _doc_block(section: str) -> str:
    body = UninitializedRead.doc().split(section, 1)[1].split("\n## ", 1)[0]
    return re.search(r"```ptx\n(.+?)```", body, re.S).group(1)


def test_docstring_example_is_reported():
    snippet = "    mov.u32 %r1, %tid.x;\n" + _doc_block("## Example")
    want = expectations(snippet)
    got = lint(snippet)
    assert [(line, d.rule) for line, d in got] == [(e.line, e.rule) for e in want]


def test_docstring_fix_is_clean():
    assert lint("    mov.u32 %r1, %tid.x;\n" + _doc_block("## Use instead")) == []
