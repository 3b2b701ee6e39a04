"""Observations: sectors per request and bank conflicts as the hardware model of
`threads/warp.py` counts them, per warp, for whole grids at once."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxlint.domains.align import Congruence
from ptxlint.emulate import bank_ways, sectors_per_request
from ptxlint.emulate.observe import warp_bank_ways, warp_sectors
from ptxlint.threads import warp as W

from .helpers import HEADER, run_ptx

ROOT = Path(__file__).parents[2]

STRIDED = HEADER + """
.visible .entry k(.param .u64 a, .param .u32 stride)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<6>;
  .reg .f32 %f1;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [stride];
  mul.lo.u32 %r3, %r1, %r2;
  ld.param.u64 %rd1, [a];
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f1, [%rd3];
  ret;
}
"""


def load_stats(stride: int):
    res = run_ptx(STRIDED, grid=1, block=64, args={0: np.zeros(64 * 32, np.float32), 1: stride})
    (stats,) = [a for a in res.observations.accesses.values() if a.kind == "load" and a.spaces.get("global")]
    return stats


def test_strided_load_touches_32_sectors_and_coalesced_4():
    assert dict(load_stats(32).sectors) == {32: 2}  # two warps, 128-byte stride
    assert dict(load_stats(1).sectors) == {4: 2}
    assert dict(load_stats(0).sectors) == {1: 2}  # a broadcast
    worst = load_stats(32).worst_sectors
    assert worst["value"] == 32 and worst["lanes"] == list(range(32))


def test_padded_shared_is_conflict_free_and_unpadded_32_way():
    for name, ways in (("column.ok.ptx", 1), ("column.bad.ptx", 32)):
        text = (ROOT / "ptx_samples/bank-conflict" / name).read_text()
        n = 64
        out, inp = np.zeros((n, n), np.float32), np.random.rand(n, n).astype(np.float32)
        res = run_ptx(text, "transpose_padded" if "ok" in name else "transpose_unpadded",
                      grid=(2, 2), block=(32, 8), args={0: out, 1: inp, 2: n, 3: n})
        assert np.array_equal(out, inp.T)
        loads = [a for a in res.observations.accesses.values()
                 if a.kind == "load" and a.spaces.get("shared")]
        assert loads and all(a.max_ways == ways for a in loads), [dict(a.ways) for a in loads]


def pattern(addrs: list[int | None], width: int) -> W.WarpPattern:
    first = next(a for a in addrs if a is not None)
    return W.WarpPattern(tuple(None if a is None else a - first for a in addrs), width,
                         alignment=Congruence(W.GRANULE_BITS, first % 128))


lane_addrs = st.lists(st.one_of(st.none(), st.integers(0, 4096)), min_size=32, max_size=32).filter(
    lambda xs: any(x is not None for x in xs))


@settings(max_examples=200, deadline=None)
@given(addrs=lane_addrs, width=st.sampled_from([1, 2, 4, 8, 16]))
def test_one_warp_helpers_agree_with_the_static_model(addrs, width):
    aligned = [None if a is None else a - a % width for a in addrs]
    lanes = [i for i, a in enumerate(aligned) if a is not None]
    live = [a for a in aligned if a is not None]
    p = pattern(aligned, width)
    assert sectors_per_request(live, width) == W.sectors(p)
    assert bank_ways(live, width, lanes) == W.bank_ways(p)


@settings(max_examples=100, deadline=None)
@given(warps=st.lists(lane_addrs, min_size=1, max_size=6), width=st.sampled_from([4, 8, 16]))
def test_vectorised_counts_agree_with_the_one_warp_helpers(warps, width):
    wid, lane, addr = [], [], []
    for w, addrs in enumerate(warps):
        for i, a in enumerate(addrs):
            if a is not None:
                wid.append(w * 3)
                lane.append(i)
                addr.append(a - a % width)
    wid, lane, addr = np.array(wid), np.array(lane, np.uint32), np.array(addr, np.uint64)
    ids, secs = warp_sectors(wid, addr, width)
    ids2, ways = warp_bank_ways(wid, lane, addr, width)
    for k, w in enumerate(ids):
        sel = wid == w
        assert secs[k] == sectors_per_request(addr[sel], width)
        assert ways[list(ids2).index(w)] == bank_ways(addr[sel], width, lane[sel])


TRACED = HEADER + """
.visible .entry k(.param .u64 a, .param .u64 out)
{
  .reg .pred %p1;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .f32 %f1;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %p1, %r2, 1;
  mul.lo.u32 %r3, %r1, 5;
  and.b32 %r4, %r3, 63;
  ld.param.u64 %rd1, [a];
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  mov.f32 %f1, 0f00000000;
  @%p1 ld.global.f32 %f1, [%rd3];
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd4, %rd5;
  st.global.f32 [%rd6], %f1;
  ret;
}
"""


def traced_run(trace: bool):
    a = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    res = run_ptx(TRACED, grid=2, block=64, args={0: a, 1: out}, trace=trace)
    assert list(out) == [float(t * 5 % 64) if t % 2 else 0.0 for t in range(64)]
    (load,) = [s for s in res.observations.accesses.values() if s.kind == "load"
               and s.spaces.get("global")]
    return res, load


def test_trace_records_each_warp_request_lanes_and_byte_addresses():
    """Odd lanes of thread t load a[5t mod 64]: each of the 4 warp requests (2 blocks x 2
    warps) is kept with its lanes and byte addresses, in the buffer's mapped addresses."""
    res, load = traced_run(trace=True)
    base = res.buffers[0]
    mine = [tr for tr in res.observations.traces if tr["pc"] == load.pc]
    assert sorted((tr["block"], tr["warp"]) for tr in mine) == [
        ((b, 0, 0), w) for b in range(2) for w in range(2)]
    (one,) = [tr for tr in mine if tr["block"] == (1, 0, 0) and tr["warp"] == 1]
    lanes = list(range(1, 32, 2))
    assert one == {"pc": load.pc, "block": (1, 0, 0), "warp": 1, "space": "global",
                   "lanes": lanes, "addresses": [base + 4 * ((32 + l) * 5 % 64) for l in lanes]}
    stores = [tr for tr in res.observations.traces if tr["pc"] != load.pc]
    assert len(stores) == 4 and all(tr["lanes"] == list(range(32)) for tr in stores)
    assert load.requests == 4 and load.lanes == 64


def test_without_trace_only_the_summary_is_kept():
    res, load = traced_run(trace=False)
    assert res.observations.traces == []
    assert "traces" not in res.observations.to_dict()
    _, traced = traced_run(trace=True)
    # byte offsets 20t mod 256 for a warp's 16 odd lanes t touch all 8 sectors of a
    assert (load.requests, load.lanes, dict(load.sectors)) == (4, 64, {8: 4})
    assert (traced.requests, traced.lanes, dict(traced.sectors)) == (4, 64, {8: 4})


def test_cli_trace_flag(tmp_path, capsys):
    import json

    from ptxlint.cli import main
    src = tmp_path / "k.ptx"
    src.write_text(TRACED)
    argv = ["run", str(src), "--kernel", "k", "--grid", "2", "--block", "64",
            "--arg", "0=zeros:f32:64", "--arg", "1=zeros:f32:64", "--json"]
    assert main(argv + ["--trace"]) == 0
    traces = json.loads(capsys.readouterr().out)["traces"]
    assert len(traces) == 8 and {len(t["lanes"]) for t in traces} == {16, 32}
    assert main(argv) == 0
    assert "traces" not in json.loads(capsys.readouterr().out)
