"""Warp-synchronous instructions and atomics: shfl.sync against the ISA pseudo-code,
votes, activemask under divergence, match, redux, and atomics applied in thread order
(deterministic, equal to a sequential reference)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .helpers import HEADER, elementwise, run_ptx

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def shfl_reference(mode: str, a, b: int, c: int):
    """The ISA's pseudo-code, lane by lane (a: the 32 source values)."""
    out, preds = [], []
    bval, cval, mask = b & 31, c & 31, (c >> 8) & 31
    for lane in range(32):
        max_lane = (lane & mask) | (cval & ~mask)
        min_lane = lane & mask
        if mode == "up":
            j, p = lane - bval, lane - bval >= max_lane
        elif mode == "down":
            j, p = lane + bval, lane + bval <= max_lane
        elif mode == "bfly":
            j, p = lane ^ bval, (lane ^ bval) <= max_lane
        else:
            j = min_lane | (bval & ~mask)
            p = j <= max_lane
        out.append(a[j] if p else a[lane])
        preds.append(p)
    return out, preds


@pytest.mark.parametrize("mode", ["up", "down", "bfly", "idx"])
@SETTINGS
@given(b=st.integers(0, 40), c=st.sampled_from([0, 0x1F, 0x0F, 0x1C1F, 0x181F, 0x101F, 0x1F00, 7]))
def test_shfl_sync(mode, b, c):
    a = np.arange(64, dtype=np.uint32) * 7 + 3
    got = elementwise(f"  shfl.sync.{mode}.b32 %d|%p, %a, {b}, {c}, -1;", {"a": "u32"},
                      {"d": "u32", "p": "pred"}, {"a": a})
    for w in range(2):
        want, preds = shfl_reference(mode, a[32 * w:32 * w + 32], b, c)
        assert list(got["d"][32 * w:32 * w + 32]) == want
        assert list(got["p"][32 * w:32 * w + 32]) == preds


@SETTINGS
@given(flags=st.lists(st.booleans(), min_size=64, max_size=64))
def test_votes(flags):
    got = elementwise("  vote.sync.ballot.b32 %d, %p, -1;\n  vote.sync.all.pred %q, %p, -1;\n"
                      "  vote.sync.any.pred %r, %p, -1;\n  vote.sync.uni.pred %s, %p, -1;",
                      {"p": "pred"}, {"d": "u32", "q": "pred", "r": "pred", "s": "pred"},
                      {"p": flags})
    for w in range(2):
        f = flags[32 * w:32 * w + 32]
        ballot = sum(1 << i for i, x in enumerate(f) if x)
        sl = slice(32 * w, 32 * w + 32)
        assert set(got["d"][sl]) == {ballot}
        assert set(got["q"][sl]) == {all(f)} and set(got["r"][sl]) == {any(f)}
        assert set(got["s"][sl]) == {all(f) or not any(f)}


DIVERGENT_ACTIVEMASK = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .pred %p1;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra ELSE;
  activemask.b32 %r3;
  bra.uni JOIN;
ELSE:
  activemask.b32 %r3;
JOIN:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_activemask_reflects_divergence():
    out = np.zeros(32, np.uint32)
    run_ptx(DIVERGENT_ACTIVEMASK, grid=1, block=32, args={0: out})
    quarter = sum(1 << i for i in range(0, 32, 4))
    assert all(out[i] == (quarter if i % 4 == 0 else 0xFFFFFFFF ^ quarter) for i in range(32))


def test_match_and_redux():
    a = np.array([5, 7, 5, 9] * 8, np.uint32)
    got = elementwise("  match.any.sync.b32 %d, %a, -1;\n  match.all.sync.b32 %e|%p, %a, -1;",
                      {"a": "u32"}, {"d": "u32", "e": "u32", "p": "pred"}, {"a": a}, block=32)
    fives = sum(1 << i for i in range(0, 32, 4)) | sum(1 << i for i in range(2, 32, 4))
    assert got["d"][0] == fives and got["d"][1] == sum(1 << i for i in range(1, 32, 4))
    assert not got["p"].any() and not got["e"].any()
    r = elementwise("  redux.sync.add.u32 %d, %a, -1;\n  redux.sync.max.s32 %e, %a, -1;",
                    {"a": "u32"}, {"d": "u32", "e": "s32"}, {"a": a}, block=32)
    assert set(r["d"]) == {int(a.sum())} and set(r["e"]) == {9}


def test_shfl_with_missing_member_lanes_is_observed():
    """Lanes 8-31 skip the shuffle and go on to a store: still running, so missing."""
    text = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .pred %p1;
  .reg .b32 %r<6>;
  .reg .b64 %rd1;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 8;
  @!%p1 bra DONE;
  shfl.sync.down.b32 %r2, %r1, 1, 31, -1;
DONE:
  ld.param.u64 %rd1, [out];
  st.global.u32 [%rd1], %r1;
  ret;
}
"""
    res = run_ptx(text, grid=1, block=32, args={0: np.zeros(1, np.int32)})
    (ev,) = res.observations.of_kind("warp-sync")
    assert ev.details["missing"] == list(range(8, 32))



WARP_BARRIER = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .pred %p1;
  .reg .b32 %r<2>;
  .reg .b64 %rd1;
  mov.u32 %r1, %laneid;
  setp.lt.u32 %p1, %r1, 16;
  @!%p1 bra DONE;
  bar.warp.sync -1;
DONE:
  ld.param.u64 %rd1, [out];
  @!%p1 st.global.u32 [%rd1], %r1;
  ret;
}
"""


def test_bar_warp_sync_with_missing_member_lanes_is_a_warp_barrier_event():
    """`__syncwarp()` (full mask) reached by lanes 0-15 only: lanes 16-31 never come
    (they go on to a store)."""
    res = run_ptx(WARP_BARRIER, grid=1, block=32, args={0: np.zeros(1, np.int32)})
    (ev,) = res.observations.of_kind("warp-barrier")
    assert ev.details["missing"] == list(range(16, 32))
    assert not res.observations.of_kind("warp-sync")


def test_lanes_on_their_way_out_are_not_missing():
    """Lanes 16-31 only leave the kernel (a load, then `ret`): `bar.warp.sync` and
    `shfl.sync` wait only for lanes that have not exited, so neither is an event."""
    text = WARP_BARRIER.replace("@!%p1 st.global.u32 [%rd1], %r1;", "ld.global.u32 %r1, [%rd1];")
    text = text.replace("bar.warp.sync -1;", "bar.warp.sync -1;\n  shfl.sync.idx.b32 %r1, %r1, 0, 31, -1;")
    res = run_ptx(text, grid=1, block=32, args={0: np.zeros(1, np.int32)})
    assert not res.observations.of_kind("warp-barrier")
    assert not res.observations.of_kind("warp-sync")

ATOMICS = HEADER + """
.visible .entry k(.param .u64 fsum, .param .u64 isum, .param .u64 olds, .param .u64 ctr,
                  .param .u64 mx)
{
  .reg .b32 %r<8>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<12>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  cvt.rn.f32.u32 %f1, %r4;
  mul.f32 %f1, %f1, 0f3DCCCCCD;
  ld.param.u64 %rd1, [fsum];
  red.global.add.f32 [%rd1], %f1;
  ld.param.u64 %rd2, [isum];
  and.b32 %r5, %r4, 3;
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd2, %rd3;
  atom.global.add.u32 %r6, [%rd4], %r4;
  ld.param.u64 %rd5, [olds];
  mul.wide.u32 %rd6, %r4, 4;
  add.s64 %rd7, %rd5, %rd6;
  st.global.u32 [%rd7], %r6;
  ld.param.u64 %rd8, [ctr];
  atom.global.inc.u32 %r7, [%rd8], 9;
  ld.param.u64 %rd9, [mx];
  atom.global.max.s32 %r7, [%rd9], %r4;
  atom.global.cas.b32 %r7, [%rd9+4], 0, %r4;
  atom.global.exch.b32 %r7, [%rd9+8], %r4;
  ret;
}
"""


def test_atomics_apply_in_thread_order():
    n = 256
    fsum, isum = np.zeros(1, np.float32), np.zeros(4, np.uint32)
    olds, ctr, mx = np.zeros(n, np.uint32), np.zeros(1, np.uint32), np.zeros(3, np.int32)
    run_ptx(ATOMICS, grid=4, block=64, args={0: fsum, 1: isum, 2: olds, 3: ctr, 4: mx})
    x = (np.arange(n, dtype=np.float32) * np.float32(0.1)).astype(np.float32)
    acc = np.float32(0)
    for v in x:  # sequential float32 additions, thread order
        acc = np.float32(acc + v)
    assert fsum[0] == acc
    i = np.arange(n)
    assert list(isum) == [int(i[i % 4 == k].sum()) for k in range(4)]
    prefix = [int(i[(i % 4 == k % 4) & (i < k)].sum()) for k in range(n)]
    assert list(olds) == prefix  # each thread saw the lanes before it
    assert ctr[0] == n % 10  # inc wraps to 0 after 9
    # cas(0 -> id): thread 0 stores 0, thread 1 still finds 0 and stores 1, then all fail
    assert list(mx) == [n - 1, 1, n - 1]


HALF_ATOMICS = HEADER + """
.visible .entry k(.param .u64 h, .param .u64 b, .param .u64 h2)
{
  .reg .b16 %h<3>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [h];
  ld.param.u64 %rd2, [b];
  ld.param.u64 %rd3, [h2];
  mov.b16 %h1, 0x3C00;
  atom.global.add.noftz.f16 %h2, [%rd1], %h1;
  mov.b16 %h1, 0x3F80;
  red.global.add.noftz.bf16 [%rd2], %h1;
  mov.b32 %r1, 0x40003C00;
  atom.global.add.noftz.f16x2 %r2, [%rd3], %r1;
  ret;
}
"""


def test_half_atomics_on_one_address_add_values_not_bit_patterns():
    """32 lanes add 1.0 (f16, bf16) and {1.0, 2.0} (f16x2) to one address each."""
    h, b, h2 = np.zeros(1, np.uint16), np.zeros(1, np.uint16), np.zeros(1, np.uint32)
    run_ptx(HALF_ATOMICS, grid=1, block=32, args={0: h, 1: b, 2: h2})
    assert h.view(np.float16)[0] == 32
    assert (b.astype(np.uint32) << 16).view(np.float32)[0] == 32
    assert list(h2.view(np.float16)) == [32, 64]


def test_shared_atomics_histogram_is_deterministic():
    from pathlib import Path
    text = (Path(__file__).parents[2] / "ptx_samples/cuda/histogram.ptx").read_text()
    keys = np.random.default_rng(1).integers(0, 4000, 5000).astype(np.int32)
    w = np.random.default_rng(2).random(5000).astype(np.float32)
    runs = []
    for _ in range(2):
        sums = np.zeros(64, np.float32)
        args = {0: keys, 1: w, 2: 5000, 3: sums, 4: np.zeros(1, np.int32), 5: np.zeros(1, np.uint64)}
        run_ptx(text, "weighted_hist", grid=20, block=256, args=args)
        runs.append(sums.copy())
    assert np.array_equal(runs[0], runs[1])
    ref = np.zeros(64)
    np.add.at(ref, keys & 63, w)
    assert np.allclose(runs[0], ref, rtol=1e-4)
