"""Memory: every state space and access width, generic addressing and cvta, module
variables with initialisers, and memory safety (out-of-bounds accesses are recorded,
never performed: other buffers stay intact)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .helpers import HEADER, elementwise, run_ptx

ROOT = Path(__file__).parents[2]

OOB = HEADER + """
.visible .entry k(.param .u64 a, .param .u64 b, .param .u64 c)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<10>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4];      // a has 16 elements: lanes 16.. read past its end
  add.s64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r2;      // b has 16 elements too
  ld.param.u64 %rd6, [c];
  st.global.u32 [%rd6+-4], %r1;   // just before c
  mov.u64 %rd7, 0;
  ld.global.u32 %r3, [%rd7];      // a null pointer
  ret;
}
"""


def test_out_of_bounds_is_recorded_and_never_performed():
    a = np.arange(16, dtype=np.uint32)
    b = np.zeros(16, np.uint32)
    c = np.full(8, 0xABCD, np.uint32)
    before = (a.copy(), c.copy())
    res = run_ptx(OOB, grid=1, block=32, args={0: a, 1: b, 2: c})
    assert np.array_equal(a, before[0]) and np.array_equal(c, before[1])
    assert list(b) == list(range(16))
    evs = res.observations.of_kind("out-of-bounds")
    load, store, before_c, null = (sorted((e for e in evs if e.line == ln), key=lambda e: e.pc)
                                   for ln in sorted({e.line for e in evs}))
    assert load[0].details["lanes"] == list(range(16, 32))
    assert load[0].details["objects"][0].startswith("a ")
    assert store[0].details["lanes"] == list(range(16, 32))
    assert len(before_c[0].details["lanes"]) == 32 and len(null[0].details["lanes"]) == 32
    assert res.observations.count("out-of-bounds") == 4


SPACES = HEADER + """
.global .align 4 .u32 g_table[4] = {10, 20, 30, 40};
.const .align 8 .f64 c_scale = 0d4000000000000000;
.visible .entry k(.param .u64 out, .param .u32 k)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  .reg .f64 %fd<3>;
  .shared .align 16 .b8 sh[512];
  .local .align 8 .b8 loc[32];
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [k];
  // global variable through its generic address
  mov.u64 %rd1, g_table;
  and.b32 %r3, %r1, 3;
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.u32 %r4, [%rd3];
  // constant
  ld.const.f64 %fd1, [c_scale];
  cvt.rn.f64.u32 %fd2, %r4;
  mul.f64 %fd2, %fd2, %fd1;
  cvt.rzi.u32.f64 %r5, %fd2;
  // shared through cvta: v4 store, generic scalar load back
  mov.u32 %r6, sh;
  mul.lo.u32 %r7, %r1, 16;
  add.u32 %r8, %r6, %r7;
  st.shared.v4.u32 [%r8], {%r1, %r2, %r4, %r5};
  cvt.u64.u32 %rd4, %r8;
  cvta.shared.u64 %rd5, %rd4;
  isspacep.shared %p1, %rd5;
  isspacep.global %p2, %rd5;
  ld.u32 %r9, [%rd5+12];
  // local through the stack
  mov.u64 %rd6, loc;
  st.local.v2.u32 [%rd6+8], {%r9, %r1};
  ld.local.v2.u32 {%r10, %r11}, [%rd6+8];
  selp.u32 %r10, %r10, 0, %p1;
  selp.u32 %r10, 0, %r10, %p2;
  ld.param.u64 %rd7, [out];
  cvta.to.global.u64 %rd8, %rd7;
  mov.u32 %r3, %ctaid.x;
  mad.lo.u32 %r3, %r3, 32, %r1;
  mul.wide.u32 %rd9, %r3, 8;
  add.s64 %rd10, %rd8, %rd9;
  st.global.v2.u32 [%rd10], {%r10, %r11};
  ret;
}
"""


def test_state_spaces_vectors_and_generic_addressing():
    out = np.zeros((64, 2), np.uint32)
    res = run_ptx(SPACES, grid=2, block=32, args={0: out, 1: 5})
    tid = np.arange(32)
    want = (np.array([10, 20, 30, 40])[tid % 4] * 2)
    assert list(out[:32, 0]) == list(want) == list(out[32:, 0])
    assert list(out[:32, 1]) == list(tid)
    assert not res.observations.event_counts


def test_narrow_and_wide_loads_and_stores():
    got = elementwise("  mov.b64 {%e, %f}, %a;\n  mov.b64 %d, {%f, %e};",
                      {"a": "b64"}, {"d": "b64", "e": "b32", "f": "b32"},
                      {"a": [0x1122334455667788]})
    assert got["d"][0] == 0x5566778811223344 and got["e"][0] == 0x55667788


MISALIGNED = HEADER + """
.visible .entry k(.param .u64 a)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [a];
  ld.global.u32 %r1, [%rd1+2];
  st.global.u32 [%rd1+8], %r1;
  ret;
}
"""


def test_misaligned_access_is_reported_and_done_bytewise():
    a = np.array([0x11223344, 0x55667788, 0, 0], np.uint32)
    res = run_ptx(MISALIGNED, grid=1, block=1, args={0: a})
    assert res.observations.count("misaligned") == 1
    assert a[2] == 0x77881122


def test_module_globals_and_constants_from_nvcc():
    text = (ROOT / "ptx_samples/cuda/const_global.ptx").read_text()
    src = (ROOT / "ptx_samples/cuda/const_global.cu").read_text()
    assert "c_coeffs" in src
    res = run_ptx(text, "fir", grid=1, block=32, args={
        0: np.ones(64, np.float32), 1: np.zeros(64, np.float32), 2: 32})
    assert "d_lut" in res.globals and list(res.globals["d_lut"][:8]) == [0, 0, 0, 0, 1, 0, 0, 0]


LOCAL_AND_SHARED_OOB = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<6>;
  .local .align 4 .b8 arr[16];
  .shared .align 4 .b8 sh[64];
  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, arr;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.local.u32 [%rd3], %r1;      // lanes 4.. run off the 16-byte array
  mov.u32 %r2, sh;
  mul.lo.u32 %r3, %r1, 4;
  add.u32 %r4, %r2, %r3;
  st.shared.u32 [%r4], %r1;      // lanes 16.. run off the 64-byte array
  ret;
}
"""


def test_local_and_shared_out_of_bounds():
    res = run_ptx(LOCAL_AND_SHARED_OOB, grid=2, block=32, args={0: np.zeros(1, np.int32)})
    evs = res.observations.of_kind("out-of-bounds")
    local = [e for e in evs if e.details["spaces"][0] == "local"]
    shared = [e for e in evs if e.details["spaces"][0] == "shared"]
    assert [e.details["lanes"] for e in local] == [list(range(4, 32))] * 2
    assert [e.details["lanes"] for e in shared] == [list(range(16, 32))] * 2
    assert shared[0].details["objects"][0] == "sh"


# `[%r+imm]` with a 32-bit %r: a 32-bit address, so the sum wraps at 2^32 (PTX ISA 6.4.1:
# the register's width is the address size). nvcc emits this for MT19937's `s[i - 227]`:
# `&s[i] - 908` goes below zero in warp 0 and `[%r+384]` brings it back. Here the detour
# is -0x7FFFFFF0, below zero wherever `sh` is placed.
WRAPPED_SHARED = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<9>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b8 sh[132];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, sh;
  shl.b32 %r3, %r1, 2;
  add.s32 %r4, %r2, %r3;                // &sh[t]
  add.s32 %r8, %r1, 100;
  st.shared.u32 [%r4], %r8;             // sh[t] = 100 + t
  bar.warp.sync -1;
  add.s32 %r5, %r4, -2147483632;        // &sh[t] - 0x7FFFFFF0, modulo 2^32
  ld.shared.u32 %r6, [%r5+2147483632];  // sh[t]
  bar.warp.sync -1;
  st.shared.u32 [%r5+2147483636], %r6;  // sh[t + 1] = 100 + t
  bar.warp.sync -1;
  ld.shared.u32 %r7, [%r4];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 8;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v2.u32 [%rd3], {%r6, %r7};
  ret;
}
"""


def test_32_bit_register_address_wraps_at_32_bits():
    out = np.zeros((32, 2), np.uint32)
    res = run_ptx(WRAPPED_SHARED, grid=1, block=32, args={0: out})
    t = np.arange(32)
    assert list(out[:, 0]) == list(100 + t)
    assert list(out[:, 1]) == [100] + list(100 + t[:-1])  # lane 0's word is not rewritten
    assert not res.observations.event_counts
