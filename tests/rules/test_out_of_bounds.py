"""`out-of-bounds`: findings on the samples (line, severity, certainty, message, details),
the cases around them (unknown launch, guards, scoped `.param` declarations) and the
docstring examples."""
from __future__ import annotations

import re

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.out_of_bounds import OutOfBounds

from ..conftest import ROOT
from ..expectations import lint_sample

RULE = "out-of-bounds"
SAMPLES = ROOT / "ptx_samples" / RULE
PROLOGUE = """.version 8.0
.target sm_80
.address_size 64

.visible .entry example(.param .u64 buf, .param .u32 n)
{
    .reg .pred %p<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<8>;

    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    ld.param.u32 %r10, [n];
"""


def lint(body: str, launch: str | None = "block=256"):
    """This rule's findings on `body` inside the standard prologue (`buf` a pointer,
    %rd2 its global address, %r10 = n); lines count from the first line of `body`."""
    text = PROLOGUE + body + "    ret;\n}\n"
    options = LintOptions(launch=LaunchConfig.parse(launch) if launch else None,
                          enable=frozenset({RULE}))
    shift = PROLOGUE.count("\n")
    return [(d.line - shift, d) for d in lint_text(text, "t.ptx", options).diagnostics
            if d.rule == RULE]


def sample(name: str, launch: str | None = None):
    path = SAMPLES / name
    if launch is None:
        report = lint_sample(path)
    else:
        report = lint_text(path.read_text(), str(path),
                           LintOptions(launch=LaunchConfig.parse(launch)))
    return [d for d in report.diagnostics if d.rule == RULE]


SHARED_TILE = """    .shared .align 4 .b8 tile[1024];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, tile;
    add.s32 %r4, %r3, %r2;
"""


# ---- the samples ------------------------------------------------------------------------------
def test_stencil_reads_one_past_the_tile_in_the_last_thread():
    [d] = sample("stencil_edge.bad.ptx")
    assert d.line == 63
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    assert d.message == ("out-of-bounds load: bytes 1024..1027 of `_ZZ6smoothE4tile` "
                         "(1024 bytes); `%tid.x` = 255 reaches byte 1024")
    assert d.label == "offset {4..1024 step 4} = 4 + 4*tid.x"
    assert d.details == {"object": "_ZZ6smoothE4tile", "size": 1024, "first_bad_byte": 1024,
                         "last_byte": 1027, "definite": True}
    assert d.help.startswith("bound the index by the size of `_ZZ6smoothE4tile`")


def test_array_one_element_short():
    store, load = sample("shared_off_by_one.bad.ptx")
    assert (store.line, load.line) == (58, 66)
    assert store.message.endswith("`%tid.x` = 255 reaches byte 1020")
    assert load.message.endswith("`%tid.x` = 0 reaches byte 1020")  # buf[255 - tid]
    assert store.details["size"] == load.details["size"] == 1020


def test_missing_guard_fails_in_the_last_block():
    # the exact launch: the address is launch-determined, a run settles it (replay.py)
    load, store = sample("missing_guard.bad.ptx")
    assert (load.line, store.line) == (50, 53)
    assert (load.severity, load.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    assert load.message == (
        "out-of-bounds load: bytes 4000..4095 of `scale_param_0` (4000 bytes); block "
        "(3, 0, 0) thread (232, 0, 0) reaches byte 4000 in an emulated run of this launch")
    assert load.details["definite"] is True
    assert store.details == {"object": "scale_param_1", "size": 4000, "first_bad_byte": 4000,
                             "last_byte": 4095, "definite": True}


def test_missing_guard_without_a_run_may_fail(monkeypatch):
    # a grid too large to run: the static verdict stands
    monkeypatch.setattr("ptxlint.replay.MAX_THREADS", 512)
    load, store = sample("missing_guard.bad.ptx")
    assert (load.line, store.line) == (50, 53)
    assert (load.severity, load.certainty) == (Severity.WARNING, Certainty.POSSIBLE)
    assert load.message == (
        "load may be out of bounds: bytes 4000..4095 of `scale_param_0` (4000 bytes); "
        "`%tid.x` = 232 would reach byte 4000 (warp-uniform part of the offset: 3072)")
    assert load.notes == ("the size of `scale_param_0` is the launch's buffer size",)
    assert store.message.startswith("store may be out of bounds: bytes 4000..4095 of "
                                    "`scale_param_1`")
    assert load.details["definite"] is False


def test_off_by_one_guard_on_a_local_array():
    [d] = sample("local_off_by_one.bad.ptx")
    assert (d.line, d.severity) == (96, Severity.WARNING)
    assert d.message == ("load may be out of bounds: bytes 32..35 of `__local_depot0` "
                         "(32 bytes)")


def test_dynamic_shared_memory_sized_by_the_launch():
    store, load = sample("dynamic_smem.bad.ptx")
    assert store.severity is Severity.ERROR
    assert store.message.endswith("`%tid.x` = 128 reaches byte 512")
    assert store.notes == ("the size of `dyn` is the launch's dynamic shared memory size",)
    # dyn[tid ^ 1] is not affine: the value domains only bound it, the launch's run
    # shows threads 128.. past the end (replay.py)
    assert load.severity is Severity.ERROR
    assert load.message == ("out-of-bounds load: bytes 512..1023 of `dyn` (512 bytes); its "
                            "lanes reach bytes 0..1023 in an emulated run of this launch")


def test_hand_written_shared_and_local_arrays():
    shared, local = sample("lane_shift.bad.ptx")
    assert shared.message.endswith("`%laneid` = 31 reaches byte 128")
    assert shared.severity is Severity.ERROR  # .reqntid 32: the block shape is exact
    assert (local.severity, local.details["first_bad_byte"]) == (Severity.WARNING, 32)


@pytest.mark.parametrize("name", ["stencil_edge.ok.ptx", "shared_off_by_one.ok.ptx",
                                  "missing_guard.ok.ptx", "local_off_by_one.ok.ptx",
                                  "dynamic_smem.ok.ptx", "lane_shift.ok.ptx"])
def test_twins_are_clean(name: str):
    assert [d for d in sample(name) if d.severity >= Severity.WARNING] == []


# ---- an unknown launch ------------------------------------------------------------------------
def test_guard_with_an_unknown_bound_names_the_condition():
    # if (i < n) with the buffers' sizes given but n unknown
    load, store = sample("missing_guard.ok.ptx", "block=256 grid=4 buffer.0=4000 buffer.1=4000")
    assert (load.severity, load.certainty) == (Severity.WARNING, Certainty.POSSIBLE)
    assert load.message == ("load may be out of bounds when `scale_param_2` > 1000: bytes "
                            "4000..4095 of `scale_param_0` (4000 bytes)")
    assert "in bounds for 0 <= `scale_param_2` <= 1000 (re-analysed with " \
           "`scale_param_2` fixed)" in load.notes
    assert store.message.startswith("store may be out of bounds when `scale_param_2` > 1000")


def test_guard_with_a_matching_bound_is_clean():
    assert sample("missing_guard.ok.ptx",
                  "block=256 grid=4 param.2=1000 buffer.0=4000 buffer.1=4000") == []


def test_unknown_block_shape_is_a_note_with_the_block_condition():
    found = sample("stencil_edge.bad.ptx", "grid=4 param.2=1024 buffer.0=4096 buffer.1=4096")
    assert {d.severity for d in found} == {Severity.NOTE}
    [halo] = [d for d in found if d.line == 63]
    assert halo.message == ("load may be out of bounds when `%ntid.x` > 255: bytes "
                            "1024..4099 of `_ZZ6smoothE4tile` (1024 bytes)")
    assert "the block shape is unknown: give it with --block X,Y,Z or declare .reqntid" \
        in halo.notes


def test_unknown_block_shape_found_by_re_analysis():
    # in[i] with i = blockIdx.x * blockDim.x + threadIdx.x: blockDim.x is in the uniform
    # part of the offset, so only re-analysing with given block sizes finds the bound
    found = sample("stencil_edge.bad.ptx", "grid=4 param.2=1024 buffer.0=4096 buffer.1=4096")
    [d] = [d for d in found if d.line == 54]
    assert d.severity is Severity.NOTE
    assert d.message == ("load may be out of bounds when `%ntid.x` > 256: bytes 4096..16383 "
                         "of `smooth_param_0` (4096 bytes)")
    assert d.notes[1] == ("in bounds for blocks of up to 256 threads (re-analysed with "
                          "one-dimensional blocks): give the block shape with --block")


def test_index_bounded_by_a_parameter_and_the_block():
    found = lint("    .shared .align 4 .b8 tile[1024];\n"
                 "    mov.u32 %r1, %tid.x;\n"
                 "    setp.ge.u32 %p1, %r1, %r10;\n"
                 "    @%p1 bra $done;\n"
                 "    shl.b32 %r2, %r1, 2;\n"
                 "    mov.u32 %r3, tile;\n"
                 "    add.s32 %r4, %r3, %r2;\n"
                 "    st.shared.f32 [%r4], %f1;\n"
                 "$done:\n", launch="block=1024")
    [(line, d)] = found
    assert line == 8 and d.severity is Severity.WARNING
    assert d.message.startswith("store may be out of bounds when `n` > 256: ")


def test_unbounded_index_is_a_note():
    found = lint(SHARED_TILE + "    ld.global.u32 %r5, [%rd2];\n"
                               "    mul.wide.u32 %rd3, %r5, 4;\n"
                               "    mov.u64 %rd4, tile;\n"
                               "    add.s64 %rd5, %rd4, %rd3;\n"
                               "    ld.shared.f32 %f1, [%rd5];\n")
    [(line, d)] = found
    assert (line, d.severity) == (10, Severity.NOTE)
    assert d.message == ("load may be out of bounds: its offset into `tile` (1024 bytes) "
                         "is not bounded")
    assert d.details["first_bad_byte"] is None and d.details["last_byte"] is None


# ---- cases around them ------------------------------------------------------------------------
def test_negative_offset_is_before_the_start():
    [(line, d)] = lint(SHARED_TILE + "    ld.shared.f32 %f1, [%r4+-4];\n")
    assert d.severity is Severity.ERROR
    assert d.message.endswith("`%tid.x` = 0 reaches byte -4")
    assert (d.details["first_bad_byte"], d.details["last_byte"]) == (-4, -1)


def test_vector_width_counts():
    # 16-byte loads at tile + 4*tid: thread 253 touches bytes 1012..1027
    [(_, d)] = lint(SHARED_TILE + "    ld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [%r4];\n")
    assert d.message.endswith("`%tid.x` = 253 reaches byte 1024")


# `128 + 0 * %ctaid.x`: the value domains see 128, but the branch reads the block index,
# so no run of one block settles the access (`replay.py`): the analysis's own verdict
BY_BLOCK_128 = ("    mov.u32 %r11, %ctaid.x;\n    and.b32 %r12, %r11, 0;\n"
                "    add.s32 %r13, %r12, 128;\n")


def test_access_under_a_divergent_branch_is_only_possible():
    found = lint(SHARED_TILE + BY_BLOCK_128 + "    setp.lt.u32 %p1, %r1, %r13;\n"
                               "    @%p1 bra $done;\n"
                               "    ld.shared.f32 %f1, [%r4+4];\n"
                               "$done:\n")
    [(_, d)] = found
    assert (d.severity, d.details["definite"]) == (Severity.WARNING, False)
    assert d.message.endswith("`%tid.x` = 255 would reach byte 1024")


def test_a_run_of_one_block_settles_it_without_a_grid():
    """The block shape alone decides the address and the branch: one block's run shows
    what every block does (no grid needed)."""
    found = lint(SHARED_TILE + "    setp.lt.u32 %p1, %r1, 128;\n"
                               "    @%p1 bra $done;\n"
                               "    ld.shared.f32 %f1, [%r4+4];\n"
                               "$done:\n")
    [(_, d)] = found
    assert (d.severity, d.details["definite"]) == (Severity.ERROR, True)
    assert "in an emulated run of this launch" in d.message
    assert lint(SHARED_TILE + "    setp.lt.u32 %p1, %r1, 128;\n"
                              "    @%p1 bra $done;\n"
                              "    ld.shared.f32 %f1, [%r4+-508];\n"
                              "$done:\n") == []  # tiles[tid - 127] for tid >= 128


def test_guard_on_the_index_narrows_an_address_computed_before_it():
    # nvcc computes &tile[tid] before `if (tid < 256)`: the guard narrows %r1 = %tid.x,
    # so only threads 0..255 use %r4 (path-refined thread bounds)
    body = SHARED_TILE + ("    setp.ge.u32 %p1, %r1, 256;\n"
                          "    @%p1 bra $done;\n"
                          "    ld.shared.f32 %f1, [%r4];\n"
                          "$done:\n")
    assert lint(body, launch="block=512") == []
    assert [d.details["first_bad_byte"] for _, d in
            lint(body.replace("256;", "257;"), launch="block=512")] == [1024]


def test_a_narrowed_thread_index_is_never_definite():
    # only threads 128..255 run the load (192..255 overflow): the index was narrowed on
    # the way, so which threads really run it is not known and the finding is possible
    found = lint(SHARED_TILE + BY_BLOCK_128 + "    setp.lt.u32 %p1, %r1, %r13;\n"
                               "    @%p1 bra $done;\n"
                               "    ld.shared.f32 %f1, [%r4+256];\n"
                               "$done:\n", launch="block=256")
    [(_, d)] = found
    assert (d.severity, d.details["definite"]) == (Severity.WARNING, False)
    assert d.message.endswith("`%tid.x` = 192 would reach byte 1024")


def test_every_thread_that_runs_it_overflows():
    found = lint(SHARED_TILE + "    setp.lt.u32 %p1, %r1, 128;\n"
                               "    @%p1 bra $done;\n"
                               "    ld.shared.f32 %f1, [%r4+512];\n"
                               "$done:\n", launch="block=256")
    [(_, d)] = found
    assert (d.severity, d.details["definite"]) == (Severity.ERROR, True)
    assert d.message == "out-of-bounds load: bytes 1024..1535 of `tile` (1024 bytes)"


def test_every_offset_outside_is_definite_without_a_launch():
    [(_, d)] = lint(SHARED_TILE + "    ld.shared.f32 %f1, [tile+1024];\n", launch=None)
    assert (d.severity, d.message) == (
        Severity.ERROR, "out-of-bounds load: bytes 1024..1027 of `tile` (1024 bytes)")


def test_global_buffer_without_a_size_is_not_checked():
    assert lint("    ld.global.f32 %f1, [%rd2+4096];\n") == []


def test_extern_shared_without_a_size_is_not_checked():
    body = ("    mov.u32 %r1, %tid.x;\n"
            "    shl.b32 %r2, %r1, 2;\n"
            "    mov.u32 %r3, dyn;\n"
            "    add.s32 %r4, %r3, %r2;\n"
            "    ld.shared.f32 %f1, [%r4];\n")
    text = PROLOGUE.replace(".visible", ".extern .shared .align 4 .b8 dyn[];\n\n.visible") \
        + body + "    ret;\n}\n"
    options = LintOptions(launch=LaunchConfig.parse("block=256"), enable=frozenset({RULE}))
    assert [d for d in lint_text(text, "t.ptx", options).diagnostics if d.rule == RULE] == []


def test_call_sequences_use_their_own_param_declarations():
    # device_call.ptx redeclares `param0`/`retval0` per call with different sizes
    report = lint_sample(ROOT / "ptx_samples" / "cuda" / "device_call.ptx")
    assert [d for d in report.diagnostics if d.rule == RULE] == []


# ---- the docstring examples --------------------------------------------------------------------
def _doc_block(section: str) -> str:
    body = OutOfBounds.doc().split(section, 1)[1].split("\n## ", 1)[0]
    return re.search(r"```ptx\n(.+?)```", body, re.S).group(1)


def test_docstring_example_is_reported():
    [(line, d)] = lint(_doc_block("## Example"))
    assert line == 6 and d.severity is Severity.ERROR
    assert d.message.endswith("`%tid.x` = 255 reaches byte 1024")


def test_docstring_fix_is_clean():
    assert lint(_doc_block("## Use instead")) == []
