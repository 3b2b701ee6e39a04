"""Transfer functions of memory, synchronisation and warp-collective instructions, run
straight-line (no worklist): parameter cells, address spaces, uniformity of loads."""
from __future__ import annotations

import pytest

from ptxlint.domains.affine import Affine
from ptxlint.domains.align import Congruence
from ptxlint.domains.space import Region
from ptxlint.domains.strided import StridedInterval as SI
from ptxlint.domains.value import Value
from ptxlint.interp.context import Ctx
from ptxlint.interp.transfer.table import apply, transfer_for
from ptxlint.ir.build import parse_module
from ptxlint.ir.instructions.control import CallInst
from ptxlint.ir.registry import REGISTRY, all_opcodes
from ptxlint.launch import LaunchConfig, initial_state

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
REGS = ("\t.reg .pred %p<8>;\n\t.reg .b16 %rs<8>;\n\t.reg .b32 %r<16>;\n"
        "\t.reg .b64 %rd<16>;\n\t.reg .f32 %f<8>;\n")
VARYING = Value(SI.range(0, 124, 4), Affine(SI.const(0), (("tid.x", SI.const(4)),)),
                Congruence(2, 0))


def run(body: str, params: str = ".param .u64 buf", decls: str = "", kind: str = "entry",
        launch: LaunchConfig | None = None, preset: dict[str, Value] | None = None):
    """Interpret `body` in order; `preset` registers are set after the instruction
    marked `// preset` (or before the first one), to give addresses of a chosen shape."""
    src = HEAD + decls + f".visible .{kind} k({params})\n{{\n{REGS}{body}\n}}\n"
    result = parse_module(src)
    assert result.diagnostics == [], [d.message for d in result.diagnostics]
    module = result.module
    fn = module.functions[-1]
    launch = launch or LaunchConfig(block=(32, 1, 1))
    ctx = Ctx(fn, module, launch, launch.thread_bounds(fn))
    s = initial_state(fn, module, launch)
    for key, v in (preset or {}).items():
        s.assign(key, v)
    for insn in fn.instructions:
        apply(insn, s, ctx)
    assert ctx.notes == {}, [m for _, m in ctx.notes.values()]
    return s


# ---- parameters --------------------------------------------------------------------------
def test_ld_param_of_pointer_and_cvta_to_global_keep_the_buffer():
    s = run("\tld.param.u64 %rd1, [buf];\n\tcvta.to.global.u64 %rd2, %rd1;")
    assert s["%rd1"].region == Region("global", "buf", generic=True)
    assert s["%rd2"].region == Region("global", "buf") and s["%rd2"].singleton() == 0
    assert s["%rd2"].is_uniform


def test_ld_param_values_and_aggregates():
    s = run("\tld.param.u32 %r1, [n];\n\tld.param.v2.u32 {%r2, %r3}, [s+8];\n"
            "\tld.param.s32 %r4, [d];",
            params=".param .u32 n, .param .align 8 .b8 s[16], .param .s32 d",
            launch=LaunchConfig(params={"n": 1024, "d": -5}))
    assert s["%r1"].singleton() == 1024
    assert s["%r2"].is_uniform and s["%r3"].is_uniform and s["%r2"].singleton() is None
    assert s["%r4"].singleton() == -5


def test_narrow_read_of_a_parameter_keeps_the_low_bits():
    s = run("\tld.param.u8 %rs1, [n];\n\tld.param.s8 %rs2, [n];",
            params=".param .u32 n", launch=LaunchConfig(params={"n": 0x1C8}))
    assert s["%rs1"].singleton() == 0xC8 and s["%rs2"].singleton() == 0xC8 - 256


def test_st_param_ld_param_round_trip():
    body = """\t{
\t.param .b32 param0;
\t.param .align 8 .b8 param1[16];
\tst.param.b32 [param0], %r1;
\tst.param.v2.b32 [param1+0], {%r2, %r1};
\tst.param.b64 [param1+8], 77;
\tld.param.b32 %r3, [param0];
\tld.param.b32 %r4, [param1+4];
\tld.param.b64 %rd5, [param1+8];
\tst.param.b32 [param1+12], 5;
\tld.param.b64 %rd6, [param1+8];
\t}"""
    s = run(body, preset={"%r1": VARYING, "%r2": Value.const(3)})
    assert s["%r3"] == VARYING and s["%r4"] == VARYING
    assert s["%rd5"].singleton() == 77
    assert s["%rd6"].singleton() is None  # the 8-byte cell was half overwritten
    assert s.params[("param1", 0)].singleton() == 3


def test_device_function_parameters_are_per_thread():
    s = run("\tld.param.u32 %r1, [a];", params=".param .u32 a", kind="func")
    assert not s["%r1"].is_uniform


# ---- loads elsewhere --------------------------------------------------------------------
def test_ld_global_uniform_iff_address_uniform():
    s = run("\tld.param.u64 %rd1, [buf];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
            "\tld.global.f32 %f1, [%rd2];\n\tld.global.v2.f32 {%f2, %f3}, [%rd2+8];\n"
            "\tld.global.u8 %rs1, [%rd2];\n\tld.global.f32 %f4, [%rd3];",
            preset={"%rd3": VARYING})
    assert s["%f1"].is_uniform and s["%f2"].is_uniform and s["%f3"].is_uniform
    assert s["%rs1"].is_uniform and s["%rs1"].si == SI.range(0, 255)
    assert not s["%f4"].is_uniform


def test_ld_shared_and_const_with_uniform_address_are_uniform():
    decls = ".shared .align 4 .b8 tile[1024];\n.const .align 4 .b32 table[8];\n"
    s = run("\tld.shared.u32 %r1, [tile+8];\n\tld.const.u32 %r2, [table];\n"
            "\tld.shared.u32 %r3, [%r5];", decls=decls, preset={"%r5": VARYING})
    assert s["%r1"].is_uniform and s["%r2"].is_uniform and not s["%r3"].is_uniform


def test_ld_local_is_never_uniform():
    s = run("\t.local .align 4 .b8 buf_l[64];\n\tld.local.u32 %r1, [buf_l];\n"
            "\tld.local.u32 %r2, [%rd1];", preset={"%rd1": Value.const(16)})
    assert not s["%r1"].is_uniform and not s["%r2"].is_uniform


def test_generic_load_may_read_local_memory_only_after_cvta_local():
    load = "\tld.u32 %r1, [%rd1];"
    assert run(load, preset={"%rd1": Value.uniform_top()})["%r1"].is_uniform
    with_local = "\t.local .align 4 .b8 st_[16];\n\tcvta.local.u64 %rd2, st_;\n" + load
    assert not run(with_local, preset={"%rd1": Value.uniform_top()})["%r1"].is_uniform


# ---- address spaces -----------------------------------------------------------------------
def test_cvta_shared_gives_generic_address_of_the_object():
    decls = ".shared .align 16 .b8 tile[1024];\n"
    s = run("\tcvta.shared.u64 %rd1, tile;\n\tcvta.to.shared.u64 %rd2, %rd1;\n"
            "\tisspacep.shared %p1, %rd1;\n\tisspacep.global %p2, %rd1;\n"
            "\tisspacep.shared %p3, %rd2;\n\tisspacep.shared::cluster %p4, %rd1;",
            decls=decls)
    assert s["%rd1"].region == Region("shared", "tile", generic=True)
    assert s["%rd2"].region == Region("shared", "tile")
    assert [s[p].singleton() for p in ("%p1", "%p2", "%p4")] == [1, 0, 1]
    assert s["%p3"].si == SI.range(0, 1) and s["%p3"].is_uniform  # a window address: maybe


def test_zero_extension_of_a_shared_address_that_may_be_below_the_object():
    """`tile + 4*tid - 4` in 32 bits wraps for thread 0 when `tile` sits at shared
    address 0 (the first variable does): zero-extended it is 2^32 higher, so the 64-bit
    offset may be 2^32 - 4; an offset that cannot be negative extends unchanged."""
    decls = ".shared .align 16 .b8 tile[1024];\n"
    s = run("\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, tile;\n\tshl.b32 %r3, %r1, 2;\n"
            "\tadd.s32 %r4, %r2, %r3;\n\tadd.s32 %r5, %r4, -4;\n"
            "\tcvt.u64.u32 %rd1, %r5;\n\tcvt.u64.u32 %rd2, %r4;", decls=decls)
    low, wrapped = s["%rd1"], s["%rd1"].si
    assert low.region == Region("shared", "tile")
    assert wrapped.contains(-4 + (1 << 32)) and wrapped.contains(0) and not low.is_uniform
    assert s["%rd2"] == s["%r4"]


def test_cvta_of_a_plain_number():
    s = run("\tcvta.to.global.u64 %rd2, %rd1;\n\tcvta.shared.u64 %rd3, %rd1;",
            preset={"%rd1": VARYING})
    assert s["%rd2"].region == Region("global") and s["%rd2"].si == VARYING.si
    assert s["%rd2"].aff == VARYING.aff
    assert s["%rd3"].region == Region("shared", generic=True) and s["%rd3"].si.is_top
    assert s["%rd3"].aff.stride_of("tid.x") == 4 and s["%rd3"].cong == Congruence(2, 0)


def test_isspacep_of_an_unknown_address_is_maybe():
    s = run("\tisspacep.global %p1, %rd1;", preset={"%rd1": VARYING})
    assert s["%p1"].si == SI.range(0, 1) and not s["%p1"].is_uniform


# ---- results that are varying or uniform ------------------------------------------------------
def test_atomics_matrices_and_waits_are_varying():
    s = run("\tld.param.u64 %rd1, [buf];\n\tatom.global.add.u32 %r1, [%rd1], 1;\n"
            "\tldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r2}, [%r9];\n"
            "\tmbarrier.try_wait.shared.b64 %p1, [%r9], %rd2;",
            preset={"%r9": Value.const(0)})
    assert not s["%r1"].is_uniform and not s["%r2"].is_uniform and not s["%p1"].is_uniform


def test_warp_votes_and_reductions():
    body = """\tsetp.ne.u32 %p1, %r1, 0;
\tvote.sync.all.pred %p2, %p1, -1;
\tvote.sync.ballot.b32 %r2, %p1, -1;
\tvote.sync.any.pred %p3, %p1, %r8;
\tvote.sync.uni.pred %p4, !%p5, -1;
\tredux.sync.add.u32 %r3, %r1, -1;
\tmatch.any.sync.b32 %r4, %r1, -1;
\tmatch.all.sync.b32 %r5|%p6, %r7, -1;
\tactivemask.b32 %r6;
\telect.sync %r10|%p7, -1;"""
    s = run(body, preset={"%r1": VARYING, "%r8": VARYING, "%p5": Value.const(1),
                          "%r7": Value.const(9)})
    assert s["%p2"].is_uniform and s["%r2"].is_uniform and s["%r3"].is_uniform
    assert not s["%p3"].is_uniform  # its member mask differs between lanes
    assert s["%p4"].singleton() == 1  # all lanes hold the same value
    assert not s["%r4"].is_uniform
    assert s["%r5"].singleton() == 0xFFFFFFFF or s["%r5"].singleton() == -1
    assert s["%p6"].singleton() == 1
    assert s["%r6"].is_uniform and s["%r6"].si == SI.range(1, 2**32 - 1)
    assert s["%r10"].is_uniform and not s["%p7"].is_uniform


def test_bar_red_is_uniform_across_the_block():
    s = run("\tsetp.ne.u32 %p1, %r1, 0;\n\tbar.red.popc.u32 %r2, 0, %p1;\n"
            "\tbar.red.or.pred %p2, 0, %p1;", preset={"%r1": VARYING})
    assert s["%r2"].is_uniform and s["%r2"].si == SI.range(0, 1024)
    assert s["%p2"].is_uniform


def test_texture_queries_and_fetches_follow_their_operands():
    decls = ".global .texref tx;\n"
    s = run("\ttxq.width.b32 %r1, [tx];\n\ttex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tx, {%r5}];\n"
            "\ttex.1d.v4.f32.s32 {%f5, %f6, %f7, _}, [tx, {%r6}];",
            decls=decls, preset={"%r5": Value.const(3), "%r6": VARYING})
    assert s["%r1"].is_uniform and s["%f1"].is_uniform and not s["%f5"].is_uniform


def test_video_partial_write_keeps_the_rest_of_the_register():
    s = run("\tvadd.u32.u32.u32.add %r1.h0, %r2, %r3, %r4;",
            preset={"%r1": VARYING, "%r2": Value.const(1), "%r3": Value.const(2),
                    "%r4": Value.const(0)})
    assert not s["%r1"].is_uniform


def test_control_and_fences_have_no_effect():
    s = run("\tmembar.gl;\n\tfence.acq_rel.gpu;\n\tbar.sync 0;\n\tcp.async.wait_all;\n"
            "\tret;", preset={"%r1": Value.const(4)})
    assert s["%r1"].singleton() == 4


FAMILIES = ("memory", "atomic", "async_copy", "sync", "tensor", "texture", "misc", "control")


@pytest.mark.parametrize("opcode", [op for op in all_opcodes()
                                    if REGISTRY[op].__module__.rsplit(".", 1)[1] in FAMILIES
                                    and REGISTRY[op] is not CallInst])
def test_every_memory_side_instruction_has_a_transfer(opcode):
    assert transfer_for(REGISTRY[opcode]) is not None
