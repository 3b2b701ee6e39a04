"""`global-memory-race`: findings on the samples, the patterns that must stay clean
(global index, grid stride, a block's result written by thread 0, atomics, the same
value), races inside one block, the launch without a grid, and the docstring examples."""
from __future__ import annotations

import re

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.global_memory_race import GlobalMemoryRace

from ..conftest import ROOT
from ..expectations import expectations, lint_sample

RULE = "global-memory-race"
SAMPLES = ROOT / "ptx_samples" / RULE
PROLOGUE = """.version 8.0
.target sm_80
.address_size 64

.visible .entry example(.param .u64 out, .param .u64 in)
{
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd9, [in];
"""
SHIFT = PROLOGUE.count("\n")


def lint(body: str, launch: str | None = "block=64 grid=8", notes: bool = False):
    text = PROLOGUE + body.lstrip("\n") + "\n    ret;\n}\n"
    options = LintOptions(launch=LaunchConfig.parse(launch) if launch else None,
                          enable=frozenset({RULE}))
    return [(d.line - SHIFT, d) for d in lint_text(text, "t.ptx", options).diagnostics
            if d.rule == RULE and (notes or d.severity >= Severity.WARNING)]


def sample(name: str):
    return [d for d in lint_sample(SAMPLES / name).diagnostics
            if d.rule == RULE and d.severity >= Severity.WARNING]


# ---- the samples ------------------------------------------------------------------------------
def test_every_block_writing_the_same_elements_is_definite():
    [d] = sample("block_shared_out.bad.ptx")
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    assert d.message == "global-memory race on `scale_param_1`: threads of different " \
                        "blocks write the same bytes"
    assert d.label == "thread 0 of block 0 writes bytes 0-3 of `scale_param_1` and " \
                      "thread 0 of block 1 writes them"
    assert any("does not depend on the block index" in n for n in d.notes)


def test_a_block_stride_instead_of_a_grid_stride():
    found = sample("grid_stride.bad.ptx")
    assert len(found) == 4 and all(d.details["cross_block"] for d in found)
    assert {d.details["kinds"] for d in found} <= {"write-read", "write-write"}


def test_every_thread_writing_the_block_result():
    [d] = sample("block_sum.bad.ptx")
    assert d.details["cross_block"] is False and d.certainty is Certainty.DEFINITE
    assert "bar.sync" in d.help


def test_a_plain_read_modify_write_of_one_slot():
    [d] = sample("single_slot.bad.ptx")
    assert d.details["kinds"] == "write-read" and d.related


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.ok.ptx")))
def test_clean_twins_are_clean(name):
    assert sample(name) == []


# ---- clean patterns ------------------------------------------------------------------------------
GLOBAL_INDEX = """
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mad.lo.s32 %r3, %r2, 64, %r1;
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
"""


def test_the_global_index_is_clean():
    assert lint(GLOBAL_INDEX + "    st.global.u32 [%rd4], %r1;\n") == []


def test_a_grid_stride_loop_is_clean():
    assert lint(GLOBAL_INDEX + """
    mov.u32 %r4, 0;
LOOP:
    st.global.u32 [%rd4], %r4;
    add.s64 %rd4, %rd4, 2048;       // 64 threads x 8 blocks x 4 bytes
    add.s32 %r4, %r4, 1;
    setp.lt.u32 %p1, %r4, 4;
    @%p1 bra LOOP;
""") == []


def test_a_block_result_from_thread_zero_is_clean():
    assert lint("""
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r2;
DONE:
""") == []


def test_atomics_and_the_same_value_do_not_race():
    assert lint("""
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    atom.global.add.u32 %r2, [%rd2], %r1;
    st.global.u32 [%rd2+4], 1;      // every thread stores 1
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4+8], %r1;    // every block stores the same values
""") == []


def test_a_fenced_last_block_read_is_taken_as_synchronised():
    assert lint(GLOBAL_INDEX + """
    st.global.u32 [%rd4], %r1;
    membar.gl;
    atom.global.add.u32 %r5, [%rd2+8192], 1;
    setp.ne.u32 %p1, %r5, 7;
    @%p1 bra DONE;
    ld.global.u32 %r6, [%rd2];
DONE:
""", notes=True) == []


# ---- races ----------------------------------------------------------------------------------
def test_every_thread_writing_one_word_with_its_own_value():
    [(line, d)] = lint("""
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    st.global.u32 [%rd2], %r1;
""")
    assert line == 3 and d.certainty is Certainty.DEFINITE
    # thread 0 of block 0 against a thread of another index (values differ by %tid)
    assert d.details["threads"][0] != d.details["threads"][1]


def test_a_barrier_orders_threads_of_one_block_only():
    [(line, d)] = lint("""
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SKIP;
    st.global.u32 [%rd4], %r1;
SKIP:
    bar.sync 0;
    ld.global.u32 %r5, [%rd4+4];    // the next block's slot: no barrier orders that
""")
    assert line == 8 and d.details["cross_block"] is True
    assert d.details["other_line"] - SHIFT == 11


def test_without_a_grid_a_block_aware_kernel_gets_a_warning():
    found = lint("""
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r2;
""", "block=64")
    [(line, d)] = found
    assert d.severity is Severity.WARNING
    assert d.message.endswith("when the grid has more than one block")


def test_without_a_grid_a_single_block_kernel_gets_a_note():
    body = """
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r2, [%rd4+256];
    st.global.u32 [%rd4], %r2;
"""
    assert lint(body, "block=64") == []
    [(line, d)] = lint(body, "block=64", notes=True)
    assert d.severity is Severity.NOTE and line == 6


# ---- the docstring examples --------------------------------------------------------------------
def _doc_block(section: str) -> str:
    body = GlobalMemoryRace.doc().split(section, 1)[1].split("\n## ", 1)[0]
    return re.search(r"```ptx\n(.+?)```", body, re.S).group(1)


def test_docstring_example_is_reported():
    snippet = _doc_block("## Example")
    want = expectations(snippet)
    got = lint(snippet)
    assert [(line, d.rule) for line, d in got] == [(e.line, e.rule) for e in want]
    assert got[0][1].certainty is Certainty.DEFINITE


def test_docstring_fix_is_clean():
    assert lint(_doc_block("## Use instead")) == []
