"""CTA barriers: correct use is silent; a barrier some threads skip, a barrier inside a
divergent branch and a count that is never reached are detected; bar.red and
bar.arrive work."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .helpers import HEADER, run_ptx

PROLOGUE = """
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  .shared .align 4 .b32 buf[256];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, buf;
  mul.lo.u32 %r3, %r1, 4;
  add.u32 %r4, %r2, %r3;
  ld.param.u64 %rd1, [out];
  mov.u32 %r10, %ctaid.x;
  mov.u32 %r11, %ntid.x;
  mad.lo.u32 %r10, %r10, %r11, %r1;
  mul.wide.u32 %rd2, %r10, 4;
  add.s64 %rd3, %rd1, %rd2;
"""


def kernel(body: str) -> str:
    return HEADER + ".visible .entry k(.param .u64 out)\n{" + PROLOGUE + body + "\n  ret;\n}\n"


# reverse through shared memory: needs the barrier between the store and the load
REVERSE = kernel("""
  st.shared.u32 [%r4], %r1;
  bar.sync 0;
  mov.u32 %r5, %ntid.x;
  sub.u32 %r6, %r5, %r1;
  sub.u32 %r6, %r6, 1;
  mul.lo.u32 %r7, %r6, 4;
  add.u32 %r8, %r2, %r7;
  ld.shared.u32 %r9, [%r8];
  st.global.u32 [%rd3], %r9;
""")


def test_correct_barrier_is_silent_and_orders_shared_memory():
    out = np.zeros(256, np.uint32)
    res = run_ptx(REVERSE, grid=2, block=128, args={0: out})
    assert list(out[:128]) == list(range(127, -1, -1)) == list(out[128:])
    assert not res.observations.event_counts


SKIPPED = kernel("""
  setp.lt.u32 %p1, %r1, 64;
  @!%p1 bra AFTER;
  bar.sync 0;
AFTER:
  st.shared.u32 [%r4], %r1;
  bar.sync 0;
  st.global.u32 [%rd3], %r1;
""")


def test_barrier_skipped_by_some_warps_is_detected():
    out = np.zeros(128, np.uint32)
    res = run_ptx(SKIPPED, grid=1, block=128, args={0: out})
    mism = res.observations.of_kind("barrier-mismatch")
    assert mism, res.observations.event_counts
    lines = {e.line for e in mism}
    assert len(lines) == 2  # the two bar.sync instructions
    assert list(out) == list(range(128))  # the run goes on


DIVERGENT = kernel("""
  and.b32 %r5, %r1, 31;
  setp.lt.u32 %p1, %r5, 16;
  @!%p1 bra AFTER;
  bar.sync 0;
AFTER:
  st.global.u32 [%rd3], %r1;
""")


def test_barrier_in_a_divergent_branch_is_detected():
    out = np.zeros(64, np.uint32)
    res = run_ptx(DIVERGENT, grid=1, block=64, args={0: out})
    evs = res.observations.of_kind("divergent-barrier")
    assert {e.details["warp"] for e in evs} == {0, 1}
    assert all(e.details["lanes"] == list(range(16)) for e in evs)
    assert list(out) == list(range(64))


COUNTED = kernel("""
  setp.lt.u32 %p1, %r1, 32;
  @!%p1 bra AFTER;
  bar.sync 1, 64;
AFTER:
  st.global.u32 [%rd3], %r1;
""")


def test_barrier_count_never_reached_is_detected():
    out = np.zeros(64, np.uint32)
    res = run_ptx(COUNTED, grid=1, block=64, args={0: out})
    assert res.observations.count("barrier-deadlock") == 1
    assert list(out) == list(range(64))


REDUCTIONS = kernel("""
  and.b32 %r5, %r1, 3;
  setp.eq.u32 %p1, %r5, 0;
  bar.red.popc.u32 %r6, 0, %p1;
  setp.lt.u32 %p2, %r1, 1000;
  bar.red.and.pred %p3, 0, %p2;
  selp.u32 %r7, 1000, 0, %p3;
  add.u32 %r6, %r6, %r7;
  st.global.u32 [%rd3], %r6;
""")


def test_bar_red():
    out = np.zeros(128, np.uint32)
    res = run_ptx(REDUCTIONS, grid=1, block=128, args={0: out})
    assert (out == 32 + 1000).all()
    assert not res.observations.event_counts


PRODUCER_CONSUMER = kernel("""
  setp.lt.u32 %p1, %r1, 32;
  @!%p1 bra CONSUMER;
  add.u32 %r5, %r1, 500;
  st.shared.u32 [%r4], %r5;
  bar.arrive 1, 64;
  bra.uni DONE;
CONSUMER:
  bar.sync 1, 64;
  sub.u32 %r6, %r4, 128;
  ld.shared.u32 %r7, [%r6];
  st.global.u32 [%rd3], %r7;
DONE:
""")


def test_arrive_and_sync_named_barrier():
    out = np.zeros(64, np.uint32)
    res = run_ptx(PRODUCER_CONSUMER, grid=1, block=64, args={0: out})
    assert list(out[32:]) == [500 + k for k in range(32)]
    assert not res.observations.event_counts


# warp specialisation: warps 0-1 meet at named barrier 1 (64 threads) while warps 2-3
# already wait at barrier 0; barrier 1 completes first, then barrier 0 with all 128
SPECIALISED = kernel("""
  setp.lt.u32 %p1, %r1, 64;
  @!%p1 bra JOIN;
  add.u32 %r5, %r1, 700;
  st.shared.u32 [%r4], %r5;
  bar.sync 1, 64;
JOIN:
  bar.sync 0;
  and.b32 %r6, %r1, 63;
  mul.lo.u32 %r7, %r6, 4;
  add.u32 %r8, %r2, %r7;
  ld.shared.u32 %r9, [%r8];
  st.global.u32 [%rd3], %r9;
""")


def test_named_barrier_completes_while_other_warps_wait_at_barrier_0():
    out = np.zeros(128, np.uint32)
    res = run_ptx(SPECIALISED, grid=1, block=128, args={0: out})
    assert list(out) == [700 + (t & 63) for t in range(128)]
    assert not res.observations.event_counts


CUDA = Path(__file__).parents[2] / "ptx_samples/cuda"


def test_mbarriers_and_bulk_copies_from_nvcc():
    text = (CUDA / "mbarrier_sm90.ptx").read_text()
    inp = np.arange(2 * 256 * 4, dtype=np.int32)
    out = np.zeros_like(inp)
    res = run_ptx(text, "bulk_copy_mbarrier", grid=2, block=256, args={0: inp, 1: out})
    tiles = inp.reshape(2, 256, 4)
    assert np.array_equal(out.reshape(2, 256, 4), np.roll(tiles, -1, axis=1))
    assert not res.observations.event_counts
    res = run_ptx(text, "mbarrier_inline", grid=2, block=64, args={0: np.zeros(128, np.int32)})
    assert not res.observations.event_counts
    text = (CUDA / "async_copy.ptx").read_text()
    inp = np.arange(512, dtype=np.int32)
    out = np.zeros_like(inp)
    res = run_ptx(text, "barrier_copy", grid=2, block=256, args={0: inp, 1: out})
    assert np.array_equal(out, 2 * inp) and not res.observations.event_counts


NEVER = kernel("""
  .shared .align 8 .b64 bar;
  mov.u32 %r5, bar;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared.b64 [%r5], 64;
  bar.sync 0;
  mov.b64 %rd4, 0;
WAIT:
  mbarrier.try_wait.parity.shared.b64 %p2, [%r5], 0;
  @!%p2 bra WAIT;
  st.global.u32 [%rd3], %r1;
""")


def test_mbarrier_phase_that_never_completes_is_reported():
    out = np.zeros(32, np.uint32)
    res = run_ptx(NEVER, grid=1, block=32, args={0: out})
    assert res.observations.count("mbarrier-deadlock") == 1
    assert not out.any()  # the waiting threads stopped
