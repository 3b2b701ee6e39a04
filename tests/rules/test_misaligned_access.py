"""`misaligned-access`: findings on the samples (line, severity, certainty, message,
label, notes, details), the cases around them and the docstring examples."""
from __future__ import annotations

import re

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.misaligned_access import MisalignedAccess

from ..conftest import ROOT
from ..expectations import lint_sample

RULE = "misaligned-access"
SAMPLES = ROOT / "ptx_samples" / RULE
PROLOGUE = """.version 8.0
.target sm_80
.address_size 64

.visible .entry example(.param .u64 buf, .param .u64 .ptr.global.align 4 packed,
                        .param .u64 table, .param .u32 k)
{
    .reg .pred %p<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<8>;
    .reg .f64 %fd<4>;

    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
"""


def lint(body: str, launch: str | None = "block=256"):
    """This rule's findings on `body` inside the standard prologue (%rd2 = the global
    buffer `buf`, %r1 = %tid.x); lines count from the first line of `body`."""
    text = PROLOGUE + body + "    ret;\n}\n"
    options = LintOptions(launch=LaunchConfig.parse(launch) if launch else None,
                          enable=frozenset({RULE}))
    shift = PROLOGUE.count("\n")
    return [(d.line - shift, d) for d in lint_text(text, "t.ptx", options).diagnostics
            if d.rule == RULE]


def sample(name: str):
    return [d for d in lint_sample(SAMPLES / name).diagnostics if d.rule == RULE]


ASSUMED = "pointer alignment unknown: assuming the 256-byte alignment of cudaMalloc for `{}`"


# ---- the samples ------------------------------------------------------------------------------
def test_float4_view_of_a_float_pointer_plus_one():
    [d] = sample("vec4_offset.bad.ptx")
    assert d.line == 49
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    assert d.message == "misaligned 16-byte load: the address is 4 modulo 16"
    assert d.label == "every address is 4 bytes past a multiple of 16"
    assert d.notes == (ASSUMED.format("copy4_param_0"),)
    assert d.details == {"width": 16, "alignment": 4, "offset_residue": 4}
    assert d.help == ("make the offset from `copy4_param_0` a multiple of 16, or use "
                      "narrower accesses")


def test_double_at_an_odd_int_index():
    [d] = sample("double_from_int.bad.ptx")
    assert d.line == 49
    assert d.message == "misaligned 8-byte load: the address is 4 modulo 8"
    assert d.details == {"width": 8, "alignment": 4, "offset_residue": 4}


def test_float2_at_a_runtime_float_offset_is_a_note_with_its_condition():
    """The host chooses `first`: the alignment is its to keep, so a note that says what
    it must keep (issue 20: warnings only for what the PTX itself makes wrong)."""
    [d] = sample("float2_param_offset.bad.ptx")
    assert d.line == 53
    assert (d.severity, d.certainty) == (Severity.NOTE, Certainty.POSSIBLE)
    assert d.message == "8-byte load may be misaligned unless `sum_pairs_param_2` % 2 == 0"
    assert d.label.startswith("offset from `sum_pairs_param_0` = ")
    assert d.notes[0] == ("aligned for every `sum_pairs_param_2` that is a multiple of 2 "
                          "(re-analysed with that assumption): the host must guarantee it")
    assert d.details == {"width": 8, "alignment": 4, "offset_residue": 0,
                         "parameter": "sum_pairs_param_2", "multiple": 2}


def test_shared_v2_four_bytes_in():
    [d] = sample("shared_pair.bad.ptx")
    assert (d.line, d.severity) == (25, Severity.ERROR)
    assert d.notes == ("`vals` is 16-byte aligned",)  # declared: no assumption


def test_row_stats_notes_the_parameter_and_warns_for_the_shared_array():
    found = sample("row_stats.bad.ptx")
    notes = [d for d in found if d.severity == Severity.NOTE]
    warnings = [d for d in found if d.severity == Severity.WARNING]
    assert {d.message for d in notes} == {
        "16-byte load may be misaligned unless `row_stats_param_2` % 4 == 0"}
    assert [d.line for d in warnings] == [223, 226]
    assert {d.message for d in warnings} == {
        "16-byte load may be misaligned: `partial` is declared with `.align 4`"}
    # the fixed twin keeps the notes (the host's condition), not the warnings
    assert {d.severity for d in sample("row_stats.ok.ptx")} == {Severity.NOTE}


def test_ptr_align_one_of_sm_100_is_no_evidence():
    [d] = sample("block_moments.bad.ptx")  # the real defect: 8 bytes into a double2
    assert (d.severity, d.details["offset_residue"]) == (Severity.ERROR, 8)


def test_a_callers_local_depot_keeps_its_alignment_in_the_callee():
    found = sample("local_depot.bad.ptx")
    assert [(d.line, d.severity) for d in found] == [(55, Severity.WARNING),
                                                      (57, Severity.WARNING)]
    assert found[0].message == ("16-byte load may be misaligned: `__local_depot1` is "
                                "declared with `.align 8`")


@pytest.mark.parametrize("name", ["vec4_offset.ok.ptx", "double_from_int.ok.ptx",
                                  "float2_param_offset.ok.ptx", "shared_pair.ok.ptx",
                                  "block_moments.ok.ptx", "local_depot.ok.ptx"])
def test_twins_are_clean(name: str):
    assert sample(name) == []


# ---- cases around them ------------------------------------------------------------------------
@pytest.mark.parametrize("offset,ok", [(0, True), (4, False), (8, False), (16, True),
                                       (260, False)])
def test_v4_offsets_from_a_buffer(offset: int, ok: bool):
    found = lint(f"    ld.global.v4.f32 {{%f1, %f2, %f3, %f4}}, [%rd2+{offset}];\n")
    assert (found == []) is ok


def test_ptr_align_smaller_than_the_access_is_no_evidence():
    """`.ptr .align 4` (NVRTC writes `.ptr .align 1` for sm_100/sm_120) promises 4 and
    says nothing against the 256 of cudaMalloc: no finding."""
    assert lint("    ld.param.u64 %rd3, [packed];\n"
                "    cvta.to.global.u64 %rd4, %rd3;\n"
                "    ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];\n") == []


def test_ptr_align_attribute_keeps_the_definite_case():
    [(line, d)] = lint("    ld.param.u64 %rd3, [packed];\n"
                       "    cvta.to.global.u64 %rd4, %rd3;\n"
                       "    ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4+4];\n")
    assert (line, d.severity) == (3, Severity.ERROR)
    assert d.notes == (ASSUMED.format("packed"),)


def test_declared_alignment_below_the_width_is_a_warning():
    """A `.shared .align 4` array read as `.v4`: the PTX itself makes it wrong (it holds
    only by the layout ptxas happens to choose)."""
    text = PROLOGUE.replace("{\n", "{\n    .shared .align 4 .b8 tile[1024];\n", 1)
    body = ("    shl.b32 %r2, %r1, 4;\n    mov.u32 %r3, tile;\n    add.s32 %r4, %r3, %r2;\n"
            "    ld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [%r4];\n")
    options = LintOptions(launch=LaunchConfig.parse("block=64"), enable=frozenset({RULE}))
    [d] = [d for d in lint_text(text + body + "    ret;\n}\n", "t.ptx", options).diagnostics]
    assert (d.severity, d.certainty) == (Severity.WARNING, Certainty.POSSIBLE)
    assert d.message == "16-byte load may be misaligned: `tile` is declared with `.align 4`"
    assert d.details == {"width": 16, "alignment": 4, "offset_residue": 0}


def test_thread_step_not_a_multiple_of_the_width_is_a_warning():
    [(line, d)] = lint("    mul.wide.u32 %rd3, %r1, 4;\n    add.s64 %rd4, %rd2, %rd3;\n"
                       "    ld.global.v2.f32 {%f1, %f2}, [%rd4];\n")
    assert (line, d.severity) == (3, Severity.WARNING)
    assert d.message == "8-byte load may be misaligned: the address steps by 4 bytes per `%tid.x`"


def test_row_stride_from_a_parameter_is_a_note_with_its_condition():
    """`reinterpret_cast<float4*>(A + row * k)[i]`: aligned when k % 4 == 0."""
    [(line, d)] = lint("    ld.param.u32 %r2, [k];\n    mov.u32 %r3, %ctaid.x;\n"
                       "    mul.lo.s32 %r4, %r3, %r2;\n    mul.wide.s32 %rd3, %r4, 4;\n"
                       "    add.s64 %rd4, %rd2, %rd3;\n    mul.wide.u32 %rd5, %r1, 16;\n"
                       "    add.s64 %rd6, %rd4, %rd5;\n"
                       "    ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd6];\n")
    assert (line, d.severity, d.certainty) == (8, Severity.NOTE, Certainty.POSSIBLE)
    assert d.message == "16-byte load may be misaligned unless `k` % 4 == 0"
    assert (d.details["parameter"], d.details["multiple"]) == ("k", 4)


def test_parameter_given_by_the_launch_decides():
    body = ("    ld.param.u32 %r2, [k];\n    mov.u32 %r3, %ctaid.x;\n"
            "    mul.lo.s32 %r4, %r3, %r2;\n    mul.wide.s32 %rd3, %r4, 4;\n"
            "    add.s64 %rd4, %rd2, %rd3;\n    mul.wide.u32 %rd5, %r1, 16;\n"
            "    add.s64 %rd6, %rd4, %rd5;\n"
            "    ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd6];\n")
    assert lint(body, "block=256 param.k=1024") == []
    [(_, d)] = lint(body, "block=256 grid=4 param.k=1023")
    assert d.severity == Severity.WARNING  # the PTX and the launch make it wrong


def test_pointer_loaded_from_memory_is_a_note():
    found = lint("    ld.param.u64 %rd3, [table];\n"
                 "    cvta.to.global.u64 %rd4, %rd3;\n"
                 "    ld.global.u64 %rd5, [%rd4];\n"
                 "    ld.global.f64 %fd1, [%rd5];\n")
    [(line, d)] = found
    assert (line, d.severity, d.certainty) == (4, Severity.NOTE, Certainty.POSSIBLE)
    assert d.message == "8-byte load may be misaligned: the alignment of its address is unknown"
    assert d.details == {"width": 8, "alignment": 1, "offset_residue": 0}


def test_narrow_scalar_of_unknown_alignment_is_not_reported():
    assert lint("    ld.global.u64 %rd5, [%rd2];\n"
                "    ld.global.f32 %f1, [%rd5];\n") == []


def test_narrow_scalar_provably_misaligned_is_an_error():
    [(_, d)] = lint("    ld.global.f32 %f1, [%rd2+2];\n")
    assert d.message == "misaligned 4-byte load: the address is 2 modulo 4"


def test_index_scaled_by_the_element_size_is_aligned():
    # ((double*)buf)[k]: any k, 8-byte elements from a 256-byte aligned buffer
    assert lint("    ld.param.u32 %r2, [k];\n"
                "    mul.wide.s32 %rd3, %r2, 8;\n"
                "    add.s64 %rd4, %rd2, %rd3;\n"
                "    ld.global.f64 %fd1, [%rd4];\n") == []


def test_atomics_and_stores_are_checked():
    found = lint("    atom.global.add.u64 %rd5, [%rd2+4], 1;\n"
                 "    st.global.v2.f32 [%rd2+12], {%f1, %f2};\n")
    assert [(line, d.details["width"]) for line, d in found] == [(1, 8), (2, 8)]
    assert found[0][1].message.startswith("misaligned 8-byte atomic access")


# ---- the docstring examples --------------------------------------------------------------------
def _doc_block(section: str) -> str:
    body = MisalignedAccess.doc().split(section, 1)[1].split("\n## ", 1)[0]
    return re.search(r"```ptx\n(.+?)```", body, re.S).group(1)


def test_docstring_example_is_reported():
    [(line, d)] = lint(_doc_block("## Example"))
    assert line == 6 and d.message == "misaligned 8-byte load: the address is 4 modulo 8"


def test_docstring_fix_is_clean():
    assert lint(_doc_block("## Use instead")) == []
