"""Findings that hold only for launches the user did not give and that contradict the
kernel's evident design are notes stating the condition (issue 20): a race between
threads that only a bigger block than the kernel's shared arrays are sized for has, a
race in a kernel that reads no thread index. Findings within the design, or for the
launch given, stay warnings and errors. Also: the runs of one block that settle an
access without a grid, and accesses no thread of the launch runs."""
from __future__ import annotations

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text

from ..conftest import ROOT
from ..expectations import lint_sample

HEAD = """.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 buf)
{
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .reg .f32 %f<8>;
"""


def lint(body: str, launch: str | None, rule: str = "shared-memory-race", regs: str = ""):
    text = HEAD + regs + body + "\n    ret;\n}\n"
    options = LintOptions(launch=LaunchConfig.parse(launch) if launch else None,
                          enable=frozenset({rule}))
    return [d for d in lint_text(text, "t.ptx", options).diagnostics if d.rule == rule]


# s[tid & 255] = x: threads t and t + 256 write the same word, but `s[tid]` (in bounds for
# up to 256 threads) says the kernel is written for 256 at most
WRAPPED = """
    .shared .align 4 .b8 s[1024];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 255;
    shl.b32 %r3, %r2, 2;
    mov.u32 %r4, s;
    add.s32 %r5, %r4, %r3;
    st.shared.f32 [%r5], %f1;
    shl.b32 %r6, %r1, 2;
    add.s32 %r7, %r4, %r6;
    bar.sync 0;
    ld.shared.f32 %f2, [%r7];"""


def test_a_race_beyond_the_arrays_design_is_a_note_with_its_block_size():
    [d] = lint(WRAPPED, "grid=4")
    assert (d.severity, d.certainty) == (Severity.NOTE, Certainty.POSSIBLE)
    assert d.message == ("possible shared-memory race when the block has more than 256 "
                         "threads: two threads write the same bytes of `s` with no barrier "
                         "between")
    assert d.details["min_threads"] == 257
    assert d.notes[-1] == ("`s` holds 256 elements of 4 bytes, indexed by `%tid.x`: in "
                           "bounds for blocks of up to 256 threads")


def test_the_same_race_for_a_launch_that_has_it_stays_an_error():
    [d] = lint(WRAPPED, "block=512 grid=4")
    assert d.severity == Severity.ERROR and "min_threads" not in d.details
    assert lint(WRAPPED, "block=256 grid=4") == []


def test_a_race_within_the_design_stays_a_warning():
    # s[tid] written, s[tid + 1] read without a barrier: threads 0 and 1 already race
    body = """
    .shared .align 4 .b8 s[1028];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, s;
    add.s32 %r4, %r3, %r2;
    st.shared.f32 [%r4], %f1;
    ld.shared.f32 %f2, [%r4+4];"""
    [d] = lint(body, "grid=4")
    assert d.severity == Severity.WARNING and "min_threads" not in d.details


def test_a_kernel_reading_no_thread_index_is_written_for_one_thread():
    body = """
    .shared .align 4 .b8 table[128];
    st.shared.f32 [table], %f1;
    st.shared.f32 [table+4], %f1;"""
    found = lint(body, None)  # one finding per store (no line information to group by)
    assert [d.line for d in found] == [12, 13]
    d = found[0]
    assert d.severity == Severity.NOTE and d.details["min_threads"] == 2
    assert "when the block has more than 1 thread" in d.message
    assert d.notes[-1] == ("the kernel reads no thread index: it is written for one thread "
                           "per block")
    assert {d.severity for d in lint(body, "block=64")} == {Severity.ERROR}  # 64 threads


def test_the_samples():
    found = [d for d in lint_sample(ROOT / "ptx_samples/shared-memory-race/block_design.bad.ptx")
             .diagnostics if d.rule == "shared-memory-race"]
    assert sorted((d.severity, d.details.get("min_threads")) for d in found) == [
        (Severity.NOTE, 2), (Severity.WARNING, None)]


# ---- out of bounds: a run of one block, an access no thread runs ------------------------------
REDUCTION = """
    .shared .align 4 .b8 sdata[1024];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, sdata;
    mov.u32 %r10, 1;
$L_loop:
    shl.b32 %r11, %r10, 1;
    mul.lo.s32 %r12, %r11, %r1;
    setp.ge.u32 %p1, %r12, %r2;
    @%p1 bra $L_next;
    add.s32 %r13, %r12, %r10;
    shl.b32 %r14, %r13, 2;
    add.s32 %r15, %r3, %r14;
    ld.shared.f32 %f1, [%r15];
$L_next:
    bar.sync 0;
    setp.LIMIT.u32 %p2, %r11, %r2;
    mov.u32 %r10, %r11;
    @%p2 bra $L_loop;"""


def test_index_2s_tid_below_the_block_is_settled_by_one_block():
    """`index = 2*s*tid; if (index < blockDim.x) sdata[index + s]`: in bounds for s a
    power of two; the value domains cannot tell (s is not one value), a run of one block
    of the given shape can, with no grid given."""
    ok = REDUCTION.replace("LIMIT", "lt")  # s < blockDim.x
    assert lint(ok, "block=256", "out-of-bounds") == []
    [d] = lint(REDUCTION.replace("LIMIT", "le"), "block=256", "out-of-bounds")
    assert d.severity == Severity.ERROR and "emulated run" in d.message


def test_an_access_no_thread_of_the_launch_runs_is_clean():
    body = """
    .shared .align 4 .b8 s[64];
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 1000;
    @%p1 bra $L_done;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, s;
    add.s32 %r4, %r3, %r2;
    ld.shared.f32 %f1, [%r4];
$L_done:"""
    assert lint(body, "block=256", "out-of-bounds") == []  # tid < 1000 for all 256
    assert lint(body, "block=1024", "out-of-bounds") != []
