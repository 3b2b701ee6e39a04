"""Branch refinement on small kernels: what each edge of a conditional branch (and a
guard) narrows, read back before an instruction."""
from __future__ import annotations

from .test_fixpoint import run, value_before


def test_unsigned_comparison_of_a_signed_range_keeps_the_negative_patterns():
    # %r2 in -4..4 (signed); as u32, -4..-1 are above 100: the fall-through is feasible
    body = """
\tld.param.s32 %r1, [n];
\tmax.s32 %r2, %r1, -4;
\tmin.s32 %r2, %r2, 4;
\tsetp.lt.u32 %p1, %r2, 100;
\t@%p1 bra $L_small;
\tadd.u32 %r3, %r2, 0;
\tret;
$L_small:
\tadd.u32 %r4, %r2, 0;
\tret;"""
    a = run(body, params=".param .s32 n")
    big = value_before(a, "add.u32 %r3", "%r2")
    assert big.si.lo == -4 and big.si.hi == -1
    assert value_before(a, "add.u32 %r4", "%r2").si.within(0, 4)
