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


def test_float2_at_a_runtime_float_offset_is_possible():
    [d] = sample("float2_param_offset.bad.ptx")
    assert d.line == 53
    assert (d.severity, d.certainty) == (Severity.WARNING, Certainty.POSSIBLE)
    assert d.message == ("8-byte load may be misaligned: the address is only known to be "
                         "4-byte aligned")
    assert d.label.startswith("offset from `sum_pairs_param_0` = ")
    assert d.details == {"width": 8, "alignment": 4, "offset_residue": 0}


def test_shared_v2_four_bytes_in():
    [d] = sample("shared_pair.bad.ptx")
    assert (d.line, d.severity) == (25, Severity.ERROR)
    assert d.notes == ("`vals` is 16-byte aligned",)  # declared: no assumption


@pytest.mark.parametrize("name", ["vec4_offset.ok.ptx", "double_from_int.ok.ptx",
                                  "float2_param_offset.ok.ptx", "shared_pair.ok.ptx"])
def test_twins_are_clean(name: str):
    assert sample(name) == []


# ---- cases around them ------------------------------------------------------------------------
@pytest.mark.parametrize("offset,ok", [(0, True), (4, False), (8, False), (16, True),
                                       (260, False)])
def test_v4_offsets_from_a_buffer(offset: int, ok: bool):
    found = lint(f"    ld.global.v4.f32 {{%f1, %f2, %f3, %f4}}, [%rd2+{offset}];\n")
    assert (found == []) is ok


def test_ptr_align_attribute_replaces_the_assumption():
    found = lint("    ld.param.u64 %rd3, [packed];\n"
                 "    cvta.to.global.u64 %rd4, %rd3;\n"
                 "    ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];\n")
    [(line, d)] = found
    assert (line, d.severity) == (3, Severity.WARNING)
    assert d.message == ("16-byte load may be misaligned: the address is only known to be "
                         "4-byte aligned")
    assert d.notes == ("`packed` is 4-byte aligned",)


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
