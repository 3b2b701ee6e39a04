"""Warp access patterns, sector counts and shared-memory bank conflicts."""
from __future__ import annotations

import pytest

from ptxlint.domains.affine import HARDWARE, Affine, ThreadBounds
from ptxlint.domains.align import Congruence
from ptxlint.domains.space import Region
from ptxlint.domains.strided import StridedInterval as SI
from ptxlint.domains.value import TOP, Value
from ptxlint.threads.warp import (ASSUMED_ROWS, WarpPattern, bank_conflict, bank_ways, lanes,
                                 sector_range, sectors, warp_count, warp_pattern, warp_patterns)


def address(base: int | SI = 0, region: Region | None = None, **coeffs: int | SI) -> Value:
    """`base + sum(c * index)`; keyword names use `_` for `.` (tid_x, laneid)."""
    b = SI.const(base) if isinstance(base, int) else base
    terms = tuple((n.replace("_", "."), SI.const(c) if isinstance(c, int) else c)
                  for n, c in coeffs.items())
    v = Value(SI.top(), Affine(b, terms), Congruence.top(), region)
    return v.reduce()


# ---- lanes of a warp ---------------------------------------------------------------------------
def test_lanes_of_a_2d_block_span_two_rows():
    got = lanes((16, 16, 1), 1)
    assert got == tuple((i % 16, 2 + i // 16, 0) for i in range(32))
    assert warp_count((16, 16, 1)) == 8


def test_partial_warp():
    got = lanes((48, 1, 1), 1)
    assert got[:16] == tuple((32 + i, 0, 0) for i in range(16)) and got[16:] == (None,) * 16
    assert lanes((4, 2, 2), 0)[:16] == tuple((i % 4, i // 4 % 2, i // 8) for i in range(16))
    with pytest.raises(ValueError, match="no warp 2"):
        lanes((48, 1, 1), 2)


# ---- patterns ----------------------------------------------------------------------------------
def test_1d_pattern_of_second_warp_is_relative_to_lane_0():
    p = warp_pattern(address(tid_x=4), 4, (256, 1, 1), HARDWARE, warp=1)
    assert p is not None and p.exact and p.assumed is None
    assert p.offsets == tuple(4 * i for i in range(32))
    assert p.uniform_base == SI.const(128) and p.warps == (1,)


def test_partial_warp_pattern():
    p = warp_pattern(address(tid_x=4), 4, (48, 1, 1), HARDWARE, warp=1)
    assert p.offsets == tuple(4 * i for i in range(16)) + (None,) * 16
    assert p.lanes() == tuple(range(16))
    assert sectors(p) == 2


def test_2d_row_major_block_is_contiguous_per_warp():
    # tile[tid.y][tid.x] of floats, 16 per row: two rows make 128 contiguous bytes
    addr = address(tid_x=4, tid_y=64)
    pats = warp_patterns(addr, 4, (16, 16, 1), HARDWARE)
    assert len(pats) == 1 and pats[0].warps == tuple(range(8))
    assert pats[0].offsets == tuple(4 * i for i in range(32))
    assert pats[0].uniform_base == SI.range(0, 896, 128)
    assert sectors(pats[0]) == 4 and bank_ways(pats[0]) == 1


def test_2d_column_access_conflicts():
    # tile[tid.x][tid.y] with 16 floats per row: lane i at word 16*(i%16) + i//16
    p = warp_pattern(address(tid_x=64, tid_y=4), 4, (16, 16, 1), HARDWARE, warp=0)
    assert p.offsets == tuple(64 * (i % 16) + 4 * (i // 16) for i in range(32))
    assert bank_ways(p) == 8


def test_laneid_and_uniform_terms():
    p = warp_pattern(address(7 * 4, laneid=8), 8, (64, 1, 1), HARDWARE, warp=1)
    assert p.offsets == tuple(8 * i for i in range(32)) and p.uniform_base == SI.const(28)
    q = warp_pattern(address(SI.range(0, 64, 4)), 4, (64, 1, 1), HARDWARE)
    assert q.offsets == (0,) * 32 and q.exact and sectors(q) == 1 and bank_ways(q) == 1


def test_distinct_patterns_over_warps():
    pats = warp_patterns(address(tid_x=4), 4, (48, 1, 1), HARDWARE)
    assert [p.warps for p in pats] == [(0,), (1,)]
    assert [len(p.lanes()) for p in pats] == [32, 16]
    # contiguous rows of 24 floats: every warp reads 128 contiguous bytes
    pats = warp_patterns(address(tid_x=4, tid_y=96), 4, (24, 4, 1), HARDWARE)
    assert len(pats) == 1 and pats[0].warps == (0, 1, 2)
    # rows padded to 100 floats: each warp breaks its row at a different lane
    pats = warp_patterns(address(tid_x=4, tid_y=400), 4, (24, 4, 1), HARDWARE)
    assert len(pats) == 3
    assert pats[0].offsets[23:26] == (92, 400, 404) and pats[1].offsets[15:17] == (60, 368)


def test_unknown_block_assumes_whole_rows():
    p = warp_pattern(address(tid_x=4, tid_y=4096), 4, None, HARDWARE, warp=3)
    assert p is not None and not p.exact and p.assumed == ASSUMED_ROWS
    assert p.offsets == tuple(4 * i for i in range(32))
    assert p.uniform_base.contains(4096 * 5 + 128 * 2) and p.uniform_base.stride == 128
    assert warp_patterns(address(tid_x=4), 4, None, HARDWARE)[0].warps == ()


def test_unknown_block_with_short_rows_has_no_pattern():
    short = ThreadBounds(SI.range(0, 15), SI.range(0, 63), SI.const(0), SI.range(0, 31))
    assert warp_pattern(address(tid_x=4), 4, None, short) is None
    assert warp_patterns(address(tid_y=4), 4, None, short) == ()
    lane_only = warp_pattern(address(laneid=4), 4, None, short)
    assert lane_only is not None and lane_only.offsets == tuple(4 * i for i in range(32))


def test_unknown_coefficient_or_varying_address_has_no_pattern():
    assert warp_pattern(address(tid_x=SI.range(4, 8, 4)), 4, (32, 1, 1), HARDWARE) is None
    assert warp_pattern(TOP, 4, (32, 1, 1), HARDWARE) is None
    assert warp_patterns(TOP, 4, (32, 1, 1), HARDWARE) == ()


def test_alignment_from_the_object():
    buf = Region("global", "in")
    p = warp_pattern(address(tid_x=4, region=buf), 4, (32, 1, 1), HARDWARE, base_align=256)
    assert p.alignment == Congruence(7, 0) and sector_range(p) == (4, 4)
    q = warp_pattern(address(tid_x=4, region=buf), 4, (32, 1, 1), HARDWARE, base_align=4)
    assert q.alignment == Congruence(2, 0)
    assert sector_range(q) == (4, 5) and sectors(q) == 5
    r = warp_pattern(address(16, tid_x=4, region=buf), 4, (32, 1, 1), HARDWARE, base_align=256)
    assert r.alignment == Congruence(7, 16) and sectors(r) == 5


# ---- sectors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("stride, width, want", [
    (4, 4, 4),      # consecutive floats: 128 bytes
    (128, 4, 32),   # a float from each 128-byte row
    (8, 8, 8),      # consecutive doubles
    (16, 16, 16),   # consecutive float4
    (0, 4, 1),      # broadcast
    (8, 4, 8),      # every other float
])
def test_sectors(stride, width, want):
    assert sectors(WarpPattern.strided(stride, width)) == want


def test_sectors_of_a_misaligned_vector_access():
    p = WarpPattern.strided(16, 16)
    shifted = WarpPattern(p.offsets, 16, alignment=Congruence(3, 8))
    assert sectors(shifted) == 17  # each 16-byte access straddles some sector boundary


# ---- bank conflicts ----------------------------------------------------------------------------
@pytest.mark.parametrize("stride, width, ways", [
    (4, 4, 1),      # consecutive floats
    (128, 4, 32),   # column of a 32x32 float tile
    (132, 4, 1),    # padded to 33 words: lane i in bank i
    (8, 8, 1),      # float2 consecutive: half-warp phases
    (16, 16, 1),    # float4 consecutive: quarter-warp phases
    (0, 4, 1),      # broadcast of one word
    (8, 4, 2), (16, 4, 4), (32, 4, 8), (64, 4, 16),
    (16, 8, 2),     # every other double
    (2, 2, 1),      # consecutive halves share words
    (1, 1, 1),      # consecutive bytes
])
def test_bank_ways(stride, width, ways):
    assert bank_ways(WarpPattern.strided(stride, width)) == ways


def test_bank_conflict_details():
    c = bank_conflict(WarpPattern.strided(128, 4))
    assert (c.ways, c.bank, c.lanes, c.phase) == (32, 0, tuple(range(32)), 0)
    c = bank_conflict(WarpPattern(WarpPattern.strided(128).offsets, 4,
                                  alignment=Congruence(7, 12)))
    assert c.ways == 32 and c.bank == 3
    unknown = WarpPattern(WarpPattern.strided(128).offsets, 4, alignment=Congruence(2, 0))
    assert bank_conflict(unknown).ways == 32 and bank_conflict(unknown).bank is None


def test_xor_swizzle_is_conflict_free():
    # 32x32 float tile, column 5 read by lane = row: col ^ row spreads the banks
    naive = WarpPattern(tuple(4 * (32 * i + 5) for i in range(32)))
    swizzled = WarpPattern(tuple(4 * (32 * i + (5 ^ i)) for i in range(32)))
    assert bank_ways(naive) == 32 and bank_ways(swizzled) == 1
    # 128-byte rows of float4 chunks, chunk 0 of rows 0..7 per quarter warp
    rows = WarpPattern(tuple(128 * (i % 8) for i in range(32)), 16)
    chunks = WarpPattern(tuple(128 * (i % 8) + 16 * (0 ^ (i % 8)) for i in range(32)), 16)
    assert bank_ways(rows) == 8 and bank_ways(chunks) == 1


def test_inactive_lanes_do_not_conflict():
    offs = tuple(128 * i if i < 4 else None for i in range(32))
    assert bank_ways(WarpPattern(offs)) == 4 and sectors(WarpPattern(offs)) == 4
