"""Warp-level divergence findings and their conditions (`divergent-bra-uni`,
`barrier-divergence` on `bar.warp.sync`): a warp index is warp-uniform with whole-row
warps, a note with that condition when the block shape is unknown, a definite error in
a block whose warps straddle rows; lanes that only leave the kernel are not waited for."""
from __future__ import annotations

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text

HEAD = """.version 8.0
.target sm_80
.address_size 64
"""

# if (threadIdx.x / 32 < 2) skip a copy, the branch written `bra.uni` (inline PTX)
WARP_ROLE = HEAD + """
.visible .entry roles(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, %tid.x;
	shr.u32 %r2, %r1, {shift};
	setp.ge.u32 %p1, %r2, {roles};
	@%p1 bra.uni SKIP;
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd3, %rd2, %rd3;
	st.global.u32 [%rd3], %r2;
SKIP:
	ret;
}
"""

# if (threadIdx.x / 32 == 0) { s[lane] = v; __syncwarp(); v = s[31 - lane]; } out[t] = v;
WARP_ZERO = HEAD + """
.visible .entry warp0(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .f32 %f<5>;
	.reg .b32 %r<9>;
	.reg .b64 %rd<5>;
	.shared .align 4 .b8 s[128];
	ld.param.u64 %rd2, [out];
	cvta.to.global.u64 %rd3, %rd2;
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd4, %r1, 4;
	add.s64 %rd1, %rd3, %rd4;
	ld.global.f32 %f4, [%rd1];
	and.b32 %r2, %r1, -32;
	setp.ne.s32 %p1, %r2, 0;
	@%p1 bra DONE;
	shl.b32 %r3, %r1, 2;
	and.b32 %r4, %r3, 124;
	mov.u32 %r5, s;
	add.s32 %r6, %r5, %r4;
	st.shared.f32 [%r6], %f4;
	bar.warp.sync -1;
	xor.b32 %r7, %r4, 124;
	add.s32 %r8, %r5, %r7;
	ld.shared.f32 %f4, [%r8];
DONE:
	st.global.f32 [%rd1], %f4;
	ret;
}
"""

# if (i >= n) return (or: skip, then store); s[t] = in[i]; __syncwarp(); out[i] = ...
TAIL = HEAD + """
.visible .entry tail(.param .u64 out, .param .u32 n)
{
	.reg .pred %p<2>;
	.reg .f32 %f<3>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<5>;
	.shared .align 4 .b8 s[1024];
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ctaid.x;
	shl.b32 %r4, %r3, 8;
	add.s32 %r5, %r4, %r2;
	mul.wide.u32 %rd3, %r5, 4;
	add.s64 %rd4, %rd2, %rd3;
	mov.f32 %f2, 0f00000000;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra {target};
	shl.b32 %r6, %r2, 2;
	mov.u32 %r7, s;
	add.s32 %r7, %r7, %r6;
	ld.global.f32 %f1, [%rd4];
	st.shared.f32 [%r7], %f1;
	bar.warp.sync -1;
	ld.shared.f32 %f2, [%r7];
PAD:
	st.global.f32 [%rd4], %f2;
LEAVE:
	ret;
}
"""


def lint(text: str, block=None, rule: str = "divergent-bra-uni", **kw):
    launch = LaunchConfig(block=block, grid=(4, 1, 1), **kw)
    report = lint_text(text, "<test>", LintOptions(launch=launch, enable=[rule]))
    return [d for d in report.diagnostics if d.rule == rule]


@pytest.mark.parametrize("block", [(128, 1, 1), (64, 2, 1), (32, 4, 2), (16, 16, 1)])
def test_a_warp_index_bra_uni_is_fine_with_whole_row_warps(block):
    assert lint(WARP_ROLE.replace("{shift}", "5").replace("{roles}", "2"), block) == []


def test_a_warp_index_bra_uni_with_an_unknown_shape_is_a_note_with_its_condition():
    found, = lint(WARP_ROLE.replace("{shift}", "5").replace("{roles}", "2"))
    assert found.severity is Severity.NOTE and found.certainty is Certainty.POSSIBLE
    assert "`%ntid.x` is not a multiple of 32" in found.message
    assert found.details["condition"] == "block shape"


def test_a_warp_index_bra_uni_in_a_block_whose_warps_straddle_rows():
    """80x2: warp 2 holds tid.x 64-79 of row 0 (warp index 2) and 0-15 of row 1 (0)."""
    found, = lint(WARP_ROLE.replace("{shift}", "5").replace("{roles}", "2"), (80, 2, 1))
    assert found.severity is Severity.ERROR and found.certainty is Certainty.DEFINITE
    assert found.label == "`%p1` holds in lanes 0-15 of warp 2 but not in lanes 16-31"


def test_a_half_warp_index_diverges_whatever_the_shape():
    text = WARP_ROLE.replace("{shift}", "4").replace("{roles}", "3")
    found, = lint(text, (128, 1, 1))
    assert found.certainty is Certainty.DEFINITE
    assert found.label == "`%p1` holds in lanes 16-31 of warp 1 but not in lanes 0-15"
    unknown, = lint(text)
    assert unknown.severity is Severity.ERROR and "condition" not in unknown.details


def test_syncwarp_under_a_warp_index_branch():
    rule = "barrier-divergence"
    assert lint(WARP_ZERO, (64, 2, 1), rule) == []
    note, = lint(WARP_ZERO, None, rule)
    assert note.severity is Severity.NOTE and note.details["condition"] == "block shape"
    split, = lint(WARP_ZERO, (48, 2, 1), rule)
    assert split.severity is Severity.ERROR and split.certainty is Certainty.DEFINITE
    assert split.label == "lanes 0-15 of warp 1 are in the mask but skip it"


def test_lanes_that_return_before_a_syncwarp_are_not_waited_for():
    """`if (i >= n) return;`: bar.warp.sync waits only for lanes that have not exited."""
    text = TAIL.replace("{target}", "LEAVE")
    for block in ((256, 1, 1), None):
        assert lint(text, block, "barrier-divergence", params={"n": 1000}) == []


def test_lanes_that_skip_a_syncwarp_and_go_on_running_are_missing():
    text = TAIL.replace("{target}", "PAD")
    found, = lint(text, (256, 1, 1), "barrier-divergence", params={"n": 1000})
    assert found.severity is Severity.ERROR and found.certainty is Certainty.DEFINITE
    assert found.label == "lanes 8-31 of warp 7 are in the mask but skip it"


def test_a_predicate_every_warp_agrees_on_is_fine_though_no_lane_form_says_so():
    """`threadIdx.x / 16 >= 2` is `threadIdx.x >= 32`: whole warps, in a 128-thread block."""
    assert lint(WARP_ROLE.replace("{shift}", "4").replace("{roles}", "2"), (128, 1, 1)) == []
