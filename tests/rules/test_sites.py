"""`sites.py` through the rules: only the lanes that run an access count (known and
unknown block shape), addresses placed lane by lane, and accesses served together."""
from __future__ import annotations

import pytest

from ptxlint.diagnostics import Certainty
from differential.static import lint_kernel
from ptxlint.ir.build import parse_module
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.memory_sites import memory_sites
from ptxlint.rules.out_of_bounds import judge

PROLOGUE = """.version 8.0
.target sm_80
.address_size 64

.visible .entry example(.param .u64 buf, .param .u32 n)
{
    .reg .pred %p<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<8>;
    .reg .f64 %fd<8>;
    .shared .align 16 .b8 tile[8192];

    mov.u32 %r1, %tid.x;
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, tile;
"""


def lint(body: str, launch: str | None = "block=64", rule: str = "bank-conflict"):
    text = PROLOGUE + body + "\n    ret;\n}\n"
    options = LintOptions(launch=LaunchConfig.parse(launch) if launch else None,
                          enable=frozenset({rule}))
    shift = PROLOGUE.count("\n")
    return [(d.line - shift, d) for d in lint_text(text, "t.ptx", options).diagnostics
            if d.rule == rule]


def guarded(words: int, bound: str = "15") -> str:
    """`if (tid <= bound) x = tile[words * tid]`"""
    setp = (f"    setp.gt.u32 %p1, %r1, {bound};\n" if bound.isdigit() else
            f"    ld.param.u32 %r9, [n];\n    setp.gt.u32 %p1, %r1, %r9;\n")
    return (setp + "    @%p1 bra DONE;\n"
            f"    mul.lo.u32 %r3, %r1, {4 * words};\n"
            "    add.u32 %r4, %r2, %r3;\n"
            "    ld.shared.f32 %f1, [%r4];\n"
            "DONE:")


# ---- only the lanes that run an access --------------------------------------------------------
@pytest.mark.parametrize("launch", ["block=64", "block=256", None])
def test_half_warp_at_a_stride_of_6_words_never_conflicts(launch):
    # 32 lanes would put lanes 0 and 16 in bank 0; the 16 that run it are in 16 banks
    assert lint(guarded(6), launch) == []


def test_half_warp_at_a_stride_of_8_words_is_4_way():
    [(line, d)] = lint(guarded(8))
    assert (line, d.details) == (5, {"ways": 4, "bank": 0})
    assert d.certainty is Certainty.DEFINITE
    assert d.message == "4-way shared-memory bank conflict"
    assert "only lanes 0-15 of warp 0 run the access" in d.notes


def test_unknown_shape_counts_the_lanes_any_warp_may_run():
    [(_, d)] = lint(guarded(8), None)
    assert d.details["ways"] == 4 and d.certainty is Certainty.POSSIBLE


def test_a_guard_the_analysis_cannot_evaluate_counts_every_lane_as_possible():
    # `tid <= n`, n unknown: all 32 lanes may run it (8-way), or only lane 0 (none)
    [(_, d)] = lint(guarded(8, "n"))
    assert d.details["ways"] == 8 and d.certainty is Certainty.POSSIBLE
    assert d.message == "possible 8-way shared-memory bank conflict"
    assert any(n.startswith("counted over every lane that may run the access") for n in d.notes)


def test_the_worst_step_of_a_strided_reduction():
    # for (s = 1; s < 256; s *= 2) { i = 2*s*tid; if (i < 256) tile[i] += tile[i + s]; }
    body = """    mov.u32 %r10, 1;
LOOP:
    shl.b32 %r11, %r10, 1;
    mul.lo.u32 %r12, %r11, %r1;
    setp.gt.u32 %p1, %r12, 255;
    @%p1 bra SKIP;
    shl.b32 %r3, %r12, 2;
    add.u32 %r4, %r2, %r3;
    ld.shared.f32 %f1, [%r4];
SKIP:
    mov.u32 %r10, %r11;
    setp.lt.u32 %p2, %r10, 256;
    @%p2 bra LOOP;"""
    [(_, d)] = lint(body, "block=256")
    assert d.details["ways"] == 8 and d.certainty is Certainty.POSSIBLE
    assert d.message == "up to 8-way shared-memory bank conflict"


# ---- lane by lane ------------------------------------------------------------------------------
def test_two_rows_of_16_threads_read_one_bank():
    # threadRow = tid / 16: rows 64 words apart (As[(threadRow * 8) * 8]), 2-way
    body = """    shr.u32 %r3, %r1, 4;
    shl.b32 %r4, %r3, 8;
    add.u32 %r5, %r2, %r4;
    ld.shared.f32 %f1, [%r5];"""
    [(_, d)] = lint(body, "block=256")
    assert d.details == {"ways": 2, "bank": 0} and d.certainty is Certainty.DEFINITE
    assert "lane by lane in warp 0: lanes 0-15 at +0, lanes 16-31 at +256 bytes" in d.notes
    # without the block shape: not checked, as before
    [(_, note)] = lint(body, None)
    assert note.details == {"unchecked": 1}


def test_an_xor_swizzle_is_checked_lane_by_lane():
    # tile[row][col ^ row] read by column: lane i in bank i ^ row
    body = """    and.b32 %r3, %r1, 31;
    xor.b32 %r4, %r3, 5;
    mad.lo.u32 %r5, %r3, 32, %r4;
    shl.b32 %r6, %r5, 2;
    add.u32 %r7, %r2, %r6;
    ld.shared.f32 %f1, [%r7];"""
    assert lint(body, "block=32") == []


# ---- accesses served together ------------------------------------------------------------------
def halves(stride: int) -> str:
    return (f"    mul.wide.u32 %rd3, %r1, {stride};\n"
            "    add.s64 %rd4, %rd2, %rd3;\n"
            "    ld.global.f64 %fd1, [%rd4];\n"
            "    ld.global.f64 %fd2, [%rd4+8];")


def test_a_16_byte_element_read_in_halves_is_one_access():
    assert lint(halves(16), "block=64", "uncoalesced-access") == []


def test_halves_of_a_sparse_element_are_reported_once():
    [(line, d)] = lint(halves(32), "block=64", "uncoalesced-access")
    assert line == 3 and d.details["instructions"] == 2
    assert d.details["sectors_per_request"] == 32 and d.details["ideal_sectors_per_request"] == 16
    assert [r.line - PROLOGUE.count("\n") for r in d.related] == [4]


def test_a_blocked_load_is_reported_once():
    loads = "\n".join(f"    ld.global.u32 %r{4 + k}, [%rd4+{4 * k}];" for k in range(8))
    body = "    mul.wide.u32 %rd3, %r1, 32;\n    add.s64 %rd4, %rd2, %rd3;\n" + loads
    [(line, d)] = lint(body, "block=64", "uncoalesced-access")
    assert line == 3 and d.details["instructions"] == 8
    assert d.details["stride_bytes"] == 32 and len(d.related) == 7


def test_fields_of_a_12_byte_record_are_judged_one_by_one():
    loads = "\n".join(f"    ld.global.u32 %r{4 + k}, [%rd4+{4 * k}];" for k in range(3))
    body = "    mul.wide.u32 %rd3, %r1, 12;\n    add.s64 %rd4, %rd2, %rd3;\n" + loads
    found = lint(body, "block=64", "uncoalesced-access")
    assert [line for line, _ in found] == [3, 4, 5]
    assert all("instructions" not in d.details for _, d in found)


# ---- out-of-bounds examples among the running threads -------------------------------------------
def test_out_of_bounds_example_is_a_thread_that_runs_the_access():
    # if (tid / 32 == 1) small[tid - 31] = ...: only warp 1 runs it, and thread 63
    # overflows; threads 0-30 would underflow, but never run it
    body = """    shr.u32 %r3, %r1, 5;
    setp.ne.s32 %p1, %r3, 1;
    @%p1 bra DONE;
    shl.b32 %r4, %r1, 2;
    mov.u32 %r5, small;
    add.u32 %r6, %r5, %r4;
    st.shared.f32 [%r6+-124], %f1;
DONE:"""
    text = PROLOGUE.replace(".b8 tile[8192];", ".b8 tile[8192];\n    .shared .align 4 .b8 small[128];")
    module = parse_module(text + body + "\n    ret;\n}\n", "t.ptx").module
    side = lint_kernel(module, "example", LaunchConfig.parse("block=64"))
    [site] = [x for x in memory_sites(side.facts) if x.space == "shared"]
    verdict = judge(side.context, site, 128)
    assert verdict.kind == "possible" and verdict.witness == "`%tid.x` = 63 would reach byte 128"


def test_out_of_bounds_is_clean_when_the_running_threads_stay_inside():
    # if (tid / 32 == 1) small[tid - 32] = ...: in bounds for warp 1, the only one there
    body = """    shr.u32 %r3, %r1, 5;
    setp.ne.s32 %p1, %r3, 1;
    @%p1 bra DONE;
    shl.b32 %r4, %r1, 2;
    mov.u32 %r5, small;
    add.u32 %r6, %r5, %r4;
    st.shared.f32 [%r6+-128], %f1;
DONE:"""
    text = PROLOGUE.replace(".b8 tile[8192];", ".b8 tile[8192];\n    .shared .align 4 .b8 small[128];")
    module = parse_module(text + body + "\n    ret;\n}\n", "t.ptx").module
    side = lint_kernel(module, "example", LaunchConfig.parse("block=64"))
    [site] = [x for x in memory_sites(side.facts) if x.space == "shared"]
    assert judge(side.context, site, 128).kind == "clean"
    assert not [d for d in side.diagnostics if d.rule == "out-of-bounds"]
