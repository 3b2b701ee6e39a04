"""Warp-level uniformity beyond the lane form (`interp/transfer/warp_uniform.py`): quotients of
the thread index by the warp width, broadcast shuffles, the warp collectives, WARP_SZ;
each fact pinned on small kernels, then checked against the emulator for block shapes
whose warps are whole rows and shapes whose warps are not."""
from __future__ import annotations

import numpy as np
import pytest

from ptxlint.analysis import analyze
from differential import Case, run_case
from ptxlint.ir.build import parse_module
from ptxlint.launch import LaunchConfig

# out[k * threads + linear] = the k-th value below, so every value is read (and claimed)
SLOTS = 16
KERNEL = """.version 8.0
.target sm_80
.address_size 64

.visible .entry quot(.param .u64 out, .param .u64 in)
{
	.reg .pred %p<4>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	ld.param.u64 %rd3, [in];
	cvta.to.global.u64 %rd4, %rd3;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %tid.y;
	mov.u32 %r3, %tid.z;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %ntid.y;
	mad.lo.s32 %r6, %r3, %r5, %r2;
	mad.lo.s32 %r7, %r6, %r4, %r1;
	mov.u32 %r8, WARP_SZ;
	shr.u32 %r10, %r1, 5;
	div.u32 %r11, %r1, %r8;
	and.b32 %r12, %r1, -32;
	bfe.u32 %r13, %r1, 5, 3;
	shl.b32 %r14, %r2, 4;
	add.s32 %r15, %r1, %r14;
	shr.u32 %r16, %r15, 5;
	shr.u32 %r17, %r1, 4;
	add.s32 %r18, %r1, 16;
	shr.u32 %r19, %r18, 5;
	shr.u32 %r20, %r1, 6;
	mul.wide.u32 %rd5, %r7, 4;
	add.s64 %rd6, %rd4, %rd5;
	ld.global.u32 %r21, [%rd6];
	shfl.sync.idx.b32 %r22|%p1, %r21, 0, 31, -1;
	shfl.sync.idx.b32 %r23, %r21, 3, 4127, -1;
	mov.u32 %r24, %laneid;
	shfl.sync.idx.b32 %r25, %r21, %r24, 31, -1;
	setp.lt.u32 %p2, %r21, 100;
	vote.sync.ballot.b32 %r26, %p2, -1;
	vote.sync.any.pred %p3, %p2, -1;
	selp.u32 %r27, 1, 0, %p3;
	redux.sync.add.u32 %r28, %r21, -1;
	setp.ne.s32 %p2, %r10, 0;
	@%p2 bra.uni SKIP;
	add.s32 %r28, %r28, 1;
SKIP:
	mov.u32 %r30, %ntid.z;
	mul.lo.s32 %r31, %r4, %r5;
	mul.lo.s32 %r31, %r31, %r30;
	mul.wide.u32 %rd7, %r7, 4;
	add.s64 %rd7, %rd2, %rd7;
	mul.wide.u32 %rd5, %r31, 4;
	st.global.u32 [%rd7], %r10;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r11;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r12;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r13;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r16;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r17;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r19;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r20;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r22;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r23;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r25;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r26;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r27;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r28;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r8;
	add.s64 %rd7, %rd7, %rd5;
	st.global.u32 [%rd7], %r15;
	add.s64 %rd7, %rd7, %rd5;
	ret;
}
"""
# the registers above and whether they are one value per warp of a whole-row block
ROWS_UNIFORM = {"%r10": True, "%r11": True, "%r12": True, "%r13": True, "%r17": False,
                "%r19": False, "%r20": True, "%r22": True, "%r23": False, "%r25": False,
                "%r26": True, "%r27": True, "%r28": True, "%r8": True}


def _values(launch: LaunchConfig) -> dict[str, object]:
    """Each register's value just before the first store."""
    module = parse_module(KERNEL, "<quot>").module
    facts = analyze(module.entries[0], launch, module=module).facts
    store = next(i for i in module.entries[0].instructions if i.opcode == "st")
    state = facts.state_before(store)
    return {k: state[k] for k in (*ROWS_UNIFORM, "%r16")}


@pytest.mark.parametrize("block", [(128, 1, 1), (64, 2, 1), (32, 3, 2), (96, 1, 1)])
def test_whole_row_warps(block):
    values = _values(LaunchConfig(block=block))
    got = {k: values[k].is_uniform for k in ROWS_UNIFORM}
    assert got == ROWS_UNIFORM
    assert values["%r8"].singleton() == 32  # WARP_SZ


def test_a_16_wide_block_pairs_rows():
    """16x16: warp w holds rows 2w and 2w+1, so (tid.x + 16*tid.y) / 32 is w in all its
    lanes while tid.x / 16 is 0 (tid.x < 16)."""
    values = _values(LaunchConfig(block=(16, 16, 1)))
    assert values["%r16"].is_uniform
    assert values["%r10"].singleton() == 0 and values["%r17"].singleton() == 0


@pytest.mark.parametrize("block", [(48, 2, 1), (80, 2, 1), (40, 3, 1)])
def test_warps_across_rows_are_not_uniform(block):
    """In a 48x2 block warp 1 holds tid.x 32-47 of row 0 and 0-15 of row 1."""
    values = _values(LaunchConfig(block=block))
    assert not any(values[k].is_uniform for k in ("%r10", "%r11", "%r12", "%r13"))


def test_unknown_shape_claims_nothing_unless_told_whole_rows():
    unknown = _values(LaunchConfig())
    assert not any(unknown[k].is_uniform for k in ("%r10", "%r11", "%r12", "%r13", "%r20"))
    assert unknown["%r22"].is_uniform and unknown["%r27"].is_uniform  # shape-free facts
    rows = _values(LaunchConfig(warps_in_rows=True))
    assert {k: rows[k].is_uniform for k in ROWS_UNIFORM} == ROWS_UNIFORM


# ---- against the emulator ------------------------------------------------------------------
def _case(block, told: LaunchConfig) -> Case:
    threads = block[0] * block[1] * block[2]
    data = (np.arange(threads, dtype=np.uint32) * 37 % 200).view(np.uint8)
    args = {0: np.zeros(threads * SLOTS * 4, np.uint8), 1: data}
    return Case(f"quot{block}", KERNEL, "quot", (1, 1, 1), block, args, told,
                max_steps=100_000)


@pytest.mark.parametrize("block", [(16, 2, 1), (48, 2, 1), (32, 4, 1), (64, 1, 1),
                                   (96, 1, 1), (16, 16, 1), (80, 2, 1), (8, 8, 2),
                                   (20, 1, 1), (33, 3, 1), (40, 3, 1)])
def test_exact_shapes_are_sound(block):
    threads = block[0] * block[1] * block[2]
    told = LaunchConfig(block=block, grid=(1, 1, 1),
                        extents={"out": threads * SLOTS * 4, "in": threads * 4})
    result = run_case(_case(block, told))
    assert result.sound, "\n".join(result.problems())


@pytest.mark.parametrize("block", [(64, 1, 1), (96, 2, 1), (32, 3, 2), (40, 1, 1),
                                   (128, 1, 1)])
def test_whole_row_assumption_is_sound_where_it_holds(block):
    threads = block[0] * block[1] * block[2]
    told = LaunchConfig(grid=(1, 1, 1), warps_in_rows=True,
                        extents={"out": threads * SLOTS * 4, "in": threads * 4})
    result = run_case(_case(block, told))
    assert result.sound, "\n".join(result.problems())
