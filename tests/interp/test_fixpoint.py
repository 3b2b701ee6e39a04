"""The fixpoint on small kernels: loop bounds, refinement, affine forms, divergence."""
from __future__ import annotations

from pathlib import Path

import pytest

from ptxlint.analysis import analyze
from ptxlint.ir.build import parse_module
from ptxlint.launch import LaunchConfig

HEAD = ".version 9.0\n.target sm_90\n.address_size 64\n"


def run(body: str, params: str = "", launch: LaunchConfig | None = None, regs: str = ""):
    src = (HEAD + f".visible .entry k({params})\n{{\n"
           "\t.reg .pred %p<8>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<32>;\n"
           + regs + body + "\n}\n")
    result = parse_module(src, "k.ptx")
    assert result.diagnostics == [], [d.message for d in result.diagnostics]
    fn = result.module.functions[0]
    analysis = analyze(fn, launch)
    assert analysis.complete
    return analysis


def state_at(analysis, marker_opcode_index: int):
    """The state before the n-th instruction of the function."""
    insn = analysis.function.instructions[marker_opcode_index]
    return analysis.facts.state_before(insn)


def value_before(analysis, text: str, reg: str):
    """The value of `reg` before the first instruction whose text contains `text`."""
    for insn in analysis.function.instructions:
        if text in str(insn):
            return analysis.facts.state_before(insn)[reg]
    raise AssertionError(f"no instruction containing {text!r}")


def test_loop_bound_kept_by_threshold_widening():
    # for (i = tid.x; i < 1000; i += 256) use(i)
    body = """
\tmov.u32 %r1, %tid.x;
$L_head:
\tsetp.ge.s32 %p1, %r1, 1000;
\t@%p1 bra $L_done;
\tadd.s32 %r2, %r1, 0;
\tadd.s32 %r1, %r1, 256;
\tbra.uni $L_head;
$L_done:
\tret;"""
    a = run(body, launch=LaunchConfig(block=(256, 1, 1)))
    inside = value_before(a, "add.s32 %r2", "%r1")
    assert inside.si.lo == 0 and inside.si.hi is not None and inside.si.hi <= 999
    after = value_before(a, "ret", "%r1")
    assert after.si.lo is not None and after.si.lo >= 1000
    assert after.si.hi is not None and after.si.hi <= 1000 + 255


def test_counter_incremented_before_its_test_keeps_its_bound():
    # do { i = j; use(i); j = i + 128; } while (i < 128): nvcc's shape of a block-strided
    # loop (CUB's histogram). The back edge bounds i, and through `j = i + 128` also j,
    # so j stays below 256 instead of growing 128 a round until widening gives up.
    body = """
\tmov.u32 %r1, %tid.x;
$L_head:
\tmov.u32 %r2, %r1;
\tshl.b32 %r3, %r2, 2;
\tadd.s32 %r1, %r2, 128;
\tsetp.lt.s32 %p1, %r2, 128;
\t@%p1 bra $L_head;
\tret;"""
    a = run(body, launch=LaunchConfig(block=(128, 1, 1)))
    j = value_before(a, "mov.u32 %r2", "%r1")
    assert (j.si.lo, j.si.hi) == (0, 255)
    i = value_before(a, "shl.b32", "%r2")
    assert (i.si.lo, i.si.hi) == (0, 255)
    scaled = value_before(a, "add.s32 %r1", "%r3")
    assert (scaled.si.lo, scaled.si.hi, scaled.si.stride) == (0, 1020, 4)
    # the loop settles in three rounds of its 5-instruction body, not seven
    assert a.facts.work <= 2 + 3 * 5 + 1


def test_bound_compared_with_a_range_jumps_to_its_top_at_once():
    # for (k = 0; k < n; k++) with n in 1..4: k's upper bound jumps to 3 (from n's top)
    # in one widening, not to 2, then 3, a round at a time (n's bottom bounds k from
    # below, never from above)
    body = """
\tld.param.u32 %r1, [n];
\tmin.u32 %r2, %r1, 4;
\tmax.u32 %r2, %r2, 1;
\tmov.u32 %r3, 0;
$L_head:
\tshl.b32 %r4, %r3, 2;
\tadd.s32 %r5, %r4, 1;
\tadd.s32 %r3, %r3, 1;
\tsetp.lt.u32 %p1, %r3, %r2;
\t@%p1 bra $L_head;
\tret;"""
    a = run(body, params=".param .u32 n", launch=LaunchConfig(block=(32, 1, 1)))
    k = value_before(a, "shl.b32", "%r3")
    assert (k.si.lo, k.si.hi) == (0, 3)
    after = value_before(a, "ret", "%r3")
    assert (after.si.lo, after.si.hi) == (1, 4)
    # two rounds of the 5-instruction body: the first back edge already meets the
    # threshold (a join, then a widening, would take three)
    assert a.facts.work == 4 + 2 * 5 + 1


def test_short_loop_without_threshold_stays_exact_before_widening():
    # a flag set in the loop is compared by no exit: the back edges before widening
    # join it ({0, 1}, not a jump to the width's limit), and the loop still settles in
    # two rounds, the counter's bound met at the first back edge
    body = """
\tmov.u32 %r1, 0;
\tmov.u32 %r2, 0;
$L_head:
\tadd.s32 %r3, %r1, 0;
\tmov.u32 %r1, 1;
\tadd.s32 %r2, %r2, 1;
\tsetp.lt.u32 %p1, %r2, 1000;
\t@%p1 bra $L_head;
\tret;"""
    a = run(body, launch=LaunchConfig(block=(32, 1, 1)))
    flag = value_before(a, "add.s32 %r3", "%r1")
    assert (flag.si.lo, flag.si.hi) == (0, 1)
    counter = value_before(a, "add.s32 %r3", "%r2")
    assert (counter.si.lo, counter.si.hi) == (0, 999)
    assert a.facts.work == 2 + 2 * 5 + 1


def test_predicate_refines_both_edges():
    body = """
\tld.param.u32 %r1, [n];
\tsetp.lt.u32 %p1, %r1, 64;
\t@%p1 bra $L_small;
\tadd.u32 %r2, %r1, 0;
\tret;
$L_small:
\tadd.u32 %r3, %r1, 0;
\tret;"""
    a = run(body, params=".param .u32 n")
    big = value_before(a, "add.u32 %r2", "%r1")
    small = value_before(a, "add.u32 %r3", "%r1")
    assert small.si.hi == 63 and small.si.lo == 0
    assert big.si.lo == 64


def test_affine_through_mad_mulwide_shl():
    body = """
\tld.param.u64 %rd1, [buf];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, %tid.x;
\tmov.u32 %r2, %ctaid.x;
\tmov.u32 %r3, %ntid.x;
\tmad.lo.s32 %r4, %r2, %r3, %r1;
\tshl.b32 %r5, %r4, 2;
\tmul.wide.s32 %rd3, %r4, 4;
\tadd.s64 %rd4, %rd2, %rd3;
\tld.global.f32 %f1, [%rd4];
\tret;"""
    a = run(body, params=".param .u64 buf", regs="\t.reg .f32 %f<4>;\n",
            launch=LaunchConfig(block=(128, 1, 1), grid=(4, 1, 1)))
    r5 = value_before(a, "mul.wide", "%r5")
    assert r5.aff.stride_of("tid.x") == 4
    [access] = [x for x in a.facts.accesses if x.space == "global"]
    assert access.address.region is not None and access.address.region.obj == "buf"
    assert access.address.aff.stride_of("tid.x") == 4
    assert access.address.si.lo == 0 and access.address.si.hi == 4 * 511



# ---- pointers carried round a loop: `q = q + c` keeps q's lane stride --------------------
_ROW_LOOP = """
\tmov.u32 %r1, %tid.x;
\tmov.u32 %r2, rows;
\tshl.b32 %r3, %r1, 6;
\tadd.s32 %r4, %r2, %r3;
\tld.param.u32 %r5, [n];
\tmov.u32 %r6, 0;
$L_head:
\tld.shared.f32 %f1, [%r4];
{step}
\tadd.s32 %r6, %r6, 1;
\tsetp.lt.u32 %p1, %r6, %r5;
\t@%p1 bra $L_head;
\tret;"""
_ROWS = "\t.reg .f32 %f<4>;\n\t.shared .align 4 .b8 rows[4096];\n"


def _row_access(step: str):
    a = run(_ROW_LOOP.format(step=step), params=".param .u32 n", regs=_ROWS,
            launch=LaunchConfig(block=(32, 1, 1)))
    [access] = [x for x in a.facts.accesses if x.space == "shared"]
    return access.address


def test_pointer_carried_round_a_loop_keeps_its_lane_stride():
    # q = rows + 64*tid.x; for (...; i < n; ...) { use(*q); q += 4 }: nvcc's strength
    # reduction of rows[16*tid.x + i]. The trip count is unknown, so the widening sends
    # q's uniform part to infinity; the lanes keep their 64-byte stride (16-way conflict)
    address = _row_access("\tadd.s32 %r4, %r4, 4;")
    assert address.aff.stride_of("tid.x") == 64
    assert address.aff.is_modular  # known modulo 2^32 only: the base may wrap
    assert address.region is not None and address.region.obj == "rows"
    backwards = _row_access("\tadd.s32 %r4, %r4, -4;")
    assert backwards.aff.stride_of("tid.x") == 64


def test_pointer_stepped_by_a_varying_amount_loses_its_form():
    # q += tid.x: each trip adds another lane stride, no form covers them all
    assert _row_access("\tadd.s32 %r4, %r4, %r1;").aff.is_top
    # q = rows + 32*tid.x + 4*i on the back edge, rows + 64*tid.x on entry: the lane
    # coefficients disagree at the loop head
    other = "\tshl.b32 %r7, %r1, 5;\n\tshl.b32 %r8, %r6, 2;\n\tadd.s32 %r9, %r2, %r7;\n" \
        "\tadd.s32 %r4, %r9, %r8;"
    assert _row_access(other).aff.is_top


def test_index_carried_round_a_loop_is_not_extended_past_a_wrap():
    # i = 256*tid.x + k (k unbounded): i is known modulo 2^32 only, so its zero extension
    # may put the lanes on both sides of a wrap, 2^32 apart: no lane form for the address
    body = """
\tld.param.u64 %rd1, [buf];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, %tid.x;
\tshl.b32 %r4, %r1, 8;
\tld.param.u32 %r5, [n];
\tmov.u32 %r6, 0;
$L_head:
\tmul.wide.u32 %rd3, %r4, 4;
\tadd.s64 %rd4, %rd2, %rd3;
\tld.global.f32 %f1, [%rd4];
\tadd.s32 %r4, %r4, 1;
\tadd.s32 %r6, %r6, 1;
\tsetp.lt.u32 %p1, %r6, %r5;
\t@%p1 bra $L_head;
\tret;"""
    a = run(body, params=".param .u64 buf, .param .u32 n", regs="\t.reg .f32 %f<4>;\n",
            launch=LaunchConfig(block=(32, 1, 1)))
    index = value_before(a, "mul.wide", "%r4")
    assert index.aff.stride_of("tid.x") == 256 and index.aff.is_modular
    [access] = [x for x in a.facts.accesses if x.space == "global"]
    assert access.address.aff.is_top


def test_global_row_pointer_carried_round_a_loop():
    # y = in + 4*1024*row; for (...) { use(*y); y += 4 }: a naive row-per-thread kernel
    body = """
\tld.param.u64 %rd1, [buf];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd3, %r1, 4096;
\tadd.s64 %rd4, %rd2, %rd3;
\tld.param.u32 %r5, [n];
\tmov.u32 %r6, 0;
$L_head:
\tld.global.f32 %f1, [%rd4];
\tadd.s64 %rd4, %rd4, 4;
\tadd.s32 %r6, %r6, 1;
\tsetp.lt.u32 %p1, %r6, %r5;
\t@%p1 bra $L_head;
\tret;"""
    a = run(body, params=".param .u64 buf, .param .u32 n", regs="\t.reg .f32 %f<4>;\n",
            launch=LaunchConfig(block=(128, 1, 1)))
    [access] = [x for x in a.facts.accesses if x.space == "global"]
    assert access.address.region is not None and access.address.region.obj == "buf"
    assert access.address.aff.stride_of("tid.x") == 4096


def test_low_bits_of_a_carried_pointer_keep_its_lane_stride():
    # cvt.u32.u64 of q = 4096*tid.x + (unbounded): the low 32 bits of b + 4096*tid.x are
    # b + 4096*tid.x modulo 2^32, whatever b is
    body = """
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd4, %r1, 4096;
\tld.param.u32 %r5, [n];
\tmov.u32 %r6, 0;
$L_head:
\tcvt.u32.u64 %r7, %rd4;
\tcvt.s32.u32 %r9, %r7;
\tadd.s64 %rd4, %rd4, 4;
\tadd.s32 %r6, %r6, 1;
\tsetp.lt.u32 %p1, %r6, %r5;
\t@%p1 bra $L_head;
\tmov.u32 %r8, %r7;
\tret;"""
    a = run(body, params=".param .u32 n", launch=LaunchConfig(block=(128, 1, 1)))
    low = value_before(a, "mov.u32 %r8", "%r7")
    assert low.aff.stride_of("tid.x") == 4096 and low.aff.is_modular
    same_bits = value_before(a, "mov.u32 %r8", "%r9")  # a cvt that keeps the width
    assert same_bits.aff.stride_of("tid.x") == 4096

def test_uniformity_lost_under_divergent_branch_and_regained():
    body = """
\tmov.u32 %r1, %tid.x;
\tsetp.lt.u32 %p1, %r1, 16;
\tmov.u32 %r2, 0;
\t@%p1 bra $L_then;
\tmov.u32 %r2, 1;
$L_then:
\tadd.u32 %r3, %r2, 0;
\tmov.u32 %r2, 7;
\tadd.u32 %r4, %r2, 0;
\tret;"""
    a = run(body, launch=LaunchConfig(block=(32, 1, 1)))
    joined = value_before(a, "add.u32 %r3", "%r2")
    assert not joined.is_uniform and joined.si.lo == 0 and joined.si.hi == 1
    again = value_before(a, "add.u32 %r4", "%r2")
    assert again.is_uniform and again.singleton() == 7


def test_uniform_branch_keeps_uniformity():
    body = """
\tmov.u32 %r1, %ctaid.x;
\tsetp.lt.u32 %p1, %r1, 16;
\tmov.u32 %r2, 0;
\t@%p1 bra $L_then;
\tmov.u32 %r2, 1;
$L_then:
\tadd.u32 %r3, %r2, 0;
\tret;"""
    a = run(body, launch=LaunchConfig(block=(32, 1, 1), grid=(64, 1, 1)))
    joined = value_before(a, "add.u32 %r3", "%r2")
    assert joined.is_uniform


def test_value_live_out_of_divergent_loop_is_varying():
    # lanes leave the loop at different iterations: the count differs per lane
    body = """
\tmov.u32 %r1, %tid.x;
\tmov.u32 %r2, 0;
$L_head:
\tsetp.ge.u32 %p1, %r2, %r1;
\t@%p1 bra $L_done;
\tadd.u32 %r2, %r2, 1;
\tbra.uni $L_head;
$L_done:
\tadd.u32 %r3, %r2, 0;
\tret;"""
    a = run(body, launch=LaunchConfig(block=(64, 1, 1)))
    out = value_before(a, "add.u32 %r3", "%r2")
    assert not out.is_uniform


def test_guarded_instruction_joins_and_varies():
    body = """
\tmov.u32 %r1, %tid.x;
\tsetp.eq.u32 %p1, %r1, 0;
\tmov.u32 %r2, 5;
\t@%p1 mov.u32 %r2, 9;
\tadd.u32 %r3, %r2, 0;
\tret;"""
    a = run(body, launch=LaunchConfig(block=(32, 1, 1)))
    v = value_before(a, "add.u32 %r3", "%r2")
    assert v.si.contains(5) and v.si.contains(9) and not v.is_uniform


def test_every_loop_terminates():
    # an unbounded counter: widening must still reach a fixpoint
    body = """
\tmov.u32 %r1, 0;
$L_head:
\tadd.u32 %r1, %r1, 3;
\tld.param.u32 %r2, [n];
\tsetp.ne.u32 %p1, %r1, %r2;
\t@%p1 bra $L_head;
\tret;"""
    a = run(body, params=".param .u32 n")
    assert a.complete


def test_call_is_analysed_with_arguments():
    src = HEAD + """
.func (.param .b32 ret) twice(.param .b32 x)
{
\t.reg .b32 %r<3>;
\tld.param.b32 %r1, [x];
\tshl.b32 %r2, %r1, 1;
\tst.param.b32 [ret], %r2;
\tret;
}
.visible .entry k()
{
\t.reg .b32 %r<4>;
\tmov.u32 %r1, %tid.x;
\t{
\t.param .b32 a;
\tst.param.b32 [a], %r1;
\t.param .b32 r;
\tcall.uni (r), twice, (a);
\tld.param.b32 %r2, [r];
\t}
\tadd.u32 %r3, %r2, 0;
\tret;
}
"""
    module = parse_module(src, "k.ptx").module
    fn = module.function("k")
    a = analyze(fn, LaunchConfig(block=(64, 1, 1)))
    v = value_before(a, "add.u32 %r3", "%r2")
    assert v.aff.stride_of("tid.x") == 2 and v.si.hi == 126


def test_or_pred_guard_refines_both_comparisons():
    # if (x < 20 && y < 3): nvcc branches around the body on `or.pred` of the negations
    body = """
\tmov.u32 %r1, %tid.x;
\tmov.u32 %r2, %tid.y;
\tsetp.ge.u32 %p1, %r1, 20;
\tsetp.ge.u32 %p2, %r2, 3;
\tor.pred %p3, %p1, %p2;
\t@%p3 bra $L_out;
\tadd.u32 %r3, %r1, %r2;
$L_out:
\tret;"""
    a = run(body, launch=LaunchConfig(block=(32, 8, 1)))
    assert value_before(a, "add.u32 %r3", "%r1").si.hi == 19
    assert value_before(a, "add.u32 %r3", "%r2").si.hi == 2


def _once_joined_blocks(path: Path):
    """(in-state, the join of what its predecessors' edges bring) of every block whose
    predecessors were each interpreted once: the narrowing pass leaves those alone."""
    from ptxlint.lint import analysis_params
    module = parse_module(path.read_text(), str(path)).module
    for fn in module.entries:
        for params in (None, analysis_params(60.0)):
            facts = (analyze(fn) if params is None else analyze(fn, params=params)).facts
            interp = facts._interp  # noqa: SLF001 - the fixpoint's own bookkeeping
            for b, block in enumerate(facts.cfg.blocks):
                outs = [p for p in block.preds if interp.out_states[p] is not None]
                if b == facts.cfg.entry or facts.in_states[b] is None or \
                        any(interp.visits[p] != 1 for p in outs):
                    continue
                incoming = None
                for p in outs:
                    for succ, st in interp.edges(p, interp.out_states[p]):
                        if succ == b:
                            incoming = st if incoming is None else incoming.join(st)
                yield facts.in_states[b], incoming


SAMPLES = Path(__file__).resolve().parents[2] / "ptx_samples"


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("**/*.ptx"))[::4],
                         ids=lambda p: p.relative_to(SAMPLES).as_posix())
def test_blocks_the_narrowing_passes_over_hold_the_join_of_their_edges(path: Path):
    pairs = list(_once_joined_blocks(path))
    assert pairs
    for in_state, incoming in pairs:
        assert incoming is None or in_state == incoming
