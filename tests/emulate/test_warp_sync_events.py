"""The member-mask observations of the warp-synchronous instructions
(`warpops.check_members`): a lane executing one outside the mask it passes (`outside`),
lanes some executing lane's mask names that run elsewhere (`missing`, with per-lane
masks such as two 16-lane tiles of one warp), for `shfl.sync`, `redux.sync` and a
`bar.warp.sync` whose mask is a ballot."""
from __future__ import annotations

import numpy as np

from .helpers import HEADER, run_ptx


def kernel(body: str) -> str:
    return HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %laneid;
""" + body + """
  st.global.u32 [%rd1], %r1;
  ret;
}
"""


def run(body: str, block: int = 32):
    return run_ptx(kernel(body), grid=1, block=block, args={0: np.zeros(1, np.int32)})


def test_lanes_outside_a_constant_mask_are_observed():
    """Every lane runs the shuffle, whose mask names lanes 0-15 only."""
    res = run("  shfl.sync.up.b32 %r2, %r1, 1, 0x1000, 0xffff;")
    (ev,) = res.observations.of_kind("warp-sync")
    assert ev.details["outside"] == list(range(16, 32))
    assert "missing" not in ev.details


def test_a_full_mask_in_the_whole_warp_is_quiet():
    res = run("  shfl.sync.up.b32 %r2, %r1, 1, 0x1000, -1;\n"
              "  redux.sync.add.u32 %r3, %r1, -1;")
    assert not res.observations.of_kind("warp-sync")


def test_per_lane_masks_of_two_tiles_are_each_checked():
    """`0xffff << (lane & 16)`: lanes 0-7 and 16-23 run the shuffle, and the lanes of
    both tiles that skip it (8-15 and 24-31) are missing, not only the first tile's."""
    res = run("""  and.b32 %r2, %r1, 16;
  mov.u32 %r3, 65535;
  shl.b32 %r4, %r3, %r2;
  and.b32 %r5, %r1, 8;
  setp.ne.u32 %p1, %r5, 0;
  @%p1 bra SKIP;
  shfl.sync.down.b32 %r6, %r1, 1, 0x101f, %r4;
SKIP:""")
    (ev,) = res.observations.of_kind("warp-sync")
    assert ev.details["missing"] == [*range(8, 16), *range(24, 32)]


def test_a_ballot_mask_at_bar_warp_sync_names_lanes_that_skip_it():
    """`__syncwarp(__ballot_sync(~0, lane < 24))` reached by lanes 0-15: lanes 16-23
    are in the mask and go on to the store."""
    res = run("""  setp.lt.u32 %p1, %r1, 24;
  vote.sync.ballot.b32 %r2, %p1, -1;
  setp.ge.u32 %p2, %r1, 16;
  @%p2 bra SKIP;
  bar.warp.sync %r2;
SKIP:""")
    (ev,) = res.observations.of_kind("warp-barrier")
    assert ev.details["missing"] == list(range(16, 24))
    assert not res.observations.of_kind("warp-sync")


def test_a_lane_outside_the_mask_of_bar_warp_sync_is_observed():
    res = run("  bar.warp.sync 0x0000ffff;")
    (ev,) = res.observations.of_kind("warp-barrier")
    assert ev.details["outside"] == list(range(16, 32))


def test_lanes_missing_from_a_partial_warp_do_not_exist():
    """A block of 48 threads: warp 1 has lanes 0-15 only, so a full mask waits for no
    one there."""
    res = run("  shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;", block=48)
    assert not res.observations.of_kind("warp-sync")


def test_lanes_a_guard_turns_away_are_missing_not_outside():
    """`@%p shfl.sync ... -1` with `%p = lane < 16`: lanes 16-31 do not execute it and
    go on to the store."""
    res = run("  setp.lt.u32 %p1, %r1, 16;\n  @%p1 shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;")
    (ev,) = res.observations.of_kind("warp-sync")
    assert ev.details["missing"] == list(range(16, 32))
