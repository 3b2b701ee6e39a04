"""`active_lanes`: which threads of a block run an access (its guard and the divergent
branches deciding it, thread by thread) and each one's address, with the block shape
known and unknown; and the warp patterns built from them (`warp.lane_patterns`)."""
from __future__ import annotations

import numpy as np

from ptxlint.analysis import analyze
from ptxlint.domains.align import Congruence
from ptxlint.threads.active_lanes import block_lanes, splits_lanes
from ptxlint.threads.warp import WarpPattern, bank_ways, lane_patterns, restrict, unique_rows
from ptxlint.ir.build import parse_module
from ptxlint.launch import LaunchConfig

HEAD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u32 n)
{
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .reg .f32 %f<4>;
    .shared .align 16 .b8 s[8192];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, s;
"""


def facts_of(body: str, launch: str | None = "block=64"):
    module = parse_module(HEAD + body + "\n    ret;\n}\n", "t.ptx").module
    config = LaunchConfig.parse(launch) if launch else None
    return analyze(module.entries[0], config, module=module).facts


def access(facts, k: int = 0):
    return [a for a in facts.accesses if a.space == "shared"][k]


def threads(lanes) -> list[int]:
    return np.flatnonzero(lanes.active()).tolist()


# the guarded load `if (tid < 16) s[6 * tid]`
HALF_WARP = """    setp.gt.u32 %p1, %r1, 15;
    @%p1 bra DONE;
    mul.lo.u32 %r3, %r1, 24;
    add.u32 %r4, %r2, %r3;
    ld.shared.f32 %f1, [%r4];
DONE:"""


# ---- which threads run an access ---------------------------------------------------------------
def test_known_shape_guard_selects_the_first_half_warp():
    facts = facts_of(HALF_WARP)
    acc = access(facts)
    assert splits_lanes(facts, acc)
    lanes = block_lanes(facts, acc)
    assert lanes is not None and lanes.exact and lanes.space.exact
    assert threads(lanes) == list(range(16))
    assert lanes.start[0, :16].tolist() == [24 * t for t in range(16)]


def test_known_shape_warp_index_guard_selects_warp_1():
    facts = facts_of("""    shr.u32 %r3, %r1, 5;
    setp.ne.s32 %p1, %r3, 1;
    @%p1 bra DONE;
    and.b32 %r5, %r1, 31;
    shl.b32 %r6, %r5, 2;
    add.u32 %r7, %r2, %r6;
    ld.shared.f32 %f1, [%r7];
DONE:""", "block=128")
    lanes = block_lanes(facts, access(facts))
    assert lanes is not None and lanes.exact
    assert threads(lanes) == list(range(32, 64))
    # `tid & 31` has no lane form; lane by lane it is the lane index
    assert lanes.start[0, 32:64].tolist() == [4 * i for i in range(32)]


def test_unknown_shape_gives_the_threads_over_one_row_but_no_address():
    facts = facts_of(HALF_WARP, None)
    acc = access(facts)
    assert block_lanes(facts, acc) is None  # addresses need the shape
    lanes = block_lanes(facts, acc, address=False)
    assert lanes is not None and not lanes.space.exact and lanes.start is None
    assert threads(lanes) == list(range(16))


def test_unknown_shape_of_a_kernel_reading_tid_y_is_not_modelled():
    facts = facts_of("    mov.u32 %r9, %tid.y;\n    add.u32 %r1, %r1, %r9;\n" + HALF_WARP, None)
    assert block_lanes(facts, access(facts), address=False) is None


def test_a_guard_on_an_unknown_parameter_is_not_exact():
    facts = facts_of("""    ld.param.u32 %r9, [n];
    setp.ge.u32 %p1, %r1, %r9;
    @%p1 bra DONE;
    shl.b32 %r3, %r1, 5;
    add.u32 %r4, %r2, %r3;
    ld.shared.f32 %f1, [%r4];
DONE:""")
    lanes = block_lanes(facts, access(facts))
    assert lanes is not None and not lanes.exact
    assert threads(lanes) == list(range(64))  # any of them may run it


def test_a_given_parameter_decides_the_guard_thread_by_thread():
    facts = facts_of("""    ld.param.u32 %r9, [n];
    setp.ge.u32 %p1, %r1, %r9;
    @%p1 bra DONE;
    shl.b32 %r3, %r1, 5;
    add.u32 %r4, %r2, %r3;
    ld.shared.f32 %f1, [%r4];
DONE:""", "block=64 param.n=20")
    lanes = block_lanes(facts, access(facts))
    assert lanes is not None and lanes.exact and threads(lanes) == list(range(20))


def test_a_loop_counter_is_enumerated_with_the_lanes_it_selects():
    # for (s = 1; s < 64; s *= 2) if (tid % (2 * s) == 0) s[tid] = ...
    facts = facts_of("""    mov.u32 %r10, 1;
LOOP:
    shl.b32 %r11, %r10, 1;
    rem.u32 %r12, %r1, %r11;
    setp.ne.s32 %p1, %r12, 0;
    @%p1 bra SKIP;
    shl.b32 %r3, %r1, 2;
    add.u32 %r4, %r2, %r3;
    st.shared.f32 [%r4], %f1;
SKIP:
    shl.b32 %r10, %r10, 1;
    setp.lt.u32 %p2, %r10, 64;
    @%p2 bra LOOP;""")
    lanes = block_lanes(facts, access(facts))
    assert lanes is not None and lanes.exact and lanes.rows > 1
    (ident,) = lanes.values
    for row in range(lanes.rows):
        s = int(lanes.values[ident][row])
        want = [t for t in range(64) if t % (2 * s) == 0]
        assert np.flatnonzero(lanes.mask[row]).tolist() == want


def test_a_divergent_loop_exit_is_not_exact():
    # for (k = tid; k < 40; k += 16) s[k] = ...: lanes leave at different trips
    facts = facts_of("""    mov.u32 %r10, %r1;
LOOP:
    shl.b32 %r3, %r10, 2;
    add.u32 %r4, %r2, %r3;
    st.shared.f32 [%r4], %f1;
    add.u32 %r10, %r10, 16;
    setp.lt.u32 %p2, %r10, 40;
    @%p2 bra LOOP;""", "block=32")
    lanes = block_lanes(facts, access(facts))
    assert lanes is not None and not lanes.exact


# ---- patterns from lanes ------------------------------------------------------------------------
def test_lane_patterns_rebase_on_the_first_running_lane_and_group_warps():
    n = 64
    start = np.array([[4 * (t % 32) + 1024 * (t // 32) for t in range(n)]], np.int64)
    mask = np.array([[t % 32 >= 8 for t in range(n)]])
    found = lane_patterns(start, mask, 4, 64, lambda r: Congruence(7, r))
    assert found is not None
    (p,), ids = found
    assert ids.tolist() == [[0, 0]] and p.warps == (0, 1)
    assert p.offsets == (None,) * 8 + tuple(4 * i for i in range(24))
    assert p.alignment == Congruence(7, 32) and p.size == 32


def test_lane_patterns_skip_warps_with_no_running_lane():
    start = np.zeros((2, 64), np.int64)
    mask = np.zeros((2, 64), bool)
    mask[1, 40] = True
    patterns, ids = lane_patterns(start, mask, 4, 64, lambda r: Congruence(7, r))
    assert ids.tolist() == [[-1, -1], [-1, 0]] and patterns[0].lanes() == (8,)


def test_restrict_keeps_only_the_selected_lanes():
    p = WarpPattern.strided(32)  # 32 lanes 8 words apart: 8-way
    assert bank_ways(p) == 8
    half = restrict(p, [i < 16 for i in range(32)])
    assert half is not None and bank_ways(half) == 4 and half.size == 32
    late = restrict(p, [i >= 30 for i in range(32)])
    assert late.offsets[30:] == (0, 32) and late.uniform_base.singleton() == 960
    assert restrict(p, [False] * 32) is None


def test_unique_rows_matches_numpy():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, (200, 5)).astype(np.int64)
    uniq, inverse = unique_rows(a)
    want, winv = np.unique(a, axis=0, return_inverse=True)
    assert sorted(map(tuple, uniq.tolist())) == sorted(map(tuple, want.tolist()))
    assert (uniq[inverse] == a).all()


def test_a_constant_lookup_table_is_read_lane_by_lane():
    # s[perm[lane] * 32]: the table groups lanes 4 by 4 onto rows 8 apart
    perm = ", ".join(str(8 * (i % 4) + i // 4) for i in range(32))
    text = HEAD.replace(".visible .entry", f".const .align 4 .b32 perm[32] = {{{perm}}};\n"
                        ".visible .entry")
    body = """    .reg .b64 %rd<8>;
    mov.u64 %rd1, perm;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.const.u32 %r3, [%rd3];
    shl.b32 %r4, %r3, 7;
    add.u32 %r5, %r2, %r4;
    ld.shared.f32 %f1, [%r5];"""
    module = parse_module(text + body + "\n    ret;\n}\n", "t.ptx").module
    facts = analyze(module.entries[0], LaunchConfig.parse("block=32"), module=module).facts
    lanes = block_lanes(facts, access(facts))
    assert lanes is not None
    assert lanes.start[0].tolist() == [128 * (8 * (i % 4) + i // 4) for i in range(32)]


def test_a_guard_on_a_complemented_index_keeps_its_width():
    """`~tid < -16` (`not.b32`, a 32-bit value, not a predicate): threads 0-15 run it."""
    facts = facts_of("""    not.b32 %r5, %r1;
    setp.lt.s32 %p1, %r5, -16;
    @%p1 bra DONE;
    mul.lo.u32 %r3, %r1, 24;
    add.u32 %r4, %r2, %r3;
    ld.shared.f32 %f1, [%r4];
DONE:""")
    lanes = block_lanes(facts, access(facts))
    assert lanes is not None and threads(lanes) == list(range(16))
