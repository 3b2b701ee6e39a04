"""The emulator's hazard events (`run_kernel(..., hazards=True)`): undefined register
reads (with copies and selects passing definedness on), shared and local bytes read
before anything wrote them, and global races between the threads it runs."""
from __future__ import annotations

import numpy as np

from ptxlint.emulate import run_kernel

HEADER = """.version 8.0
.target sm_80
.address_size 64
"""


def kernel(body: str, regs: str = "") -> str:
    return HEADER + """
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b8 tile[256];
    .local .align 4 .b8 depot[16];
""" + regs + """
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
""" + body + "\n    ret;\n}\n"


def events(text: str, grid=1, block=64, kind: str | None = None, out=None):
    out = np.zeros(1024, np.uint32) if out is None else out
    res = run_kernel(text, "k", grid=grid, block=block, args={0: out}, hazards=True)
    evs = res.observations.events
    return [e for e in evs if kind is None or e.kind == kind], res


def lines(evs) -> list:
    return sorted({e.line for e in evs})


def line_of(text: str, code: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if code in line)


# ---- registers ----------------------------------------------------------------------------------
def test_a_predicated_write_read_unguarded():
    text = kernel("""
    setp.lt.u32 %p1, %r1, 16;
    @%p1 mov.u32 %r3, 5;
    add.s32 %r4, %r3, 1;
    add.s32 %r5, %r3, 2;
""")
    evs, res = events(text, kind="uninitialized-register")
    assert lines(evs) == [line_of(text, "add.s32 %r4, %r3, 1")]  # once per thread: the second read is not an event
    by_warp = {e.details["warp"]: e.details["lanes"] for e in evs}
    assert by_warp == {0: list(range(16, 32)), 1: list(range(32))}
    assert evs[0].details["register"] == "%r3"


def test_copies_and_selects_pass_definedness_on():
    text = kernel("""
    setp.lt.u32 %p1, %r1, 16;
    @%p1 mov.u32 %r3, 5;
    mov.u32 %r4, %r3;
    selp.u32 %r5, %r4, 0, %p1;
    add.s32 %r6, %r5, 1;
    mov.u32 %r7, %r9;
    add.s32 %r8, %r7, 1;
""")
    evs, _ = events(text, kind="uninitialized-register")
    assert lines(evs) == [line_of(text, "add.s32 %r8")]
    assert evs[0].details["register"] == "%r7"


def test_the_guard_is_read_by_every_thread():
    text = kernel("""
    @%p3 mov.u32 %r3, 1;
""")
    evs, _ = events(text, kind="uninitialized-register")
    assert lines(evs) == [line_of(text, "@%p3")] and evs[0].details["register"] == "%p3"


def test_without_hazards_nothing_is_tracked():
    text = kernel("    add.s32 %r4, %r9, 1;\n")
    res = run_kernel(text, "k", grid=1, block=32, args={0: np.zeros(64, np.uint32)})
    assert not res.observations.of_kind("uninitialized-register")


def test_a_callee_starts_with_its_registers_undefined():
    text = HEADER + """
.func (.reg .b32 %ret) f(.reg .b32 %x)
{
    .reg .b32 %t;
    add.s32 %ret, %x, %t;
    mov.u32 %t, 1;
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<8>;
    mov.u32 %r1, %tid.x;
    call (%r2), f, (%r1);
    call (%r3), f, (%r2);
    add.s32 %r4, %r3, %r2;
    ret;
}
"""
    evs, _ = events(text, block=32, kind="uninitialized-register")
    # %t is read undefined in both calls (each call starts afresh); %x and the returned
    # registers are defined
    assert lines(evs) == [line_of(text, "add.s32 %ret")]
    assert {e.details["register"] for e in evs} == {"%t"}
    assert sum(1 for _ in evs) == 2


# ---- shared and local memory ---------------------------------------------------------------
def test_half_a_tile_written_before_the_barrier():
    text = kernel("""
    shl.b32 %r3, %r1, 2;
    mov.u32 %r4, tile;
    add.s32 %r5, %r4, %r3;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 st.shared.u32 [%r5], %r1;
    bar.sync 0;
    ld.shared.u32 %r6, [%r5];
""")
    evs, _ = events(text, kind="uninitialized-shared")
    assert lines(evs) == [line_of(text, "ld.shared")]
    assert [e.details["warp"] for e in evs] == [1]  # threads 32-63
    assert evs[0].details["bytes"][0] == [128, 129, 130, 131]


def test_a_whole_tile_is_clean():
    text = kernel("""
    shl.b32 %r3, %r1, 2;
    mov.u32 %r4, tile;
    add.s32 %r5, %r4, %r3;
    st.shared.u32 [%r5], %r1;
    bar.sync 0;
    ld.shared.u32 %r6, [%r5+4];
""", )
    evs, _ = events(text, block=64, kind="uninitialized-shared")  # thread 63: out of bounds
    assert evs == []


def test_local_bytes_read_before_written():
    text = kernel("""
    st.local.u32 [depot], %r1;
    ld.local.u32 %r3, [depot];
    ld.local.u32 %r4, [depot+4];
""")
    evs, _ = events(text, block=32, kind="uninitialized-local")
    assert lines(evs) == [line_of(text, "[depot+4]")]
    assert evs[0].details["bytes"][0] == [4, 5, 6, 7]


# ---- global races ------------------------------------------------------------------------------
def test_every_block_writing_the_same_elements():
    text = kernel("""
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r2;
""")
    evs, _ = events(text, grid=4, block=32, kind="global-race")
    assert lines(evs) == [line_of(text, "st.global")]
    assert evs[0].details["other_pc"] == evs[0].pc  # the same store in another block


def test_the_same_value_everywhere_is_benign():
    text = kernel("""
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r1;
""")
    evs, _ = events(text, grid=4, block=32, kind="global-race")
    assert evs == []


def test_the_global_index_is_clean():
    text = kernel("""
    mad.lo.s32 %r3, %r2, 32, %r1;
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r2;
    ld.global.u32 %r4, [%rd4];
""")
    evs, _ = events(text, grid=4, block=32, kind="global-race")
    assert evs == []


def test_a_barrier_orders_one_block_but_not_two():
    text = kernel("""
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    mad.lo.s32 %r5, %r2, 100, %r1;
    st.global.u32 [%rd4], %r5;
    bar.sync 0;
    ld.global.u32 %r4, [%rd4+4];
""")
    one, _ = events(text, grid=1, block=64, kind="global-race")
    assert one == []
    two, _ = events(text, grid=2, block=64, kind="global-race")
    assert two  # block 1's store races with block 0's (and the reads)


def test_a_read_beside_a_write_in_one_interval():
    text = kernel("""
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r1;
    ld.global.u32 %r4, [%rd4+4];
""")
    evs, _ = events(text, grid=1, block=64, kind="global-race")
    assert lines(evs) == [line_of(text, "ld.global")]


def test_atomics_and_strong_pairs_are_not_judged():
    text = kernel("""
    atom.global.add.u32 %r3, [%rd2], 1;
    st.volatile.global.u32 [%rd2+4], %r1;
    ld.volatile.global.u32 %r4, [%rd2+4];
""")
    evs, _ = events(text, grid=2, block=32, kind="global-race")
    assert evs == []
