"""SIMT control flow: divergence and reconvergence, loops with lane-dependent trip
counts, early exit, nested divergence, calls (parameters, recursion, indirect), brx.idx,
local memory frames. Kernels come from `kernels/control.cu` (nvcc) and small hand-written
PTX."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .helpers import HEADER, run_ptx

CONTROL = (Path(__file__).parent / "kernels/control.ptx").read_text()


def test_branches_loops_nested_early_exit():
    n = 200  # two blocks of 128: the last 56 threads exit at once
    out, loops, nested = (np.full(256, -7, np.int32) for _ in range(3))
    res = run_ptx(CONTROL, "branches", grid=2, block=128, args={0: out, 1: loops, 2: nested, 3: n})
    i = np.arange(n)
    assert list(out[:n]) == [10 * k if k & 1 else -k for k in i]
    assert list(loops[:n]) == [sum(j * j for j in range(k % 37 + 1)) for k in i]
    want_nested = []
    for k in i:
        if k % 3 == 0:
            want_nested.append(15 if k % 5 == 0 else 3)
        else:
            want_nested.append(sum(j for j in range(min(k & 7, 4))))
    assert list(nested[:n]) == want_nested
    assert (out[n:] == -7).all()  # exited threads store nothing
    # reconvergence: the store after the if/else runs once per warp, all lanes together
    store = next(a for a in res.observations.accesses.values() if a.kind == "store")
    assert store.requests == -(-n // 32) and store.lanes == n


def test_calls_recursion_and_indirect_calls():
    n = 64
    out, fibs, ind = (np.zeros(n, np.int32) for _ in range(3))
    facts = np.zeros(n, np.uint64)
    res = run_ptx(CONTROL, "calls", grid=1, block=n, args={0: out, 1: facts, 2: fibs, 3: ind})
    i = np.arange(n)
    assert list(out) == list(3 * i + 7)
    assert [int(x) for x in facts] == [math.factorial(k % 21) % 2**64 for k in i]
    fib = [0, 1]
    while len(fib) < 12:
        fib.append(fib[-1] + fib[-2])
    assert list(fibs) == [fib[k % 12] for k in i]
    assert list(ind) == [2 * k if k & 1 else k * k for k in i]
    assert not res.observations.event_counts


def test_local_arrays_live_in_per_thread_frames():
    out = np.zeros(64, np.int32)
    res = run_ptx(CONTROL, "local_arrays", grid=1, block=64, args={0: out})
    i = np.arange(64)
    assert list(out) == list((i % 16) * i + ((i * 7) % 16) * i)
    assert not res.observations.event_counts


def test_switch():
    out = np.zeros(96, np.int32)
    run_ptx(CONTROL, "switcher", grid=3, block=32, args={0: out})
    i = np.arange(96)
    assert list(out) == list(np.array([11, 22, 33, 44, 55, 66, 77, 88])[i % 8] + i)


BRX = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  rem.u32 %r2, %r1, 3;
  ts: .branchtargets L0, L1, L2;
  brx.idx %r2, ts;
L0:
  mov.u32 %r3, 100;
  bra.uni DONE;
L1:
  mov.u32 %r3, 200;
  bra.uni DONE;
L2:
  mov.u32 %r3, 300;
DONE:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_brx_idx():
    out = np.zeros(32, np.uint32)
    res = run_ptx(BRX, grid=1, block=32, args={0: out})
    assert list(out) == [(100, 200, 300)[k % 3] for k in range(32)]
    store = next(iter(res.observations.accesses.values()))
    assert store.requests == 1  # the three targets reconverge before the store


UNI = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .pred %p1;
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 5;
  mov.u32 %r2, 1;
  @%p1 bra.uni SKIP;
  mov.u32 %r2, 2;
SKIP:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  exit;
}
"""


def test_divergent_bra_uni_is_observed_and_still_runs_per_lane():
    out = np.zeros(64, np.uint32)
    res = run_ptx(UNI, grid=1, block=64, args={0: out})
    assert list(out) == [1 if k < 5 else 2 for k in range(64)]
    evs = res.observations.of_kind("divergent-uniform")
    assert len(evs) == 1 and evs[0].details["warp"] == 0  # warp 1 agrees (all false)
    assert [lane for lane, t in zip(evs[0].details["lanes"], evs[0].details["taken"]) if t] == \
        [0, 1, 2, 3, 4]


# A recursive function returning through a `.reg` value into its own register %t2:
# the return value must land after the caller's registers are restored.
SUM_DOWN = HEADER + """
.func (.reg .b32 r) sum_down(.reg .b32 n)
{
  .reg .pred %q;
  .reg .b32 %t<3>;
  mov.u32 r, 0;
  setp.eq.u32 %q, n, 0;
  @%q bra $OUT;
  sub.u32 %t1, n, 1;
  call (%t2), sum_down, (%t1);
  add.u32 r, %t2, n;
$OUT:
  ret;
}

.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, 5;
  call (%r2), sum_down, (%r1);
  st.global.u32 [%rd1], %r2;
  ret;
}
"""


def test_recursive_reg_return_value_survives_the_register_restore():
    out = np.zeros(1, np.uint32)
    run_ptx(SUM_DOWN, grid=1, block=1, args={0: out})
    assert out[0] == 5 + 4 + 3 + 2 + 1


def test_step_budget_stops_an_endless_loop():
    spin = HEADER + ".visible .entry k()\n{\nL:\n  bra.uni L;\n}\n"
    import pytest

    from ptxlint.emulate import EmulationError
    with pytest.raises(EmulationError, match="step limit"):
        run_ptx(spin, grid=1, block=32, max_steps=1000)


def test_unsupported_opcode_raises_a_clear_error_when_reached():
    import pytest

    from ptxlint.emulate import EmulationError
    text = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .pred %p1;
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  setp.gt.u32 %p1, %r1, 100;
  @%p1 bra SKIP;
  ret;
SKIP:
  vadd.u32.u32.u32 %r2, %r1, %r1;
  ret;
}
"""
    run_ptx(text, grid=1, block=32, args={0: np.zeros(1, np.int32)})  # never reached: fine
    with pytest.raises(EmulationError, match="'vadd.u32.u32.u32' is not supported by the emulator"):
        run_ptx(text, grid=1, block=128, args={0: np.zeros(1, np.int32)})


SPECIALS = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  mov.u32 %r5, %laneid;
  mov.u32 %r6, %warpid;
  mov.u32 %r7, %lanemask_lt;
  mov.u32 %r8, %ctaid.y;
  mov.u32 %r9, %nctaid.x;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r4, 16;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r5, %r6, %r7, %r9};
  ret;
}
"""


def test_special_registers_follow_the_warp_model():
    out = np.zeros((48, 4), np.uint32)  # a 16x3 block: warps of 32 span two rows
    run_ptx(SPECIALS, grid=(5, 2), block=(16, 3), args={0: out})
    lin = np.arange(48)
    assert list(out[:, 0]) == list(lin % 32) and list(out[:, 1]) == list(lin // 32)
    assert list(out[:, 2]) == [(1 << (i % 32)) - 1 for i in lin]
    assert set(out[:, 3]) == {5}
