"""Relations between registers: what a guard on one register says of another computed
from the same index (docs/pricing.md, "Known analysis gaps" A-D, and loop counters).

Reveal-style: each test reads the value the analysis settles on at one instruction (or
the address of a memory access, as the rules see it)."""
from __future__ import annotations

from ptxlint.domains.strided import StridedInterval as SI
from ptxlint.launch import LaunchConfig

from .test_fixpoint import run, value_before

TILE = "\t.shared .align 4 .b8 tile[1024];\n"


def access(analysis, space: str):
    """The one memory access of the kernel in `space`, narrowed by the relations that
    hold there, as the out-of-bounds rule sees it where the address would overflow."""
    [acc] = [a for a in analysis.facts.accesses if a.space == space]
    return analysis.facts.narrowed(acc)


def test_a_guard_on_index_plus_counter_bounds_the_address_computed_before_it():
    # if (tid.x + step <= 255) tile[tid.x + 1], step in 1..32: tid.x <= 254
    body = """
\tld.param.u32 %r1, [step];
\tmax.u32 %r2, %r1, 1;
\tmin.u32 %r2, %r2, 32;
\tmov.u32 %r3, %tid.x;
\tmov.u32 %r4, tile;
\tshl.b32 %r5, %r3, 2;
\tadd.s32 %r6, %r4, %r5;
\tadd.s32 %r7, %r2, %r3;
\tsetp.gt.u32 %p1, %r7, 255;
\t@%p1 bra $L_done;
\tld.shared.u32 %r8, [%r6+4];
$L_done:
\tret;"""
    a = run(body, params=".param .u32 step", regs=TILE, launch=LaunchConfig(block=(256, 1, 1)))
    hoisted = value_before(a, "ld.shared", "%r6")
    assert hoisted.si.hi == 1020  # the fixpoint value: computed before the guard
    address = access(a, "shared").address
    assert address.region.obj == "tile" and address.si.lo == 4 and address.si.hi == 1020


def test_b_selp_between_addresses_is_refined_by_its_predicate():
    # i = 593 + tid.x; i + 1 < 624 ? &s[i + 1] : &s[0]
    body = """
\tmov.u32 %r1, %tid.x;
\tadd.s32 %r2, %r1, 593;
\tmov.u32 %r3, tile;
\tshl.b32 %r4, %r2, 2;
\tadd.s32 %r5, %r3, %r4;
\tadd.s32 %r6, %r2, 1;
\tsetp.lt.u32 %p1, %r6, 624;
\tadd.s32 %r7, %r5, 4;
\tselp.b32 %r8, %r7, %r3, %p1;
\tld.shared.u32 %r9, [%r8];
\tret;"""
    shared = "\t.shared .align 4 .b8 tile[2496];\n"
    a = run(body, regs=shared, launch=LaunchConfig(block=(32, 1, 1)))
    chosen = value_before(a, "ld.shared", "%r8")
    assert chosen.region.obj == "tile" and chosen.si.lo == 0 and chosen.si.hi == 2492
    assert not chosen.is_uniform


def test_c_level_minus_min_of_level_does_not_wrap():
    # for (level = steps; level > 0; level -= min(level, 32)): level stays in 0..steps
    # (steps unknown, at most 1000); [1, 1000] - [1, 32] alone would wrap below 0
    body = """
\tld.param.u32 %r1, [steps];
\tmin.u32 %r1, %r1, 1000;
\tsetp.eq.s32 %p1, %r1, 0;
\t@%p1 bra $L_done;
$L_loop:
\tmin.u32 %r2, %r1, 32;
\tsub.s32 %r1, %r1, %r2;
\tsetp.ne.s32 %p2, %r1, 0;
\t@%p2 bra $L_loop;
$L_done:
\tret;"""
    a = run(body, params=".param .u32 steps", launch=LaunchConfig(block=(32, 1, 1)))
    level = value_before(a, "setp.ne", "%r1")
    assert level.si.lo == 0 and level.si.hi == 968  # 1000 - 32: min(level, 32) is 32 there


def test_c_the_bound_holds_only_until_either_register_is_written():
    body = """
\tld.param.u32 %r1, [n];
\tmin.u32 %r2, %r1, 32;
\tadd.s32 %r1, %r1, 1;
\tsub.s32 %r3, %r1, %r2;
\tret;"""
    a = run(body, params=".param .u32 n")
    # %r1 was rewritten: %r1 + 1 may wrap to 0, so %r1 - %r2 may be any value
    assert value_before(a, "ret", "%r3").si.lo is None or \
        value_before(a, "ret", "%r3").si.size() > 1 << 31


def test_d_guard_mixing_block_and_thread_index_bounds_a_hoisted_address():
    # i = ctaid.x * ntid.x + tid.x; a + 4*i computed before `if (i < n)`
    body = """
\tld.param.u64 %rd1, [a];
\tld.param.u32 %r2, [n];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r3, %ntid.x;
\tmov.u32 %r4, %ctaid.x;
\tmov.u32 %r5, %tid.x;
\tmad.lo.s32 %r1, %r4, %r3, %r5;
\tsetp.ge.s32 %p1, %r1, %r2;
\tmul.wide.s32 %rd3, %r1, 4;
\tadd.s64 %rd4, %rd2, %rd3;
\t@%p1 bra $L_done;
\tbar.sync 0;
\tld.global.u32 %r6, [%rd4];
$L_done:
\tret;"""
    launch = LaunchConfig(block=(256, 1, 1), grid=(4, 1, 1), params={"n": 1000},
                          extents={"a": 4000})
    a = run(body, params=".param .u64 a, .param .u32 n", launch=launch)
    assert value_before(a, "ld.global", "%rd4").si.hi == 4092  # the fixpoint: unguarded
    address = access(a, "global").address
    assert address.region.obj == "a" and address.si.lo == 0 and address.si.hi == 3996


def test_loop_counters_are_bounded_by_each_other():
    # for (step = 1, left = d & ~3; left != 0; step += 4, left -= 4): step <= d - 3
    body = """
\tld.param.u32 %r7, [n];
\tshl.b32 %r7, %r7, 2;
\tmin.u32 %r7, %r7, 32;
\tmov.u32 %r8, %r7;
\tmov.u32 %r9, 1;
\tsetp.eq.s32 %p1, %r8, 0;
\t@%p1 bra $L_done;
$L_head:
\tmov.u32 %r20, 256;
\tsub.s32 %r21, %r20, %r9;
\tadd.s32 %r9, %r9, 4;
\tadd.s32 %r8, %r8, -4;
\tsetp.ne.s32 %p2, %r8, 0;
\t@%p2 bra $L_head;
$L_done:
\tret;"""
    a = run(body, params=".param .u32 n", launch=LaunchConfig(block=(32, 1, 1)))
    step = value_before(a, "sub.s32 %r21", "%r9")
    assert step.si.lo == 1 and step.si.hi == 29
    assert value_before(a, "add.s32 %r9", "%r21").si.within(227, 255)


def test_a_relation_ends_when_its_operand_is_written():
    # %r6 = tile + 4*%r3 holds until %r3 changes: a guard on the new %r3 says nothing
    body = """
\tmov.u32 %r3, %tid.x;
\tmov.u32 %r4, tile;
\tshl.b32 %r5, %r3, 2;
\tadd.s32 %r6, %r4, %r5;
\tadd.s32 %r3, %r3, 7;
\tsetp.gt.u32 %p1, %r3, 100;
\t@%p1 bra $L_done;
\tld.shared.u32 %r8, [%r6];
$L_done:
\tret;"""
    a = run(body, regs=TILE, launch=LaunchConfig(block=(256, 1, 1)))
    # %r3 <= 100 means tid.x <= 93: the address must still allow 4*93, and the analysis
    # may not use the old relation with the new %r3 (that would give 4*100)
    address = access(a, "shared").address
    assert address.si.hi >= 4 * 93


# ---- properties: every thread that runs the access has its address in the access's value --
import hypothesis.strategies as st  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402

from .concrete import compare as concrete_compare  # noqa: E402

OPS = ["lt", "le", "gt", "ge", "eq", "ne", "lo", "ls", "hi", "hs"]


def _u32(x: int) -> int:
    return x & 0xFFFFFFFF


@st.composite
def guarded_programs(draw):
    """i = k*tid.x + c1 (32 bits); address = tile + 4*i before the guard; the guard
    compares g = i + c2 (or the step counter s + tid.x) with n; a load under it, either
    behind a branch or selected by `selp` against the tile's start."""
    k = draw(st.sampled_from([1, 1, 2, 3, -1]))
    c1 = draw(st.integers(-64, 300))
    c2 = draw(st.integers(-64, 64))
    n = draw(st.integers(-8, 520))
    op = draw(st.sampled_from(OPS))
    signed = draw(st.booleans())
    form = draw(st.sampled_from(["branch", "negated", "selp"]))
    block = draw(st.sampled_from([32, 64, 256]))
    return k, c1, c2, n, op, signed, form, block


def _program(k, c1, c2, n, op, signed, form):
    t = "s32" if signed else "u32"
    guard = f"\tsetp.{op}.{t} %p1, %r6, {n};\n"
    head = f"""
\tmov.u32 %r1, %tid.x;
\tmad.lo.s32 %r2, %r1, {k}, {c1};
\tmov.u32 %r3, tile;
\tshl.b32 %r4, %r2, 2;
\tadd.s32 %r5, %r3, %r4;
\tadd.s32 %r6, %r2, {c2};
""" + guard
    if form == "selp":
        return head + "\tselp.b32 %r7, %r5, %r3, %p1;\n\tld.shared.u32 %r8, [%r7];\n\tret;"
    skip = "%p1" if form == "negated" else "!%p1"  # run the load where p1 holds
    return head + f"\t@{skip} bra $L_done;\n\tld.shared.u32 %r8, [%r5];\n$L_done:\n\tret;"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=guarded_programs())
def test_guarded_address_keeps_every_thread_that_runs_the_access(program):
    k, c1, c2, n, op, signed, form, block = program
    big = "\t.shared .align 4 .b8 tile[8192];\n"
    a = run(_program(k, c1, c2, n, op, signed, form), regs=big,
            launch=LaunchConfig(block=(block, 1, 1)))
    accesses = [a.facts.narrowed(x) for x in a.facts.accesses if x.space == "shared"]
    value = accesses[0].address if accesses and accesses[0] is not None else None
    for tid in range(block):
        i = _u32(k * tid + c1)
        address = _u32(4 * i)
        holds = concrete_compare(op, _u32(i + c2), _u32(n), 32, signed and op not in
                                 ("lo", "ls", "hi", "hs"))
        runs = holds != (form == "negated")
        if form == "selp":
            runs, address = True, address if holds else 0
        if not runs:
            continue
        assert value is not None, f"thread {tid} loads, the analysis says no thread does"
        assert not value.si.meet(SI.congruent(address, 1 << 32)).is_bottom, \
            f"thread {tid}: offset {address} not in {value}"


@st.composite
def bounded_differences(draw):
    """d = min(a, c) (or max), then a - d (or d - a), with a an unknown parameter that a
    clamp bounds (or not); the concrete a is drawn too."""
    op = draw(st.sampled_from(["min", "max"]))
    signed = draw(st.booleans())
    t = "s32" if signed else "u32"
    c = draw(st.integers(-40, 40) | st.sampled_from([0, 2**31 - 1, -2**31]))
    clamp = draw(st.sampled_from([None, 1000, 5]))
    a = draw(st.integers(-2**31, 2**32 - 1) | st.integers(-50, 1100))
    return op, signed, t, c, clamp, a


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=bounded_differences())
def test_difference_with_a_bound_keeps_the_concrete_result(case):
    op, signed, t, c, clamp, a = case
    lines = ["\tld.param.u32 %r1, [n];"]
    if clamp is not None:
        lines.append(f"\tmin.{t} %r1, %r1, {clamp};")
    lines.append(f"\t{op}.{t} %r2, %r1, {c};")
    lines.append("\tsub.s32 %r3, %r1, %r2;" if op == "min" else "\tsub.s32 %r3, %r2, %r1;")
    lines.append("\tret;")
    result = run("\n" + "\n".join(lines), params=".param .u32 n")
    # the concrete run, reading registers as the type says
    from .concrete import max_, min_, sub  # noqa: PLC0415
    x = _u32(a)
    if clamp is not None:
        x = _u32(min_(x, _u32(clamp), 32, signed))
    d = _u32((min_ if op == "min" else max_)(x, _u32(c), 32, signed))
    want = _u32(sub(x, d, 32, True) if op == "min" else sub(d, x, 32, True))
    got = value_before(result, "ret", "%r3")
    assert not got.si.meet(SI.congruent(want, 1 << 32)).is_bottom, (want, got)
