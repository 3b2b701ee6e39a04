"""`uncoalesced-access`: findings on the samples (line, severity, certainty, message,
details), the cases around them, and the docstring examples."""
from __future__ import annotations

import re

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.uncoalesced_access import (UncoalescedAccess, coefficient_samples,
                                              lane_text, object_name)
from ptxlint.domains.strided import StridedInterval as SI

from ..conftest import ROOT
from ..expectations import lint_sample

RULE = "uncoalesced-access"
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
    .shared .align 4 .b8 tile[4224];

    mov.u32 %r1, %tid.x;
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
"""


def lint(body: str, launch: str | None = "block=32", **rule_options):
    """This rule's findings on `body` inside the standard prologue (%r1 = %tid.x, %rd2 =
    the global buffer `buf`); lines count from the first line of `body`."""
    text = PROLOGUE + body + "    ret;\n}\n"
    options = LintOptions(launch=LaunchConfig.parse(launch) if launch else None,
                          enable=frozenset({RULE}), rule_options=rule_options)
    shift = PROLOGUE.count("\n")
    return [(d.line - shift, d) for d in lint_text(text, "t.ptx", options).diagnostics
            if d.rule == RULE]


def sample(name: str):
    return [d for d in lint_sample(SAMPLES / name).diagnostics if d.rule == RULE]


def strided_load(stride: int, width: str = "f32") -> str:
    return (f"    mul.wide.u32 %rd3, %r1, {stride};\n"
            "    add.s64 %rd4, %rd2, %rd3;\n"
            f"    ld.global.{width} %f1, [%rd4];\n")


# ---- the samples ------------------------------------------------------------------------------
def test_naive_transpose_store_steps_by_a_column():
    found = sample("transpose.bad.ptx")
    assert [d.line for d in found] == [77, 91, 105, 119]
    d = found[0]
    assert (d.severity, d.certainty) == (Severity.WARNING, Certainty.DEFINITE)
    assert d.message == "lanes step by 4096 bytes: 32 sectors per request, ideal 4"
    assert d.label == "lane i writes lane 0's address + 4096*i"
    # %tid.y is the same in every lane of a 32x8 block's warp: part of the uniform offset
    assert len(d.notes) == 1
    assert d.notes[0].startswith("address = transpose_naive_param_0 + 4096*%tid.x + ")
    assert d.details == {"sectors_per_request": 32, "ideal_sectors_per_request": 4,
                         "stride_bytes": 4096}
    assert d.help.startswith("make consecutive lanes access consecutive addresses")
    assert d.cuda is not None and d.cuda.line == 13  # the .loc of the store


def test_strides_of_2_8_32_elements_and_atomics():
    found = sample("strided.bad.ptx")
    got = [(d.line, d.details["sectors_per_request"], d.details["stride_bytes"])
           for d in found]
    assert got == [(60, 8, 8), (67, 32, 32), (74, 32, 128), (80, 32, 32), (86, 32, 128)]
    assert found[3].label == "lane i updates lane 0's address + 32*i"  # atom.global
    # stride 8 is only 8 sectors because the buffer is taken as cudaMalloc-aligned
    assert "pointer alignment unknown: assuming the 256-byte alignment of cudaMalloc" \
        in found[0].notes


def test_vector_widths_have_their_own_ideal():
    got = [(d.details["sectors_per_request"], d.details["ideal_sectors_per_request"])
           for d in sample("vector.bad.ptx")]
    assert got == [(32, 16), (32, 8), (16, 8)]


def test_array_of_structures_fields():
    found = sample("aos.bad.ptx")
    assert [d.line for d in found] == [58, 59]
    assert found[0].notes[0] == "address = momentum_param_1 + 32*%tid.x + a warp-uniform offset"


def test_generic_load_into_a_global_buffer_and_red():
    found = sample("generic.bad.ptx")
    assert [(d.line, d.details["stride_bytes"]) for d in found] == [(28, 128), (32, 32)]
    assert found[0].notes[0] == "address = m + 128*%tid.x + a warp-uniform offset"


def test_runtime_stride_names_the_parameter_and_its_thresholds():
    [d] = sample("param_stride.bad.ptx")
    p = "gather_column_param_2"
    assert d.line == 52 and d.certainty is Certainty.POSSIBLE
    assert d.message == (f"lanes step by 4*`{p}` bytes: 32 sectors per request when `{p}` "
                         f">= 8; 4 when `{p}` == 1; ideal 4")
    assert f"2 times the ideal or more when `{p}` >= 2" in d.notes
    assert f"give `{p}` in the launch (param.{p}=V) for an exact count" in d.notes
    assert d.details == {"sectors_per_request": 32, "ideal_sectors_per_request": 4,
                         "stride_bytes": None, "parameter": p}


def test_runtime_stride_given_by_the_launch_is_exact():
    [d] = sample("param_given.bad.ptx")
    assert d.certainty is Certainty.DEFINITE
    assert d.message == "lanes step by 128 bytes: 32 sectors per request, ideal 4"
    assert sample("param_given.ok.ptx") == [] and sample("param_stride.ok.ptx") == []


@pytest.mark.parametrize("name", ["transpose.ok.ptx", "strided.ok.ptx", "vector.ok.ptx",
                                  "aos.ok.ptx", "generic.ok.ptx"])
def test_clean_twins_have_nothing(name: str):
    assert sample(name) == []


# ---- cases around them -------------------------------------------------------------------------
@pytest.mark.parametrize("stride,sectors", [(4, None), (8, 8), (16, 16), (32, 32), (128, 32)])
def test_sector_counts_by_stride(stride: int, sectors: int | None):
    found = lint(strided_load(stride))
    assert [d.details["sectors_per_request"] for _, d in found] == \
        ([] if sectors is None else [sectors])


def test_uniform_address_is_one_sector():
    assert lint("    ld.global.f32 %f1, [%rd2+64];\n") == []


def test_ratio_option():
    assert lint(strided_load(8), uncoalesced_ratio=4.0) == []
    [(line, d)] = lint(strided_load(16), uncoalesced_ratio=4.0)
    assert line == 3 and d.details["sectors_per_request"] == 16


def test_unknown_block_is_assumed_and_possible():
    [(line, d)] = lint(strided_load(128), launch=None)
    assert (line, d.certainty) == (3, Certainty.POSSIBLE)
    assert d.message == "lanes step by 128 bytes: 32 sectors per request, ideal 4"
    assert ("block shape unknown: assuming ntid.x is a multiple of 32, so each warp is 32 "
            "consecutive %tid.x of one row") in d.notes


def test_partial_warp_has_a_smaller_ideal():
    # block of 48: warp 1 has 16 lanes; 16 lanes x 8 bytes: 4 sectors for an ideal of 2
    [(_, d)] = lint(strided_load(8), launch="block=48")
    assert d.details["sectors_per_request"] == 8  # warp 0 is the worst: 8 for 4


def test_runtime_stride_in_bytes_when_not_a_multiple_of_the_parameter():
    body = ("    ld.param.u32 %r2, [n];\n"
            "    min.u32 %r3, %r2, 64;\n"
            "    mul.lo.u32 %r4, %r1, %r3;\n"
            "    mul.wide.u32 %rd3, %r4, 4;\n"
            "    add.s64 %rd4, %rd2, %rd3;\n"
            "    ld.global.f32 %f1, [%rd4];\n")
    [(line, d)] = lint(body)
    assert line == 6
    assert d.message == ("lanes step by a runtime stride ({0..256 step 4} bytes): 32 sectors "
                         "per request for a stride of 32 bytes or more; 4 for a stride of "
                         "4 bytes; ideal 4")
    assert "the stride depends on `n`" in d.notes
    assert d.details["parameter"] == "n"


def test_unknown_patterns_get_one_note_per_kernel():
    body = ("    ld.global.u32 %r2, [%rd2];\n"          # uniform: fine
            "    xor.b32 %r3, %r1, 5;\n"
            "    mul.wide.u32 %rd3, %r3, 4;\n"
            "    add.s64 %rd4, %rd2, %rd3;\n"
            "    ld.global.f32 %f1, [%rd4];\n"
            "    st.global.f32 [%rd4+512], %f1;\n")
    # with the block shape, `tid ^ 5` is evaluated lane by lane: it permutes the lanes
    # within groups of 8, so the warp still reads 128 consecutive bytes
    assert lint(body) == []
    [(line, d)] = lint(body, launch=None)
    assert (line, d.severity) == (5, Severity.NOTE)
    assert d.message == ("coalescing not checked for 2 global accesses whose lane addresses "
                         "are unknown")
    assert d.details == {"unchecked": 2}
    assert d.notes[0].endswith("address = buf + a different offset in each lane "
                               "(not affine in the thread index)")


def test_shared_and_local_accesses_are_not_this_rule():
    body = ("    mul.lo.u32 %r3, %r1, 128;\n"
            "    mov.u32 %r4, tile;\n"
            "    add.u32 %r5, %r4, %r3;\n"
            "    ld.shared.f32 %f1, [%r5];\n")
    assert lint(body) == []


# ---- helpers -----------------------------------------------------------------------------------
def test_lane_text():
    assert lane_text(range(32)) == "0-31"
    assert lane_text(range(0, 32, 2)) == "0, 2, ..., 30"
    assert lane_text([0, 1, 2, 3, 8, 9, 10, 11]) == "0-3, 8-11"
    assert lane_text([0, 16]) == "0, 16"


def test_object_name_of_a_function_local_static():
    assert object_name("_ZZ15transpose_tiledE4tile") == "tile"
    assert object_name("buf") == "buf"


def test_coefficient_samples_cover_small_strides_and_both_ends():
    got = coefficient_samples(SI.range(0, 17179869180, 4))
    assert got[:3] == [0, 4, 8] and 160 in got and got[-1] == 17179869180
    assert coefficient_samples(SI.range(0, 12, 4)) == [0, 4, 8, 12]


# ---- the docstring examples --------------------------------------------------------------------
def _doc_block(section: str) -> str:
    body = UncoalescedAccess.doc().split(section, 1)[1].split("\n## ", 1)[0]
    return re.search(r"```ptx\n(.+?)```", body, re.S).group(1)


def test_docstring_example_is_reported():
    [(line, d)] = lint(_doc_block("## Example"))
    assert line == 3 and d.message == "lanes step by 128 bytes: 32 sectors per request, ideal 4"


def test_docstring_fix_is_clean():
    assert lint(_doc_block("## Use instead")) == []
