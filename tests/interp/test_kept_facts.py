"""Facts the analysis keeps for issue 20 (warnings only for what is known): the shapes
nvcc gives unrolled loops, strength-reduced table walks, outer counters seen from an
inner loop, a caller's local array seen from a callee, `.ptr .align 1` parameters.

Reveal-style: each test reads the value the analysis settles on at one instruction."""
from __future__ import annotations

from ptxlint.interp.context import ASSUMED_BUFFER_ALIGN
from ptxlint.ir.build import parse_module
from ptxlint.launch import LaunchConfig

from .test_fixpoint import HEAD, run, value_before

TILE = "\t.shared .align 8 .b8 tile[4096];\n"


def test_n_minus_n_mod_4_is_a_multiple_of_4():
    # nvcc's 4-times unrolled loop counts `d - d % 4` iterations (and + sub)
    body = """
\tld.param.u32 %r1, [n];
\tmin.u32 %r2, %r1, 31;
\tand.b32 %r3, %r2, 3;
\tsub.s32 %r4, %r2, %r3;
\tst.param.u32 [n], %r4;
\tret;"""
    a = run(body, params=".param .u32 n")
    v = value_before(a, "st.param", "%r4")
    assert (v.si.lo, v.si.hi, v.si.stride) == (0, 28, 4)
    assert v.cong.is_multiple_of(4)


def test_a_different_register_masked_is_not_the_idiom():
    body = """
\tld.param.u32 %r1, [n];
\tmin.u32 %r2, %r1, 31;
\tmin.u32 %r5, %r1, 30;
\tand.b32 %r3, %r5, 3;
\tsub.s32 %r4, %r2, %r3;
\tst.param.u32 [n], %r4;
\tret;"""
    v = value_before(run(body, params=".param .u32 n"), "st.param", "%r4")
    assert not v.cong.is_multiple_of(4)


UNROLLED = """
\tld.param.u32 %r1, [level];
\tmax.u32 %r1, %r1, 1;
\tmin.u32 %r2, %r1, 32;
\tnot.b32 %r3, %r1;
\tmax.u32 %r4, %r3, -33;
\tmov.u32 %r5, -2;
\tsub.s32 %r6, %r5, %r4;
\tand.b32 %r7, %r2, 3;
\tsub.s32 %r8, %r2, %r7;
\tsetp.lt.u32 %p1, %r6, 3;
\tmov.u32 %r10, 1;
\t@%p1 bra $L_rest;
\tmov.u32 %r9, %r8;
$L_loop:
\tmov.u32 %r11, 256;
\tsub.s32 %r12, %r11, %r10;
\tst.param.u32 [level], %r12;
\tadd.s32 %r10, %r10, 4;
\tadd.s32 %r9, %r9, -4;
\tsetp.ne.s32 %p2, %r9, 0;
\t@%p2 bra $L_loop;
$L_rest:
\tret;"""


def test_an_unrolled_count_down_is_entered_at_4_or_more():
    """`for (step = 1; step <= d; ++step)` unrolled 4 times, `d = min(level, 32)`: the
    count `d - d % 4` goes down by 4 to 0, the loop is entered only when `d - 1 >= 3`
    (nvcc computes `d - 1` as `-2 - max(~level, -33)`). Narrowed by the relations on
    entry, the count starts at 4..32, so the step counter stays in 1..29 instead of
    wrapping round (the lattice launches of 33, 129, ... steps)."""
    a = run(UNROLLED, params=".param .u32 level", launch=LaunchConfig(block=(256, 1, 1)))
    step = value_before(a, "st.param", "%r10")
    assert (step.si.lo, step.si.hi) == (1, 29)
    # level = 0 would enter it with a count of 0 (and wrap): without the bound on it,
    # the analysis must not claim the bound
    unguarded = UNROLLED.replace("\tmax.u32 %r1, %r1, 1;\n", "")
    step = value_before(run(unguarded, params=".param .u32 level"), "st.param", "%r10")
    assert step.si.hi is None or step.si.hi > 29


def test_an_outer_counter_is_not_widened_at_an_inner_loop_head():
    """`level` changes only in the outer loop: at the inner loop's head it is what each
    outer pass enters with (joined), not a widened jump to the width limits."""
    body = """
\tmov.u32 %r1, 257;
$L_outer:
\tmin.u32 %r2, %r1, 32;
\tmov.u32 %r3, 0;
$L_inner:
\tst.param.u32 [out], %r1;
\tadd.s32 %r3, %r3, 224;
\tadd.s32 %r4, %r3, %r2;
\tsetp.le.u32 %p1, %r4, %r1;
\t@%p1 bra $L_inner;
\tsub.s32 %r1, %r1, %r2;
\tsetp.ne.s32 %p2, %r1, 0;
\t@%p2 bra $L_outer;
\tret;"""
    a = run(body, params=".param .u32 out")
    level = value_before(a, "st.param", "%r1")
    assert level.si.lo is not None and level.si.lo >= 1 and level.si.hi == 257


def test_a_pointer_walked_beside_a_counter_is_bounded_by_it():
    """sinf's argument reduction walks a 6-word table with a pointer `+= 4` beside a
    counter `+= 1` tested `!= 6`: the pointer's offset stays in 0..20."""
    body = """
\tmov.u64 %rd1, table;
\tmov.u32 %r1, 0;
$L_loop:
\tld.global.nc.u32 %r2, [%rd1];
\tadd.s64 %rd1, %rd1, 4;
\tadd.s32 %r1, %r1, 1;
\tsetp.ne.s32 %p1, %r1, 6;
\t@%p1 bra $L_loop;
\tret;"""
    table = "\t.global .align 4 .b8 table[24];\n"
    a = run(body, regs=table)
    p = value_before(a, "ld.global", "%rd1")
    assert p.region.obj == "table" and (p.si.lo, p.si.hi) == (0, 20)


CALLER_DEPOT = HEAD + """
.func (.param .b64 r) sum(.param .b64 p)
{
\t.reg .b64 %rd<4>;
\t.reg .f64 %fd<4>;
\tld.param.u64 %rd1, [p];
\tcvta.to.local.u64 %rd2, %rd1;
\tld.local.f64 %fd1, [%rd2+8];
\tst.param.f64 [r], %fd1;
\tret;
}
.visible .entry k(.param .u64 out)
{
\t.local .align 8 .b8 __local_depot1[40];
\t.reg .b64 %SP;
\t.reg .b64 %SPL;
\t.reg .b64 %rd<4>;
\t.reg .f64 %fd<4>;
\tmov.u64 %SPL, __local_depot1;
\tcvta.local.u64 %SP, %SPL;
\tadd.u64 %rd1, %SP, 0;
\t{
\t.param .b64 param0;
\tst.param.b64 [param0], %rd1;
\t.param .b64 retval0;
\tcall.uni (retval0), sum, (param0);
\tld.param.f64 %fd1, [retval0];
\t}
\tret;
}
"""


def test_a_callee_sees_its_callers_local_depot_with_its_alignment():
    from ptxlint.analysis import analyze  # noqa: PLC0415
    from ptxlint.interp.context import Ctx  # noqa: PLC0415

    module = parse_module(CALLER_DEPOT, "k.ptx").module
    callee, kernel = module.functions
    ctx = Ctx(callee, module, entry=kernel)
    assert ctx.variable("__local_depot1").align == 8
    assert ctx.object_align("__local_depot1") == 8
    result = analyze(kernel, module=module)
    [facts] = result.callee_facts
    [acc] = [a for a in facts.accesses if a.space == "local"]
    assert acc.address.region.obj == "__local_depot1"


def test_ptr_align_one_keeps_the_cudamalloc_alignment():
    from ptxlint.interp.context import Ctx  # noqa: PLC0415

    src = HEAD + (".visible .entry k(.param .u64 .ptr .align 1 a, .param .u64 .ptr .align "
                  "512 b)\n{\n\tret;\n}\n")
    module = parse_module(src, "k.ptx").module
    ctx = Ctx(module.functions[0], module)
    assert ctx.object_align("a") == ASSUMED_BUFFER_ALIGN  # promises 1, says nothing more
    assert ctx.object_align("b") == 512
