"""`bank-conflict`: findings on the samples (line, severity, certainty, message, label,
details), the cases around them, and the docstring examples."""
from __future__ import annotations

import re

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.bank_conflict import BankConflict

from ..conftest import ROOT
from ..expectations import lint_sample

RULE = "bank-conflict"
SAMPLES = ROOT / "ptx_samples" / RULE
PROLOGUE = """.version 8.0
.target sm_80
.address_size 64

.visible .entry example(.param .u64 buf, .param .u32 n)
{
    .reg .pred %p<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<8>;
    .shared .align 16 .b8 tile[4224];

    mov.u32 %r1, %tid.x;
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
"""


def lint(body: str, launch: str | None = "block=32"):
    """This rule's findings on `body` inside the standard prologue (%r1 = %tid.x, `tile`
    a 4224-byte shared array); lines count from the first line of `body`."""
    text = PROLOGUE + body + "    ret;\n}\n"
    options = LintOptions(launch=LaunchConfig.parse(launch) if launch else None,
                          enable=frozenset({RULE}))
    shift = PROLOGUE.count("\n")
    return [(d.line - shift, d) for d in lint_text(text, "t.ptx", options).diagnostics
            if d.rule == RULE]


def sample(name: str):
    return [d for d in lint_sample(SAMPLES / name).diagnostics if d.rule == RULE]


def shared_access(stride: int, insn: str = "ld.shared.f32 %f1, [%r5]") -> str:
    """`insn` at tile + stride * %tid.x."""
    return (f"    mul.lo.u32 %r3, %r1, {stride};\n"
            "    mov.u32 %r4, tile;\n"
            "    add.u32 %r5, %r4, %r3;\n"
            f"    {insn};\n")


# ---- the samples ------------------------------------------------------------------------------
def test_word_strides_give_2_to_32_ways():
    found = sample("ways.bad.ptx")
    got = [(d.line, d.details["ways"], d.details["bank"]) for d in found]
    assert got == [(90, 4, 0), (91, 2, 0), (95, 8, 0), (99, 16, 0), (103, 32, 0), (109, 32, 1)]
    d = found[4]
    assert (d.severity, d.certainty) == (Severity.WARNING, Certainty.DEFINITE)
    assert d.message == "32-way shared-memory bank conflict"
    assert d.label == "lanes 0-31 all hit bank 0"
    assert d.notes == ("address = s + 128*%tid.x", "banks counted from the start of `s` (bank 0)")
    assert found[1].label == "lanes 0, 16 all hit bank 0"
    assert found[3].label == "lanes 0, 2, ..., 30 all hit bank 0"
    assert d.help.startswith("pad each row by one 4-byte word")


def test_column_read_of_an_unpadded_tile():
    found = sample("column.bad.ptx")
    assert [(d.line, d.details["ways"]) for d in found] == \
        [(101, 32), (106, 32), (111, 32), (114, 32)]
    assert found[0].label == "lanes 0-31 all hit bank 0"
    assert found[0].notes[0].startswith("address = tile + 128*%tid.x")


def test_vectors_conflict_within_their_phase():
    v4, v2 = sample("vector.bad.ptx")
    assert (v4.details, v2.details) == ({"ways": 2, "bank": 0}, {"ways": 2, "bank": 0})
    assert v4.label == "lanes 0, 4 all hit bank 0"
    assert ("16-byte accesses are served a quarter-warp at a time; the conflict is among "
            "lanes 0-7") in v4.notes
    assert ("8-byte accesses are served a half-warp at a time; the conflict is among "
            "lanes 0-15") in v2.notes


def test_box_muller_interleaved_pairs():
    found = sample("box_muller.bad.ptx")
    assert [(d.line, d.details["ways"], d.details["bank"]) for d in found] == \
        [(77, 2, 0), (80, 2, 1)]


def test_ldmatrix_and_stmatrix_rows():
    ld, st = sample("matrix.bad.ptx")
    assert (ld.line, st.line) == (99, 105)
    assert ld.message == "8-way shared-memory bank conflict"
    assert ld.label == "lanes 0-7 all hit bank 0"
    assert "`ldmatrix` takes one 16-byte row address from each of lanes 0-31" in ld.notes
    assert "`stmatrix` takes one 16-byte row address from each of lanes 0-31" in st.notes


def test_generic_store_into_shared_memory():
    [d] = sample("generic.bad.ptx")
    assert (d.line, d.details) == (30, {"ways": 32, "bank": 0})


@pytest.mark.parametrize("name", ["ways.ok.ptx", "column.ok.ptx", "vector.ok.ptx",
                                  "box_muller.ok.ptx", "matrix.ok.ptx", "generic.ok.ptx"])
def test_padded_and_dense_twins_have_nothing(name: str):
    assert sample(name) == []


def test_swizzled_tile_is_checked_lane_by_lane_and_clean():
    # `threadIdx.x ^ r` has no lane form; with the block shape each lane's address is
    # evaluated on its own: lane i in bank i ^ row, no conflict and nothing unchecked
    assert sample("column_swizzled.ok.ptx") == []


# ---- cases around them -------------------------------------------------------------------------
@pytest.mark.parametrize("stride,ways", [(4, None), (8, 2), (12, None), (16, 4), (64, 16),
                                         (128, 32), (132, None), (0, None)])
def test_ways_by_word_stride(stride: int, ways: int | None):
    found = lint(shared_access(stride))
    assert [d.details["ways"] for _, d in found] == ([] if ways is None else [ways])


def test_broadcast_of_one_word_is_free():
    assert lint("    ld.shared.f32 %f1, [tile+8];\n") == []


@pytest.mark.parametrize("row_bytes,ways", [(4, None), (128, 2)])
def test_half_warps_reading_one_word_each(row_bytes: int, ways: int | None):
    # block 16x2: lanes 0-15 share word 0 (a broadcast), lanes 16-31 the next row's word
    body = ("    mov.u32 %r7, %tid.y;\n"
            f"    mul.lo.u32 %r3, %r7, {row_bytes};\n"
            "    mov.u32 %r4, tile;\n"
            "    add.u32 %r5, %r4, %r3;\n"
            "    ld.shared.f32 %f1, [%r5];\n")
    found = lint(body, launch="block=16,2")
    assert [d.details["ways"] for _, d in found] == ([] if ways is None else [ways])
    if ways:
        assert found[0][1].label == "lanes 0-31 all hit bank 0"


def test_ldmatrix_x1_uses_only_lanes_0_to_7():
    # lanes 8-31 would conflict with lane 0 at a 1024-byte stride; .x1 ignores them
    body = ("    mul.lo.u32 %r3, %r1, 16;\n"
            "    mov.u32 %r4, tile;\n"
            "    add.u32 %r5, %r4, %r3;\n"
            "    ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r6}, [%r5];\n")
    assert lint(body) == []
    [(_, d)] = lint(shared_access(128, "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r6}, [%r5]"))
    assert d.details["ways"] == 8
    assert "`ldmatrix` takes one 16-byte row address from each of lanes 0-7" in d.notes


def test_unknown_block_is_assumed_and_possible():
    [(line, d)] = lint(shared_access(128), launch=None)
    assert (line, d.certainty) == (4, Certainty.POSSIBLE)
    assert d.message == "possible 32-way shared-memory bank conflict"
    assert any(n.startswith("block shape unknown: assuming") for n in d.notes)


def test_stride_from_a_parameter_is_up_to():
    body = ("    ld.param.u32 %r2, [n];\n"
            "    min.u32 %r8, %r2, 32;\n"
            "    mul.lo.u32 %r9, %r1, %r8;\n"
            "    shl.b32 %r10, %r9, 2;\n"
            "    mov.u32 %r4, tile;\n"
            "    add.u32 %r11, %r4, %r10;\n"
            "    ld.shared.f32 %f3, [%r11];\n")
    [(line, d)] = lint(body)
    assert (line, d.certainty) == (7, Certainty.POSSIBLE)
    assert d.message == "up to 32-way shared-memory bank conflict"
    assert "the stride between lanes depends on `n`" in d.notes


def test_xor_swizzle_is_listed_as_unchecked():
    body = ("    xor.b32 %r3, %r1, 7;\n"
            "    shl.b32 %r3, %r3, 2;\n"
            "    mov.u32 %r4, tile;\n"
            "    add.u32 %r5, %r4, %r3;\n"
            "    st.shared.f32 [%r5], %f1;\n")
    [(line, d)] = lint(body)
    assert (line, d.severity, d.details) == (5, Severity.NOTE, {"unchecked": 1})
    assert d.message == ("bank conflicts not checked for 1 shared-memory access whose lane "
                         "addresses are unknown")


def test_global_accesses_are_not_this_rule():
    body = ("    mul.wide.u32 %rd3, %r1, 128;\n"
            "    add.s64 %rd4, %rd2, %rd3;\n"
            "    ld.global.f32 %f1, [%rd4];\n")
    assert lint(body) == []


# ---- the docstring examples --------------------------------------------------------------------
def _doc_block(section: str) -> str:
    body = BankConflict.doc().split(section, 1)[1].split("\n## ", 1)[0]
    return re.search(r"```ptx\n(.+?)```", body, re.S).group(1)


def test_docstring_example_is_reported():
    [(line, d)] = lint(_doc_block("## Example"))
    assert line == 4 and d.message == "32-way shared-memory bank conflict"
    assert d.label == "lanes 0-31 all hit bank 0"


def test_docstring_fix_is_clean():
    assert lint(_doc_block("## Use instead")) == []
