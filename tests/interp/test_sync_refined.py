"""Sync dependence of refined registers: a branch's edges narrow the predicate (and the
registers its comparison read) to a constant on each arm; where the arms of a divergent
branch meet, lanes from both arms hold different constants, so the register is varying
there even though each arm's value is uniform."""
from __future__ import annotations

from ptxlint.launch import LaunchConfig

from .test_fixpoint import run, value_before

def test_predicate_refined_on_each_arm_is_varying_at_the_join():
    body = """
\tmov.u32 %r1, %tid.x;
\tsetp.lt.u32 %p1, %r1, 16;
\t@%p1 bra $L_join;
\tadd.u32 %r5, %r1, 0;
$L_join:
\tselp.u32 %r2, 1, 0, %p1;
\tret;"""
    a = run(body, launch=LaunchConfig(block=(32, 1, 1)))
    arm = value_before(a, "add.u32 %r5", "%p1")
    assert arm.singleton() == 0  # refined on the arm: a constant among its lanes
    p1 = value_before(a, "selp", "%p1")
    assert not p1.is_uniform and p1.si.lo == 0 and p1.si.hi == 1
    r2 = value_before(a, "ret", "%r2")
    assert not r2.is_uniform


def test_data_register_refined_to_a_constant_on_each_arm_is_varying_at_the_join():
    body = """
\tmov.u32 %r1, %tid.x;
\tand.b32 %r3, %r1, 1;
\tsetp.eq.u32 %p2, %r3, 0;
\t@%p2 bra $L_join;
\tadd.u32 %r5, %r3, 0;
$L_join:
\tadd.u32 %r6, %r3, 0;
\tret;"""
    a = run(body, launch=LaunchConfig(block=(32, 1, 1)))
    assert value_before(a, "add.u32 %r5", "%r3").singleton() == 1
    r3 = value_before(a, "add.u32 %r6", "%r3")
    assert not r3.is_uniform and r3.si.lo == 0 and r3.si.hi == 1


def test_uniform_register_refined_by_a_divergent_branch_stays_uniform():
    # %r4 is the same in every lane: narrowing it on the arms changes no lane's value
    body = """
\tld.param.u32 %r4, [n];
\tmov.u32 %r1, %tid.x;
\tsetp.lt.u32 %p1, %r1, %r4;
\t@%p1 bra $L_join;
\tadd.u32 %r5, %r4, 0;
$L_join:
\tadd.u32 %r6, %r4, 0;
\tret;"""
    a = run(body, params=".param .u32 n", launch=LaunchConfig(block=(32, 1, 1)))
    assert value_before(a, "add.u32 %r6", "%r4").is_uniform


def test_refined_lane_form_survives_the_join():
    # %r1 = %tid.x on both arms: the form is the same, only the value set was narrowed
    body = """
\tmov.u32 %r1, %tid.x;
\tsetp.lt.u32 %p1, %r1, 16;
\t@%p1 bra $L_join;
\tadd.u32 %r5, %r1, 0;
$L_join:
\tadd.u32 %r6, %r1, 0;
\tret;"""
    a = run(body, launch=LaunchConfig(block=(32, 1, 1)))
    assert value_before(a, "add.u32 %r6", "%r1").aff.stride_of("tid.x") == 1
